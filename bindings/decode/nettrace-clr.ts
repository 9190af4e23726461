// The typed .NET runtime tables of an EventPipe file's rows, filled by a core's own fill (fillRowsOf:
// the same generated functions an .etl window's record walk calls), on the engine asked for: the rows'
// columns and bytes are copied into the core's memory, the tables filled there, then moved out with
// their references made offsets into the trace's bytes again. One core serves every window of a file.

import * as C from "../../assembly/codes.js";
import type { CoreExports } from "../core/index.js";
import { clrProgram } from "../schema/clr-program.js";
import { clrProviderIndex } from "../schema/clr-payload.js";
import { formatGuid } from "../schema/guid.js";
import { exactBlock, moveBlock } from "./clr-blocks.js";
import { instantiateCore, recycleMemory, type WasmSource } from "./loader.js";
import { metaOf, type TraceData } from "./trace-data.js";
import { setupClr } from "./windows.js";

/** A core that fills the typed tables of a file's windows, one after another; `dispose` when the file is read. */
export interface ClrFiller {
  core: CoreExports;
  dispose(): void;
}

/** A core with its typed tables turned on, on `engine`; undefined when memory is exhausted. */
export async function clrFiller(engine: "wasm" | "js", wasm?: WebAssembly.Module | WasmSource): Promise<ClrFiller | undefined> {
  // (the TypeScript core is loaded only when asked for, as windows.ts does)
  const core = engine === "js" ? (await import("../core/index.js")).createJsCore() : await instantiateCore(wasm);
  const dispose = () => {
    if (engine === "wasm") recycleMemory(core.memory as WebAssembly.Memory);
  };
  core.init(0, C.MIN_WINDOW, 0);
  if (!setupClr(core)) {
    dispose();
    return undefined;
  }
  return { core, dispose };
}

/** A copy of `src` in the core's memory: its address, or 0 when memory is exhausted. */
function put(core: CoreExports, src: ArrayBufferView, taken: number[]): number {
  const at = core.alloc(Math.max(8, src.byteLength));
  if (at !== 0) {
    new Uint8Array(core.memory.buffer, at, src.byteLength).set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength));
    taken.push(at);
  }
  return at;
}

/**
 * Fills `data.clr` (and `clrRows`) for the rows of `data`; leaves the trace without typed tables when
 * none of its providers is a .NET runtime provider or memory runs out.
 */
export function fillNettraceClr(data: TraceData, filler: ClrFiller): void {
  const provClr = new Int8Array(data.providerCount);
  for (let i = 0; i < data.providerCount; i++) provClr[i] = clrProviderIndex(formatGuid(metaOf(data), data.providersOffset + i * C.PROV_STRIDE + C.PROV_GUID));
  if (!provClr.some((p) => p >= 0) || data.eventCount === 0) return;
  const { core } = filler;
  const taken: number[] = [];
  try {
    const n = data.eventCount;
    const e = data.events;
    const store = put(core, data.bytes, taken);
    const provider = put(core, e.provider.subarray(0, n), taken), headerType = put(core, e.headerType.subarray(0, n), taken);
    const eventId = put(core, e.eventId.subarray(0, n), taken), version = put(core, e.version.subarray(0, n), taken);
    const payloadLength = put(core, e.payloadLength.subarray(0, n), taken), payloadOffset = put(core, e.payloadOffset.subarray(0, n), taken);
    const prov = put(core, provClr, taken);
    if (!store || !provider || !headerType || !eventId || !version || !payloadLength || !payloadOffset || !prov) return;
    // payloads at their place in the core's copy of the bytes
    core.shiftU32(payloadOffset, n, store);
    const rows = core.fillRowsOf(prov, provClr.length, n, provider, headerType, eventId, version, payloadOffset, payloadLength);
    const dir = new Uint32Array(core.memory.buffer, core.directory(), C.DIR_SLOTS);
    if (!rows || dir[C.DIR_CLR_MISSING]) return;
    const { layouts } = clrProgram();
    const d = new Uint32Array(core.memory.buffer, dir[C.DIR_CLR_DIR], (layouts.length * C.CLR_DIR_STRIDE) >>> 2);
    const u8 = new Uint8Array(core.memory.buffer);
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
      const block = exactBlock(t, count, cap, u8.subarray(at, at + cap * layouts[t].rowBytes));
      moveBlock(block, t, count, 0, [[store, store + data.bytes.length, -store]]);
      blocks.push(block);
    }
    data.clr = { counts, blocks };
    data.clrRows = rows;
  } finally {
    // the next window starts with empty tables (their blocks kept) and the heap as it was
    for (const at of taken) core.free(at);
    core.resetWindow();
  }
}
