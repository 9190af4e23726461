// Writes a generated trace to a file, streaming buffers as they are made.

import { openSync, writeSync, closeSync } from "node:fs";
import { TraceGenerator, type GenerateOptions, type GenerateSummary } from "./generate.js";
import { NettraceGenerator, type GenerateNettraceOptions, type NettraceSummary } from "./generate-nettrace.js";

/**
 * Writes the trace to `path` and returns its size. Buffers go out in chunks as they are made; the
 * header buffer, which holds totals known only at the end, is written last at offset 0.
 */
export function generateTraceFile(path: string, opts: GenerateOptions, onProgress?: (bytes: number) => void): number {
  return writeTraceFile(path, opts, onProgress).bytes;
}

/** generateTraceFile, returning the trace's totals. */
export function writeTraceFile(path: string, opts: GenerateOptions, onProgress?: (bytes: number) => void): GenerateSummary {
  const g = new TraceGenerator(opts, { reuseChunks: true });
  const fd = openSync(path, "w");
  try {
    let at = g.headerBufferSize;
    for (let c = g.next(); c; c = g.next()) {
      writeAll(fd, c, at);
      at += c.length;
      onProgress?.(at);
    }
    writeAll(fd, g.header(), 0);
  } finally {
    closeSync(fd);
  }
  return g.summary();
}

/** Writes a generated .nettrace (generate-nettrace.ts) to `path`, streaming it; returns what it holds. */
export function generateNettraceFile(path: string, opts: GenerateNettraceOptions, onProgress?: (bytes: number) => void): NettraceSummary {
  const fd = openSync(path, "w");
  try {
    let at = 0;
    const g = new NettraceGenerator(opts, {
      reuseChunks: true,
      onChunk: (c) => {
        writeAll(fd, c, at);
        at += c.length;
        onProgress?.(at);
      },
    });
    return g.run().summary();
  } finally {
    closeSync(fd);
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}
