// Event type table: one TYPE_STRIDE-byte entry per distinct (provider, event id, version, opcode,
// header type, keywords, task, level, channel), found through an open-addressing hash on that key,
// with a row count each. Every row stores its type's index in the eventType column, and the fields
// of the key only when it has no type. The key travels as five u32 words, as an entry's first 20
// bytes hold it: lo = provider | eventId << 16, hi = version | opcode << 16 | headerType << 24, the
// keywords' two halves, and tlc = task | level << 16 | channel << 24.
//
// Both cores run this source (scripts/gen-core-twin.mjs). The record walks make the first probe of
// the index themselves (memory-access.ts typeHash, each core's own) and call findType for the rest.

import { TYPE_STRIDE, TYPE_ROWS, TYPE_CLR, MAX_EVENT_TYPES, EVENT_TYPE_NONE, PROV_STRIDE, PROV_CLR } from "./codes";
import { allocate, release, resize } from "./tables";
import { seedProvider } from "./providers";
import { clrEventOf } from "./clr";
import { Mem, ld8, ld16, ld32, st16, st32, fill, typeHash } from "./memory-access";

/** The hash of the entry at `p`. */
function entryHash(m: Mem, p: usize): u32 {
  return typeHash(m, ld32(m, p), ld32(m, p + 4), ld32(m, p + 8), ld32(m, p + 12), ld32(m, p + 16));
}

/** Moves the index to `newSize` slots; false (the old index kept) when memory is exhausted. */
function rehash(m: Mem, newSize: u32): bool {
  let slots = allocate(m, <usize>newSize * 4);
  if (slots == 0) return false;
  if (m.typeSlots != 0) release(m, m.typeSlots);
  m.typeSlots = slots;
  fill(m, slots, 0, <usize>newSize * 4);
  m.typeMask = newSize - 1;
  for (let i: u32 = 0; i < m.typeCount; i++) insertSlot(m, entryHash(m, m.typeTable + <usize>i * TYPE_STRIDE), i);
  return true;
}

function insertSlot(m: Mem, hash: u32, index: u32): void {
  let s = hash & m.typeMask;
  while (ld32(m, m.typeSlots + <usize>s * 4) != 0) s = (s + 1) & m.typeMask;
  st32(m, m.typeSlots + <usize>s * 4, index + 1);
}

function addType(m: Mem, lo: u32, hi: u32, kwLo: u32, kwHi: u32, tlc: u32): u32 {
  if (m.typeCount >= <u32>MAX_EVENT_TYPES) return EVENT_TYPE_NONE;
  if (m.typeCount >= m.typeCap) {
    let cap: u32 = m.typeCap * 2 > 64 ? m.typeCap * 2 : 64;
    let t = resize(m, m.typeTable, <usize>cap * TYPE_STRIDE);
    if (t == 0) return EVENT_TYPE_NONE;
    m.typeTable = t;
    m.typeCap = cap;
  }
  // Keep the index under half full: grow it before the entry goes in.
  if (m.typeSlots == 0) { if (!rehash(m, 256)) return EVENT_TYPE_NONE; }
  else if ((m.typeCount + 1) * 2 > m.typeMask && !rehash(m, (m.typeMask + 1) * 2)) return EVENT_TYPE_NONE;
  let i = m.typeCount++;
  let p = m.typeTable + <usize>i * TYPE_STRIDE;
  fill(m, p, 0, TYPE_STRIDE);
  st32(m, p, lo);
  st32(m, p + 4, hi);
  st32(m, p + 8, kwLo);
  st32(m, p + 12, kwHi);
  st32(m, p + 16, tlc);
  st16(m, p + TYPE_CLR, <u32>clrOfKey(m, lo, hi) & 0xffff);
  insertSlot(m, typeHash(m, lo, hi, kwLo, kwHi, tlc), i);
  return i;
}

/** The schema event (typed table) of rows with this key, -1 when none. */
export function clrOfKey(m: Mem, lo: u32, hi: u32): i32 {
  let c = ld8(m, m.provTable + <usize>(lo & 0xffff) * PROV_STRIDE + PROV_CLR);
  let p: i32 = c < 0x80 ? <i32>c : <i32>c - 256; // (an i8)
  return clrEventOf(m, p, hi >>> 24, lo >>> 16, hi & 0xffff);
}

/** The schema event of rows of type `type` (EVENT_TYPE_NONE: of the key), -1 when none. */
@inline export function typeClr(m: Mem, type: u32, lo: u32, hi: u32): i32 {
  if (type == EVENT_TYPE_NONE) return clrOfKey(m, lo, hi);
  let c = ld16(m, m.typeTable + <usize>type * TYPE_STRIDE + TYPE_CLR);
  return c < 0x8000 ? <i32>c : <i32>c - 65536; // (an i16)
}

/**
 * Type of a row with this key (EVENT_TYPE_NONE past MAX_EVENT_TYPES types), added on first sight;
 * counts the row. A record walk's own first probe missed it (or it is new): it may allocate.
 */
export function findType(m: Mem, lo: u32, hi: u32, kwLo: u32, kwHi: u32, tlc: u32): u32 {
  let found = EVENT_TYPE_NONE;
  if (m.typeSlots != 0) {
    let s = typeHash(m, lo, hi, kwLo, kwHi, tlc) & m.typeMask;
    while (true) {
      let v = ld32(m, m.typeSlots + <usize>s * 4);
      if (v == 0) break;
      let p = m.typeTable + <usize>(v - 1) * TYPE_STRIDE;
      if (ld32(m, p) == lo && ld32(m, p + 4) == hi && ld32(m, p + 8) == kwLo && ld32(m, p + 12) == kwHi && ld32(m, p + 16) == tlc) {
        found = v - 1;
        break;
      }
      s = (s + 1) & m.typeMask;
    }
  }
  if (found == EVENT_TYPE_NONE) found = addType(m, lo, hi, kwLo, kwHi, tlc);
  if (found != EVENT_TYPE_NONE) {
    let p = m.typeTable + <usize>found * TYPE_STRIDE + TYPE_ROWS;
    st32(m, p, ld32(m, p) + 1);
  }
  return found;
}

/** Zeroes every type's row count: a new window counts its own rows. */
export function clearRowCounts(m: Mem): void {
  for (let i: u32 = 0; i < m.typeCount; i++) st32(m, m.typeTable + <usize>i * TYPE_STRIDE + TYPE_ROWS, 0);
}

/**
 * Enters the trace's providers and event types known so far (PROV_STRIDE- and TYPE_STRIDE-byte
 * structs, numbered as the trace numbers them) in order, before the first row: a core continuing
 * the trace (parallel decoding) then numbers them as the trace does, and only what it meets first
 * needs mapping onto the trace's numbering.
 */
export function seedTypes(m: Mem, provs: usize, nProviders: u32, types: usize, nTypes: u32): void {
  for (let i: u32 = 0; i < nProviders; i++) seedProvider(m, provs + <usize>i * PROV_STRIDE);
  for (let t: u32 = 0; t < nTypes; t++) {
    let e = types + <usize>t * TYPE_STRIDE;
    let lo = ld32(m, e);
    let p = lo & 0xffff;
    if (p >= nProviders) continue;
    let k = seedProvider(m, provs + <usize>p * PROV_STRIDE);
    if (k >= 0) findType(m, ((lo & 0xffff0000) | <u32>k) >>> 0, ld32(m, e + 4), ld32(m, e + 8), ld32(m, e + 12), ld32(m, e + 16));
  }
  clearRowCounts(m);
}
