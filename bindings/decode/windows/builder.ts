// Windows into one JS-owned trace. Each window's columns are copied out of the core's memory once,
// straight to their place in the trace's columns (room reserved ahead by the rows per input byte seen
// so far: pages never written are never resident, so an over-estimate costs address space only). Its record bytes stay where they are when the
// trace's input is held whole (uncompressed bytes: the trace's record bytes are its input, and an
// offset is a file offset), or are appended to one byte store; every address the window's tables hold
// (payloads, extended items, typed-table references, buffers) is moved to where its bytes now are.
// Rows, buffers and warnings are numbered over the whole trace; the structs go to a small store of their own.

import * as C from "../../../assembly/codes.js";
import {
  align8,
  concatBytes,
  metaOf,
  readBuffer,
  untypedRows,
  withDecidedFields,
  EXT_COLUMN_LAYOUT,
  STORED_EVENT_LAYOUT,
  TYPE_FIELD_LAYOUT,
  TYPE_FIELDS,
  type ColumnType,
  type EventColumns,
  type ExtendedItemColumns,
  type StoredEventColumns,
  type TraceData,
  type TypeField,
} from "../result/trace-data.js";
import { stagedOnly, type Window } from "./windows.js";
import { giveBack, takeBuffer } from "../result/reuse.js";
import { GROWTH, GrowingClrBlocks, relocate, relocateAll, type Relocation } from "../result/clr-blocks.js";

/** Where a built trace's record bytes are: held ("keep"), not kept ("drop"), read back from the input ("source"). */
export type RecordsMode = "keep" | "drop" | "source";

type Column = EventColumns[keyof EventColumns] | ExtendedItemColumns[keyof ExtendedItemColumns];

/**
 * A growing byte store of record bytes. Its first 8 bytes stay unused, so that offset 0 keeps meaning
 * "none", as address 0 does in the core.
 */
class ByteStore {
  bytes = new Uint8Array(0);
  length = 8;
  /** `capacity`: what the first growth takes (the store takes no memory until something is appended). */
  constructor(private readonly capacity: number) {}

  /**
   * Room for `n` more bytes (offsets are u32: the store stops short of 4 GiB); `expect`: the bytes the
   * whole trace will likely take, when the store must grow.
   */
  reserve(n: number, expect = 0): boolean {
    const need = this.length + n;
    if (need > 0xffff_fff8) return false;
    if (need > this.bytes.length) {
      const grown = this.bytes.length ? Math.floor(this.bytes.length * GROWTH) : Math.max(1 << 16, this.capacity);
      const size = Math.min(0xffff_fff8, Math.max(need, grown, expect));
      const next = new Uint8Array(takeBuffer(size), 0, size);
      next.set(this.bytes.subarray(0, this.length));
      // (the store outgrown is left to the collector: pooled, it would stay resident)
      this.bytes = next;
    }
    return true;
  }

  /** Makes the store a copy of `src` (at offset 0: the offsets into it hold); false when it does not fit. */
  startWith(src: Uint8Array): boolean {
    if (!this.reserve(Math.max(0, src.length - this.length))) return false;
    this.bytes.set(src, 0);
    this.length = Math.max(this.length, src.length);
    return true;
  }

  /** Appends 8-aligned; returns where `src` landed, or -1 when the store is full. */
  append(src: Uint8Array): number {
    const at = align8(this.length);
    if (!this.reserve(at - this.length + src.length)) return -1;
    this.bytes.set(src, at);
    this.length = at + src.length;
    return at;
  }
}

/**
 * `src` moved by `delta` into `dst` from `at`, in 32-bit integer arithmetic (modulo 2^32, which is
 * exact for addresses that stay u32): through Uint32 values and a double delta the loop took 7 ns a row.
 */
function shiftInto(dst: Uint32Array, at: number, src: Uint32Array, delta: number): void {
  if (delta === 0) {
    dst.set(src, at);
    return;
  }
  const d = delta | 0;
  const to = new Int32Array(dst.buffer, dst.byteOffset + 4 * at, src.length);
  const from = new Int32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < from.length; i++) to[i] = (from[i] + d) | 0;
}

/** The room to grow to for `need` rows: the rows expected, and at least GROWTH times the old room. */
function grownCap(need: number, cap: number, expect: number): number {
  return Math.max(need, expect, Math.ceil(cap * GROWTH));
}

/**
 * Columns that grow by appended windows, `length` rows used of `cap`: one typed array each, copied
 * into a larger one when a window does not fit (rarely: `reserve` is told how many rows to expect).
 */
class GrowingColumns<T extends object> {
  readonly arrays: Record<string, Column> = {};
  cap = 0;
  length = 0;
  constructor(private readonly layout: Readonly<Record<string, readonly [ColumnType, number]>>) {
    for (const key of Object.keys(layout)) this.arrays[key] = new layout[key][0](0) as Column;
  }

  /** Room for `need` rows in all; `expect`: the rows the whole trace will likely have (>= need). */
  reserve(need: number, expect: number): void {
    if (need <= this.cap) return;
    const cap = grownCap(need, this.cap, expect);
    for (const key of Object.keys(this.layout)) {
      const type = this.layout[key][0];
      const next = new type(takeBuffer(cap * type.BYTES_PER_ELEMENT), 0, cap) as Column;
      const old = this.arrays[key];
      if (this.length) (next as unknown as { set(a: Column): void }).set(old.subarray(0, this.length) as Column);
      this.arrays[key] = next;
    }
    this.cap = cap;
  }

  /** The buffers the columns live in. */
  buffers(): ArrayBufferLike[] {
    return Object.values(this.arrays).map((a) => a.buffer);
  }

  /** The used rows, as views. */
  view(): T {
    const out = {} as Record<string, Column>;
    for (const key of Object.keys(this.layout)) out[key] = this.arrays[key].subarray(0, this.length) as Column;
    return out as unknown as T;
  }
}

/** The logfile header struct with its time zone and names, their addresses relative to the copy. */
export function logfileCopy(data: TraceData): Uint8Array {
  const src = metaOf(data);
  const lh = new DataView(src.buffer, src.byteOffset + data.logfileOffset, C.LH_SIZE);
  const u32 = (o: number) => lh.getUint32(o, true);
  const tz = u32(C.LH_TIME_ZONE);
  const names = [
    [C.LH_LOGGER_NAME, C.LH_LOGGER_NAME_CHARS],
    [C.LH_LOG_FILE_NAME, C.LH_LOG_FILE_NAME_CHARS],
  ] as const;
  let size = C.LH_SIZE + (tz ? (C.TIME_ZONE_BYTES + 7) & ~7 : 0);
  for (const [, chars] of names) size += (u32(chars) * 2 + 7) & ~7;
  const out = new Uint8Array(size);
  out.set(src.subarray(data.logfileOffset, data.logfileOffset + C.LH_SIZE));
  const v = new DataView(out.buffer);
  let at = C.LH_SIZE;
  if (tz) {
    out.set(src.subarray(tz, tz + C.TIME_ZONE_BYTES), at);
    v.setUint32(C.LH_TIME_ZONE, at, true);
    at += (C.TIME_ZONE_BYTES + 7) & ~7;
  }
  for (const [addr, chars] of names) {
    const n = u32(chars) * 2;
    const from = u32(addr);
    out.set(src.subarray(from, from + n), at);
    // (a name present but empty keeps an address, as the core gives it: present and absent stay apart)
    v.setUint32(addr, from ? at : 0, true);
    at += (n + 7) & ~7;
  }
  return out;
}

/** A logfile header copy (logfileCopy) placed at `at` in `bytes`: its addresses made relative to `bytes`. */
export function rebaseLogfile(bytes: Uint8Array, at: number): void {
  const v = new DataView(bytes.buffer, bytes.byteOffset + at, C.LH_SIZE);
  for (const a of [C.LH_TIME_ZONE, C.LH_LOGGER_NAME, C.LH_LOG_FILE_NAME]) {
    const addr = v.getUint32(a, true);
    if (addr) v.setUint32(a, addr + at, true);
  }
}

export class TraceBuilder {
  private store?: ByteStore;
  private readonly events = new GrowingColumns<StoredEventColumns>(STORED_EVENT_LAYOUT);
  /** The type fields of rows without an event type (made when a window first has such rows; other rows' cells unused). */
  private untyped?: GrowingColumns<Pick<EventColumns, TypeField>>;
  private readonly ext = new GrowingColumns<ExtendedItemColumns>(EXT_COLUMN_LAYOUT);
  private readonly buffers: Uint8Array[] = [];
  private readonly warnings: Uint8Array[] = [];
  private readonly clr = new GrowingClrBlocks(takeBuffer);
  private typeRows = new Float64Array(0);
  private logfile?: Uint8Array;
  private warningsTaken = 0;
  rows = 0;
  /** Windows taken. */
  windows = 0;
  private extRows = 0;
  private bufferRows = 0;
  clrRows = 0;
  /** Set when the record bytes kept would pass 4 GiB: the window that did not fit and those after are not kept. */
  full = false;
  /** Record bytes held ("keep"), or not: "drop", or "source" (read back from the input; offsets relative to each buffer's record area). */
  private readonly keepRecords: boolean;
  /** The input, while the record bytes are left where they are in it. */
  private input?: Uint8Array;
  /** The input held whole (kept when the records move to a store: windows without their records read them here). */
  private readonly held?: Uint8Array;

  /**
   * `sizeHint`: the input's size when known (the record bytes of an uncompressed trace take about as
   * much). With `keepRows` false only the trace's outline is kept (buffers, warnings, event types and
   * their counts, providers, logfile header), not the rows, their bytes or the typed tables: the
   * built trace then counts its rows in eventCount but has no columns. `input`: the whole input, when
   * the trace may keep its record bytes where they are in it (no copy).
   */
  constructor(
    private readonly sizeHint?: number,
    private readonly keepRows = true,
    private readonly records: RecordsMode = keepRows ? "keep" : "drop",
    input?: Uint8Array,
  ) {
    this.keepRecords = records === "keep";
    if (this.keepRecords && input && input.byteLength <= 0xffff_fff8) this.input = this.held = input;
  }

  /** Whether the input's bytes are the trace's record bytes (given whole, uncompressed records walked in place). */
  get holdsInput(): boolean {
    return this.held !== undefined;
  }

  /**
   * How many of something the whole trace will likely have, `n` of them met up to file offset `at`:
   * in proportion to the input's size when known (with a little to spare), else `n` (grown by GROWTH when passed).
   */
  private expect(n: number, at: number): number {
    if (this.sizeHint === undefined || at <= 0 || at >= this.sizeHint) return n;
    return Math.ceil(n * (this.sizeHint / at) * 1.05) + 64;
  }

  /**
   * Where the window's record bytes go, as moves of its addresses; null when they do not fit (4 GiB).
   * In the input when they lie in it as staged (records walked in place); else appended to the store,
   * which then starts as a copy of the input up to this window (the offsets before stay as they are).
   */
  private place(w: Window, reached: number): Relocation | null {
    const ranges = w.records.filter(([a, b]) => b > a);
    if (this.input && stagedOnly(w)) {
      const [start] = w.records[0];
      return [[start, w.records[0][1], w.recordsFileOffset - start]];
    }
    const adding = ranges.reduce((n, [a, b]) => n + align8(b - a), 0);
    if (!this.store) {
      // (room for the input's size: the record bytes of an uncompressed trace take about as much)
      const hint = this.sizeHint !== undefined ? Math.min(this.sizeHint + (2 << 20), 0xffff_fff8) : 1 << 20;
      this.store = new ByteStore(hint);
      // the windows before were left in the input: their offsets hold in a copy of it
      const before = this.input ? w.recordsFileOffset : 0;
      // (room for what the whole trace will likely take from the first window on: a store that grows copies
      // what it holds into fresh memory, and a compressed trace's records take several times its size, the
      // generated 1 GiB trace's with XPRESS 1.25 GB of its 200 MB: a store sized by the input grew once, and
      // its first 200 MB, never pooled, were fresh memory at every decode, 50 k page faults)
      if (!this.store.reserve(before + adding, Math.min(this.expect(this.store.length + before + adding, reached), 0xffff_fff8))) return null;
      if (this.input) {
        if (!this.store.startWith(this.input.subarray(0, before))) return null;
        this.input = undefined;
      }
    }
    // (room for what the whole trace will likely take, from the record bytes per input byte so far)
    if (!this.store.reserve(adding, Math.min(this.expect(this.store.length + adding, reached), 0xffff_fff8))) return null;
    const moves: [number, number, number][] = [];
    // (a window sent without its records: its one range is of file offsets in the held input)
    const from = w.recordsInInput ? this.held! : w.data.bytes;
    for (const [a, b] of ranges) {
      const at = this.store.append(from.subarray(a, b));
      if (at < 0) return null;
      moves.push([a, b, at - a]);
    }
    return moves;
  }

  /**
   * Takes a window's tables (views into the core's memory) as JS-owned copies. False when they do not
   * fit. `last`: nothing reads the window after this (a whole decode's), so its addresses may be moved in
   * the core's memory before they are copied; a stream's batch kept (TraceBatch.keep) is still read.
   */
  add(w: Window, last = false): boolean {
    const inCore = last ? w.inCore : undefined;
    if (this.full) return false;
    const { data } = w;
    // how far into the file this window reaches: what the rows so far tell of the whole trace
    const reached = data.bufferCount ? readBuffer(data, data.bufferCount - 1) : undefined;
    const at = reached ? reached.fileOffset + reached.bufferSize : 0;
    const moves = this.keepRecords ? this.place(w, at) : [];
    if (!moves) {
      this.full = true;
      return false;
    }
    const meta = metaOf(data);
    // (the core keeps one logfile header struct for the whole trace: the first window's is every window's)
    if (!this.logfile) {
      this.logfile = logfileCopy(data);
    }
    // where each buffer's records went: rows of a buffer lie in its record area
    const bufs = meta.slice(data.buffersOffset, data.buffersOffset + data.bufferCount * C.BUF_STRIDE);
    const bv = new DataView(bufs.buffer);
    const deltas = new Float64Array(data.bufferCount);
    for (let b = 0; b < data.bufferCount; b++) {
      const o = b * C.BUF_STRIDE;
      bv.setUint32(o + C.B_FIRST_ROW, bv.getUint32(o + C.B_FIRST_ROW, true) + this.rows, true);
      const addr = bv.getUint32(o + C.B_DATA, true);
      const moved = this.keepRecords ? relocate(moves, addr) : 0;
      deltas[b] = moved - addr;
      if (addr) bv.setUint32(o + C.B_DATA, moved, true);
    }
    if (this.keepRows) {
      const e = data.events;
      const n = data.eventCount;
      const total = this.rows + n;
      this.events.reserve(total, this.expect(total, at));
      const cols = this.events.arrays as unknown as StoredEventColumns;
      // rows without an event type keep their type fields (the others' are their types')
      if (untypedRows(data) > 0) {
        const u = (this.untyped ??= new GrowingColumns<Pick<EventColumns, TypeField>>(TYPE_FIELD_LAYOUT));
        u.length = this.rows;
        u.reserve(total, this.expect(total, at));
        const from = data.untyped ?? e;
        for (const k of TYPE_FIELDS) {
          const col = from[k] as Uint16Array | undefined;
          if (col) (u.arrays[k] as Uint16Array).set(col.subarray(0, n), this.rows);
        }
        u.length = total;
      }
      for (const k of Object.keys(STORED_EVENT_LAYOUT) as (keyof StoredEventColumns)[]) {
        if (k !== "payloadOffset") (cols[k] as unknown as { set(a: ArrayLike<number | bigint>, at: number): void }).set(e[k], this.rows);
      }
      const offsets = cols.payloadOffset;
      const relative = this.records === "source" ? areaRelative(data) : undefined;
      if (relative) offsets.set(relative.payloadOffset, this.rows);
      else if (!this.keepRecords) offsets.fill(0, this.rows, total);
      else {
        const src = e.payloadOffset;
        // (records where the window's addresses say, as the windows of workers are sent: one copy)
        // (a window staged in one piece moves alike: one loop over its rows, not one per buffer)
        const d = deltas.length ? deltas[0] : 0;
        if (deltas.every((x) => x === d)) {
          // (moved in place by the core where it can: the window is taken once)
          if (d !== 0 && inCore?.shift(src.subarray(0, n), d)) offsets.set(src.subarray(0, n), this.rows);
          else shiftInto(offsets, this.rows, src.subarray(0, n), d);
        } else
          for (let b = 0; b < data.bufferCount; b++) {
            const first = bv.getUint32(b * C.BUF_STRIDE + C.B_FIRST_ROW, true);
            const end = first + bv.getUint32(b * C.BUF_STRIDE + C.B_ROW_COUNT, true);
            shiftInto(offsets, first, src.subarray(first - this.rows, end - this.rows), deltas[b]);
          }
      }
      this.events.length = total;
      // (extended items are record bytes)
      if (this.records !== "drop" && data.extCount) {
        const x = data.ext;
        const m = data.extCount;
        const from = this.extRows;
        this.ext.reserve(from + m, this.expect(from + m, at));
        const xc = this.ext.arrays as unknown as ExtendedItemColumns;
        for (let i = 0; i < m; i++) xc.row[from + i] = x.row[i] + this.rows;
        xc.type.set(x.type, from);
        xc.size.set(x.size, from);
        if (relative) xc.offset.set(relative.extOffset, from);
        else relocateAll(moves, x.offset.subarray(0, m), xc.offset.subarray(from, from + m));
        this.extRows += m;
        this.ext.length = this.extRows;
      }
    }
    this.buffers.push(bufs);
    const own = w.warnings;
    this.warnings.push(meta.slice(own.offset, own.offset + own.count * C.WARN_STRIDE));
    this.warningsTaken += own.count;
    // event types: this window's row counts
    if (this.typeRows.length < data.typeCount) {
      const next = new Float64Array(data.typeCount);
      next.set(this.typeRows);
      this.typeRows = next;
    }
    const tv = new DataView(meta.buffer, meta.byteOffset + data.typesOffset, data.typeCount * C.TYPE_STRIDE);
    for (let t = 0; t < data.typeCount; t++) this.typeRows[t] += tv.getUint32(t * C.TYPE_STRIDE + C.TYPE_ROWS, true);
    // typed tables: each type's rows appended to its block (room reserved ahead as for the columns), references moved
    if (data.clr && this.keepRows) {
      const { counts, blocks, caps } = data.clr;
      for (let t = 0; t < counts.length; t++) {
        const count = counts[t];
        const src = blocks[t];
        if (!count || !src) continue;
        this.clr.append(t, src, caps?.[t] ?? count, count, this.rows, this.keepRecords ? moves : null, (need) => this.expect(need, at), inCore);
      }
    }
    this.clrRows += data.clrRows;
    this.rows += data.eventCount;
    this.windows++;
    this.bufferRows += data.bufferCount;
    return true;
  }

  /**
   * The whole trace. `last`: the final window's tables (or the core's tables when decoding ended),
   * for the providers, event types, warning count and logfile header that persist across windows.
   */
  build(last: TraceData | undefined, inputBytes: number): TraceData {
    const lastMeta = last && metaOf(last);
    // warnings after the last window taken (the stop that ended decoding, trailing bytes)
    if (last && lastMeta && last.warningCount > this.warningsTaken) {
      this.warnings.push(lastMeta.slice(last.warningsOffset + this.warningsTaken * C.WARN_STRIDE, last.warningsOffset + last.warningCount * C.WARN_STRIDE));
      this.warningsTaken = last.warningCount;
    }
    const warnings = concatBytes(this.warnings);
    let providers = new Uint8Array(0),
      types = new Uint8Array(0);
    let providerCount = 0,
      typeCount = 0,
      warningTotal = warnings.length / C.WARN_STRIDE;
    if (last && lastMeta) {
      providerCount = last.providerCount;
      providers = lastMeta.slice(last.providersOffset, last.providersOffset + providerCount * C.PROV_STRIDE);
      typeCount = last.typeCount;
      types = lastMeta.slice(last.typesOffset, last.typesOffset + typeCount * C.TYPE_STRIDE);
      const tv = new DataView(types.buffer);
      for (let t = 0; t < typeCount; t++) tv.setUint32(t * C.TYPE_STRIDE + C.TYPE_ROWS, this.typeRows[t] ?? 0, true);
      warningTotal = Math.max(warningTotal, last.warningTotal);
      if (!this.logfile) {
        this.logfile = logfileCopy(last);
      }
    }
    const logfile = this.logfile ?? new Uint8Array(C.LH_SIZE);
    // the structs, each 8-aligned, after 8 unused bytes (offset 0 means "none")
    const parts = [concatBytes(this.buffers), warnings, providers, types, logfile];
    const offsets: number[] = [];
    let size = 8;
    for (const p of parts) {
      offsets.push(size);
      size = align8(size + p.length);
    }
    const meta = new Uint8Array(size);
    parts.forEach((p, i) => meta.set(p, offsets[i]));
    const [buffersOffset, warningsOffset, providersOffset, typesOffset, logfileOffset] = offsets;
    rebaseLogfile(meta, logfileOffset);
    const clr: TraceData["clr"] = this.clr.result();
    const bytes = this.input ?? (this.store ? this.store.bytes.subarray(0, this.store.length) : new Uint8Array(8));
    // what the trace's tables live in goes back for the next decode when the trace is disposed
    const owned = [...this.events.buffers(), ...(this.untyped?.buffers() ?? []), ...this.ext.buffers(), ...this.clr.buffers()];
    if (this.store?.bytes.length) owned.push(this.store.bytes.buffer);
    const untyped = this.untyped && ((this.untyped.length = this.events.length), this.untyped.view());
    const built: TraceData = {
      release: () => giveBack(owned),
      bytes,
      meta,
      // (without rows, the count alone)
      eventCount: this.rows,
      // (rows kept: none when only the outline is)
      events: withDecidedFields(this.events.view(), this.events.length, () => built, untyped),
      untyped,
      extCount: this.extRows,
      ext: this.ext.view(),
      bufferCount: this.bufferRows,
      buffersOffset,
      warningCount: warnings.length / C.WARN_STRIDE,
      warningTotal,
      warningsOffset,
      providerCount,
      providersOffset,
      typeCount,
      typesOffset,
      logfileOffset,
      clr,
      clrRows: this.clrRows,
      arenaBytes: last?.arenaBytes ?? 0,
      recordBytes: this.keepRecords ? undefined : false,
      inputBytes,
      decodedBytes: inputBytes,
    };
    return built;
  }
}

/**
 * The payload offsets of a window's rows (and its extended items' offsets) made relative to their
 * buffer's record area, as RecordSource reads them. (`data`: a window's tables.)
 */
function areaRelative(data: TraceData): { payloadOffset: Uint32Array; extOffset: Uint32Array } {
  const payloadOffset = new Uint32Array(data.eventCount);
  const extOffset = new Uint32Array(data.extCount);
  const { events, ext } = data;
  let e = 0;
  for (let b = 0; b < data.bufferCount; b++) {
    const info = readBuffer(data, b);
    const meta = metaOf(data);
    const base = new DataView(meta.buffer, meta.byteOffset + data.buffersOffset + b * C.BUF_STRIDE, C.BUF_STRIDE).getUint32(C.B_DATA, true);
    const end = info.firstRow + info.rowCount;
    for (let r = info.firstRow; r < end; r++) payloadOffset[r] = events.payloadOffset[r] - base;
    while (e < data.extCount && ext.row[e] < info.firstRow) e++;
    for (; e < data.extCount && ext.row[e] < end; e++) extOffset[e] = ext.offset[e] - base;
  }
  return { payloadOffset, extOffset };
}
