// etw-wasm info: the trace's logfile header and decoding statistics.

import type { Trace, TraceFile, TraceIncomplete, TraceWarning } from "etw-wasm/node";
import { FOLLOW, READS_TRACE } from "../args.js";
import { percent, traceCommand } from "../command.js";

/** What info prints: a trace's, or a stream's end. */
type Described = {
  info: Trace["info"];
  incomplete?: TraceIncomplete;
  warningTotal: number;
  warnings: readonly TraceWarning[];
  files?: readonly TraceFile[];
  eventPipeVersion?: number;
};

export function infoLines(trace: Described): string[] {
  const i = trace.info;
  const complete = trace.incomplete ? `no (${trace.incomplete.reason} at byte offset ${trace.incomplete.offset}): ${trace.incomplete.message}` : "yes";
  if (trace.eventPipeVersion !== undefined) {
    // an EventPipe file: its Trace object stands for the header (no logger, buffers or boot time)
    const v = trace.eventPipeVersion;
    return [
      ["format", `EventPipe V${v} (${v <= 3 ? ".netperf" : ".nettrace"})`],
      ["start", i.startTime.toISOString()],
      ["end", i.endTime ? i.endTime.toISOString() : "-"],
      ["processors", `${i.numberOfProcessors}`],
      ["pointer size", `${i.pointerSize}`],
      ["clock", `${i.clockName}, ${i.perfFreq} Hz`],
      ["events lost", v <= 3 ? "unknown (a .netperf numbers no events)" : `${i.eventsLost} (by the capture threads' sequence numbers)`],
      ["records", `${i.eventCount}`],
      ["file size", `${i.fileSize}`],
      ["decoded", `${i.decodedBytes} bytes (${percent(i.decodedBytes, i.fileSize)}%)`],
      ["complete", complete],
      ["warnings", `${trace.warningTotal}`],
    ].map(([k, val]) => `${(k + ":").padEnd(15)}${val}`);
  }
  const lines = [
    ["logger", i.loggerName],
    ["log file", i.logFileName],
    ["start", i.startTime.toISOString()],
    ["end", i.endTime ? i.endTime.toISOString() : "(not stopped cleanly)"],
    ["boot", i.bootTime.toISOString()],
    ["OS", `${i.version} build ${i.osBuild}`],
    ["processors", `${i.numberOfProcessors} @ ${i.cpuSpeedMHz} MHz`],
    ["pointer size", `${i.pointerSize} (header record ${i.headerPointerSize * 8}-bit)`],
    ["clock", `${i.clockName}, ${i.perfFreq} Hz, timer resolution ${i.timerResolution}`],
    ["buffer size", `${i.bufferSize}`],
    ["log file mode", `0x${i.logFileMode.toString(16).padStart(8, "0")}`],
    ["buffers", `${i.bufferCount} read (${i.compressedBuffers} compressed), ${i.buffersWritten} written, ${i.buffersLost} lost`],
    ["events lost", `${i.eventsLost}`],
    ["records", `${i.eventCount}`],
    ["file size", `${i.fileSize}`],
    ["decoded", `${i.decodedBytes} bytes (${percent(i.decodedBytes, i.fileSize)}%)`],
    ["complete", complete],
    ["time zone", i.timeZone ? `${i.timeZone.standardName} (bias ${i.timeZone.bias} min)` : "-"],
    ["warnings", `${trace.warningTotal}`],
  ];
  // a session's files: each with its own records, start and clock
  if (trace.files && trace.files.length > 1) {
    trace.files.forEach((f, k) =>
      lines.push([
        `file ${k + 1}`,
        `${f.name}: ${f.rowCount} records, ${f.info.bufferCount} buffers, start ${f.info.startTime.toISOString()}, ${f.info.loggerName || "-"}, clock ${f.clock}${f.complete ? "" : `, incomplete (${f.incomplete!.reason})`}`,
      ]),
    );
  }
  return lines.map(([k, v]) => `${(k + ":").padEnd(15)}${v}`);
}

export const info = traceCommand({
  name: "info",
  help: "  info FILE...                   the trace's logfile header and decoding statistics",
  options: { ...READS_TRACE, ...FOLLOW },
  operand: "FILE",
  plan: () => undefined,
  streams: () => true,
  async stream(stream, _plan, run) {
    for await (const _ of stream) {
      /* counted by the stream */
    }
    const end = stream.end!;
    for (const l of infoLines(end)) await run.line(l);
    for (const w of end.warnings.slice(0, 20)) await run.line(`warning at ${w.offset}: ${w.message}`);
  },
});
