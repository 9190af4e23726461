// Provider table (assembly/providers.ts): one PROV_STRIDE-byte entry per distinct provider identity,
// found through an open-addressing hash on the 16 GUID bytes. Kernel groups (no GUID on disk) map
// to their conventional GUIDs.

import {
  PK_KERNEL_GROUP, PK_NONE, PROV_STRIDE, PROV_GUID, PROV_GROUP, PROV_KIND, PROV_WANTED, PROV_CLR, MAX_PROVIDERS,
  FF_PROVIDER, FILTER_PROVIDER_COUNT, FILTER_PROVIDERS,
} from "../../assembly/codes.js";
import { resize } from "./tables.js";
import { clrProviderOf } from "./clr.js";
import { STATIC_FILTER } from "./memory.js";
import type { CoreState } from "./state.js";

const NONE32 = 0xffffffff;
const NONE16 = 0xffff;

// Conventional GUIDs of the classic kernel groups, by group byte.
const KERNEL_GROUPS: readonly string[] = [
  "68fdd900-4a3e-11d1-84f4-0000f80464e3", // 0x00 EventTrace
  "3d6fa8d4-fe05-11d0-9dda-00c04fd7ba7c", // 0x01 DiskIo
  "3d6fa8d3-fe05-11d0-9dda-00c04fd7ba7c", // 0x02 PageFault
  "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c", // 0x03 Process
  "90cbdc39-4a3e-11d1-84f4-0000f80464e3", // 0x04 FileIo
  "3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c", // 0x05 Thread
  "9a280ac0-c8e0-11d1-84e2-00c04fb998a2", // 0x06 TcpIp
  "3282fc76-feed-498e-8aa7-e70f459d430e", // 0x07 Job
  "bf3a50c5-a9c9-4988-a005-2df0b7c80f80", // 0x08 UdpIp
  "ae53722e-c863-11d2-8659-00c04fa321a1", // 0x09 Registry
  "13976d09-a327-438c-950b-7f03192815c7", // 0x0a DbgPrint
  "01853a65-418f-4f36-aefc-dc0f1d2fd235", // 0x0b EventTraceConfig
  "99134383-5248-43fc-834b-529454e75df3", // 0x0c Spare1 / LBR
  "42695762-ea50-497a-9068-5cbbb35e0b95", // 0x0d Wnf
  "0268a8b6-74fd-4302-9dd0-6e8f1795c0cf", // 0x0e Pool
  "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc", // 0x0f PerfInfo
  "222962ab-6180-4b88-a825-346b75f2a24a", // 0x10 Heap
  "89497f50-effe-4440-8cf2-ce6b1cdcaca7", // 0x11 Object
  "e43445e0-0903-48c3-b878-ff0fccebdd04", // 0x12 Power
  "a9152f00-3f58-4bee-92a1-70c7d079d5dd", // 0x13 ModBound
  "2cb15d1d-5fc1-11d2-abe1-00a0c911f518", // 0x14 ImageLoad
  "b2d14872-7c5b-463d-8419-ee9bf7d23e04", // 0x15 Dpc
  "7687a439-f752-45b8-b741-321aec0f8df9", // 0x16 Cc
  "3ac66736-cc59-4cff-8115-8df50e39816b", // 0x17 CritSec
  "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3", // 0x18 StackWalk
  "9aec974b-5b8e-4118-9b92-3186d8002ce5", // 0x19 Ums
  "45d8cccd-539f-4b72-a8b7-5c683142609a", // 0x1a ALPC
  "d837ca92-12b9-44a5-ad6a-3a65b3578aa8", // 0x1b SplitIo
  "c861d0e2-a2c1-4d36-9f9c-970bab943a12", // 0x1c ThreadPool
  "7f2a405c-69b5-4bf9-a1f5-30e8f1afab5e", // 0x1d Hypervisor
  "2ce9a149-effe-42f0-a635-a1d39e26c8f2", // 0x1e HypervisorX
];

/** The GUID's 16 bytes in memory order, as four little-endian u32 words at `out[at]`. */
function putGuid(out: Uint32Array, at: number, text: string): void {
  const h = text.replace(/-/g, "");
  const byte = (i: number) => parseInt(h.slice(i * 2, i * 2 + 2), 16);
  const bytes = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15].map(byte);
  for (let k = 0; k < 4; k++) {
    out[at + k] = (bytes[k * 4] | (bytes[k * 4 + 1] << 8) | (bytes[k * 4 + 2] << 16) | (bytes[k * 4 + 3] << 24)) >>> 0;
  }
}

// kernel group byte -> conventional GUID (four words each), zero = no known GUID
const GROUP_GUIDS = new Uint32Array(32 * 4);
KERNEL_GROUPS.forEach((g, i) => putGuid(GROUP_GUIDS, i * 4, g));

export function initProviders(s: CoreState): void {
  s.provCount = 0;
  s.lastIndex = -1;
  s.groupIndex.fill(-1);
}

function hashOf(g0: number, g1: number, g2: number, g3: number): number {
  let h = Math.imul(g0 ^ Math.imul(g1, 0x9e3779b1), 0x85ebca6b) ^ Math.imul(g2 ^ Math.imul(g3, 0xc2b2ae35), 0x27d4eb2f);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 13)) >>> 0;
}

/** Moves the index to `size` slots. It lives outside linear memory: it always fits. */
function rehash(s: CoreState, size: number): boolean {
  s.hashSlots = new Uint32Array(size);
  s.hashMask = size - 1;
  for (let i = 0; i < s.provCount; i++) {
    const w = (s.provTable + i * PROV_STRIDE + PROV_GUID) >>> 2;
    insertSlot(s, s.u32[w], s.u32[w + 1], s.u32[w + 2], s.u32[w + 3], i);
  }
  return true;
}

function insertSlot(s: CoreState, g0: number, g1: number, g2: number, g3: number, index: number): void {
  let k = hashOf(g0, g1, g2, g3) & s.hashMask;
  while (s.hashSlots[k] !== 0) k = (k + 1) & s.hashMask;
  s.hashSlots[k] = index + 1;
}

/** 1 when the decode's provider filter keeps this GUID's rows (or there is none), else 0. */
function providerWanted(s: CoreState, g0: number, g1: number, g2: number, g3: number): number {
  if ((s.filterFlags & FF_PROVIDER) === 0) return 1;
  const U32 = s.u32;
  const n = U32[(STATIC_FILTER + FILTER_PROVIDER_COUNT) >>> 2];
  for (let i = 0; i < n; i++) {
    const w = (STATIC_FILTER + FILTER_PROVIDERS + i * 16) >>> 2;
    if (U32[w] === g0 && U32[w + 1] === g1 && U32[w + 2] === g2 && U32[w + 3] === g3) return 1;
  }
  return 0;
}

function addProvider(s: CoreState, g0: number, g1: number, g2: number, g3: number, group: number, kind: number): number {
  if (s.provCount >= MAX_PROVIDERS) return -1;
  if (s.provCount >= s.provCap) {
    const cap = Math.max(s.provCap * 2, 64);
    const t = resize(s, s.provTable, cap * PROV_STRIDE);
    if (t === 0) return -1;
    s.provTable = t;
    s.provCap = cap;
  }
  // Keep the index under half full: grow it before the entry goes in.
  if (s.hashSlots.length === 0) { if (!rehash(s, 256)) return -1; }
  else if ((s.provCount + 1) * 2 > s.hashMask && !rehash(s, (s.hashMask + 1) * 2)) return -1;
  const i = s.provCount++;
  const p = s.provTable + i * PROV_STRIDE;
  s.u8.fill(0, p, p + PROV_STRIDE);
  const w = (p + PROV_GUID) >>> 2;
  s.u32[w] = g0;
  s.u32[w + 1] = g1;
  s.u32[w + 2] = g2;
  s.u32[w + 3] = g3;
  s.u16[(p + PROV_GROUP) >>> 1] = group;
  s.u8[p + PROV_KIND] = kind;
  s.u8[p + PROV_WANTED] = providerWanted(s, g0, g1, g2, g3);
  s.u8[p + PROV_CLR] = clrProviderOf(s, g0, g1, g2, g3) & 0xff;
  insertSlot(s, g0, g1, g2, g3, i);
  return i;
}

/** Index of the provider with this GUID (four little-endian words), added on first sight. */
export function providerByGuid(s: CoreState, g0: number, g1: number, g2: number, g3: number, kind: number, group: number): number {
  if (s.lastIndex >= 0 && g0 === s.last0 && g1 === s.last1 && g2 === s.last2 && g3 === s.last3) return s.lastIndex;
  let found = -1;
  if (s.hashSlots.length !== 0) {
    const table = s.u32;
    let k = hashOf(g0, g1, g2, g3) & s.hashMask;
    for (;;) {
      const v = s.hashSlots[k];
      if (v === 0) break;
      const w = (s.provTable + (v - 1) * PROV_STRIDE + PROV_GUID) >>> 2;
      if (table[w] === g0 && table[w + 1] === g1 && table[w + 2] === g2 && table[w + 3] === g3) {
        found = v - 1;
        break;
      }
      k = (k + 1) & s.hashMask;
    }
  }
  if (found < 0) found = addProvider(s, g0, g1, g2, g3, group, kind);
  if (found >= 0) {
    s.last0 = g0;
    s.last1 = g1;
    s.last2 = g2;
    s.last3 = g3;
    s.lastIndex = found;
  }
  return found;
}

/** Provider of a system-family record, from its HookId. */
export function providerByHook(s: CoreState, hookId: number): number {
  let group = hookId >>> 8;
  // HookId 0x030A (Process group, type 10) is the Image Load event.
  if (hookId === 0x030a) group = 0x14;
  const cached = s.groupIndex[group];
  if (cached >= 0) return cached;
  let g0 = 0, g1 = 0, g2 = 0, g3 = 0;
  if (group < 32) {
    g0 = GROUP_GUIDS[group * 4];
    g1 = GROUP_GUIDS[group * 4 + 1];
    g2 = GROUP_GUIDS[group * 4 + 2];
    g3 = GROUP_GUIDS[group * 4 + 3];
  }
  if ((g0 | g1 | g2 | g3) === 0) {
    // Unknown group: a private identity (hi = group << 56, lo = all ones).
    g0 = NONE32;
    g1 = NONE32;
    g2 = 0;
    g3 = (group << 24) >>> 0;
  }
  const i = providerByGuid(s, g0, g1, g2, g3, PK_KERNEL_GROUP, group);
  if (i >= 0) s.groupIndex[group] = i;
  return i;
}

/** Provider entry for records that carry no provider identity. */
export function providerNone(s: CoreState): number {
  return providerByGuid(s, 0, 0, 0, 0, PK_NONE, NONE16);
}

/** The provider of a PROV_STRIDE-byte struct (another core's), added if new (eventtypes.ts seedTypes). */
export function seedProvider(s: CoreState, p: number): number {
  const w = (p + PROV_GUID) >>> 2;
  return providerByGuid(s, s.u32[w], s.u32[w + 1], s.u32[w + 2], s.u32[w + 3], s.u8[p + PROV_KIND], s.dv.getUint16(p + PROV_GROUP, true));
}
