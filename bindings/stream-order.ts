// Time order across a stream's batches. Each processor's buffers come in the file in time order,
// so once every processor's stream has gone past a time W, no row before W can still come: rows
// before W are merged out of the batches held (each sorted in itself, as a whole trace is: timestamp,
// processor, row) and the batches they empty are let go. The order is the whole trace's
// `timeOrder()`; memory is what lies between the slowest processor's stream and the fastest. A batch
// without buffers (an EventPipe file's) is a stream of its own, complete up to its latest time.

import type { Trace } from "./trace.js";
import type { TraceBatch, TraceStream } from "./stream.js";
import { readBuffer } from "./decode/result/trace-data.js";

/** Consecutive rows in time order, all of one batch. */
export interface TimeOrderedRun {
  /** The batch's rows, in memory of their own (`batch.keep()`), with names, clock and typed tables. */
  trace: Trace;
  /** Index in the whole trace of the batch's row 0 (`firstRow + rows[i]` is a row's index in the trace). */
  firstRow: number;
  /** Row indices in `trace`, in time order. */
  rows: Uint32Array;
  /**
   * Each of `rows`' index in the whole trace, where `trace` holds some of a batch's rows alone (keep
   * "rows"): then `firstRow + rows[i]` is not.
   */
  rowNumbers?: Float64Array;
}

export interface TimeOrderOptions {
  /**
   * The rows of each batch to order (default every row), chosen on the batch's own copy, e.g. with
   * `trace.query(...)`: a row left out takes no place in the order.
   */
  select?: (trace: Trace, batch: TraceBatch) => Uint32Array;
  /**
   * The most record data of batches held waiting for a slow processor (default 1 GiB). Past it,
   * processors not seen yet are taken as idle, and then the oldest batch held is given out whole;
   * rows that then come earlier than rows already given out are counted in `late` (given out as
   * soon as they come).
   */
  holdBytes?: number;
  /**
   * Gives each batch's copy back (`dispose()`) once all its rows are given out, so the next batch
   * copies into memory written before instead of fresh pages (default false). Only for a consumer
   * that reads each run at once and keeps nothing of it (no rows, tables or views).
   */
  release?: boolean;
  /**
   * What is held of a batch: a copy of the whole batch ("batch", the default), or only what is not
   * given out while the batch is the stream's ("rows"). With "rows", runs come from the batch itself
   * while it is the stream's (no copy: most of them, as a stream's processors keep pace), and the rows
   * still held when the stream moves on are copied alone (`batch.keepRows`): a run's `trace` may then
   * be a trace of those rows, whose `rowNumbers` give their indices in the whole trace. Only for a
   * consumer that reads each run at once and keeps nothing of it, as `release`.
   */
  keep?: "batch" | "rows";
}

/** Counts kept while ordering, read when the iteration has ended. */
export interface TimeOrderStats {
  /** Rows given out after rows with a later timestamp (see holdBytes; 0 when the order is exact). */
  late: number;
  /** The most batches held at once. */
  maxHeld: number;
}

interface Held {
  trace: Trace;
  /** The stream's batch `trace` is, while it is the stream's (keep "rows"). */
  live?: TraceBatch;
  firstRow: number;
  order: Uint32Array;
  /** Each of `order`'s rows' index in the whole trace, where `trace` holds some of a batch's rows alone. */
  numbers?: Float64Array;
  ts: BigInt64Array;
  /** The timestamps as 32-bit halves (low, high): compared without a BigInt a row. */
  ts32: Uint32Array;
  processor: Uint16Array;
  at: number;
  bytes: number;
}

const RUN = 1 << 16;

/**
 * The rows of a stream in time order, as runs of rows of one batch each. The order is the one
 * `trace.events.timeOrder()` gives the whole trace: timestamp, then processor, then file order.
 * `stats` (optional) is filled in as it goes.
 */
export async function* inTimeOrder(
  stream: TraceStream,
  options: TimeOrderOptions = {},
  stats: TimeOrderStats = { late: 0, maxHeld: 0 },
): AsyncGenerator<TimeOrderedRun> {
  const holdBytes = options.holdBytes ?? 1 << 30;
  const held: Held[] = [];
  // the latest timestamp of each (logger, processor) stream of buffers, and the processors seen
  const latest = new Map<number, bigint>();
  // (a session's files: their streams are their own, and each file's processors must have been seen,
  // unless the file has ended: then its streams hold nothing back)
  const seen = new Map<number, Set<number>>();
  // (files whose batches have no buffers: their own latest time, under a key of no processor)
  const unbuffered = new Set<number>();
  const fileOfKey = (k: number) => Math.floor(k / 2 ** 32);
  let processors = 0;
  let given: bigint | undefined; // the latest timestamp given out
  let heldBytes = 0;

  const key = (h: Held) => h.order[h.at];
  // (timestamps compared as halves, the high one signed: reading a BigInt64Array makes a BigInt a row)
  const hiOf = (t: bigint) => Number(BigInt.asIntN(32, t >> 32n));
  const loOf = (t: bigint) => Number(BigInt.asUintN(32, t));
  /** Whether row `r` of `h` comes at or after the time (hi, lo). */
  const atOrAfter = (h: Held, r: number, hi: number, lo: number): boolean => {
    const th = h.ts32[2 * r + 1] | 0;
    return th > hi || (th === hi && h.ts32[2 * r] >= lo);
  };
  // a before b: timestamp, processor, row in the trace
  const before = (a: Held, b: Held): boolean => {
    const ra = key(a),
      rb = key(b);
    const ha = a.ts32[2 * ra + 1] | 0,
      hb = b.ts32[2 * rb + 1] | 0;
    if (ha !== hb) return ha < hb;
    const la = a.ts32[2 * ra],
      lb = b.ts32[2 * rb];
    if (la !== lb) return la < lb;
    const pa = a.processor[ra],
      pb = b.processor[rb];
    if (pa !== pb) return pa < pb;
    return rowNumber(a) < rowNumber(b);
  };
  const rowNumber = (h: Held) => (h.numbers ? h.numbers[h.at] : h.firstRow + h.order[h.at]);

  /** Runs of every row held before `w` (all of them when w is undefined). */
  function* give(w: bigint | undefined): Generator<TimeOrderedRun> {
    const wHi = w === undefined ? 0 : hiOf(w),
      wLo = w === undefined ? 0 : loOf(w);
    for (;;) {
      let first: Held | undefined;
      let second: Held | undefined;
      for (const h of held) {
        if (h.at === h.order.length) continue;
        if (!first || before(h, first)) {
          second = first;
          first = h;
        } else if (!second || before(h, second)) second = h;
      }
      if (!first || (w !== undefined && atOrAfter(first, key(first), wHi, wLo))) break;
      const start = first.at;
      // the run goes on while its rows come before the next batch's head and before w
      while (first.at < first.order.length && first.at - start < RUN) {
        if (w !== undefined && atOrAfter(first, key(first), wHi, wLo)) break;
        if (second && !before(first, second)) break;
        first.at++;
      }
      const last = first.ts[first.order[first.at - 1]];
      if (given === undefined || last > given) given = last;
      yield { trace: first.trace, firstRow: first.firstRow, rows: first.order.subarray(start, first.at), rowNumbers: first.numbers?.subarray(start, first.at) };
    }
    for (let i = held.length - 1; i >= 0; i--) {
      if (held[i].at === held[i].order.length) {
        heldBytes -= held[i].bytes;
        // (the consumer is done with its runs: it asked for the next one; a batch is the stream's)
        if ((options.release || keepRows) && !held[i].live) held[i].trace.dispose();
        held.splice(i, 1);
      }
    }
  }

  /** A batch about to go with the stream: its rows still held copied alone. */
  function keepRest(h: Held, batch: TraceBatch): void {
    const rest = h.order.subarray(h.at);
    // (copied in file order: the batch's bytes read in order)
    const sorted = Uint32Array.from(rest).sort();
    const kept = batch.keepRows(sorted);
    const place = new Int32Array(batch.events.length);
    for (let i = 0; i < sorted.length; i++) place[sorted[i]] = i;
    h.order = new Uint32Array(rest.length);
    h.numbers = new Float64Array(rest.length);
    for (let i = 0; i < rest.length; i++) {
      h.order[i] = place[rest[i]];
      h.numbers[i] = h.firstRow + rest[i];
    }
    h.at = 0;
    h.trace = kept;
    h.live = undefined;
    const e = kept.events;
    h.ts = e.timestamp;
    h.ts32 = new Uint32Array(e.timestamp.buffer, e.timestamp.byteOffset, 2 * e.length);
    h.processor = e.processor;
    heldBytes -= h.bytes;
    h.bytes = kept.bytes.length + e.length * 50;
    heldBytes += h.bytes;
  }

  const keepRows = options.keep === "rows";
  for await (const batch of stream) {
    // (a batch in the decoder's memory goes when the stream moves on: what is left of it is copied then)
    const live = keepRows && batch.inDecoderMemory;
    const trace = live ? batch : batch.keep();
    processors ||= trace.info.numberOfProcessors;
    const e = trace.events;
    const rows = options.select ? options.select(trace, batch) : null;
    // (rows are distinct: as many as the batch has are all of them)
    const order = rows && rows.length < e.length ? e.timeOrderOf(rows) : e.timeOrder();
    // rows that come after rows already given out
    if (given !== undefined) for (let i = 0; i < order.length && e.timestamp[order[i]] < given; i++) stats.late++;
    const ts32 = new Uint32Array(e.timestamp.buffer, e.timestamp.byteOffset, 2 * e.length);
    /** Stream `k`'s latest timestamp, moved on to that of rows [from, to) (every row is looked at: damage may put them out of order). */
    const noteLatest = (k: number, from: number, to: number) => {
      let hi = ts32[2 * from + 1] | 0,
        lo = ts32[2 * from];
      for (let r = from + 1; r < to; r++) {
        const h = ts32[2 * r + 1] | 0;
        if (h > hi || (h === hi && ts32[2 * r] > lo)) {
          hi = h;
          lo = ts32[2 * r];
        }
      }
      const mine = (BigInt(hi) << 32n) | BigInt(lo);
      const prev = latest.get(k);
      latest.set(k, prev === undefined || mine > prev ? mine : prev);
    };
    if (trace.bufferCount === 0 && e.length > 0) {
      // A batch without buffers (an EventPipe file's windows, each ending at a sequence point, where the
      // runtime has written out every thread's events so far) is one stream: the file's rows after it
      // come at or after its latest.
      unbuffered.add(batch.file);
      noteLatest((batch.file * 65536 + 0xffff) * 65536 + 0xffff, 0, e.length);
    }
    for (let b = 0; b < trace.bufferCount; b++) {
      const info = readBuffer(trace.events.data, b);
      if (!info.rowCount) continue;
      noteLatest((batch.file * 65536 + info.loggerId) * 65536 + info.processor, info.firstRow, info.firstRow + info.rowCount);
      let procs = seen.get(batch.file);
      if (!procs) seen.set(batch.file, (procs = new Set()));
      procs.add(info.processor);
    }
    const bytes = (live ? 0 : trace.bytes.length) + e.length * 50;
    const h: Held = { trace, live: live ? batch : undefined, firstRow: batch.firstRow, order, ts: e.timestamp, ts32, processor: e.processor, at: 0, bytes };
    held.push(h);
    heldBytes += bytes;
    stats.maxHeld = Math.max(stats.maxHeld, held.length);
    // every processor's stream has gone past w (a processor not seen yet may still come with anything)
    let w: bigint | undefined;
    for (const [k, t] of latest) if (!stream.endedFiles.has(fileOfKey(k)) && (w === undefined || t < w)) w = t;
    let waiting = 0;
    for (const f of stream.filesWithRows) if (!stream.endedFiles.has(f) && !unbuffered.has(f) && (seen.get(f)?.size ?? 0) < processors) waiting++;
    if (w !== undefined && waiting === 0) yield* give(w);
    // too much held: processors not seen yet are taken as idle; then the oldest batch goes out whole
    if (heldBytes > holdBytes && w !== undefined) yield* give(w);
    while (heldBytes > holdBytes && held.length > 1) {
      const oldest = held[0];
      yield* give(oldest.ts[oldest.order[oldest.order.length - 1]] + 1n);
      if (held[0] === oldest) break;
    }
    if (h.live && held.includes(h)) keepRest(h, batch);
  }
  yield* give(undefined);
}
