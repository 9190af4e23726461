// The quick guard against silent regressions (part of `npm test`): a few decode figures on the
// generated 64 MiB trace, each divided by a memcpy measured in the same process, compared with the
// same ratios that `npm run bench` committed to bench/results.json. A ratio below half of the
// committed one fails. Dividing by memcpy makes the figures comparable across machines and loads.
//
//   node --expose-gc dist/bench/guard.js            check against bench/results.json
//   node --expose-gc dist/bench/guard.js --print    only print the figures

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openTrace, streamTraceFile } from "../bindings/node.js";
import { generated, warmPageCache } from "./inputs.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MiB = 1024 * 1024;

/** Figures in MB/s of input (memcpy: MB/s copied), the best of a few runs each. */
export interface GuardFigures {
  memcpy: number;
  whole: number;
  wholeJs: number;
  streamed: number;
}

const gc = () => (globalThis as { gc?: () => void }).gc?.();

/** The least time of `runs` runs of `fn` (after one untimed run), in ms. */
async function best(runs: number, fn: () => Promise<void> | void): Promise<number> {
  await fn();
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    gc();
    const t0 = performance.now();
    await fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

/** memcpy between two warm 64 MiB buffers, MB/s. */
async function memcpy(): Promise<number> {
  const src = new Uint8Array(64 * MiB).fill(1);
  const dst = new Uint8Array(64 * MiB).fill(2);
  const ms = await best(5, () => {
    for (let i = 0; i < 4; i++) dst.set(src);
  });
  return (4 * src.length) / 1e6 / (ms / 1000);
}

export async function guardFigures(): Promise<GuardFigures> {
  const path = generated(64, false);
  warmPageCache(path);
  const bytes = new Uint8Array(readFileSync(path));
  const mbps = (ms: number) => bytes.length / 1e6 / (ms / 1000);
  const decode = (engine: "wasm" | "js") => async () => {
    const t = await openTrace(bytes, { engine });
    if (!t.complete) throw new Error(`guard: the ${engine} decode of ${path} stopped early: ${t.incomplete!.message}`);
    t.dispose();
  };
  const whole = mbps(await best(7, decode("wasm")));
  const wholeJs = mbps(await best(3, decode("js")));
  const streamed = mbps(
    await best(5, async () => {
      const stream = await streamTraceFile(path);
      let rows = 0;
      for await (const b of stream) {
        rows += b.events.length;
        for (const t of b.tables) rows += t.length;
      }
      if (!stream.end?.complete || rows === 0) throw new Error(`guard: streaming ${path} stopped early`);
    }),
  );
  return { memcpy: await memcpy(), whole, wholeJs, streamed };
}

const NAMES: Record<Exclude<keyof GuardFigures, "memcpy">, string> = {
  whole: "whole decode, wasm (openTrace)",
  wholeJs: "whole decode, TypeScript engine",
  streamed: "streamed, wasm (streamTraceFile)",
};

async function main() {
  const now = await guardFigures();
  const line = (k: keyof typeof NAMES, committed?: GuardFigures) => {
    const ratio = now[k] / now.memcpy;
    const was = committed ? committed[k] / committed.memcpy : undefined;
    return {
      ok: was === undefined || ratio >= was / 2,
      text:
        `${NAMES[k]}: ${now[k].toFixed(0)} MB/s, ${(ratio * 100).toFixed(2)}% of memcpy` +
        (was === undefined ? "" : ` (committed ${(was * 100).toFixed(2)}%, floor ${(was * 50).toFixed(2)}%)`),
    };
  };
  console.log(`bench guard: memcpy ${now.memcpy.toFixed(0)} MB/s`);
  if (process.argv.includes("--print")) {
    for (const k of Object.keys(NAMES) as (keyof typeof NAMES)[]) console.log("  " + line(k).text);
    return;
  }
  const committed = (JSON.parse(readFileSync(join(ROOT, "bench", "results.json"), "utf8")) as { guard?: GuardFigures }).guard;
  if (!committed) throw new Error("bench/results.json has no guard figures: run npm run bench");
  let failed = 0;
  for (const k of Object.keys(NAMES) as (keyof typeof NAMES)[]) {
    const { ok, text } = line(k, committed);
    console.log(`  ${ok ? "ok  " : "SLOW"} ${text}`);
    if (!ok) failed++;
  }
  if (failed) {
    console.error(`bench guard: ${failed} figure(s) fell below half of what bench/results.json holds (relative to memcpy)`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
