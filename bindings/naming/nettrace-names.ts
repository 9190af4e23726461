// Names of an EventPipe file's providers and events, as TraceEvent gives them: providers by the names
// the metadata carries; events described by their metadata by its name (a trailing Start or Stop moved
// into the opcode, then `Name/Opcode` when there is one); the sample profiler's events by the names of
// TraceEvent's SampleProfilerTraceEventParser. The .NET runtime's own events (empty metadata) keep
// their names from the runtime's schema.

import { formatGuid } from "../schema/guid.js";
import type { NettraceInfo } from "../decode/nettrace-data.js";
import type { TraceData } from "../decode/trace-data.js";
import * as C from "../../assembly/codes.js";
import { TraceManifests } from "./trace-manifests.js";

const SAMPLE_PROFILER = "Microsoft-DotNETCore-SampleProfiler";
const SAMPLE_PROFILER_EVENTS: Record<number, string> = { 0: "Thread/Sample", 1: "Thread/StackWalk" };
/** The .NET enum names TraceEvent prints opcodes with (other values as numbers). */
const OPCODES = ["Info", "Start", "Stop", "DataCollectionStart", "DataCollectionStop", "Extension", "Reply", "Resume", "Suspend", "Transfer"];

/** TraceEvent's EventName of an event its metadata names (EventPipeMetadata's transforms). */
export function metadataEventName(name: string, opcode: number | undefined): string {
  let op = opcode;
  if (op === undefined) op = /start$/i.test(name) ? 1 : /stop$/i.test(name) ? 2 : 0;
  if (op === 1 && /start$/i.test(name)) name = name.slice(0, -5);
  else if (op === 2 && /stop$/i.test(name)) name = name.slice(0, -4);
  return op === 0 ? name : `${name}/${OPCODES[op] ?? op}`;
}

/** Provider names by provider index, and the event descriptions, of an EventPipe trace's tables. */
export function nettraceNames(data: TraceData, info: NettraceInfo): { providers: Map<number, string>; manifests: TraceManifests } {
  const providers = new Map<number, string>();
  const manifests = new TraceManifests();
  info.metadata.forEach((m, k) => {
    const p = info.providerOf[k];
    providers.set(p, m.providerName);
    const guid = formatGuid(data.bytes, data.providersOffset + p * C.PROV_STRIDE + C.PROV_GUID);
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
  return { providers, manifests };
}
