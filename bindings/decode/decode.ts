// Decoding a whole trace: the windows of the input (windows.ts) gathered into one JS-owned trace
// (builder.ts), and the rule that says whether it is complete.

import { decodeWindows, knownSize, ONE_WINDOW_BYTES, type DecodeEnd, type DecodeOptions, type Window } from "./windows/windows.js";
import { isByteSource, type ByteSource, type Input } from "./input/input.js";
import { TraceBuilder } from "./windows/builder.js";
import { metaOf, readBuffer, type TraceData } from "./result/trace-data.js";
import { TraceDecodeError, formatError, readWarnings, type TraceIncomplete } from "./result/errors.js";
import * as C from "../../assembly/codes.js";
import type { DecodeFilter } from "./windows/filter.js";

export type { DecodeFilter, DecodeOptions, Input, ByteSource };
export { isSessionInput, type NamedInput, type SessionInput } from "./input/session-input.js";

const PAGE = 65536;

/**
 * `own`: the tables in memory of their own even for a trace of one window (not the core's), as a
 * merge of several files needs them.
 */
export async function decodeTrace(input: Input, options: DecodeOptions = {}, own = false): Promise<TraceData> {
  // an EventPipe file (.nettrace, .netperf) by its first bytes: read whole by its own reader (a lazy chunk)
  const peeked = await peek(input);
  input = peeked.input;
  if (peeked.nettrace) {
    const { nettraceData, wholeInput } = await import("./eventpipe/data.js");
    return nettraceData(await wholeInput(input), options);
  }
  const size = knownSize(input, options);
  const mode = options.payloads ?? "keep";
  if (mode !== "keep" && mode !== "drop" && mode !== "source")
    throw new TypeError(`etw-wasm: payloads must be "keep", "drop" or "source", not ${String(options.payloads)}`);
  if (mode === "source") {
    // (a lazy chunk: XPRESS in JS comes with it)
    const { RecordSource, rereadable } = await import("./input/record-source.js");
    const again = rereadable(input);
    if (!again)
      throw new TypeError(`etw-wasm: payloads: "source" needs an input that can be read again (bytes, a Blob or File, a ByteSource), not a stream of chunks`);
    // (the trace reads the input again later: the decoder must not close it)
    const open = isByteSource(input) ? { byteLength: input.byteLength, read: input.read.bind(input) } : input;
    let data: TraceData;
    try {
      data = await decodeInto(new TraceBuilder(size, true, "source"), open, options, size, true);
    } catch (error) {
      await again.close();
      throw error;
    }
    data.records = new RecordSource(data, again);
    return data;
  }
  // bytes in hand: the trace's record bytes are the input itself, where the core walked them (no copy)
  const whole = input instanceof Uint8Array ? input : input instanceof ArrayBuffer ? new Uint8Array(input) : undefined;
  return decodeInto(new TraceBuilder(size, true, mode, whole), input, options, size, mode === "drop" || own);
}

const NETTRACE = "Nettrace";
const NETPERF = [20, 0, 0, 0, 0x21, 0x46, 0x61, 0x73]; // i32 20, "!Fas" (a FastSerialization stream)

/** Whether the input starts as an EventPipe file; an iterable input comes back with its first chunk put back. */
export async function peek(input: Input): Promise<{ input: Input; nettrace: boolean }> {
  const is = (b: Uint8Array) => b.length >= 8 && (String.fromCharCode(...b.subarray(0, 8)) === NETTRACE || NETPERF.every((x, i) => b[i] === x));
  if (input instanceof Uint8Array) return { input, nettrace: is(input) };
  if (input instanceof ArrayBuffer) return { input, nettrace: is(new Uint8Array(input, 0, Math.min(8, input.byteLength))) };
  if (typeof Blob !== "undefined" && input instanceof Blob) return { input, nettrace: is(new Uint8Array(await input.slice(0, 8).arrayBuffer())) };
  if (isByteSource(input)) {
    const head = new Uint8Array(Math.min(8, input.byteLength));
    const n = head.length ? await input.read(head, 0) : 0;
    return { input, nettrace: is(head.subarray(0, n)) };
  }
  // chunks: the first ones are read to see the start, then given back ahead of the rest (a lazy chunk)
  const { peekChunks } = await import("./eventpipe/data.js");
  const { input: again, head } = await peekChunks(input as Iterable<Uint8Array> | AsyncIterable<Uint8Array>);
  return { input: again, nettrace: is(head) };
}

/** The windows of `input` gathered by `builder` (a trace of one window stays in the core unless `gather`). */
async function decodeInto(builder: TraceBuilder, input: Input, options: DecodeOptions, size: number | undefined, gather: boolean): Promise<TraceData> {
  // A trace of up to one window is decoded as one by default: its tables then stay in the core's memory,
  // where smaller windows copy them out (and the record bytes too, of a file, a Blob or chunks): the
  // generated 64 MiB trace from a file takes 20 ms warm in one window, 45 ms in 8 MiB ones. (Bytes in
  // hand would fault less memory in small windows, the input not staged whole: its first decode 570 ->
  // 380 ms, but every later one 19.5 -> 24 ms.)
  const one = options.batchBytes === undefined && !gather && size !== undefined && size <= ONE_WINDOW_BYTES;
  const windows = windowsOf(input, one ? { ...options, batchBytes: ONE_WINDOW_BYTES } : options, builder.holdsInput);
  // A trace of one window stays where the core decoded it; the windows of a larger one are copied out.
  let only: Window | undefined;
  let end: DecodeEnd;
  for (;;) {
    const next = await windows.next();
    if (next.done) {
      end = next.value;
      break;
    }
    const w = next.value;
    // (records not kept: even one window is gathered, to let the core's memory go)
    if (w.final && builder.windows === 0 && !gather) only = w;
    // (no one else reads a window here: add may move its addresses where they lie)
    else if (!builder.add(w, true)) {
      // record bytes past 4 GiB: the trace stops before the window that did not fit
      await windows.return(undefined as never);
      end = stopped(w.data, size ?? 0);
      break;
    }
  }
  if (only && !end.fatalCode && end.last) return judged(oneWindow(only, end), end, false);
  if (only) builder.add(only, true);
  return finishTrace(builder, end);
}

/** How a decode ended that the builder stopped (the core's state when it did). */
function stopped(last: TraceData, inputBytes: number): DecodeEnd {
  return { inputBytes, fileOffset: 0, stoppedEarly: true, fatalCode: 0, fatalOffset: 0, pages: 0, clrMissing: 0, last };
}

/** A trace of one window: its tables as the core left them, in the core's memory until disposed. */
function oneWindow(w: Window, end: DecodeEnd): TraceData {
  const data = end.last!;
  data.clr = w.data.clr;
  data.clrRows = w.data.clrRows;
  data.inputBytes = end.inputBytes;
  data.decodedBytes = end.inputBytes;
  data.release = end.release;
  return data;
}

/** The built trace, judged complete or not; a format error or a decode that kept nothing throws. */
export function finishTrace(builder: TraceBuilder, end: DecodeEnd): TraceData {
  if (end.fatalCode) {
    end.release?.();
    throw formatError(end.fatalCode, end.fatalOffset);
  }
  let data: TraceData;
  try {
    data = builder.build(end.last, end.inputBytes);
  } finally {
    end.release?.();
  }
  return judged(data, end, builder.full);
}

/** `data` with its completeness judged; a decode that kept nothing throws. */
function judged(data: TraceData, end: DecodeEnd, storeFull: boolean): TraceData {
  const failure = end.failure;
  if (failure) {
    if (data.eventCount === 0) {
      data.release?.();
      throw new TraceDecodeError(end.fileOffset, `decoding failed: ${String(failure)}`, { cause: failure });
    }
    data.decodeError = new TraceDecodeError(end.fileOffset, `decoding stopped: ${String(failure)}`, { cause: failure });
  }
  judge(data, end, storeFull);
  if (data.eventCount === 0 && data.incomplete?.reason === "capacity") {
    data.release?.();
    throw new TraceDecodeError(data.incomplete.offset, `decoding failed: ${limitText(end.pages)} before the first buffer was decoded`);
  }
  return data;
}

/** "8 MiB", "1.5 GiB", or bytes. */
function sizeText(bytes: number): string {
  for (const [unit, n] of [
    ["GiB", 2 ** 30],
    ["MiB", 2 ** 20],
    ["KiB", 2 ** 10],
  ] as const) {
    if (bytes >= n) return `${Number((bytes / n).toFixed(2))} ${unit}`;
  }
  return `${bytes} bytes`;
}

function limitText(pages: number): string {
  return pages ? `memory limit of ${sizeText(pages * PAGE)} reached` : "out of memory";
}

/**
 * Whether the trace is complete, and if not why and where it stops (data.incomplete,
 * data.decodedBytes). The rule, first match wins:
 * 1. decoding failed (data.decodeError): "decode-error" at the error's offset;
 * 2. the tables could not grow (a W_CAPACITY warning, a warning that could not be kept, or the core
 *    stopping before the input ended): "capacity" where the buffer that did not fit begins;
 * 3. the input ends inside a buffer (the last buffer is truncated, W_TRUNCATED_BUFFER): "truncated-buffer"
 *    at that buffer's offset, every complete record in it kept;
 * 4. fewer buffers than the logfile header's BuffersWritten, in a file written in sequential mode
 *    (not circular, append or new-file mode, where the count need not be the file's; and not 0, a
 *    session that was not stopped cleanly): "missing-buffers" at the end of the input. This finds a
 *    file cut at a buffer boundary, which leaves no warning. Buffers lost to damage inside the file
 *    (bad-buffer-size, skipped-bytes warnings) already say why the count is short: then it is not used;
 * 5. the typed .NET runtime tables could not all be filled for want of memory: "capacity".
 * Damage the decoder steps over (a skipped buffer, an abandoned record) is not incompleteness:
 * `warnings` list it.
 */
function judge(data: TraceData, end: DecodeEnd, storeFull: boolean): void {
  data.decodedBytes = data.inputBytes;
  const limit = storeFull
    ? 'the record bytes kept reached 4 GiB (open it with payloads: "source" or "drop", or stream it with streamTrace)'
    : limitText(end.pages);
  const stop = (reason: TraceIncomplete["reason"], offset: number, message: string, decoded = offset) => {
    data.incomplete = { reason, offset, message };
    data.decodedBytes = decoded;
  };
  if (data.decodeError) {
    stop("decode-error", data.decodeError.offset, data.decodeError.reason.replace(/^decoding stopped: /, ""));
    return;
  }
  const warnings = readWarnings(data);
  const capacity = warnings.find((w) => w.code === C.W_CAPACITY);
  const dropped = data.warningTotal > data.warningCount && data.warningCount < C.MAX_WARNINGS;
  const last = data.bufferCount > 0 ? readBuffer(data, data.bufferCount - 1) : undefined;
  if (capacity || dropped || end.stoppedEarly) {
    // Where the buffer that did not fit begins: the warning names it, or it follows the last one taken.
    let offset = 0;
    if (capacity && capacity.offset >= 0) offset = capacity.offset;
    else if (last) offset = last.fileOffset + last.bufferSize;
    offset = Math.min(offset, data.inputBytes);
    stop("capacity", offset, `${limit}: the tables cannot grow any further`);
    return;
  }
  if (last?.truncated) {
    const present = Math.max(0, data.inputBytes - last.fileOffset);
    stop(
      "truncated-buffer",
      last.fileOffset,
      `the input ends inside the buffer at byte offset ${last.fileOffset} (${present} of its ${last.bufferSize} bytes); its complete records are kept`,
      data.inputBytes,
    );
    return;
  }
  const meta = metaOf(data);
  const v = new DataView(meta.buffer, meta.byteOffset);
  const lh = data.logfileOffset;
  const mode = v.getUint32(lh + C.LH_LOG_FILE_MODE, true);
  const written = v.getUint32(lh + C.LH_BUFFERS_WRITTEN, true);
  const sequential = (mode & (C.LOG_FILE_MODE_CIRCULAR | C.LOG_FILE_MODE_APPEND | C.LOG_FILE_MODE_NEWFILE)) === 0;
  const explained = warnings.some((w) => w.code === C.W_BAD_BUFFER_SIZE || w.code === C.W_SKIPPED_BYTES);
  if (sequential && written > data.bufferCount && !explained) {
    stop("missing-buffers", data.inputBytes, `only ${data.bufferCount} of the ${written} buffers the logfile header counts (BuffersWritten) are in the input`);
    return;
  }
  if (end.clrMissing > 0) {
    stop(
      "capacity",
      data.inputBytes,
      `${limit} while filling the typed .NET runtime tables: ${data.clrRows} of their ${data.clrRows + end.clrMissing} rows placed`,
      data.inputBytes,
    );
  }
}

/**
 * The windows of `input`: decoded on this thread, or with `options.workers` worker threads
 * (parallel.ts, loaded only then; here, above both, so that neither imports the other), whichever the options ask for. `inputHeld`: the caller keeps the
 * input's bytes as the trace's record bytes (workers then send back tables without them).
 */
export async function* windowsOf(input: Input, options: DecodeOptions, inputHeld = false): AsyncGenerator<Window, DecodeEnd> {
  if (!options.workers) return yield* decodeWindows(input, options);
  const { decodeParallel } = await import("./parallel/parallel.js");
  return yield* decodeParallel(input, options, options.workers, inputHeld);
}
