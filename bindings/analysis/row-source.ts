// The rows of an event table as an analysis reads them in time order, from the table's columns: what
// each event type is to the analysis (its kind, looked up once per type), each row's entry in its typed
// .NET table (the values the core read while it had the record at hand, where a payload read now is a
// cache miss a row), and one row view for the values still read from payloads.

import * as C from "../../assembly/codes.js";
import { EventRow, type EventTable } from "../tables/event-table.js";
import type { ClrTable } from "../tables/clr-tables.js";
import type { ClrEventSchema } from "../schema/clr-schema-types.js";

/** What an analysis makes of event types and their typed tables. */
export interface RowKinds<T> {
  /** What an event type is to the analysis: 0 nothing, at most 254. */
  kindOf(schema: ClrEventSchema | undefined): number;
  /** A reader of a typed table of `kind` (null: its values come from payloads; never asked of a kind `typedKind` refuses). */
  readerOf(table: ClrTable, kind: number): T | null;
  /** Whether rows of `kind` are read from typed tables at all. */
  typedKind(kind: number): boolean;
}

const UNKNOWN = 255;

export class RowSource<T> {
  private readonly kinds: Uint8Array;
  /** Each event type's typed table and reader (null: none), looked up once. */
  private readonly typedOf: ({ table: ClrTable; reader: T } | null | undefined)[] = [];
  /** Each row's entry in its typed table (-1: none), for the typed kinds; made on first use. */
  private entryOf?: Int32Array;
  private readonly row: EventRow;
  private readonly pid: Uint32Array;
  private readonly tid: Uint32Array;
  private readonly flags: Uint16Array;
  private readonly eventType: Uint16Array;
  /** The entry typed() found. */
  entry = -1;

  constructor(
    readonly table: EventTable,
    /** The trace's typed .NET tables (none: every value from payloads). */
    private readonly typedTables: readonly ClrTable[],
    private readonly by: RowKinds<T>,
  ) {
    this.kinds = new Uint8Array(table.typeValues().version.length).fill(UNKNOWN);
    this.row = new EventRow(table, -1);
    const c = table.columns;
    this.pid = c.pid;
    this.tid = c.tid;
    this.flags = c.flags;
    this.eventType = c.eventType;
  }

  kind(i: number): number {
    const k = this.eventType[i];
    if (k >= this.kinds.length) return this.by.kindOf(this.table.clrSchema(i));
    const v = this.kinds[k];
    return v !== UNKNOWN ? v : (this.kinds[k] = this.by.kindOf(this.table.clrSchema(i)));
  }

  /**
   * Row i's reader of its typed table (the row of `kind`), its entry in `entry`; null where its values
   * come from its payload: no typed entry, one cut short (the payload reads what is there), or no reader.
   */
  typed(i: number, kind: number): T | null {
    if (!this.typedTables.length || !this.by.typedKind(kind)) return null;
    const k = this.eventType[i];
    let t = this.typedOf[k];
    if (t === undefined) {
      const schema = this.table.clrSchema(i);
      const table = schema && this.typedTables.find((x) => x.schema === schema);
      const reader = table ? this.by.readerOf(table, kind) : null;
      t = this.typedOf[k] = table && reader ? { table, reader } : null;
    }
    if (!t) return null;
    const e = (this.entryOf ??= this.entries())[i];
    if (e < 0 || t.table.truncated[e]) return null;
    this.entry = e;
    return t.reader;
  }

  private entries(): Int32Array {
    const out = new Int32Array(this.table.length).fill(-1);
    for (const t of this.typedTables) {
      if (!this.by.typedKind(this.by.kindOf(t.schema))) continue;
      const rows = t.rows;
      for (let j = 0; j < rows.length; j++) out[rows[j]] = j;
    }
    return out;
  }

  /** The row's process id (0 when its header has none), and thread id likewise. */
  pidOf(i: number): number {
    return this.flags[i] & C.F_NO_PROCESS_INFO ? 0 : this.pid[i];
  }
  tidOf(i: number): number {
    return this.flags[i] & C.F_NO_PROCESS_INFO ? 0 : this.tid[i];
  }
  /** The row view, moved to `i` (for what is read from payloads). */
  rowAt(i: number): EventRow {
    this.row.index = i;
    return this.row;
  }
}

/** Each table's RowSource, made once: runs of two batches held come in turn. */
export class RowSources<T> {
  private last?: RowSource<T>;
  private readonly made = new WeakMap<EventTable, RowSource<T>>();
  constructor(private readonly by: RowKinds<T>) {}

  of(table: EventTable, typed: readonly ClrTable[] = []): RowSource<T> {
    if (this.last?.table === table) return this.last;
    let src = this.made.get(table);
    if (!src) this.made.set(table, (src = new RowSource(table, typed, this.by)));
    return (this.last = src);
  }
}
