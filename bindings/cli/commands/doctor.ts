// etw-wasm doctor: the trace health check, as text lines or one JSON document.

import { doctorJson, formatDoctor, traceDoctor } from "etw-wasm/analysis";
import { FOLLOW, FORMAT, READS_TRACE, UsageError } from "../args.js";
import { traceCommand } from "../command.js";

const DOCTOR_FORMATS = ["text", "json"] as const;
type DoctorFormat = (typeof DOCTOR_FORMATS)[number];

export const doctor = traceCommand({
  name: "doctor",
  help: `  doctor FILE [--format F]       the trace's health: can jitted and NGen methods be named, are methods
                                 from before the trace covered (rundown), are there stacks and CPU samples,
                                 were events or buffers lost, is the kernel's process and image rundown
                                 there; each gap with the collection settings that fill it (text or json)`,
  options: { ...READS_TRACE, ...FORMAT, ...FOLLOW },
  operand: "FILE",
  /** --format: text (default) or json. */
  plan(values): DoctorFormat {
    const f = (values.format ?? "text") as string;
    if (!(DOCTOR_FORMATS as readonly string[]).includes(f)) throw new UsageError(`unknown format: ${f} (text or json)`, "doctor");
    return f as DoctorFormat;
  },
  streams: () => true,
  async stream(stream, format, run) {
    const report = await traceDoctor(stream);
    if (format === "json") {
      await run.line(JSON.stringify(doctorJson(report), (_, v) => (typeof v === "bigint" ? v.toString() : v), 2));
      return;
    }
    for (const line of formatDoctor(report)) await run.line(line);
  },
});
