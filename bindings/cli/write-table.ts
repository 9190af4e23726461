// What several commands write: records in the tabular formats (table, csv, json, jsonl). Formatting
// only: no decoding here.

/** The tabular formats of the commands' --format. */
export type TableFormat = "table" | "csv" | "json" | "jsonl";

/** Writes output: a line, or lines joined by "\n" (writeTable hands over about 1 MiB at a time). */
export type Out = (text: string) => Promise<void> | void;

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

/** Writes records (all with the same keys) in one of the tabular formats. */
export async function writeTable(out: Out, format: TableFormat, columns: string[], rows: Rows): Promise<void> {
  const text = (v: unknown) => (v === null || v === undefined ? "" : typeof v === "bigint" ? v.toString() : String(v));
  const plain = (_: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);
  // (a replacer is called for every value: only for a record that may hold a bigint, a flat one of numbers
  // and text goes without)
  const json = (r: Record<string, unknown>) => {
    for (const k in r) {
      const v = r[k];
      if (typeof v === "bigint" || (typeof v === "object" && v !== null)) return JSON.stringify(r, plain);
    }
    return JSON.stringify(r);
  };
  if (format === "jsonl" || format === "json") {
    const lines = new Lines(out);
    if (format === "jsonl") {
      await eachRow(rows, (r) => lines.add(json(r)));
    } else {
      lines.add("[");
      let first = true;
      await eachRow(rows, (r) => {
        const l = (first ? "  " : ", ") + json(r);
        first = false;
        return lines.add(l);
      });
      lines.add("]");
    }
    await lines.flush();
    return;
  }
  // csv and the aligned table are written as UTF-8 bytes, handed over as text about 1 MiB at a time: a
  // string a line, joined, was most of a long table's cost (gc of 224,000 GCs: 3.4 s of 6.3)
  const n = columns.length;
  const lines = new Lines(out);
  if (format === "csv") {
    const cell = (v: unknown) => (typeof v === "number" ? lines.text(String(v)) : lines.csvCell(text(v)));
    for (let i = 0; i < n; i++) {
      if (i > 0) lines.byte(44); // ','
      lines.text(columns[i]);
    }
    lines.end();
    await eachRow(rows, (r) => {
      for (let i = 0; i < n; i++) {
        if (i > 0) lines.byte(44);
        cell(r[columns[i]]);
      }
      return lines.end();
    });
    await lines.flush();
    return;
  }
  // aligned text: widths from the rows, so every cell is kept (tables here are summaries, not raw events):
  // as UTF-8 bytes one after another, each made a string once and let go (4 million strings held were a
  // collection of their own)
  const cells = new Utf8Bytes();
  let ends = new Int32Array(1024);
  let lengths = new Int32Array(1024); // (in UTF-16 units, as a string's length: what a width counts)
  // (a long cell is kept as the string it is, most often one its row already held, where its bytes copied
  // into memory grown for them cost more: a method name of methods' tables; short ones, numbers mostly, as bytes)
  let kept = new Int32Array(1024).fill(-1); // index in `strings`, -1: the cell is bytes
  const strings: string[] = [];
  let count = 0;
  const widths = columns.map((c) => c.length);
  const keep = (s: string, i: number) => {
    if (count === ends.length) {
      ends = grown(ends);
      lengths = grown(lengths);
      kept = grown(kept, -1);
    }
    if (s.length < 32) cells.text(s);
    else kept[count] = strings.push(s) - 1;
    ends[count] = cells.length;
    lengths[count++] = s.length;
    if (s.length > widths[i]) widths[i] = s.length;
  };
  columns.forEach(keep);
  await eachRow(rows, (r) => {
    for (let i = 0; i < n; i++) keep(text(r[columns[i]]), i);
  });
  if (n === 0) return;
  // the last column is not padded (a long cell there would pad every line to its width); blanks at the
  // end of a line go (an empty last cell leaves the padding before it)
  const src = cells.bytes;
  let from = 0;
  const put = (c: number) => {
    const to = ends[c];
    if (kept[c] >= 0) lines.text(strings[kept[c]]);
    else lines.copy(src, from, to);
    from = to;
  };
  for (let c = 0; c < count; c += n) {
    for (let i = 0; i < n - 1; i++) {
      put(c + i);
      lines.spaces(widths[i] - lengths[c + i] + 2);
    }
    const last = c + n - 1;
    put(last);
    // (the last character of the last cell: white space, or beyond ASCII and maybe white space)
    const k = kept[last] >= 0 ? strings[kept[last]].charCodeAt(lengths[last] - 1) : lengths[last] > 0 ? src[from - 1] : -1;
    if (k < 0 || isSpace(k) || k >= 0x80) lines.trimLine();
    const p = lines.end();
    if (p) await p;
  }
  await lines.flush();
}

function grown(a: Int32Array<ArrayBuffer>, fill = 0): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  if (fill !== 0) b.fill(fill, a.length);
  b.set(a);
  return b;
}

/** ASCII white space (what trimEnd takes off, below 0x80). */
function isSpace(b: number): boolean {
  return b === 32 || (b >= 9 && b <= 13);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NEEDS_QUOTES = /[",\n\r]/;

/** Bytes of UTF-8 text, grown as written. */
class Utf8Bytes {
  bytes = new Uint8Array(1 << 16);
  length = 0;

  protected room(n: number): Uint8Array {
    if (this.length + n > this.bytes.length) {
      const b = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
      b.set(this.bytes.subarray(0, this.length));
      this.bytes = b;
    }
    return this.bytes;
  }

  /** `s` as UTF-8 (as TextEncoder writes it: a lone surrogate as U+FFFD). */
  text(s: string): void {
    const n = s.length;
    const b = this.room(3 * n);
    let at = this.length;
    // (a short cell, mostly a number, copied here; a longer one, often a string built piece by piece, by
    // the encoder, which makes it one string once, where reading it a character at a time was slow)
    if (n < 24) {
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) {
          at += encoder.encodeInto(s.slice(i), b.subarray(at)).written;
          break;
        }
        b[at++] = c;
      }
    } else at += encoder.encodeInto(s, b.subarray(at)).written;
    this.length = at;
  }

  /**
   * `s` as a CSV cell: as it is, or in double quotes with its own doubled where it holds a quote, comma
   * or line break.
   */
  csvCell(s: string): void {
    if (!NEEDS_QUOTES.test(s)) return this.text(s);
    this.byte(34);
    this.quotesDoubled(s);
    this.byte(34);
  }

  /**
   * `s` as UTF-8 with each double quote twice (in its bytes, moved up from the end down: a regular
   * expression's replace was most of a CSV line's cost).
   */
  quotesDoubled(s: string): void {
    const from = this.length;
    this.text(s);
    const to = this.length;
    let quotes = 0;
    let b: Uint8Array = this.bytes;
    for (let k = from; k < to; k++) if (b[k] === 34) quotes++;
    if (quotes === 0) return;
    b = this.room(quotes);
    let w = to + quotes;
    for (let k = to - 1; k >= from; k--) {
      const x = b[k];
      b[--w] = x;
      if (x === 34) b[--w] = 34;
    }
    this.length = to + quotes;
  }

  byte(c: number): void {
    this.room(1)[this.length++] = c;
  }
}

/**
 * Lines written as UTF-8 bytes, handed to `out` as text joined by "\n" about 1 MiB at a time (a wait per
 * line was a tenth of a long table's cost; strings gathered and joined took a sixth of events' jsonl); the
 * command's Output gathers its lines for stdout the same way.
 */
export class Lines extends Utf8Bytes {
  private lineStart = 0;
  /** `toBytes`: where the lines go as UTF-8 bytes, the last "\n" included, where it takes them (they are its from then on). */
  constructor(
    private readonly out: Out,
    private readonly toBytes?: (bytes: Uint8Array) => Promise<void> | void,
  ) {
    super();
  }

  /** Adds a line; a promise when the lines went out (to wait for), else nothing. */
  add(line: string): Promise<void> | void {
    this.text(line);
    return this.end();
  }

  copy(src: Uint8Array, from: number, to: number): void {
    const b = this.room(to - from);
    let at = this.length;
    // (cells are a few bytes: a loop is quicker than a view and a set)
    if (to - from < 32) for (let k = from; k < to; k++) b[at++] = src[k];
    else {
      b.set(src.subarray(from, to), at);
      at += to - from;
    }
    this.length = at;
  }

  spaces(k: number): void {
    const b = this.room(k);
    b.fill(32, this.length, this.length + k);
    this.length += k;
  }

  /** The blanks at the end of the line being written taken off (as trimEnd does). */
  trimLine(): void {
    const b = this.bytes;
    let end = this.length;
    while (end > this.lineStart && isSpace(b[end - 1])) end--;
    if (end > this.lineStart && b[end - 1] >= 0x80) {
      // (white space beyond ASCII: the line as a string, trimmed)
      const line = decoder.decode(b.subarray(this.lineStart, end)).trimEnd();
      this.length = this.lineStart;
      this.text(line);
      return;
    }
    this.length = end;
  }

  /** Ends the line; a promise when the lines went out (to wait for), else nothing. */
  end(): Promise<void> | void {
    this.byte(10);
    this.lineStart = this.length;
    if (this.length > 1 << 20) return this.flush();
  }

  async flush(): Promise<void> {
    if (this.length === 0) return;
    const n = this.length;
    this.length = 0;
    this.lineStart = 0;
    if (this.toBytes) {
      // (given away whole: a stream may hold them until written, so the next lines go into new memory)
      const given = this.bytes.subarray(0, n);
      this.bytes = new Uint8Array(this.bytes.length);
      await this.toBytes(given);
      return;
    }
    // (the lines without the last one's "\n", as Lines hands them over)
    await this.out(decoder.decode(this.bytes.subarray(0, n - 1)));
  }
}

/** ".5", ".25", ".125": the decimals of f / 10^digits as fixed3 and fixed4 write them (empty for 0), f below 10^digits. */
const decimals = (digits: number) => Array.from({ length: 10 ** digits }, (_, f) => (f === 0 ? "" : "." + String(f).padStart(digits, "0").replace(/0+$/, "")));
const THOUSANDTHS = decimals(3);
let tenThousandths: string[] | undefined;

/**
 * `v` to 3 decimals as `String(Number(v.toFixed(3)))` writes it, made five times faster: the
 * thousandths rounded in arithmetic, where `v * 1000`'s rounding error (under 10^-4 below 10^12) cannot
 * move them past a half; `toFixed`'s digits, their trailing zeros dropped, where it could. (With at
 * most 15 significant digits, the shortest form of the number they parse to keeps them as they are.)
 */
export function fixed3(v: number): string {
  return fixedDigits(v, 3, 1000, THOUSANDTHS);
}

/** `v` to 4 decimals as `String(Number(v.toFixed(4)))` writes it (fixed3's way: events' timeMs). */
export function fixed4(v: number): string {
  return fixedDigits(v, 4, 10000, (tenThousandths ??= decimals(4)));
}

function fixedDigits(v: number, digits: number, scale: number, table: string[]): string {
  const m = v * scale;
  const a = Math.abs(m);
  if (!(a < 1e12)) return String(Number(v.toFixed(digits)));
  const below = Math.floor(a),
    over = a - below;
  if (Math.abs(over - 0.5) < 1e-3) {
    const s = v.toFixed(digits);
    let end = s.length;
    while (s.charCodeAt(end - 1) === 48) end--; // '0'
    if (s.charCodeAt(end - 1) === 46) end--; // '.'
    const t = end === s.length ? s : s.slice(0, end);
    return t === "-0" ? "0" : t;
  }
  const n = over > 0.5 ? below + 1 : below;
  if (n === 0) return "0";
  const whole = Math.floor(n / scale);
  const s = String(whole) + table[n - whole * scale];
  return m < 0 ? "-" + s : s;
}
