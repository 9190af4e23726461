// etw-wasm jit: JIT statistics as PerfView's JITStats, one row per jitted method, or totals per process.

import { JIT_PROVIDERS, jitStats, type JitProcess, type JittedMethod } from "etw-wasm/analysis";
import { FOLLOW, FORMAT, READS_TRACE, tableFormat } from "../args.js";
import { traceCommand } from "../command.js";
import { writeTable } from "../write-table.js";

const JIT_COLUMNS = [
  "PID",
  "ProcessName",
  "MethodName",
  "StartTimeMSec",
  "CompileCpuTimeMSec",
  "ILSize",
  "NativeSize",
  "OptimizationTier",
  "CompilationThreadKind",
  "ModuleILPath",
  "ThreadID",
  "VersionID",
  "IsCompleted",
];

/** One jitted method as the jit command prints it. */
function jitRow(p: JitProcess, m: JittedMethod): Record<string, unknown> {
  return {
    PID: p.PID,
    ProcessName: p.ProcessName,
    MethodName: m.MethodName,
    StartTimeMSec: Number(m.StartTimeMSec.toFixed(3)),
    CompileCpuTimeMSec: Number(m.CompileCpuTimeMSec.toFixed(3)),
    ILSize: m.ILSize,
    NativeSize: m.NativeSize,
    OptimizationTier: m.OptimizationTier,
    CompilationThreadKind: m.CompilationThreadKind,
    ModuleILPath: m.ModuleILPath,
    ThreadID: m.ThreadID,
    VersionID: m.VersionID,
    IsCompleted: m.IsCompleted,
  };
}

const JIT_SUMMARY_COLUMNS = [
  "PID",
  "ProcessName",
  "Count",
  "TotalCpuTimeMSec",
  "TotalILSize",
  "TotalNativeSize",
  "ForegroundCount",
  "ForegroundMSec",
  "MulticoreJitBackgroundCount",
  "MulticoreJitBackgroundMSec",
  "TieredCompilationBackgroundCount",
  "TieredCompilationBackgroundMSec",
];

/** A process's JIT totals (completed methods) as jit --summary prints them. */
function jitSummaryRow(p: JitProcess): Record<string, unknown> {
  const ms = (x: number) => Number(x.toFixed(3));
  const k = p.ByKind;
  return {
    PID: p.PID,
    ProcessName: p.ProcessName,
    Count: p.Totals.Count,
    TotalCpuTimeMSec: ms(p.Totals.TotalCpuTimeMSec),
    TotalILSize: p.Totals.TotalILSize,
    TotalNativeSize: p.Totals.TotalNativeSize,
    ForegroundCount: k.Foreground.Count,
    ForegroundMSec: ms(k.Foreground.TotalCpuTimeMSec),
    MulticoreJitBackgroundCount: k.MulticoreJitBackground.Count,
    MulticoreJitBackgroundMSec: ms(k.MulticoreJitBackground.TotalCpuTimeMSec),
    TieredCompilationBackgroundCount: k.TieredCompilationBackground.Count,
    TieredCompilationBackgroundMSec: ms(k.TieredCompilationBackground.TotalCpuTimeMSec),
  };
}

export const jit = traceCommand({
  name: "jit",
  help: `  jit FILE [--format F]          JIT statistics as PerfView's JITStats: one row per jitted method (JIT time,
                                 IL and native size, tier, trigger, module); --summary: per process totals`,
  options: { ...READS_TRACE, ...FORMAT, ...FOLLOW, summary: { type: "boolean" } },
  operand: "FILE",
  filter: { provider: JIT_PROVIDERS },
  plan: (values) => ({ format: tableFormat(values, "jit"), summary: values.summary === true }),
  streams: () => true,
  namesAtEnd: true,
  async stream(stream, { format, summary }, run) {
    const stats = await jitStats(stream, await run.processes());
    const emit = (l: string) => run.line(l);
    if (summary) await writeTable(emit, format, JIT_SUMMARY_COLUMNS, stats.map(jitSummaryRow));
    else
      await writeTable(
        emit,
        format,
        JIT_COLUMNS,
        stats.flatMap((p) => p.Methods.map((m) => jitRow(p, m))),
      );
  },
});
