// Typed tables of .NET runtime events, filled by the core (assembly/clr.ts) from the field program
// (schema/clr-program.ts): views over the blocks it fills.

import * as C from "../../assembly/codes.js";
import { CLR_EVENTS, CLR_PROVIDERS, clrEventsNamed, mapName, type FieldValue } from "../schema/clr-payload.js";
import type { ClrEventSchema, ClrFieldSchema } from "../schema/clr-schema-types.js";
import { clrProgram, type TypeLayout } from "../schema/clr-program.js";
import { formatGuid } from "../schema/guid.js";
import type { TraceData } from "../decode/result/trace-data.js";

export type NumberColumn =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigUint64Array
  | BigInt64Array;

/** A column of references: the field's bytes start at `offset[i]`; `length` is bytes (strings, binary) or elements (arrays). */
export interface RefColumn {
  offset: Uint32Array;
  length: Uint32Array;
}

function valueView(type: number, buffer: ArrayBuffer, at: number, n: number): NumberColumn {
  switch (type) {
    case C.T_U8:
      return new Uint8Array(buffer, at, n);
    case C.T_I8:
      return new Int8Array(buffer, at, n);
    case C.T_U16:
      return new Uint16Array(buffer, at, n);
    case C.T_I16:
      return new Int16Array(buffer, at, n);
    case C.T_U32:
    case C.T_BOOL:
      return new Uint32Array(buffer, at, n);
    case C.T_I32:
      return new Int32Array(buffer, at, n);
    case C.T_F32:
      return new Float32Array(buffer, at, n);
    case C.T_F64:
      return new Float64Array(buffer, at, n);
    case C.T_I64:
      return new BigInt64Array(buffer, at, n);
    default:
      return new BigUint64Array(buffer, at, n);
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
    /** The record bytes its references point into (empty when they were dropped). */
    readonly bytes: Uint8Array,
    layout: TypeLayout,
    /** The table's block: laid out as `layout` says for `cap` rows, the first `count` used. */
    block: Uint8Array,
    count: number,
    private readonly decodeField: (row: number, name: string) => FieldValue | undefined,
    cap = count,
  ) {
    const buffer = block.buffer as ArrayBuffer;
    const base = block.byteOffset;
    this.name = schema.name;
    this.length = count;
    this.rows = new Uint32Array(buffer, base + cap * layout.preRow, count);
    this.truncated = new Uint8Array(buffer, base + cap * layout.preStatus, count);
    this.columns = {};
    for (const c of layout.columns) {
      const at = base + cap * c.pre;
      if (c.storage === "value") this.columns[c.field.name] = valueView(c.field.type, buffer, at, count);
      else if (c.preB === C.CLR_NOT_STORED) this.columns[c.field.name] = new Uint32Array(buffer, at, count);
      else this.columns[c.field.name] = { offset: new Uint32Array(buffer, at, count), length: new Uint32Array(buffer, base + cap * c.preB, count) };
    }
  }

  get version(): number {
    return this.schema.version;
  }
  get id(): number {
    return this.schema.id;
  }
  get fieldNames(): string[] {
    return this.schema.fields.map((f) => f.name);
  }

  // (by name, made once: get() is called a cell at a time; an event's field names are unique)
  private byName?: Map<string, ClrFieldSchema>;
  private field(name: string): ClrFieldSchema {
    const f = (this.byName ??= new Map(this.schema.fields.map((x) => [x.name, x]))).get(name);
    if (!f) throw new RangeError(`${this.name} has no field ${name}`);
    return f;
  }

  /** A field's value in entry `i`: numbers, bigints, booleans, strings and GUIDs made on demand. */
  get(name: string, i: number): FieldValue | undefined {
    const f = this.field(name);
    const col = this.columns[name];
    if (f.type === C.T_BOOL) return (col as Uint32Array)[i] !== 0;
    // offset 0: the payload ended before the field
    if (f.type === C.T_GUID) return (col as Uint32Array)[i] ? formatGuid(this.bytes, (col as Uint32Array)[i]) : undefined;
    if (f.type === C.T_SYSTEMTIME) return (col as Uint32Array)[i] ? this.bytes.subarray((col as Uint32Array)[i], (col as Uint32Array)[i] + 16) : undefined;
    if ("offset" in col) {
      const o = col.offset[i],
        n = col.length[i];
      if (this.bytes.length === 0) return undefined; // the record bytes were dropped
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

/** A string field's UTF-16 code units (`byteLength` bytes), each as it is. */
export function utf16(bytes: Uint8Array, offset: number, byteLength: number): string {
  let s = "";
  for (let k = 0; k + 1 < byteLength; k += 2) s += String.fromCharCode(bytes[offset + k] | (bytes[offset + k + 1] << 8));
  return s;
}

/** An 8-bit string field's bytes, one character each. */
export function latin1(bytes: Uint8Array, offset: number, length: number): string {
  let s = "";
  for (let k = 0; k < length; k++) s += String.fromCharCode(bytes[offset + k]);
  return s;
}

/** All typed tables of a trace, by schema event. */
export class ClrTables {
  private readonly tables = new Map<ClrEventSchema, ClrTable>();

  constructor(data: TraceData, decodeField: (row: number, name: string) => FieldValue | undefined) {
    if (!data.clr) return;
    const { layouts } = clrProgram();
    const { counts, blocks, caps } = data.clr;
    for (let t = 0; t < layouts.length; t++) {
      const block = blocks[t];
      if (!counts[t] || !block) continue;
      // (records dropped: the references have nothing to point into)
      const bytes = data.recordBytes === false ? new Uint8Array(0) : data.bytes;
      this.tables.set(layouts[t].schema, new ClrTable(layouts[t].schema, bytes, layouts[t], block, counts[t], decodeField, caps?.[t]));
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
      const candidates = clrEventsNamed(key)
        .filter((e) => this.tables.has(e))
        .sort((a, b) => b.version - a.version);
      return candidates.length ? this.tables.get(candidates[0]) : undefined;
    }
    const p = CLR_PROVIDERS.findIndex((x) => x.name === key.provider || x.guid === key.provider.toLowerCase());
    const schema = CLR_EVENTS.find((e) => e.provider === p && e.id === key.id && e.version === key.version);
    return schema ? this.tables.get(schema) : undefined;
  }
}
