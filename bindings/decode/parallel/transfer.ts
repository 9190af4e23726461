// Moving decoded tables between threads: every column, the byte store and the typed-table blocks
// travel as ArrayBuffers of their own, transferred, not copied, where they own their whole buffer
// (views into the core's memory are copied: a WebAssembly memory's buffer cannot be transferred).

import {
  align8,
  metaOf,
  untypedRows,
  EVENT_COLUMN_LAYOUT,
  EXT_COLUMN_LAYOUT,
  STORED_EVENT_LAYOUT,
  TYPE_FIELD_LAYOUT,
  type ColumnType,
  type EventColumns,
  type ExtendedItemColumns,
  type TraceData,
} from "../result/trace-data.js";
import { exactBlock, moveBlock, relocate, relocateAll } from "../result/clr-blocks.js";
import { logfileCopy, rebaseLogfile } from "../windows/builder.js";
import { stagedOnly, type Window } from "../windows/windows.js";
import * as C from "../../../assembly/codes.js";
import { clrProgram } from "../../schema/clr-program.js";
import { TraceDecodeError } from "../result/errors.js";
import { SharedSlots, type WindowBuffers } from "../workers/shared-slots.js";

export interface PackedTrace {
  bytes: Uint8Array;
  meta?: Uint8Array;
  events: EventColumns;
  ext: ExtendedItemColumns;
  clr?: TraceData["clr"];
  scalars: Omit<TraceData, "bytes" | "meta" | "events" | "untyped" | "ext" | "clr" | "release" | "inCore" | "decodeError">;
  /** A decode that stopped early: its offset and message (an error's class does not survive postMessage). */
  decodeError?: { offset: number; message: string };
}

type View = ArrayBufferView & { slice(): View; length: number };

/** Packs decoded tables for postMessage, with the buffers to transfer. */
export function packTraceData(data: TraceData): { message: PackedTrace; transfer: ArrayBuffer[] } {
  const transfer = new Set<ArrayBuffer>();
  // a view that owns its whole buffer moves; any other is copied into one that does
  const own = <T extends ArrayBufferView>(v: T): T => {
    const buffer = v.buffer as ArrayBuffer;
    const whole =
      v.byteOffset === 0 &&
      v.byteLength === buffer.byteLength &&
      !transfer.has(buffer) &&
      !(typeof SharedArrayBuffer !== "undefined" && buffer instanceof SharedArrayBuffer);
    const out = whole ? v : ((v as unknown as View).slice() as unknown as T);
    transfer.add(out.buffer as ArrayBuffer);
    return out;
  };
  const columns = <T extends object>(cols: T): T => Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, own(v as ArrayBufferView)])) as T;
  const { bytes, meta, events, untyped: _u, ext, clr, release: _r, inCore: _i, decodeError, ...scalars } = data;
  const stopped = decodeError && { offset: decodeError.offset, message: decodeError.reason };
  const message: PackedTrace = {
    // (the byte store of a one-window trace is the core's memory, which cannot be transferred: copied)
    bytes: own(data.inCore ? bytes.slice() : bytes),
    meta: meta && own(meta),
    // (every column, the type fields made whole: the other side has no type table to make them from)
    events: columns(Object.fromEntries(Object.keys(EVENT_COLUMN_LAYOUT).map((k) => [k, events[k as keyof EventColumns]])) as unknown as EventColumns),
    ext: columns(ext),
    clr: clr && {
      counts: own(clr.counts),
      blocks: clr.blocks.map((b, t) => b && own(clr.caps && clr.caps[t] !== clr.counts[t] ? exactBlock(t, clr.counts[t], clr.caps[t], b) : b)),
    },
    scalars,
    decodeError: stopped,
  };
  return { message, transfer: [...transfer] };
}

/** Rebuilds the tables on the receiving side. */
export function unpackTraceData(m: PackedTrace): TraceData {
  const decodeError = m.decodeError && new TraceDecodeError(m.decodeError.offset, m.decodeError.message);
  return { ...m.scalars, bytes: m.bytes, meta: m.meta, events: m.events, ext: m.ext, clr: m.clr, decodeError };
}

/** Free ArrayBuffers to pack windows into, handed back once their windows were used. */
export class SparePool implements WindowBuffers {
  private readonly free: ArrayBuffer[] = [];
  /** `max` buffers kept; a fresh buffer is `slack` times the bytes asked for, from `allocate`. */
  constructor(
    private readonly max = 4,
    private readonly slack = 1.25,
    private readonly allocate = (bytes: number) => new ArrayBuffer(bytes),
  ) {}

  give(buffer: ArrayBuffer): void {
    if (this.free.length < this.max) this.free.push(buffer);
  }

  /** A buffer of at least `bytes` (a fresh one `slack` times longer, for the next window to fit too). */
  take(bytes: number): ArrayBuffer {
    const i = this.free.findIndex((b) => b.byteLength >= bytes);
    if (i >= 0) return this.free.splice(i, 1)[0];
    return this.allocate(align8(bytes * this.slack));
  }

  /** The buffers kept, let go of (for a pool that outlives this one). */
  drain(): ArrayBuffer[] {
    return this.free.splice(0);
  }
}

/**
 * A window's tables copied out of the core's memory into one ArrayBuffer of their own, ready to
 * transfer: the record bytes first (from offset 8, so that 0 keeps meaning "none"), then the
 * structs (buffers, the window's own warnings, providers, event types, logfile header), the columns
 * and the typed-table blocks; every offset into the record bytes moved by where they landed.
 */
export function packWindow(w: Window, pool?: WindowBuffers, recordsInInput = false): { window: Window; transfer: ArrayBuffer[] } {
  const d = w.data;
  // The caller holds the input: a window whose records all lie in the staged input (no arena blocks) is
  // sent without them, its addresses made file offsets.
  const inInput = recordsInInput && stagedOnly(w);
  const src = d.bytes;
  const meta = metaOf(d);
  const n = d.eventCount,
    nExt = d.extCount;
  // the logfile header with its time zone and names
  const logfile = logfileCopy(d);
  const structs = [
    d.bufferCount * C.BUF_STRIDE,
    w.warnings.count * C.WARN_STRIDE,
    d.providerCount * C.PROV_STRIDE,
    d.typeCount * C.TYPE_STRIDE,
    logfile.length,
  ];
  let total = 8 + (inInput ? 0 : w.records.reduce((a, [s, e]) => a + align8(e - s), 0)) + structs.reduce((a, b) => a + align8(b), 0);
  // the stored columns, and the type fields only where rows lack an event type (withDecidedFields makes the rest)
  const typeLayout = untypedRows(d) > 0 ? TYPE_FIELD_LAYOUT : undefined;
  for (const [Type] of [...Object.values(STORED_EVENT_LAYOUT), ...Object.values(typeLayout ?? {})]) {
    total += align8(n * (Type as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT);
  }
  for (const [Type] of Object.values(EXT_COLUMN_LAYOUT)) total += align8(nExt * (Type as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT);
  const { layouts } = clrProgram();
  if (d.clr) d.clr.counts.forEach((count, t) => (total += d.clr!.blocks[t] ? align8(count * layouts[t].rowBytes) : 0));
  // (a SharedArrayBuffer too, typed as the views' constructors take it)
  const buffer = (pool ? pool.take(total) : new ArrayBuffer(total)) as ArrayBuffer;
  const out = new Uint8Array(buffer);
  let at = 8;
  const put = (from: number, len: number) => place(meta.subarray(from, from + len));
  const place = (bytes: Uint8Array) => {
    const o = at;
    out.set(bytes, o);
    at = align8(o + bytes.length);
    return o;
  };
  // the record bytes, range by range, and where each went
  const moves = inInput
    ? [[w.records[0][0], w.records[0][1], w.recordsFileOffset - w.records[0][0]] as [number, number, number]]
    : w.records.map(([s, e]): [number, number, number] => [s, e, place(src.subarray(s, e)) - s]);
  const records = moves.map(([s, e, delta]): [number, number] => [s + delta, e + delta]);
  const buffersOffset = put(d.buffersOffset, d.bufferCount * C.BUF_STRIDE);
  const v = new DataView(buffer);
  for (let b = 0; b < d.bufferCount; b++) {
    const o = buffersOffset + b * C.BUF_STRIDE + C.B_DATA;
    const addr = v.getUint32(o, true);
    if (addr) v.setUint32(o, relocate(moves, addr), true);
  }
  const warningsOffset = put(w.warnings.offset, w.warnings.count * C.WARN_STRIDE);
  const providersOffset = put(d.providersOffset, d.providerCount * C.PROV_STRIDE);
  const typesOffset = put(d.typesOffset, d.typeCount * C.TYPE_STRIDE);
  const logfileOffset = place(logfile);
  rebaseLogfile(out, logfileOffset);
  const columns = <T extends object>(layout: Readonly<Record<string, readonly [ColumnType, number]>>, cols: T, rows: number, moved: string): T => {
    const result: Record<string, ArrayBufferView> = {};
    for (const [key, [Type]] of Object.entries(layout)) {
      const view = new Type(buffer, at, rows) as unknown as Uint32Array;
      const from = (cols as Record<string, Uint32Array>)[key];
      if (key === moved) relocateAll(moves, from.subarray(0, rows), view);
      else view.set(from);
      at = align8(at + view.byteLength);
      result[key] = view;
    }
    return result as T;
  };
  const events = columns(STORED_EVENT_LAYOUT, d.events, n, "payloadOffset") as EventColumns;
  const untyped = typeLayout && columns(typeLayout, d.untyped ?? d.events, n, "");
  const ext = columns(EXT_COLUMN_LAYOUT, d.ext, nExt, "offset");
  let clr: TraceData["clr"];
  if (d.clr) {
    const { counts, caps } = d.clr;
    const blocks = d.clr.blocks.map((b, t) => {
      if (!b) return null;
      const o = at;
      const block = exactBlock(t, counts[t], caps?.[t] ?? counts[t], b, out.subarray(o, o + counts[t] * layouts[t].rowBytes));
      at = align8(o + block.length);
      moveBlock(block, t, counts[t], 0, moves);
      return block;
    });
    clr = { counts: d.clr.counts.slice(), blocks };
  }
  const data: TraceData = {
    bytes: out,
    events,
    untyped,
    eventCount: n,
    ext,
    extCount: nExt,
    buffersOffset,
    bufferCount: d.bufferCount,
    warningsOffset,
    warningCount: w.warnings.count,
    warningTotal: w.warnings.total,
    providersOffset,
    providerCount: d.providerCount,
    typesOffset,
    typeCount: d.typeCount,
    logfileOffset,
    arenaBytes: d.arenaBytes,
    clr,
    clrRows: d.clrRows,
    inputBytes: 0,
    decodedBytes: 0,
  };
  const window: Window = {
    ...w,
    data,
    records,
    final: false,
    warnings: { offset: warningsOffset, count: w.warnings.count, total: w.warnings.total },
    ...(inInput ? { recordsInInput: true } : {}),
  };
  return { window, transfer: pool instanceof SharedSlots ? [] : [buffer] };
}
