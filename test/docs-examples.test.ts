// Every JavaScript example of the README and docs/ runs: each ```js block is written inside the package
// (so "etw-wasm" imports resolve to this build, as they would for a user) and run with Node from the
// repository's root, where the examples' paths (examples/sample.etl) point.

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The ```js blocks of a Markdown file, with the line each starts at. */
function jsBlocks(file: string): { line: number; code: string }[] {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  const out: { line: number; code: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "```js") continue;
    const start = i + 1;
    let j = start;
    while (j < lines.length && lines[j].trim() !== "```") j++;
    out.push({ line: start + 1, code: lines.slice(start, j).join("\n") });
    i = j;
  }
  return out;
}

const pages = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const dir = join(ROOT, "dist", "doc-examples");

describe("documentation examples", () => {
  it("the README has its example", () => {
    expect(jsBlocks("README.md").length).toBeGreaterThanOrEqual(1);
  });

  for (const page of pages) {
    for (const { line, code } of jsBlocks(page)) {
      it(`${page}:${line} runs`, () => {
        mkdirSync(dir, { recursive: true });
        const file = join(dir, `${page.replace(/[/.]/g, "-")}-${line}.mjs`);
        writeFileSync(file, code);
        const r = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
        expect(r.stderr, `${page}:${line}`).toBe("");
        expect(r.status, `${page}:${line}: ${r.stderr}`).toBe(0);
        expect(r.stdout.trim().length, `${page}:${line} prints nothing`).toBeGreaterThan(0);
      });
    }
  }

  it("the README's example prints the sample's GC count, as the typed table holds it", async () => {
    const { openTraceFile } = await import("../dist/bindings/node.js");
    const trace = await openTraceFile(join(ROOT, "examples", "sample.etl"));
    const gcs = trace.table("Microsoft-Windows-DotNETRuntime/GC/Start")!.columns.Count.length;
    const events = trace.events.eventId.length;
    trace.dispose();
    expect(gcs).toBeGreaterThan(0);
    const [{ code }] = jsBlocks("README.md");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "readme-gc-count.mjs");
    writeFileSync(file, code);
    const r = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
    expect(r.stdout).toContain(`${gcs} GCs among ${events} events`);
  });
});
