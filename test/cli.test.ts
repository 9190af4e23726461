// The command line, run as a user runs it (node dist/bindings/cli/etw-wasm.js ...).
//
// Bad arguments exit 2 with one error line and the usage on stderr; bad input exits 1. On the corpus,
// what the commands print is checked against oracles that do not come from etw-wasm: the reference
// dumps of an independent decoder (reference/*.jsonl.gz: record headers, counts, timestamps, the first
// 64 payload bytes) and PerfView's baselines (event names and counts, process names). The bundled
// sample (examples/sample.etl, made by the trace generator) covers the commands without the corpus.

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { writeFileSync, mkdtempSync, statSync, readFileSync } from "node:fs";
import { openTrace } from "../dist/bindings/index.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CORPUS, HAVE_CORPUS, corpusFiles, etlPath, referencePath } from "./helpers/shared.js";
import { withLargeBuffer } from "./helpers/large-buffer.js";
import {
  atOrAfterMs,
  atOrBeforeMs,
  payloadOf,
  readReference,
  referenceAsJson,
  relativeMs,
  timestampOf,
  type Reference,
  type ReferenceRecord,
} from "./helpers/reference.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
const SAMPLE = fileURLToPath(new URL("../examples/sample.etl", import.meta.url));

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(...args: string[]): RunResult {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Like run, in this process (runCli, the bin's own function): for sweeps of many commands, where a
 * process of its own each adds start-up time and nothing to check. One command at a time.
 */
async function runInProcess(...args: string[]): Promise<RunResult> {
  const { runCli } = await import("../dist/bindings/cli/etw-wasm.js");
  let stdout = "",
    stderr = "";
  const code = await runCli(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

/** stdout of a command that must succeed without a word on stderr. */
function ok(r: RunResult): string {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  return r.stdout;
}

const jsonLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l)
    .map((l) => JSON.parse(l));

describe("etw-wasm bad arguments: exit 2, one error line and the usage on stderr, nothing on stdout", () => {
  const S = SAMPLE;
  const OUT = join(tmpdir(), "etw-wasm-never-written.etl");
  // [arguments, text the error line must contain]
  const cases: [string[], string][] = [
    [[], "missing command"],
    [["frobnicate", S], "unknown command: frobnicate"],
    [["--pid", "3"], "missing command"],
    // missing FILE
    [["info"], "info needs a FILE"],
    [["summary"], "summary needs a FILE"],
    [["events"], "events needs a FILE"],
    [["events", "--format", "csv"], "events needs a FILE"],
    [["gc"], "gc needs a FILE"],
    [["methods"], "methods needs a FILE"],
    [["generate"], "generate needs an OUT file"],
    // unknown or misspelled options, and options of another command
    [["events", S, "--provdier", "X"], "unknown option --provdier for events (did you mean --provider?)"],
    [["events", S, "--time-ordr"], "unknown option --time-ordr for events (did you mean --time-order?)"],
    [["events", S, "--frmat", "csv"], "unknown option --frmat for events (did you mean --format?)"],
    [["events", S, "-p", "3"], "unknown option -p for events"],
    [["events", S, "--size", "1MiB"], "events has no option --size (an option of generate)"],
    [["info", S, "--format", "csv"], "info has no option --format (an option of doctor, events, gc, methods, jit, cpu, stacks, generate)"],
    [["summary", S, "--pid", "4242"], "summary has no option --pid (an option of events, cpu, stacks, convert)"],
    [["gc", S, "--time-order"], "gc has no option --time-order (an option of events)"],
    [["methods", S, "--provider", "X"], "methods has no option --provider (an option of events, convert)"],
    [["generate", OUT, "--no-progress"], "generate has no option --no-progress"],
    [["generate", OUT, "--pid", "3"], "generate has no option --pid (an option of events, cpu, stacks, convert)"],
    [["generate", OUT, "--verbose"], "unknown option --verbose for generate"],
    // missing values, values where none belong, repeats
    [["events", S, "--format"], "--format needs a value"],
    [["events", S, "--pid"], "--pid needs a value"],
    [["events", S, "--provider="], "--provider needs a value"],
    [["events", S, "--pid", "--tid", "3"], "--pid needs a value"],
    [["events", S, "--pid", "-5"], "--pid needs a value"],
    [["gc", S, "--format"], "--format needs a value"],
    [["generate", OUT, "--size"], "--size needs a value"],
    [["info", S, "--no-progress=yes"], "--no-progress takes no value"],
    [["generate", OUT, "--compress=no"], "--compress takes no value"],
    [["events", S, "--pid", "1", "--pid", "2"], "--pid given more than once"],
    // extra positionals
    [["events", S, "GC/Start"], "unexpected argument: GC/Start"],
    [["generate", OUT, "2MiB"], "unexpected argument: 2MiB"],
    // bad numbers
    [["events", S, "--pid", "abc"], "bad --pid 'abc'"],
    [["events", S, "--pid=-1"], "bad --pid '-1'"],
    [["events", S, "--pid", "12.5"], "bad --pid '12.5'"],
    [["events", S, "--pid", "4294967296"], "bad --pid '4294967296'"],
    // 0xFFFFFFFF stands for "no process id" in the event table (PERFINFO records have none)
    [["events", S, "--pid", "4294967295"], "bad --pid '4294967295'"],
    [["events", S, "--tid", "0xffffffff"], "bad --tid '0xffffffff'"],
    [["events", S, "--tid", "x1"], "bad --tid 'x1'"],
    [["events", S, "--from", "abc"], "bad --from 'abc'"],
    [["events", S, "--from=-1"], "bad --from '-1'"],
    [["events", S, "--to", "1e999"], "bad --to '1e999'"],
    [["events", S, "--from", "5", "--to", "2"], "--from 5 is after --to 2"],
    [["generate", OUT, "--pointer-size", "5"], "bad --pointer-size '5'"],
    [["generate", OUT, "--pointer-size", "x"], "bad --pointer-size 'x'"],
    [["generate", OUT, "--size", "lots"], "bad --size 'lots'"],
    [["generate", OUT, "--size", "0"], "bad --size '0'"],
    [["generate", OUT, "--size", "-1"], "--size needs a value"],
    [["generate", OUT, "--seed", "x"], "bad --seed 'x'"],
    [["generate", OUT, "--seed=-1"], "bad --seed '-1'"],
    [["generate", OUT, "--processors", "0"], "bad --processors '0'"],
    [["generate", OUT, "--processors", "257"], "bad --processors '257'"],
    // formats and options that do not go together
    [["events", S, "--format", "xml"], "unknown format: xml"],
    [["gc", S, "--format", "perfview"], "unknown format: perfview"],
    [["methods", S, "--format", "xml"], "unknown format: xml"],
    [["events", S, "--format", "perfview", "--edition", "2021"], "unknown --edition: 2021"],
    [["events", S, "--edition", "2020"], "--edition applies to --format perfview only"],
    [["events", S, "--format", "csv", "--no-container-id"], "--no-container-id applies to --format perfview only"],
    [["events", S, "--format", "perfview", "--pid", "4242"], "--pid does not apply to --format perfview"],
    [["events", S, "--format", "perfview", "--time-order"], "--time-order does not apply to --format perfview"],
    // an argument that only the trace shows to be wrong
    [["events", S, "--provider", "No-Such-Provider"], "no provider No-Such-Provider in this trace"],
    // memory limits
    [["info", S, "--max-memory", "lots"], "bad --max-memory 'lots'"],
    [["events", S, "--max-memory", "1000"], "bad --max-memory '1000': at least 1MiB"],
    [["gc", S, "--max-memory=0.5MiB"], "bad --max-memory '0.5MiB': at least 1MiB"],
    [["methods", S, "--max-memory"], "--max-memory needs a value"],
    [["summary", S, "--max-memory", "8MiB", "--max-memory", "9MiB"], "--max-memory given more than once"],
    [["generate", OUT, "--max-memory", "1GiB"], "generate has no option --max-memory"],
    [["summary", S, "--batch-size", "1000"], "bad --batch-size '1000': at least 64KiB"],
    [["events", S, "--batch-size", "big"], "bad --batch-size 'big'"],
    [["summary", S, "--workers", "two"], "bad --workers 'two': a whole number from 0 to 64"],
  ];
  for (const [args, message] of cases) {
    it(`etw-wasm ${args.map((a) => (a === S ? "sample.etl" : a === OUT ? "out.etl" : a)).join(" ")}`, () => {
      const r = run(...args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      const [first, second] = r.stderr.split("\n");
      expect(first).toMatch(/^etw-wasm: /);
      expect(first).toContain(message);
      expect(second).toMatch(/^usage/);
    });
  }

  it("checks the options before reading the file, and writes nothing for a bad generate", () => {
    const r = run("events", "/nonexistent/trace.etl", "--pid", "abc");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("bad --pid 'abc'");
    expect(() => statSync(OUT)).toThrow();
  });

  it("-h and --help print the usage on stdout and exit 0", () => {
    for (const args of [["--help"], ["-h"], ["events", "--help"], ["generate", "x.etl", "-h"]]) {
      const r = run(...args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
      expect(r.stdout).toMatch(/^usage: etw-wasm <command> FILE\.\.\. \[options\]\n/);
      expect(r.stdout).toContain("exit codes: 0 done, 1 the input could not be read as a trace or only in part, 2 bad arguments");
    }
  });
});

describe("etw-wasm bad input: exit 1", () => {
  it("exits 1 with a message on a missing file, a directory or a file that is not a trace", () => {
    const missing = run("info", "/nonexistent/trace.etl");
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toBe("etw-wasm: no such file: /nonexistent/trace.etl\n");
    const dir = mkdtempSync(join(tmpdir(), "etw-wasm-"));
    const directory = run("summary", dir);
    expect(directory.code).toBe(1);
    expect(directory.stderr).toMatch(/^etw-wasm: .*EISDIR/);
    const junk = join(dir, "junk.etl");
    writeFileSync(junk, Buffer.from("this is certainly not an event trace log file".repeat(10)));
    const r = run("info", junk);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/not an ETL file.*byte offset 0/);
  });
});

describe("etw-wasm on a trace decoded only in part: what was decoded on stdout, one line on stderr, exit 1", () => {
  const STOPPED = /^etw-wasm: decoding stopped early at byte offset (\d+) \((\d+)% of (.+) read\): (.+)$/;

  /** The last stderr line of a run that stopped early, taken apart. */
  function stopped(r: RunResult, what: string): { offset: number; percent: number; file: string; reason: string } {
    expect({ what, code: r.code }).toEqual({ what, code: 1 });
    const lines = r.stderr.trimEnd().split("\n");
    const m = STOPPED.exec(lines[lines.length - 1]);
    expect(m, `${what}: ${r.stderr}`).not.toBeNull();
    // warnings may come before it, never a second stop line or a stack
    expect(
      lines.slice(0, -1).every((l) => l.startsWith("etw-wasm: warning at byte ")),
      `${what}: ${r.stderr}`,
    ).toBe(true);
    return { offset: Number(m![1]), percent: Number(m![2]), file: m![3], reason: m![4] };
  }

  it.skipIf(!HAVE_CORPUS)(
    "summary, events (jsonl, csv, json), gc and methods in batches of 64 KiB, and with 2 workers, print what one batch prints, on every corpus file",
    async () => {
      for (const name of corpusFiles()) {
        for (const args of [
          ["summary"],
          ["events", "--format", "jsonl"],
          ["events", "--event", "GC/Start"],
          ["events", "--format", "csv"],
          ["events", "--format", "json", "--provider", "Windows Kernel"],
          // named by an EventSource manifest that comes after its first events in net.4.5.2.x64
          ["events", "--event", "Microsoft-Windows-Kernel-File/Create"],
          ["gc", "--format", "csv"],
          ["methods", "--format", "jsonl"],
          // time order merged across batches
          ["events", "--time-order"],
          ["events", "--time-order", "--format", "csv", "--provider", "Microsoft-Windows-DotNETRuntime"],
        ]) {
          const whole = await runInProcess(args[0], etlPath(name), ...args.slice(1), "--workers", "0");
          const batched = await runInProcess(args[0], etlPath(name), ...args.slice(1), "--batch-size", "64KiB", "--workers", "0");
          const parallel = await runInProcess(args[0], etlPath(name), ...args.slice(1), "--batch-size", "64KiB", "--workers", "2");
          const what = `${name} ${args.join(" ")}`;
          for (const [how, r] of [
            ["batched", batched],
            ["2 workers", parallel],
          ] as const) {
            expect({ what, how, code: r.code, stderr: r.stderr }).toEqual({ what, how, code: whole.code, stderr: whole.stderr });
            expect(r.stdout === whole.stdout, `${what} ${how}`).toBe(true);
          }
        }
      }
    },
    900_000,
  );

  it("a generous --max-memory changes nothing on the sample (exit 0)", () => {
    expect(ok(run("events", SAMPLE, "--max-memory", "256MiB"))).toBe(ok(run("events", SAMPLE)));
  });

  it("nothing decodable under the limit: no output, exit 1, the line on stderr", () => {
    // the sample with a first buffer of 8 MiB
    const file = join(mkdtempSync(join(tmpdir(), "etw-wasm-limit-")), "large-first-buffer.etl");
    writeFileSync(file, withLargeBuffer(readFileSync(SAMPLE), 0, 8 << 20, "resize").bytes);
    const r = run("events", file, "--max-memory", "1MiB");
    expect(r.stdout).toBe("");
    const s = stopped(r, "1MiB");
    expect(s).toMatchObject({ offset: 0, percent: 0, file });
    expect(s.reason).toBe("decoding failed: memory limit of 1 MiB reached before the first buffer was decoded");
  });

  const X64 = "net.4.5.2.x64.etl";
  const COMMANDS: string[][] = [
    ["info"],
    ["summary"],
    ["events", "--format", "jsonl"],
    ["events", "--format", "json"],
    ["events", "--format", "csv"],
    ["events", "--format", "table"],
    ["events", "--format", "perfview"],
    ["events", "--provider", "Microsoft-Windows-DotNETRuntime", "--time-order"],
    ["gc"],
    ["gc", "--format", "jsonl"],
    ["methods", "--format", "csv"],
    ["methods"],
    ["jit", "--format", "jsonl"],
    ["convert", "--to", "arrow", "-o", join(mkdtempSync(join(tmpdir(), "etw-wasm-convert-")), "out")],
  ];

  /** Every command on `file` (with `extra` options): exit 1, the stop line, and what the API decodes printed. */
  async function everyCommand(file: string, extra: string[], limit: number | undefined, what: string) {
    const bytes = readFileSync(file);
    const t = await openTrace(bytes, { memoryLimit: limit });
    expect(t.complete, what).toBe(false);
    const { offset, message } = t.incomplete!;
    // (in this process, one after another: a process each adds start-up time and nothing to check)
    const results: RunResult[] = [];
    for (const c of COMMANDS) results.push(await runInProcess(c[0], file, ...c.slice(1), ...extra));
    const ref = await reference(X64);
    const full = await openTrace(readFileSync(etlPath(X64)));
    expect(t.events.length, what).toBeGreaterThan(1000);
    expect(t.events.length, what).toBeLessThan(full.events.length);
    for (let k = 0; k < COMMANDS.length; k++) {
      const args = COMMANDS[k].join(" ");
      const r = results[k];
      const s = stopped(r, `${what}: ${args}`);
      expect({ args, offset: s.offset, percent: s.percent, file: s.file, reason: s.reason }).toEqual({
        args,
        offset,
        percent: Math.floor((100 * t.decodedBytes) / bytes.length),
        file,
        reason: message,
      });
      expect(r.stdout.length, args).toBeGreaterThan(0);
      const lines = r.stdout.trimEnd().split("\n");
      const n = t.events.length;
      switch (args) {
        case "info": {
          const info = infoFields(r.stdout);
          expect({ records: info.records, size: info["file size"], decoded: info.decoded }).toEqual({
            records: String(n),
            size: String(bytes.length),
            decoded: `${t.decodedBytes} bytes (${s.percent}%)`,
          });
          expect(info.complete).toBe(`no (${t.incomplete!.reason} at byte offset ${offset}): ${message}`);
          break;
        }
        case "summary":
          expect(infoFields(r.stdout).records).toBe(String(n));
          expect(r.stdout).toContain("records per event name:");
          break;
        case "events --format jsonl": {
          // the records decoded before the stop are the reference dump's first records, line for line
          expect(lines.length, what).toBe(n);
          for (let i = 0; i < n; i++) {
            const want = JSON.stringify(referenceAsJson(ref.events[i]));
            if (lines[i] !== want) expect({ what, line: i + 1, ...JSON.parse(lines[i]) }).toEqual({ what, line: i + 1, ...JSON.parse(want) });
          }
          break;
        }
        case "events --format json":
          expect(JSON.parse(r.stdout)).toHaveLength(n);
          break;
        case "events --format csv":
        case "events --format table":
          expect(lines).toHaveLength(n + 1);
          break;
        case "events --format perfview":
          expect(r.stdout).toMatch(/^COUNT /m);
          break;
        case "events --provider Microsoft-Windows-DotNETRuntime --time-order":
          expect(lines).toHaveLength(t.query({ provider: "Microsoft-Windows-DotNETRuntime" }).length);
          break;
        case "gc --format jsonl": {
          // each process's GCs before the stop are its first GCs in the whole trace (the last may be cut short)
          const gcs = jsonLines(r.stdout);
          const all = jsonLines(ok(await runInProcess("gc", etlPath(X64), "--format", "jsonl")));
          expect(gcs.length).toBeGreaterThan(1);
          for (const pid of new Set(gcs.map((g) => g.PID))) {
            const mine = gcs.filter((g) => g.PID === pid);
            expect(mine.slice(0, -1)).toEqual(all.filter((g) => g.PID === pid).slice(0, mine.length - 1));
          }
          break;
        }
        case "methods --format csv":
          expect(lines[0]).toBe("pid,process,method,signature,startAddress,size,token,flags,source,timeMs");
          expect(lines.length).toBeGreaterThan(1);
          break;
        case "jit --format jsonl":
          expect(jsonLines(r.stdout).length).toBeGreaterThan(0);
          break;
        default:
          // convert: every record decoded before the stop is in the events table
          if (args.startsWith("convert")) expect(r.stdout).toContain(`events.arrow\t${n} rows`);
      }
    }
  }

  it.skipIf(!HAVE_CORPUS)(
    "a corpus trace cut in mid-buffer: every command",
    async () => {
      const full = await openTrace(readFileSync(etlPath(X64)));
      const { fileOffset, bufferSize } = full.buffer(Math.floor(full.bufferCount * 0.6));
      const cut = fileOffset + Math.floor(bufferSize / 2);
      const file = join(mkdtempSync(join(tmpdir(), "etw-wasm-cut-")), "cut.etl");
      writeFileSync(file, readFileSync(etlPath(X64)).subarray(0, cut));
      await everyCommand(file, [], undefined, "cut");
      // the commands that hold the trace whole for its stacks, and doctor: the same stop, and what was decoded before it
      const t = await openTrace(readFileSync(file));
      const out = join(mkdtempSync(join(tmpdir(), "etw-wasm-cut-cpu-")), "cut.folded");
      for (const args of [["cpu", "--format", "folded", "-o", out], ["stacks", "--event", "Microsoft-Windows-DotNETRuntime/GC/Start"], ["doctor"]]) {
        const r = await runInProcess(args[0], file, ...args.slice(1));
        expect(stopped(r, `cut: ${args.join(" ")}`).offset).toBe(t.incomplete!.offset);
        expect(r.stdout.length, args.join(" ")).toBeGreaterThan(0);
      }
      expect(readFileSync(out, "utf8").trim().split("\n").length).toBeGreaterThan(10);
      const r = await runInProcess("info", file);
      expect(stopped(r, "cut").reason).toMatch(new RegExp(`^the input ends inside the buffer at byte offset ${fileOffset} \\(`));
      expect(stopped(r, "cut").percent).toBe(100);
    },
    120_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "a corpus trace stopped by --max-memory: every command",
    async () => {
      // a buffer of 40 MiB after buffer 300: more than 12 MiB of memory can take
      const file = join(mkdtempSync(join(tmpdir(), "etw-wasm-limit-")), "large-buffer.etl");
      writeFileSync(file, withLargeBuffer(readFileSync(etlPath(X64)), 300, 40 << 20).bytes);
      await everyCommand(file, ["--max-memory", "12MiB"], 12 << 20, "12MiB");
      const s = stopped(await runInProcess("info", file, "--max-memory", "12MiB"), "12MiB");
      expect(s.reason).toBe("memory limit of 12 MiB reached: the tables cannot grow any further");
      expect(s.percent).toBeLessThan(100);
    },
    120_000,
  );

  it.skipIf(!HAVE_CORPUS)("a corpus trace cut at a buffer boundary: missing buffers, exit 1", async () => {
    const bytes = readFileSync(etlPath(X64));
    const full = await openTrace(bytes);
    const cut = full.buffer(200).fileOffset;
    const file = join(mkdtempSync(join(tmpdir(), "etw-wasm-cut-")), "boundary.etl");
    writeFileSync(file, bytes.subarray(0, cut));
    const r = run("events", file);
    expect(r.stdout.trimEnd().split("\n")).toHaveLength(full.buffer(200).firstRow);
    expect(stopped(r, "boundary")).toEqual({
      offset: cut,
      percent: 100,
      file,
      reason: `only 200 of the ${full.bufferCount} buffers the logfile header counts (BuffersWritten) are in the input`,
    });
  });
});

describe("etw-wasm generate", () => {
  it("writes a trace of about the requested size that decodes cleanly, compressed or not", () => {
    const dir = mkdtempSync(join(tmpdir(), "etw-wasm-gen-"));
    for (const [flags, ptr] of [
      [[], "8"],
      [["--compress", "--pointer-size", "4"], "4"],
    ] as const) {
      const out = join(dir, `g${ptr}.etl`);
      const g = run("generate", out, "--size", "2MiB", "--seed", "3", "--processors", "2", ...flags);
      expect(g.code).toBe(0);
      expect(g.stdout).toBe("");
      expect(g.stderr).toMatch(/^wrote .*: \d+ bytes in [\d.]+ s\n$/);
      const info = run("info", out);
      expect(info.code).toBe(0);
      expect(info.stdout).toMatch(/warnings:\s+0/);
      expect(info.stdout).toContain(`pointer size:  ${ptr}`);
      expect(info.stdout).toContain("processors:    2 @");
      const records = Number(/records:\s+(\d+)/.exec(info.stdout)![1]);
      expect(records).toBeGreaterThan(5000);
      if (!flags.length) expect(statSync(out).size).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    }
  });
});

describe("etw-wasm summary, events filters and formats, gc, methods on the sample", () => {
  it("gc, jit and methods read the trace once, as summary does: process names from the same pass", () => {
    const hook = fileURLToPath(new URL("./helpers/count-opens.mjs", import.meta.url));
    const opens = (command: string) => {
      const r = spawnSync(process.execPath, ["--import", hook, CLI, command, SAMPLE], { encoding: "utf8", env: { ...process.env, COUNT_OPENS: SAMPLE } });
      expect(r.status, command).toBe(0);
      return Number(/opens of the trace: (\d+)/.exec(r.stderr)?.[1]);
    };
    const once = opens("summary");
    expect(once).toBeGreaterThanOrEqual(1);
    // (each named its processes from a pass of its own over the file before)
    for (const command of ["gc", "jit", "methods"]) expect(opens(command), command).toBe(once);
  });

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
    const table = run(...args, "--format", "table")
      .stdout.trimEnd()
      .split("\n");
    expect(table).toHaveLength(want + 1);
    // --option=value is the same as --option value
    expect(run("events", SAMPLE, "--provider=Microsoft-Windows-DotNETRuntime", "--event=GC/Start", "--from=2", "--to=30", "--pid=4242").stdout).toBe(
      jsonl.stdout,
    );
  });

  it("gc gives one row per GC with pause and heap sizes; methods lists JIT loads per process", async () => {
    const t = await openTrace(readFileSync(SAMPLE));
    const gcs = jsonLines(run("gc", SAMPLE, "--format", "jsonl").stdout);
    // (the query's rows are one cursor: read each as it comes)
    const heapStats = Array.from(t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 4, order: "time" }), (r) =>
      [0, 1, 2, 3, 4].map((n) => Number(r.get(`GenerationSize${n}`))),
    );
    expect(gcs).toHaveLength(t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 1 }).length);
    gcs.forEach((g, k) => {
      expect(g.ProcessName).toBe("Contoso.Orders");
      expect(g.PauseDurationMSec).toBeGreaterThanOrEqual(g.DurationMSec);
      // the heap after: the GC's HeapStats, every generation, in MB
      const sizes = heapStats[k];
      expect(g.HeapSizeAfterMB).toBeCloseTo(sizes.reduce((a, b) => a + b, 0) / 1e6, 9);
      expect(g.Reason).toBe("AllocSmall");
    });
    expect(gcs.map((g) => g.Number)).toEqual([...gcs.map((g) => g.Number)].sort((a, b) => a - b));
    const methods = run("methods", SAMPLE, "--format", "csv").stdout.trimEnd().split("\n");
    expect(methods.length - 1).toBe(t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 143 }).length);
    expect(methods[1]).toMatch(/^4242,Contoso\.Orders,/);
  });
});

// ---- corpus: oracles from the reference dumps and PerfView's baselines ----

const CLR = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4"; // Microsoft-Windows-DotNETRuntime
const RUNDOWN = "a669021c-c450-4609-a035-5af59af4df18"; // Microsoft-Windows-DotNETRuntimeRundown
const GUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
/** The one corpus file whose logfile header says BuffersWritten 0: the reference reads none of its records. */
const NO_BUFFERS_WRITTEN = "s4-CldFlt2-2025-12-21-121418.etl";

const references = new Map<string, Promise<Reference>>();
const reference = (name: string) => {
  if (!references.has(name)) references.set(name, readReference(referencePath(name)));
  return references.get(name)!;
};

function countBy<T>(items: Iterable<T>, key: (x: T) => string | number | undefined): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of items) {
    const k = key(x);
    if (k !== undefined) m.set(String(k), (m.get(String(k)) ?? 0) + 1);
  }
  return m;
}

const sorted = (m: Map<string, number>) => Object.fromEntries([...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));

/** `key: value` lines of info (the key padded to 15 columns) as a record. */
function infoFields(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const key = /^([A-Za-z][A-Za-z ]*):\s*$/.exec(line.slice(0, 15));
    if (key) out[key[1]] = line.slice(15);
  }
  return out;
}

/** The summary's indented lists, by heading ("records per provider:" ...). */
function summaryLists(text: string): Map<string, string[]> {
  const lists = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split("\n")) {
    if (/^\S.*:$/.test(line)) lists.set(line, (current = []));
    else if (line.startsWith("  ") && current) current.push(line);
    else current = undefined;
  }
  return lists;
}

const FILETIME_UNIX_EPOCH = 116444736000000000n;
const isoOfFiletime = (ft: unknown) => new Date(Number((BigInt(ft as string | number) - FILETIME_UNIX_EPOCH) / 10000n)).toISOString();

/** What info prints, from the reference's logfile header and buffer list. */
function expectedInfo(name: string, ref: Reference): Record<string, string> {
  const f = ref.file;
  const v = parseInt(f.version as string, 16);
  const clock = ({ 1: "QPC", 2: "SystemTime" } as Record<number, string>)[f.reserved_flags as number];
  expect(clock, `${name}: clock type ${f.reserved_flags}`).toBeDefined();
  return {
    logger: f.logger_name as string,
    "log file": f.log_file_name as string,
    start: isoOfFiletime(f.start_time),
    end: String(f.end_time) === "0" ? "(not stopped cleanly)" : isoOfFiletime(f.end_time),
    boot: isoOfFiletime(f.boot_time),
    OS: `${v & 0xff}.${(v >> 8) & 0xff}.${(v >> 16) & 0xff}.${v >>> 24} build ${f.provider_version}`,
    processors: `${f.number_of_processors} @ ${f.cpu_speed_mhz} MHz`,
    "pointer size": `${f.pointer_size} (header record ${f.header_is_64bit ? 64 : 32}-bit)`,
    clock: `${clock}, ${f.perf_freq} Hz, timer resolution ${f.timer_resolution}`,
    "buffer size": String(f.buffer_size),
    "log file mode": f.log_file_mode as string,
    buffers: `${ref.buffers.length} read (${ref.buffers.filter((b) => b.compressed).length} compressed), ${f.buffers_written} written, ${f.buffers_lost} lost`,
    "events lost": String(f.events_lost),
    records: String(ref.events.length),
    "file size": String(f.file_size),
    decoded: `${f.file_size} bytes (100%)`,
    complete: "yes",
    warnings: "0",
  };
}

/** `COUNT name:n` lines of a PerfView baseline. */
function baselineCounts(name: string): Map<string, number> {
  const text = readFileSync(join(CORPUS, "baselines", `${name}.baseline.txt`), "utf8");
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^COUNT (.*):(\d+)\r?$/gm)) counts.set(m[1], Number(m[2]));
  return counts;
}

/** pid -> PName of a PerfView baseline's EVENT lines (TraceEvent's process names). */
function baselineProcessNames(name: string): Map<number, string> {
  const text = readFileSync(join(CORPUS, "baselines", `${name}.baseline.txt`), "utf8");
  const names = new Map<number, string>();
  for (const m of text.matchAll(/^EVENT [\d,.]+: Microsoft-Windows-DotNETRuntime\/\S+ PID=(\d+); TID=\d+; PName=([^;]*);/gm)) {
    names.set(Number(m[1]), m[2]);
  }
  return names;
}

/** Records in time order (stable: file order among equal timestamps). */
function byTime(records: ReferenceRecord[]): ReferenceRecord[] {
  return records
    .map((r, i) => ({ r, i, ts: timestampOf(r) }))
    .sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.i - b.i))
    .map((x) => x.r);
}

/** Cells of an aligned table, split at the header's column starts. */
function tableRows(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trimEnd().split("\n");
  const columns = [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index! }));
  return lines.map((line) =>
    Object.fromEntries(columns.map((c, k) => [c.name, line.slice(c.at, k + 1 < columns.length ? columns[k + 1].at : undefined).trim()])),
  );
}

/** Rows of a csv without quoted commas in any but the last column (true of the event columns). */
function csvRows(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trimEnd().split("\n");
  const columns = header.split(",");
  return lines.map((line) => {
    const cells = line.split(",");
    const last = cells.slice(columns.length - 1).join(",");
    const fields = last.startsWith('"') ? last.slice(1, -1).replace(/""/g, '"') : last;
    return Object.fromEntries([...columns.slice(0, -1).map((c, k) => [c, cells[k]]), [columns[columns.length - 1], fields]]);
  });
}

// .NET runtime events whose payloads the checks below read by hand (Microsoft-Windows-DotNETRuntime ids, from
// the runtime's manifest): GC/Start (Count, Depth, Reason, Type u32), GC/Stop (Count, Depth u32),
// GC/RestartEEStop, GC/HeapStats (GenerationSize0..3 u64, each followed by its TotalPromotedSize u64),
// GC/SuspendEEStart (Reason, Count u32).
const GC_START = 1,
  GC_STOP = 2,
  GC_RESTART_EE_STOP = 3,
  GC_HEAP_STATS = 4,
  GC_SUSPEND_EE_START = 9;
const CLR_NAMES: Record<number, string> = {
  [GC_START]: "GC/Start",
  [GC_STOP]: "GC/Stop",
  [GC_RESTART_EE_STOP]: "GC/RestartEEStop",
  [GC_HEAP_STATS]: "GC/HeapStats",
  [GC_SUSPEND_EE_START]: "GC/SuspendEEStart",
};
// The manifest's GCReason and GCType value maps.
const GC_REASONS = [
  "AllocSmall",
  "Induced",
  "LowMemory",
  "Empty",
  "AllocLarge",
  "OutOfSpaceSOH",
  "OutOfSpaceLOH",
  "InducedNotForced",
  "Internal",
  "InducedLowMemory",
  "InducedCompacting",
  "LowMemoryHost",
  "PMFullGC",
  "LowMemoryHostBlocking",
];
const GC_TYPES = ["NonConcurrentGC", "BackgroundGC", "ForegroundGC"];

const u32 = (r: ReferenceRecord, at: number) => payloadOf(r).readUInt32LE(at);
const u64 = (r: ReferenceRecord, at: number) => Number(payloadOf(r).readBigUInt64LE(at));

/** The decoded fields the events command must show for a GC record, read from the payload bytes. */
function gcFieldsByHand(r: ReferenceRecord): Record<string, unknown> | undefined {
  if (r.provider !== CLR) return undefined;
  switch (r.id) {
    case GC_START:
      return { Count: u32(r, 0), Depth: u32(r, 4), Reason: u32(r, 8), Type: u32(r, 12) };
    case GC_STOP:
      return { Count: u32(r, 0), Depth: u32(r, 4) };
    case GC_SUSPEND_EE_START:
      return { Reason: u32(r, 0), Count: u32(r, 4) };
    case GC_HEAP_STATS:
      // u64 values are strings in the fields JSON
      return Object.fromEntries([0, 1, 2, 3].map((g) => [`GenerationSize${g}`, String(u64(r, 16 * g))]));
  }
  return undefined;
}

/** One event of the events command (csv, json or table cells, as strings) against its reference record. */
function checkEventRecord(name: string, index: number, got: Record<string, unknown>, r: ReferenceRecord, ms: number, names: Map<number, string>) {
  const cell = (k: string) => String(got[k] ?? "");
  const where = `${name} row ${index}`;
  expect(
    {
      row: cell("row"),
      pid: cell("pid"),
      tid: cell("tid"),
      processor: cell("processor"),
      headerType: cell("headerType"),
      payloadLength: cell("payloadLength"),
    },
    where,
  ).toEqual({
    row: String(index),
    pid: String(r.pid ?? ""),
    tid: String(r.tid ?? ""),
    processor: String(r.processor_number),
    headerType: r.htn,
    payloadLength: String(r.payload_len),
  });
  expect(Math.abs(Number(cell("timeMs")) - ms), `${where} timeMs`).toBeLessThanOrEqual(0.00006);
  if (r.pid !== undefined && names.has(r.pid as number)) expect(cell("process"), `${where} process`).toBe(names.get(r.pid as number));
  if (r.provider === CLR && CLR_NAMES[r.id as number])
    expect(cell("name"), `${where} name`).toBe(`Microsoft-Windows-DotNETRuntime/${CLR_NAMES[r.id as number]}`);
  const fields = gcFieldsByHand(r);
  if (fields) expect(JSON.parse(cell("fields")), `${where} fields`).toMatchObject(fields);
}

describe.skipIf(!HAVE_CORPUS)("etw-wasm on the corpus, against the reference dumps", () => {
  it("info of every file: the logfile header, buffers and records of the reference", async () => {
    const files = corpusFiles();
    const results: RunResult[] = [];
    for (const name of files) results.push(await runInProcess("info", etlPath(name)));
    for (let k = 0; k < files.length; k++) {
      const name = files[k];
      const got = infoFields(ok(results[k]));
      const want = expectedInfo(name, await reference(name));
      if (name === NO_BUFFERS_WRITTEN) {
        // The reference walks BuffersWritten (0) buffers; the header buffer holds the header record and one more.
        Object.assign(want, { buffers: "1 read (0 compressed), 0 written, 0 lost", records: "2" });
      }
      const { "time zone": _, ...rest } = got;
      expect({ name, ...rest }).toEqual({ name, ...want });
    }
  });

  it("summary of every file: records per header type, provider and process, and the time span", async () => {
    const files = corpusFiles().filter((n) => n !== NO_BUFFERS_WRITTEN);
    const results: RunResult[] = [];
    for (const name of files) results.push(await runInProcess("summary", etlPath(name)));
    for (let k = 0; k < files.length; k++) {
      const name = files[k];
      const text = ok(results[k]);
      const ref = await reference(name);
      const lists = summaryLists(text);
      const info = infoFields(text);
      expect(info.records, name).toBe(String(ref.events.length));

      const perType = new Map<string, number>();
      for (const l of lists.get("records per header type:")!) {
        const [, n, type] = /^\s+(\d+)\s+(\S+)$/.exec(l)!;
        perType.set(type, Number(n));
      }
      expect({ name, ...sorted(perType) }).toEqual({ name, ...sorted(countBy(ref.events, (r) => r.htn as string)) });

      // Providers by GUID (kernel groups: the reference's group GUIDs); several lines may share one.
      const perProvider = new Map<string, number>();
      for (const l of lists.get("records per provider:")!) {
        const m = /^\s+(\d+)\s+(.*?)(?:\s\s\{([0-9a-f-]{36})\})?$/.exec(l)!;
        const guid = m[3] ?? GUID.exec(m[2])![0];
        perProvider.set(guid, (perProvider.get(guid) ?? 0) + Number(m[1]));
      }
      expect({ name, ...sorted(perProvider) }).toEqual({ name, ...sorted(countBy(ref.events, (r) => r.provider as string)) });

      // Processes: records per pid, except headers without one (PERFINFO) and pid 0xFFFFFFFF.
      const perPid = new Map<string, number>();
      for (const l of lists.get("processes (records logged by each):")!) {
        const [, n, pid] = /^\s+(\d+)\s+(\d+)\s+\S/.exec(l)!;
        perPid.set(pid, Number(n));
      }
      const refPids = countBy(ref.events, (r) => (r.pid === undefined || r.pid === 0xffffffff ? undefined : (r.pid as number)));
      expect({ name, ...sorted(perPid) }).toEqual({ name, ...sorted(refPids) });

      // Records per event name add up to all records.
      const perName = lists.get("records per event name:")!.map((l) => Number(/^\s+(\d+)\s/.exec(l)![1]));
      expect(
        perName.reduce((a, b) => a + b, 0),
        name,
      ).toBe(ref.events.length);

      const rel = relativeMs(ref);
      let [first, last] = [Infinity, -Infinity];
      for (const r of ref.events) [first, last] = [Math.min(first, rel(r)), Math.max(last, rel(r))];
      const span = last - first;
      expect(Math.abs(Number(/^([\d.]+) ms$/.exec(info["time span"])![1]) - span), `${name} time span`).toBeLessThanOrEqual(0.0006);
    }
  });

  it("summary's records per event name equal PerfView's COUNT lines", async () => {
    // The baselines count every event TraceLog keeps; in these three files it drops none but the
    // EventTrace opcode-80 header-buffer record (corpus README 4.1), and rundown method bookkeeping.
    for (const name of ["gcevents", "gcrundownevents", "primitive-types"]) {
      const lists = summaryLists(ok(await runInProcess("summary", etlPath(`${name}.etl`))));
      const perName = new Map<string, number>();
      for (const l of lists.get("records per event name:")!) {
        const [, n, event] = /^\s+(\d+)\s+(.+)$/.exec(l)!;
        perName.set(event, Number(n));
      }
      for (const [event, n] of baselineCounts(name)) expect({ name, event, n: perName.get(event) }).toEqual({ name, event, n });
    }
  });

  it("events --format jsonl equals the reference dump of every file", async () => {
    const files = corpusFiles().filter((n) => n !== NO_BUFFERS_WRITTEN);
    for (const name of files) {
      const lines = ok(await runInProcess("events", etlPath(name), "--format", "jsonl"))
        .trimEnd()
        .split("\n");
      const { events } = await reference(name);
      expect(lines.length, name).toBe(events.length);
      for (let i = 0; i < events.length; i++) {
        const want = JSON.stringify(referenceAsJson(events[i]));
        if (lines[i] !== want) expect({ name, line: i + 1, ...JSON.parse(lines[i]) }).toEqual({ name, line: i + 1, ...JSON.parse(want) });
      }
    }
    // The header buffer of the BuffersWritten-0 file: the logfile-header record and one more.
    expect(
      ok(await runInProcess("events", etlPath(NO_BUFFERS_WRITTEN)))
        .trimEnd()
        .split("\n"),
    ).toHaveLength(2);
  });

  it("events --format csv, json and table of gcevents: every record's columns and the GC payload fields", async () => {
    const name = "gcevents";
    const ref = await reference(`${name}.etl`);
    const rel = relativeMs(ref);
    const names = baselineProcessNames(name);
    const file = etlPath(`${name}.etl`);
    const csv = csvRows(ok(await runInProcess("events", file, "--format", "csv")));
    const json = JSON.parse(ok(await runInProcess("events", file, "--format", "json"))) as Record<string, unknown>[];
    const table = tableRows(ok(await runInProcess("events", file, "--format", "table")));
    for (const [format, rows] of [
      ["csv", csv],
      ["json", json],
      ["table", table],
    ] as const) {
      expect(rows.length, format).toBe(ref.events.length);
      rows.forEach((row, i) => checkEventRecord(`${name} ${format}`, i, row, ref.events[i], rel(ref.events[i]), names));
    }
    // The three formats agree cell for cell.
    expect(table).toEqual(csv);
    expect(json.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? "" : String(v)])))).toEqual(csv);
    // Event names: PerfView's COUNT lines, plus the EventTrace opcode-80 record TraceLog leaves out.
    const counts = countBy(csv, (r) => r.name);
    const opcode80 = ref.events.filter((r) => r.group === 0 && r.opcode === 80).length;
    expect(sorted(counts)).toEqual(sorted(new Map([...baselineCounts(name), ["MSNT_SystemTrace/EventTrace/Opcode(80)", opcode80]])));
  });

  it("events filters of net.4.5.2.x64 equal the reference records filtered by hand", async () => {
    const name = "net.4.5.2.x64.etl";
    const ref = await reference(name);
    const file = etlPath(name);
    const rel = relativeMs(ref);
    const cases: [string[], (r: ReferenceRecord) => boolean][] = [
      [["--provider", "Microsoft-Windows-DotNETRuntime"], (r) => r.provider === CLR],
      [["--provider", RUNDOWN], (r) => r.provider === RUNDOWN],
      [["--pid", "3676"], (r) => r.pid === 3676],
      [["--tid", "3680"], (r) => r.tid === 3680],
      [["--from", "3000", "--to", "3500.25"], (r) => atOrAfterMs(ref, r, "3000") && atOrBeforeMs(ref, r, "3500.25")],
      [["--from", "12000"], (r) => atOrAfterMs(ref, r, "12000")],
      [["--to", "0.5"], (r) => atOrBeforeMs(ref, r, "0.5")],
      // GC/Start is event 1 of the .NET runtime provider
      [["--event", "GC/Start"], (r) => r.provider === CLR && r.id === GC_START],
      [["--event", "microsoft-windows-dotnetruntime/gc/heapstats"], (r) => r.provider === CLR && r.id === GC_HEAP_STATS],
      [
        ["--provider", "Microsoft-Windows-DotNETRuntime", "--event", "GC/Stop", "--pid", "3676", "--tid", "3680", "--from", "3228", "--to", "3400"],
        (r) => r.provider === CLR && r.id === GC_STOP && r.pid === 3676 && r.tid === 3680 && atOrAfterMs(ref, r, "3228") && atOrBeforeMs(ref, r, "3400"),
      ],
    ];
    const results: RunResult[] = [];
    for (const [args] of cases) results.push(await runInProcess("events", file, ...args));
    for (let k = 0; k < cases.length; k++) {
      const [args, keep] = cases[k];
      const want = ref.events.filter(keep).map((r) => JSON.stringify(referenceAsJson(r)));
      const got = ok(results[k])
        .split("\n")
        .filter((l) => l);
      expect({ args, n: got.length }).toEqual({ args, n: want.length });
      expect(got, args.join(" ")).toEqual(want);
      if (k === 0 || k === 4) expect(want.length, args.join(" ")).toBeGreaterThan(1000);
    }
    // the time filter's edges: a record exactly on a bound is kept
    const gc = ref.events.find((r) => r.provider === CLR && r.id === GC_START)!;
    const edge = (Number(timestampOf(gc) - timestampOf(ref.events[0])) / 10_000).toFixed(4); // PerfFreq 10 MHz: exact
    expect(Number(edge)).toBeCloseTo(rel(gc), 6);
    const onEdge = jsonLines(ok(await runInProcess("events", file, "--from", edge, "--to", edge, "--provider", CLR)));
    expect(onEdge.map((j) => j.timestamp)).toContain(String(gc.ts));
  });

  it("events --time-order: every record once, in the reference's timestamp order", async () => {
    for (const name of ["gcevents.etl", "net.4.5.x86.etl"]) {
      const ref = await reference(name);
      const args = name === "gcevents.etl" ? [] : ["--pid", "1980"];
      const rows = csvRows(ok(await runInProcess("events", etlPath(name), "--time-order", "--format", "csv", ...args))).map((r) => Number(r.row));
      const want = ref.events.map((r, i) => ({ r, i })).filter(({ r }) => !args.length || r.pid === 1980);
      expect(
        [...rows].sort((a, b) => a - b),
        name,
      ).toEqual(want.map((x) => x.i));
      const ts = rows.map((i) => timestampOf(ref.events[i]));
      expect(
        ts.every((t, k) => k === 0 || ts[k - 1] <= t),
        `${name} timestamps ascending`,
      ).toBe(true);
      expect(rows, `${name} not just file order`).not.toEqual(want.map((x) => x.i));
    }
  });

  it("gc: one row per GC, with numbers, generations, times and heap sizes from the raw GC events", async () => {
    for (const name of ["gcevents", "net.4.5.2.x64", "net.4.5.x86"]) {
      const ref = await reference(`${name}.etl`);
      const rel = relativeMs(ref);
      const rows = jsonLines(ok(await runInProcess("gc", etlPath(`${name}.etl`), "--format", "jsonl")));
      const want = gcRowsByHand(ref, rel);
      expect({ name, gcs: rows.length }).toEqual({ name, gcs: want.length });
      expect(want.length).toBeGreaterThan(1);
      // rows by process, then GC number
      want.sort((a, b) => a.pid - b.pid || a.gc - b.gc);
      const processNames = baselineProcessNames(name);
      rows.forEach((got, k) => {
        const w = want[k];
        const where = `${name} GC ${k}`;
        expect({ where, pid: got.PID, gc: got.Number, generation: got.Generation, reason: got.Reason, type: got.Type }).toEqual({
          where,
          pid: w.pid,
          gc: w.gc,
          generation: w.generation,
          reason: w.reason,
          type: w.type,
        });
        expect(Math.abs(got.PauseStartRelativeMSec - w.suspendMs), `${where} PauseStartRelativeMSec`).toBeLessThanOrEqual(1e-9);
        expect(Math.abs(got.DurationMSec - w.durationMs), `${where} DurationMSec`).toBeLessThanOrEqual(1e-9);
        expect(Math.abs(got.PauseDurationMSec - w.pauseMs), `${where} PauseDurationMSec`).toBeLessThanOrEqual(1e-9);
        // sizes after (the payloads of the dump stop at 64 bytes: gen0..LOH; POH, where logged, adds)
        expect(got.HeapSizeAfterMB * 1e6, where).toBeGreaterThanOrEqual(w.sizes.reduce((a, b) => a + b, 0) - 0.5);
        if (processNames.has(w.pid)) expect(got.ProcessName, where).toBe(processNames.get(w.pid));
      });
    }
  });
});

interface GcByHand {
  pid: number;
  gc: number;
  generation: number;
  reason: string;
  type: string;
  suspendMs: number;
  durationMs: number;
  pauseMs: number;
  sizes: number[];
}

/**
 * GCs from the raw .NET runtime records of a reference dump, per process in time order: a GC is a GC/Start
 * count (.NET Framework 4.5 logs two GC/Start records per GC, versions 1 and 2, which must agree); it lasts to
 * the GC/Stop with the same count; its pause runs from the last GC/SuspendEEStart before it to the first
 * GC/RestartEEStop after it; its sizes are those of the first GC/HeapStats after it.
 */
function gcRowsByHand(ref: Reference, rel: (r: ReferenceRecord) => number): GcByHand[] {
  const clr = byTime(ref.events.filter((r) => r.provider === CLR && CLR_NAMES[r.id as number] !== undefined));
  const out: GcByHand[] = [];
  for (const pid of new Set(clr.map((r) => r.pid as number))) {
    const events = clr.filter((r) => r.pid === pid);
    const starts = new Map<number, ReferenceRecord[]>();
    for (const r of events) if (r.id === GC_START) starts.set(u32(r, 0), [...(starts.get(u32(r, 0)) ?? []), r]);
    for (const [count, records] of starts) {
      const [first] = records;
      for (const again of records.slice(1)) expect(payloadOf(again).subarray(0, 16)).toEqual(payloadOf(first).subarray(0, 16));
      const at = events.indexOf(first);
      const stop = events.findIndex((r, i) => i > at && r.id === GC_STOP && u32(r, 0) === count);
      const heap = events.findIndex((r, i) => i > stop && r.id === GC_HEAP_STATS);
      const restart = events.findIndex((r, i) => i > stop && r.id === GC_RESTART_EE_STOP);
      const suspend = events.findLastIndex((r, i) => i < at && r.id === GC_SUSPEND_EE_START);
      expect(
        [stop, heap, restart, suspend].every((i) => i >= 0),
        `pid ${pid} GC ${count}: complete`,
      ).toBe(true);
      out.push({
        pid,
        gc: count,
        generation: u32(first, 4),
        reason: GC_REASONS[u32(first, 8)],
        type: GC_TYPES[u32(first, 12)],
        suspendMs: rel(events[suspend]),
        durationMs: rel(events[stop]) - rel(first),
        pauseMs: rel(events[restart]) - rel(events[suspend]),
        sizes: [0, 1, 2, 3].map((g) => u64(events[heap], 16 * g)),
      });
    }
  }
  return out;
}
