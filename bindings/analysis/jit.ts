// JIT statistics as TraceEvent's JITStats computes them: the .NET runtime's events replayed in time
// order, per process. Method/JittingStarted opens a method; Method/LoadVerbose (or Method/Load) of a
// jitted method closes the newest method still open on the same thread, whose JIT time is the time
// between the two; a load with no open method is a method of zero JIT time. Module paths come from
// the loader's module events (filled in when they come after the method).

import type { EventRow, EventTable } from "../tables/event-table.js";
import type { ClrTable, RefColumn } from "../tables/clr-tables.js";
import { CLR_PROVIDERS } from "../schema/clr-payload.js";
import type { ClrEventSchema } from "../schema/clr-schema-types.js";
import { METHOD_STRINGS, methodNameOf, methodNameOfStrings } from "./symbols.js";
import { RowSources, type RowKinds } from "./row-source.js";

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

/**
 * One jitted method (TraceEvent's TraceJittedMethod), with its property names. A method is a view of its
 * process's columns (a process and an index, as a table's row is): `toJSON()` gives it as a plain object,
 * for `postMessage`, `structuredClone` or a spread, which read own properties only.
 */
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
  /** The method as a plain object (its values now). */
  toJSON(): JittedMethodValues;
}

/** A jitted method's values as a plain object (the four JIT memory sizes only where its MemoryAllocatedForJitCode came). */
export type JittedMethodValues = Omit<JittedMethod, "toJSON">;

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

/** A process's JIT statistics with its methods as plain objects (JittedMethod.toJSON): what a worker posts. */
export type JitProcessValues = Omit<JitProcess, "Methods"> & { Methods: JittedMethodValues[] };

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

const KINDS: CompilationThreadKind[] = ["Foreground", "MulticoreJitBackground", "TieredCompilationBackground"];
const FOREGROUND = 0,
  MULTICORE_BACKGROUND = 1,
  TIERED_BACKGROUND = 2;
/** OPTIMIZATION_TIERS' index of OptimizedTier1OSR. */
const TIER1_OSR = 5;

/**
 * Each method of a process in its columns, by its index (its place in the list), in pages of PAGE
 * methods: TIMES numbers in `times` (its times, sizes and version, as the payload's numbers), INTS small
 * integers in `ints`, its module id, and, once a method of the page has one, the four sizes of its
 * MemoryAllocatedForJitCode in `memory` (NaN: none); its name and module path in arrays. (Columns, not an
 * object per method: a trace's methods run to hundreds of thousands, and an object of a dozen fields is
 * several hundred bytes of the collector's; a method is a view.)
 */
const START = 0,
  CPU = 1,
  IL = 2,
  NATIVE = 3,
  VERSION = 4,
  TIMES = 5;
const TIER = 0,
  THREAD = 1,
  KIND = 2,
  COMPLETED = 3,
  INTS = 4;
const HOT = 0,
  RO_DATA = 1,
  ALLOCATED = 2,
  ALLOC_FLAG = 3,
  MEMORY = 4;

const PAGE_BITS = 8,
  PAGE = 1 << PAGE_BITS,
  IN_PAGE = PAGE - 1;

/** PAGE methods' columns (pages made as methods come: columns that doubled were copied, their fresh pages touched twice). */
interface Page {
  times: Float64Array;
  ints: Int32Array;
  modules: BigUint64Array;
  memory: Float64Array | null;
}

interface Methods {
  count: number;
  pages: Page[];
  names: string[];
  paths: string[];
}

function methods(): Methods {
  return { count: 0, pages: [], names: [], paths: [] };
}

/** The page of method `i`. */
function pageOf(m: Methods, i: number): Page {
  return m.pages[i >>> PAGE_BITS];
}

/** Method `i` of `m` added to totals. */
function add(t: JitTotals, m: Methods, i: number): void {
  t.Count++;
  const times = pageOf(m, i).times,
    at = (i & IN_PAGE) * TIMES;
  t.TotalCpuTimeMSec += times[at + CPU];
  t.TotalILSize += times[at + IL];
  t.TotalNativeSize += times[at + NATIVE];
}

/** A process's method `i` as TraceJittedMethod: read from the process's columns when asked. */
class MethodView implements JittedMethod {
  constructor(
    private readonly m: Methods,
    private readonly i: number,
  ) {}
  private int(k: number): number {
    return pageOf(this.m, this.i).ints[(this.i & IN_PAGE) * INTS + k];
  }
  private time(k: number): number {
    return pageOf(this.m, this.i).times[(this.i & IN_PAGE) * TIMES + k];
  }
  private size(k: number): number | undefined {
    const memory = pageOf(this.m, this.i).memory;
    const v = memory ? memory[(this.i & IN_PAGE) * MEMORY + k] : Number.NaN;
    return Number.isNaN(v) ? undefined : v;
  }
  get MethodName(): string {
    return this.m.names[this.i];
  }
  get StartTimeMSec(): number {
    return this.time(START);
  }
  get CompileCpuTimeMSec(): number {
    return this.time(CPU);
  }
  get ILSize(): number {
    return this.time(IL);
  }
  get NativeSize(): number {
    return this.time(NATIVE);
  }
  get OptimizationTier(): (typeof OPTIMIZATION_TIERS)[number] {
    return OPTIMIZATION_TIERS[this.int(TIER)];
  }
  get VersionID(): number {
    return this.time(VERSION);
  }
  get ThreadID(): number {
    return this.int(THREAD) >>> 0;
  }
  get ModuleILPath(): string {
    return this.m.paths[this.i];
  }
  get CompilationThreadKind(): CompilationThreadKind {
    return KINDS[this.int(KIND)];
  }
  get IsCompleted(): boolean {
    return this.int(COMPLETED) !== 0;
  }
  get JitHotCodeRequestSize(): number | undefined {
    return this.size(HOT);
  }
  get JitRODataRequestSize(): number | undefined {
    return this.size(RO_DATA);
  }
  get AllocatedSizeForJitCode(): number | undefined {
    return this.size(ALLOCATED);
  }
  get JitAllocFlag(): number | undefined {
    return this.size(ALLOC_FLAG);
  }
  get ModuleID(): bigint {
    return pageOf(this.m, this.i).modules[this.i & IN_PAGE];
  }
  toJSON(): JittedMethodValues {
    const v: JittedMethodValues = {
      MethodName: this.MethodName,
      StartTimeMSec: this.StartTimeMSec,
      CompileCpuTimeMSec: this.CompileCpuTimeMSec,
      ILSize: this.ILSize,
      NativeSize: this.NativeSize,
      OptimizationTier: this.OptimizationTier,
      VersionID: this.VersionID,
      ThreadID: this.ThreadID,
      ModuleILPath: this.ModuleILPath,
      CompilationThreadKind: this.CompilationThreadKind,
      IsCompleted: this.IsCompleted,
      ModuleID: this.ModuleID,
    };
    if (this.AllocatedSizeForJitCode !== undefined) {
      v.JitHotCodeRequestSize = this.JitHotCodeRequestSize;
      v.JitRODataRequestSize = this.JitRODataRequestSize;
      v.AllocatedSizeForJitCode = this.AllocatedSizeForJitCode;
      v.JitAllocFlag = this.JitAllocFlag;
    }
    return v;
  }
}

interface ProcessState {
  pid: number;
  /** Its name, given by `result()` (from the process table at `firstSeen`, which may be read only after the events). */
  name: string;
  /** Timestamp of its first event. */
  firstSeen: bigint;
  methods: Methods;
  Totals: JitTotals;
  ByKind: JitTotals[];
  modules: Map<bigint, string>;
  /** Per thread, its methods still open (started, not loaded), oldest first. */
  open: Map<number, number[]>;
  /** Per module, its methods started before its path was known (a module's events may come after its methods'). */
  pathless: Map<bigint, number[]>;
  /** The multicore JIT's background thread (0: none seen). */
  backgroundJitThread: number;
}

// What each event is to the computer (by its schema: looked up once per event type of a table).
const J_NONE = 0,
  J_STARTED = 1,
  J_LOADED = 2,
  J_MEMORY = 3,
  J_MODULE = 4,
  J_MULTICORE = 5;

function kindOf(schema: ClrEventSchema | undefined): number {
  if (!schema) return J_NONE;
  const id = schema.id;
  if (schema.provider === RUNTIME) {
    if (id === JITTING_STARTED) return J_STARTED;
    if (id === METHOD_LOAD || id === METHOD_LOAD_VERBOSE) return J_LOADED;
    if (id === MEMORY_FOR_JIT) return J_MEMORY;
    if (id === MODULE_LOAD || id === MODULE_UNLOAD) return J_MODULE;
  } else if (schema.provider === RUNDOWN) {
    if (id === RUNDOWN_MODULE_DC_STOP) return J_MODULE;
  } else if (schema.provider === PRIVATE && id === MULTICORE_JIT_COMMON) return J_MULTICORE;
  return J_NONE;
}

/** A number column of a typed table, read as a number (a 64-bit one as its nearest), or null where the version has no such field. */
function numbers(table: ClrTable, name: string): ((e: number) => number) | null {
  const c = table.columns[name];
  if (!c || "offset" in c) return null;
  if (c instanceof BigUint64Array || c instanceof BigInt64Array) {
    const w = new Uint32Array(c.buffer, c.byteOffset, 2 * c.length);
    return c instanceof BigUint64Array ? (e) => w[2 * e + 1] * 4294967296 + w[2 * e] : (e) => Number(c[e]);
  }
  const v = c as ArrayLike<number>;
  return (e) => v[e];
}

/** The columns of one method event type's typed table that the computer reads (null: not in its version). */
class MethodColumns {
  readonly module: BigUint64Array | null;
  readonly ilSize: ((e: number) => number) | null;
  readonly flags: ((e: number) => number) | null;
  readonly size: ((e: number) => number) | null;
  readonly reJit: ((e: number) => number) | null;
  /** The three name strings (all or none). */
  readonly names: RefColumn[] | null;
  /** MemoryAllocatedForJitCode's four sizes. */
  readonly memory: (((e: number) => number) | null)[];
  constructor(readonly table: ClrTable) {
    const module = table.columns.ModuleID;
    this.module = module instanceof BigUint64Array ? module : null;
    this.ilSize = numbers(table, "MethodILSize");
    this.flags = numbers(table, "MethodFlags");
    this.size = numbers(table, "MethodSize");
    this.reJit = numbers(table, "ReJITID");
    const names = METHOD_STRINGS.map((n) => table.columns[n]);
    this.names = names.every((c) => c && "offset" in c) ? (names as RefColumn[]) : null;
    this.memory = ["JitHotCodeRequestSize", "JitRODataRequestSize", "AllocatedSizeForJitCode", "JitAllocFlag"].map((n) => numbers(table, n));
  }
  /** Entry e's full method name (from its three strings, where they lie in the record bytes). */
  name(e: number): string {
    const [ns, name, sig] = this.names!,
      bytes = this.table.bytes;
    return methodNameOfStrings(
      bytes,
      ns.offset[e],
      ns.offset[e] + ns.length[e],
      name.offset[e],
      name.offset[e] + name.length[e],
      sig.offset[e],
      sig.offset[e] + sig.length[e],
    );
  }
}

/** The JIT computer's kinds of events, and the method events' typed columns (see RowSource). */
const JIT_ROWS: RowKinds<MethodColumns> = {
  kindOf,
  typedKind: (kind) => kind === J_STARTED || kind === J_LOADED || kind === J_MEMORY,
  readerOf(table) {
    if (!table.bytes.length) return null;
    const c = new MethodColumns(table);
    // (a method event with names whose strings are not all in its table is read from its row)
    return c.names || !table.schema.fields.some((f) => f.name === "MethodName") ? c : null;
  },
};

/**
 * Replays runtime events one at a time, in time order (`add`, or `addRows` from a table's columns), and
 * gives the statistics per process (`result`). `processName(pid, ts)` names each process at its first
 * event, when `result` is called (a stream's own process table is complete only then).
 */
export class JitComputer {
  private readonly processes = new Map<number, ProcessState>();
  private readonly sources = new RowSources(JIT_ROWS);

  constructor(private readonly processName: (pid: number, timestamp: bigint) => string) {}

  add(row: EventRow): void {
    const kind = kindOf(row.clrSchema);
    if (kind !== J_NONE) this.addRow(row, kind);
  }

  /**
   * The events of `rows` of `table`, in the order given (time order). `typed`: the trace's typed .NET
   * tables, whose values (and method names' strings) are read where a method event has an entry.
   */
  addRows(table: EventTable, rows: ArrayLike<number>, typed: readonly ClrTable[] = []): void {
    const src = this.sources.of(table, typed);
    for (let j = 0; j < rows.length; j++) {
      const i = rows[j];
      const kind = src.kind(i);
      if (kind === J_NONE) continue;
      const c = src.typed(i, kind);
      if (!c) {
        this.addRow(src.rowAt(i), kind);
        continue;
      }
      const e = src.entry;
      const state = this.stateOf(src.pidOf(i), table.columns.timestamp[i]);
      const tid = src.tidOf(i);
      if (kind === J_STARTED) {
        const name = c.names ? c.name(e) : "";
        this.openOn(state, tid).push(this.started(state, tid, table.relativeMSecOf(i), c.module ? c.module[e] : 0n, c.ilSize ? c.ilSize(e) : 0, name));
      } else if (kind === J_MEMORY) {
        const m = c.memory;
        this.memory(state, tid, m[0] ? m[0](e) : 0, m[1] ? m[1](e) : 0, m[2] ? m[2](e) : 0, m[3] ? m[3](e) : 0);
      } else {
        const flags = c.flags ? c.flags(e) : 0;
        if ((flags & JITTED) === 0) continue;
        const openOnThread = this.openOn(state, tid);
        const rel = table.relativeMSecOf(i);
        let open = openOnThread.length ? openOnThread[openOnThread.length - 1] : -1;
        if (open < 0) open = this.started(state, tid, rel, c.module ? c.module[e] : 0n, 0, c.names ? c.name(e) : "");
        const version = c.table.id === METHOD_LOAD_VERBOSE && c.reJit ? c.reJit(e) : 0;
        this.loaded(state, openOnThread, open, tid, rel, flags, c.size ? c.size(e) : 0, version);
      }
    }
  }

  /** One event, its values read from its row. */
  private addRow(row: EventRow, kind: number): void {
    const state = this.stateOf(row.pid ?? 0, row.timestamp);
    const tid = row.tid ?? 0;
    switch (kind) {
      case J_MULTICORE: {
        const what = String(row.get("String1") ?? "");
        if (state.backgroundJitThread === 0 && (what === "GROUPWAIT" || what === "JITTHREAD")) state.backgroundJitThread = tid;
        return;
      }
      case J_MODULE:
        return this.module(state, row.get("ModuleID") as bigint, String(row.get("ModuleILPath") ?? ""));
      case J_STARTED:
        this.openOn(state, tid).push(this.started(state, tid, row.relativeMSec, moduleIdOf(row), Number(row.get("MethodILSize") ?? 0), methodNameOf(row)));
        return;
      case J_MEMORY:
        return this.memory(
          state,
          tid,
          Number(row.get("JitHotCodeRequestSize") ?? 0),
          Number(row.get("JitRODataRequestSize") ?? 0),
          Number(row.get("AllocatedSizeForJitCode") ?? 0),
          Number(row.get("JitAllocFlag") ?? 0),
        );
      case J_LOADED: {
        const flags = Number(row.get("MethodFlags") ?? 0);
        if ((flags & JITTED) === 0) return;
        const openOnThread = this.openOn(state, tid);
        let open = openOnThread.length ? openOnThread[openOnThread.length - 1] : -1;
        if (open < 0) {
          const verbose = row.clrSchema!.fields.some((f) => f.name === "MethodName");
          open = this.started(state, tid, row.relativeMSec, moduleIdOf(row), 0, verbose ? methodNameOf(row) : "");
        }
        const version = row.clrSchema!.id === METHOD_LOAD_VERBOSE ? Number(row.get("ReJITID") ?? 0) : 0;
        return this.loaded(state, openOnThread, open, tid, row.relativeMSec, flags, Number(row.get("MethodSize") ?? 0), version);
      }
    }
  }

  /** A module's path, given to the methods of the module still without one. */
  private module(state: ProcessState, module: bigint, path: string): void {
    state.modules.set(module, path);
    // (the methods of the module still without a path get it: listed per module, not found among every
    // method so far, which made a trace's module rundown cost its modules times its methods)
    const waiting = state.pathless.get(module);
    if (waiting) {
      const m = state.methods;
      for (const i of waiting) if (!m.paths[i]) m.paths[i] = path;
      if (path) state.pathless.delete(module);
    }
  }

  /** The methods still open on a thread, oldest first. */
  private openOn(state: ProcessState, tid: number): number[] {
    let openOnThread = state.open.get(tid);
    if (!openOnThread) state.open.set(tid, (openOnThread = []));
    return openOnThread;
  }

  /** MemoryAllocatedForJitCode: the sizes of the newest method open on the thread (its first only). */
  private memory(state: ProcessState, tid: number, hot: number, roData: number, allocated: number, allocFlag: number): void {
    const openOnThread = this.openOn(state, tid);
    if (!openOnThread.length) return;
    const open = openOnThread[openOnThread.length - 1];
    const page = pageOf(state.methods, open);
    const memory = (page.memory ??= new Float64Array(PAGE * MEMORY).fill(Number.NaN));
    const at = (open & IN_PAGE) * MEMORY;
    if (Number.isNaN(memory[at + ALLOCATED])) {
      memory[at + HOT] = hot;
      memory[at + RO_DATA] = roData;
      memory[at + ALLOCATED] = allocated;
      memory[at + ALLOC_FLAG] = allocFlag;
    }
  }

  /** A jitted method's load: method `open` (the newest open on the thread, or one just started) completed. */
  private loaded(
    state: ProcessState,
    openOnThread: number[],
    open: number,
    tid: number,
    relativeMSec: number,
    flags: number,
    native: number,
    version: number,
  ): void {
    const m = state.methods;
    const page = pageOf(m, open);
    const ints = page.ints,
      at = (open & IN_PAGE) * INTS;
    const times = page.times,
      t = (open & IN_PAGE) * TIMES;
    const cpu = relativeMSec - times[t + START];
    const tier = (flags >> 7) & 7;
    times[t + NATIVE] = native;
    times[t + CPU] = cpu;
    times[t + VERSION] = version;
    ints[at + TIER] = tier;
    const kind = tid === state.backgroundJitThread && tid !== 0 ? MULTICORE_BACKGROUND : tier === TIER1_OSR || version === 0 ? FOREGROUND : TIERED_BACKGROUND;
    ints[at + KIND] = kind;
    ints[at + COMPLETED] = 1;
    // closed, unless its load gave it neither size nor time: then it still counts as open
    const stillOpen = native === 0 && cpu === 0;
    if (openOnThread.length && openOnThread[openOnThread.length - 1] === open) {
      if (!stillOpen) openOnThread.pop();
    } else if (stillOpen) openOnThread.push(open);
    add(state.Totals, m, open);
    add(state.ByKind[kind], m, open);
  }

  private stateOf(pid: number, timestamp: bigint): ProcessState {
    let state = this.processes.get(pid);
    if (!state) {
      state = {
        pid,
        name: "",
        firstSeen: timestamp,
        methods: methods(),
        Totals: totals(),
        ByKind: [totals(), totals(), totals()],
        modules: new Map(),
        open: new Map(),
        pathless: new Map(),
        backgroundJitThread: 0,
      };
      this.processes.set(pid, state);
    }
    return state;
  }

  /** A new method of the process (started by a JittingStarted, or a load without one): its index. */
  private started(state: ProcessState, tid: number, relativeMSec: number, module: bigint, ilSize: number, name: string): number {
    const m = state.methods;
    const i = m.count++;
    if ((i & IN_PAGE) === 0)
      m.pages.push({ times: new Float64Array(PAGE * TIMES), ints: new Int32Array(PAGE * INTS), modules: new BigUint64Array(PAGE), memory: null });
    const page = pageOf(m, i);
    m.names.push(name);
    const path = state.modules.get(module) ?? "";
    m.paths.push(path);
    page.modules[i & IN_PAGE] = BigInt.asUintN(64, module);
    const t = (i & IN_PAGE) * TIMES;
    page.times[t + START] = relativeMSec;
    page.times[t + IL] = ilSize;
    const at = (i & IN_PAGE) * INTS;
    page.ints[at + THREAD] = tid;
    page.ints[at + KIND] = FOREGROUND;
    if (!path) {
      const waiting = state.pathless.get(module);
      if (waiting) waiting.push(i);
      else state.pathless.set(module, [i]);
    }
    return i;
  }

  /** The processes with JIT events, by pid. */
  result(): JitProcess[] {
    const out: JitProcess[] = [];
    for (const state of [...this.processes.values()].sort((a, b) => a.pid - b.pid)) {
      const m = state.methods;
      if (!m.count) continue;
      state.name = this.processName(state.pid, state.firstSeen);
      // by module, case-insensitively, every method (PerfView's JITStatsEx)
      const byModule = new Map<string, JitTotals & { Module: string }>();
      const Methods: JittedMethod[] = [];
      for (let i = 0; i < m.count; i++) {
        Methods.push(new MethodView(m, i));
        const name = m.paths[i] || "<UNKNOWN>";
        const key = name.toLowerCase();
        let t = byModule.get(key);
        if (!t) byModule.set(key, (t = { Module: name, ...totals() }));
        add(t, m, i);
      }
      out.push({
        PID: state.pid,
        ProcessName: state.name,
        Methods,
        Totals: state.Totals,
        ByKind: {
          Foreground: state.ByKind[FOREGROUND],
          MulticoreJitBackground: state.ByKind[MULTICORE_BACKGROUND],
          TieredCompilationBackground: state.ByKind[TIERED_BACKGROUND],
        },
        ByModule: [...byModule.values()].sort((a, b) => b.TotalCpuTimeMSec - a.TotalCpuTimeMSec),
      });
    }
    return out;
  }
}

/** A method event's ModuleID (0 where its payload has none). */
function moduleIdOf(row: EventRow): bigint {
  return (row.get("ModuleID") as bigint | undefined) ?? 0n;
}
