// The decoding loop: the input streams through a core's staging area in chunks; the core decodes a
// window of whole buffers at a time (up to `windowBytes` of record data), the caller takes the
// window's tables (views into the core's memory, valid until it asks for the next window), and the
// core reuses that memory for the next one. Two cores share this loop and the table layout: the
// WebAssembly one (assembly/) and its pure TypeScript twin (bindings/core/), loaded only when asked for.

import { instantiateCore, recycleMemory, type CoreExports, type WasmSource } from "./loader.js";
import { EVENT_COLUMN_LAYOUT, EXT_COLUMN_LAYOUT, type ColumnType, type EventColumns, type ExtendedItemColumns, type TraceData } from "./trace-data.js";
import * as C from "../../assembly/codes.js";
import { clrProgram } from "../schema/clr-program.js";
import { clrProviderIndex } from "../schema/clr-payload.js";
import { formatGuid } from "../schema/guid.js";
import { encodeFilter, type DecodeFilter } from "./filter.js";

export type { DecodeFilter };

/**
 * A trace file read at any position (a Node file handle, say): the decoder reads it straight into
 * memory of its own, and with workers straight into each segment's buffer. The decoder calls
 * `close` when it is done with it.
 */
export interface ByteSource {
  readonly byteLength: number;
  /** Reads up to `into.length` bytes at `position` into `into`; resolves with the bytes read (0 at the end). */
  read(into: Uint8Array, position: number): Promise<number>;
  close?(): Promise<void>;
}

/** Bytes, a Blob or File (browsers, Node), a ByteSource, or chunks of the file in order (any sizes). */
export type Input = Uint8Array | ArrayBuffer | Blob | ByteSource | Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

export function isByteSource(input: Input): input is ByteSource {
  return typeof (input as ByteSource).read === "function" && typeof (input as ByteSource).byteLength === "number";
}

/**
 * A ByteSource's bytes in chunks, read ahead: the next chunk is read while the decoder takes the one
 * before, into two buffers used in turn (no fresh memory per chunk). A chunk is valid until the next
 * is asked for, which is how the decoder reads its input. Closes the source at the end.
 */
export async function* sourceChunks(source: ByteSource, chunk: number): AsyncGenerator<Uint8Array> {
  const size = Math.max(1, Math.min(chunk, source.byteLength));
  const buffers = [new Uint8Array(size), new Uint8Array(size)];
  let position = 0;
  let k = 0;
  let pending: Promise<number> | undefined = source.read(buffers[0], 0);
  try {
    for (;;) {
      const n = await pending;
      pending = undefined;
      if (n === 0) return;
      position += n;
      const current = buffers[k];
      k ^= 1;
      pending = source.read(buffers[k], position);
      yield current.subarray(0, n);
    }
  } finally {
    await pending?.catch(() => undefined);
    await source.close?.();
  }
}

export interface DecodeOptions {
  /** "wasm" (default): the WebAssembly core; "js": the pure TypeScript core (same tables). */
  engine?: "wasm" | "js";
  /** Staging area size: how much input the core takes per call (default 16 MiB). */
  chunkBytes?: number;
  /**
   * Record data per window (batch) of buffers: the core's memory holds one window's tables and
   * record bytes at a time, whatever the input's size (default 64 MiB; at least 64 KiB; a single
   * buffer larger than this gets a window of its own). A trace of one window keeps its tables in
   * the core's memory; the windows of a larger one are copied out, into memory JS owns.
   */
  batchBytes?: number;
  /** A compiled module, the `.wasm` bytes or its URL; default: the packaged `etw.wasm`. */
  wasm?: WasmSource;
  /** Fill the typed tables of .NET runtime events while decoding (default true). */
  clrTables?: boolean;
  /** Called after each chunk with the input bytes consumed so far. */
  onProgress?: (bytesRead: number) => void;
  /**
   * The input's size in bytes when the caller knows it (a file's size; bytes, Blobs and Files give their
   * own). A decode that stops early then stops reading; a stream of unknown size is read to its end only
   * to count `trace.inputBytes`.
   */
  inputSize?: number;
  /**
   * The most memory, in bytes, the decoder's core may take: one window's tables, its record bytes and
   * the staging area (rounded down to 64 KiB pages; at least 1 MiB, `codes.MEMORY_MIN_PAGES`; default
   * and most 4 GiB). Where not even one buffer's window fits, decoding stops: the trace keeps every
   * row before and is not complete (`incomplete.reason` "capacity"); if not even the first buffer
   * fits, decoding rejects with EtlDecodeError. Both engines honour it.
   */
  memoryLimit?: number;
  /**
   * The record bytes (payloads, extended items, the typed tables' strings): "keep" (default) holds them
   * with the trace; "drop" keeps the event table, buffers, warnings, providers, event types and the typed
   * tables' number fields, not the bytes, so a trace takes 50 bytes a row plus its typed tables whatever its
   * payloads (and may pass 4 GiB of record bytes). Then `row.payload` and `row.record` are empty, decoded
   * fields, activity ids and extended items absent, the typed tables' strings, GUIDs and arrays undefined,
   * and what is read from payloads (process names, EventSource and TraceLogging names) is not there.
   * "source" keeps what "drop" keeps and reads records back from the input when asked
   * (`trace.loadRecords(rows)`; compressed buffers are decompressed again): for traces too big to
   * hold whose rows are looked at a page at a time. It needs an input that can be read again
   * (bytes, a Blob or File, a ByteSource such as openTraceFile's), which the trace holds (a file
   * stays open) until disposed. The default is "keep" everywhere: every accessor is then
   * synchronous, and the process table and event names need the bytes.
   * openTrace only: a stream's batches are views of the decoder's memory anyway.
   */
  payloads?: "keep" | "drop" | "source";
  /**
   * Worker threads to decode with (Node worker_threads, Web Workers): the input is cut into segments
   * of whole buffers, decoded side by side and merged back in file order; the tables are those of
   * one thread's decode. Default 0: decode on the calling thread. Inputs of no more than one
   * segment (8 MiB, or batchBytes if less) are decoded on the calling thread.
   */
  workers?: number;
  /**
   * Decode-time filter: a record that does not pass takes no row, no extended items, no count in
   * `eventTypes` and no row in the typed .NET tables (see DecodeFilter). The logfile header record
   * (row 0) is always kept. Default: every record.
   */
  filter?: DecodeFilter;
}

const DEFAULT_CHUNK = 16 << 20;
const DEFAULT_BATCH = 64 << 20;
const PAGE = 65536;

/** A Blob read as a stream of chunks. */
export async function* blobChunks(blob: Blob): AsyncIterable<Uint8Array> {
  const reader = blob.stream().getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Feeds the staging area. The core takes the whole buffers staged until a buffer does not fit the
 * window (it stops before it): the window is then handed out (a yield of false), and the next
 * consume starts a new one. The last window is handed out (a yield of true) when the input ends.
 */
class Feeder {
  pending = 0;
  fileOffset = 0;
  /** The core stopped before the input ended (memory exhausted: only then does it stop early). */
  stoppedEarly = false;
  /** The window was handed out: the next consume starts a new one. */
  handedOut = false;
  constructor(readonly core: CoreExports) {}

  /** Copies `chunk` into the staging area, letting the core take whole buffers as it fills. */
  *push(chunk: Uint8Array): Generator<boolean> {
    const core = this.core;
    let pos = 0;
    while (pos < chunk.length && !core.isDone()) {
      const cap = core.stagingCap();
      if (this.pending === cap) {
        yield* this.step(false);
        if (this.pending === cap && !core.isDone()) core.growStaging(Math.max(cap * 2, core.wantBytes()), this.pending);
        continue;
      }
      const n = Math.min(cap - this.pending, chunk.length - pos);
      new Uint8Array(core.memory.buffer, core.stagingPtr() + this.pending, n).set(chunk.subarray(pos, pos + n));
      this.pending += n;
      pos += n;
    }
  }

  /** Consumes what is staged; each window it fills is handed out. */
  *step(atEnd: boolean): Generator<boolean> {
    for (;;) {
      if (this.handedOut) {
        this.core.resetWindow();
        this.handedOut = false;
      }
      const rest = this.core.consume(this.pending, this.fileOffset, atEnd ? 1 : 0);
      this.fileOffset += this.pending - rest;
      this.pending = rest;
      if (!this.core.windowFull() || this.core.isDone()) return;
      yield false;
    }
  }

  /**
   * The input has ended: the whole buffers left first, then (told it is the end) whatever remains,
   * so that a stop among whole buffers shows as one before the end; then the last window.
   */
  *end(): Generator<boolean> {
    if (!this.core.isDone()) yield* this.step(false);
    if (this.core.isDone()) this.stoppedEarly = true;
    else yield* this.step(true);
    yield true;
  }
}

/** The size of `input` when it is known before reading it. */
export function knownSize(input: Input, options: DecodeOptions): number | undefined {
  if (input instanceof Uint8Array || input instanceof ArrayBuffer) return input.byteLength;
  if (typeof Blob !== "undefined" && input instanceof Blob) return input.size;
  if (isByteSource(input)) return input.byteLength;
  return options.inputSize;
}

export function* slices(bytes: Uint8Array, size: number): Iterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, Math.min(bytes.length, i + size));
}

/** Memory pages for `options.memoryLimit` (0: no limit beyond MEMORY_MAX_PAGES). */
export function memoryPages(limit: number | undefined): number {
  if (limit === undefined) return 0;
  if (typeof limit !== "number" || !(limit >= C.MEMORY_MIN_PAGES * PAGE)) {
    throw new RangeError(`etw-wasm: memoryLimit must be at least ${C.MEMORY_MIN_PAGES * PAGE} bytes (1 MiB), not ${String(limit)}`);
  }
  const pages = Math.floor(Math.min(limit, C.MEMORY_MAX_PAGES * PAGE) / PAGE);
  return pages >= C.MEMORY_MAX_PAGES ? 0 : pages;
}

/** What a core continuing a trace needs from the trace's first buffer (parallel decoding). */
export interface TraceContext {
  /** The logfile header's NumberOfProcessors and LogFileMode. */
  processors: number;
  logFileMode: number;
  /** The compression format buffer 0 named (COMPRESSION_*). */
  compressionFormat: number;
}

/** Where a decode that continues a trace starts: at `fileOffset`, after the trace's first `bufferCount` buffers. */
export interface Resume extends TraceContext {
  bufferCount: number;
  fileOffset: number;
}

/** One decoded window: the core's tables over its buffers, as views into the core's memory. */
export interface Window {
  /** The window's tables (row, buffer and extended-item indices from 0 within the window). */
  data: TraceData;
  /** Index over the whole trace of the window's first row, and of its first buffer. */
  firstRow: number;
  firstBuffer: number;
  /** Address of the window's record bytes in `data.bytes`, and their length. */
  arena: number;
  arenaUsed: number;
  /**
   * The warnings met while decoding the window: `count` WARN_STRIDE-byte structs at `offset` in
   * `data.bytes` (those kept), `total` seen. (`data`'s own warning table is the core's: every
   * window's so far.)
   */
  warnings: { offset: number; count: number; total: number };
  /** The last window: no more decoding follows, so its views stay valid until the core is released. */
  final: boolean;
  /** A window copied out of the core (transfer.ts packWindow): where its byte store's free room begins. */
  free?: number;
}

/** How the decode ended. */
export interface DecodeEnd {
  /** Bytes of input given (the whole file when its size is known). */
  inputBytes: number;
  /** File offset up to which the core took the input. */
  fileOffset: number;
  /** The core stopped before the input ended. */
  stoppedEarly: boolean;
  /** An exception or trap that ended decoding. */
  failure?: unknown;
  /** The core's fatal error: the input is not a trace. */
  fatalCode: number;
  fatalOffset: number;
  /** What a core continuing this trace needs from its first buffer (when the core got that far). */
  context?: TraceContext;
  /** Memory pages of the limit in force (0: none). */
  pages: number;
  /** Rows the typed tables could not take for want of memory (expected - placed, over every window). */
  clrMissing: number;
  /** The last window's tables (views, valid until release): providers, types, warnings, logfile header. */
  last?: TraceData;
  /** Hands the core's memory back for reuse by the next decode, once `last` has been read. */
  release?: () => void;
}

/**
 * The typed tables' field program and directory, placed once in the core's memory, and the
 * providers' CLR indices, placed again only when new providers appear: after the first windows a
 * fill allocates nothing (the core reuses one region for the blocks).
 */
class ClrFiller {
  private readonly program: number;
  private readonly starts: number;
  private readonly table: number;
  private readonly dir: number;
  private readonly nTypes: number;
  private provClr = new Int8Array(0);
  private prov = 0;
  constructor(private readonly core: CoreExports) {
    const { words, typeStarts, lookup } = clrProgram();
    this.nTypes = typeStarts.length;
    this.program = this.put(words);
    this.starts = this.put(typeStarts);
    this.table = this.put(lookup);
    this.dir = core.alloc(this.nTypes * C.CLR_DIR_STRIDE);
  }

  private put(src: ArrayBufferView): number {
    const core = this.core;
    const at = core.alloc(Math.max(8, src.byteLength));
    if (at !== 0) new Uint8Array(core.memory.buffer, at, src.byteLength).set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength));
    return at;
  }

  /** CLR provider index of each provider (new providers looked up once, and placed in the core's memory). */
  private providers(d: Uint32Array): Int8Array {
    const n = d[C.DIR_PROV_COUNT];
    if (n !== this.provClr.length) {
      const next = new Int8Array(n);
      next.set(this.provClr);
      const bytes = new Uint8Array(this.core.memory.buffer);
      for (let i = this.provClr.length; i < n; i++) next[i] = clrProviderIndex(formatGuid(bytes, d[C.DIR_PROV_TABLE] + i * C.PROV_STRIDE + C.PROV_GUID));
      this.provClr = next;
      if (this.prov) this.core.free(this.prov);
      this.prov = next.some((x) => x >= 0) ? this.put(next) : 0;
    }
    return this.provClr;
  }

  /**
   * Fills the window's typed tables. Returns their directory (0 when the window has none) and the
   * rows that belong in them but could not be placed.
   */
  fill(): { dir: number; rows: number; missing: number } {
    const core = this.core;
    const d = new Uint32Array(core.memory.buffer, core.directory(), C.DIR_SLOTS);
    const provClr = this.providers(d);
    if (!provClr.some((x) => x >= 0)) return { dir: 0, rows: 0, missing: 0 };
    const { lookup } = clrProgram();
    // The rows that belong in typed tables, by event type (the core's own test, assembly/clr.ts typeOf).
    let expected = 0;
    const types = new DataView(core.memory.buffer, d[C.DIR_TYPE_TABLE], d[C.DIR_TYPE_COUNT] * C.TYPE_STRIDE);
    for (let t = 0; t < d[C.DIR_TYPE_COUNT]; t++) {
      const at = t * C.TYPE_STRIDE;
      const rows = types.getUint32(at + C.TYPE_ROWS, true);
      if (!rows) continue;
      const p = provClr[types.getUint16(at + C.TYPE_PROVIDER, true)] ?? -1;
      const ht = types.getUint8(at + C.TYPE_HEADER_TYPE);
      const id = types.getUint16(at + C.TYPE_EVENT_ID, true);
      if (p < 0 || (ht !== C.HT_EVENT_HEADER32 && ht !== C.HT_EVENT_HEADER64) || id >= C.CLR_MAX_ID) continue;
      const version = Math.min(types.getUint16(at + C.TYPE_VERSION, true), C.CLR_VERSIONS - 1);
      if (lookup[(p * C.CLR_MAX_ID + id) * C.CLR_VERSIONS + version] >= 0) expected += rows;
    }
    if (expected === 0) return { dir: 0, rows: 0, missing: 0 };
    // memory exhausted: no typed tables for this window
    const ready = this.program !== 0 && this.starts !== 0 && this.table !== 0 && this.prov !== 0 && this.dir !== 0;
    const rows = ready ? core.decodeClr(this.program, this.starts, this.nTypes, this.table, this.prov, provClr.length, this.dir) : 0;
    return { dir: rows ? this.dir : 0, rows, missing: expected - rows };
  }
}

/**
 * Decodes `input` window by window. Yields each window's tables (views into the core's memory,
 * valid until the next window is asked for) and returns how decoding ended. A fatal format error
 * is reported in the result (fatalCode), not thrown, so the caller decides how to raise it.
 */
export async function* decodeWindows(input: Input, options: DecodeOptions = {}, resume?: Resume): AsyncGenerator<Window, DecodeEnd> {
  const engine = options.engine ?? "wasm";
  if (engine !== "wasm" && engine !== "js") throw new TypeError(`unknown engine: ${String(engine)}`);
  const pages = memoryPages(options.memoryLimit);
  const filter = encodeFilter(options.filter);
  const given = options.inputSize;
  if (given !== undefined && !(Number.isSafeInteger(given) && given >= 0)) {
    throw new RangeError(`etw-wasm: inputSize must be a whole number of bytes, not ${String(given)}`);
  }
  const batch = options.batchBytes ?? DEFAULT_BATCH;
  if (!(Number.isSafeInteger(batch) && batch >= C.MIN_WINDOW)) throw new RangeError(`etw-wasm: batchBytes must be at least ${C.MIN_WINDOW} bytes (64 KiB), not ${String(batch)}`);
  const core = engine === "js" ? (await import("../core/index.js")).createJsCore() : await instantiateCore(options.wasm, pages || undefined);
  // The size of the input when it is known without reading it all.
  let size: number | undefined = given;
  if (typeof Blob !== "undefined" && input instanceof Blob) {
    size = input.size;
    input = blobChunks(input);
  } else if (isByteSource(input)) {
    size = input.byteLength;
    input = sourceChunks(input, options.chunkBytes ?? DEFAULT_CHUNK);
  }
  const whole = input instanceof Uint8Array ? input : input instanceof ArrayBuffer ? new Uint8Array(input) : undefined;
  if (whole) size = whole.length;
  let staging = options.chunkBytes ?? DEFAULT_CHUNK;
  // Under a memory limit the staging area and a window's record bytes take an eighth of it at most.
  let window = batch;
  if (pages) {
    staging = Math.min(staging, (pages * PAGE) >>> 3);
    window = Math.min(window, (pages * PAGE) >>> 3);
  }
  // Small inputs get a small staging area; a larger buffer grows it on demand. (A window's arena
  // starts small and grows as it fills, so small traces take little memory anyway.)
  if (whole) staging = Math.max(64 << 10, Math.min(staging, whole.length));
  // an input of known size: the arena's first block holds all of it (up to a window), sparing its growth
  core.init(staging, pages, window, size !== undefined ? Math.min(window, size + (64 << 10)) : 0);
  if (filter) {
    new Uint8Array(core.memory.buffer, core.filterPtr(), C.FILTER_BYTES).set(filter);
    core.setFilter();
  }
  if (resume) core.resumeAt(resume.bufferCount, resume.processors, resume.logFileMode, resume.compressionFormat);
  const feeder = new Feeder(core);
  feeder.fileOffset = resume?.fileOffset ?? 0;
  const clr = options.clrTables !== false ? new ClrFiller(core) : undefined;
  let read = 0;
  let failure: unknown;
  let firstRow = 0;
  let warningStart = 0;
  let warningTotalStart = 0;
  let clrMissing = 0;
  let last: TraceData | undefined;
  // Each window: its typed tables filled, handed out; the next consume reuses the core's memory.
  function take(final: boolean): Window | undefined {
    const filled = clr && !failure ? clr.fill() : { dir: 0, rows: 0, missing: 0 };
    clrMissing += filled.missing;
    const d = new Uint32Array(core.memory.buffer, core.directory(), C.DIR_SLOTS);
    const data = collect(core, filled.dir, filled.rows);
    const start = warningStart, totalStart = warningTotalStart;
    feeder.handedOut = true;
    firstRow += data.eventCount;
    warningStart = data.warningCount;
    warningTotalStart = data.warningTotal;
    if (data.bufferCount === 0 && data.warningTotal === totalStart) return undefined;
    return {
      data, firstRow: firstRow - data.eventCount, firstBuffer: d[C.DIR_BUF_BASE], arena: d[C.DIR_ARENA],
      arenaUsed: d[C.DIR_ARENA_USED], final,
      warnings: { offset: data.warningsOffset + start * C.WARN_STRIDE, count: data.warningCount - start, total: data.warningTotal - totalStart },
    };
  }
  async function* windows(steps: Generator<boolean>): AsyncGenerator<Window> {
    for (const final of steps) {
      const w = take(final);
      if (w) yield w;
    }
  }
  try {
    // (a staging area the memory could not hold leaves the core done: no slice is taken)
    const source = whole ? slices(whole, Math.max(1, core.stagingCap())) : (input as Iterable<Uint8Array> | AsyncIterable<Uint8Array>);
    // for await takes plain iterables too
    for await (const chunk of source as AsyncIterable<Uint8Array> | Iterable<Uint8Array>) {
      if (!core.isDone()) yield* windows(feeder.push(chunk));
      read += chunk.length;
      options.onProgress?.(read);
      // Once the core is done, a stream of unknown length is read on, only to count its bytes.
      if (core.isDone() && size !== undefined) break;
    }
    yield* windows(feeder.end());
  } catch (error) {
    // A failure part way (the input's or a trap): the rows of the window so far are handed out too.
    failure = error;
    let w: Window | undefined;
    try {
      if (!feeder.handedOut) w = take(true);
    } catch {
      // the core's memory is unreadable: the windows before are all there is
    }
    if (w) yield w;
  }
  try {
    core.finish(); // frees the staging area
  } catch (error) {
    failure ??= error;
  }
  // the core's tables as decoding left them (warnings may have come after the last window)
  try {
    last = collect(core, 0, 0);
  } catch {
    // the core's memory is unreadable: the windows before are all there is
  }
  let context: TraceContext | undefined;
  if (last && !failure) {
    const lh = new DataView(last.bytes.buffer, last.bytes.byteOffset + last.logfileOffset, C.LH_SIZE);
    if (lh.getUint32(C.LH_PRESENT, true)) {
      context = {
        processors: lh.getUint32(C.LH_NUMBER_OF_PROCESSORS, true), logFileMode: lh.getUint32(C.LH_LOG_FILE_MODE, true),
        compressionFormat: core.compressionFormat(),
      };
    }
  }
  return {
    inputBytes: size ?? read, fileOffset: feeder.fileOffset, stoppedEarly: feeder.stoppedEarly, failure,
    fatalCode: core.fatalCode(), fatalOffset: core.fatalOffset(), context, pages, clrMissing, last,
    release: engine === "wasm" && !pages ? () => recycleMemory(core.memory as WebAssembly.Memory) : undefined,
  };
}

/** Columns of `n` rows as views into the core's memory, at the addresses of the directory `d`. */
function views<T>(layout: Readonly<Record<string, readonly [ColumnType, number]>>, buffer: ArrayBuffer, d: Uint32Array, n: number): T {
  const out: Record<string, ArrayBufferView> = {};
  for (const [key, [Type, slot]] of Object.entries(layout)) out[key] = new Type(buffer, d[slot], n);
  return out as T;
}

/** Wraps the core's tables as views into its memory (valid until the memory grows or is reused). */
function collect(core: CoreExports, clrDir: number, clrRows: number): TraceData {
  const buffer = core.memory.buffer;
  const d = new Uint32Array(buffer, core.directory(), C.DIR_SLOTS);
  const n = d[C.DIR_ROW_COUNT];
  const nExt = d[C.DIR_EXT_COUNT];
  const bytes = new Uint8Array(buffer);
  let clr: TraceData["clr"];
  if (clrDir) {
    const { layouts } = clrProgram();
    const dir = new Uint32Array(buffer, clrDir, (layouts.length * C.CLR_DIR_STRIDE) >>> 2);
    const counts = new Uint32Array(layouts.length);
    const blocks: (Uint8Array | null)[] = [];
    for (let t = 0; t < layouts.length; t++) {
      const count = dir[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_COUNT) >>> 2];
      const block = dir[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_BLOCK) >>> 2];
      counts[t] = count && block ? count : 0;
      blocks.push(counts[t] ? new Uint8Array(buffer, block, count * layouts[t].rowBytes) : null);
    }
    clr = { counts, blocks };
  }
  return {
    bytes,
    eventCount: n,
    events: views<EventColumns>(EVENT_COLUMN_LAYOUT, buffer, d, n),
    extCount: nExt,
    ext: views<ExtendedItemColumns>(EXT_COLUMN_LAYOUT, buffer, d, nExt),
    bufferCount: d[C.DIR_BUF_COUNT],
    buffersOffset: d[C.DIR_BUF_TABLE],
    warningCount: d[C.DIR_WARN_COUNT],
    warningTotal: d[C.DIR_WARN_TOTAL],
    warningsOffset: d[C.DIR_WARN_TABLE],
    providerCount: d[C.DIR_PROV_COUNT],
    providersOffset: d[C.DIR_PROV_TABLE],
    typesOffset: d[C.DIR_TYPE_TABLE],
    typeCount: d[C.DIR_TYPE_COUNT],
    logfileOffset: d[C.DIR_LOGFILE],
    arenaBytes: core.arenaBytes(),
    inCore: true,
    clr,
    clrRows,
    inputBytes: 0,
    decodedBytes: 0,
  };
}

/**
 * The windows of `input`: decoded on this thread, or with `options.workers` worker threads
 * (parallel.ts, loaded only then), whichever the options ask for.
 */
export async function* windowsOf(input: Input, options: DecodeOptions): AsyncGenerator<Window, DecodeEnd> {
  if (!options.workers) return yield* decodeWindows(input, options);
  const { decodeParallel } = await import("./parallel.js");
  return yield* decodeParallel(input, options, options.workers);
}
