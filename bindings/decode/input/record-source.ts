// Record bytes read back from the input on demand (`payloads: "source"`): the trace keeps, for each
// row, where its record lies inside its buffer's record area, and reads whole buffers back from
// the input when asked (`loadRecords`), re-decompressing compressed ones, into a small cache.

import { xpressDecompress } from "../../core/generated/xpress.js";
import { CoreState } from "../../core/state.js";
import { setBuffer } from "../../core/memory.js";
import { isByteSource, type ByteSource, type Input } from "./input.js";
import { RecordsNotLoadedError } from "../result/errors.js";
import { readBuffer, type RecordAreas, type TraceData } from "../result/trace-data.js";

/** Bytes `[position, position + length)` of the input (fewer at its end). */
type ReadAt = (position: number, length: number) => Promise<Uint8Array>;

/** Offset of the record area in a buffer (the buffer header's size). */
const HDR = 0x48;

/** The input read at any position, or null when it cannot be read again (a stream of chunks). */
export function rereadable(input: Input): { read: ReadAt; close(): Promise<void> } | null {
  if (input instanceof Uint8Array || input instanceof ArrayBuffer) {
    const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
    return { read: async (p, n) => bytes.subarray(p, p + n), close: async () => undefined };
  }
  if (typeof Blob !== "undefined" && input instanceof Blob) {
    return { read: async (p, n) => new Uint8Array(await input.slice(p, p + n).arrayBuffer()), close: async () => undefined };
  }
  if (isByteSource(input)) return { read: (p, n) => readFully(input, p, n), close: async () => input.close?.() };
  return null;
}

async function readFully(source: ByteSource, position: number, length: number): Promise<Uint8Array> {
  const into = new Uint8Array(Math.max(0, Math.min(length, source.byteLength - position)));
  let got = 0;
  while (got < into.length) {
    const n = await source.read(into.subarray(got), position + got);
    if (n <= 0) break;
    got += n;
  }
  return into.subarray(0, got);
}

/** Which rows to load: one row, a range `{ start, end }` (end exclusive), or row indices. */
export type RowSelection = number | { start: number; end: number } | ArrayLike<number> | Iterable<number>;

/**
 * The record areas of a trace's buffers, read back on demand. Rows index into their buffer's area:
 * a row's payloadOffset (and its extended items' offsets) are offsets inside that area.
 */
export class RecordSource implements RecordAreas {
  /** First row of each buffer that has rows, and that buffer's index; ascending. */
  private readonly firstRows: Float64Array;
  private readonly bufferIndex: Uint32Array;
  /** Loaded record areas by buffer index, in order of loading (oldest first, for eviction). */
  private readonly cache = new Map<number, Uint8Array>();
  private cached = 0;
  private closed = false;

  constructor(
    private readonly data: TraceData,
    private readonly source: { read: ReadAt; close(): Promise<void> },
    /** Bytes of record areas the cache holds across loads (one load may take more, for as long as it needs). */
    private readonly cacheBytes = 64 << 20,
  ) {
    const first: number[] = [];
    const index: number[] = [];
    for (let b = 0; b < data.bufferCount; b++) {
      const info = readBuffer(data, b);
      if (info.rowCount === 0) continue;
      first.push(info.firstRow);
      index.push(b);
    }
    this.firstRows = Float64Array.from(first);
    this.bufferIndex = Uint32Array.from(index);
  }

  /** The buffer a row's record is in. */
  bufferOf(row: number): number {
    const f = this.firstRows;
    let lo = 0,
      hi = f.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (f[mid] <= row) lo = mid + 1;
      else hi = mid;
    }
    return this.bufferIndex[Math.max(0, lo - 1)];
  }

  /** The loaded record area a row's offsets index into; throws RecordsNotLoadedError when not loaded. */
  areaOf(row: number): Uint8Array {
    const area = this.cache.get(this.bufferOf(row));
    if (!area) throw new RecordsNotLoadedError(row);
    return area;
  }

  /**
   * Reads the buffers of `rows` back from the input (adjacent uncompressed ones in one read). Rows
   * loaded stay readable until a later load needs their room in the cache.
   */
  async load(rows: RowSelection): Promise<void> {
    if (this.closed) throw new Error("etw-wasm: trace disposed");
    const wanted = new Set<number>();
    const add = (r: number) => {
      if (!(r >= 0 && r < this.data.eventCount)) throw new RangeError(`row ${r} out of range 0..${this.data.eventCount - 1}`);
      wanted.add(this.bufferOf(r));
    };
    if (typeof rows === "number") add(rows);
    else if ("start" in rows && "end" in rows && typeof rows.start === "number") {
      if (rows.end > rows.start) {
        add(rows.start);
        add(rows.end - 1);
        // every buffer in between has rows of the range
        const from = this.bufferOf(rows.start),
          to = this.bufferOf(rows.end - 1);
        for (let i = 0; i < this.bufferIndex.length; i++) if (this.bufferIndex[i] > from && this.bufferIndex[i] < to) wanted.add(this.bufferIndex[i]);
      }
    } else for (const r of Array.from(rows as ArrayLike<number>)) add(r);
    const missing = [...wanted].filter((b) => !this.cache.has(b)).sort((a, b) => a - b);
    let need = 0;
    for (const b of missing) need += readBuffer(this.data, b).dataLength;
    // room: the oldest areas not wanted now go first
    for (const [b, area] of this.cache) {
      if (this.cached + need <= this.cacheBytes) break;
      if (wanted.has(b)) continue;
      this.cache.delete(b);
      this.cached -= area.length;
    }
    let i = 0;
    while (i < missing.length) {
      const first = readBuffer(this.data, missing[i]);
      if (first.compressed) {
        this.put(missing[i++], await this.decompressed(first.fileOffset, first.bufferSize, first.dataLength));
        continue;
      }
      // a run of uncompressed buffers that follow one another in the file: one read
      let j = i + 1;
      let end = first.fileOffset + first.bufferSize;
      while (j < missing.length) {
        const next = readBuffer(this.data, missing[j]);
        if (next.compressed || next.fileOffset !== end || end - first.fileOffset > 16 << 20) break;
        end += next.bufferSize;
        j++;
      }
      const bytes = await this.source.read(first.fileOffset, end - first.fileOffset);
      for (; i < j; i++) {
        const info = readBuffer(this.data, missing[i]);
        const at = info.fileOffset - first.fileOffset + HDR;
        this.put(missing[i], this.checked(bytes.subarray(at, at + info.dataLength), info.dataLength, info.fileOffset));
      }
    }
  }

  private put(buffer: number, area: Uint8Array): void {
    this.cache.set(buffer, area);
    this.cached += area.length;
  }

  private checked(area: Uint8Array, length: number, offset: number): Uint8Array {
    if (area.length < length) throw new Error(`etw-wasm: the input changed: the buffer at byte offset ${offset} is no longer all there`);
    return area;
  }

  /** A compressed buffer's record area, decompressed again (as the decoder did: `expected` bytes). */
  private async decompressed(offset: number, size: number, expected: number): Promise<Uint8Array> {
    const raw = await this.source.read(offset, size);
    const srcLen = Math.max(0, raw.length - HDR);
    // (the TypeScript core's XPRESS decoder reads and writes one memory: input, then output)
    const work = new ArrayBuffer(Math.ceil((srcLen + expected) / 8) * 8);
    new Uint8Array(work).set(raw.subarray(HDR));
    const memory = new CoreState();
    setBuffer(memory, work);
    xpressDecompress(memory, 0, srcLen, srcLen, expected);
    return new Uint8Array(work, srcLen, expected);
  }

  /** Lets the input go (closes a file). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
    await this.source.close();
  }
}
