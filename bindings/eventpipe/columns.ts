// The reader's growable columns (reader.ts): struct-of-arrays in JavaScript memory that grow together,
// and a window's events in its walker's core, where the walk writes them (CoreEventColumns).

import {
  NT_TIMESTAMP,
  NT_CAPTURE,
  NT_THREAD,
  NT_METADATA_ID,
  NT_FLAGS,
  NT_SEQUENCE,
  NT_PROCESSOR,
  NT_STACK_ID,
  NT_PAYLOAD_OFFSET,
  NT_PAYLOAD_SIZE,
  NT_ACTIVITY,
  NT_RELATED,
  NT_LABEL_LIST,
  NT_RECORD,
  NT_METADATA,
  NT_STACK,
  NT_QUEUE,
  NT_BLOCK,
  NT_LABEL_ROW,
  NT_READER_COLUMNS,
  NT_PAD,
} from "../core/generated/nettrace-events.js";
import type { NettraceWalkCore } from "./walk.js";
import type { NettraceBlocks, NettraceEvents, NettraceLabelLists, NettraceSequencePoints, NettraceStacks } from "./format.js";

// ---------------------------------------------------------------------------------------------
// Growable columns

type Column = Uint8Array | Uint16Array | Uint32Array | Int32Array | BigInt64Array | BigUint64Array;

/**
 * The rows columns of `capacity` rows grow to when they must hold `rows`: `expected`, an estimate of the
 * rows there will be in all (at most `most` times the rows needed, at least a quarter more than before),
 * or without one double; at least `first`.
 */
function grownCapacity(capacity: number, first: number, rows: number, expected: number, most: number): number {
  if (expected > 0) return Math.max(Math.min(Math.ceil(expected), rows * most), capacity + (capacity >> 2), first, rows);
  let c = capacity === 0 ? first : capacity * 2;
  while (c < rows) c *= 2;
  return c;
}

function grown<T extends Column>(a: T, capacity: number): T {
  const b = new (a.constructor as new (n: number) => T)(capacity);
  (b as unknown as { set(x: T): void }).set(a);
  return b;
}

/**
 * Columns that grow together: every typed-array field of a subclass, doubled when full (read the
 * fields after `row()`: they may be replaced). `columns()` gives them cut to the rows written.
 */
abstract class Growable {
  length = 0;
  private capacity = 0;
  constructor(private readonly first: number) {}

  /** No rows, the columns kept for the next (a window's rows read before the next window's are). */
  clear(): void {
    this.length = 0;
  }

  /** Index of a new row. */
  protected row(): number {
    if (this.length === this.capacity) this.grow(this.length + 1);
    return this.length++;
  }

  /**
   * Room for `n` more rows (read the fields after: they may be replaced). `expected`: an estimate of
   * the rows there will be in all, which sizes the columns when they grow (at most `most` times the
   * rows needed, at least a quarter more than before); without it they double.
   */
  reserve(n: number, expected = 0, most = 16): void {
    if (this.length + n > this.capacity) this.grow(this.length + n, expected, most);
  }

  /** The rows the columns hold before they grow. */
  get room(): number {
    return this.capacity;
  }

  private grow(rows: number, expected = 0, most = 16): void {
    const c = grownCapacity(this.capacity, this.first, rows, expected, most);
    const self = this as unknown as Record<string, unknown>;
    for (const k of Object.keys(self)) if (ArrayBuffer.isView(self[k])) self[k] = grown(self[k] as Column, c);
    this.capacity = c;
  }

  protected columns<T>(): T {
    const self = this as unknown as Record<string, unknown>;
    const out: Record<string, unknown> = { length: this.length };
    for (const k of Object.keys(self)) if (ArrayBuffer.isView(self[k])) out[k] = (self[k] as Column).subarray(0, this.length);
    return out as T;
  }
}

export class EventColumns extends Growable {
  timestamp = new BigInt64Array(0);
  metadataId = new Uint32Array(0);
  metadata = new Int32Array(0);
  sequenceNumber = new Uint32Array(0);
  captureThreadId = new BigInt64Array(0);
  threadId = new BigInt64Array(0);
  processorNumber = new Int32Array(0);
  stackId = new Uint32Array(0);
  stack = new Int32Array(0);
  payloadOffset = new Uint32Array(0);
  payloadLength = new Uint32Array(0);
  activityIdOffset = new Uint32Array(0);
  relatedActivityIdOffset = new Uint32Array(0);
  labelListId = new Uint32Array(0);
  labelList = new Int32Array(0);
  flags = new Uint8Array(0);
  blockOffset = new Uint32Array(0);
  queue = new Uint32Array(0);
  constructor() {
    super(1024);
  }
  add(): number {
    return this.row();
  }
  refresh(): this {
    return this;
  }
  done(): NettraceEvents {
    return this.columns();
  }
}

/** Where a window's events are in its walker's core (CoreEventColumns): the columns of assembly/nettrace-events.ts NT_*. */
export interface CoreColumns {
  core: NettraceWalkCore;
  /** Address of the first column; `stride`: bytes from one column to the next. */
  ptr: number;
  stride: number;
}

/** The columns in a core of the events a reader that reads in place hands out (CoreEventColumns.done). */
const CORE_COLUMNS = new WeakMap<NettraceEvents, CoreColumns>();

/** Where `events` are in a core, when a reader that reads in place gave them (the views are then of that core's memory). */
export function coreColumnsOf(events: NettraceEvents): CoreColumns | undefined {
  return CORE_COLUMNS.get(events);
}

/**
 * A window's events in its walker's core, where the walk writes them (a reader whose windows are read
 * one at a time: Reader.readInPlace): one block of NT_READER_COLUMNS columns, `stride` bytes apart, of
 * which the views below are made. Anything that allocates in the core may replace its memory: `refresh()`
 * takes the views again (their addresses stay).
 */
export class CoreEventColumns implements CoreColumns {
  length = 0;
  private capacity = 0;
  ptr = 0;
  stride = 0;
  private buffer: ArrayBuffer | null = null;
  timestamp = new BigInt64Array(0);
  metadataId = new Uint32Array(0);
  metadata = new Int32Array(0);
  sequenceNumber = new Uint32Array(0);
  captureThreadId = new BigInt64Array(0);
  threadId = new BigInt64Array(0);
  processorNumber = new Int32Array(0);
  stackId = new Uint32Array(0);
  stack = new Int32Array(0);
  payloadOffset = new Uint32Array(0);
  payloadLength = new Uint32Array(0);
  activityIdOffset = new Uint32Array(0);
  relatedActivityIdOffset = new Uint32Array(0);
  labelListId = new Uint32Array(0);
  labelList = new Int32Array(0);
  flags = new Uint8Array(0);
  blockOffset = new Uint32Array(0);
  queue = new Uint32Array(0);
  /** File offset of each event's record (for the reader's warnings). */
  recordOffset = new Uint32Array(0);

  constructor(readonly core: NettraceWalkCore) {}

  get room(): number {
    return this.capacity;
  }

  clear(): void {
    this.length = 0;
  }

  add(): number {
    if (this.length === this.capacity) this.grow(this.length + 1);
    return this.length++;
  }

  reserve(n: number, expected = 0, most = 16): void {
    if (this.length + n > this.capacity) this.grow(this.length + n, expected, most);
  }

  private grow(rows: number, expected = 0, most = 16): void {
    // (at least fourfold: each block outgrown stays in the core's memory as far as rows were written to it, while
    // the part of a block never written is never resident)
    const cap = Math.max(grownCapacity(this.capacity, 1024, rows, expected, most), 4 * this.capacity);
    const stride = (cap + NT_PAD) * 4;
    const core = this.core;
    const ptr = core.alloc(NT_READER_COLUMNS * stride);
    if (ptr === 0) throw new RangeError(`etw-wasm: out of memory for the columns of ${cap} EventPipe events`);
    if (this.ptr !== 0) {
      const u8 = new Uint8Array(core.memory.buffer);
      for (let k = 0; k < NT_READER_COLUMNS; k++) {
        // (a 64-bit column's two slots are one column of 8 bytes a row; NT_FLAGS a byte a row)
        if (k === NT_TIMESTAMP + 1 || k === NT_CAPTURE + 1 || k === NT_THREAD + 1) continue;
        const size = k === NT_TIMESTAMP || k === NT_CAPTURE || k === NT_THREAD ? 8 : k === NT_FLAGS ? 1 : 4;
        const from = this.ptr + k * this.stride;
        u8.copyWithin(ptr + k * stride, from, from + this.length * size);
      }
      core.free(this.ptr);
    }
    this.ptr = ptr;
    this.stride = stride;
    this.capacity = cap;
    this.buffer = null;
    this.refresh();
  }

  /** The views of the core's current memory. */
  refresh(): this {
    const buffer = this.core.memory.buffer as ArrayBuffer;
    if (buffer === this.buffer) return this;
    this.buffer = buffer;
    const n = this.capacity;
    const at = (k: number) => this.ptr + k * this.stride;
    this.timestamp = new BigInt64Array(buffer, at(NT_TIMESTAMP), n);
    this.captureThreadId = new BigInt64Array(buffer, at(NT_CAPTURE), n);
    this.threadId = new BigInt64Array(buffer, at(NT_THREAD), n);
    this.metadataId = new Uint32Array(buffer, at(NT_METADATA_ID), n);
    this.flags = new Uint8Array(buffer, at(NT_FLAGS), n);
    this.sequenceNumber = new Uint32Array(buffer, at(NT_SEQUENCE), n);
    this.processorNumber = new Int32Array(buffer, at(NT_PROCESSOR), n);
    this.stackId = new Uint32Array(buffer, at(NT_STACK_ID), n);
    this.payloadOffset = new Uint32Array(buffer, at(NT_PAYLOAD_OFFSET), n);
    this.payloadLength = new Uint32Array(buffer, at(NT_PAYLOAD_SIZE), n);
    this.activityIdOffset = new Uint32Array(buffer, at(NT_ACTIVITY), n);
    this.relatedActivityIdOffset = new Uint32Array(buffer, at(NT_RELATED), n);
    this.labelListId = new Uint32Array(buffer, at(NT_LABEL_LIST), n);
    this.recordOffset = new Uint32Array(buffer, at(NT_RECORD), n);
    this.metadata = new Int32Array(buffer, at(NT_METADATA), n);
    this.stack = new Int32Array(buffer, at(NT_STACK), n);
    this.queue = new Uint32Array(buffer, at(NT_QUEUE), n);
    this.blockOffset = new Uint32Array(buffer, at(NT_BLOCK), n);
    this.labelList = new Int32Array(buffer, at(NT_LABEL_ROW), n);
    return this;
  }

  /** The rows as views of the core's memory, valid until something allocates there. */
  done(): NettraceEvents {
    if (this.ptr === 0) this.grow(1);
    this.refresh();
    const n = this.length;
    const events: NettraceEvents = {
      length: n,
      timestamp: this.timestamp.subarray(0, n),
      metadataId: this.metadataId.subarray(0, n),
      metadata: this.metadata.subarray(0, n),
      sequenceNumber: this.sequenceNumber.subarray(0, n),
      captureThreadId: this.captureThreadId.subarray(0, n),
      threadId: this.threadId.subarray(0, n),
      processorNumber: this.processorNumber.subarray(0, n),
      stackId: this.stackId.subarray(0, n),
      stack: this.stack.subarray(0, n),
      payloadOffset: this.payloadOffset.subarray(0, n),
      payloadLength: this.payloadLength.subarray(0, n),
      activityIdOffset: this.activityIdOffset.subarray(0, n),
      relatedActivityIdOffset: this.relatedActivityIdOffset.subarray(0, n),
      labelListId: this.labelListId.subarray(0, n),
      labelList: this.labelList.subarray(0, n),
      flags: this.flags.subarray(0, n),
      blockOffset: this.blockOffset.subarray(0, n),
      queue: this.queue.subarray(0, n),
    };
    CORE_COLUMNS.set(events, { core: this.core, ptr: this.ptr, stride: this.stride });
    return events;
  }
}

export class StackColumns extends Growable {
  stackId = new Uint32Array(0);
  offset = new Uint32Array(0);
  byteLength = new Uint32Array(0);
  constructor() {
    super(256);
  }
  add(id: number, offset: number, byteLength: number): number {
    const i = this.row();
    this.stackId[i] = id;
    this.offset[i] = offset;
    this.byteLength[i] = byteLength;
    return i;
  }
  done(): NettraceStacks {
    return this.columns();
  }
}

export class BlockColumns extends Growable {
  kind = new Uint8Array(0);
  offset = new Uint32Array(0);
  contentOffset = new Uint32Array(0);
  contentLength = new Uint32Array(0);
  version = new Uint16Array(0);
  constructor() {
    super(64);
  }
  add(kind: number, offset: number, contentOffset: number, contentLength: number, version: number): void {
    const i = this.row();
    this.kind[i] = kind;
    this.offset[i] = offset;
    this.contentOffset[i] = contentOffset;
    this.contentLength[i] = contentLength;
    this.version[i] = version & 0xffff;
  }
  done(): NettraceBlocks {
    return this.columns();
  }
}

/** The threads listed by the sequence points, one row each. */
class SequencePointThreads extends Growable {
  captureThreadId = new BigInt64Array(0);
  sequenceNumber = new Uint32Array(0);
  constructor() {
    super(256);
  }
  add(id: bigint, seq: number): void {
    const i = this.row();
    this.captureThreadId[i] = id;
    this.sequenceNumber[i] = seq;
  }
  done(): NettraceSequencePoints["threads"] {
    return this.columns();
  }
}

export class SequencePointColumns extends Growable {
  timestamp = new BigInt64Array(0);
  flags = new Uint32Array(0);
  offset = new Uint32Array(0);
  firstThread = new Uint32Array(0);
  threadCount = new Uint32Array(0);
  private readonly threads = new SequencePointThreads();
  constructor() {
    super(64);
  }
  add(timestamp: bigint, flags: number, offset: number): number {
    const i = this.row();
    this.timestamp[i] = timestamp;
    this.flags[i] = flags;
    this.offset[i] = offset;
    this.firstThread[i] = this.threads.length;
    this.threadCount[i] = 0;
    return i;
  }
  addThread(sp: number, id: bigint, seq: number): void {
    this.threads.add(id, seq);
    this.threadCount[sp]++;
  }
  done(): NettraceSequencePoints {
    return { ...this.columns<Omit<NettraceSequencePoints, "threads">>(), threads: this.threads.done() };
  }
}

export class LabelListColumns extends Growable {
  index = new Uint32Array(0);
  offset = new Uint32Array(0);
  byteLength = new Uint32Array(0);
  present = new Uint16Array(0);
  activityIdOffset = new Uint32Array(0);
  relatedActivityIdOffset = new Uint32Array(0);
  traceIdOffset = new Uint32Array(0);
  spanId = new BigUint64Array(0);
  opcode = new Uint8Array(0);
  level = new Uint8Array(0);
  version = new Uint8Array(0);
  keywords = new BigUint64Array(0);
  constructor() {
    super(64);
  }
  add(): number {
    return this.row();
  }
  done(): NettraceLabelLists {
    return this.columns();
  }
}
