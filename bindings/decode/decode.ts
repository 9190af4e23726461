// Decoding: stream the input through a core's staging area in chunks of whole buffers, then wrap
// its tables as typed-array views. Two cores share this driver and the table layout: the
// WebAssembly one (assembly/) and its pure TypeScript twin (bindings/core/), loaded only when asked for.

import { instantiateCore, recycleMemory, type CoreExports, type WasmSource } from "./loader.js";
import type { TraceData } from "./trace-data.js";
import { EtlDecodeError, formatError } from "./errors.js";
import * as C from "../../assembly/codes.js";
import { clrProgram } from "../schema/clr-program.js";
import { clrProviderIndex } from "../schema/clr-payload.js";
import { formatGuid } from "../schema/guid.js";

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
}

const DEFAULT_CHUNK = 16 << 20;

class Feeder {
  pending = 0;
  fileOffset = 0;
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

  end(): void {
    if (!this.core.isDone()) this.step(true);
  }
}

function asBytes(input: Uint8Array | ArrayBuffer): Uint8Array {
  return input instanceof Uint8Array ? input : new Uint8Array(input);
}

function* slices(bytes: Uint8Array, size: number): Iterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, Math.min(bytes.length, i + size));
}

export async function decodeTrace(input: Input, options: DecodeOptions = {}): Promise<TraceData> {
  const engine = options.engine ?? "wasm";
  if (engine !== "wasm" && engine !== "js") throw new TypeError(`unknown engine: ${String(engine)}`);
  const core = engine === "js" ? (await import("../core/index.js")).createJsCore() : await instantiateCore(options.wasm);
  if (typeof Blob !== "undefined" && input instanceof Blob) input = blobChunks(input);
  const whole = input instanceof Uint8Array || input instanceof ArrayBuffer ? asBytes(input) : undefined;
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK;
  // Small inputs get a small staging area; a larger buffer grows it on demand.
  core.init(whole ? Math.max(64 << 10, Math.min(chunkBytes, whole.length)) : chunkBytes);
  const feeder = new Feeder(core);
  let read = 0;
  let failure: unknown;
  try {
    const source = whole ? slices(whole, core.stagingCap()) : (input as Iterable<Uint8Array> | AsyncIterable<Uint8Array>);
    // for await takes plain iterables too
    for await (const chunk of source as AsyncIterable<Uint8Array> | Iterable<Uint8Array>) {
      feeder.push(chunk);
      read += chunk.length;
      options.onProgress?.(read);
      if (core.isDone()) break;
    }
    feeder.end();
  } catch (error) {
    // A trap (e.g. memory exhausted) leaves the rows written so far intact.
    failure = error;
  }
  if (core.fatalCode()) throw formatError(core.fatalCode(), core.fatalOffset());
  let clr = { dir: 0, rows: 0 };
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
  const data = collect(core, failure ? feeder.fileOffset : read, clr);
  if (engine === "wasm" && !failure) data.release = () => recycleMemory(core.memory as WebAssembly.Memory);
  if (failure) {
    if (data.eventCount === 0) throw new EtlDecodeError(feeder.fileOffset, `decoding failed: ${String(failure)}`, { cause: failure });
    data.decodeError = new EtlDecodeError(feeder.fileOffset, `decoding stopped: ${String(failure)}`, { cause: failure });
  }
  return data;
}

/** Hands the field programs to the core and lets it fill the typed tables (memory may still grow here). */
function fillClrTables(core: CoreExports): { dir: number; rows: number } {
  const d = new Uint32Array(core.memory.buffer, core.directory(), C.DIR_SLOTS);
  const nProv = d[C.DIR_PROV_COUNT];
  const provBytes = new Uint8Array(core.memory.buffer, d[C.DIR_PROV_TABLE], nProv * C.PROV_STRIDE).slice();
  const provClr = new Int8Array(nProv);
  for (let i = 0; i < nProv; i++) provClr[i] = clrProviderIndex(formatGuid(provBytes, i * C.PROV_STRIDE + C.PROV_GUID));
  if (!provClr.some((x) => x >= 0)) return { dir: 0, rows: 0 };
  const { words, typeStarts, lookup } = clrProgram();
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
  return { dir: ready ? dir : 0, rows };
}

/** Wraps the core's tables. Called once decoding is over: the memory never grows after this. */
function collect(core: CoreExports, inputBytes: number, clr: { dir: number; rows: number }): TraceData {
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
  };
}

export { C as codes };
