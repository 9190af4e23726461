// Typed tables of .NET runtime events, filled in WebAssembly: every field type, both pointer sizes,
// short payloads, and agreement with the lazy JS decoder on the corpus.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { openTrace, type Trace } from "../dist/bindings/index.js";
import { EtlWriter, PayloadBuilder } from "../dist/bindings/generator/etl-writer.js";
import { HAVE_CORPUS, etlPath } from "./helpers/shared.js";

const RUNTIME = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4";
const GUID = "5f1c7a3e-2b44-4d6a-9a1e-0c8b7d6e5f40";

const show = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x instanceof Uint8Array ? [...x] : x));

/** Every cell of every typed table equals the JS decoder's value for that field. */
function expectTablesMatchDecoder(t: Trace): number {
  let cells = 0;
  for (const table of t.tables) {
    for (let i = 0; i < table.length; i++) {
      const d = t.events.row(table.rows[i]).decode()!;
      expect(table.truncated[i]).toBe(d.truncated ? 1 : 0);
      d.names.forEach((name, k) => {
        const got = show(table.get(name, i));
        if (got !== show(d.values[k])) expect({ table: table.name, i, name, got }).toEqual({ table: table.name, i, name, got: show(d.values[k]) });
        cells++;
      });
    }
  }
  return cells;
}

async function traceOf(events: { ht: 0x12 | 0x13; id: number; version: number; payload: Uint8Array }[]): Promise<Trace> {
  const w = new EtlWriter({});
  let ts = 2_000_000n;
  for (const e of events) {
    w.event(0, {
      headerType: e.ht,
      provider: RUNTIME,
      id: e.id,
      version: e.version,
      level: 4,
      opcode: 0,
      task: 0,
      keywords: 1n,
      pid: 1,
      tid: 2,
      ts: (ts += 10n),
      payload: e.payload,
    });
  }
  return openTrace(w.finish());
}

describe("typed tables on synthetic events", () => {
  for (const ht of [0x12, 0x13] as const) {
    const P = ht === 0x12 ? 4 : 8;
    it(`stores every field type (${P * 8}-bit pointers)`, async () => {
      const p = () => new PayloadBuilder();
      const t = await traceOf([
        { ht, id: 1, version: 2, payload: p().u32(7).u32(2).u32(1).u32(0).u16(9).u64(0x1122334455667788n).build() },
        { ht, id: 81, version: 2, payload: p().u8(1).u16(9).ptr(P, 0xdeadbeefn).ptr(P, 0x12345678n).u64(77n).build() },
        { ht, id: 91, version: 1, payload: p().u8(0).u16(9).f64(1234.5).build() },
        { ht, id: 63, version: 0, payload: p().ptr(P, 1n).ptr(P, 2n).u32(1).u16(9).build() },
        { ht, id: 205, version: 2, payload: p().u64(5n).i32(-3).u32(2).u32(0).u32(1).u32(0x10).u16(9).u32(0).u32(60).build() },
        { ht, id: 300, version: 0, payload: p().u16(9).utf16z("Startup").i64(-42n).build() },
        {
          ht,
          id: 39,
          version: 0,
          payload: p()
            .utf16z("dyn")
            .u32(3)
            .bytes(new Uint8Array([9, 8, 7]))
            .u16(9)
            .build(),
        },
        {
          ht,
          id: 152,
          version: 2,
          payload: p().u64(1n).u64(2n).u32(8).u32(0).utf16z("a.dll").utf16z("").u16(9).guid(GUID).u32(3).utf16z("a.pdb").guid(GUID).u32(0).utf16z("").build(),
        },
        { ht, id: 82, version: 0, payload: p().u16(9).u8(0).u8(0).u32(3).ptr(P, 0x10n).ptr(P, 0x20n).ptr(P, 0x30n).build() },
        {
          ht,
          id: 209,
          version: 0,
          payload: (() => {
            const b = p().u16(9).u16(1).u64(999n).u16(2);
            for (const [i, c, s] of [
              [1, 10, 100n],
              [2, 20, 200n],
            ] as const) {
              b.u16(i).zeros(2).u32(c).ptr(P, s);
              if (P === 8) b.zeros(0);
            }
            return b.build();
          })(),
        },
        {
          ht,
          id: 186,
          version: 0,
          payload: (() => {
            const b = p();
            for (let k = 0; k < 9; k++) b.utf16z(`s${k}`);
            return b.u32(1).ansiz("too big").u16(9).build();
          })(),
        },
      ]);
      expect(t.warnings).toEqual([]);
      const gc = t.table("Microsoft-Windows-DotNETRuntime/GC/Start")!;
      expect(gc.version).toBe(2);
      expect([gc.get("Count", 0), gc.get("Depth", 0), gc.get("ClrInstanceID", 0), gc.get("ClientSequenceNumber", 0)]).toEqual([7, 2, 9, 0x1122334455667788n]);
      expect(gc.getDisplay("Reason", 0)).toBe("Induced");
      expect(gc.columns.Count).toBeInstanceOf(Uint32Array);
      expect(t.events.row(gc.rows[0]).eventId).toBe(1);

      const cs = t.table({ provider: "Microsoft-Windows-DotNETRuntime", id: 81, version: 2 })!;
      expect([cs.get("ContentionFlags", 0), cs.get("LockID", 0), cs.get("AssociatedObjectID", 0), cs.get("LockOwnerThreadID", 0)]).toEqual([
        1,
        0xdeadbeefn,
        0x12345678n,
        77n,
      ]);
      expect(cs.getDisplay("ContentionFlags", 0)).toBe("Native");
      expect(t.table("Microsoft-Windows-DotNETRuntime/Contention/Stop")!.get("DurationNs", 0)).toBe(1234.5);
      const io = t.table({ provider: RUNTIME, id: 63, version: 0 })!;
      expect([io.get("NativeOverlapped", 0), io.get("Overlapped", 0), io.get("MultiDequeues", 0), io.get("ClrInstanceID", 0)]).toEqual([1n, 2n, true, 9]);
      const gh = t.table({ provider: RUNTIME, id: 205, version: 2 })!;
      expect([gh.get("NumHeaps", 0), gh.get("MemoryPressure", 0)]).toEqual([-3, 60]);
      const cp = t.table({ provider: RUNTIME, id: 300, version: 0 })!;
      expect([cp.get("Name", 0), cp.get("Timestamp", 0)]).toEqual(["Startup", -42n]);
      const dyn = t.table({ provider: RUNTIME, id: 39, version: 0 })!;
      expect([...(dyn.get("Data", 0) as Uint8Array)]).toEqual([9, 8, 7]);
      expect(dyn.get("ClrInstanceID", 0)).toBe(9);
      const ml = t.table({ provider: RUNTIME, id: 152, version: 2 })!;
      expect([ml.get("ModuleILPath", 0), ml.get("ManagedPdbSignature", 0), ml.get("ManagedPdbAge", 0), ml.get("ManagedPdbBuildPath", 0)]).toEqual([
        "a.dll",
        GUID,
        3,
        "a.pdb",
      ]);
      expect(ml.getDisplay("ModuleFlags", 0)).toBe("Manifest");
      const sw = t.table({ provider: RUNTIME, id: 82, version: 0 })!;
      expect(sw.get("Stack", 0)).toEqual([0x10n, 0x20n, 0x30n]);
      expect((sw.columns.Stack as { length: Uint32Array }).length[0]).toBe(3);
      const fb = t.table({ provider: RUNTIME, id: 209, version: 0 })!;
      expect(fb.get("Values", 0)).toEqual([
        { Index: 1, Count: 10, Size: 100n },
        { Index: 2, Count: 20, Size: 200n },
      ]);
      expect(fb.truncated[0]).toBe(0);
      const ansi = t.table({ provider: RUNTIME, id: 186, version: 0 })!;
      expect([ansi.get("InlineeNameSignature", 0), ansi.get("FailAlways", 0), ansi.get("FailReason", 0), ansi.get("ClrInstanceID", 0)]).toEqual([
        "s8",
        true,
        "too big",
        9,
      ]);
      expect(expectTablesMatchDecoder(t)).toBeGreaterThan(60);
    });
  }

  it("marks short payloads, keeps the fields before the cut and reads nothing past it", async () => {
    const full = new PayloadBuilder().u32(7).u32(2).u32(1).u32(0).u16(9).u64(5n).build();
    const cp = new PayloadBuilder().u16(9).build();
    const unterminated = new Uint8Array([...cp, 0x41, 0, 0x42, 0]);
    const t = await traceOf([
      { ht: 0x13, id: 1, version: 2, payload: full.subarray(0, 10) },
      { ht: 0x13, id: 1, version: 2, payload: full },
      { ht: 0x13, id: 300, version: 0, payload: unterminated },
      // a newer version than the manifest knows: decoded with the newest layout, extra bytes ignored
      { ht: 0x13, id: 1, version: 7, payload: new Uint8Array([...full, 1, 2, 3, 4]) },
    ]);
    const v2 = t.table({ provider: RUNTIME, id: 1, version: 2 })!;
    expect(v2.length).toBe(3);
    expect([...v2.truncated]).toEqual([1, 0, 0]);
    expect([v2.get("Count", 0), v2.get("Depth", 0), v2.get("Reason", 0), v2.get("ClientSequenceNumber", 0)]).toEqual([7, 2, 0, 0n]);
    expect(v2.get("ClientSequenceNumber", 2)).toBe(5n);
    const row0 = t.events.row(v2.rows[0]);
    expect(row0.decode()!.names).toEqual(["Count", "Depth"]);
    expect(row0.get("Reason")).toBeUndefined();
    const ck = t.table({ provider: RUNTIME, id: 300, version: 0 })!;
    expect(ck.truncated[0]).toBe(1);
    expect(ck.get("Name", 0)).toBe("AB");
    expect(ck.get("Timestamp", 0)).toBe(0n);
    expectTablesMatchDecoder(t);
  });

  it("finds the end of UTF-16 and ANSI strings of every length (the core scans 16 bytes at a time), terminated or cut short", async () => {
    // every other unit has a zero low byte: only a whole zero unit ends the string
    const name = (n: number) => String.fromCharCode(...Array.from({ length: n }, (_, k) => (k & 1 ? (k + 1) << 8 : 0x41 + (k % 26))));
    const ansi = (n: number) => Array.from({ length: n }, (_, k) => String.fromCharCode(0x61 + (k % 26))).join("");
    const events: Parameters<typeof traceOf>[0] = [];
    for (let n = 0; n <= 40; n++) {
      events.push({ ht: 0x13, id: 300, version: 0, payload: new PayloadBuilder().u16(9).utf16z(name(n)).i64(BigInt(n)).build() });
      const b = new PayloadBuilder();
      for (let k = 0; k < 9; k++) b.utf16z(name((n + k) % 19));
      events.push({ ht: 0x13, id: 186, version: 0, payload: b.u32(1).ansiz(ansi(n)).u16(n).build() });
    }
    // cut inside the string: no terminator before the payload's end
    const whole = new PayloadBuilder().u16(9).utf16z(name(40)).build();
    for (let n = 1; n <= 40; n++) events.push({ ht: 0x13, id: 300, version: 0, payload: whole.subarray(0, 2 + 2 * n) });
    const t = await traceOf(events);
    const cp = t.table({ provider: RUNTIME, id: 300, version: 0 })!;
    const inl = t.table({ provider: RUNTIME, id: 186, version: 0 })!;
    for (let n = 0; n <= 40; n++) {
      expect([cp.get("Name", n), cp.get("Timestamp", n), cp.truncated[n]]).toEqual([name(n), BigInt(n), 0]);
      expect([inl.get("FailReason", n), inl.get("ClrInstanceID", n), inl.get("InlineeNameSignature", n)]).toEqual([ansi(n), n, name((n + 8) % 19)]);
    }
    for (let n = 1; n <= 40; n++) expect([cp.get("Name", 40 + n), cp.truncated[40 + n]]).toEqual([name(40).slice(0, n), 1]);
    expectTablesMatchDecoder(t);
  });

  it("can be switched off", async () => {
    const w = new EtlWriter({});
    w.event(0, {
      headerType: 0x13,
      provider: RUNTIME,
      id: 2,
      version: 1,
      level: 4,
      opcode: 2,
      task: 1,
      keywords: 1n,
      pid: 1,
      tid: 2,
      ts: 2_000_000n,
      payload: new Uint8Array(10),
    });
    const t = await openTrace(w.finish(), { clrTables: false });
    expect(t.tables).toEqual([]);
    expect(t.events.row(1).get("ClrInstanceID")).toBe(0);
  });
});

describe.skipIf(!HAVE_CORPUS)("typed tables on the corpus", () => {
  for (const name of ["gcevents.etl", "gcrundownevents.etl", "net.4.5.2.x64.etl", "net.4.5.x86.etl", "smallEtlFile.etl"]) {
    it(`${name}: every cell equals the JS decoder's value`, async () => {
      const t = await openTrace(readFileSync(etlPath(name)));
      const cells = expectTablesMatchDecoder(t);
      expect(cells).toBeGreaterThan(0);
      // every runtime event with a schema is in exactly one table
      const inTables = t.tables.reduce((n, x) => n + x.length, 0);
      let withSchema = 0;
      for (const row of t.events) if (row.clrSchema) withSchema++;
      expect(inTables).toBe(withSchema);
    });
  }

  it("smallEtlFile (PointerSize 4): the rundown ModuleDCStop gives the module's IL path", async () => {
    const t = await openTrace(readFileSync(etlPath("smallEtlFile.etl")));
    const table = t.table("Microsoft-Windows-DotNETRuntimeRundown/Loader/ModuleDCStop")!;
    expect(t.info.pointerSize).toBe(4);
    expect(table.length).toBe(1);
    expect(String(table.get("ModuleILPath", 0))).toMatch(/\\Microsoft\.VisualStudio\.Services\.Client\.dll$/);
    const row = t.events.row(table.rows[0]);
    expect(row.name).toBe("Microsoft-Windows-DotNETRuntimeRundown/Loader/ModuleDCStop");
    expect(String(row.get("ModuleILPath"))).toMatch(/Microsoft\.VisualStudio\.Services\.Client\.dll$/);
  });
});
