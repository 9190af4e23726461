// Windows into one JS-owned trace. Each window's columns are copied out of the core's memory as
// chunks (whole columns are concatenated on first use); its record bytes are appended to one byte
// store, and every offset into them (payloads, extended items, typed-table references, buffers)
// is moved by where they landed. Rows, buffers and warnings are numbered over the whole trace.

import * as C from "../../assembly/codes.js";
import { clrProgram } from "../schema/clr-program.js";
import { align8, concatBytes, readBuffer, EVENT_COLUMN_LAYOUT, EXT_COLUMN_LAYOUT, type ColumnType, type EventColumns, type ExtendedItemColumns, type TraceData } from "./trace-data.js";
import type { Window } from "./windows.js";
import { joinBlocks, moveBlock } from "./clr-blocks.js";

/** Where a built trace's record bytes are: held ("keep"), not kept ("drop"), read back from the input ("source"). */
export type RecordsMode = "keep" | "drop" | "source";

type Column = EventColumns[keyof EventColumns] | ExtendedItemColumns[keyof ExtendedItemColumns];

/**
 * A growing byte store: record bytes first, the structs appended when the trace is built. Its
 * first 8 bytes stay unused, so that offset 0 keeps meaning "none", as address 0 does in the core.
 */
class ByteStore {
  bytes = new Uint8Array(0);
  length = 8;
  /** `capacity`: what the first growth takes (the store takes no memory until something is appended). */
  constructor(private readonly capacity: number) {}

  /** Room for `n` more bytes (offsets are u32: the store stops short of 4 GiB). */
  reserve(n: number): boolean {
    const need = this.length + n;
    if (need > 0xffff_fff8) return false;
    if (need > this.bytes.length) {
      const grown = this.bytes.length ? Math.floor(this.bytes.length * 1.5) : Math.max(1 << 16, this.capacity);
      const next = new Uint8Array(Math.min(0xffff_fff8, Math.max(need, grown)));
      next.set(this.bytes.subarray(0, this.length));
      this.bytes = next;
    }
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

/** Columns whose whole arrays are made on first use from their chunks (then the chunks view them). */
function chunkedColumns<T extends object>(
  chunks: Record<string, Column[]>, layout: Readonly<Record<string, readonly [ColumnType, number]>>, total: number,
): T {
  const out = {} as Record<string, Column>;
  for (const key of Object.keys(chunks)) {
    Object.defineProperty(out, key, {
      enumerable: true,
      configurable: true,
      get() {
        const list = chunks[key];
        let whole: Column;
        if (list.length === 1) whole = list[0];
        else {
          whole = new layout[key][0](total) as Column;
          let at = 0;
          for (let i = 0; i < list.length; i++) {
            (whole as unknown as { set(a: Column, at: number): void }).set(list[i], at);
            const n = list[i].length;
            list[i] = whole.subarray(at, at + n) as Column;
            at += n;
          }
        }
        Object.defineProperty(out, key, { value: whole, enumerable: true, configurable: false, writable: false });
        return whole;
      },
    });
  }
  return out as unknown as T;
}

/** `src + delta` for each entry (row indices, or offsets into the byte store). */
function moved(src: Uint32Array, delta: number): Uint32Array {
  const out = new Uint32Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = src[i] + delta;
  return out;
}

/** The logfile header struct with its time zone and names, their addresses relative to the copy. */
export function logfileCopy(data: TraceData): Uint8Array {
  const src = data.bytes;
  const lh = new DataView(src.buffer, src.byteOffset + data.logfileOffset, C.LH_SIZE);
  const u32 = (o: number) => lh.getUint32(o, true);
  const tz = u32(C.LH_TIME_ZONE);
  const names = [[C.LH_LOGGER_NAME, C.LH_LOGGER_NAME_CHARS], [C.LH_LOG_FILE_NAME, C.LH_LOG_FILE_NAME_CHARS]] as const;
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
    v.setUint32(addr, n ? at : 0, true);
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
  private readonly store: ByteStore;
  private readonly events: Record<string, Column[]> = {};
  private readonly ext: Record<string, Column[]> = {};
  private readonly buffers: Uint8Array[] = [];
  private readonly warnings: Uint8Array[] = [];
  private readonly clr: { count: number; block: Uint8Array }[][] = [];
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

  /**
   * `sizeHint`: the input's size when known (the record bytes of an uncompressed trace take about as
   * much). With `rows` false only the trace's outline is kept (buffers, warnings, event types and
   * their counts, providers, logfile header), not the rows, their bytes or the typed tables: the
   * built trace then counts its rows in eventCount but has no columns.
   */
  /** Record bytes held in the store ("keep"), or not: "drop", or "source" (read back from the input; offsets relative to each buffer's record area). */
  private readonly keepRecords: boolean;

  constructor(sizeHint?: number, private readonly keepRows = true, private readonly records: RecordsMode = keepRows ? "keep" : "drop") {
    const keepRecords = (this.keepRecords = records === "keep");
    // (with room for the structs: buffers take 64 bytes per buffer of 64 KiB or more)
    const hint = keepRecords && sizeHint !== undefined ? Math.min(sizeHint + sizeHint / 512 + (2 << 20), 0xffff_fff8) : 1 << 20;
    this.store = new ByteStore(keepRecords ? hint : 1 << 16);
    for (const k of Object.keys(EVENT_COLUMN_LAYOUT)) this.events[k] = [];
    for (const k of Object.keys(EXT_COLUMN_LAYOUT)) this.ext[k] = [];
  }

  /** Takes a window's tables (views into the core's memory) as JS-owned copies. False when they do not fit. */
  add(w: Window): boolean {
    if (this.full) return false;
    const { data } = w;
    const at = this.keepRecords ? this.store.append(data.bytes.subarray(w.arena, w.arena + w.arenaUsed)) : w.arena;
    if (at < 0) {
      this.full = true;
      return false;
    }
    const delta = at - w.arena;
    // (the core keeps one logfile header struct for the whole trace: the first window's is every window's)
    if (!this.logfile) {
      this.logfile = logfileCopy(data);
    }
    if (this.keepRows) {
      const e = data.events;
      const relative = this.records === "source" ? areaRelative(data) : undefined;
      for (const k of Object.keys(EVENT_COLUMN_LAYOUT) as (keyof EventColumns)[]) {
        const offsets = () => relative?.payloadOffset ?? (this.keepRecords ? moved(e.payloadOffset, delta) : new Uint32Array(data.eventCount));
        this.events[k].push(k === "payloadOffset" ? offsets() : e[k].slice());
      }
      // (extended items are record bytes)
      if (this.records !== "drop") {
        const x = data.ext;
        this.ext.row.push(moved(x.row, this.rows));
        this.ext.type.push(x.type.slice());
        this.ext.size.push(x.size.slice());
        this.ext.offset.push(relative?.extOffset ?? moved(x.offset, delta));
        this.extRows += data.extCount;
      }
    }
    // buffers: rows and record bytes where they now are
    const bufs = data.bytes.slice(data.buffersOffset, data.buffersOffset + data.bufferCount * C.BUF_STRIDE);
    const bv = new DataView(bufs.buffer);
    for (let b = 0; b < data.bufferCount; b++) {
      const o = b * C.BUF_STRIDE;
      bv.setUint32(o + C.B_FIRST_ROW, bv.getUint32(o + C.B_FIRST_ROW, true) + this.rows, true);
      const addr = bv.getUint32(o + C.B_DATA, true);
      if (addr) bv.setUint32(o + C.B_DATA, this.keepRecords ? addr + delta : 0, true);
    }
    this.buffers.push(bufs);
    const own = w.warnings;
    this.warnings.push(data.bytes.slice(own.offset, own.offset + own.count * C.WARN_STRIDE));
    this.warningsTaken += own.count;
    // event types: this window's row counts
    if (this.typeRows.length < data.typeCount) {
      const next = new Float64Array(data.typeCount);
      next.set(this.typeRows);
      this.typeRows = next;
    }
    const tv = new DataView(data.bytes.buffer, data.bytes.byteOffset + data.typesOffset, data.typeCount * C.TYPE_STRIDE);
    for (let t = 0; t < data.typeCount; t++) this.typeRows[t] += tv.getUint32(t * C.TYPE_STRIDE + C.TYPE_ROWS, true);
    // typed tables: rows over the whole trace, references into the store
    if (data.clr && this.keepRows) {
      for (let t = 0; t < data.clr.counts.length; t++) {
        const count = data.clr.counts[t];
        const src = data.clr.blocks[t];
        if (!count || !src) continue;
        const block = src.slice();
        moveBlock(block, t, count, this.rows, delta, !this.keepRecords);
        (this.clr[t] ??= []).push({ count, block });
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
    const store = this.store;
    const place = (src: Uint8Array) => {
      const at = store.append(src);
      if (at < 0) throw new RangeError("etw-wasm: the decoded trace passes 4 GiB of record bytes");
      return at;
    };
    const buffersOffset = place(concatBytes(this.buffers));
    // warnings after the last window taken (the stop that ended decoding, trailing bytes)
    if (last && last.warningCount > this.warningsTaken) {
      this.warnings.push(last.bytes.slice(last.warningsOffset + this.warningsTaken * C.WARN_STRIDE, last.warningsOffset + last.warningCount * C.WARN_STRIDE));
      this.warningsTaken = last.warningCount;
    }
    const warnings = concatBytes(this.warnings);
    const warningsOffset = place(warnings);
    let providerCount = 0, typeCount = 0, providersOffset = 0, typesOffset = 0, warningTotal = warnings.length / C.WARN_STRIDE;
    if (last) {
      providerCount = last.providerCount;
      providersOffset = place(last.bytes.subarray(last.providersOffset, last.providersOffset + providerCount * C.PROV_STRIDE));
      typeCount = last.typeCount;
      const types = last.bytes.slice(last.typesOffset, last.typesOffset + typeCount * C.TYPE_STRIDE);
      const tv = new DataView(types.buffer);
      for (let t = 0; t < typeCount; t++) tv.setUint32(t * C.TYPE_STRIDE + C.TYPE_ROWS, this.typeRows[t] ?? 0, true);
      typesOffset = place(types);
      warningTotal = Math.max(warningTotal, last.warningTotal);
      if (!this.logfile) {
        this.logfile = logfileCopy(last);
      }
    }
    const logfile = this.logfile ?? new Uint8Array(C.LH_SIZE);
    const logfileOffset = place(logfile);
    rebaseLogfile(store.bytes, logfileOffset);
    let clr: TraceData["clr"];
    if (this.clr.length) {
      const { layouts } = clrProgram();
      const counts = new Uint32Array(layouts.length);
      const blocks: (Uint8Array | null)[] = new Array(layouts.length).fill(null);
      for (let t = 0; t < layouts.length; t++) {
        const parts = this.clr[t];
        if (!parts?.length) continue;
        counts[t] = parts.reduce((n, p) => n + p.count, 0);
        blocks[t] = joinBlocks(t, parts);
      }
      clr = { counts, blocks };
    }
    return {
      bytes: store.bytes.subarray(0, store.length),
      // (without rows, the count alone)
      eventCount: this.rows,
      events: chunkedColumns<EventColumns>(this.events, EVENT_COLUMN_LAYOUT, this.keepRows ? this.rows : 0),
      extCount: this.extRows,
      ext: chunkedColumns<ExtendedItemColumns>(this.ext, EXT_COLUMN_LAYOUT, this.extRows),
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
    const base = new DataView(data.bytes.buffer, data.bytes.byteOffset + data.buffersOffset + b * C.BUF_STRIDE, C.BUF_STRIDE).getUint32(C.B_DATA, true);
    const end = info.firstRow + info.rowCount;
    for (let r = info.firstRow; r < end; r++) payloadOffset[r] = events.payloadOffset[r] - base;
    while (e < data.extCount && ext.row[e] < info.firstRow) e++;
    for (; e < data.extCount && ext.row[e] < end; e++) extOffset[e] = ext.offset[e] - base;
  }
  return { payloadOffset, extOffset };
}
