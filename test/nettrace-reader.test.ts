// The EventPipe container reader (bindings/eventpipe/reader.ts): every corpus file against the facts of
// ../shared/corpus/nettrace/README.md, synthetic V6 / uncompressed-V4 files built from the spec, and
// damaged input (truncation at many offsets, random byte flips): always a result, never a throw.

import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  readNettrace,
  stackFrames,
  eventMetadata,
  NettraceFormatError,
  NE_TRUNCATED,
  NE_BAD_MAGIC,
  NE_UNSUPPORTED_VERSION,
  NE_INTERNAL,
  NW_UNKNOWN_BLOCK_KIND,
  EVENT_SORTED,
  LABEL_ACTIVITY,
  LABEL_OPCODE,
  LABEL_LEVEL,
  LABEL_RELATED_ACTIVITY,
  TC_ARRAY,
  TC_FIXED_ARRAY,
  TC_OBJECT,
  type NettraceFile,
} from "../dist/bindings/eventpipe/reader.js";
import { SHARED } from "./helpers/shared.js";
import { mulberry32 } from "../dist/bindings/generator/random.js";
import { readmeCases, syntheticV6, syntheticV4Uncompressed, prefixFile, GUID_A, GUID_B, nettraceCorpusFiles } from "./helpers/nettrace-cases.js";

const NETTRACE = join(SHARED, "corpus", "nettrace");
const HAVE_NETTRACE = existsSync(join(NETTRACE, "README.md"));
if (!HAVE_NETTRACE) {
  if (process.env.CI === "true") throw new Error(`CI=true but the EventPipe corpus is missing at ${NETTRACE}`);
  console.warn(`notice: ${NETTRACE} not found; EventPipe corpus tests are skipped`);
}

const load = (name: string) => new Uint8Array(readFileSync(join(NETTRACE, name)));

/** Every .nettrace/.netperf of the corpus folder and its subfolders (relative names). */
const corpusTraces = (): string[] => (HAVE_NETTRACE ? nettraceCorpusFiles(NETTRACE) : []);

/** Structural invariants every result must satisfy, damaged input included. */
function checkInvariants(r: NettraceFile): void {
  const n = r.bytes.length;
  const e = r.events;
  for (const col of [
    e.timestamp,
    e.metadataId,
    e.metadata,
    e.sequenceNumber,
    e.captureThreadId,
    e.threadId,
    e.processorNumber,
    e.stackId,
    e.stack,
    e.payloadOffset,
    e.payloadLength,
    e.activityIdOffset,
    e.relatedActivityIdOffset,
    e.labelListId,
    e.labelList,
    e.flags,
    e.blockOffset,
  ]) {
    expect(col.length).toBe(e.length);
  }
  for (let i = 0; i < e.length; i++) {
    if (e.payloadOffset[i] + e.payloadLength[i] > n) throw new Error(`event ${i}: payload beyond the input`);
    if (e.activityIdOffset[i] && e.activityIdOffset[i] + 16 > n) throw new Error(`event ${i}: activity id beyond the input`);
    if (e.metadata[i] >= r.metadata.length || e.stack[i] >= r.stacks.length) throw new Error(`event ${i}: row out of range`);
  }
  for (let s = 0; s < r.stacks.length; s++) {
    if (r.stacks.offset[s] + r.stacks.byteLength[s] > n) throw new Error(`stack ${s}: beyond the input`);
  }
  for (const m of r.metadata) if (m.offset + m.length > n) throw new Error("metadata beyond the input");
  if (r.error) {
    expect(r.error).toBeInstanceOf(NettraceFormatError);
    expect(r.error.code).not.toBe(NE_INTERNAL);
    expect(r.error.offset).toBeGreaterThanOrEqual(0);
    expect(r.error.offset).toBeLessThanOrEqual(n);
  }
  for (const w of r.warnings) {
    expect(w.offset).toBeGreaterThanOrEqual(0);
    expect(w.offset).toBeLessThanOrEqual(n);
  }
}

describe.skipIf(!HAVE_NETTRACE)("EventPipe corpus against the README facts", () => {
  const cases = HAVE_NETTRACE ? readmeCases(join(NETTRACE, "README.md")) : [];
  const results = new Map<string, NettraceFile>();
  const read = (file: string) => {
    let r = results.get(file);
    if (!r) results.set(file, (r = readNettrace(load(file))));
    return r;
  };

  it("the README describes every trace of the folder", () => {
    expect(cases.map((c) => c.file).sort()).toEqual(corpusTraces());
    expect(cases.length).toBeGreaterThanOrEqual(6);
  });

  for (const c of cases) {
    describe(c.file, () => {
      it("decodes completely without warnings", () => {
        const r = read(c.file);
        expect(r.error).toBeNull();
        expect(r.warnings).toEqual([]);
        expect(r.complete).toBe(true);
        checkInvariants(r);
      });

      it("header: format, pointer size, PID, QPC frequency", () => {
        const h = read(c.file).header;
        expect(h.formatVersion).toBe(c.format);
        expect(h.container).toBe(c.format === 3 ? "netperf" : "nettrace");
        expect(h.traceObjectVersion).toBe(c.format === 3 ? 3 : 4);
        expect(h.pointerSize).toBe(c.pointerSize);
        expect(h.processId).toBe(c.pid);
        expect(h.qpcFrequency).toBe(c.qpcFrequency);
        expect(h.syncTimeFileTime).toBeGreaterThan(0n);
        expect(h.numberOfProcessors).toBeGreaterThan(0);
      });

      it("event count (metadata records excluded) and events per provider", () => {
        const r = read(c.file);
        expect(r.events.length).toBe(c.events);
        const perProvider: Record<string, number> = {};
        for (let i = 0; i < r.events.length; i++) {
          const m = eventMetadata(r, i);
          const k = m ? m.providerName : "<no metadata>";
          perProvider[k] = (perProvider[k] ?? 0) + 1;
        }
        expect(perProvider).toEqual(c.providers);
      });

      it("block counts", () => {
        const r = read(c.file);
        expect(r.blockCounts.trace).toBe(1);
        for (const [k, v] of Object.entries(c.blocks)) expect(r.blockCounts[k as keyof typeof c.blocks], k).toBe(v);
        if (c.format === 3) expect(r.blockCounts.metadata + r.blockCounts.stack + r.blockCounts.sequencePoint).toBe(0);
      });

      it("every referenced stack id exists; frames are whole pointers inside the file", () => {
        const r = read(c.file);
        let withStack = 0;
        for (let i = 0; i < r.events.length; i++) {
          if (r.events.stackId[i] === 0) continue;
          withStack++;
          const s = r.events.stack[i];
          if (s < 0) throw new Error(`event ${i} references unknown stack id ${r.events.stackId[i]}`);
          if (r.stacks.stackId[s] !== r.events.stackId[i]) throw new Error(`event ${i}: stack row ${s} has id ${r.stacks.stackId[s]}`);
        }
        expect(withStack).toBeGreaterThan(0);
        expect(Array.from(r.stacks.byteLength).filter((b) => b % c.pointerSize !== 0)).toEqual([]);
        const deepest = Array.from(r.stacks.byteLength).reduce((a, b) => Math.max(a, b), 0);
        const row = r.stacks.byteLength.indexOf(deepest);
        const frames = stackFrames(r, row);
        expect(frames.length).toBe(deepest / c.pointerSize);
        expect(frames.every((f) => f !== 0n)).toBe(true);
      });

      // V4+: events of one capture thread are written in time order (§13), so per capture thread
      // the file order is non-decreasing. Per *logical* ThreadId it is not: SampleProfiler samples
      // carry the sampled thread's id but are written by the sampler thread (3.0 file: 144 steps
      // back). V3 has no capture thread; the 2.1 file is in time order per ThreadId.
      it("timestamps are non-decreasing per capture thread (V3: per thread)", () => {
        const r = read(c.file);
        const last = new Map<bigint, bigint>();
        let back = 0;
        for (let i = 0; i < r.events.length; i++) {
          const k = c.format === 3 ? r.events.threadId[i] : r.events.captureThreadId[i];
          const t = r.events.timestamp[i];
          const l = last.get(k);
          if (l !== undefined && t < l) back++;
          last.set(k, t);
        }
        expect(back).toBe(0);
      });

      it("sequence numbers show no lost events; sequence points are in time order", () => {
        const r = read(c.file);
        expect(r.eventsLost).toBe(0);
        const sp = r.sequencePoints;
        if (c.blocks.sequencePoint !== undefined) expect(sp.length).toBe(c.blocks.sequencePoint);
        expect(sp.length).toBe(read(c.file).blockCounts.sequencePoint);
        if (c.format === 3) expect(sp.length).toBe(0);
        else expect(sp.length).toBeGreaterThan(0);
        for (let i = 1; i < sp.length; i++) expect(sp.timestamp[i] >= sp.timestamp[i - 1]).toBe(true);
        for (let i = 0; i < sp.length; i++) expect(sp.threadCount[i]).toBeGreaterThan(0);
      });
    });
  }

  it("3.0 file: 147 'negative' timestamp deltas inside blocks, 173 sorted events, runtime 143 as v1 and v2", () => {
    const r = read("eventpipe-dotnetcore3.0-win-x64-objver4.nettrace");
    let negative = 0;
    for (let i = 1; i < r.events.length; i++) {
      if (r.events.blockOffset[i] === r.events.blockOffset[i - 1] && r.events.timestamp[i] < r.events.timestamp[i - 1]) negative++;
    }
    expect(negative).toBe(147);
    expect(Array.from(r.events.flags).filter((f) => f & EVENT_SORTED).length).toBe(173);
    const load143 = r.metadata.filter((m) => m.providerName === "Microsoft-Windows-DotNETRuntime" && m.eventId === 143);
    expect(load143.map((m) => m.version).sort()).toEqual([1, 2]);
    expect(new Set(load143.map((m) => m.metadataId)).size).toBe(2);
  });

  it("arraytypes file: V5 tags (V2Params arrays, OpCode 24)", () => {
    const r = read("eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace");
    const test = r.metadata.filter((m) => m.providerName === "TestEventSource0");
    expect(test.map((m) => m.eventName)).toEqual(["TestEvent1", "TestEvent2", "TestEvent3"]);
    expect(test.every((m) => m.fieldLayout === "v2")).toBe(true);
    const elementTypes = test.flatMap((m) => m.fields.filter((f) => f.typeCode === TC_ARRAY).map((f) => f.elementType!.typeCode));
    expect(elementTypes.sort((a, b) => a - b)).toEqual([4, 7, 9, 10, 12]); // Char, Int16, Int32, UInt32, UInt64
    expect(test[2].opcode).toBe(24);
    const info = r.metadata.find((m) => m.providerName === "Microsoft-DotNETCore-EventPipe");
    expect(info?.eventName).toBe("ProcessInfo");
    expect(info?.fields.map((f) => [f.name, f.typeCode])).toEqual([["CommandLine", 18]]);
  });

  it("CLR runtime/rundown metadata has an empty name and no fields (§7.5)", () => {
    for (const c of cases) {
      for (const m of read(c.file).metadata) {
        if (!m.providerName.startsWith("Microsoft-Windows-DotNETRuntime")) continue;
        expect(m.eventName).toBe("");
        expect(m.fields).toEqual([]);
      }
    }
  });

  it("V3 file: metadata records are not events, every event has its inline stack", () => {
    const r = read("eventpipe-dotnetcore2.1-linux-x64-objver3.netperf");
    expect(r.metadata.length).toBe(9); // 26,155 records − 26,146 events (spec §6.2)
    expect(r.events.captureThreadId.every((t) => t === -1n)).toBe(true);
    expect(r.events.processorNumber.every((p) => p === -1)).toBe(true);
    for (let i = 0; i < r.events.length; i++) if (r.events.stack[i] >= 0) expect(r.stacks.stackId[r.events.stack[i]]).toBe(r.events.stack[i] + 1);
  });
});

describe("synthetic files from the spec", () => {
  it("V6: trace key/values, metadata rows, threads, label lists, stacks, both header kinds, sequence point", () => {
    const r = readNettrace(syntheticV6());
    checkInvariants(r);
    expect(r.error).toBeNull();
    expect(r.complete).toBe(true);
    expect(r.warnings.map((w) => w.code)).toEqual([NW_UNKNOWN_BLOCK_KIND]);
    const h = r.header;
    expect([h.formatVersion, h.container, h.minorVersion, h.pointerSize, h.processId, h.numberOfProcessors]).toEqual([6, "nettrace6", 2, 8, 4321, 16]);
    expect(h.syncTimeUtc).toEqual({ year: 2024, month: 3, dayOfWeek: 5, day: 14, hour: 10, minute: 20, second: 30, millisecond: 456 });
    expect(h.syncTimeFileTime).toBe((BigInt(Date.UTC(2024, 2, 14, 10, 20, 30, 456)) + 11644473600000n) * 10000n);
    expect([h.syncTimeQpc, h.qpcFrequency]).toEqual([1000n, 10_000_000n]);
    expect(h.keyValues).toContainEqual(["Custom", "x"]);

    expect(r.metadata.length).toBe(1);
    const m = r.metadata[0];
    expect([m.metadataId, m.providerName, m.eventId, m.eventName, m.opcode, m.keywords, m.level, m.version, m.messageTemplate]).toEqual([
      1,
      "My-Provider",
      7,
      "MyEvent",
      1,
      0xf0n,
      4,
      2,
      "n={count}",
    ]);
    expect(m.keyValues).toEqual([["k", "v"]]);
    expect(m.fields).toEqual([
      { name: "count", typeCode: 9 },
      { name: "text", typeCode: TC_ARRAY, elementType: { typeCode: 23 } },
      { name: "fixed", typeCode: TC_FIXED_ARRAY, elementType: { typeCode: 8 }, elementCount: 3 },
      { name: "nested", typeCode: TC_OBJECT, fields: [{ name: "inner", typeCode: 21 }] },
    ]);

    expect(r.threads.map((t) => [t.index, t.name, t.osProcessId, t.osThreadId])).toEqual([
      [1n, "main", 4321n, 5678n],
      [2n, undefined, undefined, 99n],
    ]);
    expect(r.labelLists.length).toBe(2);
    expect(r.labelLists.present[0]).toBe(LABEL_ACTIVITY | LABEL_OPCODE);
    expect(r.labelLists.opcode[0]).toBe(2);
    expect(r.labelLists.present[1]).toBe(LABEL_LEVEL | LABEL_RELATED_ACTIVITY);
    expect(r.labelLists.level[1]).toBe(5);

    const e = r.events;
    expect(e.length).toBe(3);
    expect(Array.from(e.timestamp)).toEqual([2000n, 2010n, 2500n]);
    expect(Array.from(e.sequenceNumber)).toEqual([1, 2, 3]);
    expect(Array.from(e.threadId)).toEqual([1n, 1n, 2n]);
    expect(Array.from(e.captureThreadId)).toEqual([1n, 1n, 1n]);
    expect(Array.from(e.processorNumber)).toEqual([3, 3, -1]);
    expect(Array.from(e.stackId)).toEqual([1, 1, 2]);
    expect(Array.from(stackFrames(r, e.stack[0]))).toEqual([0x1111n, 0x2222n]);
    expect(Array.from(stackFrames(r, e.stack[2]))).toEqual([0x3333n]);
    expect(Array.from(e.labelListId)).toEqual([1, 1, 2]);
    expect(Array.from(r.bytes.subarray(e.activityIdOffset[0], e.activityIdOffset[0] + 16))).toEqual(GUID_A);
    expect(e.activityIdOffset[2]).toBe(0);
    expect(Array.from(r.bytes.subarray(e.relatedActivityIdOffset[2], e.relatedActivityIdOffset[2] + 16))).toEqual(GUID_B);
    expect(Array.from(e.flags, (f) => f & EVENT_SORTED)).toEqual([0, EVENT_SORTED, EVENT_SORTED]);
    for (let i = 0; i < 3; i++) {
      expect(e.payloadLength[i]).toBe(15);
      expect(r.bytes[e.payloadOffset[i]]).toBe(42);
    }
    expect(r.sequencePoints.length).toBe(1);
    expect(r.sequencePoints.timestamp[0]).toBe(3000n);
    expect(Array.from(r.sequencePoints.threads.sequenceNumber)).toEqual([3, 0]);
    expect(r.removedThreads.map((t) => [t.index, t.sequenceNumber])).toEqual([[2n, 0]]);
    expect(r.eventsLost).toBe(0);
    expect(r.blockCounts).toEqual({ trace: 1, event: 2, metadata: 1, stack: 1, sequencePoint: 1, thread: 1, removeThread: 1, labelList: 1, unknown: 1 });
  });

  it("V4 with uncompressed headers: padding inside EventSize, V1 nested objects, V5 tags, sorted bit", () => {
    const r = readNettrace(syntheticV4Uncompressed());
    checkInvariants(r);
    expect(r.error).toBeNull();
    expect(r.warnings).toEqual([]);
    expect([r.header.formatVersion, r.header.processId, r.header.numberOfProcessors, r.header.expectedCpuSamplingRate]).toEqual([5, 777, 4, 1000]);
    const [m1, m2] = r.metadata;
    expect([m1.providerName, m1.eventName, m1.opcode, m1.fieldLayout, m1.version, m1.level, m1.keywords]).toEqual([
      "Test-Provider",
      "Work",
      9,
      "v2",
      1,
      4,
      0x10n,
    ]);
    expect(m1.fields).toEqual([
      { name: "ids", typeCode: TC_ARRAY, elementType: { typeCode: 10 } },
      { name: "pair", typeCode: TC_OBJECT, fields: [{ name: "x", typeCode: 7 }] },
    ]);
    expect([m2.eventName, m2.fieldLayout, m2.opcode]).toEqual(["", "v1", undefined]);
    expect(m2.fields).toEqual([
      { name: "s", typeCode: 18 },
      { name: "obj", typeCode: TC_OBJECT, fields: [{ name: "n", typeCode: 9 }] },
    ]);
    const e = r.events;
    expect(e.length).toBe(2);
    expect(Array.from(e.timestamp)).toEqual([100n, 300n]);
    expect(Array.from(e.flags, (f) => f & EVENT_SORTED)).toEqual([EVENT_SORTED, 0]);
    expect(Array.from(e.payloadLength)).toEqual([8, 10]);
    expect(Array.from(stackFrames(r, e.stack[0]))).toEqual([0xaan, 0xbbn]);
    expect(e.stack[1]).toBe(-1);
    expect(Array.from(r.bytes.subarray(e.activityIdOffset[0], e.activityIdOffset[0] + 16))).toEqual(GUID_A);
    expect([e.relatedActivityIdOffset[0], e.activityIdOffset[1]]).toEqual([0, 0]);
    expect(Array.from(r.bytes.subarray(e.relatedActivityIdOffset[1], e.relatedActivityIdOffset[1] + 16))).toEqual(GUID_B);
    expect(r.sequencePoints.length).toBe(1);
    expect(r.eventsLost).toBe(0);
  });
});

describe("bad input", () => {
  const timed = (bytes: Uint8Array): NettraceFile => {
    const t0 = performance.now();
    const r = readNettrace(bytes);
    const ms = performance.now() - t0;
    if (ms > 2000) throw new Error(`readNettrace took ${ms.toFixed(0)} ms on ${bytes.length} bytes`);
    checkInvariants(r);
    return r;
  };

  it("tiny and foreign inputs", () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(timed(new Uint8Array(0)).error?.code).toBe(NE_TRUNCATED);
    expect(timed(enc("Nettrace")).error?.code).toBe(NE_TRUNCATED);
    expect(timed(enc("hello world, this is not a trace at all")).error?.code).toBe(NE_BAD_MAGIC);
    const v7 = new Uint8Array(20);
    v7.set(enc("Nettrace"));
    v7[12] = 7;
    expect(timed(v7).error?.code).toBe(NE_UNSUPPORTED_VERSION);
    for (const s of [1, 2, 3]) {
      const rnd = mulberry32(s);
      timed(Uint8Array.from({ length: 4096 }, () => (rnd() * 256) | 0));
    }
  });

  // Small complete files: the synthetic ones and prefixes of real files (first blocks + end tag).
  const samples: [string, () => Uint8Array][] = [
    ["synthetic V6", syntheticV6],
    ["synthetic V4 uncompressed", syntheticV4Uncompressed],
  ];
  if (HAVE_NETTRACE) {
    samples.push(["arraytypes (V5)", () => load("eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace")]);
    for (const [label, name, blocks] of [
      ["V3 prefix", "eventpipe-dotnetcore2.1-linux-x64-objver3.netperf", 3],
      ["3.0 V4 prefix", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", 12],
      ["dotnetdiag V4 prefix", "dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", 16],
    ] as const) {
      samples.push([
        label,
        () => {
          const bytes = load(name);
          const full = readNettrace(bytes);
          const ends = Array.from(full.blocks.contentOffset, (o, i) => o + full.blocks.contentLength[i] + 1);
          return prefixFile(bytes, ends, blocks);
        },
      ]);
    }
  }

  for (const [label, make] of samples) {
    describe(label, () => {
      const bytes = make();
      const full = readNettrace(bytes);

      it("is itself a complete, clean file", () => {
        expect(full.error).toBeNull();
        expect(full.complete).toBe(true);
        expect(full.events.length).toBeGreaterThan(0);
      });

      it("truncation (every offset of a small file, else 200 cuts): a typed error at or before the cut, the events a prefix of the full file's", () => {
        const rnd = mulberry32(0x5eed + bytes.length);
        const cuts = new Set<number>([0, 1, 7, 8, 12, 20, 24, bytes.length - 1]);
        if (bytes.length <= 4000) for (let c = 0; c < bytes.length; c++) cuts.add(c);
        while (cuts.size < 200) cuts.add(Math.floor(rnd() * bytes.length));
        for (const cut of cuts) {
          if (cut < 0 || cut >= bytes.length) continue;
          const r = timed(bytes.subarray(0, cut));
          expect(r.error, `cut at ${cut}`).toBeInstanceOf(NettraceFormatError);
          expect(r.error!.offset).toBeLessThanOrEqual(cut);
          expect(r.complete).toBe(false);
          expect(r.events.length).toBeLessThanOrEqual(full.events.length);
          for (let i = 0; i < r.events.length; i++) {
            if (
              r.events.timestamp[i] !== full.events.timestamp[i] ||
              r.events.payloadOffset[i] !== full.events.payloadOffset[i] ||
              r.events.metadataId[i] !== full.events.metadataId[i]
            ) {
              throw new Error(`cut at ${cut}: event ${i} differs from the full file's`);
            }
          }
        }
      });

      it("reads the same from a view at a non-zero byte offset", () => {
        const host = new Uint8Array(bytes.length + 13);
        host.set(bytes, 13);
        const r = readNettrace(host.subarray(13));
        expect(r.error).toBeNull();
        expect(r.events.length).toBe(full.events.length);
        expect(Array.from(r.events.payloadOffset)).toEqual(Array.from(full.events.payloadOffset));
        expect(Array.from(r.events.timestamp)).toEqual(Array.from(full.events.timestamp));
        if (r.stacks.length) expect(stackFrames(r, r.stacks.length - 1)).toEqual(stackFrames(full, full.stacks.length - 1));
      });

      it("300 random byte flips: success, warnings or a typed error; never a throw", () => {
        const rnd = mulberry32(0xf11b + bytes.length);
        let errors = 0,
          warned = 0;
        for (let k = 0; k < 300; k++) {
          const copy = bytes.slice();
          const flips = 1 + Math.floor(rnd() * 4);
          for (let f = 0; f < flips; f++) {
            const at = Math.floor(rnd() * copy.length);
            copy[at] = rnd() < 0.5 ? copy[at] ^ (1 << Math.floor(rnd() * 8)) : (rnd() * 256) | 0;
          }
          let r: NettraceFile;
          try {
            r = timed(copy);
          } catch (e) {
            throw new Error(`flip case ${k}: ${e instanceof Error ? e.stack : e}`);
          }
          if (r.error) errors++;
          else if (r.warningCount) warned++;
        }
        expect(errors + warned).toBeGreaterThan(0);
      });
    });
  }
});

describe("NettraceStreamReader", () => {
  it("hands each window's bytes over in a buffer of their own (handOver): the file's bytes, valid after later pushes, each window's rows those of the file read whole", async () => {
    const { NettraceStreamReader } = await import("../dist/bindings/eventpipe/stream-reader.js");
    const { generateNettrace } = await import("../dist/bindings/generator/index.js");
    const bytes = generateNettrace({ targetBytes: Infinity, fileBytes: 3 << 20, samples: true, seed: 4, version: 5, sequencePointBytes: 512 << 10 }).bytes;
    const whole = readNettrace(bytes);
    const taken: ArrayBuffer[] = [];
    const take = (n: number) => {
      const b = new ArrayBuffer(n);
      new Uint8Array(b).fill(0xa5); // (not zeroed, as the pool's)
      taken.push(b);
      return b;
    };
    const r = new NettraceStreamReader(undefined, 32 << 20, false, { take, head: 8 });
    const windows: { bytes: Uint8Array; base: number; events: number; payloadOffset: Uint32Array }[] = [];
    // (chunks of an odd size: windows end inside them)
    for (let at = 0; at < bytes.length; at += 300_001) {
      for (const w of r.push(bytes.subarray(at, at + 300_001)))
        windows.push({ bytes: w.bytes, base: w.base, events: w.events.length, payloadOffset: w.events.payloadOffset.slice() });
    }
    for (const w of r.end()) windows.push({ bytes: w.bytes, base: w.base, events: w.events.length, payloadOffset: w.events.payloadOffset.slice() });
    expect(windows.length).toBeGreaterThan(4);
    const buffers = new Set(windows.map((w) => w.bytes.buffer));
    expect(buffers.size).toBe(windows.length);
    let next = 0,
      events = 0;
    for (const w of windows) {
      expect(taken.includes(w.bytes.buffer as ArrayBuffer)).toBe(true);
      expect(w.bytes.byteOffset).toBe(8);
      // (one window after another, each the file's bytes from its base, read after the whole stream)
      expect(w.base).toBe(next);
      expect(Buffer.from(w.bytes).equals(Buffer.from(bytes.subarray(w.base, w.base + w.bytes.length)))).toBe(true);
      next = w.base + w.bytes.length;
      // (its events' payloads where the whole file's are)
      for (let i = 0; i < w.events; i++) expect(w.base + w.payloadOffset[i]).toBe(whole.events.payloadOffset[events + i]);
      events += w.events;
    }
    expect(next).toBe(bytes.length);
    expect(events).toBe(whole.events.length);
  });

  it("gives back (handOver.give) the buffers no window holds: outgrown ones and, on close, its last, but never the last window's", async () => {
    const { NettraceStreamReader } = await import("../dist/bindings/eventpipe/stream-reader.js");
    const { generateNettrace } = await import("../dist/bindings/generator/index.js");
    const bytes = generateNettrace({ targetBytes: Infinity, fileBytes: 3 << 20, samples: true, seed: 4, version: 5, sequencePointBytes: 512 << 10 }).bytes;
    const open = () => {
      const taken: ArrayBuffer[] = [];
      const given: ArrayBuffer[] = [];
      const take = (n: number) => {
        const b = new ArrayBuffer(n);
        taken.push(b);
        return b;
      };
      const r = new NettraceStreamReader(undefined, 32 << 20, false, { take, give: (b: ArrayBuffer) => given.push(b), head: 8 });
      return { r, taken, given };
    };
    // (the bytes of every window handed out, copied when handed out: a buffer given back must not be one of them)
    const check = (held: Uint8Array[], copies: Uint8Array[], given: ArrayBuffer[]) => {
      for (const [k, w] of held.entries()) {
        expect(given.includes(w.buffer as ArrayBuffer)).toBe(false);
        expect(Buffer.from(w).equals(Buffer.from(copies[k]))).toBe(true);
      }
    };

    // read to the end: each buffer outgrown is given back at once; the last window's stays with it
    {
      const { r, taken, given } = open();
      const held: Uint8Array[] = [];
      const copies: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; at += 300_001)
        for (const w of r.push(bytes.subarray(at, at + 300_001))) {
          held.push(w.bytes);
          copies.push(w.bytes.slice());
        }
      for (const w of r.end()) {
        held.push(w.bytes);
        copies.push(w.bytes.slice());
      }
      const outgrown = given.length;
      // (the first buffer, 64 KiB, is outgrown by the first window's bytes)
      expect(outgrown).toBeGreaterThan(0);
      r.close();
      expect(given.length).toBe(outgrown);
      for (const b of given) expect(taken.includes(b)).toBe(true);
      check(held, copies, given);
    }

    // stopped after some windows (a worker's piece): close gives back the buffer the reader goes on in
    {
      const { r, taken, given } = open();
      const held: Uint8Array[] = [];
      const copies: Uint8Array[] = [];
      for (let at = 0; at < bytes.length / 2; at += 300_001)
        for (const w of r.push(bytes.subarray(at, at + 300_001))) {
          held.push(w.bytes);
          copies.push(w.bytes.slice());
        }
      expect(held.length).toBeGreaterThan(1);
      const before = given.length;
      r.close();
      expect(given.length).toBe(before + 1);
      expect(taken.includes(given[given.length - 1])).toBe(true);
      check(held, copies, given);
      // (closed: it takes no more bytes, and closing again gives nothing more back)
      expect([...r.push(bytes.subarray(0, 1000))]).toEqual([]);
      r.close();
      expect(given.length).toBe(before + 1);
    }
  });
});
