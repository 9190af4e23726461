// Output tables in linear memory (assembly/tables.ts). Every table grows by doubling before a
// buffer is walked, so the per-record path never allocates: it only stores into space reserved
// for the whole buffer.

import {
  W_CAPACITY, MAX_BLOCK, MAX_ROWS, MIN_WINDOW, ARENA_BLOCK, MAX_WARNINGS, BUF_STRIDE, WARN_STRIDE, WARN_FILE_OFFSET, WARN_CODE,
  WARN_BUFFER, WARN_RECORD_OFFSET, WARN_DETAIL, FILTER_BYTES, FILTER_FLAGS, CLR_DIR_STRIDE, CLR_DIR_COUNT,
} from "../../assembly/codes.js";
import { STATIC_FILTER, alignSize, heapAlloc, heapFree, heapRealloc } from "./memory.js";
import type { CoreState } from "./state.js";

// ---- decode-time filter (FILTER_* layout): the driver writes the block, then setFilter() reads its flags ----

/** No filter: clears the block (the memory may be reused from an earlier trace). */
export function clearFilter(s: CoreState): void {
  s.u8.fill(0, STATIC_FILTER, STATIC_FILTER + FILTER_BYTES);
  s.filterFlags = 0;
}

/** Takes the filter the driver wrote into the block; called before any input is consumed. */
export function setFilter(s: CoreState): void {
  s.filterFlags = s.u32[(STATIC_FILTER + FILTER_FLAGS) >>> 2];
}

// The WebAssembly core's `fits` guards its allocator, which traps; this one returns 0 by itself.

/** A block of `bytes`, or 0 when memory is exhausted. */
export function allocate(s: CoreState, bytes: number): number {
  // (as the WebAssembly core's allocator, whose own limit is just under 1 GiB)
  return bytes > MAX_BLOCK ? 0 : heapAlloc(s, bytes);
}

/** realloc that also takes a null pointer. Returns 0, the block left as it was, when memory is exhausted. */
export function resize(s: CoreState, ptr: number, bytes: number): number {
  return ptr === 0 ? heapAlloc(s, bytes) : heapRealloc(s, ptr, bytes);
}

/** heap.free (the other core also counts its live bytes here, for its allocator's limit). */
export function release(s: CoreState, ptr: number): void {
  if (ptr !== 0) heapFree(s, ptr);
}

// ---- fixed columns (assembly/tables.ts): the WebAssembly core writes a window's columns into one block of
// FIXED_ROWS rows where the memory allows, and then ends a window where its rows could pass FIXED_ROWS.
// This core's columns grow as needed, but it ends windows alike, so that both cut a trace into the same batches.
export const FIXED_ROWS = 1 << 20;
const FIXED_BYTES = FIXED_ROWS * 50 + 18 * 7 * 64;

/** The WebAssembly core's choice of fixed columns (its memory allows the block): windows then end by rows too. */
export function useFixedColumns(s: CoreState): boolean {
  if (s.fixedRows) return true;
  if (s.rowCap !== 0 || s.top + FIXED_BYTES + FIXED_BYTES / 8 > s.memoryLimit) return false;
  s.fixedRows = true;
  return true;
}

/** Whether `extra` more rows fit the window (assembly/tables.ts rowsFit): false ends the window before the buffer. */
export function rowsFit(s: CoreState, extra: number): boolean {
  if (!s.fixedRows || s.rowCount + extra <= FIXED_ROWS) return true;
  if (s.rowCount > 0) {
    s.windowFull = true;
    return false;
  }
  // (an empty window: the buffer alone passes the block, which the other core then leaves)
  s.fixedRows = false;
  return true;
}

/** Reserve room for `extra` more rows. Returns false when the table cannot grow any further. */
export function ensureRows(s: CoreState, extra: number): boolean {
  const need = s.rowCount + extra;
  if (need <= s.rowCap) return true;
  if (need > MAX_ROWS) return false;
  let cap = Math.max(s.rowCap * 2, Math.max(need, 4096));
  if (cap > MAX_ROWS) cap = MAX_ROWS;
  // A column that grew before one that could not is merely larger than rowCap.
  let p: number;
  if ((p = resize(s, s.colTimestamp, cap * 8)) === 0) return false; s.colTimestamp = p;
  if ((p = resize(s, s.colKeywords, cap * 8)) === 0) return false; s.colKeywords = p;
  if ((p = resize(s, s.colPid, cap * 4)) === 0) return false; s.colPid = p;
  if ((p = resize(s, s.colTid, cap * 4)) === 0) return false; s.colTid = p;
  if ((p = resize(s, s.colPayloadOffset, cap * 4)) === 0) return false; s.colPayloadOffset = p;
  if ((p = resize(s, s.colPayloadLength, cap * 2)) === 0) return false; s.colPayloadLength = p;
  if ((p = resize(s, s.colHeaderLength, cap * 2)) === 0) return false; s.colHeaderLength = p;
  if ((p = resize(s, s.colProvider, cap * 2)) === 0) return false; s.colProvider = p;
  if ((p = resize(s, s.colEventId, cap * 2)) === 0) return false; s.colEventId = p;
  if ((p = resize(s, s.colTask, cap * 2)) === 0) return false; s.colTask = p;
  if ((p = resize(s, s.colFlags, cap * 2)) === 0) return false; s.colFlags = p;
  if ((p = resize(s, s.colProcessor, cap * 2)) === 0) return false; s.colProcessor = p;
  if ((p = resize(s, s.colVersion, cap * 2)) === 0) return false; s.colVersion = p;
  if ((p = resize(s, s.colOpcode, cap)) === 0) return false; s.colOpcode = p;
  if ((p = resize(s, s.colLevel, cap)) === 0) return false; s.colLevel = p;
  if ((p = resize(s, s.colHeaderType, cap)) === 0) return false; s.colHeaderType = p;
  if ((p = resize(s, s.colChannel, cap)) === 0) return false; s.colChannel = p;
  if ((p = resize(s, s.colEventType, cap * 2)) === 0) return false; s.colEventType = p;
  s.rowCap = cap;
  return true;
}

export function ensureExt(s: CoreState, extra: number): boolean {
  const need = s.extCount + extra;
  if (need <= s.extCap) return true;
  if (need > MAX_ROWS) return false;
  const cap = Math.max(s.extCap * 2, Math.max(need, 256));
  let p: number;
  if ((p = resize(s, s.colExtRow, cap * 4)) === 0) return false; s.colExtRow = p;
  if ((p = resize(s, s.colExtType, cap * 2)) === 0) return false; s.colExtType = p;
  if ((p = resize(s, s.colExtSize, cap * 2)) === 0) return false; s.colExtSize = p;
  if ((p = resize(s, s.colExtOffset, cap * 4)) === 0) return false; s.colExtOffset = p;
  s.extCap = cap;
  return true;
}

/** Appends a zeroed buffer row and returns its address, or 0 when the table cannot grow. */
export function addBuffer(s: CoreState): number {
  if (s.bufCount >= s.bufCap) {
    const cap = Math.max(s.bufCap * 2, 64);
    if (cap * BUF_STRIDE > MAX_BLOCK) return 0;
    const t = resize(s, s.bufTable, cap * BUF_STRIDE);
    if (t === 0) return 0;
    s.bufTable = t;
    s.bufCap = cap;
  }
  const p = s.bufTable + s.bufCount * BUF_STRIDE;
  s.u8.fill(0, p, p + BUF_STRIDE);
  s.bufCount++;
  return p;
}

/** Counts a warning; keeps the first MAX_WARNINGS. */
export function warn(s: CoreState, code: number, fileOffset: number, buffer: number, recordOffset: number, detail: number): void {
  s.warnTotal++;
  if (s.warnCount >= MAX_WARNINGS) return;
  if (s.warnTable === 0) {
    s.warnTable = allocate(s, MAX_WARNINGS * WARN_STRIDE);
    if (s.warnTable === 0) return; // counted, not kept
  }
  const p = s.warnTable + s.warnCount * WARN_STRIDE;
  s.u8.fill(0, p, p + WARN_STRIDE);
  s.f64[(p + WARN_FILE_OFFSET) >>> 3] = fileOffset;
  s.u32[(p + WARN_CODE) >>> 2] = code;
  s.u32[(p + WARN_BUFFER) >>> 2] = buffer; // i32, stored modulo 2^32
  s.u32[(p + WARN_RECORD_OFFSET) >>> 2] = recordOffset;
  s.u32[(p + WARN_DETAIL) >>> 2] = detail;
  s.warnCount++;
}

// ---- window budget and arena (assembly/tables.ts): records stay where they were staged; the arena
// holds decompressed records, and those of a buffer that is not 8-byte aligned, in blocks that never move ----
const ARENA_LIST_MAX = 1024;

/** Sets the window's record budget (at least MIN_WINDOW, at most MAX_BLOCK). */
export function setArenaSize(s: CoreState, bytes: number): void {
  s.windowWant = Math.min(Math.max(bytes, MIN_WINDOW), MAX_BLOCK);
  s.windowRecords = 0;
  s.arenaBytes = 0;
  s.arenaList.length = 0;
  s.windowFull = false;
}

/**
 * Whether a buffer of `n` bytes of records fits the window's budget; when it does not (and the window
 * has records already) the window is full: the buffer is taken again in the next one.
 */
export function windowTakes(s: CoreState, n: number): boolean {
  if (s.windowRecords > 0 && s.windowRecords + n > s.windowWant) {
    s.windowFull = true;
    return false;
  }
  return true;
}

/** Marks a buffer of `n` bytes of records as taken by the window. */
export function windowCommit(s: CoreState, n: number): void {
  const used = alignSize(n);
  s.windowRecords += used;
  s.arenaBytes += used;
}

/** Address of `n` bytes of arena space (8-aligned), or 0 with a W_CAPACITY warning (memory exhausted). */
export function arenaReserve(s: CoreState, n: number): number {
  const need = alignSize(n);
  const list = s.arenaList, blocks = s.arenaBlocks;
  const inUse = list.length >>> 1;
  if (inUse > 0) {
    const start = list[2 * inUse - 2], used = list[2 * inUse - 1], size = blocks[2 * inUse - 1];
    if (used + need <= size) {
      list[2 * inUse - 1] = used + need;
      return start + used;
    }
  }
  if (inUse >= ARENA_LIST_MAX) { warn(s, W_CAPACITY, -1, -1, -1, n); return 0; }
  const k = inUse;
  if (2 * k < blocks.length && blocks[2 * k + 1] < need) {
    release(s, blocks[2 * k]);
    blocks[2 * k] = 0;
    blocks[2 * k + 1] = 0;
  }
  if (2 * k >= blocks.length || blocks[2 * k] === 0) {
    const size = Math.max(need, Math.min(ARENA_BLOCK, s.windowWant));
    const p = size > MAX_BLOCK ? 0 : allocate(s, size);
    if (p === 0) { warn(s, W_CAPACITY, -1, -1, -1, n); return 0; }
    blocks[2 * k] = p;
    blocks[2 * k + 1] = size;
  }
  list.push(blocks[2 * k], need);
  return blocks[2 * k];
}

/** Undoes the last reservation (of `n` bytes), the list entry it opened too. */
export function arenaCancel(s: CoreState, n: number): void {
  const list = s.arenaList;
  if (list.length === 0) return;
  const used = list[list.length - 1];
  const need = alignSize(n);
  if (need >= used) list.length -= 2;
  else list[list.length - 1] = used - need;
}

/** Gives back the end of the last reservation that was not used (`unused` bytes of it). */
export function arenaUnreserve(s: CoreState, unused: number): void {
  const list = s.arenaList;
  if (list.length === 0) return;
  const used = list[list.length - 1];
  list[list.length - 1] = used - Math.min(used, unused - (unused % 8));
}

/** Buffers seen so far, this window's included (buffer indices are over the whole trace). */
export function buffersSeen(s: CoreState): number {
  return s.bufBase + s.bufCount;
}

/**
 * Continues a trace after its first `buffers` buffers, which another core decoded: buffer indices go
 * on from there, and the trace's first row (the logfile header's) came before.
 */
export function resumeAt(s: CoreState, buffers: number): void {
  s.bufBase = buffers;
  s.rowBase = 1;
}

/** Empties the event, extended-item and buffer tables and the arena for the next window. */
export function resetWindow(s: CoreState): void {
  s.bufBase += s.bufCount;
  s.rowBase += s.rowCount;
  s.bufCount = 0;
  s.rowCount = 0;
  s.extCount = 0;
  s.arenaList.length = 0;
  s.windowRecords = 0;
  s.windowFull = false;
}

// ---- typed tables: a block per schema event, kept from window to window (assembly/tables.ts) ----

/** Makes the directory for `n` schema events (once); false when memory is exhausted. */
export function clrInit(s: CoreState, n: number): boolean {
  if (s.clrDir !== 0) return true;
  s.clrDir = allocate(s, n * CLR_DIR_STRIDE);
  if (s.clrDir === 0) return false;
  s.u8.fill(0, s.clrDir, s.clrDir + n * CLR_DIR_STRIDE);
  s.clrTypes = n;
  return true;
}

/** Empties every typed table for the next window (blocks are kept). */
export function clrReset(s: CoreState): void {
  const U32 = s.u32;
  for (let t = 0; t < s.clrTypes; t++) U32[(s.clrDir + t * CLR_DIR_STRIDE + CLR_DIR_COUNT) >>> 2] = 0;
  s.clrRows = 0;
  s.clrMissing = 0;
}
