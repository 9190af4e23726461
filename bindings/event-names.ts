// Event names as TraceEvent prints them: Provider/Task[/Opcode].

import * as C from "../assembly/codes.js";
import type { EventRow } from "./event-table.js";

/** Opcode names TraceEvent uses for classic kernel events. */
const KERNEL_OPCODES: Record<number, string> = { 1: "Start", 2: "Stop", 3: "DCStart", 4: "DCStop", 10: "Load" };

/** The TraceLogging event name from an EVENT_SCHEMA_TL item (u16 size, tag bytes, then the NUL-terminated name). */
export function traceLoggingName(data: Uint8Array): string | undefined {
  let p = 2;
  while (p < data.length && data[p] & 0x80) p++;
  p++;
  let end = p;
  while (end < data.length && data[end] !== 0) end++;
  return end > p && end < data.length ? new TextDecoder().decode(data.subarray(p, end)) : undefined;
}

export function eventName(row: EventRow): string {
  const clr = row.clrSchema;
  if (clr) return clr.name;
  const provider = row.table.providers.get(row.providerIndex);
  const ht = row.headerType;
  if (provider.kind === "kernel-group" || provider.group) {
    const base = `${provider.name}/${provider.group ?? "Unknown"}`;
    if (row.opcode === 0) return base;
    return `${base}/${KERNEL_OPCODES[row.opcode] ?? `Opcode(${row.opcode})`}`;
  }
  if (ht === C.HT_EVENT_HEADER32 || ht === C.HT_EVENT_HEADER64) {
    const schema = row.extendedItems.find((e) => e.type === 11);
    const tl = schema && traceLoggingName(schema.data);
    if (tl) return `${provider.name}/${tl}`;
    return `${provider.name}/EventID(${row.eventId})`;
  }
  if (ht === C.HT_MESSAGE) return `${provider.name}/Message(${row.eventId})`;
  return row.opcode === 0 ? provider.name : `${provider.name}/Opcode(${row.opcode})`;
}
