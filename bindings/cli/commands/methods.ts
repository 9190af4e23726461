// etw-wasm methods: the methods loaded per process, from JIT loads and rundown.

import type { EventRow, TraceStream } from "etw-wasm/node";
import { FOLLOW, FORMAT, READS_TRACE, tableFormat } from "../args.js";
import { traceCommand } from "../command.js";
import { fixed3, writeTable } from "../write-table.js";

const RUNTIME = "Microsoft-Windows-DotNETRuntime";
const RUNDOWN = "Microsoft-Windows-DotNETRuntimeRundown";

/**
 * The events the methods command reads, taken out of their batch (a few fields each),
 * and put in time order at the end: the order of the time-ordered event table (timestamp, then
 * processor, then file order), whatever batches they came in.
 */
class TimedEvents<T> {
  private readonly list: { ts: bigint; processor: number; row: number; key: string; value: T }[] = [];

  add(r: EventRow, row: number, key: string, value: T): void {
    this.list.push({ ts: r.timestamp, processor: r.processor, row, key, value });
  }

  ordered(): { ts: bigint; key: string; value: T }[] {
    return this.list.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.processor - b.processor || a.row - b.row));
  }
}

/** The rows of `provider` batch by batch, each with the index of its batch's first row. */
async function* streamRows(stream: TraceStream, provider: string[]): AsyncIterable<{ rows: Iterable<EventRow>; firstRow: number }> {
  for await (const b of stream) if (provider.some((p) => b.providers.find(p).length)) yield { rows: b.query({ provider }), firstRow: b.firstRow };
}

const METHOD_COLUMNS = ["pid", "process", "method", "signature", "startAddress", "size", "token", "flags", "source", "timeMs"];

/** Methods loaded per process: JIT loads (Method/LoadVerbose) and rundown (Method/DCStartVerbose, DCStopVerbose). */
async function methodRows(stream: TraceStream, processName: (pid: number, timestamp: bigint) => string): Promise<Record<string, unknown>[]> {
  const events = new TimedEvents<Record<string, unknown>>();
  // (per schema event, looked at once: whether it names a method's code, and its source)
  const sources = new Map<object, string | null>();
  for await (const { rows: list, firstRow } of streamRows(stream, [RUNTIME, RUNDOWN])) {
    for (const r of list) {
      const s = r.clrSchema;
      if (!s) continue;
      let source = sources.get(s);
      if (source === undefined) {
        const named = s.fields.some((f) => f.name === "MethodSignature") && s.fields.some((f) => f.name === "MethodStartAddress");
        sources.set(s, (source = named ? s.name.split("/").slice(1).join("/") : null));
      }
      if (source === null) continue;
      const pid = r.pid ?? 0;
      const address = r.get("MethodStartAddress") as bigint;
      const ns = String(r.get("MethodNamespace") ?? "");
      events.add(r, firstRow + r.index, `${pid}:${address}:${r.get("MethodName")}`, {
        pid,
        process: "",
        method: ns ? `${ns}.${r.get("MethodName")}` : String(r.get("MethodName")),
        signature: r.get("MethodSignature"),
        startAddress: "0x" + address.toString(16),
        size: r.get("MethodSize"),
        token:
          "0x" +
          Number(r.get("MethodToken") ?? 0)
            .toString(16)
            .padStart(8, "0"),
        flags: r.getDisplay("MethodFlags") ?? "",
        source,
        timeMs: Number(fixed3(r.relativeMSec)),
      });
    }
  }
  const rows: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const { ts, key, value: row } of events.ordered()) {
    if (seen.has(key)) continue; // rundown repeats methods already loaded
    seen.add(key);
    row.process = processName(row.pid as number, ts);
    rows.push(row);
  }
  rows.sort((a, b) => (a.pid as number) - (b.pid as number) || (a.timeMs as number) - (b.timeMs as number));
  return rows;
}

export const methods = traceCommand({
  name: "methods",
  help: "  methods FILE [--format F]      methods loaded per process (table default, csv, json, jsonl)",
  options: { ...READS_TRACE, ...FORMAT, ...FOLLOW },
  operand: "FILE",
  filter: { provider: [RUNTIME, RUNDOWN] },
  plan: (values) => tableFormat(values, "methods"),
  streams: () => true,
  namesAtEnd: true,
  async stream(stream, format, run) {
    const processes = await run.processes();
    const name = (pid: number, ts: bigint) => processes.processName(pid, ts);
    await writeTable((l) => run.line(l), format, METHOD_COLUMNS, await methodRows(stream, name));
  },
});
