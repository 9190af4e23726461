// `etw-wasm convert`'s work without its writes, for the benchmark (a child process: node
// dist/bench/convert-compute.js FILE FORMAT): the process pass, the decode, the tables' columns and their
// Arrow or Parquet bytes, handed to sinks that drop them. Prints {"ms", "events", "bytes"} as JSON.
// Beside the convert row it tells what the output's writes cost (on a VM the page cache's fresh pages
// can cost as much as the rest).

import { availableParallelism } from "node:os";
import { streamTraceFile } from "../bindings/node.js";
import { ParquetWorkers, TraceConverter, type TableSink } from "../bindings/export/node.js";
import { streamedProcesses } from "../bindings/cli/command.js";

const [file, format] = process.argv.slice(2);
if (!file || (format !== "arrow" && format !== "parquet")) throw new Error("usage: convert-compute.js FILE arrow|parquet");
let bytes = 0;
const dropping = async (): Promise<TableSink> => ({
  write: async (b) => void (bytes += b.byteLength),
  writev: async (chunks) => void (bytes += chunks.reduce((n, c) => n + c.byteLength, 0)),
  settled: async () => undefined,
  close: async () => undefined,
});
const t0 = performance.now();
// (as the CLI: one Parquet encoding thread beside this one where there are two cores)
const parquetEncoders = format === "parquet" && availableParallelism() >= 2 ? new ParquetWorkers(1) : undefined;
const converter = new TraceConverter({ format, open: dropping, parquetEncoders });
const processes = await streamedProcesses(file, {});
const stream = await streamTraceFile(file, {});
await converter.add(stream, { processes });
if (stream.end?.incomplete) throw new Error(`decoding stopped early: ${stream.end.incomplete.message}`);
const events = (await converter.finish()).find((t) => t.path.startsWith("events."))?.rows ?? 0;
await parquetEncoders?.close();
process.stdout.write(JSON.stringify({ ms: performance.now() - t0, events, bytes }) + "\n");
