// Decode-time filters: a filtered decode holds exactly the rows of the unfiltered decode that pass
// the same test (row 0, the logfile header record, always), with their extended items, their event
// types counted over kept rows only, and typed .NET tables of kept rows only. Both engines.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { openTrace, type DecodeFilter, type Trace } from "../dist/bindings/index.js";
import * as C from "../dist/assembly/codes.js";
import { providerGuids } from "../dist/bindings/decode/windows/filter.js";
import { generateTrace } from "../dist/bindings/generator/generate.js";
import { EtlWriter } from "../dist/bindings/generator/etl-writer.js";
import { HAVE_CORPUS, etlPath } from "./helpers/shared.js";
import { syntheticTrace } from "./helpers/engines.js";

const ENGINES = ["wasm", "js"] as const;
const RUNTIME = "Microsoft-Windows-DotNETRuntime";

/** Rows of `a` that pass `f` (the same test, made in JS over the unfiltered columns), row 0 always. */
function selectRows(a: Trace, f: DecodeFilter): number[] {
  const { provider, ...rest } = f;
  let rows = Array.from(a.query(rest).indices);
  if (provider !== undefined) {
    const guids = new Set((Array.isArray(provider) ? provider : [provider]).flatMap((p: string) => providerGuids(p)));
    const col = a.events.columns.provider;
    rows = rows.filter((r) => guids.has(a.providers.get(col[r]).guid));
  }
  if (a.events.length > 0 && rows[0] !== 0) rows.unshift(0);
  return rows;
}

const COLUMNS = [
  "timestamp",
  "keywords",
  "pid",
  "tid",
  "payloadLength",
  "headerLength",
  "provider",
  "eventId",
  "task",
  "flags",
  "processor",
  "version",
  "opcode",
  "level",
  "headerType",
  "channel",
] as const;

function typeKey(t: Trace, row: number): string {
  const ty = t.eventTypes;
  const k = ty.typeOf(row);
  if (k < 0) return "none";
  return typeKeyAt(ty, k);
}

/** An event type's whole key: provider, id, version, opcode, header type, keywords, task, level, channel. */
function typeKeyAt(ty: Trace["eventTypes"], k: number): string {
  return [ty.provider[k], ty.eventId[k], ty.version[k], ty.opcode[k], ty.headerType[k], ty.keywords[k], ty.task[k], ty.level[k], ty.channel[k]].join(",");
}

function payloadOf(t: Trace, row: number): Uint8Array {
  const c = t.events.columns;
  return t.bytes.subarray(c.payloadOffset[row], c.payloadOffset[row] + c.payloadLength[row]);
}

function sameBytes(x: Uint8Array, y: Uint8Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

function extOf(t: Trace): Map<number, string[]> {
  const x = t.extendedItems;
  const out = new Map<number, string[]>();
  for (let i = 0; i < x.length; i++) {
    const data = Array.from(t.bytes.subarray(x.offset[i], x.offset[i] + x.size[i])).join(".");
    const list = out.get(x.row[i]) ?? [];
    list.push(`${x.type[i]}:${x.size[i]}:${data}`);
    out.set(x.row[i], list);
  }
  return out;
}

/** Every difference between the filtered decode `b` and the rows `keep` of the unfiltered `a`. */
function differences(a: Trace, b: Trace, keep: number[], limit = 10): string[] {
  const out: string[] = [];
  const say = (s: string) => out.length < limit && out.push(s);
  if (b.events.length !== keep.length) say(`rows: ${b.events.length}, expected ${keep.length}`);
  if (b.providers.length !== a.providers.length) say(`providers: ${b.providers.length}, expected ${a.providers.length}`);
  const n = Math.min(b.events.length, keep.length);
  const ca = a.events.columns as unknown as Record<string, ArrayLike<number | bigint>>;
  const cb = b.events.columns as unknown as Record<string, ArrayLike<number | bigint>>;
  for (const name of COLUMNS) {
    for (let j = 0; j < n; j++)
      if (cb[name][j] !== ca[name][keep[j]]) {
        say(`${name}[${j}] = ${cb[name][j]}, expected ${ca[name][keep[j]]} (row ${keep[j]})`);
        break;
      }
  }
  for (let j = 0; j < n; j++) {
    if (typeKey(b, j) !== typeKey(a, keep[j])) {
      say(`event type of row ${j}: ${typeKey(b, j)}, expected ${typeKey(a, keep[j])}`);
      break;
    }
    if (!sameBytes(payloadOf(b, j), payloadOf(a, keep[j]))) {
      say(`payload of row ${j} differs`);
      break;
    }
  }
  // event types: only those of kept rows, each counting its kept rows
  const counts = new Map<string, number>();
  for (const r of keep) counts.set(typeKey(a, r), (counts.get(typeKey(a, r)) ?? 0) + 1);
  counts.delete("none");
  const ty = b.eventTypes;
  const got = new Map<string, number>();
  for (let k = 0; k < ty.length; k++) got.set(typeKeyAt(ty, k), ty.count[k]);
  if (JSON.stringify([...got].sort()) !== JSON.stringify([...counts].sort())) say(`event types: ${got.size} (counts differ), expected ${counts.size}`);
  // extended items of kept rows only, renumbered
  const xa = extOf(a),
    xb = extOf(b);
  let items = 0;
  for (let j = 0; j < n; j++) {
    const want = (xa.get(keep[j]) ?? []).join("|"),
      have = (xb.get(j) ?? []).join("|");
    items += xa.get(keep[j])?.length ?? 0;
    if (want !== have) {
      say(`extended items of row ${j}: ${have}, expected ${want}`);
      break;
    }
  }
  if (b.extendedItems.length !== items) say(`extended items: ${b.extendedItems.length}, expected ${items}`);
  // typed .NET tables: exactly the kept rows of each
  const newIndex = new Map(keep.map((r, j) => [r, j]));
  const id = (t: Trace["tables"][number]) => `${t.name} v${t.schema.version}`;
  const tablesA = new Map(a.tables.map((t) => [id(t), t]));
  const tablesB = new Map(b.tables.map((t) => [id(t), t]));
  for (const [name, ta] of tablesA) {
    const want = Array.from(ta.rows)
      .filter((r) => newIndex.has(r))
      .map((r) => newIndex.get(r)!);
    const tb = tablesB.get(name);
    const have = tb ? Array.from(tb.rows) : [];
    if (want.join() !== have.join()) {
      say(`typed table ${name}: ${have.length} rows, expected ${want.length}`);
      continue;
    }
    for (let i = 0; i < want.length && tb; i++) {
      const ia = Array.from(ta.rows).indexOf(keep[want[i]]);
      for (const field of Object.keys(ta.columns)) {
        if (
          JSON.stringify(ta.get(field, ia), (_, v) => (typeof v === "bigint" ? `${v}` : v)) !==
          JSON.stringify(tb.get(field, i), (_, v) => (typeof v === "bigint" ? `${v}` : v))
        ) {
          say(`typed table ${name} row ${i} field ${field} differs`);
          break;
        }
      }
      if (i > 50) break;
    }
  }
  for (const name of tablesB.keys()) if (!tablesA.has(name)) say(`typed table ${name} not in the unfiltered decode`);
  return out;
}

function mostCommon<T>(values: Iterable<T>, skip?: (v: T) => boolean): T | undefined {
  const m = new Map<T, number>();
  for (const v of values) if (!skip?.(v)) m.set(v, (m.get(v) ?? 0) + 1);
  let best: T | undefined,
    n = -1;
  for (const [v, k] of m)
    if (k > n) {
      best = v;
      n = k;
    }
  return best;
}

/** One filter of each kind and some combinations, with values taken from the trace. */
function filtersFor(a: Trace): [string, DecodeFilter][] {
  const c = a.events.columns;
  const n = a.events.length;
  const rows = Array.from({ length: n }, (_, i) => i);
  const withInfo = rows.filter((r) => (c.flags[r] & C.F_NO_PROCESS_INFO) === 0);
  const pid = mostCommon(withInfo.map((r) => c.pid[r])) ?? 4;
  const tid = mostCommon(withInfo.map((r) => c.tid[r])) ?? 8;
  const ids = [...new Set(rows.map((r) => c.eventId[r]))];
  const id = mostCommon(c.eventId) ?? 1;
  const opcode = mostCommon(c.opcode) ?? 0;
  const kw = mostCommon(c.keywords, (k) => k === 0n) ?? 1n;
  const lowBit = kw & -kw;
  const provider = a.providers.get(mostCommon(c.provider) ?? 0).guid;
  const sorted = Array.from(c.timestamp).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const from = sorted[Math.floor(n / 3)] ?? 0n,
    to = sorted[Math.floor((2 * n) / 3)] ?? 0n;
  return [
    ["provider by name", { provider: RUNTIME }],
    ["kernel group by name", { provider: "Windows Kernel/Thread" }],
    ["kernel groups", { provider: ["Windows Kernel/Process", "Image", "9e814aad-3204-11d2-9a82-006008a86939"] }],
    ["provider by GUID", { provider: `{${provider.toUpperCase()}}` }],
    ["eventId", { eventId: id }],
    ["eventIds", { eventId: ids.slice(0, 5) }],
    ["opcode", { opcode: [opcode, 1] }],
    ["level", { level: 4 }],
    ["level 0", { level: 0 }],
    ["keywords", { keywords: lowBit }],
    ["pid", { pid }],
    ["tid", { tid: [tid, 0] }],
    ["from", { from }],
    ["to", { to }],
    ["from..to", { from, to }],
    ["provider + eventId", { provider: [RUNTIME, provider], eventId: ids.slice(0, 3) }],
    ["pid + from + level", { pid: [pid, 0], from, level: 5 }],
    ["keywords + opcode + tid", { keywords: kw, opcode, tid }],
    ["nothing passes", { eventId: 0xfffe }],
  ];
}

async function checkAll(label: string, bytes: Uint8Array, filters?: (a: Trace) => [string, DecodeFilter][]): Promise<number> {
  let kept = 0;
  for (const engine of ENGINES) {
    const a = await openTrace(bytes, { engine });
    for (const [name, filter] of (filters ?? filtersFor)(a)) {
      const keep = selectRows(a, filter);
      const b = await openTrace(bytes, { engine, filter });
      expect(differences(a, b, keep), `${label}, ${engine}, ${name}`).toEqual([]);
      expect(b.info.startTime.getTime()).toBe(a.info.startTime.getTime());
      kept += keep.length;
      b.dispose();
    }
    a.dispose();
  }
  return kept;
}

describe.skipIf(!HAVE_CORPUS)("corpus", () => {
  for (const name of [
    "net.4.5.2.x64.etl",
    "gcevents.etl",
    "tx-CrossMachineHTTP.etl",
    "etl-parser-lxcore_kernel.etl",
    "SelfDescribingSingleEvent.etl",
    "primitive-types.etl",
    "smallEtlFile.etl",
    "s4-waasmedic.20251005_113019_195.etl",
  ]) {
    // (net.4.5.2.x64 takes 30 s alone on a slow day; twice that when the machine is shared)
    it(name, async () => {
      await checkAll(name, new Uint8Array(readFileSync(etlPath(name))));
    }, 180_000);
  }

  it("a filtered .NET decode keeps its typed tables", async () => {
    const bytes = new Uint8Array(readFileSync(etlPath("gcevents.etl")));
    for (const engine of ENGINES) {
      const t = await openTrace(bytes, { engine, filter: { provider: RUNTIME, eventId: [1, 2] } });
      expect(t.tables.map((x) => x.name).sort()).toEqual(["Microsoft-Windows-DotNETRuntime/GC/Start", "Microsoft-Windows-DotNETRuntime/GC/Stop"]);
      expect(t.events.length).toBe(1 + t.tables.reduce((s, x) => s + x.length, 0));
    }
  });
});

describe("generated and synthetic traces", () => {
  it("generated, plain and compressed", async () => {
    for (const compress of [false, true]) {
      const bytes = generateTrace({ targetBytes: 600_000, compress, pointerSize: compress ? 4 : 8, seed: 31 });
      expect(await checkAll(`generated ${compress}`, bytes)).toBeGreaterThan(1000);
    }
  }, 60_000);

  it("synthetic traces of every header layout, with extended items", async () => {
    for (const seed of [3, 4, 9]) {
      const bytes = syntheticTrace(seed, { compress: seed === 4, pointerSize: seed === 9 ? 4 : 8, records: 1500 });
      await checkAll(`synthetic ${seed}`, bytes, (a) => [
        ...filtersFor(a),
        ["other providers", { provider: ["a1b2c3d4-0001-0002-0304-05060708090a", "11111111-2222-3333-4444-555555555555"] }],
      ]);
    }
  }, 60_000);

  it("row 0 is kept when its own test fails; extended items of dropped rows are not kept", async () => {
    const w = new EtlWriter({});
    const provider = "a1b2c3d4-0001-0002-0304-05060708090a";
    for (let k = 0; k < 20; k++) {
      w.event(0, {
        headerType: 0x13,
        provider,
        id: k % 4,
        version: 0,
        level: 4,
        opcode: 0,
        task: 0,
        keywords: 1n,
        pid: 7,
        tid: 8,
        ts: 1000n + BigInt(k),
        payload: new Uint8Array(4),
        ext: [{ type: 9, data: Uint8Array.of(k, 1, 2, 3, 4, 5, 6, 7) }],
      });
    }
    const bytes = w.finish();
    for (const engine of ENGINES) {
      const none = await openTrace(bytes, { engine, filter: { pid: 12345, from: 5000n } });
      expect(none.events.length).toBe(1);
      expect(none.extendedItems.length).toBe(0);
      expect(none.info.startTime.getTime()).toBeGreaterThan(0);
      const some = await openTrace(bytes, { engine, filter: { eventId: 3 } });
      expect(some.events.length).toBe(6);
    }
  });

  it("bad filters are refused before decoding", async () => {
    const bytes = syntheticTrace(5, { records: 100 });
    await expect(openTrace(bytes, { filter: { provider: "No-Such-Provider" } })).rejects.toThrow(/no known provider/);
    await expect(openTrace(bytes, { filter: { eventId: Array.from({ length: C.FILTER_SET_MAX + 1 }, (_, i) => i) } })).rejects.toThrow(RangeError);
    await expect(openTrace(bytes, { filter: { level: -1 } })).rejects.toThrow(RangeError);
    await expect(openTrace(bytes, { filter: { from: 5 as unknown as bigint } })).rejects.toThrow(/bigint/);
    await expect(openTrace(bytes, { filter: { pids: 1 } as unknown as DecodeFilter })).rejects.toThrow(/unknown filter field/);
    // an empty filter keeps everything
    const all = await openTrace(bytes);
    expect((await openTrace(bytes, { filter: {} })).events.length).toBe(all.events.length);
  });
});
