// The viewer in Chromium (Debian's chromium through playwright-core): how long a generated trace
// takes from the file being chosen to its counts, providers and GC lanes on the screen, timed inside
// the page: from the file input's change event to the frame after the DOM change that shows the
// record count (the counts, provider table and GC lanes are drawn in that same task). A fresh page
// per run, one browser.

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
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  const built = spawnSync(process.execPath, [join(ROOT, "examples", "viewer", "build.mjs")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`viewer build failed: ${built.stderr}`);
  const { chromium } = await import("playwright-core");
  const site = await serve(VIEWER);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
  const rows: ViewerRow[] = [];
  try {
    for (const size of sizesMiB) {
      const file = generated(size, false);
      const bytes = statSync(file).size;
      const runsMs: number[] = [];
      let records = 0, gcs = 0;
      for (let r = 0; r < runs; r++) {
        warmPageCache(file);
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(e.message));
        await page.goto(site.url);
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
        const ms = await page.evaluate(() => { const w = window as unknown as { t0: number; t1: number }; return w.t1 - w.t0; });
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
        input: `generated ${size >= 1024 ? `${size / 1024} GiB` : `${size} MiB`}`, bytes, how: bytes > STREAM_BYTES ? "streamed" : "held",
        records, gcs, runsMs, bestMs: sorted[0], medianMs: sorted[sorted.length >> 1],
      });
    }
  } finally {
    await browser.close();
    await site.close();
  }
  return rows;
}

export function viewerMarkdown(rows: ViewerRow[] | string): string[] {
  const lines = ["", "The viewer in Chromium (examples/viewer; a fresh page per run, timed in the page from the file chosen to the frame that paints its record count, providers and GC lanes):", ""];
  if (typeof rows === "string") return [...lines, `Not measured: ${rows}.`];
  lines.push("| input | opened | records | GCs drawn | best ms | median ms | MB/s (best) | runs ms |", "|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    lines.push(`| ${r.input} | ${r.how} | ${r.records.toLocaleString("en-US")} | ${r.gcs.toLocaleString("en-US")} | ${r.bestMs.toFixed(0)} | ${r.medianMs.toFixed(0)} | ${(r.bytes / r.bestMs / 1000).toFixed(0)} | ${r.runsMs.map((x) => x.toFixed(0)).join(", ")} |`);
  }
  return lines;
}
