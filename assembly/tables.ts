// Output tables in linear memory. Every table grows by doubling before a buffer is walked, so the
// per-record path never allocates: it only stores into space reserved for the whole buffer.
//
// Both cores run this source (scripts/gen-core-twin.mjs): its state is the struct `m`
// (core-state.ts), its memory and heap the accessors of memory-access.ts. Sizes that could pass 2^32
// are compared as f64, which both cores add exactly, where the other core's numbers would not wrap.

import {
  W_CAPACITY, MAX_BLOCK, MAX_ROWS, MIN_WINDOW, ARENA_BLOCK, MAX_WARNINGS, BUF_STRIDE,
  WARN_STRIDE, WARN_FILE_OFFSET, WARN_CODE, WARN_BUFFER, WARN_RECORD_OFFSET, WARN_DETAIL, FILTER_BYTES, FILTER_FLAGS,
  CLR_DIR_STRIDE, CLR_DIR_COUNT,
} from "./codes";
import { Mem, FILTER_BLOCK, ld32, st32, stf64, fill, allocate, resize, release, heapFits } from "./memory-access";

export { allocate, resize, release } from "./memory-access";

// ---- decode-time filter (FILTER_* layout): the driver writes the block, then setFilter() reads its flags ----

/** No filter: clears the block (the memory may be reused from an earlier trace). */
export function clearFilter(m: Mem): void {
  fill(m, FILTER_BLOCK, 0, FILTER_BYTES);
  m.filterFlags = 0;
}

/** Takes the filter the driver wrote into the block; called before any input is consumed. */
export function setFilter(m: Mem): void {
  m.filterFlags = ld32(m, FILTER_BLOCK + FILTER_FLAGS);
}

// ---- fixed columns: when the memory allows, a window's columns are one block of FIXED_ROWS rows, each
// column at a constant offset (FIXED_* below), so that the record walk writes a row through one base
// address with constant offsets. A window then ends when its rows could pass FIXED_ROWS; a buffer whose
// records could pass it alone leaves fixed columns for the columns above, which grow as needed.
export const FIXED_ROWS: u32 = 1 << 20;
// Columns FIXED_ROWS rows apart would put row r of every column in one cache set (their addresses equal
// modulo 4 KiB): each column starts a further 7 cache lines on, so that they spread over the sets.
const FIXED_SKEW: usize = 7 * 64;
export const FIXED_TIMESTAMP: usize = 0 + 0 * FIXED_SKEW;
export const FIXED_KEYWORDS: usize = <usize>FIXED_ROWS * 8 + 1 * FIXED_SKEW;
export const FIXED_PID: usize = <usize>FIXED_ROWS * 16 + 2 * FIXED_SKEW;
export const FIXED_TID: usize = <usize>FIXED_ROWS * 20 + 3 * FIXED_SKEW;
export const FIXED_PAYLOAD_OFFSET: usize = <usize>FIXED_ROWS * 24 + 4 * FIXED_SKEW;
export const FIXED_PAYLOAD_LENGTH: usize = <usize>FIXED_ROWS * 28 + 5 * FIXED_SKEW;
export const FIXED_HEADER_LENGTH: usize = <usize>FIXED_ROWS * 30 + 6 * FIXED_SKEW;
export const FIXED_PROVIDER: usize = <usize>FIXED_ROWS * 32 + 7 * FIXED_SKEW;
export const FIXED_EVENT_ID: usize = <usize>FIXED_ROWS * 34 + 8 * FIXED_SKEW;
export const FIXED_TASK: usize = <usize>FIXED_ROWS * 36 + 9 * FIXED_SKEW;
export const FIXED_FLAGS: usize = <usize>FIXED_ROWS * 38 + 10 * FIXED_SKEW;
export const FIXED_PROCESSOR: usize = <usize>FIXED_ROWS * 40 + 11 * FIXED_SKEW;
export const FIXED_VERSION: usize = <usize>FIXED_ROWS * 42 + 12 * FIXED_SKEW;
export const FIXED_EVENT_TYPE: usize = <usize>FIXED_ROWS * 44 + 13 * FIXED_SKEW;
export const FIXED_OPCODE: usize = <usize>FIXED_ROWS * 46 + 14 * FIXED_SKEW;
export const FIXED_LEVEL: usize = <usize>FIXED_ROWS * 47 + 15 * FIXED_SKEW;
export const FIXED_HEADER_TYPE: usize = <usize>FIXED_ROWS * 48 + 16 * FIXED_SKEW;
export const FIXED_CHANNEL: usize = <usize>FIXED_ROWS * 49 + 17 * FIXED_SKEW;
export const FIXED_BYTES: usize = <usize>FIXED_ROWS * 50 + 18 * FIXED_SKEW;

/** Takes the fixed column block when the memory allows it (before any row); false when it does not. */
export function useFixedColumns(m: Mem): bool {
  if (m.fixedBlock != 0) return true;
  if (m.rowCap != 0 || !heapFits(m, <f64>FIXED_BYTES + <f64>(FIXED_BYTES >> 3))) return false;
  let b = allocate(m, FIXED_BYTES);
  if (b == 0) return false;
  m.fixedBlock = b;
  m.colTimestamp = b + FIXED_TIMESTAMP;
  m.colKeywords = b + FIXED_KEYWORDS;
  m.colPid = b + FIXED_PID;
  m.colTid = b + FIXED_TID;
  m.colPayloadOffset = b + FIXED_PAYLOAD_OFFSET;
  m.colPayloadLength = b + FIXED_PAYLOAD_LENGTH;
  m.colHeaderLength = b + FIXED_HEADER_LENGTH;
  m.colProvider = b + FIXED_PROVIDER;
  m.colEventId = b + FIXED_EVENT_ID;
  m.colTask = b + FIXED_TASK;
  m.colFlags = b + FIXED_FLAGS;
  m.colProcessor = b + FIXED_PROCESSOR;
  m.colVersion = b + FIXED_VERSION;
  m.colEventType = b + FIXED_EVENT_TYPE;
  m.colOpcode = b + FIXED_OPCODE;
  m.colLevel = b + FIXED_LEVEL;
  m.colHeaderType = b + FIXED_HEADER_TYPE;
  m.colChannel = b + FIXED_CHANNEL;
  m.rowCap = FIXED_ROWS;
  return true;
}

/**
 * Whether `extra` more rows fit the window's columns without growing them; fixed columns that cannot
 * hold them in an empty window are left for columns that grow (the buffer is then taken as usual).
 */
export function rowsFit(m: Mem, extra: u32): bool {
  if (m.fixedBlock == 0 || <f64>m.rowCount + <f64>extra <= <f64>FIXED_ROWS) return true;
  if (m.rowCount > 0) {
    m.windowFull = true;
    return false;
  }
  // an empty window: the buffer alone passes the block; the columns become blocks of their own
  release(m, m.fixedBlock);
  m.fixedBlock = 0;
  m.colTimestamp = m.colKeywords = m.colPid = m.colTid = m.colPayloadOffset = m.colPayloadLength = m.colHeaderLength = 0;
  m.colProvider = m.colEventId = m.colTask = m.colFlags = m.colProcessor = m.colVersion = m.colEventType = 0;
  m.colOpcode = m.colLevel = m.colHeaderType = m.colChannel = 0;
  m.rowCap = 0;
  return true;
}

/** Rows of a table that must hold `need` (at most MAX_ROWS) and has `cap`: twice as many, at least `least`. */
function grownCap(cap: u32, need: u32, least: u32): u32 {
  let c = cap * 2 > need ? cap * 2 : need; // (cap is at most MAX_ROWS: twice it stays below 2^31)
  if (c < least) c = least;
  return c > <u32>MAX_ROWS ? <u32>MAX_ROWS : c;
}

/** Reserve room for `extra` more rows. Returns false when the table cannot grow any further. */
export function ensureRows(m: Mem, extra: u32): bool {
  let need = <f64>m.rowCount + <f64>extra;
  if (need <= <f64>m.rowCap) return true;
  if (need > <f64>MAX_ROWS || m.fixedBlock != 0) return false;
  let cap = grownCap(m.rowCap, <u32>need, 4096);
  // A column that grew before one that could not is merely larger than rowCap.
  let c = <usize>cap;
  let p: usize;
  if ((p = resize(m, m.colTimestamp, c * 8)) == 0) return false; m.colTimestamp = p;
  if ((p = resize(m, m.colKeywords, c * 8)) == 0) return false; m.colKeywords = p;
  if ((p = resize(m, m.colPid, c * 4)) == 0) return false; m.colPid = p;
  if ((p = resize(m, m.colTid, c * 4)) == 0) return false; m.colTid = p;
  if ((p = resize(m, m.colPayloadOffset, c * 4)) == 0) return false; m.colPayloadOffset = p;
  if ((p = resize(m, m.colPayloadLength, c * 2)) == 0) return false; m.colPayloadLength = p;
  if ((p = resize(m, m.colHeaderLength, c * 2)) == 0) return false; m.colHeaderLength = p;
  if ((p = resize(m, m.colProvider, c * 2)) == 0) return false; m.colProvider = p;
  if ((p = resize(m, m.colEventId, c * 2)) == 0) return false; m.colEventId = p;
  if ((p = resize(m, m.colTask, c * 2)) == 0) return false; m.colTask = p;
  if ((p = resize(m, m.colFlags, c * 2)) == 0) return false; m.colFlags = p;
  if ((p = resize(m, m.colProcessor, c * 2)) == 0) return false; m.colProcessor = p;
  if ((p = resize(m, m.colVersion, c * 2)) == 0) return false; m.colVersion = p;
  if ((p = resize(m, m.colOpcode, c)) == 0) return false; m.colOpcode = p;
  if ((p = resize(m, m.colLevel, c)) == 0) return false; m.colLevel = p;
  if ((p = resize(m, m.colHeaderType, c)) == 0) return false; m.colHeaderType = p;
  if ((p = resize(m, m.colChannel, c)) == 0) return false; m.colChannel = p;
  if ((p = resize(m, m.colEventType, c * 2)) == 0) return false; m.colEventType = p;
  m.rowCap = cap;
  return true;
}

/** Reserve room for `extra` more extended data items. Returns false when the table cannot grow any further. */
export function ensureExt(m: Mem, extra: u32): bool {
  let need = <f64>m.extCount + <f64>extra;
  if (need <= <f64>m.extCap) return true;
  if (need > <f64>MAX_ROWS) return false;
  let cap = grownCap(m.extCap, <u32>need, 256);
  let c = <usize>cap;
  let p: usize;
  if ((p = resize(m, m.colExtRow, c * 4)) == 0) return false; m.colExtRow = p;
  if ((p = resize(m, m.colExtType, c * 2)) == 0) return false; m.colExtType = p;
  if ((p = resize(m, m.colExtSize, c * 2)) == 0) return false; m.colExtSize = p;
  if ((p = resize(m, m.colExtOffset, c * 4)) == 0) return false; m.colExtOffset = p;
  m.extCap = cap;
  return true;
}

/** Appends a zeroed buffer row and returns its address, or 0 when the table cannot grow. */
export function addBuffer(m: Mem): usize {
  if (m.bufCount >= m.bufCap) {
    let cap: u32 = m.bufCap * 2 > 64 ? m.bufCap * 2 : 64;
    if (<f64>cap * <f64>BUF_STRIDE > <f64>MAX_BLOCK) return 0;
    let t = resize(m, m.bufTable, <usize>cap * BUF_STRIDE);
    if (t == 0) return 0;
    m.bufTable = t;
    m.bufCap = cap;
  }
  let p = m.bufTable + <usize>m.bufCount * BUF_STRIDE;
  fill(m, p, 0, BUF_STRIDE);
  m.bufCount++;
  return p;
}

/**
 * Allocates the warnings table up front, so that a warning met when memory is exhausted (W_CAPACITY
 * above all) is kept, not only counted.
 */
export function reserveWarnings(m: Mem): void {
  if (m.warnTable == 0) m.warnTable = allocate(m, <usize>MAX_WARNINGS * WARN_STRIDE);
}

/** Counts a warning; keeps the first MAX_WARNINGS. */
export function warn(m: Mem, code: u32, fileOffset: f64, buffer: i32, recordOffset: i32, detail: u32): void {
  m.warnTotal++;
  if (m.warnCount >= <u32>MAX_WARNINGS) return;
  if (m.warnTable == 0) {
    m.warnTable = allocate(m, <usize>MAX_WARNINGS * WARN_STRIDE);
    if (m.warnTable == 0) return; // counted, not kept
  }
  let p = m.warnTable + <usize>m.warnCount * WARN_STRIDE;
  fill(m, p, 0, WARN_STRIDE);
  stf64(m, p + WARN_FILE_OFFSET, fileOffset);
  st32(m, p + WARN_CODE, code);
  st32(m, p + WARN_BUFFER, <u32>buffer);
  st32(m, p + WARN_RECORD_OFFSET, <u32>recordOffset);
  st32(m, p + WARN_DETAIL, detail);
  m.warnCount++;
}

// ---- window budget and arena ----
// A window's records stay where the driver staged them (buffers/processBuffer walks them in place);
// only decompressed records, and records of a buffer that is not 8-byte aligned, are written to the
// arena: a list of blocks kept from window to window (ARENA_BLOCK bytes or one buffer's records each).
// Blocks never move, so the addresses rows hold stay valid until the window is reset.
const ARENA_LIST_MAX: u32 = 1024;

/** `n` rounded up to a multiple of 8 (`n` below 2^32 - 8). */
function align8(n: usize): usize {
  return ((n + 7) >>> 3) * 8;
}

/** Sets the window's record budget (at least MIN_WINDOW, at most MAX_BLOCK). */
export function setArenaSize(m: Mem, bytes: u32): void {
  let want = <usize>bytes < <usize>MIN_WINDOW ? <usize>MIN_WINDOW : <usize>bytes;
  m.windowWant = want > <usize>MAX_BLOCK ? <usize>MAX_BLOCK : want;
  m.windowRecords = 0;
  m.arenaBytes = 0;
  m.arenaInUse = 0;
  m.windowFull = false;
}

/**
 * Whether a buffer of `n` bytes of records fits the window's budget; when it does not (and the window
 * has records already) the window is full: the buffer is taken again in the next one.
 */
export function windowTakes(m: Mem, n: usize): bool {
  if (m.windowRecords > 0 && <f64>m.windowRecords + <f64>n > <f64>m.windowWant) {
    m.windowFull = true;
    return false;
  }
  return true;
}

/** Marks a buffer of `n` bytes of records as taken by the window. */
export function windowCommit(m: Mem, n: usize): void {
  let used = align8(n);
  m.windowRecords += used;
  m.arenaBytes += <f64>used;
}

/**
 * Address of `n` bytes of arena space (8-aligned), or 0 with a W_CAPACITY warning (memory exhausted).
 * The space is taken at once: the caller writes the records there.
 */
export function arenaReserve(m: Mem, n: usize): usize {
  let need = align8(n);
  if (m.arenaBlocks == 0) {
    let lists = allocate(m, <usize>ARENA_LIST_MAX * 16);
    if (lists == 0) { warn(m, W_CAPACITY, -1, -1, -1, <u32>n); return 0; }
    m.arenaBlocks = lists;
    m.arenaList = lists + <usize>ARENA_LIST_MAX * 8;
  }
  // the block in use, if it has room
  let inUse = m.arenaInUse;
  if (inUse > 0) {
    let e = m.arenaList + <usize>(inUse - 1) * 8;
    let start = <usize>ld32(m, e);
    let used = <usize>ld32(m, e + 4);
    let size = <usize>ld32(m, m.arenaBlocks + <usize>(inUse - 1) * 8 + 4);
    if (<f64>used + <f64>need <= <f64>size) {
      st32(m, e + 4, <u32>(used + need));
      return start + used;
    }
  }
  // the next block: one kept from an earlier window if it is big enough, else a new one
  if (inUse >= ARENA_LIST_MAX) { warn(m, W_CAPACITY, -1, -1, -1, <u32>n); return 0; }
  let k = inUse;
  let slot = m.arenaBlocks + <usize>k * 8;
  if (k < m.arenaBlockCount && <usize>ld32(m, slot + 4) < need) {
    release(m, <usize>ld32(m, slot));
    st32(m, slot, 0);
    st32(m, slot + 4, 0);
  }
  if (k >= m.arenaBlockCount || ld32(m, slot) == 0) {
    let least = m.windowWant < <usize>ARENA_BLOCK ? m.windowWant : <usize>ARENA_BLOCK;
    let size = need > least ? need : least;
    let p: usize = size > <usize>MAX_BLOCK ? 0 : allocate(m, size);
    if (p == 0) { warn(m, W_CAPACITY, -1, -1, -1, <u32>n); return 0; }
    st32(m, slot, <u32>p);
    st32(m, slot + 4, <u32>size);
    if (k >= m.arenaBlockCount) m.arenaBlockCount = k + 1;
  }
  let start = <usize>ld32(m, slot);
  let e = m.arenaList + <usize>k * 8;
  st32(m, e, <u32>start);
  st32(m, e + 4, <u32>need);
  m.arenaInUse = k + 1;
  return start;
}

/** Undoes the last reservation (of `n` bytes), the list entry it opened too. */
export function arenaCancel(m: Mem, n: usize): void {
  if (m.arenaInUse == 0) return;
  let e = m.arenaList + <usize>(m.arenaInUse - 1) * 8;
  let used = <usize>ld32(m, e + 4);
  let need = align8(n);
  if (need >= used) m.arenaInUse--;
  else st32(m, e + 4, <u32>(used - need));
}

/** Gives back the end of the last reservation that was not used (`unused` bytes of it). */
export function arenaUnreserve(m: Mem, unused: usize): void {
  if (m.arenaInUse == 0) return;
  let e = m.arenaList + <usize>(m.arenaInUse - 1) * 8;
  let used = <usize>ld32(m, e + 4);
  let whole = (unused >>> 3) * 8;
  st32(m, e + 4, <u32>(used - (whole < used ? whole : used)));
}

// ---- windows: the rows of a run of buffers, handed to the bindings before the next run is decoded ----

/** Buffers seen so far, this window's included (buffer indices are over the whole trace). */
@inline export function buffersSeen(m: Mem): u32 {
  return m.bufBase + m.bufCount;
}

/**
 * Continues a trace after its first `buffers` buffers, which another core decoded: buffer indices go
 * on from there, and the trace's first row (the logfile header's) came before.
 */
export function resumeAt(m: Mem, buffers: u32): void {
  m.bufBase = buffers;
  m.rowBase = 1;
}

/** Empties the event, extended-item and buffer tables and the arena for the next window. */
export function resetWindow(m: Mem): void {
  m.bufBase += m.bufCount;
  m.rowBase += <f64>m.rowCount;
  m.bufCount = 0;
  m.rowCount = 0;
  m.extCount = 0;
  m.arenaInUse = 0;
  m.windowRecords = 0;
  m.windowFull = false;
}

// ---- typed tables: a block per schema event, kept from window to window ----
// The directory holds, per schema event, the window's rows, the block and the rows it has room for
// (CLR_DIR_*). A block's columns are `cap` rows long each; a full block moves to one twice the size
// (its columns copied). A window starts with every count at 0 and the blocks of the windows before.

/** Makes the directory for `n` schema events (once); false when memory is exhausted. */
export function clrInit(m: Mem, n: u32): bool {
  if (m.clrDir != 0) return true;
  m.clrDir = allocate(m, <usize>n * CLR_DIR_STRIDE);
  if (m.clrDir == 0) return false;
  fill(m, m.clrDir, 0, <usize>n * CLR_DIR_STRIDE);
  m.clrTypes = n;
  return true;
}

/** Empties every typed table for the next window (blocks are kept). */
export function clrReset(m: Mem): void {
  for (let t: u32 = 0; t < m.clrTypes; t++) st32(m, m.clrDir + <usize>t * CLR_DIR_STRIDE + CLR_DIR_COUNT, 0);
  m.clrRows = 0;
  m.clrMissing = 0;
}
