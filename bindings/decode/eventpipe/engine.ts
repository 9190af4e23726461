// The EventPipe reader's core on either engine: one core, WebAssembly ("wasm") or its TypeScript twin
// ("js"), that walks each event block's records for readNettrace (assembly/nettrace-events.ts) and
// puts the events in dispatch order as event table rows (assembly/nettrace-rows.ts); on WebAssembly, the
// same core fills the typed .NET tables.

import { CoreWalker, jsWalkCore, type NettraceWalkCore, type NettraceWalker } from "../../eventpipe/walk.js";
import { dispatchOrder, eventRows, eventTypes } from "../../core/generated/nettrace-rows.js";
import { CoreState } from "../../core/state.js";
import { instantiateCore, recycleMemory, type WasmSource } from "../windows/loader.js";
import type { NettraceRowsCore } from "./rows.js";
import { coreFiller, placeFiller, type ClrFiller } from "./clr.js";

/** A file's reader core: its walker (for readNettrace) and its rows; `dispose()` when the file is read gives its memory back. */
export interface NettraceEngine {
  walker: NettraceWalker;
  rows: NettraceRowsCore;
  /**
   * What fills the typed .NET tables (`clrTables`): on WebAssembly the same core (one core's memory a
   * file, not two), on TypeScript a TypeScript core the store is built in.
   */
  filler?: ClrFiller;
  dispose(): void;
}

/**
 * The core for `engine`. "wasm" instantiates the WebAssembly core (`wasm`: the compiled module, else
 * the default one) with a memory of its own, into which each block and the events are copied; "js"
 * runs the same sources over a TypeScript core's memory.
 */
export async function nettraceEngine(engine: "wasm" | "js", wasm?: WebAssembly.Module | WasmSource, clrTables = false, placed = true): Promise<NettraceEngine> {
  if (engine === "js") {
    const s = new CoreState();
    const core: NettraceWalkCore & NettraceRowsCore = {
      ...jsWalkCore(s),
      nettraceOrder: (p) => dispatchOrder(s, p),
      nettraceRows: (p) => eventRows(s, p),
      nettraceTypes: (p) => eventTypes(s, p),
    };
    const walker = new CoreWalker(core);
    return { walker, rows: core, filler: clrTables ? placeFiller : undefined, dispose: () => walker.dispose() };
  }
  const core = await instantiateCore(wasm);
  const exports = core as unknown as Partial<NettraceWalkCore & NettraceRowsCore> & typeof core;
  if (typeof exports.nettraceWalk !== "function" || typeof exports.nettraceRows !== "function")
    throw new Error("etw-wasm: this WebAssembly core has no EventPipe exports (an older build?)");
  const walker = new CoreWalker(exports as NettraceWalkCore, undefined, () => recycleMemory(core.memory as WebAssembly.Memory));
  const filler = clrTables ? coreFiller(core, placed) : undefined;
  // (each walk's rows fill the typed tables while their block is staged)
  const fill = filler?.placed;
  if (fill) walker.onPlaced = (cols, first, end, metadata, pointerSize, bias) => fill.placed(cols, first, end, metadata, pointerSize, bias);
  return { walker, rows: exports as NettraceRowsCore, filler, dispose: () => walker.dispose() };
}
