// The event table as exported: one row per record, straight from the decoder's columns (names,
// process names and GUIDs through per-batch dictionaries; no object per row).

import * as C from "../../assembly/codes.js";
import type { Trace } from "../trace.js";
import type { ProcessTable } from "../tables/processes.js";
import { formatGuid } from "../schema/guid.js";
import { DictionaryBuilder, halvesOf, pick, setInt64, type ExportBatch, type ExportField } from "./columns.js";

export const EVENT_FIELDS: readonly ExportField[] = [
  { name: "row", type: "uint32", nullable: false },
  { name: "headerType", type: "uint8", nullable: false },
  { name: "provider", type: "utf8", nullable: false },
  { name: "providerName", type: "utf8", nullable: false },
  { name: "eventName", type: "utf8", nullable: false },
  { name: "eventId", type: "uint16", nullable: false },
  { name: "version", type: "uint16", nullable: false },
  { name: "opcode", type: "uint8", nullable: false },
  { name: "level", type: "uint8", nullable: false },
  { name: "task", type: "uint16", nullable: false },
  { name: "keywords", type: "uint64", nullable: false },
  { name: "pid", type: "uint32", nullable: true },
  { name: "tid", type: "uint32", nullable: true },
  { name: "processor", type: "uint16", nullable: false },
  { name: "timestamp", type: "int64", nullable: false },
  { name: "time", type: "timestamp", nullable: false },
  { name: "relativeMSec", type: "float64", nullable: false },
  { name: "payloadLength", type: "uint16", nullable: false },
  { name: "processName", type: "utf8", nullable: false },
  { name: "activityId", type: "utf8", nullable: true },
];

/** The field that names each row's file, when several files go into one table. */
export const SOURCE_FILE_FIELD: ExportField = { name: "sourceFile", type: "utf8", nullable: false };

const FILETIME_UNIX_EPOCH_US = 11644473600000000;

/** What rows of a trace or batch need from beyond it. */
export interface EventContext {
  /** Index in the whole trace of `trace`'s row 0 (a batch's firstRow). */
  firstRow: number;
  /** The processes, for PerfView's process names (default: the trace's own process table). */
  processes?: ProcessTable;
}

/**
 * Microseconds since 1970 (UTC) of the raw timestamps at `rows` (every one when null) of `ts` (an
 * int64 column's 32-bit halves), into the int64 halves `out` (exact to a microsecond or so; no BigInt per row).
 */
export function microsecondsInto(trace: Trace, ts: Uint32Array, rows: Uint32Array | null, out: Uint32Array): void {
  const clock = trace.clock;
  const base = Number(clock.startFiletime) / 10 - FILETIME_UNIX_EPOCH_US;
  const hi0 = Number(BigInt.asUintN(64, clock.anchor) >> 32n) | 0, lo0 = Number(BigInt.asUintN(32, clock.anchor));
  const perTick = 1e6 / Number(clock.frequency);
  const n = out.length >>> 1;
  for (let i = 0; i < n; i++) {
    const r = rows ? rows[i] : i;
    setInt64(out, i, Math.floor(base + ((ts[2 * r + 1] | 0) - hi0) * 4294967296 * perTick + (ts[2 * r] - lo0) * perTick));
  }
}

/** Rows `rows` of `trace` (every row when null), as the events table exports them. */
export function eventBatch(trace: Trace, rows: Uint32Array | null, ctx: EventContext): ExportBatch {
  const e = trace.events;
  const c = e.columns;
  // (each column once: a property read per row of the columns object cost more than the row's work)
  const cProvider = c.provider, cEventType = c.eventType, cFlags = c.flags, cHeaderType = c.headerType;
  const cPayloadOffset = c.payloadOffset, cHeaderLength = c.headerLength;
  const n = rows ? rows.length : e.length;
  const at = (i: number) => (rows ? rows[i] : i);
  const rowIndex = new Uint32Array(n);
  for (let i = 0; i < n; i++) rowIndex[i] = ctx.firstRow + at(i);

  // providers and names: by provider index and by event type, each named once
  const provider = new DictionaryBuilder(n), providerName = new DictionaryBuilder(n), eventName = new DictionaryBuilder(n);
  const provKey = new Int32Array(trace.providers.length).fill(-1);
  const provNameKey = new Int32Array(trace.providers.length);
  const typeKey = new Int32Array(trace.eventTypes.length).fill(-1);
  const names = trace.names;
  for (let i = 0; i < n; i++) {
    const r = at(i);
    const p = cProvider[r];
    if (provKey[p] < 0) {
      const info = trace.providers.get(p);
      provKey[p] = provider.key(info.guid);
      provNameKey[p] = providerName.key(info.name);
    }
    provider.keys[i] = provKey[p];
    providerName.keys[i] = provNameKey[p];
    const t = cEventType[r];
    if (t < typeKey.length && typeKey[t] >= 0) eventName.keys[i] = typeKey[t];
    else {
      const byType = t < typeKey.length ? names.ofType(t) : null;
      const k = eventName.key(byType ?? names.ofRow(r));
      if (byType !== null) typeKey[t] = k;
      eventName.keys[i] = k;
    }
  }

  // pid and tid: null where the header has none
  const pid = pick(c.pid, rows), tid = pick(c.tid, rows);
  let valid: Uint8Array | undefined;
  for (let i = 0; i < n; i++) {
    if (cFlags[at(i)] & C.F_NO_PROCESS_INFO) (valid ??= new Uint8Array(n).fill(1))[i] = 0;
  }

  // time: microseconds since 1970 UTC, and PerfView's relative milliseconds
  const timestamp = pick(c.timestamp, rows);
  const halves = halvesOf(timestamp);
  const time = new BigInt64Array(n);
  const timeHalves = halvesOf(time);
  const relative = new Float64Array(n);
  microsecondsInto(trace, halves, null, timeHalves);
  const clock = trace.clock;
  for (let i = 0; i < n; i++) relative[i] = clock.relativeMSecParts(halves[2 * i + 1] | 0, halves[2 * i]);

  // process names: a pid whose name never changes is looked up once
  const processName = new DictionaryBuilder(n);
  const processes = ctx.processes ?? trace.processes;
  const fixed = new Map<number, number>();
  const none = valid ? processName.key("") : 0;
  for (let i = 0; i < n; i++) {
    if (valid && !valid[i]) {
      processName.keys[i] = none;
      continue;
    }
    const p = pid[i];
    let k = fixed.get(p);
    if (k === undefined) {
      const name = processes.fixedName(p);
      k = name === undefined ? -1 : processName.key(name);
      fixed.set(p, k);
    }
    processName.keys[i] = k >= 0 ? k : processName.key(processes.processName(p, timestamp[i]));
  }

  // activity ids of EVENT_HEADER records (null for other headers, or without record bytes)
  const activity = new DictionaryBuilder(n);
  let zeroKey = -1;
  for (let i = 0; i < n; i++) {
    const r = at(i);
    const ht = cHeaderType[r];
    const bytes = ht === C.HT_EVENT_HEADER32 || ht === C.HT_EVENT_HEADER64 ? e.recordBytesOf(r) : null;
    if (!bytes) {
      activity.setNull(i);
      continue;
    }
    const o = cPayloadOffset[r] - cHeaderLength[r] + 0x40;
    let any = 0;
    for (let k = 0; k < 16; k++) any |= bytes[o + k];
    // (an id met before costs a hash of its bytes, not a formatted string)
    if (any) activity.keys[i] = activity.keyOfBytes(bytes, o, 16, formatGuid);
    else activity.keys[i] = zeroKey < 0 ? (zeroKey = activity.key(ZERO_GUID)) : zeroKey;
  }

  const columns = [
    { values: rowIndex },
    { values: pick(c.headerType, rows) },
    provider.column(),
    providerName.column(),
    eventName.column(),
    { values: pick(c.eventId, rows) },
    { values: pick(c.version, rows) },
    { values: pick(c.opcode, rows) },
    { values: pick(c.level, rows) },
    { values: pick(c.task, rows) },
    { values: pick(c.keywords, rows) },
    { values: pid, valid },
    { values: tid, valid },
    { values: pick(c.processor, rows) },
    { values: timestamp },
    { values: time },
    { values: relative },
    { values: pick(c.payloadLength, rows) },
    processName.column(),
    activity.column(),
  ];
  return { length: n, columns };
}

const ZERO_GUID = "00000000-0000-0000-0000-000000000000";
