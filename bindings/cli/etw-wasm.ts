#!/usr/bin/env node
// etw-wasm command line: info, summary and events of a trace file, on the public API only.

import { statSync } from "node:fs";
import { openTraceFile, EtlFormatError, type Trace } from "etw-wasm/node";
import { perfViewLines } from "etw-wasm/perfview";
import {
  EVENT_COLUMNS, GC_COLUMNS, METHOD_COLUMNS, UsageError, eventRecord, gcRows, methodRows, progressBar, selectEvents,
  summary, writeTable, type TableFormat,
} from "./commands.js";

const USAGE = `usage: etw-wasm <command> FILE [options]

commands:
  info FILE                      the trace's logfile header and decoding statistics
  summary FILE                   info, then records per header type, provider and event name, and processes
  events FILE [options]          the records, one per line
      --format F                 jsonl (default) | json | csv | table | perfview
      --provider P               provider name or GUID          --event NAME   e.g. GC/Start
      --pid N  --tid N           process / thread id
      --from MS  --to MS         time range in milliseconds since the trace started
      --time-order               time order instead of file order
      perfview: the text of PerfView's *.baseline.txt (EVENT lines for the first 5 events of each
      name in time order, then COUNT lines); --edition=2020 for mid-2020 TraceEvent payload names,
      --no-container-id to leave out the ContainerID clause
  gc FILE [--format F]           one row per .NET garbage collection (table default, csv, json, jsonl)
  methods FILE [--format F]      methods loaded per process (table default, csv, json, jsonl)
  generate OUT [options]         write a synthetic .NET runtime trace
      --size N (e.g. 256MiB; default 64MiB), --compress, --pointer-size 4|8, --seed N, --processors N
options:
  --no-progress                  no progress bar (shown on a terminal for files over 8 MB)
  -h, --help                     this text

exit codes: 0 done, 1 the input could not be read as a trace, 2 bad arguments`;

const VALUED = new Set(["format", "size", "pointer-size", "seed", "processors", "provider", "event", "pid", "tid", "from", "to", "edition"]);

function parseArgs(argv: string[]) {
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-h" || a === "--help") flags.help = true;
    else if (a.startsWith("--")) {
      const [k, v] = a.slice(2).split("=", 2);
      if (v !== undefined) flags[k] = v;
      else if (VALUED.has(k)) {
        if (i + 1 >= argv.length) throw new UsageError(`--${k} needs a value`);
        flags[k] = argv[++i];
      } else flags[k] = true;
    } else positional.push(a);
  }
  return { positional, flags };
}

/** Writes lines to stdout in large batches, honouring backpressure. */
class Output {
  private parts: string[] = [];
  private size = 0;
  async line(s: string): Promise<void> {
    this.parts.push(s);
    this.size += s.length + 1;
    if (this.size > 1 << 20) await this.flush();
  }
  async flush(): Promise<void> {
    if (!this.parts.length) return;
    const text = this.parts.join("\n") + "\n";
    this.parts = [];
    this.size = 0;
    if (!process.stdout.write(text)) await new Promise((r) => process.stdout.once("drain", r));
  }
}

function infoLines(trace: Trace): string[] {
  const i = trace.info;
  const lines = [
    ["logger", i.loggerName],
    ["log file", i.logFileName],
    ["start", i.startTime.toISOString()],
    ["end", i.endTime ? i.endTime.toISOString() : "(not stopped cleanly)"],
    ["boot", i.bootTime.toISOString()],
    ["OS", `${i.version} build ${i.osBuild}`],
    ["processors", `${i.numberOfProcessors} @ ${i.cpuSpeedMHz} MHz`],
    ["pointer size", `${i.pointerSize} (header record ${i.headerPointerSize * 8}-bit)`],
    ["clock", `${i.clockName}, ${i.perfFreq} Hz, timer resolution ${i.timerResolution}`],
    ["buffer size", `${i.bufferSize}`],
    ["log file mode", `0x${i.logFileMode.toString(16).padStart(8, "0")}`],
    ["buffers", `${i.bufferCount} read (${i.compressedBuffers} compressed), ${i.buffersWritten} written, ${i.buffersLost} lost`],
    ["events lost", `${i.eventsLost}`],
    ["records", `${i.eventCount}`],
    ["file size", `${i.fileSize}`],
    ["time zone", i.timeZone ? `${i.timeZone.standardName} (bias ${i.timeZone.bias} min)` : "-"],
    ["warnings", `${trace.warningTotal}`],
  ];
  return lines.map(([k, v]) => `${(k + ":").padEnd(15)}${v}`);
}

async function cmdInfo(trace: Trace, out: Output) {
  for (const l of infoLines(trace)) await out.line(l);
  for (const w of trace.warnings.slice(0, 20)) await out.line(`warning at ${w.offset}: ${w.message}`);
}

function numberFlag(flags: Record<string, string | true>, k: string): number | undefined {
  const v = flags[k];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== "string" || v.trim() === "" || !Number.isFinite(n)) throw new UsageError(`--${k} needs a number`);
  return n;
}

function tableFormat(flags: Record<string, string | true>, fallback: TableFormat): TableFormat {
  const f = flags.format === undefined ? fallback : flags.format;
  if (f !== "table" && f !== "csv" && f !== "json" && f !== "jsonl") throw new UsageError(`unknown format: ${String(f)} (table, csv, json or jsonl)`);
  return f;
}

async function cmdEvents(trace: Trace, out: Output, flags: Record<string, string | true>) {
  const format = flags.format === undefined ? "jsonl" : flags.format;
  if (format === "perfview") {
    const edition = flags.edition === undefined ? "current" : flags.edition;
    if (edition !== "current" && edition !== "2020") throw new UsageError(`unknown --edition: ${String(edition)} (current or 2020)`);
    for (const line of perfViewLines(trace, { edition, containerId: !flags["no-container-id"] })) await out.line(line);
    return;
  }
  if (!["jsonl", "json", "csv", "table"].includes(String(format))) {
    throw new UsageError(`unknown format: ${String(format)} (jsonl, json, csv, table or perfview)`);
  }
  const rows = selectEvents(trace, {
    provider: typeof flags.provider === "string" ? flags.provider : undefined,
    event: typeof flags.event === "string" ? flags.event : undefined,
    pid: numberFlag(flags, "pid"),
    tid: numberFlag(flags, "tid"),
    from: numberFlag(flags, "from"),
    to: numberFlag(flags, "to"),
    timeOrder: !!flags["time-order"],
  });
  if (format === "jsonl") {
    for (const row of trace.events.cursor(rows)) await out.line(JSON.stringify(row.toJSON()));
    return;
  }
  const records = function* () {
    for (const row of trace.events.cursor(rows)) yield eventRecord(trace, row);
  };
  await writeTable((l) => out.line(l), format as TableFormat, EVENT_COLUMNS, format === "table" ? [...records()] : records());
}

async function cmdGenerate(out: string, flags: Record<string, string | true>): Promise<number> {
  const { generateTraceFile, parseSize } = await import("../generator/generate-file.js");
  const num = (k: string, fallback: number) => {
    const v = flags[k];
    if (v === undefined) return fallback;
    const n = Number(v);
    if (typeof v !== "string" || !Number.isInteger(n) || n < 0) throw new UsageError(`--${k} needs a whole number`);
    return n;
  };
  let size: number;
  try {
    size = parseSize(typeof flags.size === "string" ? flags.size : "64MiB");
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const pointerSize = num("pointer-size", 8);
  if (pointerSize !== 4 && pointerSize !== 8) throw new UsageError("--pointer-size must be 4 or 8");
  const t0 = performance.now();
  const bytes = generateTraceFile(out, {
    targetBytes: size, compress: flags.compress === true, pointerSize, seed: num("seed", 1), processors: num("processors", 4) || 1,
  });
  console.error(`wrote ${out}: ${bytes} bytes in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const { positional, flags } = parseArgs(argv);
  if (flags.help || positional.length === 0) {
    console.log(USAGE);
    return flags.help ? 0 : 2;
  }
  const [command, file] = positional;
  if (!["info", "summary", "events", "gc", "methods", "generate"].includes(command)) throw new UsageError(`unknown command: ${command}`);
  if (!file) throw new UsageError(`${command} needs a FILE`);
  if (command === "generate") return cmdGenerate(file, flags);
  const size = statSync(file).size;
  const bar = process.stderr.isTTY && size > 8 << 20 && !flags["no-progress"] ? progressBar(size) : undefined;
  const trace = await openTraceFile(file, { onProgress: bar });
  bar?.end();
  const out = new Output();
  const emit = (l: string) => out.line(l);
  if (command === "info") await cmdInfo(trace, out);
  else if (command === "summary") await summary(trace, emit, infoLines(trace));
  else if (command === "gc") await writeTable(emit, tableFormat(flags, "table"), GC_COLUMNS, gcRows(trace));
  else if (command === "methods") await writeTable(emit, tableFormat(flags, "table"), METHOD_COLUMNS, methodRows(trace));
  else await cmdEvents(trace, out, flags);
  for (const w of trace.warnings.slice(0, 5)) console.error(`etw-wasm: warning at byte ${w.offset}: ${w.message}`);
  await out.flush();
  return 0;
}

// A closed pipe (etw-wasm events … | head) ends the output quietly.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    if (error instanceof UsageError) console.error(`etw-wasm: ${error.message}\n\n${USAGE}`);
    else if (error instanceof EtlFormatError) console.error(`etw-wasm: ${error.message}`);
    else if ((error as NodeJS.ErrnoException)?.code === "ENOENT") console.error(`etw-wasm: no such file: ${(error as NodeJS.ErrnoException).path}`);
    else console.error(`etw-wasm: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
