// One field of a .NET runtime event read without decoding the payload (EventRow.get): a fixed field
// where it lies, a field after strings by skipping them (readScannedField). The oracle is the
// payload decoded field by field (decodeClrPayload), on every .NET row of the corpus traces and on
// payloads cut at every length, where decodeClrPayload leaves out what the payload does not hold.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openTrace } from "../dist/bindings/node.js";
import { decodeClrPayload, readScannedField, type FieldValue } from "../dist/bindings/schema/clr-payload.js";
import { T_USTR } from "../dist/assembly/codes.js";
import { CORPUS, HAVE_CORPUS, etlPath } from "./helpers/shared.js";

const FILES: [string, string][] = [
  ...["net.4.5.2.x64.etl", "net.4.5.x86.etl", "gcrundownevents.etl"].map((f): [string, string] => [f, etlPath(f)]),
  ["eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", join(CORPUS, "nettrace", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")],
];

const text = (v: FieldValue | undefined) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x instanceof Uint8Array ? [...x] : x));

describe.skipIf(!HAVE_CORPUS)("a field read without decoding the payload", () => {
  it.each(FILES)("equals the decoded payload's field, every field of every .NET row: %s", async (_, file) => {
    const t = await openTrace(new Uint8Array(readFileSync(file)));
    let fields = 0;
    for (let i = 0; i < t.events.length; i++) {
      const schema = t.events.row(i).clrSchema;
      if (!schema) continue;
      const decoded = t.events.row(i).decode()!;
      for (const f of schema.fields) {
        // (a fresh row each time: get() reads the decoded payload once a row has one)
        const got = t.events.row(i).get(f.name);
        const k = decoded.names.indexOf(f.name);
        if (text(got) !== text(k < 0 ? undefined : decoded.values[k])) expect.fail(`row ${i} ${schema.name} ${f.name}: ${text(got)}`);
        fields++;
      }
    }
    expect(fields).toBeGreaterThan(1000);
    t.dispose();
  });

  it("equals it on payloads cut at every length (strings cut short, fields left out)", async () => {
    // the first row of every .NET event with a string, cut at each length from 0 to the whole payload
    const t = await openTrace(new Uint8Array(readFileSync(etlPath("net.4.5.2.x64.etl"))));
    const seen = new Set<string>();
    let cases = 0,
      leftOut = 0;
    for (let i = 0; i < t.events.length; i++) {
      const row = t.events.row(i);
      const schema = row.clrSchema;
      if (!schema || seen.has(schema.name) || !schema.fields.some((f) => f.type === T_USTR)) continue;
      seen.add(schema.name);
      const bytes = t.events.recordBytesOf(i)!;
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
      for (let cut = 0; cut <= row.payloadLength; cut++) {
        const decoded = decodeClrPayload(schema, bytes, row.payloadOffset, cut, row.pointerSize);
        for (const f of schema.fields) {
          const got = readScannedField(schema, f.name, bytes, view, row.payloadOffset, cut, row.pointerSize);
          if (got === null) continue; // (a field past an array or struct: decoded instead)
          const k = decoded.names.indexOf(f.name);
          expect(text(got), `${schema.name} ${f.name} cut at ${cut}`).toBe(text(k < 0 ? undefined : decoded.values[k]));
          cases++;
          if (k < 0) leftOut++;
        }
      }
    }
    expect(seen.size).toBeGreaterThan(5);
    expect(leftOut).toBeGreaterThan(100);
    expect(cases).toBeGreaterThan(leftOut);
    t.dispose();
  });
});
