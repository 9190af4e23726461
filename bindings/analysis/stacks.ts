// Call stacks attached to their events as TraceLog attaches them: kernel StackWalk events matched to
// the event of the same timestamp and thread (kernel and user fragments joined, compressed stacks
// resolved through their keys), stacks in EVENT_HEADER extended items, and the .NET runtime's
// ClrStackWalk on the CLR event before it on the same thread. Stacks are interned in a StackTable
// (caller-first prefix tree), so a stack is one number per event.

import { stackItemOf, type EventTable } from "../tables/event-table.js";
import { F_NO_PROCESS_INFO } from "../../assembly/codes.js";
import { PrefixTree } from "./prefix-tree.js";
import { DOTNET_RUNTIME_GUID } from "../schema/known-providers.js";

const STACKWALK = "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3";
const PERFINFO = "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc";
const RUNTIME = DOTNET_RUNTIME_GUID;
const PRIVATE = "763fd754-7086-4dfe-95eb-c01a46faf4ca";
const RUNDOWN = "a669021c-c450-4609-a035-5af59af4df18";
const STACK = 32,
  KEY_DELETE = 35,
  KEY_RUNDOWN = 36,
  KEY_KERNEL = 37,
  KEY_USER = 38;
const SAMPLE = 46;
const CLR_STACK_WALK = 82,
  PRIVATE_CLR_STACK_WALK = 151;
/** TraceLog remembers this many recent events to match stacks to. */
const RING = 2048;

/** Whether an address is in kernel space (TraceLog's test, by the trace's pointer size). */
export function isKernelAddress(address: bigint, pointerSize: number): boolean {
  return pointerSize === 8 ? address >= 0xffff000000000000n : address >= 0x80000000n;
}

/**
 * An address as a JavaScript number (BigInt map keys are slow): exact below 2^53; a kernel address
 * (the top bits set) as a negative number keeping its low 52 bits.
 */
function addressNumber(lo: number, hi: number): number {
  return hi < 0x200000 ? hi * 4294967296 + lo : -((hi & 0xfffff) * 4294967296 + lo) - 1;
}

/** The address an addressNumber stands for. */
function addressOfNumber(n: number): bigint {
  return n >= 0 ? BigInt(n) : 0xfff0000000000000n | BigInt(-n - 1);
}

/**
 * Stacks as a prefix tree: stack `id` is frame `addr[id]` (an addressNumber) called from stack
 * `parent[id]` (-1: the outermost frame). Walking parents from an event's stack gives its frames leaf first.
 */
export class StackTable {
  private readonly tree = new PrefixTree();
  /** Stack `id`'s caller (-1: none), for id < size. */
  get parent(): ArrayLike<number> {
    return this.tree.parent;
  }
  /** Stack `id`'s frame, as an addressNumber, for id < size. */
  get addr(): ArrayLike<number> {
    return this.tree.value;
  }

  /** The high and low 32 bits of the address of stack `id`'s frame, into `out`. */
  addressHalves(id: number, out: [number, number]): void {
    const n = this.tree.value[id];
    if (n >= 0) {
      out[0] = Math.floor(n / 4294967296);
      out[1] = n >>> 0;
    } else {
      const m = -n - 1; // a kernel address: its low 52 bits, the top 12 set
      out[0] = (0xfff00000 | Math.floor(m / 4294967296)) >>> 0;
      out[1] = m >>> 0;
    }
  }

  /** The address of stack `id`'s frame. */
  addressOf(id: number): bigint {
    return addressOfNumber(this.tree.value[id]);
  }

  /** The id of `frames` (addressNumbers, leaf first) below `caller`. */
  intern(frames: readonly number[], caller = -1): number {
    let id = caller;
    for (let i = frames.length - 1; i >= 0; i--) id = this.tree.child(id, frames[i]);
    return id;
  }

  /** The addresses of stack `id`, leaf first. */
  frames(id: number): bigint[] {
    const out: bigint[] = [];
    for (let s = id; s >= 0; s = this.parent[s]) out.push(addressOfNumber(this.addr[s]));
    return out;
  }

  get size(): number {
    return this.tree.size;
  }
}

/** An event waiting for parts of its stack. */
interface Pending {
  row: number;
  pid: number;
  kernel?: number[];
  user?: number[];
  /** Compressed parts still to come (their keys). */
  kernelKey?: number;
  userKey?: number;
  /** Its stack is made: it waits for nothing more. */
  done?: boolean;
}

/** The addressNumbers of the pointers in `view` from `at` to `end`. */
function ips(view: DataView, at: number, end: number, pointerSize: number): number[] {
  const out: number[] = [];
  if (pointerSize === 8) for (let o = at; o + 8 <= end; o += 8) out.push(addressNumber(view.getUint32(o, true), view.getUint32(o + 4, true)));
  else for (let o = at; o + 4 <= end; o += 4) out.push(view.getUint32(o, true));
  return out;
}

/**
 * The frames of row `index`'s stack item (EventRow.stack), as 32-bit halves: frame k's low half in
 * `lo[k]`, its high half in `hi[k]` (0 for a 32-bit stack), leaf first; returns how many (0: no stack
 * item), `lo` and `hi` holding room for them (grown when they do not: read them from `into`).
 */
function stackHalves(events: EventTable, index: number, into: { lo: Uint32Array; hi: Uint32Array }): number {
  const e = stackItemOf(events, index);
  if (e < 0) return 0;
  const ext = events.data.ext;
  const v = events.viewOf(events.recordBytesOf(index)!);
  const width = ext.type[e] === 6 ? 8 : 4;
  const first = ext.offset[e] + 8,
    end = ext.offset[e] + ext.size[e];
  const n = end > first ? Math.floor((end - first) / width) : 0;
  if (n > into.lo.length) {
    into.lo = new Uint32Array(2 * n);
    into.hi = new Uint32Array(2 * n);
  }
  for (let k = 0, o = first; k < n; k++, o += width) {
    into.lo[k] = v.getUint32(o, true);
    into.hi[k] = width === 8 ? v.getUint32(o + 4, true) : 0;
  }
  return n;
}

/** Rows a page of StackAttacher's stack column holds: 2^PAGE_BITS. */
const PAGE_BITS = 16;

// what a provider is to the attacher
const OTHER = 0,
  STACK_WALK = 1,
  PERF_INFO = 2,
  CLR_RUNTIME = 3,
  CLR_PRIVATE = 4,
  CLR_RUNDOWN = 5;
const KIND_OF_GUID = new Map([
  [STACKWALK, STACK_WALK],
  [PERFINFO, PERF_INFO],
  [RUNTIME, CLR_RUNTIME],
  [PRIVATE, CLR_PRIVATE],
  [RUNDOWN, CLR_RUNDOWN],
]);

/**
 * Attaches stacks to events fed in time order (`addRows`), read from the event table's columns (no
 * row objects). `finish()` completes what still waits (kernel parts without their user part, keys
 * never defined are left out); then `stackOf(rowNumber)` is the event's stack id in `table`, or -1.
 */
export class StackAttacher {
  readonly table = new StackTable();
  /**
   * Each row's stack (-1: none), in pages of 2^16 rows made when a row of theirs gets one: rows run to
   * the whole trace's count (millions), and an array grown by doubling would copy and fault in twice that.
   */
  private stackPages: (Int32Array | undefined)[] = [];
  /** Stacks attached; stack events no event of theirs was found for. */
  attached = 0;
  orphans = 0;
  // the ring of recent events: row number, timestamp (low and high halves), thread, processor, CLR or not
  private readonly ringRow = new Float64Array(RING);
  private readonly ringTsLo = new Uint32Array(RING);
  private readonly ringTsHi = new Int32Array(RING);
  private readonly ringTid = new Int32Array(RING);
  private readonly ringCpu = new Int32Array(RING);
  private readonly ringClr = new Uint8Array(RING);
  private ringNext = 0;
  private ringSize = 0;
  private readonly pending = new Map<number, Pending>();
  /** Per thread, events whose kernel part came and whose user part has not. */
  private readonly waitingOnThread = new Map<number, Pending[]>();
  private readonly waitingOnKey = [new Map<number, Pending[]>(), new Map<number, Pending[]>()]; // kernel, user
  private readonly clrStacked = new Set<number>();
  private viewBytes?: Uint8Array;
  private view?: DataView;
  /** An event's own stack item, read into these (reused from event to event). */
  private readonly halves = { lo: new Uint32Array(256), hi: new Uint32Array(256) };
  private readonly frames: number[] = [];

  /**
   * `wants(row)`: whether a row's stack is asked for (default: every row's). The stacks of other rows are
   * not made, unless a stack's user part also completes a wanted event's kernel part waiting on its thread.
   */
  constructor(
    private readonly pointerSize: 4 | 8,
    private readonly wants?: (row: number) => boolean,
  ) {}

  /** isKernelAddress of an addressNumber. */
  private kernel(n: number): boolean {
    return this.pointerSize === 8 ? n < 0 : n >= 0x80000000;
  }

  private set(row: number, id: number): void {
    const p = row >>> PAGE_BITS;
    const page = (this.stackPages[p] ??= new Int32Array(1 << PAGE_BITS).fill(-1));
    const i = row & ((1 << PAGE_BITS) - 1);
    if (page[i] < 0) this.attached++;
    page[i] = id;
  }

  stackOf(row: number): number {
    const page = this.stackPages[row >>> PAGE_BITS];
    return page ? page[row & ((1 << PAGE_BITS) - 1)] : -1;
  }

  /** A view of the bytes row `i`'s payload offset indexes (one per trace, or per buffer of records). */
  private viewOf(events: EventTable, i: number): DataView | undefined {
    const bytes = events.recordBytesOf(i);
    if (!bytes) return undefined;
    if (bytes !== this.viewBytes) {
      this.viewBytes = bytes;
      this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    }
    return this.view;
  }

  /**
   * Feeds the rows `rows` of `events` (their numbers in the table; all rows when null), in time order.
   * `base`: the number of the table's row 0 (a stream's batch: its first row in the whole trace), so
   * that rows of every batch are numbered as the whole trace numbers them; `numbers`: instead of base,
   * each of `rows`' own number (rows a batch holds alone: TimeOrderedRun.rowNumbers).
   */
  addRows(events: EventTable, rows: Uint32Array | null, base = 0, numbers?: ArrayLike<number>): void {
    const kinds = new Uint8Array(events.providers.length);
    for (let p = 0; p < kinds.length; p++) kinds[p] = KIND_OF_GUID.get(events.providers.get(p).guid) ?? OTHER;
    const c = events.columns;
    const { flags, tid: tids, processor, payloadOffset, payloadLength, eventType } = c;
    // (provider, id, opcode and header type from each row's event type: their columns are not made)
    const { provider: typeProvider, eventId: typeEventId, opcode: typeOpcode, headerType: typeHeaderType } = events.typeValues();
    const types = typeProvider.length;
    const ts32 = new Uint32Array(c.timestamp.buffer, c.timestamp.byteOffset, c.timestamp.length * 2);
    const ps = this.pointerSize;
    const n = rows ? rows.length : events.length;
    for (let k = 0; k < n; k++) {
      const i = rows ? rows[k] : k;
      const row = numbers ? numbers[k] : base + i;
      const type = eventType[i];
      const kind = kinds[type < types ? typeProvider[type] : events.typeFieldOf("provider", i)];
      if (kind === STACK_WALK) {
        this.stackEvent(events, i);
        continue;
      }
      const id = kind === CLR_RUNTIME || kind === CLR_PRIVATE ? (type < types ? typeEventId[type] : events.typeFieldOf("eventId", i)) : -1;
      if ((kind === CLR_RUNTIME && id === CLR_STACK_WALK) || (kind === CLR_PRIVATE && id === PRIVATE_CLR_STACK_WALK)) {
        this.clrStack(events, i);
        continue;
      }
      // the thread: a CPU sample's is in its payload
      let tid = flags[i] & F_NO_PROCESS_INFO ? -1 : tids[i];
      if (kind === PERF_INFO && (type < types ? typeOpcode[type] : events.typeFieldOf("opcode", i)) === SAMPLE && payloadLength[i] >= ps + 4) {
        const v = this.viewOf(events, i);
        if (v) tid = v.getInt32(payloadOffset[i] + ps, true);
      }
      const r = this.ringNext;
      this.ringRow[r] = row;
      this.ringTsLo[r] = ts32[2 * i];
      this.ringTsHi[r] = ts32[2 * i + 1];
      this.ringTid[r] = tid;
      this.ringCpu[r] = processor[i];
      this.ringClr[r] = kind >= CLR_RUNTIME ? 1 : 0;
      this.ringNext = (r + 1) & (RING - 1);
      if (this.ringSize < RING) this.ringSize++;
      // a stack in the event's own header (EVENT_HEADER records with extended items only)
      const ht = type < types ? typeHeaderType[type] : events.typeFieldOf("headerType", i);
      if ((ht === 0x12 || ht === 0x13) && flags[i] & 1 && (!this.wants || this.wants(row))) {
        // (the frames as address numbers from their halves: no BigInt a frame)
        const n = stackHalves(events, i, this.halves);
        if (n > 0) {
          const frames = this.frames;
          frames.length = n;
          for (let k = 0; k < n; k++) frames[k] = addressNumber(this.halves.lo[k], this.halves.hi[k]);
          this.set(row, this.table.intern(frames));
        }
      }
    }
  }

  /** The most recent remembered event at time (tsHi, tsLo) on thread `tid` (on processor `cpu` for an event of no thread). */
  private match(tsHi: number, tsLo: number, tid: number, cpu: number): number {
    for (let n = 0; n < this.ringSize; n++) {
      const k = (this.ringNext - 1 - n) & (RING - 1);
      const hi = this.ringTsHi[k],
        lo = this.ringTsLo[k];
      if (hi < tsHi || (hi === tsHi && lo < tsLo)) return -1; // the ring is in time order
      if (hi !== tsHi || lo !== tsLo) continue;
      if (this.ringTid[k] === tid || (this.ringTid[k] === -1 && this.ringCpu[k] === cpu)) return this.ringRow[k];
    }
    return -1;
  }

  /** The most recent remembered CLR event on thread `tid`. */
  private matchClr(tid: number): number {
    for (let n = 0; n < this.ringSize; n++) {
      const k = (this.ringNext - 1 - n) & (RING - 1);
      if (this.ringTid[k] === tid && this.ringClr[k]) return this.ringRow[k];
    }
    return -1;
  }

  private pendingOf(row: number, pid: number): Pending {
    let p = this.pending.get(row);
    if (!p) this.pending.set(row, (p = { row, pid }));
    return p;
  }

  private stackEvent(events: EventTable, i: number): void {
    const v = this.viewOf(events, i);
    if (!v) return;
    const at = events.columns.payloadOffset[i];
    const end = at + events.columns.payloadLength[i];
    const ps = this.pointerSize;
    const op = events.typeFieldOf("opcode", i);
    if (op === KEY_DELETE || op === KEY_RUNDOWN) {
      if (end - at < ps) return;
      const all = ips(v, at, end, ps);
      const key = all[0];
      const frames = all.slice(1);
      const kernel = frames.length > 0 && this.kernel(frames[frames.length - 1]);
      const waiting = this.waitingOnKey[kernel ? 0 : 1];
      const list = waiting.get(key);
      if (!list) return;
      waiting.delete(key);
      for (const e of list) {
        if (kernel) {
          e.kernel = frames;
          e.kernelKey = undefined;
        } else {
          e.user = frames;
          e.userKey = undefined;
        }
        if (e.kernelKey === undefined && e.userKey === undefined) this.complete(e);
      }
      return;
    }
    if (end - at < 16) return;
    const pid = v.getInt32(at + 8, true);
    const tid = v.getInt32(at + 12, true);
    const row = this.match(v.getInt32(at + 4, true), v.getUint32(at, true), tid, events.columns.processor[i]);
    if (row < 0) {
      this.orphans++;
      return;
    }
    const wanted = !this.wants || this.wants(row);
    // (an unwanted row's stack is read only to complete kernel parts waiting on its thread)
    if (!wanted && (op !== STACK || !this.waitingOnThread.has(tid))) return;
    if (op === KEY_KERNEL || op === KEY_USER) {
      if (end - at < 16 + ps) return;
      const key = ps === 8 ? addressNumber(v.getUint32(at + 16, true), v.getUint32(at + 20, true)) : v.getUint32(at + 16, true);
      const e = this.pendingOf(row, pid);
      const waiting = this.waitingOnKey[op === KEY_KERNEL ? 0 : 1];
      if (op === KEY_KERNEL) e.kernelKey = key;
      else e.userKey = key;
      const list = waiting.get(key);
      if (list) list.push(e);
      else waiting.set(key, [e]);
      return;
    }
    if (op !== STACK) return;
    const frames = ips(v, at + 16, end, ps);
    if (!frames.length) return;
    const outerKernel = this.kernel(frames[frames.length - 1]);
    if (!wanted) {
      if (!outerKernel && !this.kernel(frames[0])) this.completeWaitingOnThread(tid, frames, undefined);
      return;
    }
    if (!outerKernel && !this.pending.has(row)) {
      // (the usual case, a user stack of an event nothing else waits for: no Pending kept)
      if (!this.kernel(frames[0])) this.completeWaitingOnThread(tid, frames, undefined);
      this.set(row, this.table.intern(frames));
      return;
    }
    const e = this.pendingOf(row, pid);
    if (outerKernel && pid !== 0 && pid !== 4) {
      // the kernel part: it waits on the thread for the user part
      e.kernel = frames;
      const list = this.waitingOnThread.get(tid);
      if (list) list.push(e);
      else this.waitingOnThread.set(tid, [e]);
      this.set(row, this.table.intern(frames));
      return;
    }
    if (outerKernel) {
      e.kernel = frames;
      this.complete(e);
      return;
    }
    e.user = frames;
    if (!this.kernel(frames[0])) this.completeWaitingOnThread(tid, frames, e);
    this.complete(e);
  }

  /**
   * A user stack that starts in user mode is the one on exit from the kernel: it completes every
   * kernel stack waiting on the thread (but `own`, and one waiting for its own compressed user part).
   */
  private completeWaitingOnThread(tid: number, frames: number[], own: Pending | undefined): void {
    const list = this.waitingOnThread.get(tid);
    if (!list) return;
    this.waitingOnThread.delete(tid);
    for (const w of list) {
      if (w === own || w.done || w.userKey !== undefined) continue;
      w.user = frames;
      this.complete(w);
    }
  }

  private clrStack(events: EventTable, i: number): void {
    const v = this.viewOf(events, i);
    const at = events.columns.payloadOffset[i];
    const end = at + events.columns.payloadLength[i];
    if (!v || end - at < 8) return;
    const count = v.getUint32(at + 4, true);
    const frames = ips(v, at + 8, Math.min(end, at + 8 + count * this.pointerSize), this.pointerSize);
    const row = this.matchClr(events.columns.flags[i] & F_NO_PROCESS_INFO ? -1 : events.columns.tid[i]);
    if (row < 0 || this.clrStacked.has(row) || !frames.length || (this.wants && !this.wants(row))) {
      if (row < 0) this.orphans++;
      return;
    }
    this.clrStacked.add(row);
    if (this.stackOf(row) < 0) this.set(row, this.table.intern(frames));
  }

  /** Kernel frames on top of the user frames (the user stack is the caller). */
  private complete(e: Pending): void {
    if (e.kernelKey !== undefined || e.userKey !== undefined) return;
    e.done = true;
    this.pending.delete(e.row);
    const user = e.user ? this.table.intern(e.user) : -1;
    const id = e.kernel ? this.table.intern(e.kernel, user) : user;
    if (id >= 0) this.set(e.row, id);
  }

  /** Completes what waits: kernel parts without their user part, and parts whose other key never came. */
  finish(): void {
    for (const e of [...this.pending.values()]) {
      e.kernelKey = undefined;
      e.userKey = undefined;
      this.complete(e);
    }
    this.pending.clear();
    this.waitingOnThread.clear();
    this.waitingOnKey[0].clear();
    this.waitingOnKey[1].clear();
  }
}
