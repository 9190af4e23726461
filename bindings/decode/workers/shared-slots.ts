// Window memory shared between threads. The .etl segments' windows (parallel/transfer.ts packWindow) are
// copied out of a worker's core into SharedArrayBuffers that cross once and are named by number after
// (SharedSlots), their views described as places in one of them (describeViews) and made again on the other
// side (rebuildViews). EventPipe pieces' windows (eventpipe/parallel.ts) are made in SharedArrayBuffers
// from the start (SharedWindowMemory): lent to the calling thread as they are, and given back by number.

import { align8 } from "../result/trace-data.js";
import { bestFit, sizeClass, type TableMemory } from "../result/reuse.js";

/** Where a window is packed into (packWindow: a SharedSlots, or a pool of ArrayBuffers). */
export interface WindowBuffers {
  take(bytes: number): ArrayBufferLike;
}

/**
 * Window buffers shared with the calling thread (SharedArrayBuffers, where the platform shares them):
 * each goes across once, then windows name it by number and give their views as offsets into it, so
 * no buffer moves per window. (A buffer moved per window is new external memory to each side's
 * collector every time: a collection every few windows, a quarter of a worker's time at 1 GiB.)
 */
export class SharedSlots implements WindowBuffers {
  private readonly buffers: SharedArrayBuffer[] = [];
  private readonly free: number[] = [];
  private readonly unsent = new Set<number>();
  /** The slot `take` gave last. */
  current = -1;

  take(bytes: number): SharedArrayBuffer {
    let i = this.free.findIndex((k) => this.buffers[k].byteLength >= bytes);
    let k: number;
    if (i >= 0) k = this.free.splice(i, 1)[0];
    else {
      // none free is large enough: a free one too small is replaced, else a slot is added
      i = this.free.length ? 0 : -1;
      k = i >= 0 ? this.free.splice(i, 1)[0] : this.buffers.length;
      this.buffers[k] = new SharedArrayBuffer(align8(bytes * 1.25));
      this.unsent.add(k);
    }
    this.current = k;
    return this.buffers[k];
  }

  give(slot: number): void {
    if (this.buffers[slot] && !this.free.includes(slot)) this.free.push(slot);
  }

  /** The slot's buffer if the other side has not got it yet (sent with the window that first uses it). */
  toSend(slot: number): SharedArrayBuffer | undefined {
    if (!this.unsent.delete(slot)) return undefined;
    return this.buffers[slot];
  }
}

const VIEWS = {
  Uint8Array,
  Int8Array,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;
type ViewName = keyof typeof VIEWS;
const VIEW = "etw-wasm:view";

/** `value` with each view replaced by `f` of it (plain objects and arrays followed, made anew). */
function mapViews(value: unknown, f: (v: ArrayBufferView) => unknown): unknown {
  const walk = (v: unknown): unknown => {
    if (ArrayBuffer.isView(v)) return f(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value);
}

/** Where view `v` lies at `offset` of a buffer, as rebuildViews makes it again. */
function described(v: ArrayBufferView, offset: number): object {
  const name = v.constructor.name as ViewName;
  if (!(name in VIEWS)) throw new TypeError(`etw-wasm: cannot describe a ${name}`);
  return { [VIEW]: name, offset, length: (v as Uint8Array).length };
}

/** `value` with every view into `buffer` replaced by where it lies (plain objects and arrays followed). */
export function describeViews<T>(value: T, buffer: ArrayBufferLike): T {
  return mapViews(value, (v) => (v.buffer === buffer ? described(v, v.byteOffset) : v)) as T;
}

/** The views describeViews described, made again over `buffer` (this side's object for the same memory). */
export function rebuildViews<T>(value: T, buffer: ArrayBufferLike): T {
  const walk = (v: unknown): unknown => {
    if (ArrayBuffer.isView(v)) return v;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const d = v as Record<string, unknown>;
      const name = d[VIEW] as ViewName | undefined;
      if (name !== undefined) return new VIEWS[name](buffer as ArrayBuffer, d.offset as number, d.length as number);
      if (Object.getPrototypeOf(v) === Object.prototype) return Object.fromEntries(Object.entries(d).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * A worker's tables made in SharedArrayBuffers (TableMemory: the windows' columns, typed blocks and byte
 * stores), so a window goes to the calling thread as it is: no copy, and no buffer that comes back to be new
 * memory to this side's collector (a buffer moved per window was: 48 mark-compacts in one worker streaming
 * 1 GiB). A window's buffers are lent together (lend) and come back by the loan's number (returned).
 */
export class SharedWindowMemory implements TableMemory {
  private readonly free: SharedArrayBuffer[] = [];
  private freeBytes = 0;
  private readonly loans = new Map<number, SharedArrayBuffer[]>();
  private nextLoan = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** At most this much is kept free, and for at most this long without use. */
  static readonly MAX_FREE = 512 * 2 ** 20;
  static readonly KEEP_MS = 10_000;

  take(bytes: number): ArrayBuffer {
    const best = bestFit(this.free, bytes);
    let buffer: SharedArrayBuffer;
    if (best >= 0) {
      [buffer] = this.free.splice(best, 1);
      this.freeBytes -= buffer.byteLength;
    } else buffer = new SharedArrayBuffer(sizeClass(bytes));
    // (the tables only view their buffers, which a SharedArrayBuffer serves as well)
    return buffer as unknown as ArrayBuffer;
  }

  give(buffers: Iterable<ArrayBufferLike>): void {
    for (const b of buffers) {
      if (!(b instanceof SharedArrayBuffer) || this.free.includes(b)) continue;
      this.free.push(b);
      this.freeBytes += b.byteLength;
    }
    while (this.freeBytes > SharedWindowMemory.MAX_FREE) this.freeBytes -= this.free.shift()!.byteLength;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.free.length = 0;
      this.freeBytes = 0;
    }, SharedWindowMemory.KEEP_MS);
    (this.timer as { unref?: () => void }).unref?.();
  }

  giveOutgrown(buffers: ArrayBufferLike[]): void {
    this.give(buffers);
  }

  /** Lends the SharedArrayBuffers among `buffers` (a window's) to the other side: the loan's number. */
  lend(buffers: Iterable<ArrayBufferLike>): number {
    const shared = [...new Set(buffers)].filter((b): b is SharedArrayBuffer => b instanceof SharedArrayBuffer);
    const loan = this.nextLoan++;
    this.loans.set(loan, shared);
    return loan;
  }

  /** The other side is done with a loan: its buffers are free for the next windows. */
  returned(loan: number): void {
    const buffers = this.loans.get(loan);
    this.loans.delete(loan);
    if (buffers) this.give(buffers);
  }
}
