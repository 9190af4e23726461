// Several files of one session as one trace, as TraceEvent's MergeAll reads them (X.etl,
// X.kernel.etl, X.clrRundown.etl, ...): their rows file after file, one provider table and one
// event type table over all of them, timestamps on one clock, and each file's own header, rows,
// buffers and warnings still told apart (TraceData.files). The time order over the files is the
// tables' timeOrder(), which keeps each file's buffer streams apart.
//
// Clocks: the files of a session are written on one machine whose QPC all sessions share, so raw
// timestamps compare as they are (TraceEvent reads them so). A file whose header says otherwise (another
// clock type or frequency, or a start time its raw anchor does not fit within CLOCK_SLACK) is put on the
// session's clock through its own FILETIME conversion, and the merge says so in `clock`.

import * as C from "../../../assembly/codes.js";
import { clrProgram } from "../../schema/clr-program.js";
import { TraceDecodeError } from "../result/errors.js";
import {
  align8,
  metaOf,
  typeKeyOf,
  withStacksPlaced,
  EVENT_COLUMN_LAYOUT,
  EXT_COLUMN_LAYOUT,
  type ColumnType,
  type EventColumns,
  type ExtendedItemColumns,
  type FileClock,
  type SourceFile,
  type TraceData,
} from "../result/trace-data.js";
export type { FileClock } from "../result/trace-data.js";
import { logfileCopy, rebaseLogfile } from "../windows/builder.js";
import { exactBlock, joinBlocks, moveBlock, relocate, type Relocation } from "../result/clr-blocks.js";
import type { TraceIncomplete } from "../result/errors.js";

/** A file is taken to share the anchor's clock when its header's start time fits within this (FILETIME units: 5 s). */
const CLOCK_SLACK = 50_000_000n;

interface Header {
  startFiletime: bigint;
  anchor: bigint;
  clockType: number;
  /** Ticks per second as conversions use them. */
  frequency: bigint;
}

function headerOf(copy: Uint8Array): Header {
  const v = new DataView(copy.buffer, copy.byteOffset, C.LH_SIZE);
  const clockType = v.getUint32(C.LH_RESERVED_FLAGS, true);
  const perfFreq = v.getBigInt64(C.LH_PERF_FREQ, true);
  const mhz = v.getUint32(C.LH_CPU_SPEED, true);
  // (as TraceClock: system time ticks at 10^7, cycle counters at the CPU speed, else PerfFreq)
  const frequency = clockType === 2 ? 10_000_000n : clockType === 3 && mhz > 0 ? BigInt(mhz) * 1_000_000n : perfFreq > 0n ? perfFreq : 10_000_000n;
  return { startFiletime: v.getBigInt64(C.LH_START_TIME, true), anchor: v.getBigInt64(C.LH_HEADER_TIMESTAMP, true), clockType, frequency };
}

/** Raw `ts` of clock `from` as a raw timestamp of clock `to` (through FILETIME). */
function rebase(ts: bigint, from: Header, to: Header): bigint {
  const filetime = from.startFiletime + ((ts - from.anchor) * 10_000_000n) / from.frequency;
  return to.anchor + ((filetime - to.startFiletime) * to.frequency) / 10_000_000n;
}

/** One decoded file, or one window of it, to merge. */
export interface MergePart {
  file: number;
  data: TraceData;
  /**
   * Where the part's record bytes are in `data.bytes`: [start, end) ranges (default: all of it). A
   * window gives its own (Window.records): only those are copied, not the decoder's whole memory.
   */
  records?: readonly (readonly [number, number])[];
}

/**
 * Merges files into one trace, and keeps the provider and event type indices it hands out: a
 * stream's batches merged one at a time by one merger number their providers and types alike.
 */
export class SessionMerger {
  private readonly providerIndex = new Map<string, number>();
  private readonly providerStructs: Uint8Array[] = [];
  private readonly typeIndex = new Map<string, number>();
  private readonly typeStructs: Uint8Array[] = [];
  /** Each file's logfile header copy (logfileCopy), once seen. */
  private readonly headers: (Uint8Array | undefined)[];
  private readonly clocks: (FileClock | undefined)[];
  private anchorFile = -1;

  constructor(readonly names: readonly string[]) {
    this.headers = names.map(() => undefined);
    this.clocks = names.map(() => undefined);
  }

  /** Learns a file's header (from any of its data: a window, a trace). */
  learn(file: number, data: TraceData): void {
    this.headers[file] ??= logfileCopy(data);
  }

  /**
   * Picks the session clock, the file that started first among the headers learnt, once; and how
   * each file learnt since goes onto it. Called when every file known up front has been learnt.
   */
  settle(): void {
    if (this.anchorFile < 0) {
      let best = -1;
      for (let f = 0; f < this.headers.length; f++) {
        const h = this.headers[f];
        if (!h || !new DataView(h.buffer).getUint32(C.LH_PRESENT, true)) continue;
        if (best < 0 || headerOf(h).startFiletime < headerOf(this.headers[best]!).startFiletime) best = f;
      }
      if (best < 0) best = this.headers.findIndex((h) => h !== undefined);
      this.anchorFile = best;
    }
    const anchor = this.anchorHeader();
    for (let f = 0; f < this.headers.length; f++) {
      const h = this.headers[f];
      if (!h || this.clocks[f]) continue;
      if (f === this.anchorFile || !anchor) {
        this.clocks[f] = "anchor";
        continue;
      }
      const own = headerOf(h);
      const same = own.clockType === anchor.clockType && own.frequency === anchor.frequency;
      const predicted = anchor.startFiletime + ((own.anchor - anchor.anchor) * 10_000_000n) / anchor.frequency;
      const off = predicted - own.startFiletime;
      this.clocks[f] = same && off <= CLOCK_SLACK && off >= -CLOCK_SLACK ? "shared" : "rebased";
    }
  }

  private anchorHeader(): Header | undefined {
    const h = this.anchorFile >= 0 ? this.headers[this.anchorFile] : undefined;
    return h ? headerOf(h) : undefined;
  }

  /** A raw timestamp of `file` on the session clock. */
  onSessionClock(file: number, ts: bigint): bigint {
    const own = this.headers[file];
    const anchor = this.anchorHeader();
    return this.clocks[file] === "rebased" && own && anchor ? rebase(ts, headerOf(own), anchor) : ts;
  }

  /** How each file's timestamps were put on the session clock (undefined: no header seen yet). */
  clockOf(file: number): FileClock | undefined {
    return this.clocks[file];
  }

  private provider(bytes: Uint8Array, at: number): number {
    // identity: GUID, kernel group and kind (the filter byte follows the decode, not the provider)
    const key = Array.from(bytes.subarray(at, at + C.PROV_WANTED)).join(",");
    let i = this.providerIndex.get(key);
    if (i === undefined) {
      i = this.providerStructs.length;
      this.providerIndex.set(key, i);
      this.providerStructs.push(bytes.slice(at, at + C.PROV_STRIDE));
    } else if (bytes[at + C.PROV_WANTED]) this.providerStructs[i][C.PROV_WANTED] = 1;
    return i;
  }

  private type(provider: number, bytes: Uint8Array, at: number): number {
    const key = typeKeyOf(bytes, at, provider);
    let i = this.typeIndex.get(key);
    if (i === undefined) {
      if (this.typeStructs.length >= C.MAX_EVENT_TYPES) return C.EVENT_TYPE_NONE;
      i = this.typeStructs.length;
      this.typeIndex.set(key, i);
      const s = bytes.slice(at, at + C.TYPE_STRIDE);
      new DataView(s.buffer).setUint16(C.TYPE_PROVIDER, provider, true);
      this.typeStructs.push(s);
    }
    return i;
  }

  /**
   * The parts (in order: rows of each follow the previous part's) as one trace in memory of its
   * own. `inputBytes` and `decodedBytes` are summed; each file's incompleteness is kept on its
   * entry in `files` and the first one is the trace's.
   */
  merge(given: readonly MergePart[]): TraceData {
    // (an EventPipe part's stack items made ETW items after its bytes: the merge copies the bytes anyway)
    const parts = given.map((p) => (p.data.bareStacks ? { ...p, data: withStacksPlaced(p.data), records: undefined } : p));
    for (const p of parts) this.learn(p.file, p.data);
    this.settle();
    const anchor = this.anchorHeader();
    // provider and event type indices, each part's to the merger's (first: the struct tables' sizes)
    const typeRows: number[] = [];
    const maps = parts.map(({ data: d }) => {
      const providers = new Uint16Array(d.providerCount);
      const m = metaOf(d);
      for (let q = 0; q < d.providerCount; q++) providers[q] = this.provider(m, d.providersOffset + q * C.PROV_STRIDE);
      const types = new Uint16Array(d.typeCount);
      for (let t = 0; t < d.typeCount; t++) {
        const o = d.typesOffset + t * C.TYPE_STRIDE;
        const local = m[o + C.TYPE_PROVIDER] | (m[o + C.TYPE_PROVIDER + 1] << 8);
        const g = (types[t] = this.type(providers[local], m, o));
        if (g !== C.EVENT_TYPE_NONE) typeRows[g] = (typeRows[g] ?? 0) + new DataView(m.buffer, m.byteOffset + o).getUint32(C.TYPE_ROWS, true);
      }
      return { providers, types };
    });
    const rows = parts.reduce((n, p) => n + p.data.eventCount, 0);
    // (an outline, a TraceBuilder's without rows, counts its rows but has no columns)
    const keptRows = parts.reduce((n, p) => n + p.data.events.timestamp.length, 0);
    const extRows = parts.reduce((n, p) => n + p.data.extCount, 0);
    const bufferCount = parts.reduce((n, p) => n + p.data.bufferCount, 0);
    const warningCount = parts.reduce((n, p) => n + p.data.warningCount, 0);
    const keep = parts.every((p) => p.data.recordBytes !== false);
    const fileList = [...new Set(parts.map((p) => p.file))];

    // one byte store: each part's record bytes, then the structs (buffers, warnings, providers, types,
    // the session's header, each file's own header)
    const header = this.sessionHeader(parts);
    const sizes = [
      bufferCount * C.BUF_STRIDE,
      warningCount * C.WARN_STRIDE,
      this.providerStructs.length * C.PROV_STRIDE,
      this.typeStructs.length * C.TYPE_STRIDE,
      header.length,
      ...fileList.map((f) => this.headers[f]?.length ?? 0),
    ];
    let size = 8;
    // each part's ranges of record bytes, and where each goes
    const moves: Relocation[] = parts.map((p) =>
      (p.records ?? [[0, p.data.bytes.length]]).map(([start, end]): [number, number, number] => {
        const o = align8(size);
        size = o + (end - start);
        return [start, end, o - start];
      }),
    );
    const offsets = sizes.map((n) => {
      const o = align8(size);
      size = o + n;
      return o;
    });
    const [buffersOffset, warningsOffset, providersOffset, typesOffset] = offsets;
    const store = new Uint8Array(size);
    const bv = new DataView(store.buffer, buffersOffset);
    const wv = new DataView(store.buffer, warningsOffset);

    const events = {} as Record<string, ArrayBufferView & ArrayLike<unknown>>;
    for (const [k, [Type]] of Object.entries(EVENT_COLUMN_LAYOUT) as [keyof EventColumns, readonly [ColumnType, number]][]) events[k] = new Type(keptRows);
    const ext = {} as Record<string, ArrayBufferView & ArrayLike<unknown>>;
    for (const [k, [Type]] of Object.entries(EXT_COLUMN_LAYOUT) as [keyof ExtendedItemColumns, readonly [ColumnType, number]][]) ext[k] = new Type(extRows);
    const ev = events as unknown as EventColumns;
    const xv = ext as unknown as ExtendedItemColumns;

    const clrParts: { count: number; block: Uint8Array }[][] = [];
    const files: SourceFile[] = [];
    let row = 0,
      col = 0,
      extRow = 0,
      buffer = 0,
      warning = 0,
      clrRows = 0,
      warningTotal = 0,
      arenaBytes = 0,
      inputBytes = 0,
      decodedBytes = 0;
    let incomplete: TraceIncomplete | undefined;
    let decodeError: TraceDecodeError | undefined;

    parts.forEach((p, i) => {
      const d = p.data;
      const m = metaOf(d);
      const move = moves[i];
      for (const [start, end, delta] of move) store.set(d.bytes.subarray(start, end), start + delta);
      const n = d.eventCount;
      const kept = d.events.timestamp.length;
      const { providers, types } = maps[i];
      for (const k of Object.keys(EVENT_COLUMN_LAYOUT) as (keyof EventColumns)[])
        (ev[k] as unknown as { set(a: ArrayLike<unknown>, at: number): void }).set(d.events[k] as ArrayLike<unknown>, col);
      const clock = this.clocks[p.file] ?? "anchor";
      const own = this.headers[p.file];
      for (let r = col; r < col + kept; r++) {
        ev.provider[r] = providers[ev.provider[r]];
        const t = ev.eventType[r];
        if (t !== C.EVENT_TYPE_NONE) ev.eventType[r] = types[t];
        if (keep) ev.payloadOffset[r] = relocate(move, ev.payloadOffset[r]);
      }
      const rebased = clock === "rebased" && own && anchor ? headerOf(own) : undefined;
      if (rebased) for (let r = col; r < col + kept; r++) ev.timestamp[r] = rebase(ev.timestamp[r], rebased, anchor!);
      for (const k of Object.keys(EXT_COLUMN_LAYOUT) as (keyof ExtendedItemColumns)[])
        (xv[k] as unknown as { set(a: ArrayLike<unknown>, at: number): void }).set(d.ext[k] as ArrayLike<unknown>, extRow);
      for (let e = extRow; e < extRow + d.extCount; e++) {
        xv.row[e] += row;
        xv.offset[e] = relocate(move, xv.offset[e]);
      }
      // buffers and warnings: rows, buffers and record bytes where they now are
      store.set(m.subarray(d.buffersOffset, d.buffersOffset + d.bufferCount * C.BUF_STRIDE), buffersOffset + buffer * C.BUF_STRIDE);
      for (let b = buffer; b < buffer + d.bufferCount; b++) {
        const o = b * C.BUF_STRIDE;
        bv.setUint32(o + C.B_FIRST_ROW, bv.getUint32(o + C.B_FIRST_ROW, true) + row, true);
        const addr = bv.getUint32(o + C.B_DATA, true);
        if (addr) bv.setUint32(o + C.B_DATA, keep ? relocate(move, addr) : 0, true);
        if (rebased) bv.setBigInt64(o + C.B_TIMESTAMP, rebase(bv.getBigInt64(o + C.B_TIMESTAMP, true), rebased, anchor!), true);
      }
      store.set(m.subarray(d.warningsOffset, d.warningsOffset + d.warningCount * C.WARN_STRIDE), warningsOffset + warning * C.WARN_STRIDE);
      for (let w = warning; w < warning + d.warningCount; w++) {
        const o = w * C.WARN_STRIDE + C.WARN_BUFFER;
        const b = wv.getInt32(o, true);
        if (b >= 0) wv.setInt32(o, b + buffer, true);
      }
      // typed tables: rows and references moved with them
      if (d.clr) {
        for (let t = 0; t < d.clr.counts.length; t++) {
          const count = d.clr.counts[t];
          const src = d.clr.blocks[t];
          if (!count || !src) continue;
          const block = exactBlock(t, count, d.clr.caps?.[t] ?? count, src);
          moveBlock(block, t, count, row, keep ? move : null);
          (clrParts[t] ??= []).push({ count, block });
        }
      }
      const name = this.names[p.file];
      const fileIncomplete = d.incomplete && { ...d.incomplete, message: `${name}: ${d.incomplete.message}` };
      incomplete ??= fileIncomplete;
      decodeError ??= d.decodeError && new TraceDecodeError(d.decodeError.offset, `${name}: ${d.decodeError.reason}`, { cause: d.decodeError });
      files.push({
        name,
        firstRow: row,
        rowCount: n,
        firstBuffer: buffer,
        bufferCount: d.bufferCount,
        firstWarning: warning,
        warningCount: d.warningCount,
        logfileOffset: offsets[5 + fileList.indexOf(p.file)],
        inputBytes: d.inputBytes,
        decodedBytes: d.decodedBytes,
        clock,
        incomplete: d.incomplete,
        decodeError: d.decodeError,
      });
      row += n;
      col += kept;
      extRow += d.extCount;
      buffer += d.bufferCount;
      warning += d.warningCount;
      clrRows += d.clrRows;
      warningTotal += d.warningTotal;
      arenaBytes += d.arenaBytes;
      inputBytes += d.inputBytes;
      decodedBytes += d.decodedBytes;
    });

    // the merged structs
    this.providerStructs.forEach((ps, q) => store.set(ps, providersOffset + q * C.PROV_STRIDE));
    const tv = new DataView(store.buffer, typesOffset);
    this.typeStructs.forEach((ts, t) => {
      store.set(ts, typesOffset + t * C.TYPE_STRIDE);
      tv.setUint32(t * C.TYPE_STRIDE + C.TYPE_ROWS, typeRows[t] ?? 0, true);
    });
    const logfileOffset = offsets[4];
    store.set(header, logfileOffset);
    rebaseLogfile(store, logfileOffset);
    fileList.forEach((f, k) => {
      const h = this.headers[f];
      if (!h) return;
      store.set(h, offsets[5 + k]);
      rebaseLogfile(store, offsets[5 + k]);
    });

    let clr: TraceData["clr"];
    if (clrParts.length) {
      const { layouts } = clrProgram();
      const counts = new Uint32Array(layouts.length);
      const blocks: (Uint8Array | null)[] = new Array(layouts.length).fill(null);
      for (let t = 0; t < clrParts.length; t++) {
        const list = clrParts[t];
        if (!list?.length) continue;
        counts[t] = list.reduce((n, q) => n + q.count, 0);
        blocks[t] = joinBlocks(t, list);
      }
      clr = { counts, blocks };
    }
    return {
      bytes: store,
      events: ev,
      eventCount: rows,
      ext: xv,
      extCount: extRows,
      buffersOffset,
      bufferCount,
      warningsOffset,
      warningCount,
      warningTotal,
      providersOffset,
      providerCount: this.providerStructs.length,
      typesOffset,
      typeCount: this.typeStructs.length,
      logfileOffset,
      clr,
      clrRows,
      arenaBytes,
      inputBytes,
      decodedBytes,
      incomplete,
      decodeError,
      recordBytes: keep ? undefined : false,
      files,
    };
  }

  /**
   * The session's logfile header: the anchor file's, with what the files add up to: the end time
   * the last to end, buffers written, buffers and events lost summed, the most processors.
   */
  private sessionHeader(parts: readonly MergePart[]): Uint8Array {
    const first = this.anchorFile >= 0 ? this.headers[this.anchorFile] : undefined;
    const out = first ? first.slice() : new Uint8Array(C.LH_SIZE);
    const v = new DataView(out.buffer);
    let endTime = v.getBigInt64(C.LH_END_TIME, true);
    let written = 0,
      buffersLost = 0,
      eventsLost = 0,
      processors = 0;
    const seen = new Set<number>();
    for (const p of parts) {
      if (seen.has(p.file)) continue;
      seen.add(p.file);
      const h = this.headers[p.file];
      if (!h) continue;
      const hv = new DataView(h.buffer);
      const e = hv.getBigInt64(C.LH_END_TIME, true);
      if (e > endTime) endTime = e;
      written += hv.getUint32(C.LH_BUFFERS_WRITTEN, true);
      buffersLost += hv.getUint32(C.LH_BUFFERS_LOST, true);
      eventsLost += hv.getUint32(C.LH_EVENTS_LOST, true);
      processors = Math.max(processors, hv.getUint32(C.LH_NUMBER_OF_PROCESSORS, true));
    }
    if (!first) return out;
    v.setBigInt64(C.LH_END_TIME, endTime, true);
    v.setUint32(C.LH_BUFFERS_WRITTEN, written, true);
    v.setUint32(C.LH_BUFFERS_LOST, buffersLost, true);
    v.setUint32(C.LH_EVENTS_LOST, eventsLost, true);
    v.setUint32(C.LH_NUMBER_OF_PROCESSORS, processors, true);
    return out;
  }
}
