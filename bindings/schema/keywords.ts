// Keywords and levels by name: the .NET runtime providers' keywords from the runtime manifest
// (generated/clr-keywords.ts) and the standard ETW levels. Filters take names or masks; rows name
// their keyword bits and level.
//
// Keyword names belong to a provider: "GC" is bit 0x1 of the runtime, rundown, private and Mono
// providers, "StartRundown" is 0x40 of the rundown provider only (where the runtime provider's 0x40 is
// StartEnumeration). So a filter's names are kept per provider and a row is tested against the bits
// its own provider gives them; numbers are masks that apply to every provider.

import { CLR_KEYWORDS, STANDARD_LEVELS } from "./generated/clr-keywords.js";
import { CLR_PROVIDERS } from "./clr-payload.js";
import { guidOfKey } from "./guid.js";

/** A keyword of a .NET runtime provider, from the manifest. */
export interface ProviderKeyword {
  /** Short name: the manifest's name without "Keyword" (and without "Rundown"/"Private" where it mirrors a runtime keyword). */
  name: string;
  mask: bigint;
  /** The manifest's name, e.g. "StartRundownKeyword". */
  manifestName: string;
}

/** Keywords as a filter takes them: a mask, a name, a list of either, or a string such as "GC,Loader", "GC+Jit" or "0x9". */
export type KeywordSpec = bigint | number | string | readonly (bigint | number | string)[];

/** A level as a filter takes it: a number (0-255) or a name ("Informational", "verbose", "win:Warning"). */
export type LevelSpec = number | string;

/** A keyword filter with its names resolved: `any` for every provider, `byProvider` (GUID) for names. */
export interface KeywordFilter {
  /** Bits given as numbers: they apply to every provider. */
  any: bigint;
  /** Bits given by name, per provider GUID (only providers that define one of the names). */
  byProvider: ReadonlyMap<string, bigint>;
  /** The names given, as written. */
  names: readonly string[];
}

/** A keyword or level name no provider defines: `known` lists the names there are. */
export class UnknownNameError extends TypeError {
  constructor(
    message: string,
    readonly known: readonly string[],
  ) {
    super(message);
  }
}

interface ProviderEntry {
  name: string;
  guid: string;
  keywords: ProviderKeyword[];
  /** Every accepted name (lower case) -> mask. */
  lookup: Map<string, bigint>;
}

/**
 * The packed table read (generated/clr-keywords.ts). Accepted names: the short name, the manifest's
 * name with and without "Keyword", and its display string, any case; one that would name two keywords
 * of a provider is left out.
 */
const PROVIDERS: ProviderEntry[] = CLR_KEYWORDS.map((packed, i) => {
  const keywords: ProviderKeyword[] = [];
  const lookup = new Map<string, bigint>();
  const owners = new Map<string, bigint | null>();
  for (const item of packed.split(",")) {
    const [name, mask, manifest, message] = item.split(":");
    const k = { name, mask: BigInt("0x" + mask), manifestName: manifest || name + "Keyword" };
    keywords.push(k);
    lookup.set(name.toLowerCase(), k.mask);
    for (const a of [k.manifestName, k.manifestName.replace(/Keyword$/, ""), message]) {
      if (!a) continue;
      const key = a.toLowerCase();
      owners.set(key, owners.has(key) && owners.get(key) !== k.mask ? null : k.mask);
    }
  }
  for (const [a, mask] of owners) if (mask !== null && !lookup.has(a)) lookup.set(a, mask);
  return { name: CLR_PROVIDERS[i].name, guid: CLR_PROVIDERS[i].guid, keywords, lookup };
});

const BY_GUID = new Map(PROVIDERS.map((p) => [p.guid, p]));

function entryOf(provider: string): ProviderEntry | undefined {
  const guid = guidOfKey(provider);
  if (guid) return BY_GUID.get(guid);
  const lower = provider.toLowerCase();
  return PROVIDERS.find((p) => p.name.toLowerCase() === lower);
}

/** The keywords the manifest gives a .NET runtime provider (name or GUID), lowest bit first; undefined for others. */
export function providerKeywords(provider: string): readonly ProviderKeyword[] | undefined {
  return entryOf(provider)?.keywords;
}

/** Every short keyword name of the .NET runtime providers, the runtime provider's first. */
export function keywordNameList(): string[] {
  return [...new Set(PROVIDERS.flatMap((p) => p.keywords.map((k) => k.name)))];
}

const hexBit = (bit: bigint) => "0x" + bit.toString(16);

/**
 * The names of the bits of `keywords` for a provider (GUID): the manifest's keyword names for the
 * .NET runtime providers, lowest bit first; bits no keyword of the provider names (and every bit of
 * other providers) as hex ("0x8000000000000000").
 */
export function keywordNames(providerGuid: string, keywords: bigint): string[] {
  let rest = BigInt.asUintN(64, keywords);
  if (rest === 0n) return [];
  const out: string[] = [];
  const p = BY_GUID.get(providerGuid);
  if (p) {
    for (const k of p.keywords) {
      if ((rest & k.mask) === k.mask) {
        out.push(k.name);
        rest &= ~k.mask;
      }
    }
  }
  for (let bit = 1n; rest !== 0n; bit <<= 1n) {
    if (rest & bit) {
      out.push(hexBit(bit));
      rest &= ~bit;
    }
  }
  return out;
}

/** Level names by value (0 LogAlways ... 5 Verbose). */
export const LEVEL_NAMES: readonly string[] = STANDARD_LEVELS;

/** A level's name: the standard ETW name (manifest's win:...), "Level(n)" for a level above Verbose. */
export function levelName(level: number): string {
  return LEVEL_NAMES[level] ?? `Level(${level})`;
}

/** Names a level filter accepts besides LEVEL_NAMES (TraceEvent's TraceEventLevel.Always). */
const LEVEL_ALIASES: Record<string, number> = { always: 0 };

/** A level by name or number: 0-255; names as LEVEL_NAMES (any case, "win:" prefix optional). */
export function parseLevel(spec: LevelSpec): number {
  if (typeof spec === "number") {
    if (!Number.isInteger(spec) || spec < 0 || spec > 255) throw new RangeError(`etw-wasm: level ${spec} is not an integer in 0..255`);
    return spec;
  }
  if (typeof spec !== "string") throw new TypeError(`etw-wasm: a level is a number or a name, not ${String(spec)}`);
  const text = spec.trim();
  if (/^(\d+|0x[0-9a-f]+)$/i.test(text)) return parseLevel(Number(text));
  const lower = text.toLowerCase().replace(/^win:/, "");
  const i = LEVEL_NAMES.findIndex((n) => n.toLowerCase() === lower);
  if (i >= 0) return i;
  if (lower in LEVEL_ALIASES) return LEVEL_ALIASES[lower];
  throw new UnknownNameError(`unknown level "${spec}": a number from 0 to 255 or one of ${LEVEL_NAMES.map((n, k) => `${n} (${k})`).join(", ")}`, LEVEL_NAMES);
}

/** The words of a keyword spec: names and numbers, split at commas, "+", "|" and spaces. */
function tokens(spec: KeywordSpec): (string | bigint)[] {
  const list = Array.isArray(spec) ? (spec as readonly (bigint | number | string)[]) : [spec as bigint | number | string];
  const out: (string | bigint)[] = [];
  for (const item of list) {
    if (typeof item === "bigint") out.push(item);
    else if (typeof item === "number") {
      if (!Number.isSafeInteger(item) || item < 0) throw new RangeError(`etw-wasm: keywords: ${item} is not a mask (a whole number from 0)`);
      out.push(BigInt(item));
    } else if (typeof item === "string") {
      for (const word of item.split(/[\s,+|]+/)) {
        if (!word) continue;
        out.push(/^(0x[0-9a-f]+|\d+)$/i.test(word) ? BigInt(word) : word);
      }
    } else throw new TypeError(`etw-wasm: keywords take names or masks, not ${String(item)}`);
  }
  return out;
}

/**
 * A keyword filter from names and masks. Numbers (bigint, number, "0x9") are masks for every
 * provider; a name gives, for each .NET runtime provider that defines it, that provider's bits.
 * Throws UnknownNameError for a name no provider defines, naming those there are.
 */
export function parseKeywords(spec: KeywordSpec): KeywordFilter {
  let any = 0n;
  const byProvider = new Map<string, bigint>();
  const names: string[] = [];
  const words = tokens(spec);
  if (!words.length) throw new TypeError("etw-wasm: keywords: no keyword given");
  for (const w of words) {
    if (typeof w === "bigint") {
      if (w < 0n || w > 0xffffffffffffffffn) throw new RangeError(`etw-wasm: keywords: ${w} is not a 64-bit mask`);
      any |= w;
      continue;
    }
    const lower = w.toLowerCase();
    let found = false;
    for (const p of PROVIDERS) {
      const mask = p.lookup.get(lower);
      if (mask === undefined) continue;
      byProvider.set(p.guid, (byProvider.get(p.guid) ?? 0n) | mask);
      found = true;
    }
    if (!found) {
      const known = keywordNameList();
      throw new UnknownNameError(`unknown keyword "${w}": a mask (e.g. 0x9) or keywords of the .NET runtime providers: ${known.join(", ")}`, known);
    }
    names.push(w);
  }
  return { any, byProvider, names };
}

/** The bits a keyword filter tests on rows of a provider (GUID). */
export function keywordMaskFor(filter: KeywordFilter, providerGuid: string): bigint {
  return filter.any | (filter.byProvider.get(providerGuid) ?? 0n);
}
