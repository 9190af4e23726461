// openTrace and the Trace object: the decoded tables plus names, time conversion and queries.

import type { DecodeOptions, Input } from "./decode/decode.js";
import { isSessionInput, type SessionInput } from "./decode/input/session-input.js";
import type { FileClock } from "./decode/session/merge.js";
import * as C from "../assembly/codes.js";
import { extItemBytes, fileOfRow, readBuffer, type BufferInfo, type TraceData } from "./decode/result/trace-data.js";
import { EventTable, type EventRow } from "./tables/event-table.js";
import { ProviderTable } from "./tables/provider-table.js";
import { EventTypeTable } from "./tables/event-types.js";
import { readInfo, type TraceClock, type TraceInfo } from "./tables/info.js";
import { timeOrder } from "./tables/order.js";
import { runQuery, type QueryFilter, type QueryResult } from "./tables/query.js";
import { ClrTables, type ClrTable } from "./tables/clr-tables.js";
import { buildProcessTable, type ProcessTable } from "./tables/processes.js";
import { EventNames, eventName } from "./naming/event-names.js";
import { readWarnings, type TraceDecodeError, type TraceIncomplete, type TraceWarning } from "./decode/result/errors.js";

export type OpenOptions = DecodeOptions;
export type { BufferInfo, FileClock };

/** One of the files a trace was decoded from (a trace of several files merged has one each). */
export interface TraceFile {
  /** The name it was given (a path, a File's name; "" for a trace of one unnamed input). */
  name: string;
  /** Its own logfile header. */
  info: TraceInfo;
  /** Its rows: [firstRow, firstRow + rowCount) of the trace's event table. */
  firstRow: number;
  rowCount: number;
  /** How its timestamps were put on the trace's clock (see decode/session/merge.ts). */
  clock: FileClock;
  complete: boolean;
  incomplete?: TraceIncomplete;
  inputBytes: number;
  decodedBytes: number;
}

/** The files of `data`, each with its own header read as `readInfo` reads a trace's. */
export function filesOf(data: TraceData, whole: TraceInfo): TraceFile[] {
  if (!data.files) {
    return [
      {
        name: "",
        info: whole,
        firstRow: 0,
        rowCount: data.eventCount,
        clock: "anchor",
        complete: data.incomplete === undefined,
        incomplete: data.incomplete,
        inputBytes: data.inputBytes,
        decodedBytes: data.decodedBytes,
      },
    ];
  }
  return data.files.map((f) => ({
    name: f.name,
    info: readInfo({
      ...data,
      logfileOffset: f.logfileOffset,
      eventCount: f.rowCount,
      bufferCount: f.bufferCount,
      buffersOffset: data.buffersOffset + f.firstBuffer * C.BUF_STRIDE,
      inputBytes: f.inputBytes,
      decodedBytes: f.decodedBytes,
    }).info,
    firstRow: f.firstRow,
    rowCount: f.rowCount,
    clock: f.clock,
    complete: f.incomplete === undefined,
    incomplete: f.incomplete,
    inputBytes: f.inputBytes,
    decodedBytes: f.decodedBytes,
  }));
}

/** Names TraceLogging providers carry in their provider-traits extended item (type 12). */
export function namesFromProviderTraits(data: TraceData): Map<number, string> {
  const names = new Map<number, string>();
  const { ext, bytes } = data;
  const decoder = new TextDecoder();
  for (let e = 0; e < data.extCount; e++) {
    if (ext.type[e] !== 12 || ext.size[e] < 3) continue;
    const p = data.events.provider[ext.row[e]];
    if (names.has(p)) continue;
    const item = extItemBytes(data, bytes, e);
    let z = 2;
    while (z < item.length && item[z] !== 0) z++;
    if (z > 2) names.set(p, decoder.decode(item.subarray(2, z)));
  }
  return names;
}

export class Trace {
  readonly info: TraceInfo;
  readonly clock: TraceClock;
  readonly providers: ProviderTable;
  /** The distinct (provider, id, version, opcode, header type) of the rows, with row counts. */
  readonly eventTypes: EventTypeTable;
  private eventTable: EventTable | null;
  readonly warnings: readonly TraceWarning[];
  /** Warnings seen, including any beyond the first MAX_WARNINGS (10,000) kept. */
  readonly warningTotal: number;
  /**
   * Whether the tables hold the whole trace: decoding went through to the end of the input, and the
   * input holds every buffer the trace has. When false, `incomplete` says why and from which byte
   * offset, and every row before that point is kept. Damage the decoder steps over (a skipped buffer,
   * an abandoned record) leaves the trace complete and is listed in `warnings`.
   */
  readonly complete: boolean;
  /**
   * Why the trace is not complete (undefined when it is): `reason` ("decode-error", "capacity",
   * "truncated-buffer", "missing-buffers"), `offset` (byte offset in the input) and `message`.
   */
  readonly incomplete?: TraceIncomplete;
  /** Bytes of input given: the file's size (a stream is read to its end even when decoding stopped early). */
  readonly inputBytes: number;
  /** Bytes of input decoded: `inputBytes` unless decoding stopped early, then the offset where it stopped. */
  readonly decodedBytes: number;
  /**
   * Set when decoding failed part way (an exception or a trap): the error, with the byte offset it
   * arose at; every row before it is kept (and `incomplete.reason` is "decode-error").
   */
  readonly decodeError?: TraceDecodeError;
  /** The format version (2–6) of an EventPipe file (.nettrace, .netperf); undefined for an .etl trace. */
  readonly eventPipeVersion?: number;
  private data: TraceData | null;
  private clr: ClrTables | null;
  private fileList?: TraceFile[];
  private processTable?: ProcessTable;
  private eventNames?: EventNames;

  /** `providerNames`: names of providers known from elsewhere (default: the trace's own provider traits). */
  constructor(data: TraceData, providerNames?: Map<number, string>) {
    this.data = data;
    const { info, clock } = readInfo(data);
    this.info = info;
    this.clock = clock;
    this.providers = new ProviderTable(data, providerNames ?? namesFromProviderTraits(data));
    this.eventTypes = new EventTypeTable(data);
    const ptr = info.pointerSize === 4 || info.pointerSize === 8 ? info.pointerSize : info.headerPointerSize;
    this.eventTable = new EventTable(data, this.providers, clock, ptr, () => timeOrder(data), eventName);
    this.warnings = readWarnings(data);
    this.warningTotal = data.warningTotal;
    this.decodeError = data.decodeError;
    this.incomplete = data.incomplete;
    this.complete = data.incomplete === undefined;
    this.inputBytes = data.inputBytes;
    this.decodedBytes = data.decodedBytes;
    this.eventPipeVersion = data.nettrace?.formatVersion;
    // (one row kept: the fields of a row read one after another decode its payload once)
    let last: EventRow | undefined;
    this.clr = new ClrTables(data, (row, name) => (last?.index === row ? last : (last = this.events.row(row))).get(name));
  }

  /**
   * The typed table of a .NET runtime event: by TraceEvent name (e.g.
   * "Microsoft-Windows-DotNETRuntime/GC/Start"; the newest version present) or by
   * { provider, id, version }. Undefined when the trace has no such events.
   */
  table(key: string | { provider: string; id: number; version: number }): ClrTable | undefined {
    if (!this.clr) throw new Error("etw-wasm: trace disposed");
    return this.clr.table(key);
  }

  /**
   * Processes and threads from the kernel Process and Thread events: pid -> image name and command
   * line, tid -> pid, with time intervals (ids are reused). Built on first use.
   */
  get processes(): ProcessTable {
    return (this.processTable ??= buildProcessTable(this));
  }

  /**
   * TraceEvent's event names by event type (`names.ofType(t)`, `names.ofRow(i)`, `names.counts()`):
   * each type is named once, so naming every row costs an array lookup.
   */
  get names(): EventNames {
    return (this.eventNames ??= new EventNames(this.events, this.eventTypes));
  }

  /** Process name of an event row as PerfView shows it ("Process(pid)" when no Process event named it). */
  processName(row: number): string {
    const e = this.events;
    return this.processes.processName(e.pid[row], e.timestamp[row]);
  }

  /**
   * The files the trace was decoded from, in the order given: one for a trace of one file; for
   * several files of a session merged, each with its own header, rows and completeness.
   */
  get files(): TraceFile[] {
    return (this.fileList ??= filesOf(this.live, this.info));
  }

  /** The file (an index into `files`) event row `row` came from. */
  fileOf(row: number): number {
    const files = this.live.files;
    return files ? fileOfRow(files, row) : 0;
  }

  /** Every typed table the trace has. */
  get tables(): ClrTable[] {
    if (!this.clr) throw new Error("etw-wasm: trace disposed");
    return this.clr.all;
  }

  /** The event table: one row per record, in file order. */
  get events(): EventTable {
    if (!this.eventTable) throw new Error("etw-wasm: trace disposed");
    return this.eventTable;
  }

  private get live(): TraceData {
    if (!this.data) throw new Error("etw-wasm: trace disposed");
    return this.data;
  }

  /**
   * The decoded bytes the tables' offsets refer to (payloads, strings of the typed tables, extended
   * items). Read an extended item with `extendedItemBytes(e)`: an EventPipe trace's stack items are the
   * frames where the file has them, and the 8 bytes before them are not a MatchId.
   */
  get bytes(): Uint8Array {
    return this.live.bytes;
  }

  get extendedItems(): TraceData["ext"] & { length: number } {
    return { ...this.live.ext, length: this.live.extCount };
  }

  /** The bytes of extended item `e` (a row of `extendedItems`). */
  extendedItemBytes(e: number): Uint8Array {
    const d = this.live;
    if (!(e >= 0 && e < d.extCount)) throw new RangeError(`no extended item ${e}`);
    const bytes = this.events.recordBytesOf(d.ext.row[e]);
    if (!bytes) throw new Error("etw-wasm: the record bytes of this trace were not kept");
    return extItemBytes(d, bytes, e);
  }

  get bufferCount(): number {
    return this.live.bufferCount;
  }

  buffer(index: number): BufferInfo {
    const d = this.live;
    if (!(index >= 0 && index < d.bufferCount)) throw new RangeError(`no buffer ${index}`);
    return readBuffer(d, index);
  }

  /**
   * Reads the records of `rows` (a row, a range `{ start, end }` with `end` exclusive, or row
   * indices such as a query's) back from the input, for a trace opened with `payloads: "source"`.
   * Their payloads, records, fields and extended items are readable once it resolves, until a later
   * load needs their room (64 MiB of buffers are cached). Resolves at once when the trace holds its
   * record bytes; rejects when they were dropped.
   */
  async loadRecords(rows: number | { start: number; end: number } | ArrayLike<number> | Iterable<number>): Promise<void> {
    const d = this.live;
    if (d.records) return d.records.load(rows);
    if (d.recordBytes === false) throw new Error(`etw-wasm: the record bytes were dropped (payloads: "drop")`);
  }

  /** Rows matching every given filter. */
  query(filter: QueryFilter = {}): QueryResult {
    return runQuery(this.events, this.providers, this.clock, filter);
  }

  toFiletime(raw: bigint): bigint {
    return this.clock.toFiletime(raw);
  }

  toDate(raw: bigint): Date {
    return this.clock.toDate(raw);
  }

  relativeMSec(raw: bigint): number {
    return this.clock.relativeMSec(raw);
  }

  /**
   * Drops the tables and the WebAssembly instance behind them. The memory goes to a small pool that
   * the next openTrace reuses, so views handed out before must not be read after dispose().
   */
  dispose(): void {
    void this.data?.records?.close();
    this.data?.release?.();
    this.data = null;
    this.eventTable = null;
    this.clr = null;
  }
}

/**
 * Decodes a whole trace: bytes, or chunks in file order (any sizes; e.g. a file stream). Several
 * files of one session (an array of `{ name, input }`, Files, Blobs or ByteSources) are decoded and
 * merged into one trace as TraceEvent merges them: rows file after file, one time order over all
 * (`events.timeOrder()`), one provider, event type and process table, and `files` / `fileOf(row)`
 * telling the files apart. An array of Uint8Array is one file's chunks. Bytes given whole (a
 * Uint8Array or ArrayBuffer) are the trace's record bytes, not a copy of them: left as they are while
 * the trace is in use.
 */
export async function openTrace(input: Input | SessionInput, options: OpenOptions = {}): Promise<Trace> {
  if (isSessionInput(input)) {
    // (a lazy chunk: one file needs none of it)
    const { decodeSession, namedInputs } = await import("./decode/session/session.js");
    return new Trace(await decodeSession(namedInputs(input), options));
  }
  // (the decoder is a lazy chunk: an app loads it when it opens a trace, not with its first page)
  const { decodeTrace } = await import("./decode/decode.js");
  return traceOf(await decodeTrace(input, options));
}

/**
 * A Trace over decoded tables (made by `make`: a Trace, or a stream's batch); an EventPipe file's
 * providers and events are named by its metadata (`providerNames`: names known besides, which win).
 */
export async function traceOf<T extends Trace = Trace>(
  data: TraceData,
  providerNames?: Map<number, string>,
  make: (data: TraceData, providerNames?: Map<number, string>) => T = (d, n) => new Trace(d, n) as T,
): Promise<T> {
  const nettrace = data.nettrace;
  if (!nettrace) return make(data, providerNames);
  const { nettraceNames } = await import("./naming/nettrace-names.js");
  const named = nettraceNames(data, nettrace);
  const trace = make(data, new Map([...named.providers, ...(providerNames ?? [])]));
  named.describe(trace.events);
  return trace;
}
