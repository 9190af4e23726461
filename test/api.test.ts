// The public API on real traces: info, clock, providers, rows, iteration, time order, queries.

import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openTrace, streamTrace, EtlDecodeError, RecordsNotLoadedError, type Trace } from "../dist/bindings/index.js";
import { openTraceFile } from "../dist/bindings/node.js";
import { decodeTrace } from "../dist/bindings/decode/decode.js";
import { packTraceData, unpackTraceData } from "../dist/bindings/decode/parallel/transfer.js";
import { Trace as TraceClass } from "../dist/bindings/trace.js";
import { HAVE_CORPUS, corpusFiles, etlPath } from "./helpers/shared.js";
import { withLargeBuffer } from "./helpers/large-buffer.js";
import { traceDifferences, show, syntheticTrace } from "./helpers/engines.js";

const SAMPLE = fileURLToPath(new URL("../examples/sample.etl", import.meta.url));
const ENGINES = ["wasm", "js"] as const;

const open = (name: string) => openTrace(readFileSync(etlPath(name)));

describe.skipIf(!HAVE_CORPUS)("public API on corpus traces", () => {
  it("converts raw timestamps as the format spec's worked example does (AMSITrace)", async () => {
    const t = await open("etl-parser-AMSITrace.etl");
    expect(t.info.headerTimestamp).toBe(2745263251517n);
    expect(t.info.startFiletime).toBe(132264173104203138n);
    expect(t.info.startTime.toISOString()).toBe("2020-02-17T12:48:30.420Z");
    expect(t.info.clockName).toBe("QPC");
    const first = t.events.row(t.buffer(1).firstRow);
    expect(first.timestamp).toBe(2745536567203n);
    expect(first.filetime).toBe(132264173377518824n);
    expect(first.time.toISOString()).toBe("2020-02-17T12:48:57.751Z");
    expect(first.relativeMSec).toBeCloseTo(27331.5686, 4);
    expect(t.events.row(0).relativeMSec).toBe(0);
    expect(t.info.eventsLost).toBe(3);
    expect(t.info.timeZone?.bias).toBe(-60);
  });

  it("reads the 32-bit logfile header and the rundown event of smallEtlFile", async () => {
    const t = await open("smallEtlFile.etl");
    expect(t.info.headerPointerSize).toBe(4);
    expect(t.info.pointerSize).toBe(4);
    expect(t.info.loggerName).toBe("PerfWatsonGCHeapETLSession688");
    expect(t.info.compressedBuffers).toBe(1);
    const r = t.events.row(1);
    expect(r.providerName).toBe("Microsoft-Windows-DotNETRuntimeRundown");
    expect(r.headerTypeName).toBe("EVENT_HEADER32");
    expect(r.pointerSize).toBe(4);
    expect(r.eventId).toBe(154);
    // ModuleILPath (UTF-16) is in the payload, which stays addressable after decompression.
    const text = Buffer.from(r.payload).toString("utf16le");
    expect(text).toContain("Microsoft.VisualStudio.Services.Client.dll");
  });

  it("names providers: CLR, kernel groups, TraceLogging provider traits", async () => {
    const t = await open("net.4.5.2.x64.etl");
    const names = new Map([...t.providers].map((p) => [p.guid, p]));
    expect(names.get("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4")?.name).toBe("Microsoft-Windows-DotNETRuntime");
    expect(names.get("ce1dbfb4-137e-4da6-87b0-3f59aa102cbc")).toMatchObject({ name: "Windows Kernel", group: "PerfInfo", kind: "kernel-group" });
    const hw = await open("hw3d-trace.etl");
    expect([...hw.providers].map((p) => p.name)).toContain("Atum-Hw3d");
    expect(t.providers.find("Microsoft-Windows-DotNETRuntime")).toEqual([names.get("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4")!.index]);
    expect(t.providers.find("{E13C0D23-CCBC-4E12-931B-D9CC2EEE27E4}")).toHaveLength(1);
  });

  it("orders rows by time across processors", async () => {
    const t = await open("net.4.5.x86.etl");
    const order = t.events.timeOrder();
    expect(order.length).toBe(t.events.length);
    const seen = new Uint8Array(order.length);
    for (const i of order) seen[i]++;
    expect(seen.every((x) => x === 1)).toBe(true);
    const ts = t.events.timestamp;
    let inversions = 0;
    for (let k = 1; k < order.length; k++) if (ts[order[k - 1]] > ts[order[k]]) inversions++;
    expect(inversions).toBe(0);
    // file order is not time order in this trace (buffers of 8 processors interleave)
    let fileInversions = 0;
    for (let i = 1; i < ts.length; i++) if (ts[i - 1] > ts[i]) fileInversions++;
    expect(fileInversions).toBeGreaterThan(0);
    let n = 0,
      prev = -1n;
    for (const row of t.events.byTime()) {
      expect(row.timestamp >= prev).toBe(true);
      prev = row.timestamp;
      n++;
    }
    expect(n).toBe(t.events.length);
  });

  it("finds each event type's first row, asked in any order (the scan resumes where it stopped)", async () => {
    for (const name of ["net.4.5.2.x64.etl", "tx-WsRm01.etl"]) {
      const t = await open(name);
      const types = t.eventTypes;
      // the oracle: the first row of each type, from one scan of the rows
      const first = new Map<number, number>();
      for (let r = 0; r < t.events.length; r++) {
        const k = t.events.columns.eventType[r];
        if (!first.has(k)) first.set(k, r);
      }
      // the types in the order they first appear, asked from the last down to the first, then up again
      const inOrder = [...first.keys()].filter((k) => k < types.length);
      expect(inOrder.length, name).toBeGreaterThan(3);
      const downUp = [...inOrder.slice().reverse(), ...inOrder];
      for (const k of downUp) expect(types.firstRow(k), `${name} type ${k}`).toBe(first.get(k));
      // a fresh table: a type no row has, then one that comes late in the rows, then the first one
      const fresh = (await open(name)).eventTypes;
      const absent = [...Array(fresh.length).keys()].find((k) => !first.has(k));
      if (absent !== undefined) expect(fresh.firstRow(absent)).toBe(0xffffffff);
      const late = inOrder[inOrder.length - 1];
      expect(fresh.firstRow(late)).toBe(first.get(late));
      expect(fresh.firstRow(inOrder[0])).toBe(first.get(inOrder[0]));
    }
    // a stream's batches hold the types of the windows before them: one a batch has no row of is not found
    let absentChecked = 0;
    for await (const b of streamTrace(readFileSync(etlPath("net.4.5.2.x64.etl")), { batchBytes: 64 << 10 })) {
      const present = new Set(b.events.columns.eventType);
      for (let k = b.eventTypes.length - 1; k >= 0; k--) {
        const want = b.events.columns.eventType.indexOf(k);
        expect(b.eventTypes.firstRow(k)).toBe(want < 0 ? 0xffffffff : want);
        if (!present.has(k)) absentChecked++;
      }
    }
    expect(absentChecked).toBeGreaterThan(0);
  });

  it("queries match a brute-force filter", async () => {
    const t = await open("net.4.5.2.x64.etl");
    const clr = t.providers.find("Microsoft-Windows-DotNETRuntime")[0];
    const brute = (pred: (i: number) => boolean) => {
      const out: number[] = [];
      for (let i = 0; i < t.events.length; i++) if (pred(i)) out.push(i);
      return out;
    };
    const e = t.events;
    expect([...t.query({ provider: "Microsoft-Windows-DotNETRuntime" }).indices]).toEqual(brute((i) => e.provider[i] === clr));
    expect([...t.query({ provider: clr, eventId: [1, 2] }).indices]).toEqual(brute((i) => e.provider[i] === clr && (e.eventId[i] === 1 || e.eventId[i] === 2)));
    const pid = e.pid[1000];
    expect([...t.query({ pid, opcode: e.opcode[1000] }).indices]).toEqual(brute((i) => e.pid[i] === pid && e.opcode[i] === e.opcode[1000]));
    // records without a process id (PERFINFO samples here) match no pid, not even the 0xFFFFFFFF their column holds
    const noPid = brute((i) => e.row(i).pid === null);
    expect(noPid.length).toBeGreaterThan(0);
    expect(t.query({ pid: 0xffffffff }).length).toBe(0);
    expect(t.query({ tid: e.tid[noPid[0]] }).indices).not.toContain(noPid[0]);
    expect([...t.query({ level: 3 }).indices]).toEqual(brute((i) => e.level[i] <= 3));
    expect([...t.query({ keywords: 0x8000n }).indices]).toEqual(brute((i) => (e.keywords[i] & 0x8000n) !== 0n));
    const from = 2000,
      to = 3000;
    const inRange = t.query({ from, to });
    expect(inRange.length).toBeGreaterThan(0);
    expect([...inRange.indices]).toEqual(
      brute((i) => {
        const ms = t.relativeMSec(e.timestamp[i]);
        return ms >= from && ms <= to;
      }),
    );
    const byTime = t.query({ provider: clr, order: "time" });
    let last = -1n,
      count = 0;
    for (const row of byTime) {
      expect(row.providerIndex).toBe(clr);
      expect(row.timestamp >= last).toBe(true);
      last = row.timestamp;
      count++;
    }
    expect(count).toBe(byTime.length);
    expect(t.query({ provider: "no such provider" }).length).toBe(0);
  });

  it("event types: every row's identity is its type's, and names by type equal names by row", async () => {
    for (const file of ["net.4.5.2.x64.etl", "primitive-types.etl", "SelfDescribingSingleEvent.etl", "hw3d-trace.etl"]) {
      const t = await open(file);
      const e = t.events,
        ty = t.eventTypes;
      const count = new Uint32Array(ty.length);
      for (let i = 0; i < e.length; i++) {
        const k = e.eventType[i];
        count[k]++;
        if (
          ty.provider[k] !== e.provider[i] ||
          ty.eventId[k] !== e.eventId[i] ||
          ty.version[k] !== e.version[i] ||
          ty.opcode[k] !== e.opcode[i] ||
          ty.headerType[k] !== e.headerType[i]
        )
          throw new Error(`${file}: row ${i} is not of its type ${k}`);
      }
      expect([...count], file).toEqual([...ty.count]);
      // the same counts named row by row
      const byRow = new Map<string, number>();
      for (let i = 0; i < e.length; i++) {
        const n = e.row(i).name;
        byRow.set(n, (byRow.get(n) ?? 0) + 1);
      }
      expect(new Map(t.names.counts()), file).toEqual(byRow);
      for (let i = 0; i < e.length; i += 97) expect(t.names.ofRow(i)).toBe(e.row(i).name);
      t.dispose();
    }
  });

  it("rows are lazy views; iteration moves one cursor", async () => {
    const t = await open("gcevents.etl");
    const seen = new Set();
    let k = 0;
    for (const row of t.events) {
      seen.add(row);
      expect(row.index).toBe(k++);
    }
    expect(seen.size).toBe(1);
    const r = t.events.row(5);
    expect(r.clone().index).toBe(5);
    expect(() => t.events.row(t.events.length)).toThrow(RangeError);
    const json = r.toJSON();
    expect(json.provider).toBe(r.providerGuid);
    expect(json.timestamp).toBe(r.timestamp.toString());
  });

  it("column views stay valid after everything else the API does", async () => {
    const t = await open("net.4.5.2.x64.etl");
    const ts = t.events.timestamp;
    const first = ts[0];
    const other = await open("net.4.5.x86.etl"); // another trace: its own memory
    t.events.timeOrder();
    t.query({ provider: "Windows Kernel", order: "time" });
    for (let i = 0; i < t.events.length; i += 1000) void t.events.row(i).activityId;
    expect(ts.length).toBe(t.events.length);
    expect(ts[0]).toBe(first);
    expect(ts.buffer.byteLength).toBeGreaterThan(0);
    expect(other.events.length).toBe(185961);
  });

  it("reads a file in streamed chunks with the node entry point", async () => {
    const a = await openTraceFile(etlPath("net.4.5.x86.etl"), { chunkBytes: 1 << 20 });
    const b = await open("net.4.5.x86.etl");
    expect(a.events.length).toBe(b.events.length);
    expect(
      Buffer.compare(
        Buffer.from(a.events.timestamp.buffer, a.events.timestamp.byteOffset, a.events.timestamp.byteLength),
        Buffer.from(b.events.timestamp.buffer, b.events.timestamp.byteOffset, b.events.timestamp.byteLength),
      ),
    ).toBe(0);
  });

  it("gives activity ids, related activity ids and stacks from the record bytes", async () => {
    const t = await open("net.4.5.2.x64.etl");
    let stacks = 0,
      related = 0,
      activities = 0;
    for (const row of t.events) {
      const types = row.extTypes;
      if (types.includes(6)) {
        const s = row.stack!;
        expect(s.length).toBeGreaterThan(0);
        stacks++;
      }
      if (types.includes(1)) {
        expect(row.relatedActivityId).toMatch(/^[0-9a-f-]{36}$/);
        related++;
      }
      const a = row.activityId;
      if (a && a !== "00000000-0000-0000-0000-000000000000") activities++;
    }
    expect(stacks).toBeGreaterThan(0);
    expect(related).toBeGreaterThan(0);
    expect(activities).toBeGreaterThan(0);
  });

  it("dispose drops the tables", async () => {
    const t: Trace = await open("gcevents.etl");
    t.dispose();
    expect(() => t.bytes).toThrow(/disposed/);
  });
});

describe.skipIf(!HAVE_CORPUS)("process side tables", () => {
  it("name the processes of kernel Process events and map threads to processes", async () => {
    const t = await open("net.4.5.2.x64.etl");
    const perfview = t.processes.processes.filter((p) => p.name === "PerfView");
    expect(perfview.length).toBeGreaterThan(0);
    expect(perfview[0].commandLine).toMatch(/PerfView/i);
    // every CLR event of PerfView's process names it, as the baseline's PName does
    const clr = t.query({ provider: "Microsoft-Windows-DotNETRuntime", pid: perfview[0].pid });
    expect(clr.length).toBeGreaterThan(0);
    for (const row of clr) {
      expect(t.processName(row.index)).toBe("PerfView");
      const owner = t.processes.threadProcess(row.tid!, row.timestamp);
      if (owner !== undefined) expect(owner).toBe(perfview[0].pid);
    }
    // a pid no Process event describes
    expect(t.processes.processName(999999, 0n)).toBe("Process(999999)");
  });
});

/** Rows of `t` are the first rows of `full`: every column, and the payload bytes. */
function expectPrefix(t: Trace, full: Trace, what: string): void {
  expect(t.events.length, what).toBeLessThanOrEqual(full.events.length);
  const a = t.events.columns,
    b = full.events.columns;
  for (const name of Object.keys(a) as (keyof typeof a)[]) {
    if (name === "payloadOffset" || name === "provider" || name === "eventType") continue; // addresses and indices of each trace's own tables
    const x = a[name] as ArrayLike<unknown>,
      y = b[name] as ArrayLike<unknown>;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) expect({ what, name, row: i, value: x[i] }).toEqual({ what, name, row: i, value: y[i] });
  }
  for (let i = 0; i < t.events.length; i++) {
    if (Buffer.compare(t.events.row(i).payload, full.events.row(i).payload) !== 0 || t.events.row(i).providerGuid !== full.events.row(i).providerGuid) {
      expect({ what, row: i }).toEqual({ what, row: i, same: true });
    }
  }
}

describe("byte sources", () => {
  it("a ByteSource decodes as its bytes do, on one thread and with workers, and is closed once when done", async () => {
    const bytes = new Uint8Array(readFileSync(SAMPLE));
    const whole = await openTrace(bytes);
    for (const options of [{}, { workers: 2, batchBytes: 64 << 10 }, { chunkBytes: 100_003 }]) {
      let closed = 0,
        reads = 0;
      const source = {
        byteLength: bytes.length,
        async read(into: Uint8Array, position: number) {
          reads++;
          const n = Math.max(0, Math.min(into.length, bytes.length - position));
          into.set(bytes.subarray(position, position + n));
          return n;
        },
        async close() {
          closed++;
        },
      };
      const t = await openTrace(source, options);
      expect(traceDifferences(whole, t), JSON.stringify(options)).toEqual([]);
      expect(t.complete).toBe(true);
      expect([closed, reads > 0], JSON.stringify(options)).toEqual([1, true]);
      t.dispose();
    }
    whole.dispose();
  });
});

describe("payloads: drop", () => {
  it("keeps every column but the payload offsets, the buffers, warnings and typed tables' numbers; no record bytes", async () => {
    const inputs: [string, Uint8Array][] = [["sample", new Uint8Array(readFileSync(SAMPLE))]];
    if (HAVE_CORPUS) inputs.push(["net.4.5.2.x64.etl", new Uint8Array(readFileSync(etlPath("net.4.5.2.x64.etl")))]);
    for (const [name, bytes] of inputs) {
      const kept = await openTrace(bytes);
      for (const options of [{ payloads: "drop" as const }, { payloads: "drop" as const, batchBytes: 64 << 10 }]) {
        const what = `${name} ${JSON.stringify(options)}`;
        const t = await openTrace(bytes, options);
        const a = kept.events.columns as unknown as Record<string, ArrayLike<unknown>>;
        const b = t.events.columns as unknown as Record<string, ArrayLike<unknown>>;
        for (const k of Object.keys(a)) {
          if (k === "payloadOffset") continue;
          expect(Array.from(b[k]), `${what} ${k}`).toEqual(Array.from(a[k]));
        }
        expect([t.bufferCount, t.warnings, t.complete, t.providers.length, t.eventTypes.length], what).toEqual([
          kept.bufferCount,
          kept.warnings,
          kept.complete,
          kept.providers.length,
          kept.eventTypes.length,
        ]);
        // no record bytes: far less memory, and nothing read from them
        expect(t.bytes.length, what).toBeLessThan(kept.bytes.length / 4);
        expect(t.extendedItems.length, what).toBe(0);
        for (let i = 0; i < t.events.length; i += 37) {
          const row = t.events.row(i);
          expect([row.payload.length, row.record.length, row.decode(), row.activityId], what).toEqual([0, 0, null, null]);
        }
        // typed tables: the same rows and number fields; strings and GUIDs undefined
        expect(
          t.tables.map((x) => [x.name, x.length]),
          what,
        ).toEqual(kept.tables.map((x) => [x.name, x.length]));
        for (const table of t.tables) {
          const k = kept.tables.find((x) => x.schema === table.schema)!;
          expect(Array.from(table.rows), `${what} ${table.name}`).toEqual(Array.from(k.rows));
          for (const f of table.fieldNames) {
            for (let i = 0; i < table.length; i += 11) {
              const v = k.get(f, i);
              const want = typeof v === "number" || typeof v === "bigint" || typeof v === "boolean" ? v : undefined;
              expect(table.get(f, i), `${what} ${table.name}.${f}[${i}]`).toEqual(want);
            }
          }
        }
        t.dispose();
      }
      kept.dispose();
    }
    await expect(openTrace(new Uint8Array(readFileSync(SAMPLE)), { payloads: "some" as "drop" })).rejects.toBeInstanceOf(TypeError);
  });
});

/** What a row reads from its record bytes, for comparing traces (payload, record, items, fields). */
function recordView(t: Trace, i: number): string {
  const row = t.events.row(i);
  return show([row.payload, row.record, row.extendedItems.map((e) => [e.type, e.data]), row.activityId, row.group, row.decode()?.values ?? null]);
}

describe("payloads: source", () => {
  it("reads every row's record back from bytes, a Blob or a file, as the held trace has it; both engines, windows and workers", async () => {
    const inputs: [string, () => Uint8Array, string | undefined][] = [
      ["sample", () => new Uint8Array(readFileSync(SAMPLE)), SAMPLE],
      ["synthetic-xpress", () => syntheticTrace(12, { compress: true }), undefined],
    ];
    for (const f of corpusFiles()) inputs.push([f, () => new Uint8Array(readFileSync(etlPath(f))), etlPath(f)]);
    let k = 0;
    for (const [name, read, path] of inputs) {
      const bytes = read();
      const kept = await openTrace(bytes);
      // (a different way in for each input, in turn)
      const ways: [string, () => Promise<Trace>][] = [
        ["bytes", () => openTrace(bytes, { payloads: "source" })],
        ["blob js 64KiB", () => openTrace(new Blob([bytes as Uint8Array<ArrayBuffer>]), { payloads: "source", engine: "js", batchBytes: 64 << 10 })],
      ];
      if (path) ways.push(["file 2 workers", () => openTraceFile(path, { payloads: "source", workers: 2, batchBytes: 64 << 10 })]);
      const [way, open] = ways[k++ % ways.length];
      const what = `${name} (${way})`;
      const t = await open();
      const ca = kept.events.columns as unknown as Record<string, ArrayLike<unknown>>;
      const cb = t.events.columns as unknown as Record<string, ArrayLike<unknown>>;
      for (const c of Object.keys(ca)) if (c !== "payloadOffset") expect(show(Array.from(cb[c])), `${what} ${c}`).toBe(show(Array.from(ca[c])));
      expect([t.bufferCount, t.extendedItems.length, t.warnings, t.complete], what).toEqual([
        kept.bufferCount,
        kept.extendedItems.length,
        kept.warnings,
        kept.complete,
      ]);
      // nothing loaded yet: a plain error, not a wrong answer
      expect(() => t.events.row(t.events.length - 1).payload, what).toThrow(RecordsNotLoadedError);
      await t.loadRecords({ start: 0, end: t.events.length });
      for (let i = 0; i < t.events.length; i++) {
        const want = recordView(kept, i),
          got = recordView(t, i);
        if (got !== want) expect(`${what} row ${i}: ${got}`).toBe(`${what} row ${i}: ${want}`);
      }
      t.dispose();
      kept.dispose();
    }
  });

  it("loads the rows asked for, in a cache that keeps what was loaded last; streams of chunks are refused", async () => {
    const bytes = syntheticTrace(13, { compress: true, records: 4000 });
    const kept = await openTrace(bytes);
    let reads = 0;
    const source = {
      byteLength: bytes.length,
      async read(into: Uint8Array, position: number) {
        reads++;
        const n = Math.min(into.length, bytes.length - position);
        into.set(bytes.subarray(position, position + n));
        return n;
      },
      closed: 0,
      async close() {
        this.closed++;
      },
    };
    const t = await openTrace(source, { payloads: "source", batchBytes: 64 << 10 });
    expect(source.closed, "the trace holds the source open").toBe(0);
    const picked = [3, t.events.length - 1, Math.floor(t.events.length / 2)];
    const before = reads;
    await t.loadRecords(picked);
    // one read per compressed buffer picked (rows 3 and the middle may share none)
    expect(reads - before).toBeLessThanOrEqual(3);
    expect(reads - before).toBeGreaterThan(0);
    for (const i of picked) expect(recordView(t, i)).toBe(recordView(kept, i));
    const again = reads;
    await t.loadRecords(picked[0]);
    expect(reads, "a loaded buffer is not read again").toBe(again);
    await expect(t.loadRecords(t.events.length)).rejects.toBeInstanceOf(RangeError);
    t.dispose();
    await new Promise((r) => setTimeout(r, 0));
    expect(source.closed, "dispose closes the source").toBe(1);
    kept.dispose();
    await expect(openTrace([bytes], { payloads: "source" })).rejects.toThrow(/read again/);
    const dropped = await openTrace(bytes, { payloads: "drop" });
    await expect(dropped.loadRecords(0)).rejects.toThrow(/dropped/);
    dropped.dispose();
  });
});

describe("complete traces", () => {
  it("the sample is complete in both engines: every input byte decoded", async () => {
    const bytes = readFileSync(SAMPLE);
    for (const engine of ENGINES) {
      const t = await openTrace(bytes, { engine });
      expect({ engine, complete: t.complete, incomplete: t.incomplete, decodeError: t.decodeError }).toEqual({
        engine,
        complete: true,
        incomplete: undefined,
        decodeError: undefined,
      });
      expect([t.inputBytes, t.decodedBytes, t.info.fileSize, t.info.decodedBytes]).toEqual(Array(4).fill(bytes.length));
    }
  });

  it.skipIf(!HAVE_CORPUS)(
    "every corpus file is complete in both engines, whole or streamed",
    async () => {
      for (const name of corpusFiles()) {
        const size = statSync(etlPath(name)).size;
        for (const engine of ENGINES) {
          for (const t of [await open(name), await openTraceFile(etlPath(name), { engine, chunkBytes: 1 << 16 })]) {
            expect({ name, engine, complete: t.complete, incomplete: t.incomplete }).toEqual({ name, engine, complete: true, incomplete: undefined });
            expect({ name, input: t.inputBytes, decoded: t.decodedBytes }).toEqual({ name, input: size, decoded: size });
            t.dispose();
          }
        }
      }
    },
    120_000,
  );

  it("a memory limit the trace fits in changes nothing", async () => {
    const bytes = readFileSync(SAMPLE);
    for (const engine of ENGINES) {
      const full = await openTrace(bytes, { engine });
      const t = await openTrace(bytes, { engine, memoryLimit: 256 << 20 });
      expect(t.complete).toBe(true);
      expect(t.events.length).toBe(full.events.length);
      expectPrefix(t, full, engine);
      expect(t.tables.map((x) => [x.name, x.length])).toEqual(full.tables.map((x) => [x.name, x.length]));
    }
  });
});

describe.skipIf(!HAVE_CORPUS)("incomplete traces: complete is false, incomplete says why and where, the rows before are kept", () => {
  const X64 = "net.4.5.2.x64.etl"; // sequential, XPRESS-compressed
  const X86 = "net.4.5.x86.etl"; // sequential, 64 KiB buffers

  it("input cut inside a buffer: truncated-buffer at that buffer's offset, every input byte decoded", async () => {
    for (const name of [X64, X86, "gcevents.etl"]) {
      const bytes = readFileSync(etlPath(name));
      for (const engine of ENGINES) {
        const full = await openTrace(bytes, { engine });
        const b = Math.floor(full.bufferCount / 2);
        const { fileOffset, bufferSize } = full.buffer(b);
        const cut = fileOffset + Math.floor(bufferSize / 2);
        const t = await openTrace(bytes.subarray(0, cut), { engine });
        const what = `${name} ${engine} cut at ${cut}`;
        expect({ what, complete: t.complete, reason: t.incomplete?.reason, offset: t.incomplete?.offset }).toEqual({
          what,
          complete: false,
          reason: "truncated-buffer",
          offset: fileOffset,
        });
        expect(t.incomplete!.message).toContain(`buffer at byte offset ${fileOffset}`);
        expect([t.inputBytes, t.decodedBytes, t.info.fileSize, t.info.decodedBytes]).toEqual([cut, cut, cut, cut]);
        expect(t.decodeError).toBeUndefined();
        expect(t.warnings.map((w) => w.kind)).toContain("truncated-buffer");
        expect(t.events.length).toBeGreaterThanOrEqual(full.buffer(b).firstRow);
        expectPrefix(t, full, what);
      }
    }
  }, 120_000);

  it("input cut at a buffer boundary: missing-buffers in sequential files (BuffersWritten), complete in circular ones", async () => {
    for (const name of [X64, X86, "tx-CrossMachineHTTP.etl", "gcevents.etl"]) {
      const bytes = readFileSync(etlPath(name));
      const full = await openTrace(bytes);
      const sequential = (full.info.logFileMode & 0xe) === 0;
      expect(full.info.buffersWritten).toBe(full.bufferCount);
      for (const engine of ENGINES) {
        const cut = full.buffer(full.bufferCount - 1).fileOffset;
        const t = await openTrace(bytes.subarray(0, cut), { engine });
        expect(t.warnings).toEqual([]);
        if (!sequential) {
          // gcevents was written in circular mode: its BuffersWritten may count overwritten buffers
          expect({ name, complete: t.complete }).toEqual({ name, complete: true });
          continue;
        }
        expect({ name, engine, complete: t.complete, reason: t.incomplete?.reason, offset: t.incomplete?.offset }).toEqual({
          name,
          engine,
          complete: false,
          reason: "missing-buffers",
          offset: cut,
        });
        expect(t.incomplete!.message).toBe(
          `only ${full.bufferCount - 1} of the ${full.bufferCount} buffers the logfile header counts (BuffersWritten) are in the input`,
        );
        expect([t.inputBytes, t.decodedBytes]).toEqual([cut, cut]);
        expect(t.events.length).toBe(full.buffer(full.bufferCount - 1).firstRow);
      }
    }
  }, 120_000);

  it("a memory limit bounds the core's memory, not the trace: decoded window by window, every row is there", async () => {
    for (const name of [X64, X86]) {
      const bytes = readFileSync(etlPath(name));
      for (const engine of ENGINES) {
        const full = await openTrace(bytes, { engine });
        const t = await openTrace(bytes, { engine, memoryLimit: 4 << 20 });
        expect(t.complete, name).toBe(true);
        expect(t.events.length, name).toBe(full.events.length);
        expectPrefix(t, full, `${name} ${engine}`);
      }
    }
  }, 120_000);

  it("a buffer too large for the memory limit stops the decode with capacity, never a trap; both engines keep every row before", async () => {
    for (const name of [X64, X86]) {
      // a 40 MiB buffer after buffer 100
      const { bytes, offset: at } = withLargeBuffer(readFileSync(etlPath(name)), 100, 40 << 20);
      for (const engine of ENGINES) {
        const full = await openTrace(bytes, { engine });
        expect(full.complete, name).toBe(true);
        for (const mib of [4, 12, 24]) {
          const t = await openTrace(bytes, { engine, memoryLimit: mib << 20 });
          const what = `${name} ${engine} ${mib} MiB`;
          expect({ what, complete: t.complete, reason: t.incomplete?.reason }).toEqual({ what, complete: false, reason: "capacity" });
          const { offset, message } = t.incomplete!;
          expect(message, what).toMatch(new RegExp(`^memory limit of ${mib} MiB reached`));
          expect(offset, what).toBe(at);
          expect(t.decodedBytes, what).toBe(offset);
          expect(t.inputBytes, what).toBe(bytes.length);
          expect(
            t.warnings.map((w) => w.kind),
            what,
          ).toContain("capacity");
          expect(t.bufferCount, what).toBe(101);
          expect(t.events.length, what).toBe(full.buffer(101).firstRow);
          expectPrefix(t, full, what);
          // the tables still answer
          t.events.timeOrder();
          void t.names.counts();
          t.dispose();
        }
      }
    }
  }, 120_000);

  it("a decode stopped by a memory limit stops reading a file, and still knows its size", async () => {
    const { bytes, offset: at } = withLargeBuffer(readFileSync(etlPath(X86)), 40, 40 << 20);
    const file = join(mkdtempSync(join(tmpdir(), "etw-wasm-limit-")), "large-buffer.etl");
    writeFileSync(file, bytes);
    const size = bytes.length;
    for (const engine of ENGINES) {
      let last = 0;
      const t = await openTraceFile(file, { engine, memoryLimit: 4 << 20, chunkBytes: 1 << 20, onProgress: (n) => (last = n) });
      expect(t.complete).toBe(false);
      expect([t.inputBytes, t.info.fileSize]).toEqual([size, size]);
      expect(last).toBeLessThan(size / 2);
      expect(t.decodedBytes).toBe(t.incomplete!.offset);
      expect(t.decodedBytes).toBe(at);
    }
  });

  it("a stream of unknown size is read to its end when a memory limit stops the decode, so inputBytes is its size", async () => {
    const { bytes, offset: at } = withLargeBuffer(readFileSync(etlPath(X86)), 40, 40 << 20);
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 1 << 20) yield bytes.subarray(i, i + (1 << 20));
    }
    for (const engine of ENGINES) {
      let last = 0;
      const t = await openTrace(chunks(), { engine, memoryLimit: 4 << 20, chunkBytes: 1 << 20, onProgress: (n) => (last = n) });
      expect(t.complete).toBe(false);
      expect([t.inputBytes, last]).toEqual([bytes.length, bytes.length]);
      expect(t.decodedBytes).toBe(at);
    }
  });

  it("a memory limit too small for the first buffer rejects with EtlDecodeError; a bad limit with RangeError", async () => {
    // the header buffer made 8 MiB long
    const { bytes } = withLargeBuffer(readFileSync(etlPath(X86)), 0, 8 << 20, "resize");
    for (const engine of ENGINES) {
      const error = await openTrace(bytes, { engine, memoryLimit: 1 << 20 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EtlDecodeError);
      expect((error as EtlDecodeError).offset).toBe(0);
      expect((error as Error).message).toMatch(/memory limit of 1 MiB reached before the first buffer was decoded/);
      for (const bad of [0, 1000, (1 << 20) - 1, Number.NaN, -5, "8MiB" as unknown as number]) {
        await expect(openTrace(bytes, { engine, memoryLimit: bad })).rejects.toThrow(RangeError);
      }
    }
  });

  it("an input that fails part way: decode-error with the error's offset, rows before it kept", async () => {
    const bytes = readFileSync(etlPath(X86));
    const full = await openTrace(bytes);
    const at = 5 << 20;
    function* failing() {
      for (let i = 0; i < at; i += 1 << 20) yield bytes.subarray(i, i + (1 << 20));
      throw new Error("disk went away");
    }
    for (const engine of ENGINES) {
      const t = await openTrace(failing(), { engine, chunkBytes: 1 << 20 });
      expect(t.complete).toBe(false);
      expect(t.decodeError).toBeInstanceOf(EtlDecodeError);
      expect(t.incomplete).toEqual({ reason: "decode-error", offset: t.decodeError!.offset, message: "Error: disk went away" });
      expect(t.decodeError!.offset).toBeLessThanOrEqual(at);
      expect(t.decodedBytes).toBe(t.decodeError!.offset);
      expect(t.inputBytes).toBe(at);
      expectPrefix(t, full, engine);
      expect(t.events.length).toBeGreaterThan(0);
    }
  });

  it("an incomplete trace keeps complete, incomplete and the decode error's type and offset across the worker transfer", async () => {
    const bytes = readFileSync(etlPath(X64));
    const cut = await decodeTrace(bytes.subarray(0, 2_000_000));
    const limited = await decodeTrace(withLargeBuffer(bytes, 100, 40 << 20).bytes, { memoryLimit: 8 << 20 });
    function* failing() {
      yield bytes.subarray(0, 2 << 20);
      throw new Error("gone");
    }
    const failed = await decodeTrace(failing(), { chunkBytes: 1 << 16 });
    for (const data of [cut, limited, failed]) {
      const before = new TraceClass(data);
      const { message } = packTraceData(data);
      const after = new TraceClass(unpackTraceData(structuredClone(message)));
      expect({ complete: after.complete, incomplete: after.incomplete, input: after.inputBytes, decoded: after.decodedBytes }).toEqual({
        complete: false,
        incomplete: before.incomplete,
        input: before.inputBytes,
        decoded: before.decodedBytes,
      });
      expect(after.events.length).toBe(before.events.length);
      if (before.decodeError) {
        expect(after.decodeError).toBeInstanceOf(EtlDecodeError);
        expect(after.decodeError!.offset).toBe(before.decodeError.offset);
        expect(after.decodeError!.message).toBe(before.decodeError.message);
      } else expect(after.decodeError).toBeUndefined();
    }
  });
});

describe("the public codes", () => {
  it("give what a user of the tables reads, and none of the core's memory layout", async () => {
    const { codes } = await import("../dist/bindings/index.js");
    const core = await import("../dist/assembly/codes.js");
    const names = Object.keys(codes);
    // (layout: directory slots, logfile header offsets, filter words, typed-table program words, struct offsets)
    expect(names.filter((k) => /^(DIR|LH|CLR|PROV|TYPE|WARN|B|BUF|FF|ARENA|TIME)_/.test(k) || (k.startsWith("FILTER_") && k !== "FILTER_SET_MAX"))).toEqual([]);
    for (const k of ["HT_EVENT_HEADER64", "W_CAPACITY", "E_TOO_SHORT", "EVENT_TYPE_NONE", "BS_TRUNCATED", "T_GUID"]) {
      expect((codes as Record<string, unknown>)[k], k).toBe((core as Record<string, unknown>)[k]);
    }
    expect(names.length).toBeLessThan(Object.keys(core).length / 2);
  });
});
