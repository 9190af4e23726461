// Structure-aware mutation of ETL files, and the checks every mutated input must pass.
//
// A case is (seed, base): the base is a corpus file (large ones cut to a window of a few buffers
// after buffer 0), the bundled sample or a synthetic trace. The seed alone decides the window and
// the mutations, so `mutateCase(seed, base, donors)` rebuilds the same bytes for a replay.
//
// The mutators find the structure by walking the file as the format describes it: buffers by
// BufferSize, records up to each buffer's Offset/SavedOffset, EVENT_HEADER extended items, XPRESS
// tokens. Records of compressed buffers are reached by decompressing the buffer, editing the
// records and compressing it again; compressed streams are also damaged as bytes and as tokens.
//
// Shared by test/fuzz.test.ts (fixed seeds) and scripts/fuzz.mjs (a long campaign of random seeds).

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { openTrace, EtlFormatError, EtlDecodeError, type Trace, type OpenOptions } from "../../dist/bindings/index.js";
import { concatBytes } from "../../dist/bindings/decode/result/trace-data.js";
import { xpressCompress } from "../../dist/bindings/generator/xpress-compress.js";
import { mutateNettraceCase, nettraceBases } from "./mutate-nettrace.js";
import { mulberry32 } from "../../dist/bindings/generator/random.js";
import { compareEngines, traceDifferences, show, syntheticTrace, type Outcome } from "./engines.js";

export { syntheticTrace };

const HDR = 0x48;
const MAX_BUFFER = 64 << 20;

// ---------------------------------------------------------------------------------------------
// Little-endian access

const u16 = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8);
const u32 = (b: Uint8Array, at: number) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
const set16 = (b: Uint8Array, at: number, v: number) => {
  b[at] = v & 0xff;
  b[at + 1] = (v >>> 8) & 0xff;
};
const set32 = (b: Uint8Array, at: number, v: number) => {
  set16(b, at, v & 0xffff);
  set16(b, at + 2, (v >>> 16) & 0xffff);
};
const align8 = (x: number) => (x + 7) & ~7;
const hex = (x: number) => `0x${x.toString(16)}`;

const concat = (...parts: Uint8Array[]): Uint8Array => concatBytes(parts);

// ---------------------------------------------------------------------------------------------
// The file's structure

export interface BufferPlace {
  index: number;
  /** File offset of the buffer header. */
  at: number;
  /** BufferSize: bytes on disk. */
  size: number;
  saved: number;
  filled: number;
  flags: number;
  compressed: boolean;
  /** The input ends inside this buffer. */
  truncated: boolean;
}

export interface ExtItemPlace {
  /** Offset in the record. */
  at: number;
  itemSize: number;
  type: number;
  link: number;
  dataSize: number;
}

export type RecordKind = "system" | "compact" | "perfinfo" | "full" | "instance" | "event" | "message" | "opaque";

export interface RecordPlace {
  /** Offset in the record area (the bytes after the buffer header, decompressed if need be). */
  at: number;
  size: number;
  kind: RecordKind;
  headerType: number;
  /** Where Size is kept (0 or 4). */
  sizeAt: number;
  /** Fixed header size. */
  min: number;
  items: ExtItemPlace[];
}

export interface Layout {
  buffers: BufferPlace[];
  /** File offset after the last whole buffer (trailing bytes start here). */
  end: number;
}

/** Buffers by BufferSize, from offset 0 until a header is implausible or the input ends. */
export function walkFile(bytes: Uint8Array): Layout {
  const buffers: BufferPlace[] = [];
  let at = 0;
  while (at + HDR <= bytes.length) {
    const size = u32(bytes, at);
    if (size < HDR || size > MAX_BUFFER) break;
    const flags = u16(bytes, at + 0x34);
    const truncated = at + size > bytes.length;
    buffers.push({
      index: buffers.length,
      at,
      size,
      saved: u32(bytes, at + 4),
      filled: u32(bytes, at + 0x30),
      flags,
      compressed: (flags & 0x40) !== 0,
      truncated,
    });
    if (truncated) break;
    at += size;
  }
  return { buffers, end: at };
}

function classify(d: Uint8Array, p: number): { size: number; kind: RecordKind; sizeAt: number; min: number } | null {
  const m = u32(d, p);
  const b3 = m >>> 24;
  const ht = (m >>> 16) & 0xff;
  if ((b3 & 0xc0) === 0xc0) {
    if (ht === 1 || ht === 2) return { size: u16(d, p + 4), kind: "system", sizeAt: 4, min: 0x20 };
    if (ht === 3 || ht === 4) return { size: u16(d, p + 4), kind: "compact", sizeAt: 4, min: 0x18 };
    if (ht === 0x10 || ht === 0x11) return { size: u16(d, p + 4), kind: "perfinfo", sizeAt: 4, min: 0x10 };
    if (ht === 0x12 || ht === 0x13) return { size: m & 0xffff, kind: "event", sizeAt: 0, min: 0x50 };
    if (ht === 0x0a || ht === 0x14) return { size: m & 0xffff, kind: "full", sizeAt: 0, min: 0x30 };
    if (ht === 0x0b || ht === 0x15) return { size: m & 0xffff, kind: "instance", sizeAt: 0, min: 0x48 };
    return { size: m & 0xffff, kind: "opaque", sizeAt: 0, min: 4 };
  }
  if ((b3 & 0xf0) === 0x90) return { size: m & 0xffff, kind: "message", sizeAt: 0, min: 8 };
  if (b3 & 0x80) return { size: m & 0xffff, kind: "opaque", sizeAt: 0, min: 4 };
  return null;
}

/** The records of a record area, as far as they are sound. */
export function walkRecords(d: Uint8Array): RecordPlace[] {
  const out: RecordPlace[] = [];
  let p = 0;
  while (p + 8 <= d.length) {
    const m = u32(d, p);
    if (m === 0 || m === 0xffffffff) break;
    const c = classify(d, p);
    if (!c || c.size < c.min || p + c.size > d.length) break;
    const items: ExtItemPlace[] = [];
    if (c.kind === "event" && u16(d, p + 4) & 1) {
      let q = 0x50;
      for (let k = 0; k < 32 && q + 8 <= c.size; k++) {
        const item = { at: q, itemSize: u16(d, p + q), type: u16(d, p + q + 2), link: u16(d, p + q + 4), dataSize: u16(d, p + q + 6) };
        if (q + 8 + item.dataSize > c.size) break;
        items.push(item);
        q += align8(8 + item.dataSize);
        if (!(item.link & 1)) break;
      }
    }
    out.push({ at: p, size: c.size, kind: c.kind, headerType: (m >>> 16) & 0xff, sizeAt: c.sizeAt, min: c.min, items });
    p += align8(c.size);
  }
  return out;
}

/** End of an uncompressed buffer's records (buffer-relative), as the format's rule picks it. */
function recordEnd(b: BufferPlace): number {
  if (b.filled >= HDR && b.filled <= b.size) return b.filled;
  if (b.saved >= HDR && b.saved <= b.size) return b.saved;
  return b.size;
}

/** Expected decompressed length of a compressed buffer, or -1. */
function expectedLength(b: BufferPlace): number {
  if (b.filled >= HDR && b.filled <= MAX_BUFFER) return b.filled - HDR;
  if (b.saved >= HDR && b.saved <= MAX_BUFFER) return b.saved - HDR;
  return -1;
}

// ---------------------------------------------------------------------------------------------
// XPRESS (MS-XCA plain LZ77), decoded here independently of both engines, with the places of its
// flag words and match tokens so that they can be damaged on purpose.

export interface XpressScan {
  /** The output, or null when the stream does not produce `expected` bytes. */
  out: Uint8Array | null;
  flagWords: number[];
  /** Each match: its token's offset, the offsets of its extra length bytes, the output length before it. */
  matches: { at: number; extra: number[]; produced: number }[];
}

export function xpressScan(src: Uint8Array, expected: number): XpressScan {
  const out = new Uint8Array(expected);
  const flagWords: number[] = [];
  const matches: XpressScan["matches"] = [];
  const fail = { out: null, flagWords, matches };
  let ip = 0,
    op = 0,
    flags = 0,
    count = 0,
    half = -1;
  while (op < expected) {
    if (count === 0) {
      if (ip + 4 > src.length) return fail;
      flagWords.push(ip);
      flags = u32(src, ip);
      ip += 4;
      count = 32;
    }
    count--;
    if (((flags >>> count) & 1) === 0) {
      if (ip >= src.length) return fail;
      out[op++] = src[ip++];
      continue;
    }
    if (ip + 2 > src.length) return fail;
    const match = { at: ip, extra: [] as number[], produced: op };
    matches.push(match);
    const token = u16(src, ip);
    ip += 2;
    let length = token & 7;
    const offset = (token >>> 3) + 1;
    if (length === 7) {
      if (half < 0) {
        if (ip >= src.length) return fail;
        half = ip;
        match.extra.push(ip);
        length = src[ip++] & 0x0f;
      } else {
        match.extra.push(half);
        length = src[half] >>> 4;
        half = -1;
      }
      if (length === 15) {
        if (ip >= src.length) return fail;
        match.extra.push(ip);
        length = src[ip++];
        if (length === 255) {
          if (ip + 2 > src.length) return fail;
          match.extra.push(ip);
          length = u16(src, ip);
          ip += 2;
          if (length === 0) {
            if (ip + 4 > src.length) return fail;
            match.extra.push(ip);
            length = u32(src, ip);
            ip += 4;
          }
          if (length < 22) return fail;
          length -= 22;
        }
        length += 15;
      }
      length += 7;
    }
    length += 3;
    if (offset > op || op + length > expected) return fail;
    for (let k = 0; k < length; k++, op++) out[op] = out[op - offset];
  }
  return { out, flagWords, matches };
}

// ---------------------------------------------------------------------------------------------
// Record areas: the records of one buffer, to edit and put back

interface Area {
  buffer: BufferPlace;
  data: Uint8Array;
  records: RecordPlace[];
}

function openArea(bytes: Uint8Array, b: BufferPlace): Area | null {
  if (b.truncated) return null;
  let data: Uint8Array;
  if (!b.compressed) {
    data = bytes.slice(b.at + HDR, b.at + recordEnd(b));
  } else {
    const expected = expectedLength(b);
    if (expected < 0 || expected > 4 << 20) return null;
    const out = xpressScan(bytes.subarray(b.at + HDR, b.at + b.size), expected).out;
    if (!out) return null;
    data = out;
  }
  return { buffer: b, data, records: walkRecords(data) };
}

/** The file with the buffer's record area replaced by `data` (compressed again if it was). */
function closeArea(bytes: Uint8Array, area: Area, data: Uint8Array): Uint8Array {
  const b = area.buffer;
  const header = bytes.slice(b.at, b.at + HDR);
  let buffer: Uint8Array;
  if (b.compressed) {
    const body = xpressCompress(data);
    buffer = concat(header, body);
    set32(buffer, 0, buffer.length);
  } else {
    const end = recordEnd(b);
    if (data.length === end - HDR) {
      const out = bytes.slice();
      out.set(data, b.at + HDR);
      return out;
    }
    buffer = new Uint8Array(Math.max(b.size, align8(HDR + data.length))).fill(0xff);
    buffer.set(header);
    buffer.set(data, HDR);
    set32(buffer, 0, buffer.length);
  }
  set32(buffer, 4, HDR + data.length);
  set32(buffer, 0x30, HDR + data.length);
  return concat(bytes.subarray(0, b.at), buffer, bytes.subarray(b.at + b.size));
}

// ---------------------------------------------------------------------------------------------
// Cases

export interface Base {
  name: string;
  bytes: Uint8Array;
}

export interface Case {
  seed: number;
  base: string;
  /** What was done, in order (the window first, when the base was cut). */
  steps: string[];
  /** The mutator of each step. */
  mutators: string[];
  bytes: Uint8Array;
}

const layouts = new WeakMap<Uint8Array, Layout>();
function layoutOf(bytes: Uint8Array): Layout {
  let l = layouts.get(bytes);
  if (!l) layouts.set(bytes, (l = walkFile(bytes)));
  return l;
}

class Ctx {
  private cached: Layout | undefined;
  readonly int: (n: number) => number;

  constructor(
    public bytes: Uint8Array,
    readonly rand: () => number,
    readonly donors: readonly Base[],
  ) {
    this.int = (n: number) => Math.floor(rand() * n);
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }

  chance(p: number): boolean {
    return this.rand() < p;
  }

  get layout(): Layout {
    return (this.cached ??= walkFile(this.bytes));
  }

  replace(bytes: Uint8Array): void {
    this.bytes = bytes;
    this.cached = undefined;
  }

  /** After an edit in place. */
  touched(): void {
    this.cached = undefined;
  }

  buffer(pred: (b: BufferPlace) => boolean = () => true): BufferPlace | undefined {
    const bs = this.layout.buffers.filter(pred);
    return bs.length ? this.pick(bs) : undefined;
  }

  /** A random buffer's records (decompressed when needed) that have one matching `pred`. */
  area(pred: (r: RecordPlace) => boolean = () => true): { area: Area; rec: RecordPlace } | undefined {
    const bs = this.layout.buffers.filter((b) => !b.truncated);
    for (let tries = 0; tries < 6 && bs.length; tries++) {
      // buffer 0 (the logfile header) less often than the others
      const b = bs.length > 1 && this.chance(0.8) ? bs[1 + this.int(bs.length - 1)] : bs[0];
      const area = openArea(this.bytes, b);
      const recs = area?.records.filter(pred) ?? [];
      if (area && recs.length) return { area, rec: this.pick(recs) };
    }
    return undefined;
  }

  donor(): { name: string; bytes: Uint8Array; layout: Layout } {
    const d = this.donors.length ? this.pick(this.donors) : { name: "self", bytes: this.bytes };
    return { name: d.name, bytes: d.bytes, layout: layoutOf(d.bytes) };
  }

  randomBytes(n: number): Uint8Array {
    return Uint8Array.from({ length: n }, () => this.int(256));
  }
}

type Mutator = (c: Ctx) => string | null;

const where = (b: BufferPlace) => `buffer ${b.index} @${b.at}${b.compressed ? " (compressed)" : ""}`;
const recWhere = (a: Area, r: RecordPlace) => `${where(a.buffer)} record @+${r.at} ${r.kind}/${hex(r.headerType)} size ${r.size}`;

/** Edits one record of some buffer; `edit` changes `data` in place or returns a new area. */
function onRecord(
  c: Ctx,
  pred: (r: RecordPlace) => boolean,
  edit: (data: Uint8Array, r: RecordPlace, area: Area) => string | Uint8Array | [Uint8Array, string] | null,
): string | null {
  const found = c.area(pred);
  if (!found) return null;
  const { area, rec } = found;
  const data = area.data.slice();
  const what = recWhere(area, rec);
  const r = edit(data, rec, area);
  if (r === null) return null;
  const [next, detail] = typeof r === "string" ? [data, r] : r instanceof Uint8Array ? [r, ""] : r;
  c.replace(closeArea(c.bytes, area, next));
  return `${what}: ${detail}`;
}

const SIZE_FIELD_VALUES = (b: BufferPlace, len: number) => [
  0,
  1,
  0x47,
  0x48,
  0x49,
  0x50,
  b.size - 1,
  b.size + 1,
  b.size - 8,
  b.size + 8,
  b.size * 2,
  b.size >>> 1,
  len - b.at,
  len - b.at + 1,
  0x7fffffff,
  0xffffffff,
  MAX_BUFFER,
  MAX_BUFFER + 1,
];

const MUTATORS: Record<string, Mutator> = {
  // --- buffer headers ---------------------------------------------------------------------
  "buf.size": (c) => {
    const b = c.buffer();
    if (!b) return null;
    const v = (c.chance(0.85) ? c.pick(SIZE_FIELD_VALUES(b, c.bytes.length)) : c.int(0x100000000)) >>> 0;
    set32(c.bytes, b.at, v);
    c.touched();
    return `${where(b)}: BufferSize ${b.size} -> ${v}`;
  },
  "buf.fill": (c) => {
    const b = c.buffer();
    if (!b) return null;
    const end = b.compressed ? b.filled : recordEnd(b);
    const vals = [
      0,
      0x47,
      0x48,
      0x49,
      0x4c,
      end - 1,
      end + 1,
      end - 8,
      end + 8,
      end + 4096,
      b.size,
      b.size + 1,
      b.size - 1,
      0x10000,
      MAX_BUFFER,
      MAX_BUFFER + 1,
      0xffffffff,
      0x48 + ((c.int(b.size) >> 3) << 3),
    ];
    const v = (c.chance(0.85) ? c.pick(vals) : c.int(0x100000000)) >>> 0;
    const which = c.pick(["Offset", "SavedOffset", "both"] as const);
    if (which !== "SavedOffset") set32(c.bytes, b.at + 0x30, v);
    if (which !== "Offset") set32(c.bytes, b.at + 4, v);
    c.touched();
    return `${where(b)}: ${which} -> ${v}`;
  },
  "buf.fill-all": (c) => {
    const bs = c.layout.buffers.filter((b) => b.index > 0);
    if (!bs.length) return null;
    const v = c.pick([0, 0x47, MAX_BUFFER, MAX_BUFFER - 1, 16 << 20, 0xffffffff]) >>> 0;
    for (const b of bs) set32(c.bytes, b.at + 0x30, v);
    c.touched();
    return `Offset of every buffer after buffer 0 -> ${v}`;
  },
  "buf.flags": (c) => {
    const b = c.buffer();
    if (!b) return null;
    const r = c.int(5);
    const v = r === 0 ? b.flags ^ 0x40 : r === 1 ? b.flags ^ 0x20 : r === 2 ? b.flags ^ (1 << c.int(16)) : r === 3 ? b.flags | 0xff80 : c.int(0x10000);
    set16(c.bytes, b.at + 0x34, v);
    c.touched();
    return `${where(b)}: BufferFlag ${hex(b.flags)} -> ${hex(v)}`;
  },
  "buf.processor": (c) => {
    const b = c.buffer();
    if (!b) return null;
    const n = c.layout.buffers.length;
    const v = c.pick([0, 1, n, 0x07ff, 0x0800, 0x0801, 0xff, 0x100, 0xffff, c.int(0x10000), u16(c.bytes, b.at + 0x28) + 1]) & 0xffff;
    set16(c.bytes, b.at + 0x28, v);
    return `${where(b)}: ProcessorIndex -> ${v}`;
  },
  "buf.type": (c) => {
    const b = c.buffer();
    if (!b) return null;
    const v = c.pick([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xffff, c.int(0x10000)]);
    set16(c.bytes, b.at + 0x36, v);
    return `${where(b)}: BufferType -> ${v}`;
  },
  "buf.state": (c) => {
    const b = c.chance(0.6) ? c.layout.buffers[0] : c.buffer();
    if (!b) return null;
    const v = c.pick([0, 2, 3, 4, 5, 0x10002, 0x10004, 0xffff, c.int(0x100000000)]) >>> 0;
    set32(c.bytes, b.at + 0x2c, v);
    return `${where(b)}: State -> ${hex(v)}`;
  },
  "buf.sequence": (c) => {
    const b = c.buffer();
    if (!b) return null;
    const at = b.at + c.pick([0x10, 0x18]);
    const v = c.pick([0, 1, 0xffffffff, c.int(0x100000000)]);
    set32(c.bytes, at, v);
    set32(c.bytes, at + 4, c.pick([0, 0x80000000, 0xffffffff, c.int(0x100000000)]));
    return `${where(b)}: ${at - b.at === 0x10 ? "TimeStamp" : "SequenceNumber"} changed`;
  },
  "buf.header-bytes": (c) => {
    const b = c.buffer();
    if (!b) return null;
    const n = 1 + c.int(4);
    const at: number[] = [];
    for (let k = 0; k < n; k++) {
      const o = b.at + c.int(HDR);
      c.bytes[o] = c.int(256);
      at.push(o - b.at);
    }
    c.touched();
    return `${where(b)}: header bytes ${at.map(hex).join(",")} overwritten`;
  },

  // --- the logfile header (first record of buffer 0) ----------------------------------------
  "log.field": (c) => {
    const b = c.layout.buffers[0];
    if (!b || b.compressed || b.truncated) return null;
    const rec = HDR;
    if (rec + 0x20 > c.bytes.length) return null;
    const p = rec + 0x20;
    const wide = c.bytes[rec + 2] !== 1;
    const fields: [string, number, number[]][] = [
      ["BufferSize", 0, [0, 0x48, 0x1000, 0x7fffffff, 0xffffffff]],
      ["NumberOfProcessors", 0x0c, [0, 1, 2, 255, 256, 2048, 0xffffffff]],
      ["TimerResolution", 0x18, [0, 1, 0xffffffff]],
      ["LogFileMode", 0x20, [0, 0x04000000, 0x04000001, 0xffffffff, u32(c.bytes, p + 0x20) ^ 0x04000000]],
      ["BuffersWritten", 0x24, [0, 1, 0xffffffff]],
      ["PointerSize", 0x2c, [0, 4, 8, 7, 16, 0xffffffff]],
      ["PerfFreq", wide ? 0x100 : 0xf8, [0, 1, 0xffffffff]],
      ["StartTime", wide ? 0x108 : 0x100, [0, 0xffffffff]],
      ["ReservedFlags", wide ? 0x110 : 0x108, [0, 1, 2, 3, 4, 0xffffffff]],
      ["LoggerName", wide ? 0x118 : 0x110, [0x00410041, 0xffffffff]],
    ];
    const [name, off, vals] = c.pick(fields);
    if (p + off + 4 > b.at + recordEnd(b)) return null;
    const v = c.pick(vals) >>> 0;
    set32(c.bytes, p + off, v);
    if (name === "PerfFreq" || name === "StartTime") set32(c.bytes, p + off + 4, c.pick([0, 0x80000000, 0xffffffff]));
    c.touched();
    return `logfile header ${name} -> ${v}`;
  },

  // --- record headers ---------------------------------------------------------------------
  "rec.size": (c) =>
    onRecord(
      c,
      () => true,
      (d, r) => {
        const left = d.length - r.at;
        const v =
          (c.chance(0.85)
            ? c.pick([
                0,
                1,
                3,
                4,
                7,
                8,
                r.min - 1,
                r.min,
                r.min + 1,
                r.size - 1,
                r.size + 1,
                r.size - 8,
                r.size + 7,
                r.size + 8,
                left,
                left + 1,
                left - 1,
                0x8000,
                0xffff,
              ])
            : c.int(0x10000)) & 0xffff;
        set16(d, r.at + r.sizeAt, v);
        return `Size -> ${v}`;
      },
    ),
  "rec.type": (c) =>
    onRecord(
      c,
      () => true,
      (d, r) => {
        const v = c.pick([1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x3c, 0xff, 0, c.int(256)]);
        d[r.at + 2] = v;
        return `header type -> ${hex(v)}`;
      },
    ),
  "rec.marker": (c) =>
    onRecord(
      c,
      () => true,
      (d, r) => {
        if (c.chance(0.25)) {
          const v = c.pick([0, 0xffffffff]);
          set32(d, r.at, v);
          return `marker -> ${hex(v)}`;
        }
        const v = c.pick([0xc0, 0x90, 0x80, 0x00, 0xb0, 0x40, 0xff, 0xd0, 0x9f, 0xa0, c.int(256)]);
        d[r.at + 3] = v;
        return `marker flags -> ${hex(v)}`;
      },
    ),
  "rec.event-flags": (c) =>
    onRecord(
      c,
      (r) => r.kind === "event",
      (d, r) => {
        const old = u16(d, r.at + 4);
        const v = c.chance(0.8) ? old ^ c.pick([1, 1, 1, 2, 4, 8, 0x10, 0x20, 0x40, 0x80, 0x100, 0x200]) : c.int(0x10000);
        set16(d, r.at + 4, v);
        return `EVENT_HEADER Flags ${hex(old)} -> ${hex(v)}`;
      },
    ),
  "rec.ext-item": (c) =>
    onRecord(
      c,
      (r) => r.kind === "event",
      (d, r) => {
        if (!r.items.length) {
          // make one: the extended-item flag and an item header at 0x50 of any shape
          if (r.size < 0x58) return null;
          set16(d, r.at + 4, u16(d, r.at + 4) | 1);
          const dataSize = c.pick([0, 1, 8, r.size - 0x58, r.size - 0x57, 0xffff, c.int(r.size)]) & 0xffff;
          set16(d, r.at + 0x50, c.pick([align8(8 + dataSize), 0, 8, c.int(0x10000)]) & 0xffff);
          set16(d, r.at + 0x52, c.int(20));
          set16(d, r.at + 0x54, c.int(4));
          set16(d, r.at + 0x56, dataSize);
          return `new extended item, DataSize ${dataSize}`;
        }
        const item = c.pick(r.items);
        const at = r.at + item.at;
        const left = r.size - item.at;
        const field = c.int(5);
        if (field === 0) {
          const v = c.pick([0, 1, 7, 8, 9, item.itemSize - 8, item.itemSize + 8, left, 0xffff, c.int(0x10000)]) & 0xffff;
          set16(d, at, v);
          return `ext item @+${item.at} ItemSize ${item.itemSize} -> ${v}`;
        }
        if (field === 1) {
          const v = c.pick([0, 1, 2, 3, 5, 6, 9, 10, 11, 12, 13, 14, 15, 16, 0xffff, c.int(0x10000)]);
          set16(d, at + 2, v);
          return `ext item @+${item.at} ExtType ${item.type} -> ${v}`;
        }
        if (field === 2) {
          const v = c.chance(0.7) ? item.link ^ 1 : c.int(0x10000);
          set16(d, at + 4, v);
          return `ext item @+${item.at} Linkage ${item.link} -> ${v}`;
        }
        if (field === 3) {
          const v = c.pick([0, 1, item.dataSize - 1, item.dataSize + 1, item.dataSize + 8, left - 8, left - 7, left, 0xffff, c.int(0x10000)]) & 0xffff;
          set16(d, at + 6, v);
          return `ext item @+${item.at} DataSize ${item.dataSize} -> ${v}`;
        }
        // every item links to a next one: the walk runs into the user data
        for (const it of r.items) set16(d, r.at + it.at + 4, 1);
        return `all ${r.items.length} ext items linked`;
      },
    ),
  "rec.ext-data": (c) =>
    onRecord(
      c,
      (r) => r.items.some((i) => i.dataSize > 0),
      (d, r) => {
        // TraceLogging schemas (11) and provider traits (12) name events and providers
        const items = r.items.filter((i) => i.dataSize > 0);
        const item = items.find((i) => (i.type === 11 || i.type === 12) && c.chance(0.7)) ?? c.pick(items);
        const at = r.at + item.at + 8;
        const kind = c.int(3);
        if (kind === 0) {
          const n = 1 + c.int(4);
          for (let k = 0; k < n; k++) d[at + c.int(item.dataSize)] = c.int(256);
          return `ext item type ${item.type}: ${n} data bytes overwritten`;
        }
        if (kind === 1) {
          for (let o = at; o < at + item.dataSize; o++) if (d[o] === 0) d[o] = 0x43;
          return `ext item type ${item.type}: no NUL left in its data`;
        }
        const o = c.int(Math.max(1, item.dataSize - 1));
        set16(d, at + o, c.pick([0, 0xffff, item.dataSize, item.dataSize + 1]));
        return `ext item type ${item.type}: u16 @+${o} of its data set to a boundary`;
      },
    ),
  "rec.many-types": (c) =>
    onRecord(
      c,
      () => true,
      (d, r, area) => {
        // every record of the buffer a new event type: id, version and opcode at random
        for (const x of area.records) {
          if (x.kind === "event") {
            set16(d, x.at + 0x28, c.int(0x10000));
            d[x.at + 0x2a] = c.int(256);
            d[x.at + 0x2d] = c.int(256);
          } else if (x.kind === "system" || x.kind === "compact" || x.kind === "perfinfo") {
            d[x.at + 6] = c.int(256);
          } else if (x.kind === "full" || x.kind === "instance") {
            d[x.at + 4] = c.int(256);
            set16(d, x.at + 6, c.int(0x10000));
          } else if (x.kind === "message") {
            set16(d, x.at + 4, c.int(0x10000));
          }
        }
        return `ids of all ${area.records.length} records of the buffer randomized`;
      },
    ),
  "rec.many-providers": (c) =>
    onRecord(
      c,
      () => true,
      (d, r, area) => {
        // every record of the buffer its own provider: GUIDs, kernel groups
        const few = c.chance(0.3);
        for (const x of area.records) {
          if (x.kind === "event" || x.kind === "full" || x.kind === "instance") {
            if (few) d[x.at + 0x18] = c.int(3);
            else for (let k = 0; k < 16; k++) d[x.at + 0x18 + k] = c.int(256);
          } else if (x.kind === "system" || x.kind === "compact" || x.kind === "perfinfo") {
            d[x.at + 7] = c.int(256);
          }
        }
        return `providers of all ${area.records.length} records of the buffer randomized${few ? " (few distinct)" : ""}`;
      },
    ),
  "rec.system-ext": (c) =>
    onRecord(
      c,
      (r) => r.kind === "system" || r.kind === "compact" || r.kind === "perfinfo",
      (d, r) => {
        const old = u16(d, r.at);
        const v = c.pick([old | 0x8000, (old & 0xf8ff) | (c.int(8) << 8), old | 0x8700, old ^ (1 << (11 + c.int(4))), c.int(0x10000)]);
        set16(d, r.at, v);
        return `Version ${hex(old)} -> ${hex(v)} (PEBS/PMC)`;
      },
    ),
  "rec.wpp-options": (c) =>
    onRecord(
      c,
      (r) => r.kind === "message",
      (d, r) => {
        const v = c.chance(0.7) ? c.int(0x100) : c.int(0x10000);
        set16(d, r.at + 6, v);
        return `OptionFlags -> ${hex(v)}`;
      },
    ),
  "rec.header-bytes": (c) =>
    onRecord(
      c,
      (r) => r.min > 4,
      (d, r) => {
        const n = 1 + c.int(4);
        const at: number[] = [];
        for (let k = 0; k < n; k++) {
          const o = 4 + c.int(r.min - 4);
          d[r.at + o] = c.int(256);
          at.push(o);
        }
        return `header bytes ${at.map(hex).join(",")} overwritten`;
      },
    ),
  "rec.payload": (c) =>
    onRecord(
      c,
      (r) => r.size > r.min,
      (d, r) => {
        const len = r.size - r.min;
        const o = r.min + c.int(len);
        if (c.chance(0.5) && o + 4 <= r.size) {
          // a length, count or string end at a boundary
          const v = c.pick([0, 1, 0xffff, 0xffffffff, 0x7fffffff, len, len + 1, 0x10000]) >>> 0;
          if (c.chance(0.5)) set32(d, r.at + o, v);
          else set16(d, r.at + o, v & 0xffff);
          return `payload @+${o} -> ${v}`;
        }
        const n = 1 + c.int(8);
        for (let k = 0; k < n; k++) d[r.at + r.min + c.int(len)] = c.int(256);
        return `${n} payload bytes overwritten`;
      },
    ),
  "rec.strings": (c) =>
    onRecord(
      c,
      (r) => r.size - r.min >= 2,
      (d, r) => {
        // no NUL left in the payload: every string runs to its end
        let n = 0;
        for (let o = r.at + r.min; o + 1 < r.at + r.size; o += 2) {
          if (d[o] === 0 && d[o + 1] === 0) {
            d[o] = 0x41;
            n++;
          }
        }
        for (let o = r.at + r.min; o < r.at + r.size; o++) if (d[o] === 0) d[o] = 0x42;
        return n ? `${n} UTF-16 NULs (and every zero byte) in the payload replaced` : null;
      },
    ),
  "rec.timestamp": (c) =>
    onRecord(
      c,
      (r) => r.kind !== "opaque" && r.kind !== "message",
      (d, r) => {
        const at = r.at + (r.kind === "perfinfo" ? 8 : 0x10);
        const [lo, hi] = c.pick([
          [0, 0],
          [0xffffffff, 0xffffffff],
          [0xffffffff, 0x7fffffff],
          [0, 0x80000000],
          [1, 0],
          [c.int(0x100000000), c.int(0x100000000)],
        ]);
        set32(d, at, lo);
        set32(d, at + 4, hi);
        return `timestamp -> 0x${hi.toString(16).padStart(8, "0")}${lo.toString(16).padStart(8, "0")}`;
      },
    ),
  "rec.drop": (c) =>
    onRecord(
      c,
      () => true,
      (d, r) => {
        const end = Math.min(d.length, r.at + align8(r.size));
        return [concat(d.subarray(0, r.at), d.subarray(end)), "dropped"];
      },
    ),
  "rec.duplicate": (c) =>
    onRecord(
      c,
      () => true,
      (d, r) => {
        const end = Math.min(d.length, r.at + align8(r.size));
        return [concat(d.subarray(0, end), d.subarray(r.at, end), d.subarray(end)), "duplicated"];
      },
    ),
  "rec.splice": (c) => {
    const donor = c.donor();
    const bs = donor.layout.buffers.filter((b) => !b.truncated);
    if (!bs.length) return null;
    const db = c.pick(bs);
    const darea = openArea(donor.bytes, db);
    if (!darea || !darea.records.length) return null;
    const dr = c.pick(darea.records);
    const piece = darea.data.slice(dr.at, Math.min(darea.data.length, dr.at + align8(dr.size)));
    const replace = c.chance(0.5);
    return onRecord(
      c,
      () => true,
      (d, r) => {
        const end = Math.min(d.length, r.at + align8(r.size));
        const next = replace ? concat(d.subarray(0, r.at), piece, d.subarray(end)) : concat(d.subarray(0, r.at), piece, d.subarray(r.at));
        return [next, `${replace ? "replaced by" : "preceded by"} ${donor.name} buffer ${db.index} record @+${dr.at} ${dr.kind} size ${dr.size}`];
      },
    );
  },

  // --- XPRESS streams -----------------------------------------------------------------------
  "xp.flip": (c) => {
    const b = c.buffer((x) => x.compressed && !x.truncated && x.size > HDR);
    if (!b) return null;
    const n = 1 + c.int(6);
    for (let k = 0; k < n; k++) c.bytes[b.at + HDR + c.int(b.size - HDR)] = c.int(256);
    c.touched();
    return `${where(b)}: ${n} stream bytes overwritten`;
  },
  "xp.insert": (c) => {
    const b = c.buffer((x) => x.compressed && !x.truncated);
    if (!b) return null;
    const at = b.at + HDR + c.int(b.size - HDR + 1);
    const ins = c.chance(0.3) ? new Uint8Array(1 + c.int(16)).fill(c.pick([0, 0xff])) : c.randomBytes(1 + c.int(16));
    const reframe = c.chance(0.7);
    const out = concat(c.bytes.subarray(0, at), ins, c.bytes.subarray(at));
    if (reframe) set32(out, b.at, b.size + ins.length);
    c.replace(out);
    return `${where(b)}: ${ins.length} bytes inserted at stream +${at - b.at - HDR}${reframe ? ", BufferSize grown" : ""}`;
  },
  "xp.delete": (c) => {
    const b = c.buffer((x) => x.compressed && !x.truncated && x.size > HDR + 1);
    if (!b) return null;
    const body = b.size - HDR;
    const n = 1 + c.int(Math.min(16, body - 1));
    const at = b.at + HDR + c.int(body - n + 1);
    const reframe = c.chance(0.7);
    const out = concat(c.bytes.subarray(0, at), c.bytes.subarray(at + n));
    if (reframe) set32(out, b.at, b.size - n);
    c.replace(out);
    return `${where(b)}: ${n} bytes deleted at stream +${at - b.at - HDR}${reframe ? ", BufferSize shrunk" : ""}`;
  },
  "xp.cut": (c) => {
    const b = c.buffer((x) => x.compressed && !x.truncated);
    if (!b) return null;
    const keep = c.int(b.size - HDR);
    const out = concat(c.bytes.subarray(0, b.at + HDR + keep), c.bytes.subarray(b.at + b.size));
    set32(out, b.at, HDR + keep);
    c.replace(out);
    return `${where(b)}: stream cut to ${keep} of ${b.size - HDR} bytes, BufferSize to match`;
  },
  "xp.flag-word": (c) => xpToken(c, "flag"),
  "xp.match-length": (c) => xpToken(c, "length"),
  "xp.match-offset": (c) => xpToken(c, "offset"),

  // --- truncation -----------------------------------------------------------------------------
  "cut.buffer": (c) => {
    const b = c.buffer();
    if (!b) return null;
    const d = c.pick([-8, -4, -1, 0, 1, 4, 8, 0x20, 0x47, 0x48, 0x49, 0x4c, 0x50]);
    return cutAt(c, b.at + d, `at ${where(b)} ${d >= 0 ? "+" : ""}${d}`);
  },
  "cut.buffer-end": (c) => {
    const b = c.buffer((x) => !x.truncated);
    if (!b) return null;
    const d = c.pick([-1, -4, -8, -0x48, 1]);
    return cutAt(c, b.at + b.size + d, `${d} from the end of ${where(b)}`);
  },
  "cut.record-header": (c) => {
    const b = c.buffer((x) => !x.compressed && !x.truncated);
    if (!b) return null;
    const a = openArea(c.bytes, b);
    if (!a || !a.records.length) return null;
    const r = c.pick(a.records);
    const o = 1 + c.int(r.min - 1);
    return cutAt(c, b.at + HDR + r.at + o, `inside the header of ${recWhere(a, r)} (+${o})`);
  },
  "cut.record-payload": (c) => {
    const b = c.buffer((x) => !x.compressed && !x.truncated);
    if (!b) return null;
    const a = openArea(c.bytes, b);
    const rs = a?.records.filter((r) => r.size > r.min) ?? [];
    if (!a || !rs.length) return null;
    const r = c.pick(rs);
    const o = r.min + c.int(r.size - r.min);
    return cutAt(c, b.at + HDR + r.at + o, `inside the payload of ${recWhere(a, r)} (+${o})`);
  },
  "cut.stream": (c) => {
    const b = c.buffer((x) => x.compressed && !x.truncated);
    if (!b) return null;
    const o = c.int(b.size - HDR);
    return cutAt(c, b.at + HDR + o, `inside the stream of ${where(b)} (+${o})`);
  },
  "cut.anywhere": (c) => cutAt(c, 1 + c.int(c.bytes.length - 1), "anywhere"),

  // --- splicing -----------------------------------------------------------------------------
  "splice.donor-buffer": (c) => {
    const donor = c.donor();
    const bs = donor.layout.buffers.filter((b) => !b.truncated);
    if (!bs.length) return null;
    const db = bs.length > 1 && c.chance(0.9) ? bs[1 + c.int(bs.length - 1)] : bs[0];
    const piece = donor.bytes.subarray(db.at, db.at + db.size);
    const ours = c.layout.buffers.filter((b) => !b.truncated);
    const target = ours.length ? c.pick(ours) : undefined;
    const replace = target !== undefined && c.chance(0.4);
    const at = target ? (replace || c.chance(0.5) ? target.at : target.at + target.size) : c.layout.end;
    const rest = replace ? target!.at + target!.size : at;
    c.replace(concat(c.bytes.subarray(0, at), piece, c.bytes.subarray(rest)));
    return `${donor.name} ${where(db)} ${replace ? `replaces ${where(target!)}` : `inserted at ${at}`}`;
  },
  "splice.duplicate-buffer": (c) => {
    const b = c.buffer((x) => !x.truncated);
    if (!b) return null;
    const piece = c.bytes.slice(b.at, b.at + b.size);
    const at = c.chance(0.6) ? b.at + b.size : c.layout.end;
    c.replace(concat(c.bytes.subarray(0, at), piece, c.bytes.subarray(at)));
    return `${where(b)} copied to ${at}`;
  },
  "splice.drop-buffer": (c) => {
    const b = c.layout.buffers.length > 1 && c.chance(0.9) ? c.buffer((x) => x.index > 0 && !x.truncated) : c.layout.buffers[0];
    if (!b || b.truncated) return null;
    c.replace(concat(c.bytes.subarray(0, b.at), c.bytes.subarray(b.at + b.size)));
    return `${where(b)} dropped`;
  },
  "splice.swap-buffers": (c) => {
    const bs = c.layout.buffers.filter((b) => !b.truncated);
    if (bs.length < 2) return null;
    const i = c.int(bs.length - 1);
    const x = bs[i],
      y = bs[i + 1];
    c.replace(concat(c.bytes.subarray(0, x.at), c.bytes.subarray(y.at, y.at + y.size), c.bytes.subarray(x.at, x.at + x.size), c.bytes.subarray(y.at + y.size)));
    return `buffers ${x.index} and ${y.index} swapped`;
  },
  "splice.junk": (c) => {
    const bs = c.layout.buffers;
    const at = bs.length > 1 && c.chance(0.7) ? c.pick(bs.slice(1)).at : c.layout.end;
    const size = c.pick([1, 3, 4, 8, 0x47, 0x48, 0x4c, 100, 4097, 65536 + 5]);
    const kind = c.int(4);
    let junk: Uint8Array;
    if (kind === 0) junk = c.randomBytes(size);
    else if (kind === 1) junk = new Uint8Array(size);
    else if (kind === 2) junk = new Uint8Array(size).fill(0xff);
    else {
      // the header of a buffer without its body: plausible at a glance
      const b = c.pick(bs.length ? bs : [{ at: 0 } as BufferPlace]);
      junk = c.bytes.slice(b.at, Math.min(c.bytes.length, b.at + HDR + c.int(64)));
    }
    c.replace(concat(c.bytes.subarray(0, at), junk, c.bytes.subarray(at)));
    return `${junk.length} bytes of ${["random bytes", "zeros", "0xff", "a buffer header"][kind]} inserted at ${at}`;
  },

  // --- plain damage -----------------------------------------------------------------------------
  "flip.bytes": (c) => {
    const n = 1 + c.int(16);
    for (let k = 0; k < n; k++) c.bytes[c.int(c.bytes.length)] = c.int(256);
    c.touched();
    return `${n} random bytes overwritten`;
  },
  "flip.bits": (c) => {
    const n = 1 + c.int(8);
    for (let k = 0; k < n; k++) c.bytes[c.int(c.bytes.length)] ^= 1 << c.int(8);
    c.touched();
    return `${n} bits flipped`;
  },
  "flip.run": (c) => {
    const n = 1 + c.int(64);
    const at = c.int(c.bytes.length);
    c.bytes.fill(c.pick([0, 0xff, c.int(256)]), at, at + n);
    c.touched();
    return `${n} bytes at ${at} filled`;
  },
};

function cutAt(c: Ctx, at: number, what: string): string | null {
  if (at <= 0 || at >= c.bytes.length) return null;
  c.replace(c.bytes.slice(0, at));
  return `cut at ${at} (${what})`;
}

/** Damages a flag word or a match token of a compressed buffer's stream, found by decoding it. */
function xpToken(c: Ctx, what: "flag" | "length" | "offset"): string | null {
  const b = c.buffer((x) => x.compressed && !x.truncated);
  if (!b) return null;
  const expected = expectedLength(b);
  if (expected < 0 || expected > 4 << 20) return null;
  const s0 = b.at + HDR;
  const scan = xpressScan(c.bytes.subarray(s0, b.at + b.size), expected);
  const tag = `${where(b)}: `;
  if (what === "flag") {
    if (!scan.flagWords.length) return null;
    const at = c.pick(scan.flagWords);
    const old = u32(c.bytes, s0 + at);
    const v = c.pick([0xffffffff, 0, ~old >>> 0, (old ^ (1 << c.int(32))) >>> 0, c.int(0x100000000)]) >>> 0;
    set32(c.bytes, s0 + at, v);
    c.touched();
    return `${tag}flag word @+${at} ${hex(old)} -> ${hex(v)}`;
  }
  if (!scan.matches.length) return null;
  const m = c.pick(scan.matches);
  const token = u16(c.bytes, s0 + m.at);
  if (what === "offset") {
    const off = c.pick([m.produced, m.produced + 1, m.produced + 2, 8192, 1]);
    const v = (((off - 1) & 0x1fff) << 3) | (token & 7);
    set16(c.bytes, s0 + m.at, v);
    c.touched();
    return `${tag}match @+${m.at} (output ${m.produced}) offset -> ${off}`;
  }
  const kind = c.int(4);
  if (kind === 0 || !m.extra.length) {
    // length 7: takes (or shares) a length nibble
    set16(c.bytes, s0 + m.at, token | 7);
    c.touched();
    return `${tag}match @+${m.at} length bits -> 7`;
  }
  if (kind === 1) {
    const at = c.pick(m.extra);
    const v = c.pick([0x0f, 0xf0, 0xff, 0x00, c.int(256)]);
    c.bytes[s0 + at] = v;
    c.touched();
    return `${tag}match @+${m.at} length byte @+${at} -> ${hex(v)}`;
  }
  // an extended length spelled out in full: nibble 15, byte 255, u16 0, u32
  const long = c.pick([0, 21, 22, 23, 0xffff, 0x10000, 0xffffffe6, 0xffffffe7, 0xffffffff, expected - m.produced + 22, c.int(0x100000000)]) >>> 0;
  const ins = new Uint8Array(8);
  ins[0] = 0xff;
  ins[1] = 0xff;
  set32(ins, 4, long);
  const at = s0 + m.at + 2;
  const out = concat(c.bytes.subarray(0, s0 + m.at), Uint8Array.of(token | 7, token >>> 8), ins, c.bytes.subarray(at));
  set32(out, b.at, b.size + ins.length);
  c.replace(out);
  return `${tag}match @+${m.at} given length ${long} (u32 form)`;
}

export const MUTATOR_NAMES = Object.keys(MUTATORS);

/** Groups of mutators and how often each group is chosen. */
const GROUPS: [string, number][] = [
  ["buf.", 16],
  ["log.", 4],
  ["rec.", 26],
  ["xp.", 14],
  ["cut.", 10],
  ["splice.", 14],
  ["flip.", 12],
];

/** A window of a large base: buffer 0 and a few consecutive buffers after it. */
function windowOf(base: Base, rand: () => number): { bytes: Uint8Array; step?: string } {
  const { buffers } = layoutOf(base.bytes);
  const whole = buffers.filter((b) => !b.truncated);
  if (base.bytes.length <= 400_000 || whole.length < 3) return { bytes: base.bytes.slice() };
  let budget = 400_000 - whole[0].size;
  const first = 1 + Math.floor(rand() * (whole.length - 1));
  let last = first;
  const most = 1 + Math.floor(rand() * 6);
  while (last + 1 < whole.length && last - first + 1 < most && budget - whole[last].size > whole[last + 1].size) budget -= whole[last++].size;
  const b0 = whole[0],
    from = whole[first].at,
    to = whole[last].at + whole[last].size;
  // what follows the last whole buffer (a partial buffer, a zero tail) goes with a window that reaches it
  const tail = last === whole.length - 1 ? base.bytes.subarray(to) : new Uint8Array(0);
  const bytes = concat(base.bytes.subarray(0, b0.size), base.bytes.subarray(from, to), tail);
  return { bytes, step: `window: buffer 0 and buffers ${first}..${last} of ${whole.length}` };
}

/**
 * The mutated input of case `seed` on `base`. `only` (comma-separated prefixes such as "xp.,rec.size")
 * restricts the mutators.
 */
export function mutateCase(seed: number, base: Base, donors: readonly Base[] = [], only?: string): Case {
  const rand = mulberry32(seed);
  const steps: string[] = [];
  const mutators: string[] = [];
  const w = windowOf(base, rand);
  if (w.step) steps.push(w.step);
  const c = new Ctx(w.bytes, rand, donors);
  const prefixes = only
    ? only
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean)
    : [];
  const allowed = prefixes.length ? MUTATOR_NAMES.filter((n) => prefixes.some((p) => n.startsWith(p))) : MUTATOR_NAMES;
  if (!allowed.length) throw new Error(`no mutator matches ${only}; mutators: ${MUTATOR_NAMES.join(", ")}`);
  const count = 1 + (rand() < 0.25 ? 1 : 0) + (rand() < 0.08 ? 1 : 0);
  for (let k = 0; k < count; k++) {
    // stream damage only where there are streams, and more of it there
    const compressed = c.layout.buffers.some((b) => b.compressed);
    const groups = GROUPS.map(([g, x]): [string, number] => [g, g === "xp." ? (compressed ? 22 : 0) : x]).filter(
      ([g, x]) => x > 0 && allowed.some((n) => n.startsWith(g)),
    );
    const total = groups.reduce((n, [, x]) => n + x, 0);
    for (let tries = 0; tries < 20 && total > 0 && c.bytes.length > 0; tries++) {
      let r = rand() * total;
      const group = groups.find(([, x]) => (r -= x) < 0)?.[0] ?? groups[groups.length - 1][0];
      const names = allowed.filter((n) => n.startsWith(group));
      const name = names[Math.floor(rand() * names.length)];
      const step = MUTATORS[name](c);
      if (step !== null) {
        steps.push(`${name}: ${step}`);
        mutators.push(name);
        break;
      }
    }
  }
  return { seed, base: base.name, steps, mutators, bytes: c.bytes };
}

/** Whether a base is an EventPipe file (.nettrace, .netperf): mutated by mutate-nettrace.ts. */
export const isEventPipeBase = (base: Base) => /\.(nettrace|netperf)$/.test(base.name);

/** The mutated input of case `seed` on any base: EventPipe files by their own mutators, .etl by these. */
export function mutateAnyCase(seed: number, base: Base, donors: readonly Base[] = [], only?: string): Case {
  if (isEventPipeBase(base)) return mutateNettraceCase(seed, base);
  return mutateCase(
    seed,
    base,
    donors.filter((d) => !isEventPipeBase(d)),
    only,
  );
}

export { nettraceBases };

/** A case seed for the k-th case on a base: distinct streams per base name. */
export function caseSeed(base: string, k: number, salt = 0): number {
  let h = 0x811c9dc5 ^ salt;
  for (let i = 0; i < base.length; i++) h = Math.imul(h ^ base.charCodeAt(i), 0x01000193);
  return (Math.imul(h ^ k, 0x9e3779b1) ^ (k * 0x85ebca6b)) >>> 0;
}

// ---------------------------------------------------------------------------------------------
// Checks

export interface CheckResult {
  problems: string[];
  ms: number;
  /** CPU time of this process over the checks (user and system), ms: what the input cost, whoever else ran beside it. */
  cpuMs: number;
  outcome: "trace" | "error";
  rows: number;
  warnings: number;
}

function describeError(e: unknown): string {
  if (e instanceof EtlFormatError) return `EtlFormatError code=${e.code} offset=${e.offset}`;
  if (e instanceof EtlDecodeError) return `EtlDecodeError offset=${e.offset}`;
  if (!(e instanceof Error)) return `${typeof e}: ${String(e)}`;
  const stack = e.stack
    ?.split("\n")
    .slice(1, 4)
    .map((s) => s.trim())
    .join(" < ");
  return `${e.name}: ${e.message}${stack ? ` [${stack}]` : ""}`;
}

/** Odd-sized slices of `bytes`, at most about 4,000 of them. */
function slices(bytes: Uint8Array, rand: () => number, most: number): Uint8Array[] {
  const cap = Math.max(most, Math.ceil(bytes.length / 2000));
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; ) {
    const n = 1 + 2 * Math.floor((rand() * cap) / 2);
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

/** Reads every row as a viewer would; returns what threw. */
function readRows(t: Trace): string[] {
  const out: string[] = [];
  const e = t.events;
  for (let i = 0; i < e.length; i++) {
    try {
      const row = e.row(i);
      JSON.stringify(row.toJSON());
      void row.name;
      void row.extendedItems;
      void row.relativeMSec;
      void row.fields;
      void row.activityId;
    } catch (error) {
      out.push(`row ${i}: ${describeError(error)}`);
      if (out.length >= 3) break;
    }
  }
  try {
    void t.names.counts();
    void t.processes;
    for (let b = 0; b < t.bufferCount; b++) void t.buffer(b);
    for (const w of t.warnings) void w.message;
    void [...t.providers].length;
  } catch (error) {
    out.push(`trace tables: ${describeError(error)}`);
  }
  return out;
}

async function decode(input: Uint8Array | Iterable<Uint8Array>, options: OpenOptions): Promise<Outcome> {
  try {
    return { trace: await openTrace(input, options) };
  } catch (error) {
    return { error };
  }
}

/**
 * Decodes `bytes` with both engines, and with one of them (by `seed`) again from odd-sized slices;
 * reads every row. Returns every problem: anything other than a Trace or an EtlFormatError, engines
 * that disagree, slices that decode differently from the whole, a row that cannot be read.
 */
export async function checkInput(bytes: Uint8Array, seed: number): Promise<CheckResult> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const traces: Trace[] = [];
  const problems: string[] = [];
  let trace: Trace | undefined;
  try {
    trace = await check(bytes, seed, problems, traces);
  } catch (error) {
    problems.push(`the checks threw ${describeError(error)}`);
  }
  const cpu = process.cpuUsage(cpu0);
  const result: CheckResult = {
    problems,
    ms: performance.now() - t0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    outcome: trace ? "trace" : "error",
    rows: trace?.events.length ?? 0,
    warnings: trace?.warnings.length ?? 0,
  };
  for (const t of traces) t.dispose();
  return result;
}

async function check(bytes: Uint8Array, seed: number, problems: string[], traces: Trace[]): Promise<Trace | undefined> {
  const rand = mulberry32(seed ^ 0x5bd1e995);
  const { problems: differences, wasm, js } = await compareEngines(bytes, {}, { cells: 20 });
  problems.push(...differences);
  for (const t of [wasm.trace, js.trace]) if (t) traces.push(t);
  for (const [engine, o] of [
    ["wasm", wasm],
    ["js", js],
  ] as const) {
    if (o.error === undefined) continue;
    if (!(o.error instanceof EtlFormatError)) problems.push(`${engine} threw ${describeError(o.error)}`);
    else if (!(o.error.offset >= 0 && o.error.offset <= bytes.length))
      problems.push(`${engine}: EtlFormatError offset ${o.error.offset} outside the input (${bytes.length} bytes)`);
  }

  // the same bytes in odd-sized slices, with a default or a small staging area, in one window or in
  // small ones (gathered into one trace)
  const engine = rand() < 0.5 ? "wasm" : "js";
  const whole = engine === "wasm" ? wasm : js;
  const chunkBytes = [undefined, 4096, 65536 + 8][Math.floor(rand() * 3)];
  const batchBytes = [undefined, 65536, 100_003][Math.floor(rand() * 3)];
  const most = [3, 61, 509, 8191][Math.floor(rand() * 4)];
  const parts = slices(bytes, rand, most);
  const sliced = await decode(parts, { engine, chunkBytes, batchBytes });
  if (sliced.trace) traces.push(sliced.trace);
  const label = `${engine} in ${parts.length} slices${chunkBytes ? `, chunkBytes ${chunkBytes}` : ""}${batchBytes ? `, batchBytes ${batchBytes}` : ""}`;
  if (whole.trace && sliced.trace) {
    for (const p of traceDifferences(whole.trace, sliced.trace, { cells: 20 }, 5))
      problems.push(`${label}: ${p.replace(/\bwasm\b/g, "whole").replace(/\bjs\b/g, "sliced")}`);
  } else if (whole.error !== undefined && sliced.error !== undefined) {
    const x = describeError(whole.error),
      y = describeError(sliced.error);
    if (x !== y) problems.push(`${label}: whole ${x}, sliced ${y}`);
  } else {
    problems.push(`${label}: whole ${whole.trace ? "decoded" : describeError(whole.error)}, sliced ${sliced.trace ? "decoded" : describeError(sliced.error)}`);
  }

  // now and then, with two worker threads, in segments of 64 KiB
  if (rand() < 1 / 16) {
    const parallel = await decode(rand() < 0.5 ? bytes : [bytes], { engine, batchBytes: 65536, workers: 2 });
    if (parallel.trace) traces.push(parallel.trace);
    const how = `${engine} with 2 workers`;
    if (whole.trace && parallel.trace) {
      for (const p of traceDifferences(whole.trace, parallel.trace, { cells: 20 }, 5))
        problems.push(`${how}: ${p.replace(/\bwasm\b/g, "whole").replace(/\bjs\b/g, "parallel")}`);
    } else if (describeError(whole.error) !== describeError(parallel.error)) {
      problems.push(
        `${how}: whole ${whole.trace ? "decoded" : describeError(whole.error)}, parallel ${parallel.trace ? "decoded" : describeError(parallel.error)}`,
      );
    }
  }

  const trace = wasm.trace ?? js.trace;
  if (trace) problems.push(...readRows(trace));
  return trace;
}

/** One line to replay a case. */
export function replayCommand(c: { base: string; seed: number }, only?: string): string {
  return `npm run fuzz -- --replay ${c.base}:${c.seed}${only ? ` --only ${only}` : ""}`;
}

export { show };

/**
 * The bases: every corpus file (when `corpusDir` exists), the bundled sample and two synthetic traces
 * (every record header layout, extended items, WPP options; one plain, one compressed).
 */
export function standardBases(root: string, corpusDir: string | null): Base[] {
  const bases: Base[] = [];
  if (corpusDir && existsSync(corpusDir)) {
    for (const f of readdirSync(corpusDir)
      .filter((x) => x.endsWith(".etl"))
      .sort())
      bases.push({ name: f, bytes: new Uint8Array(readFileSync(join(corpusDir, f))) });
  }
  bases.push({ name: "sample.etl", bytes: new Uint8Array(readFileSync(join(root, "examples", "sample.etl"))) });
  bases.push({ name: "synthetic-plain", bytes: syntheticTrace(31, { records: 900 }) });
  bases.push({ name: "synthetic-compressed", bytes: syntheticTrace(32, { records: 900, compress: true, pointerSize: 4 }) });
  return bases;
}
