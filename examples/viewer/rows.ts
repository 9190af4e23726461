// What the event table shows of a row, for the held trace (main.ts) and the streamed one (stream-worker.ts).

import type { Trace } from "etw-wasm/browser";

/** A row's cells: time, name, pid, tid, cpu, bytes, fields. */
export type RowCells = [time: string, name: string, pid: string, tid: string, cpu: string, bytes: string, fields: string];

/** TraceEvent's payload fields of a row (every event kind), once the page has loaded that formatter. */
let payloadFields: ((t: Trace, index: number) => [string, string][]) | undefined;

export function useFieldFormatter(f: (t: Trace, index: number) => [string, string][]): void {
  payloadFields = f;
}

/** A row's fields as name and text: TraceEvent's, once that formatter is here, else the decoded payload's. */
export function rowFields(t: Trace, index: number): [string, string][] {
  if (payloadFields) {
    try {
      return payloadFields(t, index);
    } catch {
      // (a payload the formatter cannot read: its decoded fields, if any)
    }
  }
  const d = t.events.row(index).decode();
  if (!d) return [];
  return d.names.map((n, k) => [
    n,
    typeof d.values[k] === "object" ? JSON.stringify(d.values[k], (_, x) => (typeof x === "bigint" ? String(x) : x)) : String(d.values[k]),
  ]);
}

function fieldsText(t: Trace, index: number): string {
  return rowFields(t, index)
    .map(([n, v]) => `${n}=${v.slice(0, 60)}`)
    .join("; ");
}

/** Row `i` of `t`, named `name`, as the table shows it. */
export function rowCells(t: Trace, i: number, name: string): RowCells {
  const row = t.events.row(i);
  return [row.relativeMSec.toFixed(3), name, String(row.pid ?? ""), String(row.tid ?? ""), String(row.processor), String(row.payloadLength), fieldsText(t, i)];
}
