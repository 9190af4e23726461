// Browser entry point: the core is fetched next to this module and compiled while it streams in;
// openTrace also takes a File or Blob; openTraceInWorker decodes off the UI thread.

import { setWorkerFactory } from "./decode/worker-factory.js";

// decode workers (options.workers) are Web Workers running worker.js
setWorkerFactory(() => {
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  return {
    post: (message, transfer) => worker.postMessage(message, transfer),
    listen(onMessage, onError) {
      worker.addEventListener("message", (e) => onMessage(e.data));
      worker.addEventListener("error", (e) => onError(new Error(e.message)));
    },
    terminate: () => worker.terminate(),
  };
});

export * from "./index.js";
export { openTraceInWorker, type WorkerOptions } from "./worker-client.js";
export { packTraceData, unpackTraceData, type PackedTrace } from "./decode/transfer.js";
