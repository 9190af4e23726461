#!/usr/bin/env node
// Builds the viewer into examples/viewer/dist: a static site (index.html, main.js, worker.js,
// etw.wasm, style.css; chunks/ and parquet_wasm_bg.wasm for downloads, duckdb/ for the SQL panel) that any static file server can serve. Run after `npm run build`.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const out = here("./dist/");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
/** @type {import("esbuild").BuildOptions} */
const common = { bundle: true, format: "esm", platform: "browser", target: "es2022", minify: true, sourcemap: true, logLevel: "warning" };
// (split: the export chunk, with the Arrow and Parquet libraries, loads on the first download only)
// (the stream worker, a module worker, shares the chunks: its SQL pass loads the Arrow chunk only when asked)
await build({ ...common, entryPoints: [here("./main.ts"), here("./stream-worker.ts")], outdir: out, splitting: true, chunkNames: "chunks/[name]-[hash]" });
await build({ ...common, entryPoints: [here("../../bindings/worker.ts")], outfile: `${out}worker.js` });
copyFileSync(here("./index.html"), `${out}index.html`);
copyFileSync(here("./style.css"), `${out}style.css`);
copyFileSync(here("../../dist/etw.wasm"), `${out}etw.wasm`);
copyFileSync(here("../../node_modules/parquet-wasm/esm/parquet_wasm_bg.wasm"), `${out}parquet_wasm_bg.wasm`);
// DuckDB-WASM for the SQL panel: its workers and .wasm builds (with and without WebAssembly exceptions), fetched when the panel first runs
mkdirSync(`${out}duckdb`, { recursive: true });
for (const f of ["duckdb-eh.wasm", "duckdb-browser-eh.worker.js", "duckdb-mvp.wasm", "duckdb-browser-mvp.worker.js"]) {
  copyFileSync(here(`../../node_modules/@duckdb/duckdb-wasm/dist/${f}`), `${out}duckdb/${f}`);
}
console.log(`viewer written to ${out}`);
