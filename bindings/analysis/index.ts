// etw-wasm/analysis: what PerfView computes from .NET runtime events, on a whole trace or a stream.

import { Trace } from "../trace.js";
import type { TraceStream } from "../stream.js";
import type { EventRow, EventTable } from "../tables/event-table.js";
import { inTimeOrder } from "../stream-order.js";
import type { ClrTable } from "../tables/clr-tables.js";
import type { ProcessTable } from "../tables/processes.js";
import { JIT_EVENT_IDS, JIT_PROVIDERS, JitComputer, type JitProcess } from "./jit.js";
import { GC_EVENT_IDS, GC_PROVIDERS, GcComputer, type GcProcess } from "./gc.js";

export {
  JitComputer,
  JIT_PROVIDERS,
  OPTIMIZATION_TIERS,
  type JitProcess,
  type JitProcessValues,
  type JittedMethod,
  type JittedMethodValues,
  type JitTotals,
  type CompilationThreadKind,
} from "./jit.js";
export {
  GcComputer,
  GC_PROVIDERS,
  GC_EVENT_IDS,
  GC_REASONS,
  GC_TYPES,
  gcGenerationName,
  type GcProcess,
  type GcProcessValues,
  type GcRecord,
  type GcRecordValues,
  type GcRollup,
} from "./gc.js";
export {
  DoctorCollector,
  traceDoctor,
  formatDoctor,
  doctorJson,
  type DoctorReport,
  type DoctorFinding,
  type DoctorProcess,
  type DoctorStatus,
} from "./doctor.js";

type ProcessName = (pid: number, timestamp: bigint) => string;

/**
 * Feeds a computer the events of `providers` in the trace's time order: a trace's own, or a stream's
 * across its batches. A stream's processes are named by `processes`, read only once the stream has
 * ended (a table gathered from the same stream's batches as they pass will do: ProcessCollector); a
 * trace names them itself.
 */
async function replay<T>(
  source: Trace | TraceStream,
  providers: string[],
  eventIds: number[],
  processes: ProcessTable | undefined,
  make: (name: ProcessName) => Computer<T>,
): Promise<T> {
  // (the ids the computer reads, of any of the providers: it tells them apart itself)
  const filter = { provider: providers, eventId: eventIds };
  if (source instanceof Trace) {
    const table = processes ?? source.processes;
    const computer = make((pid, ts) => table.processName(pid, ts));
    feed(computer, source.events, source.query({ ...filter, order: "time" }).indices, source.tables);
    return computer.result();
  }
  const computer = make((pid, ts) => processes?.processName(pid, ts) ?? `Process(${pid})`);
  const select = (t: Trace) => (providers.some((p) => t.providers.find(p).length) ? t.query(filter).indices : new Uint32Array(0));
  // (the computers take numbers and strings out of each row at once: a batch need not be copied while it is
  // the stream's, and its rows still held after that are copied alone)
  for await (const run of inTimeOrder(source, { select, release: true, keep: "rows" })) feed(computer, run.trace.events, run.rows, run.trace.tables);
  return computer.result();
}

interface Computer<T> {
  add(row: EventRow): void;
  addRows?(table: EventTable, rows: Uint32Array, typed?: readonly ClrTable[]): void;
  result(): T;
}

/** `rows` of `table` to a computer: all at once where it takes them so (no row object per event). */
function feed(computer: Computer<unknown>, table: EventTable, rows: Uint32Array, typed: readonly ClrTable[]): void {
  if (computer.addRows) computer.addRows(table, rows, typed);
  else for (const row of table.cursor(rows)) computer.add(row);
}

/**
 * JIT statistics per process (TraceEvent's JITStats): every method jitted, with its JIT time, IL and
 * native sizes, tier and module, and the process's totals by compilation thread kind and by module.
 */
export function jitStats(source: Trace | TraceStream, processes?: ProcessTable): Promise<JitProcess[]> {
  return replay(source, JIT_PROVIDERS, JIT_EVENT_IDS, processes, (name) => new JitComputer(name));
}

/**
 * GC statistics per process (TraceEvent's GCStats): every GC with TraceGC's values (pause, duration,
 * heap sizes before, after and at peak, promoted, allocated, allocation rate, pause percentage), and
 * the rollup of the complete ones, in all and by generation.
 */
export function gcStats(source: Trace | TraceStream, processes?: ProcessTable): Promise<GcProcess[]> {
  return replay(source, GC_PROVIDERS, GC_EVENT_IDS, processes, (name) => new GcComputer(name));
}

export { SymbolMap, SYMBOL_PROVIDERS, fullMethodName, moduleFileName, type ResolvedFrame, type FrameKind, type SymbolMapOptions } from "./symbols.js";
export { StackAttacher, StackTable, isKernelAddress } from "./stacks.js";
export {
  cpuProfile,
  streamCpuProfile,
  CpuCollector,
  weightedStacks,
  streamWeightedStacks,
  StackWeightCollector,
  traceStacks,
  attachStacks,
  frameNamer,
  stackNames,
  toFolded,
  foldedFile,
  speedscopeFile,
  toSpeedscope,
  toChromeTrace,
  type CpuProfile,
  type CpuSamples,
  type WeightedStacks,
  type WeightOptions,
  type CpuOptions,
  type TraceStacks,
  type NameStacks,
  type TimelineSlice,
} from "./cpu.js";
