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
