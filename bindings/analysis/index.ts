// etw-wasm/analysis: what PerfView computes from .NET runtime events, on a whole trace or a stream.

import { Trace } from "../trace.js";
import type { TraceStream } from "../stream.js";
import { inTimeOrder } from "../stream-order.js";
import type { ProcessTable } from "../tables/processes.js";
import { JIT_PROVIDERS, JitComputer, type JitProcess } from "./jit.js";

export { JitComputer, JIT_PROVIDERS, OPTIMIZATION_TIERS, type JitProcess, type JittedMethod, type JitTotals, type CompilationThreadKind } from "./jit.js";

/**
 * JIT statistics per process (TraceEvent's JITStats): every method jitted, with its JIT time, IL and
 * native sizes, tier and module, and the process's totals by compilation thread kind and by module.
 * A stream is read in time order across its batches; `processes` names its processes (a stream's
 * own process table needs a pass of its own: ProcessCollector); a trace names them itself.
 */
export async function jitStats(source: Trace | TraceStream, processes?: ProcessTable): Promise<JitProcess[]> {
  if (source instanceof Trace) {
    const table = processes ?? source.processes;
    const computer = new JitComputer((pid, ts) => table.processName(pid, ts));
    for (const row of source.query({ provider: JIT_PROVIDERS, order: "time" })) computer.add(row);
    return computer.result();
  }
  const computer = new JitComputer((pid, ts) => processes?.processName(pid, ts) ?? `Process(${pid})`);
  const select = (t: Trace) => (JIT_PROVIDERS.some((p) => t.providers.find(p).length) ? t.query({ provider: JIT_PROVIDERS }).indices : new Uint32Array(0));
  for await (const run of inTimeOrder(source, { select })) for (const row of run.trace.events.cursor(run.rows)) computer.add(row);
  return computer.result();
}
