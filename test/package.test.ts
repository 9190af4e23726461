// The package as users install it: `npm pack`, then installed into an empty project. With only its
// required dependencies the decoder and the CLI work, and the export entry and `convert` say which
// optional package to install; with apache-arrow and parquet-wasm installed beside it, `convert`
// writes Parquet and Arrow that DuckDB reads back with every record.

import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DuckDBInstance } from "@duckdb/node-api";
import { openTrace } from "../dist/bindings/node.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SAMPLE = join(ROOT, "examples", "sample.etl");

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, maxBuffer: 64 << 20, env: { ...process.env, NO_COLOR: "1" } }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The version of a dev dependency installed here (so the second project installs what the cache holds). */
function installedVersion(name: string): string {
  return JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version;
}

let tmp: string;
let tarball: string;
let records: number;

/** An empty project with the packed package (and `extra` packages) installed. */
async function project(name: string, extra: string[]): Promise<string> {
  const dir = join(tmp, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
  const r = await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts", tarball, ...extra], dir);
  expect(r.code, r.stderr).toBe(0);
  return dir;
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "etw-wasm-package-"));
  const packed = await run("npm", ["pack", "--json", "--pack-destination", tmp], ROOT);
  expect(packed.code, packed.stderr).toBe(0);
  tarball = join(tmp, JSON.parse(packed.stdout)[0].filename);
  records = (await openTrace(readFileSync(SAMPLE))).events.length;
}, 120_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("the packed package", () => {
  it("ships what users run: the built entries, the core, the sample; no sources, maps, benchmarks or text format", () => {
    const files: string[] = [];
    const walk = (d: string, rel: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name), `${rel}${e.name}/`) : files.push(rel + e.name);
    };
    return (async () => {
      const dir = join(tmp, "unpacked");
      mkdirSync(dir);
      const r = await run("tar", ["-xzf", tarball, "-C", dir], tmp);
      expect(r.code, r.stderr).toBe(0);
      walk(join(dir, "package"), "");
      expect(files).toContain("dist/etw.wasm");
      expect(files).toContain("dist/bindings/index.js");
      expect(files).toContain("dist/bindings/cli/etw-wasm.js");
      expect(files).toContain("dist/bindings/export/index.d.ts");
      expect(files).toContain("examples/sample.etl");
      expect(files.filter((f) => f.endsWith(".map") || f.endsWith(".wat") || (f.endsWith(".ts") && !f.endsWith(".d.ts")))).toEqual([]);
      expect(files.filter((f) => /^dist\/(bench|examples|scripts)\//.test(f))).toEqual([]);
      // every entry of package.json's exports is in the package
      const pkg = JSON.parse(readFileSync(join(dir, "package", "package.json"), "utf8"));
      const targets: string[] = [];
      const collect = (v: unknown) =>
        typeof v === "string" ? targets.push(v.replace(/^\.\//, "")) : v && typeof v === "object" && Object.values(v).forEach(collect);
      collect(pkg.exports);
      collect(pkg.bin);
      for (const t of targets) expect(files, t).toContain(t);
    })();
  });

  it("installs without the export libraries, decodes the sample, and names the package convert needs", async () => {
    const dir = await project("decode-only", []);
    expect(existsSync(join(dir, "node_modules", "apache-arrow"))).toBe(false);
    expect(existsSync(join(dir, "node_modules", "parquet-wasm"))).toBe(false);
    const sample = join(dir, "node_modules", "etw-wasm", "examples", "sample.etl");
    writeFileSync(
      join(dir, "decode.mjs"),
      [
        `import { readFileSync } from "node:fs";`,
        `import { openTrace } from "etw-wasm";`,
        `const trace = await openTrace(readFileSync(${JSON.stringify(sample)}));`,
        `let message = "";`,
        `try { await import("etw-wasm/export"); } catch (e) { message = e.name + ": " + e.message; }`,
        `console.log(JSON.stringify({ records: trace.events.length, message }));`,
      ].join("\n"),
    );
    const decoded = await run("node", ["decode.mjs"], dir);
    expect(decoded.code, decoded.stderr).toBe(0);
    const out = JSON.parse(decoded.stdout);
    expect(out.records).toBe(records);
    expect(out.message).toMatch(/^MissingPackageError: .*"apache-arrow".*npm install apache-arrow/);

    const bin = join(dir, "node_modules", ".bin", "etw-wasm");
    const summary = await run(bin, ["summary", sample], dir);
    expect(summary.code, summary.stderr).toBe(0);
    expect(summary.stdout).toMatch(new RegExp(`^records:\\s+${records}$`, "m"));
    const convert = await run(bin, ["convert", sample, "--to", "parquet", "-o", join(dir, "out")], dir);
    expect(convert.code).toBe(1);
    expect(convert.stderr).toContain("npm install apache-arrow parquet-wasm");
    expect(existsSync(join(dir, "out"))).toBe(false);
  }, 180_000);

  it("with apache-arrow and parquet-wasm installed, convert writes Parquet and Arrow with every record", async () => {
    const dir = await project("with-export", [`apache-arrow@${installedVersion("apache-arrow")}`, `parquet-wasm@${installedVersion("parquet-wasm")}`]);
    const sample = join(dir, "node_modules", "etw-wasm", "examples", "sample.etl");
    const bin = join(dir, "node_modules", ".bin", "etw-wasm");
    for (const to of ["parquet", "arrow"]) {
      const r = await run(bin, ["convert", sample, "--to", to, "-o", join(dir, to)], dir);
      expect(r.code, r.stderr).toBe(0);
    }
    const db = await (await DuckDBInstance.create(":memory:")).connect();
    const parquet = await db.runAndReadAll(`select count(*)::INTEGER as n from read_parquet('${join(dir, "parquet", "events.parquet")}')`);
    expect(parquet.getRowObjects()[0].n).toBe(records);
    expect(readdirSync(join(dir, "arrow"))).toContain("events.arrow");
  }, 240_000);
});
