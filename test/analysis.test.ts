// .NET analyses against values derived by hand from the raw events: JIT statistics pair each jitted
// Method/LoadVerbose with the Method/JittingStarted of the same method id on the same thread (an
// independent rule from the analysis' "newest open method of the thread"), in the trace's time order.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { openTrace, streamTrace, ProcessCollector, type Trace } from "../dist/bindings/index.js";
import { jitStats, type JitProcess } from "../dist/bindings/analysis/index.js";
import { HAVE_CORPUS, etlPath } from "./helpers/shared.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
const RUNTIME = "Microsoft-Windows-DotNETRuntime";

interface Expected {
  pid: number;
  name: string;
  ms: number;
  il: number;
  native: number;
  tier: number;
}

/** Jitted methods by hand: LoadVerbose (jitted flag) after a JittingStarted of its MethodID on its thread. */
function byHand(t: Trace): Expected[] {
  const open = new Map<string, { ms: number; il: number }>();
  const out: Expected[] = [];
  for (const row of t.query({ provider: RUNTIME, eventId: [143, 145], order: "time" })) {
    const key = `${row.pid}:${row.tid}:${row.get("MethodID")}`;
    if (row.eventId === 145) {
      open.set(key, { ms: row.relativeMSec, il: Number(row.get("MethodILSize")) });
      continue;
    }
    const flags = Number(row.get("MethodFlags"));
    if (!(flags & 8)) continue;
    const started = open.get(key);
    open.delete(key);
    const sig = String(row.get("MethodSignature"));
    out.push({
      pid: row.pid!,
      name: `${row.get("MethodNamespace")}.${row.get("MethodName")}${sig.includes("(") ? sig.slice(sig.indexOf("(")) : ""}`,
      ms: started ? row.relativeMSec - started.ms : 0,
      il: started?.il ?? 0,
      native: Number(row.get("MethodSize")),
      tier: (flags >> 7) & 7,
    });
  }
  return out;
}

function completed(stats: JitProcess[]): Expected[] {
  const tiers = ["Unknown", "MinOptJitted", "Optimized", "QuickJitted", "OptimizedTier1", "OptimizedTier1OSR", "QuickJittedInstrumented", "OptimizedTier1Instrumented"];
  return stats.flatMap((p) => p.Methods.filter((m) => m.IsCompleted).map((m) => ({
    pid: p.PID, name: m.MethodName, ms: m.CompileCpuTimeMSec, il: m.ILSize, native: m.NativeSize, tier: tiers.indexOf(m.OptimizationTier),
  })));
}

const sortKey = (e: Expected) => `${e.pid}:${e.name}:${e.native}`;

describe("JIT statistics", () => {
  // (the sample's methods are loaded, not jitted)
  const files: [string, string][] = HAVE_CORPUS ? [["net.4.5.2.x64.etl", etlPath("net.4.5.2.x64.etl")], ["net.4.5.x86.etl", etlPath("net.4.5.x86.etl")]] : [];

  it.skipIf(!HAVE_CORPUS)("every jitted method with its JIT time, IL and native size and tier, as derived by hand; totals their sums", async () => {
    for (const [name, path] of files) {
      const t = await openTrace(readFileSync(path));
      const want = byHand(t).sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1));
      expect(want.length, name).toBeGreaterThan(0);
      const stats = await jitStats(t);
      const got = completed(stats).sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1));
      expect(got.length, name).toBe(want.length);
      for (let i = 0; i < want.length; i++) {
        expect({ ...got[i], ms: Number(got[i].ms.toFixed(6)) }, `${name} ${want[i].name}`).toEqual({ ...want[i], ms: Number(want[i].ms.toFixed(6)) });
      }
      for (const p of stats) {
        const mine = want.filter((w) => w.pid === p.PID);
        expect(p.Totals.Count, name).toBe(mine.length);
        expect(p.Totals.TotalCpuTimeMSec, name).toBeCloseTo(mine.reduce((n, w) => n + w.ms, 0), 6);
        expect(p.Totals.TotalNativeSize, name).toBe(mine.reduce((n, w) => n + w.native, 0));
        expect(p.ByKind.Foreground.Count + p.ByKind.TieredCompilationBackground.Count + p.ByKind.MulticoreJitBackground.Count, name).toBe(p.Totals.Count);
        const first = t.query({ provider: [RUNTIME, "Microsoft-Windows-DotNETRuntimeRundown"], pid: p.PID, order: "time" }).indices[0];
        expect(p.ProcessName, name).toBe(t.processes.processName(p.PID, t.events.timestamp[first]));
      }
      // the same from a stream of small batches (time order merged across batches)
      const collector = new ProcessCollector();
      for await (const b of streamTrace(readFileSync(path), { batchBytes: 64 << 10 })) collector.scan(b, b.firstRow);
      const streamed = await jitStats(streamTrace(readFileSync(path), { batchBytes: 64 << 10 }), collector.result());
      expect(JSON.stringify(streamed, (_, v) => (typeof v === "bigint" ? String(v) : v)), name)
        .toBe(JSON.stringify(stats, (_, v) => (typeof v === "bigint" ? String(v) : v)));
      t.dispose();
    }
  }, 120_000);

  it.skipIf(!HAVE_CORPUS)("module paths from the loader events; etw-wasm jit prints the methods and --summary the totals", async () => {
    const path = etlPath("net.4.5.2.x64.etl");
    const t = await openTrace(readFileSync(path));
    const stats = await jitStats(t);
    // a method's module: the ModuleILPath of a loader event of its ModuleID
    const modules = new Map<string, string>();
    for (const row of t.query({ provider: [RUNTIME, "Microsoft-Windows-DotNETRuntimeRundown"] })) {
      const path2 = row.get("ModuleILPath");
      if (path2 !== undefined && row.get("ModuleID") !== undefined) modules.set(`${row.pid}:${row.get("ModuleID")}`, String(path2));
    }
    let named = 0;
    for (const p of stats) for (const m of p.Methods) {
      if (!m.ModuleILPath) continue;
      named++;
      expect(m.ModuleILPath).toBe(modules.get(`${p.PID}:${m.ModuleID}`));
    }
    expect(named).toBeGreaterThan(0);
    const rows = execFileSync(process.execPath, [CLI, "jit", path, "--format", "jsonl"], { encoding: "utf8" }).trim().split("\n").map((l) => JSON.parse(l));
    expect(rows.length).toBe(stats.reduce((n, p) => n + p.Methods.length, 0));
    expect(Object.keys(rows[0])).toEqual(["PID", "ProcessName", "MethodName", "StartTimeMSec", "CompileCpuTimeMSec", "ILSize", "NativeSize", "OptimizationTier", "CompilationThreadKind", "ModuleILPath", "ThreadID", "VersionID", "IsCompleted"]);
    const summary = execFileSync(process.execPath, [CLI, "jit", path, "--summary", "--format", "jsonl"], { encoding: "utf8" }).trim().split("\n").map((l) => JSON.parse(l));
    expect(summary.map((r) => [r.PID, r.Count])).toEqual(stats.map((p) => [p.PID, p.Totals.Count]));
    t.dispose();
  }, 60_000);
});
