// UTF-8 text written straight into byte chunks: for outputs of tens of millions of small
// items (a profile's frame events), where a string per item, and the garbage it makes, would cost
// more than the work itself. Numbers are written by hand; strings through TextEncoder.

const encoder = new TextEncoder();

/** Bytes per chunk: the writer fills chunks and joins them once at the end (no doubling copies). */
const CHUNK = 1 << 22;

/** Bytes written often (a JSON key and its punctuation), as 32-bit words and the bytes after them. */
export class Literal {
  readonly words: number[] = [];
  readonly tail: Uint8Array;
  constructor(text: string) {
    const b = encoder.encode(text);
    const v = new DataView(b.buffer, b.byteOffset, b.length);
    let i = 0;
    for (; i + 4 <= b.length; i += 4) this.words.push(v.getUint32(i, true));
    this.tail = b.subarray(i);
  }
}

export class ByteWriter {
  private bytes = new Uint8Array(1 << 16);
  private view = new DataView(this.bytes.buffer);
  private at = 0;
  private readonly full: Uint8Array[] = [];

  /** Makes room for `n` more bytes: literal, uint and fixed6 write without checking (a call per item, not per piece). */
  reserve(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    this.full.push(this.bytes.subarray(0, this.at));
    this.bytes = new Uint8Array(Math.max(CHUNK, n));
    this.view = new DataView(this.bytes.buffer);
    this.at = 0;
  }

  /** A literal: four bytes per store (unaligned stores through a DataView are single instructions). */
  literal(l: Literal): void {
    const v = this.view;
    let at = this.at;
    for (let i = 0; i < l.words.length; i++, at += 4) v.setUint32(at, l.words[i], true);
    for (let i = 0; i < l.tail.length; i++) this.bytes[at++] = l.tail[i];
    this.at = at;
  }

  /** Text (reserves its own room). */
  once(s: string): void {
    const b = encoder.encode(s);
    this.reserve(b.length);
    this.bytes.set(b, this.at);
    this.at += b.length;
  }

  /** A non-negative integer below 2^53 (at most 16 bytes). */
  uint(n: number): void {
    const bytes = this.bytes;
    if (n < 2147483648) {
      let digits = 1;
      for (let x = n; x >= 10; x = (x / 10) | 0) digits++;
      let end = this.at + digits;
      for (let x = n | 0; end > this.at; x = (x / 10) | 0) bytes[--end] = 48 + (x % 10);
      this.at += digits;
      return;
    }
    let digits = 0;
    for (let x = n; x >= 1; x = Math.floor(x / 10)) digits++;
    let end = this.at + digits;
    for (let x = n; end > this.at; x = Math.floor(x / 10)) bytes[--end] = 48 + (x % 10);
    this.at += digits;
  }

  /** A number rounded to 6 decimals, without trailing zeros (a JSON number; at most 25 bytes). */
  fixed6(v: number): void {
    if (!(Math.abs(v) < 2 ** 53 / 1e6)) return this.once(String(v));
    let units = Math.round(v * 1e6);
    if (units < 0) {
      this.bytes[this.at++] = 45; // '-'
      units = -units;
    }
    const whole = Math.floor(units / 1e6);
    let frac = (units - whole * 1e6) | 0;
    this.uint(whole);
    if (frac === 0) return;
    const bytes = this.bytes;
    bytes[this.at++] = 46; // '.'
    let digits = 6;
    while (frac % 10 === 0) {
      frac = (frac / 10) | 0;
      digits--;
    }
    for (let d = digits - 1; d >= 0; d--) {
      bytes[this.at + d] = 48 + (frac % 10);
      frac = (frac / 10) | 0;
    }
    this.at += digits;
  }

  /** The bytes written, in chunks (the writer is not used after; a large output need not fit in one buffer). */
  chunks(): Uint8Array[] {
    return [...this.full, this.bytes.subarray(0, this.at)];
  }
}
