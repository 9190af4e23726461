// Pure TypeScript decoder core (engine: "js"): the WebAssembly core's algorithm and table layout
// over an ArrayBuffer standing in for linear memory. Its files mirror assembly/ file for file, with
// the same function names in the same order; the globals of the AssemblyScript modules are the
// fields of one CoreState per trace (state.ts), the runtime's heap is memory.ts. This file, like
// assembly/index.ts, holds the exports the bindings call.

import {
  LH_SIZE, DIR_ROW_COUNT, DIR_TIMESTAMP, DIR_KEYWORDS, DIR_PID, DIR_TID, DIR_PAYLOAD_OFFSET, DIR_PAYLOAD_LENGTH,
  DIR_HEADER_LENGTH, DIR_PROVIDER, DIR_EVENT_ID, DIR_TASK, DIR_FLAGS, DIR_PROCESSOR, DIR_VERSION, DIR_OPCODE,
  DIR_LEVEL, DIR_HEADER_TYPE, DIR_CHANNEL, DIR_EXT_COUNT, DIR_EXT_ROW, DIR_EXT_TYPE, DIR_EXT_SIZE, DIR_EXT_OFFSET,
  DIR_BUF_COUNT, DIR_BUF_TABLE, DIR_WARN_COUNT, DIR_WARN_TOTAL, DIR_WARN_TABLE, DIR_PROV_COUNT, DIR_PROV_TABLE,
  DIR_LOGFILE, DIR_EVENT_TYPE, DIR_TYPE_COUNT, DIR_TYPE_TABLE, DIR_ARENA, DIR_ARENA_USED, DIR_BUF_BASE, MAX_WARNINGS,
  WARN_STRIDE, LH_NUMBER_OF_PROCESSORS, LH_LOG_FILE_MODE,
} from "../../assembly/codes.js";
import { CoreState } from "./state.js";
import { HEAP_BASE, STATIC_DIR, STATIC_FILTER, reserveMemory, setMemoryPages } from "./memory.js";
import { allocate, clearFilter, release, resetWindow, resumeAt, setArenaSize, setFilter } from "./tables.js";
import { clearRowCounts } from "./eventtypes.js";
import { compression, consume, growStaging, resetBuffers, setCompression } from "./buffers.js";
import { initProviders } from "./providers.js";
import { logfileHeader } from "./logfile.js";
import { xpressDecompress, xpressProduced } from "./xpress.js";
import { decodeClr } from "./clr.js";

/** The decoder core's interface: the WebAssembly exports (assembly/index.ts), or this core. */
export interface CoreExports {
  /** Linear memory; `buffer` is replaced when it grows. */
  memory: { readonly buffer: ArrayBuffer };
  /**
   * Prepares an empty trace decoded in windows of `windowBytes` of record data, whose arena block
   * starts at `firstBytes` (0: ARENA_START). `memoryPages`: the memory's maximum in 64 KiB pages (the
   * WebAssembly memory must have been created with it); 0: MEMORY_MAX_PAGES.
   */
  init(stagingBytes: number, memoryPages: number, windowBytes: number, firstBytes: number): void;
  /** Whether the last consume stopped at a buffer that belongs to the next window. */
  windowFull(): number;
  /** Starts the next window (assembly/index.ts resetWindow). */
  resetWindow(): void;
  /**
   * Continues a trace another core began (assembly/index.ts resumeAt): the input that follows starts
   * after its first `bufferCount` buffers. After init, before the first consume.
   */
  resumeAt(bufferCount: number, processors: number, logFileMode: number, compressionFormat: number): void;
  /** The compression format buffer 0 named (COMPRESSION_*), for resumeAt. */
  compressionFormat(): number;
  /** Address of the FILTER_BYTES filter block (codes.ts FILTER_*), cleared by init, for the driver to write. */
  filterPtr(): number;
  /** Puts the filter written at filterPtr() in force; before the first consume. */
  setFilter(): void;
  stagingPtr(): number;
  stagingCap(): number;
  growStaging(cap: number, keep: number): void;
  consume(len: number, fileOffset: number, atEnd: number): number;
  wantBytes(): number;
  isDone(): number;
  fatalCode(): number;
  fatalOffset(): number;
  finish(): void;
  directory(): number;
  arenaBytes(): number;
  decompress(src: number, srcLen: number, dst: number, expected: number): number;
  decodeClr(program: number, typeStarts: number, nTypes: number, lookup: number, provClr: number, nProv: number, dir: number): number;
  /** A block of `size` bytes, or 0 when memory is exhausted. */
  alloc(size: number): number;
  free(ptr: number): void;
}

const DIR = STATIC_DIR;

/**
 * Prepares an empty trace with a staging area of `stagingBytes` and windows of `windowBytes` of
 * record data (whose arena block starts at `firstBytes`, 0: ARENA_START), in a memory that may grow
 * to `memoryPages` pages of 64 KiB (0: MEMORY_LIMIT); allocation stops short of it.
 */
function init(s: CoreState, stagingBytes: number, memoryPages: number, windowBytes: number, firstBytes: number): void {
  setMemoryPages(s, memoryPages);
  setArenaSize(s, windowBytes, firstBytes);
  // Room for the staging area, the arena and the tables of about that much input, where the
  // platform grants it (otherwise memory grows as needed).
  reserveMemory(s, Math.min(s.memoryLimit, HEAP_BASE + 4 * stagingBytes));
  s.u8.fill(0, logfileHeader, logfileHeader + LH_SIZE);
  // The warnings table up front (assembly/tables.ts reserveWarnings), so that a warning met when
  // memory is exhausted (W_CAPACITY above all) is kept, not only counted.
  if (s.warnTable === 0) s.warnTable = allocate(s, MAX_WARNINGS * WARN_STRIDE);
  clearFilter(s);
  initProviders(s);
  resetBuffers(s, stagingBytes);
}

/** Releases the staging area once the input is consumed. */
function finish(s: CoreState): void {
  if (s.staging !== 0) {
    release(s, s.staging);
    s.staging = 0;
    s.stagingCap = 0;
  }
}

/** Addresses and counts of every output table, at the DIR_* slots (assembly/codes.ts). Allocates nothing. */
function directory(s: CoreState): number {
  const d = DIR >>> 2;
  const U32 = s.u32;
  U32[d + DIR_ROW_COUNT] = s.rowCount;
  U32[d + DIR_TIMESTAMP] = s.colTimestamp;
  U32[d + DIR_KEYWORDS] = s.colKeywords;
  U32[d + DIR_PID] = s.colPid;
  U32[d + DIR_TID] = s.colTid;
  U32[d + DIR_PAYLOAD_OFFSET] = s.colPayloadOffset;
  U32[d + DIR_PAYLOAD_LENGTH] = s.colPayloadLength;
  U32[d + DIR_HEADER_LENGTH] = s.colHeaderLength;
  U32[d + DIR_PROVIDER] = s.colProvider;
  U32[d + DIR_EVENT_ID] = s.colEventId;
  U32[d + DIR_TASK] = s.colTask;
  U32[d + DIR_FLAGS] = s.colFlags;
  U32[d + DIR_PROCESSOR] = s.colProcessor;
  U32[d + DIR_VERSION] = s.colVersion;
  U32[d + DIR_OPCODE] = s.colOpcode;
  U32[d + DIR_LEVEL] = s.colLevel;
  U32[d + DIR_HEADER_TYPE] = s.colHeaderType;
  U32[d + DIR_CHANNEL] = s.colChannel;
  U32[d + DIR_EXT_COUNT] = s.extCount;
  U32[d + DIR_EXT_ROW] = s.colExtRow;
  U32[d + DIR_EXT_TYPE] = s.colExtType;
  U32[d + DIR_EXT_SIZE] = s.colExtSize;
  U32[d + DIR_EXT_OFFSET] = s.colExtOffset;
  U32[d + DIR_BUF_COUNT] = s.bufCount;
  U32[d + DIR_BUF_TABLE] = s.bufTable;
  U32[d + DIR_WARN_COUNT] = s.warnCount;
  U32[d + DIR_WARN_TOTAL] = s.warnTotal;
  U32[d + DIR_WARN_TABLE] = s.warnTable;
  U32[d + DIR_PROV_COUNT] = s.provCount;
  U32[d + DIR_PROV_TABLE] = s.provTable;
  U32[d + DIR_LOGFILE] = logfileHeader;
  U32[d + DIR_EVENT_TYPE] = s.colEventType;
  U32[d + DIR_TYPE_COUNT] = s.typeCount;
  U32[d + DIR_TYPE_TABLE] = s.typeTable;
  U32[d + DIR_ARENA] = s.arenaStart;
  U32[d + DIR_ARENA_USED] = s.arenaUsed;
  U32[d + DIR_BUF_BASE] = s.bufBase;
  return DIR;
}

/**
 * The exports over one trace's state. Every method is shared by every instance, and the functions
 * behind them take one state object of one shape, so optimized code carries over between traces.
 */
class JsCore implements CoreExports {
  private readonly s = new CoreState();
  readonly memory = this.s.memory;

  init(stagingBytes: number, memoryPages: number, windowBytes: number, firstBytes: number): void {
    init(this.s, stagingBytes, memoryPages, windowBytes, firstBytes);
  }

  windowFull(): number {
    return this.s.windowFull ? 1 : 0;
  }

  resetWindow(): void {
    resetWindow(this.s);
    clearRowCounts(this.s);
  }

  resumeAt(bufferCount: number, processors: number, logFileMode: number, compressionFormat: number): void {
    resumeAt(this.s, bufferCount);
    this.s.dv.setUint32(logfileHeader + LH_NUMBER_OF_PROCESSORS, processors, true);
    this.s.dv.setUint32(logfileHeader + LH_LOG_FILE_MODE, logFileMode, true);
    setCompression(this.s, compressionFormat);
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

  stagingPtr(): number {
    return this.s.staging;
  }

  stagingCap(): number {
    return this.s.stagingCap;
  }

  wantBytes(): number {
    return this.s.wantBytes;
  }

  isDone(): number {
    return this.s.done ? 1 : 0;
  }

  fatalCode(): number {
    return this.s.fatalCode;
  }

  fatalOffset(): number {
    return this.s.fatalOffset;
  }

  finish(): void {
    finish(this.s);
  }

  directory(): number {
    return directory(this.s);
  }

  arenaBytes(): number {
    return this.s.arenaBytes;
  }

  /** XPRESS decompression on its own, for tests and benchmarks: bytes produced, or -1 - bytes produced when corrupt. */
  decompress(src: number, srcLen: number, dst: number, expected: number): number {
    return xpressDecompress(this.s, src, srcLen, dst, expected) ? expected : -1 - xpressProduced;
  }

  alloc(size: number): number {
    return allocate(this.s, size);
  }

  free(ptr: number): void {
    release(this.s, ptr);
  }

  consume(len: number, fileOffset: number, atEnd: number): number {
    return consume(this.s, len, fileOffset, atEnd !== 0);
  }

  growStaging(cap: number, keep: number): void {
    growStaging(this.s, cap, keep);
  }

  decodeClr(program: number, typeStarts: number, nTypes: number, lookup: number, provClr: number, nProv: number, dir: number): number {
    return decodeClr(this.s, program, typeStarts, nTypes, lookup, provClr, nProv, dir);
  }
}

export function createJsCore(): CoreExports {
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error("etw-wasm: the js engine needs a little-endian platform");
  return new JsCore();
}
