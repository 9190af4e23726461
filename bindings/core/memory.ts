// Linear memory of the TypeScript core: an ArrayBuffer standing in for the WebAssembly memory, and
// the allocator the AssemblyScript runtime gives the other core (heap.alloc, heap.free,
// heap.realloc). Addresses are byte offsets into the buffer. It grows by allocating a larger one
// and copying, so callers take their views again after anything that may allocate.

import { MEMORY_MAX_PAGES, DIR_SLOTS, LH_SIZE, FILTER_BYTES, PROVIDER_BLOCK_BYTES } from "../../assembly/codes.js";

/** What the memory and its allocator keep of a core's state (state.ts CoreMemory holds it): this module's own, so that it need not import the state. */
export interface CoreMemory {
  u8: Uint8Array;
  u16: Uint16Array;
  u32: Uint32Array;
  f64: Float64Array;
  dv: DataView;
  readonly memory: { buffer: ArrayBuffer };
  top: number;
  highWater: number;
  memoryLimit: number;
  freeBlocks: number[];
  takeBuffer: (bytes: number) => ArrayBuffer;
}

// ---- static data (the WebAssembly module's memory.data): fixed addresses ----
export const STATIC_DIR = 64; // DIR_SLOTS u32 slots
export const STATIC_LOGFILE = (STATIC_DIR + 4 * DIR_SLOTS + 63) & ~63; // LH_SIZE bytes
export const STATIC_FILTER = (STATIC_LOGFILE + LH_SIZE + 63) & ~63; // FILTER_BYTES bytes
export const STATIC_PROVIDERS = (STATIC_FILTER + FILTER_BYTES + 63) & ~63; // PROVIDER_BLOCK_BYTES bytes
export const HEAP_BASE = (STATIC_PROVIDERS + PROVIDER_BLOCK_BYTES + 63) & ~63;

/**
 * A core's first memory: one WebAssembly page. A power of four, so growth (fourfold) reaches the sizes it did
 * from 1 MiB; smaller, so that a small decode (a metadata walk, a fuzz input) does not zero 1 MiB it never uses.
 */
export const INITIAL_MEMORY = 1 << 16;
export const MEMORY_LIMIT = MEMORY_MAX_PAGES * 65536 - 65536; // addresses are u32

/**
 * Sets the most the memory may grow to, as the WebAssembly memory's maximum does for the other
 * core: `pages` of 64 KiB (0: MEMORY_LIMIT).
 */
export function setMemoryPages(s: CoreMemory, pages: number): void {
  s.memoryLimit = pages > 0 ? Math.min(MEMORY_LIMIT, pages * 65536) : MEMORY_LIMIT;
}

/** `n` rounded up to a multiple of 8; sizes may pass 2^31, beyond the bitwise operators. */
function alignSize(n: number): number {
  return n + (-n & 7);
}

export function setBuffer(s: CoreMemory, b: ArrayBuffer): void {
  s.memory.buffer = b;
  s.u8 = new Uint8Array(b);
  s.u16 = new Uint16Array(b);
  s.u32 = new Uint32Array(b);
  s.f64 = new Float64Array(b);
  s.dv = new DataView(b);
}

/** Buffers this large are mapped, their pages zero until written; smaller ones are zeroed when made. */
const ZEROED_BELOW = 32 << 20;

/**
 * Makes the memory at least `end` bytes long, keeping the bytes in use; false when it cannot grow.
 * `estimate`: `end` is what the caller will need, estimated: below 32 MiB a quarter more is taken, not the
 * next fourfold step (which a later growth, copying little, can still take).
 */
export function reserveMemory(s: CoreMemory, end: number, estimate = false): boolean {
  if (end <= s.u8.length) return true;
  const limit = s.memoryLimit;
  if (end > limit) return false;
  // Grow fourfold: every growth copies the bytes in use. (The pages of a buffer of 32 MiB or more cost
  // nothing until written; a smaller one is zeroed when made: 2.5 ms for 16 MiB, 0.7 ms for 4 MiB.)
  let cap = s.u8.length;
  while (cap < end) cap = Math.min(cap * 4, limit);
  if (estimate && cap < ZEROED_BELOW) cap = Math.max(end, Math.min(cap, (end + (end >>> 2) + 0xffff) & ~0xffff, limit));
  let next: ArrayBuffer;
  try {
    next = s.takeBuffer(cap);
  } catch {
    // the platform refused that much: try the least that will do
    try {
      next = new ArrayBuffer(end);
    } catch {
      return false;
    }
  }
  new Uint8Array(next).set(s.u8.subarray(0, s.top));
  setBuffer(s, next);
  return true;
}

// Blocks carry their size (u32, bytes asked for) and capacity (u32, bytes they span) in the 8 bytes
// before them. Freed blocks below the top wait in a free list (outside linear memory, as the hash
// indices are) for a request they can hold; a freed top block lowers the top, and so do the free
// blocks it then ends at. Windows reuse their memory, so after the first few nothing is allocated.

/** A block of `size` bytes, or 0 when memory is exhausted. */
export function heapAlloc(s: CoreMemory, size: number): number {
  const cap = alignSize(size);
  // the smallest free block that holds it
  let best = -1;
  const free = s.freeBlocks;
  for (let i = 0; i < free.length; i++) {
    const c = s.u32[(free[i] - 4) >>> 2];
    if (c >= cap && (best < 0 || c < s.u32[(free[best] - 4) >>> 2])) best = i;
  }
  if (best >= 0) {
    const p = free[best];
    free[best] = free[free.length - 1];
    free.pop();
    s.u32[(p - 8) >>> 2] = size;
    return p;
  }
  const p = s.top + 8;
  const end = p + cap;
  if (!reserveMemory(s, end)) return 0;
  s.top = end;
  if (end > s.highWater) s.highWater = end;
  s.u32[(p - 8) >>> 2] = size;
  s.u32[(p - 4) >>> 2] = cap;
  return p;
}

export function heapFree(s: CoreMemory, p: number): void {
  if (p === 0) return;
  const free = s.freeBlocks;
  if (p + s.u32[(p - 4) >>> 2] !== s.top) {
    free.push(p);
    return;
  }
  s.top = p - 8;
  // free blocks that now end at the top go too
  for (let i = 0; i < free.length; ) {
    const q = free[i];
    if (q + s.u32[(q - 4) >>> 2] === s.top) {
      s.top = q - 8;
      free[i] = free[free.length - 1];
      free.pop();
      i = 0;
    } else i++;
  }
}

/** The last block grows in place, and any block within its capacity; others move. 0, the block left as it was, when memory is exhausted. */
export function heapRealloc(s: CoreMemory, p: number, size: number): number {
  const old = s.u32[(p - 8) >>> 2];
  const cap = s.u32[(p - 4) >>> 2];
  if (p + cap === s.top) {
    const end = p + alignSize(size);
    if (!reserveMemory(s, end)) return 0;
    s.top = end;
    if (end > s.highWater) s.highWater = end;
    s.u32[(p - 8) >>> 2] = size;
    s.u32[(p - 4) >>> 2] = alignSize(size);
    return p;
  }
  if (alignSize(size) <= cap) {
    s.u32[(p - 8) >>> 2] = size;
    return p;
  }
  const q = heapAlloc(s, size);
  if (q !== 0) {
    s.u8.copyWithin(q, p, p + Math.min(old, size));
    heapFree(s, p);
  }
  return q;
}
