// Browser entry point: the core is fetched next to this module and compiled while it streams in;
// openTrace also takes a File or Blob; openTraceInWorker decodes off the UI thread.

// (decode workers, options.workers, are Web Workers: decode/workers/worker-factory.ts starts them)
export * from "./index.js";
export { openTraceInWorker, type WorkerOptions } from "./worker-client.js";
export { packTraceData, unpackTraceData, type PackedTrace } from "./decode/parallel/transfer.js";
