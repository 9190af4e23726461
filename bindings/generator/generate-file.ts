// Writes a generated trace to a file, streaming buffers as they are made.

import { openSync, writeSync, closeSync } from "node:fs";
import { generateTrace, type GenerateOptions } from "./generate.js";

export function generateTraceFile(path: string, opts: Omit<GenerateOptions, "onBuffer" | "onStart">, onProgress?: (bytes: number) => void): number {
  const fd = openSync(path, "w");
  let at = 0;
  try {
    const header = generateTrace({
      ...opts,
      onStart: (size) => (at = size), // the header buffer is written last, at offset 0
      onBuffer: (bytes) => {
        writeSync(fd, bytes, 0, bytes.length, at);
        at += bytes.length;
        onProgress?.(at);
      },
    });
    writeSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  return at;
}

/** "256MiB", "1GiB", "64MB", "1000000" -> bytes. */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(k|m|g|ki|mi|gi)?b?$/i.exec(text.trim());
  if (!m) throw new Error(`not a size: ${text}`);
  const unit = (m[2] ?? "").toLowerCase();
  const mult: Record<string, number> = { "": 1, k: 1e3, m: 1e6, g: 1e9, ki: 1024, mi: 1024 ** 2, gi: 1024 ** 3 };
  return Math.round(Number(m[1]) * mult[unit]);
}
