// A small .etl writer: per-processor buffers, every record header type, the logfile header record,
// optional XPRESS compression. Used by the tests, the trace generator and the bundled sample.

import { xpressCompress } from "./xpress-compress.js";
import { parseGuid } from "../schema/guid.js";

/** Bytes of a buffer header (WMI_BUFFER_HEADER). */
export const BUFFER_HEADER_SIZE = 0x48;
const HDR = BUFFER_HEADER_SIZE;
const align8 = (n: number) => (n + 7) & ~7;

/** GUID bytes by text: providers repeat, and parsing is costly next to writing 16 bytes. */
const guidCache = new Map<string, Uint8Array>();
function guidBytes(text: string): Uint8Array {
  let b = guidCache.get(text);
  if (!b) {
    b = parseGuid(text);
    if (guidCache.size < 1024) guidCache.set(text, b);
  }
  return b;
}

/**
 * Writes a buffer header at `at`: a buffer of `size` bytes on disk (less than the buffer size
 * when compressed) whose records end at `used`; `ts` is its newest record's raw timestamp.
 */
export function writeBufferHeader(
  out: Uint8Array,
  at: number,
  size: number,
  used: number,
  proc: number,
  seq: number,
  ts: bigint,
  flags: number,
  type: number,
): void {
  const v = new DataView(out.buffer, out.byteOffset + at, HDR);
  v.setUint32(0x00, size, true);
  v.setUint32(0x04, used, true);
  v.setUint32(0x08, size + used, true);
  v.setUint32(0x0c, 0, true);
  v.setBigInt64(0x10, ts, true);
  v.setBigInt64(0x18, BigInt(seq), true);
  v.setBigUint64(0x20, 0n, true);
  v.setUint16(0x28, proc, true);
  v.setUint16(0x2a, 1, true); // logger id
  v.setUint32(0x2c, 3, true); // State: flushed (low 16 bits double as compression format XPRESS)
  v.setUint32(0x30, used, true);
  v.setUint16(0x34, flags, true);
  v.setUint16(0x36, type, true);
  out.fill(0, at + 0x38, at + HDR);
}

/** Little-endian byte builder for payloads and records. */
export class PayloadBuilder {
  private buf = new Uint8Array(256);
  private view = new DataView(this.buf.buffer);
  length = 0;

  private room(n: number): number {
    if (this.length + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
      next.set(this.buf);
      this.buf = next;
      this.view = new DataView(next.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }
  u8(v: number): this {
    const at = this.room(1);
    this.view.setUint8(at, v);
    return this;
  }
  u16(v: number): this {
    const at = this.room(2);
    this.view.setUint16(at, v, true);
    return this;
  }
  u32(v: number): this {
    const at = this.room(4);
    this.view.setUint32(at, v >>> 0, true);
    return this;
  }
  i32(v: number): this {
    const at = this.room(4);
    this.view.setInt32(at, v, true);
    return this;
  }
  u64(v: bigint | number): this {
    const at = this.room(8);
    this.view.setBigUint64(at, BigInt.asUintN(64, BigInt(v)), true);
    return this;
  }
  i64(v: bigint | number): this {
    const at = this.room(8);
    this.view.setBigInt64(at, BigInt(v), true);
    return this;
  }
  f64(v: number): this {
    const at = this.room(8);
    this.view.setFloat64(at, v, true);
    return this;
  }
  /** A pointer-sized value. */
  ptr(size: 4 | 8, v: bigint | number): this {
    return size === 4 ? this.u32(Number(BigInt.asUintN(32, BigInt(v)))) : this.u64(v);
  }
  guid(text: string): this {
    return this.bytes(guidBytes(text));
  }
  /** UTF-16LE with a 2-byte terminator. */
  utf16z(s: string): this {
    for (let i = 0; i < s.length; i++) this.u16(s.charCodeAt(i));
    return this.u16(0);
  }
  /** 8-bit string with a 1-byte terminator. */
  ansiz(s: string): this {
    for (let i = 0; i < s.length; i++) this.u8(s.charCodeAt(i) & 0xff);
    return this.u8(0);
  }
  bytes(b: Uint8Array): this {
    const at = this.room(b.length);
    this.buf.set(b, at);
    return this;
  }
  zeros(n: number): this {
    this.room(n);
    return this;
  }
  build(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

export interface WriterOptions {
  /** Session buffer size in bytes (default 65536). */
  bufferSize?: number;
  /** Pointer size of the logfile header (4: SYSTEM32 header record and 0x110-byte header). */
  pointerSize?: 4 | 8;
  /** XPRESS-compress every buffer but the header buffer. */
  compress?: boolean;
  perfFreq?: bigint;
  /** FILETIME of the session start. */
  startTime?: bigint;
  /** Raw timestamp of the logfile header record: the clock anchor. */
  anchor?: bigint;
  /** ReservedFlags: 1 QPC, 2 system time, 3 CPU cycles. */
  clockType?: number;
  numberOfProcessors?: number;
  osBuild?: number;
  cpuSpeedMHz?: number;
  loggerName?: string;
  logFileName?: string;
  eventsLost?: number;
  buffersLost?: number;
  timeZoneBias?: number;
  /**
   * Receives every buffer as it is flushed (file order, after the header buffer). With it, finish()
   * returns only the header buffer, which belongs at file offset 0 (`headerBufferSize` bytes).
   */
  onBuffer?: (bytes: Uint8Array) => void;
}

export interface SystemRecord {
  headerType: 0x01 | 0x02 | 0x03 | 0x04 | 0x10 | 0x11;
  hookId: number;
  version: number;
  pid?: number;
  tid?: number;
  ts: bigint;
  payload: Uint8Array;
  pebs?: bigint;
  pmc?: bigint[];
}

export interface ClassicRecord {
  headerType: 0x0a | 0x14 | 0x0b | 0x15;
  guid: string;
  opcode: number;
  level: number;
  version: number;
  pid: number;
  tid: number;
  ts: bigint;
  payload: Uint8Array;
  instanceId?: number;
  parentInstanceId?: number;
  parentGuid?: string;
}

interface ExtItem {
  type: number;
  data: Uint8Array;
}

export interface EventRecord {
  headerType: 0x12 | 0x13;
  provider: string;
  id: number;
  version: number;
  channel?: number;
  level: number;
  opcode: number;
  task: number;
  keywords: bigint;
  pid: number;
  tid: number;
  ts: bigint;
  activityId?: string;
  /** EVENT_HEADER Flags besides EXTENDED_INFO (set automatically when there are items). */
  flags?: number;
  ext?: ExtItem[];
  payload: Uint8Array;
}

export interface MessageRecord {
  messageNumber: number;
  /** TRACE_MESSAGE_* bits; the optional fields written follow them. */
  optionFlags: number;
  sequence?: number;
  guid?: string;
  componentId?: number;
  ts?: bigint;
  pid?: number;
  tid?: number;
  payload: Uint8Array;
}

interface OpenBuffer {
  bytes: Uint8Array;
  used: number;
  maxTs: bigint;
}

/** Builds a record's bytes for each header type. */
export const records = {
  system(r: SystemRecord): Uint8Array {
    const fixed = r.headerType <= 2 ? 0x20 : r.headerType <= 4 ? 0x18 : 0x10;
    const pmc = r.pmc ?? [];
    const extBytes = (r.pebs !== undefined ? 8 : 0) + pmc.length * 8;
    const size = fixed + extBytes + r.payload.length;
    const b = new PayloadBuilder();
    b.u16((r.version & 0xff) | (r.pebs !== undefined ? 0x8000 : 0) | (pmc.length << 8))
      .u8(r.headerType)
      .u8(0xc0);
    b.u16(size).u16(r.hookId);
    if (fixed === 0x10) b.i64(r.ts);
    else {
      b.u32(r.tid ?? 0)
        .u32(r.pid ?? 0)
        .i64(r.ts);
      if (fixed === 0x20) b.u32(0).u32(0);
    }
    if (r.pebs !== undefined) b.u64(r.pebs);
    for (const c of pmc) b.u64(c);
    return b.bytes(r.payload).build();
  },

  classic(r: ClassicRecord): Uint8Array {
    const instance = r.headerType === 0x0b || r.headerType === 0x15;
    const fixed = instance ? 0x48 : 0x30;
    const b = new PayloadBuilder();
    b.u16(fixed + r.payload.length)
      .u8(r.headerType)
      .u8(0xc0)
      .u8(r.opcode)
      .u8(r.level)
      .u16(r.version);
    b.u32(r.tid).u32(r.pid).i64(r.ts).guid(r.guid).u32(0).u32(0);
    if (instance) {
      b.u32(r.instanceId ?? 0)
        .u32(r.parentInstanceId ?? 0)
        .guid(r.parentGuid ?? "00000000-0000-0000-0000-000000000000");
    }
    return b.bytes(r.payload).build();
  },

  event(r: EventRecord): Uint8Array {
    const ext = r.ext ?? [];
    const items = new PayloadBuilder();
    ext.forEach((item, i) => {
      const stride = align8(8 + item.data.length);
      items
        .u16(stride)
        .u16(item.type)
        .u16(i < ext.length - 1 ? 1 : 0)
        .u16(item.data.length)
        .bytes(item.data);
      items.zeros(stride - 8 - item.data.length);
    });
    const b = new PayloadBuilder();
    const flags = (r.flags ?? 0) | (ext.length ? 1 : 0);
    b.u16(0x50 + items.length + r.payload.length)
      .u8(r.headerType)
      .u8(0xc0)
      .u16(flags)
      .u16(0);
    b.u32(r.tid).u32(r.pid).i64(r.ts).guid(r.provider);
    b.u16(r.id)
      .u8(r.version)
      .u8(r.channel ?? 0)
      .u8(r.level)
      .u8(r.opcode)
      .u16(r.task)
      .u64(r.keywords);
    b.u32(0)
      .u32(0)
      .guid(r.activityId ?? "00000000-0000-0000-0000-000000000000");
    return b.bytes(items.build()).bytes(r.payload).build();
  },

  message(r: MessageRecord): Uint8Array {
    const f = r.optionFlags;
    const opt = new PayloadBuilder();
    if (f & 0x01) opt.u32(r.sequence ?? 0);
    if (f & 0x02) opt.guid(r.guid ?? "00000000-0000-0000-0000-000000000000");
    else if (f & 0x04) opt.u32(r.componentId ?? 0);
    if (f & 0x08) opt.i64(r.ts ?? 0n);
    if (f & 0x20) opt.u32(r.tid ?? 0).u32(r.pid ?? 0);
    const b = new PayloadBuilder();
    b.u16(8 + opt.length + r.payload.length)
      .u8(0)
      .u8(0x90)
      .u16(r.messageNumber)
      .u16(f);
    return b.bytes(opt.build()).bytes(r.payload).build();
  },
};

export class EtlWriter {
  readonly bufferSize: number;
  readonly pointerSize: 4 | 8;
  readonly compress: boolean;
  readonly anchor: bigint;
  private readonly opts: WriterOptions;
  private readonly open = new Map<number, OpenBuffer>();
  private readonly flushed: Uint8Array[] = [];
  private sequence = 0;
  private lastTs: bigint;
  /** Records written so far (the logfile header record not counted). */
  recordCount = 0;

  constructor(opts: WriterOptions = {}) {
    this.opts = opts;
    this.bufferSize = opts.bufferSize ?? 65536;
    this.pointerSize = opts.pointerSize ?? 8;
    this.compress = opts.compress ?? false;
    this.anchor = opts.anchor ?? 1_000_000n;
    this.lastTs = this.anchor;
  }

  system(proc: number, r: SystemRecord): void {
    this.raw(proc, records.system(r), r.ts);
  }
  classic(proc: number, r: ClassicRecord): void {
    this.raw(proc, records.classic(r), r.ts);
  }
  event(proc: number, r: EventRecord): void {
    this.raw(proc, records.event(r), r.ts);
  }
  message(proc: number, r: MessageRecord): void {
    this.raw(proc, records.message(r), r.ts ?? this.lastTs);
  }

  /** Places record bytes (any, also corrupt ones) into processor `proc`'s buffer. */
  raw(proc: number, bytes: Uint8Array, ts: bigint = this.lastTs): void {
    if (HDR + align8(bytes.length) > this.bufferSize) throw new RangeError(`record of ${bytes.length} bytes exceeds the buffer`);
    let b = this.open.get(proc);
    if (b && b.used + align8(bytes.length) > this.bufferSize) {
      this.flush(proc, b, false);
      b = undefined;
    }
    if (!b) {
      b = { bytes: new Uint8Array(this.bufferSize).fill(0xff), used: HDR, maxTs: 0n };
      this.open.set(proc, b);
    }
    b.bytes.set(bytes, b.used);
    // alignment padding between records stays 0xFF like the rest of the unused space
    b.used += align8(bytes.length);
    if (ts > b.maxTs) b.maxTs = ts;
    if (ts > this.lastTs) this.lastTs = ts;
    this.recordCount++;
  }

  private flush(proc: number, b: OpenBuffer, last: boolean): void {
    const seq = ++this.sequence;
    const framed = this.frame(b.bytes, b.used, proc, seq, b.maxTs, last ? 0x01 : 0, 0, this.compress);
    if (this.opts.onBuffer) this.opts.onBuffer(framed);
    else this.flushed.push(framed);
    this.open.delete(proc);
  }

  /** Buffer header plus body; compressed bodies shrink the on-disk BufferSize. */
  private frame(bytes: Uint8Array, used: number, proc: number, seq: number, ts: bigint, extraFlags: number, type: number, compress: boolean): Uint8Array {
    let out: Uint8Array;
    let flags = 0x20 | extraFlags;
    if (compress) {
      const body = xpressCompress(bytes.subarray(HDR, used));
      out = new Uint8Array(HDR + body.length);
      out.set(body, HDR);
      flags |= 0x40;
    } else {
      out = bytes;
    }
    writeBufferHeader(out, 0, out.length, used, proc, seq, ts, flags, type);
    return out;
  }

  /** The TRACE_LOGFILE_HEADER payload plus logger and file names. */
  private logfileHeader(buffersWritten: number, endTime: bigint): Uint8Array {
    const o = this.opts;
    const P = this.pointerSize;
    const compressed = this.compress;
    const b = new PayloadBuilder();
    b.u32(this.bufferSize);
    b.u8(10).u8(0).u8(1).u8(5); // version 10.0, log format 1.5
    b.u32(o.osBuild ?? 19045);
    b.u32(o.numberOfProcessors ?? 4);
    b.i64(endTime);
    b.u32(156250); // timer resolution
    b.u32(0); // maximum file size
    b.u32(0x00000001 | (compressed ? 0x04010000 : 0)); // sequential (+ compressed relog)
    b.u32(buffersWritten);
    b.u32(1); // start buffers
    b.u32(P);
    b.u32(o.eventsLost ?? 0);
    b.u32(o.cpuSpeedMHz ?? 3000);
    b.ptr(P, 0).ptr(P, 0); // logger name and log file name slots (not pointers in files)
    // TIME_ZONE_INFORMATION (172 bytes)
    b.i32(o.timeZoneBias ?? 0);
    const name = (s: string) => {
      for (let i = 0; i < 32; i++) b.u16(i < s.length ? s.charCodeAt(i) : 0);
    };
    name("Coordinated Universal Time");
    b.zeros(16).i32(0);
    name("Coordinated Universal Time");
    b.zeros(16).i32(0);
    b.u32(0); // padding before the 8-byte fields
    const start = o.startTime ?? 133000000000000000n;
    b.i64(start - 36_000_000_000n); // boot time: an hour earlier
    b.i64(o.perfFreq ?? 10_000_000n);
    b.i64(start);
    b.u32(o.clockType ?? 1);
    b.u32(o.buffersLost ?? 0);
    b.utf16z(o.loggerName ?? "etw-wasm");
    b.utf16z(o.logFileName ?? "C:\\traces\\etw-wasm.etl");
    return b.build();
  }

  /** The logfile header record's size (it does not depend on the values written). */
  private headerRecordSize(): number {
    return 0x20 + this.logfileHeader(0, 0n).length;
  }

  /** Bytes of the header buffer at file offset 0 (known before any event is written). */
  get headerBufferSize(): number {
    // Compressed files carry a small header buffer, as relogged traces do.
    return this.compress ? Math.max(0x200, align8(HDR + this.headerRecordSize())) : this.bufferSize;
  }

  /**
   * The header buffer (file offset 0) of a file of `buffersWritten` buffers, the header buffer
   * included, whose newest record has the raw timestamp `lastTs`.
   */
  headerBuffer(buffersWritten: number, lastTs: bigint): Uint8Array {
    const freq = this.opts.perfFreq ?? 10_000_000n;
    const start = this.opts.startTime ?? 133000000000000000n;
    const header = records.system({
      headerType: this.pointerSize === 4 ? 0x01 : 0x02,
      hookId: 0,
      version: 2,
      pid: 4,
      tid: 8,
      ts: this.anchor,
      payload: this.logfileHeader(buffersWritten, start + ((lastTs - this.anchor) * 10_000_000n) / freq),
    });
    const buf0 = new Uint8Array(this.headerBufferSize).fill(0xff);
    buf0.set(header, HDR);
    return this.frame(buf0, HDR + align8(header.length), 0, 0, 0n, 0x01, 4, false);
  }

  /** Flushes every open buffer and returns the whole file (only the header buffer with onBuffer). */
  finish(): Uint8Array {
    for (const [proc, b] of [...this.open].sort((x, y) => x[0] - y[0])) this.flush(proc, b, true);
    const head = this.headerBuffer(this.sequence + 1, this.lastTs);
    if (this.opts.onBuffer) return head;
    const parts = [head, ...this.flushed];
    const total = parts.reduce((n, p) => n + p.length, 0);
    const file = new Uint8Array(total);
    let at = 0;
    for (const p of parts) {
      file.set(p, at);
      at += p.length;
    }
    return file;
  }
}
