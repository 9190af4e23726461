// Output tables in linear memory. Every table grows by doubling before a buffer is walked, so the
// per-record path never allocates: it only stores into space reserved for the whole buffer.

import {
  W_CAPACITY, MEMORY_MAX_PAGES, MAX_BLOCK, MAX_ROWS, MIN_WINDOW, ARENA_BLOCK, MAX_WARNINGS, BUF_STRIDE,
  WARN_STRIDE, WARN_FILE_OFFSET, WARN_CODE, WARN_BUFFER, WARN_RECORD_OFFSET, WARN_DETAIL, FILTER_BYTES, FILTER_FLAGS,
  CLR_DIR_STRIDE, CLR_DIR_COUNT,
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

/** Whether a memory limit below the most the core can address was set. */
export function memoryLimited(): bool {
  return memoryPages < <u32>MEMORY_MAX_PAGES;
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

/** heap.alloc that returns 0 instead of trapping when memory is exhausted or the block passes MAX_BLOCK. */
export function allocate(bytes: usize): usize {
  if (bytes > <usize>MAX_BLOCK || !fits(bytes)) return 0;
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
const FIXED_BYTES: usize = <usize>FIXED_ROWS * 50 + 18 * FIXED_SKEW;
export let fixedBlock: usize = 0; // 0: the columns are blocks of their own (ensureRows)

/** Takes the fixed column block when the memory allows it (before any row); false when it does not. */
export function useFixedColumns(): bool {
  if (fixedBlock != 0) return true;
  if (rowCap != 0 || !fits(FIXED_BYTES + (FIXED_BYTES >> 3))) return false;
  let b = allocate(FIXED_BYTES);
  if (b == 0) return false;
  fixedBlock = b;
  colTimestamp = b + FIXED_TIMESTAMP;
  colKeywords = b + FIXED_KEYWORDS;
  colPid = b + FIXED_PID;
  colTid = b + FIXED_TID;
  colPayloadOffset = b + FIXED_PAYLOAD_OFFSET;
  colPayloadLength = b + FIXED_PAYLOAD_LENGTH;
  colHeaderLength = b + FIXED_HEADER_LENGTH;
  colProvider = b + FIXED_PROVIDER;
  colEventId = b + FIXED_EVENT_ID;
  colTask = b + FIXED_TASK;
  colFlags = b + FIXED_FLAGS;
  colProcessor = b + FIXED_PROCESSOR;
  colVersion = b + FIXED_VERSION;
  colEventType = b + FIXED_EVENT_TYPE;
  colOpcode = b + FIXED_OPCODE;
  colLevel = b + FIXED_LEVEL;
  colHeaderType = b + FIXED_HEADER_TYPE;
  colChannel = b + FIXED_CHANNEL;
  rowCap = FIXED_ROWS;
  return true;
}

/**
 * Whether `extra` more rows fit the window's columns without growing them; fixed columns that cannot
 * hold them in an empty window are left for columns that grow (the buffer is then taken as usual).
 */
export function rowsFit(extra: u32): bool {
  if (fixedBlock == 0 || <u64>rowCount + extra <= <u64>FIXED_ROWS) return true;
  if (rowCount > 0) {
    windowFull = true;
    return false;
  }
  // an empty window: the buffer alone passes the block; the columns become blocks of their own
  release(fixedBlock);
  fixedBlock = 0;
  colTimestamp = colKeywords = colPid = colTid = colPayloadOffset = colPayloadLength = colHeaderLength = 0;
  colProvider = colEventId = colTask = colFlags = colProcessor = colVersion = colEventType = 0;
  colOpcode = colLevel = colHeaderType = colChannel = 0;
  rowCap = 0;
  return true;
}

/** Reserve room for `extra` more rows. Returns false when the table cannot grow any further. */
export function ensureRows(extra: u32): bool {
  let need = <u64>rowCount + extra;
  if (need <= <u64>rowCap) return true;
  if (need > <u64>MAX_ROWS || fixedBlock != 0) return false;
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

// ---- window budget and arena ----
// A window's records stay where the driver staged them (buffers/processBuffer walks them in place);
// only decompressed records, and records of a buffer that is not 8-byte aligned, are written to the
// arena: a list of blocks kept from window to window (ARENA_BLOCK bytes or one buffer's records each).
// Blocks never move, so the addresses rows hold stay valid until the window is reset.
const ARENA_LIST_MAX: u32 = 1024;
const arenaList: usize = memory.data(<i32>ARENA_LIST_MAX * 8); // (u32 start, u32 used) per block in use
let arenaBlocks: usize = 0; // every block, in use or not: (u32 start, u32 size) pairs, ARENA_LIST_MAX of them
let arenaBlockCount: u32 = 0; // blocks allocated
export let arenaInUse: u32 = 0; // blocks of the list in use this window
let windowWant: usize = MIN_WINDOW; // the record budget of a window
export let windowRecords: usize = 0; // bytes of records taken in this window
export let windowFull: bool = false;
export let arenaBytes: f64 = 0; // records taken, every window (8-aligned)

/** Sets the window's record budget (at least MIN_WINDOW, at most MAX_BLOCK). */
export function setArenaSize(bytes: u32): void {
  windowWant = min<usize>(max<usize>(<usize>bytes, MIN_WINDOW), MAX_BLOCK);
  windowRecords = 0;
  arenaBytes = 0;
  arenaInUse = 0;
  windowFull = false;
}

/** The arena block list (DIR_ARENAS). */
export function arenaListPtr(): usize {
  return arenaList;
}

/**
 * Whether a buffer of `n` bytes of records fits the window's budget; when it does not (and the window
 * has records already) the window is full: the buffer is taken again in the next one.
 */
export function windowTakes(n: usize): bool {
  if (windowRecords > 0 && windowRecords + n > windowWant) {
    windowFull = true;
    return false;
  }
  return true;
}

/** Marks a buffer of `n` bytes of records as taken by the window. */
export function windowCommit(n: usize): void {
  let used = (n + 7) & ~<usize>7;
  windowRecords += used;
  arenaBytes += <f64>used;
}

/**
 * Address of `n` bytes of arena space (8-aligned), or 0 with a W_CAPACITY warning (memory exhausted).
 * The space is taken at once: the caller writes the records there.
 */
export function arenaReserve(n: usize): usize {
  let need = (n + 7) & ~<usize>7;
  if (arenaBlocks == 0) {
    arenaBlocks = allocate(<usize>ARENA_LIST_MAX * 8);
    if (arenaBlocks == 0) { warn(W_CAPACITY, -1, -1, -1, <u32>n); return 0; }
  }
  // the block in use, if it has room
  if (arenaInUse > 0) {
    let e = arenaList + (<usize>(arenaInUse - 1) << 3);
    let start = <usize>load<u32>(e);
    let used = <usize>load<u32>(e, 4);
    let size = <usize>load<u32>(arenaBlocks + (<usize>(arenaInUse - 1) << 3), 4);
    if (used + need <= size) {
      store<u32>(e, <u32>(used + need), 4);
      return start + used;
    }
  }
  // the next block: one kept from an earlier window if it is big enough, else a new one
  if (arenaInUse >= ARENA_LIST_MAX) { warn(W_CAPACITY, -1, -1, -1, <u32>n); return 0; }
  let k = arenaInUse;
  let slot = arenaBlocks + (<usize>k << 3);
  if (k < arenaBlockCount && <usize>load<u32>(slot, 4) < need) {
    release(<usize>load<u32>(slot));
    store<u32>(slot, 0);
    store<u32>(slot, 0, 4);
  }
  if (k >= arenaBlockCount || load<u32>(slot) == 0) {
    let size = max<usize>(need, min<usize>(<usize>ARENA_BLOCK, windowWant));
    let p: usize = size > <usize>MAX_BLOCK ? 0 : allocate(size);
    if (p == 0) { warn(W_CAPACITY, -1, -1, -1, <u32>n); return 0; }
    store<u32>(slot, <u32>p);
    store<u32>(slot, <u32>size, 4);
    if (k >= arenaBlockCount) arenaBlockCount = k + 1;
  }
  let start = <usize>load<u32>(slot);
  let e = arenaList + (<usize>k << 3);
  store<u32>(e, <u32>start);
  store<u32>(e, <u32>need, 4);
  arenaInUse = k + 1;
  return start;
}

/** Undoes the last reservation (of `n` bytes), the list entry it opened too. */
export function arenaCancel(n: usize): void {
  if (arenaInUse == 0) return;
  let e = arenaList + (<usize>(arenaInUse - 1) << 3);
  let used = <usize>load<u32>(e, 4);
  let need = (n + 7) & ~<usize>7;
  if (need >= used) arenaInUse--;
  else store<u32>(e, <u32>(used - need), 4);
}

/** Gives back the end of the last reservation that was not used (`unused` bytes of it). */
export function arenaUnreserve(unused: usize): void {
  if (arenaInUse == 0) return;
  let e = arenaList + (<usize>(arenaInUse - 1) << 3);
  let used = <usize>load<u32>(e, 4);
  let back = min<usize>(used, unused & ~<usize>7);
  store<u32>(e, <u32>(used - back), 4);
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
  arenaInUse = 0;
  windowRecords = 0;
  windowFull = false;
}


// ---- typed tables: a block per schema event, kept from window to window ----
// The directory holds, per schema event, the window's rows, the block and the rows it has room for
// (CLR_DIR_*). A block's columns are `cap` rows long each; a full block moves to one twice the size
// (its columns copied). A window starts with every count at 0 and the blocks of the windows before.
export let clrDir: usize = 0;
export let clrTypes: u32 = 0;
export let clrRows: u32 = 0; // rows placed in this window
export let clrMissing: u32 = 0; // rows that found no memory, in this window

/** Makes the directory for `n` schema events (once); false when memory is exhausted. */
export function clrInit(n: u32): bool {
  if (clrDir != 0) return true;
  clrDir = allocate(<usize>n * CLR_DIR_STRIDE);
  if (clrDir == 0) return false;
  memory.fill(clrDir, 0, <usize>n * CLR_DIR_STRIDE);
  clrTypes = n;
  return true;
}

/** Empties every typed table for the next window (blocks are kept). */
export function clrReset(): void {
  for (let t: u32 = 0; t < clrTypes; t++) store<u32>(clrDir + <usize>t * CLR_DIR_STRIDE + CLR_DIR_COUNT, 0);
  clrRows = 0;
  clrMissing = 0;
}
