// Conditions on payload fields (query({ where }), `events --where`), checked against values read by
// hand from the records' payload bytes: AllocationTick's AllocationAmount (UInt32 at offset 0) and
// GC/Start's Reason (UInt32 at offset 8, 1 = Induced in the runtime's GCReason map).

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { openTrace, parseWhere, WhereSyntaxError, type Trace } from "../dist/bindings/index.js";
import { HAVE_CORPUS, etlPath } from "./helpers/shared.js";
import { payloadU32 } from "./helpers/by-hand.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
const SAMPLE = fileURLToPath(new URL("../examples/sample.etl", import.meta.url));
const RUNTIME = "Microsoft-Windows-DotNETRuntime";

/** A UInt32 of each row's payload at `offset`, read from the record bytes. */
function u32s(t: Trace, rows: Uint32Array, offset: number): number[] {
  return Array.from(rows, (r) => payloadU32(t, r, offset));
}

describe("where: conditions on payload fields", () => {
  it("parses conditions and says what is wrong with a bad one", () => {
    expect(parseWhere("AllocationAmount > 85000")).toEqual([{ field: "AllocationAmount", op: ">", values: [85000] }]);
    const c = parseWhere("Reason = Induced and Depth >= 1 && ClrInstanceID in (0, 0x1) and TypeName ~ /str\\w+/i and Big == 0xffffffffffffffff");
    expect(c.map((x) => [x.field, x.op, x.values])).toEqual([
      ["Reason", "=", ["Induced"]],
      ["Depth", ">=", [1]],
      ["ClrInstanceID", "in", [0, 1]],
      ["TypeName", "~", []],
      ["Big", "=", [0xffffffffffffffffn]],
    ]);
    expect(c[3].pattern!.test("System.STRING")).toBe(true);
    expect(parseWhere("Name = 'a and b'")[0].values).toEqual(["a and b"]);
    for (const bad of ["", "AllocationAmount", "AllocationAmount >", "Reason < Induced", "X ~ /(/", "X in 1, 2", "A = 1 and "]) {
      expect(() => parseWhere(bad), bad).toThrow(WhereSyntaxError);
    }
  });

  it("query({ where }) keeps the rows whose fields pass, as the payload bytes read by hand say", async () => {
    const t = await openTrace(readFileSync(SAMPLE));
    const ticks = t.query({ provider: RUNTIME, eventId: 10 }).indices;
    expect(ticks.length).toBeGreaterThan(100);
    const amounts = u32s(t, ticks, 0);
    const median = [...amounts].sort((a, b) => a - b)[amounts.length >> 1];
    const over = ticks.filter((_, k) => amounts[k] > median);
    expect(over.length).toBeGreaterThan(0);
    expect(over.length).toBeLessThan(ticks.length);
    expect(Array.from(t.query({ provider: RUNTIME, eventId: 10, where: `AllocationAmount > ${median}` }).indices)).toEqual(Array.from(over));
    expect(t.query({ provider: RUNTIME, eventId: 10, where: `AllocationAmount <= ${median}` }).length).toBe(ticks.length - over.length);
    expect(t.query({ provider: RUNTIME, eventId: 10, where: `AllocationAmount in (${amounts[0]}, ${amounts[1]})` }).length).toBe(
      amounts.filter((a) => a === amounts[0] || a === amounts[1]).length,
    );
    // a row without the field fails the condition: no GC/Start has an AllocationAmount
    expect(t.query({ provider: RUNTIME, where: `AllocationAmount > ${median}` }).length).toBe(over.length);

    // GC/Start's Depth (UInt32 at offset 4): every condition must hold
    const starts = t.query({ provider: RUNTIME, eventId: 1 }).indices;
    const depths = u32s(t, starts, 4);
    const deep = starts.filter((_, k) => depths[k] >= 1);
    expect(deep.length).toBeGreaterThan(0);
    expect(deep.length).toBeLessThan(starts.length);
    expect(Array.from(t.query({ provider: RUNTIME, eventId: 1, where: "Depth >= 1 and Count > 0" }).indices)).toEqual(Array.from(deep));
    t.dispose();
  });

  it.skipIf(!HAVE_CORPUS)("a value map's name or the number: GC/Start's Reason (Induced is 1) in net.4.5.x86.etl", async () => {
    const t = await openTrace(readFileSync(etlPath("net.4.5.x86.etl")));
    const starts = t.query({ provider: RUNTIME, eventId: 1 }).indices;
    const reasons = u32s(t, starts, 8);
    const induced = starts.filter((_, k) => reasons[k] === 1);
    expect(induced.length).toBeGreaterThan(0);
    expect(Array.from(t.query({ provider: RUNTIME, eventId: 1, where: "Reason = Induced" }).indices)).toEqual(Array.from(induced));
    expect(Array.from(t.query({ provider: RUNTIME, eventId: 1, where: "Reason == 1" }).indices)).toEqual(Array.from(induced));
    expect(t.query({ provider: RUNTIME, eventId: 1, where: "Reason != induced" }).length).toBe(starts.length - induced.length);
    expect(Array.from(t.query({ provider: RUNTIME, eventId: 1, where: "Reason ~ /^ind/i" }).indices)).toEqual(Array.from(induced));
    expect(induced.length).toBeLessThan(starts.length);
    t.dispose();
  });

  it("etw-wasm events --where prints those rows; a bad condition is a usage error", async () => {
    const t = await openTrace(readFileSync(SAMPLE));
    const ticks = t.query({ provider: RUNTIME, eventId: 10 }).indices;
    const amounts = u32s(t, ticks, 0);
    const median = [...amounts].sort((a, b) => a - b)[amounts.length >> 1];
    const want = ticks.filter((_, k) => amounts[k] > median).length;
    t.dispose();
    const r = spawnSync(
      process.execPath,
      [CLI, "events", SAMPLE, "--event", "GC/AllocationTick", "--where", `AllocationAmount > ${median}`, "--format", "json"],
      { encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as { fields: string }[];
    expect(rows.length).toBe(want);
    expect(rows.every((l) => JSON.parse(l.fields).AllocationAmount > median)).toBe(true);
    const bad = spawnSync(process.execPath, [CLI, "events", SAMPLE, "--where", "AllocationAmount >"], { encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("bad --where: 'AllocationAmount >' has no value");
  });
});
