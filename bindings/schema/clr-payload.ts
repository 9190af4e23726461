// .NET runtime payloads, decoded lazily from the record bytes with the generated schema. Fields
// after the first variable-length one are found by walking; nothing is read past the payload.

import * as C from "../../assembly/codes.js";
import { CLR_SCHEMA_NUMBERS, CLR_SCHEMA_STRINGS } from "./generated/clr-schema.js";
import type { ClrEventSchema, ClrFieldSchema, ClrProviderSchema } from "./clr-schema-types.js";
import { formatGuid } from "./guid.js";

/**
 * What an event's symbol usually is, listed as scripts/gen-clr-schema.mjs lists it: the symbol of the
 * first event with its provider and id, with "_V<version>"; the name's parts run together, alone or
 * with "_V<version>"; its last part; and both of these with a final "Stop" written "End", or "Start"
 * written "Begin" or dropped.
 */
function symbolCandidates(first: string | undefined, parts: string[], version: number): string[] {
  const joined = parts.join("");
  const last = parts[parts.length - 1];
  const list = [first === undefined ? "" : `${first}_V${version}`, joined, `${joined}_V${version}`, last];
  for (const s of [joined, last]) list.push(s.replace(/Stop$/, "End"), s.replace(/Start$/, "Begin"), s.replace(/Start$/, ""));
  return list;
}

function copyField(f: ClrFieldSchema): ClrFieldSchema {
  const o = { ...f };
  if (f.fields) o.fields = f.fields.map(copyField);
  if (f.elementOffsets32) o.elementOffsets32 = f.elementOffsets32.slice();
  if (f.elementOffsets64) o.elementOffsets64 = f.elementOffsets64.slice();
  return o;
}

/**
 * Unpacks the generated schema; the format is described in scripts/gen-clr-schema.mjs. Every event
 * gets field objects of its own, as if written out one by one.
 */
function unpackSchema(strings: string, numbers: string): { providers: ClrProviderSchema[]; events: ClrEventSchema[] } {
  const table = strings.split("|");
  let pos = 0;
  let fresh = 0;
  const num = (): number => {
    let n = 0;
    for (;;) {
      const c = numbers.charCodeAt(pos++);
      if (c < 80) return n * 45 + c - 35;
      n = n * 45 + c - (c > 92 ? 80 : 79);
    }
  };
  const str = (code: number): string => table[code ? code - 1 : fresh++];

  const bodies: [number, string][][] = [];
  const body = (): [number, string][] => {
    const k = num();
    if (k) return bodies[k - 1];
    const entries: [number, string][] = [];
    for (let i = num(), v = -1; i > 0; i--) {
      const code = num();
      v = code === 0 ? v + 1 : code <= 32 ? 2 ** (code - 1) : code - 33;
      entries.push([v, str(num())]);
    }
    bodies.push(entries);
    return entries;
  };

  const defs: ClrFieldSchema[] = [];
  const lists: ClrFieldSchema[][] = [];
  const def = (): ClrFieldSchema => {
    const k = num();
    if (k) return defs[k - 1];
    const name = str(num());
    const code = num();
    const f: ClrFieldSchema = { name, type: code % 20 };
    const flags = Math.floor(code / 20);
    if (flags & 1) f.hex = 1;
    if (flags & 2) f.map = str(num());
    if (flags & 4) f.count = str(num());
    if (flags & 8) f.length = str(num());
    if (flags & 16) f.fields = list();
    if (flags & 32) {
      f.elementSize32 = num();
      f.elementSize64 = num();
      f.elementOffsets32 = f.fields!.map(() => num());
      f.elementOffsets64 = f.fields!.map(() => num());
    }
    defs.push(f);
    return f;
  };
  const list = (): ClrFieldSchema[] => {
    const k = num();
    if (k & 1) return lists[lists.length - 1 - (k - 1) / 2];
    const fields = k ? lists[lists.length - 1 - (k - 2) / 2].slice() : [];
    for (let i = num(); i > 0; i--) fields.push(def());
    lists.push(fields);
    return fields;
  };

  const providers: ClrProviderSchema[] = [];
  const counts: number[] = [];
  for (let i = num(); i > 0; i--) {
    const p: ClrProviderSchema = { name: str(num()), guid: str(num()), valueMaps: {}, bitMaps: {} };
    counts.push(num());
    for (let j = num(); j > 0; j--) {
      const name = str(num());
      p.valueMaps[name] = Object.fromEntries(body());
    }
    for (let j = num(); j > 0; j--) {
      const name = str(num());
      p.bitMaps[name] = body().map(([v, t]): [number, string] => [v, t]);
    }
    providers.push(p);
  }

  const events: ClrEventSchema[] = [];
  const taskParts = new Map<string, string>();
  const opcodeParts = new Map<string, string>();
  const firstSymbols = new Map<string, string>();
  let prev: ClrEventSchema | undefined;
  let parts: string[] = [];
  counts.forEach((count, provider) => {
    for (; count > 0; count--) {
      const head = num();
      let { id, version, task, opcode, level } = prev ?? { id: 0, version: 0, task: 0, opcode: 0, level: 0 };
      if (head === 0) version++;
      else {
        const z = head - 1;
        id += z & 1 ? -(z + 1) / 2 : z / 2;
        version = num();
        task = num();
        opcode = num();
        level = num();
        const t = num();
        const taskPart = t ? str(t - 1) : taskParts.get(`${provider}:${task}`)!;
        taskParts.set(`${provider}:${task}`, taskPart);
        const o = num();
        parts = [taskPart];
        if (o) {
          parts.push(o === 1 ? opcodeParts.get(`${provider}:${opcode}`)! : str(o - 2));
          opcodeParts.set(`${provider}:${opcode}`, parts[1]);
        }
      }
      const kw = num();
      const keywords = kw ? str(kw - 1) : prev!.keywords;
      const fields = list();
      const group = `${provider}:${id}`;
      const s = num();
      const symbol = s < 10 ? symbolCandidates(firstSymbols.get(group), parts, version)[s] : str(s - 10);
      if (!firstSymbols.has(group)) firstSymbols.set(group, symbol);
      const name = `${providers[provider].name}/${parts.join("/")}`;
      prev = { provider, id, version, symbol, name, task, opcode, level, keywords, fields: fields.map(copyField) };
      events.push(prev);
    }
  });
  return { providers, events };
}

const schema = /* @__PURE__ */ unpackSchema(CLR_SCHEMA_STRINGS, CLR_SCHEMA_NUMBERS);

/** The providers of the .NET runtime manifest. */
export const CLR_PROVIDERS: ClrProviderSchema[] = schema.providers;

/** Every event (provider, id, version) of the .NET runtime manifest, in manifest order. */
export const CLR_EVENTS: ClrEventSchema[] = schema.events;

let indexes:
  | { providerByGuid: Map<string, number>; byKey: Map<string, ClrEventSchema>; versionsById: Map<string, number[]>; byName: Map<string, ClrEventSchema[]> }
  | undefined;

/** The lookups, built on first use. */
function index() {
  if (indexes) return indexes;
  const providerByGuid = new Map(CLR_PROVIDERS.map((p, i) => [p.guid, i]));
  const byKey = new Map<string, ClrEventSchema>();
  const versionsById = new Map<string, number[]>();
  for (const e of CLR_EVENTS) {
    byKey.set(`${e.provider}:${e.id}:${e.version}`, e);
    const k = `${e.provider}:${e.id}`;
    const list = versionsById.get(k) ?? [];
    list.push(e.version);
    versionsById.set(
      k,
      list.sort((a, b) => a - b),
    );
  }
  const byName = new Map<string, ClrEventSchema[]>();
  for (const e of CLR_EVENTS) {
    const list = byName.get(e.name) ?? [];
    list.push(e);
    byName.set(e.name, list);
  }
  return (indexes = { providerByGuid, byKey, versionsById, byName });
}

export function clrProviderIndex(guid: string): number {
  return index().providerByGuid.get(guid) ?? -1;
}

/**
 * The schema for (provider, id, version). A version newer than the manifest knows falls back to the
 * newest known one (newer versions append fields; the extra bytes are ignored).
 */
export function findClrEvent(provider: number, id: number, version: number): ClrEventSchema | undefined {
  const { byKey, versionsById } = index();
  const exact = byKey.get(`${provider}:${id}:${version}`);
  if (exact || provider < 0) return exact;
  const versions = versionsById.get(`${provider}:${id}`);
  if (!versions) return undefined;
  let best = -1;
  for (const v of versions) if (v <= version) best = v;
  return best >= 0 ? byKey.get(`${provider}:${id}:${best}`) : undefined;
}

/** Every schema version printed under a TraceEvent name, e.g. "Microsoft-Windows-DotNETRuntime/GC/Start". */
export function clrEventsNamed(name: string): ClrEventSchema[] {
  return index().byName.get(name) ?? [];
}

const FIXED: Record<number, number> = {
  [C.T_U8]: 1,
  [C.T_I8]: 1,
  [C.T_U16]: 2,
  [C.T_I16]: 2,
  [C.T_U32]: 4,
  [C.T_I32]: 4,
  [C.T_U64]: 8,
  [C.T_I64]: 8,
  [C.T_F32]: 4,
  [C.T_F64]: 8,
  [C.T_BOOL]: 4,
  [C.T_GUID]: 16,
  [C.T_FILETIME]: 8,
  [C.T_SYSTEMTIME]: 16,
};

export type FieldValue = number | bigint | boolean | string | Uint8Array | FieldValue[] | { [name: string]: FieldValue };

export interface DecodedPayload {
  names: string[];
  values: FieldValue[];
  /** The payload ended before the schema's last field; missing fields are absent from `names`. */
  truncated: boolean;
}

/** The scalar of type `type` at `p` (its bytes known to be there). */
function scalarAt(bytes: Uint8Array, v: DataView, p: number, type: number, ptr: number): FieldValue | undefined {
  switch (type) {
    case C.T_U8:
      return v.getUint8(p);
    case C.T_I8:
      return v.getInt8(p);
    case C.T_U16:
      return v.getUint16(p, true);
    case C.T_I16:
      return v.getInt16(p, true);
    case C.T_U32:
      return v.getUint32(p, true);
    case C.T_I32:
      return v.getInt32(p, true);
    case C.T_U64:
    case C.T_FILETIME:
      return v.getBigUint64(p, true);
    case C.T_I64:
      return v.getBigInt64(p, true);
    case C.T_F32:
      return v.getFloat32(p, true);
    case C.T_F64:
      return v.getFloat64(p, true);
    case C.T_BOOL:
      return v.getUint32(p, true) !== 0;
    case C.T_PTR:
      return ptr === 4 ? BigInt(v.getUint32(p, true)) : v.getBigUint64(p, true);
    case C.T_GUID:
      return formatGuid(bytes, p);
    case C.T_SYSTEMTIME:
      return bytes.subarray(p, p + 16);
  }
  return undefined;
}

/** A scalar field at the same offset in every payload of its event (every field before it has a fixed size). */
interface FixedField {
  type: number;
  /** Offsets with 4- and 8-byte pointers. */
  at4: number;
  at8: number;
}

const fixedFieldsOf = new WeakMap<ClrEventSchema, Map<string, FixedField>>();

/** The fields of `schema` at fixed offsets, by name (worked out once per schema). */
function fixedFields(schema: ClrEventSchema): Map<string, FixedField> {
  let m = fixedFieldsOf.get(schema);
  if (m) return m;
  m = new Map();
  let at4 = 0,
    at8 = 0;
  for (const f of schema.fields) {
    const size = f.type === C.T_PTR ? -1 : FIXED[f.type];
    if (f.count !== undefined || f.length !== undefined || f.fields || (size === undefined && f.type !== C.T_PTR)) break;
    if (!m.has(f.name)) m.set(f.name, { type: f.type, at4, at8 }); // (the first of a name, as get() finds it)
    at4 += size === -1 ? 4 : size;
    at8 += size === -1 ? 8 : size;
  }
  fixedFieldsOf.set(schema, m);
  return m;
}

/** Per schema: where its first string begins when every field before it is fixed (4- and 8-byte pointers), and the names of the strings that follow one another there. */
let stringRuns: WeakMap<ClrEventSchema, { at4: number; at8: number; names: string[] } | null> | undefined;

function stringRunOf(schema: ClrEventSchema): { at4: number; at8: number; names: string[] } | null {
  stringRuns ??= new WeakMap();
  let run = stringRuns.get(schema);
  if (run !== undefined) return run;
  run = null;
  let at4 = 0,
    at8 = 0;
  for (let i = 0; i < schema.fields.length; i++) {
    const f = schema.fields[i];
    const size = f.type === C.T_PTR ? -1 : FIXED[f.type];
    if (f.count !== undefined || f.length !== undefined || f.fields || (size === undefined && f.type !== C.T_PTR)) {
      const names: string[] = [];
      for (let j = i; j < schema.fields.length && schema.fields[j].type === C.T_USTR && schema.fields[j].count === undefined; j++)
        names.push(schema.fields[j].name);
      if (names.length) run = { at4, at8, names };
      break;
    }
    at4 += size === -1 ? 4 : size;
    at8 += size === -1 ? 8 : size;
  }
  stringRuns.set(schema, run);
  return run;
}

/**
 * Where the UTF-16 string fields `names` of a payload lie: [from, to) in `bytes`, from the first of
 * them to the end of the last (its terminator included), or the payload's end; null when they are
 * not the strings that follow the payload's fixed fields, in that order, or the payload ends among
 * the fixed fields (decode it then: its strings begin where the fields it has end).
 */
export function stringRunSpan(
  schema: ClrEventSchema,
  names: readonly string[],
  bytes: Uint8Array,
  offset: number,
  length: number,
  pointerSize: number,
): [number, number] | null {
  const run = stringRunOf(schema);
  if (!run || names.length > run.names.length || names.some((n, i) => run.names[i] !== n)) return null;
  const at = pointerSize === 4 ? run.at4 : run.at8;
  if (at > length) return null;
  const end = offset + length;
  let p = offset + at;
  for (let k = 0; k < names.length && p < end; k++) {
    while (p + 2 <= end && (bytes[p] | bytes[p + 1]) !== 0) p += 2;
    p = p + 2 <= end ? p + 2 : end;
  }
  return [offset + at, p];
}

/**
 * One field of a payload, read where it is when every field before it has a fixed size (no decode of
 * the rest); null when the field is not at a fixed offset (decode the payload then). Undefined when the
 * payload ends before it, as decodeClrPayload leaves it out.
 */
export function readFixedField(
  schema: ClrEventSchema,
  name: string,
  bytes: Uint8Array,
  view: DataView,
  offset: number,
  length: number,
  pointerSize: number,
): FieldValue | undefined | null {
  const f = fixedFields(schema).get(name);
  if (!f) return null;
  const at = pointerSize === 4 ? f.at4 : f.at8;
  const size = f.type === C.T_PTR ? pointerSize : FIXED[f.type];
  return at + size <= length ? scalarAt(bytes, view, offset + at, f.type, pointerSize) : undefined;
}

/** Per schema: its leading fields that are fixed scalars or strings (a field's place then follows from the strings before it). */
interface ScanPlan {
  types: number[];
  index: Map<string, number>;
}
const scanPlans = new WeakMap<ClrEventSchema, ScanPlan>();

function scanPlanOf(schema: ClrEventSchema): ScanPlan {
  let plan = scanPlans.get(schema);
  if (plan) return plan;
  plan = { types: [], index: new Map() };
  for (const f of schema.fields) {
    const scalar = f.type === C.T_PTR || FIXED[f.type] !== undefined;
    if (f.count !== undefined || f.length !== undefined || f.fields || !(scalar || f.type === C.T_USTR || f.type === C.T_ASTR)) break;
    if (!plan.index.has(f.name)) plan.index.set(f.name, plan.types.length);
    plan.types.push(f.type);
  }
  scanPlans.set(schema, plan);
  return plan;
}

/**
 * One field of a payload, reached by skipping the strings before it (none made) as decodeClrPayload
 * reads them: undefined where decodeClrPayload leaves it out (the payload ends before it, or a string
 * before it runs to the payload's end); null when a field before it is neither a fixed scalar nor a
 * string (decode the payload then).
 */
export function readScannedField(
  schema: ClrEventSchema,
  name: string,
  bytes: Uint8Array,
  view: DataView,
  offset: number,
  length: number,
  pointerSize: number,
): FieldValue | undefined | null {
  const plan = scanPlanOf(schema);
  const target = plan.index.get(name);
  if (target === undefined) return null;
  const end = offset + length;
  let p = offset;
  for (let k = 0; ; k++) {
    const type = plan.types[k];
    if (type === C.T_USTR || type === C.T_ASTR) {
      if (p >= end) return undefined;
      const width = type === C.T_USTR ? 2 : 1;
      let q = p;
      if (width === 2) while (q + 2 <= end && (bytes[q] | bytes[q + 1]) !== 0) q += 2;
      else while (q < end && bytes[q] !== 0) q++;
      const terminated = q + width <= end;
      if (k === target) return charsOf(bytes, p, q, width);
      if (!terminated) return undefined; // (a string cut short: nothing after it is located)
      p = q + width;
      continue;
    }
    const size = type === C.T_PTR ? pointerSize : FIXED[type];
    if (p + size > end) return undefined;
    if (k === target) return scalarAt(bytes, view, p, type, pointerSize);
    p += size;
  }
}

class Reader {
  truncated = false;
  constructor(
    readonly bytes: Uint8Array,
    readonly view: DataView,
    public pos: number,
    readonly end: number,
    readonly ptr: number,
  ) {}

  has(n: number): boolean {
    if (this.pos + n <= this.end) return true;
    this.truncated = true;
    return false;
  }

  scalar(type: number): FieldValue | undefined {
    const size = type === C.T_PTR ? this.ptr : FIXED[type];
    if (!this.has(size)) return undefined;
    const p = this.pos;
    this.pos += size;
    return scalarAt(this.bytes, this.view, p, type, this.ptr);
  }

  utf16(): string {
    const b = this.bytes;
    let p = this.pos;
    while (p + 2 <= this.end && (b[p] | b[p + 1]) !== 0) p += 2;
    const s = charsOf(b, this.pos, p, 2);
    if (p + 2 <= this.end) {
      this.pos = p + 2;
      return s;
    }
    this.pos = this.end; // unterminated: the string runs to the payload end
    this.truncated = true;
    return s;
  }

  ansi(): string {
    const b = this.bytes;
    let p = this.pos;
    while (p < this.end && b[p] !== 0) p++;
    const s = charsOf(b, this.pos, p, 1);
    if (p < this.end) {
      this.pos = p + 1;
      return s;
    }
    this.pos = this.end;
    this.truncated = true;
    return s;
  }
}

const codes = new Uint16Array(4096);

/**
 * The characters of bytes [from, to): UTF-16LE code units (width 2; lone surrogates kept, as .NET's
 * strings keep them) or single bytes (width 1), made into one flat string (no concatenation per character).
 */
function charsOf(b: Uint8Array, from: number, to: number, width: 1 | 2): string {
  let out = "";
  while (from < to) {
    const n = Math.min((to - from) / width, codes.length);
    if (width === 2) for (let i = 0; i < n; i++) codes[i] = b[from + 2 * i] | (b[from + 2 * i + 1] << 8);
    else for (let i = 0; i < n; i++) codes[i] = b[from + i];
    const part = String.fromCharCode.apply(null, codes.subarray(0, n) as unknown as number[]);
    out = out ? out + part : part;
    from += n * width;
  }
  return out;
}

function countOf(f: ClrFieldSchema, ref: string | undefined, named: Map<string, FieldValue>): number {
  if (ref === undefined) return 1;
  const lit = Number(ref);
  if (Number.isInteger(lit)) return lit;
  const v = named.get(ref);
  return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : 0;
}

function readField(r: Reader, f: ClrFieldSchema, named: Map<string, FieldValue>): FieldValue | undefined {
  if (f.type === C.T_USTR) return r.pos < r.end || r.has(2) ? r.utf16() : undefined;
  if (f.type === C.T_ASTR) return r.pos < r.end || r.has(1) ? r.ansi() : undefined;
  if (f.type === C.T_BINARY) {
    const n = countOf(f, f.length, named);
    if (!r.has(n)) return undefined;
    const b = r.bytes.subarray(r.pos, r.pos + n);
    r.pos += n;
    return b;
  }
  if (f.type === C.T_STRUCT) {
    const n = countOf(f, f.count, named);
    const out: FieldValue[] = [];
    const padded = f.elementSize64 !== undefined;
    for (let k = 0; k < n; k++) {
      const start = r.pos;
      const element: { [name: string]: FieldValue } = {};
      const inner = new Map<string, FieldValue>();
      for (let i = 0; i < f.fields!.length; i++) {
        const sub = f.fields![i];
        if (padded) r.pos = start + (r.ptr === 4 ? f.elementOffsets32![i] : f.elementOffsets64![i]);
        const v = readField(r, sub, inner);
        if (v === undefined) return out;
        inner.set(sub.name, v);
        element[sub.name] = v;
      }
      if (padded) {
        const size = r.ptr === 4 ? f.elementSize32! : f.elementSize64!;
        if (!r.has(start + size - r.pos)) return out;
        r.pos = start + size;
      }
      out.push(element);
    }
    return out;
  }
  if (f.count !== undefined) {
    const n = countOf(f, f.count, named);
    const size = f.type === C.T_PTR ? r.ptr : FIXED[f.type];
    // the bounds checked once for the elements a loop `k < n` would take (one short of its bytes truncates)
    const want = n > 0 ? Math.ceil(n) : 0;
    const fit = size ? Math.max(0, Math.min(want, Math.floor((r.end - r.pos) / size))) : 0;
    if (fit < want) r.truncated = true;
    const out: FieldValue[] = new Array(fit);
    for (let k = 0; k < fit; k++, r.pos += size) out[k] = scalarAt(r.bytes, r.view, r.pos, f.type, r.ptr)!;
    return out;
  }
  return r.scalar(f.type);
}

/** Decodes a payload with its schema; `pointerSize` is the record's (4 for EVENT_HEADER32). */
export function decodeClrPayload(schema: ClrEventSchema, bytes: Uint8Array, offset: number, length: number, pointerSize: number): DecodedPayload {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new Reader(bytes, view, offset, offset + length, pointerSize);
  const names: string[] = [];
  const values: FieldValue[] = [];
  const named = new Map<string, FieldValue>();
  for (const f of schema.fields) {
    const v = readField(r, f, named);
    if (v === undefined) {
      r.truncated = true;
      break;
    }
    names.push(f.name);
    values.push(v);
    named.set(f.name, v);
    if (r.truncated) break; // an array or string cut short: nothing after it can be located
  }
  return { names, values, truncated: r.truncated };
}

/** The display string of a mapped value: value-map name, bit-map names joined, or the number. */
export function mapName(provider: number, map: string, value: number): string | undefined {
  const p = CLR_PROVIDERS[provider];
  const vm = p?.valueMaps[map];
  if (vm) return vm[value];
  const bm = p?.bitMaps[map];
  if (!bm) return undefined;
  if (value === 0) return bm.find(([v]) => v === 0)?.[1];
  const parts = bm.filter(([v]) => v !== 0 && (value & v) === v).map(([, t]) => t);
  return parts.length ? parts.join(" | ") : undefined;
}
