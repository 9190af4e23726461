// The provider table: one entry per provider identity met in the trace.

import * as C from "../../assembly/codes.js";
import { formatGuid, guidOfKey } from "../schema/guid.js";
import { KNOWN_PROVIDERS } from "../schema/known-providers.js";
import { metaOf, type TraceData } from "../decode/result/trace-data.js";

export type ProviderKind = "guid" | "kernel-group" | "none";

export interface ProviderInfo {
  index: number;
  guid: string;
  /** Known name (CLR, kernel, TraceLogging provider traits), else the GUID in braces. */
  name: string;
  /** Kernel group name (TraceEvent's task name) for classic kernel groups. */
  group?: string;
  kind: ProviderKind;
}

export class ProviderTable implements Iterable<ProviderInfo> {
  readonly length: number;
  private readonly entries: ProviderInfo[] = [];

  constructor(data: TraceData, tracedNames: Map<number, string>) {
    this.length = data.providerCount;
    const b = metaOf(data);
    for (let i = 0; i < this.length; i++) {
      const at = data.providersOffset + i * C.PROV_STRIDE;
      const kindCode = b[at + C.PROV_KIND];
      const groupByte = b[at + C.PROV_GROUP] | (b[at + C.PROV_GROUP + 1] << 8);
      const kind: ProviderKind = kindCode === C.PK_KERNEL_GROUP ? "kernel-group" : kindCode === C.PK_NONE ? "none" : "guid";
      const guid = formatGuid(b, at + C.PROV_GUID);
      const known = KNOWN_PROVIDERS[guid];
      let name = known?.name ?? tracedNames.get(i);
      let group = known?.group;
      if (kind === "kernel-group" && !known) {
        name = "Windows Kernel";
        group = `Group(0x${groupByte.toString(16).padStart(2, "0")})`;
      }
      if (kind === "none") name = "(none)";
      this.entries.push({ index: i, guid, name: name ?? `{${guid}}`, group, kind });
    }
  }

  get(index: number): ProviderInfo {
    const p = this.entries[index];
    if (!p) throw new RangeError(`no provider ${index}`);
    return p;
  }

  /** Indices of the providers matching a name (case-insensitive), a GUID, or an index. */
  find(key: string | number): number[] {
    if (typeof key === "number") return key >= 0 && key < this.length ? [key] : [];
    const guid = guidOfKey(key);
    const lower = key.toLowerCase();
    return this.entries.filter((p) => (guid ? p.guid === guid : p.name.toLowerCase() === lower || p.group?.toLowerCase() === lower)).map((p) => p.index);
  }

  [Symbol.iterator](): Iterator<ProviderInfo> {
    return this.entries[Symbol.iterator]();
  }
}
