// Time order. Each processor's buffers, taken in sequence order, form a stream whose records are
// already in time order (each file's own streams, in a merged trace); a k-way merge of those streams orders the trace. Ties go to the lower
// processor, then to file order. A final check falls back to a stable sort if a stream was not
// ordered (damaged or circular files).

import { metaOf, type TraceData } from "../decode/result/trace-data.js";
import { BUF_STRIDE, B_ROW_COUNT, B_PROCESSOR, B_LOGGER_ID, B_SEQUENCE, B_FIRST_ROW } from "../../assembly/codes.js";

interface Stream {
  processor: number;
  ranges: ArrayLike<number>; // [first, end) pairs of rows, in sequence order
  at: number; // position in ranges
  row: number;
  end: number;
}

export function timeOrder(data: TraceData): Uint32Array {
  const n = data.eventCount;
  const ts = timestampHalves(data);
  // rows without buffers (an EventPipe file: its rows come in the order they are dispatched)
  if (data.bufferCount === 0) {
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    if (!isOrdered(order, ts)) stableSort(order, ts, data.events.processor);
    return order;
  }
  const order = merge(streamsOf(data), ts, n);
  if (!isOrdered(order, ts)) stableSort(order, ts, data.events.processor);
  return order;
}

/**
 * `rows` (distinct row indices) in the order timeOrder(data) gives them, the same as timeOrder(data) with the
 * other rows left out, without ordering those. Where each processor's stream is in time order and
 * its buffers follow one another in the file (the usual case), timeOrder is the order of (timestamp,
 * processor, row) and the streams are merged with only `rows` in them; where a stream is out of time
 * order, timeOrder falls back to that order and `rows` are sorted by it; else (buffers of a stream
 * out of file order, ties between them then going by stream order) timeOrder itself is filtered.
 */
export function timeOrderOf(data: TraceData, rows: Uint32Array): Uint32Array {
  const ts = timestampHalves(data);
  const proc = data.events.processor;
  if (data.bufferCount === 0) {
    // (rows in file order: timeOrder keeps that order when the whole is in time order, else sorts)
    const order = rows.slice();
    if (data.eventCount === 0 || isRunOrdered(ts, 0, 0, data.eventCount)) order.sort();
    else order.sort((a, b) => cmp(ts, proc, a, b));
    return order;
  }
  const streams = streamsOf(data);
  let inTime = true,
    inFile = true;
  for (const s of streams) {
    const r = s.ranges;
    for (let k = 0; k < r.length; k += 2) {
      if (k > 0 && r[k] < r[k - 1]) inFile = false;
      const from = k > 0 ? r[k - 1] - 1 : r[k];
      if (!isRunOrdered(ts, from, r[k], r[k + 1])) inTime = false;
    }
  }
  if (!inTime) return rows.slice().sort((a, b) => cmp(ts, proc, a, b));
  if (!inFile) return onlyRows(timeOrder(data), data.eventCount, rows);
  // each stream's ranges cut down to the rows wanted (a range per run of them)
  const wanted = rowMask(data.eventCount, rows);
  const kept: Stream[] = [];
  // (every stream's ranges in one typed array, at most a pair a row wanted: a selection of scattered rows
  // made millions of pushes into growing arrays, a tenth of a streamed analysis)
  const pairs = new Uint32Array(2 * rows.length);
  let at = 0;
  for (const s of streams) {
    const start = at;
    at = cutRanges(s.ranges, wanted, pairs, at);
    if (at > start) kept.push({ processor: s.processor, ranges: pairs.subarray(start, at), at: 0, row: pairs[start], end: pairs[start + 1] });
  }
  return merge(kept, ts, rows.length);
}

/** The rows of `ranges` that are `wanted`, as [first, end) pairs of their runs, written into `out` from `at`; the end. */
function cutRanges(ranges: ArrayLike<number>, wanted: Uint8Array, out: Uint32Array, at: number): number {
  const start = at;
  for (let k = 0; k < ranges.length; k += 2) {
    for (let r = ranges[k], end = ranges[k + 1]; r < end; r++) {
      if (!wanted[r]) continue;
      if (at > start && out[at - 1] === r) out[at - 1] = r + 1;
      else {
        out[at++] = r;
        out[at++] = r + 1;
      }
    }
  }
  return at;
}

/** `order` with only `rows` (distinct, of `n` rows in all) left in it. */
export function onlyRows(order: Uint32Array, n: number, rows: Uint32Array): Uint32Array {
  const wanted = rowMask(n, rows);
  // (a loop into an array of the known size, stopping at the last row wanted: filter calls a function a row)
  const out = new Uint32Array(rows.length);
  let k = 0;
  for (let i = 0; i < order.length && k < out.length; i++) if (wanted[order[i]] === 1) out[k++] = order[i];
  return k === out.length ? out : out.slice(0, k);
}

/** 1 for each of `rows`, 0 for the other rows of `n`. */
function rowMask(n: number, rows: Uint32Array): Uint8Array {
  const wanted = new Uint8Array(n);
  for (let i = 0; i < rows.length; i++) wanted[rows[i]] = 1;
  return wanted;
}

/** The timestamps as 32-bit halves (low, high), read without a bigint per row. */
function timestampHalves(data: TraceData): Uint32Array {
  return new Uint32Array(data.events.timestamp.buffer, data.events.timestamp.byteOffset, data.eventCount * 2);
}

/** Each (file, logger, processor) stream of buffers, its rows as [first, end) ranges in sequence order. */
function streamsOf(data: TraceData): Stream[] {
  const meta = metaOf(data);
  const view = new DataView(meta.buffer, meta.byteOffset);
  const byKey = new Map<string, { processor: number; bufs: { seq: bigint; first: number; count: number }[] }>();
  // (the files of a merged trace have streams of their own: sequence numbers are per file)
  const files = data.files ?? [];
  let file = 0;
  for (let i = 0; i < data.bufferCount; i++) {
    const at = data.buffersOffset + i * BUF_STRIDE;
    const count = view.getUint32(at + B_ROW_COUNT, true);
    if (count === 0) continue;
    while (file + 1 < files.length && i >= files[file + 1].firstBuffer) file++;
    const processor = view.getUint16(at + B_PROCESSOR, true);
    const logger = view.getUint16(at + B_LOGGER_ID, true);
    const key = `${file}:${logger}:${processor}`;
    let s = byKey.get(key);
    if (!s) byKey.set(key, (s = { processor, bufs: [] }));
    s.bufs.push({ seq: view.getBigInt64(at + B_SEQUENCE, true), first: view.getUint32(at + B_FIRST_ROW, true), count });
  }
  const streams: Stream[] = [];
  for (const s of byKey.values()) {
    s.bufs.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : a.first - b.first));
    const ranges: number[] = [];
    for (const b of s.bufs) ranges.push(b.first, b.first + b.count);
    streams.push({ processor: s.processor, ranges, at: 0, row: ranges[0], end: ranges[1] });
  }
  return streams;
}

/** Whether rows [first, end) are in time order, after row `before` (itself when there is none before). */
function isRunOrdered(ts: Uint32Array, before: number, first: number, end: number): boolean {
  let ph = ts[before * 2 + 1] | 0,
    pl = ts[before * 2];
  for (let r = first; r < end; r++) {
    const h = ts[r * 2 + 1] | 0,
      l = ts[r * 2];
    if (h < ph || (h === ph && l < pl)) return false;
    ph = h;
    pl = l;
  }
  return true;
}

/**
 * A k-way merge of `streams` (`n` rows in all): earlier timestamp, then lower processor, then earlier row.
 * A tournament over the streams' heads, held in typed arrays: tree[node] is the stream that wins below
 * it, tree[1] the next; after a stream gives its head, the matches on its way up are played again (log2 k
 * comparisons of numbers, where a heap of stream objects compared their fields twice a level). Stream k,
 * which the spare leaves name, is empty, as is a stream run out (the greatest key). The key is the
 * timestamp less the first head's high half, as one number: exact while a trace spans under 2^53 ticks
 * (28 years of 100 ns); one that is not exact can only misorder, which isOrdered finds. `tie` is the
 * processor and row as one number.
 */
function merge(streams: Stream[], ts: Uint32Array, n: number): Uint32Array {
  const order = new Uint32Array(n);
  const k = streams.length;
  let leaves = 1;
  while (leaves < k) leaves *= 2;
  const base = k && ts[2 * streams[0].row + 1] | 0;
  const key = new Float64Array(k + 1).fill(Infinity),
    tie = new Float64Array(k + 1),
    tree = new Uint32Array(2 * leaves);
  const head = (s: number, r: number) => {
    key[s] = ((ts[2 * r + 1] | 0) - base) * 4294967296 + ts[2 * r];
    tie[s] = streams[s].processor * 4294967296 + (streams[s].row = r);
  };
  const replay = (node: number) => {
    for (; node; node >>= 1) {
      const a = tree[2 * node],
        b = tree[2 * node + 1];
      tree[node] = key[a] < key[b] || (key[a] === key[b] && tie[a] < tie[b]) ? a : b;
    }
  };
  for (let s = 0; s < leaves; s++) {
    tree[leaves + s] = s < k ? s : k;
    if (s < k) head(s, streams[s].row);
  }
  for (let node = leaves - 1; node; node--) replay(node);
  for (let i = 0; i < n; i++) {
    const s = tree[1],
      st = streams[s];
    order[i] = st.row;
    if (st.row + 1 < st.end) head(s, st.row + 1);
    else if ((st.at += 2) < st.ranges.length) {
      st.end = st.ranges[st.at + 1];
      head(s, st.ranges[st.at]);
    } else key[s] = Infinity;
    replay((leaves + s) >> 1);
  }
  return order;
}

function cmp(ts: Uint32Array, proc: Uint16Array, a: number, b: number): number {
  const ha = ts[a * 2 + 1] | 0,
    hb = ts[b * 2 + 1] | 0;
  if (ha !== hb) return ha < hb ? -1 : 1;
  const la = ts[a * 2],
    lb = ts[b * 2];
  if (la !== lb) return la < lb ? -1 : 1;
  if (proc[a] !== proc[b]) return proc[a] - proc[b];
  return a - b;
}

function isOrdered(order: Uint32Array, ts: Uint32Array): boolean {
  for (let i = 1; i < order.length; i++) {
    const a = order[i - 1],
      b = order[i];
    const ha = ts[a * 2 + 1] | 0,
      hb = ts[b * 2 + 1] | 0;
    if (ha > hb || (ha === hb && ts[a * 2] > ts[b * 2])) return false;
  }
  return true;
}

function stableSort(order: Uint32Array, ts: Uint32Array, proc: Uint16Array): void {
  for (let i = 0; i < order.length; i++) order[i] = i;
  order.sort((a, b) => cmp(ts, proc, a, b));
}
