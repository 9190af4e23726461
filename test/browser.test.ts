// The viewer and a tiny bundled app, in Debian's Chromium through playwright-core. The counts the
// pages show must equal a Node decode of the same file.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium, type Browser, type Page } from "playwright-core";
import { DuckDBInstance } from "@duckdb/node-api";
import { tableFromIPC } from "@uwdata/flechette";
import { openTrace, type Trace } from "../dist/bindings/index.js";
import { attachStacks, cpuProfile, gcStats, stackNames, streamCpuProfile, traceDoctor } from "../dist/bindings/analysis/index.js";
import { PayloadContext, payloadPairs } from "../dist/bindings/perfview/index.js";
import { streamTraceFile } from "../dist/bindings/node.js";
import { nameTraceProviders } from "../dist/bindings/naming/os-names.js";
import { generateTraceFile } from "../dist/bindings/generator/generate-file.js";
import { serve } from "./helpers/static-server.js";
import { payloadU32, rowsWithStackItems } from "./helpers/by-hand.js";
import { CORPUS, HAVE_CORPUS, etlPath } from "./helpers/shared.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) {
  if (process.env.CI === "true") throw new Error(`CI=true but no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`);
  console.warn(`notice: no Chromium at ${CHROMIUM}; browser tests are skipped`);
}
const SAMPLE = join(ROOT, "examples", "sample.etl");
const VIEWER = join(ROOT, "examples", "viewer", "dist");

let browser: Browser;
let site: { url: string; close(): Promise<void> };

async function nodeCounts(file: string) {
  const t = await openTrace(readFileSync(file));
  const gc = gcNote(gcEventsOf(t));
  // (the viewer names providers known only by GUID from the trace's manifests and Windows' registered names)
  nameTraceProviders(t);
  const perProvider = new Map<string, number>();
  for (let i = 0; i < t.events.length; i++) {
    const p = t.providers.get(t.events.provider[i]);
    const name = p.group ? `${p.name}/${p.group}` : p.name;
    perProvider.set(name, (perProvider.get(name) ?? 0) + 1);
  }
  return { records: t.events.length, perProvider, gc };
}

/** GC/Start and GC/Stop events of the .NET runtime, for the viewer's GC lanes. */
interface GcEvent {
  ts: bigint;
  processor: number;
  row: number;
  pid: number;
  start: boolean;
  ms: number;
}

function gcEventsOf(t: Trace, firstRow = 0): GcEvent[] {
  const out: GcEvent[] = [];
  // (the query's row is one cursor: read as it goes)
  for (const r of t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: [1, 2] })) {
    out.push({ ts: r.timestamp, processor: r.processor, row: firstRow + r.index, pid: r.pid ?? 0, start: r.eventId === 1, ms: r.relativeMSec });
  }
  return out;
}

/** The GC lanes' note: each process's GC/Start paired with its next GC/Stop in time order (timestamp, processor, file order). */
function gcNote(events: GcEvent[]): { gcs: number; longest: string } {
  const sorted = [...events].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.processor - b.processor || a.row - b.row));
  const open = new Map<number, number>();
  let gcs = 0,
    longest = 0;
  for (const e of sorted) {
    if (e.start) open.set(e.pid, e.ms);
    else if (open.has(e.pid)) {
      gcs++;
      longest = Math.max(longest, e.ms - open.get(e.pid)!);
      open.delete(e.pid);
    }
  }
  return { gcs, longest: longest.toFixed(3) };
}

/** The GC count and longest pause the viewer's note gives. */
async function shownGcNote(page: Page): Promise<{ gcs: number; longest: string } | undefined> {
  const note = (await page.locator("#gc-note").textContent()) ?? "";
  if (note.startsWith("No .NET GC events")) return { gcs: 0, longest: "0.000" };
  const m = /^([\d,]+) GCs in .* Longest pause ([\d.]+) ms\./.exec(note);
  return m ? { gcs: Number(m[1].replace(/,/g, "")), longest: m[2] } : undefined;
}

describe.skipIf(!HAVE_CHROMIUM)("in Chromium", () => {
  beforeAll(async () => {
    if (!existsSync(join(VIEWER, "index.html"))) {
      const r = spawnSync(process.execPath, [join(ROOT, "examples", "viewer", "build.mjs")], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(r.stderr);
    }
    site = await serve(VIEWER);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  async function viewerCounts(file: string, timeout = 60_000, query = "", more?: (page: Page) => Promise<unknown>) {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(site.url + query);
    await page.setInputFiles("#file", file);
    const count = await page.locator("[data-testid=event-count]").textContent({ timeout });
    // (a streamed trace's rows come from its worker as the table asks for them)
    await page.locator("#grid .grid-row").nth(5).waitFor({ timeout: 60_000 });
    const rows = await page
      .locator("[data-testid=provider-count]")
      .evaluateAll((trs) => trs.map((tr) => [(tr as HTMLTableRowElement).cells[0].textContent, (tr as HTMLTableRowElement).cells[1].textContent]));
    const shown = await page.locator("[data-testid=shown-count]").textContent();
    const gridRows = await page.locator("#grid .grid-row").count();
    const incomplete = await page.locator("[data-testid=incomplete-banner]").isVisible();
    const gc = await shownGcNote(page);
    const extra = await more?.(page);
    await page.close();
    expect(errors).toEqual([]);
    return {
      records: Number(count!.replace(/,/g, "")),
      perProvider: new Map(rows.map(([n, c]) => [n!, Number(c!.replace(/,/g, ""))])),
      shown,
      gridRows,
      incomplete,
      gc,
      extra,
    };
  }

  // (and EventPipe files: the viewer opens them as it opens .etl files)
  const nettrace = (name: string) => join(CORPUS, "nettrace", name);
  const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));
  const files = [
    SAMPLE,
    ...(HAVE_CORPUS
      ? [
          etlPath("net.4.5.2.x64.etl"),
          etlPath("net.4.5.x86.etl"),
          etlPath("gcevents.etl"),
          nettrace("eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace"),
          nettrace("eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"),
        ]
      : []),
  ];
  for (const file of files) {
    it(`the viewer shows the counts of a Node decode: ${file.split("/").pop()}`, async () => {
      const [want, got] = await Promise.all([nodeCounts(file), viewerCounts(file)]);
      expect(got.records).toBe(want.records);
      expect(got.perProvider).toEqual(want.perProvider);
      expect(got.shown).toBe(`${want.records.toLocaleString("en-US")} shown`);
      expect(got.gridRows).toBeGreaterThan(5); // the virtualized table renders only what is visible
      expect(got.gridRows).toBeLessThan(40);
      expect(got.incomplete).toBe(false); // no banner on a complete trace
      expect(got.gc).toEqual(want.gc); // the GC lanes: GCs paired in time order, the longest pause
    }, 90_000);
  }

  it("the viewer opens a generated 1 GiB trace with CPU samples: the counts of a Node decode (streamed), GC statistics as the gc command counts them, the health check, the CPU flame graph; no page error", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "etw-wasm-1g-")), "generated-1GiB.etl");
    generateTraceFile(file, { targetBytes: 2 ** 30, seed: 9, processors: 4, samples: true });
    const want = { records: 0, perProvider: new Map<string, number>() };
    const gcEvents: GcEvent[] = [];
    const stream = await streamTraceFile(file);
    for await (const b of stream) {
      for (const e of gcEventsOf(b, b.firstRow)) gcEvents.push(e);
      const col = b.events.columns.provider;
      const counts = new Float64Array(b.providers.length);
      for (let i = 0; i < col.length; i++) counts[col[i]]++;
      for (const p of b.providers) {
        if (!counts[p.index]) continue;
        const name = p.group ? `${p.name}/${p.group}` : p.name;
        want.perProvider.set(name, (want.perProvider.get(name) ?? 0) + counts[p.index]);
      }
      want.records += b.events.length;
    }
    expect(stream.end!.complete).toBe(true);
    expect(want.records).toBeGreaterThan(8_000_000);
    // the GCs the command line counts, and the CPU profile of a Node stream
    const gc = spawnSync(process.execPath, [CLI, "gc", file, "--format", "csv"], { encoding: "utf8", maxBuffer: 1 << 28 });
    expect(gc.status, gc.stderr).toBe(0);
    const cliGcs = gc.stdout.trim().split("\n").length - 1;
    expect(cliGcs).toBeGreaterThan(10_000);
    const profile = await streamCpuProfile(await streamTraceFile(file));
    const byPid = new Map<number, number>();
    for (const samplePid of profile.samples.pid) byPid.set(samplePid, (byPid.get(samplePid) ?? 0) + 1);
    const [busiest, busiestSamples] = [...byPid].sort((a, b) => b[1] - a[1])[0];
    expect(busiestSamples).toBeGreaterThan(10_000);
    // (over 256 MiB: streamed in the viewer's worker, the table paged from the file)
    const got = await viewerCounts(file, 300_000, "", async (page) => ({
      // (GC statistics and the CPU panel come from a second pass, after the summary)
      cpuReady: await page.locator("[data-testid=cpu-top] tbody tr").first().waitFor({ timeout: 240_000 }),
      gcRows: await page.locator("[data-testid=gc-stats] tbody tr").count(),
      gcMore: await page.locator("[data-testid=gc-more]").textContent(),
      rollup: await page.locator("[data-testid=gc-rollup]").textContent(),
      findings: await page.locator("[data-testid=doctor] li").count(),
      cpuProcess: await page.locator("[data-testid=cpu-process]").inputValue(),
      cpuSamples: await page.locator("[data-testid=flame]").getAttribute("data-samples"),
    }));
    rmSync(file);
    expect(got.extra).toEqual({
      cpuReady: undefined,
      gcRows: 2000,
      gcMore: `The first 2,000 of ${cliGcs.toLocaleString("en-US")} GCs; \`etw-wasm gc\` lists them all.`,
      rollup: expect.stringContaining(`${cliGcs.toLocaleString("en-US")} GCs`),
      findings: expect.any(Number),
      cpuProcess: String(busiest),
      cpuSamples: String(busiestSamples),
    });
    expect((got.extra as { findings: number }).findings).toBeGreaterThan(5);
    expect(got.records).toBe(want.records);
    expect(got.perProvider).toEqual(want.perProvider);
    expect(got.incomplete).toBe(false);
    expect(got.shown).toBe(`${want.records.toLocaleString("en-US")} shown`);
    expect(got.gridRows).toBeGreaterThan(5);
    expect(got.gridRows).toBeLessThan(40);
    const wantGc = gcNote(gcEvents);
    expect(wantGc.gcs).toBeGreaterThan(10_000);
    expect(got.gc).toEqual(wantGc);
  }, 600_000);

  it.skipIf(!HAVE_CORPUS)(
    "a streamed trace (batches of 1 MiB): the counts of a Node decode, and rows paged from the file as the Node decode has them",
    async () => {
      const file = etlPath("net.4.5.x86.etl");
      const t = await openTrace(readFileSync(file));
      const want = await nodeCounts(file);
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${site.url}?stream=1048576`);
      await page.setInputFiles("#file", file);
      const count = await page.locator("[data-testid=event-count]").textContent({ timeout: 60_000 });
      expect(Number(count!.replace(/,/g, ""))).toBe(want.records);
      const rows = await page
        .locator("[data-testid=provider-count]")
        .evaluateAll((trs) =>
          trs.map((tr) => [(tr as HTMLTableRowElement).cells[0].textContent, Number((tr as HTMLTableRowElement).cells[1].textContent!.replace(/,/g, ""))]),
        );
      expect(new Map(rows as [string, number][])).toEqual(want.perProvider);
      expect(await page.locator("#stream-note").isVisible()).toBe(true);
      // rows from the start, from the middle (a later batch, read after buffer 0) and the last
      for (const r of [0, 1, Math.floor(want.records / 2) + 17, want.records - 1]) {
        await page.locator("#grid").evaluate((g, top) => {
          g.scrollTop = top;
          g.dispatchEvent(new Event("scroll"));
        }, r * 22);
        const cell = page.locator(`#grid .grid-row[data-row="${r}"] span`);
        await cell.first().waitFor({ timeout: 30_000 });
        const cells = await cell.allTextContents();
        const row = t.events.row(r);
        expect(cells.slice(0, 6), `row ${r}`).toEqual([
          row.relativeMSec.toFixed(3),
          t.names.ofRow(r),
          String(row.pid ?? ""),
          String(row.tid ?? ""),
          String(row.processor),
          String(row.payloadLength),
        ]);
      }
      // the analyses of the streamed trace, from its one pass, as Node's of the whole trace: a GC statistics
      // row per complete GC, the health check's findings, the CPU panel's busiest process and its samples
      const gcs = (await gcStats(t)).flatMap((p) => p.GCs.filter((g) => g.IsComplete).map((g) => [String(p.PID), String(g.Number)]));
      expect(gcs.length).toBeGreaterThan(100);
      await page.locator("[data-testid=gc-stats] tbody tr").first().waitFor({ timeout: 30_000 });
      const gcRows = await page
        .locator("[data-testid=gc-stats] tbody tr")
        .evaluateAll((trs) => trs.map((tr) => [tr.children[0].textContent, tr.children[2].textContent]));
      expect(gcRows).toEqual(gcs);
      const report = await traceDoctor(t);
      const findings = await page
        .locator("[data-testid=doctor] li")
        .evaluateAll((lis) => lis.map((li) => [(li as HTMLElement).dataset.id, (li as HTMLElement).dataset.status]));
      expect(findings).toEqual(report.findings.map((f) => [f.id, f.status]));
      const profile = cpuProfile(t);
      const byPid = new Map<number, number>();
      for (const samplePid of profile.samples.pid) byPid.set(samplePid, (byPid.get(samplePid) ?? 0) + 1);
      const [pid, samples] = [...byPid].sort((a, b) => b[1] - a[1])[0];
      await page.locator("[data-testid=cpu-top] tbody tr").first().waitFor({ timeout: 30_000 });
      expect(await page.locator("[data-testid=cpu-process]").inputValue()).toBe(String(pid));
      expect(await page.locator("[data-testid=flame]").getAttribute("data-samples")).toBe(String(samples));
      await page.close();
      expect(errors).toEqual([]);
    },
    120_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "a trace cut in mid-buffer shows the incomplete banner with the reason and offset",
    async () => {
      const bytes = readFileSync(etlPath("net.4.5.2.x64.etl"));
      const full = await openTrace(bytes);
      const { fileOffset, bufferSize } = full.buffer(120);
      const cut = fileOffset + (bufferSize >> 1);
      const file = join(mkdtempSync(join(tmpdir(), "etw-wasm-cut-")), "cut.etl");
      writeFileSync(file, bytes.subarray(0, cut));
      const t = await openTrace(bytes.subarray(0, cut));
      expect(t.incomplete?.reason).toBe("truncated-buffer");
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(site.url);
      await page.setInputFiles("#file", file);
      const banner = page.locator("[data-testid=incomplete-banner]");
      await banner.waitFor({ state: "visible", timeout: 60_000 });
      const text = (await banner.textContent())!;
      expect(text).toContain("Incomplete trace.");
      expect(text).toContain(`Decoding stopped early at byte offset ${fileOffset.toLocaleString("en-US")} (100% of cut.etl read)`);
      expect(text).toContain(t.incomplete!.message);
      expect(await banner.getAttribute("data-reason")).toBe("truncated-buffer");
      expect(await banner.getAttribute("data-offset")).toBe(String(fileOffset));
      // the rows before the cut are all there
      const count = await page.locator("[data-testid=event-count]").textContent();
      expect(Number(count!.replace(/,/g, ""))).toBe(t.events.length);
      expect(await page.locator("[data-testid=decoded-bytes]").textContent()).toBe(
        `${cut.toLocaleString("en-US")} of ${cut.toLocaleString("en-US")} bytes (incomplete)`,
      );
      // opening a complete trace afterwards takes the banner away
      await page.setInputFiles("#file", SAMPLE);
      await page.waitForFunction(() => document.getElementById("status")?.textContent?.startsWith("sample.etl:"), null, { timeout: 60_000 });
      expect(await banner.isVisible()).toBe(false);
      await page.close();
      expect(errors).toEqual([]);
    },
    90_000,
  );

  it("filters the event table through the query API", async () => {
    const page = await browser.newPage();
    await page.goto(site.url);
    await page.setInputFiles("#file", SAMPLE);
    await page.locator("[data-testid=event-count]").waitFor({ timeout: 60_000 });
    await page.selectOption("#f-name", "Microsoft-Windows-DotNETRuntime/GC/Start");
    const shown = await page.locator("[data-testid=shown-count]").textContent();
    const t = await openTrace(readFileSync(SAMPLE));
    const want = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 1 }).length;
    expect(shown).toBe(`${want} shown`);
    expect(await page.locator("#gc-note").textContent()).toMatch(new RegExp(`^${want} GCs`));
    // GC statistics: one row per complete GC, PerfView's columns, the numbers of gcStats
    const stats = await gcStats(t);
    const complete = stats.flatMap((p) => p.GCs.filter((g) => g.IsComplete));
    await page
      .locator("[data-testid=gc-stats] tbody tr")
      .nth(complete.length - 1)
      .waitFor({ timeout: 30_000 });
    const cells = await page.locator("[data-testid=gc-stats] tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    expect(cells).toHaveLength(complete.length);
    const three = (x: number) => x.toLocaleString("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 3 });
    cells.forEach((c, k) => {
      const g = complete[k];
      expect([c[0], c[2], c[4], c[5], c[7], c[11]]).toEqual([
        String(g.PID),
        String(g.Number),
        g.Reason,
        g.GCGenerationName,
        three(g.PauseDurationMSec),
        three(g.HeapSizeAfterMB),
      ]);
    });
    expect(await page.locator("[data-testid=gc-rollup]").textContent()).toContain(`${complete.length} GCs`);
    await page.close();
  }, 90_000);

  it("a where filter on payload fields, and a clicked event's fields and stack below the table", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(site.url);
    await page.setInputFiles("#file", SAMPLE);
    await page.locator("[data-testid=event-count]").waitFor({ timeout: 60_000 });
    const t = await openTrace(readFileSync(SAMPLE));
    // by hand: AllocationTick's AllocationAmount is the UInt32 at the payload's start
    const ticks = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 10, order: "time" }).indices;
    const amount = (r: number) => payloadU32(t, r);
    const median = Array.from(ticks, amount).sort((a, b) => a - b)[ticks.length >> 1];
    const over = Array.from(ticks).filter((r) => amount(r) > median);
    await page.fill("#f-where", `AllocationAmount > ${median}`);
    await page.press("#f-where", "Enter");
    await page.waitForFunction((n) => document.querySelector("[data-testid=shown-count]")?.textContent === n, `${over.length.toLocaleString("en-US")} shown`, {
      timeout: 30_000,
    });
    // the first row shown, clicked: its fields
    await page.locator("#grid .grid-row[data-row='0']").click();
    await page.locator("[data-testid=details]").waitFor({ state: "visible", timeout: 30_000 });
    const fields = new Map(
      await page
        .locator("[data-testid=details-fields] tbody tr")
        .evaluateAll((trs) => trs.map((tr) => [tr.children[0].textContent, tr.children[1].textContent] as [string, string])),
    );
    expect(fields.get("AllocationAmount")?.replace(/,/g, "")).toBe(String(amount(over[0])));
    // a bad condition says so, and the table keeps the other filters' rows
    await page.fill("#f-where", "AllocationAmount >");
    await page.press("#f-where", "Enter");
    await page.waitForFunction(() => document.querySelector("[data-testid=shown-count]")?.textContent?.includes("has no value"), null, { timeout: 30_000 });
    // a CPU sample's stack, frames named as Node names them
    await page.fill("#f-where", "");
    await page.press("#f-where", "Enter");
    await page.selectOption("#f-name", "Windows Kernel/PerfInfo/Sample");
    await page.locator("#grid .grid-row[data-row='0']").click();
    attachStacks(t);
    const sample = t.query({ order: "time" }).indices.find((i) => t.names.ofRow(i) === "Windows Kernel/PerfInfo/Sample" && !!t.events.row(i).callStack)!;
    const firstSample = t.query({ order: "time" }).indices.find((i) => t.names.ofRow(i) === "Windows Kernel/PerfInfo/Sample")!;
    expect(sample).toBe(firstSample);
    const frames = t.events.row(sample).callStack!;
    await page.waitForFunction((n) => document.querySelectorAll("[data-testid=details-stack] li").length === n, frames.length, { timeout: 30_000 });
    expect(await page.locator("[data-testid=details-stack] li").allTextContents()).toEqual(frames);
    await page.close();
    expect(errors).toEqual([]);
  }, 90_000);

  it("the SQL panel: DuckDB-WASM over the trace's tables answers as the Node decode counts; an example query charts a time column", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(site.url);
    await page.setInputFiles("#file", SAMPLE);
    await page.locator("[data-testid=event-count]").waitFor({ timeout: 60_000 });
    const t = await openTrace(readFileSync(SAMPLE));
    const run = (sql: string) => runSql(page, sql);
    expect(await run("SELECT count(*) AS n FROM events")).toEqual([[String(t.events.length)]]);
    const gcs = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 1 }).length;
    expect(await run("SELECT count(*) AS n FROM GC_Start")).toEqual([[String(gcs)]]);
    const perPid = new Map<number, number>();
    for (const r of t.query({ provider: "Microsoft-Windows-DotNETRuntime" })) perPid.set(r.pid!, (perPid.get(r.pid!) ?? 0) + 1);
    expect(await run("SELECT pid, count(*) AS n FROM events WHERE providerName = 'Microsoft-Windows-DotNETRuntime' GROUP BY 1 ORDER BY 1")).toEqual(
      [...perPid].sort((a, b) => a[0] - b[0]).map(([p, n]) => [String(p), String(n)]),
    );
    // an example: every GC's pause (SuspendEEStart to the next RestartEEStop), drawn over time
    await page.evaluate(() => {
      delete document.querySelector<HTMLElement>("[data-testid=sql-status]")!.dataset.rows;
    });
    await page.getByRole("button", { name: "GC pauses (ms)" }).click();
    await page.waitForFunction(
      () =>
        document.querySelector<HTMLElement>("[data-testid=sql-status]")!.dataset.rows !== undefined &&
        !/Running/.test(document.querySelector("[data-testid=sql-status]")!.textContent!),
      null,
      { timeout: 60_000 },
    );
    const suspends = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 9 }).length;
    expect(await page.locator("[data-testid=sql-status]").getAttribute("data-rows")).toBe(String(suspends));
    expect(await page.locator("[data-testid=sql-chart]").isVisible()).toBe(true);
    expect(await page.locator("[data-testid=sql-result] tbody tr").first().locator("td").first().textContent()).toMatch(/^\d{4}-\d\d-\d\dT/);
    await page.close();
    t.dispose();
    expect(errors).toEqual([]);
  }, 180_000);

  /** `sql` run in the viewer's SQL panel: the result's rows as text (the status must not be an error or say the trace is incomplete). */
  async function runSql(page: Page, sql: string): Promise<(string | null)[][]> {
    await page.fill("[data-testid=sql-text]", sql);
    await page.evaluate(() => {
      delete document.querySelector<HTMLElement>("[data-testid=sql-status]")!.dataset.rows;
    });
    await page.click("[data-testid=sql-run]");
    await page.waitForFunction(
      () => {
        const s = document.querySelector<HTMLElement>("[data-testid=sql-status]")!;
        return s.dataset.rows !== undefined || s.textContent!.startsWith("SQL:");
      },
      null,
      { timeout: 120_000 },
    );
    expect(await page.locator("[data-testid=sql-status]").textContent()).not.toMatch(/^SQL:|incomplete/);
    return page.locator("[data-testid=sql-result] tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  }

  /** `file` opened in a fresh page, streamed in batches of 1 MiB; the page's errors collected. */
  async function openStreamed(file: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${site.url}?stream=1048576`);
    await page.setInputFiles("#file", file);
    await page.locator("[data-testid=event-count]").waitFor({ timeout: 60_000 });
    expect(await page.locator("#stream-note").isVisible()).toBe(true);
    return { page, errors };
  }

  it.skipIf(!HAVE_CORPUS)(
    "filters on a streamed trace (batches of 1 MiB): event, where and PID keep the rows found by hand, paged from the file",
    async () => {
      const file = etlPath("net.4.5.x86.etl");
      const t = await openTrace(readFileSync(file));
      const { page, errors } = await openStreamed(file);
      const shownIs = (n: number) =>
        page.waitForFunction((text) => document.querySelector("[data-testid=shown-count]")?.textContent === text, `${n.toLocaleString("en-US")} shown`, {
          timeout: 60_000,
        });
      const cellsOf = async (k: number) => {
        await page.locator("#grid").evaluate((g, top) => {
          g.scrollTop = top;
          g.dispatchEvent(new Event("scroll"));
        }, k * 22);
        const cell = page.locator(`#grid .grid-row[data-row="${k}"] span`);
        await cell.first().waitFor({ timeout: 30_000 });
        return (await cell.allTextContents()).slice(0, 6);
      };
      const want = (r: number) => {
        const row = t.events.row(r);
        return [row.relativeMSec.toFixed(3), t.names.ofRow(r), String(row.pid ?? ""), String(row.tid ?? ""), String(row.processor), String(row.payloadLength)];
      };
      // by hand, in file order: GC/Start (version 1 on) whose Depth, the UInt32 at payload offset 4, is 2
      const gen2 = t
        .query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 1 })
        .indices.filter((r) => t.events.version[r] >= 1 && payloadU32(t, r, 4) === 2);
      expect(gen2.length).toBeGreaterThan(2);
      await page.selectOption("#f-name", "Microsoft-Windows-DotNETRuntime/GC/Start");
      await page.fill("#f-where", "Depth = 2");
      await page.press("#f-where", "Enter");
      await shownIs(gen2.length);
      for (const k of [0, gen2.length - 1]) expect(await cellsOf(k), `gen 2 GC ${k}`).toEqual(want(gen2[k]));
      // and one process's
      const pid = t.events.pid[gen2[gen2.length - 1]];
      const ofPid = gen2.filter((r) => t.events.pid[r] === pid);
      await page.fill("#f-pid", String(pid));
      await page.press("#f-pid", "Enter");
      await shownIs(ofPid.length);
      expect(await cellsOf(0)).toEqual(want(ofPid[0]));
      // a bad condition says so; no filter: every row again
      await page.fill("#f-where", "Depth >");
      await page.press("#f-where", "Enter");
      await page.waitForFunction(() => document.querySelector("[data-testid=shown-count]")?.textContent?.includes("where:"), null, { timeout: 30_000 });
      await page.fill("#f-where", "");
      await page.fill("#f-pid", "");
      await page.selectOption("#f-name", "");
      await shownIs(t.events.length);
      expect(await cellsOf(5)).toEqual(want(5));
      await page.close();
      t.dispose();
      expect(errors).toEqual([]);
    },
    180_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "the SQL panel on a streamed trace (batches of 1 MiB): each batch's tables appended, counts and rows as the Node decode has them",
    async () => {
      const file = etlPath("net.4.5.x86.etl");
      const t = await openTrace(readFileSync(file));
      const { page, errors } = await openStreamed(file);
      const run = (sql: string) => runSql(page, sql);
      // every row once, numbered as the whole trace numbers them, though the file came in many batches
      const n = t.events.length;
      expect(await run("SELECT count(*), count(DISTINCT row), min(row), max(row) FROM events")).toEqual([[String(n), String(n), "0", String(n - 1)]]);
      const gcs = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 1 });
      expect(gcs.length).toBeGreaterThan(100);
      // a typed table's rows are the events' rows of the same number (appended batch by batch alike)
      expect(await run("SELECT count(*) FROM GC_Start s JOIN events e USING (row) WHERE e.eventId = 1")).toEqual([[String(gcs.length)]]);
      // (Depth, a UInt32 at payload offset 4 from version 1 on; null in a version 0 row, which has none)
      const depth = new Map<number, number>();
      for (const r of gcs) {
        const d = r.version >= 1 ? payloadU32(t, r.index, 4) : -1;
        depth.set(d, (depth.get(d) ?? 0) + 1);
      }
      const byDepth = [...depth].sort((a, b) => (a[0] < 0 ? 1 : b[0] < 0 ? -1 : a[0] - b[0])).map(([d, k]) => [d < 0 ? "" : String(d), String(k)]);
      expect(await run("SELECT Depth, count(*) FROM GC_Start GROUP BY 1 ORDER BY 1 NULLS LAST")).toEqual(byDepth);
      const perPid = new Map<number, number>();
      for (const r of t.query({ provider: "Microsoft-Windows-DotNETRuntime" })) perPid.set(r.pid!, (perPid.get(r.pid!) ?? 0) + 1);
      expect(await run("SELECT pid, count(*) AS n FROM events WHERE providerName = 'Microsoft-Windows-DotNETRuntime' GROUP BY 1 ORDER BY 1")).toEqual(
        [...perPid].sort((a, b) => a[0] - b[0]).map(([p, k]) => [String(p), String(k)]),
      );
      expect(await run("SELECT count(*) FROM processes")).toEqual([[String(t.processes.processes.length)]]);
      await page.close();
      t.dispose();
      expect(errors).toEqual([]);
    },
    180_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "an allocation call tree: the shown AllocationTick events' stacks as a flame graph weighted by AllocationAmount read by hand, held and streamed",
    async () => {
      const file = join(CORPUS, "nettrace", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace");
      const t = await openTrace(readFileSync(file));
      // by hand: AllocationTick events with a stack item of at least one frame, and their AllocationAmount (UInt32 at offset 0)
      const framed = rowsWithStackItems(t);
      let events = 0,
        total = 0;
      for (const r of t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 10 }).indices) {
        if (!framed.has(r)) continue;
        events++;
        total += payloadU32(t, r);
      }
      expect(events).toBeGreaterThan(30_000);
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(site.url);
      await page.setInputFiles("#file", file);
      await page.locator("[data-testid=event-count]").waitFor({ timeout: 60_000 });
      await page.selectOption("#f-name", "Microsoft-Windows-DotNETRuntime/GC/AllocationTick");
      await page.selectOption("[data-testid=st-weight]", "AllocationAmount");
      await page.locator("[data-testid=st-show]").click();
      const flame = page.locator("[data-testid=st-flame]");
      await page.waitForFunction(() => document.querySelector("[data-testid=st-flame]")?.getAttribute("data-total"), null, { timeout: 60_000 });
      expect(await flame.isVisible()).toBe(true);
      expect(await flame.getAttribute("data-total")).toBe(String(total));
      expect(await flame.getAttribute("data-events")).toBe(String(events));
      // the bottom row: the roots, together every byte
      await flame.scrollIntoViewIfNeeded();
      const box = (await flame.boundingBox())!;
      await flame.hover({ position: { x: 2, y: box.height - 3 } });
      expect(await page.locator("[data-testid=st-tip]").textContent()).toMatch(/AllocationAmount \(\d+\.\d%\)$/);
      await page.close();
      // the same file streamed: the event filter and a typed field choose and weigh the events, read again from the file
      const streamedPage = await browser.newPage();
      streamedPage.on("pageerror", (e) => errors.push(e.message));
      await streamedPage.goto(`${site.url}?stream=1048576`);
      await streamedPage.setInputFiles("#file", file);
      await streamedPage.locator("[data-testid=event-count]").waitFor({ timeout: 60_000 });
      expect(await streamedPage.locator("#stream-note").isVisible()).toBe(true);
      await streamedPage.selectOption("#f-name", "Microsoft-Windows-DotNETRuntime/GC/AllocationTick");
      await streamedPage.fill("[data-testid=st-field]", "AllocationAmount");
      await streamedPage.locator("[data-testid=st-show]").click();
      await streamedPage.waitForFunction(() => document.querySelector("[data-testid=st-flame]")?.getAttribute("data-total"), null, { timeout: 60_000 });
      expect(await streamedPage.locator("[data-testid=st-flame]").getAttribute("data-total")).toBe(String(total));
      expect(await streamedPage.locator("[data-testid=st-flame]").getAttribute("data-events")).toBe(String(events));
      await streamedPage.close();
      t.dispose();
      expect(errors).toEqual([]);
    },
    120_000,
  );

  it.skipIf(!HAVE_CORPUS)(
    "the event table: every event kind's fields as TraceEvent prints them; the keyboard moves through the rows",
    async () => {
      const file = etlPath("net.4.5.2.x64.etl");
      const page = await browser.newPage();
      await page.goto(site.url);
      await page.setInputFiles("#file", file);
      await page.locator("[data-testid=event-count]").waitFor({ timeout: 60_000 });
      const t = await openTrace(readFileSync(file));
      const ctx = new PayloadContext(t, t.processes, "current");
      for (const name of ["Windows Kernel/Process/DCStart", "Windows Kernel/Image/DCStart", "Microsoft-Windows-DotNETRuntime/GC/Start"]) {
        await page.selectOption("#f-name", name);
        // the first row shown: its fields as TraceEvent's payload text, once the formatter is loaded
        const first = t.query({ order: "time" }).indices.find((i) => t.names.ofRow(i) === name)!;
        const want = payloadPairs(t.events.row(first), ctx)
          .map(([n, v]) => `${n}=${v.slice(0, 60)}`)
          .join("; ");
        expect(want.length, name).toBeGreaterThan(0);
        await page.waitForFunction((w) => document.querySelector("#grid .grid-row span:last-child")?.textContent === w, want, { timeout: 30_000 });
      }
      await page.selectOption("#f-name", "");
      // no event name cut off: the longest name in the trace fits its cell
      const longest = t.names
        .counts()
        .map(([n]) => n)
        .sort((a, b) => b.length - a.length)[0];
      await page.selectOption("#f-name", longest);
      await page.waitForFunction((n) => document.querySelector("#grid .grid-row span:nth-child(2)")?.textContent === n, longest, { timeout: 30_000 });
      const fits = await page.evaluate(() => {
        const el = document.querySelector("#grid .grid-row span:nth-child(2)") as HTMLElement;
        return el.scrollWidth <= el.clientWidth;
      });
      expect(fits, longest).toBe(true);
      await page.selectOption("#f-name", "");
      const grid = page.locator("[data-testid=grid]");
      await grid.focus();
      const picked = () => page.locator("#grid .grid-row.selected").getAttribute("data-row");
      await page.keyboard.press("ArrowDown");
      expect(await picked()).toBe("0");
      await page.keyboard.press("ArrowDown");
      expect(await picked()).toBe("1");
      await page.keyboard.press("End");
      expect(await picked()).toBe(String(t.events.length - 1));
      await page.keyboard.press("PageUp");
      expect(Number(await picked())).toBeLessThan(t.events.length - 1);
      await page.keyboard.press("Home");
      expect(await picked()).toBe("0");
      await page.close();
    },
    120_000,
  );

  it("the CPU panel: the busiest process's samples as a flame graph, its top frames as a Node profile has them", async () => {
    const page = await browser.newPage();
    await page.goto(site.url);
    await page.setInputFiles("#file", SAMPLE);
    await page.locator("[data-testid=cpu-top] tbody tr").first().waitFor({ timeout: 60_000 });
    const t = await openTrace(readFileSync(SAMPLE));
    const profile = cpuProfile(t);
    const byPid = new Map<number, number>();
    for (const samplePid of profile.samples.pid) byPid.set(samplePid, (byPid.get(samplePid) ?? 0) + 1);
    const [pid, samples] = [...byPid].sort((a, b) => b[1] - a[1])[0];
    expect(await page.locator("[data-testid=cpu-process]").inputValue()).toBe(String(pid));
    expect(await page.locator("[data-testid=flame]").getAttribute("data-samples")).toBe(String(samples));
    // top frames: samples by leaf frame, by hand from the Node profile
    const self = new Map<string, number>();
    for (let i = 0; i < profile.samples.length; i++)
      if (profile.samples.pid[i] === pid) {
        const names = stackNames(profile.stacks, profile.samples.stack[i]);
        self.set(names[names.length - 1], (self.get(names[names.length - 1]) ?? 0) + 1);
      }
    const want = [...self]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 15)
      .map(([n, c]) => [n, c.toLocaleString("en-US")]);
    const rows = await page.locator("[data-testid=cpu-top] tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    expect(rows).toEqual(want);
    // hovering the bottom row names the process frame with every sample
    const flame = page.locator("[data-testid=flame]");
    await flame.scrollIntoViewIfNeeded();
    const box = (await flame.boundingBox())!;
    await flame.hover({ position: { x: 5, y: box.height - 5 } });
    expect(await page.locator("[data-testid=cpu-tip]").textContent()).toMatch(
      new RegExp(`^Process64 .* \\(${pid}\\).*: ${samples.toLocaleString("en-US")} samples \\(100\\.0%\\)`),
    );
    await page.close();
  }, 90_000);

  it("downloads the shown records as Parquet (the current filter) and Arrow (the whole trace); DuckDB and flechette read them", async () => {
    const page = await browser.newPage({ acceptDownloads: true });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(site.url);
    await page.setInputFiles("#file", SAMPLE);
    await page.locator("[data-testid=event-count]").waitFor({ timeout: 60_000 });
    const t = await openTrace(readFileSync(SAMPLE));
    const dir = mkdtempSync(join(tmpdir(), "etw-wasm-download-"));
    // the whole trace, in time order, as Arrow
    const [arrow] = await Promise.all([page.waitForEvent("download", { timeout: 60_000 }), page.click("[data-testid=download-arrow]")]);
    await arrow.saveAs(join(dir, "all.arrow"));
    const table = tableFromIPC(readFileSync(join(dir, "all.arrow")));
    expect(table.numRows).toBe(t.events.length);
    expect(Array.from(table.getChild("row")!.toArray() as ArrayLike<number>)).toEqual(Array.from(t.events.timeOrder()));
    // GC/Start only, as Parquet
    await page.selectOption("#f-name", "Microsoft-Windows-DotNETRuntime/GC/Start");
    const [parquet] = await Promise.all([page.waitForEvent("download", { timeout: 60_000 }), page.click("[data-testid=download-parquet]")]);
    expect(parquet.suggestedFilename()).toBe("sample.events.parquet");
    await parquet.saveAs(join(dir, "gc.parquet"));
    const db = await (await DuckDBInstance.create(":memory:")).connect();
    const rows = (await db.runAndReadAll(`select row, eventName from '${join(dir, "gc.parquet")}'`)).getRowsJson();
    const want = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 1, order: "time" }).indices;
    expect(rows).toEqual(Array.from(want, (r) => [r, "Microsoft-Windows-DotNETRuntime/GC/Start"]));
    expect(errors).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
    await page.close();
  }, 120_000);

  for (const [variant, alias, workers] of [
    ["browser entry", undefined, 0],
    ["inline entry", "etw-wasm/inline", 0],
    ["browser entry, 2 workers", undefined, 2],
  ] as const) {
    it(`a tiny app importing etw-wasm, bundled by esbuild (${variant})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "etw-wasm-app-"));
      mkdirSync(join(dir, "js"));
      await build({
        entryPoints: [join(ROOT, "examples", "browser-app", "main.ts")],
        bundle: true,
        format: "esm",
        platform: "browser",
        target: "es2022",
        outfile: join(dir, "js", "app.js"),
        absWorkingDir: ROOT,
        logLevel: "warning",
        ...(alias ? { alias: { "etw-wasm": alias } } : {}),
      });
      // The app's workers run worker.js beside its script: the package's worker entry, bundled as the app is.
      if (workers) {
        await build({
          entryPoints: [join(ROOT, "dist", "bindings", "worker.js")],
          bundle: true,
          format: "esm",
          platform: "browser",
          target: "es2022",
          outfile: join(dir, "js", "worker.js"),
          absWorkingDir: ROOT,
          logLevel: "warning",
        });
      }
      copyFileSync(join(ROOT, "examples", "browser-app", "index.html"), join(dir, "index.html"));
      copyFileSync(SAMPLE, join(dir, "sample.etl"));
      // with workers, a generated trace of 3 MiB in segments of 1 MiB: every worker gets some
      const trace = workers ? join(dir, "generated.etl") : SAMPLE;
      if (workers) generateTraceFile(trace, { targetBytes: 3 << 20, seed: 5, processors: 2 });
      // The browser entry fetches etw.wasm next to the package's dist/; the inline one needs no file.
      if (!alias) copyFileSync(join(ROOT, "dist", "etw.wasm"), join(dir, "etw.wasm"));
      const app = await serve(dir);
      const page = await browser.newPage();
      const started: string[] = [];
      page.on("worker", (w) => started.push(w.url()));
      await page.goto(workers ? `${app.url}?trace=generated.etl&workers=${workers}&segment=${1 << 20}` : app.url);
      const out = page.locator("[data-testid=app-out]");
      await page.waitForFunction(() => document.getElementById("out")?.dataset.count || document.getElementById("out")?.dataset.error, null, {
        timeout: 60_000,
      });
      expect(await out.getAttribute("data-error")).toBeNull();
      expect(Number(await out.getAttribute("data-count"))).toBe((await nodeCounts(trace)).records);
      expect(started.length).toBe(workers);
      if (workers) expect(started.every((u) => u.endsWith("/js/worker.js"))).toBe(true);
      await page.close();
      await app.close();
    }, 90_000);
  }
  it.skipIf(!HAVE_CORPUS)(
    "speedscope itself opens etw-wasm cpu's profile of net.4.5.2.x64: its threads listed, managed frames named, no error",
    async () => {
      // speedscope's own release (the npm package), served with the profile beside it
      const dir = mkdtempSync(join(tmpdir(), "etw-speedscope-"));
      const release = join(ROOT, "node_modules", "speedscope", "dist", "release");
      for (const f of readdirSync(release)) copyFileSync(join(release, f), join(dir, f));
      const r = spawnSync(
        process.execPath,
        [
          join(ROOT, "dist", "bindings", "cli", "etw-wasm.js"),
          "cpu",
          etlPath("net.4.5.2.x64.etl"),
          "--format",
          "speedscope",
          "-o",
          join(dir, "x64.json"),
          "--pid",
          "3676",
        ],
        { encoding: "utf8" },
      );
      expect(r.status, r.stderr).toBe(0);
      const doc = JSON.parse(readFileSync(join(dir, "x64.json"), "utf8")) as { profiles: { name: string }[]; shared: { frames: { name: string }[] } };
      const app = await serve(dir);
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${app.url}index.html#profileURL=${encodeURIComponent(`${app.url}x64.json`)}`);
      // the title names the profile once it is imported; the toolbar names the thread shown
      await page.waitForFunction(() => document.title.includes("x64"), null, { timeout: 60_000 });
      const text = await page.evaluate(() => document.body.textContent ?? "");
      expect(text).toContain(doc.profiles[0].name);
      expect(errors).toEqual([]);
      expect(doc.shared.frames.some((f) => f.name === "test.x64!Test.Program.Main(class System.String[])")).toBe(true);
      await page.close();
      await app.close();
    },
    90_000,
  );
});
