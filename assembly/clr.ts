// Typed tables for .NET runtime events: one struct-of-arrays block per (provider, id, version),
// one column per top-level field. Numbers are stored by value; strings, GUIDs, binary blobs and
// arrays as references (offset, length or count) into the record bytes. The field layouts come as
// a program of u16 words built by the bindings from the generated schema (bindings/schema/clr-program.ts);
// its layout is the CLR_TYPE_*, CLR_FIXED_*, CLR_FIELD_*, CLR_STRUCT_* and CLR_FLAG_* words of codes.ts.
// Columns are ordered by width, widest first, so every column of a block is naturally aligned.

import {
  T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_U64, T_I64, T_F32, T_F64, T_BOOL, T_PTR, T_GUID, T_FILETIME,
  T_SYSTEMTIME, T_USTR, T_ASTR, T_BINARY, T_STRUCT, HT_EVENT_HEADER32, HT_EVENT_HEADER64, CLR_DIR_STRIDE,
  CLR_DIR_COUNT, CLR_DIR_BLOCK, CLR_DIR_CURSOR, CLR_MAX_ID, CLR_VERSIONS, CLR_STATUS_TRUNCATED,
  CLR_TYPE_ROW_BYTES, CLR_TYPE_PRE_ROW, CLR_TYPE_PRE_STATUS, CLR_TYPE_FIELDS, CLR_TYPE_FIXED, CLR_TYPE_FIXED_END32,
  CLR_TYPE_FIXED_END64, CLR_TYPE_REST, CLR_TYPE_WORDS, CLR_FIXED_OFF32, CLR_FIXED_OFF64, CLR_FIXED_SIZE32,
  CLR_FIXED_SIZE64, CLR_FIXED_PRE, CLR_FIXED_WORDS, CLR_FIELD_KIND, CLR_FIELD_PRE_A, CLR_FIELD_PRE_B, CLR_FIELD_REF,
  CLR_FIELD_LEN, CLR_STRUCT_SUBS, CLR_STRUCT_SIZE32, CLR_STRUCT_SIZE64, CLR_STRUCT_WORDS, CLR_FLAGS_SHIFT,
  CLR_KIND_MASK, CLR_FLAG_COUNT_FIELD, CLR_FLAG_COUNT_LITERAL, CLR_FLAG_PADDED_STRUCT, CLR_NOT_STORED,
  CLR_SCOPE_VALUES, CLR_MAX_DEPTH,
} from "./codes";
import {
  rowCount, colProvider, colHeaderType, colEventId, colVersion, colPayloadOffset, colPayloadLength, clrRegionFor,
  clrScratchFor,
} from "./tables";

// values of the fields of the scope being walked, for count and length references (u64, by depth)
const scope: usize = memory.data((CLR_MAX_DEPTH + 1) * CLR_SCOPE_VALUES * 8);

let truncated = false;

@inline function fixedSize(kind: u32, ptr: u32): u32 {
  if (kind == T_U8 || kind == T_I8) return 1;
  if (kind == T_U16 || kind == T_I16) return 2;
  if (kind == T_U32 || kind == T_I32 || kind == T_BOOL || kind == T_F32) return 4;
  if (kind == T_U64 || kind == T_I64 || kind == T_F64 || kind == T_FILETIME) return 8;
  if (kind == T_PTR) return ptr;
  if (kind == T_GUID || kind == T_SYSTEMTIME) return 16;
  return 0;
}

/**
 * Walks `n` fields at program address `prog` over the payload from `pos` to `end`. With `base` != 0
 * it stores the values of row `row` of a block of `count` rows. Returns the position after the fields.
 */
function walk(
  prog: usize, n: u32, pos: usize, end: usize, ptr: u32, base: usize, count: u32, row: u32, depth: u32, first: u32,
): usize {
  let vals = scope + <usize>depth * (CLR_SCOPE_VALUES << 3);
  let p = prog;
  for (let f: u32 = first; f < first + n; f++) {
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
      let q = pos;
      // four UTF-16 units at a time: stop at the word holding a zero unit
      while (q + 8 <= end) {
        let x = load<u64>(q);
        if (((x - 0x0001000100010001) & ~x & 0x8000800080008000) != 0) break;
        q += 8;
      }
      while (q + 2 <= end && load<u16>(q) != 0) q += 2;
      b = <u64>(q - pos);
      if (q + 2 <= end) pos = q + 2;
      else { pos = end; truncated = true; }
      if (b == 0 && a >= end) { truncated = true; return pos; }
    } else if (kind == T_ASTR) {
      a = pos;
      let q = pos;
      while (q < end && load<u8>(q) != 0) q++;
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
          pos = walk(sub, nSub, pos, end, ptr, 0, 0, 0, depth + 1, 0);
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
      let isRef = isArray || kind == T_GUID || kind == T_SYSTEMTIME || kind >= <u32>T_USTR;
      if (isRef) {
        store<u32>(base + <usize>count * preA + (<usize>row << 2), <u32>a);
        if (preB != <u32>CLR_NOT_STORED) store<u32>(base + <usize>count * preB + (<usize>row << 2), <u32>b);
      } else {
        let width = kind == T_PTR ? 8 : fixedSize(kind, 8);
        let at = base + <usize>count * preA + <usize>row * width;
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

@inline function typeOf(r: usize, lookup: usize, provClr: usize, nProv: u32): i32 {
  let prov = <u32>load<u16>(colProvider + (r << 1));
  if (prov >= nProv) return -1;
  let p = <i32>load<i8>(provClr + prov);
  if (p < 0) return -1;
  let ht = <u32>load<u8>(colHeaderType + r);
  if (ht != HT_EVENT_HEADER32 && ht != HT_EVENT_HEADER64) return -1;
  let id = <u32>load<u16>(colEventId + (r << 1));
  if (id >= <u32>CLR_MAX_ID) return -1;
  let v = min<u32>(<u32>load<u16>(colVersion + (r << 1)), CLR_VERSIONS - 1);
  return <i32>load<i16>(lookup + ((((<usize>p * CLR_MAX_ID + id) * CLR_VERSIONS) + v) << 1));
}

/**
 * Fills the typed tables of the window's rows. `dir` receives a CLR_DIR_STRIDE-byte entry per type;
 * the blocks are carved from one region that the next window reuses. Returns the number of rows
 * placed in tables: all of them, or none when memory is exhausted.
 */
export function decodeClr(
  program: usize, typeStarts: usize, nTypes: u32, lookup: usize, provClr: usize, nProv: u32, dir: usize,
): u32 {
  let n = <usize>rowCount;
  memory.fill(dir, 0, <usize>nTypes * CLR_DIR_STRIDE);
  // pass one: count rows per type, remembering each row's type for pass two
  let types = clrScratchFor(n << 1);
  if (types == 0) return 0;
  for (let r: usize = 0; r < n; r++) {
    let t = typeOf(r, lookup, provClr, nProv);
    store<i16>(types + (r << 1), <i16>t);
    if (t >= 0) {
      let d = dir + <usize>t * CLR_DIR_STRIDE + CLR_DIR_COUNT;
      store<u32>(d, load<u32>(d) + 1);
    }
  }
  let total: usize = 0;
  for (let t: u32 = 0; t < nTypes; t++) {
    let count = load<u32>(dir + <usize>t * CLR_DIR_STRIDE + CLR_DIR_COUNT);
    if (count == 0) continue;
    let prog = program + (<usize>load<u32>(typeStarts + (<usize>t << 2)) << 1);
    total += (<usize>count * <usize>load<u16>(prog, CLR_TYPE_ROW_BYTES << 1) + 7) & ~<usize>7;
  }
  let at = total > 0 ? clrRegionFor(total) : 0;
  if (at == 0) {
    memory.fill(dir, 0, <usize>nTypes * CLR_DIR_STRIDE);
    return 0;
  }
  let placed: u32 = 0;
  for (let t: u32 = 0; t < nTypes; t++) {
    let d = dir + <usize>t * CLR_DIR_STRIDE;
    let count = load<u32>(d + CLR_DIR_COUNT);
    if (count == 0) continue;
    let prog = program + (<usize>load<u32>(typeStarts + (<usize>t << 2)) << 1);
    let bytes = <usize>count * <usize>load<u16>(prog, CLR_TYPE_ROW_BYTES << 1);
    memory.fill(at, 0, bytes);
    store<u32>(d + CLR_DIR_BLOCK, <u32>at);
    at += (bytes + 7) & ~<usize>7;
    placed += count;
  }
  for (let r: usize = 0; r < n; r++) {
    let t = <i32>load<i16>(types + (r << 1));
    if (t < 0) continue;
    let d = dir + <usize>t * CLR_DIR_STRIDE;
    let count = load<u32>(d + CLR_DIR_COUNT);
    if (count == 0) continue;
    let block = <usize>load<u32>(d + CLR_DIR_BLOCK);
    let i = load<u32>(d + CLR_DIR_CURSOR);
    store<u32>(d + CLR_DIR_CURSOR, i + 1);
    let prog = program + (<usize>load<u32>(typeStarts + (<usize>t << 2)) << 1);
    let preRow = <usize>load<u16>(prog, CLR_TYPE_PRE_ROW << 1);
    let preStatus = <usize>load<u16>(prog, CLR_TYPE_PRE_STATUS << 1);
    let nFields = <u32>load<u16>(prog, CLR_TYPE_FIELDS << 1);
    let nFixed = <u32>load<u16>(prog, CLR_TYPE_FIXED << 1);
    store<u32>(block + <usize>count * preRow + (<usize>i << 2), <u32>r);
    let pos = <usize>load<u32>(colPayloadOffset + (r << 2));
    let end = pos + <usize>load<u16>(colPayloadLength + (r << 1));
    let ptr: u32 = load<u8>(colHeaderType + r) == HT_EVENT_HEADER32 ? 4 : 8;
    let fixedEnd = <usize>load<u16>(prog + (ptr == 4 ? CLR_TYPE_FIXED_END32 << 1 : CLR_TYPE_FIXED_END64 << 1));
    let fields = prog + (CLR_TYPE_WORDS << 1) + <usize>nFixed * (CLR_FIXED_WORDS << 1);
    truncated = false;
    if (nFixed > 0 && pos + fixedEnd <= end) {
      // fast path: the fixed prefix, then walk the rest
      let e = prog + (CLR_TYPE_WORDS << 1);
      let vals = scope;
      for (let f: u32 = 0; f < nFixed; f++) {
        let src = pos + <usize>load<u16>(e + (ptr == 4 ? CLR_FIXED_OFF32 << 1 : CLR_FIXED_OFF64 << 1));
        let size = <u32>load<u16>(e + (ptr == 4 ? CLR_FIXED_SIZE32 << 1 : CLR_FIXED_SIZE64 << 1));
        let width = <usize>load<u16>(e, CLR_FIXED_SIZE64 << 1);
        let at = block + <usize>count * <usize>load<u16>(e, CLR_FIXED_PRE << 1) + <usize>i * width;
        let value: u64;
        if (size == 1) value = <u64>load<u8>(src);
        else if (size == 2) value = <u64>load<u16>(src);
        else if (size == 4) value = <u64>load<u32>(src);
        else value = load<u64>(src);
        if (width == 1) store<u8>(at, <u8>value);
        else if (width == 2) store<u16>(at, <u16>value);
        else if (width == 4) store<u32>(at, <u32>value);
        else store<u64>(at, value);
        store<u64>(vals + (<usize>f << 3), value);
        e += CLR_FIXED_WORDS << 1;
      }
      if (nFields > nFixed) {
        walk(fields + (<usize>load<u16>(prog, CLR_TYPE_REST << 1) << 1), nFields - nFixed, pos + fixedEnd, end, ptr, block, count, i, 0, nFixed);
      }
    } else {
      walk(fields, nFields, pos, end, ptr, block, count, i, 0, 0);
    }
    if (truncated) store<u8>(block + <usize>count * preStatus + <usize>i, <u8>CLR_STATUS_TRUNCATED);
  }
  return placed;
}
