// The GC's heap histories, read from their payloads as TraceEvent reads them, whatever the manifest
// says: .NET Framework 4.5 logs GC/PerHeapHistory from the private provider with an empty template.
// The layout is chosen by the event's version and, for versions 0 and 2, by the payload's exact length;
// a payload of no known layout is not used (TraceEvent's VersionRecognized).

import type { EventRow } from "../tables/event-table.js";

export const GEN0 = 0,
  GEN1 = 1,
  GEN2 = 2,
  LOH = 3,
  POH = 4;

/** One generation of one heap (TraceEvent's GCPerHeapHistoryGenData), bytes. */
interface GenData {
  sizeBefore: number;
  sizeAfter: number;
  /** SizeBefore − free-list and free-object space before; only from version 2 on. */
  objSpaceBefore: number;
  hasObjSpaceBefore: boolean;
  objSizeAfter: number;
  fragmentation: number;
  out: number;
  /** Survival rate, percent. */
  survRate: number;
  /** The generation's allocation budget (new_allocation). */
  budget: number;
}

/** One heap's history of one GC: its generations (gen0, gen1, gen2, LOH, and POH where logged). */
export interface PerHeapHistory {
  version: number;
  gens: GenData[];
}

/** The pointer-sized slots of one generation, as numbers (zero-extended on 32-bit, signed on 64-bit). */
function slots(view: DataView, at: number, pointerSize: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < 10; i++) {
    const o = at + i * pointerSize;
    out.push(pointerSize === 8 ? Number(view.getBigInt64(o, true)) : view.getUint32(o, true));
  }
  return out;
}

function genData(version: number, s: number[]): GenData {
  if (version === 0) {
    // .NET 4.0: size_before, size_after, current_size, previous_size, fragmentation, in, out, new_allocation, surv, growth
    return {
      sizeBefore: s[0],
      sizeAfter: s[1],
      objSpaceBefore: 0,
      hasObjSpaceBefore: false,
      fragmentation: s[4],
      objSizeAfter: s[1] - s[4],
      out: s[6],
      survRate: s[8],
      budget: s[7],
    };
  }
  // version 2 and later: size_before, free_list_space_before, free_obj_space_before, size_after,
  // free_list_space_after, free_obj_space_after, in, then out, new_allocation, surv (v2)
  // or pinned_surv, npinned_surv, new_allocation (v3+)
  const objSpaceBefore = s[0] - s[1] - s[2];
  const fragmentation = s[4] + s[5];
  const out = version === 2 ? s[7] : s[7] + s[8];
  return {
    sizeBefore: s[0],
    sizeAfter: s[3],
    objSpaceBefore,
    hasObjSpaceBefore: true,
    fragmentation,
    objSizeAfter: s[3] - fragmentation,
    out,
    survRate: version === 2 ? s[9] : objSpaceBefore === 0 ? 0 : Math.trunc((out * 100) / objSpaceBefore),
    budget: version === 2 ? s[8] : s[9],
  };
}

/** GC/PerHeapHistory (runtime 204, private 4), or undefined where the layout is not one TraceEvent knows. */
export function parsePerHeapHistory(row: EventRow): PerHeapHistory | undefined {
  const version = row.version;
  const bytes = row.payload;
  const p = row.pointerSize;
  const genSize = 10 * p;
  const len = bytes.length;
  const view = new DataView(bytes.buffer, bytes.byteOffset, len);
  let start: number, count: number;
  if (version === 0 || version === 2) {
    // five generation blocks first, then a few 32-bit fields; only gen0..LOH are used
    const known = version === 0 ? [5 * genSize + 25, 5 * genSize + 21] : [5 * genSize + 33, 5 * genSize + 25];
    if (!known.includes(len)) return undefined;
    start = 0;
    count = 4;
  } else if (version >= 3) {
    // ClrInstanceID, six pointers, seven 32-bit fields, a pointer, Count, then the generations
    const countAt = 54 + 7 * (p - 4);
    if (len < 2 + 7 * p + 7 * 4 + 4 * genSize) return undefined;
    start = countAt + 4;
    count = Math.min(view.getUint32(countAt, true), Math.floor((len - start) / genSize));
  } else return undefined;
  const gens: GenData[] = [];
  for (let g = 0; g < count; g++) gens.push(genData(version, slots(view, start + g * genSize, p)));
  return { version, gens };
}

/** GC/GlobalHeapHistory (runtime 205, private 5): the number of heaps, or undefined for a payload too short. */
export function parseGlobalHeapHistory(row: EventRow): { numHeaps: number } | undefined {
  const bytes = row.payload;
  if (bytes.length < 12) return undefined;
  return { numHeaps: new DataView(bytes.buffer, bytes.byteOffset, bytes.length).getInt32(8, true) };
}
