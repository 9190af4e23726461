// Files as ByteSources (Node): read in place into the decoder's memory, asynchronously on the main
// thread; synchronously for the four-byte boundary reads of parallel decoding and in decode workers,
// which open the same file by its path and read their own ranges (decode/parallel.ts).

import { closeSync, openSync, readSync } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import type { ByteSource, SharedSource } from "./decode/windows.js";

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
