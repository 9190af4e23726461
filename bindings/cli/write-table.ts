// What several commands write: records in the tabular formats (table, csv, json, jsonl). Formatting
// only: no decoding here.

/** The tabular formats of the commands' --format. */
export type TableFormat = "table" | "csv" | "json" | "jsonl";

/** Writes output: a line, or lines joined by "\n" (writeTable hands over about 1 MiB at a time). */
export type Out = (text: string) => Promise<void>;

type Rows = Iterable<Record<string, unknown>> | AsyncIterable<Record<string, unknown>>;

/** Each of `rows`, without a wait between two where they are at hand (a sync iterable). */
async function eachRow(rows: Rows, f: (r: Record<string, unknown>) => void | Promise<void>): Promise<void> {
  if (Symbol.iterator in rows) {
    for (const r of rows) {
      const p = f(r);
      if (p) await p;
    }
  } else for await (const r of rows) await f(r);
}

/**
 * Lines gathered and handed to `out` joined by "\n", about 1 MiB at a time (a wait per line was a tenth
 * of a long table's cost); the command's Output gathers its lines for stdout the same way.
 */
export class Lines {
  private parts: string[] = [];
  private size = 0;
  constructor(private readonly out: (text: string) => Promise<void> | void) {}
  /** Adds a line; a promise when the lines went out (to wait for), else nothing. */
  add(line: string): Promise<void> | void {
    this.parts.push(line);
    this.size += line.length + 1;
    if (this.size > 1 << 20) return this.flush();
  }
  async flush(): Promise<void> {
    if (!this.parts.length) return;
    const text = this.parts.join("\n");
    this.parts = [];
    this.size = 0;
    await this.out(text);
  }
}

/** Writes records (all with the same keys) in one of the tabular formats. */
export async function writeTable(out: Out, format: TableFormat, columns: string[], rows: Rows): Promise<void> {
  const text = (v: unknown) => (v === null || v === undefined ? "" : typeof v === "bigint" ? v.toString() : String(v));
  const plain = (v: unknown) => (typeof v === "bigint" ? v.toString() : v);
  const lines = new Lines(out);
  if (format === "jsonl") {
    await eachRow(rows, (r) => lines.add(JSON.stringify(r, (_, v) => plain(v))));
  } else if (format === "json") {
    lines.add("[");
    let first = true;
    await eachRow(rows, (r) => {
      const l = (first ? "  " : ", ") + JSON.stringify(r, (_, v) => plain(v));
      first = false;
      return lines.add(l);
    });
    lines.add("]");
  } else if (format === "csv") {
    const cell = (v: unknown) => {
      if (typeof v === "number") return String(v); // (no quote, comma or line break in a number)
      const s = text(v);
      return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    };
    lines.add(columns.join(","));
    await eachRow(rows, (r) => lines.add(columns.map((c) => cell(r[c])).join(",")));
  } else {
    // aligned text: widths from the rows (kept in memory: tables here are summaries, not raw events),
    // each cell made a string once (a number's String was most of a long table's cost)
    const n = columns.length;
    const cells: string[] = [];
    const widths = columns.map((c) => c.length);
    await eachRow(rows, (r) => {
      for (let i = 0; i < n; i++) {
        const s = text(r[columns[i]]);
        cells.push(s);
        if (s.length > widths[i]) widths[i] = s.length;
      }
    });
    // the last column is not padded (a long cell there would pad every line to its width)
    // (the blanks after a cell: `gap[k]` is k spaces, taken whole rather than a padEnd a cell)
    const gap = Array.from({ length: Math.max(0, ...widths) + 3 }, (_, k) => " ".repeat(k));
    const line = (cell: (i: number) => string) => {
      if (n === 0) return "";
      let l = "";
      for (let i = 0; i < n - 1; i++) {
        const c = cell(i);
        l += c + gap[widths[i] - c.length + 2];
      }
      const last = cell(n - 1);
      // (blanks at the end go: an empty last cell leaves the padding before it)
      return last === "" || /\s$/.test(last) ? (l + last).trimEnd() : l + last;
    };
    lines.add(line((i) => columns[i]));
    for (let at = 0; at < cells.length; at += n) {
      const p = lines.add(line((i) => cells[at + i]));
      if (p) await p;
    }
  }
  await lines.flush();
}

/** ".5", ".25", ".125": the decimals of f thousandths as fixed3 writes them (empty for 0). */
const THOUSANDTHS = Array.from({ length: 1000 }, (_, f) => (f === 0 ? "" : "." + String(f).padStart(3, "0").replace(/0+$/, "")));

/**
 * `v` to 3 decimals as `String(Number(v.toFixed(3)))` writes it, made five times faster: the
 * thousandths rounded in arithmetic, where `v * 1000`'s rounding error (under 10^-4 below 10^12) cannot
 * move them past a half; `toFixed`'s digits, their trailing zeros dropped, where it could. (With at
 * most 15 significant digits, the shortest form of the number they parse to keeps them as they are.)
 */
export function fixed3(v: number): string {
  const m = v * 1000;
  const a = Math.abs(m);
  if (!(a < 1e12)) return String(Number(v.toFixed(3)));
  const below = Math.floor(a),
    over = a - below;
  if (Math.abs(over - 0.5) < 1e-3) {
    const s = v.toFixed(3);
    let end = s.length;
    while (s.charCodeAt(end - 1) === 48) end--; // '0'
    if (s.charCodeAt(end - 1) === 46) end--; // '.'
    const t = end === s.length ? s : s.slice(0, end);
    return t === "-0" ? "0" : t;
  }
  const n = over > 0.5 ? below + 1 : below;
  if (n === 0) return "0";
  const whole = Math.floor(n / 1000);
  const s = String(whole) + THOUSANDTHS[n - whole * 1000];
  return m < 0 ? "-" + s : s;
}
