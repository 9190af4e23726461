// The etw-wasm commands on call stacks: cpu (CPU profiles for speedscope, flame graph tools, Chrome and
// Perfetto) and stacks (events with their resolved stacks). Both hold the trace whole: compressed
// stacks are defined by events that can come at the very end, and so are the methods that name frames.

import { closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { basename, extname } from "node:path";
import type { Trace, TraceStream } from "etw-wasm/node";
import {
  attachStacks, cpuProfile, gcStats, jitStats, streamCpuProfile, toChromeTrace, toFolded, speedscopeFile, type TimelineSlice,
} from "etw-wasm/analysis";

export const CPU_FORMATS = ["speedscope", "folded", "chrome"] as const;
export type CpuFormat = (typeof CPU_FORMATS)[number];

/** What cpu decodes: the samples, their stacks, what names frames, the processes, GCs and JIT for Chrome's tracks. */
export const CPU_PROVIDERS = [
  "Windows Kernel/PerfInfo", "Windows Kernel/StackWalk", "Windows Kernel/Image", "Windows Kernel/Process", "Windows Kernel/Thread",
  "Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown", "Microsoft-Windows-DotNETRuntimePrivate",
];

/**
 * Writes a CPU profile of `source` to `out`; returns the line to print (what was written). A stream
 * is profiled in one pass (streamCpuProfile); the chrome format, with its GC and JIT tracks, reads a
 * trace held whole.
 */
export async function writeCpuProfile(source: Trace | TraceStream, file: string, format: CpuFormat, out: string, pid: number | undefined): Promise<string> {
  const streamed = Symbol.asyncIterator in source;
  if (streamed && format === "chrome") throw new Error("the chrome format reads a trace held whole");
  const profile = streamed ? await streamCpuProfile(source, { pid }) : cpuProfile(source, { pid });
  let text: string | Uint8Array[];
  if (format === "folded") text = toFolded(profile);
  else if (format === "speedscope") text = speedscopeFile(profile, basename(out, extname(out)));
  else {
    const trace = source as Trace;
    const slices: TimelineSlice[] = [];
    const names = new Map<number, string>();
    for (const p of await gcStats(trace)) {
      if (pid !== undefined && p.PID !== pid) continue;
      names.set(p.PID, p.ProcessName);
      for (const g of p.GCs) {
        if (!g.IsComplete) continue;
        // a track of its own per process (tid -1): a GC pauses every thread
        slices.push({
          pid: p.PID, tid: -1, category: "GC", name: `GC #${g.Number} ${g.GCGenerationName} ${g.Reason}`, startMSec: g.PauseStartRelativeMSec,
          durationMSec: g.PauseDurationMSec, args: { Number: g.Number, Generation: g.Generation, Reason: g.Reason, Type: g.Type, PauseDurationMSec: g.PauseDurationMSec, DurationMSec: g.DurationMSec, HeapSizeBeforeMB: g.HeapSizeBeforeMB, HeapSizeAfterMB: g.HeapSizeAfterMB },
        });
      }
    }
    for (const p of await jitStats(trace)) {
      if (pid !== undefined && p.PID !== pid) continue;
      names.set(p.PID, p.ProcessName);
      for (const m of p.Methods) {
        if (!m.IsCompleted) continue;
        slices.push({ pid: p.PID, tid: m.ThreadID, category: "JIT", name: `JIT ${m.MethodName}`, startMSec: m.StartTimeMSec, durationMSec: m.CompileCpuTimeMSec, args: { ILSize: m.ILSize, NativeSize: m.NativeSize, OptimizationTier: m.OptimizationTier } });
      }
    }
    for (const samplePid of profile.samples.pid) if (!names.has(samplePid)) names.set(samplePid, trace.processes.processName(samplePid, trace.events.timestamp[0] ?? 0n));
    text = JSON.stringify(toChromeTrace(profile, slices, names));
  }
  if (typeof text === "string") writeFileSync(out, text);
  else {
    const fd = openSync(out, "w");
    try {
      for (const chunk of text) for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at);
    } finally {
      closeSync(fd);
    }
  }
  const kept = profile.samples.length;
  return `${file}: ${kept} CPU samples (${profile.samplesWithStacks} with stacks; left out: ${profile.idleSamples} idle${pid === undefined ? "" : `, ${profile.otherSamples} of other processes`}), ${profile.samples.weightMSec ? "weighed by thread time" : `${profile.intervalMSec} ms each`} -> ${out} (${format})`;
}

/** Events named `event` (as `events --event`), each with its stack's frames leaf first (row.callStack). */
export async function* eventStacks(trace: Trace, rows: Uint32Array): AsyncGenerator<{ row: number; name: string; timeMSec: number; pid: number | null; tid: number | null; stack: string[] | null }> {
  attachStacks(trace);
  for (const row of trace.events.cursor(rows)) {
    yield { row: row.index, name: row.name, timeMSec: row.relativeMSec, pid: row.pid, tid: row.tid, stack: row.callStack };
  }
}
