// Typed tables for .NET runtime events: one struct-of-arrays block per (provider, id, version), one
// column per top-level field. Numbers are stored by value; strings, GUIDs, binary blobs and arrays as
// references (offset, length or count) into the record bytes. The record walk (records.ts) fills a
// record's row as it writes the record's event row: through the generated fast path of its schema
// event (clr-fill.ts), or through the field program walked here, which is the reference.
//
// The field program comes from the bindings (bindings/schema/clr-program.ts), as u16 words laid out as
// the CLR_TYPE_*, CLR_FIXED_*, CLR_FIELD_*, CLR_STRUCT_* and CLR_FLAG_* words of codes.ts say. Columns
// are ordered by width, widest first, so every column of a block is naturally aligned. A block holds
// CLR_DIR_CAP rows: column k starts at block + cap * pre(k).

import {
  T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_U64, T_I64, T_F32, T_F64, T_BOOL, T_PTR, T_GUID, T_FILETIME,
  T_SYSTEMTIME, T_USTR, T_ASTR, T_BINARY, T_STRUCT, HT_EVENT_HEADER32, HT_EVENT_HEADER64, CLR_DIR_STRIDE,
  CLR_DIR_COUNT, CLR_DIR_BLOCK, CLR_DIR_CAP, CLR_MAX_ID, CLR_VERSIONS, CLR_STATUS_TRUNCATED,
  CLR_TYPE_ROW_BYTES, CLR_TYPE_PRE_ROW, CLR_TYPE_PRE_STATUS, CLR_TYPE_FIELDS, CLR_TYPE_WORDS, CLR_TYPE_FIXED,
  CLR_FIXED_WORDS, CLR_FIELD_KIND, CLR_FIELD_PRE_A, CLR_FIELD_PRE_B, CLR_FIELD_REF, CLR_FIELD_LEN, CLR_STRUCT_SUBS,
  CLR_STRUCT_SIZE32, CLR_STRUCT_SIZE64, CLR_STRUCT_WORDS, CLR_FLAGS_SHIFT, CLR_KIND_MASK, CLR_FLAG_COUNT_FIELD,
  CLR_FLAG_COUNT_LITERAL, CLR_FLAG_PADDED_STRUCT, CLR_NOT_STORED, CLR_SCOPE_VALUES, CLR_MAX_DEPTH,
} from "./codes";
import { allocate, release, clrInit } from "./tables";
import * as tables from "./tables";
import { Mem, STATE, memoryLimited } from "./memory-access";


// values of the fields of the scope being walked, for count and length references (u64, by depth)
const scope: usize = memory.data((CLR_MAX_DEPTH + 1) * CLR_SCOPE_VALUES * 8);

let truncated = false;

// The field program and lookups (setClr), in memory the bindings placed.
let program: usize = 0;
let typeStarts: usize = 0;
let lookup: usize = 0; // i16 per (CLR provider, id < CLR_MAX_ID, version < CLR_VERSIONS): schema event, -1 none
export let clrGuids: usize = 0; // 16 bytes per CLR provider, in memory order
export let clrGuidCount: u32 = 0;

/**
 * Turns the typed tables on: the field program (`words`), each schema event's first word
 * (`starts`, u32), the (provider, id, version) lookup and the CLR providers' GUIDs. Returns false
 * when memory is exhausted. (index.ts first checks that the program is the one the fast paths of
 * clr-fill.ts were generated for.)
 */
export function setClr(words: usize, starts: usize, nTypes: u32, table: usize, guids: usize, nGuids: u32): bool {
  if (!clrInit(STATE, nTypes)) return false;
  program = words;
  typeStarts = starts;
  lookup = table;
  clrGuids = guids;
  clrGuidCount = nGuids;
  STATE.clrOn = true;
  return true;
}

/** The CLR provider index of the GUID at `guid` (16 bytes), -1 for others. */
export function clrProviderOf(m: Mem, guid: usize): i32 {
  let lo = load<u64>(guid), hi = load<u64>(guid, 8);
  for (let i: u32 = 0; i < clrGuidCount; i++) {
    let g = clrGuids + (<usize>i << 4);
    if (load<u64>(g) == lo && load<u64>(g, 8) == hi) return <i32>i;
  }
  return -1;
}

/** The schema event of rows of (CLR provider `p`, header type, id, version), -1 when none. */
export function clrEventOf(m: Mem, p: i32, headerType: u32, id: u32, version: u32): i32 {
  if (p < 0 || !m.clrOn) return -1;
  if (headerType != HT_EVENT_HEADER32 && headerType != HT_EVENT_HEADER64) return -1;
  if (id >= <u32>CLR_MAX_ID) return -1;
  let v = min<u32>(version, CLR_VERSIONS - 1);
  return <i32>load<i16>(lookup + ((((<usize>p * CLR_MAX_ID + id) * CLR_VERSIONS) + v) << 1));
}

@inline function prog(t: i32): usize {
  return program + (<usize>load<u32>(typeStarts + (<usize>t << 2)) << 1);
}

@inline function fixedSize(kind: u32, ptr: u32): u32 {
  if (kind == T_U8 || kind == T_I8) return 1;
  if (kind == T_U16 || kind == T_I16) return 2;
  if (kind == T_U32 || kind == T_I32 || kind == T_BOOL || kind == T_F32) return 4;
  if (kind == T_U64 || kind == T_I64 || kind == T_F64 || kind == T_FILETIME) return 8;
  if (kind == T_PTR) return ptr;
  if (kind == T_GUID || kind == T_SYSTEMTIME) return 16;
  return 0;
}

/** Column width of a stored value kind (pointers are stored in 8 bytes). */
@inline function valueWidth(kind: u32): u32 {
  return kind == T_PTR ? 8 : fixedSize(kind, 8);
}

/** Whether a top-level field is stored as a reference (offset, and length or count). */
@inline function isRefField(kind: u32, flags: u32): bool {
  let isArray = (flags & (CLR_FLAG_COUNT_FIELD | CLR_FLAG_COUNT_LITERAL)) != 0 && kind != T_BINARY;
  return isArray || kind == T_GUID || kind == T_SYSTEMTIME || kind >= <u32>T_USTR;
}

/**
 * Position of the first zero UTF-16 unit at or after `q` (by two-byte steps), or where the units end
 * before `end` (then no unit of the rest is zero).
 */
export function scanUtf16(q: usize, end: usize): usize {
  // eight units at a time: a lane mask of the zero units
  let zero = i16x8.splat(0);
  while (q + 16 <= end) {
    let m = i16x8.bitmask(i16x8.eq(v128.load(q), zero));
    if (m != 0) return q + (<usize>ctz<u32>(m) << 1);
    q += 16;
  }
  while (q + 2 <= end && load<u16>(q) != 0) q += 2;
  return q;
}

/** Position of the first zero byte at or after `q`, or `end`. */
export function scanAnsi(q: usize, end: usize): usize {
  let zero = i8x16.splat(0);
  while (q + 16 <= end) {
    let m = i8x16.bitmask(i8x16.eq(v128.load(q), zero));
    if (m != 0) return q + <usize>ctz<u32>(m);
    q += 16;
  }
  while (q < end && load<u8>(q) != 0) q++;
  return q;
}

/**
 * Walks `n` fields at program address `p0` over the payload from `pos` to `end`. With `base` != 0
 * it stores the values of row `row` of a block of `cap` rows. Returns the position after the fields.
 */
function walk(p0: usize, n: u32, pos: usize, end: usize, ptr: u32, base: usize, cap: usize, row: usize, depth: u32): usize {
  let vals = scope + <usize>depth * (CLR_SCOPE_VALUES << 3);
  let p = p0;
  for (let f: u32 = 0; f < n; f++) {
    let w0 = <u32>load<u16>(p, CLR_FIELD_KIND << 1);
    let kind = w0 & CLR_KIND_MASK;
    let flags = w0 >> CLR_FLAGS_SHIFT;
    let preA = <u32>load<u16>(p, CLR_FIELD_PRE_A << 1);
    let preB = <u32>load<u16>(p, CLR_FIELD_PRE_B << 1);
    let ref = <u32>load<u16>(p, CLR_FIELD_REF << 1);
    let words = <usize>load<u16>(p, CLR_FIELD_LEN << 1);
    let a: usize = 0;
    let b: u64 = 0;
    let value: u64 = 0;
    let n_: u64 = 1;
    if ((flags & CLR_FLAG_COUNT_FIELD) != 0) n_ = ref < <u32>CLR_SCOPE_VALUES ? load<u64>(vals + (<usize>ref << 3)) : 0;
    else if ((flags & CLR_FLAG_COUNT_LITERAL) != 0) n_ = <u64>ref;
    let isArray = (flags & (CLR_FLAG_COUNT_FIELD | CLR_FLAG_COUNT_LITERAL)) != 0 && kind != T_BINARY;

    if (kind == T_USTR) {
      a = pos;
      let q = scanUtf16(pos, end);
      b = <u64>(q - pos);
      if (q + 2 <= end) pos = q + 2;
      else { pos = end; truncated = true; }
      if (b == 0 && a >= end) { truncated = true; return pos; }
    } else if (kind == T_ASTR) {
      a = pos;
      let q = scanAnsi(pos, end);
      b = <u64>(q - pos);
      if (q < end) pos = q + 1;
      else { pos = end; truncated = true; }
      if (b == 0 && a >= end) { truncated = true; return pos; }
    } else if (kind == T_BINARY) {
      if (<u64>pos + n_ > <u64>end) { truncated = true; return pos; }
      a = pos;
      b = n_;
      pos += <usize>n_;
    } else if (kind == T_STRUCT) {
      let nSub = <u32>load<u16>(p, CLR_STRUCT_SUBS << 1);
      a = pos;
      b = n_;
      if ((flags & CLR_FLAG_PADDED_STRUCT) != 0) {
        let size = <u64>(ptr == 4 ? load<u16>(p, CLR_STRUCT_SIZE32 << 1) : load<u16>(p, CLR_STRUCT_SIZE64 << 1));
        if (<u64>pos + size * n_ > <u64>end) { truncated = true; return pos; }
        pos += <usize>(size * n_);
      } else {
        if (depth >= <u32>CLR_MAX_DEPTH) { truncated = true; return pos; }
        let sub = p + (CLR_STRUCT_WORDS << 1);
        for (let k: u64 = 0; k < n_; k++) {
          let before = pos;
          pos = walk(sub, nSub, pos, end, ptr, 0, 0, 0, depth + 1);
          if (truncated) return pos;
          if (pos == before) break; // empty elements: nothing more to walk
        }
      }
    } else {
      let size = fixedSize(kind, ptr);
      if (isArray) {
        if (<u64>pos + <u64>size * n_ > <u64>end) { truncated = true; return pos; }
        a = pos;
        b = n_;
        pos += <usize>(<u64>size * n_);
      } else {
        if (pos + size > end) { truncated = true; return pos; }
        if (kind == T_GUID || kind == T_SYSTEMTIME) {
          a = pos;
        } else if (size == 1) value = kind == T_I8 ? <u64>load<i8>(pos) : <u64>load<u8>(pos);
        else if (size == 2) value = kind == T_I16 ? <u64>load<i16>(pos) : <u64>load<u16>(pos);
        else if (size == 4) value = kind == T_I32 ? <u64>load<i32>(pos) : <u64>load<u32>(pos);
        else value = load<u64>(pos);
        pos += size;
      }
    }
    if (f < <u32>CLR_SCOPE_VALUES) store<u64>(vals + (<usize>f << 3), isArray || kind >= <u32>T_GUID ? b : value);

    if (base != 0 && preA != <u32>CLR_NOT_STORED) {
      if (isArray || kind == T_GUID || kind == T_SYSTEMTIME || kind >= <u32>T_USTR) {
        store<u32>(base + cap * <usize>preA + (row << 2), <u32>a);
        if (preB != <u32>CLR_NOT_STORED) store<u32>(base + cap * <usize>preB + (row << 2), <u32>b);
      } else {
        let width = valueWidth(kind);
        let at = base + cap * <usize>preA + row * <usize>width;
        if (width == 1) store<u8>(at, <u8>value);
        else if (width == 2) store<u16>(at, <u16>value);
        else if (width == 4) store<u32>(at, <u32>value);
        else store<u64>(at, value);
      }
    }
    p += words << 1;
  }
  return pos;
}

/** The first field entry of schema event `t`'s program (after its header and fixed entries). */
@inline function fieldsOf(pr: usize): usize {
  return pr + (CLR_TYPE_WORDS << 1) + <usize>load<u16>(pr, CLR_TYPE_FIXED << 1) * (CLR_FIXED_WORDS << 1);
}

/** Zeroes row `row` of every column of schema event `t`'s block (but the row index). */
function zeroRow(t: i32, base: usize, cap: usize, row: usize): void {
  let pr = prog(t);
  store<u8>(base + cap * <usize>load<u16>(pr, CLR_TYPE_PRE_STATUS << 1) + row, 0);
  let n = <u32>load<u16>(pr, CLR_TYPE_FIELDS << 1);
  let p = fieldsOf(pr);
  for (let f: u32 = 0; f < n; f++) {
    let w0 = <u32>load<u16>(p, CLR_FIELD_KIND << 1);
    let kind = w0 & CLR_KIND_MASK;
    let flags = w0 >> CLR_FLAGS_SHIFT;
    let preA = <usize>load<u16>(p, CLR_FIELD_PRE_A << 1);
    let preB = <u32>load<u16>(p, CLR_FIELD_PRE_B << 1);
    if (isRefField(kind, flags)) {
      store<u32>(base + cap * preA + (row << 2), 0);
      if (preB != <u32>CLR_NOT_STORED) store<u32>(base + cap * <usize>preB + (row << 2), 0);
    } else {
      let width = <usize>valueWidth(kind);
      let at = base + cap * preA + row * width;
      if (width == 1) store<u8>(at, 0);
      else if (width == 2) store<u16>(at, 0);
      else if (width == 4) store<u32>(at, 0);
      else store<u64>(at, 0);
    }
    p += <usize>load<u16>(p, CLR_FIELD_LEN << 1) << 1;
  }
}

/**
 * Row `row` of schema event `t`'s block (of `cap` rows at `base`) from the field program, for the
 * record whose payload is [q, end): every field the payload holds, the rest 0, and the status.
 */
export function clrSlow(t: i32, base: usize, cap: usize, row: usize, q: usize, end: usize, p8: bool): void {
  let pr = prog(t);
  zeroRow(t, base, cap, row);
  truncated = false;
  walk(fieldsOf(pr), <u32>load<u16>(pr, CLR_TYPE_FIELDS << 1), q, end, p8 ? 8 : 4, base, cap, row, 0);
  if (truncated) store<u8>(base + cap * <usize>load<u16>(pr, CLR_TYPE_PRE_STATUS << 1) + row, <u8>CLR_STATUS_TRUNCATED);
}

/** Rows of schema event `t` filled by the field program alone (events without a fast path): as clr-fill.ts's. */
export function clrSlowRows(t: i32, d: usize, list: usize, n: u32): void {
  let count = <usize>clrReserve(t, d, n);
  if (count == <usize>-1) return;
  let base = <usize>load<u32>(d, CLR_DIR_BLOCK);
  let cap = <usize>load<u32>(d, CLR_DIR_CAP);
  let rowAt = base + cap * <usize>load<u16>(prog(t), CLR_TYPE_PRE_ROW << 1);
  for (let i: usize = 0; i < <usize>n; i++) {
    let row = <usize>load<u32>(list + (i << 2));
    let q = <usize>load<u32>(STATE.colPayloadOffset + (row << 2));
    store<u32>(rowAt + ((count + i) << 2), <u32>row);
    let p8 = <u32>load<u8>(STATE.colHeaderType + row) == HT_EVENT_HEADER64;
    clrSlow(t, base, cap, count + i, q, q + <usize>load<u16>(STATE.colPayloadLength + (row << 1)), p8);
  }
}

/** Moves schema event `t`'s block to one of `cap` rows, its `count` rows copied; false when memory is exhausted. */
function growBlock(t: i32, d: usize, count: u32, cap: u32): bool {
  let pr = prog(t);
  let rowBytes = <usize>load<u16>(pr, CLR_TYPE_ROW_BYTES << 1);
  let fresh = allocate(STATE, <usize>cap * rowBytes);
  if (fresh == 0) return false;
  let old = <usize>load<u32>(d, CLR_DIR_BLOCK);
  let oldCap = <usize>load<u32>(d, CLR_DIR_CAP);
  if (old != 0 && count > 0) {
    // each column's rows to its place in the new block (columns are `pre` apart per row)
    let n = <usize>count;
    memory.copy(fresh + <usize>cap * <usize>load<u16>(pr, CLR_TYPE_PRE_ROW << 1), old + oldCap * <usize>load<u16>(pr, CLR_TYPE_PRE_ROW << 1), n << 2);
    memory.copy(fresh + <usize>cap * <usize>load<u16>(pr, CLR_TYPE_PRE_STATUS << 1), old + oldCap * <usize>load<u16>(pr, CLR_TYPE_PRE_STATUS << 1), n);
    let nf = <u32>load<u16>(pr, CLR_TYPE_FIELDS << 1);
    let p = fieldsOf(pr);
    for (let f: u32 = 0; f < nf; f++) {
      let w0 = <u32>load<u16>(p, CLR_FIELD_KIND << 1);
      let kind = w0 & CLR_KIND_MASK;
      let flags = w0 >> CLR_FLAGS_SHIFT;
      let preA = <usize>load<u16>(p, CLR_FIELD_PRE_A << 1);
      let preB = <u32>load<u16>(p, CLR_FIELD_PRE_B << 1);
      if (isRefField(kind, flags)) {
        memory.copy(fresh + <usize>cap * preA, old + oldCap * preA, n << 2);
        if (preB != <u32>CLR_NOT_STORED) memory.copy(fresh + <usize>cap * <usize>preB, old + oldCap * <usize>preB, n << 2);
      } else {
        let width = <usize>valueWidth(kind);
        memory.copy(fresh + <usize>cap * preA, old + oldCap * preA, n * width);
      }
      p += <usize>load<u16>(p, CLR_FIELD_LEN << 1) << 1;
    }
  }
  if (old != 0) release(STATE, old);
  store<u32>(d, <u32>fresh, CLR_DIR_BLOCK);
  store<u32>(d, cap, CLR_DIR_CAP);
  return true;
}

/**
 * Room for `n` more rows of schema event `t`'s table (`d`: its directory entry), the block grown when
 * full: returns the rows before them (the caller writes the `n` rows after), or 0xFFFFFFFF when memory
 * is exhausted (the rows are counted as missing).
 */
export function clrReserve(t: i32, d: usize, n: u32): u32 {
  let count = load<u32>(d, CLR_DIR_COUNT);
  let cap = load<u32>(d, CLR_DIR_CAP);
  if (<u64>count + n > <u64>cap) {
    let need = count + n;
    // by four from 1,024 rows: a core that starts empty (a worker's, for each segment) copies its typed
    // rows a third as often as by doubling (measured: the copies were 9% of a worker's time at 1 GiB);
    // under a memory limit by doubling from 64, which wastes less of it
    let limited = memoryLimited(STATE);
    let next = max<u32>(max<u32>(limited ? cap << 1 : cap << 2, need), limited ? 64 : 1024);
    // near the memory's end: a quarter more, then just what is needed
    if (!growBlock(t, d, count, next) && !growBlock(t, d, count, max<u32>(need, cap + (cap >> 2))) && !growBlock(t, d, count, need)) {
      STATE.clrMissing += n;
      return 0xffffffff;
    }
  }
  store<u32>(d, count + n, CLR_DIR_COUNT);
  STATE.clrRows += n;
  return count;
}

/**
 * Adds `delta` (mod 2^32) to the references of rows [from, to) of schema event `t`'s table (`d`: its
 * directory entry) that are not 0: an EventPipe block's rows, filled while the block was staged, made
 * to point into the trace's bytes before the staging area takes the next block.
 */
export function clrMoveRefs(m: Mem, t: i32, d: usize, from: u32, to: u32, delta: u32): void {
  if (from >= to || delta == 0) return;
  let base = <usize>load<u32>(d, CLR_DIR_BLOCK);
  let cap = <usize>load<u32>(d, CLR_DIR_CAP);
  let pr = prog(t);
  let nf = <u32>load<u16>(pr, CLR_TYPE_FIELDS << 1);
  let p = fieldsOf(pr);
  for (let f: u32 = 0; f < nf; f++) {
    let w0 = <u32>load<u16>(p, CLR_FIELD_KIND << 1);
    if (isRefField(w0 & CLR_KIND_MASK, w0 >> CLR_FLAGS_SHIFT)) {
      let col = base + cap * <usize>load<u16>(p, CLR_FIELD_PRE_A << 1);
      for (let r = <usize>from; r < <usize>to; r++) {
        let a = load<u32>(col + (r << 2));
        if (a != 0) store<u32>(col + (r << 2), a + delta);
      }
    }
    p += <usize>load<u16>(p, CLR_FIELD_LEN << 1) << 1;
  }
}

/** `n` values of `width` bytes (1, 2, 4 or 8) of the column at `col`: value i of `tmp` is value src[i]'s, then copied back. */
function gatherColumn(col: usize, width: usize, src: usize, n: usize, tmp: usize): void {
  for (let i: usize = 0; i < n; i++) {
    let from = <usize>load<u32>(src + (i << 2));
    if (width == 8) store<u64>(tmp + (i << 3), load<u64>(col + (from << 3)));
    else if (width == 4) store<u32>(tmp + (i << 2), load<u32>(col + (from << 2)));
    else if (width == 2) store<u16>(tmp + (i << 1), load<u16>(col + (from << 1)));
    else store<u8>(tmp + i, load<u8>(col + from));
  }
  memory.copy(col, tmp, n * width);
}

/**
 * Puts the first `n` rows of schema event `t`'s table (`d`: its directory entry) in another order:
 * row i becomes what row src[i] was (u32 each), its row index rows[i]. `tmp`: room for `n` values of
 * 8 bytes.
 */
export function clrPermute(m: Mem, t: i32, d: usize, src: usize, rows: usize, n: u32, tmp: usize): void {
  let base = <usize>load<u32>(d, CLR_DIR_BLOCK);
  let cap = <usize>load<u32>(d, CLR_DIR_CAP);
  let pr = prog(t);
  let count = <usize>n;
  memory.copy(base + cap * <usize>load<u16>(pr, CLR_TYPE_PRE_ROW << 1), rows, count << 2);
  gatherColumn(base + cap * <usize>load<u16>(pr, CLR_TYPE_PRE_STATUS << 1), 1, src, count, tmp);
  let nf = <u32>load<u16>(pr, CLR_TYPE_FIELDS << 1);
  let p = fieldsOf(pr);
  for (let f: u32 = 0; f < nf; f++) {
    let w0 = <u32>load<u16>(p, CLR_FIELD_KIND << 1);
    let kind = w0 & CLR_KIND_MASK;
    let preA = <usize>load<u16>(p, CLR_FIELD_PRE_A << 1);
    let preB = <u32>load<u16>(p, CLR_FIELD_PRE_B << 1);
    if (isRefField(kind, w0 >> CLR_FLAGS_SHIFT)) {
      gatherColumn(base + cap * preA, 4, src, count, tmp);
      if (preB != <u32>CLR_NOT_STORED) gatherColumn(base + cap * <usize>preB, 4, src, count, tmp);
    } else gatherColumn(base + cap * preA, <usize>valueWidth(kind), src, count, tmp);
    p += <usize>load<u16>(p, CLR_FIELD_LEN << 1) << 1;
  }
}
