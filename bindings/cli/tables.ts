// The rows of events and convert picked by their filters, and events as flat records (written in the
// tabular formats by write-table.ts).

import { filterWhere, type EventRow, type QueryFilter, type Trace } from "etw-wasm/node";
import { UsageError, type EventFilters } from "./args.js";
import { fixed4, type Lines } from "./write-table.js";

/** The rows an `events` command prints: the query API, then the event-name filter, then the payload conditions, each on the survivors. */
export function selectEvents(trace: Trace, f: EventFilters): Uint32Array {
  const q: QueryFilter = { order: f.timeOrder ? "time" : "file" };
  if (f.provider !== undefined) {
    if (!trace.providers.find(f.provider).length) throw new UsageError(`no provider ${f.provider} in this trace`, "events");
    q.provider = f.provider;
  }
  if (f.pid !== undefined) q.pid = f.pid;
  if (f.tid !== undefined) q.tid = f.tid;
  if (f.from !== undefined) q.from = f.from;
  if (f.to !== undefined) q.to = f.to;
  if (f.keywords !== undefined) q.keywords = f.keywords;
  if (f.level !== undefined) q.level = f.level;
  const named = selectByName(trace, trace.query(q).indices, f.event);
  return f.where ? filterWhere(trace.events, named, f.where) : named;
}

/** `rows` whose event name is `event` (or ends in "/event"), any case; all of them without one. */
function selectByName(trace: Trace, rows: Uint32Array, event: string | undefined): Uint32Array {
  if (event === undefined) return rows;
  const want = event.toLowerCase();
  const matches = (name: string) => {
    const n = name.toLowerCase();
    return n === want || n.endsWith("/" + want);
  };
  // Rows of one event type share their name: test each type once (0 untested, 1 match, 2 no match).
  const { names } = trace;
  const types = trace.events.eventType;
  const verdict = new Uint8Array(trace.eventTypes.length);
  return rows.filter((i) => {
    const t = types[i];
    if (t >= verdict.length) return matches(names.ofRow(i));
    if (verdict[t] === 0) {
      const name = names.ofType(t);
      if (name === null) return matches(names.ofRow(i));
      verdict[t] = matches(name) ? 1 : 2;
    }
    return verdict[t] === 1;
  });
}

export const EVENT_COLUMNS = ["row", "timeMs", "name", "pid", "tid", "process", "processor", "headerType", "payloadLength", "fields"];

/** A number as JSON.stringify writes it. */
const jsonNumber = (v: number | null) => (v !== null && Number.isFinite(v) ? String(v) : "null");

/**
 * JSON.stringify(row.toJSON()), the line of events --format jsonl, written as text (JSON.stringify of each
 * row's object was 40% of the command's time): every value is a number, null, a list of numbers or text
 * made of digits, letters and dashes, which JSON writes as it is; a provider's text anyway goes through
 * JSON.stringify, once a provider.
 */
export function eventJsonLine(row: EventRow): string {
  const j = row.toJSON();
  if (j.provider !== lastProvider) lastProviderJson = JSON.stringify((lastProvider = j.provider));
  return (
    `{"headerType":${jsonNumber(j.headerType)},"provider":${lastProviderJson}` +
    (j.group === undefined ? "" : `,"group":${jsonNumber(j.group)}`) +
    `,"eventId":${jsonNumber(j.eventId)},"version":${jsonNumber(j.version)},"opcode":${jsonNumber(j.opcode)},"level":${jsonNumber(j.level)}` +
    `,"task":${jsonNumber(j.task)},"keywords":"${j.keywords}","pid":${jsonNumber(j.pid)},"tid":${jsonNumber(j.tid)}` +
    `,"processor":${jsonNumber(j.processor)},"timestamp":"${j.timestamp}","payloadLength":${jsonNumber(j.payloadLength)}` +
    `,"extTypes":[${j.extTypes.map(jsonNumber).join(",")}]}`
  );
}
let lastProvider = "";
let lastProviderJson = '""';

/**
 * The csv line of an event (EVENT_COLUMNS) into `lines`, as writeTable writes its eventRecord: numbers as
 * String writes them, a null as nothing, text quoted where it must be (a record and a cell at a time, through
 * a generator a row, were most of events --format csv). A promise when the lines went out.
 */
export function writeEventCsv(lines: Lines, row: EventRow, index: number, process: string): Promise<void> | void {
  const d = row.decode();
  const pid = row.pid,
    tid = row.tid;
  lines.text(`${index},${fixed4(row.relativeMSec)},`);
  lines.csvCell(row.name);
  lines.text(`,${pid ?? ""},${tid ?? ""},`);
  lines.csvCell(process);
  lines.text(`,${row.processor},`);
  lines.csvCell(row.headerTypeName);
  lines.text(`,${row.payloadLength},`);
  if (d) writeFieldsCsv(lines, d.names, d.values);
  else lines.text("{}");
  return lines.end();
}

/**
 * fieldsJson as a CSV cell, written piece by piece (the one string of it, made of a piece a field, cost
 * more to read again than to write): quoted, as a field's name is, but for no fields.
 */
function writeFieldsCsv(lines: Lines, names: readonly string[], values: readonly unknown[]): void {
  let first = true;
  for (let k = 0; k < names.length; k++) {
    const json = fieldJson(values[k]);
    if (json === undefined) continue;
    lines.text(first ? '"{' : ",");
    first = false;
    lines.text(csvFieldName(names[k]));
    lines.quotesDoubled(json);
  }
  lines.text(first ? "{}" : '}"');
}

/** A field's name as writeFieldsCsv writes it: its JSON, quotes doubled, and the ':' (made once a name). */
function csvFieldName(name: string): string {
  let s = csvFieldNames.get(name);
  if (s === undefined) csvFieldNames.set(name, (s = JSON.stringify(name).replaceAll('"', '""') + ":"));
  return s;
}
const csvFieldNames = new Map<string, string>();

/** A field's value as fieldsJson writes it; undefined for one JSON leaves out. */
function fieldJson(v: unknown): string | undefined {
  if (typeof v === "number" || typeof v === "string" || typeof v === "boolean") return JSON.stringify(v);
  if (typeof v === "bigint") return `"${v}"`;
  if (v instanceof Uint8Array) return `"${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex")}"`;
  return JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x));
}

/** One event as a flat record for table, csv and json output: `index` in the whole trace, `process` its name. */
export function eventRecord(row: EventRow, index: number, process: string): Record<string, unknown> {
  const d = row.decode();
  return {
    row: index,
    timeMs: Number(row.relativeMSec.toFixed(4)),
    name: row.name,
    pid: row.pid,
    tid: row.tid,
    process,
    processor: row.processor,
    headerType: row.headerTypeName,
    payloadLength: row.payloadLength,
    fields: d ? fieldsJson(d.names, d.values) : "{}",
  };
}

/**
 * The fields as one JSON object: bigints as decimal strings, a byte array as hex, as JSON.stringify
 * with a replacer writes them; numbers and strings written directly (a replacer, called for every
 * value, was most of a CSV line's cost).
 */
function fieldsJson(names: readonly string[], values: readonly unknown[]): string {
  let out = "{";
  for (let k = 0; k < names.length; k++) {
    const json = fieldJson(values[k]);
    if (json === undefined) continue; // (as JSON.stringify leaves out a field it cannot write)
    out += (out.length === 1 ? "" : ",") + JSON.stringify(names[k]) + ":" + json;
  }
  return out + "}";
}
