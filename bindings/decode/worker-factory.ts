// How decode workers are started: Web Workers where the platform has them (browsers), else the way an
// entry point installed (Node's installs worker_threads). Nothing here runs on import, so a bundler
// that drops modules without side effects keeps it. Kept apart from parallel.ts, which is loaded only
// when a decode asks for workers.

/** A thread that decodes segments: a Node worker_threads Worker or a Web Worker, behind one face. */
export interface DecodeWorker {
  post(message: unknown, transfer: ArrayBuffer[]): void;
  /** Sets the handlers of the worker's messages and of its failure. */
  listen(onMessage: (message: unknown) => void, onError: (error: Error) => void): void;
  /** Stops the worker; resolves once it has stopped (where the platform says). */
  terminate(): Promise<unknown> | void;
  /** Whether an idle worker keeps the process alive (Node; a browser has no such notion). */
  ref?(): void;
  unref?(): void;
}

let factory: (() => DecodeWorker) | undefined;

/** Sets how decode workers are started. */
export function setWorkerFactory(f: () => DecodeWorker): void {
  factory = f;
}

/**
 * A Web Worker running worker.js beside this module's script: the package's dist/bindings/decode/worker.js
 * (which loads the worker entry), or, in a bundled app, the package's worker entry bundled beside the
 * app's chunks.
 */
function webWorker(): DecodeWorker {
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  return {
    post: (message, transfer) => worker.postMessage(message, transfer),
    listen(onMessage, onError) {
      worker.addEventListener("message", (e) => onMessage(e.data));
      worker.addEventListener("error", (e) => onError(new Error(e.message)));
    },
    terminate: () => worker.terminate(),
  };
}

const haveWebWorkers = () => typeof Worker === "function";

/** Starts a decode worker; undefined where there is no way. */
export function workerFactory(): DecodeWorker | undefined {
  return factory ? factory() : haveWebWorkers() ? webWorker() : undefined;
}

export function haveWorkers(): boolean {
  return factory !== undefined || haveWebWorkers();
}
