// The decoding loop: the input streams through a core's staging area in chunks; the core decodes a
// window of whole buffers at a time (up to `windowBytes` of record data), the caller takes the
// window's tables (views into the core's memory, valid until it asks for the next window), and the
// core reuses that memory for the next one. Two cores share this loop and the table layout: the
// WebAssembly one (assembly/) and its pure TypeScript twin (bindings/core/), loaded only when asked for.

import { instantiateCore, recycleMemory, type CoreExports, type WasmSource } from "./loader.js";
import { giveBack, takeBuffer } from "../result/reuse.js";
import {
  EXT_COLUMN_LAYOUT,
  STORED_EVENT_LAYOUT,
  TYPE_FIELD_LAYOUT,
  withDecidedFields,
  type ColumnType,
  type EventColumns,
  type ExtendedItemColumns,
  type StoredEventColumns,
  type TraceData,
  type TypeField,
} from "../result/trace-data.js";
import * as C from "../../../assembly/codes.js";
import { clrProgram } from "../../schema/clr-program.js";
import { CLR_PROVIDERS } from "../../schema/clr-payload.js";
import { parseGuid } from "../../schema/guid.js";
import { encodeFilter, type DecodeFilter } from "./filter.js";
import { isByteSource, type ByteSource, type Input } from "../input/input.js";
import type { ColumnMoves } from "../result/clr-blocks.js";

export interface DecodeOptions {
  /** "wasm" (default): the WebAssembly core; "js": the pure TypeScript core (same tables). */
  engine?: "wasm" | "js";
  /** Staging area size: how much input the core takes per call (default 16 MiB). */
  chunkBytes?: number;
  /**
   * Record data per window (batch) of buffers: the core's memory holds one window's tables and
   * record bytes at a time, whatever the input's size (default 8 MiB; at least 64 KiB; a single
   * buffer larger than this gets a window of its own). A trace of one window keeps its tables in
   * the core's memory; the windows of a larger one are copied out, into memory JS owns. (openTrace
   * decodes a trace of up to 64 MiB, `ONE_WINDOW_BYTES`, as one window by default: its tables then
   * stay where the core wrote them.)
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
   * fits, decoding rejects with TraceDecodeError. Both engines honour it.
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

/**
 * Record data per window by default. Small, because fresh memory costs a page fault per 4 KiB page on
 * the machines measured (2-25 us): the staging area and a window's tables are written once per
 * process and reused, so the smaller they are the less a first decode pays (streaming the generated
 * 1 GiB trace in a fresh process: 1.08 s and 241 MB peak RSS with 64 MiB windows, 0.58 s and 89 MB
 * with 8 MiB; streaming it again warm, 0.36 and 0.37-0.40 s: each window costs 0.2-0.3 ms of its own).
 */
const DEFAULT_BATCH = 8 << 20;
/** The largest input openTrace decodes as one window by default (DecodeOptions.batchBytes). */
export const ONE_WINDOW_BYTES = 64 << 20;
const PAGE = 65536;
/** Room kept at the front of the staging area read ahead into, for the current area's unfinished buffer. */
const TAIL = 1 << 20;
/** What one read into the staging area asks for: bytes copied from memory (kept small, so the walk finds them in cache). */
const COPY_PIECE = 1 << 20;
/**
 * ... read from a file or a Blob (larger, for fewer calls; the next piece is read while the core walks this
 * one). A read handed to another thread (libuv's, for a file) comes back 0.2-0.3 ms after it is done on this
 * 2-core VM, so the walk waited on reads 15-20% of a stream's time with pieces of 4 MiB, about half that with
 * 8 MiB (streaming the generated traces warm, alternated in one process, medians: 1 GiB 304 -> 271 ms and
 * 299 -> 278 ms in another run, 4 GiB 1,253 -> 1,120 ms, 64 MiB 29.9 -> 27.8 ms). A piece is at most an
 * area's room, so larger ones than the window change nothing.
 */
const MIN_CHUNK_READ = 64 << 10; // a read of chunks waits for more while it has less than this
const READ_PIECE = 8 << 20;

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
 * The input as the staging area takes it: `read(room)` writes the next bytes of the input into the view
 * `room()` gives (as many as it has, up to its length) and gives the count, 0 at the end. Bytes and
 * chunks are copied, the view taken when they are (the core's memory may have moved while a chunk was
 * awaited); a ByteSource reads straight into the core's memory.
 */
interface StagingSource {
  /** Preferred bytes per read. */
  readonly piece: number;
  read(room: () => Uint8Array): number | Promise<number>;
  close(): Promise<void>;
}

function bytesSource(bytes: Uint8Array): StagingSource {
  let at = 0;
  return {
    piece: COPY_PIECE,
    read(room) {
      const into = room();
      const n = Math.min(into.length, bytes.length - at);
      into.set(bytes.subarray(at, at + n));
      at += n;
      return n;
    },
    close: async () => undefined,
  };
}

/** A ByteSource read synchronously, in pieces the walk finds in cache (a worker's file range). */
function syncByteSource(source: ByteSource & Required<Pick<ByteSource, "readSync">>): StagingSource {
  let position = 0;
  return {
    piece: COPY_PIECE,
    read(room) {
      const n = source.readSync(room(), position);
      position += n;
      return n;
    },
    close: async () => {
      await source.close?.();
    },
  };
}

function byteSourceSource(source: ByteSource, piece: number): StagingSource {
  let position = 0;
  return {
    piece,
    async read(room) {
      const n = await source.read(room(), position);
      position += n;
      return n;
    },
    close: async () => {
      await source.close?.();
    },
  };
}

function chunkSource(chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): StagingSource {
  const it =
    Symbol.asyncIterator in chunks ? (chunks as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]() : (chunks as Iterable<Uint8Array>)[Symbol.iterator]();
  let chunk: Uint8Array = new Uint8Array(0);
  let at = 0;
  let ended = false;
  return {
    piece: READ_PIECE,
    async read(room) {
      let n = 0;
      let into: Uint8Array = new Uint8Array(0);
      for (;;) {
        if (at >= chunk.length) {
          if (ended) break;
          const next = await it.next();
          if (next.done) {
            ended = true;
            break;
          }
          chunk = next.value;
          at = 0;
          continue;
        }
        // (taken after the awaits: the core may have taken more memory meanwhile)
        if (n === 0) into = room();
        if (n >= into.length) break;
        const k = Math.min(into.length - n, chunk.length - at);
        into.set(chunk.subarray(at, at + k), n);
        at += k;
        n += k;
        // a read gives what whole chunks held, once it has some: the core takes it while the next is awaited
        if (at >= chunk.length && n >= MIN_CHUNK_READ) break;
      }
      return n;
    },
    close: async () => {
      if (!ended) await it.return?.();
    },
  };
}

/**
 * The staging areas: input bytes in the core's memory, whose records the core walks where they lie.
 * In the current area, bytes [0, start) were taken by windows, [start, fill) wait to be taken. A
 * window's rows point into its area, so its bytes stay where they are until the window is released.
 * A source read asynchronously reads ahead into the other area (from offset TAIL, leaving room for the
 * current area's last, unfinished buffer): when the current area is used up, its window goes, the
 * unfinished buffer moves in front of the bytes read ahead, and the other area becomes the current one.
 */
class Staging {
  private readonly raw = [0, 0];
  private readonly at = [0, 0];
  cur = 0;
  cap = 0;
  start = 0;
  fill = 0;
  /** Bytes read ahead into the other area, at [tail, tail + ahead). */
  ahead = 0;
  /** Room kept at the front of the area read ahead into (TAIL, or less in a small area). */
  tail = 0;
  /** File offset of the byte at `start`. */
  fileOffset = 0;
  /** Where the window being decoded began in the current area. */
  windowStart = 0;
  constructor(
    private readonly core: CoreExports,
    private readonly twoAreas: boolean,
  ) {}

  get area(): number {
    return this.at[this.cur];
  }

  private place(k: number, bytes: number): boolean {
    // (the old area first: its bytes were copied out, and under a memory limit both may not fit)
    if (this.raw[k]) this.core.free(this.raw[k]);
    const raw = (this.raw[k] = this.core.alloc(bytes + 64));
    if (!raw) return false;
    this.at[k] = (raw + 63) & ~63; // (reads into a 64-byte aligned place run at full speed)
    return true;
  }

  /**
   * Makes the areas `bytes` long. The bytes not taken yet come along, and those read ahead after them
   * (nothing points into them: a window is not being decoded).
   */
  allocate(bytes: number): boolean {
    const first = this.cap === 0;
    const keep = first ? new Uint8Array(0) : new Uint8Array(this.core.memory.buffer, this.area + this.start, this.fill - this.start).slice();
    const ahead =
      first || !this.twoAreas || !this.ahead
        ? new Uint8Array(0)
        : new Uint8Array(this.core.memory.buffer, this.at[1 - this.cur] + this.tail, this.ahead).slice();
    if (!this.place(this.cur, bytes) || (this.twoAreas && !this.place(1 - this.cur, bytes))) return false;
    const u8 = new Uint8Array(this.core.memory.buffer);
    u8.set(keep, this.area);
    u8.set(ahead, this.area + keep.length);
    this.cap = bytes;
    this.tail = Math.min(TAIL, bytes >>> 1);
    this.start = this.windowStart = this.ahead = 0;
    this.fill = keep.length + ahead.length;
    return true;
  }

  /**
   * The current area is used up and its window released: the bytes not taken yet move to its front,
   * those read ahead after them; false when they do not all fit (the areas must grow).
   */
  reclaim(): boolean {
    const keep = this.fill - this.start;
    if (keep + this.ahead > this.cap) return this.allocate(this.cap + this.ahead);
    this.compact();
    if (this.ahead) {
      const u8 = new Uint8Array(this.core.memory.buffer);
      const from = this.at[1 - this.cur] + this.tail;
      u8.copyWithin(this.area + this.fill, from, from + this.ahead);
      this.fill += this.ahead;
      this.ahead = 0;
    }
    return true;
  }

  /** Moves the bytes not taken yet to the front (once the window that took those before is released). */
  compact(): void {
    if (this.start > 0) {
      new Uint8Array(this.core.memory.buffer).copyWithin(this.area, this.area + this.start, this.area + this.fill);
      this.fill -= this.start;
      this.start = 0;
    }
    this.windowStart = 0;
  }

  /**
   * The current area is used up (its window released): the other area, with the bytes read ahead into
   * it, becomes the current one, the unfinished buffer moved in front of them. False when that buffer
   * does not fit the room kept for it (a read ahead in flight must land first: compact instead).
   */
  switchAreas(): boolean {
    const tail = this.fill - this.start;
    if (!this.twoAreas || tail > this.tail) return false;
    const other = 1 - this.cur;
    new Uint8Array(this.core.memory.buffer).copyWithin(this.at[other] + this.tail - tail, this.area + this.start, this.area + this.fill);
    this.cur = other;
    this.start = this.windowStart = this.tail - tail;
    this.fill = this.tail + this.ahead;
    this.ahead = 0;
    return true;
  }

  /** Where the next read goes: the current area's free room, else (reading ahead) the other area's; undefined when neither has any. */
  room(n: number): { area: number; view: Uint8Array } | undefined {
    if (this.fill < this.cap)
      return { area: this.cur, view: new Uint8Array(this.core.memory.buffer, this.area + this.fill, Math.min(n, this.cap - this.fill)) };
    if (!this.twoAreas || this.tail + this.ahead >= this.cap) return undefined;
    const other = 1 - this.cur;
    return {
      area: other,
      view: new Uint8Array(this.core.memory.buffer, this.at[other] + this.tail + this.ahead, Math.min(n, this.cap - this.tail - this.ahead)),
    };
  }

  /** `n` bytes read into area `area` (room's). */
  landed(area: number, n: number): void {
    if (area === this.cur) this.fill += n;
    else this.ahead += n;
  }

  free(): void {
    for (const k of [0, 1]) if (this.raw[k]) this.core.free(this.raw[k]);
    this.raw[0] = this.raw[1] = this.at[0] = this.at[1] = this.cap = 0;
  }

  /** Lets the core take the whole buffers staged; returns the bytes taken. */
  consume(atEnd: boolean): number {
    const before = this.fill - this.start;
    const rest = this.core.consume(this.area + this.start, before, this.fileOffset, atEnd ? 1 : 0);
    const taken = before - rest;
    this.start += taken;
    this.fileOffset += taken;
    return taken;
  }
}

/** The size of `input` when it is known before reading it. */
export function knownSize(input: Input, options: DecodeOptions): number | undefined {
  if (input instanceof Uint8Array || input instanceof ArrayBuffer) return input.byteLength;
  if (typeof Blob !== "undefined" && input instanceof Blob) return input.size;
  if (isByteSource(input)) return input.byteLength;
  return options.inputSize;
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

/** Whether the trace's buffers are compressed (its logfile header's mode says so): their records take several times their size. */
export function compressedTrace(context: TraceContext): boolean {
  return (context.logFileMode & C.LOG_FILE_MODE_COMPRESSED) !== 0;
}

/** Where a decode that continues a trace starts: at `fileOffset`, after the trace's first `bufferCount` buffers. */
export interface Resume extends TraceContext {
  bufferCount: number;
  fileOffset: number;
  /**
   * The trace's providers and event types known so far (PROV_STRIDE- and TYPE_STRIDE-byte structs):
   * the core numbers them as the trace does, so its windows' columns need no mapping (seedTables).
   */
  providers?: Uint8Array;
  types?: Uint8Array;
}

/** One decoded window: the core's tables over its buffers, as views into the core's memory. */
export interface Window {
  /** The window's tables (row, buffer and extended-item indices from 0 within the window). */
  data: TraceData;
  /** Index over the whole trace of the window's first row, and of its first buffer. */
  firstRow: number;
  firstBuffer: number;
  /**
   * Where the window's record bytes lie in `data.bytes`: [start, end) ranges, the staged input the core
   * walked in place first, then the arena blocks (decompressed records, or records copied to be aligned).
   * Every address the window's tables hold lies in one of them.
   */
  records: [number, number][];
  /** File offset of the first byte of `records[0]` (the staged input is a run of the file). */
  recordsFileOffset: number;
  /**
   * The warnings met while decoding the window: `count` WARN_STRIDE-byte structs at `offset` in
   * `data.bytes` (those kept), `total` seen. (`data`'s own warning table is the core's: every
   * window's so far.)
   */
  warnings: { offset: number; count: number; total: number };
  /** The last window: no more decoding follows, so its views stay valid until the core is released. */
  final: boolean;
  /**
   * The core's loops over the window's columns in place (SIMD in the WebAssembly core), which move its
   * addresses before the columns are copied out. Not enumerable: a window posted to another thread goes
   * without them.
   */
  readonly inCore?: ColumnMoves;
  /**
   * The record bytes were left out of the copy (the caller holds the input whole): `records` is one range
   * of file offsets, which is what the tables' addresses are; `data.bytes` has the tables only.
   */
  recordsInInput?: boolean;
}

/** Whether every record byte of `w` lies in its staged input (records[0]), none in arena blocks. */
export function stagedOnly(w: Window): boolean {
  return w.records.every(([start, end], k) => k === 0 || end <= start);
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
 * Turns the core's typed tables on: the field program, the (provider, id, version) lookup and the .NET
 * runtime providers' GUIDs, placed once in the core's memory. Throws when the core was built for other
 * layouts than the bindings' schema (a build out of step with itself).
 */
export function setupClr(core: CoreExports): boolean {
  const { words, typeStarts, lookup, layouts, fingerprint } = clrProgram();
  const guids = new Uint8Array(16 * CLR_PROVIDERS.length);
  CLR_PROVIDERS.forEach((p, i) => guids.set(parseGuid(p.guid), 16 * i));
  const put = (src: ArrayBufferView): number => {
    const at = core.alloc(Math.max(8, src.byteLength));
    if (at !== 0) new Uint8Array(core.memory.buffer, at, src.byteLength).set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength));
    return at;
  };
  const program = put(words),
    starts = put(typeStarts),
    table = put(lookup),
    g = put(guids);
  // memory exhausted: no typed tables
  if (!program || !starts || !table || !g) return false;
  if (core.setClr(program, starts, layouts.length, table, g, CLR_PROVIDERS.length, fingerprint)) return true;
  throw new Error("etw-wasm: the decoder core was built for other typed-table layouts than these bindings' schema (rebuild: npm run gen:clr-fill)");
}

/** Hands the trace's providers and event types known so far to the core (Resume.providers). */
function seedTables(core: CoreExports, providers: Uint8Array, types: Uint8Array): void {
  const at = core.alloc(Math.max(8, providers.length + types.length));
  if (at === 0) return; // (memory exhausted: the windows are mapped instead)
  const view = new Uint8Array(core.memory.buffer, at, providers.length + types.length);
  view.set(providers);
  view.set(types, providers.length);
  core.seedTables(at, providers.length / C.PROV_STRIDE, at + providers.length, types.length / C.TYPE_STRIDE);
  core.free(at);
}

/**
 * Decodes `input` window by window. Yields each window's tables (views into the core's memory,
 * valid until the next window is asked for) and returns how decoding ended. A fatal format error
 * is reported in the result (fatalCode), not thrown, so the caller decides how to raise it.
 */
export async function* decodeWindows(
  input: Input,
  options: DecodeOptions = {},
  resume?: Resume,
  memory?: WebAssembly.Memory,
): AsyncGenerator<Window, DecodeEnd> {
  const engine = options.engine ?? "wasm";
  if (engine !== "wasm" && engine !== "js") throw new TypeError(`unknown engine: ${String(engine)}`);
  const pages = memoryPages(options.memoryLimit);
  const filter = encodeFilter(options.filter);
  const given = options.inputSize;
  if (given !== undefined && !(Number.isSafeInteger(given) && given >= 0)) {
    throw new RangeError(`etw-wasm: inputSize must be a whole number of bytes, not ${String(given)}`);
  }
  const batch = options.batchBytes ?? DEFAULT_BATCH;
  if (!(Number.isSafeInteger(batch) && batch >= C.MIN_WINDOW))
    throw new RangeError(`etw-wasm: batchBytes must be at least ${C.MIN_WINDOW} bytes (64 KiB), not ${String(batch)}`);
  // (`memory`: a decode worker's own, shared with the calling thread; it keeps it)
  // (the TypeScript core's memory from the pool of disposed traces' memory, and back to it when its trace is: written before, it costs no page faults)
  const core =
    engine === "js" ? (await import("../../core/index.js")).createJsCore(takeBuffer) : await instantiateCore(options.wasm, pages || undefined, memory);
  // The size of the input when it is known without reading it all.
  let size: number | undefined = given;
  let source: StagingSource;
  if (typeof Blob !== "undefined" && input instanceof Blob) {
    size = input.size;
    source = chunkSource(blobChunks(input));
  } else if (isByteSource(input)) {
    size = input.byteLength;
    source =
      input.preferSync && input.readSync
        ? syncByteSource(input as ByteSource & Required<Pick<ByteSource, "readSync">>)
        : byteSourceSource(input, options.chunkBytes ?? READ_PIECE);
  } else if (input instanceof Uint8Array || input instanceof ArrayBuffer) {
    const whole = input instanceof Uint8Array ? input : new Uint8Array(input);
    size = whole.length;
    source = bytesSource(whole);
  } else source = chunkSource(input as Iterable<Uint8Array> | AsyncIterable<Uint8Array>);
  const piece = Math.max(PAGE, options.chunkBytes ?? source.piece);
  // Under a memory limit the staging area and a window's record bytes take an eighth of it at most.
  let window = batch;
  if (pages) window = Math.max(C.MIN_WINDOW, Math.min(window, (pages * PAGE) >>> 3));
  // An input of known size needs a staging area no larger than itself (small traces take little memory).
  // The window's budget of records may be up to 16 times the input: a compressed trace's records take
  // several times its size, and with a budget of its input's size a whole XPRESS trace went in several
  // windows, copied out and joined. An uncompressed trace's windows end where its staging area does.
  let budget = window;
  if (size !== undefined) {
    budget = Math.max(C.MIN_WINDOW, Math.min(window, (size + PAGE) * 16));
    window = Math.max(C.MIN_WINDOW, Math.min(window, size + PAGE));
  }
  // room for the rows of a window's input up front (the tables grow past it when a window needs more)
  core.init(pages, budget, Math.ceil(window / 64));
  if (filter) {
    new Uint8Array(core.memory.buffer, core.filterPtr(), C.FILTER_BYTES).set(filter);
    core.setFilter();
  }
  if (resume) core.resumeAt(resume.bufferCount, resume.processors, resume.logFileMode, resume.compressionFormat);
  if (options.clrTables !== false) setupClr(core);
  if (resume?.providers && resume.types) seedTables(core, resume.providers, resume.types);
  // (a source read asynchronously reads ahead into a second area while the core walks the first; not
  // under a memory limit, which the areas would take a larger share of)
  const ahead = source.piece !== COPY_PIECE && !pages;
  const staging = new Staging(core, ahead);
  staging.fileOffset = resume?.fileOffset ?? 0;
  let read = 0;
  let failure: unknown;
  let firstRow = 0;
  let warningStart = 0;
  let warningTotalStart = 0;
  let clrMissing = 0;
  let stoppedEarly = false;
  let handedOut = false;
  let last: TraceData | undefined;
  const inCore: ColumnMoves = {
    shift(column, delta) {
      if (column.buffer !== core.memory.buffer) return false;
      core.shiftU32(column.byteOffset, column.length, delta >>> 0);
      return true;
    },
    relocate(column, start, end, delta) {
      if (column.buffer !== core.memory.buffer || start < 0 || end > 0xffff_ffff) return false;
      core.relocateU32(column.byteOffset, column.length, start, end, delta >>> 0);
      return true;
    },
  };
  // Each window: handed out with its typed tables (filled as it was walked); the next one reuses the core's memory.
  function take(final: boolean): Window | undefined {
    const data = collect(core);
    const dirAt = core.directory();
    const d = new Uint32Array(core.memory.buffer, dirAt, C.DIR_SLOTS);
    clrMissing += d[C.DIR_CLR_MISSING];
    const start = warningStart,
      totalStart = warningTotalStart;
    handedOut = true;
    firstRow += data.eventCount;
    warningStart = data.warningCount;
    warningTotalStart = data.warningTotal;
    if (data.bufferCount === 0 && data.warningTotal === totalStart) return undefined;
    const records: [number, number][] = [[staging.area + staging.windowStart, staging.area + staging.start]];
    const arenas = new Uint32Array(core.memory.buffer, d[C.DIR_ARENAS], 2 * d[C.DIR_ARENA_COUNT]);
    for (let k = 0; k < d[C.DIR_ARENA_COUNT]; k++) records.push([arenas[2 * k], arenas[2 * k] + arenas[2 * k + 1]]);
    const w: Window = {
      data,
      firstRow: firstRow - data.eventCount,
      firstBuffer: d[C.DIR_BUF_BASE],
      records,
      recordsFileOffset: staging.fileOffset - (staging.start - staging.windowStart),
      final,
      warnings: { offset: data.warningsOffset + start * C.WARN_STRIDE, count: data.warningCount - start, total: data.warningTotal - totalStart },
    };
    return Object.defineProperty(w, "inCore", { value: inCore, enumerable: false });
  }
  /**
   * The window handed out is released: the core starts the next one there. (The area's bytes move to its
   * front only when it is full and no read is in flight: Staging.compact.)
   */
  function next(): void {
    if (!handedOut) return;
    core.resetWindow();
    staging.windowStart = staging.start;
    handedOut = false;
  }
  /** Takes what is staged; yields each window the budget fills. */
  function* consume(atEnd: boolean): Generator<Window> {
    for (;;) {
      next();
      staging.consume(atEnd);
      if (!core.windowFull() || core.isDone()) return;
      const w = take(false);
      if (w) yield w;
    }
  }
  let pending: number | Promise<number> | undefined;
  let pendingView: Uint8Array | undefined;
  let pendingArea = 0;
  let ended = false;
  /** A read into the staging area's room (taken when the read writes: chunks are awaited first). */
  const readInto = (n: number): number | Promise<number> =>
    source.read(() => {
      const room = staging.room(n);
      pendingArea = room?.area ?? 0;
      return (pendingView = room?.view ?? new Uint8Array(0));
    });
  /**
   * The bytes a read wrote, where the core's memory now is. The core may take more memory while a read
   * is in flight: a WebAssembly memory grows in place (its old views are only detached: bytes read
   * before that are where they belong), the TypeScript core's moves to a new buffer (they are copied).
   * A read that began only after the view was detached read nothing: it is made again.
   */
  const landed = async (n: number): Promise<number> => {
    const v = pendingView;
    pendingView = undefined;
    if (!v) return n;
    if (n === 0 && v.byteLength === 0 && v.byteOffset === 0 && staging.room(1)) return landed(await readInto(piece));
    if (n > 0 && v.byteLength !== 0 && v.buffer !== core.memory.buffer) new Uint8Array(core.memory.buffer, v.byteOffset, n).set(v.subarray(0, n));
    return n;
  };
  /** Waits for the read in flight and takes its bytes; false when the input has ended. */
  const settle = async (): Promise<boolean> => {
    if (pending === undefined) return !ended;
    const n = await landed(await pending);
    pending = undefined;
    if (n === 0) return !(ended = true);
    staging.landed(pendingArea, n);
    read += n;
    options.onProgress?.(read);
    return true;
  };
  try {
    // An area holds a window's input: its records fit the window's budget unless they were compressed,
    // so a window of uncompressed records ends where the area does.
    // (reading ahead, an area keeps TAIL bytes for the unfinished buffer before a window's input)
    // (no room for the staging area: decoding stops before the first buffer, for want of memory)
    if (!staging.allocate(ahead ? window + Math.min(TAIL, window) : window)) core.stopAt(0, window);
    for (;;) {
      if (core.isDone()) break;
      if (staging.fill === staging.cap) {
        // The current area is used up (every whole buffer in it taken): its window goes, then the next
        // area takes over, with the bytes read ahead into it; or, reading into one area, the rest of this
        // one moves to its front (no read may then be in flight).
        if (staging.start > staging.windowStart) {
          const w = take(false);
          if (w) yield w;
          next();
        }
        if (!staging.switchAreas()) {
          const more = await settle();
          if (staging.start > 0) {
            if (!staging.reclaim()) throw new RangeError("etw-wasm: out of memory for the staging area");
          } else if (!staging.allocate(Math.max(2 * staging.cap, core.wantBytes() + PAGE))) {
            // one buffer larger than the memory can stage: decoding stops before it
            core.stopAt(staging.fileOffset, core.wantBytes());
            break;
          }
          if (!more) break;
        }
        yield* consume(false);
        continue;
      }
      if (ended) break;
      pending ??= readInto(piece);
      if (!(await settle())) break;
      // the next piece comes in while the core walks this one (a read straight from a file)
      if (source.piece !== COPY_PIECE && staging.room(1)) pending = readInto(piece);
      yield* consume(false);
    }
    if (pending !== undefined) {
      // (the core stopped, or the area filled, while a read was in flight)
      await settle();
      if (!core.isDone() && staging.ahead > 0) {
        // (bytes read ahead after the input's end was seen: the last window takes them too)
        if (staging.start > staging.windowStart) {
          const w = take(false);
          if (w) yield w;
          next();
        }
        if (!staging.switchAreas() && !staging.reclaim()) throw new RangeError("etw-wasm: out of memory for the staging area");
      }
    }
    // The input has ended: the whole buffers left first, then (told it is the end) whatever remains,
    // so that a stop among whole buffers shows as one before the end; then the last window.
    if (!core.isDone()) yield* consume(false);
    if (core.isDone()) stoppedEarly = true;
    else yield* consume(true);
    const w = take(true);
    if (w) yield w;
    // Once the core is done, a stream of unknown length is read on, only to count its bytes.
    if (size === undefined) {
      const sink = new Uint8Array(Math.min(piece, 1 << 20));
      for (let n = await source.read(() => sink); n > 0; n = await source.read(() => sink)) {
        read += n;
        options.onProgress?.(read);
      }
    }
  } catch (error) {
    // A failure part way (the input's or a trap): the rows of the window so far are handed out too.
    failure = error;
    let w: Window | undefined;
    try {
      if (!handedOut) w = take(true);
    } catch {
      // the core's memory is unreadable: the windows before are all there is
    }
    if (w) yield w;
  } finally {
    if (pending !== undefined) await Promise.resolve(pending).catch(() => undefined);
    await source.close().catch(() => undefined);
    staging.free();
  }
  // the core's tables as decoding left them (warnings may have come after the last window)
  try {
    last = collect(core);
  } catch {
    // the core's memory is unreadable: the windows before are all there is
  }
  let context: TraceContext | undefined;
  if (last && !failure) {
    const lh = new DataView(last.bytes.buffer, last.bytes.byteOffset + last.logfileOffset, C.LH_SIZE);
    if (lh.getUint32(C.LH_PRESENT, true)) {
      context = {
        processors: lh.getUint32(C.LH_NUMBER_OF_PROCESSORS, true),
        logFileMode: lh.getUint32(C.LH_LOG_FILE_MODE, true),
        compressionFormat: core.compressionFormat(),
      };
    }
  }
  return {
    inputBytes: size ?? read,
    fileOffset: staging.fileOffset,
    stoppedEarly,
    failure,
    fatalCode: core.fatalCode(),
    fatalOffset: core.fatalOffset(),
    context,
    pages,
    clrMissing,
    last,
    release:
      engine === "js"
        ? () => giveBack([core.memory.buffer])
        : engine === "wasm" && !pages && !memory
          ? () => recycleMemory(core.memory as WebAssembly.Memory)
          : undefined,
  };
}

/** Columns of `n` rows as views into the core's memory, at the addresses of the directory `d`. */
function views<T>(layout: Readonly<Record<string, readonly [ColumnType, number]>>, buffer: ArrayBuffer, d: Uint32Array, n: number): T {
  const out: Record<string, ArrayBufferView> = {};
  for (const [key, [Type, slot]] of Object.entries(layout)) out[key] = new Type(buffer, d[slot], n);
  return out as T;
}

/** Wraps the core's tables as views into its memory (valid until the memory grows or is reused). */
function collect(core: CoreExports): TraceData {
  // (the directory first: writing it may grow the TypeScript core's memory, which then moves)
  const dir = core.directory();
  const buffer = core.memory.buffer;
  const d = new Uint32Array(buffer, dir, C.DIR_SLOTS);
  const n = d[C.DIR_ROW_COUNT];
  const nExt = d[C.DIR_EXT_COUNT];
  const bytes = new Uint8Array(buffer);
  let clr: TraceData["clr"];
  if (d[C.DIR_CLR_DIR] && d[C.DIR_CLR_ROWS]) {
    const { layouts } = clrProgram();
    const dir = new Uint32Array(buffer, d[C.DIR_CLR_DIR], (layouts.length * C.CLR_DIR_STRIDE) >>> 2);
    const counts = new Uint32Array(layouts.length);
    const caps = new Uint32Array(layouts.length);
    const blocks: (Uint8Array | null)[] = [];
    for (let t = 0; t < layouts.length; t++) {
      const count = dir[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_COUNT) >>> 2];
      const block = dir[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_BLOCK) >>> 2];
      const cap = dir[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_CAP) >>> 2];
      counts[t] = count && block ? count : 0;
      caps[t] = counts[t] ? cap : 0;
      blocks.push(counts[t] ? new Uint8Array(buffer, block, cap * layouts[t].rowBytes) : null);
    }
    clr = { counts, blocks, caps };
  }
  // (the type fields as the core stored them: only rows without an event type have them)
  const untyped = views<Pick<EventColumns, TypeField>>(TYPE_FIELD_LAYOUT, buffer, d, n);
  const data: TraceData = {
    bytes,
    eventCount: n,
    events: withDecidedFields(views<StoredEventColumns>(STORED_EVENT_LAYOUT, buffer, d, n), n, () => data, untyped),
    untyped,
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
    clrRows: d[C.DIR_CLR_ROWS],
    inputBytes: 0,
    decodedBytes: 0,
  };
  return data;
}
