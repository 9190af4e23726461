#!/usr/bin/env node
// etw-wasm command line, on the public API only: the commands (one module each in commands/), the
// usage text, the command line parsed against each command's options, and the run of a command that
// reads a trace (streamed or whole, with progress, --follow, and the report of how decoding ended).

import { existsSync, realpathSync, statSync } from "node:fs";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import {
  openTraceFile,
  streamTraceFile,
  sessionFiles,
  TraceDecodeError,
  TraceFormatError,
  type Trace,
  type TraceStream,
  type FollowOptions,
} from "etw-wasm/node";
import { output, processOutput, progressBar, say, setOutput, type CliOutput } from "./io.js";
import { UsageError, decodeOptions, type OptionSpecs, type Values } from "./args.js";
import {
  CommandError,
  Output,
  ProcessTap,
  StoppedError,
  stoppedLine,
  streamedProcesses,
  toldByStop,
  withProcessEvents,
  type Command,
  type TraceCommand,
  type TraceRun,
} from "./command.js";
import { info } from "./commands/info.js";
import { summary } from "./commands/summary.js";
import { doctor } from "./commands/doctor.js";
import { events } from "./commands/events.js";
import { gc } from "./commands/gc.js";
import { methods } from "./commands/methods.js";
import { jit } from "./commands/jit.js";
import { cpu } from "./commands/cpu.js";
import { stacks } from "./commands/stacks.js";
import { convert } from "./commands/convert.js";
import { generate } from "./commands/generate.js";

/** The commands, in the order the usage text lists them. */
const COMMANDS: readonly Command[] = [info, summary, doctor, events, gc, methods, jit, cpu, stacks, convert, generate];
const BY_NAME = new Map(COMMANDS.map((c) => [c.name, c]));

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
${COMMANDS.map((c) => c.help).join("\n")}
${OPTIONS_HELP}

A trace that could not be decoded to its end (cut short, out of memory, a failure part way) gives
every record decoded before that point, then one line on stderr saying where decoding stopped, and
exit code 1.

exit codes: 0 done, 1 the input could not be read as a trace or only in part, 2 bad arguments`;

/** The usage lines for one command (all of them when the command is not known). */
function usageOf(name: string | undefined): string {
  const command = name === undefined ? undefined : BY_NAME.get(name);
  if (!command) return USAGE;
  const reads = command.operand === "OUT" ? "" : `\n${READ_HELP}`;
  return `usage of etw-wasm ${command.name}:\n${command.help}${reads}\n(etw-wasm --help describes every command)`;
}

const ALL_OPTIONS: OptionSpecs = Object.assign({}, ...COMMANDS.map((c) => c.options));

type Parsed = { command: "help" } | { command: Command; operands: string[]; values: Values };

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
function describeParseError(command: string, error: Error & { code?: string }): string {
  const option = /'(-{1,2}[^' ]+?)(?: <value>)?'/.exec(error.message)?.[1] ?? "";
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const name = option.replace(/^-+/, "");
    const owners = COMMANDS.filter((c) => c.name !== command && Object.hasOwn(c.options, name)).map((c) => c.name);
    if (owners.length && option.startsWith("--")) return `${command} has no option ${option} (an option of ${owners.join(", ")})`;
    const hint = option.startsWith("--") ? closest(name, Object.keys(BY_NAME.get(command)!.options)) : undefined;
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
  const cmd = BY_NAME.get(name);
  if (!cmd) throw new UsageError(`unknown command: ${name}`);
  const command = cmd.name;
  const options = cmd.options;
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
  if (target === undefined) throw new UsageError(`${command} needs ${cmd.operand === "OUT" ? "an OUT file" : "a FILE"}`, command);
  const values = parsed.values as Values;
  if (cmd.operand === "FILE") return { command: cmd, operands: [target, ...extra], values };
  if (extra.length) throw new UsageError(`unexpected argument: ${extra[0]}`, command);
  return { command: cmd, operands: [target], values };
}

/** The files to read: those given, or with --merge-all the one given and its session's files beside it. */
async function traceFiles(given: string[], values: Values, command: string): Promise<string[]> {
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
  const { command, values } = parsed;
  if (command.operand === "OUT") return command.run(parsed.operands, values);
  const files = await traceFiles(parsed.operands, values, command.name);
  if (!("plan" in command)) return command.run(files, values);
  return readTrace(command, files, values);
}

/** Runs a command that reads a trace: its options checked, the trace read (streamed or whole), how decoding ended said. */
async function readTrace(command: TraceCommand<never>, files: string[], values: Values): Promise<number> {
  // (one file, or the files of a session: named together in what is said about them)
  const label = files.length === 1 ? files[0] : files.join(" + ");
  const input = files.length === 1 ? files[0] : files;
  // Every option is checked before the trace is read.
  const plan = command.plan(values);
  const decode = decodeOptions(values, command.name);
  const size = files.reduce((n, f) => n + statSync(f).size, 0);
  const follow = followOption(values, command.name, files);
  const streams = command.streams(plan);
  const bar = follow || !process.stderr.isTTY || size <= 8 << 20 || values["no-progress"] === true ? undefined : progressBar(size);
  // (a command that reads names only at the end gathers them from its own pass, as following a file does)
  const namesFilter = streams && command.namesAtEnd ? withProcessEvents(command.filter) : undefined;
  const gathered = namesFilter && !follow ? new ProcessTap() : undefined;
  const options = { onProgress: bar, ...decode, filter: namesFilter ?? command.filter };
  const out = new Output();
  const run: TraceRun = {
    label,
    input,
    options,
    following: follow !== undefined,
    line: (text) => out.line(text),
    // the processes (for their names), from the kernel's Process and Thread events only, through a decode-time filter
    // (following a file, or for a command that reads names at the end: from the batches of the one pass as they come)
    processes: follow ? async () => follow.processes : gathered ? async () => gathered.processes : () => streamedProcesses(input, options),
  };
  let result: Pick<Trace, "warnings" | "incomplete" | "decodedBytes">;
  try {
    if (streams) {
      const stream = await streamTraceFile(input, follow ? { ...options, follow: follow.options } : options);
      follow?.watch(stream);
      gathered?.tap(stream);
      await command.stream!(stream, plan, run);
      result = stream.end!;
    } else {
      const trace = await openTraceFile(input, options);
      await command.whole!(trace, plan, run);
      result = trace;
    }
  } catch (error) {
    // Nothing decoded at all: no records to write, only where and why.
    if (error instanceof TraceDecodeError) throw new StoppedError(stoppedLine(label, size, error.offset, error.offset, error.reason));
    throw error;
  } finally {
    bar?.end();
    follow?.end();
  }
  await out.flush();
  // What the stop line says is not repeated as a warning.
  const stop = result.incomplete;
  const told = toldByStop(stop);
  for (const w of result.warnings.filter((x) => !told(x.kind)).slice(0, 5))
    say(`etw-wasm: warning${w.file ? ` in ${w.file}` : ""} at byte ${w.offset}: ${w.message}`);
  if (!stop) return 0;
  if (follow?.stoppedBy) {
    say(`etw-wasm: stopped following ${label} (${follow.stoppedBy}) at byte offset ${stop.offset}, before the file's end: ${stop.message}`);
    return 1;
  }
  // (a followed file's size is what it has grown to)
  say(stoppedLine(label, follow ? statSync(files[0]).size : size, result.decodedBytes, stop.offset, stop.message));
  return 1;
}

/**
 * --follow: the stream's follow options (Ctrl-C ends it, --follow-idle too), a progress line of the
 * events so far, and the processes the batches describe, gathered as they pass (one pass: a file
 * being written cannot be read twice).
 */
function followOption(values: Values, command: string, files: string[]) {
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
  const names = new ProcessTap();
  // --follow-idle: the file's size looked at a few times a second; unchanged that long, the follow ends
  let size = -1,
    grewAt = Date.now();
  const timer =
    idleMs === undefined
      ? undefined
      : setInterval(
          () => {
            const now = statSync(files[0]).size;
            if (now !== size) {
              size = now;
              grewAt = Date.now();
            } else if (Date.now() - grewAt >= idleMs) {
              state.stoppedBy ??= `no growth for ${idle} s`;
              controller.abort();
            }
          },
          Math.min(200, idleMs / 2),
        );
  timer?.unref();
  const show = process.stderr.isTTY && values["no-progress"] !== true;
  let events = 0,
    shownAt = 0;
  return {
    options: { signal: controller.signal } satisfies FollowOptions,
    processes: names.processes,
    get stoppedBy() {
      return state.stoppedBy;
    },
    /** Each batch, on its way to the command: counted, and its processes gathered. */
    watch(stream: TraceStream): void {
      names.tap(stream, (b) => {
        events += b.events.length;
        if (show && performance.now() - shownAt > 100) {
          shownAt = performance.now();
          process.stderr.write(`\rfollowing ${files[0]}: ${events.toLocaleString("en-US")} events`);
        }
      });
    },
    end(): void {
      process.removeListener("SIGINT", onInt);
      if (timer) clearInterval(timer);
      if (show) process.stderr.write(`\r${" ".repeat(Math.min(120, 30 + files[0].length))}\r`);
    },
  };
}

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
      say(`etw-wasm: ${error.message}\n${usageOf(error.command)}`);
    } else if (error instanceof StoppedError) say(error.message);
    else if (error instanceof TraceFormatError || error instanceof CommandError) say(`etw-wasm: ${error.message}`);
    else if (error instanceof Error && error.name === "MissingPackageError") say(error.message);
    else if (errno?.code === "ENOENT") say(`etw-wasm: no such file: ${errno.path}`);
    else if (typeof errno?.code === "string" && errno.syscall) say(`etw-wasm: ${errno.message}`);
    // Anything else is a fault of etw-wasm itself: keep the stack for the report.
    else say(`etw-wasm: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
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
