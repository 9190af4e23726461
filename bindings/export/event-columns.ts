// The event table as exported: one row per record, straight from the decoder's columns (names,
// process names and GUIDs through per-batch dictionaries; no object per row).

import * as C from "../../assembly/codes.js";
import type { Trace } from "../trace.js";
import type { ProcessTable } from "../tables/processes.js";
import { formatGuid } from "../schema/guid.js";
import { DictionaryBuilder, FRESH_ARRAYS, halvesOf, pick, setInt64, type ExportArrays, type ExportBatch, type ExportField } from "./columns.js";
import type { TypeFieldValues } from "../decode/result/trace-data.js";

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
  /** Where the batch's arrays come from (default: fresh ones). */
  arrays?: ExportArrays;
}

/**
 * Microseconds since 1970 (UTC) of the raw timestamps at `rows` (every one when null) of `ts` (an
 * int64 column's 32-bit halves), into the int64 halves `out` (exact to a microsecond or so; no BigInt per row).
 */
export function microsecondsInto(trace: Trace, ts: Uint32Array, rows: Uint32Array | null, out: Uint32Array): void {
  const clock = trace.clock;
  const base = Number(clock.startFiletime) / 10 - FILETIME_UNIX_EPOCH_US;
  const hi0 = Number(BigInt.asUintN(64, clock.anchor) >> 32n) | 0,
    lo0 = Number(BigInt.asUintN(32, clock.anchor));
  const perTick = 1e6 / Number(clock.frequency);
  const n = out.length >>> 1;
  if (rows) for (let i = 0; i < n; i++) setInt64(out, i, microsecondsAt(ts, rows[i], base, hi0, lo0, perTick));
  else for (let i = 0; i < n; i++) setInt64(out, i, microsecondsAt(ts, i, base, hi0, lo0, perTick));
}

function microsecondsAt(ts: Uint32Array, r: number, base: number, hi0: number, lo0: number, perTick: number): number {
  return Math.floor(base + ((ts[2 * r + 1] | 0) - hi0) * 4294967296 * perTick + (ts[2 * r] - lo0) * perTick);
}

// (the loops over every row are functions of their own: each is optimized after a few calls, where a
// loop in a long function called once a batch runs unoptimized until on-stack replacement)

/** out[i] = first + rows[i] (or first + i). */
function rowIndices(out: Uint32Array, rows: Uint32Array | null, first: number): void {
  if (rows) for (let i = 0; i < out.length; i++) out[i] = first + rows[i];
  else for (let i = 0; i < out.length; i++) out[i] = first + i;
}

/** present[t] = 1 for each row's event type t (rows without a type: present[none]). */
function markTypes(present: Uint8Array, eventType: Uint16Array, rows: Uint32Array | null, none: number): void {
  const n = rows ? rows.length : eventType.length;
  for (let i = 0; i < n; i++) present[Math.min(eventType[rows ? rows[i] : i], none)] = 1;
}

/** The type fields the events table exports (provider and channel are not: the provider is keyed by type). */
const EXPORTED_TYPE_FIELDS = ["eventId", "version", "opcode", "headerType", "keywords", "task", "level"] as const;
type ExportedTypeField = (typeof EXPORTED_TYPE_FIELDS)[number];
type TypeFieldColumns = Pick<TypeFieldValues, ExportedTypeField>;

/** A by-type table with one entry more, at `none`, for rows without a type (zero: they are set after). */
function withNone<T extends Uint8Array | Uint16Array | Uint32Array | Int32Array>(a: T, entries: number): T {
  const out = new (a.constructor as { new (n: number): T })(entries);
  out.set(a as never);
  return out;
}

/**
 * Each row's exported type fields and its three keys (`a`, `b`, `c`), from its event type's entries
 * (each table has an entry at `none` for rows without a type): one pass over the rows, where a pass a
 * column read the event types ten times.
 */
function byType(
  out: TypeFieldColumns,
  keywords: Uint32Array,
  a: Int32Array,
  b: Int32Array,
  c: Int32Array,
  eventType: Uint16Array,
  rows: Uint32Array | null,
  none: number,
  of: Omit<TypeFieldColumns, "keywords">,
  keywordsOf: Uint32Array,
  aOf: Int32Array,
  bOf: Int32Array,
  cOf: Int32Array,
): void {
  // (each array in a local: a property read per row cost more than the row's work)
  const { eventId, version, task, opcode, headerType, level } = out;
  const { eventId: eventIdOf, version: versionOf, task: taskOf, opcode: opcodeOf, headerType: headerTypeOf, level: levelOf } = of;
  for (let i = 0; i < a.length; i++) {
    const t = Math.min(eventType[rows ? rows[i] : i], none);
    eventId[i] = eventIdOf[t];
    version[i] = versionOf[t];
    task[i] = taskOf[t];
    opcode[i] = opcodeOf[t];
    headerType[i] = headerTypeOf[t];
    level[i] = levelOf[t];
    keywords[2 * i] = keywordsOf[2 * t];
    keywords[2 * i + 1] = keywordsOf[2 * t + 1];
    a[i] = aOf[t];
    b[i] = bOf[t];
    c[i] = cOf[t];
  }
}

/**
 * The exported type fields' columns of the rows and the keys of `keys` (provider, provider name, event
 * name by type: `aOf`, `bOf`, `cOf`, with entries at `none`), from their event types, without making the
 * table's own columns; a row without a type reads the table's fields.
 */
function typeFieldColumns(
  e: Trace["events"],
  rows: Uint32Array | null,
  arrays: ExportArrays,
  keys: [Int32Array, Int32Array, Int32Array],
  keysOf: [Int32Array, Int32Array, Int32Array],
): TypeFieldColumns {
  const n = rows ? rows.length : e.length;
  const v = e.typeValues();
  const eventType = e.columns.eventType;
  const none = v.provider.length;
  const out = {
    eventId: arrays.take(Uint16Array, n, false),
    version: arrays.take(Uint16Array, n, false),
    task: arrays.take(Uint16Array, n, false),
    opcode: arrays.take(Uint8Array, n, false),
    headerType: arrays.take(Uint8Array, n, false),
    level: arrays.take(Uint8Array, n, false),
    keywords: arrays.take(BigUint64Array, n, false),
  };
  const of = {
    eventId: withNone(v.eventId, none + 1),
    version: withNone(v.version, none + 1),
    task: withNone(v.task, none + 1),
    opcode: withNone(v.opcode, none + 1),
    headerType: withNone(v.headerType, none + 1),
    level: withNone(v.level, none + 1),
  };
  // (keywords as two 32-bit halves: no BigInt per row)
  const keywordsOf = withNone(halvesOf(v.keywords), 2 * (none + 1));
  byType(out, halvesOf(out.keywords), keys[0], keys[1], keys[2], eventType, rows, none, of, keywordsOf, keysOf[0], keysOf[1], keysOf[2]);
  if (untypedAny(eventType, rows, none)) {
    const c = e.columns;
    for (let i = 0; i < n; i++) {
      const r = rows ? rows[i] : i;
      if (eventType[r] < none) continue;
      for (const f of EXPORTED_TYPE_FIELDS) (out[f] as unknown as unknown[])[i] = c[f][r];
    }
  }
  return out;
}

function untypedAny(eventType: Uint16Array, rows: Uint32Array | null, none: number): boolean {
  const n = rows ? rows.length : eventType.length;
  for (let i = 0; i < n; i++) if (eventType[rows ? rows[i] : i] >= none) return true;
  return false;
}

/** The rows whose flags have `bit`: 0 in `valid` (made when the first comes), else 1. */
function validWithout(flags: Uint16Array, rows: Uint32Array | null, bit: number, n: number, arrays: ExportArrays): Uint8Array | undefined {
  let valid: Uint8Array | undefined;
  for (let i = 0; i < n; i++) {
    if (flags[rows ? rows[i] : i] & bit) (valid ??= arrays.take(Uint8Array, n).fill(1))[i] = 0;
  }
  return valid;
}

/** PerfView's relative milliseconds of each timestamp (int64 halves). */
function relativeInto(out: Float64Array, halves: Uint32Array, clock: Trace["clock"]): void {
  for (let i = 0; i < out.length; i++) out[i] = clock.relativeMSecParts(halves[2 * i + 1] | 0, halves[2 * i]);
}

/**
 * Process names; rows without a process get "". Each pid's name is kept with the timestamps it holds
 * for (ProcessTable.processSpan), in a table direct-mapped by pid, so rows in time order cost a lookup
 * a span; without processSpan, a pid whose name never changes is looked up once.
 */
function processNames(dict: DictionaryBuilder, pid: Uint32Array, timestamp: BigInt64Array, valid: Uint8Array | undefined, processes: ProcessTable): void {
  const keys = dict.keys;
  const none = valid ? dict.key("") : 0;
  const ts = halvesOf(timestamp);
  // per slot: its pid, its key (-2: empty), and [from, to) as int64 halves (unbounded: the int64 extremes)
  const slotPid = new Int32Array(1024),
    slotKey = new Int32Array(1024).fill(-2);
  const fromHi = new Int32Array(1024),
    fromLo = new Uint32Array(1024),
    toHi = new Int32Array(1024),
    toLo = new Uint32Array(1024);
  const span = processes.processSpan ? (p: number, t: bigint) => processes.processSpan!(p, t) : undefined;
  for (let i = 0; i < keys.length; i++) {
    if (valid && !valid[i]) {
      keys[i] = none;
      continue;
    }
    const p = pid[i];
    const slot = (p ^ (p >>> 10)) & 1023;
    const h = ts[2 * i + 1] | 0,
      l = ts[2 * i];
    if (
      slotKey[slot] !== -2 &&
      slotPid[slot] === (p | 0) &&
      (h > fromHi[slot] || (h === fromHi[slot] && l >= fromLo[slot])) &&
      (h < toHi[slot] || (h === toHi[slot] && l < toLo[slot]))
    ) {
      keys[i] = slotKey[slot];
      continue;
    }
    let name: string | undefined,
      from: bigint | null = null,
      to: bigint | null = null;
    if (span) ({ name, from, to } = span(p, timestamp[i]));
    else {
      name = processes.fixedName(p);
      if (name === undefined) {
        // (a name that changes: this row's, kept for this timestamp alone)
        name = processes.processName(p, timestamp[i]);
        from = timestamp[i];
        to = from + 1n;
      }
    }
    const k = dict.key(name);
    keys[i] = k;
    slotPid[slot] = p;
    slotKey[slot] = k;
    fromHi[slot] = from === null ? -0x80000000 : Number(from >> 32n);
    fromLo[slot] = from === null ? 0 : Number(BigInt.asUintN(32, from));
    toHi[slot] = to === null ? 0x7fffffff : Number(to >> 32n);
    toLo[slot] = to === null ? 0xffffffff : Number(BigInt.asUintN(32, to));
  }
}

/**
 * Activity ids of EVENT_HEADER records (null for other headers, or without record bytes); `headerType`:
 * the rows' (as `keys`). Each id is read where EventTable.activityIdOffset says, as EventRow.activityId
 * reads it: for an .etl row only where the decoder flagged it not zero (reading every row's record again
 * here was a cache miss a row).
 */
function activityIds(dict: DictionaryBuilder, e: Trace["events"], rows: Uint32Array | null, headerType: Uint8Array): void {
  const keys = dict.keys;
  // (the trace's bytes when every row's record is in them, read as words)
  const whole = e.recordBytes ? e.recordBytesOf(0) : null;
  const view = whole ? e.viewOf(whole) : null;
  let zeroKey = -1;
  // (the last id keyed, as four words: runs of one id cost four comparisons a row)
  let lastKey = -1,
    w0 = 0,
    w1 = 0,
    w2 = 0,
    w3 = 0;
  for (let i = 0; i < keys.length; i++) {
    const r = rows ? rows[i] : i;
    const ht = headerType[i];
    const bytes = ht === C.HT_EVENT_HEADER32 || ht === C.HT_EVENT_HEADER64 ? (whole ?? e.recordBytesOf(r)) : null;
    if (!bytes) {
      dict.setNull(i);
      continue;
    }
    const o = e.activityIdOffset(r);
    if (!o) {
      keys[i] = zeroKey < 0 ? (zeroKey = dict.key(ZERO_GUID)) : zeroKey;
      continue;
    }
    if (view) {
      const a = view.getInt32(o, true),
        b = view.getInt32(o + 4, true),
        c = view.getInt32(o + 8, true),
        d = view.getInt32(o + 12, true);
      if (lastKey >= 0 && a === w0 && b === w1 && c === w2 && d === w3) keys[i] = lastKey;
      else {
        keys[i] = lastKey = dict.keyOfBytes(bytes, o, 16, formatGuid);
        w0 = a;
        w1 = b;
        w2 = c;
        w3 = d;
      }
      continue;
    }
    // (an id met before costs a hash of its bytes, not a formatted string)
    keys[i] = dict.keyOfBytes(bytes, o, 16, formatGuid);
  }
}

/** Rows `rows` of `trace` (every row when null), as the events table exports them. */
export function eventBatch(trace: Trace, rows: Uint32Array | null, ctx: EventContext): ExportBatch {
  const arrays = ctx.arrays ?? FRESH_ARRAYS;
  const e = trace.events;
  const c = e.columns;
  const n = rows ? rows.length : e.length;
  const rowIndex = arrays.take(Uint32Array, n, false);
  rowIndices(rowIndex, rows, ctx.firstRow);

  // providers and names: by provider index and by event type, each named once
  const provider = new DictionaryBuilder(n, arrays, true),
    providerName = new DictionaryBuilder(n, arrays, true),
    eventName = new DictionaryBuilder(n, arrays, true);
  const providers = trace.providers;
  const provKey = new Int32Array(providers.length),
    provNameKey = new Int32Array(providers.length);
  for (let p = 0; p < providers.length; p++) {
    const info = providers.get(p);
    provKey[p] = provider.key(info.guid);
    provNameKey[p] = providerName.key(info.name);
  }
  // (a provider's GUID and name keyed for every provider, in order: the dictionaries hold the batch's providers)
  // the three keys of each event type the rows have (its provider's GUID and name, its name: -1 where
  // the type does not name its events), then each row's type fields and keys by its type
  const names = trace.names;
  const v = e.typeValues();
  const none = v.provider.length;
  const present = new Uint8Array(none + 1);
  markTypes(present, c.eventType, rows, none);
  const provOfType = new Int32Array(none + 1),
    provNameOfType = new Int32Array(none + 1),
    nameOfType = new Int32Array(none + 1).fill(-1);
  for (let t = 0; t < none; t++) {
    if (!present[t]) continue;
    provOfType[t] = provKey[v.provider[t]];
    provNameOfType[t] = provNameKey[v.provider[t]];
    const name = names.ofType(t);
    if (name !== null) nameOfType[t] = eventName.key(name);
  }
  const typeFields = typeFieldColumns(e, rows, arrays, [provider.keys, providerName.keys, eventName.keys], [provOfType, provNameOfType, nameOfType]);
  // rows without a type (their provider is the row's), and rows their type does not name
  let perRow = present[none] === 1;
  for (let t = 0; t < none && !perRow; t++) perRow = present[t] === 1 && nameOfType[t] < 0;
  if (perRow) {
    for (let i = 0; i < n; i++) {
      const r = rows ? rows[i] : i;
      const t = c.eventType[r];
      if (t < none && nameOfType[t] >= 0) continue;
      if (t >= none) {
        provider.keys[i] = provKey[c.provider[r]];
        providerName.keys[i] = provNameKey[c.provider[r]];
      }
      eventName.keys[i] = eventName.key(names.ofRow(r));
    }
  }

  // pid and tid: null where the header has none
  const pid = pick(c.pid, rows, arrays),
    tid = pick(c.tid, rows, arrays);
  const valid = validWithout(c.flags, rows, C.F_NO_PROCESS_INFO, n, arrays);

  // time: microseconds since 1970 UTC, and PerfView's relative milliseconds
  const timestamp = pick(c.timestamp, rows, arrays);
  const halves = halvesOf(timestamp);
  const time = arrays.take(BigInt64Array, n, false);
  microsecondsInto(trace, halves, null, halvesOf(time));
  const relative = arrays.take(Float64Array, n, false);
  relativeInto(relative, halves, trace.clock);

  const processName = new DictionaryBuilder(n, arrays, true);
  processNames(processName, pid, timestamp, valid, ctx.processes ?? trace.processes);
  const activity = new DictionaryBuilder(n, arrays);
  activityIds(activity, e, rows, typeFields.headerType);

  const columns = [
    { values: rowIndex },
    { values: typeFields.headerType },
    provider.column(),
    providerName.column(),
    eventName.column(),
    { values: typeFields.eventId },
    { values: typeFields.version },
    { values: typeFields.opcode },
    { values: typeFields.level },
    { values: typeFields.task },
    { values: typeFields.keywords },
    { values: pid, valid },
    { values: tid, valid },
    { values: pick(c.processor, rows, arrays) },
    { values: timestamp },
    { values: time },
    { values: relative },
    { values: pick(c.payloadLength, rows, arrays) },
    processName.column(),
    activity.column(),
  ];
  return { length: n, columns };
}

const ZERO_GUID = "00000000-0000-0000-0000-000000000000";
