// Per-trace state of the TypeScript core: what the WebAssembly core keeps in the globals of its
// modules, grouped by the module (assembly/*.ts) that owns them. One object per trace, always of
// this one shape, so the module functions that take it stay monomorphic and keep their optimized
// code from one trace to the next.

import { CLR_MAX_DEPTH, CLR_SCOPE_VALUES, COMPRESSION_XPRESS, MIN_WINDOW } from "../../assembly/codes.js";
import { HEAP_BASE, INITIAL_MEMORY, MEMORY_LIMIT, setBuffer } from "./memory.js";

export class CoreState {
  // ---- memory (the WebAssembly memory and runtime heap) ----
  u8 = new Uint8Array(0);
  u16 = new Uint16Array(0);
  u32 = new Uint32Array(0);
  f64 = new Float64Array(0);
  dv = new DataView(new ArrayBuffer(0));
  readonly memory: { buffer: ArrayBuffer } = { buffer: new ArrayBuffer(0) };
  top = HEAP_BASE; // bump pointer, 8-aligned
  /** Highest address ever handed out (memory above it was not written by this core; it may hold an earlier decode's bytes). */
  highWater = HEAP_BASE;
  /** The most the memory may grow to, in bytes (a decode's memory limit; memory.ts setMemoryPages). */
  memoryLimit = MEMORY_LIMIT;
  /** Addresses of freed blocks below the top (memory.ts). */
  freeBlocks: number[] = [];
  /**
   * Where the memory takes a larger buffer when it grows: an ArrayBuffer of at least `bytes`, whose
   * bytes need not be zero (the core writes what it reads, as the WebAssembly core does on a memory
   * recycled from an earlier decode). Default: a fresh one.
   */
  takeBuffer: (bytes: number) => ArrayBuffer = (bytes) => new ArrayBuffer(bytes);

  // ---- tables.ts ----
  rowCount = 0;
  rowCap = 0;
  colTimestamp = 0;
  colKeywords = 0;
  colPid = 0;
  colTid = 0;
  colPayloadOffset = 0;
  colPayloadLength = 0;
  colHeaderLength = 0;
  colProvider = 0;
  colEventId = 0;
  colTask = 0;
  colFlags = 0;
  colProcessor = 0;
  colVersion = 0;
  colOpcode = 0;
  colLevel = 0;
  colHeaderType = 0;
  colChannel = 0;
  colEventType = 0;
  extCount = 0;
  extCap = 0;
  colExtRow = 0;
  colExtType = 0;
  colExtSize = 0;
  colExtOffset = 0;
  bufCount = 0;
  bufCap = 0;
  bufTable = 0;
  warnCount = 0;
  warnTotal = 0;
  warnTable = 0;
  arenaBlocks: number[] = []; // every arena block: [start, size] pairs flattened (kept from window to window)
  arenaList: number[] = []; // the blocks in use this window: [start, used] pairs flattened
  arenaListPtr = 0; // where directory() writes arenaList for the bindings (DIR_ARENAS)
  fixedRows = false; // windows end at tables.ts FIXED_ROWS rows, as the WebAssembly core's fixed columns make them
  windowWant = MIN_WINDOW;
  windowRecords = 0;
  windowFull = false;
  arenaBytes = 0;
  bufBase = 0;
  rowBase = 0;
  clrDir = 0;
  clrTypes = 0;
  clrRows = 0;
  clrMissing = 0;
  filterFlags = 0; // FF_* bits in force (the block is at memory.ts STATIC_FILTER); 0: every row is kept

  // ---- providers.ts ----
  provCount = 0;
  provCap = 0;
  provTable = 0;
  // The hash index lives outside linear memory: only the provider table is part of the output.
  hashSlots = new Uint32Array(0); // provider index + 1, 0 = empty
  hashMask = 0;
  // last lookup (GUID as four words), because consecutive records usually share a provider
  last0 = 0;
  last1 = 0;
  last2 = 0;
  last3 = 0;
  lastIndex = -1;
  readonly groupIndex = new Int32Array(256); // kernel group byte -> provider index, -1 = not yet seen

  // ---- eventtypes.ts ----
  typeCount = 0;
  typeCap = 0;
  typeTable = 0;
  // The hash index lives outside linear memory, as the providers' does. It starts as one empty
  // slot, so the record walk's first probe needs no test for a missing index.
  typeSlots = new Uint32Array(1); // type index + 1, 0 = empty
  typeMask = 0;


  // ---- records.ts ----
  ctxFileOffset = 0;
  ctxBuffer = 0;
  walkAbandoned = false;

  // ---- buffers.ts ----
  wantBytes = 0;
  done = false;
  fatalCode = 0;
  fatalOffset = 0;
  resyncing = false;
  resyncFrom = 0;
  resyncNonZero = false;
  compressionFormat = COMPRESSION_XPRESS;

  // ---- clr.ts ----
  // values of the fields of the scope being walked (u64 as two words), CLR_SCOPE_VALUES per depth
  readonly scope = new Uint32Array((CLR_MAX_DEPTH + 1) * CLR_SCOPE_VALUES * 2);
  clrTruncated = false;
  clrOn = false;
  clrProgram = 0;
  clrStarts = 0;
  clrLookup = 0;
  clrGuids = 0;
  clrGuidCount = 0;

  constructor() {
    setBuffer(this, new ArrayBuffer(INITIAL_MEMORY));
  }
}
