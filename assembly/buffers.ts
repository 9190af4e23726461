// Buffer walk. The driver stages a run of bytes of the file (any chunking) in memory of its own choosing;
// `consume` takes the whole buffers among them and walks each one's records where they lie (the rows
// point into the staged bytes), decompressing compressed buffers into the arena first. What follows
// the last whole buffer is left for the next call, which the driver makes with those bytes in front.

import {
  W_BAD_BUFFER_SIZE, W_SKIPPED_BYTES, W_TRUNCATED_BUFFER, W_BAD_FILL_OFFSET, W_DECOMPRESS_FAILED,
  W_UNSUPPORTED_COMPRESSION, W_TRAILING_GARBAGE, W_CAPACITY, W_HEADER_BUFFER_TYPE, W_BUFFER0_COMPRESSED,
  E_TOO_SHORT, E_BAD_FIRST_BUFFER, E_NO_LOGFILE_HEADER, BS_TRUNCATED, BS_SKIPPED, BS_COMPRESSED, BS_ABANDONED,
  LH_NUMBER_OF_PROCESSORS, LH_LOG_FILE_MODE, BUFFER_HEADER_SIZE, MAX_BUFFER, BUFFER_FLAG_COMPRESSED,
  BUFFER_FLAG_PROCESSOR_INDEX, LOG_FILE_MODE_COMPRESSED, COMPRESSION_XPRESS, B_FILE_OFFSET, B_SEQUENCE,
  B_TIMESTAMP, B_FIRST_ROW, B_ROW_COUNT, B_DATA, B_DATA_LENGTH, B_BUFFER_SIZE, B_SAVED_OFFSET, B_FILLED,
  B_PROCESSOR, B_LOGGER_ID, B_FLAGS, B_TYPE, B_STATUS, B_RAW_PROCESSOR,
} from "./codes";
import { addBuffer, buffersSeen, ensureRows, warn, arenaReserve, arenaUnreserve, arenaCancel, windowTakes, windowCommit, rowsFit } from "./tables";
import { walkRecords, walkAbandoned } from "./records";
import { xpressDecompress, xpressProduced } from "./xpress";
import { parseLogfileHeader, logfileHeader } from "./logfile";
import { STATE } from "./memory-access";

const HDR: u32 = BUFFER_HEADER_SIZE;
const FLAG_COMPRESSED: u32 = BUFFER_FLAG_COMPRESSED;
const MAX_BUF: u32 = MAX_BUFFER;

export let wantBytes: u32 = 0; // bytes the next buffer needs at the front of the unconsumed input
export let done: bool = false;
export let fatalCode: u32 = 0;
export let fatalOffset: f64 = 0;

let resyncing = false;
let resyncFrom: f64 = 0;
let resyncNonZero = false;
let compressionFormat: u32 = COMPRESSION_XPRESS;

export function resetBuffers(): void {
  wantBytes = 0;
  done = false;
  fatalCode = 0;
  fatalOffset = 0;
  resyncing = false;
  compressionFormat = COMPRESSION_XPRESS;
}

/** The compression format buffer 0 named (a trace continued by another core needs it: resumeAt). */
export function compression(): u32 {
  return compressionFormat;
}

export function setCompression(format: u32): void {
  compressionFormat = format;
}

function fatal(code: u32, offset: f64): void {
  fatalCode = code;
  fatalOffset = offset;
  done = true;
}

function stop(code: u32, offset: f64, detail: u32): void {
  warn(STATE, code, offset, <i32>buffersSeen(STATE) - 1, -1, detail);
  done = true;
}

/** A buffer header worth trying while scanning for the next buffer after damage. */
function plausible(b: usize, avail: u32): bool {
  let bs = load<u32>(b);
  if (bs < HDR || bs > MAX_BUF) return false;
  let flags = <u32>load<u16>(b, 0x34);
  if ((flags & 0xff80) != 0) return false;
  if (<u32>load<u16>(b, 0x36) > 8) return false;
  let saved = load<u32>(b, 4);
  let filled = load<u32>(b, 0x30);
  if ((flags & FLAG_COMPRESSED) != 0) {
    return (filled >= HDR && filled <= MAX_BUF) || (saved >= HDR && saved <= MAX_BUF);
  }
  let end = filled >= HDR && filled <= bs ? filled : saved >= HDR && saved <= bs ? saved : 0;
  if (end == 0) return false;
  if (end == HDR) return true;
  if (avail < HDR + 4) return false;
  let m = load<u32>(b + HDR);
  return (m >> 24) >= 0x80 && m != 0xffffffff;
}

function processorOf(raw: u32, flags: u32): u32 {
  // Windows 7 writes 0x08nn (ProcessorNumber, Alignment = 8); newer systems a 16-bit ProcessorIndex.
  let n = load<u32>(logfileHeader + LH_NUMBER_OF_PROCESSORS);
  if ((flags & BUFFER_FLAG_PROCESSOR_INDEX) != 0 && (raw & 0x7ff) < n) return raw & 0x7ff;
  return raw & 0xff;
}

/** The first record of the first buffer must be the EventTrace/Header record (SYSTEM32/64, HookId 0). */
function isLogfileHeaderRecord(data: usize, len: u32): bool {
  if (len < 0x20) return false;
  let m = load<u32>(data);
  let ht = (m >> 16) & 0xff;
  if (((m >> 24) & 0xc0) != 0xc0 || (ht != 1 && ht != 2)) return false;
  let size = <u32>load<u16>(data, 4);
  return size >= 0x20 && size <= len && load<u16>(data, 6) == 0;
}

/** Whether the bytes at `p` start with a whole, well-formed record (or are empty). */
function firstRecordSound(p: usize, len: u32): bool {
  if (len < 4) return true;
  let m = load<u32>(p);
  if (m == 0xffffffff) return true;
  let b3 = m >> 24;
  let ht = (m >> 16) & 0xff;
  let size: u32 = 0;
  let min: u32 = 0;
  if ((b3 & 0xc0) == 0xc0) {
    if (len < 8) return false;
    if (ht == 1 || ht == 2) { size = <u32>load<u16>(p, 4); min = 0x20; }
    else if (ht == 3 || ht == 4) { size = <u32>load<u16>(p, 4); min = 0x18; }
    else if (ht == 0x10 || ht == 0x11) { size = <u32>load<u16>(p, 4); min = 0x10; }
    else if (ht == 0x12 || ht == 0x13) { size = m & 0xffff; min = 0x50; }
    else if (ht == 0x0a || ht == 0x14) { size = m & 0xffff; min = 0x30; }
    else if (ht == 0x0b || ht == 0x15) { size = m & 0xffff; min = 0x48; }
    else return false;
  } else if ((b3 & 0xf0) == 0x90) { size = m & 0xffff; min = 8; }
  else return false;
  return size >= min && size <= len;
}

// processBuffer outcomes
const REJECTED = 0; // a tentative buffer whose records do not look sound: nothing recorded
const TAKEN = 1; // recorded (or decoding stopped on it: see done)
const NEXT_WINDOW = 2; // its records do not fit this window: nothing recorded, take it again in the next

/**
 * Decodes one buffer. A `tentative` buffer (found by scanning after damage) is taken only if its
 * records look sound.
 */
function processBuffer(b: usize, bs: u32, avail: u32, off: f64, tentative: bool): i32 {
  let index = <i32>buffersSeen(STATE);
  let flags = <u32>load<u16>(b, 0x34);
  let type = <u32>load<u16>(b, 0x36);
  let saved = load<u32>(b, 4);
  let filled = load<u32>(b, 0x30);
  let ts = load<i64>(b, 0x10);
  let rawProc = <u32>load<u16>(b, 0x28);
  let truncated = avail < bs;
  if (tentative && truncated) return REJECTED;
  let status: u32 = truncated ? BS_TRUNCATED : 0;
  let problem: u32 = 0; // warning about the record area
  let problemDetail: u32 = 0;

  let data: usize = 0;
  let dlen: u32 = 0;
  if ((flags & FLAG_COMPRESSED) == 0) {
    let end = filled >= HDR && filled <= bs ? filled : saved >= HDR && saved <= bs ? saved : 0;
    if (end == 0) {
      if (tentative) return REJECTED;
      problem = W_BAD_FILL_OFFSET;
      problemDetail = filled;
      end = bs;
    }
    if (end > avail) end = avail;
    dlen = end - HDR;
    if (tentative && !firstRecordSound(b + HDR, dlen)) return REJECTED;
    if (!windowTakes(STATE, dlen) || !rowsFit(STATE, (dlen >> 3) + 1)) return NEXT_WINDOW;
    // Records are walked where they lie; those of a buffer that is not 8-byte aligned (after damage)
    // are copied to the arena first, so that every record is aligned as the tables assume.
    data = b + HDR;
    if ((data & 7) != 0 && dlen > 0) {
      data = arenaReserve(STATE, dlen);
      if (data == 0) { done = true; return TAKEN; }
      memory.copy(data, b + HDR, dlen);
    }
  } else {
    status |= BS_COMPRESSED;
    let expected = filled >= HDR && filled <= MAX_BUF ? filled - HDR
      : saved >= HDR && saved <= MAX_BUF ? saved - HDR : 0xffffffff;
    if (compressionFormat != COMPRESSION_XPRESS) {
      if (tentative) return REJECTED;
      problem = W_UNSUPPORTED_COMPRESSION;
      problemDetail = compressionFormat;
      status |= BS_SKIPPED;
    } else if (expected == 0xffffffff) {
      if (tentative) return REJECTED;
      problem = W_BAD_FILL_OFFSET;
      problemDetail = filled;
      status |= BS_SKIPPED;
    } else {
      if (!windowTakes(STATE, expected) || !rowsFit(STATE, (expected >> 3) + 1)) return NEXT_WINDOW;
      data = arenaReserve(STATE, expected);
      if (data == 0) { done = true; return TAKEN; }
      if (xpressDecompress(STATE, b + HDR, avail - HDR, data, expected)) {
        dlen = expected;
      } else if (tentative) {
        arenaCancel(STATE, expected);
        return REJECTED;
      } else if (truncated) {
        // The bytes we have are sound; keep the records they complete.
        dlen = xpressProduced;
      } else {
        problem = W_DECOMPRESS_FAILED;
        problemDetail = xpressProduced;
        status |= BS_SKIPPED;
      }
      if (tentative && !firstRecordSound(data, dlen)) { arenaCancel(STATE, expected); return REJECTED; }
      // (a buffer skipped, as a candidate rejected above, keeps none of its reservation: the next buffer's goes
      // where it began, in the same block, so that corrupt buffers each claiming 64 MiB do not each take a block of their own)
      if ((status & BS_SKIPPED) != 0) arenaCancel(STATE, expected);
      else arenaUnreserve(STATE, expected - dlen);
    }
  }
  if (index == 0 && !isLogfileHeaderRecord(data, dlen)) { fatal(E_NO_LOGFILE_HEADER, off + HDR); return TAKEN; }

  let bp = addBuffer(STATE);
  if (bp == 0) { stop(W_CAPACITY, off, bs); return TAKEN; }
  windowCommit(STATE, dlen);
  store<f64>(bp + B_FILE_OFFSET, off);
  store<i64>(bp + B_SEQUENCE, load<i64>(b, 0x18));
  store<i64>(bp + B_TIMESTAMP, ts);
  store<u32>(bp + B_BUFFER_SIZE, bs);
  store<u32>(bp + B_SAVED_OFFSET, saved);
  store<u32>(bp + B_FILLED, filled);
  store<u16>(bp + B_LOGGER_ID, load<u16>(b, 0x2a));
  store<u16>(bp + B_FLAGS, <u16>flags);
  store<u16>(bp + B_TYPE, <u16>type);
  store<u16>(bp + B_RAW_PROCESSOR, <u16>rawProc);
  // (a buffer without records has no data address: its records, if any, were not kept)
  store<u32>(bp + B_DATA, dlen > 0 ? <u32>data : 0);
  store<u32>(bp + B_DATA_LENGTH, dlen);
  if (index == 0 && type != 4) warn(STATE, W_HEADER_BUFFER_TYPE, off, index, -1, type);
  if (index == 0 && (flags & FLAG_COMPRESSED) != 0) warn(STATE, W_BUFFER0_COMPRESSED, off, index, -1, 0);
  if (truncated) warn(STATE, W_TRUNCATED_BUFFER, off, index, -1, avail);
  if (problem != 0) warn(STATE, problem, off, index, -1, problemDetail);

  if (index == 0) {
    // Parse the logfile header first: the processor rule needs NumberOfProcessors.
    let m = load<u32>(data);
    let size = <u32>load<u16>(data, 4);
    parseLogfileHeader(STATE, data + 0x20, size - 0x20, ((m >> 16) & 0xff) == 1 ? 4 : 8, data + 0x10, off);
    // Compressed files name their format in the low 16 bits of buffer 0's State (3 = XPRESS).
    if ((load<u32>(logfileHeader + LH_LOG_FILE_MODE) & LOG_FILE_MODE_COMPRESSED) != 0) {
      let f = load<u32>(b, 0x2c) & 0xffff;
      compressionFormat = f == 2 || f == 4 ? f : COMPRESSION_XPRESS;
    }
  }
  if (!ensureRows(STATE, (dlen >> 3) + 1)) { stop(W_CAPACITY, off, dlen); return TAKEN; }

  let proc = processorOf(rawProc, flags);
  store<u16>(bp + B_PROCESSOR, <u16>proc);
  let first = STATE.rowCount;
  store<u32>(bp + B_FIRST_ROW, first);
  if (dlen > 0) walkRecords(data, dlen, ts, off, index);
  store<u32>(bp + B_ROW_COUNT, STATE.rowCount - first);
  // walkAbandoned belongs to the last walk: a buffer without records was not walked
  if (dlen > 0 && walkAbandoned) status |= BS_ABANDONED;
  store<u16>(bp + B_STATUS, <u16>status);
  return TAKEN;
}

/**
 * Takes the whole buffers among the `len` bytes staged at `staging` (file offset `fileOffset`). With
 * `atEnd` the input is complete and a final partial buffer is decoded as far as it goes. Stops at a
 * buffer that does not fit the window (windowFull): it is taken again after resetWindow. Returns the
 * length of what is left at the end of the staged bytes: the caller gives it again, with more.
 */
export function consume(staging: usize, len: u32, fileOffset: f64, atEnd: bool): u32 {
  let p: u32 = 0;
  wantBytes = 0;
  while (!done) {
    let avail = len - p;
    if (resyncing) {
      let found = false;
      // (a candidate is judged by its header and first record: without those bytes, wait for more)
      while (avail >= HDR + 4 || (atEnd && avail >= HDR)) {
        let b = staging + p;
        if (plausible(b, avail)) { found = true; break; }
        if (load<u8>(b) != 0) resyncNonZero = true;
        p++;
        avail--;
      }
      if (found) {
        let bs = load<u32>(staging + p);
        if (bs > avail && !atEnd) { wantBytes = bs; break; } // judge the candidate once it is whole
        let taken = bs <= avail ? processBuffer(staging + p, bs, bs, fileOffset + p, true) : REJECTED;
        if (taken == NEXT_WINDOW) break;
        if (taken == TAKEN) {
          resyncing = false;
          if (resyncNonZero) {
            warn(STATE, W_SKIPPED_BYTES, resyncFrom, <i32>buffersSeen(STATE) - 2, -1, <u32>(fileOffset + p - resyncFrom));
          }
          p += bs;
        } else {
          resyncNonZero = true;
          p++;
        }
        continue;
      }
      if (!atEnd) break;
      for (let i: u32 = p; i < len; i++) if (load<u8>(staging + i) != 0) resyncNonZero = true;
      if (resyncNonZero) warn(STATE, W_TRAILING_GARBAGE, resyncFrom, <i32>buffersSeen(STATE) - 1, -1, <u32>(fileOffset + len - resyncFrom));
      resyncing = false;
      p = len;
      done = true;
      break;
    }
    let off = fileOffset + p;
    if (avail < HDR) {
      if (!atEnd) { wantBytes = HDR; break; }
      if (buffersSeen(STATE) == 0) { fatal(E_TOO_SHORT, off); break; }
      for (let i: u32 = p; i < len; i++) {
        if (load<u8>(staging + i) != 0) { warn(STATE, W_TRAILING_GARBAGE, off, <i32>buffersSeen(STATE) - 1, -1, avail); break; }
      }
      p = len;
      done = true;
      break;
    }
    let b = staging + p;
    let bs = load<u32>(b);
    if (bs == 0 && buffersSeen(STATE) > 0) {
      // Zero-filled tail (preallocated files) or a zeroed header: look for another buffer.
      resyncing = true;
      resyncFrom = off;
      resyncNonZero = false;
      continue;
    }
    if (bs < HDR || bs > MAX_BUF) {
      if (buffersSeen(STATE) == 0) { fatal(E_BAD_FIRST_BUFFER, off); break; }
      warn(STATE, W_BAD_BUFFER_SIZE, off, <i32>buffersSeen(STATE) - 1, -1, bs);
      resyncing = true;
      resyncFrom = off;
      resyncNonZero = true;
      p++;
      continue;
    }
    if (bs > avail) {
      if (!atEnd) { wantBytes = bs; break; }
      if (processBuffer(b, bs, avail, off, false) == NEXT_WINDOW) break;
      p = len;
      done = true;
      break;
    }
    if (processBuffer(b, bs, bs, off, false) == NEXT_WINDOW) break;
    p += bs;
  }
  if (done) return 0;
  return len - p;
}
