// How decode workers are started: each entry point installs its platform's way (Node worker_threads,
// Web Workers). Kept apart from parallel.ts, which is loaded only when a decode asks for workers.

/** A thread that decodes segments: a Node worker_threads Worker or a Web Worker, behind one face. */
export interface DecodeWorker {
  post(message: unknown, transfer: ArrayBuffer[]): void;
  /** Sets the handlers of the worker's messages and of its failure. */
  listen(onMessage: (message: unknown) => void, onError: (error: Error) => void): void;
  /** Stops the worker; resolves once it has stopped (where the platform says). */
  terminate(): Promise<unknown> | void;
}

let factory: (() => DecodeWorker) | undefined;

/** Sets how decode workers are started. */
export function setWorkerFactory(f: () => DecodeWorker): void {
  factory = f;
}

/** Starts a decode worker; undefined where no entry point installed a way. */
export function workerFactory(): DecodeWorker | undefined {
  return factory?.();
}

export function haveWorkers(): boolean {
  return factory !== undefined;
}
