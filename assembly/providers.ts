// Provider table: one PROV_STRIDE-byte entry per distinct provider identity, found through an
// open-addressing hash on the 16 GUID bytes. Kernel groups (no GUID on disk) map to their conventional GUIDs.
// Both cores run this source (scripts/gen-core-twin.mjs): a GUID is passed as the address of its 16
// bytes, and hashed as four 32-bit words.

import {
  PK_KERNEL_GROUP, PK_NONE, PROV_STRIDE, PROV_GUID, PROV_GROUP, PROV_KIND, PROV_WANTED, PROV_CLR, MAX_PROVIDERS,
  FF_PROVIDER, FILTER_PROVIDER_COUNT, FILTER_PROVIDERS,
  PROVIDER_BLOCK_BYTES,
} from "./codes";
import { clrProviderOf } from "./clr";
import { allocate, release, resize } from "./tables";
import { Mem, FILTER_BLOCK, PROVIDER_BLOCK, ld8, ld16, ld32, st8, st16, st32, fill, mul32 } from "./memory-access";

// The static block PROVIDER_BLOCK (PROVIDER_BLOCK_BYTES):
const GROUP_INDEX: usize = 0; // u16 per kernel group byte: provider index, 0xFFFF = not yet seen
const GROUP_GUIDS: usize = 512; // 16 bytes per group byte below 32: its conventional GUID, zero = none known
export const PROV_LAST: usize = 1024; // the GUID of the last lookup (m.provLast its index): consecutive records mostly share it
const SCRATCH: usize = 1040; // a GUID made here (an unknown group's, none)

/** A GUID written as its text reads: d1-d2-d3-d4 (d4 as two halves). */
function putGuid(m: Mem, p: usize, d1: u32, d2: u32, d3: u32, d4hi: u32, d4lo: u32): void {
  st32(m, p, d1);
  st16(m, p + 4, d2);
  st16(m, p + 6, d3);
  st32(m, p + 8, bswap32(d4hi));
  st32(m, p + 12, bswap32(d4lo));
}

function bswap32(x: u32): u32 {
  return ((x >>> 24) | ((x >>> 8) & 0xff00) | ((x & 0xff00) << 8) | ((x & 0xff) << 24)) >>> 0;
}

function setGroup(m: Mem, group: u32, d1: u32, d2: u32, d3: u32, d4hi: u32, d4lo: u32): void {
  putGuid(m, PROVIDER_BLOCK + GROUP_GUIDS + <usize>group * 16, d1, d2, d3, d4hi, d4lo);
}

/** An empty table, and the kernel groups' GUIDs. */
export function initProviders(m: Mem): void {
  m.provCount = 0;
  m.provLast = -1;
  fill(m, PROVIDER_BLOCK + GROUP_INDEX, 0xff, 512);
  fill(m, PROVIDER_BLOCK + GROUP_GUIDS, 0, <usize>PROVIDER_BLOCK_BYTES - GROUP_GUIDS);
  setGroup(m, 0x00, 0x68fdd900, 0x4a3e, 0x11d1, 0x84f40000, 0xf80464e3); // EventTrace
  setGroup(m, 0x01, 0x3d6fa8d4, 0xfe05, 0x11d0, 0x9dda00c0, 0x4fd7ba7c); // DiskIo
  setGroup(m, 0x02, 0x3d6fa8d3, 0xfe05, 0x11d0, 0x9dda00c0, 0x4fd7ba7c); // PageFault
  setGroup(m, 0x03, 0x3d6fa8d0, 0xfe05, 0x11d0, 0x9dda00c0, 0x4fd7ba7c); // Process
  setGroup(m, 0x04, 0x90cbdc39, 0x4a3e, 0x11d1, 0x84f40000, 0xf80464e3); // FileIo
  setGroup(m, 0x05, 0x3d6fa8d1, 0xfe05, 0x11d0, 0x9dda00c0, 0x4fd7ba7c); // Thread
  setGroup(m, 0x06, 0x9a280ac0, 0xc8e0, 0x11d1, 0x84e200c0, 0x4fb998a2); // TcpIp
  setGroup(m, 0x07, 0x3282fc76, 0xfeed, 0x498e, 0x8aa7e70f, 0x459d430e); // Job
  setGroup(m, 0x08, 0xbf3a50c5, 0xa9c9, 0x4988, 0xa0052df0, 0xb7c80f80); // UdpIp
  setGroup(m, 0x09, 0xae53722e, 0xc863, 0x11d2, 0x865900c0, 0x4fa321a1); // Registry
  setGroup(m, 0x0a, 0x13976d09, 0xa327, 0x438c, 0x950b7f03, 0x192815c7); // DbgPrint
  setGroup(m, 0x0b, 0x01853a65, 0x418f, 0x4f36, 0xaefcdc0f, 0x1d2fd235); // EventTraceConfig
  setGroup(m, 0x0c, 0x99134383, 0x5248, 0x43fc, 0x834b5294, 0x54e75df3); // Spare1 / LBR
  setGroup(m, 0x0d, 0x42695762, 0xea50, 0x497a, 0x90685cbb, 0xb35e0b95); // Wnf
  setGroup(m, 0x0e, 0x0268a8b6, 0x74fd, 0x4302, 0x9dd06e8f, 0x1795c0cf); // Pool
  setGroup(m, 0x0f, 0xce1dbfb4, 0x137e, 0x4da6, 0x87b03f59, 0xaa102cbc); // PerfInfo
  setGroup(m, 0x10, 0x222962ab, 0x6180, 0x4b88, 0xa825346b, 0x75f2a24a); // Heap
  setGroup(m, 0x11, 0x89497f50, 0xeffe, 0x4440, 0x8cf2ce6b, 0x1cdcaca7); // Object
  setGroup(m, 0x12, 0xe43445e0, 0x0903, 0x48c3, 0xb878ff0f, 0xccebdd04); // Power
  setGroup(m, 0x13, 0xa9152f00, 0x3f58, 0x4bee, 0x92a170c7, 0xd079d5dd); // ModBound
  setGroup(m, 0x14, 0x2cb15d1d, 0x5fc1, 0x11d2, 0xabe100a0, 0xc911f518); // ImageLoad
  setGroup(m, 0x15, 0xb2d14872, 0x7c5b, 0x463d, 0x8419ee9b, 0xf7d23e04); // Dpc
  setGroup(m, 0x16, 0x7687a439, 0xf752, 0x45b8, 0xb741321a, 0xec0f8df9); // Cc
  setGroup(m, 0x17, 0x3ac66736, 0xcc59, 0x4cff, 0x81158df5, 0x0e39816b); // CritSec
  setGroup(m, 0x18, 0xdef2fe46, 0x7bd6, 0x4b80, 0xbd94f57f, 0xe20d0ce3); // StackWalk
  setGroup(m, 0x19, 0x9aec974b, 0x5b8e, 0x4118, 0x9b923186, 0xd8002ce5); // Ums
  setGroup(m, 0x1a, 0x45d8cccd, 0x539f, 0x4b72, 0xa8b75c68, 0x3142609a); // ALPC
  setGroup(m, 0x1b, 0xd837ca92, 0x12b9, 0x44a5, 0xad6a3a65, 0xb3578aa8); // SplitIo
  setGroup(m, 0x1c, 0xc861d0e2, 0xa2c1, 0x4d36, 0x9f9c970b, 0xab943a12); // ThreadPool
  setGroup(m, 0x1d, 0x7f2a405c, 0x69b5, 0x4bf9, 0xa1f530e8, 0xf1afab5e); // Hypervisor
  setGroup(m, 0x1e, 0x2ce9a149, 0xeffe, 0x42f0, 0xa635a1d3, 0x9e26c8f2); // HypervisorX
  }

/** Whether the 16 bytes at `a` and `b` are equal. */
function sameGuid(m: Mem, a: usize, b: usize): bool {
  return ld32(m, a) == ld32(m, b) && ld32(m, a + 4) == ld32(m, b + 4) && ld32(m, a + 8) == ld32(m, b + 8) && ld32(m, a + 12) == ld32(m, b + 12);
}

function copyGuid(m: Mem, to: usize, from: usize): void {
  st32(m, to, ld32(m, from));
  st32(m, to + 4, ld32(m, from + 4));
  st32(m, to + 8, ld32(m, from + 8));
  st32(m, to + 12, ld32(m, from + 12));
}

function hashOf(m: Mem, g: usize): u32 {
  let h = mul32(ld32(m, g) ^ mul32(ld32(m, g + 4), 0x9e3779b1), 0x85ebca6b) ^ mul32(ld32(m, g + 8) ^ mul32(ld32(m, g + 12), 0xc2b2ae35), 0x27d4eb2f);
  h = mul32(h ^ (h >>> 15), 0x2c1b3c6d);
  return (h ^ (h >>> 13)) >>> 0;
}

/** Moves the index to `newSize` slots; false (the old index kept) when memory is exhausted. */
function rehash(m: Mem, newSize: u32): bool {
  let slots = allocate(m, <usize>newSize * 4);
  if (slots == 0) return false;
  if (m.provSlots != 0) release(m, m.provSlots);
  m.provSlots = slots;
  fill(m, slots, 0, <usize>newSize * 4);
  m.provMask = newSize - 1;
  for (let i: u32 = 0; i < m.provCount; i++) insertSlot(m, m.provTable + <usize>i * PROV_STRIDE + PROV_GUID, i);
  return true;
}

function insertSlot(m: Mem, g: usize, index: u32): void {
  let s = hashOf(m, g) & m.provMask;
  while (ld32(m, m.provSlots + <usize>s * 4) != 0) s = (s + 1) & m.provMask;
  st32(m, m.provSlots + <usize>s * 4, index + 1);
}

/** 1 when the decode's provider filter keeps this GUID's rows (or there is none), else 0. */
function providerWanted(m: Mem, g: usize): u32 {
  if ((m.filterFlags & FF_PROVIDER) == 0) return 1;
  let n = ld32(m, FILTER_BLOCK + FILTER_PROVIDER_COUNT);
  for (let i: u32 = 0; i < n; i++) {
    if (sameGuid(m, FILTER_BLOCK + FILTER_PROVIDERS + <usize>i * 16, g)) return 1;
  }
  return 0;
}

function addProvider(m: Mem, g: usize, group: u32, kind: u32): i32 {
  if (m.provCount >= <u32>MAX_PROVIDERS) return -1;
  if (m.provCount >= m.provCap) {
    let cap: u32 = m.provCap * 2 > 64 ? m.provCap * 2 : 64;
    let t = resize(m, m.provTable, <usize>cap * PROV_STRIDE);
    if (t == 0) return -1;
    m.provTable = t;
    m.provCap = cap;
  }
  // Keep the index under half full: grow it before the entry goes in.
  if (m.provSlots == 0) { if (!rehash(m, 256)) return -1; }
  else if ((m.provCount + 1) * 2 > m.provMask && !rehash(m, (m.provMask + 1) * 2)) return -1;
  let i = m.provCount++;
  let p = m.provTable + <usize>i * PROV_STRIDE;
  fill(m, p, 0, PROV_STRIDE);
  copyGuid(m, p + PROV_GUID, g);
  st16(m, p + PROV_GROUP, group);
  st8(m, p + PROV_KIND, kind);
  st8(m, p + PROV_WANTED, providerWanted(m, g));
  st8(m, p + PROV_CLR, <u32>clrProviderOf(m, g) & 0xff);
  insertSlot(m, p + PROV_GUID, i);
  return <i32>i;
}

/** Index of the provider with the GUID at `g` (16 bytes), added on first sight; -1 when the table is full. */
export function providerByGuid(m: Mem, g: usize, kind: u32, group: u32): i32 {
  let last = PROVIDER_BLOCK + PROV_LAST;
  if (m.provLast >= 0 && sameGuid(m, g, last)) return m.provLast;
  let found: i32 = -1;
  if (m.provSlots != 0) {
    let s = hashOf(m, g) & m.provMask;
    while (true) {
      let v = ld32(m, m.provSlots + <usize>s * 4);
      if (v == 0) break;
      if (sameGuid(m, m.provTable + <usize>(v - 1) * PROV_STRIDE + PROV_GUID, g)) {
        found = <i32>(v - 1);
        break;
      }
      s = (s + 1) & m.provMask;
    }
  }
  if (found < 0) found = addProvider(m, g, group, kind);
  if (found >= 0) {
    copyGuid(m, last, g);
    m.provLast = found;
  }
  return found;
}

/** Provider of a system-family record, from its HookId. */
export function providerByHook(m: Mem, hookId: u32): i32 {
  let group = hookId >>> 8;
  // HookId 0x030A (Process group, type 10) is the Image Load event.
  if (hookId == 0x030a) group = 0x14;
  let at = PROVIDER_BLOCK + GROUP_INDEX + <usize>group * 2;
  let cached = ld16(m, at);
  if (cached != 0xffff) return <i32>cached;
  let g = PROVIDER_BLOCK + GROUP_GUIDS + <usize>group * 16;
  if (group >= 32 || (ld32(m, g) | ld32(m, g + 4) | ld32(m, g + 8) | ld32(m, g + 12)) == 0) {
    // Unknown group: a private identity (the GUID's last byte the group, the first eight 0xFF) that
    // cannot collide with a real GUID's index.
    g = PROVIDER_BLOCK + SCRATCH;
    st32(m, g, 0xffffffff);
    st32(m, g + 4, 0xffffffff);
    st32(m, g + 8, 0);
    st32(m, g + 12, (group << 24) >>> 0);
  }
  let i = providerByGuid(m, g, PK_KERNEL_GROUP, group);
  if (i >= 0) st16(m, at, <u32>i);
  return i;
}

/** Provider entry for records that carry no provider identity. */
export function providerNone(m: Mem): i32 {
  let g = PROVIDER_BLOCK + SCRATCH;
  fill(m, g, 0, 16);
  return providerByGuid(m, g, PK_NONE, 0xffff);
}

/** The provider of a PROV_STRIDE-byte struct (another core's), added if new (eventtypes.ts seedTypes). */
export function seedProvider(m: Mem, p: usize): i32 {
  return providerByGuid(m, p + PROV_GUID, ld8(m, p + PROV_KIND), ld16(m, p + PROV_GROUP));
}
