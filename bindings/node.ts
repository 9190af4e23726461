// Node-only helpers (file paths and streams), kept out of the platform-neutral entry point.

import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { openTrace, type OpenOptions, type Trace } from "./trace.js";
import { streamTrace, type StreamOptions, type TraceStream } from "./stream.js";
import { setUrlLoader } from "./decode/loader.js";

setUrlLoader(async (url) => (await readFile(url)) as BufferSource);

export * from "./index.js";

/** Decodes a trace file, streaming it in chunks: the file is never held whole in JS memory. */
export async function openTraceFile(path: string, options: OpenOptions = {}): Promise<Trace> {
  const size = (await stat(path)).size;
  const chunk = Math.max(64 << 10, Math.min(options.chunkBytes ?? 16 << 20, size));
  const stream = createReadStream(path, { highWaterMark: chunk });
  return openTrace(stream as AsyncIterable<Uint8Array>, { ...options, chunkBytes: chunk, inputSize: size });
}

/** Streams a trace file as batches (see streamTrace): memory bounded by the batch size at any file size. */
export async function streamTraceFile(path: string, options: StreamOptions = {}): Promise<TraceStream> {
  const size = (await stat(path)).size;
  const chunk = Math.max(64 << 10, Math.min(options.chunkBytes ?? 16 << 20, size));
  const stream = createReadStream(path, { highWaterMark: chunk });
  return streamTrace(stream as AsyncIterable<Uint8Array>, { ...options, chunkBytes: chunk, inputSize: size });
}
