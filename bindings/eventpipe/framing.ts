// The container (§1–§5): the stream header, FastSerialization objects (V3–V5) and V6 blocks, framed
// and checked before their content is read; the Trace object or block; and the step from a framed
// block to the module that reads its kind.

import {
  NE_TRUNCATED,
  NE_BAD_MAGIC,
  NE_UNSUPPORTED_VERSION,
  NE_BAD_OBJECT,
  NE_BAD_TRACE,
  NE_BAD_BLOCK,
  NE_TOO_LARGE,
  NW_BLOCK_DAMAGED,
  NW_UNKNOWN_OBJECT,
  NW_BLOCK_VERSION,
  NW_TRAILING_BYTES,
  NW_BAD_SYNC_TIME,
  NW_UNKNOWN_BLOCK_KIND,
  BLOCK_TRACE,
  BLOCK_EVENT,
  BLOCK_METADATA,
  BLOCK_SEQUENCE_POINT,
  BLOCK_STACK,
  BLOCK_THREAD,
  BLOCK_REMOVE_THREAD,
  BLOCK_LABEL_LIST,
  BLOCK_UNKNOWN,
  BLOCK_OBJECT_NAMES,
  FS_SIGNATURE,
  MAX_TYPE_NAME,
  TAG_NULL,
  TAG_BEGIN,
  TAG_BEGIN_PRIVATE,
  TAG_END,
  NettraceFormatError,
} from "./format.js";
import type { ReaderState } from "./reader-state.js";
import { eventBlock, v3EventBlock } from "./events.js";
import { v6MetadataBlock } from "./metadata.js";
import { sequencePointBlock, stackBlock } from "./stacks.js";
import { labelListBlock, removeThreadBlock, threadBlock } from "./v6-tables.js";

/** readNext: the stream has ended; a streamed input has not given the next object's bytes yet. */
export const NEXT_END = -1;
export const NEXT_NEED = -2;

/**
 * Reads the stream's prelude (magic, stream header). False when a stream has not given enough
 * bytes for it yet.
 */
export function readPrelude(r: ReaderState): boolean {
  if (r.len >= 0x1_0000_0000) r.fail(NE_TOO_LARGE, 0, "input of 4 GiB or more");
  if (!r.final && r.len < 32) return false;
  const b = r.bytes;
  const magic =
    r.len >= 8 && b[0] === 0x4e && b[1] === 0x65 && b[2] === 0x74 && b[3] === 0x74 && b[4] === 0x72 && b[5] === 0x61 && b[6] === 0x63 && b[7] === 0x65;
  r.started = true;
  if (!magic) {
    r.header.container = "netperf";
    r.version = 3;
    r.pos = 0;
    fastSerializationHeader(r, false);
    return true;
  }
  r.pos = 8;
  const reserved = r.u32("stream header");
  if (reserved !== 0) {
    r.header.container = "nettrace";
    r.version = 4;
    r.pos = 8;
    fastSerializationHeader(r, true);
    return true;
  }
  r.header.container = "nettrace6";
  const major = r.u32("V6 major version");
  const minor = r.u32("V6 minor version");
  r.header.minorVersion = minor;
  if (major !== 6) r.fail(NE_UNSUPPORTED_VERSION, 12, `Nettrace major version ${major} (only 6 has this header)`);
  r.version = 6;
  r.header.formatVersion = 6;
  return true;
}

/**
 * Reads the next object (V3–V5) or block (V6): its BLOCK_* kind; NEXT_END after the end of the
 * stream; NEXT_NEED, reading nothing, when a stream has not given all of its bytes yet.
 */
export function readNext(r: ReaderState): number {
  // (a version 2 file's events end where its trailer says: read once the file has ended)
  if (r.version === 2) return r.final ? v2Events(r) : NEXT_NEED;
  if (!r.final && extentAt(r, r.pos) > r.len) return NEXT_NEED;
  return r.version === 6 ? v6Block(r) : fastSerializationObject(r);
}

/**
 * A version 2 file's events (EventPipeEventSource with SUPPORT_V1_V2): records of the V3 layout, byte-packed,
 * straight after the Trace object up to the offset its forward reference resolves to, then the end.
 */
function v2Events(r: ReaderState): number {
  const at = r.pos;
  if (r.v2End < 0) {
    try {
      r.v2End = forwardReference(r, r.v2ForwardRef) - r.base;
    } catch (e) {
      if (!(e instanceof NettraceFormatError)) throw e;
      // a file cut short has no trailer: its events up to the cut, then where it stopped
      r.blocks.add(BLOCK_EVENT, at, at, r.len - at, 2);
      readBlock(r, BLOCK_EVENT, at, at, r.len);
      r.fail(NE_TRUNCATED, r.len, `input ends before the end of its events (${e.reason})`);
    }
  }
  if (at >= r.v2End) {
    r.complete = true;
    return NEXT_END;
  }
  r.blocks.add(BLOCK_EVENT, at, at, r.v2End - at, 2);
  readBlock(r, BLOCK_EVENT, at, at, r.v2End);
  if (r.v2End > r.len) r.fail(NE_TRUNCATED, r.len, "input ends inside the events");
  r.pos = r.v2End;
  return BLOCK_EVENT;
}

/**
 * The stream offset FastSerialization forward reference `index` resolves to: the file's last four bytes
 * give the trailer, whose first int32 is where the forward-reference table is (an int32 count, then an
 * int32 offset each).
 */
function forwardReference(r: ReaderState, index: number): number {
  const dv = r.dv,
    len = r.len,
    base = r.base;
  if (len < 8) r.fail(NE_TRUNCATED, len, "input ends before the FastSerialization trailer");
  const trailer = dv.getInt32(len - 4, true) - base;
  if (trailer < 0 || trailer + 4 > len - 4) r.fail(NE_BAD_OBJECT, len - 4, `trailer offset ${trailer + base} outside the file`);
  const table = dv.getInt32(trailer, true) - base;
  if (table < 0 || table + 4 > len) r.fail(NE_BAD_OBJECT, trailer, `forward-reference table offset ${table + base} outside the file`);
  const count = dv.getInt32(table, true);
  if (count < 0 || index < 0 || index >= count || table + 4 + 4 * count > len)
    r.fail(NE_BAD_OBJECT, table, `forward reference ${index} not in the table of ${count}`);
  const end = dv.getInt32(table + 4 + 4 * index, true);
  if (end - base < r.pos || end - base > len) r.fail(NE_BAD_OBJECT, table + 4 + 4 * index, `end of the events at ${end}, outside them`);
  return end;
}

/** Where the object or block at `at` ends, as far as its first bytes tell (a bad header: at once). */
function extentAt(r: ReaderState, at: number): number {
  const b = r.bytes,
    dv = r.dv,
    len = r.len;
  if (r.version === 6) return at + 4 > len ? at + 4 : at + 4 + (dv.getUint32(at, true) & 0xffffff);
  if (at >= len) return at + 1;
  if (b[at] === TAG_NULL) return at + 1;
  if (at + 16 > len) return at + 16;
  const nameLen = dv.getInt32(at + 11, true);
  if (nameLen < 0 || nameLen > MAX_TYPE_NAME) return at;
  const sizeAt = at + 16 + nameLen;
  let name = "";
  for (let i = 0; i < nameLen && at + 15 + i < len; i++) name += String.fromCharCode(b[at + 15 + i]);
  if (name === "Trace" || name === "Microsoft.DotNet.Runtime.EventPipeFile") return sizeAt + 49;
  if (sizeAt + 4 > len) return sizeAt + 4;
  const size = dv.getInt32(sizeAt, true);
  if (size < 0) return at;
  return r.aligned4(sizeAt + 4) + size + 1;
}

function fastSerializationHeader(r: ReaderState, nettrace: boolean): void {
  const start = r.pos;
  // i32 20 + "!FastSerialization.1": compare the bytes present; a matching short input is truncated.
  const have = Math.min(24, r.len - start);
  let sig = true;
  for (let i = 0; sig && i < have; i++) {
    const want = i === 0 ? FS_SIGNATURE.length : i < 4 ? 0 : FS_SIGNATURE.charCodeAt(i - 4);
    if (r.bytes[start + i] !== want) sig = false;
  }
  if (!sig) r.fail(NE_BAD_MAGIC, start, 'not a .nettrace/.netperf file (no "!FastSerialization.1" header)');
  if (have < 24) r.fail(NE_TRUNCATED, r.len, "input ends inside the FastSerialization header");
  r.pos = start + 24;
  r.beginTag = nettrace ? TAG_BEGIN_PRIVATE : TAG_BEGIN;
}

/** One object: the Trace object, a block, or the end-of-stream tag. */
function fastSerializationObject(r: ReaderState): number {
  const nettrace = r.version !== 3;
  const beginTag = r.beginTag;
  const objStart = r.pos;
  if (objStart >= r.len) r.fail(NE_TRUNCATED, objStart, "input ends before the end-of-stream tag");
  const tag = r.bytes[objStart];
  if (tag === TAG_NULL) {
    r.pos++;
    r.complete = true;
    if (!r.haveTrace) r.fail(NE_BAD_TRACE, objStart, "stream ends without a Trace object");
    if (r.pos < r.len) r.warn(NW_TRAILING_BYTES, r.pos, `${r.len - r.pos} bytes after the end-of-stream tag`);
    return NEXT_END;
  }
  if (tag !== beginTag) r.fail(NE_BAD_OBJECT, objStart, `expected object tag ${beginTag}, found ${tag}`);
  r.pos++;
  if (r.u8("object header") !== beginTag) r.fail(NE_BAD_OBJECT, objStart + 1, "type object does not start with the begin tag");
  if (r.u8("object header") !== TAG_NULL) r.fail(NE_BAD_OBJECT, objStart + 2, "type of the type object is not NullReference");
  const version = r.i32("object version");
  const minVersion = r.i32("object minimum reader version");
  const nameAt = r.pos;
  const nameLen = r.i32("type name length");
  if (nameLen < 0 || nameLen > MAX_TYPE_NAME) r.fail(NE_BAD_OBJECT, nameAt, `type name length ${nameLen}`);
  const np = r.need(nameLen, "type name");
  let name = "";
  for (let i = 0; i < nameLen; i++) name += String.fromCharCode(r.bytes[np + i]);
  if (r.u8("object header") !== TAG_END) r.fail(NE_BAD_OBJECT, r.pos - 1, "type object does not end with the end tag");

  if (name === "Trace" || name === "Microsoft.DotNet.Runtime.EventPipeFile") {
    if (r.haveTrace) r.fail(NE_BAD_TRACE, objStart, "second Trace object");
    // (.NET Core 2.0 writes version 2, .NET Core 2.1 version 3; version 1's providers are GUIDs, not read here)
    const v2 = !nettrace && version === 2;
    if (nettrace ? version !== 4 : !v2 && version !== 3) {
      r.fail(
        NE_UNSUPPORTED_VERSION,
        objStart + 3,
        `Trace object version ${version} ${nettrace ? "(nettrace needs 4)" : "(netperf: versions 2 and 3 are read)"}`,
      );
    }
    r.header.traceObjectVersion = version;
    r.header.traceObjectMinVersion = minVersion;
    const content = r.pos;
    if (v2) r.v2ForwardRef = r.i32("end-of-events forward reference");
    traceFields(r, false, v2);
    // (FastSerialization.FindEndTag: a version 2 Trace object may lack its end tag; a byte above 0x50 is the first event's)
    if (v2 && r.pos < r.len && r.bytes[r.pos] !== TAG_END && r.bytes[r.pos] > 0x50) {
      // no end tag
    } else if (r.u8("Trace object end") !== TAG_END) r.fail(NE_BAD_TRACE, r.pos - 1, "Trace object does not end with the end tag");
    r.blocks.add(BLOCK_TRACE, objStart, content, v2 ? 36 : 48, version);
    r.haveTrace = true;
    r.header.formatVersion = nettrace ? 4 : v2 ? 2 : 3;
    if (v2) r.version = 2;
    return BLOCK_TRACE;
  }
  if (!r.haveTrace) r.fail(NE_BAD_TRACE, objStart, `object "${name}" before the Trace object`);

  // Block object: i32 size, padding to a 4-byte file offset, content, end tag.
  const sizeAt = r.pos;
  const size = r.i32("block size");
  if (size < 0) r.fail(NE_BAD_OBJECT, sizeAt, `negative block size ${size}`);
  const content = r.aligned4(r.pos);
  const contentEnd = content + size;
  const kind = blockKindNamed(name, nettrace);

  if (contentEnd < r.len) {
    // Framing first: a wrong size must not let garbage be decoded as records.
    if (r.bytes[contentEnd] !== TAG_END) r.fail(NE_BAD_OBJECT, contentEnd, `block "${name}" of ${size} bytes is not followed by the end tag`);
  }
  r.blocks.add(kind, objStart, content, size, version);
  if (kind === BLOCK_UNKNOWN) {
    r.warn(NW_UNKNOWN_OBJECT, objStart, `unknown object type "${name}" skipped`);
  } else {
    if (version > 2) r.warn(NW_BLOCK_VERSION, objStart + 3, `${name} version ${version} (2 expected)`);
    readBlock(r, kind, objStart, content, contentEnd);
  }
  if (contentEnd >= r.len) r.fail(NE_TRUNCATED, r.len, `input ends inside block "${name}" (${contentEnd + 1 - r.len} bytes missing)`);
  r.pos = contentEnd + 1;
  r.end = r.len;
  return kind;
}

/** Trace object (V3–V5, 48 bytes) or V6 Trace block (§5). */
function traceFields(r: ReaderState, v6: boolean, v2 = false): void {
  const h = r.header;
  const t = h.syncTimeUtc;
  const at = r.pos;
  t.year = r.i16("SyncTimeUTC");
  t.month = r.i16("SyncTimeUTC");
  t.dayOfWeek = r.i16("SyncTimeUTC");
  t.day = r.i16("SyncTimeUTC");
  t.hour = r.i16("SyncTimeUTC");
  t.minute = r.i16("SyncTimeUTC");
  t.second = r.i16("SyncTimeUTC");
  t.millisecond = r.i16("SyncTimeUTC");
  const valid =
    t.year >= 1601 &&
    t.year <= 30827 &&
    t.month >= 1 &&
    t.month <= 12 &&
    t.day >= 1 &&
    t.day <= 31 &&
    t.hour >= 0 &&
    t.hour < 24 &&
    t.minute >= 0 &&
    t.minute < 60 &&
    t.second >= 0 &&
    t.second < 60 &&
    t.millisecond >= 0 &&
    t.millisecond < 1000;
  if (valid) {
    const d = new Date(0);
    d.setUTCFullYear(t.year, t.month - 1, t.day);
    d.setUTCHours(t.hour, t.minute, t.second, t.millisecond);
    h.syncTimeFileTime = (BigInt(d.getTime()) + 11644473600000n) * 10000n;
  } else {
    h.syncTimeFileTime = 0n;
    r.warn(NW_BAD_SYNC_TIME, at, "SyncTimeUTC is not a valid date");
  }
  h.syncTimeQpc = r.i64("SyncTimeQPC");
  h.qpcFrequency = r.i64("QPCFrequency");
  if (v2) {
    // (EventPipeEventSource.FromStream: version 1 and 2 files are of 64-bit Linux, one processor, process id 0)
    h.pointerSize = 8;
    h.processId = 0;
    h.numberOfProcessors = 1;
    h.expectedCpuSamplingRate = 0;
    return;
  }
  h.pointerSize = r.i32("PointerSize");
  if (h.pointerSize !== 4 && h.pointerSize !== 8) r.fail(NE_BAD_TRACE, r.pos - 4, `pointer size ${h.pointerSize}`);
  if (!v6) {
    h.processId = r.i32("ProcessId");
    h.numberOfProcessors = r.i32("NumberOfProcessors");
    h.expectedCpuSamplingRate = r.i32("ExpectedCPUSamplingRate");
    return;
  }
  const count = r.i32("trace key/value count");
  if (count < 0) r.fail(NE_BAD_TRACE, r.pos - 4, `key/value count ${count}`);
  for (let i = 0; i < count; i++) {
    const key = r.utf8v("trace key");
    const value = r.utf8v("trace value");
    h.keyValues.push([key, value]);
    const num = /^[+-]?\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
    if (!Number.isSafeInteger(num) || num < -0x80000000 || num > 0x7fffffff) continue;
    if (key === "HardwareThreadCount") h.numberOfProcessors = num;
    else if (key === "ProcessId") h.processId = num;
    else if (key === "ExpectedCPUSamplingRate") h.expectedCpuSamplingRate = num;
  }
}

/** One V6 block. */
function v6Block(r: ReaderState): number {
  const at = r.pos;
  r.end = r.len;
  if (at >= r.len) r.fail(NE_TRUNCATED, at, "input ends before the EndOfStream block");
  if (at + 4 > r.len) r.fail(NE_TRUNCATED, at, "input ends inside a block header");
  const word = r.u32("block header");
  const size = word & 0xffffff;
  const kind = word >>> 24;
  const content = r.pos;
  const contentEnd = content + size;
  if (kind === 0) {
    if (size !== 0) r.fail(NE_BAD_BLOCK, at, `EndOfStream block of size ${size}`);
    if (!r.haveTrace) r.fail(NE_BAD_TRACE, at, "stream ends without a Trace block");
    r.complete = true;
    if (r.pos < r.len) r.warn(NW_TRAILING_BYTES, r.pos, `${r.len - r.pos} bytes after the EndOfStream block`);
    return NEXT_END;
  }
  if (kind === BLOCK_TRACE) {
    if (r.haveTrace) r.fail(NE_BAD_TRACE, at, "second Trace block");
    r.end = Math.min(contentEnd, r.len);
    traceFields(r, true);
    r.haveTrace = true;
    r.blocks.add(kind, at, content, size, 0);
  } else {
    if (!r.haveTrace) r.fail(NE_BAD_TRACE, at, `block of kind ${kind} before the Trace block`);
    r.blocks.add(kind, at, content, size, 0);
    if (kind > BLOCK_LABEL_LIST) r.warn(NW_UNKNOWN_BLOCK_KIND, at, `block kind ${kind} skipped`);
    else readBlock(r, kind, at, content, contentEnd);
  }
  if (contentEnd > r.len) r.fail(NE_TRUNCATED, r.len, `input ends inside a block of kind ${kind} (${contentEnd - r.len} bytes missing)`);
  r.pos = contentEnd;
  return kind;
}

/** Decodes one block's content; damage inside it becomes a warning (the caller checks truncation). */
function readBlock(r: ReaderState, kind: number, blockStart: number, content: number, contentEnd: number): void {
  r.blockStart = blockStart;
  r.pos = content;
  r.end = Math.min(contentEnd, r.len);
  try {
    switch (kind) {
      case BLOCK_EVENT:
        if (r.version <= 3) v3EventBlock(r);
        else eventBlock(r, false);
        break;
      case BLOCK_METADATA:
        if (r.version === 6) v6MetadataBlock(r);
        else eventBlock(r, true);
        break;
      case BLOCK_STACK:
        stackBlock(r);
        break;
      case BLOCK_SEQUENCE_POINT:
        sequencePointBlock(r);
        break;
      case BLOCK_THREAD:
        threadBlock(r);
        break;
      case BLOCK_REMOVE_THREAD:
        removeThreadBlock(r);
        break;
      case BLOCK_LABEL_LIST:
        labelListBlock(r);
        break;
    }
  } catch (e) {
    if (!(e instanceof NettraceFormatError)) throw e;
    // A truncated block: the caller reports the truncation as the fatal error.
    if (contentEnd > r.len) return;
    r.warn(NW_BLOCK_DAMAGED, e.offset - r.base, `${e.reason}; rest of the block at ${r.base + blockStart} skipped`);
  }
}

/** The BLOCK_* kind of a FastSerialization block object of type `name` (a .netperf has event blocks only). */
export function blockKindNamed(name: string, nettrace: boolean): number {
  if (name === BLOCK_OBJECT_NAMES[BLOCK_EVENT]) return BLOCK_EVENT;
  if (nettrace) for (const kind of [BLOCK_METADATA, BLOCK_STACK, BLOCK_SEQUENCE_POINT]) if (name === BLOCK_OBJECT_NAMES[kind]) return kind;
  return BLOCK_UNKNOWN;
}
