// Event names as TraceEvent (PerfView) prints them: Provider/Task[/Opcode].
//
// Sources, in order: TraceEvent's own names for the .NET runtime providers (the generated schema), the
// classic kernel groups and KernelTraceControl; the descriptions the trace carries itself (EventSource
// manifests and KernelTraceControl's TDH metadata, see trace-manifests.ts); TraceLogging names; and
// TraceEvent's fallbacks (Opcode(n), EventID(n)).

import * as C from "../../assembly/codes.js";
import type { EventRow, EventTable } from "../tables/event-table.js";
import type { EventTypeTable } from "../tables/event-types.js";
import type { ProviderInfo, ProviderTable } from "../tables/provider-table.js";
import type { ClrEventSchema } from "../schema/clr-schema-types.js";
import { clrProviderIndex, findClrEvent } from "../schema/clr-payload.js";
import { extItemBytes } from "../decode/result/trace-data.js";
import { ManifestCollector, traceManifests, type TraceManifests } from "./trace-manifests.js";

/** Provider name TraceEvent uses for classic kernel events its kernel parser does not know (the OS's MOF). */
export const MOF_PROVIDER = "MSNT_SystemTrace";

/** TraceEvent's task name of a kernel group where it differs from the group name. */
const KERNEL_TASK: Record<string, string> = { PageFault: "Memory", SplitIO: "SplitIo", Lost_Event: "LostEvent" };

/** Events TraceEvent files under another task than their group's (same task GUID, own task name). */
const KERNEL_TASK_BY_OPCODE: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  Thread: { 50: "Dispatcher" }, // ReadyThreadTaskGuid is the Thread GUID
  PageFault: { 98: "VirtualMem", 99: "VirtualMem" }, // VirtualAllocTaskGuid is the Memory GUID
};

/** Opcode names of the classic kernel events TraceEvent's kernel parser knows, by group. */
const KERNEL_OPCODES: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  EventTrace: { 0: "", 5: "Extension", 8: "RundownComplete", 32: "EndExtension" },
  Process: { 1: "Start", 2: "Stop", 3: "DCStart", 4: "DCStop", 11: "Terminate", 32: "PerfCtr", 33: "PerfCtrRundown", 39: "Defunct" },
  Thread: {
    1: "Start",
    2: "Stop",
    3: "DCStart",
    4: "DCStop",
    36: "CSwitch",
    37: "CompCS",
    50: "ReadyThread",
    62: "Enqueue",
    63: "Dequeue",
    72: "SetName",
  },
  Image: { 2: "Unload", 3: "DCStart", 4: "DCStop", 10: "Load" },
  // (TraceEvent has no template for opcode 36; 37 is the completion routine)
  DiskIO: {
    10: "Read",
    11: "Write",
    12: "ReadInit",
    13: "WriteInit",
    14: "FlushBuffers",
    15: "FlushInit",
    34: "DriverMajorFunctionCall",
    35: "DriverMajorFunctionReturn",
    37: "DriverCompletionRoutine",
    52: "DriverCompleteRequest",
    53: "DriverCompleteRequestReturn",
  },
  // 13 and 14 are GuardMemory and HardMemory in TraceEvent's templates; 98/99 print under task VirtualMem
  PageFault: {
    10: "TransitionFault",
    11: "DemandZeroFault",
    12: "CopyOnWrite",
    13: "GuardMemory",
    14: "HardMemory",
    15: "AccessViolation",
    32: "HardFault",
    35: "InMemory",
    73: "PFMappedSectionCreate",
    76: "SessionDCStop",
    79: "PFMappedSectionDelete",
    98: "Alloc",
    99: "Free",
    100: "HeapRangeRundown",
    101: "HeapRangeCreate",
    102: "HeapRangeReserve",
    103: "HeapRangeRelease",
    104: "HeapRangeDestroy",
    105: "ImageLoadBacked",
    112: "SystemMemInfo",
    115: "InMemoryStoreFault",
    117: "InMemoryActive",
    118: "PageAccess",
    119: "PageRelease",
    120: "RangeAccess",
    121: "RangeRelease",
    122: "Combine",
    123: "KernelMemUsage",
    124: "MMStats",
    125: "ProcessMemInfo",
    126: "MemInfoSessionWS",
    127: "VirtualRotate",
    128: "VirtualAllocDCStart",
    129: "VirtualAllocDCStop",
    130: "PageAccess",
    131: "RemoveFromWS",
    132: "WSSharableRundown",
    133: "InMemoryActiveRundown",
  },
  PerfInfo: {
    34: "Mark",
    46: "Sample",
    47: "PMCSample",
    50: "ISR",
    51: "SysClEnter",
    52: "SysClExit",
    58: "DebuggerEnabled",
    66: "ThreadedDPC",
    67: "ISR",
    68: "DPC",
    69: "TimerDPC",
    72: "SetInterval",
    73: "CollectionStart",
    74: "CollectionEnd",
  },
  ALPC: { 33: "SendMessage", 34: "ReceiveMessage", 35: "WaitForReply", 36: "WaitForNewMessage", 37: "Unwait" },
  SplitIO: { 32: "VolMgr" },
  Lost_Event: { 32: "" },
  Object: { 32: "CreateHandle", 33: "CloseHandle", 34: "DuplicateHandle", 37: "TypeDCEnd", 39: "HandleDCEnd" },
  TcpIp: {
    10: "Send",
    11: "Recv",
    12: "Connect",
    13: "Disconnect",
    14: "Retransmit",
    15: "Accept",
    16: "Reconnect",
    17: "Fail",
    18: "TCPCopy",
    19: "ARPCopy",
    20: "FullACK",
    21: "PartACK",
    22: "DupACK",
    26: "SendIPV6",
    27: "RecvIPV6",
    28: "ConnectIPV6",
    29: "DisconnectIPV6",
    30: "RetransmitIPV6",
    31: "AcceptIPV6",
    32: "ReconnectIPV6",
    34: "TCPCopyIPV6",
  },
  UdpIp: { 10: "Send", 11: "Recv", 17: "Fail", 26: "SendIPV6", 27: "RecvIPV6" },
  FileIO: {
    0: "Name",
    32: "FileCreate",
    35: "FileDelete",
    36: "FileRundown",
    37: "MapFile",
    38: "UnmapFile",
    39: "MapFileDCStart",
    40: "MapFileDCStop",
    64: "Create",
    65: "Cleanup",
    66: "Close",
    67: "Read",
    68: "Write",
    69: "SetInfo",
    70: "Delete",
    71: "Rename",
    72: "DirEnum",
    73: "Flush",
    74: "QueryInfo",
    75: "FSControl",
    76: "OperationEnd",
    77: "DirNotify",
  },
  StackWalk: { 32: "Stack", 35: "KeyDelete", 36: "KeyRundown", 37: "StackKeyKernel", 38: "StackKeyUser" },
  SystemConfig: {
    10: "CPU",
    11: "PhyDisk",
    12: "LogDisk",
    13: "NIC",
    14: "Video",
    15: "Services",
    16: "Power",
    17: "Network",
    21: "IRQ",
    22: "PnP",
    23: "IDEChannel",
  },
  Registry: {
    10: "Create",
    11: "Open",
    12: "Delete",
    13: "Query",
    14: "SetValue",
    15: "DeleteValue",
    16: "QueryValue",
    17: "EnumerateKey",
    18: "EnumerateValueKey",
    19: "QueryMultipleValue",
    20: "SetInformation",
    21: "Flush",
    22: "KCBCreate",
    23: "KCBDelete",
    24: "KCBRundownBegin",
    25: "KCBRundownEnd",
    26: "Virtualize",
    27: "Close",
  },
};

/**
 * Kernel events TraceEvent leaves to the OS's MOF descriptions (RegisteredTraceEventParser asks TDH, which
 * answers from the MOF classes Windows registers), with the names those give.
 */
const MOF_NAMES: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  SystemConfig: { 25: "Platform", 28: "DPI", 33: "DeviceFamily", 34: "FlightIds", 35: "Processors" },
  Image: { 33: "KernelBase", 34: "HypercallPage" },
};

/**
 * TraceEvent's own parser of the TPL provider (TplEtwProviderTraceEventParser, TplTraceEventParser.cs: its
 * *Template methods give event id, task name, opcode, opcode name): its names come before those of the
 * EventSource manifest a trace carries. Task/Opcode, or the task alone where the opcode is Info (0).
 */
const TPL_GUID = "2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5";
const TPL_EVENTS: Readonly<Record<number, string>> = {
  1: "Loop/Start",
  2: "Loop/Stop",
  3: "Invoke/Start",
  4: "Invoke/Stop",
  5: "ForkJoin/Start",
  6: "ForkJoin/Stop",
  7: "TaskScheduled/Send",
  8: "TaskExecute/Start",
  9: "TaskExecute/Stop",
  10: "TaskWait/Send",
  11: "TaskWait/Stop",
  12: "AwaitTaskContinuationScheduled/Send",
  13: "TaskWaitContinuationComplete",
  14: "TraceOperation/Start",
  15: "TraceOperation/Stop",
  16: "TraceOperationRelation",
  17: "TraceSynchronousWork/Start",
  18: "TraceSynchronousWork/Stop",
};

/**
 * A TraceLogging event's opcode name as TDH gives it (the winmeta names, "win:" taken off by
 * RegisteredTraceEventParser); TraceEvent.EventName is then Task/Opcode with the event name as the task,
 * and the task alone for Info (0). An opcode TDH has no name for prints as TraceEvent's Opcode(n).
 */
const TDH_OPCODES: Readonly<Record<number, string>> = {
  1: "Start",
  2: "Stop",
  3: "DC_Start",
  4: "DC_Stop",
  5: "Extension",
  6: "Reply",
  7: "Resume",
  8: "Suspend",
  9: "Send",
  240: "Receive",
};

/** KernelTraceControl (merge) events: provider, task and opcode names. */
const KTC: Readonly<Record<string, { provider: string; opcodes: Readonly<Record<number, string>> }>> = {
  ImageID: {
    provider: "KernelTraceControl",
    opcodes: { 0: "", 32: "None", 36: "DbgID_RSDS", 37: "DbgID_ILRSDS", 38: "DbgPPDB", 40: "DbgDeterm", 64: "FileVersion" },
  },
  MetaData: { provider: "KernelTraceControl", opcodes: { 32: "EventInfo", 33: "EventMapInfo" } },
  SysConfig: { provider: "Windows Kernel", opcodes: { 32: "BuildInfo", 33: "SystemPaths", 34: "UnknownVolume", 35: "VolumeMapping" } },
  WinSat: { provider: "KernelTraceControl", opcodes: { 33: "WinSPR", 35: "Metrics", 37: "SystemConfig" } },
  PerfTrack: { provider: "KernelTraceControl", opcodes: {} },
};

/**
 * Microsoft-Windows-Kernel-Memory events KernelTraceEventParser has templates for, by event id: their task
 * names (the templates have no opcode name, so the event name is the task name). The parser's templates are
 * found before any description the trace carries.
 */
const KERNEL_MEMORY_GUID = "d1d93ef7-e1f2-4f45-9943-03d245fe6c00";
const KERNEL_MEMORY_EVENTS: Readonly<Record<number, string>> = { 1: "MemoryMemInfo", 2: "MemoryProcessMemInfo" };

/** .NET runtime (provider index, id) pairs TraceEvent has no template for (it names them from other metadata). */
const CLR_WITHOUT_TEMPLATE = new Set([
  ...[39, 40, 41, 42, 43, 48, 49, 158, 200, 201, 240, 241, 242, 243, 299].map((id) => `0:${id}`),
  "1:160",
  "1:161",
  ...[26, 189, 197].map((id) => `3:${id}`),
]);

/** Whether TraceEvent's built-in .NET runtime parsers have a template for (provider index, id). */
export function clrHasTemplate(provider: number, id: number): boolean {
  return provider <= 3 && !CLR_WITHOUT_TEMPLATE.has(`${provider}:${id}`);
}

/** The TraceLogging event name from an EVENT_SCHEMA_TL item (u16 size, tag bytes, then the NUL-terminated name). */
function traceLoggingName(data: Uint8Array): string | undefined {
  let p = 2;
  while (p < data.length && data[p] & 0x80) p++;
  p++;
  let end = p;
  while (end < data.length && data[end] !== 0) end++;
  return end > p && end < data.length ? new TextDecoder().decode(data.subarray(p, end)) : undefined;
}

export interface EventNameParts {
  provider: string;
  /** Task[/Opcode], or Opcode(n) / EventID(n) forms. */
  event: string;
  /** How the name was found. */
  source: "clr" | "kernel" | "mof" | "ktc" | "eventsource" | "tdh" | "tracelogging" | "manifest-data" | "unknown";
}

/** The name of a classic kernel event: [provider, event, source]. */
function kernelName(group: string, opcode: number): EventNameParts {
  const task = KERNEL_TASK_BY_OPCODE[group]?.[opcode] ?? KERNEL_TASK[group] ?? group;
  const known = KERNEL_OPCODES[group];
  if (known && opcode in known) {
    const op = known[opcode];
    return { provider: "Windows Kernel", event: op ? `${task}/${op}` : task, source: "kernel" };
  }
  const mof = MOF_NAMES[group]?.[opcode];
  return { provider: MOF_PROVIDER, event: `${task}/${mof ?? `Opcode(${opcode})`}`, source: "mof" };
}

/** What a name depends on: the event type's fields, and a record's TraceLogging name where it has one. */
interface NameKey {
  provider: ProviderInfo;
  headerType: number;
  eventId: number;
  version: number;
  opcode: number;
  clr: ClrEventSchema | undefined;
  /** The record's TraceLogging event name (from its EVENT_SCHEMA_TL item), if any. */
  traceLogging(): string | undefined;
}

function nameParts(row: EventRow): EventNameParts {
  return namePartsOf(
    {
      provider: row.table.providers.get(row.providerIndex),
      headerType: row.headerType,
      eventId: row.eventId,
      version: row.version,
      opcode: row.opcode,
      clr: row.clrSchema,
      traceLogging() {
        const schema = row.extendedItems.find((e) => e.type === 11);
        return schema && traceLoggingName(schema.data);
      },
    },
    traceManifests(row.table),
  );
}

/** The name of an event given its type (and TraceLogging name) and the descriptions the trace carries. */
function namePartsOf(row: NameKey, manifests: TraceManifests): EventNameParts {
  const provider = row.provider;
  const ht = row.headerType;
  const isEventHeader = ht === C.HT_EVENT_HEADER32 || ht === C.HT_EVENT_HEADER64;
  const clr = row.clr;
  if (clr && isEventHeader) {
    if (clrHasTemplate(clr.provider, row.eventId)) {
      const slash = clr.name.indexOf("/");
      return { provider: clr.name.slice(0, slash), event: clr.name.slice(slash + 1), source: "clr" };
    }
    const dyn = manifests.find(provider.guid, row.eventId, row.version);
    if (dyn) return { provider: dyn.provider.name || provider.name, event: dyn.event.eventName, source: "tdh" };
    const slash = clr.name.indexOf("/");
    return { provider: clr.name.slice(0, slash), event: clr.name.slice(slash + 1), source: "clr" };
  }
  if (provider.name === "Windows Kernel" && provider.group) {
    return kernelName(provider.group, row.opcode);
  }
  if (provider.name === "KernelTraceControl" || (provider.group && KTC[provider.group])) {
    const ktc = provider.group ? KTC[provider.group] : undefined;
    if (ktc) {
      const op = ktc.opcodes[row.opcode];
      const ev = op === undefined ? `${provider.group}/Opcode(${row.opcode})` : op ? `${provider.group}/${op}` : provider.group!;
      return { provider: ktc.provider, event: ev, source: "ktc" };
    }
  }
  if (provider.group && provider.kind === "kernel-group") {
    return { provider: provider.name, event: row.opcode === 0 ? provider.group : `${provider.group}/Opcode(${row.opcode})`, source: "unknown" };
  }
  if (isEventHeader) {
    const memory = provider.guid.toLowerCase() === KERNEL_MEMORY_GUID ? KERNEL_MEMORY_EVENTS[row.eventId] : undefined;
    if (memory) return { provider: "Microsoft-Windows-Kernel-Memory", event: memory, source: "kernel" };
    const tpl = provider.guid.toLowerCase() === TPL_GUID ? TPL_EVENTS[row.eventId] : undefined;
    if (tpl) return { provider: "System.Threading.Tasks.TplEventSource", event: tpl, source: "eventsource" };
    const dyn = manifests.find(provider.guid, row.eventId, row.version);
    const manifestProvider = manifests.providers.get(provider.guid)?.name;
    if (row.eventId === 0xfffe) {
      return { provider: manifestProvider || provider.name, event: "ManifestData", source: "manifest-data" };
    }
    if (dyn) return { provider: dyn.provider.name || provider.name, event: dyn.event.eventName, source: dyn.event.source };
    const tl = row.traceLogging();
    if (tl) {
      const op = row.opcode === 0 ? "" : (TDH_OPCODES[row.opcode] ?? `Opcode(${row.opcode})`);
      return { provider: provider.name, event: op ? `${tl}/${op}` : tl, source: "tracelogging" };
    }
    return { provider: manifestProvider || provider.name, event: `EventID(${row.eventId})`, source: "unknown" };
  }
  if (ht === C.HT_MESSAGE) return { provider: provider.name, event: `Message(${row.eventId})`, source: "unknown" };
  return { provider: provider.name, event: row.opcode === 0 ? "EventID(0)" : `Opcode(${row.opcode})`, source: "unknown" };
}

/** TraceEvent's name for a provider it cannot name. */
function providerFallback(parts: EventNameParts): EventNameParts {
  return /^\{[0-9a-f-]{36}\}$/.test(parts.provider) ? { ...parts, provider: `Provider(${parts.provider.slice(1, -1)})` } : parts;
}

/** Names found so far, by event type (a type's rows share provider, id, version, opcode and header type). */
const partsCache = new WeakMap<EventTable, (EventNameParts | undefined)[]>();

/** Provider, event and source of a row's name (worked out once per event type). */
export function eventNameParts(row: EventRow): EventNameParts {
  let cache = partsCache.get(row.table);
  if (!cache) partsCache.set(row.table, (cache = []));
  const type = row.table.columns.eventType[row.index];
  let parts = type === C.EVENT_TYPE_NONE ? undefined : cache[type];
  if (!parts) {
    parts = providerFallback(nameParts(row));
    // TraceLogging names live in each record, not in the type
    if (parts.source !== "tracelogging" && parts.source !== "unknown" && type !== C.EVENT_TYPE_NONE) cache[type] = parts;
  }
  return parts;
}

export function eventName(row: EventRow): string {
  const p = eventNameParts(row);
  return `${p.provider}/${p.event}`;
}

/**
 * TraceEvent names of a trace's rows by event type: each type is named once, from its first row. Rows
 * that carry their own names (TraceLogging) or that lie beyond the type table are named one by one.
 */
export class EventNames {
  private readonly byType: (string | null | undefined)[] = []; // null: named row by row

  constructor(
    readonly events: EventTable,
    readonly types: EventTypeTable,
  ) {}

  /** The name all rows of `type` share, or null when its rows are named one by one. */
  ofType(type: number): string | null {
    let name = this.byType[type];
    if (name === undefined) {
      const row = this.events.row(this.types.firstRow(type));
      const parts = eventNameParts(row);
      name = parts.source === "tracelogging" || parts.source === "unknown" ? null : `${parts.provider}/${parts.event}`;
      this.byType[type] = name;
    }
    return name;
  }

  /** The name of one row. */
  ofRow(row: number): string {
    const type = this.events.columns.eventType[row];
    return (type !== C.EVENT_TYPE_NONE && this.ofType(type)) || eventName(this.events.row(row));
  }

  /** Rows per name, most first (ties by name): counted by type, and row by row only where names vary. */
  counts(): [string, number][] {
    const out = new Map<string, number>();
    const add = (name: string, n: number) => out.set(name, (out.get(name) ?? 0) + n);
    let perRow = false;
    for (let t = 0; t < this.types.length; t++) {
      // (a batch of a stream knows the types of the batches before it too)
      if (this.types.count[t] === 0) continue;
      const name = this.ofType(t);
      if (name === null) perRow = true;
      else add(name, this.types.count[t]);
    }
    const col = this.events.columns.eventType;
    if (perRow || this.types.length === C.MAX_EVENT_TYPES) {
      for (let i = 0; i < col.length; i++) {
        const t = col[i];
        if (t === C.EVENT_TYPE_NONE || this.ofType(t) === null) add(eventName(this.events.row(i)), 1);
      }
    }
    return [...out].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }
}

/**
 * Rows per name over the batches of a stream, as EventNames.counts() gives them for the whole trace:
 * rows are counted by event type (and TraceLogging name) batch by batch, and named at the end, with
 * every description the trace carries (an EventSource manifest may come after the events it names).
 */
export class NameCounter {
  private readonly manifestsSeen = new ManifestCollector();
  private typeRows = new Float64Array(0);
  /** Rows of a type that carry a TraceLogging name, by name. */
  private readonly traceLogging = new Map<number, Map<string, number>>();
  /** Rows beyond the event type table: named one by one, with the descriptions seen so far. */
  private readonly untyped = new Map<string, number>();

  /** The trace's own descriptions of its events (EventSource manifests, TDH descriptions) seen so far. */
  get manifests(): TraceManifests {
    return this.manifestsSeen.result;
  }

  add(batch: { events: EventTable; eventTypes: EventTypeTable }): void {
    const { events, eventTypes } = batch;
    this.manifestsSeen.scan(events);
    if (this.typeRows.length < eventTypes.length) {
      const next = new Float64Array(eventTypes.length);
      next.set(this.typeRows);
      this.typeRows = next;
    }
    for (let t = 0; t < eventTypes.length; t++) this.typeRows[t] += eventTypes.count[t];
    const { ext, bytes } = events.data;
    const type = events.columns.eventType;
    let last = -1;
    for (let e = 0; e < events.data.extCount; e++) {
      // the first EVENT_SCHEMA_TL item of a row names it
      if (ext.type[e] !== 11 || ext.row[e] === last) continue;
      last = ext.row[e];
      const t = type[ext.row[e]];
      if (t === C.EVENT_TYPE_NONE) continue;
      const name = traceLoggingName(extItemBytes(events.data, bytes, e));
      if (name === undefined) continue;
      let m = this.traceLogging.get(t);
      if (!m) this.traceLogging.set(t, (m = new Map()));
      m.set(name, (m.get(name) ?? 0) + 1);
    }
    if (eventTypes.length === C.MAX_EVENT_TYPES) {
      for (let i = 0; i < type.length; i++) {
        if (type[i] === C.EVENT_TYPE_NONE) {
          const name = eventName(events.row(i));
          this.untyped.set(name, (this.untyped.get(name) ?? 0) + 1);
        }
      }
    }
  }

  /** Rows per name, most first (ties by name), for the stream's providers and event types. */
  counts(providers: ProviderTable, types: EventTypeTable): [string, number][] {
    const manifests = this.manifestsSeen.result;
    const out = new Map(this.untyped);
    const add = (name: string, n: number) => out.set(name, (out.get(name) ?? 0) + n);
    for (let t = 0; t < types.length && t < this.typeRows.length; t++) {
      const provider = providers.get(types.provider[t]);
      const headerType = types.headerType[t];
      const isEventHeader = headerType === C.HT_EVENT_HEADER32 || headerType === C.HT_EVENT_HEADER64;
      const p = isEventHeader ? clrProviderIndex(provider.guid) : -1;
      const key = {
        provider,
        headerType,
        eventId: types.eventId[t],
        version: types.version[t],
        opcode: types.opcode[t],
        clr: p >= 0 ? findClrEvent(p, types.eventId[t], types.version[t]) : undefined,
      };
      const name = (tl: string | undefined) => {
        const parts = providerFallback(namePartsOf({ ...key, traceLogging: () => tl }, manifests));
        return `${parts.provider}/${parts.event}`;
      };
      let rest = this.typeRows[t];
      for (const [tl, n] of this.traceLogging.get(t) ?? []) {
        add(name(tl), n);
        rest -= n;
      }
      if (rest > 0) add(name(undefined), rest);
    }
    return [...out].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }
}
