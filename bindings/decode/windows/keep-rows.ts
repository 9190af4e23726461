// Some rows of a trace or batch as a trace of their own: their columns gathered, their typed .NET
// entries gathered, their records (with their extended items, and an EventPipe row's ActivityId)
// copied after one another, the type, provider and logfile structs copied. A time order over a
// stream's batches gives most of a batch's rows out while the batch is still the stream's, and holds
// only the rest past it: these, rather than a copy of the whole batch.

import * as C from "../../../assembly/codes.js";
import {
  align8,
  metaOf,
  withDecidedFields,
  STORED_EVENT_LAYOUT,
  TYPE_FIELDS,
  type EventColumns,
  type ExtendedItemColumns,
  type StoredEventColumns,
  type TraceData,
  type TypeField,
} from "../result/trace-data.js";
import { giveBack, takeBuffer } from "../result/reuse.js";
import { gatherBlock } from "../result/clr-blocks.js";
import { gatherElements } from "../result/gather.js";
import { clrProgram } from "../../schema/clr-program.js";
import { logfileCopy, rebaseLogfile } from "./builder.js";

type Stored = StoredEventColumns & Pick<EventColumns, "processor">;

/**
 * `rows` of `data` (distinct, in the order given: row i of the result is rows[i]) in memory of their
 * own. `bytesOf(row)`: the bytes the row's offsets index (EventTable.recordBytesOf), null when the
 * record bytes were dropped. `tableOf(row)`: the typed table (index of clrProgram().layouts) a row's
 * entry is in, -1 none; only the tables of the rows kept are looked through. The result has no
 * buffers, warnings or files: its rows carry their processor, and its time order is the order of
 * (timestamp, processor, row).
 */
export function keepRowsOf(data: TraceData, rows: Uint32Array, bytesOf: (row: number) => Uint8Array | null, tableOf: (row: number) => number): TraceData {
  const k = rows.length;
  const e = data.events;
  const owned: ArrayBuffer[] = [];
  const make: Make = (type) => {
    const buffer = takeBuffer(Math.max(8, k * type.BYTES_PER_ELEMENT));
    owned.push(buffer);
    return new type(buffer, 0, k);
  };
  const out = {} as Record<string, ArrayBufferView>;
  for (const key of Object.keys(STORED_EVENT_LAYOUT) as (keyof StoredEventColumns)[]) out[key] = gathered(e[key], rows, make);
  out.processor = gathered(e.processor, rows, make);
  const stored = out as unknown as Stored;

  // rows without an event type keep their type fields
  let untyped: Partial<Pick<EventColumns, TypeField>> | undefined;
  if (stored.eventType.includes(C.EVENT_TYPE_NONE)) {
    const u: Record<string, ArrayBufferView> = {};
    for (const field of TYPE_FIELDS) u[field] = gathered(e[field], rows, make);
    untyped = u as Partial<Pick<EventColumns, TypeField>>;
  }

  // the record bytes: each piece 8-aligned as it was (a payload's u16 and u32 views stay aligned), offset 0 kept for none
  const x = data.ext;
  const nt = data.nettrace;
  // (each kept row's extended items, [extFirst[i], extEnd[i]): found by halving, as rows are ascending in
  // data.ext.row; a pass over every row of the batch cost more than the copy when few are kept)
  let extFirst: Uint32Array | undefined;
  let extEnd: Uint32Array | undefined;
  let extCount = 0;
  if (data.extCount) {
    extFirst = new Uint32Array(k);
    extEnd = new Uint32Array(k);
    for (let i = 0; i < k; i++) {
      const first = lowerBound(x.row, data.extCount, rows[i]);
      let end = first;
      while (end < data.extCount && x.row[end] === rows[i]) end++;
      extFirst[i] = first;
      extEnd[i] = end;
      extCount += end - first;
    }
  }
  const po = e.payloadOffset,
    pl = e.payloadLength,
    hl = e.headerLength;
  let size = 8;
  for (let i = 0; i < k; i++) {
    const r = rows[i];
    if (po[r]) size += hl[r] + pl[r] + 15;
    if (extFirst && extEnd) for (let j = extFirst[i]; j < extEnd[i]; j++) size += x.size[j] + 15;
    if (nt && nt.activityOfRow[r]) size += 16 + 15;
  }
  const bytesBuffer = takeBuffer(size);
  owned.push(bytesBuffer);
  const bytes = new Uint8Array(bytesBuffer, 0, size);
  const words = new Uint32Array(bytesBuffer, 0, size >>> 2);
  let at = 8;
  let src32: Uint32Array | undefined;
  let srcOf: Uint8Array | undefined;
  /** Copies [from, to) of `src` to the next place of its alignment; where it went. */
  const place = (src: Uint8Array, from: number, to: number): number => {
    const start = align8(at) + (from & 7);
    at = start + (to - from);
    if (src !== srcOf) {
      srcOf = src;
      src32 = src.byteOffset & 3 ? undefined : new Uint32Array(src.buffer, src.byteOffset, src.length >>> 2);
    }
    if (src32) copyWords(src32, from, to, words, start);
    else for (let b = from, d = start; b < to; b++, d++) bytes[d] = src[b];
    return start;
  };
  const payloadOffset = stored.payloadOffset;
  const ext: ExtendedItemColumns = {
    row: new Uint32Array(extCount),
    type: new Uint16Array(extCount),
    size: new Uint16Array(extCount),
    offset: new Uint32Array(extCount),
  };
  const activityOfRow = nt ? new Uint32Array(k) : undefined;
  // where each record went: [lo, hi] moved by delta (references into it move alike)
  const lo = new Uint32Array(k),
    hi = new Uint32Array(k),
    delta = new Float64Array(k);
  let anyBytes = false;
  let xi = 0;
  for (let i = 0; i < k; i++) {
    const r = rows[i];
    const src = bytesOf(r);
    if (!src) {
      payloadOffset[i] = 0;
      continue;
    }
    anyBytes = true;
    const p = po[r];
    lo[i] = p - hl[r];
    hi[i] = p + pl[r];
    const moved = p ? place(src, lo[i], hi[i]) - lo[i] : 0;
    delta[i] = moved;
    payloadOffset[i] = p ? p + moved : 0;
    if (extFirst && extEnd)
      for (let j = extFirst[i]; j < extEnd[i]; j++, xi++) {
        const o = x.offset[j],
          n = x.size[j];
        ext.row[xi] = i;
        ext.type[xi] = x.type[j];
        ext.size[xi] = n;
        // (an item inside the record moves with it; one elsewhere, as an EventPipe row's stack, is copied)
        ext.offset[xi] = p && o >= lo[i] && o + n <= hi[i] ? o + moved : place(src, o, o + n);
      }
    if (nt && activityOfRow) {
      const a = nt.activityOfRow[r];
      activityOfRow[i] = !a ? 0 : p && a >= lo[i] && a + 16 <= hi[i] ? a + moved : place(src, a, a + 16);
    }
  }

  // the typed entries of the rows kept (the tables of one row of each event type, and of each row without one)
  let clr: TraceData["clr"];
  let clrRows = 0;
  if (data.clr) {
    const { layouts } = clrProgram();
    const { counts, blocks, caps } = data.clr;
    const wanted = new Uint8Array(counts.length);
    const seen = new Uint8Array(C.EVENT_TYPE_NONE + 1);
    for (let i = 0; i < k; i++) {
      const type = stored.eventType[i];
      if (seen[type]) continue;
      if (type !== C.EVENT_TYPE_NONE) seen[type] = 1;
      const t = tableOf(rows[i]);
      if (t >= 0 && t < wanted.length) wanted[t] = 1;
    }
    const placeOf = new Int32Array(data.eventCount).fill(-1);
    for (let i = 0; i < k; i++) placeOf[rows[i]] = i;
    clr = { counts: new Uint32Array(counts.length), blocks: new Array<Uint8Array | null>(counts.length).fill(null) };
    for (let t = 0; t < counts.length; t++) {
      const count = counts[t],
        block = blocks[t];
      if (!count || !block || !wanted[t]) continue;
      const cap = caps?.[t] ?? count;
      const rowOf = new Uint32Array(block.buffer, block.byteOffset + cap * layouts[t].preRow, count);
      const entries = new Uint32Array(count);
      let n = 0;
      for (let j = 0; j < count; j++) if (placeOf[rowOf[j]] >= 0) entries[n++] = j;
      if (!n) continue;
      // (in the order of the rows kept, as a table's entries are in its rows' order)
      const picked = entries.subarray(0, n).sort((a, b) => placeOf[rowOf[a]] - placeOf[rowOf[b]]);
      const g = gatherBlock(t, block, cap, picked);
      for (let j = 0; j < n; j++) g.rows[j] = placeOf[g.rows[j]];
      // (references into a record move with it)
      for (const ref of g.refs)
        for (let j = 0; j < n; j++) {
          const i = g.rows[j],
            a = ref[j];
          ref[j] = a && a >= lo[i] && a <= hi[i] ? a + delta[i] : 0;
        }
      clr.counts[t] = n;
      clr.blocks[t] = g.block;
      clrRows += n;
    }
  }

  // the structs: providers, event types (with the rows kept counted), logfile header
  const meta = metaOf(data);
  const providers = meta.subarray(data.providersOffset, data.providersOffset + data.providerCount * C.PROV_STRIDE);
  const types = meta.slice(data.typesOffset, data.typesOffset + data.typeCount * C.TYPE_STRIDE);
  const typeRows = new Uint32Array(data.typeCount);
  for (let i = 0; i < k; i++) if (stored.eventType[i] < typeRows.length) typeRows[stored.eventType[i]]++;
  const tv = new DataView(types.buffer);
  for (let t = 0; t < data.typeCount; t++) tv.setUint32(t * C.TYPE_STRIDE + C.TYPE_ROWS, typeRows[t], true);
  const logfile = logfileCopy(data);
  const providersOffset = 8,
    typesOffset = align8(providersOffset + providers.length),
    logfileOffset = align8(typesOffset + types.length);
  const ownMeta = new Uint8Array(align8(logfileOffset + logfile.length));
  ownMeta.set(providers, providersOffset);
  ownMeta.set(types, typesOffset);
  ownMeta.set(logfile, logfileOffset);
  rebaseLogfile(ownMeta, logfileOffset);

  const kept: TraceData = {
    release: () => giveBack(owned),
    bytes,
    meta: ownMeta,
    bareStacks: data.bareStacks,
    events: withDecidedFields(stored, k, () => kept, untyped),
    eventCount: k,
    untyped,
    ext,
    extCount,
    buffersOffset: 0,
    bufferCount: 0,
    warningsOffset: 0,
    warningCount: 0,
    warningTotal: 0,
    providersOffset,
    providerCount: data.providerCount,
    typesOffset,
    typeCount: data.typeCount,
    logfileOffset,
    clr,
    clrRows,
    arenaBytes: 0,
    recordBytes: anyBytes || data.recordBytes !== false ? undefined : false,
    inputBytes: data.inputBytes,
    decodedBytes: data.decodedBytes,
    incomplete: data.incomplete,
    decodeError: data.decodeError,
    nettrace: nt && {
      ...nt,
      metadataOfRow: Int32Array.from(rows, (r) => nt.metadataOfRow[r]),
      activityOfRow: activityOfRow!,
      warnings: [],
      payloadsCut: 0,
    },
  };
  return kept;
}

/** The first index of `sorted` (its first `n`) whose value is not below `v`. */
function lowerBound(sorted: Uint32Array, n: number, v: number): number {
  let lo = 0,
    hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

type Column = EventColumns[keyof EventColumns];
type Make = <T extends ArrayBufferView>(type: { new (b: ArrayBuffer, o: number, n: number): T; BYTES_PER_ELEMENT: number }) => T;

/** `from`'s values at `rows`, in a column of its type (made by `make`). */
function gathered(from: Column, rows: Uint32Array, make: Make): Column {
  const type = from.constructor as unknown as { new (b: ArrayBuffer, o: number, n: number): Column; BYTES_PER_ELEMENT: number };
  const to = make(type);
  gatherElements(type.BYTES_PER_ELEMENT, from.buffer, from.byteOffset, from.length, rows, to.buffer, to.byteOffset);
  return to;
}

/**
 * Bytes [from, to) of `src` (as its words) to `dst` from byte `start` (≡ from mod 4): whole words,
 * so the bytes before `from` and after `to` in their words come too. The place's words are its own:
 * a piece starts 8-aligned past the one before, and room is counted for the rounding.
 */
function copyWords(src: Uint32Array, from: number, to: number, dst: Uint32Array, start: number): void {
  const w = from >>> 2,
    end = (to + 3) >>> 2,
    d = (start >>> 2) - w;
  for (let i = w; i < end; i++) dst[d + i] = src[i];
}
