// Structure-aware mutation of the corpus, the bundled sample and synthetic traces, with fixed seeds:
// buffer headers, the logfile header, record headers and extended items (also inside compressed
// buffers), XPRESS streams, truncation at buffer and record boundaries, spliced, duplicated and
// dropped buffers and records, plain byte flips. Every input must open as a Trace or fail with an
// EtlFormatError; both engines must agree exactly; odd-sized slices must decode like the whole; every
// row must be readable; no input may take more than a few seconds. A failure names the base, the
// seed and the mutations, and the command that replays it. `npm run fuzz` runs the same mutators on
// random seeds for as long as asked.

import { afterAll, describe, expect, it } from "vitest";
import { Worker } from "node:worker_threads";
import { fileURLToPath } from "node:url";
import { HAVE_CORPUS, CORPUS } from "./helpers/shared.js";
import { join } from "node:path";
import { MUTATOR_NAMES, caseSeed, checkInput, mutateAnyCase, mutateCase, replayCommand, standardBases, type Base } from "./helpers/mutate.js";
import { NETTRACE_MUTATOR_NAMES, mutateNettraceCase, nettraceBases } from "./helpers/mutate-nettrace.js";
import { generateNettrace } from "../dist/bindings/generator/generate-nettrace.js";
import { NetperfV2Writer } from "../dist/bindings/generator/netperf-v2-writer.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** Inputs per base: 2,520 in all with the 18 corpus files, the sample and two synthetic traces. */
const CASES = HAVE_CORPUS ? 120 : 400;
/**
 * One input (both engines, the sliced decode, every row) may take this much CPU time of the test's process
 * (its wall time depends on the other test files running beside it: the suite runs two at once).
 */
const GUARD_MS = 5_000;
/** A decoder that is still busy after this long is taken to hang: the test process is ended. */
const HANG_MS = 60_000;

const bases: Base[] = standardBases(ROOT, HAVE_CORPUS ? join(CORPUS, "etl") : null);

// A decoding loop that never returns cannot be interrupted from this thread: a watchdog thread names
// the input and ends the process instead.
const WATCHDOG = `
const { parentPort, workerData } = require("node:worker_threads");
const { writeSync } = require("node:fs");
let timer;
parentPort.on("message", (label) => {
  clearTimeout(timer);
  if (label) timer = setTimeout(() => {
    writeSync(2, "\\nfuzz: still decoding after " + workerData + " ms, ending the test process: " + label + "\\n");
    process.kill(process.pid, "SIGKILL");
  }, workerData);
});`;
const watchdog = new Worker(WATCHDOG, { eval: true, workerData: HANG_MS });
watchdog.unref();
afterAll(() => watchdog.terminate());

const applied = new Map<string, number>();
let ran = 0;

describe("mutated traces", () => {
  for (const base of bases) {
    it(`${base.name}: ${CASES} mutated inputs`, async () => {
      const failures: string[] = [];
      let slowest = 0;
      for (let k = 0; k < CASES; k++) {
        const seed = caseSeed(base.name, k);
        let c: ReturnType<typeof mutateCase>;
        try {
          c = mutateCase(seed, base, bases);
        } catch (error) {
          failures.push(`${base.name} seed ${seed}: mutating threw ${(error as Error)?.stack ?? error}`);
          continue;
        }
        for (const m of c.mutators) applied.set(m, (applied.get(m) ?? 0) + 1);
        const label = `${base.name} seed ${seed}: ${c.steps.join("; ")}`;
        watchdog.postMessage(label);
        const r = await checkInput(c.bytes, seed);
        watchdog.postMessage("");
        slowest = Math.max(slowest, r.cpuMs);
        if (r.cpuMs > GUARD_MS) r.problems.push(`took ${Math.round(r.cpuMs)} ms of CPU time (limit ${GUARD_MS} ms; ${Math.round(r.ms)} ms wall)`);
        if (r.problems.length && failures.length < 10) {
          failures.push(`${label}\n    ${r.problems.slice(0, 5).join("\n    ")}\n    replay: ${replayCommand(c)}`);
        }
        ran++;
      }
      expect(failures, `${failures.length} failing inputs`).toEqual([]);
      expect(slowest).toBeLessThan(GUARD_MS);
    });
  }

  it("every mutator was applied", () => {
    if (ran < bases.length * CASES) return; // a filtered run
    const missing = MUTATOR_NAMES.filter((m) => !applied.get(m));
    expect(missing).toEqual([]);
  });
});

if (!HAVE_CORPUS) console.warn("notice: mutated traces run on the sample and synthetic traces only (no corpus)");

// Inputs that `npm run fuzz` campaigns found failing, checked with their own seeds (as the campaign did).
const FOUND = [
  // a logfile header whose LogFileName is present but empty: the streamed trace's copy of the header
  // dropped its address, so the sliced decode said "absent" where the whole one said "empty"
  { base: "sonde-test.etl", seed: 3453571684 },
];

describe.runIf(HAVE_CORPUS)("inputs campaigns found", () => {
  for (const { base: name, seed } of FOUND) {
    it(`${name} seed ${seed}`, async () => {
      const base = bases.find((b) => b.name === name);
      expect(base, name).toBeDefined();
      const c = mutateAnyCase(seed, base!, bases);
      const r = await checkInput(c.bytes, seed);
      expect(r.problems, c.steps.join("; ")).toEqual([]);
    });
  }
});

// EventPipe files: the same checks (both engines, odd-sized slices, every row readable) on inputs the
// EventPipe mutators make from the corpus's .nettrace/.netperf files and synthetic V4 and V6 files.
const NETTRACE_CASES = HAVE_CORPUS ? 60 : 150;
const nettraceApplied = new Map<string, number>();
let nettraceRan = 0;
const eventPipeBases = nettraceBases(HAVE_CORPUS ? join(CORPUS, "nettrace") : null, [
  {
    name: "generated-v5.nettrace",
    bytes: generateNettrace({ targetBytes: 300_000, samples: true, seed: 5, processors: 2, version: 5, sequencePointBytes: 60_000 }).bytes,
  },
  {
    name: "generated-v6.nettrace",
    bytes: generateNettrace({ targetBytes: 300_000, samples: true, seed: 6, processors: 2, version: 6, sequencePointBytes: 60_000 }).bytes,
  },
  { name: "netperf-v2.netperf", bytes: netperfV2Sample() },
]);

/** A .NET Core 2.0 file (Trace object version 2): metadata with fields, events with stacks and activities. */
function netperfV2Sample(): Uint8Array {
  const w = new NetperfV2Writer({ syncTimeUtc: new Date(Date.UTC(2018, 3, 5)), syncTimeQpc: 1000n, qpcFrequency: 1_000_000n });
  const a = w.defineEvent({
    providerName: "MySource",
    eventId: 1,
    eventName: "A",
    level: 4,
    fields: [
      { name: "i", typeCode: 9 },
      { name: "s", typeCode: 18 },
    ],
  });
  const gc = w.defineEvent({ providerName: "Microsoft-Windows-DotNETRuntime", eventId: 1, version: 1 });
  for (let k = 0; k < 200; k++) {
    const payload = k % 3 === 0 ? new Uint8Array(18) : Uint8Array.from([k, 0, 0, 0, 104, 0, 105, 0, 0, 0]);
    w.writeEvent({
      metadataId: k % 3 === 0 ? gc : a,
      threadId: 7 + (k % 4),
      timestamp: BigInt(2000 + 10 * k),
      payload,
      stack: k % 2 ? [0x1000n + BigInt(k), 0x2000n] : undefined,
      activityId: k % 5 ? undefined : new Uint8Array(16).fill(k),
    });
  }
  return w.finish();
}

describe("mutated EventPipe files", () => {
  for (const base of eventPipeBases) {
    it(`${base.name}: ${NETTRACE_CASES} mutated inputs`, async () => {
      const failures: string[] = [];
      for (let k = 0; k < NETTRACE_CASES; k++) {
        const seed = caseSeed(base.name, k, 0x6e6574);
        const c = mutateNettraceCase(seed, base);
        for (const m of c.mutators) nettraceApplied.set(m, (nettraceApplied.get(m) ?? 0) + 1);
        const label = `${base.name} seed ${seed}: ${c.steps.join("; ")}`;
        watchdog.postMessage(label);
        const r = await checkInput(c.bytes, seed);
        watchdog.postMessage("");
        if (r.cpuMs > GUARD_MS) r.problems.push(`took ${Math.round(r.cpuMs)} ms of CPU time (limit ${GUARD_MS} ms; ${Math.round(r.ms)} ms wall)`);
        if (r.problems.length && failures.length < 10) failures.push(`${label}\n    ${r.problems.slice(0, 5).join("\n    ")}`);
        nettraceRan++;
      }
      expect(failures, `${failures.length} failing inputs`).toEqual([]);
    });
  }

  it("every EventPipe mutator was applied", () => {
    if (nettraceRan < eventPipeBases.length * NETTRACE_CASES) return; // a filtered run
    expect(NETTRACE_MUTATOR_NAMES.filter((m) => !nettraceApplied.get(m))).toEqual([]);
  });
});
