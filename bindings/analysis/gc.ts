// GC statistics as TraceEvent's GCStats computes them: the .NET runtime's GC events replayed in time
// order, per process, through its state machine (suspensions, GC/Start, GC/Stop, GC/HeapStats,
// RestartEE, allocation ticks, heap histories), one record per GC with TraceGC's property names, and
// the per-process rollup of PerfView's GCStats report. CPU-derived values (GC CPU time, % time in GC)
// need kernel CPU samples and are left out.

import type { EventRow, EventTable } from "../tables/event-table.js";
import type { ClrTable } from "../tables/clr-tables.js";
import type { ClrEventSchema } from "../schema/clr-schema-types.js";
import { CLR_PROVIDERS } from "../schema/clr-payload.js";
import { RowSources, type RowKinds, type RowSource } from "./row-source.js";
import { parseGlobalHeapHistory, parsePerHeapHistory, GEN0, GEN1, GEN2, LOH, POH, type PerHeapHistory } from "./gc-heap-history.js";

/** The providers whose events the GC statistics read (for a decode-time filter). */
export const GC_PROVIDERS = ["Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimePrivate"];

const RUNTIME = CLR_PROVIDERS.findIndex((p) => p.name === "Microsoft-Windows-DotNETRuntime");
const PRIVATE = CLR_PROVIDERS.findIndex((p) => p.name === "Microsoft-Windows-DotNETRuntimePrivate");

// runtime event ids
const GC_START = 1,
  GC_STOP = 2,
  RESTART_EE_STOP = 3,
  HEAP_STATS = 4,
  SUSPEND_EE_STOP = 8,
  SUSPEND_EE_START = 9,
  ALLOCATION_TICK = 10;
const MARK_WITH_TYPE = 202,
  PER_HEAP_HISTORY = 204,
  GLOBAL_HEAP_HISTORY = 205;
// private event ids
const PRIVATE_PER_HEAP_HISTORY = 4,
  PRIVATE_GLOBAL_HEAP_HISTORY = 5,
  PRIVATE_MARK_HANDLES = 9;
/** MarkWithType's Type of handle marking: TraceLog tells server GC by the threads that log it. */
const MARK_HANDLES_TYPE = 2;
/** The ids of the events GcComputer reads, runtime and private. */
export const GC_EVENT_IDS = [
  GC_START,
  GC_STOP,
  RESTART_EE_STOP,
  HEAP_STATS,
  PRIVATE_GLOBAL_HEAP_HISTORY,
  SUSPEND_EE_STOP,
  SUSPEND_EE_START,
  ALLOCATION_TICK,
  MARK_WITH_TYPE,
  PER_HEAP_HISTORY,
  GLOBAL_HEAP_HISTORY,
];

/** TraceEvent's GCReason names, by value. */
export const GC_REASONS = [
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
] as const;
/** TraceEvent's GCType names, by value. */
export const GC_TYPES = ["NonConcurrentGC", "BackgroundGC", "ForegroundGC"] as const;

const SUSPEND_FOR_GC = 1,
  SUSPEND_FOR_GC_PREP = 6;
const INDUCED = 1,
  INDUCED_NOT_FORCED = 7,
  PM_FULL_GC = 12;
const NON_CONCURRENT = 0,
  BACKGROUND = 1,
  FOREGROUND = 2;

/**
 * One garbage collection, with TraceEvent's TraceGC property names. A record is a view of its process's
 * columns (a process and an index, as a table's row is): `toJSON()` gives it as a plain object, for
 * `postMessage`, `structuredClone` or a spread, which read own properties only.
 */
export interface GcRecord {
  PID: number;
  ProcessName: string;
  /** The GC's number (GC/Start's Count). */
  Number: number;
  Generation: number;
  /** GCReason name (a number where the runtime logged one TraceEvent does not name). */
  Reason: string;
  /** NonConcurrentGC, BackgroundGC or ForegroundGC. */
  Type: string;
  /** Generation and kind in PerfView's short form: 0N, 1NI, 2B, 1F ... */
  GCGenerationName: string;
  StartRelativeMSec: number;
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
  /** Size after the GC per generation (gen0, gen1, gen2, LOH, POH), MB; -1 without GC/HeapStats. */
  GenSizeAfterMB: number[];
  /** Heaps (GC/GlobalHeapHistory's NumHeaps, else the process's count so far; -1 unknown). */
  HeapCount: number;
  /** Complete: seen to its end (RestartEE after HeapStats; a background GC at its HeapStats). Only these count in rollups. */
  IsComplete: boolean;
  /** The record as a plain object (its values now, GenSizeAfterMB copied). */
  toJSON(): GcRecordValues;
}

/** A GC record's values as a plain object. */
export type GcRecordValues = Omit<GcRecord, "toJSON">;

/** A process's GC statistics with its records as plain objects (GcRecord.toJSON): what a worker posts. */
export type GcProcessValues = Omit<GcProcess, "GCs"> & { GCs: GcRecordValues[] };

/** Totals of a set of complete GCs, as GCStats rolls them up. */
export interface GcRollup {
  Count: number;
  NumInduced: number;
  TotalPauseTimeMSec: number;
  MaxPauseDurationMSec: number;
  MeanPauseDurationMSec: number;
  TotalAllocatedMB: number;
  TotalPromotedMB: number;
  TotalSizeAfterMB: number;
  TotalSizePeakMB: number;
  MaxSizePeakMB: number;
  MeanSizeAfterMB: number;
  MeanSizePeakMB: number;
  MaxAllocRateMBSec: number;
  MaxSuspendDurationMSec: number;
}

export interface GcProcess {
  PID: number;
  ProcessName: string;
  /** Every GC, complete or not, in order of GC/Start. */
  GCs: GcRecord[];
  /** Complete GCs: all of them, then generations 0, 1 and 2. */
  Total: GcRollup;
  Generations: [GcRollup, GcRollup, GcRollup];
  /** From the first complete GC's pause start to the last GC/HeapStats, milliseconds. */
  ProcessDurationMSec: number;
  /** TotalPauseTimeMSec × 100 / ProcessDurationMSec (0 if that is 0). */
  GCPauseTimePercentage: number;
  /** Whether the process ran server GC (several threads marking handles in one GC). */
  IsServerGC: boolean;
  /** Heaps, from GC/GlobalHeapHistory (-1 unknown). */
  HeapCount: number;
  /** Whether it logged allocation ticks (the estimate of allocations without heap histories). */
  HasAllocTickEvents: boolean;
  /** A GC/PerHeapHistory of a layout TraceEvent does not know was left out. */
  GCVersionInfoMismatch: boolean;
}

/**
 * Each GC of a process in its columns, by its index (its place in GC/Start order): NUMBERS numbers and
 * CODES integers, in pages of PAGE GCs (a page made when its first GC comes: columns that doubled as they
 * grew were copied and their fresh pages touched twice, which on a VM that takes 10 µs a page fault was a
 * tenth of a streamed gcStats; num/code read them, setNum/setCode write them). Numbers: GC/HeapStats'
 * sizes and promoted bytes by generation (gen0..POH), the allocation ticks since the GC before (small
 * objects, every other kind, MB), the time since the last restart, then TraceGC's values that are times
 * or that OnEnd works out. Codes: GC/Start's count, generation, reason and type, the heap count, and the
 * F_* flags. (Columns, not an object per GC: a trace's GCs run to hundreds of thousands, and an object
 * of twenty numbers is about 600 bytes of the collector's, copied while it lives; a record is a view.)
 */
const GEN_SIZE = 0,
  PROMOTED = 5,
  TICKS = 10,
  SINCE_RESTART = 12,
  START = 13,
  PAUSE_START = 14,
  SUSPEND = 15,
  PAUSE = 16,
  DURATION = 17,
  HEAP_BEFORE = 18,
  HEAP_PEAK = 19,
  ALLOCED = 20,
  ALLOC_RATE = 21,
  RATIO = 22,
  PAUSE_PERCENT = 23,
  NUMBERS = 24;
const NUMBER = 0,
  GENERATION = 1,
  REASON = 2,
  TYPE = 3,
  HEAP_COUNT = 4,
  FLAGS = 5,
  CODES = 6;
/** FLAGS: complete; GC/HeapStats seen (its numbers are kept); allocation ticks noted at it. */
const F_COMPLETE = 1,
  F_HEAP_STATS = 2,
  F_TICKS = 4;
const PAGE_BITS = 8,
  PAGE = 1 << PAGE_BITS,
  IN_PAGE = PAGE - 1;

/** GC `gc`'s number `k`. */
function num(s: ProcessState, gc: number, k: number): number {
  return s.numbers[gc >>> PAGE_BITS][(gc & IN_PAGE) * NUMBERS + k];
}
function setNum(s: ProcessState, gc: number, k: number, v: number): void {
  s.numbers[gc >>> PAGE_BITS][(gc & IN_PAGE) * NUMBERS + k] = v;
}
/** GC `gc`'s code `k`. */
function code(s: ProcessState, gc: number, k: number): number {
  return s.codes[gc >>> PAGE_BITS][(gc & IN_PAGE) * CODES + k];
}
function setCode(s: ProcessState, gc: number, k: number, v: number): void {
  s.codes[gc >>> PAGE_BITS][(gc & IN_PAGE) * CODES + k] = v;
}

interface ProcessState {
  pid: number;
  /** Its name, given by `result()` (from the process table at `firstSeen`, which may be read only after the events). */
  name: string;
  /** Timestamp of its first GC event. */
  firstSeen: bigint;
  /** GCs so far. */
  count: number;
  /** NUMBERS numbers of each GC, by its index: pages of PAGE GCs. */
  numbers: Float64Array[];
  /** CODES integers of each GC, by its index: pages of PAGE GCs. */
  codes: Int32Array[];
  /** Per-heap histories of the GCs that have them, by index. */
  perHeap: Map<number, PerHeapHistory[]>;
  suspendThreadIDGC: number;
  suspendThreadIDBGC: number;
  suspendThreadIDOther: number;
  suspendTimeRelativeMSec: number;
  suspendEndTimeRelativeMSec: number;
  lastRestartEndTimeRelativeMSec: number;
  /** The background GC in progress, and the GC completed last (indices, -1: none). */
  currentBGC: number;
  lastCompletedGC: number;
  /** Allocation-tick megabytes so far: small objects, and every other kind. */
  allocTickCurrentMB: number[];
  allocTickAtLastGC: number[];
  hasAllocTickEvents: boolean;
  seenBadAllocTick: boolean;
  heapCount: number;
  /** Threads marking handles in the GC in progress (server GC detection). */
  markingThreads: Set<number>;
  isServerGC: boolean;
  versionMismatch: boolean;
}

/** A process's GC `i` as TraceGC's record: read from the process's columns when asked. */
class GcView implements GcRecord {
  constructor(
    private readonly s: ProcessState,
    private readonly i: number,
  ) {}
  private n(k: number): number {
    return num(this.s, this.i, k);
  }
  private c(k: number): number {
    return code(this.s, this.i, k);
  }
  /** OnEnd's values are a complete GC's; before it, a record's start values (0, and -1 for the sizes by generation). */
  private ended(k: number): number {
    return this.c(FLAGS) & F_COMPLETE ? this.n(k) : 0;
  }
  /** statsMB once OnEnd has run, 0 before it. */
  private statsMB(k: number): number {
    return this.c(FLAGS) & F_COMPLETE ? statsMB(this.s, this.i, k) : 0;
  }
  get PID(): number {
    return this.s.pid;
  }
  get ProcessName(): string {
    return this.s.name;
  }
  get Number(): number {
    return this.c(NUMBER) >>> 0;
  }
  get Generation(): number {
    return this.c(GENERATION) >>> 0;
  }
  get Reason(): string {
    const r = this.c(REASON) >>> 0;
    return GC_REASONS[r] ?? String(r);
  }
  get Type(): string {
    const t = this.c(TYPE) >>> 0;
    return GC_TYPES[t] ?? String(t);
  }
  get GCGenerationName(): string {
    return generationName(this.c(GENERATION) >>> 0, this.c(TYPE) >>> 0, this.c(REASON) >>> 0);
  }
  get StartRelativeMSec(): number {
    return this.n(START);
  }
  get PauseStartRelativeMSec(): number {
    return this.n(PAUSE_START);
  }
  get SuspendDurationMSec(): number {
    return this.n(SUSPEND);
  }
  get PauseDurationMSec(): number {
    return this.n(PAUSE);
  }
  get DurationMSec(): number {
    return this.n(DURATION);
  }
  get HeapSizeBeforeMB(): number {
    return this.ended(HEAP_BEFORE);
  }
  get HeapSizeAfterMB(): number {
    return this.statsMB(GEN_SIZE);
  }
  get HeapSizePeakMB(): number {
    return this.ended(HEAP_PEAK);
  }
  get PromotedMB(): number {
    return this.statsMB(PROMOTED);
  }
  get AllocedSinceLastGCMB(): number {
    return this.ended(ALLOCED);
  }
  get AllocRateMBSec(): number {
    return this.ended(ALLOC_RATE);
  }
  get RatioPeakAfter(): number {
    return this.ended(RATIO);
  }
  get PauseTimePercentageSinceLastGC(): number {
    return this.ended(PAUSE_PERCENT);
  }
  get GenSizeAfterMB(): number[] {
    const f = this.c(FLAGS);
    const sizes = [-1, -1, -1, -1, -1];
    if (f & F_COMPLETE && f & F_HEAP_STATS) for (let g = 0; g < 5; g++) sizes[g] = this.n(GEN_SIZE + g) / MB;
    return sizes;
  }
  get HeapCount(): number {
    return this.c(HEAP_COUNT);
  }
  get IsComplete(): boolean {
    return (this.c(FLAGS) & F_COMPLETE) !== 0;
  }
  toJSON(): GcRecordValues {
    return {
      PID: this.PID,
      ProcessName: this.ProcessName,
      Number: this.Number,
      Generation: this.Generation,
      Reason: this.Reason,
      Type: this.Type,
      GCGenerationName: this.GCGenerationName,
      StartRelativeMSec: this.StartRelativeMSec,
      PauseStartRelativeMSec: this.PauseStartRelativeMSec,
      SuspendDurationMSec: this.SuspendDurationMSec,
      PauseDurationMSec: this.PauseDurationMSec,
      DurationMSec: this.DurationMSec,
      HeapSizeBeforeMB: this.HeapSizeBeforeMB,
      HeapSizeAfterMB: this.HeapSizeAfterMB,
      HeapSizePeakMB: this.HeapSizePeakMB,
      PromotedMB: this.PromotedMB,
      AllocedSinceLastGCMB: this.AllocedSinceLastGCMB,
      AllocRateMBSec: this.AllocRateMBSec,
      RatioPeakAfter: this.RatioPeakAfter,
      PauseTimePercentageSinceLastGC: this.PauseTimePercentageSinceLastGC,
      GenSizeAfterMB: this.GenSizeAfterMB,
      HeapCount: this.HeapCount,
      IsComplete: this.IsComplete,
    };
  }
}

const MB = 1e6;

function rollup(): GcRollup {
  return {
    Count: 0,
    NumInduced: 0,
    TotalPauseTimeMSec: 0,
    MaxPauseDurationMSec: 0,
    MeanPauseDurationMSec: 0,
    TotalAllocatedMB: 0,
    TotalPromotedMB: 0,
    TotalSizeAfterMB: 0,
    TotalSizePeakMB: 0,
    MaxSizePeakMB: 0,
    MeanSizeAfterMB: 0,
    MeanSizePeakMB: 0,
    MaxAllocRateMBSec: 0,
    MaxSuspendDurationMSec: 0,
  };
}

/** A complete GC `gc` of `s` added to a rollup (read from the columns: a number a getter returns is a heap object). */
function addTo(r: GcRollup, s: ProcessState, gc: number): void {
  const reason = code(s, gc, REASON);
  const pause = num(s, gc, PAUSE),
    peak = num(s, gc, HEAP_PEAK);
  r.Count++;
  if (reason === INDUCED || reason === INDUCED_NOT_FORCED) r.NumInduced++;
  r.TotalPauseTimeMSec += pause;
  r.MaxPauseDurationMSec = Math.max(r.MaxPauseDurationMSec, pause);
  r.TotalAllocatedMB += num(s, gc, ALLOCED);
  r.TotalPromotedMB += statsMB(s, gc, PROMOTED);
  r.TotalSizeAfterMB += statsMB(s, gc, GEN_SIZE);
  r.TotalSizePeakMB += peak;
  r.MaxSizePeakMB = Math.max(r.MaxSizePeakMB, peak);
  r.MaxAllocRateMBSec = Math.max(r.MaxAllocRateMBSec, num(s, gc, ALLOC_RATE));
  r.MaxSuspendDurationMSec = Math.max(r.MaxSuspendDurationMSec, num(s, gc, SUSPEND));
}

/** The sum of GC/HeapStats' numbers of `gc` from `k` (five generations), MB; -1 without them. */
function statsMB(s: ProcessState, gc: number, k: number): number {
  if (!(code(s, gc, FLAGS) & F_HEAP_STATS)) return -1;
  const n = s.numbers[gc >>> PAGE_BITS],
    at = (gc & IN_PAGE) * NUMBERS + k;
  let sum = 0;
  for (let g = 0; g < 5; g++) sum += n[at + g];
  return sum / MB;
}

function finish(r: GcRollup): GcRollup {
  if (r.Count) {
    r.MeanPauseDurationMSec = r.TotalPauseTimeMSec / r.Count;
    r.MeanSizeAfterMB = r.TotalSizeAfterMB / r.Count;
    r.MeanSizePeakMB = r.TotalSizePeakMB / r.Count;
  }
  return r;
}

/** PerfView's short name of a GC's generation and kind: 0N, 2B, 1F, with I (induced) or i (induced, not forced). */
export function gcGenerationName(generation: number, type: number, reason: number): string {
  return `${generation}${type === BACKGROUND ? "B" : type === FOREGROUND ? "F" : "N"}${reason === INDUCED ? "I" : reason === INDUCED_NOT_FORCED ? "i" : ""}`;
}

/**
 * The payload's fixed fields, read where TraceEvent's parsers read them (a short payload reads 0):
 * these events are most of a trace's runtime events, and decoding each whole would cost more than
 * the statistics.
 */
class Fields {
  private bytes: Uint8Array | null = null;
  private v: DataView = new DataView(new ArrayBuffer(0));
  private base = 0;
  private len = 0;

  /** Reads row `index` of `table`'s payload from now on (one reader, moved from row to row: no view per event). */
  at(table: EventTable, index: number): this {
    const bytes = table.recordBytesOf(index);
    if (bytes !== this.bytes) {
      this.bytes = bytes;
      this.v = bytes ? new DataView(bytes.buffer, bytes.byteOffset, bytes.length) : new DataView(new ArrayBuffer(0));
    }
    this.base = table.columns.payloadOffset[index];
    this.len = bytes ? table.columns.payloadLength[index] : 0;
    return this;
  }
  u16(at: number): number {
    return at + 2 <= this.len ? this.v.getUint16(this.base + at, true) : 0;
  }
  u32(at: number): number {
    return at + 4 <= this.len ? this.v.getUint32(this.base + at, true) : 0;
  }
  i32(at: number): number {
    return at + 4 <= this.len ? this.v.getInt32(this.base + at, true) : 0;
  }
  /** An unsigned 64-bit field as the nearest number (no BigInt). */
  u64(at: number): number {
    return at + 8 <= this.len ? this.v.getUint32(this.base + at + 4, true) * 4294967296 + this.v.getUint32(this.base + at, true) : 0;
  }
  get length(): number {
    return this.len;
  }
}

// What each event is to the computer (by its schema: looked up once per event type of a table).
const K_NONE = 0,
  K_SUSPEND_START = 1,
  K_SUSPEND_STOP = 2,
  K_ALLOCATION_TICK = 3,
  K_GC_START = 4,
  K_GC_STOP = 5,
  K_HEAP_STATS = 6;
const K_RESTART_STOP = 7,
  K_GLOBAL_HISTORY = 8,
  K_PER_HEAP_HISTORY = 9,
  K_MARK_WITH_TYPE = 10,
  K_MARK_HANDLES = 11;

function kindOf(schema: ClrEventSchema | undefined): number {
  if (!schema) return K_NONE;
  if (schema.provider === RUNTIME) {
    switch (schema.id) {
      case SUSPEND_EE_START:
        return K_SUSPEND_START;
      case SUSPEND_EE_STOP:
        return K_SUSPEND_STOP;
      case ALLOCATION_TICK:
        return K_ALLOCATION_TICK;
      case GC_START:
        return K_GC_START;
      case GC_STOP:
        return K_GC_STOP;
      case HEAP_STATS:
        return K_HEAP_STATS;
      case RESTART_EE_STOP:
        return K_RESTART_STOP;
      case GLOBAL_HEAP_HISTORY:
        return K_GLOBAL_HISTORY;
      case PER_HEAP_HISTORY:
        return K_PER_HEAP_HISTORY;
      case MARK_WITH_TYPE:
        return K_MARK_WITH_TYPE;
    }
  } else if (schema.provider === PRIVATE) {
    switch (schema.id) {
      case PRIVATE_GLOBAL_HEAP_HISTORY:
        return K_GLOBAL_HISTORY;
      case PRIVATE_PER_HEAP_HISTORY:
        return K_PER_HEAP_HISTORY;
      case PRIVATE_MARK_HANDLES:
        return K_MARK_HANDLES;
    }
  }
  return K_NONE;
}

/**
 * The fields each kind reads from a typed .NET entry, in the order its reader asks for them (the
 * payload offsets Fields reads them at are these fields' in the schema: a kind whose offsets a
 * version's schema does not share is read from its payload, see RowSource.typed).
 */
const TYPED_FIELDS: (readonly string[] | undefined)[] = [];
TYPED_FIELDS[K_SUSPEND_START] = ["Reason"];
TYPED_FIELDS[K_ALLOCATION_TICK] = ["AllocationAmount", "AllocationKind", "AllocationAmount64"];
TYPED_FIELDS[K_GC_START] = ["Count", "Depth", "Reason", "Type"];
TYPED_FIELDS[K_HEAP_STATS] = [0, 1, 2, 3].flatMap((g) => [`GenerationSize${g}`, `TotalPromotedSize${g}`]).concat(["GenerationSize4", "TotalPromotedSize4"]);
TYPED_FIELDS[K_MARK_WITH_TYPE] = ["Type"];

/** Whether a kind's values are read from a row's payload even where it has a typed entry. */
function readsPayload(kind: number, version: number): boolean {
  // (the heap histories' parsers read the payload; GC/Start version 0 is read by its length, as TraceEvent does)
  return kind === K_GLOBAL_HISTORY || kind === K_PER_HEAP_HISTORY || (kind === K_GC_START && version === 0);
}

/** One event type's typed .NET table, with the columns its kind reads (a 64-bit one as 32-bit halves). */
class TypedFields {
  private readonly cols: (ArrayLike<number> | null)[];
  private readonly wide: boolean[];
  constructor(table: ClrTable, names: readonly string[]) {
    this.wide = [];
    this.cols = names.map((name, k) => {
      const c = table.columns[name];
      if (!c || "offset" in c) return null;
      this.wide[k] = c instanceof BigUint64Array || c instanceof BigInt64Array;
      return this.wide[k] ? new Uint32Array(c.buffer, c.byteOffset, 2 * c.length) : (c as ArrayLike<number>);
    });
  }
  /** Field k of entry e (0 where the schema has no such field): an unsigned 64-bit one as the nearest number. */
  num(k: number, e: number): number {
    const c = this.cols[k];
    if (!c) return 0;
    return this.wide[k] ? c[2 * e + 1] * 4294967296 + c[2 * e] : c[e];
  }
}

/** The GC computer's kinds of events, and their typed fields (see RowSource). */
const GC_ROWS: RowKinds<TypedFields> = {
  kindOf,
  typedKind: (kind) => TYPED_FIELDS[kind] !== undefined,
  readerOf: (table, kind) => (readsPayload(kind, table.schema.version) ? null : new TypedFields(table, TYPED_FIELDS[kind]!)),
};

const generationNames = new Map<number, string>();

/** gcGenerationName, each name made once (a trace's GCs share a few). */
function generationName(generation: number, type: number, reason: number): string {
  const key = generation * 16 + (type === BACKGROUND ? 1 : type === FOREGROUND ? 2 : 0) * 4 + (reason === INDUCED ? 1 : reason === INDUCED_NOT_FORCED ? 2 : 0);
  let name = generationNames.get(key);
  if (name === undefined) generationNames.set(key, (name = gcGenerationName(generation, type, reason)));
  return name;
}

/**
 * Replays GC events one at a time, in time order (`add`), and gives each process's GCs and rollup
 * (`result`). `processName(pid, ts)` names each process at its first GC event, when `result` is
 * called (a stream's own process table is complete only then).
 */
export class GcComputer {
  private readonly processes = new Map<number, ProcessState>();
  private readonly fields = new Fields();
  private src?: RowSource<TypedFields>;
  private readonly sources = new RowSources(GC_ROWS);
  private last?: ProcessState;

  constructor(private readonly processName: (pid: number, timestamp: bigint) => string) {}

  private state(i: number): ProcessState {
    const pid = this.src!.pidOf(i);
    // (runs of one process's events: the last one's state again, without a lookup)
    if (this.last?.pid === pid) return this.last;
    let s = this.processes.get(pid);
    if (!s) {
      s = {
        pid,
        name: "",
        firstSeen: this.src!.table.columns.timestamp[i],
        count: 0,
        numbers: [],
        codes: [],
        perHeap: new Map(),
        suspendThreadIDGC: -1,
        suspendThreadIDBGC: -1,
        suspendThreadIDOther: -1,
        suspendTimeRelativeMSec: -1,
        suspendEndTimeRelativeMSec: -1,
        lastRestartEndTimeRelativeMSec: 0,
        currentBGC: -1,
        lastCompletedGC: -1,
        allocTickCurrentMB: [0, 0],
        allocTickAtLastGC: [0, 0],
        hasAllocTickEvents: false,
        seenBadAllocTick: false,
        heapCount: -1,
        markingThreads: new Set(),
        isServerGC: false,
        versionMismatch: false,
      };
      this.processes.set(pid, s);
    }
    this.last = s;
    return s;
  }

  /** TraceEvent's GetCurrentGC: the newest GC while it is not complete, else the background GC in progress (-1: none). */
  private static current(s: ProcessState): number {
    if (!s.count) return -1;
    const last = s.count - 1;
    if (!(code(s, last, FLAGS) & F_COMPLETE)) return last;
    return s.currentBGC;
  }

  /** One event (events come in time order). */
  add(row: EventRow): void {
    this.addAt(this.sourceOf(row.table), row.index);
  }

  /**
   * The events of `rows` of `table`, in the order given (time order). `typed`: the trace's typed .NET
   * tables, whose values are read where a row has an entry: the core read them while it had the
   * record at hand, where a payload read now is a cache miss a row.
   */
  addRows(table: EventTable, rows: ArrayLike<number>, typed?: readonly ClrTable[]): void {
    const src = this.sourceOf(table, typed);
    for (let j = 0; j < rows.length; j++) this.addAt(src, rows[j]);
  }

  private sourceOf(table: EventTable, typed?: readonly ClrTable[]): RowSource<TypedFields> {
    return (this.src = this.sources.of(table, typed));
  }

  private addAt(src: RowSource<TypedFields>, i: number): void {
    switch (src.kind(i)) {
      case K_SUSPEND_START:
        return this.suspendStart(i);
      case K_SUSPEND_STOP:
        return this.suspendStop(i);
      case K_ALLOCATION_TICK:
        return this.allocationTick(i);
      case K_GC_START:
        return this.gcStart(i);
      case K_GC_STOP:
        return this.gcStop(i);
      case K_HEAP_STATS:
        return this.heapStats(i);
      case K_RESTART_STOP:
        return this.restartStop(i);
      case K_GLOBAL_HISTORY:
        return this.globalHistory(i);
      case K_PER_HEAP_HISTORY:
        return this.perHeapHistory(i);
      // MarkWithType: HeapNum u32, ClrInstanceID u16, Type u32
      case K_MARK_WITH_TYPE: {
        const tf = src.typed(i, K_MARK_WITH_TYPE);
        if ((tf ? tf.num(0, src.entry) : this.fields.at(src.table, i).u32(6)) === MARK_HANDLES_TYPE) this.markHandles(i);
        return;
      }
      case K_MARK_HANDLES:
        return this.markHandles(i);
    }
  }

  private suspendStart(i: number): void {
    const s = this.state(i);
    // Reason: a u32 from version 1, a u16 before
    const tf = this.src!.typed(i, K_SUSPEND_START);
    const reason = tf
      ? tf.num(0, this.src!.entry)
      : this.src!.table.typeFieldOf("version", i) >= 1
        ? this.fields.at(this.src!.table, i).u32(0)
        : this.fields.at(this.src!.table, i).u16(0);
    const tid = this.src!.tidOf(i);
    if (reason === SUSPEND_FOR_GC) s.suspendThreadIDGC = tid;
    else if (reason === SUSPEND_FOR_GC_PREP) s.suspendThreadIDBGC = tid;
    else {
      s.suspendThreadIDOther = tid;
      return;
    }
    s.suspendTimeRelativeMSec = this.src!.table.relativeMSecOf(i);
  }

  private suspendStop(i: number): void {
    const s = this.state(i);
    const tid = this.src!.tidOf(i);
    if (tid !== s.suspendThreadIDBGC && tid !== s.suspendThreadIDGC) return;
    const t = this.src!.table.relativeMSecOf(i);
    if (s.suspendThreadIDBGC > 0 && s.currentBGC >= 0) setNum(s, s.currentBGC, SUSPEND, num(s, s.currentBGC, SUSPEND) + t - s.suspendTimeRelativeMSec);
    s.suspendEndTimeRelativeMSec = t;
  }

  private allocationTick(i: number): void {
    const s = this.state(i);
    // AllocationAmount i32 @0, AllocationKind @4, ClrInstanceID @8, AllocationAmount64 @10 (version 2 on)
    const v2 = this.src!.table.typeFieldOf("version", i) >= 2;
    const tf = this.src!.typed(i, K_ALLOCATION_TICK);
    let kind: number, amount: number;
    if (tf) {
      const e = this.src!.entry;
      kind = tf.num(1, e);
      amount = v2 ? tf.num(2, e) : 0;
      if (amount === 0) amount = tf.num(0, e) | 0;
    } else {
      const f = this.fields.at(this.src!.table, i);
      kind = f.u32(4);
      amount = v2 ? f.u64(10) : 0;
      if (amount === 0) amount = f.i32(0);
    }
    if (amount < 0) s.seenBadAllocTick = true;
    if (s.seenBadAllocTick) amount = Math.min(Math.max(amount, 90 * 1024), kind === 0 ? 110 * 1024 : 2 * 1024 * 1024);
    s.allocTickCurrentMB[kind === 0 ? 0 : 1] += amount / MB; // small, and every other kind
    s.hasAllocTickEvents = true;
  }

  private gcStart(i: number): void {
    const s = this.state(i);
    // Count @0; Depth, Reason, Type @4, @8, @12 (a payload under 16 bytes: Reason @4, generation 0, non-concurrent)
    const tf = this.src!.typed(i, K_GC_START);
    const e = this.src!.entry;
    const f = tf ? null : this.fields.at(this.src!.table, i);
    const count = f ? f.u32(0) : tf!.num(0, e);
    const last = s.count - 1;
    if (s.markingThreads.size) s.markingThreads.clear(); // (clear() makes a new table even when empty)
    if (!(s.suspendThreadIDGC > 0 || s.suspendThreadIDOther > 0)) return;
    if (last >= 0 && code(s, last, NUMBER) >>> 0 === count) return; // the same GC logged twice
    const t = this.src!.table.relativeMSecOf(i);
    // (a typed entry is of version 1 on, not cut short: 16 bytes and more)
    const full = f ? f.length >= 16 : true;
    const generation = !f ? tf!.num(1, e) : full ? f.u32(4) : 0;
    const reason = !f ? tf!.num(2, e) : full ? f.u32(8) : f.u32(4);
    const type = !f ? tf!.num(3, e) : full ? f.u32(12) : 0;
    const gc = s.count;
    if ((gc & IN_PAGE) === 0) {
      s.numbers.push(new Float64Array(PAGE * NUMBERS));
      s.codes.push(new Int32Array(PAGE * CODES));
    }
    const n = s.numbers[gc >>> PAGE_BITS],
      at = (gc & IN_PAGE) * NUMBERS,
      c = s.codes[gc >>> PAGE_BITS],
      ct = (gc & IN_PAGE) * CODES;
    c[ct + NUMBER] = count;
    c[ct + GENERATION] = generation;
    c[ct + REASON] = reason;
    c[ct + TYPE] = type;
    c[ct + HEAP_COUNT] = s.heapCount;
    n[at + START] = t;
    // an ephemeral GC at the start of a background GC pauses from its own start, as does a provisional-mode full GC
    const ephemeralInBGC = last >= 0 && code(s, last, TYPE) === BACKGROUND && !(code(s, last, FLAGS) & F_COMPLETE) && type === NON_CONCURRENT;
    if (ephemeralInBGC || reason === PM_FULL_GC) {
      n[at + PAUSE_START] = t;
      if (reason === PM_FULL_GC) {
        const open = GcComputer.current(s);
        if (open >= 0) this.complete(s, open);
      }
    } else {
      n[at + PAUSE_START] = s.suspendTimeRelativeMSec;
      if (s.suspendEndTimeRelativeMSec === -1) s.suspendEndTimeRelativeMSec = t;
      n[at + SUSPEND] = s.suspendEndTimeRelativeMSec - s.suspendTimeRelativeMSec;
    }
    if (type === BACKGROUND) {
      s.currentBGC = gc;
      n[at + PAUSE] = n[at + SUSPEND];
    }
    s.count++;
  }

  private gcStop(i: number): void {
    const s = this.state(i);
    const gc = GcComputer.current(s);
    if (gc >= 0) setNum(s, gc, DURATION, this.src!.table.relativeMSecOf(i) - num(s, gc, START));
    // server GC: several threads marked handles between GC/Start and GC/Stop
    if (s.markingThreads.size > 1) s.isServerGC = true;
    if (s.markingThreads.size) s.markingThreads.clear(); // (clear() makes a new table even when empty)
  }

  private markHandles(i: number): void {
    this.state(i).markingThreads.add(this.src!.tidOf(i));
  }

  private heapStats(i: number): void {
    const s = this.state(i);
    const t = this.src!.table.relativeMSecOf(i);
    const gc = GcComputer.current(s);
    if (gc >= 0) {
      // GenerationSize0..3 and TotalPromotedSize0..3 in pairs of u64 from 0; GenerationSize4 @94 and TotalPromotedSize4 @102 (version 2)
      const v2 = this.src!.table.typeFieldOf("version", i) >= 2;
      const n = s.numbers[gc >>> PAGE_BITS],
        at = (gc & IN_PAGE) * NUMBERS,
        c = s.codes[gc >>> PAGE_BITS],
        ct = (gc & IN_PAGE) * CODES;
      const tf = this.src!.typed(i, K_HEAP_STATS);
      if (tf) {
        const e = this.src!.entry;
        for (let g = 0; g < 4; g++) {
          n[at + GEN_SIZE + g] = tf.num(2 * g, e);
          n[at + PROMOTED + g] = tf.num(2 * g + 1, e);
        }
        n[at + GEN_SIZE + POH] = v2 ? tf.num(8, e) : 0;
        n[at + PROMOTED + POH] = v2 ? tf.num(9, e) : 0;
      } else {
        const f = this.fields.at(this.src!.table, i);
        for (let g = 0; g < 4; g++) {
          n[at + GEN_SIZE + g] = f.u64(16 * g);
          n[at + PROMOTED + g] = f.u64(16 * g + 8);
        }
        n[at + GEN_SIZE + POH] = v2 ? f.u64(94) : 0;
        n[at + PROMOTED + POH] = v2 ? f.u64(102) : 0;
      }
      c[ct + FLAGS] |= F_HEAP_STATS;
      const background = c[ct + TYPE] === BACKGROUND;
      n[at + SINCE_RESTART] = (background ? t : n[at + PAUSE_START]) - s.lastRestartEndTimeRelativeMSec;
      if (s.hasAllocTickEvents) {
        n[at + TICKS] = s.allocTickCurrentMB[0] - s.allocTickAtLastGC[0];
        n[at + TICKS + 1] = s.allocTickCurrentMB[1] - s.allocTickAtLastGC[1];
        c[ct + FLAGS] |= F_TICKS;
      }
      if (background && s.currentBGC >= 0) {
        this.complete(s, s.currentBGC);
        s.currentBGC = -1;
      }
    }
    s.allocTickAtLastGC[0] = s.allocTickCurrentMB[0];
    s.allocTickAtLastGC[1] = s.allocTickCurrentMB[1];
    s.lastRestartEndTimeRelativeMSec = t;
  }

  private restartStop(i: number): void {
    const s = this.state(i);
    const tid = this.src!.tidOf(i);
    if (tid === s.suspendThreadIDOther) s.suspendThreadIDOther = -1;
    if (tid !== s.suspendThreadIDBGC && tid !== s.suspendThreadIDGC) return;
    const t = this.src!.table.relativeMSecOf(i);
    const gc = GcComputer.current(s);
    if (gc >= 0) {
      if (code(s, gc, TYPE) === BACKGROUND) this.concurrentPause(s, gc, t);
      else if (num(s, gc, DURATION) === 0)
        this.concurrentPause(s, gc, t); // no GC/Stop yet: .NET 2.0's concurrent GC
      else {
        setNum(s, gc, PAUSE, t - num(s, gc, PAUSE_START));
        if (code(s, gc, FLAGS) & F_HEAP_STATS) this.complete(s, gc);
      }
    }
    s.suspendTimeRelativeMSec = -1;
    s.suspendThreadIDBGC = -1;
    s.suspendThreadIDGC = -1;
  }

  /** A pause inside a background GC: its initial suspension sets the pause, later ones add to it. */
  private concurrentPause(s: ProcessState, gc: number, t: number): void {
    if (s.suspendThreadIDBGC > 0) setNum(s, gc, PAUSE, num(s, gc, PAUSE) + t - s.suspendTimeRelativeMSec);
    else setNum(s, gc, PAUSE, t - num(s, gc, PAUSE_START));
  }

  /** TraceEvent's GetLastGC: the GC in progress, or for server GC the last one completed (its histories come after); -1: none. */
  private lastGC(s: ProcessState): number {
    const gc = GcComputer.current(s);
    if (gc >= 0) return gc;
    return s.isServerGC ? s.lastCompletedGC : -1;
  }

  private globalHistory(i: number): void {
    const s = this.state(i);
    const history = parseGlobalHeapHistory(this.src!.rowAt(i));
    if (!history) return;
    if (s.heapCount === -1) s.heapCount = history.numHeaps;
    const gc = this.lastGC(s);
    if (gc >= 0 && code(s, gc, HEAP_COUNT) === -1) setCode(s, gc, HEAP_COUNT, history.numHeaps);
  }

  private perHeapHistory(i: number): void {
    const s = this.state(i);
    const history = parsePerHeapHistory(this.src!.rowAt(i));
    if (!history) {
      s.versionMismatch = true;
      return;
    }
    const gc = this.lastGC(s);
    if (gc < 0) return;
    const list = s.perHeap.get(gc);
    if (list) list.push(history);
    else s.perHeap.set(gc, [history]);
  }

  private complete(s: ProcessState, gc: number): void {
    setCode(s, gc, FLAGS, code(s, gc, FLAGS) | F_COMPLETE);
    s.lastCompletedGC = gc;
    this.onEnd(s, gc);
  }

  /**
   * TraceGC.OnEnd: the sizes, allocations and ratios of a GC from its own events and the GCs before it
   * (the sizes after it and promoted are the record's sums of GC/HeapStats' numbers, made when read).
   */
  private onEnd(s: ProcessState, gc: number): void {
    const n = s.numbers[gc >>> PAGE_BITS],
      at = (gc & IN_PAGE) * NUMBERS;
    const background = code(s, gc, TYPE) === BACKGROUND;
    const afterMB = statsMB(s, gc, GEN_SIZE);
    n[at + HEAP_BEFORE] = this.heapSizeBeforeMB(s, gc);
    let peak = n[at + HEAP_BEFORE];
    if (background) {
      // the largest heap before any GC that started while this one ran
      const end = n[at + PAUSE_START] + n[at + DURATION];
      for (let i = gc + 1; i < s.count && num(s, i, PAUSE_START) <= end; i++) peak = Math.max(peak, this.heapSizeBeforeMB(s, i));
    }
    n[at + HEAP_PEAK] = peak;
    // (TraceEvent's GetAllocedSinceLastGCMB: gen0, LOH and POH; without usable per-heap histories the POH's share
    // is the non-small allocation ticks, the LOH's again: counted twice, as TraceEvent does)
    const alloced = this.userAllocatedMB(s, gc, GEN0) + this.userAllocatedMB(s, gc, LOH) + this.userAllocatedMB(s, gc, POH);
    n[at + ALLOCED] = alloced;
    n[at + ALLOC_RATE] = (alloced * 1000) / n[at + SINCE_RESTART];
    n[at + RATIO] = afterMB === 0 ? 0 : peak / afterMB;
    const pause = n[at + PAUSE];
    if (background) {
      const previousEnd = gc > 0 ? num(s, gc - 1, START) + num(s, gc - 1, DURATION) : num(s, 0, START);
      n[at + PAUSE_PERCENT] = (pause * 100) / (n[at + START] + n[at + DURATION] - previousEnd);
    } else {
      n[at + PAUSE_PERCENT] = (pause * 100) / (pause + n[at + SINCE_RESTART]);
    }
  }

  /**
   * TraceGC.GetHeapSizeBeforeMB: TraceGC.GenSizeBeforeMB of every generation, gen0 to POH, summed (a
   * history without a POH entry adds 0 for it). One function: a number a call returns is a heap object.
   */
  private heapSizeBeforeMB(s: ProcessState, gc: number): number {
    const histories = s.perHeap.size ? s.perHeap.get(gc) : undefined;
    let mb = 0;
    if (histories) {
      for (let gen = GEN0; gen <= POH; gen++) {
        let genMB = 0;
        for (const h of histories) genMB += (h.gens[gen]?.sizeBefore ?? 0) / MB;
        mb += genMB;
      }
      return mb;
    }
    const flags = code(s, gc, FLAGS);
    const ticks = flags & F_TICKS ? num(s, gc, TICKS) : 0;
    if (gc === 0) return mb + ticks; // (gen0: the ticks; the others 0)
    // the nearest earlier GC with heap stats (the first GC of the list is never looked at)
    let previous = gc - 1;
    while (previous >= 1 && !(code(s, previous, FLAGS) & F_HEAP_STATS)) previous--;
    if (previous < 1) return 0;
    const own = (flags & F_HEAP_STATS) !== 0;
    mb += Math.max(num(s, previous, GEN_SIZE + GEN0) / MB, ticks);
    mb += num(s, previous, GEN_SIZE + GEN1) / MB;
    mb += num(s, previous, GEN_SIZE + GEN2) / MB;
    mb += Math.max(num(s, previous, GEN_SIZE + LOH), own ? num(s, gc, GEN_SIZE + LOH) : 0) / MB;
    mb += Math.max(num(s, previous, GEN_SIZE + POH), own ? num(s, gc, GEN_SIZE + POH) : 0) / MB;
    return mb;
  }

  /** TraceGC.GetUserAllocated for gen0, LOH or POH, MB. */
  private userAllocatedMB(s: ProcessState, gc: number, gen: number): number {
    // (the allocation ticks of small objects, and of every other kind; 0 without them)
    const hasTicks = (code(s, gc, FLAGS) & F_TICKS) !== 0;
    const ticks = hasTicks ? num(s, gc, TICKS + (gen === GEN0 ? 0 : 1)) : 0;
    if (code(s, gc, TYPE) === BACKGROUND && gen === GEN0) return ticks;
    const histories = s.perHeap.size ? s.perHeap.get(gc) : undefined;
    const previousHistories = histories && gc > 0 ? s.perHeap.get(gc - 1) : undefined;
    if (!histories || !previousHistories) return ticks;
    // heaps paired by position with the previous GC's (whatever its kind or state)
    let total = 0;
    for (let h = 0; h < histories.length; h++) {
      const data = histories[h].gens[gen];
      const before = previousHistories[h]?.gens[gen];
      let prevSize = before?.objSizeAfter ?? 0;
      // a gen0 GC does not update the LOH's size after: take the size it saw before
      if (gen === LOH && prevSize === 0 && code(s, gc - 1, GENERATION) >>> 0 < 1) prevSize = before?.objSpaceBefore ?? 0;
      let allocated: number;
      if (!data) allocated = 0;
      else if (data.hasObjSpaceBefore) allocated = data.objSpaceBefore - prevSize;
      else if (data.survRate === 0) {
        // .NET 4.0 with nothing survived: an estimate (the alloc-tick MB, which TraceEvent then divides by 10^6 again, else the previous budget)
        allocated = hasTicks ? ticks : (before?.budget ?? 0);
      } else allocated = Math.trunc(((data.out + data.objSizeAfter) * 100) / data.survRate) - prevSize;
      total += allocated / MB;
    }
    return total;
  }

  /** The processes with GC events, by pid, each GC's values and the rollups over complete GCs. */
  result(): GcProcess[] {
    const out: GcProcess[] = [];
    for (const s of [...this.processes.values()].sort((a, b) => a.pid - b.pid)) {
      if (!s.count) continue;
      s.name = this.processName(s.pid, s.firstSeen);
      const total = rollup();
      const generations: [GcRollup, GcRollup, GcRollup] = [rollup(), rollup(), rollup()];
      let firstPause: number | undefined;
      const GCs: GcRecord[] = [];
      for (let gc = 0; gc < s.count; gc++) {
        const record = new GcView(s, gc);
        GCs.push(record);
        if (!(code(s, gc, FLAGS) & F_COMPLETE)) continue;
        // OnEnd again, now that the GCs after each are known (a background GC's peak looks ahead)
        this.onEnd(s, gc);
        firstPause ??= num(s, gc, PAUSE_START);
        addTo(total, s, gc);
        const generation = code(s, gc, GENERATION) >>> 0;
        if (generation < 3) addTo(generations[generation], s, gc);
      }
      const duration = firstPause ? s.lastRestartEndTimeRelativeMSec - firstPause : 0;
      finish(total);
      generations.forEach(finish);
      out.push({
        PID: s.pid,
        ProcessName: s.name,
        GCs,
        Total: total,
        Generations: generations,
        ProcessDurationMSec: duration,
        GCPauseTimePercentage: duration ? (total.TotalPauseTimeMSec * 100) / duration : 0,
        IsServerGC: s.isServerGC,
        HeapCount: s.heapCount,
        HasAllocTickEvents: s.hasAllocTickEvents,
        GCVersionInfoMismatch: s.versionMismatch,
      });
    }
    return out;
  }
}
