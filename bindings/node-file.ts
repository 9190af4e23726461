// Files as ByteSources (Node): read in place into the decoder's memory, asynchronously on the main
// thread; synchronously for the four-byte boundary reads of parallel decoding and in decode workers,
// which open the same file by its path and read their own ranges (decode/parallel/parallel.ts).

import { closeSync, openSync, readSync } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import type { ByteSource, SharedSource } from "./decode/input/input.js";

/** A file as a ByteSource: opened at the first read, closed by the decoder when it is done. */
export async function fileSource(path: string): Promise<ByteSource> {
  const byteLength = (await stat(path)).size;
  let file: Promise<FileHandle> | undefined;
  let handle: FileHandle | undefined;
  let fd: number | undefined;
  return {
    byteLength,
    shared: { path },
    read(into, position) {
      // (once open, the read is issued at once: `into` is read into before the caller goes on)
      if (handle) return handle.read(into, 0, into.length, position).then((r) => r.bytesRead);
      return (file ??= open(path, "r")).then((h) => (handle = h).read(into, 0, into.length, position)).then((r) => r.bytesRead);
    },
    readSync(into, position) {
      fd ??= openSync(path, "r");
      return readSync(fd, into, 0, into.length, position);
    },
    async close() {
      const f = file;
      file = undefined;
      handle = undefined;
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      await (await f)?.close();
    },
  };
}

/** `length` bytes of a shared file from `offset`, read synchronously (a decode worker's segment). */
export function fileRange(shared: SharedSource, offset: number, length: number): ByteSource {
  let fd: number | undefined = openSync(shared.path, "r");
  const readAt = (into: Uint8Array, position: number): number => {
    const n = Math.min(into.length, length - position);
    if (n <= 0 || fd === undefined) return 0;
    return readSync(fd, into, 0, n, offset + position);
  };
  return {
    byteLength: length,
    preferSync: true,
    readSync: readAt,
    read: async (into, position) => readAt(into, position),
    async close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

/** How a file still being written is followed (streamTraceFile's `follow`). */
export interface FollowOptions {
  /** How long to wait at the file's current end before looking again (ms; default 200). */
  pollMs?: number;
  /**
   * Stop when the file has not grown for this long (ms). By default a follow waits until the reader
   * has the file's end (an EventPipe file's end-of-stream marker), or `signal` aborts.
   */
  idleMs?: number;
  /** Ends the follow: the stream ends with what was read (incomplete unless the file's end was read). */
  signal?: AbortSignal;
}

/**
 * A file another process is still writing, as chunks in file order: each read takes what has been
 * appended since the last; at the file's current end it waits `pollMs` and looks again. It ends when
 * the consumer stops asking (the EventPipe reader at the end-of-stream marker), when `signal` aborts,
 * or after `idleMs` without growth. Chunks come from two buffers used in turn: one is valid until the
 * next is asked for, as with sourceChunks.
 */
export async function* followChunks(path: string, chunkBytes: number, options: FollowOptions = {}): AsyncGenerator<Uint8Array> {
  const pollMs = options.pollMs ?? 200;
  const { idleMs, signal } = options;
  if (!(Number.isFinite(pollMs) && pollMs >= 0)) throw new RangeError(`etw-wasm: follow.pollMs must be a number of milliseconds, not ${String(pollMs)}`);
  if (idleMs !== undefined && !(Number.isFinite(idleMs) && idleMs >= 0))
    throw new RangeError(`etw-wasm: follow.idleMs must be a number of milliseconds, not ${String(idleMs)}`);
  const handle = await open(path, "r");
  const buffers = [new Uint8Array(chunkBytes), new Uint8Array(chunkBytes)];
  let k = 0;
  let position = 0;
  let grewAt = Date.now();
  try {
    while (!signal?.aborted) {
      const into = buffers[k];
      const { bytesRead } = await handle.read(into, 0, into.length, position);
      if (bytesRead > 0) {
        position += bytesRead;
        grewAt = Date.now();
        k ^= 1;
        yield into.subarray(0, bytesRead);
        continue;
      }
      if (idleMs !== undefined && Date.now() - grewAt >= idleMs) return;
      await pause(pollMs, signal);
    }
  } finally {
    await handle.close();
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
