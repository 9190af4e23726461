// A streamed EventPipe file's windows: read by worker threads where asked (parallel.ts, loaded only then),
// else on this thread (data.ts). Above both, so that neither imports the other.

import type { DecodeOptions } from "../windows/windows.js";
import type { Input } from "../input/input.js";
import type { NettraceInfo, TraceData } from "../result/trace-data.js";
import { nettraceWindowsHere } from "./data.js";

/**
 * A streamed EventPipe file's tables, window after window (the events between two sequence points);
 * providers and event types keep their indices across windows. Returns the outline of them all (the
 * stream's end).
 */
export async function* nettraceWindows(
  input: Input,
  options: Pick<DecodeOptions, "engine" | "wasm" | "clrTables" | "chunkBytes" | "batchBytes" | "workers"> = {},
): AsyncGenerator<TraceData & { nettrace: NettraceInfo }, (TraceData & { nettrace: NettraceInfo }) | undefined> {
  // (with workers: the file cut at sequence points, each piece read by a worker; a file that cannot be cut is read here)
  if (options.workers) {
    const { parallelWindows } = await import("./parallel.js");
    const windows = parallelWindows(input, options, options.workers);
    if (windows) return yield* windows;
  }
  return yield* nettraceWindowsHere(input, options);
}
