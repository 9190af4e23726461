// The per-trace state of the modules both cores share: one struct, which a shared module's functions
// take as their first argument (`m`). In the WebAssembly core it lies in linear memory at a fixed
// address (memory-access.ts STATE), its fields loads and stores at constant offsets; in the TypeScript
// core it is the base class of the per-trace CoreState (bindings/core/state.ts), which adds the views of
// its memory. scripts/gen-core-twin.mjs copies this file to bindings/core/. A module that is not yet
// shared keeps its state in its own globals (and in CoreState's own fields on the other side).
//
// Every field has an initial value here, which the TypeScript core's constructor gives it; the
// WebAssembly core zeroes the struct and sets the others in resetState, as a memory reused from an
// earlier trace holds that trace's values.

import { MIN_WINDOW, COMPRESSION_XPRESS } from "./codes";

@unmanaged export class SharedState {
  // ---- tables.ts: the event table, one row per record, struct of arrays (50 bytes a row; DIR_* slots) ----
  rowCount: u32 = 0;
  rowCap: u32 = 0;
  colTimestamp: usize = 0; // i64 raw clock
  colKeywords: usize = 0; // u64
  colPid: usize = 0; // u32, 0xFFFFFFFF when the header has none
  colTid: usize = 0; // u32, 0xFFFFFFFF when the header has none
  colPayloadOffset: usize = 0; // u32 address of the user data in linear memory
  colPayloadLength: usize = 0; // u16
  colHeaderLength: usize = 0; // u16 bytes from record start to user data
  colProvider: usize = 0; // u16 index into the provider table
  colEventId: usize = 0; // u16
  colTask: usize = 0; // u16
  colFlags: usize = 0; // u16 header flags (low 12 bits) | decoder status (high 4 bits)
  colProcessor: usize = 0; // u16
  colVersion: usize = 0; // u16
  colOpcode: usize = 0; // u8
  colLevel: usize = 0; // u8
  colHeaderType: usize = 0; // u8
  colChannel: usize = 0; // u8
  colEventType: usize = 0; // u16 index into the event type table (eventtypes.ts)
  fixedBlock: usize = 0; // the fixed columns' block (tables.ts FIXED_*); 0: the columns are blocks of their own
  // extended data items (EVENT_HEADER), struct of arrays; rows ascend
  extCount: u32 = 0;
  extCap: u32 = 0;
  colExtRow: usize = 0; // u32 event row
  colExtType: usize = 0; // u16 EVENT_HEADER_EXT_TYPE_*
  colExtSize: usize = 0; // u16 data bytes
  colExtOffset: usize = 0; // u32 address of the item data
  // buffer table: BUF_STRIDE-byte structs (B_* offsets)
  bufCount: u32 = 0;
  bufCap: u32 = 0;
  bufTable: usize = 0;
  // warnings: WARN_STRIDE-byte structs, the first MAX_WARNINGS kept, all counted
  warnCount: u32 = 0;
  warnTotal: u32 = 0;
  warnTable: usize = 0;
  filterFlags: u32 = 0; // FF_* bits in force (the block is memory-access.ts FILTER_BLOCK); 0: every row is kept
  // window budget and arena (tables.ts)
  arenaList: usize = 0; // (u32 start, u32 used) per block in use this window, ARENA_LIST_MAX of them
  arenaBlocks: usize = 0; // every block, in use or not: (u32 start, u32 size), ARENA_LIST_MAX of them
  arenaBlockCount: u32 = 0; // blocks allocated
  arenaInUse: u32 = 0; // blocks of the list in use this window
  windowWant: usize = MIN_WINDOW; // the record budget of a window
  windowRecords: usize = 0; // bytes of records taken in this window
  windowFull: bool = false;
  arenaBytes: f64 = 0; // records taken, every window (8-aligned)
  // windows: the rows of a run of buffers, handed to the bindings before the next run is decoded
  bufBase: u32 = 0; // buffers of the windows before this one
  rowBase: f64 = 0; // rows of the windows before this one
  // typed tables: the directory (CLR_DIR_*) of a block per schema event
  clrDir: usize = 0;
  clrTypes: u32 = 0;
  clrRows: u32 = 0; // rows placed in this window
  clrMissing: u32 = 0; // rows that found no memory, in this window
  clrOn: bool = false; // the typed tables are on (clr.ts setClr)
  // ---- clr.ts: the field program and lookups, in memory the bindings placed (setClr) ----
  clrProgram: usize = 0;
  clrStarts: usize = 0; // u32 per schema event: its first word in the program
  clrLookup: usize = 0; // i16 per (CLR provider, id < CLR_MAX_ID, version < CLR_VERSIONS): schema event, -1 none
  clrGuids: usize = 0; // 16 bytes per CLR provider, in memory order
  clrGuidCount: u32 = 0;
  clrScope: usize = 0; // the values of the fields of the scope being walked (u64 per field, CLR_SCOPE_VALUES per depth)
  clrTruncated: bool = false; // the field walk met the payload's end
  // ---- providers.ts: the provider table, PROV_STRIDE-byte entries, and its hash index ----
  provCount: u32 = 0;
  provCap: u32 = 0;
  provTable: usize = 0;
  provSlots: usize = 0; // u32 per slot: provider index + 1, 0 = empty
  provMask: u32 = 0;
  provLast: i32 = -1; // index of the last lookup (its GUID at providers.ts PROV_LAST), -1: none
  // ---- eventtypes.ts: the event type table, TYPE_STRIDE-byte entries, and its hash index ----
  typeCount: u32 = 0;
  typeCap: u32 = 0;
  typeTable: usize = 0;
  typeSlots: usize = 0; // u32 per slot: type index + 1, 0 = empty (the record walks make the first probe)
  typeMask: u32 = 0;
  // ---- buffers.ts: the buffer walk ----
  wantBytes: u32 = 0; // bytes the next buffer needs at the front of the unconsumed input
  done: bool = false;
  fatalCode: u32 = 0;
  fatalOffset: f64 = 0;
  resyncing: bool = false; // scanning for the next buffer after damage
  resyncFrom: f64 = 0;
  resyncNonZero: bool = false;
  compressionFormat: u32 = COMPRESSION_XPRESS;
  // ---- records.ts ----
  walkAbandoned: bool = false; // the last walk stopped before the end of its buffer's records
  walkFileOffset: f64 = 0; // the buffer being walked, for warnings
  walkBuffer: i32 = 0;
  walkTsAt: usize = 0; // address of the timestamp the next record without one inherits (walkFast hands it back)
  // typed rows on their way to their tables (records.ts noteTyped): a bucket of row indices per schema
  // event met since the last fill
  bucketRows: usize = 0; // TYPED_SLOTS buckets of TYPED_BUCKET u32 row indices
  bucketOf: usize = 0; // u16 per schema event: its slot + 1, 0: none
  bucketType: usize = 0; // u16 schema event of each slot
  bucketFill: usize = 0; // u32 rows in each slot's bucket
  bucketsUsed: u32 = 0;
  typedDelta: u32 = 0; // added to the references of the typed rows the buckets fill (fillPlacedRows)
}

/** The initial values of the fields that do not start at zero (the WebAssembly core's struct is zeroed first). */
export function resetState(m: SharedState): void {
  m.windowWant = MIN_WINDOW;
  m.provLast = -1;
  m.compressionFormat = COMPRESSION_XPRESS;
}
