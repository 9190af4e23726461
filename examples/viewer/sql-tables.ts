// The trace's tables as the SQL panel names them, each as Arrow IPC: made on the page for a held
// trace (sql.ts) and in the stream worker, batch by batch, for a streamed one (stream-worker.ts).
// This chunk has the Arrow library and not DuckDB: the worker loads it without DuckDB.

import type { Trace, ProcessTable } from "etw-wasm/browser";
import {
  ArrowStreamWriter,
  EVENT_FIELDS,
  PROCESS_FIELDS,
  PROVIDER_FIELDS,
  clrBatch,
  clrExportSchema,
  eventBatch,
  processBatch,
  providerBatch,
  type ExportBatch,
  type ExportField,
} from "etw-wasm/export";

/** A .NET runtime event's table name: Task_Opcode for the runtime's events, else the provider's last word first. */
export function sqlTableName(name: string): string {
  const [provider, ...rest] = name.split("/");
  const short = provider === "Microsoft-Windows-DotNETRuntime" ? [] : [provider.replace(/^Microsoft-Windows-DotNET/, "").replace(/\W/g, "")];
  return [...short, ...rest].join("_").replace(/\W/g, "_");
}

/** One table's rows as a whole Arrow IPC stream (schema, dictionaries, a record batch, the end). */
export function tableIpc(fields: readonly ExportField[], batch: ExportBatch): Uint8Array {
  const w = new ArrowStreamWriter(fields);
  const head = batch.length ? w.write(batch) : new Uint8Array(0);
  const tail = w.finish();
  const out = new Uint8Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

/** A table of the panel and its rows of one trace or batch. */
export type SqlPart = [name: string, ipc: Uint8Array];

/**
 * The events and typed .NET tables of `t` (a whole trace, or a batch whose row 0 is row `firstRow`
 * of the trace; `processes`: the trace's process table where `t` is a batch of it).
 */
export function rowTables(t: Trace, firstRow = 0, processes?: ProcessTable): SqlPart[] {
  const parts: SqlPart[] = [["events", tableIpc(EVENT_FIELDS, eventBatch(t, null, { firstRow, processes }))]];
  for (const name of [...new Set(t.tables.map((x) => x.name))].sort()) {
    const b = clrBatch(t, name, firstRow);
    if (b) parts.push([sqlTableName(name), tableIpc(clrExportSchema(name).fields, b)]);
  }
  return parts;
}

/** The processes and providers tables (`counts`: rows per provider index). */
export function sideTables(processes: ProcessTable, clock: Trace["clock"], providers: Trace["providers"], counts: Float64Array): SqlPart[] {
  return [
    ["processes", tableIpc(PROCESS_FIELDS, processBatch(processes, clock))],
    ["providers", tableIpc(PROVIDER_FIELDS, providerBatch(providers, counts))],
  ];
}
