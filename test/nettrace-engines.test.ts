// The EventPipe reader's record walk on both engines (assembly/nettrace-events.ts in the WebAssembly
// core, its generated twin in the TypeScript core): readNettrace with either walker gives the same
// file, column for column, warning for warning, on every corpus trace, on the synthetic V6 and
// uncompressed V4 files, on 200 damaged copies (byte flips and cuts, seeded) and in batches of a few rows.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as NT from "../dist/bindings/eventpipe/reader.js";
import { readNettrace, BLOCK_EVENT, BLOCK_METADATA, BLOCK_SEQUENCE_POINT, NE_INTERNAL, type NettraceFile } from "../dist/bindings/eventpipe/reader.js";
import { CoreWalker, jsNettraceWalker, type NettraceWalkCore, type NettraceWalker } from "../dist/bindings/eventpipe/walk.js";
import { nettraceEngine } from "../dist/bindings/decode/eventpipe/engine.js";
import { eventTableOf, type EventTableOf } from "../dist/bindings/decode/eventpipe/rows.js";
import { instantiateCore } from "../dist/bindings/decode/windows/loader.js";
import { SHARED } from "./helpers/shared.js";
import { mulberry32 } from "../dist/bindings/generator/random.js";
import { syntheticV6, syntheticV4Uncompressed, syntheticLookups, LOOKUP_CASE, prefixFile, nettraceCorpusFiles } from "./helpers/nettrace-cases.js";

const NETTRACE = join(SHARED, "corpus", "nettrace");
const HAVE_NETTRACE = existsSync(join(NETTRACE, "README.md"));
if (!HAVE_NETTRACE) {
  if (process.env.CI === "true") throw new Error(`CI=true but the EventPipe corpus is missing at ${NETTRACE}`);
  console.warn(`notice: ${NETTRACE} not found; EventPipe corpus engine tests are skipped`);
}

const load = (name: string) => new Uint8Array(readFileSync(join(NETTRACE, name)));

/** Every .nettrace/.netperf of the corpus folder and its subfolders (relative names). */
const corpusTraces = (): string[] => (HAVE_NETTRACE ? nettraceCorpusFiles(NETTRACE) : []);

/**
 * The file as plain data for toEqual: typed arrays as their type, length and a hash of their bytes
 * (fast on 100,000-row columns), bigints as text, the error as its name, message, code and offset.
 */
function plain(v: unknown): unknown {
  if (ArrayBuffer.isView(v)) {
    const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    return `${v.constructor.name}(${(v as unknown as { length: number }).length}) ${createHash("sha256").update(bytes).digest("hex").slice(0, 24)}`;
  }
  if (v instanceof Error) return { name: v.name, message: v.message, ...(v as unknown as Record<string, unknown>) };
  if (typeof v === "bigint") return `${v}n`;
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === "bytes" ? (x as Uint8Array).length : plain(x)]));
  return v;
}

/** Where two files' event columns first differ, for a readable failure. */
function firstColumnDiff(a: NettraceFile, b: NettraceFile): string | undefined {
  for (const [k, col] of Object.entries(a.events)) {
    if (!ArrayBuffer.isView(col)) continue;
    const x = col as unknown as ArrayLike<unknown>,
      y = (b.events as unknown as Record<string, ArrayLike<unknown>>)[k];
    for (let i = 0; i < Math.max(x.length, y.length); i++) if (x[i] !== y[i]) return `events.${k}[${i}]: ${String(x[i])} vs ${String(y[i])}`;
  }
  return undefined;
}

/** The walker of a reader core on `engine` (its memory is the walker's: disposing the walker gives it back). */
const nettraceWalker = async (engine: "wasm" | "js"): Promise<NettraceWalker> => (await nettraceEngine(engine)).walker;

let wasm: NettraceWalker;
let js: NettraceWalker;
beforeAll(async () => {
  wasm = await nettraceWalker("wasm");
  js = await nettraceWalker("js");
});
afterAll(() => {
  wasm.dispose?.();
  js.dispose?.();
});

/** Reads `bytes` with both walkers (never a throw) and expects the same file; returns it. */
function both(bytes: Uint8Array, label: string): NettraceFile {
  let a: NettraceFile, b: NettraceFile;
  try {
    a = readNettrace(bytes, { walker: wasm });
    b = readNettrace(bytes, { walker: js });
  } catch (e) {
    throw new Error(`${label}: readNettrace threw ${e instanceof Error ? e.stack : e}`);
  }
  const pa = plain(a),
    pb = plain(b);
  if (JSON.stringify(pa) !== JSON.stringify(pb)) {
    expect(firstColumnDiff(a, b), label).toBeUndefined();
    expect(pa, label).toEqual(pb);
  }
  return a;
}

/** Small complete files: the synthetic ones, and the first blocks of real files when the corpus is here. */
function samples(): [string, Uint8Array][] {
  const out: [string, Uint8Array][] = [
    ["synthetic V6", syntheticV6()],
    ["synthetic V4 uncompressed", syntheticV4Uncompressed()],
  ];
  if (!HAVE_NETTRACE) return out;
  out.push(["arraytypes (V5)", load("eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace")]);
  for (const [label, name, blocks] of [
    ["3.0 V4 prefix", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", 14],
    ["dotnetdiag V4 prefix", "dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", 16],
  ] as const) {
    const bytes = load(name);
    const full = readNettrace(bytes);
    const ends = Array.from(full.blocks.contentOffset, (o, i) => o + full.blocks.contentLength[i] + 1);
    out.push([label, prefixFile(bytes, ends, blocks)]);
  }
  return out;
}

describe.skipIf(!HAVE_NETTRACE)("EventPipe corpus: wasm and js walkers", () => {
  const files = corpusTraces();
  it("finds the corpus traces", () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
  });
  for (const file of files) {
    it(`${file}: the same file on both engines, as with the default walker`, () => {
      const bytes = load(file);
      const r = both(bytes, file);
      expect(r.error).toBeNull();
      expect(r.events.length).toBeGreaterThan(0);
      expect(plain(readNettrace(bytes))).toEqual(plain(r));
    });
  }
});

describe("EventPipe damaged input: wasm and js walkers", () => {
  it("synthetic files: the same on both engines, as with the default walker", () => {
    for (const [label, bytes] of samples().slice(0, 2)) {
      const r = both(bytes, label);
      expect(r.error, label).toBeNull();
      expect(plain(readNettrace(bytes))).toEqual(plain(r));
    }
  });

  it("a sequence point damaged before it clears the stacks (a fuzz case): the rows after it name no stack or label list of the window before, on both engines", async () => {
    // (syntheticV6 with its last event block and the sequence point after it swapped, the sequence point's
    // thread count then made 2^31 - 1: its block fails before it clears the stack and label-list ids)
    const base = syntheticV6();
    const b = readNettrace(base).blocks;
    const i = Array.from(b.kind).findIndex((k, j) => k === BLOCK_EVENT && b.kind[j + 1] === BLOCK_SEQUENCE_POINT);
    expect(i).toBeGreaterThan(0);
    const ev = base.slice(b.offset[i], b.offset[i + 1]);
    const sp = base.slice(b.offset[i + 1], b.contentOffset[i + 1] + b.contentLength[i + 1]);
    const bytes = base.slice();
    bytes.set(sp, b.offset[i]);
    bytes.set(ev, b.offset[i] + sp.length);
    new DataView(bytes.buffer).setUint32(b.offset[i] + 4 + 12, 0x7fffffff, true);
    const { openTrace } = await import("../dist/bindings/index.js");
    const [w, j] = [await openTrace(bytes, { engine: "wasm" }), await openTrace(bytes, { engine: "js" })];
    for (const t of [w, j]) {
      expect(t.events.length).toBe(3);
      expect(t.warnings.map((x) => x.message)).toContain("stack id 2 not defined since the last sequence point");
      const x = t.extendedItems;
      // (the last row's stack was the window before's: no item for it now)
      expect(Array.from(x.row)).toEqual([0, 1]);
      for (let e = 0; e < x.length; e++) expect(x.offset[e] + x.size[e]).toBeLessThanOrEqual(t.bytes.length);
    }
    expect(Array.from(j.extendedItems.offset)).toEqual(Array.from(w.extendedItems.offset));
    w.dispose();
    j.dispose();
  });

  it("200 damaged copies (flips, cuts, both; mostly inside event and metadata blocks): the same result on both engines, never a throw", () => {
    const bases = samples();
    const rnd = mulberry32(0xe9e1);
    let errors = 0,
      damaged = 0;
    for (let k = 0; k < 200; k++) {
      const [label, base] = bases[k % bases.length];
      const layout = readNettrace(base).blocks;
      const records: [number, number][] = [];
      for (let b = 0; b < layout.length; b++) {
        if (layout.kind[b] === BLOCK_EVENT || layout.kind[b] === BLOCK_METADATA) records.push([layout.contentOffset[b], layout.contentLength[b]]);
      }
      let copy = base.slice();
      const how = rnd();
      if (how < 0.75) {
        const flips = 1 + Math.floor(rnd() * 4);
        for (let f = 0; f < flips; f++) {
          let at = Math.floor(rnd() * copy.length);
          if (records.length && rnd() < 0.8) {
            // inside a record block, often near its first records (the headers)
            const [off, len] = records[Math.floor(rnd() * records.length)];
            at = off + Math.floor(rnd() * (rnd() < 0.5 ? Math.min(len, 256) : len));
          }
          copy[at] = rnd() < 0.5 ? copy[at] ^ (1 << Math.floor(rnd() * 8)) : (rnd() * 256) | 0;
        }
      }
      if (how >= 0.5) copy = copy.subarray(0, Math.floor(rnd() * copy.length));
      const r = both(copy, `${label}, damaged copy ${k}`);
      if (r.error) errors++;
      if (r.warningCount) damaged++;
    }
    expect(errors).toBeGreaterThan(0);
    expect(damaged).toBeGreaterThan(0);
  });

  it("each event's lookups (done in the walk, a few left to the reader) give the rows worked out by hand, on both cores, in batches of any size", async () => {
    const bytes = syntheticLookups();
    const codes = LOOKUP_CASE.warnings.map((name) => (NT as unknown as Record<string, number>)[name]);
    expect(codes.every((c) => typeof c === "number")).toBe(true);
    for (const cap of [8192, 1, 2, 3]) {
      const core = await instantiateCore();
      const walkers: [string, NettraceWalker][] = [
        ["wasm", new CoreWalker(core as unknown as NettraceWalkCore, cap)],
        ["js", jsNettraceWalker(cap)],
      ];
      for (const [engine, walker] of walkers) {
        const label = `${engine}, ${cap} rows a batch`;
        const r = readNettrace(bytes, { walker });
        expect(r.error, label).toBeNull();
        const e = r.events;
        expect(Array.from(e.metadata), label).toEqual(LOOKUP_CASE.metadata);
        expect(Array.from(e.stack), label).toEqual(LOOKUP_CASE.stack);
        expect(Array.from(e.queue), label).toEqual(LOOKUP_CASE.queue);
        expect(Array.from(e.sequenceNumber), label).toEqual(LOOKUP_CASE.sequenceNumber);
        expect(r.eventsLost, label).toBe(LOOKUP_CASE.eventsLost);
        expect(
          r.warnings.map((w) => w.code),
          label,
        ).toEqual(codes);
        expect(r.queueCount, label).toBe(3);
        walker.dispose?.();
      }
    }
  });

  it("readers one after another on one walker each start from empty lookup tables", async () => {
    const walker = (await nettraceEngine("wasm")).walker;
    const first = readNettrace(syntheticLookups(), { walker });
    readNettrace(syntheticV4Uncompressed(), { walker });
    const again = readNettrace(syntheticLookups(), { walker });
    expect(first.events.metadata.length).toBe(LOOKUP_CASE.metadata.length);
    expect(plain(again)).toEqual(plain(first));
    walker.dispose?.();
  });

  it("batches of 1, 2 and 5 rows (the walk resumed within a block) give the file one batch gives, on both cores", async () => {
    for (const [label, bytes] of samples()) {
      const want = plain(readNettrace(bytes));
      for (const cap of [1, 2, 5]) {
        const core = await instantiateCore();
        const walkers: [string, NettraceWalker][] = [
          ["wasm", new CoreWalker(core as unknown as NettraceWalkCore, cap)],
          ["js", jsNettraceWalker(cap)],
        ];
        for (const [engine, walker] of walkers) {
          expect(plain(readNettrace(bytes, { walker })), `${label}, ${engine}, ${cap} rows a batch`).toEqual(want);
          walker.dispose?.();
        }
      }
    }
  });

  it("a disposed walker refuses to walk (the reader reports it as an internal error)", async () => {
    const w = await nettraceWalker("wasm");
    w.dispose?.();
    const r = readNettrace(syntheticV6(), { walker: w });
    expect(r.error?.code).toBe(NE_INTERNAL);
    expect(r.error?.message).toMatch(/disposed/);
  });
});

/**
 * TraceEvent's dispatch order (EventCache) the plain way, for the core's heap to be checked against:
 * one queue per capture thread; a sorted event lets every queued event earlier than it go, then goes;
 * a sequence point and the end let all go; the earliest head goes first, of equal heads the queue
 * that became non-empty first (a linear search over the heads).
 */
function orderByHand(file: NettraceFile): number[] {
  const ev = file.events;
  const n = ev.length;
  if (file.header.formatVersion <= 3) return Array.from({ length: n }, (_, i) => i);
  const queues = new Map<bigint, { rows: number[]; at: number; since: number }>();
  const out: number[] = [];
  let clock = 0;
  const release = (until: number) => {
    for (;;) {
      let best: { rows: number[]; at: number; since: number } | undefined;
      for (const q of queues.values()) {
        if (q.at === q.rows.length) continue;
        if (!best) best = q;
        else {
          const a = ev.timestamp[q.rows[q.at]],
            b = ev.timestamp[best.rows[best.at]];
          if (a < b || (a === b && q.since < best.since)) best = q;
        }
      }
      if (!best) return;
      const row = best.rows[best.at];
      if (until >= 0 && !(ev.timestamp[row] < ev.timestamp[until])) return;
      out.push(row);
      best.at++;
    }
  };
  const points = Array.from(file.sequencePoints.offset);
  for (let i = 0; i < n; i++) {
    while (points.length && points[0] < ev.blockOffset[i]) {
      release(-1);
      points.shift();
    }
    if (ev.flags[i] & 1) {
      release(i);
      out.push(i);
      continue;
    }
    let q = queues.get(ev.captureThreadId[i]);
    if (!q) queues.set(ev.captureThreadId[i], (q = { rows: [], at: 0, since: 0 }));
    if (q.at === q.rows.length) q.since = clock++;
    q.rows.push(i);
  }
  release(-1);
  return out;
}

/** The event table of a read file on `engine`, `chunkRows` rows a call. */
async function tableOf(file: NettraceFile, engine: "wasm" | "js", chunkRows?: number): Promise<EventTableOf> {
  const core = await nettraceEngine(engine);
  const types = new Map<string, number>();
  try {
    return eventTableOf(core.rows, file, {
      ptr: file.header.pointerSize,
      providerOf: Int32Array.from(file.metadata, (_, m) => m % 3),
      unknownProvider: 3,
      typeOf: (p, id, v, op) => {
        const key = `${p}/${id}/${v}/${op}`;
        if (!types.has(key)) types.set(key, types.size);
        return types.get(key)!;
      },
      chunkRows,
    });
  } finally {
    core.dispose();
  }
}

describe("EventPipe event table: dispatch order and rows on both engines", () => {
  const cases = (): [string, Uint8Array][] => [...samples(), ...corpusTraces().map((f): [string, Uint8Array] => [f, load(f)])];
  it("rows in the order a plain EventCache gives; the same table on both engines and in chunks of 997 rows", async () => {
    let checked = 0;
    for (const [label, bytes] of cases()) {
      const file = readNettrace(bytes);
      const want = orderByHand(file);
      const t = await tableOf(file, "wasm");
      expect(t.n, label).toBe(file.events.length);
      // (a payload offset names its event)
      const got = Array.from(t.events.payloadOffset, (o) => o - 8);
      expect(got.join(","), label).toBe(want.map((i) => file.events.payloadOffset[i]).join(","));
      expect(Array.from(t.events.timestamp).join(","), label).toBe(want.map((i) => file.events.timestamp[i]).join(","));
      expect(Array.from(t.metadataOfRow).join(","), label).toBe(want.map((i) => file.events.metadata[i]).join(","));
      const all = JSON.stringify(plain(t));
      expect(JSON.stringify(plain(await tableOf(file, "js"))), `${label}, js`).toBe(all);
      expect(JSON.stringify(plain(await tableOf(file, "wasm", 997))), `${label}, 997 rows a call`).toBe(all);
      expect(JSON.stringify(plain(await tableOf(file, "js", 997))), `${label}, js, 997 rows a call`).toBe(all);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(HAVE_NETTRACE ? 10 : 2);
  });

  it("a window in time order keeps the file's order; ties across queues or with a sorted event take the EventCache's", async () => {
    const { generateNettrace } = await import("../dist/bindings/generator/index.js");
    const file = readNettrace(generateNettrace({ targetBytes: Infinity, fileBytes: 1 << 20, samples: true, seed: 5, version: 5 }).bytes);
    const ev = file.events;
    const n = ev.length;
    expect(file.queueCount).toBeGreaterThan(2);
    const identity = Array.from({ length: n }, (_, i) => i);
    let queueRun = 0;
    // (each variant sets the timestamps and sorted flags; `inOrder`: whether the EventCache gives the file's order)
    const variants: [string, (i: number) => bigint, (i: number) => number, boolean][] = [
      ["strictly increasing", (i) => BigInt(i) * 10n, () => 0, true],
      ["ties within one queue's run", (i) => BigInt(i > 0 && ev.queue[i] !== ev.queue[i - 1] ? ++queueRun : queueRun), () => 0, true],
      ["ties across queues", (i) => BigInt(i >> 1), () => 0, false],
      [
        "a sorted event tied with a queued one of its queue",
        (i) => BigInt(i > 0 && ev.queue[i] !== ev.queue[i - 1] ? ++queueRun : queueRun),
        (i) => (i > 0 && ev.queue[i] === ev.queue[i - 1] && i % 3 === 0 ? 1 : 0),
        false,
      ],
      ["timestamps going back", (i) => BigInt(n - i), () => 0, false],
    ];
    for (const [label, ts, sorted, inOrder] of variants) {
      queueRun = 0;
      for (let i = 0; i < n; i++) {
        ev.timestamp[i] = ts(i);
        ev.flags[i] = (ev.flags[i] & ~1) | sorted(i);
      }
      const want = orderByHand(file);
      expect(want.join(",") === identity.join(","), label).toBe(inOrder);
      for (const engine of ["wasm", "js"] as const) {
        const t = await tableOf(file, engine, 997);
        expect(Array.from(t.events.payloadOffset, (o) => o - 8).join(","), `${label}, ${engine}`).toBe(want.map((i) => ev.payloadOffset[i]).join(","));
      }
    }
  });

  it("stacks and related activities as extended items; processors only where the capture thread is the event's own", async () => {
    for (const [label, bytes] of cases()) {
      const file = readNettrace(bytes);
      const want = rowsByHand(file);
      const t = await tableOf(file, "js", 997);
      const got = Array.from(t.ext.row, (row, e) => [row, t.ext.type[e], t.ext.size[e], t.ext.offset[e]]);
      expect(got.join(";"), label).toBe(want.ext.join(";"));
      expect(Array.from(t.events.processor).join(","), label).toBe(want.processor.join(","));
    }
  });
});

/**
 * What the rows of `file` in the order a plain EventCache gives have beside the reader's columns, worked
 * out here: extended items (row, type, size, offset; a stack's item 8 bytes before its frames, at the
 * table's base 8 over file offsets), processors,
 * EVENT_HEADER flags (EXTENDED_INFO where a row has an item) and process ids (a V6 thread's, else the file's).
 */
function rowsByHand(
  file: NettraceFile,
  stackAt = (s: number) => 8 + file.stacks.offset[s] - 8,
): { ext: number[][]; processor: number[]; flags: number[]; pid: number[] } {
  const order = orderByHand(file);
  const ev = file.events;
  const v6 = file.header.formatVersion === 6;
  const pidOf = new Map(file.threads.map((th) => [th.index, Number(th.osProcessId ?? BigInt(file.header.processId))]));
  const out = { ext: [] as number[][], processor: [] as number[], flags: [] as number[], pid: [] as number[] };
  for (let r = 0; r < order.length; r++) {
    const i = order[r];
    const items = out.ext.length;
    const related = ev.relatedActivityIdOffset[i];
    if (related) out.ext.push([r, 1, 16, related + 8]);
    const m = file.metadata[ev.metadata[i]];
    const drops =
      m &&
      (m.providerName === "Microsoft-Windows-DotNETRuntimeRundown" ||
        (m.providerName === "Microsoft-Windows-DotNETRuntime" && ((m.eventId >= 140 && m.eventId <= 144) || m.eventId === 190)));
    const s = ev.stack[i];
    if (s >= 0 && !drops) out.ext.push([r, file.header.pointerSize === 4 ? 5 : 6, 8 + file.stacks.byteLength[s], stackAt(s)]);
    const own = v6 || ev.threadId[i] === ev.captureThreadId[i];
    const proc = ev.processorNumber[i];
    out.processor.push(own && proc >= 0 && proc <= 0xfffe ? proc : 0xffff);
    out.flags.push((file.header.pointerSize === 4 ? 0x20 : 0x40) | (out.ext.length > items ? 1 : 0));
    out.pid.push(v6 ? (pidOf.get(ev.threadId[i]) ?? file.header.processId) : file.header.processId);
  }
  return out;
}

describe("EventPipe typed .NET tables filled as each walk places its rows, or chunk by chunk where the rows are made", () => {
  it("equal the TypeScript engine's, filled once over the whole store: as placed (windows in the file's order), in chunks of 997 rows and of a million", async () => {
    const { nettraceData } = await import("../dist/bindings/decode/eventpipe/data.js");
    const { exactBlock } = await import("../dist/bindings/decode/result/clr-blocks.js");
    const typedOf = (d: Awaited<ReturnType<typeof nettraceData>>): string[] => {
      const out: string[] = [];
      d.clr?.blocks.forEach((b, t) => {
        const count = d.clr!.counts[t];
        if (!b || !count) return;
        const block = exactBlock(t, count, d.clr!.caps ? d.clr!.caps[t] : count, b);
        out.push(`${t}:${count}:${createHash("sha1").update(block).digest("hex")}`);
      });
      return out;
    };
    let typedFiles = 0;
    const { generateNettrace } = await import("../dist/bindings/generator/index.js");
    const generated = ([5, 6] as const).map((version): [string, Uint8Array] => [
      `generated V${version}`,
      generateNettrace({ targetBytes: Infinity, fileBytes: 3 << 20, samples: true, seed: 11, version }).bytes,
    ]);
    for (const [label, bytes] of [...generated, ...samples(), ...corpusTraces().map((f): [string, Uint8Array] => [f, load(f)])]) {
      // (the oracle: the TypeScript engine fills the typed tables once the byte store is made, from the type fields the rows' event types give)
      const whole = await nettraceData(bytes, { engine: "js" });
      const want = typedOf(whole);
      for (const [chunkRows, placed] of [
        [997, false],
        [undefined, false],
        [997, true],
        [undefined, true],
      ] as const) {
        const how = `${label}, ${chunkRows ?? "default"} rows a chunk${placed ? ", as placed" : ""}`;
        const got = await nettraceData(bytes, { engine: "wasm" }, { chunkRows, placed });
        expect(got.clrRows, how).toBe(whole.clrRows);
        expect(typedOf(got), how).toEqual(want);
        got.release?.();
      }
      if (want.length) typedFiles++;
      whole.release?.();
    }
    expect(typedFiles).toBeGreaterThanOrEqual(HAVE_NETTRACE ? 4 : 2);
  });
});

describe("EventPipe typed .NET tables as placed", () => {
  it("are taken for every window: as they are where its order is the file's, put in its order where it is not", async () => {
    const { nettraceData } = await import("../dist/bindings/decode/eventpipe/data.js");
    const { PlacedFiller } = await import("../dist/bindings/decode/eventpipe/clr.js");
    const { generateNettrace } = await import("../dist/bindings/generator/index.js");
    const { take } = PlacedFiller.prototype;
    let inOrder = 0,
      reordered = 0,
      refused = 0;
    PlacedFiller.prototype.take = function (this: InstanceType<typeof PlacedFiller>, ...args: Parameters<typeof take>) {
      const filled = take.apply(this, args);
      if (filled < 0) refused++;
      else if (args[4]) reordered++;
      else inOrder++;
      return filled;
    };
    // (the oracle: the TypeScript engine, which fills the typed tables once the trace's rows are made)
    const count = async (bytes: Uint8Array): Promise<{ inOrder: number; reordered: number; refused: number }> => {
      inOrder = reordered = refused = 0;
      const got = await nettraceData(bytes, { engine: "wasm" });
      const oracle = await nettraceData(bytes, { engine: "js" });
      expect(got.clrRows).toBe(oracle.clrRows);
      got.release?.();
      oracle.release?.();
      return { inOrder, reordered, refused };
    };
    try {
      // (the generator writes each window's events in time order)
      const generated = await count(generateNettrace({ targetBytes: Infinity, fileBytes: 3 << 20, samples: true, seed: 5, version: 5 }).bytes);
      expect(generated).toEqual({ inOrder: 1, reordered: 0, refused: 0 });
      // (a .NET Core 3.0 file whose windows are mostly not in time order: EventCache orders them; the
      // tables' equality with the oracle's, block for block, is the test above)
      if (HAVE_NETTRACE) {
        const corpus = await count(load("eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"));
        expect(corpus.reordered).toBeGreaterThan(0);
        expect(corpus.refused).toBe(0);
      }
    } finally {
      PlacedFiller.prototype.take = take;
    }
  });
});

describe("EventPipe columns not stored, made when first read", () => {
  it("keywords and level are each row's metadata's, event ids its metadata's, the header type the pointer size's, task, channel and header length 0", async () => {
    const { nettraceData } = await import("../dist/bindings/decode/eventpipe/data.js");
    const { generateNettrace } = await import("../dist/bindings/generator/index.js");
    const files: [string, Uint8Array][] = [
      ["generated V5", generateNettrace({ targetBytes: Infinity, fileBytes: 2 << 20, samples: true, seed: 3, version: 5 }).bytes],
      ...samples(),
      ...corpusTraces().map((f): [string, Uint8Array] => [f, load(f)]),
    ];
    let rows = 0,
      activities = 0,
      v6Activities = 0;
    for (const [label, bytes] of files) {
      const ht = readNettrace(bytes).header.pointerSize === 4 ? 0x12 : 0x13; // EVENT_HEADER32 / 64
      for (const engine of ["wasm", "js"] as const) {
        const d = await nettraceData(bytes, { engine });
        const md = d.nettrace.metadata;
        const of = d.nettrace.metadataOfRow;
        const n = d.eventCount;
        const want = {
          keywords: Array.from(of, (m) => (m >= 0 ? BigInt.asUintN(64, md[m].keywords) : 0n)),
          level: Array.from(of, (m) => (m >= 0 ? md[m].level : 0)),
          eventId: Array.from(of, (m) => (m >= 0 ? md[m].eventId & 0xffff : 0)),
        };
        const e = d.events;
        expect(Array.from(e.keywords), `${label}, ${engine}`).toEqual(want.keywords);
        expect(Array.from(e.level), `${label}, ${engine}`).toEqual(want.level);
        expect(Array.from(e.eventId), `${label}, ${engine}`).toEqual(want.eventId);
        expect(e.headerType.every((x) => x === ht) && e.headerType.length === n, `${label}, ${engine}`).toBe(true);
        expect(e.task.every((x) => x === 0) && e.channel.every((x) => x === 0) && e.headerLength.every((x) => x === 0), `${label}, ${engine}`).toBe(true);
        // (activity ids, kept for the rows that have one: the same offsets as the reader's events, file offsets in a
        // file held whole, in another order; V6 ids are the label lists', which the walk looks up as it places the
        // rows and the reader read alone looks up itself; related ones are extended items)
        const file = readNettrace(bytes);
        const fromReader = Array.from(file.events.activityIdOffset)
          .filter((o) => o !== 0)
          .sort((a, b) => a - b);
        expect(
          Array.from(d.nettrace.activityOfRow)
            .filter((o) => o !== 0)
            .sort((a, b) => a - b),
          `${label}, ${engine}`,
        ).toEqual(fromReader);
        activities += fromReader.length;
        const relatedFromReader = Array.from(file.events.relatedActivityIdOffset)
          .filter((o) => o !== 0)
          .sort((a, b) => a - b);
        const related = Array.from(d.ext.offset.subarray(0, d.extCount))
          .filter((_, k) => d.ext.type[k] === 1)
          .sort((a, b) => a - b);
        expect(related, `${label}, ${engine}`).toEqual(relatedFromReader);
        if (file.header.formatVersion === 6) v6Activities += fromReader.length + relatedFromReader.length;
        rows += n;
        d.release?.();
      }
    }
    expect(rows).toBeGreaterThan(10_000);
    if (HAVE_NETTRACE) expect(activities).toBeGreaterThan(1000);
    // (the synthetic V6 file's label lists: an activity id and a related one, on both engines)
    expect(v6Activities).toBeGreaterThanOrEqual(4);
  });

  it("flags are the pointer size's, with EXTENDED_INFO on rows with an extended item; process ids a V6 thread's or the file's, in chunks of any size", async () => {
    const { nettraceData } = await import("../dist/bindings/decode/eventpipe/data.js");
    const { generateNettrace } = await import("../dist/bindings/generator/index.js");
    const files: [string, Uint8Array][] = [
      ["generated V6", generateNettrace({ targetBytes: Infinity, fileBytes: 1 << 20, samples: true, seed: 5, version: 6 }).bytes],
      ["synthetic V6, a thread of another process", syntheticV6(777)],
      // (an index past those the core looks up by index: searched in the thread table)
      ["synthetic V6, a thread of another process at index 70,000", syntheticV6(777, 70_000)],
      ...samples(),
      ...corpusTraces().map((f): [string, Uint8Array] => [f, load(f)]),
    ];
    let others = 0,
      extended = 0;
    for (const [label, bytes] of files) {
      const file = readNettrace(bytes);
      const want = rowsByHand(file);
      // (rows a chunk: one and two on the small files, where the process id column is made mid-window)
      const small = file.events.length < 5000;
      for (const [engine, chunkRows] of [
        ["wasm", undefined],
        ["js", undefined],
        ["wasm", small ? 1 : 997],
        ["js", small ? 2 : 997],
      ] as const) {
        const d = await nettraceData(bytes, { engine }, { chunkRows });
        const at = `${label}, ${engine}, ${chunkRows ?? "default"} rows a chunk`;
        expect(Array.from(d.events.flags), at).toEqual(want.flags);
        expect(Array.from(d.events.pid), at).toEqual(want.pid);
        d.release?.();
      }
      others += want.pid.filter((p) => p !== file.header.processId).length;
      extended += want.flags.filter((f) => f & 1).length;
    }
    expect(others).toBe(2);
    expect(extended).toBeGreaterThan(HAVE_NETTRACE ? 10_000 : 100);
  });

  it("V6 rows whose label list is not defined: the reader's warning and no activity id, in place as read alone, on both engines", async () => {
    const { nettraceData } = await import("../dist/bindings/decode/eventpipe/data.js");
    const bytes = syntheticV6(undefined, 2, 5);
    const alone = readNettrace(bytes);
    const undefinedList = alone.warnings.filter((w) => /label list 5 not defined/.test(w.message));
    // (the compressed block's two events carry list 5: its first sets it, the second keeps it)
    expect(undefinedList.length).toBe(2);
    for (const engine of ["wasm", "js"] as const) {
      const d = await nettraceData(bytes, { engine });
      expect(
        d.nettrace.warnings.filter((w) => /label list 5 not defined/.test(w.message)).map((w) => [w.code, w.offset]),
        engine,
      ).toEqual(undefinedList.map((w) => [w.code, w.offset]));
      // (the uncompressed event's list 2 still gives its related activity id; no row has an activity id)
      expect(
        Array.from(d.nettrace.activityOfRow).filter((o) => o !== 0),
        engine,
      ).toEqual([]);
      expect(Array.from(d.ext.type.subarray(0, d.extCount)).filter((t) => t === 1).length, engine).toBe(1);
      d.release?.();
    }
  });

  it("rows past the type table's 65,535 types keep their own provider, event id, version and opcode: as placed, chunk by chunk, on both engines", async () => {
    const { nettraceData } = await import("../dist/bindings/decode/eventpipe/data.js");
    const { NettraceWriter } = await import("../dist/bindings/generator/nettrace-writer.js");
    const { EVENT_TYPE_NONE, MAX_EVENT_TYPES } = await import("../dist/assembly/codes.js");
    const w = new NettraceWriter({ version: 5 });
    // (65,600 kinds, each an event; then ten of the first kinds again and one new kind)
    const kinds = 65_600;
    const ids: number[] = [];
    for (let k = 0; k < kinds; k++) ids.push(w.defineEvent({ providerName: `P${k % 3}`, eventId: k & 0xffff, version: k >>> 16, opcode: (k * 7) & 0xff }));
    let ts = 1000;
    const event = (metadataId: number) => w.writeEvent({ metadataId, timestamp: ts++, threadId: 5 });
    for (const id of ids) event(id);
    for (let k = 0; k < 10; k++) event(ids[k]);
    event(w.defineEvent({ providerName: "P9", eventId: 7, version: 3, opcode: 11 }));
    const bytes = w.finish();
    const file = readNettrace(bytes);
    const md = file.metadata;
    const want = { eventId: [] as number[], version: [] as number[], opcode: [] as number[] };
    for (const m of file.events.metadata) {
      want.eventId.push(md[m].eventId & 0xffff);
      want.version.push(md[m].version);
      want.opcode.push(md[m].opcode ?? 0);
    }
    let providers: number[] | undefined;
    for (const [engine, chunkRows, placed] of [
      ["wasm", undefined, true],
      ["wasm", 997, false],
      ["js", undefined, undefined],
      ["js", 997, undefined],
    ] as const) {
      const d = await nettraceData(bytes, { engine }, { chunkRows, placed });
      const at = `${engine}, ${chunkRows ?? "default"} rows a chunk${placed ? ", as placed" : ""}`;
      const e = d.events;
      expect(e.eventType.filter((t) => t === EVENT_TYPE_NONE).length, at).toBe(kinds - MAX_EVENT_TYPES + 1);
      expect(Array.from(e.eventId), at).toEqual(want.eventId);
      expect(Array.from(e.version), at).toEqual(want.version);
      expect(Array.from(e.opcode), at).toEqual(want.opcode);
      // (a provider index a name: the same on every engine and chunking, three providers and P9)
      expect(new Set(e.provider).size, at).toBe(4);
      if (providers) expect(Array.from(e.provider), at).toEqual(providers);
      else providers = Array.from(e.provider);
      d.release?.();
    }
  });
});
