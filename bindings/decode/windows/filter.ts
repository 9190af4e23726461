// Decode-time filters: the `filter` decode option made into the core's filter block (codes.ts
// FILTER_*). The core asks it once per record where the row is committed; a record it rejects takes
// no row. Provider names resolve to GUIDs here, from the known-provider table.

import * as C from "../../../assembly/codes.js";
import { guidOfKey, parseGuid } from "../../schema/guid.js";
import { KNOWN_PROVIDERS } from "../../schema/known-providers.js";
import { parseKeywords, parseLevel, type KeywordSpec, type LevelSpec } from "../../schema/keywords.js";

type OneOrMany<T> = T | readonly T[];

/**
 * Which records take a row. Every given test must pass; a list matches any of its values (at most
 * `codes.FILTER_SET_MAX` values each). The logfile header record (row 0) is always kept: the clock
 * and `trace.info` read it.
 */
export interface DecodeFilter {
  /**
   * Provider GUID, or a name the known-provider table holds: "Microsoft-Windows-DotNETRuntime",
   * "Windows Kernel" (every kernel group), a kernel group as "Windows Kernel/Thread" (or just "Thread").
   */
  provider?: OneOrMany<string>;
  eventId?: OneOrMany<number>;
  opcode?: OneOrMany<number>;
  /**
   * Highest level kept (ETW semantics: level <= value; classic and kernel records have level 0): a
   * number or a name ("Informational", "Verbose").
   */
  level?: LevelSpec;
  /**
   * Records with any of these keyword bits (classic and kernel records have none): a mask, or names of
   * the .NET runtime providers' keywords ("GC", "Loader", "StartRundown"), or a list or string of both.
   * The core tests one mask for every provider: names become the union of their bits, and when only
   * names are given, the records kept are also limited to the providers that define them (so "GC"
   * keeps the runtime's GC events, not an EventSource's bit 0x1). Names with different bits in
   * different providers can then keep a little more than the query filter does (e.g. "GC,StartRundown"
   * keeps the runtime provider's events of bit 0x40, StartEnumeration).
   */
  keywords?: KeywordSpec;
  /** Process ids; records whose header carries no process id match none. */
  pid?: OneOrMany<number>;
  /** Thread ids; records whose header carries no thread id match none. */
  tid?: OneOrMany<number>;
  /** Raw timestamps, inclusive. */
  from?: bigint;
  to?: bigint;
}

function asArray<T>(v: OneOrMany<T>): readonly T[] {
  return Array.isArray(v) ? (v as readonly T[]) : [v as T];
}

/** The GUIDs (text form) a provider key names: a GUID, or known names and "name/group". */
export function providerGuids(key: string): string[] {
  if (typeof key !== "string") throw new TypeError(`etw-wasm: filter.provider takes names or GUIDs, not ${String(key)}`);
  const guid = guidOfKey(key);
  if (guid) return [guid];
  const lower = key.toLowerCase();
  const out: string[] = [];
  for (const [guid, p] of Object.entries(KNOWN_PROVIDERS)) {
    const name = p.name.toLowerCase(),
      group = p.group?.toLowerCase();
    if (name === lower || (group !== undefined && (group === lower || `${name}/${group}` === lower))) out.push(guid);
  }
  if (out.length === 0) {
    throw new TypeError(`etw-wasm: filter.provider: no known provider is named "${key}" (give its GUID)`);
  }
  return out;
}

function values(name: string, v: OneOrMany<number>, max: number): number[] {
  const list = asArray(v);
  if (list.length === 0 || list.length > C.FILTER_SET_MAX) {
    throw new RangeError(`etw-wasm: filter.${name} takes 1 to ${C.FILTER_SET_MAX} values, not ${list.length}`);
  }
  for (const x of list) {
    if (!Number.isInteger(x) || x < 0 || x > max) throw new RangeError(`etw-wasm: filter.${name}: ${String(x)} is not an integer in 0..${max}`);
  }
  return [...new Set(list)];
}

/** The filter block for `filter`, or undefined when it tests nothing (no filter: every row kept). */
export function encodeFilter(filter: DecodeFilter | undefined): Uint8Array | undefined {
  if (filter === undefined || filter === null) return undefined;
  if (typeof filter !== "object") throw new TypeError("etw-wasm: filter must be an object");
  const known = new Set(["provider", "eventId", "opcode", "level", "keywords", "pid", "tid", "from", "to"]);
  for (const k of Object.keys(filter)) {
    if (!known.has(k)) throw new TypeError(`etw-wasm: unknown filter field: ${k}`);
  }
  const block = new Uint8Array(C.FILTER_BYTES);
  const v = new DataView(block.buffer);
  let flags = 0;
  const putSet = (flag: number, countAt: number, at: number, list: number[]) => {
    flags |= flag;
    v.setUint32(countAt, list.length, true);
    list.forEach((x, i) => v.setUint32(at + 4 * i, x, true));
  };
  let keywordMask: bigint | undefined;
  let keywordProviders: string[] | undefined;
  if (filter.keywords !== undefined) {
    const k = parseKeywords(filter.keywords);
    keywordMask = k.any;
    for (const m of k.byProvider.values()) keywordMask |= m;
    if (k.any === 0n && k.byProvider.size) keywordProviders = [...k.byProvider.keys()];
  }
  if (filter.provider !== undefined || keywordProviders !== undefined) {
    let guids = filter.provider !== undefined ? [...new Set(asArray(filter.provider).flatMap(providerGuids))] : keywordProviders!;
    if (filter.provider !== undefined && keywordProviders) guids = guids.filter((g) => keywordProviders!.includes(g));
    if (guids.length > C.FILTER_SET_MAX) {
      throw new RangeError(`etw-wasm: filter.provider names ${guids.length} GUIDs; at most ${C.FILTER_SET_MAX}`);
    }
    flags |= C.FF_PROVIDER;
    v.setUint32(C.FILTER_PROVIDER_COUNT, guids.length, true);
    guids.forEach((g, i) => block.set(parseGuid(g), C.FILTER_PROVIDERS + 16 * i));
  }
  if (filter.eventId !== undefined) putSet(C.FF_EVENT_ID, C.FILTER_EVENT_ID_COUNT, C.FILTER_EVENT_IDS, values("eventId", filter.eventId, 0xffff));
  if (filter.opcode !== undefined) putSet(C.FF_OPCODE, C.FILTER_OPCODE_COUNT, C.FILTER_OPCODES, values("opcode", filter.opcode, 0xff));
  if (filter.pid !== undefined) putSet(C.FF_PID, C.FILTER_PID_COUNT, C.FILTER_PIDS, values("pid", filter.pid, 0xfffffffe));
  if (filter.tid !== undefined) putSet(C.FF_TID, C.FILTER_TID_COUNT, C.FILTER_TIDS, values("tid", filter.tid, 0xfffffffe));
  if (filter.level !== undefined) {
    let level: number;
    try {
      level = parseLevel(filter.level);
    } catch (e) {
      throw new RangeError(`etw-wasm: filter.level: ${String(filter.level)} is not an integer in 0..255 or a level name (${(e as Error).message})`);
    }
    flags |= C.FF_LEVEL;
    v.setUint32(C.FILTER_LEVEL, level, true);
  }
  if (keywordMask !== undefined) {
    flags |= C.FF_KEYWORDS;
    v.setBigUint64(C.FILTER_KEYWORDS, BigInt.asUintN(64, keywordMask), true);
  }
  for (const [name, flag, at] of [
    ["from", C.FF_FROM, C.FILTER_FROM],
    ["to", C.FF_TO, C.FILTER_TO],
  ] as const) {
    const t = filter[name];
    if (t === undefined) continue;
    if (typeof t !== "bigint") throw new TypeError(`etw-wasm: filter.${name} must be a raw timestamp (bigint)`);
    flags |= flag;
    v.setBigInt64(at, BigInt.asIntN(64, t), true);
  }
  if (flags === 0) return undefined;
  v.setUint32(C.FILTER_FLAGS, flags, true);
  return block;
}
