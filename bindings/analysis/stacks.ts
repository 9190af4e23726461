// Call stacks attached to their events as TraceLog attaches them: kernel StackWalk events matched to
// the event of the same timestamp and thread (kernel and user fragments joined, compressed stacks
// resolved through their keys), stacks in EVENT_HEADER extended items, and the .NET runtime's
// ClrStackWalk on the CLR event before it on the same thread. Stacks are interned in a StackTable
// (caller-first prefix tree), so a stack is one number per event.

import type { EventRow } from "../tables/event-table.js";
import { PrefixTree } from "./prefix-tree.js";

const STACKWALK = "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3";
const PERFINFO = "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc";
const RUNTIME = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4";
const PRIVATE = "763fd754-7086-4dfe-95eb-c01a46faf4ca";
const RUNDOWN = "a669021c-c450-4609-a035-5af59af4df18";
const STACK = 32, KEY_DELETE = 35, KEY_RUNDOWN = 36, KEY_KERNEL = 37, KEY_USER = 38;
const SAMPLE = 46;
const CLR_STACK_WALK = 82, PRIVATE_CLR_STACK_WALK = 151;
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
export function addressNumber(lo: number, hi: number): number {
  return hi < 0x200000 ? hi * 4294967296 + lo : -((hi & 0xfffff) * 4294967296 + lo) - 1;
}

/** The address an addressNumber stands for. */
export function addressOfNumber(n: number): bigint {
  return n >= 0 ? BigInt(n) : 0xfff0000000000000n | BigInt(-n - 1);
}

function numberOfAddress(a: bigint): number {
  return addressNumber(Number(a & 0xffffffffn), Number((a >> 32n) & 0xffffffffn));
}

/**
 * Stacks as a prefix tree: stack `id` is frame `addr[id]` (an addressNumber) called from stack
 * `parent[id]` (-1: the outermost frame). Walking parents from an event's stack gives its frames leaf first.
 */
export class StackTable {
  private readonly tree = new PrefixTree();
  /** Stack `id`'s caller (-1: none). */
  get parent(): readonly number[] { return this.tree.parent; }
  /** Stack `id`'s frame, as an addressNumber. */
  get addr(): readonly number[] { return this.tree.value; }

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

  get size(): number { return this.tree.size; }
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

function ips(payload: Uint8Array, at: number, pointerSize: number): number[] {
  const v = new DataView(payload.buffer, payload.byteOffset, payload.length);
  const out: number[] = [];
  for (let o = at; o + pointerSize <= payload.length; o += pointerSize) {
    out.push(pointerSize === 8 ? addressNumber(v.getUint32(o, true), v.getUint32(o + 4, true)) : v.getUint32(o, true));
  }
  return out;
}

/**
 * Attaches stacks to events fed in time order (`add(row, rowNumber)`; rowNumber is the row's number in
 * the whole trace). `finish()` completes what still waits (kernel parts without their user part, keys
 * never defined are left out); then `stackOf(rowNumber)` is the event's stack id in `table`, or -1.
 */
export class StackAttacher {
  readonly table = new StackTable();
  private stackIds = new Int32Array(1024).fill(-1);
  /** Stacks attached; stack events no event of theirs was found for. */
  attached = 0;
  orphans = 0;
  // the ring of recent events: row number, timestamp, thread, processor, CLR or not
  private readonly ringRow = new Float64Array(RING);
  private readonly ringTs = new BigInt64Array(RING);
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

  constructor(private readonly pointerSize: 4 | 8) {}

  /** isKernelAddress of an addressNumber. */
  private kernel(n: number): boolean {
    return this.pointerSize === 8 ? n < 0 : n >= 0x80000000;
  }

  private set(row: number, id: number): void {
    if (row >= this.stackIds.length) {
      let n = this.stackIds.length;
      while (n <= row) n *= 2;
      const next = new Int32Array(n).fill(-1);
      next.set(this.stackIds);
      this.stackIds = next;
    }
    if (this.stackIds[row] < 0) this.attached++;
    this.stackIds[row] = id;
  }

  stackOf(row: number): number {
    return row < this.stackIds.length ? this.stackIds[row] : -1;
  }

  add(r: EventRow, rowNumber: number): void {
    const guid = r.providerGuid;
    if (guid === STACKWALK) return this.stackEvent(r);
    if ((guid === RUNTIME && r.eventId === CLR_STACK_WALK) || (guid === PRIVATE && r.eventId === PRIVATE_CLR_STACK_WALK)) return this.clrStack(r);
    // the thread: a CPU sample's is in its payload
    let tid = r.tid ?? -1;
    if (guid === PERFINFO && r.opcode === SAMPLE && r.payloadLength >= this.pointerSize + 4) {
      const p = r.payload;
      tid = new DataView(p.buffer, p.byteOffset, p.length).getInt32(this.pointerSize, true);
    }
    const k = this.ringNext;
    this.ringRow[k] = rowNumber;
    this.ringTs[k] = r.timestamp;
    this.ringTid[k] = tid;
    this.ringCpu[k] = r.processor;
    this.ringClr[k] = guid === RUNTIME || guid === PRIVATE || guid === RUNDOWN ? 1 : 0;
    this.ringNext = (k + 1) % RING;
    if (this.ringSize < RING) this.ringSize++;
    // a stack in the event's own header (EVENT_HEADER records with extended items only)
    if ((r.headerType === 0x12 || r.headerType === 0x13) && r.headerFlags & 1 && r.extTypes.some((t) => t === 5 || t === 6)) {
      const frames = r.stack;
      if (frames?.length) this.set(rowNumber, this.table.intern(frames.map(numberOfAddress)));
    }
  }

  /** The most recent remembered event at `ts` on thread `tid` (on processor `cpu` for an event of no thread). */
  private match(ts: bigint, tid: number, cpu: number, clrOnly = false): number {
    for (let n = 0; n < this.ringSize; n++) {
      const k = (this.ringNext - 1 - n + RING) % RING;
      if (clrOnly) {
        if (this.ringTid[k] === tid && this.ringClr[k]) return this.ringRow[k];
        continue;
      }
      if (this.ringTs[k] < ts) return -1; // the ring is in time order
      if (this.ringTs[k] !== ts) continue;
      if (this.ringTid[k] === tid || (this.ringTid[k] === -1 && this.ringCpu[k] === cpu)) return this.ringRow[k];
    }
    return -1;
  }

  private pendingOf(row: number, pid: number): Pending {
    let p = this.pending.get(row);
    if (!p) this.pending.set(row, (p = { row, pid }));
    return p;
  }

  private stackEvent(r: EventRow): void {
    const p = r.payload;
    const ps = this.pointerSize;
    const op = r.opcode;
    if (op === KEY_DELETE || op === KEY_RUNDOWN) {
      if (p.length < ps) return;
      const all = ips(p, 0, ps);
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
    if (p.length < 16) return;
    const v = new DataView(p.buffer, p.byteOffset, p.length);
    const ts = v.getBigInt64(0, true);
    const pid = v.getInt32(8, true);
    const tid = v.getInt32(12, true);
    const row = this.match(ts, tid, r.processor);
    if (row < 0) {
      this.orphans++;
      return;
    }
    if (op === KEY_KERNEL || op === KEY_USER) {
      if (p.length < 16 + ps) return;
      const key = ps === 8 ? addressNumber(v.getUint32(16, true), v.getUint32(20, true)) : v.getUint32(16, true);
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
    const frames = ips(p, 16, ps);
    if (!frames.length) return;
    const outerKernel = this.kernel(frames[frames.length - 1]);
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
    // a user stack that starts in user mode is the one on exit from the kernel: it completes every
    // kernel stack waiting on the thread
    if (!this.kernel(frames[0])) {
      const list = this.waitingOnThread.get(tid);
      if (list) {
        this.waitingOnThread.delete(tid);
        for (const w of list) {
          // (one waiting for its own compressed user part gets that instead)
          if (w === e || w.done || w.userKey !== undefined) continue;
          w.user = frames;
          this.complete(w);
        }
      }
    }
    this.complete(e);
  }

  private clrStack(r: EventRow): void {
    const p = r.payload;
    if (p.length < 8) return;
    const count = new DataView(p.buffer, p.byteOffset, p.length).getUint32(4, true);
    const frames = ips(p, 8, this.pointerSize).slice(0, count);
    const row = this.match(0n, r.tid ?? -1, r.processor, true);
    if (row < 0 || this.clrStacked.has(row) || !frames.length) {
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
