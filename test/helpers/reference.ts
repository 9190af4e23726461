// Reads a reference dump (one JSON object per line, gzip) of the corpus.

import { createReadStream } from "node:fs";
import { createGunzip } from "node:zlib";
import { createInterface } from "node:readline";

export interface ReferenceRecord {
  kind: string;
  [key: string]: unknown;
}

export interface Reference {
  /** The logfile header. */
  file: ReferenceRecord;
  /** One per buffer visited, in file order. */
  buffers: ReferenceRecord[];
  /** One per record, in file order (the logfile-header record first). */
  events: ReferenceRecord[];
}

export async function readReference(path: string): Promise<Reference> {
  const lines = createInterface({ input: createReadStream(path).pipe(createGunzip()), crlfDelay: Infinity });
  let file: ReferenceRecord | undefined;
  const buffers: ReferenceRecord[] = [];
  const events: ReferenceRecord[] = [];
  for await (const line of lines) {
    if (!line) continue;
    // 64-bit values (FILETIMEs, timestamps) exceed double precision: keep them as strings.
    const o = JSON.parse(line.replace(/(:\s*)(-?\d{16,})/g, '$1"$2"')) as ReferenceRecord;
    if (o.kind === "event") events.push(o);
    else if (o.kind === "buffer") buffers.push(o);
    else if (o.kind === "file") file = o;
    else if (o.kind === "error") throw new Error(`${path}: the reference decoder reported an error: ${line}`);
  }
  if (!file) throw new Error(`${path}: no file record`);
  return { file, buffers, events };
}

/** A record's raw timestamp. */
export const timestampOf = (r: ReferenceRecord): bigint => BigInt(r.ts as number | string);

/**
 * Milliseconds since the logfile-header record (the first record), as PerfView counts them: QPC ticks
 * over PerfFreq, or FILETIME units for a system-time clock (reserved_flags 2); records before the
 * header record count as 0.
 */
export function relativeMs(ref: Reference): (r: ReferenceRecord) => number {
  const anchor = ref.events[0];
  if (anchor?.group !== 0 || anchor.opcode !== 0) throw new Error("the first reference record is not the logfile-header record");
  const t0 = timestampOf(anchor);
  const freq = ref.file.reserved_flags === 2 ? 10_000_000 : Number(ref.file.perf_freq);
  return (r) => Math.max(0, (Number(timestampOf(r) - t0) * 1000) / freq);
}

/** True when a record lies at or after `ms` (a decimal string) since the logfile-header record, exactly. */
export function atOrAfterMs(ref: Reference, r: ReferenceRecord, ms: string): boolean {
  return compareToMs(ref, r, ms) >= 0;
}

/** True when a record lies at or before `ms` (a decimal string) since the logfile-header record, exactly. */
export function atOrBeforeMs(ref: Reference, r: ReferenceRecord, ms: string): boolean {
  return compareToMs(ref, r, ms) <= 0;
}

/** Sign of (time of `r` since the logfile-header record) - `ms`, in integer arithmetic. */
function compareToMs(ref: Reference, r: ReferenceRecord, ms: string): number {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(ms);
  if (!m) throw new Error(`not a decimal: ${ms}`);
  const scale = 10n ** BigInt((m[2] ?? "").length);
  const msScaled = BigInt(m[1] + (m[2] ?? ""));
  const freq = ref.file.reserved_flags === 2 ? 10_000_000n : BigInt(ref.file.perf_freq as number | string);
  // ticks / freq * 1000 vs msScaled / scale
  const lhs = (timestampOf(r) - timestampOf(ref.events[0])) * 1000n * scale;
  const rhs = msScaled * freq;
  return lhs < rhs ? -1 : lhs > rhs ? 1 : 0;
}

/** The first 64 bytes of a record's user data (all of it when shorter). */
export const payloadOf = (r: ReferenceRecord): Buffer => Buffer.from(r.payload_hex as string, "hex");

/** A reference record in the vocabulary of `etw-wasm events --format jsonl` (absent fields: the spec's defaults). */
export function referenceAsJson(r: ReferenceRecord) {
  const ext = (r.ext as { type: number }[] | undefined) ?? [];
  return {
    headerType: r.ht,
    provider: r.provider,
    ...(r.group !== undefined ? { group: r.group } : {}),
    eventId: r.id ?? 0,
    version: r.version ?? 0,
    opcode: r.opcode ?? 0,
    level: r.level ?? 0,
    task: r.task ?? 0,
    keywords: r.keywords ?? "0x0000000000000000",
    pid: r.pid ?? null,
    tid: r.tid ?? null,
    processor: r.processor_number,
    timestamp: String(r.ts),
    payloadLength: r.payload_len,
    extTypes: ext.map((e) => e.type),
  };
}
