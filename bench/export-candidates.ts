// The libraries considered for columnar export, measured on the events table of the generated 1 GiB
// trace (the same columns for each, made by eventBatch, batch by batch): Arrow IPC with apache-arrow
// (chosen) and @uwdata/flechette, Parquet with parquet-wasm (chosen) and hyparquet-writer. Each runs in
// a fresh process (peak RSS); the bundle size is esbuild's minified, gzipped output of an entry that
// imports the writer (parquet-wasm's .wasm counted beside it).
//
// Then parquet-wasm alone under the settings it has, on the same batches.
//
//   node dist/bench/export-candidates.js [FILE]      prints markdown tables (bench/export-candidates.md)

import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { streamTraceFile, ProcessCollector, PROCESS_EVENTS } from "../bindings/node.js";
import { EVENT_FIELDS, eventBatch, ArrowStreamWriter, ParquetStreamWriter, arrowSchema, loadParquetWasm } from "../bindings/export/node.js";
import { parquetInput, writerProperties, type ParquetWasm } from "../bindings/export/parquet.js";
import type { WriterPropertiesBuilder } from "parquet-wasm/esm";
import type { ExportBatch, ExportField } from "../bindings/export/columns.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CANDIDATES = ["apache-arrow", "flechette", "parquet-wasm", "hyparquet-writer"] as const;
type Candidate = (typeof CANDIDATES)[number];

/** Values of a column as a plain array where the library wants one (strings, nulls). */
function plain(batch: ExportBatch, i: number): unknown[] | ExportBatch["columns"][number]["values"] {
  const c = batch.columns[i];
  if (c.dictionary) return Array.from(c.values as Int32Array, (k, r) => (c.valid && !c.valid[r] ? null : c.dictionary![k]));
  if (c.valid) return Array.from(c.values as ArrayLike<number>, (v, r) => (c.valid![r] ? v : null));
  return c.values;
}

async function writerOf(name: Candidate, sink: (b: Uint8Array) => void): Promise<{ write(b: ExportBatch): Promise<void>; finish(): Promise<void> }> {
  if (name === "apache-arrow") {
    const w = new ArrowStreamWriter(EVENT_FIELDS);
    return { write: async (b) => sink(w.write(b)), finish: async () => sink(w.finish()) };
  }
  if (name === "parquet-wasm") {
    const w = new ParquetStreamWriter(await loadParquetWasm(), EVENT_FIELDS, sink);
    return { write: (b) => w.write(b), finish: () => w.finish() };
  }
  if (name === "flechette") {
    const F = await import("@uwdata/flechette");
    const types: Record<string, unknown> = {};
    for (const f of EVENT_FIELDS) if (f.type === "utf8") types[f.name] = F.dictionary(F.utf8());
    types.time = F.timestamp(F.TimeUnit.MICROSECOND, "UTC");
    let first = true;
    return {
      write: async (b) => {
        const columns = Object.fromEntries(EVENT_FIELDS.map((f, i) => [f.name, plain(b, i)]));
        // (flechette takes timestamps as milliseconds)
        columns.time = Float64Array.from(b.columns[EVENT_FIELDS.findIndex((f) => f.name === "time")].values as BigInt64Array, (us) => Number(us) / 1000);
        const bytes = F.tableToIPC(F.tableFromArrays(columns as never, { types: types as never }), { format: "stream" })!;
        // (a stream per batch, joined: later schemas dropped as the chosen writer does)
        sink(first ? bytes : bytes.subarray(8 + new DataView(bytes.buffer, bytes.byteOffset).getInt32(4, true)));
        first = false;
      },
      finish: async () => undefined,
    };
  }
  const H = await import("hyparquet-writer");
  const schema = [{ name: "root", num_children: EVENT_FIELDS.length }, ...EVENT_FIELDS.map(hyparquetElement)];
  const writer = new H.ByteWriter();
  const pw = new H.ParquetWriter({ writer, schema: schema as never });
  return {
    write: async (b) => {
      await pw.write({ rowGroupSize: b.length, columnData: EVENT_FIELDS.map((f, i) => ({ name: f.name, data: plain(b, i) as never })) });
      sink(new Uint8Array(writer.buffer, 0, writer.index).slice());
      writer.index = 0;
    },
    finish: async () => {
      pw.finish();
      sink(new Uint8Array(writer.buffer, 0, writer.index).slice());
    },
  };
}

function hyparquetElement(f: ExportField): Record<string, unknown> {
  const repetition_type = f.nullable ? "OPTIONAL" : "REQUIRED";
  const ints: Record<string, [string, string?]> = {
    uint8: ["INT32", "UINT_8"],
    uint16: ["INT32", "UINT_16"],
    uint32: ["INT32", "UINT_32"],
    int64: ["INT64"],
    uint64: ["INT64", "UINT_64"],
  };
  if (f.type in ints) {
    const [type, converted_type] = ints[f.type];
    return { name: f.name, type, converted_type, repetition_type };
  }
  if (f.type === "float64") return { name: f.name, type: "DOUBLE", repetition_type };
  if (f.type === "timestamp")
    return { name: f.name, type: "INT64", logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MICROS" }, repetition_type };
  return { name: f.name, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type };
}

/** One candidate over the file: total seconds, seconds inside the writer, output bytes (in this process). */
async function runOne(name: Candidate, file: string): Promise<void> {
  const collector = new ProcessCollector();
  for await (const b of await streamTraceFile(file, { filter: PROCESS_EVENTS })) collector.scan(b, b.firstRow);
  const processes = collector.result();
  let out = 0,
    rows = 0,
    writerMs = 0;
  const t0 = performance.now();
  const w = await writerOf(name, (b) => void (out += b.length));
  for await (const batch of await streamTraceFile(file)) {
    const b = eventBatch(batch, null, { firstRow: batch.firstRow, processes });
    rows += b.length;
    const t1 = performance.now();
    await w.write(b);
    writerMs += performance.now() - t1;
  }
  const t1 = performance.now();
  await w.finish();
  writerMs += performance.now() - t1;
  console.log(`ms=${(performance.now() - t0).toFixed(0)} writer=${writerMs.toFixed(0)} rows=${rows} out=${out}`);
}

/** parquet-wasm's settings tried beside the ones chosen (parquet.ts writerProperties: Snappy, version 1 pages, 1 MiB, batches of 1,024 values). */
const PARQUET_SETTINGS: [string, (b: WriterPropertiesBuilder, pw: ParquetWasm) => WriterPropertiesBuilder][] = [
  ["chosen", (b) => b],
  ["write batches of 8,192 values", (b) => b.setWriteBatchSize(8192)],
  ["write batches of 65,536 values", (b) => b.setWriteBatchSize(65536)],
  ["data pages of 8 MiB", (b) => b.setDataPageSizeLimit(8 << 20)],
  ["writer version 2", (b, pw) => b.setWriterVersion(pw.WriterVersion.V2)],
  ["uncompressed", (b, pw) => b.setCompression(pw.Compression.UNCOMPRESSED)],
  ["LZ4 (raw)", (b, pw) => b.setCompression(pw.Compression.LZ4_RAW)],
  ["ZSTD", (b, pw) => b.setCompression(pw.Compression.ZSTD)],
];

/**
 * parquet-wasm alone (no decode, no column building) on the events table's first batches, each
 * setting twice in turn (the second run counted: the first warms the writer): MB/s of Arrow IPC in.
 */
async function parquetSettings(file: string): Promise<string[]> {
  const pw = await loadParquetWasm();
  const schema = arrowSchema(EVENT_FIELDS);
  const inputs: Uint8Array[] = [];
  let rows = 0;
  for await (const batch of await streamTraceFile(file, { batchBytes: 8 << 20 })) {
    const b = eventBatch(batch, null, { firstRow: batch.firstRow });
    inputs.push(parquetInput(schema, EVENT_FIELDS, b).slice());
    rows += b.length;
    if (inputs.length === 16) break;
  }
  const ipcBytes = inputs.reduce((n, x) => n + x.byteLength, 0);
  const lines = [
    "",
    `parquet-wasm alone, on the events table's first ${inputs.length} batches (${rows.toLocaleString("en-US")} rows, ${(ipcBytes / 1e6).toFixed(0)} MB of Arrow IPC in), each setting beside the chosen ones, one thread:`,
    "",
    "| setting | ms | MB/s of Arrow in | output MB |",
    "|---|---|---|---|",
  ];
  const results = new Map<string, { ms: number; out: number }>();
  for (let round = 0; round < 2; round++) {
    for (const [name, set] of PARQUET_SETTINGS) {
      const props = set(writerProperties(pw, EVENT_FIELDS), pw);
      let next = 0,
        out = 0;
      const t0 = performance.now();
      const source = new ReadableStream(
        {
          pull(c) {
            if (next === inputs.length) return c.close();
            const table = pw.Table.fromIPCStream(inputs[next++]);
            c.enqueue(table.recordBatch(0));
            table.free();
          },
        },
        { highWaterMark: 0 },
      );
      const reader = (await pw.transformParquetStream(source, props.build())).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        out += (value as Uint8Array).byteLength;
      }
      results.set(name, { ms: performance.now() - t0, out });
    }
  }
  for (const [name, { ms, out }] of results) lines.push(`| ${name} | ${ms.toFixed(0)} | ${(ipcBytes / 1e3 / ms).toFixed(0)} | ${(out / 1e6).toFixed(1)} |`);
  return lines;
}

/** What the tables above decided, kept with them. */
const NOTES = `
Chosen: apache-arrow for Arrow IPC (its stream writer takes the columns' own arrays, and writes a dictionary again
only where a batch's differs from the batch before's), parquet-wasm for Parquet. parquet-wasm's own settings move its
speed by less than this machine's noise: it encodes about 140 MB of Arrow a second on one thread whatever the
compression, page size or writer version, so a 1 GiB trace (1.06 GB of Arrow over all its tables) costs about 7.5 s
of encoding alone, more than decoding and building the columns together. So \`convert --to parquet\` encodes the
events table (two thirds of the bytes) in a worker thread (\`--encode-workers\`, ParquetWorkers) while the main
thread decodes, builds the columns and encodes the other tables; \`bench/results-convert.md\` has what that gives.
Parquet at 200 MB/s of input needs the events table's encoding split too, which parquet-wasm's one writer per file
does not allow. Writer version 2 (delta encodings of numbers) writes the events table in about half the bytes at the
same speed; version 1 stays the default, as every Parquet reader reads it, and \`convert --parquet-version 2\` writes version 2.
`;

/** Minified, gzipped bytes of an entry that uses the candidate (and the .wasm it fetches). */
async function bundleBytes(name: Candidate): Promise<{ js: number; wasm: number }> {
  const dir = mkdtempSync(join(tmpdir(), "etw-wasm-bundle-"));
  try {
    const entry = {
      "apache-arrow": `import { tableToIPC, Table } from "apache-arrow"; console.log(tableToIPC(new Table()));`,
      flechette: `import { tableToIPC, tableFromArrays } from "@uwdata/flechette"; console.log(tableToIPC(tableFromArrays({})));`,
      "parquet-wasm": `import init, { transformParquetStream } from "parquet-wasm/esm"; init().then(() => console.log(transformParquetStream));`,
      "hyparquet-writer": `import { ParquetWriter } from "hyparquet-writer"; console.log(ParquetWriter);`,
    }[name];
    writeFileSync(join(dir, "entry.js"), entry);
    await build({
      entryPoints: [join(dir, "entry.js")],
      bundle: true,
      minify: true,
      format: "esm",
      platform: "browser",
      outfile: join(dir, "out.js"),
      absWorkingDir: ROOT,
      logLevel: "silent",
      nodePaths: [join(ROOT, "node_modules")],
    });
    const js = gzipSync(readFileSync(join(dir, "out.js"))).length;
    const wasm = name === "parquet-wasm" ? gzipSync(readFileSync(join(ROOT, "node_modules", "parquet-wasm", "esm", "parquet_wasm_bg.wasm"))).length : 0;
    return { js, wasm };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const [mode, a, b] = process.argv.slice(2);
  if (mode === "--one") return runOne(a as Candidate, b);
  const file = mode ?? join(ROOT, "bench", ".cache", "generated-1024MiB.etl");
  const size = statSync(file).size;
  const lines = [
    `Export libraries on the events table of ${file.split("/").pop()} (${(size / 1e9).toFixed(2)} GB), batches of 64 MiB; each in a fresh process:`,
    "",
    "| library | format | s | input MB/s | M rows/s | s in the writer | output MB | peak RSS MiB | bundle KB gz (+ .wasm) |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const name of CANDIDATES) {
    process.stderr.write(`${name} ...\n`);
    const r = spawnSync("/usr/bin/time", ["-f", "peak=%M", process.execPath, fileURLToPath(import.meta.url), "--one", name, file], {
      encoding: "utf8",
      maxBuffer: 1 << 26,
    });
    const m = /ms=(\d+) writer=(\d+) rows=(\d+) out=(\d+)/.exec(r.stdout);
    const peak = /peak=(\d+)/.exec(r.stderr);
    const bundle = await bundleBytes(name);
    const size2 = `${(bundle.js / 1024).toFixed(0)}${bundle.wasm ? ` (+ ${(bundle.wasm / 1024).toFixed(0)})` : ""}`;
    const format = name === "apache-arrow" || name === "flechette" ? "Arrow IPC" : "Parquet";
    if (!m || !peak) {
      lines.push(`| ${name} | ${format} | failed: ${(r.stderr.trim().split("\n").pop() ?? "").slice(0, 80)} | | | | | | ${size2} |`);
      continue;
    }
    const ms = Number(m[1]);
    lines.push(
      `| ${name} | ${format} | ${(ms / 1000).toFixed(1)} | ${(size / 1e6 / (ms / 1000)).toFixed(0)} | ${(Number(m[3]) / 1e6 / (ms / 1000)).toFixed(2)} | ${(Number(m[2]) / 1000).toFixed(1)} | ${(Number(m[4]) / 1e6).toFixed(0)} | ${(Number(peak[1]) / 1024).toFixed(0)} | ${size2} |`,
    );
  }
  process.stderr.write("parquet-wasm settings ...\n");
  lines.push(...(await parquetSettings(file)));
  const md = lines.join("\n") + "\n" + NOTES;
  writeFileSync(join(ROOT, "bench", "export-candidates.md"), md);
  process.stdout.write(md);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
