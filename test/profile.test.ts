// Stacks attached to their events, frames named, and CPU profiles written for other viewers. Expected
// stacks come from the raw StackWalk payloads read here (the event of the same timestamp and thread;
// a compressed stack's frames from the KeyRundown/KeyDelete of its key), expected names from the
// runtime's method events read here; speedscope output is checked against speedscope's own schema.

import { describe, expect, it } from "vitest";
import { readFileSync, readdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { Ajv } from "ajv";
import { openTrace, streamTrace, type Trace } from "../dist/bindings/index.js";
import {
  StackAttacher,
  StackWeightCollector,
  attachStacks,
  cpuProfile,
  gcStats,
  stackNames,
  streamCpuProfile,
  streamWeightedStacks,
  toChromeTrace,
  toFolded,
  foldedFile,
  toSpeedscope,
  traceStacks,
  weightedStacks,
  type CpuProfile,
} from "../dist/bindings/analysis/index.js";
import { byWeightThenText } from "../dist/bindings/analysis/cpu.js";
import { inTimeOrder } from "../dist/bindings/stream-order.js";
import { generateTrace } from "../dist/bindings/generator/generate.js";
import { mulberry32 } from "../dist/bindings/generator/random.js";
import { EtlWriter, PayloadBuilder } from "../dist/bindings/generator/etl-writer.js";
import { CORPUS, HAVE_CORPUS, corpusFiles, etlPath } from "./helpers/shared.js";
import { payloadU32, rowsWithStackItems } from "./helpers/by-hand.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
const STACKWALK = "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3";
const PERFINFO = "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc";
const X64 = "net.4.5.2.x64.etl";
const kernel = (a: bigint) => a >= 0xffff000000000000n;

function u64s(p: Uint8Array, from: number): bigint[] {
  const v = new DataView(p.buffer, p.byteOffset, p.length);
  const out: bigint[] = [];
  for (let o = from; o + 8 <= p.length; o += 8) out.push(v.getBigUint64(o, true));
  return out;
}

interface RawStackEvent {
  op: number;
  ts: bigint;
  tid: number;
  frames: bigint[];
  key: bigint;
  cpu: number;
  ms: number;
}

/** The StackWalk events of a 64-bit trace, in time order, their payloads read here. */
function stackEvents(t: Trace): RawStackEvent[] {
  const out: RawStackEvent[] = [];
  for (const r of t.query({ provider: STACKWALK, order: "time" })) {
    const p = r.payload;
    const v = new DataView(p.buffer, p.byteOffset, p.length);
    if (r.opcode === 35 || r.opcode === 36) {
      const all = u64s(p, 0);
      out.push({ op: r.opcode, ts: 0n, tid: -1, key: all[0], frames: all.slice(1), cpu: r.processor, ms: r.relativeMSec });
    } else {
      out.push({
        op: r.opcode,
        ts: v.getBigInt64(0, true),
        tid: v.getInt32(12, true),
        key: r.opcode === 32 ? 0n : v.getBigUint64(16, true),
        frames: r.opcode === 32 ? u64s(p, 16) : [],
        cpu: r.processor,
        ms: r.relativeMSec,
      });
    }
  }
  return out;
}

describe("stacks and CPU profiles of net.4.5.2.x64", () => {
  it.skipIf(!HAVE_CORPUS)(
    "every StackWalk fragment ends up in the stack of the event of its timestamp and thread; compressed stacks get their key's frames",
    async () => {
      const t = await openTrace(readFileSync(etlPath(X64)));
      const { attacher } = traceStacks(t);
      // events by (timestamp, thread): a CPU sample's thread is in its payload
      const byKey = new Map<string, number[]>();
      for (const r of t.events.cursor(t.events.timeOrder())) {
        if (r.providerGuid === STACKWALK) continue;
        let tid = r.tid ?? -1;
        if (r.providerGuid === PERFINFO && r.opcode === 46) tid = new DataView(r.payload.buffer, r.payload.byteOffset).getInt32(8, true);
        const k = `${r.timestamp}:${tid}`;
        byKey.set(k, [...(byKey.get(k) ?? []), r.index]);
      }
      const events = stackEvents(t);
      let checked = 0,
        compressed = 0;
      events.forEach((e, k) => {
        if (e.op === 35 || e.op === 36) return;
        // (a fragment logged long after its event may find it gone from the 2048 events TraceLog remembers)
        if (e.ms - t.relativeMSec(e.ts) > 0.5) return;
        const rows = byKey.get(`${e.ts}:${e.tid}`);
        if (!rows) return; // an orphan
        const row = rows[rows.length - 1];
        const stack = attacher.table.frames(attacher.stackOf(row));
        let want = e.frames;
        if (e.op !== 32) {
          // the key's frames: the first definition of the key after the reference, in its table
          const def = events.find(
            (d, j) =>
              j > k && (d.op === 35 || d.op === 36) && d.key === e.key && d.frames.length > 0 && kernel(d.frames[d.frames.length - 1]) === (e.op === 37),
          );
          if (!def) return;
          want = def.frames;
          compressed++;
        }
        // kernel frames are the leaf end of the stack, user frames the root end
        const part = kernel(want[want.length - 1]) ? stack.slice(0, want.length) : stack.slice(stack.length - want.length);
        expect(part, `stack event ${k}`).toEqual(want);
        checked++;
      });
      expect(checked).toBeGreaterThan(1000);
      expect(compressed).toBeGreaterThan(1000);
      t.dispose();
    },
    120_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "samples of Test.x64 resolve into its jitted Main; the profile's counts and every writer agree",
    async () => {
      const t = await openTrace(readFileSync(etlPath(X64)));
      // Test.Program.Main's code, from its Method/LoadVerbose
      const main = Array.from(t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 143 }), (r) => ({
        name: String(r.get("MethodName")),
        ns: String(r.get("MethodNamespace")),
        start: r.get("MethodStartAddress") as bigint,
        size: BigInt(Number(r.get("MethodSize"))),
      })).find((m) => m.ns === "Test.Program" && m.name === "Main")!;
      expect(main).toBeDefined();
      const { attacher } = traceStacks(t);
      const profile = cpuProfile(t, { pid: 3676 });
      // by hand: samples of process 3676 whose stack holds an address inside Main
      let inMain = 0;
      for (const r of t.query({ provider: PERFINFO, order: "time" })) {
        if (r.opcode !== 46) continue;
        const tid = new DataView(r.payload.buffer, r.payload.byteOffset).getInt32(8, true);
        if (t.processes.threadProcess(tid, r.timestamp) !== 3676) continue;
        const id = attacher.stackOf(r.index);
        if (id >= 0 && attacher.table.frames(id).some((a) => a >= main.start && a < main.start + main.size)) inMain++;
      }
      expect(inMain).toBeGreaterThan(1000);
      // row.callStack: null until attachStacks, then the sample's frames named, leaf first
      const sampleRow = t.query({ provider: PERFINFO, order: "time" }).indices.find((i) => {
        const id = attacher.stackOf(i);
        return id >= 0 && attacher.table.frames(id).some((a) => a >= main.start && a < main.start + main.size);
      })!;
      expect(t.events.row(sampleRow).callStack).toBeNull();
      attachStacks(t);
      const named = t.events.row(sampleRow).callStack!;
      expect(named).toHaveLength(attacher.table.frames(attacher.stackOf(sampleRow)).length);
      expect(named).toContain("test.x64!Test.Program.Main(class System.String[])");
      expect(named[named.length - 1]).toBe("ntdll!?");
      const frame = "test.x64!Test.Program.Main(class System.String[])";
      const stacksOfSamples = Array.from(profile.samples.stack);
      expect(stacksOfSamples.filter((stack) => stackNames(profile.stacks, stack).includes(frame)).length).toBe(inMain);
      expect(Array.from(profile.samples.pid).every((pid) => pid === 3676)).toBe(true);
      // folded: every sample once
      const folded = toFolded(profile).trim().split("\n");
      expect(folded.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0)).toBe(profile.samples.length);
      expect(folded.filter((l) => l.includes(frame)).reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0)).toBe(inMain);
      // speedscope: valid against speedscope's schema; each thread's root frame open for its samples' time
      const schema = JSON.parse(readFileSync(createRequire(import.meta.url).resolve("speedscope/dist/release/file-format-schema.json"), "utf8"));
      const doc = toSpeedscope(profile, "x64") as {
        shared: { frames: { name: string }[] };
        profiles: { name: string; events: { type: string; frame: number; at: number }[] }[];
      };
      const validate = new Ajv({ strict: false }).compile(schema);
      expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
      for (const p of doc.profiles) {
        const threadSamples = Array.from(profile.samples.tid).filter((tid) => p.name.startsWith(`Thread (${tid})`));
        const root = p.events[0].frame;
        let open = 0,
          total = 0,
          depth = 0;
        for (const e of p.events) {
          depth += e.type === "O" ? 1 : -1;
          expect(depth).toBeGreaterThanOrEqual(0);
          if (e.frame !== root || (e.type === "O" ? depth !== 1 : depth !== 0)) continue;
          if (e.type === "O") open = e.at;
          else total += e.at - open;
        }
        expect(depth).toBe(0);
        // (a frame stays open while samples come within its time so far (+0.1%); so spans run a little
        // past the samples' time where samples come less than exactly one interval apart)
        expect(total).toBeGreaterThanOrEqual(threadSamples.length * profile.intervalMSec - 1e-6);
        expect(total).toBeLessThanOrEqual(threadSamples.length * profile.intervalMSec * 1.01);
      }
      expect(doc.shared.frames.map((f) => f.name)).toContain(frame);
      // Chrome: begin/end balanced per thread; the GC slices are the GC records
      const gcs = (await gcStats(t)).filter((p) => p.PID === 3676).flatMap((p) => p.GCs.filter((g) => g.IsComplete));
      const chrome = toChromeTrace(
        profile,
        gcs.map((g) => ({
          pid: 3676,
          tid: -1,
          category: "GC",
          name: `GC #${g.Number}`,
          startMSec: g.PauseStartRelativeMSec,
          durationMSec: g.PauseDurationMSec,
        })),
        new Map([[3676, "Test.x64"]]),
      ) as { traceEvents: { ph: string; tid: number; ts: number; dur?: number; cat?: string }[] };
      const depthOf = new Map<number, number>();
      for (const e of chrome.traceEvents) if (e.ph === "B" || e.ph === "E") depthOf.set(e.tid, (depthOf.get(e.tid) ?? 0) + (e.ph === "B" ? 1 : -1));
      expect([...depthOf.values()].every((d) => d === 0)).toBe(true);
      const slices = chrome.traceEvents.filter((e) => e.ph === "X" && e.cat === "GC");
      expect(slices.map((e) => [e.ts, e.dur])).toEqual(
        gcs.map((g) => [Math.round(g.PauseStartRelativeMSec * 1e6) / 1000, Math.round(g.PauseDurationMSec * 1e6) / 1000]),
      );
      t.dispose();
    },
    120_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "etw-wasm cpu writes each format; stacks prints events with named frames; bad options are usage errors",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "etw-cpu-"));
      for (const format of ["speedscope", "folded", "chrome"]) {
        const out = join(dir, `x64.${format}`);
        const r = spawnSync(process.execPath, [CLI, "cpu", etlPath(X64), "--format", format, "-o", out, "--pid", "3676"], { encoding: "utf8" });
        expect(r.status, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/5129 CPU samples \(5129 with stacks/);
        const text = readFileSync(out, "utf8");
        if (format === "folded") expect(text).toMatch(/^Process64 Test\.x64 \(3676\);Thread \(3680\) CPU=\d+ms;/m);
        else expect(() => JSON.parse(text)).not.toThrow();
      }
      const text = execFileSync(process.execPath, [CLI, "stacks", etlPath(X64), "--event", "Microsoft-Windows-DotNETRuntime/GC/Start"], { encoding: "utf8" });
      expect(text).toMatch(/^3228\.\d+ Microsoft-Windows-DotNETRuntime\/GC\/Start pid=3676 tid=3680\n( {4}.+\n)+/);
      expect(text).toContain("    test.x64!Test.Program.Main(class System.String[])\n");
      for (const [args, message] of [
        [["cpu", etlPath(X64), "-o", join(dir, "x")], "cpu needs --format"],
        [["cpu", etlPath(X64), "--format", "svg", "-o", join(dir, "x")], "unknown format: svg"],
        [["cpu", etlPath(X64), "--format", "folded"], "cpu needs -o OUT"],
        [["stacks", etlPath(X64)], "stacks needs --event"],
      ] as [string[], string][]) {
        const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8" });
        expect(r.status).toBe(2);
        expect(r.stderr).toContain(message);
      }
    },
    120_000,
  );
});

describe("stack attachment rules on a synthetic trace", () => {
  it("kernel and user fragments join; compressed stacks wait for their key; a ClrStackWalk goes to the CLR event before it on its thread", async () => {
    const w = new EtlWriter({ perfFreq: 1_000_000n });
    const at = (ms: number) => w.anchor + BigInt(Math.round(ms * 1000));
    const K = (n: number) => 0xfffff80000000000n + BigInt(n),
      U = (n: number) => 0x7ff600000000n + BigInt(n);
    const walk = (ts: bigint, tid: number, frames: bigint[]) => {
      const b = new PayloadBuilder().i64(ts).u32(10).u32(tid);
      for (const f of frames) b.u64(f);
      return b.build();
    };
    const sys = (ms: number, hook: number, payload: Uint8Array) => w.system(0, { headerType: 0x11, hookId: hook, version: 2, ts: at(ms), payload });
    const sample = (ms: number, tid: number) => sys(ms, 0x0f2e, new PayloadBuilder().u64(U(1)).u32(tid).u16(1).u8(0).u8(0).build());
    // sample 1: a kernel fragment, then its user fragment
    sample(1, 20);
    sys(1.001, 0x1820, walk(at(1), 20, [K(1), K(2)]));
    sys(1.002, 0x1820, walk(at(1), 20, [U(3), U(4)]));
    // sample 2: compressed, kernel and user keys, defined later
    sample(2, 20);
    sys(2.001, 0x1825, new PayloadBuilder().i64(at(2)).u32(10).u32(20).u64(0x100n).build());
    sys(2.002, 0x1826, new PayloadBuilder().i64(at(2)).u32(10).u32(20).u64(0x200n).build());
    // an orphan: no event at its time
    sys(2.5, 0x1820, walk(at(2.4), 20, [U(9)]));
    // a CLR event of thread 21, then another thread's event, then its ClrStackWalk
    w.event(0, {
      headerType: 0x13,
      provider: "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4",
      id: 80,
      version: 1,
      level: 4,
      opcode: 1,
      task: 7,
      keywords: 0x8000n,
      pid: 10,
      tid: 21,
      ts: at(3),
      payload: new PayloadBuilder().u16(9).build(),
    });
    sample(3.1, 22);
    w.event(0, {
      headerType: 0x13,
      provider: "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4",
      id: 82,
      version: 0,
      level: 4,
      opcode: 82,
      task: 11,
      keywords: 0x40000000n,
      pid: 10,
      tid: 21,
      ts: at(3.2),
      payload: new PayloadBuilder().u16(9).u8(0).u8(0).u32(2).u64(U(7)).u64(U(8)).build(),
    });
    // the key definitions (rundown at the end): kernel table by the last frame's address
    sys(9, 0x1824, new PayloadBuilder().u64(0x100n).u64(K(5)).u64(K(6)).build());
    sys(9.1, 0x1824, new PayloadBuilder().u64(0x200n).u64(U(5)).u64(U(6)).build());
    const t = await openTrace(w.finish());
    const { attacher } = traceStacks(t);
    const rowAt = (ms: number) => [...t.events.timestamp].findIndex((ts) => ts === at(ms));
    const frames = (ms: number) => attacher.table.frames(attacher.stackOf(rowAt(ms)));
    expect(frames(1)).toEqual([K(1), K(2), U(3), U(4)]);
    expect(frames(2)).toEqual([K(5), K(6), U(5), U(6)]);
    expect(frames(3)).toEqual([U(7), U(8)]);
    expect(attacher.stackOf(rowAt(3.1))).toBe(-1);
    expect(attacher.orphans).toBe(1);
    t.dispose();
  });
});

describe("etw-wasm generate --samples", () => {
  it("writes CPU samples with stacks: cpu profiles every non-idle sample, each with its stack", async () => {
    const dir = mkdtempSync(join(tmpdir(), "etw-gen-samples-"));
    const file = join(dir, "s.etl"),
      out = join(dir, "s.folded");
    expect(spawnSync(process.execPath, [CLI, "generate", file, "--size", "1MiB", "--samples"], { encoding: "utf8" }).status).toBe(0);
    const t = await openTrace(readFileSync(file));
    // by hand: PerfInfo/Sample records whose thread (after the pointer-sized IP) is not 0
    let busy = 0,
      idle = 0;
    for (const r of t.query({ provider: PERFINFO })) {
      if (r.opcode !== 46) continue;
      if (new DataView(r.payload.buffer, r.payload.byteOffset).getUint32(8, true) === 0) idle++;
      else busy++;
    }
    expect(busy).toBeGreaterThan(100);
    const r = spawnSync(process.execPath, [CLI, "cpu", file, "--format", "folded", "-o", out], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${busy} CPU samples (${busy} with stacks; left out: ${idle} idle)`);
    const lines = readFileSync(out, "utf8").trim().split("\n");
    expect(lines.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0)).toBe(busy);
    // the jitted methods of the generated service name their frames
    expect(lines.some((l) => /;system\.private\.corelib!Contoso\.Orders\./.test(l))).toBe(true);
    t.dispose();
  });
});

describe("a CPU profile of a stream", () => {
  /** Every sample as (process, thread, time, weight, its named stack from the root): what a profile says. */
  function samplesOf(p: CpuProfile): string[] {
    const out: string[] = [];
    for (let i = 0; i < p.samples.length; i++) {
      out.push(
        `${p.samples.pid[i]} ${p.samples.tid[i]} ${p.samples.timeMSec[i]} ${p.samples.weightMSec?.[i] ?? p.intervalMSec} ${stackNames(p.stacks, p.samples.stack[i]).join(";")}`,
      );
    }
    return out;
  }

  async function same(bytes: Uint8Array, batchBytes: number, pid?: number): Promise<CpuProfile> {
    const t = await openTrace(bytes);
    const whole = cpuProfile(t, { pid });
    t.dispose();
    const streamed = await streamCpuProfile(streamTrace(bytes, { batchBytes }), { pid });
    expect(streamed.samples.length).toBe(whole.samples.length);
    expect([streamed.intervalMSec, streamed.samplesWithStacks, streamed.idleSamples, streamed.otherSamples]).toEqual([
      whole.intervalMSec,
      whole.samplesWithStacks,
      whole.idleSamples,
      whole.otherSamples,
    ]);
    expect(samplesOf(streamed)).toEqual(samplesOf(whole));
    expect(toFolded(streamed)).toBe(toFolded(whole));
    return whole;
  }

  it("equals the whole trace's on a generated trace with samples, in batches of 64 KiB and 1 MiB", async () => {
    const bytes = generateTrace({ targetBytes: 3 << 20, samples: true, seed: 11 });
    for (const batch of [64 << 10, 1 << 20]) {
      const whole = await same(bytes, batch);
      expect(whole.samples.length).toBeGreaterThan(1000);
      expect(whole.samplesWithStacks).toBe(whole.samples.length);
    }
  });

  it.skipIf(!HAVE_CORPUS)(
    "equals the whole trace's on every corpus trace (.etl and .nettrace), in batches of 64 KiB",
    async () => {
      let withSamples = 0;
      const nettrace = readdirSync(join(CORPUS, "nettrace"))
        .filter((f) => /\.(nettrace|netperf)$/.test(f))
        .map((f) => join(CORPUS, "nettrace", f));
      for (const file of [...corpusFiles().map(etlPath), ...nettrace]) {
        const whole = await same(readFileSync(file), 64 << 10);
        if (whole.samples.length) withSamples++;
      }
      // (the x64 trace's kernel samples, the two sample-profiler .nettrace files at least)
      expect(withSamples).toBeGreaterThanOrEqual(3);
      // one process of many
      await same(readFileSync(etlPath(X64)), 64 << 10, 3676);
    },
    300_000,
  );
});

describe("events' stacks weighted by a payload field (stacks --format folded --weight)", () => {
  const NT3 = join(CORPUS, "nettrace", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace");

  it.skipIf(!HAVE_CORPUS)(
    "AllocationTick's stacks weighted by AllocationAmount: the weights are the amounts read by hand from the payloads",
    async () => {
      const t = await openTrace(readFileSync(NT3));
      const ticks = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 10 }).indices;
      // by hand: the events with a stack item of at least one frame, and their AllocationAmount (UInt32 at offset 0)
      const framed = rowsWithStackItems(t);
      let events = 0,
        total = 0;
      const amounts: number[] = [];
      for (const r of ticks) {
        if (!framed.has(r)) continue;
        events++;
        amounts.push(payloadU32(t, r));
        total += amounts[amounts.length - 1];
      }
      const median = [...amounts].sort((a, b) => a - b)[amounts.length >> 1];
      expect(events).toBeGreaterThan(30_000);
      t.dispose();
      const folded = spawnSync(process.execPath, [CLI, "stacks", NT3, "--event", "GC/AllocationTick", "--format", "folded", "--weight", "AllocationAmount"], {
        encoding: "utf8",
        maxBuffer: 1 << 28,
      });
      expect(folded.status, folded.stderr).toBe(0);
      expect(folded.stderr).toContain(`${events} of ${ticks.length} events with stacks, ${total} of AllocationAmount in all`);
      const lines = folded.stdout
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.lastIndexOf(" ")), Number(l.slice(l.lastIndexOf(" ") + 1))] as const);
      expect(lines.reduce((n, [, w]) => n + w, 0)).toBe(total);
      expect(lines.length).toBeGreaterThan(10);
      // heaviest first; the callee view has the same stacks turned round, with the same weights
      expect(lines.every(([, w], k) => k === 0 || lines[k - 1][1] >= w)).toBe(true);
      const inverted = spawnSync(
        process.execPath,
        [CLI, "stacks", NT3, "--event", "GC/AllocationTick", "--format", "folded", "--weight", "AllocationAmount", "--invert"],
        { encoding: "utf8", maxBuffer: 1 << 28 },
      );
      expect(inverted.status, inverted.stderr).toBe(0);
      const turned = new Map(
        inverted.stdout
          .trim()
          .split("\n")
          .map((l) => [l.slice(0, l.lastIndexOf(" ")).split(";").reverse().join(";"), Number(l.slice(l.lastIndexOf(" ") + 1))]),
      );
      expect(turned).toEqual(new Map(lines));
      // counted, and only the big ones (--where)
      const counted = spawnSync(
        process.execPath,
        [CLI, "stacks", NT3, "--event", "GC/AllocationTick", "--format", "folded", "--where", `AllocationAmount > ${median}`],
        { encoding: "utf8", maxBuffer: 1 << 28 },
      );
      expect(counted.status, counted.stderr).toBe(0);
      const big = counted.stdout
        .trim()
        .split("\n")
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
      expect(big).toBe(amounts.filter((a) => a > median).length);
      expect(big).toBeGreaterThan(0);
      expect(big).toBeLessThan(events);
    },
    120_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "a stream's weighted stacks equal the whole trace's (batches of 64 KiB): AllocationTick by AllocationAmount, kernel CPU samples counted",
    async () => {
      const cases: [string, (t: Trace) => Uint32Array, string | undefined][] = [
        [NT3, (t) => t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 10 }).indices, "AllocationAmount"],
        [etlPath(X64), (t) => t.query({ provider: PERFINFO, opcode: 46 }).indices, undefined],
        [etlPath("net.4.5.x86.etl"), (t) => t.query({ provider: PERFINFO, opcode: 46 }).indices, undefined],
      ];
      for (const [file, select, field] of cases) {
        const bytes = readFileSync(file);
        const weight = field ? (row: { get(name: string): unknown }) => Number(row.get(field)) : undefined;
        const t = await openTrace(bytes);
        const whole = weightedStacks(t, select(t), { weight });
        t.dispose();
        const streamed = await streamWeightedStacks(streamTrace(bytes, { batchBytes: 64 << 10 }), { select, weight });
        expect(whole.withStacks, file).toBeGreaterThan(1000);
        expect([streamed.events, streamed.withStacks, streamed.total], file).toEqual([whole.events, whole.withStacks, whole.total]);
        expect(streamed.stacks, file).toEqual(whole.stacks);
        // the collector given copies of whole batches, picking in each as it first sees it (without pick())
        const t2 = await openTrace(bytes);
        const byBatch = new StackWeightCollector({ select, weight });
        for await (const run of inTimeOrder(streamTrace(bytes, { batchBytes: 64 << 10 }), { release: true })) byBatch.add(run);
        const old = byBatch.result(t2.processes);
        t2.dispose();
        expect([old.events, old.withStacks, old.total], file).toEqual([whole.events, whole.withStacks, whole.total]);
        expect(old.stacks, file).toEqual(whole.stacks);
        // rows held alone cannot be picked from: without pick() the collector says so
        const unpicked = new StackWeightCollector({ select, weight });
        let threw = false;
        for await (const run of inTimeOrder(streamTrace(bytes, { batchBytes: 64 << 10 }), { release: true, keep: "rows" })) {
          if (run.rowNumbers) {
            expect(() => unpicked.add(run)).toThrow(/needs pick\(\) called on each batch/);
            threw = true;
            break;
          }
          unpicked.add(run);
        }
        expect(threw, file).toBe(file !== NT3);
      }
    },
    180_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "an attacher asked for some rows' stacks gives those rows the stacks the full attacher gives them, and no others",
    async () => {
      // the rows wanted: every other row with a stack (so unwanted user parts must still complete wanted kernel parts
      // waiting on their thread), and the CPU samples or allocation ticks alone
      for (const file of [etlPath(X64), etlPath("net.4.5.x86.etl"), NT3]) {
        const t = await openTrace(readFileSync(file));
        const ps = t.events.defaultPointerSize === 4 ? 4 : 8;
        const order = t.events.timeOrder();
        const full = new StackAttacher(ps);
        full.addRows(t.events, order);
        full.finish();
        const withStack = [...order].filter((r) => full.stackOf(r) >= 0);
        expect(withStack.length, file).toBeGreaterThan(1000);
        const picks = [
          new Set(withStack.filter((_, k) => k % 2 === 0)),
          new Set(t.query({ provider: [PERFINFO, "Microsoft-Windows-DotNETRuntime"], eventId: [46, 10] }).indices),
        ];
        for (const wanted of picks) {
          const some = new StackAttacher(ps, (row) => wanted.has(row));
          some.addRows(t.events, order);
          some.finish();
          let same = 0;
          for (let r = 0; r < t.events.length; r++) {
            const a = full.stackOf(r),
              b = some.stackOf(r);
            if (!wanted.has(r)) {
              if (b >= 0) expect.fail(`${file}: row ${r} not wanted has a stack`);
              continue;
            }
            const fa = a < 0 ? null : full.table.frames(a).join(),
              fb = b < 0 ? null : some.table.frames(b).join();
            if (fa !== fb) expect.fail(`${file}: row ${r}: ${fb} instead of ${fa}`);
            if (a >= 0) same++;
          }
          expect(same, file).toBeGreaterThan(100);
          expect(some.table.size, file).toBeLessThan(full.table.size);
        }
        t.dispose();
      }
    },
    180_000,
  );

  it("--weight duration: a Contention/Start weighs the milliseconds to its thread's Contention/Stop (a synthetic trace)", async () => {
    const w = new EtlWriter({ perfFreq: 1_000_000n });
    const at = (ms: number) => w.anchor + BigInt(Math.round(ms * 1000));
    const U = (n: number) => 0x7ff600000000n + BigInt(n);
    const RUNTIME = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4";
    const clr = (ms: number, tid: number, id: number, opcode: number, task: number, payload: Uint8Array) =>
      w.event(0, {
        headerType: 0x13,
        provider: RUNTIME,
        id,
        version: id === 82 ? 0 : 1,
        level: 4,
        opcode,
        task,
        keywords: 0x4000n,
        pid: 10,
        tid,
        ts: at(ms),
        payload,
      });
    const start = (ms: number, tid: number, frames: bigint[]) => {
      clr(ms, tid, 81, 1, 8, new PayloadBuilder().u8(0).u16(9).build());
      // its ClrStackWalk, right after it on its thread
      const b = new PayloadBuilder().u16(9).u8(0).u8(0).u32(frames.length);
      for (const f of frames) b.u64(f);
      clr(ms + 0.0001, tid, 82, 82, 11, b.build());
    };
    const stop = (ms: number, tid: number) => clr(ms, tid, 91, 2, 8, new PayloadBuilder().u8(0).u16(9).build());
    start(1, 21, [U(7), U(8)]);
    start(2, 22, [U(9)]);
    stop(2.5, 22);
    stop(4, 21);
    start(5, 21, [U(7), U(8)]);
    stop(6, 21);
    start(7, 23, [U(9)]); // no Stop: left out
    const bytes = w.finish();
    const select = (t: Trace) => t.query({ provider: RUNTIME, eventId: 81 }).indices;
    for (const source of ["whole", "stream"]) {
      const r =
        source === "whole"
          ? weightedStacks(await openTrace(bytes), select(await openTrace(bytes)), { duration: {} })
          : await streamWeightedStacks(streamTrace(bytes, { batchBytes: 64 << 10 }), { select, duration: {} });
      expect(r.events, source).toBe(4);
      expect(r.withStacks, source).toBe(3);
      expect(r.total).toBeCloseTo(3 + 0.5 + 1, 6);
      const byDepth = new Map(r.stacks.map(([k, n]) => [k.split(";").length, n]));
      expect(byDepth.get(2)).toBeCloseTo(4, 6);
      expect(byDepth.get(1)).toBeCloseTo(0.5, 6);
    }
    const dir = mkdtempSync(join(tmpdir(), "etw-duration-"));
    const file = join(dir, "contention.etl");
    writeFileSync(file, bytes);
    const cli = spawnSync(process.execPath, [CLI, "stacks", file, "--event", "Contention/Start", "--format", "folded", "--weight", "duration"], {
      encoding: "utf8",
    });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stderr).toContain("3 of 4 events with stacks and a Stop, 4.5 ms from Start to Stop in all");
    expect(
      cli.stdout
        .trim()
        .split("\n")
        .map((l) => Number(l.slice(l.lastIndexOf(" ") + 1))),
    ).toEqual([4, 0.5]);
    const bad = spawnSync(process.execPath, [CLI, "stacks", file, "--event", "Contention/Start", "--format", "folded", "--pair-by", "TaskID"], {
      encoding: "utf8",
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--pair-by goes with --weight duration");
  });

  it("--weight without --format folded, or a bad field name, is a usage error", () => {
    const sample = fileURLToPath(new URL("../examples/sample.etl", import.meta.url));
    for (const [args, message] of [
      [["--weight", "AllocationAmount"], "--weight and --invert go with --format folded"],
      [["--format", "folded", "--weight", "1x"], "bad --weight '1x'"],
    ] as const) {
      const r = spawnSync(process.execPath, [CLI, "stacks", sample, "--event", "GC/AllocationTick", ...args], { encoding: "utf8" });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});

describe("toFolded", () => {
  /**
   * A profile over a random name-stack tree of `nodes` nodes whose names are hard to order: prefixes of
   * one another, spaces and digits (a line ends "name count"), characters below ';' and above it, and
   * with `semicolons`, names that are alike once their ';' is written ':'.
   */
  function randomProfile(seed: number, nodes: number, semicolons: boolean, weighted: boolean): CpuProfile {
    const rand = mulberry32(seed);
    const names = ["A", "A 1", "A 12", "A:B", "A!", "A0", "B", "B;", "a", "Thread (5) CPU=3ms", "Thread (5) CPU=30ms", "~", ""];
    if (semicolons) names.push("A;B");
    const frame: number[] = [],
      parent: number[] = [];
    for (let n = 0; n < nodes; n++) {
      parent.push(n < 3 || rand() < 0.05 ? -1 : Math.floor(rand() * n));
      frame.push(Math.floor(rand() * names.length));
    }
    const count = nodes * 3;
    const stack = Int32Array.from({ length: count }, () => Math.floor(rand() * nodes));
    const samples = {
      length: count,
      pid: new Int32Array(count),
      tid: new Int32Array(count),
      timeMSec: new Float64Array(count),
      stack,
      weightMSec: weighted ? Float64Array.from({ length: count }, () => rand() * 3) : undefined,
    };
    return { intervalMSec: 1, samples, stacks: { names, frame, parent }, samplesWithStacks: count, idleSamples: 0, otherSamples: 0 };
  }

  /** The folded text as written out plainly: each stack's frames from the root, ';' in a name as ':', counts summed, the lines sorted. */
  function folded(p: CpuProfile): string {
    const sums = new Map<number, number>();
    const { stack, weightMSec } = p.samples;
    for (let k = 0; k < stack.length; k++) sums.set(stack[k], (sums.get(stack[k]) ?? 0) + (weightMSec ? weightMSec[k] * 1000 : 1));
    const lines = [...sums].map(
      ([s, n]) =>
        `${stackNames(p.stacks, s)
          .map((f) => f.replace(/;/g, ":"))
          .join(";")} ${weightMSec ? Math.round(n) : n}`,
    );
    return lines.sort().join("\n") + (lines.length ? "\n" : "");
  }

  it("writes the lines in the order of a sort of whole lines, names that order hard included", () => {
    for (let seed = 1; seed <= 24; seed++) {
      const p = randomProfile(seed, seed < 20 ? 40 + seed * 20 : 3000, seed % 4 === 0, seed % 2 === 0);
      expect(toFolded(p), `seed ${seed}`).toBe(folded(p));
    }
    const none = randomProfile(1, 10, false, false);
    expect(toFolded({ ...none, samples: { ...none.samples, length: 0, stack: new Int32Array(0) } })).toBe("");
  });

  it("foldedFile is toFolded's text in UTF-8 chunks, lines whole, longer ones than a chunk included", () => {
    const decoder = new TextDecoder();
    for (let seed = 1; seed <= 8; seed++) {
      const p = randomProfile(seed, 200 + seed * 50, seed % 2 === 0, seed % 3 === 0);
      // (names beyond ASCII, as managed frames have them)
      p.stacks.names.push("Système.Collections`1<é>", "\u{1F600}");
      for (const chunkBytes of [64, 4096, 8 << 20]) {
        const chunks = foldedFile(p, chunkBytes);
        expect(chunks.map((c) => decoder.decode(c)).join(""), `seed ${seed}, ${chunkBytes}`).toBe(toFolded(p));
        for (const c of chunks) expect(c[c.length - 1], "a chunk ends with a line").toBe(10);
        if (chunkBytes === 64) expect(chunks.length).toBeGreaterThan(10);
      }
    }
    const none = randomProfile(1, 10, false, false);
    expect(foldedFile({ ...none, samples: { ...none.samples, length: 0, stack: new Int32Array(0) } })).toEqual([]);
  });
});

describe("weighted stacks' order", () => {
  it("byWeightThenText orders as a sort by weight (greatest first), then text, with many ties, zeros of both signs and texts that order hard", () => {
    const names = ["A", "A 1", "A;B", "A!", "a", "B", "~", "", "é", "\u{1F600}"];
    for (let seed = 1; seed <= 20; seed++) {
      const rand = mulberry32(seed);
      const weights = [0, -0, 1, 2.5, 85_000, 1e15, -3, 0.1 + 0.2, 0.3];
      const seen = new Set<string>();
      const stacks: [string, number][] = [];
      for (let k = 0; k < 50 * seed; k++) {
        const text = Array.from({ length: 1 + Math.floor(rand() * 5) }, () => names[Math.floor(rand() * names.length)]).join(";");
        if (seen.has(text)) continue;
        seen.add(text);
        stacks.push([text, seed % 3 === 0 ? rand() * 10 : weights[Math.floor(rand() * weights.length)]]);
      }
      const expected = stacks.slice().sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      const got = byWeightThenText(stacks.slice());
      expect(got, `seed ${seed}`).toEqual(expected);
      // (each pair keeps its own weight: -0 stays -0)
      expect(got.map(([t, w]) => (Object.is(w, -0) ? `${t} -0` : t))).toEqual(expected.map(([t, w]) => (Object.is(w, -0) ? `${t} -0` : t)));
    }
  });
});
