// PerfView's baseline text (TraceEvent's ETW_GeneralParsing_Basic test output) reproduced from the corpus
// traces, as the README claims: every baseline in corpus/baselines, the whole file line for line, from
// `etw-wasm events FILE --format perfview` and from formatPerfView (the same text). KNOWN_DIFFERENCES
// lists lines allowed to differ in one field's value (none at present).

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openTrace } from "../dist/bindings/index.js";
import { formatPerfView, type PerfViewOptions } from "../dist/bindings/perfview/index.js";
import { enumText, filetimeText, hex8, n0, nFixed } from "../dist/bindings/perfview/dotnet-format.js";
import { CORPUS, HAVE_CORPUS, etlPath } from "./helpers/shared.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));

const baseline = (name: string) => readFileSync(join(CORPUS, "baselines", `${name}.baseline.txt`), "utf8").replace(/\r\n/g, "\n");

/** Lines that differ, as [line number, expected, actual] (at most `max`), leaving out the line numbers in `skip`. */
function lineDiff(expected: string[], actual: string[], skip: Set<number>, max = 10): [number, string | undefined, string | undefined][] {
  const out: [number, string | undefined, string | undefined][] = [];
  for (let i = 0; i < Math.max(expected.length, actual.length) && out.length < max; i++) {
    if (!skip.has(i + 1) && expected[i] !== actual[i]) out.push([i + 1, expected[i], actual[i]]);
  }
  return out;
}

describe("TraceEvent value formatting", () => {
  it("n0 and n3 as .NET Framework renders them (15 significant digits, then half away from zero)", () => {
    expect(n0(0)).toBe("0");
    expect(n0(-2147024894)).toBe("-2,147,024,894");
    expect(n0(140717225230336n)).toBe("140,717,225,230,336");
    expect(nFixed(0, 3)).toBe("0.000");
    expect(nFixed(8184.6744, 3)).toBe("8,184.674");
    expect(nFixed(1.0005, 3)).toBe("1.001"); // 1.0005 is 1.000499999... in binary, 1.00050000000000 in 15 digits
    expect(nFixed(999.9996, 3)).toBe("1,000.000");
    expect(nFixed(-0.0001, 3)).toBe("0.000");
    expect(nFixed(12345678.12345, 3)).toBe("12,345,678.123");
  });

  it("addresses, enums, DateTimes", () => {
    expect(hex8(0x1b0f1000028n)).toBe("0x1b0f1000028");
    expect(hex8(0x1ffffd8n)).toBe("0x01ffffd8");
    expect(hex8(0n)).toBe("0x00000000");
    const flags: [number, string][] = [
      [0, "None"],
      [1, "A"],
      [2, "B"],
      [8, "D"],
    ];
    expect(enumText(0, flags, true)).toBe("None");
    expect(enumText(9, flags, true)).toBe("A, D");
    expect(enumText(16 + 1, flags, true)).toBe("17"); // an undefined bit prints the number
    expect(enumText(5, [[1, "X"]], false)).toBe("5");
    expect(filetimeText(133232284106944520n)).toBe("23/03/14 00:46:50.694452");
  });
});

/** Each baseline with the options its TraceEvent version needs. */
const BASELINES: { name: string; args: string[]; options: PerfViewOptions }[] = [
  { name: "gcevents", args: [], options: {} },
  { name: "gcrundownevents", args: [], options: {} },
  { name: "primitive-types", args: [], options: {} },
  { name: "net.4.5.2.x64", args: [], options: {} },
  // The 2020 baseline came from TraceEvent of that time: no ContainerID clause and its payload names.
  { name: "net.4.5.x86", args: ["--edition=2020", "--no-container-id"], options: { edition: "2020", containerId: false } },
];

/**
 * Lines (1-based) where our text and the baseline differ, each only in the value of one field. There were
 * five in primitive-types (the SYSTEMTIME field `system_time_type`, fraction .03… in the baseline) until
 * we printed SYSTEMTIME as TraceEvent does: its reader takes the milliseconds from the seconds word.
 */
const KNOWN_DIFFERENCES: Record<string, { line: number; field: string; baseline: string; ours: string }[]> = {};

/** The value of `field` in an EVENT line, and the line with that value blanked out. */
function splitField(line: string, field: string): { value: string | undefined; rest: string } {
  const m = new RegExp(`; ${field}=([^;]*); `).exec(line);
  return { value: m?.[1], rest: m ? line.replace(m[0], `; ${field}=…; `) : line };
}

describe.skipIf(!HAVE_CORPUS)("PerfView baselines, whole files line for line", () => {
  for (const { name, args, options } of BASELINES) {
    it(`${name}: etw-wasm events --format perfview ${args.join(" ")}`.trimEnd(), async () => {
      const r = spawnSync(process.execPath, [CLI, "events", etlPath(`${name}.etl`), "--format", "perfview", ...args], {
        encoding: "utf8",
        maxBuffer: 1 << 28,
      });
      expect({ code: r.status, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      const expectedText = baseline(name);
      expect(expectedText.endsWith("\n")).toBe(true);
      const expected = expectedText.split("\n");
      const actual = r.stdout.split("\n");
      expect(actual.length, "number of lines").toBe(expected.length);

      const known = KNOWN_DIFFERENCES[name] ?? [];
      for (const k of known) {
        // The known lines differ, and only in the one field's value.
        const want = splitField(expected[k.line - 1], k.field);
        const got = splitField(actual[k.line - 1], k.field);
        expect({ line: k.line, baseline: want.value, ours: got.value }).toEqual({ line: k.line, baseline: k.baseline, ours: k.ours });
        expect(got.rest, `line ${k.line} apart from ${k.field}`).toBe(want.rest);
      }
      // Every other line is equal.
      expect(lineDiff(expected, actual, new Set(known.map((k) => k.line)))).toEqual([]);
      if (!known.length) expect(r.stdout === expectedText, "whole text").toBe(true);

      // The API prints the same text.
      const trace = await openTrace(readFileSync(etlPath(`${name}.etl`)));
      expect(formatPerfView(trace, options) === r.stdout, "formatPerfView equals the command's output").toBe(true);
      trace.dispose();
    });
  }

  it("covers every baseline in the corpus", () => {
    const names = readdirSync(join(CORPUS, "baselines"))
      .filter((f) => f.endsWith(".baseline.txt"))
      .map((f) => f.replace(/\.baseline\.txt$/, ""));
    expect(names.sort()).toEqual(BASELINES.map((b) => b.name).sort());
  });
});
