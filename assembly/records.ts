// The one record-header dispatch: walks the records of one buffer's record area and writes a row
// per record. Space for the buffer's worst case (one row per 8 bytes) is reserved by the caller,
// so nothing here allocates.

import {
  W_RECORD_SIZE_ZERO, W_RECORD_TOO_SMALL, W_RECORD_OVERRUNS, W_OPAQUE_RECORD, W_CORRUPT_MARKER,
  W_EXT_ITEMS_MALFORMED, W_MESSAGE_TRUNCATED, F_NO_PROCESS_INFO, F_TIMESTAMP_INHERITED, F_EXT_MALFORMED,
  F_OPAQUE, F_HEADER_FLAGS_MASK, HT_MESSAGE, PK_GUID, TYPE_STRIDE, TYPE_ROWS, TYPE_CLR, TYPE_KEYWORDS, TYPE_TASK, BUFFER_HEADER_SIZE, MAX_EXT_ITEMS, PROV_STRIDE, PROV_WANTED,
  FF_PROVIDER, FF_EVENT_ID, FF_OPCODE, FF_LEVEL, FF_KEYWORDS, FF_PID, FF_TID, FF_FROM, FF_TO, FILTER_LEVEL,
  FILTER_KEYWORDS, FILTER_FROM, FILTER_TO, FILTER_EVENT_ID_COUNT, FILTER_OPCODE_COUNT, FILTER_PID_COUNT,
  FILTER_TID_COUNT, FILTER_EVENT_IDS, FILTER_OPCODES, FILTER_PIDS, FILTER_TIDS, EVENT_TYPE_NONE, CLR_DIR_COUNT,
} from "./codes";
import { NT_METADATA, NT_PAYLOAD_OFFSET, NT_PAYLOAD_SIZE } from "./nettrace-events";
import { ensureExt, warn, FIXED_TIMESTAMP, FIXED_PID, FIXED_TID, FIXED_PAYLOAD_OFFSET, FIXED_PAYLOAD_LENGTH, FIXED_HEADER_LENGTH, FIXED_FLAGS, FIXED_EVENT_TYPE, FIXED_HEADER_TYPE, allocate, release } from "./tables";
import { findType, typeClr } from "./eventtypes";
import { clrOn, clrEntry } from "./clr";
import * as clr from "./clr";
import { fillClrRows } from "./clr-fill";
import * as tables from "./tables";
import { providerByGuid, providerByHook, providerNone, PROV_LAST } from "./providers";
import { Mem, STATE, FILTER_BLOCK, PROVIDER_BLOCK, typeHash64 } from "./memory-access";

const NONE32: u32 = 0xffffffff;

// context of the buffer being walked, for warnings
let ctxFileOffset: f64 = 0;
let ctxBuffer: i32 = 0;
/** Set when the last walk stopped at a bad record. */

/** Whether `v` is one of the `count` u32 entries at `set` (filter block offsets). */
function inSet(count: usize, set: usize, v: u32): bool {
  let n = load<u32>(FILTER_BLOCK + count);
  let p = FILTER_BLOCK + set;
  for (let i: u32 = 0; i < n; i++) if (load<u32>(p + (<usize>i << 2)) == v) return true;
  return false;
}

// ---- event types (eventtypes.ts): the key as 64-bit words, and the first probe of the index ----

/** The key's first word as the first 8 bytes of an entry hold it (TYPE_* offsets). */
@inline function eventTypeKey(provider: u32, eventId: u32, version: u32, opcode: u32, headerType: u32): u64 {
  return <u64>((provider & 0xffff) | (eventId << 16)) | (<u64>((version & 0xffff) | ((opcode & 0xff) << 16) | (headerType << 24)) << 32);
}

/** The task, level and channel as bytes 16..19 of an entry hold them. */
@inline function eventTypeTlc(task: u32, level: u32, channel: u32): u32 {
  return (task & 0xffff) | ((level & 0xff) << 16) | (channel << 24);
}

/**
 * Type of a row with this key (EVENT_TYPE_NONE past MAX_EVENT_TYPES types); counts the row. The
 * first probe is made here: the index stays under half full, so it mostly finds the type. (Trying the
 * last row's type first costs more: types alternate from row to row.)
 */
@inline function eventType(key: u64, keywords: u64, tlc: u32): u32 {
  let slots = STATE.typeSlots;
  if (slots != 0) {
    let v = load<u32>(slots + (<usize>(typeHash64(key, keywords, tlc) & STATE.typeMask) << 2));
    if (v != 0) {
      let p = STATE.typeTable + <usize>(v - 1) * TYPE_STRIDE;
      if (load<u64>(p) == key && load<u64>(p, TYPE_KEYWORDS) == keywords && load<u32>(p, TYPE_TASK) == tlc) {
        store<u32>(p + TYPE_ROWS, load<u32>(p + TYPE_ROWS) + 1);
        return v - 1;
      }
    }
  }
  return findType(STATE, <u32>key, <u32>(key >> 32), <u32>keywords, <u32>(keywords >> 32), tlc);
}

/**
 * The decode-time filter, asked once per record while a filter is in force (STATE.filterFlags != 0):
 * true when the record takes no row. Its extended items, written before the row, are dropped with it.
 * The first row (the logfile header record) is always kept.
 */
function filteredOut(
  ts: i64, keywords: u64, pid: u32, tid: u32, provider: i32, eventId: u32, flags: u32, opcode: u32, level: u32,
): bool {
  if (STATE.rowCount == 0 && STATE.rowBase == 0) return false;
  let f = STATE.filterFlags;
  let out = false;
  if ((f & FF_PROVIDER) != 0 && (provider < 0 || load<u8>(STATE.provTable + <usize>provider * PROV_STRIDE + PROV_WANTED) == 0)) out = true;
  else if ((f & FF_EVENT_ID) != 0 && !inSet(FILTER_EVENT_ID_COUNT, FILTER_EVENT_IDS, eventId)) out = true;
  else if ((f & FF_OPCODE) != 0 && !inSet(FILTER_OPCODE_COUNT, FILTER_OPCODES, opcode)) out = true;
  else if ((f & FF_LEVEL) != 0 && level > load<u32>(FILTER_BLOCK + FILTER_LEVEL)) out = true;
  else if ((f & FF_KEYWORDS) != 0 && (keywords & load<u64>(FILTER_BLOCK + FILTER_KEYWORDS)) == 0) out = true;
  else if ((f & (FF_PID | FF_TID)) != 0 && (flags & F_NO_PROCESS_INFO) != 0) out = true;
  else if ((f & FF_PID) != 0 && !inSet(FILTER_PID_COUNT, FILTER_PIDS, pid)) out = true;
  else if ((f & FF_TID) != 0 && !inSet(FILTER_TID_COUNT, FILTER_TIDS, tid)) out = true;
  else if ((f & FF_FROM) != 0 && ts < load<i64>(FILTER_BLOCK + FILTER_FROM)) out = true;
  else if ((f & FF_TO) != 0 && ts > load<i64>(FILTER_BLOCK + FILTER_TO)) out = true;
  if (out) {
    // extended items of this record carry the row it would have taken
    let e = STATE.extCount;
    while (e > 0 && load<u32>(STATE.colExtRow + (<usize>(e - 1) << 2)) == STATE.rowCount) e--;
    STATE.extCount = e;
  }
  return out;
}

// ---- rows: with fixed columns (tables.ts FIXED_*) a row is written through one base address with
// constant offsets; otherwise through each column's own address. A row with a typed table goes into its
// schema event's bucket of row indices (noteTyped); a bucket goes to its table in one loop over its rows
// (clr-fill.ts), which reads each payload where the row says.
@inline function emit(
  rec: usize, headerLength: u32, size: u32, ts: i64, keywords: u64, pid: u32, tid: u32, provider: i32,
  eventId: u32, task: u32, flags: u32, version: u32, opcode: u32, level: u32, headerType: u32,
  channel: u32,
): void {
  // the row is committed here or nowhere: one branch per record without a filter
  if (STATE.filterFlags != 0 && filteredOut(ts, keywords, pid, tid, provider, eventId, flags, opcode, level)) return;
  let key = eventTypeKey(<u32>provider, eventId, version, opcode, headerType);
  let tlc = eventTypeTlc(task, level, channel);
  let type = eventType(key, keywords, tlc);
  let r = <usize>STATE.rowCount;
  let fb = STATE.fixedBlock;
  if (fb != 0) {
    let a8 = fb + (r << 3), a4 = fb + (r << 2), a2 = fb + (r << 1), a1 = fb + r;
    store<i64>(a8, ts, FIXED_TIMESTAMP);
    store<u32>(a4, pid, FIXED_PID);
    store<u32>(a4, tid, FIXED_TID);
    store<u32>(a4, <u32>(rec + headerLength), FIXED_PAYLOAD_OFFSET);
    store<u16>(a2, <u16>(size - headerLength), FIXED_PAYLOAD_LENGTH);
    store<u16>(a2, <u16>headerLength, FIXED_HEADER_LENGTH);
    store<u16>(a2, <u16>flags, FIXED_FLAGS);
    store<u16>(a2, <u16>type, FIXED_EVENT_TYPE);
    store<u8>(a1, <u8>headerType, FIXED_HEADER_TYPE);
  } else {
    store<i64>(STATE.colTimestamp + (r << 3), ts);
    store<u32>(STATE.colPid + (r << 2), pid);
    store<u32>(STATE.colTid + (r << 2), tid);
    store<u32>(STATE.colPayloadOffset + (r << 2), <u32>(rec + headerLength));
    store<u16>(STATE.colPayloadLength + (r << 1), <u16>(size - headerLength));
    store<u16>(STATE.colHeaderLength + (r << 1), <u16>headerLength);
    store<u16>(STATE.colFlags + (r << 1), <u16>flags);
    store<u16>(STATE.colEventType + (r << 1), <u16>type);
    store<u8>(STATE.colHeaderType + r, <u8>headerType);
  }
  // Provider, event id, version, opcode, keywords, task, level and channel are the event type's (its
  // struct holds them): stored only for a row without one, past the type table's MAX_EVENT_TYPES (the
  // bindings read the rest there).
  if (type == EVENT_TYPE_NONE) {
    store<u16>(STATE.colProvider + (r << 1), <u16>provider);
    store<u16>(STATE.colEventId + (r << 1), <u16>eventId);
    store<u16>(STATE.colVersion + (r << 1), <u16>version);
    store<u8>(STATE.colOpcode + r, <u8>opcode);
    store<u64>(STATE.colKeywords + (r << 3), keywords);
    store<u16>(STATE.colTask + (r << 1), <u16>task);
    store<u8>(STATE.colLevel + r, <u8>level);
    store<u8>(STATE.colChannel + r, <u8>channel);
  }
  STATE.rowCount = STATE.rowCount + 1;
  // its typed table, if the record is a .NET runtime event the schema knows
  if (clrOn) {
    let t = typeClr(STATE, type, <u32>key, <u32>(key >> 32));
    if (t >= 0) noteTyped(t, <u32>r);
  }
}

// A schema event met since the last fill has a slot (at most TYPED_SLOTS): a bucket of up to TYPED_BUCKET
// row indices (u32), in row order. A full bucket goes to its table; all of them when the slots run out
// and at each buffer's end.
const TYPED_SLOTS: u32 = 64;
const TYPED_BUCKET: u32 = 64;
let buckets: usize = 0;
let slotOf: usize = 0; // u16 per schema event: its slot + 1, 0: none
let slotType: usize = 0; // u16 schema event of each slot
let slotFill: usize = 0; // u32 rows in each slot's bucket
let slotsUsed: u32 = 0;

/**
 * The slots for `nTypes` schema events, taken from the heap once the typed tables are turned on (static
 * data would put their zeros into etw.wasm); false when memory is exhausted.
 */
export function typedBuckets(nTypes: u32): bool {
  if (buckets != 0) return true;
  let b = allocate(STATE, <usize>(TYPED_SLOTS * TYPED_BUCKET) << 2);
  let o = allocate(STATE, <usize>nTypes << 1);
  let t = allocate(STATE, <usize>TYPED_SLOTS << 1);
  let f = allocate(STATE, <usize>TYPED_SLOTS << 2);
  if (b == 0 || o == 0 || t == 0 || f == 0) {
    release(STATE, b);
    release(STATE, o);
    release(STATE, t);
    release(STATE, f);
    return false;
  }
  memory.fill(o, 0, <usize>nTypes << 1);
  memory.fill(f, 0, <usize>TYPED_SLOTS << 2);
  buckets = b;
  slotOf = o;
  slotType = t;
  slotFill = f;
  slotsUsed = 0;
  return true;
}

// Added to the references of the typed rows the buckets fill (0: none; fillPlacedRows's staged block).
let typedDelta: u32 = 0;

/** Rows `list[0 … n-1]` of schema event `t` to its table, their references moved by typedDelta. */
@inline function fillBucket(t: i32, list: usize, n: u32): void {
  let d = clrEntry(t);
  if (typedDelta == 0) {
    fillClrRows(t, d, list, n);
    return;
  }
  let before = load<u32>(d, CLR_DIR_COUNT);
  fillClrRows(t, d, list, n);
  clr.clrMoveRefs(t, d, before, load<u32>(d, CLR_DIR_COUNT), typedDelta);
}

/** Notes row `r` of schema event `t`; its bucket goes to the table when full. */
@inline function noteTyped(t: i32, r: u32): void {
  let so = slotOf + (<usize>t << 1);
  let s = <u32>load<u16>(so);
  if (s == 0) {
    if (slotsUsed == TYPED_SLOTS) fillTyped();
    s = ++slotsUsed;
    store<u16>(so, <u16>s);
    store<u16>(slotType + (<usize>(s - 1) << 1), <u16>t);
  }
  let c = slotFill + (<usize>(s - 1) << 2);
  let k = load<u32>(c);
  let list = buckets + <usize>(s - 1) * (<usize>TYPED_BUCKET << 2);
  store<u32>(list + (<usize>k << 2), r);
  k++;
  if (k == TYPED_BUCKET) {
    fillBucket(t, list, k);
    k = 0;
  }
  store<u32>(c, k);
}

/** Every slot's bucket to its table; the slots are free again. */
function fillTyped(): void {
  for (let s: u32 = 0; s < slotsUsed; s++) {
    let t = <i32>load<u16>(slotType + (<usize>s << 1));
    let c = slotFill + (<usize>s << 2);
    let n = load<u32>(c);
    if (n > 0) fillBucket(t, buckets + <usize>s * (<usize>TYPED_BUCKET << 2), n);
    store<u32>(c, 0);
    store<u16>(slotOf + (<usize>t << 1), 0);
  }
  slotsUsed = 0;
}

// Rows that are not a record walk's are filled a chunk at a time, each chunk's rows of one schema event
// in one call of its fill: their payloads are then near one another, as a record walk's buckets are (one
// call per schema event over a whole 64 MiB store took 120 ns an event, a payload missing the cache each).
const FILL_CHUNK: u32 = 4096;

/**
 * The typed tables of `rows` rows that are not a record walk's (an EventPipe file's rows), from columns the
 * caller placed: provider (u16), header type (u8), event id and version (u16), payload offset (u32,
 * an address) and length (u16). `provClr` holds an i8 per provider (`nProv`): its .NET runtime provider
 * index, or -1. Each schema event's rows go to its table in row order. Returns the rows placed
 * (STATE.clrRows; STATE.clrMissing counts those memory could not take).
 */
export function fillRowsOf(
  provClr: usize, nProv: u32, rows: u32, provider: usize, headerType: usize, eventId: usize, version: usize,
  payloadOffset: usize, payloadLength: usize,
): u32 {
  let nTypes = STATE.clrTypes;
  if (rows == 0 || nTypes == 0) return 0;
  // per schema event: its rows in the chunk, then where they go in `list`; the events met in the chunk
  let count = allocate(STATE, <usize>nTypes << 2);
  let at = allocate(STATE, <usize>nTypes << 2);
  let met = allocate(STATE, <usize>FILL_CHUNK << 2);
  let eventOf = allocate(STATE, <usize>FILL_CHUNK << 2);
  let list = allocate(STATE, <usize>FILL_CHUNK << 2);
  if (count == 0 || at == 0 || met == 0 || eventOf == 0 || list == 0) {
    release(STATE, count);
    release(STATE, at);
    release(STATE, met);
    release(STATE, eventOf);
    release(STATE, list);
    STATE.clrMissing += rows;
    return 0;
  }
  memory.fill(count, 0, <usize>nTypes << 2);
  STATE.colPayloadOffset = payloadOffset;
  STATE.colPayloadLength = payloadLength;
  STATE.colHeaderType = headerType;
  for (let c: u32 = 0; c < rows; c += FILL_CHUNK) {
    let end = min<u32>(rows, c + FILL_CHUNK);
    let nMet: u32 = 0;
    for (let r = c; r < end; r++) {
      let prov = <u32>load<u16>(provider + (<usize>r << 1));
      let p = prov < nProv ? <i32>load<i8>(provClr + prov) : -1;
      let t = p < 0 ? -1 : clr.clrEventOf(STATE, p, load<u8>(headerType + r), load<u16>(eventId + (<usize>r << 1)), load<u16>(version + (<usize>r << 1)));
      store<i32>(eventOf + (<usize>(r - c) << 2), t);
      if (t < 0) continue;
      let k = count + (<usize>t << 2);
      let n = load<u32>(k);
      if (n == 0) {
        store<u32>(met + (<usize>nMet << 2), <u32>t);
        nMet++;
      }
      store<u32>(k, n + 1);
    }
    // each event's rows one after another in `list`, in row order
    let from: u32 = 0;
    for (let m: u32 = 0; m < nMet; m++) {
      let t = <usize>load<u32>(met + (<usize>m << 2));
      store<u32>(at + (t << 2), from);
      from += load<u32>(count + (t << 2));
    }
    for (let r = c; r < end; r++) {
      let t = load<i32>(eventOf + (<usize>(r - c) << 2));
      if (t < 0) continue;
      let a = at + (<usize>t << 2);
      let k = load<u32>(a);
      store<u32>(list + (<usize>k << 2), r);
      store<u32>(a, k + 1);
    }
    for (let m: u32 = 0; m < nMet; m++) {
      let t = load<u32>(met + (<usize>m << 2));
      let n = load<u32>(count + (<usize>t << 2));
      // (`at` has moved on to the event's last row + 1)
      let first = load<u32>(at + (<usize>t << 2)) - n;
      fillClrRows(<i32>t, clrEntry(<i32>t), list + (<usize>first << 2), n);
      store<u32>(count + (<usize>t << 2), 0);
    }
  }
  release(STATE, count);
  release(STATE, at);
  release(STATE, met);
  release(STATE, eventOf);
  release(STATE, list);
  return STATE.clrRows;
}

/** The schema event of window row `k` (fillPlacedRows's), -1: none. */
@inline function placedType(md: usize, k: u32, mdClr: usize, nMd: u32): i32 {
  let m = load<i32>(md + (<usize>k << 2));
  return m >= 0 && <u32>m < nMd ? <i32>load<i16>(mdClr + (<usize>m << 1)) : -1;
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
 * (STATE.clrRows), as fillRowsOf.
 */
export function fillPlacedRows(cols: usize, stride: usize, first: u32, rows: u32, mdClr: usize, nMd: u32, bias: u32, delta: u32, headerType: u32): u32 {
  if (rows == 0 || STATE.clrTypes == 0 || buckets == 0) return STATE.clrRows;
  let n = <usize>rows;
  // (payload address and length and the header type, a row each: the columns the fills read)
  let scratch = allocate(STATE, n * 7);
  if (scratch == 0) {
    STATE.clrMissing += rows;
    return STATE.clrRows;
  }
  let address = scratch, length = scratch + (n << 2), ht = scratch + n * 6;
  let md = cols + <usize>NT_METADATA * stride;
  let po = cols + <usize>NT_PAYLOAD_OFFSET * stride + (<usize>first << 2);
  let ps = cols + <usize>NT_PAYLOAD_SIZE * stride + (<usize>first << 2);
  // (the fills read row `first + r` of these columns at their entry r)
  STATE.colPayloadOffset = address - (<usize>first << 2);
  STATE.colPayloadLength = length - (<usize>first << 1);
  STATE.colHeaderType = ht - <usize>first;
  typedDelta = delta;
  // each row of a schema event to its bucket, as a record walk's (a full bucket is filled at once, its
  // rows' columns written; the fills read only their rows' entries)
  for (let r: usize = 0; r < n; r++) {
    let t = placedType(md, first + <u32>r, mdClr, nMd);
    if (t < 0) continue;
    store<u32>(address + (r << 2), load<u32>(po + (r << 2)) - bias);
    store<u16>(length + (r << 1), <u16>min<u32>(load<u32>(ps + (r << 2)), 0xffff));
    store<u8>(ht + r, <u8>headerType);
    noteTyped(t, first + <u32>r);
  }
  fillTyped();
  typedDelta = 0;
  release(STATE, scratch);
  return STATE.clrRows;
}

/**
 * The typed rows fillPlacedRows filled for a window's `n` rows (the window's tables, in file order)
 * put in the window's dispatch order (`order`: u32 per position, the window row there): each table's
 * rows by position, their row indices the positions. False when memory is exhausted (nothing moved).
 */
export function placedReorder(cols: usize, stride: usize, n: u32, order: usize, mdClr: usize, nMd: u32): bool {
  let nTypes = STATE.clrTypes;
  if (n == 0 || nTypes == 0) return true;
  let md = cols + <usize>NT_METADATA * stride;
  // (each row's index among its table's rows in file order; each table's first entry in `src`, `rows`)
  let index = allocate(STATE, <usize>n << 2);
  let start = allocate(STATE, <usize>nTypes << 2);
  let next = allocate(STATE, <usize>nTypes << 2);
  let src = allocate(STATE, <usize>n << 2);
  let rows = allocate(STATE, <usize>n << 2);
  let tmp = allocate(STATE, <usize>n << 3);
  let ok = index != 0 && start != 0 && next != 0 && src != 0 && rows != 0 && tmp != 0;
  if (ok) {
    memory.fill(next, 0, <usize>nTypes << 2);
    for (let k: u32 = 0; k < n; k++) {
      let t = placedType(md, k, mdClr, nMd);
      if (t < 0) continue;
      let c = next + (<usize>t << 2);
      let j = load<u32>(c);
      store<u32>(index + (<usize>k << 2), j);
      store<u32>(c, j + 1);
    }
    let at: u32 = 0;
    for (let t: u32 = 0; t < nTypes; t++) {
      store<u32>(start + (<usize>t << 2), at);
      at += load<u32>(next + (<usize>t << 2));
      store<u32>(next + (<usize>t << 2), 0);
    }
    for (let r: u32 = 0; r < n; r++) {
      let k = load<u32>(order + (<usize>r << 2));
      let t = placedType(md, k, mdClr, nMd);
      if (t < 0) continue;
      let c = next + (<usize>t << 2);
      let e = <usize>(load<u32>(start + (<usize>t << 2)) + load<u32>(c));
      store<u32>(src + (e << 2), load<u32>(index + (<usize>k << 2)));
      store<u32>(rows + (e << 2), r);
      store<u32>(c, load<u32>(c) + 1);
    }
    for (let t: u32 = 0; t < nTypes; t++) {
      let c = load<u32>(next + (<usize>t << 2));
      if (c == 0) continue;
      let s0 = <usize>load<u32>(start + (<usize>t << 2)) << 2;
      clr.clrPermute(<i32>t, clrEntry(<i32>t), src + s0, rows + s0, c, tmp);
    }
  }
  release(STATE, index);
  release(STATE, start);
  release(STATE, next);
  release(STATE, src);
  release(STATE, rows);
  release(STATE, tmp);
  return ok;
}

/** A record whose layout is unknown: kept whole as user data, with the previous timestamp. */
function emitOpaque(rec: usize, pos: u32, size: u32, ts: i64, ht: u32, detail: u32): void {
  recordWarning(W_OPAQUE_RECORD, pos, detail);
  emit(rec, 0, size, ts, 0, NONE32, NONE32, providerNone(STATE), 0, 0,
    F_OPAQUE | F_NO_PROCESS_INFO | F_TIMESTAMP_INHERITED, 0, 0, 0, ht, 0);
}

function recordWarning(code: u32, pos: u32, detail: u32): void {
  warn(STATE, code, ctxFileOffset, ctxBuffer, <i32>(pos + BUFFER_HEADER_SIZE), detail);
}

// The run of records most traces are made of, written by a loop of its own (fewer instructions a record
// than the general walk): EVENT_HEADER records without extended items, of the provider of the record
// before and of an event type seen before, into fixed columns, without a filter. It stops at the first
// record that is not such, which the general walk then takes (and after it, this loop again).
let fastLastTs: i64 = 0;

function walkFast(base: usize, pos: u32, len: u32): u32 {
  let fb = STATE.fixedBlock;
  let r = <usize>STATE.rowCount;
  let slots = STATE.typeSlots;
  let mask = STATE.typeMask;
  let types = STATE.typeTable;
  let provLo = load<u64>(PROVIDER_BLOCK + PROV_LAST);
  let provHi = load<u64>(PROVIDER_BLOCK + PROV_LAST, 8);
  let prov = <u32>STATE.provLast;
  let clr = clrOn;
  let ts: i64 = fastLastTs;
  while (pos + 0x50 <= len) {
    let rec = base + pos;
    let marker = load<u32>(rec);
    // byte 3 0xC0..0xFF (a trace header), header type 0x12 or 0x13 (EVENT_HEADER32, EVENT_HEADER64)
    if ((marker & 0xc0fe0000) != 0xc0120000) break;
    let size = marker & 0xffff;
    if (size < 0x50 || size > len - pos) break;
    let flags = <u32>load<u16>(rec, 4) & F_HEADER_FLAGS_MASK;
    if ((flags & 1) != 0) break; // extended items
    if (load<u64>(rec, 0x18) != provLo || load<u64>(rec, 0x20) != provHi) break;
    let ht = (marker >> 16) & 0xff;
    // EVENT_DESCRIPTOR: id u16, version u8, channel u8, level u8, opcode u8, task u16
    let d = load<u64>(rec, 0x28);
    let id = <u32>d & 0xffff;
    let version = <u32>(d >> 16) & 0xff;
    let opcode = <u32>(d >> 40) & 0xff;
    let key = <u64>(prov | (id << 16)) | (<u64>(version | (opcode << 16) | (ht << 24)) << 32);
    let keywords = load<u64>(rec, 0x30);
    let tlc = <u32>(d >> 48) | (<u32>(d >> 16) & 0xff0000) | (<u32>d & 0xff000000); // task, level, channel
    let v = load<u32>(slots + (<usize>(typeHash64(key, keywords, tlc) & mask) << 2));
    if (v == 0) break;
    let te = types + <usize>(v - 1) * TYPE_STRIDE;
    if (load<u64>(te) != key || load<u64>(te, TYPE_KEYWORDS) != keywords || load<u32>(te, TYPE_TASK) != tlc) break;
    store<u32>(te + TYPE_ROWS, load<u32>(te + TYPE_ROWS) + 1);
    ts = load<i64>(rec, 0x10);
    let tp = load<u64>(rec, 8); // ThreadId, then ProcessId
    let a8 = fb + (r << 3), a4 = fb + (r << 2), a2 = fb + (r << 1), a1 = fb + r;
    store<i64>(a8, ts, FIXED_TIMESTAMP);
    store<u32>(a4, <u32>(tp >> 32), FIXED_PID);
    store<u32>(a4, <u32>tp, FIXED_TID);
    store<u32>(a4, <u32>(rec + 0x50), FIXED_PAYLOAD_OFFSET);
    store<u16>(a2, <u16>(size - 0x50), FIXED_PAYLOAD_LENGTH);
    store<u16>(a2, 0x50, FIXED_HEADER_LENGTH);
    store<u16>(a2, <u16>flags, FIXED_FLAGS);
    store<u16>(a2, <u16>(v - 1), FIXED_EVENT_TYPE);
    store<u8>(a1, <u8>ht, FIXED_HEADER_TYPE);
    if (clr) {
      let t = <i32>load<i16>(te + TYPE_CLR);
      if (t >= 0) noteTyped(t, <u32>r);
    }
    r++;
    pos += (size + 7) & ~7;
  }
  STATE.rowCount = <u32>r;
  fastLastTs = ts;
  return pos;
}

/**
 * Walks `len` bytes of records at `base` (buffer offset 0x48). Records without a timestamp of their
 * own take the previous record's (the buffer's for the first).
 */
export function walkRecords(
  m: Mem, base: usize, len: u32, timestampAt: usize, fileOffset: f64, bufferIndex: i32,
): void {
  ctxFileOffset = fileOffset;
  ctxBuffer = bufferIndex;
  STATE.walkAbandoned = false;
  let lastTs = load<i64>(timestampAt); // the buffer's
  let pos: u32 = 0;
  let fast = STATE.fixedBlock != 0 && STATE.filterFlags == 0;
  while (pos + 4 <= len) {
    let rec = base + pos;
    let marker = load<u32>(rec);
    if (fast && (marker & 0xc0fe0000) == 0xc0120000) {
      fastLastTs = lastTs;
      let next = walkFast(base, pos, len);
      if (next != pos) {
        pos = next;
        lastTs = fastLastTs;
        continue;
      }
    }
    if (marker == 0xffffffff || marker == 0) break; // padding
    let remaining = len - pos;
    let b3 = marker >> 24;
    let ht = (marker >> 16) & 0xff;
    let size: u32 = 0;
    let fixed: u32 = 0;

    if ((b3 & 0xc0) == 0xc0 && ht != 0) {
      // ---- fixed-layout trace headers ----
      if (ht <= 4 || ht == 0x10 || ht == 0x11) {
        // system family: SYSTEM (0x20), COMPACT (0x18), PERFINFO (0x10)
        fixed = ht <= 2 ? 0x20 : ht <= 4 ? 0x18 : 0x10;
        if (remaining < 8) { recordWarning(W_RECORD_OVERRUNS, pos, remaining); break; }
        size = <u32>load<u16>(rec, 4);
        let ver = marker & 0xffff;
        // PEBS index and PMC counters sit between the fixed header and the payload.
        let hl = fixed + ((ver & 0x8000) != 0 ? 8 : 0) + (((ver >> 8) & 7) << 3);
        if (size == 0) { recordWarning(W_RECORD_SIZE_ZERO, pos, marker); break; }
        if (size < hl) { recordWarning(W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
        let hook = <u32>load<u16>(rec, 6);
        let prov = providerByHook(STATE, hook);
        let ts: i64;
        let pid = NONE32;
        let tid = NONE32;
        let flags: u32 = 0;
        if (fixed == 0x10) {
          ts = load<i64>(rec, 8);
          flags = F_NO_PROCESS_INFO;
        } else {
          tid = load<u32>(rec, 8);
          pid = load<u32>(rec, 12);
          ts = load<i64>(rec, 16);
        }
        lastTs = ts;
        emit(rec, hl, size, ts, 0, pid, tid, prov, 0, 0, flags, ver & 0xff, hook & 0xff, 0, ht, 0);
      } else if (ht == 0x12 || ht == 0x13) {
        // EVENT_HEADER (0x50) with optional extended items
        size = marker & 0xffff;
        if (size == 0) { recordWarning(W_RECORD_SIZE_ZERO, pos, marker); break; }
        if (size < 0x50) { recordWarning(W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
        let flags = <u32>load<u16>(rec, 4) & F_HEADER_FLAGS_MASK;
        let hl: u32 = 0x50;
        if ((flags & 1) != 0) {
          // Items are inline: u16 item size, u16 type, u16 linkage bit, u16 data size, data, pad to 8.
          let n: u32 = 0;
          let firstExt = STATE.extCount;
          if (!ensureExt(STATE, MAX_EXT_ITEMS)) { flags |= F_EXT_MALFORMED; }
          else {
            while (true) {
              if (n >= <u32>MAX_EXT_ITEMS || hl + 8 > size) { flags |= F_EXT_MALFORMED; break; }
              let item = rec + hl;
              let extType = <u32>load<u16>(item, 2);
              let link = <u32>load<u16>(item, 4);
              let dataSize = <u32>load<u16>(item, 6);
              if (hl + 8 + dataSize > size) { flags |= F_EXT_MALFORMED; break; }
              let e = <usize>(firstExt + n);
              store<u32>(STATE.colExtRow + (e << 2), STATE.rowCount);
              store<u16>(STATE.colExtType + (e << 1), <u16>extType);
              store<u16>(STATE.colExtSize + (e << 1), <u16>dataSize);
              store<u32>(STATE.colExtOffset + (e << 2), <u32>(item + 8));
              n++;
              hl += (8 + dataSize + 7) & ~7;
              if ((link & 1) == 0) break;
            }
            // The last stride may pad past the record end: user data is then empty.
            if (hl > size) hl = size;
            STATE.extCount = firstExt + n;
          }
          if ((flags & F_EXT_MALFORMED) != 0) recordWarning(W_EXT_ITEMS_MALFORMED, pos, n);
        }
        let ts = load<i64>(rec, 0x10);
        lastTs = ts;
        let g0 = load<u64>(rec, 0x18), g1 = load<u64>(rec, 0x20);
        let prov = g0 == load<u64>(PROVIDER_BLOCK + PROV_LAST) && g1 == load<u64>(PROVIDER_BLOCK + PROV_LAST, 8) && STATE.provLast >= 0
          ? STATE.provLast : providerByGuid(STATE, rec + 0x18, PK_GUID, 0xffff);
        emit(
          rec, hl, size, ts, load<u64>(rec, 0x30), load<u32>(rec, 0x0c), load<u32>(rec, 0x08), prov,
          <u32>load<u16>(rec, 0x28), <u32>load<u16>(rec, 0x2e), flags, <u32>load<u8>(rec, 0x2a),
          <u32>load<u8>(rec, 0x2d), <u32>load<u8>(rec, 0x2c), ht, <u32>load<u8>(rec, 0x2b),
        );
      } else if (ht == 0x0a || ht == 0x14 || ht == 0x0b || ht == 0x15) {
        // classic EVENT_TRACE_HEADER (0x30) and EVENT_INSTANCE_GUID_HEADER (0x48)
        fixed = (ht == 0x0a || ht == 0x14) ? 0x30 : 0x48;
        size = marker & 0xffff;
        if (size == 0) { recordWarning(W_RECORD_SIZE_ZERO, pos, marker); break; }
        if (size < fixed) { recordWarning(W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
        let ts = load<i64>(rec, 0x10);
        lastTs = ts;
        let prov = providerByGuid(STATE, rec + 0x18, PK_GUID, 0xffff);
        emit(
          rec, fixed, size, ts, 0, load<u32>(rec, 0x0c), load<u32>(rec, 0x08), prov, 0, 0, 0,
          <u32>load<u16>(rec, 6), <u32>load<u8>(rec, 4), <u32>load<u8>(rec, 5), ht, 0,
        );
      } else {
        // TIMED, ERROR, WNODE and unknown layouts: Size at offset 0, kept whole as an opaque record.
        size = marker & 0xffff;
        if (size < 4) { recordWarning(W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
        emitOpaque(rec, pos, size, lastTs, ht, ht);
      }
    } else if ((b3 & 0xf0) == 0x90) {
      // ---- WPP MESSAGE_TRACE_HEADER with optional fields in fixed order ----
      size = marker & 0xffff;
      if (size < 8) { recordWarning(size == 0 ? W_RECORD_SIZE_ZERO : W_RECORD_TOO_SMALL, pos, size); break; }
      if (size > remaining) { recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
      let options = <u32>load<u16>(rec, 6);
      let hl: u32 = 8;
      let flags = options & F_HEADER_FLAGS_MASK;
      let prov: i32 = -1;
      let ts = lastTs;
      let pid = NONE32;
      let tid = NONE32;
      let fits = true;
      if ((options & 0x01) != 0) { if (hl + 4 <= size) hl += 4; else fits = false; }
      if (fits && (options & 0x02) != 0) {
        if (hl + 16 <= size) {
          prov = providerByGuid(STATE, rec + hl, PK_GUID, 0xffff);
          hl += 16;
        } else fits = false;
      } else if (fits && (options & 0x04) != 0) {
        if (hl + 4 <= size) hl += 4; else fits = false;
      }
      let hasTs = false;
      if (fits && (options & 0x08) != 0) {
        if (hl + 8 <= size) { ts = load<i64>(rec + hl); hl += 8; hasTs = true; } else fits = false;
      }
      let hasInfo = false;
      if (fits && (options & 0x20) != 0) {
        if (hl + 8 <= size) { tid = load<u32>(rec + hl); pid = load<u32>(rec + hl, 4); hl += 8; hasInfo = true; }
        else fits = false;
      }
      if (!fits) recordWarning(W_MESSAGE_TRUNCATED, pos, options);
      if (prov < 0) prov = providerNone(STATE);
      if (hasTs) lastTs = ts; else flags |= F_TIMESTAMP_INHERITED;
      if (!hasInfo) flags |= F_NO_PROCESS_INFO;
      emit(rec, hl, size, ts, 0, pid, tid, prov, <u32>load<u16>(rec, 4), 0, flags, 0, 0, 0, HT_MESSAGE, 0);
    } else if ((b3 & 0x80) != 0) {
      // Unknown trace header: skip it whole when its size is plausible.
      size = marker & 0xffff;
      if (size < 4) { recordWarning(W_RECORD_TOO_SMALL, pos, size); break; }
      if (size > remaining) { recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
      emitOpaque(rec, pos, size, lastTs, ht, marker);
    } else {
      recordWarning(W_CORRUPT_MARKER, pos, marker);
      break;
    }
    pos += (size + 7) & ~7;
  }
  STATE.walkAbandoned = pos + 4 <= len && load<u32>(base + pos) != 0xffffffff && load<u32>(base + pos) != 0;
  fillTyped();
}
