// Provider names a trace's ProviderTable does not carry up front, given where they are wanted (the
// CLI's summary, the viewer) rather than by openTrace, whose bundle stays small:
// - names from the trace's own descriptions: EventSource manifests (the provider's name is in its
//   manifest) and the TDH descriptions KernelTraceControl merges in (TraceLogging names, from the
//   provider traits, are already in the table);
// - names Windows registers providers under (bindings/schema/generated/os-providers.ts, generated from a
//   `logman query providers` listing: about a thousand names).
// Names given earlier always stay: KNOWN_PROVIDERS and provider traits, then the trace's manifests,
// then the OS table.

import { OS_PROVIDERS } from "../schema/generated/os-providers.js";
import { traceManifests, type TraceManifests } from "./trace-manifests.js";
import type { ProviderInfo, ProviderTable } from "../tables/provider-table.js";
import type { EventTable } from "../tables/event-table.js";

export { OS_PROVIDERS };

/** Whether a provider is still known only by its GUID. */
export function isUnnamed(p: ProviderInfo): boolean {
  return p.kind === "guid" && p.name === `{${p.guid}}`;
}

/** Names the providers still known only by GUID from `lookup` (GUID -> name). Returns how many it named. */
export function nameUnnamed(providers: ProviderTable, lookup: (guid: string) => string | undefined): number {
  let named = 0;
  for (const p of providers) {
    if (!isUnnamed(p)) continue;
    const name = lookup(p.guid);
    if (name) {
      p.name = name;
      named++;
    }
  }
  return named;
}

/** The registered name of a provider GUID (any case, braces or not), if the OS table has it. */
export function osProviderName(guid: string): string | undefined {
  const key = guid
    .trim()
    .replace(/^\{|\}$/g, "")
    .toLowerCase();
  return Object.hasOwn(OS_PROVIDERS, key) ? OS_PROVIDERS[key] : undefined;
}

/** Names unnamed providers from a trace's EventSource manifests and TDH descriptions. */
export function nameManifestProviders(providers: ProviderTable, manifests: TraceManifests): number {
  return nameUnnamed(providers, (guid) => manifests.providers.get(guid)?.name || undefined);
}

/** Names unnamed providers from the OS table. */
export function nameOsProviders(providers: ProviderTable): number {
  return nameUnnamed(providers, osProviderName);
}

/**
 * Names every provider of a trace it can: its manifests first, then the OS table. Call it before
 * event names are asked for: an event of a provider without a description is named after its provider.
 */
export function nameTraceProviders(trace: { providers: ProviderTable; events: EventTable }): number {
  if (![...trace.providers].some(isUnnamed)) return 0;
  return nameManifestProviders(trace.providers, traceManifests(trace.events)) + nameOsProviders(trace.providers);
}
