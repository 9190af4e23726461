// The typed .NET runtime tables as exported: one table per event (every version of it, fields of
// all versions together: null where a row's version lacks one), a column per payload field with
// the manifest's names and types, `<Field>Name` beside fields with a value or bit map, and the
// row's index, time, pid and tid from the event table.

import * as C from "../../assembly/codes.js";
import type { Trace } from "../trace.js";
import { latin1, utf16, type ClrTable, type NumberColumn } from "../tables/clr-tables.js";
import { clrEventsNamed, mapName } from "../schema/clr-payload.js";
import type { ClrEventSchema, ClrFieldSchema } from "../schema/clr-schema-types.js";
import {
  DictionaryBuilder,
  FRESH_ARRAYS,
  VALUE_ARRAYS,
  halvesOf,
  type ColumnType,
  type ExportArrays,
  type ExportBatch,
  type ExportColumn,
  type ExportField,
  type NumberArray,
  type NumberArrayType,
} from "./columns.js";
import { microsecondsInto } from "./event-columns.js";

/** The export type of a payload field (strings, GUIDs, times as text, arrays and structs as JSON text). */
function fieldType(f: ClrFieldSchema): ColumnType {
  if (f.count !== undefined || f.type === C.T_STRUCT) return "utf8";
  switch (f.type) {
    case C.T_U8:
      return "uint8";
    case C.T_I8:
      return "int8";
    case C.T_U16:
      return "uint16";
    case C.T_I16:
      return "int16";
    case C.T_U32:
      return "uint32";
    case C.T_I32:
      return "int32";
    case C.T_U64:
    case C.T_PTR:
    case C.T_FILETIME:
      return "uint64";
    case C.T_I64:
      return "int64";
    case C.T_F32:
      return "float32";
    case C.T_F64:
      return "float64";
    case C.T_BOOL:
      return "bool";
    case C.T_BINARY:
      return "binary";
    default:
      return "utf8";
  }
}

const LEADING: readonly ExportField[] = [
  { name: "row", type: "uint32", nullable: false },
  { name: "time", type: "timestamp", nullable: false },
  { name: "pid", type: "uint32", nullable: true },
  { name: "tid", type: "uint32", nullable: true },
];

/** Where a column of the export comes from: a payload field, or its map's names. */
interface FieldSource {
  field: string;
  names: boolean;
}

/** The export schema of an event's table: every version's fields, newest first. */
export interface ClrExportSchema {
  /** TraceEvent's name, e.g. "Microsoft-Windows-DotNETRuntime/GC/Start". */
  name: string;
  fields: ExportField[];
  sources: FieldSource[];
}

const schemas = new Map<string, ClrExportSchema>();

export function clrExportSchema(name: string): ClrExportSchema {
  let s = schemas.get(name);
  if (s) return s;
  const versions: ClrEventSchema[] = clrEventsNamed(name)
    .slice()
    .sort((a, b) => b.version - a.version);
  const fields: ExportField[] = [...LEADING];
  const sources: FieldSource[] = [];
  const taken = new Set(fields.map((f) => f.name));
  for (const v of versions) {
    for (const f of v.fields) {
      if (taken.has(f.name)) continue;
      taken.add(f.name);
      fields.push({ name: f.name, type: fieldType(f), nullable: true });
      sources.push({ field: f.name, names: false });
      if (f.map && f.count === undefined && !taken.has(f.name + "Name")) {
        taken.add(f.name + "Name");
        fields.push({ name: f.name + "Name", type: "utf8", nullable: true });
        sources.push({ field: f.name, names: true });
      }
    }
  }
  schemas.set(name, (s = { name, fields, sources }));
  return s;
}

/** The path of an event's table under an output directory: "<Provider>/<Task>/<Opcode>". */
export function clrTablePath(name: string): string {
  return name
    .split("/")
    .map((p) => p.replace(/[^\w.() -]/g, "_"))
    .join("/");
}

function jsonText(v: unknown): string {
  return JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x instanceof Uint8Array ? Array.from(x) : x));
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** A SYSTEMTIME (16 bytes) as "YYYY-MM-DD HH:MM:SS.mmm". */
function systemTime(b: Uint8Array): string {
  const v = new DataView(b.buffer, b.byteOffset, 16);
  const w = (i: number) => v.getUint16(i * 2, true);
  return `${pad(w(0), 4)}-${pad(w(1))}-${pad(w(3))} ${pad(w(4))}:${pad(w(5))}:${pad(w(6))}.${pad(w(7), 3)}`;
}

/**
 * The rows of every version of the event `name` in `trace` (a whole trace or a batch whose row 0
 * is row `firstRow` of the trace), in file order. Null when there are none.
 */
export function clrBatch(trace: Trace, name: string, firstRow: number, arrays: ExportArrays = FRESH_ARRAYS): ExportBatch | null {
  const tables = trace.tables.filter((t) => t.name === name);
  const n = tables.reduce((k, t) => k + t.length, 0);
  if (!n) return null;
  const schema = clrExportSchema(name);
  // rows of all versions in file order: (table, entry) of each output row
  const which = arrays.take(Uint8Array, n),
    entry = arrays.take(Uint32Array, n, false);
  if (tables.length === 1) for (let i = 0; i < n; i++) entry[i] = i;
  else {
    const at = new Uint32Array(tables.length);
    for (let i = 0; i < n; i++) {
      let best = -1;
      for (let t = 0; t < tables.length; t++) {
        if (at[t] < tables[t].length && (best < 0 || tables[t].rows[at[t]] < tables[best].rows[at[best]])) best = t;
      }
      which[i] = best;
      entry[i] = at[best]++;
    }
  }
  // the event row of each output row
  let rowOf: Uint32Array;
  if (tables.length === 1) rowOf = tables[0].rows;
  else {
    rowOf = arrays.take(Uint32Array, n, false);
    for (let i = 0; i < n; i++) rowOf[i] = tables[which[i]].rows[entry[i]];
  }
  const e = trace.events.columns;
  // (each column once: a property read per row of the columns object cost more than the row's work)
  const ePid = e.pid,
    eTid = e.tid,
    eFlags = e.flags;
  const row = arrays.take(Uint32Array, n, false),
    pid = arrays.take(Uint32Array, n, false),
    tid = arrays.take(Uint32Array, n, false),
    time = arrays.take(BigInt64Array, n, false);
  const ids = leading(rowOf, firstRow, ePid, eTid, eFlags, row, pid, tid, arrays);
  microsecondsInto(trace, halvesOf(e.timestamp), rowOf, halvesOf(time));
  const columns: ExportColumn[] = [{ values: row }, { values: time }, { values: pid, valid: ids }, { values: tid, valid: ids }];
  for (let c = 0; c < schema.sources.length; c++) {
    columns.push(fieldColumn(tables, which, entry, n, schema.sources[c], schema.fields[LEADING.length + c].type, arrays));
  }
  return { length: n, columns };
}

/** The leading columns of each row (`rowOf`: its event row): row index, pid and tid; the validity of the last two. */
function leading(
  rowOf: Uint32Array,
  firstRow: number,
  ePid: Uint32Array,
  eTid: Uint32Array,
  eFlags: Uint16Array,
  row: Uint32Array,
  pid: Uint32Array,
  tid: Uint32Array,
  arrays: ExportArrays,
): Uint8Array | undefined {
  let ids: Uint8Array | undefined;
  for (let i = 0; i < row.length; i++) {
    const r = rowOf[i];
    row[i] = firstRow + r;
    pid[i] = ePid[r];
    tid[i] = eTid[r];
    if (eFlags[r] & C.F_NO_PROCESS_INFO) (ids ??= arrays.take(Uint8Array, row.length).fill(1))[i] = 0;
  }
  return ids;
}

/** The map names of a field whose values are numbers in typed columns (`cols`: undefined for a version without it: null). */
function mapNames(
  names: DictionaryBuilder,
  tables: ClrTable[],
  fields: (ClrFieldSchema | undefined)[],
  cols: (Exclude<NumberColumn, BigInt64Array | BigUint64Array> | undefined)[],
  seen: Map<unknown, number>[],
  which: Uint8Array,
  entry: Uint32Array,
): void {
  const keys = names.keys;
  let lastTable = -1,
    lastValue = NaN,
    lastKey = -1;
  for (let i = 0; i < keys.length; i++) {
    const w = which[i];
    const col = cols[w];
    if (!col) {
      names.setNull(i);
      continue;
    }
    const v = col[entry[i]];
    let k = lastKey;
    if (w !== lastTable || v !== lastValue) {
      const known = seen[w].get(v);
      if (known === undefined) {
        const f = fields[w]!;
        const text = f.map ? mapName(tables[w].schema.provider, f.map, v) : undefined;
        k = text === undefined ? -1 : names.key(text);
        seen[w].set(v, k);
      } else k = known;
      lastTable = w;
      lastValue = v;
      lastKey = k;
    }
    if (k < 0) names.setNull(i);
    else keys[i] = k;
  }
}

/** One payload field (or its map names) over the rows of every version. */
function fieldColumn(
  tables: ClrTable[],
  which: Uint8Array,
  entry: Uint32Array,
  n: number,
  src: FieldSource,
  type: ColumnType,
  arrays: ExportArrays,
): ExportColumn {
  const fields = tables.map((t) => t.schema.fields.find((f) => f.name === src.field));
  let valid: Uint8Array | undefined;
  const absent = (i: number) => ((valid ??= arrays.take(Uint8Array, n).fill(1))[i] = 0);
  if (src.names) {
    // each value of each version named once
    const names = new DictionaryBuilder(n, arrays);
    const seen = tables.map(() => new Map<unknown, number>());
    // (a single field's values straight from its column: no getter per row)
    const plain = tables.map((t, k) => {
      const col = t.columns[src.field];
      const f = fields[k];
      const numbers = f && f.count === undefined && f.type !== C.T_BOOL && f.type !== C.T_GUID && f.type !== C.T_SYSTEMTIME;
      return numbers && ArrayBuffer.isView(col) && !(col instanceof BigInt64Array || col instanceof BigUint64Array)
        ? (col as Exclude<NumberColumn, BigInt64Array | BigUint64Array>)
        : undefined;
    });
    if (plain.every((c, k) => c || !fields[k])) {
      mapNames(names, tables, fields, plain, seen, which, entry);
      return names.column();
    }
    for (let i = 0; i < n; i++) {
      const t = tables[which[i]],
        f = fields[which[i]];
      const v = f ? t.get(src.field, entry[i]) : undefined;
      let k = seen[which[i]].get(v);
      if (k === undefined) {
        const text = f?.map && typeof v === "number" ? mapName(t.schema.provider, f.map, v) : undefined;
        k = text === undefined ? -1 : names.key(text);
        seen[which[i]].set(v, k);
      }
      if (k < 0) names.setNull(i);
      else names.keys[i] = k;
    }
    return names.column();
  }
  const refs = tables.map((t, k) => {
    const f = fields[k],
      col = t.columns[src.field];
    return f && f.count === undefined && (f.type === C.T_USTR || f.type === C.T_ASTR) && t.bytes.length && "offset" in col ? col : undefined;
  });
  if (type === "utf8" && refs.every((r, k) => r || !fields[k])) {
    // strings straight from the record bytes: each distinct one decoded once
    const dict = new DictionaryBuilder(n, arrays);
    for (let i = 0; i < n; i++) {
      const ref = refs[which[i]];
      if (!ref) {
        dict.setNull(i);
        continue;
      }
      const t = tables[which[i]];
      dict.keys[i] = dict.keyOfBytes(t.bytes, ref.offset[entry[i]], ref.length[entry[i]], fields[which[i]]!.type === C.T_USTR ? utf16 : latin1);
    }
    return dict.column();
  }
  if (type === "utf8" || type === "binary") {
    const dict = new DictionaryBuilder<string | Uint8Array>(n, arrays);
    for (let i = 0; i < n; i++) {
      const t = tables[which[i]],
        f = fields[which[i]];
      const v = f ? t.get(src.field, entry[i]) : undefined;
      if (v === undefined) {
        dict.setNull(i);
        continue;
      }
      if (type === "binary") {
        const b = v as Uint8Array;
        dict.keys[i] = dict.key(b, Array.from(b).join(","));
      } else {
        const text = typeof v === "string" ? v : f!.type === C.T_SYSTEMTIME && v instanceof Uint8Array ? systemTime(v) : jsonText(v);
        dict.keys[i] = dict.key(text);
      }
    }
    return dict.column();
  }
  // numbers: straight from the typed columns (booleans as 0/1; 64-bit from narrower versions widened)
  const out = arrays.take(VALUE_ARRAYS[type] as NumberArrayType<NumberArray>, n);
  const wide = out instanceof BigInt64Array || out instanceof BigUint64Array;
  const cols = tables.map((t, k) => (fields[k] ? (t.columns[src.field] as NumberColumn) : undefined));
  // one version, stored as exported: a copy
  if (tables.length === 1 && cols[0]?.constructor === out.constructor) {
    (out as Uint8Array).set(cols[0] as Uint8Array);
    return { values: out };
  }
  for (let i = 0; i < n; i++) {
    const col = cols[which[i]];
    if (!col) {
      absent(i);
      continue;
    }
    const v = col[entry[i]];
    if (wide) (out as BigInt64Array)[i] = typeof v === "bigint" ? v : BigInt(v as number);
    else (out as Float64Array)[i] = typeof v === "bigint" ? Number(v) : type === "bool" ? (v ? 1 : 0) : (v as number);
  }
  return { values: out, valid };
}
