// GC/Start .. GC/Stop intervals of the .NET runtime per process, gathered from the typed tables of a
// trace or of each streamed batch (columns, not an object per event), sent to the page as typed arrays.

import type { Trace } from "etw-wasm/browser";

/** One GC per entry: its process, start and end (ms since the session start) and generation. */
export interface GcLanes {
  length: number;
  pid: Uint32Array;
  from: Float64Array;
  to: Float64Array;
  gen: Uint8Array;
}

const GC_START = "Microsoft-Windows-DotNETRuntime/GC/Start";
const GC_STOP = "Microsoft-Windows-DotNETRuntime/GC/Stop";
/** The row flag of a record without a process (EVENT_HEADER records always have one). */
const NO_PROCESS_INFO = 0x8000;

/** GC/Start and GC/Stop events of traces or batches, added in file order. */
export class GcEvents {
  private length = 0;
  private cap = 0;
  private hi = new Uint32Array(0);
  private lo = new Uint32Array(0);
  private processor = new Uint16Array(0);
  private pid = new Uint32Array(0);
  /** The generation (Depth) of a GC/Start, -1 for a GC/Stop. */
  private gen = new Int8Array(0);
  private clock: Trace["clock"] | undefined;

  /** The GC events of `t` (a trace, or the next batch of a stream). */
  add(t: Trace): void {
    const c = t.events.columns;
    const ts = new Uint32Array(c.timestamp.buffer, c.timestamp.byteOffset, c.timestamp.length * 2);
    this.clock ??= t.clock;
    // (the GC/Start and GC/Stop tables of every version present, merged into file order)
    const tables = t.tables.filter((table) => table.name === GC_START || table.name === GC_STOP);
    const next = tables.map(() => 0);
    this.room(tables.reduce((n, table) => n + table.length, 0));
    for (;;) {
      let pick = -1;
      for (let j = 0; j < tables.length; j++) {
        if (next[j] < tables[j].length && (pick < 0 || tables[j].rows[next[j]] < tables[pick].rows[next[pick]])) pick = j;
      }
      if (pick < 0) break;
      const table = tables[pick];
      const k = next[pick]++;
      const r = table.rows[k];
      const n = this.length++;
      this.hi[n] = ts[2 * r + 1];
      this.lo[n] = ts[2 * r];
      this.processor[n] = c.processor[r];
      this.pid[n] = c.flags[r] & NO_PROCESS_INFO ? 0 : c.pid[r];
      this.gen[n] = table.name === GC_START ? Math.min(127, Number((table.columns.Depth as ArrayLike<number> | undefined)?.[k] ?? 0)) : -1;
    }
  }

  private room(more: number): void {
    if (this.length + more <= this.cap) return;
    const cap = Math.max(1024, this.cap * 2, this.length + more);
    const grow = <T extends Uint32Array | Uint16Array | Float64Array | Int8Array>(a: T, make: new (n: number) => T): T => {
      const next = new make(cap);
      next.set(a.subarray(0, this.length) as never);
      return next;
    };
    this.hi = grow(this.hi, Uint32Array);
    this.lo = grow(this.lo, Uint32Array);
    this.processor = grow(this.processor, Uint16Array);
    this.pid = grow(this.pid, Uint32Array);
    this.gen = grow(this.gen, Int8Array);
    this.cap = cap;
  }

  /** Each process's GC/Start paired with its next GC/Stop, in time order (timestamp, processor, file order). */
  lanes(): GcLanes {
    const { hi, lo, processor, length } = this;
    // timestamps as ticks after the earliest (exact in a double below 2^53 ticks)
    let hi0 = 0xffffffff;
    for (let i = 0; i < length; i++) hi0 = Math.min(hi0, hi[i]);
    const key = new Float64Array(length);
    let low = Infinity,
      high = 0;
    for (let i = 0; i < length; i++) {
      key[i] = (hi[i] - hi0) * 4294967296 + lo[i];
      low = Math.min(low, key[i]);
      high = Math.max(high, key[i]);
    }
    let order = new Uint32Array(length);
    for (let i = 0; i < length; i++) order[i] = i;
    if (high - low >= 2 ** 53) {
      order.sort((a, b) => key[a] - key[b] || processor[a] - processor[b] || a - b);
    } else {
      // Stable radix passes of 8 bits from file order (the order events were added): processor, then
      // the timestamp's bytes, lowest first, as many as its range has.
      let spare = new Uint32Array(length);
      const count = new Uint32Array(257);
      const digit = new Uint8Array(length);
      const pass = () => {
        count.fill(0);
        for (let i = 0; i < length; i++) count[digit[i] + 1]++;
        for (let d = 1; d < count.length; d++) count[d] += count[d - 1];
        for (let k = 0; k < length; k++) spare[count[digit[order[k]]]++] = order[k];
        [order, spare] = [spare, order];
      };
      for (let shift = 0; 256 ** shift < 65536; shift++) {
        for (let i = 0; i < length; i++) digit[i] = processor[i] >> (8 * shift);
        pass();
      }
      for (let scale = 1; scale <= high - low; scale *= 256) {
        for (let i = 0; i < length; i++) digit[i] = Math.floor((key[i] - low) / scale) % 256;
        pass();
      }
    }
    const open = new Map<number, number>(); // pid -> its open GC/Start
    const pairs: number[] = [];
    for (const i of order) {
      const pid = this.pid[i];
      if (this.gen[i] >= 0) open.set(pid, i);
      else {
        const s = open.get(pid);
        if (s !== undefined) pairs.push(s, i);
        open.delete(pid);
      }
    }
    const n = pairs.length / 2;
    const out: GcLanes = { length: n, pid: new Uint32Array(n), from: new Float64Array(n), to: new Float64Array(n), gen: new Uint8Array(n) };
    const ms = (i: number) => this.clock!.relativeMSecParts(hi[i], lo[i]);
    for (let k = 0; k < n; k++) {
      const s = pairs[2 * k],
        e = pairs[2 * k + 1];
      out.pid[k] = this.pid[s];
      out.from[k] = ms(s);
      out.to[k] = ms(e);
      out.gen[k] = this.gen[s];
    }
    return out;
  }
}

/** The typed arrays of `lanes`, to transfer with it. */
export function lanesBuffers(lanes: GcLanes): ArrayBuffer[] {
  return [lanes.pid.buffer, lanes.from.buffer, lanes.to.buffer, lanes.gen.buffer] as ArrayBuffer[];
}
