// The tree's layering, checked on the sources: every folder of bindings/ imports only from the layers
// below it (the order of docs/layout.md), so dependencies point one way. Imports are read by the TypeScript
// compiler (every form: static, type-only, re-export, side effect, dynamic), not by a pattern.

import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

// Lowest first. "entries" are the files directly in bindings/ (index, node, browser, inline, worker,
// trace, worker-client): they put the layers together. The CLI reaches the library through the
// package's own entries ("etw-wasm/node", "etw-wasm/perfview"), as a user would.
const LAYERS = ["assembly", "core", "eventpipe", "schema", "decode", "tables", "naming", "entries", "perfview", "export", "analysis", "generator", "cli"];

const layerOf = (file: string): string => {
  const rel = relative(ROOT, file).split("/");
  if (rel[0] === "assembly") return "assembly";
  if (rel.length === 2) return "entries";
  return rel[1] === "generated" ? "schema" : rel[1];
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith(".ts") && !d.name.endsWith(".d.ts") ? [join(dir, d.name)] : [],
  );
}

/** The module specifiers a file imports or re-exports, static and dynamic, as the TypeScript compiler reads them. */
function imports(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.map((f) => f.fileName);
}

describe("layers", () => {
  const files = sources(join(ROOT, "bindings"));
  it("knows every folder of bindings/", () => {
    for (const f of files) expect(LAYERS, relative(ROOT, f)).toContain(layerOf(f));
  });

  it("imports point down the layers only", () => {
    const wrong: string[] = [];
    // (a Web Worker's script, started by URL beside worker-factory.ts and imported by nothing: it loads the worker entry)
    const workerScripts = new Set([join(ROOT, "bindings", "decode", "workers", "worker.ts")]);
    for (const file of files.filter((f) => !workerScripts.has(f))) {
      const from = LAYERS.indexOf(layerOf(file));
      for (const spec of imports(file)) {
        if (!spec.startsWith(".")) continue;
        const target = normalize(join(dirname(file), spec));
        const to = LAYERS.indexOf(layerOf(target));
        if (to > from || (to === from && layerOf(file) !== layerOf(target))) wrong.push(`${relative(ROOT, file)} -> ${spec}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("decode/ is in stages, and its imports point down them", () => {
    // Lowest first: what a decode gives (result/), what it reads (input/), the window driver on this thread
    // (windows/), starting and keeping workers (workers/), EventPipe files as tables (eventpipe/), parallel
    // decoding (parallel/), the choice between them (decode.ts, "."), several files of one session (session/).
    const STAGES = ["result", "input", "windows", "workers", "eventpipe", "parallel", ".", "session"];
    const decodeDir = join(ROOT, "bindings", "decode");
    const stageOf = (f: string) => {
      const rel = relative(decodeDir, f).split("/");
      return rel.length === 1 ? "." : rel[0];
    };
    const inDecode = files.filter((f) => !relative(decodeDir, f).startsWith("..") && f !== join(decodeDir, "workers", "worker.ts"));
    for (const f of inDecode) expect(STAGES, relative(ROOT, f)).toContain(stageOf(f));
    const wrong: string[] = [];
    for (const file of inDecode) {
      for (const spec of imports(file)) {
        if (!spec.startsWith(".")) continue;
        const target = normalize(join(dirname(file), spec));
        if (relative(decodeDir, target).startsWith("..")) continue;
        if (STAGES.indexOf(stageOf(target)) > STAGES.indexOf(stageOf(file))) wrong.push(`${relative(ROOT, file)} -> ${spec}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("no import cycles, of any import form (types and lazy imports included), between the files of bindings/", () => {
    // (each file's relative imports, resolved; then the files on a cycle, by Tarjan's strongly connected components)
    const graph = new Map<string, string[]>();
    const known = new Set(files);
    for (const f of files) {
      const to = imports(f)
        .filter((s) => s.startsWith("."))
        .map((s) => normalize(join(dirname(f), s)).replace(/\.js$/, ".ts"))
        .filter((t) => known.has(t));
      graph.set(f, to);
    }
    let next = 0;
    const index = new Map<string, number>(),
      low = new Map<string, number>(),
      stack: string[] = [],
      onStack = new Set<string>();
    const cycles: string[][] = [];
    const visit = (v: string): void => {
      index.set(v, next);
      low.set(v, next++);
      stack.push(v);
      onStack.add(v);
      for (const w of graph.get(v)!) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const part: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          part.push(relative(ROOT, w));
        } while (w !== v);
        if (part.length > 1 || graph.get(v)!.includes(v)) cycles.push(part.sort());
      }
    };
    for (const f of files) if (!index.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  it("the platform-neutral layers use no Node API", () => {
    const nodeOnly = ["node.ts", "node-worker.ts", "node-file.ts", "cli", "generator", "export/node.ts", "export/parquet-worker"];
    const wrong = files
      .filter((f) => !nodeOnly.some((n) => relative(join(ROOT, "bindings"), f).startsWith(n)))
      .filter((f) => imports(f).some((s) => s.startsWith("node:")))
      .map((f) => relative(ROOT, f));
    expect(wrong).toEqual([]);
  });

  it("reads every import form (static, type-only, re-export, dynamic) of a source", () => {
    const all = files.flatMap((f) => imports(f));
    expect(all.length).toBeGreaterThan(500);
    expect(imports(join(ROOT, "bindings", "cli", "commands", "generate.ts"))).toContain("etw-wasm/generator");
    expect(imports(join(ROOT, "bindings", "cli", "etw-wasm.ts"))).toContain("etw-wasm/node");
  });

  it("the CLI uses the package's public entries only", () => {
    for (const f of files.filter((f) => layerOf(f) === "cli")) {
      for (const spec of imports(f)) {
        // (a relative import stays in the CLI's folder)
        const inCli = spec.startsWith(".") && !relative(join(ROOT, "bindings", "cli"), join(dirname(f), spec)).startsWith("..");
        const ok = spec.startsWith("node:") || inCli || spec.startsWith("etw-wasm");
        expect(ok, `${relative(ROOT, f)} imports ${spec}`).toBe(true);
      }
    }
  });
});
