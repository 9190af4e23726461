// Node-only helpers (file paths and streams), kept out of the platform-neutral entry point.

import { open, readFile, stat, type FileHandle } from "node:fs/promises";
import { openTrace, type OpenOptions, type Trace } from "./trace.js";
import { streamTrace, type StreamOptions, type TraceStream } from "./stream.js";
import { Worker } from "node:worker_threads";
import { setUrlLoader } from "./decode/loader.js";
import type { ByteSource } from "./decode/windows.js";
import { setWorkerFactory } from "./decode/worker-factory.js";

setUrlLoader(async (url) => (await readFile(url)) as BufferSource);

// decode workers (options.workers) are worker threads running node-worker.js
setWorkerFactory(() => {
  const worker = new Worker(new URL("./node-worker.js", import.meta.url));
  return {
    post: (message, transfer) => worker.postMessage(message, transfer),
    listen(onMessage, onError) {
      worker.on("message", onMessage);
      worker.on("error", onError);
    },
    terminate: () => worker.terminate(),
  };
});

export * from "./index.js";

/** A file as a ByteSource: opened at the first read, closed by the decoder when it is done. */
async function fileSource(path: string): Promise<ByteSource> {
  const byteLength = (await stat(path)).size;
  let file: Promise<FileHandle> | undefined;
  return {
    byteLength,
    async read(into, position) {
      const { bytesRead } = await (await (file ??= open(path, "r"))).read(into, 0, into.length, position);
      return bytesRead;
    },
    async close() {
      const f = file;
      file = undefined;
      await (await f)?.close();
    },
  };
}

/** Decodes a trace file, reading it in chunks: the file is never held whole in JS memory. */
export async function openTraceFile(path: string, options: OpenOptions = {}): Promise<Trace> {
  return openTrace(await fileSource(path), options);
}

/** Streams a trace file as batches (see streamTrace): memory bounded by the batch size at any file size. */
export async function streamTraceFile(path: string, options: StreamOptions = {}): Promise<TraceStream> {
  return streamTrace(await fileSource(path), options);
}
