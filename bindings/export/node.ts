// etw-wasm/export in Node: parquet-wasm's .wasm is read from node_modules (Node's fetch does not
// read files), then everything etw-wasm/export has.

import { readFile } from "node:fs/promises";
import { setDefaultParquetWasm } from "./parquet.js";

setDefaultParquetWasm(async () => readFile(new URL(import.meta.resolve("parquet-wasm/esm/parquet_wasm_bg.wasm"))));

export * from "./index.js";
export { ParquetWorkers } from "./parquet-workers.js";
