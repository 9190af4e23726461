// EventPipe files (.nettrace, .netperf) opened by openTrace into the tables an .etl file gives, checked
// against PerfView's own EventPipe baselines: for every `Provider/EventName` key, the count of events
// TraceLog keeps, and the time (MSec) and thread (TID) of the first one in TraceEvent's dispatch order.

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTrace, EtlFormatError } from "../dist/bindings/index.js";
import { isTraceLogBookkeeping } from "../dist/bindings/perfview/index.js";
import { eventNameParts } from "../dist/bindings/naming/event-names.js";
import { attachStacks, cpuProfile, stackNames } from "../dist/bindings/analysis/index.js";
import { CORPUS, HAVE_CORPUS } from "./helpers/shared.js";

const NETTRACE = join(CORPUS, "nettrace");
const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", maxBuffer: 1 << 30 });

interface Line {
  count: number;
  msec: string;
  tid: number;
  pname: string;
}

/** A baseline's lines: key -> count, and the first event's MSec and TID. */
function baseline(name: string): Map<string, Line> {
  const text = readFileSync(join(NETTRACE, "baselines", `${name}.baseline.txt`), "utf8").replace(/^\uFEFF/, "");
  const out = new Map<string, Line>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^(.*?), (\d+), <Event MSec=\s*"([\d.]+)" PID=\s*"\d+" PName=\s*"([^"]*)" TID=\s*"(\d+)"/.exec(line);
    if (m) out.set(m[1], { count: Number(m[2]), msec: m[3], pname: m[4], tid: Number(m[5]) });
  }
  return out;
}

describe.skipIf(!HAVE_CORPUS)("EventPipe files against PerfView's baselines", () => {
  const files = [
    "eventpipe-dotnetcore2.1-linux-x64-objver3.netperf",
    "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
    "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace",
  ];
  for (const name of files) {
    it(`${name}: every key's count, first time and thread`, async () => {
      const t = await openTrace(readFileSync(join(NETTRACE, name)));
      expect(t.complete).toBe(true);
      const want = baseline(name);
      const got = new Map<string, Line>();
      for (const row of t.events.byTime()) {
        if (isTraceLogBookkeeping(row)) continue;
        const p = eventNameParts(row);
        const key = `${p.provider}/${p.event}`;
        const seen = got.get(key);
        if (seen) seen.count++;
        else got.set(key, { count: 1, msec: row.relativeMSec.toFixed(4), tid: row.tid ?? -1, pname: t.processName(row.index) });
      }
      // runtime events 200 and 201 have no TraceEvent template and empty metadata: the baseline's machine
      // named them from its registered manifest (TDH) as "GC"; we name them from the runtime's schema
      const tdh = name.includes("3.0") ? want.get("Microsoft-Windows-DotNETRuntime/GC") : undefined;
      if (tdh) {
        want.delete("Microsoft-Windows-DotNETRuntime/GC");
        let n = 0;
        for (const [k, v] of got)
          if (/^Microsoft-Windows-DotNETRuntime\/GC\/(Increase|Decrease)MemoryPressure$/.test(k)) {
            n += v.count;
            got.delete(k);
          }
        expect(n).toBe(tdh.count);
      }
      expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
      for (const [key, line] of want) expect({ key, ...got.get(key) }).toEqual({ key, ...line });
    });
  }

  it("the other files: event counts per provider as the corpus README gives them; stacks on the samples", async () => {
    const expected: [string, Record<string, number>][] = [
      [
        "only_managed_samples.nettrace",
        {
          "Microsoft-Windows-DotNETRuntime": 29_697,
          "Microsoft-DotNETCore-SampleProfiler": 7_423,
          "Microsoft-Windows-DotNETRuntimeRundown": 482,
          "Microsoft-DotNETCore-EventPipe": 1,
        },
      ],
      [
        "mixed_managed_external_samples.nettrace",
        {
          "Microsoft-Windows-DotNETRuntime": 25_355,
          "Microsoft-DotNETCore-SampleProfiler": 6_331,
          "Microsoft-Windows-DotNETRuntimeRundown": 560,
          "Microsoft-DotNETCore-EventPipe": 1,
        },
      ],
      [
        "dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
        {
          "Microsoft-Windows-DotNETRuntime": 22_259,
          "Microsoft-DotNETCore-SampleProfiler": 5_564,
          "Microsoft-Windows-DotNETRuntimeRundown": 127,
          "Microsoft-DotNETCore-EventPipe": 1,
        },
      ],
    ];
    for (const [name, counts] of expected) {
      const t = await openTrace(readFileSync(join(NETTRACE, name)));
      const got: Record<string, number> = {};
      for (let r = 0; r < t.events.length; r++) {
        const p = t.providers.get(t.events.provider[r]).name;
        got[p] = (got[p] ?? 0) + 1;
      }
      expect(got, name).toEqual(counts);
      // every sample carries its stack as an ETW stack item
      const samples = t.query({ provider: "Microsoft-DotNETCore-SampleProfiler" });
      let withStack = 0;
      for (const row of samples) if (row.extendedItems.some((x) => x.type === 6)) withStack++;
      expect(withStack, name).toBeGreaterThan(samples.length * 0.9);
    }
  });
});

describe.skipIf(!HAVE_CORPUS)("the CLI on EventPipe files", () => {
  const file = join(NETTRACE, "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace");

  it("summary, gc and jit, from the same events the baseline counts", () => {
    const want = baseline("eventpipe-dotnetcore3.0-win-x64-objver4.nettrace");
    const summary = cli("summary", file);
    expect(summary.status, summary.stderr).toBe(0);
    expect(summary.stdout).toMatch(/records: +105540/);
    // the header as an EventPipe file has it: format, the Trace object's clock and processors (no ETL buffers)
    expect(summary.stdout).toMatch(/^format: +EventPipe V4 \(\.nettrace\)$/m);
    expect(summary.stdout).toMatch(/^clock: +QPC, 3124099 Hz$/m);
    expect(summary.stdout).toMatch(/^processors: +4$/m);
    expect(summary.stdout).not.toMatch(/^buffers:/m);
    expect(summary.stdout).toMatch(/35161 +Microsoft-DotNETCore-SampleProfiler/);
    // the process its ProcessInfo names (a file without one: Process(pid), as PerfView has it)
    expect(summary.stdout).toMatch(/105540 +10064 +Process\(10064\)/);
    const named = cli("summary", join(NETTRACE, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace"));
    expect(named.stdout).toMatch(/1970 +26240 +corerun +C:\\work\\arraytypes_test\\repro\\\\runtime\\corerun\.exe/);
    // one row per complete GC: as many as GC/Start events (every GC of this trace completes)
    const gc = cli("gc", file, "--format", "csv");
    expect(gc.status, gc.stderr).toBe(0);
    expect(gc.stdout.trim().split("\n").length - 1).toBe(want.get("Microsoft-Windows-DotNETRuntime/GC/Start")!.count);
    // JITStats counts the jitted methods: Method/LoadVerbose events TraceLog keeps
    const jit = cli("jit", file, "--summary", "--format", "csv");
    expect(jit.status, jit.stderr).toBe(0);
    expect(jit.stdout.split("\n")[1].split(",")[2]).toBe(String(want.get("Microsoft-Windows-DotNETRuntime/Method/LoadVerbose")!.count));
  });

  it("events --format names --tracelog: the baseline's events, by name", () => {
    const r = cli("events", file, "--format", "names", "--tracelog");
    expect(r.status, r.stderr).toBe(0);
    const counts = new Map<string, number>();
    for (const n of r.stdout.trimEnd().split("\n")) counts.set(n, (counts.get(n) ?? 0) + 1);
    for (const [key, line] of baseline("eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")) {
      if (key === "Microsoft-Windows-DotNETRuntime/GC") continue; // named by TDH on the baseline's machine
      const event = key.split("/").slice(1).join("/");
      expect({ key, n: counts.get(event) }).toEqual({ key, n: line.count });
    }
  });

  it("a file cut short: its events up to the cut, then the stop line and exit 1", () => {
    const bytes = readFileSync(join(NETTRACE, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace"));
    const cut = join(mkdtempSync(join(tmpdir(), "etw-nettrace-")), "cut.nettrace");
    writeFileSync(cut, bytes.subarray(0, 300_000));
    const r = cli("events", cut, "--format", "names");
    expect(r.status).toBe(1);
    expect(r.stdout.trimEnd().split("\n").length).toBeGreaterThan(1000);
    expect(r.stderr).toMatch(/decoding stopped early at byte offset \d+ .*: input ends inside block "EventBlock"/);
  });
});

describe.skipIf(!HAVE_CORPUS)("CPU profiles from EventPipe's sample profiler", () => {
  const golden = join(NETTRACE, "dotnetdiag", "dotnet-5.0-SampleProfiler-single-thread.golden.nettrace");

  it("thread time per stack: dotnetdiag's stacks and total, PerfView's attribution worked out from the raw samples", async () => {
    const t = await openTrace(readFileSync(golden));
    const p = cpuProfile(t);
    expect(p.samples.weightMSec).toBeDefined();
    // ours: thread time per stack below the process and thread frames, the pseudo leaf apart
    const ours = new Map<string, number>();
    for (let k = 0; k < p.samples.length; k++) {
      const frames = stackNames(p.stacks, p.samples.stack[k]).slice(2);
      const key = frames.join(";");
      ours.set(key, (ours.get(key) ?? 0) + p.samples.weightMSec![k]);
    }
    // by hand: every sample stands for the time to its thread's next one (ns, from raw timestamps), on
    // its own stack and kind (payload Type 2: managed code)
    attachStacks(t);
    const e = t.events;
    const rows = t.query({ provider: "Microsoft-DotNETCore-SampleProfiler", eventId: 0, order: "time" }).indices;
    const perStack = new Map<string, bigint>();
    const nsPerTick = 1_000_000_000n / t.info.perfFreq;
    const lastOf = new Map<number, number>();
    for (const i of rows) {
      const prev = lastOf.get(e.tid[i]);
      if (prev !== undefined) {
        const row = e.row(prev);
        const key = `${[...row.callStack!].reverse().join(";")};${new DataView(row.payload.buffer, row.payload.byteOffset).getInt32(0, true) === 2 ? "CPU_TIME" : "UNMANAGED_CODE_TIME"}`;
        perStack.set(key, (perStack.get(key) ?? 0n) + (e.timestamp[i] - e.timestamp[prev]) * nsPerTick);
      }
      lastOf.set(e.tid[i], i);
    }
    expect([...ours.keys()].sort()).toEqual([...perStack.keys()].sort());
    for (const [key, ns] of perStack) expect(Math.abs(ours.get(key)! * 1e6 - Number(ns)), key).toBeLessThan(1000);
    // dotnetdiag's expected profile: the same stacks (root first) and the same total thread time
    const expected = readFileSync(join(NETTRACE, "dotnetdiag", "dotnet-5.0-SampleProfiler-single-thread.txt"), "utf8")
      .trim()
      .split("\n");
    const theirs = new Map(expected.map((l) => [l.slice(0, l.lastIndexOf(" ")), Number(l.slice(l.lastIndexOf(" ") + 1))]));
    const stacksOfOurs = new Set([...ours.keys()].map((k) => k.split(";").slice(0, -1).join(";")));
    expect([...stacksOfOurs].sort()).toEqual([...theirs.keys()].sort());
    const total = [...theirs.values()].reduce((a, b) => a + b, 0);
    expect(Math.abs([...ours.values()].reduce((a, b) => a + b, 0) * 1e6 - total)).toBeLessThan(10_000);
  });

  it("cpu --format speedscope on every EventPipe file of the corpus", () => {
    const dir = mkdtempSync(join(tmpdir(), "etw-nettrace-cpu-"));
    for (const name of [
      "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
      "only_managed_samples.nettrace",
      "mixed_managed_external_samples.nettrace",
      "dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
    ]) {
      const out = join(dir, `${name.replace(/\W/g, "_")}.speedscope.json`);
      const r = cli("cpu", join(NETTRACE, name), "--format", "speedscope", "-o", out);
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/\d+ CPU samples \(\d+ with stacks.*weighed by thread time/);
      const doc = JSON.parse(readFileSync(out, "utf8")) as { profiles: { type: string; events: unknown[] }[]; shared: { frames: { name: string }[] } };
      expect(doc.profiles.length, name).toBeGreaterThan(0);
      expect(doc.profiles.every((x) => x.type === "evented" && x.events.length > 0)).toBe(true);
      expect(doc.shared.frames.some((f) => f.name === "CPU_TIME")).toBe(true);
    }
  });
});

describe.skipIf(!HAVE_CORPUS)("bad EventPipe input through openTrace", () => {
  it("cut and flipped files: a trace (complete or saying where it stopped) or an EtlFormatError, nothing else", async () => {
    const bytes = new Uint8Array(readFileSync(join(NETTRACE, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace")));
    let seed = 7;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const outcomes = { complete: 0, stopped: 0, rejected: 0 };
    for (let k = 0; k < 300; k++) {
      let input: Uint8Array;
      if (k % 3 === 0) input = bytes.subarray(0, rand(bytes.length));
      else {
        input = bytes.slice();
        for (let f = 0; f < 1 + rand(8); f++) input[rand(input.length)] ^= 1 << rand(8);
      }
      try {
        const t = await openTrace(input);
        // a trace that is not complete says where it stopped, within the input
        if (t.complete) outcomes.complete++;
        else {
          outcomes.stopped++;
          expect(t.incomplete!.offset).toBeGreaterThanOrEqual(0);
          expect(t.incomplete!.offset).toBeLessThanOrEqual(input.length);
        }
        // every row's payload lies inside the input
        for (let r = 0; r < t.events.length; r += 7) expect(t.events.row(r).payload.length).toBe(t.events.payloadLength[r]);
      } catch (error) {
        expect(error, `case ${k}`).toBeInstanceOf(EtlFormatError);
        outcomes.rejected++;
      }
    }
    expect(outcomes.stopped).toBeGreaterThan(50);
    expect(outcomes.complete + outcomes.stopped + outcomes.rejected).toBe(300);
  });
});
