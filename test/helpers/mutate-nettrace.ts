// Structure-aware mutation of EventPipe files (.nettrace, .netperf), the twin of mutate.ts for .etl:
// the reader's own block table (readNettrace) tells where the blocks, their sizes, event headers and
// metadata are; the mutators cut, flip, drop, duplicate, swap and resize them, break varints and
// counts. Large files are first cut to their first blocks (a valid file of a few hundred KB).

import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { mulberry32 } from "../../dist/bindings/generator/random.js";
import { readNettrace, BLOCK_EVENT, BLOCK_METADATA, BLOCK_STACK, BLOCK_SEQUENCE_POINT, type NettraceFile } from "../../dist/bindings/eventpipe/reader.js";
import type { Base, Case } from "./mutate.js";
import { concatBytes } from "../../dist/bindings/decode/result/trace-data.js";
import { syntheticV4Uncompressed, syntheticV6 } from "./nettrace-cases.js";

interface Block {
  kind: number;
  /** First byte of the block (begin tag, or the V6 block header). */
  at: number;
  content: number;
  contentLength: number;
  /** First byte after the block. */
  end: number;
}

/** The blocks of a file as its reader found them, with where each ends. */
function blocksOf(file: NettraceFile, length: number): Block[] {
  const b = file.blocks;
  const out: Block[] = [];
  for (let i = 0; i < b.length; i++) {
    const end = i + 1 < b.length ? b.offset[i + 1] : Math.max(b.contentOffset[i] + b.contentLength[i], length - (file.header.formatVersion === 6 ? 4 : 1));
    out.push({ kind: b.kind[i], at: b.offset[i], content: b.contentOffset[i], contentLength: b.contentLength[i], end: Math.min(end, length) });
  }
  return out;
}

const concat = (...parts: Uint8Array[]) => concatBytes(parts);

type Mutator = (bytes: Uint8Array, blocks: Block[], rand: () => number) => { bytes: Uint8Array; step: string } | null;

const pick = <T>(xs: readonly T[], rand: () => number): T | undefined => (xs.length ? xs[Math.floor(rand() * xs.length)] : undefined);
const ofKind = (blocks: Block[], kinds: number[]) => blocks.filter((b) => kinds.includes(b.kind) && b.contentLength > 0);

/** Flips `n` bytes in [from, to). */
function flipIn(bytes: Uint8Array, from: number, to: number, n: number, rand: () => number): Uint8Array {
  const out = bytes.slice();
  for (let k = 0; k < n && to > from; k++) out[from + Math.floor(rand() * (to - from))] ^= 1 + Math.floor(rand() * 255);
  return out;
}

export const NETTRACE_MUTATORS: Record<string, Mutator> = {
  "cut.boundary": (bytes, blocks, rand) => {
    const b = pick(blocks, rand);
    if (!b) return null;
    const at = rand() < 0.5 ? b.at : b.end;
    return { bytes: bytes.slice(0, at), step: `cut at the ${at === b.at ? "start" : "end"} of a kind-${b.kind} block (${at})` };
  },
  "cut.inside": (bytes, blocks, rand) => {
    const b = pick(blocks, rand);
    if (!b || b.end - b.at < 2) return null;
    const at = b.at + 1 + Math.floor(rand() * (b.end - b.at - 1));
    return { bytes: bytes.slice(0, at), step: `cut inside a kind-${b.kind} block at ${at}` };
  },
  "flip.event-headers": (bytes, blocks, rand) => {
    const b = pick(ofKind(blocks, [BLOCK_EVENT]), rand);
    if (!b) return null;
    // the first records' headers, where the compressed header flags and varints are
    const from = b.content,
      to = Math.min(b.content + b.contentLength, b.content + 64 + Math.floor(rand() * 512));
    const n = 1 + Math.floor(rand() * 4);
    return { bytes: flipIn(bytes, from, to, n, rand), step: `${n} bytes flipped in an event block's first records (${from}..${to})` };
  },
  "flip.metadata": (bytes, blocks, rand) => {
    const b = pick(ofKind(blocks, [BLOCK_METADATA]), rand);
    if (!b) return null;
    const n = 1 + Math.floor(rand() * 3);
    return { bytes: flipIn(bytes, b.content, b.content + b.contentLength, n, rand), step: `${n} bytes flipped in a metadata block at ${b.content}` };
  },
  "flip.stacks-and-points": (bytes, blocks, rand) => {
    const b = pick(ofKind(blocks, [BLOCK_STACK, BLOCK_SEQUENCE_POINT]), rand);
    if (!b) return null;
    const out = bytes.slice();
    const at = b.content + 4 * Math.floor((rand() * Math.min(b.contentLength, 64)) / 4);
    const v = pick([0, 1, 0x7fffffff, 0xffffffff, 0x10000, Math.floor(rand() * 0x100000000)], rand)!;
    new DataView(out.buffer).setUint32(Math.min(at, out.length - 4), v, true);
    return { bytes: out, step: `u32 at ${at} of a kind-${b.kind} block set to ${v}` };
  },
  "varint.overlong": (bytes, blocks, rand) => {
    const b = pick(ofKind(blocks, [BLOCK_EVENT, BLOCK_METADATA]), rand);
    if (!b) return null;
    const out = bytes.slice();
    const at = b.content + Math.floor(rand() * Math.min(b.contentLength, 256));
    const n = 1 + Math.floor(rand() * 12);
    for (let i = 0; i < n && at + i < b.content + b.contentLength; i++) out[at + i] = 0xff;
    return { bytes: out, step: `${n} bytes of 0xFF at ${at} (varints that do not end)` };
  },
  "block.size": (bytes, blocks, rand) => {
    const b = pick(
      blocks.filter((x) => x.content - x.at >= 4),
      rand,
    );
    if (!b) return null;
    // the size word before the content (V3–V5: then padding to 4 bytes; V6: kind << 24 | size)
    const out = bytes.slice();
    const v = new DataView(out.buffer);
    let sizeAt = -1;
    for (let d = 4; d <= 7 && sizeAt < 0; d++) {
      const at = b.content - d;
      if (at >= b.at && (v.getUint32(at, true) >>> 0 === b.contentLength || (v.getUint32(at, true) & 0xffffff) === b.contentLength)) sizeAt = at;
    }
    if (sizeAt < 0) return null;
    const old = v.getUint32(sizeAt, true);
    const next = pick([0, 1, old + 1, old - 1, old * 2, 0x7fffffff, 0xffffffff], rand)! >>> 0;
    v.setUint32(sizeAt, next, true);
    return { bytes: out, step: `the u32 before a kind-${b.kind} block's content (${sizeAt}) set from ${old} to ${next}` };
  },
  "block.drop": (bytes, blocks, rand) => {
    const b = pick(blocks.slice(1), rand);
    if (!b) return null;
    return { bytes: concat(bytes.subarray(0, b.at), bytes.subarray(b.end)), step: `kind-${b.kind} block at ${b.at} dropped` };
  },
  "block.duplicate": (bytes, blocks, rand) => {
    const b = pick(blocks.slice(1), rand);
    if (!b) return null;
    return { bytes: concat(bytes.subarray(0, b.end), bytes.subarray(b.at, b.end), bytes.subarray(b.end)), step: `kind-${b.kind} block at ${b.at} duplicated` };
  },
  "block.swap": (bytes, blocks, rand) => {
    const rest = blocks.slice(1);
    if (rest.length < 2) return null;
    const i = Math.floor(rand() * (rest.length - 1));
    const a = rest[i],
      c = rest[i + 1];
    // (V4/V5 blocks are 4-aligned from the stream start: swapped, their padding may no longer fit)
    return {
      bytes: concat(bytes.subarray(0, a.at), bytes.subarray(c.at, c.end), bytes.subarray(a.at, a.end), bytes.subarray(c.end)),
      step: `kind-${a.kind} block at ${a.at} swapped with the kind-${c.kind} block after it`,
    };
  },
  "flip.any": (bytes, _blocks, rand) => {
    const n = 1 + Math.floor(rand() * 8);
    return { bytes: flipIn(bytes, 0, bytes.length, n, rand), step: `${n} bytes flipped anywhere` };
  },
};

export const NETTRACE_MUTATOR_NAMES = Object.keys(NETTRACE_MUTATORS);

/** A valid file of at most about `most` bytes: the first blocks of a V3–V5 base and its end marker. */
function windowOf(bytes: Uint8Array, most: number, rand: () => number): { bytes: Uint8Array; step?: string } {
  if (bytes.length <= most) return { bytes: bytes.slice() };
  const file = readNettrace(bytes);
  if (file.header.formatVersion === 6) return { bytes: bytes.slice() };
  const blocks = blocksOf(file, bytes.length);
  let n = 1;
  const target = most * (0.5 + rand() / 2);
  while (n < blocks.length && blocks[n].end <= target) n++;
  const end = blocks[n - 1].end;
  const out = new Uint8Array(end + 1);
  out.set(bytes.subarray(0, end));
  out[end] = 1; // the end-of-stream tag
  return { bytes: out, step: `window: the first ${n} of ${blocks.length} blocks` };
}

/** The mutated input of case `seed` on an EventPipe `base`: one mutation, now and then two. */
export function mutateNettraceCase(seed: number, base: Base): Case {
  const rand = mulberry32(seed);
  const steps: string[] = [];
  const mutators: string[] = [];
  const w = windowOf(base.bytes, 300_000, rand);
  if (w.step) steps.push(w.step);
  let bytes = w.bytes;
  const count = 1 + (rand() < 0.25 ? 1 : 0);
  for (let k = 0; k < count; k++) {
    const blocks = blocksOf(readNettrace(bytes), bytes.length);
    for (let tries = 0; tries < 10; tries++) {
      const name = NETTRACE_MUTATOR_NAMES[Math.floor(rand() * NETTRACE_MUTATOR_NAMES.length)];
      const r = NETTRACE_MUTATORS[name](bytes, blocks, rand);
      if (!r) continue;
      bytes = r.bytes;
      steps.push(`${name}: ${r.step}`);
      mutators.push(name);
      break;
    }
  }
  return { seed, base: base.name, steps, mutators, bytes };
}

/** The EventPipe bases: the corpus files (when there), and synthetic V6 and uncompressed V4 files. */
export function nettraceBases(corpusDir: string | null, generated: Base[] = []): Base[] {
  const bases: Base[] = [];
  if (corpusDir && existsSync(corpusDir)) {
    for (const f of readdirSync(corpusDir)
      .filter((x) => /\.(nettrace|netperf)$/.test(x))
      .sort())
      bases.push({ name: f, bytes: new Uint8Array(readFileSync(join(corpusDir, f))) });
  }
  bases.push({ name: "synthetic-v6.nettrace", bytes: syntheticV6() });
  bases.push({ name: "synthetic-v4.nettrace", bytes: syntheticV4Uncompressed() });
  bases.push(...generated);
  return bases;
}
