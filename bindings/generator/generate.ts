// A synthetic .NET runtime trace with a realistic event mix, deterministic for a seed. Payloads follow
// the runtime's manifest layouts (fields packed, win:Pointer sized by the record's flavour).
//
// TraceGenerator writes records straight into per-processor buffers: each payload is built in one
// scratch array behind a header copied from a per-event template, and finished buffers are packed
// into chunks. Nothing is allocated per event, so the cost is the random numbers and the bytes.

import { BUFFER_HEADER_SIZE as HDR, EtlWriter, PayloadBuilder, records, writeBufferHeader } from "./etl-writer.js";
import { xpressBound, xpressCompressInto } from "./xpress-compress.js";
import { DOTNET_RUNTIME_GUID } from "../schema/known-providers.js";

export const CLR_PROVIDER = DOTNET_RUNTIME_GUID;
const PROCESS_GROUP_GUID_HOOK = 0x0300; // Process group; the opcode is the low byte
const THREAD_HOOK = 0x0500;
const PID = 4242;
const COMMAND_LINE = '"C:\\app\\Contoso.Orders.exe" --port 8080';
const THREAD_IDS = Array.from({ length: 8 }, (_, i) => 5000 + i * 4);
const IMAGE_DC_START_HOOK = 0x1403;
const SAMPLE_HOOK = 0x0f2e;
const JITTED = 0x8,
  DYNAMIC = 0x1;
const STACK_HOOK = 0x1820;
/** Native images of the samples' stacks (base by pointer size, size, file, process). */
const IMAGES: [number, number, number, string, number][] = [
  [0x7ffa10000000, 0x10000000, 0x800000, "C:\\Program Files\\dotnet\\shared\\Microsoft.NETCore.App\\8.0.0\\coreclr.dll", PID],
  [0x7ffb20000000, 0x77000000, 0x200000, "C:\\Windows\\System32\\ntdll.dll", PID],
];
const kernelBase = (P: number) => (P === 4 ? 0x81000000n : 0xfffff80000000000n);
/** Where jitted method `m` starts (its code: 256 bytes apart; the method is 64 bytes at least). */
const methodStart = (P: number, m: number) => (P === 4 ? 0x30000000 : 0x7ff800000000) + m * 256;

/** The generated process: its id, command line and the threads its events run on. */
export const GENERATED_PROCESS = { pid: PID, commandLine: COMMAND_LINE, threads: THREAD_IDS } as const;

/** The generated trace's clock: QPC of the logfile header record (the anchor), QPC ticks a second, FILETIME at the anchor. */
export const GENERATED_CLOCK = { anchor: 1_000_000n, frequency: 10_000_000n, startFiletime: 133000000000000000n } as const;

/** True when `address` lies in the generator's jitted code (the methods' code, 256 bytes apart; up to 2^20 methods). */
export function isJittedCode(pointerSize: 4 | 8, address: number): boolean {
  const base = methodStart(pointerSize, 0);
  return address >= base && address < base + 0x10000000;
}
const EVENT_HEADER = 0x50;

export interface GenerateOptions {
  /** Approximate file size to reach (before compression). */
  targetBytes: number;
  compress?: boolean;
  pointerSize?: 4 | 8;
  seed?: number;
  processors?: number;
  bufferSize?: number;
  /** Largest chunk the chunk sources yield (default 1 MiB); a chunk holds whole buffers, at least one. */
  chunkBytes?: number;
  /**
   * Kernel CPU samples (PerfInfo/Sample, 1 ms) with their stacks (StackWalk/Stack: jitted methods,
   * coreclr and ntdll, some kernel frames) and the kernel images that hold the native frames; and
   * the runtime's AllocationTick events with their stacks (an extended item, as a session with stacks
   * enabled for the runtime gets them), for allocation call trees.
   */
  samples?: boolean;
}

/** What a generated trace holds, in the decoder's terms. */
export interface GenerateSummary {
  /** Records, the logfile header record included (the decoder's event rows). */
  records: number;
  /** Buffers, the header buffer included (the decoder's bufferCount). */
  buffers: number;
  /** File size in bytes. */
  bytes: number;
  /** Size of the header buffer at file offset 0. */
  headerBufferSize: number;
}

const NAMESPACES = [
  "System",
  "System.Collections.Generic",
  "System.Linq",
  "System.Text.Json",
  "Contoso.Orders",
  "Contoso.Orders.Pricing",
  "Microsoft.Extensions.Logging",
  "System.Threading.Tasks",
  "System.IO",
  "System.Net.Http",
];
const TYPES = [
  "List`1",
  "Dictionary`2",
  "StringBuilder",
  "OrderService",
  "PriceCalculator",
  "JsonSerializer",
  "Task`1",
  "FileStream",
  "HttpClient",
  "Enumerable",
  "LoggerFactory",
  "ConcurrentQueue`1",
];
const METHODS = [
  "Add",
  "TryGetValue",
  "ToString",
  "Process",
  "Calculate",
  "Serialize",
  "Deserialize",
  "MoveNext",
  "ReadAsync",
  "SendAsync",
  "Where",
  "Select",
  "Log",
  "Enqueue",
  "GetHashCode",
  "Equals",
  ".ctor",
];
const SIGNATURES = [
  "instance void  (class System.String)",
  "instance bool  (!0,!1&)",
  "instance class System.String  ()",
  "void  (int32,float64)",
  "instance class System.Threading.Tasks.Task`1<int32>  (unsigned int8[],int32,int32)",
  "class System.Collections.Generic.IEnumerable`1<!!0>  (class System.Collections.Generic.IEnumerable`1<!!0>,class System.Func`2<!!0,bool>)",
];
const ALLOC_TYPES = [
  "System.String",
  "System.Byte[]",
  "System.Object[]",
  "Contoso.Orders.Order",
  "System.Collections.Generic.List`1[Contoso.Orders.OrderLine]",
  "System.Char[]",
  "System.Text.StringBuilder",
];
const EXCEPTIONS: [string, string][] = [
  ["System.InvalidOperationException", "Sequence contains no elements"],
  ["System.ArgumentNullException", "Value cannot be null. (Parameter 'key')"],
  ["System.IO.FileNotFoundException", "Could not find file 'C:\\data\\orders.json'."],
  ["System.Collections.Generic.KeyNotFoundException", "The given key was not present in the dictionary."],
];
const ASSEMBLIES = [
  "System.Private.CoreLib",
  "System.Runtime",
  "System.Collections",
  "System.Linq",
  "System.Text.Json",
  "Contoso.Orders",
  "Microsoft.Extensions.Logging",
  "System.Net.Http",
  "System.Threading",
];

/** UTF-16LE code units of `s`, with the 2-byte terminator unless `terminate` is false. */
function utf16(s: string, terminate = true): Uint8Array {
  const out = new Uint8Array(s.length * 2 + (terminate ? 2 : 0));
  for (let i = 0; i < s.length; i++) {
    out[2 * i] = s.charCodeAt(i);
    out[2 * i + 1] = s.charCodeAt(i) >> 8;
  }
  return out;
}

const NAMESPACE_DOT = NAMESPACES.map((s) => utf16(s + ".", false));
const TYPE_Z = TYPES.map((s) => utf16(s));
const METHOD_Z = METHODS.map((s) => utf16(s));
const SIGNATURE_Z = SIGNATURES.map((s) => utf16(s));
const ALLOC_TYPE_Z = ALLOC_TYPES.map((s) => utf16(s));
const EXCEPTION_Z = EXCEPTIONS.map(([type, message]) => [utf16(type), utf16(message)]);
const TWO_32 = 4294967296;

/** The 0x50-byte EVENT_HEADER of a CLR event, as words; size, thread and time are patched per record. */
type Template = Uint32Array;

interface Templates {
  enqueue: Template;
  dequeue: Template;
  methodLoad: Template;
  alloc: Template;
  /** AllocationTick with an extended item (a stack) before its payload. */
  allocWithStack: Template;
  triggered: Template;
  suspendBegin: Template;
  suspendEnd: Template;
  gcStart: Template;
  gcEnd: Template;
  heapStats: Template;
  restartBegin: Template;
  restartEnd: Template;
  exception: Template;
  contentionStart: Template;
  contentionStop: Template;
  workerAdjust: Template;
}

/** How a TraceGenerator runs. */
export interface GeneratorMode {
  /**
   * Count only: no bytes are written or compressed and next() yields nothing, but the record and
   * buffer totals and header() come out as a writing run's (`bytes` only for uncompressed traces).
   */
  measureOnly?: boolean;
  /**
   * A chunk next() returns stays valid only until the next call, which fills its memory again: for
   * consumers that write each chunk out at once.
   */
  reuseChunks?: boolean;
  /**
   * Receives every record as it is placed (its bytes valid only during the call): how a session is
   * split into files, and how a .nettrace is made. With measureOnly the records go to the tap alone
   * (no buffers): drive the run with advance() or run().
   */
  tap?: (processor: number, record: Uint8Array, ts: number) => void;
}

/**
 * Generates the trace's buffers in file order: next() returns chunks of whole buffers (those after
 * the header buffer) until null. The header buffer, for file offset 0, comes last from header():
 * it holds totals known only at the end.
 */
export class TraceGenerator {
  readonly headerBufferSize: number;
  private readonly target: number;
  private readonly P: 4 | 8;
  private readonly processors: number;
  private readonly bufferSize: number;
  private readonly compress: boolean;
  private readonly measureOnly: boolean;
  private readonly chunkBytes: number;
  private readonly writer: EtlWriter;
  private readonly headerType: number;

  private seed: number;
  private ts: number;
  private bytes = 0;
  private gc = 0;
  private methods = 0;
  private started = false;
  private ended = false;

  // The record under construction: header at 0, payload from EVENT_HEADER, written to `p`.
  private readonly s = new Uint8Array(4096);
  private readonly sw = new Uint32Array(this.s.buffer);
  private readonly sv = new DataView(this.s.buffer);
  private p = EVENT_HEADER;
  /** The first n bytes of `s`, and of `k`, by n. */
  private readonly sViews: Uint8Array[] = [];
  private readonly kViews: Uint8Array[] = [];
  // A CPU sample's records are built in `k`, its frames as 32-bit halves.
  private readonly k = new Uint8Array(512);
  private readonly frameLo = new Uint32Array(16);
  private readonly frameHi = new Uint32Array(16);

  // Per processor: its open buffer (all 0xFF past `used`), as bytes and words.
  private readonly bufs: Uint8Array[] = [];
  private readonly words: Uint32Array[] = [];
  private readonly used: number[] = [];
  private readonly maxTs: number[] = [];
  private sequence = 0;
  private recordCount = 0;
  private lastTs: number;

  // Finished chunks, and the one being filled.
  private readonly ready: Uint8Array[] = [];
  private chunk: Uint8Array | null = null;
  private chunkAt = 0;
  private fileBytes: number;
  private readonly reuseChunks: boolean;
  private readonly tap: GeneratorMode["tap"];
  private lent: Uint8Array | null = null;
  private spare: Uint8Array | null = null;

  private readonly T: Templates;
  private readonly samples: boolean;
  private readonly threads = THREAD_IDS.slice();

  constructor(opts: GenerateOptions, mode: GeneratorMode = {}) {
    this.measureOnly = mode.measureOnly ?? false;
    this.reuseChunks = mode.reuseChunks ?? false;
    this.tap = mode.tap;
    this.target = opts.targetBytes;
    this.P = opts.pointerSize ?? 8;
    this.processors = opts.processors ?? 4;
    this.bufferSize = opts.bufferSize ?? 65536;
    this.compress = opts.compress ?? false;
    this.chunkBytes = Math.max(opts.chunkBytes ?? 1 << 20, this.bufferSize);
    this.seed = opts.seed ?? 1;
    this.samples = opts.samples ?? false;
    if (!(this.bufferSize > 0 && this.bufferSize % 8 === 0)) throw new RangeError(`bad buffer size ${this.bufferSize}`);
    this.writer = new EtlWriter({
      compress: this.compress,
      pointerSize: this.P,
      numberOfProcessors: this.processors,
      bufferSize: this.bufferSize,
      anchor: GENERATED_CLOCK.anchor,
      perfFreq: GENERATED_CLOCK.frequency,
      startTime: GENERATED_CLOCK.startFiletime,
      loggerName: "etw-wasm-generator",
      logFileName: "C:\\traces\\generated.etl",
    });
    this.headerBufferSize = this.writer.headerBufferSize;
    this.fileBytes = this.headerBufferSize;
    this.ts = Number(this.writer.anchor) + 1000;
    this.lastTs = Number(this.writer.anchor);
    this.headerType = this.P === 4 ? 0x12 : 0x13;
    this.T = {
      enqueue: this.template(61, 0, 23, 11, 5, 0x10000n),
      dequeue: this.template(62, 0, 23, 12, 5, 0x10000n),
      methodLoad: this.template(143, 2, 9, 37, 4, 0x30n),
      alloc: this.template(10, 4, 1, 11, 5, 0x1n),
      allocWithStack: this.template(10, 4, 1, 11, 5, 0x1n),
      triggered: this.template(35, 0, 1, 35, 4, 0x1n),
      suspendBegin: this.template(9, 1, 1, 10, 4, 0x1n),
      suspendEnd: this.template(8, 1, 1, 137, 4, 0x1n),
      gcStart: this.template(1, 2, 1, 1, 4, 0x1n),
      gcEnd: this.template(2, 1, 1, 2, 4, 0x1n),
      heapStats: this.template(4, 2, 1, 133, 4, 0x1n),
      restartBegin: this.template(7, 1, 1, 136, 4, 0x1n),
      restartEnd: this.template(3, 1, 1, 132, 4, 0x1n),
      exception: this.template(80, 1, 7, 1, 2, 0x200008000n),
      contentionStart: this.template(81, 2, 8, 1, 4, 0x4000n),
      contentionStop: this.template(91, 1, 8, 2, 4, 0x4000n),
      workerAdjust: this.template(50, 0, 16, 1, 4, 0x10000n),
    };
    this.T.allocWithStack[1] |= 0x0001; // Flags: EXTENDED_INFO
    for (let i = 0; i < this.processors; i++) {
      this.bufs.push(new Uint8Array(0));
      this.words.push(new Uint32Array(0));
      this.used.push(HDR);
      this.maxTs.push(0);
    }
  }

  /** The next chunk of buffers in file order (after the header buffer), or null at the end. */
  next(): Uint8Array | null {
    if (this.lent) {
      this.spare = this.lent;
      this.lent = null;
    }
    while (this.ready.length === 0 && this.advance()) {}
    const c = this.ready.shift() ?? null;
    if (c && this.reuseChunks) this.lent = c.byteOffset === 0 && c.byteLength === c.buffer.byteLength ? c : new Uint8Array(c.buffer);
    return c;
  }

  /**
   * Makes the next stretch of records (the prologue first; chunks of finished buffers pile up for
   * next()); false once the trace has ended.
   */
  advance(): boolean {
    if (this.ended) return false;
    if (!this.started) {
      this.started = true;
      this.prologue();
    }
    let k = 64;
    while (this.bytes < this.target && k-- > 0) this.iterate();
    if (this.bytes >= this.target) this.end();
    return true;
  }

  /** Runs to the end, dropping the chunks; then header() and summary() are ready. */
  run(): this {
    while (this.next()) {}
    return this;
  }

  /** The header buffer (file offset 0), once next() has returned null. */
  header(): Uint8Array {
    if (!this.ended) throw new Error("the header buffer is known at the end");
    return this.writer.headerBuffer(this.sequence + 1, BigInt(this.lastTs));
  }

  summary(): GenerateSummary {
    if (!this.ended) throw new Error("the totals are known at the end");
    return { records: this.recordCount + 1, buffers: this.sequence + 1, bytes: this.fileBytes, headerBufferSize: this.headerBufferSize };
  }

  // --- random numbers (mulberry32, as random.ts) ---

  private rand(): number {
    this.seed = (this.seed + 0x6d2b79f5) | 0;
    const seed = this.seed;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  private index(n: number): number {
    return Math.floor(this.rand() * n);
  }

  private thread(): number {
    return this.threads[this.index(this.threads.length)];
  }

  // --- the payload under construction ---

  private u8(v: number): void {
    this.s[this.p++] = v;
  }

  private u16(v: number): void {
    this.sv.setUint16(this.p, v, true);
    this.p += 2;
  }

  private u32(v: number): void {
    this.sv.setUint32(this.p, v, true);
    this.p += 4;
  }

  /** A whole number below 2^53. */
  private u64(v: number): void {
    const lo = v >>> 0;
    this.u32(lo);
    this.u32((v - lo) / TWO_32);
  }

  private ptr(v: number): void {
    if (this.P === 4) this.u32(v >>> 0);
    else this.u64(v);
  }

  private f64(v: number): void {
    this.sv.setFloat64(this.p, v, true);
    this.p += 8;
  }

  private str(b: Uint8Array): void {
    this.s.set(b, this.p);
    this.p += b.length;
  }

  private template(id: number, version: number, task: number, opcode: number, level: number, keywords: bigint): Template {
    const rec = records.event({
      headerType: this.headerType as 0x12 | 0x13,
      provider: CLR_PROVIDER,
      id,
      version,
      level,
      opcode,
      task,
      keywords,
      pid: PID,
      tid: 0,
      ts: 0n,
      payload: new Uint8Array(0),
    });
    return new Uint32Array(rec.slice(0, EVENT_HEADER).buffer);
  }

  /**
   * Ends a CLR event whose payload is in the scratch array: places it on a random processor at the
   * next time stamp, its header from the event's template.
   */
  private clr(t: Template, tid: number): void {
    const proc = this.index(this.processors);
    const ts = (this.ts += 1 + Math.floor(this.rand() * 400));
    const size = this.p;
    const aligned = (size + 7) & ~7;
    this.p = EVENT_HEADER;
    this.bytes += size + 8;
    const at = this.reserve(proc, aligned, ts);
    if (this.measureOnly) {
      if (this.tap) {
        // the record for the tap alone: its header in front of the payload, in the scratch array
        const sv = this.sv;
        this.sw.set(t);
        sv.setUint16(0, size, true);
        sv.setUint32(8, tid, true);
        sv.setUint32(16, ts >>> 0, true);
        sv.setUint32(20, (ts - (ts >>> 0)) / TWO_32, true);
        this.tap(proc, this.sView(size), ts);
      }
      return;
    }
    const s = this.s;
    for (let k = size; k < aligned; k++) s[k] = 0xff; // padding stays 0xFF, like unused buffer space
    const d = this.bufs[proc],
      w = this.words[proc],
      sw = this.sw;
    const a = at >>> 2;
    for (let k = 0; k < EVENT_HEADER / 4; k++) w[a + k] = t[k];
    for (let k = EVENT_HEADER / 4, n = aligned >>> 2; k < n; k++) w[a + k] = sw[k];
    d[at] = size;
    d[at + 1] = size >>> 8;
    d[at + 8] = tid;
    d[at + 9] = tid >>> 8;
    d[at + 10] = tid >>> 16;
    d[at + 11] = tid >>> 24;
    const lo = ts >>> 0,
      hi = (ts - lo) / TWO_32;
    d[at + 16] = lo;
    d[at + 17] = lo >>> 8;
    d[at + 18] = lo >>> 16;
    d[at + 19] = lo >>> 24;
    d[at + 20] = hi;
    d[at + 21] = hi >>> 8;
    d[at + 22] = hi >>> 16;
    d[at + 23] = hi >>> 24;
    this.tap?.(proc, d.subarray(at, at + size), ts);
  }

  /** A whole record (bytes) on `proc`, at raw time `ts`. */
  private record(proc: number, bytes: Uint8Array, ts: number): void {
    const at = this.reserve(proc, (bytes.length + 7) & ~7, ts);
    if (!this.measureOnly) this.bufs[proc].set(bytes, at); // the padding after it is 0xFF already
    this.tap?.(proc, bytes, ts);
  }

  /**
   * Room for a record of `aligned` bytes in processor `proc`'s buffer, flushing it first when
   * full: returns where the record goes.
   */
  private reserve(proc: number, aligned: number, ts: number): number {
    if (HDR + aligned > this.bufferSize) throw new RangeError(`record of ${aligned} bytes exceeds the buffer`);
    let used = this.used[proc];
    if (used + aligned > this.bufferSize) {
      this.flush(proc, false);
      used = HDR;
    }
    if (!this.measureOnly && this.words[proc].length === 0) {
      const b = new Uint8Array(this.bufferSize).fill(0xff);
      this.bufs[proc] = b;
      this.words[proc] = new Uint32Array(b.buffer);
    }
    this.used[proc] = used + aligned;
    if (ts > this.maxTs[proc]) this.maxTs[proc] = ts;
    if (ts > this.lastTs) this.lastTs = ts;
    this.recordCount++;
    return used;
  }

  private flush(proc: number, last: boolean): void {
    const seq = ++this.sequence;
    const used = this.used[proc];
    const ts = this.maxTs[proc];
    this.used[proc] = HDR;
    this.maxTs[proc] = 0;
    const flags = 0x20 | (last ? 0x01 : 0) | (this.compress ? 0x40 : 0);
    if (!this.compress) {
      this.fileBytes += this.bufferSize;
      if (this.measureOnly) return;
      const b = this.bufs[proc];
      writeBufferHeader(b, 0, this.bufferSize, used, proc, seq, BigInt(ts), flags, 0);
      this.room(this.bufferSize).set(b, this.chunkAt);
      this.chunkAt += this.bufferSize;
      b.fill(0xff, 0, used);
      return;
    }
    if (this.measureOnly) {
      // the compressed size is needed for the file size only; measuring skips it
      return;
    }
    const b = this.bufs[proc];
    const out = this.room(HDR + xpressBound(used - HDR));
    const size = HDR + xpressCompressInto(b, HDR, used, out, this.chunkAt + HDR);
    writeBufferHeader(out, this.chunkAt, size, used, proc, seq, BigInt(ts), flags, 0);
    this.chunkAt += size;
    this.fileBytes += size;
    b.fill(0xff, HDR, used);
  }

  /** The chunk being filled, with room for `n` more bytes. */
  private room(n: number): Uint8Array {
    if (this.chunk && this.chunkAt + n > this.chunk.length) this.pushChunk();
    if (!this.chunk) {
      const spare = this.spare;
      this.spare = null;
      this.chunk = spare && spare.length >= n ? spare : new Uint8Array(Math.max(this.chunkBytes, n));
    }
    return this.chunk;
  }

  private pushChunk(): void {
    if (this.chunk && this.chunkAt > 0) this.ready.push(this.chunkAt === this.chunk.length ? this.chunk : this.chunk.subarray(0, this.chunkAt));
    this.chunk = null;
    this.chunkAt = 0;
  }

  private end(): void {
    for (let proc = 0; proc < this.processors; proc++) if (this.used[proc] > HDR) this.flush(proc, true);
    this.pushChunk();
    this.ended = true;
  }

  // --- the trace ---

  /** Process and thread starts (kernel), then the runtime's start and its assemblies. */
  private prologue(): void {
    const P = this.P;
    const pid = PID;
    const tick = () => (this.ts += 1 + Math.floor(this.rand() * 400));
    const sys = P === 4 ? 0x01 : 0x02;
    const proc = new PayloadBuilder()
      .ptr(P, 0xffffa00012345000n)
      .u32(pid)
      .u32(1200)
      .u32(1)
      .i32(0)
      .ptr(P, 0x1aa000n)
      .u32(0)
      .u32(0)
      .ansiz("Contoso.Orders.exe")
      .utf16z(COMMAND_LINE)
      .utf16z("")
      .utf16z("");
    let ts = tick();
    this.record(
      0,
      records.system({ headerType: sys, hookId: PROCESS_GROUP_GUID_HOOK | 1, version: 4, pid: 1200, tid: 1204, ts: BigInt(ts), payload: proc.build() }),
      ts,
    );
    for (const tid of this.threads) {
      const t = new PayloadBuilder().u32(pid).u32(tid);
      for (let k = 0; k < 7; k++) t.ptr(P, 0x7ff000000000n + BigInt(tid * 4096 + k));
      t.u32(0).u8(8).u8(5).u8(2).u8(0);
      const cpu = this.index(this.processors);
      ts = tick();
      this.record(cpu, records.system({ headerType: sys, hookId: THREAD_HOOK | 1, version: 3, pid, tid, ts: BigInt(ts), payload: t.build() }), ts);
    }
    if (this.samples) {
      // the images the stacks' native frames lie in (rundown: loaded before the trace began)
      const images: [bigint, number, string, number][] = [
        ...IMAGES.map(([b64, b32, n, f, p]) => [BigInt(P === 4 ? b32 : b64), n, f, p] as [bigint, number, string, number]),
        [kernelBase(P), 0x1000000, "\\SystemRoot\\system32\\ntoskrnl.exe", 0],
      ];
      for (const [base, size, file, owner] of images) {
        const b = new PayloadBuilder().ptr(P, base).ptr(P, size).u32(owner).u32(0).u32(0).u32(0).ptr(P, base).u32(0).u32(0).u32(0).u32(0).utf16z(file);
        ts = tick();
        this.record(
          0,
          records.system({ headerType: sys, hookId: IMAGE_DC_START_HOOK, version: 3, pid: owner, tid: 0, ts: BigInt(ts), payload: b.build() }),
          ts,
        );
      }
    }
    const clr = (t: Template, payload: PayloadBuilder) => {
      this.str(payload.build());
      this.clr(t, this.thread());
    };
    clr(
      this.template(187, 0, 19, 1, 4, 0n),
      new PayloadBuilder()
        .u16(8)
        .u16(2)
        .u16(8)
        .u16(0)
        .u16(24)
        .u16(0)
        .u16(8)
        .u16(0)
        .u16(24)
        .u16(0)
        .u32(0x1004)
        .u8(0)
        .utf16z(COMMAND_LINE)
        .guid("00000000-0000-0000-0000-000000000000")
        .utf16z("C:\\Program Files\\dotnet\\shared\\Microsoft.NETCore.App\\8.0.0\\coreclr.dll"),
    );
    ASSEMBLIES.forEach((name, k) => {
      const assemblyId = 0x7ffd0000n + BigInt(k) * 0x1000n;
      clr(
        this.template(154, 1, 10, 37, 4, 0x8n),
        new PayloadBuilder()
          .u64(assemblyId)
          .u64(0x1000n)
          .u64(0n)
          .u32(0)
          .utf16z(`${name}, Version=8.0.0.0, Culture=neutral, PublicKeyToken=b03f5f7f11d50a3a`)
          .u16(8),
      );
      clr(
        this.template(152, 2, 10, 33, 4, 0x20000008n),
        new PayloadBuilder()
          .u64(assemblyId + 0x800n)
          .u64(assemblyId)
          .u32(8)
          .u32(0)
          .utf16z(`C:\\app\\${name}.dll`)
          .utf16z("")
          .u16(8)
          .guid("5f1c7a3e-2b44-4d6a-9a1e-0c8b7d6e5f40")
          .u32(1)
          .utf16z(`D:\\build\\${name}.pdb`)
          .guid("00000000-0000-0000-0000-000000000000")
          .u32(0)
          .utf16z(""),
      );
    });
  }

  /**
   * One step of a steady-state service: thread-pool work items, lock contention, allocation ticks
   * and GCs dominate; methods still get jitted now and then.
   */
  private iterate(): void {
    const T = this.T;
    if (this.samples && this.rand() < 0.25) this.sample();
    const r = this.rand();
    if (r < 0.3) {
      const work = 0x1c000200000 + Math.floor(this.rand() * 1e6) * 0x40;
      this.ptr(work);
      this.u16(8);
      this.clr(T.enqueue, this.thread());
      this.ptr(work);
      this.u16(8);
      this.clr(T.dequeue, this.thread());
    } else if (r < 0.38) {
      // JIT: method load with namespace, name and signature
      const ns = this.index(NAMESPACES.length);
      const m = this.methods++;
      this.u64(0x7ffe00000000 + m * 64);
      this.u64(0x7ffd0800);
      this.u64(methodStart(this.P, m));
      this.u32(64 + Math.floor(this.rand() * 2000));
      this.u32(0x06000000 + (m & 0xffff));
      this.u32(JITTED | (this.rand() < 0.1 ? DYNAMIC : 0));
      this.str(NAMESPACE_DOT[ns]);
      this.str(TYPE_Z[this.index(TYPE_Z.length)]);
      this.str(METHOD_Z[this.index(METHOD_Z.length)]);
      this.str(SIGNATURE_Z[this.index(SIGNATURE_Z.length)]);
      this.u16(8);
      this.u64(0);
      this.clr(T.methodLoad, this.thread());
    } else if (r < 0.6) {
      const stack = this.samples && this.methods > 0;
      if (stack) this.allocationStack();
      const amount = 100000 + Math.floor(this.rand() * 5000);
      this.u32(amount);
      this.u32(this.rand() < 0.9 ? 0 : 1);
      this.u16(8);
      this.u64(amount);
      this.ptr(0x7ffd12340000 + Math.floor(this.rand() * 64) * 0x40);
      this.str(ALLOC_TYPE_Z[this.index(ALLOC_TYPE_Z.length)]);
      this.u32(Math.floor(this.rand() * 4));
      this.ptr(0x1c000000000 + Math.floor(this.rand() * 1e9));
      this.u64(24 + Math.floor(this.rand() * 2000));
      this.clr(stack ? T.allocWithStack : T.alloc, this.thread());
    } else if (r < 0.66) {
      // a whole GC: suspend, start, end, heap stats, restart; a background GC (gen2 only) restarts the
      // runtime right after its start and runs on to its end and heap stats
      const gc = ++this.gc;
      const gen = this.rand() < 0.7 ? 0 : this.rand() < 0.8 ? 1 : 2;
      const background = this.rand() < 0.9 ? false : gen === 2;
      const gcThread = this.threads[0];
      const restart = () => {
        this.u16(8);
        this.clr(T.restartBegin, gcThread);
        this.u16(8);
        this.clr(T.restartEnd, gcThread);
      };
      this.u32(0);
      this.u16(8);
      this.clr(T.triggered, gcThread);
      this.u32(1);
      this.u32(gc);
      this.u16(8);
      this.clr(T.suspendBegin, gcThread);
      this.u16(8);
      this.clr(T.suspendEnd, gcThread);
      this.u32(gc);
      this.u32(gen);
      this.u32(0);
      this.u32(background ? 1 : 0);
      this.u16(8);
      this.u64(0);
      this.clr(T.gcStart, gcThread);
      if (background) restart();
      this.u32(gc);
      this.u32(gen);
      this.u16(8);
      this.clr(T.gcEnd, gcThread);
      for (let g = 0; g < 4; g++) {
        this.u64(1_000_000 * (g + 1) + Math.floor(this.rand() * 1e6));
        this.u64(Math.floor(this.rand() * 5e5));
      }
      this.u64(0);
      this.u64(0);
      this.u32(Math.floor(this.rand() * 20));
      this.u32(3);
      this.u32(200 + Math.floor(this.rand() * 50));
      this.u16(8);
      this.u64(4096);
      this.u64(0);
      this.clr(T.heapStats, gcThread);
      if (!background) restart();
    } else if (r < 0.68) {
      const [type, message] = EXCEPTION_Z[this.index(EXCEPTION_Z.length)];
      this.str(type);
      this.str(message);
      this.ptr(0x7ff812340000 + Math.floor(this.rand() * 1e6));
      this.u32(0x80131509);
      this.u16(16);
      this.u16(8);
      this.clr(T.exception, this.thread());
    } else if (r < 0.96) {
      const lock = 0x1c000100000 + Math.floor(this.rand() * 16) * 0x40;
      const tid = this.thread();
      this.u8(0);
      this.u16(8);
      this.ptr(lock);
      this.ptr(lock + 8);
      this.u64(this.thread());
      this.clr(T.contentionStart, tid);
      this.u8(0);
      this.u16(8);
      this.f64(1000 + this.rand() * 50000);
      this.clr(T.contentionStop, tid);
    } else {
      this.u32(1 + Math.floor(this.rand() * 8));
      this.u32(0);
      this.u16(8);
      this.clr(T.workerAdjust, this.thread());
    }
  }

  /** The base of native image `k` of the stacks (IMAGES) at this pointer size. */
  private imageBase(k: number): number {
    return this.P === 4 ? IMAGES[k][1] : IMAGES[k][0];
  }

  /**
   * An AllocationTick's stack, as its extended item (STACK_TRACE32/64: MatchId, then the frames,
   * leaf first) where the payload would start: a few jitted methods (one of a few hundred allocating
   * places) above coreclr's allocator.
   */
  private allocationStack(): void {
    const P = this.P;
    const managed = 2 + this.index(3);
    const dataSize = 8 + P * (managed + 2);
    this.u16((8 + dataSize + 7) & ~7); // ItemSize
    this.u16(P === 4 ? 5 : 6); // EVENT_HEADER_EXT_TYPE_STACK_TRACE32 / 64
    this.u16(0); // the last item
    this.u16(dataSize);
    this.u64(0); // MatchId
    this.ptr(this.imageBase(0) + 0x40000 + this.index(8) * 0x40);
    // (the leaf's caller a few methods apart from the root's: stacks repeat, and share their roots)
    const leaf = this.index(Math.min(this.methods, 300));
    for (let k = 0; k < managed; k++) this.ptr(methodStart(P, this.methods - 1 - ((leaf + k * 7) % this.methods)) + this.index(4) * 16);
    this.ptr(this.imageBase(1) + 0x3000 + this.index(2) * 0x40);
    while ((this.p - EVENT_HEADER) & 7) this.s[this.p++] = 0;
  }

  /**
   * A CPU sample and its stack, 1 ms after the last: mostly one of the service's threads in a few
   * jitted methods above coreclr and ntdll (sometimes in the kernel on top), now and then idle.
   */
  private sample(): void {
    // (written in place, with no object per sample: the frames as 32-bit halves, the records in `k`)
    const P = this.P;
    const KHI = P === 4 ? 0 : 0xfffff800,
      KLO = P === 4 ? 0x81000000 : 0; // the kernel base, kernelBase(P)
    const ts = (this.ts += 1 + Math.floor(this.rand() * 400));
    const proc = this.index(this.processors);
    const idle = this.rand() < 0.1;
    const tid = idle ? 0 : this.thread();
    const lo = this.frameLo,
      hi = this.frameHi;
    let n = 0;
    const frame = (v: number) => {
      lo[n] = v >>> 0;
      hi[n++] = P === 4 ? 0 : (v - (v >>> 0)) / TWO_32;
    };
    if (!idle) {
      // (code runs at a few places: stacks repeat, as in real traces)
      if (this.rand() < 0.2) {
        for (let k = 0; k < 2; k++) {
          lo[n] = (KLO + 0x1000 + this.index(16) * 0x40 + k * 0x10000) >>> 0;
          hi[n++] = KHI;
        }
      }
      const managed = this.methods ? 1 + this.index(3) : 0;
      // methods of late: the busy ones
      for (let k = 0; k < managed; k++) frame(methodStart(P, Math.max(0, this.methods - 1 - this.index(Math.min(this.methods, 200)))) + this.index(4) * 16);
      frame(this.imageBase(0) + 0x1000 + this.index(32) * 0x80);
      frame(this.imageBase(0) + 0x20000 + this.index(4) * 0x40);
      frame(this.imageBase(1) + 0x3000 + this.index(2) * 0x40);
    }
    const type = P === 4 ? 0x10 : 0x11;
    // SampledProfile: InstructionPointer (the leaf), ThreadId, Count 1, reserved
    let at = this.systemHeader(type, SAMPLE_HOOK, ts);
    const k = this.k;
    at = this.kPtr(at, n ? lo[0] : (KLO + 0x500) >>> 0, n ? hi[0] : KHI);
    at = this.kU32(at, tid);
    k[at] = 1;
    k[at + 1] = 0;
    k[at + 2] = 0;
    k[at + 3] = 0;
    at += 4;
    this.kRecord(proc, at, ts);
    if (idle) return;
    // StackWalk: EventTimeStamp, StackProcess, StackThread, the frames
    const walkTs = (this.ts += 1);
    at = this.systemHeader(type, STACK_HOOK, walkTs);
    at = this.kU32(at, ts >>> 0);
    at = this.kU32(at, (ts - (ts >>> 0)) / TWO_32);
    at = this.kU32(at, PID);
    at = this.kU32(at, tid);
    for (let f = 0; f < n; f++) at = this.kPtr(at, lo[f], hi[f]);
    this.kRecord(proc, at, walkTs);
  }

  /** The first `n` bytes of the scratch array (made once a size: records repeat their sizes). */
  private sView(n: number): Uint8Array {
    return (this.sViews[n] ??= this.s.subarray(0, n));
  }

  /** The header of a PERFINFO record (its size patched by kRecord); returns where the payload goes. */
  private systemHeader(type: number, hook: number, ts: number): number {
    const k = this.k;
    k[0] = 2; // version
    k[1] = 0;
    k[2] = type;
    k[3] = 0xc0;
    k[6] = hook;
    k[7] = hook >>> 8;
    this.kU32(8, ts >>> 0);
    this.kU32(12, (ts - (ts >>> 0)) / TWO_32);
    return 16;
  }

  private kU32(at: number, v: number): number {
    const k = this.k;
    k[at] = v;
    k[at + 1] = v >>> 8;
    k[at + 2] = v >>> 16;
    k[at + 3] = v >>> 24;
    return at + 4;
  }

  private kPtr(at: number, lo: number, hi: number): number {
    at = this.kU32(at, lo);
    return this.P === 4 ? at : this.kU32(at, hi);
  }

  /** Places the record built in `k` (`size` bytes). */
  private kRecord(proc: number, size: number, ts: number): void {
    this.k[4] = size;
    this.k[5] = size >>> 8;
    this.record(proc, (this.kViews[size] ??= this.k.subarray(0, size)), ts);
    this.bytes += size + 8;
  }
}

/** One file of a generated session. */
export interface SessionFile {
  name: string;
  bytes: Uint8Array;
}

/**
 * The trace generateTrace(opts) makes, written as a PerfView session writes it: the .NET runtime's
 * events in `NAME.etl` and the kernel's (processes, threads, images, CPU samples and their stacks)
 * in `NAME.kernel.etl`, each file with its own header. The two sessions share the QPC clock; the
 * kernel session starts `kernelDelayTicks` (default 500) after the user session, whose header
 * therefore anchors the merged clock just as the single file's does. Held in memory: for tests.
 */
export function generateSession(opts: GenerateOptions & { name?: string; kernelDelayTicks?: number }): SessionFile[] {
  const name = opts.name ?? "generated";
  const delay = BigInt(opts.kernelDelayTicks ?? 500);
  const common = {
    bufferSize: opts.bufferSize ?? 65536,
    pointerSize: opts.pointerSize ?? 8,
    compress: opts.compress ?? false,
    numberOfProcessors: opts.processors ?? 4,
  };
  const startTime = 133000000000000000n;
  const anchor = new EtlWriter().anchor;
  const user = new EtlWriter({ ...common, anchor, startTime, loggerName: "etw-wasm-generator", logFileName: `C:\\traces\\${name}.etl` });
  const kernel = new EtlWriter({
    ...common,
    anchor: anchor + delay,
    startTime: startTime + delay, // (10^7 ticks a second: a tick is a FILETIME unit)
    loggerName: "NT Kernel Logger",
    logFileName: `C:\\traces\\${name}.kernel.etl`,
  });
  const g = new TraceGenerator(opts, {
    reuseChunks: true,
    // EVENT_HEADER records (the runtime's) to the user session, the kernel's system records to its own
    tap: (proc, record, ts) => (record[2] === 0x12 || record[2] === 0x13 ? user : kernel).raw(proc, record.slice(), BigInt(ts)),
  });
  g.run();
  return [
    { name: `${name}.etl`, bytes: user.finish() },
    { name: `${name}.kernel.etl`, bytes: kernel.finish() },
  ];
}

/** Generates a trace in memory; see GenerateOptions. For large traces use the chunk sources. */
export function generateTrace(opts: GenerateOptions): Uint8Array {
  const g = new TraceGenerator(opts);
  const parts: Uint8Array[] = [];
  for (let c = g.next(); c; c = g.next()) parts.push(c);
  const file = new Uint8Array(g.summary().bytes);
  file.set(g.header(), 0);
  let at = g.headerBufferSize;
  for (const p of parts) {
    file.set(p, at);
    at += p.length;
  }
  return file;
}

/**
 * The trace as chunks in file order, the header buffer first; the generator's return value is the
 * summary. The header buffer holds totals of the whole trace, so a first pass measures it (without
 * writing bytes or compressing) before the second yields the buffers.
 */
export function* traceChunks(opts: GenerateOptions): Generator<Uint8Array, GenerateSummary, undefined> {
  const plan = new TraceGenerator(opts, { measureOnly: true }).run();
  const g = new TraceGenerator(opts);
  yield plan.header();
  for (let c = g.next(); c; c = g.next()) yield c;
  const summary = g.summary();
  const expected = plan.summary();
  if (summary.records !== expected.records || summary.buffers !== expected.buffers) {
    throw new Error("the generator's two passes disagree");
  }
  return summary;
}

/** A generated trace as a sync and async iterable of chunks (see traceChunks). */
export interface TraceChunks extends Iterable<Uint8Array>, AsyncIterable<Uint8Array> {
  /** Set once the last chunk has been taken. */
  readonly summary: GenerateSummary | undefined;
}

/**
 * The trace as chunks (the header buffer first, then whole buffers up to `chunkBytes`), for
 * streaming a trace of any size into openTrace or elsewhere without a file. Each iteration
 * generates the trace anew; `summary` (and `onSummary`) give its totals at the end.
 */
export function generateTraceChunks(opts: GenerateOptions, onSummary?: (summary: GenerateSummary) => void): TraceChunks {
  let summary: GenerateSummary | undefined;
  function* run(): Generator<Uint8Array, void, undefined> {
    summary = yield* traceChunks(opts);
    onSummary?.(summary);
  }
  return {
    get summary() {
      return summary;
    },
    [Symbol.iterator]: run,
    async *[Symbol.asyncIterator]() {
      yield* run();
    },
  };
}
