#!/usr/bin/env node
// Build step after asc: embeds dist/etw.wasm as base64 in dist/bindings/etw-inline-data.js, the data
// of the inline entry point (etw-wasm/inline).
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
const root = new URL("../", import.meta.url);
const wasm = readFileSync(new URL("dist/etw.wasm", root));
mkdirSync(new URL("dist/bindings/", root), { recursive: true });
writeFileSync(
  new URL("dist/bindings/etw-inline-data.js", root),
  `// Generated: the etw-wasm core, base64.\nexport const WASM_BASE64 = "${wasm.toString("base64")}";\n`,
);
copyFileSync(new URL("bindings/etw-inline-data.d.ts", root), new URL("dist/bindings/etw-inline-data.d.ts", root));
