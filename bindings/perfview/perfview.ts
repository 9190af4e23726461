// The text PerfView's TraceEvent tests write for a trace (their *.baseline.txt files): the trace converted the
// way TraceLog converts it (bookkeeping events removed), events in time order, the first 5 of each
// Provider/Event name printed as EVENT lines with TraceEvent's payload names and formatting, then one
// COUNT line per name (ordinal order).

import * as C from "../../assembly/codes.js";
import type { EventRow, EventTable } from "../tables/event-table.js";
import { eventNameParts, MOF_PROVIDER } from "../naming/event-names.js";
import { nFixed } from "./dotnet-format.js";
import { buildProcessTable, type ProcessTable } from "../tables/processes.js";
import { payloadPairs, PayloadContext, type TraceEventEdition } from "./traceevent-payload.js";

export interface PerfViewOptions {
  /** Print the "ContainerID=" clause of events that carry a container id (newer TraceEvent). Default true. */
  containerId?: boolean;
  /**
   * Which TraceEvent release's payload names to reproduce: "current" (default) or "2020" (mid-2020, as in
   * the baseline that shipped with the net.4.5.x86 trace; some events print fewer fields).
   */
  edition?: TraceEventEdition;
  /** EVENT lines per name (MaxEventPerType of the test); default 5. */
  maxEventsPerName?: number;
}

export interface PerfViewTrace {
  events: EventTable;
  providers: { readonly length: number; get(i: number): { name: string; group?: string; guid: string } };
  info: { pointerSize: number };
}

const CLR_STACK_WALK = new Set(["0:82", "3:151"]); // runtime ClrStackWalk, private ClrStackWalk
const SAMPLE_PROFILER = "3c530d44-97ae-513a-1e6d-783e8f8e03a9"; // Microsoft-DotNETCore-SampleProfiler
const METHOD_FLAG_DYNAMIC = 1;
const METHOD_FLAG_JITTED = 8;

/** Whether TraceLog drops the event while converting (its "bookkeeping" events and idle CPU samples). */
export function isTraceLogBookkeeping(row: EventRow): boolean {
  const prov = row.table.providers.get(row.providerIndex);
  const ht = row.headerType;
  const eventHeader = ht === C.HT_EVENT_HEADER32 || ht === C.HT_EVENT_HEADER64;
  if (prov.name === "Windows Kernel" && prov.group && !eventHeader) {
    const op = row.opcode;
    switch (prov.group) {
      case "StackWalk":
        return op === 32 || op === 34 || op === 35 || op === 36 || op === 37 || op === 38;
      case "FileIO":
        return op === 0 || op === 32 || op === 35 || op === 36;
      case "Thread":
        return op === 3 || op === 4;
      case "PerfInfo":
        if (op === 46) {
          // samples on the idle thread (ThreadID 0) count only when running a DPC or an ISR
          const p = row.payload;
          const ptr = row.pointerSize;
          if (p.length < ptr + 8) return false;
          const tid = p[ptr] | (p[ptr + 1] << 8) | (p[ptr + 2] << 16) | (p[ptr + 3] << 24);
          return tid === 0 && (p[ptr + 6] & 3) === 0;
        }
        return false;
    }
    return false;
  }
  if (!eventHeader) return false;
  // EventPipe's sample profiler: the V1-era stack walk event goes onto the event before it
  if (prov.guid === SAMPLE_PROFILER && row.eventId === 1) return true;
  const clr = row.clrSchema;
  if (!clr) return false;
  const key = `${clr.provider}:${row.eventId}`;
  if (CLR_STACK_WALK.has(key)) return true;
  const methodFlags = () => {
    const f = row.get("MethodFlags");
    return typeof f === "number" ? f : 0;
  };
  if (clr.provider === 0) {
    switch (row.eventId) {
      case 190: // Method/ILToNativeMap
      case 140: // MethodDCStopVerboseV2
      case 139: // MethodDCStartVerboseV2
        return true;
      case 143: // Method/LoadVerbose: only JIT-compiled or dynamic methods stay
        return (methodFlags() & (METHOD_FLAG_DYNAMIC | METHOD_FLAG_JITTED)) === 0;
      case 144: // Method/UnloadVerbose: only JIT-compiled methods stay
        return (methodFlags() & METHOD_FLAG_JITTED) === 0;
    }
  } else if (clr.provider === 1) {
    switch (row.eventId) {
      case 144: // rundown Method/DCStopVerbose
      case 150: // rundown Method/ILToNativeMapDCStop
        return true;
      case 143: // rundown Method/DCStartVerbose
        return (methodFlags() & (METHOD_FLAG_DYNAMIC | METHOD_FLAG_JITTED)) === 0;
    }
  }
  return false;
}

/** The test's own filters on top of TraceLog's (events neither printed nor counted). */
function skippedByTest(providerName: string, eventName: string, source: string): boolean {
  if (providerName === "DotNet") return true;
  if (providerName === "Microsoft-Windows-DotNETRuntimePrivate") {
    return source !== "clr" || eventName.startsWith("EventID");
  }
  if (providerName === MOF_PROVIDER) return eventName !== "SystemConfig/Platform" && eventName !== "Image/KernelBase";
  return false;
}

/** The trace as PerfView's baseline text (EVENT lines, then COUNT lines), lines joined with "\n" plus a final "\n". */
export function formatPerfView(trace: PerfViewTrace, options: PerfViewOptions = {}): string {
  const lines: string[] = [];
  for (const line of perfViewLines(trace, options)) lines.push(line);
  return lines.length ? lines.join("\n") + "\n" : "";
}

/** The same text, line by line. */
export function* perfViewLines(trace: PerfViewTrace, options: PerfViewOptions = {}): Generator<string> {
  const max = options.maxEventsPerName ?? 5;
  const counts = new Map<string, number>();
  const processes = buildProcessTable(trace);
  const ctx = new PayloadContext(trace, processes, options.edition ?? "current");
  const order = trace.events.timeOrder();
  const row = trace.events.row(0);
  for (let k = 0; k < order.length; k++) {
    row.index = order[k];
    if (isTraceLogBookkeeping(row)) continue;
    const parts = eventNameParts(row);
    if (skippedByTest(parts.provider, parts.event, parts.source)) continue;
    const key = `${parts.provider}/${parts.event}`;
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    if (n > max) continue;
    yield eventLine(row, key, ctx, processes, options);
  }
  const keys = [...counts.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const key of keys) yield `COUNT ${key}:${counts.get(key)}`;
}

function eventLine(row: EventRow, key: string, ctx: PayloadContext, processes: ProcessTable, options: PerfViewOptions): string {
  const { pid, tid } = ctx.processThread(row);
  const pname = processes.processName(pid, row.timestamp);
  let s = `EVENT ${nFixed(row.relativeMSec, 3)}: ${key} PID=${pid}; TID=${tid}; PName=${pname}; ProceNum=${row.processor}; DataLen=${row.payloadLength}; `;
  for (const [name, value] of payloadPairs(row, ctx)) {
    let v = value.length > 20 ? value.slice(0, 20) + "..." : value;
    v = v.replace(/\n/g, "\\n").replace(/\r/g, "\\r");
    s += `${name}=${v}; `;
  }
  if (options.containerId !== false) {
    const cid = ctx.containerId(row);
    if (cid !== null) s += `ContainerID=${cid}; `;
  }
  return s;
}
