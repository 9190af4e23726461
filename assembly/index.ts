// etw-wasm core: the exports the bindings call. One instance decodes one trace.

import * as tables from "./tables";
import * as buffers from "./buffers";
import * as providers from "./providers";
import { logfileHeader } from "./logfile";
import { LH_SIZE } from "./codes";
import { xpressDecompress, xpressProduced } from "./xpress";

export { consume, growStaging } from "./buffers";
export { decodeClr } from "./clr";

/** Prepares an empty trace with a staging area of `stagingBytes`. */
export function init(stagingBytes: u32): void {
  // The memory may be reused from an earlier trace: clear what is read before it is written.
  memory.fill(logfileHeader, 0, LH_SIZE);
  providers.initProviders();
  buffers.resetBuffers(stagingBytes);
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

/** Releases the staging area once the input is consumed. */
export function finish(): void {
  if (buffers.staging != 0) {
    heap.free(buffers.staging);
    buffers.staging = 0;
    buffers.stagingCap = 0;
  }
}

// Layout of the table directory (u32 slots) that `directory()` fills for the bindings.
const DIR: usize = memory.data(4 * 40);

/** Addresses and counts of every output table, as u32 slots (order: bindings/wasm-engine.ts). Allocates nothing. */
export function directory(): usize {
  let i: usize = 0;
  store<u32>(DIR + (i++ << 2), tables.rowCount);
  store<u32>(DIR + (i++ << 2), <u32>tables.colTimestamp);
  store<u32>(DIR + (i++ << 2), <u32>tables.colKeywords);
  store<u32>(DIR + (i++ << 2), <u32>tables.colPid);
  store<u32>(DIR + (i++ << 2), <u32>tables.colTid);
  store<u32>(DIR + (i++ << 2), <u32>tables.colPayloadOffset);
  store<u32>(DIR + (i++ << 2), <u32>tables.colPayloadLength);
  store<u32>(DIR + (i++ << 2), <u32>tables.colHeaderLength);
  store<u32>(DIR + (i++ << 2), <u32>tables.colProvider);
  store<u32>(DIR + (i++ << 2), <u32>tables.colEventId);
  store<u32>(DIR + (i++ << 2), <u32>tables.colTask);
  store<u32>(DIR + (i++ << 2), <u32>tables.colFlags);
  store<u32>(DIR + (i++ << 2), <u32>tables.colProcessor);
  store<u32>(DIR + (i++ << 2), <u32>tables.colVersion);
  store<u32>(DIR + (i++ << 2), <u32>tables.colOpcode);
  store<u32>(DIR + (i++ << 2), <u32>tables.colLevel);
  store<u32>(DIR + (i++ << 2), <u32>tables.colHeaderType);
  store<u32>(DIR + (i++ << 2), <u32>tables.colChannel);
  store<u32>(DIR + (i++ << 2), tables.extCount);
  store<u32>(DIR + (i++ << 2), <u32>tables.colExtRow);
  store<u32>(DIR + (i++ << 2), <u32>tables.colExtType);
  store<u32>(DIR + (i++ << 2), <u32>tables.colExtSize);
  store<u32>(DIR + (i++ << 2), <u32>tables.colExtOffset);
  store<u32>(DIR + (i++ << 2), tables.bufCount);
  store<u32>(DIR + (i++ << 2), <u32>tables.bufTable);
  store<u32>(DIR + (i++ << 2), tables.warnCount);
  store<u32>(DIR + (i++ << 2), tables.warnTotal);
  store<u32>(DIR + (i++ << 2), <u32>tables.warnTable);
  store<u32>(DIR + (i++ << 2), providers.provCount);
  store<u32>(DIR + (i++ << 2), <u32>providers.provTable);
  store<u32>(DIR + (i++ << 2), <u32>logfileHeader);
  return DIR;
}

export function arenaBytes(): f64 {
  return tables.arenaBytes;
}

/** XPRESS decompression on its own, for tests and benchmarks: returns bytes produced, -1 if corrupt. */
export function decompress(src: usize, srcLen: u32, dst: usize, expected: u32): i32 {
  return xpressDecompress(src, srcLen, dst, expected) ? <i32>expected : -1 - <i32>xpressProduced;
}

export function alloc(size: usize): usize {
  return heap.alloc(size);
}

export function free(ptr: usize): void {
  heap.free(ptr);
}
