// TRACE_LOGFILE_HEADER (assembly/logfile.ts): the payload of the first EventTrace/Header record,
// 0x110 (32-bit) or 0x118 (64-bit) bytes followed by the logger and log file names (UTF-16,
// NUL-terminated).

import {
  LH_PRESENT, LH_BUFFER_SIZE, LH_VERSION, LH_PROVIDER_VERSION, LH_NUMBER_OF_PROCESSORS, LH_TIMER_RESOLUTION,
  LH_MAXIMUM_FILE_SIZE, LH_LOG_FILE_MODE, LH_BUFFERS_WRITTEN, LH_START_BUFFERS, LH_POINTER_SIZE, LH_EVENTS_LOST,
  LH_CPU_SPEED, LH_RESERVED_FLAGS, LH_BUFFERS_LOST, LH_RECORD_POINTER_SIZE, LH_END_TIME, LH_BOOT_TIME,
  LH_PERF_FREQ, LH_START_TIME, LH_HEADER_TIMESTAMP, LH_TIME_ZONE, LH_LOGGER_NAME, LH_LOGGER_NAME_CHARS,
  LH_LOG_FILE_NAME, LH_LOG_FILE_NAME_CHARS, LH_SIZE, W_LOGFILE_HEADER_SHORT, W_POINTER_SIZE_MISMATCH,
  BUFFER_HEADER_SIZE, TIME_ZONE_BYTES,
} from "../../assembly/codes.js";
import { STATIC_LOGFILE } from "./memory.js";
import { warn, allocate } from "./tables.js";
import type { CoreState } from "./state.js";

export const logfileHeader = STATIC_LOGFILE;

/** Number of UTF-16 chars before the terminator (or the end of the range). */
function utf16Length(s: CoreState, p: number, end: number): number {
  let n = 0;
  while (p + 2 <= end && s.dv.getUint16(p, true) !== 0) { p += 2; n++; }
  return n;
}

function u32At(s: CoreState, p: number, off: number, end: number): number {
  return p + off + 4 <= end ? s.dv.getUint32(p + off, true) : 0;
}

/** Copies an i64 field (0 when out of range) into the logfile struct. */
function i64To(s: CoreState, h: number, p: number, off: number, end: number): void {
  if (p + off + 8 <= end) {
    s.dv.setUint32(h, s.dv.getUint32(p + off, true), true);
    s.dv.setUint32(h + 4, s.dv.getUint32(p + off + 4, true), true);
  } else {
    s.dv.setUint32(h, 0, true);
    s.dv.setUint32(h + 4, 0, true);
  }
}

/** Parses the header record's payload. `headerPointerSize` is 4 for SYSTEM32, 8 for SYSTEM64. */
export function parseLogfileHeader(s: CoreState, payload: number, len: number, headerPointerSize: number, tsLo: number, tsHi: number, fileOffset: number): void {
  const h = logfileHeader;
  s.u8.fill(0, h, h + LH_SIZE);
  const end = payload + len;
  const stored = u32At(s, payload, 0x2c, end);
  // The record flavour decides the layout; PointerSize can only confirm it. Where they disagree,
  // take the size for which the fixed part plus the two names fill the payload.
  let ptr = headerPointerSize;
  if ((stored === 4 || stored === 8) && stored !== ptr) {
    warn(s, W_POINTER_SIZE_MISMATCH, fileOffset, 0, BUFFER_HEADER_SIZE, stored);
    const fixedOther = stored === 8 ? 0x118 : 0x110;
    if (len >= fixedOther + 4) {
      const p = payload + fixedOther;
      const a = utf16Length(s, p, end);
      const b = utf16Length(s, p + ((a + 1) << 1), end);
      if (fixedOther + ((a + b + 2) << 1) === len) ptr = stored;
    }
  }
  const fixed = ptr === 8 ? 0x118 : 0x110;
  if (len < fixed) warn(s, W_LOGFILE_HEADER_SHORT, fileOffset, 0, BUFFER_HEADER_SIZE, len);
  const extra = ptr === 8 ? 8 : 0; // two pointer-sized name slots before the time zone
  const v = s.dv;
  v.setUint32(h + LH_PRESENT, Math.min(len, fixed), true);
  v.setUint32(h + LH_BUFFER_SIZE, u32At(s, payload, 0x00, end), true);
  v.setUint32(h + LH_VERSION, u32At(s, payload, 0x04, end), true);
  v.setUint32(h + LH_PROVIDER_VERSION, u32At(s, payload, 0x08, end), true);
  v.setUint32(h + LH_NUMBER_OF_PROCESSORS, u32At(s, payload, 0x0c, end), true);
  i64To(s, h + LH_END_TIME, payload, 0x10, end);
  v.setUint32(h + LH_TIMER_RESOLUTION, u32At(s, payload, 0x18, end), true);
  v.setUint32(h + LH_MAXIMUM_FILE_SIZE, u32At(s, payload, 0x1c, end), true);
  v.setUint32(h + LH_LOG_FILE_MODE, u32At(s, payload, 0x20, end), true);
  v.setUint32(h + LH_BUFFERS_WRITTEN, u32At(s, payload, 0x24, end), true);
  v.setUint32(h + LH_START_BUFFERS, u32At(s, payload, 0x28, end), true);
  v.setUint32(h + LH_POINTER_SIZE, stored, true);
  v.setUint32(h + LH_EVENTS_LOST, u32At(s, payload, 0x30, end), true);
  v.setUint32(h + LH_CPU_SPEED, u32At(s, payload, 0x34, end), true);
  v.setUint32(h + LH_RECORD_POINTER_SIZE, ptr, true);
  if (payload + 0x40 + extra + TIME_ZONE_BYTES <= end) v.setUint32(h + LH_TIME_ZONE, payload + 0x40 + extra, true);
  i64To(s, h + LH_BOOT_TIME, payload, 0xf0 + extra, end);
  i64To(s, h + LH_PERF_FREQ, payload, 0xf8 + extra, end);
  i64To(s, h + LH_START_TIME, payload, 0x100 + extra, end);
  v.setUint32(h + LH_RESERVED_FLAGS, u32At(s, payload, 0x108 + extra, end), true);
  v.setUint32(h + LH_BUFFERS_LOST, u32At(s, payload, 0x10c + extra, end), true);
  v.setUint32(h + LH_HEADER_TIMESTAMP, tsLo, true);
  v.setUint32(h + LH_HEADER_TIMESTAMP + 4, tsHi, true);
  if (len > fixed) {
    const p = payload + fixed;
    const a = utf16Length(s, p, end);
    v.setUint32(h + LH_LOGGER_NAME, p, true);
    v.setUint32(h + LH_LOGGER_NAME_CHARS, a, true);
    const q = p + ((a + 1) << 1);
    if (q < end) {
      v.setUint32(h + LH_LOG_FILE_NAME, q, true);
      v.setUint32(h + LH_LOG_FILE_NAME_CHARS, utf16Length(s, q, end), true);
    }
  }
  keepPayload(s, payload, len);
}

/**
 * The time zone and names point into the record's bytes, which the next window reuses: they are
 * pointed at a copy of the payload instead (or dropped when memory is exhausted).
 */
function keepPayload(s: CoreState, payload: number, len: number): void {
  const h = logfileHeader;
  const copy = allocate(s, Math.max(len, 8));
  if (copy !== 0) s.u8.copyWithin(copy, payload, payload + len);
  moveAddress(s, h + LH_TIME_ZONE, 0, payload, copy);
  moveAddress(s, h + LH_LOGGER_NAME, h + LH_LOGGER_NAME_CHARS, payload, copy);
  moveAddress(s, h + LH_LOG_FILE_NAME, h + LH_LOG_FILE_NAME_CHARS, payload, copy);
}

function moveAddress(s: CoreState, slot: number, chars: number, from: number, to: number): void {
  const a = s.u32[slot >>> 2];
  if (a === 0) return;
  if (to === 0) {
    s.u32[slot >>> 2] = 0;
    if (chars !== 0) s.u32[chars >>> 2] = 0;
  } else s.u32[slot >>> 2] = a - from + to;
}
