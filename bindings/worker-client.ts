// Decoding in a Web Worker: the page stays responsive, and the tables come back transferred.

import { traceOf, type Trace } from "./trace.js";
import { unpackTraceData, type PackedTrace } from "./decode/parallel/transfer.js";
import { TraceDecodeError, TraceFormatError, type TraceFormat } from "./decode/result/errors.js";
import type { DecodeOptions } from "./decode/decode.js";

export interface WorkerOptions extends Omit<DecodeOptions, "onProgress" | "wasm"> {
  /** URL of etw.wasm for the worker (default: next to the worker script's module). */
  wasm?: string;
  /** A worker running etw-wasm's worker script; by default one is started from the package. */
  worker?: Worker;
  onProgress?: (bytesRead: number) => void;
}

let nextId = 1;

/** Decodes a File, Blob or bytes in a worker and returns the Trace on this thread. */
export function openTraceInWorker(input: Blob | ArrayBuffer | Uint8Array, options: WorkerOptions = {}): Promise<Trace> {
  const { worker: given, onProgress, ...decode } = options;
  const worker = given ?? new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  const id = nextId++;
  return new Promise<Trace>((resolve, reject) => {
    const done = () => {
      worker.removeEventListener("message", onMessage);
      worker.removeEventListener("error", onError);
      if (!given) worker.terminate();
    };
    const onMessage = (e: MessageEvent) => {
      const m = e.data as {
        id: number;
        progress?: number;
        result?: PackedTrace;
        error?: { name: string; message: string; reason?: string; code?: number; format?: TraceFormat; offset?: number };
      };
      if (m.id !== id) return;
      if (m.progress !== undefined) return onProgress?.(m.progress);
      done();
      // Errors cross as plain data: the typed ones are made again, with their offsets.
      const message = m.error?.reason ?? m.error?.message ?? "";
      // (an EventPipe file's names come with its metadata)
      if (m.result) traceOf(unpackTraceData(m.result)).then(resolve, reject);
      else if (m.error?.name === "TraceFormatError") reject(new TraceFormatError(m.error.code ?? 0, m.error.offset ?? 0, message, m.error.format));
      else if (m.error?.name === "TraceDecodeError") reject(new TraceDecodeError(m.error.offset ?? 0, message));
      else if (m.error?.name === "RangeError" || m.error?.name === "TypeError")
        reject(new (m.error.name === "RangeError" ? RangeError : TypeError)(m.error.message));
      else reject(new Error(m.error?.message ?? "etw-wasm: worker failed"));
    };
    const onError = (e: ErrorEvent) => {
      done();
      reject(new Error(`etw-wasm: worker failed: ${e.message}`));
    };
    worker.addEventListener("message", onMessage);
    worker.addEventListener("error", onError);
    worker.postMessage({ id, input, options: decode });
  });
}
