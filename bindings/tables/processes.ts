// Processes and threads from the kernel's Process and Thread events (Start 1, End 2, DCStart 3, DCEnd 4,
// Defunct 39): pid -> image name and command line, tid -> pid. Process and thread ids are reused, so
// every entry has a time interval and lookups take a timestamp.

import { EventRow, type EventTable } from "./event-table.js";
import { ansiz, utf16z } from "./payload-strings.js";

export interface ProcessInfo {
  pid: number;
  parentPid: number;
  /** ImageFileName as logged, e.g. "svchost.exe". */
  imageName: string;
  commandLine: string;
  /** Raw timestamp of the Start event; null when the process was running when the trace began (DCStart). */
  start: bigint | null;
  /** Raw timestamp of the End event; null when it was still running at the end (DCEnd or no end seen). */
  end: bigint | null;
  /** Process image name the way PerfView shows it: file name without directory and extension. */
  name: string;
}

export interface ThreadInfo {
  tid: number;
  pid: number;
  start: bigint | null;
  end: bigint | null;
}

export interface ProcessTable {
  processes: ProcessInfo[];
  threads: ThreadInfo[];
  /** PerfView's process name of `pid` at `timestamp`; "Process(pid)" when unknown, "" for pid -1. */
  processName(pid: number, timestamp: bigint): string;
  /** processName of `pid` when it is the same at every time (no process described, or one running from the start), else undefined. */
  fixedName(pid: number): string | undefined;
  /** The process entry of `pid` at `timestamp`, if a Process event described it. */
  processAt(pid: number, timestamp: bigint): ProcessInfo | undefined;
  /**
   * processName of `pid` at `timestamp`, and the timestamps it is the name for: `from` (inclusive) to
   * `to` (exclusive), null where unbounded. (Optional: rows in time order then cost one lookup a span.)
   */
  processSpan?(pid: number, timestamp: bigint): { name: string; from: bigint | null; to: bigint | null };
  /** The process that owned thread `tid` at `timestamp`, or undefined. */
  threadProcess(tid: number, timestamp: bigint): number | undefined;
  /** threadProcess of `tid` when it is the same at every time (no thread described, or one from the start), as `{ pid }`; else undefined. */
  fixedThreadProcess(tid: number): { pid: number | undefined } | undefined;
}

interface Source {
  events: EventTable;
  providers: { readonly length: number; get(i: number): { name: string; group?: string; guid: string } };
}

/** PerfView's short process name: no directory, no extension. */
export function shortProcessName(imageName: string): string {
  let s = imageName;
  const slash = Math.max(s.lastIndexOf("\\"), s.lastIndexOf("/"));
  if (slash >= 0) s = s.slice(slash + 1);
  const dot = s.lastIndexOf(".");
  return dot > 0 ? s.slice(0, dot) : s;
}

export interface ProcessPayload {
  uniqueProcessKey: bigint;
  pid: number;
  parentPid: number;
  sessionId: number;
  exitStatus: number;
  directoryTableBase: bigint;
  flags: number;
  /** Offset of the SID and its size in bytes. */
  sidOffset: number;
  sidSize: number;
  imageName: string;
  commandLine: string;
  packageFullName: string;
  applicationId: string;
  /** Which fields the version has. */
  hasDirectoryTableBase: boolean;
  hasFlags: boolean;
  hasPackage: boolean;
}

/** Decodes a kernel Process event payload (versions 1 to 5); undefined when too short. */
export function readProcessPayload(b: Uint8Array, version: number, ptr: number): ProcessPayload | undefined {
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  const readPtr = (o: number) => (ptr === 8 ? v.getBigUint64(o, true) : BigInt(v.getUint32(o, true)));
  if (version < 1 || b.length < ptr + 16) return undefined;
  let o = 0;
  const uniqueProcessKey = readPtr(o);
  o += ptr;
  const pid = v.getUint32(o, true);
  const parentPid = v.getUint32(o + 4, true);
  const sessionId = v.getUint32(o + 8, true);
  const exitStatus = v.getInt32(o + 12, true);
  o += 16;
  const hasDirectoryTableBase = version >= 3;
  let directoryTableBase = 0n;
  if (hasDirectoryTableBase) {
    if (o + ptr > b.length) return undefined;
    directoryTableBase = readPtr(o);
    o += ptr;
  }
  const hasFlags = version >= 4;
  let flags = 0;
  if (hasFlags) {
    if (o + 4 > b.length) return undefined;
    flags = v.getUint32(o, true);
    o += 4;
  }
  if (o + 4 > b.length) return undefined;
  const sidOffset = o;
  let sidSize = 4;
  if (v.getUint32(o, true) !== 0) {
    const n = o + 2 * ptr + 1 < b.length ? b[o + 2 * ptr + 1] : 0;
    sidSize = 2 * ptr + 8 + 4 * n;
  }
  o += sidSize;
  if (o > b.length) return undefined;
  const [imageName, o1] = ansiz(b, o);
  const [commandLine, o2] = utf16z(b, o1);
  const hasPackage = version >= 4;
  let packageFullName = "";
  let applicationId = "";
  if (hasPackage) {
    const [p, o3] = utf16z(b, o2);
    packageFullName = p;
    applicationId = utf16z(b, o3)[0];
  }
  return {
    uniqueProcessKey,
    pid,
    parentPid,
    sessionId,
    exitStatus,
    directoryTableBase,
    flags,
    sidOffset,
    sidSize,
    imageName,
    commandLine,
    packageFullName,
    applicationId,
    hasDirectoryTableBase,
    hasFlags,
    hasPackage,
  };
}

/** A kernel Process or Thread event, as much of it as the tables need. */
interface LifeEvent {
  ts: bigint;
  processor: number;
  row: number;
  opcode: number;
  /** Process events: the payload; Thread events: undefined. */
  process?: ProcessPayload;
  pid: number;
  tid: number;
}

/** Microsoft-DotNETCore-EventPipe, whose ProcessInfo (id 1) names an EventPipe file's process. */
export const EVENTPIPE_PROVIDER = "92f528a6-f5b8-5160-a7ee-b33da7739e29";

/**
 * An EventPipe file's ProcessInfo as a rundown of its process, as TraceLog names it: the image is the
 * CommandLine's first word (quotes removed), and the name holds for every event of the process.
 */
function processInfo(row: EventRow, firstRow: number): LifeEvent {
  const commandLine = utf16z(row.payload, 0)[0];
  const first = commandLine.trimStart();
  const imageName = first.startsWith('"') ? first.slice(1, first.indexOf('"', 1) < 0 ? undefined : first.indexOf('"', 1)) : first.split(" ")[0];
  const pid = row.pid ?? 0;
  return {
    ts: row.timestamp,
    processor: row.processor,
    row: firstRow + row.index,
    opcode: 3,
    pid,
    tid: 0,
    process: {
      uniqueProcessKey: 0n,
      pid,
      parentPid: 0,
      sessionId: 0,
      exitStatus: 0,
      directoryTableBase: 0n,
      flags: 0,
      sidOffset: 0,
      sidSize: 0,
      imageName,
      commandLine,
      packageFullName: "",
      applicationId: "",
      hasDirectoryTableBase: false,
      hasFlags: false,
      hasPackage: false,
    },
  };
}

const OTHER = 0,
  PROCESS_INFO = 1,
  KERNEL = 2;

/**
 * The rows of `events` from the Process and Thread providers (and EventPipe's ProcessInfo), in file
 * order: the event types are tested, not the rows (a row without a type is tested by its provider).
 */
function lifeRows(events: EventTable, providers: Source["providers"]): Uint32Array {
  const kinds = new Uint8Array(providers.length);
  let any = false;
  for (let p = 0; p < providers.length; p++) {
    const info = providers.get(p);
    kinds[p] =
      info.guid === EVENTPIPE_PROVIDER
        ? PROCESS_INFO
        : info.name === "Windows Kernel" && (info.group === "Process" || info.group === "Thread")
          ? KERNEL
          : OTHER;
    any ||= kinds[p] !== OTHER;
  }
  if (!any) return new Uint32Array(0);
  const typeProvider = events.typeValues().provider;
  const typePass = new Uint8Array(typeProvider.length);
  for (let t = 0; t < typePass.length; t++) typePass[t] = kinds[typeProvider[t]] !== OTHER ? 1 : 0;
  const types = events.columns.eventType;
  const out: number[] = [];
  for (let i = 0; i < events.length; i++) {
    const t = types[i];
    if (t < typePass.length ? typePass[t] === 1 : kinds[events.typeFieldOf("provider", i)] !== OTHER) out.push(i);
  }
  return Uint32Array.from(out);
}

/** The Process and Thread events among `rows` of `events` (row `index + firstRow` of the trace), in the order given. */
function lifeEvents(events: EventTable, rows: Uint32Array, providers: Source["providers"], firstRow: number, out: LifeEvent[]): void {
  const row = new EventRow(events, -1);
  for (let k = 0; k < rows.length; k++) {
    row.index = rows[k];
    const p = providers.get(row.providerIndex);
    if (p.guid === EVENTPIPE_PROVIDER && row.eventId === 1) {
      out.push(processInfo(row, firstRow));
      continue;
    }
    if (p.name !== "Windows Kernel" || (p.group !== "Process" && p.group !== "Thread")) continue;
    const op = row.opcode;
    if (op < 1 || op > 4) continue;
    const e = { ts: row.timestamp, processor: row.processor, row: firstRow + row.index, opcode: op, pid: 0, tid: 0 } as LifeEvent;
    if (p.group === "Process") {
      const pl = readProcessPayload(row.payload, row.version, row.pointerSize);
      if (!pl) continue;
      e.process = pl;
      e.pid = pl.pid;
    } else {
      if (row.payload.length < 8) continue;
      const v = new DataView(row.payload.buffer, row.payload.byteOffset, 8);
      e.pid = v.getUint32(0, true);
      e.tid = v.getUint32(4, true);
    }
    out.push(e);
  }
}

/** Builds the process and thread tables of a trace (one pass over its kernel Process and Thread events). */
export function buildProcessTable(trace: Source): ProcessTable {
  const events: LifeEvent[] = [];
  // (the few rows of those providers put in time order, not the trace's whole order walked)
  lifeEvents(trace.events, trace.events.timeOrderOf(lifeRows(trace.events, trace.providers)), trace.providers, 0, events);
  return tableOf(events);
}

/** A decode-time filter that keeps just what the process and thread tables read (for a pass of their own). */
export const PROCESS_EVENTS = { provider: ["Windows Kernel/Process", "Windows Kernel/Thread"] };

/**
 * The process and thread tables of a stream, from its batches: `scan` each batch (while it is
 * held; the few fields needed are kept), then `result()`. Equals the whole trace's `processes`.
 */
export class ProcessCollector {
  private readonly events: LifeEvent[] = [];

  scan(batch: Source, firstRow: number): void {
    lifeEvents(batch.events, lifeRows(batch.events, batch.providers), batch.providers, firstRow, this.events);
  }

  result(): ProcessTable {
    // time order, as the trace's byTime(): timestamp, processor, row
    this.events.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.processor - b.processor || a.row - b.row));
    return tableOf(this.events);
  }
}

/** The tables from the Process and Thread events in time order. */
function tableOf(events: LifeEvent[]): ProcessTable {
  const processes: ProcessInfo[] = [];
  const threads: ThreadInfo[] = [];
  const openProcess = new Map<number, ProcessInfo>();
  const openThread = new Map<number, ThreadInfo>();
  for (const { ts, opcode: op, process: pl, pid, tid } of events) {
    if (pl) {
      if (op === 1 || op === 3) {
        const existing = openProcess.get(pl.pid);
        if (op === 3 && existing && existing.imageName === pl.imageName) continue; // rundown of a known process
        const info: ProcessInfo = {
          pid: pl.pid,
          parentPid: pl.parentPid,
          imageName: pl.imageName,
          commandLine: pl.commandLine,
          start: op === 1 ? ts : null,
          end: null,
          name: shortProcessName(pl.imageName),
        };
        processes.push(info);
        openProcess.set(pl.pid, info);
      } else {
        let info = openProcess.get(pl.pid);
        if (!info || info.imageName !== pl.imageName) {
          // an end without a start: the process ran before the trace
          info = {
            pid: pl.pid,
            parentPid: pl.parentPid,
            imageName: pl.imageName,
            commandLine: pl.commandLine,
            start: null,
            end: null,
            name: shortProcessName(pl.imageName),
          };
          processes.push(info);
        }
        if (!info.commandLine) info.commandLine = pl.commandLine;
        if (op === 2) info.end = ts;
        openProcess.delete(pl.pid);
      }
    } else {
      if (op === 1 || op === 3) {
        const existing = openThread.get(tid);
        if (op === 3 && existing && existing.pid === pid) continue;
        const info: ThreadInfo = { tid, pid, start: op === 1 ? ts : null, end: null };
        threads.push(info);
        openThread.set(tid, info);
      } else {
        let info = openThread.get(tid);
        if (!info || info.pid !== pid) {
          info = { tid, pid, start: null, end: null };
          threads.push(info);
        }
        if (op === 2) info.end = ts;
        openThread.delete(tid);
      }
    }
  }
  const byPid = groupBy(processes, (x) => x.pid);
  const byTid = groupBy(threads, (x) => x.tid);
  for (const m of [byPid, byTid] as Map<number, { start: bigint | null }[]>[]) {
    for (const list of m.values())
      list.sort((a, b) => (a.start === null ? (b.start === null ? 0 : -1) : b.start === null ? 1 : a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  }

  const processAt = (pid: number, ts: bigint): ProcessInfo | undefined => pick(byPid.get(pid), ts);
  return {
    processes,
    threads,
    processAt,
    processName(pid: number, ts: bigint): string {
      if (pid === -1 || pid === 0xffffffff) return "";
      const info = processAt(pid, ts);
      return info ? info.name : `Process(${pid})`;
    },
    processSpan(pid: number, ts: bigint): { name: string; from: bigint | null; to: bigint | null } {
      if (pid === -1 || pid === 0xffffffff) return { name: "", from: null, to: null };
      const list = byPid.get(pid);
      if (!list) return { name: `Process(${pid})`, from: null, to: null };
      // (as pick: the last entry started by `ts`, in a list sorted by start, null first; the next starts after `ts`)
      let j = -1;
      for (let k = 0; k < list.length; k++) if (list[k].start === null || list[k].start! <= ts) j = k;
      const to = j + 1 < list.length ? list[j + 1].start : null;
      return j < 0 ? { name: `Process(${pid})`, from: null, to } : { name: list[j].name, from: list[j].start, to };
    },
    fixedName(pid: number): string | undefined {
      if (pid === -1 || pid === 0xffffffff) return "";
      const list = byPid.get(pid);
      if (!list) return `Process(${pid})`;
      return list.length === 1 && list[0].start === null ? list[0].name : undefined;
    },
    threadProcess(tid: number, ts: bigint): number | undefined {
      return pick(byTid.get(tid), ts)?.pid;
    },
    fixedThreadProcess(tid: number): { pid: number | undefined } | undefined {
      const list = byTid.get(tid);
      if (!list) return { pid: undefined };
      return list.length === 1 && list[0].start === null ? { pid: list[0].pid } : undefined;
    },
  };
}

function groupBy<T>(list: T[], key: (x: T) => number): Map<number, T[]> {
  const m = new Map<number, T[]>();
  for (const x of list) {
    const k = key(x);
    const l = m.get(k);
    if (l) l.push(x);
    else m.set(k, [x]);
  }
  return m;
}

/**
 * The entry in effect at `ts`: the last one started at or before `ts` (entries seen only in rundowns
 * count as started at the beginning of the trace). Entries that ended before `ts` still answer, as
 * PerfView keeps attributing late events to the last process with the id.
 */
function pick<T extends { start: bigint | null }>(list: T[] | undefined, ts: bigint): T | undefined {
  if (!list) return undefined;
  let best: T | undefined;
  for (const x of list) {
    if (x.start === null || x.start <= ts) best = x;
  }
  return best;
}
