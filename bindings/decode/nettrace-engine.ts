// The EventPipe reader's record walker on either engine: readNettrace(bytes, { walker }) with the
// walker made here runs the per-event loop (assembly/nettrace-events.ts) in the WebAssembly core
// ("wasm") or in its TypeScript twin ("js", readNettrace's default).

import { CoreWalker, jsNettraceWalker, type NettraceWalkCore, type NettraceWalker } from "../core/nettrace-walk.js";
import { instantiateCore, recycleMemory, type WasmSource } from "./loader.js";

export type { NettraceWalker };

/**
 * A walker for readNettrace on `engine`. "wasm" instantiates the core (`wasm`: the compiled module,
 * else the default one) with a memory of its own, into which each block is copied; call `dispose()`
 * when the file is read to give that memory back. "js" needs no module.
 */
export async function nettraceWalker(engine: "wasm" | "js", wasm?: WebAssembly.Module | WasmSource): Promise<NettraceWalker> {
  if (engine === "js") return jsNettraceWalker();
  const core = await instantiateCore(wasm);
  const exports = core as unknown as Partial<NettraceWalkCore> & typeof core;
  if (typeof exports.nettraceWalk !== "function") throw new Error("etw-wasm: this WebAssembly core has no nettraceWalk export (an older build?)");
  return new CoreWalker(exports as NettraceWalkCore, undefined, () => recycleMemory(core.memory as WebAssembly.Memory));
}
