// The small tables beside the events: processes (from the kernel's Process events) and providers
// (with their rows counted).

import type { TraceClock } from "../tables/info.js";
import type { ProcessTable } from "../tables/processes.js";
import type { ProviderTable } from "../tables/provider-table.js";
import { DictionaryBuilder, halvesOf, setInt64, type ExportBatch, type ExportField } from "./columns.js";

export const PROCESS_FIELDS: readonly ExportField[] = [
  { name: "pid", type: "uint32", nullable: false },
  { name: "parentPid", type: "uint32", nullable: false },
  { name: "processName", type: "utf8", nullable: false },
  { name: "imageName", type: "utf8", nullable: false },
  { name: "commandLine", type: "utf8", nullable: false },
  { name: "startTime", type: "timestamp", nullable: true },
  { name: "endTime", type: "timestamp", nullable: true },
  { name: "startTimestamp", type: "int64", nullable: true },
  { name: "endTimestamp", type: "int64", nullable: true },
];

const FILETIME_UNIX_EPOCH = 116444736000000000n;

/** One row per process: `start`/`end` null where the process ran before the trace began or past its end. */
export function processBatch(processes: ProcessTable, clock: TraceClock): ExportBatch {
  const list = processes.processes;
  const n = list.length;
  const pid = new Uint32Array(n),
    parent = new Uint32Array(n);
  const name = new DictionaryBuilder(n),
    image = new DictionaryBuilder(n),
    command = new DictionaryBuilder(n);
  const startTime = new BigInt64Array(n),
    endTime = new BigInt64Array(n),
    start = new BigInt64Array(n),
    end = new BigInt64Array(n);
  const startValid = new Uint8Array(n),
    endValid = new Uint8Array(n);
  const us = (raw: bigint) => (clock.toFiletime(raw) - FILETIME_UNIX_EPOCH) / 10n;
  for (let i = 0; i < n; i++) {
    const p = list[i];
    pid[i] = p.pid;
    parent[i] = p.parentPid;
    name.set(i, p.name);
    image.set(i, p.imageName);
    command.set(i, p.commandLine);
    if (p.start !== null) {
      start[i] = p.start;
      startTime[i] = us(p.start);
      startValid[i] = 1;
    }
    if (p.end !== null) {
      end[i] = p.end;
      endTime[i] = us(p.end);
      endValid[i] = 1;
    }
  }
  const columns = [
    { values: pid },
    { values: parent },
    name.column(),
    image.column(),
    command.column(),
    { values: startTime, valid: startValid },
    { values: endTime, valid: endValid },
    { values: start, valid: startValid.slice() },
    { values: end, valid: endValid.slice() },
  ];
  return { length: n, columns };
}

export const PROVIDER_FIELDS: readonly ExportField[] = [
  { name: "provider", type: "utf8", nullable: false },
  { name: "providerName", type: "utf8", nullable: false },
  { name: "kernelGroup", type: "utf8", nullable: true },
  { name: "events", type: "uint64", nullable: false },
];

/** One row per provider: GUID, name, kernel group, rows counted (`counts[i]`: rows of provider i). */
export function providerBatch(providers: ProviderTable, counts: ArrayLike<number>): ExportBatch {
  const n = providers.length;
  const guid = new DictionaryBuilder(n),
    name = new DictionaryBuilder(n),
    group = new DictionaryBuilder(n);
  const events = new BigUint64Array(n);
  const eh = halvesOf(events);
  for (let i = 0; i < n; i++) {
    const p = providers.get(i);
    guid.set(i, p.guid);
    name.set(i, p.name);
    if (p.group === undefined) group.setNull(i);
    else group.set(i, p.group);
    setInt64(eh, i, counts[i] ?? 0);
  }
  const columns = [guid.column(), name.column(), group.column(), { values: events }];
  return { length: n, columns };
}
