// The decoded form of a trace or of one window of it, whichever engine produced it: typed-array
// columns, and one byte store that the offsets in the columns (payload, extended items, names) and
// the structs (buffers, warnings, providers, event types, logfile header) index. The layouts of the
// structs (BUF_STRIDE, B_*, WARN_*, PROV_*, TYPE_*, LH_*) are in assembly/codes.ts.

import * as C from "../../../assembly/codes.js";
import type { TraceDecodeError, TraceIncomplete } from "./trace-errors.js";
import type { NettraceMetadata, NettraceWarning } from "../../eventpipe/format.js";

export interface EventColumns {
  /** Raw timestamp in the trace's clock (normally QPC ticks). */
  timestamp: BigInt64Array;
  keywords: BigUint64Array;
  /** Process id; 0xFFFFFFFF where the header has none (see `flags` & F_NO_PROCESS_INFO). */
  pid: Uint32Array;
  tid: Uint32Array;
  /** Offset of the user data in `bytes`. */
  payloadOffset: Uint32Array;
  payloadLength: Uint16Array;
  /** Bytes from the start of the record to its user data (record start = payloadOffset - headerLength). */
  headerLength: Uint16Array;
  /** Index into the provider table. */
  provider: Uint16Array;
  eventId: Uint16Array;
  task: Uint16Array;
  /** Header flags (low 12 bits) and decoder status bits (high 4 bits, F_*). */
  flags: Uint16Array;
  processor: Uint16Array;
  version: Uint16Array;
  opcode: Uint8Array;
  level: Uint8Array;
  headerType: Uint8Array;
  channel: Uint8Array;
  /** Index into the event type table; EVENT_TYPE_NONE (0xFFFF) for rows beyond its MAX_EVENT_TYPES types. */
  eventType: Uint16Array;
}

/** A typed-array type a column is made of: fresh, or as a view. */
export interface ColumnType {
  new (length: number): ArrayBufferView & ArrayLike<unknown>;
  new (buffer: ArrayBuffer, byteOffset: number, length: number): ArrayBufferView & ArrayLike<unknown>;
  readonly BYTES_PER_ELEMENT: number;
}

/** Each event column's typed-array type, and the directory slot (codes.ts DIR_*) of its address in the core. */
export const EVENT_COLUMN_LAYOUT: Readonly<Record<keyof EventColumns, readonly [ColumnType, number]>> = {
  timestamp: [BigInt64Array, C.DIR_TIMESTAMP],
  keywords: [BigUint64Array, C.DIR_KEYWORDS],
  pid: [Uint32Array, C.DIR_PID],
  tid: [Uint32Array, C.DIR_TID],
  payloadOffset: [Uint32Array, C.DIR_PAYLOAD_OFFSET],
  payloadLength: [Uint16Array, C.DIR_PAYLOAD_LENGTH],
  headerLength: [Uint16Array, C.DIR_HEADER_LENGTH],
  provider: [Uint16Array, C.DIR_PROVIDER],
  eventId: [Uint16Array, C.DIR_EVENT_ID],
  task: [Uint16Array, C.DIR_TASK],
  flags: [Uint16Array, C.DIR_FLAGS],
  processor: [Uint16Array, C.DIR_PROCESSOR],
  version: [Uint16Array, C.DIR_VERSION],
  opcode: [Uint8Array, C.DIR_OPCODE],
  level: [Uint8Array, C.DIR_LEVEL],
  headerType: [Uint8Array, C.DIR_HEADER_TYPE],
  channel: [Uint8Array, C.DIR_CHANNEL],
  eventType: [Uint16Array, C.DIR_EVENT_TYPE],
};

/**
 * The event columns a row's event type decides (its struct, TYPE_*, holds them). The cores store them
 * only for rows without a type (EVENT_TYPE_NONE, past the type table's MAX_EVENT_TYPES types), so a
 * row costs 19 bytes less to write and to move; a table of such rows makes them whole from the
 * `eventType` column on first use (withDecidedFields). The header type is written for every row of a
 * core's window (its typed-table fill reads the pointer size there) but handed on, like the others, only
 * for rows without a type.
 */
export const TYPE_FIELDS = ["provider", "eventId", "version", "opcode", "headerType", "keywords", "task", "level", "channel"] as const;
export type TypeField = (typeof TYPE_FIELDS)[number];
/**
 * The event column a row's buffer decides: an .etl buffer's records are one processor's (its struct,
 * B_PROCESSOR, holds it; rows B_FIRST_ROW.. are its records). The cores do not store it; a table
 * makes it from its buffers on first use. (An EventPipe file, which has no such buffers, stores it.)
 */
const BUFFER_FIELDS = ["processor"] as const;
type BufferField = (typeof BUFFER_FIELDS)[number];
/** The event columns stored as they are: all but the type fields and the buffer's. */
export type StoredEventColumns = Omit<EventColumns, TypeField | BufferField>;
export const STORED_EVENT_LAYOUT = Object.fromEntries(
  Object.entries(EVENT_COLUMN_LAYOUT).filter(([k]) => !(TYPE_FIELDS as readonly string[]).includes(k) && !(BUFFER_FIELDS as readonly string[]).includes(k)),
) as Readonly<Record<keyof StoredEventColumns, readonly [ColumnType, number]>>;
/** The type fields' columns (as the cores keep them, for rows without a type). */
export const TYPE_FIELD_LAYOUT = Object.fromEntries(TYPE_FIELDS.map((k) => [k, EVENT_COLUMN_LAYOUT[k]])) as Readonly<
  Record<TypeField, readonly [ColumnType, number]>
>;
/** Where each type field is in an event type struct (its width is its column's). */
const TYPE_FIELD_AT: Readonly<Record<TypeField, number>> = {
  provider: C.TYPE_PROVIDER,
  eventId: C.TYPE_EVENT_ID,
  version: C.TYPE_VERSION,
  opcode: C.TYPE_OPCODE,
  headerType: C.TYPE_HEADER_TYPE,
  keywords: C.TYPE_KEYWORDS,
  task: C.TYPE_TASK,
  level: C.TYPE_LEVEL,
  channel: C.TYPE_CHANNEL,
};

/** The values of each type field by event type (index: the eventType column's value). */
export type TypeFieldValues = { [F in TypeField]: EventColumns[F] };

/**
 * An event type's identity: its key (TYPE_KEY_BYTES bytes of its struct at `at`) with its provider
 * index `provider` in place of the struct's (the tables that put types of several windows or files
 * together map providers first).
 */
export function typeKeyOf(bytes: Uint8Array, at: number, provider: number): string {
  let key = String(provider);
  for (let i = C.TYPE_PROVIDER + 2; i < C.TYPE_KEY_BYTES; i++) key += String.fromCharCode(bytes[at + i]);
  return key;
}

/**
 * `stored` with the fields the cores do not store added, each made on first use. The type fields:
 * from the event type of each of the `n` rows (the struct in the type table of `tables()`, the trace
 * or window the columns belong to) and, for rows without a type, from `untyped` (the cores'
 * type-field columns, written only for those rows; absent when there are none). The buffer's
 * (processor), unless `stored` has it: from the buffer table. What sends a window to another thread
 * sends its stored columns (storedColumns) and `untyped`, and the other side adds the rest again.
 */
export function withDecidedFields(
  stored: StoredEventColumns,
  n: number,
  tables: () => Pick<TraceData, "bytes" | "meta" | "typesOffset" | "typeCount" | "buffersOffset" | "bufferCount">,
  untyped?: Partial<Pick<EventColumns, TypeField>>,
): EventColumns {
  const events = stored as EventColumns;
  for (const field of TYPE_FIELDS) madeOnFirstRead(events, field, () => typeField(field, events.eventType, n, tables(), untyped?.[field]));
  if (!("processor" in stored)) madeOnFirstRead(events, "processor", () => processorColumn(n, tables()));
  return events;
}

/** Each of the `n` rows' processor, from the buffers that hold them (rows of no buffer: 0). */
function processorColumn(n: number, t: Pick<TraceData, "bytes" | "meta" | "buffersOffset" | "bufferCount">): Uint16Array {
  const out = new Uint16Array(n);
  const meta = metaOf(t as TraceData);
  const v = new DataView(meta.buffer, meta.byteOffset);
  for (let b = 0; b < t.bufferCount; b++) {
    const at = t.buffersOffset + b * C.BUF_STRIDE;
    const first = v.getUint32(at + C.B_FIRST_ROW, true),
      count = v.getUint32(at + C.B_ROW_COUNT, true);
    if (count) out.fill(v.getUint16(at + C.B_PROCESSOR, true), first, Math.min(n, first + count));
  }
  return out;
}

/** Gives `target` a property `key` that `make` makes when it is first read, and that is then a plain value. */
export function madeOnFirstRead<T extends object>(target: T, key: keyof T, make: () => unknown): void {
  Object.defineProperty(target, key, {
    configurable: true,
    enumerable: true,
    get() {
      const value = make();
      Object.defineProperty(target, key, { value, writable: true, configurable: true, enumerable: true });
      return value;
    },
  });
}

/** The stored columns of `events` (the type fields left where they are: not made). */
export function storedColumns(events: EventColumns): StoredEventColumns {
  const out = {} as Record<string, unknown>;
  for (const k of Object.keys(STORED_EVENT_LAYOUT)) out[k] = events[k as keyof StoredEventColumns];
  return out as unknown as StoredEventColumns;
}

/** Each type field's value by event type (`typeCount` entries), from the type structs of `t`. */
export function typeFieldValues(t: Pick<TraceData, "bytes" | "meta" | "typesOffset" | "typeCount">): TypeFieldValues {
  const out = {} as Record<TypeField, ArrayBufferView>;
  for (const field of TYPE_FIELDS) out[field] = typeFieldOfTypes(t, field);
  return out as unknown as TypeFieldValues;
}

/** One type field's value by event type (`typeCount` entries). */
function typeFieldOfTypes(t: Pick<TraceData, "bytes" | "meta" | "typesOffset" | "typeCount">, field: TypeField): Uint8Array | Uint16Array | BigUint64Array {
  const meta = metaOf(t as TraceData);
  const count = t.typeCount;
  const Type = EVENT_COLUMN_LAYOUT[field][0];
  const width = Type.BYTES_PER_ELEMENT;
  // (gathered byte by byte into a little-endian view: every width, no BigInt per value)
  const of = new Type(count);
  const into = new Uint8Array(of.buffer);
  for (let k = 0; k < count; k++) {
    const o = t.typesOffset + k * C.TYPE_STRIDE + TYPE_FIELD_AT[field];
    for (let b = 0; b < width; b++) into[k * width + b] = meta[o + b];
  }
  return of as Uint8Array | Uint16Array | BigUint64Array;
}

function typeField(
  field: TypeField,
  eventType: Uint16Array,
  n: number,
  t: Pick<TraceData, "bytes" | "meta" | "typesOffset" | "typeCount">,
  untyped?: ArrayBufferView,
): ArrayBufferView {
  // (only this field's values: a batch of a long stream reads each field of a type table of thousands)
  const of = typeFieldOfTypes(t, field);
  const count = of.length;
  if (of instanceof BigUint64Array) {
    // two 32-bit words a row: no BigInt per row
    const out = new BigUint64Array(n);
    const words = new Uint32Array(out.buffer),
      ofWords = new Uint32Array(of.buffer);
    const from = untyped && new Uint32Array(untyped.buffer, untyped.byteOffset, n * 2);
    for (let r = 0; r < n; r++) {
      const k = eventType[r];
      const src = k < count ? ofWords : from;
      const at = k < count ? 2 * k : 2 * r;
      if (src) {
        words[2 * r] = src[at];
        words[2 * r + 1] = src[at + 1];
      }
    }
    return out;
  }
  const values = of as Uint16Array | Uint8Array;
  const out = new (values.constructor as Uint16ArrayConstructor | Uint8ArrayConstructor)(n);
  const from = untyped as Uint16Array | Uint8Array | undefined;
  for (let r = 0; r < n; r++) {
    const k = eventType[r];
    out[r] = k < count ? values[k] : from ? from[r] : 0;
  }
  return out;
}

/** Rows of a window (or trace) without an event type: its rows less those its types count. */
export function untypedRows(data: TraceData): number {
  const meta = metaOf(data);
  const v = new DataView(meta.buffer, meta.byteOffset);
  let typed = 0;
  for (let k = 0; k < data.typeCount; k++) typed += v.getUint32(data.typesOffset + k * C.TYPE_STRIDE + C.TYPE_ROWS, true);
  return data.eventCount - typed;
}

export interface ExtendedItemColumns {
  /** Event row of each item; ascending. */
  row: Uint32Array;
  type: Uint16Array;
  size: Uint16Array;
  /** Offset of the item data in `bytes`. */
  offset: Uint32Array;
}

/** Each extended-item column's typed-array type, and the directory slot of its address in the core. */
export const EXT_COLUMN_LAYOUT: Readonly<Record<keyof ExtendedItemColumns, readonly [ColumnType, number]>> = {
  row: [Uint32Array, C.DIR_EXT_ROW],
  type: [Uint16Array, C.DIR_EXT_TYPE],
  size: [Uint16Array, C.DIR_EXT_SIZE],
  offset: [Uint32Array, C.DIR_EXT_OFFSET],
};

/** The parts joined into one array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `n` rounded up to a multiple of 8 (arithmetic, not bitwise: offsets pass 2^31). */
/**
 * Maps the first `n` of a column's provider or event type indices onto another numbering (those `to`
 * has: the rest, "none", stay): a window made by another core, put on the trace's numbering.
 */
export function remap(col: Uint16Array, n: number, to: ArrayLike<number>): void {
  const known = to.length;
  for (let i = 0; i < n; i++) {
    const k = col[i];
    if (k < known) col[i] = to[k];
  }
}

export function align8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

/** What an EventPipe trace keeps beside its tables: the metadata, for naming and decoding its events. */
export interface NettraceInfo {
  formatVersion: number;
  metadata: NettraceMetadata[];
  /** Provider index (in the trace's provider table) of each metadata row. */
  providerOf: Int32Array;
  /** Metadata row of each event row, -1 when its metadata id was never defined. */
  metadataOfRow: Int32Array;
  /** Where each event row's ActivityId sits in the trace's bytes; 0 when it is all zero or absent. */
  activityOfRow: Uint32Array;
  /** The reader's warnings (the window's, in a stream). */
  warnings: NettraceWarning[];
  /** Events whose payload passes 64 KiB, the event table's limit: their payloadLength is cut to 65,535. */
  payloadsCut: number;
}

export interface TraceData {
  /** Backing store of every offset in the tables (WASM linear memory for the wasm engine). */
  bytes: Uint8Array;
  /**
   * Where the structs are (buffers, warnings, providers, event types, the logfile header and its names)
   * when not in `bytes`: a trace whose record bytes are its input (no copy of them) keeps its structs
   * apart. `bytes` when absent (metaOf).
   */
  meta?: Uint8Array;
  /**
   * An EventPipe trace's stack items are its stack blocks' frames where they lie in `bytes`: an item's
   * first 8 bytes (an ETW stack item's MatchId) are whatever precedes the frames there, so read the
   * items with extItemBytes, which gives them with MatchId 0.
   */
  bareStacks?: boolean;
  events: EventColumns;
  eventCount: number;
  /**
   * The cores' type-field columns (TYPE_FIELDS), meaningful only at rows without an event type;
   * absent when the events' type fields are whole columns, or no row lacks a type.
   */
  untyped?: Partial<Pick<EventColumns, TypeField>>;
  ext: ExtendedItemColumns;
  extCount: number;
  /** Buffer table: `bufferCount` structs of BUF_STRIDE bytes at `buffersOffset` in `bytes`. */
  buffersOffset: number;
  bufferCount: number;
  /** Warning structs (WARN_STRIDE bytes) at `warningsOffset`; `warningTotal` counts those not kept too. */
  warningsOffset: number;
  warningCount: number;
  warningTotal: number;
  /** Provider structs (PROV_STRIDE bytes) at `providersOffset`. */
  providersOffset: number;
  providerCount: number;
  /** Event type structs (TYPE_STRIDE bytes, TYPE_* offsets) at `typesOffset`, in order of first sight. */
  typesOffset: number;
  typeCount: number;
  /** Logfile header struct (LH_* offsets) at `logfileOffset`. */
  logfileOffset: number;
  /**
   * The typed .NET runtime tables, by schema event (the index of clrProgram().layouts): rows and a
   * block laid out as that layout says for `caps[t]` rows (`counts[t]` when `caps` is absent), its
   * first `counts[t]` rows used (null where there are none). A window's blocks, in the core's memory,
   * have room to spare; blocks copied out hold their rows exactly. Absent when not decoded.
   */
  clr?: { counts: Uint32Array; blocks: (Uint8Array | null)[]; caps?: Uint32Array };
  /** Rows placed in typed tables. */
  clrRows: number;
  /** Bytes of record data kept (the arena). */
  arenaBytes: number;
  /** Bytes of input given (the whole file, even where decoding stopped before its end). */
  inputBytes: number;
  /** Bytes of input decoded: `inputBytes`, or less when decoding stopped early (the offset where it stopped). */
  decodedBytes: number;
  /** Set when the trace is not complete: why, and from which byte offset. */
  incomplete?: TraceIncomplete;
  /** Set when decoding stopped early; every row before its offset is kept. */
  decodeError?: TraceDecodeError;
  /** Hands the backing memory back for reuse once the trace is disposed. */
  release?: () => void;
  /** The tables are views into the decoder's memory (a trace of one window, or a batch of a stream). */
  inCore?: boolean;
  /**
   * False when the record bytes were not kept (`payloads: "drop"`): payloads, records, extended items
   * and the typed tables' strings, GUIDs and arrays are then not there, and every offset into them is 0.
   */
  recordBytes?: boolean;
  /**
   * `payloads: "source"`: the record bytes are read back from the input on demand. Then
   * `recordBytes` is false, and payload and extended-item offsets are offsets inside the row's
   * buffer's record area (`records.areaOf(row)`), not into `bytes`.
   */
  records?: RecordAreas;
  /**
   * Several files merged into one trace (decode/session/merge.ts): each file's rows, buffers, warnings and
   * header. Absent for a trace of one file.
   */
  files?: SourceFile[];
  /** An EventPipe file's metadata and what its rows add (absent for .etl traces). */
  nettrace?: NettraceInfo;
}

export interface BufferInfo {
  index: number;
  fileOffset: number;
  sequence: bigint;
  timestamp: bigint;
  firstRow: number;
  rowCount: number;
  bufferSize: number;
  savedOffset: number;
  filledBytes: number;
  dataLength: number;
  processor: number;
  loggerId: number;
  flags: number;
  type: number;
  compressed: boolean;
  truncated: boolean;
  skipped: boolean;
  /** A bad record ended the walk of this buffer early. */
  abandoned: boolean;
}

/** The bytes the struct offsets (buffersOffset, warningsOffset, ...) index. */
export function metaOf(data: TraceData): Uint8Array {
  return data.meta ?? data.bytes;
}

/** Extended item `e`'s bytes; `bytes`: those its row's offsets index (the trace's, or its buffer's records). */
export function extItemBytes(data: TraceData, bytes: Uint8Array, e: number): Uint8Array {
  const at = data.ext.offset[e],
    end = at + data.ext.size[e];
  const type = data.ext.type[e];
  if (!data.bareStacks || (type !== 5 && type !== 6)) return bytes.subarray(at, end);
  // (a stack item made when asked for: MatchId 0, then the frames where they are)
  const item = new Uint8Array(end - at);
  item.set(bytes.subarray(at + 8, end), 8);
  return item;
}

/** `data` with its bare stack items (bareStacks) made ETW stack items after its bytes, where its extended items point. */
export function withStacksPlaced(data: TraceData): TraceData {
  if (!data.bareStacks) return data;
  const { ext, extCount } = data;
  // (each item once: rows that share a stack share its item)
  const placed = new Map<number, [to: number, size: number]>();
  const offset = ext.offset.slice();
  let size = align8(data.bytes.length);
  for (let e = 0; e < extCount; e++) {
    if (ext.type[e] !== 5 && ext.type[e] !== 6) continue;
    let at = placed.get(ext.offset[e]);
    if (!at) {
      placed.set(ext.offset[e], (at = [size, ext.size[e]]));
      size += align8(ext.size[e]);
    }
    offset[e] = at[0];
  }
  const bytes = new Uint8Array(size);
  bytes.set(data.bytes);
  for (const [from, [to, n]] of placed) bytes.set(data.bytes.subarray(from + 8, from + n), to + 8);
  return { ...data, bytes, ext: { ...ext, offset }, bareStacks: undefined };
}

/** The buffer table's entry `index` (a BUF_STRIDE-byte struct at `buffersOffset`). */
export function readBuffer(data: TraceData, index: number): BufferInfo {
  const m = metaOf(data);
  const v = new DataView(m.buffer, m.byteOffset + data.buffersOffset + index * C.BUF_STRIDE, C.BUF_STRIDE);
  const status = v.getUint16(C.B_STATUS, true);
  return {
    index,
    fileOffset: v.getFloat64(C.B_FILE_OFFSET, true),
    sequence: v.getBigInt64(C.B_SEQUENCE, true),
    timestamp: v.getBigInt64(C.B_TIMESTAMP, true),
    firstRow: v.getUint32(C.B_FIRST_ROW, true),
    rowCount: v.getUint32(C.B_ROW_COUNT, true),
    dataLength: v.getUint32(C.B_DATA_LENGTH, true),
    bufferSize: v.getUint32(C.B_BUFFER_SIZE, true),
    savedOffset: v.getUint32(C.B_SAVED_OFFSET, true),
    filledBytes: v.getUint32(C.B_FILLED, true),
    processor: v.getUint16(C.B_PROCESSOR, true),
    loggerId: v.getUint16(C.B_LOGGER_ID, true),
    flags: v.getUint16(C.B_FLAGS, true),
    type: v.getUint16(C.B_TYPE, true),
    compressed: (status & C.BS_COMPRESSED) !== 0,
    truncated: (status & C.BS_TRUNCATED) !== 0,
    skipped: (status & C.BS_SKIPPED) !== 0,
    abandoned: (status & C.BS_ABANDONED) !== 0,
  };
}

/** Record bytes read back from the input on demand (`payloads: "source"`; decode/input/record-source.ts). */
export interface RecordAreas {
  /** The loaded record area that a row's payloadOffset and extended-item offsets index into; throws when not loaded. */
  areaOf(row: number): Uint8Array;
  /** Reads the records of `rows` back from the input. */
  load(rows: number | { start: number; end: number } | ArrayLike<number> | Iterable<number>): Promise<void>;
  close(): Promise<void>;
}

/** The file a row of a merged trace came from (an index into `files`), by binary search over their row ranges. */
export function fileOfRow(files: readonly { firstRow: number }[], row: number): number {
  let lo = 0,
    hi = files.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (files[mid].firstRow <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** One input file of a merged trace. */
export interface SourceFile {
  name: string;
  /** Its rows: [firstRow, firstRow + rowCount) of the merged tables. */
  firstRow: number;
  rowCount: number;
  /** Its buffers, warnings and extended items in the merged tables. */
  firstBuffer: number;
  bufferCount: number;
  firstWarning: number;
  warningCount: number;
  /** Its own logfile header struct (LH_*) in the merged byte store. */
  logfileOffset: number;
  inputBytes: number;
  decodedBytes: number;
  clock: FileClock;
  incomplete?: TraceIncomplete;
  decodeError?: TraceDecodeError;
}

/** How a file's timestamps were put on the session's clock. */
export type FileClock =
  /** the session's clock is this file's (the file that started first) */
  | "anchor"
  /** raw timestamps kept: the file shares the anchor's clock */
  | "shared"
  /** converted through the file's own start time and frequency: its clock is not the anchor's */
  | "rebased";
