// Buffer walk. The driver stages a run of bytes of the file (any chunking) in memory of its own choosing;
// `consume` takes the whole buffers among them and walks each one's records where they lie (the rows
// point into the staged bytes), decompressing compressed buffers into the arena first. What follows
// the last whole buffer is left for the next call, which the driver makes with those bytes in front.
// Both cores run this source (scripts/gen-core-twin.mjs); its state is the struct `m` (core-state.ts).

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
import { walkRecords } from "./records";
import { xpressDecompress, xpressProduced } from "./xpress";
import { parseLogfileHeader, logfileHeader } from "./logfile";
import { Mem, ld8, ld16, ld32, st16, st32, stf64, copy8, copyBytes } from "./memory-access";

const HDR: u32 = BUFFER_HEADER_SIZE;
const FLAG_COMPRESSED: u32 = BUFFER_FLAG_COMPRESSED;
const MAX_BUF: u32 = MAX_BUFFER;

/** A file offset's distance as a u32, saturated (a warning's detail). */
function satU32(x: f64): u32 {
  if (!(x > 0)) return 0;
  return x >= 4294967295 ? 0xffffffff : <u32>x;
}

export function resetBuffers(m: Mem): void {
  m.wantBytes = 0;
  m.done = false;
  m.fatalCode = 0;
  m.fatalOffset = 0;
  m.resyncing = false;
  m.compressionFormat = COMPRESSION_XPRESS;
}

/** The compression format buffer 0 named (a trace continued by another core needs it: resumeAt). */
export function compression(m: Mem): u32 {
  return m.compressionFormat;
}

export function setCompression(m: Mem, format: u32): void {
  m.compressionFormat = format;
}

function fatal(m: Mem, code: u32, offset: f64): void {
  m.fatalCode = code;
  m.fatalOffset = offset;
  m.done = true;
}

function stop(m: Mem, code: u32, offset: f64, detail: u32): void {
  warn(m, code, offset, <i32>buffersSeen(m) - 1, -1, detail);
  m.done = true;
}

/** A buffer header worth trying while scanning for the next buffer after damage. */
function plausible(m: Mem, b: usize, avail: u32): bool {
  let bs = ld32(m, b);
  if (bs < HDR || bs > MAX_BUF) return false;
  let flags = ld16(m, b + 0x34);
  if ((flags & 0xff80) != 0) return false;
  if (ld16(m, b + 0x36) > 8) return false;
  let saved = ld32(m, b + 4);
  let filled = ld32(m, b + 0x30);
  if ((flags & FLAG_COMPRESSED) != 0) {
    return (filled >= HDR && filled <= MAX_BUF) || (saved >= HDR && saved <= MAX_BUF);
  }
  let end = filled >= HDR && filled <= bs ? filled : saved >= HDR && saved <= bs ? saved : 0;
  if (end == 0) return false;
  if (end == HDR) return true;
  if (avail < HDR + 4) return false;
  let marker = ld32(m, b + HDR);
  return (marker >>> 24) >= 0x80 && marker != 0xffffffff;
}

function processorOf(m: Mem, raw: u32, flags: u32): u32 {
  // Windows 7 writes 0x08nn (ProcessorNumber, Alignment = 8); newer systems a 16-bit ProcessorIndex.
  let n = ld32(m, logfileHeader + LH_NUMBER_OF_PROCESSORS);
  if ((flags & BUFFER_FLAG_PROCESSOR_INDEX) != 0 && (raw & 0x7ff) < n) return raw & 0x7ff;
  return raw & 0xff;
}

/** The first record of the first buffer must be the EventTrace/Header record (SYSTEM32/64, HookId 0). */
function isLogfileHeaderRecord(m: Mem, data: usize, len: u32): bool {
  if (len < 0x20) return false;
  let marker = ld32(m, data);
  let ht = (marker >>> 16) & 0xff;
  if (((marker >>> 24) & 0xc0) != 0xc0 || (ht != 1 && ht != 2)) return false;
  let size = ld16(m, data + 4);
  return size >= 0x20 && size <= len && ld16(m, data + 6) == 0;
}

/** Whether the bytes at `p` start with a whole, well-formed record (or are empty). */
function firstRecordSound(m: Mem, p: usize, len: u32): bool {
  if (len < 4) return true;
  let marker = ld32(m, p);
  if (marker == 0xffffffff) return true;
  let b3 = marker >>> 24;
  let ht = (marker >>> 16) & 0xff;
  let size: u32 = 0;
  let min: u32 = 0;
  if ((b3 & 0xc0) == 0xc0) {
    if (len < 8) return false;
    if (ht == 1 || ht == 2) { size = ld16(m, p + 4); min = 0x20; }
    else if (ht == 3 || ht == 4) { size = ld16(m, p + 4); min = 0x18; }
    else if (ht == 0x10 || ht == 0x11) { size = ld16(m, p + 4); min = 0x10; }
    else if (ht == 0x12 || ht == 0x13) { size = marker & 0xffff; min = 0x50; }
    else if (ht == 0x0a || ht == 0x14) { size = marker & 0xffff; min = 0x30; }
    else if (ht == 0x0b || ht == 0x15) { size = marker & 0xffff; min = 0x48; }
    else return false;
  } else if ((b3 & 0xf0) == 0x90) { size = marker & 0xffff; min = 8; }
  else return false;
  return size >= min && size <= len;
}

// processBuffer outcomes
const REJECTED = 0; // a tentative buffer whose records do not look sound: nothing recorded
const TAKEN = 1; // recorded (or decoding stopped on it: see m.done)
const NEXT_WINDOW = 2; // its records do not fit this window: nothing recorded, take it again in the next

/**
 * Decodes one buffer. A `tentative` buffer (found by scanning after damage) is taken only if its
 * records look sound.
 */
function processBuffer(m: Mem, b: usize, bs: u32, avail: u32, off: f64, tentative: bool): i32 {
  let index = <i32>buffersSeen(m);
  let flags = ld16(m, b + 0x34);
  let type = ld16(m, b + 0x36);
  let saved = ld32(m, b + 4);
  let filled = ld32(m, b + 0x30);
  let rawProc = ld16(m, b + 0x28);
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
    if (tentative && !firstRecordSound(m, b + HDR, dlen)) return REJECTED;
    if (!windowTakes(m, dlen) || !rowsFit(m, (dlen >> 3) + 1)) return NEXT_WINDOW;
    // Records are walked where they lie; those of a buffer that is not 8-byte aligned (after damage)
    // are copied to the arena first, so that every record is aligned as the tables assume.
    data = b + HDR;
    if ((data & 7) != 0 && dlen > 0) {
      data = arenaReserve(m, dlen);
      if (data == 0) { m.done = true; return TAKEN; }
      copyBytes(m, data, b + HDR, dlen);
    }
  } else {
    status |= BS_COMPRESSED;
    let expected = filled >= HDR && filled <= MAX_BUF ? filled - HDR
      : saved >= HDR && saved <= MAX_BUF ? saved - HDR : 0xffffffff;
    if (m.compressionFormat != COMPRESSION_XPRESS) {
      if (tentative) return REJECTED;
      problem = W_UNSUPPORTED_COMPRESSION;
      problemDetail = m.compressionFormat;
      status |= BS_SKIPPED;
    } else if (expected == 0xffffffff) {
      if (tentative) return REJECTED;
      problem = W_BAD_FILL_OFFSET;
      problemDetail = filled;
      status |= BS_SKIPPED;
    } else {
      if (!windowTakes(m, expected) || !rowsFit(m, (expected >> 3) + 1)) return NEXT_WINDOW;
      data = arenaReserve(m, expected);
      if (data == 0) { m.done = true; return TAKEN; }
      if (xpressDecompress(m, b + HDR, avail - HDR, data, expected)) {
        dlen = expected;
      } else if (tentative) {
        arenaCancel(m, expected);
        return REJECTED;
      } else if (truncated) {
        // The bytes we have are sound; keep the records they complete.
        dlen = xpressProduced;
      } else {
        problem = W_DECOMPRESS_FAILED;
        problemDetail = xpressProduced;
        status |= BS_SKIPPED;
      }
      if (tentative && !firstRecordSound(m, data, dlen)) { arenaCancel(m, expected); return REJECTED; }
      // (a buffer skipped, as a candidate rejected above, keeps none of its reservation: the next buffer's goes
      // where it began, in the same block, so that corrupt buffers each claiming 64 MiB do not each take a block of their own)
      if ((status & BS_SKIPPED) != 0) arenaCancel(m, expected);
      else arenaUnreserve(m, expected - dlen);
    }
  }
  if (index == 0 && !isLogfileHeaderRecord(m, data, dlen)) { fatal(m, E_NO_LOGFILE_HEADER, off + HDR); return TAKEN; }

  let bp = addBuffer(m);
  if (bp == 0) { stop(m, W_CAPACITY, off, bs); return TAKEN; }
  windowCommit(m, dlen);
  stf64(m, bp + B_FILE_OFFSET, off);
  copy8(m, bp + B_SEQUENCE, b + 0x18);
  copy8(m, bp + B_TIMESTAMP, b + 0x10);
  st32(m, bp + B_BUFFER_SIZE, bs);
  st32(m, bp + B_SAVED_OFFSET, saved);
  st32(m, bp + B_FILLED, filled);
  st16(m, bp + B_LOGGER_ID, ld16(m, b + 0x2a));
  st16(m, bp + B_FLAGS, flags);
  st16(m, bp + B_TYPE, type);
  st16(m, bp + B_RAW_PROCESSOR, rawProc);
  // (a buffer without records has no data address: its records, if any, were not kept)
  st32(m, bp + B_DATA, dlen > 0 ? <u32>data : 0);
  st32(m, bp + B_DATA_LENGTH, dlen);
  if (index == 0 && type != 4) warn(m, W_HEADER_BUFFER_TYPE, off, index, -1, type);
  if (index == 0 && (flags & FLAG_COMPRESSED) != 0) warn(m, W_BUFFER0_COMPRESSED, off, index, -1, 0);
  if (truncated) warn(m, W_TRUNCATED_BUFFER, off, index, -1, avail);
  if (problem != 0) warn(m, problem, off, index, -1, problemDetail);

  if (index == 0) {
    // Parse the logfile header first: the processor rule needs NumberOfProcessors.
    let marker = ld32(m, data);
    let size = ld16(m, data + 4);
    parseLogfileHeader(m, data + 0x20, size - 0x20, ((marker >>> 16) & 0xff) == 1 ? 4 : 8, data + 0x10, off);
    // Compressed files name their format in the low 16 bits of buffer 0's State (3 = XPRESS).
    if ((ld32(m, logfileHeader + LH_LOG_FILE_MODE) & LOG_FILE_MODE_COMPRESSED) != 0) {
      let f = ld32(m, b + 0x2c) & 0xffff;
      m.compressionFormat = f == 2 || f == 4 ? f : COMPRESSION_XPRESS;
    }
  }
  if (!ensureRows(m, (dlen >> 3) + 1)) { stop(m, W_CAPACITY, off, dlen); return TAKEN; }

  let proc = processorOf(m, rawProc, flags);
  st16(m, bp + B_PROCESSOR, proc);
  let first = m.rowCount;
  st32(m, bp + B_FIRST_ROW, first);
  if (dlen > 0) walkRecords(m, data, dlen, b + 0x10, off, index);
  st32(m, bp + B_ROW_COUNT, m.rowCount - first);
  // walkAbandoned belongs to the last walk: a buffer without records was not walked
  if (dlen > 0 && m.walkAbandoned) status |= BS_ABANDONED;
  st16(m, bp + B_STATUS, status);
  return TAKEN;
}

/**
 * Takes the whole buffers among the `len` bytes staged at `staging` (file offset `fileOffset`). With
 * `atEnd` the input is complete and a final partial buffer is decoded as far as it goes. Stops at a
 * buffer that does not fit the window (windowFull): it is taken again after resetWindow. Returns the
 * length of what is left at the end of the staged bytes: the caller gives it again, with more.
 */
export function consume(m: Mem, staging: usize, len: u32, fileOffset: f64, atEnd: bool): u32 {
  let p: u32 = 0;
  m.wantBytes = 0;
  while (!m.done) {
    let avail = len - p;
    if (m.resyncing) {
      let found = false;
      // (a candidate is judged by its header and first record: without those bytes, wait for more)
      while (avail >= HDR + 4 || (atEnd && avail >= HDR)) {
        let b = staging + p;
        if (plausible(m, b, avail)) { found = true; break; }
        if (ld8(m, b) != 0) m.resyncNonZero = true;
        p++;
        avail--;
      }
      if (found) {
        let bs = ld32(m, staging + p);
        if (bs > avail && !atEnd) { m.wantBytes = bs; break; } // judge the candidate once it is whole
        let taken = bs <= avail ? processBuffer(m, staging + p, bs, bs, fileOffset + p, true) : REJECTED;
        if (taken == NEXT_WINDOW) break;
        if (taken == TAKEN) {
          m.resyncing = false;
          if (m.resyncNonZero) {
            warn(m, W_SKIPPED_BYTES, m.resyncFrom, <i32>buffersSeen(m) - 2, -1, satU32(fileOffset + p - m.resyncFrom));
          }
          p += bs;
        } else {
          m.resyncNonZero = true;
          p++;
        }
        continue;
      }
      if (!atEnd) break;
      for (let i: u32 = p; i < len; i++) if (ld8(m, staging + i) != 0) m.resyncNonZero = true;
      if (m.resyncNonZero) warn(m, W_TRAILING_GARBAGE, m.resyncFrom, <i32>buffersSeen(m) - 1, -1, satU32(fileOffset + len - m.resyncFrom));
      m.resyncing = false;
      p = len;
      m.done = true;
      break;
    }
    let off = fileOffset + p;
    if (avail < HDR) {
      if (!atEnd) { m.wantBytes = HDR; break; }
      if (buffersSeen(m) == 0) { fatal(m, E_TOO_SHORT, off); break; }
      for (let i: u32 = p; i < len; i++) {
        if (ld8(m, staging + i) != 0) { warn(m, W_TRAILING_GARBAGE, off, <i32>buffersSeen(m) - 1, -1, avail); break; }
      }
      p = len;
      m.done = true;
      break;
    }
    let b = staging + p;
    let bs = ld32(m, b);
    if (bs == 0 && buffersSeen(m) > 0) {
      // Zero-filled tail (preallocated files) or a zeroed header: look for another buffer.
      m.resyncing = true;
      m.resyncFrom = off;
      m.resyncNonZero = false;
      continue;
    }
    if (bs < HDR || bs > MAX_BUF) {
      if (buffersSeen(m) == 0) { fatal(m, E_BAD_FIRST_BUFFER, off); break; }
      warn(m, W_BAD_BUFFER_SIZE, off, <i32>buffersSeen(m) - 1, -1, bs);
      m.resyncing = true;
      m.resyncFrom = off;
      m.resyncNonZero = true;
      p++;
      continue;
    }
    if (bs > avail) {
      if (!atEnd) { m.wantBytes = bs; break; }
      if (processBuffer(m, b, bs, avail, off, false) == NEXT_WINDOW) break;
      p = len;
      m.done = true;
      break;
    }
    if (processBuffer(m, b, bs, bs, off, false) == NEXT_WINDOW) break;
    p += bs;
  }
  if (m.done) return 0;
  return len - p;
}
