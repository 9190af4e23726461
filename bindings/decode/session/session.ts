// Several files of one session decoded and merged (merge.ts): what openTrace and streamTrace load
// only when given several files.

import { decodeTrace, type DecodeOptions, type Input, type NamedInput, type SessionInput } from "../decode.js";
import { TraceDecodeError, TraceFormatError } from "../result/errors.js";
import { SessionMerger, type MergePart } from "./merge.js";
import type { TraceData } from "../result/trace-data.js";

/** A session's files as named inputs: a File by its name, anything else by its position ("file 2"). */
export function namedInputs(files: SessionInput): NamedInput[] {
  return files.map((f, i) => {
    if ((f as NamedInput).input !== undefined && typeof (f as NamedInput).name === "string") return f as NamedInput;
    const name = typeof (f as { name?: unknown }).name === "string" && (f as { name: string }).name ? (f as { name: string }).name : `file ${i + 1}`;
    return { name, input: f as Input };
  });
}

/** `error` (from decoding one file of several) with the file's name in its message. */
export function namedError(error: unknown, name: string): unknown {
  if (error instanceof TraceFormatError) return new TraceFormatError(error.code, error.offset, `${name}: ${error.reason}`, error.format);
  if (error instanceof TraceDecodeError) return new TraceDecodeError(error.offset, `${name}: ${error.reason}`, { cause: error.cause });
  return error;
}

/**
 * Decodes several files of one session and merges them (decode/session/merge.ts), file after file; progress
 * counts the bytes of every file. A file that is no trace, or of which nothing could be decoded,
 * rejects with its name in the message.
 */
export async function decodeSession(files: readonly NamedInput[], options: DecodeOptions = {}): Promise<TraceData> {
  if (options.payloads === "source") throw new TypeError(`etw-wasm: payloads: "source" reads one file back; open the files of a session with "keep" or "drop"`);
  const parts: MergePart[] = [];
  let done = 0;
  try {
    for (let i = 0; i < files.length; i++) {
      const onProgress = options.onProgress && ((n: number) => options.onProgress!(done + n));
      let data: TraceData;
      try {
        data = await decodeTrace(files[i].input, { ...options, onProgress }, true);
      } catch (error) {
        throw namedError(error, files[i].name);
      }
      parts.push({ file: i, data });
      done += data.inputBytes;
    }
    return new SessionMerger(files.map((f) => f.name)).merge(parts);
  } finally {
    for (const p of parts) p.data.release?.();
  }
}
