// What an EventPipe file gives beyond its rows: the fields of events its metadata describes (row.fields),
// the typed .NET runtime tables, and TraceEvent's ToString() XML, checked line for line against PerfView's
// EventPipe baselines (EventPipeParsing.Basic: key, count, first event's XML cut to 1,000 characters).

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openTrace, type Trace } from "../dist/bindings/index.js";
import { readNettrace, stackFrames } from "../dist/bindings/eventpipe/reader.js";
import { openTraceFile } from "../dist/bindings/node.js";
import { eventPipeBaselineLines } from "../dist/bindings/perfview/index.js";
import { CORPUS, HAVE_CORPUS } from "./helpers/shared.js";
import { syntheticV4Uncompressed, syntheticV6 } from "./helpers/nettrace-cases.js";
import { createHash } from "node:crypto";
import { emptyPool, giveBack, sizeClass, takeBuffer } from "../dist/bindings/decode/result/reuse.js";
import { generateNettrace } from "../dist/bindings/generator/index.js";

/**
 * Fills the pool of disposed traces' memory (decode/result/reuse.ts), which a whole file's tables are taken
 * from, with buffers of every size from 64 KiB to 128 MiB holding `byte`: a decode must give the same
 * tables whatever the memory it reuses held.
 */
function poolFilledWith(byte: number): void {
  // (empty it first: what earlier tests gave back)
  const taken: ArrayBuffer[] = [];
  for (let size = 1 << 16; size <= 1 << 27; size *= 2) {
    for (let k = 0; k < 3; k++) {
      const b = takeBuffer(size);
      new Uint8Array(b).fill(byte);
      taken.push(b);
    }
  }
  giveBack(taken);
}

/** A digest of everything a trace holds: the byte store, every event and extended-item column and item, every typed table's columns. */
function traceDigest(t: Awaited<ReturnType<typeof openTrace>>): string {
  const h = createHash("sha256");
  const bytesOf = (v: ArrayBufferView) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  h.update(t.bytes);
  for (const k of [
    "timestamp",
    "pid",
    "tid",
    "provider",
    "eventId",
    "version",
    "opcode",
    "level",
    "keywords",
    "payloadOffset",
    "payloadLength",
    "flags",
    "processor",
    "eventType",
    "headerType",
    "headerLength",
    "task",
    "channel",
  ]) {
    const col = (t.events.columns as unknown as Record<string, unknown>)[k];
    if (!ArrayBuffer.isView(col)) throw new Error(`no event column ${k}`);
    h.update(k).update(bytesOf(col));
  }
  const x = t.extendedItems;
  for (const col of [x.row, x.type, x.size, x.offset]) h.update(bytesOf(col));
  // (the items' bytes: an EventPipe trace's stack items are made when asked for, from the frames where they are)
  for (let e = 0; e < x.length; e++) h.update(t.extendedItemBytes(e));
  for (const table of t.tables) {
    h.update(table.name).update(bytesOf(table.rows)).update(bytesOf(table.truncated));
    for (const [name, col] of Object.entries(table.columns)) {
      h.update(name);
      if (ArrayBuffer.isView(col)) h.update(bytesOf(col));
      else h.update(bytesOf(col.offset)).update(bytesOf(col.length));
    }
  }
  return h.digest("hex");
}

describe("a whole file's tables in memory disposed traces gave back", () => {
  it("the same tables whether that memory held zeros or garbage (V5 with samples and stacks, V6), on both engines", async () => {
    for (const version of [5, 6] as const) {
      const { bytes } = generateNettrace({ targetBytes: Infinity, fileBytes: 3 << 20, samples: true, seed: 7, version });
      for (const engine of ["wasm", "js"] as const) {
        const digests: string[] = [];
        for (const byte of [0, 0xa5, 0xff]) {
          poolFilledWith(byte);
          const t = await openTrace(bytes, { engine });
          expect(t.events.length).toBeGreaterThan(10_000);
          expect(t.extendedItems.row.length).toBeGreaterThan(100);
          digests.push(traceDigest(t));
          t.dispose();
        }
        expect(new Set(digests).size, `V${version} ${engine}`).toBe(1);
      }
    }
  });

  it("a decode writes into memory a decode before gave back: outgrown columns and typed blocks go back too (no fresh buffer of 64 KiB or more)", async () => {
    const { bytes } = generateNettrace({ targetBytes: Infinity, fileBytes: 8 << 20, samples: true, seed: 13, version: 5 });
    // (from an empty pool, then three decodes: the pool hands each request the smallest buffer that fits, so it takes a few for every size to be there)
    emptyPool();
    for (let i = 0; i < 3; i++) (await openTrace(bytes, { engine: "wasm" })).dispose();
    // (every ArrayBuffer made during the fourth decode; the pool's own are made by takeBuffer with `new ArrayBuffer`)
    const Real = globalThis.ArrayBuffer;
    const fresh: number[] = [];
    globalThis.ArrayBuffer = new Proxy(Real, {
      construct(target, args: [number]) {
        if (args[0] >= 1 << 16) fresh.push(args[0]);
        return new target(...args);
      },
    });
    let t: Trace;
    try {
      t = await openTrace(bytes, { engine: "wasm" });
    } finally {
      globalThis.ArrayBuffer = Real;
    }
    expect(t.events.length).toBeGreaterThan(100_000);
    expect(t.tables.length).toBeGreaterThan(5);
    expect(fresh).toEqual([]);
    t.dispose();
  });

  it("a file given as bytes is not copied: the trace's bytes are the input, its stacks the reader's, on both engines and in a session", async () => {
    const { bytes } = generateNettrace({ targetBytes: Infinity, fileBytes: 2 << 20, samples: true, seed: 11, version: 5 });
    const file = readNettrace(bytes);
    // (each event's stack by its payload's file offset: the reader's own frames, read apart from the tables)
    const framesAt = new Map<number, string>();
    for (let i = 0; i < file.events.length; i++) {
      if (file.events.stack[i] >= 0) framesAt.set(file.events.payloadOffset[i], Array.from(stackFrames(file, file.events.stack[i])).join(","));
    }
    expect(framesAt.size).toBeGreaterThan(1000);
    const stacksOf = (t: Trace, shift: number) => {
      const out: string[] = [];
      let checked = 0;
      for (let i = 0; i < t.events.length; i++) {
        const row = t.events.row(i);
        const frames = row.stack?.join(",") ?? "";
        out.push(frames);
        const want = framesAt.get(t.events.columns.payloadOffset[i] - shift);
        if (want !== undefined || frames) {
          expect(frames, `row ${i}`).toBe(want);
          checked++;
        }
      }
      expect(checked).toBe(framesAt.size);
      return out;
    };
    const wasm = await openTrace(bytes, { engine: "wasm" });
    // (the input itself: payload offsets are file offsets)
    expect(wasm.bytes.buffer).toBe(bytes.buffer);
    expect(wasm.bytes.length).toBe(bytes.length);
    const want = stacksOf(wasm, 0);
    // (a stack item as ETW gives one: MatchId 0, then the frames, which lie in the input after their stack's size)
    const x = wasm.extendedItems;
    const e = Array.from(x.type).findIndex((t, k) => t === 6 && k < x.length);
    const item = wasm.extendedItemBytes(e);
    expect(Array.from(item.subarray(0, 8))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(Array.from(item.subarray(8))).toEqual(Array.from(bytes.subarray(x.offset[e] + 8, x.offset[e] + x.size[e])));
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(x.offset[e] + 4, true)).toBe(x.size[e] - 8);
    // the TypeScript engine copies the input into a store: the same offsets, the same stacks
    const js = await openTrace(bytes, { engine: "js" });
    expect(js.bytes.buffer).not.toBe(bytes.buffer);
    expect(stacksOf(js, 0)).toEqual(want);
    // a session of it twice: merged into one store, the items with it
    const session = await openTrace(
      [
        { name: "a", input: bytes },
        { name: "b", input: bytes },
      ],
      { engine: "wasm" },
    );
    expect(session.events.length).toBe(2 * wasm.events.length);
    const merged: string[] = [];
    for (let i = 0; i < session.events.length; i++) merged.push(session.events.row(i).stack?.join(",") ?? "");
    expect(merged.filter(Boolean).length).toBe(2 * want.filter(Boolean).length);
    expect(new Set(merged)).toEqual(new Set(want));
    for (const t of [wasm, js, session]) t.dispose();
  });

  it("buffers come in size classes an eighth of a power of two apart: a request a little larger than a buffer given back takes that buffer", () => {
    expect([65535, 65536, 65537, 1_000_000, 5_000_000, 2 ** 30 + 1].map(sizeClass)).toEqual([65535, 65536, 73728, 1_048_576, 5_242_880, 2 ** 30 + 2 ** 27]);
    // (a size no test's decode gives back: a fresh buffer of the class; address space only, never written)
    const a = takeBuffer(300_000_000);
    expect(a.byteLength).toBe(301_989_888);
    giveBack([a]);
    // (a window a little larger than the one before reuses its memory instead of adding to the pool)
    expect(takeBuffer(301_000_000)).toBe(a);
  });
});

const NETTRACE = join(CORPUS, "nettrace");
const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));

const plain = (v: unknown) => JSON.parse(JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x)));

describe("fields of metadata-described events", () => {
  it("V6: Int32, an array of UTF-8 code units, a fixed-length array, an object with a VarUInt", async () => {
    const t = await openTrace(syntheticV6());
    // (rows are one moving cursor: each is read as it comes)
    const fields: unknown[] = [];
    for (const r of t.events) if (r.name.startsWith("My-Provider/")) fields.push(plain(r.fields), r.get("count"));
    // payload: 2a000000 | 0200 6869 | 0100 0200 0300 | 05 (worked out from the bytes the case writes)
    const one = [{ count: 42, text: "hi", fixed: [1, 2, 3], nested: { inner: "5n" } }, 42];
    expect(fields).toEqual([...one, ...one, ...one]);
  });

  it("V4/V5 (V2Params): an array of UInt32 and an object; V1 fields: a string and an object", async () => {
    const t = await openTrace(syntheticV4Uncompressed());
    const byName = new Map<string, unknown>();
    for (const r of t.events) byName.set(r.providerName, plain(r.fields));
    expect(byName.get("Test-Provider")).toEqual({ ids: [7], pair: { x: 3 } });
    expect(byName.get("Old-Provider")).toEqual({ s: "ab", obj: { n: 5 } });
  });
});

describe.skipIf(!HAVE_CORPUS)("EventPipe files: fields, typed tables and PerfView's XML baselines", () => {
  const files = [
    "eventpipe-dotnetcore2.1-linux-x64-objver3.netperf",
    "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
    "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace",
  ];
  const baselineLines = (name: string) =>
    readFileSync(join(NETTRACE, "baselines", `${name}.baseline.txt`), "utf8")
      .replace(/^\uFEFF/, "")
      .split(/\r?\n/)
      .filter(Boolean);

  for (const name of files) {
    it(`${name}: every baseline line, XML included`, async () => {
      const t = await openTrace(readFileSync(join(NETTRACE, name)));
      const got = [...eventPipeBaselineLines(t)];
      const want = baselineLines(name);
      // The 3.0 baseline's "GC" line (runtime events 200 and 201: no TraceEvent class, empty metadata) was
      // named and formatted from the registered manifest of the machine that made it (TDH); we name them
      // from the runtime's schema: the same events, counted under their two names.
      const tdh = want.find((l) => l.startsWith("Microsoft-Windows-DotNETRuntime/GC, "));
      if (tdh) {
        const mine = got.filter((l) => /^Microsoft-Windows-DotNETRuntime\/GC\/(Increase|Decrease)MemoryPressure, /.test(l));
        expect(mine.length).toBe(2);
        expect(mine.reduce((n, l) => n + Number(l.split(", ")[1]), 0)).toBe(Number(tdh.split(", ")[1]));
        expect(mine.find((l) => l.includes("Increase"))).toMatch(
          /<Event MSec= {2}"1598\.5796" PID="10064" PName="Process\(10064\)" TID="7532" EventName="GC\/IncreaseMemoryPressure"/,
        );
      }
      const expected = want.filter((l) => l !== tdh);
      const compared = got.filter((l) => !/^Microsoft-Windows-DotNETRuntime\/GC\/(Increase|Decrease)MemoryPressure, /.test(l));
      expect(compared).toEqual(expected);
    });
  }

  it("the CLI prints the same lines (events --format perfview)", async () => {
    const name = files[2];
    const r = spawnSync(process.execPath, [CLI, "events", join(NETTRACE, name), "--format", "perfview"], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout.split("\n").filter(Boolean)).toEqual(baselineLines(name));
  });

  it("EventSource fields decode from the metadata: the 5.0 trace's TestEventSource0 arrays, as the baseline prints them", async () => {
    const t = await openTrace(readFileSync(join(NETTRACE, files[2])));
    const ev: unknown[] = [];
    for (const r of t.events) if (r.providerName === "TestEventSource0") ev.push([r.name, plain(r.fields)]);
    // the baseline's arg0="[2032854139,…]" arg1="[26494,…]" arg2="2,033,417,279" (an Int64)
    expect(ev[0]).toEqual([
      "TestEventSource0/TestEvent1",
      { arg0: [2032854139, 1608221689, 1470019200, 199494339, 1238846140, 1366609043], arg1: [26494, 17115, -7229, 18850, 27931], arg2: "2033417279n" },
    ]);
    // an array of UTF-16 code units is a string (the baseline's text of it)
    const line = baselineLines(files[2]).find((l) => l.startsWith("TestEventSource0/TestEvent3/24, "))!;
    expect(ev[2]).toEqual(["TestEventSource0/TestEvent3/24", { arg0: /arg0="([^"]*)"/.exec(line)![1] }]);
    let commandLine: unknown;
    for (const r of t.events) if (r.name === "Microsoft-DotNETCore-EventPipe/ProcessInfo") commandLine ??= r.fields.CommandLine;
    expect(commandLine).toBe("C:\\work\\arraytypes_test\\repro\\\\runtime\\corerun.exe  C:\\work\\arraytypes_test\\repro\\\\arraytypesapp.dll");
  });

  it("typed .NET tables: as many rows as the baselines count, and every value as the row's own decode gives it", async () => {
    const t = await openTrace(readFileSync(join(NETTRACE, files[1])));
    const counts = new Map(baselineLines(files[1]).map((l) => [l.slice(0, l.indexOf(", ")), Number(l.split(", ")[1])]));
    for (const key of ["GC/Start", "GC/Stop", "GC/AllocationTick", "GC/HeapStats", "GC/RestartEEStop", "Method/R2RGetEntryPoint"]) {
      expect([key, t.table(`Microsoft-Windows-DotNETRuntime/${key}`)?.length]).toEqual([key, counts.get(`Microsoft-Windows-DotNETRuntime/${key}`)]);
    }
    let rows = 0,
      clrRows = 0;
    for (const r of t.events) if (r.clrSchema) clrRows++;
    for (const table of t.tables) {
      rows += table.length;
      for (let i = 0; i < table.length; i += 97) {
        const row = t.events.row(table.rows[i]);
        for (const f of table.fieldNames) expect(plain(table.get(f, i))).toEqual(plain(row.get(f)));
      }
    }
    expect(rows).toBe(clrRows);
    expect(clrRows).toBe(70_379); // the README's DotNETRuntime + DotNETRuntimePrivate events
  });
});

describe.skipIf(!HAVE_CORPUS)("EventPipe files opened from a path (the byte store built around the bytes read, no copy)", () => {
  for (const name of ["eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", "only_managed_samples.nettrace"]) {
    it(`${name}: every row, payload, stack and typed row as openTrace of its bytes gives`, async () => {
      const path = join(NETTRACE, name);
      const a = await openTraceFile(path);
      const input = new Uint8Array(readFileSync(path));
      const b = await openTrace(input);
      const text = (t: typeof a) => {
        const out: string[] = [];
        for (const r of t.events)
          out.push(`${r.timestamp}|${r.name}|${r.tid}|${Buffer.from(r.payload).toString("hex")}|${r.extTypes.join(",")}|${r.stack?.join(",")}|${r.activityId}`);
        return out;
      };
      // (the path's store is the buffer the file was read into, which has room after the store; the bytes' are
      // the input itself, the stacks kept apart)
      const storeOf = (t: typeof a) => (t as unknown as { eventTable: { data: { bytes: Uint8Array } } }).eventTable.data.bytes;
      expect(storeOf(a).buffer.byteLength).toBeGreaterThan(storeOf(a).byteLength);
      expect(storeOf(b).buffer).toBe(input.buffer);
      const rows = text(a);
      expect(rows.length).toBeGreaterThan(1000);
      expect(rows.filter((r) => !r.includes("|undefined|")).length).toBeGreaterThan(0);
      expect(rows).toEqual(text(b));
      // (tables by position: a name may be two tables' of different versions)
      expect(a.tables.map((t) => `${t.name} ${t.length}`)).toEqual(b.tables.map((t) => `${t.name} ${t.length}`));
      for (const [k, table] of b.tables.entries()) {
        const other = a.tables[k];
        for (let i = 0; i < table.length; i += 31) for (const f of table.fieldNames) expect(plain(other.get(f, i))).toEqual(plain(table.get(f, i)));
      }
    });
  }
});

describe.skipIf(!HAVE_CORPUS)("EventPipe files streamed in windows (one per sequence point)", () => {
  const rowText = (r: {
    timestamp: bigint;
    name: string;
    tid: number | null;
    payload: Uint8Array;
    extTypes: number[];
    fields: unknown;
    activityId: string | null;
  }) =>
    `${r.timestamp}|${r.name}|${r.tid}|${Buffer.from(r.payload).toString("hex")}|${r.extTypes.join(",")}|${JSON.stringify(plain(r.fields))}|${r.activityId}`;

  async function streamedRows(bytes: Uint8Array, chunk: number, options: { engine?: "wasm" | "js"; batchBytes?: number }) {
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += chunk) yield bytes.slice(i, i + chunk);
    }
    const { streamTrace } = await import("../dist/bindings/node.js");
    const s = streamTrace(chunks(), options);
    const rows: string[] = [];
    let batches = 0,
      most = 0;
    for await (const b of s) {
      batches++;
      most = Math.max(most, b.events.length);
      for (const r of b.events) rows.push(rowText(r));
    }
    return { rows, batches, most, end: s.end! };
  }

  const cases: [string, number, number][] = [
    // file, sequence points (+1 windows), chunk size
    ["eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", 18, 65_537],
    ["eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace", 1, 4_099],
    ["only_managed_samples.nettrace", 6, 100_003],
  ];
  for (const [name, points, chunk] of cases) {
    it(`${name}: the same rows, in the same order, as the whole file; a batch per sequence point`, async () => {
      const bytes = new Uint8Array(readFileSync(join(NETTRACE, name)));
      const whole = await openTrace(bytes);
      const want: string[] = [];
      for (const r of whole.events) want.push(rowText(r));
      for (const engine of ["wasm", "js"] as const) {
        const got = await streamedRows(bytes, chunk, { engine });
        expect(got.end.complete).toBe(true);
        expect(got.batches).toBe(points + 1);
        if (points > 1) expect(got.most).toBeLessThan(want.length / 2);
        expect(got.rows.length).toBe(want.length);
        expect(got.rows).toEqual(want);
      }
    });
  }

  it("a .netperf (no sequence points, in time order) in windows of about batchBytes", async () => {
    const bytes = new Uint8Array(readFileSync(join(NETTRACE, "eventpipe-dotnetcore2.1-linux-x64-objver3.netperf")));
    const whole = await openTrace(bytes);
    const want: string[] = [];
    for (const r of whole.events) want.push(rowText(r));
    const got = await streamedRows(bytes, 1 << 20, { batchBytes: 1 << 20 });
    expect(got.batches).toBeGreaterThanOrEqual(9);
    expect(got.rows).toEqual(want);
  });

  it("a file cut short: the rows before the cut, and the end says where it stopped", async () => {
    const bytes = new Uint8Array(readFileSync(join(NETTRACE, "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")));
    const cut = bytes.subarray(0, 3_000_001);
    const whole = await openTrace(cut);
    const want: string[] = [];
    for (const r of whole.events) want.push(rowText(r));
    const got = await streamedRows(cut, 131_071, {});
    expect(whole.complete).toBe(false);
    expect(got.end.complete).toBe(false);
    expect(got.end.incomplete?.offset).toBe(whole.incomplete?.offset);
    expect(got.rows).toEqual(want);
    expect(got.rows.length).toBeGreaterThan(50_000);
  });
});

describe.skipIf(!HAVE_CORPUS)("a streamed EventPipe file's end", () => {
  it("counts every window's rows by type, keeps every window's warnings, and says the format", async () => {
    const { streamTrace } = await import("../dist/bindings/node.js");
    const { readNettrace, BLOCK_EVENT } = await import("../dist/bindings/eventpipe/reader.js");
    const bytes = new Uint8Array(readFileSync(join(NETTRACE, "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")));
    // damage inside an event block late in the file (its framing intact): a warning, and decoding goes on
    const blocks = readNettrace(bytes).blocks;
    const late: number[] = [];
    for (let b = 0; b < blocks.length; b++) if (blocks.kind[b] === BLOCK_EVENT && blocks.offset[b] > bytes.length * 0.7) late.push(blocks.contentOffset[b]);
    const damaged = bytes.slice();
    for (const at of late.slice(0, 3)) damaged.fill(0xff, at + 20, at + 40); // the first record's header (after the 20-byte block header)
    const whole = await openTrace(damaged);
    expect(whole.complete).toBe(true);
    expect(whole.warnings.length).toBeGreaterThanOrEqual(3);
    expect(whole.warnings.every((w) => w.kind.startsWith("eventpipe-") && w.offset > bytes.length * 0.7)).toBe(true);

    const s = streamTrace(damaged, { batchBytes: 1 << 20 });
    let rows = 0,
      batches = 0;
    for await (const b of s) {
      rows += b.events.length;
      batches++;
    }
    const end = s.end!;
    expect(batches).toBeGreaterThan(10);
    expect(end.eventPipeVersion).toBe(4);
    expect(end.eventCount).toBe(rows);
    expect(rows).toBe(whole.events.length);
    expect(end.warnings.map((w) => [w.kind, w.offset, w.message])).toEqual(whole.warnings.map((w) => [w.kind, w.offset, w.message]));
    expect(end.warningTotal).toBe(whole.warningTotal);
    let typed = 0;
    for (let t = 0; t < end.eventTypes.length; t++) typed += end.eventTypes.count[t];
    expect(typed).toBe(rows);
    expect(end.info.eventsLost).toBe(whole.info.eventsLost);
  });
});
