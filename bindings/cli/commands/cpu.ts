// etw-wasm cpu: a CPU profile from the kernel's CPU samples and their stacks, frames named as PerfView
// names them, for speedscope, flame graph tools (folded stacks), Chrome and Perfetto.

import { closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { basename, extname } from "node:path";
import type { Trace, TraceStream } from "etw-wasm/node";
import { cpuProfile, gcStats, jitStats, streamCpuProfile, toChromeTrace, foldedFile, speedscopeFile, type TimelineSlice } from "etw-wasm/analysis";
import { FORMAT, READS_TRACE, UsageError, wholeNumber } from "../args.js";
import { traceCommand } from "../command.js";

const CPU_FORMATS = ["speedscope", "folded", "chrome"] as const;
type CpuFormat = (typeof CPU_FORMATS)[number];

/** What cpu decodes: the samples, their stacks, what names frames, the processes, GCs and JIT for Chrome's tracks. */
const CPU_PROVIDERS = [
  "Windows Kernel/PerfInfo",
  "Windows Kernel/StackWalk",
  "Windows Kernel/Image",
  "Windows Kernel/Process",
  "Windows Kernel/Thread",
  "Microsoft-Windows-DotNETRuntime",
  "Microsoft-Windows-DotNETRuntimeRundown",
  "Microsoft-Windows-DotNETRuntimePrivate",
];

/**
 * Writes a CPU profile of `source` to `out`; returns the line to print (what was written). A stream
 * is profiled in one pass (streamCpuProfile); the chrome format, with its GC and JIT tracks, reads a
 * trace held whole.
 */
async function writeCpuProfile(source: Trace | TraceStream, file: string, format: CpuFormat, out: string, pid: number | undefined): Promise<string> {
  const streamed = Symbol.asyncIterator in source;
  if (streamed && format === "chrome") throw new Error("the chrome format reads a trace held whole");
  const profile = streamed ? await streamCpuProfile(source, { pid }) : cpuProfile(source, { pid });
  let text: string | Uint8Array[];
  if (format === "folded") text = foldedFile(profile);
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
          pid: p.PID,
          tid: -1,
          category: "GC",
          name: `GC #${g.Number} ${g.GCGenerationName} ${g.Reason}`,
          startMSec: g.PauseStartRelativeMSec,
          durationMSec: g.PauseDurationMSec,
          args: {
            Number: g.Number,
            Generation: g.Generation,
            Reason: g.Reason,
            Type: g.Type,
            PauseDurationMSec: g.PauseDurationMSec,
            DurationMSec: g.DurationMSec,
            HeapSizeBeforeMB: g.HeapSizeBeforeMB,
            HeapSizeAfterMB: g.HeapSizeAfterMB,
          },
        });
      }
    }
    for (const p of await jitStats(trace)) {
      if (pid !== undefined && p.PID !== pid) continue;
      names.set(p.PID, p.ProcessName);
      for (const m of p.Methods) {
        if (!m.IsCompleted) continue;
        slices.push({
          pid: p.PID,
          tid: m.ThreadID,
          category: "JIT",
          name: `JIT ${m.MethodName}`,
          startMSec: m.StartTimeMSec,
          durationMSec: m.CompileCpuTimeMSec,
          args: { ILSize: m.ILSize, NativeSize: m.NativeSize, OptimizationTier: m.OptimizationTier },
        });
      }
    }
    for (const samplePid of profile.samples.pid)
      if (!names.has(samplePid)) names.set(samplePid, trace.processes.processName(samplePid, trace.events.timestamp[0] ?? 0n));
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

export const cpu = traceCommand({
  name: "cpu",
  help: `  cpu FILE --format F -o OUT     a CPU profile from the kernel's CPU samples and their stacks, frames named
                                 as PerfView names them (managed methods from the runtime's events)
      --format speedscope|folded|chrome   speedscope's file format; collapsed stacks (flame graph
                                 tools); Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing:
                                 samples per thread, GC pauses and JIT compilations)
      --pid N                    only this process's samples`,
  options: { ...READS_TRACE, ...FORMAT, pid: { type: "string" }, out: { type: "string", short: "o" } },
  operand: "FILE",
  filter: { provider: CPU_PROVIDERS },
  /** The format and output file are required. */
  plan(values): { format: CpuFormat; out: string; pid: number | undefined } {
    const format = values.format;
    if (format === undefined) throw new UsageError(`cpu needs --format (${CPU_FORMATS.join(", ")})`, "cpu");
    if (!(CPU_FORMATS as readonly unknown[]).includes(format)) throw new UsageError(`unknown format: ${format} (${CPU_FORMATS.join(", ")})`, "cpu");
    if (typeof values.out !== "string") throw new UsageError("cpu needs -o OUT, the file to write", "cpu");
    return { format: format as CpuFormat, out: values.out, pid: wholeNumber(values, "pid", "a process id", 0, 0xffffffff, "cpu") };
  },
  // (folded and speedscope profiles in one pass over the batches; chrome's GC and JIT tracks from the trace held whole)
  streams: (plan) => plan.format !== "chrome",
  async stream(stream, plan, run) {
    await run.line(await writeCpuProfile(stream, run.label, plan.format, plan.out, plan.pid));
  },
  async whole(trace, plan, run) {
    // (what was written, on stdout as convert says it)
    await run.line(await writeCpuProfile(trace, run.label, plan.format, plan.out, plan.pid));
  },
});
