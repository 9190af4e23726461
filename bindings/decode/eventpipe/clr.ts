// The typed .NET runtime tables of an EventPipe file's rows, filled by a core's own fill (the same
// generated functions an .etl window's record walk calls): the rows' columns and bytes are laid out in
// the core's memory as a window's would be, the tables filled there, then moved out with their references
// made offsets into the trace's bytes again.
//
// Three ways, by engine and size. The WebAssembly engine fills in the EventPipe reader's own core: as
// each walk places its rows, while the walked block is staged (PlacedFiller: fillPlacedRows, the rows
// put in the window's dispatch order once it is known), or, where that cannot be (memory ran out),
// a chunk of rows at a time where the rows wrote them, each chunk's payloads copied in (ChunkFiller:
// fillRowsOf). The TypeScript engine, and a window whose byte store the WebAssembly core cannot hold in
// one block (MAX_BLOCK, just under 1 GiB; a whole file read at once), fill in a TypeScript core whose
// memory the store is built in (no copy).

import * as C from "../../../assembly/codes.js";
import type { CoreExports } from "../../core/index.js";
import { CoreState } from "../../core/state.js";
import { HEAP_BASE, heapAlloc, reserveMemory } from "../../core/memory.js";
import { setClr } from "../../core/generated/clr.js";
import { fillRowsOf } from "../../core/generated/records.js";
import { clrEventIndex, clrProgram } from "../../schema/clr-program.js";
import { CLR_PROVIDERS, clrProviderIndex } from "../../schema/clr-payload.js";
import { formatGuid, parseGuid } from "../../schema/guid.js";
import { GrowingClrBlocks, UNMOVED, type Relocation } from "../result/clr-blocks.js";
import type { NettraceMetadata } from "../../eventpipe/format.js";
import type { WindowColumns } from "../../eventpipe/walk.js";
import { fixedProviderGuid } from "./provider-guids.js";
import { metaOf, type TraceData } from "../result/trace-data.js";
import type { ChunkColumns } from "./rows.js";
import { setupClr } from "../windows/windows.js";

/** What fills the typed tables of a file's windows, one after another; `dispose` when the file is read. */
export interface ClrFiller {
  /** The WebAssembly core (engine "wasm"), typed tables on. */
  core?: CoreExports;
  /** What fills them as the reader places each walk's rows, in that core (PlacedFiller), where it can. */
  placed?: PlacedFiller;
  /** Where a window's byte store of `bytes` is built: in a TypeScript core's memory when that core fills it. */
  place(bytes: number, rows: number): ClrPlace | undefined;
  dispose(): void;
}

/** Bytes of a window's store and columns the WebAssembly core takes (its allocator's blocks end below 1 GiB). */
const CORE_STORE_LIMIT = C.MAX_BLOCK - (64 << 20);

/** The TypeScript engine's filler: a TypeScript core the store is built in. */
export const placeFiller: ClrFiller = { place: clrPlace, dispose: () => {} };

/**
 * A filler in a WebAssembly core that does other work too (the EventPipe reader's); its `dispose` leaves
 * the core to its owner. `placed`: with a PlacedFiller, where the core has one.
 */
export function coreFiller(core: CoreExports, placed = true): ClrFiller {
  core.init(0, C.MIN_WINDOW, 0);
  const on = setupClr(core);
  const fill = on && placed ? new PlacedFiller(core) : undefined;
  return {
    core: on ? core : undefined,
    placed: fill,
    place: (bytes, rows) => (on && bytes <= CORE_STORE_LIMIT ? undefined : clrPlace(bytes, rows)),
    dispose: () => fill?.dispose(),
  };
}

/** A store inside a TypeScript core's memory, where its typed tables are filled without a copy. */
export interface ClrPlace {
  s: CoreState;
  at: number;
}

/** Memory for a byte store of `bytes` and the typed tables of `rows` rows; undefined when it cannot be had. */
function clrPlace(bytes: number, rows: number): ClrPlace | undefined {
  const s = new CoreState();
  // room for the store, the columns the fill reads and the tables at once (each growth copies what is in use)
  if (!reserveMemory(s, HEAP_BASE + bytes + 80 * rows + (4 << 20), true)) return undefined;
  const at = heapAlloc(s, Math.max(8, bytes));
  return at ? { s, at } : undefined;
}

/**
 * Fills `data.clr` (and `clrRows`) for the rows of `data`; leaves the trace without typed tables when
 * none of its providers is a .NET runtime provider or memory runs out. `place`: where `data.bytes` was
 * built (filler.place), else the filler's WebAssembly core fills, else a TypeScript core a copy is put in.
 */
export function fillNettraceClr(data: TraceData, filler: ClrFiller, place?: ClrPlace): void {
  const provClr = new Int8Array(data.providerCount);
  for (let i = 0; i < data.providerCount; i++) provClr[i] = clrProviderIndex(formatGuid(metaOf(data), data.providersOffset + i * C.PROV_STRIDE + C.PROV_GUID));
  if (!provClr.some((p) => p >= 0) || data.eventCount === 0) return;
  if (!place && filler.core && fillInCore(data, provClr, filler.core)) return;
  if (!place) {
    place = clrPlace(data.bytes.length, data.eventCount);
    if (!place) return;
    place.s.u8.set(data.bytes, place.at);
  }
  fillInPlace(data, provClr, place);
}

/** The .NET runtime provider (CLR_PROVIDERS index) of each provider GUID, -1 for others. */
export function clrProvidersOf(guids: readonly Uint8Array[]): Int8Array {
  return Int8Array.from(guids, (g) => clrProviderIndex(formatGuid(g, 0)));
}

/** The rows' columns a fill reads. */
interface ClrRowColumns {
  provider: Uint16Array;
  headerType: Uint8Array;
  eventId: Uint16Array;
  version: Uint16Array;
  payloadOffset: Uint32Array;
  payloadLength: Uint16Array;
}

/**
 * The typed tables of `n` rows (`e`: their columns, payload offsets into a store whose offset `bytesAt`
 * is `bytes[0]`) filled in the WebAssembly core, only `bytes` copied in, and appended to `into` (each
 * type's rows copied out once, their row indices counted from `rowBase`, their references store
 * offsets; `scale`: the rows expected in all per row held, at least 1). The typed rows filled, or -1
 * when the core's memory cannot take them (nothing appended).
 */
function fillPartInCore(
  core: CoreExports,
  provClr: Int8Array,
  e: ClrRowColumns,
  n: number,
  bytes: Uint8Array,
  bytesAt: number,
  rowBase: number,
  into: GrowingClrBlocks,
  scale = 1,
): number {
  const taken: number[] = [];
  try {
    const store = putInCore(core, bytes, taken);
    const provider = putInCore(core, e.provider.subarray(0, n), taken),
      headerType = putInCore(core, e.headerType.subarray(0, n), taken);
    const eventId = putInCore(core, e.eventId.subarray(0, n), taken),
      version = putInCore(core, e.version.subarray(0, n), taken);
    const payloadLength = putInCore(core, e.payloadLength.subarray(0, n), taken),
      payloadOffset = putInCore(core, e.payloadOffset.subarray(0, n), taken);
    const prov = putInCore(core, provClr, taken);
    if (!store || !provider || !headerType || !eventId || !version || !payloadLength || !payloadOffset || !prov) return -1;
    return fillPlaced(
      core,
      prov,
      provClr.length,
      n,
      { provider, headerType, eventId, version, payloadOffset, payloadLength },
      store,
      bytes.length,
      bytesAt,
      rowBase,
      into,
      scale,
    );
  } finally {
    // the next part starts with empty tables (their blocks kept) and the heap as it was
    for (const at of taken) core.free(at);
    core.resetWindow();
  }
}

/**
 * The typed tables of `n` rows whose columns are in the core (addresses; the payload offsets store
 * offsets, moved here to `store`, the core's copy of `length` bytes from store offset `bytesAt`), filled
 * and appended to `into` as fillPartInCore says. The typed rows filled, or -1 when memory ran out.
 */
function fillPlaced(
  core: CoreExports,
  prov: number,
  nProv: number,
  n: number,
  at: Omit<ChunkColumns, "payloadFrom" | "payloadTo"> & { headerType: number },
  store: number,
  length: number,
  bytesAt: number,
  rowBase: number,
  into: GrowingClrBlocks,
  scale: number,
): number {
  // payloads at their place in the core's copy of the bytes
  core.shiftU32(at.payloadOffset, n, (store - bytesAt) >>> 0);
  const rows = core.fillRowsOf(prov, nProv, n, at.provider, at.headerType, at.eventId, at.version, at.payloadOffset, at.payloadLength);
  const dir = new Uint32Array(core.memory.buffer, core.directory(), C.DIR_SLOTS);
  if (dir[C.DIR_CLR_MISSING]) return -1;
  appendFilled(new Uint8Array(core.memory.buffer), dir[C.DIR_CLR_DIR], rowBase, [[store, store + length, bytesAt - store]], into, scale);
  return rows;
}

/**
 * The typed tables of a file's rows filled in the core the rows are made in, a chunk at a time, where
 * the rows wrote them (EventTableContext.fillChunk: no column copied in), each chunk's payload bytes
 * copied in once, the typed rows appended to `into` (their references store offsets, their row indices
 * the table's). `failed`: the core's memory could not take a chunk (the rows filled so far are not all).
 */
export class ChunkFiller {
  /** Typed rows filled. */
  rows = 0;
  failed = false;
  private prov = 0;
  private ht = 0;
  private htRows = 0;

  /** `input`: the bytes the store offsets are of, from store offset `base`; `headerType`: the rows' (one for the file); `scale` as fillPartInCore's. */
  constructor(
    private readonly core: CoreExports,
    private readonly provClr: Int8Array,
    private readonly input: Uint8Array,
    private readonly base: number,
    private readonly headerType: number,
    private readonly into: GrowingClrBlocks,
    private readonly scale: number,
  ) {}

  chunk(at: ChunkColumns, rows: number, firstRow: number): void {
    if (this.failed || rows === 0) return;
    const core = this.core;
    const taken: number[] = [];
    try {
      if (this.prov === 0) this.prov = putInCore(core, this.provClr, []);
      if (this.htRows < rows) {
        if (this.ht !== 0) core.free(this.ht);
        this.ht = core.alloc(Math.max(8, rows));
        this.htRows = this.ht === 0 ? 0 : rows;
        if (this.ht !== 0) new Uint8Array(core.memory.buffer, this.ht, rows).fill(this.headerType);
      }
      const lo = at.payloadFrom,
        hi = at.payloadTo;
      const store = putInCore(core, this.input.subarray(lo - this.base, hi - this.base), taken);
      // (the payload offsets may be moved: the rows were copied out already)
      const filled =
        !this.prov || !this.ht || !store
          ? -1
          : fillPlaced(core, this.prov, this.provClr.length, rows, { ...at, headerType: this.ht }, store, hi - lo, lo, firstRow, this.into, this.scale);
      if (filled < 0) this.failed = true;
      else this.rows += filled;
    } finally {
      for (const x of taken) core.free(x);
      core.resetWindow();
    }
  }

  /** Gives the core's blocks back. */
  dispose(): void {
    if (this.prov) this.core.free(this.prov);
    if (this.ht) this.core.free(this.ht);
    this.prov = this.ht = this.htRows = 0;
  }
}

/**
 * The typed tables of a window's rows filled as the reader places them, a walk at a time, while the
 * walked block is staged in the core (assembly/records.ts fillPlacedRows): its payloads in the cache
 * still, none copied in again. The rows' row indices are the window's, which are the event table's
 * when the window's dispatch order is the file's (most windows: nettrace-rows.ts inFileOrder); else
 * `take` puts each table's rows in the window's order first (assembly/records.ts placedReorder). The
 * tables wait in the core's window tables until the window's rows are made: `take` appends them, or
 * `drop` lets them go (memory ran out), and ChunkFiller fills the rows again.
 */
export class PlacedFiller {
  /** Where the file's byte 0 is in the trace's bytes (EventTableContext.base): 0 for a file held whole, 8 for a stream's windows. */
  base = 0;
  /** The window rows filled (every walk's, in order) and whether all went in. */
  private rows = 0;
  private ok = true;
  private typedRows = 0;
  /** The schema event of each metadata row (i16, -1: none) in the core, for the first `known` rows. */
  private mdClr = 0;
  private mdCap = 0;
  private known = 0;
  /** The .NET runtime provider (CLR_PROVIDERS index, -1: none) of each provider name, as the first metadata row of the name gives its GUID. */
  private readonly clrOfName = new Map<string, number>();

  constructor(private readonly core: CoreExports) {}

  /** The rows one walk placed (CoreWalker.onPlaced). */
  placed(cols: WindowColumns, first: number, end: number, metadata: readonly NettraceMetadata[], pointerSize: number, bias: number): void {
    if (!this.ok) return;
    if (first !== this.rows || !this.metadataTypes(metadata)) {
      this.ok = false;
      return;
    }
    const ht = pointerSize === 4 ? C.HT_EVENT_HEADER32 : C.HT_EVENT_HEADER64;
    // (a reference's store offset is its file offset + base, its address + bias + base)
    this.typedRows = this.core.fillPlacedRows(cols.ptr, cols.stride, first, end - first, this.mdClr, this.known, bias >>> 0, (bias + this.base) >>> 0, ht);
    this.rows = end;
  }

  /**
   * The window's typed rows appended to `into` (row indices moved by `rowBase`; `scale` as
   * fillPartInCore's) when every one of its `rows` rows was filled: the typed rows, or -1 (nothing
   * appended). `reorder`: the window's dispatch order (its address in the core, u32 per position: the
   * window row there) where it is not the file's, and the window's columns. The core's window tables
   * are empty after.
   */
  take(rows: number, rowBase: number, into: GrowingClrBlocks, scale: number, reorder?: { order: number; cols: WindowColumns }): number {
    try {
      if (!this.ok || this.rows !== rows) return -1;
      const core = this.core;
      let dir = new Uint32Array(core.memory.buffer, core.directory(), C.DIR_SLOTS);
      if (dir[C.DIR_CLR_MISSING]) return -1;
      if (reorder) {
        if (!core.placedReorder(reorder.cols.ptr, reorder.cols.stride, rows, reorder.order, this.mdClr, this.known)) return -1;
        dir = new Uint32Array(core.memory.buffer, core.directory(), C.DIR_SLOTS);
      }
      appendFilled(new Uint8Array(core.memory.buffer), dir[C.DIR_CLR_DIR], rowBase, UNMOVED, into, scale);
      return this.typedRows;
    } finally {
      this.drop();
    }
  }

  /** Lets the window's typed rows go: the next window starts with empty tables. */
  drop(): void {
    this.core.resetWindow();
    this.rows = 0;
    this.typedRows = 0;
    this.ok = true;
  }

  /** The schema events of metadata rows new since the last call, in the core; false when memory is exhausted. */
  private metadataTypes(metadata: readonly NettraceMetadata[]): boolean {
    if (this.known === metadata.length) return true;
    const core = this.core;
    if (metadata.length > this.mdCap) {
      const cap = Math.max(metadata.length, 2 * this.mdCap, 256);
      const at = core.alloc(2 * cap);
      if (at === 0) return false;
      if (this.mdClr !== 0) {
        new Uint8Array(core.memory.buffer).copyWithin(at, this.mdClr, this.mdClr + 2 * this.known);
        core.free(this.mdClr);
      }
      this.mdClr = at;
      this.mdCap = cap;
    }
    const types = new Int16Array(core.memory.buffer, this.mdClr, this.mdCap);
    for (let m = this.known; m < metadata.length; m++) {
      const md = metadata[m];
      let p = this.clrOfName.get(md.providerName);
      if (p === undefined) {
        // (as NettraceTables.providersOf names a provider: the GUID of its name's first metadata row, else its name's)
        const guid = md.providerGuid ? formatGuid(md.providerGuid, 0) : fixedProviderGuid(md.providerName);
        p = guid ? clrProviderIndex(guid) : -1;
        this.clrOfName.set(md.providerName, p);
      }
      types[m] = clrEventIndex(p, md.eventId, md.version);
    }
    this.known = metadata.length;
    return true;
  }

  /** Gives the core's blocks back. */
  dispose(): void {
    if (this.mdClr) this.core.free(this.mdClr);
    this.mdClr = this.mdCap = this.known = 0;
  }
}

/** A copy of `src` in the core's memory: its address (noted in `taken`), or 0 when memory is exhausted. */
function putInCore(core: CoreExports, src: ArrayBufferView, taken: number[]): number {
  const at = core.alloc(Math.max(8, src.byteLength));
  if (at !== 0) {
    new Uint8Array(core.memory.buffer, at, src.byteLength).set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength));
    taken.push(at);
  }
  return at;
}

/** The typed tables filled in the WebAssembly core; false when its memory cannot take the window. */
function fillInCore(data: TraceData, provClr: Int8Array, core: CoreExports): boolean {
  const into = new GrowingClrBlocks();
  const rows = fillPartInCore(core, provClr, data.events, data.eventCount, data.bytes, 0, 0, into);
  if (rows < 0) return false;
  const clr = into.result();
  if (clr) {
    data.clr = clr;
    data.clrRows = rows;
  }
  return true;
}

/** The typed tables filled in a TypeScript core, where `data.bytes` is at `place`. */
function fillInPlace(data: TraceData, provClr: Int8Array, place: ClrPlace): void {
  const { s, at: store } = place;
  const e = data.events;
  const put = (src: ArrayBufferView): number => {
    const at = heapAlloc(s, Math.max(8, src.byteLength));
    if (at !== 0) s.u8.set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength), at);
    return at;
  };
  const provider = put(e.provider),
    headerType = put(e.headerType),
    eventId = put(e.eventId),
    version = put(e.version);
  const payloadLength = put(e.payloadLength);
  const payloadOffset = heapAlloc(s, e.payloadOffset.byteLength);
  const { words, typeStarts, lookup, layouts } = clrProgram();
  const guids = new Uint8Array(16 * CLR_PROVIDERS.length);
  CLR_PROVIDERS.forEach((p, i) => guids.set(parseGuid(p.guid), 16 * i));
  const program = put(words);
  const starts = put(typeStarts),
    table = put(lookup),
    g = put(guids),
    prov = put(provClr);
  if (!store || !provider || !headerType || !eventId || !version || !payloadLength || !payloadOffset || !program || !starts || !table || !g || !prov) return;
  if (!setClr(s, program, starts, layouts.length, table, g, CLR_PROVIDERS.length)) return;
  // payloads at their place in the core's copy of the bytes
  const offsets = new Uint32Array(s.u8.buffer, payloadOffset, data.eventCount);
  const from = e.payloadOffset;
  for (let i = 0; i < data.eventCount; i++) offsets[i] = from[i] + store;
  const rows = fillRowsOf(s, prov, provClr.length, data.eventCount, provider, headerType, eventId, version, payloadOffset, payloadLength);
  if (!rows || s.clrMissing) return;
  takeBlocks(data, s.u8, s.clrDir, store, rows);
}

/** The filled blocks (directory at `dir` in `memory`) as the trace's, references made offsets into the store at `store`. */
function takeBlocks(data: TraceData, memory: Uint8Array, dir: number, store: number, rows: number): void {
  const into = new GrowingClrBlocks();
  appendFilled(memory, dir, 0, [[store, store + data.bytes.length, -store]], into, 1);
  const clr = into.result();
  if (clr) {
    data.clr = clr;
    data.clrRows = rows;
  }
}

/**
 * The filled blocks (directory at `dir` in `memory`) appended to `into`, row indices moved by `rowBase`,
 * references by `moves`; `scale`: the rows of each type expected in all per row held.
 */
function appendFilled(memory: Uint8Array, dir: number, rowBase: number, moves: Relocation, into: GrowingClrBlocks, scale: number): void {
  const { layouts } = clrProgram();
  const d = new Uint32Array(memory.buffer, dir, (layouts.length * C.CLR_DIR_STRIDE) >>> 2);
  for (let t = 0; t < layouts.length; t++) {
    const count = d[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_COUNT) >>> 2];
    const at = d[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_BLOCK) >>> 2];
    const cap = d[(t * C.CLR_DIR_STRIDE + C.CLR_DIR_CAP) >>> 2];
    if (count && at) into.append(t, memory.subarray(at, at + cap * layouts[t].rowBytes), cap, count, rowBase, moves, (need) => need * scale);
  }
}
