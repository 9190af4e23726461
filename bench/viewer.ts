// The viewer in Chromium (Debian's chromium through playwright-core): how long a generated trace
// takes from the file being chosen to its counts, providers and GC lanes on the screen, timed inside
// the page: from the file input's change event to the frame after the DOM change that shows the
// record count (the counts, provider table and GC lanes are drawn in that same task). A fresh page
// per run, one browser. Then the answers a .NET developer opens the viewer for, on the generated
// trace with samples: each asked in turn on one page, timed from the asking to its answer on screen.

import { existsSync, statSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "./static-server.js";
import { generated, warmPageCache } from "./inputs.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const VIEWER = join(ROOT, "examples", "viewer", "dist");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Files above this size the viewer streams (examples/viewer/main.ts STREAM_BYTES). */
const STREAM_BYTES = 256 << 20;

export interface ViewerRow {
  input: string;
  bytes: number;
  how: "held" | "streamed";
  records: number;
  gcs: number;
  runsMs: number[];
  bestMs: number;
  medianMs: number;
}

/** The viewer's time to counts on generated traces of `sizesMiB`, `runs` times each; a reason when it cannot run here. */
export async function viewerRows(sizesMiB: number[], runs = 3): Promise<ViewerRow[] | string> {
  return withViewer(async (browser, url) => {
    const rows: ViewerRow[] = [];
    for (const size of sizesMiB) {
      const file = generated(size, false);
      const bytes = statSync(file).size;
      const runsMs: number[] = [];
      let records = 0,
        gcs = 0;
      for (let r = 0; r < runs; r++) {
        warmPageCache(file);
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(e.message));
        await page.goto(url);
        await page.evaluate(() => {
          const w = window as unknown as { t0?: number; t1?: number };
          document.getElementById("file")!.addEventListener("change", () => (w.t0 = performance.now()), { capture: true });
          let seen = false;
          new MutationObserver(() => {
            if (w.t0 === undefined || seen || !document.querySelector("[data-testid=event-count]")?.textContent) return;
            // (the frame that paints them: after whatever else the page's thread does first)
            seen = true;
            requestAnimationFrame(() => (w.t1 = performance.now()));
          }).observe(document.body, { subtree: true, childList: true, characterData: true });
        });
        await page.setInputFiles("#file", file);
        await page.waitForFunction(() => (window as unknown as { t1?: number }).t1 !== undefined, null, { timeout: 300_000, polling: 100 });
        const ms = await page.evaluate(() => {
          const w = window as unknown as { t0: number; t1: number };
          return w.t1 - w.t0;
        });
        const count = await page.locator("[data-testid=event-count]").textContent();
        const note = (await page.locator("#gc-note").textContent()) ?? "";
        const incomplete = await page.locator("[data-testid=incomplete-banner]").isVisible();
        await page.close();
        if (errors.length) throw new Error(`viewer page error on ${file}: ${errors.join("; ")}`);
        // (a decode that stopped early is no figure)
        if (incomplete) throw new Error(`the viewer decoded ${file} only in part (its incomplete banner shows)`);
        records = Number(count!.replace(/,/g, ""));
        gcs = Number(/^([\d,]+) GCs/.exec(note)?.[1].replace(/,/g, "") ?? 0);
        runsMs.push(ms);
      }
      const sorted = [...runsMs].sort((a, b) => a - b);
      rows.push({
        input: `generated ${size >= 1024 ? `${size / 1024} GiB` : `${size} MiB`}`,
        bytes,
        how: bytes > STREAM_BYTES ? "streamed" : "held",
        records,
        gcs,
        runsMs,
        bestMs: sorted[0],
        medianMs: sorted[sorted.length >> 1],
      });
    }
    return rows;
  });
}

export function viewerMarkdown(rows: ViewerRow[] | string): string[] {
  const lines = [
    "",
    "The viewer in Chromium (examples/viewer; a fresh page per run, timed in the page from the file chosen to the frame that paints its record count, providers and GC lanes):",
    "",
  ];
  if (typeof rows === "string") return [...lines, `Not measured: ${rows}.`];
  lines.push("| input | opened | records | GCs drawn | best ms | median ms | MB/s (best) | runs ms |", "|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    lines.push(
      `| ${r.input} | ${r.how} | ${r.records.toLocaleString("en-US")} | ${r.gcs.toLocaleString("en-US")} | ${r.bestMs.toFixed(0)} | ${r.medianMs.toFixed(0)} | ${(r.bytes / r.bestMs / 1000).toFixed(0)} | ${r.runsMs.map((x) => x.toFixed(0)).join(", ")} |`,
    );
  }
  return lines;
}

export interface ViewerAnswer {
  answer: string;
  /** From the asking (the file chosen, for the first four) to the answer on screen. */
  ms: number;
  shows: string;
}

/** Chromium and the served viewer, for `run`; closed after. */
async function withViewer<T>(run: (browser: import("playwright-core").Browser, url: string) => Promise<T>): Promise<T | string> {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  const built = spawnSync(process.execPath, [join(ROOT, "examples", "viewer", "build.mjs")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`viewer build failed: ${built.stderr}`);
  const { chromium } = await import("playwright-core");
  const site = await serve(VIEWER);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    return await run(browser, site.url);
  } finally {
    await browser.close();
    await site.close();
  }
}

/**
 * The viewer's answers on the generated trace of `sizeMiB` with samples (streamed past 256 MiB): the
 * summary and health check, GC statistics and the CPU flame graph (the second pass), a field filter,
 * the allocation call tree and a SQL count, each waited for in turn on one page.
 */
export async function viewerAnswers(sizeMiB: number): Promise<{ input: string; bytes: number; answers: ViewerAnswer[] } | string> {
  const file = generated(sizeMiB, false, true);
  const bytes = statSync(file).size;
  return withViewer(async (browser, url) => {
    warmPageCache(file);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(url);
    const answers: ViewerAnswer[] = [];
    const text = async (selector: string) => ((await page.locator(selector).first().textContent()) ?? "").trim();
    const wait = (fn: string) => page.waitForFunction(fn, null, { timeout: 900_000, polling: 100 });
    let t0 = Date.now();
    await page.setInputFiles("#file", file);
    await wait(`!!document.querySelector("[data-testid=event-count]")?.textContent`);
    answers.push({ answer: "records, providers, names, GC lanes", ms: Date.now() - t0, shows: `${await text("[data-testid=event-count]")} records` });
    await wait(`document.querySelectorAll("[data-testid=doctor] li").length > 0`);
    answers.push({ answer: "health check", ms: Date.now() - t0, shows: `${await page.locator("[data-testid=doctor] li").count()} findings` });
    await wait(`document.querySelectorAll("[data-testid=gc-stats] tbody tr").length > 0`);
    answers.push({
      answer: "GC statistics (second pass)",
      ms: Date.now() - t0,
      shows: /^[^:]*: [\d,]+ GCs/.exec(await text("[data-testid=gc-rollup]"))?.[0] ?? "",
    });
    await wait(`!!document.querySelector("[data-testid=flame]")?.getAttribute("data-samples")`);
    answers.push({
      answer: "CPU flame graph (second pass)",
      ms: Date.now() - t0,
      shows: `${Number(await page.locator("[data-testid=flame]").getAttribute("data-samples")).toLocaleString("en-US")} samples of the busiest process`,
    });
    // AllocationTick over 100 KB by a payload field, then their stacks weighed by the amount
    t0 = Date.now();
    await page.selectOption("#f-name", "Microsoft-Windows-DotNETRuntime/GC/AllocationTick");
    await page.fill("#f-where", "AllocationAmount > 102000");
    await page.press("#f-where", "Enter");
    await wait(`/^[\\d,]+ shown$/.test(document.querySelector("[data-testid=shown-count]")?.textContent ?? "")`);
    answers.push({ answer: "field filter (AllocationTick, AllocationAmount > 102000)", ms: Date.now() - t0, shows: await text("[data-testid=shown-count]") });
    t0 = Date.now();
    await page.fill("[data-testid=st-field]", "AllocationAmount");
    await page.locator("[data-testid=st-show]").click();
    await wait(`!!document.querySelector("[data-testid=st-flame]")?.getAttribute("data-total")`);
    const total = Number(await page.locator("[data-testid=st-flame]").getAttribute("data-total"));
    answers.push({
      answer: "allocation call tree of those events",
      ms: Date.now() - t0,
      shows: `${Number(await page.locator("[data-testid=st-flame]").getAttribute("data-events")).toLocaleString("en-US")} events, ${(total / 1e6).toFixed(1)} MB`,
    });
    t0 = Date.now();
    await page.fill("[data-testid=sql-text]", "SELECT count(*) FROM events");
    await page.click("[data-testid=sql-run]");
    await wait(
      `(() => { const s = document.querySelector("[data-testid=sql-status]"); return s.dataset.rows !== undefined || s.textContent.startsWith("SQL:"); })()`,
    );
    const status = await text("[data-testid=sql-status]");
    if (status.startsWith("SQL:")) throw new Error(`the viewer's SQL panel failed on ${file}: ${status}`);
    answers.push({
      answer: "SQL: tables loaded into DuckDB, then count(*) of events",
      ms: Date.now() - t0,
      shows: `${Number(await text("[data-testid=sql-result] tbody td")).toLocaleString("en-US")} rows`,
    });
    await page.close();
    if (errors.length) throw new Error(`viewer page error on ${file}: ${errors.join("; ")}`);
    return { input: `generated ${sizeMiB >= 1024 ? `${sizeMiB / 1024} GiB` : `${sizeMiB} MiB`} with samples`, bytes, answers };
  });
}

export function answersMarkdown(r: Awaited<ReturnType<typeof viewerAnswers>>): string[] {
  const lines = [
    "",
    "The viewer's answers, asked in turn on one page in Chromium (the first four timed from the file chosen, the others from their asking):",
    "",
  ];
  if (typeof r === "string") return [...lines, `Not measured: ${r}.`];
  lines.push(`${r.input} (${(r.bytes / 1e9).toFixed(2)} GB, streamed):`, "", "| answer | s | shows |", "|---|---|---|");
  for (const a of r.answers) lines.push(`| ${a.answer} | ${(a.ms / 1000).toFixed(1)} | ${a.shows} |`);
  return lines;
}
