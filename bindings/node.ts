// Node-only helpers (file paths and streams), kept out of the platform-neutral entry point.

import { open, readFile, stat } from "node:fs/promises";
import { openTrace, type OpenOptions, type Trace } from "./trace.js";
import { streamTrace, type StreamOptions, type TraceStream } from "./stream.js";
import { setUrlLoader } from "./decode/loader.js";

setUrlLoader(async (url) => (await readFile(url)) as BufferSource);

export * from "./index.js";

/**
 * A file's bytes in chunks, read ahead: the next chunk is read while the decoder takes the one
 * before, into two buffers used in turn (no fresh memory per chunk). A chunk is valid until the
 * next is asked for, which is how the decoder reads its input.
 */
async function* fileChunks(path: string, chunk: number): AsyncGenerator<Uint8Array> {
  const file = await open(path, "r");
  const buffers = [new Uint8Array(chunk), new Uint8Array(chunk)];
  let position = 0;
  let k = 0;
  let pending: Promise<{ bytesRead: number }> | undefined = file.read(buffers[0], 0, chunk, position);
  try {
    for (;;) {
      const { bytesRead } = await pending;
      pending = undefined;
      if (bytesRead === 0) return;
      position += bytesRead;
      const current = buffers[k];
      k ^= 1;
      pending = file.read(buffers[k], 0, chunk, position);
      yield current.subarray(0, bytesRead);
    }
  } finally {
    await pending?.catch(() => undefined);
    await file.close();
  }
}

/** A file's size and its chunks for the decoder. */
async function fileInput<T extends OpenOptions>(path: string, options: T): Promise<{ input: AsyncIterable<Uint8Array>; options: T }> {
  const size = (await stat(path)).size;
  const chunk = Math.max(64 << 10, Math.min(options.chunkBytes ?? 16 << 20, size));
  return { input: fileChunks(path, chunk), options: { ...options, chunkBytes: chunk, inputSize: size } };
}

/** Decodes a trace file, reading it in chunks: the file is never held whole in JS memory. */
export async function openTraceFile(path: string, options: OpenOptions = {}): Promise<Trace> {
  const f = await fileInput(path, options);
  return openTrace(f.input, f.options);
}

/** Streams a trace file as batches (see streamTrace): memory bounded by the batch size at any file size. */
export async function streamTraceFile(path: string, options: StreamOptions = {}): Promise<TraceStream> {
  const f = await fileInput(path, options);
  return streamTrace(f.input, f.options);
}
