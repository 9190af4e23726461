// Window memory shared between threads: SharedArrayBuffers that cross once and are named by number after
// (SharedSlots), and the views of a message described as places in one of them (describeViews) and made
// again on the other side (rebuildViews). The .etl segments' windows (parallel/transfer.ts packWindow)
// and EventPipe pieces' windows (eventpipe/parallel.ts) are handed back in them.

import { align8 } from "../result/trace-data.js";

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

/**
 * `value` with every view copied into a slot of `slots` and replaced by where it lies there, for a message
 * whose views are in memory of their own (a view met twice is copied once); with the slot, and its buffer
 * when the other side has not got it yet.
 */
export function copiedIntoSlot<T>(value: T, slots: SharedSlots): { value: T; slot: number; buffer?: SharedArrayBuffer } {
  let bytes = 0;
  mapViews(value, (v) => (bytes += align8(v.byteLength)));
  const buffer = slots.take(bytes);
  const slot = slots.current;
  const placed = new Map<ArrayBufferView, object>();
  let at = 0;
  const copied = mapViews(value, (v) => {
    let d = placed.get(v);
    if (!d) {
      new Uint8Array(buffer, at, v.byteLength).set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
      placed.set(v, (d = described(v, at)));
      at += align8(v.byteLength);
    }
    return d;
  });
  return { value: copied as T, slot, buffer: slots.toSend(slot) };
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
