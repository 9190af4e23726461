// Web Worker script: decodes off the UI thread and transfers the tables back (see worker-client.ts).
// Imports only platform-neutral modules.

import { decodeTrace, type DecodeOptions, type Input } from "./decode/decode.js";
import { packTraceData } from "./decode/parallel/transfer.js";
import type { TraceDecodeError, TraceFormatError } from "./decode/result/errors.js";
import { segmentServer, type WorkerRequest } from "./decode/parallel/parallel.js";

interface Request {
  id: number;
  input: Input;
  options: Omit<DecodeOptions, "onProgress">;
}

const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent<Request>) => void) | null;
  postMessage(message: unknown, transfer?: Transferable[]): void;
};

// segments of a parallel decode (decode/parallel/parallel.ts)
const segments = segmentServer((m, transfer) => scope.postMessage(m, transfer));

scope.onmessage = async (e) => {
  // (a whole decode's request has an id; the rest are a parallel decode's)
  if (!("id" in e.data)) return segments(e.data as unknown as WorkerRequest);
  const { id, input, options } = e.data;
  try {
    const data = await decodeTrace(input, { ...options, onProgress: (bytes) => scope.postMessage({ id, progress: bytes }) });
    const { message, transfer } = packTraceData(data);
    data.release?.();
    scope.postMessage({ id, result: message }, transfer);
  } catch (error) {
    // TraceFormatError has a code and an offset, TraceDecodeError an offset; the client makes them again.
    const e = error as Error;
    scope.postMessage({
      id,
      error: {
        name: e.name,
        message: e.message,
        reason: (error as TraceFormatError | TraceDecodeError).reason,
        code: (error as TraceFormatError).code,
        format: (error as TraceFormatError).format,
        offset: (error as TraceFormatError | TraceDecodeError).offset,
      },
    });
  }
};
