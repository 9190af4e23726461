// The .nettrace generator (bindings/generator/generate-nettrace.ts, nettrace-writer.ts), checked with the
// library's own EventPipe reader and, as the independent oracle, against the .etl generator: the same
// options written as .etl and as .nettrace must give the same .NET runtime events (id, version, time,
// thread, processor, payload bytes, in order), the same CPU samples with the same stacks, and the same
// GCStats and JITStats. The writer's own features the generator does not use (activity ids, sorted
// events, uncompressed headers, several threads per capture thread, nested fields) are checked on
// small hand-made files.

import { afterAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openTrace, type Trace } from "../dist/bindings/index.js";
import { readNettrace, stackFrames, NettraceFormatError, NE_TRUNCATED, EVENT_SORTED, type NettraceFile } from "../dist/bindings/eventpipe/reader.js";
import { cpuProfile, gcStats, jitStats } from "../dist/bindings/analysis/index.js";
import { generateTrace, GENERATED_PROCESS, type GenerateOptions } from "../dist/bindings/generator/generate.js";
import { generateNettrace, nettraceChunks, NettraceGenerator, type GenerateNettraceOptions } from "../dist/bindings/generator/generate-nettrace.js";
import { records } from "../dist/bindings/generator/etl-writer.js";
import { generateNettraceFile } from "../dist/bindings/generator/generate-file.js";
import { NettraceWriter } from "../dist/bindings/generator/nettrace-writer.js";

const dir = mkdtempSync(join(tmpdir(), "etw-wasm-nettrace-gen-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", maxBuffer: 1 << 28 });

const RUNTIME = "Microsoft-Windows-DotNETRuntime";
const SAMPLE_PROFILER = "Microsoft-DotNETCore-SampleProfiler";
const PERFINFO = "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc";
const STACKWALK = "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3";
const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
const json = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x));

/** A few hundred KB, several blocks and sequence points, with CPU samples. */
const BASE: GenerateOptions = { targetBytes: 700_000, samples: true, seed: 7, processors: 3 };
const FLAVOURS: [string, GenerateNettraceOptions, number][] = [
  ["V4", { ...BASE, version: 4, sequencePointBytes: 80_000 }, 4],
  ["V5", { ...BASE, version: 5, sequencePointBytes: 80_000 }, 5],
  ["V6", { ...BASE, version: 6, sequencePointBytes: 80_000 }, 6],
  ["V4 uncompressed headers, 4-byte pointers", { ...BASE, pointerSize: 4, version: 4, compressedHeaders: false, sequencePointBytes: 150_000 }, 4],
  ["V6 uncompressed headers", { ...BASE, version: 6, compressedHeaders: false, blockBytes: 20_000, sequencePointBytes: 150_000 }, 6],
];

/** An event's thread as the OS numbers it: a V6 file's events give an index into its thread table (§15). */
function osThread(file: NettraceFile, tid: number): number {
  if (file.header.formatVersion !== 6) return tid;
  const t = file.threads.find((x) => Number(x.index) === tid);
  return t?.osThreadId !== undefined ? Number(t.osThreadId) : -1;
}

/** The runtime's events in time order: id, version, time, thread, processor, payload. */
function runtimeEvents(t: Trace, thread: (tid: number) => number = (x) => x): string[] {
  const out: string[] = [];
  for (const r of t.query({ provider: RUNTIME, order: "time" }))
    out.push(`${r.eventId}v${r.version} @${r.timestamp} t${thread(r.tid ?? -1)} p${r.processor} ${hex(r.payload)}`);
  return out;
}

/** The .etl's CPU samples with their stacks (StackWalk: time of the sample, thread, frames); idle samples have none. */
function etlSamples(t: Trace): string[] {
  const out: string[] = [];
  for (const r of t.query({ provider: STACKWALK, order: "time" })) {
    const p = r.payload;
    const v = new DataView(p.buffer, p.byteOffset, p.byteLength);
    out.push(`@${v.getBigInt64(0, true)} t${v.getUint32(12, true)} ${hex(p.subarray(16))}`);
  }
  return out;
}

function nettraceSamples(t: Trace, thread: (tid: number) => number = (x) => x): string[] {
  const out: string[] = [];
  for (const r of t.query({ provider: SAMPLE_PROFILER, order: "time" })) {
    const item = r.extendedItems.find((x) => x.type === 5 || x.type === 6);
    out.push(`@${r.timestamp} t${thread(r.tid ?? -1)} ${item ? hex(item.data.subarray(8)) : "-"}`);
  }
  return out;
}

describe("generateNettrace: what the reader finds", () => {
  for (const [name, opts, format] of FLAVOURS) {
    it(`${name}: no warning, complete, every event and block the summary counts`, () => {
      const { bytes, summary } = generateNettrace(opts);
      expect(bytes.length).toBe(summary.bytes);
      expect(bytes.length).toBeGreaterThan(150_000);
      const f = readNettrace(bytes);
      expect(f.error).toBeNull();
      expect(f.warnings).toEqual([]);
      expect(f.complete).toBe(true);
      expect(f.eventsLost).toBe(0);
      expect(f.header.formatVersion).toBe(format);
      expect(f.header.container).toBe(format === 6 ? "nettrace6" : "nettrace");
      expect(f.header.pointerSize).toBe(opts.pointerSize ?? 8);
      expect(f.header.processId).toBe(GENERATED_PROCESS.pid);
      expect(f.header.numberOfProcessors).toBe(3);
      expect(f.header.qpcFrequency).toBe(10_000_000n);
      expect(f.events.length).toBe(summary.events);
      const byProvider: Record<string, number> = {};
      for (let i = 0; i < f.events.length; i++) {
        expect(f.events.metadata[i]).toBeGreaterThanOrEqual(0);
        const p = f.metadata[f.events.metadata[i]].providerName;
        byProvider[p] = (byProvider[p] ?? 0) + 1;
      }
      expect(byProvider).toEqual(summary.providers);
      expect(Object.keys(summary.providers).sort()).toEqual(["Etw.Wasm.Generator", "Microsoft-DotNETCore-EventPipe", RUNTIME, SAMPLE_PROFILER].sort());
      expect(summary.providers["Microsoft-DotNETCore-EventPipe"]).toBe(1);
      expect(f.metadata.length).toBe(summary.metadata);
      const { trace, removeThread, unknown, ...blocks } = f.blockCounts;
      expect({ trace, removeThread, unknown }).toEqual({ trace: 1, removeThread: 0, unknown: 0 });
      expect(blocks).toEqual(summary.blocks);
      expect(summary.blocks.sequencePoint).toBeGreaterThan(1);
      expect(f.stacks.length).toBe(summary.stacks);
      // every sample has its stack; the runtime's events have the runtime's empty metadata
      for (let i = 0; i < f.events.length; i++) {
        const m = f.metadata[f.events.metadata[i]];
        if (m.providerName === SAMPLE_PROFILER) expect(f.events.stack[i]).toBeGreaterThanOrEqual(0);
        if (m.providerName === RUNTIME) expect({ name: m.eventName, fields: m.fields.length }).toEqual({ name: "", fields: 0 });
        expect(f.events.flags[i] & EVENT_SORTED).toBe(0);
      }
    });
  }

  it("the same options give the same file; the chunks and the file writer give it too", () => {
    const opts: GenerateNettraceOptions = { ...BASE, version: 6, chunkBytes: 64 * 1024 };
    const { bytes, summary } = generateNettrace(opts);
    expect(Buffer.compare(Buffer.from(generateNettrace(opts).bytes), Buffer.from(bytes))).toBe(0);
    const chunks: Uint8Array[] = [];
    const it = nettraceChunks(opts);
    let r = it.next();
    for (; !r.done; r = it.next()) {
      expect(r.value.length).toBeLessThanOrEqual(64 * 1024);
      chunks.push(r.value);
    }
    expect(r.value).toEqual(summary);
    expect(Buffer.compare(Buffer.concat(chunks), Buffer.from(bytes))).toBe(0);
    const path = join(dir, "g.nettrace");
    expect(generateNettraceFile(path, opts)).toEqual(summary);
    expect(Buffer.compare(readFileSync(path), Buffer.from(bytes))).toBe(0);
  });

  it("fileBytes: a file of about a size, the content running on as long as needed", () => {
    const { bytes, summary } = generateNettrace({ targetBytes: Infinity, fileBytes: 600_000, samples: true, version: 5 });
    expect(bytes.length).toBeGreaterThanOrEqual(600_000);
    expect(bytes.length).toBeLessThan(700_000);
    expect(readNettrace(bytes).events.length).toBe(summary.events);
  });
});

describe("generateNettrace against generateTrace: the same content in both formats", () => {
  for (const [name, opts] of FLAVOURS) {
    it(`${name}: runtime events, samples and their stacks, GC and JIT statistics`, async () => {
      const etlOpts: GenerateOptions = {
        targetBytes: opts.targetBytes,
        samples: opts.samples,
        seed: opts.seed,
        processors: opts.processors,
        pointerSize: opts.pointerSize,
      };
      const etl = await openTrace(generateTrace(etlOpts));
      const bytes = generateNettrace(opts).bytes;
      const nt = await openTrace(bytes);
      expect(etl.complete && nt.complete).toBe(true);
      expect(nt.warnings).toEqual([]);
      // (a V6 file's events name their thread by an index into its thread table: the row's tid is the OS thread it gives)
      const a = runtimeEvents(etl),
        b = runtimeEvents(nt);
      expect(a.length).toBeGreaterThan(3000);
      expect(b.length).toBe(a.length);
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) expect({ i, nettrace: b[i] }).toEqual({ i, nettrace: a[i] });
      // the same clock: times relative to the trace start and as dates
      const first = nt.query({ provider: RUNTIME, order: "time" }).indices[0],
        firstEtl = etl.query({ provider: RUNTIME, order: "time" }).indices[0];
      expect(nt.events.row(first).relativeMSec).toBe(etl.events.row(firstEtl).relativeMSec);
      expect(nt.events.row(first).filetime).toBe(etl.events.row(firstEtl).filetime);

      // samples: the .etl's non-idle kernel samples are the sample profiler's, with the same stacks
      const sa = etlSamples(etl),
        sb = nettraceSamples(nt);
      expect(sa.length).toBeGreaterThan(200);
      expect(sb).toEqual(sa);
      const pe = cpuProfile(etl),
        pn = cpuProfile(nt);
      expect(pe.samples.length).toBe(sa.length);
      let kernelSamples = 0;
      for (const r of etl.query({ provider: PERFINFO })) if (r.opcode === 46) kernelSamples++;
      expect(pe.samples.length + pe.idleSamples).toBe(kernelSamples);
      // (EventPipe samples weigh the time to their thread's next sample: each thread's last one goes)
      const sampledThreads = new Set(sa.map((s) => s.split(" ")[1])).size;
      expect(pn.samples.length).toBe(sa.length - sampledThreads);

      // the statistics TraceEvent computes from the runtime's events
      expect(json(await gcStats(nt))).toBe(json(await gcStats(etl)));
      const jit = await jitStats(nt);
      expect(json(jit)).toBe(json(await jitStats(etl)));
      const gc = await gcStats(nt);
      expect(gc.map((p) => [p.PID, p.ProcessName])).toEqual([[GENERATED_PROCESS.pid, "Contoso.Orders"]]);
      expect(gc[0].GCs.length).toBeGreaterThan(10);
    });
  }

  it("the process info and the EventSource's events decode by their metadata", async () => {
    for (const version of [4, 5, 6] as const) {
      const nt = await openTrace(generateNettrace({ ...BASE, version }).bytes);
      const info = nt.query({ provider: "Microsoft-DotNETCore-EventPipe" });
      expect(info.length).toBe(1);
      const pi = nt.events.row(info.indices[0]);
      expect(pi.name).toBe("Microsoft-DotNETCore-EventPipe/ProcessInfo");
      expect(pi.fields).toEqual(
        version === 4
          ? { CommandLine: GENERATED_PROCESS.commandLine }
          : { CommandLine: GENERATED_PROCESS.commandLine, OSInformation: "Microsoft Windows 10.0.19045", ArchInformation: "X64" },
      );
      expect(nt.processName(info.indices[0])).toBe("Contoso.Orders");
      const es = nt.query({ provider: "Etw.Wasm.Generator", order: "time" }).indices;
      expect(es.length).toBeGreaterThan(50);
      const r1 = nt.events.row(es[0]).clone(),
        r2 = nt.events.row(es[1]).clone(),
        r3 = nt.events.row(es[2]).clone();
      expect(r1.name).toBe("Etw.Wasm.Generator/Request/Start");
      expect(r1.fields).toEqual({
        RequestId: 1,
        Bytes: 1_000_003n,
        Path: "/orders/{id}",
        CorrelationId: "00000001-a5a4-a7a6-a8a9-aaabacadaeaf",
        DurationMSec: 0.25,
        ...(version === 4 ? {} : { StatusCodes: [201] }),
      });
      expect(r2.name).toBe("Etw.Wasm.Generator/Heartbeat");
      expect(r2.fields).toEqual({ Sequence: 1, Message: "cache warm" });
      if (version !== 4) expect(r3.get("StatusCodes")).toEqual([203, 303, 403]);
    }
  });
});

describe("the conversion of an .etl record", () => {
  it("a runtime event's stack extended item becomes its stack (4-byte frames widened); an activity id stays", () => {
    const g = new NettraceGenerator({ targetBytes: 20_000, seed: 3, version: 5 });
    const frames = new Uint8Array(8 + 12);
    new DataView(frames.buffer).setUint32(8, 0x1234, true);
    new DataView(frames.buffer).setUint32(12, 0x5678, true);
    new DataView(frames.buffer).setUint32(16, 0x9abc, true);
    const make = (id: number, ext: { type: number; data: Uint8Array }[], ts: number) =>
      records.event({
        headerType: 0x13,
        provider: "a669021c-c450-4609-a035-5af59af4df18",
        id,
        version: 1,
        level: 4,
        opcode: 0,
        task: 0,
        keywords: 8n,
        pid: GENERATED_PROCESS.pid,
        tid: 77,
        ts: BigInt(ts),
        payload: Uint8Array.from([1, 2, 3, 4, 5]),
        ext,
        activityId: "11111111-2222-3333-4444-555555555555",
      });
    const tap = (g as unknown as { record(proc: number, r: Uint8Array, ts: number): void }).record.bind(g);
    tap(1, make(150, [{ type: 5, data: frames }], 5000), 5000);
    tap(
      2,
      records.event({
        headerType: 0x13,
        provider: "00000000-0000-0000-0000-000000000001",
        id: 1,
        version: 0,
        level: 4,
        opcode: 0,
        task: 0,
        keywords: 0n,
        pid: 1,
        tid: 1,
        ts: 5001n,
        payload: new Uint8Array(0),
      }),
      5001,
    );
    const summary = g.run().summary();
    expect(summary.providers["Microsoft-Windows-DotNETRuntimeRundown"]).toBe(1);
    expect(summary.droppedRecords).toBeGreaterThan(0);
    const f = readNettrace(g.file());
    expect(f.warnings).toEqual([]);
    const i = Array.from({ length: f.events.length }, (_, k) => k).find(
      (k) => f.metadata[f.events.metadata[k]].providerName === "Microsoft-Windows-DotNETRuntimeRundown",
    )!;
    expect(f.metadata[f.events.metadata[i]]).toMatchObject({ eventId: 150, version: 1, level: 4, keywords: 8n, eventName: "", fields: [] });
    expect(Array.from(stackFrames(f, f.events.stack[i]))).toEqual([0x1234n, 0x5678n, 0x9abcn]);
    expect(hex(g.file().subarray(f.events.payloadOffset[i], f.events.payloadOffset[i] + f.events.payloadLength[i]))).toBe("0102030405");
    // (its parts read the same either way round: the .NET layout's bytes are the text's)
    expect(hex(g.file().subarray(f.events.activityIdOffset[i], f.events.activityIdOffset[i] + 16))).toBe("11111111222233334444555555555555");
    expect(Number(f.events.threadId[i])).toBe(77);
    expect(f.events.processorNumber[i]).toBe(1);
  });
});

describe("a generated .nettrace cut short", () => {
  it("gives the events before the cut and the error with its offset", async () => {
    for (const version of [5, 6] as const) {
      const { bytes } = generateNettrace({ ...BASE, version, sequencePointBytes: 100_000 });
      const full = readNettrace(bytes);
      for (const fraction of [0.3, 0.55, 0.999]) {
        const cut = bytes.subarray(0, Math.floor(bytes.length * fraction));
        const f = readNettrace(cut);
        expect(f.complete).toBe(false);
        expect(f.error).toBeInstanceOf(NettraceFormatError);
        expect(f.error!.code).toBe(NE_TRUNCATED);
        expect(f.error!.offset).toBeGreaterThan(0);
        expect(f.error!.offset).toBeLessThanOrEqual(cut.length);
        expect(f.error!.message).toMatch(/at byte offset \d+/);
        // the events read are the full file's first ones, those in the blocks before the cut
        expect(f.events.length).toBeGreaterThan(0);
        expect(f.events.length).toBeLessThan(full.events.length);
        for (const i of [0, f.events.length >> 1, f.events.length - 1]) {
          expect(f.events.timestamp[i]).toBe(full.events.timestamp[i]);
          expect(f.events.payloadOffset[i]).toBe(full.events.payloadOffset[i]);
          expect(f.events.blockOffset[i] + 1).toBeLessThan(cut.length);
        }
        const t = await openTrace(cut);
        expect(t.complete).toBe(false);
        expect(t.incomplete?.offset).toBe(f.error!.offset);
        expect(t.events.length).toBe(f.events.length);
      }
    }
  });
});

describe("NettraceWriter", () => {
  const A = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
  const B = Uint8Array.from({ length: 16 }, (_, i) => 0xb0 + i);
  const stack = (...frames: number[]) => {
    const b = new Uint8Array(frames.length * 8);
    const v = new DataView(b.buffer);
    frames.forEach((f, k) => v.setBigUint64(8 * k, BigInt(f), true));
    return b;
  };

  for (const version of [4, 5, 6] as const) {
    for (const compressedHeaders of [true, false]) {
      it(`V${version}${compressedHeaders ? "" : " uncompressed"}: activities, threads, stacks across sequence points, sorted flags, time steps back`, () => {
        const w = new NettraceWriter({
          version,
          compressedHeaders,
          processId: 77,
          syncTimeQpc: 100n,
          qpcFrequency: 1_000_000n,
          syncTimeUtc: new Date(Date.UTC(2024, 2, 5, 14, 10, 20, 456)),
        });
        const fields = [
          { name: "n", typeCode: 9 },
          {
            name: "o",
            typeCode: 1,
            fields: [
              { name: "x", typeCode: 7 },
              { name: "s", typeCode: 18 },
            ],
          },
        ];
        const m1 = w.defineEvent({
          providerName: "P",
          eventId: 5,
          eventName: "Five",
          version: 2,
          level: 3,
          keywords: 0xf0n,
          opcode: version === 4 ? undefined : 9,
          fields,
        });
        const m2 = w.defineEvent({ providerName: "Q", eventId: 6 });
        if (version === 4)
          expect(() => w.defineEvent({ providerName: "P", eventId: 7, fields: [{ name: "a", typeCode: 19, elementType: { typeCode: 9 } }] })).toThrow(/arrays/);
        const payload = Uint8Array.from([42, 0, 0, 0, 3, 0, 0x68, 0, 0x69, 0, 0, 0]);
        const s1 = stack(0x1111, 0x2222),
          s2 = stack(0x3333);
        const e = {
          metadataId: m1,
          timestamp: 1000,
          threadId: 10,
          captureThreadId: 10,
          processor: 2,
          payload,
          stack: s1 as Uint8Array | null,
          activityId: A as Uint8Array | null,
          relatedActivityId: null as Uint8Array | null,
          sorted: false,
        };
        w.writeEvent(e);
        w.writeEvent({ ...e, timestamp: 990, stack: s1, activityId: A, relatedActivityId: B }); // a step back in time
        w.writeEvent({
          ...e,
          metadataId: m2,
          threadId: 11,
          captureThreadId: 12,
          processor: -1,
          timestamp: 1100,
          stack: s2,
          activityId: null,
          sorted: true,
          payload: new Uint8Array(0),
        });
        w.sequencePoint();
        w.writeEvent({ ...e, timestamp: 1200, stack: s2, activityId: null });
        const bytes = w.finish();
        expect(() => w.writeEvent(e)).toThrow(/finished/);
        const f = readNettrace(bytes);
        expect(f.error).toBeNull();
        expect(f.warnings).toEqual([]);
        expect(f.eventsLost).toBe(0);
        expect(f.header.formatVersion).toBe(version);
        expect(f.header.processId).toBe(77);
        expect(f.header.syncTimeUtc).toMatchObject({ year: 2024, month: 3, day: 5, dayOfWeek: 2, hour: 14, minute: 10, second: 20, millisecond: 456 });
        const m = f.metadata[0];
        expect({ ...m, offset: 0, length: 0 }).toMatchObject({
          providerName: "P",
          eventId: 5,
          eventName: "Five",
          version: 2,
          level: 3,
          keywords: 0xf0n,
          fields,
        });
        if (version !== 4) expect(m.opcode).toBe(9);
        const ev = f.events;
        expect(ev.length).toBe(4);
        expect(Array.from(ev.timestamp)).toEqual([1000n, 990n, 1100n, 1200n]);
        expect(Array.from(ev.sequenceNumber)).toEqual([1, 2, 1, 3]);
        const threadOf = (k: number) => osThread(f, Number(ev.threadId[k]));
        const captureOf = (k: number) => osThread(f, Number(ev.captureThreadId[k]));
        expect([0, 1, 2, 3].map(threadOf)).toEqual([10, 10, 11, 10]);
        expect([0, 1, 2, 3].map(captureOf)).toEqual([10, 10, 12, 10]);
        expect(Array.from(ev.processorNumber)).toEqual([2, 2, -1, 2]);
        expect(Array.from(ev.flags).map((x) => x & EVENT_SORTED)).toEqual([0, 0, EVENT_SORTED, 0]);
        expect(hex(bytes.subarray(ev.payloadOffset[0], ev.payloadOffset[0] + ev.payloadLength[0]))).toBe(hex(payload));
        expect(ev.payloadLength[2]).toBe(0);
        const act = (k: number, off: Uint32Array) => (off[k] ? hex(bytes.subarray(off[k], off[k] + 16)) : null);
        expect([0, 1, 2, 3].map((k) => act(k, ev.activityIdOffset))).toEqual([hex(A), hex(A), null, null]);
        expect([0, 1, 2, 3].map((k) => act(k, ev.relatedActivityIdOffset))).toEqual([null, hex(B), null, null]);
        // stack ids: s1 once, s2 once before the sequence point and again (id 1) after it
        expect(Array.from(ev.stackId)).toEqual([1, 1, 2, 1]);
        expect([0, 2, 3].map((k) => Array.from(stackFrames(f, ev.stack[k])))).toEqual([[0x1111n, 0x2222n], [0x3333n], [0x3333n]]);
        expect(f.stacks.length).toBe(3);
        expect(f.sequencePoints.length).toBe(1);
        expect(f.sequencePoints.timestamp[0]).toBe(1100n);
        if (version === 6) {
          expect(f.threads.map((t) => [t.osThreadId, t.osProcessId])).toEqual([
            [10n, undefined],
            [12n, undefined],
            [11n, undefined],
          ]);
          expect(f.labelLists.length).toBe(2);
        }
      });
    }
  }

  it("blocks of the size asked for, each in the runtime's order, padded to 4-byte offsets in V4", () => {
    for (const version of [5, 6] as const) {
      const chunks: Uint8Array[] = [];
      const w = new NettraceWriter({
        version,
        blockBytes: 2000,
        sequencePointBytes: 20_000,
        onChunk: (c) => chunks.push(c.slice()),
        reuseChunks: true,
        chunkBytes: 4096,
      });
      const id = w.defineEvent({ providerName: "P", eventId: 1 });
      const payload = new Uint8Array(37).fill(7);
      for (let k = 0; k < 2000; k++) {
        w.writeEvent({ metadataId: id, timestamp: 10 * k, threadId: 1 + (k % 3), payload, stack: stack(0x1000 + (k % 50)) });
        if (k === 1000) w.defineEvent({ providerName: "P", eventId: 2 });
      }
      expect(w.finish().length).toBe(0);
      const bytes = new Uint8Array(Buffer.concat(chunks));
      expect(w.stats.bytes).toBe(bytes.length);
      const f = readNettrace(bytes);
      expect(f.error).toBeNull();
      expect(f.warnings).toEqual([]);
      expect(f.events.length).toBe(2000);
      expect(f.metadata.length).toBe(2);
      // 50 distinct stacks, each written once between two sequence points (ids from 1 again after each)
      expect(f.sequencePoints.length).toBeGreaterThan(3);
      const epochOf = (i: number) => f.sequencePoints.offset.filter((o) => o < f.events.blockOffset[i]).length;
      const seen = new Set<string>();
      for (let i = 0; i < f.events.length; i++)
        seen.add(`${epochOf(i)}:${hex(bytes.subarray(f.stacks.offset[f.events.stack[i]], f.stacks.offset[f.events.stack[i]] + 8))}`);
      expect(f.stacks.length).toBe(seen.size);
      const ids = Array.from(f.stacks.stackId);
      expect(ids.filter((x) => x === 1).length).toBe(f.sequencePoints.length + 1);
      // between two event blocks: threads, metadata, label lists, stacks, in that order (a sequence point first)
      const RANK: Record<number, number> = { 4: 0, 6: 1, 3: 2, 8: 3, 5: 4 };
      const b = f.blocks;
      let rank = 0;
      for (let k = 1; k < b.length; k++) {
        if (version !== 6) expect(b.contentOffset[k] % 4).toBe(0);
        if (b.kind[k] === 2) {
          expect(b.contentLength[k]).toBeLessThanOrEqual(2000);
          rank = 0;
          continue;
        }
        // (a stack or metadata block fills up and goes out on its own: the order starts again)
        if (RANK[b.kind[k]] < rank) expect([5, 3]).toContain(b.kind[k - 1]);
        rank = RANK[b.kind[k]];
      }
    }
  });
});

describe("threadBlocks: each capture thread's events in blocks of their own, as the runtime writes them", () => {
  // (the runtime copies one thread's buffer after another into the file: the reader must merge the
  // threads by time, TraceEvent's dispatch order; the same events written in one block in time order
  // need no merge. Both files must give the same trace, on both engines.)
  const cases: [string, GenerateNettraceOptions][] = [
    ["V4", { ...BASE, version: 4, blockBytes: 8_000, sequencePointBytes: 80_000, processors: 4 }],
    ["V5", { ...BASE, version: 5, blockBytes: 8_000, sequencePointBytes: 80_000, processors: 4 }],
    ["V6", { ...BASE, version: 6, blockBytes: 8_000, sequencePointBytes: 80_000, processors: 4 }],
    ["V5 uncompressed headers", { ...BASE, version: 5, compressedHeaders: false, blockBytes: 8_000, sequencePointBytes: 150_000, processors: 4 }],
  ];
  for (const [name, opts] of cases) {
    it(`${name}: one capture thread a block, the trace of the time-ordered file on both engines`, async () => {
      const merged = generateNettrace({ ...opts, threadBlocks: true }).bytes;
      const ordered = generateNettrace(opts).bytes;
      expect(merged).not.toEqual(ordered);
      const f = readNettrace(merged);
      expect(f.error).toBeNull();
      expect(f.warnings).toEqual([]);
      // every event block holds one capture thread's events, and several threads write
      const threadOfBlock = new Map<number, bigint>();
      for (let i = 0; i < f.events.length; i++) {
        const b = f.events.blockOffset[i],
          c = f.events.captureThreadId[i];
        if (!threadOfBlock.has(b)) threadOfBlock.set(b, c);
        else expect(threadOfBlock.get(b)).toBe(c);
      }
      expect(new Set(threadOfBlock.values()).size).toBeGreaterThan(2);
      // the file order is not the time order (it steps back where a block of another thread begins): the dispatch order has work to do
      let back = 0;
      for (let i = 1; i < f.events.length; i++) if (f.events.timestamp[i] < f.events.timestamp[i - 1]) back++;
      expect(back).toBeGreaterThan(20);
      const want = await openTrace(ordered);
      for (const engine of ["wasm", "js"] as const) {
        const got = await openTrace(merged, { engine });
        expect(got.events.length).toBe(want.events.length);
        for (const k of ["timestamp", "tid", "pid", "processor", "eventType", "payloadLength"] as const) {
          expect(Array.from(got.events.columns[k] as ArrayLike<number | bigint>), `${engine} ${k}`).toEqual(
            Array.from(want.events.columns[k] as ArrayLike<number | bigint>),
          );
        }
        const rows = (t: Trace) => {
          const out: string[] = [];
          for (const r of t.query({})) out.push(`${r.name} ${hex(r.payload)} ${r.extendedItems.map((x) => `${x.type}:${hex(x.data)}`).join(",")}`);
          return out;
        };
        expect(rows(got)).toEqual(rows(want));
        expect(got.tables.map((t) => `${t.name} ${t.length}`)).toEqual(want.tables.map((t) => `${t.name} ${t.length}`));
        expect(json(gcStats(got))).toBe(json(gcStats(want)));
        got.dispose();
      }
      want.dispose();
    });
  }
});

describe("etw-wasm generate OUT.nettrace", () => {
  it("writes a .nettrace of about --size that the CLI reads, in each version", () => {
    for (const [args, version] of [
      [[], 5],
      [["--nettrace-version", "4"], 4],
      [["--format", "nettrace", "--nettrace-version", "6"], 6],
    ] as const) {
      const out = join(dir, args[0] === "--format" ? "g.trace" : `g${version}.nettrace`);
      const g = cli("generate", out, "--size", "400KB", "--samples", "--seed", "5", ...args);
      expect(g.status, g.stderr).toBe(0);
      expect(g.stderr).toMatch(new RegExp(`^wrote .*: \\d+ bytes \\(nettrace V${version}, \\d+ events\\) in [\\d.]+ s\\n$`));
      const bytes = readFileSync(out);
      expect(bytes.length).toBeGreaterThanOrEqual(400_000);
      expect(bytes.length).toBeLessThan(500_000);
      const f = readNettrace(bytes);
      expect({ error: f.error, warnings: f.warnings, version: f.header.formatVersion }).toEqual({ error: null, warnings: [], version });
      const summary = cli("summary", out);
      expect(summary.status, summary.stderr).toBe(0);
      expect(summary.stdout).toMatch(new RegExp(`records: +${f.events.length}\\n`));
      expect(summary.stdout).toMatch(/\d+ +Microsoft-DotNETCore-SampleProfiler/);
      expect(summary.stdout).toMatch(/4242 +Contoso\.Orders/);
    }
  });

  it("rejects what a .nettrace cannot be", () => {
    const out = join(dir, "bad.nettrace");
    for (const [args, message] of [
      [["--nettrace-version", "3"], "bad --nettrace-version '3': 4, 5 or 6"],
      [["--compress"], "--compress is for an .etl"],
      [["--split"], "--split is for an .etl"],
      [["--format", "json"], "bad --format 'json': etl or nettrace"],
    ] as const) {
      const r = cli("generate", out, "--size", "100KB", ...args);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(message);
    }
    const r = cli("generate", join(dir, "x.etl"), "--nettrace-version", "6");
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--nettrace-version is for a .nettrace");
  });
});
