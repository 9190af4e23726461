// Entry point for bundlers that cannot serve a .wasm file: the core is embedded (base64).

import { setModuleProvider } from "./decode/windows/loader.js";
import { WASM_BASE64 } from "./etw-inline-data.js";

function decodeBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

setModuleProvider(
  () => WebAssembly.compile(decodeBase64(WASM_BASE64) as BufferSource),
  async () => decodeBase64(WASM_BASE64) as BufferSource,
);

export * from "./index.js";
