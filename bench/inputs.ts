// The benchmark's inputs: traces made by the project's generator, cached in bench/.cache (child
// processes read them too), and the page cache warmed before a timed read.

import { closeSync, existsSync, mkdirSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateNettraceFile, generateTraceFile } from "../bindings/generator/generate-file.js";

const CACHE = fileURLToPath(new URL("../../bench/.cache/", import.meta.url));
const MiB = 1024 * 1024;

/**
 * The generator's content of traces with samples, in their cache names: a file cached by another
 * generation is not reused. g2: AllocationTick events carry stacks.
 */
const SAMPLES_GENERATION = "g2";

/** Generated inputs are cached on disk (bench/.cache) so child processes can read them too. */
export function generated(sizeMiB: number, compress: boolean, samples = false): string {
  mkdirSync(CACHE, { recursive: true });
  const path = join(CACHE, `generated-${sizeMiB}MiB${compress ? "-xpress" : ""}${samples ? `-samples-${SAMPLES_GENERATION}` : ""}.etl`);
  if (!existsSync(path)) {
    process.stderr.write(`generating ${path} ...\n`);
    generateTraceFile(path, { targetBytes: sizeMiB * MiB, compress, seed: 42, processors: 8, samples });
  }
  return path;
}

/**
 * A generated .nettrace of `sizeMiB` (the runtime's events, sample profiler samples with stacks), cached
 * as the .etl ones. `threadBlocks`: each capture thread's events in blocks of their own, as the runtime
 * writes them (the reader merges the threads); else one block for all, in time order.
 */
export function generatedNettrace(sizeMiB: number, version: 4 | 5 | 6 = 5, threadBlocks = false): string {
  mkdirSync(CACHE, { recursive: true });
  const path = join(CACHE, `generated-${sizeMiB}MiB-v${version}${threadBlocks ? "-threads" : ""}-${SAMPLES_GENERATION}.nettrace`);
  if (!existsSync(path)) {
    process.stderr.write(`generating ${path} ...\n`);
    generateNettraceFile(path, { targetBytes: Infinity, fileBytes: sizeMiB * MiB, seed: 42, processors: 8, samples: true, version, threadBlocks });
  }
  return path;
}

/** Reads a file through once, so that the timed runs read it from the page cache, not the disk. */
export function warmPageCache(path: string): void {
  const b = Buffer.alloc(16 << 20);
  const fd = openSync(path, "r");
  try {
    while (readSync(fd, b, 0, b.length, null) > 0) {
      /* read on */
    }
  } finally {
    closeSync(fd);
  }
}
