// CPU profiles from the kernel's PerfInfo samples, as PerfView's CPU stacks show them: each sample is
// one sample interval on a thread (idle samples left out, DPC/ISR kept), with its call stack (kernel
// StackWalk events matched to it, §stacks.ts) named by the symbol map (§symbols.ts), under the thread
// and process frames of TraceEvent's stack source. Written as speedscope's file format, collapsed stacks
// (flame graph tools) or Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing).

import type { Trace } from "../trace.js";
import type { ProcessTable } from "../tables/processes.js";
import { StackAttacher, type StackTable } from "./stacks.js";
import { SymbolMap } from "./symbols.js";
import { PrefixTree } from "./prefix-tree.js";

const PERFINFO = "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc";
const STACKWALK = "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3";
const SAMPLE = 46, SET_INTERVAL = 72, COLLECTION_START = 73;

/** One CPU sample: where and when, and its stack as frame names from the root (process, thread, ..., leaf). */
export interface CpuSample {
  pid: number;
  tid: number;
  /** Milliseconds since the trace started. */
  timeMSec: number;
  /** Milliseconds of CPU the sample stands for (the sample interval). */
  weightMSec: number;
  /** Index of the sample's frame stack in `CpuProfile.stacks`. */
  stack: number;
}

/** Frame-name stacks as a prefix tree: stack `i` is frame `frame[i]` (an index in `names`) below `parent[i]`. */
export interface NameStacks {
  names: string[];
  frame: number[];
  parent: number[];
}

export interface CpuProfile {
  /** The sample interval, milliseconds (PerfInfo CollectionStart / SetInterval; 1 by default). */
  intervalMSec: number;
  samples: CpuSample[];
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
}

/** The frames from the root of a name stack, as names. */
export function stackNames(stacks: NameStacks, id: number): string[] {
  const out: string[] = [];
  for (let s = id; s >= 0; s = stacks.parent[s]) out.push(stacks.names[stacks.frame[s]]);
  return out.reverse();
}

/** Frame-name stacks: a prefix tree of name numbers. */
class NameInterner implements NameStacks {
  readonly names: string[] = [];
  private readonly nameIds = new Map<string, number>();
  private readonly tree = new PrefixTree();
  get frame(): number[] { return this.tree.value; }
  get parent(): number[] { return this.tree.parent; }

  node(parent: number, name: string): number {
    let n = this.nameIds.get(name);
    if (n === undefined) this.nameIds.set(name, (n = this.names.push(name) - 1));
    return this.tree.child(parent, n);
  }
}

/** The sample interval in force: CollectionStart's new interval wins, else the last SetInterval's old one (100 ns units). */
function sampleInterval(trace: Trace): number {
  let fromStart: number | undefined;
  let fromSet: number | undefined;
  for (const row of trace.query({ provider: PERFINFO, order: "time" })) {
    if (row.opcode !== COLLECTION_START && row.opcode !== SET_INTERVAL) continue;
    const p = row.payload;
    if (p.length < 12) continue;
    const v = new DataView(p.buffer, p.byteOffset, p.length);
    if (v.getUint32(0, true) !== 0) continue; // not the timer
    if (row.opcode === COLLECTION_START) fromStart = v.getUint32(4, true);
    else fromSet = v.getUint32(8, true);
  }
  return (fromStart ?? fromSet ?? 10_000) / 10_000;
}

/** Stacks of a trace's events: the attacher over every event (time order) and the symbol map. */
export function traceStacks(trace: Trace, providers?: string[]): { attacher: StackAttacher; symbols: SymbolMap } {
  const pointerSize = trace.events.defaultPointerSize === 4 ? 4 : 8;
  const attacher = new StackAttacher(pointerSize);
  const rows = providers ? trace.query({ provider: [...providers, STACKWALK], order: "time" }) : trace.events.cursor(trace.events.timeOrder());
  for (const row of rows) attacher.add(row, row.index);
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

/** The CPU samples of a trace (PerfInfo/Sample), with stacks named, per process and thread. */
export function cpuProfile(trace: Trace, options: CpuOptions = {}): CpuProfile {
  const pointerSize = trace.events.defaultPointerSize === 4 ? 4 : 8;
  const intervalMSec = sampleInterval(trace);
  const { attacher, symbols } = traceStacks(trace, [PERFINFO]);
  const processes = trace.processes;
  const stacks = new NameInterner();
  const raw: { pid: number; tid: number; ts: bigint; row: number }[] = [];
  const cpuPerThread = new Map<number, number>();
  let idle = 0, other = 0;
  for (const row of trace.query({ provider: PERFINFO, order: "time" })) {
    if (row.opcode !== SAMPLE || row.payloadLength < pointerSize + 7) continue;
    const p = row.payload;
    const v = new DataView(p.buffer, p.byteOffset, p.length);
    const tid = v.getInt32(pointerSize, true);
    const flags = v.getUint8(pointerSize + 6);
    if (tid === 0 && (flags & 3) === 0) {
      idle++;
      continue;
    }
    const pid = processes.threadProcess(tid, row.timestamp) ?? (tid === 0 ? 0 : -1);
    if (options.pid !== undefined && pid !== options.pid) {
      other++;
      continue;
    }
    raw.push({ pid, tid, ts: row.timestamp, row: row.index });
    cpuPerThread.set(tid, (cpuPerThread.get(tid) ?? 0) + 1);
  }
  const samples: CpuSample[] = [];
  let withStacks = 0;
  // a stack's frame names under a thread's node, each (thread node, stack) worked out once
  const table = attacher.table;
  const below = new Map<number, Map<number, number>>();
  const frameName = frameNameOf(table, symbols);
  const nodeOf = (threadNode: number, stack: number, pid: number, ts: bigint): number => {
    if (stack < 0) return threadNode;
    let memo = below.get(threadNode);
    if (!memo) below.set(threadNode, (memo = new Map()));
    const known = memo.get(stack);
    if (known !== undefined) return known;
    const caller = nodeOf(threadNode, table.parent[stack], pid, ts);
    const id = stacks.node(caller, frameName(pid, stack, ts));
    memo.set(stack, id);
    return id;
  };
  // TraceEvent's pseudo frames above the stack: process, then thread (with its CPU milliseconds); the
  // node of a (process, thread) is made once (a process id reused later is a new process frame)
  const threadNodes = new Map<number, { pid: number; start: bigint | null | undefined; node: number }>();
  for (const s of raw) {
    const info = processes.processAt(s.pid, s.ts);
    let known = threadNodes.get(s.tid);
    if (!known || known.pid !== s.pid || known.start !== info?.start) {
      const process = stacks.node(-1, processFrame(processes, s.pid, s.ts, pointerSize));
      const node = stacks.node(process, `Thread (${s.tid}) CPU=${Math.round((cpuPerThread.get(s.tid) ?? 0) * intervalMSec)}ms`);
      threadNodes.set(s.tid, (known = { pid: s.pid, start: info?.start, node }));
    }
    let node = known.node;
    const stack = attacher.stackOf(s.row);
    if (stack >= 0) {
      withStacks++;
      node = nodeOf(node, stack, s.pid, s.ts);
    }
    samples.push({ pid: s.pid, tid: s.tid, timeMSec: trace.relativeMSec(s.ts), weightMSec: intervalMSec, stack: node });
  }
  return { intervalMSec, samples, stacks, samplesWithStacks: withStacks, idleSamples: idle, otherSamples: other };
}

/** Collapsed stacks (Brendan Gregg's folded format): `root;...;leaf count`, one line per distinct stack. */
export function toFolded(profile: CpuProfile): string {
  const counts = new Map<number, number>();
  for (const s of profile.samples) counts.set(s.stack, (counts.get(s.stack) ?? 0) + 1);
  const lines: string[] = [];
  for (const [stack, n] of counts) lines.push(`${stackNames(profile.stacks, stack).map((f) => f.replace(/;/g, ":")).join(";")} ${n}`);
  return lines.sort().join("\n") + (lines.length ? "\n" : "");
}

/** One open or close of a frame on a thread's timeline (speedscope's evented profile). */
interface FrameEvent {
  type: "O" | "C";
  frame: number;
  at: number;
}

/**
 * A thread's samples as frame opens and closes (PerfView's SpeedScopeStackSourceWriter): consecutive
 * samples sharing frames from the root keep them open while they are continuous (the previous one's
 * time plus weight reaches this one's, within 0.1%).
 */
function threadEvents(samples: CpuSample[], stacks: NameStacks, frameId: (name: number) => number, skip = 0): FrameEvent[] {
  const events: FrameEvent[] = [];
  const open: { frame: number; time: number; metric: number }[] = [];
  let last = 0;
  const close = (from: number, at: (o: { time: number; metric: number }) => number) => {
    for (let d = open.length - 1; d >= from; d--) {
      last = Math.max(last, at(open[d]));
      events.push({ type: "C", frame: open[d].frame, at: last });
    }
    open.length = from;
  };
  for (const s of samples) {
    const path: number[] = [];
    for (let n = s.stack; n >= 0; n = stacks.parent[n]) path.push(frameId(stacks.frame[n]));
    path.reverse();
    path.splice(0, skip);
    let d = 0;
    while (d < open.length && d < path.length && open[d].frame === path[d] && open[d].time + open[d].metric * 1.001 >= s.timeMSec) {
      open[d].metric += s.weightMSec;
      d++;
    }
    close(d, (o) => o.time + o.metric);
    for (; d < path.length; d++) {
      last = Math.max(last, s.timeMSec);
      events.push({ type: "O", frame: path[d], at: last });
      open.push({ frame: path[d], time: s.timeMSec, metric: s.weightMSec });
    }
  }
  close(0, (o) => o.time + o.metric);
  return events;
}

/** Samples grouped by thread, each thread's in time order; threads by their first sample. */
function byThread(profile: CpuProfile): { pid: number; tid: number; samples: CpuSample[] }[] {
  const threads = new Map<string, { pid: number; tid: number; samples: CpuSample[] }>();
  for (const s of profile.samples) {
    const key = `${s.pid}:${s.tid}`;
    let t = threads.get(key);
    if (!t) threads.set(key, (t = { pid: s.pid, tid: s.tid, samples: [] }));
    t.samples.push(s);
  }
  const list = [...threads.values()];
  for (const t of list) t.samples.sort((a, b) => a.timeMSec - b.timeMSec || a.weightMSec - b.weightMSec);
  return list.sort((a, b) => a.samples[0].timeMSec - b.samples[0].timeMSec);
}

/**
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json): one evented profile
 * per thread, named by its thread frame, in milliseconds; frames shared, in order of first use.
 */
export function toSpeedscope(profile: CpuProfile, name: string, exporter = "etw-wasm"): object {
  const frames: { name: string }[] = [];
  const ids = new Map<number, number>();
  const frameId = (n: number) => {
    let id = ids.get(n);
    if (id === undefined) {
      ids.set(n, (id = frames.length));
      frames.push({ name: profile.stacks.names[n] });
    }
    return id;
  };
  const profiles = byThread(profile).map((t) => {
    const events = threadEvents(t.samples, profile.stacks, frameId);
    // the thread frame: the second frame from the root
    let node = t.samples[0].stack;
    while (profile.stacks.parent[node] >= 0 && profile.stacks.parent[profile.stacks.parent[node]] >= 0) node = profile.stacks.parent[node];
    return {
      type: "evented", name: profile.stacks.names[profile.stacks.frame[node]], unit: "milliseconds",
      startValue: events.length ? events[0].at : 0, endValue: events.length ? events[events.length - 1].at : 0, events,
    };
  });
  return {
    exporter, name, activeProfileIndex: 0, $schema: "https://www.speedscope.app/file-format-schema.json",
    shared: { frames }, profiles,
  };
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
    for (const e of threadEvents(t.samples, profile.stacks, (n) => n, 2)) {
      traceEvents.push({ ph: e.type === "O" ? "B" : "E", pid: t.pid, tid: t.tid, ts: us(e.at), name: profile.stacks.names[e.frame], cat: "cpu" });
    }
  }
  for (const s of slices) {
    nameThread(s.pid, s.tid, s.tid < 0 ? s.category : undefined);
    traceEvents.push({ ph: "X", pid: s.pid, tid: s.tid, ts: us(s.startMSec), dur: us(s.durationMSec), name: s.name, cat: s.category, args: s.args ?? {} });
  }
  return { traceEvents, displayTimeUnit: "ms" };
}
