// Buffer walk (assembly/buffers.ts). The driver stages a run of bytes of the file (any chunking) in
// the core's memory; `consume` takes the whole buffers among them and walks each one's records where
// they lie, decompressing compressed buffers into the arena first; what follows the last whole buffer
// is left for the next call.

import {
  W_BAD_BUFFER_SIZE, W_SKIPPED_BYTES, W_TRUNCATED_BUFFER, W_BAD_FILL_OFFSET, W_DECOMPRESS_FAILED,
  W_UNSUPPORTED_COMPRESSION, W_TRAILING_GARBAGE, W_CAPACITY, W_HEADER_BUFFER_TYPE, W_BUFFER0_COMPRESSED,
  E_TOO_SHORT, E_BAD_FIRST_BUFFER, E_NO_LOGFILE_HEADER, BS_TRUNCATED, BS_SKIPPED, BS_COMPRESSED, BS_ABANDONED,
  LH_NUMBER_OF_PROCESSORS, LH_LOG_FILE_MODE, BUFFER_HEADER_SIZE, MAX_BUFFER, BUFFER_FLAG_COMPRESSED,
  BUFFER_FLAG_PROCESSOR_INDEX, LOG_FILE_MODE_COMPRESSED, COMPRESSION_XPRESS, B_FILE_OFFSET, B_SEQUENCE,
  B_TIMESTAMP, B_FIRST_ROW, B_ROW_COUNT, B_DATA, B_DATA_LENGTH, B_BUFFER_SIZE, B_SAVED_OFFSET, B_FILLED,
  B_PROCESSOR, B_LOGGER_ID, B_FLAGS, B_TYPE, B_STATUS, B_RAW_PROCESSOR,
} from "../../assembly/codes.js";
import { addBuffer, buffersSeen, ensureRows, warn, arenaReserve, arenaUnreserve, arenaCancel, windowTakes, windowCommit, rowsFit } from "./tables.js";
import { walkRecords } from "./records.js";
import { xpressDecompress, xpressProduced } from "./xpress.js";
import { parseLogfileHeader, logfileHeader } from "./logfile.js";
import type { CoreState } from "./state.js";

const HDR = BUFFER_HEADER_SIZE;
const NONE32 = 0xffffffff;
const TWO32 = 4294967296;

/** f64 -> u32 as the WebAssembly core converts it (saturating truncation). */
function satU32(x: number): number {
  if (!(x > 0)) return 0;
  return x >= TWO32 ? NONE32 : Math.floor(x);
}

export function resetBuffers(s: CoreState): void {
  s.wantBytes = 0;
  s.done = false;
  s.fatalCode = 0;
  s.fatalOffset = 0;
  s.resyncing = false;
  s.compressionFormat = COMPRESSION_XPRESS;
}

/** The compression format buffer 0 named (a trace continued by another core needs it: resumeAt). */
export function compression(s: CoreState): number {
  return s.compressionFormat;
}

export function setCompression(s: CoreState, format: number): void {
  s.compressionFormat = format;
}


function fatal(s: CoreState, code: number, offset: number): void {
  s.fatalCode = code;
  s.fatalOffset = offset;
  s.done = true;
}

function stop(s: CoreState, code: number, offset: number, detail: number): void {
  warn(s, code, offset, buffersSeen(s) - 1, -1, detail);
  s.done = true;
}

/** A buffer header worth trying while scanning for the next buffer after damage. */
function plausible(s: CoreState, b: number, avail: number): boolean {
  const v = s.dv;
  const bs = v.getUint32(b, true);
  if (bs < HDR || bs > MAX_BUFFER) return false;
  const flags = v.getUint16(b + 0x34, true);
  if ((flags & 0xff80) !== 0) return false;
  if (v.getUint16(b + 0x36, true) > 8) return false;
  const saved = v.getUint32(b + 4, true);
  const filled = v.getUint32(b + 0x30, true);
  if ((flags & BUFFER_FLAG_COMPRESSED) !== 0) {
    return (filled >= HDR && filled <= MAX_BUFFER) || (saved >= HDR && saved <= MAX_BUFFER);
  }
  const end = filled >= HDR && filled <= bs ? filled : saved >= HDR && saved <= bs ? saved : 0;
  if (end === 0) return false;
  if (end === HDR) return true;
  if (avail < HDR + 4) return false;
  const m = v.getUint32(b + HDR, true);
  return m >>> 24 >= 0x80 && m !== 0xffffffff;
}

function processorOf(s: CoreState, raw: number, flags: number): number {
  // Windows 7 writes 0x08nn (ProcessorNumber, Alignment = 8); newer systems a 16-bit ProcessorIndex.
  const n = s.u32[(logfileHeader + LH_NUMBER_OF_PROCESSORS) >>> 2];
  if ((flags & BUFFER_FLAG_PROCESSOR_INDEX) !== 0 && (raw & 0x7ff) < n) return raw & 0x7ff;
  return raw & 0xff;
}

/** The first record of the first buffer must be the EventTrace/Header record (SYSTEM32/64, HookId 0). */
function isLogfileHeaderRecord(s: CoreState, data: number, len: number): boolean {
  if (len < 0x20) return false;
  const m = s.dv.getUint32(data, true);
  const ht = (m >>> 16) & 0xff;
  if (((m >>> 24) & 0xc0) !== 0xc0 || (ht !== 1 && ht !== 2)) return false;
  const size = s.dv.getUint16(data + 4, true);
  return size >= 0x20 && size <= len && s.dv.getUint16(data + 6, true) === 0;
}

/** Whether the bytes at `p` start with a whole, well-formed record (or are empty). */
function firstRecordSound(s: CoreState, p: number, len: number): boolean {
  if (len < 4) return true;
  const m = s.dv.getUint32(p, true);
  if (m === 0xffffffff) return true;
  const b3 = m >>> 24;
  const ht = (m >>> 16) & 0xff;
  let size = 0;
  let min = 0;
  if ((b3 & 0xc0) === 0xc0) {
    if (len < 8) return false;
    if (ht === 1 || ht === 2) { size = s.dv.getUint16(p + 4, true); min = 0x20; }
    else if (ht === 3 || ht === 4) { size = s.dv.getUint16(p + 4, true); min = 0x18; }
    else if (ht === 0x10 || ht === 0x11) { size = s.dv.getUint16(p + 4, true); min = 0x10; }
    else if (ht === 0x12 || ht === 0x13) { size = m & 0xffff; min = 0x50; }
    else if (ht === 0x0a || ht === 0x14) { size = m & 0xffff; min = 0x30; }
    else if (ht === 0x0b || ht === 0x15) { size = m & 0xffff; min = 0x48; }
    else return false;
  } else if ((b3 & 0xf0) === 0x90) { size = m & 0xffff; min = 8; }
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
function processBuffer(s: CoreState, b: number, bs: number, avail: number, off: number, tentative: boolean): number {
  const index = buffersSeen(s);
  let v = s.dv;
  const flags = v.getUint16(b + 0x34, true);
  const type = v.getUint16(b + 0x36, true);
  const saved = v.getUint32(b + 4, true);
  const filled = v.getUint32(b + 0x30, true);
  const tsLo = v.getUint32(b + 0x10, true);
  const tsHi = v.getUint32(b + 0x14, true);
  const rawProc = v.getUint16(b + 0x28, true);
  const truncated = avail < bs;
  if (tentative && truncated) return REJECTED;
  let status = truncated ? BS_TRUNCATED : 0;
  let problem = 0;
  let problemDetail = 0;

  let data = 0;
  let dlen = 0;
  if ((flags & BUFFER_FLAG_COMPRESSED) === 0) {
    let end = filled >= HDR && filled <= bs ? filled : saved >= HDR && saved <= bs ? saved : 0;
    if (end === 0) {
      if (tentative) return REJECTED;
      problem = W_BAD_FILL_OFFSET;
      problemDetail = filled;
      end = bs;
    }
    if (end > avail) end = avail;
    dlen = end - HDR;
    if (tentative && !firstRecordSound(s, b + HDR, dlen)) return REJECTED;
    if (!windowTakes(s, dlen) || !rowsFit(s, (dlen >>> 3) + 1)) return NEXT_WINDOW;
    // Records are walked where they lie; those of a buffer that is not 8-byte aligned (after damage)
    // are copied to the arena first, so that every record is aligned as the tables assume.
    data = b + HDR;
    if ((data & 7) !== 0 && dlen > 0) {
      data = arenaReserve(s, dlen);
      if (data === 0) { s.done = true; return TAKEN; }
      s.u8.copyWithin(data, b + HDR, b + HDR + dlen);
    }
  } else {
    status |= BS_COMPRESSED;
    const expected = filled >= HDR && filled <= MAX_BUFFER ? filled - HDR
      : saved >= HDR && saved <= MAX_BUFFER ? saved - HDR : NONE32;
    if (s.compressionFormat !== COMPRESSION_XPRESS) {
      if (tentative) return REJECTED;
      problem = W_UNSUPPORTED_COMPRESSION;
      problemDetail = s.compressionFormat;
      status |= BS_SKIPPED;
    } else if (expected === NONE32) {
      if (tentative) return REJECTED;
      problem = W_BAD_FILL_OFFSET;
      problemDetail = filled;
      status |= BS_SKIPPED;
    } else {
      if (!windowTakes(s, expected) || !rowsFit(s, (expected >>> 3) + 1)) return NEXT_WINDOW;
      data = arenaReserve(s, expected);
      if (data === 0) { s.done = true; return TAKEN; }
      if (xpressDecompress(s, b + HDR, avail - HDR, data, expected)) {
        dlen = expected;
      } else if (tentative) {
        arenaCancel(s, expected);
        return REJECTED;
      } else if (truncated) {
        // The bytes we have are sound; keep the records they complete.
        dlen = xpressProduced;
      } else {
        problem = W_DECOMPRESS_FAILED;
        problemDetail = xpressProduced;
        status |= BS_SKIPPED;
      }
      if (tentative && !firstRecordSound(s, data, dlen)) { arenaCancel(s, expected); return REJECTED; }
      // (a buffer skipped, as a candidate rejected above, keeps none of its reservation: the next buffer's goes
      // where it began, in the same block, so that corrupt buffers each claiming 64 MiB do not each take a block of their own)
      if ((status & BS_SKIPPED) !== 0) arenaCancel(s, expected);
      else arenaUnreserve(s, expected - dlen);
    }
  }
  if (index === 0 && !isLogfileHeaderRecord(s, data, dlen)) { fatal(s, E_NO_LOGFILE_HEADER, off + HDR); return TAKEN; }

  const bp = addBuffer(s);
  if (bp === 0) { stop(s, W_CAPACITY, off, bs); return TAKEN; }
  windowCommit(s, dlen);
  v = s.dv;
  const w = bp >>> 2;
  s.f64[(bp + B_FILE_OFFSET) >>> 3] = off;
  s.u32[w + (B_SEQUENCE >>> 2)] = v.getUint32(b + 0x18, true);
  s.u32[w + (B_SEQUENCE >>> 2) + 1] = v.getUint32(b + 0x1c, true);
  s.u32[w + (B_TIMESTAMP >>> 2)] = tsLo;
  s.u32[w + (B_TIMESTAMP >>> 2) + 1] = tsHi;
  s.u32[w + (B_BUFFER_SIZE >>> 2)] = bs;
  s.u32[w + (B_SAVED_OFFSET >>> 2)] = saved;
  s.u32[w + (B_FILLED >>> 2)] = filled;
  s.u16[(bp + B_LOGGER_ID) >>> 1] = v.getUint16(b + 0x2a, true);
  s.u16[(bp + B_FLAGS) >>> 1] = flags;
  s.u16[(bp + B_TYPE) >>> 1] = type;
  s.u16[(bp + B_RAW_PROCESSOR) >>> 1] = rawProc;
  // (a buffer without records has no data address: its records, if any, were not kept)
  s.u32[w + (B_DATA >>> 2)] = dlen > 0 ? data : 0;
  s.u32[w + (B_DATA_LENGTH >>> 2)] = dlen;
  if (index === 0 && type !== 4) warn(s, W_HEADER_BUFFER_TYPE, off, index, -1, type);
  if (index === 0 && (flags & BUFFER_FLAG_COMPRESSED) !== 0) warn(s, W_BUFFER0_COMPRESSED, off, index, -1, 0);
  if (truncated) warn(s, W_TRUNCATED_BUFFER, off, index, -1, avail);
  if (problem !== 0) warn(s, problem, off, index, -1, problemDetail);

  if (index === 0) {
    // Parse the logfile header first: the processor rule needs NumberOfProcessors.
    v = s.dv;
    const m = v.getUint32(data, true);
    const size = v.getUint16(data + 4, true);
    parseLogfileHeader(s, data + 0x20, size - 0x20, ((m >>> 16) & 0xff) === 1 ? 4 : 8, data + 0x10, off);
    // Compressed files name their format in the low 16 bits of buffer 0's State (3 = XPRESS).
    if ((s.u32[(logfileHeader + LH_LOG_FILE_MODE) >>> 2] & LOG_FILE_MODE_COMPRESSED) !== 0) {
      const f = s.dv.getUint32(b + 0x2c, true) & 0xffff;
      s.compressionFormat = f === 2 || f === 4 ? f : COMPRESSION_XPRESS;
    }
  }
  if (!ensureRows(s, (dlen >>> 3) + 1)) { stop(s, W_CAPACITY, off, dlen); return TAKEN; }

  const proc = processorOf(s, rawProc, flags);
  s.u16[(bp + B_PROCESSOR) >>> 1] = proc;
  const first = s.rowCount;
  s.u32[(bp + B_FIRST_ROW) >>> 2] = first;
  if (dlen > 0) walkRecords(s, data, dlen, tsLo, tsHi, off, index);
  s.u32[(bp + B_ROW_COUNT) >>> 2] = s.rowCount - first;
  // walkAbandoned belongs to the last walk: a buffer without records was not walked
  if (dlen > 0 && s.walkAbandoned) status |= BS_ABANDONED;
  s.u16[(bp + B_STATUS) >>> 1] = status;
  return TAKEN;
}

/**
 * Takes the whole buffers among the `len` bytes staged at `staging` (file offset `fileOffset`). With
 * `atEnd` the input is complete and a final partial buffer is decoded as far as it goes. Stops at a
 * buffer that does not fit the window (windowFull): it is taken again after resetWindow. Returns the
 * length of what is left at the end of the staged bytes: the caller gives it again, with more.
 */
export function consume(s: CoreState, staging: number, len: number, fileOffset: number, atEnd: boolean): number {
  let p = 0;
  s.wantBytes = 0;
  while (!s.done) {
    let avail = len - p;
    if (s.resyncing) {
      let found = false;
      // (a candidate is judged by its header and first record: without those bytes, wait for more)
      while (avail >= HDR + 4 || (atEnd && avail >= HDR)) {
        const b = staging + p;
        if (plausible(s, b, avail)) { found = true; break; }
        if (s.u8[b] !== 0) s.resyncNonZero = true;
        p++;
        avail--;
      }
      if (found) {
        const bs = s.dv.getUint32(staging + p, true);
        if (bs > avail && !atEnd) { s.wantBytes = bs; break; } // judge the candidate once it is whole
        const taken = bs <= avail ? processBuffer(s, staging + p, bs, bs, fileOffset + p, true) : REJECTED;
        if (taken === NEXT_WINDOW) break;
        if (taken === TAKEN) {
          s.resyncing = false;
          if (s.resyncNonZero) warn(s, W_SKIPPED_BYTES, s.resyncFrom, buffersSeen(s) - 2, -1, satU32(fileOffset + p - s.resyncFrom));
          p += bs;
        } else {
          s.resyncNonZero = true;
          p++;
        }
        continue;
      }
      if (!atEnd) break;
      for (let i = p; i < len; i++) if (s.u8[staging + i] !== 0) { s.resyncNonZero = true; break; }
      if (s.resyncNonZero) warn(s, W_TRAILING_GARBAGE, s.resyncFrom, buffersSeen(s) - 1, -1, satU32(fileOffset + len - s.resyncFrom));
      s.resyncing = false;
      p = len;
      s.done = true;
      break;
    }
    const off = fileOffset + p;
    if (avail < HDR) {
      if (!atEnd) { s.wantBytes = HDR; break; }
      if (buffersSeen(s) === 0) { fatal(s, E_TOO_SHORT, off); break; }
      for (let i = p; i < len; i++) {
        if (s.u8[staging + i] !== 0) { warn(s, W_TRAILING_GARBAGE, off, buffersSeen(s) - 1, -1, avail); break; }
      }
      p = len;
      s.done = true;
      break;
    }
    const b = staging + p;
    const bs = s.dv.getUint32(b, true);
    if (bs === 0 && buffersSeen(s) > 0) {
      // Zero-filled tail (preallocated files) or a zeroed header: look for another buffer.
      s.resyncing = true;
      s.resyncFrom = off;
      s.resyncNonZero = false;
      continue;
    }
    if (bs < HDR || bs > MAX_BUFFER) {
      if (buffersSeen(s) === 0) { fatal(s, E_BAD_FIRST_BUFFER, off); break; }
      warn(s, W_BAD_BUFFER_SIZE, off, buffersSeen(s) - 1, -1, bs);
      s.resyncing = true;
      s.resyncFrom = off;
      s.resyncNonZero = true;
      p++;
      continue;
    }
    if (bs > avail) {
      if (!atEnd) { s.wantBytes = bs; break; }
      if (processBuffer(s, b, bs, avail, off, false) === NEXT_WINDOW) break;
      p = len;
      s.done = true;
      break;
    }
    if (processBuffer(s, b, bs, bs, off, false) === NEXT_WINDOW) break;
    p += bs;
  }
  if (s.done) return 0;
  return len - p;
}
