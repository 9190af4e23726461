// Events as TraceEvent's ToString() writes them (ToXml), and the text PerfView's EventPipe tests compare
// (EventPipeParsing.Basic's *.baseline.txt): one line per Provider/EventName, sorted ordinally, with the
// count of its events and its first event's XML, in TraceLog's order with TraceLog's bookkeeping removed.
//
// The .NET runtime's events are written by their TraceEvent classes: attributes in each class's ToXml
// order and format (generated/traceevent-toxml.ts). Other events (EventSource, the EventPipe provider's
// ProcessInfo) by TraceEvent's generic ToXml: ProviderName, then every payload field by PayloadString.

import * as C from "../../assembly/codes.js";
import type { EventRow } from "../tables/event-table.js";
import type { FieldValue } from "../schema/clr-payload.js";
import type { DescribedPayload } from "../schema/eventpipe-payload.js";
import {
  TC_BOOLEAN,
  TC_BOOLEAN8,
  TC_DATETIME,
  TC_DOUBLE,
  TC_INT32,
  TC_INT64,
  TC_OBJECT,
  TC_SINGLE,
  TC_UINT64,
  TC_VARINT,
  TC_VARUINT,
  type NettraceType,
} from "../eventpipe/format.js";
import { eventNameParts } from "../naming/event-names.js";
import { buildProcessTable, type ProcessTable } from "../tables/processes.js";
import { bytesText, enumText, fFixed, filetimeText, gText, hex8, n0 } from "./dotnet-format.js";
import { isTraceLogBookkeeping, type PerfViewTrace } from "./perfview.js";
import { clrFieldValues, formatValue, payloadPairs, PayloadContext, type ClrFieldValue } from "./traceevent-payload.js";
import type { ValueKind } from "./traceevent-overlay.js";
import { TOXML_EVENTS, TOXML_STRUCTS } from "./generated/traceevent-toxml.js";
import { fits, hostOffset, i16, i32, i64, readPtr, u32 } from "./payload-bytes.js";

/** TraceEvent's newline (Environment.NewLine of the Windows machines the baselines come from). */
const NL = "\r\n";
/** The baseline keeps this many UTF-16 code units of each event's text (after escaping newlines). */
const BASELINE_CUT = 1000;

interface Attribute {
  name: string;
  format: string;
  /** Conditions (all must hold): "v>=N" or a C# expression of TraceEvent's class. */
  conditions: string[];
}

interface XmlClass {
  name: string;
  className: string;
  attributes: Attribute[];
  children: boolean;
  custom: boolean;
}

interface XmlStruct {
  className: string;
  open: string;
  attributes: Attribute[];
}

function parseAttributes(text: string): Attribute[] {
  const out: Attribute[] = [];
  for (const token of text.split(" ")) {
    if (!token || token.startsWith(">") || token.startsWith("+")) continue;
    const m = /^([^:[]+):?([^[]*)((?:\[if:[^\]]*\])*)$/.exec(token);
    if (!m) continue;
    const conditions = [...m[3].matchAll(/\[if:([^\]]*)\]/g)].map((c) => c[1]);
    out.push({ name: m[1], format: m[2] || "str", conditions });
  }
  return out;
}

let classes: Map<string, XmlClass> | undefined;
let structs: Map<string, XmlStruct> | undefined;

/** TraceEvent's ToXml description of a .NET runtime event: by provider name and event id. */
function xmlClass(provider: string, id: number): XmlClass | undefined {
  if (!classes) {
    classes = new Map();
    for (const [p, i, name, className, attrs] of TOXML_EVENTS) {
      classes.set(`${p}:${i}`, {
        name,
        className,
        attributes: parseAttributes(attrs),
        children: attrs.includes(">CHILDREN"),
        custom: attrs.includes("+CUSTOM"),
      });
    }
  }
  return classes.get(`${provider}:${id}`);
}

/** The child element of a Bulk* class (GCBulkNodeTraceData -> GCBulkNodeValues). */
function xmlStruct(className: string): XmlStruct | undefined {
  if (!structs) {
    structs = new Map();
    for (const [cls, open, attrs] of TOXML_STRUCTS) structs.set(cls, { className: cls, open, attributes: parseAttributes(attrs) });
  }
  return structs.get(className.replace(/TraceData$/, "Values"));
}

/** XmlUtilities.XmlEscape: the five XML entities. */
function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&apos;"));
}

/** QuotePadLeft: the quoted value right-aligned in `width` columns (quotes included). */
function quotePadLeft(s: string, width: number): string {
  return " ".repeat(Math.max(0, width - 2 - s.length)) + '"' + s + '"';
}

/** The .NET "n" GUID format (32 hex digits) of a GUID in its "d" text. */
function guidN(d: string): string {
  return d.replace(/-/g, "");
}

const ZERO_GUID = "00000000-0000-0000-0000-000000000000";

/** `<Event MSec= ... EventName="..."` (TraceEvent.Prefix). */
function prefix(row: EventRow, eventName: string, processes: ProcessTable): string {
  const ms = Math.max(0, row.relativeMSec);
  const pid = row.pid ?? -1;
  const activity = row.activityId;
  let s = `<Event MSec=${quotePadLeft(fFixed(ms, 4), 13)} PID=${quotePadLeft(String(pid), 6)} PName=${quotePadLeft(processes.processName(pid, row.timestamp), 10)} TID=${quotePadLeft(String(row.tid ?? -1), 6)}`;
  if (activity && activity !== ZERO_GUID) s += ` ActivityID="${guidN(activity)}"`;
  return s + ` EventName="${eventName}"`;
}

// ------------------------------------------------------------------ value formats of the CLR classes

function asBigInt(v: FieldValue | null | undefined): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return BigInt(Math.trunc(v));
  if (typeof v === "boolean") return v ? 1n : 0n;
  return 0n;
}

/** XmlAttribHex: "0x" and upper-case hex, 8 digits when the value fits in 32 bits, else 16. */
function hexText(v: bigint): string {
  const u = BigInt.asUintN(64, v);
  return (
    "0x" +
    u
      .toString(16)
      .toUpperCase()
      .padStart(u <= 0xffffffffn ? 8 : 16, "0")
  );
}

function formatAttribute(format: string, f: ClrFieldValue | undefined): string {
  const v = f?.value;
  switch (format) {
    case "n0":
      // (the C# property's width decides the sign: a manifest UInt32 read as an int prints -1)
      if (f?.kind === "int") return n0(Number(asBigInt(v) & 0xffffffffn) | 0);
      if (f?.kind === "long") return n0(BigInt.asIntN(64, asBigInt(v)));
      if (typeof v === "bigint") return n0(v);
      return n0(typeof v === "number" ? v : typeof v === "boolean" ? (v ? 1 : 0) : 0);
    case "hex":
      // an unsigned value (a signed C# int is first widened as unsigned)
      return hexText(typeof v === "number" && v < 0 ? BigInt(v >>> 0) : asBigInt(v));
    case "hexs":
      return hexText(BigInt.asIntN(64, asBigInt(v)));
    case "enum":
      if (!f) return "0";
      if (f.text !== undefined) return f.text;
      return formatValue(f.kind, v);
    case "bool":
      return (typeof v === "boolean" ? v : Number(v ?? 0) !== 0) ? "True" : "False";
    case "guid":
      return typeof v === "string" ? v : ZERO_GUID;
    case "float":
      return gText(typeof v === "number" ? v : Number(v ?? 0), f?.schemaType === C.T_F32 ? 7 : 15);
    case "obj":
      return v instanceof Uint8Array ? "System.Byte[]" : v === null || v === undefined ? "" : String(v);
    default:
      return xmlEscape(v === null || v === undefined ? "" : typeof v === "string" ? v : String(v));
  }
}

/** Whether a `[if:…]` condition of TraceEvent's ToXml holds. */
function conditionHolds(cond: string, row: EventRow, values: Map<string, ClrFieldValue>): boolean {
  const ver = /^v>=(\d+)$/.exec(cond);
  if (ver) return row.version >= Number(ver[1]);
  const cmp = /^(\w+)(\.Length)?!=(0|Guid\.Empty)$/.exec(cond);
  if (cmp) {
    const v = values.get(cmp[1])?.value;
    if (cmp[3] === "Guid.Empty") return typeof v === "string" && v !== ZERO_GUID;
    if (cmp[2]) return typeof v === "string" ? v.length !== 0 : Array.isArray(v) ? v.length !== 0 : false;
    return v !== undefined && v !== null && Number(v) !== 0;
  }
  const custom = CONDITIONS[cond];
  return custom ? custom(row) : true;
}

/** GCPerHeapHistory's Has* properties (TraceEvent's GCPerHeapHistoryTraceData, by version and payload length). */
const CONDITIONS: Record<string, (row: EventRow) => boolean> = {
  HasFreeListAllocated: (r) => r.version >= 3,
  HasFreeListRejected: (r) => r.version >= 3,
  HasEndOfSegAllocated: (r) => r.version >= 3,
  HasCondemnedAllocated: (r) => r.version >= 3,
  HasPinnedAllocated: (r) => r.version >= 3,
  HasPinnedAllocatedAdvance: (r) => r.version >= 3,
  HasRunningFreeListEfficiency: (r) => r.version >= 3,
  HasCondemnReasons1: (r) => r.version >= 2,
  HasConcurrentCompactMechanisms: (r) => r.version === 0 && perHeapMinorVersion(r) === 2,
  HasExtraGen0Commit: (r) => (r.version === 2 && perHeapMinorVersion(r) === 2) || r.version >= 3,
  HasCount: (r) => r.version >= 3,
  HasMemoryPressure: (r) => r.version === 0 || r.version === 2,
};

/** GCPerHeapHistory's MinorVersion, told by the payload's length (TraceEvent's ParseMinorVersion). */
function perHeapMinorVersion(row: EventRow): number {
  const gen5 = 10 * row.pointerSize * 5;
  const len = row.payloadLength;
  if (row.version === 0) return len === gen5 + 25 - 4 ? 1 : len === gen5 + 25 ? 2 : 0;
  if (row.version === 2) {
    const size = gen5 + 4 * 6 + 1 + 8;
    return len === size - 8 ? 1 : len === size ? 2 : 0;
  }
  return 0;
}

function attributesText(attrs: Attribute[], row: EventRow, values: Map<string, ClrFieldValue>): string {
  let s = "";
  for (const a of attrs) {
    if (!a.conditions.every((c) => conditionHolds(c, row, values))) continue;
    s += ` ${a.name}="${formatAttribute(a.format, values.get(a.name))}"`;
  }
  return s;
}

/** A child element's values (a Bulk* event's Values entries) as field values. */
function childValues(item: FieldValue, attrs: Attribute[]): Map<string, ClrFieldValue> {
  const m = new Map<string, ClrFieldValue>();
  if (typeof item !== "object" || item === null || Array.isArray(item) || item instanceof Uint8Array) return m;
  const rec = item as Record<string, FieldValue>;
  for (const a of attrs) {
    const v = rec[a.name] ?? rec[ALIASES[a.name] ?? ""];
    m.set(a.name, { name: a.name, kind: "plain", value: v });
  }
  return m;
}

/** Children TraceEvent writes on two lines: the attribute the second line starts with. */
const CHILD_LINE_BREAK: Record<string, string> = {
  GCBulkTypeValues: "Flags",
  GCBulkRootCCWValues: "RefCount",
  GCBulkRCWValues: "RefCount",
  GCBulkRootStaticVarValues: "TypeID",
};

/** Child attribute names whose manifest field is named otherwise. */
const ALIASES: Record<string, string> = { TypeName: "Name" };

function clrBody(row: EventRow, cls: XmlClass, ctx: PayloadContext): string {
  const values = new Map<string, ClrFieldValue>();
  for (const f of clrFieldValues(row, ctx)) values.set(f.name, f);
  // a ToXml attribute TraceEvent prints that PayloadNames leaves out: read from the manifest field
  for (const a of cls.attributes) {
    if (values.has(a.name)) continue;
    const v = row.get(a.name);
    if (v !== undefined) values.set(a.name, { name: a.name, kind: "plain", value: v });
  }
  let s = attributesText(cls.attributes, row, values);
  if (cls.className === "GCPerHeapHistoryTraceData") return s + "/>" + perHeapGenData(row);
  if (cls.className === "MethodILToNativeMapTraceData") return s + ">" + NL + ilToNativeLines(row) + "</Event>";
  if (cls.className === "ClrStackWalkTraceData") return s + ">" + NL + frameText(row, 8, row.get("FrameCount")) + NL + "</Event>";
  if (!cls.children) return s + "/>";
  s += ">" + NL;
  const struct = xmlStruct(cls.className);
  const items = struct ? row.get("Values") : undefined;
  if (struct && Array.isArray(items)) {
    const wrapAt = CHILD_LINE_BREAK[struct.className];
    for (const item of items) {
      const values = childValues(item, struct.attributes);
      let child = struct.open;
      for (const a of struct.attributes) {
        if (a.name === wrapAt) child += NL + "  ";
        child += ` ${a.name}="${formatAttribute(a.format, values.get(a.name))}"`;
      }
      s += child + "/>" + NL;
    }
  }
  return s + "</Event>";
}

const GENERATIONS = ["Gen0", "Gen1", "Gen2", "GenLargeObj"];

/**
 * GCPerHeapHistory's generations, written after the element closes: always Gen0, Gen1, Gen2 and
 * GenLargeObj (TraceEvent's loop ignores Count), each from its ten pointer-sized values.
 */
function perHeapGenData(row: EventRow): string {
  const p = row.payload;
  const ptr = row.pointerSize;
  const v = row.version;
  // version 3 on: after the fixed fields and Count (HostOffset(54, 7) + 4); before: at the start
  const first = v >= 3 ? hostOffset(54, 7, ptr) + 4 : 0;
  let s = "";
  GENERATIONS.forEach((name, g) => {
    const base = first + 10 * ptr * g;
    // GetIntPtrAt: signed on 64-bit
    const a = (k: number): bigint => (ptr === 8 ? i64(p, base + 8 * k) : BigInt(u32(p, base + 4 * k)));
    const attrs: [string, bigint][] = [];
    if (v === 0) {
      attrs.push(
        ["SizeBefore", a(0)],
        ["SizeAfter", a(1)],
        ["Fragmentation", a(4)],
        ["ObjSizeAfter", a(1) - a(4)],
        ["In", a(5)],
        ["Out", a(6)],
        ["NewAllocation", a(7)],
        ["SurvRate", a(8)],
      );
    } else {
      const objSpaceBefore = a(0) - a(1) - a(2);
      const fragmentation = a(4) + a(5);
      const out = v >= 3 ? a(7) + a(8) : a(7);
      const survRate = v >= 3 ? (objSpaceBefore === 0n ? 0n : BigInt(Math.trunc((Number(out) * 100) / Number(objSpaceBefore)))) : a(9);
      attrs.push(
        ["SizeBefore", a(0)],
        ["SizeAfter", a(3)],
        ["ObjSpaceBefore", objSpaceBefore],
        ["Fragmentation", fragmentation],
        ["ObjSizeAfter", a(3) - fragmentation],
        ["FreeListSpaceBefore", a(1)],
        ["FreeObjSpaceBefore", a(2)],
        ["FreeListSpaceAfter", a(4)],
        ["FreeObjSpaceAfter", a(5)],
        ["In", a(6)],
        ["Out", out],
        ["NewAllocation", v >= 3 ? a(9) : a(8)],
        ["SurvRate", survRate],
      );
      if (v >= 3) attrs.push(["PinnedSurv", a(7)], ["NonePinnedSurv", a(8)]);
    }
    s += ` <GenData Name="${name}"` + attrs.map(([k, x]) => ` ${k}="${n0(x)}"`).join("") + "/>" + NL;
  });
  return s + "</Event>" + NL;
}

// ------------------------------------------------------------------ other events: TraceEvent's generic ToXml

/** TraceEvent.PayloadString of a metadata-described field. */
function payloadString(t: NettraceType, name: string, v: FieldValue | undefined): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return "[" + v.map((x) => elementText(t.elementType ?? t, x)).join(",") + "]";
  if (v instanceof Uint8Array) return bytesText(v);
  if (t.typeCode === TC_OBJECT) return structText(t, v);
  // (TraceEvent: a non-zero int named IPv4Address as a dotted quad; 0 as a number)
  if (t.typeCode === TC_INT32 && name === "IPv4Address" && typeof v === "number" && v !== 0) return ipv4(v);
  if ((t.typeCode === TC_INT64 || t.typeCode === TC_VARINT) && name === "objectId") return hex8(v as bigint);
  if (t.typeCode === TC_DATETIME) return filetimeText(v as bigint);
  const kind = PAYLOAD_KINDS[t.typeCode];
  return kind ? formatValue(kind, v) : plainText(t, v);
}

/** The .NET type a metadata type code reads as, where PayloadString formats it (formatValue's kinds). */
const PAYLOAD_KINDS: Partial<Record<number, ValueKind>> = {
  [TC_INT32]: "int",
  [TC_INT64]: "long",
  [TC_VARINT]: "long",
  [TC_UINT64]: "addr",
  [TC_VARUINT]: "addr",
  [TC_DOUBLE]: "double",
  [TC_BOOLEAN]: "bool",
  [TC_BOOLEAN8]: "bool",
};

/**
 * An element of a top-level array as TraceEvent.PayloadString writes it: a struct of exactly the fields
 * Key and Value as `key->"value"`, anything else by its own ToString() (TraceEvent.cs, PayloadString).
 */
function elementText(t: NettraceType, v: FieldValue): string {
  if (t.typeCode === TC_OBJECT && v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array)) {
    const o = v as { [name: string]: FieldValue };
    const keys = Object.keys(o);
    if (keys.length === 2 && "Key" in o && "Value" in o)
      return `${scalarToString(fieldType(t, "Key"), o.Key)}->"${scalarToString(fieldType(t, "Value"), o.Value)}"`;
  }
  return plainText(t, v);
}

/** The type of struct field `name` of `t` (a string where not described). */
function fieldType(t: NettraceType, name: string): NettraceType {
  return t.fields?.find((f) => f.name === name) ?? { typeCode: TC_STRING_CODE };
}

const TC_STRING_CODE = 18;

/**
 * A struct value as DynamicTraceEventParser's StructValue.ToString() writes it (WriteAsJSon):
 * `{ "name":value, ... }`, arrays `[ a, b ]`; int, bool, double and float bare (.NET's ToString()), every other
 * value quoted, with \ and " escaped by a backslash (Quote); null as null.
 */
function structText(t: NettraceType, v: FieldValue | null | undefined): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array)) {
    const o = v as { [name: string]: FieldValue };
    const items = Object.keys(o).map((k) => `"${quote(k)}":${structText(fieldType(t, k), o[k])}`);
    return `{ ${items.join(", ")} }`;
  }
  const element = t.elementType ?? t;
  if (Array.isArray(v)) return `[ ${v.map((x) => structText(element, x)).join(", ")} ]`;
  if (v instanceof Uint8Array) return `[ ${Array.from(v, (x) => `"${x}"`).join(", ")} ]`;
  const c = t.typeCode;
  if (typeof v === "boolean" || c === TC_BOOLEAN || c === TC_BOOLEAN8) return v ? "True" : "False";
  if (c === TC_INT32 || c === TC_SINGLE || c === TC_DOUBLE) return plainText(t, v);
  return `"${quote(scalarToString(t, v))}"`;
}

/** A scalar's .NET ToString() (a DateTime as TraceEvent prints one elsewhere). */
function scalarToString(t: NettraceType, v: FieldValue): string {
  if (t.typeCode === TC_DATETIME && typeof v === "bigint") return filetimeText(v);
  return plainText(t, v);
}

/** StructValue.Quote: a backslash before every \ and ". */
function quote(s: string): string {
  return s.replace(/[\\"]/g, (c) => "\\" + c);
}

/** An element's own ToString() (inside arrays PayloadString does not format). */
function plainText(t: NettraceType, v: FieldValue): string {
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return t.typeCode === TC_SINGLE ? gText(v, 7) : t.typeCode === TC_DOUBLE ? gText(v, 15) : String(v);
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return "System.Byte[]";
  if (Array.isArray(v)) return "[" + v.map((x) => elementText(t.elementType ?? t, x)).join(",") + "]";
  return structText(t, v);
}

function ipv4(v: number): string {
  const u = v >>> 0;
  return `${u & 0xff}.${(u >>> 8) & 0xff}.${(u >>> 16) & 0xff}.${u >>> 24}`;
}

const RESERVED = new Set(["ProviderName", "FormattedMessage", "MSec", "PID", "PName", "TID", "ActivityID"]);

function genericBody(row: EventRow, providerName: string, ctx: PayloadContext): string {
  let s = providerName ? ` ProviderName="${xmlEscape(providerName)}"` : "";
  const d = row.decode() as DescribedPayload | null;
  if (d && "fields" in d) {
    d.fields.forEach((f, i) => {
      const name = RESERVED.has(f.name) ? "_" + f.name : f.name;
      const v = i < d.names.length ? d.values[i] : undefined;
      s += ` ${name}="${xmlEscape(payloadString(f, f.name, v))}"`;
    });
  } else {
    for (const [name, text] of payloadPairs(row, ctx)) s += ` ${RESERVED.has(name) ? "_" + name : name}="${xmlEscape(text)}"`;
  }
  return s + "/>";
}

/** An event as TraceEvent's ToString() writes it. */
export function eventXml(row: EventRow, ctx: PayloadContext, processes: ProcessTable): string {
  const parts = eventNameParts(row);
  const cls = xmlClass(parts.provider, row.eventId);
  const ht = row.headerType;
  const clr = cls && (ht === C.HT_EVENT_HEADER32 || ht === C.HT_EVENT_HEADER64) && (row.clrSchema || parts.provider === "Microsoft-DotNETCore-SampleProfiler");
  if (cls && clr) return prefix(row, cls.name, processes) + (row.clrSchema ? clrBody(row, cls, ctx) : sampleBody(row, cls));
  return prefix(row, parts.event, processes) + genericBody(row, parts.provider, ctx);
}

/** MethodILToNativeMap's pairs, a line each: "  IL->Native" (IL -2 prolog, -3 epilog). */
function ilToNativeLines(row: EventRow): string {
  const p = row.payload;
  const n = i16(p, 17);
  let s = "";
  for (let i = 0; i < n && fits(p, 19 + 4 * (n + i), 4); i++) s += `  ${i32(p, 19 + 4 * i)}->${i32(p, 19 + 4 * (n + i))}` + NL;
  return s;
}

/** Stack walk frames on one line: "  0x" and lower-case hex each, from `at`. */
function frameText(row: EventRow, at: number, count: FieldValue | undefined): string {
  const p = row.payload;
  const ptr = row.pointerSize;
  const n = typeof count === "number" ? count : Math.floor((p.length - at) / ptr);
  let s = "";
  for (let i = 0; i < n && fits(p, at + i * ptr, ptr); i++) s += "  0x" + readPtr(p, at + i * ptr, ptr).toString(16);
  return s;
}

/** The sample profiler's events (no manifest schema: their one field from the metadata decoder). */
function sampleBody(row: EventRow, cls: XmlClass): string {
  if (cls.className === "ClrThreadStackWalkTraceData") {
    const frames = Math.floor(row.payloadLength / row.pointerSize);
    return ` FrameCount="${n0(frames)}">${NL}${frameText(row, 0, frames)}${NL}</Event>`;
  }
  if (cls.className !== "ClrThreadSampleTraceData") return "/>";
  const type = Number(row.get("Type") ?? 0);
  return ` Type="${enumText(
    type,
    [
      [0, "Error"],
      [1, "External"],
      [2, "Managed"],
    ],
    false,
  )}">${NL}</Event>`;
}

/**
 * The lines of PerfView's EventPipe baselines: `Provider/Event, count, first event's XML` per name, names
 * in ordinal order; newlines in the XML written as \n and \r, then cut to 1,000 UTF-16 code units.
 */
export function* eventPipeBaselineLines(trace: PerfViewTrace): Generator<string> {
  const processes = buildProcessTable(trace);
  const ctx = new PayloadContext(trace, processes, "current");
  const order = trace.events.timeOrder();
  const row = trace.events.row(0);
  const counts = new Map<string, number>();
  const first = new Map<string, string>();
  for (let k = 0; k < order.length; k++) {
    row.index = order[k];
    if (isTraceLogBookkeeping(row)) continue;
    const parts = eventNameParts(row);
    const key = `${parts.provider}/${parts.event}`;
    const n = counts.get(key);
    if (n !== undefined) {
      counts.set(key, n + 1);
      continue;
    }
    counts.set(key, 1);
    first.set(key, eventXml(row, ctx, processes).replace(/\n/g, "\\n").replace(/\r/g, "\\r").slice(0, BASELINE_CUT));
  }
  const keys = [...counts.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const key of keys) yield `${key}, ${counts.get(key)}, ${first.get(key)}`;
}
