// Event type table: one TYPE_STRIDE-byte entry per distinct (provider, event id, version, opcode,
// header type, keywords, task, level, channel), found through an open-addressing hash on that key,
// with a row count each. Every row stores its type's index in the eventType column, and the fields
// of the key only when it has no type. The key travels as three words: `key` (provider .. header
// type, eventTypeKey), the keywords, and `tlc` (task | level << 16 | channel << 24).

import { TYPE_STRIDE, TYPE_ROWS, TYPE_CLR, TYPE_KEYWORDS, TYPE_TASK, MAX_EVENT_TYPES, EVENT_TYPE_NONE, PROV_STRIDE, PROV_CLR } from "./codes";
import { allocate, release, resize } from "./tables";
import { seedProvider } from "./providers";
import { clrEventOf } from "./clr";
import { STATE } from "./memory-access";

export let typeCount: u32 = 0;
let typeCap: u32 = 0;
export let typeTable: usize = 0;

export let hashSlots: usize = 0; // u32 per slot: type index + 1, 0 = empty (the record walk's fast path probes it too)
export let hashMask: u32 = 0;

/** The key's first word as the first 8 bytes of an entry hold it (TYPE_* offsets). */
@inline export function eventTypeKey(provider: u32, eventId: u32, version: u32, opcode: u32, headerType: u32): u64 {
  return <u64>((provider & 0xffff) | (eventId << 16)) | (<u64>((version & 0xffff) | ((opcode & 0xff) << 16) | (headerType << 24)) << 32);
}

/** The task, level and channel as bytes 16..19 of an entry hold them. */
@inline export function eventTypeTlc(task: u32, level: u32, channel: u32): u32 {
  return (task & 0xffff) | ((level & 0xff) << 16) | (channel << 24);
}

// (the keywords and tlc folded in by xor: a type's first word mostly tells it apart, and this is per
// record; multiplying the keywords in first made a whole decode 6-12% slower)
@inline export function typeHash(key: u64, keywords: u64, tlc: u32): u32 {
  return <u32>(((key ^ keywords ^ <u64>tlc) * 0x9e3779b97f4a7c15) >> 32);
}

/** Whether the entry at `p` has this key. */
@inline function keyAt(p: usize, key: u64, keywords: u64, tlc: u32): bool {
  return load<u64>(p) == key && load<u64>(p, TYPE_KEYWORDS) == keywords && load<u32>(p, TYPE_TASK) == tlc;
}

/** Moves the index to `newSize` slots; false (the old index kept) when memory is exhausted. */
function rehash(newSize: u32): bool {
  let slots = allocate(STATE, <usize>newSize << 2);
  if (slots == 0) return false;
  if (hashSlots != 0) release(STATE, hashSlots);
  hashSlots = slots;
  memory.fill(hashSlots, 0, <usize>newSize << 2);
  hashMask = newSize - 1;
  for (let i: u32 = 0; i < typeCount; i++) {
    let p = typeTable + <usize>i * TYPE_STRIDE;
    insertSlot(typeHash(load<u64>(p), load<u64>(p, TYPE_KEYWORDS), load<u32>(p, TYPE_TASK)), i);
  }
  return true;
}

function insertSlot(hash: u32, index: u32): void {
  let s = hash & hashMask;
  while (load<u32>(hashSlots + (<usize>s << 2)) != 0) s = (s + 1) & hashMask;
  store<u32>(hashSlots + (<usize>s << 2), index + 1);
}

function addType(key: u64, keywords: u64, tlc: u32): u32 {
  if (typeCount >= <u32>MAX_EVENT_TYPES) return EVENT_TYPE_NONE;
  if (typeCount >= typeCap) {
    let cap = max<u32>(typeCap << 1, 64);
    let t = resize(STATE, typeTable, <usize>cap * TYPE_STRIDE);
    if (t == 0) return EVENT_TYPE_NONE;
    typeTable = t;
    typeCap = cap;
  }
  // Keep the index under half full: grow it before the entry goes in.
  if (hashSlots == 0) { if (!rehash(256)) return EVENT_TYPE_NONE; }
  else if (((typeCount + 1) << 1) > hashMask && !rehash((hashMask + 1) << 1)) return EVENT_TYPE_NONE;
  let i = typeCount++;
  let p = typeTable + <usize>i * TYPE_STRIDE;
  memory.fill(p, 0, TYPE_STRIDE);
  store<u64>(p, key);
  store<u64>(p, keywords, TYPE_KEYWORDS);
  store<u32>(p, tlc, TYPE_TASK);
  store<i16>(p + TYPE_CLR, <i16>clrOfKey(key));
  insertSlot(typeHash(key, keywords, tlc), i);
  return i;
}

/** The schema event (typed table) of rows with this key, -1 when none. */
export function clrOfKey(key: u64): i32 {
  let provider = <usize>(key & 0xffff);
  let p = <i32>load<i8>(STATE.provTable + provider * PROV_STRIDE + PROV_CLR);
  return clrEventOf(p, <u32>(key >> 56), <u32>((key >> 16) & 0xffff), <u32>((key >> 32) & 0xffff));
}

/** The schema event of rows of type `type` (EVENT_TYPE_NONE: of `key`), -1 when none. */
@inline export function typeClr(type: u32, key: u64): i32 {
  return type != EVENT_TYPE_NONE ? <i32>load<i16>(typeTable + <usize>type * TYPE_STRIDE + TYPE_CLR) : clrOfKey(key);
}

/** Type of a row with this key, added on first sight; counts the row. */
function findType(key: u64, keywords: u64, tlc: u32): u32 {
  let found = EVENT_TYPE_NONE;
  if (hashSlots != 0) {
    let s = typeHash(key, keywords, tlc) & hashMask;
    while (true) {
      let v = load<u32>(hashSlots + (<usize>s << 2));
      if (v == 0) break;
      if (keyAt(typeTable + <usize>(v - 1) * TYPE_STRIDE, key, keywords, tlc)) {
        found = v - 1;
        break;
      }
      s = (s + 1) & hashMask;
    }
  }
  if (found == EVENT_TYPE_NONE) found = addType(key, keywords, tlc);
  if (found != EVENT_TYPE_NONE) {
    let p = typeTable + <usize>found * TYPE_STRIDE;
    store<u32>(p + TYPE_ROWS, load<u32>(p + TYPE_ROWS) + 1);
  }
  return found;
}

/**
 * Type of a row with this key (EVENT_TYPE_NONE past MAX_EVENT_TYPES types); counts the row. The
 * first probe is inlined into the record walk: the index stays under half full, so it mostly finds
 * the type. (Trying the last row's type first costs more: types alternate from row to row.)
 */
@inline export function eventType(key: u64, keywords: u64, tlc: u32): u32 {
  if (hashSlots != 0) {
    let v = load<u32>(hashSlots + (<usize>(typeHash(key, keywords, tlc) & hashMask) << 2));
    if (v != 0) {
      let p = typeTable + <usize>(v - 1) * TYPE_STRIDE;
      if (keyAt(p, key, keywords, tlc)) {
        store<u32>(p + TYPE_ROWS, load<u32>(p + TYPE_ROWS) + 1);
        return v - 1;
      }
    }
  }
  return findType(key, keywords, tlc);
}

/** Zeroes every type's row count: a new window counts its own rows. */
export function clearRowCounts(): void {
  for (let i: u32 = 0; i < typeCount; i++) store<u32>(typeTable + <usize>i * TYPE_STRIDE + TYPE_ROWS, 0);
}

/**
 * Enters the trace's providers and event types known so far (PROV_STRIDE- and TYPE_STRIDE-byte
 * structs, numbered as the trace numbers them) in order, before the first row: a core continuing
 * the trace (parallel decoding) then numbers them as the trace does, and only what it meets first
 * needs mapping onto the trace's numbering.
 */
export function seedTypes(provs: usize, nProviders: u32, types: usize, nTypes: u32): void {
  for (let i: u32 = 0; i < nProviders; i++) seedProvider(STATE, provs + <usize>i * PROV_STRIDE);
  for (let t: u32 = 0; t < nTypes; t++) {
    let e = types + <usize>t * TYPE_STRIDE;
    let key = load<u64>(e);
    let p = <u32>(key & 0xffff);
    if (p >= nProviders) continue;
    let k = seedProvider(STATE, provs + <usize>p * PROV_STRIDE);
    if (k >= 0) findType((key & ~(<u64>0xffff)) | <u64>k, load<u64>(e, TYPE_KEYWORDS), load<u32>(e, TYPE_TASK));
  }
  clearRowCounts();
}
