// Parallel decoding. The input is cut at buffer boundaries into segments of whole buffers; buffer 0
// (the logfile header's) is decoded here first, for what every other core needs to know of the
// trace (resumeAt); each further segment goes to a worker, whose core continues the trace from the
// segment's first buffer. The workers' windows come back copied out of their cores (packWindow) and
// are merged here in file order: their provider and event type indices, which are their cores' own,
// are mapped onto one table of each, numbered in order of first sight as one core would number
// them, and their warnings are numbered on. Whatever the cutter cannot cut cleanly (a damaged
// buffer header, a last buffer cut short, trailing bytes) is decoded here by one core, as it would
// be by a single one. The result is the single-core decode, window boundaries aside.

import * as C from "../../../assembly/codes.js";
import { compiledCore, sharedMemoryCore } from "../windows/loader.js";
import {
  blobChunks,
  compressedTrace,
  decodeWindows,
  knownSize,
  memoryPages,
  type DecodeEnd,
  type DecodeOptions,
  type Resume,
  type TraceContext,
  type Window,
} from "../windows/windows.js";
import { isByteSource, type ByteSource, type Input, type SharedSource } from "../input/input.js";
import { slices, sourceChunks } from "../input/chunks.js";
import { giveBack, takeBuffer } from "../result/reuse.js";
import type { NettracePieceRequest } from "../eventpipe/parallel.js";
import { packWindow, SparePool } from "./transfer.js";
import { describeViews, rebuildViews, SharedSlots, type WindowBuffers } from "../workers/shared-slots.js";
import { align8, metaOf, remap, storedColumns, typeKeyOf, untypedRows, withDecidedFields, type TraceData } from "../result/trace-data.js";
import { logfileCopy, rebaseLogfile } from "../windows/builder.js";
import { formatGuid } from "../../schema/guid.js";

import { haveWorkers, openShared, workerAbilities, type DecodeWorker } from "../workers/worker-factory.js";
import { leaseWorker, Mailbox, releaseWorkers, SEGMENT_BYTES, type PooledWorker } from "../workers/worker-pool.js";

/**
 * Segments queued or being decoded per worker, two: on cores with shared memory a core per segment,
 * one decoding while the other's window is with the calling thread (a third core measured no faster
 * with 32 MiB segments and took 110 MB more); with packed windows one decoding, one waiting (a third only
 * adds memory, measured 10% slower on a whole 1 GiB decode).
 */
const IN_FLIGHT_PER_WORKER = 2;
const IN_FLIGHT_SHARED_CORES = 2;

/** The options a worker's decode takes (what crosses to the worker thread). */
type SegmentOptions = Pick<DecodeOptions, "engine" | "batchBytes" | "clrTables" | "memoryLimit" | "filter"> & {
  wasm?: WebAssembly.Module;
  /** The calling thread holds the input whole: windows are sent back without their record bytes (packWindow). */
  recordsInInput?: boolean;
  /** Windows come back in shared buffers, named by slot (SharedSlots), where the worker can make them. */
  sharedWindows?: boolean;
  /**
   * `wasm` is the core for a shared memory (loader.ts sharedMemoryCore): windows are not copied at all
   * but read where the worker's core wrote them (SharedCores).
   */
  sharedCores?: boolean;
};

/** A request to a worker: decode `bytes` (or the worker reads `range` itself) as the trace's segment starting at `resume`. */
interface SegmentRequest {
  segment: number;
  bytes?: Uint8Array;
  range?: { source: SharedSource; offset: number; length: number };
  resume?: Resume;
  options: SegmentOptions;
}

/** How a segment's decode ended (DecodeEnd made to cross threads). */
interface SegmentEnd {
  fileOffset: number;
  stoppedEarly: boolean;
  /** The failure's text (an error's class does not survive postMessage). */
  failure?: string;
  fatalCode: number;
  fatalOffset: number;
  context?: TraceContext;
  clrMissing: number;
  arenaBytes: number;
  /** Warnings met after the segment's last window (WARN_STRIDE-byte structs), and how many were seen. */
  warnings: Uint8Array;
  warningTotal: number;
  /** The request's input buffer, handed back for the next segment. */
  input?: ArrayBuffer;
}

/**
 * A message to a worker: a segment to decode, or buffers (or shared slots) its windows came in, to pack the
 * next ones into; a piece of an EventPipe file to read (eventpipe/parallel.ts), or the memory of its windows.
 */
export type WorkerRequest =
  | SegmentRequest
  | { recycle: ArrayBuffer }
  | { recycleSlot: number }
  | NettracePieceRequest
  | { nettraceRecycle: ArrayBuffer[] }
  | { nettraceReturnLoan: number }
  | { nettraceAdopted: true };

/**
 * A segment's messages: each window (packed; in a shared slot, its views described: `buffer` comes
 * with a slot's first window), then its end, or an error that ended the decode.
 */
export type SegmentMessage =
  | { segment: number; window: Window; slot?: number; buffer?: SharedArrayBuffer }
  | { segment: number; end: SegmentEnd }
  | { segment: number; error: { name: string; message: string } };

/**
 * Decodes one segment: each window copied out of the core (to post, or to keep when the core is
 * let go), then how it ended. Runs in the workers, and here for buffer 0 and the uncut rest.
 */
async function* decodeSegment(
  input: Input,
  options: DecodeOptions & SegmentOptions,
  resume?: Resume,
  pool?: WindowBuffers,
  memory?: WebAssembly.Memory,
): AsyncGenerator<{ window: Window; transfer: ArrayBuffer[] }, SegmentEnd> {
  // (on a shared memory the windows stay where they are: the core waits for each to come back)
  const windows = decodeWindows(input, options, resume, memory);
  let kept = 0,
    seen = 0;
  for (;;) {
    const next = await windows.next();
    if (next.done) {
      const end = next.value;
      try {
        const last = end.last;
        const extra = last
          ? last.bytes.slice(last.warningsOffset + kept * C.WARN_STRIDE, last.warningsOffset + last.warningCount * C.WARN_STRIDE)
          : new Uint8Array(0);
        return {
          fileOffset: end.fileOffset,
          stoppedEarly: end.stoppedEarly,
          failure: end.failure === undefined ? undefined : String(end.failure),
          fatalCode: end.fatalCode,
          fatalOffset: end.fatalOffset,
          context: end.context,
          clrMissing: end.clrMissing,
          arenaBytes: last?.arenaBytes ?? 0,
          warnings: extra,
          warningTotal: last ? last.warningTotal - seen : 0,
        };
      } finally {
        end.release?.();
      }
    }
    kept += next.value.warnings.count;
    seen += next.value.warnings.total;
    yield memory ? { window: { ...next.value, final: false }, transfer: [] } : packWindow(next.value, pool, options.recordsInInput);
  }
}

/** A failure that crossed from a worker as text: prints as the original did. */
class SegmentFailure {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** A segment's core's provider and event type indices, mapped onto the trace's. */
class SegmentMaps {
  providers: number[] = [];
  types: number[] = [];
  providersIdentity = true;
  typesIdentity = true;
}

/**
 * The trace's provider and event type tables and its warnings, as one core would have them, built
 * from the segments' windows in file order; each window's columns mapped onto them.
 */
class Merger {
  private providers: Uint8Array<ArrayBuffer> = new Uint8Array(64 * C.PROV_STRIDE);
  private providerCount = 0;
  private readonly providerIndex = new Map<string, number>();
  private types: Uint8Array<ArrayBuffer> = new Uint8Array(256 * C.TYPE_STRIDE);
  private typeCount = 0;
  private readonly typeIndex = new Map<string, number>();
  private readonly warnings: Uint8Array[] = [];
  private warningCount = 0;
  /** The trace's logfile header (from buffer 0), its addresses relative to the copy. */
  private logfile?: Uint8Array;
  warningTotal = 0;
  rows = 0;
  clrMissing = 0;
  arenaBytes = 0;

  private addWarnings(src: Uint8Array, total: number): Uint8Array {
    const n = Math.min(src.length / C.WARN_STRIDE, C.MAX_WARNINGS - this.warningCount);
    const kept = src.subarray(0, n * C.WARN_STRIDE);
    if (n > 0) this.warnings.push(kept.slice());
    this.warningCount += n;
    this.warningTotal += total;
    return kept;
  }

  /**
   * A segment's window on the trace's tables: indices mapped, its structs (its buffers and warnings,
   * the trace's providers and event types with its own row counts, the logfile header) in a small
   * store of their own (`meta`), so its record store is neither written nor copied.
   */
  take(w: Window, maps: SegmentMaps): Window {
    const d = w.data;
    const bytes = metaOf(d);
    const v = new DataView(bytes.buffer, bytes.byteOffset);
    // the first window is buffer 0's: its core's logfile header struct is the trace's
    const logfile = (this.logfile ??= logfileCopy(d));
    for (let i = maps.providers.length; i < d.providerCount; i++) {
      const at = d.providersOffset + i * C.PROV_STRIDE;
      const key = formatGuid(bytes, at + C.PROV_GUID);
      let g = this.providerIndex.get(key);
      if (g === undefined && this.providerCount < C.MAX_PROVIDERS) {
        g = this.providerCount++;
        if (this.providers.length < this.providerCount * C.PROV_STRIDE) this.providers = grown(this.providers);
        this.providers.set(bytes.subarray(at, at + C.PROV_STRIDE), g * C.PROV_STRIDE);
        this.providerIndex.set(key, g);
      }
      maps.providers.push(g ?? 0xffff);
      if (g !== i) maps.providersIdentity = false;
    }
    for (let t = maps.types.length; t < d.typeCount; t++) {
      const at = d.typesOffset + t * C.TYPE_STRIDE;
      const p = v.getUint16(at + C.TYPE_PROVIDER, true);
      const provider = maps.providers[p] ?? p;
      const key = typeKeyOf(bytes, at, provider);
      let g = this.typeIndex.get(key);
      if (g === undefined && this.typeCount < C.MAX_EVENT_TYPES) {
        g = this.typeCount++;
        if (this.types.length < this.typeCount * C.TYPE_STRIDE) this.types = grown(this.types);
        const o = g * C.TYPE_STRIDE;
        this.types.set(bytes.subarray(at, at + C.TYPE_STRIDE), o);
        new DataView(this.types.buffer).setUint16(o + C.TYPE_PROVIDER, provider, true);
        new DataView(this.types.buffer).setUint32(o + C.TYPE_ROWS, 0, true);
        this.typeIndex.set(key, g);
      }
      maps.types.push(g ?? C.EVENT_TYPE_NONE);
      if (g !== t) maps.typesIdentity = false;
    }
    const e = d.events;
    // (a typed row's provider is its type's, mapped above; a row without a type has its own)
    if (!maps.providersIdentity && d.untyped?.provider && untypedRows(d) > 0) remap(d.untyped.provider, d.eventCount, Uint16Array.from(maps.providers));
    if (!maps.typesIdentity) remap(e.eventType, d.eventCount, Uint16Array.from(maps.types));
    // the window's row counts on the trace's event types
    const types = this.types.slice(0, this.typeCount * C.TYPE_STRIDE);
    const tv = new DataView(types.buffer);
    for (let t = 0; t < d.typeCount; t++) {
      const g = maps.types[t];
      if (g === C.EVENT_TYPE_NONE) continue;
      const o = g * C.TYPE_STRIDE + C.TYPE_ROWS;
      tv.setUint32(o, tv.getUint32(o, true) + v.getUint32(d.typesOffset + t * C.TYPE_STRIDE + C.TYPE_ROWS, true), true);
    }
    const warnings = this.addWarnings(bytes.subarray(w.warnings.offset, w.warnings.offset + w.warnings.count * C.WARN_STRIDE), w.warnings.total);
    const providers = this.providers.subarray(0, this.providerCount * C.PROV_STRIDE);
    const buffers = bytes.subarray(d.buffersOffset, d.buffersOffset + d.bufferCount * C.BUF_STRIDE);
    // (the trace's logfile header: the workers' cores have none, and the clock needs it)
    const parts = [buffers, providers, types, warnings, logfile];
    const meta = new Uint8Array(8 + parts.reduce((n, p) => n + align8(p.length), 0));
    let at = 8;
    const [buffersOffset, providersOffset, typesOffset, warningsOffset, logfileOffset] = parts.map((p) => {
      meta.set(p, at);
      at += align8(p.length);
      return at - align8(p.length);
    });
    rebaseLogfile(meta, logfileOffset);
    const count = warnings.length / C.WARN_STRIDE;
    const data: TraceData = {
      ...d,
      meta,
      buffersOffset,
      providersOffset,
      providerCount: this.providerCount,
      typesOffset,
      typeCount: this.typeCount,
      logfileOffset,
      warningsOffset,
      warningCount: count,
      warningTotal: w.warnings.total,
      // (type fields from the trace's types, which the window's event types now index)
      events: withDecidedFields(storedColumns(e), d.eventCount, () => data, d.untyped),
    };
    const firstRow = this.rows;
    this.rows += d.eventCount;
    return { ...w, data, firstRow, warnings: { offset: warningsOffset, count, total: w.warnings.total } };
  }

  /** The trace's providers and event types so far (copies), for a core that continues the trace (Resume). */
  known(): { providers: Uint8Array; types: Uint8Array } {
    return { providers: this.providers.slice(0, this.providerCount * C.PROV_STRIDE), types: this.types.slice(0, this.typeCount * C.TYPE_STRIDE) };
  }

  /** A segment's end: its warnings after its last window, its counts. */
  end(end: SegmentEnd): void {
    this.addWarnings(end.warnings, end.warningTotal);
    this.clrMissing += end.clrMissing;
    this.arenaBytes += end.arenaBytes;
  }

  /** The trace's tables as a core's would be when decoding ended (DecodeEnd.last). */
  last(): TraceData {
    const parts = [
      this.providers.subarray(0, this.providerCount * C.PROV_STRIDE),
      this.types.subarray(0, this.typeCount * C.TYPE_STRIDE),
      ...this.warnings,
      new Uint8Array(C.LH_SIZE),
    ];
    const bytes = new Uint8Array(8 + parts.reduce((n, p) => n + p.length, 0));
    let at = 8;
    const offsets = parts.map((p) => {
      bytes.set(p, at);
      at += p.length;
      return at - p.length;
    });
    const none = {} as TraceData["events"] & TraceData["ext"];
    return {
      bytes,
      events: none,
      eventCount: 0,
      ext: none,
      extCount: 0,
      buffersOffset: 0,
      bufferCount: 0,
      warningsOffset: offsets[2] ?? 0,
      warningCount: this.warningCount,
      warningTotal: this.warningTotal,
      providersOffset: offsets[0],
      providerCount: this.providerCount,
      typesOffset: offsets[1],
      typeCount: this.typeCount,
      logfileOffset: offsets[offsets.length - 1],
      arenaBytes: this.arenaBytes,
      clrRows: 0,
      inputBytes: 0,
      decodedBytes: 0,
    };
  }
}

function grown(a: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(a.length * 2);
  b.set(a);
  return b;
}

/** A run of whole buffers cut from the input, in a buffer of its own (or, cut by ranges, only where it lies). */
interface Segment {
  bytes?: Uint8Array;
  length: number;
  fileOffset: number;
  /** Buffers before it. */
  bufferCount: number;
  /** Buffers in it. */
  buffers: number;
}

/**
 * Cuts the input into segments of whole buffers, following the buffer headers' sizes. Where a size
 * is not a buffer's (damage), or at the input's end, it stops cutting: `rest()` is then what is left.
 * A segment's buffer comes back (`recycle`) once its worker has decoded it, for a later segment.
 */
class Cutter {
  private pending: Uint8Array = new Uint8Array(0);
  private filled = 0;
  /** End of the whole buffers found in `pending`, and their count. */
  private scan = 0;
  private scanned = 0;
  /** A chunked source's current chunk, and how much of it was taken. */
  private chunk: Uint8Array = new Uint8Array(0);
  private chunkAt = 0;
  private readonly chunks?: AsyncIterator<Uint8Array>;
  /** File offset of pending[0]; buffers cut so far; bytes read from the source. */
  offset = 0;
  bufferCount = 0;
  read = 0;
  private ended = false;
  /** Cutting stopped: the rest goes to one core. */
  stopped = false;
  /**
   * The segments' buffers, from the pool of disposed traces' memory and back to it when the decode ends:
   * fresh for every decode, they were 42 k page faults a decode of the generated 1 GiB trace with 2 workers.
   */
  private readonly spare = new SparePool(8, 1, takeBuffer);
  /** A source read in place: straight into the segments' buffers. */
  private readonly source?: ByteSource;
  /**
   * Cut by ranges: the buffers' sizes are read (four bytes each, synchronously) and the workers read
   * their ranges themselves, so this thread never holds the input.
   */
  private readonly ranges: boolean;
  private readonly head = new Uint8Array(4);

  constructor(
    input: AsyncIterable<Uint8Array> | ByteSource,
    private readonly capacity: number,
    private readonly onProgress?: (read: number) => void,
    ranges = false,
  ) {
    if (isByteSource(input as Input)) this.source = input as ByteSource;
    else this.chunks = (input as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    this.ranges = ranges && this.source?.readSync !== undefined;
    this.pending = this.ranges ? new Uint8Array(0) : this.fresh(capacity);
  }

  recycle(buffer: ArrayBuffer): void {
    if (buffer.byteLength >= this.capacity) this.spare.give(buffer);
  }

  /**
   * The decode has ended: the buffers that came back, and the one being filled when cutting stopped
   * (its bytes went to this thread's core for the rest), go to the pool for the next decode. (That
   * last one was let go: 8,400 page faults in every decode of the generated 1 GiB trace from bytes.)
   */
  release(): void {
    const last = this.pending.buffer as ArrayBuffer;
    this.pending = new Uint8Array(0);
    giveBack([...this.spare.drain(), last]);
  }

  private fresh(bytes: number): Uint8Array {
    return new Uint8Array(this.spare.take(bytes));
  }

  /** Copies more of the source into `pending` (which is not full); false at the source's end. */
  private async pull(): Promise<boolean> {
    if (this.ended) return false;
    if (this.source) {
      const n = await this.source.read(this.pending.subarray(this.filled), this.read);
      if (n === 0) {
        this.ended = true;
        return false;
      }
      this.filled += n;
      this.read += n;
      this.onProgress?.(this.read);
      return true;
    }
    if (this.chunkAt === this.chunk.length) {
      const next = await this.chunks!.next();
      if (next.done) {
        this.ended = true;
        return false;
      }
      this.chunk = next.value;
      this.chunkAt = 0;
      this.read += this.chunk.length;
      this.onProgress?.(this.read);
    }
    const n = Math.min(this.pending.length - this.filled, this.chunk.length - this.chunkAt);
    this.pending.set(this.chunk.subarray(this.chunkAt, this.chunkAt + n), this.filled);
    this.filled += n;
    this.chunkAt += n;
    return true;
  }

  /** The next segment of about `target` bytes (at least one buffer), or undefined when cutting has stopped. */
  async next(target: number, maxBuffers = Infinity): Promise<Segment | undefined> {
    if (this.stopped) return undefined;
    if (this.ranges) return this.nextRange(target, maxBuffers);
    for (;;) {
      const v = new DataView(this.pending.buffer, this.pending.byteOffset);
      while (this.scan < target && this.scanned < maxBuffers && this.scan + C.BUFFER_HEADER_SIZE <= this.filled) {
        const size = v.getUint32(this.scan, true);
        if (size < C.BUFFER_HEADER_SIZE || size > C.MAX_BUFFER) {
          this.stopped = true;
          break;
        }
        if (this.scan + size > this.filled) break;
        this.scan += size;
        this.scanned++;
      }
      if (this.stopped || this.scan >= target || this.scanned >= maxBuffers) break;
      if (this.filled === this.pending.length) {
        // full: cut what is whole, or (a buffer longer than the room) make room
        if (this.scan > 0) break;
        const more = this.fresh(this.pending.length * 2);
        more.set(this.pending.subarray(0, this.filled));
        this.pending = more;
      }
      if (!(await this.pull())) {
        this.stopped = true;
        break;
      }
    }
    if (this.scan === 0) return undefined;
    // the segment keeps this buffer; what follows it moves to a new one
    const bytes = this.pending.subarray(0, this.scan);
    const rest = this.pending.subarray(this.scan, this.filled);
    this.pending = this.fresh(Math.max(rest.length, this.capacity));
    this.pending.set(rest);
    this.filled = rest.length;
    const segment = { bytes, length: this.scan, fileOffset: this.offset, bufferCount: this.bufferCount, buffers: this.scanned };
    this.offset += this.scan;
    this.bufferCount += this.scanned;
    this.scan = 0;
    this.scanned = 0;
    return segment;
  }

  /** The next segment cut by ranges: the sizes of its buffers read, not its bytes. */
  private nextRange(target: number, maxBuffers: number): Segment | undefined {
    const source = this.source!,
      size = source.byteLength,
      v = new DataView(this.head.buffer);
    let scan = 0,
      scanned = 0;
    while (scan < target && scanned < maxBuffers) {
      const at = this.offset + scan;
      // (the input's end, a buffer cut short or a size that is not a buffer's: the rest goes to one core)
      if (at + C.BUFFER_HEADER_SIZE > size || source.readSync!(this.head, at) < 4) {
        this.stopped = true;
        break;
      }
      const n = v.getUint32(0, true);
      if (n < C.BUFFER_HEADER_SIZE || n > C.MAX_BUFFER || at + n > size) {
        this.stopped = true;
        break;
      }
      scan += n;
      scanned++;
    }
    if (scan === 0) return undefined;
    const segment = { length: scan, fileOffset: this.offset, bufferCount: this.bufferCount, buffers: scanned };
    this.offset += scan;
    this.bufferCount += scanned;
    this.read = this.offset;
    this.onProgress?.(this.read);
    return segment;
  }

  /** A segment's bytes as an input for this thread (buffer 0's): its own, or its range of the source. */
  input(s: Segment): Input {
    if (s.bytes) return s.bytes;
    const source = this.source!,
      offset = s.fileOffset,
      length = s.length;
    return {
      byteLength: length,
      read: (into, position) => source.read(into.subarray(0, Math.max(0, Math.min(into.length, length - position))), offset + position),
    };
  }

  /** What the cutter did not cut: the bytes it holds, then the rest of the input. */
  async *rest(): AsyncGenerator<Uint8Array> {
    if (this.filled) yield this.pending.subarray(0, this.filled);
    this.filled = 0;
    if (this.ended) return;
    if (this.source) {
      const source = this.source,
        from = this.read;
      const tail: ByteSource = { byteLength: source.byteLength - from, read: (into, position) => source.read(into, from + position) };
      for await (const chunk of sourceChunks(tail, 16 << 20)) {
        this.read += chunk.length;
        this.onProgress?.(this.read);
        yield chunk;
      }
      return;
    }
    if (this.chunkAt < this.chunk.length) yield this.chunk.subarray(this.chunkAt);
    this.chunkAt = this.chunk.length;
    for (;;) {
      const next = await this.chunks!.next();
      if (next.done) return;
      this.read += next.value.length;
      this.onProgress?.(this.read);
      yield next.value;
    }
  }
}

/** A segment on its way: its messages as they come, in order. */
class SegmentJob extends Mailbox<SegmentMessage> {
  readonly maps = new SegmentMaps();
  /** `worker`: where the segment is decoded (none: on this thread); `length`: its input bytes. */
  constructor(
    readonly fileOffset: number,
    readonly worker?: DecodeWorker,
    readonly length = 0,
  ) {
    super();
  }
}

/**
 * Decodes a segment request, posting each window and then the end (or the error that ended it):
 * what a worker does with each request, and this thread with buffer 0 and the uncut rest.
 */
async function serveSegment(
  req: Omit<SegmentRequest, "bytes"> & { bytes?: Input },
  post: (m: SegmentMessage, transfer: ArrayBuffer[]) => void,
  pool?: SparePool,
  slots?: SharedSlots,
  core?: { cores: SharedCores; index: number },
): Promise<void> {
  const segment = req.segment;
  try {
    const range = req.range;
    const input = req.bytes ?? (range && openShared(range.source, range.offset, range.length));
    if (!input) throw new Error("etw-wasm: this decode worker cannot open the shared input (no source opener installed)");
    const shared = req.options.sharedWindows ? slots : undefined;
    const run = decodeSegment(input, req.options, req.resume, shared ?? pool, core?.cores.memory(core.index));
    for (;;) {
      const next = await run.next();
      if (next.done) {
        const end = next.value;
        const transfer = [end.warnings.buffer as ArrayBuffer];
        if (req.bytes instanceof Uint8Array) transfer.push((end.input = req.bytes.buffer as ArrayBuffer));
        post({ segment, end }, transfer);
        return;
      }
      if (!core && !shared) {
        post({ segment, window: next.value.window }, next.value.transfer);
        continue;
      }
      // in shared memory: the window where the core wrote it (a core goes on once it is back), or its packed
      // copy; its stored columns (the type fields are made on the other side, from its types)
      const w = next.value.window;
      const window = describeViews({ ...w, data: { ...w.data, events: storedColumns(w.data.events) as TraceData["events"] } }, w.data.bytes.buffer);
      const slot = core ? SharedCores.slot(core.index) : shared!.current;
      const back = core?.cores.returned(core.index);
      post({ segment, window, slot, buffer: core ? core.cores.toSend(core.index) : shared!.toSend(slot) }, []);
      await back;
    }
  } catch (error) {
    post({ segment, error: { name: (error as Error)?.name ?? "Error", message: (error as Error)?.message ?? String(error) } }, []);
  } finally {
    if (core) core.cores.release(core.index);
  }
}

/**
 * A worker's cores on shared memories (SharedArrayBuffers): a window is read by the calling thread
 * where the core wrote it, and that core waits for it to come back before it goes on; the other core
 * decodes the next segment meanwhile. Each memory goes across again only when it has grown.
 */
class SharedCores {
  private readonly cores: { memory: WebAssembly.Memory; sentBytes: number; busy: boolean; back?: () => void }[] = [];
  private readonly waiting: ((index: number) => void)[] = [];
  constructor(private readonly max: number) {}

  /** The slot number a core's windows are named by (negative: SharedSlots' are not). */
  static slot(index: number): number {
    return -1 - index;
  }

  static index(slot: number): number {
    return -1 - slot;
  }

  /** A free core, in order of asking (a new one while there are fewer than `max`). */
  acquire(): Promise<number> {
    const free = this.cores.findIndex((c) => !c.busy);
    if (free >= 0) {
      this.cores[free].busy = true;
      return Promise.resolve(free);
    }
    if (this.cores.length < this.max) {
      const memory = new WebAssembly.Memory({ initial: C.MEMORY_MIN_PAGES, maximum: C.MEMORY_MAX_PAGES, shared: true });
      this.cores.push({ memory, sentBytes: 0, busy: true });
      return Promise.resolve(this.cores.length - 1);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(index: number): void {
    const next = this.waiting.shift();
    if (next) next(index);
    else this.cores[index].busy = false;
  }

  memory(index: number): WebAssembly.Memory {
    return this.cores[index].memory;
  }

  /** The core's memory if the other side has not got it at its present size. */
  toSend(index: number): SharedArrayBuffer | undefined {
    const c = this.cores[index];
    const buffer = c.memory.buffer as unknown as SharedArrayBuffer;
    if (buffer.byteLength === c.sentBytes) return undefined;
    c.sentBytes = buffer.byteLength;
    return buffer;
  }

  /** Resolves when the core's window comes back (giveBack). */
  returned(index: number): Promise<void> {
    return new Promise((resolve) => (this.cores[index].back = resolve));
  }

  giveBack(index: number): void {
    const c = this.cores[index];
    const back = c?.back;
    if (c) c.back = undefined;
    back?.();
  }
}

/** A worker's side: serves the requests it is sent, one segment after another. */
export function segmentServer(post: (m: SegmentMessage, transfer: ArrayBuffer[]) => void): (req: WorkerRequest) => void {
  const pool = new SparePool();
  const slots = typeof SharedArrayBuffer === "function" ? new SharedSlots() : undefined;
  const cores = new SharedCores(IN_FLIGHT_SHARED_CORES);
  let queue = Promise.resolve();
  return (req) => {
    // (an EventPipe file's pieces: their module loaded when first asked for)
    if ("nettracePiece" in req) {
      queue = queue.then(async () => (await import("../eventpipe/parallel.js")).serveNettracePiece(req, post as (m: unknown, transfer: ArrayBuffer[]) => void));
      return;
    }
    if ("nettraceRecycle" in req) return giveBack(req.nettraceRecycle);
    if ("nettraceReturnLoan" in req) return void import("../eventpipe/parallel.js").then((m) => m.windowLoanReturned(req.nettraceReturnLoan));
    if ("nettraceAdopted" in req) return void import("../eventpipe/parallel.js").then((m) => m.windowAdopted());
    if ("recycle" in req) pool.give(req.recycle);
    else if ("recycleSlot" in req) {
      if (req.recycleSlot < 0) cores.giveBack(SharedCores.index(req.recycleSlot));
      else slots?.give(req.recycleSlot);
    } else if (req.options.sharedCores) {
      // segments take the cores in order; each is decoded on its own, the next starting while a window waits
      queue = queue.then(async () => {
        const index = await cores.acquire();
        void serveSegment(req, post, pool, slots, { cores, index });
      });
    } else queue = queue.then(() => serveSegment(req, post, pool, slots));
  };
}

/** Runs a segment's decode on this thread, its messages queued as a worker's would be. */
function runHere(job: SegmentJob, input: Input, options: DecodeOptions, resume?: Resume): void {
  void serveSegment({ segment: 0, bytes: input, options, resume }, (m) => job.push(m));
}

/** The error a worker reported, made again on this thread. */
function rethrow(e: { name: string; message: string }): never {
  const Type = e.name === "RangeError" ? RangeError : e.name === "TypeError" ? TypeError : Error;
  throw new Type(e.message);
}

/**
 * Decodes `input` with `workers` worker threads (see the top of this file). Yields windows in file
 * order (each copied out of its core: JS-owned, `final` false) and returns how decoding ended, as
 * decodeWindows does; a trace too small for two segments is decoded on this thread. `inputHeld`: the
 * caller keeps the input (bytes) as the trace's record bytes, so the workers need not send them back.
 */
export async function* decodeParallel(input: Input, options: DecodeOptions, workers: number, inputHeld = false): AsyncGenerator<Window, DecodeEnd> {
  if (!(Number.isInteger(workers) && workers >= 1)) throw new RangeError(`etw-wasm: workers must be a whole number of at least 1, not ${String(workers)}`);
  const target = Math.min(SEGMENT_BYTES, options.batchBytes ?? SEGMENT_BYTES);
  const size = knownSize(input, options);
  if (!haveWorkers()) throw new Error("etw-wasm: no worker threads here (decode workers are started by the Node and browser entry points)");
  if (size !== undefined && size <= target) return yield* decodeWindows(input, options);
  // a ByteSource is read in place; anything else as chunks
  const source = isByteSource(input) ? input : undefined;
  let chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  if (typeof Blob !== "undefined" && input instanceof Blob) chunks = blobChunks(input);
  // (a Uint8Array as it is: `new Uint8Array(view)` would copy it whole)
  else if (input instanceof Uint8Array) chunks = slices(input, options.chunkBytes ?? 16 << 20);
  else if (input instanceof ArrayBuffer) chunks = slices(new Uint8Array(input), options.chunkBytes ?? 16 << 20);
  else chunks = input as AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  // a file the workers can open themselves is cut by ranges
  const can = workerAbilities();
  const ranges = source?.shared !== undefined && can.opensSources === true;
  const cutter = new Cutter(
    source ??
      (async function* () {
        yield* chunks;
      })(),
    target + (1 << 20),
    options.onProgress,
    ranges,
  );
  const { onProgress: _p, inputSize: _s, ...here } = options;
  const merger = new Merger();
  let fileOffset = 0,
    stoppedEarly = false,
    failure: unknown,
    fatalCode = 0,
    fatalOffset = 0;
  /** Record bytes of the windows merged, and input bytes of the segments ended (a compressed trace's ratio). */
  let recordBytes = 0,
    cutBytes = 0;
  const pages = memoryPages(options.memoryLimit);
  let context: TraceContext | undefined;
  const finish = (): DecodeEnd => ({
    inputBytes: size ?? cutter.read,
    fileOffset,
    stoppedEarly,
    failure,
    fatalCode,
    fatalOffset,
    context,
    pages,
    clrMissing: merger.clrMissing,
    last: merger.last(),
  });
  /** Merges a job's messages until its end; false when decoding must stop there. */
  async function* drain(job: SegmentJob): AsyncGenerator<Window, boolean> {
    for (;;) {
      const m = await job.next();
      if ("window" in m) {
        for (const [from, to] of m.window.records) recordBytes += to - from;
        const w = merger.take(m.window, job.maps);
        yield w;
        // the consumer is done with the window: its buffer goes back to the worker for another
        if (m.slot !== undefined) job.worker?.post({ recycleSlot: m.slot } satisfies WorkerRequest, []);
        else {
          const buffer = m.window.data.bytes.buffer as ArrayBuffer;
          job.worker?.post({ recycle: buffer } satisfies WorkerRequest, [buffer]);
        }
      } else if ("error" in m) rethrow(m.error);
      else {
        const end = m.end;
        cutBytes += job.length;
        jobs.delete(m.segment);
        if (end.input) cutter.recycle(end.input);
        merger.end(end);
        context ??= end.context;
        fileOffset = end.fileOffset;
        fatalCode = end.fatalCode;
        fatalOffset = end.fatalOffset;
        stoppedEarly = end.stoppedEarly;
        if (end.failure !== undefined) failure = new SegmentFailure(end.failure);
        return !(end.stoppedEarly || end.failure !== undefined || end.fatalCode);
      }
    }
  }

  const jobs = new Map<number, SegmentJob>();
  const pool: DecodeWorker[] = [];
  const leased: PooledWorker[] = [];
  const inFlight: SegmentJob[] = [];
  let workerError: Error | undefined;
  try {
    // Buffer 0 here: it gives what the workers' cores need (or, if it cannot be cut, one core decodes it all).
    const first = await cutter.next(1, 1);
    if (!first) return yield* decodeWindows(cutter.rest(), { ...options, onProgress: undefined, inputSize: size });
    const job0 = new SegmentJob(0);
    runHere(job0, cutter.input(first), here);
    if (!(yield* drain(job0)) || !context) return finish();
    // The default core on shared memories where the workers can hand windows back in them (not under a
    // memory limit). Not when the caller holds the input: its windows are packed without their records
    // into buffers that are transferred, since the trace copies every column out of them and a copy out
    // of shared memory is slower (race-safe: 1.5-2x a memcpy here).
    const recordsInInput = inputHeld && (input instanceof Uint8Array || input instanceof ArrayBuffer);
    const sharedCores =
      here.engine !== "js" && options.wasm === undefined && can.sharesWindows === true && !pages && !recordsInInput ? await sharedMemoryCore() : undefined;
    const wasm = here.engine === "js" ? undefined : (sharedCores ?? (await compiledCore(options.wasm)));
    // On shared cores a segment is one window: a core waits for each window to come back, and the calling
    // thread takes segments in file order, so a worker whose segments were windows apart sat idle while the
    // other's came back one by one (2 workers streamed 1 GiB no faster than one: 0.60-0.65 s against
    // 0.71-0.76; as one window a segment, 0.35-0.38 s against 0.54-0.59). The window is bounded by the
    // segment's size (a compressed one's by 16 times it, and its segments are cut by records: below).
    const segmentBatch = sharedCores ? Math.max(here.batchBytes ?? 0, 2 * target) : here.batchBytes;
    const segmentOptions: SegmentOptions = {
      engine: here.engine,
      batchBytes: segmentBatch,
      clrTables: here.clrTables,
      memoryLimit: here.memoryLimit,
      filter: here.filter,
      wasm,
      recordsInInput,
      sharedWindows: can.sharesWindows === true && !recordsInInput,
      sharedCores: sharedCores !== undefined,
    };
    for (let i = 0; i < workers; i++) {
      const p = leaseWorker();
      leased.push(p);
      const w = p.worker;
      const slots = p.slots;
      p.onMessage = (message) => {
        const m = message as SegmentMessage;
        if ("window" in m && m.slot !== undefined) {
          if (m.buffer) slots.set(m.slot, m.buffer);
          m.window = rebuildViews(m.window, slots.get(m.slot)!);
        }
        jobs.get(m.segment)?.push(m);
      };
      p.onError = (error) => {
        // a worker that died: its segments end there, failed, at their first byte (the windows before are kept)
        workerError ??= error;
        for (const [segment, job] of jobs) {
          job.push({
            segment,
            end: {
              fileOffset: job.fileOffset,
              stoppedEarly: false,
              failure: `Error: decode worker failed: ${error.message}`,
              fatalCode: 0,
              fatalOffset: 0,
              clrMissing: 0,
              arenaBytes: 0,
              warnings: new Uint8Array(0),
              warningTotal: 0,
            },
          });
        }
      };
      pool.push(w);
    }
    const perWorker = segmentOptions.sharedCores ? IN_FLIGHT_SHARED_CORES : IN_FLIGHT_PER_WORKER;
    // A compressed trace's segment is cut by the records it is likely to hold, so that on shared cores it
    // is one window too: its input is `target` over the bytes a window held per byte of input so far (the
    // records and the compressed input staged: 7.3 in the generated traces; a guess of 8 until the first
    // segment has come back).
    const compressed = sharedCores !== undefined && compressedTrace(context);
    const segmentTarget = (): number =>
      compressed ? Math.max(C.MIN_WINDOW, Math.min(target, Math.floor(target / (cutBytes ? Math.max(1, recordBytes / cutBytes) : 8)))) : target;
    let id = 1;
    for (;;) {
      while (inFlight.length < workers * perWorker && !cutter.stopped && !workerError) {
        const s = await cutter.next(segmentTarget());
        if (!s) break;
        const job = new SegmentJob(s.fileOffset, pool[id % workers], s.length);
        jobs.set(id, job);
        inFlight.push(job);
        const request: SegmentRequest = {
          segment: id,
          options: segmentOptions,
          resume: { ...context, bufferCount: s.bufferCount, fileOffset: s.fileOffset, ...merger.known() },
          ...(s.bytes ? { bytes: s.bytes } : { range: { source: source!.shared!, offset: s.fileOffset, length: s.length } }),
        };
        job.worker!.post(request satisfies WorkerRequest, s.bytes ? [s.bytes.buffer as ArrayBuffer] : []);
        id++;
      }
      const job = inFlight.shift();
      if (!job) break;
      const ok = yield* drain(job);
      if (!ok) return finish();
    }
    // the rest, which the cutter could not cut, decoded here as one core would
    const rest = new SegmentJob(cutter.offset);
    const restBytes = cutter.rest();
    runHere(
      rest,
      restBytes,
      { ...here, inputSize: size === undefined ? undefined : size - cutter.offset },
      {
        ...context,
        bufferCount: cutter.bufferCount,
        fileOffset: cutter.offset,
        ...merger.known(),
      },
    );
    yield* drain(rest);
    return finish();
  } finally {
    // A worker still busy (a decode that stopped early) is stopped; the others wait for the next decode.
    // (awaited: a run of decodes does not pile up threads still stopping)
    for (const p of leased) if (jobs.size > 0 || inFlight.length > 0) p.failed = true;
    await releaseWorkers(leased);
    await source?.close?.();
    cutter.release();
  }
}
