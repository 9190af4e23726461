// The typed .NET runtime tables of an EventPipe file's rows, filled by the TypeScript core's own routine
// (core/clr.ts decodeClr, the twin of the WebAssembly one an .etl window runs): the rows' columns and
// bytes are laid out in a core's memory as a window's would be, the tables filled there, then moved out
// with their references made offsets into the trace's bytes again.

import * as C from "../../assembly/codes.js";
import { CoreState } from "../core/state.js";
import { HEAP_BASE, heapAlloc, reserveMemory } from "../core/memory.js";
import { decodeClr } from "../core/clr.js";
import { clrProgram } from "../schema/clr-program.js";
import { clrProviderIndex } from "../schema/clr-payload.js";
import { formatGuid } from "../schema/guid.js";
import { moveBlock } from "./clr-blocks.js";
import type { TraceData } from "./trace-data.js";

/** A copy of `src` in the core's memory; its address, or 0 when memory is exhausted. */
function put(s: CoreState, src: ArrayBufferView): number {
  const at = heapAlloc(s, Math.max(8, src.byteLength));
  if (at !== 0) s.u8.set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength), at);
  return at;
}

/**
 * Fills `data.clr` (and `clrRows`) for the rows of `data`; leaves the trace without typed tables when
 * none of its providers is a .NET runtime provider or memory runs out.
 */
export function fillNettraceClr(data: TraceData): void {
  const provClr = new Int8Array(data.providerCount);
  for (let i = 0; i < data.providerCount; i++) provClr[i] = clrProviderIndex(formatGuid(data.bytes, data.providersOffset + i * C.PROV_STRIDE + C.PROV_GUID));
  if (!provClr.some((p) => p >= 0) || data.eventCount === 0) return;
  const s = new CoreState();
  const e = data.events;
  // room for the copies and the tables at once (each growth of the memory copies what is in it)
  reserveMemory(s, HEAP_BASE + data.bytes.length + 64 * data.eventCount + (4 << 20));
  const store = put(s, data.bytes);
  const provider = put(s, e.provider), headerType = put(s, e.headerType), eventId = put(s, e.eventId), version = put(s, e.version);
  const payloadLength = put(s, e.payloadLength);
  const payloadOffset = heapAlloc(s, e.payloadOffset.byteLength);
  const { words, typeStarts, lookup, layouts } = clrProgram();
  const program = put(s, words);
  const starts = put(s, typeStarts), table = put(s, lookup), prov = put(s, provClr);
  const dir = heapAlloc(s, layouts.length * C.CLR_DIR_STRIDE);
  if (!store || !provider || !headerType || !eventId || !version || !payloadLength || !payloadOffset || !program || !starts || !table || !prov || !dir) return;
  // payloads at their place in the copy of the bytes
  const offsets = new Uint32Array(s.u8.buffer, payloadOffset, data.eventCount);
  for (let i = 0; i < data.eventCount; i++) offsets[i] = e.payloadOffset[i] + store;
  s.rowCount = data.eventCount;
  s.colProvider = provider;
  s.colHeaderType = headerType;
  s.colEventId = eventId;
  s.colVersion = version;
  s.colPayloadLength = payloadLength;
  s.colPayloadOffset = payloadOffset;
  const rows = decodeClr(s, program, starts, layouts.length, table, prov, provClr.length, dir);
  if (!rows) return;
  const d = new Uint32Array(s.u8.buffer, dir, (layouts.length * C.CLR_DIR_STRIDE) >>> 2);
  const counts = new Uint32Array(layouts.length);
  const blocks: (Uint8Array | null)[] = [];
  for (let t = 0; t < layouts.length; t++) {
    const count = d[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_COUNT) >>> 2];
    const at = d[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_BLOCK) >>> 2];
    if (!count || !at) {
      blocks.push(null);
      continue;
    }
    counts[t] = count;
    const block = s.u8.slice(at, at + count * layouts[t].rowBytes);
    moveBlock(block, t, count, 0, -store);
    blocks.push(block);
  }
  data.clr = { counts, blocks };
  data.clrRows = rows;
}
