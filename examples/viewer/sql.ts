// The viewer's SQL panel: DuckDB-WASM (its worker and .wasm served beside the viewer in duckdb/, this
// chunk loaded when the panel is first used) over the trace's tables, handed over as Arrow IPC (made
// here for a held trace, batch by batch by the stream worker for a streamed one: sql-tables.ts):
// events, processes, providers and a table per .NET runtime event (GC_Start, GC_AllocationTick, ...).

import * as duckdb from "@duckdb/duckdb-wasm";
import type { Trace } from "etw-wasm/browser";
import { rowTables, sideTables, type SqlPart } from "./sql-tables.js";

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

/** The tables loaded (of a held trace, or of a streamed one: its stream worker), and the connection they are in. */
let loaded: { of: object; conn: duckdb.AsyncDuckDBConnection; tables: string[] } | undefined;
/** The connection of tables still loading (a streamed trace's, batch by batch), closed when another trace's begin. */
let loading: duckdb.AsyncDuckDBConnection | undefined;

/**
 * Tables of `of` loaded part by part: a part makes its table, or appends its rows to the table
 * an earlier part made (the batches of a streamed trace). `done` makes them the tables queried.
 */
export class TableLoader {
  private readonly tables: string[] = [];
  private constructor(
    private readonly of: object,
    private readonly conn: duckdb.AsyncDuckDBConnection,
  ) {}

  static async begin(of: object): Promise<TableLoader> {
    const d = await db();
    // (one trace's tables at a time: those loaded, or still loading, go)
    const before = [loaded?.conn, loading];
    loaded = undefined;
    loading = undefined;
    for (const conn of before) await conn?.close().catch(() => undefined);
    const conn = (loading = await d.connect());
    return new TableLoader(of, conn);
  }

  async put(parts: readonly SqlPart[]): Promise<void> {
    for (const [name, bytes] of parts) {
      const create = !this.tables.includes(name);
      if (create) {
        await this.conn.query(`DROP TABLE IF EXISTS "${name}"`);
        this.tables.push(name);
      }
      await this.conn.insertArrowFromIPCStream(bytes, { name, create });
    }
  }

  done(): string[] {
    if (loading === this.conn) loading = undefined;
    loaded = { of: this.of, conn: this.conn, tables: this.tables };
    return this.tables;
  }
}

/** The held trace's tables in DuckDB (made once per trace): their names. */
export async function loadTrace(t: Trace): Promise<string[]> {
  if (loaded?.of === t) return loaded.tables;
  const loader = await TableLoader.begin(t);
  await loader.put(rowTables(t));
  const counts = new Float64Array(t.providers.length);
  const provider = t.events.columns.provider;
  for (let i = 0; i < provider.length; i++) counts[provider[i]]++;
  await loader.put(sideTables(t.processes, t.clock, t.providers, counts));
  return loader.done();
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
  const text = (v: unknown): string =>
    v === null || v === undefined
      ? ""
      : v instanceof Date
        ? v.toISOString()
        : typeof v === "object"
          ? JSON.stringify(v, (_, x) => (typeof x === "bigint" ? String(x) : x))
          : String(v);
  const n = Math.min(table.numRows, most);
  const vectors = table.schema.fields.map((_, k) => table.getChildAt(k)!);
  // (DuckDB's Arrow gives times as milliseconds since 1970)
  const isTime = columns.map((c) => /^Timestamp|^Date/.test(c.type));
  for (let r = 0; r < n; r++)
    rows.push(
      vectors.map((v, k) => {
        const x = v.get(r);
        return isTime[k] && x !== null && x !== undefined ? new Date(Number(x)).toISOString() : text(x);
      }),
    );
  let series: SqlResult["series"];
  if (columns.length >= 2 && /^Timestamp|^Date/.test(columns[0].type) && /Int|Float|Decimal/.test(columns[1].type)) {
    const x: number[] = [],
      y: number[] = [];
    for (let r = 0; r < table.numRows; r++) {
      const t = vectors[0].get(r),
        v = vectors[1].get(r);
      if (t === null || v === null) continue;
      x.push(t instanceof Date ? t.getTime() : Number(t));
      y.push(Number(v));
    }
    series = { x, y };
  }
  return { columns, rows, total: table.numRows, series };
}
