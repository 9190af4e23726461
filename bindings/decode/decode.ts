// Decoding: stream the input through a core's staging area in chunks of whole buffers, then wrap
// its tables as typed-array views. Two cores share this driver and the table layout: the
// WebAssembly one (assembly/) and its pure TypeScript twin (bindings/core/), loaded only when asked for.

import { instantiateCore, recycleMemory, type CoreExports, type WasmSource } from "./loader.js";
import { readBuffer, type TraceData } from "./trace-data.js";
import { EtlDecodeError, formatError, readWarnings, type TraceIncomplete } from "./errors.js";
import * as C from "../../assembly/codes.js";
import { clrProgram } from "../schema/clr-program.js";
import { clrProviderIndex } from "../schema/clr-payload.js";
import { formatGuid } from "../schema/guid.js";
import { encodeFilter, type DecodeFilter } from "./filter.js";

export type { DecodeFilter };

/** Bytes, a Blob or File (browsers, Node), or chunks of the file in order (any sizes). */
export type Input = Uint8Array | ArrayBuffer | Blob | Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

/** A Blob read as a stream of chunks. */
async function* blobChunks(blob: Blob): AsyncIterable<Uint8Array> {
  const reader = blob.stream().getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

export interface DecodeOptions {
  /** "wasm" (default): the WebAssembly core; "js": the pure TypeScript core (same tables). */
  engine?: "wasm" | "js";
  /** Staging area size: how much input the core takes per call (default 16 MiB). */
  chunkBytes?: number;
  /** A compiled module, the `.wasm` bytes or its URL; default: the packaged `etw.wasm`. */
  wasm?: WasmSource;
  /** Fill the typed tables of .NET runtime events while decoding (default true). */
  clrTables?: boolean;
  /** Called after each chunk with the input bytes consumed so far. */
  onProgress?: (bytesRead: number) => void;
  /**
   * The input's size in bytes when the caller knows it (a file's size; bytes, Blobs and Files give their
   * own). A decode that stops early then stops reading; a stream of unknown size is read to its end only
   * to count `trace.inputBytes`.
   */
  inputSize?: number;
  /**
   * The most memory, in bytes, the decoder may take for this trace: its tables, the record bytes they
   * point into and the staging area (rounded down to 64 KiB pages; at least 1 MiB, `codes.MEMORY_MIN_PAGES`;
   * default and most 4 GiB). Where the next buffer would not fit, decoding stops: the trace keeps every
   * row before and is not complete (`trace.incomplete.reason` "capacity"); if not even the first buffer
   * fits, openTrace rejects with EtlDecodeError. Both engines honour it.
   */
  memoryLimit?: number;
  /**
   * Decode-time filter: a record that does not pass takes no row, no extended items, no count in
   * `eventTypes` and no row in the typed .NET tables (see DecodeFilter). The logfile header record
   * (row 0) is always kept. Default: every record.
   */
  filter?: DecodeFilter;
}

const DEFAULT_CHUNK = 16 << 20;
const PAGE = 65536;

class Feeder {
  pending = 0;
  fileOffset = 0;
  /** The core stopped before the input ended (memory exhausted: only then does it stop early). */
  stoppedEarly = false;
  constructor(readonly core: CoreExports) {}

  /** Copies `chunk` into the staging area, letting the core take whole buffers as it fills. */
  push(chunk: Uint8Array): void {
    const core = this.core;
    let pos = 0;
    while (pos < chunk.length && !core.isDone()) {
      const cap = core.stagingCap();
      if (this.pending === cap) {
        this.step(false);
        if (this.pending === cap && !core.isDone()) core.growStaging(Math.max(cap * 2, core.wantBytes()), this.pending);
        continue;
      }
      const n = Math.min(cap - this.pending, chunk.length - pos);
      new Uint8Array(core.memory.buffer, core.stagingPtr() + this.pending, n).set(chunk.subarray(pos, pos + n));
      this.pending += n;
      pos += n;
    }
  }

  step(atEnd: boolean): void {
    const rest = this.core.consume(this.pending, this.fileOffset, atEnd ? 1 : 0);
    this.fileOffset += this.pending - rest;
    this.pending = rest;
  }

  /**
   * The input has ended: the whole buffers left first, then (told it is the end) whatever remains,
   * so that a stop among whole buffers shows as one before the end.
   */
  end(): void {
    if (!this.core.isDone()) this.step(false);
    if (this.core.isDone()) this.stoppedEarly = true;
    else this.step(true);
  }
}

function asBytes(input: Uint8Array | ArrayBuffer): Uint8Array {
  return input instanceof Uint8Array ? input : new Uint8Array(input);
}

function* slices(bytes: Uint8Array, size: number): Iterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, Math.min(bytes.length, i + size));
}

/** Memory pages for `options.memoryLimit` (0: no limit beyond MEMORY_MAX_PAGES). */
function memoryPages(limit: number | undefined): number {
  if (limit === undefined) return 0;
  if (typeof limit !== "number" || !(limit >= C.MEMORY_MIN_PAGES * PAGE)) {
    throw new RangeError(`etw-wasm: memoryLimit must be at least ${C.MEMORY_MIN_PAGES * PAGE} bytes (1 MiB), not ${String(limit)}`);
  }
  const pages = Math.floor(Math.min(limit, C.MEMORY_MAX_PAGES * PAGE) / PAGE);
  return pages >= C.MEMORY_MAX_PAGES ? 0 : pages;
}

export async function decodeTrace(input: Input, options: DecodeOptions = {}): Promise<TraceData> {
  const engine = options.engine ?? "wasm";
  if (engine !== "wasm" && engine !== "js") throw new TypeError(`unknown engine: ${String(engine)}`);
  const pages = memoryPages(options.memoryLimit);
  const filter = encodeFilter(options.filter);
  const core = engine === "js" ? (await import("../core/index.js")).createJsCore() : await instantiateCore(options.wasm, pages || undefined);
  // The size of the input when it is known without reading it all.
  const given = options.inputSize;
  if (given !== undefined && !(Number.isSafeInteger(given) && given >= 0)) {
    throw new RangeError(`etw-wasm: inputSize must be a whole number of bytes, not ${String(given)}`);
  }
  let size: number | undefined = given;
  if (typeof Blob !== "undefined" && input instanceof Blob) {
    size = input.size;
    input = blobChunks(input);
  }
  const whole = input instanceof Uint8Array || input instanceof ArrayBuffer ? asBytes(input) : undefined;
  if (whole) size = whole.length;
  let staging = options.chunkBytes ?? DEFAULT_CHUNK;
  // Under a memory limit the staging area takes an eighth of it at most.
  if (pages) staging = Math.min(staging, (pages * PAGE) >>> 3);
  // Small inputs get a small staging area; a larger buffer grows it on demand.
  if (whole) staging = Math.max(64 << 10, Math.min(staging, whole.length));
  core.init(staging, pages);
  if (filter) {
    new Uint8Array(core.memory.buffer, core.filterPtr(), C.FILTER_BYTES).set(filter);
    core.setFilter();
  }
  const feeder = new Feeder(core);
  let read = 0;
  let failure: unknown;
  try {
    // (a staging area the memory could not hold leaves the core done: no slice is taken)
    const source = whole ? slices(whole, Math.max(1, core.stagingCap())) : (input as Iterable<Uint8Array> | AsyncIterable<Uint8Array>);
    // for await takes plain iterables too
    for await (const chunk of source as AsyncIterable<Uint8Array> | Iterable<Uint8Array>) {
      if (!core.isDone()) feeder.push(chunk);
      read += chunk.length;
      options.onProgress?.(read);
      // Once the core is done, a stream of unknown length is read on, only to count its bytes.
      if (core.isDone() && size !== undefined) break;
    }
    feeder.end();
  } catch (error) {
    // A trap leaves the rows written so far intact.
    failure = error;
  }
  if (core.fatalCode()) throw formatError(core.fatalCode(), core.fatalOffset());
  let clr: ClrFill = { dir: 0, rows: 0, expected: 0 };
  if (!failure && options.clrTables !== false) {
    try {
      clr = fillClrTables(core);
    } catch (error) {
      failure = error;
    }
  }
  try {
    core.finish(); // frees the staging area
  } catch (error) {
    failure ??= error;
  }
  const data = collect(core, size ?? read, clr);
  if (engine === "wasm" && !failure && !pages) data.release = () => recycleMemory(core.memory as WebAssembly.Memory);
  if (failure) {
    if (data.eventCount === 0) throw new EtlDecodeError(feeder.fileOffset, `decoding failed: ${String(failure)}`, { cause: failure });
    data.decodeError = new EtlDecodeError(feeder.fileOffset, `decoding stopped: ${String(failure)}`, { cause: failure });
  }
  judge(data, feeder, clr, pages);
  if (data.eventCount === 0 && data.incomplete?.reason === "capacity") {
    throw new EtlDecodeError(data.incomplete.offset, `decoding failed: ${limitText(pages)} before the first buffer was decoded`);
  }
  return data;
}

/** "8 MiB", "1.5 GiB", or bytes. */
function sizeText(bytes: number): string {
  for (const [unit, n] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]] as const) {
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
function judge(data: TraceData, feeder: Feeder, clr: ClrFill, pages: number): void {
  data.decodedBytes = data.inputBytes;
  const limit = limitText(pages);
  const stop = (reason: TraceIncomplete["reason"], offset: number, message: string, decoded = offset) => {
    data.incomplete = { reason, offset, message };
    data.decodedBytes = decoded;
  };
  if (data.decodeError) {
    stop("decode-error", data.decodeError.offset, data.decodeError.message.replace(/^decoding stopped: /, "").replace(/ \(at byte offset \d+\)$/, ""));
    return;
  }
  const warnings = readWarnings(data);
  const capacity = warnings.find((w) => w.code === C.W_CAPACITY);
  const dropped = data.warningTotal > data.warningCount && data.warningCount < C.MAX_WARNINGS;
  const last = data.bufferCount > 0 ? readBuffer(data, data.bufferCount - 1) : undefined;
  if (capacity || dropped || feeder.stoppedEarly) {
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
    stop("truncated-buffer", last.fileOffset,
      `the input ends inside the buffer at byte offset ${last.fileOffset} (${present} of its ${last.bufferSize} bytes); its complete records are kept`,
      data.inputBytes);
    return;
  }
  const v = new DataView(data.bytes.buffer, data.bytes.byteOffset);
  const lh = data.logfileOffset;
  const mode = v.getUint32(lh + C.LH_LOG_FILE_MODE, true);
  const written = v.getUint32(lh + C.LH_BUFFERS_WRITTEN, true);
  const sequential = (mode & (C.LOG_FILE_MODE_CIRCULAR | C.LOG_FILE_MODE_APPEND | C.LOG_FILE_MODE_NEWFILE)) === 0;
  const explained = warnings.some((w) => w.code === C.W_BAD_BUFFER_SIZE || w.code === C.W_SKIPPED_BYTES);
  if (sequential && written > data.bufferCount && !explained) {
    stop("missing-buffers", data.inputBytes,
      `only ${data.bufferCount} of the ${written} buffers the logfile header counts (BuffersWritten) are in the input`);
    return;
  }
  if (clr.rows < clr.expected) {
    stop("capacity", data.inputBytes,
      `${limit} while filling the typed .NET runtime tables: ${clr.rows} of their ${clr.expected} rows placed`, data.inputBytes);
  }
}

/** The typed tables' directory and rows placed, and the rows that belong in them. */
interface ClrFill {
  dir: number;
  rows: number;
  expected: number;
}

/** Hands the field programs to the core and lets it fill the typed tables (memory may still grow here). */
function fillClrTables(core: CoreExports): ClrFill {
  const d = new Uint32Array(core.memory.buffer, core.directory(), C.DIR_SLOTS);
  const nProv = d[C.DIR_PROV_COUNT];
  const provBytes = new Uint8Array(core.memory.buffer, d[C.DIR_PROV_TABLE], nProv * C.PROV_STRIDE).slice();
  const provClr = new Int8Array(nProv);
  for (let i = 0; i < nProv; i++) provClr[i] = clrProviderIndex(formatGuid(provBytes, i * C.PROV_STRIDE + C.PROV_GUID));
  if (!provClr.some((x) => x >= 0)) return { dir: 0, rows: 0, expected: 0 };
  const { words, typeStarts, lookup } = clrProgram();
  // The rows that belong in typed tables, by event type (the core's own test, assembly/clr.ts typeOf).
  let expected = 0;
  const types = new DataView(core.memory.buffer, d[C.DIR_TYPE_TABLE], d[C.DIR_TYPE_COUNT] * C.TYPE_STRIDE);
  for (let t = 0; t < d[C.DIR_TYPE_COUNT]; t++) {
    const at = t * C.TYPE_STRIDE;
    const p = provClr[types.getUint16(at + C.TYPE_PROVIDER, true)] ?? -1;
    const ht = types.getUint8(at + C.TYPE_HEADER_TYPE);
    const id = types.getUint16(at + C.TYPE_EVENT_ID, true);
    if (p < 0 || (ht !== C.HT_EVENT_HEADER32 && ht !== C.HT_EVENT_HEADER64) || id >= C.CLR_MAX_ID) continue;
    const version = Math.min(types.getUint16(at + C.TYPE_VERSION, true), C.CLR_VERSIONS - 1);
    if (lookup[(p * C.CLR_MAX_ID + id) * C.CLR_VERSIONS + version] >= 0) expected += types.getUint32(at + C.TYPE_ROWS, true);
  }
  const blocks: number[] = [];
  const put = (src: ArrayBufferView) => {
    const at = core.alloc(Math.max(8, src.byteLength));
    if (at !== 0) {
      new Uint8Array(core.memory.buffer, at, src.byteLength).set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength));
      blocks.push(at);
    }
    return at;
  };
  const program = put(words);
  const starts = put(typeStarts);
  const table = put(lookup);
  const prov = put(provClr);
  const dir = core.alloc(typeStarts.length * C.CLR_DIR_STRIDE);
  // memory exhausted: no typed tables
  const ready = program !== 0 && starts !== 0 && table !== 0 && prov !== 0 && dir !== 0;
  const rows = ready ? core.decodeClr(program, starts, typeStarts.length, table, prov, nProv, dir) : 0;
  for (const at of blocks) core.free(at);
  return { dir: ready ? dir : 0, rows, expected };
}

/** Wraps the core's tables. Called once decoding is over: the memory never grows after this. */
function collect(core: CoreExports, inputBytes: number, clr: ClrFill): TraceData {
  const buffer = core.memory.buffer;
  const d = new Uint32Array(buffer, core.directory(), C.DIR_SLOTS);
  const n = d[C.DIR_ROW_COUNT];
  const nExt = d[C.DIR_EXT_COUNT];
  return {
    bytes: new Uint8Array(buffer),
    eventCount: n,
    events: {
      timestamp: new BigInt64Array(buffer, d[C.DIR_TIMESTAMP], n),
      keywords: new BigUint64Array(buffer, d[C.DIR_KEYWORDS], n),
      pid: new Uint32Array(buffer, d[C.DIR_PID], n),
      tid: new Uint32Array(buffer, d[C.DIR_TID], n),
      payloadOffset: new Uint32Array(buffer, d[C.DIR_PAYLOAD_OFFSET], n),
      payloadLength: new Uint16Array(buffer, d[C.DIR_PAYLOAD_LENGTH], n),
      headerLength: new Uint16Array(buffer, d[C.DIR_HEADER_LENGTH], n),
      provider: new Uint16Array(buffer, d[C.DIR_PROVIDER], n),
      eventId: new Uint16Array(buffer, d[C.DIR_EVENT_ID], n),
      task: new Uint16Array(buffer, d[C.DIR_TASK], n),
      flags: new Uint16Array(buffer, d[C.DIR_FLAGS], n),
      processor: new Uint16Array(buffer, d[C.DIR_PROCESSOR], n),
      version: new Uint16Array(buffer, d[C.DIR_VERSION], n),
      opcode: new Uint8Array(buffer, d[C.DIR_OPCODE], n),
      level: new Uint8Array(buffer, d[C.DIR_LEVEL], n),
      headerType: new Uint8Array(buffer, d[C.DIR_HEADER_TYPE], n),
      channel: new Uint8Array(buffer, d[C.DIR_CHANNEL], n),
      eventType: new Uint16Array(buffer, d[C.DIR_EVENT_TYPE], n),
    },
    extCount: nExt,
    ext: {
      row: new Uint32Array(buffer, d[C.DIR_EXT_ROW], nExt),
      type: new Uint16Array(buffer, d[C.DIR_EXT_TYPE], nExt),
      size: new Uint16Array(buffer, d[C.DIR_EXT_SIZE], nExt),
      offset: new Uint32Array(buffer, d[C.DIR_EXT_OFFSET], nExt),
    },
    bufferCount: d[C.DIR_BUF_COUNT],
    buffersOffset: d[C.DIR_BUF_TABLE],
    warningCount: d[C.DIR_WARN_COUNT],
    warningTotal: d[C.DIR_WARN_TOTAL],
    warningsOffset: d[C.DIR_WARN_TABLE],
    providerCount: d[C.DIR_PROV_COUNT],
    providersOffset: d[C.DIR_PROV_TABLE],
    typesOffset: d[C.DIR_TYPE_TABLE],
    typeCount: d[C.DIR_TYPE_COUNT],
    logfileOffset: d[C.DIR_LOGFILE],
    arenaBytes: core.arenaBytes(),
    clrDirOffset: clr.dir,
    clrRows: clr.rows,
    inputBytes,
    decodedBytes: inputBytes,
  };
}

export { C as codes };
