// JIT statistics as TraceEvent's JITStats computes them: the .NET runtime's events replayed in time
// order, per process. Method/JittingStarted opens a method; Method/LoadVerbose (or Method/Load) of a
// jitted method closes the newest method still open on the same thread, whose JIT time is the time
// between the two; a load with no open method is a method of zero JIT time. Module paths come from
// the loader's module events (filled in when they come after the method).

import type { EventRow } from "../tables/event-table.js";
import { CLR_PROVIDERS } from "../schema/clr-payload.js";
import { methodNameOf } from "./symbols.js";

/** TraceEvent's OptimizationTier names, by MethodFlags bits 7..9. */
export const OPTIMIZATION_TIERS = [
  "Unknown",
  "MinOptJitted",
  "Optimized",
  "QuickJitted",
  "OptimizedTier1",
  "OptimizedTier1OSR",
  "QuickJittedInstrumented",
  "OptimizedTier1Instrumented",
] as const;

export type CompilationThreadKind = "Foreground" | "MulticoreJitBackground" | "TieredCompilationBackground";

/** One jitted method (TraceEvent's TraceJittedMethod), with its property names. */
export interface JittedMethod {
  MethodName: string;
  /** Relative milliseconds of Method/JittingStarted (of the load, for a method without one). */
  StartTimeMSec: number;
  /** Milliseconds from JittingStarted to the load (wall time; TraceEvent's name). */
  CompileCpuTimeMSec: number;
  ILSize: number;
  NativeSize: number;
  OptimizationTier: (typeof OPTIMIZATION_TIERS)[number];
  VersionID: number;
  ThreadID: number;
  ModuleILPath: string;
  CompilationThreadKind: CompilationThreadKind;
  /** Whether its load was seen (methods only started stay in the list, not in the totals). */
  IsCompleted: boolean;
  JitHotCodeRequestSize?: number;
  JitRODataRequestSize?: number;
  AllocatedSizeForJitCode?: number;
  JitAllocFlag?: number;
  /** Internal: the method's module, for filling ModuleILPath later. */
  ModuleID: bigint;
}

/** Counts and milliseconds of completed methods. */
export interface JitTotals {
  Count: number;
  TotalCpuTimeMSec: number;
  TotalILSize: number;
  TotalNativeSize: number;
}

export interface JitProcess {
  PID: number;
  ProcessName: string;
  /** Every method started or loaded, in time order (completed or not). */
  Methods: JittedMethod[];
  /** Completed methods: all, and by compilation thread kind. */
  Totals: JitTotals;
  ByKind: Record<CompilationThreadKind, JitTotals>;
  /** PerfView's "Summary by module": every method by ModuleILPath ("<UNKNOWN>" when none), by JIT time. */
  ByModule: (JitTotals & { Module: string })[];
}

const RUNTIME = CLR_PROVIDERS.findIndex((p) => p.name === "Microsoft-Windows-DotNETRuntime");
const RUNDOWN = CLR_PROVIDERS.findIndex((p) => p.name === "Microsoft-Windows-DotNETRuntimeRundown");
const PRIVATE = CLR_PROVIDERS.findIndex((p) => p.name === "Microsoft-Windows-DotNETRuntimePrivate");
/** The private provider's ClrMulticoreJit/Common: its GROUPWAIT or JITTHREAD names the background JIT thread. */
const MULTICORE_JIT_COMMON = 201;

/** The providers whose events the JIT statistics read (for a decode-time filter). */
export const JIT_PROVIDERS = ["Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown", "Microsoft-Windows-DotNETRuntimePrivate"];

const METHOD_LOAD = 141,
  METHOD_LOAD_VERBOSE = 143,
  JITTING_STARTED = 145,
  MEMORY_FOR_JIT = 146;
const MODULE_LOAD = 152,
  MODULE_UNLOAD = 153,
  RUNDOWN_MODULE_DC_STOP = 154;
const JITTED = 0x8;
/** The ids of the events JitComputer reads, runtime and rundown. */
export const JIT_EVENT_IDS = [
  METHOD_LOAD,
  METHOD_LOAD_VERBOSE,
  JITTING_STARTED,
  MEMORY_FOR_JIT,
  MODULE_LOAD,
  MODULE_UNLOAD,
  RUNDOWN_MODULE_DC_STOP,
  MULTICORE_JIT_COMMON,
];

function totals(): JitTotals {
  return { Count: 0, TotalCpuTimeMSec: 0, TotalILSize: 0, TotalNativeSize: 0 };
}

function add(t: JitTotals, m: JittedMethod): void {
  t.Count++;
  t.TotalCpuTimeMSec += m.CompileCpuTimeMSec;
  t.TotalILSize += m.ILSize;
  t.TotalNativeSize += m.NativeSize;
}

interface ProcessState {
  process: JitProcess;
  modules: Map<bigint, string>;
  /** Per thread, its methods still open (started, not loaded), oldest first. */
  open: Map<number, JittedMethod[]>;
  /** Per module, its methods started before its path was known (a module's events may come after its methods'). */
  pathless: Map<bigint, JittedMethod[]>;
  /** The multicore JIT's background thread (0: none seen). */
  backgroundJitThread: number;
}

/**
 * Replays runtime events one at a time, in time order (`add`), and gives the statistics per process
 * (`result`). `processName(pid, ts)` names each process at its first event.
 */
export class JitComputer {
  private readonly processes = new Map<number, ProcessState>();

  constructor(private readonly processName: (pid: number, timestamp: bigint) => string) {}

  add(row: EventRow): void {
    const schema = row.clrSchema;
    if (!schema) return;
    const id = schema.id;
    const runtime = schema.provider === RUNTIME,
      rundown = schema.provider === RUNDOWN;
    if (schema.provider === PRIVATE) {
      if (id !== MULTICORE_JIT_COMMON) return;
      const state = this.stateOf(row);
      const what = String(row.get("String1") ?? "");
      if (state.backgroundJitThread === 0 && (what === "GROUPWAIT" || what === "JITTHREAD")) state.backgroundJitThread = row.tid ?? 0;
      return;
    }
    if (
      !(
        runtime &&
        (id === METHOD_LOAD || id === METHOD_LOAD_VERBOSE || id === JITTING_STARTED || id === MEMORY_FOR_JIT || id === MODULE_LOAD || id === MODULE_UNLOAD)
      ) &&
      !(rundown && id === RUNDOWN_MODULE_DC_STOP)
    )
      return;
    const state = this.stateOf(row);
    const methods = state.process.Methods;
    if (id === MODULE_LOAD || id === MODULE_UNLOAD || id === RUNDOWN_MODULE_DC_STOP) {
      const module = row.get("ModuleID") as bigint;
      const path = String(row.get("ModuleILPath") ?? "");
      state.modules.set(module, path);
      // (the methods of the module still without a path get it: listed per module, not found among every
      // method so far, which made a trace's module rundown cost its modules times its methods)
      const waiting = state.pathless.get(module);
      if (waiting) {
        for (const m of waiting) if (!m.ModuleILPath) m.ModuleILPath = path;
        if (path) state.pathless.delete(module);
      }
      return;
    }
    const tid = row.tid ?? 0;
    let openOnThread = state.open.get(tid);
    if (!openOnThread) state.open.set(tid, (openOnThread = []));
    if (id === JITTING_STARTED) {
      const m = this.started(state, row, Number(row.get("MethodILSize") ?? 0), tid);
      methods.push(m);
      openOnThread.push(m);
      return;
    }
    // the newest method still open on this thread
    let open: JittedMethod | undefined = openOnThread[openOnThread.length - 1];
    if (id === MEMORY_FOR_JIT) {
      if (open && open.AllocatedSizeForJitCode === undefined) {
        open.JitHotCodeRequestSize = Number(row.get("JitHotCodeRequestSize") ?? 0);
        open.JitRODataRequestSize = Number(row.get("JitRODataRequestSize") ?? 0);
        open.AllocatedSizeForJitCode = Number(row.get("AllocatedSizeForJitCode") ?? 0);
        open.JitAllocFlag = Number(row.get("JitAllocFlag") ?? 0);
      }
      return;
    }
    const flags = Number(row.get("MethodFlags") ?? 0);
    if ((flags & JITTED) === 0) return;
    if (!open) methods.push((open = this.started(state, row, 0, tid)));
    open.NativeSize = Number(row.get("MethodSize") ?? 0);
    open.CompileCpuTimeMSec = row.relativeMSec - open.StartTimeMSec;
    open.OptimizationTier = OPTIMIZATION_TIERS[(flags >> 7) & 7];
    open.VersionID = id === METHOD_LOAD_VERBOSE ? Number(row.get("ReJITID") ?? 0) : 0;
    open.CompilationThreadKind =
      tid === state.backgroundJitThread && tid !== 0
        ? "MulticoreJitBackground"
        : open.OptimizationTier === "OptimizedTier1OSR" || open.VersionID === 0
          ? "Foreground"
          : "TieredCompilationBackground";
    open.IsCompleted = true;
    // closed, unless its load gave it neither size nor time: then it still counts as open
    const stillOpen = open.NativeSize === 0 && open.CompileCpuTimeMSec === 0;
    if (openOnThread[openOnThread.length - 1] === open) {
      if (!stillOpen) openOnThread.pop();
    } else if (stillOpen) openOnThread.push(open);
    add(state.process.Totals, open);
    add(state.process.ByKind[open.CompilationThreadKind], open);
  }

  private stateOf(row: EventRow): ProcessState {
    const pid = row.pid ?? 0;
    let state = this.processes.get(pid);
    if (!state) {
      const process: JitProcess = {
        PID: pid,
        ProcessName: this.processName(pid, row.timestamp),
        Methods: [],
        Totals: totals(),
        ByKind: { Foreground: totals(), MulticoreJitBackground: totals(), TieredCompilationBackground: totals() },
        ByModule: [],
      };
      this.processes.set(pid, (state = { process, modules: new Map(), open: new Map(), pathless: new Map(), backgroundJitThread: 0 }));
    }
    return state;
  }

  private started(state: ProcessState, row: EventRow, ilSize: number, tid: number): JittedMethod {
    const module = (row.get("ModuleID") as bigint | undefined) ?? 0n;
    const verbose = row.clrSchema!.fields.some((f) => f.name === "MethodName");
    const m: JittedMethod = {
      MethodName: verbose ? methodNameOf(row) : "",
      StartTimeMSec: row.relativeMSec,
      CompileCpuTimeMSec: 0,
      ILSize: ilSize,
      NativeSize: 0,
      OptimizationTier: "Unknown",
      VersionID: 0,
      ThreadID: tid,
      ModuleILPath: state.modules.get(module) ?? "",
      CompilationThreadKind: "Foreground",
      IsCompleted: false,
      ModuleID: module,
    };
    if (!m.ModuleILPath) {
      const waiting = state.pathless.get(module);
      if (waiting) waiting.push(m);
      else state.pathless.set(module, [m]);
    }
    return m;
  }

  /** The processes with JIT events, by pid. */
  result(): JitProcess[] {
    const out: JitProcess[] = [];
    for (const { process } of [...this.processes.values()].sort((a, b) => a.process.PID - b.process.PID)) {
      if (!process.Methods.length) continue;
      // by module, case-insensitively, every method (PerfView's JITStatsEx)
      const byModule = new Map<string, JitTotals & { Module: string }>();
      for (const m of process.Methods) {
        const name = m.ModuleILPath || "<UNKNOWN>";
        const key = name.toLowerCase();
        let t = byModule.get(key);
        if (!t) byModule.set(key, (t = { Module: name, ...totals() }));
        add(t, m);
      }
      process.ByModule = [...byModule.values()].sort((a, b) => b.TotalCpuTimeMSec - a.TotalCpuTimeMSec);
      out.push(process);
    }
    return out;
  }
}
