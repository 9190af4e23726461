// A trace (or several) converted to a directory of tables, batch by batch: events, one table per
// .NET runtime event, processes and providers, as Parquet or Arrow IPC files. Each batch of the
// stream becomes a record batch (Arrow) or goes into the current row group (Parquet), so memory
// stays bounded at any input size.

import type { Trace } from "../trace.js";
import type { TraceBatch, TraceStream } from "../stream.js";
import type { ProcessTable } from "../tables/processes.js";
import { FRESH_ARRAYS, PooledArrays, pick, type ExportArrays, type ExportBatch, type ExportField } from "./columns.js";
import { EVENT_FIELDS, SOURCE_FILE_FIELD, eventBatch } from "./event-columns.js";
import { clrBatch, clrExportSchema, clrTablePath } from "./clr-columns.js";
import { PROCESS_FIELDS, PROVIDER_FIELDS, processBatch, providerBatch } from "./side-tables.js";
import { ArrowStreamWriter } from "./arrow.js";
import { concatBytes } from "../decode/result/trace-data.js";
import { ParquetBatches, ParquetStreamWriter, loadParquetWasm, type ParquetInputEncoder, type ParquetSettings, type ParquetWasmSource } from "./parquet.js";

/** Where a table's bytes go: appended in order, then closed. */
export interface TableSink {
  write(bytes: Uint8Array): Promise<void>;
  /** Writes chunks in order as if joined (Arrow hands out its chunks without joining them where a sink has this). */
  writev?(chunks: Uint8Array[]): Promise<void>;
  /**
   * Resolves once every write so far is done with the bytes it was given (a sink that keeps writes in
   * flight: a converter then reuses the memory of the batches written).
   */
  settled?(): Promise<void>;
  close(): Promise<void>;
}

export type ExportFormat = "parquet" | "arrow";

/** A table written batch by batch in either format. */
export interface TableWriter {
  write(batch: ExportBatch): Promise<void>;
  /**
   * Resolves once no batch written so far is read any more (its arrays may be reused); undefined when
   * that cannot be known (a sink holding Arrow's chunks, which view the batch's arrays, without `settled`).
   */
  settled?(): Promise<void> | undefined;
  finish(): Promise<void>;
}

/** Where Parquet files are encoded, when not on this thread (etw-wasm/export's Node entry has ParquetWorkers). */
export interface ParquetEncoders {
  /** An encoder of one file of `fields`, its bytes handed to `sink` in order; undefined: encode this one on this thread. */
  open(fields: readonly ExportField[], sink: (bytes: Uint8Array) => Promise<void>, settings?: ParquetSettings): ParquetInputEncoder | undefined;
}

/**
 * A writer of `fields` into `sink` (Parquet: parquet-wasm is loaded on first use; with `encoders`, it
 * encodes there).
 */
export async function tableWriter(
  format: ExportFormat,
  fields: readonly ExportField[],
  sink: TableSink,
  parquetWasm?: ParquetWasmSource,
  settings: ParquetSettings = {},
  encoders?: ParquetEncoders,
): Promise<TableWriter> {
  if (format === "arrow") {
    const w = new ArrowStreamWriter(fields);
    // (the chunks view the batch's columns, which no one writes again: a sink may keep them in flight)
    const put = (chunks: Uint8Array[]) => (!chunks.length ? undefined : sink.writev ? sink.writev(chunks) : sink.write(concatBytes(chunks)));
    return {
      write: async (b) => put(w.chunks(b)),
      // (chunks joined into one array by `put` are a copy: the batch is not read after)
      settled: () => (!sink.writev ? Promise.resolve() : sink.settled?.()),
      finish: async () => {
        await put(w.finishChunks());
        await sink.close();
      },
    };
  }
  const remote = encoders?.open(fields, (bytes) => sink.write(bytes), settings);
  const w = remote
    ? new ParquetBatches(remote, fields)
    : new ParquetStreamWriter(await loadParquetWasm(parquetWasm), fields, (bytes) => sink.write(bytes), settings);
  return {
    write: (b) => w.write(b),
    // (the batch is in its input, a copy, when `write` resolves)
    settled: () => Promise.resolve(),
    finish: async () => {
      await w.finish();
      await sink.close();
    },
  };
}

/** Rows of `batch` where `keep` is 1. */
export function filterBatch(batch: ExportBatch, keep: Uint8Array, arrays: ExportArrays = FRESH_ARRAYS): ExportBatch {
  let n = 0;
  for (let i = 0; i < batch.length; i++) n += keep[i];
  if (n === batch.length) return batch;
  const take = arrays.take(Uint32Array, n);
  for (let i = 0, k = 0; i < batch.length; i++) if (keep[i]) take[k++] = i;
  return { length: n, columns: batch.columns.map((c) => ({ ...c, values: pick(c.values, take, arrays), valid: c.valid && pick(c.valid, take, arrays) })) };
}

/** Adds each row's provider to `counts` (by its event type: the provider column is not made). */
function countProviders(counts: Float64Array, e: Trace["events"], rows: Uint32Array | null): void {
  const byType = e.typeValues().provider,
    eventType = e.columns.eventType;
  const n = rows ? rows.length : e.length;
  for (let i = 0; i < n; i++) {
    const r = rows ? rows[i] : i;
    const t = eventType[r];
    counts[t < byType.length ? byType[t] : e.typeFieldOf("provider", r)]++;
  }
}

export interface ConvertOptions {
  format: ExportFormat;
  /** Opens the sink of a table at a path relative to the output ("events.parquet", "Microsoft-Windows-DotNETRuntime/GC/Start.parquet"). */
  open(path: string): Promise<TableSink>;
  /** Adds a `sourceFile` column to every table (for several files converted together). */
  sourceFiles?: boolean;
  /** parquet-wasm's `.wasm`, where the default location does not serve (see loadParquetWasm). */
  parquetWasm?: ParquetWasmSource;
  /** Parquet: rows per row group at most (default 262,144; each row group has min/max statistics of the time columns). */
  rowGroupRows?: number;
  /** Parquet: the format version written (ParquetSettings.version: 1 by default; 2 about halves the files). */
  parquetVersion?: 1 | 2;
  /** Parquet: encode the files there (e.g. ParquetWorkers, in Node) instead of on this thread. */
  parquetEncoders?: ParquetEncoders;
}

export interface ConvertedTable {
  path: string;
  rows: number;
}

/**
 * Writes traces into one set of tables. `add` each trace's stream (with its process table, for
 * process names; and which rows of each batch to keep), then `finish`.
 */
export class TraceConverter {
  private readonly writers = new Map<string, { writer: Promise<TableWriter>; rows: number }>();
  private readonly ext: string;

  constructor(private readonly options: ConvertOptions) {
    this.ext = options.format === "parquet" ? ".parquet" : ".arrow";
  }

  private fields(base: readonly ExportField[]): readonly ExportField[] {
    return this.options.sourceFiles ? [...base, SOURCE_FILE_FIELD] : base;
  }

  /** Writes a batch of a table; resolves with its writer once the writer has it. */
  private async write(path: string, fields: readonly ExportField[], batch: ExportBatch): Promise<TableWriter> {
    let w = this.writers.get(path);
    if (!w) {
      const { format, parquetWasm, rowGroupRows, parquetVersion, parquetEncoders } = this.options;
      const settings = { rowGroupRows, version: parquetVersion };
      w = {
        writer: this.options.open(path + this.ext).then((sink) => tableWriter(format, this.fields(fields), sink, parquetWasm, settings, parquetEncoders)),
        rows: 0,
      };
      this.writers.set(path, w);
    }
    w.rows += batch.length;
    const writer = await w.writer;
    await writer.write(batch);
    return writer;
  }

  /** Appends `file`'s column (its name in every row) when several files go together. */
  private withSource(batch: ExportBatch, sourceFile: string, arrays: ExportArrays = FRESH_ARRAYS): ExportBatch {
    if (!this.options.sourceFiles) return batch;
    return { length: batch.length, columns: [...batch.columns, { values: arrays.take(Int32Array, batch.length), dictionary: [sourceFile] }] };
  }

  /**
   * Converts one trace. `processes`: its process table (process names of the events; the processes
   * table). `select`: the rows of each batch to keep (default all; typed rows follow their events).
   */
  async add(
    stream: TraceStream,
    source: { processes: ProcessTable; sourceFile?: string | ((batch: TraceBatch) => string); select?: (batch: Trace) => Uint32Array },
  ): Promise<void> {
    // (a session's batches each name their own file; its processes and providers are the session's: "")
    const named = source.sourceFile;
    const whole = typeof named === "string" ? named : "";
    let counts = new Float64Array(0);
    for await (const batch of stream) {
      const file = typeof named === "function" ? named(batch) : whole;
      const rows = source.select ? source.select(batch) : null;
      // (each batch's arrays from memory earlier batches were written from, given back once its writes are done)
      const arrays = new PooledArrays();
      const used = new Set<TableWriter>();
      used.add(
        await this.write(
          "events",
          EVENT_FIELDS,
          this.withSource(eventBatch(batch, rows, { firstRow: batch.firstRow, processes: source.processes, arrays }), file, arrays),
        ),
      );
      if (counts.length < batch.providers.length) {
        const grown = new Float64Array(batch.providers.length);
        grown.set(counts);
        counts = grown;
      }
      countProviders(counts, batch.events, rows);
      let keep: Uint8Array | undefined;
      if (rows) {
        keep = new Uint8Array(batch.events.length);
        for (const r of rows) keep[r] = 1;
      }
      for (const name of new Set(batch.tables.map((t) => t.name))) {
        let b = clrBatch(batch, name, batch.firstRow, arrays);
        if (!b) continue;
        if (keep) {
          const rowCol = b.columns[0].values as Uint32Array;
          b = filterBatch(
            b,
            Uint8Array.from(rowCol, (r) => keep![r - batch.firstRow]),
            arrays,
          );
          if (!b.length) continue;
        }
        used.add(await this.write(clrTablePath(name), clrExportSchema(name).fields, this.withSource(b, file, arrays)));
      }
      const settled = [...used].map((w) => w.settled?.());
      // (a write that fails is reported by finish; its arrays are then let go, not reused)
      if (settled.every((p) => p !== undefined))
        Promise.all(settled).then(
          () => arrays.release(),
          () => undefined,
        );
    }
    const end = stream.end!;
    await this.write("processes", PROCESS_FIELDS, this.withSource(processBatch(source.processes, end.clock), whole));
    await this.write("providers", PROVIDER_FIELDS, this.withSource(providerBatch(end.providers, counts), whole));
  }

  /** Ends every table; resolves with each table's path and rows once all are written. */
  async finish(): Promise<ConvertedTable[]> {
    const out: ConvertedTable[] = [];
    for (const [path, w] of this.writers) {
      await (await w.writer).finish();
      out.push({ path: path + this.ext, rows: w.rows });
    }
    return out.sort((a, b) => a.path.localeCompare(b.path));
  }
}
