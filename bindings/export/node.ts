// etw-wasm/export in Node: parquet-wasm's .wasm is read from node_modules (Node's fetch does not
// read files), then everything etw-wasm/export has.

import { setDefaultParquetWasm } from "./parquet.js";
import { readParquetWasm } from "./parquet-workers.js";

setDefaultParquetWasm(readParquetWasm);

export * from "./index.js";
export { ParquetWorkers } from "./parquet-workers.js";
