// etw-wasm gc: GC statistics as PerfView's GCStats, one row per complete GC, or rolled up per process.

import { GC_PROVIDERS, gcStats, type GcProcess, type GcRecord } from "etw-wasm/analysis";
import { FOLLOW, FORMAT, READS_TRACE, tableFormat } from "../args.js";
import { traceCommand } from "../command.js";
import { fixed3, writeTable } from "../write-table.js";

/** The keys of a GC as the gc command prints it: TraceEvent's TraceGC property names. */
const GC_COLUMNS = [
  "PID",
  "ProcessName",
  "Number",
  "Generation",
  "Reason",
  "Type",
  "PauseStartRelativeMSec",
  "SuspendDurationMSec",
  "PauseDurationMSec",
  "DurationMSec",
  "HeapSizeBeforeMB",
  "HeapSizeAfterMB",
  "HeapSizePeakMB",
  "PromotedMB",
  "AllocedSinceLastGCMB",
  "AllocRateMBSec",
  "RatioPeakAfter",
  "PauseTimePercentageSinceLastGC",
] as const;

/** Numbers to 3 decimals for an aligned table (as its text); other formats keep every digit. */
const tableNumber = (round: boolean) => (v: unknown) => (round && typeof v === "number" && !Number.isInteger(v) ? fixed3(v) : v);

/** One complete GC with GC_COLUMNS' keys (set one by one: a list of pairs a GC cost more than the row). */
function gcRow(gc: GcRecord, round = false): Record<string, unknown> {
  const n = tableNumber(round);
  const row: Record<string, unknown> = {};
  for (const k of GC_COLUMNS) row[k] = n(gc[k]);
  return row;
}

/** The gc --rollup columns: PerfView's "GC Rollup By Generation", with TraceEvent's names, per process. */
const GC_ROLLUP_COLUMNS = [
  "PID",
  "ProcessName",
  "Gen",
  "Count",
  "MaxPauseDurationMSec",
  "MaxSizePeakMB",
  "MaxAllocRateMBSec",
  "TotalPauseTimeMSec",
  "TotalAllocatedMB",
  "AllocMBPerMSecGC",
  "MeanPauseDurationMSec",
  "NumInduced",
  "TotalPromotedMB",
  "MeanSizePeakMB",
  "MeanSizeAfterMB",
  "GCPauseTimePercentage",
  "HeapCount",
] as const;

/** A process's rollup rows: ALL, then generations 0, 1 and 2 (complete GCs only). */
function gcRollupRows(p: GcProcess, round = false): Record<string, unknown>[] {
  const n = tableNumber(round);
  return (["ALL", "0", "1", "2"] as const).map((gen, k) => {
    const r = k === 0 ? p.Total : p.Generations[k - 1];
    const row: Record<string, unknown> = {
      PID: p.PID,
      ProcessName: p.ProcessName,
      Gen: gen,
      Count: r.Count,
      MaxPauseDurationMSec: r.MaxPauseDurationMSec,
      MaxSizePeakMB: r.MaxSizePeakMB,
      MaxAllocRateMBSec: r.MaxAllocRateMBSec,
      TotalPauseTimeMSec: r.TotalPauseTimeMSec,
      TotalAllocatedMB: r.TotalAllocatedMB,
      // PerfView divides the process's whole allocation by each row's pause
      AllocMBPerMSecGC: r.TotalPauseTimeMSec ? p.Total.TotalAllocatedMB / r.TotalPauseTimeMSec : 0,
      MeanPauseDurationMSec: r.MeanPauseDurationMSec,
      NumInduced: r.NumInduced,
      TotalPromotedMB: r.TotalPromotedMB,
      MeanSizePeakMB: r.MeanSizePeakMB,
      MeanSizeAfterMB: r.MeanSizeAfterMB,
      GCPauseTimePercentage: p.GCPauseTimePercentage,
      HeapCount: p.HeapCount,
    };
    for (const key of Object.keys(row)) row[key] = n(row[key]);
    return row;
  });
}

export const gc = traceCommand({
  name: "gc",
  help: `  gc FILE [--format F]           GC statistics as PerfView's GCStats: one row per complete .NET garbage
                                 collection with TraceEvent's TraceGC names (pause, duration, heap sizes,
                                 promoted, allocated, rates); --rollup: per process, all and by generation`,
  options: { ...READS_TRACE, ...FORMAT, ...FOLLOW, rollup: { type: "boolean" } },
  operand: "FILE",
  filter: { provider: GC_PROVIDERS },
  plan: (values) => ({ format: tableFormat(values, "gc"), rollup: values.rollup === true }),
  streams: () => true,
  namesAtEnd: true,
  async stream(stream, { format, rollup }, run) {
    const stats = await gcStats(stream, await run.processes());
    const round = format === "table";
    const emit = (l: string) => run.line(l);
    if (rollup)
      await writeTable(
        emit,
        format,
        [...GC_ROLLUP_COLUMNS],
        stats.flatMap((p) => gcRollupRows(p, round)),
      );
    else
      await writeTable(
        emit,
        format,
        [...GC_COLUMNS],
        // (row by row: a row is let go once written, where an array of them all lived to be promoted)
        (function* () {
          for (const p of stats) for (const g of p.GCs) if (g.IsComplete) yield gcRow(g, round);
        })(),
      );
  },
});
