// etw-wasm convert: a trace's tables for analytics engines (DuckDB, Spark, Polars, pandas), as Parquet
// files or Arrow IPC streams: events, processes, providers and one table per .NET runtime event.

import { statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { mkdir, open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { TableSink } from "etw-wasm/export";
import { streamTraceFile, TraceDecodeError, type Trace } from "etw-wasm/node";
import { FILTERS, READS_TRACE, UsageError, decodeOptions, eventFilters, wholeNumber, type Values } from "../args.js";
import { CommandError, stoppedLine, streamedProcesses, toldByStop, type OwnCommand } from "../command.js";
import { output, progressBar, say } from "../io.js";
import { selectEvents } from "../tables.js";

/** A file written through one handle, its directory made first. */
async function fileSink(path: string): Promise<TableSink> {
  await mkdir(dirname(path), { recursive: true });
  const handle = await open(path, "w");
  // writes go on while the next batch is made; a few at most are in flight
  let pending: Promise<unknown>[] = [];
  let position = 0;
  return {
    write: async (bytes) => {
      if (!bytes.length) return;
      // (each at its own position: writes in flight may finish in any order)
      pending.push(handle.write(bytes, 0, bytes.length, position));
      position += bytes.length;
      if (pending.length >= 4) await pending.shift();
    },
    writev: async (chunks) => {
      const n = chunks.reduce((k, c) => k + c.byteLength, 0);
      if (!n) return;
      pending.push(handle.writev(chunks, position));
      position += n;
      if (pending.length >= 4) await pending.shift();
    },
    settled: async () => {
      await Promise.all(pending);
    },
    close: async () => {
      await Promise.all(pending);
      pending = [];
      await handle.close();
    },
  };
}

/** The export libraries a format needs that cannot be found from here (they are optional peer dependencies). */
function missingExportPackages(format: "parquet" | "arrow"): string[] {
  const need: [string, string][] = [["apache-arrow", "apache-arrow"]];
  if (format === "parquet") need.push(["parquet-wasm", "parquet-wasm/esm"]);
  return need
    .filter(([, specifier]) => {
      try {
        import.meta.resolve(specifier);
        return false;
      } catch {
        return true;
      }
    })
    .map(([name]) => name);
}

async function convertFiles(files: string[], values: Values): Promise<number> {
  const to = values.to;
  if (to !== "parquet" && to !== "arrow") {
    throw new UsageError(to === undefined ? "convert needs --to parquet or --to arrow" : `unknown --to: ${String(to)} (parquet or arrow)`, "convert");
  }
  const dir = values.out;
  if (typeof dir !== "string") throw new UsageError("convert needs -o DIR (the output directory)", "convert");
  const rowGroupRows = wholeNumber(values, "row-group-rows", "rows per Parquet row group", 1, 1 << 24, "convert");
  if (rowGroupRows !== undefined && to !== "parquet") throw new UsageError("--row-group-rows goes with --to parquet", "convert");
  const parquetVersion = wholeNumber(values, "parquet-version", "Parquet format version", 1, 2, "convert") as 1 | 2 | undefined;
  if (parquetVersion !== undefined && to !== "parquet") throw new UsageError("--parquet-version goes with --to parquet", "convert");
  const encodeWorkers = wholeNumber(values, "encode-workers", "Parquet encoding threads", 0, 16, "convert");
  if (encodeWorkers !== undefined && to !== "parquet") throw new UsageError("--encode-workers goes with --to parquet", "convert");
  const filters = eventFilters(values, "convert", "until");
  const filtered = Object.entries(filters).some(([k, v]) => k !== "timeOrder" && v !== undefined);
  const decode = decodeOptions(values, "convert");
  const size = files.reduce((n, f) => n + statSync(f).size, 0);
  const missing = missingExportPackages(to);
  if (missing.length)
    throw new CommandError(
      `convert --to ${to} needs ${missing.map((m) => `"${m}"`).join(" and ")}, not installed (optional peer dependencies of etw-wasm): npm install ${missing.join(" ")}`,
    );
  const { TraceConverter, ParquetWorkers } = await import("etw-wasm/export");
  // (by default one where there is a core for it: the events table is encoded there, the rest here)
  const encoders = encodeWorkers ?? (to === "parquet" && availableParallelism() >= 2 ? 1 : 0);
  const parquetEncoders = encoders > 0 ? new ParquetWorkers(encoders) : undefined;
  const converter = new TraceConverter({
    format: to,
    sourceFiles: files.length > 1,
    open: (path) => fileSink(join(dir, path)),
    rowGroupRows,
    parquetVersion,
    parquetEncoders,
  });
  // several files: one session, merged; each batch's rows name their file
  const input = files.length === 1 ? files[0] : files;
  const label = files.join(" + ");
  let code = 0;
  const bar = process.stderr.isTTY && size > 8 << 20 && values["no-progress"] !== true ? progressBar(size) : undefined;
  const options = { onProgress: bar, ...decode };
  try {
    const processes = await streamedProcesses(input, options);
    const stream = await streamTraceFile(input, options);
    const select = filtered
      ? (t: Trace) => (filters.provider !== undefined && !t.providers.find(filters.provider).length ? new Uint32Array(0) : selectEvents(t, filters))
      : undefined;
    await converter.add(stream, { processes, sourceFile: (b) => basename(files[b.file]), select });
    const end = stream.end!;
    bar?.end();
    const stop = end.incomplete;
    const told = toldByStop(stop);
    for (const w of end.warnings.filter((x) => !told(x.kind)).slice(0, 5))
      say(`etw-wasm: warning${w.file ? ` in ${w.file}` : ""} at byte ${w.offset}: ${w.message}`);
    if (stop) {
      say(stoppedLine(label, size, end.decodedBytes, stop.offset, stop.message));
      code = 1;
    }
  } catch (error) {
    bar?.end();
    if (error instanceof TraceDecodeError) {
      say(stoppedLine(label, size, error.offset, error.offset, error.reason));
      code = 1;
    } else throw error;
  }
  // what was written, one table a line
  try {
    for (const t of await converter.finish()) await output().stdout(`${join(dir, t.path)}\t${t.rows} rows\n`);
  } finally {
    await parquetEncoders?.close();
  }
  return code;
}

export const convert: OwnCommand = {
  name: "convert",
  help: `  convert FILE... --to F -o DIR  tables for analytics engines (DuckDB, Spark, Polars, pandas):
                                 DIR/events, DIR/processes, DIR/providers and one table per .NET
                                 runtime event (DIR/<Provider>/<Task>/<Opcode>), as .parquet or .arrow
      --to parquet|arrow         Parquet files, or Arrow IPC streams
      -o, --out DIR              the output directory (made if missing; tables in it are replaced)
      --provider P  --event NAME  --pid N  --tid N  --keywords K  --level L  --where COND
      --from MS  --until MS      the events filters (--until: the end of the time range, as events' --to)
      --row-group-rows N         Parquet: rows per row group at most (default 262144); each has min/max
                                 statistics of the time columns, so readers skip by time
      --parquet-version 1|2      Parquet: the format version (default 1, read everywhere; 2: version 2
                                 data pages and delta encodings, about half the bytes, for newer readers)
      --encode-workers N         Parquet: threads that encode (default 1 on machines of 2 cores or more:
                                 the events table there, the rest on the main thread; 0: all on it)
      several files: one session, merged (see below), with a sourceFile column`,
  options: {
    ...READS_TRACE,
    ...FILTERS,
    to: { type: "string" },
    out: { type: "string", short: "o" },
    until: { type: "string" },
    "row-group-rows": { type: "string" },
    "parquet-version": { type: "string" },
    "encode-workers": { type: "string" },
  },
  operand: "FILE",
  run: convertFiles,
};
