// The typed .NET runtime tables of an EventPipe file's rows, filled by the TypeScript core's own fill
// (core/clr.ts fillClrRows, through the same generated functions an .etl window's record walk calls):
// the rows' columns and bytes are laid out in a core's memory as a window's would be, the tables filled
// there, then moved out with their references made offsets into the trace's bytes again.

import * as C from "../../assembly/codes.js";
import { CoreState } from "../core/state.js";
import { HEAP_BASE, heapAlloc, reserveMemory } from "../core/memory.js";
import { fillClrRows, setClr } from "../core/clr.js";
import { clrProgram } from "../schema/clr-program.js";
import { CLR_PROVIDERS, clrProviderIndex } from "../schema/clr-payload.js";
import { formatGuid, parseGuid } from "../schema/guid.js";
import { exactBlock, moveBlock } from "./clr-blocks.js";
import { metaOf, type TraceData } from "./trace-data.js";

/** A copy of `src` in the core's memory; its address, or 0 when memory is exhausted. */
function put(s: CoreState, src: ArrayBufferView): number {
  const at = heapAlloc(s, Math.max(8, src.byteLength));
  if (at !== 0) s.u8.set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength), at);
  return at;
}

/** A core's memory with room for a byte store of `bytes` and the typed tables of `rows` rows; the store's address. */
export interface ClrPlace {
  s: CoreState;
  at: number;
}

/**
 * Memory for a trace's byte store inside a core's memory, so that its typed tables are filled where the
 * bytes already are (no copy of them); undefined when it cannot be had (then the store is plain memory).
 */
export function clrPlace(bytes: number, rows: number): ClrPlace | undefined {
  const s = new CoreState();
  // room for the store, the columns the fill reads and the tables at once (each growth copies what is in use)
  if (!reserveMemory(s, HEAP_BASE + bytes + 80 * rows + (4 << 20))) return undefined;
  const at = heapAlloc(s, Math.max(8, bytes));
  return at ? { s, at } : undefined;
}

/**
 * Fills `data.clr` (and `clrRows`) for the rows of `data`; leaves the trace without typed tables when
 * none of its providers is a .NET runtime provider or memory runs out. `place`: where `data.bytes` sits
 * in a core's memory already (clrPlace); else they are copied into one.
 */
export function fillNettraceClr(data: TraceData, place?: ClrPlace): void {
  const provClr = new Int8Array(data.providerCount);
  for (let i = 0; i < data.providerCount; i++) provClr[i] = clrProviderIndex(formatGuid(metaOf(data), data.providersOffset + i * C.PROV_STRIDE + C.PROV_GUID));
  if (!provClr.some((p) => p >= 0) || data.eventCount === 0) return;
  if (!place) {
    place = clrPlace(data.bytes.length, data.eventCount);
    if (!place) return;
    place.s.u8.set(data.bytes, place.at);
  }
  const { s, at: store } = place;
  const e = data.events;
  const provider = put(s, e.provider), headerType = put(s, e.headerType), eventId = put(s, e.eventId), version = put(s, e.version);
  const payloadLength = put(s, e.payloadLength);
  const payloadOffset = heapAlloc(s, e.payloadOffset.byteLength);
  const { words, typeStarts, lookup, layouts } = clrProgram();
  const guids = new Uint8Array(16 * CLR_PROVIDERS.length);
  CLR_PROVIDERS.forEach((p, i) => guids.set(parseGuid(p.guid), 16 * i));
  const program = put(s, words);
  const starts = put(s, typeStarts), table = put(s, lookup), g = put(s, guids);
  if (!store || !provider || !headerType || !eventId || !version || !payloadLength || !payloadOffset || !program || !starts || !table || !g) return;
  if (!setClr(s, program, starts, layouts.length, table, g, CLR_PROVIDERS.length)) return;
  // payloads at their place in the core's copy of the bytes
  const offsets = new Uint32Array(s.u8.buffer, payloadOffset, data.eventCount);
  const from = e.payloadOffset;
  for (let i = 0; i < data.eventCount; i++) offsets[i] = from[i] + store;
  s.rowCount = data.eventCount;
  s.colProvider = provider;
  s.colHeaderType = headerType;
  s.colEventId = eventId;
  s.colVersion = version;
  s.colPayloadLength = payloadLength;
  s.colPayloadOffset = payloadOffset;
  const rows = fillClrRows(s, provClr);
  if (!rows || s.clrMissing) return;
  const d = new Uint32Array(s.u8.buffer, s.clrDir, (layouts.length * C.CLR_DIR_STRIDE) >>> 2);
  const counts = new Uint32Array(layouts.length);
  const blocks: (Uint8Array | null)[] = [];
  for (let t = 0; t < layouts.length; t++) {
    const count = d[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_COUNT) >>> 2];
    const at = d[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_BLOCK) >>> 2];
    const cap = d[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_CAP) >>> 2];
    if (!count || !at) {
      blocks.push(null);
      continue;
    }
    counts[t] = count;
    const block = exactBlock(t, count, cap, s.u8.subarray(at, at + cap * layouts[t].rowBytes));
    moveBlock(block, t, count, 0, [[store, store + data.bytes.length, -store]]);
    blocks.push(block);
  }
  data.clr = { counts, blocks };
  data.clrRows = rows;
}
