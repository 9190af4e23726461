// CPU profiles from the kernel's PerfInfo samples, as PerfView's CPU stacks show them: each sample is
// one sample interval on a thread (idle samples left out, DPC/ISR kept), with its call stack (kernel
// StackWalk events matched to it, §stacks.ts) named by the symbol map (§symbols.ts), under the thread
// and process frames of TraceEvent's stack source. Written as speedscope's file format, collapsed stacks
// (flame graph tools) or Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing).

import type { Trace } from "../trace.js";
import type { EventRow } from "../tables/event-table.js";
import type { TraceBatch, TraceStream } from "../stream.js";
import { inTimeOrder } from "../stream-order.js";
import { ProcessCollector, type ProcessTable } from "../tables/processes.js";
import { StackAttacher, type StackTable } from "./stacks.js";
import { F_NO_PROCESS_INFO } from "../../assembly/codes.js";
import { SymbolMap, type ResolvedFrame } from "./symbols.js";
import { PrefixTree } from "./prefix-tree.js";
import { ByteWriter, Literal } from "./byte-writer.js";

const PERFINFO = "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc";
/** EventPipe's sample profiler: Thread/Sample (id 0) on each managed thread every interval. */
const SAMPLE_PROFILER = "3c530d44-97ae-513a-1e6d-783e8f8e03a9";
const STACKWALK = "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3";
const SAMPLE = 46,
  SET_INTERVAL = 72,
  COLLECTION_START = 73;

/**
 * The CPU samples, as columns (sample `i` is `pid[i]`, `tid[i]`, ...), in time order: where and when,
 * and each one's stack of frame names from the root (process, thread, ..., leaf). Each stands for
 * `CpuProfile.intervalMSec` of CPU.
 */
export interface CpuSamples {
  readonly length: number;
  /** The sample's process (its thread's; -1 when no process is known for the thread). */
  readonly pid: Int32Array;
  readonly tid: Int32Array;
  /** Milliseconds since the trace started. */
  readonly timeMSec: Float64Array;
  /** Index of the sample's frame stack in `CpuProfile.stacks`. */
  readonly stack: Int32Array;
  /**
   * Each sample's weight in milliseconds, where samples weigh differently: an EventPipe trace's
   * thread time, the time to its thread's next sample. Absent: every sample weighs `intervalMSec`.
   */
  readonly weightMSec?: Float64Array;
}

/** Frame-name stacks as a prefix tree: stack `i` is frame `frame[i]` (an index in `names`) below `parent[i]`. */
export interface NameStacks {
  names: string[];
  frame: ArrayLike<number>;
  parent: ArrayLike<number>;
}

export interface CpuProfile {
  /** The sample interval, milliseconds (PerfInfo CollectionStart / SetInterval; 1 by default): each sample's weight. */
  intervalMSec: number;
  samples: CpuSamples;
  stacks: NameStacks;
  /** Samples whose stack was found, of all samples kept. */
  samplesWithStacks: number;
  /** Samples left out as idle (thread 0, neither DPC nor ISR), as TraceLog leaves them out. */
  idleSamples: number;
  /** Samples of other processes, left out by `pid`. */
  otherSamples: number;
}

export interface CpuOptions {
  /** Only this process's samples. */
  pid?: number;
  /** Stacks already attached (traceStacks), to reuse. */
  stacks?: TraceStacks;
}

/** The frames from the root of a name stack, as names. */
export function stackNames(stacks: NameStacks, id: number): string[] {
  const out: string[] = [];
  for (let s = id; s >= 0; s = stacks.parent[s]) out.push(stacks.names[stacks.frame[s]]);
  return out.reverse();
}

/** Frame-name stacks: a prefix tree of name numbers. */
class NameInterner {
  readonly names: string[] = [];
  private readonly ids = new Map<string, number>();
  private readonly tree: PrefixTree;

  /** `expected`: about how many stacks will be made. */
  constructor(expected?: number) {
    this.tree = new PrefixTree(expected);
  }

  /** The number of a frame name. */
  nameId(name: string): number {
    let n = this.ids.get(name);
    if (n === undefined) this.ids.set(name, (n = this.names.push(name) - 1));
    return n;
  }

  /** The stack of name number `name` below stack `parent` (-1: a root). */
  node(parent: number, name: number): number {
    return this.tree.child(parent, name);
  }

  /** The stacks made. */
  result(): NameStacks {
    const t = this.tree;
    return { names: this.names, frame: Int32Array.from(t.value.subarray(0, t.size)), parent: t.parent.slice(0, t.size) };
  }
}

/**
 * The name numbers (in `names`) of stack nodes' frames, each (process, address) named once, at the first
 * time asked (TraceLog names an address once, from when it is first seen). A pair is a number (a tree
 * of addresses below process ids), its name a number.
 */
class FrameNames {
  private readonly pairs: PrefixTree;
  private pairName: Int32Array;
  private readonly halves: [number, number] = [0, 0];
  private readonly frameIds = new Map<ResolvedFrame, number>(); // (resolve gives one object per frame)
  /** Whether a frame's name holds a ';' (what joins a stack's names in its text). */
  semicolons = false;

  /** `expected`: about how many pairs will be named (the tree's room, made at once: growing it rehashes it). */
  constructor(
    private readonly table: StackTable,
    private readonly symbols: SymbolMap,
    private readonly names: NameInterner,
    expected: number,
  ) {
    this.pairs = new PrefixTree(expected);
    this.pairName = new Int32Array(1024).fill(-1);
  }

  /** The name number of stack node `s`'s frame in process `pid`, named at time (hi, lo) if not named before. */
  of(pid: number, s: number, hi: number, lo: number): number {
    const pair = this.pairs.child(pid | 0, this.table.addr[s]);
    if (pair >= this.pairName.length) this.pairName = fit(this.pairName, pair);
    let id = this.pairName[pair];
    if (id < 0) {
      this.table.addressHalves(s, this.halves);
      const frame = this.symbols.resolveHalves(pid, this.halves[0], this.halves[1], stampOf(hi, lo));
      id = this.frameIds.get(frame) ?? -1;
      if (id < 0) {
        this.frameIds.set(frame, (id = this.names.nameId(frame.name)));
        this.semicolons ||= frame.name.includes(";");
      }
      this.pairName[pair] = id;
    }
    return id;
  }
}

/** A trace's stacks: the attacher's stack of every event, and the symbol map that names their frames. */
export interface TraceStacks {
  attacher: StackAttacher;
  symbols: SymbolMap;
}

/** Stacks of a trace's events: the attacher over every event (time order) and the symbol map. */
export function traceStacks(trace: Trace, providers?: string[]): TraceStacks {
  const pointerSize = trace.events.defaultPointerSize === 4 ? 4 : 8;
  const attacher = new StackAttacher(pointerSize);
  attacher.addRows(trace.events, providers ? trace.query({ provider: [...providers, STACKWALK], order: "time" }).indices : trace.events.timeOrder());
  attacher.finish();
  return { attacher, symbols: SymbolMap.fromTrace(trace, { pointerSize }) };
}

/**
 * Names the frames of stacks: `frameNames(pid, stackId, ts)` gives TraceEvent's names leaf first
 * (cached per process and address: TraceLog names an address once).
 */
export function frameNamer(table: StackTable, symbols: SymbolMap): (pid: number, stack: number, ts: bigint) => string[] {
  const name = frameNameOf(table, symbols);
  return (pid, stack, ts) => {
    const out: string[] = [];
    for (let s = stack; s >= 0; s = table.parent[s]) out.push(name(pid, s, ts));
    return out;
  };
}

/** The name of stack `stack`'s own frame (its leaf), cached per process and address: TraceLog names an address once. */
function frameNameOf(table: StackTable, symbols: SymbolMap): (pid: number, stack: number, ts: bigint) => string {
  const cache = new Map<number, Map<number, string>>();
  return (pid, stack, ts) => {
    let names = cache.get(pid);
    if (!names) cache.set(pid, (names = new Map()));
    const address = table.addr[stack];
    let name = names.get(address);
    if (name === undefined) names.set(address, (name = symbols.resolve(pid, table.addressOf(stack), ts).name));
    return name;
  };
}

/**
 * Matches every event's stack over the whole trace and names its frames, so that `row.callStack` gives
 * them (lazily: a row's frames are named when asked). A CPU sample's process is its thread's.
 */
export function attachStacks(trace: Trace): StackAttacher {
  const { attacher, symbols } = traceStacks(trace);
  const names = frameNamer(attacher.table, symbols);
  const pointerSize = trace.events.defaultPointerSize === 4 ? 4 : 8;
  const perfInfo = trace.providers.find(PERFINFO);
  trace.events.callStacks = (index) => {
    const stack = attacher.stackOf(index);
    if (stack < 0) return null;
    const row = trace.events.row(index);
    let pid = row.pid;
    if (pid === null && perfInfo.includes(row.providerIndex) && row.opcode === SAMPLE && row.payloadLength >= pointerSize + 4) {
      const p = row.payload;
      pid = trace.processes.threadProcess(new DataView(p.buffer, p.byteOffset, p.length).getInt32(pointerSize, true), row.timestamp) ?? null;
    }
    return names(pid ?? 0, stack, row.timestamp);
  };
  return attacher;
}

/** Collapsed stacks of events, each with its weight: what a flame graph or a call tree of those events shows. */
export interface WeightedStacks {
  /** `frame;frame;...;frame` (root first; leaf first when inverted) and the weight of the events with that stack, heaviest first. */
  stacks: [string, number][];
  /** Events asked about; those with a stack; their weight in all. */
  events: number;
  withStacks: number;
  total: number;
}

/**
 * The stacks of events `rows` (e.g. a query's: AllocationTick events, contention starts) as collapsed
 * stacks, each weighted by `weight(row)` (a payload field such as AllocationAmount; 1 per event by
 * default), the frames named as `row.callStack` names them (attachStacks): the hot allocation paths,
 * where lock contention comes from. `invert`: leaf first, the callee view (who is called most, then
 * by whom). Events without a stack are counted and left out.
 */
export function weightedStacks(trace: Trace, rows: Uint32Array, options: WeightOptions = {}): WeightedStacks {
  const collector = new StackWeightCollector({
    ...options,
    select: () => rows,
    symbols: SymbolMap.fromTrace(trace, { pointerSize: trace.events.defaultPointerSize === 4 ? 4 : 8 }),
  });
  collector.pick(trace, 0);
  collector.add({ trace, firstRow: 0, rows: trace.events.timeOrder() });
  return collector.result(trace.processes);
}

/** What each event weighs (1 by default; NaN leaves it out) and whether the leaf comes first. */
export interface WeightOptions {
  weight?: (row: EventRow) => number;
  /**
   * Each picked event (a Start, opcode 1) weighs the milliseconds to its Stop (opcode 2, same provider
   * and task) on the same thread, or with the same value of the field `by` (e.g. TaskID); a Start with
   * no Stop is left out. Instead of `weight`.
   */
  duration?: { by?: string };
  invert?: boolean;
}

/**
 * weightedStacks of a stream, in one pass over its batches in time order: the events `select` picks in
 * each batch (e.g. `(t) => t.query({ provider, eventId: 10 }).indices`), in memory bounded by those
 * events (a few numbers each) and the distinct stacks. Equal to weightedStacks of the whole trace.
 * `processes`: the trace's process table; without it, gathered from the same pass.
 */
export async function streamWeightedStacks(
  stream: TraceStream,
  options: WeightOptions & { select: (trace: Trace) => Uint32Array; processes?: ProcessTable },
): Promise<WeightedStacks> {
  const collector = new StackWeightCollector(options);
  const processes = options.processes ? undefined : new ProcessCollector();
  // (every row in time order: the stack attacher matches stack events to the events before them, picked or not)
  const select = (t: Trace, batch: TraceBatch) => {
    processes?.scan(batch, batch.firstRow);
    collector.pick(t, batch.firstRow);
    const all = new Uint32Array(t.events.length);
    for (let i = 0; i < all.length; i++) all[i] = i;
    return all;
  };
  // (the collector takes numbers out of each run: its rows are read from the batch itself while it is
  // the stream's, and copied alone when they wait past it)
  for await (const run of inTimeOrder(stream, { select, release: true, keep: "rows" })) collector.add(run);
  return collector.result(options.processes ?? processes!.result());
}

/**
 * The stacks of picked events, taken run by run in time order (a whole trace or a stream's batches):
 * every row goes through the stack attacher (a stack event attaches to the event before it, whichever it
 * is), the picked ones are kept as a few numbers with their weight, and the frames are named at the end,
 * each (process, address) once, from when it is first seen, as attachStacks names them.
 */
export class StackWeightCollector {
  private attacher?: StackAttacher;
  private symbols?: SymbolMap;
  private readonly ownSymbols: boolean;
  private pointerSize: 4 | 8 = 8;
  private events = 0;
  // picked events with a usable weight: global row, process (-1: none; -2: a CPU sample's, by its thread), thread, time, weight
  private readonly row = new Column(new Float64Array(0));
  private readonly pid = new Column(new Int32Array(0));
  private readonly tid = new Column(new Int32Array(0));
  private readonly hi = new Column(new Int32Array(0));
  private readonly lo = new Column(new Uint32Array(0));
  private readonly weight = new Column(new Float64Array(0));
  /** duration: the Starts waiting for their Stop, by provider, task and thread or field value (their entry). */
  private readonly open = new Map<string, number>();
  /** duration: the (provider, task) pairs of the picked Starts, as provider * 65536 + task. */
  private readonly startTasks = new Set<number>();
  private clock?: Trace["clock"];
  private readonly batches = new WeakMap<Trace, { symbolRow?: Uint8Array; perfInfo: Uint8Array }>();
  /** The picked events, by their row in the whole trace. */
  private readonly pickedRows = new RowSet();

  constructor(private readonly options: WeightOptions & { select: (trace: Trace) => Uint32Array; symbols?: SymbolMap }) {
    this.symbols = options.symbols;
    this.ownSymbols = !options.symbols;
  }

  /** Whether `pick` was called (else `add` picks in each trace it is given, on first sight). */
  private picking = false;

  /**
   * The events `select` picks in a batch (or a whole trace), before its rows are added; `firstRow`: the
   * number of its row 0. Needed where runs hold some of a batch's rows alone (inTimeOrder keep "rows"):
   * call it from inTimeOrder's `select`, which sees each batch once.
   */
  pick(trace: Trace, firstRow: number): void {
    this.picking = true;
    this.pickIn(trace, firstRow);
  }

  private pickIn(trace: Trace, firstRow: number): void {
    const chosen = this.options.select(trace);
    for (const r of chosen) this.pickedRows.add(firstRow + r);
    this.events += chosen.length;
  }

  /**
   * Rows of a batch or trace, in time order, numbered `firstRow + row` in the whole trace, or by
   * `rowNumbers` where the trace holds some of a batch's rows alone; its events were picked before (`pick`).
   */
  add(run: { trace: Trace; firstRow: number; rows: Uint32Array; rowNumbers?: Float64Array }): void {
    const { trace, firstRow, rows, rowNumbers } = run;
    const events = trace.events;
    if (!this.attacher) {
      this.pointerSize = events.defaultPointerSize === 4 ? 4 : 8;
      // (only the picked events' stacks are made: the other stack events are matched, not interned)
      this.attacher = new StackAttacher(this.pointerSize, (row) => this.pickedRows.has(row));
    }
    this.symbols ??= new SymbolMap({ pointerSize: this.pointerSize });
    let batch = this.batches.get(trace);
    if (!batch) {
      if (!this.picking) {
        if (rowNumbers) throw new Error("etw-wasm: StackWeightCollector.add of rows held alone (rowNumbers) needs pick() called on each batch first");
        this.pickIn(trace, firstRow);
      }
      const symbolRow = this.ownSymbols ? symbolRowsOf(trace) : undefined;
      const perfInfo = new Uint8Array(trace.providers.length);
      for (const p of trace.providers.find(PERFINFO)) perfInfo[p] = 1;
      this.batches.set(trace, (batch = { symbolRow, perfInfo }));
    }
    this.attacher.addRows(events, rows, firstRow, rowNumbers);
    this.clock ??= trace.clock;
    const { symbolRow, perfInfo } = batch;
    const { flags, pid, tid, payloadOffset, payloadLength } = events.columns;
    const task = (r: number) => events.typeFieldOf("task", r);
    // (provider and opcode from each row's event type: their columns are not made)
    const provider = (r: number) => events.typeFieldOf("provider", r);
    const opcode = (r: number) => events.typeFieldOf("opcode", r);
    const ts32 = new Uint32Array(events.columns.timestamp.buffer, events.columns.timestamp.byteOffset, events.length * 2);
    const ps = this.pointerSize;
    const duration = this.options.duration;
    const pairKey = (r: number) => `${provider(r)}/${task(r)}/${duration!.by === undefined ? tid[r] : String(events.row(r).get(duration!.by))}`;
    if (symbolRow) this.symbols.addRows(events, marked(rows, symbolRow), trace.tables);
    for (let k = 0; k < rows.length; k++) {
      const r = rows[k];
      // duration: a Stop gives the Start it ends its weight, the milliseconds between them
      if (duration && opcode(r) === 2 && this.startTasks.has(provider(r) * 65536 + task(r))) {
        const key = pairKey(r);
        const k = this.open.get(key);
        if (k !== undefined) {
          this.open.delete(key);
          this.weight.data[k] = this.clock.relativeMSecParts(ts32[2 * r + 1], ts32[2 * r]) - this.clock.relativeMSecParts(this.hi.data[k], this.lo.data[k]);
        }
      }
      const number = rowNumbers ? rowNumbers[k] : firstRow + r;
      if (!this.pickedRows.has(number)) continue;
      let w = 1;
      if (duration) {
        if (opcode(r) !== 1) continue;
        w = NaN;
        this.startTasks.add(provider(r) * 65536 + task(r));
        // (a Start again before its Stop: the newer one waits, as the Stop ends the latest)
        this.open.set(pairKey(r), this.row.length);
      } else if (this.options.weight) {
        w = this.options.weight(events.row(r));
        if (!Number.isFinite(w)) continue;
      }
      let p = flags[r] & F_NO_PROCESS_INFO ? -1 : pid[r];
      let thread = tid[r];
      // a CPU sample's process is its thread's (the thread is in its payload)
      if (perfInfo[provider(r)] && opcode(r) === SAMPLE && payloadLength[r] >= ps + 4) {
        const bytes = events.recordBytesOf(r);
        if (bytes) {
          const at = payloadOffset[r] + ps;
          thread = bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24);
          p = -2;
        }
      }
      this.row.push(number);
      this.pid.push(p);
      this.tid.push(thread);
      this.hi.push(ts32[2 * r + 1]);
      this.lo.push(ts32[2 * r]);
      this.weight.push(w);
    }
  }

  result(processes: ProcessTable): WeightedStacks {
    const attacher = this.attacher ?? new StackAttacher(this.pointerSize);
    attacher.finish();
    const symbols = this.symbols ?? new SymbolMap({ pointerSize: this.pointerSize });
    if (this.ownSymbols) symbols.prepare();
    const table = attacher.table;
    // Each frame is named once per (process, address), at the first event that reaches it (TraceLog names
    // an address once), and each name is a number; an event's frames are then a stack of name numbers (a
    // prefix tree, root first, or leaf first when inverted) that its weight is summed on, and each stack's
    // text is made once at the end: no string is built or hashed per event.
    // (each tree sized at once for what it will likely hold: growing one rehashes it into fresh memory; a
    // generated trace's events reach a third of the stack nodes, and as many name stacks)
    const likely = Math.max(1024, Math.min(table.size, 2 * this.row.length));
    const names = new NameInterner(likely);
    const frameNames = new FrameNames(table, symbols, names, likely);
    let weights = new Float64Array(likely);
    let summed = new Uint8Array(likely);
    const ends: number[] = []; // name stacks with a weight, in order of their first event
    let path: Int32Array = new Int32Array(64); // an event's name numbers, leaf first
    let withStacks = 0,
      total = 0;
    for (let k = 0; k < this.row.length; k++) {
      // (duration: a Start whose Stop never came is left out)
      const w = this.weight.data[k];
      if (Number.isNaN(w)) continue;
      const stack = attacher.stackOf(this.row.data[k]);
      if (stack < 0) continue;
      const hi = this.hi.data[k],
        lo = this.lo.data[k];
      const p = this.pid.data[k];
      const pid = p === -2 ? (processes.threadProcess(this.tid.data[k], stampOf(hi, lo)) ?? 0) : p === -1 ? 0 : p;
      let depth = 0;
      for (let s = stack; s >= 0; s = table.parent[s]) {
        if (depth === path.length) path = fit(path, depth);
        path[depth++] = frameNames.of(pid, s, hi, lo);
      }
      let node = -1;
      if (this.options.invert) for (let d = 0; d < depth; d++) node = names.node(node, path[d]);
      else for (let d = depth - 1; d >= 0; d--) node = names.node(node, path[d]);
      if (node >= weights.length) {
        const size = Math.max(node + 1, 2 * weights.length);
        const w2 = new Float64Array(size),
          s2 = new Uint8Array(size);
        w2.set(weights);
        s2.set(summed);
        weights = w2;
        summed = s2;
      }
      if (!summed[node]) {
        summed[node] = 1;
        ends.push(node);
      }
      weights[node] += w;
      withStacks++;
      total += w;
    }
    const made = names.result();
    const frames: string[] = [];
    let stacks: [string, number][] = ends.map((node) => {
      frames.length = 0;
      for (let n = node; n >= 0; n = made.parent[n]) frames.push(made.names[made.frame[n]]);
      return [frames.reverse().join(";"), weights[node]];
    });
    // (names with a ';' can make one text of two name stacks: summed by text then, as the text is the key)
    if (frameNames.semicolons) {
      const byText = new Map<string, number>();
      for (const [key, w] of stacks) byText.set(key, (byText.get(key) ?? 0) + w);
      stacks = [...byText];
    }
    return { stacks: byWeightThenText(stacks), events: this.events, withStacks, total };
  }
}

/**
 * Stacks by weight (greatest first), those of equal weight by text: the weights sorted as numbers and
 * the stacks grouped by weight, where a comparator over hundreds of thousands of pairs costs a second.
 */
export function byWeightThenText(stacks: [string, number][]): [string, number][] {
  const byWeight = new Map<number, [string, number] | [string, number][]>();
  const weights = new Float64Array(stacks.length);
  let distinct = 0;
  for (const s of stacks) {
    const had = byWeight.get(s[1]);
    if (had === undefined) {
      byWeight.set(s[1], s);
      weights[distinct++] = s[1];
    } else if (typeof had[0] === "string") byWeight.set(s[1], [had as [string, number], s]);
    else (had as [string, number][]).push(s);
  }
  const sorted = weights.subarray(0, distinct).sort();
  const out: [string, number][] = [];
  for (let i = distinct - 1; i >= 0; i--) {
    const had = byWeight.get(sorted[i])!;
    if (typeof had[0] === "string") out.push(had as [string, number]);
    else if (sorted[i] === 0)
      for (const s of (had as [string, number][]).sort((a, b) => (a[0] < b[0] ? -1 : 1))) out.push(s); // (0 and -0 both)
    else {
      // (texts of equal weight by the sort's own string order, without a comparator: UTF-16 units, as `<`)
      const w = sorted[i];
      for (const text of (had as [string, number][]).map((s) => s[0]).sort()) out.push([text, w]);
    }
  }
  return out;
}

/** TraceEvent's process frame: `Process64 name (pid) Args: arguments`. */
function processFrame(processes: ProcessTable, pid: number, ts: bigint, pointerSize: number): string {
  const info = processes.processAt(pid, ts);
  const name = processes.processName(pid, ts);
  let args = "";
  if (info?.commandLine) {
    // the command line without the program: after the first token (quoted or not)
    const c = info.commandLine.trim();
    const end = c.startsWith('"') ? c.indexOf('"', 1) + 1 : c.search(/\s|$/);
    args = c.slice(Math.max(end, 0)).trim();
  }
  return `Process${pointerSize * 8} ${name} (${pid})${args ? ` Args: ${args}` : ""}`;
}

/** Grows `a` (filled with -1 beyond its length) to hold index `n`. */
function fit(a: Int32Array, n: number): Int32Array {
  if (n < a.length) return a;
  const next = new Int32Array(Math.max(n + 1, a.length * 2)).fill(-1);
  next.set(a);
  return next;
}

/**
 * The CPU samples of a trace (PerfInfo/Sample), with stacks named, per process and thread.
 * `options.stacks` reuses stacks already attached (traceStacks of the PerfInfo provider or more).
 */
export function cpuProfile(trace: Trace, options: CpuOptions = {}): CpuProfile {
  const sampler = trace.providers.find(SAMPLE_PROFILER).length > 0 && trace.providers.find(PERFINFO).length === 0;
  // (a whole trace: its symbol map reads method names from the trace when first resolved)
  const stacks = options.stacks ?? { attacher: undefined, symbols: SymbolMap.fromTrace(trace, { pointerSize: trace.events.defaultPointerSize === 4 ? 4 : 8 }) };
  const collector = new CpuCollector({ pid: options.pid, attacher: stacks.attacher, symbols: stacks.symbols });
  const rows = trace.query({ provider: [sampler ? SAMPLE_PROFILER : PERFINFO, STACKWALK], order: "time" }).indices;
  collector.add({ trace, firstRow: 0, rows });
  return collector.result(trace.processes);
}

/**
 * The CPU profile of a stream, in one pass over its batches in time order, in memory bounded by the
 * samples (a few numbers each) and the distinct stacks: the same profile `cpuProfile` makes of the
 * whole trace. `processes`: the trace's process table (e.g. from a pass of its own); without it the
 * processes are gathered from the same pass (ProcessCollector), which equals the whole trace's table.
 */
export async function streamCpuProfile(stream: TraceStream, options: Omit<CpuOptions, "stacks"> & { processes?: ProcessTable } = {}): Promise<CpuProfile> {
  const collector = new CpuCollector({ pid: options.pid });
  const processes = options.processes ? undefined : new ProcessCollector();
  const select = (t: Trace, batch: TraceBatch) => {
    processes?.scan(batch, batch.firstRow);
    return CpuCollector.rowsOf(t);
  };
  // (the collector takes numbers out of each run: its rows are read from the batch itself while it is
  // the stream's, and copied alone when they wait past it)
  for await (const run of inTimeOrder(stream, { select, release: true, keep: "rows" })) collector.add(run);
  return collector.result(options.processes ?? processes!.result());
}

/** The rows of `rows` that `mark` marks, in their order. */
function marked(rows: Uint32Array, mark: Uint8Array): Uint32Array {
  const out = new Uint32Array(rows.length);
  let n = 0;
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k];
    if (mark[r]) out[n++] = r;
  }
  return out.subarray(0, n);
}

/** Which rows of a batch the symbol map reads (1), or undefined when none. */
function symbolRowsOf(trace: Trace): Uint8Array | undefined {
  const rows = SymbolMap.rowsOf(trace);
  if (!rows.length) return undefined;
  const mark = new Uint8Array(trace.events.length);
  for (const r of rows) mark[r] = 1;
  return mark;
}

/** A raw timestamp from its 32-bit halves (high signed). */
function stampOf(hi: number, lo: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo >>> 0);
}

/** A set of row numbers (rows of a whole trace: a bit each). */
class RowSet {
  private bits = new Uint32Array(1024);
  add(row: number): void {
    const w = row >>> 5;
    if (w >= this.bits.length) {
      const next = new Uint32Array(Math.max(w + 1, this.bits.length * 2));
      next.set(this.bits);
      this.bits = next;
    }
    this.bits[w] |= 1 << (row & 31);
  }
  has(row: number): boolean {
    const w = row >>> 5;
    return w < this.bits.length && (this.bits[w] & (1 << (row & 31))) !== 0;
  }
}

/** Growable typed columns of numbers. */
class Column<T extends Int32Array | Uint32Array | Float64Array | Uint8Array> {
  length = 0;
  constructor(public data: T) {}
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new (this.data.constructor as new (n: number) => T)(Math.max(1024, this.data.length * 2));
      next.set(this.data as never);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

/**
 * What a CPU profile needs from a trace's events, taken run by run in time order (a whole trace, or
 * a stream's batches): the stacks (StackAttacher), the symbol map, and per sample its row, thread,
 * time (and for EventPipe's sample profiler its process and whether it ran managed code). The
 * processes are asked only at the end (`result`), with the whole trace's table.
 */
export class CpuCollector {
  private attacher?: StackAttacher;
  private symbols?: SymbolMap;
  private readonly ownSymbols: boolean;
  private readonly ownAttacher: boolean;
  private clock?: Trace["clock"];
  private pointerSize: 4 | 8 = 8;
  private sawPerfInfo = false;
  private sawSampler = false;
  // kernel samples: global row, thread, timestamp halves
  private readonly kRow = new Column(new Float64Array(0));
  private readonly kTid = new Column(new Int32Array(0));
  private readonly kHi = new Column(new Int32Array(0));
  private readonly kLo = new Column(new Uint32Array(0));
  private idle = 0;
  private fromStart?: number;
  private fromSet?: number;
  // sample-profiler samples: global row, process, thread, timestamp halves, on the CPU (managed code)
  private readonly sRow = new Column(new Float64Array(0));
  private readonly sPid = new Column(new Int32Array(0));
  private readonly sTid = new Column(new Int32Array(0));
  private readonly sHi = new Column(new Int32Array(0));
  private readonly sLo = new Column(new Uint32Array(0));
  private readonly sOnCpu = new Column(new Uint8Array(0));
  /** Per batch (runs of held batches take turns): its providers' kinds and which of its rows the symbol map reads. */
  private readonly batches = new WeakMap<Trace, { kind: Uint8Array; symbolRow?: Uint8Array }>();

  constructor(private readonly options: { pid?: number; attacher?: StackAttacher; symbols?: SymbolMap } = {}) {
    this.attacher = options.attacher;
    this.symbols = options.symbols;
    this.ownSymbols = !options.symbols;
    this.ownAttacher = !options.attacher;
  }

  /** The rows of a batch `add` reads: samples, stack events, and what names frames. */
  static rowsOf(trace: Trace): Uint32Array {
    const stacks = trace.query({ provider: [PERFINFO, SAMPLE_PROFILER, STACKWALK] }).indices;
    const symbols = SymbolMap.rowsOf(trace);
    const out = new Uint32Array(stacks.length + symbols.length);
    out.set(stacks);
    out.set(symbols, stacks.length);
    return out.sort();
  }

  /**
   * Rows of one trace or batch, in time order (`firstRow`: the number of its row 0 in the whole trace;
   * `rowNumbers`: instead, each row's own, where the trace holds some of a batch's rows alone).
   */
  add(run: { trace: Trace; firstRow: number; rows: Uint32Array; rowNumbers?: Float64Array }): void {
    const { trace, firstRow, rows, rowNumbers } = run;
    const events = trace.events;
    if (!this.clock) {
      this.clock = trace.clock;
      this.pointerSize = events.defaultPointerSize === 4 ? 4 : 8;
    }
    const ps = this.pointerSize;
    this.attacher ??= new StackAttacher(ps);
    this.symbols ??= new SymbolMap({ pointerSize: ps });
    // (a stream gives a batch in many runs: what is worked out per batch is kept for its other runs)
    let batch = this.batches.get(trace);
    if (!batch) {
      const perfInfo = trace.providers.find(PERFINFO),
        sampler = trace.providers.find(SAMPLE_PROFILER),
        stackWalk = trace.providers.find(STACKWALK);
      this.sawPerfInfo ||= perfInfo.length > 0;
      this.sawSampler ||= sampler.length > 0;
      // what each provider is here: 1 PerfInfo, 2 the sample profiler, 3 StackWalk
      const kind = new Uint8Array(trace.providers.length);
      for (const p of perfInfo) kind[p] = 1;
      for (const p of sampler) kind[p] = 2;
      for (const p of stackWalk) kind[p] = 3;
      const symbolRow = this.ownSymbols ? symbolRowsOf(trace) : undefined;
      this.batches.set(trace, (batch = { kind, symbolRow }));
    }
    const { kind, symbolRow } = batch;
    // (the samples' provider, as cpuProfile picks it for a whole trace: the sample profiler only without PerfInfo)
    const samplesKind = !this.sawPerfInfo && this.sawSampler ? 2 : 1;
    const { payloadOffset, payloadLength, pid: pids, tid: tids } = events.columns;
    // (provider, id and opcode from each row's event type: their columns are not made)
    const provider = (i: number) => events.typeFieldOf("provider", i);
    const ts32 = new Uint32Array(events.columns.timestamp.buffer, events.columns.timestamp.byteOffset, events.length * 2);
    // the samples and stack events, and each one's number in the whole trace
    let m = 0;
    const stackRows = new Uint32Array(rows.length),
      stackNumbers = new Float64Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      const i = rows[r];
      const k = kind[provider(i)];
      if (k !== samplesKind && k !== 3) continue;
      stackRows[m] = i;
      stackNumbers[m++] = rowNumbers ? rowNumbers[r] : firstRow + i;
    }
    if (this.ownAttacher) this.attacher.addRows(events, stackRows.subarray(0, m), 0, stackNumbers);
    if (symbolRow) this.symbols.addRows(events, marked(rows, symbolRow), trace.tables);
    let viewBytes: Uint8Array | null = null,
      view: DataView | undefined;
    for (let s = 0; s < m; s++) {
      const i = stackRows[s];
      const k = kind[provider(i)];
      if (k === 2) {
        if (events.typeFieldOf("eventId", i) !== 0) continue;
        this.sRow.push(stackNumbers[s]);
        this.sPid.push(pids[i]);
        this.sTid.push(tids[i]);
        this.sHi.push(ts32[2 * i + 1]);
        this.sLo.push(ts32[2 * i]);
        // Type (i32): 2 managed code (on the CPU); 1 external code, 0 error (off it)
        const bytes = events.recordBytesOf(i);
        const at = payloadOffset[i];
        this.sOnCpu.push(
          bytes !== null && payloadLength[i] >= 4 && (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) === 2 ? 1 : 0,
        );
        continue;
      }
      if (k !== 1) continue;
      const op = events.typeFieldOf("opcode", i);
      if (op !== SAMPLE && op !== COLLECTION_START && op !== SET_INTERVAL) continue;
      const bytes = events.recordBytesOf(i);
      if (!bytes) continue;
      if (bytes !== viewBytes) view = new DataView((viewBytes = bytes).buffer, bytes.byteOffset, bytes.length);
      const at = payloadOffset[i];
      if (op !== SAMPLE) {
        // the sample interval in force (100 ns units): CollectionStart's new interval wins, else the last SetInterval's old one
        if (payloadLength[i] < 12 || view!.getUint32(at, true) !== 0) continue; // not the timer
        if (op === COLLECTION_START) this.fromStart = view!.getUint32(at + 4, true);
        else this.fromSet = view!.getUint32(at + 8, true);
        continue;
      }
      if (payloadLength[i] < ps + 7) continue;
      const tid = view!.getInt32(at + ps, true);
      if (tid === 0 && (view!.getUint8(at + ps + 6) & 3) === 0) {
        this.idle++;
        continue;
      }
      this.kRow.push(stackNumbers[s]);
      this.kTid.push(tid);
      this.kHi.push(ts32[2 * i + 1]);
      this.kLo.push(ts32[2 * i]);
    }
  }

  /** The profile, with processes and threads named from `processes` (the whole trace's table). */
  result(processes: ProcessTable): CpuProfile {
    const attacher = this.attacher ?? new StackAttacher(this.pointerSize);
    if (this.ownAttacher) attacher.finish();
    const symbols = this.symbols ?? new SymbolMap({ pointerSize: this.pointerSize });
    if (this.ownSymbols) symbols.prepare();
    const clock = this.clock;
    const pointerSize = this.pointerSize;
    const onlyPid = this.options.pid;
    const cpuPerThread = new Map<number, number>();
    let other = 0;
    const sampler = this.sawSampler && !this.sawPerfInfo;
    let weightMSec: Float64Array | undefined;
    // the samples kept: columns of room for every sample collected (no array grown sample by sample)
    const room = sampler && clock ? this.sRow.length : this.kRow.length;
    const keptRow = new Float64Array(room),
      keptPid = new Float64Array(room),
      keptTid = new Int32Array(room);
    const keptHi = new Int32Array(room),
      keptLo = new Uint32Array(room),
      onCpu = new Uint8Array(room);
    let kept = 0;
    /** A sample kept (unless of another process than asked): its row, process, thread, time; its weight counts to its thread's CPU. */
    const keep = (row: number, pid: number, tid: number, hi: number, lo: number, weight: number): boolean => {
      if (onlyPid !== undefined && pid !== onlyPid) {
        other++;
        return false;
      }
      keptRow[kept] = row;
      keptPid[kept] = pid;
      keptTid[kept] = tid;
      keptHi[kept] = hi;
      keptLo[kept] = lo;
      kept++;
      cpuPerThread.set(tid, (cpuPerThread.get(tid) ?? 0) + weight);
      return true;
    };
    if (sampler && clock) {
      // PerfView's SampleProfilerThreadTimeComputer: a sample stands for the time until its thread's
      // next sample; a thread's last sample (with no next) is left out
      const n = this.sRow.length;
      const at = (k: number) => clock.relativeMSecParts(this.sHi.data[k], this.sLo.data[k]);
      const weights = new Float64Array(n).fill(NaN);
      const last = new Map<number, number>();
      for (let k = 0; k < n; k++) {
        const prev = last.get(this.sTid.data[k]);
        if (prev !== undefined) weights[prev] = at(k) - at(prev);
        last.set(this.sTid.data[k], k);
      }
      const out: number[] = [];
      for (let k = 0; k < n; k++) {
        if (Number.isNaN(weights[k])) continue;
        if (!keep(this.sRow.data[k], this.sPid.data[k], this.sTid.data[k], this.sHi.data[k], this.sLo.data[k], weights[k])) continue;
        out.push(weights[k]);
        onCpu[kept - 1] = this.sOnCpu.data[k];
      }
      weightMSec = Float64Array.from(out);
    } else {
      // (a thread whose process is the same at every time is looked up once, not at each sample's time)
      const fixed = new Map<number, { pid: number | undefined } | undefined>();
      for (let k = 0; k < this.kRow.length; k++) {
        const tid = this.kTid.data[k],
          hi = this.kHi.data[k],
          lo = this.kLo.data[k];
        let f = fixed.get(tid);
        if (f === undefined && !fixed.has(tid)) fixed.set(tid, (f = processes.fixedThreadProcess(tid)));
        const pid = f ? f.pid : processes.threadProcess(tid, stampOf(hi, lo));
        keep(this.kRow.data[k], pid ?? (tid === 0 ? 0 : -1), tid, hi, lo, 1);
      }
    }
    const rows = keptRow.subarray(0, kept),
      pids = keptPid.subarray(0, kept),
      tids = keptTid.subarray(0, kept);
    const tsHi = keptHi.subarray(0, kept),
      tsLo = keptLo.subarray(0, kept);
    const intervalMSec = (this.fromStart ?? this.fromSet ?? 10_000) / 10_000;
    const table = attacher.table;
    // (about as many name stacks and (process, address) pairs as stack nodes: room made once)
    const stacks = new NameInterner(table.size);

    // 1. Name every (process, address) a sample reaches, in time order (FrameNames). A stack node walked
    // for a process has its callers walked too, so a walk stops at a node last walked for the same
    // process; nodeName keeps that walk's names.
    const frameNames = new FrameNames(table, symbols, stacks, table.size);
    const nameOf = (pid: number, s: number, k: number): number => frameNames.of(pid, s, tsHi[k], tsLo[k]);
    // (the stack table is complete: arrays by stack node are made once)
    const walkedFor = new Float64Array(table.size).fill(NaN); // NaN: not walked
    const nodeName = new Int32Array(table.size);
    for (let k = 0; k < rows.length; k++) {
      const pid = pids[k];
      const stack = attacher.stackOf(rows[k]);
      if (stack < 0) continue;
      for (let s = stack; s >= 0 && walkedFor[s] !== pid; s = table.parent[s]) {
        walkedFor[s] = pid;
        nodeName[s] = nameOf(pid, s, k);
      }
    }

    // 2. TraceEvent's pseudo frames above the stack: process, then thread (with its CPU milliseconds); the
    // node of a (process, thread) is made once (a process id reused later is a new process frame)
    const threadNode = new Int32Array(rows.length);
    const threadNodes = new Map<number, { pid: number; start: bigint | null | undefined; node: number }>();
    for (let k = 0; k < rows.length; k++) {
      const pid = pids[k],
        tid = tids[k],
        ts = stampOf(tsHi[k], tsLo[k]);
      const info = processes.processAt(pid, ts);
      let known = threadNodes.get(tid);
      if (!known || known.pid !== pid || known.start !== info?.start) {
        const process = stacks.node(-1, stacks.nameId(processFrame(processes, pid, ts, pointerSize)));
        const cpu = (cpuPerThread.get(tid) ?? 0) * (weightMSec ? 1 : intervalMSec);
        const node = stacks.node(process, stacks.nameId(`Thread (${tid}) CPU=${Math.round(cpu)}ms`));
        threadNodes.set(tid, (known = { pid, start: info?.start, node }));
      }
      threadNode[k] = known.node;
    }

    // 3. Each sample's frame-name stack below its thread's node, a thread's samples together so that
    // what its earlier samples made is found again (memo: stack node -> name node, for the thread it was made for)
    const ordinal = new Map<number, number>();
    const order = new Float64Array(rows.length);
    for (let k = 0; k < rows.length; k++) {
      let o = ordinal.get(threadNode[k]);
      if (o === undefined) ordinal.set(threadNode[k], (o = ordinal.size));
      order[k] = o * 4294967296 + k;
    }
    order.sort();

    const node = new Int32Array(rows.length);
    const memoFor = new Int32Array(table.size).fill(-1),
      memo = new Int32Array(table.size);
    let path: Int32Array = new Int32Array(64);
    let withStacks = 0;
    for (let o = 0; o < order.length; o++) {
      const k = order[o] % 4294967296;
      const thread = threadNode[k];
      const stack = attacher.stackOf(rows[k]);
      if (stack < 0) {
        node[k] = thread;
        continue;
      }
      withStacks++;
      const pid = pids[k];
      let depth = 0;
      let s = stack;
      for (; s >= 0 && memoFor[s] !== thread; s = table.parent[s]) {
        if (depth === path.length) path = fit(path, depth);
        path[depth++] = s;
      }
      let id = s >= 0 ? memo[s] : thread;
      for (let d = depth - 1; d >= 0; d--) {
        const t = path[d];
        id = stacks.node(id, walkedFor[t] === pid ? nodeName[t] : nameOf(pid, t, k));
        memoFor[t] = thread;
        memo[t] = id;
      }
      node[k] = id;
    }
    // thread time: the leaf says whether the thread ran managed code or was elsewhere (PerfView's pseudo frames)
    if (weightMSec) {
      const cpu = stacks.nameId("CPU_TIME"),
        elsewhere = stacks.nameId("UNMANAGED_CODE_TIME");
      for (let k = 0; k < rows.length; k++) node[k] = stacks.node(node[k], onCpu[k] === 1 ? cpu : elsewhere);
    }
    const timeMSec = new Float64Array(rows.length);
    if (clock) for (let k = 0; k < rows.length; k++) timeMSec[k] = clock.relativeMSecParts(tsHi[k], tsLo[k]);
    const samples: CpuSamples = { length: rows.length, pid: Int32Array.from(pids), tid: tids.slice(), timeMSec, stack: node, weightMSec };
    return { intervalMSec, samples, stacks: stacks.result(), samplesWithStacks: withStacks, idleSamples: this.idle, otherSamples: other };
  }
}

/**
 * Collapsed stacks (Brendan Gregg's folded format): `root;...;leaf count`, one line per distinct stack.
 * A profile whose samples weigh differently (EventPipe thread time) counts microseconds instead.
 */
export function toFolded(profile: CpuProfile): string {
  const lines = foldedLines(profile);
  return lines.join("\n") + (lines.length ? "\n" : "");
}

/**
 * toFolded's text as UTF-8, in chunks of about `chunkBytes`: no one string of it all, which has at most
 * 2^29 - 24 characters (the folded stacks of the generated 1 GiB .nettrace are 469 MB). For a file.
 */
export function foldedFile(profile: CpuProfile, chunkBytes = 8 << 20): Uint8Array[] {
  const lines = foldedLines(profile);
  const encoder = new TextEncoder();
  const chunks: Uint8Array[] = [];
  let chunk = new Uint8Array(0),
    at = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] + "\n";
    // (each line let go once written: the lines and the bytes are not both held whole)
    lines[i] = "";
    const most = 3 * line.length;
    if (at + most > chunk.length) {
      if (at > 0) chunks.push(chunk.subarray(0, at));
      chunk = new Uint8Array(Math.max(chunkBytes, most));
      at = 0;
    }
    at += encoder.encodeInto(line, chunk.subarray(at)).written;
  }
  if (at > 0) chunks.push(chunk.subarray(0, at));
  return chunks;
}

/** The folded lines: each distinct stack with its count, in the order of a sort of whole lines. */
function foldedLines(profile: CpuProfile): string[] {
  const { stacks } = profile;
  const { stack: stackOf, weightMSec } = profile.samples;
  const nodes = stacks.parent.length;
  // each stack's count (sums in sample order); the stacks in order of their first sample
  const counts = new Float64Array(nodes);
  const ends = new Uint8Array(nodes);
  const order: number[] = [];
  for (let k = 0; k < stackOf.length; k++) {
    const s = stackOf[k];
    if (!ends[s]) {
      ends[s] = 1;
      order.push(s);
    }
    counts[s] += weightMSec ? weightMSec[k] * 1000 : 1;
  }
  // (each name made safe once, not once a frame of every stack)
  const escaped = stacks.names.map((f) => f.replace(/;/g, ":"));
  const countText = (s: number) => String(weightMSec ? Math.round(counts[s]) : counts[s]);
  return foldedInTreeOrder(stacks, escaped, ends, order, countText) ?? foldedSorted(stacks, escaped, order, countText);
}

/** The folded lines of `order`'s stacks, each made whole, sorted as strings. */
function foldedSorted(stacks: NameStacks, escaped: string[], order: number[], countText: (s: number) => string): string[] {
  const lines: string[] = [];
  const path: number[] = [];
  for (const stack of order) {
    let depth = 0;
    for (let n = stack; n >= 0; n = stacks.parent[n]) path[depth++] = stacks.frame[n];
    let line = depth ? escaped[path[depth - 1]] : "";
    for (let d = depth - 2; d >= 0; d--) line += ";" + escaped[path[d]];
    lines.push(`${line} ${countText(stack)}`);
  }
  return lines.sort();
}

/**
 * The same lines in the same order, walking the name-stack tree from the roots: the lines under a
 * node all start with its text and ";", so a node's children are sorted by their own keys only
 * ("name;" for those with lines below, "name count" for a line ending there), not every line against
 * every other along their long common start (the sort of whole lines was most of a large profile's
 * folding). A key ends in ";" or holds none, so no key is a proper prefix of another's lines but where
 * the whole-line order agrees. Null when two keys of one node are equal (two names alike once their
 * ";" became ":"), whose lines interleave: then the lines are sorted whole.
 */
function foldedInTreeOrder(stacks: NameStacks, escaped: string[], ends: Uint8Array, order: number[], countText: (s: number) => string): string[] | null {
  const nodes = stacks.parent.length;
  // the nodes on some stack's path, and each one's children among them (node `nodes`: the roots' parent)
  const used = new Uint8Array(nodes);
  const childCount = new Int32Array(nodes + 2);
  for (const stack of order)
    for (let n = stack; n >= 0 && !used[n]; n = stacks.parent[n]) {
      used[n] = 1;
      const p = stacks.parent[n];
      childCount[(p < 0 ? nodes : p) + 1]++;
    }
  const first = childCount; // (prefix sums: node p's children at [first[p], first[p + 1]))
  for (let p = 1; p < first.length; p++) first[p] += first[p - 1];
  const children = new Int32Array(first[nodes + 1]);
  const fill = first.slice(0, nodes + 1);
  for (let n = 0; n < nodes; n++)
    if (used[n]) {
      const p = stacks.parent[n];
      children[fill[p < 0 ? nodes : p]++] = n;
    }
  const lines: string[] = [];
  const walk = (p: number, prefix: string): boolean => {
    // (most nodes have one child and no line ending there: a chain, walked without a sort)
    if (first[p + 1] - first[p] === 1) {
      const c = children[first[p]];
      if (!ends[c]) return walk(c, prefix + escaped[stacks.frame[c]] + ";");
      if (first[c + 1] === first[c]) {
        lines.push(`${prefix}${escaped[stacks.frame[c]]} ${countText(c)}`);
        return true;
      }
    }
    // (key, node, ends-here) of each entry, sorted by key
    const keys: string[] = [];
    const of: number[] = [];
    const ending: boolean[] = [];
    for (let k = first[p]; k < first[p + 1]; k++) {
      const c = children[k];
      const name = escaped[stacks.frame[c]];
      if (ends[c]) {
        keys.push(`${name} ${countText(c)}`);
        of.push(c);
        ending.push(true);
      }
      if (first[c + 1] > first[c]) {
        keys.push(name + ";");
        of.push(c);
        ending.push(false);
      }
    }
    const at = keys.map((_, k) => k).sort((a, b) => (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : 0));
    for (let k = 1; k < at.length; k++) if (keys[at[k]] === keys[at[k - 1]]) return false;
    for (const k of at) {
      if (ending[k]) lines.push(prefix + keys[k]);
      else if (!walk(of[k], prefix + keys[k])) return false;
    }
    return true;
  };
  return walk(nodes, "") ? lines : null;
}

/** Receives one open or close of frame `frame` at `at` milliseconds on a thread's timeline. */
type FrameEventSink = (open: boolean, frame: number, at: number) => void;

/**
 * A thread's samples as frame opens and closes (PerfView's SpeedScopeStackSourceWriter): consecutive
 * samples sharing frames from the root keep them open while they are continuous (the previous one's
 * time plus weight reaches this one's, within 0.1%). `skip` frames from the root are left out.
 */
function threadEvents(profile: CpuProfile, rows: ArrayLike<number>, frameId: (name: number) => number, skip: number, emit: FrameEventSink): void {
  const { stacks, intervalMSec } = profile;
  const { stack, timeMSec, weightMSec } = profile.samples;
  // the open frames, root first: frame, open time, metric so far
  const openFrame: number[] = [],
    openTime: number[] = [],
    openMetric: number[] = [];
  let depthOpen = 0;
  const path: number[] = [];
  let last = 0;
  for (let k = 0; k <= rows.length; k++) {
    // (one step past the last sample: every frame closes)
    const s = k < rows.length ? rows[k] : -1;
    let depth = 0;
    if (s >= 0) for (let n = stack[s]; n >= 0; n = stacks.parent[n]) path[depth++] = n;
    depth = Math.max(depth - skip, 0);
    const top = depth - 1; // path[top - d] is the frame at depth d below the skipped ones
    let d = 0;
    const time = s >= 0 ? timeMSec[s] : 0;
    const weight = weightMSec && s >= 0 ? weightMSec[s] : intervalMSec;
    if (s >= 0) {
      while (d < depthOpen && d < depth && openFrame[d] === frameId(stacks.frame[path[top - d]]) && openTime[d] + openMetric[d] * 1.001 >= time) {
        openMetric[d] += weight;
        d++;
      }
    }
    for (let c = depthOpen - 1; c >= d; c--) {
      const end = openTime[c] + openMetric[c];
      if (end > last) last = end;
      emit(false, openFrame[c], last);
    }
    if (s < 0) break;
    if (d < depth && time > last) last = time;
    for (; d < depth; d++) {
      const frame = frameId(stacks.frame[path[top - d]]);
      emit(true, frame, last);
      openFrame[d] = frame;
      openTime[d] = time;
      openMetric[d] = weight;
    }
    depthOpen = depth;
  }
}

/** A thread's samples (indices into the profile's samples, in time order). */
interface ThreadSamples {
  pid: number;
  tid: number;
  rows: number[];
}

/** Samples grouped by thread (and process: a thread id can be reused by another), threads by their first sample. */
function byThread(profile: CpuProfile): ThreadSamples[] {
  const { pid, tid, timeMSec } = profile.samples;
  const threads = new Map<number, Map<number, ThreadSamples>>();
  const list: ThreadSamples[] = [];
  for (let i = 0; i < profile.samples.length; i++) {
    let ofTid = threads.get(tid[i]);
    if (!ofTid) threads.set(tid[i], (ofTid = new Map()));
    let t = ofTid.get(pid[i]);
    if (!t) {
      ofTid.set(pid[i], (t = { pid: pid[i], tid: tid[i], rows: [] }));
      list.push(t);
    }
    t.rows.push(i);
  }
  for (const t of list) {
    // (cpuProfile's samples are in time order already: sorted only when not)
    let sorted = true;
    for (let i = 1; i < t.rows.length && sorted; i++) sorted = timeMSec[t.rows[i - 1]] <= timeMSec[t.rows[i]];
    if (!sorted) t.rows.sort((a, b) => timeMSec[a] - timeMSec[b] || a - b);
  }
  return list.sort((a, b) => timeMSec[a.rows[0]] - timeMSec[b.rows[0]]);
}

/**
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json), the file's bytes
 * (UTF-8 JSON) in chunks, to write one after the other: one evented profile per thread, named by its thread frame, in milliseconds (to the
 * nanosecond); frames shared, in order of first use. Written as bytes directly: a profile of a large
 * trace has tens of millions of frame events, and may not fit in one JavaScript string.
 */
const OPEN = new Literal('{"type":"O","frame":'),
  CLOSE = new Literal('{"type":"C","frame":');
const NEXT_OPEN = new Literal(',{"type":"O","frame":'),
  NEXT_CLOSE = new Literal(',{"type":"C","frame":');
const AT = new Literal(',"at":'),
  END = new Literal("}");

export function speedscopeFile(profile: CpuProfile, name: string, exporter = "etw-wasm"): Uint8Array[] {
  const { names, parent, frame } = profile.stacks;
  const ids = new Int32Array(names.length).fill(-1);
  const used: number[] = [];
  const frameId = (n: number) => (ids[n] >= 0 ? ids[n] : (ids[n] = used.push(n) - 1));
  const w = new ByteWriter();
  w.once(`{"exporter":${JSON.stringify(exporter)},"name":${JSON.stringify(name)},"activeProfileIndex":0,`);
  w.once(`"$schema":"https://www.speedscope.app/file-format-schema.json","profiles":[`);
  byThread(profile).forEach((t, i) => {
    // the thread frame: the second frame from the root
    let node = profile.samples.stack[t.rows[0]];
    while (parent[node] >= 0 && parent[parent[node]] >= 0) node = parent[node];
    w.once(`${i ? "," : ""}{"type":"evented","name":${JSON.stringify(names[frame[node]])},"unit":"milliseconds","events":[`);
    let first = 0,
      last = 0,
      count = 0;
    threadEvents(profile, t.rows, frameId, 0, (open, f, at) => {
      if (!count++) first = at;
      last = at;
      w.reserve(80);
      w.literal(count > 1 ? (open ? NEXT_OPEN : NEXT_CLOSE) : open ? OPEN : CLOSE);
      w.uint(f);
      w.literal(AT);
      w.fixed6(at);
      w.literal(END);
    });
    w.once('],"startValue":');
    w.fixed6(first);
    w.once(',"endValue":');
    w.fixed6(last);
    w.once("}");
  });
  w.once('],"shared":{"frames":[');
  used.forEach((n, i) => w.once(`${i ? "," : ""}{"name":${JSON.stringify(names[n])}}`));
  w.once("]}}");
  return w.chunks();
}

/** speedscopeFile as an object. */
export function toSpeedscope(profile: CpuProfile, name: string, exporter = "etw-wasm"): object {
  const decoder = new TextDecoder();
  let text = "";
  for (const chunk of speedscopeFile(profile, name, exporter)) text += decoder.decode(chunk, { stream: true });
  return JSON.parse(text + decoder.decode()) as object;
}

/** A slice to show on a Chrome/Perfetto timeline besides the samples (GCs, JIT compilations). */
export interface TimelineSlice {
  pid: number;
  tid: number;
  name: string;
  category: string;
  startMSec: number;
  durationMSec: number;
  args?: Record<string, unknown>;
}

/**
 * Chrome trace-event JSON (the format chrome://tracing and ui.perfetto.dev open): process and thread
 * names, each thread's samples as nested begin/end slices (frames kept open while samples continue),
 * and `slices` (GCs, JIT) as complete events. Times in microseconds since the trace started.
 */
export function toChromeTrace(profile: CpuProfile, slices: TimelineSlice[], processNames: Map<number, string>): object {
  const traceEvents: Record<string, unknown>[] = [];
  const us = (ms: number) => Math.round(ms * 1000 * 1000) / 1000;
  const threads = byThread(profile);
  const named = new Set<string>();
  const nameThread = (pid: number, tid: number, label?: string) => {
    const key = `${pid}:${tid}`;
    if (!named.has(`p${pid}`)) {
      named.add(`p${pid}`);
      traceEvents.push({ ph: "M", name: "process_name", pid, tid: 0, args: { name: `${processNames.get(pid) ?? `Process(${pid})`} (${pid})` } });
    }
    if (!named.has(key)) {
      named.add(key);
      traceEvents.push({ ph: "M", name: "thread_name", pid, tid, args: { name: label ?? `Thread (${tid})` } });
    }
  };
  for (const t of threads) {
    nameThread(t.pid, t.tid);
    // the frames below the process and thread frames (those two are the tracks)
    threadEvents(
      profile,
      t.rows,
      (n) => n,
      2,
      (open, frame, at) => {
        traceEvents.push({ ph: open ? "B" : "E", pid: t.pid, tid: t.tid, ts: us(at), name: profile.stacks.names[frame], cat: "cpu" });
      },
    );
  }
  for (const s of slices) {
    nameThread(s.pid, s.tid, s.tid < 0 ? s.category : undefined);
    traceEvents.push({ ph: "X", pid: s.pid, tid: s.tid, ts: us(s.startMSec), dur: us(s.durationMSec), name: s.name, cat: s.category, args: s.args ?? {} });
  }
  return { traceEvents, displayTimeUnit: "ms" };
}
