// Output tables in linear memory. Every table grows by doubling before a buffer is walked, so the
// per-record path never allocates: it only stores into space reserved for the whole buffer.

import {
  W_CAPACITY, MEMORY_MAX_PAGES, MAX_BLOCK, MAX_ROWS, MIN_WINDOW, ARENA_START, B_DATA, MAX_WARNINGS, BUF_STRIDE,
  WARN_STRIDE, WARN_FILE_OFFSET, WARN_CODE, WARN_BUFFER, WARN_RECORD_OFFSET, WARN_DETAIL, FILTER_BYTES, FILTER_FLAGS,
} from "./codes";

// ---- event table: one row per record, struct of arrays (50 bytes a row; DIR_* slots) ----
export let rowCount: u32 = 0;
export let rowCap: u32 = 0;
export let colTimestamp: usize = 0; // i64 raw clock
export let colKeywords: usize = 0; // u64
export let colPid: usize = 0; // u32, 0xFFFFFFFF when the header has none
export let colTid: usize = 0; // u32, 0xFFFFFFFF when the header has none
export let colPayloadOffset: usize = 0; // u32 address of the user data in linear memory
export let colPayloadLength: usize = 0; // u16
export let colHeaderLength: usize = 0; // u16 bytes from record start to user data
export let colProvider: usize = 0; // u16 index into the provider table
export let colEventId: usize = 0; // u16
export let colTask: usize = 0; // u16
export let colFlags: usize = 0; // u16 header flags (low 12 bits) | decoder status (high 4 bits)
export let colProcessor: usize = 0; // u16
export let colVersion: usize = 0; // u16
export let colOpcode: usize = 0; // u8
export let colLevel: usize = 0; // u8
export let colHeaderType: usize = 0; // u8
export let colChannel: usize = 0; // u8
export let colEventType: usize = 0; // u16 index into the event type table (eventtypes.ts)

// ---- decode-time filter (FILTER_* layout): the driver writes the block, then setFilter() reads its flags ----
export const filterBlock: usize = memory.data(FILTER_BYTES);
export let filterFlags: u32 = 0; // FF_* bits in force; 0: every row is kept

/** No filter: clears the block (the memory may be reused from an earlier trace). */
export function clearFilter(): void {
  memory.fill(filterBlock, 0, FILTER_BYTES);
  filterFlags = 0;
}

/** Takes the filter the driver wrote into the block; called before any input is consumed. */
export function setFilter(): void {
  filterFlags = load<u32>(filterBlock + FILTER_FLAGS);
}

// The memory's maximum in pages: the bindings create the memory with this maximum (a decode's
// memory limit, or MEMORY_MAX_PAGES), and growing past it fails.
let memoryPages: u32 = MEMORY_MAX_PAGES;

/** Sets the memory's maximum (pages); 0 or anything above MEMORY_MAX_PAGES means MEMORY_MAX_PAGES. */
export function setMemoryPages(pages: u32): void {
  memoryPages = pages == 0 || pages > <u32>MEMORY_MAX_PAGES ? <u32>MEMORY_MAX_PAGES : pages;
}

// Bytes of the heap's live blocks, headers included (the allocator keeps a block's size in the
// word before it, low two bits for flags).
let liveBytes: u64 = 0;

@inline function blockBytes(ptr: usize): u64 {
  return <u64>((load<usize>(ptr - sizeof<usize>()) & ~<usize>3) + sizeof<usize>());
}

/**
 * Whether the allocator can take `bytes` more without trapping: it traps when it needs memory to
 * grow and it cannot. It rounds a request up by at most 1/16 and adds block headers; growing takes
 * whole pages (the allocator doubles the memory where it can), up to the memory's maximum. Once the
 * memory has grown to its maximum, a request is served from blocks freed before: it is taken when
 * the live blocks leave room for it with an eighth of the memory to spare for fragmentation.
 */
function fits(bytes: usize): bool {
  let need = <u64>bytes + (<u64>bytes >> 4) + 64;
  let pages = (need + 0x1ffff) >> 16;
  if (<u64>memory.size() + pages <= <u64>memoryPages) return true;
  let capacity = (<u64>memory.size() << 16) - <u64>__heap_base;
  return liveBytes + need + (capacity >> 3) <= capacity;
}

/** heap.alloc that returns 0 instead of trapping when memory is exhausted. */
export function allocate(bytes: usize): usize {
  if (!fits(bytes)) return 0;
  let p = heap.alloc(bytes);
  liveBytes += blockBytes(p);
  return p;
}

/**
 * heap.realloc that also takes a null pointer (the allocator's realloc does not). Returns 0, the
 * block left as it was, when memory is exhausted.
 */
export function resize(ptr: usize, bytes: usize): usize {
  if (ptr == 0) return allocate(bytes);
  if (!fits(bytes)) return 0;
  let before = blockBytes(ptr);
  let p = heap.realloc(ptr, bytes);
  liveBytes = liveBytes - before + blockBytes(p);
  return p;
}

/** heap.free, keeping the count of live bytes. */
export function release(ptr: usize): void {
  if (ptr == 0) return;
  liveBytes -= blockBytes(ptr);
  heap.free(ptr);
}

/** Reserve room for `extra` more rows. Returns false when the table cannot grow any further. */
export function ensureRows(extra: u32): bool {
  let need = <u64>rowCount + extra;
  if (need <= <u64>rowCap) return true;
  if (need > <u64>MAX_ROWS) return false;
  let cap = max<u32>(rowCap << 1, max<u32>(<u32>need, 4096));
  if (cap > <u32>MAX_ROWS) cap = MAX_ROWS;
  // A column that grew before one that could not is merely larger than rowCap.
  let c = <usize>cap;
  let p: usize;
  if ((p = resize(colTimestamp, c << 3)) == 0) return false; colTimestamp = p;
  if ((p = resize(colKeywords, c << 3)) == 0) return false; colKeywords = p;
  if ((p = resize(colPid, c << 2)) == 0) return false; colPid = p;
  if ((p = resize(colTid, c << 2)) == 0) return false; colTid = p;
  if ((p = resize(colPayloadOffset, c << 2)) == 0) return false; colPayloadOffset = p;
  if ((p = resize(colPayloadLength, c << 1)) == 0) return false; colPayloadLength = p;
  if ((p = resize(colHeaderLength, c << 1)) == 0) return false; colHeaderLength = p;
  if ((p = resize(colProvider, c << 1)) == 0) return false; colProvider = p;
  if ((p = resize(colEventId, c << 1)) == 0) return false; colEventId = p;
  if ((p = resize(colTask, c << 1)) == 0) return false; colTask = p;
  if ((p = resize(colFlags, c << 1)) == 0) return false; colFlags = p;
  if ((p = resize(colProcessor, c << 1)) == 0) return false; colProcessor = p;
  if ((p = resize(colVersion, c << 1)) == 0) return false; colVersion = p;
  if ((p = resize(colOpcode, c)) == 0) return false; colOpcode = p;
  if ((p = resize(colLevel, c)) == 0) return false; colLevel = p;
  if ((p = resize(colHeaderType, c)) == 0) return false; colHeaderType = p;
  if ((p = resize(colChannel, c)) == 0) return false; colChannel = p;
  if ((p = resize(colEventType, c << 1)) == 0) return false; colEventType = p;
  rowCap = cap;
  return true;
}

// ---- extended data items (EVENT_HEADER), struct of arrays; rows ascend ----
export let extCount: u32 = 0;
export let extCap: u32 = 0;
export let colExtRow: usize = 0; // u32 event row
export let colExtType: usize = 0; // u16 EVENT_HEADER_EXT_TYPE_*
export let colExtSize: usize = 0; // u16 data bytes
export let colExtOffset: usize = 0; // u32 address of the item data

export function ensureExt(extra: u32): bool {
  let need = <u64>extCount + extra;
  if (need <= <u64>extCap) return true;
  if (need > <u64>MAX_ROWS) return false;
  let cap = max<u32>(extCap << 1, max<u32>(<u32>need, 256));
  let c = <usize>cap;
  let p: usize;
  if ((p = resize(colExtRow, c << 2)) == 0) return false; colExtRow = p;
  if ((p = resize(colExtType, c << 1)) == 0) return false; colExtType = p;
  if ((p = resize(colExtSize, c << 1)) == 0) return false; colExtSize = p;
  if ((p = resize(colExtOffset, c << 2)) == 0) return false; colExtOffset = p;
  extCap = cap;
  return true;
}

// ---- buffer table: array of BUF_STRIDE-byte structs (B_* offsets) ----
export let bufCount: u32 = 0;
let bufCap: u32 = 0;
export let bufTable: usize = 0;

/** Appends a zeroed buffer row and returns its address, or 0 when the table cannot grow. */
export function addBuffer(): usize {
  if (bufCount >= bufCap) {
    let cap = max<u32>(bufCap << 1, 64);
    if (<u64>cap * BUF_STRIDE > <u64>MAX_BLOCK) return 0;
    let p = resize(bufTable, <usize>cap * BUF_STRIDE);
    if (p == 0) return 0;
    bufTable = p;
    bufCap = cap;
  }
  let p = bufTable + <usize>bufCount * BUF_STRIDE;
  memory.fill(p, 0, BUF_STRIDE);
  bufCount++;
  return p;
}

// ---- warnings: array of WARN_STRIDE-byte structs, the first MAX_WARNINGS kept, all counted ----
export let warnCount: u32 = 0; // kept
export let warnTotal: u32 = 0; // seen
export let warnTable: usize = 0;

/**
 * Allocates the warnings table up front, so that a warning met when memory is exhausted (W_CAPACITY
 * above all) is kept, not only counted.
 */
export function reserveWarnings(): void {
  if (warnTable == 0) warnTable = allocate(<usize>MAX_WARNINGS * WARN_STRIDE);
}

export function warn(code: u32, fileOffset: f64, buffer: i32, recordOffset: i32, detail: u32): void {
  warnTotal++;
  if (warnCount >= <u32>MAX_WARNINGS) return;
  if (warnTable == 0) {
    warnTable = allocate(<usize>MAX_WARNINGS * WARN_STRIDE);
    if (warnTable == 0) return; // counted, not kept
  }
  let p = warnTable + <usize>warnCount * WARN_STRIDE;
  memory.fill(p, 0, WARN_STRIDE);
  store<f64>(p + WARN_FILE_OFFSET, fileOffset);
  store<u32>(p + WARN_CODE, code);
  store<i32>(p + WARN_BUFFER, buffer);
  store<i32>(p + WARN_RECORD_OFFSET, recordOffset);
  store<u32>(p + WARN_DETAIL, detail);
  warnCount++;
}

// ---- arena: record bytes of the window's buffers (decompressed where needed), one block ----
// The block starts small and doubles up to the window size; when it moves, the addresses the rows
// hold move with it. A buffer that does not fit a block of the window size ends the window (windowFull).
let arenaStart: usize = 0;
let arenaUsed: usize = 0;
let arenaSize: usize = 0;
let arenaWant: usize = MIN_WINDOW; // the window size the driver asked for
let arenaFirst: usize = ARENA_START; // the size a window's first block starts at
export let windowFull: bool = false;
export let arenaBytes: f64 = 0; // committed over every window

/**
 * Sets the window size (at least MIN_WINDOW, at most MAX_BLOCK) and the size its arena block starts at
 * (0: ARENA_START; the input's size, when the driver knows it, spares the block its growth).
 */
export function setArenaSize(bytes: u32, first: u32): void {
  arenaWant = min<usize>(max<usize>(<usize>bytes, MIN_WINDOW), MAX_BLOCK);
  arenaFirst = first != 0 ? min<usize>(<usize>first, arenaWant) : ARENA_START;
  arenaUsed = 0;
  arenaBytes = 0;
  windowFull = false;
}

/** The window's arena block and the bytes of it in use. */
export function arenaBlock(): usize {
  return arenaStart;
}

export function arenaInUse(): usize {
  return arenaUsed;
}

/** The arena block moved from `from` to `to`: the window's rows, extended items and buffers follow it. */
function moveArena(from: usize, to: usize): void {
  let delta = <u32>(to - from); // modulo 2^32: adds as well as subtracts
  for (let r: usize = 0; r < <usize>rowCount; r++) {
    let p = colPayloadOffset + (r << 2);
    store<u32>(p, load<u32>(p) + delta);
  }
  for (let e: usize = 0; e < <usize>extCount; e++) {
    let p = colExtOffset + (e << 2);
    store<u32>(p, load<u32>(p) + delta);
  }
  for (let b: usize = 0; b < <usize>bufCount; b++) {
    let p = bufTable + b * BUF_STRIDE + B_DATA;
    if (load<u32>(p) != 0) store<u32>(p, load<u32>(p) + delta);
  }
}

/**
 * Address of `n` bytes of arena space (8-aligned), or 0: with windowFull set when the window is full
 * (the buffer goes to the next window), else with a W_CAPACITY warning (memory exhausted).
 */
export function arenaReserve(n: usize): usize {
  let need = (n + 7) & ~<usize>7;
  if (arenaStart != 0 && arenaUsed + need <= arenaSize) return arenaStart + arenaUsed;
  if (arenaUsed > 0) {
    // grow the block up to the window size, where the memory allows
    let size = min<usize>(arenaWant, max<usize>(arenaSize << 1, arenaUsed + need));
    if (arenaUsed + need <= size) {
      let p = resize(arenaStart, size);
      if (p != 0) {
        if (p != arenaStart) moveArena(arenaStart, p);
        arenaStart = p;
        arenaSize = size;
        return p + arenaUsed;
      }
    }
    windowFull = true;
    return 0;
  }
  // an empty window: the block of the windows before, or one that holds this buffer
  let size = max<usize>(min<usize>(arenaWant, arenaFirst), need);
  if (arenaStart != 0 && arenaSize >= size) return arenaStart;
  if (arenaStart != 0) {
    release(arenaStart);
    arenaStart = 0;
    arenaSize = 0;
  }
  let p: usize = size > <usize>MAX_BLOCK ? 0 : allocate(size);
  if (p == 0) {
    warn(W_CAPACITY, -1, -1, -1, <u32>n);
    return 0;
  }
  arenaStart = p;
  arenaSize = size;
  return p;
}

/** Marks `n` bytes at the reservation as used. */
export function arenaCommit(n: usize): void {
  let used = (n + 7) & ~<usize>7;
  arenaUsed += used;
  arenaBytes += <f64>used;
}

// ---- windows: the rows of a run of buffers, handed to the bindings before the next run is decoded ----
export let bufBase: u32 = 0; // buffers of the windows before this one
export let rowBase: f64 = 0; // rows of the windows before this one

/** Buffers seen so far, this window's included (buffer indices are over the whole trace). */
@inline export function buffersSeen(): u32 {
  return bufBase + bufCount;
}

/**
 * Continues a trace after its first `buffers` buffers, which another core decoded: buffer indices go
 * on from there, and the trace's first row (the logfile header's) came before.
 */
export function resumeAt(buffers: u32): void {
  bufBase = buffers;
  rowBase = 1;
}

/** Empties the event, extended-item and buffer tables and the arena for the next window. */
export function resetWindow(): void {
  bufBase += bufCount;
  rowBase += <f64>rowCount;
  bufCount = 0;
  rowCount = 0;
  extCount = 0;
  arenaUsed = 0;
  windowFull = false;
}


// ---- typed tables: a window's blocks, carved from one region that the next window reuses ----
let clrRegion: usize = 0;
let clrRegionSize: usize = 0;
let clrScratch: usize = 0;
let clrScratchSize: usize = 0;

/** A region of at least `bytes` for this window's typed-table blocks (its old contents are dead), or 0. */
export function clrRegionFor(bytes: usize): usize {
  if (bytes <= clrRegionSize && clrRegion != 0) return clrRegion;
  if (clrRegion != 0) {
    release(clrRegion);
    clrRegion = 0;
    clrRegionSize = 0;
  }
  // room to grow into, where the memory allows
  let p = allocate(bytes + (bytes >> 2));
  let size = bytes + (bytes >> 2);
  if (p == 0) {
    p = allocate(bytes);
    size = bytes;
  }
  if (p != 0) {
    clrRegion = p;
    clrRegionSize = size;
  }
  return p;
}

/** Scratch of at least `bytes` for one typed-table fill, or 0. */
export function clrScratchFor(bytes: usize): usize {
  if (bytes <= clrScratchSize && clrScratch != 0) return clrScratch;
  let p = resize(clrScratch, max<usize>(bytes, 64));
  if (p != 0) {
    clrScratch = p;
    clrScratchSize = max<usize>(bytes, 64);
  }
  return p;
}
