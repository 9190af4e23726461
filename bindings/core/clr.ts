// Typed tables for .NET runtime events (assembly/clr.ts): one struct-of-arrays block per (provider,
// id, version), one column per top-level field, filled from the field program the bindings build
// (bindings/schema/clr-program.ts; its layout: the CLR_TYPE_*, CLR_FIXED_*, CLR_FIELD_*, CLR_STRUCT_*
// and CLR_FLAG_* words of codes.ts). u64 values move as two u32 words; counts past 2^32 go through
// BigInt, off the common path.

import * as codes from "../../assembly/codes.js";
import { clrRegionFor } from "./tables.js";
import type { CoreState } from "./state.js";

// module consts, not imported bindings: V8 folds the former but loads the latter at every use
const {
  T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_U64, T_I64, T_F32, T_F64, T_BOOL, T_PTR, T_GUID, T_FILETIME,
  T_SYSTEMTIME, T_USTR, T_ASTR, T_BINARY, T_STRUCT, HT_EVENT_HEADER32, HT_EVENT_HEADER64, CLR_DIR_STRIDE,
  CLR_DIR_COUNT, CLR_DIR_BLOCK, CLR_DIR_CURSOR, CLR_MAX_ID, CLR_VERSIONS, CLR_STATUS_TRUNCATED,
  CLR_TYPE_ROW_BYTES, CLR_TYPE_PRE_ROW, CLR_TYPE_PRE_STATUS, CLR_TYPE_FIELDS, CLR_TYPE_FIXED, CLR_TYPE_FIXED_END32,
  CLR_TYPE_FIXED_END64, CLR_TYPE_REST, CLR_TYPE_WORDS, CLR_FIXED_OFF32, CLR_FIXED_OFF64, CLR_FIXED_SIZE32,
  CLR_FIXED_SIZE64, CLR_FIXED_PRE, CLR_FIXED_WORDS, CLR_FIELD_KIND, CLR_FIELD_PRE_A, CLR_FIELD_PRE_B, CLR_FIELD_REF,
  CLR_FIELD_LEN, CLR_STRUCT_SUBS, CLR_STRUCT_SIZE32, CLR_STRUCT_SIZE64, CLR_STRUCT_WORDS, CLR_FLAGS_SHIFT,
  CLR_KIND_MASK, CLR_FLAG_COUNT_FIELD, CLR_FLAG_COUNT_LITERAL, CLR_FLAG_PADDED_STRUCT, CLR_NOT_STORED,
  CLR_SCOPE_VALUES, CLR_MAX_DEPTH,
} = codes;

const NONE32 = 0xffffffff;
const TWO32 = 4294967296;

function fixedSize(kind: number, ptr: number): number {
  if (kind === T_U8 || kind === T_I8) return 1;
  if (kind === T_U16 || kind === T_I16) return 2;
  if (kind === T_U32 || kind === T_I32 || kind === T_BOOL || kind === T_F32) return 4;
  if (kind === T_U64 || kind === T_I64 || kind === T_F64 || kind === T_FILETIME) return 8;
  if (kind === T_PTR) return ptr;
  if (kind === T_GUID || kind === T_SYSTEMTIME) return 16;
  return 0;
}

/**
 * Advance of `size * n` bytes from `pos` with u64 arithmetic as the core does it: the low 32 bits
 * of the product, or -1 when `pos + size * n` passes `end`.
 */
function span(pos: number, size: number, nLo: number, nHi: number, end: number): number {
  if (nHi === 0) {
    const bytes = size * nLo; // < 2^49: exact
    return pos + bytes > end ? -1 : bytes;
  }
  const n = (BigInt(nHi) << 32n) | BigInt(nLo);
  const product = BigInt.asUintN(64, BigInt(size) * n);
  if (BigInt.asUintN(64, BigInt(pos) + product) > BigInt(end)) return -1;
  return Number(product & 0xffffffffn);
}

/**
 * Walks `n` fields at program address `prog` over the payload from `pos` to `end`. With `base` != 0
 * it stores the values of row `row` of a block of `count` rows. `first` is the index of the first
 * field walked (fields before it were copied at fixed offsets). Returns the position after the fields.
 */
function walk(
  s: CoreState, prog: number, n: number, pos: number, end: number, ptr: number, base: number, count: number, row: number,
  depth: number, first: number,
): number {
  const vals = depth * CLR_SCOPE_VALUES * 2;
  const U8 = s.u8, U16 = s.u16;
  const v = s.dv;
  const scope = s.scope;
  let p = prog >>> 1;
  for (let f = first; f < first + n; f++) {
    const w0 = U16[p + CLR_FIELD_KIND];
    const kind = w0 & CLR_KIND_MASK;
    const flags = w0 >>> CLR_FLAGS_SHIFT;
    const preA = U16[p + CLR_FIELD_PRE_A];
    const preB = U16[p + CLR_FIELD_PRE_B];
    const ref = U16[p + CLR_FIELD_REF];
    const words = U16[p + CLR_FIELD_LEN];
    let a = 0;
    let bLo = 0, bHi = 0;
    let vLo = 0, vHi = 0;
    let nLo = 1, nHi = 0;
    if ((flags & CLR_FLAG_COUNT_FIELD) !== 0) {
      if (ref < CLR_SCOPE_VALUES) { nLo = scope[vals + 2 * ref]; nHi = scope[vals + 2 * ref + 1]; }
      else nLo = 0;
    } else if ((flags & CLR_FLAG_COUNT_LITERAL) !== 0) nLo = ref;
    const isArray = (flags & (CLR_FLAG_COUNT_FIELD | CLR_FLAG_COUNT_LITERAL)) !== 0 && kind !== T_BINARY;

    if (kind === T_USTR) {
      a = pos;
      let q = pos;
      // [pos, end) lies in the record: aligned units through the u16 view, others bytewise
      if ((q & 1) === 0) {
        while (q + 2 <= end && U16[q >>> 1] !== 0) q += 2;
      } else {
        while (q + 2 <= end && (U8[q] | U8[q + 1]) !== 0) q += 2;
      }
      bLo = q - pos;
      if (q + 2 <= end) pos = q + 2;
      else { pos = end; s.clrTruncated = true; }
      if (bLo === 0 && a >= end) { s.clrTruncated = true; return pos; }
    } else if (kind === T_ASTR) {
      a = pos;
      let q = pos;
      while (q < end && U8[q] !== 0) q++;
      bLo = q - pos;
      if (q < end) pos = q + 1;
      else { pos = end; s.clrTruncated = true; }
      if (bLo === 0 && a >= end) { s.clrTruncated = true; return pos; }
    } else if (kind === T_BINARY) {
      const step = span(pos, 1, nLo, nHi, end);
      if (step < 0) { s.clrTruncated = true; return pos; }
      a = pos;
      bLo = nLo;
      bHi = nHi;
      pos = (pos + step) >>> 0;
    } else if (kind === T_STRUCT) {
      const nSub = U16[p + CLR_STRUCT_SUBS];
      a = pos;
      bLo = nLo;
      bHi = nHi;
      if ((flags & CLR_FLAG_PADDED_STRUCT) !== 0) {
        const size = ptr === 4 ? U16[p + CLR_STRUCT_SIZE32] : U16[p + CLR_STRUCT_SIZE64];
        const step = span(pos, size, nLo, nHi, end);
        if (step < 0) { s.clrTruncated = true; return pos; }
        pos = (pos + step) >>> 0;
      } else {
        if (depth >= CLR_MAX_DEPTH) { s.clrTruncated = true; return pos; }
        const sub = (p + CLR_STRUCT_WORDS) << 1;
        const total = nHi * TWO32 + nLo;
        for (let k = 0; k < total; k++) {
          const before = pos;
          pos = walk(s, sub, nSub, pos, end, ptr, 0, 0, 0, depth + 1, 0);
          if (s.clrTruncated) return pos;
          if (pos === before) break; // empty elements: nothing more to walk
        }
      }
    } else {
      const size = fixedSize(kind, ptr);
      if (isArray) {
        const step = span(pos, size, nLo, nHi, end);
        if (step < 0) { s.clrTruncated = true; return pos; }
        a = pos;
        bLo = nLo;
        bHi = nHi;
        pos = (pos + step) >>> 0;
      } else {
        if (((pos + size) >>> 0) > end) { s.clrTruncated = true; return pos; }
        if (kind === T_GUID || kind === T_SYSTEMTIME) {
          a = pos;
        } else if (size === 1) {
          if (kind === T_I8) { vLo = v.getInt8(pos) >>> 0; vHi = vLo > 0x7fffffff ? NONE32 : 0; }
          else vLo = v.getUint8(pos);
        } else if (size === 2) {
          if (kind === T_I16) { vLo = v.getInt16(pos, true) >>> 0; vHi = vLo > 0x7fffffff ? NONE32 : 0; }
          else vLo = v.getUint16(pos, true);
        } else if (size === 4) {
          vLo = v.getUint32(pos, true);
          if (kind === T_I32 && vLo > 0x7fffffff) vHi = NONE32;
        } else {
          vLo = v.getUint32(pos, true);
          vHi = v.getUint32(pos + 4, true);
        }
        pos = (pos + size) >>> 0;
      }
    }
    if (f < CLR_SCOPE_VALUES) {
      if (isArray || kind >= T_GUID) { scope[vals + 2 * f] = bLo; scope[vals + 2 * f + 1] = bHi; }
      else { scope[vals + 2 * f] = vLo; scope[vals + 2 * f + 1] = vHi; }
    }

    if (base !== 0 && preA !== CLR_NOT_STORED) {
      const isRef = isArray || kind === T_GUID || kind === T_SYSTEMTIME || kind >= T_USTR;
      if (isRef) {
        v.setUint32(base + count * preA + row * 4, a, true);
        if (preB !== CLR_NOT_STORED) v.setUint32(base + count * preB + row * 4, bLo, true);
      } else {
        const width = kind === T_PTR ? 8 : fixedSize(kind, 8);
        const at = base + count * preA + row * width;
        if (width === 1) v.setUint8(at, vLo & 0xff);
        else if (width === 2) v.setUint16(at, vLo & 0xffff, true);
        else if (width === 4) v.setUint32(at, vLo, true);
        else { v.setUint32(at, vLo, true); v.setUint32(at + 4, vHi, true); }
      }
    }
    p += words;
  }
  return pos;
}

function typeOf(s: CoreState, r: number, lookup: number, provClr: number, nProv: number): number {
  const prov = s.u16[(s.colProvider >>> 1) + r];
  if (prov >= nProv) return -1;
  const p = (s.u8[provClr + prov] << 24) >> 24;
  if (p < 0) return -1;
  const ht = s.u8[s.colHeaderType + r];
  if (ht !== HT_EVENT_HEADER32 && ht !== HT_EVENT_HEADER64) return -1;
  const id = s.u16[(s.colEventId >>> 1) + r];
  if (id >= CLR_MAX_ID) return -1;
  const ver = Math.min(s.u16[(s.colVersion >>> 1) + r], CLR_VERSIONS - 1);
  return (s.u16[(lookup >>> 1) + (p * CLR_MAX_ID + id) * CLR_VERSIONS + ver] << 16) >> 16;
}

/**
 * Fills the typed tables of the window's rows. `dir` receives a CLR_DIR_STRIDE-byte entry per type;
 * the blocks are carved from one region that the next window reuses. Returns the number of rows
 * placed in tables: all of them, or none when memory is exhausted.
 */
export function decodeClr(s: CoreState, program: number, typeStarts: number, nTypes: number, lookup: number, provClr: number, nProv: number, dir: number): number {
  const n = s.rowCount;
  s.u8.fill(0, dir, dir + nTypes * CLR_DIR_STRIDE);
  // entry of type t: u32 index d0 + t * DW (CLR_DIR_* offsets are multiples of 4)
  const d0 = dir >>> 2;
  const DW = CLR_DIR_STRIDE >>> 2, DC = CLR_DIR_COUNT >>> 2, DB = CLR_DIR_BLOCK >>> 2, DI = CLR_DIR_CURSOR >>> 2;
  // pass one: count rows per type, remembering each row's type for pass two
  // (the scratch lives outside linear memory, as the hash indices do)
  const types = new Int16Array(n);
  for (let r = 0; r < n; r++) {
    const t = typeOf(s, r, lookup, provClr, nProv);
    types[r] = t;
    if (t >= 0) s.u32[d0 + t * DW + DC]++;
  }
  let total = 0;
  for (let t = 0; t < nTypes; t++) {
    const count = s.u32[d0 + t * DW + DC];
    if (count === 0) continue;
    const prog = program + s.u32[(typeStarts >>> 2) + t] * 2;
    total += (count * s.u16[(prog >>> 1) + CLR_TYPE_ROW_BYTES] + 7) & ~7;
  }
  const fresh = s.highWater;
  let at = total > 0 ? clrRegionFor(s, total) : 0;
  if (at === 0) {
    s.u8.fill(0, dir, dir + nTypes * CLR_DIR_STRIDE);
    return 0;
  }
  let placed = 0;
  for (let t = 0; t < nTypes; t++) {
    const count = s.u32[d0 + t * DW + DC];
    if (count === 0) continue;
    const prog = program + s.u32[(typeStarts >>> 2) + t] * 2;
    const bytes = count * s.u16[(prog >>> 1) + CLR_TYPE_ROW_BYTES];
    // only what lies below the high-water mark can hold old bytes
    const written = Math.min(at + bytes, fresh);
    if (written > at) s.u8.fill(0, at, written);
    s.u32[d0 + t * DW + DB] = at;
    at += (bytes + 7) & ~7;
    placed += count;
  }
  // Nothing allocates from here on: the views stay valid.
  const U8 = s.u8, U16 = s.u16, U32 = s.u32;
  const v = s.dv;
  const scope = s.scope;
  const iPay = s.colPayloadOffset >>> 2, iPl = s.colPayloadLength >>> 1;
  for (let r = 0; r < n; r++) {
    const t = types[r];
    if (t < 0) continue;
    const d = d0 + t * DW;
    const count = U32[d + DC];
    if (count === 0) continue;
    const block = U32[d + DB];
    const i = U32[d + DI];
    U32[d + DI] = i + 1;
    const prog = program + U32[(typeStarts >>> 2) + t] * 2;
    const ph = prog >>> 1;
    const preRow = U16[ph + CLR_TYPE_PRE_ROW];
    const preStatus = U16[ph + CLR_TYPE_PRE_STATUS];
    const nFields = U16[ph + CLR_TYPE_FIELDS];
    const nFixed = U16[ph + CLR_TYPE_FIXED];
    U32[((block + count * preRow) >>> 2) + i] = r;
    const pos = U32[iPay + r];
    const end = pos + U16[iPl + r];
    const ptr = U8[s.colHeaderType + r] === HT_EVENT_HEADER32 ? 4 : 8;
    const fixedEnd = U16[ph + (ptr === 4 ? CLR_TYPE_FIXED_END32 : CLR_TYPE_FIXED_END64)];
    const fields = prog + 2 * (CLR_TYPE_WORDS + nFixed * CLR_FIXED_WORDS);
    s.clrTruncated = false;
    if (nFixed > 0 && pos + fixedEnd <= end) {
      // fast path: the fixed prefix, then walk the rest
      let e = ph + CLR_TYPE_WORDS;
      const wOff = ptr === 4 ? CLR_FIXED_OFF32 : CLR_FIXED_OFF64;
      const wSize = ptr === 4 ? CLR_FIXED_SIZE32 : CLR_FIXED_SIZE64;
      for (let f = 0; f < nFixed; f++) {
        const src = pos + U16[e + wOff];
        const size = U16[e + wSize];
        const width = U16[e + CLR_FIXED_SIZE64];
        const at = block + count * U16[e + CLR_FIXED_PRE] + i * width;
        let lo: number, hi = 0;
        if (size === 1) lo = U8[src];
        else if (size === 2) lo = v.getUint16(src, true);
        else if (size === 4) lo = v.getUint32(src, true);
        else { lo = v.getUint32(src, true); hi = v.getUint32(src + 4, true); }
        if (width === 1) U8[at] = lo;
        else if (width === 2) U16[at >>> 1] = lo;
        else if (width === 4) U32[at >>> 2] = lo;
        else { U32[at >>> 2] = lo; U32[(at >>> 2) + 1] = hi; }
        scope[2 * f] = lo;
        scope[2 * f + 1] = hi;
        e += CLR_FIXED_WORDS;
      }
      if (nFields > nFixed) {
        walk(s, fields + U16[ph + CLR_TYPE_REST] * 2, nFields - nFixed, pos + fixedEnd, end, ptr, block, count, i, 0, nFixed);
      }
    } else {
      walk(s, fields, nFields, pos, end, ptr, block, count, i, 0, 0);
    }
    if (s.clrTruncated) U8[block + count * preStatus + i] = CLR_STATUS_TRUNCATED;
  }
  return placed;
}
