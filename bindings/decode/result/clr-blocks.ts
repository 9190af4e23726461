// The typed .NET tables' blocks (one per event type: its columns one after another, `cap` rows each,
// the first `count` used) as the decoding side sees them: where their row indices and their references
// into the byte store sit, so that a block can be copied out exactly and move with its rows and record
// bytes.

import * as C from "../../../assembly/codes.js";
import { clrProgram } from "../../schema/clr-program.js";
import { madeWithin } from "./reuse.js";
import { gatherElements } from "./gather.js";

/** Loops over a column of u32 addresses in the core's memory, in place; each false (nothing done) for a column elsewhere. */
export interface ColumnMoves {
  /** Adds `delta` (modulo 2^32) to each. */
  shift(column: Uint32Array, delta: number): boolean;
  /** Moves each in [start, end] by `delta`, any other to 0 (none). */
  relocate(column: Uint32Array, start: number, end: number, delta: number): boolean;
}

/**
 * How much a column, a typed table or the byte store grows when what was reserved falls short: rarely
 * when the input's size is known, at every step when it is not (chunks of a stream). Each growth copies
 * what is held into fresh memory, and room never written is never resident, so doubling: the generated
 * 1 GiB trace as chunks of unknown size took 17.1 s, 1.05 M page faults and 2,210 MB peak growing by half,
 * 13.8 s, 0.78 M and 1,875 MB doubling.
 */
export const GROWTH = 2;

/** Where u32 references into the byte store sit in a block (column offsets per row), and its column runs (pre, width). */
interface BlockShape {
  offsets: number[];
  runs: [number, number][];
}

let shapes: BlockShape[] | undefined;

function blockShapes(): BlockShape[] {
  return (shapes ??= clrProgram().layouts.map((l) => {
    const pres = new Set<number>([l.preRow, l.preStatus]);
    const offsets: number[] = [];
    for (const c of l.columns) {
      pres.add(c.pre);
      if (c.preB !== C.CLR_NOT_STORED) pres.add(c.preB);
      if (c.storage === "ref") offsets.push(c.pre);
    }
    const sorted = [...pres].sort((a, b) => a - b);
    const runs = sorted.map((p, i): [number, number] => [p, (i + 1 < sorted.length ? sorted[i + 1] : l.rowBytes) - p]);
    return { offsets, runs };
  }));
}

/** The first `count` rows of a block of type `t` laid out for `cap` rows, as a block of exactly `count` rows (a copy). */
export function exactBlock(t: number, count: number, cap: number, src: Uint8Array, into?: Uint8Array): Uint8Array {
  const out = into ?? new Uint8Array(count * clrProgram().layouts[t].rowBytes);
  if (cap === count && !into) {
    out.set(src.subarray(0, out.length));
    return out;
  }
  appendRows(t, out, count, 0, src, cap, count);
  return out;
}

/**
 * Copies the first `count` rows of `src` (a block of type `t` laid out for `srcCap` rows) to rows
 * `at`.. of `dst` (laid out for `dstCap` rows): each column's run at once.
 */
function appendRows(t: number, dst: Uint8Array, dstCap: number, at: number, src: Uint8Array, srcCap: number, count: number): void {
  for (const [pre, width] of blockShapes()[t].runs) {
    dst.set(src.subarray(srcCap * pre, srcCap * pre + count * width), dstCap * pre + at * width);
  }
}

/**
 * Entries `entries` (in the order given) of a block of type `t` laid out for `cap` rows, as a block of
 * exactly those (a copy; row indices and references as they were), and its row and reference columns.
 */
export function gatherBlock(t: number, src: Uint8Array, cap: number, entries: Uint32Array): { block: Uint8Array; rows: Uint32Array; refs: Uint32Array[] } {
  const n = entries.length;
  const layout = clrProgram().layouts[t];
  const block = new Uint8Array(n * layout.rowBytes);
  // (a column is aligned to its width at any row count: the layout puts the wider columns first)
  for (const [pre, width] of blockShapes()[t].runs) gatherElements(width, src.buffer, src.byteOffset + cap * pre, cap, entries, block.buffer, n * pre);
  const words = new Uint32Array(block.buffer, 0, block.byteLength >>> 2);
  const column = (pre: number) => words.subarray((n * pre) >>> 2, ((n * pre) >>> 2) + n);
  return { block, rows: column(layout.preRow), refs: blockShapes()[t].offsets.map(column) };
}

/**
 * Address ranges of a window's record bytes and where each goes: [start, end, delta] (an address a in
 * [start, end) becomes a + delta).
 */
export type Relocation = readonly (readonly [number, number, number])[];

/** A relocation that moves nothing: references that are offsets into the trace's bytes already. */
export const UNMOVED: Relocation = [[0, 0xffff_ffff, 0]];

/** `addr` moved by the relocation (0 stays 0: no reference; an address in no range becomes 0). */
export function relocate(moves: Relocation, addr: number): number {
  if (addr === 0) return 0;
  for (const [start, end, delta] of moves) if (addr >= start && addr < end) return addr + delta;
  // (an address at the very end of a range: a reference to empty bytes there)
  for (const [start, end, delta] of moves) if (addr >= start && addr <= end) return addr + delta;
  return 0;
}

/**
 * The addresses of `src` moved by the relocation, into `dst` (which may be `src`: in place). With one
 * range, inline: every address moves alike, and a call per address would be most of the cost.
 */
export function relocateAll(moves: Relocation, src: Uint32Array, dst: Uint32Array): void {
  if (moves.length === 1) {
    const [start, end, delta] = moves[0];
    for (let i = 0; i < src.length; i++) {
      const a = src[i];
      dst[i] = a !== 0 && a >= start && a <= end ? a + delta : 0;
    }
  } else for (let i = 0; i < src.length; i++) dst[i] = relocate(moves, src[i]);
}

/**
 * Moves rows `from`..`from + count` of a block of type `t` laid out for `cap` rows (`count` by default;
 * 4-byte aligned, in place): their row indices by `rows`, their references into the byte store (0:
 * none) by `moves`, or to 0 when `moves` is null (record bytes not kept). With `inCore`, only a block in
 * the core's memory moved by one range, by the core's loops: false (nothing done) otherwise.
 */
export function moveBlock(
  block: Uint8Array,
  t: number,
  count: number,
  rows: number,
  moves: Relocation | null,
  cap = count,
  from = 0,
  inCore?: ColumnMoves,
): boolean {
  const words = new Uint32Array(block.buffer, block.byteOffset, block.byteLength >>> 2);
  const rowAt = ((cap * clrProgram().layouts[t].preRow) >>> 2) + from;
  const refs = blockShapes()[t].offsets.map((pre) => words.subarray(((cap * pre) >>> 2) + from, ((cap * pre) >>> 2) + from + count));
  if (inCore) {
    // (every refusal comes before the first move: a block is moved whole or not at all)
    if (moves && (moves.length !== 1 || moves[0][0] < 0 || moves[0][1] > 0xffff_ffff)) return false;
    if (!inCore.shift(words.subarray(rowAt, rowAt + count), rows)) return false;
    for (const r of refs) {
      if (moves) inCore.relocate(r, moves[0][0], moves[0][1], moves[0][2]);
      else r.fill(0);
    }
    return true;
  }
  if (rows) for (let i = 0; i < count; i++) words[rowAt + i] += rows;
  if (moves === UNMOVED) return true;
  for (const r of refs) {
    if (moves) relocateAll(moves, r, r);
    else r.fill(0);
  }
  return true;
}

/** Blocks of type `t` (rows in order, each moved already) as one block: each column's runs one after another. */
export function joinBlocks(t: number, parts: readonly { count: number; block: Uint8Array }[]): Uint8Array {
  if (parts.length === 1) return parts[0].block;
  const total = parts.reduce((n, p) => n + p.count, 0);
  const block = new Uint8Array(total * clrProgram().layouts[t].rowBytes);
  for (const [pre, width] of blockShapes()[t].runs) {
    let at = total * pre;
    for (const p of parts) {
      const n = p.count * width;
      block.set(p.block.subarray(p.count * pre, p.count * pre + n), at);
      at += n;
    }
  }
  return block;
}

/**
 * Typed tables that grow by appended parts (the windows of a trace): each type's block laid out for
 * `cap` rows with `count` used, a part's rows copied in once and then moved (row indices, references),
 * or moved in the core's memory first where `inCore` can. A block grows to the rows expected in all.
 */
export class GrowingClrBlocks {
  private readonly types: ({ block: Uint8Array; cap: number; count: number } | undefined)[] = [];

  /** `take`: where a block's memory comes from (the builder's pool of buffers to reuse); `give`: where outgrown blocks go. */
  constructor(
    private readonly take: (bytes: number) => ArrayBuffer = (bytes) => new ArrayBuffer(bytes),
    private readonly give: (buffers: ArrayBufferLike[]) => void = () => {},
  ) {}

  /**
   * Appends `count` rows of type `t` from `src` (laid out for `srcCap` rows): row indices moved by
   * `rows`, references by `moves` (null: to 0, record bytes not kept). `expect(need)`: the rows of this
   * type likely in all when `need` are held.
   */
  append(
    t: number,
    src: Uint8Array,
    srcCap: number,
    count: number,
    rows: number,
    moves: Relocation | null,
    expect: (need: number) => number,
    inCore?: ColumnMoves,
  ): void {
    const rowBytes = clrProgram().layouts[t].rowBytes;
    const g = (this.types[t] ??= { block: new Uint8Array(0), cap: 0, count: 0 });
    const need = g.count + count;
    if (need > g.cap) {
      const least = Math.max(need, Math.ceil(g.cap * GROWTH));
      const [memory, cap] = madeWithin(Math.max(least, Math.ceil(expect(need))), least, (rows) => this.take(rows * rowBytes));
      const block = new Uint8Array(memory, 0, cap * rowBytes);
      if (g.count) appendRows(t, block, cap, 0, g.block, g.cap, g.count);
      this.give([g.block.buffer]);
      g.block = block;
      g.cap = cap;
    }
    // (moved in the core's memory first where it can, then copied: the part is taken once)
    if (inCore && moveBlock(src, t, count, rows, moves, srcCap, 0, inCore)) {
      appendRows(t, g.block, g.cap, g.count, src, srcCap, count);
    } else {
      appendRows(t, g.block, g.cap, g.count, src, srcCap, count);
      moveBlock(g.block, t, count, rows, moves, g.cap, g.count);
    }
    g.count = need;
  }

  /** The buffers of the blocks. */
  buffers(): ArrayBufferLike[] {
    return this.types.filter((g) => g !== undefined).map((g) => g.block.buffer);
  }

  /** The tables (blocks with room after their rows: `caps`), or undefined when no rows were appended. */
  result(): { counts: Uint32Array; blocks: (Uint8Array | null)[]; caps: Uint32Array } | undefined {
    if (!this.types.some((g) => g?.count)) return undefined;
    const n = clrProgram().layouts.length;
    const counts = new Uint32Array(n);
    const caps = new Uint32Array(n);
    const blocks: (Uint8Array | null)[] = new Array(n).fill(null);
    this.types.forEach((g, t) => {
      if (!g?.count) return;
      counts[t] = g.count;
      caps[t] = g.cap;
      blocks[t] = g.block;
    });
    return { counts, blocks, caps };
  }
}
