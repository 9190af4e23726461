// Events (§6): the V3 records of .netperf files, read here, and the V4+ records of event and metadata
// blocks, framed by the walker (walk.ts, in either core) whose rows are copied into the columns here,
// with the lookups the walk leaves to the reader (its NT_SLOW rows) and the V6 label lists.

import {
  NTE_NEED,
  NTE_VAR32_LONG,
  NTE_VAR64_LONG,
  NTE_EVENT_SIZE,
  NTE_EVENT_PAST_END,
  NTE_PAYLOAD_SIZE,
  NTW_EVENT_SIZE,
  NTW_FLAGS,
  NTW_METADATA_ID,
  NTW_SEQUENCE_DELTA,
  NTW_CAPTURE_THREAD,
  NTW_PROCESSOR,
  NTW_THREAD,
  NTW_STACK_ID,
  NTW_TIMESTAMP_DELTA,
  NTW_LABEL_LIST,
  NTW_ACTIVITY,
  NTW_RELATED,
  NTW_PAYLOAD_SIZE,
  NTW_PAYLOAD,
} from "../core/generated/nettrace-events.js";
import { NT_MORE, NT_ERROR, NT_SLOW, LK_LABELS, queueSlot, type NettraceRows } from "./walk.js";
import { EVENT_BLOCK_HEADER_BYTES, NE_TRUNCATED, NW_METADATA_ID_ZERO, NW_UNKNOWN_METADATA, NW_UNKNOWN_STACK } from "./format.js";
import type { CoreEventColumns } from "./columns.js";
import { METADATA_DIRECT, STACK_DIRECT, halves, threadKey, type ReaderState } from "./reader-state.js";
import { lookupMetadata, metadataRecord, metadataRecordV2 } from "./metadata.js";
import { labelsOf } from "./v6-tables.js";

const MAX_V3_STACK = 65527;

/** The messages' names of the fields the walker reads (NTW_* codes). */
const WALK_WHAT: string[] = [];
WALK_WHAT[NTW_EVENT_SIZE] = "event size";
WALK_WHAT[NTW_FLAGS] = "compressed header flags";
WALK_WHAT[NTW_METADATA_ID] = "metadata id";
WALK_WHAT[NTW_SEQUENCE_DELTA] = "sequence number delta";
WALK_WHAT[NTW_CAPTURE_THREAD] = "capture thread id";
WALK_WHAT[NTW_PROCESSOR] = "processor number";
WALK_WHAT[NTW_THREAD] = "thread id";
WALK_WHAT[NTW_STACK_ID] = "stack id";
WALK_WHAT[NTW_TIMESTAMP_DELTA] = "timestamp delta";
WALK_WHAT[NTW_LABEL_LIST] = "label list id";
WALK_WHAT[NTW_ACTIVITY] = "activity id";
WALK_WHAT[NTW_RELATED] = "related activity id";
WALK_WHAT[NTW_PAYLOAD_SIZE] = "payload size";
WALK_WHAT[NTW_PAYLOAD] = "event payload";

export function v3EventBlock(r: ReaderState): void {
  const ptr = r.header.pointerSize;
  while (r.pos < r.end) {
    const start = r.pos;
    const eventSize = r.i32("V3 event size");
    if (eventSize < 52) r.fail(NE_TRUNCATED, start, `V3 event size ${eventSize} below the 56-byte header`);
    const recEnd = start + 4 + eventSize;
    if (recEnd > r.end) r.fail(NE_TRUNCATED, start, `V3 event of ${eventSize} bytes runs past the end of its block`);
    const dv = r.dv;
    const metadataId = dv.getInt32(start + 4, true);
    const threadId = dv.getInt32(start + 8, true);
    const timestamp = dv.getBigInt64(start + 12, true);
    const payloadSize = dv.getInt32(start + 52, true);
    const payload = start + 56;
    if (payloadSize < 0 || payload + payloadSize + 4 > recEnd)
      r.fail(NE_TRUNCATED, start + 52, `V3 payload size ${payloadSize} does not fit the event of ${eventSize} bytes`);
    const stackAt = payload + payloadSize;
    const stackSize = dv.getInt32(stackAt, true);
    if (stackSize < 0 || stackSize > MAX_V3_STACK || stackAt + 4 + stackSize > recEnd)
      r.fail(NE_TRUNCATED, stackAt, `V3 stack size ${stackSize} does not fit the event`);
    r.pos = recEnd;
    if (metadataId === 0) {
      if (r.version === 2) metadataRecordV2(r, start, payload, payloadSize);
      else metadataRecord(r, payload, payloadSize);
      continue;
    }
    if (r.events.length === r.events.room) r.events.reserve(1, r.expectedEvents(r.events.length + 1, recEnd), r.expectTimes);
    const ev = r.events.refresh();
    const i = ev.add();
    ev.timestamp[i] = timestamp;
    ev.metadataId[i] = metadataId;
    ev.metadata[i] = lookupMetadata(r, metadataId, start);
    ev.sequenceNumber[i] = 0;
    ev.captureThreadId[i] = -1n;
    ev.threadId[i] = BigInt(threadId);
    ev.processorNumber[i] = -1;
    if (stackSize >= ptr) {
      const row = r.stacks.add(r.stacks.length + 1, stackAt + 4, stackSize - (stackSize % ptr));
      ev.stackId[i] = row + 1;
      ev.stack[i] = row;
    } else {
      ev.stackId[i] = 0;
      ev.stack[i] = -1;
    }
    ev.payloadOffset[i] = payload;
    ev.payloadLength[i] = payloadSize;
    ev.activityIdOffset[i] = r.isZero16(start + 20) ? 0 : start + 20;
    ev.relatedActivityIdOffset[i] = r.isZero16(start + 36) ? 0 : start + 36;
    ev.labelListId[i] = 0;
    ev.labelList[i] = -1;
    ev.flags[i] = 0;
    ev.blockOffset[i] = r.blockStart;
    ev.queue[i] = 0;
  }
}

export function eventBlock(r: ReaderState, metadataBlock: boolean): void {
  const headerAt = r.pos;
  const headerSize = r.u16("block header size");
  if (headerSize < EVENT_BLOCK_HEADER_BYTES) r.fail(NE_TRUNCATED, headerAt, `block header size ${headerSize} below ${EVENT_BLOCK_HEADER_BYTES}`);
  const flags = r.u16("block flags");
  r.pos = headerAt;
  r.need(headerSize, "block header");
  const compressed = (flags & 1) !== 0;
  const v6 = r.version === 6;
  // (the lookups taken before the walk: their first use allocates in the core, which would let go the rows' views)
  const lk = r.lk;
  const lookups = metadataBlock ? undefined : lk;
  const walker = r.walker!;
  let from = r.pos;
  let resume = false;
  const inPlace = r.inPlace && !metadataBlock ? (r.events as CoreEventColumns) : undefined;
  // (V6 rows written in place get their label lists from the walk: the columns it writes them to are the window's)
  if (lookups) lk.view().words[LK_LABELS] = inPlace && v6 ? 1 : 0;
  while (from < r.end) {
    let rows: NettraceRows;
    if (inPlace) {
      // (rows written where the window's events are: room for some first)
      if (inPlace.length === inPlace.room) inPlace.reserve(1, r.expectedEvents(inPlace.length + 1, from), r.expectTimes);
      const first = inPlace.length;
      rows = walker.walk(r.bytes, from, r.end, compressed, v6, resume, lookups, {
        cols: inPlace.ptr,
        stride: inPlace.stride,
        first,
        cap: inPlace.room,
      });
      eventsInPlace(r, rows, v6);
      // (the rows' payloads are where the walk read them: what fills the typed tables takes them now)
      if (inPlace.length > first) walker.placed?.(inPlace, first, inPlace.length, r.metadata, r.header.pointerSize);
    } else {
      rows = walker.walk(r.bytes, from, r.end, compressed, v6, resume, lookups);
      if (metadataBlock) {
        for (let k = 0; k < rows.count; k++) metadataRecord(r, rows.payloadOffset[k], rows.payloadSize[k]);
      } else {
        addEvents(r, rows);
      }
    }
    from = rows.next;
    r.pos = from;
    if (rows.status === NT_ERROR) walkFailed(r, rows, v6);
    if (rows.status !== NT_MORE && rows.status !== NT_SLOW) break;
    resume = true;
  }
}

/** The walker's report of a malformed record, as the error its check gives (NTE_*). */
function walkFailed(r: ReaderState, rows: NettraceRows, v6: boolean): never {
  const at = rows.errorAt;
  const what = WALK_WHAT[rows.errorWhat] ?? "event";
  switch (rows.errorKind) {
    case NTE_NEED:
      return r.fail(
        NE_TRUNCATED,
        at,
        `${what}: needs ${rows.errorArg} bytes, ${Math.max(0, r.end - at)} left in ${r.end === r.len ? "the input" : "the structure"}`,
      );
    case NTE_VAR32_LONG:
      return r.fail(NE_TRUNCATED, at, `${what}: varuint32 longer than 5 bytes`);
    case NTE_VAR64_LONG:
      return r.fail(NE_TRUNCATED, at, `${what}: varuint64 longer than 10 bytes`);
    case NTE_EVENT_SIZE:
      return r.fail(NE_TRUNCATED, at, `event size ${rows.errorArg | 0} below the ${v6 ? 52 : 80}-byte header`);
    case NTE_EVENT_PAST_END:
      return r.fail(NE_TRUNCATED, at, `event of ${rows.errorArg | 0} bytes runs past the end of its block`);
    case NTE_PAYLOAD_SIZE:
      return r.fail(NE_TRUNCATED, at, `payload size ${rows.errorArg | 0} does not fit the event of ${rows.errorArg2 | 0} bytes`);
    default:
      return r.fail(NE_TRUNCATED, at, `malformed event record (walker error ${rows.errorKind})`);
  }
}

/**
 * One walk's rows as events. The walk did each row's lookups (metadata, stack, the capture thread's
 * queue and its sequence number) in the core, so its columns are copied whole, but for the last row
 * of an NT_SLOW walk, whose lookups are done here (slowEvent); V6 label lists are looked up here.
 */
function addEvents(r: ReaderState, rows: NettraceRows): void {
  const lk = r.lk;
  if (lk.owner !== r) throw new Error("etw-wasm: one nettrace walker read by two readers at once");
  const n = rows.count;
  const fast = rows.status === NT_SLOW ? n - 1 : n;
  const ev = r.events;
  if (ev.length + n > ev.room) ev.reserve(n, r.expectedEvents(ev.length + n, rows.next), r.expectTimes);
  const first = ev.length;
  const v6 = r.version === 6;
  if (fast > 0) {
    halves(ev.timestamp).set(rows.timestamp.subarray(0, 2 * fast), 2 * first);
    halves(ev.captureThreadId).set(rows.captureThread.subarray(0, 2 * fast), 2 * first);
    halves(ev.threadId).set(rows.thread.subarray(0, 2 * fast), 2 * first);
    ev.metadataId.set(rows.metadataId.subarray(0, fast), first);
    ev.metadata.set(rows.metadata.subarray(0, fast), first);
    ev.sequenceNumber.set(rows.sequenceNumber.subarray(0, fast), first);
    ev.processorNumber.set(rows.processorNumber.subarray(0, fast), first);
    ev.stackId.set(rows.stackId.subarray(0, fast), first);
    ev.stack.set(rows.stack.subarray(0, fast), first);
    ev.payloadOffset.set(rows.payloadOffset.subarray(0, fast), first);
    ev.payloadLength.set(rows.payloadSize.subarray(0, fast), first);
    ev.labelListId.set(rows.labelListId.subarray(0, fast), first);
    ev.flags.set(rows.flags.subarray(0, fast), first);
    ev.blockOffset.fill(r.blockStart, first, first + fast);
    ev.queue.set(rows.queue.subarray(0, fast), first);
    if (v6) labelsOf(r, rows.labelListId, rows.recordOffset, 0, fast, first);
    else {
      ev.activityIdOffset.set(rows.activityIdOffset.subarray(0, fast), first);
      ev.relatedActivityIdOffset.set(rows.relatedActivityIdOffset.subarray(0, fast), first);
      ev.labelList.fill(-1, first, first + fast);
    }
    ev.length = first + fast;
  }
  r.eventsLost += lk.takeLost();
  if (fast < n) slowEvent(r, rows, n - 1, v6);
}

/**
 * A walk's rows written in place (Reader.readInPlace): the columns the walk does not write, and the
 * last row of an NT_SLOW walk, whose lookups are done here (rowLookups).
 */
function eventsInPlace(r: ReaderState, rows: NettraceRows, v6: boolean): void {
  const lk = r.lk;
  if (lk.owner !== r) throw new Error("etw-wasm: one nettrace walker read by two readers at once");
  // (the walk may have allocated in the core)
  const ev = (r.events as CoreEventColumns).refresh();
  const n = rows.count;
  const first = ev.length;
  const fast = rows.status === NT_SLOW ? n - 1 : n;
  ev.blockOffset.fill(r.blockStart, first, first + n);
  // (V6: the walk gave the rows their label lists, LK_LABELS)
  if (!v6) ev.labelList.fill(-1, first, first + n);
  ev.length = first + fast;
  r.eventsLost += lk.takeLost();
  if (fast === n) return;
  // the last row, whose lookups the walk left here: an event, unless its metadata id is 0
  const i = ev.length;
  if (ev.metadataId[i] === 0) {
    r.warn(NW_METADATA_ID_ZERO, ev.recordOffset[i], "event with metadata id 0 in an EventBlock skipped");
    return;
  }
  if (v6) labelsOf(r, ev.labelListId, ev.recordOffset, i, i + 1, i);
  ev.length = i + 1;
  rowLookups(r, i, ev.recordOffset[i]);
}

/** Row k of a walk, whose lookups the walk left to the reader (NT_SLOW): an event, unless its metadata id is 0. */
function slowEvent(r: ReaderState, rows: NettraceRows, k: number, v6: boolean): void {
  // (every field read before anything may allocate in the core and so let go the rows' views)
  const at = rows.recordOffset[k];
  const id = rows.metadataId[k];
  if (id === 0) {
    r.warn(NW_METADATA_ID_ZERO, at, "event with metadata id 0 in an EventBlock skipped");
    return;
  }
  const ev = r.events;
  const i = ev.add();
  const i2 = 2 * i,
    k2 = 2 * k;
  const timestamp = halves(ev.timestamp),
    captureThreadId = halves(ev.captureThreadId),
    threadId = halves(ev.threadId);
  timestamp[i2] = rows.timestamp[k2];
  timestamp[i2 + 1] = rows.timestamp[k2 + 1];
  captureThreadId[i2] = rows.captureThread[k2];
  captureThreadId[i2 + 1] = rows.captureThread[k2 + 1];
  threadId[i2] = rows.thread[k2];
  threadId[i2 + 1] = rows.thread[k2 + 1];
  ev.metadataId[i] = id;
  ev.sequenceNumber[i] = rows.sequenceNumber[k];
  ev.processorNumber[i] = rows.processorNumber[k];
  ev.stackId[i] = rows.stackId[k];
  ev.payloadOffset[i] = rows.payloadOffset[k];
  ev.payloadLength[i] = rows.payloadSize[k];
  ev.labelListId[i] = rows.labelListId[k];
  ev.flags[i] = rows.flags[k];
  ev.blockOffset[i] = r.blockStart;
  if (v6) labelsOf(r, rows.labelListId, rows.recordOffset, k, k + 1, i);
  else {
    ev.activityIdOffset[i] = rows.activityIdOffset[k];
    ev.relatedActivityIdOffset[i] = rows.relatedActivityIdOffset[k];
    ev.labelList[i] = -1;
  }
  rowLookups(r, i, at);
}

/**
 * Event i's lookups, which the walk left to the reader (its metadata id, stack id, capture thread and
 * sequence number are in the columns): its metadata row, stack row and queue, its sequence number
 * checked; `at`: its record's offset, for the warnings.
 */
function rowLookups(r: ReaderState, i: number, at: number): void {
  let ev = r.events.refresh();
  const id = ev.metadataId[i];
  const sid = ev.stackId[i];
  const seq = ev.sequenceNumber[i];
  const ct = halves(ev.captureThreadId);
  const ctLo = ct[2 * i],
    ctHi = ct[2 * i + 1];
  const lk = r.lk.view();
  const md = id < METADATA_DIRECT ? lk.metadataRow[id] - 1 : (r.metadataById.get(id) ?? -1);
  if (md < 0) r.warn(NW_UNKNOWN_METADATA, at, `event references undefined metadata id ${id}`);
  ev.metadata[i] = md;
  let st = -1;
  if (sid !== 0) {
    if (sid < STACK_DIRECT) {
      if (lk.stackEpoch[sid] === lk.epoch) st = lk.stackRow[sid];
    } else st = r.stackById.get(sid) ?? -1;
    if (st < 0) r.warn(NW_UNKNOWN_STACK, at, `stack id ${sid} not defined since the last sequence point`);
  }
  ev.stack[i] = st;
  // the capture thread's queue (put in the walk's cache), then its sequence number
  const key = threadKey(ctLo, ctHi);
  const q = r.queueFor(key);
  if (ctHi === 0) {
    const h = queueSlot(ctLo),
      v = r.lk.view();
    v.cacheId[h] = ctLo;
    v.cacheQueue[h] = q;
  }
  // (queueFor may have allocated in the core)
  ev = r.events.refresh();
  ev.queue[i] = q;
  r.checkSequence(key, seq, at, false);
}
