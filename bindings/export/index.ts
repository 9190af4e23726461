// etw-wasm/export: tables as Arrow IPC and Parquet, in Node and in browsers. A separate entry, so
// that the Arrow and Parquet libraries load only where exports are made.

import { Trace } from "../trace.js";
import type { ClrTable } from "../tables/clr-tables.js";
import type { QueryResult } from "../tables/query.js";
import type { ExportBatch, ExportField } from "./columns.js";
import { EVENT_FIELDS, eventBatch } from "./event-columns.js";
import { clrBatch, clrExportSchema } from "./clr-columns.js";
import { ArrowStreamWriter } from "./arrow.js";
import { tableWriter } from "./convert.js";
import type { ParquetWasmSource } from "./parquet.js";
import { concatBytes } from "../decode/result/trace-data.js";

export type { ColumnType, ExportArrays, ExportBatch, ExportColumn, ExportField, NumberArray, NumberArrayType } from "./columns.js";
export { EVENT_FIELDS, SOURCE_FILE_FIELD, eventBatch, type EventContext } from "./event-columns.js";
export { clrBatch, clrExportSchema, clrTablePath, type ClrExportSchema } from "./clr-columns.js";
export { PROCESS_FIELDS, PROVIDER_FIELDS, processBatch, providerBatch } from "./side-tables.js";
export { ArrowStreamWriter, arrowBatch, arrowSchema } from "./arrow.js";
export {
  ParquetStreamWriter,
  loadParquetWasm,
  setDefaultParquetWasm,
  type ParquetInputEncoder,
  type ParquetSettings,
  type ParquetWasmSource,
} from "./parquet.js";
export { MissingPackageError } from "./optional-package.js";
export {
  TraceConverter,
  tableWriter,
  filterBatch,
  type ConvertOptions,
  type ConvertedTable,
  type ExportFormat,
  type ParquetEncoders,
  type TableSink,
  type TableWriter,
} from "./convert.js";

/**
 * What to export: a trace's event table (every row), some of its rows (a query's result or row
 * indices), or a typed .NET table (by TraceEvent name or the table; every version of the event).
 */
export type ExportSource = Trace | { trace: Trace; rows: QueryResult | Uint32Array } | { trace: Trace; table: string | ClrTable };

/** The fields and rows of an export source. */
export function exportTable(source: ExportSource): { fields: readonly ExportField[]; batch: ExportBatch } {
  if (source instanceof Trace) return { fields: EVENT_FIELDS, batch: eventBatch(source, null, { firstRow: 0 }) };
  if ("rows" in source) {
    const rows = source.rows instanceof Uint32Array ? source.rows : source.rows.indices;
    return { fields: EVENT_FIELDS, batch: eventBatch(source.trace, rows, { firstRow: 0 }) };
  }
  const name = typeof source.table === "string" ? source.table : source.table.name;
  const schema = clrExportSchema(name);
  return { fields: schema.fields, batch: clrBatch(source.trace, name, 0) ?? { length: 0, columns: [] } };
}

/** Arrow IPC bytes (stream format) of an export source: DuckDB-wasm, Arrow JS, pyarrow and Polars read them. */
export function toArrowIPC(source: ExportSource): Uint8Array {
  const { fields, batch } = exportTable(source);
  const w = new ArrowStreamWriter(fields);
  return concatBytes([batch.length ? w.write(batch) : new Uint8Array(0), w.finish()]);
}

/** Parquet bytes of an export source. */
export async function toParquet(source: ExportSource, options: { parquetWasm?: ParquetWasmSource } = {}): Promise<Uint8Array> {
  const { fields, batch } = exportTable(source);
  const parts: Uint8Array[] = [];
  const w = await tableWriter("parquet", fields, { write: async (b) => void parts.push(b.slice()), close: async () => undefined }, options.parquetWasm);
  if (batch.length) await w.write(batch);
  await w.finish();
  return concatBytes(parts);
}
