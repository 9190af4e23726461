// Windowed decoding: a trace decoded in small windows (batches) is the trace decoded whole, column
// for column, through openTrace (windows gathered) and through streamTrace (batch by batch), on
// every corpus file and on generated traces, with small and odd batch and chunk sizes, both
// engines; the stream's end says what the whole trace says; a generated trace of more than 4 GiB
// streams through with the generator's own counts.

import { describe, expect, it } from "vitest";
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { streamTraceFile } from "../dist/bindings/node.js";
import { decodeWindows } from "../dist/bindings/decode/windows/windows.js";
import { concatBytes, metaOf } from "../dist/bindings/decode/result/trace-data.js";
import { PROV_STRIDE, TYPE_STRIDE } from "../dist/assembly/codes.js";
import {
  openTrace,
  streamTrace,
  inTimeOrder,
  EtlFormatError,
  type TimeOrderOptions,
  type TimeOrderStats,
  type EventTypeTable,
  type Trace,
  type TraceBatch,
  type DecodeFilter,
  type ClrTable,
} from "../dist/bindings/index.js";
import { generateTrace, generateTraceChunks } from "../dist/bindings/generator/generate.js";
import { EtlWriter } from "../dist/bindings/generator/etl-writer.js";
import { HAVE_CORPUS, corpusFiles, etlPath } from "./helpers/shared.js";
import { syntheticTrace, traceDifferences, show, sameValue } from "./helpers/engines.js";

const ENGINES = ["wasm", "js"] as const;
// (the smallest batch, and an odd one; odd chunks too)
const BATCHES = [64 << 10, 100_003] as const;
const CHUNK = 77_777;

function inputs(): [string, () => Uint8Array][] {
  const list: [string, () => Uint8Array][] = corpusFiles().map((f) => [f, () => readFileSync(etlPath(f))]);
  list.push(["synthetic-plain", () => syntheticTrace(11)], ["synthetic-xpress", () => syntheticTrace(12, { compress: true })]);
  return list;
}

const COLUMNS = [
  "timestamp",
  "keywords",
  "pid",
  "tid",
  "payloadLength",
  "headerLength",
  "provider",
  "eventId",
  "task",
  "flags",
  "processor",
  "version",
  "opcode",
  "level",
  "headerType",
  "channel",
  "eventType",
] as const;

function typeList(ty: EventTypeTable): string {
  return show(Array.from({ length: ty.length }, (_, t) => [ty.provider[t], ty.eventId[t], ty.version[t], ty.opcode[t], ty.headerType[t], ty.count[t]]));
}

/** The info of a trace or batch that comes from the logfile header (not its counts). */
function headerFields(t: Trace): object {
  const { eventCount: _e, bufferCount: _b, compressedBuffers: _c, fileSize: _f, decodedBytes: _d, ...rest } = t.info;
  return rest;
}

/** Where each event row of a whole trace's typed table is in it (made once per table: batches ask for it again and again). */
const rowIndexes = new WeakMap<object, Map<object, Map<number, number>>>();
function rowIndex(whole: Trace, wt: Trace["tables"][number]): Map<number, number> {
  let byTable = rowIndexes.get(whole);
  if (!byTable) rowIndexes.set(whole, (byTable = new Map()));
  let at = byTable.get(wt.schema);
  if (!at) {
    at = new Map();
    for (let i = 0; i < wt.length; i++) at.set(wt.rows[i], i);
    byTable.set(wt.schema, at);
  }
  return at;
}

/** Every difference between batch `b` and rows firstRow.. of the whole trace (at most a few). */
function batchDifferences(b: Trace & Pick<TraceBatch, "index" | "firstRow" | "firstBuffer">, whole: Trace): string[] {
  const out: string[] = [];
  const n = b.events.length;
  const bc = b.events.columns,
    wc = whole.events.columns;
  // (columns compared as bytes, element by element only to name the first difference; payloads as
  // ranges of their record bytes: a sweep of a corpus trace compares millions of rows, and a BigInt, an
  // EventRow or a subarray each would cost)
  for (const k of COLUMNS) {
    const x = bc[k] as ArrayBufferView & ArrayLike<unknown>,
      y = wc[k] as ArrayBufferView & ArrayLike<unknown>;
    const w = (x as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
    const xs = Buffer.from(x.buffer, x.byteOffset, n * w),
      ys = Buffer.from(y.buffer, y.byteOffset + b.firstRow * w, n * w);
    if (xs.equals(ys)) continue;
    for (let i = 0; i < n; i++) {
      if (x[i] !== y[b.firstRow + i]) {
        out.push(`batch ${b.index} ${k}[${i}]: ${String(x[i])} whole ${String(y[b.firstRow + i])}`);
        break;
      }
    }
  }
  let bytesA: Uint8Array | null = null,
    bytesB: Uint8Array | null = null;
  let bufA: Buffer<ArrayBufferLike> = Buffer.alloc(0),
    bufB: Buffer<ArrayBufferLike> = Buffer.alloc(0);
  for (let i = 0; i < n; i++) {
    const ra = b.events.recordBytesOf(i),
      rb = whole.events.recordBytesOf(b.firstRow + i);
    if (ra !== bytesA) {
      bytesA = ra;
      bufA = ra ? Buffer.from(ra.buffer, ra.byteOffset, ra.byteLength) : Buffer.alloc(0);
    }
    if (rb !== bytesB) {
      bytesB = rb;
      bufB = rb ? Buffer.from(rb.buffer, rb.byteOffset, rb.byteLength) : Buffer.alloc(0);
    }
    const oa = bc.payloadOffset[i],
      la = bc.payloadLength[i];
    const ob = wc.payloadOffset[b.firstRow + i],
      lb = wc.payloadLength[b.firstRow + i];
    if (la !== lb || bufA.compare(bufB, ob, ob + lb, oa, oa + la) !== 0) {
      out.push(`batch ${b.index} payload of row ${i}`);
      break;
    }
  }
  for (let i = 0; i < b.bufferCount; i++) {
    const x = b.buffer(i),
      y = whole.buffer(b.firstBuffer + i);
    if (x.fileOffset !== y.fileOffset || x.firstRow + b.firstRow !== y.firstRow || x.rowCount !== y.rowCount || x.dataLength !== y.dataLength) {
      out.push(`batch ${b.index} buffer ${i}: ${show(x)} whole ${show(y)}`);
      break;
    }
  }
  // typed tables: each entry is the whole table's entry of the same row, field for field
  for (const t of b.tables) {
    const wt = whole.tables.find((x) => x.schema === t.schema);
    if (!wt) {
      out.push(`batch ${b.index}: table ${t.name} missing from the whole trace`);
      continue;
    }
    const at = rowIndex(whole, wt);
    for (let i = 0; i < t.length; i++) {
      const j = at.get(b.firstRow + t.rows[i]);
      if (j === undefined) {
        out.push(`batch ${b.index} ${t.name}[${i}]: row ${b.firstRow + t.rows[i]} not in the whole table`);
        break;
      }
      const bad = t.fieldNames.find((f) => {
        return !sameValue(t.get(f, i), wt.get(f, j));
      });
      if (bad) {
        out.push(`batch ${b.index} ${t.name}.${bad}[${i}]: ${show(t.get(bad, i))} whole ${show(wt.get(bad, j))}`);
        break;
      }
    }
  }
  return out.slice(0, 5);
}

describe("windowed decoding equals whole decoding", () => {
  for (const [name, load] of inputs()) {
    const needsCorpus = !name.startsWith("synthetic");
    it.skipIf(needsCorpus && !HAVE_CORPUS)(
      `${name}: openTrace and streamTrace in small windows, both engines`,
      async () => {
        const bytes = load();
        for (const engine of ENGINES) {
          const whole = await openTrace(bytes, { engine });
          for (const batchBytes of BATCHES) {
            const what = `${name} ${engine} batch ${batchBytes}`;
            const gathered = await openTrace(bytes, { engine, batchBytes, chunkBytes: CHUNK });
            expect(traceDifferences(whole, gathered), what).toEqual([]);
            expect(show(gathered.info), what).toBe(show(whole.info));
            gathered.dispose();

            const stream = streamTrace(bytes, { engine, batchBytes, chunkBytes: CHUNK });
            let rows = 0,
              buffers = 0,
              batches = 0,
              clrRows = 0,
              warningTotal = 0;
            const warnings: unknown[] = [];
            const problems: string[] = [];
            for await (const b of stream) {
              expect(b.index, what).toBe(batches++);
              expect([b.firstRow, b.firstBuffer], what).toEqual([rows, buffers]);
              problems.push(...batchDifferences(b, whole));
              rows += b.events.length;
              buffers += b.bufferCount;
              clrRows += b.tables.reduce((n, t) => n + t.length, 0);
              warnings.push(...b.warnings);
              warningTotal += b.warningTotal;
            }
            expect(problems, what).toEqual([]);
            // each batch has the warnings met while it was decoded (the stream's end also those after the last)
            expect(show(warnings), what).toBe(show(whole.warnings.slice(0, warnings.length)));
            expect(warningTotal, what).toBeLessThanOrEqual(whole.warningTotal);
            expect(warningTotal, what).toBeGreaterThanOrEqual(warnings.length);
            expect([rows, buffers, clrRows], what).toEqual([whole.events.length, whole.bufferCount, whole.tables.reduce((n, t) => n + t.length, 0)]);
            // a trace of more record bytes than four windows hold was decoded in several
            let data = 0;
            for (let i = 0; i < whole.bufferCount; i++) data += whole.buffer(i).dataLength;
            if (data > 4 * batchBytes) expect(batches, what).toBeGreaterThan(2);
            const end = stream.end!;
            expect(end, what).toBeDefined();
            expect(
              {
                count: end.eventCount,
                buffers: end.bufferCount,
                batches: end.batchCount,
                complete: end.complete,
                incomplete: end.incomplete,
                input: end.inputBytes,
                decoded: end.decodedBytes,
                warnings: show(end.warnings),
                total: end.warningTotal,
                info: show(end.info),
                providers: show([...end.providers].map((p) => [p.guid, p.name, p.group])),
                types: typeList(end.eventTypes),
              },
              what,
            ).toEqual({
              count: whole.events.length,
              buffers: whole.bufferCount,
              batches,
              complete: whole.complete,
              incomplete: whole.incomplete,
              input: whole.inputBytes,
              decoded: whole.decodedBytes,
              warnings: show(whole.warnings),
              total: whole.warningTotal,
              info: show(whole.info),
              providers: show([...whole.providers].map((p) => [p.guid, p.name, p.group])),
              types: typeList(whole.eventTypes),
            });
          }
          whole.dispose();
        }
      },
      300_000,
    );
  }
});

describe("streamTrace", () => {
  it("a batch is valid until the next: then it is disposed; keep() copies it for good", async () => {
    const bytes = syntheticTrace(21, { records: 6000 });
    const whole = await openTrace(bytes);
    const kept: { trace: Trace; firstRow: number }[] = [];
    let previous: TraceBatch | undefined;
    for await (const b of streamTrace(bytes, { batchBytes: 64 << 10 })) {
      if (previous) expect(() => previous!.events).toThrow(/disposed/);
      kept.push({ trace: b.keep(), firstRow: b.firstRow });
      previous = b;
    }
    expect(kept.length).toBeGreaterThan(2);
    for (const { trace, firstRow } of kept) {
      for (let i = 0; i < trace.events.length; i += 97) {
        expect(trace.events.row(i).toJSON()).toEqual(whole.events.row(firstRow + i).toJSON());
      }
    }
  });

  it("a batch kept is read as before: keep() leaves the batch's own columns and typed tables as they were", async () => {
    // (a whole decode moves a window's addresses where they lie; a batch is still read after keep())
    const bytes = concatBytes([...generateTraceChunks({ targetBytes: 3 << 20, samples: true, seed: 7 })]);
    const whole = await openTrace(bytes);
    for (const engine of ENGINES) {
      const problems: string[] = [];
      let batches = 0;
      for await (const b of streamTrace(bytes, { engine, batchBytes: 512 << 10 })) {
        const kept = b.keep();
        problems.push(...batchDifferences(b, whole));
        expect(kept.events.length).toBe(b.events.length);
        kept.dispose();
        batches++;
      }
      expect(batches, engine).toBeGreaterThan(2);
      expect(problems, engine).toEqual([]);
    }
  });

  it("EventPipe: batches write into memory from the pool, which a kept batch holds until it and every copy are disposed; what keep() keeps stays right while later windows are read", async () => {
    const { generateNettrace } = await import("../dist/bindings/generator/index.js");
    const { isPooled } = await import("../dist/bindings/decode/result/reuse.js");
    const bytes = generateNettrace({ targetBytes: Infinity, fileBytes: 8 << 20, samples: true, seed: 9, version: 5, sequencePointBytes: 1 << 20 }).bytes;
    const whole = await openTrace(bytes);
    for (const engine of ENGINES) {
      const problems: string[] = [];
      const kept: { trace: Trace & Pick<TraceBatch, "index" | "firstRow" | "firstBuffer">; memory: ArrayBufferLike[] }[] = [];
      let rows = 0,
        batches = 0;
      for await (const b of streamTrace(bytes, { engine })) {
        // (the memory of its stored event columns, which the pool gets back once the batch and both copies
        // are disposed: those made when first read are not yet, and are not the pool's)
        const events = (b as unknown as { data: { events: object } }).data.events;
        const memory = Object.values(Object.getOwnPropertyDescriptors(events))
          .map((d) => (d.value as ArrayBufferView | undefined)?.buffer)
          .filter((m) => m !== undefined);
        problems.push(...batchDifferences(b, whole));
        if (b.index % 2 === 1) {
          const copy = b.keep();
          kept.push({ trace: Object.assign(b.keep(), { index: b.index, firstRow: b.firstRow, firstBuffer: b.firstBuffer }), memory });
          copy.dispose();
        }
        rows += b.events.length;
        batches++;
      }
      expect(rows, engine).toBe(whole.events.length);
      expect(batches, engine).toBeGreaterThan(5);
      // (every batch disposed now, each kept one's copy too: the other copy holds its memory)
      for (const { trace, memory } of kept) {
        problems.push(...batchDifferences(trace, whole));
        if (memory.some((m) => isPooled(m))) problems.push(`${engine} batch ${trace.index}: memory pooled while kept`);
        trace.dispose();
        // (the pool takes buffers of 64 KiB and more)
        const large = memory.filter((m) => m.byteLength >= 1 << 16);
        if (!large.length) problems.push(`${engine} batch ${trace.index}: no column of 64 KiB to follow`);
        if (!large.every((m) => isPooled(m))) problems.push(`${engine} batch ${trace.index}: memory not given back once every copy was disposed`);
      }
      expect(problems, engine).toEqual([]);
    }
  });

  it("the TypeScript engine's memory goes back to the pool when its trace is disposed, and the next decode writes into it: rows as the WebAssembly engine's", async () => {
    const { isPooled, emptyPool } = await import("../dist/bindings/decode/result/reuse.js");
    const bytes = syntheticTrace(23, { records: 40_000 });
    // (earlier tests' buffers would be taken instead when they fit better)
    emptyPool();
    const want = await openTrace(bytes, { engine: "wasm" });
    // (a trace of one window keeps its tables in the core's memory)
    const first = await openTrace(bytes, { engine: "js" });
    expect(traceDifferences(first, want)).toEqual([]);
    const memory = first.events.timestamp.buffer;
    expect(memory.byteLength).toBeGreaterThanOrEqual(1 << 20);
    expect(isPooled(memory)).toBe(false);
    first.dispose();
    expect(isPooled(memory)).toBe(true);
    // (taken again for the memory's last growth, not zeroed: the core writes what it reads)
    new Uint8Array(memory).fill(0xa5);
    const second = await openTrace(bytes, { engine: "js" });
    // (compared by identity: a failed toBe would print both buffers)
    expect(second.events.timestamp.buffer === memory).toBe(true);
    expect(isPooled(memory)).toBe(false);
    expect(traceDifferences(second, want)).toEqual([]);
    second.dispose();
    want.dispose();
  });

  it("chunks that can be read only once (generators, sync and async) give every row: none is lost to finding the format", async () => {
    const bytes = syntheticTrace(25, { records: 6000 });
    const whole = await openTrace(bytes);
    function* once(): Generator<Uint8Array> {
      for (let at = 0; at < bytes.length; at += 65536) yield bytes.subarray(at, at + 65536);
    }
    async function* onceAsync(): AsyncGenerator<Uint8Array> {
      yield* once();
    }
    for (const input of [once(), onceAsync()]) {
      const stream = streamTrace(input, { batchBytes: 64 << 10 });
      const problems: string[] = [];
      let rows = 0;
      for await (const b of stream) {
        problems.push(...batchDifferences(b, whole));
        rows += b.events.length;
      }
      expect(problems).toEqual([]);
      expect(rows).toBe(whole.events.length);
      expect(stream.end!.complete).toBe(true);
    }
  });

  it("decode-time filters give the batches the rows a filtered openTrace has", async () => {
    const bytes = syntheticTrace(22, { compress: true, records: 6000 });
    const filters: DecodeFilter[] = [{ provider: "Microsoft-Windows-DotNETRuntime" }, { eventId: [1, 2] }, { pid: [4] }];
    for (const filter of filters) {
      const whole = await openTrace(bytes, { filter });
      const stream = streamTrace(bytes, { filter, batchBytes: 64 << 10 });
      const problems: string[] = [];
      for await (const b of stream) problems.push(...batchDifferences(b, whole));
      expect(problems, show(filter)).toEqual([]);
      expect(stream.end!.eventCount, show(filter)).toBe(whole.events.length);
    }
  });

  it("ends incomplete where openTrace does, with every row before; rejects what is no trace", async () => {
    const bytes = syntheticTrace(23, { records: 6000 });
    const cut = bytes.subarray(0, Math.floor(bytes.length * 0.6) + 1000);
    const whole = await openTrace(cut);
    expect(whole.complete).toBe(false);
    const stream = streamTrace(cut, { batchBytes: 64 << 10 });
    let rows = 0;
    for await (const b of stream) rows += b.events.length;
    expect(rows).toBe(whole.events.length);
    expect({ complete: stream.end!.complete, incomplete: stream.end!.incomplete, decoded: stream.end!.decodedBytes }).toEqual({
      complete: false,
      incomplete: whole.incomplete,
      decoded: whole.decodedBytes,
    });
    const junk = streamTrace(new Uint8Array(4096).fill(7));
    await expect(
      (async () => {
        for await (const _ of junk) {
          /* nothing */
        }
      })(),
    ).rejects.toBeInstanceOf(EtlFormatError);
  });

  it("a consumer that stops early lets the decoder go; a stream is read once", async () => {
    const stream = streamTrace(syntheticTrace(24, { records: 6000 }), { batchBytes: 64 << 10 });
    for await (const b of stream) {
      expect(b.index).toBe(0);
      break;
    }
    expect(stream.end).toBeUndefined();
    await expect(
      (async () => {
        for await (const _ of stream) {
          /* nothing */
        }
      })(),
    ).rejects.toThrow(/read once/);
  });

  it("streams a generated trace of more than 4 GiB from memory: rows and buffers are the generator's", async () => {
    const source = generateTraceChunks({ targetBytes: 4.25 * 2 ** 30, seed: 5, processors: 4, chunkBytes: 16 << 20 });
    const stream = streamTrace(source);
    let rows = 0,
      buffers = 0,
      batches = 0;
    for await (const b of stream) {
      rows += b.events.length;
      buffers += b.bufferCount;
      batches++;
    }
    const made = source.summary!;
    expect(made.bytes).toBeGreaterThan(2 ** 32);
    expect({ rows, buffers }).toEqual({ rows: made.records, buffers: made.buffers });
    const end = stream.end!;
    expect({
      rows: end.eventCount,
      buffers: end.bufferCount,
      input: end.inputBytes,
      decoded: end.decodedBytes,
      complete: end.complete,
      batches: end.batchCount,
    }).toEqual({ rows: made.records, buffers: made.buffers, input: made.bytes, decoded: made.bytes, complete: true, batches });
    expect(end.info.buffersWritten).toBe(made.buffers);
    // the last buffer lies beyond 4 GiB in the file
    expect(batches).toBeGreaterThan(60);
  }, 600_000);

  it("openTrace gathers a trace of more than 2 GiB of record bytes: offsets past 2^31 read back, the last payloads and typed rows too", async () => {
    const source = generateTraceChunks({ targetBytes: 2.2 * 2 ** 30, seed: 6, processors: 4, chunkBytes: 16 << 20 });
    const t = await openTrace(source);
    const made = source.summary!;
    expect({ rows: t.events.length, buffers: t.bufferCount, complete: t.complete }).toEqual({ rows: made.records, buffers: made.buffers, complete: true });
    expect(t.bytes.length).toBeGreaterThan(2 ** 31);
    // the last rows' payloads lie past 2^31 in the store: their typed-table values are what the payloads say
    const last = t.events.length - 1;
    expect(t.events.payloadOffset[last]).toBeGreaterThan(2 ** 31);
    const gc = t.table("Microsoft-Windows-DotNETRuntime/GC/Start")!;
    const k = gc.length - 1;
    const row = t.events.row(gc.rows[k]);
    expect(row.payloadOffset).toBeGreaterThan(2 ** 31);
    expect(row.fields.Count).toBe(gc.get("Count", k));
    expect(new DataView(row.payload.buffer, row.payload.byteOffset).getUint32(0, true)).toBe(gc.get("Count", k));
    t.dispose();
  }, 600_000);
});

/** Rows given out after a row with a later timestamp (what inTimeOrder counts as late). */
function lateRows(order: number[], ts: BigInt64Array): number {
  let late = 0,
    max = -1n;
  for (const r of order) {
    if (ts[r] < max) late++;
    else max = ts[r];
  }
  return late;
}

describe("time order across batches", () => {
  /** The rows of inTimeOrder as indices in the whole trace. */
  async function ordered(bytes: Uint8Array, options: TimeOrderOptions, stats?: TimeOrderStats): Promise<number[]> {
    const out: number[] = [];
    for await (const run of inTimeOrder(streamTrace(bytes, { batchBytes: 64 << 10 }), options, stats)) {
      for (const r of run.rows) out.push(run.firstRow + r);
    }
    return out;
  }

  it("merges the batches of every corpus file and synthetic trace into the whole trace's time order", async () => {
    for (const [name, read] of inputs()) {
      const bytes = read();
      const whole = await openTrace(bytes);
      const stats: TimeOrderStats = { late: 0, maxHeld: 0 };
      const got = await ordered(bytes, {}, stats);
      expect(got.length, name).toBe(whole.events.length);
      const want = whole.events.timeOrder();
      const at = got.findIndex((r, i) => r !== want[i]);
      expect(at, `${name}: first difference`).toBe(-1);
      expect(stats.late, name).toBe(0);
      // a selection: the whole order with the others left out
      const lastPid = whole.events.pid[whole.events.length - 1];
      const pick = (t: Trace) => t.query({ pid: lastPid }).indices;
      const kept = new Set(whole.query({ pid: lastPid }).indices);
      expect(await ordered(bytes, { select: pick }), `${name} selected`).toEqual(Array.from(want).filter((r) => kept.has(r)));
      whole.dispose();
    }
  }, 300_000);

  it('keep "rows": runs from the live batch, the rows held past it copied alone, with the same order, columns, records, stacks and typed values', async () => {
    // (the generated trace has .NET runtime events with typed tables, CPU samples and stacks)
    const list: [string, () => Uint8Array][] = [
      ...inputs(),
      ["generated with samples", () => generateTrace({ targetBytes: 3 << 20, seed: 5, samples: true, processors: 4 })],
    ];
    let copied = 0,
      live = 0,
      typedChecked = 0;
    for (const [name, read] of list) {
      const bytes = read();
      const whole = await openTrace(bytes);
      const want = whole.events.timeOrder();
      // each row's typed entry in the whole trace: its table and index
      const entryOf = new Map<number, [ClrTable, number]>();
      for (const table of whole.tables) for (let j = 0; j < table.length; j++) entryOf.set(table.rows[j], [table, j]);
      const runtime = (t: Trace) => t.query({ provider: "Microsoft-Windows-DotNETRuntime" }).indices;
      for (const select of name.startsWith("generated") ? [undefined, runtime] : [runtime]) {
        const stats: TimeOrderStats = { late: 0, maxHeld: 0 };
        const got: number[] = [];
        for await (const run of inTimeOrder(streamTrace(bytes, { batchBytes: 64 << 10 }), { select, keep: "rows" }, stats)) {
          const e = run.trace.events;
          const own = new Map<number, [ClrTable, number]>();
          for (const table of run.trace.tables) for (let j = 0; j < table.length; j++) own.set(table.rows[j], [table, j]);
          for (let i = 0; i < run.rows.length; i++) {
            const r = run.rows[i];
            const n = run.rowNumbers ? run.rowNumbers[i] : run.firstRow + r;
            got.push(n);
            if (run.rowNumbers) copied++;
            else live++;
            // (every 3rd row of a copy, every 17th of a live batch)
            if (n % (run.rowNumbers ? 3 : 17)) continue;
            const a = e.row(r),
              b = whole.events.row(n);
            for (const c of COLUMNS) expect(e[c][r], `${name} row ${n} ${c}`).toBe(whole.events[c][n]);
            expect(Buffer.from(a.record).equals(Buffer.from(b.record)), `${name} row ${n} record`).toBe(true);
            expect(a.stack, `${name} row ${n} stack`).toEqual(b.stack);
            const theirs = entryOf.get(n);
            const mine = own.get(r);
            expect(mine?.[0].name, `${name} row ${n} typed table`).toBe(theirs?.[0].name);
            if (mine && theirs) {
              typedChecked++;
              for (const f of mine[0].fieldNames) expect(mine[0].get(f, mine[1]), `${name} row ${n} ${f}`).toEqual(theirs[0].get(f, theirs[1]));
            }
          }
        }
        const wanted = select ? new Set(select(whole)) : undefined;
        expect(got, `${name}: order`).toEqual(Array.from(want).filter((r) => !wanted || wanted.has(r)));
        expect(stats.late, name).toBe(0);
      }
      whole.dispose();
    }
    // (both ways of giving rows out were taken, and typed values compared)
    expect(copied).toBeGreaterThan(0);
    expect(live).toBeGreaterThan(0);
    expect(typedChecked).toBeGreaterThan(1000);
  }, 600_000);

  it("a logfile header that counts more processors than write: held to the end within holdBytes (exact), past it the silent ones taken as idle", async () => {
    const bytes = syntheticTrace(22, { records: 6000 });
    const whole = await openTrace(bytes);
    // NumberOfProcessors is the 4th u32 of the logfile header's payload (the first record, after the buffer header)
    const at = 0x48 + whole.events.headerLength[0] + 12;
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    expect(view.getUint32(at, true)).toBe(whole.info.numberOfProcessors);
    view.setUint32(at, 64, true);
    const exact: TimeOrderStats = { late: 0, maxHeld: 0 };
    expect(await ordered(bytes, {}, exact)).toEqual(Array.from(whole.events.timeOrder()));
    expect(exact.late).toBe(0);
    const batches = [];
    for await (const b of streamTrace(bytes, { batchBytes: 64 << 10 })) batches.push(b.index);
    expect(exact.maxHeld).toBe(batches.length);
    // past holdBytes: fewer batches held, every row once, rows given out after later ones counted as late
    const stats: TimeOrderStats = { late: 0, maxHeld: 0 };
    const got = await ordered(bytes, { holdBytes: 256 << 10 }, stats);
    expect(got.slice().sort((x, y) => x - y)).toEqual(Array.from({ length: whole.events.length }, (_, i) => i));
    expect(stats.maxHeld).toBeLessThan(batches.length);
    expect(stats.late).toBe(lateRows(got, whole.events.timestamp));
    whole.dispose();
  });

  it("holds no more than holdBytes: the oldest batch goes out whole and rows that then come early are counted late", async () => {
    const bytes = syntheticTrace(21, { records: 6000 });
    const whole = await openTrace(bytes);
    const stats: TimeOrderStats = { late: 0, maxHeld: 0 };
    const got = await ordered(bytes, { holdBytes: 1 }, stats);
    expect(got.slice().sort((a, b) => a - b)).toEqual(Array.from({ length: whole.events.length }, (_, i) => i));
    expect(stats.maxHeld).toBeLessThanOrEqual(2);
    expect(stats.late).toBe(lateRows(got, whole.events.timestamp));
    whole.dispose();
  });
});

describe("parallel decoding equals one thread's", () => {
  it("bytes held whole: windows sent back without their records (file offsets) after windows with decompressed ones", async () => {
    // compressed buffers first (their records come back in arena blocks, so the trace keeps a store of
    // its own), then plain ones (sent without records: read from the bytes given)
    const w = new EtlWriter({ compress: true, bufferSize: 4096, numberOfProcessors: 2, anchor: 5000n });
    let ts = 5000n;
    for (let i = 0; i < 20_000; i++) {
      if (i === 3000) (w as { compress: boolean }).compress = false;
      const payload = new Uint8Array(8 + (i % 40)).map((_, k) => (i * 7 + k) & 255);
      w.event(i & 1, {
        headerType: 0x13,
        provider: "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4",
        id: 1 + (i % 5),
        version: 0,
        level: 4,
        opcode: 0,
        task: 0,
        keywords: 0n,
        pid: 10,
        tid: 20 + (i & 3),
        ts: (ts += 7n),
        payload,
      });
    }
    const bytes = w.finish();
    const whole = await openTrace(bytes);
    expect(whole.complete).toBe(true);
    expect(whole.events.length).toBe(20_001);
    for (const workers of [1, 2]) {
      const gathered = await openTrace(bytes, { workers, batchBytes: 64 << 10 });
      expect(traceDifferences(whole, gathered), `workers ${workers}`).toEqual([]);
      let differ = 0;
      for (let i = 0; i < whole.events.length; i++) {
        const a = whole.events.row(i).payload,
          b = gathered.events.row(i).payload;
        if (a.length !== b.length || a.some((x, k) => x !== b[k])) differ++;
      }
      expect(differ, `workers ${workers}: rows whose payload differs`).toBe(0);
    }
  });

  it("an event's other version, keywords or level first met in a later segment is a type of its own there too", async () => {
    // The first 3,000 records: version 0, keywords 1, level 4 only; then the same ids with version 1,
    // keywords 2 or level 5 as well. A worker's core is given the types seen before its segment, and what
    // it meets first is mapped onto the trace's types by their whole key (typeKeyOf): a key without the
    // keywords and level (the first 8 bytes of the struct, as it was) merges those types into the first.
    const w = new EtlWriter({ bufferSize: 4096, numberOfProcessors: 2, anchor: 5000n });
    let ts = 5000n;
    const keys = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const late = i >= 3000;
      const payload = new Uint8Array(8 + (i % 24)).map((_, k) => (i * 5 + k) & 255);
      const version = late && i % 3 === 0 ? 1 : 0,
        keywords = late && i % 5 === 0 ? 2n : 1n,
        level = late && i % 7 === 0 ? 5 : 4;
      w.event(i & 1, {
        headerType: 0x13,
        provider: "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4",
        id: 1 + (i % 3),
        version,
        level,
        opcode: 0,
        task: 0,
        keywords,
        pid: 10,
        tid: 20,
        ts: (ts += 7n),
        payload,
      });
      keys.add(`${i % 3}/${version}/${keywords}/${level}`);
    }
    const bytes = w.finish();
    const whole = await openTrace(bytes);
    expect(whole.complete).toBe(true);
    // a type per distinct id, version, keywords and level written, and the logfile header's
    expect(whole.eventTypes.length).toBe(keys.size + 1);
    const gathered = await openTrace(bytes, { workers: 2, batchBytes: 64 << 10 });
    expect(traceDifferences(whole, gathered)).toEqual([]);
    for (let i = 1; i < whole.events.length; i += 97) {
      const r = gathered.events.row(i);
      expect([r.version, r.keywords, r.level], `row ${i}`).toEqual([whole.events.row(i).version, whole.events.row(i).keywords, whole.events.row(i).level]);
    }
  });

  it("a core continuing the trace, given the providers and event types seen before, numbers them as the trace does (both engines)", async () => {
    const bytes = syntheticTrace(34, { records: 30_000 });
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const cuts: number[] = [];
    for (let o = 0; o + 4 <= bytes.length && v.getUint32(o, true) > 0; o += v.getUint32(o, true)) cuts.push(o);
    const k = Math.floor(cuts.length / 2),
      cut = cuts[k];
    for (const engine of ENGINES) {
      const whole = await openTrace(bytes, { engine });
      // the first half on one core: its tables, and what a continuing core must know of buffer 0
      const first = decodeWindows(bytes.subarray(0, cut), { engine, batchBytes: 1 << 30 });
      let step = await first.next();
      let rows = 0,
        providers = new Uint8Array(0),
        types = new Uint8Array(0);
      for (; !step.done; step = await first.next()) {
        const d = step.value.data,
          m = metaOf(d);
        rows += d.eventCount;
        providers = m.slice(d.providersOffset, d.providersOffset + d.providerCount * PROV_STRIDE);
        types = m.slice(d.typesOffset, d.typesOffset + d.typeCount * TYPE_STRIDE);
      }
      const context = step.value.context!;
      step.value.release?.();
      for (const seeded of [true, false]) {
        const rest = decodeWindows(
          bytes.subarray(cut),
          { engine, batchBytes: 1 << 30 },
          {
            ...context,
            bufferCount: k,
            fileOffset: cut,
            ...(seeded ? { providers, types } : {}),
          },
        );
        const got: number[][] = [[], []];
        let s2 = await rest.next();
        for (; !s2.done; s2 = await rest.next()) {
          const e = s2.value.data.events;
          got[0].push(...e.provider.subarray(0, s2.value.data.eventCount));
          got[1].push(...e.eventType.subarray(0, s2.value.data.eventCount));
        }
        s2.value.release?.();
        const want = [Array.from(whole.events.columns.provider.subarray(rows)), Array.from(whole.events.columns.eventType.subarray(rows))];
        expect(got[0].length, engine).toBe(whole.events.length - rows);
        // (unseeded, the core numbers in its own order of first sight: the columns differ, which is what seeding spares)
        if (seeded) expect(got, `${engine} seeded`).toEqual(want);
        else expect(got, `${engine} unseeded`).not.toEqual(want);
      }
      whole.dispose();
    }
  });

  it("a file is cut by ranges that the workers read themselves (this thread reads four bytes a buffer), damaged or not, both engines", async () => {
    const dir = mkdtempSync(join(tmpdir(), "etw-wasm-ranges-"));
    try {
      // buffer boundaries, from the sizes in the buffers' headers
      const boundaries = (b: Uint8Array) => {
        const at: number[] = [];
        const v = new DataView(b.buffer, b.byteOffset, b.length);
        for (let o = 0; o + 4 <= b.length && v.getUint32(o, true) > 0; o += v.getUint32(o, true)) at.push(o);
        return at;
      };
      const plain = syntheticTrace(31, { records: 16_000 });
      const cuts = boundaries(plain);
      const middle = cuts[Math.floor(cuts.length / 2)];
      const sizeBroken = plain.slice();
      new DataView(sizeBroken.buffer).setUint32(middle, 3, true);
      const cases: [string, Uint8Array][] = [
        ["plain", plain],
        ["xpress", syntheticTrace(32, { compress: true, records: 16_000 })],
        ["a size that is not a buffer's in the middle", sizeBroken],
        ["the last buffer cut short", plain.subarray(0, cuts[cuts.length - 1] + 1000)],
        ["trailing bytes", Uint8Array.from([...plain, 1, 2, 3, 4, 5, 6, 7])],
      ];
      expect(cuts.length).toBeGreaterThan(100);
      for (const [what, bytes] of cases) {
        const path = join(dir, "t.etl");
        writeFileSync(path, bytes);
        // the file as a ByteSource that counts what this thread reads of it
        let readHere = 0;
        const handle = openSync(path, "r");
        const source = {
          byteLength: bytes.length,
          shared: { path },
          read: async (into: Uint8Array, position: number) => (
            (readHere += readSync(handle, into, 0, into.length, position)), Math.max(0, Math.min(into.length, bytes.length - position))
          ),
          readSync: (into: Uint8Array, position: number) => {
            const n = readSync(handle, into, 0, into.length, position);
            readHere += n;
            return n;
          },
        };
        try {
          for (const engine of ENGINES) {
            const whole = await openTrace(bytes, { engine });
            for (const workers of [1, 2]) {
              const label = `${what} ${engine} workers ${workers}`;
              readHere = 0;
              const gathered = await openTrace(source, { engine, workers, batchBytes: 64 << 10 });
              expect(traceDifferences(whole, gathered), label).toEqual([]);
              expect({ complete: gathered.complete, warnings: show(gathered.warnings), total: gathered.warningTotal }, label).toEqual({
                complete: whole.complete,
                warnings: show(whole.warnings),
                total: whole.warningTotal,
              });
              gathered.dispose();
              // (an undamaged file is read here only for buffer 0 and four bytes a buffer)
              if (what === "plain") expect(readHere, label).toBeLessThan(bytes.length / 10);
              const stream = await streamTraceFile(path, { engine, workers, batchBytes: 64 << 10 });
              const problems: string[] = [];
              let rows = 0;
              for await (const b of stream) {
                problems.push(...batchDifferences(b, whole));
                rows += b.events.length;
              }
              expect(problems, label).toEqual([]);
              expect([rows, stream.end!.complete, stream.end!.warningTotal], label).toEqual([whole.events.length, whole.complete, whole.warningTotal]);
            }
            whole.dispose();
          }
        } finally {
          closeSync(handle);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  for (const [name, load] of inputs()) {
    const needsCorpus = !name.startsWith("synthetic");
    it.skipIf(needsCorpus && !HAVE_CORPUS)(
      `${name}: openTrace and streamTrace with 1 and 2 workers, both engines`,
      async () => {
        const bytes = load();
        for (const engine of ENGINES) {
          const whole = await openTrace(bytes, { engine });
          for (const workers of [1, 2]) {
            const what = `${name} ${engine} workers ${workers}`;
            const batchBytes = 64 << 10;
            const gathered = await openTrace(bytes, { engine, workers, batchBytes, chunkBytes: CHUNK });
            expect(traceDifferences(whole, gathered), what).toEqual([]);
            expect(show(gathered.info), what).toBe(show(whole.info));
            expect(
              { complete: gathered.complete, incomplete: gathered.incomplete, warnings: show(gathered.warnings), total: gathered.warningTotal },
              what,
            ).toEqual({ complete: whole.complete, incomplete: whole.incomplete, warnings: show(whole.warnings), total: whole.warningTotal });
            gathered.dispose();

            const stream = streamTrace(bytes, { engine, workers, batchBytes });
            let rows = 0,
              buffers = 0,
              batches = 0;
            const problems: string[] = [];
            const warnings: unknown[] = [];
            for await (const b of stream) {
              expect([b.index, b.firstRow, b.firstBuffer], what).toEqual([batches++, rows, buffers]);
              // the logfile header's fields (the clock's above all) are the trace's in every batch
              if (b.index === 0 || b.index % 7 === 3) expect(show(headerFields(b)), what).toBe(show(headerFields(whole)));
              problems.push(...batchDifferences(b, whole));
              rows += b.events.length;
              buffers += b.bufferCount;
              warnings.push(...b.warnings);
            }
            expect(problems, what).toEqual([]);
            expect(show(warnings), what).toBe(show(whole.warnings.slice(0, warnings.length)));
            const end = stream.end!;
            expect(
              {
                count: end.eventCount,
                buffers: end.bufferCount,
                complete: end.complete,
                incomplete: end.incomplete,
                decoded: end.decodedBytes,
                warnings: show(end.warnings),
                total: end.warningTotal,
                types: typeList(end.eventTypes),
                providers: show([...end.providers].map((p) => [p.guid, p.name, p.group])),
              },
              what,
            ).toEqual({
              count: whole.events.length,
              buffers: whole.bufferCount,
              complete: whole.complete,
              incomplete: whole.incomplete,
              decoded: whole.decodedBytes,
              warnings: show(whole.warnings),
              total: whole.warningTotal,
              types: typeList(whole.eventTypes),
              providers: show([...whole.providers].map((p) => [p.guid, p.name, p.group])),
            });
          }
          whole.dispose();
        }
      },
      300_000,
    );
  }
});
