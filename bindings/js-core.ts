// Pure TypeScript decoder core: the same algorithm and table layout as the WebAssembly core.
import type { CoreExports } from "./loader.js";

export function createJsCore(): CoreExports {
  throw new Error("etw-wasm: the js engine is not available yet");
}
