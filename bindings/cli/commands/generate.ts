// etw-wasm generate: a synthetic .NET runtime trace (.etl, or .nettrace), for tests and benchmarks.

import { basename, dirname, join } from "node:path";
import { HELP, UsageError, parseSize, wholeNumber, type Values } from "../args.js";
import type { OwnCommand } from "../command.js";
import { say } from "../io.js";

async function generateFile(out: string, values: Values): Promise<number> {
  const { generateTraceFile } = await import("etw-wasm/generator");
  const sizeText = (values.size ?? "64MiB") as string;
  let size: number;
  try {
    size = parseSize(sizeText);
  } catch (e) {
    throw new UsageError(`bad --size '${sizeText}': ${(e as Error).message} (e.g. 256MiB, 64MB, 1000000)`, "generate");
  }
  if (!(size >= 1) || !Number.isSafeInteger(size)) throw new UsageError(`bad --size '${sizeText}': at least 1 byte`, "generate");
  const pointerText = (values["pointer-size"] ?? "8") as string;
  if (pointerText !== "4" && pointerText !== "8") throw new UsageError(`bad --pointer-size '${pointerText}': 4 or 8`, "generate");
  const pointerSize = pointerText === "4" ? 4 : 8;
  const seed = wholeNumber(values, "seed", "the seed", 0, 0xffffffff, "generate") ?? 1;
  // The buffer header's processor number is one byte.
  const processors = wholeNumber(values, "processors", "the processor count", 1, 256, "generate") ?? 4;
  const formatText = values.format as string | undefined;
  if (formatText !== undefined && formatText !== "etl" && formatText !== "nettrace")
    throw new UsageError(`bad --format '${formatText}': etl or nettrace`, "generate");
  const nettrace = formatText ? formatText === "nettrace" : /\.nettrace$/i.test(out);
  const versionText = values["nettrace-version"] as string | undefined;
  if (versionText !== undefined && !nettrace) throw new UsageError("--nettrace-version is for a .nettrace (OUT.nettrace or --format nettrace)", "generate");
  if (versionText !== undefined && !/^[456]$/.test(versionText)) throw new UsageError(`bad --nettrace-version '${versionText}': 4, 5 or 6`, "generate");
  if (values["thread-blocks"] === true && !nettrace) throw new UsageError("--thread-blocks is for a .nettrace (OUT.nettrace or --format nettrace)", "generate");
  const t0 = performance.now();
  if (nettrace) {
    if (values.compress === true) throw new UsageError("--compress is for an .etl (a .nettrace's event headers are always compressed)", "generate");
    if (values.split === true) throw new UsageError("--split is for an .etl (a .nettrace is one file)", "generate");
    const { generateNettraceFile } = await import("etw-wasm/generator");
    const version = Number(versionText ?? "5") as 4 | 5 | 6;
    // --size is the file's: the content runs until the .nettrace has grown to it
    const summary = generateNettraceFile(out, {
      targetBytes: Infinity,
      fileBytes: size,
      pointerSize,
      seed,
      processors,
      samples: values.samples === true,
      version,
      threadBlocks: values["thread-blocks"] === true,
    });
    say(`wrote ${out}: ${summary.bytes} bytes (nettrace V${version}, ${summary.events} events) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    return 0;
  }
  if (values.split === true) {
    const { generateSession } = await import("etw-wasm/generator");
    const { writeFile } = await import("node:fs/promises");
    const name = basename(out).replace(/\.etl$/i, "");
    for (const f of generateSession({
      targetBytes: size,
      compress: values.compress === true,
      pointerSize,
      seed,
      processors,
      samples: values.samples === true,
      name,
    })) {
      const path = join(dirname(out), f.name);
      await writeFile(path, f.bytes);
      say(`wrote ${path}: ${f.bytes.length} bytes`);
    }
    say(`in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    return 0;
  }
  const bytes = generateTraceFile(out, {
    targetBytes: size,
    compress: values.compress === true,
    pointerSize,
    seed,
    processors,
    samples: values.samples === true,
  });
  say(`wrote ${out}: ${bytes} bytes in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return 0;
}

export const generate: OwnCommand = {
  name: "generate",
  help: `  generate OUT [options]         write a synthetic .NET runtime trace: .etl, or .nettrace when OUT ends in
                                 .nettrace or with --format nettrace
      --size N (e.g. 256MiB; default 64MiB), --compress, --pointer-size 4|8, --seed N, --processors N,
      --samples (kernel CPU samples with stacks, for cpu and stacks; in a .nettrace the sample
      profiler's samples; and AllocationTick events with stacks, for allocation call trees)
      --split: the session as PerfView writes it, the runtime's events in OUT and the kernel's in
      OUT's name with .kernel.etl (made in memory: for tests, up to a few hundred MiB)
      --format etl|nettrace      the file's format (default: by OUT's extension, else etl)
      --nettrace-version 4|5|6   4: the V4 container without metadata tags (.NET Core 3); 5 (default):
                                 the same container with the V5 tags (.NET 5 and later); 6: the V6 block
                                 format. The same runtime events as the .etl of the same options
      --thread-blocks            a .nettrace's events in blocks of one capture thread each, as the
                                 runtime writes them (readers merge the threads by time); default: one
                                 block for all threads, in time order`,
  options: {
    ...HELP,
    size: { type: "string" },
    compress: { type: "boolean" },
    "pointer-size": { type: "string" },
    seed: { type: "string" },
    processors: { type: "string" },
    samples: { type: "boolean" },
    split: { type: "boolean" },
    format: { type: "string" },
    "nettrace-version": { type: "string" },
    "thread-blocks": { type: "boolean" },
  },
  operand: "OUT",
  run: ([out], values) => generateFile(out, values),
};
