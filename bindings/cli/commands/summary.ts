// etw-wasm summary: info, then records per header type, provider and event name, and processes.

import {
  HEADER_TYPE_NAMES,
  EVENTPIPE_PROVIDER,
  KeywordUsageCounter,
  ManifestCollector,
  NameCounter,
  type ProcessInfo,
  type Trace,
  type TraceStream,
  type TraceStreamEnd,
} from "etw-wasm/node";
import { nameManifestProviders, nameOsProviders } from "etw-wasm/os-providers";
import { FOLLOW, READS_TRACE } from "../args.js";
import { traceCommand } from "../command.js";
import type { Out } from "../write-table.js";
import { infoLines } from "./info.js";

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
  private minHi = 0x7fffffff;
  private minLo = 0xffffffff;
  private maxHi = -0x80000000;
  private maxLo = 0;
  rows = 0;

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
    let minHi = this.minHi,
      minLo = this.minLo,
      maxHi = this.maxHi,
      maxLo = this.maxLo;
    let runPid = n ? pid[0] : 0,
      runStart = 0;
    for (let i = 0; i < n; i++) {
      const p = pid[i];
      if (p !== runPid) {
        if (runPid !== 0xffffffff) this.perPid.set(runPid, (this.perPid.get(runPid) ?? 0) + (i - runStart));
        runPid = p;
        runStart = i;
      }
      const lo = w[2 * i] >>> 0,
        hi = w[2 * i + 1];
      if (hi < minHi || (hi === minHi && lo < minLo)) {
        minHi = hi;
        minLo = lo;
      }
      if (hi > maxHi || (hi === maxHi && lo > maxLo)) {
        maxHi = hi;
        maxLo = lo;
      }
    }
    if (n && runPid !== 0xffffffff) this.perPid.set(runPid, (this.perPid.get(runPid) ?? 0) + (n - runStart));
    this.minHi = minHi;
    this.minLo = minLo;
    this.maxHi = maxHi;
    this.maxLo = maxLo;
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

  get first(): bigint {
    return (BigInt(this.minHi) << 32n) | BigInt(this.minLo);
  }
  get last(): bigint {
    return (BigInt(this.maxHi) << 32n) | BigInt(this.maxLo);
  }
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
  const providers = [...outline.providers]
    .map((p) => ({ p, n: c.perProvider[p.index] ?? 0 }))
    .filter((x) => x.n)
    .sort((a, b) => b.n - a.n);
  for (const { p, n } of providers) {
    const name = p.group ? `${p.name}/${p.group}` : p.name;
    await out(`  ${String(n).padStart(10)}  ${name}${name.includes(p.guid) ? "" : `  {${p.guid}}`}`);
  }
  await out("");
  await out("keywords and levels per provider (keyword names from the .NET runtime manifest, other bits in hex):");
  for (const u of c.keywords.result(outline.providers).sort((a, b) => b.rows - a.rows)) {
    const p = outline.providers.get(u.provider);
    const name = u.name.includes(p.guid) ? u.name : `${u.name}  {${p.guid}}`;
    await out(
      `  ${name}: keywords ${u.keywordNames.length ? u.keywordNames.join(", ") : "none"}; levels ${u.levels.map((l) => `${l.name} ${l.rows}`).join(", ")}`,
    );
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

/**
 * The summary of a stream, counted batch by batch (memory bounded by the batch size) and written
 * once the stream has ended. Returns the stream's end.
 */
async function streamSummary(stream: TraceStream, out: Out, infoLines: (end: TraceStreamEnd) => string[]): Promise<TraceStreamEnd> {
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

export const summary = traceCommand({
  name: "summary",
  help: "  summary FILE...                info, then records per header type, provider and event name, and processes",
  options: { ...READS_TRACE, ...FOLLOW },
  operand: "FILE",
  plan: () => undefined,
  streams: () => true,
  async stream(stream, _plan, run) {
    await streamSummary(stream, (l) => run.line(l), infoLines);
  },
});
