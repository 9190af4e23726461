// An EventPipe file streamed by worker threads (a piece of the file between cuts after sequence points
// to each, decode/eventpipe/parallel.ts) gives the batches one thread gives: the same windows, rows,
// payloads, names, stacks, typed .NET tables, warnings, lost events and end; the cuts are where the
// reader's own block list has sequence points; a file cut short stops where it stops on one thread.

import { afterAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { streamTrace, type TraceBatch } from "../dist/bindings/index.js";
import { streamTraceFile } from "../dist/bindings/node.js";
import { readNettrace, BLOCK_METADATA, BLOCK_SEQUENCE_POINT } from "../dist/bindings/eventpipe/reader.js";
import { nettraceCuts } from "../dist/bindings/eventpipe/cuts.js";
import { generateNettrace } from "../dist/bindings/generator/index.js";
import { piecesRead } from "../dist/bindings/decode/eventpipe/parallel.js";
import { nettraceCorpusFiles } from "./helpers/nettrace-cases.js";
import { CORPUS, HAVE_CORPUS } from "./helpers/shared.js";

const NETTRACE = join(CORPUS, "nettrace");

const dir = mkdtempSync(join(tmpdir(), "etw-wasm-nettrace-parallel-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const COLUMNS = [
  "timestamp",
  "keywords",
  "pid",
  "tid",
  "payloadLength",
  "provider",
  "eventId",
  "version",
  "opcode",
  "level",
  "flags",
  "processor",
  "eventType",
] as const;

const hash = (parts: Iterable<ArrayBufferView | string>) => {
  const h = createHash("sha1");
  for (const p of parts) h.update(typeof p === "string" ? p : new Uint8Array(p.buffer, p.byteOffset, p.byteLength));
  return h.digest("hex").slice(0, 16);
};

/** What a batch says, each column and list as a hash: equal batches give equal summaries. */
function summary(b: TraceBatch): Record<string, unknown> {
  const n = b.events.length;
  const cols = b.events.columns as unknown as Record<string, ArrayBufferView>;
  const out: Record<string, unknown> = {
    index: b.index,
    firstRow: b.firstRow,
    rows: n,
    complete: b.complete,
    incomplete: b.incomplete,
    eventsLost: b.info.eventsLost,
  };
  for (const k of COLUMNS) out[k] = hash([cols[k]]);
  const rows = Array.from({ length: n }, (_, i) => b.events.row(i));
  out.payloads = hash(rows.map((r) => r.payload));
  out.names = hash(Array.from({ length: n }, (_, i) => b.names.ofRow(i) + "\n"));
  out.stacks = hash(rows.map((r) => `${r.stack?.join(",") ?? "-"}\n`));
  out.activities = hash(rows.map((r) => `${String(r.activityId ?? "")}\n`));
  out.providers = Array.from({ length: b.providers.length }, (_, p) => b.providers.get(p).name);
  out.tables = b.tables.map((t) => `${t.schema.name}:${t.length}:${hash(Array.from({ length: t.length }, (_, i) => `${t.rows[i]},`))}`).sort();
  out.warnings = b.warnings.map((w) => `${w.offset}:${w.message}`);
  out.warningTotal = b.warningTotal;
  return out;
}

async function summaries(stream: AsyncIterable<TraceBatch> & { end?: unknown }): Promise<{ batches: Record<string, unknown>[]; end: unknown }> {
  const batches: Record<string, unknown>[] = [];
  for await (const b of stream) batches.push(summary(b));
  const end = stream.end as
    | { eventCount: number; complete: boolean; incomplete?: unknown; eventTypes: { length: number }; info: { eventsLost: number }; warningTotal: number }
    | undefined;
  return {
    batches,
    end: end && {
      events: end.eventCount,
      complete: end.complete,
      incomplete: end.incomplete,
      types: end.eventTypes.length,
      lost: end.info.eventsLost,
      warnings: end.warningTotal,
    },
  };
}

/**
 * The file streamed on this thread, then by workers (from its path and from its bytes): the same
 * batches. Returns the batches and the cuts the workers' pieces start at.
 */
async function expectSameStreams(
  label: string,
  bytes: Uint8Array,
  batchBytes: number,
): Promise<{ batches: number; cuts: number; warnings: number; complete: boolean }> {
  const path = join(dir, `${label.replace(/[^a-z0-9.]+/gi, "_")}.nettrace`);
  writeFileSync(path, bytes);
  const one = await summaries(await streamTraceFile(path, { batchBytes }));
  expect(one.batches.length, `${label}: batches on one thread`).toBeGreaterThan(0);
  // (the pieces are cut where the cuts are every batchBytes apart at least: one more piece than cuts)
  const cuts = nettraceCuts((at, n) => bytes.subarray(at, at + n), bytes.length, batchBytes)?.cuts.length ?? 0;
  const pieces = cuts > 0 ? cuts + 1 : 0;
  for (const workers of [1, 2]) {
    const before = piecesRead.count;
    const fromPath = await summaries(await streamTraceFile(path, { batchBytes, workers }));
    expect(fromPath, `${label}: ${workers} workers reading the file`).toEqual(one);
    expect(piecesRead.count - before, `${label}: pieces read by ${workers} workers`).toBe(pieces);
  }
  const before = piecesRead.count;
  const fromBytes = await summaries(streamTrace(bytes, { batchBytes, workers: 2 }));
  expect(fromBytes, `${label}: 2 workers sent the bytes`).toEqual(one);
  expect(piecesRead.count - before, `${label}: pieces read by workers sent the bytes`).toBe(pieces);
  const end = one.end as { complete: boolean; warnings: number };
  return { batches: one.batches.length, cuts, warnings: end.warnings, complete: end.complete };
}

describe("EventPipe streams read by workers", () => {
  it("the cuts are right after the reader's sequence point blocks, at least the bytes asked apart, with the metadata blocks before each", () => {
    const bytes = generateNettrace({ targetBytes: Infinity, fileBytes: 2 << 20, samples: true, seed: 7, version: 5, sequencePointBytes: 64 << 10 }).bytes;
    const file = readNettrace(bytes);
    const b = file.blocks;
    const spEnds: number[] = [];
    const metadata: number[] = [];
    for (let i = 0; i < b.length; i++) {
      // (a V4/V5 block object ends with its end tag, one byte after its content)
      if (b.kind[i] === BLOCK_SEQUENCE_POINT) spEnds.push(b.contentOffset[i] + b.contentLength[i] + 1);
      if (b.kind[i] === BLOCK_METADATA) metadata.push(b.offset[i]);
    }
    expect(spEnds.length).toBeGreaterThan(10);
    const cuts = nettraceCuts((at, n) => bytes.subarray(at, at + n), bytes.length, 100 << 10)!;
    expect(cuts.cuts.length).toBeGreaterThan(5);
    let last = 0;
    for (const c of cuts.cuts) {
      expect(spEnds).toContain(c.offset);
      expect(c.sequencePoint[1]).toBe(c.offset);
      expect(c.offset - last).toBeGreaterThanOrEqual(100 << 10);
      last = c.offset;
      expect(cuts.state.slice(0, c.state).map(([s]) => s)).toEqual(metadata.filter((m) => m < c.sequencePoint[0]));
    }
    // (a file too short for its Trace object: not cut)
    expect(nettraceCuts((at, n) => bytes.subarray(at, Math.min(at + n, 40)), 40, 1)).toBeUndefined();
  });

  it("generated V5 and V6 files with samples and stacks: the batches one thread gives, from a path or bytes, with 1 and 2 workers", async () => {
    for (const version of [5, 6] as const) {
      const bytes = generateNettrace({
        targetBytes: Infinity,
        fileBytes: 3 << 20,
        samples: true,
        seed: 11 + version,
        version,
        sequencePointBytes: 96 << 10,
      }).bytes;
      // (cuts every 256 KiB: a dozen pieces, several windows each)
      const { batches, cuts } = await expectSameStreams(`generated V${version}`, bytes, 256 << 10);
      expect(batches).toBeGreaterThan(20);
      expect(cuts).toBeGreaterThanOrEqual(8);
    }
  }, 120_000);

  it("workers make windows in shared memory and lend them: a window's memory, once disposed, is a later window's", async () => {
    const bytes = generateNettrace({ targetBytes: Infinity, fileBytes: 4 << 20, samples: true, seed: 5, version: 5, sequencePointBytes: 64 << 10 }).bytes;
    const path = join(dir, "generated_V5_slots.nettrace");
    writeFileSync(path, bytes);
    const memoryOf = async (workers: number) => {
      const seen: { view: BigInt64Array; copy: BigInt64Array }[] = [];
      let rows = 0;
      for await (const b of await streamTraceFile(path, { batchBytes: 128 << 10, workers })) {
        const t = b.events.timestamp;
        // (the view outlives the batch: shared memory is not taken back from this thread, only written again)
        seen.push({ view: new BigInt64Array(t.buffer, t.byteOffset, t.length), copy: t.slice() });
        rows += b.events.length;
      }
      const shared = seen.every((s) => s.view.buffer instanceof SharedArrayBuffer);
      const rewritten = seen.filter((s) => s.view.some((x, i) => x !== s.copy[i])).length;
      return { batches: seen.length, shared, rewritten, rows };
    };
    for (const workers of [1, 2]) {
      const m = await memoryOf(workers);
      expect(m.batches).toBeGreaterThan(20);
      expect(m.shared).toBe(true);
      // (the windows' memory goes round: most windows' timestamps were written over by later windows)
      expect(m.rewritten).toBeGreaterThan(m.batches / 2);
      const here = await streamTraceFile(path, { batchBytes: 128 << 10 });
      let rows = 0;
      for await (const b of here) rows += b.events.length;
      expect(m.rows).toBe(rows);
    }
  }, 60_000);

  it("a file cut short inside a block: the same batches and the same stop, at the offset one thread gives", async () => {
    const bytes = generateNettrace({ targetBytes: Infinity, fileBytes: 2 << 20, samples: true, seed: 3, version: 5, sequencePointBytes: 96 << 10 }).bytes;
    const cut = bytes.subarray(0, Math.floor(bytes.length * 0.8));
    expect((await expectSameStreams("generated V5 cut", cut, 256 << 10)).cuts).toBeGreaterThan(3);
    const s = await streamTraceFile(join(dir, "generated_V5_cut.nettrace"), { batchBytes: 256 << 10, workers: 2 });
    for await (const _ of s) {
      // (read to the end)
    }
    expect(s.end?.complete).toBe(false);
    expect(s.end?.incomplete?.offset).toBeGreaterThan(bytes.length * 0.7);
  }, 60_000);

  it("damaged files (bytes flipped in blocks, a block's size, metadata): the batches, warnings and stop one thread gives", async () => {
    const bytes = generateNettrace({ targetBytes: Infinity, fileBytes: 2 << 20, samples: true, seed: 9, version: 5, sequencePointBytes: 96 << 10 }).bytes;
    const blocks = readNettrace(bytes).blocks;
    const firstOf = (kind: number) => blocks.kind.findIndex((k) => k === kind);
    const cases: [string, (b: Uint8Array) => void][] = [
      [
        "payload bytes",
        (b) => {
          for (let k = 1; k < 40; k++) b[Math.floor((b.length * k) / 41)] ^= 0x5a;
        },
      ],
      [
        "a late block's size",
        (b) => {
          const i = blocks.length - 10;
          b[blocks.contentOffset[i] - 4] ^= 0x40;
        },
      ],
      [
        "the metadata block's content",
        (b) => {
          const i = firstOf(BLOCK_METADATA);
          for (let k = 40; k < 200; k += 7) b[blocks.contentOffset[i] + k] ^= 0xff;
        },
      ],
    ];
    for (const [what, damage] of cases) {
      const copy = bytes.slice();
      damage(copy);
      const r = await expectSameStreams(`damaged ${what}`, copy, 256 << 10);
      // (the damage shows: warnings, or a stop)
      expect(r.warnings > 0 || !r.complete, `damaged ${what}`).toBe(true);
      expect(r.cuts, `damaged ${what}`).toBeGreaterThan(2);
    }
  }, 120_000);

  it("V6 sequence points with flags (threads, metadata cleared): the cuts after them replay them, the batches one thread gives", async () => {
    const base = generateNettrace({ targetBytes: Infinity, fileBytes: 3 << 20, samples: true, seed: 31, version: 6, sequencePointBytes: 96 << 10 }).bytes;
    const b = readNettrace(base).blocks;
    const points = Array.from({ length: b.length }, (_, i) => i).filter((i) => b.kind[i] === BLOCK_SEQUENCE_POINT);
    expect(points.length).toBeGreaterThan(10);
    for (const flags of [1, 2, 3]) {
      const bytes = base.slice();
      // (every third sequence point: its flags after the 8-byte timestamp)
      for (const i of points.filter((_, k) => k % 3 === 1)) new DataView(bytes.buffer).setUint32(b.contentOffset[i] + 8, flags, true);
      const cutter = nettraceCuts((at, n) => bytes.subarray(at, at + n), bytes.length, 256 << 10)!;
      // (the flagged sequence points are state the pieces after them replay)
      expect(cutter.state.length, `flags ${flags}`).toBeGreaterThan(3);
      const r = await expectSameStreams(`V6 flags ${flags}`, bytes, 256 << 10);
      expect(r.cuts).toBeGreaterThanOrEqual(8);
      // (metadata cleared: the events after such a point name metadata not defined since, and say so)
      if (flags & 2) expect(r.warnings, `flags ${flags}`).toBeGreaterThan(1000);
    }
  }, 120_000);

  it("a consumer that stops after two batches lets the workers go; the next stream reads the file whole", async () => {
    const bytes = generateNettrace({ targetBytes: Infinity, fileBytes: 3 << 20, samples: true, seed: 21, version: 5, sequencePointBytes: 96 << 10 }).bytes;
    const path = join(dir, "stopped.nettrace");
    writeFileSync(path, bytes);
    const one = await summaries(await streamTraceFile(path, { batchBytes: 256 << 10 }));
    let seen = 0;
    for await (const _ of await streamTraceFile(path, { batchBytes: 256 << 10, workers: 2 })) if (++seen === 2) break;
    expect(seen).toBe(2);
    expect(await summaries(await streamTraceFile(path, { batchBytes: 256 << 10, workers: 2 }))).toEqual(one);
  }, 60_000);

  it.skipIf(!HAVE_CORPUS)(
    "every corpus EventPipe file: the batches one thread gives, cut every 64 KiB",
    async () => {
      const files = nettraceCorpusFiles(NETTRACE);
      expect(files.length).toBeGreaterThan(3);
      for (const f of files) await expectSameStreams(f.split("/").pop()!, readFileSync(join(NETTRACE, f)), 64 << 10);
    },
    180_000,
  );
});
