// Queries walk the columns and collect matching row indices; no object is made per event.

import * as C from "../../assembly/codes.js";
import type { EventRow, EventTable } from "./event-table.js";
import type { TraceClock } from "./info.js";
import type { ProviderTable } from "./provider-table.js";
import { keywordMaskFor, parseKeywords, parseLevel, type KeywordSpec, type LevelSpec } from "../schema/keywords.js";
import { filterWhere, type WhereCondition } from "./where.js";

type OneOrMany<T> = T | readonly T[];

/** A time bound: relative milliseconds (number), a raw timestamp (bigint) or a Date. */
export type TimeBound = number | bigint | Date;

export interface QueryFilter {
  /** Provider name, GUID or index (any of several). */
  provider?: OneOrMany<string | number>;
  eventId?: OneOrMany<number>;
  opcode?: OneOrMany<number>;
  task?: OneOrMany<number>;
  pid?: OneOrMany<number>;
  tid?: OneOrMany<number>;
  processor?: OneOrMany<number>;
  headerType?: OneOrMany<number>;
  /**
   * Events at this level or more severe (ETW semantics: level <= value): a number or a name
   * ("Informational", "verbose"). Records whose header has no level (kernel, classic) have level 0 and pass.
   */
  level?: LevelSpec;
  /**
   * Events with any of these keyword bits: a mask (bigint or number), names of the .NET runtime
   * providers' keywords ("GC", "Loader", "StartRundown"), or a list or string of both ("GC,Loader",
   * "GC+0x8"). A name stands for its bits in each provider that defines it, so it selects events of
   * those providers only; a mask tests every provider's events. Records without keywords (kernel,
   * classic) match none.
   */
  keywords?: KeywordSpec;
  /** Inclusive bounds. */
  from?: TimeBound;
  to?: TimeBound;
  /** Row order of the result (default "file"). */
  order?: "file" | "time";
  /**
   * Conditions on payload fields, all of which must hold (where.ts): `"AllocationAmount > 85000"`,
   * `"Reason = Induced and Depth >= 1"`, `"TypeName ~ /String/i"`, `"ClrInstanceID in (0, 1)"`.
   * A row without the field fails. Tested after the other filters, on the rows they keep.
   */
  where?: string | readonly WhereCondition[];
}

export class QueryResult implements Iterable<EventRow> {
  constructor(
    private readonly table: EventTable,
    /** Matching row indices. */
    readonly indices: Uint32Array,
  ) {}

  get length(): number {
    return this.indices.length;
  }

  /** One moving cursor over the matching rows. */
  [Symbol.iterator](): Iterator<EventRow> {
    return this.table.cursor(this.indices);
  }
}

function asArray<T>(v: OneOrMany<T>): readonly T[] {
  return Array.isArray(v) ? (v as readonly T[]) : [v as T];
}

function toRaw(bound: TimeBound, clock: TraceClock): bigint {
  if (typeof bound === "bigint") return bound;
  if (bound instanceof Date) return clock.fromDate(bound);
  return clock.fromRelativeMSec(bound);
}

function memberTest(values: readonly number[]): (v: number) => boolean {
  if (values.length === 1) {
    const x = values[0];
    return (v) => v === x;
  }
  const set = new Set(values);
  return (v) => set.has(v);
}

/** A test of a provider index: any of the providers named. */
function providerMaskTest(providers: ProviderTable, spec: OneOrMany<string | number>): (p: number) => boolean {
  const mask = new Uint8Array(Math.max(providers.length, 1));
  for (const key of asArray(spec)) for (const i of providers.find(key)) mask[i] = 1;
  return (p) => mask[p] === 1;
}

export function runQuery(table: EventTable, providers: ProviderTable, clock: TraceClock, q: QueryFilter): QueryResult {
  const c = table.columns;
  const n = table.length;
  const tests: ((i: number) => boolean)[] = [];
  // The type fields (provider, eventId, opcode, header type, task, level, keywords) are tested once per event type,
  // and a row by its type (no column of them is made); a row without a type is tested on the columns.
  const typeTests: { byType: (k: number) => boolean; byRow: (i: number) => boolean }[] = [];
  const byField = (f: "provider" | "eventId" | "opcode" | "headerType" | "task" | "level", test: (v: number) => boolean) =>
    typeTests.push({ byType: (k) => test(table.typeValues()[f][k]), byRow: (i) => test(c[f][i]) });
  if (q.provider !== undefined) byField("provider", providerMaskTest(providers, q.provider));
  if (q.eventId !== undefined) byField("eventId", memberTest(asArray(q.eventId)));
  if (q.opcode !== undefined) byField("opcode", memberTest(asArray(q.opcode)));
  if (q.task !== undefined) byField("task", memberTest(asArray(q.task)));
  if (q.headerType !== undefined) byField("headerType", memberTest(asArray(q.headerType)));
  if (q.level !== undefined) {
    const max = parseLevel(q.level);
    byField("level", (v) => v <= max);
  }
  if (q.keywords !== undefined) {
    const filter = parseKeywords(q.keywords);
    // each provider's bits as two 32-bit halves (no BigInt per row); without names, the same for all
    const masks = new Uint32Array(Math.max(providers.length, 1) * 2);
    for (let p = 0; p < masks.length / 2; p++) {
      const m = filter.byProvider.size === 0 ? filter.any : p < providers.length ? keywordMaskFor(filter, providers.get(p).guid) : 0n;
      masks[2 * p] = Number(BigInt.asUintN(32, m));
      masks[2 * p + 1] = Number(BigInt.asUintN(32, m >> 32n));
    }
    const hits = (p: number, words: Uint32Array, at: number) => ((words[2 * at] & masks[2 * p]) | (words[2 * at + 1] & masks[2 * p + 1])) !== 0;
    const halves = (kw: BigUint64Array) => new Uint32Array(kw.buffer, kw.byteOffset, kw.length * 2);
    let typeWords: Uint32Array | undefined, rowWords: Uint32Array | undefined;
    typeTests.push({
      byType: (k) => hits(table.typeValues().provider[k], (typeWords ??= halves(table.typeValues().keywords)), k),
      byRow: (i) => hits(table.typeFieldOf("provider", i), (rowWords ??= halves(c.keywords)), i),
    });
  }
  let typePass: Uint8Array | undefined;
  if (typeTests.length) {
    typePass = new Uint8Array(table.typeValues().provider.length);
    for (let k = 0; k < typePass.length; k++) typePass[k] = typeTests.every((t) => t.byType(k)) ? 1 : 0;
  }
  const untypedTest = (i: number) => typeTests.every((t) => t.byRow(i));
  const numeric: [OneOrMany<number> | undefined, ArrayLike<number>][] = [
    [q.pid, c.pid],
    [q.tid, c.tid],
    [q.processor, c.processor],
  ];
  for (const [values, col] of numeric) {
    if (values === undefined) continue;
    const test = memberTest(asArray(values));
    tests.push((i) => test(col[i]));
  }
  if (q.pid !== undefined || q.tid !== undefined) {
    // Rows whose header carries no process or thread id (their columns hold 0xFFFFFFFF) match no id.
    const flags = c.flags;
    tests.push((i) => (flags[i] & C.F_NO_PROCESS_INFO) === 0);
  }
  if (q.from !== undefined || q.to !== undefined) {
    const ts = new Uint32Array(c.timestamp.buffer, c.timestamp.byteOffset, n * 2);
    const split = (b: bigint) => [Number(BigInt.asIntN(32, b >> 32n)), Number(BigInt.asUintN(32, b))];
    if (q.from !== undefined) {
      const [h, l] = split(toRaw(q.from, clock));
      tests.push((i) => {
        const th = ts[2 * i + 1] | 0;
        return th > h || (th === h && ts[2 * i] >= l);
      });
    }
    if (q.to !== undefined) {
      const [h, l] = split(toRaw(q.to, clock));
      tests.push((i) => {
        const th = ts[2 * i + 1] | 0;
        return th < h || (th === h && ts[2 * i] <= l);
      });
    }
  }
  const rows = q.order === "time" ? table.timeOrder() : null;
  const out = new Uint32Array(n);
  let k = 0;
  const types = c.eventType;
  const typeCount = typePass ? typePass.length : 0;
  for (let j = 0; j < n; j++) {
    const i = rows ? rows[j] : j;
    if (typePass) {
      const t = types[i];
      if (t < typeCount ? typePass[t] !== 1 : !untypedTest(i)) continue;
    }
    let ok = true;
    for (let t = 0; t < tests.length; t++)
      if (!tests[t](i)) {
        ok = false;
        break;
      }
    if (ok) out[k++] = i;
  }
  const kept = out.slice(0, k);
  return new QueryResult(table, q.where === undefined ? kept : filterWhere(table, kept, q.where));
}
