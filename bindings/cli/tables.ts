// The etw-wasm commands that read a trace: summary, events (filters, formats), gc and methods.
// Each writes lines through `out`; tabular output comes as table, csv, json or jsonl.

import {
  HEADER_TYPE_NAMES, EVENTPIPE_PROVIDER, KeywordUsageCounter, ManifestCollector, NameCounter, filterWhere, type WhereCondition, type EventRow, type ProcessInfo, type QueryFilter, type Trace, type TraceStream, type TraceStreamEnd,
} from "etw-wasm/node";
import type { GcProcess, GcRecord, JitProcess, JittedMethod } from "etw-wasm/analysis";
import { nameManifestProviders, nameOsProviders, nameTraceProviders } from "etw-wasm/os-providers";

export type Out = (line: string) => Promise<void>;
export type TableFormat = "table" | "csv" | "json" | "jsonl";

/** A bad command line (exit code 2); `command` picks the usage lines printed with it. */
/** "256MiB", "1GiB", "64MB", "1000000" -> bytes. */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(k|m|g|ki|mi|gi)?b?$/i.exec(text.trim());
  if (!m) throw new Error(`not a size: ${text}`);
  const unit = (m[2] ?? "").toLowerCase();
  const mult: Record<string, number> = { "": 1, k: 1e3, m: 1e6, g: 1e9, ki: 1024, mi: 1024 ** 2, gi: 1024 ** 3 };
  return Math.round(Number(m[1]) * mult[unit]);
}

export class UsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
  }
}

const RUNTIME = "Microsoft-Windows-DotNETRuntime";
const RUNDOWN = "Microsoft-Windows-DotNETRuntimeRundown";

/** Writes records (all with the same keys) in one of the tabular formats. */
export async function writeTable(
  out: Out, format: TableFormat, columns: string[], rows: Iterable<Record<string, unknown>> | AsyncIterable<Record<string, unknown>>,
): Promise<void> {
  const text = (v: unknown) => (v === null || v === undefined ? "" : typeof v === "bigint" ? v.toString() : String(v));
  const plain = (v: unknown) => (typeof v === "bigint" ? v.toString() : v);
  if (format === "jsonl") {
    for await (const r of rows) await out(JSON.stringify(r, (_, v) => plain(v)));
  } else if (format === "json") {
    await out("[");
    let first = true;
    for await (const r of rows) {
      await out((first ? "  " : ", ") + JSON.stringify(r, (_, v) => plain(v)));
      first = false;
    }
    await out("]");
  } else if (format === "csv") {
    const cell = (v: unknown) => {
      const s = text(v);
      return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    };
    await out(columns.join(","));
    for await (const r of rows) await out(columns.map((c) => cell(r[c])).join(","));
  } else {
    // aligned text: widths from the rows (kept in memory: tables here are summaries, not raw events)
    const all: Record<string, unknown>[] = [];
    for await (const r of rows) all.push(r);
    // a loop, not Math.max(...cells): a spread of a hundred thousand cells overflows the stack
    const widths = columns.map((c) => all.reduce((w, r) => Math.max(w, text(r[c]).length), c.length));
    // the last column is not padded (a long cell there would pad every line to its width)
    const pad = (cell: string, i: number) => (i === columns.length - 1 ? cell : cell.padEnd(widths[i]));
    await out(columns.map((c, i) => pad(c, i)).join("  ").trimEnd());
    for (const r of all) await out(columns.map((c, i) => pad(text(r[c]), i)).join("  ").trimEnd());
  }
}

/** What a summary counts, gathered from one trace or batch by batch. */
class SummaryCounts {
  /** Rows per header type, and the header types in order of first sight. */
  private readonly typeRows = new Float64Array(256);
  private readonly typeOrder: number[] = [];
  perProvider = new Float64Array(0);
  readonly names = new NameCounter();
  /** Keywords and levels per provider. */
  readonly keywords = new KeywordUsageCounter();
  readonly perPid = new Map<number, number>();
  readonly processes: ProcessInfo[] = [];
  /** Smallest and largest raw timestamp (as two 32-bit halves, compared without making bigints). */
  private minHi = 0x7fffffff; private minLo = 0xffffffff; private maxHi = -0x80000000; private maxLo = 0; rows = 0;

  add(t: Trace): void {
    const ev = t.events;
    const n = ev.length;
    const { pid, eventType } = ev.columns;
    if (this.perProvider.length < t.providers.length) {
      const next = new Float64Array(t.providers.length);
      next.set(this.perProvider);
      this.perProvider = next;
    }
    // rows per header type and per provider from the event types' row counts (both are part of a type)
    const types = t.eventTypes;
    let typed = 0;
    for (let k = 0; k < types.length; k++) {
      const rows = types.count[k];
      if (!rows) continue;
      this.countRows(types.headerType[k], types.provider[k], rows);
      typed += rows;
    }
    // (rows past the type table's room have no type: counted one by one)
    if (typed < n) {
      const { headerType, provider } = ev.columns;
      for (let i = 0; i < n; i++) if (eventType[i] >= types.length) this.countRows(headerType[i], provider[i], 1);
    }
    // pids in runs (the records of a buffer mostly share one), and the time span, in one pass
    const ts = ev.columns.timestamp;
    const w = new Int32Array(ts.buffer, ts.byteOffset, n * 2);
    let minHi = this.minHi, minLo = this.minLo, maxHi = this.maxHi, maxLo = this.maxLo;
    let runPid = n ? pid[0] : 0, runStart = 0;
    for (let i = 0; i < n; i++) {
      const p = pid[i];
      if (p !== runPid) {
        if (runPid !== 0xffffffff) this.perPid.set(runPid, (this.perPid.get(runPid) ?? 0) + (i - runStart));
        runPid = p;
        runStart = i;
      }
      const lo = w[2 * i] >>> 0, hi = w[2 * i + 1];
      if (hi < minHi || (hi === minHi && lo < minLo)) { minHi = hi; minLo = lo; }
      if (hi > maxHi || (hi === maxHi && lo > maxLo)) { maxHi = hi; maxLo = lo; }
    }
    if (n && runPid !== 0xffffffff) this.perPid.set(runPid, (this.perPid.get(runPid) ?? 0) + (n - runStart));
    this.minHi = minHi; this.minLo = minLo; this.maxHi = maxHi; this.maxLo = maxLo;
    this.rows += n;
    this.names.add(t);
    this.keywords.add(t);
    // process names come from the kernel's Process and Thread events: a batch without them has none
    let kernel = false;
    for (let k = 0; k < types.length && !kernel; k++) {
      if (!types.count[k]) continue;
      const p = t.providers.get(types.provider[k]);
      // (or an EventPipe file's ProcessInfo)
      kernel = p.group === "Process" || p.group === "Thread" || (p.guid === EVENTPIPE_PROVIDER && types.eventId[k] === 1);
    }
    if (kernel) for (const p of t.processes.processes) this.processes.push(p);
  }

  private countRows(headerType: number, provider: number, rows: number): void {
    if (this.typeRows[headerType] === 0) this.typeOrder.push(headerType);
    this.typeRows[headerType] += rows;
    this.perProvider[provider] += rows;
  }

  /** Rows per header type, in order of first sight. */
  get perType(): [number, number][] {
    return this.typeOrder.map((h) => [h, this.typeRows[h]]);
  }

  get first(): bigint { return (BigInt(this.minHi) << 32n) | BigInt(this.minLo); }
  get last(): bigint { return (BigInt(this.maxHi) << 32n) | BigInt(this.maxLo); }
}

/** What the summary prints besides the counts: the whole trace's outline. */
type Outline = Pick<TraceStreamEnd, "providers" | "clock" | "eventTypes">;

async function writeSummary(c: SummaryCounts, outline: Outline, out: Out, infoLines: string[]): Promise<void> {
  for (const l of infoLines) await out(l);
  if (c.rows) {
    const span = outline.clock.relativeMSec(c.last) - outline.clock.relativeMSec(c.first);
    await out(`${"time span:".padEnd(15)}${span.toFixed(3)} ms`);
  }
  await out("");
  await out("records per header type:");
  for (const [t, n] of c.perType.sort((a, b) => b[1] - a[1])) await out(`  ${String(n).padStart(10)}  ${HEADER_TYPE_NAMES[t] ?? t}`);
  await out("");
  await out("records per provider:");
  const providers = [...outline.providers].map((p) => ({ p, n: c.perProvider[p.index] ?? 0 })).filter((x) => x.n).sort((a, b) => b.n - a.n);
  for (const { p, n } of providers) {
    const name = p.group ? `${p.name}/${p.group}` : p.name;
    await out(`  ${String(n).padStart(10)}  ${name}${name.includes(p.guid) ? "" : `  {${p.guid}}`}`);
  }
  await out("");
  await out("keywords and levels per provider (keyword names from the .NET runtime manifest, other bits in hex):");
  for (const u of c.keywords.result(outline.providers).sort((a, b) => b.rows - a.rows)) {
    const p = outline.providers.get(u.provider);
    const name = u.name.includes(p.guid) ? u.name : `${u.name}  {${p.guid}}`;
    await out(`  ${name}: keywords ${u.keywordNames.length ? u.keywordNames.join(", ") : "none"}; levels ${u.levels.map((l) => `${l.name} ${l.rows}`).join(", ")}`);
  }
  await out("");
  await out("records per event name:");
  for (const [name, n] of c.names.counts(outline.providers, outline.eventTypes)) await out(`  ${String(n).padStart(10)}  ${name}`);
  await out("");
  await out("processes (records logged by each):");
  const named = new Map(c.processes.map((p) => [p.pid, p]));
  for (const [pid, n] of [...c.perPid].sort((a, b) => b[1] - a[1])) {
    const p = named.get(pid);
    await out(`  ${String(n).padStart(10)}  ${String(pid).padStart(6)}  ${p ? p.name : `Process(${pid})`}${p?.commandLine ? `  ${p.commandLine}` : ""}`);
  }
}

/** Trace summary: the logfile header, then records per header type, provider and event name, and processes. */
export async function summary(trace: Trace, out: Out, infoLines: string[]): Promise<void> {
  const c = new SummaryCounts();
  c.add(trace);
  // providers named only in the trace's manifests, or by the names Windows registers them under
  nameTraceProviders(trace);
  await writeSummary(c, trace, out, infoLines);
}

/**
 * The summary of a stream, counted batch by batch (memory bounded by the batch size) and written
 * once the stream has ended. Returns the stream's end.
 */
export async function streamSummary(stream: TraceStream, out: Out, infoLines: (end: TraceStreamEnd) => string[]): Promise<TraceStreamEnd> {
  const c = new SummaryCounts();
  // (manifests are gathered over the whole stream: one may come in chunks across batches)
  const manifests = new ManifestCollector();
  for await (const batch of stream) {
    c.add(batch);
    manifests.scan(batch.events);
  }
  const end = stream.end!;
  nameManifestProviders(end.providers, manifests.result);
  nameOsProviders(end.providers);
  await writeSummary(c, end, out, infoLines(end));
  return end;
}

export interface EventFilters {
  provider?: string;
  event?: string;
  pid?: number;
  tid?: number;
  from?: number;
  to?: number;
  timeOrder?: boolean;
  /** Keyword names and masks (QueryFilter.keywords), e.g. "GC,Loader" or "0x9". */
  keywords?: string;
  /** The least severe level kept (QueryFilter.level). */
  level?: number;
  /** Conditions on payload fields (QueryFilter.where), tested on the rows the other filters keep. */
  where?: readonly WhereCondition[];
}

/** The rows an `events` command prints: the query API, then the event-name filter, then the payload conditions, each on the survivors. */
export function selectEvents(trace: Trace, f: EventFilters): Uint32Array {
  const q: QueryFilter = { order: f.timeOrder ? "time" : "file" };
  if (f.provider !== undefined) {
    if (!trace.providers.find(f.provider).length) throw new UsageError(`no provider ${f.provider} in this trace`, "events");
    q.provider = f.provider;
  }
  if (f.pid !== undefined) q.pid = f.pid;
  if (f.tid !== undefined) q.tid = f.tid;
  if (f.from !== undefined) q.from = f.from;
  if (f.to !== undefined) q.to = f.to;
  if (f.keywords !== undefined) q.keywords = f.keywords;
  if (f.level !== undefined) q.level = f.level;
  const named = selectByName(trace, trace.query(q).indices, f.event);
  return f.where ? filterWhere(trace.events, named, f.where) : named;
}

/** `rows` whose event name is `event` (or ends in "/event"), any case; all of them without one. */
function selectByName(trace: Trace, rows: Uint32Array, event: string | undefined): Uint32Array {
  if (event === undefined) return rows;
  const want = event.toLowerCase();
  const matches = (name: string) => {
    const n = name.toLowerCase();
    return n === want || n.endsWith("/" + want);
  };
  // Rows of one event type share their name: test each type once (0 untested, 1 match, 2 no match).
  const { names } = trace;
  const types = trace.events.eventType;
  const verdict = new Uint8Array(trace.eventTypes.length);
  return rows.filter((i) => {
    const t = types[i];
    if (t >= verdict.length) return matches(names.ofRow(i));
    if (verdict[t] === 0) {
      const name = names.ofType(t);
      if (name === null) return matches(names.ofRow(i));
      verdict[t] = matches(name) ? 1 : 2;
    }
    return verdict[t] === 1;
  });
}

export const EVENT_COLUMNS = ["row", "timeMs", "name", "pid", "tid", "process", "processor", "headerType", "payloadLength", "fields"];

/** One event as a flat record for table, csv and json output: `index` in the whole trace, `process` its name. */
export function eventRecord(row: EventRow, index: number, process: string): Record<string, unknown> {
  const d = row.decode();
  const fields = d ? Object.fromEntries(d.names.map((n, k) => [n, d.values[k] instanceof Uint8Array ? Buffer.from(d.values[k] as Uint8Array).toString("hex") : d.values[k]])) : {};
  return {
    row: index,
    timeMs: Number(row.relativeMSec.toFixed(4)),
    name: row.name,
    pid: row.pid,
    tid: row.tid,
    process,
    processor: row.processor,
    headerType: row.headerTypeName,
    payloadLength: row.payloadLength,
    fields: JSON.stringify(fields, (_, v) => (typeof v === "bigint" ? v.toString() : v)),
  };
}

/**
 * The events the gc or methods command reads, taken out of their trace or batch (a few fields each),
 * and put in time order at the end: the order of the time-ordered event table (timestamp, then
 * processor, then file order), whatever batches they came in.
 */
class TimedEvents<T> {
  private readonly list: { ts: bigint; processor: number; row: number; value: T }[] = [];

  add(r: EventRow, row: number, value: T): void {
    this.list.push({ ts: r.timestamp, processor: r.processor, row, value });
  }

  ordered(): { ts: bigint; value: T }[] {
    return this.list.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.processor - b.processor || a.row - b.row));
  }
}

/** Where a collector takes its rows from: a whole trace, or each batch of a stream in turn. */
type RowSource = { rows: Iterable<EventRow>; firstRow: number };

function* traceRows(trace: Trace, provider: string[]): Iterable<RowSource> {
  yield { rows: trace.query({ provider }), firstRow: 0 };
}

async function* streamRows(stream: TraceStream, provider: string[]): AsyncIterable<RowSource> {
  for await (const b of stream) if (provider.some((p) => b.providers.find(p).length)) yield { rows: b.query({ provider }), firstRow: b.firstRow };
}

/** The keys of a GC as the gc command prints it: TraceEvent's TraceGC property names. */
export const GC_COLUMNS = [
  "PID", "ProcessName", "Number", "Generation", "Reason", "Type", "PauseStartRelativeMSec", "SuspendDurationMSec", "PauseDurationMSec",
  "DurationMSec", "HeapSizeBeforeMB", "HeapSizeAfterMB", "HeapSizePeakMB", "PromotedMB", "AllocedSinceLastGCMB", "AllocRateMBSec",
  "RatioPeakAfter", "PauseTimePercentageSinceLastGC",
] as const;

/** Numbers to 3 decimals for an aligned table; other formats keep every digit. */
const tableNumber = (round: boolean) => (v: unknown) => (round && typeof v === "number" && !Number.isInteger(v) ? Number(v.toFixed(3)) : v);

/** One complete GC with GC_COLUMNS' keys. */
export function gcRow(gc: GcRecord, round = false): Record<string, unknown> {
  const n = tableNumber(round);
  return Object.fromEntries(GC_COLUMNS.map((k) => [k, n(gc[k])]));
}

/** The gc --rollup columns: PerfView's "GC Rollup By Generation", with TraceEvent's names, per process. */
export const GC_ROLLUP_COLUMNS = [
  "PID", "ProcessName", "Gen", "Count", "MaxPauseDurationMSec", "MaxSizePeakMB", "MaxAllocRateMBSec", "TotalPauseTimeMSec",
  "TotalAllocatedMB", "AllocMBPerMSecGC", "MeanPauseDurationMSec", "NumInduced", "TotalPromotedMB", "MeanSizePeakMB", "MeanSizeAfterMB",
  "GCPauseTimePercentage", "HeapCount",
] as const;

/** A process's rollup rows: ALL, then generations 0, 1 and 2 (complete GCs only). */
export function gcRollupRows(p: GcProcess, round = false): Record<string, unknown>[] {
  const n = tableNumber(round);
  return (["ALL", "0", "1", "2"] as const).map((gen, k) => {
    const r = k === 0 ? p.Total : p.Generations[k - 1];
    const row: Record<string, unknown> = {
      PID: p.PID, ProcessName: p.ProcessName, Gen: gen, Count: r.Count, MaxPauseDurationMSec: r.MaxPauseDurationMSec,
      MaxSizePeakMB: r.MaxSizePeakMB, MaxAllocRateMBSec: r.MaxAllocRateMBSec, TotalPauseTimeMSec: r.TotalPauseTimeMSec,
      TotalAllocatedMB: r.TotalAllocatedMB,
      // PerfView divides the process's whole allocation by each row's pause
      AllocMBPerMSecGC: r.TotalPauseTimeMSec ? p.Total.TotalAllocatedMB / r.TotalPauseTimeMSec : 0,
      MeanPauseDurationMSec: r.MeanPauseDurationMSec, NumInduced: r.NumInduced, TotalPromotedMB: r.TotalPromotedMB,
      MeanSizePeakMB: r.MeanSizePeakMB, MeanSizeAfterMB: r.MeanSizeAfterMB, GCPauseTimePercentage: p.GCPauseTimePercentage, HeapCount: p.HeapCount,
    };
    for (const key of Object.keys(row)) row[key] = n(row[key]);
    return row;
  });
}

export const METHOD_COLUMNS = ["pid", "process", "method", "signature", "startAddress", "size", "token", "flags", "source", "timeMs"];

/** Methods loaded per process: JIT loads (Method/LoadVerbose) and rundown (Method/DCStartVerbose, DCStopVerbose). */
export async function methodRows(
  source: Trace | TraceStream, processName: (pid: number, timestamp: bigint) => string,
): Promise<Record<string, unknown>[]> {
  const events = new TimedEvents<Record<string, unknown> & { key: string }>();
  const batches = "query" in source ? traceRows(source, [RUNTIME, RUNDOWN]) : streamRows(source, [RUNTIME, RUNDOWN]);
  for await (const { rows: list, firstRow } of batches) {
    for (const r of list) {
      const s = r.clrSchema;
      if (!s || !s.fields.some((f) => f.name === "MethodSignature") || !s.fields.some((f) => f.name === "MethodStartAddress")) continue;
      const pid = r.pid ?? 0;
      const address = r.get("MethodStartAddress") as bigint;
      const ns = String(r.get("MethodNamespace") ?? "");
      events.add(r, firstRow + r.index, {
        key: `${pid}:${address}:${r.get("MethodName")}`,
        pid, process: "", method: ns ? `${ns}.${r.get("MethodName")}` : String(r.get("MethodName")),
        signature: r.get("MethodSignature"), startAddress: "0x" + address.toString(16), size: r.get("MethodSize"),
        token: "0x" + Number(r.get("MethodToken") ?? 0).toString(16).padStart(8, "0"), flags: r.getDisplay("MethodFlags") ?? "",
        source: s.name.split("/").slice(1).join("/"), timeMs: Number(r.relativeMSec.toFixed(3)),
      });
    }
  }
  const rows: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const { ts, value } of events.ordered()) {
    const { key, ...row } = value;
    if (seen.has(key)) continue; // rundown repeats methods already loaded
    seen.add(key);
    row.process = processName(row.pid as number, ts);
    rows.push(row);
  }
  rows.sort((a, b) => (a.pid as number) - (b.pid as number) || (a.timeMs as number) - (b.timeMs as number));
  return rows;
}

export const JIT_COLUMNS = [
  "PID", "ProcessName", "MethodName", "StartTimeMSec", "CompileCpuTimeMSec", "ILSize", "NativeSize", "OptimizationTier",
  "CompilationThreadKind", "ModuleILPath", "ThreadID", "VersionID", "IsCompleted",
];

/** One jitted method as the jit command prints it. */
export function jitRow(p: JitProcess, m: JittedMethod): Record<string, unknown> {
  return {
    PID: p.PID, ProcessName: p.ProcessName, MethodName: m.MethodName, StartTimeMSec: Number(m.StartTimeMSec.toFixed(3)),
    CompileCpuTimeMSec: Number(m.CompileCpuTimeMSec.toFixed(3)), ILSize: m.ILSize, NativeSize: m.NativeSize, OptimizationTier: m.OptimizationTier,
    CompilationThreadKind: m.CompilationThreadKind, ModuleILPath: m.ModuleILPath, ThreadID: m.ThreadID, VersionID: m.VersionID, IsCompleted: m.IsCompleted,
  };
}

export const JIT_SUMMARY_COLUMNS = [
  "PID", "ProcessName", "Count", "TotalCpuTimeMSec", "TotalILSize", "TotalNativeSize",
  "ForegroundCount", "ForegroundMSec", "MulticoreJitBackgroundCount", "MulticoreJitBackgroundMSec",
  "TieredCompilationBackgroundCount", "TieredCompilationBackgroundMSec",
];

/** A process's JIT totals (completed methods) as jit --summary prints them. */
export function jitSummaryRow(p: JitProcess): Record<string, unknown> {
  const ms = (x: number) => Number(x.toFixed(3));
  const k = p.ByKind;
  return {
    PID: p.PID, ProcessName: p.ProcessName, Count: p.Totals.Count, TotalCpuTimeMSec: ms(p.Totals.TotalCpuTimeMSec),
    TotalILSize: p.Totals.TotalILSize, TotalNativeSize: p.Totals.TotalNativeSize,
    ForegroundCount: k.Foreground.Count, ForegroundMSec: ms(k.Foreground.TotalCpuTimeMSec),
    MulticoreJitBackgroundCount: k.MulticoreJitBackground.Count, MulticoreJitBackgroundMSec: ms(k.MulticoreJitBackground.TotalCpuTimeMSec),
    TieredCompilationBackgroundCount: k.TieredCompilationBackground.Count, TieredCompilationBackgroundMSec: ms(k.TieredCompilationBackground.TotalCpuTimeMSec),
  };
}

/** A progress bar on stderr, for a terminal only. */
export function progressBar(total: number): ((done: number) => void) & { end(): void } {
  const t0 = performance.now();
  let last = 0;
  const draw = (done: number) => {
    const now = performance.now();
    if (now - last < 100 && done < total) return;
    last = now;
    const f = Math.min(1, done / Math.max(1, total));
    const width = 30;
    const mbps = done / 1e6 / Math.max(1e-3, (now - t0) / 1000);
    process.stderr.write(`\r[${"#".repeat(Math.round(f * width)).padEnd(width, ".")}] ${(f * 100).toFixed(0).padStart(3)}%  ${(done / 1e6).toFixed(1)} MB  ${mbps.toFixed(0)} MB/s`);
  };
  return Object.assign(draw, { end: () => process.stderr.write("\r" + " ".repeat(70) + "\r") });
}
