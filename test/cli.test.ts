// The command line, run as a user runs it.

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { writeFileSync, mkdtempSync, statSync, readFileSync } from "node:fs";
import { openTrace } from "../dist/bindings/index.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HAVE_CORPUS, corpusFiles, etlPath, referencePath } from "./helpers/shared.js";
import { readReference, referenceAsJson } from "./helpers/reference.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("etw-wasm command line", () => {
  it("prints usage and exits 2 on bad arguments", () => {
    const none = run();
    expect(none.code).toBe(2);
    expect(none.stdout).toContain("usage: etw-wasm");
    const bad = run("frobnicate", "x.etl");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown command: frobnicate");
    expect(run("events").code).toBe(2);
  });

  it("exits 1 with a message on a missing file or a file that is not a trace", () => {
    const missing = run("info", "/nonexistent/trace.etl");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no such file");
    const dir = mkdtempSync(join(tmpdir(), "etw-wasm-"));
    const junk = join(dir, "junk.etl");
    writeFileSync(junk, Buffer.from("this is certainly not an event trace log file".repeat(10)));
    const r = run("info", junk);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not an ETL file.*byte offset 0/);
  });

  it.skipIf(!HAVE_CORPUS)("events --format jsonl equals the reference dump of net.4.5.2.x64.etl", async () => {
    const r = run("events", etlPath("net.4.5.2.x64.etl"), "--format", "jsonl");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    const { events } = await readReference(referencePath("net.4.5.2.x64.etl"));
    expect(lines.length).toBe(events.length);
    let mismatches = 0;
    for (let i = 0; i < events.length; i++) {
      const got = JSON.parse(lines[i]);
      const ref = events[i];
      const want = referenceAsJson(ref);
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        if (mismatches++ === 0) expect({ line: i + 1, ...got }).toEqual({ line: i + 1, ...want });
      }
    }
    expect(mismatches).toBe(0);
  }, 120_000);

  it.skipIf(!HAVE_CORPUS)("summary and info describe a corpus trace", () => {
    const r = run("summary", etlPath("gcevents.etl"));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("logger:        PerfViewSession");
    expect(r.stdout).toMatch(/\s69\s+Microsoft-Windows-DotNETRuntime\s/);
    expect(r.stdout).toContain("records:       71");
  });
});

describe("etw-wasm generate", () => {
  it("writes a trace of about the requested size that decodes cleanly, compressed or not", () => {
    const dir = mkdtempSync(join(tmpdir(), "etw-wasm-gen-"));
    for (const [flags, ptr] of [[[], "8"], [["--compress", "--pointer-size", "4"], "4"]] as const) {
      const out = join(dir, `g${ptr}.etl`);
      const g = run("generate", out, "--size", "2MiB", "--seed", "3", ...flags);
      expect(g.code).toBe(0);
      const info = run("info", out);
      expect(info.code).toBe(0);
      expect(info.stdout).toMatch(/warnings:\s+0/);
      expect(info.stdout).toContain(`pointer size:  ${ptr}`);
      const records = Number(/records:\s+(\d+)/.exec(info.stdout)![1]);
      expect(records).toBeGreaterThan(5000);
      if (!flags.length) expect(statSync(out).size).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    }
    expect(run("generate", join(dir, "x.etl"), "--size", "lots").code).toBe(2);
    expect(run("generate", join(dir, "x.etl"), "--pointer-size", "6").code).toBe(2);
  });
});

describe("etw-wasm summary, events filters and formats, gc, methods", () => {
  const SAMPLE = fileURLToPath(new URL("../examples/sample.etl", import.meta.url));

  it("summary lists providers, event names and processes of the sample", async () => {
    const r = run("summary", SAMPLE);
    expect(r.code).toBe(0);
    const t = await openTrace(readFileSync(SAMPLE));
    expect(r.stdout).toContain(`records:       ${t.events.length}`);
    expect(r.stdout).toMatch(/records per event name:\n(.*\n)*\s+\d+\s+Microsoft-Windows-DotNETRuntime\/GC\/Start\n/);
    expect(r.stdout).toMatch(/processes \(records logged by each\):\n\s+\d+\s+4242\s+Contoso\.Orders/);
    expect(r.stdout).toMatch(/time span:\s+[\d.]+ ms/);
  });

  it("events filters by provider, event name, pid and time, in every format", async () => {
    const t = await openTrace(readFileSync(SAMPLE));
    const want = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 1, from: 2, to: 30 }).length;
    expect(want).toBeGreaterThan(0);
    const args = ["events", SAMPLE, "--provider", "Microsoft-Windows-DotNETRuntime", "--event", "GC/Start", "--from", "2", "--to", "30", "--pid", "4242"];
    const jsonl = run(...args);
    expect(jsonl.stdout.trimEnd().split("\n")).toHaveLength(want);
    const csv = run(...args, "--format", "csv");
    const lines = csv.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("row,timeMs,name,pid,tid,process,processor,headerType,payloadLength,fields");
    expect(lines).toHaveLength(want + 1);
    expect(lines[1]).toContain(",Microsoft-Windows-DotNETRuntime/GC/Start,4242,");
    const json = JSON.parse(run(...args, "--format", "json").stdout);
    expect(json).toHaveLength(want);
    expect(JSON.parse(json[0].fields)).toHaveProperty("Depth");
    const table = run(...args, "--format", "table").stdout.trimEnd().split("\n");
    expect(table).toHaveLength(want + 1);
    expect(run("events", SAMPLE, "--format", "xml").code).toBe(2);
    expect(run("events", SAMPLE, "--pid", "abc").code).toBe(2);
  });

  it("gc gives one row per GC with pause and heap sizes; methods lists JIT loads per process", async () => {
    const t = await openTrace(readFileSync(SAMPLE));
    const gcs = run("gc", SAMPLE, "--format", "jsonl").stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(gcs).toHaveLength(t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 1 }).length);
    for (const g of gcs) {
      expect(g.process).toBe("Contoso.Orders");
      expect(g.pauseMs).toBeGreaterThanOrEqual(g.durationMs);
      expect(g.heapSizeAfter).toBe(g.gen0SizeAfter + g.gen1SizeAfter + g.gen2SizeAfter + g.lohSizeAfter + g.pohSizeAfter);
      expect(g.reason).toBe("AllocSmall");
    }
    expect(gcs.map((g) => g.gc)).toEqual([...gcs.map((g) => g.gc)].sort((a, b) => a - b));
    const methods = run("methods", SAMPLE, "--format", "csv").stdout.trimEnd().split("\n");
    expect(methods.length - 1).toBe(t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 143 }).length);
    expect(methods[1]).toMatch(/^4242,Contoso\.Orders,/);
  });
});

describe.skipIf(!HAVE_CORPUS)("etw-wasm summary on every corpus file", () => {
  it("summarizes each file with its record count", async () => {
    for (const name of corpusFiles()) {
      const r = run("summary", etlPath(name));
      expect({ name, code: r.code, stderr: r.stderr }).toEqual({ name, code: 0, stderr: "" });
      const t = await openTrace(readFileSync(etlPath(name)));
      expect(r.stdout).toContain(`records:       ${t.events.length}\n`);
      expect(r.stdout).toContain("records per event name:");
    }
  }, 120_000);
});
