// Typed tables for .NET runtime events: one struct-of-arrays block per (provider, id, version), one
// column per top-level field. Numbers are stored by value; strings, GUIDs, binary blobs and arrays as
// references (offset, length or count) into the record bytes. The record walk (records.ts) hands a
// record's row to the generated fast path of its schema event (clr-fill.ts), or to the field program
// walked here, which is the reference. Shared by both cores (scripts/gen-core-twin.mjs): a 64-bit value
// moves as two 32-bit words, and a count that could pass 2^32 is compared as an f64.
//
// The field program comes from the bindings (bindings/schema/clr-program.ts), as u16 words laid out as
// the CLR_TYPE_*, CLR_FIXED_*, CLR_FIELD_*, CLR_STRUCT_* and CLR_FLAG_* words of codes.ts say. Columns
// are ordered by width, widest first, so every column of a block is naturally aligned. A block holds
// CLR_DIR_CAP rows: column k starts at block + cap * pre(k).

import {
  T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_U64, T_I64, T_F32, T_F64, T_BOOL, T_PTR, T_GUID, T_FILETIME,
  T_SYSTEMTIME, T_USTR, T_ASTR, T_BINARY, T_STRUCT, HT_EVENT_HEADER32, HT_EVENT_HEADER64,
  CLR_DIR_COUNT, CLR_DIR_BLOCK, CLR_DIR_CAP, CLR_MAX_ID, CLR_VERSIONS, CLR_STATUS_TRUNCATED,
  CLR_TYPE_ROW_BYTES, CLR_TYPE_PRE_ROW, CLR_TYPE_PRE_STATUS, CLR_TYPE_FIELDS, CLR_TYPE_WORDS, CLR_TYPE_FIXED,
  CLR_FIXED_WORDS, CLR_FIELD_KIND, CLR_FIELD_PRE_A, CLR_FIELD_PRE_B, CLR_FIELD_REF, CLR_FIELD_LEN, CLR_STRUCT_SUBS,
  CLR_STRUCT_SIZE32, CLR_STRUCT_SIZE64, CLR_STRUCT_WORDS, CLR_FLAGS_SHIFT, CLR_KIND_MASK, CLR_FLAG_COUNT_FIELD,
  CLR_FLAG_COUNT_LITERAL, CLR_FLAG_PADDED_STRUCT, CLR_NOT_STORED, CLR_SCOPE_VALUES, CLR_MAX_DEPTH,
} from "./codes";
import { clrInit } from "./tables";
import {
  Mem, ld8, ld16, ld32, ldi8, ldi16, ldi16a, ldi32, st8, st16, st32, ld16a, ld32a, st32a, copyBytes, allocate, release,
  memoryLimited, scanUtf16, scanAnsi,
} from "./memory-access";

export { scanUtf16, scanAnsi } from "./memory-access";

/**
 * Turns the typed tables on: the field program (`words`), each schema event's first word
 * (`starts`, u32), the (provider, id, version) lookup and the CLR providers' GUIDs. Returns false
 * when memory is exhausted. (index.ts first checks that the program is the one the fast paths of
 * clr-fill.ts were generated for.)
 */
export function setClr(m: Mem, words: usize, starts: usize, nTypes: u32, table: usize, guids: usize, nGuids: u32): bool {
  if (!clrInit(m, nTypes)) return false;
  // the values of the fields of the scope being walked, for count and length references (u64, by depth)
  if (m.clrScope == 0) m.clrScope = allocate(m, <usize>((CLR_MAX_DEPTH + 1) * CLR_SCOPE_VALUES * 8));
  if (m.clrScope == 0) return false;
  m.clrProgram = words;
  m.clrStarts = starts;
  m.clrLookup = table;
  m.clrGuids = guids;
  m.clrGuidCount = nGuids;
  m.clrOn = true;
  return true;
}

/** The CLR provider index of the GUID at `guid` (16 bytes), -1 for others. */
export function clrProviderOf(m: Mem, guid: usize): i32 {
  let g0 = ld32(m, guid), g1 = ld32(m, guid + 4), g2 = ld32(m, guid + 8), g3 = ld32(m, guid + 12);
  for (let i: u32 = 0; i < m.clrGuidCount; i++) {
    let g = m.clrGuids + (<usize>i << 4);
    if (ld32(m, g) == g0 && ld32(m, g + 4) == g1 && ld32(m, g + 8) == g2 && ld32(m, g + 12) == g3) return <i32>i;
  }
  return -1;
}

/** The schema event of rows of (CLR provider `p`, header type, id, version), -1 when none. */
export function clrEventOf(m: Mem, p: i32, headerType: u32, id: u32, version: u32): i32 {
  if (p < 0 || !m.clrOn) return -1;
  if (headerType != HT_EVENT_HEADER32 && headerType != HT_EVENT_HEADER64) return -1;
  if (id >= <u32>CLR_MAX_ID) return -1;
  let v = version < <u32>(CLR_VERSIONS - 1) ? version : <u32>(CLR_VERSIONS - 1);
  return ldi16a(m, m.clrLookup + ((((<usize>p * CLR_MAX_ID + id) * CLR_VERSIONS) + v) << 1));
}

/** Program address of schema event `t`'s entry. */
@inline function prog(m: Mem, t: i32): usize {
  return m.clrProgram + (<usize>ld32a(m, m.clrStarts + (<usize>t << 2)) << 1);
}

/** Word `w` of the program entry at `p`. */
@inline function word(m: Mem, p: usize, w: u32): u32 {
  return ld16a(m, p + (<usize>w << 1));
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

/** A value of `width` bytes (1, 2, 4 or 8; the last as words `lo`, `hi`) at `at`. */
@inline function storeValue(m: Mem, at: usize, width: u32, lo: u32, hi: u32): void {
  if (width == 1) st8(m, at, lo);
  else if (width == 2) st16(m, at, lo);
  else if (width == 4) st32(m, at, lo);
  else {
    st32(m, at, lo);
    st32(m, at + 4, hi);
  }
}

/**
 * Walks `n` fields at program address `p0` over the payload from `pos` to `end`. With `base` != 0
 * it stores the values of row `row` of a block of `cap` rows. Returns the position after the fields;
 * sets m.clrTruncated where the payload ends first.
 */
function walk(m: Mem, p0: usize, n: u32, pos: usize, end: usize, ptr: u32, base: usize, cap: usize, row: usize, depth: u32): usize {
  let vals = m.clrScope + <usize>depth * (CLR_SCOPE_VALUES << 3);
  let p = p0;
  for (let f: u32 = 0; f < n; f++) {
    let w0 = word(m, p, CLR_FIELD_KIND);
    let kind = w0 & CLR_KIND_MASK;
    let flags = w0 >>> CLR_FLAGS_SHIFT;
    let preA = word(m, p, CLR_FIELD_PRE_A);
    let preB = word(m, p, CLR_FIELD_PRE_B);
    let ref = word(m, p, CLR_FIELD_REF);
    let a: usize = 0;
    // the field's length or count (b), its value, and its element count (n), each as two words; the count
    // also as an f64, exact to 2^53, in which bounds are checked (a count past that passes any payload)
    let bLo: u32 = 0, bHi: u32 = 0;
    let vLo: u32 = 0, vHi: u32 = 0;
    let nLo: u32 = 1, nHi: u32 = 0;
    if ((flags & CLR_FLAG_COUNT_FIELD) != 0) {
      if (ref < <u32>CLR_SCOPE_VALUES) {
        nLo = ld32a(m, vals + (<usize>ref << 3));
        nHi = ld32a(m, vals + (<usize>ref << 3) + 4);
      } else nLo = 0;
    } else if ((flags & CLR_FLAG_COUNT_LITERAL) != 0) nLo = ref;
    let count = <f64>nHi * 4294967296.0 + <f64>nLo;
    let isArray = (flags & (CLR_FLAG_COUNT_FIELD | CLR_FLAG_COUNT_LITERAL)) != 0 && kind != T_BINARY;

    if (kind == T_USTR) {
      a = pos;
      let q = scanUtf16(m, pos, end);
      bLo = <u32>(q - pos);
      if (q + 2 <= end) pos = q + 2;
      else { pos = end; m.clrTruncated = true; }
      if (bLo == 0 && a >= end) { m.clrTruncated = true; return pos; }
    } else if (kind == T_ASTR) {
      a = pos;
      let q = scanAnsi(m, pos, end);
      bLo = <u32>(q - pos);
      if (q < end) pos = q + 1;
      else { pos = end; m.clrTruncated = true; }
      if (bLo == 0 && a >= end) { m.clrTruncated = true; return pos; }
    } else if (kind == T_BINARY) {
      if (<f64>pos + count > <f64>end) { m.clrTruncated = true; return pos; }
      a = pos;
      bLo = nLo;
      pos += <usize>nLo; // (within the payload: nHi is 0)
    } else if (kind == T_STRUCT) {
      let nSub = word(m, p, CLR_STRUCT_SUBS);
      a = pos;
      bLo = nLo;
      bHi = nHi;
      if ((flags & CLR_FLAG_PADDED_STRUCT) != 0) {
        let size = ptr == 4 ? word(m, p, CLR_STRUCT_SIZE32) : word(m, p, CLR_STRUCT_SIZE64);
        if (<f64>pos + <f64>size * count > <f64>end) { m.clrTruncated = true; return pos; }
        pos += <usize>(size * nLo);
      } else {
        if (depth >= <u32>CLR_MAX_DEPTH) { m.clrTruncated = true; return pos; }
        let sub = p + (<usize>CLR_STRUCT_WORDS << 1);
        for (let k: f64 = 0; k < count; k++) {
          let before = pos;
          pos = walk(m, sub, nSub, pos, end, ptr, 0, 0, 0, depth + 1);
          if (m.clrTruncated) return pos;
          if (pos == before) break; // empty elements: nothing more to walk
        }
      }
    } else {
      let size = fixedSize(kind, ptr);
      if (isArray) {
        if (<f64>pos + <f64>size * count > <f64>end) { m.clrTruncated = true; return pos; }
        a = pos;
        bLo = nLo;
        bHi = nHi;
        pos += <usize>(size * nLo); // (size 0, or within the payload)
      } else {
        if (pos + size > end) { m.clrTruncated = true; return pos; }
        if (kind == T_GUID || kind == T_SYSTEMTIME) {
          a = pos;
        } else if (size == 1) {
          let v = kind == T_I8 ? ldi8(m, pos) : <i32>ld8(m, pos);
          vLo = <u32>v;
          vHi = v < 0 ? 0xffffffff : 0;
        } else if (size == 2) {
          let v = kind == T_I16 ? ldi16(m, pos) : <i32>ld16(m, pos);
          vLo = <u32>v;
          vHi = v < 0 ? 0xffffffff : 0;
        } else if (size == 4) {
          vLo = ld32(m, pos);
          vHi = kind == T_I32 && ldi32(m, pos) < 0 ? 0xffffffff : 0;
        } else {
          vLo = ld32(m, pos);
          vHi = ld32(m, pos + 4);
        }
        pos += size;
      }
    }
    if (f < <u32>CLR_SCOPE_VALUES) {
      let at = vals + (<usize>f << 3);
      let scoped = isArray || kind >= <u32>T_GUID;
      st32a(m, at, scoped ? bLo : vLo);
      st32a(m, at + 4, scoped ? bHi : vHi);
    }

    if (base != 0 && preA != <u32>CLR_NOT_STORED) {
      if (isArray || kind == T_GUID || kind == T_SYSTEMTIME || kind >= <u32>T_USTR) {
        st32(m, base + cap * <usize>preA + (row << 2), <u32>a);
        if (preB != <u32>CLR_NOT_STORED) st32(m, base + cap * <usize>preB + (row << 2), bLo);
      } else {
        let width = valueWidth(kind);
        storeValue(m, base + cap * <usize>preA + row * <usize>width, width, vLo, vHi);
      }
    }
    p += <usize>word(m, p, CLR_FIELD_LEN) << 1;
  }
  return pos;
}

/** The first field entry of schema event `t`'s program (after its header and fixed entries). */
@inline function fieldsOf(m: Mem, pr: usize): usize {
  return pr + (<usize>CLR_TYPE_WORDS << 1) + <usize>word(m, pr, CLR_TYPE_FIXED) * (<usize>CLR_FIXED_WORDS << 1);
}

/** Zeroes row `row` of every column of schema event `t`'s block (but the row index). */
function zeroRow(m: Mem, t: i32, base: usize, cap: usize, row: usize): void {
  let pr = prog(m, t);
  st8(m, base + cap * <usize>word(m, pr, CLR_TYPE_PRE_STATUS) + row, 0);
  let n = word(m, pr, CLR_TYPE_FIELDS);
  let p = fieldsOf(m, pr);
  for (let f: u32 = 0; f < n; f++) {
    let w0 = word(m, p, CLR_FIELD_KIND);
    let kind = w0 & CLR_KIND_MASK;
    let preA = <usize>word(m, p, CLR_FIELD_PRE_A);
    let preB = word(m, p, CLR_FIELD_PRE_B);
    if (isRefField(kind, w0 >>> CLR_FLAGS_SHIFT)) {
      st32(m, base + cap * preA + (row << 2), 0);
      if (preB != <u32>CLR_NOT_STORED) st32(m, base + cap * <usize>preB + (row << 2), 0);
    } else {
      let width = valueWidth(kind);
      storeValue(m, base + cap * preA + row * <usize>width, width, 0, 0);
    }
    p += <usize>word(m, p, CLR_FIELD_LEN) << 1;
  }
}

/**
 * Row `row` of schema event `t`'s block (of `cap` rows at `base`) from the field program, for the
 * record whose payload is [q, end): every field the payload holds, the rest 0, and the status.
 */
export function clrSlow(m: Mem, t: i32, base: usize, cap: usize, row: usize, q: usize, end: usize, p8: bool): void {
  let pr = prog(m, t);
  zeroRow(m, t, base, cap, row);
  m.clrTruncated = false;
  walk(m, fieldsOf(m, pr), word(m, pr, CLR_TYPE_FIELDS), q, end, p8 ? 8 : 4, base, cap, row, 0);
  if (m.clrTruncated) st8(m, base + cap * <usize>word(m, pr, CLR_TYPE_PRE_STATUS) + row, CLR_STATUS_TRUNCATED);
}

/** Rows of schema event `t` filled by the field program alone (events without a fast path): as clr-fill.ts's rows. */
export function clrSlowRows(m: Mem, t: i32, d: usize, list: usize, n: u32): void {
  let count = clrReserve(m, t, d, n);
  if (count == 0xffffffff) return;
  let base = <usize>ld32a(m, d + CLR_DIR_BLOCK);
  let cap = <usize>ld32a(m, d + CLR_DIR_CAP);
  let rowAt = base + cap * <usize>word(m, prog(m, t), CLR_TYPE_PRE_ROW);
  for (let i: usize = 0; i < <usize>n; i++) {
    let row = <usize>ld32a(m, list + (i << 2));
    let q = <usize>ld32a(m, m.colPayloadOffset + (row << 2));
    let r = <usize>count + i;
    st32a(m, rowAt + (r << 2), <u32>row);
    let p8 = ld8(m, m.colHeaderType + row) == HT_EVENT_HEADER64;
    clrSlow(m, t, base, cap, r, q, q + <usize>ld16a(m, m.colPayloadLength + (row << 1)), p8);
  }
}

/** A row of schema event `t` filled by the field program alone, for the record whose payload is [q, end): as clr-fill.ts's single-row fills. */
export function clrSlowRow(m: Mem, t: i32, d: usize, row: u32, q: usize, end: usize, p8: bool): void {
  let i = clrReserve(m, t, d, 1);
  if (i == 0xffffffff) return;
  let base = <usize>ld32a(m, d + CLR_DIR_BLOCK);
  let cap = <usize>ld32a(m, d + CLR_DIR_CAP);
  st32a(m, base + cap * <usize>word(m, prog(m, t), CLR_TYPE_PRE_ROW) + (<usize>i << 2), row);
  clrSlow(m, t, base, cap, <usize>i, q, end, p8);
}

/** Moves schema event `t`'s block to one of `cap` rows, its `count` rows copied; false when memory is exhausted. */
function growBlock(m: Mem, t: i32, d: usize, count: u32, cap: u32): bool {
  let pr = prog(m, t);
  let rowBytes = <usize>word(m, pr, CLR_TYPE_ROW_BYTES);
  let fresh = allocate(m, <usize>cap * rowBytes);
  if (fresh == 0) return false;
  let old = <usize>ld32a(m, d + CLR_DIR_BLOCK);
  let oldCap = <usize>ld32a(m, d + CLR_DIR_CAP);
  let fc = <usize>cap;
  if (old != 0 && count > 0) {
    // each column's rows to its place in the new block (columns are `pre` apart per row)
    let n = <usize>count;
    let preRow = <usize>word(m, pr, CLR_TYPE_PRE_ROW);
    let preStatus = <usize>word(m, pr, CLR_TYPE_PRE_STATUS);
    copyBytes(m, fresh + fc * preRow, old + oldCap * preRow, n << 2);
    copyBytes(m, fresh + fc * preStatus, old + oldCap * preStatus, n);
    let nf = word(m, pr, CLR_TYPE_FIELDS);
    let p = fieldsOf(m, pr);
    for (let f: u32 = 0; f < nf; f++) {
      let w0 = word(m, p, CLR_FIELD_KIND);
      let kind = w0 & CLR_KIND_MASK;
      let preA = <usize>word(m, p, CLR_FIELD_PRE_A);
      let preB = word(m, p, CLR_FIELD_PRE_B);
      if (isRefField(kind, w0 >>> CLR_FLAGS_SHIFT)) {
        copyBytes(m, fresh + fc * preA, old + oldCap * preA, n << 2);
        if (preB != <u32>CLR_NOT_STORED) copyBytes(m, fresh + fc * <usize>preB, old + oldCap * <usize>preB, n << 2);
      } else copyBytes(m, fresh + fc * preA, old + oldCap * preA, n * <usize>valueWidth(kind));
      p += <usize>word(m, p, CLR_FIELD_LEN) << 1;
    }
  }
  if (old != 0) release(m, old);
  st32a(m, d + CLR_DIR_BLOCK, <u32>fresh);
  st32a(m, d + CLR_DIR_CAP, cap);
  return true;
}

/**
 * Room for `n` more rows of schema event `t`'s table (`d`: its directory entry), the block grown when
 * it has not: false when memory is exhausted. (The rows are not taken: clrReserve takes them.)
 */
export function clrRoom(m: Mem, t: i32, d: usize, n: u32): bool {
  let count = ld32a(m, d + CLR_DIR_COUNT);
  let cap = ld32a(m, d + CLR_DIR_CAP);
  if (<f64>count + <f64>n <= <f64>cap) return true;
  let need = count + n;
  // by four from 1,024 rows: a core that starts empty (a worker's, for each segment) copies its typed
  // rows a third as often as by doubling (measured: the copies were 9% of a worker's time at 1 GiB);
  // under a memory limit by doubling from 64, which wastes less of it
  let limited = memoryLimited(m);
  let next = limited ? cap << 1 : cap << 2;
  if (next < need) next = need;
  let least: u32 = limited ? 64 : 1024;
  if (next < least) next = least;
  // near the memory's end: a quarter more, then just what is needed
  let quarter = cap + (cap >>> 2);
  return growBlock(m, t, d, count, next) || growBlock(m, t, d, count, need > quarter ? need : quarter) || growBlock(m, t, d, count, need);
}

/**
 * Room for `n` more rows of schema event `t`'s table (`d`: its directory entry), taken: returns the rows
 * before them (the caller writes the `n` rows after), or 0xFFFFFFFF when memory is exhausted (the rows
 * are counted as missing).
 */
export function clrReserve(m: Mem, t: i32, d: usize, n: u32): u32 {
  if (!clrRoom(m, t, d, n)) {
    m.clrMissing += n;
    return 0xffffffff;
  }
  let count = ld32a(m, d + CLR_DIR_COUNT);
  st32a(m, d + CLR_DIR_COUNT, count + n);
  m.clrRows += n;
  return count;
}

/**
 * Adds `delta` (mod 2^32) to the references of rows [from, to) of schema event `t`'s table (`d`: its
 * directory entry) that are not 0: an EventPipe block's rows, filled while the block was staged, made
 * to point into the trace's bytes before the staging area takes the next block.
 */
export function clrMoveRefs(m: Mem, t: i32, d: usize, from: u32, to: u32, delta: u32): void {
  if (from >= to || delta == 0) return;
  let base = <usize>ld32a(m, d + CLR_DIR_BLOCK);
  let cap = <usize>ld32a(m, d + CLR_DIR_CAP);
  let pr = prog(m, t);
  let nf = word(m, pr, CLR_TYPE_FIELDS);
  let p = fieldsOf(m, pr);
  for (let f: u32 = 0; f < nf; f++) {
    let w0 = word(m, p, CLR_FIELD_KIND);
    if (isRefField(w0 & CLR_KIND_MASK, w0 >>> CLR_FLAGS_SHIFT)) {
      let col = base + cap * <usize>word(m, p, CLR_FIELD_PRE_A);
      for (let r = <usize>from; r < <usize>to; r++) {
        let a = ld32a(m, col + (r << 2));
        if (a != 0) st32a(m, col + (r << 2), (a + delta) >>> 0);
      }
    }
    p += <usize>word(m, p, CLR_FIELD_LEN) << 1;
  }
}

/** `n` values of `width` bytes (1, 2, 4 or 8) of the column at `col`: value i of `tmp` is value src[i]'s, then copied back. */
function gatherColumn(m: Mem, col: usize, width: u32, src: usize, n: usize, tmp: usize): void {
  let w = <usize>width;
  for (let i: usize = 0; i < n; i++) {
    let from = col + <usize>ld32a(m, src + (i << 2)) * w;
    let to = tmp + i * w;
    if (width == 8) {
      st32a(m, to, ld32a(m, from));
      st32a(m, to + 4, ld32a(m, from + 4));
    } else if (width == 4) st32a(m, to, ld32a(m, from));
    else if (width == 2) st16(m, to, ld16a(m, from));
    else st8(m, to, ld8(m, from));
  }
  copyBytes(m, col, tmp, n * w);
}

/**
 * Puts the first `n` rows of schema event `t`'s table (`d`: its directory entry) in another order:
 * row i becomes what row src[i] was (u32 each), its row index rows[i]. `tmp`: room for `n` values of
 * 8 bytes.
 */
export function clrPermute(m: Mem, t: i32, d: usize, src: usize, rows: usize, n: u32, tmp: usize): void {
  let base = <usize>ld32a(m, d + CLR_DIR_BLOCK);
  let cap = <usize>ld32a(m, d + CLR_DIR_CAP);
  let pr = prog(m, t);
  let count = <usize>n;
  copyBytes(m, base + cap * <usize>word(m, pr, CLR_TYPE_PRE_ROW), rows, count << 2);
  gatherColumn(m, base + cap * <usize>word(m, pr, CLR_TYPE_PRE_STATUS), 1, src, count, tmp);
  let nf = word(m, pr, CLR_TYPE_FIELDS);
  let p = fieldsOf(m, pr);
  for (let f: u32 = 0; f < nf; f++) {
    let w0 = word(m, p, CLR_FIELD_KIND);
    let kind = w0 & CLR_KIND_MASK;
    let preA = <usize>word(m, p, CLR_FIELD_PRE_A);
    let preB = word(m, p, CLR_FIELD_PRE_B);
    if (isRefField(kind, w0 >>> CLR_FLAGS_SHIFT)) {
      gatherColumn(m, base + cap * preA, 4, src, count, tmp);
      if (preB != <u32>CLR_NOT_STORED) gatherColumn(m, base + cap * <usize>preB, 4, src, count, tmp);
    } else gatherColumn(m, base + cap * preA, valueWidth(kind), src, count, tmp);
    p += <usize>word(m, p, CLR_FIELD_LEN) << 1;
  }
}
