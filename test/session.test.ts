// Several files of one session merged into one trace (openTrace, streamTrace, the CLI), as
// TraceEvent's MergeAll reads them. The oracle of the generated sessions is the same trace written
// as one file: the merged rows, in time order, are its rows (the second file's own header record
// aside), and every analysis comes out the same. On the corpus, the one real PerfView session
// (gcevents.etl is its PerfViewData.etl, gcrundownevents.etl its PerfViewData.clrRundown.etl)
// merges with each file's rows equal to its reference dump.

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTrace, streamTrace, inTimeOrder, EtlFormatError, type Trace } from "../dist/bindings/index.js";
import { generateSession, generateTrace, type GenerateOptions } from "../dist/bindings/generator/generate.js";
import { gcStats, cpuProfile, toFolded, jitStats } from "../dist/bindings/analysis/index.js";
import { HAVE_CORPUS, etlPath, referencePath } from "./helpers/shared.js";
import { readReference, referenceAsJson, timestampOf } from "./helpers/reference.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", maxBuffer: 1 << 30 });

const OPTS: GenerateOptions = { targetBytes: 3 << 20, samples: true, seed: 5 };
const HEADER = "Windows Kernel/EventTrace";

/** Every row but logfile-header records, in time order, as comparable text. */
function timeline(t: Trace): string[] {
  const out: string[] = [];
  const e = t.events;
  for (const r of e.timeOrder()) {
    const name = t.names.ofRow(r);
    if (name === HEADER) continue;
    out.push(`${e.timestamp[r]} ${name} ${e.pid[r]} ${e.tid[r]} ${e.processor[r]} ${Buffer.from(e.row(r).payload).toString("hex")}`);
  }
  return out;
}

const sessionInput = (opts: GenerateOptions) => generateSession(opts).map((f) => ({ name: f.name, input: f.bytes }));

describe("generated split sessions", () => {
  const cases: [string, GenerateOptions][] = [
    ["64-bit", OPTS],
    ["32-bit, compressed", { ...OPTS, pointerSize: 4, compress: true, seed: 9 }],
  ];
  for (const [label, opts] of cases) {
    it(`${label}: openTrace of the files is the single-file trace`, async () => {
      const files = generateSession(opts);
      expect(files.map((f) => f.name)).toEqual(["generated.etl", "generated.kernel.etl"]);
      const merged = await openTrace(files.map((f) => ({ name: f.name, input: f.bytes })));
      const whole = await openTrace(generateTrace(opts));
      expect(merged.complete).toBe(true);
      // one more row: the kernel file's own header record
      expect(merged.events.length).toBe(whole.events.length + 1);
      expect(merged.files.map((f) => [f.name, f.clock, f.info.loggerName])).toEqual([
        ["generated.etl", "anchor", "etw-wasm-generator"],
        ["generated.kernel.etl", "shared", "NT Kernel Logger"],
      ]);
      expect(merged.files[0].rowCount + merged.files[1].rowCount).toBe(merged.events.length);
      expect(merged.files.map((f) => f.info.eventCount)).toEqual(merged.files.map((f) => f.rowCount));
      // each row knows its file: the second file's rows are the kernel's
      const e = merged.events;
      const second = merged.files[1].firstRow;
      for (let r = 0; r < e.length; r++) {
        expect(merged.fileOf(r)).toBe(r < second ? 0 : 1);
        if (r >= second) expect(merged.providers.get(e.provider[r]).name).toBe("Windows Kernel");
        else if (r > 0) expect(merged.providers.get(e.provider[r]).name).toBe("Microsoft-Windows-DotNETRuntime");
      }
      // providers and event types are merged, not repeated per file
      const guids = [...merged.providers].map((p) => `${p.guid}/${p.group ?? ""}`);
      expect(new Set(guids).size).toBe(guids.length);
      expect(merged.providers.length).toBe(whole.providers.length);
      let counted = 0;
      for (let t = 0; t < merged.eventTypes.length; t++) counted += merged.eventTypes.count[t];
      expect(counted).toBe(merged.events.length);
      expect(timeline(merged)).toEqual(timeline(whole));
      // times on the session clock: the single file's
      expect(merged.info.startTime).toEqual(whole.info.startTime);
      const last = merged.events.timeOrder().at(-1)!;
      expect(merged.relativeMSec(merged.events.timestamp[last])).toBe(whole.relativeMSec(merged.events.timestamp[last]));
      // one process table, and the analyses of the single file
      expect(merged.processes.processName(4242, merged.events.timestamp[last])).toBe(whole.processes.processName(4242, merged.events.timestamp[last]));
      const json = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? String(x) : x));
      const gc = json(await gcStats(merged));
      expect(gc).toContain("PauseDurationMSec");
      expect(gc).toBe(json(await gcStats(whole)));
      expect(json(await jitStats(merged))).toBe(json(await jitStats(whole)));
      const folded = toFolded(cpuProfile(merged));
      expect(folded.length).toBeGreaterThan(1000);
      expect(folded).toBe(toFolded(cpuProfile(whole)));
    });
  }

  for (const engine of ["wasm", "js"] as const) {
    it(`streamTrace of the files (${engine}): batches of both files in time order, the merged trace's rows`, async () => {
      const input = sessionInput(OPTS);
      const merged = await openTrace(input);
      const stream = streamTrace(input, { engine, batchBytes: 64 << 10 });
      const got: string[] = [];
      let rows = 0;
      for await (const run of inTimeOrder(stream)) {
        for (const row of run.trace.events.cursor(run.rows)) {
          got.push(`${row.timestamp} ${run.trace.names.ofRow(row.index)} ${Buffer.from(row.payload).toString("hex")}`);
          rows++;
        }
      }
      const want: string[] = [];
      for (const r of merged.events.timeOrder())
        want.push(`${merged.events.timestamp[r]} ${merged.names.ofRow(r)} ${Buffer.from(merged.events.row(r).payload).toString("hex")}`);
      expect(rows).toBe(merged.events.length);
      expect(got).toEqual(want);
      const end = stream.end!;
      expect(end.complete).toBe(true);
      expect(end.eventCount).toBe(merged.events.length);
      expect(end.batchCount).toBeGreaterThan(4);
      expect(end.files.map((f) => [f.name, f.rowCount])).toEqual(merged.files.map((f) => [f.name, f.rowCount]));
      expect([...stream.filesWithRows]).toEqual([0, 1]);
      expect([...stream.endedFiles].sort()).toEqual([0, 1]);
      // (numbered in the order the batches met them)
      const ids = (ps: Iterable<{ guid: string; group?: string }>) => [...ps].map((p) => `${p.guid}/${p.group ?? ""}`).sort();
      expect(ids(end.providers)).toEqual(ids(merged.providers));
      let counted = 0;
      for (let t = 0; t < end.eventTypes.length; t++) counted += end.eventTypes.count[t];
      expect(counted).toBe(merged.events.length);
    });
  }

  it("a stream's batches say their file, and number providers alike across files", async () => {
    const stream = streamTrace(sessionInput(OPTS), { batchBytes: 64 << 10 });
    const seen = new Map<number, number>();
    let guidOf: string[] | undefined;
    for await (const b of stream) {
      seen.set(b.file, (seen.get(b.file) ?? 0) + b.events.length);
      const kernel = [...b.providers].some((p) => p.name === "Windows Kernel" && b.events.provider.includes(p.index) && p.group === "PerfInfo");
      if (kernel) expect(b.file).toBe(1);
      const guids = [...b.providers].map((p) => p.guid);
      // a provider keeps its index from batch to batch
      if (guidOf) expect(guids.slice(0, guidOf.length)).toEqual(guidOf);
      guidOf = guids;
    }
    expect([...seen.keys()].sort()).toEqual([0, 1]);
    expect(seen.get(0)! + seen.get(1)!).toBe(stream.end!.eventCount);
  });

  it('a file that is no trace rejects with its name; payloads: "source" is refused', async () => {
    const [user] = generateSession({ ...OPTS, targetBytes: 1 << 20 });
    const junk = new Uint8Array(8192).fill(7);
    await expect(
      openTrace([
        { name: "a.etl", input: user.bytes },
        { name: "junk.etl", input: junk },
      ]),
    ).rejects.toThrow(EtlFormatError);
    await expect(
      openTrace([
        { name: "a.etl", input: user.bytes },
        { name: "junk.etl", input: junk },
      ]),
    ).rejects.toThrow(/^junk\.etl: not an ETL file/);
    const stream = streamTrace([
      { name: "a.etl", input: user.bytes },
      { name: "junk.etl", input: junk },
    ]);
    await expect(
      (async () => {
        for await (const _ of stream) {
          /* */
        }
      })(),
    ).rejects.toThrow(/junk\.etl: not an ETL file/);
    await expect(
      openTrace(
        [
          { name: "a.etl", input: user.bytes },
          { name: "b.etl", input: user.bytes },
        ],
        { payloads: "source" },
      ),
    ).rejects.toThrow(TypeError);
  });

  it("a file cut short: its rows kept, the trace incomplete, the file named", async () => {
    const [user, kernel] = generateSession(OPTS);
    const cut = kernel.bytes.subarray(0, kernel.bytes.length - 65536 - 30_000);
    const t = await openTrace([
      { name: user.name, input: user.bytes },
      { name: "cut.kernel.etl", input: cut },
    ]);
    expect(t.complete).toBe(false);
    expect(t.incomplete!.reason).toBe("truncated-buffer");
    expect(t.incomplete!.message).toMatch(/^cut\.kernel\.etl: the input ends inside the buffer/);
    expect(t.files.map((f) => f.complete)).toEqual([true, false]);
    const whole = await openTrace(kernel.bytes);
    expect(t.files[1].rowCount).toBeGreaterThan(0);
    expect(t.files[1].rowCount).toBeLessThan(whole.events.length);
  });

  it("a file whose clock is not the session's is put on it through its own start time", async () => {
    // an unrelated trace: another start time, QPC at another frequency
    const { EtlWriter } = await import("../dist/bindings/generator/etl-writer.js");
    const w = new EtlWriter({ perfFreq: 3_000_000n, startTime: 133000000000000000n + 600_000_000n, anchor: 77_000_000_000n });
    for (let i = 0; i < 50; i++)
      w.classic(0, {
        headerType: 0x0a,
        guid: "11111111-2222-3333-4444-555555555555",
        opcode: 1,
        level: 4,
        version: 0,
        tid: 1,
        pid: 2,
        ts: 77_000_000_000n + BigInt(i) * 3_000_000n,
        payload: new Uint8Array(4),
      } as never);
    const other = w.finish();
    const [user] = generateSession(OPTS);
    const own = await openTrace(other);
    const t = await openTrace([
      { name: user.name, input: user.bytes },
      { name: "other.etl", input: other },
    ]);
    expect(t.files[1].clock).toBe("rebased");
    // each row of the other file is at the same instant on the session clock as on its own
    const first = t.files[1].firstRow;
    for (let i = 0; i < own.events.length; i++) {
      const a = t.toFiletime(t.events.timestamp[first + i]);
      const b = own.toFiletime(own.events.timestamp[i]);
      expect(Number(a - b)).toBeGreaterThanOrEqual(-1);
      expect(Number(a - b)).toBeLessThanOrEqual(1);
    }
    // 60 s after the session started
    expect(t.relativeMSec(t.events.timestamp[first + 1])).toBeCloseTo(60_000, 0);
  });
});

describe("the CLI on several files", () => {
  const dir = mkdtempSync(join(tmpdir(), "etw-session-"));
  const split = join(dir, "s.etl");
  const whole = join(dir, "whole.etl");
  const made = cli("generate", split, "--size", "2MiB", "--samples", "--split");
  writeFileSync(whole, generateTrace({ targetBytes: 2 << 20, samples: true, seed: 1 }));

  it("generate --split writes the session's files; --merge-all finds them", () => {
    expect(made.status).toBe(0);
    expect(made.stderr).toMatch(/s\.kernel\.etl/);
    const info = cli("info", split, "--merge-all");
    expect(info.status).toBe(0);
    expect(info.stdout).toMatch(/file 1: +.*s\.etl: \d+ records.*clock anchor/);
    expect(info.stdout).toMatch(/file 2: +.*s\.kernel\.etl: \d+ records.*NT Kernel Logger, clock shared/);
    const both = cli("info", split, join(dir, "s.kernel.etl"));
    expect(both.stdout).toBe(info.stdout);
    expect(cli("info", split, whole, "--merge-all").status).toBe(2);
  });

  it("every analysis of the files is the single file's", () => {
    for (const args of [
      ["gc", "--rollup", "--format", "csv"],
      ["jit", "--format", "csv"],
      ["methods", "--format", "csv"],
    ]) {
      const a = cli(args[0], split, join(dir, "s.kernel.etl"), ...args.slice(1));
      const b = cli(args[0], whole, ...args.slice(1));
      expect(a.status, a.stderr).toBe(0);
      expect(a.stdout.split("\n").length).toBeGreaterThan(2);
      expect(a.stdout).toBe(b.stdout);
    }
    const a = cli("cpu", split, "--merge-all", "--format", "folded", "-o", join(dir, "a.folded"));
    const b = cli("cpu", whole, "--format", "folded", "-o", join(dir, "b.folded"));
    expect(a.status, a.stderr).toBe(0);
    expect(b.status).toBe(0);
    expect(readFileSync(join(dir, "a.folded"), "utf8")).toBe(readFileSync(join(dir, "b.folded"), "utf8"));
  });

  it("events --format names [--tracelog]: TraceEvent's event names in time order", () => {
    const a = cli("events", split, "--merge-all", "--format", "names", "--tracelog");
    const b = cli("events", whole, "--format", "names", "--tracelog");
    expect(a.status).toBe(0);
    const la = a.stdout.trimEnd().split("\n"),
      lb = b.stdout.trimEnd().split("\n");
    // the kernel file's header record is the one more
    expect(la.filter((l) => l === "EventTrace")).toHaveLength(2);
    expect(la.filter((l) => l !== "EventTrace")).toEqual(lb.filter((l) => l !== "EventTrace"));
    // --tracelog leaves out the stack walks and the idle CPU samples; without it they are there, in order
    expect(la).not.toContain("StackWalk/Stack");
    const all = cli("events", split, "--merge-all", "--format", "names").stdout.trimEnd().split("\n");
    expect(all.filter((l) => l === "StackWalk/Stack").length).toBeGreaterThan(100);
    const dropped: string[] = [];
    let k = 0;
    for (const name of all) {
      if (k < la.length && la[k] === name) k++;
      else dropped.push(name);
    }
    expect(k).toBe(la.length);
    expect(new Set(dropped)).toEqual(new Set(["StackWalk/Stack", "PerfInfo/Sample"]));
    expect(la).toContain("PerfInfo/Sample");
    expect(la).toContain("GC/Start");
    expect(cli("events", whole, "--tracelog").status).toBe(2);
  });

  it("a file that is no trace: exit 1 and its name", () => {
    const junk = join(dir, "junk.etl");
    writeFileSync(junk, new Uint8Array(8192).fill(3));
    const r = cli("summary", split, junk);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/junk\.etl: not an ETL file/);
  });
});

describe.skipIf(!HAVE_CORPUS)("a real PerfView session: PerfViewData.etl + PerfViewData.clrRundown.etl", () => {
  const names = ["gcevents.etl", "gcrundownevents.etl"];
  it("each file's rows are its reference dump's, on one clock, in one time order", async () => {
    const t = await openTrace(names.map((n) => ({ name: n, input: readFileSync(etlPath(n)) })));
    expect(t.complete).toBe(true);
    expect(t.files.map((f) => [f.name, f.clock, f.info.loggerName])).toEqual([
      ["gcevents.etl", "anchor", "PerfViewSession"],
      ["gcrundownevents.etl", "shared", "PerfViewSessionRundown"],
    ]);
    const refs = await Promise.all(names.map((n) => readReference(referencePath(n))));
    expect(t.events.length).toBe(refs[0].events.length + refs[1].events.length);
    for (let f = 0; f < 2; f++) {
      const { firstRow, rowCount } = t.files[f];
      expect(rowCount).toBe(refs[f].events.length);
      for (let i = 0; i < rowCount; i++) {
        const row = t.events.row(firstRow + i);
        expect({ ...row.toJSON(), payloadHex: Buffer.from(row.payload.subarray(0, 64)).toString("hex") }).toEqual({
          ...referenceAsJson(refs[f].events[i]),
          payloadHex: refs[f].events[i].payload_hex,
        });
      }
    }
    // the merged time order is the order of the raw timestamps of both dumps (one QPC)
    const want = [...refs[0].events, ...refs[1].events].map(timestampOf).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(Array.from(t.events.timeOrder(), (r) => t.events.timestamp[r])).toEqual(want);
    // relative times from the first session's header (the rundown session started later)
    const t0 = timestampOf(refs[0].events[0]);
    const rundownFirst = t.files[1].firstRow + 1;
    const freq = Number(refs[0].file.perf_freq);
    expect(t.relativeMSec(t.events.timestamp[rundownFirst])).toBeCloseTo((Number(timestampOf(refs[1].events[1]) - t0) * 1000) / freq, 6);
    expect(t.relativeMSec(t.events.timestamp[rundownFirst])).toBeGreaterThan(14_000);
    // the rundown's methods name the session's: one process table over both files
    const rundownPid = t.events.pid[rundownFirst];
    expect(t.processName(rundownFirst)).toBe(t.processes.processName(rundownPid, t.events.timestamp[rundownFirst]));
  });
});

describe.skipIf(!HAVE_CORPUS)("a OneDrive CldFlt log rolled over into a second file", () => {
  it("merges: the rows of both, one clock, time order over both", async () => {
    const names = ["s4-CldFlt0-2025-12-21-121418.etl", "s4-CldFlt2-2025-12-21-121418.etl"];
    const t = await openTrace(names.map((n) => ({ name: n, input: readFileSync(etlPath(n)) })));
    // (each file alone is checked against its reference dump by the corpus tests; CldFlt2 is a header buffer only)
    const alone = await Promise.all(names.map((n) => openTrace(readFileSync(etlPath(n)))));
    expect(t.complete).toBe(true);
    expect(t.files.map((f) => [f.rowCount, f.clock])).toEqual([
      [alone[0].events.length, "anchor"],
      [alone[1].events.length, "shared"],
    ]);
    const want = alone.flatMap((a) => [...a.events.timestamp]).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    expect(Array.from(t.events.timeOrder(), (r) => t.events.timestamp[r])).toEqual(want);
    for (let r = 0; r < t.events.length; r++) expect(t.events.row(r).payload).toEqual(alone[t.fileOf(r)].events.row(r - t.files[t.fileOf(r)].firstRow).payload);
    // the second file started later: its header is a minute into the session
    expect(t.relativeMSec(t.events.timestamp[t.files[1].firstRow])).toBeGreaterThan(60_000);
  });
});
