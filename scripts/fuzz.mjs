#!/usr/bin/env node
// A mutation campaign over the corpus (.etl and EventPipe files), the bundled sample and synthetic traces,
// with the mutators and checks of test/fuzz.test.ts (test/helpers/mutate.ts, mutate-nettrace.ts) on
// random seeds. Run after `npm run build`:
//
//   npm run fuzz -- --minutes 10 [--seed S] [--workers 2] [--out fuzz-failures] [--only xp.,rec.size]
//   npm run fuzz -- --replay gcevents.etl:123456     one case again, with its steps and problems
//   npm run fuzz -- --replay-case CAMPAIGN:K [--workers W]   case K of a campaign after the cases its worker
//                                                    ran before it, in one process (a failure that needs
//                                                    the memory earlier decodes left behind)
//   npm run fuzz -- --input fuzz-failures/x.etl [--seed S]   the checks on a saved input (S: the
//                                                    case's seed, which picks the slicing checked)
//
// Every failing input is written to the output directory (default fuzz-failures/) with a .json file
// of its base, seed, mutations, problems and replay command; the exit code is 1 if any failed. An
// input still decoding after --hang-ms (default 60 s) is a failure too: its worker is ended and a
// fresh one goes on.

import { build } from "esbuild";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join, resolve, basename } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { randomInt } from "node:crypto";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CORPUS = resolve(ROOT, "..", "shared", "corpus", "etl");
const EVENTPIPE = resolve(ROOT, "..", "shared", "corpus", "nettrace");

/** test/helpers/mutate.ts (and what it imports) as one ES module; dist/ stays external, as the tests use it. */
async function bundleHarness() {
  const result = await build({
    entryPoints: [join(ROOT, "test", "helpers", "mutate.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    logLevel: "silent",
    plugins: [
      {
        name: "dist-external",
        setup(b) {
          b.onResolve({ filter: /(^|\/)dist\// }, (args) => ({ path: pathToFileURL(resolve(args.resolveDir, args.path)).href, external: true }));
        },
      },
    ],
  });
  const file = join(tmpdir(), `etw-wasm-fuzz-${process.pid}.mjs`);
  writeFileSync(file, result.outputFiles[0].contents);
  return file;
}

async function loadHarness(file) {
  await import(pathToFileURL(join(ROOT, "dist", "bindings", "node.js")).href);
  return import(pathToFileURL(file).href);
}

/** The .etl bases (corpus, sample, synthetic) and the EventPipe ones (corpus .nettrace/.netperf, synthetic V4 and V6). */
function allBases(h) {
  return [...h.standardBases(ROOT, existsSync(CORPUS) ? CORPUS : null), ...h.nettraceBases(existsSync(EVENTPIPE) ? EVENTPIPE : null)];
}

/** The k-th case of a campaign: a base and a seed, both from the campaign seed. */
function caseOf(h, bases, campaign, k) {
  const pick = h.caseSeed("base", k, campaign);
  const base = bases[pick % bases.length];
  return { base, seed: h.caseSeed(base.name, k, campaign) };
}

// ---------------------------------------------------------------------------------------------
// Main

function parseArgs(argv) {
  /** @type {{ minutes: number, seed: number | undefined, workers: number, out: string, hangMs: number, guardMs: number, replay: string | undefined, replayCase: string | undefined, input: string | undefined, only: string | undefined }} */
  const o = {
    minutes: 1,
    seed: undefined,
    workers: Math.max(1, Math.min(2, cpus().length)),
    out: join(ROOT, "fuzz-failures"),
    hangMs: 60_000,
    guardMs: 5_000,
    replay: undefined,
    replayCase: undefined,
    input: undefined,
    only: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i],
      v = argv[i + 1];
    if (a === "--minutes") {
      o.minutes = Number(v);
      i++;
    } else if (a === "--seed") {
      o.seed = Number(v) >>> 0;
      i++;
    } else if (a === "--workers") {
      o.workers = Math.max(1, Number(v) | 0);
      i++;
    } else if (a === "--out") {
      o.out = resolve(v);
      i++;
    } else if (a === "--hang-ms") {
      o.hangMs = Number(v);
      i++;
    } else if (a === "--guard-ms") {
      o.guardMs = Number(v);
      i++;
    } else if (a === "--replay") {
      o.replay = v;
      i++;
    } else if (a === "--replay-case") {
      o.replayCase = v;
      i++;
    } else if (a === "--input") {
      o.input = resolve(v);
      i++;
    } else if (a === "--only") {
      o.only = v;
      i++;
    } else if (a === "--help" || a === "-h") {
      console.log(
        "usage: npm run fuzz -- [--minutes N] [--seed S] [--workers W] [--out DIR] [--hang-ms MS] [--guard-ms MS] [--only PREFIXES]\n       npm run fuzz -- --replay BASE:SEED [--only PREFIXES] | --replay-case CAMPAIGN:K [--workers W] | --input FILE.etl [--seed S]\n--only takes comma-separated prefixes of mutator names: buf., log., rec., xp., cut., splice., flip. or whole names (listed in the summary)",
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!(o.minutes > 0)) throw new Error("--minutes must be a positive number");
  return o;
}

const clock = (ms) => `${String(Math.floor(ms / 60000)).padStart(2, "0")}:${String(Math.floor(ms / 1000) % 60).padStart(2, "0")}`;

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const harness = await bundleHarness();
  process.on("exit", () => rmSync(harness, { force: true }));
  const h = await loadHarness(harness);
  const bases = allBases(h);
  if (!existsSync(CORPUS)) console.warn(`notice: ${CORPUS} not found; the campaign runs on the sample and synthetic traces only`);

  if (o.replayCase) {
    const [campaign, k] = o.replayCase.split(":").map((x) => Number(x) >>> 0);
    const t0 = Date.now();
    for (let j = k % o.workers; j < k; j += o.workers) {
      const { base, seed } = caseOf(h, bases, campaign, j);
      const before = await h.checkInput(h.mutateAnyCase(seed, base, bases, o.only).bytes, seed);
      if (before.problems.length) console.log(`case ${j} (${base.name}:${seed}) on the way: ${before.problems[0]}`);
    }
    const { base, seed } = caseOf(h, bases, campaign, k);
    const c = h.mutateAnyCase(seed, base, bases, o.only);
    console.log(
      `case ${k}: ${base.name} seed ${seed}, after ${Math.ceil((k - (k % o.workers)) / o.workers)} cases (${Math.round((Date.now() - t0) / 1000)} s)\n  ${c.steps.join("\n  ")}`,
    );
    const r = await h.checkInput(c.bytes, seed);
    console.log(`${r.outcome}, ${r.rows} rows, ${r.warnings} warnings, ${Math.round(r.ms)} ms`);
    for (const p of r.problems) console.log(`  problem: ${p}`);
    process.exit(r.problems.length ? 1 : 0);
  }

  if (o.replay || o.input) {
    let bytes,
      label,
      checkSeed = o.seed ?? 1;
    if (o.input) {
      bytes = new Uint8Array(readFileSync(o.input));
      label = o.input;
    } else {
      const replay = o.replay ?? "";
      const at = replay.lastIndexOf(":");
      const name = replay.slice(0, at),
        seed = Number(replay.slice(at + 1)) >>> 0;
      const base = bases.find((b) => b.name === name);
      if (!base) throw new Error(`no base ${name}; bases: ${bases.map((b) => b.name).join(", ")}`);
      const c = h.mutateAnyCase(seed, base, bases, o.only);
      bytes = c.bytes;
      checkSeed = seed; // the campaign checks a case with its own seed (slices, chunk and batch sizes)
      label = `${name} seed ${seed}`;
      console.log(`${label}: ${bytes.length} bytes\n  ${c.steps.join("\n  ")}`);
    }
    const r = await h.checkInput(bytes, checkSeed);
    console.log(`${r.outcome}, ${r.rows} rows, ${r.warnings} warnings, ${Math.round(r.ms)} ms`);
    for (const p of r.problems) console.log(`  problem: ${p}`);
    process.exit(r.problems.length ? 1 : 0);
  }

  const campaign = o.seed ?? randomInt(0x100000000);
  const endAt = Date.now() + o.minutes * 60_000;
  const started = Date.now();
  console.log(
    `fuzz: campaign seed ${campaign}, ${bases.length} bases, ${o.workers} workers, ${o.minutes} min${o.only ? `, mutators ${o.only}` : ""}; failures go to ${o.out}`,
  );

  let done = 0,
    traces = 0,
    errors = 0,
    failing = 0;
  const perMutator = new Map();
  const signatures = new Map();
  const workers = new Set();

  const record = (c, problems) => {
    failing++;
    const sig = problems[0].replace(/\d+/g, "#").slice(0, 160);
    signatures.set(sig, (signatures.get(sig) ?? 0) + 1);
    if (failing > 200) return;
    mkdirSync(o.out, { recursive: true });
    const base = bases.find((b) => b.name === c.base);
    const again = h.mutateAnyCase(c.seed, base, bases, o.only);
    const stem = join(o.out, `${basename(c.base).replace(/[^\w.-]/g, "_")}-${c.seed}`);
    const ext = /\.(nettrace|netperf)$/.test(c.base) ? ".nettrace" : ".etl";
    writeFileSync(`${stem}${ext}`, again.bytes);
    const replay = h.replayCommand(c, o.only);
    writeFileSync(
      `${stem}.json`,
      JSON.stringify(
        {
          base: c.base,
          seed: c.seed,
          campaign,
          case: c.k,
          steps: again.steps,
          problems,
          replay,
          input: `npm run fuzz -- --input ${stem}${ext} --seed ${c.seed}`,
        },
        null,
        2,
      ) + "\n",
    );
    console.log(`FAIL ${c.base} seed ${c.seed}: ${again.steps.join("; ")}\n  ${problems.slice(0, 3).join("\n  ")}\n  replay: ${replay}`);
  };

  const spawn = (first, stride) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { harness, campaign, first, stride, guardMs: o.guardMs, only: o.only } });
    /** @type {{ w: Worker, current: { k: number } | undefined, since: number, next: number, stride: number, stopped: boolean }} */
    const state = { w, current: undefined, since: Date.now(), next: first, stride, stopped: false };
    workers.add(state);
    w.on("message", (m) => {
      if (m.type === "start") {
        state.current = m;
        state.since = Date.now();
      } else if (m.type === "done") {
        done++;
        if (m.outcome === "trace") traces++;
        else errors++;
        for (const x of m.mutators) perMutator.set(x, (perMutator.get(x) ?? 0) + 1);
        if (m.problems.length) record(state.current, m.problems);
        state.next = m.k + stride;
        state.current = undefined;
      } else if (m.type === "stopped") {
        state.stopped = true;
        workers.delete(state);
        w.terminate();
      }
    });
    w.on("error", (e) => {
      if (state.current) record(state.current, [`worker died: ${e?.stack ?? e}`]);
      workers.delete(state);
      if (Date.now() < endAt) spawn((state.current?.k ?? state.next - stride) + stride, stride);
    });
    return state;
  };

  for (let i = 0; i < o.workers; i++) spawn(i, o.workers);

  let lastReport = Date.now();
  await /** @type {Promise<void>} */ (
    new Promise((finish) => {
      const tick = setInterval(() => {
        const now = Date.now();
        for (const s of [...workers]) {
          if (s.current && now - s.since > o.hangMs) {
            const c = s.current;
            workers.delete(s);
            s.w.removeAllListeners("error");
            s.w.terminate();
            record(c, [`still decoding after ${o.hangMs} ms (hang)`]);
            if (now < endAt) spawn(c.k + s.stride, s.stride);
          }
        }
        if (now - lastReport >= 10_000) {
          lastReport = now;
          const secs = (now - started) / 1000;
          console.log(
            `[${clock(now - started)}] ${done} inputs (${(done / secs).toFixed(0)}/s): ${traces} traces, ${errors} EtlFormatError, ${failing} failing`,
          );
        }
        if (now >= endAt) {
          for (const s of workers) s.w.postMessage("stop");
          if (workers.size === 0 || now - endAt > o.hangMs) {
            clearInterval(tick);
            for (const s of workers) s.w.terminate();
            finish();
          }
        }
      }, 250);
    })
  );

  const secs = (Date.now() - started) / 1000;
  console.log(`fuzz: ${done} inputs in ${secs.toFixed(0)} s (campaign seed ${campaign}): ${traces} traces, ${errors} EtlFormatError, ${failing} failing`);
  console.log(
    `mutators: ${[...perMutator]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
  if (failing) {
    console.log(`failures by kind:`);
    for (const [sig, n] of [...signatures].sort((a, b) => b[1] - a[1])) console.log(`  ${n} x ${sig}`);
    console.log(`inputs written to ${o.out}`);
  }
  process.exit(failing ? 1 : 0);
}

// ---------------------------------------------------------------------------------------------
// Worker: runs cases k = first, first + stride, ... until told to stop.

async function runWorker() {
  const { harness, campaign, first, stride, guardMs, only } = workerData;
  const port = parentPort;
  if (!port) throw new Error("fuzz: runWorker outside a worker");
  const h = await loadHarness(harness);
  const bases = allBases(h);
  let stopping = false;
  port.on("message", (m) => {
    if (m === "stop") stopping = true;
  });
  for (let k = first; !stopping; k += stride) {
    const { base, seed } = caseOf(h, bases, campaign, k);
    const c = h.mutateAnyCase(seed, base, bases, only);
    port.postMessage({ type: "start", k, base: base.name, seed, steps: c.steps });
    const r = await h.checkInput(c.bytes, seed);
    if (r.ms > guardMs) r.problems.push(`took ${Math.round(r.ms)} ms (limit ${guardMs} ms)`);
    port.postMessage({ type: "done", k, ms: r.ms, problems: r.problems, outcome: r.outcome, mutators: c.mutators });
    // let the stop message in
    await new Promise((ok) => setImmediate(() => ok(undefined)));
  }
  port.postMessage({ type: "stopped" });
}

if (isMainThread) await main();
else await runWorker();
