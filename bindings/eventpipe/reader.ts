// Reader of .NET EventPipe trace files: .netperf (format V3) and .nettrace (V4, V5, V6), written from the
// EventPipe format specification (nettrace-format.md; section numbers "§n" below refer to it).
//
// readNettrace(bytes) walks the whole container once and returns the header facts, the events as
// struct-of-arrays typed arrays (offsets into `bytes`, no object per event), the metadata table, the
// interned/inline stacks, sequence points, the V6 thread and label-list tables, warnings and at most
// one fatal NettraceFormatError. It never throws for bad input: a truncated or corrupt file yields
// everything decoded before the fault plus `error` (with the byte offset); damage inside a block whose
// framing is intact yields a warning and decoding resumes at the next block. NettraceStreamReader reads
// a file as it arrives, in windows between sequence points (positions are then a window's; errors and
// warnings still give file offsets).
//
// Events are listed in file order (not the time order TraceEvent dispatches in, §13); payloads are not
// decoded. The records of V4+ Event and Metadata blocks are framed by a walker (walk.ts): the
// source both cores share, assembly/nettrace-events.ts, run by the TypeScript core (the default) or by
// the WebAssembly core (bindings/decode/eventpipe/engine.ts); this reader does the lookups over its rows.

import {
  NTE_NEED,
  NTE_VAR32_LONG,
  NTE_VAR64_LONG,
  NTE_EVENT_SIZE,
  NTE_EVENT_PAST_END,
  NTE_PAYLOAD_SIZE,
  NTW_EVENT_SIZE,
  NTW_FLAGS,
  NTW_METADATA_ID,
  NTW_SEQUENCE_DELTA,
  NTW_CAPTURE_THREAD,
  NTW_PROCESSOR,
  NTW_THREAD,
  NTW_STACK_ID,
  NTW_TIMESTAMP_DELTA,
  NTW_LABEL_LIST,
  NTW_ACTIVITY,
  NTW_RELATED,
  NTW_PAYLOAD_SIZE,
  NTW_PAYLOAD,
} from "../core/generated/nettrace-events.js";
import {
  jsNettraceWalker,
  NT_MORE,
  NT_ERROR,
  NT_SLOW,
  LK_METADATA_DIRECT,
  LK_STACK_DIRECT,
  LK_LABEL_DIRECT,
  LK_LABELS,
  queueSlot,
  type NettraceLookups,
  type NettraceRows,
  type NettraceWalker,
} from "./walk.js";
import {
  NE_TRUNCATED,
  NE_BAD_MAGIC,
  NE_UNSUPPORTED_VERSION,
  NE_BAD_OBJECT,
  NE_BAD_TRACE,
  NE_BAD_BLOCK,
  NE_TOO_LARGE,
  NE_INTERNAL,
  NW_BLOCK_DAMAGED,
  NW_BAD_METADATA,
  NW_METADATA_FIELDS,
  NW_METADATA_REDEFINED,
  NW_UNKNOWN_METADATA,
  NW_UNKNOWN_STACK,
  NW_UNKNOWN_OBJECT,
  NW_BLOCK_VERSION,
  NW_TRAILING_BYTES,
  NW_METADATA_ID_ZERO,
  NW_SEQUENCE_BACKWARDS,
  NW_BAD_SYNC_TIME,
  NW_UNKNOWN_BLOCK_KIND,
  NW_BAD_ROW,
  NW_DUPLICATE_THREAD,
  NW_BLOCK_TRAILING,
  MAX_NETTRACE_WARNINGS,
  BLOCK_TRACE,
  BLOCK_EVENT,
  BLOCK_METADATA,
  BLOCK_SEQUENCE_POINT,
  BLOCK_STACK,
  BLOCK_THREAD,
  BLOCK_REMOVE_THREAD,
  BLOCK_LABEL_LIST,
  BLOCK_UNKNOWN,
  TC_OBJECT,
  TC_BOOLEAN,
  TC_STRING,
  TC_ARRAY,
  TC_VARINT,
  TC_VARUINT,
  TC_FIXED_ARRAY,
  TC_UTF8_CODE_UNIT,
  TC_RELLOC,
  TC_DATALOC,
  TC_BOOLEAN8,
  LABEL_ACTIVITY,
  LABEL_RELATED_ACTIVITY,
  LABEL_TRACE_ID,
  LABEL_SPAN_ID,
  LABEL_KEY_VALUE,
  LABEL_OPCODE,
  LABEL_KEYWORDS,
  LABEL_LEVEL,
  LABEL_VERSION,
  NettraceFormatError,
  type NettraceWarning,
  type NettraceHeader,
  type NettraceField,
  type NettraceType,
  type NettraceMetadata,
  type NettraceThread,
  type NettraceRemovedThread,
  type NettraceFile,
  type NettraceWindow,
} from "./format.js";
import { BlockColumns, CoreEventColumns, EventColumns, LabelListColumns, SequencePointColumns, StackColumns } from "./columns.js";

export type { NettraceWalker } from "./walk.js";
export * from "./format.js";

/** Reader.next(): the stream has ended; a streamed input has not given the next object's bytes yet. */
export const NEXT_END = -1;
export const NEXT_NEED = -2;

// ---------------------------------------------------------------------------------------------
// The reader

export const TAG_NULL = 1;
const TAG_BEGIN = 4; // V3
export const TAG_BEGIN_PRIVATE = 5; // V4/V5
export const TAG_END = 6;

const FS_SIGNATURE = "!FastSerialization.1";
export const MAX_TYPE_NAME = 38;
const MAX_FIELD_DEPTH = 32; // nesting of Object / array element descriptions
const MAX_V3_STACK = 65527;

const utf16 = new TextDecoder("utf-16le");
const utf8 = new TextDecoder("utf-8");

/** The messages' names of the fields the walker reads (NTW_* codes). */
const WALK_WHAT: string[] = [];
WALK_WHAT[NTW_EVENT_SIZE] = "event size";
WALK_WHAT[NTW_FLAGS] = "compressed header flags";
WALK_WHAT[NTW_METADATA_ID] = "metadata id";
WALK_WHAT[NTW_SEQUENCE_DELTA] = "sequence number delta";
WALK_WHAT[NTW_CAPTURE_THREAD] = "capture thread id";
WALK_WHAT[NTW_PROCESSOR] = "processor number";
WALK_WHAT[NTW_THREAD] = "thread id";
WALK_WHAT[NTW_STACK_ID] = "stack id";
WALK_WHAT[NTW_TIMESTAMP_DELTA] = "timestamp delta";
WALK_WHAT[NTW_LABEL_LIST] = "label list id";
WALK_WHAT[NTW_ACTIVITY] = "activity id";
WALK_WHAT[NTW_RELATED] = "related activity id";
WALK_WHAT[NTW_PAYLOAD_SIZE] = "payload size";
WALK_WHAT[NTW_PAYLOAD] = "event payload";

const TWO_32 = 4294967296;
/** Ids below these are looked up in the lookups' tables (in the walk), the rest in Maps. */
const METADATA_DIRECT = LK_METADATA_DIRECT;
const STACK_DIRECT = LK_STACK_DIRECT;
const LABEL_DIRECT = LK_LABEL_DIRECT;

/**
 * A capture thread's key in queueOf: the signed 64-bit value as a number where a
 * double holds it exactly (every real id), else as a bigint. threadKey and bigThreadKey agree.
 */
function threadKey(lo: number, hi: number): number | bigint {
  if (hi < 0x200000) return hi * TWO_32 + lo;
  if (hi >= 0xffe00000) return (hi - TWO_32) * TWO_32 + lo;
  return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo));
}

function bigThreadKey(id: bigint): number | bigint {
  return id >= -0x20000000000000n && id < 0x20000000000000n ? Number(id) : id;
}

/** A Uint32Array over a 64-bit column's bytes: row i is words 2i (low) and 2i+1 (high). */
function halves(a: BigInt64Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
}

export class Reader {
  bytes: Uint8Array;
  dv: DataView;
  len: number;
  /** File offset of bytes[0]: 0 for a whole file; a streamed file's window starts later. */
  base = 0;
  /** No bytes follow `bytes` (a whole file, or a stream whose input has ended). */
  final = true;
  /** Read position and the end of the structure being read (reads past it fail). */
  pos = 0;
  end = 0;

  header: NettraceHeader = {
    formatVersion: 0,
    container: "unknown",
    minorVersion: 0,
    traceObjectVersion: 0,
    traceObjectMinVersion: 0,
    syncTimeUtc: { year: 0, month: 0, dayOfWeek: 0, day: 0, hour: 0, minute: 0, second: 0, millisecond: 0 },
    syncTimeFileTime: 0n,
    syncTimeQpc: 0n,
    qpcFrequency: 0n,
    pointerSize: 0,
    processId: 0,
    numberOfProcessors: 0,
    expectedCpuSamplingRate: 0,
    keyValues: [],
  };
  version = 0; // 3, 4 or 6 while reading (V5 is decided at the end)
  sawV5Tags = false;
  haveTrace = false;
  complete = false;
  /** A Trace object version 2 (.NET Core 2.0): the forward reference to the end of its events, and that end. */
  v2ForwardRef = -1;
  v2End = -1;

  events: EventColumns | CoreEventColumns = new EventColumns();
  /** The events are written where the walk puts them, in its core (readInPlace). */
  inPlace = false;
  stacks = new StackColumns();
  blocks = new BlockColumns();
  sequencePoints = new SequencePointColumns();
  labelLists = new LabelListColumns();
  metadata: NettraceMetadata[] = [];
  threads: NettraceThread[] = [];
  removedThreads: NettraceRemovedThread[] = [];
  warnings: NettraceWarning[] = [];
  warningCount = 0;
  eventsLost = 0;

  /** Caches: metadata id → row; stack id → row and label-list index → row (cleared at sequence points). */
  metadataById = new Map<number, number>();
  stackById = new Map<number, number>();
  labelListByIndex = new Map<number, number>();
  threadByIndex = new Map<bigint, number>();
  /** Each capture thread's number (the events' `queue`; by threadKey / bigThreadKey), in order of first sight. */
  queueOf = new Map<number | bigint, number>();
  /**
   * The tables each event's lookups read, in the walker's core (walk.ts NettraceLookups): the
   * metadata rows of ids below METADATA_DIRECT (row + 1, 0: none; the map's copy), the stack rows of
   * ids below STACK_DIRECT (valid while their epoch is the current one; the map holds the rest), the
   * capture threads' queue cache (ids below 2^32, in front of queueOf) and each queue's last sequence
   * number (§14). Taken from the walker on first use.
   */
  private tables: NettraceLookups | null = null;
  /**
   * The estimate of the events a window will hold (expectedEvents): the file offset where its rows
   * began, the most bytes ahead it counts on, and the most times the rows at hand the columns grow to.
   * A streamed file's windows end at sequence points, unknown ahead, so it counts on less.
   */
  windowFrom = 0;
  expectBytes = Infinity;
  expectTimes = 16;
  /** takeWindow keeps the columns for the next window (whose rows overwrite the last one's). */
  reuseColumns = false;

  blockStart = 0;

  /**
   * Reads windows one at a time whose events are written where the walk puts them, in its core
   * (CoreEventColumns): a window's columns are the next window's, and views of the core's memory.
   */
  readInPlace(): void {
    this.reuseColumns = true;
    this.inPlace = true;
    this.events = new CoreEventColumns((this.walker ??= jsNettraceWalker()).core);
  }

  get lk(): NettraceLookups {
    return (this.tables ??= (this.walker ??= jsNettraceWalker()).lookups(this));
  }

  constructor(
    bytes: Uint8Array,
    private walker?: NettraceWalker,
  ) {
    this.bytes = bytes;
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.len = bytes.length;
    this.end = this.len;
  }

  /** The bytes from file offset `base` on (a streamed file's unread rest); positions restart at 0. */
  setBytes(bytes: Uint8Array, base: number, final: boolean): void {
    this.bytes = bytes;
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.len = bytes.length;
    this.end = this.len;
    this.base = base;
    this.final = final;
  }

  // ---- primitives (every read is checked against this.end) ----

  /** Throws the error at position `at` (its offset is the file's). */
  fail(code: number, at: number, message: string): never {
    throw new NettraceFormatError(code, this.base + at, message);
  }

  need(n: number, what: string): number {
    const p = this.pos;
    if (n < 0 || p + n > this.end) {
      this.fail(NE_TRUNCATED, p, `${what}: needs ${n} bytes, ${Math.max(0, this.end - p)} left in ${this.end === this.len ? "the input" : "the structure"}`);
    }
    this.pos = p + n;
    return p;
  }

  u8(what: string): number {
    return this.bytes[this.need(1, what)];
  }
  u16(what: string): number {
    return this.dv.getUint16(this.need(2, what), true);
  }
  i16(what: string): number {
    return this.dv.getInt16(this.need(2, what), true);
  }
  i32(what: string): number {
    return this.dv.getInt32(this.need(4, what), true);
  }
  u32(what: string): number {
    return this.dv.getUint32(this.need(4, what), true);
  }
  i64(what: string): bigint {
    return this.dv.getBigInt64(this.need(8, what), true);
  }
  u64(what: string): bigint {
    return this.dv.getBigUint64(this.need(8, what), true);
  }

  /** LEB128, at most 5 bytes; bits above 32 are dropped. */
  varU32(what: string): number {
    let v = 0;
    for (let i = 0; i < 5; i++) {
      const b = this.u8(what);
      v += (b & 0x7f) * 2 ** (7 * i);
      if ((b & 0x80) === 0) return v >>> 0;
    }
    this.fail(NE_TRUNCATED, this.pos - 5, `${what}: varuint32 longer than 5 bytes`);
  }

  /** LEB128, at most 10 bytes, as an unsigned 64-bit value. */
  varU64(what: string): bigint {
    let lo = 0;
    for (let i = 0; i < 7; i++) {
      const b = this.u8(what);
      lo += (b & 0x7f) * 2 ** (7 * i);
      if ((b & 0x80) === 0) return BigInt(lo);
    }
    let v = BigInt(lo);
    for (let i = 7; i < 10; i++) {
      const b = this.u8(what);
      v |= BigInt(b & 0x7f) << BigInt(7 * i);
      if ((b & 0x80) === 0) return BigInt.asUintN(64, v);
    }
    this.fail(NE_TRUNCATED, this.pos - 10, `${what}: varuint64 longer than 10 bytes`);
  }

  /** NUL-terminated UTF-16LE. */
  utf16z(what: string): string {
    const start = this.pos;
    let p = start;
    while (p + 1 < this.end) {
      if (this.bytes[p] === 0 && this.bytes[p + 1] === 0) {
        this.pos = p + 2;
        return p === start ? "" : utf16.decode(this.bytes.subarray(start, p));
      }
      p += 2;
    }
    this.fail(NE_TRUNCATED, start, `${what}: UTF-16 string without terminator`);
  }

  /** varuint32 length + UTF-8 (V6). */
  utf8v(what: string): string {
    const n = this.varU32(what);
    const p = this.need(n, what);
    return n === 0 ? "" : utf8.decode(this.bytes.subarray(p, p + n));
  }

  isZero16(p: number): boolean {
    const b = this.bytes;
    for (let i = 0; i < 16; i++) if (b[p + i] !== 0) return false;
    return true;
  }

  /** A warning at position `offset` (reported with the file's offset). */
  warn(code: number, offset: number, message: string): void {
    this.warningCount++;
    if (this.warnings.length < MAX_NETTRACE_WARNINGS) this.warnings.push({ code, offset: this.base + offset, message });
  }

  // ---- top level (§1) ----

  /** The stream's prelude has been read: `pos` is at the first object or block. */
  started = false;
  /** FastSerialization: the container's begin tag (0 for V6). */
  beginTag = 0;

  /** The whole input, object after object. */
  run(): void {
    this.start();
    while (this.next() !== NEXT_END) {
      // (every object is read as it comes)
    }
  }

  /**
   * Reads the stream's prelude (magic, stream header). False when a stream has not given enough
   * bytes for it yet.
   */
  start(): boolean {
    if (this.len >= 0x1_0000_0000) this.fail(NE_TOO_LARGE, 0, "input of 4 GiB or more");
    if (!this.final && this.len < 32) return false;
    const b = this.bytes;
    const magic =
      this.len >= 8 && b[0] === 0x4e && b[1] === 0x65 && b[2] === 0x74 && b[3] === 0x74 && b[4] === 0x72 && b[5] === 0x61 && b[6] === 0x63 && b[7] === 0x65;
    this.started = true;
    if (!magic) {
      this.header.container = "netperf";
      this.version = 3;
      this.pos = 0;
      this.fastSerializationHeader(false);
      return true;
    }
    this.pos = 8;
    const reserved = this.u32("stream header");
    if (reserved !== 0) {
      this.header.container = "nettrace";
      this.version = 4;
      this.pos = 8;
      this.fastSerializationHeader(true);
      return true;
    }
    this.header.container = "nettrace6";
    const major = this.u32("V6 major version");
    const minor = this.u32("V6 minor version");
    this.header.minorVersion = minor;
    if (major !== 6) this.fail(NE_UNSUPPORTED_VERSION, 12, `Nettrace major version ${major} (only 6 has this header)`);
    this.version = 6;
    this.header.formatVersion = 6;
    return true;
  }

  /**
   * Reads the next object (V3–V5) or block (V6): its BLOCK_* kind; NEXT_END after the end of the
   * stream; NEXT_NEED, reading nothing, when a stream has not given all of its bytes yet.
   */
  next(): number {
    // (a version 2 file's events end where its trailer says: read once the file has ended)
    if (this.version === 2) return this.final ? this.v2Events() : NEXT_NEED;
    if (!this.final && this.extent(this.pos) > this.len) return NEXT_NEED;
    return this.version === 6 ? this.v6Block() : this.fastSerializationObject();
  }

  /**
   * A version 2 file's events (EventPipeEventSource with SUPPORT_V1_V2): records of the V3 layout, byte-packed,
   * straight after the Trace object up to the offset its forward reference resolves to, then the end.
   */
  v2Events(): number {
    const at = this.pos;
    if (this.v2End < 0) {
      try {
        this.v2End = this.forwardReference(this.v2ForwardRef) - this.base;
      } catch (e) {
        if (!(e instanceof NettraceFormatError)) throw e;
        // a file cut short has no trailer: its events up to the cut, then where it stopped
        this.blocks.add(BLOCK_EVENT, at, at, this.len - at, 2);
        this.block(BLOCK_EVENT, at, at, this.len);
        this.fail(NE_TRUNCATED, this.len, `input ends before the end of its events (${e.reason})`);
      }
    }
    if (at >= this.v2End) {
      this.complete = true;
      return NEXT_END;
    }
    this.blocks.add(BLOCK_EVENT, at, at, this.v2End - at, 2);
    this.block(BLOCK_EVENT, at, at, this.v2End);
    if (this.v2End > this.len) this.fail(NE_TRUNCATED, this.len, "input ends inside the events");
    this.pos = this.v2End;
    return BLOCK_EVENT;
  }

  /**
   * The stream offset FastSerialization forward reference `index` resolves to: the file's last four bytes
   * give the trailer, whose first int32 is where the forward-reference table is (an int32 count, then an
   * int32 offset each).
   */
  forwardReference(index: number): number {
    const dv = this.dv,
      len = this.len,
      base = this.base;
    if (len < 8) this.fail(NE_TRUNCATED, len, "input ends before the FastSerialization trailer");
    const trailer = dv.getInt32(len - 4, true) - base;
    if (trailer < 0 || trailer + 4 > len - 4) this.fail(NE_BAD_OBJECT, len - 4, `trailer offset ${trailer + base} outside the file`);
    const table = dv.getInt32(trailer, true) - base;
    if (table < 0 || table + 4 > len) this.fail(NE_BAD_OBJECT, trailer, `forward-reference table offset ${table + base} outside the file`);
    const count = dv.getInt32(table, true);
    if (count < 0 || index < 0 || index >= count || table + 4 + 4 * count > len)
      this.fail(NE_BAD_OBJECT, table, `forward reference ${index} not in the table of ${count}`);
    const end = dv.getInt32(table + 4 + 4 * index, true);
    if (end - base < this.pos || end - base > len) this.fail(NE_BAD_OBJECT, table + 4 + 4 * index, `end of the events at ${end}, outside them`);
    return end;
  }

  /** Where the object or block at `at` ends, as far as its first bytes tell (a bad header: at once). */
  extent(at: number): number {
    const b = this.bytes,
      dv = this.dv,
      len = this.len;
    if (this.version === 6) return at + 4 > len ? at + 4 : at + 4 + (dv.getUint32(at, true) & 0xffffff);
    if (at >= len) return at + 1;
    if (b[at] === TAG_NULL) return at + 1;
    if (at + 16 > len) return at + 16;
    const nameLen = dv.getInt32(at + 11, true);
    if (nameLen < 0 || nameLen > MAX_TYPE_NAME) return at;
    const sizeAt = at + 16 + nameLen;
    let name = "";
    for (let i = 0; i < nameLen && at + 15 + i < len; i++) name += String.fromCharCode(b[at + 15 + i]);
    if (name === "Trace" || name === "Microsoft.DotNet.Runtime.EventPipeFile") return sizeAt + 49;
    if (sizeAt + 4 > len) return sizeAt + 4;
    const size = dv.getInt32(sizeAt, true);
    if (size < 0) return at;
    return this.aligned4(sizeAt + 4) + size + 1;
  }

  /** Position `p` moved up to a 4-byte file offset (blocks are aligned in the file, not in a window). */
  aligned4(p: number): number {
    return p + ((4 - ((this.base + p) % 4)) % 4);
  }

  // ---- FastSerialization (§3) ----

  fastSerializationHeader(nettrace: boolean): void {
    const start = this.pos;
    // i32 20 + "!FastSerialization.1": compare the bytes present; a matching short input is truncated.
    const have = Math.min(24, this.len - start);
    let sig = true;
    for (let i = 0; sig && i < have; i++) {
      const want = i === 0 ? FS_SIGNATURE.length : i < 4 ? 0 : FS_SIGNATURE.charCodeAt(i - 4);
      if (this.bytes[start + i] !== want) sig = false;
    }
    if (!sig) this.fail(NE_BAD_MAGIC, start, 'not a .nettrace/.netperf file (no "!FastSerialization.1" header)');
    if (have < 24) this.fail(NE_TRUNCATED, this.len, "input ends inside the FastSerialization header");
    this.pos = start + 24;
    this.beginTag = nettrace ? TAG_BEGIN_PRIVATE : TAG_BEGIN;
  }

  /** One object: the Trace object, a block, or the end-of-stream tag. */
  fastSerializationObject(): number {
    const nettrace = this.version !== 3;
    const beginTag = this.beginTag;
    const objStart = this.pos;
    if (objStart >= this.len) this.fail(NE_TRUNCATED, objStart, "input ends before the end-of-stream tag");
    const tag = this.bytes[objStart];
    if (tag === TAG_NULL) {
      this.pos++;
      this.complete = true;
      if (!this.haveTrace) this.fail(NE_BAD_TRACE, objStart, "stream ends without a Trace object");
      if (this.pos < this.len) this.warn(NW_TRAILING_BYTES, this.pos, `${this.len - this.pos} bytes after the end-of-stream tag`);
      return NEXT_END;
    }
    if (tag !== beginTag) this.fail(NE_BAD_OBJECT, objStart, `expected object tag ${beginTag}, found ${tag}`);
    this.pos++;
    if (this.u8("object header") !== beginTag) this.fail(NE_BAD_OBJECT, objStart + 1, "type object does not start with the begin tag");
    if (this.u8("object header") !== TAG_NULL) this.fail(NE_BAD_OBJECT, objStart + 2, "type of the type object is not NullReference");
    const version = this.i32("object version");
    const minVersion = this.i32("object minimum reader version");
    const nameAt = this.pos;
    const nameLen = this.i32("type name length");
    if (nameLen < 0 || nameLen > MAX_TYPE_NAME) this.fail(NE_BAD_OBJECT, nameAt, `type name length ${nameLen}`);
    const np = this.need(nameLen, "type name");
    let name = "";
    for (let i = 0; i < nameLen; i++) name += String.fromCharCode(this.bytes[np + i]);
    if (this.u8("object header") !== TAG_END) this.fail(NE_BAD_OBJECT, this.pos - 1, "type object does not end with the end tag");

    if (name === "Trace" || name === "Microsoft.DotNet.Runtime.EventPipeFile") {
      if (this.haveTrace) this.fail(NE_BAD_TRACE, objStart, "second Trace object");
      // (.NET Core 2.0 writes version 2, .NET Core 2.1 version 3; version 1's providers are GUIDs, not read here)
      const v2 = !nettrace && version === 2;
      if (nettrace ? version !== 4 : !v2 && version !== 3) {
        this.fail(
          NE_UNSUPPORTED_VERSION,
          objStart + 3,
          `Trace object version ${version} ${nettrace ? "(nettrace needs 4)" : "(netperf: versions 2 and 3 are read)"}`,
        );
      }
      this.header.traceObjectVersion = version;
      this.header.traceObjectMinVersion = minVersion;
      const content = this.pos;
      if (v2) this.v2ForwardRef = this.i32("end-of-events forward reference");
      this.traceFields(false, v2);
      // (FastSerialization.FindEndTag: a version 2 Trace object may lack its end tag; a byte above 0x50 is the first event's)
      if (v2 && this.pos < this.len && this.bytes[this.pos] !== TAG_END && this.bytes[this.pos] > 0x50) {
        // no end tag
      } else if (this.u8("Trace object end") !== TAG_END) this.fail(NE_BAD_TRACE, this.pos - 1, "Trace object does not end with the end tag");
      this.blocks.add(BLOCK_TRACE, objStart, content, v2 ? 36 : 48, version);
      this.haveTrace = true;
      this.header.formatVersion = nettrace ? 4 : v2 ? 2 : 3;
      if (v2) this.version = 2;
      return BLOCK_TRACE;
    }
    if (!this.haveTrace) this.fail(NE_BAD_TRACE, objStart, `object "${name}" before the Trace object`);

    // Block object: i32 size, padding to a 4-byte file offset, content, end tag.
    const sizeAt = this.pos;
    const size = this.i32("block size");
    if (size < 0) this.fail(NE_BAD_OBJECT, sizeAt, `negative block size ${size}`);
    const content = this.aligned4(this.pos);
    const contentEnd = content + size;
    const kind = blockKindNamed(name, nettrace);

    if (contentEnd < this.len) {
      // Framing first: a wrong size must not let garbage be decoded as records.
      if (this.bytes[contentEnd] !== TAG_END) this.fail(NE_BAD_OBJECT, contentEnd, `block "${name}" of ${size} bytes is not followed by the end tag`);
    }
    this.blocks.add(kind, objStart, content, size, version);
    if (kind === BLOCK_UNKNOWN) {
      this.warn(NW_UNKNOWN_OBJECT, objStart, `unknown object type "${name}" skipped`);
    } else {
      if (version > 2) this.warn(NW_BLOCK_VERSION, objStart + 3, `${name} version ${version} (2 expected)`);
      this.block(kind, objStart, content, contentEnd);
    }
    if (contentEnd >= this.len) this.fail(NE_TRUNCATED, this.len, `input ends inside block "${name}" (${contentEnd + 1 - this.len} bytes missing)`);
    this.pos = contentEnd + 1;
    this.end = this.len;
    return kind;
  }

  /** Trace object (V3–V5, 48 bytes) or V6 Trace block (§5). */
  traceFields(v6: boolean, v2 = false): void {
    const h = this.header;
    const t = h.syncTimeUtc;
    const at = this.pos;
    t.year = this.i16("SyncTimeUTC");
    t.month = this.i16("SyncTimeUTC");
    t.dayOfWeek = this.i16("SyncTimeUTC");
    t.day = this.i16("SyncTimeUTC");
    t.hour = this.i16("SyncTimeUTC");
    t.minute = this.i16("SyncTimeUTC");
    t.second = this.i16("SyncTimeUTC");
    t.millisecond = this.i16("SyncTimeUTC");
    const valid =
      t.year >= 1601 &&
      t.year <= 30827 &&
      t.month >= 1 &&
      t.month <= 12 &&
      t.day >= 1 &&
      t.day <= 31 &&
      t.hour >= 0 &&
      t.hour < 24 &&
      t.minute >= 0 &&
      t.minute < 60 &&
      t.second >= 0 &&
      t.second < 60 &&
      t.millisecond >= 0 &&
      t.millisecond < 1000;
    if (valid) {
      const d = new Date(0);
      d.setUTCFullYear(t.year, t.month - 1, t.day);
      d.setUTCHours(t.hour, t.minute, t.second, t.millisecond);
      h.syncTimeFileTime = (BigInt(d.getTime()) + 11644473600000n) * 10000n;
    } else {
      h.syncTimeFileTime = 0n;
      this.warn(NW_BAD_SYNC_TIME, at, "SyncTimeUTC is not a valid date");
    }
    h.syncTimeQpc = this.i64("SyncTimeQPC");
    h.qpcFrequency = this.i64("QPCFrequency");
    if (v2) {
      // (EventPipeEventSource.FromStream: version 1 and 2 files are of 64-bit Linux, one processor, process id 0)
      h.pointerSize = 8;
      h.processId = 0;
      h.numberOfProcessors = 1;
      h.expectedCpuSamplingRate = 0;
      return;
    }
    h.pointerSize = this.i32("PointerSize");
    if (h.pointerSize !== 4 && h.pointerSize !== 8) this.fail(NE_BAD_TRACE, this.pos - 4, `pointer size ${h.pointerSize}`);
    if (!v6) {
      h.processId = this.i32("ProcessId");
      h.numberOfProcessors = this.i32("NumberOfProcessors");
      h.expectedCpuSamplingRate = this.i32("ExpectedCPUSamplingRate");
      return;
    }
    const count = this.i32("trace key/value count");
    if (count < 0) this.fail(NE_BAD_TRACE, this.pos - 4, `key/value count ${count}`);
    for (let i = 0; i < count; i++) {
      const key = this.utf8v("trace key");
      const value = this.utf8v("trace value");
      h.keyValues.push([key, value]);
      const num = /^[+-]?\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
      if (!Number.isSafeInteger(num) || num < -0x80000000 || num > 0x7fffffff) continue;
      if (key === "HardwareThreadCount") h.numberOfProcessors = num;
      else if (key === "ProcessId") h.processId = num;
      else if (key === "ExpectedCPUSamplingRate") h.expectedCpuSamplingRate = num;
    }
  }

  // ---- V6 blocks (§4) ----

  /** One V6 block. */
  v6Block(): number {
    const at = this.pos;
    this.end = this.len;
    if (at >= this.len) this.fail(NE_TRUNCATED, at, "input ends before the EndOfStream block");
    if (at + 4 > this.len) this.fail(NE_TRUNCATED, at, "input ends inside a block header");
    const word = this.u32("block header");
    const size = word & 0xffffff;
    const kind = word >>> 24;
    const content = this.pos;
    const contentEnd = content + size;
    if (kind === 0) {
      if (size !== 0) this.fail(NE_BAD_BLOCK, at, `EndOfStream block of size ${size}`);
      if (!this.haveTrace) this.fail(NE_BAD_TRACE, at, "stream ends without a Trace block");
      this.complete = true;
      if (this.pos < this.len) this.warn(NW_TRAILING_BYTES, this.pos, `${this.len - this.pos} bytes after the EndOfStream block`);
      return NEXT_END;
    }
    if (kind === BLOCK_TRACE) {
      if (this.haveTrace) this.fail(NE_BAD_TRACE, at, "second Trace block");
      this.end = Math.min(contentEnd, this.len);
      this.traceFields(true);
      this.haveTrace = true;
      this.blocks.add(kind, at, content, size, 0);
    } else {
      if (!this.haveTrace) this.fail(NE_BAD_TRACE, at, `block of kind ${kind} before the Trace block`);
      this.blocks.add(kind, at, content, size, 0);
      if (kind > BLOCK_LABEL_LIST) this.warn(NW_UNKNOWN_BLOCK_KIND, at, `block kind ${kind} skipped`);
      else this.block(kind, at, content, contentEnd);
    }
    if (contentEnd > this.len) this.fail(NE_TRUNCATED, this.len, `input ends inside a block of kind ${kind} (${contentEnd - this.len} bytes missing)`);
    this.pos = contentEnd;
    return kind;
  }

  // ---- block dispatch ----

  /** Decodes one block's content; damage inside it becomes a warning (the caller checks truncation). */
  block(kind: number, blockStart: number, content: number, contentEnd: number): void {
    this.blockStart = blockStart;
    this.pos = content;
    this.end = Math.min(contentEnd, this.len);
    try {
      switch (kind) {
        case BLOCK_EVENT:
          if (this.version <= 3) this.v3EventBlock();
          else this.eventBlock(false);
          break;
        case BLOCK_METADATA:
          if (this.version === 6) this.v6MetadataBlock();
          else this.eventBlock(true);
          break;
        case BLOCK_STACK:
          this.stackBlock();
          break;
        case BLOCK_SEQUENCE_POINT:
          this.sequencePointBlock();
          break;
        case BLOCK_THREAD:
          this.threadBlock();
          break;
        case BLOCK_REMOVE_THREAD:
          this.removeThreadBlock();
          break;
        case BLOCK_LABEL_LIST:
          this.labelListBlock();
          break;
      }
    } catch (e) {
      if (!(e instanceof NettraceFormatError)) throw e;
      // A truncated block: the caller reports the truncation as the fatal error.
      if (contentEnd > this.len) return;
      this.warn(NW_BLOCK_DAMAGED, e.offset - this.base, `${e.reason}; rest of the block at ${this.base + blockStart} skipped`);
    }
  }

  // ---- V3 events (§6.2) ----

  v3EventBlock(): void {
    const ptr = this.header.pointerSize;
    while (this.pos < this.end) {
      const start = this.pos;
      const eventSize = this.i32("V3 event size");
      if (eventSize < 52) this.fail(NE_TRUNCATED, start, `V3 event size ${eventSize} below the 56-byte header`);
      const recEnd = start + 4 + eventSize;
      if (recEnd > this.end) this.fail(NE_TRUNCATED, start, `V3 event of ${eventSize} bytes runs past the end of its block`);
      const dv = this.dv;
      const metadataId = dv.getInt32(start + 4, true);
      const threadId = dv.getInt32(start + 8, true);
      const timestamp = dv.getBigInt64(start + 12, true);
      const payloadSize = dv.getInt32(start + 52, true);
      const payload = start + 56;
      if (payloadSize < 0 || payload + payloadSize + 4 > recEnd)
        this.fail(NE_TRUNCATED, start + 52, `V3 payload size ${payloadSize} does not fit the event of ${eventSize} bytes`);
      const stackAt = payload + payloadSize;
      const stackSize = dv.getInt32(stackAt, true);
      if (stackSize < 0 || stackSize > MAX_V3_STACK || stackAt + 4 + stackSize > recEnd)
        this.fail(NE_TRUNCATED, stackAt, `V3 stack size ${stackSize} does not fit the event`);
      this.pos = recEnd;
      if (metadataId === 0) {
        if (this.version === 2) this.metadataRecordV2(start, payload, payloadSize);
        else this.metadataRecord(payload, payloadSize);
        continue;
      }
      if (this.events.length === this.events.room) this.events.reserve(1, this.expectedEvents(this.events.length + 1, recEnd), this.expectTimes);
      const ev = this.events.refresh();
      const i = ev.add();
      ev.timestamp[i] = timestamp;
      ev.metadataId[i] = metadataId;
      ev.metadata[i] = this.lookupMetadata(metadataId, start);
      ev.sequenceNumber[i] = 0;
      ev.captureThreadId[i] = -1n;
      ev.threadId[i] = BigInt(threadId);
      ev.processorNumber[i] = -1;
      if (stackSize >= ptr) {
        const row = this.stacks.add(this.stacks.length + 1, stackAt + 4, stackSize - (stackSize % ptr));
        ev.stackId[i] = row + 1;
        ev.stack[i] = row;
      } else {
        ev.stackId[i] = 0;
        ev.stack[i] = -1;
      }
      ev.payloadOffset[i] = payload;
      ev.payloadLength[i] = payloadSize;
      ev.activityIdOffset[i] = this.isZero16(start + 20) ? 0 : start + 20;
      ev.relatedActivityIdOffset[i] = this.isZero16(start + 36) ? 0 : start + 36;
      ev.labelListId[i] = 0;
      ev.labelList[i] = -1;
      ev.flags[i] = 0;
      ev.blockOffset[i] = this.blockStart;
      ev.queue[i] = 0;
    }
  }

  // ---- V4+ event and metadata blocks (§6.1, §6.3–6.5) ----

  eventBlock(metadataBlock: boolean): void {
    const headerAt = this.pos;
    const headerSize = this.u16("block header size");
    if (headerSize < 20) this.fail(NE_TRUNCATED, headerAt, `block header size ${headerSize} below 20`);
    const flags = this.u16("block flags");
    this.pos = headerAt;
    this.need(headerSize, "block header");
    const compressed = (flags & 1) !== 0;
    const v6 = this.version === 6;
    // (the lookups taken before the walk: their first use allocates in the core, which would let go the rows' views)
    const lk = this.lk;
    const lookups = metadataBlock ? undefined : lk;
    const walker = this.walker!;
    let from = this.pos;
    let resume = false;
    const inPlace = this.inPlace && !metadataBlock ? (this.events as CoreEventColumns) : undefined;
    // (V6 rows written in place get their label lists from the walk: the columns it writes them to are the window's)
    if (lookups) lk.view().words[LK_LABELS] = inPlace && v6 ? 1 : 0;
    while (from < this.end) {
      let rows: NettraceRows;
      if (inPlace) {
        // (rows written where the window's events are: room for some first)
        if (inPlace.length === inPlace.room) inPlace.reserve(1, this.expectedEvents(inPlace.length + 1, from), this.expectTimes);
        const first = inPlace.length;
        rows = walker.walk(this.bytes, from, this.end, compressed, v6, resume, lookups, {
          cols: inPlace.ptr,
          stride: inPlace.stride,
          first,
          cap: inPlace.room,
        });
        this.eventsInPlace(rows, v6);
        // (the rows' payloads are where the walk read them: what fills the typed tables takes them now)
        if (inPlace.length > first) walker.placed?.(inPlace, first, inPlace.length, this.metadata, this.header.pointerSize);
      } else {
        rows = walker.walk(this.bytes, from, this.end, compressed, v6, resume, lookups);
        if (metadataBlock) {
          for (let k = 0; k < rows.count; k++) this.metadataRecord(rows.payloadOffset[k], rows.payloadSize[k]);
        } else {
          this.addEvents(rows);
        }
      }
      from = rows.next;
      this.pos = from;
      if (rows.status === NT_ERROR) this.walkFailed(rows, v6);
      if (rows.status !== NT_MORE && rows.status !== NT_SLOW) break;
      resume = true;
    }
  }

  /** The walker's report of a malformed record, as the error its check gives (NTE_*). */
  walkFailed(rows: NettraceRows, v6: boolean): never {
    const at = rows.errorAt;
    const what = WALK_WHAT[rows.errorWhat] ?? "event";
    switch (rows.errorKind) {
      case NTE_NEED:
        return this.fail(
          NE_TRUNCATED,
          at,
          `${what}: needs ${rows.errorArg} bytes, ${Math.max(0, this.end - at)} left in ${this.end === this.len ? "the input" : "the structure"}`,
        );
      case NTE_VAR32_LONG:
        return this.fail(NE_TRUNCATED, at, `${what}: varuint32 longer than 5 bytes`);
      case NTE_VAR64_LONG:
        return this.fail(NE_TRUNCATED, at, `${what}: varuint64 longer than 10 bytes`);
      case NTE_EVENT_SIZE:
        return this.fail(NE_TRUNCATED, at, `event size ${rows.errorArg | 0} below the ${v6 ? 52 : 80}-byte header`);
      case NTE_EVENT_PAST_END:
        return this.fail(NE_TRUNCATED, at, `event of ${rows.errorArg | 0} bytes runs past the end of its block`);
      case NTE_PAYLOAD_SIZE:
        return this.fail(NE_TRUNCATED, at, `payload size ${rows.errorArg | 0} does not fit the event of ${rows.errorArg2 | 0} bytes`);
      default:
        return this.fail(NE_TRUNCATED, at, `malformed event record (walker error ${rows.errorKind})`);
    }
  }

  /**
   * One walk's rows as events. The walk did each row's lookups (metadata, stack, the capture thread's
   * queue and its sequence number) in the core, so its columns are copied whole, but for the last row
   * of an NT_SLOW walk, whose lookups are done here (slowEvent); V6 label lists are looked up here.
   */
  addEvents(rows: NettraceRows): void {
    const lk = this.lk;
    if (lk.owner !== this) throw new Error("etw-wasm: one nettrace walker read by two readers at once");
    const n = rows.count;
    const fast = rows.status === NT_SLOW ? n - 1 : n;
    const ev = this.events;
    if (ev.length + n > ev.room) ev.reserve(n, this.expectedEvents(ev.length + n, rows.next), this.expectTimes);
    const first = ev.length;
    const v6 = this.version === 6;
    if (fast > 0) {
      halves(ev.timestamp).set(rows.timestamp.subarray(0, 2 * fast), 2 * first);
      halves(ev.captureThreadId).set(rows.captureThread.subarray(0, 2 * fast), 2 * first);
      halves(ev.threadId).set(rows.thread.subarray(0, 2 * fast), 2 * first);
      ev.metadataId.set(rows.metadataId.subarray(0, fast), first);
      ev.metadata.set(rows.metadata.subarray(0, fast), first);
      ev.sequenceNumber.set(rows.sequenceNumber.subarray(0, fast), first);
      ev.processorNumber.set(rows.processorNumber.subarray(0, fast), first);
      ev.stackId.set(rows.stackId.subarray(0, fast), first);
      ev.stack.set(rows.stack.subarray(0, fast), first);
      ev.payloadOffset.set(rows.payloadOffset.subarray(0, fast), first);
      ev.payloadLength.set(rows.payloadSize.subarray(0, fast), first);
      ev.labelListId.set(rows.labelListId.subarray(0, fast), first);
      ev.flags.set(rows.flags.subarray(0, fast), first);
      ev.blockOffset.fill(this.blockStart, first, first + fast);
      ev.queue.set(rows.queue.subarray(0, fast), first);
      if (v6) this.labelsOf(rows.labelListId, rows.recordOffset, 0, fast, first);
      else {
        ev.activityIdOffset.set(rows.activityIdOffset.subarray(0, fast), first);
        ev.relatedActivityIdOffset.set(rows.relatedActivityIdOffset.subarray(0, fast), first);
        ev.labelList.fill(-1, first, first + fast);
      }
      ev.length = first + fast;
    }
    this.eventsLost += lk.takeLost();
    if (fast < n) this.slowEvent(rows, n - 1, v6);
  }

  /**
   * A walk's rows written in place (Reader.readInPlace): the columns the walk does not write, and the
   * last row of an NT_SLOW walk, whose lookups are done here (rowLookups).
   */
  eventsInPlace(rows: NettraceRows, v6: boolean): void {
    const lk = this.lk;
    if (lk.owner !== this) throw new Error("etw-wasm: one nettrace walker read by two readers at once");
    // (the walk may have allocated in the core)
    const ev = (this.events as CoreEventColumns).refresh();
    const n = rows.count;
    const first = ev.length;
    const fast = rows.status === NT_SLOW ? n - 1 : n;
    ev.blockOffset.fill(this.blockStart, first, first + n);
    // (V6: the walk gave the rows their label lists, LK_LABELS)
    if (!v6) ev.labelList.fill(-1, first, first + n);
    ev.length = first + fast;
    this.eventsLost += lk.takeLost();
    if (fast === n) return;
    // the last row, whose lookups the walk left here: an event, unless its metadata id is 0
    const i = ev.length;
    if (ev.metadataId[i] === 0) {
      this.warn(NW_METADATA_ID_ZERO, ev.recordOffset[i], "event with metadata id 0 in an EventBlock skipped");
      return;
    }
    if (v6) this.labelsOf(ev.labelListId, ev.recordOffset, i, i + 1, i);
    ev.length = i + 1;
    this.rowLookups(i, ev.recordOffset[i]);
  }

  /** V6: the label lists of rows [from, to) of `labelListId` (events `first` on), and the activity ids they give. */
  labelsOf(labelListId: Uint32Array, recordOffset: Uint32Array, from: number, to: number, first: number): void {
    const ev = this.events;
    const { activityIdOffset, relatedActivityIdOffset, labelList } = ev;
    const L = this.labelLists;
    for (let k = from, i = first; k < to; k++, i++) {
      const lid = labelListId[k];
      let list = -1,
        a = 0,
        r = 0;
      if (lid !== 0) {
        const row = this.labelListByIndex.get(lid);
        if (row === undefined) this.warn(NW_BAD_ROW, recordOffset[k], `label list ${lid} not defined since the last sequence point`);
        else {
          list = row;
          a = L.activityIdOffset[row];
          r = L.relatedActivityIdOffset[row];
        }
      }
      activityIdOffset[i] = a;
      relatedActivityIdOffset[i] = r;
      labelList[i] = list;
    }
  }

  /** Row k of a walk, whose lookups the walk left to the reader (NT_SLOW): an event, unless its metadata id is 0. */
  slowEvent(rows: NettraceRows, k: number, v6: boolean): void {
    // (every field read before anything may allocate in the core and so let go the rows' views)
    const at = rows.recordOffset[k];
    const id = rows.metadataId[k];
    if (id === 0) {
      this.warn(NW_METADATA_ID_ZERO, at, "event with metadata id 0 in an EventBlock skipped");
      return;
    }
    const ev = this.events;
    const i = ev.add();
    const i2 = 2 * i,
      k2 = 2 * k;
    const timestamp = halves(ev.timestamp),
      captureThreadId = halves(ev.captureThreadId),
      threadId = halves(ev.threadId);
    timestamp[i2] = rows.timestamp[k2];
    timestamp[i2 + 1] = rows.timestamp[k2 + 1];
    captureThreadId[i2] = rows.captureThread[k2];
    captureThreadId[i2 + 1] = rows.captureThread[k2 + 1];
    threadId[i2] = rows.thread[k2];
    threadId[i2 + 1] = rows.thread[k2 + 1];
    ev.metadataId[i] = id;
    ev.sequenceNumber[i] = rows.sequenceNumber[k];
    ev.processorNumber[i] = rows.processorNumber[k];
    ev.stackId[i] = rows.stackId[k];
    ev.payloadOffset[i] = rows.payloadOffset[k];
    ev.payloadLength[i] = rows.payloadSize[k];
    ev.labelListId[i] = rows.labelListId[k];
    ev.flags[i] = rows.flags[k];
    ev.blockOffset[i] = this.blockStart;
    if (v6) this.labelsOf(rows.labelListId, rows.recordOffset, k, k + 1, i);
    else {
      ev.activityIdOffset[i] = rows.activityIdOffset[k];
      ev.relatedActivityIdOffset[i] = rows.relatedActivityIdOffset[k];
      ev.labelList[i] = -1;
    }
    this.rowLookups(i, at);
  }

  /**
   * Event i's lookups, which the walk left to the reader (its metadata id, stack id, capture thread and
   * sequence number are in the columns): its metadata row, stack row and queue, its sequence number
   * checked; `at`: its record's offset, for the warnings.
   */
  rowLookups(i: number, at: number): void {
    let ev = this.events.refresh();
    const id = ev.metadataId[i];
    const sid = ev.stackId[i];
    const seq = ev.sequenceNumber[i];
    const ct = halves(ev.captureThreadId);
    const ctLo = ct[2 * i],
      ctHi = ct[2 * i + 1];
    const lk = this.lk.view();
    const md = id < METADATA_DIRECT ? lk.metadataRow[id] - 1 : (this.metadataById.get(id) ?? -1);
    if (md < 0) this.warn(NW_UNKNOWN_METADATA, at, `event references undefined metadata id ${id}`);
    ev.metadata[i] = md;
    let st = -1;
    if (sid !== 0) {
      if (sid < STACK_DIRECT) {
        if (lk.stackEpoch[sid] === lk.epoch) st = lk.stackRow[sid];
      } else st = this.stackById.get(sid) ?? -1;
      if (st < 0) this.warn(NW_UNKNOWN_STACK, at, `stack id ${sid} not defined since the last sequence point`);
    }
    ev.stack[i] = st;
    // the capture thread's queue (put in the walk's cache), then its sequence number
    const key = threadKey(ctLo, ctHi);
    const q = this.queueFor(key);
    if (ctHi === 0) {
      const h = queueSlot(ctLo),
        v = this.lk.view();
      v.cacheId[h] = ctLo;
      v.cacheQueue[h] = q;
    }
    // (queueFor may have allocated in the core)
    ev = this.events.refresh();
    ev.queue[i] = q;
    this.checkSequence(key, seq, at, false);
  }

  /** The queue number of a capture thread (threadKey / bigThreadKey), numbered in order of first sight. */
  queueFor(key: number | bigint): number {
    let q = this.queueOf.get(key);
    if (q === undefined) {
      q = this.queueOf.size;
      this.queueOf.set(key, q);
      this.lk.ensureQueues(q + 1);
      this.lk.setLastSequence(q, -1);
    }
    return q;
  }

  /** §14: count events lost between two sightings of a capture thread. */
  checkSequence(thread: number | bigint, seq: number, at: number, sequencePoint: boolean): void {
    const q = this.queueFor(thread);
    const last = this.lk.lastSequence(q);
    this.lk.setLastSequence(q, seq);
    if (last < 0 || (this.version < 6 && last === 0)) return;
    const gap = (seq - last - (sequencePoint ? 0 : 1)) | 0;
    if (gap > 0) this.eventsLost += gap;
    else if (gap < 0) this.warn(NW_SEQUENCE_BACKWARDS, at, `sequence number of capture thread ${thread} went from ${last} to ${seq}`);
  }

  /** stackById.set, the small ids in the lookups' stack table. */
  setStack(id: number, row: number, lk = this.lk.view(), epoch = lk.epoch): void {
    if (id >= STACK_DIRECT) {
      this.stackById.set(id, row);
      return;
    }
    lk.stackRow[id] = row;
    lk.stackEpoch[id] = epoch;
  }

  /** stackById.clear, the lookups' stack table's too (its next epoch). */
  clearStacks(): void {
    this.stackById.clear();
    const lk = this.lk.view();
    if (lk.epoch >= 0xffffffff) {
      lk.stackEpoch.fill(0);
      lk.labelEpoch.fill(0);
      lk.epoch = 1;
    } else lk.epoch = lk.epoch + 1;
  }

  /**
   * An estimate of the events the window will hold, `rows` of them in its bytes up to `at`: the rows
   * per byte so far over the bytes at hand, a little more.
   */
  expectedEvents(rows: number, at: number): number {
    const read = this.base + at - this.windowFrom;
    if (read <= 0) return 0;
    return (rows + (rows / read) * Math.min(this.expectBytes, Math.max(0, this.len - at))) * 1.0625 + 64;
  }

  lookupMetadata(id: number, at: number): number {
    const row = this.metadataById.get(id);
    if (row !== undefined) return row;
    this.warn(NW_UNKNOWN_METADATA, at, `event references undefined metadata id ${id}`);
    return -1;
  }

  // ---- metadata (§7) ----

  /** One V3–V5 metadata payload at [p, p+n); damage gives a warning, never aborts the block. */
  /**
   * A version 2 metadata record (EventPipeEventMetaDataHeader.ReadObsoleteEventMetaData): its id is the stream
   * offset of the record, then provider name, event id, version and the length of the rest, which when
   * not 0 repeats the event id and gives name, keywords, version and level (ReadMetadataCommon), then fields.
   */
  metadataRecordV2(record: number, p: number, n: number): void {
    const savePos = this.pos,
      saveEnd = this.end;
    this.pos = p;
    this.end = p + n;
    try {
      const id = this.base + record;
      const providerName = this.utf16z("provider name");
      let eventId = this.i32("event id") & 0xffff;
      let version = this.i32("version") & 0xff;
      const rest = this.i32("metadata length");
      let eventName = "",
        keywords = 0n,
        level = 0;
      if (rest > 0) {
        eventId = this.i32("event id") & 0xffff;
        eventName = this.utf16z("event name");
        keywords = BigInt.asUintN(64, this.i64("keywords"));
        version = this.i32("version") & 0xff;
        level = this.i32("level") & 0xff;
      }
      const md: NettraceMetadata = {
        metadataId: id,
        providerName,
        eventId,
        eventName,
        keywords,
        version,
        level,
        fields: [],
        fieldLayout: "v1",
        fieldsUnparsable: false,
        offset: this.base + p,
        length: n,
      };
      if (rest > 0 && this.pos < this.end) {
        const at = this.pos;
        try {
          md.fields = this.fieldList(1, 0);
        } catch (e) {
          if (!(e instanceof NettraceFormatError)) throw e;
          md.fieldsUnparsable = true;
          this.warn(NW_METADATA_FIELDS, at, `metadata ${id} (${providerName}/${eventId}): field list unparsable, kept without fields`);
        }
      }
      this.defineMetadata(md, p);
    } catch (e) {
      if (!(e instanceof NettraceFormatError)) throw e;
      this.warn(NW_BAD_METADATA, e.offset - this.base, `metadata record at ${this.base + record} unreadable: ${e.reason}`);
    } finally {
      this.pos = savePos;
      this.end = saveEnd;
    }
  }

  metadataRecord(p: number, n: number): void {
    const savePos = this.pos,
      saveEnd = this.end;
    this.pos = p;
    this.end = p + n;
    try {
      const id = this.i32("metadata id");
      const providerName = this.utf16z("provider name");
      const eventId = this.i32("event id") & 0xffff;
      const eventName = this.utf16z("event name");
      const keywords = BigInt.asUintN(64, this.i64("keywords"));
      const version = this.i32("version") & 0xff;
      const level = this.i32("level") & 0xff;
      const md: NettraceMetadata = {
        metadataId: id,
        providerName,
        eventId,
        eventName,
        keywords,
        version,
        level,
        fields: [],
        fieldLayout: "v1",
        fieldsUnparsable: false,
        offset: this.base + p,
        length: n,
      };
      let tagsReadable = true;
      if (this.pos < this.end) {
        const at = this.pos;
        try {
          md.fields = this.fieldList(1, 0);
        } catch (e) {
          if (!(e instanceof NettraceFormatError)) throw e;
          md.fields = [];
          md.fieldsUnparsable = true;
          tagsReadable = false;
          this.warn(NW_METADATA_FIELDS, at, `metadata ${id} (${providerName}/${eventId}): field list unparsable, kept without fields`);
        }
      }
      // V5 tags (§7.2).
      while (tagsReadable && this.pos < this.end) {
        const tagAt = this.pos;
        const tagLen = this.i32("metadata tag length");
        const kind = this.u8("metadata tag kind");
        if (tagLen < 0) this.fail(NE_TRUNCATED, tagAt, `metadata tag length ${tagLen}`);
        const tp = this.need(tagLen, "metadata tag");
        const tagEnd = tp + tagLen;
        this.sawV5Tags = true;
        if (kind === 1) {
          if (tagLen >= 1) md.opcode = this.bytes[tp];
        } else if (kind === 2) {
          const outer = this.end;
          this.pos = tp;
          this.end = tagEnd;
          try {
            md.fields = this.fieldList(2, 0);
            md.fieldLayout = "v2";
            md.fieldsUnparsable = false;
          } catch (e) {
            if (!(e instanceof NettraceFormatError)) throw e;
            md.fields = [];
            md.fieldLayout = "v2";
            md.fieldsUnparsable = true;
            this.warn(NW_METADATA_FIELDS, tp, `metadata ${id} (${providerName}/${eventId}): V2 field list unparsable, kept without fields`);
          }
          this.end = outer;
        }
        this.pos = tagEnd;
      }
      this.defineMetadata(md, p);
    } catch (e) {
      if (!(e instanceof NettraceFormatError)) throw e;
      this.warn(NW_BAD_METADATA, e.offset - this.base, `metadata record at ${this.base + p} unreadable: ${e.reason}`);
    } finally {
      this.pos = savePos;
      this.end = saveEnd;
    }
  }

  defineMetadata(md: NettraceMetadata, at: number): void {
    if (md.metadataId <= 0) {
      this.warn(NW_BAD_METADATA, at, `metadata id ${md.metadataId} is not positive; record skipped`);
      return;
    }
    if (this.metadataById.has(md.metadataId)) this.warn(NW_METADATA_REDEFINED, at, `metadata id ${md.metadataId} defined again; the new definition wins`);
    this.metadataById.set(md.metadataId, this.metadata.length);
    if (md.metadataId < METADATA_DIRECT) this.lk.view().metadataRow[md.metadataId] = this.metadata.length + 1;
    this.metadata.push(md);
  }

  /**
   * Field list. layout 1: V1 (i32 count; per field: type, UTF-16 name); 2: V5 V2Params (i32 count; per
   * field: i32 size incl. itself, UTF-16 name, type); 6: V6 (u16 count; per field: u16 size, UTF-8 name, type).
   */
  fieldList(layout: number, depth: number): NettraceField[] {
    if (depth > MAX_FIELD_DEPTH) this.fail(NE_TRUNCATED, this.pos, "field descriptions nested too deeply");
    const countAt = this.pos;
    const count = layout === 6 ? this.u16("field count") : this.i32("field count");
    if (count < 0 || count > 0x4000) this.fail(NE_TRUNCATED, countAt, `field count ${count}`);
    const fields: NettraceField[] = [];
    for (let f = 0; f < count; f++) {
      if (layout === 1) {
        const type = this.fieldType(layout, depth) as NettraceField;
        type.name = this.utf16z("field name");
        fields.push(type);
        continue;
      }
      const sizeAt = this.pos;
      const size = layout === 6 ? this.u16("field size") : this.i32("field size") - 4;
      if (size < 0) this.fail(NE_TRUNCATED, sizeAt, `field size ${size}`);
      const fp = this.need(size, "field description");
      const outer = this.end;
      this.pos = fp;
      this.end = fp + size;
      const name = layout === 6 ? this.utf8v("field name") : this.utf16z("field name");
      const type = this.fieldType(layout, depth) as NettraceField;
      type.name = name;
      fields.push(type);
      this.pos = fp + size; // rest of the description ignored
      this.end = outer;
    }
    return fields;
  }

  fieldType(layout: number, depth: number): NettraceType {
    if (depth > MAX_FIELD_DEPTH) this.fail(NE_TRUNCATED, this.pos, "field descriptions nested too deeply");
    const at = this.pos;
    const code = layout === 6 ? this.u8("type code") : this.i32("type code");
    const t: NettraceType = { typeCode: code };
    if (code === TC_OBJECT) {
      t.fields = this.fieldList(layout, depth + 1);
    } else if (code >= TC_BOOLEAN && code <= TC_STRING) {
      // primitive
    } else if (code === TC_ARRAY && layout !== 1) {
      t.elementType = this.fieldType(layout, depth + 1);
    } else if (layout === 6 && (code === TC_VARINT || code === TC_VARUINT || code === TC_UTF8_CODE_UNIT || code === TC_BOOLEAN8)) {
      // primitive
    } else if (layout === 6 && code === TC_FIXED_ARRAY) {
      t.elementType = this.fieldType(layout, depth + 1);
      t.elementCount = this.u16("fixed array length");
    } else if (layout === 6 && (code === TC_RELLOC || code === TC_DATALOC)) {
      t.elementType = this.fieldType(layout, depth + 1);
      if (!fixedSize(t.elementType)) this.fail(NE_TRUNCATED, at, `type ${code} needs a fixed-size element type`);
    } else {
      this.fail(NE_TRUNCATED, at, `type code ${code} not valid in this field layout`);
    }
    return t;
  }

  /** V6 metadata block (§7.3). */
  v6MetadataBlock(): void {
    const headerSize = this.u16("metadata block header size");
    this.need(headerSize, "metadata block header");
    while (this.pos < this.end) {
      const rowAt = this.pos;
      const size = this.u16("metadata row size");
      const p = this.need(size, "metadata row");
      const rowEnd = p + size;
      const outer = this.end;
      this.pos = p;
      this.end = rowEnd;
      try {
        const id = this.varU32("metadata id");
        const md: NettraceMetadata = {
          metadataId: id,
          providerName: this.utf8v("provider name"),
          eventId: this.varU32("event id") & 0xffff,
          eventName: this.utf8v("event name"),
          keywords: 0n,
          version: 0,
          level: 0,
          fields: [],
          fieldLayout: "v6",
          fieldsUnparsable: false,
          offset: this.base + p,
          length: size,
        };
        const fieldsAt = this.pos;
        try {
          md.fields = this.fieldList(6, 0);
        } catch (e) {
          if (!(e instanceof NettraceFormatError)) throw e;
          md.fieldsUnparsable = true;
          this.warn(NW_METADATA_FIELDS, fieldsAt, `metadata ${id}: V6 field list unparsable, kept without fields`);
        }
        if (!md.fieldsUnparsable) {
          const optSize = this.u16("optional metadata size");
          const op = this.need(optSize, "optional metadata");
          this.pos = op;
          this.end = op + optSize;
          while (this.pos < this.end) {
            const kindAt = this.pos;
            const kind = this.u8("optional metadata kind");
            if (kind === 1) md.opcode = this.u8("opcode");
            else if (kind === 3) md.keywords = this.u64("keywords");
            else if (kind === 4) md.messageTemplate = this.utf8v("message template");
            else if (kind === 5) md.description = this.utf8v("description");
            else if (kind === 6) (md.keyValues ??= []).push([this.utf8v("key"), this.utf8v("value")]);
            else if (kind === 7) {
              const g = this.need(16, "provider guid");
              md.providerGuid = this.bytes.slice(g, g + 16);
            } else if (kind === 8) md.level = this.u8("level");
            else if (kind === 9) md.version = this.u8("version");
            else this.fail(NE_TRUNCATED, kindAt, `unknown optional metadata kind ${kind}`);
          }
        }
        this.defineMetadata(md, rowAt);
      } catch (e) {
        if (!(e instanceof NettraceFormatError)) throw e;
        this.warn(NW_BAD_METADATA, e.offset - this.base, `V6 metadata row at ${this.base + rowAt} unreadable: ${e.reason}`);
      }
      this.pos = rowEnd;
      this.end = outer;
    }
  }

  // ---- stacks (§8) ----

  stackBlock(): void {
    const firstId = this.u32("stack block first id");
    const count = this.u32("stack block count");
    // (the lookups' views and epoch once a block: nothing below allocates in the core)
    const lk = this.lk.view();
    const epoch = lk.epoch;
    for (let i = 0; i < count; i++) {
      const at = this.pos;
      const size = this.i32("stack size");
      if (size < 0) this.fail(NE_TRUNCATED, at, `stack size ${size}`);
      const p = this.need(size, "stack");
      const ptr = this.header.pointerSize;
      const id = (firstId + i) >>> 0;
      this.setStack(id, this.stacks.add(id, p, size - (size % ptr)), lk, epoch);
    }
    if (this.pos < this.end) this.warn(NW_BLOCK_TRAILING, this.pos, `${this.end - this.pos} bytes after the last stack of the block`);
  }

  // ---- sequence points (§9) ----

  sequencePointBlock(): void {
    const at = this.blockStart;
    const v6 = this.version === 6;
    const timestamp = this.i64("sequence point timestamp");
    const flags = v6 ? this.u32("sequence point flags") : 0;
    const count = v6 ? this.u32("sequence point thread count") : this.i32("sequence point thread count");
    if (count < 0) this.fail(NE_TRUNCATED, this.pos - 4, `thread count ${count}`);
    const sp = this.sequencePoints.add(timestamp, flags, at);
    for (let i = 0; i < count; i++) {
      const tAt = this.pos;
      const id = v6 ? BigInt.asIntN(64, this.varU64("thread index")) : this.i64("capture thread id");
      const seq = v6 ? this.varU32("sequence number") : this.u32("sequence number");
      this.sequencePoints.addThread(sp, id, seq);
      this.checkSequence(bigThreadKey(id), seq, tAt, true);
    }
    if (this.pos < this.end) this.warn(NW_BLOCK_TRAILING, this.pos, `${this.end - this.pos} bytes after the sequence point's thread list`);
    this.clearStacks();
    this.labelListByIndex.clear();
    if (flags & 1) this.threadByIndex.clear();
    if (flags & 2) {
      this.metadataById.clear();
      this.lk.view().metadataRow.fill(0);
    }
  }

  // ---- V6 threads and label lists (§10) ----

  threadBlock(): void {
    while (this.pos < this.end) {
      const rowAt = this.pos;
      const size = this.u16("thread row size");
      const p = this.need(size, "thread row");
      const outer = this.end;
      this.pos = p;
      this.end = p + size;
      try {
        const th: NettraceThread = { index: BigInt.asIntN(64, this.varU64("thread index")), keyValues: [], offset: this.base + rowAt };
        while (this.pos < this.end) {
          const kindAt = this.pos;
          const kind = this.u8("thread item kind");
          if (kind === 1) th.name = this.utf8v("thread name");
          else if (kind === 2) th.osProcessId = this.varU64("OS process id");
          else if (kind === 3) th.osThreadId = this.varU64("OS thread id");
          else if (kind === 4) th.keyValues.push([this.utf8v("key"), this.utf8v("value")]);
          else this.fail(NE_TRUNCATED, kindAt, `unknown thread item kind ${kind}`);
        }
        if (this.threadByIndex.has(th.index)) this.warn(NW_DUPLICATE_THREAD, rowAt, `thread index ${th.index} defined twice`);
        this.threadByIndex.set(th.index, this.threads.length);
        this.threads.push(th);
      } catch (e) {
        if (!(e instanceof NettraceFormatError)) throw e;
        this.warn(NW_BAD_ROW, e.offset - this.base, `thread row at ${this.base + rowAt} unreadable: ${e.reason}`);
      }
      this.pos = p + size;
      this.end = outer;
    }
  }

  removeThreadBlock(): void {
    while (this.pos < this.end) {
      const at = this.pos;
      const index = BigInt.asIntN(64, this.varU64("thread index"));
      const seq = this.varU32("sequence number");
      this.removedThreads.push({ index, sequenceNumber: seq, offset: this.base + at });
      this.checkSequence(bigThreadKey(index), seq, at, true);
      this.lk.setLastSequence(this.queueFor(bigThreadKey(index)), -1);
    }
  }

  labelListBlock(): void {
    const first = this.u32("label list first index");
    const count = this.u32("label list count");
    if (first === 0) this.fail(NE_TRUNCATED, this.pos - 8, "label list first index 0");
    const L = this.labelLists;
    for (let k = 0; k < count; k++) {
      const start = this.pos;
      const i = L.add();
      L.index[i] = (first + k) >>> 0;
      L.offset[i] = start;
      L.present[i] = 0;
      L.activityIdOffset[i] = 0;
      L.relatedActivityIdOffset[i] = 0;
      L.traceIdOffset[i] = 0;
      L.spanId[i] = 0n;
      L.opcode[i] = 0;
      L.level[i] = 0;
      L.version[i] = 0;
      L.keywords[i] = 0n;
      try {
        for (;;) {
          const kindAt = this.pos;
          const raw = this.u8("label kind");
          switch (raw & 0x7f) {
            case 1:
              L.activityIdOffset[i] = this.need(16, "activity id");
              L.present[i] |= LABEL_ACTIVITY;
              break;
            case 2:
              L.relatedActivityIdOffset[i] = this.need(16, "related activity id");
              L.present[i] |= LABEL_RELATED_ACTIVITY;
              break;
            case 3:
              L.traceIdOffset[i] = this.need(16, "trace id");
              L.present[i] |= LABEL_TRACE_ID;
              break;
            case 4:
              L.spanId[i] = this.u64("span id");
              L.present[i] |= LABEL_SPAN_ID;
              break;
            case 5:
              this.utf8v("label key");
              this.utf8v("label value");
              L.present[i] |= LABEL_KEY_VALUE;
              break;
            case 6:
              this.utf8v("label key");
              this.varU64("label value");
              L.present[i] |= LABEL_KEY_VALUE;
              break;
            case 7:
              L.opcode[i] = this.u8("opcode");
              L.present[i] |= LABEL_OPCODE;
              break;
            case 8:
              L.keywords[i] = this.u64("keywords");
              L.present[i] |= LABEL_KEYWORDS;
              break;
            case 9:
              L.level[i] = this.u8("level");
              L.present[i] |= LABEL_LEVEL;
              break;
            case 10:
              L.version[i] = this.u8("version");
              L.present[i] |= LABEL_VERSION;
              break;
            default:
              this.fail(NE_TRUNCATED, kindAt, `unknown label kind ${raw & 0x7f}`);
          }
          if (raw & 0x80) break;
        }
      } catch (e) {
        L.length = i; // drop the partial list
        throw e;
      }
      L.byteLength[i] = this.pos - start;
      this.labelListByIndex.set(L.index[i], i);
      if (L.index[i] < LABEL_DIRECT) {
        // (and where the walk looks it up: cleared with the stacks at the next sequence point, their epoch)
        const lk = this.lk.view();
        const id = L.index[i];
        lk.labelRow[id] = i;
        lk.labelEpoch[id] = lk.epoch;
        lk.labelActivity[id] = L.activityIdOffset[i];
        lk.labelRelated[id] = L.relatedActivityIdOffset[i];
      }
    }
    if (this.pos < this.end) this.warn(NW_BLOCK_TRAILING, this.pos, `${this.end - this.pos} bytes after the last label list of the block`);
  }

  /**
   * What has been read since the last window (events, stacks, blocks, sequence points, label lists,
   * warnings), its offsets into `bytes`; the next window starts empty. Metadata and threads stay.
   */
  takeWindow(error: NettraceFormatError | null): NettraceFile {
    const f = this.result(error);
    this.windowFrom = this.base + this.pos;
    // (stack and label-list rows are a window's: ids left from a sequence point whose block was damaged
    // before it cleared them would name rows of the window before; no lookups yet, nothing to clear there)
    if (this.tables) this.clearStacks();
    else this.stackById.clear();
    this.labelListByIndex.clear();
    if (this.reuseColumns) {
      this.events.clear();
      this.stacks.clear();
      this.blocks.clear();
      this.sequencePoints.clear();
      this.labelLists.clear();
    } else {
      this.events = new EventColumns();
      this.stacks = new StackColumns();
      this.blocks = new BlockColumns();
      this.sequencePoints = new SequencePointColumns();
      this.labelLists = new LabelListColumns();
    }
    this.warnings = [];
    this.eventsLost = 0;
    return f;
  }

  result(error: NettraceFormatError | null): NettraceFile {
    const h = this.header;
    if (h.formatVersion === 4 && this.sawV5Tags) h.formatVersion = 5;
    const b = this.blocks;
    const counts = { trace: 0, event: 0, metadata: 0, stack: 0, sequencePoint: 0, thread: 0, removeThread: 0, labelList: 0, unknown: 0 };
    for (let i = 0; i < b.length; i++) {
      switch (b.kind[i]) {
        case BLOCK_TRACE:
          counts.trace++;
          break;
        case BLOCK_EVENT:
          counts.event++;
          break;
        case BLOCK_METADATA:
          counts.metadata++;
          break;
        case BLOCK_STACK:
          counts.stack++;
          break;
        case BLOCK_SEQUENCE_POINT:
          counts.sequencePoint++;
          break;
        case BLOCK_THREAD:
          counts.thread++;
          break;
        case BLOCK_REMOVE_THREAD:
          counts.removeThread++;
          break;
        case BLOCK_LABEL_LIST:
          counts.labelList++;
          break;
        default:
          counts.unknown++;
      }
    }
    return {
      bytes: this.bytes,
      header: h,
      events: this.events.done(),
      metadata: this.metadata,
      stacks: this.stacks.done(),
      blocks: b.done(),
      blockCounts: counts,
      sequencePoints: this.sequencePoints.done(),
      threads: this.threads,
      removedThreads: this.removedThreads,
      labelLists: this.labelLists.done(),
      queueCount: this.queueOf.size,
      eventsLost: this.eventsLost,
      complete: this.complete,
      warnings: this.warnings,
      warningCount: this.warningCount,
      error,
    };
  }
}

/** The BLOCK_* kind of a FastSerialization block object of type `name` (a .netperf has event blocks only). */
export function blockKindNamed(name: string, nettrace: boolean): number {
  if (name === "EventBlock") return BLOCK_EVENT;
  if (!nettrace) return BLOCK_UNKNOWN;
  return name === "MetadataBlock" ? BLOCK_METADATA : name === "StackBlock" ? BLOCK_STACK : name === "SPBlock" ? BLOCK_SEQUENCE_POINT : BLOCK_UNKNOWN;
}

/** True when a value of this type always takes the same number of bytes (RelLoc/DataLoc elements). */
function fixedSize(t: NettraceType): boolean {
  const c = t.typeCode;
  if (c === TC_OBJECT) return (t.fields ?? []).every(fixedSize);
  if (c === TC_FIXED_ARRAY) return t.elementType !== undefined && fixedSize(t.elementType);
  return c !== TC_STRING && c !== TC_ARRAY && c !== TC_VARINT && c !== TC_VARUINT && c !== TC_RELLOC && c !== TC_DATALOC;
}

// ---------------------------------------------------------------------------------------------
// Entry points

export interface ReadNettraceOptions {
  /**
   * Frames the records of the V4+ Event and Metadata blocks: the TypeScript core's walker when not
   * given; bindings/decode/eventpipe/engine.ts nettraceWalker("wasm") gives the WebAssembly core's.
   */
  walker?: NettraceWalker;
}

/** What the reader threw, as the error a file stops with: its own, or an internal error at `at`. */
export function formatErrorOf(e: unknown, at: number): NettraceFormatError {
  if (e instanceof NettraceFormatError) return e;
  return new NettraceFormatError(NE_INTERNAL, at, `internal error: ${e instanceof Error ? e.message : String(e)}`);
}

/**
 * Reads a whole .nettrace / .netperf file. Never throws for bad input: `error` holds the fatal
 * NettraceFormatError (with everything decoded before it kept), `warnings` the skipped damage.
 */
export function readNettrace(bytes: Uint8Array, options: ReadNettraceOptions = {}): NettraceFile {
  const r = new Reader(bytes, options.walker);
  let error: NettraceFormatError | null = null;
  try {
    r.run();
  } catch (e) {
    error = formatErrorOf(e, r.pos);
  }
  return r.result(error);
}

/**
 * A file held whole, read a window at a time: the events between two sequence points (a .netperf, and
 * a file without sequence points, is one window). Offsets are file offsets, `base` 0. A window's
 * columns are the next window's, views of the walker's core memory: use each window before asking for
 * the next. Bad input ends the
 * windows with the one that holds the error (and what came before it in that window).
 */
export function* nettraceWindowsOf(bytes: Uint8Array, walker?: NettraceWalker): Generator<NettraceWindow> {
  const r = new Reader(bytes, walker);
  r.readInPlace();
  r.expectBytes = 32 << 20;
  r.expectTimes = 4;
  let error: NettraceFormatError | null = null;
  try {
    r.start();
    for (let kind = r.next(); kind !== NEXT_END; kind = r.next()) {
      if (kind === BLOCK_SEQUENCE_POINT) yield Object.assign(r.takeWindow(null), { base: 0, last: false });
    }
  } catch (e) {
    error = formatErrorOf(e, r.pos);
  }
  yield Object.assign(r.takeWindow(error), { base: 0, last: true });
}

/** Frame addresses of stack row `row` (leaf first), zero-extended to 64 bits. */
export function stackFrames(file: NettraceFile, row: number): BigUint64Array {
  const ptr = file.header.pointerSize;
  const off = file.stacks.offset[row],
    len = file.stacks.byteLength[row];
  const n = ptr > 0 ? Math.floor(len / ptr) : 0;
  const out = new BigUint64Array(n);
  const dv = new DataView(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength);
  for (let i = 0; i < n; i++) out[i] = ptr === 8 ? dv.getBigUint64(off + 8 * i, true) : BigInt(dv.getUint32(off + 4 * i, true));
  return out;
}

/** The metadata an event refers to, or undefined. */
export function eventMetadata(file: NettraceFile, event: number): NettraceMetadata | undefined {
  const row = file.events.metadata[event];
  return row >= 0 ? file.metadata[row] : undefined;
}
