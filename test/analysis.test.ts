// .NET analyses against values derived by hand from the raw events: JIT statistics pair each jitted
// Method/LoadVerbose with the Method/JittingStarted of the same method id on the same thread (an
// independent rule from the analysis' "newest open method of the thread"), in the trace's time order.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { openTrace, streamTrace, ProcessCollector, type Trace } from "../dist/bindings/index.js";
import { gcStats, jitStats, JitComputer, JIT_PROVIDERS, type JitProcess } from "../dist/bindings/analysis/index.js";
import { CORPUS, HAVE_CORPUS, etlPath } from "./helpers/shared.js";
import { join } from "node:path";
import { EtlWriter, PayloadBuilder } from "../dist/bindings/generator/etl-writer.js";

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
  const tiers = [
    "Unknown",
    "MinOptJitted",
    "Optimized",
    "QuickJitted",
    "OptimizedTier1",
    "OptimizedTier1OSR",
    "QuickJittedInstrumented",
    "OptimizedTier1Instrumented",
  ];
  return stats.flatMap((p) =>
    p.Methods.filter((m) => m.IsCompleted).map((m) => ({
      pid: p.PID,
      name: m.MethodName,
      ms: m.CompileCpuTimeMSec,
      il: m.ILSize,
      native: m.NativeSize,
      tier: tiers.indexOf(m.OptimizationTier),
    })),
  );
}

const sortKey = (e: Expected) => `${e.pid}:${e.name}:${e.native}`;

describe("JIT statistics", () => {
  // (the sample's methods are loaded, not jitted)
  const files: [string, string][] = HAVE_CORPUS
    ? [
        ["net.4.5.2.x64.etl", etlPath("net.4.5.2.x64.etl")],
        ["net.4.5.x86.etl", etlPath("net.4.5.x86.etl")],
      ]
    : [];

  it.skipIf(!HAVE_CORPUS)(
    "every jitted method with its JIT time, IL and native size and tier, as derived by hand; totals their sums",
    async () => {
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
          expect(p.Totals.TotalCpuTimeMSec, name).toBeCloseTo(
            mine.reduce((n, w) => n + w.ms, 0),
            6,
          );
          expect(p.Totals.TotalNativeSize, name).toBe(mine.reduce((n, w) => n + w.native, 0));
          expect(p.ByKind.Foreground.Count + p.ByKind.TieredCompilationBackground.Count + p.ByKind.MulticoreJitBackground.Count, name).toBe(p.Totals.Count);
          const first = t.query({ provider: [RUNTIME, "Microsoft-Windows-DotNETRuntimeRundown"], pid: p.PID, order: "time" }).indices[0];
          expect(p.ProcessName, name).toBe(t.processes.processName(p.PID, t.events.timestamp[first]));
        }
        // the same from a stream of small batches (time order merged across batches)
        const collector = new ProcessCollector();
        for await (const b of streamTrace(readFileSync(path), { batchBytes: 64 << 10 })) collector.scan(b, b.firstRow);
        const streamed = await jitStats(streamTrace(readFileSync(path), { batchBytes: 64 << 10 }), collector.result());
        expect(
          JSON.stringify(streamed, (_, v) => (typeof v === "bigint" ? String(v) : v)),
          name,
        ).toBe(JSON.stringify(stats, (_, v) => (typeof v === "bigint" ? String(v) : v)));
        t.dispose();
      }
    },
    120_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "module paths from the loader events; etw-wasm jit prints the methods and --summary the totals",
    async () => {
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
      for (const p of stats)
        for (const m of p.Methods) {
          if (!m.ModuleILPath) continue;
          named++;
          expect(m.ModuleILPath).toBe(modules.get(`${p.PID}:${m.ModuleID}`));
        }
      expect(named).toBeGreaterThan(0);
      const rows = execFileSync(process.execPath, [CLI, "jit", path, "--format", "jsonl"], { encoding: "utf8" })
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(rows.length).toBe(stats.reduce((n, p) => n + p.Methods.length, 0));
      expect(Object.keys(rows[0])).toEqual([
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
      ]);
      const summary = execFileSync(process.execPath, [CLI, "jit", path, "--summary", "--format", "jsonl"], { encoding: "utf8" })
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(summary.map((r) => [r.PID, r.Count])).toEqual(stats.map((p) => [p.PID, p.Totals.Count]));
      t.dispose();
    },
    60_000,
  );
});

// ---------------------------------------------------------------------------------------------------
// GC statistics, derived by hand: each GC is a window of its process's raw runtime events (the
// suspension before its first GC/Start, its GC/Stop, HeapStats and RestartEEStop), its heap histories
// read from their payload bytes here, and TraceGC's formulas applied to those numbers.

const PRIVATE = "Microsoft-Windows-DotNETRuntimePrivate";
const MB = 1e6;

interface Raw {
  id: number;
  priv: boolean;
  version: number;
  ms: number;
  tid: number;
  bytes: DataView;
  pointerSize: number;
}

interface GcByHand {
  pid: number;
  Number: number;
  Generation: number;
  Reason: number;
  Type: number;
  PauseStartRelativeMSec: number;
  SuspendDurationMSec: number;
  PauseDurationMSec: number;
  DurationMSec: number;
  HeapSizeBeforeMB: number;
  HeapSizeAfterMB: number;
  HeapSizePeakMB: number;
  PromotedMB: number;
  AllocedSinceLastGCMB: number;
  AllocRateMBSec: number;
  RatioPeakAfter: number;
  PauseTimePercentageSinceLastGC: number;
  heapStatsMs: number;
}

/** Pointer-sized slots of a per-heap history payload: ten per generation, gen0 first (versions 0 and 2). */
function genSlots(e: Raw, gen: number): number[] {
  const p = e.pointerSize;
  return Array.from({ length: 10 }, (_, i) => {
    const at = (gen * 10 + i) * p;
    return p === 8 ? Number(e.bytes.getBigInt64(at, true)) : e.bytes.getUint32(at, true);
  });
}

/** A .NET 4.5 (version 2) per-heap history: object space before and object size after, gen0 and LOH. */
function heapHistory(e: Raw): { sizeBefore: number[]; objBefore: number[]; objAfter: number[] } | undefined {
  const s = 10 * e.pointerSize;
  if (e.version === 2 && ![5 * s + 33, 5 * s + 25].includes(e.bytes.byteLength)) return undefined;
  if (e.version === 2) {
    const gens = [0, 1, 2, 3].map((g) => genSlots(e, g));
    return {
      sizeBefore: gens.map((x) => x[0]),
      objBefore: gens.map((x) => x[0] - x[1] - x[2]),
      objAfter: gens.map((x) => x[3] - (x[4] + x[5])),
    };
  }
  // version 3: after ClrInstanceID, six pointers, six 32-bit fields, a pointer and Count (the generations: 5 with the POH)
  const start = 2 + 7 * e.pointerSize + 6 * 4 + 4;
  const count = e.bytes.getUint32(start - 4, true);
  const gens = Array.from({ length: count }, (_, g) => g).map((g) =>
    Array.from({ length: 10 }, (_, i) => {
      const at = start + (g * 10 + i) * e.pointerSize;
      return e.pointerSize === 8 ? Number(e.bytes.getBigInt64(at, true)) : e.bytes.getUint32(at, true);
    }),
  );
  return { sizeBefore: gens.map((x) => x[0]), objBefore: gens.map((x) => x[0] - x[1] - x[2]), objAfter: gens.map((x) => x[3] - (x[4] + x[5])) };
}

function gcByHand(t: Trace): GcByHand[] {
  const byPid = new Map<number, Raw[]>();
  for (const row of t.query({ provider: [RUNTIME, PRIVATE], order: "time" })) {
    const p = row.payload;
    const list = byPid.get(row.pid!) ?? [];
    byPid.set(row.pid!, list);
    list.push({
      id: row.eventId,
      priv: row.name.startsWith(PRIVATE),
      version: row.version,
      ms: row.relativeMSec,
      tid: row.tid!,
      bytes: new DataView(p.buffer, p.byteOffset, p.length),
      pointerSize: row.pointerSize,
    });
  }
  const out: GcByHand[] = [];
  for (const [pid, events] of byPid) {
    const rt = (e: Raw, id: number) => !e.priv && e.id === id;
    const gcs: (GcByHand & { hist: ReturnType<typeof heapHistory>[]; ticks: number[] })[] = [];
    let lastHeapStatsMs = 0;
    let counted = -1;
    for (let i = 0; i < events.length; i++) {
      const start = events[i];
      if (!rt(start, 1)) continue;
      const count = start.bytes.getUint32(0, true);
      if (count === counted) continue; // the second GC/Start of .NET 4.5
      counted = count;
      const suspendAt = events.findLastIndex((e, k) => k < i && rt(e, 9) && [1, 6].includes(e.bytes.getUint32(0, true)));
      if (suspendAt < 0) continue;
      const suspend = events[suspendAt];
      const suspendStop = events.find((e, k) => k > suspendAt && rt(e, 8) && e.tid === suspend.tid)!;
      const stopAt = events.findIndex((e, k) => k > i && rt(e, 2));
      const heapAt = events.findIndex((e, k) => k > i && rt(e, 4));
      const restartAt = events.findIndex((e, k) => k > stopAt && rt(e, 3) && e.tid === suspend.tid);
      expect(
        [stopAt, heapAt, restartAt].every((k) => k > i),
        `pid ${pid} GC ${count} complete`,
      ).toBe(true);
      const heap = events[heapAt];
      const sizes = [0, 1, 2, 3].map((g) => Number(heap.bytes.getBigUint64(16 * g, true)));
      const promoted = [0, 1, 2, 3].map((g) => Number(heap.bytes.getBigUint64(16 * g + 8, true)));
      if (heap.bytes.byteLength >= 110) {
        sizes.push(Number(heap.bytes.getBigUint64(94, true)));
        promoted.push(Number(heap.bytes.getBigUint64(102, true)));
      }
      // allocation ticks since the previous HeapStats, small and other kinds
      const ticks = [0, 0];
      for (const e of events) {
        if (!rt(e, 10) || e.ms <= lastHeapStatsMs || e.ms > heap.ms) continue;
        const amount64 = e.version >= 2 ? Number(e.bytes.getBigInt64(10, true)) : 0;
        ticks[e.bytes.getUint32(4, true) === 0 ? 0 : 1] += (amount64 || e.bytes.getInt32(0, true)) / MB;
      }
      const hist = events
        .filter((e, k) => k > i && k < restartAt && ((e.priv && e.id === 4) || (!e.priv && e.id === 204)))
        .map(heapHistory)
        .filter((h) => h);
      const pauseStart = suspend.ms;
      gcs.push({
        pid,
        Number: count,
        Generation: start.bytes.getUint32(4, true),
        Reason: start.bytes.getUint32(8, true),
        Type: start.bytes.getUint32(12, true),
        PauseStartRelativeMSec: pauseStart,
        SuspendDurationMSec: suspendStop.ms - suspend.ms,
        PauseDurationMSec: events[restartAt].ms - pauseStart,
        DurationMSec: events[stopAt].ms - start.ms,
        HeapSizeAfterMB: sizes.reduce((a, b) => a + b, 0) / MB,
        PromotedMB: promoted.reduce((a, b) => a + b, 0) / MB,
        HeapSizeBeforeMB: 0,
        HeapSizePeakMB: 0,
        AllocedSinceLastGCMB: 0,
        AllocRateMBSec: 0,
        RatioPeakAfter: 0,
        PauseTimePercentageSinceLastGC: 0,
        heapStatsMs: heap.ms,
        hist,
        ticks,
        // the time since the previous HeapStats, up to this pause
        ...{ sinceRestart: pauseStart - lastHeapStatsMs },
      } as never);
      lastHeapStatsMs = heap.ms;
    }
    gcs.forEach((gc, k) => {
      const since = (gc as unknown as { sinceRestart: number }).sinceRestart;
      const before = (gen: number) => {
        if (gc.hist.length) return gc.hist.reduce((n, h) => n + (h!.sizeBefore[gen] ?? 0) / MB, 0);
        // no heap history: the nearest earlier GC with heap stats, never the first
        if (k <= 1) return k === 0 && gen === 0 ? gc.ticks[0] : 0;
        throw new Error("not in these traces");
      };
      // TraceManagedProcess.cs (f3ec1b38) GetHeapSizeBeforeMB, lines 2940-2949: every generation through GenPinObj
      gc.HeapSizeBeforeMB = [0, 1, 2, 3, 4].reduce((n, g) => n + before(g), 0);
      gc.HeapSizePeakMB = gc.HeapSizeBeforeMB; // no background GCs here
      const prev = gcs[k - 1];
      const allocated = (gen: number, tick: number) => {
        if (!gc.hist.length || !prev?.hist.length) return gc.ticks[tick];
        return gc.hist.reduce((n, h, heap) => {
          let prevObj = prev.hist[heap]?.objAfter[gen] ?? 0;
          if (gen === 3 && prevObj === 0 && prev.Generation === 0) prevObj = prev.hist[heap]?.objBefore[gen] ?? 0;
          return n + (gen < h!.objBefore.length ? h!.objBefore[gen] - prevObj : 0) / MB;
        }, 0);
      };
      // GetAllocedSinceLastGCMB (lines 2876-2879): GetUserAllocated of Gen0, GenLargeObj and GenPinObj; without usable
      // histories GetUserAllocated (2908-2937) gives AllocedSinceLastGCBasedOnAllocTickMB[gen == Gen0 ? 0 : 1], so
      // the non-small ticks count for the LOH and again for the POH
      gc.AllocedSinceLastGCMB = allocated(0, 0) + allocated(3, 1) + allocated(4, 1);
      gc.AllocRateMBSec = (gc.AllocedSinceLastGCMB * 1000) / since;
      gc.RatioPeakAfter = gc.HeapSizeAfterMB === 0 ? 0 : gc.HeapSizePeakMB / gc.HeapSizeAfterMB;
      gc.PauseTimePercentageSinceLastGC = (gc.PauseDurationMSec * 100) / (gc.PauseDurationMSec + since);
      expect(gc.Type, "no background GCs in these traces").toBe(0);
      out.push(gc);
    });
  }
  return out;
}

const GC_KEYS = [
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
];
const NUMBERS = GC_KEYS.slice(6);
const REASONS = [
  "AllocSmall",
  "Induced",
  "LowMemory",
  "Empty",
  "AllocLarge",
  "OutOfSpaceSOH",
  "OutOfSpaceLOH",
  "InducedNotForced",
  "Internal",
  "InducedLowMemory",
  "InducedCompacting",
  "LowMemoryHost",
  "PMFullGC",
  "LowMemoryHostBlocking",
];

describe("GC statistics", () => {
  const files = HAVE_CORPUS ? ["gcevents.etl", "net.4.5.2.x64.etl", "net.4.5.x86.etl"] : [];

  it.skipIf(!HAVE_CORPUS)(
    "every GC of gcevents, net.4.5.2.x64 and net.4.5.x86, every field, as derived by hand from the raw events; the rollups their sums",
    async () => {
      for (const name of files) {
        const t = await openTrace(readFileSync(etlPath(name)));
        const want = gcByHand(t);
        expect(want.length, name).toBeGreaterThan(1);
        const stats = await gcStats(t);
        const got = stats.flatMap((p) => p.GCs);
        expect(got.length, name).toBe(want.length);
        expect(
          got.every((g) => g.IsComplete),
          name,
        ).toBe(true);
        const key = (g: { PID?: number; pid?: number; Number: number }) => `${g.PID ?? g.pid}:${g.Number}`;
        const wanted = new Map(want.map((w) => [key(w), w]));
        for (const g of got) {
          const w = wanted.get(key(g))!;
          const where = `${name} pid ${g.PID} GC ${g.Number}`;
          expect(w, where).toBeDefined();
          expect([g.Generation, g.Reason, g.Type], where).toEqual([
            w.Generation,
            REASONS[w.Reason],
            ["NonConcurrentGC", "BackgroundGC", "ForegroundGC"][w.Type],
          ]);
          for (const k of NUMBERS) {
            const a = g[k as keyof typeof g] as number,
              b = w[k as keyof GcByHand] as number;
            expect(Math.abs(a - b), `${where} ${k}: ${a} vs ${b}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(b)));
          }
        }
        for (const p of stats) {
          const mine = want.filter((w) => w.pid === p.PID);
          const sum = (k: keyof GcByHand) => mine.reduce((n, w) => n + (w[k] as number), 0);
          expect(p.Total.Count, name).toBe(mine.length);
          expect(p.Total.TotalPauseTimeMSec, name).toBeCloseTo(sum("PauseDurationMSec"), 9);
          expect(p.Total.MaxPauseDurationMSec, name).toBe(Math.max(...mine.map((w) => w.PauseDurationMSec)));
          expect(p.Total.TotalAllocatedMB, name).toBeCloseTo(sum("AllocedSinceLastGCMB"), 9);
          expect(p.Total.TotalPromotedMB, name).toBeCloseTo(sum("PromotedMB"), 9);
          expect(p.Total.MaxSizePeakMB, name).toBe(Math.max(...mine.map((w) => w.HeapSizePeakMB)));
          expect(p.Total.NumInduced, name).toBe(mine.filter((w) => w.Reason === 1 || w.Reason === 7).length);
          for (const g of [0, 1, 2]) expect(p.Generations[g].Count, name).toBe(mine.filter((w) => w.Generation === g).length);
          // % time paused: the pauses over the time from the first pause to the last HeapStats
          const duration = Math.max(...mine.map((w) => w.heapStatsMs)) - mine[0].PauseStartRelativeMSec;
          expect(p.GCPauseTimePercentage, name).toBeCloseTo((sum("PauseDurationMSec") * 100) / duration, 9);
        }
        t.dispose();
      }
    },
    120_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "etw-wasm gc prints exactly TraceGC's keys, the same numbers from a stream of small batches; --rollup the rollup",
    async () => {
      const path = etlPath("net.4.5.x86.etl");
      const t = await openTrace(readFileSync(path));
      const stats = await gcStats(t);
      const collector = new ProcessCollector();
      for await (const b of streamTrace(readFileSync(path), { batchBytes: 64 << 10 })) collector.scan(b, b.firstRow);
      const streamed = await gcStats(streamTrace(readFileSync(path), { batchBytes: 64 << 10 }), collector.result());
      expect(JSON.stringify(streamed)).toBe(JSON.stringify(stats));
      const rows = execFileSync(process.execPath, [CLI, "gc", path, "--format", "jsonl", "--batch-size", "64KiB"], { encoding: "utf8" })
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const complete = stats.flatMap((p) => p.GCs.filter((g) => g.IsComplete));
      expect(rows.length).toBe(complete.length);
      for (const r of rows) expect(Object.keys(r)).toEqual(GC_KEYS);
      rows.forEach((r, k) => expect(r).toEqual(Object.fromEntries(GC_KEYS.map((key) => [key, complete[k][key as keyof (typeof complete)[0]]]))));
      const rollup = execFileSync(process.execPath, [CLI, "gc", path, "--rollup", "--format", "jsonl"], { encoding: "utf8" })
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const test = stats.find((p) => p.ProcessName === "test")!;
      const all = rollup.find((r) => r.PID === test.PID && r.Gen === "ALL");
      expect(all).toMatchObject({
        Count: test.Total.Count,
        TotalPauseTimeMSec: test.Total.TotalPauseTimeMSec,
        NumInduced: test.Total.NumInduced,
        GCPauseTimePercentage: test.GCPauseTimePercentage,
      });
      expect(rollup.filter((r) => r.PID === test.PID).map((r) => r.Gen)).toEqual(["ALL", "0", "1", "2"]);
      t.dispose();
    },
    120_000,
  );
});

/** A trace of runtime events of process 1, at `ms` milliseconds after the trace's start (1 tick = 1 µs). */
async function scenario(events: [ms: number, tid: number, id: number, version: number, payload: Uint8Array, provider?: string][]): Promise<Trace> {
  const w = new EtlWriter({ perfFreq: 1_000_000n });
  for (const [ms, tid, id, version, payload, provider] of events) {
    w.event(0, {
      headerType: 0x13,
      provider: provider ?? RUNTIME_GUID,
      id,
      version,
      level: 4,
      opcode: 0,
      task: 0,
      keywords: 1n,
      pid: 1,
      tid,
      ts: w.anchor + BigInt(Math.round(ms * 1000)),
      payload,
    });
  }
  return openTrace(w.finish());
}

const RUNTIME_GUID = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4";
const PRIVATE_GUID = "763fd754-7086-4dfe-95eb-c01a46faf4ca";
const RUNDOWN_GUID = "a669021c-c450-4609-a035-5af59af4df18";
const pb = () => new PayloadBuilder();
const suspend = (reason: number) => pb().u32(reason).u32(0).u16(9).build();
const clr = () => pb().u16(9).build();
const gcStart = (count: number, depth: number, type: number, reason = 0) => pb().u32(count).u32(depth).u32(reason).u32(type).u16(9).u64(0n).build();
const gcStop = (count: number) => pb().u32(count).u32(0).u16(9).build();
const heapStats = (mb: number[]) => {
  const b = pb();
  for (let g = 0; g < 4; g++) b.u64(BigInt(mb[g] * MB)).u64(0n);
  return b
    .u64(0n)
    .u64(0n)
    .u32(0)
    .u32(0)
    .u32(0)
    .u16(9)
    .u64(BigInt(mb[4] * MB))
    .u64(0n)
    .build();
};
const markHandles = (heap: number) => pb().u32(heap).u16(9).u32(2).u64(0n).build();
const globalHistory = (heaps: number) => pb().u64(0n).i32(heaps).u32(0).u32(0).u32(0).u32(0).u16(9).u32(0).u32(0).build();
/** A version-3 per-heap history (64-bit) whose generation g has SizeBefore sizeBefore[g] bytes. */
const perHeapHistory = (sizeBefore: number[]) => {
  const b = pb().u16(9);
  for (let i = 0; i < 6; i++) b.u64(0n);
  for (let i = 0; i < 6; i++) b.u32(0);
  b.u64(0n).u32(sizeBefore.length);
  for (const s of sizeBefore) b.u64(BigInt(s)).zeros(9 * 8);
  return b.build();
};
const SUSPEND_START = 9,
  SUSPEND_STOP = 8,
  START = 1,
  STOP = 2,
  HEAP_STATS = 4,
  RESTART_STOP = 3;

describe("GC statistics on synthetic event sequences (TraceEvent's rules for each)", () => {
  it("a background GC: its initial pause, a SuspendForGCPrep pause added, an ephemeral GC inside it pausing from its own start, complete at its HeapStats", async () => {
    const t = await scenario([
      [10, 5, SUSPEND_START, 1, suspend(1)],
      [11, 5, SUSPEND_STOP, 1, clr()],
      [12, 5, START, 2, gcStart(1, 2, 1)],
      [13, 5, RESTART_STOP, 1, clr()],
      [20, 5, SUSPEND_START, 1, suspend(1)],
      [21, 5, SUSPEND_STOP, 1, clr()],
      [22, 5, START, 2, gcStart(2, 0, 0)],
      [23, 5, STOP, 1, gcStop(2)],
      [24, 5, HEAP_STATS, 2, heapStats([1, 2, 3, 4, 0])],
      [25, 5, RESTART_STOP, 1, clr()],
      [30, 6, SUSPEND_START, 1, suspend(6)],
      [31, 6, SUSPEND_STOP, 1, clr()],
      [32, 6, RESTART_STOP, 1, clr()],
      [40, 6, STOP, 1, gcStop(1)],
      [41, 6, HEAP_STATS, 2, heapStats([2, 2, 2, 2, 0])],
    ]);
    const [p] = await gcStats(t);
    const [bgc, eph] = p.GCs;
    expect([bgc.Type, bgc.GCGenerationName, eph.Type, eph.GCGenerationName]).toEqual(["BackgroundGC", "2B", "NonConcurrentGC", "0N"]);
    expect([bgc.IsComplete, eph.IsComplete]).toEqual([true, true]);
    // the BGC: 10..13 and 30..32 paused; suspensions 10..11 and 30..31; runs 12..40
    expect(bgc.PauseDurationMSec).toBeCloseTo(3 + 2, 9);
    expect(bgc.SuspendDurationMSec).toBeCloseTo(1 + 1, 9);
    expect(bgc.DurationMSec).toBeCloseTo(28, 9);
    expect(bgc.PauseStartRelativeMSec).toBeCloseTo(10, 9);
    // the ephemeral GC pauses from its own GC/Start (22) to its RestartEEStop (25)
    expect(eph.PauseStartRelativeMSec).toBeCloseTo(22, 9);
    expect(eph.PauseDurationMSec).toBeCloseTo(3, 9);
    expect(eph.DurationMSec).toBeCloseTo(1, 9);
    expect(eph.HeapSizeAfterMB).toBeCloseTo(10, 9);
    expect(bgc.HeapSizeAfterMB).toBeCloseTo(8, 9);
    // a BGC's pause share: its pause over the time from the GC before it ended (none: the first GC's start) to its end
    expect(bgc.PauseTimePercentageSinceLastGC).toBeCloseTo((5 * 100) / (40 - 12), 9);
    // the peak of a BGC takes in the heap before every GC that started while it ran
    expect(bgc.HeapSizePeakMB).toBe(Math.max(bgc.HeapSizeBeforeMB, eph.HeapSizeBeforeMB));
    expect(p.Total.Count).toBe(2);
    expect(p.Generations[2].TotalPauseTimeMSec).toBeCloseTo(5, 9);
    t.dispose();
  });

  it("a record reads its process's columns: an incomplete GC keeps TraceGC's start values; toJSON is every value as a plain object, which a worker can post", async () => {
    const t = await scenario([
      [10, 5, SUSPEND_START, 1, suspend(1)],
      [11, 5, SUSPEND_STOP, 1, clr()],
      [12, 5, START, 2, gcStart(1, 0, 0)],
      [13, 5, STOP, 1, gcStop(1)],
      [14, 5, HEAP_STATS, 2, heapStats([1, 2, 3, 4, 0])],
      [15, 5, RESTART_STOP, 1, clr()],
      [20, 5, SUSPEND_START, 1, suspend(1)],
      [21, 5, SUSPEND_STOP, 1, clr()],
      [22, 5, START, 2, gcStart(2, 1, 0)],
    ]);
    const [p] = await gcStats(t);
    const [done, open] = p.GCs;
    expect([done.IsComplete, open.IsComplete]).toEqual([true, false]);
    // GC/HeapStats' sizes: 1, 2, 3 and 4 MB (gen0..LOH)
    expect(done.GenSizeAfterMB).toEqual([1, 2, 3, 4, 0]);
    expect(done.HeapSizeAfterMB).toBeCloseTo(10, 9);
    // not ended: OnEnd's values are still TraceGC's defaults
    expect([open.HeapSizeAfterMB, open.PromotedMB, open.HeapSizeBeforeMB, open.HeapSizePeakMB, open.RatioPeakAfter]).toEqual([0, 0, 0, 0, 0]);
    expect(open.GenSizeAfterMB).toEqual([-1, -1, -1, -1, -1]);
    expect([open.Number, open.Generation, open.GCGenerationName, open.StartRelativeMSec]).toEqual([2, 1, "1N", 22]);
    // (a copy: changing it changes no record)
    done.GenSizeAfterMB[0] = 99;
    expect(done.GenSizeAfterMB[0]).toBe(1);
    const keys = ["PID", "ProcessName", "Number", "Generation", "Reason", "Type", "GCGenerationName", "StartRelativeMSec", "PauseStartRelativeMSec"];
    for (const g of p.GCs) {
      const plain = g.toJSON();
      expect(Object.keys(plain).slice(0, keys.length)).toEqual(keys);
      expect(Object.keys(plain).length).toBe(23);
      for (const [k, v] of Object.entries(plain)) expect(v, k).toEqual(g[k as keyof typeof plain]);
      expect(structuredClone(plain)).toEqual(plain);
      expect(JSON.parse(JSON.stringify(g))).toEqual(plain);
    }
    t.dispose();
  });

  it("no GC without a suspension before it; a GC/Start logged twice is one GC; a GC without HeapStats never completes", async () => {
    const t = await scenario([
      [5, 5, START, 2, gcStart(7, 0, 0)],
      [6, 5, STOP, 1, gcStop(7)],
      [7, 5, HEAP_STATS, 2, heapStats([1, 1, 1, 1, 0])],
      [8, 5, RESTART_STOP, 1, clr()],
      [10, 5, SUSPEND_START, 1, suspend(1)],
      [11, 5, SUSPEND_STOP, 1, clr()],
      [12, 5, START, 1, gcStart(8, 1, 0, 1)],
      [12.5, 5, START, 2, gcStart(8, 1, 0, 1)],
      [13, 5, STOP, 1, gcStop(8)],
      [14, 5, HEAP_STATS, 2, heapStats([1, 1, 1, 1, 0])],
      [15, 5, RESTART_STOP, 1, clr()],
      [20, 5, SUSPEND_START, 1, suspend(1)],
      [21, 5, SUSPEND_STOP, 1, clr()],
      [22, 5, START, 2, gcStart(9, 0, 0)],
      [23, 5, STOP, 1, gcStop(9)],
      [25, 5, RESTART_STOP, 1, clr()],
    ]);
    const [p] = await gcStats(t);
    expect(p.GCs.map((g) => [g.Number, g.IsComplete, g.StartRelativeMSec])).toEqual([
      [8, true, 12],
      [9, false, 22],
    ]);
    const [gc] = p.GCs;
    expect(gc.GCGenerationName).toBe("1NI");
    expect(gc.PauseDurationMSec).toBeCloseTo(5, 9);
    // since the last HeapStats (7, of the GC not counted) to this pause's start (10)
    expect(gc.PauseTimePercentageSinceLastGC).toBeCloseTo((5 * 100) / (5 + 3), 9);
    expect(p.Total.Count).toBe(1);
    expect(p.Total.NumInduced).toBe(1);
    // % paused: 5 ms of the 10..14 from the first pause to the last HeapStats
    expect(p.GCPauseTimePercentage).toBeCloseTo((5 * 100) / (14 - 10), 9);
    t.dispose();
  });

  for (const server of [true, false]) {
    it(`${server ? "server" : "workstation"} GC: heap histories logged after the GC ended ${server ? "count (several threads marked handles)" : "are left out"}`, async () => {
      const t = await scenario([
        [10, 5, SUSPEND_START, 1, suspend(1)],
        [11, 5, SUSPEND_STOP, 1, clr()],
        [12, 5, START, 2, gcStart(1, 0, 0)],
        [12.2, 7, 202, 0, markHandles(0)],
        [12.3, server ? 8 : 7, 202, 0, markHandles(1)],
        [13, 5, STOP, 1, gcStop(1)],
        [14, 5, HEAP_STATS, 2, heapStats([1, 1, 1, 1, 0])],
        [15, 5, RESTART_STOP, 1, clr()],
        [16, 5, 205, 2, globalHistory(2)],
        [17, 7, 204, 3, perHeapHistory([1e6, 2e6, 3e6, 4e6])],
        [18, 8, 204, 3, perHeapHistory([2e6, 4e6, 6e6, 8e6])],
      ]);
      const [p] = await gcStats(t);
      expect(p.IsServerGC).toBe(server);
      expect(p.HeapCount).toBe(2);
      // the sizes before: every heap's gen0..LOH SizeBefore; without histories, the first GC has only its allocation ticks (none)
      expect(p.GCs[0].HeapSizeBeforeMB).toBeCloseTo(server ? 10 + 20 : 0, 9);
      t.dispose();
    });
  }

  it("a private-provider GC/PerHeapHistory of an unknown length is left out and said so", async () => {
    const t = await scenario([
      [10, 5, SUSPEND_START, 1, suspend(1)],
      [11, 5, SUSPEND_STOP, 1, clr()],
      [12, 5, START, 2, gcStart(1, 0, 0)],
      [12.5, 5, 4, 2, new Uint8Array(100), PRIVATE_GUID],
      [13, 5, STOP, 1, gcStop(1)],
      [14, 5, HEAP_STATS, 2, heapStats([1, 1, 1, 1, 0])],
      [15, 5, RESTART_STOP, 1, clr()],
    ]);
    const [p] = await gcStats(t);
    expect(p.GCVersionInfoMismatch).toBe(true);
    expect(p.GCs[0].HeapSizeBeforeMB).toBe(0);
    t.dispose();
  });
});

describe("JIT statistics on synthetic events", () => {
  it("methods jitted on the multicore JIT's background thread (named by ClrMulticoreJit/Common JITTHREAD) are MulticoreJitBackground", async () => {
    const started = (id: number) => pb().u64(BigInt(id)).u64(0x100n).u32(0x06000001).u32(40).utf16z("NS").utf16z(`M${id}`).utf16z("void  ()").u16(9).build();
    const loaded = (id: number) =>
      pb()
        .u64(BigInt(id))
        .u64(0x100n)
        .u64(0x7ff800000000n + BigInt(id) * 256n)
        .u32(120)
        .u32(0x06000001)
        .u32(0x8)
        .utf16z("NS")
        .utf16z(`M${id}`)
        .utf16z("void  ()")
        .u16(9)
        .u64(0n)
        .build();
    const t = await scenario([
      [1, 7, 201, 0, pb().u16(9).utf16z("JITTHREAD").utf16z("").i32(0).i32(0).i32(0).build(), PRIVATE_GUID],
      [2, 7, 145, 0, started(1)],
      [3, 7, 143, 2, loaded(1)],
      [4, 8, 145, 0, started(2)],
      [6, 8, 143, 2, loaded(2)],
    ]);
    const [p] = await jitStats(t);
    expect(p.Methods.map((m) => [m.MethodName, m.CompilationThreadKind, m.CompileCpuTimeMSec])).toEqual([
      ["NS.M1()", "MulticoreJitBackground", 1],
      ["NS.M2()", "Foreground", 2],
    ]);
    expect([p.ByKind.MulticoreJitBackground.Count, p.ByKind.Foreground.Count]).toEqual([1, 1]);
    t.dispose();
  });

  it("a method reads its process's columns: MemoryAllocatedForJitCode's four sizes only where one came (the first), toJSON every value as a plain object", async () => {
    const started = (id: number) =>
      pb().u64(BigInt(id)).u64(0x100n).u32(0x06000001).u32(40).utf16z("NS").utf16z(`M${id}`).utf16z("void  (int32)").u16(9).build();
    const memory = (hot: number) =>
      pb()
        .u64(1n)
        .u64(0x100n)
        .u64(BigInt(hot))
        .u64(16n)
        .u64(BigInt(hot + 16))
        .u32(2)
        .u16(9)
        .build();
    const loaded = (id: number, size: number) =>
      pb()
        .u64(BigInt(id))
        .u64(0x100n)
        .u64(0x7ff800000000n)
        .u32(size)
        .u32(0x06000001)
        .u32(0x8 | (4 << 7)) // jitted, OptimizedTier1
        .utf16z("NS")
        .utf16z(`M${id}`)
        .utf16z("void  (int32)")
        .u16(9)
        .u64(3n)
        .build();
    const t = await scenario([
      [1, 7, 145, 0, started(1)],
      [2, 7, 146, 0, memory(100)],
      [3, 7, 146, 0, memory(999)], // a second one for the same method is not taken
      [4, 7, 143, 2, loaded(1, 120)],
      [5, 8, 145, 0, started(2)],
    ]);
    const [p] = await jitStats(t);
    const [done, open] = p.Methods;
    expect([done.JitHotCodeRequestSize, done.JitRODataRequestSize, done.AllocatedSizeForJitCode, done.JitAllocFlag]).toEqual([100, 16, 116, 2]);
    expect([open.JitHotCodeRequestSize, open.AllocatedSizeForJitCode]).toEqual([undefined, undefined]);
    expect([done.MethodName, done.NativeSize, done.OptimizationTier, done.VersionID, done.CompileCpuTimeMSec, done.IsCompleted, done.ModuleID]).toEqual([
      "NS.M1(int32)",
      120,
      "OptimizedTier1",
      3,
      3,
      true,
      0x100n,
    ]);
    expect([open.MethodName, open.ThreadID, open.IsCompleted, open.OptimizationTier]).toEqual(["NS.M2(int32)", 8, false, "Unknown"]);
    expect(Object.keys(done.toJSON())).toEqual([
      "MethodName",
      "StartTimeMSec",
      "CompileCpuTimeMSec",
      "ILSize",
      "NativeSize",
      "OptimizationTier",
      "VersionID",
      "ThreadID",
      "ModuleILPath",
      "CompilationThreadKind",
      "IsCompleted",
      "ModuleID",
      "JitHotCodeRequestSize",
      "JitRODataRequestSize",
      "AllocatedSizeForJitCode",
      "JitAllocFlag",
    ]);
    expect(Object.keys(open.toJSON()).length).toBe(12);
    for (const m of p.Methods) {
      const plain = m.toJSON();
      for (const [k, v] of Object.entries(plain)) expect(v, k).toEqual(m[k as keyof typeof plain]);
      expect(structuredClone(plain)).toEqual(plain);
    }
    t.dispose();
  });

  it("the typed .NET tables give what the events' rows give: jitStats reads method events from the typed columns, JitComputer.add from each row (a payload cut short, or a trace's method events)", async () => {
    const json = (p: unknown) => JSON.stringify(p, (_, v) => (typeof v === "bigint" ? String(v) : v));
    const byRows = (t: Trace) => {
      const c = new JitComputer((pid, ts) => t.processes.processName(pid, ts));
      for (const row of t.query({ provider: JIT_PROVIDERS, order: "time" })) c.add(row);
      return c.result();
    };
    const loaded = (id: number, rejit: boolean) => {
      const b = pb()
        .u64(BigInt(id))
        .u64(0x100n)
        .u64(0x7ff800000000n)
        .u32(64)
        .u32(0x06000001)
        .u32(0x8)
        .utf16z("NS")
        .utf16z(`M${id}`)
        .utf16z("int32 (int32)")
        .u16(9);
      return (rejit ? b.u64(2n) : b).build();
    };
    const started = (id: number) =>
      pb().u64(BigInt(id)).u64(0x100n).u32(0x06000001).u32(40).utf16z("NS").utf16z(`M${id}`).utf16z("void  (int32)").u16(9).build();
    const t = await scenario([
      [1, 7, 145, 1, started(1)],
      [2, 7, 143, 2, loaded(1, true)],
      [3, 7, 145, 1, started(2)],
      [4, 7, 143, 2, loaded(2, false)], // ReJITID cut off: read from its row, 0
      [5, 8, 143, 2, loaded(3, true)], // no JittingStarted: named by its load
    ]);
    const typed = await jitStats(t);
    expect(t.tables.find((x) => x.schema.id === 143)?.truncated[1]).toBe(1);
    expect(typed[0].Methods.map((m) => [m.MethodName, m.VersionID, m.CompileCpuTimeMSec])).toEqual([
      ["NS.M1(int32)", 2, 1],
      ["NS.M2(int32)", 0, 1],
      ["NS.M3(int32)", 2, 0],
    ]);
    expect(json(typed)).toBe(json(byRows(t)));
    t.dispose();
    for (const path of HAVE_CORPUS
      ? [etlPath("net.4.5.2.x64.etl"), etlPath("net.4.5.x86.etl"), join(CORPUS, "nettrace", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")]
      : []) {
      const c = await openTrace(readFileSync(path));
      const stats = await jitStats(c);
      expect(
        stats.reduce((n, p) => n + p.Methods.length, 0),
        path,
      ).toBeGreaterThan(50);
      expect(json(stats), path).toBe(json(byRows(c)));
      c.dispose();
    }
  });

  it("a method gets its module's path from a Loader/ModuleLoad or rundown event that comes after it (an empty path waits for a later one)", async () => {
    // JittingStarted (145) and MethodLoadVerbose (143) of method `id` in module `module`; ModuleLoad (152, v1)
    // and the rundown's ModuleDCStop (154) of `module` with `path`
    const started = (id: number, module: bigint) =>
      pb().u64(BigInt(id)).u64(module).u32(0x06000001).u32(40).utf16z("NS").utf16z(`M${id}`).utf16z("void  ()").u16(9).build();
    const loaded = (id: number, module: bigint) =>
      pb()
        .u64(BigInt(id))
        .u64(module)
        .u64(0x7ff800000000n + BigInt(id) * 256n)
        .u32(120)
        .u32(0x06000001)
        .u32(0x8)
        .utf16z("NS")
        .utf16z(`M${id}`)
        .utf16z("void  ()")
        .u16(9)
        .u64(0n)
        .build();
    const moduleEvent = (module: bigint, path: string) => pb().u64(module).u64(0x5000n).u32(0).u32(0).utf16z(path).utf16z("").u16(9).build();
    const A = 0x100n,
      B = 0x200n;
    const t = await scenario([
      [1, 7, 145, 0, started(1, A)],
      [2, 7, 143, 2, loaded(1, A)],
      [3, 7, 145, 0, started(2, B)],
      [4, 7, 143, 2, loaded(2, B)],
      [5, 7, 152, 1, moduleEvent(A, "")], // an empty path: the methods of A keep waiting for one
      [6, 7, 145, 0, started(3, A)],
      [7, 7, 143, 2, loaded(3, A)],
      [8, 7, 152, 1, moduleEvent(A, "C:\\app\\a.dll")],
      [9, 7, 145, 0, started(4, A)],
      [10, 7, 143, 2, loaded(4, A)],
      [11, 7, 152, 1, moduleEvent(A, "C:\\other\\a.dll")], // every method of A has its path already
      [12, 7, 154, 1, moduleEvent(B, "C:\\app\\b.dll"), RUNDOWN_GUID],
    ]);
    const [p] = await jitStats(t);
    expect(p.Methods.map((m) => [m.MethodName, m.ModuleILPath])).toEqual([
      ["NS.M1()", "C:\\app\\a.dll"],
      ["NS.M2()", "C:\\app\\b.dll"],
      ["NS.M3()", "C:\\app\\a.dll"],
      ["NS.M4()", "C:\\app\\a.dll"],
    ]);
    expect(p.ByModule.map((m) => [m.Module, m.Count])).toEqual(
      expect.arrayContaining([
        ["C:\\app\\a.dll", 3],
        ["C:\\app\\b.dll", 1],
      ]),
    );
    t.dispose();
  });
});
