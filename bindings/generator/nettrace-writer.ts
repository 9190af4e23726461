// A writer of .NET EventPipe trace files (.nettrace), event by event, as the runtime writes them:
// the V4/V5 FastSerialization container or the V6 block stream, written from the format specification
// (nettrace-format.md; "§n" below refers to it).
//
// Metadata definitions, interned stacks and events collect in their blocks; the blocks go out in the
// runtime's order (V6 threads and label lists, metadata, stacks, then the events that use them) when
// the event block reaches `blockBytes` (100 KiB, the runtime's block size), and a sequence point
// follows every `sequencePointBytes` of output (after which stack ids, and in V6 label lists, start
// again at 1, §8–§10). The bytes go out through `onChunk` in chunks of `chunkBytes`, so a file of
// any size streams with fixed memory; without `onChunk`, finish() returns the whole file.
//
// Events are written with no object per event: the caller fills one NettraceEventInput and passes it
// again and again; payloads and stacks are read from the caller's arrays (ranges, no copies made).

import {
  BLOCK_EVENT,
  BLOCK_METADATA,
  BLOCK_SEQUENCE_POINT,
  BLOCK_STACK,
  BLOCK_THREAD,
  BLOCK_LABEL_LIST,
  TC_OBJECT,
  TC_ARRAY,
  TC_FIXED_ARRAY,
  TC_RELLOC,
  TC_DATALOC,
  BLOCK_OBJECT_NAMES,
  EVENT_BLOCK_HEADER_BYTES,
  FS_SIGNATURE,
  NETTRACE_MAGIC,
  TAG_BEGIN_PRIVATE,
  TAG_END,
  TAG_NULL,
  type NettraceField,
  type NettraceType,
} from "../eventpipe/format.js";

/** A field of an event's metadata (the reader's own description type). */
export type NettraceFieldSpec = NettraceField;

export interface NettraceWriterOptions {
  /**
   * 4: the V4 FastSerialization container with V1 metadata only (no tags: no opcodes, no arrays);
   * 5: the same container, with the V5 metadata tags where needed (OpCode, V2Params for arrays), as
   * .NET 5 and later write it; 6: the V6 block stream. Default 5.
   */
  version?: 4 | 5 | 6;
  /** Size of the instruction pointers of stacks (and of the machine, V6). Default 8. */
  pointerSize?: 4 | 8;
  processId?: number;
  numberOfProcessors?: number;
  /** Expected CPU sampling rate (the sample profiler's interval, ns). Default 1,000,000. */
  expectedCpuSamplingRate?: number;
  /** QPC ticks per second. Default 10,000,000. */
  qpcFrequency?: bigint;
  /** QPC at syncTimeUtc: the clock's anchor. Default 0. */
  syncTimeQpc?: bigint;
  /** Wall-clock time at syncTimeQpc, as a FILETIME (100 ns since 1601, UTC) or a Date; millisecond precision. */
  syncTimeUtc?: bigint | Date;
  /** Header compression (§6.5), as the runtime always writes V4+; false: the uncompressed headers (§6.3, §6.4). Default true. */
  compressedHeaders?: boolean;
  /** Event bytes at which the event block is written out (the runtime's 100 KiB). */
  blockBytes?: number;
  /** Output bytes between sequence points (default 10 MiB; 0: none). */
  sequencePointBytes?: number;
  /**
   * Each capture thread's events in event blocks of their own, as the runtime writes them: it copies
   * one thread's buffer after another into the file, so a block rarely changes capture thread (in the
   * corpus's runtime-written files, 0.0–0.1% of records do), and a reader merges the threads by time at
   * sequence points. false: one block for all threads, in time order. Default false.
   */
  threadBlocks?: boolean;
  /** V6 trace block key/value pairs besides HardwareThreadCount, ProcessId and ExpectedCPUSamplingRate. */
  keyValues?: [string, string][];
  /** V6 minor version (default 0). */
  minorVersion?: number;
  /** Receives the file's bytes in order. Without it, finish() returns the whole file. */
  onChunk?: (chunk: Uint8Array) => void;
  /** Largest chunk onChunk gets (default 1 MiB). */
  chunkBytes?: number;
  /** A chunk onChunk gets stays valid only during the call (its memory is filled again): for consumers that write it out at once. */
  reuseChunks?: boolean;
}

/** An event's metadata (§7). */
export interface NettraceEventDefinition {
  providerName: string;
  eventId: number;
  /** Empty for the .NET runtime's own events (§7.5). */
  eventName?: string;
  version?: number;
  level?: number;
  keywords?: bigint;
  /** Written as the V5 OpCode tag or V6 optional metadata (not expressible in version 4). */
  opcode?: number;
  /** The payload's fields; none for the .NET runtime's own events. Arrays need version 5 or 6. */
  fields?: NettraceFieldSpec[];
  /** V6 only. */
  messageTemplate?: string;
  description?: string;
}

/**
 * One event. Fill one object and pass it to writeEvent again and again: nothing of it is kept. Thread
 * ids are the operating system's (V6 files number them through the thread table, §10.1).
 */
export interface NettraceEventInput {
  /** From defineEvent. */
  metadataId: number;
  /** QPC ticks, a safe integer. */
  timestamp: number;
  threadId: number;
  /** The thread that wrote the event (sequence numbers count per capture thread); default threadId. */
  captureThreadId?: number;
  /** The processor it was written on; -1 (default) unknown. */
  processor?: number;
  /** Payload bytes `payload[payloadStart, payloadEnd)` (default: all of it). */
  payload?: Uint8Array;
  payloadStart?: number;
  payloadEnd?: number;
  /** Stack: instruction pointers of pointerSize bytes, leaf first, `stack[stackStart, stackEnd)`; interned into stack blocks. */
  stack?: Uint8Array | null;
  stackStart?: number;
  stackEnd?: number;
  /** 16 bytes each (.NET GUID layout), null or absent: none. */
  activityId?: Uint8Array | null;
  relatedActivityId?: Uint8Array | null;
  /** The IsSorted flag (§6.5, §13): the event's time is ≥ every earlier event's and ≤ every later one's. */
  sorted?: boolean;
}

/** Counts of what a writer has written. */
export interface NettraceWriterStats {
  /** File bytes so far (those still in open blocks not counted until finish()). */
  bytes: number;
  events: number;
  metadata: number;
  /** Stacks written (each interned stack once per sequence-point interval). */
  stacks: number;
  blocks: { event: number; metadata: number; stack: number; sequencePoint: number; thread: number; labelList: number };
}

const TWO_32 = 4294967296;
const MAX_HEADER = 96; // the longest event header, compressed or not

/** A growable byte array for a block's content. */
class Bytes {
  buf: Uint8Array;
  view: DataView;
  at = 0;
  constructor(capacity: number) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
  }
  /** Room for `n` more bytes; returns the write position. */
  room(n: number): number {
    if (this.at + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
      next.set(this.buf.subarray(0, this.at));
      this.buf = next;
      this.view = new DataView(next.buffer);
    }
    return this.at;
  }
  u8(v: number): void {
    const p = this.room(1);
    this.buf[p] = v;
    this.at = p + 1;
  }
  u16(v: number): void {
    const p = this.room(2);
    this.view.setUint16(p, v, true);
    this.at = p + 2;
  }
  u32(v: number): void {
    const p = this.room(4);
    this.view.setUint32(p, v >>> 0, true);
    this.at = p + 4;
  }
  i64(v: bigint): void {
    const p = this.room(8);
    this.view.setBigInt64(p, BigInt.asIntN(64, v), true);
    this.at = p + 8;
  }
  /** A whole number below 2^53, as 8 bytes. */
  n64(v: number): void {
    const p = this.room(8);
    const lo = v >>> 0;
    this.view.setUint32(p, lo, true);
    this.view.setUint32(p + 4, Math.floor((v - lo) / TWO_32) >>> 0, true);
    this.at = p + 8;
  }
  varU(v: number): void {
    this.room(10);
    this.at = writeVarU(this.buf, this.at, v);
  }
  bytes(b: Uint8Array, start = 0, end = b.length): void {
    const p = this.room(end - start);
    this.buf.set(b.subarray(start, end), p);
    this.at = p + end - start;
  }
  utf16z(s: string): void {
    const p = this.room(2 * s.length + 2);
    for (let i = 0; i < s.length; i++) this.view.setUint16(p + 2 * i, s.charCodeAt(i), true);
    this.view.setUint16(p + 2 * s.length, 0, true);
    this.at = p + 2 * s.length + 2;
  }
  utf8v(s: string): void {
    const b = UTF8.encode(s);
    this.varU(b.length);
    this.bytes(b);
  }
  reset(): void {
    this.at = 0;
  }
}

const UTF8 = new TextEncoder();

/** LEB128 of a whole number below 2^53 at `p`; returns the position after it. */
function writeVarU(b: Uint8Array, p: number, v: number): number {
  if (v < 0x80) {
    b[p] = v;
    return p + 1;
  }
  if (v <= 0xffffffff) {
    // (unsigned shifts hold up to 32 bits)
    while (v >= 0x80) {
      b[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[p++] = v;
    return p;
  }
  while (v >= 0x80) {
    b[p++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  b[p++] = v;
  return p;
}

/** LEB128 of a 64-bit value given as a bigint (wrapped to 64 bits). */
function writeVarU64(b: Uint8Array, p: number, v: bigint): number {
  let x = BigInt.asUintN(64, v);
  while (x >= 0x80n) {
    b[p++] = Number(x & 0x7fn) | 0x80;
    x >>= 7n;
  }
  b[p++] = Number(x);
  return p;
}

/** FILETIME → SYSTEMTIME fields (year, month, dayOfWeek, day, hour, minute, second, millisecond). */
function systemTime(t: bigint | Date): number[] {
  const d = t instanceof Date ? t : new Date(Number(t / 10000n) - 11644473600000);
  if (Number.isNaN(d.getTime())) throw new RangeError("syncTimeUtc is not a valid time");
  return [
    d.getUTCFullYear(),
    d.getUTCMonth() + 1,
    d.getUTCDay(),
    d.getUTCDate(),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  ];
}

const isZero16 = (b: Uint8Array | null | undefined) => {
  if (!b) return true;
  for (let i = 0; i < 16; i++) if (b[i] !== 0) return false;
  return true;
};

/** Does a field list need the V2 layout (arrays)? Types only V6 has call `v6Only`; unknown codes throw. */
function fieldsNeed(fields: NettraceType[] | undefined, v6Only: (t: NettraceType) => void): boolean {
  let v2 = false;
  const visit = (t: NettraceType) => {
    const c = t.typeCode;
    if (!Number.isInteger(c) || c < 1 || c === 2 || c > 26) throw new RangeError(`type code ${c}`);
    if (c === TC_ARRAY) v2 = true;
    if (c > TC_ARRAY) v6Only(t);
    if (t.elementType) visit(t.elementType);
    for (const f of t.fields ?? []) visit(f);
  };
  for (const f of fields ?? []) visit(f);
  return v2;
}

/** Per capture thread: its last sequence number, in V6 its thread-table index, and with threadBlocks its event block. */
interface ThreadState {
  sequence: number;
  index: number;
  block?: EventBlock;
}

/** The compressed-header state (§6.5), reset at every block. */
class Previous {
  metadataId = 0;
  sequence = 0;
  captureThread = 0;
  processor = 0;
  thread = 0;
  stackId = 0;
  timestamp = 0;
  labelList = 0;
  payloadSize = 0;
  /** An activity or related activity id is set (not all zero). */
  activitySet = false;
  readonly activity = new Uint8Array(16);
  readonly related = new Uint8Array(16);
  reset(): void {
    this.metadataId = this.sequence = this.captureThread = this.processor = this.thread = this.stackId = this.timestamp = 0;
    this.labelList = this.payloadSize = 0;
    this.activitySet = false;
    this.activity.fill(0);
    this.related.fill(0);
  }
}

/** An open event block: its bytes, its compressed-header state, its events and their time range. */
class EventBlock {
  readonly bytes: Bytes;
  readonly prev = new Previous();
  count = 0;
  min = 0;
  max = 0;
  constructor(capacity: number) {
    this.bytes = new Bytes(capacity);
    this.open();
  }
  open(): void {
    this.bytes.reset();
    this.bytes.at = EVENT_BLOCK_HEADER_BYTES;
    this.count = 0;
    this.prev.reset();
  }
}

/**
 * The stacks since the last sequence point, laid out as their stack blocks are (§8): each block's
 * 8-byte header (FirstId, Count), then per stack `u32 size` and the frames, block after block in
 * `arena`; an open-addressing table of ids finds a stack by its bytes.
 */
class StackTable {
  arena = new Uint8Array(1 << 16);
  view = new DataView(this.arena.buffer);
  at = 0;
  /** Where the open block's header is. */
  blockStart = 0;
  firstId = 1;
  nextId = 1;
  /** By id: where its size field is, and its hash. */
  private offset = new Uint32Array(1024);
  private hashOf = new Int32Array(1024);
  private slots = new Int32Array(4096);

  constructor() {
    this.openBlock();
  }

  get blockCount(): number {
    return this.nextId - this.firstId;
  }

  /** Bytes of the open block, its header included. */
  get blockLength(): number {
    return this.at - this.blockStart;
  }

  openBlock(): void {
    this.room(8);
    this.blockStart = this.at;
    this.at += 8;
    this.firstId = this.nextId;
  }

  /** Forgets every stack (a sequence point): ids start again at 1. */
  reset(): void {
    this.at = 0;
    this.nextId = 1;
    this.slots.fill(0);
    this.openBlock();
  }

  private room(n: number): void {
    if (this.at + n <= this.arena.length) return;
    const grown = new Uint8Array(Math.max(this.arena.length * 2, this.at + n));
    grown.set(this.arena.subarray(0, this.at));
    this.arena = grown;
    this.view = new DataView(grown.buffer);
  }

  /** The id of the `n` bytes at `o` of `src` (0 when new), given their hash. */
  find(src: DataView, o: number, n: number, h: number): number {
    const mask = this.slots.length - 1;
    const v = this.view;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const id = this.slots[slot];
      if (id === 0) return 0;
      if (this.hashOf[id] !== h) continue;
      const at = this.offset[id];
      if (v.getUint32(at, true) !== n) continue;
      let i = 0;
      for (; i + 4 <= n; i += 4) if (v.getUint32(at + 4 + i, true) !== src.getUint32(o + i, true)) break;
      if (i + 4 <= n) continue;
      for (; i < n; i++) if (v.getUint8(at + 4 + i) !== src.getUint8(o + i)) break;
      if (i === n) return id;
    }
  }

  /** Adds the `n` bytes at `o` of `src` (hash `h`) to the open block; returns the new id. */
  add(src: DataView, o: number, n: number, h: number): number {
    const id = this.nextId++;
    if (id >= this.offset.length) {
      const offset = new Uint32Array(this.offset.length * 2);
      offset.set(this.offset);
      this.offset = offset;
      const hashOf = new Int32Array(this.hashOf.length * 2);
      hashOf.set(this.hashOf);
      this.hashOf = hashOf;
    }
    this.room(4 + n);
    const v = this.view,
      at = this.at;
    v.setUint32(at, n, true);
    copyView(src, o, v, at + 4, n);
    this.at = at + 4 + n;
    this.offset[id] = at;
    this.hashOf[id] = h;
    if (2 * id >= this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(id, h);
    return id;
  }

  private place(id: number, h: number): void {
    const mask = this.slots.length - 1;
    let slot = h & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = id;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    for (let id = 1; id < this.nextId; id++) this.place(id, this.hashOf[id]);
  }
}

/** Copies `n` bytes between DataViews, four at a time. */
function copyView(src: DataView, o: number, dst: DataView, at: number, n: number): void {
  let i = 0;
  for (; i + 4 <= n; i += 4) dst.setUint32(at + i, src.getUint32(o + i, true), true);
  for (; i < n; i++) dst.setUint8(at + i, src.getUint8(o + i));
}

/** A hash of `n` bytes at `o`. */
function hashView(v: DataView, o: number, n: number): number {
  let h = 0x811c9dc5 ^ n;
  let i = 0;
  for (; i + 4 <= n; i += 4) h = Math.imul(h ^ v.getUint32(o + i, true), 0x01000193);
  for (; i < n; i++) h = Math.imul(h ^ v.getUint8(o + i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h;
}

export class NettraceWriter {
  readonly version: 4 | 5 | 6;
  readonly pointerSize: 4 | 8;
  readonly compressed: boolean;
  private readonly blockBytes: number;
  private readonly sequencePointBytes: number;
  private readonly onChunk?: (chunk: Uint8Array) => void;
  private readonly reuseChunks: boolean;
  private readonly chunkBytes: number;

  // output
  private out: Uint8Array;
  private outAt = 0;
  private emitted = 0;
  private readonly chunks: Uint8Array[] = [];
  private finished = false;

  // open blocks
  /** The event block of all threads, or with threadBlocks the open blocks of each (ThreadState.block), in `eventBlocks`. */
  private readonly eventBlock: EventBlock | undefined;
  private readonly eventBlocks: EventBlock[] = [];
  /** Bytes in the open event blocks. */
  private eventBytes = 0;
  private readonly metadataBlock: Bytes;
  private readonly stacks = new StackTable();
  private readonly threadBlock = new Bytes(256);
  private readonly labelBlock = new Bytes(256);
  /** Metadata payloads, sequence points and the stream header are built here; block framing in `frame`. */
  private readonly scratch = new Bytes(256);
  private readonly frame = new Bytes(64);
  private readonly metadataPrev = new Previous();
  private metadataCount = 0; // in the open metadata block
  private labelCount = 0; // in the open label-list block
  private metadataMin = 0;
  private metadataMax = 0;

  // tables
  private nextMetadataId = 1;
  private readonly threads = new Map<number, ThreadState>();
  private nextThreadIndex = 1;
  /** DataViews of the last few buffers payloads and stacks came from (sources repeat). */
  private readonly sourceBuffers: (ArrayBufferLike | null)[] = [null, null, null, null];
  private readonly sourceViews: DataView[] = [];
  private sourceNext = 0;
  private readonly sourceArrays: Uint8Array[] = [];
  private readonly sourceArrayViews: DataView[] = [];
  private readonly cachedIds = new Float64Array(64).fill(-1);
  private readonly cachedStates: (ThreadState | undefined)[] = new Array(64).fill(undefined);
  private readonly labelLists = new Map<string, number>();
  private nextLabelList = 1;
  private firstLabelList = 1; // of the open label-list block
  private lastTimestamp = 0;
  private lastSequencePoint = 0;

  readonly stats: NettraceWriterStats = {
    bytes: 0,
    events: 0,
    metadata: 0,
    stacks: 0,
    blocks: { event: 0, metadata: 0, stack: 0, sequencePoint: 0, thread: 0, labelList: 0 },
  };

  constructor(opts: NettraceWriterOptions = {}) {
    this.version = opts.version ?? 5;
    if (this.version !== 4 && this.version !== 5 && this.version !== 6) throw new RangeError(`nettrace version ${this.version}: 4, 5 or 6`);
    this.pointerSize = opts.pointerSize ?? 8;
    if (this.pointerSize !== 4 && this.pointerSize !== 8) throw new RangeError(`pointer size ${this.pointerSize}: 4 or 8`);
    this.compressed = opts.compressedHeaders ?? true;
    this.blockBytes = opts.blockBytes ?? 100 * 1024;
    this.sequencePointBytes = opts.sequencePointBytes ?? 10 * 1024 * 1024;
    this.onChunk = opts.onChunk;
    this.reuseChunks = opts.reuseChunks ?? false;
    this.chunkBytes = Math.max(4096, opts.chunkBytes ?? 1 << 20);
    if (this.version === 6 && this.blockBytes + 4096 > 0xffffff) throw new RangeError("V6 blocks are at most 16 MiB");
    this.out = new Uint8Array(this.chunkBytes);
    if (!opts.threadBlocks) this.eventBlocks.push((this.eventBlock = new EventBlock(this.blockBytes + 4096)));
    this.metadataBlock = new Bytes(4096);
    this.lastTimestamp = Number(opts.syncTimeQpc ?? 0n);
    this.header(opts);
    this.openMetadataBlock();
    this.openLabelBlock();
  }

  /** File bytes so far, those in open blocks included. */
  get size(): number {
    return (
      this.emitted +
      this.outAt +
      this.eventBytes +
      (this.eventBlock ? EVENT_BLOCK_HEADER_BYTES : 0) +
      this.metadataBlock.at +
      this.stacks.blockLength +
      this.threadBlock.at +
      this.labelBlock.at
    );
  }

  // ---- output ----

  private put(src: Uint8Array, start: number, end: number): void {
    while (start < end) {
      const n = Math.min(end - start, this.out.length - this.outAt);
      this.out.set(src.subarray(start, start + n), this.outAt);
      this.outAt += n;
      start += n;
      if (this.outAt === this.out.length) this.emit();
    }
  }

  private putByte(v: number): void {
    this.out[this.outAt++] = v;
    if (this.outAt === this.out.length) this.emit();
  }

  private putU32(v: number): void {
    for (let k = 0; k < 4; k++) this.putByte((v >>> (8 * k)) & 0xff);
  }

  private emit(): void {
    if (this.outAt === 0) return;
    const chunk = this.out.subarray(0, this.outAt);
    this.emitted += this.outAt;
    this.stats.bytes = this.emitted;
    if (this.onChunk) {
      this.onChunk(chunk);
      if (!this.reuseChunks) this.out = new Uint8Array(this.chunkBytes);
    } else {
      this.chunks.push(chunk);
      this.out = new Uint8Array(this.chunkBytes);
    }
    this.outAt = 0;
  }

  /** The file offset of the next byte out. */
  private get position(): number {
    return this.emitted + this.outAt;
  }

  // ---- stream header and Trace object/block (§1, §3, §5) ----

  private header(opts: NettraceWriterOptions): void {
    const b = this.scratch;
    b.reset();
    for (const c of NETTRACE_MAGIC) b.u8(c.charCodeAt(0));
    const st = systemTime(opts.syncTimeUtc ?? 133000000000000000n);
    const trace = new Bytes(128);
    for (const v of st) trace.u16(v);
    trace.i64(opts.syncTimeQpc ?? 0n);
    trace.i64(opts.qpcFrequency ?? 10_000_000n);
    trace.u32(this.pointerSize);
    const pid = opts.processId ?? 0,
      cpus = opts.numberOfProcessors ?? 1,
      rate = opts.expectedCpuSamplingRate ?? 1_000_000;
    if (this.version === 6) {
      b.u32(0);
      b.u32(6);
      b.u32(opts.minorVersion ?? 0);
      const kv: [string, string][] = [
        ["HardwareThreadCount", String(cpus)],
        ["ProcessId", String(pid)],
        ["ExpectedCPUSamplingRate", String(rate)],
        ...(opts.keyValues ?? []),
      ];
      trace.u32(kv.length);
      for (const [k, v] of kv) {
        trace.utf8v(k);
        trace.utf8v(v);
      }
      b.u32((1 << 24) | trace.at);
      b.bytes(trace.buf, 0, trace.at);
    } else {
      b.u32(FS_SIGNATURE.length);
      for (const c of FS_SIGNATURE) b.u8(c.charCodeAt(0));
      trace.u32(pid);
      trace.u32(cpus);
      trace.u32(rate);
      this.typeHeader(b, "Trace", 4);
      b.bytes(trace.buf, 0, trace.at);
      b.u8(TAG_END);
    }
    this.put(b.buf, 0, b.at);
  }

  /** BeginPrivateObject, the type object (version = minimum reader version), EndObject (§3). */
  private typeHeader(b: Bytes, name: string, version: number): void {
    b.u8(TAG_BEGIN_PRIVATE);
    b.u8(TAG_BEGIN_PRIVATE);
    b.u8(TAG_NULL);
    b.u32(version);
    b.u32(version);
    b.u32(name.length);
    for (const c of name) b.u8(c.charCodeAt(0));
    b.u8(TAG_END);
  }

  /** One block: V4/V5 an object (size, padding to a 4-byte file offset, content, end tag); V6 a kind/size word and the content. */
  private writeBlock(kind: number, content: Uint8Array, length: number, start = 0): void {
    if (this.version === 6) {
      this.putU32((kind << 24) | length);
      this.put(content, start, start + length);
      return;
    }
    const b = this.frame;
    b.reset();
    this.typeHeader(b, BLOCK_OBJECT_NAMES[kind], 2);
    b.u32(length);
    const contentAt = this.position + b.at;
    for (let k = 0; k < (4 - (contentAt % 4)) % 4; k++) b.u8(0);
    this.put(b.buf, 0, b.at);
    this.put(content, start, start + length);
    this.putByte(TAG_END);
  }

  // ---- metadata (§7) ----

  /** Defines an event's metadata; returns its id for writeEvent. */
  defineEvent(def: NettraceEventDefinition): number {
    this.checkOpen();
    const v2 = fieldsNeed(def.fields, (t) => {
      if (this.version !== 6) throw new RangeError(`type code ${t.typeCode} needs nettrace version 6`);
    });
    if (v2 && this.version === 4) throw new RangeError(`${def.providerName}/${def.eventId}: arrays need nettrace version 5 or 6`);
    const id = this.nextMetadataId++;
    const m = this.scratch;
    m.reset();
    if (this.version === 6) this.v6Metadata(m, id, def);
    else {
      m.u32(id);
      m.utf16z(def.providerName);
      m.u32(def.eventId);
      m.utf16z(def.eventName ?? "");
      m.i64(def.keywords ?? 0n);
      m.u32(def.version ?? 0);
      m.u32(def.level ?? 0);
      if (v2) {
        m.u32(0);
        const tag = new Bytes(256);
        this.fieldList(tag, def.fields ?? [], 2);
        m.u32(tag.at);
        m.u8(2); // V2Params
        m.bytes(tag.buf, 0, tag.at);
      } else this.fieldList(m, def.fields ?? [], 1);
      if (this.version === 5 && def.opcode) {
        m.u32(1);
        m.u8(1); // OpCode
        m.u8(def.opcode);
      }
    }
    this.addMetadataRecord(m.buf, m.at);
    this.stats.metadata++;
    return id;
  }

  /** V1 (1), V2 (2) or V6 (6) field list. */
  private fieldList(b: Bytes, fields: NettraceFieldSpec[], layout: 1 | 2 | 6): void {
    if (layout === 6) b.u16(fields.length);
    else b.u32(fields.length);
    for (const f of fields) {
      if (layout === 1) {
        this.fieldType(b, f, 1);
        b.utf16z(f.name);
        continue;
      }
      const d = new Bytes(64);
      if (layout === 6) d.utf8v(f.name);
      else d.utf16z(f.name);
      this.fieldType(d, f, layout);
      if (layout === 6) b.u16(d.at);
      else b.u32(d.at + 4); // (the size counts itself)
      b.bytes(d.buf, 0, d.at);
    }
  }

  private fieldType(b: Bytes, t: NettraceType, layout: 1 | 2 | 6): void {
    if (layout === 6) b.u8(t.typeCode);
    else b.u32(t.typeCode);
    const c = t.typeCode;
    if (c === TC_ARRAY || c === TC_FIXED_ARRAY || c === TC_RELLOC || c === TC_DATALOC) {
      if (!t.elementType) throw new RangeError(`type code ${c} needs an element type`);
      this.fieldType(b, t.elementType, layout);
      if (c === TC_FIXED_ARRAY) b.u16(t.elementCount ?? 0);
    }
    if (c === TC_OBJECT) this.fieldList(b, t.fields ?? [], layout);
  }

  private v6Metadata(m: Bytes, id: number, def: NettraceEventDefinition): void {
    m.u16(0); // row size, set below
    m.varU(id);
    m.utf8v(def.providerName);
    m.varU(def.eventId);
    m.utf8v(def.eventName ?? "");
    this.fieldList(m, def.fields ?? [], 6);
    const opt = new Bytes(64);
    if (def.opcode) {
      opt.u8(1);
      opt.u8(def.opcode);
    }
    if (def.keywords) {
      opt.u8(3);
      opt.i64(def.keywords);
    }
    if (def.messageTemplate !== undefined) {
      opt.u8(4);
      opt.utf8v(def.messageTemplate);
    }
    if (def.description !== undefined) {
      opt.u8(5);
      opt.utf8v(def.description);
    }
    if (def.level) {
      opt.u8(8);
      opt.u8(def.level);
    }
    if (def.version) {
      opt.u8(9);
      opt.u8(def.version);
    }
    m.u16(opt.at);
    m.bytes(opt.buf, 0, opt.at);
    if (m.at - 2 > 0xffff) throw new RangeError("metadata row over 64 KiB");
    m.view.setUint16(0, m.at - 2, true);
  }

  /** A metadata payload into the metadata block: V4/V5 a record with metadata id 0, V6 a row. */
  private addMetadataRecord(payload: Uint8Array, length: number): void {
    const b = this.metadataBlock;
    if (this.metadataCount > 0 && b.at + length + MAX_HEADER > this.blockBytes) this.flushMetadata();
    const ts = this.lastTimestamp;
    if (this.metadataCount === 0) this.metadataMin = ts;
    this.metadataMax = ts;
    this.metadataCount++;
    if (this.version === 6) {
      b.bytes(payload, 0, length);
      return;
    }
    const p = this.metadataPrev;
    b.room(MAX_HEADER + length);
    if (this.compressed) {
      let flags = 0;
      if (length !== p.payloadSize) flags |= 0x80;
      b.u8(flags);
      this.varTimestamp(b, ts - p.timestamp);
      if (flags & 0x80) b.varU(length);
      p.timestamp = ts;
      p.payloadSize = length;
    } else {
      this.uncompressedHeader(b, 0, 0, 0, 0, 0, 0, 0, ts, null, null, true, length);
    }
    b.bytes(payload, 0, length);
    if (!this.compressed) this.pad4(b);
  }

  // ---- events (§6) ----

  /** Writes one event (see NettraceEventInput). */
  writeEvent(e: NettraceEventInput): void {
    this.checkOpen();
    if (this.sequencePointBytes > 0 && this.position - this.lastSequencePoint >= this.sequencePointBytes) this.sequencePoint();
    const ts = e.timestamp;
    const tid = e.threadId;
    const ctid = e.captureThreadId ?? tid;
    const proc = e.processor ?? -1;
    const payload = e.payload;
    const pStart = payload ? (e.payloadStart ?? 0) : 0;
    const pEnd = payload ? (e.payloadEnd ?? payload.length) : 0;
    const size = pEnd - pStart;
    // (threads by a direct-mapped cache in front of the map)
    const slot = (ctid ^ (ctid >>> 8)) & 63;
    let capture = this.cachedStates[slot];
    if (this.cachedIds[slot] !== ctid || !capture) {
      capture = this.thread(ctid);
      this.cachedIds[slot] = ctid;
      this.cachedStates[slot] = capture;
    }
    const threadIndex = this.version === 6 ? (ctid === tid ? capture.index : this.thread(tid).index) : tid;
    const captureIndex = this.version === 6 ? capture.index : ctid;
    const stackId = e.stack ? this.internStack(e.stack, e.stackStart ?? 0, e.stackEnd ?? e.stack.length) : 0;
    let labelList = 0;
    const act = e.activityId,
      rel = e.relatedActivityId;
    const activity = act != null && !isZero16(act),
      related = rel != null && !isZero16(rel);
    if (this.version === 6 && (activity || related)) labelList = this.internLabelList(activity ? act! : null, related ? rel! : null);

    let block = this.eventBlock;
    if (!block) {
      block = capture.block;
      if (!block) this.eventBlocks.push((block = capture.block = new EventBlock(this.blockBytes + 4096)));
    }
    const b = block.bytes;
    if (block.count > 0 && b.at + size + MAX_HEADER > this.blockBytes) this.flushBlocks(block);
    const seq = (capture.sequence + 1) >>> 0;
    capture.sequence = seq;
    if (block.count === 0 || ts < block.min) block.min = ts;
    if (block.count === 0 || ts > block.max) block.max = ts;
    block.count++;
    this.stats.events++;
    if (ts > this.lastTimestamp) this.lastTimestamp = ts;
    const before = b.at;
    let p = b.room(MAX_HEADER + size);
    if (!this.compressed) {
      this.uncompressedHeader(
        b,
        e.metadataId,
        seq,
        threadIndex,
        captureIndex,
        proc >>> 0,
        stackId,
        labelList,
        ts,
        activity ? act! : null,
        related ? rel! : null,
        e.sorted ?? false,
        size,
      );
      if (payload) b.bytes(payload, pStart, pEnd);
      if (this.version !== 6) this.pad4(b);
      this.eventBytes += b.at - before;
      return;
    }
    const prev = block.prev;
    const buf = b.buf;
    const flagsAt = p++;
    let flags = 0;
    // (one-byte values, the most, inline)
    const metadataId = e.metadataId;
    if (metadataId !== prev.metadataId) {
      flags |= 0x01;
      if (metadataId < 0x80) buf[p++] = metadataId;
      else p = writeVarU(buf, p, metadataId);
    }
    const procU = proc >>> 0;
    if (seq !== (prev.sequence + 1) >>> 0 || captureIndex !== prev.captureThread || procU !== prev.processor) {
      flags |= 0x02;
      p = writeVarU(buf, p, (seq - prev.sequence - 1) >>> 0);
      p = writeVarU(buf, p, captureIndex);
      p = writeVarU(buf, p, procU);
    }
    if (threadIndex !== prev.thread) {
      flags |= 0x04;
      p = writeVarU(buf, p, threadIndex);
    }
    if (stackId !== prev.stackId) {
      flags |= 0x08;
      p = writeVarU(buf, p, stackId);
    }
    const delta = ts - prev.timestamp;
    if (delta >= 0 && delta < 0x4000) {
      if (delta < 0x80) buf[p++] = delta;
      else {
        buf[p] = (delta & 0x7f) | 0x80;
        buf[p + 1] = delta >>> 7;
        p += 2;
      }
    } else p = delta >= 0 ? writeVarU(buf, p, delta) : writeVarU64(buf, p, BigInt(delta));
    if (this.version === 6) {
      if (labelList !== prev.labelList) {
        flags |= 0x10;
        p = writeVarU(buf, p, labelList);
      }
    } else if (activity || related || prev.activitySet) {
      if (!sameGuid(activity ? act! : null, prev.activity)) {
        flags |= 0x10;
        copyGuid(activity ? act! : null, prev.activity);
        buf.set(prev.activity, p);
        p += 16;
      }
      if (!sameGuid(related ? rel! : null, prev.related)) {
        flags |= 0x20;
        copyGuid(related ? rel! : null, prev.related);
        buf.set(prev.related, p);
        p += 16;
      }
      prev.activitySet = activity || related;
    }
    if (e.sorted) flags |= 0x40;
    if (size !== prev.payloadSize) {
      flags |= 0x80;
      if (size < 0x80) buf[p++] = size;
      else p = writeVarU(buf, p, size);
    }
    buf[flagsAt] = flags;
    // (a whole array copies fastest; a small payload byte by byte)
    if (size <= 8) for (let i = 0; i < size; i++) buf[p + i] = payload![pStart + i];
    else if (pStart === 0 && pEnd === payload!.length) buf.set(payload!, p);
    else buf.set(payload!.subarray(pStart, pEnd), p);
    b.at = p + size;
    this.eventBytes += b.at - before;
    prev.metadataId = metadataId;
    prev.sequence = seq;
    prev.captureThread = captureIndex;
    prev.processor = procU;
    prev.thread = threadIndex;
    prev.stackId = stackId;
    prev.timestamp = ts;
    prev.labelList = labelList;
    prev.payloadSize = size;
  }

  /** The 80-byte (V4/V5) or 52-byte (V6) header (§6.3, §6.4); the caller adds the payload. */
  private uncompressedHeader(
    b: Bytes,
    metadataId: number,
    seq: number,
    thread: number,
    capture: number,
    proc: number,
    stackId: number,
    labelList: number,
    ts: number,
    act: Uint8Array | null,
    rel: Uint8Array | null,
    sorted: boolean,
    payloadSize: number,
  ): void {
    const v6 = this.version === 6;
    const header = v6 ? 52 : 80;
    const padded = v6 ? header + payloadSize : (header + payloadSize + 3) & ~3;
    b.u32(padded - 4);
    // bit 31 set = not sorted, the polarity TraceEvent reads (§6.3)
    b.u32((metadataId | (sorted ? 0 : 0x80000000)) >>> 0);
    b.u32(seq);
    b.n64(thread);
    b.n64(capture);
    b.u32(proc);
    b.u32(stackId);
    b.n64(ts);
    if (v6) b.u32(labelList);
    else {
      const p = b.room(32);
      b.buf.fill(0, p, p + 32);
      if (act) b.buf.set(act.subarray(0, 16), p);
      if (rel) b.buf.set(rel.subarray(0, 16), p + 16);
      b.at = p + 32;
    }
    b.u32(payloadSize);
  }

  private pad4(b: Bytes): void {
    // (block content starts at a 4-byte file offset, so its own offsets align the same way)
    while (b.at % 4) b.u8(0);
  }

  private varTimestamp(b: Bytes, delta: number): void {
    b.room(10);
    b.at = delta >= 0 ? writeVarU(b.buf, b.at, delta) : writeVarU64(b.buf, b.at, BigInt(delta));
  }

  /** A capture thread's state; V6: a thread-table row for a thread first seen. */
  private thread(id: number): ThreadState {
    let t = this.threads.get(id);
    if (!t) {
      t = { sequence: 0, index: 0 };
      this.threads.set(id, t);
      if (this.version === 6) {
        t.index = this.nextThreadIndex++;
        // row: size, index, OSProcessId (2) omitted (the trace's), OSThreadId (3)
        const b = this.threadBlock;
        const at = b.room(2);
        b.at = at + 2;
        b.varU(t.index);
        b.u8(3);
        b.varU(id);
        b.view.setUint16(at, b.at - at - 2, true);
      }
    }
    return t;
  }

  /** A DataView of `b`'s buffer (the last one kept: sources repeat). */
  private viewOf(b: Uint8Array): DataView {
    // (by the array first, then by its buffer: `buffer` is slow to get)
    const n = b.length & 1023;
    if (this.sourceArrays[n] === b) return this.sourceArrayViews[n];
    const buffer = b.buffer,
      known = this.sourceBuffers;
    let view: DataView | undefined;
    for (let k = 0; k < 4 && !view; k++) if (known[k] === buffer) view = this.sourceViews[k];
    if (!view) {
      const k = this.sourceNext;
      this.sourceNext = (k + 1) & 3;
      known[k] = buffer;
      view = this.sourceViews[k] = new DataView(buffer);
    }
    this.sourceArrays[n] = b;
    return (this.sourceArrayViews[n] = view);
  }

  /** The id of a stack since the last sequence point, adding it to the stack block when new (§8). */
  private internStack(s: Uint8Array, start: number, end: number): number {
    const n = end - start;
    if (n <= 0) return 0;
    const v = this.viewOf(s);
    const o = s.byteOffset + start;
    const h = hashView(v, o, n);
    const t = this.stacks;
    const known = t.find(v, o, n, h);
    if (known) return known;
    if (t.blockCount > 0 && t.blockLength + n + 4 > this.blockBytes) this.flushStacks();
    this.stats.stacks++;
    return t.add(v, o, n, h);
  }

  /** V6: the label list of an activity pair since the last sequence point (§10.3). */
  private internLabelList(act: Uint8Array | null, rel: Uint8Array | null): number {
    const hex = (g: Uint8Array | null) => (g ? Array.from(g.subarray(0, 16), (x) => x.toString(16).padStart(2, "0")).join("") : "");
    const key = `${hex(act)}/${hex(rel)}`;
    let index = this.labelLists.get(key);
    if (index !== undefined) return index;
    index = this.nextLabelList++;
    this.labelLists.set(key, index);
    const b = this.labelBlock;
    if (act) {
      b.u8(rel ? 1 : 0x81);
      b.bytes(act, 0, 16);
    }
    if (rel) {
      b.u8(0x82);
      b.bytes(rel, 0, 16);
    }
    this.labelCount++;
    return index;
  }

  // ---- blocks ----

  private openMetadataBlock(): void {
    const b = this.metadataBlock;
    b.reset();
    if (this.version === 6)
      b.u16(0); // header size: no header
    else b.at = EVENT_BLOCK_HEADER_BYTES;
    this.metadataCount = 0;
    this.metadataPrev.reset();
  }

  private openLabelBlock(): void {
    this.labelBlock.reset();
    this.labelBlock.at = 8;
    this.labelCount = 0;
    this.firstLabelList = this.nextLabelList;
  }

  /** The 20-byte event/metadata block header (§6.1). */
  private blockHeader(b: Bytes, min: number, max: number): void {
    const v = b.view;
    v.setUint16(0, EVENT_BLOCK_HEADER_BYTES, true);
    v.setUint16(2, this.compressed ? 1 : 0, true);
    const set64 = (at: number, x: number) => {
      v.setBigInt64(at, BigInt(x), true);
    };
    set64(4, min);
    set64(12, max);
  }

  private flushMetadata(): void {
    if (this.metadataCount === 0) return;
    const b = this.metadataBlock;
    if (this.version !== 6) this.blockHeader(b, this.metadataMin, this.metadataMax);
    this.writeBlock(BLOCK_METADATA, b.buf, b.at);
    this.stats.blocks.metadata++;
    this.openMetadataBlock();
  }

  private flushStacks(): void {
    const t = this.stacks;
    if (t.blockCount === 0) return;
    t.view.setUint32(t.blockStart, t.firstId, true);
    t.view.setUint32(t.blockStart + 4, t.blockCount, true);
    this.writeBlock(BLOCK_STACK, t.arena, t.blockLength, t.blockStart);
    this.stats.blocks.stack++;
    t.openBlock();
  }

  private flushThreads(): void {
    if (this.threadBlock.at === 0) return;
    this.writeBlock(BLOCK_THREAD, this.threadBlock.buf, this.threadBlock.at);
    this.stats.blocks.thread++;
    this.threadBlock.reset();
  }

  private flushLabels(): void {
    if (this.labelCount === 0) return;
    const b = this.labelBlock;
    b.view.setUint32(0, this.firstLabelList, true);
    b.view.setUint32(4, this.labelCount, true);
    this.writeBlock(BLOCK_LABEL_LIST, b.buf, b.at);
    this.stats.blocks.labelList++;
    this.openLabelBlock();
  }

  /**
   * The open blocks, in the order the runtime writes them: what the events refer to first, then the
   * event block `only` (one thread's, full), or every open event block.
   */
  private flushBlocks(only?: EventBlock): void {
    this.flushThreads();
    this.flushMetadata();
    this.flushLabels();
    this.flushStacks();
    for (const block of only ? [only] : this.eventBlocks) {
      if (block.count === 0) continue;
      const b = block.bytes;
      this.blockHeader(b, block.min, block.max);
      this.eventBytes -= b.at - EVENT_BLOCK_HEADER_BYTES;
      this.writeBlock(BLOCK_EVENT, b.buf, b.at);
      this.stats.blocks.event++;
      block.open();
    }
  }

  /**
   * A sequence point (§9): the open blocks go out, then every capture thread's last sequence number;
   * stack ids (and V6 label lists) start again after it.
   */
  sequencePoint(): void {
    this.checkOpen();
    this.flushBlocks();
    const b = this.scratch;
    b.reset();
    const v6 = this.version === 6;
    b.n64(this.lastTimestamp);
    if (v6) b.u32(0);
    b.u32(this.threads.size);
    for (const [id, t] of this.threads) {
      if (v6) {
        b.varU(t.index);
        b.varU(t.sequence);
      } else {
        b.n64(id);
        b.u32(t.sequence);
      }
    }
    this.writeBlock(BLOCK_SEQUENCE_POINT, b.buf, b.at);
    this.stats.blocks.sequencePoint++;
    this.stacks.reset();
    this.labelLists.clear();
    this.nextLabelList = 1;
    this.openLabelBlock();
    this.lastSequencePoint = this.position;
  }

  private checkOpen(): void {
    if (this.finished) throw new Error("the writer has finished");
  }

  /**
   * Writes the open blocks and the end of the stream. Returns the whole file when there is no
   * onChunk (else an empty array: the chunks went out).
   */
  finish(): Uint8Array {
    this.checkOpen();
    this.flushBlocks();
    if (this.version === 6)
      this.putU32(0); // EndOfStream block
    else this.putByte(TAG_NULL); // end of stream
    this.emit();
    this.finished = true;
    this.stats.bytes = this.emitted;
    if (this.onChunk) return new Uint8Array(0);
    const file = new Uint8Array(this.emitted);
    let at = 0;
    for (const c of this.chunks) {
      file.set(c, at);
      at += c.length;
    }
    this.chunks.length = 0;
    return file;
  }
}

function sameGuid(g: Uint8Array | null, prev: Uint8Array): boolean {
  if (!g) {
    for (let i = 0; i < 16; i++) if (prev[i] !== 0) return false;
    return true;
  }
  for (let i = 0; i < 16; i++) if (g[i] !== prev[i]) return false;
  return true;
}

function copyGuid(g: Uint8Array | null, to: Uint8Array): void {
  if (g) to.set(g.subarray(0, 16));
  else to.fill(0);
}
