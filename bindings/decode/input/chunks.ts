// An input as chunks, for the readers that take it that way (parallel decoding's cutter, the EventPipe
// reader, the CLI): kept apart from the window driver, which reads into the core's memory itself.

import type { ByteSource } from "./input.js";

/**
 * A ByteSource's bytes in chunks, read ahead: the next chunk is read while the decoder takes the one
 * before, into two buffers used in turn (no fresh memory per chunk). A chunk is valid until the next
 * is asked for, which is how the decoder reads its input. Closes the source at the end.
 */
export async function* sourceChunks(source: ByteSource, chunk: number): AsyncGenerator<Uint8Array> {
  const size = Math.max(1, Math.min(chunk, source.byteLength));
  const buffers = [new Uint8Array(size), new Uint8Array(size)];
  let position = 0;
  let k = 0;
  let pending: Promise<number> | undefined = source.read(buffers[0], 0);
  try {
    for (;;) {
      const n = await pending;
      pending = undefined;
      if (n === 0) return;
      position += n;
      const current = buffers[k];
      k ^= 1;
      pending = source.read(buffers[k], position);
      yield current.subarray(0, n);
    }
  } finally {
    await pending?.catch(() => undefined);
    await source.close?.();
  }
}

export function* slices(bytes: Uint8Array, size: number): Iterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, Math.min(bytes.length, i + size));
}
