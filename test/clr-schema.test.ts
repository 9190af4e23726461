// The packed .NET runtime schema (bindings/schema/generated/clr-schema.ts) unpacks to what the manifest
// says. With ../shared/spec/clr-events.json present (required with CI=true) the unpacked CLR_EVENTS and
// CLR_PROVIDERS must equal the generator's unpacked objects exactly and match the manifest's own facts,
// and the committed file must be what the generator writes today.

import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLR_EVENTS, CLR_PROVIDERS, findClrEvent, mapName, type ClrFieldSchema } from "../dist/bindings/index.js";
import { SHARED } from "./helpers/shared.js";
// @ts-expect-error: a plain ES module script, without type declarations
import { render, schemaFromSpec } from "../scripts/gen-clr-schema.mjs";

// biome-ignore lint/suspicious/noExplicitAny: the manifest summary is JSON read as it is
type Json = any;

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const SPEC = join(SHARED, "spec", "clr-events.json");
const HAVE_SPEC = existsSync(SPEC);
if (!HAVE_SPEC) {
  if (process.env.CI === "true") throw new Error(`CI=true but the manifest summary is missing at ${SPEC}`);
  console.warn(`notice: ${SPEC} not found; the schema-against-manifest tests are skipped`);
}

describe("the unpacked schema", () => {
  it("has one event per (provider, id, version), its field names unique, every count and length naming an earlier field or a number", () => {
    expect(CLR_EVENTS.length).toBeGreaterThan(500);
    const keys = new Set(CLR_EVENTS.map((e) => `${e.provider}:${e.id}:${e.version}`));
    expect(keys.size).toBe(CLR_EVENTS.length);
    const check = (fields: ClrFieldSchema[], provider: number) => {
      // (names are unique within an event or a struct: ClrTable.get finds a field by its name)
      expect(new Set(fields.map((f) => f.name)).size).toBe(fields.length);
      fields.forEach((f, i) => {
        for (const ref of [f.count, f.length]) {
          if (ref !== undefined && !/^\d+$/.test(ref)) expect(fields.slice(0, i).map((x) => x.name)).toContain(ref);
        }
        if (f.map) expect(f.map in CLR_PROVIDERS[provider].valueMaps || f.map in CLR_PROVIDERS[provider].bitMaps).toBe(true);
        if (f.fields) check(f.fields, provider);
        if (f.elementOffsets64) expect(f.elementOffsets64).toHaveLength(f.fields!.length);
      });
    };
    for (const e of CLR_EVENTS) {
      expect(CLR_PROVIDERS[e.provider]).toBeDefined();
      expect(e.name.startsWith(CLR_PROVIDERS[e.provider].name + "/")).toBe(true);
      check(e.fields, e.provider);
    }
  });

  it("gives every event objects of its own", () => {
    const seen = new Set<object>();
    const walk = (fields: ClrFieldSchema[]) => {
      expect(seen.has(fields)).toBe(false);
      seen.add(fields);
      for (const f of fields) {
        expect(seen.has(f)).toBe(false);
        seen.add(f);
        if (f.fields) walk(f.fields);
      }
    };
    for (const e of CLR_EVENTS) walk(e.fields);
    expect(CLR_PROVIDERS[1].bitMaps.ModuleFlagsMap).not.toBe(CLR_PROVIDERS[0].bitMaps.ModuleFlagsMap);
    expect(CLR_PROVIDERS[1].bitMaps.ModuleFlagsMap).toEqual(CLR_PROVIDERS[0].bitMaps.ModuleFlagsMap);
  });

  it("knows GCStart_V2, its maps and a padded struct array", () => {
    const gc = findClrEvent(0, 1, 2)!;
    expect(gc).toMatchObject({ symbol: "GCStart_V2", name: "Microsoft-Windows-DotNETRuntime/GC/Start", task: 1, opcode: 1, level: 4, keywords: "0x1" });
    expect(gc.fields.map((f) => f.name)).toEqual(["Count", "Depth", "Reason", "Type", "ClrInstanceID", "ClientSequenceNumber"]);
    expect(findClrEvent(0, 1, 9)).toBe(gc); // newer versions fall back to the newest known
    expect(mapName(0, "GCReasonMap", 1)).toBe("Induced");
    expect(mapName(0, "StartupFlagsMap", 1 | 4194304)).toBe("CONCURRENT_GC | ARM");
    const padded = CLR_EVENTS.flatMap((e) => e.fields).filter((f) => f.elementSize64 !== undefined);
    expect(padded.length).toBeGreaterThan(0);
    for (const f of padded)
      expect(Object.keys(f)).toEqual(["name", "type", "count", "fields", "elementSize32", "elementSize64", "elementOffsets32", "elementOffsets64"]);
  });
});

describe.skipIf(!HAVE_SPEC)("the schema against the manifest", () => {
  const spec = HAVE_SPEC ? JSON.parse(readFileSync(SPEC, "utf8")) : undefined;

  it("unpacks to exactly the generator's objects", () => {
    const want = schemaFromSpec(spec);
    expect(JSON.stringify(CLR_PROVIDERS)).toBe(JSON.stringify(want.providers));
    expect(CLR_EVENTS).toHaveLength(want.events.length);
    CLR_EVENTS.forEach((e, i) => expect(JSON.stringify(e)).toBe(JSON.stringify(want.events[i])));
  });

  it("is committed as the generator writes it", () => {
    expect(readFileSync(join(ROOT, "bindings", "schema", "generated", "clr-schema.ts"), "utf8")).toBe(render(spec));
  });

  it("matches the manifest's events, fields and maps", () => {
    const events = spec.providers.flatMap((p: Json, pi: number) => p.events.map((e: Json) => ({ ...e, pi })));
    expect(CLR_EVENTS).toHaveLength(events.length);
    const hex = (f: Json) => f.inType.startsWith("win:Hex") || /^win:HexInt(32|64)$/.test(f.outType ?? "");
    const same = (got: ClrFieldSchema[], want: Json[]) => {
      expect(got.map((f) => f.name)).toEqual(want.map((f) => f.name));
      got.forEach((f, i) => {
        expect(f.map).toBe(want[i].map);
        expect(f.hex === 1).toBe(hex(want[i]));
        expect(f.type === 19).toBe(want[i].inType === "struct");
        if (want[i].length !== undefined) expect(f.length).toBe(String(want[i].length));
        if (want[i].fields) same(f.fields!, want[i].fields);
        else expect(f.fields).toBeUndefined();
      });
    };
    events.forEach((m: Json, i: number) => {
      const e = CLR_EVENTS[i];
      expect([e.provider, e.id, e.version, e.symbol, e.task, e.opcode, e.level, e.keywords]).toEqual([
        m.pi,
        m.id,
        m.version,
        m.symbol,
        m.task,
        m.opcode,
        m.level,
        m.keywords,
      ]);
      if (m.traceEventName) expect(e.name).toBe(m.traceEventName);
      same(e.fields, m.fields);
    });
    spec.providers.forEach((p: Json, i: number) => {
      expect([CLR_PROVIDERS[i].name, CLR_PROVIDERS[i].guid]).toEqual([p.name, p.guid]);
      for (const [name, m] of Object.entries<Record<string, string>>(p.maps?.valueMap ?? {})) {
        for (const [v, t] of Object.entries(m)) expect(CLR_PROVIDERS[i].valueMaps[name][Number(v)]).toBe(t);
      }
      for (const [name, m] of Object.entries<Record<string, string>>(p.maps?.bitMap ?? {})) {
        expect(CLR_PROVIDERS[i].bitMaps[name]).toEqual(Object.entries(m).map(([v, t]) => [Number(v), t]));
      }
    });
  });
});
