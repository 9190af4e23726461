// etw-wasm core: the exports the bindings call. One instance decodes one trace, a window of buffers
// at a time: the bindings take each window's tables, then resetWindow() reuses their memory.

import * as tables from "./tables";
import * as buffers from "./buffers";
import * as eventtypes from "./eventtypes";
import { xpressDecompress, xpressProduced } from "./xpress";
import { walkEventBlock } from "./nettrace-events";
import { dispatchOrder, eventRows, eventTypes } from "./nettrace-rows";
import * as records from "./records";
import * as clr from "./clr";
import { CLR_FILL_FINGERPRINT, CLR_FILL_TYPES } from "./clr-fill";
import { STATE, FILTER_BLOCK } from "./memory-access";
import { SharedState, resetState } from "./core-state";
import { beginTrace, continueTrace, nextWindow, stopTrace, directory as traceDirectory } from "./trace";

/** The typed tables of rows an EventPipe reader placed (records.ts fillRowsOf). */
export function fillRowsOf(
  provClr: usize, nProv: u32, rows: u32, provider: usize, headerType: usize, eventId: usize, version: usize,
  payloadOffset: usize, payloadLength: usize,
): u32 {
  return records.fillRowsOf(STATE, provClr, nProv, rows, provider, headerType, eventId, version, payloadOffset, payloadLength);
}

/** The typed tables of a staged EventPipe block's rows (records.ts fillPlacedRows). */
export function fillPlacedRows(cols: usize, stride: usize, first: u32, rows: u32, mdClr: usize, nMd: u32, bias: u32, delta: u32, headerType: u32): u32 {
  return records.fillPlacedRows(STATE, cols, stride, first, rows, mdClr, nMd, bias, delta, headerType);
}

/** Those typed rows in a window's dispatch order (records.ts placedReorder). */
export function placedReorder(cols: usize, stride: usize, n: u32, order: usize, mdClr: usize, nMd: u32): bool {
  return records.placedReorder(STATE, cols, stride, n, order, mdClr, nMd);
}

/**
 * Turns the typed tables on (clr.ts setClr) with the field program, lookup and CLR provider GUIDs the
 * bindings placed; false when the program's layouts are not those the fast paths of clr-fill.ts were
 * generated for (`fingerprint`), or memory is exhausted.
 */
export function setClr(words: usize, starts: usize, nTypes: u32, table: usize, guids: usize, nGuids: u32, fingerprint: u32): bool {
  if (nTypes != CLR_FILL_TYPES || fingerprint != CLR_FILL_FINGERPRINT) return false;
  return records.typedBuckets(STATE, nTypes) && clr.setClr(STATE, words, starts, nTypes, table, guids, nGuids);
}

/**
 * Prepares an empty trace decoded in windows of `windowBytes` of record data, in a memory whose
 * maximum is `memoryPages` (0: MEMORY_MAX_PAGES); allocation stops short of it. Room for `rows` rows
 * is taken up front (the tables grow past it when a window needs more).
 */
export function init(memoryPages: u32, windowBytes: u32, rows: u32): void {
  // The memory may be reused from an earlier trace: the state starts from its initial values.
  memory.fill(changetype<usize>(STATE), 0, offsetof<SharedState>());
  resetState(STATE);
  beginTrace(STATE, memoryPages, windowBytes, rows);
}

/**
 * Continues a trace that another core began (parallel decoding; trace.ts continueTrace). After init,
 * before the first consume.
 */
export function resumeAt(bufferCount: u32, processors: u32, logFileMode: u32, compressionFormat: u32): void {
  continueTrace(STATE, bufferCount, processors, logFileMode, compressionFormat);
}

/**
 * Numbers the trace's providers and event types known so far as the trace does (`nProviders`
 * PROV_STRIDE-byte structs at `provs`, `nTypes` TYPE_STRIDE-byte structs at `types`): parallel
 * decoding, after setClr, before the first consume.
 */
export function seedTables(provs: usize, nProviders: u32, types: usize, nTypes: u32): void {
  eventtypes.seedTypes(STATE, provs, nProviders, types, nTypes);
}

/** The compression format buffer 0 named (COMPRESSION_*), for resumeAt. */
export function compressionFormat(): u32 {
  return buffers.compression(STATE);
}

/** Address of the FILTER_BYTES filter block (codes.ts FILTER_*), for the driver to write after init. */
export function filterPtr(): usize {
  return FILTER_BLOCK;
}

/** Puts the filter written at filterPtr() in force; before the first consume. */
export function setFilter(): void {
  tables.setFilter(STATE);
}

/**
 * Takes the whole buffers among the `len` bytes staged at `staging` (file offset `fileOffset`), walking
 * their records where they lie; returns the length of what is left at the end (buffers.ts consume).
 */
export function consume(staging: usize, len: u32, fileOffset: f64, atEnd: bool): u32 {
  return buffers.consume(STATE, staging, len, fileOffset, atEnd);
}

export function wantBytes(): u32 {
  return STATE.wantBytes;
}

/** Stops decoding where a buffer could not be staged for want of memory (trace.ts stopTrace). */
export function stopAt(fileOffset: f64, bytes: u32): void {
  stopTrace(STATE, fileOffset, bytes);
}

export function isDone(): bool {
  return STATE.done;
}

export function fatalCode(): u32 {
  return STATE.fatalCode;
}

export function fatalOffset(): f64 {
  return STATE.fatalOffset;
}

/** Whether the last consume stopped at a buffer that belongs to the next window. */
export function windowFull(): bool {
  return STATE.windowFull;
}

/** Starts the next window (trace.ts nextWindow). */
export function resetWindow(): void {
  nextWindow(STATE);
}

/** Addresses and counts of every output table, at the DIR_* slots (codes.ts) of the block it returns. Allocates nothing. */
export function directory(): usize {
  return traceDirectory(STATE, STATE.clrOn);
}

export function arenaBytes(): f64 {
  return STATE.arenaBytes;
}

/** XPRESS decompression on its own, for tests and benchmarks: returns bytes produced, -1 if corrupt. */
export function decompress(src: usize, srcLen: u32, dst: usize, expected: u32): i32 {
  return xpressDecompress(STATE, src, srcLen, dst, expected) ? <i32>expected : -1 - <i32>xpressProduced;
}

/**
 * The records of one EventPipe Event/Metadata block staged at [start, end) as rows `first` on (up to
 * `cap`) of the columns at `cols`, `stride` bytes apart, its status at `out`
 * (assembly/nettrace-events.ts walkEventBlock): returns the rows written.
 */
export function nettraceWalk(
  start: usize, end: usize, compressed: i32, v6: i32, resume: i32, out: usize, cols: usize, stride: usize, first: u32, cap: u32, bias: u32, lk: usize,
): u32 {
  return walkEventBlock(STATE, start, end, compressed, v6, resume, out, cols, stride, first, cap, bias, lk);
}

/** An EventPipe file's events in TraceEvent's dispatch order (assembly/nettrace-rows.ts dispatchOrder; `p`: its NO_* block). */
export function nettraceOrder(p: usize): u32 {
  return dispatchOrder(STATE, p);
}

/** Event table rows of EventPipe events (assembly/nettrace-rows.ts eventRows; `p`: its NR_* block). */
export function nettraceRows(p: usize): void {
  eventRows(STATE, p);
}

/** The event types of nettraceRows' rows (assembly/nettrace-rows.ts eventTypes). */
export function nettraceTypes(p: usize): void {
  eventTypes(STATE, p);
}

/**
 * Adds `delta` (modulo 2^32) to the `count` u32s at `at`, in place: a window's addresses moved to
 * where its record bytes are kept, before its columns are copied out (bindings/decode/windows/builder.ts).
 */
export function shiftU32(at: usize, count: u32, delta: u32): void {
  let end = at + (<usize>count << 2);
  let d = i32x4.splat(delta);
  let p = at;
  for (; p + 16 <= end; p += 16) v128.store(p, i32x4.add(v128.load(p), d));
  for (; p < end; p += 4) store<u32>(p, load<u32>(p) + delta);
}

/**
 * Moves the `count` u32 addresses at `at` in place: one in [start, end] by `delta` (modulo 2^32), any
 * other to 0 (none; 0 stays 0). A window's references into its record bytes, moved to where those are kept.
 */
export function relocateU32(at: usize, count: u32, start: u32, end: u32, delta: u32): void {
  let stop = at + (<usize>count << 2);
  let d = i32x4.splat(delta), lo = i32x4.splat(start), hi = i32x4.splat(end), zero = i32x4.splat(0);
  let p = at;
  for (; p + 16 <= stop; p += 16) {
    let a = v128.load(p);
    let keep = v128.and(v128.and(i32x4.ge_u(a, lo), i32x4.le_u(a, hi)), i32x4.ne(a, zero));
    v128.store(p, v128.and(i32x4.add(a, d), keep));
  }
  for (; p < stop; p += 4) {
    let a = load<u32>(p);
    store<u32>(p, a != 0 && a >= start && a <= end ? a + delta : 0);
  }
}

/** A block for the bindings, or 0 when memory is exhausted. */
export function alloc(size: usize): usize {
  return tables.allocate(STATE, size);
}

export function free(ptr: usize): void {
  tables.release(STATE, ptr);
}
