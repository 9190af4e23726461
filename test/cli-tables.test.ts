// What the CLI's tables write (bindings/cli/tables.ts), against plain reference formattings written here:
// fixed3 against String(Number(v.toFixed(3))) (what the gc table printed before it), and writeTable's
// lines, handed over in chunks, against the same records formatted one line at a time.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fixed3, fixed4, Lines, writeTable } from "../dist/bindings/cli/write-table.js";
import { openTrace } from "../dist/bindings/node.js";

/** A generator of numbers where rounding to 3 decimals is hard: halves of a thousandth, signs, zeros, large and tiny values. */
function hardNumbers(count: number): number[] {
  let seed = 12345;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const fixed = [0, -0, NaN, Infinity, -Infinity, 1e21, -1e21, 0.0005, -0.0005, 0.0015, 2.675, 1.0005, 1e12, -1e12, 999_999_999_999.9995, 5e-324];
  const out = [...fixed];
  for (let i = 0; out.length < count; i++) {
    const r = random();
    switch (i % 8) {
      case 0:
        out.push((Math.round(r * 1e7) + 0.5) / 1000); // a half of a thousandth, as near as a double gets
        break;
      case 1:
        out.push(-(Math.round(r * 1e5) + 0.5) / 1000);
        break;
      case 2:
        out.push(i % 16 === 2 ? Math.round(r * 1e6) / 1000 : (Math.round(r * 1e8) + 0.5) / 10000); // exact thousandths; halves of a ten-thousandth
        break;
      case 3:
        out.push((r - 0.5) * 1e-3); // rounds to 0 or -0
        break;
      case 4:
        out.push(r * 1e13); // past the arithmetic path
        break;
      default:
        out.push((r - 0.3) * 10 ** (i % 12));
    }
  }
  return out;
}

describe("CLI tables", () => {
  it("fixed3 writes a number to 3 decimals as String(Number(v.toFixed(3))) does", () => {
    const values = hardNumbers(200_000);
    const wrong = values.filter((v) => fixed3(v) !== String(Number(v.toFixed(3))));
    expect(wrong).toEqual([]);
    expect([fixed3(1.5), fixed3(-0.0001), fixed3(2.675), fixed3(12.3456), fixed3(-7.1)]).toEqual(["1.5", "0", "2.675", "12.346", "-7.1"]);
  });

  it("fixed4 writes a number to 4 decimals as String(Number(v.toFixed(4))) does", () => {
    const values = hardNumbers(200_000);
    const wrong = values.filter((v) => fixed4(v) !== String(Number(v.toFixed(4))));
    expect(wrong).toEqual([]);
    expect([fixed4(1.5), fixed4(-0.00001), fixed4(61.30375), fixed4(12.34567), fixed4(0.0001)]).toEqual([
      "1.5",
      "0",
      String(Number((61.30375).toFixed(4))),
      "12.3457",
      "0.0001",
    ]);
  });

  it("writes every format as the records formatted line by line, sync and async rows alike", async () => {
    const columns = ["id", "name", "value", "big", "empty"];
    const records = Array.from({ length: 30_000 }, (_, i) => ({
      id: i,
      // (text beyond ASCII, and cells ending in blanks: the last column's are taken off the line, ASCII or not)
      name: i % 7 === 0 ? `a "quoted", name ${i}` : i % 11 === 0 ? `naïve ${i} 名前 😀` : i % 19 === 0 ? `lone \ud800 surrogate, line\r\nbreak ${i}` : `n${i}`,
      value: i / 7,
      big: i % 4 === 0 ? i : BigInt(i) * 1_000_000_007n, // (records with and without a bigint: JSON written with and without a replacer)
      empty:
        i % 3 === 0
          ? null
          : i % 23 === 0
            ? `a long last cell, ${i}, that ends in blanks   `
            : i % 29 === 0
              ? `a long last cell ending beyond ASCII ${i}\u00a0`
              : i % 5 === 0
                ? "x "
                : i % 13 === 0
                  ? "y\u00a0"
                  : i % 17 === 0
                    ? "é"
                    : "x",
    }));
    const text = (v: unknown) => (v === null || v === undefined ? "" : String(v));
    // the table: every cell padded to its column's widest, but the last; two spaces between; no trailing blanks
    const widths = columns.map((c) => Math.max(c.length, ...records.map((r) => text(r[c as keyof typeof r]).length)));
    const tableLine = (cells: string[]) =>
      cells
        .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
        .join("  ")
        .trimEnd();
    const plain = (r: object) => JSON.stringify(r, (_, v) => (typeof v === "bigint" ? v.toString() : v));
    const csvCell = (v: unknown) => {
      const s = text(v);
      return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    };
    const expected: Record<string, string[]> = {
      table: [tableLine(columns), ...records.map((r) => tableLine(columns.map((c) => text(r[c as keyof typeof r]))))],
      csv: [columns.join(","), ...records.map((r) => columns.map((c) => csvCell(r[c as keyof typeof r])).join(","))],
      jsonl: records.map(plain),
      json: ["[", ...records.map((r, i) => (i ? ", " : "  ") + plain(r)), "]"],
    };
    for (const format of ["table", "csv", "jsonl", "json"] as const) {
      for (const source of ["sync", "async"] as const) {
        const chunks: string[] = [];
        const rows =
          source === "sync"
            ? records
            : (async function* () {
                yield* records;
              })();
        await writeTable(async (t) => void chunks.push(t), format, columns, rows);
        // (handed over in chunks of many lines, not one call a line)
        expect(chunks.length, `${format}, ${source}`).toBeLessThan(expected[format].length / 100);
        // (as UTF-8 carries them: a lone surrogate is U+FFFD; split at "\n" alone, as a quoted cell may hold "\r\n")
        const utf8 = (t: string) => new TextDecoder().decode(new TextEncoder().encode(t));
        expect(chunks.join("\n").split("\n"), `${format}, ${source}`).toEqual(utf8(expected[format].join("\n")).split("\n"));
      }
    }
  });

  it("events' jsonl lines are JSON.stringify of each row's toJSON, on the samples' every row (kernel groups, nulls, extended items)", async () => {
    // (loaded by a path the type checker does not follow: the CLI's modules name the package's own entry points)
    const tables: string = "../dist/bindings/cli/tables.js";
    const { eventJsonLine } = (await import(tables)) as { eventJsonLine: (row: unknown) => string };
    for (const file of ["examples/sample.etl", "examples/sample.nettrace"]) {
      const trace = await openTrace(readFileSync(file));
      try {
        const wrong: string[] = [];
        let groups = 0,
          ext = 0;
        for (const row of trace.events) {
          const expected = JSON.stringify(row.toJSON());
          if (eventJsonLine(row) !== expected && wrong.length < 5) wrong.push(expected);
          if (row.group !== undefined) groups++;
          if (row.extTypes.length) ext++;
        }
        expect(wrong, file).toEqual([]);
        expect(trace.events.length, file).toBeGreaterThan(500);
        if (file.endsWith(".etl")) expect(groups).toBeGreaterThan(0);
        expect(ext, file).toBeGreaterThan(0);
      } finally {
        trace.dispose();
      }
    }
  });

  it("events' csv lines (writeEventCsv) are writeTable's csv of each row's record, on the samples' every row", async () => {
    const tables: string = "../dist/bindings/cli/tables.js";
    const { writeEventCsv, eventRecord, EVENT_COLUMNS } = (await import(tables)) as {
      writeEventCsv: (lines: Lines, row: unknown, index: number, process: string) => Promise<void> | void;
      eventRecord: (row: unknown, index: number, process: string) => Record<string, unknown>;
      EVENT_COLUMNS: string[];
    };
    for (const file of ["examples/sample.etl", "examples/sample.nettrace"]) {
      const trace = await openTrace(readFileSync(file));
      try {
        const processOf = (row: { pid: number | null; index: number }) => (row.pid === null ? "" : trace.processName(row.index));
        const direct: string[] = [];
        const lines = new Lines((t) => void direct.push(t));
        lines.add(EVENT_COLUMNS.join(","));
        let quoted = 0;
        for (const row of trace.events) writeEventCsv(lines, row, row.index, processOf(row));
        await lines.flush();
        const table: string[] = [];
        // (a row is a cursor: each record made while it is at its row)
        const records: Record<string, unknown>[] = [];
        for (const row of trace.events) records.push(eventRecord(row, row.index, processOf(row)));
        await writeTable(async (t) => void table.push(t), "csv", EVENT_COLUMNS, records);
        const got = direct.join("\n").split("\n");
        quoted = got.filter((l) => l.endsWith('}"')).length;
        expect(got, file).toEqual(table.join("\n").split("\n"));
        expect(got.length, file).toBe(trace.events.length + 1);
        expect(quoted, file).toBeGreaterThan(0);
      } finally {
        trace.dispose();
      }
    }
  });
});
