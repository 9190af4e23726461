// The event table: typed-array columns, and rows as lazy views (table + index). Getters read the
// columns, or the record bytes, only when called; strings and GUIDs are made on demand.

import * as C from "../../assembly/codes.js";
import { formatGuid } from "../schema/guid.js";
import type { TraceClock } from "./info.js";
import type { ProviderTable } from "./provider-table.js";
import { extItemBytes, typeFieldValues, type EventColumns, type TraceData, type TypeField, type TypeFieldValues } from "../decode/result/trace-data.js";
import type { ClrEventSchema } from "../schema/clr-schema-types.js";
import {
  clrProviderIndex,
  decodeClrPayload,
  findClrEvent,
  mapName,
  readFixedField,
  readScannedField,
  type DecodedPayload,
  type FieldValue,
} from "../schema/clr-payload.js";
import { keywordNames, levelName } from "../schema/keywords.js";
import { onlyRows, timeOrderOf } from "./order.js";

const EMPTY = new Uint8Array(0);
const ZERO_GUID = "00000000-0000-0000-0000-000000000000";

export const HEADER_TYPE_NAMES: Readonly<Record<number, string>> = {
  0x01: "SYSTEM32",
  0x02: "SYSTEM64",
  0x03: "COMPACT32",
  0x04: "COMPACT64",
  0x0a: "FULL_HEADER32",
  0x0b: "INSTANCE32",
  0x0c: "TIMED",
  0x0d: "ERROR",
  0x0e: "WNODE_HEADER",
  0x0f: "MESSAGE",
  0x10: "PERFINFO32",
  0x11: "PERFINFO64",
  0x12: "EVENT_HEADER32",
  0x13: "EVENT_HEADER64",
  0x14: "FULL_HEADER64",
  0x15: "INSTANCE64",
};

const POINTER4 = new Set([0x01, 0x03, 0x0a, 0x0b, 0x10, 0x12]);
const SYSTEM_FAMILY = new Set([0x01, 0x02, 0x03, 0x04, 0x10, 0x11]);

export function isSystemFamily(headerType: number): boolean {
  return SYSTEM_FAMILY.has(headerType);
}

export interface ExtendedItem {
  type: number;
  /** The item's data, a view into the trace's bytes. */
  data: Uint8Array;
}

/** One JSON object per record, the form of `etw-wasm events --format jsonl`. */
export interface EventJson {
  headerType: number;
  provider: string;
  group?: number;
  eventId: number;
  version: number;
  opcode: number;
  level: number;
  task: number;
  keywords: string;
  pid: number | null;
  tid: number | null;
  processor: number;
  timestamp: string;
  payloadLength: number;
  extTypes: number[];
}

/** Gives a row its TraceEvent name; supplied by the naming layer (bindings/naming), which sits above the tables. */
export type RowNamer = (row: EventRow) => string;

export class EventTable implements Iterable<EventRow> {
  readonly length: number;
  readonly columns: EventColumns;
  /** Whether the record bytes are there (false: the trace was opened with `payloads: "drop"`). */
  readonly recordBytes: boolean;
  /**
   * Where rows find their call stacks, named: set by `attachStacks(trace)` of etw-wasm/analysis
   * (stacks are matched over the whole trace, and frames named from its method and image events).
   */
  callStacks?: (index: number) => string[] | null;
  private order?: Uint32Array;
  private clrProviders?: Int16Array;
  /** clrSchema by event type: null for none, undefined not looked up yet. */
  private readonly schemaOfType: (ClrEventSchema | null | undefined)[] = [];

  constructor(
    readonly data: TraceData,
    readonly providers: ProviderTable,
    readonly clock: TraceClock,
    readonly defaultPointerSize: number,
    private readonly computeOrder: () => Uint32Array,
    readonly nameOf: RowNamer,
  ) {
    this.length = data.eventCount;
    this.columns = data.events;
    this.recordBytes = data.recordBytes !== false;
  }

  get timestamp(): BigInt64Array {
    return this.columns.timestamp;
  }
  get keywords(): BigUint64Array {
    return this.columns.keywords;
  }
  get pid(): Uint32Array {
    return this.columns.pid;
  }
  get tid(): Uint32Array {
    return this.columns.tid;
  }
  get payloadOffset(): Uint32Array {
    return this.columns.payloadOffset;
  }
  get payloadLength(): Uint16Array {
    return this.columns.payloadLength;
  }
  get headerLength(): Uint16Array {
    return this.columns.headerLength;
  }
  get provider(): Uint16Array {
    return this.columns.provider;
  }
  get eventId(): Uint16Array {
    return this.columns.eventId;
  }
  get task(): Uint16Array {
    return this.columns.task;
  }
  get flags(): Uint16Array {
    return this.columns.flags;
  }
  get processor(): Uint16Array {
    return this.columns.processor;
  }
  get version(): Uint16Array {
    return this.columns.version;
  }
  get opcode(): Uint8Array {
    return this.columns.opcode;
  }
  get level(): Uint8Array {
    return this.columns.level;
  }
  get headerType(): Uint8Array {
    return this.columns.headerType;
  }
  get channel(): Uint8Array {
    return this.columns.channel;
  }
  /** Index into the event type table (Trace.eventTypes); 0xFFFF for rows beyond its MAX_EVENT_TYPES types. */
  get eventType(): Uint16Array {
    return this.columns.eventType;
  }

  /**
   * A type field of one row (provider, eventId, version, opcode, headerType, keywords, task, level,
   * channel), from its event type: the whole column is not made for it (a row without a type reads the column).
   */
  typeFieldOf<F extends TypeField>(field: F, index: number): F extends "keywords" ? bigint : number {
    const k = this.columns.eventType[index];
    const of = this.typeValues()[field] as ArrayLike<number | bigint>;
    return (k < of.length ? of[k] : (this.columns[field] as ArrayLike<number | bigint>)[index]) as F extends "keywords" ? bigint : number;
  }

  /** Each type field's value by event type (index: the eventType column's value). */
  typeValues(): TypeFieldValues {
    return (this.typeValuesMade ??= typeFieldValues(this.data));
  }
  private typeValuesMade?: TypeFieldValues;

  /** A row's relativeMSec, from the timestamp column's 32-bit halves (no BigInt). */
  relativeMSecOf(index: number): number {
    const ts = this.columns.timestamp;
    if (ts !== this.timestamps) {
      this.timestamps = ts;
      this.halves = new Uint32Array(ts.buffer, ts.byteOffset, ts.length * 2);
    }
    return this.clock.relativeMSecParts(this.halves![2 * index + 1], this.halves![2 * index]);
  }
  private timestamps?: BigInt64Array;
  private halves?: Uint32Array;

  /** A row view that stays on `index`. */
  row(index: number): EventRow {
    if (!(index >= 0 && index < this.length)) throw new RangeError(`row ${index} out of range 0..${this.length - 1}`);
    return new EventRow(this, index);
  }

  /** Rows in file order. The same cursor object is yielded each time, moved to the next row. */
  [Symbol.iterator](): Iterator<EventRow> {
    return this.cursor(null);
  }

  /** Row indices in time order (computed on first use, then kept). */
  timeOrder(): Uint32Array {
    return (this.order ??= this.computeOrder());
  }

  /**
   * `rows` (distinct row indices) in time order: what timeOrder() gives with the other rows left out,
   * without ordering those when timeOrder() has not been made.
   */
  timeOrderOf(rows: Uint32Array): Uint32Array {
    return this.order ? onlyRows(this.order, this.length, rows) : timeOrderOf(this.data, rows);
  }

  /** Rows in time order, as one moving cursor. */
  byTime(): Iterable<EventRow> {
    return { [Symbol.iterator]: () => this.cursor(this.timeOrder()) };
  }

  /** A moving cursor over `rows` (all rows in file order when null). */
  cursor(rows: Uint32Array | null): IterableIterator<EventRow> {
    const row = new EventRow(this, -1);
    const n = rows ? rows.length : this.length;
    let i = 0;
    const it: IterableIterator<EventRow> = {
      next: (): IteratorResult<EventRow> => {
        if (i >= n) return { done: true, value: undefined };
        row.index = rows ? rows[i++] : i++;
        return { done: false, value: row };
      },
      [Symbol.iterator]: () => it,
    };
    return it;
  }

  /**
   * The decoder of payloads the trace describes itself (an EventPipe file's metadata), for rows that
   * are not .NET runtime events: a row's fields, or null when the row has no description.
   */
  describedPayload?: (index: number, bytes: Uint8Array, offset: number, length: number) => DecodedPayload | null;

  /**
   * Where row `index`'s ActivityId is in its record bytes, 0 where it is zero (asked of EVENT_HEADER rows
   * only): an .etl row's where its EVENT_HEADER keeps it, only if the decoder flagged it not zero
   * (F_ACTIVITY_ID); an EventPipe trace sets its own (naming/nettrace-names.ts: where its reader found it).
   */
  activityIdOffset = (index: number): number => {
    const c = this.columns;
    return c.flags[index] & C.F_ACTIVITY_ID ? c.payloadOffset[index] - c.headerLength[index] + 0x40 : 0;
  };

  /** CLR provider index (into CLR_PROVIDERS) of each provider of the trace, or -1. */
  clrProviderOf(provider: number): number {
    if (!this.clrProviders) {
      this.clrProviders = new Int16Array(this.providers.length);
      for (let i = 0; i < this.providers.length; i++) this.clrProviders[i] = clrProviderIndex(this.providers.get(i).guid);
    }
    return this.clrProviders[provider];
  }

  /** Schema of a row's .NET runtime event, if it is one (looked up once per event type). */
  clrSchema(index: number): ClrEventSchema | undefined {
    const type = this.columns.eventType[index];
    if (type !== C.EVENT_TYPE_NONE) {
      const known = this.schemaOfType[type];
      if (known !== undefined) return known ?? undefined;
    }
    const schema = this.findClrSchema(index);
    if (type !== C.EVENT_TYPE_NONE) this.schemaOfType[type] = schema ?? null;
    return schema;
  }

  private findClrSchema(index: number): ClrEventSchema | undefined {
    const p = this.clrProviderOf(this.typeFieldOf("provider", index));
    if (p < 0) return undefined;
    const ht = this.typeFieldOf("headerType", index);
    if (ht !== C.HT_EVENT_HEADER32 && ht !== C.HT_EVENT_HEADER64) return undefined;
    return findClrEvent(p, this.typeFieldOf("eventId", index), this.typeFieldOf("version", index));
  }

  /**
   * The bytes a row's payloadOffset and its extended items' offsets index into: the trace's bytes,
   * the row's buffer's record area read back (`payloads: "source"`; throws RecordsNotLoadedError
   * before `trace.loadRecords`), or null when the record bytes were dropped.
   */
  recordBytesOf(index: number): Uint8Array | null {
    if (this.recordBytes) return this.data.bytes;
    return this.data.records ? this.data.records.areaOf(index) : null;
  }

  /** A DataView of `bytes` (the one last asked for is kept: rows of one trace share their bytes). */
  viewOf(bytes: Uint8Array): DataView {
    if (bytes !== this.viewBytes) {
      this.viewBytes = bytes;
      this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    return this.view!;
  }
  private viewBytes?: Uint8Array;
  private view?: DataView;

  /** First extended item of a row, or -1 (items of one row are contiguous). */
  firstExtendedItem(index: number): number {
    const rows = this.data.ext.row;
    let lo = 0,
      hi = this.data.extCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rows[mid] < index) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.data.extCount && rows[lo] === index ? lo : -1;
  }
}

/** The extended item of row `index` that is its stack (STACK_TRACE32 or 64), -1 when it has none. */
export function stackItemOf(table: EventTable, index: number): number {
  const { ext, extCount } = table.data;
  let e = table.firstExtendedItem(index);
  if (e < 0) return -1;
  while (e < extCount && ext.row[e] === index && ext.type[e] !== 5 && ext.type[e] !== 6) e++;
  return e < extCount && ext.row[e] === index ? e : -1;
}

export class EventRow {
  constructor(
    readonly table: EventTable,
    public index: number,
  ) {}

  private get c(): EventColumns {
    return this.table.columns;
  }

  get timestamp(): bigint {
    return this.c.timestamp[this.index];
  }
  get providerIndex(): number {
    return this.table.typeFieldOf("provider", this.index);
  }
  get providerGuid(): string {
    return this.table.providers.get(this.providerIndex).guid;
  }
  get providerName(): string {
    return this.table.providers.get(this.providerIndex).name;
  }
  get eventId(): number {
    return this.table.typeFieldOf("eventId", this.index);
  }
  get version(): number {
    return this.table.typeFieldOf("version", this.index);
  }
  get opcode(): number {
    return this.table.typeFieldOf("opcode", this.index);
  }
  get level(): number {
    return this.table.typeFieldOf("level", this.index);
  }
  get task(): number {
    return this.table.typeFieldOf("task", this.index);
  }
  get channel(): number {
    return this.table.typeFieldOf("channel", this.index);
  }
  get keywords(): bigint {
    return this.table.typeFieldOf("keywords", this.index);
  }
  /**
   * The keyword bits by name: the manifest's names for the .NET runtime providers ("GC", "Loader",
   * "StartRundown"), lowest bit first; other bits (and every bit of other providers) as hex ("0x10").
   */
  get keywordNames(): string[] {
    return keywordNames(this.providerGuid, this.keywords);
  }
  /** The level by its standard name ("LogAlways", "Critical", "Error", "Warning", "Informational", "Verbose"; "Level(n)" above). */
  get levelName(): string {
    return levelName(this.level);
  }
  get processor(): number {
    return this.c.processor[this.index];
  }
  get headerType(): number {
    return this.table.typeFieldOf("headerType", this.index);
  }
  get headerTypeName(): string {
    return HEADER_TYPE_NAMES[this.headerType] ?? `Unknown(0x${this.headerType.toString(16)})`;
  }
  /** Flags as the record header stores them (EVENT_HEADER Flags, WPP OptionFlags). */
  get headerFlags(): number {
    return this.c.flags[this.index] & C.F_HEADER_FLAGS_MASK;
  }
  /** Decoder status bits (F_NO_PROCESS_INFO, F_TIMESTAMP_INHERITED, F_EXT_MALFORMED, F_OPAQUE, F_ACTIVITY_ID). */
  get status(): number {
    return this.c.flags[this.index] & ~C.F_HEADER_FLAGS_MASK & 0xffff;
  }
  get pid(): number | null {
    return this.status & C.F_NO_PROCESS_INFO ? null : this.c.pid[this.index];
  }
  get tid(): number | null {
    return this.status & C.F_NO_PROCESS_INFO ? null : this.c.tid[this.index];
  }
  get payloadOffset(): number {
    return this.c.payloadOffset[this.index];
  }
  get payloadLength(): number {
    return this.c.payloadLength[this.index];
  }
  /** The user data, a view into the trace's bytes (no copy); empty when the record bytes were dropped. */
  get payload(): Uint8Array {
    const bytes = this.table.recordBytesOf(this.index);
    const o = this.payloadOffset;
    return bytes ? bytes.subarray(o, o + this.payloadLength) : EMPTY;
  }
  /** Where the record starts in the bytes its payloadOffset indexes (see EventTable.recordBytesOf). */
  get recordOffset(): number {
    return this.payloadOffset - this.c.headerLength[this.index];
  }
  /** The whole record, header included. */
  get record(): Uint8Array {
    const bytes = this.table.recordBytesOf(this.index);
    return bytes ? bytes.subarray(this.recordOffset, this.payloadOffset + this.payloadLength) : EMPTY;
  }
  /** Size of pointers in the payload: from the header flavour (WPP: its POINTER32/64 option). */
  get pointerSize(): 4 | 8 {
    const ht = this.headerType;
    if (ht === C.HT_MESSAGE) {
      const f = this.headerFlags;
      return f & 0x40 ? 4 : f & 0x80 ? 8 : (this.table.defaultPointerSize as 4 | 8);
    }
    return POINTER4.has(ht) ? 4 : 8;
  }
  /** Kernel group byte (HookId high byte) of system-family records, else undefined. */
  get group(): number | undefined {
    if (!isSystemFamily(this.headerType)) return undefined;
    return this.table.recordBytesOf(this.index)?.[this.recordOffset + 7];
  }
  /** ActivityId of EVENT_HEADER records, else null. */
  get activityId(): string | null {
    const ht = this.headerType;
    if (ht !== C.HT_EVENT_HEADER32 && ht !== C.HT_EVENT_HEADER64) return null;
    const bytes = this.table.recordBytesOf(this.index);
    if (!bytes) return null;
    const o = this.table.activityIdOffset(this.index);
    return o ? formatGuid(bytes, o) : ZERO_GUID;
  }
  get relatedActivityId(): string | null {
    const item = this.extendedItems.find((e) => e.type === 1 && e.data.length >= 16);
    return item ? formatGuid(item.data, 0) : null;
  }
  get extendedItems(): ExtendedItem[] {
    const t = this.table;
    const out: ExtendedItem[] = [];
    let e = t.firstExtendedItem(this.index);
    if (e < 0) return out;
    const ext = t.data.ext;
    const bytes = t.recordBytesOf(this.index)!;
    for (; e < t.data.extCount && ext.row[e] === this.index; e++) {
      out.push({ type: ext.type[e], data: extItemBytes(t.data, bytes, e) });
    }
    return out;
  }
  get extTypes(): number[] {
    const t = this.table;
    const out: number[] = [];
    let e = t.firstExtendedItem(this.index);
    if (e < 0) return out;
    for (; e < t.data.extCount && t.data.ext.row[e] === this.index; e++) out.push(t.data.ext.type[e]);
    return out;
  }
  /** Return addresses of a STACK_TRACE32/64 extended item, or null. */
  /**
   * The row's call stack as frame names, leaf first (`module!method`, `module!?`, `?!?`), once
   * `attachStacks(trace)` has run; null before, or for a row without a stack. Named when asked.
   */
  get callStack(): string[] | null {
    return this.table.callStacks ? this.table.callStacks(this.index) : null;
  }
  get stack(): bigint[] | null {
    const t = this.table;
    const ext = t.data.ext;
    const e = stackItemOf(t, this.index);
    if (e < 0) return null;
    // (the frames follow the item's 8-byte MatchId, an EventPipe trace's bare items too: read where they are, no item made)
    const v = t.viewOf(t.recordBytesOf(this.index)!);
    const width = ext.type[e] === 6 ? 8 : 4;
    const end = ext.offset[e] + ext.size[e];
    const out: bigint[] = [];
    for (let o = ext.offset[e] + 8; o + width <= end; o += width) {
      out.push(width === 8 ? v.getBigUint64(o, true) : BigInt(v.getUint32(o, true)));
    }
    return out;
  }
  get relativeMSec(): number {
    return this.table.relativeMSecOf(this.index);
  }
  get filetime(): bigint {
    return this.table.clock.toFiletime(this.timestamp);
  }
  get time(): Date {
    return this.table.clock.toDate(this.timestamp);
  }

  /** Event name as TraceEvent prints it, e.g. "Microsoft-Windows-DotNETRuntime/GC/Start". */
  get name(): string {
    return this.table.nameOf(this);
  }
  /** Schema of the row's .NET runtime event (provider, id, version), if it is one. */
  get clrSchema(): ClrEventSchema | undefined {
    return this.table.clrSchema(this.index);
  }
  /** The payload decoded field by field (.NET runtime events by their schema, EventPipe events by their metadata); null for events without a description. */
  decode(): DecodedPayload | null {
    // the last row decoded is kept: get() of several fields of one row decodes it once
    if (this.decodedIndex === this.index) return this.decoded;
    const schema = this.clrSchema;
    const described = schema ? undefined : this.table.describedPayload;
    const bytes = schema || described ? this.table.recordBytesOf(this.index) : null;
    if (!bytes) this.decoded = null;
    else if (schema) this.decoded = decodeClrPayload(schema, bytes, this.payloadOffset, this.payloadLength, this.pointerSize);
    else this.decoded = described!(this.index, bytes, this.payloadOffset, this.payloadLength);
    // (a row whose bytes are not loaded yet is decoded again when asked again)
    this.decodedIndex = (schema || described) && !bytes ? -1 : this.index;
    return this.decoded;
  }
  private decodedIndex = -1;
  private decoded: DecodedPayload | null = null;
  /** Every decoded field by name. */
  get fields(): Record<string, FieldValue> {
    const d = this.decode();
    const out: Record<string, FieldValue> = {};
    if (d) d.names.forEach((n, i) => (out[n] = d.values[i]));
    return out;
  }
  /** One field by name (undefined when absent or beyond a short payload). */
  get(name: string): FieldValue | undefined {
    // a field at a fixed offset is read where it is, without decoding the payload (strings and all)
    const schema = this.decodedIndex === this.index ? undefined : this.clrSchema;
    if (schema) {
      const bytes = this.table.recordBytesOf(this.index);
      if (bytes) {
        const view = this.table.viewOf(bytes);
        const v = readFixedField(schema, name, bytes, view, this.payloadOffset, this.payloadLength, this.pointerSize);
        if (v !== null) return v;
        // (past strings: found by skipping them, the payload not decoded)
        const w = readScannedField(schema, name, bytes, view, this.payloadOffset, this.payloadLength, this.pointerSize);
        if (w !== null) return w;
      }
    }
    const d = this.decode();
    if (!d) return undefined;
    const i = d.names.indexOf(name);
    return i < 0 ? undefined : d.values[i];
  }
  /** A field's value-map or bit-map name (unknown values as the number), or the plain value. */
  getDisplay(name: string): FieldValue | string | undefined {
    const schema = this.clrSchema;
    const value = this.get(name);
    const f = schema?.fields.find((x) => x.name === name);
    if (!schema || !f?.map || typeof value !== "number") return value;
    return mapName(schema.provider, f.map, value) ?? String(value);
  }

  /** A row that stays here when a cursor moves on. */
  clone(): EventRow {
    return new EventRow(this.table, this.index);
  }

  toJSON(): EventJson {
    const group = this.group;
    const json: EventJson = {
      headerType: this.headerType,
      provider: this.providerGuid,
      eventId: this.eventId,
      version: this.version,
      opcode: this.opcode,
      level: this.level,
      task: this.task,
      keywords: "0x" + this.keywords.toString(16).padStart(16, "0"),
      pid: this.pid,
      tid: this.tid,
      processor: this.processor,
      timestamp: this.timestamp.toString(),
      payloadLength: this.payloadLength,
      extTypes: this.extTypes,
    };
    if (group === undefined) return json;
    const { headerType, provider, ...rest } = json;
    return { headerType, provider, group, ...rest };
  }
}
