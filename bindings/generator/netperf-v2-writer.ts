// Writer of .NET Core 2.0 EventPipe files (.netperf, FastSerialization Trace object version 2), for tests:
// the "Microsoft.DotNet.Runtime.EventPipeFile" object (a forward reference to the end of the events, the sync
// time, QPC and frequency), then the events byte-packed in the V3 record layout, metadata records (metadata
// id 0) before the events that name them by their stream offset, then FastSerialization's trailer: the
// forward-reference table (the end of the events) and, in the last four bytes, where the trailer starts.

export interface NetperfV2Field {
  name: string;
  /** EventPipe type code (3-18), or 1 (an object) with `fields`. */
  typeCode: number;
  fields?: NetperfV2Field[];
}

export interface NetperfV2Event {
  metadataId: number;
  threadId: number;
  timestamp: bigint;
  payload: Uint8Array;
  activityId?: Uint8Array;
  relatedActivityId?: Uint8Array;
  /** Frame addresses (64-bit), leaf first. */
  stack?: bigint[];
}

export interface NetperfV2Options {
  syncTimeUtc: Date;
  syncTimeQpc: bigint;
  qpcFrequency: bigint;
  /** Leave the Trace object's end tag out, as runtimes before .NET Core 2.1 did. */
  omitTraceEndTag?: boolean;
}

const SIGNATURE = "!FastSerialization.1";
const TYPE_NAME = "Microsoft.DotNet.Runtime.EventPipeFile";
const TAG_NULL = 1,
  TAG_BEGIN = 4,
  TAG_END = 6;

export class NetperfV2Writer {
  private readonly parts: Uint8Array[] = [];
  private size = 0;

  constructor(options: NetperfV2Options) {
    const b = new Bytes();
    b.i32(SIGNATURE.length).ascii(SIGNATURE);
    b.u8(TAG_BEGIN).u8(TAG_BEGIN).u8(TAG_NULL).i32(2).i32(0).i32(TYPE_NAME.length).ascii(TYPE_NAME).u8(TAG_END);
    b.i32(0); // forward reference 0: the end of the events
    const d = options.syncTimeUtc;
    for (const v of [
      d.getUTCFullYear(),
      d.getUTCMonth() + 1,
      d.getUTCDay(),
      d.getUTCDate(),
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
      d.getUTCMilliseconds(),
    ])
      b.i16(v);
    b.i64(options.syncTimeQpc).i64(options.qpcFrequency);
    if (!options.omitTraceEndTag) b.u8(TAG_END);
    this.push(b.done());
  }

  /** A metadata record; returns its id (its stream offset), which events give as their metadata id. */
  defineEvent(m: {
    providerName: string;
    eventId: number;
    version?: number;
    eventName?: string;
    keywords?: bigint;
    level?: number;
    fields?: NetperfV2Field[];
  }): number {
    const rest = new Bytes();
    if (m.eventName !== undefined || m.fields || m.keywords || m.level) {
      rest
        .i32(m.eventId)
        .utf16z(m.eventName ?? "")
        .i64(m.keywords ?? 0n)
        .i32(m.version ?? 0)
        .i32(m.level ?? 0);
      if (m.fields) fieldList(rest, m.fields);
    }
    const tail = rest.done();
    const payload = new Bytes()
      .utf16z(m.providerName)
      .i32(m.eventId)
      .i32(m.version ?? 0)
      .i32(tail.length)
      .bytes(tail)
      .done();
    const id = this.size;
    this.record({ metadataId: 0, threadId: 0, timestamp: 0n, payload });
    return id;
  }

  writeEvent(e: NetperfV2Event): void {
    this.record(e);
  }

  /** The file: the records, then the end tag, the forward-reference table and the trailer. */
  finish(): Uint8Array {
    const end = this.size;
    const t = new Bytes();
    t.u8(TAG_NULL);
    const table = end + t.length;
    t.i32(1).i32(end);
    const trailer = end + t.length;
    t.i32(table);
    t.i32(trailer);
    this.push(t.done());
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  private record(e: NetperfV2Event): void {
    const b = new Bytes();
    const stack = e.stack ?? [];
    const total = 56 + e.payload.length + 4 + 8 * stack.length;
    b.i32(total - 4)
      .i32(e.metadataId)
      .i32(e.threadId)
      .i64(e.timestamp);
    b.bytes(e.activityId ?? new Uint8Array(16)).bytes(e.relatedActivityId ?? new Uint8Array(16));
    b.i32(e.payload.length)
      .bytes(e.payload)
      .i32(8 * stack.length);
    for (const f of stack) b.i64(f);
    this.push(b.done());
  }

  private push(p: Uint8Array): void {
    this.parts.push(p);
    this.size += p.length;
  }
}

/** Field layout V1: a count, then per field its type code (an object's own fields after it) and name. */
function fieldList(b: Bytes, fields: NetperfV2Field[]): void {
  b.i32(fields.length);
  for (const f of fields) {
    b.i32(f.typeCode);
    if (f.typeCode === 1) fieldList(b, f.fields ?? []);
    b.utf16z(f.name);
  }
}

/** A little-endian byte builder. */
class Bytes {
  private a: number[] = [];
  get length(): number {
    return this.a.length;
  }
  u8(v: number): this {
    this.a.push(v & 0xff);
    return this;
  }
  i16(v: number): this {
    return this.u8(v).u8(v >> 8);
  }
  i32(v: number): this {
    return this.i16(v).i16(v >> 16);
  }
  i64(v: bigint): this {
    const u = BigInt.asUintN(64, v);
    return this.i32(Number(u & 0xffffffffn)).i32(Number(u >> 32n));
  }
  ascii(s: string): this {
    for (let i = 0; i < s.length; i++) this.u8(s.charCodeAt(i));
    return this;
  }
  utf16z(s: string): this {
    for (let i = 0; i < s.length; i++) this.i16(s.charCodeAt(i));
    return this.i16(0);
  }
  bytes(b: Uint8Array): this {
    for (const x of b) this.a.push(x);
    return this;
  }
  done(): Uint8Array {
    return Uint8Array.from(this.a);
  }
}
