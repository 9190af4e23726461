#!/usr/bin/env node
// Build step: embeds dist/etw.wasm as base64 in dist/bindings/etw-inline-data.js (the inline entry).
import { readFileSync, writeFileSync } from "node:fs";
const root = new URL("../", import.meta.url);
const wasm = readFileSync(new URL("dist/etw.wasm", root));
writeFileSync(new URL("dist/bindings/etw-inline-data.js", root), `// Generated: the etw-wasm core, base64.\nexport const WASM_BASE64 = "${wasm.toString("base64")}";\n`);
