// An EventPipe file's (or window's) events as event table columns, by a core: the reader's columns are
// in the core's memory (where a reader that reads in place wrote them, or laid out there), the core puts
// them in TraceEvent's dispatch order and writes the rows (assembly/nettrace-rows.ts, one source for
// both engines) reading them in place, and the rows come back out a chunk of CHUNK_ROWS at a time.

import * as C from "../../../assembly/codes.js";
import * as R from "../../core/generated/nettrace-rows.js";
import { EVENT_SORTED, type NettraceEvents, type NettraceFile, type NettraceMetadata } from "../../eventpipe/format.js";
import { coreColumnsOf, type CoreColumns } from "../../eventpipe/columns.js";
import { madeWithin } from "../result/reuse.js";
import {
  NT_TIMESTAMP,
  NT_CAPTURE,
  NT_THREAD,
  NT_FLAGS,
  NT_PROCESSOR,
  NT_PAYLOAD_OFFSET,
  NT_PAYLOAD_SIZE,
  NT_ACTIVITY,
  NT_RELATED,
  NT_METADATA,
  NT_STACK,
  NT_QUEUE,
  NT_BLOCK,
  NT_READER_COLUMNS,
  NT_PAD,
} from "../../core/generated/nettrace-events.js";

/** What a core gives the rows: the WebAssembly core's exports (assembly/index.ts) or the TypeScript core's equivalents. */
export interface NettraceRowsCore {
  memory: { readonly buffer: ArrayBuffer };
  /** A block of `size` bytes, or 0 when memory is exhausted. */
  alloc(size: number): number;
  free(ptr: number): void;
  nettraceOrder(p: number): number;
  nettraceRows(p: number): void;
  nettraceTypes(p: number): void;
}

/** Rows written per call of the core. */
const CHUNK_ROWS = 1 << 20;

/** V6 thread indices below this are looked up by index in the core (8 bytes each), the others searched. */
const THREAD_DIRECT = 1 << 16;

/** Rundown and method-bookkeeping events carry stacks TraceEvent drops (EventPipeMetadata.GetEventRecordForEventData). */
function dropsStack(m: NettraceMetadata | undefined): boolean {
  if (!m) return false;
  if (m.providerName === "Microsoft-Windows-DotNETRuntimeRundown") return true;
  return m.providerName === "Microsoft-Windows-DotNETRuntime" && ((m.eventId >= 140 && m.eventId <= 144) || m.eventId === 190);
}

export interface EventTableOf {
  n: number;
  cut: number;
  typeRows: Uint32Array;
  metadataOfRow: Int32Array;
  /** The rows with an activity id, in row order, and where each id is (store offsets): most rows have none. */
  activities: { row: Uint32Array; offset: Uint32Array };
  maxHi: number;
  maxLo: number;
  /**
   * The stored columns. The others are made when first read: the type fields (provider, event id,
   * version, opcode) from each row's event type (withDecidedFields), keywords and level from its metadata
   * row, the flags from the extended items (headerFlagsOf, and EXTENDED_INFO on rows with an item), the
   * process id from `pid` or the file's, and the columns an EventPipe file has one value of (header
   * length, task, channel, header type).
   */
  events: {
    timestamp: BigInt64Array;
    tid: Uint32Array;
    payloadOffset: Uint32Array;
    payloadLength: Uint16Array;
    processor: Uint16Array;
    eventType: Uint16Array;
  };
  /** The process id of each row, kept only when a row's is not the file's (a V6 thread of another process); absent when every row's is. */
  pid?: Uint32Array;
  /** The type fields of rows without an event type (EVENT_TYPE_NONE: past the type table's limit); absent when none lacks one. */
  untyped?: TypeFieldColumns;
  ext: { row: Uint32Array; type: Uint16Array; size: Uint16Array; offset: Uint32Array };
}

/** The type fields' columns, of rows without an event type. */
export interface TypeFieldColumns {
  provider: Uint16Array;
  eventId: Uint16Array;
  version: Uint16Array;
  opcode: Uint8Array;
}

/**
 * Where a chunk's rows are in the core's memory as the rows wrote them (addresses), for a fill of their
 * typed .NET tables there (EventTableContext.fillChunk): the type fields, the payload's store offset
 * (which the fill may overwrite: the rows are copied out already) and length; and the store offsets
 * the payloads span, [payloadFrom, payloadTo).
 */
export interface ChunkColumns {
  provider: number;
  eventId: number;
  version: number;
  payloadOffset: number;
  payloadLength: number;
  payloadFrom: number;
  payloadTo: number;
}

type Columns = EventTableOf["events"];
type Ext = EventTableOf["ext"];

type ColumnType<T> = { new (buffer: ArrayBuffer, byteOffset: number, length: number): T; readonly BYTES_PER_ELEMENT: number };

/** Where a table's memory comes from: fresh, or the pool of disposed traces (decode/result/reuse.ts takeBuffer, not zeroed). */
export type TakeBuffer = (bytes: number) => ArrayBuffer;

/** A column of `n` elements in memory from `take` (not zeroed: every row is written before it is read). */
function column<T>(take: TakeBuffer, type: ColumnType<T>, n: number): T {
  return new type(take(Math.max(8, n * type.BYTES_PER_ELEMENT)), 0, n);
}

/** A column of `n` elements like `like`, holding its first `keep`. */
function resized<T extends ArrayBufferView & { length: number }>(take: TakeBuffer, like: T, n: number, keep: number): T {
  const next = column(take, like.constructor as unknown as ColumnType<T>, n);
  (next as unknown as { set(a: ArrayLike<number | bigint>): void }).set(
    (like as unknown as { subarray(a: number, b: number): ArrayLike<number | bigint> }).subarray(0, keep),
  );
  return next;
}

/** Type-field columns like `like`, of `n` rows, holding its first `keep`. */
function resizedTypeFields(take: TakeBuffer, like: TypeFieldColumns, n: number, keep: number): TypeFieldColumns {
  return {
    provider: resized(take, like.provider, n, keep),
    eventId: resized(take, like.eventId, n, keep),
    version: resized(take, like.version, n, keep),
    opcode: resized(take, like.opcode, n, keep),
  };
}

/**
 * The event table the windows of a file are appended to: columns with room ahead (pages never written
 * are never resident, so room counted on costs address space only), grown by half when they fill. Their
 * memory comes from `take`: for a whole file's table, the pool of disposed traces (decode/result/reuse.ts),
 * to which `buffers()` go back when the trace is disposed (memory written before costs no page faults,
 * which on a fresh buffer cost more than writing the rows); for a stream's window, fresh memory.
 */
export class EventTable {
  n = 0;
  items = 0;
  cut = 0;
  maxHi = -0x80000000;
  maxLo = 0;
  /** Rows of each event type, as long as the types counted (grown by addRows: a window has few of the 65,535 a table may). */
  typeRows = new Uint32Array(0);
  events: Columns;
  metadataOfRow = new Int32Array(0);
  /** Rows with an activity id and its offset, `activityCount` of them. */
  activityRow = new Uint32Array(0);
  activityOffset = new Uint32Array(0);
  activityCount = 0;
  untyped?: TypeFieldColumns;
  pid?: Uint32Array;
  ext: Ext = { row: new Uint32Array(0), type: new Uint16Array(0), size: new Uint16Array(0), offset: new Uint32Array(0) };

  /**
   * `give`: where outgrown columns go (the pool `take` takes from: the next decode's columns are written
   * into them). `mostTimes`: the columns grow to the rows expected in all, at most this many times the
   * rows needed (a stream's window guesses the rest of the file from its first blocks; a file held whole
   * knows its size, and each growth is a copy into fresh memory).
   */
  constructor(
    private readonly take: TakeBuffer = (bytes) => new ArrayBuffer(bytes),
    private readonly give: (buffers: ArrayBufferLike[]) => void = () => {},
    private readonly mostTimes = 16,
  ) {
    this.events = this.columns(0);
  }

  private columns(n: number): Columns {
    const t = this.take;
    return {
      timestamp: column(t, BigInt64Array, n),
      tid: column(t, Uint32Array, n),
      payloadOffset: column(t, Uint32Array, n),
      payloadLength: column(t, Uint16Array, n),
      processor: column(t, Uint16Array, n),
      eventType: column(t, Uint16Array, n),
    };
  }

  /**
   * The process id column, made when the first row whose process is not the file's (`filePid`) comes
   * (row `row`): the rows before it get the file's.
   */
  pidColumn(filePid: number, row: number): Uint32Array {
    if (!this.pid) {
      this.pid = column(this.take, Uint32Array, this.metadataOfRow.length);
      this.pid.fill(filePid, 0, row);
    }
    return this.pid;
  }

  /** The type-field columns for rows without a type, made when the first such row comes (only those rows are written). */
  untypedColumns(): TypeFieldColumns {
    const none = { provider: new Uint16Array(0), eventId: new Uint16Array(0), version: new Uint16Array(0), opcode: new Uint8Array(0) };
    return (this.untyped ??= resizedTypeFields(this.take, none, this.metadataOfRow.length, 0));
  }

  /**
   * Room for `rows` more rows and `items` more extended items; `expect`: the rows the whole table will
   * likely have; `likelyItems`: the items the rows at hand will likely have (items grow to it at least).
   */
  reserve(rows: number, items: number, expect = 0, likelyItems = 0): void {
    const need = this.n + rows;
    if (need > this.metadataOfRow.length) {
      const grown = this.n ? Math.floor(this.n * 1.5) : 0;
      const old = this.events;
      const outgrown = [...Object.values(old), this.metadataOfRow, ...Object.values(this.untyped ?? {}), ...(this.pid ? [this.pid] : [])].map((c) => c.buffer);
      const [next] = madeWithin(
        Math.max(need, Math.min(Math.ceil(expect), this.mostTimes * need), grown),
        Math.max(need, Math.min(Math.ceil(expect), 16 * need), grown),
        (cap) => ({
          events: this.columns(cap),
          metadataOfRow: resized(this.take, this.metadataOfRow, cap, this.n),
          untyped: this.untyped && resizedTypeFields(this.take, this.untyped, cap, this.n),
          pid: this.pid && resized(this.take, this.pid, cap, this.n),
        }),
      );
      for (const k of Object.keys(next.events) as (keyof Columns)[]) {
        (next.events[k] as unknown as { set(a: ArrayLike<number | bigint>): void }).set(old[k].subarray(0, this.n) as ArrayLike<number | bigint>);
      }
      this.events = next.events;
      this.metadataOfRow = next.metadataOfRow;
      this.untyped = next.untyped;
      this.pid = next.pid;
      this.give(outgrown);
    }
    const needItems = this.items + items;
    const likely = Math.max(needItems, this.items + likelyItems);
    if (likely > this.ext.row.length) {
      // (the items of the rows expected, at the rate of the rows so far and at hand: each growth is a copy into fresh memory)
      const expected = expect && need ? Math.min(Math.ceil((expect * likely) / need), this.mostTimes * likely) : 0;
      const cap = Math.max(likely, this.items ? Math.floor(this.items * 1.5) : 0, expected);
      const x = this.ext;
      const t = this.take;
      this.ext = {
        row: resized(t, x.row, cap, this.items),
        type: resized(t, x.type, cap, this.items),
        size: resized(t, x.size, cap, this.items),
        offset: resized(t, x.offset, cap, this.items),
      };
      this.give(Object.values(x).map((c) => c.buffer));
    }
  }

  /** Notes rows with an activity id: `rows[k]` has the one at store offset `offsets[k]`. */
  addActivities(rows: Uint32Array, offsets: Uint32Array): void {
    const count = this.activityCount + rows.length;
    if (count > this.activityRow.length) {
      const cap = Math.max(1024, count, 2 * this.activityCount);
      this.activityRow = resized(this.take, this.activityRow, cap, this.activityCount);
      this.activityOffset = resized(this.take, this.activityOffset, cap, this.activityCount);
    }
    this.activityRow.set(rows, this.activityCount);
    this.activityOffset.set(offsets, this.activityCount);
    this.activityCount = count;
  }

  /** The memory of the columns, for the pool once the table is let go. */
  buffers(): ArrayBufferLike[] {
    const x = this.ext;
    return [
      ...Object.values(this.events),
      ...Object.values(this.untyped ?? {}),
      ...(this.pid ? [this.pid] : []),
      this.metadataOfRow,
      this.activityRow,
      this.activityOffset,
      x.row,
      x.type,
      x.size,
      x.offset,
    ].map((c) => (c as ArrayBufferView).buffer);
  }

  /** The rows so far. */
  result(): EventTableOf {
    const n = this.n,
      e = this.items;
    const events = Object.fromEntries(Object.entries(this.events).map(([k, v]) => [k, (v as unknown as Uint8Array).subarray(0, n)])) as unknown as Columns;
    const u = this.untyped;
    const untyped = u && {
      provider: u.provider.subarray(0, n),
      eventId: u.eventId.subarray(0, n),
      version: u.version.subarray(0, n),
      opcode: u.opcode.subarray(0, n),
    };
    return {
      n,
      cut: this.cut,
      typeRows: this.typeRows,
      maxHi: this.maxHi,
      maxLo: this.maxLo,
      events,
      untyped,
      pid: this.pid?.subarray(0, n),
      metadataOfRow: this.metadataOfRow.subarray(0, n),
      activities: { row: this.activityRow.subarray(0, this.activityCount), offset: this.activityOffset.subarray(0, this.activityCount) },
      ext: { row: this.ext.row.subarray(0, e), type: this.ext.type.subarray(0, e), size: this.ext.size.subarray(0, e), offset: this.ext.offset.subarray(0, e) },
    };
  }
}

/** Bytes an EventPipe event table holds a row: its stored columns and the metadata row (activity ids: only rows that have one). */
export function nettraceRowBytes(): number {
  const t = new EventTable();
  return (
    Object.values(t.events).reduce((n, c) => n + (c as ArrayBufferView & { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT, 0) +
    t.metadataOfRow.BYTES_PER_ELEMENT
  );
}

/** The EVENT_HEADER flags of every EventPipe row of a file of pointer size `ptr` (4 or 8), EXTENDED_INFO aside. */
export function headerFlagsOf(ptr: number): number {
  return ptr === 4 ? 0x20 : 0x40;
}

/** Where the table of a file's events takes its providers, types and stack items from. */
export interface EventTableContext {
  /** Pointer size of the file's records (4 or 8). */
  ptr: number;
  /** Where the file's byte 0 is in the trace's bytes (8 by default: offset 0 stays "none"). */
  base?: number;
  /** Provider index of each metadata row. */
  providerOf: Int32Array;
  /** Provider of events whose metadata is undefined (-1: none yet, then 0). */
  unknownProvider: number;
  /** The event type of (provider, id, version, opcode), added when new. */
  typeOf(provider: number, id: number, version: number, opcode: number, level: number, kwLo: number, kwHi: number): number;
  /** Rows a call of the core writes (CHUNK_ROWS; tests make it small). */
  chunkRows?: number;
  /** The event types there are (typeOf gives no higher index): the rows of each are counted up to it. */
  typeCount?(): number;
  /**
   * Fills the typed .NET tables of each chunk's rows in the core, where the rows wrote them (`rows`
   * rows, the first of them the table's row `firstRow`), once they are copied out.
   */
  fillChunk?(at: ChunkColumns, rows: number, firstRow: number): void;
  /**
   * Takes the typed .NET tables the rows were filled into as the reader placed them (PlacedFiller),
   * their row indices the order's from `rowBase`; `reorder`: the dispatch order (in the core) and the
   * events' columns, where the order is not the file's. True when taken: fillChunk is then not called.
   */
  takePlaced?(rowBase: number, reorder?: { order: number; cols: { ptr: number; stride: number } }): boolean;
}

/** Blocks taken from a core, given back by `release`. */
class Blocks {
  private readonly taken: number[] = [];
  constructor(
    private readonly core: NettraceRowsCore,
    private readonly what: string,
  ) {}
  take(bytes: number): number {
    const at = this.core.alloc(Math.max(8, bytes));
    if (at === 0) throw new RangeError(`etw-wasm: out of memory ${this.what} (a block of ${bytes} bytes)`);
    this.taken.push(at);
    return at;
  }
  give(at: number): void {
    const k = this.taken.indexOf(at);
    if (k >= 0) this.taken.splice(k, 1);
    this.core.free(at);
  }
  release(): void {
    for (const at of this.taken) this.core.free(at);
    this.taken.length = 0;
  }
}

/** A column's bytes into the core at `at` (from its element `from`, `count` elements). */
function put(core: NettraceRowsCore, at: number, column: ArrayBufferView & { BYTES_PER_ELEMENT: number }, from: number, count: number): void {
  const size = column.BYTES_PER_ELEMENT;
  new Uint8Array(core.memory.buffer, at, count * size).set(new Uint8Array(column.buffer, column.byteOffset + from * size, count * size));
}

/** `count` elements from the core at `at` into `column` at element `to`. */
function take(core: NettraceRowsCore, at: number, column: ArrayBufferView & { BYTES_PER_ELEMENT: number }, to: number, count: number): void {
  const size = column.BYTES_PER_ELEMENT;
  new Uint8Array(column.buffer, column.byteOffset + to * size, count * size).set(new Uint8Array(core.memory.buffer, at, count * size));
}

/**
 * The columns of a file's events in the core (assembly/nettrace-events.ts NT_*): where a reader that
 * reads in place wrote them (its walker's core), else laid out there from the file's columns.
 */
function columnsIn(core: NettraceRowsCore, blocks: Blocks, ev: NettraceEvents): CoreColumns {
  const there = coreColumnsOf(ev);
  if (there && (there.core as object) === core) return there;
  const n = ev.length;
  const stride = (Math.max(1, n) + NT_PAD) * 4;
  const ptr = blocks.take(NT_READER_COLUMNS * stride);
  const columns: [number, ArrayBufferView & { BYTES_PER_ELEMENT: number }][] = [
    [NT_TIMESTAMP, ev.timestamp],
    [NT_CAPTURE, ev.captureThreadId],
    [NT_THREAD, ev.threadId],
    [NT_FLAGS, ev.flags],
    [NT_PROCESSOR, ev.processorNumber],
    [NT_PAYLOAD_OFFSET, ev.payloadOffset],
    [NT_PAYLOAD_SIZE, ev.payloadLength],
    [NT_ACTIVITY, ev.activityIdOffset],
    [NT_RELATED, ev.relatedActivityIdOffset],
    [NT_METADATA, ev.metadata],
    [NT_STACK, ev.stack],
    [NT_QUEUE, ev.queue],
    [NT_BLOCK, ev.blockOffset],
  ];
  for (const [k, column] of columns) put(core, ptr + k * stride, column, 0, n);
  return { core: core as unknown as CoreColumns["core"], ptr, stride };
}

/**
 * The event table of a file's (or window's) events in TraceEvent's dispatch order, with what each row
 * adds beside it (metadata row, activity id, stack and related-activity items), the rows of each type
 * and the latest timestamp: appended to `table` (`expect`: the rows it will likely have in all). The
 * order and the rows read the events' columns where they are in the core (columnsIn).
 */
export function eventTableOf(core: NettraceRowsCore, file: NettraceFile, cx: EventTableContext, table = new EventTable(), expect = 0): EventTableOf {
  const { header, events: ev } = file;
  const n = ev.length;
  const blocks = new Blocks(core, `ordering ${n} EventPipe events`);
  try {
    const cols = columnsIn(core, blocks, ev);
    const at = (k: number) => cols.ptr + k * cols.stride;
    // ---- the dispatch order, whole (0: the file's, most windows', not written out) ----
    let order = 0;
    // (V2 and V3 files are in time order as written)
    if (header.formatVersion > 3 && n > 0) {
      order = blocks.take(4 * n);
      const queues = Math.max(1, file.queueCount);
      const p = blocks.take(R.NO_WORDS * 4);
      const sp = blocks.take(4 * file.sequencePoints.length),
        work = blocks.take(R.orderWorkBytes(n, queues));
      put(core, sp, file.sequencePoints.offset, 0, file.sequencePoints.length);
      const w = new Uint32Array(core.memory.buffer, p, R.NO_WORDS);
      w[R.NO_COUNT] = n;
      w[R.NO_TIMESTAMP] = at(NT_TIMESTAMP);
      w[R.NO_QUEUE] = at(NT_QUEUE);
      w[R.NO_BLOCK] = at(NT_BLOCK);
      w[R.NO_FLAGS] = at(NT_FLAGS);
      w[R.NO_SEQUENCE_POINTS] = sp;
      w[R.NO_SEQUENCE_POINT_COUNT] = file.sequencePoints.length;
      w[R.NO_QUEUES] = queues;
      w[R.NO_WORK] = work;
      w[R.NO_ORDER] = order;
      const written = core.nettraceOrder(p);
      if (written !== n) throw new Error(`etw-wasm: the dispatch order has ${written} of ${n} events`);
      if (new Uint32Array(core.memory.buffer, p, R.NO_WORDS)[R.NO_IN_FILE_ORDER] === 1) {
        blocks.give(order);
        order = 0;
      }
      for (const x of [p, sp, work]) blocks.give(x);
    }
    if (EVENT_SORTED !== 1) throw new Error("etw-wasm: EVENT_SORTED is not the bit the core's order reads");
    const placed = cx.takePlaced?.(table.n, order === 0 ? undefined : { order, cols }) ?? false;
    rowsInOrder(core, blocks, order, file, placed ? { ...cx, fillChunk: undefined } : cx, table, expect, at);
    return table.result();
  } finally {
    blocks.release();
  }
}

// (hot loops in small functions of their own: optimized after a few calls, where a loop in a long
// function that runs once a window waits for on-stack replacement)

/**
 * The type fields of rows without a type (past the type table's limit), from their metadata entries
 * (`u32`: the core's memory, the entries at byte `metaAt`; `metadataOfRow`: the rows' metadata rows),
 * into `u` from row `at`.
 */
function untypedFields(u32: Uint32Array, metaAt: number, metadataOfRow: Int32Array, u: TypeFieldColumns, at: number): void {
  for (let r = 0; r < metadataOfRow.length; r++) {
    const x = (metaAt >>> 2) + (metadataOfRow[r] + 1) * R.NM_WORDS;
    u.provider[at + r] = u32[x + R.NM_PROVIDER];
    u.eventId[at + r] = u32[x + R.NM_EVENT_ID];
    u.version[at + r] = u32[x + R.NM_VERSION];
    u.opcode[at + r] = u32[x + R.NM_OPCODE];
  }
}

/** dst[t] += src[t] for the first `n` types. */
/** Adds the first `n` counts of `src` to the table's rows per type. */
function addRows(table: EventTable, src: Uint32Array, n: number): void {
  if (table.typeRows.length < n) {
    const grown = new Uint32Array(Math.min(C.MAX_EVENT_TYPES, Math.max(n, 2 * table.typeRows.length, 256)));
    grown.set(table.typeRows);
    table.typeRows = grown;
  }
  const dst = table.typeRows;
  for (let t = 0; t < n; t++) dst[t] += src[t];
}

/** The rows of `file`'s events in `order` (0: the file's); `at(k)`: where the events' column NT_k is in the core. */
function rowsInOrder(
  core: NettraceRowsCore,
  blocks: Blocks,
  order: number,
  file: NettraceFile,
  cx: EventTableContext,
  table: EventTable,
  expect: number,
  at: (k: number) => number,
): void {
  const { header, metadata, stacks } = file;
  const n = file.events.length;
  const { ptr, providerOf, unknownProvider } = cx;
  const pidValue = header.processId >>> 0;

  // (extended items, a related activity or a stack per row at most: room for as many a row as the rows
  // before had, grown to the share the chunks so far have once a chunk needs more)
  table.reserve(n, 0, expect, table.n ? Math.ceil((n * table.items) / table.n) : 0);
  const base = table.n,
    itemBase = table.items;
  const { timestamp, tid, payloadOffset, payloadLength, processor, eventType } = table.events;
  const { metadataOfRow } = table;

  // the tables: metadata (entry 0: undefined metadata), stack items, V6 threads
  const nm = metadata.length;
  const metaAt = blocks.take((nm + 1) * R.NM_WORDS * 4);
  const stackOffsetAt = blocks.take(4 * stacks.length),
    stackBytesAt = blocks.take(4 * stacks.length);
  const v6 = header.formatVersion === 6;
  const threadRows: number[][] = [];
  if (v6) {
    // (a later row of the same index replaces an earlier one)
    const byIndex = new Map<number, number[]>();
    for (const th of file.threads) {
      const index = Number(BigInt.asUintN(32, th.index));
      byIndex.set(index, [
        index,
        th.osThreadId !== undefined ? Number(BigInt.asUintN(32, th.osThreadId)) : index,
        th.osProcessId !== undefined ? Number(BigInt.asUintN(32, th.osProcessId)) : pidValue,
      ]);
    }
    threadRows.push(...[...byIndex.values()].sort((a, b) => a[0] - b[0]));
  }
  const threadsAt = blocks.take(12 * threadRows.length);
  // (and by index, where the indices are small: thread id and process id, an index not in the table itself and the file's)
  const directCount = threadRows.length > 0 && threadRows[threadRows.length - 1][0] < THREAD_DIRECT ? threadRows[threadRows.length - 1][0] + 1 : 0;
  const directAt = blocks.take(8 * directCount);
  const typeRowsAt = blocks.take(4 * C.MAX_EVENT_TYPES);
  const p = blocks.take(R.NR_WORDS * 4);
  // the chunk's staged inputs and outputs, sized for the largest chunk
  const chunk = Math.min(cx.chunkRows ?? CHUNK_ROWS, Math.max(1, n));
  const out = {
    ts: blocks.take(8 * chunk),
    pid: blocks.take(v6 ? 4 * chunk : 8),
    tid: blocks.take(4 * chunk),
    payloadOffset: blocks.take(4 * chunk),
    payloadLength: blocks.take(2 * chunk),
    provider: blocks.take(2 * chunk),
    eventId: blocks.take(2 * chunk),
    processor: blocks.take(2 * chunk),
    version: blocks.take(2 * chunk),
    opcode: blocks.take(chunk),
    metadata: blocks.take(4 * chunk),
    actRow: blocks.take(4 * chunk),
    actOffset: blocks.take(4 * chunk),
    eventType: blocks.take(2 * chunk),
    extRow: blocks.take(8 * chunk),
    extType: blocks.take(4 * chunk),
    extSize: blocks.take(4 * chunk),
    extOffset: blocks.take(8 * chunk),
    seen: blocks.take(4 * chunk),
    // (rows in a dispatch order other than the file's read their events through a stage)
    stage: order === 0 ? 0 : blocks.take(R.STAGE_BYTES),
  };
  {
    const u32 = new Uint32Array(core.memory.buffer);
    const m = metaAt >>> 2;
    for (let mi = -1; mi < nm; mi++) {
      const md = mi >= 0 ? metadata[mi] : undefined;
      const x = m + (mi + 1) * R.NM_WORDS;
      u32[x + R.NM_PROVIDER] = mi >= 0 ? providerOf[mi] : Math.max(0, unknownProvider);
      u32[x + R.NM_EVENT_ID] = md?.eventId ?? 0;
      u32[x + R.NM_VERSION] = md?.version ?? 0;
      u32[x + R.NM_OPCODE] = md?.opcode ?? 0;
      u32[x + R.NM_LEVEL] = md?.level ?? 0;
      const kw = BigInt.asUintN(64, md?.keywords ?? 0n);
      u32[x + R.NM_KEYWORDS_LO] = Number(kw & 0xffffffffn);
      u32[x + R.NM_KEYWORDS_HI] = Number(kw >> 32n);
      u32[x + R.NM_DROPS_STACK] = dropsStack(md) ? 1 : 0;
      // (types are numbered in order of first sight in the rows: a metadata row's is looked up at its first event)
      u32[x + R.NM_TYPE] = R.NM_TYPE_UNSET;
    }
    put(core, stackOffsetAt, stacks.offset, 0, stacks.length);
    new Uint32Array(core.memory.buffer, stackBytesAt, stacks.length).set(stacks.byteLength.subarray(0, stacks.length));
    threadRows.forEach((row, k) => u32.set(row, (threadsAt >>> 2) + 3 * k));
    const d = directAt >>> 2;
    for (let index = 0; index < directCount; index++) {
      u32[d + 2 * index] = index;
      u32[d + 2 * index + 1] = pidValue;
    }
    for (const [index, tid, pid] of threadRows) {
      if (index >= directCount) continue;
      u32[d + 2 * index] = tid;
      u32[d + 2 * index + 1] = pid;
    }
    u32.fill(0, typeRowsAt >>> 2, (typeRowsAt >>> 2) + C.MAX_EVENT_TYPES);
    const w = u32.subarray(p >>> 2, (p >>> 2) + R.NR_WORDS);
    w.fill(0);
    w[R.NR_METADATA_TABLE] = metaAt;
    w[R.NR_STACK_OFFSET] = stackOffsetAt;
    w[R.NR_STACK_BYTES] = stackBytesAt;
    w[R.NR_THREADS] = threadsAt;
    w[R.NR_THREAD_COUNT] = threadRows.length;
    w[R.NR_THREAD_DIRECT] = directCount ? directAt : 0;
    w[R.NR_THREAD_DIRECT_COUNT] = directCount;
    w[R.NR_V6] = v6 ? 1 : 0;
    w[R.NR_PROCESS_ID] = pidValue;
    w[R.NR_BASE] = cx.base ?? 8;
    w[R.NR_STACK_TYPE] = ptr === 4 ? 5 : 6; // EVENT_HEADER_EXT_TYPE_STACK_TRACE32 / 64
    w[R.NR_MAX_HI] = table.maxHi >>> 0;
    w[R.NR_MAX_LO] = table.maxLo;
    w[R.NR_TYPE_ROWS] = typeRowsAt;
    w[R.NR_OUT_TIMESTAMP] = out.ts;
    // (the type fields of every row only for a fill chunk by chunk, which reads them; rows without a type get theirs from their metadata: untypedFields)
    w[R.NR_FIELDS] = cx.fillChunk ? 1 : 0;
    w[R.NR_OUT_PID] = out.pid;
    w[R.NR_OUT_TID] = out.tid;
    w[R.NR_OUT_PAYLOAD_OFFSET] = out.payloadOffset;
    w[R.NR_OUT_PAYLOAD_LENGTH] = out.payloadLength;
    w[R.NR_OUT_PROVIDER] = out.provider;
    w[R.NR_OUT_EVENT_ID] = out.eventId;
    w[R.NR_OUT_PROCESSOR] = out.processor;
    w[R.NR_OUT_VERSION] = out.version;
    w[R.NR_OUT_OPCODE] = out.opcode;
    w[R.NR_OUT_METADATA] = out.metadata;
    w[R.NR_ACT_ROW] = out.actRow;
    w[R.NR_ACT_OFFSET] = out.actOffset;
    w[R.NR_OUT_EVENT_TYPE] = out.eventType;
    w[R.NR_EXT_ROW] = out.extRow;
    w[R.NR_EXT_TYPE] = out.extType;
    w[R.NR_EXT_SIZE] = out.extSize;
    w[R.NR_EXT_OFFSET] = out.extOffset;
    w[R.NR_SEEN] = out.seen;
    w[R.NR_STAGE] = out.stage;
  }

  let e = 0;
  for (let r0 = 0; r0 < n; r0 += chunk) {
    const rows = Math.min(chunk, n - r0);
    // (the events' columns read where they are)
    let w = new Uint32Array(core.memory.buffer, p, R.NR_WORDS);
    w[R.NR_ROWS] = rows;
    w[R.NR_ORDER] = order === 0 ? 0 : order + 4 * r0;
    w[R.NR_EVENT_FROM] = r0;
    w[R.NR_FIRST_ROW] = base + r0;
    w[R.NR_TIMESTAMP] = at(NT_TIMESTAMP);
    w[R.NR_METADATA] = at(NT_METADATA);
    w[R.NR_ACTIVITY] = at(NT_ACTIVITY);
    w[R.NR_RELATED] = at(NT_RELATED);
    w[R.NR_PAYLOAD_OFFSET] = at(NT_PAYLOAD_OFFSET);
    w[R.NR_PAYLOAD_LENGTH] = at(NT_PAYLOAD_SIZE);
    w[R.NR_PROCESSOR] = at(NT_PROCESSOR);
    w[R.NR_STACK] = at(NT_STACK);
    w[R.NR_THREAD] = at(NT_THREAD);
    w[R.NR_CAPTURE] = at(NT_CAPTURE);
    core.nettraceRows(p);
    // the types of metadata met first in this chunk, in row order
    w = new Uint32Array(core.memory.buffer, p, R.NR_WORDS);
    const seen = new Uint32Array(core.memory.buffer, out.seen, w[R.NR_SEEN_COUNT]);
    const u32 = new Uint32Array(core.memory.buffer);
    for (const x of seen) {
      const at = (metaAt >>> 2) + x * R.NM_WORDS;
      u32[at + R.NM_TYPE] = cx.typeOf(
        u32[at + R.NM_PROVIDER],
        u32[at + R.NM_EVENT_ID],
        u32[at + R.NM_VERSION],
        u32[at + R.NM_OPCODE],
        u32[at + R.NM_LEVEL],
        u32[at + R.NM_KEYWORDS_LO],
        u32[at + R.NM_KEYWORDS_HI],
      );
    }
    core.nettraceTypes(p);
    take(core, out.ts, timestamp, base + r0, rows);
    // (the process ids only where a row's is not the file's, which only a V6 thread table can give; the flags are the extended items')
    if (threadRows.length > 0) {
      if (table.pid || new Uint32Array(core.memory.buffer, p, R.NR_WORDS)[R.NR_OTHER_PIDS] > 0)
        take(core, out.pid, table.pidColumn(pidValue, base + r0), base + r0, rows);
    } else if (table.pid) table.pid.fill(pidValue, base + r0, base + r0 + rows);
    take(core, out.tid, tid, base + r0, rows);
    take(core, out.payloadOffset, payloadOffset, base + r0, rows);
    take(core, out.payloadLength, payloadLength, base + r0, rows);
    take(core, out.processor, processor, base + r0, rows);
    take(core, out.metadata, metadataOfRow, base + r0, rows);
    const acts = new Uint32Array(core.memory.buffer, p, R.NR_WORDS)[R.NR_ACT_COUNT];
    table.addActivities(new Uint32Array(core.memory.buffer, out.actRow, acts), new Uint32Array(core.memory.buffer, out.actOffset, acts));
    take(core, out.eventType, eventType, base + r0, rows);
    // (the type fields are the event type's: kept only for a chunk with rows that have none)
    if (new Uint16Array(core.memory.buffer, out.eventType, rows).includes(C.EVENT_TYPE_NONE)) {
      untypedFields(new Uint32Array(core.memory.buffer), metaAt, metadataOfRow.subarray(base + r0, base + r0 + rows), table.untypedColumns(), base + r0);
    }
    const x = new Uint32Array(core.memory.buffer, p, R.NR_WORDS)[R.NR_EXT_COUNT];
    // (the rows at hand are this call's `n`, their items so far e + x)
    if (itemBase + e + x > table.ext.row.length) table.reserve(n, e + x, expect, Math.ceil((((e + x) * n) / (r0 + rows)) * 1.05));
    const { row: extRow, type: extType, size: extSize, offset: extOffset } = table.ext;
    take(core, out.extRow, extRow, itemBase + e, x);
    take(core, out.extType, extType, itemBase + e, x);
    take(core, out.extSize, extSize, itemBase + e, x);
    take(core, out.extOffset, extOffset, itemBase + e, x);
    e += x;
    w = new Uint32Array(core.memory.buffer, p, R.NR_WORDS);
    cx.fillChunk?.(
      {
        provider: out.provider,
        eventId: out.eventId,
        version: out.version,
        payloadOffset: out.payloadOffset,
        payloadLength: out.payloadLength,
        payloadFrom: w[R.NR_PAYLOAD_FROM],
        payloadTo: w[R.NR_PAYLOAD_TO],
      },
      rows,
      base + r0,
    );
  }
  const w = new Uint32Array(core.memory.buffer, p, R.NR_WORDS);
  // (the types known: no row has a type past them)
  addRows(table, new Uint32Array(core.memory.buffer, typeRowsAt, C.MAX_EVENT_TYPES), cx.typeCount?.() ?? C.MAX_EVENT_TYPES);
  table.n += n;
  table.items += e;
  table.cut += w[R.NR_CUT];
  table.maxHi = w[R.NR_MAX_HI] | 0;
  table.maxLo = w[R.NR_MAX_LO];
}
