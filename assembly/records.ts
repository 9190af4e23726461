// The one record-header dispatch: walks the records of one buffer's record area and writes a row
// per record. Space for the buffer's worst case (one row per 8 bytes) is reserved by the caller;
// providers, event types, extended items and warnings may still allocate. Shared by both cores
// (scripts/gen-core-twin.mjs): 64-bit header fields are carried as the address of their 8 bytes
// (timestamps, copied with copy8) or as two 32-bit words (keywords). Records start 8-aligned (buffers.ts
// copies a buffer that is not), so every header field and column is read and written with the aligned
// accessors (ld32a and the like); the buffer's own timestamp, which a record may inherit, need not be.

import {
  W_RECORD_SIZE_ZERO, W_RECORD_TOO_SMALL, W_RECORD_OVERRUNS, W_OPAQUE_RECORD, W_CORRUPT_MARKER,
  W_EXT_ITEMS_MALFORMED, W_MESSAGE_TRUNCATED, F_NO_PROCESS_INFO, F_TIMESTAMP_INHERITED, F_EXT_MALFORMED,
  F_OPAQUE, F_ACTIVITY_ID, F_HEADER_FLAGS_MASK, HT_MESSAGE, PK_GUID, TYPE_STRIDE, TYPE_ROWS, TYPE_CLR, TYPE_KEYWORDS, TYPE_TASK,
  BUFFER_HEADER_SIZE, MAX_EXT_ITEMS, PROV_STRIDE, PROV_WANTED, FF_PROVIDER, FF_EVENT_ID, FF_OPCODE, FF_LEVEL,
  FF_KEYWORDS, FF_PID, FF_TID, FF_FROM, FF_TO, FILTER_LEVEL, FILTER_KEYWORDS, FILTER_FROM, FILTER_TO,
  FILTER_EVENT_ID_COUNT, FILTER_OPCODE_COUNT, FILTER_PID_COUNT, FILTER_TID_COUNT, FILTER_EVENT_IDS, FILTER_OPCODES,
  FILTER_PIDS, FILTER_TIDS, EVENT_TYPE_NONE, CLR_DIR_COUNT, CLR_DIR_STRIDE,
} from "./codes";
import { NT_METADATA, NT_PAYLOAD_OFFSET, NT_PAYLOAD_SIZE } from "./nettrace-events";
import {
  ensureExt, warn, FIXED_TIMESTAMP, FIXED_PID, FIXED_TID, FIXED_PAYLOAD_OFFSET, FIXED_PAYLOAD_LENGTH,
  FIXED_HEADER_LENGTH, FIXED_FLAGS, FIXED_EVENT_TYPE, FIXED_HEADER_TYPE,
} from "./tables";
import { findType, typeClr } from "./eventtypes";
import { clrEventOf, clrMoveRefs, clrPermute, clrRoom } from "./clr";
import { fillClrRows } from "./clr-fill";
import { providerByGuid, providerByHook, providerNone, PROV_LAST } from "./providers";
import {
  Mem, FILTER_BLOCK, PROVIDER_BLOCK, FILL_BY_EVENT, ld8, ldi8, ldi16a, st8, ld16a, ld32a, st16a, st32a,
  copy8, copy8a, fill, lti64, typeHash, allocate, release,
} from "./memory-access";

const NONE32: u32 = 0xffffffff;

/** Whether `v` is one of the `count` u32 entries at `set` (filter block offsets). */
function inSet(m: Mem, count: usize, set: usize, v: u32): bool {
  let n = ld32a(m, FILTER_BLOCK + count);
  let p = FILTER_BLOCK + set;
  for (let i: u32 = 0; i < n; i++) if (ld32a(m, p + (<usize>i << 2)) == v) return true;
  return false;
}

/**
 * Type of a row with this key (eventtypes.ts: its first words `lo` and `hi`, the keywords, and task,
 * level and channel in `tlc`), EVENT_TYPE_NONE past MAX_EVENT_TYPES types; counts the row. The first
 * probe is made here: the index stays under half full, so it mostly finds the type. (Trying the last
 * row's type first costs more: types alternate from row to row.)
 */
@inline function eventType(m: Mem, lo: u32, hi: u32, kwLo: u32, kwHi: u32, tlc: u32): u32 {
  let slots = m.typeSlots;
  if (slots != 0) {
    let v = ld32a(m, slots + (<usize>(typeHash(m, lo, hi, kwLo, kwHi, tlc) & m.typeMask) << 2));
    if (v != 0) {
      let p = m.typeTable + <usize>(v - 1) * TYPE_STRIDE;
      if (ld32a(m, p) == lo && ld32a(m, p + 4) == hi && ld32a(m, p + TYPE_KEYWORDS) == kwLo && ld32a(m, p + TYPE_KEYWORDS + 4) == kwHi && ld32a(m, p + TYPE_TASK) == tlc) {
        st32a(m, p + TYPE_ROWS, ld32a(m, p + TYPE_ROWS) + 1);
        return v - 1;
      }
    }
  }
  return findType(m, lo, hi, kwLo, kwHi, tlc);
}

/**
 * The decode-time filter, asked once per record while a filter is in force (m.filterFlags != 0):
 * true when the record takes no row. Its extended items, written before the row, are dropped with it.
 * The first row (the logfile header record) is always kept.
 */
function filteredOut(
  m: Mem, tsAt: usize, kwLo: u32, kwHi: u32, pid: u32, tid: u32, provider: i32, eventId: u32, flags: u32, opcode: u32,
  level: u32,
): bool {
  if (m.rowCount == 0 && m.rowBase == 0) return false;
  let f = m.filterFlags;
  let kw = FILTER_BLOCK + FILTER_KEYWORDS;
  let out = false;
  if ((f & FF_PROVIDER) != 0 && (provider < 0 || ld8(m, m.provTable + <usize>provider * PROV_STRIDE + PROV_WANTED) == 0)) out = true;
  else if ((f & FF_EVENT_ID) != 0 && !inSet(m, FILTER_EVENT_ID_COUNT, FILTER_EVENT_IDS, eventId)) out = true;
  else if ((f & FF_OPCODE) != 0 && !inSet(m, FILTER_OPCODE_COUNT, FILTER_OPCODES, opcode)) out = true;
  else if ((f & FF_LEVEL) != 0 && level > ld32a(m, FILTER_BLOCK + FILTER_LEVEL)) out = true;
  else if ((f & FF_KEYWORDS) != 0 && ((kwLo & ld32a(m, kw)) | (kwHi & ld32a(m, kw + 4))) == 0) out = true;
  else if ((f & (FF_PID | FF_TID)) != 0 && (flags & F_NO_PROCESS_INFO) != 0) out = true;
  else if ((f & FF_PID) != 0 && !inSet(m, FILTER_PID_COUNT, FILTER_PIDS, pid)) out = true;
  else if ((f & FF_TID) != 0 && !inSet(m, FILTER_TID_COUNT, FILTER_TIDS, tid)) out = true;
  else if ((f & FF_FROM) != 0 && lti64(m, tsAt, FILTER_BLOCK + FILTER_FROM)) out = true;
  else if ((f & FF_TO) != 0 && lti64(m, FILTER_BLOCK + FILTER_TO, tsAt)) out = true;
  if (out) {
    // extended items of this record carry the row it would have taken
    let e = m.extCount;
    while (e > 0 && ld32a(m, m.colExtRow + (<usize>(e - 1) << 2)) == m.rowCount) e--;
    m.extCount = e;
  }
  return out;
}

// ---- rows: with fixed columns (tables.ts FIXED_*) a row is written through one base address with
// constant offsets; otherwise through each column's own address. A row with a typed table goes into its
// schema event's bucket of row indices (noteTyped); a bucket goes to its table in one loop over its rows
// (clr-fill.ts), which reads each payload where the row says.
@inline function emit(
  m: Mem, rec: usize, headerLength: u32, size: u32, tsAt: usize, kwLo: u32, kwHi: u32, pid: u32, tid: u32,
  provider: i32, eventId: u32, task: u32, flags: u32, version: u32, opcode: u32, level: u32, headerType: u32,
  channel: u32,
): void {
  // the row is committed here or nowhere: one branch per record without a filter
  if (m.filterFlags != 0 && filteredOut(m, tsAt, kwLo, kwHi, pid, tid, provider, eventId, flags, opcode, level)) return;
  // the event type's key (eventtypes.ts TYPE_*)
  let lo = ((<u32>provider & 0xffff) | (eventId << 16)) >>> 0;
  let hi = ((version & 0xffff) | ((opcode & 0xff) << 16) | (headerType << 24)) >>> 0;
  let tlc = ((task & 0xffff) | ((level & 0xff) << 16) | (channel << 24)) >>> 0;
  let type = eventType(m, lo, hi, kwLo, kwHi, tlc);
  let r = <usize>m.rowCount;
  let fb = m.fixedBlock;
  if (fb != 0) {
    let a8 = fb + (r << 3), a4 = fb + (r << 2), a2 = fb + (r << 1), a1 = fb + r;
    copy8(m, a8 + FIXED_TIMESTAMP, tsAt);
    st32a(m, a4 + FIXED_PID, pid);
    st32a(m, a4 + FIXED_TID, tid);
    st32a(m, a4 + FIXED_PAYLOAD_OFFSET, <u32>(rec + headerLength));
    st16a(m, a2 + FIXED_PAYLOAD_LENGTH, size - headerLength);
    st16a(m, a2 + FIXED_HEADER_LENGTH, headerLength);
    st16a(m, a2 + FIXED_FLAGS, flags);
    st16a(m, a2 + FIXED_EVENT_TYPE, type);
    st8(m, a1 + FIXED_HEADER_TYPE, headerType);
  } else {
    copy8(m, m.colTimestamp + (r << 3), tsAt);
    st32a(m, m.colPid + (r << 2), pid);
    st32a(m, m.colTid + (r << 2), tid);
    st32a(m, m.colPayloadOffset + (r << 2), <u32>(rec + headerLength));
    st16a(m, m.colPayloadLength + (r << 1), size - headerLength);
    st16a(m, m.colHeaderLength + (r << 1), headerLength);
    st16a(m, m.colFlags + (r << 1), flags);
    st16a(m, m.colEventType + (r << 1), type);
    st8(m, m.colHeaderType + r, headerType);
  }
  // Provider, event id, version, opcode, keywords, task, level and channel are the event type's (its
  // struct holds them): stored only for a row without one, past the type table's MAX_EVENT_TYPES (the
  // bindings read the rest there).
  if (type == EVENT_TYPE_NONE) {
    st16a(m, m.colProvider + (r << 1), <u32>provider & 0xffff);
    st16a(m, m.colEventId + (r << 1), eventId);
    st16a(m, m.colVersion + (r << 1), version);
    st8(m, m.colOpcode + r, opcode);
    st32a(m, m.colKeywords + (r << 3), kwLo);
    st32a(m, m.colKeywords + (r << 3) + 4, kwHi);
    st16a(m, m.colTask + (r << 1), task);
    st8(m, m.colLevel + r, level);
    st8(m, m.colChannel + r, channel);
  }
  m.rowCount = m.rowCount + 1;
  // its typed table, if the record is a .NET runtime event the schema knows
  if (m.clrOn) {
    let t = typeClr(m, type, lo, hi);
    if (t >= 0) noteTyped(m, t, <u32>r);
  }
}

// A schema event met since the last fill has a slot (at most TYPED_SLOTS): a bucket of up to TYPED_BUCKET
// row indices (u32), in row order. A full bucket goes to its table; all of them when the slots run out
// and at each buffer's end.
const TYPED_SLOTS: u32 = 64;
const TYPED_BUCKET: u32 = 64;

/**
 * The slots for `nTypes` schema events, taken from the heap once the typed tables are turned on (static
 * data would put their zeros into etw.wasm); false when memory is exhausted.
 */
export function typedBuckets(m: Mem, nTypes: u32): bool {
  if (m.bucketRows != 0) return true;
  let b = allocate(m, <usize>(TYPED_SLOTS * TYPED_BUCKET) << 2);
  let o = allocate(m, <usize>nTypes << 1);
  let t = allocate(m, <usize>TYPED_SLOTS << 1);
  let f = allocate(m, <usize>TYPED_SLOTS << 2);
  if (b == 0 || o == 0 || t == 0 || f == 0) {
    release(m, b);
    release(m, o);
    release(m, t);
    release(m, f);
    return false;
  }
  fill(m, o, 0, <usize>nTypes << 1);
  fill(m, f, 0, <usize>TYPED_SLOTS << 2);
  m.bucketRows = b;
  m.bucketOf = o;
  m.bucketType = t;
  m.bucketFill = f;
  m.bucketsUsed = 0;
  return true;
}

/** Directory entry of schema event `t`. */
@inline function clrEntry(m: Mem, t: i32): usize {
  return m.clrDir + <usize>t * CLR_DIR_STRIDE;
}

/** Rows `list[0 … n-1]` of schema event `t` to its table, their references moved by m.typedDelta. */
@inline function fillBucket(m: Mem, t: i32, list: usize, n: u32): void {
  let d = clrEntry(m, t);
  let delta = m.typedDelta;
  if (delta == 0) {
    fillClrRows(m, t, d, list, n);
    return;
  }
  let before = ld32a(m, d + CLR_DIR_COUNT);
  fillClrRows(m, t, d, list, n);
  clrMoveRefs(m, t, d, before, ld32a(m, d + CLR_DIR_COUNT), delta);
}

/** Notes row `r` of schema event `t`; its bucket goes to the table when full. */
@inline function noteTyped(m: Mem, t: i32, r: u32): void {
  let so = m.bucketOf + (<usize>t << 1);
  let s = ld16a(m, so);
  if (s == 0) {
    if (m.bucketsUsed == TYPED_SLOTS) fillTyped(m);
    s = ++m.bucketsUsed;
    st16a(m, so, s);
    st16a(m, m.bucketType + (<usize>(s - 1) << 1), <u32>t);
  }
  let c = m.bucketFill + (<usize>(s - 1) << 2);
  let k = ld32a(m, c);
  let list = m.bucketRows + <usize>(s - 1) * (<usize>TYPED_BUCKET << 2);
  st32a(m, list + (<usize>k << 2), r);
  k++;
  if (k == TYPED_BUCKET) {
    fillBucket(m, t, list, k);
    k = 0;
  }
  st32a(m, c, k);
}

/** Every slot's bucket to its table; the slots are free again. */
function fillTyped(m: Mem): void {
  for (let s: u32 = 0; s < m.bucketsUsed; s++) {
    let t = <i32>ld16a(m, m.bucketType + (<usize>s << 1));
    let c = m.bucketFill + (<usize>s << 2);
    let n = ld32a(m, c);
    if (n > 0) fillBucket(m, t, m.bucketRows + <usize>s * (<usize>TYPED_BUCKET << 2), n);
    st32a(m, c, 0);
    st16a(m, m.bucketOf + (<usize>t << 1), 0);
  }
  m.bucketsUsed = 0;
}

// (the columns and blocks below are the caller's or allocated: aligned as their widths)
// Rows that are not a record walk's are filled, in the WebAssembly core (FILL_BY_EVENT), a chunk at a
// time, each chunk's rows of one schema event in one call of its fill: their payloads are then near one
// another, as a record walk's buckets are (one call per schema event over a whole 64 MiB store took 120 ns
// an event, a payload missing the cache each). The TypeScript core fills them in row order.
const FILL_CHUNK: u32 = 4096;

/**
 * The typed tables of `rows` rows that are not a record walk's (an EventPipe file's rows), from columns the
 * caller placed: provider (u16), header type (u8), event id and version (u16), payload offset (u32,
 * an address) and length (u16). `provClr` holds an i8 per provider (`nProv`): its .NET runtime provider
 * index, or -1. Each schema event's rows go to its table in row order. Returns the rows placed
 * (m.clrRows; m.clrMissing counts those memory could not take).
 */
export function fillRowsOf(
  m: Mem, provClr: usize, nProv: u32, rows: u32, provider: usize, headerType: usize, eventId: usize, version: usize,
  payloadOffset: usize, payloadLength: usize,
): u32 {
  let nTypes = m.clrTypes;
  if (rows == 0 || nTypes == 0) return 0;
  // each row's schema event + 1 (0: none); per schema event: its rows (all, then in the chunk), then where
  // they go in `list`; the events met in the chunk
  let eventOf = allocate(m, <usize>rows << 2);
  let count = allocate(m, <usize>nTypes << 2);
  let at = allocate(m, <usize>nTypes << 2);
  let met = allocate(m, <usize>FILL_CHUNK << 2);
  let list = allocate(m, <usize>FILL_CHUNK << 2);
  if (count == 0 || at == 0 || met == 0 || eventOf == 0 || list == 0) {
    release(m, eventOf);
    release(m, count);
    release(m, at);
    release(m, met);
    release(m, list);
    m.clrMissing += rows;
    return 0;
  }
  fill(m, count, 0, <usize>nTypes << 2);
  for (let r: u32 = 0; r < rows; r++) {
    let prov = ld16a(m, provider + (<usize>r << 1));
    let p = prov < nProv ? ldi8(m, provClr + prov) : -1;
    let t = p < 0 ? -1 : clrEventOf(m, p, ld8(m, headerType + r), ld16a(m, eventId + (<usize>r << 1)), ld16a(m, version + (<usize>r << 1)));
    st32a(m, eventOf + (<usize>r << 2), <u32>(t + 1));
    if (t >= 0) st32a(m, count + (<usize>t << 2), ld32a(m, count + (<usize>t << 2)) + 1);
  }
  // each table grown once for all its rows (a table that cannot be is grown as its rows come)
  for (let t: u32 = 0; t < nTypes; t++) {
    let n = ld32a(m, count + (<usize>t << 2));
    if (n > 0) clrRoom(m, <i32>t, clrEntry(m, <i32>t), n);
  }
  fill(m, count, 0, <usize>nTypes << 2);
  m.colPayloadOffset = payloadOffset;
  m.colPayloadLength = payloadLength;
  m.colHeaderType = headerType;
  if (!FILL_BY_EVENT) {
    for (let r: u32 = 0; r < rows; r++) {
      let t1 = ld32a(m, eventOf + (<usize>r << 2));
      if (t1 == 0) continue;
      st32a(m, list, r);
      fillClrRows(m, <i32>(t1 - 1), clrEntry(m, <i32>(t1 - 1)), list, 1);
    }
  } else for (let c: u32 = 0; c < rows; c += FILL_CHUNK) {
    let end = rows < c + FILL_CHUNK ? rows : c + FILL_CHUNK;
    let nMet: u32 = 0;
    for (let r = c; r < end; r++) {
      let t1 = ld32a(m, eventOf + (<usize>r << 2));
      if (t1 == 0) continue;
      let k = count + (<usize>(t1 - 1) << 2);
      let n = ld32a(m, k);
      if (n == 0) {
        st32a(m, met + (<usize>nMet << 2), t1 - 1);
        nMet++;
      }
      st32a(m, k, n + 1);
    }
    // each event's rows one after another in `list`, in row order
    let from: u32 = 0;
    for (let e: u32 = 0; e < nMet; e++) {
      let t = <usize>ld32a(m, met + (<usize>e << 2));
      st32a(m, at + (t << 2), from);
      from += ld32a(m, count + (t << 2));
    }
    for (let r = c; r < end; r++) {
      let t1 = ld32a(m, eventOf + (<usize>r << 2));
      if (t1 == 0) continue;
      let a = at + (<usize>(t1 - 1) << 2);
      let k = ld32a(m, a);
      st32a(m, list + (<usize>k << 2), r);
      st32a(m, a, k + 1);
    }
    for (let e: u32 = 0; e < nMet; e++) {
      let t = ld32a(m, met + (<usize>e << 2));
      let n = ld32a(m, count + (<usize>t << 2));
      // (`at` has moved on to the event's last row + 1)
      let first = ld32a(m, at + (<usize>t << 2)) - n;
      fillClrRows(m, <i32>t, clrEntry(m, <i32>t), list + (<usize>first << 2), n);
      st32a(m, count + (<usize>t << 2), 0);
    }
  }
  release(m, eventOf);
  release(m, count);
  release(m, at);
  release(m, met);
  release(m, list);
  return m.clrRows;
}

/** The schema event of window row `k` (fillPlacedRows's), -1: none. */
@inline function placedType(m: Mem, md: usize, k: u32, mdClr: usize, nMd: u32): i32 {
  let v = ld32a(m, md + (<usize>k << 2)); // (an i32: -1, none, is past nMd as a u32)
  return v < nMd ? ldi16a(m, mdClr + (<usize>v << 1)) : -1;
}

/**
 * The typed tables of rows [first, first + rows) of an EventPipe reader's window columns (`cols`,
 * `stride` bytes apart: nettrace-events.ts NT_*), filled while their block is staged, its payloads in
 * the cache still: the rows one walk of the block wrote, their lookups done. A row's schema event is
 * that of its metadata row (`mdClr`: i16 per metadata row, `nMd` of them, -1: none); its payload is
 * at its NT_PAYLOAD_OFFSET less `bias` (the walk's), of NT_PAYLOAD_SIZE bytes (cut to 65,535, as the
 * event table's). The typed rows' row indices are the window rows, which are the event table's while
 * the window's dispatch order is the file's, else placedReorder puts them in that order. References are
 * the payloads' addresses plus `delta`. `headerType`: every row's. Returns the rows placed
 * (m.clrRows), as fillRowsOf.
 */
export function fillPlacedRows(
  m: Mem, cols: usize, stride: usize, first: u32, rows: u32, mdClr: usize, nMd: u32, bias: u32, delta: u32, headerType: u32,
): u32 {
  if (rows == 0 || m.clrTypes == 0 || m.bucketRows == 0) return m.clrRows;
  let n = <usize>rows;
  // (payload address and length and the header type, a row each: the columns the fills read)
  let scratch = allocate(m, n * 7);
  if (scratch == 0) {
    m.clrMissing += rows;
    return m.clrRows;
  }
  let address = scratch, length = scratch + (n << 2), ht = scratch + n * 6;
  let md = cols + <usize>NT_METADATA * stride;
  let po = cols + <usize>NT_PAYLOAD_OFFSET * stride + (<usize>first << 2);
  let ps = cols + <usize>NT_PAYLOAD_SIZE * stride + (<usize>first << 2);
  // (the fills read row `first + r` of these columns at their entry r)
  m.colPayloadOffset = address - (<usize>first << 2);
  m.colPayloadLength = length - (<usize>first << 1);
  m.colHeaderType = ht - <usize>first;
  m.typedDelta = delta;
  // each row of a schema event to its bucket, as a record walk's (a full bucket is filled at once, its
  // rows' columns written; the fills read only their rows' entries)
  for (let r: usize = 0; r < n; r++) {
    let t = placedType(m, md, first + <u32>r, mdClr, nMd);
    if (t < 0) continue;
    let size = ld32a(m, ps + (r << 2));
    st32a(m, address + (r << 2), ld32a(m, po + (r << 2)) - bias);
    st16a(m, length + (r << 1), size < 0xffff ? size : 0xffff);
    st8(m, ht + r, headerType);
    noteTyped(m, t, first + <u32>r);
  }
  fillTyped(m);
  m.typedDelta = 0;
  release(m, scratch);
  return m.clrRows;
}

/**
 * The typed rows fillPlacedRows filled for a window's `n` rows (the window's tables, in file order)
 * put in the window's dispatch order (`order`: u32 per position, the window row there): each table's
 * rows by position, their row indices the positions. False when memory is exhausted (nothing moved).
 */
export function placedReorder(m: Mem, cols: usize, stride: usize, n: u32, order: usize, mdClr: usize, nMd: u32): bool {
  let nTypes = m.clrTypes;
  if (n == 0 || nTypes == 0) return true;
  let md = cols + <usize>NT_METADATA * stride;
  // (each row's index among its table's rows in file order; each table's first entry in `src`, `rows`)
  let index = allocate(m, <usize>n << 2);
  let start = allocate(m, <usize>nTypes << 2);
  let next = allocate(m, <usize>nTypes << 2);
  let src = allocate(m, <usize>n << 2);
  let rows = allocate(m, <usize>n << 2);
  let tmp = allocate(m, <usize>n << 3);
  let ok = index != 0 && start != 0 && next != 0 && src != 0 && rows != 0 && tmp != 0;
  if (ok) {
    fill(m, next, 0, <usize>nTypes << 2);
    for (let k: u32 = 0; k < n; k++) {
      let t = placedType(m, md, k, mdClr, nMd);
      if (t < 0) continue;
      let c = next + (<usize>t << 2);
      let j = ld32a(m, c);
      st32a(m, index + (<usize>k << 2), j);
      st32a(m, c, j + 1);
    }
    let at: u32 = 0;
    for (let t: u32 = 0; t < nTypes; t++) {
      st32a(m, start + (<usize>t << 2), at);
      at += ld32a(m, next + (<usize>t << 2));
      st32a(m, next + (<usize>t << 2), 0);
    }
    for (let r: u32 = 0; r < n; r++) {
      let k = ld32a(m, order + (<usize>r << 2));
      let t = placedType(m, md, k, mdClr, nMd);
      if (t < 0) continue;
      let c = next + (<usize>t << 2);
      let e = <usize>(ld32a(m, start + (<usize>t << 2)) + ld32a(m, c));
      st32a(m, src + (e << 2), ld32a(m, index + (<usize>k << 2)));
      st32a(m, rows + (e << 2), r);
      st32a(m, c, ld32a(m, c) + 1);
    }
    for (let t: u32 = 0; t < nTypes; t++) {
      let c = ld32a(m, next + (<usize>t << 2));
      if (c == 0) continue;
      let s0 = <usize>ld32a(m, start + (<usize>t << 2)) << 2;
      clrPermute(m, <i32>t, clrEntry(m, <i32>t), src + s0, rows + s0, c, tmp);
    }
  }
  release(m, index);
  release(m, start);
  release(m, next);
  release(m, src);
  release(m, rows);
  release(m, tmp);
  return ok;
}

function recordWarning(m: Mem, code: u32, pos: u32, detail: u32): void {
  warn(m, code, m.walkFileOffset, m.walkBuffer, <i32>(pos + BUFFER_HEADER_SIZE), detail);
}

// The run of records most traces are made of, written by a loop of its own (fewer instructions a record
// than the general walk): EVENT_HEADER records without extended items, of the provider of the record
// before and of an event type seen before, into fixed columns, without a filter. It stops at the first
// record that is not such, which the general walk then takes (and after it, this loop again). The
// timestamp the next record would inherit is left at m.walkTsAt.
function walkFast(m: Mem, base: usize, pos: u32, len: u32): u32 {
  let slots = m.typeSlots;
  if (slots == 0 || m.provLast < 0) return pos;
  let fb = m.fixedBlock;
  let r = <usize>m.rowCount;
  let mask = m.typeMask;
  let types = m.typeTable;
  let last = PROVIDER_BLOCK + PROV_LAST;
  let g0 = ld32a(m, last), g1 = ld32a(m, last + 4), g2 = ld32a(m, last + 8), g3 = ld32a(m, last + 12);
  let prov = <u32>m.provLast & 0xffff;
  let clrOn = m.clrOn;
  let tsAt = m.walkTsAt;
  while (pos + 0x50 <= len) {
    let rec = base + pos;
    let marker = ld32a(m, rec);
    // byte 3 0xC0..0xFF (a trace header), header type 0x12 or 0x13 (EVENT_HEADER32, EVENT_HEADER64)
    if (((marker & 0xc0fe0000) >>> 0) != 0xc0120000) break;
    let size = marker & 0xffff;
    if (size < 0x50 || size > len - pos) break;
    let flags = ld16a(m, rec + 4) & F_HEADER_FLAGS_MASK;
    if ((flags & 1) != 0) break; // extended items
    if ((ld32a(m, rec + 0x40) | ld32a(m, rec + 0x44) | ld32a(m, rec + 0x48) | ld32a(m, rec + 0x4c)) != 0) flags |= F_ACTIVITY_ID;
    if (ld32a(m, rec + 0x18) != g0 || ld32a(m, rec + 0x1c) != g1 || ld32a(m, rec + 0x20) != g2 || ld32a(m, rec + 0x24) != g3) break;
    let ht = (marker >>> 16) & 0xff;
    // EVENT_DESCRIPTOR: id u16, version u8, channel u8 | level u8, opcode u8, task u16
    let d0 = ld32a(m, rec + 0x28), d1 = ld32a(m, rec + 0x2c);
    let lo = (prov | ((d0 & 0xffff) << 16)) >>> 0;
    let hi = (((d0 >>> 16) & 0xff) | (d1 & 0xff00) << 8 | (ht << 24)) >>> 0;
    let kwLo = ld32a(m, rec + 0x30), kwHi = ld32a(m, rec + 0x34);
    let tlc = ((d1 >>> 16) | ((d1 & 0xff) << 16) | (d0 & 0xff000000)) >>> 0; // task, level, channel
    let v = ld32a(m, slots + (<usize>(typeHash(m, lo, hi, kwLo, kwHi, tlc) & mask) << 2));
    if (v == 0) break;
    let te = types + <usize>(v - 1) * TYPE_STRIDE;
    if (ld32a(m, te) != lo || ld32a(m, te + 4) != hi || ld32a(m, te + TYPE_KEYWORDS) != kwLo || ld32a(m, te + TYPE_KEYWORDS + 4) != kwHi || ld32a(m, te + TYPE_TASK) != tlc) break;
    st32a(m, te + TYPE_ROWS, ld32a(m, te + TYPE_ROWS) + 1);
    tsAt = rec + 0x10;
    let a8 = fb + (r << 3), a4 = fb + (r << 2), a2 = fb + (r << 1), a1 = fb + r;
    copy8a(m, a8 + FIXED_TIMESTAMP, tsAt);
    st32a(m, a4 + FIXED_PID, ld32a(m, rec + 0x0c));
    st32a(m, a4 + FIXED_TID, ld32a(m, rec + 0x08));
    st32a(m, a4 + FIXED_PAYLOAD_OFFSET, <u32>(rec + 0x50));
    st16a(m, a2 + FIXED_PAYLOAD_LENGTH, size - 0x50);
    st16a(m, a2 + FIXED_HEADER_LENGTH, 0x50);
    st16a(m, a2 + FIXED_FLAGS, flags);
    st16a(m, a2 + FIXED_EVENT_TYPE, v - 1);
    st8(m, a1 + FIXED_HEADER_TYPE, ht);
    if (clrOn) {
      let t = ldi16a(m, te + TYPE_CLR);
      if (t >= 0) noteTyped(m, t, <u32>r);
    }
    r++;
    pos += (size + 7) & ~7;
  }
  m.rowCount = <u32>r;
  m.walkTsAt = tsAt;
  return pos;
}

/**
 * Walks `len` bytes of records at `base` (buffer offset 0x48). Records without a timestamp of their
 * own take the previous record's (the buffer's, at `timestampAt`, for the first).
 */
export function walkRecords(
  m: Mem, base: usize, len: u32, timestampAt: usize, fileOffset: f64, bufferIndex: i32,
): void {
  m.walkFileOffset = fileOffset;
  m.walkBuffer = bufferIndex;
  m.walkAbandoned = false;
  let lastTsAt = timestampAt;
  let pos: u32 = 0;
  let fast = m.fixedBlock != 0 && m.filterFlags == 0;
  while (pos + 4 <= len) {
    let rec = base + pos;
    let marker = ld32a(m, rec);
    if (fast && ((marker & 0xc0fe0000) >>> 0) == 0xc0120000) {
      m.walkTsAt = lastTsAt;
      let next = walkFast(m, base, pos, len);
      if (next != pos) {
        pos = next;
        lastTsAt = m.walkTsAt;
        continue;
      }
    }
    if (marker == 0xffffffff || marker == 0) break; // padding
    let remaining = len - pos;
    let b3 = marker >>> 24;
    let ht = (marker >>> 16) & 0xff;
    // the row's values, which each header layout sets; the row is written at the end, in one place
    let size: u32 = 0;
    let hl: u32 = 0;
    let tsAt = lastTsAt;
    let kwLo: u32 = 0, kwHi: u32 = 0;
    let pid = NONE32, tid = NONE32;
    let prov: i32 = 0;
    let eventId: u32 = 0, task: u32 = 0, flags: u32 = 0, version: u32 = 0, opcode: u32 = 0, level: u32 = 0, channel: u32 = 0;
    let rowType = ht;

    if ((b3 & 0xc0) == 0xc0 && ht != 0) {
      // ---- fixed-layout trace headers ----
      if (ht <= 4 || ht == 0x10 || ht == 0x11) {
        // system family: SYSTEM (0x20), COMPACT (0x18), PERFINFO (0x10)
        let fixed: u32 = ht <= 2 ? 0x20 : ht <= 4 ? 0x18 : 0x10;
        if (remaining < 8) { recordWarning(m, W_RECORD_OVERRUNS, pos, remaining); break; }
        size = ld16a(m, rec + 4);
        let ver = marker & 0xffff;
        // PEBS index and PMC counters sit between the fixed header and the payload.
        hl = fixed + ((ver & 0x8000) != 0 ? 8 : 0) + (((ver >>> 8) & 7) << 3);
        if (size == 0) { recordWarning(m, W_RECORD_SIZE_ZERO, pos, marker); break; }
        if (size < hl) { recordWarning(m, W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(m, W_RECORD_OVERRUNS, pos, size); break; }
        let hook = ld16a(m, rec + 6);
        prov = providerByHook(m, hook);
        if (fixed == 0x10) {
          tsAt = rec + 8;
          flags = F_NO_PROCESS_INFO;
        } else {
          tid = ld32a(m, rec + 8);
          pid = ld32a(m, rec + 12);
          tsAt = rec + 16;
        }
        lastTsAt = tsAt;
        version = ver & 0xff;
        opcode = hook & 0xff;
      } else if (ht == 0x12 || ht == 0x13) {
        // EVENT_HEADER (0x50) with optional extended items
        size = marker & 0xffff;
        if (size == 0) { recordWarning(m, W_RECORD_SIZE_ZERO, pos, marker); break; }
        if (size < 0x50) { recordWarning(m, W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(m, W_RECORD_OVERRUNS, pos, size); break; }
        flags = ld16a(m, rec + 4) & F_HEADER_FLAGS_MASK;
        if ((ld32a(m, rec + 0x40) | ld32a(m, rec + 0x44) | ld32a(m, rec + 0x48) | ld32a(m, rec + 0x4c)) != 0) flags |= F_ACTIVITY_ID;
        hl = 0x50;
        if ((flags & 1) != 0) {
          // Items are inline: u16 item size, u16 type, u16 linkage bit, u16 data size, data, pad to 8.
          let n: u32 = 0;
          let firstExt = m.extCount;
          if (!ensureExt(m, MAX_EXT_ITEMS)) { flags |= F_EXT_MALFORMED; }
          else {
            while (true) {
              if (n >= <u32>MAX_EXT_ITEMS || hl + 8 > size) { flags |= F_EXT_MALFORMED; break; }
              let item = rec + hl;
              let extType = ld16a(m, item + 2);
              let link = ld16a(m, item + 4);
              let dataSize = ld16a(m, item + 6);
              if (hl + 8 + dataSize > size) { flags |= F_EXT_MALFORMED; break; }
              let e = <usize>(firstExt + n);
              st32a(m, m.colExtRow + (e << 2), m.rowCount);
              st16a(m, m.colExtType + (e << 1), extType);
              st16a(m, m.colExtSize + (e << 1), dataSize);
              st32a(m, m.colExtOffset + (e << 2), <u32>(item + 8));
              n++;
              hl += (8 + dataSize + 7) & ~7;
              if ((link & 1) == 0) break;
            }
            // The last stride may pad past the record end: user data is then empty.
            if (hl > size) hl = size;
            m.extCount = firstExt + n;
          }
          if ((flags & F_EXT_MALFORMED) != 0) recordWarning(m, W_EXT_ITEMS_MALFORMED, pos, n);
        }
        tsAt = rec + 0x10;
        lastTsAt = tsAt;
        let last = PROVIDER_BLOCK + PROV_LAST;
        prov = m.provLast >= 0 && ld32a(m, rec + 0x18) == ld32a(m, last) && ld32a(m, rec + 0x1c) == ld32a(m, last + 4)
          && ld32a(m, rec + 0x20) == ld32a(m, last + 8) && ld32a(m, rec + 0x24) == ld32a(m, last + 12)
          ? m.provLast : providerByGuid(m, rec + 0x18, PK_GUID, 0xffff);
        kwLo = ld32a(m, rec + 0x30);
        kwHi = ld32a(m, rec + 0x34);
        pid = ld32a(m, rec + 0x0c);
        tid = ld32a(m, rec + 0x08);
        eventId = ld16a(m, rec + 0x28);
        task = ld16a(m, rec + 0x2e);
        version = ld8(m, rec + 0x2a);
        opcode = ld8(m, rec + 0x2d);
        level = ld8(m, rec + 0x2c);
        channel = ld8(m, rec + 0x2b);
      } else if (ht == 0x0a || ht == 0x14 || ht == 0x0b || ht == 0x15) {
        // classic EVENT_TRACE_HEADER (0x30) and EVENT_INSTANCE_GUID_HEADER (0x48)
        hl = (ht == 0x0a || ht == 0x14) ? 0x30 : 0x48;
        size = marker & 0xffff;
        if (size == 0) { recordWarning(m, W_RECORD_SIZE_ZERO, pos, marker); break; }
        if (size < hl) { recordWarning(m, W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(m, W_RECORD_OVERRUNS, pos, size); break; }
        tsAt = rec + 0x10;
        lastTsAt = tsAt;
        prov = providerByGuid(m, rec + 0x18, PK_GUID, 0xffff);
        pid = ld32a(m, rec + 0x0c);
        tid = ld32a(m, rec + 0x08);
        version = ld16a(m, rec + 6);
        opcode = ld8(m, rec + 4);
        level = ld8(m, rec + 5);
      } else {
        // TIMED, ERROR, WNODE and unknown layouts: Size at offset 0, kept whole as an opaque record.
        size = marker & 0xffff;
        if (size < 4) { recordWarning(m, W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(m, W_RECORD_OVERRUNS, pos, size); break; }
        recordWarning(m, W_OPAQUE_RECORD, pos, ht);
        prov = providerNone(m);
        flags = F_OPAQUE | F_NO_PROCESS_INFO | F_TIMESTAMP_INHERITED;
      }
    } else if ((b3 & 0xf0) == 0x90) {
      // ---- WPP MESSAGE_TRACE_HEADER with optional fields in fixed order ----
      size = marker & 0xffff;
      if (size < 8) { recordWarning(m, size == 0 ? W_RECORD_SIZE_ZERO : W_RECORD_TOO_SMALL, pos, size); break; }
      if (size > remaining) { recordWarning(m, W_RECORD_OVERRUNS, pos, size); break; }
      let options = ld16a(m, rec + 6);
      hl = 8;
      flags = options & F_HEADER_FLAGS_MASK;
      prov = -1;
      let fits = true;
      if ((options & 0x01) != 0) { if (hl + 4 <= size) hl += 4; else fits = false; }
      if (fits && (options & 0x02) != 0) {
        if (hl + 16 <= size) {
          prov = providerByGuid(m, rec + hl, PK_GUID, 0xffff);
          hl += 16;
        } else fits = false;
      } else if (fits && (options & 0x04) != 0) {
        if (hl + 4 <= size) hl += 4; else fits = false;
      }
      let hasTs = false;
      if (fits && (options & 0x08) != 0) {
        if (hl + 8 <= size) { tsAt = rec + hl; hl += 8; hasTs = true; } else fits = false;
      }
      let hasInfo = false;
      if (fits && (options & 0x20) != 0) {
        if (hl + 8 <= size) { tid = ld32a(m, rec + hl); pid = ld32a(m, rec + hl + 4); hl += 8; hasInfo = true; }
        else fits = false;
      }
      if (!fits) recordWarning(m, W_MESSAGE_TRUNCATED, pos, options);
      if (prov < 0) prov = providerNone(m);
      if (hasTs) lastTsAt = tsAt; else flags |= F_TIMESTAMP_INHERITED;
      if (!hasInfo) flags |= F_NO_PROCESS_INFO;
      eventId = ld16a(m, rec + 4);
      rowType = HT_MESSAGE;
    } else if ((b3 & 0x80) != 0) {
      // Unknown trace header: skip it whole when its size is plausible.
      size = marker & 0xffff;
      if (size < 4) { recordWarning(m, W_RECORD_TOO_SMALL, pos, size); break; }
      if (size > remaining) { recordWarning(m, W_RECORD_OVERRUNS, pos, size); break; }
      recordWarning(m, W_OPAQUE_RECORD, pos, marker);
      prov = providerNone(m);
      flags = F_OPAQUE | F_NO_PROCESS_INFO | F_TIMESTAMP_INHERITED;
    } else {
      recordWarning(m, W_CORRUPT_MARKER, pos, marker);
      break;
    }
    emit(m, rec, hl, size, tsAt, kwLo, kwHi, pid, tid, prov, eventId, task, flags, version, opcode, level, rowType, channel);
    pos += (size + 7) & ~7;
  }
  m.walkAbandoned = pos + 4 <= len && ld32a(m, base + pos) != 0xffffffff && ld32a(m, base + pos) != 0;
  fillTyped(m);
}
