// Benchmarks: the WebAssembly engine against the pure TypeScript engine (and optionally any other
// parser) on generated traces and on the corpus, measured side by side in one run.
//
//   npm run bench                      full: generated 64 MiB and 1 GiB (compressed and not), corpus;
//                                      streamed: generated 1, 4 and 10 GiB, and 1 GiB compressed
//   npm run bench -- --quick           under a minute: generated 64 MiB only, short time budgets
//   npm run bench -- --against p.mjs   also time another parser (see bench/README.md for the adapter)
//   npm run bench -- --convert         only etw-wasm convert (1 GiB to Arrow and Parquet, 10 GiB to Parquet)
//   npm run bench -- --analysis        only the .NET analyses (GC and JIT stats, symbols, stacks, CPU profile)
//                                      on a generated 1 GiB trace with CPU samples and stacks (--quick: 64 MiB)
//   npm run bench -- --guard           only the quick guard's figures, written into bench/results.json
//   npm run bench -- --viewer          only the viewer in Chromium (generated 64 MiB held, 1 GiB streamed; the answers on 1 GiB with samples)
//   npm run bench -- --cli             only the command line's answers (gc, jit, methods, cpu, stacks) on a
//                                      generated 1 GiB .etl with samples and a 1 GiB .nettrace (--quick: 64 MiB)
//   npm run bench -- --nettrace        only EventPipe files: generated .nettrace of 64 MiB and 1 GiB opened whole
//                                      and streamed, 3 GiB whole and 4 GiB streamed (WebAssembly only; --quick:
//                                      64 MiB), and the corpus .nettrace files
//
// Writes bench/results.json and bench/results.md.

import { closeSync, existsSync, fstatSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { cpus, tmpdir, totalmem } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { join, resolve } from "node:path";
import { Bench } from "tinybench";
import { openTrace, openTraceFile, streamTraceFile, type Trace } from "../bindings/node.js";
import { instantiateCore } from "../bindings/decode/windows/loader.js";
import { STORED_EVENT_LAYOUT } from "../bindings/decode/result/trace-data.js";
import { nettraceRowBytes } from "../bindings/decode/eventpipe/rows.js";
import { generated, generatedNettrace, warmPageCache } from "./inputs.js";
import { guardFigures, type GuardFigures } from "./guard.js";
import { answersMarkdown, viewerAnswers, viewerMarkdown, viewerRows } from "./viewer.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CORPUS = resolve(ROOT, "..", "shared", "corpus", "etl");
const MiB = 1024 * 1024;

interface Adapter {
  name: string;
  /** Parses a whole trace; returns the number of records (or events) it found. */
  parse(bytes: Uint8Array): Promise<{ events: number }> | { events: number };
}

interface Row {
  input: string;
  bytes: number;
  events: number;
  engines: Record<string, { ms: number; mbPerS: number; eventsPerS: number; rssMB?: number; firstMs?: number; minflt?: number } | { error: string }>;
  ratio?: number;
  tableBytesPerEvent?: number;
  allTablesBytesPerEvent?: number;
}

function args() {
  const a = process.argv.slice(2);
  const against = a.indexOf("--against");
  return {
    quick: a.includes("--quick"),
    convert: a.includes("--convert"),
    analysis: a.includes("--analysis"),
    nettrace: a.includes("--nettrace"),
    cli: a.includes("--cli"),
    guard: a.includes("--guard"),
    viewer: a.includes("--viewer"),
    against: against >= 0 ? a[against + 1] : undefined,
    measureRss: a[0] === "--measure-rss" ? { engine: a[1] as "wasm" | "js", file: a[2] } : undefined,
    measureStream: a[0] === "--measure-stream" ? { engine: a[1] as "wasm" | "js", file: a[2], workers: Number(a[3] ?? 0) } : undefined,
    measureWholeFile: a[0] === "--measure-whole-file" ? a[1] : undefined,
  };
}

const NETTRACE_CORPUS = resolve(ROOT, "..", "shared", "corpus", "nettrace");

/** The EventPipe section: generated files opened whole and streamed on both engines, then the corpus files. */
async function nettraceSection(quick: boolean): Promise<string[]> {
  const rows: Row[] = [];
  const streams: StreamRow[] = [];
  // (past 1 GiB on the WebAssembly engine alone, where the reference engine would take minutes a run;
  // whole up to 3 GiB, as a file held whole must be under 4 GiB, its offsets 32-bit; streamed 4 GiB)
  const sizes: [number, boolean, boolean][] = quick
    ? [[64, true, true]]
    : [
        [64, true, true],
        [1024, true, true],
        [3072, true, false],
        [4096, false, true],
      ];
  for (const [size, whole, streamed] of sizes) {
    const path = generatedNettrace(size);
    process.stderr.write(`generated ${size} MiB .nettrace ...\n`);
    const wasmOnly = size > 1024;
    if (whole) rows.push(await benchInput(`generated ${size} MiB .nettrace`, path, quick, undefined, true, wasmOnly));
    if (streamed) streams.push(benchStream(`generated ${size} MiB .nettrace`, path, true, wasmOnly));
  }
  // the runtime's block layout: each capture thread's events in blocks of their own, merged by the reader
  for (const size of quick ? [64] : [64, 1024]) {
    const path = generatedNettrace(size, 5, true);
    rows.push(await benchInput(`generated ${size} MiB .nettrace, thread blocks`, path, quick, undefined, true, size > 64));
    streams.push(benchStream(`generated ${size} MiB .nettrace, thread blocks`, path, true, size > 64));
  }
  if (!quick) {
    rows.push(await benchInput("generated 64 MiB .nettrace V6", generatedNettrace(64, 6), quick, undefined, false));
    if (existsSync(NETTRACE_CORPUS)) {
      for (const f of readdirSync(NETTRACE_CORPUS)
        .filter((x) => /\.(nettrace|netperf)$/.test(x))
        .sort())
        rows.push(await benchInput(f, join(NETTRACE_CORPUS, f), quick));
    }
  }
  const md = markdown(rows, undefined, machine(quick)).trimEnd().split("\n");
  const streamed = streamMarkdown(streams, undefined)
    .map((l) =>
      l.startsWith("Streamed from")
        ? "Streamed from the file (streamTraceFile: a batch per sequence point, every 10 MiB of events in the generated files; every batch's rows and typed .NET rows counted), one run per engine in a fresh process"
        : l,
    )
    .map((l) =>
      l.startsWith("with workers")
        ? "with workers, the wasm engine in worker threads (the file cut after sequence points into pieces of 32 MiB or more, each read by its worker, which resumes at its cut; the windows' memory transferred back and adopted on the main thread):"
        : l,
    );
  return [
    "## EventPipe files (.nettrace)",
    "",
    "Generated with `etw-wasm generate OUT.nettrace --size N --samples` (V5: the runtime's events with empty metadata, sample profiler samples with stacks, an EventSource with fields; \"thread blocks\": with `--thread-blocks`, each capture thread's events in event blocks of their own, as the runtime writes them, so the reader merges 8 threads by time, where the other files are in time order already). Opened whole (openTrace of the file's bytes, both engines; the record walk with each event's lookups, the dispatch order, the event table's rows and the typed tables run in the engine asked for, the container reader is TypeScript on both; the worker columns are the same one-thread decode):",
    "",
    ...md,
    ...streamed,
    "",
  ];
}

function machine(quick: boolean): Record<string, string> {
  return {
    cpu: cpus()[0]?.model ?? "unknown CPU",
    cores: String(cpus().length),
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    node: process.version,
    date: new Date().toISOString().slice(0, 10),
    quick: String(quick),
  };
}

interface AnalysisRow {
  step: string;
  ms: number;
  /** Against decoding the trace whole. */
  ofDecode: number;
  recordsPerS: number;
  note: string;
}

/** Rounds of the analysis benchmark: each step's median is reported (single runs vary by a third on a shared machine). */
const ANALYSIS_ROUNDS = 3;

/** The analyses on a trace held whole: each round decodes a fresh trace and times every step once after it. */
async function analysisRows(sizeMiB: number): Promise<{ input: string; bytes: number; records: number; rows: AnalysisRow[]; streamed: AnalysisRow[] }> {
  const { gcStats, jitStats, SymbolMap, StackAttacher, cpuProfile, speedscopeFile } = await import("../bindings/analysis/index.js");
  type Profile = ReturnType<typeof cpuProfile>;
  const path = generated(sizeMiB, false, true);
  const bytes = new Uint8Array(readFileSync(path));
  const times = new Map<string, number[]>();
  const notes = new Map<string, string>();
  let records = 0;
  for (let round = 0; round < ANALYSIS_ROUNDS; round++) {
    let t0 = performance.now();
    const t = whole(await openTrace(bytes), path);
    const decode = "decode (openTrace, whole)";
    times.set(decode, [...(times.get(decode) ?? []), performance.now() - t0]);
    records = t.events.length;
    notes.set(decode, `${records} records`);
    const step = async <T>(name: string, fn: () => T | Promise<T>, note: (r: T) => string): Promise<T> => {
      process.stderr.write(`round ${round + 1}: ${name} ...\n`);
      t0 = performance.now();
      const r = await fn();
      times.set(name, [...(times.get(name) ?? []), performance.now() - t0]);
      notes.set(name, note(r));
      return r;
    };
    // the time order every analysis reads its events in: made once per trace, on first use
    await step(
      "time order (once per trace, shared)",
      () => t.events.timeOrder(),
      () => "",
    );
    await step(
      "GC statistics (gcStats)",
      () => gcStats(t),
      (r) => `${r.reduce((n, p) => n + p.GCs.length, 0)} GCs`,
    );
    await step(
      "JIT statistics (jitStats)",
      () => jitStats(t),
      (r) => `${r.reduce((n, p) => n + p.Methods.length, 0)} methods`,
    );
    const symbols = await step(
      "symbol map (SymbolMap.fromTrace)",
      () => SymbolMap.fromTrace(t),
      () => "",
    );
    const attacher = await step(
      "stack attachment (StackAttacher: samples and StackWalk events)",
      () => {
        const a = new StackAttacher(t.events.defaultPointerSize === 4 ? 4 : 8);
        a.addRows(t.events, t.query({ provider: ["ce1dbfb4-137e-4da6-87b0-3f59aa102cbc", "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3"], order: "time" }).indices);
        a.finish();
        return a;
      },
      (a) => `${a.attached} stacks attached, ${a.table.size} stack nodes`,
    );
    const profile: Profile = await step(
      "CPU aggregation (cpuProfile of the attached stacks: frames named, per process and thread)",
      () => cpuProfile(t, { stacks: { attacher, symbols } }),
      (r) => `${r.samples.length} samples, ${r.stacks.parent.length} frame-name nodes`,
    );
    await step(
      "speedscope file (speedscopeFile)",
      () => speedscopeFile(profile, "bench"),
      (r) => `${Math.round(r.reduce((n, c) => n + c.length, 0) / MiB)} MiB`,
    );
    t.dispose();
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
  const decodeMs = median([...times.values()][0]);
  const rows: AnalysisRow[] = [...times].map(([name, ms]) => ({
    step: name,
    ms: median(ms),
    ofDecode: median(ms) / decodeMs,
    recordsPerS: records / (median(ms) / 1000),
    note: notes.get(name) ?? "",
  }));
  const endToEnd = rows.filter((r) => /^(symbol map|stack attachment|CPU aggregation)/.test(r.step)).reduce((n, r) => n + r.ms, 0);
  rows.push({
    step: "CPU profile end to end (symbol map + attachment + aggregation, the sum)",
    ms: endToEnd,
    ofDecode: endToEnd / decodeMs,
    recordsPerS: records / (endToEnd / 1000),
    note: "",
  });
  return {
    input: `generated ${sizeMiB >= 1024 ? `${sizeMiB / 1024} GiB` : `${sizeMiB} MiB`} with CPU samples and stacks`,
    bytes: bytes.length,
    records,
    rows,
    streamed: await streamedAnalysisRows(path),
  };
}

/** The analyses of a stream, each in a pass of its own over the file (one run each), beside a pass that only counts the batches. */
async function streamedAnalysisRows(path: string): Promise<AnalysisRow[]> {
  const { gcStats, jitStats, streamCpuProfile, streamWeightedStacks } = await import("../bindings/analysis/index.js");
  const runs: [string, (stream: Awaited<ReturnType<typeof streamTraceFile>>) => Promise<string>][] = [
    [
      "streamed decode (streamTraceFile, every batch's rows counted)",
      async (stream) => {
        let n = 0;
        for await (const b of stream) n += b.events.length;
        return `${n} records`;
      },
    ],
    [
      "GC statistics of the stream (gcStats, processes from the same pass)",
      async (stream) => `${(await gcStats(stream)).reduce((n, p) => n + p.GCs.length, 0)} GCs`,
    ],
    ["JIT statistics of the stream (jitStats)", async (stream) => `${(await jitStats(stream)).reduce((n, p) => n + p.Methods.length, 0)} methods`],
    ["CPU profile of the stream (streamCpuProfile)", async (stream) => `${(await streamCpuProfile(stream)).samples.length} samples`],
    [
      "AllocationTick stacks by AllocationAmount (streamWeightedStacks)",
      async (stream) => {
        const w = await streamWeightedStacks(stream, {
          select: (t) => t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 10 }).indices,
          weight: (row) => Number(row.get("AllocationAmount")),
        });
        return `${w.events} events, ${w.withStacks} with stacks`;
      },
    ],
  ];
  const rows: AnalysisRow[] = [];
  for (const [step, fn] of runs) {
    process.stderr.write(`streamed: ${step} ...\n`);
    const t0 = performance.now();
    const note = await fn(await streamTraceFile(path));
    const ms = performance.now() - t0;
    rows.push({ step, ms, ofDecode: rows.length ? ms / rows[0].ms : 1, recordsPerS: 0, note });
  }
  return rows;
}

function analysisMarkdown(a: Awaited<ReturnType<typeof analysisRows>>): string[] {
  const lines = [
    "",
    `.NET analyses on ${a.input} (${(a.bytes / MiB).toFixed(0)} MiB, ${a.records} records), the trace held whole; medians of ${ANALYSIS_ROUNDS} rounds (each a fresh decode, then every step once):`,
    "",
    "| step | ms | × decode | records/s | |",
    "|---|---|---|---|---|",
  ];
  for (const r of a.rows) lines.push(`| ${r.step} | ${r.ms.toFixed(0)} | ${r.ofDecode.toFixed(2)} | ${(r.recordsPerS / 1e6).toFixed(1)} M | ${r.note} |`);
  lines.push(
    "",
    "The same file streamed (streamTraceFile, batches of 8 MiB, the default), each analysis in a pass of its own, one run each; × the streamed decode:",
    "",
    "| step | ms | × streamed decode | |",
    "|---|---|---|---|",
  );
  for (const r of a.streamed) lines.push(`| ${r.step} | ${r.ms.toFixed(0)} | ${r.ofDecode.toFixed(2)} | ${r.note} |`);
  return lines;
}

/**
 * Runs this script in a fresh Node process. Through a shell that forks it: a process forked from this
 * one starts with this one's resident pages, and Linux keeps a process's peak RSS across exec.
 */
function runFresh(...args: string[]): { stdout: string; stderr: string } {
  return spawnSync("/bin/sh", ["-c", '"$@"; exit $?', "sh", process.execPath, "--expose-gc", fileURLToPath(import.meta.url), ...args], { encoding: "utf8" });
}

/** Minor page faults of this process so far (fresh pages first written, mostly). */
export function minorFaults(): number {
  try {
    return Number(readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ")[7]);
  } catch {
    return NaN;
  }
}

/** A fresh process that decodes `file` once with `engine`: its peak RSS, the decode's time and page faults. */
function firstDecode(engine: string, file: string): { rssMB: number; ms: number; minflt: number } | undefined {
  const r = runFresh("--measure-rss", engine, file);
  const m = /rss=(\d+) ms=([\d.]+) minflt=(\d+)/.exec(r.stdout);
  return m ? { rssMB: Number(m[1]) / 1024, ms: Number(m[2]), minflt: Number(m[3]) } : undefined;
}

function tableBytes(t: Trace): { events: number; all: number } {
  // the event table as stored (the fields the event type decides are made from it when first read;
  // an EventPipe file's keywords, level and the columns of one value from its metadata when first read)
  const perRow =
    t.eventPipeVersion !== undefined ? nettraceRowBytes() : Object.values(STORED_EVENT_LAYOUT).reduce((n, [Type]) => n + Type.BYTES_PER_ELEMENT, 0);
  let clr = 0;
  for (const table of t.tables) {
    clr += table.rows.byteLength + table.truncated.byteLength;
    for (const col of Object.values(table.columns)) {
      clr += "offset" in col ? col.offset.byteLength + col.length.byteLength : col.byteLength;
    }
  }
  const ext = t.extendedItems.length * 12;
  return { events: perRow, all: perRow + (clr + ext) / Math.max(1, t.events.length) };
}

/**
 * A decode that stopped early (out of memory, input cut short, a failure part way) did less work than
 * the trace asks: timing it would flatter the engine, so it is refused.
 */
function whole(t: Trace, what: string): Trace {
  if (!t.complete) {
    const { reason, offset, message } = t.incomplete!;
    t.dispose();
    throw new Error(`${what}: decoding stopped early at byte offset ${offset} (${reason}): ${message}; a partial decode is not timed`);
  }
  return t;
}

/** Decodes `bytes` with `engine`, refusing a partial decode, and drops the trace. */
async function decodeWhole(bytes: Uint8Array, engine: "wasm" | "js", what: string, workers = 0): Promise<void> {
  whole(await openTrace(bytes, { engine, workers }), `${what} (${engine}${workers ? `, ${workers} workers` : ""})`).dispose();
}

async function timeTask(name: string, fn: () => Promise<unknown>, quick: boolean, big: boolean): Promise<number> {
  const bench = new Bench({
    time: quick ? 400 : big ? 3000 : 1500,
    iterations: big ? 3 : 5,
    warmupIterations: 1,
    warmupTime: 0,
    throws: true,
    teardown: () => (globalThis as { gc?: () => void }).gc?.(),
  });
  bench.add(name, fn);
  await bench.run();
  const r = bench.tasks[0].result as { latency?: { p50: number } };
  if (!r.latency) throw new Error(`${name}: no result`);
  return r.latency.p50;
}

/**
 * A file's bytes, as a Buffer of their own (not copied again: `new Uint8Array(buffer)` would). Past 2 GiB
 * readFileSync refuses, so they are read in pieces; a trace holds up to 4 GiB of record bytes.
 */
function readInput(path: string): Uint8Array {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const bytes = Buffer.allocUnsafeSlow(size);
    for (let at = 0; at < size; ) {
      const n = readSync(fd, bytes, at, Math.min(1 << 30, size - at), at);
      if (n <= 0) throw new Error(`${path}: ended at ${at} of ${size} bytes`);
      at += n;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}

async function benchInput(input: string, path: string, quick: boolean, adapter?: Adapter, rss = false, wasmOnly = false): Promise<Row> {
  const bytes = readInput(path);
  const big = bytes.length > 256 * MiB;
  const first = whole(await openTrace(bytes), input);
  const events = first.events.length;
  const tb = tableBytes(first);
  first.dispose();
  const row: Row = { input, bytes: bytes.length, events, engines: {}, tableBytesPerEvent: tb.events, allTablesBytesPerEvent: tb.all };
  const engines: [string, () => Promise<unknown>][] = [["wasm", () => decodeWhole(bytes, "wasm", input)]];
  // (`wasmOnly`: a size where the reference engine would take minutes a run)
  if (!wasmOnly) engines.push(["js", () => decodeWhole(bytes, "js", input)]);
  // (workers on the big traces: below that, segments are few)
  if (big && !wasmOnly) {
    engines.push(["wasm, 1 worker", () => decodeWhole(bytes, "wasm", input, 1)], ["wasm, 2 workers", () => decodeWhole(bytes, "wasm", input, 2)]);
  }
  if (adapter) engines.push([adapter.name, async () => adapter.parse(bytes)]);
  for (const [name, fn] of engines) {
    try {
      const ms = await timeTask(`${input} ${name}`, fn, quick, big);
      const entry: { ms: number; mbPerS: number; eventsPerS: number; rssMB?: number; firstMs?: number; minflt?: number } = {
        ms,
        mbPerS: bytes.length / 1e6 / (ms / 1000),
        eventsPerS: events / (ms / 1000),
      };
      const first = rss && (name === "wasm" || name === "js") ? firstDecode(name, path) : undefined;
      if (first) Object.assign(entry, { rssMB: first.rssMB, firstMs: first.ms, minflt: first.minflt });
      row.engines[name] = entry;
    } catch (error) {
      row.engines[name] = { error: String((error as Error).message ?? error) };
    }
  }
  const w = row.engines.wasm,
    j = row.engines.js;
  if (w && j && "ms" in w && "ms" in j) row.ratio = j.ms / w.ms;
  return row;
}

interface StreamRow {
  input: string;
  bytes: number;
  events: number;
  /** `nextMs`: the second stream in the same process (wasm engine only). */
  engines: Record<
    string,
    { ms: number; mbPerS: number; eventsPerS: number; rssMB: number; batches: number; minflt: number; nextMs?: number } | { error: string }
  >;
  ratio?: number;
  /** The wasm engine with 1 and 2 worker threads: time of 1 / time of 2 (first streams; next streams). */
  workerSpeedup?: number;
  workerSpeedupNext?: number;
}

/**
 * Streams `file` once with `engine` (in this process): every batch's rows and typed .NET rows are
 * counted. Refuses a partial decode.
 */
async function streamOnce(engine: "wasm" | "js", file: string, workers = 0): Promise<{ ms: number; events: number; clrRows: number; batches: number }> {
  const t0 = performance.now();
  const stream = await streamTraceFile(file, { engine, workers });
  let events = 0,
    clrRows = 0,
    batches = 0;
  for await (const b of stream) {
    events += b.events.length;
    for (const t of b.tables) clrRows += t.length;
    batches++;
  }
  const ms = performance.now() - t0;
  const end = stream.end!;
  if (!end.complete)
    throw new Error(`${file}: decoding stopped early at byte offset ${end.incomplete!.offset}: ${end.incomplete!.message}; a partial decode is not timed`);
  return { ms, events, clrRows, batches };
}

/** streamOnce in a fresh process, for its peak RSS (one run per engine: a run of 10 GiB takes seconds). */
function streamInChild(
  engine: string,
  file: string,
  workers = 0,
): { ms: number; events: number; rssMB: number; batches: number; minflt: number; nextMs: number } {
  const r = runFresh("--measure-stream", engine, file, String(workers));
  const m = /ms=([\d.]+) events=(\d+) batches=(\d+) rss=(\d+) minflt=(\d+) next=([\d.]+)/.exec(r.stdout);
  if (!m) throw new Error(`${engine} ${file}: ${r.stderr.trim().split("\n").pop() ?? "no result"}`);
  return { ms: Number(m[1]), events: Number(m[2]), batches: Number(m[3]), rssMB: Number(m[4]) / 1024, minflt: Number(m[5]), nextMs: Number(m[6]) };
}

interface WholeFileRow {
  input: string;
  bytes: number;
  events: number;
  /** The first decode in a fresh process, then the next one in it (the memory of the first reused). */
  firstMs: number;
  nextMs: number;
  minfltFirst: number;
  minfltNext: number;
  rssMB: number;
}

/**
 * A trace too big to hold as bytes (past 4 GiB of record bytes) opened whole from its file with
 * payloads "source" (the columns and typed tables held, records read back when asked), in a fresh
 * process: two decodes, the first into fresh memory, the second into the first's.
 */
function benchWholeFile(input: string, path: string): WholeFileRow {
  warmPageCache(path);
  const r = runFresh("--measure-whole-file", path);
  const m = /events=(\d+) first=([\d.]+) next=([\d.]+) minflt1=(\d+) minflt2=(\d+) rss=(\d+)/.exec(r.stdout);
  if (!m) throw new Error(`${path}: ${r.stderr.trim().split("\n").pop() ?? "no result"}`);
  return {
    input,
    bytes: statSync(path).size,
    events: Number(m[1]),
    firstMs: Number(m[2]),
    nextMs: Number(m[3]),
    minfltFirst: Number(m[4]),
    minfltNext: Number(m[5]),
    rssMB: Number(m[6]) / 1024,
  };
}

async function measureWholeFile(path: string): Promise<void> {
  const times: number[] = [],
    faults: number[] = [];
  let events = 0;
  for (let i = 0; i < 2; i++) {
    const f0 = minorFaults();
    const t0 = performance.now();
    const t = whole(await openTraceFile(path, { payloads: "source" }), path);
    times.push(performance.now() - t0);
    faults.push(minorFaults() - f0);
    events = t.events.length;
    t.dispose();
    (globalThis as { gc?: () => void }).gc?.();
  }
  console.log(
    `events=${events} first=${times[0].toFixed(1)} next=${times[1].toFixed(1)} minflt1=${faults[0]} minflt2=${faults[1]} rss=${process.resourceUsage().maxRSS}`,
  );
}

function wholeFileMarkdown(rows: WholeFileRow[]): string[] {
  if (!rows.length) return [];
  const f = (x: number, d = 1) => x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  const head = [
    "input",
    "GB",
    "events",
    "first decode s",
    "MB/s",
    "M events/s",
    "page faults",
    "next decode s",
    "MB/s",
    "M events/s",
    "page faults",
    "peak RSS MiB",
  ];
  const lines = [
    "",
    'Opened whole from the file (openTraceFile, payloads "source": the tables held, records read back when asked; past 4 GiB of record bytes a trace cannot be held as bytes), wasm, two decodes in a fresh process (the second writes into the first\'s memory):',
    "",
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
  ];
  for (const r of rows) {
    lines.push(
      `| ${[
        r.input,
        f(r.bytes / 1e9, 2),
        r.events.toLocaleString("en-US"),
        f(r.firstMs / 1000, 2),
        f(r.bytes / 1e6 / (r.firstMs / 1000), 0),
        f(r.events / 1e6 / (r.firstMs / 1000), 2),
        r.minfltFirst.toLocaleString("en-US"),
        f(r.nextMs / 1000, 2),
        f(r.bytes / 1e6 / (r.nextMs / 1000), 0),
        f(r.events / 1e6 / (r.nextMs / 1000), 2),
        r.minfltNext.toLocaleString("en-US"),
        f(r.rssMB, 0),
      ].join(" | ")} |`,
    );
  }
  return lines;
}

function benchStream(input: string, path: string, withWorkers = true, wasmOnly = false): StreamRow {
  const bytes = statSync(path).size;
  const row: StreamRow = { input, bytes, events: 0, engines: {} };
  warmPageCache(path);
  const runs = [
    ["wasm", "wasm", 0],
    ["js", "js", 0],
    ["wasm, 1 worker", "wasm", 1],
    ["wasm, 2 workers", "wasm", 2],
  ] as const;
  for (const [name, engine, workers] of runs.filter(([, engine, w]) => (w > 0 ? withWorkers : !(wasmOnly && engine === "js")))) {
    const key = name;
    try {
      // the faster of two runs (the first may still meet pages the cache dropped)
      const runs = [streamInChild(engine, path, workers), streamInChild(engine, path, workers)];
      const r = runs[0].ms <= runs[1].ms ? runs[0] : runs[1];
      row.events = r.events;
      const nextMs = Math.min(runs[0].nextMs, runs[1].nextMs) || undefined;
      row.engines[key] = {
        ms: r.ms,
        mbPerS: bytes / 1e6 / (r.ms / 1000),
        eventsPerS: r.events / (r.ms / 1000),
        rssMB: r.rssMB,
        batches: r.batches,
        minflt: r.minflt,
        nextMs,
      };
    } catch (error) {
      row.engines[key] = { error: String((error as Error).message ?? error) };
    }
  }
  const w = row.engines.wasm,
    j = row.engines.js;
  if (w && j && "ms" in w && "ms" in j) row.ratio = j.ms / w.ms;
  const w1 = row.engines["wasm, 1 worker"],
    w2 = row.engines["wasm, 2 workers"];
  if (w1 && w2 && "ms" in w1 && "ms" in w2) {
    row.workerSpeedup = w1.ms / w2.ms;
    if (w1.nextMs && w2.nextMs) row.workerSpeedupNext = w1.nextMs / w2.nextMs;
  }
  return row;
}

/** The command-line runs of `--cli`: each a command on an input, in a fresh process. */
const CLI_RUNS: [string, string[]][] = [
  ["gc", ["gc"]],
  ["gc --rollup", ["gc", "--rollup"]],
  ["jit --summary", ["jit", "--summary"]],
  ["methods", ["methods"]],
  ["cpu --format folded", ["cpu", "--format", "folded", "-o", "OUT"]],
  [
    "stacks --event GC/AllocationTick --weight AllocationAmount --format folded",
    ["stacks", "--event", "GC/AllocationTick", "--weight", "AllocationAmount", "--format", "folded"],
  ],
  // (every event out, jsonl and csv: the writing of lines more than the decode)
  ["events", ["events"]],
  ["events --format csv", ["events", "--format", "csv"]],
];

interface CliRow {
  input: string;
  command: string;
  bytes: number;
  ms: number;
  rssMB: number;
  outputBytes: number;
}

/** Each of CLI_RUNS on the generated `.etl` with samples and `.nettrace` of `sizeMiB`: time, peak RSS, output size. */
function cliRows(sizeMiB: number): CliRow[] {
  const cli = fileURLToPath(new URL("../bindings/cli/etw-wasm.js", import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), "etw-bench-cli-"));
  const rows: CliRow[] = [];
  try {
    for (const [input, file] of [
      [`generated ${sizeMiB} MiB .etl with samples`, generated(sizeMiB, false, true)],
      [`generated ${sizeMiB} MiB .nettrace`, generatedNettrace(sizeMiB)],
    ]) {
      for (const [command, argv] of CLI_RUNS) {
        process.stderr.write(`cli: ${command} of ${input} ...\n`);
        warmPageCache(file);
        const out = join(dir, "out");
        const stdout = join(dir, "stdout");
        const t0 = performance.now();
        const r = spawnSync(
          "/bin/sh",
          ["-c", '/usr/bin/time -f peak=%M "$@" > "$0"', stdout, process.execPath, cli, ...argv.map((x) => (x === "OUT" ? out : x)), file, "--no-progress"],
          { encoding: "utf8" },
        );
        const ms = performance.now() - t0;
        const peak = /peak=(\d+)/.exec(r.stderr);
        if (r.status !== 0 || !peak) throw new Error(`etw-wasm ${command} of ${file} failed: ${r.stderr.trim()}`);
        const outputBytes = statSync(argv.includes("OUT") ? out : stdout).size;
        rows.push({ input, command, bytes: statSync(file).size, ms, rssMB: Number(peak[1]) / 1024, outputBytes });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

function cliMarkdown(rows: CliRow[]): string[] {
  const meta = machine(false);
  return [
    "## The command line",
    "",
    "Each command on a generated input in a fresh process (`etw-wasm CMD FILE --no-progress`, the file in the page cache; stdout to a file; one run each): wall time with start-up, peak RSS, and the output's size. `gc`, `jit` and `methods` read the trace once; the time order of an EventPipe file's batches holds two at most.",
    "",
    `Machine: ${meta.cpu}, ${meta.cores} cores, ${meta.memory}; Node ${meta.node}; ${meta.date}.`,
    "",
    "| input | command | s | input MB/s | peak RSS MiB | output MB |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.input} | \`${r.command}\` | ${(r.ms / 1000).toFixed(2)} | ${(r.bytes / 1e6 / (r.ms / 1000)).toFixed(0)} | ${r.rssMB.toFixed(0)} | ${(r.outputBytes / 1e6).toFixed(1)} |`,
    ),
    "",
  ];
}

/** Peak RSS and time of `etw-wasm summary` on `file`. */
function summaryRun(file: string): { ms: number; rssMB: number; buffersRead: number; buffersWritten: number } {
  const cli = fileURLToPath(new URL("../bindings/cli/etw-wasm.js", import.meta.url));
  const t0 = performance.now();
  warmPageCache(file);
  const r = spawnSync("/usr/bin/time", ["-f", "peak=%M", process.execPath, cli, "summary", file], { encoding: "utf8", maxBuffer: 1 << 26 });
  const ms = performance.now() - t0;
  const peak = /peak=(\d+)/.exec(r.stderr);
  const buffers = /buffers:\s+(\d+) read \(\d+ compressed\), (\d+) written/.exec(r.stdout);
  if (r.status !== 0 || !peak || !buffers) throw new Error(`summary of ${file} failed: ${r.stderr.trim()}`);
  return { ms, rssMB: Number(peak[1]) / 1024, buffersRead: Number(buffers[1]), buffersWritten: Number(buffers[2]) };
}

interface ConvertRow {
  input: string;
  format: "parquet" | "arrow";
  bytes: number;
  events: number;
  ms: number;
  rssMB: number;
  outputBytes: number;
  tables: number;
  /** DuckDB's count of the events table (Parquet), when counted. */
  duckdbCount?: number;
  /** The same convert with sinks that drop the bytes (bench/convert-compute.ts): all but the writes. */
  computeMs: number;
  /** Writing as many bytes as the output to a new file, in 8 MiB writes (a fresh process): what the file system asks for them. */
  writeMs: number;
}

/** Milliseconds a fresh process takes to write `bytes` to a new file in 8 MiB writes (the file removed after). */
function rawWriteMs(bytes: number, dir: string): number {
  const script = `const fs=require("node:fs");const b=new Uint8Array(8<<20).fill(7);const fd=fs.openSync(process.argv[1],"w");const t=performance.now();for(let p=0;p<${bytes};p+=b.length)fs.writeSync(fd,b,0,Math.min(b.length,${bytes}-p),p);fs.closeSync(fd);console.log(performance.now()-t)`;
  const r = spawnSync(process.execPath, ["-e", script, join(dir, "write-test.bin")], { encoding: "utf8" });
  rmSync(join(dir, "write-test.bin"), { force: true });
  if (r.status !== 0) throw new Error(`write test failed: ${r.stderr.trim()}`);
  return Number(r.stdout);
}

/** convert-compute.js's run of `file` to `format` (a fresh process). */
function computeRun(file: string, format: "parquet" | "arrow"): { ms: number; events: number } {
  const script = fileURLToPath(new URL("./convert-compute.js", import.meta.url));
  const r = spawnSync(process.execPath, [script, file, format], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`convert-compute of ${file} failed: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as { ms: number; events: number };
}

function directoryBytes(dir: string): { bytes: number; files: number } {
  let bytes = 0,
    files = 0;
  for (const d of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!d.isFile()) continue;
    bytes += statSync(join(d.parentPath, d.name)).size;
    files++;
  }
  return { bytes, files };
}

/** Time, peak RSS and output of `etw-wasm convert` (a fresh process; output deleted after). */
async function convertRun(input: string, file: string, format: "parquet" | "arrow", count: boolean): Promise<ConvertRow> {
  const cli = fileURLToPath(new URL("../bindings/cli/etw-wasm.js", import.meta.url));
  const out = mkdtempSync(join(tmpdir(), "etw-wasm-convert-"));
  try {
    warmPageCache(file);
    const t0 = performance.now();
    const r = spawnSync("/usr/bin/time", ["-f", "peak=%M", process.execPath, cli, "convert", file, "--to", format, "-o", out, "--no-progress"], {
      encoding: "utf8",
      maxBuffer: 1 << 26,
    });
    const ms = performance.now() - t0;
    const peak = /peak=(\d+)/.exec(r.stderr);
    const events = new RegExp(`events\\.${format === "parquet" ? "parquet" : "arrow"}\\t(\\d+) rows`).exec(r.stdout);
    if (r.status !== 0 || !peak || !events) throw new Error(`convert of ${file} failed: ${r.stderr.trim()}`);
    const { bytes: outputBytes, files } = directoryBytes(out);
    const row: ConvertRow = {
      input,
      format,
      bytes: statSync(file).size,
      events: Number(events[1]),
      ms,
      rssMB: Number(peak[1]) / 1024,
      outputBytes,
      tables: files,
      computeMs: 0,
      writeMs: 0,
    };
    if (count && format === "parquet") {
      const { DuckDBInstance } = await import("@duckdb/node-api");
      const db = await (await DuckDBInstance.create(":memory:")).connect();
      const rows = (await db.runAndReadAll(`select count(*) from '${join(out, "events.parquet")}'`)).getRows();
      row.duckdbCount = Number(rows[0][0]);
    }
    // (the output's pages freed first, as between the runs of a user)
    rmSync(out, { recursive: true, force: true });
    const compute = computeRun(file, format);
    if (compute.events !== row.events) throw new Error(`convert-compute of ${file}: ${compute.events} events, convert ${row.events}`);
    row.computeMs = compute.ms;
    row.writeMs = rawWriteMs(outputBytes, tmpdir());
    return row;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function convertMarkdown(rows: ConvertRow[]): string[] {
  if (!rows.length) return [];
  const f = (x: number, d = 1) => x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  const head = [
    "input",
    "to",
    "GB in",
    "events",
    "s",
    "input MB/s",
    "M events/s",
    "peak RSS MiB",
    "output MB",
    "tables",
    "DuckDB count(*) of events",
    "s without writes",
    "input MB/s without writes",
    "s to write the output's bytes alone",
  ];
  const lines = [
    "",
    '`etw-wasm convert` (events, typed .NET tables, processes, providers; a fresh process, the process pass included). "Without writes": the same work with sinks that drop the bytes (`bench/convert-compute.ts`, a fresh process); "to write the output\'s bytes alone": a fresh process writing as many bytes to a new file in 8 MiB writes, after the output was deleted: what the file system asks for the output alone:',
    "",
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
  ];
  for (const r of rows) {
    lines.push(
      `| ${[r.input, r.format, f(r.bytes / 1e9, 2), r.events.toLocaleString("en-US"), f(r.ms / 1000, 1), f(r.bytes / 1e6 / (r.ms / 1000), 0), f(r.events / 1e6 / (r.ms / 1000), 2), f(r.rssMB, 0), f(r.outputBytes / 1e6, 0), String(r.tables), r.duckdbCount === undefined ? "" : r.duckdbCount.toLocaleString("en-US"), f(r.computeMs / 1000, 1), f(r.bytes / 1e6 / (r.computeMs / 1000), 0), f(r.writeMs / 1000, 1)].join(" | ")} |`,
    );
  }
  return lines;
}

async function convertRows(): Promise<ConvertRow[]> {
  const rows: ConvertRow[] = [];
  for (const format of ["arrow", "parquet"] as const) {
    process.stderr.write(`convert 1 GiB to ${format} ...\n`);
    rows.push(await convertRun("generated 1 GiB", generated(1024, false), format, true));
  }
  process.stderr.write("convert 10 GiB to parquet ...\n");
  rows.push(await convertRun("generated 10 GiB", generated(10240, false), "parquet", true));
  return rows;
}

/** XPRESS decompression speed of the WebAssembly core, in output MB/s, over every compressed buffer of a file. */
async function xpressSpeed(path: string, quick: boolean): Promise<{ outputMB: number; mbPerS: number }> {
  const file = new Uint8Array(readFileSync(path));
  const v = new DataView(file.buffer, file.byteOffset);
  const core = await instantiateCore();
  core.init(0, 1 << 20, 0);
  const jobs: { src: number; len: number; expected: number }[] = [];
  let total = 0;
  for (let o = 0; o + 0x48 <= file.length; ) {
    const size = v.getUint32(o, true);
    if (size < 0x48) break;
    if (v.getUint16(o + 0x34, true) & 0x40) {
      const src = core.alloc(size - 0x48);
      new Uint8Array(core.memory.buffer, src, size - 0x48).set(file.subarray(o + 0x48, o + size));
      const expected = v.getUint32(o + 0x30, true) - 0x48;
      jobs.push({ src, len: size - 0x48, expected });
      total += expected;
    }
    o += size;
  }
  const dst = core.alloc(64 * MiB);
  const ms = await timeTask(
    "xpress",
    async () => {
      for (const j of jobs) if (core.decompress(j.src, j.len, dst, j.expected) !== j.expected) throw new Error("decompression failed");
    },
    quick,
    false,
  );
  return { outputMB: total / 1e6, mbPerS: total / 1e6 / (ms / 1000) };
}

function streamMarkdown(
  rows: StreamRow[],
  summary: { input: string; ms: number; rssMB: number; buffersRead: number; buffersWritten: number } | undefined,
): string[] {
  if (!rows.length) return [];
  const f = (x: number, d = 1) => x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  const head = [
    "input",
    "GB",
    "events",
    "batches",
    "wasm s",
    "wasm MB/s",
    "wasm M events/s",
    "wasm peak RSS MiB",
    "js s",
    "js MB/s",
    "js M events/s",
    "js peak RSS MiB",
    "JS/WASM time",
    "RSS bytes/event (wasm)",
    "page faults (wasm, whole process)",
    "wasm next s",
    "wasm next MB/s",
    "wasm next M events/s",
    "1 worker s",
    "1 worker peak RSS MiB",
    "2 workers s",
    "2 workers peak RSS MiB",
    "2 workers / 1",
    "1 worker next s",
    "2 workers next s",
    "2 workers / 1 (next)",
  ];
  const lines = [
    "",
    "Streamed from the file (streamTraceFile, batches of 8 MiB of record data, the default; every batch's rows and typed .NET rows counted), one run per engine in a fresh process",
    '(the faster of two processes; "next": the wasm engine streaming the file again in the same process, its memory and workers warm);',
    "with workers, the wasm engine in worker threads (segments of 32 MiB of the file, each read by its worker into a core on shared memory; windows merged on the main thread where the workers wrote them):",
    "",
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
  ];
  for (const r of rows) {
    const cells = [r.input, f(r.bytes / 1e9, 2), r.events.toLocaleString("en-US")];
    const w = r.engines.wasm;
    cells.push(w && "batches" in w ? String(w.batches) : "");
    for (const n of ["wasm", "js"]) {
      const e = r.engines[n];
      if (!e || "error" in e) cells.push(e ? "error" : "", "", "", "");
      else cells.push(f(e.ms / 1000, 2), f(e.mbPerS, 0), f(e.eventsPerS / 1e6, 2), f(e.rssMB, 0));
    }
    cells.push(r.ratio ? `${f(r.ratio, 2)}×` : "");
    cells.push(w && "rssMB" in w && r.events ? f((w.rssMB * 1024 * 1024) / r.events, 1) : "");
    cells.push(w && "minflt" in w ? w.minflt.toLocaleString("en-US") : "");
    const next = w && "ms" in w ? w.nextMs : undefined;
    cells.push(...(next ? [f(next / 1000, 2), f(r.bytes / 1e6 / (next / 1000), 0), f(r.events / 1e6 / (next / 1000), 2)] : ["", "", ""]));
    for (const n of ["wasm, 1 worker", "wasm, 2 workers"]) {
      const e = r.engines[n];
      if (!e || "error" in e) cells.push(e ? "error" : "", "");
      else cells.push(f(e.ms / 1000, 2), f(e.rssMB, 0));
    }
    cells.push(r.workerSpeedup ? `${f(r.workerSpeedup, 2)}×` : "");
    for (const n of ["wasm, 1 worker", "wasm, 2 workers"]) {
      const e = r.engines[n];
      cells.push(e && "ms" in e && e.nextMs ? f(e.nextMs / 1000, 2) : "");
    }
    cells.push(r.workerSpeedupNext ? `${f(r.workerSpeedupNext, 2)}×` : "");
    lines.push(`| ${cells.join(" | ")} |`);
  }
  if (summary) {
    lines.push(
      "",
      `\`etw-wasm summary\` of the ${summary.input} trace: ${f(summary.ms / 1000, 1)} s, peak RSS ${f(summary.rssMB, 0)} MB, buffers ${summary.buffersRead.toLocaleString("en-US")} read of ${summary.buffersWritten.toLocaleString("en-US")} written.`,
    );
  }
  return lines;
}

function markdown(rows: Row[], xpress: { outputMB: number; mbPerS: number } | undefined, meta: Record<string, string>, streamLines: string[] = []): string {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.engines)))];
  const head = [
    "input",
    "MB",
    "events",
    ...names.flatMap((n) => [`${n} ms`, `${n} MB/s`, `${n} M events/s`]),
    "JS/WASM time",
    "peak RSS MiB wasm / js",
    "first decode ms wasm / js",
    "page faults (first decode, wasm)",
    "bytes/event (event table as stored / all tables)",
  ];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  const f = (x: number, d = 1) => x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  for (const r of rows) {
    const cells = [r.input, f(r.bytes / 1e6), r.events.toLocaleString("en-US")];
    for (const n of names) {
      const e = r.engines[n];
      if (!e) cells.push("", "", "");
      else if ("error" in e) cells.push("error", "", "");
      else cells.push(f(e.ms), f(e.mbPerS, 0), f(e.eventsPerS / 1e6, 2));
    }
    const w = r.engines.wasm,
      j = r.engines.js;
    cells.push(r.ratio ? `${f(r.ratio, 2)}×` : "");
    cells.push(w && "rssMB" in w && w.rssMB ? `${f(w.rssMB, 0)} / ${j && "rssMB" in j && j.rssMB ? f(j.rssMB, 0) : "-"}` : "");
    cells.push(w && "firstMs" in w && w.firstMs ? `${f(w.firstMs, 0)} / ${j && "firstMs" in j && j.firstMs ? f(j.firstMs, 0) : "-"}` : "");
    cells.push(w && "minflt" in w && w.minflt !== undefined ? w.minflt.toLocaleString("en-US") : "");
    cells.push(`${r.tableBytesPerEvent} / ${f(r.allTablesBytesPerEvent ?? 0)}`);
    lines.push(`| ${cells.join(" | ")} |`);
  }
  const out = [
    `Machine: ${meta.cpu}, ${meta.cores} cores, ${meta.memory}; Node ${meta.node}; ${meta.date}${meta.quick === "true" ? " (quick run)" : ""}.`,
    "",
    ...lines,
  ];
  if (xpress) out.push("", `XPRESS decompression (WebAssembly core): ${f(xpress.mbPerS, 0)} MB/s of output over ${f(xpress.outputMB)} MB.`);
  out.push(...streamLines);
  return out.join("\n") + "\n";
}

async function main() {
  const a = args();
  if (a.measureStream) {
    const r = await streamOnce(a.measureStream.engine, a.measureStream.file, a.measureStream.workers);
    const rss = process.resourceUsage().maxRSS,
      minflt = minorFaults();
    // the wasm engine streams once more in the same process: what a process that decodes more than once gets
    const next = a.measureStream.engine === "wasm" ? (await streamOnce("wasm", a.measureStream.file, a.measureStream.workers)).ms : 0;
    console.log(`ms=${r.ms.toFixed(1)} events=${r.events} batches=${r.batches} rss=${rss} minflt=${minflt} next=${next.toFixed(1)}`);
    return;
  }
  if (a.measureWholeFile) {
    await measureWholeFile(a.measureWholeFile);
    return;
  }
  if (a.measureRss) {
    // The Buffer itself: `new Uint8Array(buffer)` copied it, and the peak held the input twice (2,063 MB
    // for the generated 1 GiB trace where the decode takes 1,674). Its pages are read once before the
    // clock starts: on this VM the first read of each page the kernel has just filled costs about 7 µs
    // (1.8 s for 1 GiB, with no page fault counted), which is the file read's cost, not the decode's.
    const bytes = readInput(a.measureRss.file);
    let touched = 0;
    for (let i = 0; i < bytes.length; i += 4096) touched += bytes[i];
    if (touched < 0) throw new Error("unreachable");
    const f0 = minorFaults();
    const t0 = performance.now();
    const t = whole(await openTrace(bytes, { engine: a.measureRss.engine }), a.measureRss.file);
    const ms = performance.now() - t0;
    console.log(`events=${t.events.length} rss=${process.resourceUsage().maxRSS} ms=${ms.toFixed(1)} minflt=${minorFaults() - f0}`);
    return;
  }
  if (a.guard) {
    // the guard's figures alone, into the committed results (the rest of them kept)
    const file = join(ROOT, "bench", "results.json");
    const results = JSON.parse(readFileSync(file, "utf8"));
    results.guard = await guardFigures();
    writeFileSync(file, JSON.stringify(results, null, 2) + "\n");
    // (and results.md's line of them, which the full run writes last)
    const mdFile = join(ROOT, "bench", "results.md");
    const md = readFileSync(mdFile, "utf8").replace(/^Guard figures \(.*$/m, guardLine(results.guard));
    writeFileSync(mdFile, md);
    process.stdout.write(JSON.stringify(results.guard) + "\n");
    return;
  }
  if (a.analysis) {
    // the analysis section alone: bench/results-analysis.md
    const md = analysisMarkdown(await analysisRows(a.quick ? 64 : 1024)).join("\n") + "\n";
    writeFileSync(join(ROOT, "bench", "results-analysis.md"), md);
    process.stdout.write(md);
    return;
  }
  if (a.cli) {
    // the command-line section alone: bench/results-cli.md
    const md = cliMarkdown(cliRows(a.quick ? 64 : 1024)).join("\n") + "\n";
    writeFileSync(join(ROOT, "bench", "results-cli.md"), md);
    process.stdout.write(md);
    return;
  }
  if (a.nettrace) {
    // the EventPipe section alone: bench/results-nettrace.md
    const md = (await nettraceSection(a.quick)).join("\n") + "\n";
    writeFileSync(join(ROOT, "bench", "results-nettrace.md"), md);
    process.stdout.write(md);
    return;
  }
  if (a.viewer) {
    // the viewer section alone: bench/results-viewer.md
    const md = [...viewerMarkdown(await viewerRows([64, 1024])), ...answersMarkdown(await viewerAnswers(1024))].join("\n") + "\n";
    writeFileSync(join(ROOT, "bench", "results-viewer.md"), md);
    process.stdout.write(md);
    return;
  }
  if (a.convert) {
    // the convert section alone: bench/results-convert.md
    const md = convertMarkdown(await convertRows()).join("\n") + "\n";
    writeFileSync(join(ROOT, "bench", "results-convert.md"), md);
    process.stdout.write(md);
    return;
  }
  const adapter: Adapter | undefined = a.against ? (await import(pathToFileURL(resolve(a.against)).href)).default : undefined;
  if (adapter && (typeof adapter.parse !== "function" || !adapter.name)) throw new Error("--against: the module's default export needs { name, parse(bytes) }");
  const inputs: [string, string, boolean][] = [
    ["generated 64 MiB", generated(64, false), true],
    ["generated 64 MiB, XPRESS", generated(64, true), true],
  ];
  if (!a.quick) {
    inputs.push(["generated 1 GiB", generated(1024, false), true], ["generated 1 GiB, XPRESS", generated(1024, true), true]);
    // (whole from bytes at 4 GiB too: the record walk's rate at that size, beside 64 MiB and 1 GiB)
    inputs.push(["generated 4 GiB", generated(4096, false), true]);
    if (existsSync(CORPUS)) {
      for (const f of readdirSync(CORPUS)
        .filter((x) => x.endsWith(".etl"))
        .sort())
        inputs.push([f, join(CORPUS, f), false]);
    }
  }
  const rows: Row[] = [];
  for (const [name, path, rss] of inputs) {
    process.stderr.write(`${name} ...\n`);
    rows.push(await benchInput(name, path, a.quick, adapter, rss));
  }
  const xpress = await xpressSpeed(generated(64, true), a.quick);
  const streamRows: StreamRow[] = [];
  const wholeFiles: WholeFileRow[] = [];
  const converts: ConvertRow[] = [];
  let summary: (ReturnType<typeof summaryRun> & { input: string }) | undefined;
  if (!a.quick) {
    const streamed: [string, string][] = [
      ["generated 64 MiB", generated(64, false)],
      ["generated 1 GiB", generated(1024, false)],
      ["generated 1 GiB, XPRESS", generated(1024, true)],
      ["generated 4 GiB", generated(4096, false)],
      ["generated 10 GiB", generated(10240, false)],
    ];
    for (const [name, path] of streamed) {
      process.stderr.write(`${name}, streamed ...\n`);
      streamRows.push(benchStream(name, path));
    }
    for (const size of [1024, 4096]) {
      process.stderr.write(`generated ${size} MiB, opened whole from the file ...\n`);
      wholeFiles.push(benchWholeFile(`generated ${size / 1024} GiB`, generated(size, false)));
    }
    process.stderr.write("summary of the 10 GiB trace ...\n");
    summary = { input: "generated 10 GiB", ...summaryRun(generated(10240, false)) };
    converts.push(...(await convertRows()));
  }
  const analysis = analysisMarkdown(await analysisRows(a.quick ? 64 : 1024));
  process.stderr.write("the viewer in Chromium ...\n");
  const viewer = await viewerRows(a.quick ? [64] : [64, 1024], a.quick ? 1 : 3);
  const answers = await viewerAnswers(a.quick ? 64 : 1024);
  const eventPipe = await nettraceSection(a.quick);
  // the figures the quick guard in npm test holds later runs to (relative to memcpy)
  process.stderr.write("guard figures ...\n");
  const guard = await guardFigures();
  const meta = machine(a.quick);
  const md = markdown(rows, xpress, meta, [
    ...wholeFileMarkdown(wholeFiles),
    ...streamMarkdown(streamRows, summary),
    ...convertMarkdown(converts),
    ...viewerMarkdown(viewer),
    ...answersMarkdown(answers),
    ...analysis,
    "",
    ...eventPipe,
    "",
    guardLine(guard),
  ]);
  writeFileSync(
    join(ROOT, "bench", "results.json"),
    JSON.stringify(
      { meta, rows, xpress, wholeFiles, streamRows, summary, converts, viewer, answers, guard, peakRssMB: process.resourceUsage().maxRSS / 1024 },
      null,
      2,
    ) + "\n",
  );
  writeFileSync(join(ROOT, "bench", "results.md"), md);
  process.stdout.write(md);
}

/** results.md's line of the guard's figures. */
function guardLine(guard: GuardFigures): string {
  return `Guard figures (bench/guard.ts, generated 64 MiB, best runs; npm test fails below half of each relative to memcpy): memcpy ${guard.memcpy.toFixed(0)} MB/s; whole wasm ${guard.whole.toFixed(0)} MB/s, whole TypeScript ${guard.wholeJs.toFixed(0)} MB/s, streamed wasm ${guard.streamed.toFixed(0)} MB/s.`;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
