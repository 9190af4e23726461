// Typed tables of .NET runtime events, filled by the WebAssembly core (assembly/clr.ts): the field
// program handed to the core, and views over the blocks it fills.

import * as C from "../../assembly/codes.js";
import { CLR_EVENTS, CLR_PROVIDERS, clrEventsNamed, clrProviderIndex, findClrEvent, mapName, type FieldValue } from "../schema/clr-payload.js";
import type { ClrEventSchema, ClrFieldSchema } from "../schema/clr-schema-types.js";
import { formatGuid } from "../schema/guid.js";
import type { TraceData } from "../decode/trace-data.js";

const NONE = 0xffff;
const MAX_ID = 512;
const VERSIONS = 8;

/** How one top-level field is stored. */
export interface ColumnLayout {
  field: ClrFieldSchema;
  /** "value": a number column; "ref": offset (+ length or count) into the trace's bytes. */
  storage: "value" | "ref";
  width: number;
  pre: number;
  preB: number;
}

export interface TypeLayout {
  schema: ClrEventSchema;
  rowBytes: number;
  preRow: number;
  preStatus: number;
  columns: ColumnLayout[];
}

export interface ClrProgram {
  words: Uint16Array;
  typeStarts: Uint32Array;
  lookup: Int16Array;
  layouts: TypeLayout[];
}

const VALUE_WIDTH: Record<number, number> = {
  [C.T_U8]: 1, [C.T_I8]: 1, [C.T_U16]: 2, [C.T_I16]: 2, [C.T_U32]: 4, [C.T_I32]: 4, [C.T_BOOL]: 4, [C.T_F32]: 4,
  [C.T_U64]: 8, [C.T_I64]: 8, [C.T_F64]: 8, [C.T_FILETIME]: 8, [C.T_PTR]: 8,
};

function isValue(f: ClrFieldSchema): boolean {
  return f.count === undefined && VALUE_WIDTH[f.type] !== undefined;
}

function refIndex(fields: ClrFieldSchema[], upTo: number, name: string | undefined): number {
  if (name === undefined) return -1;
  for (let i = upTo - 1; i >= 0; i--) if (fields[i].name === name) return i;
  return -1;
}

function fieldProgram(fields: ClrFieldSchema[], i: number, preA: number, preB: number, out: number[]): void {
  const f = fields[i];
  const at = out.length;
  let flags = 0;
  let ref = 0;
  const refName = f.type === C.T_BINARY ? f.length : f.count;
  if (refName !== undefined) {
    const lit = Number(refName);
    if (Number.isInteger(lit)) {
      flags |= 2;
      ref = lit;
    } else {
      const k = refIndex(fields, i, refName);
      flags |= 1;
      ref = k < 0 ? NONE : k;
    }
  }
  const fixedStruct = f.type === C.T_STRUCT && f.elementSize64 != null && f.elementSize32 != null;
  if (fixedStruct) flags |= 4;
  out.push(f.type | (flags << 8), preA, preB, ref, 0);
  if (f.type === C.T_STRUCT) {
    const sub = f.fields ?? [];
    out.push(sub.length, f.elementSize32 ?? 0, f.elementSize64 ?? 0);
    for (let k = 0; k < sub.length; k++) fieldProgram(sub, k, NONE, NONE, out);
  }
  out[at + 4] = out.length - at;
}

function layoutOf(schema: ClrEventSchema): { layout: TypeLayout; program: number[] } {
  type Slot = { key: string; width: number; pre: number };
  const slots: Slot[] = [{ key: "#row", width: 4, pre: 0 }, { key: "#status", width: 1, pre: 0 }];
  schema.fields.forEach((f, i) => {
    if (isValue(f)) slots.push({ key: `${i}`, width: VALUE_WIDTH[f.type], pre: 0 });
    else {
      slots.push({ key: `${i}`, width: 4, pre: 0 });
      if (f.type !== C.T_GUID && f.type !== C.T_SYSTEMTIME) slots.push({ key: `${i}b`, width: 4, pre: 0 });
    }
  });
  // widest first: every column of the block is then naturally aligned
  const sorted = slots.map((s, k) => ({ s, k })).sort((a, b) => b.s.width - a.s.width || a.k - b.k).map((x) => x.s);
  let pre = 0;
  for (const s of sorted) {
    s.pre = pre;
    pre += s.width;
  }
  const get = (key: string) => slots.find((s) => s.key === key);
  const columns: ColumnLayout[] = schema.fields.map((f, i) => ({
    field: f,
    storage: isValue(f) ? "value" : "ref",
    width: get(`${i}`)!.width,
    pre: get(`${i}`)!.pre,
    preB: get(`${i}b`)?.pre ?? NONE,
  }));
  const rowBytes = pre;
  // Leading plain numbers sit at fixed offsets: the core copies them without walking.
  const fixed: number[] = [];
  let nFixed = 0, off32 = 0, off64 = 0;
  for (const [i, f] of schema.fields.entries()) {
    if (!isValue(f)) break;
    const s32 = f.type === C.T_PTR ? 4 : VALUE_WIDTH[f.type];
    const s64 = VALUE_WIDTH[f.type];
    fixed.push(off32, off64, s32, s64, columns[i].pre);
    off32 += s32;
    off64 += s64;
    nFixed++;
  }
  const fieldWords: number[] = [];
  let restWords = 0;
  schema.fields.forEach((_, i) => {
    if (i === nFixed) restWords = fieldWords.length;
    fieldProgram(schema.fields, i, columns[i].pre, columns[i].preB, fieldWords);
  });
  const program = [rowBytes, get("#row")!.pre, get("#status")!.pre, schema.fields.length, nFixed, off32, off64, restWords, ...fixed, ...fieldWords];
  return { layout: { schema, rowBytes, preRow: get("#row")!.pre, preStatus: get("#status")!.pre, columns }, program };
}

let cached: ClrProgram | undefined;

/** The field program of every schema event, and the (provider, id, version) -> type lookup. */
export function clrProgram(): ClrProgram {
  if (cached) return cached;
  const words: number[] = [];
  const typeStarts = new Uint32Array(CLR_EVENTS.length);
  const layouts: TypeLayout[] = [];
  CLR_EVENTS.forEach((e, t) => {
    typeStarts[t] = words.length;
    const { layout, program } = layoutOf(e);
    layouts.push(layout);
    words.push(...program);
  });
  const index = new Map(CLR_EVENTS.map((e, t) => [e, t]));
  const lookup = new Int16Array(CLR_PROVIDERS.length * MAX_ID * VERSIONS).fill(-1);
  for (let p = 0; p < CLR_PROVIDERS.length; p++) {
    for (let id = 0; id < MAX_ID; id++) {
      for (let v = 0; v < VERSIONS; v++) {
        const e = findClrEvent(p, id, v);
        if (e) lookup[(p * MAX_ID + id) * VERSIONS + v] = index.get(e)!;
      }
    }
  }
  return (cached = { words: Uint16Array.from(words), typeStarts, lookup, layouts });
}

/** CLR provider index of each provider of a decoded trace (-1 for others). */
export function clrProvidersOf(data: TraceData): Int8Array {
  const out = new Int8Array(data.providerCount);
  for (let i = 0; i < data.providerCount; i++) out[i] = clrProviderIndex(formatGuid(data.bytes, data.providersOffset + i * 32));
  return out;
}

export type NumberColumn =
  | Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array
  | BigUint64Array | BigInt64Array;

/** A column of references: the field's bytes start at `offset[i]`; `length` is bytes (strings, binary) or elements (arrays). */
export interface RefColumn {
  offset: Uint32Array;
  length: Uint32Array;
}

function valueView(type: number, buffer: ArrayBuffer, at: number, n: number): NumberColumn {
  switch (type) {
    case C.T_U8: return new Uint8Array(buffer, at, n);
    case C.T_I8: return new Int8Array(buffer, at, n);
    case C.T_U16: return new Uint16Array(buffer, at, n);
    case C.T_I16: return new Int16Array(buffer, at, n);
    case C.T_U32: case C.T_BOOL: return new Uint32Array(buffer, at, n);
    case C.T_I32: return new Int32Array(buffer, at, n);
    case C.T_F32: return new Float32Array(buffer, at, n);
    case C.T_F64: return new Float64Array(buffer, at, n);
    case C.T_I64: return new BigInt64Array(buffer, at, n);
    default: return new BigUint64Array(buffer, at, n);
  }
}

/** One typed table: the rows of one .NET runtime event type (provider, id, version). */
export class ClrTable {
  readonly name: string;
  readonly length: number;
  /** Row index of each entry in the event table. */
  readonly rows: Uint32Array;
  /** 1 where the payload was shorter than the schema: later fields are 0 / empty. */
  readonly truncated: Uint8Array;
  /** Number fields as typed arrays; strings, GUIDs, binary and arrays as references. */
  readonly columns: Record<string, NumberColumn | RefColumn | Uint32Array>;

  constructor(
    readonly schema: ClrEventSchema,
    readonly bytes: Uint8Array,
    layout: TypeLayout,
    block: number,
    count: number,
    private readonly decodeField: (row: number, name: string) => FieldValue | undefined,
  ) {
    const buffer = bytes.buffer as ArrayBuffer;
    const base = bytes.byteOffset + block;
    this.name = schema.name;
    this.length = count;
    this.rows = new Uint32Array(buffer, base + count * layout.preRow, count);
    this.truncated = new Uint8Array(buffer, base + count * layout.preStatus, count);
    this.columns = {};
    for (const c of layout.columns) {
      const at = base + count * c.pre;
      if (c.storage === "value") this.columns[c.field.name] = valueView(c.field.type, buffer, at, count);
      else if (c.preB === NONE) this.columns[c.field.name] = new Uint32Array(buffer, at, count);
      else this.columns[c.field.name] = { offset: new Uint32Array(buffer, at, count), length: new Uint32Array(buffer, base + count * c.preB, count) };
    }
  }

  get version(): number { return this.schema.version; }
  get id(): number { return this.schema.id; }
  get fieldNames(): string[] { return this.schema.fields.map((f) => f.name); }

  private field(name: string): ClrFieldSchema {
    const f = this.schema.fields.find((x) => x.name === name);
    if (!f) throw new RangeError(`${this.name} has no field ${name}`);
    return f;
  }

  /** A field's value in entry `i`: numbers, bigints, booleans, strings and GUIDs made on demand. */
  get(name: string, i: number): FieldValue | undefined {
    const f = this.field(name);
    const col = this.columns[name];
    if (f.type === C.T_BOOL) return (col as Uint32Array)[i] !== 0;
    if (f.type === C.T_GUID) return formatGuid(this.bytes, (col as Uint32Array)[i]);
    if (f.type === C.T_SYSTEMTIME) return this.bytes.subarray((col as Uint32Array)[i], (col as Uint32Array)[i] + 16);
    if ("offset" in col) {
      const o = col.offset[i], n = col.length[i];
      if (f.count === undefined && f.type === C.T_USTR) return utf16(this.bytes, o, n);
      if (f.count === undefined && f.type === C.T_ASTR) return latin1(this.bytes, o, n);
      if (f.type === C.T_BINARY) return this.bytes.subarray(o, o + n);
      // arrays and struct arrays: decoded from the record, which knows its pointer size
      return this.decodeField(this.rows[i], name);
    }
    return (col as NumberColumn)[i];
  }

  /** A mapped field's display name (value map or bit map), the number when unknown. */
  getDisplay(name: string, i: number): FieldValue | undefined {
    const f = this.field(name);
    const v = this.get(name, i);
    if (!f.map || typeof v !== "number") return v;
    return mapName(this.schema.provider, f.map, v) ?? v;
  }
}

function utf16(bytes: Uint8Array, offset: number, byteLength: number): string {
  let s = "";
  for (let k = 0; k + 1 < byteLength; k += 2) s += String.fromCharCode(bytes[offset + k] | (bytes[offset + k + 1] << 8));
  return s;
}

function latin1(bytes: Uint8Array, offset: number, length: number): string {
  let s = "";
  for (let k = 0; k < length; k++) s += String.fromCharCode(bytes[offset + k]);
  return s;
}

/** All typed tables of a trace, by schema event. */
export class ClrTables {
  private readonly tables = new Map<ClrEventSchema, ClrTable>();

  constructor(data: TraceData, decodeField: (row: number, name: string) => FieldValue | undefined) {
    if (!data.clrDirOffset) return;
    const { layouts } = clrProgram();
    const v = new DataView(data.bytes.buffer, data.bytes.byteOffset);
    for (let t = 0; t < layouts.length; t++) {
      const count = v.getUint32(data.clrDirOffset + t * 12, true);
      if (!count) continue;
      const block = v.getUint32(data.clrDirOffset + t * 12 + 4, true);
      this.tables.set(layouts[t].schema, new ClrTable(layouts[t].schema, data.bytes, layouts[t], block, count, decodeField));
    }
  }

  /** Tables present in the trace. */
  get all(): ClrTable[] {
    return [...this.tables.values()];
  }

  /**
   * The table of an event: by TraceEvent name (the newest version present), or by
   * { provider (name or GUID), id, version }. An empty table when the trace has no such rows.
   */
  table(key: string | { provider: string; id: number; version: number }): ClrTable | undefined {
    if (typeof key === "string") {
      const candidates = clrEventsNamed(key).filter((e) => this.tables.has(e)).sort((a, b) => b.version - a.version);
      return candidates.length ? this.tables.get(candidates[0]) : undefined;
    }
    const p = CLR_PROVIDERS.findIndex((x) => x.name === key.provider || x.guid === key.provider.toLowerCase());
    const schema = CLR_EVENTS.find((e) => e.provider === p && e.id === key.id && e.version === key.version);
    return schema ? this.tables.get(schema) : undefined;
  }
}
