// Output tables in linear memory (assembly/tables.ts). Every table grows by doubling before a
// buffer is walked, so the per-record path never allocates: it only stores into space reserved
// for the whole buffer.

import {
  W_CAPACITY, MAX_BLOCK, MAX_ROWS, MIN_WINDOW, ARENA_START, B_DATA, MAX_WARNINGS, BUF_STRIDE, WARN_STRIDE, WARN_FILE_OFFSET, WARN_CODE,
  WARN_BUFFER, WARN_RECORD_OFFSET, WARN_DETAIL, FILTER_BYTES, FILTER_FLAGS,
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
  return heapAlloc(s, bytes);
}

/** realloc that also takes a null pointer. Returns 0, the block left as it was, when memory is exhausted. */
export function resize(s: CoreState, ptr: number, bytes: number): number {
  return ptr === 0 ? heapAlloc(s, bytes) : heapRealloc(s, ptr, bytes);
}

/** heap.free (the other core also counts its live bytes here, for its allocator's limit). */
export function release(s: CoreState, ptr: number): void {
  if (ptr !== 0) heapFree(s, ptr);
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

/**
 * Sets the window size (at least MIN_WINDOW, at most MAX_BLOCK) and the size its arena block starts at
 * (0: ARENA_START; the input's size, when the driver knows it, spares the block its growth).
 */
export function setArenaSize(s: CoreState, bytes: number, first: number): void {
  s.arenaWant = Math.min(Math.max(bytes, MIN_WINDOW), MAX_BLOCK);
  s.arenaFirst = first !== 0 ? Math.min(first, s.arenaWant) : ARENA_START;
  s.arenaUsed = 0;
  s.arenaBytes = 0;
  s.windowFull = false;
}

/** The arena block moved from `from` to `to`: the window's rows, extended items and buffers follow it. */
function moveArena(s: CoreState, from: number, to: number): void {
  const delta = to - from;
  const U32 = s.u32;
  const pay = s.colPayloadOffset >>> 2;
  for (let r = 0; r < s.rowCount; r++) U32[pay + r] += delta;
  const ext = s.colExtOffset >>> 2;
  for (let e = 0; e < s.extCount; e++) U32[ext + e] += delta;
  for (let b = 0; b < s.bufCount; b++) {
    const p = (s.bufTable + b * BUF_STRIDE + B_DATA) >>> 2;
    if (U32[p] !== 0) U32[p] += delta;
  }
}

/**
 * Address of `n` bytes of arena space (8-aligned), or 0: with windowFull set when the window is full
 * (the buffer goes to the next window), else with a W_CAPACITY warning (memory exhausted).
 */
export function arenaReserve(s: CoreState, n: number): number {
  const need = alignSize(n);
  if (s.arenaStart !== 0 && s.arenaUsed + need <= s.arenaSize) return s.arenaStart + s.arenaUsed;
  if (s.arenaUsed > 0) {
    // grow the block up to the window size, where the memory allows
    const size = Math.min(s.arenaWant, Math.max(s.arenaSize * 2, s.arenaUsed + need));
    if (s.arenaUsed + need <= size) {
      const p = resize(s, s.arenaStart, size);
      if (p !== 0) {
        if (p !== s.arenaStart) moveArena(s, s.arenaStart, p);
        s.arenaStart = p;
        s.arenaSize = size;
        return p + s.arenaUsed;
      }
    }
    s.windowFull = true;
    return 0;
  }
  // an empty window: the block of the windows before, or one that holds this buffer
  const size = Math.max(Math.min(s.arenaWant, s.arenaFirst), need);
  if (s.arenaStart !== 0 && s.arenaSize >= size) return s.arenaStart;
  if (s.arenaStart !== 0) {
    release(s, s.arenaStart);
    s.arenaStart = 0;
    s.arenaSize = 0;
  }
  const p = size > MAX_BLOCK ? 0 : allocate(s, size);
  if (p === 0) {
    warn(s, W_CAPACITY, -1, -1, -1, n);
    return 0;
  }
  s.arenaStart = p;
  s.arenaSize = size;
  return p;
}

/** Marks `n` bytes at the reservation as used. */
export function arenaCommit(s: CoreState, n: number): void {
  const used = alignSize(n);
  s.arenaUsed += used;
  s.arenaBytes += used;
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
  s.arenaUsed = 0;
  s.windowFull = false;
}

// ---- typed tables: a window's blocks, carved from one region that the next window reuses ----

/** A region of at least `bytes` for this window's typed-table blocks (its old contents are dead), or 0. */
export function clrRegionFor(s: CoreState, bytes: number): number {
  if (bytes <= s.clrRegionSize && s.clrRegion !== 0) return s.clrRegion;
  if (s.clrRegion !== 0) {
    release(s, s.clrRegion);
    s.clrRegion = 0;
    s.clrRegionSize = 0;
  }
  // room to grow into, where the memory allows
  let size = bytes + Math.floor(bytes / 4);
  let p = allocate(s, size);
  if (p === 0) {
    size = bytes;
    p = allocate(s, bytes);
  }
  if (p !== 0) {
    s.clrRegion = p;
    s.clrRegionSize = size;
  }
  return p;
}
