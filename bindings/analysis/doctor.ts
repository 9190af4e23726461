// The trace health check (`etw-wasm doctor`): what a trace can and cannot answer, from the events it
// holds, in plain words, with the collection settings that fill each gap.
//
// The .NET questions follow the keyword combinations the runtime documents for symbol resolution
// ("CLR ETW Keywords and Levels"): on the runtime provider, Loader (0x8) gives module loads and Jit
// (0x10) the load events of jitted methods (named, Method/LoadVerbose, when the session's level is
// Verbose); NGen (0x20) alone gives none. Methods loaded before the trace began, and precompiled
// (NGen, ReadyToRun) code, are named only by the rundown provider: Loader, Jit and NGen (0x8, 0x10,
// 0x20) with StartRundown (0x40, DCStart events when the session starts) or EndRundown (0x100, DCStop
// events when it stops). The rest comes from the kernel's events (process and image rundown, CPU
// samples, StackWalk), the EVENT_HEADER stack items and the logfile header (events and buffers lost).
//
// An EventPipe file (.nettrace, .netperf) has none of the kernel's events: one process, named by the
// EventPipe provider's ProcessInfo; CPU samples from the runtime's sample profiler; stacks with every
// event; a rundown when the session ends; lost events told by the capture threads' sequence numbers.
// Its checks speak of those, and its fixes are dotnet-trace command lines (the kernel image check has
// nothing to ask there: managed frames are placed by the module and method events).
//
// Counts come from the event types (rows counted over the whole trace), the typed tables of the method
// events (MethodFlags: jitted or precompiled; per process) and the extended items, batch by batch.

import { Trace } from "../trace.js";
import type { TraceStream, TraceStreamEnd } from "../stream.js";
import { ProcessCollector, type ProcessTable } from "../tables/processes.js";
import { KeywordUsageCounter, type ProviderKeywordUsage } from "../tables/keyword-usage.js";
import { CLR_PROVIDERS } from "../schema/clr-payload.js";
import { DOTNET_RUNTIME_GUID } from "../schema/known-providers.js";

const RUNTIME = DOTNET_RUNTIME_GUID;
const RUNDOWN = "a669021c-c450-4609-a035-5af59af4df18";
const PRIVATE = "763fd754-7086-4dfe-95eb-c01a46faf4ca";
const STRESS = "cc2bcbba-16b6-4cf3-8990-d74c2e8af500";
const K_PROCESS = "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c";
const K_THREAD = "3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c";
const K_IMAGE = "2cb15d1d-5fc1-11d2-abe1-00a0c911f518";
const K_STACKWALK = "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3";
const K_PERFINFO = "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc";
const K_LOST = "6a399ae0-4bc6-4de9-870b-3657f8947e7e";
const KTC_IMAGEID = "b3e675d7-2554-4f18-830b-2762732560de";
const SAMPLE_PROFILER = "3c530d44-97ae-513a-1e6d-783e8f8e03a9"; // Microsoft-DotNETCore-SampleProfiler
const EVENTPIPE = "92f528a6-f5b8-5160-a7ee-b33da7739e29"; // Microsoft-DotNETCore-EventPipe

/** How an EventPipe fix begins: dotnet-trace attached to the process. */
const DT = "dotnet-trace collect -p <pid>";
/** How an EventPipe session ends so that the runtime writes its rundown and the stream's end. */
const STOP_NORMALLY = "stop the session normally (Enter or Ctrl+C in dotnet-trace, or --duration), not by ending dotnet-trace's process or the app's";

/** MethodFlags bits (MethodFlagsMap): code that is not precompiled. */
const NOT_PRECOMPILED = 0x1 /* Dynamic */ | 0x8 /* Jitted */ | 0x10 /* JitHelper */;

export type DoctorStatus = "ok" | "partial" | "gap";

/** One thing the trace can or cannot answer. */
export interface DoctorFinding {
  /**
   * Stable key: runtime, jitted-methods, precompiled-methods, rundown, modules, stacks, cpu-samples, lost, decoding,
   * processes, images (not for an EventPipe file).
   */
  id: string;
  status: DoctorStatus;
  /** The question, e.g. "Can jitted methods be named?". */
  question: string;
  /** What the trace holds and what that means, in plain words. */
  answer: string;
  /** The collection settings that would fill the gap (for partial and gap). */
  fix?: string;
  /** The numbers the answer rests on. */
  counts: Record<string, number>;
}

/** A .NET process of the trace and what names its methods. */
export interface DoctorProcess {
  pid: number;
  name: string;
  /** Events of the runtime and rundown providers logged by it. */
  clrEvents: number;
  /** Methods named by Method/LoadVerbose (jitted during the trace). */
  loadedNamed: number;
  /** Methods named by the start rundown (DCStartVerbose). */
  startRundown: number;
  /** Methods named by the end rundown (DCStopVerbose). */
  endRundown: number;
  /** Of the named method events, those of precompiled (NGen, ReadyToRun) code. */
  precompiledNamed: number;
  /** Whether it was running when the trace began (kernel Process/DCStart), started during it (false), or unknown (null). */
  runningAtStart: boolean | null;
  /** Whether it ended during the trace (kernel Process/End). */
  endedDuringTrace: boolean;
}

export interface DoctorReport {
  findings: DoctorFinding[];
  processes: DoctorProcess[];
  /** Keywords and levels per provider (runtime and rundown among them). */
  providers: ProviderKeywordUsage[];
}

/** The outline a report reads besides the batches: a Trace, or a stream's end. */
type Outline = Pick<TraceStreamEnd, "info" | "providers" | "eventTypes" | "warnings" | "warningTotal" | "incomplete" | "eventPipeVersion">;

interface MethodCounts {
  loadedNamed: number;
  loadedAddressOnly: number;
  startNamed: number;
  endNamed: number;
  rundownAddressOnly: number;
  precompiledNamed: number;
  /** Jitted (or dynamic) methods named by the rundown. */
  rundownJittedNamed: number;
}

const emptyCounts = (): MethodCounts => ({
  loadedNamed: 0,
  loadedAddressOnly: 0,
  startNamed: 0,
  endNamed: 0,
  rundownAddressOnly: 0,
  precompiledNamed: 0,
  rundownJittedNamed: 0,
});

/** What each method event counts as: [provider GUID, event id] -> kind. */
const METHOD_EVENTS: [string, number, "load" | "loadAddress" | "start" | "end" | "rundownAddress" | "unload"][] = [
  [RUNTIME, 143, "load"],
  [RUNTIME, 144, "unload"],
  [RUNTIME, 141, "loadAddress"],
  [RUNTIME, 142, "loadAddress"],
  // the runtime provider's old (V2) copies of the rundown events
  [RUNTIME, 139, "start"],
  [RUNTIME, 140, "end"],
  [RUNTIME, 137, "rundownAddress"],
  [RUNTIME, 138, "rundownAddress"],
  [RUNDOWN, 143, "start"],
  [RUNDOWN, 144, "end"],
  [RUNDOWN, 141, "rundownAddress"],
  [RUNDOWN, 142, "rundownAddress"],
];

const fmt = (n: number) => n.toLocaleString("en-US");
/** "1 process", "2 processes". */
const count = (n: number, one: string, many: string) => `${fmt(n)} ${n === 1 ? one : many}`;

/**
 * Gathers what the health check needs: `add` a trace, or each batch of a stream (with its first
 * row), then `report(outline)` with the trace or the stream's end.
 */
export class DoctorCollector {
  private readonly usage = new KeywordUsageCounter();
  private readonly processCollector = new ProcessCollector();
  private readonly perPid = new Map<number, MethodCounts & { clrEvents: number }>();
  private readonly total = emptyCounts();
  private extStacks = 0;

  add(batch: Trace, firstRow = 0): void {
    this.usage.add(batch);
    this.processCollector.scan(batch, firstRow);
    const ext = batch.extendedItems;
    for (let e = 0; e < ext.length; e++) if (ext.type[e] === 5 || ext.type[e] === 6) this.extStacks++;

    // .NET events per process, in runs of one pid
    const ev = batch.events;
    const { provider, pid } = ev.columns;
    const clr = new Uint8Array(batch.providers.length);
    for (let p = 0; p < clr.length; p++) {
      const g = batch.providers.get(p).guid;
      clr[p] = g === RUNTIME || g === RUNDOWN ? 1 : 0;
    }
    for (let i = 0; i < ev.length; ) {
      if (!clr[provider[i]]) {
        i++;
        continue;
      }
      const p = pid[i];
      let j = i + 1,
        n = 1;
      for (; j < ev.length && (pid[j] === p || !clr[provider[j]]); j++) if (clr[provider[j]]) n++;
      this.process(p).clrEvents += n;
      i = j;
    }

    // method events: named or not, jitted or precompiled, per process
    for (const table of batch.tables) {
      const guid = CLR_PROVIDERS[table.schema.provider]?.guid;
      const kind = METHOD_EVENTS.find(([g, id]) => g === guid && id === table.id)?.[2];
      if (!kind || kind === "unload") continue;
      const flags = table.columns.MethodFlags as ArrayLike<number> | undefined;
      for (let k = 0; k < table.length; k++) {
        const c = this.process(pid[table.rows[k]]);
        const named = kind === "load" || kind === "start" || kind === "end";
        for (const m of [c, this.total]) {
          if (kind === "load") m.loadedNamed++;
          else if (kind === "loadAddress") m.loadedAddressOnly++;
          else if (kind === "start") m.startNamed++;
          else if (kind === "end") m.endNamed++;
          else m.rundownAddressOnly++;
          if (named && flags) {
            const f = flags[k];
            if (!(f & NOT_PRECOMPILED)) m.precompiledNamed++;
            else if (kind !== "load") m.rundownJittedNamed++;
          }
        }
      }
    }
  }

  private process(pid: number): MethodCounts & { clrEvents: number } {
    let c = this.perPid.get(pid);
    if (!c) this.perPid.set(pid, (c = { ...emptyCounts(), clrEvents: 0 }));
    return c;
  }

  report(outline: Outline): DoctorReport {
    return buildReport(outline, this.usage.result(outline.providers), this.processCollector.result(), this.perPid, this.total, this.extStacks);
  }
}

/** The health check of a whole trace, or of a stream read batch by batch (memory bounded by the batch). */
export async function traceDoctor(source: Trace | TraceStream): Promise<DoctorReport> {
  const c = new DoctorCollector();
  if (source instanceof Trace) {
    c.add(source, 0);
    return c.report(source);
  }
  for await (const batch of source) c.add(batch, batch.firstRow);
  return c.report(source.end!);
}

function buildReport(
  o: Outline,
  providers: ProviderKeywordUsage[],
  processes: ProcessTable,
  perPid: Map<number, MethodCounts & { clrEvents: number }>,
  m: MethodCounts,
  extStacks: number,
): DoctorReport {
  // rows per (provider GUID, event id) and per (provider GUID, opcode), over the whole trace
  const types = o.eventTypes;
  const byId = new Map<string, number>();
  const byOpcode = new Map<string, number>();
  const byProvider = new Map<string, number>();
  for (let t = 0; t < types.length; t++) {
    const guid = o.providers.get(types.provider[t]).guid;
    const n = types.count[t];
    byId.set(`${guid}:${types.eventId[t]}`, (byId.get(`${guid}:${types.eventId[t]}`) ?? 0) + n);
    byOpcode.set(`${guid}:${types.opcode[t]}`, (byOpcode.get(`${guid}:${types.opcode[t]}`) ?? 0) + n);
    byProvider.set(guid, (byProvider.get(guid) ?? 0) + n);
  }
  const ids = (guid: string, list: number[]) => list.reduce((s, id) => s + (byId.get(`${guid}:${id}`) ?? 0), 0);
  const ops = (guid: string, list: number[]) => list.reduce((s, op) => s + (byOpcode.get(`${guid}:${op}`) ?? 0), 0);
  const rows = (guid: string) => byProvider.get(guid) ?? 0;
  const usageOf = (guid: string) => providers.find((p) => p.guid === guid);
  const describe = (u: ProviderKeywordUsage | undefined) =>
    u ? `keywords ${u.keywordNames.length ? u.keywordNames.join(", ") : "none"}; levels ${u.levels.map((l) => `${l.name} ${fmt(l.rows)}`).join(", ")}` : "";

  const nameOf = (pid: number) => processes.fixedName(pid) || processes.processes.find((p) => p.pid === pid)?.name || `Process(${pid})`;
  const findings: DoctorFinding[] = [];
  const runtimeRows = rows(RUNTIME),
    rundownRows = rows(RUNDOWN);
  const anyClr = runtimeRows + rundownRows + rows(PRIVATE) > 0;
  const RUNTIME_SPEC = "Microsoft-Windows-DotNETRuntime";
  const RUNDOWN_SPEC = "Microsoft-Windows-DotNETRuntimeRundown";
  const noDotnet = anyClr ? "" : " (if no .NET process ran while the trace was taken, this does not matter)";
  const ep = o.eventPipeVersion !== undefined;

  // 1. the runtime provider, its keywords and levels
  {
    const u = usageOf(RUNTIME);
    const maxLevel = u ? Math.max(...u.levels.map((l) => l.level)) : 0;
    const counts = { events: runtimeRows, maxLevel };
    if (!runtimeRows) {
      findings.push({
        id: "runtime",
        status: "gap",
        question: "Are there .NET runtime events?",
        counts,
        answer: `No: no events of ${RUNTIME_SPEC}, so nothing about garbage collections, JIT compilation, exceptions or contention, and no jitted method names${noDotnet}.`,
        fix: ep
          ? `Enable the runtime provider: ${DT} --clrevents gc+loader+jit+exception+contention --clreventlevel verbose (or --providers ${RUNTIME_SPEC}:0x1C019:5).`
          : `Enable the runtime provider: PerfView collects it by default (/ClrEvents:Default); elsewhere ${RUNTIME_SPEC}:0x40000039:5 (GC, Loader, Jit, NGen and Stack at Verbose; e.g. xperf -on or dotnet-trace --providers).`,
      });
    } else {
      const verbose = maxLevel >= 5;
      findings.push({
        id: "runtime",
        status: verbose ? "ok" : "partial",
        question: "Are there .NET runtime events?",
        counts,
        answer:
          `Yes: ${fmt(runtimeRows)} events of ${RUNTIME_SPEC} (${describe(u)}).` +
          (verbose
            ? ""
            : " None is at level Verbose: the session's level was below it, so the named method events and the verbose GC events (AllocationTick) are missing."),
        fix: verbose
          ? undefined
          : ep
            ? `Collect the runtime provider at level Verbose: ${DT} --clrevents <keywords, e.g. gc+loader+jit> --clreventlevel verbose (dotnet-trace's default profile collects it at Informational).`
            : `Collect the runtime provider at level Verbose (5): PerfView /ClrEventLevel:Verbose (its default); elsewhere ${RUNTIME_SPEC}:<keywords>:5.`,
      });
    }
  }

  // 2. jitted methods
  {
    const counts = {
      loadVerbose: m.loadedNamed,
      loadAddressOnly: m.loadedAddressOnly,
      jittingStarted: ids(RUNTIME, [145]),
      rundownJittedNamed: m.rundownJittedNamed,
    };
    const q = "Can jitted methods be named?";
    const fixJit = ep
      ? `Enable Jit and Loader on the runtime provider at level Verbose: ${DT} --clrevents jit+loader --clreventlevel verbose (the methods jitted during the session; the rundown at its end names those still loaded).`
      : `Enable Jit (0x10) and Loader (0x8) on the runtime provider at level Verbose: PerfView /ClrEvents:Jit+Loader (in its default); elsewhere ${RUNTIME_SPEC}:0x18:5.`;
    if (m.loadedNamed > 0) {
      findings.push({
        id: "jitted-methods",
        status: "ok",
        question: q,
        counts,
        answer:
          `Yes: ${fmt(m.loadedNamed)} Method/LoadVerbose events name the methods jitted during the trace` +
          (m.startNamed + m.endNamed
            ? ", and the rundown names those loaded before it."
            : "; methods jitted before the trace began are named only by a rundown (below)."),
      });
    } else if (m.startNamed + m.endNamed > 0) {
      findings.push({
        id: "jitted-methods",
        status: "partial",
        question: q,
        counts,
        answer:
          "Partly: there are no Method/LoadVerbose events, so only the methods the rundown lists are named (those still loaded when it ran); " +
          (ep
            ? "methods jitted and unloaded before the session ended (dynamic methods, collectible assemblies) show as '?'."
            : "methods jitted and unloaded in between, and those of processes that ended before the rundown, show as '?'."),
        fix: fixJit,
      });
    } else if (m.loadedAddressOnly > 0) {
      findings.push({
        id: "jitted-methods",
        status: "partial",
        question: q,
        counts,
        answer: `Not by name: ${fmt(m.loadedAddressOnly)} Method/Load events give the methods' addresses but not their names (the runtime writes the named, verbose method events only when the session's level is Verbose).`,
        fix: ep
          ? `Collect the runtime provider at level Verbose: ${DT} --clrevents jit+loader --clreventlevel verbose.`
          : `Collect the runtime provider at level Verbose (5): ${RUNTIME_SPEC}:0x18:5, PerfView /ClrEventLevel:Verbose.`,
      });
    } else {
      findings.push({
        id: "jitted-methods",
        status: "gap",
        question: q,
        counts,
        answer: `No: no method load events (Method/LoadVerbose) and no method rundown, so stack frames in jitted code show as '?' and JIT statistics are empty${noDotnet}.`,
        fix: fixJit,
      });
    }
  }

  // 3. precompiled (NGen, ReadyToRun) methods
  {
    const counts = { precompiledNamed: m.precompiledNamed, rundownNamed: m.startNamed + m.endNamed };
    const q = "Can NGen and ReadyToRun (precompiled) methods be named?";
    const fix = ep
      ? `The runtime's rundown at the session's end names the precompiled (ReadyToRun) methods loaded: ${STOP_NORMALLY}.`
      : `A rundown that names precompiled methods: ${RUNDOWN_SPEC}:0x138:5 (Loader, Jit, NGen, EndRundown; without OverrideAndSuppressNGenEvents 0x40000) just before the trace stops. ` +
        "(PerfView's own rundown leaves NGen methods out by default and looks NGen code up in the native images' PDBs instead.)";
    if (m.precompiledNamed > 0) {
      findings.push({
        id: "precompiled-methods",
        status: "ok",
        question: q,
        counts,
        answer: `Yes: ${fmt(m.precompiledNamed)} named method events are of precompiled code (MethodFlags neither Jitted, Dynamic nor JitHelper).`,
      });
    } else if (m.startNamed + m.endNamed > 0) {
      findings.push({
        id: "precompiled-methods",
        status: "gap",
        question: q,
        counts,
        answer: ep
          ? "No: the rundown lists only jitted methods: no ReadyToRun code was loaded, or the rundown's NGen keyword was off. Frames in ReadyToRun images show at best their module."
          : "No: the rundown lists only jitted methods. Either the rundown provider's NGen keyword (0x20) was off, or OverrideAndSuppressNGenEvents (0x40000) was on " +
            "(PerfView sets it by default and names NGen code from the native images' own PDBs instead), or no precompiled code ran. Frames in NGen or ReadyToRun images show at best their module.",
        fix,
      });
    } else {
      findings.push({
        id: "precompiled-methods",
        status: "gap",
        question: q,
        counts,
        answer: `No: precompiled code is named only by the rundown provider's method events, and there are none; frames in NGen or ReadyToRun images show at best their module${noDotnet}.`,
        fix,
      });
    }
  }

  // 4. rundown: methods loaded before the trace started
  {
    const start = ids(RUNDOWN, [141, 143, 145, 147, 151, 153, 155, 157]) + ids(RUNTIME, [135, 137, 139]);
    const end = ids(RUNDOWN, [142, 144, 146, 148, 152, 154, 156, 158]) + ids(RUNTIME, [136, 138, 140]);
    const startInit = ids(RUNDOWN, [147]),
      startComplete = ids(RUNDOWN, [145]) + ids(RUNTIME, [135]);
    const endInit = ids(RUNDOWN, [148]),
      endComplete = ids(RUNDOWN, [146]) + ids(RUNTIME, [136]);
    const counts = {
      startRundownEvents: start,
      endRundownEvents: end,
      dcStartVerbose: m.startNamed,
      dcStopVerbose: m.endNamed,
      startInit,
      startComplete,
      endInit,
      endComplete,
      rundownEvents: rundownRows,
    };
    const q = "Are methods loaded before the trace started covered?";
    const fix = ep
      ? `The runtime writes its rundown (${RUNDOWN_SPEC}, DCStop events) when an EventPipe session ends: ${STOP_NORMALLY}, and copy the file after dotnet-trace has exited.`
      : `PerfView runs an end rundown when it stops a trace (do not pass /NoRundown); elsewhere enable ${RUNDOWN_SPEC}:0x138:5 (Loader, Jit, NGen, EndRundown) just before stopping the trace, or ${RUNDOWN_SPEC}:0x78:5 (Loader, Jit, NGen, StartRundown) when it starts.`;
    // .NET processes that were (or may have been) running when the trace began and that no rundown
    // covered: they ended before an end rundown, with no start rundown (a process started during the
    // trace has no methods from before it)
    const startedDuring = (pid: number) => {
      const infos = processes.processes.filter((p) => p.pid === pid);
      return infos.length > 0 && infos.every((p) => p.start !== null);
    };
    const missed = [...perPid].filter(([pid, c]) => pid !== 0xffffffff && c.clrEvents > 0 && c.startNamed + c.endNamed === 0 && !startedDuring(pid));
    if (start + end === 0) {
      findings.push({
        id: "rundown",
        status: "gap",
        question: q,
        counts,
        answer: ep
          ? `No: there is no rundown (no DCStop events at the session's end), so methods jitted before the session began, and all precompiled code, cannot be named; their frames show as '?'${noDotnet}.`
          : `No: there is no rundown (no DCStart or DCStop events), so methods jitted before the trace began, and all precompiled code, cannot be named; their frames show as '?'${noDotnet}.`,
        fix,
      });
    } else {
      const parts: string[] = [];
      if (start) parts.push(`a start rundown (${fmt(start)} DCStart events${m.startNamed ? `, ${fmt(m.startNamed)} methods named` : ""})`);
      if (end) parts.push(`an end rundown (${fmt(end)} DCStop events${m.endNamed ? `, ${fmt(m.endNamed)} methods named` : ""})`);
      const cut = (startInit > startComplete ? 1 : 0) + (endInit > endComplete ? 1 : 0);
      let status: DoctorStatus = "ok";
      let answer = `Yes: the trace has ${parts.join(" and ")}.`;
      if (m.startNamed + m.endNamed === 0) {
        status = "partial";
        answer += " It names no method: the rundown's method events are missing (its Jit and NGen keywords were off, or the level was below Verbose).";
      }
      if (cut) {
        status = "partial";
        answer +=
          " A rundown began (DCInit) without completing (DCComplete): the trace stopped before the runtime finished it, so some methods may be missing.";
      }
      if (missed.length) {
        status = "partial";
        const names = missed
          .slice(0, 5)
          .map(([pid]) => `${nameOf(pid)} (${pid})`)
          .join(", ");
        answer += ` ${missed.length === 1 ? "One .NET process" : `${missed.length} .NET processes`} (${names}${missed.length > 5 ? ", ..." : ""}) logged .NET events but no rundown${!start ? " (ended before the end rundown?)" : ""}: their methods from before the trace are not named.`;
      }
      findings.push({
        id: "rundown",
        status,
        question: q,
        counts,
        answer,
        fix: status === "ok" ? undefined : start || ep ? fix : `${fix} A start rundown also covers processes that end before the trace stops.`,
      });
    }
  }

  // 5. managed modules (Loader)
  {
    const runtimeModules = ids(RUNTIME, [151, 152, 153]);
    const rundownModules = ids(RUNDOWN, [151, 152, 153, 154]);
    const loader = ids(RUNTIME, [151, 152, 153, 154, 155, 156, 157]) + ids(RUNDOWN, [151, 152, 153, 154, 155, 156, 157, 158]);
    const counts = { moduleLoadEvents: runtimeModules, moduleRundownEvents: rundownModules, loaderEvents: loader };
    const q = "Are the .NET modules known (Loader)?";
    const fix = ep
      ? `Enable Loader on the runtime provider: ${DT} --clrevents loader (the modules loaded during the session); the rundown at the session's end lists those still loaded (${STOP_NORMALLY}).`
      : `Enable Loader (0x8) on the runtime provider (${RUNTIME_SPEC}:0x8:4; in PerfView's default) and on the rundown provider (in ${RUNDOWN_SPEC}:0x138:5).`;
    if (runtimeModules + rundownModules > 0) {
      findings.push({
        id: "modules",
        status: "ok",
        question: q,
        counts,
        answer: `Yes: ${[runtimeModules ? `${fmt(runtimeModules)} module load events (runtime provider)` : "", rundownModules ? `${fmt(rundownModules)} module rundown events` : ""].filter(Boolean).join(" and ")} give methods their module and file.`,
      });
    } else {
      findings.push({
        id: "modules",
        status: "gap",
        question: q,
        counts,
        answer: `No: no module load or module rundown events, so methods come without their module (frames as '?!Method') and JIT statistics without module paths${noDotnet}.`,
        fix,
      });
    }
  }

  // 6. stacks
  {
    const kernelStacks = ops(K_STACKWALK, [32]);
    const stackKeys = ops(K_STACKWALK, [37, 38]);
    const keyDefinitions = ops(K_STACKWALK, [35, 36]);
    const clrStackWalk = ids(RUNTIME, [82]) + ids(RUNDOWN, [0]) + ids(PRIVATE, [151]) + ids(STRESS, [1]);
    const counts = {
      eventHeaderStacks: extStacks,
      kernelStackWalk: kernelStacks,
      compressedStackRefs: stackKeys,
      compressedStackDefinitions: keyDefinitions,
      clrStackWalk,
    };
    const q = "Are stacks present?";
    const fix = ep
      ? `EventPipe records each event's managed stack unless the session turned stacks off: collect with ${DT} (it keeps them), and add the sample profiler (--providers Microsoft-DotNETCore-SampleProfiler) for stacks of the running threads.`
      : "Collect stacks: PerfView does for its kernel events and CPU samples by default (and for .NET events with /ClrEvents:...+Stack); xperf -on PROC_THREAD+LOADER+PROFILE -stackwalk Profile; for a manifest provider, its stack option (xperf -on Provider:keywords:level:'stack', EVENT_ENABLE_PROPERTY_STACK_TRACE); the runtime provider's Stack keyword (0x40000000) adds ClrStackWalk events.";
    const parts: string[] = [];
    if (extStacks)
      parts.push(ep ? `${count(extStacks, "event", "events")} with its managed stack` : `${fmt(extStacks)} in event headers (stack extended items)`);
    if (kernelStacks) parts.push(`${fmt(kernelStacks)} kernel StackWalk events`);
    if (stackKeys) parts.push(`${fmt(stackKeys)} compressed stack references with ${fmt(keyDefinitions)} key definitions`);
    if (clrStackWalk) parts.push(`${fmt(clrStackWalk)} ClrStackWalk events (managed frames of .NET events)`);
    if (!parts.length) {
      findings.push({
        id: "stacks",
        status: "gap",
        question: q,
        counts,
        answer: "No: no stack of any kind, so neither CPU samples nor events can be attributed to the code that ran.",
        fix,
      });
    } else if (stackKeys && !keyDefinitions) {
      findings.push({
        id: "stacks",
        status: "partial",
        question: q,
        counts,
        answer: `Partly: ${parts.join(", ")}; the compressed stacks' key definitions (StackWalk KeyDelete/KeyRundown) are missing, so those stacks cannot be read.`,
        fix: "Stop the kernel session normally so that it writes its stack key rundown (PerfView and xperf do).",
      });
    } else {
      findings.push({ id: "stacks", status: "ok", question: q, counts, answer: `Yes: ${parts.join(", ")}.` });
    }
  }

  // 7. CPU samples: an EventPipe file's come from the runtime's sample profiler
  if (ep) {
    const samples = ids(SAMPLE_PROFILER, [0]);
    const counts = { samples, eventStacks: extStacks };
    const q = "Are there CPU samples (a CPU profile)?";
    const fix = `Add the sample profiler: ${DT} --providers Microsoft-DotNETCore-SampleProfiler,<the other providers> (dotnet-trace collects it by default, when neither --providers nor --profile is given).`;
    if (!samples) {
      findings.push({
        id: "cpu-samples",
        status: "gap",
        question: q,
        counts,
        answer:
          "No: no samples of the runtime's sample profiler (Microsoft-DotNETCore-SampleProfiler Thread/Sample), so no CPU profile: where the time went cannot be told.",
        fix,
      });
    } else if (!extStacks) {
      findings.push({
        id: "cpu-samples",
        status: "partial",
        question: q,
        counts,
        answer: `Partly: ${fmt(samples)} thread samples of the sample profiler, but no stacks: time per thread only, not per method.`,
        fix: `Keep stacks on: ${DT} records each event's managed stack (the sample profiler's too) unless the session turns them off.`,
      });
    } else {
      findings.push({
        id: "cpu-samples",
        status: "ok",
        question: q,
        counts,
        answer: `Yes: ${fmt(samples)} thread samples of the runtime's sample profiler (Microsoft-DotNETCore-SampleProfiler Thread/Sample), with the threads' managed stacks.`,
      });
    }
  } else {
    const samples = ops(K_PERFINFO, [46]);
    const stacks = ops(K_STACKWALK, [32, 37, 38]);
    const counts = { samples, kernelStackEvents: stacks };
    const q = "Are there CPU samples (a CPU profile)?";
    const fix =
      "PerfView collects CPU samples with stacks by default (/KernelEvents=Default); xperf -on PROC_THREAD+LOADER+PROFILE -stackwalk Profile; WPR -start CPU.";
    if (!samples) {
      findings.push({
        id: "cpu-samples",
        status: "gap",
        question: q,
        counts,
        answer: "No: no kernel CPU samples (PerfInfo/Sample), so no CPU profile: where the time went cannot be told.",
        fix,
      });
    } else if (!stacks) {
      findings.push({
        id: "cpu-samples",
        status: "partial",
        question: q,
        counts,
        answer: `Partly: ${fmt(samples)} CPU samples, but no kernel stacks: CPU time per process and thread only, not per method.`,
        fix: "Collect the samples' stacks: xperf -stackwalk Profile; PerfView does by default.",
      });
    } else {
      findings.push({
        id: "cpu-samples",
        status: "ok",
        question: q,
        counts,
        answer: `Yes: ${fmt(samples)} CPU samples (PerfInfo/Sample) and ${fmt(stacks)} kernel stack events to attribute them.`,
      });
    }
  }

  // 8. events lost: in an EventPipe file, as the capture threads' sequence numbers tell
  if (ep) {
    const { eventsLost } = o.info;
    const counts = { eventsLost };
    const q = "Were events lost?";
    if (o.eventPipeVersion !== undefined && o.eventPipeVersion <= 3) {
      findings.push({
        id: "lost",
        status: "partial",
        question: q,
        counts,
        answer: "Cannot be told: a .netperf file (V2, V3) numbers no events (sequence numbers came with the .nettrace format of .NET Core 3.0).",
        fix: "Collect from a .NET Core 3.0 or later process, whose .nettrace files number every event per thread.",
      });
    } else if (!eventsLost) {
      findings.push({ id: "lost", status: "ok", question: q, counts, answer: "No: every capture thread's sequence numbers run on without a gap." });
    } else {
      findings.push({
        id: "lost",
        status: "gap",
        question: q,
        counts,
        answer: `Yes: ${fmt(eventsLost)} events (gaps in the capture threads' sequence numbers): the session's buffer filled faster than dotnet-trace wrote it out. Counts and durations are low where events were dropped, and pairs such as GC start/stop can be broken.`,
        fix: `Give the session a bigger buffer: ${DT} --buffersize 1024 (MB; 256 by default), write the file to a fast local disk, or leave out high-volume keywords (e.g. the runtime's gcsampledobjectallocationhigh).`,
      });
    }
  } else {
    const { eventsLost, buffersLost } = o.info;
    const lostRows = rows(K_LOST);
    const counts = { eventsLost, buffersLost, lostEventRecords: lostRows };
    const q = "Were events or buffers lost?";
    if (!eventsLost && !buffersLost && !lostRows) {
      findings.push({
        id: "lost",
        status: "ok",
        question: q,
        counts,
        answer: "No: the logfile header counts no events and no buffers lost, and no lost-event records were logged.",
      });
    } else {
      const what = [
        eventsLost ? `${fmt(eventsLost)} events` : "",
        buffersLost ? `${fmt(buffersLost)} buffers` : "",
        lostRows ? `${fmt(lostRows)} lost-event records` : "",
      ]
        .filter(Boolean)
        .join(", ");
      findings.push({
        id: "lost",
        status: "gap",
        question: q,
        counts,
        answer: `Yes: ${what} (logfile header and Lost_Event records). Counts and durations are low where events were dropped, and pairs such as GC start/stop, JIT start/load and stacks with their events can be broken.`,
        fix: "Give the session bigger and more buffers (PerfView /BufferSizeMB:1024; xperf -BufferSize 1024 -MinBuffers 256 -MaxBuffers 1024; logman -bs 1024 -nb 256 1024), write to a fast local disk, or leave out high-volume keywords (e.g. the runtime's GCSampledObjectAllocationHigh 0x200000).",
      });
    }
  }

  // 9. decoding
  {
    const counts = { warnings: o.warningTotal, incomplete: o.incomplete ? 1 : 0 };
    const q = "Was the file read whole?";
    if (o.incomplete) {
      findings.push({
        id: "decoding",
        status: "gap",
        question: q,
        counts,
        answer: `No: decoding stopped at byte offset ${o.incomplete.offset} (${o.incomplete.reason}: ${o.incomplete.message}); everything after it is missing from this report.`,
        fix:
          o.incomplete.reason === "capacity"
            ? "Give the decoder more memory (--max-memory) or read it as a stream (the commands that stream do)."
            : ep
              ? `Let dotnet-trace finish the file (${STOP_NORMALLY}), then copy it again (a file still being written, or cut short in transfer, ends early).`
              : "Copy the file again from the machine that recorded it, after the trace was stopped (a file still being written, or cut short in transfer, ends early).",
      });
    } else if (o.warningTotal) {
      const first = o.warnings[0];
      findings.push({
        id: "decoding",
        status: "partial",
        question: q,
        counts,
        answer: `Mostly: ${fmt(o.warningTotal)} damaged places were stepped over (first at byte ${first?.offset}: ${first?.message}); the events there are missing.`,
        fix: "Copy the file again from the machine that recorded it (damage usually comes from a copy cut short or corrupted in transfer).",
      });
    } else {
      findings.push({
        id: "decoding",
        status: "ok",
        question: q,
        counts,
        answer: ep ? "Yes: every block decoded without damage, up to the end of the stream." : "Yes: every buffer decoded without damage.",
      });
    }
  }

  // 10. the process: an EventPipe file's is one, named by the EventPipe provider's ProcessInfo
  if (ep) {
    const processInfo = ids(EVENTPIPE, [1]);
    const pids = [...perPid.keys()].filter((p) => p !== 0xffffffff);
    // (the file's events all carry its process id; those of the runtime are counted per process above)
    const pid: number | undefined = pids[0] ?? processes.processes[0]?.pid;
    const named = pid === undefined ? undefined : processes.fixedName(pid) || processes.processes.find((p) => p.pid === pid)?.name;
    const counts = { processInfo };
    const q = "Is the process known (ProcessInfo)?";
    if (processInfo && named) {
      const cmd = processes.processes.find((p) => p.pid === pid)?.commandLine;
      findings.push({
        id: "processes",
        status: "ok",
        question: q,
        counts,
        answer: `Yes: the file's process, ${named} (${pid}), is named by ProcessInfo${cmd ? ` (command line: ${cmd.trim()})` : ""}.`,
      });
    } else {
      findings.push({
        id: "processes",
        status: "partial",
        question: q,
        counts,
        answer: `Partly: the file gives its process's id${pids.length ? ` (${pids.join(", ")})` : ""} but not its name: there is no ProcessInfo event (runtimes before .NET 5 do not write it), so it shows as Process(<pid>).`,
        fix: "Collect from a .NET 5 or later process, whose runtime writes ProcessInfo (its command line) when the session starts; with an older one, the process is the one given to dotnet-trace collect -p or -n.",
      });
    }
  } else {
    const dcStart = ops(K_PROCESS, [3]),
      start = ops(K_PROCESS, [1]),
      dcEnd = ops(K_PROCESS, [4]),
      end = ops(K_PROCESS, [2]);
    const threadDcStart = ops(K_THREAD, [3]),
      threadStart = ops(K_THREAD, [1]);
    const counts = { processDCStart: dcStart, processStart: start, processDCStop: dcEnd, processEnd: end, threadDCStart: threadDcStart, threadStart };
    const q = "Are processes and threads known (kernel process rundown)?";
    const fix =
      "Enable the kernel's process and thread events: PerfView /KernelEvents=Default (or Process+Thread+ImageLoad); xperf -on PROC_THREAD+LOADER. The kernel session writes its process rundown when it starts and stops.";
    if (dcStart + dcEnd > 0) {
      findings.push({
        id: "processes",
        status: "ok",
        question: q,
        counts,
        answer: `Yes: ${count(dcStart || dcEnd, "process", "processes")} listed by the kernel's rundown (Process/DCStart${dcEnd ? ", DCStop" : ""}), ${fmt(start)} started and ${fmt(end)} ended during the trace; threads: ${fmt(threadDcStart)} in the rundown, ${fmt(threadStart)} started.`,
      });
    } else if (start + end > 0) {
      findings.push({
        id: "processes",
        status: "partial",
        question: q,
        counts,
        answer: `Partly: ${count(start, "process", "processes")} started during the trace ${start === 1 ? "is" : "are"} named, but there is no process rundown (Process/DCStart), so processes already running show as Process(<pid>).`,
        fix,
      });
    } else {
      findings.push({
        id: "processes",
        status: "gap",
        question: q,
        counts,
        answer:
          "No: no kernel process events, so processes show as Process(<pid>) (no names or command lines) and events without a process id cannot be placed.",
        fix,
      });
    }
  }

  // 11. kernel image rundown (an EventPipe file has no kernel events: its managed frames are placed by module 5.)
  if (!ep) {
    const dcStart = ops(K_IMAGE, [3]),
      load = ops(K_IMAGE, [10]),
      dcEnd = ops(K_IMAGE, [4]),
      unload = ops(K_IMAGE, [2]);
    const pdbIds = ops(KTC_IMAGEID, [36]);
    const counts = { imageDCStart: dcStart, imageLoad: load, imageDCStop: dcEnd, imageUnload: unload, pdbIdentities: pdbIds };
    const q = "Are loaded images (EXEs, DLLs) known (kernel image rundown)?";
    const fix = "Enable the kernel's image load events: PerfView /KernelEvents=Default (ImageLoad); xperf -on PROC_THREAD+LOADER.";
    const pdbNote = pdbIds
      ? ` ${fmt(pdbIds)} PDB identities (KernelTraceControl ImageID/DbgID_RSDS) let native symbols be looked up.`
      : " There are no PDB identities (KernelTraceControl ImageID/DbgID_RSDS, added when PerfView or xperf merges the trace), so native symbols cannot be looked up from symbol files.";
    if (dcStart + dcEnd > 0) {
      findings.push({
        id: "images",
        status: "ok",
        question: q,
        counts,
        answer: `Yes: ${count(dcStart || dcEnd, "image", "images")} listed by the kernel's rundown (Image/DCStart${dcEnd ? ", DCStop" : ""}), ${fmt(load)} loaded during the trace, so native frames get their module.${pdbNote}`,
      });
    } else if (load > 0) {
      findings.push({
        id: "images",
        status: "partial",
        question: q,
        counts,
        answer: `Partly: ${count(load, "image", "images")} loaded during the trace ${load === 1 ? "is" : "are"} known, but there is no image rundown (Image/DCStart), so frames in images loaded before the trace show as '?'.${pdbNote}`,
        fix,
      });
    } else {
      findings.push({
        id: "images",
        status: "gap",
        question: q,
        counts,
        answer: "No: no kernel image events, so native frames (and code in NGen and ReadyToRun images) cannot be placed in their EXE or DLL.",
        fix,
      });
    }
  }

  const procs: DoctorProcess[] = [...perPid]
    .filter(([pid, c]) => pid !== 0xffffffff && c.clrEvents > 0)
    .map(([pid, c]) => {
      const infos = processes.processes.filter((p) => p.pid === pid);
      return {
        pid,
        name: nameOf(pid),
        clrEvents: c.clrEvents,
        loadedNamed: c.loadedNamed,
        startRundown: c.startNamed,
        endRundown: c.endNamed,
        precompiledNamed: c.precompiledNamed,
        runningAtStart: infos.length ? infos.some((p) => p.start === null) : null,
        endedDuringTrace: infos.some((p) => p.end !== null),
      };
    })
    .sort((a, b) => b.clrEvents - a.clrEvents);
  return { findings, processes: procs, providers };
}

const LABEL: Record<DoctorStatus, string> = { ok: "ok     ", partial: "partly ", gap: "GAP    " };

/** The report as text: a line per finding (status, question, answer), its fix indented below, then the .NET processes. */
export function formatDoctor(report: DoctorReport): string[] {
  const out: string[] = [];
  for (const f of report.findings) {
    out.push(`${LABEL[f.status]}${f.question} ${f.answer}`);
    if (f.fix) out.push(`       fix: ${f.fix}`);
  }
  if (report.processes.length) {
    out.push("", ".NET processes (methods named: jitted during the trace / start rundown / end rundown; precompiled among them):");
    for (const p of report.processes) {
      const life = p.runningAtStart === null ? "" : p.runningAtStart ? ", running when the trace began" : ", started during the trace";
      out.push(
        `  ${String(p.pid).padStart(6)}  ${p.name}: ${fmt(p.clrEvents)} .NET events; ${fmt(p.loadedNamed)} / ${fmt(p.startRundown)} / ${fmt(p.endRundown)}; ${fmt(p.precompiledNamed)} precompiled${life}${p.endedDuringTrace ? ", ended during it" : ""}`,
      );
    }
  }
  return out;
}

/** The report as JSON-ready data (keyword masks as hex strings). */
export function doctorJson(report: DoctorReport): unknown {
  return {
    ...report,
    providers: report.providers.map((p) => ({ ...p, keywords: "0x" + p.keywords.toString(16) })),
  };
}
