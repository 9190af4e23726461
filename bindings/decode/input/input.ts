// What a decode reads: bytes, a Blob, chunks, or a ByteSource read at any position (a file). Below the
// window driver, the chunk readers and the worker factory, which all take it.

/**
 * A trace file read at any position (a Node file handle, say): the decoder reads it straight into
 * memory of its own, and with workers straight into each segment's buffer. The decoder calls
 * `close` when it is done with it.
 */
export interface ByteSource {
  readonly byteLength: number;
  /** Reads up to `into.length` bytes at `position` into `into`; resolves with the bytes read (0 at the end). */
  read(into: Uint8Array, position: number): Promise<number>;
  close?(): Promise<void>;
  /**
   * Reads without waiting, where the platform can (a Node file): parallel decoding finds the buffers'
   * boundaries with it, four bytes a buffer, instead of reading the whole input on the calling thread.
   */
  readSync?(into: Uint8Array, position: number): number;
  /** What a decode worker needs to open the same bytes itself (a file's path); see worker-factory.ts. */
  shared?: SharedSource;
  /** Decode by `readSync` (a worker has no page to keep responsive, and reads in cache-sized pieces). */
  preferSync?: boolean;
}

/** A ByteSource as it crosses to a worker, which opens it again there (setSourceOpener). */
export interface SharedSource {
  path: string;
}

/** Bytes, a Blob or File (browsers, Node), a ByteSource, or chunks of the file in order (any sizes). */
export type Input = Uint8Array | ArrayBuffer | Blob | ByteSource | Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

export function isByteSource(input: Input): input is ByteSource {
  return typeof (input as ByteSource).read === "function" && typeof (input as ByteSource).byteLength === "number";
}
