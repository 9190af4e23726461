#!/usr/bin/env node
// etw-wasm command line: info, summary and events of a trace file, on the public API only.

import { openTraceFile, EtlFormatError, HEADER_TYPE_NAMES, type Trace } from "etw-wasm/node";

const USAGE = `usage: etw-wasm <command> FILE [options]

commands:
  info FILE                      the trace's logfile header and decoding statistics
  summary FILE                   info plus record counts per provider and header type
  generate OUT [options]         write a synthetic .NET runtime trace
                                 --size N (e.g. 256MiB; default 64MiB), --compress,
                                 --pointer-size 4|8, --seed N, --processors N
  events FILE [--format F]       one line per record in file order
                                 F = jsonl (default) | table
options:
  --time-order                   events in time order instead of file order
  -h, --help                     this text`;

class UsageError extends Error {}

const VALUED = new Set(["format", "size", "pointer-size", "seed", "processors"]);

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

async function cmdSummary(trace: Trace, out: Output) {
  await cmdInfo(trace, out);
  const ev = trace.events;
  const perProvider = new Uint32Array(trace.providers.length);
  const perType = new Map<number, number>();
  for (let i = 0; i < ev.length; i++) {
    perProvider[ev.provider[i]]++;
    perType.set(ev.headerType[i], (perType.get(ev.headerType[i]) ?? 0) + 1);
  }
  if (ev.length) {
    const first = ev.timestamp[ev.timeOrder()[0]];
    const last = ev.timestamp[ev.timeOrder()[ev.length - 1]];
    await out.line(`time span:     ${(trace.relativeMSec(last) - trace.relativeMSec(first)).toFixed(3)} ms`);
  }
  await out.line("");
  await out.line("records per header type:");
  for (const [t, n] of [...perType].sort((a, b) => b[1] - a[1])) {
    await out.line(`  ${String(n).padStart(10)}  ${HEADER_TYPE_NAMES[t] ?? t}`);
  }
  await out.line("");
  await out.line("records per provider:");
  const rows = [...trace.providers].map((p) => ({ p, n: perProvider[p.index] })).sort((a, b) => b.n - a.n);
  for (const { p, n } of rows) {
    const name = p.group ? `${p.name}/${p.group}` : p.name;
    await out.line(`  ${String(n).padStart(10)}  ${name}  {${p.guid}}`);
  }
}

async function cmdEvents(trace: Trace, out: Output, format: string, timeOrder: boolean) {
  const rows = timeOrder ? trace.events.byTime() : trace.events;
  if (format === "jsonl") {
    for (const row of rows) await out.line(JSON.stringify(row.toJSON()));
  } else if (format === "table") {
    await out.line("row\ttime_ms\tprovider\tid\tver\topcode\tlevel\ttask\tpid\ttid\tcpu\theader\tbytes");
    for (const row of rows) {
      const p = trace.providers.get(row.providerIndex);
      await out.line(
        [row.index, row.relativeMSec.toFixed(4), p.group ? `${p.name}/${p.group}` : p.name, row.eventId, row.version,
          row.opcode, row.level, row.task, row.pid ?? "", row.tid ?? "", row.processor, row.headerTypeName,
          row.payloadLength].join("\t"),
      );
    }
  } else throw new UsageError(`unknown format: ${format} (jsonl or table)`);
}

async function cmdGenerate(out: string, flags: Record<string, string | true>): Promise<number> {
  const { generateTraceFile, parseSize } = await import("../../bench/generate-file.js");
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
  if (!["info", "summary", "events", "generate"].includes(command)) throw new UsageError(`unknown command: ${command}`);
  if (!file) throw new UsageError(`${command} needs a FILE`);
  if (command === "generate") return cmdGenerate(file, flags);
  const trace = await openTraceFile(file);
  const out = new Output();
  if (command === "info") await cmdInfo(trace, out);
  else if (command === "summary") await cmdSummary(trace, out);
  else await cmdEvents(trace, out, typeof flags.format === "string" ? flags.format : "jsonl", !!flags["time-order"]);
  await out.flush();
  return 0;
}

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
