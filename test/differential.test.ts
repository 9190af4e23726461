// The pure TypeScript engine against the WebAssembly one: identical tables (event columns and the
// bytes behind offsets, extended items, buffers, warnings, providers, logfile header, typed .NET
// runtime tables, time order) and identical errors, on the corpus, generated and synthetic traces,
// the bundled sample, and damaged input of every kind.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import type { Trace } from "../dist/bindings/index.js";
import * as C from "../dist/assembly/codes.js";
import { generateTrace } from "../dist/bindings/generator/generate.js";
import { mulberry32 } from "../dist/bindings/generator/random.js";
import { HAVE_CORPUS, corpusFiles, etlPath } from "./helpers/shared.js";
import { compareEngines, show, syntheticTrace, type CompareOptions, type Source } from "./helpers/engines.js";
import type { OpenOptions } from "../dist/bindings/index.js";
import { createJsCore } from "../dist/bindings/core/index.js";
import { instantiateCore, type CoreExports } from "../dist/bindings/decode/windows/loader.js";
import { xpressCompress } from "../dist/bindings/generator/xpress-compress.js";
import { EtlWriter } from "../dist/bindings/generator/etl-writer.js";

const HDR = C.BUFFER_HEADER_SIZE;
const SAMPLE = new URL("../examples/sample.etl", import.meta.url);
const loadCorpus = (name: string) => new Uint8Array(readFileSync(etlPath(name)));

/** Both engines agree on `input`; returns the WebAssembly engine's trace (if it decoded). */
async function expectSame(label: string, input: Source, options: OpenOptions = {}, compare: CompareOptions = {}): Promise<Trace | undefined> {
  const { problems, wasm } = await compareEngines(input, options, compare);
  expect(problems, label).toEqual([]);
  return wasm.trace;
}

interface BufferPlace {
  fileOffset: number;
  bufferSize: number;
  compressed: boolean;
  firstRow: number;
  rowCount: number;
  data: number;
}

function buffersOf(t: Trace): BufferPlace[] {
  const d = t.events.data;
  const v = new DataView(d.bytes.buffer, d.bytes.byteOffset);
  return Array.from({ length: t.bufferCount }, (_, i) => {
    const b = t.buffer(i);
    return { ...b, data: v.getUint32(d.buffersOffset + i * C.BUF_STRIDE + C.B_DATA, true) };
  });
}

/** File offsets of the records of uncompressed buffers. */
function recordOffsets(t: Trace): number[] {
  const out: number[] = [];
  const { payloadOffset, headerLength } = t.events.columns;
  for (const b of buffersOf(t)) {
    if (b.compressed) continue;
    for (let r = b.firstRow; r < b.firstRow + b.rowCount; r++) out.push(b.fileOffset + HDR + (payloadOffset[r] - headerLength[r] - b.data));
  }
  return out;
}

/** Chunks of random sizes, the same for both engines. */
function pieces(bytes: Uint8Array, seed: number, most: number): () => Iterable<Uint8Array> {
  return function* () {
    const rand = mulberry32(seed);
    for (let i = 0; i < bytes.length; ) {
      const n = 1 + Math.floor(rand() * most);
      yield bytes.subarray(i, i + n);
      i += n;
    }
  };
}

describe.skipIf(!HAVE_CORPUS)("corpus", () => {
  for (const name of corpusFiles()) {
    it(`${name}: same tables`, async () => {
      const bytes = loadCorpus(name);
      // every cell of the typed tables; the largest files every cell of a sample of rows
      await expectSame(name, bytes, {}, { cells: bytes.length > 2 << 20 ? 400 : true });
    });
  }

  it("streamed in odd chunk sizes, with a staging area smaller than a buffer", async () => {
    for (const name of ["net.4.5.2.x64.etl", "gcevents.etl", "tx-CrossMachineHTTP.etl"]) {
      const bytes = loadCorpus(name);
      await expectSame(`${name} streamed`, pieces(bytes, 5, 150_000), { chunkBytes: 100_000 }, { cells: 50 });
      await expectSame(`${name} small staging`, pieces(bytes, 6, 3000), { chunkBytes: 4096 }, { cells: 50 });
    }
  });
});

describe("generated and bundled traces", () => {
  for (const compress of [false, true]) {
    for (const pointerSize of [4, 8] as const) {
      it(`generated (${compress ? "compressed" : "plain"}, ${pointerSize * 8}-bit)`, async () => {
        const bytes = generateTrace({ targetBytes: 1_500_000, compress, pointerSize, seed: 10 + pointerSize + (compress ? 1 : 0) });
        await expectSame("generated", bytes, {}, { cells: 300 });
        await expectSame("generated, streamed", pieces(bytes, 9, 70_000), { chunkBytes: 50_000 }, { cells: false });
      });
    }
  }

  it("examples/sample.etl", async () => {
    await expectSame("sample", new Uint8Array(readFileSync(SAMPLE)));
  });

  it("synthetic traces of every header layout, random CLR payloads, extended items, WPP options, opaque and bad records", async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const compress = seed % 2 === 0;
      const pointerSize = seed % 3 === 0 ? 4 : 8;
      const bytes = syntheticTrace(seed, { compress, pointerSize });
      const t = await expectSame(`synthetic seed ${seed}`, bytes);
      expect(t!.events.length).toBeGreaterThan(100);
      expect(t!.warnings.length).toBeGreaterThan(0);
    }
  });

  it("more warnings than are kept (10,000)", async () => {
    const w = new EtlWriter({ bufferSize: 65536 });
    for (let i = 0; i < 10_500; i++) w.raw(i % 2, Uint8Array.of(8, 0, 0x0c, 0xc0, i & 0xff, 0, 0, 0)); // opaque TIMED records
    const t = await expectSame("10,500 opaque records", w.finish());
    expect(t!.warningTotal).toBe(10_500);
    expect(t!.warnings.length).toBe(10_000);
  });

  it("more event types than the table holds (65,535)", async () => {
    const w = new EtlWriter({ bufferSize: 65536 });
    const provider = "a1b2c3d4-0001-0002-0304-05060708090a";
    const event = (k: number, ts: bigint) =>
      w.event(0, {
        headerType: 0x13,
        provider,
        id: k & 0xffff,
        version: 1,
        level: 4,
        opcode: k >>> 16,
        task: 0,
        keywords: 0n,
        pid: 1,
        tid: 2,
        ts,
        payload: new Uint8Array(0),
      });
    let ts = 100n;
    for (let k = 0; k < 65_600; k++) event(k, ts++);
    for (let k = 0; k < 10; k++) event(k, ts++); // known types after the table is full
    event(70_000, ts++); // a new one
    const t = (await expectSame("65,611 event types", w.finish(), {}, { cells: false }))!;
    const types = t.eventTypes;
    expect(types.length).toBe(C.MAX_EVENT_TYPES);
    const n = t.events.length;
    const none = t.events.eventType.filter((x) => x === C.EVENT_TYPE_NONE).length;
    expect(none).toBe(n - C.MAX_EVENT_TYPES - 10); // every row of a new key past the cap
    for (let r = n - 11; r < n - 1; r++) expect(types.typeOf(r)).toBeGreaterThanOrEqual(0);
    expect(types.typeOf(n - 1)).toBe(-1);
  });

  it("filtered decodes (every filter kind, combinations)", async () => {
    const filters: OpenOptions["filter"][] = [
      { provider: "Microsoft-Windows-DotNETRuntime" },
      { provider: ["Windows Kernel/Thread", "a1b2c3d4-0001-0002-0304-05060708090a"], eventId: [1, 2, 3] },
      { opcode: [0, 1, 10], level: 4 },
      { keywords: 1n },
      { pid: [1, 4, 4242], tid: [2, 8] },
      { from: 6000n, to: 40000n },
    ];
    const inputs: [string, Uint8Array][] = [
      ["synthetic", syntheticTrace(3)],
      ["synthetic compressed", syntheticTrace(4, { compress: true, pointerSize: 4 })],
      ["generated", generateTrace({ targetBytes: 400_000, seed: 41 })],
    ];
    if (HAVE_CORPUS) inputs.push(["net.4.5.2.x64.etl", loadCorpus("net.4.5.2.x64.etl")], ["tx-CrossMachineHTTP.etl", loadCorpus("tx-CrossMachineHTTP.etl")]);
    for (const [name, bytes] of inputs) {
      for (const filter of filters) await expectSame(`${name} ${show(filter)}`, bytes, { filter }, { cells: 50 });
    }
  });

  it("clrTables: false", async () => {
    await expectSame("no clr tables", syntheticTrace(3), { clrTables: false });
  });
});

describe("damaged input", () => {
  const sample = new Uint8Array(readFileSync(SAMPLE));
  const plain = syntheticTrace(21, { records: 1500 });
  const packed = syntheticTrace(22, { records: 1500, compress: true });
  const generatedPacked = generateTrace({ targetBytes: 400_000, compress: true, pointerSize: 4, seed: 23 });
  const inputs: [string, Uint8Array][] = [
    ["sample", sample],
    ["synthetic plain", plain],
    ["synthetic compressed", packed],
    ["generated compressed", generatedPacked],
  ];
  if (HAVE_CORPUS) inputs.push(["gcevents.etl", loadCorpus("gcevents.etl")], ["smallEtlFile.etl", loadCorpus("smallEtlFile.etl")]);

  it("input that is not a trace", async () => {
    const rand = mulberry32(7);
    const cases: Uint8Array[] = [new Uint8Array(0), new Uint8Array(10), new Uint8Array(0x47).fill(0xff), new Uint8Array(0x48), new Uint8Array(4096)];
    for (const size of [0x48, 100, 4096, 65536]) cases.push(Uint8Array.from({ length: size }, () => (rand() * 256) | 0));
    // a plausible buffer whose first record is no logfile header; a compressed buffer 0 that is not XPRESS
    const b = new Uint8Array(0x200).fill(0xff);
    const v = new DataView(b.buffer);
    v.setUint32(0, 0x200, true);
    v.setUint32(4, 0x98, true);
    v.setUint32(0x30, 0x98, true);
    v.setUint32(0x48, 0xc0130050, true);
    cases.push(b);
    const c = b.slice();
    new DataView(c.buffer).setUint16(0x34, 0x40, true);
    cases.push(c);
    for (const [i, input] of cases.entries()) await expectSame(`not a trace #${i}`, input);
  });

  it("truncation anywhere", async () => {
    const rand = mulberry32(11);
    for (const [name, bytes] of inputs) {
      const full = await expectSame(name, bytes);
      const cuts = new Set<number>([1, 0x47, 0x48, 0x60, 0x100]);
      for (const b of buffersOf(full!)) {
        for (const d of [-1, 0, 1, 0x47, 0x48, 0x4c]) cuts.add(b.fileOffset + d);
        cuts.add(b.fileOffset + HDR + Math.floor(rand() * (b.bufferSize - HDR)));
      }
      const list = [...cuts].filter((c) => c > 0 && c < bytes.length);
      // at most 60 per input, spread over the file
      const chosen = list.length > 60 ? list.filter((_, i) => i % Math.ceil(list.length / 60) === 0) : list;
      for (const cut of chosen) await expectSame(`${name} cut at ${cut}`, bytes.subarray(0, cut), {}, { cells: 20 });
    }
  });

  it("random byte flips", async () => {
    const rand = mulberry32(12);
    for (const [name, bytes] of inputs) {
      const rounds = bytes.length > 200_000 ? 40 : 120;
      for (let round = 0; round < rounds; round++) {
        const damaged = bytes.slice();
        const flips = 1 + Math.floor(rand() * 16);
        for (let k = 0; k < flips; k++) damaged[Math.floor(rand() * damaged.length)] = (rand() * 256) | 0;
        await expectSame(`${name} flips round ${round}`, damaged, {}, { cells: 10 });
      }
    }
  });

  it("damaged record headers", async () => {
    const rand = mulberry32(13);
    for (const [name, bytes] of inputs) {
      const full = (await expectSame(name, bytes))!;
      const offsets = recordOffsets(full);
      if (!offsets.length) continue;
      for (let round = 0; round < 60; round++) {
        const damaged = bytes.slice();
        const at = offsets[Math.floor(rand() * offsets.length)];
        const r = rand();
        if (r < 0.4)
          damaged[at + Math.floor(rand() * 4)] = (rand() * 256) | 0; // Size, type, marker class
        else if (r < 0.6) damaged[at + 2] = [0x01, 0x02, 0x03, 0x04, 0x0a, 0x0b, 0x0c, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x3c][Math.floor(rand() * 14)];
        else if (r < 0.8)
          damaged[at + 4 + Math.floor(rand() * 12)] = (rand() * 256) | 0; // flags, sizes, ids
        else damaged.fill(0, at, at + 4); // padding-like marker in the middle of a buffer
        await expectSame(`${name} record at ${at} round ${round}`, damaged, {}, { cells: 10 });
      }
    }
  });

  it("buffer headers: zeroed, implausible and random BufferSize, flags, offsets, type, processor", async () => {
    const rand = mulberry32(14);
    for (const [name, bytes] of inputs) {
      const bufs = buffersOf((await expectSame(name, bytes))!);
      for (let round = 0; round < 40; round++) {
        const damaged = bytes.slice();
        const v = new DataView(damaged.buffer);
        const b = bufs[Math.floor(rand() * bufs.length)];
        const field = Math.floor(rand() * 8);
        if (field === 0) v.setUint32(b.fileOffset, 0, true);
        else if (field === 1) v.setUint32(b.fileOffset, [0x7fffffff, 0x47, 0x48, 0x10000000, b.bufferSize + 8, b.bufferSize - 8][Math.floor(rand() * 6)], true);
        else if (field === 2)
          v.setUint32(b.fileOffset + [4, 0x30][Math.floor(rand() * 2)], [0, 0x47, 0x48, b.bufferSize + 1, 0x7fffffff][Math.floor(rand() * 5)], true);
        else if (field === 3)
          v.setUint16(b.fileOffset + 0x34, (rand() * 0x100) | 0, true); // flags (compressed, processor index)
        else if (field === 4)
          v.setUint16(b.fileOffset + 0x36, (rand() * 10) | 0, true); // buffer type
        else if (field === 5)
          v.setUint16(b.fileOffset + 0x28, (rand() * 0x10000) | 0, true); // processor
        else if (field === 6)
          v.setUint32(b.fileOffset + 0x2c, [2, 4, 0x10003, 0][Math.floor(rand() * 4)], true); // State / format
        else damaged.fill(0, b.fileOffset, b.fileOffset + b.bufferSize); // a zeroed buffer
        await expectSame(`${name} buffer at ${b.fileOffset} field ${field} round ${round}`, damaged, {}, { cells: 10 });
      }
    }
  });

  it("garbage between buffers, trailing garbage and zero tails", async () => {
    const rand = mulberry32(15);
    for (const [name, bytes] of inputs) {
      const bufs = buffersOf((await expectSame(name, bytes))!);
      for (let round = 0; round < 8; round++) {
        const at = round < 6 && bufs.length > 1 ? bufs[1 + Math.floor(rand() * (bufs.length - 1))].fileOffset : bytes.length;
        const size = [3, 0x47, 100, 5000, 70000][Math.floor(rand() * 5)];
        const junk = round % 3 === 2 ? new Uint8Array(size) : Uint8Array.from({ length: size }, () => (rand() * 256) | 0);
        const damaged = new Uint8Array(bytes.length + size);
        damaged.set(bytes.subarray(0, at));
        damaged.set(junk, at);
        damaged.set(bytes.subarray(at), at + size);
        await expectSame(`${name} ${size} bytes of junk at ${at}`, damaged, {}, { cells: 10 });
      }
    }
  });

  it("processor numbers at the NumberOfProcessors boundary, with and without the index flag", async () => {
    for (const [name, bytes] of inputs) {
      const full = (await expectSame(name, bytes))!;
      const n = full.info.numberOfProcessors;
      const bufs = buffersOf(full);
      const b = bufs[bufs.length > 2 ? 2 : bufs.length - 1];
      // also a processor count past 255, where the index flag decides between 11 and 8 bits
      for (const [count, raw] of [
        [n, n - 1],
        [n, n],
        [n, n + 1],
        [n, 0x0800 | n],
        [n, 0x0800 | (n - 1)],
        [n, 0x07ff],
        [n, 0xffff],
        [300, 299],
        [300, 300],
        [300, 301],
      ]) {
        for (const flag of [0, 0x20]) {
          const damaged = bytes.slice();
          const v = new DataView(damaged.buffer);
          v.setUint32(HDR + 0x20 + 0x0c, count, true);
          v.setUint16(b.fileOffset + 0x28, raw, true);
          v.setUint16(b.fileOffset + 0x34, (v.getUint16(b.fileOffset + 0x34, true) & ~0x20) | flag, true);
          await expectSame(`${name} processor ${raw} flags ${flag}`, damaged, {}, { cells: 10 });
        }
      }
    }
  });

  it("an empty buffer right after damage is taken as the next buffer", async () => {
    for (const [name, bytes] of inputs) {
      const bufs = buffersOf((await expectSame(name, bytes))!);
      for (let k = 1; k + 1 < bufs.length && k < 4; k++) {
        for (const zeroSize of [true, false]) {
          const damaged = bytes.slice();
          const v = new DataView(damaged.buffer);
          if (zeroSize) v.setUint32(bufs[k].fileOffset, 0, true);
          else v.setUint32(bufs[k].fileOffset, 0x7fffffff, true);
          const next = bufs[k + 1].fileOffset;
          const nextCopy = damaged.slice();
          v.setUint32(next + 4, HDR, true);
          v.setUint32(next + 0x30, HDR, true);
          await expectSame(`${name} empty buffer after damaged buffer ${k}`, damaged, {}, { cells: 10 });
          // the candidate's first record a minimal WPP message (its first record decides)
          if (!bufs[k + 1].compressed) {
            for (const size of [4, 8, 12]) {
              const w = nextCopy.slice();
              new DataView(w.buffer).setUint32(next + HDR, 0x90000000 | size, true);
              await expectSame(`${name} ${size}-byte message first after damaged buffer ${k}`, w, {}, { cells: 10 });
            }
          }
        }
      }
    }
  });

  it("the decompress export on crafted, compressed, truncated and random streams", async () => {
    const cores: CoreExports[] = [await instantiateCore(), createJsCore()];
    for (const c of cores) c.init(1 << 16, 0, 1 << 20);
    const run = (c: CoreExports, src: Uint8Array, expected: number) => {
      const s = c.alloc(Math.max(1, src.length));
      const d = c.alloc(Math.max(1, expected));
      new Uint8Array(c.memory.buffer, s, src.length).set(src);
      const r = c.decompress(s, src.length, d, expected);
      const out = Buffer.from(new Uint8Array(c.memory.buffer, d, Math.max(0, r >= 0 ? r : -1 - r))).toString("hex");
      c.free(d);
      c.free(s);
      return `${r} ${out}`;
    };
    const same = (label: string, src: Uint8Array, expected: number) => {
      const [a, b] = cores.map((c) => run(c, src, expected));
      expect(b, label).toBe(a);
    };
    // one literal, then a match of 32-bit length L at offset 1: L = 0xFFFFFFFF wraps in u32 arithmetic
    const longMatch = (length: number) => {
      const b = new Uint8Array(4 + 1 + 2 + 1 + 1 + 2 + 4);
      const v = new DataView(b.buffer);
      v.setUint32(0, 0x40000000, true); // flags: literal, then match
      b[4] = 0x61;
      v.setUint16(5, 7, true); // offset 1, length 7: extended
      b[7] = 0x0f; // nibble 15
      b[8] = 0xff; // byte 255
      v.setUint16(9, 0, true); // u16 0: a u32 follows
      v.setUint32(11, length, true);
      return b;
    };
    for (const L of [0xffffffff, 0xfffffffe, 0xfffffffd, 0xfffffffc, 21, 22, 23, 1000]) {
      for (const expected of [1, 2, 5, 30, 2000]) same(`long match ${L} into ${expected}`, longMatch(L), expected);
    }
    const rand = mulberry32(17);
    for (let round = 0; round < 150; round++) {
      const n = 1 + Math.floor(rand() * 3000);
      const text = Uint8Array.from({ length: n }, (_, i) => (rand() < 0.7 ? "abcabcabd"[i % 9].charCodeAt(0) : (rand() * 256) | 0));
      const packed = xpressCompress(text);
      same(`round trip ${round}`, packed, n);
      same(`cut ${round}`, packed.subarray(0, Math.floor(rand() * packed.length)), n);
      const bad = packed.slice();
      for (let k = 0; k < 3; k++) bad[Math.floor(rand() * bad.length)] = (rand() * 256) | 0;
      same(`flipped ${round}`, bad, n + Math.floor(rand() * 20) - 10);
      same(
        `junk ${round}`,
        Uint8Array.from({ length: Math.floor(rand() * 300) }, () => (rand() * 256) | 0),
        1 + Math.floor(rand() * 500),
      );
    }
  });

  it("alloc returns 0, not a trap, when memory cannot hold the block", async () => {
    for (const c of [await instantiateCore(), createJsCore()]) {
      c.init(1 << 16, 0, 1 << 20);
      expect(c.alloc(0xffff8000)).toBe(0);
      const p = c.alloc(64);
      expect(p).toBeGreaterThan(0);
      c.free(p);
    }
  });

  it("corrupted XPRESS streams", async () => {
    const rand = mulberry32(16);
    const compressed: [string, Uint8Array][] = [
      ["synthetic compressed", packed],
      ["generated compressed", generatedPacked],
      ["sample", sample],
    ];
    if (HAVE_CORPUS) compressed.push(["net.4.5.2.x64.etl", loadCorpus("net.4.5.2.x64.etl")]);
    for (const [name, bytes] of compressed) {
      const bufs = buffersOf((await expectSame(name, bytes, {}, { cells: 100 }))!).filter((b) => b.compressed);
      expect(bufs.length).toBeGreaterThan(0);
      const rounds = bytes.length > 1_000_000 ? 6 : 30;
      for (let round = 0; round < rounds; round++) {
        const damaged = bytes.slice();
        const v = new DataView(damaged.buffer);
        const b = bufs[Math.floor(rand() * bufs.length)];
        const body = b.bufferSize - HDR;
        const kind = round % 5;
        if (kind === 0)
          v.setUint32(b.fileOffset + HDR, 0xffffffff, true); // a match before any output
        else if (kind === 1) for (let k = 0; k < 4; k++) damaged[b.fileOffset + HDR + Math.floor(rand() * body)] = (rand() * 256) | 0;
        else if (kind === 2)
          v.setUint32(b.fileOffset + 0x30, v.getUint32(b.fileOffset + 0x30, true) + 8 + Math.floor(rand() * 4000), true); // more output claimed
        else if (kind === 3)
          v.setUint32(b.fileOffset + 0x30, Math.max(HDR, v.getUint32(b.fileOffset + 0x30, true) - 8 - Math.floor(rand() * 400)), true); // less
        else damaged.fill(0xff, b.fileOffset + HDR + Math.floor(rand() * body), b.fileOffset + b.bufferSize); // stream tail lost
        await expectSame(`${name} buffer at ${b.fileOffset} kind ${kind}`, damaged, {}, { cells: 10 });
      }
    }
  });

  it("logfile header: pointer size, record size, processor count", async () => {
    for (const [name, bytes] of inputs) {
      const at = HDR; // the header record of buffer 0
      const payload = at + 0x20;
      for (const [label, patch] of [
        ["PointerSize 4", (v: DataView) => v.setUint32(payload + 0x2c, 4, true)],
        ["PointerSize 8", (v: DataView) => v.setUint32(payload + 0x2c, 8, true)],
        ["PointerSize 7", (v: DataView) => v.setUint32(payload + 0x2c, 7, true)],
        ["record type flipped", (v: DataView) => v.setUint8(at + 2, v.getUint8(at + 2) === 1 ? 2 : 1)],
        ["record short", (v: DataView) => v.setUint16(at + 4, 0x20 + 0x40, true)],
        ["record minimal", (v: DataView) => v.setUint16(at + 4, 0x20, true)],
        // the payload ends right after the time zone (32- and 64-bit layouts), or one byte short
        ["ends after time zone (32)", (v: DataView) => v.setUint16(at + 4, 0x20 + 0x40 + 172, true)],
        ["ends after time zone (64)", (v: DataView) => v.setUint16(at + 4, 0x20 + 0x48 + 172, true)],
        ["ends inside time zone", (v: DataView) => v.setUint16(at + 4, 0x20 + 0x48 + 171, true)],
        ["no processors", (v: DataView) => v.setUint32(payload + 0x0c, 0, true)],
        ["HookId not 0", (v: DataView) => v.setUint16(at + 6, 1, true)],
        [
          "compressed mode, format 2",
          (v: DataView) => {
            v.setUint32(payload + 0x20, v.getUint32(payload + 0x20, true) | 0x04000000, true);
            v.setUint32(0x2c, 2, true);
          },
        ],
      ] as const) {
        const damaged = bytes.slice();
        patch(new DataView(damaged.buffer));
        await expectSame(`${name}: ${label}`, damaged, {}, { cells: 10 });
      }
    }
  });
});
