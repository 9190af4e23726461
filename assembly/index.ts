// etw-wasm core: the exports the bindings call. One instance decodes one trace, a window of buffers
// at a time: the bindings take each window's tables, then resetWindow() reuses their memory.

import * as tables from "./tables";
import * as buffers from "./buffers";
import * as providers from "./providers";
import { logfileHeader } from "./logfile";
import {
  LH_SIZE, DIR_SLOTS, DIR_ROW_COUNT, DIR_TIMESTAMP, DIR_KEYWORDS, DIR_PID, DIR_TID, DIR_PAYLOAD_OFFSET,
  DIR_PAYLOAD_LENGTH, DIR_HEADER_LENGTH, DIR_PROVIDER, DIR_EVENT_ID, DIR_TASK, DIR_FLAGS, DIR_PROCESSOR, DIR_VERSION,
  DIR_OPCODE, DIR_LEVEL, DIR_HEADER_TYPE, DIR_CHANNEL, DIR_EXT_COUNT, DIR_EXT_ROW, DIR_EXT_TYPE, DIR_EXT_SIZE,
  DIR_EXT_OFFSET, DIR_BUF_COUNT, DIR_BUF_TABLE, DIR_WARN_COUNT, DIR_WARN_TOTAL, DIR_WARN_TABLE, DIR_PROV_COUNT,
  DIR_PROV_TABLE, DIR_LOGFILE, DIR_EVENT_TYPE, DIR_TYPE_COUNT, DIR_TYPE_TABLE, DIR_ARENA, DIR_ARENA_USED,
  DIR_BUF_BASE, LH_NUMBER_OF_PROCESSORS, LH_LOG_FILE_MODE,
} from "./codes";
import * as eventtypes from "./eventtypes";
import { xpressDecompress, xpressProduced } from "./xpress";
import { walkEventBlock } from "./nettrace-events";

export { consume, growStaging } from "./buffers";
export { decodeClr } from "./clr";

/**
 * Prepares an empty trace with a staging area of `stagingBytes` and windows of `windowBytes` of
 * record data (whose arena block starts at `firstBytes`, 0: ARENA_START), in a memory whose maximum
 * is `memoryPages` (0: MEMORY_MAX_PAGES); allocation stops short of it.
 */
export function init(stagingBytes: u32, memoryPages: u32, windowBytes: u32, firstBytes: u32): void {
  tables.setMemoryPages(memoryPages);
  tables.setArenaSize(windowBytes, firstBytes);
  // The memory may be reused from an earlier trace: clear what is read before it is written.
  memory.fill(logfileHeader, 0, LH_SIZE);
  tables.reserveWarnings();
  tables.clearFilter();
  providers.initProviders();
  buffers.resetBuffers(stagingBytes);
}

/**
 * Continues a trace that another core began (parallel decoding): the input that follows starts at
 * a buffer boundary after the trace's first `bufferCount` buffers, whose first (the logfile
 * header's buffer) gave `processors` (NumberOfProcessors), `logFileMode` and the compression
 * format. After init, before the first consume.
 */
export function resumeAt(bufferCount: u32, processors: u32, logFileMode: u32, compressionFormat: u32): void {
  tables.resumeAt(bufferCount);
  store<u32>(logfileHeader + LH_NUMBER_OF_PROCESSORS, processors);
  store<u32>(logfileHeader + LH_LOG_FILE_MODE, logFileMode);
  buffers.setCompression(compressionFormat);
}

/** The compression format buffer 0 named (COMPRESSION_*), for resumeAt. */
export function compressionFormat(): u32 {
  return buffers.compression();
}

/** Address of the FILTER_BYTES filter block (codes.ts FILTER_*), for the driver to write after init. */
export function filterPtr(): usize {
  return tables.filterBlock;
}

/** Puts the filter written at filterPtr() in force; before the first consume. */
export function setFilter(): void {
  tables.setFilter();
}

export function stagingPtr(): usize {
  return buffers.staging;
}

export function stagingCap(): u32 {
  return buffers.stagingCap;
}

export function wantBytes(): u32 {
  return buffers.wantBytes;
}

export function isDone(): bool {
  return buffers.done;
}

export function fatalCode(): u32 {
  return buffers.fatalCode;
}

export function fatalOffset(): f64 {
  return buffers.fatalOffset;
}

/** Whether the last consume stopped at a buffer that belongs to the next window. */
export function windowFull(): bool {
  return tables.windowFull;
}

/**
 * Starts the next window: the event, extended-item and buffer tables, the arena and the event types'
 * row counts start again from zero. Providers, event types, warnings and the logfile header persist.
 */
export function resetWindow(): void {
  tables.resetWindow();
  eventtypes.clearRowCounts();
}

/** Releases the staging area once the input is consumed. */
export function finish(): void {
  if (buffers.staging != 0) {
    tables.release(buffers.staging);
    buffers.staging = 0;
    buffers.stagingCap = 0;
  }
}

// The table directory: DIR_SLOTS u32 slots that `directory()` fills for the bindings.
const DIR: usize = memory.data(4 * DIR_SLOTS);

@inline function slot(index: i32, value: usize): void {
  store<u32>(DIR + (<usize>index << 2), <u32>value);
}

/** Addresses and counts of every output table, at the DIR_* slots (assembly/codes.ts). Allocates nothing. */
export function directory(): usize {
  slot(DIR_ROW_COUNT, tables.rowCount);
  slot(DIR_TIMESTAMP, tables.colTimestamp);
  slot(DIR_KEYWORDS, tables.colKeywords);
  slot(DIR_PID, tables.colPid);
  slot(DIR_TID, tables.colTid);
  slot(DIR_PAYLOAD_OFFSET, tables.colPayloadOffset);
  slot(DIR_PAYLOAD_LENGTH, tables.colPayloadLength);
  slot(DIR_HEADER_LENGTH, tables.colHeaderLength);
  slot(DIR_PROVIDER, tables.colProvider);
  slot(DIR_EVENT_ID, tables.colEventId);
  slot(DIR_TASK, tables.colTask);
  slot(DIR_FLAGS, tables.colFlags);
  slot(DIR_PROCESSOR, tables.colProcessor);
  slot(DIR_VERSION, tables.colVersion);
  slot(DIR_OPCODE, tables.colOpcode);
  slot(DIR_LEVEL, tables.colLevel);
  slot(DIR_HEADER_TYPE, tables.colHeaderType);
  slot(DIR_CHANNEL, tables.colChannel);
  slot(DIR_EXT_COUNT, tables.extCount);
  slot(DIR_EXT_ROW, tables.colExtRow);
  slot(DIR_EXT_TYPE, tables.colExtType);
  slot(DIR_EXT_SIZE, tables.colExtSize);
  slot(DIR_EXT_OFFSET, tables.colExtOffset);
  slot(DIR_BUF_COUNT, tables.bufCount);
  slot(DIR_BUF_TABLE, tables.bufTable);
  slot(DIR_WARN_COUNT, tables.warnCount);
  slot(DIR_WARN_TOTAL, tables.warnTotal);
  slot(DIR_WARN_TABLE, tables.warnTable);
  slot(DIR_PROV_COUNT, providers.provCount);
  slot(DIR_PROV_TABLE, providers.provTable);
  slot(DIR_LOGFILE, logfileHeader);
  slot(DIR_EVENT_TYPE, tables.colEventType);
  slot(DIR_TYPE_COUNT, eventtypes.typeCount);
  slot(DIR_TYPE_TABLE, eventtypes.typeTable);
  slot(DIR_ARENA, tables.arenaBlock());
  slot(DIR_ARENA_USED, tables.arenaInUse());
  slot(DIR_BUF_BASE, tables.bufBase);
  return DIR;
}

export function arenaBytes(): f64 {
  return tables.arenaBytes;
}

/** XPRESS decompression on its own, for tests and benchmarks: returns bytes produced, -1 if corrupt. */
export function decompress(src: usize, srcLen: u32, dst: usize, expected: u32): i32 {
  return xpressDecompress(0, src, srcLen, dst, expected) ? <i32>expected : -1 - <i32>xpressProduced;
}

/**
 * The records of one EventPipe Event/Metadata block staged at [start, end) as rows in the output block
 * `out` of `cap` rows (assembly/nettrace-events.ts walkEventBlock): returns the rows written.
 */
export function nettraceWalk(start: usize, end: usize, compressed: i32, v6: i32, resume: i32, out: usize, cap: u32, bias: u32): u32 {
  return walkEventBlock(0, start, end, compressed, v6, resume, out, cap, bias);
}

/** A block for the bindings, or 0 when memory is exhausted. */
export function alloc(size: usize): usize {
  return tables.allocate(size);
}

export function free(ptr: usize): void {
  tables.release(ptr);
}
