// Typed tables for .NET runtime events (assembly/clr.ts): one struct-of-arrays block per (provider,
// id, version), one column per top-level field, filled as the record walk writes each row: through the
// generated fast path of its schema event (clr-fill.ts), or the field program walked here, the
// reference (bindings/schema/clr-program.ts; its layout: the CLR_TYPE_*, CLR_FIXED_*, CLR_FIELD_*,
// CLR_STRUCT_* and CLR_FLAG_* words of codes.ts). A block holds CLR_DIR_CAP rows: column k starts at
// block + cap * pre(k). u64 values move as two u32 words; counts past 2^32 go through BigInt, off the
// common path.

import * as codes from "../../assembly/codes.js";
import { allocate, release, clrInit } from "./tables.js";
import type { CoreState } from "./state.js";
import { MEMORY_LIMIT } from "./memory.js";

// module consts, not imported bindings: V8 folds the former but loads the latter at every use (read by
// name: destructuring the namespace would keep every code in an app's bundle)
const T_U8 = codes.T_U8, T_I8 = codes.T_I8, T_U16 = codes.T_U16, T_I16 = codes.T_I16, T_U32 = codes.T_U32,
  T_I32 = codes.T_I32, T_U64 = codes.T_U64, T_I64 = codes.T_I64, T_F32 = codes.T_F32, T_F64 = codes.T_F64,
  T_BOOL = codes.T_BOOL, T_PTR = codes.T_PTR, T_GUID = codes.T_GUID, T_FILETIME = codes.T_FILETIME,
  T_SYSTEMTIME = codes.T_SYSTEMTIME, T_USTR = codes.T_USTR, T_ASTR = codes.T_ASTR, T_BINARY = codes.T_BINARY,
  T_STRUCT = codes.T_STRUCT, HT_EVENT_HEADER32 = codes.HT_EVENT_HEADER32,
  HT_EVENT_HEADER64 = codes.HT_EVENT_HEADER64,
  CLR_DIR_COUNT = codes.CLR_DIR_COUNT, CLR_DIR_BLOCK = codes.CLR_DIR_BLOCK, CLR_DIR_CAP = codes.CLR_DIR_CAP,
  CLR_MAX_ID = codes.CLR_MAX_ID, CLR_VERSIONS = codes.CLR_VERSIONS,
  CLR_STATUS_TRUNCATED = codes.CLR_STATUS_TRUNCATED, CLR_TYPE_ROW_BYTES = codes.CLR_TYPE_ROW_BYTES,
  CLR_TYPE_PRE_ROW = codes.CLR_TYPE_PRE_ROW, CLR_TYPE_PRE_STATUS = codes.CLR_TYPE_PRE_STATUS,
  CLR_TYPE_FIELDS = codes.CLR_TYPE_FIELDS, CLR_TYPE_FIXED = codes.CLR_TYPE_FIXED,
  CLR_TYPE_WORDS = codes.CLR_TYPE_WORDS, CLR_FIXED_WORDS = codes.CLR_FIXED_WORDS,
  CLR_FIELD_KIND = codes.CLR_FIELD_KIND, CLR_FIELD_PRE_A = codes.CLR_FIELD_PRE_A,
  CLR_FIELD_PRE_B = codes.CLR_FIELD_PRE_B, CLR_FIELD_REF = codes.CLR_FIELD_REF, CLR_FIELD_LEN = codes.CLR_FIELD_LEN,
  CLR_STRUCT_SUBS = codes.CLR_STRUCT_SUBS, CLR_STRUCT_SIZE32 = codes.CLR_STRUCT_SIZE32,
  CLR_STRUCT_SIZE64 = codes.CLR_STRUCT_SIZE64, CLR_STRUCT_WORDS = codes.CLR_STRUCT_WORDS,
  CLR_FLAGS_SHIFT = codes.CLR_FLAGS_SHIFT, CLR_KIND_MASK = codes.CLR_KIND_MASK,
  CLR_FLAG_COUNT_FIELD = codes.CLR_FLAG_COUNT_FIELD, CLR_FLAG_COUNT_LITERAL = codes.CLR_FLAG_COUNT_LITERAL,
  CLR_FLAG_PADDED_STRUCT = codes.CLR_FLAG_PADDED_STRUCT, CLR_NOT_STORED = codes.CLR_NOT_STORED,
  CLR_SCOPE_VALUES = codes.CLR_SCOPE_VALUES, CLR_MAX_DEPTH = codes.CLR_MAX_DEPTH;

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
 * it stores the values of row `row` of a block of `count` (its CLR_DIR_CAP) rows. Returns the position
 * after the fields.
 */
function walk(
  s: CoreState, prog: number, n: number, pos: number, end: number, ptr: number, base: number, count: number, row: number,
  depth: number,
): number {
  const vals = depth * CLR_SCOPE_VALUES * 2;
  const U16 = s.u16;
  const v = s.dv;
  const scope = s.scope;
  let p = prog >>> 1;
  for (let f = 0; f < n; f++) {
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
      q = scanUtf16(s, q, end);
      bLo = q - pos;
      if (q + 2 <= end) pos = q + 2;
      else { pos = end; s.clrTruncated = true; }
      if (bLo === 0 && a >= end) { s.clrTruncated = true; return pos; }
    } else if (kind === T_ASTR) {
      a = pos;
      const q = scanAnsi(s, pos, end);
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
          pos = walk(s, sub, nSub, pos, end, ptr, 0, 0, 0, depth + 1);
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

/**
 * Position of the first zero UTF-16 unit at or after `q` (by two-byte steps), or where the units end
 * before `end` (then no unit of the rest is zero).
 */
export function scanUtf16(s: CoreState, q: number, end: number): number {
  if ((q & 1) === 0) {
    const U16 = s.u16;
    while (q + 2 <= end && U16[q >>> 1] !== 0) q += 2;
  } else {
    const U8 = s.u8;
    while (q + 2 <= end && (U8[q] | U8[q + 1]) !== 0) q += 2;
  }
  return q;
}

/** Position of the first zero byte at or after `q`, or `end`. */
export function scanAnsi(s: CoreState, q: number, end: number): number {
  const U8 = s.u8;
  while (q < end && U8[q] !== 0) q++;
  return q;
}

/**
 * Turns the typed tables on (assembly/clr.ts setClr): the field program, each schema event's first
 * word, the lookup and the CLR providers' GUIDs. False when memory is exhausted (index.ts first checks
 * that the program is the one the fast paths of clr-fill.ts were generated for).
 */
export function setClr(s: CoreState, words: number, starts: number, nTypes: number, table: number, guids: number, nGuids: number): boolean {
  if (!clrInit(s, nTypes)) return false;
  s.clrProgram = words;
  s.clrStarts = starts;
  s.clrLookup = table;
  s.clrGuids = guids;
  s.clrGuidCount = nGuids;
  s.clrOn = true;
  return true;
}

/** The CLR provider index of a GUID (four little-endian words), -1 for others. */
export function clrProviderOf(s: CoreState, guid: number): number {
  const U32 = s.u32;
  const v = s.dv;
  const g0 = v.getUint32(guid, true), g1 = v.getUint32(guid + 4, true), g2 = v.getUint32(guid + 8, true), g3 = v.getUint32(guid + 12, true);
  for (let i = 0; i < s.clrGuidCount; i++) {
    const w = (s.clrGuids + 16 * i) >>> 2;
    if (U32[w] === g0 && U32[w + 1] === g1 && U32[w + 2] === g2 && U32[w + 3] === g3) return i;
  }
  return -1;
}

/** The schema event of rows of (CLR provider `p`, header type, id, version), -1 when none. */
export function clrEventOf(s: CoreState, p: number, headerType: number, id: number, version: number): number {
  if (p < 0 || !s.clrOn) return -1;
  if (headerType !== HT_EVENT_HEADER32 && headerType !== HT_EVENT_HEADER64) return -1;
  if (id >= CLR_MAX_ID) return -1;
  const ver = Math.min(version, CLR_VERSIONS - 1);
  return (s.u16[(s.clrLookup >>> 1) + (p * CLR_MAX_ID + id) * CLR_VERSIONS + ver] << 16) >> 16;
}

/** Program address of schema event `t`'s entry. */
function prog(s: CoreState, t: number): number {
  return s.clrProgram + s.u32[(s.clrStarts >>> 2) + t] * 2;
}

/** The first field entry of a schema event's program (after its header and fixed entries). */
function fieldsOf(s: CoreState, pr: number): number {
  return pr + 2 * (CLR_TYPE_WORDS + s.u16[(pr >>> 1) + CLR_TYPE_FIXED] * CLR_FIXED_WORDS);
}

/** Whether a top-level field is stored as a reference (offset, and length or count). */
function isRefField(kind: number, flags: number): boolean {
  const isArray = (flags & (CLR_FLAG_COUNT_FIELD | CLR_FLAG_COUNT_LITERAL)) !== 0 && kind !== T_BINARY;
  return isArray || kind === T_GUID || kind === T_SYSTEMTIME || kind >= T_USTR;
}

/** Zeroes row `row` of every column of schema event `t`'s block (but the row index). */
function zeroRow(s: CoreState, t: number, base: number, cap: number, row: number): void {
  const pr = prog(s, t);
  const U16 = s.u16, U8 = s.u8;
  U8[base + cap * U16[(pr >>> 1) + CLR_TYPE_PRE_STATUS] + row] = 0;
  const n = U16[(pr >>> 1) + CLR_TYPE_FIELDS];
  let p = fieldsOf(s, pr) >>> 1;
  for (let f = 0; f < n; f++) {
    const w0 = U16[p + CLR_FIELD_KIND];
    const kind = w0 & CLR_KIND_MASK;
    const preA = U16[p + CLR_FIELD_PRE_A];
    const preB = U16[p + CLR_FIELD_PRE_B];
    if (isRefField(kind, w0 >>> CLR_FLAGS_SHIFT)) {
      U8.fill(0, base + cap * preA + row * 4, base + cap * preA + row * 4 + 4);
      if (preB !== CLR_NOT_STORED) U8.fill(0, base + cap * preB + row * 4, base + cap * preB + row * 4 + 4);
    } else {
      const width = kind === T_PTR ? 8 : fixedSize(kind, 8);
      const at = base + cap * preA + row * width;
      U8.fill(0, at, at + width);
    }
    p += U16[p + CLR_FIELD_LEN];
  }
}

/**
 * Row `row` of schema event `t`'s block (of `cap` rows at `base`) from the field program, for the
 * record whose payload is [q, end): every field the payload holds, the rest 0, and the status.
 */
export function clrSlow(s: CoreState, t: number, base: number, cap: number, row: number, q: number, end: number, p8: boolean): void {
  const pr = prog(s, t);
  zeroRow(s, t, base, cap, row);
  s.clrTruncated = false;
  walk(s, fieldsOf(s, pr), s.u16[(pr >>> 1) + CLR_TYPE_FIELDS], q, end, p8 ? 8 : 4, base, cap, row, 0);
  if (s.clrTruncated) s.u8[base + cap * s.u16[(pr >>> 1) + CLR_TYPE_PRE_STATUS] + row] = CLR_STATUS_TRUNCATED;
}

/** A row of schema event `t` filled by the field program alone (events without a fast path). */
export function clrSlowRow(s: CoreState, t: number, d: number, row: number, q: number, end: number, p8: boolean): void {
  const i = clrRow(s, t, d);
  if (i < 0) return;
  const base = s.u32[(d + CLR_DIR_BLOCK) >>> 2], cap = s.u32[(d + CLR_DIR_CAP) >>> 2];
  s.u32[((base + cap * s.u16[(prog(s, t) >>> 1) + CLR_TYPE_PRE_ROW]) >>> 2) + i] = row;
  clrSlow(s, t, base, cap, i, q, end, p8);
}

/** Moves schema event `t`'s block to one of `cap` rows, its `count` rows copied; false when memory is exhausted. */
function growBlock(s: CoreState, t: number, d: number, count: number, cap: number): boolean {
  const pr = prog(s, t);
  const rowBytes = s.u16[(pr >>> 1) + CLR_TYPE_ROW_BYTES];
  const fresh = allocate(s, cap * rowBytes);
  if (fresh === 0) return false;
  const U8 = s.u8, U16 = s.u16, U32 = s.u32;
  const old = U32[(d + CLR_DIR_BLOCK) >>> 2];
  const oldCap = U32[(d + CLR_DIR_CAP) >>> 2];
  const move = (pre: number, bytes: number) => U8.copyWithin(fresh + cap * pre, old + oldCap * pre, old + oldCap * pre + bytes);
  if (old !== 0 && count > 0) {
    move(U16[(pr >>> 1) + CLR_TYPE_PRE_ROW], count * 4);
    move(U16[(pr >>> 1) + CLR_TYPE_PRE_STATUS], count);
    const n = U16[(pr >>> 1) + CLR_TYPE_FIELDS];
    let p = fieldsOf(s, pr) >>> 1;
    for (let f = 0; f < n; f++) {
      const w0 = U16[p + CLR_FIELD_KIND];
      const kind = w0 & CLR_KIND_MASK;
      const preB = U16[p + CLR_FIELD_PRE_B];
      if (isRefField(kind, w0 >>> CLR_FLAGS_SHIFT)) {
        move(U16[p + CLR_FIELD_PRE_A], count * 4);
        if (preB !== CLR_NOT_STORED) move(preB, count * 4);
      } else move(U16[p + CLR_FIELD_PRE_A], count * (kind === T_PTR ? 8 : fixedSize(kind, 8)));
      p += U16[p + CLR_FIELD_LEN];
    }
  }
  if (old !== 0) release(s, old);
  U32[(d + CLR_DIR_BLOCK) >>> 2] = fresh;
  U32[(d + CLR_DIR_CAP) >>> 2] = cap;
  return true;
}

/**
 * The next row of schema event `t`'s table (`d`: its directory entry), the block grown when full;
 * the caller writes it, after taking its views again (growing may move the memory). -1 when memory is
 * exhausted (the row is counted as missing).
 */
export function clrRow(s: CoreState, t: number, d: number): number {
  const n = s.u32[(d + CLR_DIR_COUNT) >>> 2];
  const cap = s.u32[(d + CLR_DIR_CAP) >>> 2];
  // (by four from 1,024 rows, under a memory limit by doubling from 64; near the memory's end a quarter
  // more, then one row more, as the WebAssembly core does)
  if (n >= cap && !growBlock(s, t, d, n, s.memoryLimit < MEMORY_LIMIT ? Math.max(cap * 2, 64) : Math.max(cap * 4, 1024)) && !growBlock(s, t, d, n, Math.max(n + 1, cap + (cap >> 2))) && !growBlock(s, t, d, n, n + 1)) {
    s.clrMissing++;
    return -1;
  }
  s.u32[(d + CLR_DIR_COUNT) >>> 2] = n + 1;
  s.clrRows++;
  return n;
}

/**
 * Adds `delta` (mod 2^32) to the references of rows [from, to) of schema event `t`'s table (`d`: its
 * directory entry) that are not 0 (assembly/clr.ts clrMoveRefs).
 */
export function clrMoveRefs(s: CoreState, t: number, d: number, from: number, to: number, delta: number): void {
  if (from >= to || delta === 0) return;
  const U16 = s.u16, U32 = s.u32;
  const base = U32[(d + CLR_DIR_BLOCK) >>> 2], cap = U32[(d + CLR_DIR_CAP) >>> 2];
  const pr = prog(s, t);
  const n = U16[(pr >>> 1) + CLR_TYPE_FIELDS];
  let p = fieldsOf(s, pr) >>> 1;
  for (let f = 0; f < n; f++) {
    const w0 = U16[p + CLR_FIELD_KIND];
    if (isRefField(w0 & CLR_KIND_MASK, w0 >>> CLR_FLAGS_SHIFT)) {
      const col = (base + cap * U16[p + CLR_FIELD_PRE_A]) >>> 2;
      for (let r = from; r < to; r++) if (U32[col + r] !== 0) U32[col + r] = (U32[col + r] + delta) >>> 0;
    }
    p += U16[p + CLR_FIELD_LEN];
  }
}

/** `n` values of `width` bytes (1, 2, 4 or 8) of the column at `col`: value i of `tmp` is value src[i]'s, then copied back. */
function gatherColumn(s: CoreState, col: number, width: number, src: number, n: number, tmp: number): void {
  const U8 = s.u8, U32 = s.u32;
  for (let i = 0; i < n; i++) {
    const a = col + U32[(src >>> 2) + i] * width;
    U8.copyWithin(tmp + i * width, a, a + width);
  }
  U8.copyWithin(col, tmp, tmp + n * width);
}

/**
 * Puts the first `n` rows of schema event `t`'s table (`d`: its directory entry) in another order:
 * row i becomes what row src[i] was (u32 each), its row index rows[i]. `tmp`: room for `n` values of
 * 8 bytes.
 */
export function clrPermute(s: CoreState, t: number, d: number, src: number, rows: number, n: number, tmp: number): void {
  const U16 = s.u16, U32 = s.u32;
  const base = U32[(d + CLR_DIR_BLOCK) >>> 2], cap = U32[(d + CLR_DIR_CAP) >>> 2];
  const pr = prog(s, t);
  s.u8.copyWithin(base + cap * U16[(pr >>> 1) + CLR_TYPE_PRE_ROW], rows, rows + n * 4);
  gatherColumn(s, base + cap * U16[(pr >>> 1) + CLR_TYPE_PRE_STATUS], 1, src, n, tmp);
  const nf = U16[(pr >>> 1) + CLR_TYPE_FIELDS];
  let p = fieldsOf(s, pr) >>> 1;
  for (let f = 0; f < nf; f++) {
    const w0 = U16[p + CLR_FIELD_KIND];
    const kind = w0 & CLR_KIND_MASK;
    const preB = U16[p + CLR_FIELD_PRE_B];
    if (isRefField(kind, w0 >>> CLR_FLAGS_SHIFT)) {
      gatherColumn(s, base + cap * U16[p + CLR_FIELD_PRE_A], 4, src, n, tmp);
      if (preB !== CLR_NOT_STORED) gatherColumn(s, base + cap * preB, 4, src, n, tmp);
    } else gatherColumn(s, base + cap * U16[p + CLR_FIELD_PRE_A], kind === T_PTR ? 8 : fixedSize(kind, 8), src, n, tmp);
    p += U16[p + CLR_FIELD_LEN];
  }
}
