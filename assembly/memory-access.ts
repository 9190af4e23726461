// Memory accessors of the sources both cores share (see scripts/gen-core-twin.mjs): a little-endian
// read or write of one width, fills and copies, the heap, the static blocks, and clz32. Here they are the
// WebAssembly loads and stores, inlined away, and the AssemblyScript runtime's heap;
// bindings/core/memory-access.ts gives the same names over an ArrayBuffer. `m` is the per-trace state
// (core-state.ts): here a struct at the fixed address STATE (there is one memory), there also the
// holder of the memory's views.

import { SharedState } from "./core-state";
import { MEMORY_MAX_PAGES, MAX_BLOCK, FILTER_BYTES, LH_SIZE, PROVIDER_BLOCK_BYTES, DIR_SLOTS } from "./codes";

export type Mem = SharedState;

/** The state struct of this instance's trace. */
export const STATE: Mem = changetype<Mem>(memory.data(offsetof<SharedState>(), 16));

// ---- static blocks: fixed addresses the bindings read and write ----
export const DIRECTORY_BLOCK: usize = memory.data(4 * DIR_SLOTS, 16); // the table directory (DIR_* slots, trace.ts)
export const LOGFILE_HEADER: usize = memory.data(LH_SIZE, 16); // TRACE_LOGFILE_HEADER fields (LH_*)
export const FILTER_BLOCK: usize = memory.data(FILTER_BYTES, 16); // the decode-time filter (FILTER_*)
export const PROVIDER_BLOCK: usize = memory.data(PROVIDER_BLOCK_BYTES, 16); // providers.ts's kernel groups and last lookup

/**
 * Rows that are not a record walk's are filled grouped by schema event (records.ts fillRowsOf): here each
 * fill's loop then runs over payloads near one another, which the cache repays.
 */
export const FILL_BY_EVENT: bool = true;

@inline export function ld8(m: Mem, p: usize): u32 { return <u32>load<u8>(p); }
@inline export function ld16(m: Mem, p: usize): u32 { return <u32>load<u16>(p); }
@inline export function ld32(m: Mem, p: usize): u32 { return load<u32>(p); }
@inline export function ldi32(m: Mem, p: usize): i32 { return load<i32>(p); }
@inline export function ldi16(m: Mem, p: usize): i32 { return <i32>load<i16>(p); }
@inline export function ldi8(m: Mem, p: usize): i32 { return <i32>load<i8>(p); }
@inline export function st8(m: Mem, p: usize, v: u32): void { store<u8>(p, v); }
@inline export function st16(m: Mem, p: usize, v: u32): void { store<u16>(p, v); }
@inline export function st32(m: Mem, p: usize, v: u32): void { store<u32>(p, v); }
// (the same at an address the caller knows to be a multiple of the width: the other core reads them as one
// typed-array element, small enough that its compiler inlines every one in a record walk)
@inline export function ld16a(m: Mem, p: usize): u32 { return <u32>load<u16>(p); }
@inline export function ldi16a(m: Mem, p: usize): i32 { return <i32>load<i16>(p); }
@inline export function ld32a(m: Mem, p: usize): u32 { return load<u32>(p); }
@inline export function st16a(m: Mem, p: usize, v: u32): void { store<u16>(p, v); }
@inline export function st32a(m: Mem, p: usize, v: u32): void { store<u32>(p, v); }
/** copy8 of 4-aligned addresses. */
@inline export function copy8a(m: Mem, dst: usize, src: usize): void { store<u64>(dst, load<u64>(src)); }
@inline export function ldf64(m: Mem, p: usize): f64 { return load<f64>(p); }
@inline export function stf64(m: Mem, p: usize, v: f64): void { store<f64>(p, v); }
/** The 8 bytes at `src` to `dst` (an i64 field, which the other core cannot hold in one number). */
@inline export function copy8(m: Mem, dst: usize, src: usize): void { store<u64>(dst, load<u64>(src)); }
/** Whether the i64 at `a` is less than the i64 at `b`. */
@inline export function lti64(m: Mem, a: usize, b: usize): bool { return load<i64>(a) < load<i64>(b); }
/** `n` bytes at `p` set to `byte`. */
@inline export function fill(m: Mem, p: usize, byte: u32, n: usize): void { memory.fill(p, <u8>byte, n); }
/** `n` bytes from `src` to `dst`; the ranges may overlap (memmove). */
@inline export function copyBytes(m: Mem, dst: usize, src: usize, n: usize): void { memory.copy(dst, src, n); }

/** Copies `n` bytes from `src` up to `dst` forward: where the ranges overlap, the source repeats. */
@inline export function copyMatch(m: Mem, dst: usize, src: usize, n: usize): void {
  if (dst - src >= n) {
    memory.copy(dst, src, n);
    return;
  }
  let stop = dst + n;
  while (dst < stop) {
    store<u8>(dst, load<u8>(src));
    dst++;
    src++;
  }
}

/** The low 32 bits of a product of two 32-bit values. */
@inline export function mul32(a: u32, b: u32): u32 { return a * b; }

/**
 * The event type index's hash (eventtypes.ts) of a key as five 32-bit words; the record walk hashes
 * it as 64-bit words (typeHash64), to the same value. (The keywords and tlc folded in by xor: a type's
 * first word mostly tells it apart, and this is per record; multiplying the keywords in first made a
 * whole decode 6-12% slower.)
 */
@inline export function typeHash(m: Mem, lo: u32, hi: u32, kwLo: u32, kwHi: u32, tlc: u32): u32 {
  return typeHash64((<u64>hi << 32) | <u64>lo, (<u64>kwHi << 32) | <u64>kwLo, tlc);
}

@inline export function typeHash64(key: u64, keywords: u64, tlc: u32): u32 {
  return <u32>(((key ^ keywords ^ <u64>tlc) * 0x9e3779b97f4a7c15) >> 32);
}

/** Leading zero bits of a 32-bit value (32 for 0). */
@inline export function clz32(x: i32): i32 { return clz<i32>(x); }

/**
 * Copies `n` (0 to 32) bytes from `src` to `dst`, ranges that do not overlap, reading the 32 bytes
 * at `src` and writing up to 32 at `dst`: the caller has room for both and overwrites the excess.
 */
@inline export function copyRun(m: Mem, dst: usize, src: usize, n: u32): void {
  store<u64>(dst, load<u64>(src));
  if (n > 8) {
    store<u64>(dst, load<u64>(src, 8), 8);
    if (n > 16) {
      store<u64>(dst, load<u64>(src, 16), 16);
      store<u64>(dst, load<u64>(src, 24), 24);
    }
  }
}

/**
 * copyMatch (`n` >= 1, `dst` > `src`) in 8 or 16 bytes a step, which may also write the 64 bytes
 * after `dst + n`: the caller has room for them and overwrites them.
 */
@inline export function copyMatchWide(m: Mem, dst: usize, src: usize, n: usize): void {
  let stop = dst + n;
  let offset = dst - src;
  if (offset >= 16) {
    // 64 bytes whatever the length (most matches are shorter), then the rest
    copy16(dst, src);
    copy16(dst + 16, src + 16);
    copy16(dst + 32, src + 32);
    copy16(dst + 48, src + 48);
    dst += 64;
    src += 64;
    while (dst < stop) {
      copy16(dst, src);
      dst += 16;
      src += 16;
    }
    return;
  }
  if (offset < 8) {
    // the first 8 bytes one at a time, then from a multiple of the offset back that is 8 or more
    for (let i: usize = 0; i < 8; i++) store<u8>(dst + i, load<u8>(src + i));
    dst += 8;
    let step = offset;
    while (step < 8) step += offset;
    src = dst - step;
  }
  while (dst < stop) {
    store<u64>(dst, load<u64>(src));
    dst += 8;
    src += 8;
  }
}

/** 16 bytes, all read before any is written. */
@inline function copy16(dst: usize, src: usize): void {
  let a = load<u64>(src);
  let b = load<u64>(src, 8);
  store<u64>(dst, a);
  store<u64>(dst, b, 8);
}

// ---- scans of the typed tables' strings (clr.ts), 16 bytes a step ----

/**
 * Position of the first zero UTF-16 unit at or after `q` (by two-byte steps), or where the units end
 * before `end` (then no unit of the rest is zero).
 */
export function scanUtf16(m: Mem, q: usize, end: usize): usize {
  // eight units at a time: a lane mask of the zero units
  let zero = i16x8.splat(0);
  while (q + 16 <= end) {
    let z = i16x8.bitmask(i16x8.eq(v128.load(q), zero));
    if (z != 0) return q + (<usize>ctz<u32>(z) << 1);
    q += 16;
  }
  while (q + 2 <= end && load<u16>(q) != 0) q += 2;
  return q;
}

/** Position of the first zero byte at or after `q`, or `end`. */
export function scanAnsi(m: Mem, q: usize, end: usize): usize {
  let zero = i8x16.splat(0);
  while (q + 16 <= end) {
    let z = i8x16.bitmask(i8x16.eq(v128.load(q), zero));
    if (z != 0) return q + <usize>ctz<u32>(z);
    q += 16;
  }
  while (q < end && load<u8>(q) != 0) q++;
  return q;
}

// ---- the heap: the runtime's allocator, which traps where it cannot grow; these return 0 instead ----

// The memory's maximum in pages: the bindings create the memory with this maximum (a decode's
// memory limit, or MEMORY_MAX_PAGES), and growing past it fails.
let memoryPages: u32 = MEMORY_MAX_PAGES;

/** Sets the memory's maximum (pages); 0 or anything above MEMORY_MAX_PAGES means MEMORY_MAX_PAGES. */
export function setMemoryPages(m: Mem, pages: u32): void {
  memoryPages = pages == 0 || pages > <u32>MEMORY_MAX_PAGES ? <u32>MEMORY_MAX_PAGES : pages;
}

/** Whether a memory limit below the most the core can address was set. */
export function memoryLimited(m: Mem): bool {
  return memoryPages < <u32>MEMORY_MAX_PAGES;
}

// Bytes of the heap's live blocks, headers included (the allocator keeps a block's size in the
// word before it, low two bits for flags).
let liveBytes: u64 = 0;

@inline function blockBytes(ptr: usize): u64 {
  return <u64>((load<usize>(ptr - sizeof<usize>()) & ~<usize>3) + sizeof<usize>());
}

/**
 * Whether the allocator can take `bytes` more without trapping: it traps when it needs memory to
 * grow and it cannot. It rounds a request up by at most 1/16 and adds block headers; growing takes
 * whole pages (the allocator doubles the memory where it can), up to the memory's maximum. Once the
 * memory has grown to its maximum, a request is served from blocks freed before: it is taken when
 * the live blocks leave room for it with an eighth of the memory to spare for fragmentation.
 */
export function heapFits(m: Mem, bytes: f64): bool {
  let need = <u64>bytes + (<u64>bytes >> 4) + 64;
  let pages = (need + 0x1ffff) >> 16;
  if (<u64>memory.size() + pages <= <u64>memoryPages) return true;
  let capacity = (<u64>memory.size() << 16) - <u64>__heap_base;
  return liveBytes + need + (capacity >> 3) <= capacity;
}

/** heap.alloc that returns 0 instead of trapping when memory is exhausted or the block passes MAX_BLOCK. */
export function allocate(m: Mem, bytes: usize): usize {
  if (bytes > <usize>MAX_BLOCK || !heapFits(m, <f64>bytes)) return 0;
  let p = heap.alloc(bytes);
  liveBytes += blockBytes(p);
  return p;
}

/**
 * heap.realloc that also takes a null pointer (the allocator's realloc does not). Returns 0, the
 * block left as it was, when memory is exhausted.
 */
export function resize(m: Mem, ptr: usize, bytes: usize): usize {
  if (ptr == 0) return allocate(m, bytes);
  if (!heapFits(m, <f64>bytes)) return 0;
  let before = blockBytes(ptr);
  let p = heap.realloc(ptr, bytes);
  liveBytes = liveBytes - before + blockBytes(p);
  return p;
}

/** heap.free, keeping the count of live bytes. */
export function release(m: Mem, ptr: usize): void {
  if (ptr == 0) return;
  liveBytes -= blockBytes(ptr);
  heap.free(ptr);
}
