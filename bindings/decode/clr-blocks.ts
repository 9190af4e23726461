// The typed .NET tables' blocks (one per event type: its columns one after another, `count` rows
// each) as the decoding side sees them: where their row indices and their references into the
// byte store sit, so that a block can move with its rows and record bytes.

import * as C from "../../assembly/codes.js";
import { clrProgram } from "../schema/clr-program.js";

/** Where u32 references into the byte store sit in a block (column offsets per row), and its column runs (pre, width). */
export interface BlockShape {
  offsets: number[];
  runs: [number, number][];
}

let shapes: BlockShape[] | undefined;

export function blockShapes(): BlockShape[] {
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

/**
 * Moves a block of type `t` and `count` rows (4-byte aligned, in place): its row indices by `rows`,
 * its references into the byte store (0: none) by `offsets`, or to 0 with `clear` (record bytes dropped).
 */
export function moveBlock(block: Uint8Array, t: number, count: number, rows: number, offsets: number, clear = false): void {
  const words = new Uint32Array(block.buffer, block.byteOffset, block.byteLength >>> 2);
  if (rows) {
    const rowAt = (count * clrProgram().layouts[t].preRow) >>> 2;
    for (let i = 0; i < count; i++) words[rowAt + i] += rows;
  }
  if (offsets || clear) {
    for (const pre of blockShapes()[t].offsets) {
      if (clear) {
        words.fill(0, (count * pre) >>> 2, ((count * pre) >>> 2) + count);
        continue;
      }
      const o = (count * pre) >>> 2;
      for (let i = 0; i < count; i++) if (words[o + i] !== 0) words[o + i] += offsets;
    }
  }
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
