#!/usr/bin/env node
// Generates bindings/schema/generated/clr-schema.ts from the .NET runtime manifest summary
// (../shared/spec/clr-events.json). The output is committed: a user's build never needs ../shared.
//   node scripts/gen-clr-schema.mjs [path/to/clr-events.json]
//
// The schema is written packed, a string table and a stream of small integers, and unpacked into
// CLR_PROVIDERS and CLR_EVENTS by bindings/schema/clr-payload.ts; the unpacked objects equal what
// schemaFromSpec() returns here (test/clr-schema.test.ts checks it against the manifest).
//
// The string table is the strings joined by "|", in the order of their first use. The integers are
// read in this order:
//
//   providers  count, then per provider: str name, str guid, its event count, its value-map count
//              and that many (str map name, body), its bit-map count and that many (str, body).
//   events     per event (the providers' events in order): head, keywords, fields, symbol.
//              head: 0 = the next version of the previous event (its id, task, opcode, level and
//              name; version + 1); else 1 + zigzag(id - the previous event's id), version, task,
//              opcode, level, the task part of the name (0 = the part last read with this
//              provider and task, else 1 + str) and the opcode part (0 = none, 1 = the part last
//              read with this provider and opcode, else 2 + str). The name is
//              "Provider/TaskPart[/OpcodePart]".
//              keywords: 0 = the previous event's, else 1 + str. fields: list.
//              symbol: code < 10 = symbolCandidates(...)[code], else 10 + str.
//   str        0 = the next string of the table not used yet; 1 + i = the table's string i.
//   body       0 = a new map body: entry count, then per entry a value code (0 = the previous
//              value + 1, the first "previous" being -1; 1..32 = 2^(code - 1); else value + 33)
//              and str text; 1 + i = the i-th body read.
//   list       2d + 1 = the list d places back from the newest one read; 0 = a new list; 2d + 2 =
//              a new list starting with the fields of the list d places back. A new list then has
//              the count of its (further) fields and a def each. A list is read once all of it
//              (with its definitions' lists) is.
//   def        0 = a new field definition: str name, code = type + 20 * (hex | map << 1 |
//              count << 2 | length << 3 | fields << 4 | padded << 5), then as flagged: str map,
//              str count, str length, list fields, and for padded struct arrays elementSize32,
//              elementSize64, the 32-bit then the 64-bit element offsets (one per field);
//              1 + i = the i-th definition read (a definition is read once its list is).
//
// Every integer is written as base-45 digits: leading digits from the characters of code 80..125
// (92, the backslash, skipped), the last digit from code 35..79. A leading digit d counts as d + 1
// times the weight of its place (bijective: no digit string has two readings). No character below
// 35 (so no '"') occurs.

import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const TYPES = {
  "win:UInt8": 1,
  "win:Int8": 2,
  "win:UInt16": 3,
  "win:Int16": 4,
  "win:UInt32": 5,
  "win:Int32": 6,
  "win:HexInt32": 5,
  "win:UInt64": 7,
  "win:Int64": 8,
  "win:HexInt64": 7,
  "win:Float": 9,
  "win:Double": 10,
  "win:Boolean": 11,
  "win:Pointer": 12,
  "win:GUID": 13,
  "win:FILETIME": 14,
  "win:SYSTEMTIME": 15,
  "win:UnicodeString": 16,
  "win:AnsiString": 17,
  "win:Binary": 18,
  struct: 19,
};

function field(f, stackWalk) {
  const type = TYPES[f.inType];
  if (!type) throw new Error(`unknown inType ${f.inType} (${f.name})`);
  const o = { name: f.name, type };
  if (f.outType === "win:HexInt32" || f.outType === "win:HexInt64" || f.inType.startsWith("win:Hex")) o.hex = 1;
  if (f.map) o.map = f.map;
  // The runtime writes FrameCount frames although the manifest says count="2" (see clr-events.md 5.1).
  if (stackWalk && f.name === "Stack") o.count = "FrameCount";
  else if (f.count !== undefined) o.count = String(f.count);
  if (f.length !== undefined) o.length = String(f.length);
  if (f.fields) {
    o.fields = f.fields.map((x) => field(x, false));
    // Padded C-struct elements (GCLOHCompact, GCFitBucketInfo) carry their real element layout.
    if (f.elementSize64 != null) {
      o.elementSize32 = f.elementSize32;
      o.elementSize64 = f.elementSize64;
      o.elementOffsets32 = f.fields.map((x) => x.elementOffset32);
      o.elementOffsets64 = f.fields.map((x) => x.elementOffset64);
    }
  }
  return o;
}

const strip = (s) => (s ?? "").replace(/^win:/, "");

/** The schema as CLR_PROVIDERS and CLR_EVENTS hold it (ClrProviderSchema[], ClrEventSchema[]). */
export function schemaFromSpec(spec) {
  const providers = spec.providers.map((p) => ({
    name: p.name,
    guid: p.guid,
    valueMaps: Object.fromEntries(
      Object.entries(p.maps?.valueMap ?? {}).map(([k, m]) => [k, Object.fromEntries(Object.entries(m).map(([v, t]) => [Number(v), t]))]),
    ),
    bitMaps: Object.fromEntries(Object.entries(p.maps?.bitMap ?? {}).map(([k, m]) => [k, Object.entries(m).map(([v, t]) => [Number(v), t])])),
  }));
  const events = [];
  spec.providers.forEach((p, pi) => {
    for (const e of p.events) {
      const stackWalk = (e.notes ?? []).some((n) => n.includes("FrameCount pointers"));
      // TraceEvent's name where it has one; otherwise Provider/Task/Opcode from the manifest's display strings.
      const task = e.taskMessage ?? e.taskName ?? `Task(${e.task})`;
      const opcode = e.opcode === 0 ? "" : "/" + (e.opcodeMessage ?? strip(e.opcodeName));
      events.push({
        provider: pi,
        id: e.id,
        version: e.version,
        symbol: e.symbol,
        name: e.traceEventName ?? `${p.name}/${task}${opcode}`,
        task: e.task,
        opcode: e.opcode,
        level: e.level,
        keywords: e.keywords,
        fields: e.fields.map((f) => field(f, stackWalk)),
      });
    }
  });
  return { providers, events };
}

/**
 * What an event's symbol usually is (the unpacker computes the same list): the symbol of the first
 * event with its provider and id, with "_V<version>"; the name's parts run together, alone or with
 * "_V<version>"; its last part; and both of these with a final "Stop" written "End", or "Start"
 * written "Begin" or dropped.
 */
export function symbolCandidates(first, parts, version) {
  const joined = parts.join("");
  const last = parts[parts.length - 1];
  const list = [first === undefined ? "" : `${first}_V${version}`, joined, `${joined}_V${version}`, last];
  for (const s of [joined, last]) list.push(s.replace(/Stop$/, "End"), s.replace(/Start$/, "Begin"), s.replace(/Start$/, ""));
  return list;
}
const SYMBOL_CANDIDATES = 10; // symbolCandidates(...).length

const LAST = 35; // the last digit of a number: 35..79
const LEAD = 80; // leading digits: 80..125, 92 (backslash) skipped
const BASE = 45;

function digits(n) {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`cannot pack ${n}`);
  let s = String.fromCharCode(LAST + (n % BASE));
  n = Math.floor(n / BASE);
  while (n > 0) {
    n -= 1;
    const d = LEAD + (n % BASE);
    s = String.fromCharCode(d >= 92 ? d + 1 : d) + s;
    n = Math.floor(n / BASE);
  }
  return s;
}

const zigzag = (n) => (n >= 0 ? 2 * n : -2 * n - 1);
const SEP = "|";
const FIELD_KEYS = ["name", "type", "hex", "map", "count", "length", "fields", "elementSize32", "elementSize64", "elementOffsets32", "elementOffsets64"];
const EVENT_KEYS = ["provider", "id", "version", "symbol", "name", "task", "opcode", "level", "keywords", "fields"];

/** Packs { providers, events } into { strings, numbers } (see the format at the top). */
export function packSchema({ providers, events }) {
  const numbers = [];
  const n = (x) => numbers.push(x);
  const table = [];
  const stringIndex = new Map();
  // A string: `skip` + 0 for the next new one of the table, `skip` + 1 + i for table[i].
  const str = (s, skip = 0) => {
    if (typeof s !== "string") throw new Error(`not a string: ${s}`);
    const i = stringIndex.get(s);
    if (i !== undefined) return n(skip + 1 + i);
    if (s.includes(SEP)) throw new Error(`string holds the separator: ${s}`);
    stringIndex.set(s, table.length);
    table.push(s);
    n(skip);
  };
  const bodies = new Map();
  const body = (entries) => {
    const key = JSON.stringify(entries);
    if (bodies.has(key)) return n(1 + bodies.get(key));
    n(0);
    n(entries.length);
    let prev = -1;
    for (const [v, t] of entries) {
      if (!Number.isSafeInteger(v) || v < 0) throw new Error(`map value ${v}`);
      if (v === prev + 1) n(0);
      else if (v > 0 && v <= 2 ** 31 && 2 ** Math.round(Math.log2(v)) === v) n(1 + Math.log2(v));
      else n(v + 33);
      str(t);
      prev = v;
    }
    bodies.set(key, bodies.size);
  };
  const defs = new Map();
  const def = (f) => {
    const key = JSON.stringify(f);
    if (defs.has(key)) return n(1 + defs.get(key));
    n(0);
    if (Object.keys(f).some((k, i, keys) => FIELD_KEYS.indexOf(k) < 0 || (i > 0 && FIELD_KEYS.indexOf(k) < FIELD_KEYS.indexOf(keys[i - 1]))))
      throw new Error(`field keys of ${f.name}`);
    if (!(f.type >= 1 && f.type <= 19) || (f.hex !== undefined && f.hex !== 1)) throw new Error(`field ${f.name}`);
    const padded = f.elementSize64 !== undefined;
    if (
      padded !== (f.elementSize32 !== undefined) ||
      padded !== (f.elementOffsets32 !== undefined) ||
      padded !== (f.elementOffsets64 !== undefined) ||
      (padded && !f.fields)
    )
      throw new Error(`padded ${f.name}`);
    str(f.name);
    n(
      f.type +
        20 *
          ((f.hex ? 1 : 0) |
            (f.map !== undefined ? 2 : 0) |
            (f.count !== undefined ? 4 : 0) |
            (f.length !== undefined ? 8 : 0) |
            (f.fields ? 16 : 0) |
            (padded ? 32 : 0)),
    );
    if (f.map !== undefined) str(f.map);
    if (f.count !== undefined) str(f.count);
    if (f.length !== undefined) str(f.length);
    if (f.fields) list(f.fields);
    if (padded) {
      n(f.elementSize32);
      n(f.elementSize64);
      for (const o of [f.elementOffsets32, f.elementOffsets64]) {
        if (o.length !== f.fields.length) throw new Error(`element offsets of ${f.name}`);
        o.forEach(n);
      }
    }
    defs.set(key, defs.size);
  };
  const lists = []; // field-definition keys of each list, in the order the unpacker completes them
  const listIndex = new Map();
  const list = (fields) => {
    const keys = fields.map((f) => JSON.stringify(f));
    const key = JSON.stringify(keys);
    // Lists are referred to by distance back from the newest.
    if (listIndex.has(key)) return n(2 * (lists.length - 1 - listIndex.get(key)) + 1);
    let base = -1;
    lists.forEach((o, j) => {
      if (o.length <= keys.length && (base < 0 || o.length > lists[base].length) && o.every((k, i) => k === keys[i])) base = j;
    });
    const from = base < 0 ? 0 : lists[base].length;
    n(base < 0 ? 0 : 2 * (lists.length - 1 - base) + 2);
    n(keys.length - from);
    for (let i = from; i < fields.length; i++) def(fields[i]);
    listIndex.set(key, lists.length);
    lists.push(keys);
  };

  n(providers.length);
  providers.forEach((p, pi) => {
    if (Object.keys(p).join() !== "name,guid,valueMaps,bitMaps") throw new Error(`provider keys of ${p.name}`);
    str(p.name);
    str(p.guid);
    n(events.filter((e) => e.provider === pi).length);
    n(Object.keys(p.valueMaps).length);
    for (const [name, m] of Object.entries(p.valueMaps)) {
      str(name);
      body(Object.entries(m).map(([v, t]) => [Number(v), t]));
    }
    n(Object.keys(p.bitMaps).length);
    for (const [name, m] of Object.entries(p.bitMaps)) {
      str(name);
      body(m);
    }
  });

  if (events.some((e, i) => i > 0 && e.provider < events[i - 1].provider)) throw new Error("events are not grouped by provider");
  let prev;
  const taskPart = new Map();
  const opcodePart = new Map();
  const firstSymbol = new Map();
  for (const e of events) {
    if (Object.keys(e).join() !== EVENT_KEYS.join()) throw new Error(`event keys of ${e.symbol}`);
    const prefix = providers[e.provider].name + "/";
    if (!e.name.startsWith(prefix)) throw new Error(`name ${e.name} lacks its provider`);
    const parts = e.name.slice(prefix.length).split("/");
    if (parts.length > 2) throw new Error(`name ${e.name} has more than two parts`);
    if (
      prev &&
      e.id === prev.id &&
      e.version === prev.version + 1 &&
      e.task === prev.task &&
      e.opcode === prev.opcode &&
      e.level === prev.level &&
      e.name === prev.name
    ) {
      n(0); // the next version of the previous event
    } else {
      n(1 + zigzag(e.id - (prev?.id ?? 0)));
      n(e.version);
      n(e.task);
      n(e.opcode);
      n(e.level);
      const tk = `${e.provider}:${e.task}`;
      if (taskPart.get(tk) === parts[0]) n(0);
      else str(parts[0], 1);
      taskPart.set(tk, parts[0]);
      const ok = `${e.provider}:${e.opcode}`;
      if (parts.length === 1) n(0);
      else if (opcodePart.get(ok) === parts[1]) n(1);
      else str(parts[1], 2);
      if (parts.length === 2) opcodePart.set(ok, parts[1]);
    }
    if (e.keywords === prev?.keywords) n(0);
    else str(e.keywords, 1);
    list(e.fields);
    const group = `${e.provider}:${e.id}`;
    if (!e.symbol) throw new Error(`event ${e.name} has no symbol`);
    const c = symbolCandidates(firstSymbol.get(group), parts, e.version).indexOf(e.symbol);
    if (c >= 0) n(c);
    else str(e.symbol, SYMBOL_CANDIDATES);
    if (!firstSymbol.has(group)) firstSymbol.set(group, e.symbol);
    prev = e;
  }
  return { strings: table.join(SEP), numbers: numbers.map(digits).join("") };
}

export function render(spec) {
  const { strings, numbers } = packSchema(schemaFromSpec(spec));
  return `// Generated by scripts/gen-clr-schema.mjs from clr-events.json (the .NET runtime manifest,
// ${spec.source?.repository ?? ""} ${spec.source?.path ?? ""} @ ${spec.source?.commit ?? ""}). Do not edit.
// Packed (the format is described in the generator); clr-payload.ts unpacks it into CLR_PROVIDERS and CLR_EVENTS.
/* eslint-disable */

/** The string table, "${SEP}"-separated. */
export const CLR_SCHEMA_STRINGS = ${JSON.stringify(strings)};

/** The integers, as digits. */
export const CLR_SCHEMA_NUMBERS = ${JSON.stringify(numbers)};
`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const src = process.argv[2] ?? fileURLToPath(new URL("../../shared/spec/clr-events.json", import.meta.url));
  const out = fileURLToPath(new URL("../bindings/schema/generated/clr-schema.ts", import.meta.url));
  const spec = JSON.parse(readFileSync(src, "utf8"));
  writeFileSync(out, render(spec));
  const { providers, events } = schemaFromSpec(spec);
  console.log(`wrote ${out}: ${providers.length} providers, ${events.length} events`);
}
