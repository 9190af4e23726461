// The keywords and levels each provider's events carry, counted batch by batch (summary, doctor).

import { keywordNames, levelName } from "../schema/keywords.js";
import type { EventTable } from "./event-table.js";
import type { EventTypeTable } from "./event-types.js";
import type { ProviderTable } from "./provider-table.js";

/** What one provider's events carry. */
export interface ProviderKeywordUsage {
  /** Index in the provider table. */
  provider: number;
  guid: string;
  /** The provider's name, with its kernel group ("Windows Kernel/Process"). */
  name: string;
  rows: number;
  /** Every keyword bit its events carry, OR-ed. */
  keywords: bigint;
  /** Those bits by name (keywordNames: the manifest's names for the .NET runtime providers, else hex). */
  keywordNames: string[];
  /** Rows per level, lowest level first. */
  levels: { level: number; name: string; rows: number }[];
}

/**
 * Counts, per provider, the OR of its events' keywords and its rows per level: `add` a trace or each
 * batch of a stream (only its columns are read), then `result(providers)` with the whole trace's
 * provider table (a stream's end: providers keep their index from batch to batch).
 */
export class KeywordUsageCounter {
  /** Two 32-bit halves of the keyword OR per provider. */
  private kw = new Uint32Array(0);
  /** Rows per (provider, level): 256 per provider. */
  private perLevel = new Float64Array(0);

  add(trace: { events: EventTable; providers: ProviderTable; eventTypes: EventTypeTable }): void {
    const np = trace.providers.length;
    if (this.kw.length < np * 2) {
      const kw = new Uint32Array(np * 2);
      kw.set(this.kw);
      this.kw = kw;
      const levels = new Float64Array(np * 256);
      levels.set(this.perLevel);
      this.perLevel = levels;
    }
    const kw = this.kw,
      perLevel = this.perLevel;
    // Counted by event type: a type decides its rows' provider, keywords and level (the cores store
    // them per row only for rows without a type), and counts its rows.
    const types = trace.eventTypes;
    const nt = types.length;
    const typeKw = new Uint32Array(types.keywords.buffer, types.keywords.byteOffset, nt * 2);
    let typed = 0;
    for (let t = 0; t < nt; t++) {
      const rows = types.count[t];
      if (!rows) continue;
      typed += rows;
      const p = types.provider[t];
      perLevel[p * 256 + types.level[t]] += rows;
      kw[2 * p] |= typeKw[2 * t];
      kw[2 * p + 1] |= typeKw[2 * t + 1];
    }
    // (rows past the type table's room have no type: read row by row)
    const n = trace.events.length;
    if (typed < n) {
      const { eventType, provider, level, keywords } = trace.events.columns;
      const words = new Uint32Array(keywords.buffer, keywords.byteOffset, n * 2);
      for (let i = 0; i < n; i++) {
        if (eventType[i] < nt) continue;
        const p = provider[i];
        perLevel[p * 256 + level[i]]++;
        kw[2 * p] |= words[2 * i];
        kw[2 * p + 1] |= words[2 * i + 1];
      }
    }
  }

  /** One entry per provider with rows, in provider-table order. */
  result(providers: ProviderTable): ProviderKeywordUsage[] {
    const out: ProviderKeywordUsage[] = [];
    for (let p = 0; p < providers.length && p * 256 < this.perLevel.length; p++) {
      const levels: ProviderKeywordUsage["levels"] = [];
      let rows = 0;
      for (let l = 0; l < 256; l++) {
        const r = this.perLevel[p * 256 + l];
        if (r) levels.push({ level: l, name: levelName(l), rows: r });
        rows += r;
      }
      if (!rows) continue;
      const info = providers.get(p);
      const keywords = (BigInt(this.kw[2 * p + 1]) << 32n) | BigInt(this.kw[2 * p]);
      out.push({
        provider: p,
        guid: info.guid,
        name: info.group ? `${info.name}/${info.group}` : info.name,
        rows,
        keywords,
        keywordNames: keywordNames(info.guid, keywords),
        levels,
      });
    }
    return out;
  }
}
