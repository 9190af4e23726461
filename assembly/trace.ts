// A trace's course through the core: its start, its continuation from another core's buffers, its
// windows, an early stop, and the directory of its tables the bindings read after each window. Both
// cores run this source (scripts/gen-core-twin.mjs); each index.ts wraps it in its exports.

import {
  LH_SIZE, DIR_ROW_COUNT, DIR_TIMESTAMP, DIR_KEYWORDS, DIR_PID, DIR_TID, DIR_PAYLOAD_OFFSET,
  DIR_PAYLOAD_LENGTH, DIR_HEADER_LENGTH, DIR_PROVIDER, DIR_EVENT_ID, DIR_TASK, DIR_FLAGS, DIR_PROCESSOR, DIR_VERSION,
  DIR_OPCODE, DIR_LEVEL, DIR_HEADER_TYPE, DIR_CHANNEL, DIR_EXT_COUNT, DIR_EXT_ROW, DIR_EXT_TYPE, DIR_EXT_SIZE,
  DIR_EXT_OFFSET, DIR_BUF_COUNT, DIR_BUF_TABLE, DIR_WARN_COUNT, DIR_WARN_TOTAL, DIR_WARN_TABLE, DIR_PROV_COUNT,
  DIR_PROV_TABLE, DIR_LOGFILE, DIR_EVENT_TYPE, DIR_TYPE_COUNT, DIR_TYPE_TABLE, DIR_ARENAS, DIR_ARENA_COUNT,
  DIR_BUF_BASE, DIR_CLR_DIR, DIR_CLR_ROWS, DIR_CLR_MISSING, DIR_RECORD_BYTES, LH_NUMBER_OF_PROCESSORS, LH_LOG_FILE_MODE,
  W_CAPACITY,
} from "./codes";
import { Mem, DIRECTORY_BLOCK, st32, fill, setMemoryPages } from "./memory-access";
import {
  setArenaSize, reserveWarnings, clearFilter, useFixedColumns, ensureRows, resetWindow, resumeAt, clrReset, warn, buffersSeen,
} from "./tables";
import { initProviders } from "./providers";
import { clearRowCounts } from "./eventtypes";
import { resetBuffers, setCompression } from "./buffers";
import { logfileHeader } from "./logfile";

/**
 * Prepares an empty trace decoded in windows of `windowBytes` of record data, in a memory whose
 * maximum is `memoryPages` (0: the most the core can address); allocation stops short of it. Room for
 * `rows` rows is taken up front (the tables grow past it when a window needs more). The state starts
 * from its initial values (the WebAssembly core's index.ts sets them first).
 */
export function beginTrace(m: Mem, memoryPages: u32, windowBytes: u32, rows: u32): void {
  setMemoryPages(m, memoryPages);
  setArenaSize(m, windowBytes);
  // The memory may be reused from an earlier trace: what is read before it is written is cleared.
  fill(m, logfileHeader, 0, LH_SIZE);
  reserveWarnings(m);
  clearFilter(m);
  initProviders(m);
  resetBuffers(m);
  // many rows: the fixed columns, where the memory allows (the record walk writes them fastest)
  if (rows >= 16384 && useFixedColumns(m)) return;
  if (rows > 0) ensureRows(m, rows);
}

/**
 * Continues a trace that another core began (parallel decoding): the input that follows starts at
 * a buffer boundary after the trace's first `bufferCount` buffers, whose first (the logfile
 * header's buffer) gave `processors` (NumberOfProcessors), `logFileMode` and the compression
 * format. After beginTrace, before the first consume.
 */
export function continueTrace(m: Mem, bufferCount: u32, processors: u32, logFileMode: u32, compressionFormat: u32): void {
  resumeAt(m, bufferCount);
  st32(m, logfileHeader + LH_NUMBER_OF_PROCESSORS, processors);
  st32(m, logfileHeader + LH_LOG_FILE_MODE, logFileMode);
  setCompression(m, compressionFormat);
}

/**
 * Starts the next window: the event, extended-item and buffer tables, the arena and the event types'
 * row counts start again from zero. Providers, event types, warnings and the logfile header persist.
 */
export function nextWindow(m: Mem): void {
  resetWindow(m);
  clrReset(m);
  clearRowCounts(m);
}

/**
 * Stops decoding at file offset `fileOffset`, where a buffer of `bytes` could not be staged for want of
 * memory: a W_CAPACITY warning says where (the driver's staging area could not grow to hold it).
 */
export function stopTrace(m: Mem, fileOffset: f64, bytes: u32): void {
  warn(m, W_CAPACITY, fileOffset, <i32>buffersSeen(m) - 1, -1, bytes);
  m.done = true;
}

function slot(m: Mem, index: u32, value: usize): void {
  st32(m, DIRECTORY_BLOCK + <usize>index * 4, <u32>value);
}

/**
 * Addresses and counts of every output table, at the DIR_* slots (codes.ts) of DIRECTORY_BLOCK, whose
 * address it returns; `clrOn`: whether the typed tables are on (clr.ts). Allocates nothing.
 */
export function directory(m: Mem, clrOn: bool): usize {
  slot(m, DIR_ROW_COUNT, m.rowCount);
  slot(m, DIR_TIMESTAMP, m.colTimestamp);
  slot(m, DIR_KEYWORDS, m.colKeywords);
  slot(m, DIR_PID, m.colPid);
  slot(m, DIR_TID, m.colTid);
  slot(m, DIR_PAYLOAD_OFFSET, m.colPayloadOffset);
  slot(m, DIR_PAYLOAD_LENGTH, m.colPayloadLength);
  slot(m, DIR_HEADER_LENGTH, m.colHeaderLength);
  slot(m, DIR_PROVIDER, m.colProvider);
  slot(m, DIR_EVENT_ID, m.colEventId);
  slot(m, DIR_TASK, m.colTask);
  slot(m, DIR_FLAGS, m.colFlags);
  slot(m, DIR_PROCESSOR, m.colProcessor);
  slot(m, DIR_VERSION, m.colVersion);
  slot(m, DIR_OPCODE, m.colOpcode);
  slot(m, DIR_LEVEL, m.colLevel);
  slot(m, DIR_HEADER_TYPE, m.colHeaderType);
  slot(m, DIR_CHANNEL, m.colChannel);
  slot(m, DIR_EXT_COUNT, m.extCount);
  slot(m, DIR_EXT_ROW, m.colExtRow);
  slot(m, DIR_EXT_TYPE, m.colExtType);
  slot(m, DIR_EXT_SIZE, m.colExtSize);
  slot(m, DIR_EXT_OFFSET, m.colExtOffset);
  slot(m, DIR_BUF_COUNT, m.bufCount);
  slot(m, DIR_BUF_TABLE, m.bufTable);
  slot(m, DIR_WARN_COUNT, m.warnCount);
  slot(m, DIR_WARN_TOTAL, m.warnTotal);
  slot(m, DIR_WARN_TABLE, m.warnTable);
  slot(m, DIR_PROV_COUNT, m.provCount);
  slot(m, DIR_PROV_TABLE, m.provTable);
  slot(m, DIR_LOGFILE, logfileHeader);
  slot(m, DIR_EVENT_TYPE, m.colEventType);
  slot(m, DIR_TYPE_COUNT, m.typeCount);
  slot(m, DIR_TYPE_TABLE, m.typeTable);
  slot(m, DIR_ARENAS, m.arenaList);
  slot(m, DIR_ARENA_COUNT, m.arenaInUse);
  slot(m, DIR_BUF_BASE, m.bufBase);
  slot(m, DIR_CLR_DIR, clrOn ? m.clrDir : 0);
  slot(m, DIR_CLR_ROWS, m.clrRows);
  slot(m, DIR_CLR_MISSING, m.clrMissing);
  slot(m, DIR_RECORD_BYTES, m.windowRecords);
  return DIRECTORY_BLOCK;
}
