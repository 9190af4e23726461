// Following a file another process is still writing (streamTraceFile's follow, the CLI's --follow):
// the generator's chunks are written to a file at intervals while the reader follows it. The rows must
// equal those of the finished file read the ordinary way (and the generator's own count), none read
// twice or lost; a writer that stops mid-block gives the trace a cut file gives, incomplete at its offset.

import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { streamTrace, type TraceStream } from "../dist/bindings/index.js";
import { streamTraceFile } from "../dist/bindings/node.js";
import { nettraceChunks } from "../dist/bindings/generator/generate-nettrace.js";
import { traceChunks } from "../dist/bindings/generator/generate.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "etw-wasm-follow-"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The generator's .nettrace as chunks of 16 KiB, a sequence point every 256 KiB (so batches come as it grows). */
function nettraceParts(): { chunks: Uint8Array[]; events: number } {
  const it = nettraceChunks({ targetBytes: 3 << 20, seed: 11, sequencePointBytes: 256 << 10, chunkBytes: 16 << 10 });
  const chunks: Uint8Array[] = [];
  for (let r = it.next(); ; r = it.next()) {
    if (r.done) return { chunks, events: r.value.events };
    chunks.push(r.value.slice());
  }
}

/** Writes `chunks` (up to `bytes` of them) to `path`, one every `ms`; `written` counts those written. */
function writer(path: string, chunks: Uint8Array[], ms: number, bytes = Infinity) {
  const state = { written: 0, done: false };
  const fd = openSync(path, "w");
  const run = (async () => {
    let at = 0;
    for (const c of chunks) {
      const part = c.subarray(0, Math.max(0, Math.min(c.length, bytes - at)));
      if (part.length) writeSync(fd, part);
      at += part.length;
      state.written++;
      if (at >= bytes) break;
      await sleep(ms);
    }
    closeSync(fd);
    state.done = true;
  })();
  return Object.assign(state, { run });
}

/** Every batch's events and typed rows, with the columns that tell the rows apart, and how many batches came while the writer wrote. */
async function collect(stream: TraceStream, w?: { done: boolean }) {
  const ts: bigint[] = [],
    ids: number[] = [];
  let typed = 0,
    batches = 0,
    whileWriting = 0;
  for await (const b of stream) {
    batches++;
    if (w && !w.done) whileWriting++;
    for (let i = 0; i < b.events.length; i++) {
      ts.push(b.events.columns.timestamp[i]);
      ids.push(b.events.columns.eventId[i]);
    }
    for (const t of b.tables) typed += t.length;
  }
  return { ts, ids, typed, batches, whileWriting, end: stream.end! };
}

describe("follow a file being written", () => {
  it("a .nettrace: batches come as its sequence points arrive; the rows are the finished file's, none twice or lost", async () => {
    const { chunks, events } = nettraceParts();
    // (the finished file read first: the reader's modules are loaded before the writer starts)
    const finished = await collect(streamTrace(Buffer.concat(chunks)));
    const path = join(dir, "growing.nettrace");
    const w = writer(path, chunks, 15);
    const followed = await collect(await streamTraceFile(path, { follow: { pollMs: 5 } }), w);
    await w.run;
    expect(Buffer.compare(readFileSync(path), Buffer.concat(chunks))).toBe(0);
    expect(followed.end.complete).toBe(true);
    expect(followed.ts.length).toBe(events); // the generator's own count
    expect(followed.ts).toEqual(finished.ts);
    expect(followed.ids).toEqual(finished.ids);
    expect(followed.typed).toBe(finished.typed);
    // (a batch per sequence point, the first ones before the writer was done)
    expect(followed.batches).toBe(finished.batches);
    expect(followed.whileWriting).toBeGreaterThan(0);
  });

  it("a writer that stops mid-block: incomplete at the offset a file cut there gives, with the same rows; an AbortSignal ends it alike", async () => {
    const { chunks } = nettraceParts();
    const total = chunks.reduce((n, c) => n + c.length, 0);
    const cut = Math.floor(total * 0.6) + 3;
    const all = new Uint8Array(total);
    chunks.reduce((at, c) => (all.set(c, at), at + c.length), 0);
    const cutFile = await collect(streamTrace(all.subarray(0, cut)));
    expect(cutFile.end.complete).toBe(false);

    const path = join(dir, "stopped.nettrace");
    const w = writer(path, chunks, 2, cut);
    const idle = await collect(await streamTraceFile(path, { follow: { pollMs: 5, idleMs: 300 } }));
    await w.run;
    expect(idle.end.complete).toBe(false);
    expect(idle.end.incomplete!.offset).toBe(cutFile.end.incomplete!.offset);
    expect(idle.end.incomplete!.message).toBe(cutFile.end.incomplete!.message);
    expect(idle.ts).toEqual(cutFile.ts);

    const controller = new AbortController();
    const path2 = join(dir, "aborted.nettrace");
    const w2 = writer(path2, chunks, 2, cut);
    void w2.run.then(() => sleep(200)).then(() => controller.abort());
    const aborted = await collect(await streamTraceFile(path2, { follow: { pollMs: 5, signal: controller.signal } }));
    expect(aborted.end.incomplete!.offset).toBe(cutFile.end.incomplete!.offset);
    expect(aborted.ts).toEqual(cutFile.ts);
  });

  it("an .etl written buffer by buffer (sequential mode): followed until it stops growing, the finished file's rows", async () => {
    const chunks = [...traceChunks({ targetBytes: 3 << 20, seed: 5 })].map((c) => c.slice());
    // (smaller pieces than the generator's, so the file grows in many steps, part buffers included)
    const pieces = chunks.flatMap((c) => Array.from({ length: Math.ceil(c.length / 100_000) }, (_, k) => c.subarray(k * 100_000, (k + 1) * 100_000)));
    const finished = await collect(streamTrace(Buffer.concat(chunks), { batchBytes: 256 << 10 }));
    const path = join(dir, "growing.etl");
    const w = writer(path, pieces, 10);
    const followed = await collect(await streamTraceFile(path, { follow: { pollMs: 5, idleMs: 400 }, batchBytes: 256 << 10 }), w);
    await w.run;
    expect(Buffer.compare(readFileSync(path), Buffer.concat(chunks))).toBe(0);
    expect(followed.end.complete).toBe(true);
    expect(followed.ts).toEqual(finished.ts);
    expect(followed.ids).toEqual(finished.ids);
    expect(followed.typed).toBe(finished.typed);
    expect(followed.whileWriting).toBeGreaterThan(0);
  });

  it("the CLI: summary and gc --follow while the file is written print what they print of the finished file; --follow-idle on a file cut short exits 1 saying where", async () => {
    const { chunks } = nettraceParts();
    for (const command of ["summary", "gc"]) {
      const path = join(dir, `cli-${command}.nettrace`);
      writeFileSync(path, "");
      const child = spawn(process.execPath, [CLI, command, path, "--follow"], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "",
        stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
      await sleep(300);
      const w = writer(path, chunks, 5);
      await w.run;
      const code = await exited;
      expect({ command, code, stderr }).toEqual({ command, code: 0, stderr: "" });
      const plain = await runCli([command, path]);
      expect(plain.code).toBe(0);
      expect(stdout).toBe(plain.stdout);
      if (command === "gc") expect(stdout.split("\n").length).toBeGreaterThan(3);
    }
    const total = chunks.reduce((n, c) => n + c.length, 0);
    const cut = join(dir, "cli-cut.nettrace");
    const all = Buffer.concat(chunks);
    writeFileSync(cut, all.subarray(0, Math.floor(total / 2) + 5));
    const r = await runCli(["summary", cut, "--follow", "--follow-idle", "0.3"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^format: +EventPipe V5/m);
    expect(r.stderr).toMatch(/^etw-wasm: stopped following .*cli-cut\.nettrace \(no growth for 0\.3 s\) at byte offset \d+, before the file's end: /m);
    // Ctrl-C: the same, said so
    const child = spawn(process.execPath, [CLI, "summary", cut, "--follow"], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "",
      stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    // (once it has the file open, it is following: its Ctrl-C handler is in place before that)
    for (let t = 0; t < 400 && !opened(child.pid!, cut); t++) await sleep(50);
    child.kill("SIGINT");
    expect(await exited).toBe(1);
    expect(stdout).toMatch(/^format: +EventPipe V5/m);
    expect(stderr).toMatch(/^etw-wasm: stopped following .*cli-cut\.nettrace \(Ctrl-C\) at byte offset \d+, before the file's end: /m);
    expect((await runCli(["summary", cut, "--follow-idle", "1"])).code).toBe(2);
    expect((await runCli(["events", cut, "--follow", "--format", "table"])).code).toBe(2);
  });
});

/** Whether process `pid` has `path` open (Linux's /proc). */
function opened(pid: number, path: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "",
      stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
