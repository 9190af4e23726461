// Payloads of EventPipe events described by their metadata (EventSource, TraceLogging-style events):
// each field read by its type code (nettrace-format.md §7.4), packed without alignment. A value is what
// TraceEvent's DynamicTraceEventData gives: integers as numbers (64-bit ones as bigint), Boolean32 and
// Boolean8 as booleans, Char as a one-character string, GUIDs as text, DateTime as its FILETIME, arrays
// as arrays except arrays of UTF-16 or UTF-8 code units, which are strings, objects as records.

import {
  TC_OBJECT,
  TC_BOOLEAN,
  TC_CHAR,
  TC_SBYTE,
  TC_BYTE,
  TC_INT16,
  TC_UINT16,
  TC_INT32,
  TC_UINT32,
  TC_INT64,
  TC_UINT64,
  TC_SINGLE,
  TC_DOUBLE,
  TC_DECIMAL,
  TC_DATETIME,
  TC_GUID,
  TC_STRING,
  TC_ARRAY,
  TC_VARINT,
  TC_VARUINT,
  TC_FIXED_ARRAY,
  TC_UTF8_CODE_UNIT,
  TC_RELLOC,
  TC_DATALOC,
  TC_BOOLEAN8,
  type NettraceField,
  type NettraceType,
} from "../eventpipe/format.js";
import type { DecodedPayload, FieldValue } from "./clr-payload.js";
import { formatGuid } from "./guid.js";

/** Bytes of a fixed-size type code (0: not fixed). */
function fixedSize(code: number): number {
  switch (code) {
    case TC_SBYTE:
    case TC_BYTE:
    case TC_UTF8_CODE_UNIT:
    case TC_BOOLEAN8:
      return 1;
    case TC_CHAR:
    case TC_INT16:
    case TC_UINT16:
      return 2;
    case TC_BOOLEAN:
    case TC_INT32:
    case TC_UINT32:
    case TC_SINGLE:
    case TC_RELLOC:
    case TC_DATALOC:
      return 4;
    case TC_INT64:
    case TC_UINT64:
    case TC_DOUBLE:
    case TC_DATETIME:
      return 8;
    case TC_DECIMAL:
    case TC_GUID:
      return 16;
  }
  return 0;
}

const utf8 = new TextDecoder("utf-8");

class Cursor {
  truncated = false;
  constructor(
    readonly bytes: Uint8Array,
    readonly view: DataView,
    public pos: number,
    public end: number,
    /** Start of the payload (DataLoc offsets count from it). */
    readonly start: number,
  ) {}

  take(n: number): number {
    if (this.pos + n > this.end) {
      this.truncated = true;
      return -1;
    }
    const at = this.pos;
    this.pos += n;
    return at;
  }

  varint(): bigint | undefined {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) {
        this.truncated = true;
        return undefined;
      }
      const b = this.bytes[this.pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return BigInt.asUintN(64, v);
    }
    this.truncated = true;
    return undefined;
  }
}

function readValue(c: Cursor, t: NettraceType, depth: number): FieldValue | undefined {
  const { bytes, view } = c;
  const code = t.typeCode;
  const size = fixedSize(code);
  if (size) {
    const p = c.take(size);
    if (p < 0) return undefined;
    switch (code) {
      case TC_SBYTE:
        return view.getInt8(p);
      case TC_BYTE:
        return bytes[p];
      case TC_UTF8_CODE_UNIT:
        return String.fromCharCode(bytes[p]);
      case TC_BOOLEAN8:
        return bytes[p] !== 0;
      case TC_CHAR:
        return String.fromCharCode(view.getUint16(p, true));
      case TC_INT16:
        return view.getInt16(p, true);
      case TC_UINT16:
        return view.getUint16(p, true);
      case TC_BOOLEAN:
        return bytes[p] !== 0; // (TraceEvent tests the first byte)
      case TC_INT32:
        return view.getInt32(p, true);
      case TC_UINT32:
        return view.getUint32(p, true);
      case TC_SINGLE:
        return view.getFloat32(p, true);
      case TC_INT64:
        return view.getBigInt64(p, true);
      case TC_UINT64:
      case TC_DATETIME:
        return view.getBigUint64(p, true);
      case TC_DOUBLE:
        return view.getFloat64(p, true);
      case TC_GUID:
        return formatGuid(bytes, p);
      case TC_DECIMAL:
        return bytes.subarray(p, p + 16);
      case TC_RELLOC:
      case TC_DATALOC: {
        const loc = view.getUint32(p, true);
        const len = loc >>> 16,
          off = loc & 0xffff;
        const from = code === TC_RELLOC ? c.pos + off : c.start + off;
        if (!t.elementType || from + len > c.end) {
          c.truncated = true;
          return undefined;
        }
        const inner = new Cursor(bytes, view, from, from + len, c.start);
        const n = Math.floor(len / Math.max(1, fixedSize(t.elementType.typeCode)));
        return elements(inner, t.elementType, n, depth);
      }
    }
  }
  switch (code) {
    case TC_STRING: {
      let s = "";
      for (;;) {
        const p = c.take(2);
        if (p < 0) return s;
        const u = view.getUint16(p, true);
        if (u === 0) return s;
        s += String.fromCharCode(u);
      }
    }
    case TC_VARINT: {
      const v = c.varint();
      return v === undefined ? undefined : (v >> 1n) ^ -(v & 1n); // zig-zag
    }
    case TC_VARUINT:
      return c.varint();
    case TC_ARRAY: {
      const p = c.take(2);
      if (p < 0 || !t.elementType) return undefined;
      return elements(c, t.elementType, view.getUint16(p, true), depth);
    }
    case TC_FIXED_ARRAY:
      if (!t.elementType) return undefined;
      return elements(c, t.elementType, t.elementCount ?? 0, depth);
    case TC_OBJECT: {
      if (depth > 32) return undefined;
      const o: { [name: string]: FieldValue } = {};
      for (const f of t.fields ?? []) {
        const v = readValue(c, f, depth + 1);
        if (v === undefined) break;
        o[f.name] = v;
      }
      return o;
    }
  }
  return undefined;
}

/** `n` elements; code units become the string they spell. */
function elements(c: Cursor, t: NettraceType, n: number, depth: number): FieldValue | undefined {
  if (t.typeCode === TC_UTF8_CODE_UNIT) {
    const p = c.take(n);
    return p < 0 ? undefined : utf8.decode(c.bytes.subarray(p, p + n));
  }
  if (t.typeCode === TC_CHAR) {
    const p = c.take(2 * n);
    if (p < 0) return undefined;
    let s = "";
    for (let i = 0; i < n; i++) s += String.fromCharCode(c.view.getUint16(p + 2 * i, true));
    return s;
  }
  const out: FieldValue[] = [];
  for (let i = 0; i < n; i++) {
    const v = readValue(c, t, depth + 1);
    if (v === undefined) return undefined;
    out.push(v);
  }
  return out;
}

/** A payload decoded by its metadata, with the field descriptions it was read by. */
export interface DescribedPayload extends DecodedPayload {
  fields: readonly NettraceField[];
}

/**
 * The fields of a metadata-described payload at `offset` (`length` bytes) of `bytes`. Fields past the
 * payload's end are left out (`truncated`); bytes after the last field are ignored.
 */
export function decodeEventPipePayload(fields: readonly NettraceField[], bytes: Uint8Array, offset: number, length: number): DescribedPayload {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const c = new Cursor(bytes, view, offset, offset + length, offset);
  const names: string[] = [];
  const values: FieldValue[] = [];
  for (const f of fields) {
    if (c.pos >= c.end) {
      c.truncated = true;
      break;
    }
    const v = readValue(c, f, 0);
    if (v === undefined) break;
    names.push(f.name);
    values.push(v);
  }
  return { names, values, truncated: c.truncated, fields };
}
