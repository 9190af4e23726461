// Pure TypeScript decoder core (engine: "js"): the WebAssembly core's algorithm and table layout
// over an ArrayBuffer standing in for linear memory. Every module of the algorithm is generated from
// assembly/ (scripts/gen-core-twin.mjs SHARED: the tables, buffer and record walks, logfile header,
// providers, event types, typed .NET tables, a trace's course (trace.ts), XPRESS and the EventPipe walk),
// their state the shared struct of core-state.ts that CoreState (state.ts) extends; clr-fill.ts is
// generated from the schema (scripts/gen-clr-fill.mjs, a form per core). memory.ts is the runtime's heap,
// memory-access.ts this core's accessors. This file, like assembly/index.ts, holds the exports the
// bindings call, thin wrappers of the shared functions.

import { CoreState } from "./state.js";
import { beginTrace, continueTrace, nextWindow, stopTrace, directory } from "./generated/trace.js";
import { HEAP_BASE, STATIC_FILTER, reserveMemory, setMemoryPages } from "./memory.js";
import { FIXED_BYTES, allocate, release, setFilter } from "./generated/tables.js";
import { seedTypes } from "./generated/eventtypes.js";
import { compression, consume } from "./generated/buffers.js";
import { xpressDecompress, xpressProduced } from "./generated/xpress.js";
import { setClr } from "./generated/clr.js";
import { fillPlacedRows, fillRowsOf, placedReorder, typedBuckets } from "./generated/records.js";
import { CLR_FILL_FINGERPRINT, CLR_FILL_TYPES } from "./generated/clr-fill.js";

/** The decoder core's interface: the WebAssembly exports (assembly/index.ts), or this core. */
export interface CoreExports {
  /** Linear memory; `buffer` is replaced when it grows. */
  memory: { readonly buffer: ArrayBuffer };
  /**
   * Prepares an empty trace decoded in windows of `windowBytes` of record data, with room for `rows`
   * rows up front. `memoryPages`: the memory's maximum in 64 KiB pages (the WebAssembly memory must
   * have been created with it); 0: MEMORY_MAX_PAGES.
   */
  init(memoryPages: number, windowBytes: number, rows: number): void;
  /** Whether the last consume stopped at a buffer that belongs to the next window. */
  windowFull(): number;
  /** Starts the next window (assembly/index.ts resetWindow). */
  resetWindow(): void;
  /**
   * Continues a trace another core began (assembly/index.ts resumeAt): the input that follows starts
   * after its first `bufferCount` buffers. After init, before the first consume.
   */
  resumeAt(bufferCount: number, processors: number, logFileMode: number, compressionFormat: number): void;
  /** Numbers the trace's providers and event types known so far as the trace does (assembly/index.ts seedTables). */
  seedTables(provs: number, nProviders: number, types: number, nTypes: number): void;
  /** The compression format buffer 0 named (COMPRESSION_*), for resumeAt. */
  compressionFormat(): number;
  /** Address of the FILTER_BYTES filter block (codes.ts FILTER_*), cleared by init, for the driver to write. */
  filterPtr(): number;
  /** Puts the filter written at filterPtr() in force; before the first consume. */
  setFilter(): void;
  /**
   * Takes the whole buffers among `len` bytes staged at `staging` in the core's memory (file offset
   * `fileOffset`), walking their records where they lie; returns the length of what is left at the end.
   */
  consume(staging: number, len: number, fileOffset: number, atEnd: number): number;
  /** Turns the typed tables on (assembly/clr.ts setClr); 0 when the program is not the one the core was built for. */
  setClr(words: number, starts: number, nTypes: number, table: number, guids: number, nGuids: number, fingerprint: number): number;
  wantBytes(): number;
  /** Stops decoding where a buffer of `bytes` could not be staged for want of memory (a W_CAPACITY warning at `fileOffset`). */
  stopAt(fileOffset: number, bytes: number): void;
  isDone(): number;
  fatalCode(): number;
  fatalOffset(): number;
  directory(): number;
  arenaBytes(): number;
  decompress(src: number, srcLen: number, dst: number, expected: number): number;
  /**
   * The typed tables of `rows` rows placed by the caller (assembly/records.ts fillRowsOf): provClr (i8
   * per provider), then the provider, header type, event id, version, payload offset and length columns.
   */
  fillRowsOf(
    provClr: number,
    nProv: number,
    rows: number,
    provider: number,
    headerType: number,
    eventId: number,
    version: number,
    payloadOffset: number,
    payloadLength: number,
  ): number;
  /**
   * The typed tables of rows [first, first + rows) of an EventPipe reader's window columns, filled while
   * their block is staged (assembly/records.ts fillPlacedRows).
   */
  fillPlacedRows(
    cols: number,
    stride: number,
    first: number,
    rows: number,
    mdClr: number,
    nMd: number,
    bias: number,
    delta: number,
    headerType: number,
  ): number;
  /** Those rows put in a window's dispatch order (assembly/records.ts placedReorder); false when memory is exhausted. */
  placedReorder(cols: number, stride: number, n: number, order: number, mdClr: number, nMd: number): boolean | number;
  /** Adds `delta` (modulo 2^32) to the `count` u32s at `at`, in place (assembly/index.ts shiftU32). */
  shiftU32(at: number, count: number, delta: number): void;
  /** Moves the `count` u32 addresses at `at` in place: in [start, end] by `delta`, others to 0 (assembly/index.ts relocateU32). */
  relocateU32(at: number, count: number, start: number, end: number, delta: number): void;
  /** A block of `size` bytes, or 0 when memory is exhausted. */
  alloc(size: number): number;
  free(ptr: number): void;
}

/**
 * Prepares an empty trace decoded in windows of `windowBytes` of record data, in a memory that may
 * grow to `memoryPages` pages of 64 KiB (0: MEMORY_LIMIT); allocation stops short of it (trace.ts beginTrace).
 */
function init(s: CoreState, memoryPages: number, windowBytes: number, rows: number): void {
  setMemoryPages(s, memoryPages);
  // Room for the staging area, the tables and the typed tables of about that much input, and the fixed
  // columns when they will be taken, where the platform grants it (otherwise memory grows as needed,
  // each time copying what it holds: growing past the fixed block cost 100 ms of a 128 MiB decode).
  reserveMemory(s, Math.min(s.memoryLimit, HEAP_BASE + 3 * windowBytes + (rows >= 16384 ? FIXED_BYTES : 0)), true);
  beginTrace(s, memoryPages, windowBytes, rows);
}

/**
 * The exports over one trace's state. Every method is shared by every instance, and the functions
 * behind them take one state object of one shape, so optimized code carries over between traces.
 */
class JsCore implements CoreExports {
  private readonly s = new CoreState();
  readonly memory = this.s.memory;

  constructor(takeBuffer?: (bytes: number) => ArrayBuffer) {
    if (takeBuffer) this.s.takeBuffer = takeBuffer;
  }

  init(memoryPages: number, windowBytes: number, rows: number): void {
    init(this.s, memoryPages, windowBytes, rows);
  }

  windowFull(): number {
    return this.s.windowFull ? 1 : 0;
  }

  resetWindow(): void {
    nextWindow(this.s);
  }

  resumeAt(bufferCount: number, processors: number, logFileMode: number, compressionFormat: number): void {
    continueTrace(this.s, bufferCount, processors, logFileMode, compressionFormat);
  }

  seedTables(provs: number, nProviders: number, types: number, nTypes: number): void {
    seedTypes(this.s, provs, nProviders, types, nTypes);
  }

  compressionFormat(): number {
    return compression(this.s);
  }

  filterPtr(): number {
    return STATIC_FILTER;
  }

  setFilter(): void {
    setFilter(this.s);
  }

  wantBytes(): number {
    return this.s.wantBytes;
  }

  isDone(): number {
    return this.s.done ? 1 : 0;
  }

  stopAt(fileOffset: number, bytes: number): void {
    stopTrace(this.s, fileOffset, bytes);
  }

  fatalCode(): number {
    return this.s.fatalCode;
  }

  fatalOffset(): number {
    return this.s.fatalOffset;
  }

  directory(): number {
    return directory(this.s, this.s.clrOn);
  }

  arenaBytes(): number {
    return this.s.arenaBytes;
  }

  /** XPRESS decompression on its own, for tests and benchmarks: bytes produced, or -1 - bytes produced when corrupt. */
  decompress(src: number, srcLen: number, dst: number, expected: number): number {
    return xpressDecompress(this.s, src, srcLen, dst, expected) ? expected : -1 - xpressProduced;
  }

  fillRowsOf(
    provClr: number,
    nProv: number,
    rows: number,
    provider: number,
    headerType: number,
    eventId: number,
    version: number,
    payloadOffset: number,
    payloadLength: number,
  ): number {
    return fillRowsOf(this.s, provClr, nProv, rows, provider, headerType, eventId, version, payloadOffset, payloadLength);
  }

  fillPlacedRows(
    cols: number,
    stride: number,
    first: number,
    rows: number,
    mdClr: number,
    nMd: number,
    bias: number,
    delta: number,
    headerType: number,
  ): number {
    return fillPlacedRows(this.s, cols, stride, first, rows, mdClr, nMd, bias, delta, headerType);
  }

  placedReorder(cols: number, stride: number, n: number, order: number, mdClr: number, nMd: number): boolean {
    return placedReorder(this.s, cols, stride, n, order, mdClr, nMd);
  }

  shiftU32(at: number, count: number, delta: number): void {
    const d = delta | 0;
    const v = new Int32Array(this.memory.buffer, at, count);
    for (let i = 0; i < count; i++) v[i] = (v[i] + d) | 0;
  }

  relocateU32(at: number, count: number, start: number, end: number, delta: number): void {
    const v = new Uint32Array(this.memory.buffer, at, count);
    for (let i = 0; i < count; i++) {
      const a = v[i];
      v[i] = a !== 0 && a >= start && a <= end ? a + delta : 0;
    }
  }

  alloc(size: number): number {
    return allocate(this.s, size);
  }

  free(ptr: number): void {
    release(this.s, ptr);
  }

  consume(staging: number, len: number, fileOffset: number, atEnd: number): number {
    return consume(this.s, staging, len, fileOffset, atEnd !== 0);
  }

  setClr(words: number, starts: number, nTypes: number, table: number, guids: number, nGuids: number, fingerprint: number): number {
    if (nTypes !== CLR_FILL_TYPES || fingerprint !== CLR_FILL_FINGERPRINT) return 0;
    return typedBuckets(this.s, nTypes) && setClr(this.s, words, starts, nTypes, table, guids, nGuids) ? 1 : 0;
  }
}

/** The TypeScript core; `takeBuffer`: where its memory takes a larger buffer as it grows (CoreState.takeBuffer; default: fresh ones). */
export function createJsCore(takeBuffer?: (bytes: number) => ArrayBuffer): CoreExports {
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error("etw-wasm: the js engine needs a little-endian platform");
  return new JsCore(takeBuffer);
}
