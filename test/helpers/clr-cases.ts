// Synthetic .NET runtime events for the printing tests: one trace of the cases, each at its own
// timestamp, so that a case's row is found whatever order the decoder keeps.

import { openTrace } from "../../dist/bindings/index.js";
import { EtlWriter } from "../../dist/bindings/generator/etl-writer.js";

/** An EVENT_HEADER record of a .NET runtime provider (GUID), with its payload. */
export interface ClrEventCase {
  provider: string;
  id: number;
  version: number;
  ptr: 4 | 8;
  payload: Uint8Array;
}

/** The cases as one trace, and the row of case k. */
export async function clrCaseTrace(cases: readonly ClrEventCase[]) {
  const w = new EtlWriter({ perfFreq: 1_000_000n });
  const at = (k: number) => w.anchor + BigInt(1000 * (k + 1));
  cases.forEach((c, k) =>
    w.event(0, {
      headerType: c.ptr === 4 ? 0x12 : 0x13,
      provider: c.provider,
      id: c.id,
      version: c.version,
      level: 4,
      opcode: 0,
      task: 0,
      keywords: 1n,
      pid: 1,
      tid: 2,
      ts: at(k),
      payload: c.payload,
    }),
  );
  const t = await openTrace(w.finish());
  const stamps = [...t.events.timestamp];
  return { t, rowOf: (k: number) => t.events.row(stamps.findIndex((ts) => ts === at(k))) };
}
