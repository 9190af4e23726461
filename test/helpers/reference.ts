// Reads a reference dump (one JSON object per line, gzip) of the corpus.

import { createReadStream } from "node:fs";
import { createGunzip } from "node:zlib";
import { createInterface } from "node:readline";

export interface ReferenceRecord {
  kind: string;
  [key: string]: unknown;
}

export async function readReference(path: string): Promise<{ file: ReferenceRecord; events: ReferenceRecord[] }> {
  const lines = createInterface({ input: createReadStream(path).pipe(createGunzip()), crlfDelay: Infinity });
  let file: ReferenceRecord | undefined;
  const events: ReferenceRecord[] = [];
  for await (const line of lines) {
    if (!line) continue;
    // 64-bit values (FILETIMEs, timestamps) exceed double precision: keep them as strings.
    const o = JSON.parse(line.replace(/(:\s*)(-?\d{16,})/g, '$1"$2"')) as ReferenceRecord;
    if (o.kind === "event") events.push(o);
    else if (o.kind === "file") file = o;
  }
  if (!file) throw new Error(`${path}: no file record`);
  return { file, events };
}

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
