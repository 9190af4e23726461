// Typed errors and warnings. Every one names the byte offset in the input where it arose.

import * as C from "../../../assembly/codes.js";
import { metaOf, type TraceData } from "./trace-data.js";

export * from "./trace-errors.js";
import { TraceFormatError } from "./trace-errors.js";

export interface TraceWarning {
  code: number;
  /** Short identifier of the code, e.g. "record-overruns". */
  kind: string;
  /** File offset of the buffer concerned (of the damage, for skipped bytes). */
  offset: number;
  /** Buffer index, or -1. */
  buffer: number;
  /** Offset inside the (decompressed) buffer, or -1. */
  recordOffset: number;
  detail: number;
  message: string;
  /** The file it arose in, for a trace of several files (`offset` is in that file). */
  file?: string;
}

const KINDS: Record<number, [string, string]> = {
  [C.W_BAD_BUFFER_SIZE]: ["bad-buffer-size", "BufferSize outside [0x48, 64 MiB]; scanning for the next buffer"],
  [C.W_SKIPPED_BYTES]: ["skipped-bytes", "bytes skipped to reach the next buffer"],
  [C.W_TRUNCATED_BUFFER]: ["truncated-buffer", "input ends inside this buffer; its complete records are kept"],
  [C.W_BAD_FILL_OFFSET]: ["bad-fill-offset", "Offset and SavedOffset are both outside the buffer"],
  [C.W_DECOMPRESS_FAILED]: ["decompress-failed", "XPRESS stream is corrupt; buffer skipped"],
  [C.W_UNSUPPORTED_COMPRESSION]: ["unsupported-compression", "compression format is not XPRESS; buffer skipped"],
  [C.W_RECORD_SIZE_ZERO]: ["record-size-zero", "record Size is 0; rest of the buffer abandoned"],
  [C.W_RECORD_TOO_SMALL]: ["record-too-small", "record is smaller than its header; rest of the buffer abandoned"],
  [C.W_RECORD_OVERRUNS]: ["record-overruns", "record runs past the end of its buffer; rest of the buffer abandoned"],
  [C.W_OPAQUE_RECORD]: ["opaque-record", "unknown record header type; kept as an opaque record"],
  [C.W_CORRUPT_MARKER]: ["corrupt-marker", "record does not start with a trace header; rest of the buffer abandoned"],
  [C.W_EXT_ITEMS_MALFORMED]: ["ext-items-malformed", "extended data items overrun the record; rest kept as user data"],
  [C.W_MESSAGE_TRUNCATED]: ["message-truncated", "WPP message header fields do not fit the record"],
  [C.W_TRAILING_GARBAGE]: ["trailing-garbage", "bytes after the last buffer hold no buffer"],
  [C.W_CAPACITY]: ["capacity", "tables cannot grow any further; decoding stopped"],
  [C.W_HEADER_BUFFER_TYPE]: ["header-buffer-type", "first buffer is not of type HEADER"],
  [C.W_LOGFILE_HEADER_SHORT]: ["logfile-header-short", "logfile header is shorter than TRACE_LOGFILE_HEADER"],
  [C.W_POINTER_SIZE_MISMATCH]: ["pointer-size-mismatch", "PointerSize disagrees with the header record type"],
  [C.W_BUFFER0_COMPRESSED]: ["buffer0-compressed", "first buffer is compressed"],
};

function warningKind(code: number): string {
  return KINDS[code]?.[0] ?? `warning-${code}`;
}

function describeWarning(code: number, detail: number): string {
  const text = KINDS[code]?.[1] ?? `warning ${code}`;
  return `${text} (${detail})`;
}

const FATAL: Record<number, string> = {
  [C.E_TOO_SHORT]: "not an ETL file: too short for a buffer header",
  [C.E_BAD_FIRST_BUFFER]: "not an ETL file: first BufferSize is implausible",
  [C.E_NO_LOGFILE_HEADER]: "not an ETL file: first record is not the EventTrace/Header record",
};

export function formatError(code: number, offset: number): TraceFormatError {
  return new TraceFormatError(code, offset, FATAL[code] ?? `not an ETL file (code ${code})`);
}

/** An EventPipe reader's warning codes (eventpipe/format.ts NW_*) are reported as 100 + the code. */
const EVENTPIPE_WARNING_BASE = 100;
const EVENTPIPE_KINDS = [
  "",
  "eventpipe-block-damaged",
  "eventpipe-bad-metadata",
  "eventpipe-metadata-fields",
  "eventpipe-metadata-redefined",
  "eventpipe-unknown-metadata",
  "eventpipe-unknown-stack",
  "eventpipe-unknown-object",
  "eventpipe-block-version",
  "eventpipe-trailing-bytes",
  "eventpipe-metadata-id-zero",
  "eventpipe-sequence-backwards",
  "eventpipe-bad-sync-time",
  "eventpipe-unknown-block-kind",
  "eventpipe-bad-row",
  "eventpipe-duplicate-thread",
  "eventpipe-block-trailing",
];

/** The warnings the core kept (WARN_STRIDE-byte structs at `warningsOffset`), or an EventPipe reader's. */
export function readWarnings(data: TraceData): TraceWarning[] {
  const out: TraceWarning[] = [];
  const eventPipe = data.nettrace?.warnings;
  if (eventPipe) {
    for (const w of eventPipe) {
      out.push({
        code: EVENTPIPE_WARNING_BASE + w.code,
        kind: EVENTPIPE_KINDS[w.code] ?? `eventpipe-${w.code}`,
        offset: w.offset,
        buffer: -1,
        recordOffset: -1,
        detail: 0,
        message: w.message,
      });
    }
    return out;
  }
  const m = metaOf(data);
  const v = new DataView(m.buffer, m.byteOffset);
  const files = data.files;
  let f = 0;
  for (let i = 0; i < data.warningCount; i++) {
    while (files && f + 1 < files.length && i >= files[f + 1].firstWarning) f++;
    const at = data.warningsOffset + i * C.WARN_STRIDE;
    const code = v.getUint32(at + C.WARN_CODE, true);
    const detail = v.getUint32(at + C.WARN_DETAIL, true);
    out.push({
      code,
      kind: warningKind(code),
      offset: v.getFloat64(at + C.WARN_FILE_OFFSET, true),
      buffer: v.getInt32(at + C.WARN_BUFFER, true),
      recordOffset: v.getInt32(at + C.WARN_RECORD_OFFSET, true),
      detail,
      message: describeWarning(code, detail),
      ...(files ? { file: files[f].name } : {}),
    });
  }
  return out;
}

/** Thrown where a row's record bytes are asked for before `loadRecords` read them. */
export class RecordsNotLoadedError extends Error {
  constructor(readonly row: number) {
    super(`etw-wasm: the record of row ${row} is not loaded (payloads: "source"): await trace.loadRecords(rows) first`);
    this.name = "RecordsNotLoadedError";
  }
}
