// Keywords and levels by name, the filters that take them, summary's keywords and levels per provider,
// and the trace health check (doctor).
//
// Expectations come from raw values: the manifest's keyword masks read from ClrEtwAll.man itself (or,
// where the corpus is not needed, the handful of masks written out below from it), the keywords and
// level columns of the rows, payload bytes, kernel opcodes and the logfile header.

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openTrace, parseLevel, streamTrace, UnknownNameError, type Trace } from "../dist/bindings/index.js";
import { traceDoctor, type DoctorReport } from "../dist/bindings/analysis/index.js";
import { HAVE_CORPUS, SHARED, etlPath } from "./helpers/shared.js";
import { serve } from "./helpers/static-server.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
const SAMPLE = fileURLToPath(new URL("../examples/sample.etl", import.meta.url));
const MANIFEST = join(SHARED, "spec", "ClrEtwAll.man");
const HAVE_MANIFEST = existsSync(MANIFEST);

const RUNTIME = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4";
const RUNDOWN = "a669021c-c450-4609-a035-5af59af4df18";
const PRIVATE = "763fd754-7086-4dfe-95eb-c01a46faf4ca";
const MONO = "7f442d82-0f1d-5155-4b8c-1529eb2e31c2";
const K_PROCESS = "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c";
const K_IMAGE = "2cb15d1d-5fc1-11d2-abe1-00a0c911f518";
const K_STACKWALK = "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3";
const K_PERFINFO = "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc";
const SAMPLE_PROFILER = "3c530d44-97ae-513a-1e6d-783e8f8e03a9"; // Microsoft-DotNETCore-SampleProfiler
const EVENTPIPE = "92f528a6-f5b8-5160-a7ee-b33da7739e29"; // Microsoft-DotNETCore-EventPipe

/** The runtime provider's keyword masks, as ClrEtwAll.man gives them (used where the corpus is not needed). */
const RUNTIME_MASKS: Record<string, bigint> = {
  GC: 0x1n,
  GCHandle: 0x2n,
  AssemblyLoader: 0x4n,
  Loader: 0x8n,
  Jit: 0x10n,
  NGen: 0x20n,
  StartEnumeration: 0x40n,
  EndEnumeration: 0x80n,
  Security: 0x400n,
  AppDomainResourceManagement: 0x800n,
  JitTracing: 0x1000n,
  Interop: 0x2000n,
  Contention: 0x4000n,
  Exception: 0x8000n,
  Threading: 0x10000n,
  JittedMethodILToNativeMap: 0x20000n,
  OverrideAndSuppressNGenEvents: 0x40000n,
  Type: 0x80000n,
  GCHeapDump: 0x100000n,
  GCSampledObjectAllocationHigh: 0x200000n,
  GCHeapSurvivalAndMovement: 0x400000n,
  ManagedHeapCollect: 0x800000n,
  GCHeapAndTypeNames: 0x1000000n,
  GCSampledObjectAllocationLow: 0x2000000n,
  PerfTrack: 0x20000000n,
  Stack: 0x40000000n,
  ThreadTransfer: 0x80000000n,
  Debugger: 0x100000000n,
  Monitoring: 0x200000000n,
  CodeSymbols: 0x400000000n,
  EventSource: 0x800000000n,
  Compilation: 0x1000000000n,
};
const LEVELS = ["LogAlways", "Critical", "Error", "Warning", "Informational", "Verbose"];

/** Each provider's keywords as the manifest's XML lists them: provider name -> manifest keyword name -> mask. */
function manifestKeywords(): Map<string, { guid: string; keywords: Map<string, bigint> }> {
  const xml = readFileSync(MANIFEST, "utf8");
  const out = new Map<string, { guid: string; keywords: Map<string, bigint> }>();
  for (const block of xml.split("<provider ").slice(1)) {
    const name = /name="([^"]+)"/.exec(block)![1];
    const guid = /guid="\{?([0-9A-Fa-f-]{36})\}?"/.exec(block)![1].toLowerCase();
    const body = block.slice(0, block.indexOf("</provider>"));
    const keywords = new Map<string, bigint>();
    for (const m of body.matchAll(/<keyword\s+name="([^"]+)"\s+mask="(0x[0-9A-Fa-f]+)"/g)) keywords.set(m[1], BigInt(m[2]));
    out.set(name, { guid, keywords });
  }
  return out;
}

/** The manifest mask of a short keyword name in a provider: "<name>Keyword", or a qualified "<name>RundownKeyword" / "<name>PrivateKeyword". */
function maskOf(keywords: Map<string, bigint>, short: string): bigint | undefined {
  return keywords.get(`${short}Keyword`) ?? keywords.get(`${short}RundownKeyword`) ?? keywords.get(`${short}PrivateKeyword`);
}

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Rows (indices) of a trace that pass `test`, from its raw columns. */
function rawRows(t: Trace, test: (guid: string, keywords: bigint, level: number, i: number) => boolean): number[] {
  const c = t.events.columns;
  const guids = Array.from({ length: t.providers.length }, (_, p) => t.providers.get(p).guid);
  const out: number[] = [];
  for (let i = 0; i < t.events.length; i++) if (test(guids[c.provider[i]], c.keywords[i], c.level[i], i)) out.push(i);
  return out;
}

/** Rows per (provider GUID, opcode) or (provider GUID, event id), from the columns. */
function countRows(t: Trace, guid: string, pick: "opcode" | "eventId", values: number[]): number {
  const c = t.events.columns;
  const col = c[pick];
  let n = 0;
  for (let i = 0; i < t.events.length; i++) if (t.providers.get(c.provider[i]).guid === guid && values.includes(col[i])) n++;
  return n;
}

describe("keyword and level names", () => {
  it.skipIf(!HAVE_MANIFEST)("the generated table has every keyword of the manifest's five providers, with its mask", async () => {
    const { providerKeywords } = await import("../dist/bindings/index.js");
    const man = manifestKeywords();
    expect([...man.keys()]).toHaveLength(5);
    for (const [name, { guid, keywords }] of man) {
      const table = providerKeywords(name)!;
      expect(providerKeywords(guid)).toBe(table);
      expect(new Map(table.map((k) => [k.manifestName, k.mask])), name).toEqual(keywords);
      // short names: the manifest name without "Keyword"; a mirror of a runtime keyword drops its qualifier
      for (const k of table) expect(maskOf(keywords, k.name) ?? keywords.get(`${k.name}Keyword`), `${name} ${k.name}`).toBe(k.mask);
    }
    const rundown = providerKeywords("Microsoft-Windows-DotNETRuntimeRundown")!;
    expect(rundown.map((k) => k.name)).toEqual(expect.arrayContaining(["GC", "Loader", "Jit", "NGen", "StartRundown", "EndRundown"]));
    expect(rundown.find((k) => k.name === "StartRundown")!.mask).toBe(man.get("Microsoft-Windows-DotNETRuntimeRundown")!.keywords.get("StartRundownKeyword"));
    expect(rundown.find((k) => k.name === "EndRundown")!.mask).toBe(man.get("Microsoft-Windows-DotNETRuntimeRundown")!.keywords.get("EndRundownKeyword"));
  });

  it("levels by name and number", () => {
    LEVELS.forEach((name, i) => {
      expect(parseLevel(name)).toBe(i);
      expect(parseLevel(name.toLowerCase())).toBe(i);
      expect(parseLevel(`win:${name}`)).toBe(i);
      expect(parseLevel(String(i))).toBe(i);
    });
    expect(parseLevel(200)).toBe(200);
    expect(() => parseLevel("loud")).toThrow(UnknownNameError);
    expect(() => parseLevel(256)).toThrow(RangeError);
  });

  it("rows of the sample name their keyword bits and level", async () => {
    const t = await openTrace(readFileSync(SAMPLE));
    let checked = 0;
    for (const row of t.events) {
      expect(row.levelName).toBe(LEVELS[row.level] ?? `Level(${row.level})`);
      if (row.providerGuid !== RUNTIME) {
        // kernel records carry no keywords
        if (row.keywords === 0n) expect(row.keywordNames).toEqual([]);
        continue;
      }
      const names = row.keywordNames;
      const or = names.reduce((m, n) => m | (RUNTIME_MASKS[n] ?? BigInt(n)), 0n);
      expect(or).toBe(row.keywords);
      // lowest bit first
      const masks = names.map((n) => RUNTIME_MASKS[n] ?? BigInt(n));
      expect([...masks].sort((a, b) => (a < b ? -1 : 1))).toEqual(masks);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });

  it.skipIf(!HAVE_CORPUS || !HAVE_MANIFEST)(
    "rows of net.4.5.2.x64 (runtime, rundown and other providers) name their keywords and levels from the manifest",
    async () => {
      const man = manifestKeywords();
      const byGuid = new Map([...man.values()].map((p) => [p.guid, p.keywords]));
      const t = await openTrace(readFileSync(etlPath("net.4.5.2.x64.etl")));
      const seen = new Map<string, string[]>();
      for (const row of t.events) {
        expect(row.levelName).toBe(LEVELS[row.level] ?? `Level(${row.level})`);
        const keywords = byGuid.get(row.providerGuid);
        const names = row.keywordNames;
        if (keywords) {
          // the names' masks (from the manifest) OR-ed give the row's keywords, each bit once
          let or = 0n;
          for (const n of names) {
            const m = maskOf(keywords, n) ?? (n.startsWith("0x") ? BigInt(n) : undefined);
            expect(m, `${row.providerName} ${n}`).toBeDefined();
            expect(or & m!).toBe(0n);
            or |= m!;
          }
          expect(or).toBe(row.keywords);
          seen.set(`${row.providerName} 0x${row.keywords.toString(16)}`, names);
        } else {
          // other providers: one hex name per bit
          expect(names.map((n) => BigInt(n)).reduce((a, b) => a | b, 0n)).toBe(row.keywords);
          for (const n of names) expect(BigInt(n) & (BigInt(n) - 1n)).toBe(0n);
        }
      }
      // the combinations this trace holds, by hand from the manifest's masks
      expect(seen.get("Microsoft-Windows-DotNETRuntime 0x40000000")).toEqual(["Stack"]);
      expect(seen.get("Microsoft-Windows-DotNETRuntime 0x30")).toEqual(["Jit", "NGen"]);
      expect(seen.get("Microsoft-Windows-DotNETRuntime 0x20000008")).toEqual(["Loader", "PerfTrack"]);
      expect(seen.get("Microsoft-Windows-DotNETRuntime 0x10800")).toEqual(["AppDomainResourceManagement", "Threading"]);
      expect(seen.get("Microsoft-Windows-DotNETRuntimeRundown 0x30")).toEqual(["Jit", "NGen"]);
      expect(seen.get("Microsoft-Windows-DotNETRuntimeRundown 0x20038")).toEqual(["Loader", "Jit", "NGen", "JittedMethodILToNativeMap"]);
      expect(seen.get("Microsoft-Windows-DotNETRuntimePrivate 0x8")).toEqual(["PrivateFusion"]);
      // an EventSource's bit 63 and a kernel record
      const es = t.query({ provider: "edd08927-9cc4-4e65-b970-c2560fb5c289" });
      expect([...es][0].keywordNames).toEqual(["0x80", "0x20", "0x8000000000000000"].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)));
      const kernel = [...t.query({ provider: K_PROCESS })];
      expect(kernel.length).toBeGreaterThan(0);
      expect(kernel[0].keywordNames).toEqual([]);
    },
  );
});

describe("filters by keyword and level names", () => {
  it.skipIf(!HAVE_CORPUS)("query: names equal masks, a name stands for its own provider's bits, levels by name", async () => {
    const t = await openTrace(readFileSync(etlPath("net.4.5.2.x64.etl")));
    const idx = (r: { indices: Uint32Array }) => Array.from(r.indices);
    const runtime = "Microsoft-Windows-DotNETRuntime";
    const byName = idx(t.query({ provider: runtime, keywords: "GC,Loader" }));
    expect(byName).toEqual(idx(t.query({ provider: runtime, keywords: 0x9n })));
    expect(byName).toEqual(idx(t.query({ provider: runtime, keywords: ["GC", "Loader"] })));
    expect(byName).toEqual(idx(t.query({ provider: runtime, keywords: "gc+0x8" })));
    expect(byName).toEqual(rawRows(t, (g, k) => g === RUNTIME && (k & 0x9n) !== 0n));
    expect(byName.length).toBeGreaterThan(6000);
    // without a provider: "Jit" is 0x10 of the runtime, rundown and Mono providers (the private provider's 0x10 is LoaderHeap)
    expect(idx(t.query({ keywords: "Jit" }))).toEqual(rawRows(t, (g, k) => [RUNTIME, RUNDOWN, MONO].includes(g) && (k & 0x10n) !== 0n));
    // a mask tests every provider (the EventSource rows with bit 0x20 too)
    expect(idx(t.query({ keywords: 0x20n }))).toEqual(rawRows(t, (_, k) => (k & 0x20n) !== 0n));
    expect(idx(t.query({ keywords: "NGen" })).length).toBeLessThan(idx(t.query({ keywords: 0x20n })).length);
    // levels: at or below
    expect(idx(t.query({ level: "informational" }))).toEqual(rawRows(t, (_, __, l) => l <= 4));
    expect(idx(t.query({ level: "Error" }))).toEqual(idx(t.query({ level: 2 })));
    expect(idx(t.query({ provider: runtime, keywords: "GC", level: "verbose" }))).toEqual(rawRows(t, (g, k, l) => g === RUNTIME && (k & 1n) !== 0n && l <= 5));
    expect(() => t.query({ keywords: "Foo" })).toThrow(/unknown keyword "Foo".*GC, GCHandle/);
    try {
      t.query({ keywords: "GC,Nope" });
    } catch (e) {
      expect(e).toBeInstanceOf(UnknownNameError);
      expect((e as UnknownNameError).known).toEqual(expect.arrayContaining(["GC", "Loader", "Jit", "NGen", "StartRundown", "EndRundown"]));
    }
  });

  it.skipIf(!HAVE_CORPUS)("decode-time filter: names keep the rows of the providers that define them, masks every provider's", async () => {
    const bytes = readFileSync(etlPath("net.4.5.2.x64.etl"));
    const all = await openTrace(bytes);
    // "GC,Loader": bits 0x9 of the providers that define GC or Loader (runtime, rundown, private's GC, Mono)
    const named = await openTrace(bytes, { filter: { keywords: "GC,Loader", level: "informational" } });
    const want = rawRows(all, (g, k, l, i) => i === 0 || ([RUNTIME, RUNDOWN, PRIVATE, MONO].includes(g) && (k & 0x9n) !== 0n && l <= 4));
    expect(named.events.length).toBe(want.length);
    const masked = await openTrace(bytes, { filter: { keywords: 0x9n, level: 4 } });
    expect(masked.events.length).toBe(rawRows(all, (_, k, l, i) => i === 0 || ((k & 0x9n) !== 0n && l <= 4)).length);
    await expect(openTrace(bytes, { filter: { keywords: "Nope" } })).rejects.toThrow(UnknownNameError);
  });

  it("CLI events --keywords GC,Loader --level informational on the sample: the raw rows, as with the mask", async () => {
    const t = await openTrace(readFileSync(SAMPLE));
    const want = rawRows(t, (g, k, l) => g === RUNTIME && (k & 0x9n) !== 0n && l <= 4);
    expect(want.length).toBeGreaterThan(0);
    const r = run("events", SAMPLE, "--keywords", "GC,Loader", "--level", "informational");
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(want.length);
    for (const [k, line] of lines.entries()) {
      expect(line.timestamp).toBe(t.events.columns.timestamp[want[k]].toString());
      expect(line.provider).toBe(RUNTIME);
      expect(BigInt(line.keywords) & 0x9n).not.toBe(0n);
      expect(line.level).toBeLessThanOrEqual(4);
    }
    expect(run("events", SAMPLE, "--keywords", "0x9", "--level", "4").stdout).toBe(r.stdout);
    expect(run("events", SAMPLE, "--keywords=gc,LOADER", "--level=Informational").stdout).toBe(r.stdout);
    // csv (the streamed, named path) keeps the same rows
    const csv = run("events", SAMPLE, "--keywords", "GC,Loader", "--level", "informational", "--format", "csv").stdout.trimEnd().split("\n");
    expect(csv.slice(1).map((l) => Number(l.split(",")[0]))).toEqual(want);
  });

  it("CLI: an unknown keyword or level is a usage error (exit 2) naming the known ones", () => {
    const kw = run("events", SAMPLE, "--keywords", "GC,Garbage");
    expect(kw.code).toBe(2);
    expect(kw.stdout).toBe("");
    const [first, second] = kw.stderr.split("\n");
    expect(first).toMatch(
      /^etw-wasm: bad --keywords 'GC,Garbage': unknown keyword "Garbage": .*GC, GCHandle, AssemblyLoader, Loader, Jit, NGen.*StartRundown, EndRundown/,
    );
    expect(second).toMatch(/^usage of etw-wasm events/);
    const level = run("convert", SAMPLE, "--to", "arrow", "-o", join(tmpdir(), "etw-wasm-never-written"), "--level", "loud");
    expect(level.code).toBe(2);
    expect(level.stderr.split("\n")[0]).toBe(
      `etw-wasm: bad --level 'loud': unknown level "loud": a number from 0 to 255 or one of LogAlways (0), Critical (1), Error (2), Warning (3), Informational (4), Verbose (5)`,
    );
    expect(run("events", SAMPLE, "--format", "perfview", "--keywords", "GC").stderr).toMatch(/--keywords does not apply to --format perfview/);
  });
});

describe("summary: keywords and levels per provider", () => {
  it("the sample's providers with the keyword names and level counts of their rows", async () => {
    const t = await openTrace(readFileSync(SAMPLE));
    const r = run("summary", SAMPLE);
    expect(r.code).toBe(0);
    const text = r.stdout;
    const start = text.indexOf("keywords and levels per provider");
    expect(start).toBeGreaterThan(text.indexOf("records per provider:"));
    const lines = text.slice(start).split("\n").slice(1);
    const list = lines.slice(0, lines.indexOf(""));
    // one line per provider with rows
    const providers = new Set(Array.from(t.events.columns.provider));
    expect(list).toHaveLength(providers.size);
    for (const p of providers) {
      const info = t.providers.get(p);
      const rows = rawRows(t, (g) => g === info.guid);
      const line = list.find((l) => l.includes(`{${info.guid}}`))!;
      expect(line, info.guid).toBeDefined();
      const m = /: keywords (.*); levels (.*)$/.exec(line)!;
      let or = 0n;
      const perLevel = new Map<number, number>();
      for (const i of rows) {
        or |= t.events.columns.keywords[i];
        perLevel.set(t.events.columns.level[i], (perLevel.get(t.events.columns.level[i]) ?? 0) + 1);
      }
      const names = m[1] === "none" ? [] : m[1].split(", ");
      expect(names.reduce((a, n) => a | (info.guid === RUNTIME ? RUNTIME_MASKS[n] : BigInt(n)), 0n)).toBe(or);
      const levels = [...perLevel]
        .sort((a, b) => a[0] - b[0])
        .map(([l, n]) => `${LEVELS[l]} ${n}`)
        .join(", ");
      expect(m[2]).toBe(levels);
    }
  });
});

describe("doctor", () => {
  const status = (r: DoctorReport, id: string) => r.findings.find((f) => f.id === id)!;

  it.skipIf(!HAVE_CORPUS)(
    "net.4.5.2.x64: runtime, jitted methods, end rundown, modules, stacks, samples, process and image rundown present; no precompiled method named",
    async () => {
      const t = await openTrace(readFileSync(etlPath("net.4.5.2.x64.etl")));
      // by hand, from the rows
      const runtimeRows = rawRows(t, (g) => g === RUNTIME).length;
      const loadVerbose = countRows(t, RUNTIME, "eventId", [143]);
      const dcStop = countRows(t, RUNDOWN, "eventId", [142, 144, 146, 148, 152, 154, 156, 158]);
      const dcStart = countRows(t, RUNDOWN, "eventId", [141, 143, 145, 147, 151, 153, 155, 157]);
      const moduleLoads = countRows(t, RUNTIME, "eventId", [151, 152, 153]);
      const ext = t.extendedItems;
      let headerStacks = 0;
      for (let e = 0; e < ext.length; e++) if (ext.type[e] === 5 || ext.type[e] === 6) headerStacks++;
      const stackWalk = countRows(t, K_STACKWALK, "opcode", [32]);
      const clrStackWalk = countRows(t, RUNTIME, "eventId", [82]);
      const samples = countRows(t, K_PERFINFO, "opcode", [46]);
      const processDcStart = countRows(t, K_PROCESS, "opcode", [3]);
      const imageDcStart = countRows(t, K_IMAGE, "opcode", [3]);
      // MethodFlags (u32 at byte 32 of DCStopVerbose's payload): precompiled = neither Dynamic, Jitted nor JitHelper
      let precompiled = 0,
        named = 0;
      for (const row of t.query({ provider: "Microsoft-Windows-DotNETRuntimeRundown", eventId: 144 })) {
        const p = row.payload;
        const flags = new DataView(p.buffer, p.byteOffset, p.length).getUint32(32, true);
        named++;
        if ((flags & 0x19) === 0) precompiled++;
      }
      expect({ runtimeRows: runtimeRows > 0, loadVerbose: loadVerbose > 0, dcStop: dcStop > 0, dcStart, named: named > 0, precompiled }).toEqual({
        runtimeRows: true,
        loadVerbose: true,
        dcStop: true,
        dcStart: 0,
        named: true,
        precompiled: 0,
      });
      expect(t.info.eventsLost + t.info.buffersLost).toBe(0);

      const r = await traceDoctor(t);
      expect(status(r, "runtime")).toMatchObject({ status: "ok", counts: { events: runtimeRows, maxLevel: 5 } });
      expect(status(r, "jitted-methods")).toMatchObject({ status: "ok", counts: { loadVerbose } });
      expect(status(r, "precompiled-methods")).toMatchObject({ status: "gap", counts: { precompiledNamed: 0, rundownNamed: named } });
      expect(status(r, "precompiled-methods").fix).toContain("Microsoft-Windows-DotNETRuntimeRundown:0x138:5");
      // an end rundown only; the one .NET process without rundown (Test.x64) started during the trace
      expect(status(r, "rundown")).toMatchObject({ status: "ok", counts: { startRundownEvents: 0, endRundownEvents: dcStop, dcStopVerbose: named } });
      expect(status(r, "modules").status).toBe("ok");
      expect(status(r, "modules").counts.moduleLoadEvents).toBe(moduleLoads);
      expect(status(r, "stacks")).toMatchObject({ status: "ok", counts: { eventHeaderStacks: headerStacks, kernelStackWalk: stackWalk, clrStackWalk } });
      expect(status(r, "cpu-samples")).toMatchObject({ status: "ok", counts: { samples } });
      expect(status(r, "lost")).toMatchObject({ status: "ok", counts: { eventsLost: 0, buffersLost: 0 } });
      expect(status(r, "decoding").status).toBe("ok");
      expect(status(r, "processes")).toMatchObject({ status: "ok", counts: { processDCStart: processDcStart } });
      expect(status(r, "images")).toMatchObject({ status: "ok", counts: { imageDCStart: imageDcStart } });
      // per process: Test.x64's methods come from LoadVerbose, PerfView's from the end rundown
      const test = r.processes.find((p) => p.name === "Test.x64")!;
      expect(test).toMatchObject({ runningAtStart: false, endedDuringTrace: true, endRundown: 0 });
      expect(test.loadedNamed).toBe(countRows(t, RUNTIME, "eventId", [143]) - r.processes.filter((p) => p !== test).reduce((s, p) => s + p.loadedNamed, 0));

      // streamed in small batches: the same report
      const streamed = await traceDoctor(await streamTrace(readFileSync(etlPath("net.4.5.2.x64.etl")), { batchBytes: 64 << 10 }));
      expect(streamed).toEqual(r);
    },
  );

  it.skipIf(!HAVE_CORPUS)("gcevents: GC events only: no method names, no rundown, no stacks, no kernel rundown; nothing lost", async () => {
    const t = await openTrace(readFileSync(etlPath("gcevents.etl")));
    // by hand: its rows are runtime events with keyword GC and the EventTrace header
    const runtime = rawRows(t, (g) => g === RUNTIME);
    const or = runtime.reduce((m, i) => m | t.events.columns.keywords[i], 0n);
    expect(or).toBe(RUNTIME_MASKS.GC);
    expect(rawRows(t, (g) => g === RUNDOWN)).toHaveLength(0);
    expect(countRows(t, RUNTIME, "eventId", [141, 143])).toBe(0);
    expect(t.extendedItems.length).toBe(0);
    const r = await traceDoctor(t);
    expect(r.findings.map((f) => [f.id, f.status])).toEqual([
      ["runtime", "ok"],
      ["jitted-methods", "gap"],
      ["precompiled-methods", "gap"],
      ["rundown", "gap"],
      ["modules", "gap"],
      ["stacks", "gap"],
      ["cpu-samples", "gap"],
      ["lost", "ok"],
      ["decoding", "ok"],
      ["processes", "gap"],
      ["images", "gap"],
    ]);
    expect(status(r, "runtime").answer).toContain(`${runtime.length} events`);
    expect(status(r, "runtime").answer).toContain("keywords GC;");
    for (const f of r.findings.filter((x) => x.status === "gap")) expect(f.fix, f.id).toBeTruthy();
    expect(status(r, "rundown").fix).toContain("Microsoft-Windows-DotNETRuntimeRundown:0x138:5");
    expect(status(r, "jitted-methods").fix).toContain("Microsoft-Windows-DotNETRuntime:0x18:5");
  });

  it.skipIf(!HAVE_CORPUS)(
    "EventPipe files: every check speaks of EventPipe (sample profiler, ProcessInfo, sequence numbers) and every fix is a dotnet-trace command line",
    async () => {
      const dir = join(SHARED, "corpus", "nettrace");
      const files = [
        "eventpipe-dotnetcore2.1-linux-x64-objver3.netperf",
        "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
        "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace",
        "mixed_managed_external_samples.nettrace",
        "only_managed_samples.nettrace",
        "dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
      ];
      const seen = { samples: 0, named: 0 };
      for (const name of files) {
        const bytes = readFileSync(join(dir, name));
        const t = await openTrace(bytes);
        const r = await traceDoctor(t);
        expect(
          r.findings.map((f) => f.id),
          name,
        ).toEqual(["runtime", "jitted-methods", "precompiled-methods", "rundown", "modules", "stacks", "cpu-samples", "lost", "decoding", "processes"]);
        for (const f of r.findings) {
          expect(`${f.answer} ${f.fix ?? ""}`, `${name} ${f.id}`).not.toMatch(/PerfView|xperf|WPR|logman|KernelEvents|PerfInfo|kernel/i);
          if (f.status !== "ok") expect(f.fix, `${name} ${f.id}`).toMatch(/dotnet-trace|\.NET/);
        }
        // samples by hand: the sample profiler's Thread/Sample (id 0) rows; stacks: EventPipe's stack items
        const samples = countRows(t, SAMPLE_PROFILER, "eventId", [0]);
        let stacks = 0;
        for (let e = 0; e < t.extendedItems.length; e++) if (t.extendedItems.type[e] === 5 || t.extendedItems.type[e] === 6) stacks++;
        expect(status(r, "cpu-samples"), name).toMatchObject({ status: samples && stacks ? "ok" : samples ? "partial" : "gap", counts: { samples } });
        seen.samples += samples;
        // lost events: the capture threads' sequence numbers (none lost in these files); a V3 file has none to tell by
        expect(status(r, "lost"), name).toMatchObject({
          status: t.eventPipeVersion === 3 ? "partial" : t.info.eventsLost ? "gap" : "ok",
          counts: { eventsLost: t.info.eventsLost },
        });
        // the process: ProcessInfo's command line (its payload's first UTF-16 string), its first word's file name
        const infos = rawRows(t, (g, _k, _l, i) => g === EVENTPIPE && t.events.columns.eventId[i] === 1);
        if (infos.length) {
          const p = t.events.row(infos[0]).payload;
          let end = 0;
          while (end + 1 < p.length && (p[end] | p[end + 1]) !== 0) end += 2;
          const commandLine = new TextDecoder("utf-16le").decode(p.subarray(0, end)).trim();
          const image = commandLine
            .split(" ")[0]
            .split(/[\\/]/)
            .pop()!
            .replace(/\.(exe|dll)$/i, "");
          expect(status(r, "processes"), name).toMatchObject({ status: "ok", counts: { processInfo: infos.length } });
          expect(status(r, "processes").answer).toContain(`${image} (${t.events.columns.pid[infos[0]]})`);
          expect(status(r, "processes").answer).toContain(commandLine);
          seen.named++;
        } else {
          expect(status(r, "processes"), name).toMatchObject({ status: "partial", counts: { processInfo: 0 } });
        }
        // streamed in small batches: the same report
        expect(await traceDoctor(await streamTrace(bytes, { batchBytes: 64 << 10 })), name).toEqual(r);
      }
      // (the files hold both cases)
      expect(seen.samples).toBeGreaterThan(0);
      expect(seen.named).toBeGreaterThan(0);
      const cli = run("doctor", join(dir, "only_managed_samples.nettrace"));
      expect({ code: cli.code, stderr: cli.stderr }).toEqual({ code: 0, stderr: "" });
      expect(cli.stdout).toMatch(/^ok +Are there CPU samples \(a CPU profile\)\? Yes: [\d,]+ thread samples of the runtime's sample profiler/m);
      expect(cli.stdout).toMatch(/^ +fix: .*dotnet-trace collect -p <pid> --clrevents jit\+loader --clreventlevel verbose/m);
    },
  );

  it.skipIf(!HAVE_CORPUS)("CLI doctor: text and json, exit 0 with gaps", () => {
    const text = run("doctor", etlPath("gcevents.etl"));
    expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ok +Are there \.NET runtime events\? Yes: \d+ events of Microsoft-Windows-DotNETRuntime \(keywords GC; levels /);
    expect(lines).toContainEqual(expect.stringMatching(/^GAP +Are stacks present\? No/));
    expect(lines).toContainEqual(expect.stringMatching(/^ +fix: /));
    const json = run("doctor", etlPath("net.4.5.2.x64.etl"), "--format", "json");
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.findings.find((f: { id: string }) => f.id === "stacks").status).toBe("ok");
    expect(report.providers.find((p: { guid: string }) => p.guid === RUNDOWN).keywordNames).toEqual([
      "Loader",
      "Jit",
      "NGen",
      "JittedMethodILToNativeMap",
      "PerfTrack",
    ]);
  });

  it("CLI doctor on the sample, and on a copy cut short (exit 1, the report still written)", () => {
    const ok = run("doctor", SAMPLE);
    expect({ code: ok.code, stderr: ok.stderr }).toEqual({ code: 0, stderr: "" });
    expect(ok.stdout).toMatch(/Was the file read whole\? Yes/);
    expect(run("doctor", SAMPLE, "--format", "xml").code).toBe(2);
    const bytes = readFileSync(SAMPLE);
    const cut = join(mkdtempSync(join(tmpdir(), "etw-wasm-doctor-")), "cut.etl");
    writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length / 2) + 100));
    const r = run("doctor", cut);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/Was the file read whole\? No: decoding stopped at byte offset \d+/);
    expect(r.stderr).toMatch(/decoding stopped early/);
  });
});

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const VIEWER = fileURLToPath(new URL("../examples/viewer/dist/", import.meta.url));

describe.skipIf(!existsSync(CHROMIUM) || !HAVE_CORPUS)("doctor in the viewer", () => {
  it("a held trace shows its findings, each with its status and fixes", async () => {
    if (!existsSync(join(VIEWER, "index.html"))) {
      const r = spawnSync(process.execPath, [fileURLToPath(new URL("../examples/viewer/build.mjs", import.meta.url))], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(r.stderr);
    }
    const { chromium } = await import("playwright-core");
    const site = await serve(VIEWER);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(site.url);
      await page.setInputFiles("#file", etlPath("gcevents.etl"));
      await page.locator("[data-testid=doctor] li").nth(10).waitFor({ timeout: 60_000 });
      const items = await page
        .locator("[data-testid=doctor] li")
        .evaluateAll((lis) =>
          lis.map((li) => [(li as HTMLElement).dataset.id, (li as HTMLElement).dataset.status, li.querySelector(".note")?.textContent ?? ""]),
        );
      // gcevents holds GC events of the runtime provider only (checked from its rows above)
      expect(items.map(([id, st]) => [id, st])).toEqual([
        ["runtime", "ok"],
        ["jitted-methods", "gap"],
        ["precompiled-methods", "gap"],
        ["rundown", "gap"],
        ["modules", "gap"],
        ["stacks", "gap"],
        ["cpu-samples", "gap"],
        ["lost", "ok"],
        ["decoding", "ok"],
        ["processes", "gap"],
        ["images", "gap"],
      ]);
      for (const [, st, fix] of items) expect(fix!.startsWith("Fix: ")).toBe(st !== "ok");
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      await site.close();
    }
  }, 90_000);
});
