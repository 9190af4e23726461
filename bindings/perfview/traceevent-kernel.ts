// Classic kernel and KernelTraceControl events as TraceEvent's KernelTraceEventParser and
// SymbolTraceEventParser print them: payload names, types and order, and TraceEvent's process / thread
// fix-ups (kernel events name the process or thread in their payload, not in the record header).

import * as C from "../../assembly/codes.js";
import type { EventRow } from "../tables/event-table.js";
import type { EventNameParts } from "../naming/event-names.js";
import { enumText, filetimeText, n0, nFixed } from "./dotnet-format.js";
import { readProcessPayload, type ProcessTable } from "../tables/processes.js";
import type { EnumDef } from "./traceevent-overlay.js";
import { ansiz, utf16z } from "../tables/payload-strings.js";
import { netPayload, netProcessThread } from "./traceevent-net.js";
import { hostOffset, i32, i64, readPtr, u16, u32, u64 } from "./payload-bytes.js";
import { addr, int, long } from "./dotnet-format.js";
import {
  alpcPairs,
  diskDriverPairs,
  memoryPairs,
  objectPairs,
  pmcSamplePairs,
  splitIoPairs,
  stackWalkPairs,
  threadQueuePairs,
  type Pairs,
} from "./traceevent-kernel-more.js";

/**
 * One of TraceEvent's HistoryDictionary<string> entries lists (KernelTraceEventParserState.fileIDToName, one
 * per key): start times ascending, each name in force from its start time until the next one.
 */
interface NameHistory {
  times: bigint[];
  names: string[];
}

/** What the prepass saw, replayed in time order: a name added to the table, or an object type named. */
interface NameAdd {
  /** The event's timestamp (TimeStampQPC). */
  t: bigint;
  /** File order, for events with the same timestamp. */
  seq: number;
  /** FILE: a kernel path (a DOS path once mapped); RAW: as recorded; COPY: the registry key's name at `t`; TYPE: an object type. */
  kind: number;
  key: bigint;
  name: string;
  /** HistoryDictionary.Add's isEndRundown: a key's first entry then counts from time 0. */
  rundown: boolean;
}
const FILE = 0,
  RAW = 1,
  COPY = 2,
  TYPE = 3;

/**
 * Trace-wide kernel state, as TraceEvent's KernelTraceEventParserState keeps it: names by key and time in
 * one table (fileIDToName: file names by file key and file object, registry key names by KCB handle, object
 * names), object type names and the NT-path to DOS-path volume mappings (KernelTraceControl SysConfig events).
 *
 * The name table is TraceEvent's HistoryDictionary: TraceLog's conversion adds an entry (key, the event's
 * TimeStampQPC, name) for every FileIO Name / FileCreate / FileDelete / FileRundown (by FileKey), FileIO Create
 * (by FileObject), Registry event whose string is a key name (by KeyHandle; an empty name adds the name the
 * key has at that time, "" when none) and Object HandleDCEnd (by Object), in time order; an entry at the
 * same time as the key's last replaces its name. FileDelete, FileRundown, Registry KCBCreate (opcode 22, the
 * parser's "rundown") and HandleDCEnd are end-rundown adds: the key's first entry counts from time 0, a later
 * one from its own time. A lookup at time t (FileIDToName, ObjectToName) finds the latest entry at or before
 * t, none ("") when t is before the key's first entry.
 */
export class KernelState {
  /** fileIDToName: the name history of each key. */
  private readonly names = new Map<bigint, NameHistory>();
  /** The prepass's adds, in file order, until the table is built from them. */
  private adds: NameAdd[] = [];
  private built = false;
  /** Object type names by type number (Object TypeDCEnd events). */
  private readonly objectTypes = new Map<number, string>();
  private readonly volumes: [string, string][] = [];

  constructor(readonly processes: ProcessTable) {}

  /** Sees every non-EVENT_HEADER record once, in file order, before any line is printed. */
  prepass(row: EventRow): void {
    const p = row.table.providers.get(row.providerIndex);
    const b = row.payload;
    if (p.group === "SysConfig" && p.name === "KernelTraceControl" && row.opcode === 35) {
      const [nt, o] = utf16z(b, 0);
      const dos = utf16z(b, o)[0];
      if (nt) this.volumes.push([nt.toLowerCase(), dos]);
      return;
    }
    if (p.name !== "Windows Kernel") return;
    const ptr = row.pointerSize;
    const op = row.opcode;
    const add = (kind: number, key: bigint, name: string, rundown = false) => {
      this.adds.push({ t: row.timestamp, seq: this.adds.length, kind, key, name, rundown });
      this.built = false;
    };
    if (p.group === "Registry") {
      // every RegistryTraceData template (10-27) whose string is a key name adds KeyHandle -> KeyName; V0/V1
      // have neither (KeyHandle 0, KeyName ""); an empty name is the KeyName getter's fallback, the table's
      if (op < 10 || op > 27 || !registryNameIsKeyName(op)) return;
      const v2 = row.version >= 2;
      const key = v2 ? readPtr(b, 16, ptr) : 0n;
      const name = v2 ? utf16z(b, hostOffset(20, 1, ptr))[0] : "";
      add(name === "" && v2 ? COPY : RAW, key, name, op === 22);
      return;
    }
    if (p.group === "Object") {
      // HandleDCEnd names its object (Object -> ObjectName, end rundown), TypeDCEnd its type number
      if (op === 39) add(RAW, readPtr(b, 0, ptr), utf16z(b, hostOffset(14, 1, ptr))[0], true);
      else if (op === 37) add(TYPE, BigInt((u16(b, 0) << 16) >> 16), utf16z(b, 4)[0]);
      return;
    }
    if (p.group !== "FileIO") return;
    if (op === 64) {
      // TraceEvent also remembers the file object of each Create, for events whose file key is unnamed
      const v2 = row.version <= 2;
      const obj = v2 ? hostOffset(8, 2, ptr) : hostOffset(4, 1, ptr);
      if (b.length >= obj + ptr) add(FILE, readPtr(b, obj, ptr), utf16z(b, v2 ? hostOffset(24, 3, ptr) : hostOffset(24, 2, ptr))[0]);
      return;
    }
    if (op !== 0 && op !== 32 && op !== 35 && op !== 36) return;
    if (b.length < ptr) return;
    add(FILE, readPtr(b, 0, ptr), utf16z(b, ptr)[0], op === 35 || op === 36);
  }

  /** The name table, built once from the prepass's adds in time order (TraceLog converts in time order). */
  private build(): void {
    if (this.built) return;
    this.built = true;
    this.names.clear();
    this.objectTypes.clear();
    const adds = this.adds;
    adds.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.seq - b.seq));
    for (const a of adds) {
      switch (a.kind) {
        case FILE:
          this.addName(a.key, a.t, this.dosPath(a.name), a.rundown);
          break;
        case RAW:
          this.addName(a.key, a.t, a.name, a.rundown);
          break;
        case COPY:
          this.addName(a.key, a.t, this.lookup(a.key, a.t) ?? "", a.rundown);
          break;
        case TYPE:
          this.objectTypes.set(Number(a.key), a.name);
          break;
      }
    }
    // the adds stay (in time order) should another record come through the prepass
  }

  /** HistoryDictionary.Add (its sorted-insert walk; time-ordered adds only ever append or replace the last). */
  private addName(key: bigint, time: bigint, name: string, rundown: boolean): void {
    const h = this.names.get(key);
    if (!h) {
      this.names.set(key, { times: [rundown ? 0n : time], names: [name] });
      return;
    }
    const { times, names } = h;
    const last = times.length - 1;
    if (time >= times[last]) {
      if (time === times[last]) names[last] = name;
      else {
        times.push(time);
        names.push(name);
      }
      return;
    }
    for (let i = 0; ; i++) {
      if (time === times[i]) {
        names[i] = name;
        return;
      }
      if (i === last) {
        // (HistoryDictionary appends past the last entry before comparing times)
        times.push(time);
        names.push(name);
        return;
      }
      if (time < times[i]) {
        times.splice(i, 0, time);
        names.splice(i, 0, name);
        return;
      }
    }
  }

  /** HistoryDictionary.TryGetValue: the name of the latest entry at or before `time`, undefined when none. */
  private lookup(key: bigint, time: bigint): string | undefined {
    const h = this.names.get(key);
    if (!h) return undefined;
    const { times } = h;
    // the walk stops at the first entry later than `time`
    let lo = 0;
    let hi = times.length;
    if (times[hi - 1] <= time) lo = hi;
    else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (times[mid] <= time) lo = mid + 1;
        else hi = mid;
      }
    }
    return lo === 0 ? undefined : h.names[lo - 1];
  }

  /** A kernel (NT) path as a DOS path, through the trace's volume mappings. */
  dosPath(path: string): string {
    const lower = path.toLowerCase();
    let best: [string, string] | undefined;
    for (const m of this.volumes) if (lower.startsWith(m[0]) && (!best || m[0].length > best[0].length)) best = m;
    if (best) return best[1] + path.slice(best[0].length);
    if (lower.startsWith("\\device\\mup\\")) return "\\" + path.slice("\\Device\\Mup".length);
    if (lower.startsWith("\\device\\lanmanredirector\\")) return "\\" + path.slice("\\Device\\LanmanRedirector".length);
    if (path.startsWith("\\") && !path.startsWith("\\\\") && !lower.startsWith("\\device\\")) {
      // a path on the system volume without its drive: the drive of \SystemRoot\
      const root = this.volumes.find((m) => m[0] === "\\systemroot\\");
      if (root && /^[A-Za-z]:/.test(root[1])) return root[1].slice(0, 2) + path;
    }
    return path;
  }

  /** TraceEvent's ObjectTypeToName: the name of an object type number ("" when unknown). */
  objectTypeName(type: number): string {
    this.build();
    return this.objectTypes.get(type) ?? "";
  }

  /**
   * TraceEvent's FileIDToName(fileKey[, fileObject], time) and ObjectToName(object, time): the name `key` had
   * at `time` (an event's timestamp), else the name `object` had then, else "". File names come as DOS paths,
   * registry key and object names as recorded.
   */
  fileName(key: bigint, time: bigint, object?: bigint): string {
    this.build();
    return this.lookup(key, time) ?? (object === undefined ? undefined : this.lookup(object, time)) ?? "";
  }
}

/** Raw clock ticks as milliseconds. */
function ticksToMSec(row: EventRow, ticks: bigint): number {
  return (Number(ticks) * 1000) / Number(row.table.clock.frequency);
}

/** RegistryTraceData.NameIsKeyName: whether the event's string is a key name (else a value name). */
function registryNameIsKeyName(op: number): boolean {
  return !(op === 13 || op === 14 || op === 15 || op === 16 || op === 18 || op === 19);
}

/**
 * Where a FileIO event's FixupData reads the issuing thread (TTID) when the header has none: each template
 * moved it between version 2 and 3. MapFile and the others have none.
 */
function fileIOThreadOffset(op: number, version: number, ptr: number): number | undefined {
  const v2 = version <= 2;
  switch (op) {
    case 64:
      return v2 ? hostOffset(4, 1, ptr) : hostOffset(8, 2, ptr);
    case 65:
    case 66:
    case 73:
    case 72:
    case 77:
      return v2 ? hostOffset(4, 1, ptr) : hostOffset(12, 3, ptr);
    case 67:
    case 68:
      return v2 ? hostOffset(12, 1, ptr) : hostOffset(20, 3, ptr);
    case 69:
    case 70:
    case 71:
    case 74:
    case 75:
      return v2 ? hostOffset(4, 1, ptr) : hostOffset(16, 4, ptr);
  }
  return undefined;
}

const groupOf = (row: EventRow) => row.table.providers.get(row.providerIndex);

/** TraceEvent's ProcessID / ThreadID of a kernel event, or null when the header's apply. */
export function kernelProcessThread(row: EventRow, state: KernelState): { pid: number; tid: number } | null {
  const prov = groupOf(row);
  if (prov.name !== "Windows Kernel" || !prov.group || row.headerType === C.HT_EVENT_HEADER32 || row.headerType === C.HT_EVENT_HEADER64) {
    return null;
  }
  const b = row.payload;
  const ptr = row.pointerSize;
  const op = row.opcode;
  const hdrPid = row.pid === null ? -1 : row.pid | 0;
  const hdrTid = row.tid === null ? -1 : row.tid | 0;
  const byThread = (tid: number) => {
    const pid = state.processes.threadProcess(tid >>> 0, row.timestamp);
    return { pid: pid === undefined ? -1 : pid | 0, tid };
  };
  /** Only a missing (-1) header thread is taken from the payload (at `at`); a missing process is the thread's. */
  const threadFromPayload = (at: number) => {
    const tid = hdrTid === -1 ? i32(b, at) : hdrTid;
    return hdrPid === -1 ? byThread(tid) : { pid: hdrPid, tid };
  };
  switch (prov.group) {
    case "Process":
      if (op >= 1 && op <= 4) return { pid: i32(b, ptr), tid: -1 };
      if (op === 39) return { pid: i32(b, ptr), tid: -1 };
      if (op === 32 || op === 33) return { pid: i32(b, 0), tid: -1 };
      return null;
    case "Thread":
      // V2+ Start / DCStart / DCStop name the thread in the payload; Stop keeps the header's, V0/V1 are not fixed
      if ((op === 1 || op === 3 || op === 4) && row.version >= 2) return { pid: i32(b, 0), tid: i32(b, 4) };
      if (op === 72) return { pid: i32(b, 0), tid: i32(b, 4) };
      // ReadyThread: no fix-up; a missing (-1) header process is looked up by the header's thread
      if (op === 50) return hdrPid === -1 ? byThread(hdrTid) : { pid: hdrPid, tid: hdrTid };
      if (op === 36) {
        // CSwitch: only a missing (-1) header thread or process is filled in
        const tid = hdrTid === -1 ? i32(b, 0) : hdrTid;
        return hdrPid === -1 ? byThread(tid) : { pid: hdrPid, tid };
      }
      // Enqueue names its thread at 8, Dequeue at 0
      if (op === 62) return threadFromPayload(8);
      if (op === 63) return threadFromPayload(0);
      return null;
    case "FileIO": {
      if (op >= 37 && op <= 40) return { pid: i32(b, row.version < 3 ? hostOffset(20, 3, ptr) : hostOffset(28, 3, ptr)), tid: hdrTid };
      const at = fileIOThreadOffset(op, row.version, ptr);
      if (at === undefined) return null;
      // only a missing (-1) header thread or process is filled in: the thread from the payload, its process
      const tid = hdrTid === -1 ? i32(b, at) : hdrTid;
      return hdrPid === -1 ? byThread(tid) : { pid: hdrPid, tid };
    }
    case "Image":
      // Unload / DCStart / DCStop: no thread; the payload's process from V1 on
      if (op === 2 || op === 3 || op === 4) return { pid: row.version >= 1 ? i32(b, hostOffset(8, 2, ptr)) : hdrPid, tid: -1 };
      return null;
    case "PerfInfo":
      if (op === 46) return byThread(i32(b, ptr));
      if (op === 47) return threadFromPayload(ptr); // PMCSample
      return null;
    case "DiskIO":
      // V3 completions carry the issuing thread (FlushBuffers: TraceEvent reads it at offset 8)
      if ((op === 10 || op === 11) && b.length >= 36 + 2 * ptr) return byThread(i32(b, 24 + 2 * ptr + 8));
      if (op === 14 && row.version >= 3) return byThread(i32(b, 8));
      if (op === 10 || op === 11 || op === 14) return { pid: hdrPid, tid: hdrTid };
      return null;
    case "PageFault":
      if (op === 32) return byThread(i32(b, 16 + 2 * ptr));
      // VirtualMem Alloc / Free and HeapRangeRundown: the payload's process, the header's thread
      if (op === 98 || op === 99) return { pid: i32(b, hostOffset(8, 2, ptr)), tid: hdrTid };
      if (op === 100) return { pid: i32(b, hostOffset(8, 1, ptr)), tid: hdrTid };
      return null;
    case "StackWalk":
      // Stack and the stack-key references: a missing (-1) header thread / process from 12 / 8
      if (op === 32 || op === 37 || op === 38) return { pid: hdrPid === -1 ? i32(b, 8) : hdrPid, tid: hdrTid === -1 ? i32(b, 12) : hdrTid };
      return null;
    case "Object":
      // HandleDCEnd: TraceEvent's process is at HostOffset(8, 2) (as VirtualAlloc's), not where the process is
      // (HostOffset(4, 1)): the handle on 32-bit, the type and the name's first character on 64-bit
      if (op === 39) return { pid: i32(b, hostOffset(8, 2, ptr)), tid: hdrTid };
      return null;
    case "TcpIp":
    case "UdpIp":
      return netProcessThread(row);
    case "SystemConfig":
      // Services: FixupData gives the service's process from V2 on (older layouts keep the header's)
      if (op === 15 && row.version >= 2) return { pid: i32(b, 0), tid: hdrTid };
      return null;
  }
  return { pid: hdrPid, tid: hdrTid };
}

/** The EventTrace header record (TRACE_LOGFILE_HEADER) as TraceEvent prints it. */
function headerPairs(row: EventRow): [string, string][] {
  const b = row.payload;
  const ptr = row.pointerSize;
  const tz = 56 + 2 * ptr;
  let o = tz + 172;
  o = (o + 7) & ~7;
  const boot = i64(b, o);
  const freq = i64(b, o + 8);
  const start = i64(b, o + 16);
  const reserved = u32(b, o + 24);
  const lost = u32(b, o + 28);
  const [session, o2] = utf16z(b, o + 32);
  const [logFile] = utf16z(b, o2);
  const int = (x: number) => n0(x | 0);
  return [
    ["BufferSize", int(u32(b, 0))],
    ["Version", int(u32(b, 4))],
    ["ProviderVersion", int(u32(b, 8))],
    ["NumberOfProcessors", int(u32(b, 12))],
    ["EndTime", filetimeText(i64(b, 16))],
    ["TimerResolution", int(u32(b, 24))],
    ["MaxFileSize", int(u32(b, 28))],
    ["LogFileMode", int(u32(b, 32))],
    ["BuffersWritten", int(u32(b, 36))],
    ["StartBuffers", int(u32(b, 40))],
    ["PointerSize", int(u32(b, 44))],
    ["EventsLost", int(u32(b, 48))],
    ["CPUSpeed", int(u32(b, 52))],
    ["BootTime", filetimeText(boot)],
    ["PerfFreq", n0(freq)],
    ["StartTime", filetimeText(start)],
    ["ReservedFlags", int(reserved)],
    ["BuffersLost", int(lost)],
    ["SessionName", session],
    ["LogFileName", logFile],
    ["UtcOffsetMinutes", int(i32(b, tz))],
  ];
}

// ------------------------------------------------------------------ payload layouts

/** A sequential reader over a payload. */
class R {
  pos = 0;
  constructor(
    readonly b: Uint8Array,
    readonly ptr: number,
  ) {}
  u8(): number {
    return this.b[this.pos++] ?? 0;
  }
  u16(): number {
    const v = u16(this.b, this.pos);
    this.pos += 2;
    return v;
  }
  i32(): number {
    const v = i32(this.b, this.pos);
    this.pos += 4;
    return v;
  }
  u32(): number {
    const v = u32(this.b, this.pos);
    this.pos += 4;
    return v;
  }
  i64(): bigint {
    const v = i64(this.b, this.pos);
    this.pos += 8;
    return v;
  }
  u64(): bigint {
    const v = u64(this.b, this.pos);
    this.pos += 8;
    return v;
  }
  p(): bigint {
    const v = readPtr(this.b, this.pos, this.ptr);
    this.pos += this.ptr;
    return v;
  }
  ws(): string {
    const [s, o] = utf16z(this.b, this.pos);
    this.pos = o;
    return s;
  }
  as(): string {
    const [s, o] = ansiz(this.b, this.pos);
    this.pos = o;
    return s;
  }
  /** A NUL-terminated UTF-8 string (TraceEvent's GetUTF8StringAt). */
  u8s(): string {
    let end = this.pos;
    while (end < this.b.length && this.b[end] !== 0) end++;
    const s = new TextDecoder().decode(this.b.subarray(this.pos, end));
    this.pos = Math.min(end + 1, this.b.length);
    return s;
  }
  /** A fixed-size UTF-16 field of `chars` characters, cut at its first NUL. */
  wfixed(chars: number): string {
    let s = "";
    for (let i = 0; i < chars; i++) {
      const c = u16(this.b, this.pos + 2 * i);
      if (!c) break;
      s += String.fromCharCode(c);
    }
    this.pos += 2 * chars;
    return s;
  }
  guid(): string {
    const b = this.b,
      o = this.pos;
    this.pos += 16;
    if (o + 16 > b.length) return "00000000-0000-0000-0000-000000000000";
    const h = (i: number) => b[o + i].toString(16).padStart(2, "0");
    return `${h(3)}${h(2)}${h(1)}${h(0)}-${h(5)}${h(4)}-${h(7)}${h(6)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`;
  }
  skip(n: number): this {
    this.pos += n;
    return this;
  }
}

const bool = (v: boolean) => (v ? "True" : "False");
/** A PE TimeDateStamp (seconds since 1970, unsigned) as TraceEvent's BuildTime DateTime. */
const buildTime = (stamp: number) => filetimeText(116444736000000000n + BigInt(stamp >>> 0) * 10_000_000n);

const En = (name: string, flags: boolean, members: [number, string][]): EnumDef => ({ name, flags, members });
const PROCESS_FLAGS = En("ProcessFlags", true, [
  [0, "None"],
  [1, "PackageFullName"],
  [2, "Wow64"],
  [4, "Protected"],
]);
const IRP_FLAGS = En("IrpFlags", true, [
  [0, "None"],
  [0x1, "Nocache"],
  [0x2, "MountCompletion"],
  [0x4, "SynchronousApi"],
  [0x8, "AssociatedIrp"],
  [0x10, "BufferedIo"],
  [0x20, "DeallocateBuffer"],
  [0x40, "InputOperation"],
  [0x80, "SynchronousPagingIo"],
  [0x100, "Create"],
  [0x200, "Write"],
  [0x400, "Close"],
  [0x800, "DeferIoCompletion"],
  [0x1000, "ObQueryName"],
  [0x2000, "HoldDeviceQueue"],
  [0x4000, "RetryIoCompletion"],
  [0x8000, "ClassCacheOperation"],
]);
const IO_PRIORITY = En("IOPriority", false, [
  [0, "Notset"],
  [1, "Verylow"],
  [2, "Low"],
  [3, "Normal"],
  [4, "High"],
  [5, "Critical"],
]);
const FILE_ATTRIBUTES = En("FileAttributes", true, [
  [0x1, "FILE_ATTRIBUTE_READONLY"],
  [0x2, "FILE_ATTRIBUTE_HIDDEN"],
  [0x4, "FILE_ATTRIBUTE_SYSTEM"],
  [0x10, "FILE_ATTRIBUTE_DIRECTORY"],
  [0x20, "FILE_ATTRIBUTE_ARCHIVE"],
  [0x40, "FILE_ATTRIBUTE_DEVICE"],
  [0x80, "FILE_ATTRIBUTE_NORMAL"],
  [0x100, "FILE_ATTRIBUTE_TEMPORARY"],
  [0x200, "FILE_ATTRIBUTE_SPARSE_FILE"],
  [0x400, "FILE_ATTRIBUTE_REPARSE_POINT"],
  [0x800, "FILE_ATTRIBUTE_COMPRESSED"],
  [0x1000, "FILE_ATTRIBUTE_OFFLINE"],
  [0x2000, "FILE_ATTRIBUTE_NOT_CONTENT_INDEXED"],
  [0x4000, "FILE_ATTRIBUTE_ENCRYPTED"],
]);
const CREATE_DISPOSITION = En("CreateDisposition", false, [
  [0, "SUPERSEDE"],
  [1, "OPEN_EXISTING"],
  [2, "CREATE_NEW"],
  [3, "OPEN_ALWAYS"],
  [4, "TRUNCATE_EXISTING"],
  [5, "CREATE_ALWAYS"],
]);
const FILE_SHARE = En("FileShare", true, [
  [0, "None"],
  [1, "Read"],
  [2, "Write"],
  [3, "ReadWrite"],
  [4, "Delete"],
  [16, "Inheritable"],
]);
const en = (e: EnumDef, v: number) => enumText(v, e.members, e.flags);

// FileIOCreateTraceData's own enums (its CreateOptions are attribute names; CreateDisposition starts at 1)
const CREATE_OPTIONS = En("CreateOptions", true, [
  [0, "NONE"],
  [0x1, "FILE_ATTRIBUTE_READONLY"],
  [0x2, "FILE_ATTRIBUTE_HIDDEN"],
  [0x4, "FILE_ATTRIBUTE_SYSTEM"],
  [0x10, "FILE_ATTRIBUTE_DIRECTORY"],
  [0x20, "FILE_ATTRIBUTE_ARCHIVE"],
  [0x40, "FILE_ATTRIBUTE_DEVICE"],
  [0x80, "FILE_ATTRIBUTE_NORMAL"],
  [0x100, "FILE_ATTRIBUTE_TEMPORARY"],
  [0x200, "FILE_ATTRIBUTE_SPARSE_FILE"],
  [0x400, "FILE_ATTRIBUTE_REPARSE_POINT"],
  [0x800, "FILE_ATTRIBUTE_COMPRESSED"],
  [0x1000, "FILE_ATTRIBUTE_OFFLINE"],
  [0x2000, "FILE_ATTRIBUTE_NOT_CONTENT_INDEXED"],
  [0x4000, "FILE_ATTRIBUTE_ENCRYPTED"],
  [0x8000, "FILE_ATTRIBUTE_INTEGRITY_STREAM"],
  [0x10000, "FILE_ATTRIBUTE_VIRTUAL"],
  [0x20000, "FILE_ATTRIBUTE_NO_SCRUB_DATA"],
]);
const FILEIO_DISPOSITION = En("CreateDisposition", false, [
  [1, "CREATE_NEW"],
  [2, "CREATE_ALWAYS"],
  [3, "OPEN_EXISING"],
  [4, "OPEN_ALWAYS"],
  [5, "TRUNCATE_EXISTING"],
]);
/** System.IO.FileAttributes (no zero member: 0 prints as a number). */
const IO_FILE_ATTRIBUTES = En("FileAttributes", true, [
  [0x1, "ReadOnly"],
  [0x2, "Hidden"],
  [0x4, "System"],
  [0x10, "Directory"],
  [0x20, "Archive"],
  [0x40, "Device"],
  [0x80, "Normal"],
  [0x100, "Temporary"],
  [0x200, "SparseFile"],
  [0x400, "ReparsePoint"],
  [0x800, "Compressed"],
  [0x1000, "Offline"],
  [0x2000, "NotContentIndexed"],
  [0x4000, "Encrypted"],
  [0x8000, "IntegrityStream"],
  [0x20000, "NoScrubData"],
]);
// System.Diagnostics.ThreadWaitReason / ThreadState and CSwitchTraceData.ThreadWaitMode
const WAIT_REASON = En(
  "ThreadWaitReason",
  false,
  [
    "Executive",
    "FreePage",
    "PageIn",
    "SystemAllocation",
    "ExecutionDelay",
    "Suspended",
    "UserRequest",
    "EventPairHigh",
    "EventPairLow",
    "LpcReceive",
    "LpcReply",
    "VirtualMemory",
    "PageOut",
    "Unknown",
  ].map((n, i) => [i, n] as [number, string]),
);
const WAIT_MODE = En("ThreadWaitMode", false, [
  [0, "NonSwap"],
  [1, "Swappable"],
]);
const THREAD_STATE = En(
  "ThreadState",
  false,
  ["Initialized", "Ready", "Running", "Standby", "Terminated", "Wait", "Transition", "Unknown"].map((n, i) => [i, n] as [number, string]),
);

function processPairs(row: EventRow): Pairs | null {
  const pl = readProcessPayload(row.payload, row.version, row.pointerSize);
  if (!pl) return null;
  return [
    ["ProcessID", int(pl.pid)],
    ["ParentID", int(pl.parentPid)],
    ["ImageFileName", pl.imageName],
    ["PageDirectoryBase", addr(pl.directoryTableBase)],
    ["Flags", en(PROCESS_FLAGS, pl.flags)],
    ["SessionID", int(pl.sessionId)],
    ["ExitStatus", int(pl.exitStatus)],
    ["UniqueProcessKey", addr(pl.uniqueProcessKey)],
    ["CommandLine", pl.commandLine],
    ["PackageFullName", pl.packageFullName],
    ["ApplicationID", pl.applicationId],
  ];
}

/** ImageLoadTraceData: checksum, stamp and default base from V2 on; the name at V2's or V1's place (V0 has none). */
function imagePairs(row: EventRow, state: KernelState): Pairs {
  const b = row.payload;
  const ptr = row.pointerSize;
  const v2 = row.version >= 2;
  const size = Number(readPtr(b, hostOffset(4, 1, ptr), ptr) & 0xffffffffn); // (int)GetAddressAt
  const checksum = v2 ? i32(b, hostOffset(12, 2, ptr)) : 0;
  const stamp = v2 ? i32(b, hostOffset(16, 2, ptr)) : 0;
  const defaultBase = v2 ? readPtr(b, hostOffset(24, 2, ptr), ptr) : 0n;
  const at = v2 ? hostOffset(44, 3, ptr) : row.version >= 1 ? hostOffset(12, 2, ptr) : -1;
  const file = at < 0 ? "" : state.dosPath(utf16z(b, at)[0]);
  return [
    ["ImageBase", addr(readPtr(b, 0, ptr))],
    ["ImageSize", int(size)],
    ["ImageChecksum", int(checksum)],
    ["TimeDateStamp", int(stamp)],
    ["DefaultBase", addr(defaultBase)],
    ["BuildTime", buildTime(stamp)],
    ["FileName", file],
  ];
}

const ADJUST_REASON = En("AdjustReasonEnum", false, [
  [0, "None"],
  [1, "Unwait"],
  [2, "Boost"],
]);
const READY_THREAD_FLAGS = En("ReadyThreadFlags", true, [
  [1, "ReadiedFromDPC"],
  [2, "KernelSwappedOut"],
  [4, "ProcessSwappedOut"],
]);

/** DispatcherReadyThreadTraceData: the awakened thread and its process (looked up), the adjust bytes, the flags. */
function readyThreadPairs(row: EventRow, state: KernelState): Pairs {
  const b = row.payload;
  const tid = i32(b, 0);
  const pid = state.processes.threadProcess(tid >>> 0, row.timestamp);
  const byte = (o: number) => b[o] ?? 0;
  return [
    ["AwakenedThreadID", int(tid)],
    ["AwakenedProcessID", int(pid === undefined ? -1 : pid)],
    ["AdjustReason", en(ADJUST_REASON, byte(4))],
    ["AdjustIncrement", int(byte(5))],
    ["Flags", en(READY_THREAD_FLAGS, byte(6))],
  ];
}

/**
 * RegistryTraceData. Its Status and Index getters read nothing (they return 0), V0/V1 carry no start time (the
 * elapsed time counts from QPC 0), no handle and no key name; the string is the key name or the value name by
 * opcode, and an empty or missing key name comes from the name table (KCB and key events, file names too).
 */
function registryPairs(row: EventRow, state: KernelState): Pairs {
  const b = row.payload;
  const ptr = row.pointerSize;
  const v2 = row.version >= 2;
  const initial = v2 ? i64(b, 0) : 0n;
  const handle = v2 ? readPtr(b, 16, ptr) : 0n;
  const keyish = registryNameIsKeyName(row.opcode);
  let keyName = "";
  if (v2) {
    keyName = keyish ? utf16z(b, hostOffset(20, 1, ptr))[0] : "";
    if (keyName === "") keyName = state.fileName(handle, row.timestamp);
  }
  const valueName = keyish ? "" : utf16z(b, v2 ? hostOffset(20, 1, ptr) : hostOffset(20, 2, ptr))[0];
  return [
    ["Status", "0"],
    ["KeyHandle", addr(handle)],
    ["ElapsedTimeMSec", nFixed(ticksToMSec(row, row.timestamp - initial), 3)],
    ["KeyName", keyName],
    ["ValueName", valueName],
    ["Index", "0"],
  ];
}

/** PerfInfo's SysCall, ISR, DPC, DebuggerEnabled and Mark templates. */
function perfInfoPairs(row: EventRow, r: R): Pairs | null {
  const b = row.payload;
  const ptr = row.pointerSize;
  const op = row.opcode;
  const elapsed = () => nFixed(ticksToMSec(row, row.timestamp - i64(b, 0)), 3);
  switch (op) {
    case 51:
      return [["SysCallAddress", addr(r.p())]];
    case 52:
      return [["SysCallNtStatus", int(r.i32())]];
    case 50:
    case 67: {
      // Message only where 24 <= HostOffset(20, 1): 64-bit traces
      const byte = (o: number) => b[o] ?? 0;
      return [
        ["ElapsedTimeMSec", elapsed()],
        ["Routine", addr(readPtr(b, 8, ptr))],
        ["ReturnValue", int(byte(hostOffset(12, 1, ptr)))],
        ["Vector", int(byte(hostOffset(13, 1, ptr)))],
        ["Message", int(ptr === 8 ? i32(b, hostOffset(16, 1, ptr)) : 0)],
        ["ProcessorNumber", int(row.processor)],
      ];
    }
    case 66:
    case 68:
    case 69:
      return [
        ["ElapsedTimeMSec", elapsed()],
        ["Routine", addr(readPtr(b, 8, ptr))],
        ["ProcessorNumber", int(row.processor)],
      ];
    case 58:
      return [];
    case 34:
      return [["Value", r.as()]];
  }
  return null;
}

function threadPairs(row: EventRow, r: R): Pairs {
  const { b, ptr } = r;
  const v = row.version;
  const h = (o: number) => hostOffset(o, 7, ptr);
  // V0/V1 carry only the ids: every other field reads as zero
  const names = ["StackBase", "StackLimit", "UserStackBase", "UserStackLimit", "StartAddr", "Win32StartAddr", "TebBase"];
  const out: Pairs = names.map((n, k) => [n, addr(v >= 2 ? readPtr(b, 8 + k * ptr, ptr) : 0n)]);
  out.push(["SubProcessTag", int(v >= 2 ? i32(b, h(36)) : 0)]);
  // V3 bytes and name, each only when the payload reaches past it
  const byte = (o: number) => (v >= 3 && b.length >= h(o + 1) ? b[h(o)] : 0);
  out.push(["BasePriority", int(byte(40))], ["PagePriority", int(byte(41))], ["IoPriority", int(byte(42))], ["ThreadFlags", int(byte(43))]);
  out.push(["ThreadName", v >= 3 && b.length >= h(46) ? utf16z(b, h(44))[0] : ""]);
  // FixupData keeps the header's thread and process as the parent, for Start only (V2+)
  const start = row.opcode === 1 && v >= 2;
  out.push(["ParentThreadID", int(start && row.tid !== null ? row.tid : -1)], ["ParentProcessID", int(start && row.pid !== null ? row.pid : -1)]);
  return out;
}

/** CSwitchTraceData: the new thread is the event's own (after the fix-up); the old one's process is looked up. */
function cswitchPairs(row: EventRow, state: KernelState, pname: string): Pairs {
  const b = row.payload;
  const own = kernelProcessThread(row, state) ?? { pid: -1, tid: -1 };
  const oldTid = i32(b, 4);
  const oldPid = state.processes.threadProcess(oldTid >>> 0, row.timestamp);
  const oldPidI = oldPid === undefined ? -1 : oldPid | 0;
  const byte = (o: number) => b[o] ?? 0;
  return [
    ["OldThreadID", int(oldTid)],
    ["OldProcessID", int(oldPidI)],
    ["OldProcessName", state.processes.processName(oldPidI, row.timestamp)],
    ["NewThreadID", int(own.tid)],
    ["NewProcessID", int(own.pid)],
    ["NewProcessName", pname],
    ["ProcessorNumber", int(row.processor)],
    ["NewThreadPriority", int(byte(8))],
    ["OldThreadPriority", int(byte(9))],
    ["NewThreadQuantum", int(byte(10))],
    ["OldThreadQuantum", int(byte(11))],
    ["OldThreadWaitReason", en(WAIT_REASON, byte(12))],
    ["OldThreadWaitMode", en(WAIT_MODE, byte(13))],
    ["OldThreadState", en(THREAD_STATE, byte(14))],
    ["OldThreadWaitIdealProcessor", int(byte(15))],
    ["NewThreadWaitTime", int(i32(b, 16))],
  ];
}

/**
 * FileIO events as TraceEvent's FileIO*TraceData classes print them. Version 3 dropped the thread id that
 * followed IrpPtr in V2 (it moved after the file key), so every later field moves by one pointer.
 */
function fileIOPairs(row: EventRow, state: KernelState): Pairs | null {
  const b = row.payload;
  const ptr = row.pointerSize;
  const op = row.opcode;
  const v2 = row.version <= 2;
  const h = (o: number, n: number) => hostOffset(o, n, ptr);
  const p = (o: number) => readPtr(b, o, ptr);
  if (op === 0 || op === 32 || op === 35 || op === 36) {
    return [
      ["FileKey", addr(p(0))],
      ["FileName", state.dosPath(utf16z(b, ptr)[0])],
    ];
  }
  if (op >= 37 && op <= 40) {
    const key = p(ptr);
    return [
      ["ViewBase", addr(p(0))],
      ["FileKey", addr(key)],
      ["MiscInfo", long(i64(b, h(8, 2)))],
      ["ViewSize", addr(p(h(16, 2)))],
      ["ByteOffset", long(row.version < 3 ? 0n : i64(b, h(20, 3)))],
      ["FileName", state.fileName(key, row.timestamp)],
    ];
  }
  if (op === 76)
    return [
      ["IrpPtr", addr(p(0))],
      ["ExtraInfo", addr(p(ptr))],
      ["NtStatus", int(i32(b, h(8, 2)))],
    ];
  if (op === 64) {
    const o = v2 ? h(12, 3) : h(12, 2);
    return [
      ["IrpPtr", addr(p(0))],
      ["FileObject", addr(p(v2 ? h(8, 2) : h(4, 1)))],
      ["CreateOptions", en(CREATE_OPTIONS, u32(b, o) & 0xffffff)],
      ["CreateDispostion", en(FILEIO_DISPOSITION, b[o + 3] ?? 0)],
      ["FileAttributes", en(IO_FILE_ATTRIBUTES, i32(b, o + 4))],
      ["ShareAccess", en(FILE_SHARE, i32(b, o + 8))],
      ["FileName", state.dosPath(utf16z(b, o + 12)[0])],
    ];
  }
  if (op === 67 || op === 68) {
    const obj = p(v2 ? h(16, 2) : h(12, 1));
    const key = p(v2 ? h(20, 3) : h(16, 2));
    const o = v2 ? h(24, 4) : h(24, 3);
    return [
      ["Offset", long(i64(b, 0))],
      ["IrpPtr", addr(p(8))],
      ["FileObject", addr(obj)],
      ["FileKey", addr(key)],
      ["IoSize", int(i32(b, o))],
      ["IoFlags", int(i32(b, o + 4))],
      ["FileName", state.fileName(key, row.timestamp, obj)],
    ];
  }
  // the rest start IrpPtr, FileObject, FileKey
  const obj = p(v2 ? h(8, 2) : h(4, 1));
  const key = p(v2 ? h(12, 3) : h(8, 2));
  const head: Pairs = [
    ["IrpPtr", addr(p(0))],
    ["FileObject", addr(obj)],
    ["FileKey", addr(key)],
  ];
  if (op === 65 || op === 66 || op === 73) return [...head, ["FileName", state.fileName(key, row.timestamp, obj)]];
  if (op === 69 || op === 70 || op === 71 || op === 74 || op === 75) {
    return [
      ...head,
      ["ExtraInfo", addr(p(v2 ? h(16, 4) : h(12, 3)))],
      ["InfoClass", int(i32(b, v2 ? h(20, 5) : h(20, 4)))],
      ["FileName", state.fileName(key, row.timestamp, obj)],
    ];
  }
  if (op === 72 || op === 77) {
    const o = v2 ? h(16, 4) : h(16, 3);
    return [
      ...head,
      ["DirectoryName", state.fileName(key, row.timestamp, obj)],
      ["Length", int(i32(b, o))],
      ["InfoClass", int(i32(b, o + 4))],
      ["FileIndex", int(i32(b, o + 8))],
      ["FileName", state.dosPath(utf16z(b, o + 12)[0])],
    ];
  }
  return null;
}

function systemConfigPairs(row: EventRow, r: R, pname: string): Pairs | null {
  switch (row.opcode) {
    case 10: {
      const head: Pairs = [
        ["MHz", int(r.u32())],
        ["NumberOfProcessors", int(r.u32())],
        ["MemSize", int(r.u32())],
        ["PageSize", int(r.u32())],
        ["AllocationGranularity", int(r.u32())],
      ];
      // DomainName is 132 characters before V2, moving HyperThreadingFlag to 796
      head.push(["ComputerName", r.wfixed(256)], ["DomainName", r.wfixed(row.version >= 2 ? 134 : 132)], ["HyperThreadingFlag", addr(r.p())]);
      return head;
    }
    case 11: {
      const out: Pairs = [
        ["DiskNumber", int(r.u32())],
        ["BytesPerSector", int(r.u32())],
        ["SectorsPerTrack", int(r.u32())],
        ["TracksPerCylinder", int(r.u32())],
        ["Cylinders", long(r.u64())],
        ["SCSIPort", int(r.u32())],
        ["SCSIPath", int(r.u32())],
        ["SCSITarget", int(r.u32())],
        ["SCSILun", int(r.u32())],
        ["Manufacturer", r.wfixed(256)],
        ["PartitionCount", int(r.u32())],
      ];
      out.push(["WriteCacheEnabled", String(r.u8())]);
      r.skip(1);
      out.push(["BootDriveLetter", r.wfixed(3)], ["Spare", r.wfixed(2)]);
      return out;
    }
    case 12: {
      const out: Pairs = [
        ["StartOffset", long(r.u64())],
        ["PartitionSize", long(r.u64())],
        ["DiskNumber", int(r.u32())],
        ["Size", int(r.u32())],
        ["DriveType", int(r.u32())],
        ["DriveLetterString", r.wfixed(4)],
      ];
      r.skip(4);
      out.push(["PartitionNumber", int(r.u32())], ["SectorsPerCluster", int(r.u32())], ["BytesPerSector", int(r.u32())]);
      r.skip(4);
      out.push(["NumberOfFreeClusters", long(r.i64())], ["TotalNumberOfClusters", long(r.i64())], ["FileSystem", r.wfixed(16)], ["VolumeExt", int(r.u32())]);
      return out;
    }
    case 13: {
      if (row.version < 2) {
        // V0/V1: a 256-character description, Ipv4Index at 512, PhysicalAddrLen at 516; the rest 0 or ""
        const desc = r.wfixed(256);
        const v4 = r.u32();
        return [
          ["PhysicalAddrLen", int(r.u32())],
          ["PhysicalAddr", "0"],
          ["Ipv4Index", int(v4)],
          ["Ipv6Index", "0"],
          ["NICDescription", desc],
          ["IpAddresses", ""],
          ["DnsServerAddresses", ""],
        ];
      }
      const physical = r.u64();
      const len = r.u32();
      return [
        ["PhysicalAddrLen", int(len)],
        ["PhysicalAddr", long(physical)],
        ["Ipv4Index", int(r.u32())],
        ["Ipv6Index", int(r.u32())],
        ["NICDescription", r.ws()],
        ["IpAddresses", r.ws()],
        ["DnsServerAddresses", r.ws()],
      ];
    }
    case 14: {
      const out: Pairs = [
        ["MemorySize", int(r.u32())],
        ["XResolution", int(r.u32())],
        ["YResolution", int(r.u32())],
        ["BitsPerPixel", int(r.u32())],
        ["VRefresh", int(r.u32())],
      ];
      for (const n of ["ChipType", "DACType", "AdapterString", "BiosString", "DeviceID"]) out.push([n, r.wfixed(256)]);
      out.push(["StateFlags", int(r.u32())]);
      return out;
    }
    case 15: {
      // TraceEvent's ProcessName and ProcessID are the event's (FixupData sets the header's process from the
      // payload from V2 on); before V2 the names are fixed 34- and 256-character fields and the state and tag 0
      if (row.version < 2) {
        const name = r.wfixed(34);
        const display = r.wfixed(256);
        const hdrPid = row.pid === null ? -1 : row.pid | 0;
        return [
          ["ServiceName", name],
          ["DisplayName", display],
          ["ProcessName", pname],
          ["ProcessID", int(hdrPid)],
          ["ServiceState", "0"],
          ["SubProcessTag", "0"],
        ];
      }
      const pid = r.u32();
      const st = r.u32();
      const tag = r.u32();
      return [
        ["ServiceName", r.ws()],
        ["DisplayName", r.ws()],
        ["ProcessName", pname],
        ["ProcessID", int(pid)],
        ["ServiceState", int(st)],
        ["SubProcessTag", int(tag)],
      ];
    }
    case 16:
      return [
        ["S1", String(r.u8())],
        ["S2", String(r.u8())],
        ["S3", String(r.u8())],
        ["S4", String(r.u8())],
        ["S5", String(r.u8())],
      ];
    case 17:
      return [
        ["TcbTablePartitions", int(r.u32())],
        ["MaxHashTableSize", int(r.u32())],
        ["MaxUserPort", int(r.u32())],
        ["TcpTimedWaitDelay", int(r.u32())],
      ];
    case 21:
      // DeviceDescriptionLen at 16 and the description at 20 from V3; at 12 and 16 before
      return [
        ["IRQAffinity", long(r.u64())],
        ["IRQNum", int(r.u32())],
        ["DeviceDescriptionLen", int(r.skip(row.version >= 3 ? 4 : 0).u32())],
        ["DeviceDescription", r.ws()],
      ];
    case 22:
      if (row.version < 4) {
        // V3: three lengths, then the device id, description and friendly name (TraceEvent reads no more)
        r.skip(12);
        return [
          ["DeviceID", r.ws()],
          ["DeviceDescription", r.ws()],
          ["FriendlyName", r.ws()],
          ["PdoName", ""],
          ["ServiceName", ""],
        ];
      }
      // DeviceIDStart: 24 in V4 (ClassGuid and the filter counts), 32 from V5 (DevStatus, DevProblem)
      r.skip(row.version === 4 ? 24 : 32);
      return [
        ["DeviceID", r.ws()],
        ["DeviceDescription", r.ws()],
        ["FriendlyName", r.ws()],
        ["PdoName", r.ws()],
        ["ServiceName", r.ws()],
      ];
    case 23:
      return [
        ["TargetID", int(r.u32())],
        ["DeviceType", int(r.u32())],
        ["DeviceTimingMode", int(r.u32())],
        ["LocationInformationLen", int(r.u32())],
        ["LocationInformation", r.ws()],
      ];
  }
  return null;
}

function diskPairs(row: EventRow, r: R, state: KernelState): Pairs | null {
  const op = row.opcode;
  if (op === 12 || op === 13 || op === 15) return [["Irp", addr(r.p())]];
  const ms = (ticks: bigint) => nFixed(ticksToMSec(row, ticks), 3);
  if (op === 14) {
    const disk = r.u32();
    const flags = r.u32();
    const ticks = r.u64();
    return [
      ["DiskNumber", int(disk)],
      ["IrpFlags", en(IRP_FLAGS, flags & 0x1ffff)],
      ["Irp", addr(r.p())],
      ["ElapsedTimeMSec", ms(ticks)],
    ];
  }
  if (op !== 10 && op !== 11) return null;
  const disk = r.u32();
  const flags = r.u32();
  const size = r.u32();
  r.skip(4);
  const offset = r.i64();
  const fileKey = r.p();
  const irp = r.p();
  const ticks = r.u64();
  const elapsed = ticksToMSec(row, ticks);
  return [
    ["DiskNumber", int(disk)],
    ["IrpFlags", en(IRP_FLAGS, flags & 0x1ffff)],
    ["Priority", en(IO_PRIORITY, (flags >>> 17) & 7)],
    ["TransferSize", int(size)],
    ["ByteOffset", long(offset)],
    ["Irp", addr(irp)],
    ["ElapsedTimeMSec", nFixed(elapsed, 3)],
    ["DiskServiceTimeMSec", nFixed(diskServiceTimeMSec(row, elapsed), 3)],
    ["FileKey", addr(fileKey)],
    ["FileName", state.fileName(fileKey, row.timestamp)],
  ];
}

/**
 * DiskIOTraceData.DiskServiceTimeMSec: Min(ElapsedTimeMSec, time - the last completion on the same disk
 * found in the parser state's diskEventTimeStamp). That table is always empty in TraceEvent: the
 * property returns its GrowableArray, a struct, by value, so the parser's Add goes to a copy and its
 * Count stays 0 (KernelTraceEventParser.cs, KernelTraceEventParserState.diskEventTimeStamp). The last
 * completion is then 0, the trace start: Min(ElapsedTimeMSec, TimeStampRelativeMSec).
 */
function diskServiceTimeMSec(row: EventRow, elapsedMSec: number): number {
  return Math.min(elapsedMSec, row.relativeMSec);
}

function ktcPairs(row: EventRow, r: R): Pairs | null {
  const group = groupOf(row).group;
  const op = row.opcode;
  if (group === "ImageID") {
    if (op === 0) {
      // ImageIDTraceData: ImageSize is pointer-sized (GetIntPtrAt), TimeDateStamp at HostOffset(12, 2); the
      // ProcessID slot (HostOffset(8, 2)) is skipped and printed as the literal 0 PayloadValue returns
      const base = r.p();
      const size = row.pointerSize === 8 ? r.i64() : r.i32();
      r.skip(4);
      const stamp = r.i32();
      return [
        ["ImageBase", addr(base)],
        ["ImageSize", long(size)],
        ["ProcessID", "0"],
        ["TimeDateStamp", int(stamp)],
        ["BuildTime", buildTime(stamp)],
        ["OriginalFileName", r.ws()],
      ];
    }
    if (op === 36 || op === 37) {
      // DbgIDRSDSTraceData / DbgIDILRSDSTraceData: the process id (HostOffset(4, 1)) is not printed; the PDB name is UTF-8
      const base = r.p();
      r.skip(4);
      return [
        ["ImageBase", addr(base)],
        ["GuidSig", r.guid()],
        ["Age", int(r.u32())],
        ["PDBFileName", r.u8s()],
      ];
    }
    if (op === 38) {
      // DbgPPDBTraceData: TimeDateStamp at HostOffset(8, 1), MajorVersion and MinorVersion bytes at HostOffset(12, 1) and (14, 1)
      const base = r.p();
      r.skip(4);
      const stamp = r.i32();
      const major = r.u8();
      r.skip(1);
      return [
        ["ImageBase", addr(base)],
        ["TimeDateStamp", int(stamp)],
        ["MajorVersion", int(major)],
        ["MinorVersion", int(r.u8())],
      ];
    }
    if (op === 40) return [["ImageBase", addr(r.p())]]; // DbgDetermTraceData
    if (op === 64) {
      const size = r.u32();
      const stamp = r.i32();
      const out: Pairs = [
        ["ImageSize", int(size)],
        ["TimeDateStamp", int(stamp)],
        ["BuildTime", buildTime(stamp)],
      ];
      for (const n of [
        "OrigFileName",
        "FileDescription",
        "FileVersion",
        "BinFileVersion",
        "VerLanguage",
        "ProductName",
        "CompanyName",
        "ProductVersion",
        "FileId",
        "ProgramId",
      ])
        out.push([n, r.ws()]);
      return out;
    }
    return [];
  }
  // MetaData's EmptyTraceData and WinSat's WinSatXmlTraceData (its XML is in ToXml only) print no fields
  if (group === "MetaData") return [];
  if (group === "WinSat") return op === 33 || op === 35 || op === 37 ? [] : null;
  if (group === "SysConfig") {
    switch (op) {
      case 32: {
        const install = r.i64();
        return [
          ["InstallDate", filetimeText(install)],
          ["BuildLab", r.ws()],
          ["ProductName", r.ws()],
        ];
      }
      case 33:
        return [
          ["SystemDirectory", r.ws()],
          ["SystemWindowsDirectory", r.ws()],
        ];
      case 34:
        return [["Value", r.ws()]];
      case 35:
        return [
          ["NtPath", r.ws()],
          ["DosPath", r.ws()],
        ];
    }
    return [];
  }
  return null;
}

/** Microsoft-Windows-Kernel-File Create, as TraceEvent's own parser for that provider prints it. */
export function kernelFileCreatePairs(row: EventRow, state: KernelState): Pairs {
  const r = new R(row.payload, row.pointerSize);
  const irp = r.p();
  const file = r.p();
  r.skip(4); // IssuingThreadId
  const options = r.u32();
  const attributes = r.u32();
  const share = r.u32();
  return [
    ["IrpPtr", addr(irp)],
    ["FileObject", addr(file)],
    ["CreateOptions", en(FILE_ATTRIBUTES, options & 0xffffff)],
    ["CreateDisposition", en(CREATE_DISPOSITION, options >>> 24)],
    ["FileAttributes", en(FILE_ATTRIBUTES, attributes)],
    ["ShareAccess", en(FILE_SHARE, share)],
    ["FileName", state.dosPath(r.ws())],
  ];
}

/** Payload pairs of a kernel or KernelTraceControl event; null when no layout is known. */
export function kernelPayload(row: EventRow, parts: EventNameParts, state: KernelState, pname = ""): Pairs | null {
  const prov = groupOf(row);
  const group = prov.group;
  const r = new R(row.payload, row.pointerSize);
  const op = row.opcode;
  if (parts.source === "ktc") return ktcPairs(row, r);
  if (parts.source === "mof") {
    if (group === "SystemConfig" && op === 25) {
      return [
        ["SystemManufacturer", r.ws()],
        ["SystemProductName", r.ws()],
        ["BiosDate", r.ws()],
        ["BiosVersion", r.ws()],
      ];
    }
    if (group === "Image" && op === 33) return [["ImageBase", addr(r.p())]];
    return null;
  }
  if (prov.name !== "Windows Kernel" || !group) return null;
  switch (group) {
    case "EventTrace":
      if (op === 0) return headerPairs(row);
      if (op === 5 || op === 32) {
        const out: Pairs = [];
        for (let k = 1; k <= 8; k++) out.push([`GroupMask${k}`, int(r.u32())]);
        out.push(["KernelEventVersion", int(r.u32())]);
        return out;
      }
      if (op === 8) return [];
      return null;
    case "Process":
      if ((op >= 1 && op <= 4) || op === 39) return processPairs(row);
      if (op === 32 || op === 33) {
        const out: Pairs = [
          ["ProcessID", int(r.u32())],
          ["MemoryCount", int(r.u32())],
          ["HandleCount", int(r.u32())],
        ];
        r.skip(4);
        for (const n of [
          "PeakVirtualSize",
          "PeakWorkingSetSize",
          "PeakPagefileUsage",
          "QuotaPeakPagedPoolUsage",
          "QuotaPeakNonPagedPoolUsage",
          "VirtualSize",
          "WorkingSetSize",
          "PagefileUsage",
          "QuotaPagedPoolUsage",
          "QuotaNonPagedPoolUsage",
          "PrivatePageCount",
        ])
          out.push([n, long(r.p())]);
        return out;
      }
      return null;
    case "Thread":
      if (op >= 1 && op <= 4) return threadPairs(row, r);
      if (op === 72) return [["ThreadName", utf16z(row.payload, 8)[0]]];
      if (op === 36) return cswitchPairs(row, state, pname);
      if (op === 50) return readyThreadPairs(row, state);
      if (op === 62 || op === 63) return threadQueuePairs(row);
      if (op === 37) return []; // CompCS: EmptyTraceData
      return null;
    case "FileIO":
      return fileIOPairs(row, state);
    case "Image":
      if (op === 2 || op === 3 || op === 4 || op === 10) return imagePairs(row, state);
      return null;
    case "PerfInfo":
      if (op === 46) {
        const ip = r.p();
        r.skip(4);
        const count = r.u16();
        const bits = r.u8();
        const rank = r.u8();
        return [
          ["InstructionPointer", addr(ip)],
          ["ProcessorNumber", int(row.processor)],
          ["Priority", int(bits >>> 3)],
          ["ExecutingDPC", bool((bits & 1) !== 0)],
          ["ExecutingISR", bool((bits & 2) !== 0)],
          ["Rank", int(rank)],
          ["Count", int(count)],
        ];
      }
      if (op === 73 || op === 74 || op === 72) {
        return [
          ["SampleSource", int(r.u32())],
          ["NewInterval", int(r.u32())],
          ["OldInterval", int(r.u32())],
        ];
      }
      if (op === 47) return pmcSamplePairs(row, (kernelProcessThread(row, state) ?? { tid: -1 }).tid);
      return perfInfoPairs(row, r);
    case "Registry":
      return op >= 10 && op <= 27 ? registryPairs(row, state) : null;
    case "DiskIO":
      return diskPairs(row, r, state) ?? diskDriverPairs(row);
    case "PageFault":
      if (op === 32) {
        const initial = r.i64();
        const offset = r.i64();
        const va = r.p();
        const fileKey = r.p();
        r.skip(4);
        const bytes = r.u32();
        return [
          ["ElapsedTimeMSec", nFixed(ticksToMSec(row, row.timestamp - initial), 3)],
          ["ReadOffset", long(offset)],
          ["VirtualAddress", addr(va)],
          ["FileKey", addr(fileKey)],
          ["ByteCount", int(bytes)],
          ["FileName", state.fileName(fileKey, row.timestamp)],
        ];
      }
      return memoryPairs(row, state);
    case "SplitIO":
      return splitIoPairs(row);
    case "ALPC":
      return alpcPairs(row);
    case "Object":
      return objectPairs(row, state);
    case "StackWalk":
      return stackWalkPairs(row);
    case "TcpIp":
    case "UdpIp":
      return netPayload(row);
    case "SystemConfig":
      return systemConfigPairs(row, r, pname);
  }
  return null;
}
