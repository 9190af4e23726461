// Payload fields of an event as TraceEvent's PayloadNames / PayloadString give them: name and display text.
// .NET runtime events use the overlays of traceevent-overlay.ts (or, without one, the manifest fields);
// kernel and KernelTraceControl events the layouts of traceevent-kernel.ts; EventSource and TDH-described
// events their own descriptions (trace-manifests.ts).

import * as C from "../../assembly/codes.js";
import type { EventRow } from "../tables/event-table.js";
import type { FieldValue } from "../schema/clr-payload.js";
import { findClrEvent, mapName } from "../schema/clr-payload.js";
import { clrHasTemplate, eventNameParts } from "../naming/event-names.js";
import { bytesText, enumText, filetimeText, hex8, n0, nFixed, systemTimeText } from "./dotnet-format.js";
import { clrOverlay, type EnumDef, type FieldAccess, type OverlayState, type TraceEventEdition, type ValueKind } from "./traceevent-overlay.js";
import type { ProcessTable } from "../tables/processes.js";
import { IN, OUT, traceManifests, type DynField, type DynMap, type DynProvider } from "../naming/trace-manifests.js";
import { kernelFileCreatePairs, kernelPayload, kernelProcessThread, KernelState } from "./traceevent-kernel.js";
import { kernelMemoryPairs } from "./traceevent-kernel-more.js";

export type { TraceEventEdition };

interface ContextTrace {
  events: { length: number; row(i: number): EventRow };
}

/** Trace-wide state for payload rendering (type names, kernel tables) and PID/TID fix-ups. */
export class PayloadContext implements OverlayState {
  private readonly typeNames = new Map<string, string>();
  readonly kernel: KernelState;

  constructor(
    trace: ContextTrace,
    readonly processes: ProcessTable,
    readonly edition: TraceEventEdition,
  ) {
    this.kernel = new KernelState(processes);
    // TraceEvent's CLR parser state: every BulkType event maps (process, type id) -> name for the whole trace.
    const row = trace.events.row(0);
    for (let i = 0; i < trace.events.length; i++) {
      row.index = i;
      const ht = row.headerType;
      if (ht !== C.HT_EVENT_HEADER32 && ht !== C.HT_EVENT_HEADER64) {
        this.kernel.prepass(row);
        continue;
      }
      if (row.eventId !== 15) continue;
      const clr = row.clrSchema;
      if (!clr || clr.provider !== 0) continue;
      const values = row.get("Values");
      if (!Array.isArray(values)) continue;
      for (const v of values as Record<string, FieldValue>[]) {
        const id = v.TypeID;
        if (typeof id === "bigint") this.typeNames.set(`${row.pid}:${id}`, String(v.Name ?? ""));
      }
    }
  }

  typeName(pid: number, typeId: bigint): string {
    return this.typeNames.get(`${pid >>> 0}:${typeId}`) ?? "";
  }

  /** The ProcessID and ThreadID TraceEvent reports (kernel events take them from their payloads). */
  processThread(row: EventRow): { pid: number; tid: number } {
    const fixed = kernelProcessThread(row, this.kernel);
    if (fixed) return fixed;
    const pid = row.pid;
    const tid = row.tid;
    return { pid: pid === null ? -1 : pid | 0, tid: tid === null ? -1 : tid | 0 };
  }

  /** The container id of an event (extended item 16: a GUID), or null. */
  containerId(row: EventRow): string | null {
    if (row.headerType !== C.HT_EVENT_HEADER32 && row.headerType !== C.HT_EVENT_HEADER64) return null;
    const item = row.extendedItems.find((e) => e.type === 16);
    if (!item) return null;
    if (item.data.length === 16) return guidText(item.data, 0);
    let s = "";
    for (let i = 0; i + 1 < item.data.length; i += 2) {
      const c = item.data[i] | (item.data[i + 1] << 8);
      if (!c) break;
      s += String.fromCharCode(c);
    }
    return s;
  }
}

/** PayloadString of one value of a C# type. */
export function formatValue(kind: ValueKind, v: FieldValue | null | undefined): string {
  if (v === null || v === undefined) return "";
  if (typeof kind === "object") return enumText(toNumber(v, kind), kind.members, kind.flags);
  switch (kind) {
    case "int": {
      const n = toNumber(v);
      return n0(n | 0);
    }
    case "long":
      return n0(typeof v === "bigint" ? BigInt.asIntN(64, v) : BigInt(Math.trunc(toNumber(v))));
    case "addr":
      return hex8(typeof v === "bigint" ? v : BigInt(Math.trunc(toNumber(v))));
    case "double":
      return nFixed(toNumber(v), 3);
    case "bool":
      return (typeof v === "boolean" ? v : toNumber(v) !== 0) ? "True" : "False";
    case "guid":
      return typeof v === "string" ? v : String(v);
    case "str":
      return typeof v === "string" ? v : String(v);
    case "plain":
      return typeof v === "bigint" ? v.toString() : String(v);
  }
}

function toNumber(v: FieldValue, e?: EnumDef): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(BigInt.asIntN(64, v));
  if (typeof v === "boolean") return v ? 1 : 0;
  if (e && typeof v === "string") return Number(v);
  return 0;
}

function defaultValue(kind: ValueKind): FieldValue {
  if (typeof kind === "object") return 0;
  switch (kind) {
    case "str":
      return "";
    case "guid":
      return "00000000-0000-0000-0000-000000000000";
    case "bool":
      return false;
    case "long":
    case "addr":
      return 0n;
    default:
      return 0;
  }
}

/** The payload as [name, text] pairs, in TraceEvent's order. */
export function payloadPairs(row: EventRow, ctx: PayloadContext): [string, string][] {
  const parts = eventNameParts(row);
  const ht = row.headerType;
  if (ht === C.HT_EVENT_HEADER32 || ht === C.HT_EVENT_HEADER64) {
    if (parts.source === "clr") return clrPairs(row, ctx);
    if (parts.source === "manifest-data") return manifestDataPairs(row);
    if (parts.provider === "Microsoft-Windows-Kernel-File" && row.eventId === 12) return kernelFileCreatePairs(row, ctx.kernel);
    if (parts.source === "kernel" && parts.provider === "Microsoft-Windows-Kernel-Memory") return kernelMemoryPairs(row) ?? [];
    if (parts.source === "eventsource" || parts.source === "tdh") return dynPairs(row, ctx);
    if (parts.source === "tracelogging") return traceLoggingPairs(row);
    return [];
  }
  if (parts.source === "tdh") return dynPairs(row, ctx);
  const { pid } = ctx.processThread(row);
  return kernelPayload(row, parts, ctx.kernel, ctx.processes.processName(pid, row.timestamp)) ?? [];
}

function clrPairs(row: EventRow, ctx: PayloadContext): [string, string][] {
  return clrFieldValues(row, ctx).map((f) => [f.name, f.text ?? formatValue(f.kind, f.value)]);
}

/** One property of a .NET runtime event's TraceEvent class: its C# type and value (null: printed empty). */
export interface ClrFieldValue {
  name: string;
  kind: ValueKind;
  value: FieldValue | null | undefined;
  /** The printed text where it is not formatValue's (manifest value maps). */
  text?: string;
  /** The manifest's type of the field (T_*), when the value comes straight from one. */
  schemaType?: number;
}

/** The properties TraceEvent's class of a .NET runtime event gives (PayloadNames order), with their values. */
export function clrFieldValues(row: EventRow, ctx: PayloadContext): ClrFieldValue[] {
  const clr = row.clrSchema!;
  const decoded = row.decode();
  const values = new Map<string, FieldValue>();
  if (decoded) decoded.names.forEach((n, i) => values.set(n, decoded.values[i]));
  const overlay = clrOverlay(clr.provider, row.eventId);
  if (!overlay) {
    // No overlay: the manifest fields, formatted by their types. TraceEvent's classes are generated from the
    // newest template: PayloadNames lists all its fields, and a field the event's version (or a short
    // payload) lacks reads as 0 / "" (`if (Version >= N) return ...; return 0;`). Events it has no class
    // for are described by their own version's template (a missing value prints empty).
    const hasClass = clrHasTemplate(clr.provider, row.eventId);
    const fields = hasClass ? (findClrEvent(clr.provider, row.eventId, 255) ?? clr).fields : clr.fields;
    const out: ClrFieldValue[] = [];
    for (const f of fields) {
      if (f.count !== undefined || f.type === C.T_STRUCT || f.type === C.T_BINARY) continue;
      const kind = schemaKind(f.type);
      const v = values.get(f.name) ?? (hasClass ? defaultValue(kind) : undefined);
      const text = v === undefined ? "" : f.map && typeof v === "number" ? (mapName(clr.provider, f.map, v) ?? String(v)) : undefined;
      out.push({ name: f.name, kind, value: v, text, schemaType: f.type });
    }
    return out;
  }
  const access: FieldAccess = {
    get: (n) => values.get(n),
    version: row.version,
    payloadLength: row.payloadLength,
    pointerSize: row.pointerSize,
    payload: row.payload,
    pid: row.pid ?? -1,
  };
  const out: ClrFieldValue[] = [];
  for (const f of overlay) {
    if (f.editions && !f.editions.includes(ctx.edition)) continue;
    if (f.nullBelow !== undefined && row.version < f.nullBelow) {
      out.push({ name: f.name, kind: f.kind, value: null });
      continue;
    }
    let v: FieldValue | null | undefined;
    if (f.compute) v = f.compute(access, ctx);
    else {
      v = values.get(f.field ?? f.name);
      if (v === undefined) v = defaultValue(f.kind);
    }
    out.push({ name: f.name, kind: f.kind, value: v });
  }
  return out;
}

function schemaKind(t: number): ValueKind {
  switch (t) {
    case C.T_PTR:
      return "addr";
    case C.T_U64:
    case C.T_I64:
      return "long";
    case C.T_F32:
    case C.T_F64:
      return "double";
    case C.T_BOOL:
      return "bool";
    case C.T_GUID:
      return "guid";
    case C.T_USTR:
    case C.T_ASTR:
      return "str";
    default:
      return "int";
  }
}

function manifestDataPairs(row: EventRow): [string, string][] {
  const p = row.payload;
  if (p.length < 8) return [];
  const u16 = (o: number) => p[o] | (p[o + 1] << 8);
  return [
    ["Format", String(p[0])],
    ["MajorVersion", String(p[1])],
    ["MinorVersion", String(p[2])],
    ["Magic", String(p[3])],
    ["TotalChunks", String(u16(4))],
    ["ChunkNumber", String(u16(6))],
    ["PayloadLength", String(row.payloadLength)],
  ];
}

// ------------------------------------------------------------------ EventSource / TDH described events

interface DynReader {
  b: Uint8Array;
  v: DataView;
  pos: number;
  ptr: number;
}

function readUtf16z(r: DynReader): string {
  let s = "";
  while (r.pos + 1 < r.b.length) {
    const c = r.b[r.pos] | (r.b[r.pos + 1] << 8);
    r.pos += 2;
    if (!c) return s;
    s += String.fromCharCode(c);
  }
  r.pos = r.b.length;
  return s;
}

function readAnsiz(r: DynReader): string {
  let s = "";
  while (r.pos < r.b.length) {
    const c = r.b[r.pos++];
    if (!c) return s;
    s += String.fromCharCode(c);
  }
  return s;
}

type DynValue = FieldValue | null;

function readScalar(r: DynReader, f: DynField, lengthOf: (f: DynField) => number | undefined): DynValue {
  const { v, b } = r;
  const need = (n: number) => r.pos + n <= b.length;
  const at = r.pos;
  switch (f.inType) {
    case IN.UnicodeString: {
      const len = lengthOf(f);
      if (len !== undefined) {
        let s = "";
        for (let i = 0; i < len && r.pos + 1 < b.length; i++, r.pos += 2) s += String.fromCharCode(b[r.pos] | (b[r.pos + 1] << 8));
        return s.replace(/\0+$/, "");
      }
      return readUtf16z(r);
    }
    case IN.AnsiString: {
      const len = lengthOf(f);
      if (len !== undefined) {
        let s = "";
        for (let i = 0; i < len && r.pos < b.length; i++) s += String.fromCharCode(b[r.pos++]);
        return s.replace(/\0+$/, "");
      }
      return readAnsiz(r);
    }
    case IN.Int8:
      if (!need(1)) return null;
      r.pos += 1;
      return v.getInt8(at);
    case IN.UInt8:
    case IN.AnsiChar:
      if (!need(1)) return null;
      r.pos += 1;
      return v.getUint8(at);
    case IN.Int16:
      if (!need(2)) return null;
      r.pos += 2;
      return v.getInt16(at, true);
    case IN.UInt16:
    case IN.UnicodeChar:
      if (!need(2)) return null;
      r.pos += 2;
      return v.getUint16(at, true);
    case IN.Int32:
    case IN.UInt32:
    case IN.HexInt32:
      if (!need(4)) return null;
      r.pos += 4;
      return f.inType === IN.Int32 ? v.getInt32(at, true) : v.getUint32(at, true);
    case IN.Boolean:
      if (!need(4)) return null;
      r.pos += 4;
      return v.getInt32(at, true) !== 0;
    case IN.Int64:
    case IN.UInt64:
    case IN.HexInt64:
    case IN.FileTime:
      if (!need(8)) return null;
      r.pos += 8;
      return f.inType === IN.Int64 ? v.getBigInt64(at, true) : v.getBigUint64(at, true);
    case IN.Float:
      if (!need(4)) return null;
      r.pos += 4;
      return v.getFloat32(at, true);
    case IN.Double:
      if (!need(8)) return null;
      r.pos += 8;
      return v.getFloat64(at, true);
    case IN.Pointer:
    case IN.SizeT:
      if (!need(r.ptr)) return null;
      r.pos += r.ptr;
      return r.ptr === 8 ? v.getBigUint64(at, true) : BigInt(v.getUint32(at, true));
    case IN.Guid:
      if (!need(16)) return null;
      r.pos += 16;
      return guidText(b, at);
    case IN.SystemTime:
      if (!need(16)) return null;
      r.pos += 16;
      return b.subarray(at, at + 16);
    case IN.Binary: {
      const len = lengthOf(f) ?? b.length - r.pos;
      const end = Math.min(b.length, r.pos + len);
      r.pos = end;
      return b.subarray(at, end);
    }
    case IN.Sid:
    case IN.WbemSid: {
      if (!need(8)) return null;
      const n = b[at + 1];
      const size = 8 + 4 * n;
      r.pos = Math.min(b.length, at + size);
      return b.subarray(at, r.pos);
    }
    case IN.CountedString: {
      if (!need(2)) return null;
      const bytes = v.getUint16(at, true);
      r.pos += 2;
      let s = "";
      for (let i = 0; i + 1 < bytes && r.pos + 1 < b.length; i += 2, r.pos += 2) s += String.fromCharCode(b[r.pos] | (b[r.pos + 1] << 8));
      return s;
    }
  }
  return null;
}

function guidText(b: Uint8Array, o: number): string {
  const h = (i: number) => b[o + i].toString(16).padStart(2, "0");
  return `${h(3)}${h(2)}${h(1)}${h(0)}-${h(5)}${h(4)}-${h(7)}${h(6)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`;
}

function dynPairs(row: EventRow, ctx: PayloadContext): [string, string][] {
  const provider = row.table.providers.get(row.providerIndex);
  const found = traceManifests(row.table).find(provider.guid, row.eventId, row.version);
  if (!found) return [];
  const { event, provider: dp } = found;
  const b = row.payload;
  const r: DynReader = { b, v: new DataView(b.buffer, b.byteOffset, b.length), pos: 0, ptr: row.pointerSize };
  const values: DynValue[] = [];
  const out: [string, string][] = [];
  const numberOf = (ref: { fixed: number } | { field: number } | undefined): number | undefined => {
    if (!ref) return undefined;
    if ("fixed" in ref) return ref.fixed;
    const v = values[ref.field];
    return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : 0;
  };
  // TDH descriptions: a field that only gives the byte length of the next one is not printed
  const hidden = new Set<number>();
  if (event.source === "tdh") {
    event.fields.forEach((f, k) => {
      if (f.length && "field" in f.length && f.length.field === k - 1) hidden.add(k - 1);
    });
  }
  for (let k = 0; k < event.fields.length; k++) {
    const f = event.fields[k];
    // TraceEvent's reader of EventSource manifests has no type for win:SYSTEMTIME: it drops that field and
    // every one after it (ProviderManifest.ComputeFieldInfo)
    if (event.source === "eventsource" && f.inType === IN.SystemTime) break;
    let value: DynValue;
    const count = numberOf(f.count);
    if (f.members) {
      const n = count ?? 1;
      const items: FieldValue[] = [];
      for (let k = 0; k < n && r.pos < b.length; k++) {
        const o: Record<string, FieldValue> = {};
        for (const m of f.members) o[m.name] = readScalar(r, m, (x) => numberOf(x.length)) ?? "";
        items.push(o);
      }
      value = items;
    } else if (count !== undefined && f.inType !== IN.UnicodeString && f.inType !== IN.AnsiString && f.inType !== IN.Binary) {
      const items: FieldValue[] = [];
      for (let k = 0; k < count; k++) {
        const x = readScalar(r, f, (y) => numberOf(y.length));
        if (x === null) break;
        items.push(x);
      }
      value = items;
    } else value = readScalar(r, f, (x) => numberOf(x.length));
    values.push(value);
    if (!hidden.has(k)) out.push([cleanName(f.name, event.source), dynText(f, value, dp, event.source, ctx)]);
  }
  return out;
}

/** TraceEvent keeps only identifier characters in names that come from TDH. */
function cleanName(name: string, source: string): string {
  return source === "tdh" ? name.replace(/[^A-Za-z0-9_]/g, "") : name;
}

function mapText(map: DynMap, value: number): string {
  if (!map.bitmap) return map.entries.get(value) ?? String(value);
  if (value === 0) return map.entries.get(0) ?? "0";
  const names: string[] = [];
  let rest = value >>> 0;
  for (const [bit, name] of [...map.entries].sort((a, b) => (a[0] >>> 0) - (b[0] >>> 0))) {
    if (bit !== 0 && (value & bit) === bit) {
      names.push(name);
      rest &= ~bit;
    }
  }
  if (rest !== 0) names.push("0x" + (rest >>> 0).toString(16));
  return names.join("|");
}

function dynText(f: DynField, v: DynValue, p: DynProvider, source: string, ctx: PayloadContext): string {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) {
    return (
      "[" +
      v
        .map((x) => (typeof x === "object" && !(x instanceof Uint8Array) ? JSON.stringify(x) : dynText({ ...f, count: undefined }, x, p, source, ctx)))
        .join(",") +
      "]"
    );
  }
  if (f.map && (typeof v === "number" || typeof v === "bigint")) {
    const m = p.maps.get(f.map);
    if (m) return mapText(m, Number(v));
  }
  switch (f.inType) {
    case IN.UnicodeString:
    case IN.AnsiString:
    case IN.CountedString:
    case IN.Guid:
      return String(v);
    case IN.Boolean:
      return v ? "True" : "False";
    case IN.Binary: {
      const bytes = v as Uint8Array;
      if (f.outType === OUT.Ipv6 && bytes.length === 16) return ipv6Text(bytes);
      if (f.outType === OUT.SocketAddress) return socketAddressText(bytes) ?? bytesText(bytes);
      return bytesText(bytes);
    }
    case IN.FileTime:
      return filetimeText(v as bigint);
    case IN.SystemTime:
      return systemTimeText(v as Uint8Array);
    case IN.Pointer:
    case IN.SizeT:
      return hex8(v as bigint);
    case IN.Double:
    case IN.Float:
      return nFixed(v as number, 3);
  }
  if (source !== "tdh" && (f.outType === OUT.HexInt32 || f.outType === OUT.HexInt64 || f.inType === IN.HexInt32 || f.inType === IN.HexInt64)) {
    return "0x" + BigInt.asUintN(64, typeof v === "bigint" ? v : BigInt(v as number)).toString(16);
  }
  if (source === "tdh") {
    // TDH descriptions: 32-bit integers become int, 64-bit long (thousands separators); smaller ones plain.
    if (f.inType === IN.Int32 || f.inType === IN.UInt32) return n0((v as number) | 0);
    if (f.inType === IN.Int64 || f.inType === IN.UInt64) return n0(BigInt.asIntN(64, v as bigint));
    return String(v);
  }
  // EventSource manifests: C# types as declared; ulong prints as an address.
  if (f.inType === IN.Int32 || f.inType === IN.Int64) return n0(v as number | bigint);
  if (f.inType === IN.UInt64) return hex8(v as bigint);
  return typeof v === "bigint" ? v.toString() : String(v);
}

function ipv6Text(b: Uint8Array): string {
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push((b[i] << 8) | b[i + 1]);
  // longest run of zero words (length >= 2) becomes "::"
  let best = -1,
    bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (a: number[]) => a.map((w) => w.toString(16)).join(":");
  if (best < 0) return hex(words);
  return hex(words.slice(0, best)) + "::" + hex(words.slice(best + bestLen));
}

function socketAddressText(b: Uint8Array): string | undefined {
  if (b.length >= 8 && b[0] === 2 && b[1] === 0) return `${b[4]}.${b[5]}.${b[6]}.${b[7]}:${(b[2] << 8) | b[3]}`;
  if (b.length >= 24 && b[0] === 23 && b[1] === 0) return `[${ipv6Text(b.subarray(8, 24))}]:${(b[2] << 8) | b[3]}`;
  return undefined;
}

// ------------------------------------------------------------------ TraceLogging (self-describing) events

interface TlField {
  name: string;
  inType: number;
  outType: number;
  /** 0: scalar, 1: variable count (u16 prefix in the data), 2: constant count. */
  arity: number;
  count: number;
  members?: TlField[];
}

/** Fields of an EVENT_SCHEMA_TL item: u16 size, tag bytes, event name, then per field name, inType[, outType[, tags]]. */
function parseTlSchema(d: Uint8Array): TlField[] {
  let p = 2;
  while (p < d.length && d[p] & 0x80) p++;
  p++;
  while (p < d.length && d[p]) p++;
  p++;
  const fields: TlField[] = [];
  while (p < d.length) {
    let e = p;
    while (e < d.length && d[e]) e++;
    const name = new TextDecoder().decode(d.subarray(p, e));
    p = e + 1;
    if (p >= d.length) break;
    const inByte = d[p++];
    let outType = 0;
    if (inByte & 0x80) {
      const outByte = d[p++] ?? 0;
      outType = outByte & 0x7f;
      if (outByte & 0x80) while (p < d.length && d[p++] & 0x80);
    }
    const arity = inByte & 0x20 ? 1 : inByte & 0x40 ? 2 : 0;
    let count = 0;
    if (arity === 2) {
      count = (d[p] ?? 0) | ((d[p + 1] ?? 0) << 8);
      p += 2;
    }
    fields.push({ name, inType: inByte & 0x1f, outType, arity, count });
  }
  // struct fields (inType 22... in TraceLogging numbering 24 does not fit 5 bits; structs are rare): flat list kept
  return fields;
}

/** TraceLogging in-types mapped onto the TDH ones the reader knows. */
function tlScalar(r: DynReader, f: TlField): DynValue {
  switch (f.inType) {
    case 1:
      return readUtf16z(r);
    case 2:
      return readAnsiz(r);
    case 22:
    case 23: {
      const n = r.pos + 2 <= r.b.length ? r.v.getUint16(r.pos, true) : 0;
      r.pos += 2;
      const bytes = r.b.subarray(r.pos, Math.min(r.b.length, r.pos + n));
      r.pos += n;
      if (f.inType === 23) return String.fromCharCode(...bytes);
      let s = "";
      for (let i = 0; i + 1 < bytes.length; i += 2) s += String.fromCharCode(bytes[i] | (bytes[i + 1] << 8));
      return s;
    }
    case 25:
    case 14: {
      const n = r.pos + 2 <= r.b.length ? r.v.getUint16(r.pos, true) : 0;
      r.pos += 2;
      const bytes = r.b.subarray(r.pos, Math.min(r.b.length, r.pos + n));
      r.pos += n;
      return bytes;
    }
  }
  const asTdh: DynField = { name: f.name, inType: f.inType === 16 ? IN.Pointer : f.inType, outType: 0 };
  return readScalar(r, asTdh, () => undefined);
}

function tlText(f: TlField, v: DynValue): string {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return "[" + v.map((x) => tlText({ ...f, arity: 0 }, x)).join(",") + "]";
  if (f.outType === 3 && typeof v === "number") return v ? "True" : "False";
  switch (f.inType) {
    case 7:
    case 8:
    case 20:
      return n0((v as number) | 0);
    case 9:
    case 10:
    case 21:
      return n0(BigInt.asIntN(64, v as bigint));
    case 11:
    case 12:
      return nFixed(v as number, 3);
    case 13:
      return v ? "True" : "False";
    case 16:
      return hex8(v as bigint);
    case 17:
      return filetimeText(v as bigint);
    case 18:
      return systemTimeText(v as Uint8Array);
    case 14:
    case 25:
      return bytesText(v as Uint8Array);
  }
  return typeof v === "bigint" ? v.toString() : String(v);
}

function traceLoggingPairs(row: EventRow): [string, string][] {
  const schema = row.extendedItems.find((e) => e.type === 11);
  if (!schema) return [];
  const b = row.payload;
  const r: DynReader = { b, v: new DataView(b.buffer, b.byteOffset, b.length), pos: 0, ptr: row.pointerSize };
  const out: [string, string][] = [];
  for (const f of parseTlSchema(schema.data)) {
    let v: DynValue;
    if (f.arity) {
      let n = f.count;
      if (f.arity === 1) {
        n = r.pos + 2 <= b.length ? r.v.getUint16(r.pos, true) : 0;
        r.pos += 2;
      }
      const items: FieldValue[] = [];
      for (let k = 0; k < n && r.pos < b.length; k++) {
        const x = tlScalar(r, f);
        if (x === null) break;
        items.push(x);
      }
      v = items;
    } else v = tlScalar(r, f);
    out.push([f.name, tlText(f, v)]);
  }
  return out;
}
