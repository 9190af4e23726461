// streamTrace: a trace of any size as a stream of batches, one per window of buffers, in memory
// bounded by the batch size. Each batch is a Trace over its window's rows; the stream's end says
// what openTrace would about the whole: header, counts, providers, warnings, completeness.

import { windowsOf, type DecodeEnd, type DecodeOptions, type Input, type Window } from "./decode/windows.js";
import { TraceBuilder } from "./decode/builder.js";
import { finishTrace } from "./decode/decode.js";
import type { TraceData } from "./decode/trace-data.js";
import { Trace, namesFromProviderTraits } from "./trace.js";
import { ProviderTable } from "./tables/provider-table.js";
import { EventTypeTable } from "./tables/event-types.js";
import { readInfo, type TraceClock, type TraceInfo } from "./tables/info.js";
import { readWarnings, type EtlDecodeError, type TraceIncomplete, type TraceWarning } from "./decode/errors.js";

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
    private readonly window: Window,
    providerNames: Map<number, string>,
  ) {
    super(batchData, providerNames);
  }

  /** A copy of the batch's tables in memory of its own: a Trace that outlives the stream. */
  keep(): Trace {
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
  decodeError?: EtlDecodeError;
  inputBytes: number;
  decodedBytes: number;
  eventCount: number;
  bufferCount: number;
  batchCount: number;
}

/**
 * A trace as an async iterable of batches. Iterate it once; `end` is set when the iteration has
 * run to its end. A decode that stops early ends the iteration normally, with `end.complete` false
 * and `end.incomplete` saying why and where; an input that is no trace rejects (EtlFormatError).
 */
export class TraceStream implements AsyncIterable<TraceBatch> {
  /** Set once the last batch has been read. */
  end?: TraceStreamEnd;
  private started = false;

  constructor(private readonly input: Input, private readonly options: StreamOptions = {}) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<TraceBatch> {
    if (this.started) throw new Error("etw-wasm: a trace stream is read once");
    this.started = true;
    const outline = new TraceBuilder(undefined, false);
    const windows = windowsOf(this.input, this.options);
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
          ...w.data, warningsOffset: w.warnings.offset, warningCount: w.warnings.count, warningTotal: w.warnings.total,
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
    const { info, clock } = readInfo(data);
    this.end = {
      info, clock,
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
      batchCount: index,
    };
  }
}

/**
 * Decodes a trace of any size as a stream of batches (one per window of `batchBytes` of record
 * data, 64 MiB by default) in memory bounded by the batch size: bytes, a Blob or File, or chunks
 * of the file in order.
 */
export function streamTrace(input: Input, options: StreamOptions = {}): TraceStream {
  return new TraceStream(input, options);
}
