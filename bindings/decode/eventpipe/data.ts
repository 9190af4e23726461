// A .NET EventPipe file (.nettrace, .netperf) as the tables an .etl file gives: the reader's events
// (eventpipe/reader.ts) in the order TraceEvent dispatches them, providers named by the GUIDs TraceEvent
// derives from their names, the Trace object as the logfile header (QPC at the sync time is the
// anchor of every time conversion, as PerfView's relative times count from it), stacks as ETW stack
// extended items. Events are EVENT_HEADER rows of the file's pointer size, so the .NET runtime's
// events decode with the same schema as on Windows.
//
// A file is read whole (nettraceData) or in windows, one per sequence point (nettraceWindows, for
// streams); the per-event walk runs on the engine asked for, the rest in TypeScript on either.

import * as C from "../../../assembly/codes.js";
import { NettraceStreamReader } from "../../eventpipe/stream-reader.js";
import {
  nettraceWindowsOf,
  MAX_NETTRACE_WARNINGS,
  type NettraceFile,
  type NettraceHeader,
  type NettraceMetadata,
  type NettraceWarning,
} from "../../eventpipe/reader.js";
import type { NettraceWindow } from "../../eventpipe/format.js";
import { TraceDecodeError, TraceFormatError } from "../result/errors.js";
import { ChunkFiller, clrProvidersOf, fillNettraceClr, type ClrFiller } from "./clr.js";
import { GrowingClrBlocks } from "../result/clr-blocks.js";
import { POOLED, takeBuffer, type TableMemory } from "../result/reuse.js";
import {
  align8,
  concatBytes,
  madeOnFirstRead,
  remap,
  withDecidedFields,
  EVENT_COLUMN_LAYOUT,
  type EventColumns,
  type NettraceInfo,
  type StoredEventColumns,
  type TraceData,
} from "../result/trace-data.js";
export type { NettraceInfo } from "../result/trace-data.js";
import { blobChunks, type DecodeOptions } from "../windows/windows.js";
import { isByteSource, type ByteSource, type Input } from "../input/input.js";
import { slices, sourceChunks } from "../input/chunks.js";
import { nettraceEngine, type NettraceEngine } from "./engine.js";
import { EventTable, eventTableOf, headerFlagsOf, type EventTableOf, type NettraceRowsCore } from "./rows.js";
import { providerGuidBytes } from "./provider-guids.js";

/** Where a stream window's byte 0 is in its trace's bytes (a file held whole: 0, where the magic is): offset 0 stays "none". */
const WINDOW_BASE = 8;

/** The file's tables; a file the reader cannot start on throws TraceFormatError, one it stops in part way keeps its rows. */
export async function nettraceData(
  input: Uint8Array,
  options: Pick<DecodeOptions, "engine" | "wasm" | "clrTables"> = {},
  tuning: NettraceTuning = {},
): Promise<TraceData & { nettrace: NettraceInfo }> {
  // the per-event walk and the rows on the engine asked for (the rest of the reader is TypeScript on either)
  const engine = await nettraceEngine(engineOf(options), options.wasm, options.clrTables !== false, tuning.placed !== false);
  if (engine.filler?.placed) engine.filler.placed.base = 0; // (NettraceTables.tablesOf's base)
  try {
    // (read a window at a time: the reader's columns hold one window's events, not the file's)
    return await new NettraceTables(engine.rows, engine.filler, tuning).whole(nettraceWindowsOf(input, engine.walker));
  } finally {
    engine.dispose();
  }
}

/** A stream's window size where none is asked for (DecodeOptions.batchBytes). */
const DEFAULT_BATCH_BYTES = 64 << 20;

function engineOf(options: Pick<DecodeOptions, "engine">): "wasm" | "js" {
  const engine = options.engine ?? "wasm";
  if (engine !== "wasm" && engine !== "js") throw new TypeError(`unknown engine: ${String(engine)}`);
  return engine;
}

/**
 * A streamed EventPipe file's tables, window after window (NettraceStreamReader's windows: the events
 * between two sequence points), read on this thread (windows.ts nettraceWindows chooses workers where
 * asked). Providers and event types keep their indices across windows. Returns the outline of them all
 * (the stream's end).
 */
export async function* nettraceWindowsHere(
  input: Input,
  options: Pick<DecodeOptions, "engine" | "wasm" | "clrTables" | "chunkBytes" | "batchBytes"> = {},
): AsyncGenerator<TraceData & { nettrace: NettraceInfo }, (TraceData & { nettrace: NettraceInfo }) | undefined> {
  const engine = await nettraceEngine(engineOf(options), options.wasm, options.clrTables !== false);
  const tables = new NettraceTables(engine.rows, engine.filler);
  const reader = windowReader(engine, options.batchBytes);
  const chunkBytes = options.chunkBytes ?? 1 << 20;
  // (a first window's buffer taken at its size where the input's is known: not grown read by read, each
  // growth a copy into fresh pages, which was a tenth of a first decode)
  const size = input instanceof Uint8Array || input instanceof ArrayBuffer ? input.byteLength : isByteSource(input) ? input.byteLength : 0;
  if (size > 0) reader.room(Math.min(size, options.batchBytes ?? DEFAULT_BATCH_BYTES) + chunkBytes);
  try {
    if (isByteSource(input) && input.readSync) {
      try {
        for (const w of readWindows(reader, input as SyncSource, chunkBytes)) yield await tables.window(w, w.last);
      } finally {
        await input.close?.();
      }
    } else {
      for await (const chunk of chunksOf(input, chunkBytes)) {
        for (const w of reader.push(chunk)) yield await tables.window(w, w.last);
        // (the end-of-stream marker read: nothing after it is asked for, which ends a follow of a file being written)
        if (reader.finished) break;
      }
    }
    for (const w of reader.end()) yield await tables.window(w, true);
    return tables.outline();
  } finally {
    reader.close();
    engine.dispose();
  }
}

/**
 * A reader of a stream's windows on `engine`, each window's bytes in a buffer of their own from
 * `memory` (the pool of disposed traces), at the store's base: its store is built around them, no copy. Each window's tables are to be
 * made before the next push (its columns can be the next window's). A .netperf, in time order already,
 * is cut into windows of about `batchBytes`.
 */
export function windowReader(engine: NettraceEngine, batchBytes = DEFAULT_BATCH_BYTES, memory: TableMemory = POOLED): NettraceStreamReader {
  if (engine.filler?.placed) engine.filler.placed.base = WINDOW_BASE; // (NettraceTables.tablesOf's base)
  const take = (bytes: number) => {
    const buffer = memory.take(bytes);
    OWNED.add(buffer);
    return buffer;
  };
  const give = (buffer: ArrayBuffer) => memory.give([buffer]);
  return new NettraceStreamReader(engine.walker, batchBytes, true, { take, give, head: WINDOW_BASE });
}

export type SyncSource = ByteSource & Required<Pick<ByteSource, "readSync">>;

/**
 * The windows of a file read by `readSync` straight into the reader's buffer, `readBytes` a read: no
 * chunk copied in, no wait on libuv's thread. (Streaming the generated 1 GiB file on one thread, reads
 * overlapped there left the walk waiting between 1 MiB chunks and copied each in: 2.07–2.11 s against
 * 1.93–1.99 s so, with 10% less CPU; 64 MiB 261–266 against 247–255 ms. Reads of 4 or 8 MiB were no
 * faster: a 1 MiB read is still in cache when the walk stages its blocks.)
 */
export function* readWindows(reader: NettraceStreamReader, source: SyncSource, readBytes: number): Generator<NettraceWindow> {
  for (let at = 0; at < source.byteLength && !reader.finished; ) {
    const n = source.readSync(reader.room(Math.min(readBytes, source.byteLength - at)), at);
    if (n <= 0) break;
    at += n;
    yield* reader.commit(n);
  }
}

/** The input as chunks, without reading it all first. */
export async function* chunksOf(input: Input, chunkBytes: number): AsyncGenerator<Uint8Array> {
  if (input instanceof Uint8Array) yield* slices(input, Math.max(chunkBytes, 1 << 16));
  else if (input instanceof ArrayBuffer) yield* slices(new Uint8Array(input), Math.max(chunkBytes, 1 << 16));
  else if (typeof Blob !== "undefined" && input instanceof Blob) yield* blobChunks(input);
  else if (isByteSource(input)) yield* sourceChunks(input, chunkBytes);
  else for await (const c of input as AsyncIterable<Uint8Array>) yield c;
}

/**
 * What the tests vary that a user has no need to: the rows a call of the core makes (and fills the
 * typed tables of), and whether the typed tables are filled as the reader places each walk's rows
 * (PlacedFiller; else always a chunk at a time).
 */
export interface NettraceTuning {
  chunkRows?: number;
  placed?: boolean;
}

/** The tables of a file, or of the windows of a streamed one, with providers and types kept across windows. */
export class NettraceTables {
  private readonly providerIndex = new Map<string, number>();
  private readonly providerGuids: Uint8Array[] = [];
  private providerOf = new Int32Array(0);
  private unknownProvider = -1;
  /** The .NET runtime provider (CLR_PROVIDERS index, -1: none) of each provider. */
  private provClr: Int8Array = new Int8Array(0);
  private readonly typeIndex = new Map<string, number>();
  private readonly types: number[][] = []; // provider, id, version, opcode, level, keywords' low and high halves
  private latest = -(2n ** 63n);
  private rows = 0;
  private eventsLost = 0;
  /** Rows of each type, every warning and the last window so far (for a stream's outline). */
  private readonly typeRows: number[] = [];
  private readonly warnings: NettraceWarning[] = [];
  private warningTotal = 0;
  private last?: TraceData & { nettrace: NettraceInfo };
  private lastStructs = new Uint8Array(0);
  /** The metadata rows of the windows adopted (adopt). */
  private readonly metadata: NettraceMetadata[] = [];

  /** The windows are of a file read from a cut (a worker's, eventpipe/parallel.ts): a first window that stops at once is not the file's start. */
  resumed = false;

  /**
   * `rows`: the core that orders each window's events as rows (none: the tables only adopt windows made
   * elsewhere); `filler`: the core that fills its typed .NET tables (none: no typed tables); `memory`: where
   * the tables' memory comes from (a worker sharing its windows: SharedArrayBuffers).
   */
  constructor(
    private readonly rowsCore: NettraceRowsCore | undefined,
    private readonly filler?: ClrFiller,
    private readonly tuning: NettraceTuning = {},
    private readonly memory: TableMemory = POOLED,
  ) {}

  /** The event type of (provider, id, version, opcode, level, keywords), added when new; EVENT_TYPE_NONE past the table's limit. */
  private typeOf(provider: number, id: number, version: number, opcode: number, level: number, kwLo: number, kwHi: number): number {
    const key = `${((provider * 65536 + id) * 65536 + version) * 256 + opcode},${level},${kwLo},${kwHi}`;
    let t = this.typeIndex.get(key);
    if (t === undefined) {
      t = this.types.length < C.MAX_EVENT_TYPES ? this.types.length : C.EVENT_TYPE_NONE;
      if (t !== C.EVENT_TYPE_NONE) {
        this.typeIndex.set(key, t);
        this.types.push([provider, id, version, opcode, level, kwLo, kwHi]);
      }
    }
    return t;
  }

  /**
   * The tables of a file's (or a window's) events in TraceEvent's dispatch order. `final`: the file
   * ends here (its error, if any, is the trace's). A file the reader could not start on throws. Their
   * memory comes from the pool of disposed traces, and `release` gives it back: a stream's batch is
   * disposed before the next window is read, so each window writes into the memory of the one before.
   */
  window(file: NettraceFile, final: boolean): Promise<TraceData & { nettrace: NettraceInfo }> {
    return this.tablesOf([file], final, false);
  }

  /**
   * The tables of the windows of one file held whole (nettraceWindowsOf: each window's columns are
   * used before the next is read), as one trace; the last window's error is the trace's.
   */
  whole(windows: Iterable<NettraceFile>): Promise<TraceData & { nettrace: NettraceInfo }> {
    return this.tablesOf(windows, true, true);
  }

  /**
   * The tables of `windows`, which share their bytes (one window, or the windows of a file held whole),
   * in memory from the pool of disposed traces, which `release` gives back.
   */
  private async tablesOf(windows: Iterable<NettraceFile>, final: boolean, whole: boolean): Promise<TraceData & { nettrace: NettraceInfo }> {
    const take = (bytes: number) => this.memory.take(bytes);
    const giveOutgrown = (buffers: ArrayBufferLike[]) => this.memory.giveOutgrown(buffers);
    // (a file held whole knows its size: its tables grow to the rows it will likely have at once)
    const mostTimes = whole ? Infinity : 16;
    const table = new EventTable(take, giveOutgrown, mostTimes);
    // Where the file's byte 0 is in the trace's bytes: at 0 for a file held whole (offsets are file
    // offsets; none is 0, where the file's magic is), 8 for a stream's window. A file held whole as the
    // caller gave it, its typed tables filled in the WebAssembly core, is not copied: the trace's bytes
    // are the input and its structs are kept apart (`meta`). Else the input is copied into a store (or
    // read there: storeAround) with the structs after it. Stack items are the stack blocks' frames where
    // they are (bareStacks), not copies.
    const base = whole ? 0 : WINDOW_BASE;
    let apart = false;
    let file: NettraceFile | undefined;
    let input: Uint8Array = new Uint8Array(0);
    const warnings: NettraceWarning[] = [];
    let warningCount = 0,
      eventsLost = 0;
    // (the reader's count of warnings, which runs on over a file's windows, before this window's)
    let warnedBefore = this.warningTotal;
    const warningTotalBefore = warnedBefore;
    // the typed .NET tables of each window's rows, filled as it comes in the WebAssembly core (only its payload bytes copied in)
    const core = this.filler?.core;
    // (the typed tables of each window's rows as the reader placed them, when its order is the file's)
    const placed = this.filler?.placed;
    const typed = new GrowingClrBlocks(take, giveOutgrown);
    let typedRows = 0;
    let partsFilled = core !== undefined;
    for (const w of windows) {
      if (!file) {
        input = w.bytes;
        apart = whole && core !== undefined && !OWNED.has(input.buffer);
      } else if (w.bytes !== input) throw new Error("etw-wasm: the windows of one trace share their bytes");
      file = w;
      const ptr = w.header.pointerSize === 4 ? 4 : 8;
      const providerOf = await this.providersOf(w.metadata);
      // events whose metadata id was never defined: a provider of their own (the empty GUID, no name)
      // (the reader warns of each such event, so a window without new warnings has none: no scan of its rows)
      if (this.unknownProvider < 0 && w.warningCount > warnedBefore && w.events.metadata.includes(-1)) {
        this.unknownProvider = this.providerGuids.length;
        this.providerGuids.push(new Uint8Array(16));
      }
      // (the rows the whole table will likely have: this window's share of the bytes read so far)
      const readTo = Math.max(1, w.events.length ? w.events.blockOffset[w.events.length - 1] : input.length);
      const expect = (((table.n + w.events.length) * input.length) / Math.min(readTo, input.length)) * 1.05;
      // the typed .NET tables of each chunk of rows, filled where the rows are made (the WebAssembly
      // engine: the same core), each type's block sized for the rows the whole table will likely have (a
      // stream's: at most 16 times those at hand, as its window guesses the rest of the file from its first blocks)
      let filler: ChunkFiller | undefined;
      if (core && partsFilled && w.events.length > 0) {
        // (each provider's .NET runtime provider, worked out again only when providers were added)
        if (this.provClr.length !== this.providerGuids.length) this.provClr = clrProvidersOf(this.providerGuids);
        // (the filler's core is the rows' own: nettraceEngine)
        if (this.provClr.some((p) => p >= 0)) {
          const scale = Math.min(mostTimes, Math.max(1, expect / (table.n + w.events.length)));
          filler = new ChunkFiller(core, this.provClr, input, base, ptr === 4 ? C.HT_EVENT_HEADER32 : C.HT_EVENT_HEADER64, typed, scale);
        }
      }
      try {
        if (!this.rowsCore) throw new Error("etw-wasm: these EventPipe tables adopt windows, they make none");
        eventTableOf(
          this.rowsCore,
          w,
          {
            ptr,
            base,
            providerOf,
            unknownProvider: this.unknownProvider,
            typeOf: (p, id, v, op, level, kwLo, kwHi) => this.typeOf(p, id, v, op, level, kwLo, kwHi),
            typeCount: () => this.types.length,
            fillChunk: filler && ((at, rows, firstRow) => filler.chunk(at, rows, firstRow)),
            takePlaced:
              placed &&
              ((rowBase, reorder) => {
                if (!core || !partsFilled) {
                  placed.drop();
                  return false;
                }
                const filled = placed.take(w.events.length, rowBase, typed, Math.min(mostTimes, Math.max(1, expect / (table.n + w.events.length))), reorder);
                if (filled < 0) return false;
                typedRows += filled;
                return true;
              }),
            chunkRows: this.tuning.chunkRows,
          },
          table,
          expect,
        );
      } finally {
        filler?.dispose();
      }
      if (filler) {
        if (filler.failed) partsFilled = false;
        else typedRows += filler.rows;
      }
      // (the reader's columns of this window are read: nothing holds them past here)
      for (const x of w.warnings) if (warnings.length < MAX_NETTRACE_WARNINGS) warnings.push(x);
      warningCount = warnedBefore = w.warningCount;
      eventsLost += w.eventsLost;
    }
    if (!file) throw new Error("etw-wasm: no window to make tables of");
    const err = final ? file.error : null;
    const windowEnd = ((file as { base?: number }).base ?? 0) + input.length;
    if (err && table.n === 0 && this.rows === 0 && !this.resumed)
      throw new TraceFormatError(err.code, err.offset, `not a readable EventPipe file: ${err.reason}`, "nettrace");
    const { header, metadata } = file;
    const rows = table.result();
    const n = rows.n;
    const [providerStructs, typeStructs, lh] = this.structs(header, rows.typeRows, latestOf(rows), eventsLost);

    // the byte store: the file (payloads and stacks stay where they are), then the structs
    const structsAt = align8(base + input.length);
    const providersOffset = structsAt;
    const typesOffset = align8(providersOffset + providerStructs.length);
    const logfileOffset = align8(typesOffset + typeStructs.length);
    const storeBytes = logfileOffset + C.LH_SIZE;
    // (the input as given, the structs apart: only while the typed tables were filled as the rows came)
    apart &&= partsFilled;
    // (a store the TypeScript core fills the typed tables of is placed in its memory: no copy of it)
    const place = partsFilled ? undefined : this.filler?.place(storeBytes, n);
    // (a file read here is already in place: the store is built around it)
    const around = place || apart ? undefined : storeAround(input, storeBytes, base);
    // (`from`: the offset of the store's first byte, which holds the bytes from there on)
    const from = apart ? structsAt : 0;
    const storeLength = storeBytes - from;
    const store = place ? place.s.u8.subarray(place.at, place.at + storeBytes) : (around ?? new Uint8Array(take(storeLength), 0, storeLength));
    if (!around && !apart) store.set(input, base);
    // (memory from the pool is not zeroed: the bytes around the input's and the padding included)
    if (apart) store.fill(0);
    else if (!place) {
      store.fill(0, 0, base);
      store.fill(0, base + input.length);
    }
    store.set(providerStructs, providersOffset - from);
    store.set(typeStructs, typesOffset - from);
    store.set(lh, logfileOffset - from);

    // (what the tables live in goes back to the pool when the trace is disposed; not the caller's input)
    const owned = [...table.buffers(), ...typed.buffers()];
    if (!place) owned.push(store.buffer);
    const data = this.trace({
      ...(apart ? { bytes: input, meta: store } : { bytes: store }),
      providersOffset: providersOffset - from,
      typesOffset: typesOffset - from,
      logfileOffset: logfileOffset - from,
      rows,
      header,
      metadata,
      warnings,
      warningTotal: warningCount,
      arenaBytes: input.length,
      windowEnd,
      owned,
    });
    // the typed .NET runtime tables, by the core's routine: joined from the windows', or filled now
    if (partsFilled) {
      // (no typed rows: no typed tables, as a fill of the whole store gives)
      const clr = typedRows > 0 ? typed.result() : undefined;
      if (clr) {
        data.clr = clr;
        data.clrRows = typedRows;
      }
    } else if (this.filler) fillNettraceClr(data, this.filler, place);
    if (err) stoppedAt(data, err);
    WINDOW_PARTS.set(data, {
      rows,
      header,
      owned,
      eventsLost,
      warningCount: warningCount - warningTotalBefore,
      providerOf: this.providerOf,
      unknownProvider: this.unknownProvider,
      types: this.types,
    });
    return data;
  }

  /**
   * The structs of a window's tables (providers, event types with the window's rows of each, the logfile
   * header), the trace's latest timestamp and lost events moved on by the window's.
   */
  private structs(
    header: NettraceHeader,
    typeRows: ArrayLike<number>,
    windowLatest: bigint | undefined,
    eventsLost: number,
  ): [Uint8Array, Uint8Array, Uint8Array] {
    const ptr = header.pointerSize === 4 ? 4 : 8;
    const ht = ptr === 4 ? C.HT_EVENT_HEADER32 : C.HT_EVENT_HEADER64;
    const providerStructs = new Uint8Array(this.providerGuids.length * C.PROV_STRIDE);
    this.providerGuids.forEach((g, p) => {
      const o = p * C.PROV_STRIDE;
      providerStructs.set(g, o + C.PROV_GUID);
      providerStructs[o + C.PROV_GROUP] = 0xff;
      providerStructs[o + C.PROV_GROUP + 1] = 0xff;
      providerStructs[o + C.PROV_KIND] = C.PK_GUID;
      providerStructs[o + C.PROV_WANTED] = 1;
    });
    const typeStructs = new Uint8Array(this.types.length * C.TYPE_STRIDE);
    const tv = new DataView(typeStructs.buffer);
    this.types.forEach(([p, id, v, op, level, kwLo, kwHi], t) => {
      const o = t * C.TYPE_STRIDE;
      tv.setUint16(o + C.TYPE_PROVIDER, p, true);
      tv.setUint16(o + C.TYPE_EVENT_ID, id, true);
      tv.setUint16(o + C.TYPE_VERSION, v, true);
      typeStructs[o + C.TYPE_OPCODE] = op;
      typeStructs[o + C.TYPE_HEADER_TYPE] = ht;
      tv.setUint32(o + C.TYPE_KEYWORDS, kwLo, true);
      tv.setUint32(o + C.TYPE_KEYWORDS + 4, kwHi, true);
      typeStructs[o + C.TYPE_LEVEL] = level; // (task and channel: 0, as EventPipe has none)
      tv.setUint32(o + C.TYPE_ROWS, typeRows[t] ?? 0, true);
    });
    const lh = new Uint8Array(C.LH_SIZE);
    const lv = new DataView(lh.buffer);
    let latest = this.latest > header.syncTimeQpc ? this.latest : header.syncTimeQpc;
    if (windowLatest !== undefined && windowLatest > latest) latest = windowLatest;
    this.latest = latest;
    const freq = header.qpcFrequency > 0n ? header.qpcFrequency : 1n;
    lv.setUint32(C.LH_PRESENT, C.LH_SIZE, true);
    lv.setUint32(C.LH_NUMBER_OF_PROCESSORS, header.numberOfProcessors >>> 0, true);
    lv.setUint32(C.LH_POINTER_SIZE, ptr, true);
    lv.setUint32(C.LH_RECORD_POINTER_SIZE, ptr, true);
    lv.setUint32(C.LH_RESERVED_FLAGS, 1, true); // QPC
    lv.setBigInt64(C.LH_PERF_FREQ, header.qpcFrequency, true);
    lv.setBigInt64(C.LH_START_TIME, header.syncTimeFileTime, true);
    lv.setBigInt64(C.LH_END_TIME, header.syncTimeFileTime + ((latest - header.syncTimeQpc) * 10_000_000n) / freq, true);
    lv.setBigInt64(C.LH_HEADER_TIMESTAMP, header.syncTimeQpc, true);
    // events lost, as the capture threads' sequence numbers tell (§14)
    this.eventsLost += eventsLost;
    lv.setUint32(C.LH_EVENTS_LOST, Math.min(this.eventsLost, 0xffffffff), true);
    return [providerStructs, typeStructs, lh];
  }

  /** A window's TraceData from its rows and store (`bytes`, with the structs at the offsets given), counted into the stream's totals. */
  private trace(w: WindowTrace): TraceData & { nettrace: NettraceInfo } {
    const { rows, header } = w;
    const { n, events: stored, untyped, pid, metadataOfRow, activities, ext, typeRows, cut } = rows;
    const ptr = header.pointerSize === 4 ? 4 : 8;
    // (the columns not stored made when first read)
    const events = nettraceColumns(stored, n, () => data, untyped, metadataOfRow, w.metadata, {
      ht: ptr === 4 ? C.HT_EVENT_HEADER32 : C.HT_EVENT_HEADER64,
      flags: headerFlagsOf(ptr),
      pid: pid ?? header.processId >>> 0,
      extRows: ext.row,
    });
    const data: TraceData & { nettrace: NettraceInfo } = {
      // (what the tables live in goes back to the pool when the trace is disposed; not the caller's input)
      release: w.release ?? (() => this.memory.give(w.owned)),
      bytes: w.bytes,
      ...(w.meta ? { meta: w.meta } : {}),
      bareStacks: true,
      events,
      untyped,
      eventCount: n,
      ext,
      extCount: ext.row.length,
      buffersOffset: 0,
      bufferCount: 0,
      warningsOffset: 0,
      warningCount: 0,
      warningTotal: w.warningTotal,
      providersOffset: w.providersOffset,
      providerCount: this.providerGuids.length,
      typesOffset: w.typesOffset,
      typeCount: this.types.length,
      logfileOffset: w.logfileOffset,
      clrRows: 0,
      arenaBytes: w.arenaBytes,
      // (a window: the file up to its end)
      inputBytes: w.windowEnd,
      decodedBytes: w.windowEnd,
      nettrace: activityColumn(
        { formatVersion: header.formatVersion, metadata: w.metadata, providerOf: this.providerOf, metadataOfRow, warnings: w.warnings, payloadsCut: cut },
        n,
        activities,
      ),
    };
    this.rows += n;
    // (rows have only the types numbered so far: the window's counts past them, up to MAX_EVENT_TYPES, are 0)
    const counted = this.typeRows,
      typeCount = Math.min(typeRows.length, this.types.length);
    while (counted.length < typeCount) counted.push(0);
    for (let t = 0; t < typeCount; t++) counted[t] += typeRows[t];
    for (const x of w.warnings) if (this.warnings.length < MAX_NETTRACE_WARNINGS) this.warnings.push(x);
    this.warningTotal = w.warningTotal;
    this.last = data;
    // (what the stream's outline takes from the last window, copied: the window's memory is given back before the outline is made)
    this.lastStructs = (w.meta ?? w.bytes).slice(w.providersOffset, w.logfileOffset + C.LH_SIZE);
    return data;
  }

  /**
   * The event types so far, for tables that go on from a later cut of the file (`seedTypes`), so that
   * they number the types this stream knows as it does; undefined where providers would not be numbered
   * alike (a provider of undefined metadata, which is numbered where it is first met).
   */
  knownTypes(): number[][] | undefined {
    return this.unknownProvider < 0 ? this.types.map((t) => t.slice()) : undefined;
  }

  /** Numbers `types` (knownTypes of the stream these tables' windows go to) first, as that stream does. */
  seedTypes(types: readonly number[][]): void {
    if (this.types.length > 0) throw new Error("etw-wasm: event types are seeded before any is numbered");
    for (const [p, id, v, op, level, kwLo, kwHi] of types) this.typeOf(p, id, v, op, level, kwLo, kwHi);
  }

  /**
   * A window another thread made of this stream's file (eventpipe/parallel.ts: a worker that read the file
   * from a cut), its providers and event types, which are that thread's, put on this stream's: the window
   * as this thread would have made it.
   */
  async adopt(w: AdoptedWindow): Promise<TraceData & { nettrace: NettraceInfo }> {
    // the metadata rows: every thread reads the same ones in file order; a window sends those its thread had not sent
    const metadata = this.metadata;
    if (w.metadataFrom > metadata.length) throw new Error("etw-wasm: a window's metadata rows come before those of the windows ahead of it");
    for (let m = metadata.length - w.metadataFrom; m < w.metadata.length; m++) metadata.push(w.metadata[m]);
    const providerOf = await this.providersOf(metadata);
    // the thread's providers (by the metadata rows they were made for) and event types, on this stream's
    const providers = new Int32Array(w.providerCount);
    for (let m = 0; m < w.providerOf.length; m++) providers[w.providerOf[m]] = providerOf[m];
    if (w.unknownProvider >= 0) {
      if (this.unknownProvider < 0) {
        this.unknownProvider = this.providerGuids.length;
        this.providerGuids.push(new Uint8Array(16));
      }
      providers[w.unknownProvider] = this.unknownProvider;
    }
    const types = Uint16Array.from(w.types, ([p, id, v, op, level, kwLo, kwHi]) => this.typeOf(providers[p], id, v, op, level, kwLo, kwHi));
    const rows = w.rows;
    if (types.some((g, t) => g !== t)) remap(rows.events.eventType, rows.n, types);
    if (rows.untyped && providers.some((g, p) => g !== p)) remap(rows.untyped.provider, rows.n, providers);
    const typeRows = new Uint32Array(this.types.length);
    for (let t = 0; t < types.length; t++) if (types[t] !== C.EVENT_TYPE_NONE) typeRows[types[t]] += rows.typeRows[t];
    // the structs apart from the window's bytes (`meta`): their size is this stream's, not the thread's
    const [providerStructs, typeStructs, lh] = this.structs(w.header, typeRows, latestOf(rows), w.eventsLost);
    const typesOffset = align8(providerStructs.length),
      logfileOffset = align8(typesOffset + typeStructs.length);
    const meta = new Uint8Array(logfileOffset + C.LH_SIZE);
    meta.set(providerStructs, 0);
    meta.set(typeStructs, typesOffset);
    meta.set(lh, logfileOffset);
    const data = this.trace({
      bytes: w.bytes,
      meta,
      providersOffset: 0,
      typesOffset,
      logfileOffset,
      rows: { ...rows, typeRows },
      header: w.header,
      metadata,
      warnings: w.warnings,
      warningTotal: this.warningTotal + w.warningCount,
      arenaBytes: w.arenaBytes,
      windowEnd: w.windowEnd,
      owned: [],
      release: w.release,
    });
    if (w.clr) {
      data.clr = w.clr;
      data.clrRows = w.clrRows;
    }
    if (w.error) stoppedAt(data, w.error);
    return data;
  }

  /** The provider of each metadata row (providers by name, in order of first sight), extended for rows new since the last call. */
  private async providersOf(metadata: NettraceMetadata[]): Promise<Int32Array> {
    const providerIndex = this.providerIndex;
    const providerGuids = this.providerGuids;
    if (this.providerOf.length < metadata.length) {
      const grown = new Int32Array(metadata.length);
      grown.set(this.providerOf);
      for (let m = this.providerOf.length; m < metadata.length; m++) {
        const name = metadata[m].providerName;
        let p = providerIndex.get(name);
        if (p === undefined) {
          p = providerGuids.length;
          providerIndex.set(name, p);
          // (a V6 file may give the GUID; else TraceEvent's from the name)
          providerGuids.push(metadata[m].providerGuid ?? (await providerGuidBytes(name)));
        }
        grown[m] = p;
      }
      this.providerOf = grown;
    }
    return this.providerOf;
  }

  /** The windows so far as one outline (no rows): header, providers, types with all their rows counted, every warning, the end. */
  outline(): (TraceData & { nettrace: NettraceInfo }) | undefined {
    const last = this.last;
    if (!last) return undefined;
    // the structs of the last window (providers, types, logfile header), with the types' rows over all windows
    const from = last.providersOffset;
    const bytes = this.lastStructs.slice();
    const types = new DataView(bytes.buffer, last.typesOffset - from);
    for (let t = 0; t < last.typeCount; t++) types.setUint32(t * C.TYPE_STRIDE + C.TYPE_ROWS, this.typeRows[t] ?? 0, true);
    const none = new Uint32Array(0);
    // (columns of no rows, none of the last window's read: its memory is the pool's again)
    const noRows = Object.fromEntries(Object.entries(EVENT_COLUMN_LAYOUT).map(([k, [type]]) => [k, new type(0)]));
    return {
      ...last,
      release: undefined,
      bytes,
      meta: undefined,
      providersOffset: 0,
      typesOffset: last.typesOffset - from,
      logfileOffset: last.logfileOffset - from,
      events: noRows as unknown as TraceData["events"],
      untyped: undefined,
      eventCount: this.rows,
      ext: { row: none, type: new Uint16Array(0), size: new Uint16Array(0), offset: none },
      extCount: 0,
      clr: undefined,
      clrRows: 0,
      warningTotal: this.warningTotal,
      nettrace: { ...last.nettrace, warnings: this.warnings, metadataOfRow: new Int32Array(0), activityOfRow: none },
    };
  }
}

/** What a window's TraceData is made of (NettraceTables.trace). */
interface WindowTrace {
  bytes: Uint8Array;
  meta?: Uint8Array;
  providersOffset: number;
  typesOffset: number;
  logfileOffset: number;
  rows: EventTableOf;
  header: NettraceHeader;
  metadata: NettraceMetadata[];
  /** The window's warnings, and the stream's count of them up to its end. */
  warnings: NettraceWarning[];
  warningTotal: number;
  arenaBytes: number;
  /** File offset of the window's end. */
  windowEnd: number;
  /** What the tables live in, given back to the pool on release (unless `release` says otherwise). */
  owned: ArrayBufferLike[];
  release?: () => void;
}

/**
 * A window another thread made (eventpipe/parallel.ts), as NettraceTables.adopt takes it: its rows, its
 * store (`bytes`), and what its thread numbered its own way (providers, event types) or counted from
 * its cut (metadata rows, warnings, lost events).
 */
export interface AdoptedWindow {
  bytes: Uint8Array;
  rows: EventTableOf;
  header: NettraceHeader;
  /** The thread's metadata rows from row `metadataFrom` on. */
  metadata: NettraceMetadata[];
  metadataFrom: number;
  /** The thread's provider of each metadata row, its count of providers and its provider of undefined metadata (-1: none). */
  providerOf: Int32Array;
  providerCount: number;
  unknownProvider: number;
  /** The thread's event types: provider, id, version, opcode, level, keywords' low and high halves. */
  types: number[][];
  clr?: TraceData["clr"];
  clrRows: number;
  warnings: NettraceWarning[];
  warningCount: number;
  eventsLost: number;
  arenaBytes: number;
  windowEnd: number;
  error?: { code: number; offset: number; reason: string };
  /** Gives the window's memory back (to the thread that made it). */
  release?: () => void;
}

/**
 * What a window's TraceData was made from that it does not show, for sending the window to another
 * thread (eventpipe/parallel.ts): its rows, what its tables live in, its own counts, and the numbering
 * of providers and types it was made with.
 */
export interface WindowParts {
  rows: EventTableOf;
  header: NettraceHeader;
  owned: ArrayBufferLike[];
  eventsLost: number;
  warningCount: number;
  providerOf: Int32Array;
  unknownProvider: number;
  types: number[][];
}
const WINDOW_PARTS = new WeakMap<TraceData, WindowParts>();

/** What `data` (a window of NettraceTables) was made from. */
export function windowParts(data: TraceData): WindowParts | undefined {
  return WINDOW_PARTS.get(data);
}

/** The latest timestamp of a window's rows; undefined when it has none. */
function latestOf(rows: EventTableOf): bigint | undefined {
  return rows.n > 0 ? (BigInt(rows.maxHi) << 32n) | BigInt(rows.maxLo) : undefined;
}

/** `data` as a window where decoding stopped, at `err`. */
function stoppedAt(data: TraceData, err: { offset: number; reason: string }): void {
  data.decodeError = new TraceDecodeError(err.offset, `decoding stopped: ${err.reason}`);
  data.incomplete = { reason: "decode-error", offset: err.offset, message: err.reason };
  data.decodedBytes = err.offset;
}

/** `info` with `activityOfRow`, made from the rows that have an activity id when first read. */
function activityColumn(info: Omit<NettraceInfo, "activityOfRow">, n: number, activities: EventTableOf["activities"]): NettraceInfo {
  madeOnFirstRead(info as NettraceInfo, "activityOfRow", () => {
    const column = new Uint32Array(n);
    for (let k = 0; k < activities.row.length; k++) column[activities.row[k]] = activities.offset[k];
    return column;
  });
  return info as NettraceInfo;
}

/** What the columns an EventPipe trace does not store are made from, besides the rows' metadata. */
interface MadeFrom {
  /** The header type of the file's pointer size. */
  ht: number;
  /** Every row's EVENT_HEADER flags but EXTENDED_INFO (headerFlagsOf). */
  flags: number;
  /** The process id column, or the one process id of every row. */
  pid: Uint32Array | number;
  /** The row of each extended item (ascending): those rows have EXTENDED_INFO. */
  extRows: Uint32Array;
}

/**
 * `stored` with the columns an EventPipe trace does not store, each made when first read: the type
 * fields from the rows' event types (withDecidedFields), keywords and level from their metadata rows (-1:
 * undefined metadata, 0), the flags and process ids as `from` says, and the columns of one value:
 * header length, task and channel 0, the header type of the file's pointer size.
 */
function nettraceColumns(
  stored: EventTableOf["events"],
  n: number,
  tables: () => TraceData,
  untyped: EventTableOf["untyped"],
  metadataOfRow: Int32Array,
  metadata: readonly NettraceMetadata[],
  from: MadeFrom,
): EventColumns {
  const events = withDecidedFields(stored as unknown as StoredEventColumns, n, tables, untyped);
  const lazy = (key: keyof EventColumns, make: () => ArrayBufferView) => madeOnFirstRead(events, key, make);
  lazy("keywords", () => {
    // (two 32-bit words a row: no BigInt per row)
    const lo = Uint32Array.from(metadata, (m) => Number(BigInt.asUintN(32, m.keywords)));
    const hi = Uint32Array.from(metadata, (m) => Number(BigInt.asUintN(64, m.keywords) >> 32n));
    const out = new BigUint64Array(n);
    const words = new Uint32Array(out.buffer);
    for (let r = 0; r < n; r++) {
      const m = metadataOfRow[r];
      if (m >= 0 && m < lo.length) {
        words[2 * r] = lo[m];
        words[2 * r + 1] = hi[m];
      }
    }
    return out;
  });
  lazy("level", () => {
    const byRow = Uint8Array.from(metadata, (m) => m.level);
    const out = new Uint8Array(n);
    for (let r = 0; r < n; r++) {
      const m = metadataOfRow[r];
      if (m >= 0 && m < byRow.length) out[r] = byRow[m];
    }
    return out;
  });
  lazy("flags", () => {
    const out = new Uint16Array(n).fill(from.flags);
    for (const r of from.extRows) out[r] = from.flags | 1; // EVENT_HEADER_FLAG_EXTENDED_INFO
    return out;
  });
  const { pid } = from;
  lazy("pid", () => (typeof pid === "number" ? new Uint32Array(n).fill(pid) : pid));
  lazy("headerLength", () => new Uint16Array(n));
  lazy("task", () => new Uint16Array(n));
  lazy("channel", () => new Uint8Array(n));
  lazy("headerType", () => new Uint8Array(n).fill(from.ht));
  return events;
}

/**
 * Buffers of inputs this module read itself (wholeInput; a stream's windows, nettraceWindows): the
 * bytes sit at the store's base in the buffer, with room after them, so the trace's byte store is built
 * around them without a copy (tablesOf).
 */
const OWNED = new WeakSet<ArrayBufferLike>();

/** Room for `length` input bytes, 8 bytes into a buffer with room after them for stack items and structs (a quarter more and 1 MiB: address space, resident only where written). */
function ownedInput(length: number): Uint8Array {
  for (const room of [Math.floor(length / 4) + (1 << 20), 1 << 20]) {
    try {
      // (from the pool of disposed traces: the store built around it goes back there)
      const buffer = takeBuffer(length + room);
      OWNED.add(buffer);
      return new Uint8Array(buffer, 0, length);
    } catch {
      // (past the largest buffer: less room)
    }
  }
  return new Uint8Array(length);
}

/** The store of `storeBytes` around `input` (its bytes at store offset `base`) when `input` was read here with room enough; else undefined. */
function storeAround(input: Uint8Array, storeBytes: number, base: number): Uint8Array | undefined {
  if (!OWNED.has(input.buffer) || input.byteOffset !== base || input.buffer.byteLength < storeBytes) return undefined;
  return new Uint8Array(input.buffer, 0, storeBytes);
}

/** All of an input's bytes in one array. */
export async function wholeInput(input: Input): Promise<Uint8Array> {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (typeof Blob !== "undefined" && input instanceof Blob) return new Uint8Array(await input.arrayBuffer());
  if (isByteSource(input)) {
    const out = ownedInput(input.byteLength);
    let at = 0;
    try {
      while (at < out.length) {
        const n = await input.read(out.subarray(at), at);
        if (n <= 0) break;
        at += n;
      }
    } finally {
      await input.close?.();
    }
    return out.subarray(0, at);
  }
  const parts: Uint8Array[] = [];
  for await (const c of input as AsyncIterable<Uint8Array>) parts.push(c.slice());
  return concatBytes(parts);
}

/** The first chunks of an iterable input (at least 8 bytes, unless it ends), and the input with them given back. */
export async function peekChunks(input: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<{ input: AsyncIterable<Uint8Array>; head: Uint8Array }> {
  const it = Symbol.asyncIterator in input ? input[Symbol.asyncIterator]() : input[Symbol.iterator]();
  const first: Uint8Array[] = [];
  let got = 0;
  let done = false;
  while (got < 8) {
    const r = await it.next();
    if (r.done) {
      done = true;
      break;
    }
    // (a chunk short of the 8 bytes is copied: the next call may reuse its memory)
    first.push(got + r.value.length < 8 ? r.value.slice() : r.value);
    got += r.value.length;
  }
  async function* again(): AsyncGenerator<Uint8Array> {
    let ended = done;
    try {
      yield* first;
      if (done) return;
      for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
      ended = true;
    } finally {
      // a reader that stops early lets the input go (a file being followed is closed)
      if (!ended) await it.return?.();
    }
  }
  return { input: again(), head: concatBytes(first) };
}
