// The viewer's SQL panel: DuckDB-WASM (its worker and .wasm served beside the viewer in duckdb/, this
// chunk loaded when the panel is first used) over the held trace's tables, handed over as Arrow IPC:
// events, processes, providers and a table per .NET runtime event (GC_Start, GC_AllocationTick, ...).

import * as duckdb from "@duckdb/duckdb-wasm";
import type { Trace } from "etw-wasm/browser";
import { ArrowStreamWriter, PROCESS_FIELDS, PROVIDER_FIELDS, processBatch, providerBatch, toArrowIPC, type ExportBatch, type ExportField } from "etw-wasm/export";

let database: Promise<duckdb.AsyncDuckDB> | undefined;

/** DuckDB in its worker, started once. */
function db(): Promise<duckdb.AsyncDuckDB> {
  return (database ??= (async () => {
    const base = new URL("duckdb/", location.href).href;
    const bundle = await duckdb.selectBundle({
      mvp: { mainModule: `${base}duckdb-mvp.wasm`, mainWorker: `${base}duckdb-browser-mvp.worker.js` },
      eh: { mainModule: `${base}duckdb-eh.wasm`, mainWorker: `${base}duckdb-browser-eh.worker.js` },
    });
    const d = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), new Worker(bundle.mainWorker!));
    await d.instantiate(bundle.mainModule, bundle.pthreadWorker);
    return d;
  })().catch((error) => {
    database = undefined;
    throw error;
  }));
}

/** A .NET runtime event's table name: Task_Opcode for the runtime's events, else the provider's last word first. */
export function sqlTableName(name: string): string {
  const [provider, ...rest] = name.split("/");
  const short = provider === "Microsoft-Windows-DotNETRuntime" ? [] : [provider.replace(/^Microsoft-Windows-DotNET/, "").replace(/\W/g, "")];
  return [...short, ...rest].join("_").replace(/\W/g, "_");
}

function ipc(fields: readonly ExportField[], batch: ExportBatch): Uint8Array {
  const w = new ArrowStreamWriter(fields);
  const head = batch.length ? w.write(batch) : new Uint8Array(0);
  const tail = w.finish();
  const out = new Uint8Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

let loaded: { trace: Trace; conn: duckdb.AsyncDuckDBConnection; tables: string[] } | undefined;

/** The trace's tables in DuckDB (made once per trace): their names. */
export async function loadTrace(t: Trace): Promise<string[]> {
  if (loaded?.trace === t) return loaded.tables;
  const d = await db();
  if (loaded) await loaded.conn.close();
  const conn = await d.connect();
  const tables: string[] = [];
  const put = async (name: string, bytes: Uint8Array) => {
    await conn.query(`DROP TABLE IF EXISTS "${name}"`);
    await conn.insertArrowFromIPCStream(bytes, { name, create: true });
    tables.push(name);
  };
  await put("events", toArrowIPC(t));
  await put("processes", ipc(PROCESS_FIELDS, processBatch(t.processes, t.clock)));
  const counts = new Float64Array(t.providers.length);
  const provider = t.events.columns.provider;
  for (let i = 0; i < provider.length; i++) counts[provider[i]]++;
  await put("providers", ipc(PROVIDER_FIELDS, providerBatch(t.providers, counts)));
  for (const name of [...new Set(t.tables.map((x) => x.name))].sort()) await put(sqlTableName(name), toArrowIPC({ trace: t, table: name }));
  loaded = { trace: t, conn, tables };
  return tables;
}

/** A query's result: column names and types, its first rows as text, how many rows in all. */
export interface SqlResult {
  columns: { name: string; type: string }[];
  rows: string[][];
  total: number;
  /** The first column's values as milliseconds and the second's as numbers, where they are a time and a number. */
  series?: { x: number[]; y: number[] };
}

/** Runs `sql` on the loaded trace's tables. */
export async function runSql(sql: string, most = 1000): Promise<SqlResult> {
  if (!loaded) throw new Error("no trace loaded");
  const table = await loaded.conn.query(sql);
  const columns = table.schema.fields.map((f) => ({ name: f.name, type: String(f.type) }));
  const rows: string[][] = [];
  const text = (v: unknown): string => (v === null || v === undefined ? "" : v instanceof Date ? v.toISOString() : typeof v === "object" ? JSON.stringify(v, (_, x) => (typeof x === "bigint" ? String(x) : x)) : String(v));
  const n = Math.min(table.numRows, most);
  const vectors = table.schema.fields.map((_, k) => table.getChildAt(k)!);
  // (DuckDB's Arrow gives times as milliseconds since 1970)
  const isTime = columns.map((c) => /^Timestamp|^Date/.test(c.type));
  for (let r = 0; r < n; r++) rows.push(vectors.map((v, k) => { const x = v.get(r); return isTime[k] && x !== null && x !== undefined ? new Date(Number(x)).toISOString() : text(x); }));
  let series: SqlResult["series"];
  if (columns.length >= 2 && /^Timestamp|^Date/.test(columns[0].type) && /Int|Float|Decimal/.test(columns[1].type)) {
    const x: number[] = [], y: number[] = [];
    for (let r = 0; r < table.numRows; r++) {
      const t = vectors[0].get(r), v = vectors[1].get(r);
      if (t === null || v === null) continue;
      x.push(t instanceof Date ? t.getTime() : Number(t));
      y.push(Number(v));
    }
    series = { x, y };
  }
  return { columns, rows, total: table.numRows, series };
}
