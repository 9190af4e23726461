// Values read by hand from a decoded trace's raw bytes, as the tests' oracles: not through the
// library's payload decoding or stack attachment.

import type { Trace } from "../../dist/bindings/index.js";

/** The little-endian UInt32 at `offset` of row `row`'s payload, read from its record bytes. */
export function payloadU32(t: Trace, row: number, offset = 0): number {
  const bytes = t.events.recordBytesOf(row)!;
  const at = t.events.payloadOffset[row] + offset;
  return (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0;
}

/** Rows carrying a stack extended item (STACK_TRACE32/64) of at least one frame. */
export function rowsWithStackItems(t: Trace): Set<number> {
  const rows = new Set<number>();
  const ext = t.extendedItems;
  for (let e = 0; e < ext.length; e++) if ((ext.type[e] === 5 || ext.type[e] === 6) && ext.size[e] > 8) rows.add(ext.row[e]);
  return rows;
}
