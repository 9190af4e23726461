// Output tables in linear memory. Every table grows by doubling before a buffer is walked, so the
// per-record path never allocates: it only stores into space reserved for the whole buffer.

import { W_CAPACITY } from "./codes";

// ---- event table: one row per record, struct of arrays (48 bytes a row) ----
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

// Largest block the allocator hands out is just under 1 GiB; the widest column has 8-byte cells.
const MAX_ROWS: u32 = 120 << 20;

/** heap.realloc that also takes a null pointer (the allocator's realloc does not). */
export function resize(ptr: usize, bytes: usize): usize {
  return ptr == 0 ? heap.alloc(bytes) : heap.realloc(ptr, bytes);
}

function growCol(ptr: usize, cell: u32, cap: u32): usize {
  return resize(ptr, <usize>cap * cell);
}

/** Reserve room for `extra` more rows. Returns false when the table cannot grow any further. */
export function ensureRows(extra: u32): bool {
  let need = <u64>rowCount + extra;
  if (need <= <u64>rowCap) return true;
  if (need > <u64>MAX_ROWS) return false;
  let cap = max<u32>(rowCap << 1, max<u32>(<u32>need, 4096));
  if (cap > MAX_ROWS) cap = MAX_ROWS;
  colTimestamp = growCol(colTimestamp, 8, cap);
  colKeywords = growCol(colKeywords, 8, cap);
  colPid = growCol(colPid, 4, cap);
  colTid = growCol(colTid, 4, cap);
  colPayloadOffset = growCol(colPayloadOffset, 4, cap);
  colPayloadLength = growCol(colPayloadLength, 2, cap);
  colHeaderLength = growCol(colHeaderLength, 2, cap);
  colProvider = growCol(colProvider, 2, cap);
  colEventId = growCol(colEventId, 2, cap);
  colTask = growCol(colTask, 2, cap);
  colFlags = growCol(colFlags, 2, cap);
  colProcessor = growCol(colProcessor, 2, cap);
  colVersion = growCol(colVersion, 2, cap);
  colOpcode = growCol(colOpcode, 1, cap);
  colLevel = growCol(colLevel, 1, cap);
  colHeaderType = growCol(colHeaderType, 1, cap);
  colChannel = growCol(colChannel, 1, cap);
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
  colExtRow = growCol(colExtRow, 4, cap);
  colExtType = growCol(colExtType, 2, cap);
  colExtSize = growCol(colExtSize, 2, cap);
  colExtOffset = growCol(colExtOffset, 4, cap);
  extCap = cap;
  return true;
}

// ---- buffer table: array of 64-byte structs ----
export const BUF_STRIDE: u32 = 64;
// field offsets
export const B_FILE_OFFSET: u32 = 0; // f64
export const B_SEQUENCE: u32 = 8; // i64
export const B_TIMESTAMP: u32 = 16; // i64
export const B_FIRST_ROW: u32 = 24; // u32
export const B_ROW_COUNT: u32 = 28; // u32
export const B_DATA: u32 = 32; // u32 address of the record area (buffer offset 0x48)
export const B_DATA_LENGTH: u32 = 36; // u32 bytes of records (decompressed)
export const B_BUFFER_SIZE: u32 = 40; // u32 bytes on disk
export const B_SAVED_OFFSET: u32 = 44; // u32
export const B_FILLED: u32 = 48; // u32 ("Offset" @0x30)
export const B_PROCESSOR: u32 = 52; // u16
export const B_LOGGER_ID: u32 = 54; // u16
export const B_FLAGS: u32 = 56; // u16 BufferFlag
export const B_TYPE: u32 = 58; // u16 BufferType
export const B_STATUS: u32 = 60; // u16 decoder status (BS_*)
export const B_RAW_PROCESSOR: u32 = 62; // u16 ClientContext as read

export let bufCount: u32 = 0;
let bufCap: u32 = 0;
export let bufTable: usize = 0;

/** Appends a zeroed buffer row and returns its address, or 0 when the table cannot grow. */
export function addBuffer(): usize {
  if (bufCount >= bufCap) {
    let cap = max<u32>(bufCap << 1, 64);
    if (<u64>cap * BUF_STRIDE > <u64>(960 << 20)) return 0;
    bufTable = resize(bufTable, <usize>cap * BUF_STRIDE);
    bufCap = cap;
  }
  let p = bufTable + <usize>bufCount * BUF_STRIDE;
  memory.fill(p, 0, BUF_STRIDE);
  bufCount++;
  return p;
}

// ---- warnings: array of 32-byte structs, the first MAX_WARNINGS kept, all counted ----
export const WARN_STRIDE: u32 = 32;
const MAX_WARNINGS: u32 = 10000;
export let warnCount: u32 = 0; // kept
export let warnTotal: u32 = 0; // seen
export let warnTable: usize = 0;

export function warn(code: u32, fileOffset: f64, buffer: i32, recordOffset: i32, detail: u32): void {
  warnTotal++;
  if (warnCount >= MAX_WARNINGS) return;
  if (warnTable == 0) warnTable = heap.alloc(<usize>MAX_WARNINGS * WARN_STRIDE);
  let p = warnTable + <usize>warnCount * WARN_STRIDE;
  store<f64>(p, fileOffset);
  store<u32>(p, code, 8);
  store<i32>(p, buffer, 12);
  store<i32>(p, recordOffset, 16);
  store<u32>(p, detail, 20);
  store<u64>(p, 0, 24);
  warnCount++;
}

// ---- arena: record bytes of every buffer (decompressed where needed), in segments ----
// Segments never move, so addresses stored in the tables stay valid.
let segStart: usize = 0;
let segUsed: usize = 0;
let segSize: usize = 0;
let nextSegSize: usize = 1 << 20;
const MAX_SEG: usize = 64 << 20;
export let arenaBytes: f64 = 0;

/** Address of `n` bytes of arena space (8-aligned), or 0 if memory is exhausted. */
export function arenaReserve(n: usize): usize {
  let need = (n + 7) & ~<usize>7;
  if (segStart == 0 || segUsed + need > segSize) {
    let size = max<usize>(nextSegSize, need);
    if (nextSegSize < MAX_SEG) nextSegSize <<= 1;
    if (size > (960 << 20)) {
      warn(W_CAPACITY, -1, -1, -1, <u32>n);
      return 0;
    }
    segStart = heap.alloc(size);
    segSize = size;
    segUsed = 0;
  }
  return segStart + segUsed;
}

/** Marks `n` bytes at the reservation as used. */
export function arenaCommit(n: usize): void {
  let used = (n + 7) & ~<usize>7;
  segUsed += used;
  arenaBytes += <f64>used;
}
