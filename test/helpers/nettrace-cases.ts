// Test inputs for the EventPipe reader: the facts table of ../shared/corpus/nettrace/README.md parsed
// into expectations, and small synthetic files (V6, uncompressed V4) built from the format spec
// (../shared/spec/nettrace-format.md), since the corpus has no V6 file and no uncompressed V4+ block.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

// ---------------------------------------------------------------------------------------------
// README facts

export interface CorpusCase {
  file: string;
  format: number;
  pointerSize: number;
  pid: number;
  qpcFrequency: bigint;
  events: number;
  providers: Record<string, number>;
  /** Block counts the README gives (by reader block-count key). */
  blocks: Partial<Record<"event" | "metadata" | "stack" | "sequencePoint", number>>;
}

/** The README abbreviates provider names. */
const PROVIDER_NAMES: Record<string, string> = {
  DotNETRuntime: "Microsoft-Windows-DotNETRuntime",
  DotNETRuntimeRundown: "Microsoft-Windows-DotNETRuntimeRundown",
  Rundown: "Microsoft-Windows-DotNETRuntimeRundown",
  DotNETRuntimePrivate: "Microsoft-Windows-DotNETRuntimePrivate",
  SampleProfiler: "Microsoft-DotNETCore-SampleProfiler",
  EventPipe: "Microsoft-DotNETCore-EventPipe",
  "DotNETCore-EventPipe": "Microsoft-DotNETCore-EventPipe",
  TplEventSource: "System.Threading.Tasks.TplEventSource",
  TestEventSource0: "TestEventSource0",
};

const BLOCK_NAMES: Record<string, "event" | "metadata" | "stack" | "sequencePoint"> = {
  EventBlock: "event",
  MetadataBlock: "metadata",
  StackBlock: "stack",
  SPBlock: "sequencePoint",
};

const num = (s: string) => Number(s.replace(/,/g, ""));

/** Rows of the README's "## 1. Files" table. */
export function readmeCases(readmePath: string): CorpusCase[] {
  const text = readFileSync(readmePath, "utf8");
  const out: CorpusCase[] = [];
  for (const line of text.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    // | file | bytes | sha256 | format | ptr | PID | QPC freq | events | providers | baseline |
    if (cells.length !== 12 || !/\.(nettrace|netperf)$/.test(cells[1]) || !/^\d/.test(cells[2])) continue;
    const [, file, , , format, ptr, pid, freq, events, providers] = cells;
    const fm = /^V(\d)/.exec(format);
    if (!fm) throw new Error(`README row for ${file}: format "${format}"`);
    const provs: Record<string, number> = {};
    for (const m of providers.matchAll(/([\w.-]+) \(([\d,]+)\)/g)) {
      const full = PROVIDER_NAMES[m[1]];
      if (!full) throw new Error(`README row for ${file}: unknown provider abbreviation ${m[1]}`);
      provs[full] = num(m[2]);
    }
    const blocks: CorpusCase["blocks"] = {};
    for (const m of format.matchAll(/([\d,]+) (EventBlock|MetadataBlock|StackBlock|SPBlock)/g)) blocks[BLOCK_NAMES[m[2]]] = num(m[1]);
    out.push({
      file,
      format: Number(fm[1]),
      pointerSize: num(ptr),
      pid: num(pid),
      qpcFrequency: BigInt(num(freq)),
      events: num(events),
      providers: provs,
      blocks,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// A little-endian byte writer

export class Writer {
  bytes: number[] = [];
  get length(): number {
    return this.bytes.length;
  }
  u8(v: number): this {
    this.bytes.push(v & 0xff);
    return this;
  }
  u16(v: number): this {
    return this.u8(v).u8(v >>> 8);
  }
  u32(v: number): this {
    return this.u16(v & 0xffff).u16(v >>> 16);
  }
  i64(v: bigint): this {
    const u = BigInt.asUintN(64, v);
    return this.u32(Number(u & 0xffffffffn)).u32(Number(u >> 32n));
  }
  varU(v: number | bigint): this {
    let x = BigInt(v);
    do {
      const b = Number(x & 0x7fn);
      x >>= 7n;
      this.u8(x ? b | 0x80 : b);
    } while (x);
    return this;
  }
  raw(b: ArrayLike<number>): this {
    for (let i = 0; i < b.length; i++) this.bytes.push(b[i] & 0xff);
    return this;
  }
  utf8v(s: string): this {
    const b = new TextEncoder().encode(s);
    return this.varU(b.length).raw(b);
  }
  utf16z(s: string): this {
    for (let i = 0; i < s.length; i++) this.u16(s.charCodeAt(i));
    return this.u16(0);
  }
  ascii(s: string): this {
    for (let i = 0; i < s.length; i++) this.u8(s.charCodeAt(i));
    return this;
  }
  out(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

const SYSTEMTIME = [2024, 3, 5, 14, 10, 20, 30, 456];
export const GUID_A = Array.from({ length: 16 }, (_, i) => i + 1);
export const GUID_B = Array.from({ length: 16 }, (_, i) => 0xa0 + i);

// ---------------------------------------------------------------------------------------------
// Synthetic V6 file (§4, §5, §6.4, §6.5, §7.3, §8, §9, §10)

/** `otherProcess`: the second thread names that process (else none: the file's); `secondThread`: its index (2); `firstLabel`: the first two events' label list (1; lists 1 and 2 are defined). */
export function syntheticV6(otherProcess?: number, secondThread = 2, firstLabel = 1): Uint8Array {
  const w = new Writer().ascii("Nettrace").u32(0).u32(6).u32(2);
  const block = (kind: number, content: Writer) => w.u32((kind << 24) | content.length).raw(content.bytes);

  const trace = new Writer();
  for (const v of SYSTEMTIME) trace.u16(v);
  trace.i64(1000n).i64(10_000_000n).u32(8).u32(3);
  trace.utf8v("ProcessId").utf8v("4321").utf8v("HardwareThreadCount").utf8v("16").utf8v("Custom").utf8v("x");
  block(1, trace);

  const md = new Writer().u16(2).u16(0xbeef); // header of 2 bytes (skipped)
  const row = new Writer().varU(1).utf8v("My-Provider").varU(7).utf8v("MyEvent");
  const fa = new Writer().utf8v("count").u8(9); // Int32
  const fb = new Writer().utf8v("text").u8(19).u8(23); // Array of UTF8CodeUnit
  const fc = new Writer().utf8v("fixed").u8(22).u8(8).u16(3).u8(0xee); // FixedLengthArray of 3 UInt16 + 1 ignored byte
  const fd = new Writer().utf8v("nested").u8(1).u16(1); // Object { inner: VarUInt }
  const inner = new Writer().utf8v("inner").u8(21);
  fd.u16(inner.length).raw(inner.bytes);
  row.u16(4);
  for (const f of [fa, fb, fc, fd]) row.u16(f.length).raw(f.bytes);
  const opt = new Writer().u8(1).u8(1).u8(3).i64(0xf0n).u8(8).u8(4).u8(9).u8(2).u8(4).utf8v("n={count}").u8(6).utf8v("k").utf8v("v");
  row.u16(opt.length).raw(opt.bytes);
  md.u16(row.length).raw(row.bytes);
  block(3, md);

  const th = new Writer();
  const t1 = new Writer().varU(1).u8(1).utf8v("main").u8(2).varU(4321).u8(3).varU(5678);
  th.u16(t1.length).raw(t1.bytes);
  const t2 = new Writer().varU(secondThread);
  if (otherProcess !== undefined) t2.u8(2).varU(otherProcess);
  t2.u8(3).varU(99);
  th.u16(t2.length).raw(t2.bytes);
  block(6, th);

  const ll = new Writer().u32(1).u32(2);
  ll.u8(1)
    .raw(GUID_A)
    .u8(0x80 | 7)
    .u8(2); // list 1: ActivityId, OpCode 2
  ll.u8(9)
    .u8(5)
    .u8(0x80 | 2)
    .raw(GUID_B); // list 2: Level 5, RelatedActivityId
  block(8, ll);

  const st = new Writer().u32(1).u32(2).u32(16).i64(0x1111n).i64(0x2222n).u32(8).i64(0x3333n);
  block(5, st);

  const payload = [42, 0, 0, 0, 2, 0, 0x68, 0x69, 1, 0, 2, 0, 3, 0, 5];
  // Compressed block: event 1 sets everything; event 2 only a timestamp delta.
  const ev = new Writer().u16(20).u16(1).i64(0n).i64(0n);
  ev.u8(0x01 | 0x02 | 0x04 | 0x08 | 0x10 | 0x80)
    .varU(1)
    .varU(0)
    .varU(1)
    .varU(3)
    .varU(1)
    .varU(1)
    .varU(2000)
    .varU(firstLabel)
    .varU(payload.length)
    .raw(payload);
  ev.u8(0x40).varU(10).raw(payload);
  block(2, ev);
  // Uncompressed block (52-byte headers): bit 31 clear = sorted (TraceEvent's polarity).
  const ev2 = new Writer().u16(20).u16(0).i64(0n).i64(0n);
  ev2
    .u32(48 + payload.length)
    .u32(1)
    .u32(3)
    .i64(BigInt(secondThread))
    .i64(1n)
    .u32(0xffffffff)
    .u32(2)
    .i64(2500n)
    .u32(2)
    .u32(payload.length)
    .raw(payload);
  block(2, ev2);

  const sp = new Writer().i64(3000n).u32(0).u32(2).varU(1).varU(3).varU(secondThread).varU(0);
  block(4, sp);
  const rm = new Writer().varU(secondThread).varU(0);
  block(7, rm);
  block(42, new Writer().u32(7)); // unknown kind: skipped
  w.u32(0); // EndOfStream
  return w.out();
}

// ---------------------------------------------------------------------------------------------
// Synthetic V4/V5 file with uncompressed headers (§3, §6.3, §7.1, §7.2)

/** An uncompressed record's header fields (§6.3). */
interface RecordFields {
  metadataId: number;
  seq?: number;
  thread?: bigint;
  capture?: bigint;
  proc?: number;
  stack?: number;
  ts?: bigint;
  act?: number[];
  rel?: number[];
  unsorted?: boolean;
}

/**
 * A V4/V5 file (Trace object: pid 777, 4 processors, 1 GHz QPC) whose blocks `body` writes with
 * `blockObj`, `record` writing an 80-byte uncompressed header and its payload, padded to 4 bytes
 * inside EventSize; then the end-of-stream tag.
 */
function uncompressedFile(
  body: (blockObj: (name: string, content: Writer) => void, record: (blk: Writer, f: RecordFields, payload: Writer) => void) => void,
): Uint8Array {
  const w = new Writer().ascii("Nettrace").u32(20).ascii("!FastSerialization.1");
  const typeHeader = (name: string, version: number) => w.u8(5).u8(5).u8(1).u32(version).u32(version).u32(name.length).ascii(name).u8(6);
  const blockObj = (name: string, content: Writer) => {
    typeHeader(name, 2);
    w.u32(content.length);
    while (w.length % 4) w.u8(0);
    w.raw(content.bytes).u8(6);
  };
  typeHeader("Trace", 4);
  for (const v of SYSTEMTIME) w.u16(v);
  w.i64(5000n).i64(1_000_000_000n).u32(8).u32(777).u32(4).u32(1000).u8(6);
  const record = (blk: Writer, f: RecordFields, payload: Writer) => {
    let size = 76 + payload.length;
    const pad = (4 - (size % 4)) % 4;
    size += pad;
    blk
      .u32(size)
      .u32(f.metadataId | (f.unsorted ? 0x80000000 : 0))
      .u32(f.seq ?? 0)
      .i64(f.thread ?? 0n)
      .i64(f.capture ?? 0n)
      .u32(f.proc ?? 0)
      .u32(f.stack ?? 0)
      .i64(f.ts ?? 0n);
    blk
      .raw(f.act ?? new Array(16).fill(0))
      .raw(f.rel ?? new Array(16).fill(0))
      .u32(payload.length)
      .raw(payload.bytes);
    for (let i = 0; i < pad; i++) blk.u8(0);
  };
  body(blockObj, record);
  w.u8(1);
  return w.out();
}

export function syntheticV4Uncompressed(): Uint8Array {
  return uncompressedFile((blockObj, record) => {
    const meta = new Writer().u16(20).u16(0).i64(0n).i64(0n);
    const m1 = new Writer().u32(1).utf16z("Test-Provider").u32(3).utf16z("Work").i64(0x10n).u32(1).u32(4);
    m1.u32(0); // V1 field count 0, V2Params below
    const v2 = new Writer().u32(2);
    const fa = new Writer().utf16z("ids").u32(19).u32(10); // Array of UInt32
    v2.u32(fa.length + 4).raw(fa.bytes);
    const fb = new Writer().utf16z("pair").u32(1).u32(1); // Object { x: Int16 } in V2 layout
    const fx = new Writer().utf16z("x").u32(7);
    fb.u32(fx.length + 4).raw(fx.bytes);
    v2.u32(fb.length + 4).raw(fb.bytes);
    m1.u32(v2.length).u8(2).raw(v2.bytes);
    m1.u32(1).u8(1).u8(9); // OpCode 9
    m1.u32(3).u8(77).raw([1, 2, 3]); // unknown tag: skipped
    record(meta, { metadataId: 0 }, m1);
    const m2 = new Writer().u32(2).utf16z("Old-Provider").u32(4).utf16z("").i64(0n).u32(0).u32(5).u32(2);
    m2.u32(18).utf16z("s").u32(1).u32(1).u32(9).utf16z("n").utf16z("obj"); // String s; Object obj { Int32 n }
    record(meta, { metadataId: 0 }, m2);
    blockObj("MetadataBlock", meta);

    blockObj("StackBlock", new Writer().u32(5).u32(1).u32(16).i64(0xaan).i64(0xbbn));

    const evs = new Writer().u16(24).u16(0).i64(100n).i64(300n).u32(0); // header of 24 bytes
    record(evs, { metadataId: 1, seq: 1, thread: 11n, capture: 11n, proc: 2, stack: 5, ts: 100n, act: GUID_A }, new Writer().u16(1).u32(7).u16(3));
    record(evs, { metadataId: 2, seq: 2, thread: 11n, capture: 11n, ts: 300n, rel: GUID_B, unsorted: true }, new Writer().utf16z("ab").u32(5));
    blockObj("EventBlock", evs);
    blockObj("SPBlock", new Writer().i64(400n).u32(1).i64(11n).u32(2));
  });
}

/**
 * An uncompressed V5 file whose events take every way of each lookup the reader does (metadata ids
 * past the direct table, stack ids past it, a capture thread id past 2^32, two capture threads in one
 * queue-cache slot, a sequence gap, a sequence going backwards, metadata id 0, undefined metadata, a
 * stack id cleared by a sequence point). LOOKUP_CASE gives what each event must come out as.
 */
export function syntheticLookups(): Uint8Array {
  return uncompressedFile((blockObj, record) => {
    const meta = new Writer().u16(20).u16(0).i64(0n).i64(0n);
    record(meta, { metadataId: 0 }, new Writer().u32(1).utf16z("Lookup-Provider").u32(1).utf16z("Small").i64(0n).u32(0).u32(4).u32(0));
    record(meta, { metadataId: 0 }, new Writer().u32(5000).utf16z("Lookup-Provider").u32(2).utf16z("Large").i64(0n).u32(0).u32(4).u32(0));
    blockObj("MetadataBlock", meta);
    blockObj("StackBlock", new Writer().u32(5).u32(1).u32(8).i64(0xaan));
    blockObj("StackBlock", new Writer().u32(70000).u32(1).u32(8).i64(0xbbn));
    const payload = () => new Writer().u32(0x1234);
    const events = (list: { metadataId: number; seq?: number; capture?: bigint; stack?: number }[], ts: bigint) => {
      const blk = new Writer().u16(20).u16(0).i64(0n).i64(0n);
      for (const e of list) record(blk, { ...e, ts: ts++ }, payload());
      blockObj("EventBlock", blk);
    };
    const T = 11n,
      FAR = 0x1_0000_000bn,
      SAME_SLOT = 266n; // (266 and 11 share a slot of the queue cache)
    events(
      [
        { metadataId: 1, seq: 1, capture: T, stack: 5 },
        { metadataId: 5000, seq: 2, capture: T, stack: 70000 },
        { metadataId: 1, seq: 5, capture: T }, // seq 3 and 4 lost
      ],
      100n,
    );
    blockObj("SPBlock", new Writer().i64(200n).u32(1).i64(T).u32(5)); // stacks cleared
    events(
      [
        { metadataId: 0, seq: 6, capture: T }, // skipped with a warning
        { metadataId: 1, seq: 1, capture: FAR },
        { metadataId: 1, seq: 4, capture: T }, // backwards from 5
        { metadataId: 7, seq: 1, capture: SAME_SLOT }, // undefined metadata
        { metadataId: 1, seq: 5, capture: T, stack: 5 }, // stack 5 cleared by the sequence point
        { metadataId: 1, seq: 2, capture: SAME_SLOT },
        { metadataId: 5000, seq: 6, capture: T, stack: 70000 }, // cleared too
        { metadataId: 1, seq: 9, capture: T }, // seq 7 and 8 lost
      ],
      300n,
    );
  });
}

/** What syntheticLookups' events come out as, worked out by hand from the file above. */
export const LOOKUP_CASE = {
  metadata: [0, 1, 0, 0, 0, -1, 0, 0, 1, 0],
  stack: [0, 1, -1, -1, -1, -1, -1, -1, -1, -1],
  queue: [0, 0, 0, 1, 0, 2, 0, 2, 0, 0],
  sequenceNumber: [1, 2, 5, 1, 4, 1, 5, 2, 6, 9],
  eventsLost: 4,
  /** The warnings' names (NW_*), in order. */
  warnings: ["NW_METADATA_ID_ZERO", "NW_SEQUENCE_BACKWARDS", "NW_UNKNOWN_METADATA", "NW_UNKNOWN_STACK", "NW_UNKNOWN_STACK"],
};

/** The first `blocks` blocks of a V3–V5 file followed by the end-of-stream tag: a small valid file. */
export function prefixFile(bytes: Uint8Array, blockEnds: number[], blocks: number): Uint8Array {
  const end = blockEnds[Math.min(blocks, blockEnds.length) - 1];
  const out = new Uint8Array(end + 1);
  out.set(bytes.subarray(0, end));
  out[end] = 1;
  return out;
}

/** Every .nettrace/.netperf in `dir` and its subfolders (names relative to it, sorted); none when it is missing. */
export function nettraceCorpusFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const d of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const name = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) walk(name);
      else if (/\.(nettrace|netperf)$/.test(d.name)) out.push(name);
    }
  };
  walk("");
  return out.sort();
}
