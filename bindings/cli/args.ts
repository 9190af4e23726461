// The command line's words: the options every command that reads a trace takes, and the parsers that
// turn option values into numbers, sizes, filters and formats, each mistake a UsageError (exit 2)
// raised before the trace is read.

import { availableParallelism } from "node:os";
import type { ParseArgsConfig } from "node:util";
import { codes, parseKeywords, parseLevel, parseWhere, WhereSyntaxError, type WhereCondition } from "etw-wasm/node";
import type { TableFormat } from "./write-table.js";

export type OptionSpecs = NonNullable<ParseArgsConfig["options"]>;
/** Option values as util.parseArgs gives them. */
export type Values = Record<string, string | boolean | undefined>;

/** A bad command line (exit code 2); `command` picks the usage lines printed with it. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

export const HELP: OptionSpecs = { help: { type: "boolean", short: "h" } };
/** What every command that reads a trace takes. */
export const READS_TRACE: OptionSpecs = {
  ...HELP,
  "no-progress": { type: "boolean" },
  "max-memory": { type: "string" },
  "batch-size": { type: "string" },
  workers: { type: "string" },
  "merge-all": { type: "boolean" },
};
export const FORMAT: OptionSpecs = { format: { type: "string" } };
/** The commands that read a trace in one pass, batch by batch, can follow a file still being written. */
export const FOLLOW: OptionSpecs = { follow: { type: "boolean" }, "follow-idle": { type: "string" } };
/** The row filters of events and convert (convert ends its time range with --until). */
export const FILTERS: OptionSpecs = {
  provider: { type: "string" },
  event: { type: "string" },
  pid: { type: "string" },
  tid: { type: "string" },
  from: { type: "string" },
  keywords: { type: "string" },
  level: { type: "string" },
  where: { type: "string" },
};

/** "256MiB", "1GiB", "64MB", "1000000" -> bytes. */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(k|m|g|ki|mi|gi)?b?$/i.exec(text.trim());
  if (!m) throw new Error(`not a size: ${text}`);
  const unit = (m[2] ?? "").toLowerCase();
  const mult: Record<string, number> = { "": 1, k: 1e3, m: 1e6, g: 1e9, ki: 1024, mi: 1024 ** 2, gi: 1024 ** 3 };
  return Math.round(Number(m[1]) * mult[unit]);
}

/** A whole number option from `min` to `max` (decimal, or hex with 0x). */
export function wholeNumber(values: Values, name: string, what: string, min: number, max: number, command: string): number | undefined {
  const text = values[name];
  if (typeof text !== "string") return undefined;
  const n = /^(\d+|0x[0-9a-f]+)$/i.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`bad --${name} '${text}': ${what} is a whole number from ${min} to ${max}`, command);
  }
  return n;
}

/** A size option such as 512MiB or 2GiB (as generate's --size), `least` bytes at least. */
function sizeOption(values: Values, command: string, name: string, least: number, leastText: string): number | undefined {
  const text = values[name];
  if (typeof text !== "string") return undefined;
  let bytes: number;
  try {
    bytes = parseSize(text);
  } catch (e) {
    throw new UsageError(`bad --${name} '${text}': ${(e as Error).message} (e.g. 512MiB, 2GiB)`, command);
  }
  if (!(bytes >= least)) throw new UsageError(`bad --${name} '${text}': at least ${leastText}`, command);
  return bytes;
}

/** The decode options of READS_TRACE: --max-memory, --batch-size, --workers. */
export function decodeOptions(values: Values, command: string): { memoryLimit: number | undefined; batchBytes: number | undefined; workers: number } {
  return {
    memoryLimit: sizeOption(values, command, "max-memory", codes.MEMORY_MIN_PAGES * 65536, "1MiB"),
    batchBytes: sizeOption(values, command, "batch-size", 64 << 10, "64KiB"),
    workers: workerCount(values, command),
  };
}

/**
 * --workers: a whole number from 0. By default none on machines of fewer than 4 cores: with the
 * main thread merging, two workers on two cores were measured no faster than one thread alone.
 */
function workerCount(values: Values, command: string): number {
  const text = values.workers;
  if (typeof text !== "string") {
    const cores = availableParallelism();
    return cores >= 4 ? Math.min(cores - 1, 8) : 0;
  }
  if (!/^\d+$/.test(text) || Number(text) > 64) throw new UsageError(`bad --workers '${text}': a whole number from 0 to 64`, command);
  return Number(text);
}

/** A time option: milliseconds since the trace started, not negative. */
function milliseconds(values: Values, name: string, command: string): number | undefined {
  const text = values[name];
  if (typeof text !== "string") return undefined;
  const n = /^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(n)) throw new UsageError(`bad --${name} '${text}': milliseconds since the trace started, 0 or more`, command);
  return n;
}

/** The row filters of events and convert, as selectEvents applies them. */
export interface EventFilters {
  provider?: string;
  event?: string;
  pid?: number;
  tid?: number;
  from?: number;
  to?: number;
  timeOrder?: boolean;
  /** Keyword names and masks (QueryFilter.keywords), e.g. "GC,Loader" or "0x9". */
  keywords?: string;
  /** The least severe level kept (QueryFilter.level). */
  level?: number;
  /** Conditions on payload fields (QueryFilter.where), tested on the rows the other filters keep. */
  where?: readonly WhereCondition[];
}

/** The row filters of events and convert (`toName`: the option that ends the time range). */
export function eventFilters(values: Values, command: string, toName: "to" | "until"): EventFilters {
  const filters: EventFilters = {
    provider: values.provider as string | undefined,
    event: values.event as string | undefined,
    // 0xFFFFFFFF is the event table's "none" (records without a process, e.g. PERFINFO): not a filter value
    pid: wholeNumber(values, "pid", "a process id", 0, 0xfffffffe, command),
    tid: wholeNumber(values, "tid", "a thread id", 0, 0xfffffffe, command),
    from: milliseconds(values, "from", command),
    to: milliseconds(values, toName, command),
    timeOrder: values["time-order"] === true,
    keywords: keywordsOption(values.keywords, command),
    level: levelOption(values.level, command),
    where: whereOption(values.where, command),
  };
  if (filters.from !== undefined && filters.to !== undefined && filters.from > filters.to) {
    throw new UsageError(`--from ${values.from} is after --${toName} ${values[toName]}`, command);
  }
  return filters;
}

/** --where: payload conditions, parsed here so that a mistake is a usage error before the trace is read. */
export function whereOption(text: unknown, command: string): readonly WhereCondition[] | undefined {
  if (typeof text !== "string") return undefined;
  try {
    return parseWhere(text);
  } catch (error) {
    if (error instanceof WhereSyntaxError) throw new UsageError(`bad --where: ${error.message}`, command);
    throw error;
  }
}

/** --keywords: names of the .NET runtime providers' keywords and masks (GC,Loader  0x9  GC+0x8); checked here, applied per batch. */
function keywordsOption(text: unknown, command: string): string | undefined {
  if (typeof text !== "string") return undefined;
  try {
    parseKeywords(text);
  } catch (e) {
    throw new UsageError(`bad --keywords '${text}': ${(e as Error).message.replace(/^etw-wasm: (keywords: )?/, "")}`, command);
  }
  return text;
}

/** --level: a level name (informational, verbose, ...) or number; events at that level or more severe. */
function levelOption(text: unknown, command: string): number | undefined {
  if (typeof text !== "string") return undefined;
  try {
    return parseLevel(text);
  } catch (e) {
    throw new UsageError(`bad --level '${text}': ${(e as Error).message.replace(/^etw-wasm: /, "")}`, command);
  }
}

export type { TableFormat };

/** --format of the commands that write a table: table (default), csv, json or jsonl. */
export function tableFormat(values: Values, command: string): TableFormat {
  const f = (values.format ?? "table") as string;
  if (f !== "table" && f !== "csv" && f !== "json" && f !== "jsonl") throw new UsageError(`unknown format: ${f} (table, csv, json or jsonl)`, command);
  return f;
}
