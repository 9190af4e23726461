// What names several files of one session rather than one file (kept apart from the decoder, which
// openTrace loads only when a trace is opened).

import type { ByteSource, Input } from "./input.js";

/** One file of a session: its bytes (any Input) and the name it goes by in errors and `trace.files`. */
export interface NamedInput {
  name: string;
  input: Input;
}

/** Several files of one session: named inputs, Blobs or Files (named by their own names), ByteSources. */
export type SessionInput = readonly (NamedInput | Blob | ByteSource | ArrayBuffer)[];

/**
 * Whether `input` is several files rather than one file's chunks: an array whose entries are not
 * chunks (Uint8Array), but named inputs, Blobs, ByteSources or ArrayBuffers.
 */
export function isSessionInput(input: Input | SessionInput): input is SessionInput {
  return Array.isArray(input) && input.length > 0 && !input.some((x) => x instanceof Uint8Array);
}
