// Export batches as Parquet, with parquet-wasm (the Rust arrow/parquet writer compiled to
// WebAssembly): each batch goes in as an Arrow record batch; row groups of up to ROW_GROUP_ROWS rows
// come out of a file streamed batch by batch. Snappy pages; dictionaries for the string columns only (numbers encode
// faster and about as small without).

import { arrowSchema, oneBatchStream } from "./arrow.js";
import { giveBack, takeBuffer } from "../decode/result/reuse.js";
import type { Schema } from "apache-arrow";
import { VALUE_ARRAYS, type ExportBatch, type ExportField } from "./columns.js";
import { optionalPackage } from "./optional-package.js";

export type ParquetWasm = typeof import("parquet-wasm/esm");

let loaded: Promise<ParquetWasm> | undefined;

/** Where parquet-wasm's `.wasm` comes from: its URL, bytes or a compiled module (default: beside its module). */
export type ParquetWasmSource = string | URL | BufferSource | WebAssembly.Module;

/** Where the `.wasm` comes from when no source is given: set by the Node entry (export/node.ts) to read it from disk. */
let defaultSource: (() => Promise<ParquetWasmSource>) | undefined;

export function setDefaultParquetWasm(source: () => Promise<ParquetWasmSource>): void {
  defaultSource = source;
}

/** Loads parquet-wasm once (from `source`; else Node reads it from node_modules, browsers fetch it beside its module). */
export function loadParquetWasm(source?: ParquetWasmSource): Promise<ParquetWasm> {
  return (loaded ??= (async () => {
    const pw = await optionalPackage("parquet-wasm", "Parquet output", () => import("parquet-wasm/esm"));
    const from = source ?? (await defaultSource?.());
    await pw.default(from === undefined ? undefined : { module_or_path: from });
    return pw;
  })().catch((error) => {
    loaded = undefined;
    throw error;
  }));
}

/** Columns with min/max statistics per row group. */
const TIME_COLUMNS = new Set(["row", "timestamp", "time", "relativeMSec"]);

/** Rows per row group at most: the writer holds a row group's rows until it is full (or the file ends). */
const ROW_GROUP_ROWS = 1 << 18;

/**
 * A batch as parquet-wasm takes it: an Arrow IPC stream of its one record batch, in memory from the
 * pool (decode/result/reuse.ts), which the encoder gives back once parquet-wasm has copied it (a fresh
 * buffer a batch would cost a page fault for every 4 KiB of it).
 */
export function parquetInput(schema: Schema, fields: readonly ExportField[], batch: ExportBatch): Uint8Array {
  const chunks = oneBatchStream(schema, fields, batch);
  const n = chunks.reduce((k, c) => k + c.byteLength, 0);
  const out = new Uint8Array(takeBuffer(n), 0, n);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** What a Parquet file's writer may be asked for. */
export interface ParquetSettings {
  /** Rows per row group at most (default 262,144; each row group has min/max statistics of the time columns). */
  rowGroupRows?: number;
  /**
   * The format version the writer writes (default 1, which every Parquet reader reads). 2 writes data pages
   * of version 2 and delta encodings of numbers: about half the bytes, at the same speed, for readers of version 2.
   */
  version?: 1 | 2;
}

/** The writer's settings for `fields` (not yet built: the benchmark of settings changes some). */
export function writerProperties(
  pw: ParquetWasm,
  fields: readonly ExportField[],
  settings: ParquetSettings = {},
): InstanceType<ParquetWasm["WriterPropertiesBuilder"]> {
  // (statistics only where a reader skips by them: the time columns, rising batch by batch, so a time
  // range reads the row groups it meets; on every column they cost a sixth of the writer's time)
  let props = new pw.WriterPropertiesBuilder()
    .setCompression(pw.Compression.SNAPPY)
    .setStatisticsEnabled(pw.EnabledStatistics.None)
    .setDictionaryEnabled(false)
    .setMaxRowGroupSize(settings.rowGroupRows ?? ROW_GROUP_ROWS)
    .setCreatedBy("etw-wasm");
  if (settings.version === 2) props = props.setWriterVersion(pw.WriterVersion.V2);
  for (const f of fields) {
    if (f.type === "utf8" || f.type === "binary") props = props.setColumnDictionaryEnabled(f.name, true);
    if (TIME_COLUMNS.has(f.name)) props = props.setColumnStatisticsEnabled(f.name, pw.EnabledStatistics.Chunk);
  }
  return props;
}

/**
 * The Parquet encoder of one file: batches in as parquet-wasm's input (parquetInput), one row group
 * each (up to the row group size); bytes out through `sink` in order, as the writer makes them. It
 * runs where parquet-wasm is loaded: this thread (ParquetStreamWriter), or a worker (parquet-workers.ts).
 */
export class ParquetEncoder {
  /** The input handed over and not yet taken by the writer, and who waits for it to be taken. */
  private next?: { ipc: Uint8Array; taken: () => void };
  private wakePull?: () => void;
  private ended = false;
  private readonly done: Promise<void>;
  /** Rejects when the writer has stopped (done or failed): a write waiting then would wait for ever. */
  private readonly stopped: Promise<never>;

  /** `copied`: called with each input once parquet-wasm has copied it (default: its memory goes back to the pool). */
  constructor(
    pw: ParquetWasm,
    fields: readonly ExportField[],
    sink: (bytes: Uint8Array) => Promise<void> | void,
    settings: ParquetSettings = {},
    private readonly copied: (ipc: Uint8Array) => void = (ipc) => giveBack([ipc.buffer]),
  ) {
    const props = writerProperties(pw, fields, settings);
    const source = new ReadableStream(
      {
        pull: async (controller) => {
          while (!this.next && !this.ended) await new Promise<void>((r) => (this.wakePull = r));
          const next = this.next;
          this.next = undefined;
          if (!next) {
            controller.close();
            return;
          }
          // (wasm memory is not the GC's: the table is freed now, the batch by the writer that takes it)
          const table = pw.Table.fromIPCStream(next.ipc);
          const rb = table.recordBatch(0);
          table.free();
          controller.enqueue(rb);
          // (copied into parquet-wasm's memory: the input's is free again)
          this.copied(next.ipc);
          next.taken();
        },
      },
      { highWaterMark: 0 },
    );
    this.done = (async () => {
      const out = await pw.transformParquetStream(source, props.build());
      const reader = out.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await sink(value as Uint8Array);
      }
    })();
    // (a failure is reported by the next write or finish; made once here, as a closure made in write
    // would keep that write's batch alive for as long as the writer lives)
    this.done.catch(() => undefined);
    this.stopped = this.done.then(() => {
      throw new Error("etw-wasm: the Parquet writer stopped");
    });
    this.stopped.catch(() => undefined);
  }

  /** Adds a batch's input; resolves when the writer has taken it. */
  async write(ipc: Uint8Array): Promise<void> {
    const taken = new Promise<void>((resolve) => (this.next = { ipc, taken: resolve }));
    this.wakePull?.();
    await Promise.race([taken, this.stopped]);
  }

  /** Writes the footer; resolves when the last bytes have gone to the sink. */
  async finish(): Promise<void> {
    this.ended = true;
    this.wakePull?.();
    await this.done;
  }
}

/** What takes a file's batches as parquet-wasm's input: a ParquetEncoder here, or one on another thread. */
export interface ParquetInputEncoder {
  /** Hands a batch's input over (its bytes are the encoder's after); resolves when more may be handed over. */
  write(ipc: Uint8Array): Promise<void>;
  /** Ends the file; resolves once its last bytes are out. */
  finish(): Promise<void>;
}

/** A Parquet file's batches: each as `encoder`'s input, one row group each (an empty one adds nothing, unless it is the only one). */
export class ParquetBatches {
  private readonly schema: Schema;
  private written = 0;

  constructor(
    private readonly encoder: ParquetInputEncoder,
    private readonly fields: readonly ExportField[],
  ) {
    this.schema = arrowSchema(fields);
  }

  /** Adds a batch as a row group; resolves when the encoder has taken it. */
  async write(batch: ExportBatch): Promise<void> {
    if (!batch.length && this.written) return;
    this.written++;
    await this.encoder.write(parquetInput(this.schema, this.fields, batch));
  }

  /** Ends the file (a file without rows still has the schema: one empty row group). */
  async finish(): Promise<void> {
    if (!this.written) await this.encoder.write(parquetInput(this.schema, this.fields, { length: 0, columns: this.fields.map((f) => emptyColumn(f)) }));
    await this.encoder.finish();
  }
}

/**
 * A Parquet file written batch by batch on this thread: `write` takes a batch (one row group),
 * `finish` ends it. Bytes come out through `sink` in order, as the writer makes them.
 */
export class ParquetStreamWriter extends ParquetBatches {
  constructor(pw: ParquetWasm, fields: readonly ExportField[], sink: (bytes: Uint8Array) => Promise<void> | void, settings: ParquetSettings = {}) {
    super(new ParquetEncoder(pw, fields, sink, settings), fields);
  }
}

function emptyColumn(f: ExportField): ExportBatch["columns"][number] {
  return { values: new VALUE_ARRAYS[f.type](0), dictionary: f.type === "utf8" || f.type === "binary" ? [] : undefined };
}
