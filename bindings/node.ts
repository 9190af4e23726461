// Node-only helpers (file paths and streams), kept out of the platform-neutral entry point.

import { readFile, readdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { openTrace, type OpenOptions, type Trace } from "./trace.js";
import { streamTrace, type StreamOptions, type TraceStream } from "./stream.js";
import { Worker } from "node:worker_threads";
import { setSyncInstances, setUrlLoader } from "./decode/windows/loader.js";
import { fileSource, followChunks, type FollowOptions } from "./node-file.js";

export type { FollowOptions };
import { setWorkerFactory } from "./decode/workers/worker-factory.js";

setUrlLoader(async (url) => (await readFile(url)) as BufferSource);
setSyncInstances(true);

// decode workers (options.workers) are worker threads running node-worker.js
setWorkerFactory(
  () => {
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
  },
  { opensSources: true, sharesWindows: true },
);

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
export async function streamTraceFile(path: string | readonly string[], options: FileStreamOptions = {}): Promise<TraceStream> {
  const { follow, ...rest } = options;
  if (!follow) return streamTrace(await fileInput(path), rest);
  // a file still being written: read as it grows, on this thread (its size is not known)
  const one = typeof path === "string" ? path : path.length === 1 ? path[0] : undefined;
  if (one === undefined) throw new TypeError("etw-wasm: follow reads one file, not the files of a session");
  await stat(one);
  return streamTrace(followChunks(one, rest.chunkBytes ?? 1 << 20, follow === true ? {} : follow), { ...rest, workers: 0 });
}

/** streamTraceFile's options: a stream's, and how to follow a file another process is still writing. */
export interface FileStreamOptions extends StreamOptions {
  /**
   * Read the file as another process writes it: batches come as whole blocks (an EventPipe file's
   * sequence points; an .etl file's `batchBytes` of buffers) arrive, until the file's end-of-stream
   * marker (EventPipe), `follow.signal` aborts or `follow.idleMs` pass without growth (then the stream
   * ends incomplete at the offset read, unless the end was read). An .etl file has no end marker: it
   * is followed until the signal or the idle time. Decodes on this thread (no workers).
   */
  follow?: boolean | FollowOptions;
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
