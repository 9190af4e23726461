// A synthetic .NET EventPipe trace (.nettrace): the content of the .etl generator (generate.ts), as the
// .NET runtime's EventPipe would have written it. TraceGenerator makes its records as always, and each
// one it places is turned into its EventPipe counterpart as it comes (its `tap`):
//
// * the runtime's events (EVENT_HEADER records of the DotNETRuntime, …Rundown and …Private providers)
//   become events of the same provider name, id and version, with the metadata the runtime gives its
//   native events: an empty name and no fields (readers decode them with the runtime's manifest); the
//   payload is the same bytes, a stack extended item becomes the event's stack;
// * a kernel CPU sample (PerfInfo SampledProfile and the StackWalk after it) becomes the sample
//   profiler's Thread/Sample (Microsoft-DotNETCore-SampleProfiler id 0, payload Type: 2 Managed when
//   the stack is in jitted code, else 1 External) on the sampled thread, with the same stack; idle
//   samples and every other kernel record (processes, threads, images) have no counterpart and go;
// * the EventPipe's ProcessInfo event (the command line) comes first, and now and then an event of an
//   EventSource with a field list ("Etw.Wasm.Generator": RequestStart and Heartbeat), so readers'
//   decoding of described payloads has something to do.
//
// One process (the trace's), one capture thread per thread (the capture thread is the event's own),
// the processor the record was placed on, the .etl's QPC clock: the same options give the same
// runtime events with the same times, threads and payloads in both files.

import { CLR_PROVIDER, GENERATED_CLOCK, GENERATED_PROCESS, TraceGenerator, isJittedCode, type GenerateOptions } from "./generate.js";
import { NettraceWriter, type NettraceEventDefinition, type NettraceEventInput, type NettraceWriterStats } from "./nettrace-writer.js";

export interface GenerateNettraceOptions extends GenerateOptions {
  /** 4, 5 (default: the V4 container with the V5 metadata tags, as .NET 5+ writes it) or 6. */
  version?: 4 | 5 | 6;
  /** Header compression (default true, as the runtime writes). */
  compressedHeaders?: boolean;
  /**
   * Stop once the .nettrace holds about this many bytes. `targetBytes` measures the content as the
   * .etl generator does (so the same options give the same events in both files); give
   * `targetBytes: Infinity` and this to make a .nettrace of a size.
   */
  fileBytes?: number;
  /** Event bytes a block holds (the runtime's 100 KiB). */
  blockBytes?: number;
  /** Output bytes between sequence points (default 10 MiB). */
  sequencePointBytes?: number;
  /** Each capture thread's events in blocks of their own, as the runtime writes them (NettraceWriterOptions.threadBlocks). Default false. */
  threadBlocks?: boolean;
  /** Largest chunk the chunk sources give (default 1 MiB). */
  chunkBytes?: number;
}

/** What a generated .nettrace holds. */
export interface NettraceSummary {
  version: 4 | 5 | 6;
  /** File size in bytes. */
  bytes: number;
  /** Events (metadata records not counted): the reader's event rows. */
  events: number;
  /** Events by provider name. */
  providers: Record<string, number>;
  metadata: number;
  /** Stacks written (an interned stack once per sequence-point interval). */
  stacks: number;
  blocks: NettraceWriterStats["blocks"];
  /** Records the .etl content had, and those of them without an EventPipe counterpart. */
  sourceRecords: number;
  droppedRecords: number;
}

const RUNTIME_PROVIDER = "Microsoft-Windows-DotNETRuntime";
const RUNDOWN_PROVIDER = "Microsoft-Windows-DotNETRuntimeRundown";
const PRIVATE_PROVIDER = "Microsoft-Windows-DotNETRuntimePrivate";
const SAMPLE_PROFILER_PROVIDER = "Microsoft-DotNETCore-SampleProfiler";
const EVENTPIPE_PROVIDER_NAME = "Microsoft-DotNETCore-EventPipe";
const GENERATOR_EVENTSOURCE = "Etw.Wasm.Generator";

/** The runtime providers by GUID (as .NET lays GUIDs out in memory, read as four little-endian words). */
const CLR_PROVIDERS: [string, Uint32Array][] = [
  [RUNTIME_PROVIDER, guidWords(CLR_PROVIDER)],
  [RUNDOWN_PROVIDER, guidWords("a669021c-c450-4609-a035-5af59af4df18")],
  [PRIVATE_PROVIDER, guidWords("763fd754-7086-4dfe-95eb-c01a46faf4ca")],
];
const PERFINFO_SAMPLE = 0x0f2e,
  STACKWALK_STACK = 0x1820;
const TWO_32 = 4294967296;
/** An EventSource event now and then: after every this many runtime events. */
const EVENTSOURCE_EVERY = 50;

function guidWords(text: string): Uint32Array {
  const h = text.replace(/-/g, "");
  const b = Uint8Array.from({ length: 16 }, (_, i) => parseInt(h.slice(2 * i, 2 * i + 2), 16));
  const bytes = Uint8Array.from([b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], ...b.subarray(8)]);
  const v = new DataView(bytes.buffer);
  return Uint32Array.from({ length: 4 }, (_, i) => v.getUint32(4 * i, true));
}

function utf16z(s: string): Uint8Array {
  const out = new Uint8Array(2 * s.length + 2);
  for (let i = 0; i < s.length; i++) {
    out[2 * i] = s.charCodeAt(i);
    out[2 * i + 1] = s.charCodeAt(i) >> 8;
  }
  return out;
}

const u16 = (b: Uint8Array, p: number) => b[p] | (b[p + 1] << 8);
const u32 = (b: Uint8Array, p: number) => (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
const n64 = (b: Uint8Array, p: number) => u32(b, p) + u32(b, p + 4) * TWO_32;

const PATHS = ["/orders", "/orders/{id}", "/prices/quote", "/health", "/customers/{id}/orders"].map(utf16z);
const MESSAGES = ["steady", "queue draining", "cache warm"].map(utf16z);

/** The EventSource's events (version 4 cannot describe the array field: left out there). */
function requestStart(withArray: boolean): NettraceEventDefinition {
  return {
    providerName: GENERATOR_EVENTSOURCE,
    eventId: 1,
    eventName: "RequestStart",
    opcode: 1,
    level: 4,
    keywords: 0x1n,
    fields: [
      { name: "RequestId", typeCode: 9 },
      { name: "Bytes", typeCode: 11 },
      { name: "Path", typeCode: 18 },
      { name: "CorrelationId", typeCode: 17 },
      { name: "DurationMSec", typeCode: 14 },
      ...(withArray ? [{ name: "StatusCodes", typeCode: 19, elementType: { typeCode: 9 } }] : []),
    ],
  };
}
const HEARTBEAT: NettraceEventDefinition = {
  providerName: GENERATOR_EVENTSOURCE,
  eventId: 2,
  eventName: "Heartbeat",
  level: 5,
  keywords: 0x2n,
  fields: [
    { name: "Sequence", typeCode: 10 },
    { name: "Message", typeCode: 18 },
  ],
};

/** Where a generator's bytes go. */
export interface NettraceSink {
  /** Receives the file in order; without it the file is kept for file(). */
  onChunk?: (chunk: Uint8Array) => void;
  /** The chunk is valid only during the call. */
  reuseChunks?: boolean;
}

/**
 * Generates a .nettrace from the .etl generator's content: step() until false, then summary() (and
 * file(), without a sink).
 */
export class NettraceGenerator {
  readonly version: 4 | 5 | 6;
  private readonly writer: NettraceWriter;
  private readonly source: TraceGenerator;
  private readonly P: 4 | 8;
  private readonly fileBytes: number;
  private done = false;
  private bytes: Uint8Array | null = null;

  private readonly ev: NettraceEventInput = { metadataId: 0, timestamp: 0, threadId: 0, processor: -1 };
  private readonly clrMetadata = new Map<number, number>();
  private readonly lastVersion = new Uint16Array(3 * 65536);
  private readonly lastMetadata = new Int32Array(3 * 65536);
  private readonly providerOf: string[] = [""];
  private readonly counts: number[] = [0];
  private sampleMetadata = 0;
  private readonly sampleType = new Uint8Array(4);
  private pending = false;
  private pendingTs = 0;
  private pendingTid = 0;
  private pendingProc = 0;
  private started = false;
  private clrEvents = 0;
  private requestMetadata = 0;
  private heartbeatMetadata = 0;
  private readonly es = new Uint8Array(1024);
  private readonly esView = new DataView(this.es.buffer);
  private esCount = 0;
  private sourceRecords = 0;
  private dropped = 0;
  private readonly stackScratch = new Uint8Array(8 * 1024);
  private readonly viewSources: Uint8Array[] = [];
  private readonly payloadSources: Uint8Array[] = [];
  private readonly payloadViews: Uint8Array[] = [];
  private readonly views: DataView[] = [];

  constructor(opts: GenerateNettraceOptions, sink: NettraceSink = {}) {
    this.version = opts.version ?? 5;
    this.P = opts.pointerSize ?? 8;
    this.fileBytes = opts.fileBytes ?? Infinity;
    this.writer = new NettraceWriter({
      version: this.version,
      pointerSize: this.P,
      processId: GENERATED_PROCESS.pid,
      numberOfProcessors: opts.processors ?? 4,
      expectedCpuSamplingRate: 1_000_000,
      qpcFrequency: GENERATED_CLOCK.frequency,
      syncTimeQpc: GENERATED_CLOCK.anchor,
      syncTimeUtc: GENERATED_CLOCK.startFiletime,
      compressedHeaders: opts.compressedHeaders ?? true,
      blockBytes: opts.blockBytes,
      sequencePointBytes: opts.sequencePointBytes,
      threadBlocks: opts.threadBlocks,
      chunkBytes: opts.chunkBytes,
      onChunk: sink.onChunk,
      reuseChunks: sink.reuseChunks,
    });
    // (the .etl content's records go to the tap only: no .etl buffers are made)
    this.source = new TraceGenerator(opts, { measureOnly: true, tap: (proc, record, ts) => this.record(proc, record, ts) });
  }

  /** Generates some more (a few hundred records); false once the file is complete. */
  step(): boolean {
    if (this.done) return false;
    const more = this.source.advance() && this.writer.size < this.fileBytes;
    if (!more) {
      this.flushSample();
      this.bytes = this.writer.finish();
      this.done = true;
    }
    return more;
  }

  run(): this {
    while (this.step()) {}
    return this;
  }

  /** The whole file, when there was no sink. */
  file(): Uint8Array {
    if (!this.done) throw new Error("the file is known at the end");
    return this.bytes!;
  }

  summary(): NettraceSummary {
    if (!this.done) throw new Error("the totals are known at the end");
    const s = this.writer.stats;
    const providers: Record<string, number> = {};
    for (let m = 1; m < this.counts.length; m++) if (this.counts[m]) providers[this.providerOf[m]] = (providers[this.providerOf[m]] ?? 0) + this.counts[m];
    return {
      version: this.version,
      bytes: s.bytes,
      events: s.events,
      providers,
      metadata: s.metadata,
      stacks: s.stacks,
      blocks: { ...s.blocks },
      sourceRecords: this.sourceRecords,
      droppedRecords: this.dropped,
    };
  }

  private define(def: NettraceEventDefinition): number {
    const id = this.writer.defineEvent(def);
    this.providerOf[id] = def.providerName;
    this.counts[id] = 0;
    return id;
  }

  private write(): void {
    this.writer.writeEvent(this.ev);
    this.counts[this.ev.metadataId]++;
  }

  /** One record of the .etl content (valid during the call only). */
  private record(proc: number, r: Uint8Array, ts: number): void {
    this.sourceRecords++;
    if (!this.started) {
      this.started = true;
      this.processInfo(ts);
    }
    const type = r[2];
    if (type === 0x12 || type === 0x13) {
      this.flushSample();
      if (!this.runtimeEvent(proc, r, ts)) this.dropped++;
      return;
    }
    if (type === 0x10 || type === 0x11) {
      const hook = u16(r, 6);
      if (hook === PERFINFO_SAMPLE) {
        this.flushSample();
        this.sample(proc, r, ts);
        return;
      }
      if (hook === STACKWALK_STACK && this.pending) {
        this.stackWalk(r);
        return;
      }
    }
    this.flushSample();
    this.dropped++;
  }

  /** The EventPipe's ProcessInfo, first: the command line (V5+: and the OS and architecture). */
  private processInfo(ts: number): void {
    const v4 = this.version === 4;
    const id = this.define({
      providerName: EVENTPIPE_PROVIDER_NAME,
      eventId: 1,
      eventName: "ProcessInfo",
      version: v4 ? 0 : 1,
      fields: [
        { name: "CommandLine", typeCode: 18 },
        ...(v4
          ? []
          : [
              { name: "OSInformation", typeCode: 18 },
              { name: "ArchInformation", typeCode: 18 },
            ]),
      ],
    });
    const parts = [utf16z(GENERATED_PROCESS.commandLine), ...(v4 ? [] : [utf16z("Microsoft Windows 10.0.19045"), utf16z(this.P === 4 ? "X86" : "X64")])];
    const payload = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      payload.set(p, at);
      at += p.length;
    }
    this.event(id, ts, GENERATED_PROCESS.threads[0], 0, payload, 0, payload.length, null, 0, 0);
    this.write();
  }

  private event(
    metadataId: number,
    ts: number,
    tid: number,
    proc: number,
    payload: Uint8Array,
    start: number,
    end: number,
    stack: Uint8Array | null,
    stackStart: number,
    stackEnd: number,
  ): void {
    const e = this.ev;
    e.metadataId = metadataId;
    e.timestamp = ts;
    e.threadId = tid;
    e.captureThreadId = tid;
    e.processor = proc;
    e.payload = payload;
    e.payloadStart = start;
    e.payloadEnd = end;
    e.stack = stack;
    e.stackStart = stackStart;
    e.stackEnd = stackEnd;
    e.activityId = null;
  }

  /** A runtime event (EVENT_HEADER record); false when its provider is not the runtime's. */
  private runtimeEvent(proc: number, r: Uint8Array, ts: number): boolean {
    // (read by words: the records come from one or two arrays, whose views are kept)
    const v = this.viewOf(r),
      o = r.byteOffset;
    const g0 = v.getUint32(o + 24, true),
      g1 = v.getUint32(o + 28, true),
      g2 = v.getUint32(o + 32, true),
      g3 = v.getUint32(o + 36, true);
    let provider = -1;
    for (let k = 0; k < CLR_PROVIDERS.length; k++) {
      const g = CLR_PROVIDERS[k][1];
      if (g[0] === g0 && g[1] === g1 && g[2] === g2 && g[3] === g3) {
        provider = k;
        break;
      }
    }
    if (provider < 0) return false;
    const size = u16(r, 0);
    const flags = u16(r, 4);
    const id = u16(r, 40),
      version = r[42];
    // (the metadata of an event's last version by a table, the others by the map)
    const pi = provider * 65536 + id;
    const key = pi * 256 + version;
    let metadataId: number | undefined = this.lastVersion[pi] === version + 1 ? this.lastMetadata[pi] : this.clrMetadata.get(key);
    if (metadataId === undefined) {
      // as the runtime describes its native events: name and fields empty (§7.5 of the format)
      const keywords = BigInt(u32(r, 48)) | (BigInt(u32(r, 52)) << 32n);
      metadataId = this.define({ providerName: CLR_PROVIDERS[provider][0], eventId: id, version, level: r[44], keywords });
      this.clrMetadata.set(key, metadataId);
    }
    this.lastVersion[pi] = version + 1;
    this.lastMetadata[pi] = metadataId;
    let p = 0x50;
    let stack: Uint8Array | null = null,
      stackStart = 0,
      stackEnd = 0;
    if (flags & 1) {
      // extended items: a stack becomes the event's
      for (;;) {
        const type = u16(r, p + 2),
          linkage = u16(r, p + 4),
          dataSize = u16(r, p + 6);
        if (type === 5 || type === 6) [stack, stackStart, stackEnd] = this.frames(r, p + 16, p + 8 + dataSize, type === 6 ? 8 : 4);
        p += (8 + dataSize + 7) & ~7;
        if (!(linkage & 1)) break;
      }
    }
    const tid = v.getUint32(o + 8, true);
    if (p === 0x50 && size > 0x50) {
      // the payload as an array of its own (kept by record array: the records' arrays repeat), which copies fastest
      let payload = this.payloadViews[size];
      if (this.payloadSources[size] !== r) {
        this.payloadSources[size] = r;
        payload = this.payloadViews[size] = r.subarray(0x50, size);
      }
      this.event(metadataId, ts, tid, proc, payload, 0, size - 0x50, stack, stackStart, stackEnd);
    } else this.event(metadataId, ts, tid, proc, r, p, size, stack, stackStart, stackEnd);
    if ((v.getUint32(o + 64) | v.getUint32(o + 68) | v.getUint32(o + 72) | v.getUint32(o + 76)) !== 0) this.ev.activityId = r.slice(64, 80);
    this.write();
    if (++this.clrEvents % EVENTSOURCE_EVERY === 0) this.eventSource(ts, tid, proc);
    return true;
  }

  /** A DataView of `b`'s buffer, kept for the array (records come in a few arrays, one a size). */
  private viewOf(b: Uint8Array): DataView {
    const n = b.length;
    if (this.viewSources[n] === b) return this.views[n];
    this.viewSources[n] = b;
    return (this.views[n] = new DataView(b.buffer));
  }

  /** Frames [start, end) of `width` bytes, as the trace's pointer size. */
  private frames(r: Uint8Array, start: number, end: number, width: number): [Uint8Array, number, number] {
    if (width === this.P) return [r, start, end];
    const n = Math.min(Math.floor((end - start) / width), this.stackScratch.length / 8);
    const out = this.stackScratch;
    out.fill(0, 0, n * this.P);
    for (let k = 0; k < n; k++) for (let i = 0; i < Math.min(width, this.P); i++) out[k * this.P + i] = r[start + k * width + i];
    return [out, 0, n * this.P];
  }

  /** A kernel CPU sample: kept until its stack walk comes (idle ones go). */
  private sample(proc: number, r: Uint8Array, ts: number): void {
    const tid = u32(r, 0x10 + this.P);
    if (tid === 0) {
      this.dropped++;
      return;
    }
    this.pending = true;
    this.pendingTs = ts;
    this.pendingTid = tid;
    this.pendingProc = proc;
  }

  /** The stack walk of the pending sample: the sample goes out with its stack. */
  private stackWalk(r: Uint8Array): void {
    const size = u16(r, 4);
    if (n64(r, 0x10) !== this.pendingTs || u32(r, 0x1c) !== this.pendingTid) {
      this.flushSample();
      this.dropped++;
      return;
    }
    this.writeSample(r, 0x20, size);
  }

  /** A sample whose stack walk did not come: out without a stack. */
  private flushSample(): void {
    if (this.pending) this.writeSample(null, 0, 0);
  }

  private writeSample(stack: Uint8Array | null, start: number, end: number): void {
    this.pending = false;
    if (!this.sampleMetadata) this.sampleMetadata = this.define({ providerName: SAMPLE_PROFILER_PROVIDER, eventId: 0, level: 4 });
    let managed = false;
    if (stack) {
      const v = this.viewOf(stack),
        o = stack.byteOffset,
        P = this.P;
      for (let p = o + start; p + P <= o + end && !managed; p += P) {
        managed = isJittedCode(P, P === 8 ? v.getUint32(p, true) + v.getUint32(p + 4, true) * TWO_32 : v.getUint32(p, true));
      }
    }
    this.sampleType[0] = managed ? 2 : 1;
    this.event(this.sampleMetadata, this.pendingTs, this.pendingTid, this.pendingProc, this.sampleType, 0, 4, stack, start, end);
    this.write();
  }

  /** An event of the EventSource, on the thread of the runtime event before it. */
  private eventSource(ts: number, tid: number, proc: number): void {
    const n = ++this.esCount;
    const b = this.es,
      v = this.esView;
    let p = 0;
    let id: number;
    if (n % 2) {
      if (!this.requestMetadata) this.requestMetadata = this.define(requestStart(this.version !== 4));
      id = this.requestMetadata;
      v.setInt32(p, n, true);
      v.setBigInt64(p + 4, BigInt(n) * 1_000_003n, true);
      p += 12;
      const path = PATHS[n % PATHS.length];
      b.set(path, p);
      p += path.length;
      // the correlation id: n in Data1, then a fixed tail
      v.setUint32(p, n, true);
      for (let i = 4; i < 16; i++) b[p + i] = 0xa0 + i;
      p += 16;
      v.setFloat64(p, n / 8 + 0.125, true);
      p += 8;
      if (this.version !== 4) {
        const count = n % 4;
        v.setUint16(p, count, true);
        p += 2;
        for (let k = 0; k < count; k++, p += 4) v.setInt32(p, 200 + 100 * k + (n % 7), true);
      }
    } else {
      if (!this.heartbeatMetadata) this.heartbeatMetadata = this.define(HEARTBEAT);
      id = this.heartbeatMetadata;
      v.setUint32(p, n >>> 1, true);
      p += 4;
      const m = MESSAGES[n % MESSAGES.length];
      b.set(m, p);
      p += m.length;
    }
    this.event(id, ts, tid, proc, b, 0, p, null, 0, 0);
    this.write();
  }
}

/** Generates a .nettrace in memory; see GenerateNettraceOptions. For large files use nettraceChunks or generateNettraceFile. */
export function generateNettrace(opts: GenerateNettraceOptions): { bytes: Uint8Array; summary: NettraceSummary } {
  const g = new NettraceGenerator(opts).run();
  return { bytes: g.file(), summary: g.summary() };
}

/** The .nettrace as chunks in file order (each at most `chunkBytes`); the generator's return value is the summary. */
export function* nettraceChunks(opts: GenerateNettraceOptions): Generator<Uint8Array, NettraceSummary, undefined> {
  const ready: Uint8Array[] = [];
  const g = new NettraceGenerator(opts, { onChunk: (c) => ready.push(c) });
  for (let more = true; more; ) {
    more = g.step();
    while (ready.length) yield ready.shift()!;
  }
  return g.summary();
}
