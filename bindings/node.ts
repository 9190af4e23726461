// Node-only helpers (file paths and streams), kept out of the platform-neutral entry point.

import { readFile, readdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { openTrace, type OpenOptions, type Trace } from "./trace.js";
import { streamTrace, type StreamOptions, type TraceStream } from "./stream.js";
import { Worker } from "node:worker_threads";
import { setSyncInstances, setUrlLoader } from "./decode/loader.js";
import { fileSource } from "./node-file.js";
import { setWorkerFactory } from "./decode/worker-factory.js";

setUrlLoader(async (url) => (await readFile(url)) as BufferSource);
setSyncInstances(true);

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
    ref: () => worker.ref(),
    unref: () => worker.unref(),
  };
}, { opensSources: true, sharesWindows: true });

export * from "./index.js";

/** One file, or several of a session (each named by its path). */
async function fileInput(path: string | readonly string[]) {
  if (typeof path === "string") return fileSource(path);
  if (path.length === 1) return fileSource(path[0]);
  return Promise.all(path.map(async (p) => ({ name: p, input: await fileSource(p) })));
}

/**
 * Decodes a trace file, reading it in chunks: the file is never held whole in JS memory. Several
 * paths are the files of one session, merged into one trace (see openTrace).
 */
export async function openTraceFile(path: string | readonly string[], options: OpenOptions = {}): Promise<Trace> {
  return openTrace(await fileInput(path), options);
}

/**
 * Streams a trace file as batches (see streamTrace): memory bounded by the batch size at any file
 * size. Several paths are the files of one session, streamed as one.
 */
export async function streamTraceFile(path: string | readonly string[], options: StreamOptions = {}): Promise<TraceStream> {
  return streamTrace(await fileInput(path), options);
}

/**
 * The files TraceEvent's MergeAll reads for `path` (X.etl): X.etl itself, then X.kernel*.etl,
 * X.clr*.etl (X.clrRundown.etl) and X.user*.etl beside it, each group in name order.
 */
export async function sessionFiles(path: string): Promise<string[]> {
  const dir = dirname(path);
  const base = basename(path).replace(/\.etl$/i, "");
  const names = await readdir(dir);
  const out = [path];
  for (const kind of ["kernel", "clr", "user"]) {
    const group = names.filter((n) => n.toLowerCase().startsWith(`${base}.${kind}`.toLowerCase()) && /\.etl$/i.test(n)).sort();
    for (const n of group) out.push(join(dir, n));
  }
  return out;
}
