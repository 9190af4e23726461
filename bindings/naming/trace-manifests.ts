// Event descriptions a trace carries itself: EventSource manifests (the ManifestData events, id 0xFFFE,
// whose payload is a chunk of the provider's manifest XML) and the TDH descriptions that KernelTraceControl
// merges into a trace (MetaData/EventInfo = TRACE_EVENT_INFO, MetaData/EventMapInfo = provider GUID +
// EVENT_MAP_INFO). Both become one shape: per provider GUID, events by (id, version) with their fields.

import * as C from "../../assembly/codes.js";
import { formatGuid } from "../schema/guid.js";
import type { EventTable } from "../tables/event-table.js";
import { EventTypeTable } from "../tables/event-types.js";
import { concatBytes, type TraceData } from "../decode/result/trace-data.js";

/** TDH input types (TDH_IN_TYPE). */
export const IN = {
  UnicodeString: 1,
  AnsiString: 2,
  Int8: 3,
  UInt8: 4,
  Int16: 5,
  UInt16: 6,
  Int32: 7,
  UInt32: 8,
  Int64: 9,
  UInt64: 10,
  Float: 11,
  Double: 12,
  Boolean: 13,
  Binary: 14,
  Guid: 15,
  Pointer: 16,
  FileTime: 17,
  SystemTime: 18,
  Sid: 19,
  HexInt32: 20,
  HexInt64: 21,
  CountedString: 300,
  CountedAnsiString: 301,
  UnicodeChar: 306,
  AnsiChar: 307,
  SizeT: 308,
  HexDump: 309,
  WbemSid: 310,
} as const;

/** TDH output types used by the formatting (TDH_OUT_TYPE). */
export const OUT = {
  HexInt8: 16,
  HexInt16: 17,
  HexInt32: 18,
  HexInt64: 19,
  Pid: 20,
  Tid: 21,
  Port: 22,
  Ipv4: 23,
  Ipv6: 24,
  SocketAddress: 25,
  HResult: 32,
} as const;

const IN_BY_NAME: Record<string, number> = {
  "win:UnicodeString": 1,
  "win:AnsiString": 2,
  "win:Int8": 3,
  "win:UInt8": 4,
  "win:Int16": 5,
  "win:UInt16": 6,
  "win:Int32": 7,
  "win:UInt32": 8,
  "win:Int64": 9,
  "win:UInt64": 10,
  "win:Float": 11,
  "win:Double": 12,
  "win:Boolean": 13,
  "win:Binary": 14,
  "win:GUID": 15,
  "win:Pointer": 16,
  "win:FILETIME": 17,
  "win:SYSTEMTIME": 18,
  "win:SID": 19,
  "win:HexInt32": 20,
  "win:HexInt64": 21,
};
const OUT_BY_NAME: Record<string, number> = {
  "win:HexInt8": 16,
  "win:HexInt16": 17,
  "win:HexInt32": 18,
  "win:HexInt64": 19,
  "win:PID": 20,
  "win:TID": 21,
  "win:Port": 22,
  "win:IPv4": 23,
  "win:IPv6": 24,
  "win:SocketAddress": 25,
  "win:HResult": 32,
};

export interface DynMap {
  bitmap: boolean;
  entries: Map<number, string>;
}

export interface DynField {
  name: string;
  inType: number;
  outType: number;
  map?: string;
  /** Array element count: a fixed number, or the index of an earlier top-level field. */
  count?: { fixed: number } | { field: number };
  /** Byte or character length (binary, counted strings): fixed or from an earlier field. */
  length?: { fixed: number } | { field: number };
  /** Struct members (inType 0). */
  members?: DynField[];
}

export interface DynEvent {
  providerName: string;
  /** "Task/Opcode", "Task", or "EventID(n)". */
  eventName: string;
  fields: DynField[];
  /** Where the description came from. */
  source: "eventsource" | "tdh";
}

export interface DynProvider {
  guid: string;
  name: string;
  events: Map<number, DynEvent[]>; // by id; one entry per version (version in `versions`)
  versions: Map<number, number[]>;
  maps: Map<string, DynMap>;
}

/** The event descriptions of one trace. */
export class TraceManifests {
  readonly providers = new Map<string, DynProvider>();
  /** Descriptions that could not be read (their events stay unnamed): event row and reason. */
  readonly errors: { row: number; message: string }[] = [];

  /** Takes the providers and events of `other` that this does not describe yet. */
  adopt(other: TraceManifests): void {
    for (const [guid, p] of other.providers) {
      const mine = this.provider(guid, p.name);
      for (const [id, list] of p.events) {
        if (mine.events.has(id)) continue;
        mine.events.set(id, list);
        mine.versions.set(id, p.versions.get(id)!);
      }
      for (const [name, map] of p.maps) if (!mine.maps.has(name)) mine.maps.set(name, map);
    }
  }

  provider(guid: string, name?: string): DynProvider {
    let p = this.providers.get(guid);
    if (!p) {
      p = { guid, name: name ?? "", events: new Map(), versions: new Map(), maps: new Map() };
      this.providers.set(guid, p);
    } else if (name && !p.name) p.name = name;
    return p;
  }

  /** The description of (provider, id, version): the exact version, else the newest older one, else any. */
  find(guid: string, id: number, version: number): { event: DynEvent; provider: DynProvider } | undefined {
    const p = this.providers.get(guid);
    const list = p?.events.get(id);
    if (!p || !list || !list.length) return undefined;
    const versions = p.versions.get(id)!;
    let best = -1;
    for (let i = 0; i < versions.length; i++) {
      if (versions[i] === version) return { event: list[i], provider: p };
      if (versions[i] < version && (best < 0 || versions[i] > versions[best])) best = i;
    }
    return { event: list[best >= 0 ? best : 0], provider: p };
  }

  add(guid: string, providerName: string, id: number, version: number, event: DynEvent, replace: boolean): void {
    const p = this.provider(guid, providerName);
    let list = p.events.get(id);
    let versions = p.versions.get(id);
    if (!list || !versions) {
      p.events.set(id, (list = []));
      p.versions.set(id, (versions = []));
    }
    const at = versions.indexOf(version);
    if (at >= 0) {
      if (replace) list[at] = event;
      return;
    }
    list.push(event);
    versions.push(version);
  }
}

const cache = new WeakMap<EventTable, TraceManifests>();

/**
 * Names a table's events with descriptions gathered elsewhere (a batch of a stream, named with the
 * descriptions of the whole trace: ManifestCollector over a first pass).
 */
export function setTraceManifests(table: EventTable, manifests: TraceManifests): void {
  cache.set(table, manifests);
}

/** The descriptions found in a trace (scanned once per table). */
export function traceManifests(table: EventTable): TraceManifests {
  let m = cache.get(table);
  if (!m) {
    m = collect(table);
    cache.set(table, m);
  }
  return m;
}

const METADATA_GUID = "bbccf6c1-6cd1-48c4-80ff-839482e37671";

function collect(table: EventTable): TraceManifests {
  return new ManifestCollector().scan(table).result;
}

/**
 * Gathers descriptions table by table, for a trace read in batches: an EventSource manifest sent in
 * chunks may span batches.
 */
export class ManifestCollector {
  readonly result = new TraceManifests();
  private readonly chunks = new Map<string, { total: number; parts: Uint8Array[]; got: number }>();

  scan(table: EventTable): this {
    const out = this.result;
    const chunks = this.chunks;
    // descriptions the table came with (an EventPipe file's metadata) are kept too
    const given = cache.get(table);
    if (given && given !== out) out.adopt(given);
    const c = table.columns;
    const bytes = table.data.bytes;
    if (!table.recordBytes) return this;
    let metaProvider = -1;
    for (let i = 0; i < table.providers.length; i++) if (table.providers.get(i).guid === METADATA_GUID) metaProvider = i;
    // (most tables, and most batches of a stream, have none: their rows are not read)
    if (!mayHoldDescriptions(table.data, metaProvider)) return this;
    for (let i = 0; i < table.length; i++) {
      const ht = c.headerType[i];
      const off = c.payloadOffset[i];
      const len = c.payloadLength[i];
      if ((ht === C.HT_EVENT_HEADER32 || ht === C.HT_EVENT_HEADER64) && c.eventId[i] === 0xfffe && len > 8) {
        // EventSource ManifestData: Format, MajorVersion, MinorVersion, Magic (0x5B), TotalChunks u16, ChunkNumber u16, XML
        if (bytes[off + 3] !== 0x5b) continue;
        const guid = table.providers.get(c.provider[i]).guid;
        const total = bytes[off + 4] | (bytes[off + 5] << 8);
        const n = bytes[off + 6] | (bytes[off + 7] << 8);
        let st = chunks.get(guid);
        if (!st || n === 0) chunks.set(guid, (st = { total, parts: new Array(total), got: 0 }));
        if (n < st.total && !st.parts[n]) {
          // (a copy: the batch's bytes go when it does)
          st.parts[n] = bytes.slice(off + 8, off + len);
          st.got++;
        }
        if (st.got === st.total) {
          const xml = new TextDecoder().decode(concatBytes(st.parts));
          chunks.delete(guid);
          try {
            parseManifestXml(xml, out);
          } catch (error) {
            out.errors.push({ row: i, message: `EventSource manifest of ${guid}: ${String(error)}` });
          }
        }
      } else if (c.provider[i] === metaProvider && metaProvider >= 0) {
        const payload = bytes.subarray(off, off + len);
        try {
          if (c.opcode[i] === 32) parseEventInfo(payload, out);
          else if (c.opcode[i] === 33) parseEventMapInfo(payload, out);
        } catch (error) {
          out.errors.push({ row: i, message: `TDH description (opcode ${c.opcode[i]}): ${String(error)}` });
        }
      }
    }
    return this;
  }
}

/**
 * Whether rows of `data` can be EventSource manifests (event id 0xFFFE, EVENT_HEADER) or TDH
 * descriptions (the metadata provider, index `metaProvider`), by the event type table's counts.
 */
function mayHoldDescriptions(data: TraceData, metaProvider: number): boolean {
  const types = new EventTypeTable(data);
  // (rows past a full type table have no type to go by)
  if (types.length >= C.MAX_EVENT_TYPES) return true;
  for (let t = 0; t < types.length; t++) {
    if (!types.count[t]) continue;
    const ht = types.headerType[t];
    if ((ht === C.HT_EVENT_HEADER32 || ht === C.HT_EVENT_HEADER64) && types.eventId[t] === 0xfffe) return true;
    if (types.provider[t] === metaProvider) return true;
  }
  return false;
}

// ---------------------------------------------------------------- TDH (TRACE_EVENT_INFO)

function utf16At(b: Uint8Array, at: number): string {
  if (!at || at >= b.length) return "";
  let s = "";
  for (let p = at; p + 1 < b.length; p += 2) {
    const ch = b[p] | (b[p + 1] << 8);
    if (!ch) break;
    s += String.fromCharCode(ch);
  }
  return s;
}

function parseEventInfo(b: Uint8Array, out: TraceManifests): void {
  if (b.length < 112) return;
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  const u32 = (o: number) => v.getUint32(o, true);
  const guid = formatGuid(b, 0);
  const id = v.getUint16(32, true);
  const version = b[34];
  const opcode = b[37];
  const providerName = utf16At(b, u32(52));
  const taskName = utf16At(b, u32(68)).trim();
  let opcodeName = utf16At(b, u32(72)).trim();
  if (opcodeName.startsWith("win:")) opcodeName = opcodeName.slice(4);
  const propertyCount = u32(100);
  const topLevel = u32(104);
  const props: { flags: number; name: string; a: number; b: number; map: number; count: number; length: number }[] = [];
  for (let k = 0; k < propertyCount && 112 + 24 * k + 24 <= b.length; k++) {
    const at = 112 + 24 * k;
    props.push({
      flags: u32(at),
      name: utf16At(b, u32(at + 4)),
      a: v.getUint16(at + 8, true),
      b: v.getUint16(at + 10, true),
      map: u32(at + 12),
      count: v.getUint16(at + 16, true),
      length: v.getUint16(at + 18, true),
    });
  }
  const field = (k: number): DynField => {
    const p = props[k];
    const f: DynField = { name: p.name, inType: p.flags & 1 ? 0 : p.a, outType: p.flags & 1 ? 0 : p.b };
    if (p.flags & 1) {
      f.members = [];
      for (let m = p.a; m < p.a + p.b && m < props.length; m++) f.members.push(field(m));
    } else if (p.map) f.map = utf16At(b, p.map);
    if (p.flags & 4) f.count = { field: p.count };
    else if (p.count > 1 || p.flags & 0x20) f.count = { fixed: p.count };
    if (p.flags & 2) f.length = { field: p.length };
    else if (p.length && (f.inType === IN.Binary || f.inType === IN.UnicodeString || f.inType === IN.AnsiString)) {
      f.length = { fixed: p.length };
    }
    return f;
  };
  const fields: DynField[] = [];
  for (let k = 0; k < topLevel && k < props.length; k++) fields.push(field(k));
  const eventName = !taskName ? `EventID(${id})` : opcode === 0 || !opcodeName ? taskName : `${taskName}/${opcodeName}`;
  out.add(guid, providerName, id, version, { providerName, eventName, fields, source: "tdh" }, false);
}

function parseEventMapInfo(b: Uint8Array, out: TraceManifests): void {
  if (b.length < 32) return;
  const guid = formatGuid(b, 0);
  const m = b.subarray(16);
  const v = new DataView(m.buffer, m.byteOffset, m.length);
  const name = utf16At(m, v.getUint32(0, true));
  const flag = v.getUint32(4, true);
  const count = v.getUint32(8, true);
  const entries = new Map<number, string>();
  for (let k = 0; k < count && 16 + 8 * k + 8 <= m.length; k++) {
    const text = utf16At(m, v.getUint32(16 + 8 * k, true)).trim();
    entries.set(v.getUint32(20 + 8 * k, true), text);
  }
  // MAP_FLAGS: 1 manifest value map, 2 manifest bitmap, 4 manifest pattern map, 8 WBEM value map, 0x10 WBEM bitmap
  const p = out.provider(guid);
  if (!p.maps.has(name)) p.maps.set(name, { bitmap: (flag & 0x12) !== 0, entries });
}

// ---------------------------------------------------------------- EventSource manifest XML

interface XmlElement {
  tag: string;
  attrs: Record<string, string>;
  children: XmlElement[];
}

function decodeEntities(s: string): string {
  return s.replace(/&(lt|gt|amp|quot|apos|#x[0-9a-fA-F]+|#\d+);/g, (_, e: string) => {
    if (e === "lt") return "<";
    if (e === "gt") return ">";
    if (e === "amp") return "&";
    if (e === "quot") return '"';
    if (e === "apos") return "'";
    return String.fromCodePoint(e[1] === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
  });
}

/** A small XML reader: elements and attributes only (text, comments and declarations are skipped). */
function parseXml(xml: string): XmlElement {
  const root: XmlElement = { tag: "#root", attrs: {}, children: [] };
  const stack = [root];
  const tagRe =
    /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>|<![^>]*>/g;
  const attrRe = /([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
  let m: RegExpExecArray | null;
  while ((m = tagRe.exec(xml))) {
    if (!m[2]) continue;
    if (m[1]) {
      while (stack.length > 1 && stack.pop()!.tag !== m[2]);
      continue;
    }
    const attrs: Record<string, string> = {};
    let a: RegExpExecArray | null;
    attrRe.lastIndex = 0;
    while ((a = attrRe.exec(m[3]))) attrs[a[1]] = decodeEntities(a[2] ?? a[3] ?? "");
    const el: XmlElement = { tag: m[2], attrs, children: [] };
    stack[stack.length - 1].children.push(el);
    if (!m[4]) stack.push(el);
  }
  return root;
}

function* walk(el: XmlElement, tag: string): Generator<XmlElement> {
  for (const c of el.children) {
    if (c.tag === tag) yield c;
    yield* walk(c, tag);
  }
}

function first(el: XmlElement, tag: string): XmlElement | undefined {
  for (const c of walk(el, tag)) return c;
  return undefined;
}

const STANDARD_OPCODES: Record<string, [number, string]> = {
  "win:Info": [0, "Info"],
  "win:Start": [1, "Start"],
  "win:Stop": [2, "Stop"],
  "win:DC_Start": [3, "DCStart"],
  "win:DC_Stop": [4, "DCStop"],
  "win:Extension": [5, "Extension"],
  "win:Reply": [6, "Reply"],
  "win:Resume": [7, "Resume"],
  "win:Suspend": [8, "Suspend"],
  "win:Send": [9, "Send"],
  "win:Receive": [240, "Receive"],
};

function parseManifestXml(xml: string, out: TraceManifests): void {
  const doc = parseXml(xml);
  const strings = new Map<string, string>();
  for (const s of walk(doc, "string")) if (s.attrs.id !== undefined) strings.set(s.attrs.id, s.attrs.value ?? "");
  const resolve = (text: string | undefined): string | undefined => {
    if (text === undefined) return undefined;
    const m = /^\$\(string\.(.*)\)$/.exec(text);
    return m ? (strings.get(m[1]) ?? m[1]) : text;
  };
  for (const prov of walk(doc, "provider")) {
    const guid = (prov.attrs.guid ?? "").replace(/[{}]/g, "").toLowerCase();
    const providerName = prov.attrs.name ?? "";
    if (!guid) continue;
    const p = out.provider(guid, providerName);
    const tasks = new Map<string, { value: number; opcodes: Map<string, [number, string]> }>();
    const tasksEl = first(prov, "tasks");
    if (tasksEl) {
      for (const t of tasksEl.children.filter((c) => c.tag === "task")) {
        const ops = new Map<string, [number, string]>();
        for (const o of walk(t, "opcode")) ops.set(o.attrs.name, [Number(o.attrs.value), o.attrs.name]);
        tasks.set(t.attrs.name, { value: Number(t.attrs.value), opcodes: ops });
      }
    }
    const opcodes = new Map<string, [number, string]>();
    const opcodesEl = prov.children.find((c) => c.tag === "opcodes");
    if (opcodesEl) for (const o of opcodesEl.children) if (o.tag === "opcode") opcodes.set(o.attrs.name, [Number(o.attrs.value), o.attrs.name]);
    const mapsEl = first(prov, "maps");
    if (mapsEl) {
      for (const m of mapsEl.children) {
        if (m.tag !== "valueMap" && m.tag !== "bitMap") continue;
        const entries = new Map<number, string>();
        for (const e of m.children) if (e.tag === "map") entries.set(Number(e.attrs.value), resolve(e.attrs.message) ?? "");
        p.maps.set(m.attrs.name, { bitmap: m.tag === "bitMap", entries });
      }
    }
    const templates = new Map<string, DynField[]>();
    const templatesEl = first(prov, "templates");
    if (templatesEl) {
      for (const t of templatesEl.children) {
        if (t.tag !== "template") continue;
        const fields: DynField[] = [];
        const index = new Map<string, number>();
        const toField = (d: XmlElement): DynField => {
          const f: DynField = { name: d.attrs.name, inType: IN_BY_NAME[d.attrs.inType] ?? 0, outType: OUT_BY_NAME[d.attrs.outType] ?? 0 };
          if (d.attrs.map) f.map = d.attrs.map;
          const ref = (x: string | undefined) =>
            x === undefined ? undefined : /^\d+$/.test(x) ? { fixed: Number(x) } : index.has(x) ? { field: index.get(x)! } : undefined;
          const count = ref(d.attrs.count);
          if (count) f.count = count;
          const length = ref(d.attrs.length);
          if (length) f.length = length;
          if (d.tag === "struct") f.members = d.children.filter((c) => c.tag === "data" || c.tag === "struct").map(toField);
          return f;
        };
        for (const d of t.children) {
          if (d.tag !== "data" && d.tag !== "struct") continue;
          index.set(d.attrs.name, fields.length);
          fields.push(toField(d));
        }
        templates.set(t.attrs.tid, fields);
      }
    }
    const eventsEl = first(prov, "events");
    if (!eventsEl) continue;
    for (const e of eventsEl.children) {
      if (e.tag !== "event") continue;
      const id = Number(e.attrs.value);
      const version = Number(e.attrs.version ?? 0);
      const taskName = e.attrs.task ?? "";
      const task = tasks.get(taskName);
      let opcodeName = "";
      let opcodeValue = 0;
      const op = e.attrs.opcode;
      if (op) {
        const std = STANDARD_OPCODES[op];
        const own = task?.opcodes.get(op) ?? opcodes.get(op);
        if (std) [opcodeValue, opcodeName] = std;
        else if (own) [opcodeValue, opcodeName] = own;
        else opcodeName = op;
      }
      const name = taskName || e.attrs.symbol || "";
      const eventName = !name ? `EventID(${id})` : opcodeValue === 0 ? name : `${name}/${opcodeName}`;
      const fields = e.attrs.template ? (templates.get(e.attrs.template) ?? []) : [];
      out.add(guid, providerName, id, version, { providerName, eventName, fields, source: "eventsource" }, true);
    }
  }
}
