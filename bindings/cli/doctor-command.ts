// etw-wasm doctor (the trace health check) and the --keywords / --level options of events and convert.

import { doctorJson, formatDoctor, traceDoctor } from "etw-wasm/analysis";
import { parseKeywords, parseLevel, type TraceStream } from "etw-wasm/node";
import { UsageError, type Out } from "./commands.js";

export const DOCTOR_FORMATS = ["text", "json"] as const;
export type DoctorFormat = (typeof DOCTOR_FORMATS)[number];

/** doctor's --format: text (default) or json. */
export function doctorFormat(format: unknown): DoctorFormat {
  const f = (format ?? "text") as string;
  if (!(DOCTOR_FORMATS as readonly string[]).includes(f)) throw new UsageError(`unknown format: ${f} (text or json)`, "doctor");
  return f as DoctorFormat;
}

/** The health check of a stream, batch by batch, written as text lines or one JSON document. */
export async function cmdDoctor(stream: TraceStream, out: Out, format: DoctorFormat): Promise<void> {
  const report = await traceDoctor(stream);
  if (format === "json") {
    await out(JSON.stringify(doctorJson(report), (_, v) => (typeof v === "bigint" ? v.toString() : v), 2));
    return;
  }
  for (const line of formatDoctor(report)) await out(line);
}

/** --keywords: names of the .NET runtime providers' keywords and masks (GC,Loader  0x9  GC+0x8); checked here, applied per batch. */
export function keywordsOption(text: unknown, command: string): string | undefined {
  if (typeof text !== "string") return undefined;
  try {
    parseKeywords(text);
  } catch (e) {
    throw new UsageError(`bad --keywords '${text}': ${(e as Error).message.replace(/^etw-wasm: (keywords: )?/, "")}`, command);
  }
  return text;
}

/** --level: a level name (informational, verbose, ...) or number; events at that level or more severe. */
export function levelOption(text: unknown, command: string): number | undefined {
  if (typeof text !== "string") return undefined;
  try {
    return parseLevel(text);
  } catch (e) {
    throw new UsageError(`bad --level '${text}': ${(e as Error).message.replace(/^etw-wasm: /, "")}`, command);
  }
}
