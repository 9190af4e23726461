// PerfView's baseline text (TraceEvent's ETW_GeneralParsing_Basic test output) reproduced from the corpus
// traces: gcevents and gcrundownevents line for line; for net.4.5.2.x64 and net.4.5.x86 every COUNT line and
// every .NET runtime EVENT line (Microsoft-Windows-DotNETRuntime*), in order. The share of the remaining
// lines (kernel, KernelTraceControl, EventSource, TDH-described events) is printed, not asserted.

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openTrace } from "../dist/bindings/index.js";
import { formatPerfView, type PerfViewOptions } from "../dist/bindings/perfview/index.js";
import { enumText, filetimeText, hex8, n0, nFixed } from "../dist/bindings/perfview/dotnet-format.js";
import { CORPUS, HAVE_CORPUS, etlPath } from "./helpers/shared.js";

const CLI = fileURLToPath(new URL("../dist/bindings/cli/etw-wasm.js", import.meta.url));

const baseline = (name: string) =>
  readFileSync(join(CORPUS, "baselines", `${name}.baseline.txt`), "utf8").replace(/\r\n/g, "\n");

const lines = (text: string) => text.split("\n").filter((l) => l.length > 0);
const isClrEvent = (l: string) => /^EVENT [\d,.]+: Microsoft-Windows-DotNETRuntime/.test(l);
const isCount = (l: string) => l.startsWith("COUNT ");

/** Differences of two line sequences, as [index, expected, actual] (at most `max`). */
function sequenceDiff(expected: string[], actual: string[], max = 10): [number, string | undefined, string | undefined][] {
  const out: [number, string | undefined, string | undefined][] = [];
  for (let i = 0; i < Math.max(expected.length, actual.length) && out.length < max; i++) {
    if (expected[i] !== actual[i]) out.push([i, expected[i], actual[i]]);
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
    const flags: [number, string][] = [[0, "None"], [1, "A"], [2, "B"], [8, "D"]];
    expect(enumText(0, flags, true)).toBe("None");
    expect(enumText(9, flags, true)).toBe("A, D");
    expect(enumText(16 + 1, flags, true)).toBe("17"); // an undefined bit prints the number
    expect(enumText(5, [[1, "X"]], false)).toBe("5");
    expect(filetimeText(133232284106944520n)).toBe("23/03/14 00:46:50.694452");
  });
});

describe.skipIf(!HAVE_CORPUS)("PerfView baselines", () => {
  for (const name of ["gcevents", "gcrundownevents"]) {
    it(`${name}: etw-wasm events --format perfview equals the baseline line for line`, () => {
      const r = spawnSync(process.execPath, [CLI, "events", etlPath(`${name}.etl`), "--format", "perfview"], {
        encoding: "utf8",
        maxBuffer: 1 << 28,
      });
      expect(r.status).toBe(0);
      const expected = lines(baseline(name));
      const actual = lines(r.stdout);
      expect(sequenceDiff(expected, actual)).toEqual([]);
      expect(actual.length).toBe(expected.length);
    });
  }

  const cases: { name: string; options: PerfViewOptions }[] = [
    { name: "net.4.5.2.x64", options: {} },
    // The 2020 baseline came from TraceEvent of that time: no ContainerID clause and its payload names.
    { name: "net.4.5.x86", options: { containerId: false, edition: "2020" } },
  ];
  for (const { name, options } of cases) {
    it(`${name}: every COUNT line and every .NET runtime EVENT line`, async () => {
      const trace = await openTrace(readFileSync(etlPath(`${name}.etl`)));
      const actual = lines(formatPerfView(trace, options));
      const expected = lines(baseline(name));

      const countDiff = sequenceDiff(expected.filter(isCount), actual.filter(isCount));
      const clrDiff = sequenceDiff(expected.filter(isClrEvent), actual.filter(isClrEvent));
      expect(countDiff, "COUNT lines").toEqual([]);
      expect(clrDiff, "Microsoft-Windows-DotNETRuntime* EVENT lines").toEqual([]);
      expect(actual.filter(isCount).length).toBe(expected.filter(isCount).length);
      expect(actual.filter(isClrEvent).length).toBe(expected.filter(isClrEvent).length);

      // The other EVENT lines: reported, not asserted.
      const others = expected.filter((l) => !isCount(l) && !isClrEvent(l));
      const ours = new Set(actual.filter((l) => !isCount(l) && !isClrEvent(l)));
      const matched = others.filter((l) => ours.has(l)).length;
      const sameAt = expected.filter((l, i) => actual[i] === l).length;
      console.log(
        `${name}: COUNT ${expected.filter(isCount).length}/${expected.filter(isCount).length}, ` +
          `.NET runtime EVENT ${expected.filter(isClrEvent).length}/${expected.filter(isClrEvent).length}, ` +
          `other EVENT lines ${matched}/${others.length} (${((100 * matched) / others.length).toFixed(1)}%), ` +
          `whole file line for line ${sameAt}/${expected.length}`,
      );
      trace.dispose();
    });
  }
});
