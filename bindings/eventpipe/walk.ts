// Walkers of EventPipe event blocks: what readNettrace (nettrace.ts) calls for the records of each
// V4+ Event/Metadata block. A walker runs walkEventBlock (assembly/nettrace-events.ts) in a core: it
// copies the block into the core's memory, calls the walk, and hands the rows back as views of the
// output columns. The TypeScript core's walker (jsNettraceWalker) is the default; the WebAssembly
// core's is made by bindings/decode/eventpipe/engine.ts over the same class, so both engines run the
// one source and differ only in the core under it.

import {
  walkEventBlock,
  NT_STATUS,
  NT_ROWS,
  NT_NEXT,
  NT_ERR_KIND,
  NT_ERR_AT,
  NT_ERR_WHAT,
  NT_ERR_ARG,
  NT_ERR_ARG2,
  NT_HEADER_WORDS,
  NT_COLUMNS,
  NT_TIMESTAMP,
  NT_METADATA_ID,
  NT_FLAGS,
  NT_SEQUENCE,
  NT_CAPTURE,
  NT_THREAD,
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
  NT_PAD,
  LK_METADATA_ROW,
  LK_STACK_ROW,
  LK_STACK_EPOCH,
  LK_EPOCH,
  LK_CACHE_ID,
  LK_CACHE_QUEUE,
  LK_LAST_SEQUENCE,
  LK_QUEUES,
  LK_LOST,
  LK_WORDS,
  LK_METADATA_DIRECT,
  LK_STACK_DIRECT,
  LK_QUEUE_CACHE,
  LK_LABEL_ROW,
  LK_LABEL_EPOCH,
  LK_LABEL_ACTIVITY,
  LK_LABEL_RELATED,
  LK_LABELS,
  LK_LABEL_DIRECT,
} from "../core/generated/nettrace-events.js";
import { CoreState } from "../core/state.js";
import type { NettraceMetadata } from "./format.js";
import { heapAlloc, heapFree } from "../core/memory.js";

export { NT_MORE, NT_ERROR, NT_SLOW, LK_METADATA_DIRECT, LK_STACK_DIRECT, LK_LABEL_DIRECT, LK_LABELS, queueSlot } from "../core/generated/nettrace-events.js";

/**
 * One call's rows (assembly/nettrace-events.ts walkEventBlock): `count` rows in the columns, whose
 * views may be longer and are valid until the walker's next call. Offsets are file offsets.
 */
export interface NettraceRows {
  count: number;
  /**
   * NT_DONE (the whole range), NT_MORE (call again with `resume` from `next`), NT_SLOW (the last row's
   * lookups are the caller's; then call again with `resume`) or NT_ERROR.
   */
  status: number;
  /** Where the walk stopped: the end, the next record (NT_MORE), or the malformed record (NT_ERROR). */
  next: number;
  /** NT_ERROR: NTE_* kind, file offset, NTW_* field and the numbers of the message. */
  errorKind: number;
  errorAt: number;
  errorWhat: number;
  errorArg: number;
  errorArg2: number;
  /** Two words a row (low, high): a little-endian 64-bit column's layout. */
  timestamp: Uint32Array;
  metadataId: Uint32Array;
  /** EVENT_SORTED | EVENT_COMPRESSED, a byte a row. */
  flags: Uint8Array;
  sequenceNumber: Uint32Array;
  /** Two words a row, as `timestamp`. */
  captureThread: Uint32Array;
  /** Two words a row, as `timestamp`. */
  thread: Uint32Array;
  /** As an i32's bits. */
  processorNumber: Uint32Array;
  stackId: Uint32Array;
  payloadOffset: Uint32Array;
  payloadSize: Uint32Array;
  /** 0: absent or all zero (V4/V5 only). */
  activityIdOffset: Uint32Array;
  relatedActivityIdOffset: Uint32Array;
  labelListId: Uint32Array;
  /** File offset of the record's first byte. */
  recordOffset: Uint32Array;
  /** With lookups, of every row but an NT_SLOW walk's last: its metadata row, stack row (-1: none) and queue number. */
  metadata: Int32Array;
  stack: Int32Array;
  queue: Uint32Array;
}

export interface NettraceWalker {
  /**
   * Walks the records of `bytes[contentStart, contentEnd)`, one block's content after its header
   * (contentEnd: the content's end or the input's, whichever is first). `resume`: continue the block
   * of the last call, which stopped with NT_MORE, from its `next` (= contentStart), keeping the
   * compressed header state and the same contentEnd. `lookups`: do each event's lookups with these
   * tables (an event block's walk), else none (a metadata block's). `into`: write the rows into these
   * columns in the walker's core instead of its own (the rows' column views are then not this call's).
   */
  walk(
    bytes: Uint8Array,
    contentStart: number,
    contentEnd: number,
    compressed: boolean,
    v6: boolean,
    resume?: boolean,
    lookups?: NettraceLookups,
    into?: WalkInto,
  ): NettraceRows;
  /** The lookup tables in the walker's core, emptied, for one reader (`owner`) at a time. */
  lookups(owner: object): NettraceLookups;
  /** Releases the walker's memory; it cannot walk again. */
  dispose?(): void;
  /**
   * Called by a reader that reads in place after each walk into a window's columns (`cols`): rows
   * [first, end) are the events that walk added, their lookups done, the walked block staged still.
   * `metadata`: the reader's metadata rows so far; `pointerSize`: the file's.
   */
  placed?(cols: WindowColumns, first: number, end: number, metadata: readonly NettraceMetadata[], pointerSize: number): void;
  /** The core it walks in, whose memory `into` columns are in. */
  readonly core: NettraceWalkCore;
}

/** What a core gives a walker: the WebAssembly core's exports (assembly/index.ts) or the TypeScript core's equivalents. */
export interface NettraceWalkCore {
  /** Its linear memory; `buffer` is replaced when it grows. */
  memory: { readonly buffer: ArrayBuffer };
  /** A block of `size` bytes, or 0 when memory is exhausted. */
  alloc(size: number): number;
  free(ptr: number): void;
  /** assembly/index.ts nettraceWalk: walkEventBlock over the core's memory. */
  nettraceWalk(
    start: number,
    end: number,
    compressed: number,
    v6: number,
    resume: number,
    out: number,
    cols: number,
    stride: number,
    first: number,
    cap: number,
    bias: number,
    lk: number,
  ): number;
}

/** A reader's window columns in the walker's core (assembly/nettrace-events.ts NT_*, `stride` bytes apart from `ptr`). */
export interface WindowColumns {
  ptr: number;
  stride: number;
}

/**
 * What a CoreWalker calls with the rows a walk placed (NettraceWalker.placed), and `bias`: the staged
 * block's, which maps its addresses in the core to the rows' offsets (offset = address + bias).
 */
export type PlacedRows = (cols: WindowColumns, first: number, end: number, metadata: readonly NettraceMetadata[], pointerSize: number, bias: number) => void;

/** Columns in the walker's core a walk writes its rows into (assembly/nettrace-events.ts NT_*): rows `first` up to `cap`. */
export interface WalkInto {
  cols: number;
  /** Bytes from one column to the next. */
  stride: number;
  first: number;
  cap: number;
}

/**
 * The tables each event's lookups read (metadata rows and stack rows by small id, the capture
 * threads' queue cache, each queue's last sequence number), in the walker's core, where the walk
 * reads them (assembly/nettrace-events.ts LK_*); the reader writes them through these views, which
 * follow the core's memory as it grows (`view()` before each use after anything that may allocate).
 */
export class NettraceLookups {
  readonly ptr: number;
  owner: object | null = null;
  private buffer: ArrayBuffer | null = null;
  words = new Uint32Array(0);
  metadataRow = new Int32Array(0);
  stackRow = new Int32Array(0);
  stackEpoch = new Uint32Array(0);
  cacheId = new Uint32Array(0);
  cacheQueue = new Int32Array(0);
  /** Two words a queue: its last sequence number, and 1 once it has one. */
  sequence = new Uint32Array(0);
  /** V6 label lists by id: row, epoch, ActivityId and RelatedActivityId offsets (0: none). */
  labelRow = new Int32Array(0);
  labelEpoch = new Uint32Array(0);
  labelActivity = new Uint32Array(0);
  labelRelated = new Uint32Array(0);

  constructor(private readonly core: NettraceWalkCore) {
    const bytes = LK_WORDS * 4 + LK_METADATA_DIRECT * 4 + LK_STACK_DIRECT * 8 + LK_QUEUE_CACHE * 8 + LK_LABEL_DIRECT * 16;
    this.ptr = core.alloc(bytes);
    if (this.ptr === 0) throw new Error("etw-wasm: out of memory for the nettrace lookups");
    const w = new Uint32Array(core.memory.buffer, this.ptr, LK_WORDS);
    let at = this.ptr + LK_WORDS * 4;
    w[LK_METADATA_ROW] = at;
    at += LK_METADATA_DIRECT * 4;
    w[LK_STACK_ROW] = at;
    at += LK_STACK_DIRECT * 4;
    w[LK_STACK_EPOCH] = at;
    at += LK_STACK_DIRECT * 4;
    w[LK_CACHE_ID] = at;
    at += LK_QUEUE_CACHE * 4;
    w[LK_CACHE_QUEUE] = at;
    at += LK_QUEUE_CACHE * 4;
    for (const k of [LK_LABEL_ROW, LK_LABEL_EPOCH, LK_LABEL_ACTIVITY, LK_LABEL_RELATED]) {
      w[k] = at;
      at += LK_LABEL_DIRECT * 4;
    }
    w[LK_LAST_SEQUENCE] = 0;
    w[LK_QUEUES] = 0;
    this.reset();
  }

  /** The views of the current memory. */
  view(): this {
    const buffer = this.core.memory.buffer;
    if (buffer === this.buffer) return this;
    this.buffer = buffer;
    const w = (this.words = new Uint32Array(buffer, this.ptr, LK_WORDS));
    this.metadataRow = new Int32Array(buffer, w[LK_METADATA_ROW], LK_METADATA_DIRECT);
    this.stackRow = new Int32Array(buffer, w[LK_STACK_ROW], LK_STACK_DIRECT);
    this.stackEpoch = new Uint32Array(buffer, w[LK_STACK_EPOCH], LK_STACK_DIRECT);
    this.cacheId = new Uint32Array(buffer, w[LK_CACHE_ID], LK_QUEUE_CACHE);
    this.cacheQueue = new Int32Array(buffer, w[LK_CACHE_QUEUE], LK_QUEUE_CACHE);
    this.sequence = new Uint32Array(buffer, w[LK_LAST_SEQUENCE], 2 * w[LK_QUEUES]);
    this.labelRow = new Int32Array(buffer, w[LK_LABEL_ROW], LK_LABEL_DIRECT);
    this.labelEpoch = new Uint32Array(buffer, w[LK_LABEL_EPOCH], LK_LABEL_DIRECT);
    this.labelActivity = new Uint32Array(buffer, w[LK_LABEL_ACTIVITY], LK_LABEL_DIRECT);
    this.labelRelated = new Uint32Array(buffer, w[LK_LABEL_RELATED], LK_LABEL_DIRECT);
    return this;
  }

  /** Empty tables (no metadata, stacks, queues). */
  reset(): void {
    const v = this.view();
    v.metadataRow.fill(0);
    v.stackEpoch.fill(0);
    v.cacheQueue.fill(-1);
    v.cacheId.fill(0);
    v.sequence.fill(0);
    v.labelEpoch.fill(0);
    v.words[LK_LABELS] = 0;
    v.words[LK_EPOCH] = 1;
    v.words[LK_LOST] = 0;
  }

  get epoch(): number {
    return this.view().words[LK_EPOCH];
  }

  set epoch(e: number) {
    this.view().words[LK_EPOCH] = e;
  }

  /** The events lost the walks counted since the last call. */
  takeLost(): number {
    const w = this.view().words;
    const lost = w[LK_LOST];
    w[LK_LOST] = 0;
    return lost;
  }

  /** Room for `queues` queues' sequence numbers (the new ones with none yet). */
  ensureQueues(queues: number): void {
    const w = this.view().words;
    const have = w[LK_QUEUES];
    if (queues <= have) return;
    const cap = Math.max(queues, 2 * have, 64);
    const at = this.core.alloc(cap * 8);
    if (at === 0) throw new Error("etw-wasm: out of memory for the nettrace sequence numbers");
    const old = w[LK_LAST_SEQUENCE];
    const buffer = this.core.memory.buffer;
    const next = new Uint32Array(buffer, at, 2 * cap);
    next.fill(0);
    if (old !== 0) {
      next.set(new Uint32Array(buffer, old, 2 * have));
      this.core.free(old);
    }
    const words = new Uint32Array(buffer, this.ptr, LK_WORDS);
    words[LK_LAST_SEQUENCE] = at;
    words[LK_QUEUES] = cap;
    this.buffer = null;
  }

  /** Queue q's last sequence number, -1: none yet. */
  lastSequence(q: number): number {
    const s = this.view().sequence;
    return s[2 * q + 1] === 0 ? -1 : s[2 * q];
  }

  /** Sets queue q's last sequence number (-1: none). */
  setLastSequence(q: number, seq: number): void {
    const s = this.view().sequence;
    s[2 * q] = seq < 0 ? 0 : seq;
    s[2 * q + 1] = seq < 0 ? 0 : 1;
  }
}

/** Rows per call: the output block is NT_COLUMNS × 4 bytes a row (about 550 KB). */
const NETTRACE_BATCH = 8192;

/** A walker over a core: one output block, and one staging block that grows to the largest block. */
export class CoreWalker implements NettraceWalker {
  private out = 0;
  private staging = 0;
  private stagingCap = 0;
  /** File offset of the staged block's first byte, and the bias that maps its addresses to file offsets. */
  private stagedFrom = 0;
  private bias = 0;
  private buffer: ArrayBuffer | null = null;
  private words = new Uint32Array(0);
  private rows: NettraceRows | null = null;
  private disposed = false;

  /** What the rows each walk places in a reader's window columns go to (NettraceWalker.placed), if anything. */
  onPlaced?: PlacedRows;

  constructor(
    readonly core: NettraceWalkCore,
    private readonly cap = NETTRACE_BATCH,
    private readonly onDispose?: () => void,
  ) {}

  placed(cols: WindowColumns, first: number, end: number, metadata: readonly NettraceMetadata[], pointerSize: number): void {
    this.onPlaced?.(cols, first, end, metadata, pointerSize, this.bias);
  }

  private tables: NettraceLookups | null = null;

  lookups(owner: object): NettraceLookups {
    if (this.disposed) throw new Error("etw-wasm: the nettrace walker was disposed");
    const t = (this.tables ??= new NettraceLookups(this.core));
    if (t.owner !== null) t.reset();
    t.owner = owner;
    return t;
  }

  walk(
    bytes: Uint8Array,
    contentStart: number,
    contentEnd: number,
    compressed: boolean,
    v6: boolean,
    resume = false,
    lookups?: NettraceLookups,
    into?: WalkInto,
  ): NettraceRows {
    if (this.disposed) throw new Error("etw-wasm: the nettrace walker was disposed");
    const core = this.core;
    if (this.out === 0) {
      this.out = core.alloc((NT_HEADER_WORDS + NT_COLUMNS * (this.cap + NT_PAD)) * 4);
      if (this.out === 0) throw new Error("etw-wasm: out of memory for the nettrace walker's rows");
    }
    if (!resume) {
      // (staged from up to 7 bytes before the content, so that source and copy lie alike within 8 bytes: a copy
      // out of a SharedArrayBuffer, a worker's window memory, moves words then, where it moved bytes 5 times slower)
      const skew = (bytes.byteOffset + contentStart) & 7;
      const from = contentStart >= skew ? contentStart - skew : contentStart;
      const len = Math.max(0, contentEnd - from);
      if (len > this.stagingCap) {
        if (this.staging !== 0) core.free(this.staging);
        const cap = Math.max(len, Math.min(this.stagingCap * 2, 0x7fff_fff8), 64 << 10);
        this.staging = core.alloc(cap);
        this.stagingCap = this.staging === 0 ? 0 : cap;
        if (this.staging === 0) throw new Error(`etw-wasm: out of memory staging a nettrace block of ${len} bytes`);
      }
      new Uint8Array(core.memory.buffer, this.staging, len).set(bytes.subarray(from, from + len));
      this.stagedFrom = from;
      this.bias = (from - this.staging) >>> 0;
    }
    const at = this.staging + (contentStart - this.stagedFrom);
    const end = this.staging + (contentEnd - this.stagedFrom);
    const cols = into ? into.cols : this.out + NT_HEADER_WORDS * 4;
    const stride = into ? into.stride : (this.cap + NT_PAD) * 4;
    core.nettraceWalk(
      at,
      end,
      compressed ? 1 : 0,
      v6 ? 1 : 0,
      resume ? 1 : 0,
      this.out,
      cols,
      stride,
      into ? into.first : 0,
      into ? into.cap : this.cap,
      this.bias,
      lookups ? lookups.ptr : 0,
    );
    const rows = this.view();
    const w = this.words;
    const h = this.out >>> 2;
    rows.status = w[h + NT_STATUS];
    rows.count = w[h + NT_ROWS];
    rows.next = w[h + NT_NEXT];
    rows.errorKind = w[h + NT_ERR_KIND];
    rows.errorAt = w[h + NT_ERR_AT];
    rows.errorWhat = w[h + NT_ERR_WHAT];
    rows.errorArg = w[h + NT_ERR_ARG];
    rows.errorArg2 = w[h + NT_ERR_ARG2];
    return rows;
  }

  /** The rows object with views of the current memory (taken again after the memory grew). */
  private view(): NettraceRows {
    const buffer = this.core.memory.buffer;
    if (this.rows && buffer === this.buffer) return this.rows;
    this.buffer = buffer;
    this.words = new Uint32Array(buffer);
    const cap = this.cap;
    const first = this.out + NT_HEADER_WORDS * 4;
    const stride = (cap + NT_PAD) * 4;
    const col = (k: number) => new Uint32Array(buffer, first + k * stride, cap);
    const col64 = (k: number) => new Uint32Array(buffer, first + k * stride, 2 * cap);
    this.rows = {
      count: 0,
      status: 0,
      next: 0,
      errorKind: 0,
      errorAt: 0,
      errorWhat: 0,
      errorArg: 0,
      errorArg2: 0,
      timestamp: col64(NT_TIMESTAMP),
      metadataId: col(NT_METADATA_ID),
      flags: new Uint8Array(buffer, first + NT_FLAGS * stride, cap),
      sequenceNumber: col(NT_SEQUENCE),
      captureThread: col64(NT_CAPTURE),
      thread: col64(NT_THREAD),
      processorNumber: col(NT_PROCESSOR),
      stackId: col(NT_STACK_ID),
      payloadOffset: col(NT_PAYLOAD_OFFSET),
      payloadSize: col(NT_PAYLOAD_SIZE),
      activityIdOffset: col(NT_ACTIVITY),
      relatedActivityIdOffset: col(NT_RELATED),
      labelListId: col(NT_LABEL_LIST),
      recordOffset: col(NT_RECORD),
      metadata: new Int32Array(buffer, first + NT_METADATA * stride, cap),
      stack: new Int32Array(buffer, first + NT_STACK * stride, cap),
      queue: col(NT_QUEUE),
    };
    return this.rows;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.staging !== 0) this.core.free(this.staging);
    if (this.out !== 0) this.core.free(this.out);
    if (this.tables) {
      const seq = this.tables.view().words[LK_LAST_SEQUENCE];
      if (seq !== 0) this.core.free(seq);
      this.core.free(this.tables.ptr);
    }
    this.staging = this.out = this.stagingCap = 0;
    this.rows = null;
    this.tables = null;
    this.buffer = null;
    this.words = new Uint32Array(0);
    this.onDispose?.();
  }
}

/**
 * The TypeScript core's walker: walkEventBlock's twin (bindings/core/generated/nettrace-events.ts) over a memory
 * of its own, `cap` rows per call.
 */
export function jsNettraceWalker(cap = NETTRACE_BATCH): NettraceWalker {
  return new CoreWalker(jsWalkCore(new CoreState()), cap);
}

/** The walk over a TypeScript core's memory (`s`), with its allocator. */
export function jsWalkCore(s: CoreState): NettraceWalkCore {
  return {
    memory: s.memory,
    alloc: (size) => heapAlloc(s, size),
    free: (ptr) => heapFree(s, ptr),
    nettraceWalk: (start, end, compressed, v6, resume, out, cols, stride, first, cap, bias, lk) =>
      walkEventBlock(s, start, end, compressed, v6, resume, out, cols, stride, first, cap, bias, lk),
  };
}
