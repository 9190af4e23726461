// The viewer's worker for traces too big to hold: the file is streamed batch by batch (memory
// bounded by the batch; the page reads the file and sends it over, feed.ts), the summary, counts
// and GC lanes are computed from the batches, and where each batch lies in the file is remembered,
// so that the event table can be paged from the file on demand: a page's batch is decoded again
// from its bytes, after buffer 0 (the logfile header's, which gives the trace's clock).

import {
  streamTrace,
  openTrace,
  inTimeOrder,
  NameCounter,
  ProcessCollector,
  setTraceManifests,
  parseWhere,
  filterWhere,
  type ProcessTable,
  type Trace,
  type TraceManifests,
} from "etw-wasm/browser";
import {
  CpuCollector,
  DoctorCollector,
  GcComputer,
  GC_EVENT_IDS,
  GC_PROVIDERS,
  streamWeightedStacks,
  type CpuProfile,
  type DoctorReport,
  type GcProcess,
  type GcProcessValues,
  type WeightedStacks,
} from "etw-wasm/analysis";
import { rowCells, type RowCells } from "./rows.js";
import { receiveFile } from "./feed.js";
import { GcEvents, lanesBuffers, type GcLanes } from "./gc-lanes.js";

/** A batch's rows (file order, over the whole trace) and its buffers' bytes in the file. */
interface BatchAt {
  firstRow: number;
  rows: number;
  start: number;
  end: number;
}

export interface StreamSummary {
  records: number;
  info: Trace["info"];
  complete: boolean;
  incomplete?: { reason: string; offset: number; message: string };
  decodeError?: string;
  inputBytes: number;
  decodedBytes: number;
  warningTotal: number;
  providers: [string, number][];
  names: [string, number][];
  gcs: GcLanes;
  spanMs: number;
  batches: number;
  /** The health check, from the same pass. */
  doctor: DoctorReport;
}

/** What a second pass over the file gives first, once the summary is shown: PerfView's GCStats. */
export interface StreamGcStats {
  gcStats: GcProcessValues[];
  /** Complete GCs in all (gcStats keeps the first few thousand: the page shows no more, and cloning them all is slow). */
  gcCount: number;
}

/** What the second pass gives then: the CPU profile (naming its frames takes a few seconds on a large trace). */
export interface StreamAnalyses {
  cpu: CpuProfile;
  /** The name of each process the CPU samples are of. */
  cpuProcesses: [number, string][];
}

const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent) => void) | null;
  postMessage(message: unknown, transfer?: Transferable[]): void;
};

let file: Blob | undefined;
/** The batch size the page asked for (?stream=BYTES), for the passes after the first. */
let askedBatchBytes: number | undefined;
/** The first pass over the file, once started. */
let opened: Promise<StreamSummary> | undefined;
/** etw.wasm, compiled once when the worker starts (the page sends its address), for the stream and every page. */
let wasm: Promise<WebAssembly.Module> | undefined;
let batches: BatchAt[] = [];
let headerEnd = 0;
let manifests: TraceManifests | undefined;
/** Batches decoded again for pages, most recent last (two kept). */
let cached: { index: number; trace: Trace; skip: number }[] = [];

/** The latest raw timestamp of `t` or `best`, as (high, low) u32 halves, in `best`. */
function latest(t: Trace, best: [number, number]): void {
  const c = t.events.columns.timestamp;
  const ts = new Uint32Array(c.buffer, c.byteOffset, c.length * 2);
  let [hi, lo] = best;
  for (let i = 0; i < ts.length; i += 2) {
    if (ts[i + 1] > hi || (ts[i + 1] === hi && ts[i] > lo)) {
      hi = ts[i + 1];
      lo = ts[i];
    }
  }
  best[0] = hi;
  best[1] = lo;
}

/** Rows per provider index: from the event type table's counts (rows past a full type table one by one). */
function providerRows(t: Trace): Float64Array {
  const counts = new Float64Array(t.providers.length);
  const types = t.eventTypes;
  let typed = 0;
  for (let k = 0; k < types.length; k++) {
    counts[types.provider[k]] += types.count[k];
    typed += types.count[k];
  }
  if (typed < t.events.length) {
    const { provider, eventType } = t.events.columns;
    for (let i = 0; i < provider.length; i++) if (eventType[i] === NO_TYPE) counts[provider[i]]++;
  }
  return counts;
}

/** A row's event type past a full type table (codes.EVENT_TYPE_NONE). */
const NO_TYPE = 0xffff;

/** Streams `input`, whose bytes the page sends through `port` (feed.ts). */
async function open(input: Blob, port: MessagePort, batchBytes?: number): Promise<StreamSummary> {
  file = input;
  batches = [];
  for (const c of cached) c.trace.dispose();
  cached = [];
  const stream = streamTrace(receiveFile(port), { wasm: await wasm, batchBytes, inputSize: input.size, onProgress: (n) => scope.postMessage({ progress: n }) });
  const names = new NameCounter();
  const perProvider = new Map<string, number>();
  const gcEvents = new GcEvents();
  const last: [number, number] = [0, 0];
  let clock: Trace["clock"] | undefined;
  firstTimestamp = undefined;
  // the health check and the processes, batch by batch in the same pass
  const doctor = new DoctorCollector();
  const processCollector = new ProcessCollector();
  for await (const b of stream) {
    names.add(b);
    clock ??= b.clock;
    if (firstTimestamp === undefined && b.events.length) firstTimestamp = b.events.timestamp[0];
    const counts = providerRows(b);
    for (const p of b.providers) {
      if (!counts[p.index]) continue;
      // (by GUID and group: a provider may be named only at the end, from a manifest or Windows' names)
      const key = `${p.guid}/${p.group ?? ""}`;
      perProvider.set(key, (perProvider.get(key) ?? 0) + counts[p.index]);
    }
    latest(b, last);
    gcEvents.add(b);
    if (b.bufferCount) {
      const first = b.buffer(0),
        end = b.buffer(b.bufferCount - 1);
      if (b.index === 0) headerEnd = first.fileOffset + first.bufferSize;
      batches.push({ firstRow: b.firstRow, rows: b.events.length, start: first.fileOffset, end: end.fileOffset + end.bufferSize });
    }
    doctor.add(b, b.firstRow);
    processCollector.scan(b, b.firstRow);
  }
  processes = processCollector.result();
  const end = stream.end!;
  manifests = names.manifests;
  // providers known only by GUID: named by the trace's manifests, else by Windows' registered names
  // (the table is loaded only when a provider still shows as its GUID)
  if ([...end.providers].some((p) => p.kind === "guid" && p.name === `{${p.guid}}`)) {
    const { nameManifestProviders, nameOsProviders } = await import("etw-wasm/os-providers");
    nameManifestProviders(end.providers, manifests);
    nameOsProviders(end.providers);
  }
  const providerNames = new Map([...end.providers].map((p) => [`${p.guid}/${p.group ?? ""}`, p.group ? `${p.name}/${p.group}` : p.name]));
  const providerCounts = new Map<string, number>();
  for (const [key, n] of perProvider) {
    const name = providerNames.get(key) ?? key;
    providerCounts.set(name, (providerCounts.get(name) ?? 0) + n);
  }
  const gcs = gcEvents.lanes();
  const nameCounts = names.counts(end.providers, end.eventTypes);
  const spanMs = clock && end.eventCount ? clock.relativeMSec((BigInt(last[0]) << 32n) | BigInt(last[1])) : 0;
  return {
    records: end.eventCount,
    info: end.info,
    complete: end.complete,
    incomplete: end.incomplete && { reason: end.incomplete.reason, offset: end.incomplete.offset, message: end.incomplete.message },
    decodeError: end.decodeError ? `${end.decodeError.name}: ` : undefined,
    inputBytes: end.inputBytes,
    decodedBytes: end.decodedBytes,
    warningTotal: end.warningTotal,
    providers: [...providerCounts].sort((a, b) => b[1] - a[1]),
    names: nameCounts,
    gcs,
    spanMs,
    batches: batches.length,
    doctor: doctor.report(end),
  };
}

/** The trace's processes (from the first pass) and its first timestamp, for the second. */
let processes: ProcessTable | undefined;
let firstTimestamp: bigint | undefined;

/**
 * The second pass, over the file itself (read in the worker) with a decode-time filter: the .NET
 * runtime's GC events and the CPU samples, their stacks and what names frames, in time order
 * (inTimeOrder), through GcComputer and CpuCollector; processes named from the first pass's table.
 */
async function analyses(input: Blob, batchBytes: number | undefined, onGcStats: (gc: StreamGcStats) => void): Promise<StreamAnalyses> {
  const table = processes!;
  const stream = streamTrace(input, {
    wasm: await wasm,
    batchBytes,
    inputSize: input.size,
    filter: { provider: ANALYSIS_PROVIDERS },
    onProgress: (n) => scope.postMessage({ analysisProgress: n }),
  });
  const gc = new GcComputer((pid, ts) => table.processName(pid, ts));
  const cpu = new CpuCollector();
  // which rows of a batch (or of the copy of its rows held past it) are GC events
  const gcRows = new WeakMap<Trace, Uint8Array>();
  const gcMark = (t: Trace, ofGc = t.query({ provider: GC_PROVIDERS, eventId: GC_EVENT_IDS }).indices): Uint8Array => {
    const mark = new Uint8Array(t.events.length);
    for (const r of ofGc) mark[r] = 1;
    gcRows.set(t, mark);
    return mark;
  };
  const select = (t: Trace) => {
    const ofGc = t.query({ provider: GC_PROVIDERS, eventId: GC_EVENT_IDS }).indices;
    gcMark(t, ofGc);
    const ofCpu = CpuCollector.rowsOf(t);
    const all = new Uint32Array(ofGc.length + ofCpu.length);
    all.set(ofGc);
    all.set(ofCpu, ofGc.length);
    return all.sort().filter((r, k, a) => k === 0 || a[k - 1] !== r);
  };
  // (both take numbers and strings out of each run at once: runs come from the batch itself while it is
  // the stream's, and the rows still waiting when it moves on are copied alone; the GC computer reads
  // the typed .NET tables' values, no row object an event)
  for await (const run of inTimeOrder(stream, { select, release: true, keep: "rows" })) {
    cpu.add(run);
    const mark = gcRows.get(run.trace) ?? gcMark(run.trace);
    const own = run.rows.filter((r) => mark[r] === 1);
    if (own.length) gc.addRows(run.trace.events, own, run.trace.tables);
  }
  // (the GC statistics go out as the pass ends, before the CPU profile's frames are named)
  const stats = gc.result();
  onGcStats({ gcStats: firstGcs(stats, 2000), gcCount: stats.reduce((n, p) => n + p.GCs.filter((g) => g.IsComplete).length, 0) });
  const profile = cpu.result(table);
  return {
    cpu: profile,
    cpuProcesses: [...new Set(profile.samples.pid)].map((pid) => [pid, table.processName(pid, firstTimestamp ?? 0n)]),
  };
}

/** What the second pass decodes: GC events, CPU samples and stacks, what names frames. */
const ANALYSIS_PROVIDERS = [
  "Microsoft-Windows-DotNETRuntime",
  "Microsoft-Windows-DotNETRuntimePrivate",
  "Microsoft-Windows-DotNETRuntimeRundown",
  "Windows Kernel/PerfInfo",
  "Windows Kernel/StackWalk",
  "Windows Kernel/Image",
  "3c530d44-97ae-513a-1e6d-783e8f8e03a9", // Microsoft-DotNETCore-SampleProfiler (EventPipe: its events are read whole anyway)
];

/** The processes' statistics with their first `most` complete GCs (in all) and no incomplete ones. */
function firstGcs(stats: GcProcess[], most: number): GcProcessValues[] {
  let left = most;
  return stats.map((p) => {
    const gcs = p.GCs.filter((g) => g.IsComplete).slice(0, Math.max(0, left));
    left -= gcs.length;
    // (a record is a view of its process's columns: posted as plain values)
    return { ...p, GCs: gcs.map((g) => g.toJSON()) };
  });
}

/** Batch `index` decoded again from the file: its buffers after buffer 0 (whose rows are skipped). */
async function batchTrace(index: number): Promise<{ trace: Trace; skip: number }> {
  const hit = cached.find((c) => c.index === index);
  if (hit) return hit;
  const b = batches[index];
  const parts = b.start === 0 ? [file!.slice(b.start, b.end)] : [file!.slice(0, headerEnd), file!.slice(b.start, b.end)];
  const trace = await openTrace(new Blob(parts), { wasm: await wasm });
  if (manifests) setTraceManifests(trace.events, manifests);
  const entry = { index, trace, skip: b.start === 0 ? 0 : trace.buffer(0).rowCount };
  cached.push(entry);
  if (cached.length > 2) cached.shift()!.trace.dispose();
  return entry;
}

/** Rows `rows` (row numbers of the whole trace, ascending) as the table shows them. */
async function page(rows: ArrayLike<number>): Promise<RowCells[]> {
  const out: RowCells[] = [];
  let k = 0;
  for (let j = 0; j < rows.length; j++) {
    const r = rows[j];
    while (k < batches.length && batches[k].firstRow + batches[k].rows <= r) k++;
    if (k === batches.length) break;
    if (r < batches[k].firstRow) continue;
    const { trace: t, skip } = await batchTrace(k);
    const i = skip + r - batches[k].firstRow;
    if (i >= t.events.length) continue;
    out.push(rowCells(t, i, t.names.ofRow(i)));
  }
  return out;
}

/** What the page's filters ask of a streamed trace: an event name, payload conditions, a process and a thread ("" / undefined: any). */
export interface EventFilter {
  event: string;
  where: string;
  pid?: number;
  tid?: number;
}

/** The rows of a batch the filters keep, in file order. */
function selectOf(ask: EventFilter): (t: Trace) => Uint32Array {
  const conditions = ask.where ? parseWhere(ask.where) : undefined;
  return (t: Trace) => {
    let rows = t.query({ pid: ask.pid, tid: ask.tid }).indices;
    if (ask.event) {
      // (rows of one event type share their name: each type named once)
      const types = t.events.eventType;
      const verdict = new Uint8Array(t.eventTypes.length);
      rows = rows.filter((i) => {
        const k = types[i];
        if (k >= verdict.length) return t.names.ofRow(i) === ask.event;
        if (!verdict[k]) verdict[k] = (t.names.ofType(k) ?? t.names.ofRow(i)) === ask.event ? 1 : 2;
        return verdict[k] === 1;
      });
    }
    return conditions ? filterWhere(t.events, rows, conditions) : rows;
  };
}

/** The chosen events' stacks (a name, payload conditions), weighted, from a pass over the file. */
async function stacksOf(
  input: Blob,
  ask: EventFilter & { field?: string; duration: boolean; invert: boolean },
): Promise<{ result: WeightedStacks; unit: string }> {
  const select = selectOf(ask);
  const field = ask.field;
  const weight = field
    ? (row: { get(name: string): unknown }) => {
        const v = row.get(field);
        return typeof v === "number" || typeof v === "bigint" ? Number(v) : NaN;
      }
    : undefined;
  const stream = streamTrace(input, { wasm: await wasm, inputSize: input.size, onProgress: (n) => scope.postMessage({ stacksProgress: n }) });
  const result = await streamWeightedStacks(stream, { select, weight, duration: ask.duration ? {} : undefined, invert: ask.invert, processes });
  return { result, unit: ask.duration ? "ms" : (field ?? "events") };
}

/** The filter pass running (a newer one stops it: only the latest filter's rows are wanted). */
let filterPass = 0;

/** The rows of the whole trace (file order) the filters keep, from a pass over the file; null when a newer filter replaced it. */
async function filteredRows(input: Blob, ask: EventFilter & { id: number }, batchBytes: number | undefined): Promise<Uint32Array | null> {
  const pass = ++filterPass;
  const select = selectOf(ask);
  const stream = streamTrace(input, {
    wasm: await wasm,
    batchBytes,
    inputSize: input.size,
    onProgress: (n) => pass === filterPass && scope.postMessage({ filterProgress: { id: ask.id, bytes: n } }),
  });
  let out = new Uint32Array(1 << 16),
    n = 0;
  for await (const b of stream) {
    // (leaving the loop ends the stream)
    if (pass !== filterPass) return null;
    const rows = select(b);
    if (n + rows.length > out.length) {
      const grown = new Uint32Array(Math.max(2 * out.length, n + rows.length));
      grown.set(out.subarray(0, n));
      out = grown;
    }
    for (let k = 0; k < rows.length; k++) out[n++] = b.firstRow + rows[k];
  }
  return out.slice(0, n);
}

/** The SQL pass's batches the page has not yet taken into DuckDB, and what wakes the pass when it takes one. */
let sqlInFlight = 0;
let sqlTaken: (() => void) | undefined;

/** Batches the SQL pass sends ahead: the next is made while DuckDB takes one (memory: this many batches' tables). */
const SQL_AHEAD = 2;

/** The SQL pass's batches (larger than the first pass's: DuckDB's cost per insert counts, and its tables, not ours, hold the rows). */
const SQL_BATCH_BYTES = 64 << 20;

/**
 * The SQL panel's tables, from a pass over the file: each batch's events and typed .NET tables as
 * Arrow IPC, sent to the page (which appends them to its DuckDB tables) SQL_AHEAD batches ahead at
 * most, then the processes (the first pass's) and providers. The Arrow chunk loads only when asked.
 */
async function sqlTables(input: Blob, batchBytes: number | undefined): Promise<void> {
  const { rowTables, sideTables } = await import("./sql-tables.js");
  const stream = streamTrace(input, {
    wasm: await wasm,
    batchBytes: batchBytes ?? SQL_BATCH_BYTES,
    inputSize: input.size,
    onProgress: (n) => scope.postMessage({ sqlProgress: n }),
  });
  let counts = new Float64Array(0);
  sqlInFlight = 0;
  const send = async (parts: [string, Uint8Array][], done: boolean, stopped?: string) => {
    while (sqlInFlight >= SQL_AHEAD) await new Promise<void>((resolve) => (sqlTaken = resolve));
    sqlInFlight++;
    scope.postMessage(
      { sqlTables: parts, done, stopped },
      parts.map(([, bytes]) => bytes.buffer as ArrayBuffer),
    );
  };
  for await (const b of stream) {
    const rows = providerRows(b);
    if (counts.length < rows.length) {
      const grown = new Float64Array(rows.length);
      grown.set(counts);
      counts = grown;
    }
    for (let p = 0; p < rows.length; p++) counts[p] += rows[p];
    await send(rowTables(b, b.firstRow, processes), false);
  }
  const end = stream.end!;
  // (a trace decoded in part: its tables hold the rows read, and the panel says where decoding stopped)
  const stopped = end.complete ? undefined : `decoding stopped early at byte offset ${end.incomplete?.offset ?? end.decodedBytes}`;
  await send(sideTables(processes!, end.clock, end.providers, counts), true, stopped);
}

scope.onmessage = async (e) => {
  const m = e.data as
    | { warm: string }
    | { open?: Blob; port: MessagePort; batchBytes?: number }
    | { page: { id: number; from: number; to: number; rows?: number[] } }
    | { stacks: EventFilter & { field?: string; duration: boolean; invert: boolean } }
    | { filter: EventFilter & { id: number } }
    | { filterStop: true }
    | { sql: true }
    | { sqlTaken: true };
  if ("warm" in m) {
    wasm = WebAssembly.compileStreaming(fetch(m.warm));
    wasm.catch(() => undefined); // (reported when a trace is opened)
    return;
  }
  try {
    if ("open" in m && m.open) {
      askedBatchBytes = m.batchBytes;
      const summary = await (opened = open(m.open, m.port, m.batchBytes));
      scope.postMessage({ summary }, lanesBuffers(summary.gcs));
      try {
        scope.postMessage({ analyses: await analyses(m.open, m.batchBytes, (gc) => scope.postMessage({ gcStats: gc })) });
      } catch (error) {
        scope.postMessage({ analysisError: (error as Error).message ?? String(error) });
      }
    } else if ("stacks" in m) {
      try {
        scope.postMessage({ stacks: await stacksOf(file!, m.stacks) });
      } catch (error) {
        scope.postMessage({ stacksError: (error as Error).message ?? String(error) });
      }
    } else if ("sqlTaken" in m) {
      sqlInFlight--;
      sqlTaken?.();
    } else if ("sql" in m) {
      try {
        // (the tables name processes from the first pass's table)
        await opened;
        await sqlTables(file!, askedBatchBytes);
      } catch (error) {
        scope.postMessage({ sqlError: (error as Error).message ?? String(error) });
      }
    } else if ("filterStop" in m) filterPass++;
    else if ("filter" in m) {
      try {
        const rows = await filteredRows(file!, m.filter, askedBatchBytes);
        if (rows) scope.postMessage({ filtered: { id: m.filter.id, rows } }, [rows.buffer]);
      } catch (error) {
        scope.postMessage({ filterError: { id: m.filter.id, message: (error as Error).message ?? String(error) } });
      }
    } else if ("page" in m) {
      // (rows from..to of the table: the trace's own, or those of the filter's rows)
      const { id, from, to, rows } = m.page;
      const wanted = rows ?? Array.from({ length: to - from }, (_, k) => from + k);
      scope.postMessage({ page: { id, from, rows: await page(wanted) } });
    }
  } catch (error) {
    scope.postMessage({ error: (error as Error).message ?? String(error) });
  }
};
