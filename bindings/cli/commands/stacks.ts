// etw-wasm stacks: events of one name with their call stacks, frames named, leaf first; or as folded
// stacks weighed by a payload field or by the time from a Start to its Stop.

import { attachStacks, streamWeightedStacks } from "etw-wasm/analysis";
import type { EventRow, Trace, TraceStream, WhereCondition } from "etw-wasm/node";
import { FORMAT, READS_TRACE, UsageError, wholeNumber, whereOption, type Values } from "../args.js";
import { traceCommand, type TraceRun } from "../command.js";
import { say } from "../io.js";
import { selectEvents } from "../tables.js";

interface StacksPlan {
  format: "text" | "jsonl" | "folded";
  event: string;
  pid: number | undefined;
  tid: number | undefined;
  where: readonly WhereCondition[] | undefined;
  /** folded: the payload field each event weighs (else 1), or "duration" (a Start to its Stop). */
  weight: string | undefined;
  /** --weight duration: the field that pairs a Stop with its Start (else the thread). */
  pairBy: string | undefined;
  invert: boolean;
}

function stacksOptions(values: Values): StacksPlan {
  const format = (values.format ?? "text") as string;
  if (format !== "text" && format !== "jsonl" && format !== "folded") throw new UsageError(`unknown format: ${format} (text, jsonl or folded)`, "stacks");
  if (typeof values.event !== "string") throw new UsageError("stacks needs --event NAME (e.g. Windows Kernel/PerfInfo/Sample)", "stacks");
  const weight = typeof values.weight === "string" ? values.weight : undefined;
  if ((weight !== undefined || values.invert === true) && format !== "folded") throw new UsageError("--weight and --invert go with --format folded", "stacks");
  if (weight !== undefined && !/^[A-Za-z_][\w.]*$/.test(weight))
    throw new UsageError(`bad --weight '${weight}': a payload field's name, e.g. AllocationAmount, or duration`, "stacks");
  const pairBy = typeof values["pair-by"] === "string" ? values["pair-by"] : undefined;
  if (pairBy !== undefined && weight !== "duration") throw new UsageError("--pair-by goes with --weight duration", "stacks");
  return {
    format,
    event: values.event,
    pid: wholeNumber(values, "pid", "a process id", 0, 0xffffffff, "stacks"),
    tid: wholeNumber(values, "tid", "a thread id", 0, 0xffffffff, "stacks"),
    where: whereOption(values.where, "stacks"),
    weight,
    pairBy,
    invert: values.invert === true,
  };
}

/**
 * stacks --format folded: the events' stacks as collapsed stacks, each weighing 1 or its payload field,
 * in one pass over the batches (memory bounded by the events picked and the distinct stacks).
 */
async function foldedStacks(stream: TraceStream, plan: StacksPlan, out: TraceRun): Promise<void> {
  const duration = plan.weight === "duration" ? { by: plan.pairBy } : undefined;
  const field = duration ? undefined : plan.weight;
  let missing = 0;
  const weight =
    field === undefined
      ? undefined
      : (row: EventRow) => {
          const v = row.get(field);
          if (typeof v === "number" || typeof v === "bigint") return Number(v);
          missing++;
          return NaN;
        };
  const select = (t: Trace) => selectEvents(t, { event: plan.event, pid: plan.pid, tid: plan.tid, where: plan.where });
  const w = await streamWeightedStacks(stream, { select, weight, duration, invert: plan.invert });
  if (!w.events)
    throw new UsageError(
      `no event ${plan.event} in this trace${plan.pid !== undefined || plan.tid !== undefined || plan.where ? " with those filters" : ""}`,
      "stacks",
    );
  for (const [stack, n] of w.stacks) await out.line(`${stack} ${n}`);
  // (what was left out, on stderr: stdout is the folded text)
  const unit = duration ? "ms from Start to Stop" : field ? `of ${field}` : "";
  say(
    `${w.withStacks} of ${w.events} events with stacks${unit ? `${duration ? " and a Stop" : ""}, ${w.total} ${unit} in all` : ""}${missing ? `; ${missing} without a numeric ${field}, left out` : ""}`,
  );
}

/** stacks: the events of one name with their stacks, frames named. */
async function cmdStacks(trace: Trace, plan: StacksPlan, out: TraceRun): Promise<void> {
  const rows = selectEvents(trace, { event: plan.event, pid: plan.pid, tid: plan.tid, where: plan.where, timeOrder: true });
  // (no row: say so rather than print nothing)
  if (!rows.length)
    throw new UsageError(
      `no event ${plan.event} in this trace${plan.pid !== undefined || plan.tid !== undefined || plan.where ? " with those filters" : ""}`,
      "stacks",
    );

  for await (const e of eventStacks(trace, rows)) {
    if (plan.format === "jsonl") {
      await out.line(JSON.stringify(e));
      continue;
    }
    await out.line(`${e.timeMSec.toFixed(3)} ${e.name} pid=${e.pid ?? ""} tid=${e.tid ?? ""}${e.stack ? "" : " (no stack)"}`);
    for (const f of e.stack ?? []) await out.line(`    ${f}`);
  }
}

/** Events named `event` (as `events --event`), each with its stack's frames leaf first (row.callStack). */
async function* eventStacks(
  trace: Trace,
  rows: Uint32Array,
): AsyncGenerator<{ row: number; name: string; timeMSec: number; pid: number | null; tid: number | null; stack: string[] | null }> {
  attachStacks(trace);
  for (const row of trace.events.cursor(rows)) {
    yield { row: row.index, name: row.name, timeMSec: row.relativeMSec, pid: row.pid, tid: row.tid, stack: row.callStack };
  }
}

export const stacks = traceCommand({
  name: "stacks",
  help: `  stacks FILE --event NAME       events with their call stacks, frames named, leaf first
      --format text|jsonl|folded text (default): an event line, then its frames; jsonl: one object each;
                                 folded: collapsed stacks (root;...;leaf weight), heaviest first, for
                                 flame graph tools: where allocations, contention or waits come from
      --weight FIELD             folded: each event weighs its payload field (e.g. AllocationAmount);
                                 default 1 per event. --weight duration: a Start event (--event
                                 Contention/Start) weighs the milliseconds to its Stop on its thread
      --pair-by FIELD            --weight duration: a Stop ends the Start with the same FIELD (TaskID)
      --invert                   folded: leaf first (the callee view: who is called, then by whom)
      --pid N  --tid N  --where COND   only this process / thread / events whose fields pass`,
  options: {
    ...READS_TRACE,
    ...FORMAT,
    event: { type: "string" },
    pid: { type: "string" },
    tid: { type: "string" },
    where: { type: "string" },
    weight: { type: "string" },
    invert: { type: "boolean" },
    "pair-by": { type: "string" },
  },
  operand: "FILE",
  plan: stacksOptions,
  // (folded stacks in one pass over the batches; the others name frames from a trace held whole)
  streams: (plan) => plan.format === "folded",
  stream: foldedStacks,
  whole: cmdStacks,
});
