// Walkers of EventPipe event blocks: what readNettrace (nettrace.ts) calls for the records of each
// V4+ Event/Metadata block. A walker runs walkEventBlock (assembly/nettrace-events.ts) in a core: it
// copies the block into the core's memory, calls the walk, and hands the rows back as views of the
// output columns. The TypeScript core's walker (jsNettraceWalker) is the default; the WebAssembly
// core's is made by bindings/decode/nettrace-engine.ts over the same class, so both engines run the
// one source and differ only in the core under it.

import {
  walkEventBlock, NT_STATUS, NT_ROWS, NT_NEXT, NT_ERR_KIND, NT_ERR_AT, NT_ERR_WHAT, NT_ERR_ARG, NT_ERR_ARG2,
  NT_HEADER_WORDS, NT_COLUMNS, NT_TIMESTAMP_LO, NT_TIMESTAMP_HI, NT_METADATA_ID, NT_FLAGS, NT_SEQUENCE, NT_CAPTURE_LO,
  NT_CAPTURE_HI, NT_THREAD_LO, NT_THREAD_HI, NT_PROCESSOR, NT_STACK_ID, NT_PAYLOAD_OFFSET, NT_PAYLOAD_SIZE,
  NT_ACTIVITY, NT_RELATED, NT_LABEL_LIST, NT_RECORD,
} from "./nettrace-events.js";
import { CoreState } from "./state.js";
import { heapAlloc, heapFree } from "./memory.js";

export { NT_DONE, NT_MORE, NT_ERROR } from "./nettrace-events.js";

/**
 * One call's rows (assembly/nettrace-events.ts walkEventBlock): `count` rows in the columns, whose
 * views may be longer and are valid until the walker's next call. Offsets are file offsets.
 */
export interface NettraceRows {
  count: number;
  /** NT_DONE (the whole range), NT_MORE (call again with `resume` from `next`) or NT_ERROR. */
  status: number;
  /** Where the walk stopped: the end, the next record (NT_MORE), or the malformed record (NT_ERROR). */
  next: number;
  /** NT_ERROR: NTE_* kind, file offset, NTW_* field and the numbers of the message. */
  errorKind: number;
  errorAt: number;
  errorWhat: number;
  errorArg: number;
  errorArg2: number;
  timestampLo: Uint32Array;
  timestampHi: Uint32Array;
  metadataId: Uint32Array;
  /** EVENT_SORTED | EVENT_COMPRESSED. */
  flags: Uint32Array;
  sequenceNumber: Uint32Array;
  captureThreadLo: Uint32Array;
  captureThreadHi: Uint32Array;
  threadLo: Uint32Array;
  threadHi: Uint32Array;
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
}

export interface NettraceWalker {
  /**
   * Walks the records of `bytes[contentStart, contentEnd)`, one block's content after its header
   * (contentEnd: the content's end or the input's, whichever is first). `resume`: continue the block
   * of the last call, which stopped with NT_MORE, from its `next` (= contentStart), keeping the
   * compressed header state and the same contentEnd.
   */
  walk(bytes: Uint8Array, contentStart: number, contentEnd: number, compressed: boolean, v6: boolean, resume?: boolean): NettraceRows;
  /** Releases the walker's memory; it cannot walk again. */
  dispose?(): void;
}

/** What a core gives a walker: the WebAssembly core's exports (assembly/index.ts) or the TypeScript core's equivalents. */
export interface NettraceWalkCore {
  /** Its linear memory; `buffer` is replaced when it grows. */
  memory: { readonly buffer: ArrayBuffer };
  /** A block of `size` bytes, or 0 when memory is exhausted. */
  alloc(size: number): number;
  free(ptr: number): void;
  /** assembly/index.ts nettraceWalk: walkEventBlock over the core's memory. */
  nettraceWalk(start: number, end: number, compressed: number, v6: number, resume: number, out: number, cap: number, bias: number): number;
}

/** Rows per call: the output block is NT_COLUMNS × 4 bytes a row (about 550 KB). */
export const NETTRACE_BATCH = 8192;

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

  constructor(private readonly core: NettraceWalkCore, private readonly cap = NETTRACE_BATCH, private readonly onDispose?: () => void) {}

  walk(bytes: Uint8Array, contentStart: number, contentEnd: number, compressed: boolean, v6: boolean, resume = false): NettraceRows {
    if (this.disposed) throw new Error("etw-wasm: the nettrace walker was disposed");
    const core = this.core;
    if (this.out === 0) {
      this.out = core.alloc((NT_HEADER_WORDS + NT_COLUMNS * this.cap) * 4);
      if (this.out === 0) throw new Error("etw-wasm: out of memory for the nettrace walker's rows");
    }
    if (!resume) {
      const len = Math.max(0, contentEnd - contentStart);
      if (len > this.stagingCap) {
        if (this.staging !== 0) core.free(this.staging);
        const cap = Math.max(len, Math.min(this.stagingCap * 2, 0x7fff_fff8), 64 << 10);
        this.staging = core.alloc(cap);
        this.stagingCap = this.staging === 0 ? 0 : cap;
        if (this.staging === 0) throw new Error(`etw-wasm: out of memory staging a nettrace block of ${len} bytes`);
      }
      new Uint8Array(core.memory.buffer, this.staging, len).set(bytes.subarray(contentStart, contentStart + len));
      this.stagedFrom = contentStart;
      this.bias = (contentStart - this.staging) >>> 0;
    }
    const at = this.staging + (contentStart - this.stagedFrom);
    const end = this.staging + (contentEnd - this.stagedFrom);
    core.nettraceWalk(at, end, compressed ? 1 : 0, v6 ? 1 : 0, resume ? 1 : 0, this.out, this.cap, this.bias);
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
    const col = (k: number) => new Uint32Array(buffer, first + k * cap * 4, cap);
    this.rows = {
      count: 0, status: 0, next: 0, errorKind: 0, errorAt: 0, errorWhat: 0, errorArg: 0, errorArg2: 0,
      timestampLo: col(NT_TIMESTAMP_LO),
      timestampHi: col(NT_TIMESTAMP_HI),
      metadataId: col(NT_METADATA_ID),
      flags: col(NT_FLAGS),
      sequenceNumber: col(NT_SEQUENCE),
      captureThreadLo: col(NT_CAPTURE_LO),
      captureThreadHi: col(NT_CAPTURE_HI),
      threadLo: col(NT_THREAD_LO),
      threadHi: col(NT_THREAD_HI),
      processorNumber: col(NT_PROCESSOR),
      stackId: col(NT_STACK_ID),
      payloadOffset: col(NT_PAYLOAD_OFFSET),
      payloadSize: col(NT_PAYLOAD_SIZE),
      activityIdOffset: col(NT_ACTIVITY),
      relatedActivityIdOffset: col(NT_RELATED),
      labelListId: col(NT_LABEL_LIST),
      recordOffset: col(NT_RECORD),
    };
    return this.rows;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.staging !== 0) this.core.free(this.staging);
    if (this.out !== 0) this.core.free(this.out);
    this.staging = this.out = this.stagingCap = 0;
    this.rows = null;
    this.buffer = null;
    this.words = new Uint32Array(0);
    this.onDispose?.();
  }
}

/**
 * The TypeScript core's walker: walkEventBlock's twin (bindings/core/nettrace-events.ts) over a memory
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
    nettraceWalk: (start, end, compressed, v6, resume, out, rows, bias) => walkEventBlock(s, start, end, compressed, v6, resume, out, rows, bias),
  };
}
