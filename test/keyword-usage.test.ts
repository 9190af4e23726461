// KeywordUsageCounter (summary, doctor): counted by event type, folded into providers. The oracle is a
// count straight from each row's provider, level and keywords columns.

import { describe, expect, it } from "vitest";
import { KeywordUsageCounter, openTrace, streamTrace, type Trace } from "../dist/bindings/node.js";
import * as C from "../dist/assembly/codes.js";
import { generateTrace } from "../dist/bindings/generator/generate.js";
import { EtlWriter } from "../dist/bindings/generator/etl-writer.js";

/** Rows, keyword OR and rows per level of each provider, read row by row. */
function byRows(t: Trace): Map<number, { rows: number; keywords: bigint; levels: Map<number, number> }> {
  const out = new Map<number, { rows: number; keywords: bigint; levels: Map<number, number> }>();
  const { provider, level, keywords } = t.events.columns;
  for (let i = 0; i < t.events.length; i++) {
    let u = out.get(provider[i]);
    if (!u) out.set(provider[i], (u = { rows: 0, keywords: 0n, levels: new Map() }));
    u.rows++;
    u.keywords |= keywords[i];
    u.levels.set(level[i], (u.levels.get(level[i]) ?? 0) + 1);
  }
  return out;
}

function expectCounted(counter: KeywordUsageCounter, t: Trace): void {
  const want = byRows(t);
  const got = counter.result(t.providers);
  expect(got.map((u) => u.provider).sort((a, b) => a - b)).toEqual([...want.keys()].sort((a, b) => a - b));
  for (const u of got) {
    const w = want.get(u.provider)!;
    expect(u.rows, `provider ${u.provider}`).toBe(w.rows);
    expect(u.keywords, `provider ${u.provider}`).toBe(w.keywords);
    expect(new Map(u.levels.map((l) => [l.level, l.rows]))).toEqual(w.levels);
  }
}

describe("KeywordUsageCounter", () => {
  it("a whole trace and its stream in small batches count what the rows carry", async () => {
    const bytes = generateTrace({ targetBytes: 3 << 20, seed: 7 });
    const t = await openTrace(bytes);
    const whole = new KeywordUsageCounter();
    whole.add(t);
    expectCounted(whole, t);
    const streamed = new KeywordUsageCounter();
    let batches = 0;
    for await (const b of streamTrace(bytes, { batchBytes: 256 << 10 })) {
      streamed.add(b);
      batches++;
    }
    expect(batches).toBeGreaterThan(4);
    expectCounted(streamed, t);
  });

  it("rows past the event type table's room (no type) count under their own provider", async () => {
    const w = new EtlWriter({ bufferSize: 65536 });
    const providers = ["a1b2c3d4-0001-0002-0304-05060708090a", "0badf00d-0001-0002-0304-05060708090b"];
    let ts = 100n;
    for (let k = 0; k < C.MAX_EVENT_TYPES + 200; k++) {
      const p = k >= C.MAX_EVENT_TYPES ? k % 2 : 0;
      w.event(0, {
        headerType: 0x13,
        provider: providers[p],
        id: k & 0xffff,
        version: 1,
        level: 1 + (k % 5),
        opcode: k >>> 16,
        task: 0,
        keywords: 1n << BigInt(k % 40),
        pid: 1,
        tid: 2,
        ts: ts++,
        payload: new Uint8Array(0),
      });
    }
    const t = await openTrace(w.finish());
    // (the logfile header takes a type too)
    expect(t.events.eventType.filter((x) => x === C.EVENT_TYPE_NONE).length).toBeGreaterThanOrEqual(200);
    const counter = new KeywordUsageCounter();
    counter.add(t);
    expectCounted(counter, t);
  });
});
