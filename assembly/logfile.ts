// TRACE_LOGFILE_HEADER: the payload of the first EventTrace/Header record, 0x110 (32-bit) or
// 0x118 (64-bit) bytes followed by the logger and log file names (UTF-16, NUL-terminated).

import {
  LH_PRESENT, LH_BUFFER_SIZE, LH_VERSION, LH_PROVIDER_VERSION, LH_NUMBER_OF_PROCESSORS, LH_TIMER_RESOLUTION,
  LH_MAXIMUM_FILE_SIZE, LH_LOG_FILE_MODE, LH_BUFFERS_WRITTEN, LH_START_BUFFERS, LH_POINTER_SIZE, LH_EVENTS_LOST,
  LH_CPU_SPEED, LH_RESERVED_FLAGS, LH_BUFFERS_LOST, LH_RECORD_POINTER_SIZE, LH_END_TIME, LH_BOOT_TIME,
  LH_PERF_FREQ, LH_START_TIME, LH_HEADER_TIMESTAMP, LH_TIME_ZONE, LH_LOGGER_NAME, LH_LOGGER_NAME_CHARS,
  LH_LOG_FILE_NAME, LH_LOG_FILE_NAME_CHARS, LH_SIZE, W_LOGFILE_HEADER_SHORT, W_POINTER_SIZE_MISMATCH,
  BUFFER_HEADER_SIZE, TIME_ZONE_BYTES,
} from "./codes";
import { warn, allocate } from "./tables";

export const logfileHeader: usize = memory.data(LH_SIZE);

/** Number of UTF-16 chars before the terminator (or the end of the range). */
function utf16Length(p: usize, end: usize): u32 {
  let n: u32 = 0;
  while (p + 2 <= end && load<u16>(p) != 0) { p += 2; n++; }
  return n;
}

@inline function u32At(p: usize, off: u32, end: usize): u32 {
  return p + off + 4 <= end ? load<u32>(p + off) : 0;
}

@inline function i64At(p: usize, off: u32, end: usize): i64 {
  return p + off + 8 <= end ? load<i64>(p + off) : 0;
}

/**
 * Parses the header record's payload. `headerPointerSize` is 4 for SYSTEM32, 8 for SYSTEM64.
 */
export function parseLogfileHeader(
  payload: usize, len: u32, headerPointerSize: u32, timestamp: i64, fileOffset: f64,
): void {
  let h = logfileHeader;
  memory.fill(h, 0, LH_SIZE);
  let end = payload + len;
  let stored = u32At(payload, 0x2c, end);
  // The record flavour decides the layout; PointerSize can only confirm it. Where they disagree,
  // take the size for which the fixed part plus the two names fill the payload.
  let ptr = headerPointerSize;
  if ((stored == 4 || stored == 8) && stored != ptr) {
    warn(W_POINTER_SIZE_MISMATCH, fileOffset, 0, BUFFER_HEADER_SIZE, stored);
    let fixedOther: u32 = stored == 8 ? 0x118 : 0x110;
    if (len >= fixedOther + 4) {
      let p = payload + fixedOther;
      let a = utf16Length(p, end);
      let b = utf16Length(p + ((a + 1) << 1), end);
      if (fixedOther + ((a + b + 2) << 1) == len) ptr = stored;
    }
  }
  let fixed: u32 = ptr == 8 ? 0x118 : 0x110;
  if (len < fixed) warn(W_LOGFILE_HEADER_SHORT, fileOffset, 0, BUFFER_HEADER_SIZE, len);
  let extra: u32 = ptr == 8 ? 8 : 0; // two pointer-sized name slots before the time zone
  store<u32>(h + LH_PRESENT, min<u32>(len, fixed));
  store<u32>(h + LH_BUFFER_SIZE, u32At(payload, 0x00, end));
  store<u32>(h + LH_VERSION, u32At(payload, 0x04, end));
  store<u32>(h + LH_PROVIDER_VERSION, u32At(payload, 0x08, end));
  store<u32>(h + LH_NUMBER_OF_PROCESSORS, u32At(payload, 0x0c, end));
  store<i64>(h + LH_END_TIME, i64At(payload, 0x10, end));
  store<u32>(h + LH_TIMER_RESOLUTION, u32At(payload, 0x18, end));
  store<u32>(h + LH_MAXIMUM_FILE_SIZE, u32At(payload, 0x1c, end));
  store<u32>(h + LH_LOG_FILE_MODE, u32At(payload, 0x20, end));
  store<u32>(h + LH_BUFFERS_WRITTEN, u32At(payload, 0x24, end));
  store<u32>(h + LH_START_BUFFERS, u32At(payload, 0x28, end));
  store<u32>(h + LH_POINTER_SIZE, stored);
  store<u32>(h + LH_EVENTS_LOST, u32At(payload, 0x30, end));
  store<u32>(h + LH_CPU_SPEED, u32At(payload, 0x34, end));
  store<u32>(h + LH_RECORD_POINTER_SIZE, ptr);
  if (payload + 0x40 + extra + TIME_ZONE_BYTES <= end) store<u32>(h + LH_TIME_ZONE, <u32>(payload + 0x40 + extra));
  store<i64>(h + LH_BOOT_TIME, i64At(payload, 0xf0 + extra, end));
  store<i64>(h + LH_PERF_FREQ, i64At(payload, 0xf8 + extra, end));
  store<i64>(h + LH_START_TIME, i64At(payload, 0x100 + extra, end));
  store<u32>(h + LH_RESERVED_FLAGS, u32At(payload, 0x108 + extra, end));
  store<u32>(h + LH_BUFFERS_LOST, u32At(payload, 0x10c + extra, end));
  store<i64>(h + LH_HEADER_TIMESTAMP, timestamp);
  if (len > fixed) {
    let p = payload + fixed;
    let a = utf16Length(p, end);
    store<u32>(h + LH_LOGGER_NAME, <u32>p);
    store<u32>(h + LH_LOGGER_NAME_CHARS, a);
    let q = p + ((<usize>a + 1) << 1);
    if (q < end) {
      store<u32>(h + LH_LOG_FILE_NAME, <u32>q);
      store<u32>(h + LH_LOG_FILE_NAME_CHARS, utf16Length(q, end));
    }
  }
  keepPayload(payload, len);
}

/**
 * The time zone and names point into the record's bytes, which the next window reuses: they are
 * pointed at a copy of the payload instead (or dropped when memory is exhausted).
 */
function keepPayload(payload: usize, len: u32): void {
  let h = logfileHeader;
  let copy = allocate(max<usize>(<usize>len, 8));
  if (copy != 0) memory.copy(copy, payload, len);
  moveAddress(h + LH_TIME_ZONE, 0, payload, copy);
  moveAddress(h + LH_LOGGER_NAME, h + LH_LOGGER_NAME_CHARS, payload, copy);
  moveAddress(h + LH_LOG_FILE_NAME, h + LH_LOG_FILE_NAME_CHARS, payload, copy);
}

function moveAddress(slot: usize, chars: usize, from: usize, to: usize): void {
  let a = <usize>load<u32>(slot);
  if (a == 0) return;
  if (to == 0) {
    store<u32>(slot, 0);
    if (chars != 0) store<u32>(chars, 0);
  } else store<u32>(slot, <u32>(a - from + to));
}
