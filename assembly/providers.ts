// Provider table: one PROV_STRIDE-byte entry per distinct provider identity, found through an
// open-addressing hash on the 16 GUID bytes. Kernel groups (no GUID on disk) map to their conventional GUIDs.

import {
  PK_KERNEL_GROUP, PK_NONE, PROV_STRIDE, PROV_GUID, PROV_GROUP, PROV_KIND, PROV_WANTED, PROV_CLR, MAX_PROVIDERS,
  FF_PROVIDER, FILTER_PROVIDER_COUNT, FILTER_PROVIDERS,
} from "./codes";
import { clrProviderOf } from "./clr";
import { allocate, release, resize } from "./tables";
import { STATE, FILTER_BLOCK } from "./memory-access";

export let provCount: u32 = 0;
let provCap: u32 = 0;
export let provTable: usize = 0;

let hashSlots: usize = 0; // u32 per slot: provider index + 1, 0 = empty
let hashMask: u32 = 0;

// last lookup, because consecutive records usually share a provider (the record walk tests it inline)
export let lastLo: u64 = 0;
export let lastHi: u64 = 0;
export let lastIndex: i32 = -1;

// kernel group byte -> provider index (0xFFFF = not yet seen)
const groupIndex: usize = memory.data(512);
// kernel group byte -> conventional GUID (16 bytes each), zero = no known GUID
const groupGuids: usize = memory.data(32 * 16);

function putGuid(p: usize, d1: u32, d2: u16, d3: u16, d4: u64): void {
  store<u32>(p, d1);
  store<u16>(p, d2, 4);
  store<u16>(p, d3, 6);
  store<u64>(p, bswap<u64>(d4), 8);
}

function setGroup(group: u32, d1: u32, d2: u16, d3: u16, d4: u64): void {
  putGuid(groupGuids + (<usize>group << 4), d1, d2, d3, d4);
}

export function initProviders(): void {
  provCount = 0;
  lastIndex = -1;
  memory.fill(groupIndex, 0xff, 512);
  memory.fill(groupGuids, 0, 32 * 16);
  setGroup(0x00, 0x68fdd900, 0x4a3e, 0x11d1, 0x84f40000f80464e3); // EventTrace
  setGroup(0x01, 0x3d6fa8d4, 0xfe05, 0x11d0, 0x9dda00c04fd7ba7c); // DiskIo
  setGroup(0x02, 0x3d6fa8d3, 0xfe05, 0x11d0, 0x9dda00c04fd7ba7c); // PageFault
  setGroup(0x03, 0x3d6fa8d0, 0xfe05, 0x11d0, 0x9dda00c04fd7ba7c); // Process
  setGroup(0x04, 0x90cbdc39, 0x4a3e, 0x11d1, 0x84f40000f80464e3); // FileIo
  setGroup(0x05, 0x3d6fa8d1, 0xfe05, 0x11d0, 0x9dda00c04fd7ba7c); // Thread
  setGroup(0x06, 0x9a280ac0, 0xc8e0, 0x11d1, 0x84e200c04fb998a2); // TcpIp
  setGroup(0x07, 0x3282fc76, 0xfeed, 0x498e, 0x8aa7e70f459d430e); // Job
  setGroup(0x08, 0xbf3a50c5, 0xa9c9, 0x4988, 0xa0052df0b7c80f80); // UdpIp
  setGroup(0x09, 0xae53722e, 0xc863, 0x11d2, 0x865900c04fa321a1); // Registry
  setGroup(0x0a, 0x13976d09, 0xa327, 0x438c, 0x950b7f03192815c7); // DbgPrint
  setGroup(0x0b, 0x01853a65, 0x418f, 0x4f36, 0xaefcdc0f1d2fd235); // EventTraceConfig
  setGroup(0x0c, 0x99134383, 0x5248, 0x43fc, 0x834b529454e75df3); // Spare1 / LBR
  setGroup(0x0d, 0x42695762, 0xea50, 0x497a, 0x90685cbbb35e0b95); // Wnf
  setGroup(0x0e, 0x0268a8b6, 0x74fd, 0x4302, 0x9dd06e8f1795c0cf); // Pool
  setGroup(0x0f, 0xce1dbfb4, 0x137e, 0x4da6, 0x87b03f59aa102cbc); // PerfInfo
  setGroup(0x10, 0x222962ab, 0x6180, 0x4b88, 0xa825346b75f2a24a); // Heap
  setGroup(0x11, 0x89497f50, 0xeffe, 0x4440, 0x8cf2ce6b1cdcaca7); // Object
  setGroup(0x12, 0xe43445e0, 0x0903, 0x48c3, 0xb878ff0fccebdd04); // Power
  setGroup(0x13, 0xa9152f00, 0x3f58, 0x4bee, 0x92a170c7d079d5dd); // ModBound
  setGroup(0x14, 0x2cb15d1d, 0x5fc1, 0x11d2, 0xabe100a0c911f518); // ImageLoad
  setGroup(0x15, 0xb2d14872, 0x7c5b, 0x463d, 0x8419ee9bf7d23e04); // Dpc
  setGroup(0x16, 0x7687a439, 0xf752, 0x45b8, 0xb741321aec0f8df9); // Cc
  setGroup(0x17, 0x3ac66736, 0xcc59, 0x4cff, 0x81158df50e39816b); // CritSec
  setGroup(0x18, 0xdef2fe46, 0x7bd6, 0x4b80, 0xbd94f57fe20d0ce3); // StackWalk
  setGroup(0x19, 0x9aec974b, 0x5b8e, 0x4118, 0x9b923186d8002ce5); // Ums
  setGroup(0x1a, 0x45d8cccd, 0x539f, 0x4b72, 0xa8b75c683142609a); // ALPC
  setGroup(0x1b, 0xd837ca92, 0x12b9, 0x44a5, 0xad6a3a65b3578aa8); // SplitIo
  setGroup(0x1c, 0xc861d0e2, 0xa2c1, 0x4d36, 0x9f9c970bab943a12); // ThreadPool
  setGroup(0x1d, 0x7f2a405c, 0x69b5, 0x4bf9, 0xa1f530e8f1afab5e); // Hypervisor
  setGroup(0x1e, 0x2ce9a149, 0xeffe, 0x42f0, 0xa635a1d39e26c8f2); // HypervisorX
}

@inline function hashOf(lo: u64, hi: u64): u32 {
  let h = (lo ^ (hi * 0x9e3779b97f4a7c15)) * 0xff51afd7ed558ccd;
  return <u32>(h >> 32);
}

/** Moves the index to `newSize` slots; false (the old index kept) when memory is exhausted. */
function rehash(newSize: u32): bool {
  let slots = allocate(STATE, <usize>newSize << 2);
  if (slots == 0) return false;
  if (hashSlots != 0) release(STATE, hashSlots);
  hashSlots = slots;
  memory.fill(hashSlots, 0, <usize>newSize << 2);
  hashMask = newSize - 1;
  for (let i: u32 = 0; i < provCount; i++) {
    let p = provTable + <usize>i * PROV_STRIDE + PROV_GUID;
    insertSlot(load<u64>(p), load<u64>(p, 8), i);
  }
  return true;
}

function insertSlot(lo: u64, hi: u64, index: u32): void {
  let s = hashOf(lo, hi) & hashMask;
  while (load<u32>(hashSlots + (<usize>s << 2)) != 0) s = (s + 1) & hashMask;
  store<u32>(hashSlots + (<usize>s << 2), index + 1);
}

/** 1 when the decode's provider filter keeps this GUID's rows (or there is none), else 0. */
function providerWanted(lo: u64, hi: u64): u32 {
  if ((STATE.filterFlags & FF_PROVIDER) == 0) return 1;
  let n = load<u32>(FILTER_BLOCK + FILTER_PROVIDER_COUNT);
  for (let i: u32 = 0; i < n; i++) {
    let g = FILTER_BLOCK + FILTER_PROVIDERS + (<usize>i << 4);
    if (load<u64>(g) == lo && load<u64>(g, 8) == hi) return 1;
  }
  return 0;
}

function addProvider(lo: u64, hi: u64, group: u32, kind: u32): i32 {
  if (provCount >= <u32>MAX_PROVIDERS) return -1;
  if (provCount >= provCap) {
    let cap = max<u32>(provCap << 1, 64);
    let t = resize(STATE, provTable, <usize>cap * PROV_STRIDE);
    if (t == 0) return -1;
    provTable = t;
    provCap = cap;
  }
  // Keep the index under half full: grow it before the entry goes in.
  if (hashSlots == 0) { if (!rehash(256)) return -1; }
  else if (((provCount + 1) << 1) > hashMask && !rehash((hashMask + 1) << 1)) return -1;
  let i = provCount++;
  let p = provTable + <usize>i * PROV_STRIDE;
  memory.fill(p, 0, PROV_STRIDE);
  store<u64>(p + PROV_GUID, lo);
  store<u64>(p + PROV_GUID, hi, 8);
  store<u16>(p + PROV_GROUP, <u16>group);
  store<u8>(p + PROV_KIND, <u8>kind);
  store<u8>(p + PROV_WANTED, <u8>providerWanted(lo, hi));
  store<i8>(p + PROV_CLR, <i8>clrProviderOf(lo, hi));
  insertSlot(lo, hi, i);
  return <i32>i;
}

/** Index of the provider with this GUID (two little-endian halves), added on first sight. */
export function providerByGuid(lo: u64, hi: u64, kind: u32, group: u32): i32 {
  if (lastIndex >= 0 && lo == lastLo && hi == lastHi) return lastIndex;
  let found: i32 = -1;
  if (hashSlots != 0) {
    let s = hashOf(lo, hi) & hashMask;
    while (true) {
      let v = load<u32>(hashSlots + (<usize>s << 2));
      if (v == 0) break;
      let p = provTable + <usize>(v - 1) * PROV_STRIDE + PROV_GUID;
      if (load<u64>(p) == lo && load<u64>(p, 8) == hi) {
        found = <i32>(v - 1);
        break;
      }
      s = (s + 1) & hashMask;
    }
  }
  if (found < 0) found = addProvider(lo, hi, group, kind);
  if (found >= 0) {
    lastLo = lo;
    lastHi = hi;
    lastIndex = found;
  }
  return found;
}

/** Provider of a system-family record, from its HookId. */
export function providerByHook(hookId: u32): i32 {
  let group = hookId >> 8;
  // HookId 0x030A (Process group, type 10) is the Image Load event.
  if (hookId == 0x030a) group = 0x14;
  let cached = <i32>load<u16>(groupIndex + (<usize>group << 1));
  if (cached != 0xffff) return cached;
  let lo: u64 = 0;
  let hi: u64 = 0;
  if (group < 32) {
    let g = groupGuids + (<usize>group << 4);
    lo = load<u64>(g);
    hi = load<u64>(g, 8);
  }
  let kind = PK_KERNEL_GROUP;
  if (lo == 0 && hi == 0) {
    // Unknown group: a private identity that cannot collide with a real GUID's index.
    hi = <u64>group << 56;
    lo = 0xffffffffffffffff;
  }
  let i = providerByGuid(lo, hi, kind, group);
  if (i >= 0) store<u16>(groupIndex + (<usize>group << 1), <u16>i);
  return i;
}

/** Provider entry for records that carry no provider identity. */
export function providerNone(): i32 {
  return providerByGuid(0, 0, PK_NONE, 0xffff);
}

/** The provider of a PROV_STRIDE-byte struct (another core's), added if new (eventtypes.ts seedTypes). */
export function seedProvider(p: usize): i32 {
  return providerByGuid(load<u64>(p, PROV_GUID), load<u64>(p, PROV_GUID + 8), <u32>load<u8>(p, PROV_KIND), <u32>load<u16>(p, PROV_GROUP));
}
