// The trace generator's sources: the chunk stream (sync and async) is byte for byte the file
// generateTraceFile writes, every chunk holds whole buffers, and the decoder reads every record and
// buffer the generator reports, streamed, without warnings.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { openTrace } from "../dist/bindings/index.js";
import {
  generateTrace,
  generateTraceChunks,
  traceChunks,
  TraceGenerator,
  type GenerateOptions,
  type GenerateSummary,
} from "../dist/bindings/generator/generate.js";
import { generateTraceFile, writeTraceFile } from "../dist/bindings/generator/generate-file.js";
import { xpressBound, xpressCompress, xpressCompressInto } from "../dist/bindings/generator/xpress-compress.js";
import { mulberry32 } from "../dist/bindings/generator/random.js";
import { payloadU32, rowsWithStackItems } from "./helpers/by-hand.js";

const MiB = 1 << 20;
const dir = mkdtempSync(join(tmpdir(), "etw-wasm-generator-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FLAVOURS: [string, GenerateOptions][] = [
  ["plain, 8-byte pointers", { targetBytes: 3 * MiB, seed: 5, processors: 4 }],
  ["plain, 4-byte pointers", { targetBytes: 3 * MiB, seed: 6, processors: 3, pointerSize: 4 }],
  ["XPRESS, 8-byte pointers", { targetBytes: 3 * MiB, seed: 7, processors: 8, compress: true }],
  ["XPRESS, 4-byte pointers", { targetBytes: 3 * MiB, seed: 8, processors: 2, compress: true, pointerSize: 4 }],
];

const concat = (parts: Uint8Array[]) => Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));

/** Buffer sizes of a run of whole buffers (each header's first field is its size on disk). */
function bufferSizes(chunk: Uint8Array): number[] {
  const v = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const sizes: number[] = [];
  for (let at = 0; at < chunk.length; ) {
    const size = v.getUint32(at, true);
    expect(size).toBeGreaterThanOrEqual(0x48);
    sizes.push(size);
    at += size;
    expect(at).toBeLessThanOrEqual(chunk.length);
  }
  return sizes;
}

describe("generateTraceChunks", () => {
  for (const [name, opts] of FLAVOURS) {
    it(`streams exactly the file generateTraceFile writes (${name})`, async () => {
      const path = join(dir, "trace.etl");
      const written = writeTraceFile(path, opts);
      const file = readFileSync(path);
      expect(written.bytes).toBe(file.length);

      let reported: GenerateSummary | undefined;
      const source = generateTraceChunks({ ...opts, chunkBytes: 300_000 }, (s) => (reported = s));
      expect(source.summary).toBeUndefined();
      const chunks: Uint8Array[] = [];
      for await (const c of source) chunks.push(c.slice());
      expect(Buffer.compare(concat(chunks), file)).toBe(0);
      expect(source.summary).toEqual(written);
      expect(reported).toEqual(written);

      // the header buffer comes alone, then chunks of whole buffers no larger than asked
      expect(chunks[0].length).toBe(written.headerBufferSize);
      let buffers = 0;
      for (const c of chunks) {
        buffers += bufferSizes(c).length;
        if (c !== chunks[0]) expect(c.length).toBeLessThanOrEqual(300_000);
      }
      expect(buffers).toBe(written.buffers);

      // the sync iterable, the generator function and the in-memory trace agree
      const sync = createHash("sha256");
      for (const c of source) sync.update(c);
      expect(sync.digest("hex")).toBe(createHash("sha256").update(file).digest("hex"));
      const it = traceChunks(opts);
      const parts: Uint8Array[] = [];
      for (let r = it.next(); ; r = it.next()) {
        if (r.done) {
          expect(r.value).toEqual(written);
          break;
        }
        parts.push(r.value.slice());
      }
      expect(Buffer.compare(concat(parts), file)).toBe(0);
      expect(Buffer.compare(Buffer.from(generateTrace(opts)), file)).toBe(0);
    });
  }

  it("gives chunks of one buffer when asked for less, and fills them when plain", () => {
    const opts: GenerateOptions = { targetBytes: 1 * MiB, seed: 2, chunkBytes: 1 };
    const chunks = [...generateTraceChunks(opts)];
    for (const c of chunks) expect(bufferSizes(c)).toEqual([65536]);
    const big = [...generateTraceChunks({ ...opts, chunkBytes: 4 * 65536 })];
    expect(big.slice(1, -1).every((c) => c.length === 4 * 65536)).toBe(true);
    expect(Buffer.compare(concat(chunks), concat(big))).toBe(0);
  });

  it("keeps the bytes with other buffer sizes", () => {
    const opts: GenerateOptions = { targetBytes: MiB, seed: 9, bufferSize: 8192, compress: true };
    const chunks = [...generateTraceChunks(opts)];
    expect(Buffer.compare(concat(chunks), Buffer.from(generateTrace(opts)))).toBe(0);
    expect(() => new TraceGenerator({ targetBytes: 1, bufferSize: 1001 })).toThrow(RangeError);
  });

  it("measures the same totals without writing (the header buffer needs them first)", () => {
    for (const [, opts] of FLAVOURS) {
      const g = new TraceGenerator(opts);
      while (g.next()) {}
      const plan = new TraceGenerator(opts, { measureOnly: true });
      expect(plan.next()).toBeNull();
      const [a, b] = [g.summary(), plan.summary()];
      expect([b.records, b.buffers]).toEqual([a.records, a.buffers]);
      if (!opts.compress) expect(b.bytes).toBe(a.bytes);
      expect(Buffer.compare(Buffer.from(plan.header()), Buffer.from(g.header()))).toBe(0);
    }
  });

  it("writes the same file through generateTraceFile", () => {
    const opts: GenerateOptions = { targetBytes: 2 * MiB, seed: 11, compress: true, pointerSize: 4 };
    const path = join(dir, "file.etl");
    const progress: number[] = [];
    const bytes = generateTraceFile(path, opts, (n) => progress.push(n));
    const file = readFileSync(path);
    expect(bytes).toBe(file.length);
    expect(progress.at(-1)).toBe(bytes);
    expect(Buffer.compare(file, Buffer.from(generateTrace(opts)))).toBe(0);
  });
});

describe("streamed into openTrace", () => {
  for (const [name, opts] of FLAVOURS) {
    it(`decodes every record and buffer the generator reports (${name})`, async () => {
      const source = generateTraceChunks(opts);
      const t = await openTrace(source);
      const s = source.summary!;
      expect(t.warnings).toEqual([]);
      expect(t.decodeError).toBeUndefined();
      expect(t.events.length).toBe(s.records);
      expect(t.bufferCount).toBe(s.buffers);
      expect(t.info.buffersWritten).toBe(s.buffers);
      expect(t.info.decodedBytes).toBe(s.bytes);
      expect(t.info.compressedBuffers).toBe(opts.compress ? s.buffers - 1 : 0);
      expect(t.info.pointerSize).toBe(opts.pointerSize ?? 8);
      expect(new Set(t.events.processor)).toEqual(new Set(Array.from({ length: opts.processors! }, (_, i) => i)));
      const starts = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 1 }).length;
      expect(starts).toBeGreaterThan(0);
      expect(t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 2 }).length).toBe(starts);
    });
  }
});

describe("allocation stacks", () => {
  for (const pointerSize of [4, 8] as const) {
    it(`with samples, AllocationTick events after the first JIT carry a stack item of 4 to 6 frames before their payload (pointer size ${pointerSize})`, async () => {
      const t = await openTrace(generateTrace({ targetBytes: 2 << 20, seed: 3, processors: 2, samples: true, pointerSize }));
      expect(t.warnings).toEqual([]);
      const ticks = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 10 }).indices;
      const framed = rowsWithStackItems(t);
      const withStack = Array.from(ticks).filter((r) => framed.has(r));
      // (only the ticks before the first method load have none)
      expect(ticks.length).toBeGreaterThan(1000);
      expect(withStack.length).toBeGreaterThan(ticks.length - 20);
      // by hand: the item is STACK_TRACE32/64 (MatchId, then 3 to 6 frames), the payload after it still AllocationTick's (its amount 100,000 and up)
      const ext = t.extendedItems;
      for (let e = 0; e < ext.length; e++) {
        if (!framed.has(ext.row[e]) || t.events.eventId[ext.row[e]] !== 10) continue;
        expect(ext.type[e]).toBe(pointerSize === 4 ? 5 : 6);
        const frames = (ext.size[e] - 8) / pointerSize;
        expect(frames).toBeGreaterThanOrEqual(4);
        expect(frames).toBeLessThanOrEqual(6);
      }
      for (const r of withStack.slice(0, 50)) expect(payloadU32(t, r)).toBeGreaterThanOrEqual(100_000);
    });
  }
});

describe("xpressCompressInto", () => {
  it("compresses a slice into place as xpressCompress does the copy, call after call", () => {
    const rand = mulberry32(3);
    const text = new TextEncoder().encode("GCStart GCEnd ThreadPoolWorkerThreadAdjustment ".repeat(400));
    const noise = Uint8Array.from({ length: 20000 }, () => Math.floor(rand() * 4));
    const inputs = [text, noise, text.subarray(5, 9000), new Uint8Array(0), new Uint8Array([1, 2]), text];
    const alone = inputs.map((x) => xpressCompress(x.slice()));
    for (const [k, x] of inputs.entries()) {
      const host = new Uint8Array(x.length + 30);
      host.set(x, 17);
      const out = new Uint8Array(xpressBound(x.length) + 40);
      const n = xpressCompressInto(host, 17, 17 + x.length, out, 33);
      expect(Buffer.compare(Buffer.from(out.subarray(33, 33 + n)), Buffer.from(alone[k]))).toBe(0);
    }
    expect(() => xpressCompressInto(text, 0, text.length, new Uint8Array(10), 0)).toThrow(RangeError);
  });
});
