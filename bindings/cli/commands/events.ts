// etw-wasm events: the records, one per line (jsonl, json, csv, an aligned table, TraceEvent's names, or
// the text of PerfView's baselines), picked by provider, name, process, thread, keywords, level, time
// and payload conditions.

import { perfViewLines, isTraceLogBookkeeping, eventPipeBaselineLines } from "etw-wasm/perfview";
import {
  inTimeOrder,
  eventNameParts,
  ManifestCollector,
  setTraceManifests,
  streamTraceFile,
  type EventRow,
  type Trace,
  type TraceManifests,
  type TraceStream,
} from "etw-wasm/node";
import { FILTERS, FOLLOW, FORMAT, READS_TRACE, UsageError, eventFilters, type EventFilters, type TableFormat, type Values } from "../args.js";
import { traceCommand, type TraceRun } from "../command.js";
import { EVENT_COLUMNS, eventJsonLine, eventRecord, selectEvents, writeEventCsv } from "../tables.js";
import { Lines, writeTable } from "../write-table.js";

const RECORD_FORMATS = ["jsonl", "json", "csv", "table", "names"];
/** The formats written batch by batch (a table and perfview's lines need the whole trace). */
const STREAMED_FORMATS = ["jsonl", "csv", "json", "names"];
const EVENT_FILTERS = ["provider", "event", "pid", "tid", "keywords", "level", "where", "from", "to", "time-order"];
const PERFVIEW_ONLY = ["edition", "no-container-id"];
const NAMES_ONLY = ["tracelog"];

interface EventsPlan {
  format: "jsonl" | "json" | "csv" | "table" | "perfview" | "names";
  /** names: leave out what TraceLog drops. */
  tracelog: boolean;
  filters: EventFilters;
  edition: "current" | "2020";
  containerId: boolean;
}

/** The events command's options, checked before the trace is read. */
function eventsPlan(values: Values): EventsPlan {
  const format = (values.format ?? "jsonl") as string;
  if (format !== "perfview" && !RECORD_FORMATS.includes(format)) {
    throw new UsageError(`unknown format: ${format} (jsonl, json, csv, table, perfview or names)`, "events");
  }
  const given = (names: string[]) => names.filter((k) => values[k] !== undefined);
  if (format === "perfview") {
    const misplaced = given(EVENT_FILTERS);
    if (misplaced.length)
      throw new UsageError(`--${misplaced[0]} does not apply to --format perfview (PerfView's text covers every event, in time order)`, "events");
  } else {
    const misplaced = given(PERFVIEW_ONLY);
    if (misplaced.length) throw new UsageError(`--${misplaced[0]} applies to --format perfview only`, "events");
  }
  if (format !== "names" && given(NAMES_ONLY).length) throw new UsageError("--tracelog applies to --format names only", "events");
  const edition = (values.edition ?? "current") as string;
  if (edition !== "current" && edition !== "2020") throw new UsageError(`unknown --edition: ${edition} (current or 2020)`, "events");
  const filters = eventFilters(values, "events", "to");
  // (names: TraceEvent's lists are in time order)
  if (format === "names") filters.timeOrder = true;
  if (values.follow === true && !STREAMED_FORMATS.includes(format)) {
    throw new UsageError(`--follow reads batch by batch: events --format ${format} needs the whole trace (jsonl, csv, json or names follow)`, "events");
  }
  return { format: format as EventsPlan["format"], filters, edition, containerId: values["no-container-id"] !== true, tracelog: values.tracelog === true };
}

async function cmdEvents(trace: Trace, plan: EventsPlan, out: TraceRun): Promise<void> {
  if (plan.format === "perfview") {
    // an EventPipe file: the lines of PerfView's EventPipe baselines (one per name, its first event as XML)
    const lines =
      trace.eventPipeVersion !== undefined ? eventPipeBaselineLines(trace) : perfViewLines(trace, { edition: plan.edition, containerId: plan.containerId });
    for (const line of lines) await out.line(line);
    return;
  }
  const rows = selectEvents(trace, plan.filters);
  if (plan.format === "jsonl") {
    for (const row of trace.events.cursor(rows)) {
      const p = out.line(eventJsonLine(row));
      if (p) await p;
    }
    return;
  }
  const processOf = (row: EventRow) => (row.pid === null ? "" : trace.processName(row.index));
  if (plan.format === "csv") {
    const lines = csvLines(out);
    for (const row of trace.events.cursor(rows)) {
      const p = writeEventCsv(lines, row, row.index, processOf(row));
      if (p) await p;
    }
    return lines.flush();
  }
  const records = function* () {
    for (const row of trace.events.cursor(rows)) yield eventRecord(row, row.index, processOf(row));
  };
  await writeTable((l) => out.line(l), plan.format as TableFormat, EVENT_COLUMNS, plan.format === "table" ? [...records()] : records());
}

/** events in file order (jsonl, csv, json), batch by batch. */
async function streamEvents(stream: TraceStream, plan: EventsPlan, out: TraceRun): Promise<void> {
  const named = plan.format !== "jsonl" || plan.filters.event !== undefined;
  // Names can come from descriptions the trace carries after the events they name, and csv and json
  // name each event's process: first passes gather the descriptions (every batch scanned, none kept)
  // and the processes (the kernel's Process and Thread events only, through a decode-time filter).
  let manifests: TraceManifests | undefined;
  if (named && !out.following) {
    const collector = new ManifestCollector();
    for await (const b of await streamTraceFile(out.input, { ...out.options, onProgress: undefined })) collector.scan(b.events);
    manifests = collector.result;
  }
  const processes = plan.format === "jsonl" || plan.format === "names" ? undefined : await out.processes();
  const { filters } = plan;
  const select = (t: Trace): Uint32Array => {
    if (manifests) setTraceManifests(t.events, manifests);
    // a provider not seen yet has no rows in this batch (providers keep their index from batch to batch)
    if (filters.provider !== undefined && !t.providers.find(filters.provider).length) return new Uint32Array(0);
    return selectEvents(t, { ...filters, timeOrder: false });
  };
  // runs of rows of one batch each: batch by batch in file order, or merged in time order across batches
  async function* runs(): AsyncGenerator<{ trace: Trace; firstRow: number; rows: Uint32Array; rowNumbers?: Float64Array }> {
    // (every format writes a run's rows out before asking for the next: a batch need not be copied while it is
    // the stream's, and what is left of it after that is copied alone)
    if (filters.timeOrder) yield* inTimeOrder(stream, { select, release: true, keep: "rows" });
    else for await (const batch of stream) yield { trace: batch, firstRow: batch.firstRow, rows: select(batch) };
    if (filters.provider !== undefined && !stream.end!.providers.find(filters.provider).length) {
      throw new UsageError(`no provider ${filters.provider} in this trace`, "events");
    }
  }
  if (plan.format === "jsonl") {
    for await (const { trace, rows } of runs()) {
      for (const row of trace.events.cursor(rows)) {
        const p = out.line(eventJsonLine(row));
        if (p) await p;
      }
    }
    return;
  }
  if (plan.format === "names") {
    for await (const { trace, rows } of runs()) {
      for (const row of trace.events.cursor(rows)) if (!plan.tracelog || !isTraceLogBookkeeping(row)) await out.line(eventNameParts(row).event);
    }
    return;
  }
  /** A run's rows, each with its number in the whole trace and its process's name (the row a cursor: read it before the next). */
  function* runRows(run: {
    trace: Trace;
    firstRow: number;
    rows: Uint32Array;
    rowNumbers?: Float64Array;
  }): Generator<{ row: EventRow; index: number; process: string }> {
    const { trace, firstRow, rows, rowNumbers } = run;
    let k = 0;
    // (a process whose name is the same at every time named once a run, not looked up at each row's time)
    const fixed = new Map<number, string | undefined>();
    const at = { row: undefined as unknown as EventRow, index: 0, process: "" };
    for (const row of trace.events.cursor(rows)) {
      const pid = row.pid;
      let process = "";
      if (pid !== null) {
        let f = fixed.get(pid);
        if (f === undefined && !fixed.has(pid)) fixed.set(pid, (f = processes!.fixedName(pid)));
        process = f ?? processes!.processName(pid, row.timestamp);
      }
      at.row = row;
      // (a run of rows copied alone numbers them itself)
      at.index = rowNumbers ? rowNumbers[k++] : firstRow + row.index;
      at.process = process;
      yield at;
    }
  }
  if (plan.format === "csv") {
    const lines = csvLines(out);
    for await (const run of runs()) {
      for (const { row, index, process } of runRows(run)) {
        const p = writeEventCsv(lines, row, index, process);
        if (p) await p;
      }
    }
    return lines.flush();
  }
  async function* records(): AsyncGenerator<Record<string, unknown>> {
    for await (const run of runs()) for (const { row, index, process } of runRows(run)) yield eventRecord(row, index, process);
  }
  await writeTable((l) => out.line(l), plan.format as TableFormat, EVENT_COLUMNS, records());
}

/** Lines of events --format csv to the command's output, the header written. */
function csvLines(out: TraceRun): Lines {
  const lines = new Lines((text) => out.line(text));
  lines.add(EVENT_COLUMNS.join(","));
  return lines;
}

export const events = traceCommand({
  name: "events",
  help: `  events FILE... [options]       the records, one per line
      --format F                 jsonl (default) | json | csv | table | perfview | names
      --provider P               provider name or GUID          --event NAME   e.g. GC/Start
      --pid N  --tid N           process / thread id
      --keywords K               keyword names of the .NET runtime providers or masks, e.g. GC,Loader or
                                 0x9: events with any of those bits (a name: its provider's bits)
      --level L                  events at this level or more severe: a number or a name (critical,
                                 error, warning, informational, verbose)
      --from MS  --to MS         time range in milliseconds since the trace started
      --where COND               conditions on payload fields, joined by 'and': = != < <= > >= (numbers),
                                 = != (a value map's name or text), ~ /regex/i, in (a, b); e.g.
                                 --event GC/AllocationTick --where 'AllocationAmount > 85000'
      --time-order               time order instead of file order
      perfview: the text of PerfView's *.baseline.txt (EVENT lines for the first 5 events of each
      name in time order, then COUNT lines); --edition=2020 for mid-2020 TraceEvent payload names,
      --no-container-id to leave out the ContainerID clause. For an EventPipe file, the text of
      PerfView's EventPipe baselines: per name, its count and its first event as TraceEvent's XML
      names: TraceEvent's EventName (Task/Opcode) of each event in time order; --tracelog leaves out
      the events TraceLog drops when it converts a trace (stack walks, thread rundown, file names,
      method rundown, idle CPU samples), so the list compares with TraceEvent's own`,
  options: {
    ...READS_TRACE,
    ...FORMAT,
    ...FOLLOW,
    ...FILTERS,
    to: { type: "string" },
    "time-order": { type: "boolean" },
    edition: { type: "string" },
    "no-container-id": { type: "boolean" },
    tracelog: { type: "boolean" },
  },
  operand: "FILE",
  plan: eventsPlan,
  streams: (plan) => STREAMED_FORMATS.includes(plan.format),
  stream: streamEvents,
  whole: cmdEvents,
});
