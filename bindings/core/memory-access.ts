// Memory accessors of the sources both cores share (see scripts/gen-core-twin.mjs), over the
// TypeScript core's memory: the same names as assembly/memory-access.ts, where they are WebAssembly
// loads and stores (clz32: an instruction) and the AssemblyScript runtime's heap. `m` is the core's
// per-trace state, whose views follow the memory as it grows. V8 inlines these small functions into
// their callers.

import type { CoreState } from "./state.js";
import { MAX_BLOCK } from "../../assembly/codes.js";
import { MEMORY_LIMIT, STATIC_DIR, STATIC_FILTER, STATIC_LOGFILE, STATIC_PROVIDERS, heapAlloc, heapFree, heapRealloc } from "./memory.js";

export type Mem = CoreState;

// ---- static blocks: fixed addresses the bindings read and write ----
export const DIRECTORY_BLOCK = STATIC_DIR; // the table directory (DIR_* slots, trace.ts)
export const LOGFILE_HEADER = STATIC_LOGFILE; // TRACE_LOGFILE_HEADER fields (LH_*)
export const FILTER_BLOCK = STATIC_FILTER; // the decode-time filter (FILTER_*)
export const PROVIDER_BLOCK = STATIC_PROVIDERS; // providers.ts's kernel groups and last lookup

/**
 * Rows that are not a record walk's are filled one at a time, in row order (records.ts fillRowsOf): this
 * core's fills take one row a call, so grouping them by schema event first only adds passes (9% of a
 * 64 MiB .nettrace's whole decode).
 */
export const FILL_BY_EVENT = false;

export function ld8(m: Mem, p: number): number {
  return m.u8[p];
}

export function ld16(m: Mem, p: number): number {
  const b = m.u8;
  return b[p] | (b[p + 1] << 8);
}

/** Two bytes as a signed 16-bit integer. */
export function ldi16(m: Mem, p: number): number {
  return (ld16(m, p) << 16) >> 16;
}

/** A byte as a signed 8-bit integer. */
export function ldi8(m: Mem, p: number): number {
  return (m.u8[p] << 24) >> 24;
}

export function ld32(m: Mem, p: number): number {
  if ((p & 3) === 0) return m.u32[p >>> 2];
  const b = m.u8;
  return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
}

// ld16, ld32, st16, st32 and copy8 at an address the caller knows to be a multiple of the width (every
// field of a record header, every column): one typed-array element, small enough that V8 inlines every
// one in a record walk, where the general ones' alignment test used up its inlining budget and left
// values past 2^31 boxed on return.
export function ld16a(m: Mem, p: number): number {
  return m.u16[p >>> 1];
}

export function ldi16a(m: Mem, p: number): number {
  return (m.u16[p >>> 1] << 16) >> 16;
}

export function ld32a(m: Mem, p: number): number {
  return m.u32[p >>> 2];
}

export function st16a(m: Mem, p: number, v: number): void {
  m.u16[p >>> 1] = v;
}

export function st32a(m: Mem, p: number, v: number): void {
  m.u32[p >>> 2] = v;
}

/** copy8 of 4-aligned addresses. */
export function copy8a(m: Mem, dst: number, src: number): void {
  const u = m.u32;
  u[dst >>> 2] = u[src >>> 2];
  u[(dst >>> 2) + 1] = u[(src >>> 2) + 1];
}

/** Four bytes as a signed 32-bit integer: stays a small integer to V8 where a u32 past 2^31 would not. */
export function ldi32(m: Mem, p: number): number {
  if ((p & 3) === 0) return m.u32[p >>> 2] | 0;
  const b = m.u8;
  return b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24);
}

export function ldf64(m: Mem, p: number): number {
  return (p & 7) === 0 ? m.f64[p >>> 3] : m.dv.getFloat64(p, true);
}

export function stf64(m: Mem, p: number, v: number): void {
  if ((p & 7) === 0) m.f64[p >>> 3] = v;
  else m.dv.setFloat64(p, v, true);
}

/** Whether the i64 at `a` is less than the i64 at `b` (high words signed, then low words unsigned). */
export function lti64(m: Mem, a: number, b: number): boolean {
  const v = m.dv;
  const ha = v.getInt32(a + 4, true),
    hb = v.getInt32(b + 4, true);
  return ha !== hb ? ha < hb : v.getUint32(a, true) < v.getUint32(b, true);
}

/** The 8 bytes at `src` to `dst` (an i64 field, which a number cannot hold): two 32-bit words. */
export function copy8(m: Mem, dst: number, src: number): void {
  const v = m.dv;
  v.setUint32(dst, v.getUint32(src, true), true);
  v.setUint32(dst + 4, v.getUint32(src + 4, true), true);
}

/** `n` bytes at `p` set to `byte`. */
export function fill(m: Mem, p: number, byte: number, n: number): void {
  m.u8.fill(byte, p, p + n);
}

/** `n` bytes from `src` to `dst`; the ranges may overlap (memmove). */
export function copyBytes(m: Mem, dst: number, src: number, n: number): void {
  m.u8.copyWithin(dst, src, src + n);
}

export function st8(m: Mem, p: number, v: number): void {
  m.u8[p] = v;
}

/** Two bytes; an even address is one store. */
export function st16(m: Mem, p: number, v: number): void {
  if ((p & 1) === 0) m.u16[p >>> 1] = v;
  else m.dv.setUint16(p, v, true);
}

/** Four bytes; a multiple of 4 (every use so far) is one store, others go through the DataView. */
export function st32(m: Mem, p: number, v: number): void {
  if ((p & 3) === 0) m.u32[p >>> 2] = v;
  else m.dv.setUint32(p, v, true);
}

/** Copies `n` bytes from `src` up to `dst` forward: where the ranges overlap, the source repeats. */
export function copyMatch(m: Mem, dst: number, src: number, n: number): void {
  const stop = dst + n;
  if (dst - src >= n && n > 32) {
    m.u8.copyWithin(dst, src, stop - (dst - src));
    return;
  }
  // four bytes a step while each read lies wholly before the write position
  if (dst - src >= 4) {
    const v = m.dv;
    for (; dst + 4 <= stop; dst += 4, src += 4) v.setUint32(dst, v.getUint32(src, true), true);
  }
  const b = m.u8;
  while (dst < stop) b[dst++] = b[src++];
}

/** The low 32 bits of a product of two 32-bit values. */
export function mul32(a: number, b: number): number {
  return Math.imul(a, b) >>> 0;
}

/** The event type index's hash (eventtypes.ts) of a key as five 32-bit words (the other core's is its own). */
export function typeHash(m: Mem, lo: number, hi: number, kwLo: number, kwHi: number, tlc: number): number {
  // (the keywords and tlc folded in by xor: a type's first word mostly tells it apart, and this is per record)
  let h = Math.imul(lo ^ kwLo ^ tlc ^ Math.imul(hi ^ kwHi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) >>> 0;
}

/** Leading zero bits of a 32-bit value (32 for 0). */
export function clz32(x: number): number {
  return Math.clz32(x);
}

/**
 * Copies `n` (0 to 32) bytes from `src` to `dst`, ranges that do not overlap, 4 bytes a step: may
 * write up to 3 bytes more (the other core's up to 32 bytes at `dst`).
 */
export function copyRun(m: Mem, dst: number, src: number, n: number): void {
  const v = m.dv;
  for (let i = 0; i < n; i += 4) v.setInt32(dst + i, v.getInt32(src + i, true), true);
}

/** copyMatch (`n` >= 1, `dst` > `src`), which may write up to 3 bytes more here (64 in the other core). */
export function copyMatchWide(m: Mem, dst: number, src: number, n: number): void {
  const stop = dst + n;
  if (dst - src >= 4) {
    const v = m.dv;
    for (; dst < stop; dst += 4, src += 4) v.setInt32(dst, v.getInt32(src, true), true);
    return;
  }
  const b = m.u8;
  while (dst < stop) b[dst++] = b[src++];
}

// ---- the heap (memory.ts): blocks that return 0 where the memory cannot grow ----

export { setMemoryPages } from "./memory.js";

/** Whether a memory limit below the most the core can address was set. */
export function memoryLimited(m: Mem): boolean {
  return m.memoryLimit < MEMORY_LIMIT;
}

/** Whether `bytes` more can be allocated (the memory may grow to its limit). */
export function heapFits(m: Mem, bytes: number): boolean {
  return m.top + bytes <= m.memoryLimit;
}

/** A block of `bytes`, or 0 when memory is exhausted or the block passes MAX_BLOCK (as the other core's allocator). */
export function allocate(m: Mem, bytes: number): number {
  return bytes > MAX_BLOCK ? 0 : heapAlloc(m, bytes);
}

/** realloc that also takes a null pointer. Returns 0, the block left as it was, when memory is exhausted. */
export function resize(m: Mem, ptr: number, bytes: number): number {
  return ptr === 0 ? heapAlloc(m, bytes) : heapRealloc(m, ptr, bytes);
}

/** Frees a block (0: nothing). */
export function release(m: Mem, ptr: number): void {
  if (ptr !== 0) heapFree(m, ptr);
}

// ---- scans of the typed tables' strings (clr.ts; the other core's take 16 bytes a step) ----

/**
 * Position of the first zero UTF-16 unit at or after `q` (by two-byte steps), or where the units end
 * before `end` (then no unit of the rest is zero).
 */
export function scanUtf16(m: Mem, q: number, end: number): number {
  if ((q & 1) === 0) {
    const U16 = m.u16;
    while (q + 2 <= end && U16[q >>> 1] !== 0) q += 2;
  } else {
    const U8 = m.u8;
    while (q + 2 <= end && (U8[q] | U8[q + 1]) !== 0) q += 2;
  }
  return q;
}

/** Position of the first zero byte at or after `q`, or `end`. */
export function scanAnsi(m: Mem, q: number, end: number): number {
  const U8 = m.u8;
  while (q < end && U8[q] !== 0) q++;
  return q;
}
