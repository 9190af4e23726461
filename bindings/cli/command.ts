// What a command is to the program (etw-wasm.ts): its usage lines, the options it takes, and how it
// runs. A command that reads a trace says what it reads (a decode-time filter), checks its options
// into a plan before anything is read, and says whether the plan goes batch by batch (a stream) or
// needs the trace whole; the program opens the file(s) either way and reports how decoding ended.

import {
  ProcessCollector,
  PROCESS_EVENTS,
  streamTraceFile,
  type DecodeFilter,
  type ProcessTable,
  type StreamOptions,
  type Trace,
  type TraceBatch,
  type TraceStream,
} from "etw-wasm/node";
import { output } from "./io.js";
import { Lines } from "./write-table.js";
import type { OptionSpecs, Values } from "./args.js";

/** A command with a run of its own: generate (writes a file), convert (its own report). */
export interface OwnCommand {
  readonly name: string;
  /** Its lines of the usage text. */
  readonly help: string;
  readonly options: OptionSpecs;
  /** What follows the command: an OUT file (generate), or the FILEs of a trace (convert). */
  readonly operand: "OUT" | "FILE";
  /** The exit code. `operands`: the OUT file, or the trace's files (a session's, with --merge-all). */
  run(operands: string[], values: Values): Promise<number>;
}

/** A command that reads a trace; `P` is its plan, its options checked. */
export interface TraceCommand<P = unknown> {
  readonly name: string;
  readonly help: string;
  readonly options: OptionSpecs;
  readonly operand: "FILE";
  /** The records it needs, filtered at decode time (the rest of a big trace then takes no memory). */
  readonly filter?: DecodeFilter;
  /** Its options checked (UsageError for a mistake), before the trace is read. */
  plan(values: Values): P;
  /** Whether the plan reads batch by batch (`stream`), else the trace whole (`whole`). */
  streams(plan: P): boolean;
  /**
   * A streaming command that reads process names only once the stream has been read (`run.processes()`
   * asked for early, read late): the names then come from the stream's own batches (its filter takes
   * the Process and Thread events too), with no pass of their own over the file.
   */
  readonly namesAtEnd?: boolean;
  stream?(stream: TraceStream, plan: P, run: TraceRun): Promise<void>;
  whole?(trace: Trace, plan: P, run: TraceRun): Promise<void>;
}

export type Command = OwnCommand | TraceCommand<never>;

/** What a trace command is given to run with. */
export interface TraceRun {
  /** The file, or the files of a session joined by " + ": how the trace is named in what is said. */
  readonly label: string;
  /** What streamTraceFile and openTraceFile take: the file, or a session's files. */
  readonly input: string | string[];
  /** The decode options (progress, memory limit, batch size, workers, the command's filter). */
  readonly options: StreamOptions;
  /** A file being followed (--follow): read once, so no pass of its own for the processes or names. */
  readonly following: boolean;
  /** Writes a line of output. */
  line(text: string): Promise<void> | void;
  /** The trace's processes, for their names (a pass of their own; following, from the batches read). */
  processes(): Promise<ProcessTable>;
}

/** Writes lines to stdout in large batches, honouring backpressure. */
export class Output {
  private readonly to = output();
  private readonly lines = new Lines((text) => this.to.stdout(text + "\n"), this.to.stdoutBytes && ((bytes) => this.to.stdoutBytes!(bytes)));
  /** A promise when the lines went out (to wait for), else nothing: a wait a line was a tenth of a long output. */
  line(s: string): Promise<void> | void {
    if (s.length < 1 << 16) return this.lines.add(s);
    // (lines gathered already, as a table writes them: out as they are, after those before)
    const before = this.lines.flush();
    const after = this.to.stdout(s + "\n");
    return Promise.all([before, after]).then(() => undefined);
  }
  flush(): Promise<void> {
    return this.lines.flush();
  }
}

/**
 * The processes a stream's batches describe, gathered as they pass on their way to a command
 * (`tap`); `processes` reads them, made again after each batch (read it once the stream has ended, or
 * where names so far will do: a file being followed).
 */
export class ProcessTap {
  private readonly collector = new ProcessCollector();
  private table: ProcessTable | undefined;
  readonly processes: ProcessTable;

  constructor() {
    const current = () => (this.table ??= this.collector.result());
    this.processes = {
      get processes() {
        return current().processes;
      },
      get threads() {
        return current().threads;
      },
      processName: (pid, ts) => current().processName(pid, ts),
      fixedName: (pid) => current().fixedName(pid),
      processAt: (pid, ts) => current().processAt(pid, ts),
      threadProcess: (tid, ts) => current().threadProcess(tid, ts),
      fixedThreadProcess: (tid) => current().fixedThreadProcess(tid),
    };
  }

  /** Each batch of `stream`, when the command reads it, scanned first (then `each`). */
  tap(stream: TraceStream, each?: (batch: TraceBatch) => void): void {
    const batches = stream[Symbol.asyncIterator].bind(stream);
    const self = this;
    stream[Symbol.asyncIterator] = async function* () {
      for await (const b of batches()) {
        self.collector.scan(b, b.firstRow);
        self.table = undefined;
        each?.(b);
        yield b;
      }
    };
  }
}

/**
 * A command's decode-time filter with the Process and Thread events added (what ProcessTap reads), or
 * undefined when it cannot be said as one filter (anything but providers).
 */
export function withProcessEvents(filter: DecodeFilter | undefined): DecodeFilter | undefined {
  if (!filter) return filter;
  if (Object.keys(filter).some((k) => k !== "provider") || filter.provider === undefined) return undefined;
  const providers = Array.isArray(filter.provider) ? filter.provider : [filter.provider as string];
  return { provider: [...providers, ...PROCESS_EVENTS.provider] };
}

/** Whole percent of `part` in `total`, rounded down (100 only when all of it). */
export function percent(part: number, total: number): number {
  return total > 0 ? Math.floor((100 * part) / total) : 100;
}

/** The line that says a trace was decoded only in part: where, how much of the file, and why. */
export function stoppedLine(file: string, fileSize: number, decodedBytes: number, offset: number, message: string): string {
  return `etw-wasm: decoding stopped early at byte offset ${offset} (${percent(decodedBytes, fileSize)}% of ${file} read): ${message}`;
}

/**
 * The processes (for their names), from the kernel's Process and Thread events only: a streamed pass
 * through a decode-time filter, so the rest of the trace takes no memory.
 */
export async function streamedProcesses(file: string | string[], options: StreamOptions): Promise<ProcessTable> {
  const collector = new ProcessCollector();
  for await (const b of await streamTraceFile(file, { ...options, onProgress: undefined, filter: PROCESS_EVENTS })) collector.scan(b, b.firstRow);
  return collector.result();
}

/** What the warnings of a decode that stopped leave out: what its stop line says. */
export function toldByStop(stop: { reason: string } | undefined): (kind: string) => boolean {
  return (kind) => stop !== undefined && (kind === "capacity" || (kind === "truncated-buffer" && stop.reason === kind));
}

/** The command's options and its plan type, checked by the compiler (a TraceCommand<P> as a Command). */
export function traceCommand<P>(c: TraceCommand<P>): TraceCommand<never> {
  return c as unknown as TraceCommand<never>;
}

/** A command cannot go on (exit 1): its message is said as "etw-wasm: message". */
export class CommandError extends Error {}

/** Decoding stopped before anything could be written: the message is the whole report (exit 1). */
export class StoppedError extends Error {}
