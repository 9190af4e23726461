// streamTrace: a trace of any size as a stream of batches, one per window of buffers, in memory
// bounded by the batch size. Each batch is a Trace over its window's rows; the stream's end says
// what openTrace would about the whole: header, counts, providers, warnings, completeness.

import type { DecodeEnd, DecodeOptions, Window } from "./decode/windows/windows.js";
import type { Input } from "./decode/input/input.js";
import { TraceBuilder } from "./decode/windows/builder.js";
import { keepRowsOf } from "./decode/windows/keep-rows.js";
import { clrLayoutOf } from "./schema/clr-program.js";
import { finishTrace, isSessionInput, peek, windowsOf, type NamedInput, type SessionInput } from "./decode/decode.js";
import type { TraceData } from "./decode/result/trace-data.js";
import { setTraceManifests, traceManifests } from "./naming/trace-manifests.js";
import { Trace, filesOf, namesFromProviderTraits, traceOf, type TraceFile } from "./trace.js";
import { ProviderTable } from "./tables/provider-table.js";
import { EventTypeTable } from "./tables/event-types.js";
import { readInfo, type TraceClock, type TraceInfo } from "./tables/info.js";
import { formatError, readWarnings, type TraceDecodeError, type TraceIncomplete, type TraceWarning } from "./decode/result/errors.js";

export type StreamOptions = DecodeOptions;

/**
 * One window of a trace: a Trace over its rows (indices from 0 within the batch; `firstRow + i` is
 * row i's index in the whole trace), its typed .NET tables, event types counted over the batch,
 * and the warnings met while decoding it (`warningTotal` counts them all, kept or not). Its tables are views into the decoder's memory: valid
 * until the stream moves to the next batch, when it is disposed. `keep()` makes a copy that stays.
 */
export class TraceBatch extends Trace {
  constructor(
    private readonly batchData: TraceData,
    /** Position of the batch in the stream, from 0. */
    readonly index: number,
    /** Index in the whole trace of the batch's first row, and of its first buffer. */
    readonly firstRow: number,
    readonly firstBuffer: number,
    /** The window in the core's memory; undefined when the batch's tables are in memory of their own already. */
    private readonly window: Window | undefined,
    providerNames: Map<number, string>,
    /** The file of a session the batch's rows come from (an index into the stream's files; 0 for one file). */
    readonly file = 0,
  ) {
    super(batchData, providerNames);
  }

  /**
   * A copy of `rows` alone (distinct; row i of the copy is the batch's rows[i]) in memory of its own:
   * their columns, typed .NET entries and records (with their extended items), with the batch's
   * names, event types and clock; no buffers or warnings. What a consumer holds of a batch past the
   * stream's next one, when that is a few of its rows.
   */
  keepRows(rows: Uint32Array): Trace {
    const kept = new Trace(
      keepRowsOf(
        this.batchData,
        rows,
        (r) => this.events.recordBytesOf(r),
        (r) => clrLayoutOf(this.events.clrSchema(r)),
      ),
      new Map([...this.providers].map((p) => [p.index, p.name])),
    );
    setTraceManifests(kept.events, traceManifests(this.events));
    return kept;
  }

  /**
   * Whether the batch's tables are views into the decoder's memory, which keep() copies (an EventPipe
   * batch's are in memory of their own already: keep() shares them).
   */
  get inDecoderMemory(): boolean {
    return this.window !== undefined;
  }

  /** The batch and the traces kept of it, while its tables are theirs (tables in memory of their own). */
  private holders?: { count: number; release?: () => void };

  /** A copy of the batch's tables in memory of its own: a Trace that outlives the stream. */
  keep(): Trace {
    if (!this.window) {
      // (the tables are in memory of their own already: the same tables, names and descriptions, whose
      // memory goes back to the pool when the last of the batch and the traces kept of it is disposed)
      const h = (this.holders ??= { count: 1, release: this.batchData.release });
      const drop = () => {
        if (--h.count === 0) h.release?.();
      };
      this.batchData.release = drop;
      h.count++;
      const kept = new Trace({ ...this.batchData, release: drop }, new Map([...this.providers].map((p) => [p.index, p.name])));
      setTraceManifests(kept.events, traceManifests(this.events));
      return kept;
    }
    const builder = new TraceBuilder();
    builder.add(this.window);
    // (its own tables: the warnings are the batch's, not the core's so far)
    return new Trace(builder.build(this.batchData, 0));
  }
}

/** What a stream found over the whole trace, known once its last batch has been read. */
export interface TraceStreamEnd {
  info: TraceInfo;
  clock: TraceClock;
  providers: ProviderTable;
  /** Every event type of the trace, with its rows counted over all batches. */
  eventTypes: EventTypeTable;
  warnings: readonly TraceWarning[];
  warningTotal: number;
  /** As Trace.complete: whether every buffer of the trace was decoded. */
  complete: boolean;
  incomplete?: TraceIncomplete;
  decodeError?: TraceDecodeError;
  inputBytes: number;
  decodedBytes: number;
  eventCount: number;
  bufferCount: number;
  batchCount: number;
  /** The files of a session, each with its own header and completeness (one entry for one file). */
  files: TraceFile[];
  /** The format version (2–6) of an EventPipe file (.nettrace, .netperf); undefined for .etl. */
  eventPipeVersion?: number;
}

/** The stream's end from the trace's outline (a TraceBuilder's without rows, or a merge of them). */
function streamEnd(data: TraceData, providerNames: Map<number, string>, batchCount: number): TraceStreamEnd {
  const { info, clock } = readInfo(data);
  return {
    info,
    clock,
    providers: new ProviderTable(data, providerNames),
    eventTypes: new EventTypeTable(data),
    warnings: readWarnings(data),
    warningTotal: data.warningTotal,
    complete: data.incomplete === undefined,
    incomplete: data.incomplete,
    decodeError: data.decodeError,
    inputBytes: data.inputBytes,
    decodedBytes: data.decodedBytes,
    eventCount: data.eventCount,
    bufferCount: data.bufferCount,
    batchCount,
    files: filesOf(data, info),
    eventPipeVersion: data.nettrace?.formatVersion,
  };
}

/**
 * A trace as an async iterable of batches. Iterate it once; `end` is set when the iteration has
 * run to its end. A decode that stops early ends the iteration normally, with `end.complete` false
 * and `end.incomplete` saying why and where; an input that is no trace rejects (TraceFormatError).
 */
export class TraceStream implements AsyncIterable<TraceBatch> {
  /** Set once the last batch has been read. */
  end?: TraceStreamEnd;
  private started = false;

  /**
   * The files of a session with rows (indices), known once the first batch has come ({0} for one
   * file): time order across batches (inTimeOrder) waits to have seen each one's processors.
   */
  filesWithRows: ReadonlySet<number> = new Set([0]);
  /** The files of a session whose every batch has been given out (their rows can hold nothing back). */
  readonly endedFiles = new Set<number>();

  constructor(
    private readonly input: Input | SessionInput,
    private readonly options: StreamOptions = {},
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<TraceBatch> {
    if (this.started) throw new Error("etw-wasm: a trace stream is read once");
    this.started = true;
    if (isSessionInput(this.input)) {
      const { namedInputs, namedError } = await import("./decode/session/session.js");
      yield* this.session(namedInputs(this.input), namedError);
      return;
    }
    // an EventPipe file: a batch per window of its reader (the events between two sequence points)
    const peeked = await peek(this.input);
    if (peeked.nettrace) {
      // (read straight by the EventPipe reader: the input's first bytes are known already)
      const { nettraceWindows } = await import("./decode/eventpipe/windows.js");
      const windows = nettraceWindows(peeked.input, this.options);
      let index = 0,
        firstRow = 0;
      let names = new Map<number, string>();
      try {
        for (;;) {
          const next = await windows.next();
          if (next.done) {
            this.end = streamEnd(next.value!, names, index);
            return;
          }
          const data = next.value;
          const batch = await traceOf(data, undefined, (d, n) => new TraceBatch(d, index, firstRow, 0, undefined, n ?? new Map()));
          names = new Map([...batch.providers].map((p) => [p.index, p.name]));
          try {
            yield batch;
          } finally {
            batch.dispose();
          }
          index++;
          firstRow += data.eventCount;
        }
      } finally {
        // (a reader that stops early lets the reader go: its core's memory returns to the pool)
        await windows.return(undefined);
      }
    }
    const outline = new TraceBuilder(undefined, false);
    // (chunks read to see the format are given back ahead of the rest: a one-shot iterable has no other copy)
    const windows = windowsOf(peeked.input, this.options);
    const providerNames = new Map<number, string>();
    let batch: TraceBatch | undefined;
    let index = 0;
    let result: DecodeEnd | undefined;
    try {
      for (;;) {
        const next = await windows.next();
        batch?.dispose();
        batch = undefined;
        if (next.done) {
          result = next.value;
          break;
        }
        const w = next.value;
        outline.add(w);
        for (const [p, name] of namesFromProviderTraits(w.data)) if (!providerNames.has(p)) providerNames.set(p, name);
        // the batch's own warnings
        const data = {
          ...w.data,
          warningsOffset: w.warnings.offset,
          warningCount: w.warnings.count,
          warningTotal: w.warnings.total,
        };
        batch = new TraceBatch(data, index++, w.firstRow, w.firstBuffer, w, new Map(providerNames));
        yield batch;
      }
    } finally {
      batch?.dispose();
      // a consumer that stops early: the decoder is let go
      if (!result) await windows.return(undefined as never);
    }
    const data = finishTrace(outline, result);
    this.end = streamEnd(data, providerNames, index);
  }

  /**
   * Several files of one session as one stream: each file decoded window by window (a decoder each),
   * the windows given out in the order of their earliest timestamp, each merged on its way out
   * (SessionMerger: providers and event types numbered alike over every batch, timestamps on the
   * session clock). Rows are numbered in the order the batches come. Memory: a window per file.
   */
  private async *session(files: NamedInput[], namedError: (error: unknown, name: string) => unknown): AsyncGenerator<TraceBatch> {
    const names = files.map((f) => f.name);
    // (a lazy chunk: one file needs none of it)
    const { SessionMerger } = await import("./decode/session/merge.js");
    const merger = new SessionMerger(names);
    const sizes: number[] = files.map(() => 0);
    const progress = this.options.onProgress;
    const gens = files.map((f, i) =>
      windowsOf(f.input, {
        ...this.options,
        onProgress:
          progress &&
          ((n: number) => {
            sizes[i] = n;
            progress(sizes.reduce((a, b) => a + b, 0));
          }),
      }),
    );
    const outlines = files.map(() => new TraceBuilder(undefined, false));
    const ends: (DecodeEnd | undefined)[] = files.map(() => undefined);
    // each file's next window, as views into its decoder's memory: valid until that decoder goes on
    const heads: (Window | undefined)[] = files.map(() => undefined);
    const providerNames = new Map<number, string>();
    let batch: TraceBatch | undefined;
    let index = 0,
      rows = 0,
      buffers = 0;
    /** The next window of file f (undefined once the file has ended). */
    const advance = async (f: number, learn: boolean): Promise<void> => {
      heads[f] = undefined;
      let next: IteratorResult<Window, DecodeEnd>;
      try {
        next = await gens[f].next();
      } catch (error) {
        throw namedError(error, names[f]);
      }
      if (next.done) {
        ends[f] = next.value;
        this.endedFiles.add(f);
        // (a file that is no trace: said at once, with its name)
        if (next.value.fatalCode) {
          next.value.release?.();
          throw namedError(formatError(next.value.fatalCode, next.value.fatalOffset), names[f]);
        }
        if (learn && next.value.last) merger.learn(f, next.value.last);
        return;
      }
      const w = next.value;
      outlines[f].add(w);
      if (learn) merger.learn(f, w.data);
      heads[f] = w;
    };
    /** The earliest timestamp of a window's rows, on the session clock. */
    const earliest = (f: number): bigint => {
      const ts = heads[f]!.data.events.timestamp;
      if (!ts.length) return -(2n ** 63n);
      let min = ts[0];
      for (let i = 1; i < ts.length; i++) if (ts[i] < min) min = ts[i];
      return merger.onSessionClock(f, min);
    };
    try {
      // every file's first window (or end) before the first batch: the session clock needs their headers
      for (let f = 0; f < files.length; f++) await advance(f, true);
      merger.settle();
      this.filesWithRows = new Set(heads.flatMap((h, f) => (h ? [f] : [])));
      const firstTs = heads.map((h, f) => (h ? earliest(f) : 0n));
      for (;;) {
        let f = -1;
        for (let i = 0; i < files.length; i++) if (heads[i] && (f < 0 || firstTs[i] < firstTs[f])) f = i;
        batch?.dispose();
        batch = undefined;
        if (f < 0) break;
        const w = heads[f]!;
        // (the window's own warnings; only its record bytes are copied)
        const own = { ...w.data, warningsOffset: w.warnings.offset, warningCount: w.warnings.count, warningTotal: w.warnings.total };
        const data = merger.merge([{ file: f, data: own, records: w.records }]);
        for (const [p, name] of namesFromProviderTraits(data)) if (!providerNames.has(p)) providerNames.set(p, name);
        batch = new TraceBatch(data, index++, rows, buffers, undefined, new Map(providerNames), f);
        rows += data.eventCount;
        buffers += data.bufferCount;
        yield batch;
        await advance(f, false);
        if (heads[f]) firstTs[f] = earliest(f);
      }
    } finally {
      batch?.dispose();
      for (let f = 0; f < files.length; f++) if (!ends[f]) await gens[f].return(undefined as never);
    }
    // the whole session's outline: each file's, merged by the batches' merger (their provider and type numbers)
    const parts = files.map((_, f) => {
      try {
        return { file: f, data: finishTrace(outlines[f], ends[f]!) };
      } catch (error) {
        throw namedError(error, names[f]);
      }
    });
    const data = merger.merge(parts);
    this.end = streamEnd(data, providerNames, index);
  }
}

/**
 * Decodes a trace of any size as a stream of batches (one per window of `batchBytes` of record
 * data, 8 MiB by default) in memory bounded by the batch size: bytes, a Blob or File, or chunks
 * of the file in order. Several files of one session (as openTrace takes them) stream as one: their
 * batches in the order of their earliest timestamps, merged as openTrace merges them, each knowing
 * its `file`; memory is then a batch per file.
 */
export function streamTrace(input: Input | SessionInput, options: StreamOptions = {}): TraceStream {
  return new TraceStream(input, options);
}
