// A subset of rows in time order (EventTable.timeOrderOf, which a stream in time order uses for the
// rows it was asked for) must be exactly the whole trace's timeOrder() with the other rows left out,
// ties included, also where a processor's records or buffers are out of order.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { inTimeOrder, openTrace, streamTrace, type Trace } from "../dist/bindings/index.js";
import { generateSession, generateTrace } from "../dist/bindings/generator/generate.js";
import { generateNettrace } from "../dist/bindings/generator/generate-nettrace.js";
import { mulberry32 } from "../dist/bindings/generator/random.js";
import { walkRecords } from "./helpers/mutate.js";
import { CORPUS, HAVE_CORPUS, corpusFiles, etlPath } from "./helpers/shared.js";

const HDR = 0x48;

/** Subsets of a trace's rows: every 7th, one provider's, about a tenth at random, a run of ties. */
function subsets(t: Trace, seed: number): [string, Uint32Array][] {
  const n = t.events.length;
  const rand = mulberry32(seed);
  const every = Uint32Array.from({ length: Math.ceil(n / 7) }, (_, k) => k * 7);
  const random = Uint32Array.from(Array.from({ length: n }, (_, r) => r).filter(() => rand() < 0.1));
  const busiest =
    [...t.providers].map((_, p) => p).sort((a, b) => t.events.provider.filter((x) => x === b).length - t.events.provider.filter((x) => x === a).length)[0] ?? 0;
  const provider = Uint32Array.from(Array.from({ length: n }, (_, r) => r).filter((r) => t.events.provider[r] === busiest));
  // rows whose timestamp another row has too (their order is decided by processor, then row)
  const seen = new Map<bigint, number>();
  for (let r = 0; r < n; r++) seen.set(t.events.timestamp[r], (seen.get(t.events.timestamp[r]) ?? 0) + 1);
  const ties = Uint32Array.from(Array.from({ length: n }, (_, r) => r).filter((r) => seen.get(t.events.timestamp[r])! > 1 && rand() < 0.7));
  return [
    ["every 7th", every],
    ["random tenth", random],
    ["busiest provider", provider],
    ["tied timestamps", ties],
    ["none", new Uint32Array(0)],
  ];
}

async function expectSubsetOrders(input: Uint8Array | { name: string; input: Uint8Array }[], what: string, seed = 1): Promise<void> {
  const whole = await openTrace(input as Uint8Array);
  const order = whole.events.timeOrder();
  // (a second copy, whose time order has not been made: timeOrderOf orders only the rows asked for)
  const fresh = await openTrace(input as Uint8Array);
  for (const [name, rows] of subsets(whole, seed)) {
    const wanted = new Uint8Array(whole.events.length);
    for (const r of rows) wanted[r] = 1;
    const expected = Array.from(order.filter((r) => wanted[r] === 1));
    expect(Array.from(fresh.events.timeOrderOf(rows)), `${what}: ${name}`).toEqual(expected);
    // and rows given in any order
    expect(Array.from(fresh.events.timeOrderOf(rows.slice().reverse())), `${what}: ${name}, reversed`).toEqual(expected);
  }
  whole.dispose();
  fresh.dispose();
}

const generated = () => generateTrace({ targetBytes: 2 << 20, seed: 11, processors: 4, bufferSize: 16384 });

describe("time order of some rows", () => {
  it("a generated trace, and a session of two files", async () => {
    await expectSubsetOrders(generated(), "generated");
    const session = generateSession({ targetBytes: 2 << 20, seed: 12, samples: true }).map((f) => ({ name: f.name, input: f.bytes }));
    await expectSubsetOrders(session, "session");
  });

  it("the whole order is the rows sorted by (timestamp, processor, row): FILETIME-sized timestamps, ties across processors", async () => {
    const bytes = generated();
    const t = await openTrace(bytes);
    // every record's timestamp (at 0x10 in its header) moved past 2^60 and rounded down to 1,000 ticks:
    // each processor's records stay in time order, and records of several processors share timestamps
    for (let k = 0; k < t.bufferCount; k++) {
      const b = t.buffer(k);
      const area = bytes.subarray(b.fileOffset + HDR, b.fileOffset + b.filledBytes);
      const view = new DataView(area.buffer, area.byteOffset, area.length);
      for (const r of walkRecords(area)) {
        if (r.kind !== "event" && r.kind !== "system") continue;
        const ts = view.getBigInt64(r.at + 0x10, true);
        view.setBigInt64(r.at + 0x10, (1n << 60n) + ts - (ts % 1000n), true);
      }
    }
    t.dispose();
    const changed = await openTrace(bytes);
    const ts = changed.events.timestamp,
      proc = changed.events.processor;
    const tied = new Map<bigint, Set<number>>();
    for (let r = 0; r < ts.length; r++) (tied.get(ts[r]) ?? tied.set(ts[r], new Set()).get(ts[r])!).add(proc[r]);
    // (the precondition: timestamps past 2^53, and ties between processors)
    expect(ts[0]).toBeGreaterThan(1n << 60n);
    expect([...tied.values()].filter((p) => p.size > 1).length).toBeGreaterThan(100);
    const sorted = Array.from({ length: ts.length }, (_, r) => r).sort((a, b) => (ts[a] < ts[b] ? -1 : ts[a] > ts[b] ? 1 : proc[a] - proc[b] || a - b));
    expect(Array.from(changed.events.timeOrder())).toEqual(sorted);
    changed.dispose();
    await expectSubsetOrders(bytes, "FILETIME-sized ties", 4);
  });

  it("a buffer whose records are out of time order (the whole trace's order falls back to a sort)", async () => {
    const bytes = generated();
    const t = await openTrace(bytes);
    // the buffer's first EVENT_HEADER record gets a timestamp after its last one
    const b = t.buffer(5);
    const area = bytes.subarray(b.fileOffset + HDR, b.fileOffset + b.filledBytes);
    const events = walkRecords(area).filter((r) => r.kind === "event");
    expect(events.length).toBeGreaterThan(2);
    const view = new DataView(area.buffer, area.byteOffset, area.length);
    const last = view.getBigInt64(events[events.length - 1].at + 0x10, true);
    view.setBigInt64(events[0].at + 0x10, last + 1000n, true);
    t.dispose();
    const changed = await openTrace(bytes);
    const ts = changed.events.timestamp;
    const order = changed.events.timeOrder();
    // (the precondition: the stream is out of order, so file order within it is not time order)
    expect(ts[b.firstRow]).toBeGreaterThan(ts[b.firstRow + b.rowCount - 1]);
    for (let i = 1; i < order.length; i++) expect(ts[order[i - 1]] <= ts[order[i]]).toBe(true);
    changed.dispose();
    await expectSubsetOrders(bytes, "records out of order", 2);
  });

  it("a processor's buffers out of file order (ties then go by the stream's order)", async () => {
    const bytes = generated();
    const t = await openTrace(bytes);
    // two buffers of one processor, swapped in the file (their sequence numbers go with them)
    const p = t.buffer(3).processor;
    let j = 4;
    while (t.buffer(j).processor !== p) j++;
    const a = t.buffer(3),
      b = t.buffer(j);
    expect(a.bufferSize).toBe(b.bufferSize);
    const first = bytes.slice(a.fileOffset, a.fileOffset + a.bufferSize);
    bytes.copyWithin(a.fileOffset, b.fileOffset, b.fileOffset + b.bufferSize);
    bytes.set(first, b.fileOffset);
    t.dispose();
    const swapped = await openTrace(bytes);
    expect(swapped.buffer(3).sequence).toBeGreaterThan(swapped.buffer(j).sequence);
    swapped.dispose();
    await expectSubsetOrders(bytes, "buffers swapped", 3);
  });

  it.runIf(HAVE_CORPUS)(
    "every corpus file",
    async () => {
      let k = 10;
      for (const f of corpusFiles()) await expectSubsetOrders(new Uint8Array(readFileSync(etlPath(f))), f, k++);
    },
    120_000,
  );
});

/**
 * A stream of an EventPipe file in time order: its batches have no buffers (each ends at a sequence
 * point), so each is given out as the next comes, at most two held, in the whole trace's order.
 */
async function expectEventPipeStreamOrder(bytes: Uint8Array, what: string): Promise<void> {
  const whole = await openTrace(bytes);
  const order = Array.from(whole.events.timeOrder());
  whole.dispose();
  for (const batchBytes of [64 << 10, 1 << 20]) {
    const stats = { late: 0, maxHeld: 0 };
    const got: number[] = [];
    let batches = 0;
    const stream = streamTrace(bytes, { batchBytes });
    for await (const run of inTimeOrder(stream, { release: true }, stats)) for (const r of run.rows) got.push(run.firstRow + r);
    for await (const _ of streamTrace(bytes, { batchBytes })) batches++;
    expect(got, `${what}, batches of ${batchBytes} bytes`).toEqual(order);
    expect(stats.late, what).toBe(0);
    // (before, every batch of such a file was held to the end: as many as it has)
    expect(stats.maxHeld, `${what}: ${batches} batches`).toBeLessThanOrEqual(2);
    if (batchBytes === 64 << 10) expect(batches, what).toBeGreaterThan(2);
  }
}

describe("a stream in time order (inTimeOrder) of an EventPipe file", () => {
  it("generated V5, V6 and thread-block files, each batch given out as the next comes", async () => {
    for (const [what, opts] of [
      ["V5", { version: 5 as const }],
      ["V6", { version: 6 as const }],
      ["V5, each thread's events in blocks of their own", { version: 5 as const, threadBlocks: true }],
    ] as const) {
      const { bytes } = generateNettrace({ ...opts, targetBytes: Infinity, fileBytes: 3 << 20, sequencePointBytes: 256 << 10, seed: 7 });
      await expectEventPipeStreamOrder(bytes, what);
    }
  });

  it.runIf(HAVE_CORPUS)("the corpus .nettrace files", async () => {
    for (const f of ["eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", "mixed_managed_external_samples.nettrace", "only_managed_samples.nettrace"])
      await expectEventPipeStreamOrder(new Uint8Array(readFileSync(join(CORPUS, "nettrace", f))), f);
  });
});
