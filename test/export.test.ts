// Columnar export: DuckDB (a real engine) reads the Parquet that `etw-wasm convert` writes, and
// flechette (an Arrow reader independent of the apache-arrow writer) reads the Arrow IPC; both are
// checked against the decoder's own tables: row counts, counts per provider, GC/Start Count values,
// a join of events with processes, a time range equal to trace.query's.

import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { tableFromIPC } from "@uwdata/flechette";
import { MessageHeader, MessageReader } from "apache-arrow";
import { openTrace, streamTrace, type Trace } from "../dist/bindings/index.js";
import { TraceConverter, ParquetWorkers, toArrowIPC, toParquet, clrExportSchema, EVENT_FIELDS, type TableSink } from "../dist/bindings/export/node.js";
import { CORPUS, HAVE_CORPUS, corpusFiles, etlPath } from "./helpers/shared.js";
import { syntheticTrace } from "./helpers/engines.js";
import { generateTrace } from "../dist/bindings/generator/generate.js";
import { isPooled } from "../dist/bindings/decode/result/reuse.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
const SAMPLE = fileURLToPath(new URL("../examples/sample.etl", import.meta.url));
const GC_START = "Microsoft-Windows-DotNETRuntime/GC/Start";

let db: DuckDBConnection;
let tmp: string;
beforeAll(async () => {
  db = await (await DuckDBInstance.create(":memory:")).connect();
  tmp = mkdtempSync(join(tmpdir(), "etw-wasm-export-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function sql(q: string): Promise<unknown[][]> {
  return (await db.runAndReadAll(q)).getRowsJson() as unknown[][];
}

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: "utf8", maxBuffer: 1 << 28 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** Rows per provider GUID, counted from the event table's provider column. */
function providerCounts(t: Trace): Record<string, string> {
  const counts = new Map<string, number>();
  for (const p of t.events.provider) {
    const guid = t.providers.get(p).guid;
    counts.set(guid, (counts.get(guid) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].map(([g, n]) => [g, String(n)]));
}

/** GC/Start Count of every version's rows, in file order, from the typed tables. */
function gcCounts(t: Trace): string[] {
  const rows: [number, unknown][] = [];
  for (const table of t.tables.filter((x) => x.name === GC_START)) for (let i = 0; i < table.length; i++) rows.push([table.rows[i], table.get("Count", i)]);
  return rows.sort((a, b) => a[0] - b[0]).map(([, v]) => String(v));
}

/** Every check DuckDB can make of a converted trace against the decoder's own tables. */
async function checkParquet(dir: string, t: Trace, what: string): Promise<void> {
  const events = `'${join(dir, "events.parquet")}'`;
  expect(await sql(`select count(*) from ${events}`), what).toEqual([[String(t.events.length)]]);
  const byProvider = Object.fromEntries((await sql(`select provider, count(*) from ${events} group by provider`)) as [string, string][]);
  expect(byProvider, what).toEqual(providerCounts(t));
  // every row's identity, in file order
  const ids = await sql(`select row, eventId, opcode, processor, timestamp, pid from ${events} order by row`);
  const c = t.events.columns;
  for (let i = 0; i < t.events.length; i += Math.max(1, Math.floor(t.events.length / 500))) {
    const noPid = (c.flags[i] & 0x8000) !== 0 || t.events.row(i).pid === null;
    expect(ids[i], `${what} row ${i}`).toEqual([i, c.eventId[i], c.opcode[i], c.processor[i], String(c.timestamp[i]), noPid ? null : c.pid[i]]);
  }
  const gc = gcCounts(t);
  if (gc.length) {
    const got = await sql(`select "Count" from '${join(dir, GC_START)}.parquet' order by row`);
    expect(
      got.map(([v]) => String(v)),
      what,
    ).toEqual(gc);
  }
  // a time range: the middle third of the trace, as trace.query gives it
  const ts = t.events.timestamp;
  let lo = ts[0],
    hi = ts[0];
  for (const x of ts) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  const from = lo + (hi - lo) / 3n,
    to = lo + (2n * (hi - lo)) / 3n;
  const inRange = await sql(`select row from ${events} where timestamp between ${from} and ${to} order by row`);
  expect(
    inRange.map(([r]) => r),
    what,
  ).toEqual(Array.from(t.query({ from, to }).indices));
  // events joined with processes: each event of a described process finds it
  const joined = await sql(`select count(*) from ${events} e join '${join(dir, "processes.parquet")}' p on e.pid = p.pid`);
  const pids = new Set(t.processes.processes.map((p) => p.pid));
  const perPid = new Map<number, number>();
  for (const p of t.processes.processes) perPid.set(p.pid, (perPid.get(p.pid) ?? 0) + 1);
  let want = 0;
  for (let i = 0; i < t.events.length; i++) if (t.events.row(i).pid !== null && pids.has(c.pid[i])) want += perPid.get(c.pid[i])!;
  expect(joined, what).toEqual([[String(want)]]);
}

describe("convert --to parquet, read by DuckDB", () => {
  it("the sample: events, typed tables, processes and providers", async () => {
    const dir = join(tmp, "sample");
    const r = await cli("convert", SAMPLE, "--to", "parquet", "-o", dir);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const t = await openTrace(readFileSync(SAMPLE));
    await checkParquet(dir, t, "sample");
    expect(r.stdout).toContain(`${join(dir, "events.parquet")}\t${t.events.length} rows`);
    // the typed table's columns: manifest names and types, map names beside the values
    const cols = (await sql(`describe select * from '${join(dir, GC_START)}.parquet'`)).map(([name, type]) => `${name} ${type}`);
    expect(cols.slice(0, 8)).toEqual([
      "row UINTEGER",
      "time TIMESTAMP WITH TIME ZONE",
      "pid UINTEGER",
      "tid UINTEGER",
      "Count UINTEGER",
      "Depth UINTEGER",
      "Reason UINTEGER",
      "ReasonName VARCHAR",
    ]);
    const start = t.table(GC_START)!;
    const first = (await sql(`select Reason, ReasonName, Type, TypeName, ClrInstanceID from '${join(dir, GC_START)}.parquet' order by row limit 1`))[0];
    expect(first).toEqual([
      start.get("Reason", 0),
      start.getDisplay("Reason", 0),
      start.get("Type", 0),
      start.getDisplay("Type", 0),
      start.get("ClrInstanceID", 0),
    ]);
    // time is a UTC timestamp: the row's own time, to the microsecond
    const [[us]] = await sql(`select epoch_us(time) from '${join(dir, "events.parquet")}' where row = 5`);
    const exact = (t.clock.toFiletime(t.events.timestamp[5]) - 116444736000000000n) / 10n;
    expect(Math.abs(Number(BigInt(us as string) - exact))).toBeLessThanOrEqual(1);
    // processes and providers
    expect(await sql(`select pid, processName, commandLine from '${join(dir, "processes.parquet")}'`)).toEqual(
      t.processes.processes.map((p) => [p.pid, p.name, p.commandLine]),
    );
    expect(await sql(`select provider, providerName, events from '${join(dir, "providers.parquet")}' order by provider`)).toEqual(
      [...t.providers].map((p) => [p.guid, p.name, providerCounts(t)[p.guid] ?? "0"]).sort((a, b) => (a[0] < b[0] ? -1 : 1)),
    );
  });

  it.skipIf(!HAVE_CORPUS)(
    "every corpus file: counts, providers, GC/Start Count, time range, processes join",
    async () => {
      for (const name of corpusFiles()) {
        const dir = join(tmp, name);
        const r = await cli("convert", etlPath(name), "--to", "parquet", "-o", dir, "--batch-size", "64KiB");
        expect({ name, code: r.code }).toEqual({ name, code: 0 });
        const t = await openTrace(readFileSync(etlPath(name)));
        await checkParquet(dir, t, name);
        t.dispose();
      }
    },
    600_000,
  );

  it.skipIf(!HAVE_CORPUS)("an EventPipe file (.nettrace): events and the typed tables, as many GC/Start rows as PerfView's baseline counts", async () => {
    const file = join(CORPUS, "nettrace", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace");
    const dir = join(tmp, "nettrace");
    const r = await cli("convert", file, "--to", "parquet", "-o", dir);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const t = await openTrace(readFileSync(file));
    await checkParquet(dir, t, "nettrace");
    // the baseline's line "Microsoft-Windows-DotNETRuntime/GC/Start, 478, ..."
    expect(await sql(`select count(*), min(Count), max(Count) from '${join(dir, GC_START)}.parquet'`)).toEqual([["478", 1, 478]]);
    expect(await sql(`select count(*) from '${join(dir, "Microsoft-Windows-DotNETRuntime/GC/AllocationTick")}.parquet'`)).toEqual([["35458"]]);
  });

  it.skipIf(!HAVE_CORPUS)(
    "several files: one set of tables with a sourceFile column; filters as events has them",
    async () => {
      const files = ["gcevents.etl", "net.4.5.2.x64.etl"];
      const dir = join(tmp, "several");
      const r = await cli("convert", ...files.map(etlPath), "--to", "parquet", "-o", dir);
      expect(r.code).toBe(0);
      const traces = await Promise.all(files.map(async (f) => openTrace(readFileSync(etlPath(f)))));
      expect(await sql(`select sourceFile, count(*) from '${join(dir, "events.parquet")}' group by all order by 1`)).toEqual(
        files.map((f, k) => [f, String(traces[k].events.length)]),
      );
      expect(await sql(`select sourceFile, count(*) from '${join(dir, GC_START)}.parquet' group by all order by 1`)).toEqual(
        files.map((f, k) => [f, String(gcCounts(traces[k]).length)]).filter(([, n]) => n !== "0"),
      );
      // --pid keeps that process's rows (and their typed rows)
      const pid = traces[1].events.pid[traces[1].table(GC_START)!.rows[0]];
      const filtered = join(tmp, "filtered");
      expect((await cli("convert", etlPath(files[1]), "--to", "parquet", "-o", filtered, "--pid", String(pid))).code).toBe(0);
      expect(await sql(`select count(*) from '${join(filtered, "events.parquet")}'`)).toEqual([[String(traces[1].query({ pid }).length)]]);
      const ofPid = traces[1].tables
        .filter((x) => x.name === GC_START)
        .reduce((n, x) => n + Array.from(x.rows).filter((r) => traces[1].events.pid[r] === pid).length, 0);
      expect(ofPid).toBeGreaterThan(0);
      expect(await sql(`select count(*) from '${join(filtered, GC_START)}.parquet'`)).toEqual([[String(ofPid)]]);
    },
    120_000,
  );

  it("a trace streamed in small batches: every row counted", async () => {
    const bytes = syntheticTrace(31, { records: 20_000 });
    const t = await openTrace(bytes);
    const dir = join(tmp, "streamed");
    const converter = new TraceConverter({ format: "parquet", open: async (path) => fileSink(join(dir, path)) });
    await converter.add(streamTrace(bytes, { batchBytes: 64 << 10 }), { processes: t.processes });
    await converter.finish();
    await checkParquet(dir, t, "synthetic");
  });

  it("Arrow batches from reused memory: a sink that holds every chunk until it settles gets what a copying sink gets; a settled sink's memory is written again", async () => {
    const bytes = generateTrace({ targetBytes: 16 << 20, seed: 3 });
    const t = await openTrace(bytes);
    /** Converts with sinks made by `sink` (per table path); the bytes of each table. */
    const convert = async (sink: (out: Uint8Array[][]) => TableSink): Promise<Map<string, Uint8Array>> => {
      const tables = new Map<string, Uint8Array[][]>();
      const converter = new TraceConverter({ format: "arrow", open: async (path) => sink(tables.set(path, []).get(path)!) });
      await converter.add(streamTrace(bytes, { batchBytes: 4 << 20 }), { processes: t.processes });
      await converter.finish();
      return new Map([...tables].map(([path, writes]) => [path, Buffer.concat(writes.flat())]));
    };
    // the oracle: every write copied at once (write only: Arrow joins its chunks into a copy)
    const want = await convert((out) => ({ write: async (b) => void out.push([b.slice()]), close: async () => undefined }));
    // a sink that keeps the chunks (views of the batches' arrays) and copies them only when closed, settled
    // then: none of the memory they view is given back before (a converter that did not wait would let a
    // later batch write into it)
    let heldPooled = 0,
      heldViews = 0;
    const late = await convert((out) => {
      const views: Uint8Array[][] = [];
      let settle!: () => void;
      const settledAt = new Promise<void>((r) => (settle = r));
      return {
        write: async (b) => void views.push([b]),
        writev: async (chunks) => void views.push(chunks),
        settled: () => settledAt,
        close: async () => {
          for (const w of views) {
            for (const c of w) {
              heldViews++;
              if (isPooled(c.buffer)) heldPooled++;
            }
            out.push(w.map((c) => c.slice()));
          }
          settle();
        },
      };
    });
    expect(heldViews).toBeGreaterThan(100);
    expect(heldPooled).toBe(0);
    expect(want.size).toBeGreaterThan(5);
    expect(late.size).toBe(want.size);
    for (const [path, b] of want) expect(Buffer.compare(late.get(path)!, b), path).toBe(0);
    // a sink that copies each write and is settled at once: the batches' memory goes back to the pool
    const viewed = new Set<ArrayBufferLike>();
    const eager = await convert((out) => ({
      write: async (b) => void out.push([b.slice()]),
      writev: async (chunks) => {
        out.push(chunks.map((c) => c.slice()));
        for (const c of chunks) if (c.buffer.byteLength >= 1 << 16) viewed.add(c.buffer);
      },
      settled: async () => undefined,
      close: async () => undefined,
    }));
    await new Promise((r) => setTimeout(r, 10));
    expect([...viewed].filter((b) => isPooled(b)).length).toBeGreaterThan(5);
    for (const [path, b] of want) expect(Buffer.compare(eager.get(path)!, b), path).toBe(0);
    expect(tableFromIPC(want.get("events.arrow")!).numRows).toBe(t.events.length);
  });

  it("Arrow dictionaries: written again only when a batch's differ from the batch before's; every batch reads back with its names", async () => {
    const bytes = generateTrace({ targetBytes: 8 << 20, seed: 11 });
    const t = await openTrace(bytes);
    const out: Uint8Array[] = [];
    const converter = new TraceConverter({
      format: "arrow",
      open: async (path) =>
        path === "events.arrow"
          ? { write: async (b) => void out.push(b.slice()), close: async () => undefined }
          : { write: async () => undefined, close: async () => undefined },
    });
    await converter.add(streamTrace(bytes, { batchBytes: 512 << 10 }), { processes: t.processes });
    await converter.finish();
    const ipc = Buffer.concat(out);
    // the messages of the stream, by kind (apache-arrow's message reader: the header of each)
    const kinds = { records: 0, dictionaries: 0 };
    const reader = new MessageReader(ipc);
    for (const m of reader) {
      if (m.headerType === MessageHeader.RecordBatch) kinds.records++;
      if (m.headerType === MessageHeader.DictionaryBatch) kinds.dictionaries++;
      reader.readMessageBody(m.bodyLength);
    }
    const dictionaryColumns = EVENT_FIELDS.filter((f) => f.type === "utf8").length;
    expect(kinds.records).toBeGreaterThan(10);
    // (the first batch sends each dictionary; later ones only those that changed: event names do, processes and providers mostly not)
    expect(kinds.dictionaries).toBeGreaterThanOrEqual(dictionaryColumns);
    expect(kinds.dictionaries).toBeLessThan(kinds.records * dictionaryColumns * 0.7);
    // read back by flechette, an independent reader: names, providers, processes and activity ids of every row
    const table = tableFromIPC(ipc);
    expect(table.numRows).toBe(t.events.length);
    const c = t.events.columns;
    const rows = [...Array(t.events.length).keys()];
    const col = (k: string) => Array.from(table.getChild(k)!.toArray() as ArrayLike<unknown>);
    expect(col("eventName")).toEqual(rows.map((i) => t.names.ofRow(i)));
    expect(col("provider")).toEqual(rows.map((i) => t.providers.get(c.provider[i]).guid));
    expect(col("processName")).toEqual(rows.map((i) => t.processName(i)));
    expect(col("activityId")).toEqual(rows.map((i) => t.events.row(i).activityId));
  });

  it("Parquet encoded in worker threads: every table byte for byte as on this thread, read by DuckDB; a failing sink fails the conversion", async () => {
    const bytes = generateTrace({ targetBytes: 8 << 20, seed: 5 });
    const t = await openTrace(bytes);
    /** The bytes of every table, converted with `encoders` (none: on this thread). */
    const convert = async (encoders?: ParquetWorkers): Promise<Map<string, Buffer>> => {
      const tables = new Map<string, Uint8Array[]>();
      const converter = new TraceConverter({
        format: "parquet",
        parquetEncoders: encoders,
        open: async (path) => {
          const parts = tables.set(path, []).get(path)!;
          return { write: async (b) => void parts.push(b.slice()), close: async () => undefined };
        },
      });
      try {
        await converter.add(streamTrace(bytes, { batchBytes: 1 << 20 }), { processes: t.processes });
        await converter.finish();
      } finally {
        await encoders?.close();
      }
      return new Map([...tables].map(([path, parts]) => [path, Buffer.concat(parts)]));
    };
    const here = await convert();
    expect(here.size).toBeGreaterThan(5);
    for (const count of [1, 2]) {
      const there = await convert(new ParquetWorkers(count));
      expect([...there.keys()].sort(), `${count} workers`).toEqual([...here.keys()].sort());
      for (const [path, b] of here) expect(Buffer.compare(there.get(path)!, b), `${count} workers: ${path}`).toBe(0);
    }
    const dir = join(tmp, "workers");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "events.parquet"), here.get("events.parquet")!);
    expect(await sql(`select count(*) from '${join(dir, "events.parquet")}'`)).toEqual([[String(t.events.length)]]);
    // a sink that fails: the conversion says so (and the workers stop)
    const workers = new ParquetWorkers(1);
    const failing = new TraceConverter({
      format: "parquet",
      parquetEncoders: workers,
      open: async (path) => ({
        write: async () => {
          if (path === "events.parquet") throw new Error("disk full");
        },
        close: async () => undefined,
      }),
    });
    await expect(
      (async () => {
        try {
          await failing.add(streamTrace(bytes, { batchBytes: 1 << 20 }), { processes: t.processes });
          await failing.finish();
        } finally {
          await workers.close();
        }
      })(),
    ).rejects.toThrow("disk full");
    // a program that never closes its workers still ends once its files are finished (they hold it open only while a file is)
    const script = join(tmp, "no-close.mjs");
    const dist = (path: string) => JSON.stringify(fileURLToPath(new URL(`../dist/bindings/${path}`, import.meta.url)));
    writeFileSync(
      script,
      [
        `import { readFileSync } from "node:fs";`,
        `const { openTrace, streamTrace } = await import(${dist("node.js")});`,
        `const { TraceConverter, ParquetWorkers } = await import(${dist("export/node.js")});`,
        `const bytes = readFileSync(${JSON.stringify(SAMPLE)});`,
        `const t = await openTrace(bytes);`,
        `const c = new TraceConverter({ format: "parquet", parquetEncoders: new ParquetWorkers(1), open: async () => ({ write: async () => undefined, close: async () => undefined }) });`,
        `await c.add(streamTrace(bytes), { processes: t.processes });`,
        `console.log((await c.finish()).length);`,
      ].join("\n"),
    );
    const ended = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(process.execPath, [script], { timeout: 120_000 }, (error, stdout) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout }),
      );
    });
    expect(ended.code).toBe(0);
    expect(Number(ended.stdout.trim())).toBeGreaterThan(5);
  });

  it("--parquet-version 2: files DuckDB reads as it reads version 1's, the events table in about half the bytes, the footer saying version 2; encoded alike in a worker", async () => {
    const bytes = generateTrace({ targetBytes: 8 << 20, seed: 7 });
    const path = join(tmp, "v2.etl");
    writeFileSync(path, bytes);
    const t = await openTrace(bytes);
    const v1 = join(tmp, "v1-out"),
      v2 = join(tmp, "v2-out"),
      v2here = join(tmp, "v2-here");
    for (const [dir, extra] of [
      [v1, []],
      [v2, ["--parquet-version", "2"]],
      [v2here, ["--parquet-version", "2", "--encode-workers", "0"]],
    ] as const) {
      const r = await cli("convert", path, "--to", "parquet", "-o", dir, ...extra);
      expect(r.code, r.stderr).toBe(0);
    }
    await checkParquet(v2, t, "version 2");
    const size = (dir: string) => readFileSync(join(dir, "events.parquet")).length;
    expect(size(v2)).toBeLessThan(0.75 * size(v1));
    expect(Buffer.compare(readFileSync(join(v2, "events.parquet")), readFileSync(join(v2here, "events.parquet")))).toBe(0);
    const version = async (dir: string) => (await sql(`select format_version from parquet_file_metadata('${join(dir, "events.parquet")}')`))[0][0];
    expect([await version(v1), await version(v2)]).toEqual(["1", "2"]);
    // (version 1's files are what they were: the default unchanged, and a bad version refused)
    const bad = await cli("convert", path, "--to", "parquet", "-o", join(tmp, "v3-out"), "--parquet-version", "3");
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/--parquet-version '3'/)]);
    const arrow = await cli("convert", path, "--to", "arrow", "-o", join(tmp, "v2-arrow"), "--parquet-version", "2");
    expect([arrow.code, arrow.stderr]).toEqual([2, expect.stringMatching(/--parquet-version goes with --to parquet/)]);
  });

  it("row groups a reader skips by time: min/max of timestamp per row group, a narrow range meets few", async () => {
    // (a generated trace: its batches follow one another in time, as a real trace's buffers do)
    const bytes = generateTrace({ targetBytes: 4 << 20, seed: 7 });
    const t = await openTrace(bytes);
    const dir = join(tmp, "row-groups");
    const converter = new TraceConverter({ format: "parquet", open: async (path) => fileSink(join(dir, path)), rowGroupRows: 4096 });
    await converter.add(streamTrace(bytes, { batchBytes: 1 << 20 }), { processes: t.processes });
    await converter.finish();
    const file = join(dir, "events.parquet");
    expect(await sql(`select count(*) from '${file}'`)).toEqual([[String(t.events.length)]]);
    const groups = (await sql(`select stats_min, stats_max from parquet_metadata('${file}') where path_in_schema = 'timestamp' order by row_group_id`)).map(
      ([lo, hi]) => [BigInt(lo as string), BigInt(hi as string)],
    );
    expect(groups.length).toBeGreaterThan(4);
    // (statistics on the time columns only)
    expect(await sql(`select count(*) from parquet_metadata('${file}') where path_in_schema = 'eventId' and stats_min is not null`)).toEqual([["0"]]);
    const [lo] = groups[groups.length >> 1];
    const hi = lo + 1000n;
    const met = groups.filter(([a, b]) => a <= hi && b >= lo).length;
    expect(met).toBeGreaterThanOrEqual(1);
    expect(met).toBeLessThanOrEqual(2);
    const inRange = Array.from(t.events.timestamp).filter((x) => x >= lo && x <= hi).length;
    expect(inRange).toBeGreaterThan(0);
    expect(await sql(`select count(*) from '${file}' where timestamp between ${lo} and ${hi}`)).toEqual([[String(inRange)]]);
    // the command line's --row-group-rows: the sample's records (one batch) in row groups of 500 at most
    const sample = await openTrace(readFileSync(SAMPLE));
    const out = join(tmp, "row-groups-cli");
    expect((await cli("convert", SAMPLE, "--to", "parquet", "-o", out, "--row-group-rows", "500")).code).toBe(0);
    expect(await sql(`select count(distinct row_group_id), max(row_group_num_rows) from parquet_metadata('${join(out, "events.parquet")}')`)).toEqual([
      [String(Math.ceil(sample.events.length / 500)), "500"],
    ]);
    const arrow = await cli("convert", SAMPLE, "--to", "arrow", "-o", join(tmp, "row-groups-arrow"), "--row-group-rows", "500");
    expect(arrow.code).toBe(2);
    expect(arrow.stderr).toContain("--row-group-rows goes with --to parquet");
  });
});

describe("examples/sql", () => {
  it("every query of queries.sql runs on a converted trace; GC pauses equal the gc command's", async () => {
    const dir = join(tmp, "sql", "trace");
    expect((await cli("convert", SAMPLE, "--to", "parquet", "-o", dir)).code).toBe(0);
    const text = readFileSync(fileURLToPath(new URL("../examples/sql/queries.sql", import.meta.url)), "utf8");
    const queries = text
      .split(/\n\s*\n/)
      .map((q) =>
        q
          .split("\n")
          .filter((l) => !l.startsWith("--"))
          .join("\n")
          .trim(),
      )
      .filter(Boolean);
    expect(queries.length).toBe(5);
    const results = [];
    for (const q of queries) results.push(await sql(q.replaceAll("'trace/", `'${dir}/`)));
    for (const r of results) expect(r.length).toBeGreaterThan(0);
    // GC pauses: per process, the gc command's PauseDurationMSec counted and summed
    const gcs = JSON.parse((await cli("gc", SAMPLE, "--format", "json")).stdout) as { PID: number; PauseDurationMSec: number }[];
    const byPid = new Map<number, { n: number; total: number; max: number }>();
    for (const g of gcs) {
      const e = byPid.get(g.PID) ?? { n: 0, total: 0, max: 0 };
      byPid.set(g.PID, { n: e.n + 1, total: e.total + g.PauseDurationMSec, max: Math.max(e.max, g.PauseDurationMSec) });
    }
    const pauses = results[0] as [number, string, string, number, number][];
    expect(pauses.map(([pid, , n]) => [pid, Number(n)]).sort((a, b) => a[0] - b[0])).toEqual(
      [...byPid].map(([pid, e]) => [pid, e.n]).sort((a, b) => a[0] - b[0]),
    );
    for (const [pid, , , total, max] of pauses) {
      // (the query takes whole microseconds of each time: up to 1 µs a GC off)
      expect(Math.abs(total - byPid.get(pid)!.total)).toBeLessThanOrEqual(byPid.get(pid)!.n * 0.001 + 0.0005);
      expect(max).toBeCloseTo(byPid.get(pid)!.max, 2);
    }
    // top event names: summary's counts
    const t = await openTrace(readFileSync(SAMPLE));
    const counts = new Map<string, number>();
    for (let i = 0; i < t.events.length; i++) counts.set(t.names.ofRow(i), (counts.get(t.names.ofRow(i)) ?? 0) + 1);
    const top = [...counts]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 20)
      .map(([n, c]) => [n, String(c)]);
    expect(results[1]).toEqual(top);
  });
});

/** A sink that gathers a file's bytes and writes them at close. */
function fileSink(path: string): TableSink {
  const parts: Uint8Array[] = [];
  return {
    write: async (b) => void parts.push(b.slice()),
    close: async () => {
      const { mkdirSync } = await import("node:fs");
      const { dirname } = await import("node:path");
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, Buffer.concat(parts));
    },
  };
}

describe.skipIf(!HAVE_CORPUS)("activity ids of EventPipe files", () => {
  it("the activityId column is each row's ActivityId (zero where the event has none), not bytes at an .etl header's place", async () => {
    const { readdirSync } = await import("node:fs");
    let nonZero = 0;
    for (const name of readdirSync(join(CORPUS, "nettrace")).filter((f) => /\.(nettrace|netperf)$/.test(f))) {
      const t = await openTrace(new Uint8Array(readFileSync(join(CORPUS, "nettrace", name))));
      const col = Array.from(tableFromIPC(toArrowIPC(t)).getChild("activityId")!.toArray() as ArrayLike<unknown>);
      const want = Array.from({ length: t.events.length }, (_, i) => t.events.row(i).activityId);
      expect(col, name).toEqual(want);
      nonZero += want.filter((a) => a !== null && a !== "00000000-0000-0000-0000-000000000000").length;
      t.dispose();
    }
    expect(nonZero).toBeGreaterThan(0);
  });
});

describe("Arrow IPC, read by an independent reader (flechette)", () => {
  it("the event table column for column; a query's rows; a typed table", async () => {
    const inputs: [string, Uint8Array][] = [["sample", new Uint8Array(readFileSync(SAMPLE))]];
    if (HAVE_CORPUS) inputs.push(["net.4.5.x86.etl", new Uint8Array(readFileSync(etlPath("net.4.5.x86.etl")))]);
    for (const [name, bytes] of inputs) {
      const t = await openTrace(bytes);
      const table = tableFromIPC(toArrowIPC(t), { useBigInt: true });
      expect(table.names, name).toEqual(EVENT_FIELDS.map((f) => f.name));
      expect(table.numRows, name).toBe(t.events.length);
      const c = t.events.columns;
      const col = (k: string) => table.getChild(k)!.toArray() as ArrayLike<unknown>;
      for (const k of ["eventId", "version", "opcode", "level", "task", "processor", "headerType", "payloadLength", "timestamp", "keywords"] as const) {
        expect(Array.from(col(k)), `${name} ${k}`).toEqual(Array.from(c[k] as ArrayLike<unknown>));
      }
      const rows = [...Array(t.events.length).keys()];
      expect(Array.from(col("provider")), name).toEqual(rows.map((i) => t.providers.get(c.provider[i]).guid));
      expect(Array.from(col("eventName")), name).toEqual(rows.map((i) => t.names.ofRow(i)));
      expect(Array.from(col("pid")), name).toEqual(rows.map((i) => t.events.row(i).pid));
      expect(Array.from(col("activityId")), name).toEqual(rows.map((i) => t.events.row(i).activityId));
      expect(Array.from(col("relativeMSec")), name).toEqual(rows.map((i) => t.events.row(i).relativeMSec));
      // a filtered query: just its rows
      const q = t.query({ provider: "Microsoft-Windows-DotNETRuntime" });
      const part = tableFromIPC(toArrowIPC({ trace: t, rows: q }));
      expect(Array.from(part.getChild("row")!.toArray() as ArrayLike<number>), name).toEqual(Array.from(q.indices));
      // a typed table: every field by its manifest name
      const gc = t.table(GC_START);
      if (gc) {
        const typed = tableFromIPC(toArrowIPC({ trace: t, table: GC_START }));
        expect(typed.names, name).toEqual(clrExportSchema(GC_START).fields.map((f) => f.name));
        expect(Array.from(typed.getChild("Count")!.toArray() as ArrayLike<number>).map(String), name).toEqual(gcCounts(t));
      }
      t.dispose();
    }
  });

  it("toParquet bytes open in DuckDB; a stream of batches reads back whole", async () => {
    const t = await openTrace(readFileSync(SAMPLE));
    const file = join(tmp, "sample-events.parquet");
    writeFileSync(file, await toParquet(t));
    const names = new Set([...Array(t.events.length).keys()].map((i) => t.names.ofRow(i)));
    expect(await sql(`select count(*), count(distinct eventName) from '${file}'`)).toEqual([[String(t.events.length), String(names.size)]]);
    // Arrow stream of many batches (a dictionary per batch) through the converter
    const bytes = syntheticTrace(32, { records: 8000 });
    const whole = await openTrace(bytes);
    const parts: Uint8Array[] = [];
    const converter = new TraceConverter({
      format: "arrow",
      open: async (path) => ({ write: async (b) => void (path === "events.arrow" && parts.push(b.slice())), close: async () => undefined }),
    });
    await converter.add(streamTrace(bytes, { batchBytes: 64 << 10 }), { processes: whole.processes });
    await converter.finish();
    const table = tableFromIPC(Buffer.concat(parts));
    expect(table.numRows).toBe(whole.events.length);
    expect(Array.from(table.getChild("eventName")!.toArray() as ArrayLike<string>)).toEqual(
      [...Array(whole.events.length).keys()].map((i) => whole.names.ofRow(i)),
    );
    // a sink that takes the chunks as they are, kept (not copied) until the end: the same bytes,
    // so nothing the chunks view is written again by later batches
    const kept: Uint8Array[] = [];
    let writes = 0;
    const chunked = new TraceConverter({
      format: "arrow",
      open: async (path) => ({
        write: async () => void writes++,
        writev: async (chunks) => void (path === "events.arrow" && kept.push(...chunks)),
        close: async () => undefined,
      }),
    });
    await chunked.add(streamTrace(bytes, { batchBytes: 64 << 10 }), { processes: whole.processes });
    await chunked.finish();
    expect(writes).toBe(0);
    expect(kept.length).toBeGreaterThan(parts.length);
    expect(Buffer.compare(Buffer.concat(kept), Buffer.concat(parts))).toBe(0);
  });
});
