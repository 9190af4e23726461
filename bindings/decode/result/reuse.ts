// Memory of disposed traces, kept a little while for the next decode to write its tables into.
// A fresh page costs a page fault when first written (2-8 µs per 4 KiB on virtual machines: for a
// trace of 1 GiB, more than decoding it); memory written before costs none. So the buffers a built
// trace's columns, typed tables and record bytes live in go back here when it is disposed, and the
// next decode takes them instead of allocating. What is not taken soon is let go.

const pool: ArrayBuffer[] = [];
let pooled = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
/** At most this much is kept, and for at most this long. */
const MAX_POOLED = 4 * 2 ** 30;
const KEEP_MS = 10_000;

/** An ArrayBuffer of at least `bytes` (its contents are not zeroed when it was used before, unless `zeroed`: then its first `bytes` are). */
export function takeBuffer(bytes: number, zeroed = false): ArrayBuffer {
  const best = bestFit(pool, bytes);
  if (best < 0) {
    // (a size of a few classes, an eighth of a power of two apart: the next request of about the size finds
    // it, where exact sizes would leave a stream's windows, each a little different, adding to the pool)
    const rounded = sizeClass(bytes);
    try {
      return new ArrayBuffer(rounded);
    } catch (error) {
      if (rounded === bytes) throw error;
      return new ArrayBuffer(bytes);
    }
  }
  const [buffer] = pool.splice(best, 1);
  pooled -= buffer.byteLength;
  // (a fresh buffer is zero already: filling it would only fault its pages in sooner)
  if (zeroed) new Uint8Array(buffer, 0, bytes).fill(0);
  return buffer;
}

/**
 * The index of the smallest of `buffers` that holds `bytes`, -1 when none does. Not one far larger than
 * asked: a small table would hold a large trace's memory.
 */
export function bestFit(buffers: readonly ArrayBufferLike[], bytes: number): number {
  let best = -1;
  for (let i = 0; i < buffers.length; i++) {
    const n = buffers[i].byteLength;
    if (n >= bytes && n <= bytes * 2 + (1 << 20) && (best < 0 || n < buffers[best].byteLength)) best = i;
  }
  return best;
}

/** `bytes` rounded up to a multiple of an eighth of its power of two, from 64 KiB (smaller buffers are not pooled). */
export function sizeClass(bytes: number): number {
  if (bytes < 1 << 16) return bytes;
  const step = 2 ** (Math.floor(Math.log2(bytes)) - 3);
  return Math.ceil(bytes / step) * step;
}

/** Whether `buffer` is in the pool now (for tests of what gives memory back). */
export function isPooled(buffer: ArrayBufferLike): boolean {
  return pool.includes(buffer as ArrayBuffer);
}

/** Lets go of every buffer kept: the memory is the collector's at once (and the pool is known to be empty, for tests). */
export function emptyPool(): void {
  pool.length = 0;
  pooled = 0;
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
}

/** Gives buffers back for reuse (none may be read or written after; detached ones are skipped). */
export function giveBack(buffers: Iterable<ArrayBufferLike>): void {
  const seen = new Set<ArrayBufferLike>();
  for (const b of buffers) {
    if (!(b instanceof ArrayBuffer) || b.byteLength < 1 << 16 || seen.has(b) || pool.includes(b)) continue;
    seen.add(b);
    pool.push(b);
    pooled += b.byteLength;
  }
  while (pooled > MAX_POOLED) pooled -= pool.shift()!.byteLength;
  if (timer !== undefined) clearTimeout(timer);
  timer = setTimeout(emptyPool, KEEP_MS);
  (timer as { unref?: () => void }).unref?.();
}

/** Where a decode's tables take their memory, and where it goes back (outgrown, or the trace disposed). */
export interface TableMemory {
  take(bytes: number): ArrayBuffer;
  give(buffers: Iterable<ArrayBufferLike>): void;
  /** Buffers a table outgrew while it was made. */
  giveOutgrown(buffers: ArrayBufferLike[]): void;
}

/** The pool of disposed traces as TableMemory. */
export const POOLED: TableMemory = {
  take: (bytes) => takeBuffer(bytes),
  give: giveBack,
  // (outgrown buffers of up to 4 MiB: the next decode's first columns are written into them; larger ones are
  // left to the collector, for held in the pool they would add to this decode's peak: 96 MiB on a 1 GiB .nettrace)
  giveOutgrown: (buffers) => giveBack(buffers.filter((b) => b.byteLength <= 4 << 20)),
};

/**
 * `make(cap)`, or `make(least)` where memory refuses `cap` at once (a RangeError): room for the rows
 * expected is a guess, room for those needed is not. What was made, and the size it was made for.
 */
export function madeWithin<T>(cap: number, least: number, make: (size: number) => T): [T, number] {
  try {
    return [make(cap), cap];
  } catch (error) {
    if (!(error instanceof RangeError) || least >= cap) throw error;
    return [make(least), least];
  }
}
