// The EventPipe reader's events (bindings/eventpipe/reader.ts) as the event table an .etl window gives
// (bindings/decode/eventpipe/data.ts): the order TraceEvent dispatches them in, then, in that order,
// the EVENT_HEADER columns and the extended items (stacks, related activities) beside them.
//
// Both cores run this source (see nettrace-events.ts and scripts/gen-core-twin.mjs). The caller lays
// the reader's columns out in the core's memory and names them in a parameter block of u32 words (NO_*
// for the order, NR_* for the rows), which also carries the results back. Byte offsets are computed by
// multiplication, not shifts: in the TypeScript core a shift past 2^31 would turn negative.

import { Mem, ld8, ld32, ldi32, st8, st16, st32 } from "./memory-access";

// ---- dispatchOrder: parameter block ----

export const NO_COUNT: u32 = 0; // events
export const NO_TIMESTAMP: u32 = 1; // i64 per event (QPC ticks)
export const NO_QUEUE: u32 = 2; // u32 per event: its capture thread's queue, 0 … NO_QUEUES-1
export const NO_BLOCK: u32 = 3; // u32 per event: file offset of its block
export const NO_FLAGS: u32 = 4; // u8 per event: bit 0 = sorted (EVENT_SORTED)
export const NO_SEQUENCE_POINTS: u32 = 5; // u32 file offsets of the sequence point blocks, ascending
export const NO_SEQUENCE_POINT_COUNT: u32 = 6;
export const NO_QUEUES: u32 = 7;
export const NO_WORK: u32 = 8; // scratch: orderWorkBytes(events, queues)
export const NO_ORDER: u32 = 9; // out: u32 per row, the event it is (not written when the order is the file's)
export const NO_IN_FILE_ORDER: u32 = 10; // out: 1 when the order is the file's (row i is event i), else 0
export const NO_WORDS: u32 = 11;

/** Leaves of the tournament over `queues` queues and the empty one: a power of two. */
function leavesFor(queues: u32): u32 {
  let leaves: u32 = 1;
  while (leaves < queues + 1) leaves *= 2;
  return leaves;
}

/** Bytes of dispatchOrder's scratch block. */
export function orderWorkBytes(events: u32, queues: u32): f64 {
  return 4 * (<f64>events + <f64>QUEUE_WORDS * (<f64>queues + 1) + 2 * <f64>leavesFor(queues));
}

// A queue's state is QUEUE_WORDS u32s in the scratch block: its head event (-1: empty), its tail, and
// what the queues are ordered by: its head's timestamp (low, high; the greatest when empty) and when it
// last became non-empty. Queue `queues` is always empty: the tournament's spare leaves name it.
const Q_HEAD: u32 = 0;
const Q_TAIL: u32 = 1;
const Q_LO: u32 = 2;
const Q_HI: u32 = 3;
const Q_SINCE: u32 = 4;
const QUEUE_WORDS: u32 = 5;

/**
 * Queue q's key changed: the tournament's matches on its way to the top are played again. The tree is
 * `leaves` leaves (queue k at leaves + k, the spare ones the empty queue) and their matches, each node
 * the queue that won below it; node 1 the queue that goes next. A match is against the sibling's
 * winner, which q's change leaves as it was; the winner so far and its key stay in locals. Without
 * branches: which queue a merge of interleaved threads takes next is a coin toss to the processor, and
 * a mispredicted branch costs more than the comparisons; the siblings are known before any match is
 * played, so their loads do not wait on one.
 */
function replay(m: Mem, queues: usize, tree: usize, leaves: u32, q: u32): void {
  let at: usize = queues + <usize>q * (QUEUE_WORDS * 4);
  let w = q;
  let wHi = ldi32(m, at + Q_HI * 4), wLo = ld32(m, at + Q_LO * 4), wSince = ld32(m, at + Q_SINCE * 4);
  let k: u32 = leaves + q;
  while (k > 1) {
    let s = ld32(m, tree + <usize>(k ^ 1) * 4);
    let sAt: usize = queues + <usize>s * (QUEUE_WORDS * 4);
    let sHi = ldi32(m, sAt + Q_HI * 4), sLo = ld32(m, sAt + Q_LO * 4), sSince = ld32(m, sAt + Q_SINCE * 4);
    // (the earlier head, of equal heads the one that has waited longest; an empty queue last)
    let hLess: u32 = wHi < sHi ? 1 : 0, hSame: u32 = wHi == sHi ? 1 : 0;
    let lLess: u32 = wLo < sLo ? 1 : 0, lSame: u32 = wLo == sLo ? 1 : 0;
    let keep = (hLess | (hSame & (lLess | (lSame & (wSince < sSince ? 1 : 0))))) != 0;
    w = keep ? w : s;
    wHi = keep ? wHi : sHi;
    wLo = keep ? wLo : sLo;
    wSince = keep ? wSince : sSince;
    k = k >>> 1;
    st32(m, tree + <usize>k * 4, w);
  }
}

/** Queue q's head is event `row` (-1: empty). */
function setHead(m: Mem, ts: usize, queues: usize, q: u32, row: i32): void {
  let a: usize = queues + <usize>q * (QUEUE_WORDS * 4);
  st32(m, a + Q_HEAD * 4, <u32>row);
  if (row >= 0) {
    st32(m, a + Q_LO * 4, ld32(m, ts + <usize>row * 8));
    st32(m, a + Q_HI * 4, ld32(m, ts + <usize>row * 8 + 4));
  } else {
    st32(m, a + Q_LO * 4, 0xffffffff);
    st32(m, a + Q_HI * 4, 0x7fffffff);
    st32(m, a + Q_SINCE * 4, 0xffffffff);
  }
}

// (the order's running state: rows written and the queues not empty)
let orderRows: u32 = 0;
let waiting: u32 = 0;

/** Every queued event earlier than event `until` (all when `all`), oldest first, into the order. */
function flush(m: Mem, ts: usize, next: usize, queues: usize, tree: usize, leaves: u32, order: usize, until: u32, all: bool): void {
  let uLo = ld32(m, ts + <usize>until * 8), uHi = ldi32(m, ts + <usize>until * 8 + 4);
  while (waiting > 0) {
    let q = ld32(m, tree + 4);
    let a: usize = queues + <usize>q * (QUEUE_WORDS * 4);
    if (!all) {
      let hi = ldi32(m, a + Q_HI * 4);
      if (hi > uHi || (hi == uHi && ld32(m, a + Q_LO * 4) >= uLo)) break;
    }
    let row = ld32(m, a + Q_HEAD * 4);
    st32(m, order + <usize>orderRows * 4, row);
    orderRows++;
    // (the queue's next event heads it, as long waiting as before; or it is empty)
    let after = ldi32(m, next + <usize>row * 4);
    setHead(m, ts, queues, q, after);
    if (after < 0) waiting--;
    replay(m, queues, tree, leaves, q);
  }
}

/**
 * Whether the dispatch order is the file's: timestamps never go back, and every two neighbours with
 * equal timestamps are of one queue and neither is sorted. Then a group of equal timestamps is one
 * queue's (kept in its order), no queued event ties with a sorted one (each lets every queued event
 * go), and the merge gives each flush's events in file order. A window of one thread, or written in
 * time order, passes and the merge is skipped; the runtime's, one thread's buffer after another, do not.
 */
function inFileOrder(m: Mem, n: u32, ts: usize, queue: usize, flags: usize): bool {
  if (n == 0) return true;
  let lo = ld32(m, ts), hi = ldi32(m, ts + 4);
  for (let i: u32 = 1; i < n; i++) {
    let l = ld32(m, ts + <usize>i * 8), h = ldi32(m, ts + <usize>i * 8 + 4);
    if (h < hi || (h == hi && l <= lo)) {
      if (h != hi || l != lo) return false;
      if (ld32(m, queue + <usize>i * 4) != ld32(m, queue + <usize>(i - 1) * 4)) return false;
      if (((ld8(m, flags + <usize>i) | ld8(m, flags + <usize>(i - 1))) & 1) != 0) return false;
    }
    lo = l;
    hi = h;
  }
  return true;
}

/**
 * The order TraceEvent dispatches events in (EventCache): one queue per capture thread; a sorted event
 * first lets every queued event earlier than it go (oldest first across queues), then goes itself; a
 * sequence point and the end let everything go. The queues meet in a tournament by their heads'
 * (timestamp, when the queue last became non-empty). Writes NO_ORDER (not when the order is the file's: NO_IN_FILE_ORDER);
 * returns the rows written (the events).
 */
export function dispatchOrder(m: Mem, p: usize): u32 {
  let n = ld32(m, p + NO_COUNT * 4);
  let ts: usize = ld32(m, p + NO_TIMESTAMP * 4);
  let queue: usize = ld32(m, p + NO_QUEUE * 4);
  let block: usize = ld32(m, p + NO_BLOCK * 4);
  let flags: usize = ld32(m, p + NO_FLAGS * 4);
  let sp: usize = ld32(m, p + NO_SEQUENCE_POINTS * 4);
  let spCount = ld32(m, p + NO_SEQUENCE_POINT_COUNT * 4);
  let queues = ld32(m, p + NO_QUEUES * 4);
  let work: usize = ld32(m, p + NO_WORK * 4);
  let order: usize = ld32(m, p + NO_ORDER * 4);
  let same = inFileOrder(m, n, ts, queue, flags);
  st32(m, p + NO_IN_FILE_ORDER * 4, same ? 1 : 0);
  if (same) return n;
  // scratch: next[event] (the queue's chain, -1 at its tail), then each queue's state, then the tournament
  let next = work;
  let qs: usize = next + <usize>n * 4;
  let tree: usize = qs + <usize>(queues + 1) * (QUEUE_WORDS * 4);
  let leaves = leavesFor(queues);
  for (let q: u32 = 0; q <= queues; q++) setHead(m, ts, qs, q, -1);
  for (let k: u32 = 0; k < leaves; k++) st32(m, tree + <usize>(leaves + k) * 4, k < queues ? k : queues);
  for (let k: u32 = leaves - 1; k >= 1; k--) st32(m, tree + <usize>k * 4, queues);
  orderRows = 0;
  waiting = 0;
  let clock: u32 = 0;
  let nextSp: u32 = 0;
  let spAt: u32 = spCount > 0 ? ld32(m, sp) : 0xffffffff;
  for (let i: u32 = 0; i < n; i++) {
    st32(m, next + <usize>i * 4, 0xffffffff);
    // sequence points before this event's block
    let at = ld32(m, block + <usize>i * 4);
    while (nextSp < spCount && spAt < at) {
      flush(m, ts, next, qs, tree, leaves, order, 0, true);
      nextSp++;
      spAt = nextSp < spCount ? ld32(m, sp + <usize>nextSp * 4) : 0xffffffff;
    }
    if ((ld8(m, flags + <usize>i) & 1) != 0) {
      flush(m, ts, next, qs, tree, leaves, order, i, false);
      st32(m, order + <usize>orderRows * 4, i);
      orderRows++;
      continue;
    }
    let q = ld32(m, queue + <usize>i * 4);
    let a: usize = qs + <usize>q * (QUEUE_WORDS * 4);
    if (ldi32(m, a + Q_HEAD * 4) < 0) {
      // the queue starts again: it waits from now
      setHead(m, ts, qs, q, <i32>i);
      st32(m, a + Q_SINCE * 4, clock);
      clock++;
      waiting++;
      replay(m, qs, tree, leaves, q);
    } else {
      st32(m, next + <usize>ld32(m, a + Q_TAIL * 4) * 4, i);
    }
    st32(m, a + Q_TAIL * 4, i);
  }
  flush(m, ts, next, qs, tree, leaves, order, 0, true);
  return orderRows;
}

// ---- eventRows: parameter block ----

export const NR_ROWS: u32 = 0; // rows of this call
export const NR_ORDER: u32 = 1; // u32 per row: its event; 0: the file's order, row r is event NR_EVENT_FROM + r
export const NR_FIRST_ROW: u32 = 2; // the table row of this call's first row (for the extended items)
// input columns, one entry per event
export const NR_TIMESTAMP: u32 = 3; // i64
export const NR_METADATA: u32 = 4; // i32: metadata row, -1 undefined
export const NR_ACTIVITY: u32 = 5; // u32 file offset, 0 none
export const NR_RELATED: u32 = 6; // u32 file offset, 0 none
export const NR_PAYLOAD_OFFSET: u32 = 7; // u32 file offset
export const NR_PAYLOAD_LENGTH: u32 = 8; // u32
export const NR_PROCESSOR: u32 = 9; // i32
export const NR_STACK: u32 = 10; // i32: row in the stacks, -1 none
export const NR_THREAD: u32 = 11; // i64: thread id (V6: index)
export const NR_CAPTURE: u32 = 12; // i64: capture thread id (V6: index)
// tables
export const NR_METADATA_TABLE: u32 = 13; // NM_WORDS u32 per metadata row + 1 (entry 0: undefined metadata)
export const NR_STACK_OFFSET: u32 = 14; // u32 per stack: file offset of its frames (its stack item is 8 bytes before them in the store)
export const NR_STACK_BYTES: u32 = 15; // u32 per stack: bytes of its frames
export const NR_THREADS: u32 = 16; // V6: 3 u32 per thread (index, thread id, process id), by index ascending
export const NR_THREAD_COUNT: u32 = 17; // 0: not V6
export const NR_V6: u32 = 18;
export const NR_PROCESS_ID: u32 = 19; // the file's process id
export const NR_BASE: u32 = 20; // where the file's byte 0 is in the store
export const NR_STACK_TYPE: u32 = 21; // extended item type of a stack (32- or 64-bit)
// output columns, one entry per row of this call
export const NR_OUT_TIMESTAMP: u32 = 22; // i64
export const NR_FIELDS: u32 = 23; // 1: write the type fields (provider … opcode) of every row (for a fill chunk by chunk), 0: none
export const NR_OUT_PID: u32 = 24; // u32, V6 only (a file before V6 has one process, NR_PROCESS_ID)
export const NR_OUT_TID: u32 = 25; // u32
export const NR_OUT_PAYLOAD_OFFSET: u32 = 26; // u32 store offset
export const NR_OUT_PAYLOAD_LENGTH: u32 = 27; // u16
export const NR_OUT_PROVIDER: u32 = 28; // u16 (NR_FIELDS)
export const NR_OUT_EVENT_ID: u32 = 29; // u16 (NR_FIELDS)
export const NR_OUT_PROCESSOR: u32 = 30; // u16
export const NR_OUT_VERSION: u32 = 31; // u16 (NR_FIELDS)
export const NR_OUT_OPCODE: u32 = 32; // u8 (NR_FIELDS)
// (keywords, level and the EVENT_HEADER flags are not rows' columns: the first two are the event type's,
// the flags the extended items')
export const NR_OUT_METADATA: u32 = 33; // i32: metadata row of each row
export const NR_ACT_ROW: u32 = 34; // u32 list: the table row of each row with an ActivityId (NR_ACT_COUNT of them)
export const NR_OUT_EVENT_TYPE: u32 = 35; // u16 (eventTypes)
// extended items (at most two per row)
export const NR_EXT_ROW: u32 = 36; // u32
export const NR_EXT_TYPE: u32 = 37; // u16
export const NR_EXT_SIZE: u32 = 38; // u16
export const NR_EXT_OFFSET: u32 = 39; // u32
// results
export const NR_EXT_COUNT: u32 = 40; // items written
export const NR_CUT: u32 = 41; // payloads longer than 65,535 bytes (cut to it), added to
export const NR_MAX_LO: u32 = 42; // latest timestamp so far (in and out), low and high halves
export const NR_MAX_HI: u32 = 43;
export const NR_SEEN: u32 = 44; // u32 list: metadata table entries met first in this call, in row order
export const NR_SEEN_COUNT: u32 = 45;
export const NR_TYPE_ROWS: u32 = 46; // u32 per event type: rows, added to (eventTypes)
export const NR_PAYLOAD_FROM: u32 = 47; // the store offsets this call's payloads span (as cut): [least start, greatest end), [0, 0) when no row
export const NR_PAYLOAD_TO: u32 = 48;
export const NR_ACT_OFFSET: u32 = 49; // u32 list beside NR_ACT_ROW: the store offset of the row's ActivityId
export const NR_ACT_COUNT: u32 = 50; // rows listed in NR_ACT_ROW
export const NR_EVENT_FROM: u32 = 51; // the event of row 0 when NR_ORDER is 0
export const NR_THREAD_DIRECT: u32 = 52; // V6: 2 u32 per thread index below NR_THREAD_DIRECT_COUNT (thread id, process id; an index not in the table: itself and the file's), 0: none
export const NR_THREAD_DIRECT_COUNT: u32 = 53;
export const NR_OTHER_PIDS: u32 = 54; // rows of this call whose process id is not NR_PROCESS_ID (V6)
export const NR_STAGE: u32 = 55; // scratch of STAGE_BYTES for rows in NR_ORDER, 0: none (the columns read where the order points)
export const NR_WORDS: u32 = 56;

/**
 * Rows in NR_ORDER are taken STAGE_ROWS at a time: each input column's entries for them gathered into
 * the stage, one column after another, then read from there in row order. A dispatch order that merges
 * capture threads reads each column at as many places as there are threads; a row at a time, that is
 * tens of places at once, more than the processor's prefetching follows (3x slower than file order on
 * the runtime's block layout, where each thread's events are a block of their own).
 */
export const STAGE_ROWS: u32 = 2048;
export const STAGE_BYTES: u32 = STAGE_ROWS * 52;

/** `count` u32 entries of the column at `src`, those of the events order[0..count), to `dst`. */
function gather32(m: Mem, src: usize, order: usize, count: u32, dst: usize): void {
  for (let k: u32 = 0; k < count; k++) st32(m, dst + <usize>k * 4, ld32(m, src + <usize>ld32(m, order + <usize>k * 4) * 4));
}

/** The same for a column of 8-byte entries. */
function gather64(m: Mem, src: usize, order: usize, count: u32, dst: usize): void {
  for (let k: u32 = 0; k < count; k++) {
    let at: usize = src + <usize>ld32(m, order + <usize>k * 4) * 8;
    st32(m, dst + <usize>k * 8, ld32(m, at));
    st32(m, dst + <usize>k * 8 + 4, ld32(m, at + 4));
  }
}

/** A metadata table entry: NM_WORDS u32s. */
export const NM_PROVIDER: u32 = 0;
export const NM_EVENT_ID: u32 = 1;
export const NM_VERSION: u32 = 2;
export const NM_OPCODE: u32 = 3;
export const NM_LEVEL: u32 = 4;
export const NM_KEYWORDS_LO: u32 = 5;
export const NM_KEYWORDS_HI: u32 = 6;
export const NM_DROPS_STACK: u32 = 7; // 1: TraceEvent drops this event's stack
export const NM_TYPE: u32 = 8; // event type; NM_TYPE_UNSET until the caller gives it, NM_TYPE_SEEN once listed in NR_SEEN
export const NM_WORDS: u32 = 9;
export const NM_TYPE_UNSET: u32 = 0xffffffff;
export const NM_TYPE_SEEN: u32 = 0xfffffffe;

/** Event type index of a row beyond the table (codes.ts EVENT_TYPE_NONE). */
const TYPE_NONE: u32 = 0xffff;

// (the last V6 thread looked up: events of a block mostly come from one thread)
let lastThreadIndex: u32 = 0;
let lastThreadEntry: i32 = -1;

/** The entry of V6 thread `index` in the sorted table at `threads` (count entries), -1 when absent. */
function findThread(m: Mem, threads: usize, count: u32, index: u32): i32 {
  if (lastThreadEntry >= 0 && lastThreadIndex == index) return lastThreadEntry;
  let lo: u32 = 0, hi: u32 = count;
  while (lo < hi) {
    let mid = (lo + hi) >>> 1;
    if (ld32(m, threads + <usize>mid * 12) < index) lo = mid + 1;
    else hi = mid;
  }
  let found: i32 = lo < count && ld32(m, threads + <usize>lo * 12) == index ? <i32>lo : -1;
  lastThreadIndex = index;
  lastThreadEntry = found;
  return found;
}

/** Extended item `e` (columns at xRow, xType, xSize, xOffset): its row, type, size and store offset. */
@inline function putItem(m: Mem, xRow: usize, xType: usize, xSize: usize, xOffset: usize, e: u32, row: u32, type: u32, size: u32, offset: u32): void {
  st32(m, xRow + <usize>e * 4, row);
  st16(m, xType + <usize>e * 2, type);
  st16(m, xSize + <usize>e * 2, size);
  st32(m, xOffset + <usize>e * 4, offset);
}

/**
 * Rows NR_ORDER[0 … NR_ROWS-1] of the event table: every output column but the event type (the type
 * fields only with NR_FIELDS, the process ids only in V6), the extended items, the rows with an activity
 * id, the cut payloads and the latest timestamp; metadata entries met for the first time (NM_TYPE_UNSET)
 * are listed in NR_SEEN for the caller to give their types before eventTypes.
 */
export function eventRows(m: Mem, p: usize): void {
  let rows = ld32(m, p + NR_ROWS * 4);
  let order: usize = ld32(m, p + NR_ORDER * 4);
  let eventFrom = ld32(m, p + NR_EVENT_FROM * 4);
  let firstRow = ld32(m, p + NR_FIRST_ROW * 4);
  let stage: usize = ld32(m, p + NR_STAGE * 4);
  // the input columns (`in*`), or where a stage of them is read (rows in order with a stage)
  let inTs: usize = ld32(m, p + NR_TIMESTAMP * 4);
  let inMetadata: usize = ld32(m, p + NR_METADATA * 4);
  let inActivity: usize = ld32(m, p + NR_ACTIVITY * 4);
  let inRelated: usize = ld32(m, p + NR_RELATED * 4);
  let inPayloadOffset: usize = ld32(m, p + NR_PAYLOAD_OFFSET * 4);
  let inPayloadLength: usize = ld32(m, p + NR_PAYLOAD_LENGTH * 4);
  let inProcessor: usize = ld32(m, p + NR_PROCESSOR * 4);
  let inStack: usize = ld32(m, p + NR_STACK * 4);
  let inThread: usize = ld32(m, p + NR_THREAD * 4);
  let inCapture: usize = ld32(m, p + NR_CAPTURE * 4);
  let staged = order != 0 && stage != 0;
  let ts: usize = staged ? stage : inTs;
  let thread: usize = staged ? stage + <usize>STAGE_ROWS * 8 : inThread;
  let capture: usize = staged ? stage + <usize>STAGE_ROWS * 16 : inCapture;
  let metadata: usize = staged ? stage + <usize>STAGE_ROWS * 24 : inMetadata;
  let activity: usize = staged ? stage + <usize>STAGE_ROWS * 28 : inActivity;
  let related: usize = staged ? stage + <usize>STAGE_ROWS * 32 : inRelated;
  let payloadOffset: usize = staged ? stage + <usize>STAGE_ROWS * 36 : inPayloadOffset;
  let payloadLength: usize = staged ? stage + <usize>STAGE_ROWS * 40 : inPayloadLength;
  let processor: usize = staged ? stage + <usize>STAGE_ROWS * 44 : inProcessor;
  let stack: usize = staged ? stage + <usize>STAGE_ROWS * 48 : inStack;
  let meta: usize = ld32(m, p + NR_METADATA_TABLE * 4);
  let stackOffset: usize = ld32(m, p + NR_STACK_OFFSET * 4);
  let stackBytes: usize = ld32(m, p + NR_STACK_BYTES * 4);
  let threads: usize = ld32(m, p + NR_THREADS * 4);
  let threadCount = ld32(m, p + NR_THREAD_COUNT * 4);
  let direct: usize = ld32(m, p + NR_THREAD_DIRECT * 4);
  let directCount = ld32(m, p + NR_THREAD_DIRECT_COUNT * 4);
  let v6 = ld32(m, p + NR_V6 * 4) != 0;
  let pid = ld32(m, p + NR_PROCESS_ID * 4);
  let base = ld32(m, p + NR_BASE * 4);
  let stackType = ld32(m, p + NR_STACK_TYPE * 4);
  let oTs: usize = ld32(m, p + NR_OUT_TIMESTAMP * 4);
  let fields = ld32(m, p + NR_FIELDS * 4) != 0;
  let oPid: usize = ld32(m, p + NR_OUT_PID * 4);
  let oTid: usize = ld32(m, p + NR_OUT_TID * 4);
  let oPayloadOffset: usize = ld32(m, p + NR_OUT_PAYLOAD_OFFSET * 4);
  let oPayloadLength: usize = ld32(m, p + NR_OUT_PAYLOAD_LENGTH * 4);
  let oProvider: usize = ld32(m, p + NR_OUT_PROVIDER * 4);
  let oEventId: usize = ld32(m, p + NR_OUT_EVENT_ID * 4);
  let oProcessor: usize = ld32(m, p + NR_OUT_PROCESSOR * 4);
  let oVersion: usize = ld32(m, p + NR_OUT_VERSION * 4);
  let oOpcode: usize = ld32(m, p + NR_OUT_OPCODE * 4);
  let oMetadata: usize = ld32(m, p + NR_OUT_METADATA * 4);
  let aRow: usize = ld32(m, p + NR_ACT_ROW * 4);
  let aOffset: usize = ld32(m, p + NR_ACT_OFFSET * 4);
  let acts: u32 = 0;
  let xRow: usize = ld32(m, p + NR_EXT_ROW * 4);
  let xType: usize = ld32(m, p + NR_EXT_TYPE * 4);
  let xSize: usize = ld32(m, p + NR_EXT_SIZE * 4);
  let xOffset: usize = ld32(m, p + NR_EXT_OFFSET * 4);
  let seen: usize = ld32(m, p + NR_SEEN * 4);
  let e: u32 = 0;
  let cut = ld32(m, p + NR_CUT * 4);
  let maxLo = ld32(m, p + NR_MAX_LO * 4);
  let maxHi = ldi32(m, p + NR_MAX_HI * 4);
  let seenCount: u32 = 0;
  let payloadFrom: u32 = 0xffffffff, payloadTo: u32 = 0;
  let otherPids: u32 = 0;
  lastThreadEntry = -1;
  let stagedFrom: u32 = 0;
  for (let r: u32 = 0; r < rows; r++) {
    let i: usize = 0;
    if (staged) {
      if (r - stagedFrom >= STAGE_ROWS || r == 0) {
        stagedFrom = r;
        let count: u32 = rows - r < STAGE_ROWS ? rows - r : STAGE_ROWS;
        let o: usize = order + <usize>r * 4;
        gather64(m, inTs, o, count, ts);
        gather64(m, inThread, o, count, thread);
        gather64(m, inCapture, o, count, capture);
        gather32(m, inMetadata, o, count, metadata);
        gather32(m, inActivity, o, count, activity);
        gather32(m, inRelated, o, count, related);
        gather32(m, inPayloadOffset, o, count, payloadOffset);
        gather32(m, inPayloadLength, o, count, payloadLength);
        gather32(m, inProcessor, o, count, processor);
        gather32(m, inStack, o, count, stack);
      }
      i = <usize>(r - stagedFrom);
    } else i = <usize>(order != 0 ? ld32(m, order + <usize>r * 4) : eventFrom + r);
    let mi = ldi32(m, metadata + i * 4);
    let x: usize = meta + <usize>(mi + 1) * (NM_WORDS * 4);
    st32(m, oMetadata + <usize>r * 4, <u32>mi);
    let act = ld32(m, activity + i * 4);
    if (act != 0) {
      // (most rows have none: they are listed, not a column)
      st32(m, aRow + <usize>acts * 4, firstRow + r);
      st32(m, aOffset + <usize>acts * 4, (act + base) >>> 0);
      acts++;
    }
    let tsLo = ld32(m, ts + i * 8), tsHi = ldi32(m, ts + i * 8 + 4);
    st32(m, oTs + <usize>r * 8, tsLo);
    st32(m, oTs + <usize>r * 8 + 4, <u32>tsHi);
    if (tsHi > maxHi || (tsHi == maxHi && tsLo > maxLo)) {
      maxHi = tsHi;
      maxLo = tsLo;
    }
    let thLo = ld32(m, thread + i * 8);
    let tid = thLo;
    if (threadCount > 0) {
      // V6: the thread index names an entry of the thread table, which gives the OS thread and process
      // (by index where the indices are small, as the runtime numbers them: the events of a block change
      // thread at almost every row)
      let rowPid = pid;
      if (thLo < directCount) {
        tid = ld32(m, direct + <usize>thLo * 8);
        rowPid = ld32(m, direct + <usize>thLo * 8 + 4);
      } else {
        let t = findThread(m, threads, threadCount, thLo);
        if (t >= 0) {
          tid = ld32(m, threads + <usize>t * 12 + 4);
          rowPid = ld32(m, threads + <usize>t * 12 + 8);
        }
      }
      st32(m, oPid + <usize>r * 4, rowPid);
      if (rowPid != pid) otherPids++;
    }
    st32(m, oTid + <usize>r * 4, tid);
    let po = (ld32(m, payloadOffset + i * 4) + base) >>> 0;
    st32(m, oPayloadOffset + <usize>r * 4, po);
    let len = ld32(m, payloadLength + i * 4);
    if (len > 0xffff) {
      cut++;
      len = 0xffff;
    }
    if (po < payloadFrom) payloadFrom = po;
    if (po + len > payloadTo) payloadTo = (po + len) >>> 0;
    st16(m, oPayloadLength + <usize>r * 2, len);
    if (fields) {
      st16(m, oProvider + <usize>r * 2, ld32(m, x + NM_PROVIDER * 4));
      st16(m, oEventId + <usize>r * 2, ld32(m, x + NM_EVENT_ID * 4));
      st16(m, oVersion + <usize>r * 2, ld32(m, x + NM_VERSION * 4));
      st8(m, oOpcode + <usize>r, ld32(m, x + NM_OPCODE * 4));
    }
    // the processor only where the capture thread is the event's own (V6 always gives it)
    let proc = ldi32(m, processor + i * 4);
    let own = v6 || (thLo == ld32(m, capture + i * 8) && ld32(m, thread + i * 8 + 4) == ld32(m, capture + i * 8 + 4));
    st16(m, oProcessor + <usize>r * 2, proc >= 0 && proc <= 0xfffe && own ? <u32>proc : 0xffff);
    if (ld32(m, x + NM_TYPE * 4) == NM_TYPE_UNSET) {
      st32(m, x + NM_TYPE * 4, NM_TYPE_SEEN);
      st32(m, seen + <usize>seenCount * 4, <u32>(mi + 1));
      seenCount++;
    }
    let rel = ld32(m, related + i * 4);
    if (rel != 0) {
      // EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID
      putItem(m, xRow, xType, xSize, xOffset, e, firstRow + r, 1, 16, (rel + base) >>> 0);
      e++;
    }
    let s = ldi32(m, stack + i * 4);
    if (s >= 0 && ld32(m, x + NM_DROPS_STACK * 4) == 0) {
      // (where an ETW stack item's MatchId would be: 8 bytes before the frames, TraceData.bareStacks)
      putItem(m, xRow, xType, xSize, xOffset, e, firstRow + r, stackType, 8 + ld32(m, stackBytes + <usize>s * 4), (base + ld32(m, stackOffset + <usize>s * 4) - 8) >>> 0);
      e++;
    }
  }
  st32(m, p + NR_EXT_COUNT * 4, e);
  st32(m, p + NR_CUT * 4, cut);
  st32(m, p + NR_MAX_LO * 4, maxLo);
  st32(m, p + NR_MAX_HI * 4, <u32>maxHi);
  st32(m, p + NR_SEEN_COUNT * 4, seenCount);
  st32(m, p + NR_PAYLOAD_FROM * 4, rows > 0 ? payloadFrom : 0);
  st32(m, p + NR_PAYLOAD_TO * 4, payloadTo);
  st32(m, p + NR_ACT_COUNT * 4, acts);
  st32(m, p + NR_OTHER_PIDS * 4, otherPids);
}

/** The event type of each of eventRows' rows, from its metadata entry's NM_TYPE, counted in NR_TYPE_ROWS. */
export function eventTypes(m: Mem, p: usize): void {
  let rows = ld32(m, p + NR_ROWS * 4);
  let meta: usize = ld32(m, p + NR_METADATA_TABLE * 4);
  let oMetadata: usize = ld32(m, p + NR_OUT_METADATA * 4);
  let oType: usize = ld32(m, p + NR_OUT_EVENT_TYPE * 4);
  let typeRows: usize = ld32(m, p + NR_TYPE_ROWS * 4);
  for (let r: u32 = 0; r < rows; r++) {
    let x: usize = meta + <usize>(ldi32(m, oMetadata + <usize>r * 4) + 1) * (NM_WORDS * 4);
    let t = ld32(m, x + NM_TYPE * 4);
    st16(m, oType + <usize>r * 2, t);
    if (t != TYPE_NONE) st32(m, typeRows + <usize>t * 4, ld32(m, typeRows + <usize>t * 4) + 1);
  }
}
