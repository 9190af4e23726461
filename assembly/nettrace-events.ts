// The per-event loop of the EventPipe reader (bindings/eventpipe/reader.ts): the records of one V4/V5/V6
// EventBlock or V4/V5 MetadataBlock (nettrace-format.md §6.3–6.5), after the block header, as
// struct-of-arrays rows. The reader does the lookups (metadata, stacks, label lists, sequence numbers)
// and the metadata records over these rows; this walk only frames the records and decodes their
// headers, with the checks and messages (through the NTE_* / NTW_* codes) the reader had.
//
// Both cores run this source: it is valid AssemblyScript and TypeScript, touches memory only through
// the accessors of memory-access.ts, and scripts/gen-core-twin.mjs copies it to bindings/core/.
// 64-bit fields move as two 32-bit halves (lo, hi); every half is kept unsigned (`>>> 0`, a no-op in
// AssemblyScript) so both cores compare and add them alike.

import { Mem, ld8, ld32, ldi32, st8, st32a } from "./memory-access";

// ---- the output block: NT_HEADER_WORDS words of status, then NT_COLUMNS columns of `cap` u32 rows ----

/** Status words at the start of the output block (u32 each). */
export const NT_STATUS: u32 = 0; // NT_DONE, NT_MORE or NT_ERROR
export const NT_ROWS: u32 = 1; // rows written
export const NT_NEXT: u32 = 2; // offset (biased) where the walk stopped: the end, the next record (NT_MORE), the failing record
export const NT_ERR_KIND: u32 = 3; // NTE_*
export const NT_ERR_AT: u32 = 4; // offset (biased) the error is reported at
export const NT_ERR_WHAT: u32 = 5; // NTW_*: the field being read
export const NT_ERR_ARG: u32 = 6; // NTE_NEED: bytes needed; NTE_EVENT_*: EventSize (i32); NTE_PAYLOAD_SIZE: PayloadSize (i32)
export const NT_ERR_ARG2: u32 = 7; // NTE_PAYLOAD_SIZE: EventSize (i32)
export const NT_HEADER_WORDS: u32 = 8;

/**
 * Columns, in this order, `stride` bytes apart (a walker's own output block: after the status words,
 * with a stride of (cap + NT_PAD) words, the pad keeping columns a multiple of 4 KiB apart from falling
 * in one set of the L1 cache, where a row's stores to twenty columns would evict one another; the
 * reader's window columns in the core, which the walk writes in place: NT_READER_COLUMNS of them).
 * Row r of a column is its word r, but in the 64-bit columns, which take two: row r's low half at word
 * 2r of them, its high half at 2r + 1 (the layout of a little-endian 64-bit array), and in NT_FLAGS,
 * a byte a row.
 */
export const NT_TIMESTAMP: u32 = 0; // and 1
export const NT_CAPTURE: u32 = 2; // and 3: capture thread id (V4/V5) or index (V6)
export const NT_THREAD: u32 = 4; // and 5: thread id (V4/V5) or index (V6)
export const NT_METADATA_ID: u32 = 6;
export const NT_FLAGS: u32 = 7; // u8: NT_FLAG_* (the reader's EVENT_SORTED / EVENT_COMPRESSED)
export const NT_SEQUENCE: u32 = 8;
export const NT_PROCESSOR: u32 = 9; // as an i32's bits
export const NT_STACK_ID: u32 = 10;
export const NT_PAYLOAD_OFFSET: u32 = 11; // biased
export const NT_PAYLOAD_SIZE: u32 = 12;
export const NT_ACTIVITY: u32 = 13; // biased offset of a non-zero ActivityId (V4/V5), 0: absent or zero
export const NT_RELATED: u32 = 14; // the same for RelatedActivityId
export const NT_LABEL_LIST: u32 = 15; // V6 LabelListId
export const NT_RECORD: u32 = 16; // biased offset of the record's first byte
// With lookups (a lookup block given), what the reader's columns of the same names hold:
export const NT_METADATA: u32 = 17; // metadata row (i32)
export const NT_STACK: u32 = 18; // stack row (i32), -1: none
export const NT_QUEUE: u32 = 19; // the capture thread's queue number
export const NT_COLUMNS: u32 = 20;
export const NT_PAD: u32 = 16;
// The reader's window columns (bindings/eventpipe/columns.ts CoreEventColumns) add two the reader writes:
export const NT_BLOCK: u32 = 20; // file offset of the event's block
export const NT_LABEL_ROW: u32 = 21; // V6 label list row (i32), -1: none
export const NT_READER_COLUMNS: u32 = 22;

/** NT_STATUS values. */
export const NT_DONE: u32 = 0; // every record up to the end
export const NT_MORE: u32 = 1; // `cap` rows written: call again with `resume` from NT_NEXT
export const NT_ERROR: u32 = 2; // a malformed record at NT_NEXT: the rows before it are written
// With lookups: the last row written is one the lookups left to the reader (its metadata id is 0 or
// past the direct table, its metadata or stack undefined there, its capture thread not in the queue
// cache, its sequence number going backwards); its NT_METADATA, NT_STACK and NT_QUEUE are not set and
// its sequence number not yet checked. The reader does that row and calls again with `resume`.
export const NT_SLOW: u32 = 3;

/**
 * The lookup block (words): where the reader keeps, in the core's memory, what each event's lookups
 * read, so the walk does them for every event but the few it leaves to the reader (NT_SLOW).
 */
export const LK_METADATA_ROW: u32 = 0; // -> i32[LK_METADATA_DIRECT]: metadata row + 1 by id (0: none)
export const LK_STACK_ROW: u32 = 1; // -> i32[LK_STACK_DIRECT]: stack row by id, valid while its epoch is LK_EPOCH
export const LK_STACK_EPOCH: u32 = 2; // -> u32[LK_STACK_DIRECT]
export const LK_EPOCH: u32 = 3; // the stack table's current epoch (clearing it is the next epoch)
export const LK_CACHE_ID: u32 = 4; // -> u32[LK_QUEUE_CACHE]: capture thread id (below 2^32) by its hash
export const LK_CACHE_QUEUE: u32 = 5; // -> i32[LK_QUEUE_CACHE]: its queue number, -1: none
export const LK_LAST_SEQUENCE: u32 = 6; // -> u32[2 * LK_QUEUES]: by queue, its last sequence number and 1 (0: none yet)
export const LK_QUEUES: u32 = 7; // queues LK_LAST_SEQUENCE has room for
export const LK_LOST: u32 = 8; // events lost (sequence gaps) the walk counted: the reader adds and zeroes it
// V6 label lists by id, valid while their epoch is LK_EPOCH (the reader clears them and the stacks at each sequence point):
export const LK_LABEL_ROW: u32 = 9; // -> i32[LK_LABEL_DIRECT]: label list row
export const LK_LABEL_EPOCH: u32 = 10; // -> u32[LK_LABEL_DIRECT]
export const LK_LABEL_ACTIVITY: u32 = 11; // -> u32[LK_LABEL_DIRECT]: biased offset of its ActivityId, 0: none
export const LK_LABEL_RELATED: u32 = 12; // -> u32[LK_LABEL_DIRECT]: the same for its RelatedActivityId
// 1: the walk gives each V6 row its label list's row and activity ids (NT_LABEL_ROW, NT_ACTIVITY, NT_RELATED:
// the columns are the reader's, NT_READER_COLUMNS of them); 0: the reader does
export const LK_LABELS: u32 = 13;
export const LK_WORDS: u32 = 14;
export const LK_METADATA_DIRECT: u32 = 4096;
export const LK_LABEL_DIRECT: u32 = 4096;
export const LK_STACK_DIRECT: u32 = 65536;
export const LK_QUEUE_CACHE: u32 = 256;

/** The queue cache's slot of a capture thread id below 2^32. */
export function queueSlot(id: u32): u32 {
  return (id ^ (id >>> 8) ^ (id >>> 16)) & (LK_QUEUE_CACHE - 1);
}

/** NT_FLAGS bits. */
export const NT_FLAG_SORTED: u32 = 1;
export const NT_FLAG_COMPRESSED: u32 = 2;

/** NT_ERR_KIND: which check failed (the reader turns each into its message). */
export const NTE_NONE: u32 = 0;
export const NTE_NEED: u32 = 1; // "<what>: needs <arg> bytes, … left in …"
export const NTE_VAR32_LONG: u32 = 2; // "<what>: varuint32 longer than 5 bytes"
export const NTE_VAR64_LONG: u32 = 3; // "<what>: varuint64 longer than 10 bytes"
export const NTE_EVENT_SIZE: u32 = 4; // "event size <arg> below the <52|80>-byte header"
export const NTE_EVENT_PAST_END: u32 = 5; // "event of <arg> bytes runs past the end of its block"
export const NTE_PAYLOAD_SIZE: u32 = 6; // "payload size <arg> does not fit the event of <arg2> bytes"

/** NT_ERR_WHAT: the field being read (the reader's `what` strings, bindings/eventpipe/events.ts). */
export const NTW_EVENT_SIZE: u32 = 1;
export const NTW_FLAGS: u32 = 2; // compressed header flags
export const NTW_METADATA_ID: u32 = 3;
export const NTW_SEQUENCE_DELTA: u32 = 4;
export const NTW_CAPTURE_THREAD: u32 = 5;
export const NTW_PROCESSOR: u32 = 6;
export const NTW_THREAD: u32 = 7;
export const NTW_STACK_ID: u32 = 8;
export const NTW_TIMESTAMP_DELTA: u32 = 9;
export const NTW_LABEL_LIST: u32 = 10;
export const NTW_ACTIVITY: u32 = 11;
export const NTW_RELATED: u32 = 12;
export const NTW_PAYLOAD_SIZE: u32 = 13;
export const NTW_PAYLOAD: u32 = 14; // event payload

// ---- walk state ----

// Read position and limit of the block being walked.
let pos: usize = 0;
let lim: usize = 0;
// The first failure of the walk (NTE_NONE: none); later reads may fail too and are ignored.
let errKind: u32 = 0;
let errAt: usize = 0;
let errWhat: u32 = 0;
let errArg: u32 = 0;
let errArg2: u32 = 0;
// The last varuint64, as halves.
let vLo: u32 = 0;
let vHi: u32 = 0;

// The compressed header's "previous header" (§6.5): zero at the start of every block, carried from
// record to record, and across the calls of one block (`resume`).
let hMetadataId: u32 = 0;
let hSequence: u32 = 0;
let hCaptureLo: u32 = 0;
let hCaptureHi: u32 = 0;
let hProcessor: u32 = 0;
let hThreadLo: u32 = 0;
let hThreadHi: u32 = 0;
let hStackId: u32 = 0;
let hTimestampLo: u32 = 0;
let hTimestampHi: u32 = 0;
let hActivity: u32 = 0; // biased offset, 0: none
let hRelated: u32 = 0;
let hLabelList: u32 = 0;
let hPayloadSize: u32 = 0;

function fail(kind: u32, at: usize, what: u32, arg: u32, arg2: u32): void {
  if (errKind != NTE_NONE) return;
  errKind = kind;
  errAt = at;
  errWhat = what;
  errArg = arg;
  errArg2 = arg2;
}

// (the varint readers take the read position and return the one after: the position stays a local of
// the walk, where a global's store and reload would put a few cycles on every field's way)

/** LEB128 of at most 5 bytes at `p`, into vLo (bits above 32 dropped); returns the position after it (`p` on a failure). */
@inline function varU32(m: Mem, p: usize, what: u32): usize {
  // (unrolled where five bytes are at hand: a sequence number delta takes five when the capture
  // thread changes; the checks byte by byte only near the end)
  if (lim - p >= 5 && lim > p) {
    let b: u32 = ld8(m, p);
    if (b < 0x80) {
      vLo = b;
      return p + 1;
    }
    let v: u32 = b & 0x7f;
    b = ld8(m, p + 1);
    v |= (b & 0x7f) << 7;
    if (b < 0x80) {
      vLo = v;
      return p + 2;
    }
    b = ld8(m, p + 2);
    v |= (b & 0x7f) << 14;
    if (b < 0x80) {
      vLo = v;
      return p + 3;
    }
    b = ld8(m, p + 3);
    v |= (b & 0x7f) << 21;
    if (b < 0x80) {
      vLo = v;
      return p + 4;
    }
    b = ld8(m, p + 4);
    if (b < 0x80) {
      vLo = (v | (b << 28)) >>> 0;
      return p + 5;
    }
  }
  return varU32Long(m, p, what);
}

function varU32Long(m: Mem, at: usize, what: u32): usize {
  let p = at;
  let v: u32 = 0;
  for (let shift: u32 = 0; shift < 35; shift += 7) {
    if (p >= lim) {
      fail(NTE_NEED, p, what, 1, 0);
      vLo = 0;
      return at;
    }
    let b: u32 = ld8(m, p);
    p++;
    v |= (b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      vLo = v >>> 0;
      return p;
    }
  }
  fail(NTE_VAR32_LONG, p - 5, what, 0, 0);
  vLo = 0;
  return at;
}

/** LEB128 of at most 10 bytes at `p`, into vLo/vHi (bits above 64 dropped); returns the position after it (`p` on a failure). */
@inline function varU64(m: Mem, p: usize, what: u32): usize {
  if (lim - p >= 4 && lim > p) {
    // (up to 4 bytes, 28 bits, the most a timestamp delta or a thread id usually takes: no checks per byte)
    let b: u32 = ld8(m, p);
    let v: u32 = b & 0x7f;
    if (b < 0x80) {
      vLo = v;
      vHi = 0;
      return p + 1;
    }
    b = ld8(m, p + 1);
    v |= (b & 0x7f) << 7;
    if (b < 0x80) {
      vLo = v;
      vHi = 0;
      return p + 2;
    }
    b = ld8(m, p + 2);
    v |= (b & 0x7f) << 14;
    if (b < 0x80) {
      vLo = v;
      vHi = 0;
      return p + 3;
    }
    b = ld8(m, p + 3);
    v |= (b & 0x7f) << 21;
    if (b < 0x80) {
      vLo = v;
      vHi = 0;
      return p + 4;
    }
  }
  return varU64Long(m, p, what);
}

function varU64Long(m: Mem, at: usize, what: u32): usize {
  let p = at;
  let lo: u32 = 0;
  let hi: u32 = 0;
  for (let i: u32 = 0; i < 10; i++) {
    if (p >= lim) {
      fail(NTE_NEED, p, what, 1, 0);
      vLo = 0;
      vHi = 0;
      return at;
    }
    let b: u32 = ld8(m, p);
    p++;
    let v: u32 = b & 0x7f;
    if (i < 4) lo |= v << (7 * i);
    else if (i == 4) {
      lo |= v << 28;
      hi = v >>> 4;
    } else hi |= v << (7 * i - 32);
    if ((b & 0x80) == 0) {
      vLo = lo >>> 0;
      vHi = hi >>> 0;
      return p;
    }
  }
  fail(NTE_VAR64_LONG, p - 10, what, 0, 0);
  vLo = 0;
  vHi = 0;
  return at;
}

/** Whether the 16 bytes at `p` are all zero. */
function isZero16(m: Mem, p: usize): bool {
  return (ldi32(m, p) | ldi32(m, p + 4) | ldi32(m, p + 8) | ldi32(m, p + 12)) == 0;
}

/**
 * A 16-byte GUID at `p`, into vLo: its biased offset, or 0 when it is all zero; returns the position after
 * it (`p`, vLo 0, with a failure when it does not fit).
 */
function guid(m: Mem, p: usize, what: u32, bias: u32): usize {
  if (lim - p < 16) {
    fail(NTE_NEED, p, what, 16, 0);
    vLo = 0;
    return p;
  }
  vLo = isZero16(m, p) ? 0 : (<u32>p + bias) >>> 0;
  return p + 16;
}

function resetHeader(): void {
  hMetadataId = 0;
  hSequence = 0;
  hCaptureLo = 0;
  hCaptureHi = 0;
  hProcessor = 0;
  hThreadLo = 0;
  hThreadHi = 0;
  hStackId = 0;
  hTimestampLo = 0;
  hTimestampHi = 0;
  hActivity = 0;
  hRelated = 0;
  hLabelList = 0;
  hPayloadSize = 0;
}

/**
 * Walks the records of one block's content at [start, end) (after the block header; `end` is the
 * content's end or the input's, whichever is first), writing one row per record (metadata records
 * included) into the columns at `cols`, `stride` bytes apart, from row `first` up to row `cap`
 * (first < cap), and its status into the NT_HEADER_WORDS words at `out`. `compressed`: the block's Flags bit 0; `v6`: the V6 record layouts. `resume`
 * (non-zero) continues a block whose last call stopped with NT_MORE or NT_SLOW, from its NT_NEXT,
 * keeping the compressed header state; otherwise the state starts at zero. Every offset written (the
 * columns NT_PAYLOAD_OFFSET, NT_ACTIVITY, NT_RELATED, NT_RECORD and the words NT_NEXT, NT_ERR_AT) is
 * the address in memory plus `bias` (mod 2^32), so a caller that copied the block gives the
 * difference between its file offset and its address and reads file offsets. `lk`: a lookup block
 * (LK_*), whose lookups fill NT_METADATA, NT_STACK and NT_QUEUE and check sequence numbers; 0: none
 * (a metadata block). Returns the rows written (NT_ROWS).
 */
export function walkEventBlock(
  m: Mem, start: usize, end: usize, compressed: i32, v6: i32, resume: i32, out: usize, cols: usize, stride: usize, first: u32, cap: u32, bias: u32, lk: usize,
): u32 {
  pos = start;
  lim = end;
  errKind = NTE_NONE;
  errAt = 0;
  errWhat = 0;
  errArg = 0;
  errArg2 = 0;
  if (resume == 0) resetHeader();
  let isV6 = v6 != 0;
  let col: usize = cols;
  let rows: u32 = first;
  let status: u32 = NT_DONE;
  let recordFlags: u32 = compressed != 0 ? NT_FLAG_COMPRESSED : 0;
  let stop: usize = start; // NT_NEXT
  // the lookups' tables
  let mdRow: usize = 0, stRow: usize = 0, stEpoch: usize = 0, cacheId: usize = 0, cacheQueue: usize = 0, lastSeq: usize = 0;
  let epoch: u32 = 0, queues: u32 = 0, lost: u32 = 0;
  let labels = false, lbRow: usize = 0, lbEpoch: usize = 0, lbActivity: usize = 0, lbRelated: usize = 0;
  if (lk != 0) {
    mdRow = <usize>ld32(m, lk + (LK_METADATA_ROW << 2));
    stRow = <usize>ld32(m, lk + (LK_STACK_ROW << 2));
    stEpoch = <usize>ld32(m, lk + (LK_STACK_EPOCH << 2));
    epoch = ld32(m, lk + (LK_EPOCH << 2));
    cacheId = <usize>ld32(m, lk + (LK_CACHE_ID << 2));
    cacheQueue = <usize>ld32(m, lk + (LK_CACHE_QUEUE << 2));
    lastSeq = <usize>ld32(m, lk + (LK_LAST_SEQUENCE << 2));
    queues = ld32(m, lk + (LK_QUEUES << 2));
    lost = ld32(m, lk + (LK_LOST << 2));
    labels = isV6 && ld32(m, lk + (LK_LABELS << 2)) != 0;
    lbRow = <usize>ld32(m, lk + (LK_LABEL_ROW << 2));
    lbEpoch = <usize>ld32(m, lk + (LK_LABEL_EPOCH << 2));
    lbActivity = <usize>ld32(m, lk + (LK_LABEL_ACTIVITY << 2));
    lbRelated = <usize>ld32(m, lk + (LK_LABEL_RELATED << 2));
  }

  while (pos < lim) {
    if (rows >= cap) {
      status = NT_MORE;
      break;
    }
    let recStart = pos;
    stop = recStart;
    let next: usize = 0;
    let sorted: u32 = 0;
    let payload: usize = 0;
    if (compressed != 0) {
      // §6.5: the header as changes to the previous one
      let p: usize = pos;
      let flags: u32 = ld8(m, p);
      p++;
      if ((flags & 0x01) != 0) {
        p = varU32(m, p, NTW_METADATA_ID);
        hMetadataId = vLo;
      }
      if ((flags & 0x02) != 0) {
        p = varU32(m, p, NTW_SEQUENCE_DELTA);
        hSequence = (hSequence + vLo + 1) >>> 0;
        p = varU64(m, p, NTW_CAPTURE_THREAD);
        hCaptureLo = vLo;
        hCaptureHi = vHi;
        p = varU32(m, p, NTW_PROCESSOR);
        hProcessor = vLo;
      } else if (hMetadataId != 0) {
        hSequence = (hSequence + 1) >>> 0;
      }
      if ((flags & 0x04) != 0) {
        p = varU64(m, p, NTW_THREAD);
        hThreadLo = vLo;
        hThreadHi = vHi;
      }
      if ((flags & 0x08) != 0) {
        p = varU32(m, p, NTW_STACK_ID);
        hStackId = vLo;
      }
      // TimeStamp = previous + delta, wrapping mod 2^64
      p = varU64(m, p, NTW_TIMESTAMP_DELTA);
      let lo: u32 = (hTimestampLo + vLo) >>> 0;
      let carry: u32 = lo < hTimestampLo ? 1 : 0;
      hTimestampHi = (hTimestampHi + vHi + carry) >>> 0;
      hTimestampLo = lo;
      if (isV6) {
        if ((flags & 0x10) != 0) {
          p = varU32(m, p, NTW_LABEL_LIST);
          hLabelList = vLo;
        }
      } else {
        if ((flags & 0x10) != 0) {
          p = guid(m, p, NTW_ACTIVITY, bias);
          hActivity = vLo;
        }
        if ((flags & 0x20) != 0) {
          p = guid(m, p, NTW_RELATED, bias);
          hRelated = vLo;
        }
      }
      if ((flags & 0x80) != 0) {
        p = varU32(m, p, NTW_PAYLOAD_SIZE);
        hPayloadSize = vLo;
      }
      pos = p;
      if (errKind != NTE_NONE) break;
      sorted = (flags & 0x40) != 0 ? NT_FLAG_SORTED : 0;
      payload = p;
      if (<usize>hPayloadSize > lim - payload) {
        fail(NTE_NEED, payload, NTW_PAYLOAD, hPayloadSize, 0);
        break;
      }
      next = payload + hPayloadSize;
    } else {
      // §6.3 / §6.4: fixed header, EventSize framing; every field lies inside the checked record
      if (lim - recStart < 4) {
        fail(NTE_NEED, recStart, NTW_EVENT_SIZE, 4, 0);
        break;
      }
      let eventSize: i32 = ldi32(m, recStart);
      let headerLen: i32 = isV6 ? 52 : 80;
      if (eventSize < headerLen - 4) {
        fail(NTE_EVENT_SIZE, recStart, 0, <u32>eventSize, 0);
        break;
      }
      if (<usize>eventSize > lim - recStart - 4) {
        fail(NTE_EVENT_PAST_END, recStart, 0, <u32>eventSize, 0);
        break;
      }
      let recEnd: usize = recStart + 4 + <usize>eventSize;
      let raw: u32 = ld32(m, recStart + 4);
      hMetadataId = raw & 0x7fffffff;
      sorted = (raw & 0x80000000) == 0 ? NT_FLAG_SORTED : 0; // TraceEvent's polarity (§6.3)
      hSequence = ld32(m, recStart + 8);
      hThreadLo = ld32(m, recStart + 12);
      hThreadHi = ld32(m, recStart + 16);
      hCaptureLo = ld32(m, recStart + 20);
      hCaptureHi = ld32(m, recStart + 24);
      hProcessor = ld32(m, recStart + 28);
      hStackId = ld32(m, recStart + 32);
      hTimestampLo = ld32(m, recStart + 36);
      hTimestampHi = ld32(m, recStart + 40);
      let sizeAt: usize = 0;
      if (isV6) {
        hLabelList = ld32(m, recStart + 44);
        hActivity = 0;
        hRelated = 0;
        sizeAt = recStart + 48;
      } else {
        let a: usize = recStart + 44;
        let r: usize = recStart + 60;
        hActivity = isZero16(m, a) ? 0 : (<u32>a + bias) >>> 0;
        hRelated = isZero16(m, r) ? 0 : (<u32>r + bias) >>> 0;
        hLabelList = 0;
        sizeAt = recStart + 76;
      }
      let size: i32 = ldi32(m, sizeAt);
      payload = sizeAt + 4;
      if (size < 0 || <usize>size > recEnd - payload) {
        fail(NTE_PAYLOAD_SIZE, sizeAt, 0, <u32>size, <u32>eventSize);
        break;
      }
      hPayloadSize = <u32>size;
      next = recEnd;
    }
    let at: usize = col + (<usize>rows << 2);
    let at2: usize = col + (<usize>rows << 3);
    st32a(m, at2, hTimestampLo);
    st32a(m, at2 + 4, hTimestampHi);
    st32a(m, at2 + 2 * stride, hCaptureLo);
    st32a(m, at2 + 2 * stride + 4, hCaptureHi);
    st32a(m, at2 + 4 * stride, hThreadLo);
    st32a(m, at2 + 4 * stride + 4, hThreadHi);
    st32a(m, at + 6 * stride, hMetadataId);
    st8(m, col + 7 * stride + <usize>rows, sorted | recordFlags);
    st32a(m, at + 8 * stride, hSequence);
    st32a(m, at + 9 * stride, hProcessor);
    st32a(m, at + 10 * stride, hStackId);
    st32a(m, at + 11 * stride, (<u32>payload + bias) >>> 0);
    st32a(m, at + 12 * stride, hPayloadSize);
    st32a(m, at + 13 * stride, hActivity);
    st32a(m, at + 14 * stride, hRelated);
    st32a(m, at + 15 * stride, hLabelList);
    st32a(m, at + 16 * stride, (<u32>recStart + bias) >>> 0);
    rows++;
    pos = next;
    if (lk != 0) {
      // the lookups (bindings/eventpipe/events.ts rowLookups does the same for a row left to it)
      let id = hMetadataId;
      let md: i32 = id != 0 && id < LK_METADATA_DIRECT ? ldi32(m, mdRow + (<usize>id << 2)) - 1 : -1;
      let st: i32 = -1;
      let sid = hStackId;
      let known = md >= 0;
      if (sid != 0) {
        if (sid < LK_STACK_DIRECT && ld32(m, stEpoch + (<usize>sid << 2)) == epoch) st = ldi32(m, stRow + (<usize>sid << 2));
        else known = false;
      }
      let q: i32 = -1;
      if (hCaptureHi == 0) {
        let h: usize = <usize>queueSlot(hCaptureLo);
        q = ldi32(m, cacheQueue + (h << 2));
        if (q >= 0 && ld32(m, cacheId + (h << 2)) != hCaptureLo) q = -1;
      }
      if (q < 0 || <u32>q >= queues) known = false;
      // (V6: the row's label list, defined since the last sequence point)
      let lrow: i32 = -1;
      let lact: u32 = 0, lrel: u32 = 0;
      let lid = hLabelList;
      if (labels && lid != 0) {
        if (lid < LK_LABEL_DIRECT && ld32(m, lbEpoch + (<usize>lid << 2)) == epoch) {
          lrow = ldi32(m, lbRow + (<usize>lid << 2));
          lact = ld32(m, lbActivity + (<usize>lid << 2));
          lrel = ld32(m, lbRelated + (<usize>lid << 2));
        } else known = false;
      }
      let gap: i32 = 0;
      if (known) {
        let last = ld32(m, lastSeq + (<usize>q << 3));
        if (ld32(m, lastSeq + (<usize>q << 3) + 4) != 0 && (isV6 || last != 0)) {
          gap = <i32>(hSequence - last - 1);
          // (a gap going backwards is the reader's warning; a large one its count, so the walk's stays in 32 bits)
          if (gap < 0 || gap > 0xffff) known = false;
        }
      }
      if (!known) {
        status = NT_SLOW;
        stop = pos;
        break;
      }
      st32a(m, lastSeq + (<usize>q << 3), hSequence);
      st32a(m, lastSeq + (<usize>q << 3) + 4, 1);
      lost = lost + <u32>gap;
      st32a(m, at + 17 * stride, <u32>md);
      st32a(m, at + 18 * stride, <u32>st);
      st32a(m, at + 19 * stride, <u32>q);
      if (labels) {
        st32a(m, at + <usize>NT_ACTIVITY * stride, lact);
        st32a(m, at + <usize>NT_RELATED * stride, lrel);
        st32a(m, at + <usize>NT_LABEL_ROW * stride, <u32>lrow);
      }
    }
  }
  if (errKind == NTE_NONE && status != NT_SLOW) stop = pos;
  if (lk != 0) st32a(m, lk + (LK_LOST << 2), lost);

  if (errKind != NTE_NONE) status = NT_ERROR;
  st32a(m, out + (NT_STATUS << 2), status);
  st32a(m, out + (NT_ROWS << 2), rows - first);
  st32a(m, out + (NT_NEXT << 2), (<u32>stop + bias) >>> 0);
  st32a(m, out + (NT_ERR_KIND << 2), errKind);
  st32a(m, out + (NT_ERR_AT << 2), errKind != NTE_NONE ? (<u32>errAt + bias) >>> 0 : 0);
  st32a(m, out + (NT_ERR_WHAT << 2), errWhat);
  st32a(m, out + (NT_ERR_ARG << 2), errArg);
  st32a(m, out + (NT_ERR_ARG2 << 2), errArg2);
  return rows - first;
}
