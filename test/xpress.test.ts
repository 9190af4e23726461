// XPRESS (MS-XCA plain LZ77): the WebAssembly decompressor against the project's compressor and a
// hand-assembled stream, plus corrupt and truncated streams.

import { beforeAll, describe, expect, it } from "vitest";
import { instantiateCore, type CoreExports } from "../dist/bindings/decode/loader.js";
import { xpressCompress } from "../bindings/generator/xpress-compress.js";
import { mulberry32 } from "../bindings/generator/random.js";

let core: CoreExports;
beforeAll(async () => {
  core = await instantiateCore();
  core.init(1 << 16, 0, 1 << 20, 0);
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
    const stream = new Uint8Array([
      flags & 0xff, (flags >>> 8) & 0xff, (flags >>> 16) & 0xff, flags >>> 24,
      0x61, 0x62, 0x63, token & 0xff, token >> 8, 0x21,
    ]);
    expect(Buffer.from(decompress(stream, 13) as Uint8Array).toString()).toBe("abcabcabcabc!");
  });

  it("decodes the shared length nibble of two long matches", () => {
    // "xy" then two matches of length 12 and 20 sharing one nibble byte (5 low, 10 high).
    const flags = (0b0011 << 28) | ((1 << 28) - 1);
    const t = ((2 - 1) << 3) | 7;
    const stream = new Uint8Array([
      flags & 0xff, (flags >>> 8) & 0xff, (flags >>> 16) & 0xff, flags >>> 24,
      0x78, 0x79, t & 0xff, t >> 8, 0xa2, t & 0xff, t >> 8,
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
    const stream = new Uint8Array([flags & 0xff, (flags >>> 8) & 0xff, (flags >>> 16) & 0xff, flags >>> 24,
      0x61, 0x07, 0x00, 0x0f, 0xff, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff]);
    expect(decompress(stream, 3)).toBeLessThan(0);
  });
});
