// TRACE_LOGFILE_HEADER: the payload of the first EventTrace/Header record, 0x110 (32-bit) or
// 0x118 (64-bit) bytes followed by the logger and log file names (UTF-16, NUL-terminated).
// Both cores run this source (scripts/gen-core-twin.mjs); its 64-bit fields are copied as 8 bytes.

import {
  LH_PRESENT, LH_BUFFER_SIZE, LH_VERSION, LH_PROVIDER_VERSION, LH_NUMBER_OF_PROCESSORS, LH_TIMER_RESOLUTION,
  LH_MAXIMUM_FILE_SIZE, LH_LOG_FILE_MODE, LH_BUFFERS_WRITTEN, LH_START_BUFFERS, LH_POINTER_SIZE, LH_EVENTS_LOST,
  LH_CPU_SPEED, LH_RESERVED_FLAGS, LH_BUFFERS_LOST, LH_RECORD_POINTER_SIZE, LH_END_TIME, LH_BOOT_TIME,
  LH_PERF_FREQ, LH_START_TIME, LH_HEADER_TIMESTAMP, LH_TIME_ZONE, LH_LOGGER_NAME, LH_LOGGER_NAME_CHARS,
  LH_LOG_FILE_NAME, LH_LOG_FILE_NAME_CHARS, LH_SIZE, W_LOGFILE_HEADER_SHORT, W_POINTER_SIZE_MISMATCH,
  BUFFER_HEADER_SIZE, TIME_ZONE_BYTES,
} from "./codes";
import { Mem, LOGFILE_HEADER, ld16, ld32, st32, copy8, fill, copyBytes } from "./memory-access";
import { warn, allocate } from "./tables";

export const logfileHeader: usize = LOGFILE_HEADER;

/** Number of UTF-16 chars before the terminator (or the end of the range). */
function utf16Length(m: Mem, p: usize, end: usize): u32 {
  let n: u32 = 0;
  while (p + 2 <= end && ld16(m, p) != 0) { p += 2; n++; }
  return n;
}

/** The u32 at `off` in the payload, 0 past its end. */
function u32At(m: Mem, p: usize, off: u32, end: usize): u32 {
  return p + off + 4 <= end ? ld32(m, p + off) : 0;
}

/** Copies the i64 at `off` in the payload (0 past its end) to `to`. */
function i64To(m: Mem, to: usize, p: usize, off: u32, end: usize): void {
  if (p + off + 8 <= end) copy8(m, to, p + off);
  else fill(m, to, 0, 8);
}

/**
 * Parses the header record's payload. `headerPointerSize` is 4 for SYSTEM32, 8 for SYSTEM64;
 * `timestampAt` the address of the record's timestamp.
 */
export function parseLogfileHeader(
  m: Mem, payload: usize, len: u32, headerPointerSize: u32, timestampAt: usize, fileOffset: f64,
): void {
  let h = logfileHeader;
  fill(m, h, 0, LH_SIZE);
  let end = payload + len;
  let stored = u32At(m, payload, 0x2c, end);
  // The record flavour decides the layout; PointerSize can only confirm it. Where they disagree,
  // take the size for which the fixed part plus the two names fill the payload.
  let ptr = headerPointerSize;
  if ((stored == 4 || stored == 8) && stored != ptr) {
    warn(m, W_POINTER_SIZE_MISMATCH, fileOffset, 0, BUFFER_HEADER_SIZE, stored);
    let fixedOther: u32 = stored == 8 ? 0x118 : 0x110;
    if (len >= fixedOther + 4) {
      let p = payload + fixedOther;
      let a = utf16Length(m, p, end);
      let b = utf16Length(m, p + (a + 1) * 2, end);
      if (fixedOther + (a + b + 2) * 2 == len) ptr = stored;
    }
  }
  let fixed: u32 = ptr == 8 ? 0x118 : 0x110;
  if (len < fixed) warn(m, W_LOGFILE_HEADER_SHORT, fileOffset, 0, BUFFER_HEADER_SIZE, len);
  let extra: u32 = ptr == 8 ? 8 : 0; // two pointer-sized name slots before the time zone
  st32(m, h + LH_PRESENT, len < fixed ? len : fixed);
  st32(m, h + LH_BUFFER_SIZE, u32At(m, payload, 0x00, end));
  st32(m, h + LH_VERSION, u32At(m, payload, 0x04, end));
  st32(m, h + LH_PROVIDER_VERSION, u32At(m, payload, 0x08, end));
  st32(m, h + LH_NUMBER_OF_PROCESSORS, u32At(m, payload, 0x0c, end));
  i64To(m, h + LH_END_TIME, payload, 0x10, end);
  st32(m, h + LH_TIMER_RESOLUTION, u32At(m, payload, 0x18, end));
  st32(m, h + LH_MAXIMUM_FILE_SIZE, u32At(m, payload, 0x1c, end));
  st32(m, h + LH_LOG_FILE_MODE, u32At(m, payload, 0x20, end));
  st32(m, h + LH_BUFFERS_WRITTEN, u32At(m, payload, 0x24, end));
  st32(m, h + LH_START_BUFFERS, u32At(m, payload, 0x28, end));
  st32(m, h + LH_POINTER_SIZE, stored);
  st32(m, h + LH_EVENTS_LOST, u32At(m, payload, 0x30, end));
  st32(m, h + LH_CPU_SPEED, u32At(m, payload, 0x34, end));
  st32(m, h + LH_RECORD_POINTER_SIZE, ptr);
  if (payload + 0x40 + extra + TIME_ZONE_BYTES <= end) st32(m, h + LH_TIME_ZONE, <u32>(payload + 0x40 + extra));
  i64To(m, h + LH_BOOT_TIME, payload, 0xf0 + extra, end);
  i64To(m, h + LH_PERF_FREQ, payload, 0xf8 + extra, end);
  i64To(m, h + LH_START_TIME, payload, 0x100 + extra, end);
  st32(m, h + LH_RESERVED_FLAGS, u32At(m, payload, 0x108 + extra, end));
  st32(m, h + LH_BUFFERS_LOST, u32At(m, payload, 0x10c + extra, end));
  copy8(m, h + LH_HEADER_TIMESTAMP, timestampAt);
  if (len > fixed) {
    let p = payload + fixed;
    let a = utf16Length(m, p, end);
    st32(m, h + LH_LOGGER_NAME, <u32>p);
    st32(m, h + LH_LOGGER_NAME_CHARS, a);
    let q = p + (<usize>a + 1) * 2;
    if (q < end) {
      st32(m, h + LH_LOG_FILE_NAME, <u32>q);
      st32(m, h + LH_LOG_FILE_NAME_CHARS, utf16Length(m, q, end));
    }
  }
  keepPayload(m, payload, len);
}

/**
 * The time zone and names point into the record's bytes, which the next window reuses: they are
 * pointed at a copy of the payload instead (or dropped when memory is exhausted).
 */
function keepPayload(m: Mem, payload: usize, len: u32): void {
  let h = logfileHeader;
  let copy = allocate(m, len > 8 ? <usize>len : 8);
  if (copy != 0) copyBytes(m, copy, payload, len);
  moveAddress(m, h + LH_TIME_ZONE, 0, payload, copy);
  moveAddress(m, h + LH_LOGGER_NAME, h + LH_LOGGER_NAME_CHARS, payload, copy);
  moveAddress(m, h + LH_LOG_FILE_NAME, h + LH_LOG_FILE_NAME_CHARS, payload, copy);
}

function moveAddress(m: Mem, slot: usize, chars: usize, from: usize, to: usize): void {
  let a = <usize>ld32(m, slot);
  if (a == 0) return;
  if (to == 0) {
    st32(m, slot, 0);
    if (chars != 0) st32(m, chars, 0);
  } else st32(m, slot, <u32>(a - from + to));
}
