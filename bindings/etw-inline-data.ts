// Replaced at build time by scripts/inline-wasm.mjs with the core as base64 (dist only).
export const WASM_BASE64: string = "";
