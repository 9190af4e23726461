// The field program of the typed .NET runtime tables: for each schema event, how its top-level fields
// are stored (value columns, reference columns) and the u16 program the cores walk to fill them.
// Built once from the generated schema and handed to the core at decode time (bindings/decode).

import * as C from "../../assembly/codes.js";
import { CLR_EVENTS, CLR_PROVIDERS } from "./clr-payload.js";
import type { ClrEventSchema, ClrFieldSchema } from "./clr-schema-types.js";

/** How one top-level field is stored. */
interface ColumnLayout {
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
  /** layoutFingerprint(layouts), which every core set up is given (a worker sets one up per segment). */
  fingerprint: number;
}

/**
 * The bytes a value field takes in its table's column (a pointer's 8 in both layouts).
 * @public (scripts/gen-clr-fill.mjs reads it from the build)
 */
export const VALUE_WIDTH: Readonly<Record<number, number>> = {
  [C.T_U8]: 1,
  [C.T_I8]: 1,
  [C.T_U16]: 2,
  [C.T_I16]: 2,
  [C.T_U32]: 4,
  [C.T_I32]: 4,
  [C.T_BOOL]: 4,
  [C.T_F32]: 4,
  [C.T_U64]: 8,
  [C.T_I64]: 8,
  [C.T_F64]: 8,
  [C.T_FILETIME]: 8,
  [C.T_PTR]: 8,
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
      flags |= C.CLR_FLAG_COUNT_LITERAL;
      ref = lit;
    } else {
      const k = refIndex(fields, i, refName);
      flags |= C.CLR_FLAG_COUNT_FIELD;
      ref = k < 0 ? C.CLR_NOT_STORED : k;
    }
  }
  const fixedStruct = f.type === C.T_STRUCT && f.elementSize64 != null && f.elementSize32 != null;
  if (fixedStruct) flags |= C.CLR_FLAG_PADDED_STRUCT;
  const entry = new Array<number>(f.type === C.T_STRUCT ? C.CLR_STRUCT_WORDS : C.CLR_FIELD_WORDS).fill(0);
  entry[C.CLR_FIELD_KIND] = f.type | (flags << C.CLR_FLAGS_SHIFT);
  entry[C.CLR_FIELD_PRE_A] = preA;
  entry[C.CLR_FIELD_PRE_B] = preB;
  entry[C.CLR_FIELD_REF] = ref;
  if (f.type === C.T_STRUCT) {
    const sub = f.fields ?? [];
    entry[C.CLR_STRUCT_SUBS] = sub.length;
    entry[C.CLR_STRUCT_SIZE32] = f.elementSize32 ?? 0;
    entry[C.CLR_STRUCT_SIZE64] = f.elementSize64 ?? 0;
    out.push(...entry);
    for (let k = 0; k < sub.length; k++) fieldProgram(sub, k, C.CLR_NOT_STORED, C.CLR_NOT_STORED, out);
  } else out.push(...entry);
  out[at + C.CLR_FIELD_LEN] = out.length - at;
}

function layoutOf(schema: ClrEventSchema): { layout: TypeLayout; program: number[] } {
  type Slot = { key: string; width: number; pre: number };
  const slots: Slot[] = [
    { key: "#row", width: 4, pre: 0 },
    { key: "#status", width: 1, pre: 0 },
  ];
  schema.fields.forEach((f, i) => {
    if (isValue(f)) slots.push({ key: `${i}`, width: VALUE_WIDTH[f.type], pre: 0 });
    else {
      slots.push({ key: `${i}`, width: 4, pre: 0 });
      if (f.type !== C.T_GUID && f.type !== C.T_SYSTEMTIME) slots.push({ key: `${i}b`, width: 4, pre: 0 });
    }
  });
  // widest first: every column of the block is then naturally aligned
  const sorted = slots
    .map((s, k) => ({ s, k }))
    .sort((a, b) => b.s.width - a.s.width || a.k - b.k)
    .map((x) => x.s);
  let pre = 0;
  for (const s of sorted) {
    s.pre = pre;
    pre += s.width;
  }
  const byKey = new Map(slots.map((s) => [s.key, s]));
  const get = (key: string) => byKey.get(key);
  const columns: ColumnLayout[] = schema.fields.map((f, i) => ({
    field: f,
    storage: isValue(f) ? "value" : "ref",
    width: get(`${i}`)!.width,
    pre: get(`${i}`)!.pre,
    preB: get(`${i}b`)?.pre ?? C.CLR_NOT_STORED,
  }));
  const rowBytes = pre;
  // Leading plain numbers sit at fixed offsets: the core copies them without walking.
  const fixed: number[] = [];
  let nFixed = 0,
    off32 = 0,
    off64 = 0;
  for (const [i, f] of schema.fields.entries()) {
    if (!isValue(f)) break;
    const s32 = f.type === C.T_PTR ? 4 : VALUE_WIDTH[f.type];
    const s64 = VALUE_WIDTH[f.type];
    const entry = new Array<number>(C.CLR_FIXED_WORDS).fill(0);
    entry[C.CLR_FIXED_OFF32] = off32;
    entry[C.CLR_FIXED_OFF64] = off64;
    entry[C.CLR_FIXED_SIZE32] = s32;
    entry[C.CLR_FIXED_SIZE64] = s64;
    entry[C.CLR_FIXED_PRE] = columns[i].pre;
    fixed.push(...entry);
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
  const header = new Array<number>(C.CLR_TYPE_WORDS).fill(0);
  header[C.CLR_TYPE_ROW_BYTES] = rowBytes;
  header[C.CLR_TYPE_PRE_ROW] = get("#row")!.pre;
  header[C.CLR_TYPE_PRE_STATUS] = get("#status")!.pre;
  header[C.CLR_TYPE_FIELDS] = schema.fields.length;
  header[C.CLR_TYPE_FIXED] = nFixed;
  header[C.CLR_TYPE_FIXED_END32] = off32;
  header[C.CLR_TYPE_FIXED_END64] = off64;
  header[C.CLR_TYPE_REST] = restWords;
  const program = [...header, ...fixed, ...fieldWords];
  return { layout: { schema, rowBytes, preRow: get("#row")!.pre, preStatus: get("#status")!.pre, columns }, program };
}

/**
 * A 32-bit FNV-1a hash of the layouts' shapes: what the cores' generated fill functions
 * (scripts/gen-clr-fill.mjs) depend on. The cores refuse a program whose layouts they were not made for.
 * @public (the generator reads it from the build)
 */
export function layoutFingerprint(layouts: readonly TypeLayout[]): number {
  let h = 0x811c9dc5;
  const mix = (n: number) => {
    h ^= n & 0xffff;
    h = Math.imul(h, 0x01000193) >>> 0;
  };
  for (const l of layouts) {
    mix(l.rowBytes);
    mix(l.preRow);
    mix(l.preStatus);
    for (const c of l.columns) {
      mix(c.field.type);
      mix(c.pre);
      mix(c.preB);
      mix(c.field.count ? 1 : 0);
    }
  }
  return h >>> 0;
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
  // Each (provider, id) slot's versions take the newest schema version at or below them (findClrEvent's
  // rule), worked out per (provider, id) group instead of by a lookup per slot (about 30 ms of each
  // process's first decode).
  const lookup = new Int16Array(CLR_PROVIDERS.length * C.CLR_MAX_ID * C.CLR_VERSIONS).fill(-1);
  const groups = new Map<number, number[]>();
  CLR_EVENTS.forEach(({ provider, id }, t) => {
    if (id >= C.CLR_MAX_ID || provider < 0) return;
    const at = (provider * C.CLR_MAX_ID + id) * C.CLR_VERSIONS;
    const g = groups.get(at);
    if (g) g.push(t);
    else groups.set(at, [t]);
  });
  for (const [at, types] of groups) {
    // (a version listed twice takes its last schema, as findClrEvent's map does)
    const byVersion = new Map<number, number>();
    for (const t of types) byVersion.set(CLR_EVENTS[t].version, t);
    const versions = [...byVersion.keys()].sort((a, b) => a - b);
    for (let v = 0, k = -1; v < C.CLR_VERSIONS; v++) {
      while (k + 1 < versions.length && versions[k + 1] <= v) k++;
      if (k >= 0) lookup[at + v] = byVersion.get(versions[k])!;
    }
  }
  return (cached = { words: Uint16Array.from(words), typeStarts, lookup, layouts, fingerprint: layoutFingerprint(layouts) });
}

/**
 * The schema event (index into the program's types) of (CLR provider index, event id, version) by the
 * lookup, as the cores read it (assembly/clr.ts clrEventOf); -1 when none.
 */
export function clrEventIndex(provider: number, id: number, version: number): number {
  if (provider < 0 || id >= C.CLR_MAX_ID) return -1;
  return clrProgram().lookup[(provider * C.CLR_MAX_ID + id) * C.CLR_VERSIONS + Math.min(version, C.CLR_VERSIONS - 1)];
}

let layoutIndex: Map<ClrEventSchema, number> | undefined;

/** The index in clrProgram().layouts of an event's typed table; -1 for none (no schema, or a schema without a table). */
export function clrLayoutOf(schema: ClrEventSchema | undefined): number {
  if (!schema) return -1;
  layoutIndex ??= new Map(clrProgram().layouts.map((l, t) => [l.schema, t]));
  return layoutIndex.get(schema) ?? -1;
}
