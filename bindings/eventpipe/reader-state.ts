// The EventPipe reader's state: the input and the read position, checked reads (every read stays
// inside the structure being read, or throws NettraceFormatError with the file offset), what has
// been read so far (the columns, metadata, threads, warnings), and the caches the records' lookups
// use (metadata and stack ids, label lists, capture threads' queues and sequence numbers). The
// modules beside it read one kind of structure each into this state: framing.ts (the container, and
// which module reads a block), events.ts, metadata.ts, stacks.ts and v6-tables.ts; reader.ts puts
// them together.

import { jsNettraceWalker, LK_METADATA_DIRECT, LK_STACK_DIRECT, LK_LABEL_DIRECT, type NettraceLookups, type NettraceWalker } from "./walk.js";
import {
  NE_TRUNCATED,
  NW_SEQUENCE_BACKWARDS,
  MAX_NETTRACE_WARNINGS,
  NettraceFormatError,
  type NettraceWarning,
  type NettraceHeader,
  type NettraceMetadata,
  type NettraceThread,
  type NettraceRemovedThread,
} from "./format.js";
import { BlockColumns, CoreEventColumns, EventColumns, LabelListColumns, SequencePointColumns, StackColumns } from "./columns.js";

const utf16 = new TextDecoder("utf-16le");
const utf8 = new TextDecoder("utf-8");

const TWO_32 = 4294967296;
/** Ids below these are looked up in the lookups' tables (in the walk), the rest in Maps. */
export const METADATA_DIRECT = LK_METADATA_DIRECT;
export const STACK_DIRECT = LK_STACK_DIRECT;
export const LABEL_DIRECT = LK_LABEL_DIRECT;

/**
 * A capture thread's key in queueOf: the signed 64-bit value as a number where a
 * double holds it exactly (every real id), else as a bigint. threadKey and bigThreadKey agree.
 */
export function threadKey(lo: number, hi: number): number | bigint {
  if (hi < 0x200000) return hi * TWO_32 + lo;
  if (hi >= 0xffe00000) return (hi - TWO_32) * TWO_32 + lo;
  return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo));
}

export function bigThreadKey(id: bigint): number | bigint {
  return id >= -0x20000000000000n && id < 0x20000000000000n ? Number(id) : id;
}

/** A Uint32Array over a 64-bit column's bytes: row i is words 2i (low) and 2i+1 (high). */
export function halves(a: BigInt64Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
}

export class ReaderState {
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
  protected tables: NettraceLookups | null = null;
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
    /** Frames the records of V4+ event and metadata blocks (the TypeScript core's when not given). */
    public walker?: NettraceWalker,
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

  /** The stream's prelude has been read: `pos` is at the first object or block. */
  started = false;
  /** FastSerialization: the container's begin tag (0 for V6). */
  beginTag = 0;

  /** Position `p` moved up to a 4-byte file offset (blocks are aligned in the file, not in a window). */
  aligned4(p: number): number {
    return p + ((4 - ((this.base + p) % 4)) % 4);
  }

  // ---- the lookups' caches (§8–§10, §14) ----

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
}
