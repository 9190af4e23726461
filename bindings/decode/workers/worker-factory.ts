// How decode workers are started: Web Workers where the platform has them (browsers), else the way an
// entry point installed (Node's installs worker_threads). Nothing here runs on import, so a bundler
// that drops modules without side effects keeps it. Kept apart from parallel.ts, which is loaded only
// when a decode asks for workers.

import type { ByteSource, SharedSource } from "../input/input.js";

/** A thread that decodes segments: a Node worker_threads Worker or a Web Worker, behind one face. */
export interface DecodeWorker {
  post(message: unknown, transfer: ArrayBuffer[]): void;
  /** Sets the handlers of the worker's messages and of its failure. */
  listen(onMessage: (message: unknown) => void, onError: (error: Error) => void): void;
  /** Stops the worker; resolves once it has stopped (where the platform says). */
  terminate(): Promise<unknown> | undefined;
  /** Whether an idle worker keeps the process alive (Node; a browser has no such notion). */
  ref?(): void;
  unref?(): void;
}

let factory: (() => DecodeWorker) | undefined;
let opener: ((shared: SharedSource, offset: number, length: number) => ByteSource) | undefined;

/**
 * Sets how a decode worker opens a range of a source the calling thread shares by name (Node's worker
 * entry opens files by path). Where none is set, workers are sent the bytes.
 */
export function setSourceOpener(open: (shared: SharedSource, offset: number, length: number) => ByteSource): void {
  opener = open;
}

/** A range of a shared source, opened on this thread (a worker's); undefined where there is no way. */
export function openShared(shared: SharedSource, offset: number, length: number): ByteSource | undefined {
  return opener?.(shared, offset, length);
}

/** What the installed workers can do beyond decoding the bytes they are sent. */
export interface WorkerAbilities {
  /** They open shared sources themselves (setSourceOpener): a file's segments are sent as ranges. */
  opensSources?: boolean;
  /**
   * They hand windows back in SharedArrayBuffers, and this side's consumers read strings from such
   * memory (Node's TextDecoder does; a browser's refuses shared memory).
   */
  sharesWindows?: boolean;
}
let abilities: WorkerAbilities = {};

/** Sets how decode workers are started, and what they can do. */
export function setWorkerFactory(f: () => DecodeWorker, can: WorkerAbilities = {}): void {
  factory = f;
  abilities = can;
}

/** What the installed decode workers can do (none of it for the default Web Workers). */
export function workerAbilities(): WorkerAbilities {
  return factory !== undefined ? abilities : {};
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
    terminate: () => {
      worker.terminate();
      return undefined;
    },
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
