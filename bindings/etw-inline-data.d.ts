// Types of dist/bindings/etw-inline-data.js, which scripts/inline-wasm.mjs writes from dist/etw.wasm.
export declare const WASM_BASE64: string;
