// The V6 thread, remove-thread and label-list blocks (§10), and the label lists V6 events refer to.

import {
  NE_TRUNCATED,
  NW_BAD_ROW,
  NW_BLOCK_TRAILING,
  NW_DUPLICATE_THREAD,
  LABEL_ACTIVITY,
  LABEL_RELATED_ACTIVITY,
  LABEL_TRACE_ID,
  LABEL_SPAN_ID,
  LABEL_KEY_VALUE,
  LABEL_OPCODE,
  LABEL_KEYWORDS,
  LABEL_LEVEL,
  LABEL_VERSION,
  NettraceFormatError,
  type NettraceThread,
} from "./format.js";
import { LABEL_DIRECT, bigThreadKey, type ReaderState } from "./reader-state.js";

export function threadBlock(r: ReaderState): void {
  while (r.pos < r.end) {
    const rowAt = r.pos;
    const size = r.u16("thread row size");
    const p = r.need(size, "thread row");
    const outer = r.end;
    r.pos = p;
    r.end = p + size;
    try {
      const th: NettraceThread = { index: BigInt.asIntN(64, r.varU64("thread index")), keyValues: [], offset: r.base + rowAt };
      while (r.pos < r.end) {
        const kindAt = r.pos;
        const kind = r.u8("thread item kind");
        if (kind === 1) th.name = r.utf8v("thread name");
        else if (kind === 2) th.osProcessId = r.varU64("OS process id");
        else if (kind === 3) th.osThreadId = r.varU64("OS thread id");
        else if (kind === 4) th.keyValues.push([r.utf8v("key"), r.utf8v("value")]);
        else r.fail(NE_TRUNCATED, kindAt, `unknown thread item kind ${kind}`);
      }
      if (r.threadByIndex.has(th.index)) r.warn(NW_DUPLICATE_THREAD, rowAt, `thread index ${th.index} defined twice`);
      r.threadByIndex.set(th.index, r.threads.length);
      r.threads.push(th);
    } catch (e) {
      if (!(e instanceof NettraceFormatError)) throw e;
      r.warn(NW_BAD_ROW, e.offset - r.base, `thread row at ${r.base + rowAt} unreadable: ${e.reason}`);
    }
    r.pos = p + size;
    r.end = outer;
  }
}

export function removeThreadBlock(r: ReaderState): void {
  while (r.pos < r.end) {
    const at = r.pos;
    const index = BigInt.asIntN(64, r.varU64("thread index"));
    const seq = r.varU32("sequence number");
    r.removedThreads.push({ index, sequenceNumber: seq, offset: r.base + at });
    r.checkSequence(bigThreadKey(index), seq, at, true);
    r.lk.setLastSequence(r.queueFor(bigThreadKey(index)), -1);
  }
}

export function labelListBlock(r: ReaderState): void {
  const first = r.u32("label list first index");
  const count = r.u32("label list count");
  if (first === 0) r.fail(NE_TRUNCATED, r.pos - 8, "label list first index 0");
  const L = r.labelLists;
  for (let k = 0; k < count; k++) {
    const start = r.pos;
    const i = L.add();
    L.index[i] = (first + k) >>> 0;
    L.offset[i] = start;
    L.present[i] = 0;
    L.activityIdOffset[i] = 0;
    L.relatedActivityIdOffset[i] = 0;
    L.traceIdOffset[i] = 0;
    L.spanId[i] = 0n;
    L.opcode[i] = 0;
    L.level[i] = 0;
    L.version[i] = 0;
    L.keywords[i] = 0n;
    try {
      for (;;) {
        const kindAt = r.pos;
        const raw = r.u8("label kind");
        switch (raw & 0x7f) {
          case 1:
            L.activityIdOffset[i] = r.need(16, "activity id");
            L.present[i] |= LABEL_ACTIVITY;
            break;
          case 2:
            L.relatedActivityIdOffset[i] = r.need(16, "related activity id");
            L.present[i] |= LABEL_RELATED_ACTIVITY;
            break;
          case 3:
            L.traceIdOffset[i] = r.need(16, "trace id");
            L.present[i] |= LABEL_TRACE_ID;
            break;
          case 4:
            L.spanId[i] = r.u64("span id");
            L.present[i] |= LABEL_SPAN_ID;
            break;
          case 5:
            r.utf8v("label key");
            r.utf8v("label value");
            L.present[i] |= LABEL_KEY_VALUE;
            break;
          case 6:
            r.utf8v("label key");
            r.varU64("label value");
            L.present[i] |= LABEL_KEY_VALUE;
            break;
          case 7:
            L.opcode[i] = r.u8("opcode");
            L.present[i] |= LABEL_OPCODE;
            break;
          case 8:
            L.keywords[i] = r.u64("keywords");
            L.present[i] |= LABEL_KEYWORDS;
            break;
          case 9:
            L.level[i] = r.u8("level");
            L.present[i] |= LABEL_LEVEL;
            break;
          case 10:
            L.version[i] = r.u8("version");
            L.present[i] |= LABEL_VERSION;
            break;
          default:
            r.fail(NE_TRUNCATED, kindAt, `unknown label kind ${raw & 0x7f}`);
        }
        if (raw & 0x80) break;
      }
    } catch (e) {
      L.length = i; // drop the partial list
      throw e;
    }
    L.byteLength[i] = r.pos - start;
    r.labelListByIndex.set(L.index[i], i);
    if (L.index[i] < LABEL_DIRECT) {
      // (and where the walk looks it up: cleared with the stacks at the next sequence point, their epoch)
      const lk = r.lk.view();
      const id = L.index[i];
      lk.labelRow[id] = i;
      lk.labelEpoch[id] = lk.epoch;
      lk.labelActivity[id] = L.activityIdOffset[i];
      lk.labelRelated[id] = L.relatedActivityIdOffset[i];
    }
  }
  if (r.pos < r.end) r.warn(NW_BLOCK_TRAILING, r.pos, `${r.end - r.pos} bytes after the last label list of the block`);
}

/** V6: the label lists of rows [from, to) of `labelListId` (events `first` on), and the activity ids they give. */
export function labelsOf(r: ReaderState, labelListId: Uint32Array, recordOffset: Uint32Array, from: number, to: number, first: number): void {
  const ev = r.events;
  const { activityIdOffset, relatedActivityIdOffset, labelList } = ev;
  const L = r.labelLists;
  for (let k = from, i = first; k < to; k++, i++) {
    const lid = labelListId[k];
    let list = -1,
      a = 0,
      rel = 0;
    if (lid !== 0) {
      const row = r.labelListByIndex.get(lid);
      if (row === undefined) r.warn(NW_BAD_ROW, recordOffset[k], `label list ${lid} not defined since the last sequence point`);
      else {
        list = row;
        a = L.activityIdOffset[row];
        rel = L.relatedActivityIdOffset[row];
      }
    }
    activityIdOffset[i] = a;
    relatedActivityIdOffset[i] = rel;
    labelList[i] = list;
  }
}
