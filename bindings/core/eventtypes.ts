// Event type table (assembly/eventtypes.ts): one TYPE_STRIDE-byte entry per distinct (provider,
// event id, version, opcode, header type, keywords, task, level, channel), found through an
// open-addressing hash on that key, with a row count each. Every row stores its type's index in the
// eventType column. The key travels as five u32 words (a TypeKey): lo = provider | eventId << 16,
// hi = version | opcode << 16 | headerType << 24, the keywords' two halves, and
// tlc = task | level << 16 | channel << 24.

import { TYPE_STRIDE, TYPE_ROWS, TYPE_CLR, MAX_EVENT_TYPES, EVENT_TYPE_NONE, PROV_STRIDE, PROV_CLR } from "../../assembly/codes.js";
import { resize } from "./tables.js";
import { clrEventOf } from "./clr.js";
import { seedProvider } from "./providers.js";
import type { CoreState } from "./state.js";

export function typeHash(lo: number, hi: number, kwLo: number, kwHi: number, tlc: number): number {
  // (the keywords and tlc folded in by xor: a type's first word mostly tells it apart, and this is per record)
  let h = Math.imul(lo ^ kwLo ^ tlc ^ Math.imul(hi ^ kwHi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) >>> 0;
}

/** Moves the index to `size` slots. It lives outside linear memory: it always fits. */
function rehash(s: CoreState, size: number): boolean {
  s.typeSlots = new Uint32Array(size);
  s.typeMask = size - 1;
  for (let i = 0; i < s.typeCount; i++) {
    const w = (s.typeTable + i * TYPE_STRIDE) >>> 2;
    const u = s.u32;
    insertSlot(s, typeHash(u[w], u[w + 1], u[w + 2], u[w + 3], u[w + 4]), i);
  }
  return true;
}

function insertSlot(s: CoreState, hash: number, index: number): void {
  let k = hash & s.typeMask;
  while (s.typeSlots[k] !== 0) k = (k + 1) & s.typeMask;
  s.typeSlots[k] = index + 1;
}

function addType(s: CoreState, lo: number, hi: number, kwLo: number, kwHi: number, tlc: number): number {
  if (s.typeCount >= MAX_EVENT_TYPES) return EVENT_TYPE_NONE;
  if (s.typeCount >= s.typeCap) {
    const cap = Math.max(s.typeCap * 2, 64);
    const t = resize(s, s.typeTable, cap * TYPE_STRIDE);
    if (t === 0) return EVENT_TYPE_NONE;
    s.typeTable = t;
    s.typeCap = cap;
  }
  // Keep the index under half full: grow it before the entry goes in.
  if (s.typeMask === 0) { if (!rehash(s, 256)) return EVENT_TYPE_NONE; } // the starting one-slot index
  else if ((s.typeCount + 1) * 2 > s.typeMask && !rehash(s, (s.typeMask + 1) * 2)) return EVENT_TYPE_NONE;
  const i = s.typeCount++;
  const w = (s.typeTable + i * TYPE_STRIDE) >>> 2;
  s.u32.fill(0, w, w + TYPE_STRIDE / 4);
  s.u32[w] = lo;
  s.u32[w + 1] = hi;
  s.u32[w + 2] = kwLo;
  s.u32[w + 3] = kwHi;
  s.u32[w + 4] = tlc;
  s.u32[w + (TYPE_CLR >>> 2)] = clrOfKey(s, lo, hi) & 0xffff; // TYPE_CLR (i16), then zero bytes
  insertSlot(s, typeHash(lo, hi, kwLo, kwHi, tlc), i);
  return i;
}

/** The schema event (typed table) of rows with this key, -1 when none (assembly/eventtypes.ts). */
export function clrOfKey(s: CoreState, lo: number, hi: number): number {
  const p = (s.u8[s.provTable + (lo & 0xffff) * PROV_STRIDE + PROV_CLR] << 24) >> 24;
  return clrEventOf(s, p, hi >>> 24, lo >>> 16, hi & 0xffff);
}

/** The schema event of rows of type `type` (EVENT_TYPE_NONE: of the key), -1 when none. */
export function typeClr(s: CoreState, type: number, lo: number, hi: number): number {
  if (type === EVENT_TYPE_NONE) return clrOfKey(s, lo, hi);
  return (s.u16[(s.typeTable + type * TYPE_STRIDE + TYPE_CLR) >>> 1] << 16) >> 16;
}

/**
 * Type of a row with this key (EVENT_TYPE_NONE past MAX_EVENT_TYPES types), added on first sight;
 * counts the row. The record walk makes the first probe itself (the WebAssembly core's eventType)
 * and takes its views again after this call: it may allocate.
 */
export function findType(s: CoreState, lo: number, hi: number, kwLo: number, kwHi: number, tlc: number): number {
  let found = EVENT_TYPE_NONE;
  const table = s.u32;
  let k = typeHash(lo, hi, kwLo, kwHi, tlc) & s.typeMask;
  for (;;) {
    const v = s.typeSlots[k];
    if (v === 0) break;
    const w = (s.typeTable + (v - 1) * TYPE_STRIDE) >>> 2;
    if (table[w] === lo && table[w + 1] === hi && table[w + 2] === kwLo && table[w + 3] === kwHi && table[w + 4] === tlc) {
      found = v - 1;
      break;
    }
    k = (k + 1) & s.typeMask;
  }
  if (found === EVENT_TYPE_NONE) found = addType(s, lo, hi, kwLo, kwHi, tlc);
  if (found !== EVENT_TYPE_NONE) s.u32[(s.typeTable + found * TYPE_STRIDE + TYPE_ROWS) >>> 2]++;
  return found;
}

/** Zeroes every type's row count: a new window counts its own rows. */
export function clearRowCounts(s: CoreState): void {
  for (let i = 0; i < s.typeCount; i++) s.u32[(s.typeTable + i * TYPE_STRIDE + TYPE_ROWS) >>> 2] = 0;
}

/** The trace's providers and event types known so far, entered in order (assembly/eventtypes.ts). */
export function seedTypes(s: CoreState, provs: number, nProviders: number, types: number, nTypes: number): void {
  for (let i = 0; i < nProviders; i++) seedProvider(s, provs + i * PROV_STRIDE);
  for (let t = 0; t < nTypes; t++) {
    const w = (types + t * TYPE_STRIDE) >>> 2;
    const lo = s.u32[w], hi = s.u32[w + 1];
    const p = lo & 0xffff;
    if (p >= nProviders) continue;
    const k = seedProvider(s, provs + p * PROV_STRIDE);
    if (k >= 0) findType(s, ((lo & ~0xffff) | k) >>> 0, hi, s.u32[w + 2], s.u32[w + 3], s.u32[w + 4]);
  }
  clearRowCounts(s);
}
