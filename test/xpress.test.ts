// XPRESS (MS-XCA plain LZ77): the WebAssembly decompressor against the project's compressor and a
// hand-assembled stream, plus corrupt and truncated streams.

import { beforeAll, describe, expect, it } from "vitest";
import { instantiateCore, type CoreExports } from "../dist/bindings/decode/windows/loader.js";
import { createJsCore } from "../dist/bindings/core/index.js";
import { xpressCompress } from "../dist/bindings/generator/xpress-compress.js";
import { mulberry32 } from "../dist/bindings/generator/random.js";

let core: CoreExports;
beforeAll(async () => {
  core = await instantiateCore();
  core.init(1 << 16, 0, 1 << 20);
});

/** Decompresses with the core; returns the output, or the negative code on failure. */
function decompress(src: Uint8Array, expected: number): Uint8Array | number {
  const s = core.alloc(Math.max(1, src.length));
  const d = core.alloc(Math.max(1, expected));
  new Uint8Array(core.memory.buffer, s, src.length).set(src);
  const r = core.decompress(s, src.length, d, expected);
  const out = r >= 0 ? new Uint8Array(core.memory.buffer, d, expected).slice() : r;
  core.free(s);
  core.free(d);
  return out;
}

function roundTrip(input: Uint8Array) {
  const packed = xpressCompress(input);
  const out = decompress(packed, input.length);
  expect(out).toBeInstanceOf(Uint8Array);
  expect(Buffer.compare(out as Uint8Array, input)).toBe(0);
  return packed;
}

describe("XPRESS", () => {
  it("decodes a hand-assembled stream", () => {
    // "abcabcabcabc!": 3 literals, a match (offset 3, length 9), 1 literal.
    // Flags MSB-first: 0,0,0,1,0 then unused ones.
    const flags = (0b00010 << 27) | ((1 << 27) - 1);
    const token = ((3 - 1) << 3) | 6; // length 9 = 3 + 6
    const stream = new Uint8Array([flags & 0xff, (flags >>> 8) & 0xff, (flags >>> 16) & 0xff, flags >>> 24, 0x61, 0x62, 0x63, token & 0xff, token >> 8, 0x21]);
    expect(Buffer.from(decompress(stream, 13) as Uint8Array).toString()).toBe("abcabcabcabc!");
  });

  it("decodes the shared length nibble of two long matches", () => {
    // "xy" then two matches of length 12 and 20 sharing one nibble byte (5 low, 10 high).
    const flags = (0b0011 << 28) | ((1 << 28) - 1);
    const t = ((2 - 1) << 3) | 7;
    const stream = new Uint8Array([
      flags & 0xff,
      (flags >>> 8) & 0xff,
      (flags >>> 16) & 0xff,
      flags >>> 24,
      0x78,
      0x79,
      t & 0xff,
      t >> 8,
      0xa2,
      t & 0xff,
      t >> 8,
    ]);
    // length 12 = 3 + 7 + 2 (low nibble 2), length 20 = 3 + 7 + 10 (high nibble 10)
    expect(Buffer.from(decompress(stream, 2 + 12 + 20) as Uint8Array).toString()).toBe("xy".repeat(17));
  });

  it("round-trips empty, tiny, repetitive, random and text input", () => {
    const rand = mulberry32(1);
    roundTrip(new Uint8Array(0));
    roundTrip(new Uint8Array([42]));
    const same = roundTrip(new Uint8Array(100_000).fill(7));
    expect(same.length).toBeLessThan(100);
    const noise = new Uint8Array(65536).map(() => (rand() * 256) | 0);
    roundTrip(noise);
    const text = new TextEncoder().encode("The quick brown fox jumps over the lazy dog. ".repeat(2000) + "end");
    expect(roundTrip(text).length).toBeLessThan(text.length / 20);
  });

  it("round-trips every match-length encoding", () => {
    const rand = mulberry32(2);
    // A random prefix, then a repeat of length L: exercises 3..9, 10..24, 25..279, u16 and u32 forms.
    for (const L of [3, 4, 9, 10, 11, 24, 25, 26, 100, 279, 280, 281, 1000, 65535 + 3, 65536 + 3, 70000, 300000]) {
      const prefix = new Uint8Array(64).map(() => (rand() * 256) | 0);
      const input = new Uint8Array(64 + L + 1);
      input.set(prefix);
      for (let i = 64; i < 64 + L; i++) input[i] = input[i - 64];
      input[64 + L] = 0xaa;
      roundTrip(input);
    }
    // many consecutive long matches: the nibble is shared by pairs
    const mixed = new Uint8Array(50_000);
    for (let i = 0; i < mixed.length; i++) mixed[i] = i % 97 < 40 ? (rand() * 256) | 0 : mixed[Math.max(0, i - 97)];
    roundTrip(mixed);
  });

  it("reports corrupt and truncated streams without reading outside them", () => {
    const input = new TextEncoder().encode("etw-wasm ".repeat(5000));
    const packed = xpressCompress(input);
    for (const cut of [0, 1, 3, 4, 5, 10, packed.length >> 1, packed.length - 1]) {
      const r = decompress(packed.subarray(0, cut), input.length);
      expect(typeof r).toBe("number");
      expect(r as number).toBeLessThan(0);
    }
    // a match before any output
    const bad = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x00, 0x00]);
    expect(decompress(bad, 10)).toBe(-1);
    // random streams never throw
    const rand = mulberry32(3);
    for (let k = 0; k < 500; k++) {
      const junk = new Uint8Array(1 + Math.floor(rand() * 200)).map(() => (rand() * 256) | 0);
      const r = decompress(junk, 1 + Math.floor(rand() * 5000));
      expect(r instanceof Uint8Array || typeof r === "number").toBe(true);
    }
  });
});

describe("XPRESS length limits", () => {
  it("rejects a 32-bit match length that would wrap around", () => {
    // flags: literal then match; 'a'; token offset 1, length 7; nibble 15; byte 255; u16 0; u32 0xFFFFFFFF
    const flags = 0x40000000;
    const stream = new Uint8Array([
      flags & 0xff,
      (flags >>> 8) & 0xff,
      (flags >>> 16) & 0xff,
      flags >>> 24,
      0x61,
      0x07,
      0x00,
      0x0f,
      0xff,
      0x00,
      0x00,
      0xff,
      0xff,
      0xff,
      0xff,
    ]);
    expect(decompress(stream, 3)).toBeLessThan(0);
  });
});

// The fast loop (wide copies while 96 bytes remain on both sides) against a reference decoder: hand-built
// streams with matches of every offset 1..16 and lengths of every encoding, output and input ends at
// every point around them, cuts and corruption, on both cores.
describe("XPRESS fast loop", () => {
  type Item = number[] | { offset: number; length: number };

  /** An XPRESS stream of literal runs and matches (MS-XCA plain LZ77), and what it decodes to. */
  function build(items: Item[]): { packed: Uint8Array; plain: Uint8Array } {
    const out: number[] = [];
    const plain: number[] = [];
    let flagAt = -1;
    let flagBits = 0;
    let flags = 0;
    let nibbleAt = -1;
    const flag = (bit: number) => {
      if (flagBits === 0) {
        flagAt = out.length;
        out.push(0, 0, 0, 0);
      }
      flags |= bit << (31 - flagBits);
      if (++flagBits === 32) {
        for (let i = 0; i < 4; i++) out[flagAt + i] = (flags >>> (8 * i)) & 0xff;
        flagBits = 0;
        flags = 0;
      }
    };
    for (const item of items) {
      if (Array.isArray(item)) {
        for (const b of item) {
          flag(0);
          out.push(b);
          plain.push(b);
        }
        continue;
      }
      const { offset, length } = item;
      flag(1);
      const l = length - 3;
      out.push((((offset - 1) << 3) | Math.min(l, 7)) & 0xff, ((offset - 1) << 3) >>> 8);
      if (l >= 7) {
        const nibble = Math.min(l - 7, 15);
        if (nibbleAt < 0) {
          nibbleAt = out.length;
          out.push(nibble);
        } else {
          out[nibbleAt] |= nibble << 4;
          nibbleAt = -1;
        }
        if (l >= 22) {
          out.push(Math.min(l - 22, 255));
          if (l >= 22 + 255) {
            if (l < 65536) out.push(l & 0xff, l >>> 8);
            else out.push(0, 0, l & 0xff, (l >>> 8) & 0xff, (l >>> 16) & 0xff, l >>> 24);
          }
        }
      }
      for (let i = 0; i < length; i++) plain.push(plain[plain.length - offset]);
    }
    if (flagBits) for (let i = 0; i < 4; i++) out[flagAt + i] = (flags >>> (8 * i)) & 0xff;
    return { packed: Uint8Array.from(out), plain: Uint8Array.from(plain) };
  }

  /** The plain byte-at-a-time decoder: the result code the cores return (bytes, or -1 - bytes when corrupt) and the output. */
  function reference(src: Uint8Array, expected: number): { code: number; out: Uint8Array } {
    const out = new Uint8Array(expected);
    let ip = 0;
    let op = 0;
    let flags = 0;
    let count = 0;
    let half = -1;
    const fail = () => ({ code: -1 - op, out: out.subarray(0, op) });
    while (op < expected) {
      if (count === 0) {
        if (ip + 4 > src.length) return fail();
        flags = (src[ip] | (src[ip + 1] << 8) | (src[ip + 2] << 16) | (src[ip + 3] << 24)) >>> 0;
        ip += 4;
        count = 32;
      }
      count--;
      if (((flags >>> count) & 1) === 0) {
        if (ip >= src.length) return fail();
        out[op++] = src[ip++];
        continue;
      }
      if (ip + 2 > src.length) return fail();
      const token = src[ip] | (src[ip + 1] << 8);
      ip += 2;
      let length = token & 7;
      const offset = (token >>> 3) + 1;
      if (length === 7) {
        if (half < 0) {
          if (ip >= src.length) return fail();
          half = ip;
          length = src[ip++] & 15;
        } else {
          length = src[half] >>> 4;
          half = -1;
        }
        if (length === 15) {
          if (ip >= src.length) return fail();
          length = src[ip++];
          if (length === 255) {
            if (ip + 2 > src.length) return fail();
            length = src[ip] | (src[ip + 1] << 8);
            ip += 2;
            if (length === 0) {
              if (ip + 4 > src.length) return fail();
              length = (src[ip] | (src[ip + 1] << 8) | (src[ip + 2] << 16) | (src[ip + 3] << 24)) >>> 0;
              ip += 4;
            }
            if (length < 22 || length > 0xffffffe6) return fail();
            length -= 22;
          }
          length += 15;
        }
        length += 7;
      }
      length += 3;
      if (offset > op) return fail();
      const n = Math.min(length, expected - op);
      for (let i = 0; i < n; i++, op++) out[op] = out[op - offset];
      if (n < length) return fail();
    }
    return { code: expected, out };
  }

  const GUARD = 256;
  const cores: [string, CoreExports][] = [];
  // cores whose memory above the first few blocks is written directly, never to allocate from again
  const ends: [string, CoreExports][] = [];
  beforeAll(async () => {
    for (const list of [cores, ends]) {
      const wasm = await instantiateCore();
      const js = createJsCore();
      list.push(["wasm", wasm], ["js", js]);
    }
    for (const [, c] of [...cores, ...ends]) c.init(0, 1 << 20, 0);
    for (const [, c] of ends) c.free(c.alloc(8 << 20)); // 8 MiB or more
  });

  /**
   * Decodes with both cores and checks the result code and output against the reference: with the
   * input and output each between guard bytes (nothing outside the output changes, and the bytes
   * after the input do not matter), then with the input, and then the output, ending where the
   * memory does (a WebAssembly access past it traps; so do the TypeScript core's DataView ones).
   */
  function check(src: Uint8Array, expected: number, what: string): void {
    const want = reference(src, expected);
    const verify = (c: CoreExports, code: number, d: number, label: string) => {
      expect(code, label).toBe(want.code);
      const produced = code >= 0 ? code : -1 - code;
      expect(Buffer.compare(new Uint8Array(c.memory.buffer, d, produced), want.out), label).toBe(0);
    };
    for (const [name, c] of cores) {
      for (const fill of [0x00, 0xff]) {
        const block = c.alloc(src.length + expected + 4 * GUARD);
        const s = block + GUARD;
        const d = s + src.length + 2 * GUARD;
        const mem = new Uint8Array(c.memory.buffer, block, src.length + expected + 4 * GUARD);
        mem.fill(fill);
        mem.set(src, GUARD);
        const code = c.decompress(s, src.length, d, expected);
        const label = `${what}, ${name} core, guard ${fill}`;
        verify(c, code, d, label);
        const after = new Uint8Array(c.memory.buffer, block, mem.length);
        expect(Buffer.compare(after.subarray(GUARD, GUARD + src.length), src), label).toBe(0);
        for (const [from, to] of [
          [0, GUARD],
          [GUARD + src.length, d - block],
          [d - block + expected, after.length],
        ]) {
          if (after.subarray(from, to).some((b) => b !== fill)) expect.fail(`${label}: bytes ${from}..${to} outside the ranges changed`);
        }
        c.free(block);
      }
    }
    for (const [name, c] of ends) {
      // the top half of the memory, above every block: input at its end, output before it, or the other way round
      const size = c.memory.buffer.byteLength;
      expect(src.length + expected + GUARD).toBeLessThan(size / 2);
      for (const inputLast of [true, false]) {
        const s = inputLast ? size - src.length : size / 2;
        const d = inputLast ? size / 2 : size - expected;
        new Uint8Array(c.memory.buffer, s, src.length).set(src);
        verify(c, c.decompress(s, src.length, d, expected), d, `${what}, ${name} core, ${inputLast ? "input" : "output"} at the memory's end`);
      }
    }
  }

  /** Items of random literal runs and matches, `n` of them, offsets from `offsets`. */
  function randomItems(rand: () => number, n: number, offsets: (rand: () => number) => number): Item[] {
    const items: Item[] = [];
    let produced = 0;
    for (let i = 0; i < n; i++) {
      if (produced < 16 || rand() < 0.4) {
        const run = Array.from({ length: rand() < 0.1 ? 1 + ((rand() * 40) | 0) : (rand() * 4) | 0 }, () => (rand() * 256) | 0);
        items.push(run);
        produced += run.length;
        continue;
      }
      const r = rand();
      const length = r < 0.5 ? 3 + ((rand() * 8) | 0) : r < 0.8 ? 11 + ((rand() * 60) | 0) : r < 0.97 ? 71 + ((rand() * 300) | 0) : 279 + ((rand() * 4) | 0);
      const offset = Math.min(produced, offsets(rand));
      items.push({ offset, length });
      produced += length;
    }
    return items;
  }

  it("decodes matches of every offset 1..16 and every length encoding", () => {
    const rand = mulberry32(11);
    for (let offset = 1; offset <= 16; offset++) {
      for (const length of [3, 4, 7, 8, 9, 10, 15, 16, 17, 24, 25, 31, 32, 33, 63, 64, 65, 100, 279, 280, 281, 1000, 70000]) {
        const seed = Array.from({ length: 20 }, () => (rand() * 256) | 0);
        const { packed, plain } = build([seed, { offset, length }, [1, 2, 3], { offset, length }, seed, { offset: 20, length: 40 }, seed]);
        check(packed, plain.length, `offset ${offset}, length ${length}`);
      }
    }
  });

  it("decodes random streams, whole and stopped at every output size", () => {
    const rand = mulberry32(12);
    for (let k = 0; k < 24; k++) {
      const small = k % 2 === 0;
      const n = k < 4 ? 40 : 30 + ((rand() * 400) | 0);
      const { packed, plain } = build(randomItems(rand, n, (r) => (small ? 1 + ((r() * 20) | 0) : 1 + ((r() * 3000) | 0))));
      check(packed, plain.length, `stream ${k}`);
      for (let e = k < 4 ? 0 : Math.max(0, plain.length - 300); e < plain.length; e++) check(packed, e, `stream ${k} stopped at ${e}`);
    }
  });

  it("reports streams cut at every point and corrupted bytes as the reference does", () => {
    const rand = mulberry32(13);
    const { packed, plain } = build(randomItems(rand, 300, (r) => 1 + ((r() * (r() < 0.5 ? 16 : 2000)) | 0)));
    for (let cut = 0; cut <= packed.length; cut++) check(packed.subarray(0, cut), plain.length, `cut at ${cut}`);
    // long literal runs: the fast loop's widest reads
    const runs: Item[] = [];
    for (let i = 0; i < 40; i++) {
      runs.push(Array.from({ length: 20 + ((rand() * 30) | 0) }, () => (rand() * 256) | 0));
      if (i % 3 === 0) runs.push({ offset: 1 + ((rand() * 20) | 0), length: 3 + ((rand() * 30) | 0) });
    }
    const lit = build(runs);
    expect(reference(lit.packed, lit.plain.length).code).toBe(lit.plain.length);
    for (let cut = 0; cut <= lit.packed.length; cut++) check(lit.packed.subarray(0, cut), lit.plain.length, `literals cut at ${cut}`);
    // flag words of 31 literals and a match of the longest length forms: the most input one step of the fast loop takes
    const widest: Item[] = [];
    for (let i = 0; i < 14; i++) {
      widest.push(
        Array.from({ length: 31 }, () => (rand() * 256) | 0),
        { offset: 1 + ((rand() * 31) | 0), length: i === 4 || i === 6 ? 65536 + 3 + i : 300 + i },
      );
    }
    const wide = build(widest);
    expect(reference(wide.packed, wide.plain.length).code).toBe(wide.plain.length);
    for (let cut = 0; cut <= wide.packed.length; cut++) check(wide.packed.subarray(0, cut), wide.plain.length, `widest steps cut at ${cut}`);
    for (let k = 0; k < 600; k++) {
      const bad = packed.slice();
      for (let j = 0, n = 1 + ((rand() * 3) | 0); j < n; j++) bad[(rand() * bad.length) | 0] = (rand() * 256) | 0;
      check(bad, plain.length + ((rand() * 64) | 0) - 32, `corruption ${k}`);
    }
    // a 32-bit length on the fast path
    const long = build([[1, 2, 3, 4, 5, 6, 7, 8], { offset: 3, length: 200000 }, Array.from({ length: 200 }, (_, i) => i)]);
    check(long.packed, long.plain.length, "a 32-bit length");
  });
});
