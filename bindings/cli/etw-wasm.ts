#!/usr/bin/env node
// etw-wasm command line: info, summary and events of a trace file, on the public API only.

import { existsSync, realpathSync, statSync } from "node:fs";
import { mkdir, open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { TableSink } from "etw-wasm/export";
import { availableParallelism } from "node:os";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { fileURLToPath } from "node:url";
import { output, processOutput, say, setOutput, type CliOutput } from "./io.js";
import {
  openTraceFile, streamTraceFile, sessionFiles, inTimeOrder, eventNameParts, ProcessCollector, PROCESS_EVENTS, TraceDecodeError, TraceFormatError, ManifestCollector, setTraceManifests, codes, parseWhere, WhereSyntaxError,
  type DecodeFilter, type WhereCondition, type EventRow, type ProcessTable, type StreamOptions, type Trace, type TraceManifests,
  type TraceStream, type TraceWarning, type TraceIncomplete, type TraceFile, type FollowOptions,
} from "etw-wasm/node";
import { perfViewLines, isTraceLogBookkeeping, eventPipeBaselineLines } from "etw-wasm/perfview";
import { gcStats, jitStats, streamWeightedStacks, GC_PROVIDERS, JIT_PROVIDERS } from "etw-wasm/analysis";
import { CPU_FORMATS, CPU_PROVIDERS, eventStacks, writeCpuProfile, type CpuFormat } from "./profile-commands.js";
import { cmdDoctor, doctorFormat, keywordsOption, levelOption } from "./doctor-command.js";
import {
  EVENT_COLUMNS, GC_COLUMNS, GC_ROLLUP_COLUMNS, METHOD_COLUMNS, JIT_COLUMNS, JIT_SUMMARY_COLUMNS, jitRow, jitSummaryRow, UsageError, parseSize, eventRecord, gcRow, gcRollupRows, methodRows, progressBar, selectEvents,
  streamSummary, writeTable, type EventFilters, type TableFormat,
} from "./commands.js";

const COMMANDS = ["info", "summary", "doctor", "events", "gc", "methods", "jit", "cpu", "stacks", "convert", "generate"] as const;
type Command = (typeof COMMANDS)[number];

/** Each command's lines of the usage text. */
const COMMAND_HELP: Record<Command, string> = {
  info: "  info FILE...                   the trace's logfile header and decoding statistics",
  summary: "  summary FILE...                info, then records per header type, provider and event name, and processes",
  doctor: `  doctor FILE [--format F]       the trace's health: can jitted and NGen methods be named, are methods
                                 from before the trace covered (rundown), are there stacks and CPU samples,
                                 were events or buffers lost, is the kernel's process and image rundown
                                 there; each gap with the collection settings that fill it (text or json)`,
  events: `  events FILE... [options]       the records, one per line
      --format F                 jsonl (default) | json | csv | table | perfview | names
      --provider P               provider name or GUID          --event NAME   e.g. GC/Start
      --pid N  --tid N           process / thread id
      --keywords K               keyword names of the .NET runtime providers or masks, e.g. GC,Loader or
                                 0x9: events with any of those bits (a name: its provider's bits)
      --level L                  events at this level or more severe: a number or a name (critical,
                                 error, warning, informational, verbose)
      --from MS  --to MS         time range in milliseconds since the trace started
      --where COND               conditions on payload fields, joined by 'and': = != < <= > >= (numbers),
                                 = != (a value map's name or text), ~ /regex/i, in (a, b); e.g.
                                 --event GC/AllocationTick --where 'AllocationAmount > 85000'
      --time-order               time order instead of file order
      perfview: the text of PerfView's *.baseline.txt (EVENT lines for the first 5 events of each
      name in time order, then COUNT lines); --edition=2020 for mid-2020 TraceEvent payload names,
      --no-container-id to leave out the ContainerID clause. For an EventPipe file, the text of
      PerfView's EventPipe baselines: per name, its count and its first event as TraceEvent's XML
      names: TraceEvent's EventName (Task/Opcode) of each event in time order; --tracelog leaves out
      the events TraceLog drops when it converts a trace (stack walks, thread rundown, file names,
      method rundown, idle CPU samples), so the list compares with TraceEvent's own`,
  gc: `  gc FILE [--format F]           GC statistics as PerfView's GCStats: one row per complete .NET garbage
                                 collection with TraceEvent's TraceGC names (pause, duration, heap sizes,
                                 promoted, allocated, rates); --rollup: per process, all and by generation`,
  methods: "  methods FILE [--format F]      methods loaded per process (table default, csv, json, jsonl)",
  jit: `  jit FILE [--format F]          JIT statistics as PerfView's JITStats: one row per jitted method (JIT time,
                                 IL and native size, tier, trigger, module); --summary: per process totals`,
  cpu: `  cpu FILE --format F -o OUT     a CPU profile from the kernel's CPU samples and their stacks, frames named
                                 as PerfView names them (managed methods from the runtime's events)
      --format speedscope|folded|chrome   speedscope's file format; collapsed stacks (flame graph
                                 tools); Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing:
                                 samples per thread, GC pauses and JIT compilations)
      --pid N                    only this process's samples`,
  stacks: `  stacks FILE --event NAME       events with their call stacks, frames named, leaf first
      --format text|jsonl|folded text (default): an event line, then its frames; jsonl: one object each;
                                 folded: collapsed stacks (root;...;leaf weight), heaviest first, for
                                 flame graph tools: where allocations, contention or waits come from
      --weight FIELD             folded: each event weighs its payload field (e.g. AllocationAmount);
                                 default 1 per event. --weight duration: a Start event (--event
                                 Contention/Start) weighs the milliseconds to its Stop on its thread
      --pair-by FIELD            --weight duration: a Stop ends the Start with the same FIELD (TaskID)
      --invert                   folded: leaf first (the callee view: who is called, then by whom)
      --pid N  --tid N  --where COND   only this process / thread / events whose fields pass`,
  convert: `  convert FILE... --to F -o DIR  tables for analytics engines (DuckDB, Spark, Polars, pandas):
                                 DIR/events, DIR/processes, DIR/providers and one table per .NET
                                 runtime event (DIR/<Provider>/<Task>/<Opcode>), as .parquet or .arrow
      --to parquet|arrow         Parquet files, or Arrow IPC streams
      -o, --out DIR              the output directory (made if missing; tables in it are replaced)
      --provider P  --event NAME  --pid N  --tid N  --keywords K  --level L  --where COND
      --from MS  --until MS      the events filters (--until: the end of the time range, as events' --to)
      --row-group-rows N         Parquet: rows per row group at most (default 262144); each has min/max
                                 statistics of the time columns, so readers skip by time
      several files: one session, merged (see below), with a sourceFile column`,
  generate: `  generate OUT [options]         write a synthetic .NET runtime trace: .etl, or .nettrace when OUT ends in
                                 .nettrace or with --format nettrace
      --size N (e.g. 256MiB; default 64MiB), --compress, --pointer-size 4|8, --seed N, --processors N,
      --samples (kernel CPU samples with stacks, for cpu and stacks; in a .nettrace the sample
      profiler's samples)
      --split: the session as PerfView writes it, the runtime's events in OUT and the kernel's in
      OUT's name with .kernel.etl (made in memory: for tests, up to a few hundred MiB)
      --format etl|nettrace      the file's format (default: by OUT's extension, else etl)
      --nettrace-version 4|5|6   4: the V4 container without metadata tags (.NET Core 3); 5 (default):
                                 the same container with the V5 tags (.NET 5 and later); 6: the V6 block
                                 format. The same runtime events as the .etl of the same options`,
};

const READ_HELP = `  --max-memory SIZE              the most memory the decoder's core may take (e.g. 512MiB; at least 1MiB,
                                 default 4GiB): where not even one buffer fits, decoding stops early
  --batch-size SIZE              record bytes decoded per batch (default 8MiB, at least 64KiB): info,
                                 summary and events in file order (jsonl, csv, json) hold one at a time
  --workers N                    worker threads decoding side by side (0: this thread; default: one
                                 fewer than the machine's cores when it has 4 or more, else 0)
  --no-progress                  no progress bar (shown on a terminal for files over 8 MB)
  --merge-all                    FILE and the files of its session beside it, as TraceEvent's MergeAll
                                 opens them: FILE.kernel*.etl, FILE.clr*.etl, FILE.user*.etl
  --follow                       (info, summary, doctor, events, gc, methods, jit) read FILE while another
                                 process writes it (dotnet-trace's .nettrace; an .etl in sequential mode),
                                 batch by batch as whole blocks arrive, until the file's end-of-stream
                                 marker (EventPipe), Ctrl-C, or --follow-idle SECONDS without growth;
                                 progress counts the events so far. Ctrl-C or the idle time before the
                                 end: what was read is reported, with where it stopped (exit 1)
Several FILEs are the files of one session (X.etl, X.kernel.etl, X.clrRundown.etl, ...): they are
merged into one trace as TraceEvent merges them, one timeline on one clock.`;

const OPTIONS_HELP = `options of the commands that read a trace:
${READ_HELP}
  -h, --help                     this text`;

const USAGE = `usage: etw-wasm <command> FILE... [options]

commands:
${COMMANDS.map((c) => COMMAND_HELP[c]).join("\n")}
${OPTIONS_HELP}

A trace that could not be decoded to its end (cut short, out of memory, a failure part way) gives
every record decoded before that point, then one line on stderr saying where decoding stopped, and
exit code 1.

exit codes: 0 done, 1 the input could not be read as a trace or only in part, 2 bad arguments`;

/** The usage lines for one command (all of them when the command is not known). */
function usageOf(command: Command | undefined): string {
  if (!command) return USAGE;
  const reads = command === "generate" ? "" : `\n${READ_HELP}`;
  return `usage of etw-wasm ${command}:\n${COMMAND_HELP[command]}${reads}\n(etw-wasm --help describes every command)`;
}

type OptionSpecs = NonNullable<ParseArgsConfig["options"]>;

const HELP: OptionSpecs = { help: { type: "boolean", short: "h" } };
const READS_TRACE: OptionSpecs = {
  ...HELP, "no-progress": { type: "boolean" }, "max-memory": { type: "string" }, "batch-size": { type: "string" }, workers: { type: "string" },
  "merge-all": { type: "boolean" },
};
const FORMAT: OptionSpecs = { format: { type: "string" } };
/** The commands that read a trace in one pass, batch by batch, can follow a file still being written. */
const FOLLOW: OptionSpecs = { follow: { type: "boolean" }, "follow-idle": { type: "string" } };

/** The options each command accepts; any other option is an error. */
const OPTIONS: Record<Command, OptionSpecs> = {
  info: { ...READS_TRACE, ...FOLLOW },
  summary: { ...READS_TRACE, ...FOLLOW },
  doctor: { ...READS_TRACE, ...FORMAT, ...FOLLOW },
  events: {
    ...READS_TRACE, ...FORMAT, ...FOLLOW,
    provider: { type: "string" }, event: { type: "string" }, pid: { type: "string" }, tid: { type: "string" },
    from: { type: "string" }, to: { type: "string" }, "time-order": { type: "boolean" },
    keywords: { type: "string" }, level: { type: "string" }, where: { type: "string" },
    edition: { type: "string" }, "no-container-id": { type: "boolean" }, tracelog: { type: "boolean" },
  },
  gc: { ...READS_TRACE, ...FORMAT, ...FOLLOW, rollup: { type: "boolean" } },
  methods: { ...READS_TRACE, ...FORMAT, ...FOLLOW },
  jit: { ...READS_TRACE, ...FORMAT, ...FOLLOW, summary: { type: "boolean" } },
  cpu: { ...READS_TRACE, ...FORMAT, pid: { type: "string" }, out: { type: "string", short: "o" } },
  stacks: {
    ...READS_TRACE, ...FORMAT, event: { type: "string" }, pid: { type: "string" }, tid: { type: "string" }, where: { type: "string" },
    weight: { type: "string" }, invert: { type: "boolean" }, "pair-by": { type: "string" },
  },
  convert: {
    ...READS_TRACE, to: { type: "string" }, out: { type: "string", short: "o" },
    provider: { type: "string" }, event: { type: "string" }, pid: { type: "string" }, tid: { type: "string" },
    from: { type: "string" }, until: { type: "string" }, keywords: { type: "string" }, level: { type: "string" }, where: { type: "string" },
    "row-group-rows": { type: "string" },
  },
  generate: {
    ...HELP,
    size: { type: "string" }, compress: { type: "boolean" }, "pointer-size": { type: "string" },
    seed: { type: "string" }, processors: { type: "string" }, samples: { type: "boolean" }, split: { type: "boolean" },
    format: { type: "string" }, "nettrace-version": { type: "string" },
  },
};

const ALL_OPTIONS: OptionSpecs = Object.assign({}, ...Object.values(OPTIONS));

type Values = Record<string, string | boolean | undefined>;

type Parsed =
  | { command: "help" }
  | { command: Exclude<Command, "generate">; files: string[]; values: Values }
  | { command: "generate"; out: string; values: Values };

/** The closest option name within two edits, for "did you mean". */
function closest(name: string, candidates: string[]): string | undefined {
  const distance = (a: string, b: string) => {
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const cur = [i];
      for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
    return prev[b.length];
  };
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    const d = distance(name, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best;
}

/** One line for an error of util.parseArgs, naming the option. */
function describeParseError(command: Command, error: Error & { code?: string }): string {
  const option = /'(-{1,2}[^' ]+?)(?: <value>)?'/.exec(error.message)?.[1] ?? "";
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const name = option.replace(/^-+/, "");
    const owners = COMMANDS.filter((c) => c !== command && Object.hasOwn(OPTIONS[c], name));
    if (owners.length && option.startsWith("--")) return `${command} has no option ${option} (an option of ${owners.join(", ")})`;
    const hint = option.startsWith("--") ? closest(name, Object.keys(OPTIONS[command])) : undefined;
    return `unknown option ${option} for ${command}${hint ? ` (did you mean --${hint}?)` : ""}`;
  }
  if (error.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    if (/does not take an argument/.test(error.message)) return `${option} takes no value`;
    if (/ambiguous/.test(error.message)) return `${option} needs a value (write ${option}=VALUE for a value that starts with '-')`;
    return `${option} needs a value`;
  }
  return error.message.split("\n")[0];
}

/** Command, file and options from the command line; UsageError for anything the command does not take. */
function parseCommandLine(argv: string[]): Parsed {
  // A lenient pass finds the command and --help; the strict pass then applies the command's own options.
  const loose = parseArgs({ args: argv, options: ALL_OPTIONS, strict: false, allowPositionals: true });
  if (loose.values.help === true) return { command: "help" };
  const name = loose.positionals[0];
  if (name === undefined) throw new UsageError("missing command");
  if (!(COMMANDS as readonly string[]).includes(name)) throw new UsageError(`unknown command: ${name}`);
  const command = name as Command;
  const options = OPTIONS[command];
  const parsed = (() => {
    try {
      return parseArgs({ args: argv, options, strict: true, allowPositionals: true, tokens: true });
    } catch (e) {
      const error = e as Error & { code?: string };
      if (typeof error.code === "string" && error.code.startsWith("ERR_PARSE_ARGS_")) throw new UsageError(describeParseError(command, error), command);
      throw e;
    }
  })();
  const seen = new Set<string>();
  for (const t of parsed.tokens) {
    if (t.kind !== "option" || options[t.name]?.type !== "string") continue;
    if (seen.has(t.name)) throw new UsageError(`--${t.name} given more than once`, command);
    seen.add(t.name);
  }
  for (const [k, v] of Object.entries(parsed.values)) {
    if (v === "") throw new UsageError(`--${k} needs a value`, command);
  }
  const [, target, ...extra] = parsed.positionals;
  if (target === undefined) throw new UsageError(`${command} needs ${command === "generate" ? "an OUT file" : "a FILE"}`, command);
  const values = parsed.values as Values;
  if (command !== "generate") return { command, files: [target, ...extra], values };
  if (extra.length) throw new UsageError(`unexpected argument: ${extra[0]}`, command);
  return { command, out: target, values };
}

/** A whole number option from `min` to `max` (decimal, or hex with 0x). */
function wholeNumber(values: Values, name: string, what: string, min: number, max: number, command: Command): number | undefined {
  const text = values[name];
  if (typeof text !== "string") return undefined;
  const n = /^(\d+|0x[0-9a-f]+)$/i.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`bad --${name} '${text}': ${what} is a whole number from ${min} to ${max}`, command);
  }
  return n;
}

/** A size option such as 512MiB or 2GiB (as generate's --size), `least` bytes at least. */
async function sizeOption(values: Values, command: Command, name: string, least: number, leastText: string): Promise<number | undefined> {
  const text = values[name];
  if (typeof text !== "string") return undefined;
  let bytes: number;
  try {
    bytes = parseSize(text);
  } catch (e) {
    throw new UsageError(`bad --${name} '${text}': ${(e as Error).message} (e.g. 512MiB, 2GiB)`, command);
  }
  if (!(bytes >= least)) throw new UsageError(`bad --${name} '${text}': at least ${leastText}`, command);
  return bytes;
}

/**
 * --workers: a whole number from 0. By default none on machines of fewer than 4 cores: with the
 * main thread merging, two workers on two cores were measured no faster than one thread alone.
 */
function workerCount(values: Values, command: Command): number {
  const text = values.workers;
  if (typeof text !== "string") {
    const cores = availableParallelism();
    return cores >= 4 ? Math.min(cores - 1, 8) : 0;
  }
  if (!/^\d+$/.test(text) || Number(text) > 64) throw new UsageError(`bad --workers '${text}': a whole number from 0 to 64`, command);
  return Number(text);
}

/** --max-memory: 1 MiB at least. */
function memoryLimit(values: Values, command: Command): Promise<number | undefined> {
  return sizeOption(values, command, "max-memory", codes.MEMORY_MIN_PAGES * 65536, "1MiB");
}

/** A time option: milliseconds since the trace started, not negative. */
function milliseconds(values: Values, name: string, command: Command): number | undefined {
  const text = values[name];
  if (typeof text !== "string") return undefined;
  const n = /^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(n)) throw new UsageError(`bad --${name} '${text}': milliseconds since the trace started, 0 or more`, command);
  return n;
}

const RECORD_FORMATS = ["jsonl", "json", "csv", "table", "names"];
const EVENT_FILTERS = ["provider", "event", "pid", "tid", "keywords", "level", "where", "from", "to", "time-order"];
const PERFVIEW_ONLY = ["edition", "no-container-id"];
const NAMES_ONLY = ["tracelog"];

interface EventsPlan {
  format: "jsonl" | "json" | "csv" | "table" | "perfview" | "names";
  /** names: leave out what TraceLog drops. */
  tracelog: boolean;
  filters: EventFilters;
  edition: "current" | "2020";
  containerId: boolean;
}

/** The events command's options, checked before the trace is read. */
function eventsPlan(values: Values): EventsPlan {
  const format = (values.format ?? "jsonl") as string;
  if (format !== "perfview" && !RECORD_FORMATS.includes(format)) {
    throw new UsageError(`unknown format: ${format} (jsonl, json, csv, table, perfview or names)`, "events");
  }
  const given = (names: string[]) => names.filter((k) => values[k] !== undefined);
  if (format === "perfview") {
    const misplaced = given(EVENT_FILTERS);
    if (misplaced.length) throw new UsageError(`--${misplaced[0]} does not apply to --format perfview (PerfView's text covers every event, in time order)`, "events");
  } else {
    const misplaced = given(PERFVIEW_ONLY);
    if (misplaced.length) throw new UsageError(`--${misplaced[0]} applies to --format perfview only`, "events");
  }
  if (format !== "names" && given(NAMES_ONLY).length) throw new UsageError("--tracelog applies to --format names only", "events");
  const edition = (values.edition ?? "current") as string;
  if (edition !== "current" && edition !== "2020") throw new UsageError(`unknown --edition: ${edition} (current or 2020)`, "events");
  const filters = eventFilters(values, "events", "to");
  // (names: TraceEvent's lists are in time order)
  if (format === "names") filters.timeOrder = true;
  return { format: format as EventsPlan["format"], filters, edition, containerId: values["no-container-id"] !== true, tracelog: values.tracelog === true };
}

/** The row filters of events and convert (`toName`: the option that ends the time range). */
function eventFilters(values: Values, command: Command, toName: "to" | "until"): EventFilters {
  const filters: EventFilters = {
    provider: values.provider as string | undefined,
    event: values.event as string | undefined,
    // 0xFFFFFFFF is the event table's "none" (records without a process, e.g. PERFINFO): not a filter value
    pid: wholeNumber(values, "pid", "a process id", 0, 0xfffffffe, command),
    tid: wholeNumber(values, "tid", "a thread id", 0, 0xfffffffe, command),
    from: milliseconds(values, "from", command),
    to: milliseconds(values, toName, command),
    timeOrder: values["time-order"] === true,
    keywords: keywordsOption(values.keywords, command),
    level: levelOption(values.level, command),
    where: whereOption(values.where, command),
  };
  if (filters.from !== undefined && filters.to !== undefined && filters.from > filters.to) {
    throw new UsageError(`--from ${values.from} is after --${toName} ${values[toName]}`, command);
  }
  return filters;
}

/** --where: payload conditions, parsed here so that a mistake is a usage error before the trace is read. */
function whereOption(text: unknown, command: Command): readonly WhereCondition[] | undefined {
  if (typeof text !== "string") return undefined;
  try {
    return parseWhere(text);
  } catch (error) {
    if (error instanceof WhereSyntaxError) throw new UsageError(`bad --where: ${error.message}`, command);
    throw error;
  }
}

function tableFormat(values: Values, command: Command): TableFormat {
  const f = (values.format ?? "table") as string;
  if (f !== "table" && f !== "csv" && f !== "json" && f !== "jsonl") throw new UsageError(`unknown format: ${f} (table, csv, json or jsonl)`, command);
  return f;
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
    await output().stdout(text);
  }
}

/** Whole percent of `part` in `total`, rounded down (100 only when all of it). */
function percent(part: number, total: number): number {
  return total > 0 ? Math.floor((100 * part) / total) : 100;
}

/** The line that says a trace was decoded only in part: where, how much of the file, and why. */
function stoppedLine(file: string, fileSize: number, decodedBytes: number, offset: number, message: string): string {
  return `etw-wasm: decoding stopped early at byte offset ${offset} (${percent(decodedBytes, fileSize)}% of ${file} read): ${message}`;
}

/** What info prints: a trace's, or a stream's end. */
type Described = { info: Trace["info"]; incomplete?: TraceIncomplete; warningTotal: number; warnings: readonly TraceWarning[]; files?: readonly TraceFile[]; eventPipeVersion?: number };

function infoLines(trace: Described): string[] {
  const i = trace.info;
  const complete = trace.incomplete ? `no (${trace.incomplete.reason} at byte offset ${trace.incomplete.offset}): ${trace.incomplete.message}` : "yes";
  if (trace.eventPipeVersion !== undefined) {
    // an EventPipe file: its Trace object stands for the header (no logger, buffers or boot time)
    const v = trace.eventPipeVersion;
    return [
      ["format", `EventPipe V${v} (${v <= 3 ? ".netperf" : ".nettrace"})`],
      ["start", i.startTime.toISOString()],
      ["end", i.endTime ? i.endTime.toISOString() : "-"],
      ["processors", `${i.numberOfProcessors}`],
      ["pointer size", `${i.pointerSize}`],
      ["clock", `${i.clockName}, ${i.perfFreq} Hz`],
      ["events lost", v <= 3 ? "unknown (a .netperf numbers no events)" : `${i.eventsLost} (by the capture threads' sequence numbers)`],
      ["records", `${i.eventCount}`],
      ["file size", `${i.fileSize}`],
      ["decoded", `${i.decodedBytes} bytes (${percent(i.decodedBytes, i.fileSize)}%)`],
      ["complete", complete],
      ["warnings", `${trace.warningTotal}`],
    ].map(([k, val]) => `${(k + ":").padEnd(15)}${val}`);
  }
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
    ["decoded", `${i.decodedBytes} bytes (${percent(i.decodedBytes, i.fileSize)}%)`],
    ["complete", complete],
    ["time zone", i.timeZone ? `${i.timeZone.standardName} (bias ${i.timeZone.bias} min)` : "-"],
    ["warnings", `${trace.warningTotal}`],
  ];
  // a session's files: each with its own records, start and clock
  if (trace.files && trace.files.length > 1) {
    trace.files.forEach((f, k) => lines.push([`file ${k + 1}`, `${f.name}: ${f.rowCount} records, ${f.info.bufferCount} buffers, start ${f.info.startTime.toISOString()}, ${f.info.loggerName || "-"}, clock ${f.clock}${f.complete ? "" : `, incomplete (${f.incomplete!.reason})`}`]));
  }
  return lines.map(([k, v]) => `${(k + ":").padEnd(15)}${v}`);
}

async function cmdInfo(trace: Described, out: Output) {
  for (const l of infoLines(trace)) await out.line(l);
  for (const w of trace.warnings.slice(0, 20)) await out.line(`warning at ${w.offset}: ${w.message}`);
}

async function cmdEvents(trace: Trace, out: Output, plan: EventsPlan) {
  if (plan.format === "perfview") {
    // an EventPipe file: the lines of PerfView's EventPipe baselines (one per name, its first event as XML)
    const lines = trace.eventPipeVersion !== undefined ? eventPipeBaselineLines(trace) : perfViewLines(trace, { edition: plan.edition, containerId: plan.containerId });
    for (const line of lines) await out.line(line);
    return;
  }
  const rows = selectEvents(trace, plan.filters);
  if (plan.format === "jsonl") {
    for (const row of trace.events.cursor(rows)) await out.line(JSON.stringify(row.toJSON()));
    return;
  }
  const records = function* () {
    for (const row of trace.events.cursor(rows)) yield eventRecord(row, row.index, row.pid === null ? "" : trace.processName(row.index));
  };
  await writeTable((l) => out.line(l), plan.format as TableFormat, EVENT_COLUMNS, plan.format === "table" ? [...records()] : records());
}

/**
 * The processes (for their names), from the kernel's Process and Thread events only: a streamed pass
 * through a decode-time filter, so the rest of the trace takes no memory.
 */
async function streamedProcesses(file: string | string[], options: StreamOptions): Promise<ProcessTable> {
  const collector = new ProcessCollector();
  for await (const b of await streamTraceFile(file, { ...options, onProgress: undefined, filter: PROCESS_EVENTS })) collector.scan(b, b.firstRow);
  return collector.result();
}

/** A file written through one handle, its directory made first. */
async function fileSink(path: string): Promise<TableSink> {
  await mkdir(dirname(path), { recursive: true });
  const handle = await open(path, "w");
  // writes go on while the next batch is made; a few at most are in flight
  let pending: Promise<unknown>[] = [];
  let position = 0;
  return {
    write: async (bytes) => {
      if (!bytes.length) return;
      // (each at its own position: writes in flight may finish in any order)
      pending.push(handle.write(bytes, 0, bytes.length, position));
      position += bytes.length;
      if (pending.length >= 4) await pending.shift();
    },
    writev: async (chunks) => {
      const n = chunks.reduce((k, c) => k + c.byteLength, 0);
      if (!n) return;
      pending.push(handle.writev(chunks, position));
      position += n;
      if (pending.length >= 4) await pending.shift();
    },
    settled: async () => {
      await Promise.all(pending);
    },
    close: async () => {
      await Promise.all(pending);
      pending = [];
      await handle.close();
    },
  };
}

/** The export libraries a format needs that cannot be found from here (they are optional peer dependencies). */
function missingExportPackages(format: "parquet" | "arrow"): string[] {
  const need: [string, string][] = [["apache-arrow", "apache-arrow"]];
  if (format === "parquet") need.push(["parquet-wasm", "parquet-wasm/esm"]);
  return need.filter(([, specifier]) => {
    try {
      import.meta.resolve(specifier);
      return false;
    } catch {
      return true;
    }
  }).map(([name]) => name);
}

class MissingPackagesError extends Error {}

async function cmdConvert(files: string[], values: Values): Promise<number> {
  const to = values.to;
  if (to !== "parquet" && to !== "arrow") {
    throw new UsageError(to === undefined ? "convert needs --to parquet or --to arrow" : `unknown --to: ${String(to)} (parquet or arrow)`, "convert");
  }
  const dir = values.out;
  if (typeof dir !== "string") throw new UsageError("convert needs -o DIR (the output directory)", "convert");
  const rowGroupRows = wholeNumber(values, "row-group-rows", "rows per Parquet row group", 1, 1 << 24, "convert");
  if (rowGroupRows !== undefined && to !== "parquet") throw new UsageError("--row-group-rows goes with --to parquet", "convert");
  const filters = eventFilters(values, "convert", "until");
  const filtered = Object.entries(filters).some(([k, v]) => k !== "timeOrder" && v !== undefined);
  const limit = await memoryLimit(values, "convert");
  const batchBytes = await sizeOption(values, "convert", "batch-size", 64 << 10, "64KiB");
  const workers = workerCount(values, "convert");
  const size = files.reduce((n, f) => n + statSync(f).size, 0);
  const missing = missingExportPackages(to);
  if (missing.length) throw new MissingPackagesError(`convert --to ${to} needs ${missing.map((m) => `"${m}"`).join(" and ")}, not installed (optional peer dependencies of etw-wasm): npm install ${missing.join(" ")}`);
  const { TraceConverter } = await import("etw-wasm/export");
  const converter = new TraceConverter({ format: to, sourceFiles: files.length > 1, open: (path) => fileSink(join(dir, path)), rowGroupRows });
  // several files: one session, merged; each batch's rows name their file
  const input = files.length === 1 ? files[0] : files;
  const label = files.join(" + ");
  let code = 0;
  const bar = process.stderr.isTTY && size > 8 << 20 && values["no-progress"] !== true ? progressBar(size) : undefined;
  const options = { onProgress: bar, memoryLimit: limit, batchBytes, workers };
  try {
    const processes = await streamedProcesses(input, options);
    const stream = await streamTraceFile(input, options);
    const select = filtered ? (t: Trace) => (filters.provider !== undefined && !t.providers.find(filters.provider).length ? new Uint32Array(0) : selectEvents(t, filters)) : undefined;
    await converter.add(stream, { processes, sourceFile: (b) => basename(files[b.file]), select });
    const end = stream.end!;
    bar?.end();
    const stop = end.incomplete;
    const told = (kind: string) => stop !== undefined && (kind === "capacity" || (kind === "truncated-buffer" && stop.reason === kind));
    for (const w of end.warnings.filter((x) => !told(x.kind)).slice(0, 5)) say(`etw-wasm: warning${w.file ? ` in ${w.file}` : ""} at byte ${w.offset}: ${w.message}`);
    if (stop) {
      say(stoppedLine(label, size, end.decodedBytes, stop.offset, stop.message));
      code = 1;
    }
  } catch (error) {
    bar?.end();
    if (error instanceof TraceDecodeError) {
      say(stoppedLine(label, size, error.offset, error.offset, error.reason));
      code = 1;
    } else throw error;
  }
  // what was written, one table a line
  for (const t of await converter.finish()) await output().stdout(`${join(dir, t.path)}\t${t.rows} rows\n`);
  return code;
}

async function cmdGenerate(out: string, values: Values): Promise<number> {
  const { generateTraceFile } = await import("etw-wasm/generator");
  const sizeText = (values.size ?? "64MiB") as string;
  let size: number;
  try {
    size = parseSize(sizeText);
  } catch (e) {
    throw new UsageError(`bad --size '${sizeText}': ${(e as Error).message} (e.g. 256MiB, 64MB, 1000000)`, "generate");
  }
  if (!(size >= 1) || !Number.isSafeInteger(size)) throw new UsageError(`bad --size '${sizeText}': at least 1 byte`, "generate");
  const pointerText = (values["pointer-size"] ?? "8") as string;
  if (pointerText !== "4" && pointerText !== "8") throw new UsageError(`bad --pointer-size '${pointerText}': 4 or 8`, "generate");
  const pointerSize = pointerText === "4" ? 4 : 8;
  const seed = wholeNumber(values, "seed", "the seed", 0, 0xffffffff, "generate") ?? 1;
  // The buffer header's processor number is one byte.
  const processors = wholeNumber(values, "processors", "the processor count", 1, 256, "generate") ?? 4;
  const formatText = values.format as string | undefined;
  if (formatText !== undefined && formatText !== "etl" && formatText !== "nettrace") throw new UsageError(`bad --format '${formatText}': etl or nettrace`, "generate");
  const nettrace = formatText ? formatText === "nettrace" : /\.nettrace$/i.test(out);
  const versionText = values["nettrace-version"] as string | undefined;
  if (versionText !== undefined && !nettrace) throw new UsageError("--nettrace-version is for a .nettrace (OUT.nettrace or --format nettrace)", "generate");
  if (versionText !== undefined && !/^[456]$/.test(versionText)) throw new UsageError(`bad --nettrace-version '${versionText}': 4, 5 or 6`, "generate");
  const t0 = performance.now();
  if (nettrace) {
    if (values.compress === true) throw new UsageError("--compress is for an .etl (a .nettrace's event headers are always compressed)", "generate");
    if (values.split === true) throw new UsageError("--split is for an .etl (a .nettrace is one file)", "generate");
    const { generateNettraceFile } = await import("etw-wasm/generator");
    const version = Number(versionText ?? "5") as 4 | 5 | 6;
    // --size is the file's: the content runs until the .nettrace has grown to it
    const summary = generateNettraceFile(out, { targetBytes: Infinity, fileBytes: size, pointerSize, seed, processors, samples: values.samples === true, version });
    say(`wrote ${out}: ${summary.bytes} bytes (nettrace V${version}, ${summary.events} events) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    return 0;
  }
  if (values.split === true) {
    const { generateSession } = await import("etw-wasm/generator");
    const { writeFile } = await import("node:fs/promises");
    const name = basename(out).replace(/\.etl$/i, "");
    for (const f of generateSession({ targetBytes: size, compress: values.compress === true, pointerSize, seed, processors, samples: values.samples === true, name })) {
      const path = join(dirname(out), f.name);
      await writeFile(path, f.bytes);
      say(`wrote ${path}: ${f.bytes.length} bytes`);
    }
    say(`in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    return 0;
  }
  const bytes = generateTraceFile(out, { targetBytes: size, compress: values.compress === true, pointerSize, seed, processors, samples: values.samples === true });
  say(`wrote ${out}: ${bytes} bytes in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return 0;
}

/**
 * What gc and methods read: the .NET runtime's events (the processes' names come from a pass of their
 * own). Filtered at decode time, so the rest of a big trace (CPU samples, stacks, I/O) takes no time
 * past the record walk and no memory.
 */
const DECODE_FILTER: Partial<Record<string, DecodeFilter>> = {
  gc: { provider: GC_PROVIDERS },
  methods: { provider: ["Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown"] },
  jit: { provider: JIT_PROVIDERS },
  cpu: { provider: CPU_PROVIDERS },
};

/** The files to read: those given, or with --merge-all the one given and its session's files beside it. */
async function traceFiles(given: string[], values: Values, command: Command): Promise<string[]> {
  // (a word after FILE that names no file is a mistake on the command line, not a missing trace)
  for (const extra of given.slice(1)) {
    if (!existsSync(extra)) throw new UsageError(`unexpected argument: ${extra} (no such file; several FILEs are the files of one session)`, command);
  }
  if (values["merge-all"] !== true) return given;
  if (given.length > 1) throw new UsageError("--merge-all takes one FILE (it finds the rest of the session)", command);
  statSync(given[0]);
  return sessionFiles(given[0]);
}

async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandLine(argv);
  if (parsed.command === "help") {
    await output().stdout(`${USAGE}\n`);
    return 0;
  }
  if (parsed.command === "generate") return cmdGenerate(parsed.out, parsed.values);
  const { command, values } = parsed;
  const files = await traceFiles(parsed.files, values, command);
  if (command === "convert") return cmdConvert(files, values);
  // (one file, or the files of a session: named together in what is said about them)
  const file = files.length === 1 ? files[0] : files.join(" + ");
  const input = files.length === 1 ? files[0] : files;
  // Every option is checked before the trace is read.
  const plan = command === "events" ? eventsPlan(values) : undefined;
  const format = command === "gc" || command === "methods" || command === "jit" ? tableFormat(values, command) : undefined;
  const doctorFmt = command === "doctor" ? doctorFormat(values.format) : undefined;
  const limit = await memoryLimit(values, command);
  const batchBytes = await sizeOption(values, command, "batch-size", 64 << 10, "64KiB");
  const workers = workerCount(values, command);
  const size = files.reduce((n, f) => n + statSync(f).size, 0);
  const follow = followOption(values, command, files);
  const bar = follow || !process.stderr.isTTY || size <= 8 << 20 || values["no-progress"] === true ? undefined : progressBar(size);
  const options = { onProgress: bar, memoryLimit: limit, batchBytes, workers, filter: DECODE_FILTER[command] };
  const out = new Output();
  const emit = (l: string) => out.line(l);
  // info, summary, gc, methods and events as jsonl, csv or json go batch by batch (in time order: the batches
  // waiting for the slowest processor are held); a table and perfview's lines need the whole trace
  const profile = command === "cpu" ? cpuPlan(values) : undefined;
  const stacksPlan = command === "stacks" ? stacksOptions(values) : undefined;
  // (cpu: folded and speedscope profiles in one pass over the batches; chrome's GC and JIT tracks from the trace held whole)
  const streams = command === "stacks" ? stacksPlan!.format === "folded" : command === "cpu" ? profile!.format !== "chrome" : command !== "events" || ["jsonl", "csv", "json", "names"].includes(plan!.format);
  if (follow && !streams) throw new UsageError(`--follow reads batch by batch: events --format ${plan!.format} needs the whole trace (jsonl, csv, json or names follow)`, command);
  // the processes (for their names), from the kernel's Process and Thread events only, through a decode-time filter
  // (following a file: from the batches of the one pass as they come)
  let processTable = () => streamedProcesses(input, options);
  let result: Pick<Trace, "warnings" | "incomplete" | "decodedBytes">;
  try {
    if (streams) {
      const stream = await streamTraceFile(input, follow ? { ...options, follow: follow.options } : options);
      if (follow) processTable = async () => follow.processes;
      if (follow) follow.watch(stream);
      if (command === "info") {
        for await (const _ of stream) { /* counted by the stream */ }
        await cmdInfo(stream.end!, out);
      } else if (command === "summary") await streamSummary(stream, emit, infoLines);
      else if (command === "doctor") await cmdDoctor(stream, emit, doctorFmt!);
      else if (command === "jit") {
        const processes = await processTable();
        const stats = await jitStats(stream, processes);
        if (values.summary === true) await writeTable(emit, format!, JIT_SUMMARY_COLUMNS, stats.map(jitSummaryRow));
        else await writeTable(emit, format!, JIT_COLUMNS, stats.flatMap((p) => p.Methods.map((m) => jitRow(p, m))));
      } else if (command === "gc") {
        const stats = await gcStats(stream, await processTable());
        const round = format === "table";
        if (values.rollup === true) await writeTable(emit, format!, [...GC_ROLLUP_COLUMNS], stats.flatMap((p) => gcRollupRows(p, round)));
        else await writeTable(emit, format!, [...GC_COLUMNS], stats.flatMap((p) => p.GCs.filter((g) => g.IsComplete).map((g) => gcRow(g, round))));
      } else if (command === "cpu") {
        await out.line(await writeCpuProfile(stream, file, profile!.format, profile!.out, profile!.pid));
      } else if (command === "stacks") {
        await foldedStacks(stream, out, stacksPlan!);
      } else if (command === "methods") {
        const processes = await processTable();
        const name = (pid: number, ts: bigint) => processes.processName(pid, ts);
        await writeTable(emit, format!, METHOD_COLUMNS, await methodRows(stream, name));
      } else {
        const named = plan!.format !== "jsonl" || plan!.filters.event !== undefined;
        // Names can come from descriptions the trace carries after the events they name, and csv and json
        // name each event's process: first passes gather the descriptions (every batch scanned, none kept)
        // and the processes (the kernel's Process and Thread events only, through a decode-time filter).
        let manifests: TraceManifests | undefined;
        if (named && !follow) {
          const collector = new ManifestCollector();
          for await (const b of await streamTraceFile(input, { ...options, onProgress: undefined })) collector.scan(b.events);
          manifests = collector.result;
        }
        const processes = plan!.format === "jsonl" || plan!.format === "names" ? undefined : await processTable();
        await streamEvents(stream, out, plan!, processes, manifests);
      }
      result = stream.end!;
    } else {
      const trace = await openTraceFile(input, options);
      // (what was written, on stdout as convert says it)
      if (profile) await out.line(await writeCpuProfile(trace, file, profile.format, profile.out, profile.pid));
      else if (stacksPlan) await cmdStacks(trace, out, stacksPlan);
      else await cmdEvents(trace, out, plan!);
      result = trace;
    }
  } catch (error) {
    // Nothing decoded at all: no records to write, only where and why.
    if (error instanceof TraceDecodeError) throw new StoppedError(stoppedLine(file, size, error.offset, error.offset, error.reason));
    throw error;
  } finally {
    bar?.end();
    follow?.end();
  }
  await out.flush();
  // What the stop line says is not repeated as a warning.
  const stop = result.incomplete;
  const told = (kind: string) => stop !== undefined && (kind === "capacity" || (kind === "truncated-buffer" && stop.reason === kind));
  for (const w of result.warnings.filter((x) => !told(x.kind)).slice(0, 5)) say(`etw-wasm: warning${w.file ? ` in ${w.file}` : ""} at byte ${w.offset}: ${w.message}`);
  if (!stop) return 0;
  if (follow?.stoppedBy) {
    say(`etw-wasm: stopped following ${file} (${follow.stoppedBy}) at byte offset ${stop.offset}, before the file's end: ${stop.message}`);
    return 1;
  }
  // (a followed file's size is what it has grown to)
  say(stoppedLine(file, follow ? statSync(files[0]).size : size, result.decodedBytes, stop.offset, stop.message));
  return 1;
}

/**
 * --follow: the stream's follow options (Ctrl-C ends it, --follow-idle too), a progress line of the
 * events so far, and the processes the batches describe, gathered as they pass (one pass: a file
 * being written cannot be read twice).
 */
function followOption(values: Values, command: Command, files: string[]) {
  const idle = values["follow-idle"];
  if (values.follow !== true) {
    if (idle !== undefined) throw new UsageError("--follow-idle goes with --follow", command);
    return undefined;
  }
  if (files.length > 1) throw new UsageError("--follow reads one file, not the files of a session", command);
  let idleMs: number | undefined;
  if (typeof idle === "string") {
    const seconds = /^\d+(\.\d+)?$/.test(idle) ? Number(idle) : NaN;
    if (!(seconds > 0)) throw new UsageError(`bad --follow-idle '${idle}': seconds, e.g. 5 or 0.5`, command);
    idleMs = seconds * 1000;
  }
  const controller = new AbortController();
  const state = { stoppedBy: undefined as string | undefined };
  const onInt = () => {
    state.stoppedBy = "Ctrl-C";
    controller.abort();
  };
  process.once("SIGINT", onInt);
  const collector = new ProcessCollector();
  let table: ProcessTable | undefined;
  const current = () => (table ??= collector.result());
  const processes: ProcessTable = {
    get processes() { return current().processes; },
    get threads() { return current().threads; },
    processName: (pid, ts) => current().processName(pid, ts),
    fixedName: (pid) => current().fixedName(pid),
    processAt: (pid, ts) => current().processAt(pid, ts),
    threadProcess: (tid, ts) => current().threadProcess(tid, ts),
    fixedThreadProcess: (tid) => current().fixedThreadProcess(tid),
  };
  // --follow-idle: the file's size looked at a few times a second; unchanged that long, the follow ends
  let size = -1, grewAt = Date.now();
  const timer = idleMs === undefined ? undefined : setInterval(() => {
    const now = statSync(files[0]).size;
    if (now !== size) {
      size = now;
      grewAt = Date.now();
    } else if (Date.now() - grewAt >= idleMs) {
      state.stoppedBy ??= `no growth for ${idle} s`;
      controller.abort();
    }
  }, Math.min(200, idleMs / 2));
  timer?.unref();
  const show = process.stderr.isTTY && values["no-progress"] !== true;
  let events = 0, shownAt = 0;
  return {
    options: { signal: controller.signal } satisfies FollowOptions,
    processes,
    get stoppedBy() {
      return state.stoppedBy;
    },
    /** Each batch, on its way to the command: counted, and its processes gathered. */
    watch(stream: TraceStream): void {
      const batches = stream[Symbol.asyncIterator].bind(stream);
      stream[Symbol.asyncIterator] = async function* () {
        for await (const b of batches()) {
          collector.scan(b, b.firstRow);
          table = undefined;
          events += b.events.length;
          if (show && performance.now() - shownAt > 100) {
            shownAt = performance.now();
            process.stderr.write(`\rfollowing ${files[0]}: ${events.toLocaleString("en-US")} events`);
          }
          yield b;
        }
      };
    },
    end(): void {
      process.removeListener("SIGINT", onInt);
      if (timer) clearInterval(timer);
      if (show) process.stderr.write(`\r${" ".repeat(Math.min(120, 30 + files[0].length))}\r`);
    },
  };
}

/** cpu's options: the format and output file are required. */
function cpuPlan(values: Values): { format: CpuFormat; out: string; pid: number | undefined } {
  const format = values.format;
  if (format === undefined) throw new UsageError(`cpu needs --format (${CPU_FORMATS.join(", ")})`, "cpu");
  if (!(CPU_FORMATS as readonly unknown[]).includes(format)) throw new UsageError(`unknown format: ${format} (${CPU_FORMATS.join(", ")})`, "cpu");
  if (typeof values.out !== "string") throw new UsageError("cpu needs -o OUT, the file to write", "cpu");
  return { format: format as CpuFormat, out: values.out, pid: wholeNumber(values, "pid", "a process id", 0, 0xffffffff, "cpu") };
}

interface StacksPlan {
  format: "text" | "jsonl" | "folded";
  event: string;
  pid: number | undefined;
  tid: number | undefined;
  where: readonly WhereCondition[] | undefined;
  /** folded: the payload field each event weighs (else 1), or "duration" (a Start to its Stop). */
  weight: string | undefined;
  /** --weight duration: the field that pairs a Stop with its Start (else the thread). */
  pairBy: string | undefined;
  invert: boolean;
}

function stacksOptions(values: Values): StacksPlan {
  const format = (values.format ?? "text") as string;
  if (format !== "text" && format !== "jsonl" && format !== "folded") throw new UsageError(`unknown format: ${format} (text, jsonl or folded)`, "stacks");
  if (typeof values.event !== "string") throw new UsageError("stacks needs --event NAME (e.g. Windows Kernel/PerfInfo/Sample)", "stacks");
  const weight = typeof values.weight === "string" ? values.weight : undefined;
  if ((weight !== undefined || values.invert === true) && format !== "folded") throw new UsageError("--weight and --invert go with --format folded", "stacks");
  if (weight !== undefined && !/^[A-Za-z_][\w.]*$/.test(weight)) throw new UsageError(`bad --weight '${weight}': a payload field's name, e.g. AllocationAmount, or duration`, "stacks");
  const pairBy = typeof values["pair-by"] === "string" ? values["pair-by"] : undefined;
  if (pairBy !== undefined && weight !== "duration") throw new UsageError("--pair-by goes with --weight duration", "stacks");
  return {
    format, event: values.event,
    pid: wholeNumber(values, "pid", "a process id", 0, 0xffffffff, "stacks"), tid: wholeNumber(values, "tid", "a thread id", 0, 0xffffffff, "stacks"),
    where: whereOption(values.where, "stacks"), weight, pairBy, invert: values.invert === true,
  };
}

/**
 * stacks --format folded: the events' stacks as collapsed stacks, each weighing 1 or its payload field,
 * in one pass over the batches (memory bounded by the events picked and the distinct stacks).
 */
async function foldedStacks(stream: TraceStream, out: Output, plan: StacksPlan): Promise<void> {
  const duration = plan.weight === "duration" ? { by: plan.pairBy } : undefined;
  const field = duration ? undefined : plan.weight;
  let missing = 0;
  const weight = field === undefined ? undefined : (row: EventRow) => {
    const v = row.get(field);
    if (typeof v === "number" || typeof v === "bigint") return Number(v);
    missing++;
    return NaN;
  };
  const select = (t: Trace) => selectEvents(t, { event: plan.event, pid: plan.pid, tid: plan.tid, where: plan.where });
  const w = await streamWeightedStacks(stream, { select, weight, duration, invert: plan.invert });
  if (!w.events) throw new UsageError(`no event ${plan.event} in this trace${plan.pid !== undefined || plan.tid !== undefined || plan.where ? " with those filters" : ""}`, "stacks");
  for (const [stack, n] of w.stacks) await out.line(`${stack} ${n}`);
  // (what was left out, on stderr: stdout is the folded text)
  const unit = duration ? "ms from Start to Stop" : field ? `of ${field}` : "";
  say(`${w.withStacks} of ${w.events} events with stacks${unit ? `${duration ? " and a Stop" : ""}, ${w.total} ${unit} in all` : ""}${missing ? `; ${missing} without a numeric ${field}, left out` : ""}`);
}

/** stacks: the events of one name with their stacks, frames named. */
async function cmdStacks(trace: Trace, out: Output, plan: StacksPlan): Promise<void> {
  const rows = selectEvents(trace, { event: plan.event, pid: plan.pid, tid: plan.tid, where: plan.where, timeOrder: true });
  // (no row: say so rather than print nothing)
  if (!rows.length) throw new UsageError(`no event ${plan.event} in this trace${plan.pid !== undefined || plan.tid !== undefined || plan.where ? " with those filters" : ""}`, "stacks");

  for await (const e of eventStacks(trace, rows)) {
    if (plan.format === "jsonl") {
      await out.line(JSON.stringify(e));
      continue;
    }
    await out.line(`${e.timeMSec.toFixed(3)} ${e.name} pid=${e.pid ?? ""} tid=${e.tid ?? ""}${e.stack ? "" : " (no stack)"}`);
    for (const f of e.stack ?? []) await out.line(`    ${f}`);
  }
}

/** events in file order (jsonl, csv, json), batch by batch. */
async function streamEvents(
  stream: TraceStream, out: Output, plan: EventsPlan, processes: ProcessTable | undefined, manifests: TraceManifests | undefined,
): Promise<void> {
  const { filters } = plan;
  const select = (t: Trace): Uint32Array => {
    if (manifests) setTraceManifests(t.events, manifests);
    // a provider not seen yet has no rows in this batch (providers keep their index from batch to batch)
    if (filters.provider !== undefined && !t.providers.find(filters.provider).length) return new Uint32Array(0);
    return selectEvents(t, { ...filters, timeOrder: false });
  };
  // runs of rows of one batch each: batch by batch in file order, or merged in time order across batches
  async function* runs(): AsyncGenerator<{ trace: Trace; firstRow: number; rows: Uint32Array }> {
    // (every format writes a run's rows out before asking for the next: a batch's copy can go once read)
    if (filters.timeOrder) yield* inTimeOrder(stream, { select, release: true });
    else for await (const batch of stream) yield { trace: batch, firstRow: batch.firstRow, rows: select(batch) };
    if (filters.provider !== undefined && !stream.end!.providers.find(filters.provider).length) {
      throw new UsageError(`no provider ${filters.provider} in this trace`, "events");
    }
  }
  if (plan.format === "jsonl") {
    for await (const { trace, rows } of runs()) for (const row of trace.events.cursor(rows)) await out.line(JSON.stringify(row.toJSON()));
    return;
  }
  if (plan.format === "names") {
    for await (const { trace, rows } of runs()) {
      for (const row of trace.events.cursor(rows)) if (!plan.tracelog || !isTraceLogBookkeeping(row)) await out.line(eventNameParts(row).event);
    }
    return;
  }
  async function* records(): AsyncGenerator<Record<string, unknown>> {
    for await (const { trace, firstRow, rows } of runs()) {
      for (const row of trace.events.cursor(rows)) {
        const process = row.pid === null ? "" : processes!.processName(row.pid, row.timestamp);
        yield eventRecord(row, firstRow + row.index, process);
      }
    }
  }
  await writeTable((l) => out.line(l), plan.format as TableFormat, EVENT_COLUMNS, records());
}

/** Decoding stopped before anything could be written: the message is the whole report (exit 1). */
class StoppedError extends Error {}

/**
 * Runs the command line `argv` (without the program name), writing to `to` (the process's streams by
 * default): the exit code (0, 1 for a decode that stopped or a file it cannot read, 2 for a usage error).
 * One command at a time.
 */
export async function runCli(argv: string[], to: CliOutput = processOutput): Promise<number> {
  const before = setOutput(to);
  try {
    return await main(argv);
  } catch (error) {
    const errno = error as NodeJS.ErrnoException;
    if (error instanceof UsageError) {
      say(`etw-wasm: ${error.message}\n${usageOf(error.command as Command | undefined)}`);
    } else if (error instanceof StoppedError) say(error.message);
    else if (error instanceof TraceFormatError || error instanceof MissingPackagesError) say(`etw-wasm: ${error.message}`);
    else if (error instanceof Error && error.name === "MissingPackageError") say(error.message);
    else if (errno?.code === "ENOENT") say(`etw-wasm: no such file: ${errno.path}`);
    else if (typeof errno?.code === "string" && errno.syscall) say(`etw-wasm: ${errno.message}`);
    // Anything else is a fault of etw-wasm itself: keep the stack for the report.
    else say(`etw-wasm: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    return error instanceof UsageError ? 2 : 1;
  } finally {
    setOutput(before);
  }
}

// Run as the program (the bin, or node on this file), not when imported.
if (process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  // A closed pipe (etw-wasm events … | head) ends the output quietly.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    throw e;
  });
  runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
