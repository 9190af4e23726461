// etw-wasm viewer: a static page on the public API. Decoding runs in a worker; the page renders
// counts, a GC timeline and a virtualized event table filtered through trace.query(). A trace too big
// to hold (over 256 MiB, or any with ?stream in the address) is streamed instead (stream-worker.ts):
// the counts and GC lanes come from its batches and the table is paged from the file on demand.

import { openTraceInWorker, filterWhere, parseWhere, WhereSyntaxError, type Trace } from "etw-wasm/browser";
import type { EventFilter, StreamAnalyses, StreamGcStats, StreamSummary } from "./stream-worker.js";
import type { DoctorReport, GcProcessValues, WeightedStacks } from "etw-wasm/analysis";
import { rowCells, rowFields, useFieldFormatter, type RowCells } from "./rows.js";
import { sendFile } from "./feed.js";
import { GcEvents, type GcLanes } from "./gc-lanes.js";

/** Files above this size are streamed, not held. */
const STREAM_BYTES = 256 << 20;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const fmt = (n: number) => n.toLocaleString("en-US");
const ROW = 22;

let trace: Trace | null = null;
let nameOfType: string[] = []; // event type -> name ("" where rows carry their own names)
let shown: Uint32Array = new Uint32Array(0);
let fileName = "";
/**
 * The streamed trace: its worker, its row count, the page last asked for, and its SQL tables (loaded
 * from the worker's batches when the panel first runs; `sqlFeed` takes them as they come).
 */
interface Streamed {
  worker: Worker;
  fileSize: number;
  records: number;
  asked: number;
  rows: Map<number, RowCells>;
  sql?: Promise<{ tables: string[]; stopped?: string }>;
  sqlFeed?: SqlFeed;
  /** The rows the table's filters keep (row numbers of the whole trace, file order), from the worker's pass; undefined: every row. */
  filtered?: Uint32Array;
  /** The latest filter asked of the worker (its answer is the one shown). */
  filterAsked: number;
}

/** What the page does with the stream worker's SQL messages. */
interface SqlFeed {
  tables(parts: [string, Uint8Array][], done: boolean, stopped: string | undefined): void;
  progress(bytes: number): void;
  error(message: string): void;
}

let streamed: Streamed | null = null;

function setStatus(text: string) {
  $("status").textContent = text;
}

/**
 * A trace decoded only in part says so above everything else: the reason, the byte offset and how
 * much of the file was read (the rows before that point are shown).
 */
interface Outcome {
  incomplete?: { reason: string; offset: number; message: string };
  decodedBytes: number;
  inputBytes: number;
  /** The decode error's class, as "Name: ", when one stopped decoding. */
  errorName?: string;
  records: number;
}

function outcomeOf(t: Trace): Outcome {
  return {
    incomplete: t.incomplete,
    decodedBytes: t.decodedBytes,
    inputBytes: t.inputBytes,
    errorName: t.decodeError ? `${t.decodeError.name}: ` : undefined,
    records: t.events.length,
  };
}

function showIncomplete(t: Outcome | null, name: string) {
  const banner = $("incomplete");
  const stop = t?.incomplete;
  banner.hidden = !stop;
  banner.replaceChildren();
  if (!t || !stop) return;
  const share = Math.floor((100 * t.decodedBytes) / Math.max(1, t.inputBytes));
  const title = document.createElement("strong");
  title.textContent = "Incomplete trace. ";
  banner.append(
    title,
    `Decoding stopped early at byte offset ${fmt(stop.offset)} (${share}% of ${name} read): ${t.errorName ?? ""}${stop.message}. ` +
      `Only the ${fmt(t.records)} records before that point are shown.`,
  );
  banner.dataset.reason = stop.reason;
  banner.dataset.offset = String(stop.offset);
}

async function open(file: File) {
  fileName = file.name;
  setStatus(`Decoding ${file.name} (${fmt(file.size)} bytes)…`);
  trace?.dispose();
  trace = null;
  streamed?.worker.terminate();
  streamed = null;
  showIncomplete(null, file.name);
  if (file.size > STREAM_BYTES || new URLSearchParams(location.search).has("stream")) return openStreamed(file);
  setFiltersEnabled(true);
  const t0 = performance.now();
  // (one decode at a time: a file chosen while another decodes stops that one's worker)
  if (heldBusy) {
    heldWorker.terminate();
    heldWorker = new Worker(new URL("worker.js", location.href), { type: "module" });
  }
  const asked = ++heldAsked;
  heldBusy = true;
  let decoded: Trace;
  try {
    decoded = await openTraceInWorker(file, {
      wasm: new URL("etw.wasm", location.href).href,
      worker: heldWorker,
      onProgress: (n) => setStatus(`Decoding ${file.name}: ${Math.round((100 * n) / Math.max(1, file.size))}%`),
    });
  } catch (error) {
    if (asked === heldAsked) {
      heldBusy = false;
      setStatus(`Cannot read ${file.name}: ${(error as Error).message}`);
    }
    return;
  }
  if (asked !== heldAsked) return decoded.dispose();
  heldBusy = false;
  trace = decoded;
  const ms = performance.now() - t0;
  setStatus(`${file.name}: ${fmt(trace.events.length)} records decoded in ${ms.toFixed(0)} ms${trace.complete ? "" : " (incomplete)"}.`);
  showIncomplete(outcomeOf(trace), file.name);
  await nameOsProviders(trace);
  render(trace);
}

/**
 * Providers known only by GUID: by the trace's own EventSource manifests, else by the names Windows
 * registers them under (a table of about a thousand names, loaded only when a provider needs it).
 * Before render: event names of such providers are made from the provider's name.
 */
async function nameOsProviders(t: Trace) {
  if (![...t.providers].some((p) => p.kind === "guid" && p.name === `{${p.guid}}`)) return;
  const { nameTraceProviders } = await import("etw-wasm/os-providers");
  nameTraceProviders(t);
}

/** The worker held traces are decoded in: started with the page, kept for the next trace. */
let heldWorker = new Worker(new URL("worker.js", location.href), { type: "module" });
let heldBusy = false;
let heldAsked = 0;

/** A stream worker started ahead (its code loaded, etw.wasm compiled), for the next big trace. */
let spareStreamWorker: Worker | undefined;

function streamWorker(): Worker {
  const worker = new Worker(new URL("stream-worker.js", location.href), { type: "module" });
  worker.postMessage({ warm: new URL("etw.wasm", location.href).href });
  return worker;
}

/** A big trace: streamed in a worker; counts and GC lanes from its batches, the table paged from the file. */
function openStreamed(file: File) {
  const t0 = performance.now();
  const worker = spareStreamWorker ?? streamWorker();
  spareStreamWorker = undefined;
  const s: Streamed = (streamed = { worker, fileSize: file.size, records: 0, asked: 0, rows: new Map<number, RowCells>(), filterAsked: 0 });
  worker.onmessage = (e) => {
    if (streamed !== s) return;
    const m = e.data as {
      progress?: number;
      summary?: StreamSummary;
      analysisProgress?: number;
      gcStats?: StreamGcStats;
      analyses?: StreamAnalyses;
      analysisError?: string;
      stacks?: { result: WeightedStacks; unit: string };
      stacksError?: string;
      stacksProgress?: number;
      page?: { id: number; from: number; rows: RowCells[] };
      error?: string;
      sqlTables?: [string, Uint8Array][];
      done?: boolean;
      stopped?: string;
      sqlProgress?: number;
      sqlError?: string;
      filtered?: { id: number; rows: Uint32Array };
      filterProgress?: { id: number; bytes: number };
      filterError?: { id: number; message: string };
    };
    if (m.filtered) {
      if (m.filtered.id === s.filterAsked) showStreamedRows(s, m.filtered.rows);
    } else if (m.filterProgress) {
      if (m.filterProgress.id === s.filterAsked)
        $("shown").textContent = `Filtering: ${Math.round((100 * m.filterProgress.bytes) / Math.max(1, file.size))}% of the file read again`;
    } else if (m.filterError) {
      if (m.filterError.id === s.filterAsked) $("shown").textContent = `The filter failed: ${m.filterError.message}`;
    } else if (m.sqlTables) s.sqlFeed?.tables(m.sqlTables, m.done === true, m.stopped);
    else if (m.sqlProgress !== undefined) s.sqlFeed?.progress(m.sqlProgress);
    else if (m.sqlError !== undefined) s.sqlFeed?.error(m.sqlError);
    else if (m.progress !== undefined) setStatus(`Streaming ${file.name}: ${Math.round((100 * m.progress) / Math.max(1, file.size))}%`);
    else if (m.analysisProgress !== undefined) {
      const share = `Computing… ${Math.round((100 * m.analysisProgress) / Math.max(1, file.size))}% of the file read again`;
      $("gc-rollup").textContent = share;
      $("cpu-note").textContent = share;
    } else if (m.gcStats) {
      renderGcStats(m.gcStats.gcStats, m.gcStats.gcCount);
      $("cpu-note").textContent = "Computing… the file is read: naming the samples' frames";
    } else if (m.analyses) void showStreamedAnalyses(m.analyses);
    else if (m.stacks)
      void import("./flame.js").then(({ showWeightedStacks }) =>
        showWeightedStacks(m.stacks!.result, m.stacks!.unit, { canvas: $("st-flame"), tip: $("st-tip"), note: $("st-note") }),
      );
    else if (m.stacksError !== undefined) $("st-note").textContent = m.stacksError;
    else if (m.stacksProgress !== undefined)
      $("st-note").textContent = `Reading the file again: ${Math.round((100 * m.stacksProgress) / Math.max(1, file.size))}%`;
    else if (m.analysisError !== undefined) {
      $("gc-rollup").textContent = `GC statistics could not be computed: ${m.analysisError}`;
      $("cpu-note").textContent = `CPU samples could not be computed: ${m.analysisError}`;
    } else if (m.error !== undefined) setStatus(`Cannot read ${file.name}: ${m.error}`);
    else if (m.summary) {
      const sum = m.summary;
      s.records = sum.records;
      setStatus(
        `${file.name}: ${fmt(sum.records)} records streamed in ${(performance.now() - t0).toFixed(0)} ms in ${fmt(sum.batches)} batches${sum.complete ? "" : " (incomplete)"}; the table is read from the file as it scrolls.`,
      );
      showIncomplete({ ...sum, errorName: sum.decodeError }, file.name);
      renderStreamed(sum);
    } else if (m.page && m.page.id === s.asked) {
      m.page.rows.forEach((cells, k) => s.rows.set(m.page!.from + k, cells));
      drawRows();
    }
  };
  // (?stream=BYTES sets the batch size: small batches show the paging on small files)
  const batchBytes = Number(new URLSearchParams(location.search).get("stream")) || undefined;
  // (the page reads the file and hands it over: the worker decodes while the next slices are read)
  const channel = new MessageChannel();
  sendFile(file, channel.port1);
  worker.postMessage({ open: file, port: channel.port2, batchBytes }, [channel.port2]);
  // (the next big trace gets a worker started while this one is looked at)
  setTimeout(() => (spareStreamWorker ??= streamWorker()), 5_000);
}

function renderStreamed(sum: StreamSummary) {
  $("main").hidden = false;
  summaryList(sum.info, sum.records, sum.spanMs, sum.complete, sum.warningTotal);
  fillTable(
    "providers",
    sum.providers.filter(([, n]) => n),
    "provider-count",
  );
  fillTable("names", sum.names, "name-count");
  const names = $<HTMLSelectElement>("f-name");
  names.replaceChildren(new Option("all", ""));
  for (const [n] of [...sum.names].sort((a, b) => (a[0] < b[0] ? -1 : 1))) names.add(new Option(n, n));
  const weights = $<HTMLSelectElement>("st-weight");
  weights.replaceChildren(new Option("events", ""), new Option("duration to its Stop (ms)", DURATION));
  fitNameColumn(sum.names.map(([n]) => n));
  paintGc(sum.gcs, sum.spanMs);
  // (the health check came with the summary; GC statistics and CPU samples come from a second pass)
  renderDoctor(sum.doctor);
  $("gc-stats").querySelector("tbody")!.replaceChildren();
  $("gc-more").textContent = "";
  $("gc-rollup").textContent = "Computing…";
  $("cpu-process").replaceChildren();
  $("flame").hidden = true;
  $("cpu-top").querySelector("tbody")!.replaceChildren();
  $("cpu-note").textContent = "Computing…";
  setFiltersEnabled(false);
  $("shown").textContent = `${fmt(sum.records)} shown`;
  $("grid-space").style.height = `${sum.records * ROW}px`;
  $("grid").scrollTop = 0;
  drawRows();
}

/**
 * Every filter applies to a held trace; a streamed one (`on` false) is filtered by event, where, PID
 * and TID, from a pass over the file, and shown in file order (the event and where filters also
 * choose the events of the flame graph of stacks).
 */
function setFiltersEnabled(on: boolean) {
  $("filters")
    .querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLButtonElement>("input, select, button")
    .forEach((el) => (el.disabled = !on));
  if (!on) for (const id of STREAMED_FILTERS) $<HTMLInputElement>(id).disabled = false;
  $("stream-note").hidden = on;
}

/** The filters a streamed trace takes. */
const STREAMED_FILTERS = ["f-name", "f-where", "f-pid", "f-tid"];

/** Rows of one event type share their name: name each type once. */
function nameTypes(t: Trace) {
  nameOfType = Array.from({ length: t.eventTypes.length }, (_, k) => t.names.ofType(k) ?? "");
}

function rowName(t: Trace, i: number): string {
  return nameOfType[t.events.eventType[i]] || t.names.ofRow(i);
}

function render(t: Trace) {
  $("main").hidden = false;
  nameTypes(t);
  const order = t.events.timeOrder();
  const span = t.events.length ? t.relativeMSec(t.events.timestamp[order[order.length - 1]]) : 0;
  summaryList(t.info, t.events.length, span, t.complete, t.warningTotal);
  renderCounts(t);
  renderFilters(t);
  drawGc(t, span);
  void showGcStats(t);
  void showCpuPanel(t);
  void loadFieldFormatter(t);
  void showDoctor(t);
  applyFilters();
}

/**
 * The event table's Fields column as TraceEvent prints every event kind (kernel, .NET, EventSource,
 * TraceLogging): the formatter is a chunk of its own, and the rows shown are drawn again once it is here.
 */
async function loadFieldFormatter(t: Trace) {
  const { PayloadContext, payloadPairs } = await import("etw-wasm/perfview");
  if (t !== trace) return;
  const ctx = new PayloadContext(t, t.processes, "current");
  useFieldFormatter((tr, i) => (tr === t ? payloadPairs(tr.events.row(i), ctx) : []));
  drawRows();
}

const cpuElements = () => ({
  select: $<HTMLSelectElement>("cpu-process"),
  canvas: $<HTMLCanvasElement>("flame"),
  tip: $("cpu-tip"),
  top: $("cpu-top").querySelector("tbody")!,
  note: $("cpu-note"),
});

/** The CPU panel (flame graph and top frames) for a held trace; its code is a chunk of its own. */
async function showCpuPanel(t: Trace) {
  $("cpu-note").textContent = "Computing…";
  const { showTraceCpu } = await import("./flame.js");
  if (t !== trace) return;
  showTraceCpu(t, cpuElements());
}

/** The CPU panel of a streamed trace, from the stream worker's second pass (its GC statistics came before). */
async function showStreamedAnalyses(a: StreamAnalyses) {
  const { showCpu } = await import("./flame.js");
  const names = new Map(a.cpuProcesses);
  showCpu(a.cpu, (pid) => names.get(pid) ?? `Process(${pid})`, cpuElements());
}

/**
 * PerfView's GCStats for a held trace: one row per complete GC with its columns, and a rollup line
 * per process. The analysis code is a chunk of its own, loaded here.
 */
async function showGcStats(t: Trace) {
  const body = $("gc-stats").querySelector("tbody")!;
  body.replaceChildren();
  $("gc-rollup").textContent = "Computing…";
  const { gcStats } = await import("etw-wasm/analysis");
  // (another file opened meanwhile disposes of `t`: its statistics are no longer wanted, nor its error)
  if (t !== trace) return;
  const stats = await gcStats(t).catch((error: unknown) => {
    if (t === trace) throw error;
  });
  if (t !== trace || !stats) return;
  renderGcStats(stats);
}

/** The most GC statistics rows shown. */
const GC_ROWS = 2000;

/** GCStats as a table (one row per complete GC, up to GC_ROWS) and a rollup line per process; `total`: the complete GCs, where `stats` holds only the first. */
function renderGcStats(stats: GcProcessValues[], total = 0) {
  const body = $("gc-stats").querySelector("tbody")!;
  body.replaceChildren();
  const n = (x: number, digits = 3) => x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const rows: HTMLTableRowElement[] = [];
  let complete = 0;
  for (const p of stats) {
    for (const g of p.GCs) {
      if (!g.IsComplete) continue;
      // (a row per GC up to a limit: a big trace's hundreds of thousands would stall the page)
      if (++complete > GC_ROWS) continue;
      const tr = document.createElement("tr");
      for (const cell of [
        String(p.PID),
        p.ProcessName,
        String(g.Number),
        n(g.PauseStartRelativeMSec),
        g.Reason,
        g.GCGenerationName,
        n(g.SuspendDurationMSec),
        n(g.PauseDurationMSec),
        n(g.PauseTimePercentageSinceLastGC, 1),
        n(g.AllocedSinceLastGCMB),
        n(g.HeapSizePeakMB),
        n(g.HeapSizeAfterMB),
        n(g.RatioPeakAfter, 2),
        n(g.PromotedMB),
      ]) {
        const td = document.createElement("td");
        td.textContent = cell;
        tr.append(td);
      }
      rows.push(tr);
    }
  }
  body.append(...rows);
  const all = Math.max(complete, total);
  $("gc-more").textContent = all > rows.length ? `The first ${fmt(rows.length)} of ${fmt(all)} GCs; \`etw-wasm gc\` lists them all.` : "";
  $("gc-rollup").textContent = stats.length
    ? stats
        .map(
          (p) =>
            `${p.ProcessName} (${p.PID}): ${fmt(p.Total.Count)} GCs, total pause ${n(p.Total.TotalPauseTimeMSec, 1)} ms, max ${n(p.Total.MaxPauseDurationMSec, 1)} ms, ` +
            `${n(p.GCPauseTimePercentage, 1)}% time paused, ${n(p.Total.TotalAllocatedMB, 1)} MB allocated, max heap ${n(p.Total.MaxSizePeakMB, 1)} MB`,
        )
        .join(" · ")
    : "No complete .NET GCs in this trace.";
}

/**
 * The trace health check (`etw-wasm doctor`): what the trace can and cannot answer, a line per finding
 * with the collection settings that fill a gap. The analysis chunk, loaded here.
 */
async function showDoctor(t: Trace) {
  const list = $("doctor");
  list.replaceChildren();
  const { traceDoctor } = await import("etw-wasm/analysis");
  // (another file opened meanwhile disposes of `t`, which ends its health check: not an error)
  if (t !== trace) return;
  const report = await traceDoctor(t).catch((error: unknown) => {
    if (t === trace) throw error;
  });
  if (t !== trace || !report) return;
  renderDoctor(report);
}

/** The health check's findings, a line each, with the fix where one is known. */
function renderDoctor(report: DoctorReport) {
  const list = $("doctor");
  const label = { ok: "OK", partial: "Partly", gap: "Gap" } as const;
  list.replaceChildren(
    ...report.findings.map((f) => {
      const li = document.createElement("li");
      li.dataset.status = f.status;
      li.dataset.id = f.id;
      const head = document.createElement("strong");
      head.textContent = `${label[f.status]}: ${f.question} `;
      li.append(head, f.answer);
      if (f.fix) {
        const fix = document.createElement("div");
        fix.className = "note";
        fix.textContent = `Fix: ${f.fix}`;
        li.append(fix);
      }
      return li;
    }),
  );
}

function summaryList(i: Trace["info"], records: number, span: number, complete: boolean, warningTotal: number) {
  const items: [string, string, string?][] = [
    ["Records", fmt(records), "event-count"],
    ["Logger", i.loggerName],
    ["Log file", i.logFileName],
    ["Start", i.startTime.toISOString()],
    ["Duration", `${fmt(Math.round(span))} ms`],
    ["OS", `${i.version} build ${i.osBuild}`],
    ["Processors", `${i.numberOfProcessors} @ ${i.cpuSpeedMHz} MHz`],
    ["Pointer size", String(i.pointerSize)],
    ["Clock", `${i.clockName}, ${i.perfFreq} Hz`],
    ["Buffers", `${fmt(i.bufferCount)} (${fmt(i.compressedBuffers)} compressed)`],
    ["Decoded", `${fmt(i.decodedBytes)} of ${fmt(i.fileSize)} bytes${complete ? "" : " (incomplete)"}`, "decoded-bytes"],
    ["Events lost", fmt(i.eventsLost)],
    ["Buffers lost", fmt(i.buffersLost)],
    ["Warnings", fmt(warningTotal)],
  ];
  const dl = $("summary-list");
  dl.replaceChildren();
  for (const [k, v, id] of items) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = v;
    if (id) dd.dataset.testid = id;
    dl.append(dt, dd);
  }
}

function fillTable(id: string, rows: [string, number][], testid: string) {
  const body = $<HTMLTableElement>(id).tBodies[0];
  body.replaceChildren();
  for (const [label, n] of rows) {
    const tr = body.insertRow();
    tr.dataset.testid = testid;
    tr.insertCell().textContent = label;
    tr.insertCell().textContent = fmt(n);
  }
}

function renderCounts(t: Trace) {
  const perProvider = new Uint32Array(t.providers.length);
  for (let i = 0; i < t.events.length; i++) perProvider[t.events.provider[i]]++;
  const providers = [...t.providers].map((p) => [p.group ? `${p.name}/${p.group}` : p.name, perProvider[p.index]] as [string, number]);
  fillTable(
    "providers",
    providers.filter(([, n]) => n).sort((a, b) => b[1] - a[1]),
    "provider-count",
  );
  fillTable("names", t.names.counts(), "name-count");
  fitNameColumn(t.names.counts().map(([n]) => n));
}

/** The event table's Event column as wide as the longest name (the table scrolls sideways): no name cut off. */
function fitNameColumn(names: string[]) {
  let longest = 20;
  for (const n of names) longest = Math.max(longest, n.length);
  document.documentElement.style.setProperty("--name-col", `${longest + 2}ch`);
}

function renderFilters(t: Trace) {
  const prov = $<HTMLSelectElement>("f-provider");
  prov.replaceChildren(new Option("all", ""));
  for (const p of t.providers) prov.add(new Option(p.group ? `${p.name}/${p.group}` : p.name, String(p.index)));
  const name = $<HTMLSelectElement>("f-name");
  name.replaceChildren(new Option("all", ""));
  for (const [n] of [...t.names.counts()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) name.add(new Option(n, n));
}

/** A number input's value (undefined when empty). */
function num(id: string): number | undefined {
  const v = $<HTMLInputElement>(id).value;
  return v === "" ? undefined : Number(v);
}

/**
 * A streamed trace's filters: its worker reads the file again for the rows they keep (the latest
 * filter wins), shown when they come; no filter: every row.
 */
function applyStreamedFilters(s: Streamed) {
  const ask = streamedFilter();
  const { event, where, pid, tid } = ask;
  const id = ++s.filterAsked;
  if (where) {
    try {
      parseWhere(where);
    } catch (error) {
      if (!(error instanceof WhereSyntaxError)) throw error;
      $("shown").textContent = `${fmt(streamedRowCount(s))} shown; where: ${error.message}`;
      return;
    }
  }
  if (!event && !where && pid === undefined && tid === undefined) {
    // (a filter's pass still reading is no longer wanted)
    s.worker.postMessage({ filterStop: true });
    return showStreamedRows(s, undefined);
  }
  $("shown").textContent = "Filtering: reading the file again…";
  s.worker.postMessage({ filter: { id, ...ask } });
}

/** What the filters a streamed trace takes (STREAMED_FILTERS) ask for. */
function streamedFilter(): EventFilter {
  return { event: $<HTMLSelectElement>("f-name").value, where: $<HTMLInputElement>("f-where").value.trim(), pid: num("f-pid"), tid: num("f-tid") };
}

/** The rows a streamed trace's table shows: those its filter kept, or all. */
function streamedRowCount(s: Streamed): number {
  return s.filtered?.length ?? s.records;
}

/** The rows of a streamed trace the table shows: `rows` (row numbers, file order), or all. */
function showStreamedRows(s: Streamed, rows: Uint32Array | undefined) {
  s.filtered = rows;
  // (pages asked for before are of other rows: dropped when they come)
  s.asked++;
  s.rows.clear();
  selected = -1;
  void showDetails();
  const n = streamedRowCount(s);
  $("shown").textContent = `${fmt(n)} shown`;
  $("grid-space").style.height = `${n * ROW}px`;
  $("grid").scrollTop = 0;
  drawRows();
}

function applyFilters() {
  if (streamed) return applyStreamedFilters(streamed);
  if (!trace) return;
  const provider = $<HTMLSelectElement>("f-provider").value;
  const result = trace.query({
    provider: provider === "" ? undefined : Number(provider),
    pid: num("f-pid"),
    tid: num("f-tid"),
    from: num("f-from"),
    to: num("f-to"),
    order: "time",
  }).indices;
  const name = $<HTMLSelectElement>("f-name").value;
  const t = trace;
  const named = name ? result.filter((i) => rowName(t, i) === name) : result;
  // payload conditions last, on the rows the other filters keep (a field is read per row)
  const where = $<HTMLInputElement>("f-where").value.trim();
  let whereError = "";
  try {
    shown = where ? filterWhere(t.events, named, where) : named;
  } catch (error) {
    if (!(error instanceof WhereSyntaxError)) throw error;
    whereError = error.message;
    shown = named;
  }
  selected = -1;
  void showDetails();
  weightChoices(t);
  $("shown").textContent = whereError ? `${fmt(shown.length)} shown; where: ${whereError}` : `${fmt(shown.length)} shown`;
  $("grid-space").style.height = `${shown.length * ROW}px`;
  $("grid").scrollTop = 0;
  drawRows();
}

/** Puts row `k` of the table, with its cells, in the grid. */
/** The row picked with the keyboard or a click (its position in the rows shown), or -1. */
let selected = -1;

function gridRow(k: number, cells: RowCells) {
  const div = document.createElement("div");
  div.className = k === selected ? "grid-row selected" : "grid-row";
  div.style.top = `${k * ROW}px`;
  div.dataset.row = String(k);
  for (const c of cells) {
    const span = document.createElement("span");
    span.textContent = c;
    span.title = c;
    div.append(span);
  }
  $("grid").append(div);
}

function drawRows() {
  const t = trace;
  const grid = $("grid");
  grid.querySelectorAll(".grid-row").forEach((el) => el.remove());
  if (streamed) return drawStreamedRows(streamed);
  if (!t) return;
  const first = Math.floor(grid.scrollTop / ROW);
  const last = Math.min(shown.length, first + Math.ceil(grid.clientHeight / ROW) + 2);
  for (let k = first; k < last; k++) gridRow(k, rowCells(t, shown[k], rowName(t, shown[k])));
}

/** The visible rows of a streamed trace: those paged in, the rest asked of the worker. */
function drawStreamedRows(s: NonNullable<typeof streamed>) {
  const grid = $("grid");
  const first = Math.floor(grid.scrollTop / ROW);
  const total = streamedRowCount(s);
  const last = Math.min(total, first + Math.ceil(grid.clientHeight / ROW) + 2);
  let missing = false;
  for (let k = first; k < last; k++) {
    const cells = s.rows.get(k);
    if (!cells) {
      missing = true;
      continue;
    }
    gridRow(k, cells);
  }
  if (missing) {
    // a page around what is visible; rows paged before are let go
    const from = Math.max(0, first - 50),
      to = Math.min(total, last + 50);
    s.asked++;
    if (s.rows.size > 2000) s.rows.clear();
    s.worker.postMessage({ page: { id: s.asked, from, to, rows: s.filtered ? Array.from(s.filtered.subarray(from, to)) : undefined } });
  }
}

/** GC/Start .. GC/Stop intervals of the .NET runtime, one lane per process, colored by generation. */
function drawGc(t: Trace, span: number) {
  const gcs = new GcEvents();
  gcs.add(t);
  paintGc(gcs.lanes(), span, (pid) => t.processes.processName(pid, t.events.timestamp[0] ?? 0n));
}

function paintGc(gcs: GcLanes, span: number, name: (pid: number) => string = (pid) => `Process(${pid})`) {
  const canvas = $<HTMLCanvasElement>("gc");
  const dpr = devicePixelRatio || 1;
  const w = (canvas.width = canvas.clientWidth * dpr || 800);
  const h = (canvas.height = 140 * dpr);
  const g = canvas.getContext("2d")!;
  g.clearRect(0, 0, w, h);
  const pids = [...new Set(gcs.pid)];
  const lane = new Map(pids.map((pid, k) => [pid, k]));
  // a time axis at the bottom; a lane per process above it, named at its left
  const axis = 18 * dpr;
  const height = (h - axis) / Math.max(1, pids.length);
  const colors = ["#4c9be8", "#f0a030", "#d9534f", "#7a5cc4"];
  // Each lane drawn by pixel column, the highest generation in a column wins: a hundred thousand GCs
  // paint as fast as a few (and a gen 2 GC is never hidden under gen 0s)
  const cols = Math.max(1, Math.ceil(w));
  const cover = new Int8Array(cols * pids.length).fill(-1);
  const scale = cols / Math.max(span, 1e-9);
  const minWidth = 2 * dpr;
  for (let k = 0; k < gcs.length; k++) {
    const x0 = Math.max(0, Math.min(cols - 1, Math.floor(gcs.from[k] * scale)));
    const x1 = Math.max(x0 + 1, Math.min(cols, Math.ceil(Math.max(gcs.to[k] * scale, gcs.from[k] * scale + minWidth))));
    const base = lane.get(gcs.pid[k])! * cols;
    const gen = Math.min(gcs.gen[k], 3);
    for (let x = x0; x < x1; x++) if (cover[base + x] < gen) cover[base + x] = gen;
  }
  for (let p = 0; p < pids.length; p++) {
    for (let x = 0; x < cols; ) {
      const gen = cover[p * cols + x];
      let end = x + 1;
      while (end < cols && cover[p * cols + end] === gen) end++;
      if (gen >= 0) {
        g.fillStyle = colors[gen];
        g.fillRect(x, p * height + 4, end - x, height - 8);
      }
      x = end;
    }
  }
  g.font = `${11 * dpr}px system-ui, sans-serif`;
  g.textBaseline = "top";
  pids.forEach((pid, k) => {
    const label = `${name(pid)} (${pid})`;
    g.fillStyle = "rgba(255,255,255,0.8)";
    g.fillRect(2 * dpr, k * height + 4, g.measureText(label).width + 6 * dpr, 14 * dpr);
    g.fillStyle = "#1d2330";
    g.fillText(label, 5 * dpr, k * height + 5);
  });
  g.fillStyle = "#5a6475";
  g.fillRect(0, h - axis, w, 1);
  const step = niceStep(span / 8);
  for (let ms = 0; ms <= span && step > 0; ms += step) {
    const x = (ms / Math.max(span, 1e-9)) * w;
    g.fillRect(x, h - axis, 1, 4 * dpr);
    g.fillText(`${fmt(Math.round(ms * 1000) / 1000)} ms`, Math.min(x + 2 * dpr, w - 60 * dpr), h - axis + 5 * dpr);
  }
  // a loop, not Math.max(...): a spread of a hundred thousand GCs overflows the stack
  let longest = 0;
  for (let k = 0; k < gcs.length; k++) longest = Math.max(longest, gcs.to[k] - gcs.from[k]);
  $("gc-note").textContent = gcs.length
    ? `${fmt(gcs.length)} GCs in ${pids.length} process(es); blue gen 0, orange gen 1, red gen 2. Longest pause ${longest.toFixed(3)} ms.`
    : "No .NET GC events in this trace.";
}

/** A round step (1, 2 or 5 times a power of ten) near `x`. */
function niceStep(x: number): number {
  if (!(x > 0)) return 0;
  const p = 10 ** Math.floor(Math.log10(x));
  return (x / p >= 5 ? 5 : x / p >= 2 ? 2 : 1) * p;
}

/** The rows shown (the whole trace, or the current filter) as an Arrow IPC or Parquet file, made here. */
async function download(format: "arrow" | "parquet") {
  const t = trace;
  if (!t) return;
  const rows = shown;
  setStatus(`Writing ${fmt(rows.length)} records as ${format === "arrow" ? "Arrow" : "Parquet"}…`);
  try {
    // (the Arrow and Parquet libraries load on first use only)
    const { toArrowIPC, toParquet } = await import("etw-wasm/export");
    const source = { trace: t, rows };
    const bytes = format === "arrow" ? toArrowIPC(source) : await toParquet(source, { parquetWasm: new URL("parquet_wasm_bg.wasm", location.href) });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([bytes as BlobPart]));
    a.download = `${fileName.replace(/\.etl$/i, "")}.events.${format}`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
    setStatus(`${a.download}: ${fmt(rows.length)} records, ${fmt(bytes.length)} bytes.`);
  } catch (error) {
    setStatus(`Cannot write ${format}: ${(error as Error).message}`);
  }
}

$("download-arrow").addEventListener("click", () => void download("arrow"));
$("st-show").addEventListener("click", () => void showStacksOfShown());
$("sql-run").addEventListener("click", () => void runSqlPanel());

/**
 * A streamed trace's tables in DuckDB: its worker reads the file again and sends each batch's tables
 * (a few ahead), appended one batch after another, with progress. Loaded once per trace.
 */
function streamedTables(s: Streamed, sql: typeof import("./sql.js"), status: HTMLElement): Promise<{ tables: string[]; stopped?: string }> {
  return (s.sql ??= sql.TableLoader.begin(s).then(
    (loader) =>
      new Promise<{ tables: string[]; stopped?: string }>((resolve, reject) => {
        let failed = false;
        const fail = (error: unknown) => {
          failed = true;
          s.sql = undefined;
          reject(error);
        };
        // (the worker sends a few batches ahead: each is put after the one before)
        let queue = Promise.resolve();
        s.sqlFeed = {
          tables: (parts, done, stopped) => {
            const put = (queue = queue.then(() => (failed ? undefined : loader.put(parts))));
            put.then(
              () => {
                // (taken: the worker goes on to its next batch)
                s.worker.postMessage({ sqlTaken: true });
                if (done && !failed) resolve({ tables: loader.done(), stopped });
              },
              (error: unknown) => {
                s.worker.postMessage({ sqlTaken: true });
                // (DuckDB-WASM's memory is one 32-bit WebAssembly memory: a trace of several GiB may not fit)
                fail(
                  new Error(
                    `DuckDB could not take the trace's tables (${(error as Error).message ?? String(error)}); \`etw-wasm convert\` writes them as Parquet for DuckDB at any size`,
                  ),
                );
              },
            );
          },
          progress: (n) => {
            if (streamed === s)
              status.textContent = `Loading the trace's tables into DuckDB: ${Math.round((100 * n) / Math.max(1, s.fileSize))}% of the file read`;
          },
          error: (message) => fail(new Error(message)),
        };
        s.worker.postMessage({ sql: true });
      }),
  ));
}

/** The SQL panel: DuckDB-WASM (a chunk of its own, with its worker and .wasm) over the trace's tables, held or streamed. */
async function runSqlPanel() {
  const t = trace,
    s = streamed;
  const status = $("sql-status");
  if (!t && !s) {
    status.textContent = "Open a trace first.";
    return;
  }
  status.textContent = "Loading DuckDB and the trace's tables…";
  try {
    const sql = await import("./sql.js");
    let tables: string[], stopped: string | undefined;
    if (s) {
      ({ tables, stopped } = await streamedTables(s, sql, status));
      if (s !== streamed) return;
    } else {
      tables = await sql.loadTrace(t!);
      if (t !== trace) return;
    }
    status.textContent = "Running…";
    const t0 = performance.now();
    const r = await sql.runSql($<HTMLTextAreaElement>("sql-text").value);
    const head = $("sql-result").querySelector("thead")!,
      body = $("sql-result").querySelector("tbody")!;
    head.replaceChildren(Object.assign(document.createElement("tr"), {}));
    for (const c of r.columns) head.rows[0].append(Object.assign(document.createElement("th"), { textContent: c.name, title: c.type }));
    body.replaceChildren(
      ...r.rows.map((row) => {
        const tr = document.createElement("tr");
        for (const v of row) tr.insertCell().textContent = v;
        return tr;
      }),
    );
    status.textContent =
      `${fmt(r.total)} rows${r.total > r.rows.length ? ` (the first ${fmt(r.rows.length)} shown)` : ""} in ${(performance.now() - t0).toFixed(0)} ms; tables: ${tables.length}` +
      (stopped ? `; incomplete trace: ${stopped}, the tables hold the rows before` : "");
    status.dataset.rows = String(r.total);
    drawSeries(r.series);
  } catch (error) {
    // (a trace opened meanwhile ends the tables of this one: not its error)
    if (t === trace && s === streamed) status.textContent = `SQL: ${(error as Error).message ?? String(error)}`;
  }
}

/** A result whose first column is a time and second a number, as a line over time. */
function drawSeries(series: { x: number[]; y: number[] } | undefined) {
  const canvas = $<HTMLCanvasElement>("sql-chart");
  canvas.hidden = !series || series.x.length < 2;
  if (canvas.hidden || !series) return;
  const width = (canvas.width = canvas.clientWidth || 900),
    height = canvas.height;
  const g = canvas.getContext("2d")!;
  const [x0, x1] = [Math.min(...series.x), Math.max(...series.x)];
  const y1 = Math.max(...series.y, 0) || 1;
  g.clearRect(0, 0, width, height);
  g.strokeStyle = "#3b6fd8";
  g.beginPath();
  series.x.forEach((x, k) => {
    const px = ((x - x0) / Math.max(1, x1 - x0)) * (width - 10) + 5,
      py = height - 5 - (series.y[k] / y1) * (height - 20);
    if (k === 0) g.moveTo(px, py);
    else g.lineTo(px, py);
  });
  g.stroke();
  g.fillStyle = "#5a6475";
  g.font = "11px system-ui, sans-serif";
  g.fillText(`max ${y1.toLocaleString("en-US")}`, 5, 12);
}

// the example queries, one button each
void import("./sql-examples.js").then(({ EXAMPLES }) => {
  $("sql-examples").replaceChildren(
    ...EXAMPLES.map(([label, text]) => {
      const b = Object.assign(document.createElement("button"), { type: "button", textContent: label });
      b.addEventListener("click", () => {
        $<HTMLTextAreaElement>("sql-text").value = text;
        void runSqlPanel();
      });
      return b;
    }),
  );
});
$("download-parquet").addEventListener("click", () => void download("parquet"));
// (a big trace streams at once: its worker is started, and etw.wasm compiled in it, before one is chosen)
spareStreamWorker = streamWorker();
$<HTMLInputElement>("file").addEventListener("change", (e) => {
  const f = (e.target as HTMLInputElement).files?.[0];
  if (f) void open(f);
});
$("filters").addEventListener("change", applyFilters);
// (Enter in the where field applies it; the form is never submitted)
$("filters").addEventListener("submit", (e) => e.preventDefault());
$("grid").addEventListener("scroll", () => requestAnimationFrame(drawRows));
// keyboard: arrows, Page Up/Down, Home/End move the picked row (and scroll to it); a click picks one
$("grid").addEventListener("keydown", (e) => {
  const total = streamed ? streamedRowCount(streamed) : shown.length;
  if (!total) return;
  const grid = $("grid");
  const page = Math.max(1, Math.floor(grid.clientHeight / ROW) - 1);
  const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page, Home: -total, End: total };
  if (!(e.key in moves)) return;
  e.preventDefault();
  // (nothing picked yet: the first Arrow Down picks the first row)
  selected = Math.max(0, Math.min(total - 1, selected + moves[e.key]));
  if (selected * ROW < grid.scrollTop) grid.scrollTop = selected * ROW;
  else if ((selected + 1) * ROW > grid.scrollTop + grid.clientHeight) grid.scrollTop = (selected + 1) * ROW - grid.clientHeight;
  drawRows();
  void showDetails();
});
$("grid").addEventListener("click", (e) => {
  const row = (e.target as HTMLElement).closest<HTMLElement>(".grid-row");
  if (!row?.dataset.row) return;
  selected = Number(row.dataset.row);
  drawRows();
  void showDetails();
});

/** The weight choice "each Start weighs the time to its Stop". */
const DURATION = "@duration";

/** The weights the shown events' stacks can be weighed by: each event 1, or a numeric field of the first shown. */
function weightChoices(t: Trace) {
  const select = $<HTMLSelectElement>("st-weight");
  const was = select.value;
  select.replaceChildren(new Option("events", ""));
  // (Start events: each can weigh the time to its Stop on its thread)
  if (shown.length && t.events.row(shown[0]).opcode === 1) select.add(new Option("duration to its Stop (ms)", DURATION));
  const d = shown.length ? t.events.row(shown[0]).decode() : null;
  if (d)
    d.names.forEach((n, k) => {
      if (typeof d.values[k] === "number" || typeof d.values[k] === "bigint") select.add(new Option(n, n));
    });
  if (Array.from(select.options).some((o) => o.value === was)) select.value = was;
}

/** A flame graph of the shown events' stacks, weighted as chosen (an allocation call tree with AllocationTick and AllocationAmount). */
async function showStacksOfShown() {
  const t = trace;
  const typed = $<HTMLInputElement>("st-field").value.trim();
  if (streamed) {
    // a streamed trace: its worker reads the file again for the events the filters choose (event, where, PID, TID)
    $("st-note").textContent = "Reading the file again…";
    streamed.worker.postMessage({
      stacks: {
        ...streamedFilter(),
        field: typed || ($<HTMLSelectElement>("st-weight").value === DURATION ? undefined : $<HTMLSelectElement>("st-weight").value || undefined),
        duration: !typed && $<HTMLSelectElement>("st-weight").value === DURATION,
        invert: $<HTMLInputElement>("st-invert").checked,
      },
    });
    return;
  }
  if (!t) return;
  $("st-note").textContent = "Computing…";
  const [{ weightedStacks }, { showWeightedStacks }] = await Promise.all([import("etw-wasm/analysis"), import("./flame.js")]);
  if (t !== trace) return;
  const field = typed || $<HTMLSelectElement>("st-weight").value;
  const duration = !typed && field === DURATION;
  const w = weightedStacks(t, shown, {
    weight:
      field && !duration
        ? (row) => {
            const v = row.get(field);
            return typeof v === "number" || typeof v === "bigint" ? Number(v) : NaN;
          }
        : undefined,
    duration: duration ? {} : undefined,
    invert: $<HTMLInputElement>("st-invert").checked,
  });
  showWeightedStacks(w, duration ? "ms" : field || "events", { canvas: $("st-flame"), tip: $("st-tip"), note: $("st-note") });
}

/**
 * The picked event below the table: its name and time, every field as TraceEvent prints it, and its
 * stack with frames named (a held trace: stacks attached when the first event is shown; a streamed
 * one: the fields the table has).
 */
async function showDetails() {
  const box = $("details");
  const k = selected;
  if (k < 0) {
    box.hidden = true;
    return;
  }
  const fields = $("details-fields").querySelector("tbody")!;
  const stack = $("details-stack");
  const put = (title: string, pairs: [string, string][], frames: string[] | null) => {
    $("details-title").textContent = title;
    fields.replaceChildren(
      ...pairs.map(([n, v]) => {
        const tr = document.createElement("tr");
        tr.insertCell().textContent = n;
        tr.insertCell().textContent = v;
        return tr;
      }),
    );
    stack.replaceChildren(...(frames ?? []).map((f) => Object.assign(document.createElement("li"), { textContent: f })));
    if (!frames?.length) stack.replaceChildren(Object.assign(document.createElement("li"), { textContent: frames ? "(empty)" : "No stack for this event." }));
    box.hidden = false;
  };
  if (streamed) {
    const cells = streamed.rows.get(k);
    if (cells)
      put(
        `${cells[1]} at ${cells[0]} ms, pid ${cells[2]}, tid ${cells[3]}`,
        cells[6] ? cells[6].split("; ").map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)] as [string, string]) : [],
        null,
      );
    return;
  }
  const t = trace;
  if (!t || k >= shown.length) return;
  const i = shown[k];
  const row = t.events.row(i);
  const title = `${rowName(t, i)} at ${row.relativeMSec.toFixed(3)} ms, pid ${row.pid ?? ""}, tid ${row.tid ?? ""}`;
  put(title, rowFields(t, i), null);
  if (!t.events.callStacks) {
    const { attachStacks } = await import("etw-wasm/analysis");
    if (t !== trace) return;
    attachStacks(t);
  }
  if (t !== trace || selected !== k) return;
  put(title, rowFields(t, i), t.events.row(i).callStack);
}
document.addEventListener("dragover", (e) => {
  e.preventDefault();
  document.body.classList.add("dragging");
});
document.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
document.addEventListener("drop", (e) => {
  e.preventDefault();
  document.body.classList.remove("dragging");
  const f = e.dataTransfer?.files[0];
  if (f) void open(f);
});
