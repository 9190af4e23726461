// Names of an EventPipe file's providers and events, as TraceEvent gives them: providers by the names
// the metadata carries; events described by their metadata by its name (a trailing Start or Stop moved
// into the opcode, then `Name/Opcode` when there is one); the sample profiler's events by the names of
// TraceEvent's SampleProfilerTraceEventParser. The .NET runtime's own events (empty metadata) keep
// their names from the runtime's schema.

import { formatGuid } from "../schema/guid.js";
import type { NettraceInfo } from "../decode/result/trace-data.js";
import { metaOf, type TraceData } from "../decode/result/trace-data.js";
import * as C from "../../assembly/codes.js";
import { setTraceManifests, TraceManifests } from "./trace-manifests.js";
import type { EventTable } from "../tables/event-table.js";
import { TC_INT32, TC_STRING, TC_ARRAY, TC_OBJECT, type NettraceField } from "../eventpipe/format.js";
import { decodeEventPipePayload } from "../schema/eventpipe-payload.js";
import type { DecodedPayload } from "../schema/clr-payload.js";

const SAMPLE_PROFILER = "Microsoft-DotNETCore-SampleProfiler";
const SAMPLE_PROFILER_EVENTS: Record<number, string> = { 0: "Thread/Sample", 1: "Thread/StackWalk" };
/** The .NET enum names TraceEvent prints opcodes with (other values as numbers). */
const OPCODES = ["Info", "Start", "Stop", "DataCollectionStart", "DataCollectionStop", "Extension", "Reply", "Resume", "Suspend", "Transfer"];

/** TraceEvent's EventName of an event its metadata names (EventPipeMetadata's transforms). */
function metadataEventName(name: string, opcode: number | undefined): string {
  let op = opcode;
  if (op === undefined) op = /start$/i.test(name) ? 1 : /stop$/i.test(name) ? 2 : 0;
  if (op === 1 && /start$/i.test(name)) name = name.slice(0, -5);
  else if (op === 2 && /stop$/i.test(name)) name = name.slice(0, -4);
  return op === 0 ? name : `${name}/${OPCODES[op] ?? op}`;
}

/** The sample profiler's fields, which its metadata leaves out (TraceEvent's ClrThreadSampleTraceData). */
const SAMPLE_FIELDS: NettraceField[] = [{ name: "Type", typeCode: TC_INT32 }];

const DIAGNOSTIC_SOURCE = "Microsoft-Diagnostics-DiagnosticSource";
const DIAGNOSTIC_SOURCE_EVENTS = new Set([
  "Event",
  "Activity1Start",
  "Activity1Stop",
  "Activity2Start",
  "Activity2Stop",
  "RecursiveActivity1Start",
  "RecursiveActivity1Stop",
]);
/** The fields TraceEvent gives DiagnosticSource events whose metadata has none (EventPipeMetadata.ApplyTransforms). */
const DIAGNOSTIC_SOURCE_FIELDS: NettraceField[] = [
  { name: "SourceName", typeCode: TC_STRING },
  { name: "EventName", typeCode: TC_STRING },
  {
    name: "Arguments",
    typeCode: TC_ARRAY,
    elementType: {
      typeCode: TC_OBJECT,
      fields: [
        { name: "Key", typeCode: TC_STRING },
        { name: "Value", typeCode: TC_STRING },
      ],
    },
  },
];

/** The field list an event's payload is read with: its metadata's, or the one TraceEvent substitutes. */
function metadataFields(m: NettraceInfo["metadata"][number]): readonly NettraceField[] {
  if (m.providerName === SAMPLE_PROFILER && m.eventId === 0) return SAMPLE_FIELDS;
  if (!m.fields.length && m.providerName === DIAGNOSTIC_SOURCE && DIAGNOSTIC_SOURCE_EVENTS.has(m.eventName)) return DIAGNOSTIC_SOURCE_FIELDS;
  return m.fields;
}

/** Decodes rows by their metadata's field lists (rows without fields decode to none). */
function describedPayload(info: NettraceInfo): (index: number, bytes: Uint8Array, offset: number, length: number) => DecodedPayload | null {
  return (index, bytes, offset, length) => {
    const mi = info.metadataOfRow[index];
    if (mi === undefined || mi < 0) return null;
    return decodeEventPipePayload(metadataFields(info.metadata[mi]), bytes, offset, length);
  };
}

/** Provider names by provider index, the event descriptions, and the payload decoder of an EventPipe trace's tables. */
export function nettraceNames(
  data: TraceData,
  info: NettraceInfo,
): {
  providers: Map<number, string>;
  /** Gives the trace's event table its event descriptions, payload decoder and activity ids. */
  describe(table: EventTable): void;
} {
  const providers = new Map<number, string>();
  const manifests = new TraceManifests();
  info.metadata.forEach((m, k) => {
    const p = info.providerOf[k];
    providers.set(p, m.providerName);
    const guid = formatGuid(metaOf(data), data.providersOffset + p * C.PROV_STRIDE + C.PROV_GUID);
    let eventName: string | undefined;
    if (m.providerName === SAMPLE_PROFILER) eventName = SAMPLE_PROFILER_EVENTS[m.eventId];
    else if (m.eventName) eventName = metadataEventName(m.eventName, m.opcode);
    if (eventName === undefined) return;
    const dp = manifests.provider(guid, m.providerName);
    let list = dp.events.get(m.eventId);
    let versions = dp.versions.get(m.eventId);
    if (!list || !versions) {
      dp.events.set(m.eventId, (list = []));
      dp.versions.set(m.eventId, (versions = []));
    }
    if (versions.includes(m.version)) return;
    list.push({ providerName: m.providerName, eventName, fields: [], source: "eventsource" });
    versions.push(m.version);
  });
  const describe = (table: EventTable) => {
    setTraceManifests(table, manifests);
    table.describedPayload = describedPayload(info);
    // (the column made when first asked for: most traces are never asked)
    table.activityIdOffset = (i) => info.activityOfRow[i];
  };
  return { providers, describe };
}
