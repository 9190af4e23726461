// Classic kernel and KernelTraceControl events as TraceEvent's KernelTraceEventParser and
// SymbolTraceEventParser print them: payload names, types and order, and TraceEvent's process / thread
// fix-ups (kernel events name the process or thread in their payload, not in the record header).

import * as C from "../assembly/codes.js";
import type { EventRow } from "./event-table.js";
import type { EventNameParts } from "./event-names.js";
import { enumText, filetimeText, hex8, n0, nFixed } from "./dotnet-format.js";
import { readProcessPayload, type ProcessTable } from "./processes.js";

/** Trace-wide kernel state: file names by file key/object, for events that print a FileName. */
export class KernelState {
  readonly fileNames = new Map<bigint, string>();

  constructor(readonly processes: ProcessTable) {}

  /** Sees every non-EVENT_HEADER record once, in file order, before any line is printed. */
  prepass(row: EventRow): void {
    const p = row.table.providers.get(row.providerIndex);
    if (p.name !== "Windows Kernel" || p.group !== "FileIO") return;
    const op = row.opcode;
    if (op !== 0 && op !== 32 && op !== 35 && op !== 36) return;
    const b = row.payload;
    const ptr = row.pointerSize;
    if (b.length < ptr) return;
    const key = readPtr(b, 0, ptr);
    this.fileNames.set(key, utf16z(b, ptr)[0]);
  }
}

function readPtr(b: Uint8Array, o: number, ptr: number): bigint {
  if (o + ptr > b.length) return 0n;
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  return ptr === 8 ? v.getBigUint64(o, true) : BigInt(v.getUint32(o, true));
}

function u32(b: Uint8Array, o: number): number {
  return o + 4 <= b.length ? (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0 : 0;
}
function i32(b: Uint8Array, o: number): number {
  return u32(b, o) | 0;
}
function u16(b: Uint8Array, o: number): number {
  return o + 2 <= b.length ? b[o] | (b[o + 1] << 8) : 0;
}
function i64(b: Uint8Array, o: number): bigint {
  if (o + 8 > b.length) return 0n;
  return new DataView(b.buffer, b.byteOffset, b.length).getBigInt64(o, true);
}

function utf16z(b: Uint8Array, at: number): [string, number] {
  let s = "";
  let p = at;
  while (p + 1 < b.length) {
    const c = b[p] | (b[p + 1] << 8);
    p += 2;
    if (c === 0) return [s, p];
    s += String.fromCharCode(c);
  }
  return [s, b.length];
}

function ansiz(b: Uint8Array, at: number): [string, number] {
  let s = "";
  let p = at;
  while (p < b.length && b[p] !== 0) s += String.fromCharCode(b[p++]);
  return [s, Math.min(p + 1, b.length)];
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
  switch (prov.group) {
    case "Process":
      if (op >= 1 && op <= 4) return { pid: i32(b, ptr), tid: -1 };
      if (op === 39) return { pid: i32(b, ptr), tid: -1 };
      if (op === 32 || op === 33) return { pid: i32(b, 0), tid: -1 };
      return null;
    case "Thread":
      if (op >= 1 && op <= 4) return { pid: i32(b, 0), tid: i32(b, 4) };
      return null;
    case "Image":
      if (op === 2 || op === 3 || op === 4) return { pid: i32(b, 2 * ptr), tid: -1 };
      return null;
    case "PerfInfo":
      if (op === 46) return byThread(i32(b, ptr));
      return null;
    case "DiskIO":
      if (op === 10 || op === 11) return byThread(i32(b, 32 + 2 * ptr + 8));
      return null;
    case "PageFault":
      if (op === 32) return byThread(i32(b, 16 + 2 * ptr));
      return null;
    case "TcpIp":
    case "UdpIp":
      return { pid: i32(b, 0), tid: -1 };
    case "SystemConfig":
      if (op === 15) {
        // Services: ProcessId after the three strings
        let o = 0;
        for (let k = 0; k < 3; k++) o = utf16z(b, o)[1];
        return { pid: i32(b, o), tid: hdrTid };
      }
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

/** Payload pairs of a kernel or KernelTraceControl event; null when no layout is known. */
export function kernelPayload(row: EventRow, parts: EventNameParts, state: KernelState): [string, string][] | null {
  const prov = groupOf(row);
  if (prov.name === "Windows Kernel" && prov.group === "EventTrace" && row.opcode === 0) return headerPairs(row);
  void parts;
  void state;
  void enumText;
  void hex8;
  void nFixed;
  void u16;
  void ansiz;
  void readProcessPayload;
  return null;
}
