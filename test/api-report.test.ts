// The committed API report (api-report.md) is what the built declarations export: a change to the public
// surface changes the report, and shows in review (run `node scripts/api-report.mjs` after the build).

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

describe("API report", () => {
  it("api-report.md is what the build exports", () => {
    const r = spawnSync(process.execPath, ["scripts/api-report.mjs", "--check"], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("names every package entry, and no layout offset among the codes", () => {
    const report = readFileSync(`${ROOT}api-report.md`, "utf8");
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { exports: Record<string, unknown> };
    for (const key of Object.keys(pkg.exports).filter((k) => k.endsWith(".wasm") === false && k !== "./package.json")) {
      expect(report, key).toContain(`## ${key === "." ? "etw-wasm" : `etw-wasm/${key.slice(2)}`}\n`);
    }
    const codes = report.split("\n").find((l) => l.startsWith("namespace codes: "));
    expect(codes).toBeDefined();
    expect(codes).not.toMatch(/\b(DIR|LH|CLR)_/);
  });
});
