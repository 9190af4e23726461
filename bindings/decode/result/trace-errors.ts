// The decoder's error classes and the reason a trace is incomplete: below the trace's data (trace-data.ts
// names them), so no module imports back up. errors.ts re-exports them beside the warnings.

import * as C from "../../../assembly/codes.js";

/** The trace formats the decoder reads. */
export type TraceFormat = "etl" | "nettrace";

/** Names of the format errors' codes (`TraceFormatError.kind`), by format. */
const FORMAT_KINDS: Record<TraceFormat, Record<number, string>> = {
  etl: { [C.E_TOO_SHORT]: "too-short", [C.E_BAD_FIRST_BUFFER]: "bad-first-buffer", [C.E_NO_LOGFILE_HEADER]: "no-logfile-header" },
  // (the EventPipe reader's NE_* codes, bindings/eventpipe/format.ts)
  nettrace: { 1: "truncated", 2: "bad-magic", 3: "unsupported-version", 4: "bad-object", 5: "bad-trace", 6: "bad-block", 7: "too-large", 99: "internal" },
};

/**
 * The input is not a trace this decoder can start on: not an ETL file, or an EventPipe file it cannot
 * read from the start. `format` says which the input was taken for, `kind` names the `code`.
 */
export class TraceFormatError extends Error {
  override name = "TraceFormatError";
  /** The code's name, e.g. "too-short" (.etl) or "bad-magic" (.nettrace). */
  readonly kind: string;
  constructor(
    readonly code: number,
    /** Byte offset in the input. */
    readonly offset: number,
    /** What went wrong, without the offset (the message adds it). */
    readonly reason: string,
    readonly format: TraceFormat = "etl",
  ) {
    super(`${reason} (at byte offset ${offset})`);
    this.kind = FORMAT_KINDS[format][code] ?? `code-${code}`;
  }
}

/**
 * The decoder could not go on (for example out of memory). Every row decoded before `offset` is kept:
 * the Trace opens with them and holds this error as `trace.decodeError`.
 */
export class TraceDecodeError extends Error {
  override name = "TraceDecodeError";
  constructor(
    readonly offset: number,
    /** What went wrong, without the offset (the message adds it). */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${reason} (at byte offset ${offset})`, options);
  }
}

/** The name TraceFormatError had before EventPipe files were read (kept for a release). @deprecated */
export const EtlFormatError = TraceFormatError;
/** @deprecated TraceFormatError. */
export type EtlFormatError = TraceFormatError;
/** The name TraceDecodeError had before EventPipe files were read (kept for a release). @deprecated */
export const EtlDecodeError = TraceDecodeError;
/** @deprecated TraceDecodeError. */
export type EtlDecodeError = TraceDecodeError;

/**
 * Why a trace is not complete (`trace.incomplete`): its rows come from the input up to `offset`, and
 * some of the trace is missing after it.
 */
export interface TraceIncomplete {
  /**
   * - "decode-error": decoding failed there (`trace.decodeError` holds the error);
   * - "capacity": memory ran out (the `memoryLimit`, the 4 GiB of WebAssembly memory, or what the
   *   platform grants) or a table reached its size limit: a W_CAPACITY warning;
   * - "truncated-buffer": the input ends inside a buffer (W_TRUNCATED_BUFFER); its complete records are kept;
   * - "missing-buffers": the input holds fewer buffers than the logfile header's BuffersWritten
   *   counts (files written in sequential mode only).
   */
  reason: "decode-error" | "capacity" | "truncated-buffer" | "missing-buffers";
  /**
   * Byte offset in the input where the trace stops being complete: where decoding stopped, the start
   * of the truncated buffer, or (missing buffers, typed tables) the end of the input.
   */
  offset: number;
  /** One line saying what happened, without the offset prefix, e.g. "memory limit of 8 MiB reached: …". */
  message: string;
}
