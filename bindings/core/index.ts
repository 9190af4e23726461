// Pure TypeScript decoder core: the same algorithm and table layout as the WebAssembly core
// (assembly/), over an ArrayBuffer that stands in for linear memory. Addresses are byte offsets
// into that buffer; it grows by allocating a larger one and copying, so views are re-taken after
// anything that may allocate. 64-bit values are moved as two 32-bit halves (no BigInt on the
// per-record path), and the record walk reads and writes through typed arrays: records start
// 8-aligned in the arena, and every column is 8-aligned.

import type { CoreExports } from "../decode/loader.js";
import {
  W_BAD_BUFFER_SIZE, W_SKIPPED_BYTES, W_TRUNCATED_BUFFER, W_BAD_FILL_OFFSET, W_DECOMPRESS_FAILED,
  W_UNSUPPORTED_COMPRESSION, W_TRAILING_GARBAGE, W_CAPACITY, W_HEADER_BUFFER_TYPE, W_BUFFER0_COMPRESSED,
  W_RECORD_SIZE_ZERO, W_RECORD_TOO_SMALL, W_RECORD_OVERRUNS, W_OPAQUE_RECORD, W_CORRUPT_MARKER,
  W_EXT_ITEMS_MALFORMED, W_MESSAGE_TRUNCATED, W_LOGFILE_HEADER_SHORT, W_POINTER_SIZE_MISMATCH,
  E_TOO_SHORT, E_BAD_FIRST_BUFFER, E_NO_LOGFILE_HEADER,
  F_NO_PROCESS_INFO, F_TIMESTAMP_INHERITED, F_EXT_MALFORMED, F_OPAQUE, F_HEADER_FLAGS_MASK,
  BS_TRUNCATED, BS_SKIPPED, BS_COMPRESSED, BS_ABANDONED, HT_MESSAGE, HT_EVENT_HEADER32, HT_EVENT_HEADER64,
  PK_GUID, PK_KERNEL_GROUP, PK_NONE,
  LH_PRESENT, LH_BUFFER_SIZE, LH_VERSION, LH_PROVIDER_VERSION, LH_NUMBER_OF_PROCESSORS, LH_TIMER_RESOLUTION,
  LH_MAXIMUM_FILE_SIZE, LH_LOG_FILE_MODE, LH_BUFFERS_WRITTEN, LH_START_BUFFERS, LH_POINTER_SIZE, LH_EVENTS_LOST,
  LH_CPU_SPEED, LH_RESERVED_FLAGS, LH_BUFFERS_LOST, LH_RECORD_POINTER_SIZE, LH_END_TIME, LH_BOOT_TIME,
  LH_PERF_FREQ, LH_START_TIME, LH_HEADER_TIMESTAMP, LH_TIME_ZONE, LH_LOGGER_NAME, LH_LOGGER_NAME_CHARS,
  LH_LOG_FILE_NAME, LH_LOG_FILE_NAME_CHARS, LH_SIZE,
  T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_U64, T_I64, T_F32, T_F64, T_BOOL, T_PTR, T_GUID, T_FILETIME,
  T_SYSTEMTIME, T_USTR, T_ASTR, T_BINARY, T_STRUCT,
  BUFFER_HEADER_SIZE, MAX_BUFFER, BUFFER_FLAG_COMPRESSED, BUFFER_FLAG_PROCESSOR_INDEX, LOG_FILE_MODE_COMPRESSED,
  COMPRESSION_XPRESS, MEMORY_MAX_PAGES, MAX_BLOCK, MAX_ROWS, MAX_SEGMENT, FIRST_SEGMENT, MAX_EXT_ITEMS, MAX_WARNINGS,
  MAX_PROVIDERS, DIR_SLOTS, DIR_ROW_COUNT, DIR_TIMESTAMP, DIR_KEYWORDS, DIR_PID, DIR_TID, DIR_PAYLOAD_OFFSET,
  DIR_PAYLOAD_LENGTH, DIR_HEADER_LENGTH, DIR_PROVIDER, DIR_EVENT_ID, DIR_TASK, DIR_FLAGS, DIR_PROCESSOR, DIR_VERSION,
  DIR_OPCODE, DIR_LEVEL, DIR_HEADER_TYPE, DIR_CHANNEL, DIR_EXT_COUNT, DIR_EXT_ROW, DIR_EXT_TYPE, DIR_EXT_SIZE,
  DIR_EXT_OFFSET, DIR_BUF_COUNT, DIR_BUF_TABLE, DIR_WARN_COUNT, DIR_WARN_TOTAL, DIR_WARN_TABLE, DIR_PROV_COUNT,
  DIR_PROV_TABLE, DIR_LOGFILE, BUF_STRIDE, B_FILE_OFFSET, B_SEQUENCE, B_TIMESTAMP, B_FIRST_ROW, B_ROW_COUNT, B_DATA,
  B_DATA_LENGTH, B_BUFFER_SIZE, B_SAVED_OFFSET, B_FILLED, B_PROCESSOR, B_LOGGER_ID, B_FLAGS, B_TYPE, B_STATUS,
  B_RAW_PROCESSOR, WARN_STRIDE, WARN_FILE_OFFSET, WARN_CODE, WARN_BUFFER, WARN_RECORD_OFFSET, WARN_DETAIL,
  PROV_STRIDE, PROV_GUID, PROV_GROUP, PROV_KIND, CLR_DIR_STRIDE, CLR_DIR_COUNT, CLR_DIR_BLOCK, CLR_DIR_CURSOR,
  CLR_MAX_ID, CLR_VERSIONS, CLR_STATUS_TRUNCATED, TIME_ZONE_BYTES,
} from "../../assembly/codes.js";

const HDR = BUFFER_HEADER_SIZE;
const NONE32 = 0xffffffff;
const NONE16 = 0xffff;

// ---- fixed addresses: the static data of the WebAssembly module ----
const DIR = 64; // DIR_SLOTS u32 slots
const LOGFILE = (DIR + 4 * DIR_SLOTS + 63) & ~63; // LH_SIZE bytes
const HEAP_BASE = (LOGFILE + LH_SIZE + 63) & ~63;
const INITIAL_MEMORY = 1 << 20;
const MEMORY_LIMIT = MEMORY_MAX_PAGES * 65536 - 65536; // addresses are u32
const TWO32 = 4294967296;

// Conventional GUIDs of the classic kernel groups, by group byte.
const KERNEL_GROUPS: readonly string[] = [
  "68fdd900-4a3e-11d1-84f4-0000f80464e3", // 0x00 EventTrace
  "3d6fa8d4-fe05-11d0-9dda-00c04fd7ba7c", // 0x01 DiskIo
  "3d6fa8d3-fe05-11d0-9dda-00c04fd7ba7c", // 0x02 PageFault
  "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c", // 0x03 Process
  "90cbdc39-4a3e-11d1-84f4-0000f80464e3", // 0x04 FileIo
  "3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c", // 0x05 Thread
  "9a280ac0-c8e0-11d1-84e2-00c04fb998a2", // 0x06 TcpIp
  "3282fc76-feed-498e-8aa7-e70f459d430e", // 0x07 Job
  "bf3a50c5-a9c9-4988-a005-2df0b7c80f80", // 0x08 UdpIp
  "ae53722e-c863-11d2-8659-00c04fa321a1", // 0x09 Registry
  "13976d09-a327-438c-950b-7f03192815c7", // 0x0a DbgPrint
  "01853a65-418f-4f36-aefc-dc0f1d2fd235", // 0x0b EventTraceConfig
  "99134383-5248-43fc-834b-529454e75df3", // 0x0c Spare1 / LBR
  "42695762-ea50-497a-9068-5cbbb35e0b95", // 0x0d Wnf
  "0268a8b6-74fd-4302-9dd0-6e8f1795c0cf", // 0x0e Pool
  "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc", // 0x0f PerfInfo
  "222962ab-6180-4b88-a825-346b75f2a24a", // 0x10 Heap
  "89497f50-effe-4440-8cf2-ce6b1cdcaca7", // 0x11 Object
  "e43445e0-0903-48c3-b878-ff0fccebdd04", // 0x12 Power
  "a9152f00-3f58-4bee-92a1-70c7d079d5dd", // 0x13 ModBound
  "2cb15d1d-5fc1-11d2-abe1-00a0c911f518", // 0x14 ImageLoad
  "b2d14872-7c5b-463d-8419-ee9bf7d23e04", // 0x15 Dpc
  "7687a439-f752-45b8-b741-321aec0f8df9", // 0x16 Cc
  "3ac66736-cc59-4cff-8115-8df50e39816b", // 0x17 CritSec
  "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3", // 0x18 StackWalk
  "9aec974b-5b8e-4118-9b92-3186d8002ce5", // 0x19 Ums
  "45d8cccd-539f-4b72-a8b7-5c683142609a", // 0x1a ALPC
  "d837ca92-12b9-44a5-ad6a-3a65b3578aa8", // 0x1b SplitIo
  "c861d0e2-a2c1-4d36-9f9c-970bab943a12", // 0x1c ThreadPool
  "7f2a405c-69b5-4bf9-a1f5-30e8f1afab5e", // 0x1d Hypervisor
  "2ce9a149-effe-42f0-a635-a1d39e26c8f2", // 0x1e HypervisorX
];

/** The GUID's 16 bytes in memory order, as four little-endian u32 words. */
function guidWords(text: string, out: Uint32Array, at: number): void {
  const h = text.replace(/-/g, "");
  const byte = (i: number) => parseInt(h.slice(i * 2, i * 2 + 2), 16);
  const bytes = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15].map(byte);
  for (let k = 0; k < 4; k++) {
    out[at + k] = (bytes[k * 4] | (bytes[k * 4 + 1] << 8) | (bytes[k * 4 + 2] << 16) | (bytes[k * 4 + 3] << 24)) >>> 0;
  }
}

const GROUP_GUIDS = new Uint32Array(32 * 4);
KERNEL_GROUPS.forEach((g, i) => guidWords(g, GROUP_GUIDS, i * 4));

/** f64 -> u32 as the WebAssembly core converts it (saturating truncation). */
function satU32(x: number): number {
  if (!(x > 0)) return 0;
  return x >= TWO32 ? NONE32 : Math.floor(x);
}

/** `n` rounded up to a multiple of 8; sizes may pass 2^31, beyond the bitwise operators. */
function alignSize(n: number): number {
  return n + (-n & 7);
}

function fixedSize(kind: number, ptr: number): number {
  if (kind === T_U8 || kind === T_I8) return 1;
  if (kind === T_U16 || kind === T_I16) return 2;
  if (kind === T_U32 || kind === T_I32 || kind === T_BOOL || kind === T_F32) return 4;
  if (kind === T_U64 || kind === T_I64 || kind === T_F64 || kind === T_FILETIME) return 8;
  if (kind === T_PTR) return ptr;
  if (kind === T_GUID || kind === T_SYSTEMTIME) return 16;
  return 0;
}

/**
 * The core. One instance decodes one trace; its methods are shared by every instance, so the
 * engine's optimized code carries over from one trace to the next.
 */
class JsCore implements CoreExports {

  // ================= memory =================
  u8 = new Uint8Array(0);
  u16 = new Uint16Array(0);
  u32 = new Uint32Array(0);
  f64 = new Float64Array(0);
  dv = new DataView(new ArrayBuffer(0));
  readonly memory: { buffer: ArrayBuffer } = { buffer: new ArrayBuffer(0) };
  top = HEAP_BASE; // bump pointer, 8-aligned
  /** Highest address ever handed out: memory above it has never been written and is zero. */
  highWater = HEAP_BASE;

  private setBuffer(b: ArrayBuffer): void {
    this.memory.buffer = b;
    this.u8 = new Uint8Array(b);
    this.u16 = new Uint16Array(b);
    this.u32 = new Uint32Array(b);
    this.f64 = new Float64Array(b);
    this.dv = new DataView(b);
  }

  /** Makes the memory at least `end` bytes long, keeping the bytes in use; false when it cannot grow. */
  private reserveMemory(end: number): boolean {
    if (end <= this.u8.length) return true;
    if (end > MEMORY_LIMIT) return false;
    // Grow fourfold: every growth copies the bytes in use, while pages of the new buffer cost
    // nothing until they are written.
    let cap = this.u8.length;
    while (cap < end) cap = Math.min(cap * 4, MEMORY_LIMIT);
    let next: ArrayBuffer;
    try {
      next = new ArrayBuffer(cap);
    } catch {
      // the platform refused that much: try the least that will do
      try {
        next = new ArrayBuffer(end);
      } catch {
        return false;
      }
    }
    new Uint8Array(next).set(this.u8.subarray(0, this.top));
    this.setBuffer(next);
    return true;
  }

  /** A block of `size` bytes, or 0 when memory is exhausted. Blocks carry their size in the 8 bytes before them. */
  alloc(size: number): number {
    const p = this.top + 8;
    const end = p + alignSize(size);
    if (!this.reserveMemory(end)) return 0;
    this.top = end;
    if (end > this.highWater) this.highWater = end;
    this.u32[(p - 8) >>> 2] = size;
    return p;
  }

  free(p: number): void {
    if (p !== 0 && p + alignSize(this.u32[(p - 8) >>> 2]) === this.top) this.top = p - 8;
  }

  /** realloc that also takes a null pointer; the last block grows in place. 0, the block left as it was, when memory is exhausted. */
  private resize(p: number, size: number): number {
    if (p === 0) return this.alloc(size);
    const old = this.u32[(p - 8) >>> 2];
    if (p + alignSize(old) === this.top) {
      const end = p + alignSize(size);
      if (!this.reserveMemory(end)) return 0;
      this.top = end;
      if (end > this.highWater) this.highWater = end;
      this.u32[(p - 8) >>> 2] = size;
      return p;
    }
    const q = this.alloc(size);
    if (q !== 0) this.u8.copyWithin(q, p, p + Math.min(old, size));
    return q;
  }

  // ================= tables (assembly/tables.ts) =================
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

  private ensureRows(extra: number): boolean {
    const need = this.rowCount + extra;
    if (need <= this.rowCap) return true;
    if (need > MAX_ROWS) return false;
    let cap = Math.max(this.rowCap * 2, Math.max(need, 4096));
    if (cap > MAX_ROWS) cap = MAX_ROWS;
    // A column that grew before one that could not is merely larger than rowCap.
    let p: number;
    if ((p = this.resize(this.colTimestamp, cap * 8)) === 0) return false; this.colTimestamp = p;
    if ((p = this.resize(this.colKeywords, cap * 8)) === 0) return false; this.colKeywords = p;
    if ((p = this.resize(this.colPid, cap * 4)) === 0) return false; this.colPid = p;
    if ((p = this.resize(this.colTid, cap * 4)) === 0) return false; this.colTid = p;
    if ((p = this.resize(this.colPayloadOffset, cap * 4)) === 0) return false; this.colPayloadOffset = p;
    if ((p = this.resize(this.colPayloadLength, cap * 2)) === 0) return false; this.colPayloadLength = p;
    if ((p = this.resize(this.colHeaderLength, cap * 2)) === 0) return false; this.colHeaderLength = p;
    if ((p = this.resize(this.colProvider, cap * 2)) === 0) return false; this.colProvider = p;
    if ((p = this.resize(this.colEventId, cap * 2)) === 0) return false; this.colEventId = p;
    if ((p = this.resize(this.colTask, cap * 2)) === 0) return false; this.colTask = p;
    if ((p = this.resize(this.colFlags, cap * 2)) === 0) return false; this.colFlags = p;
    if ((p = this.resize(this.colProcessor, cap * 2)) === 0) return false; this.colProcessor = p;
    if ((p = this.resize(this.colVersion, cap * 2)) === 0) return false; this.colVersion = p;
    if ((p = this.resize(this.colOpcode, cap)) === 0) return false; this.colOpcode = p;
    if ((p = this.resize(this.colLevel, cap)) === 0) return false; this.colLevel = p;
    if ((p = this.resize(this.colHeaderType, cap)) === 0) return false; this.colHeaderType = p;
    if ((p = this.resize(this.colChannel, cap)) === 0) return false; this.colChannel = p;
    this.rowCap = cap;
    return true;
  }

  extCount = 0;
  extCap = 0;
  colExtRow = 0;
  colExtType = 0;
  colExtSize = 0;
  colExtOffset = 0;

  private ensureExt(extra: number): boolean {
    const need = this.extCount + extra;
    if (need <= this.extCap) return true;
    if (need > MAX_ROWS) return false;
    const cap = Math.max(this.extCap * 2, Math.max(need, 256));
    let p: number;
    if ((p = this.resize(this.colExtRow, cap * 4)) === 0) return false; this.colExtRow = p;
    if ((p = this.resize(this.colExtType, cap * 2)) === 0) return false; this.colExtType = p;
    if ((p = this.resize(this.colExtSize, cap * 2)) === 0) return false; this.colExtSize = p;
    if ((p = this.resize(this.colExtOffset, cap * 4)) === 0) return false; this.colExtOffset = p;
    this.extCap = cap;
    return true;
  }

  bufCount = 0;
  bufCap = 0;
  bufTable = 0;

  private addBuffer(): number {
    if (this.bufCount >= this.bufCap) {
      const cap = Math.max(this.bufCap * 2, 64);
      if (cap * BUF_STRIDE > MAX_BLOCK) return 0;
      const t = this.resize(this.bufTable, cap * BUF_STRIDE);
      if (t === 0) return 0;
      this.bufTable = t;
      this.bufCap = cap;
    }
    const p = this.bufTable + this.bufCount * BUF_STRIDE;
    this.u8.fill(0, p, p + BUF_STRIDE);
    this.bufCount++;
    return p;
  }

  warnCount = 0;
  warnTotal = 0;
  warnTable = 0;

  private warn(code: number, fileOffset: number, buffer: number, recordOffset: number, detail: number): void {
    this.warnTotal++;
    if (this.warnCount >= MAX_WARNINGS) return;
    if (this.warnTable === 0) {
      this.warnTable = this.alloc(MAX_WARNINGS * WARN_STRIDE);
      if (this.warnTable === 0) return; // counted, not kept
    }
    const p = this.warnTable + this.warnCount * WARN_STRIDE;
    this.u8.fill(0, p, p + WARN_STRIDE);
    this.f64[(p + WARN_FILE_OFFSET) >>> 3] = fileOffset;
    this.u32[(p + WARN_CODE) >>> 2] = code;
    this.u32[(p + WARN_BUFFER) >>> 2] = buffer; // i32, stored modulo 2^32
    this.u32[(p + WARN_RECORD_OFFSET) >>> 2] = recordOffset;
    this.u32[(p + WARN_DETAIL) >>> 2] = detail;
    this.warnCount++;
  }

  segStart = 0;
  segUsed = 0;
  segSize = 0;
  nextSegSize = FIRST_SEGMENT;
  arenaUsed = 0;

  private arenaReserve(n: number): number {
    const need = alignSize(n);
    if (this.segStart === 0 || this.segUsed + need > this.segSize) {
      const size = Math.max(this.nextSegSize, need);
      if (this.nextSegSize < MAX_SEGMENT) this.nextSegSize *= 2;
      const p = size > MAX_BLOCK ? 0 : this.alloc(size);
      if (p === 0) {
        this.warn(W_CAPACITY, -1, -1, -1, n);
        return 0;
      }
      this.segStart = p;
      this.segSize = size;
      this.segUsed = 0;
    }
    return this.segStart + this.segUsed;
  }

  private arenaCommit(n: number): void {
    const used = alignSize(n);
    this.segUsed += used;
    this.arenaUsed += used;
  }

  // ================= providers (assembly/providers.ts) =================
  provCount = 0;
  provCap = 0;
  provTable = 0;
  // The hash index lives outside linear memory: only the provider table is part of the output.
  hashSlots = new Uint32Array(0); // provider index + 1, 0 = empty
  hashMask = 0;
  last0 = 0;
  last1 = 0;
  last2 = 0;
  last3 = 0;
  lastIndex = -1;
  readonly groupIndex = new Int32Array(256);

  private initProviders(): void {
    this.provCount = 0;
    this.lastIndex = -1;
    this.groupIndex.fill(-1);
  }

  private hashOf(g0: number, g1: number, g2: number, g3: number): number {
    let h = Math.imul(g0 ^ Math.imul(g1, 0x9e3779b1), 0x85ebca6b) ^ Math.imul(g2 ^ Math.imul(g3, 0xc2b2ae35), 0x27d4eb2f);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    return (h ^ (h >>> 13)) >>> 0;
  }

  private insertSlot(g0: number, g1: number, g2: number, g3: number, index: number): void {
    let s = this.hashOf(g0, g1, g2, g3) & this.hashMask;
    while (this.hashSlots[s] !== 0) s = (s + 1) & this.hashMask;
    this.hashSlots[s] = index + 1;
  }

  /** Moves the index to `size` slots. It lives outside linear memory: it always fits. */
  private rehash(size: number): boolean {
    this.hashSlots = new Uint32Array(size);
    this.hashMask = size - 1;
    for (let i = 0; i < this.provCount; i++) {
      const w = (this.provTable + i * PROV_STRIDE + PROV_GUID) >>> 2;
      this.insertSlot(this.u32[w], this.u32[w + 1], this.u32[w + 2], this.u32[w + 3], i);
    }
    return true;
  }

  private addProvider(g0: number, g1: number, g2: number, g3: number, group: number, kind: number): number {
    if (this.provCount >= MAX_PROVIDERS) return -1;
    if (this.provCount >= this.provCap) {
      const cap = Math.max(this.provCap * 2, 64);
      const t = this.resize(this.provTable, cap * PROV_STRIDE);
      if (t === 0) return -1;
      this.provTable = t;
      this.provCap = cap;
    }
    // Keep the index under half full: grow it before the entry goes in.
    if (this.hashSlots.length === 0) { if (!this.rehash(256)) return -1; }
    else if ((this.provCount + 1) * 2 > this.hashMask && !this.rehash((this.hashMask + 1) * 2)) return -1;
    const i = this.provCount++;
    const p = this.provTable + i * PROV_STRIDE;
    this.u8.fill(0, p, p + PROV_STRIDE);
    const w = (p + PROV_GUID) >>> 2;
    this.u32[w] = g0;
    this.u32[w + 1] = g1;
    this.u32[w + 2] = g2;
    this.u32[w + 3] = g3;
    this.u16[(p + PROV_GROUP) >>> 1] = group;
    this.u8[p + PROV_KIND] = kind;
    this.insertSlot(g0, g1, g2, g3, i);
    return i;
  }

  /** Index of the provider with this GUID (four little-endian words), added on first sight. */
  private providerByGuid(g0: number, g1: number, g2: number, g3: number, kind: number, group: number): number {
    if (this.lastIndex >= 0 && g0 === this.last0 && g1 === this.last1 && g2 === this.last2 && g3 === this.last3) return this.lastIndex;
    let found = -1;
    if (this.hashSlots.length !== 0) {
      const table = this.u32;
      let s = this.hashOf(g0, g1, g2, g3) & this.hashMask;
      for (;;) {
        const v = this.hashSlots[s];
        if (v === 0) break;
        const w = (this.provTable + (v - 1) * PROV_STRIDE + PROV_GUID) >>> 2;
        if (table[w] === g0 && table[w + 1] === g1 && table[w + 2] === g2 && table[w + 3] === g3) {
          found = v - 1;
          break;
        }
        s = (s + 1) & this.hashMask;
      }
    }
    if (found < 0) found = this.addProvider(g0, g1, g2, g3, group, kind);
    if (found >= 0) {
      this.last0 = g0;
      this.last1 = g1;
      this.last2 = g2;
      this.last3 = g3;
      this.lastIndex = found;
    }
    return found;
  }

  private providerByHook(hookId: number): number {
    let group = hookId >>> 8;
    if (hookId === 0x030a) group = 0x14;
    const cached = this.groupIndex[group];
    if (cached >= 0) return cached;
    let g0 = 0, g1 = 0, g2 = 0, g3 = 0;
    if (group < 32) {
      g0 = GROUP_GUIDS[group * 4];
      g1 = GROUP_GUIDS[group * 4 + 1];
      g2 = GROUP_GUIDS[group * 4 + 2];
      g3 = GROUP_GUIDS[group * 4 + 3];
    }
    if ((g0 | g1 | g2 | g3) === 0) {
      // Unknown group: a private identity (hi = group << 56, lo = all ones).
      g0 = NONE32;
      g1 = NONE32;
      g2 = 0;
      g3 = (group << 24) >>> 0;
    }
    const i = this.providerByGuid(g0, g1, g2, g3, PK_KERNEL_GROUP, group);
    if (i >= 0) this.groupIndex[group] = i;
    return i;
  }

  private providerNone(): number {
    return this.providerByGuid(0, 0, 0, 0, PK_NONE, NONE16);
  }

  // ================= XPRESS (assembly/xpress.ts) =================
  xpressProduced = 0;

  private xpressDecompress(src: number, srcLen: number, dst: number, expected: number): boolean {
    const m = this.u8;
    let ip = src;
    const iend = src + srcLen;
    let op = dst;
    const oend = dst + expected;
    let flags = 0;
    let flagCount = 0;
    let halfByte = -1; // position of the shared length nibble byte, -1 when none pending
    let ok = true;
    while (op < oend) {
      if (flagCount === 0) {
        if (ip + 4 > iend) { ok = false; break; }
        flags = m[ip] | (m[ip + 1] << 8) | (m[ip + 2] << 16) | (m[ip + 3] << 24);
        ip += 4;
        flagCount = 32;
      }
      flagCount--;
      if (((flags >>> flagCount) & 1) === 0) {
        if (ip >= iend) { ok = false; break; }
        m[op++] = m[ip++];
        continue;
      }
      if (ip + 2 > iend) { ok = false; break; }
      const token = m[ip] | (m[ip + 1] << 8);
      ip += 2;
      let length = token & 7;
      const offset = (token >>> 3) + 1;
      if (length === 7) {
        if (halfByte < 0) {
          if (ip >= iend) { ok = false; break; }
          halfByte = ip;
          length = m[ip] & 0x0f;
          ip++;
        } else {
          length = m[halfByte] >>> 4;
          halfByte = -1;
        }
        if (length === 15) {
          if (ip >= iend) { ok = false; break; }
          length = m[ip];
          ip++;
          if (length === 255) {
            if (ip + 2 > iend) { ok = false; break; }
            length = m[ip] | (m[ip + 1] << 8);
            ip += 2;
            if (length === 0) {
              if (ip + 4 > iend) { ok = false; break; }
              length = (m[ip] | (m[ip + 1] << 8) | (m[ip + 2] << 16) | (m[ip + 3] << 24)) >>> 0;
              ip += 4;
            }
            // a length past 2^32 - 26 would wrap once the other parts are added: corrupt
            if (length < 22 || length > 0xffffffe6) { ok = false; break; }
            length -= 22;
          }
          length += 15;
        }
        length += 7;
      }
      length = (length + 3) >>> 0; // u32 arithmetic, as in the core
      if (offset > op - dst) { ok = false; break; }
      let n = length;
      if (n > oend - op) { n = oend - op; ok = false; }
      let from = op - offset;
      const stop = op + n;
      if (offset >= n && n > 32) {
        m.copyWithin(op, from, stop - offset);
        op = stop;
      } else {
        // Overlapping copy repeats the last `offset` bytes: four at a time when each four-byte
        // read lies wholly before the write position.
        if (offset >= 4) {
          const v = this.dv;
          while (op + 4 <= stop) {
            v.setUint32(op, v.getUint32(from, true), true);
            op += 4;
            from += 4;
          }
        }
        while (op < stop) m[op++] = m[from++];
      }
      if (!ok) break;
    }
    this.xpressProduced = op - dst;
    return ok && op === oend;
  }

  // ================= logfile header (assembly/logfile.ts) =================
  private utf16Length(p: number, end: number): number {
    let n = 0;
    while (p + 2 <= end && this.dv.getUint16(p, true) !== 0) { p += 2; n++; }
    return n;
  }

  private u32At(p: number, off: number, end: number): number {
    return p + off + 4 <= end ? this.dv.getUint32(p + off, true) : 0;
  }

  /** Copies an i64 field (0 when out of range) into the logfile struct. */
  private i64To(h: number, p: number, off: number, end: number): void {
    if (p + off + 8 <= end) {
      this.dv.setUint32(h, this.dv.getUint32(p + off, true), true);
      this.dv.setUint32(h + 4, this.dv.getUint32(p + off + 4, true), true);
    } else {
      this.dv.setUint32(h, 0, true);
      this.dv.setUint32(h + 4, 0, true);
    }
  }

  private parseLogfileHeader(payload: number, len: number, headerPointerSize: number, tsLo: number, tsHi: number, fileOffset: number): void {
    const h = LOGFILE;
    this.u8.fill(0, h, h + LH_SIZE);
    const end = payload + len;
    const stored = this.u32At(payload, 0x2c, end);
    let ptr = headerPointerSize;
    if ((stored === 4 || stored === 8) && stored !== ptr) {
      this.warn(W_POINTER_SIZE_MISMATCH, fileOffset, 0, HDR, stored);
      const fixedOther = stored === 8 ? 0x118 : 0x110;
      if (len >= fixedOther + 4) {
        const p = payload + fixedOther;
        const a = this.utf16Length(p, end);
        const b = this.utf16Length(p + ((a + 1) << 1), end);
        if (fixedOther + ((a + b + 2) << 1) === len) ptr = stored;
      }
    }
    const fixed = ptr === 8 ? 0x118 : 0x110;
    if (len < fixed) this.warn(W_LOGFILE_HEADER_SHORT, fileOffset, 0, HDR, len);
    const extra = ptr === 8 ? 8 : 0;
    const v = this.dv;
    v.setUint32(h + LH_PRESENT, Math.min(len, fixed), true);
    v.setUint32(h + LH_BUFFER_SIZE, this.u32At(payload, 0x00, end), true);
    v.setUint32(h + LH_VERSION, this.u32At(payload, 0x04, end), true);
    v.setUint32(h + LH_PROVIDER_VERSION, this.u32At(payload, 0x08, end), true);
    v.setUint32(h + LH_NUMBER_OF_PROCESSORS, this.u32At(payload, 0x0c, end), true);
    this.i64To(h + LH_END_TIME, payload, 0x10, end);
    v.setUint32(h + LH_TIMER_RESOLUTION, this.u32At(payload, 0x18, end), true);
    v.setUint32(h + LH_MAXIMUM_FILE_SIZE, this.u32At(payload, 0x1c, end), true);
    v.setUint32(h + LH_LOG_FILE_MODE, this.u32At(payload, 0x20, end), true);
    v.setUint32(h + LH_BUFFERS_WRITTEN, this.u32At(payload, 0x24, end), true);
    v.setUint32(h + LH_START_BUFFERS, this.u32At(payload, 0x28, end), true);
    v.setUint32(h + LH_POINTER_SIZE, stored, true);
    v.setUint32(h + LH_EVENTS_LOST, this.u32At(payload, 0x30, end), true);
    v.setUint32(h + LH_CPU_SPEED, this.u32At(payload, 0x34, end), true);
    v.setUint32(h + LH_RECORD_POINTER_SIZE, ptr, true);
    if (payload + 0x40 + extra + TIME_ZONE_BYTES <= end) v.setUint32(h + LH_TIME_ZONE, payload + 0x40 + extra, true);
    this.i64To(h + LH_BOOT_TIME, payload, 0xf0 + extra, end);
    this.i64To(h + LH_PERF_FREQ, payload, 0xf8 + extra, end);
    this.i64To(h + LH_START_TIME, payload, 0x100 + extra, end);
    v.setUint32(h + LH_RESERVED_FLAGS, this.u32At(payload, 0x108 + extra, end), true);
    v.setUint32(h + LH_BUFFERS_LOST, this.u32At(payload, 0x10c + extra, end), true);
    v.setUint32(h + LH_HEADER_TIMESTAMP, tsLo, true);
    v.setUint32(h + LH_HEADER_TIMESTAMP + 4, tsHi, true);
    if (len > fixed) {
      const p = payload + fixed;
      const a = this.utf16Length(p, end);
      v.setUint32(h + LH_LOGGER_NAME, p, true);
      v.setUint32(h + LH_LOGGER_NAME_CHARS, a, true);
      const q = p + ((a + 1) << 1);
      if (q < end) {
        v.setUint32(h + LH_LOG_FILE_NAME, q, true);
        v.setUint32(h + LH_LOG_FILE_NAME_CHARS, this.utf16Length(q, end), true);
      }
    }
  }

  // ================= record walk (assembly/records.ts) =================
  ctxFileOffset = 0;
  ctxBuffer = 0;
  walkAbandoned = false;

  private recordWarning(code: number, pos: number, detail: number): void {
    this.warn(code, this.ctxFileOffset, this.ctxBuffer, pos + HDR, detail);
  }

  /**
   * Walks `len` bytes of records at `base` (buffer offset 0x48), one row per record. Room for the
   * buffer's worst case is reserved by the caller; providers, extended items and warnings may
   * still allocate, after which the views are taken again.
   */
  private walkRecords(base: number, len: number, processor: number, bufTsLo: number, bufTsHi: number, fileOffset: number, bufferIndex: number): void {
    this.ctxFileOffset = fileOffset;
    this.ctxBuffer = bufferIndex;
    this.walkAbandoned = false;
    let lastLo = bufTsLo;
    let lastHi = bufTsHi;
    let U8 = this.u8, U16 = this.u16, U32 = this.u32;
    // Column addresses do not move during the walk (ensureRows ran before it).
    const iTs = this.colTimestamp >>> 2, iKw = this.colKeywords >>> 2, iPid = this.colPid >>> 2, iTid = this.colTid >>> 2;
    const iPay = this.colPayloadOffset >>> 2, iPl = this.colPayloadLength >>> 1, iHl = this.colHeaderLength >>> 1;
    const iProv = this.colProvider >>> 1, iId = this.colEventId >>> 1, iTask = this.colTask >>> 1, iFlags = this.colFlags >>> 1;
    const iProc = this.colProcessor >>> 1, iVer = this.colVersion >>> 1;
    const iOp = this.colOpcode, iLevel = this.colLevel, iHt = this.colHeaderType, iCh = this.colChannel;
    let r = this.rowCount;
    let pos = 0;
    while (pos + 4 <= len) {
      const rec = base + pos;
      const w = rec >>> 2;
      const h = rec >>> 1;
      const marker = U32[w];
      if (marker === 0xffffffff || marker === 0) break; // padding
      const remaining = len - pos;
      const b3 = marker >>> 24;
      const ht = (marker >>> 16) & 0xff;
      let size = 0;
      let hl = 0;
      let tsLo = lastLo, tsHi = lastHi;
      let kwLo = 0, kwHi = 0;
      let pid = NONE32, tid = NONE32;
      let prov = 0, eventId = 0, task = 0, flags = 0, version = 0, opcode = 0, level = 0, channel = 0;
      let rowType = ht;

      if ((b3 & 0xc0) === 0xc0 && ht !== 0) {
        if (ht <= 4 || ht === 0x10 || ht === 0x11) {
          // system family: SYSTEM (0x20), COMPACT (0x18), PERFINFO (0x10)
          const fixed = ht <= 2 ? 0x20 : ht <= 4 ? 0x18 : 0x10;
          if (remaining < 8) { this.recordWarning(W_RECORD_OVERRUNS, pos, remaining); break; }
          size = U16[h + 2];
          const ver = marker & 0xffff;
          hl = fixed + ((ver & 0x8000) !== 0 ? 8 : 0) + (((ver >>> 8) & 7) << 3);
          if (size === 0) { this.recordWarning(W_RECORD_SIZE_ZERO, pos, marker); break; }
          if (size < hl) { this.recordWarning(W_RECORD_TOO_SMALL, pos, size); break; }
          if (size > remaining) { this.recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
          const hook = U16[h + 3];
          let group = hook >>> 8;
          if (hook === 0x030a) group = 0x14;
          prov = this.groupIndex[group];
          if (prov < 0) {
            prov = this.providerByHook(hook);
            U8 = this.u8; U16 = this.u16; U32 = this.u32;
          }
          if (fixed === 0x10) {
            tsLo = U32[w + 2];
            tsHi = U32[w + 3];
            flags = F_NO_PROCESS_INFO;
          } else {
            tid = U32[w + 2];
            pid = U32[w + 3];
            tsLo = U32[w + 4];
            tsHi = U32[w + 5];
          }
          lastLo = tsLo;
          lastHi = tsHi;
          version = ver & 0xff;
          opcode = hook & 0xff;
        } else if (ht === 0x12 || ht === 0x13) {
          // EVENT_HEADER (0x50) with optional extended items
          size = marker & 0xffff;
          if (size === 0) { this.recordWarning(W_RECORD_SIZE_ZERO, pos, marker); break; }
          if (size < 0x50) { this.recordWarning(W_RECORD_TOO_SMALL, pos, size); break; }
          if (size > remaining) { this.recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
          flags = U16[h + 2] & F_HEADER_FLAGS_MASK;
          hl = 0x50;
          if ((flags & 1) !== 0) {
            // Items are inline: u16 item size, u16 type, u16 linkage bit, u16 data size, data, pad to 8.
            let n = 0;
            const firstExt = this.extCount;
            if (!this.ensureExt(MAX_EXT_ITEMS)) {
              flags |= F_EXT_MALFORMED;
            } else {
              U8 = this.u8; U16 = this.u16; U32 = this.u32;
              const iER = this.colExtRow >>> 2, iET = this.colExtType >>> 1, iES = this.colExtSize >>> 1, iEO = this.colExtOffset >>> 2;
              for (;;) {
                if (n >= MAX_EXT_ITEMS || hl + 8 > size) { flags |= F_EXT_MALFORMED; break; }
                const item = rec + hl;
                const ih = item >>> 1;
                const extType = U16[ih + 1];
                const link = U16[ih + 2];
                const dataSize = U16[ih + 3];
                if (hl + 8 + dataSize > size) { flags |= F_EXT_MALFORMED; break; }
                const e = firstExt + n;
                U32[iER + e] = r;
                U16[iET + e] = extType;
                U16[iES + e] = dataSize;
                U32[iEO + e] = item + 8;
                n++;
                hl += (8 + dataSize + 7) & ~7;
                if ((link & 1) === 0) break;
              }
              // The last stride may pad past the record end: user data is then empty.
              if (hl > size) hl = size;
              this.extCount = firstExt + n;
            }
            if ((flags & F_EXT_MALFORMED) !== 0) {
              this.recordWarning(W_EXT_ITEMS_MALFORMED, pos, n);
              U8 = this.u8; U16 = this.u16; U32 = this.u32;
            }
          }
          tsLo = U32[w + 4];
          tsHi = U32[w + 5];
          lastLo = tsLo;
          lastHi = tsHi;
          const g0 = U32[w + 6], g1 = U32[w + 7], g2 = U32[w + 8], g3 = U32[w + 9];
          if (this.lastIndex >= 0 && g0 === this.last0 && g1 === this.last1 && g2 === this.last2 && g3 === this.last3) prov = this.lastIndex;
          else {
            prov = this.providerByGuid(g0, g1, g2, g3, PK_GUID, NONE16);
            U8 = this.u8; U16 = this.u16; U32 = this.u32;
          }
          kwLo = U32[w + 12];
          kwHi = U32[w + 13];
          pid = U32[w + 3];
          tid = U32[w + 2];
          eventId = U16[h + 0x14];
          task = U16[h + 0x17];
          version = U8[rec + 0x2a];
          opcode = U8[rec + 0x2d];
          level = U8[rec + 0x2c];
          channel = U8[rec + 0x2b];
        } else if (ht === 0x0a || ht === 0x14 || ht === 0x0b || ht === 0x15) {
          // classic EVENT_TRACE_HEADER (0x30) and EVENT_INSTANCE_GUID_HEADER (0x48)
          hl = ht === 0x0a || ht === 0x14 ? 0x30 : 0x48;
          size = marker & 0xffff;
          if (size === 0) { this.recordWarning(W_RECORD_SIZE_ZERO, pos, marker); break; }
          if (size < hl) { this.recordWarning(W_RECORD_TOO_SMALL, pos, size); break; }
          if (size > remaining) { this.recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
          tsLo = U32[w + 4];
          tsHi = U32[w + 5];
          lastLo = tsLo;
          lastHi = tsHi;
          prov = this.providerByGuid(U32[w + 6], U32[w + 7], U32[w + 8], U32[w + 9], PK_GUID, NONE16);
          U8 = this.u8; U16 = this.u16; U32 = this.u32;
          pid = U32[w + 3];
          tid = U32[w + 2];
          version = U16[h + 3];
          opcode = U8[rec + 4];
          level = U8[rec + 5];
        } else {
          // TIMED, ERROR, WNODE and unknown layouts: Size at offset 0, kept whole as an opaque record.
          size = marker & 0xffff;
          if (size < 4) { this.recordWarning(W_RECORD_TOO_SMALL, pos, size); break; }
          if (size > remaining) { this.recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
          this.recordWarning(W_OPAQUE_RECORD, pos, ht);
          prov = this.providerNone();
          U8 = this.u8; U16 = this.u16; U32 = this.u32;
          flags = F_OPAQUE | F_NO_PROCESS_INFO | F_TIMESTAMP_INHERITED;
        }
      } else if ((b3 & 0xf0) === 0x90) {
        // WPP MESSAGE_TRACE_HEADER with optional fields in fixed order
        size = marker & 0xffff;
        if (size < 8) { this.recordWarning(size === 0 ? W_RECORD_SIZE_ZERO : W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { this.recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
        const options = U16[h + 3];
        hl = 8;
        flags = options & F_HEADER_FLAGS_MASK;
        prov = -1;
        let fits = true;
        if ((options & 0x01) !== 0) { if (hl + 4 <= size) hl += 4; else fits = false; }
        if (fits && (options & 0x02) !== 0) {
          if (hl + 16 <= size) {
            const g = (rec + hl) >>> 2;
            prov = this.providerByGuid(U32[g], U32[g + 1], U32[g + 2], U32[g + 3], PK_GUID, NONE16);
            U8 = this.u8; U16 = this.u16; U32 = this.u32;
            hl += 16;
          } else fits = false;
        } else if (fits && (options & 0x04) !== 0) {
          if (hl + 4 <= size) hl += 4; else fits = false;
        }
        let hasTs = false;
        if (fits && (options & 0x08) !== 0) {
          if (hl + 8 <= size) {
            const t = (rec + hl) >>> 2;
            tsLo = U32[t];
            tsHi = U32[t + 1];
            hl += 8;
            hasTs = true;
          } else fits = false;
        }
        let hasInfo = false;
        if (fits && (options & 0x20) !== 0) {
          if (hl + 8 <= size) {
            const t = (rec + hl) >>> 2;
            tid = U32[t];
            pid = U32[t + 1];
            hl += 8;
            hasInfo = true;
          } else fits = false;
        }
        if (!fits) this.recordWarning(W_MESSAGE_TRUNCATED, pos, options);
        if (prov < 0) prov = this.providerNone();
        U8 = this.u8; U16 = this.u16; U32 = this.u32;
        if (hasTs) { lastLo = tsLo; lastHi = tsHi; } else flags |= F_TIMESTAMP_INHERITED;
        if (!hasInfo) flags |= F_NO_PROCESS_INFO;
        eventId = U16[h + 2];
        rowType = HT_MESSAGE;
      } else if ((b3 & 0x80) !== 0) {
        // Unknown trace header: skip it whole when its size is plausible.
        size = marker & 0xffff;
        if (size < 4) { this.recordWarning(W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { this.recordWarning(W_RECORD_OVERRUNS, pos, size); break; }
        this.recordWarning(W_OPAQUE_RECORD, pos, marker);
        prov = this.providerNone();
        U8 = this.u8; U16 = this.u16; U32 = this.u32;
        flags = F_OPAQUE | F_NO_PROCESS_INFO | F_TIMESTAMP_INHERITED;
      } else {
        this.recordWarning(W_CORRUPT_MARKER, pos, marker);
        break;
      }

      // ---- the row ----
      U32[iTs + 2 * r] = tsLo;
      U32[iTs + 2 * r + 1] = tsHi;
      U32[iKw + 2 * r] = kwLo;
      U32[iKw + 2 * r + 1] = kwHi;
      U32[iPid + r] = pid;
      U32[iTid + r] = tid;
      U32[iPay + r] = rec + hl;
      U16[iPl + r] = size - hl;
      U16[iHl + r] = hl;
      U16[iProv + r] = prov;
      U16[iId + r] = eventId;
      U16[iTask + r] = task;
      U16[iFlags + r] = flags;
      U16[iProc + r] = processor;
      U16[iVer + r] = version;
      U8[iOp + r] = opcode;
      U8[iLevel + r] = level;
      U8[iHt + r] = rowType;
      U8[iCh + r] = channel;
      this.rowCount = ++r;
      pos += (size + 7) & ~7;
    }
    if (pos + 4 <= len) {
      const m = this.u32[(base + pos) >>> 2];
      this.walkAbandoned = m !== 0xffffffff && m !== 0;
    } else this.walkAbandoned = false;
  }

  // ================= buffer walk (assembly/buffers.ts) =================
  staging = 0;
  stagingSize = 0;
  want = 0;
  done = false;
  errCode = 0;
  errOffset = 0;
  resyncing = false;
  resyncFrom = 0;
  resyncNonZero = false;
  compressionFormat = COMPRESSION_XPRESS;

  private fatal(code: number, offset: number): void {
    this.errCode = code;
    this.errOffset = offset;
    this.done = true;
  }

  private outOfMemory(bytes: number): void {
    this.warn(W_CAPACITY, -1, -1, -1, bytes);
    this.done = true;
  }

  private stop(code: number, offset: number, detail: number): void {
    this.warn(code, offset, this.bufCount - 1, -1, detail);
    this.done = true;
  }

  private plausible(b: number, avail: number): boolean {
    const v = this.dv;
    const bs = v.getUint32(b, true);
    if (bs < HDR || bs > MAX_BUFFER) return false;
    const flags = v.getUint16(b + 0x34, true);
    if ((flags & 0xff80) !== 0) return false;
    if (v.getUint16(b + 0x36, true) > 8) return false;
    const saved = v.getUint32(b + 4, true);
    const filled = v.getUint32(b + 0x30, true);
    if ((flags & BUFFER_FLAG_COMPRESSED) !== 0) {
      return (filled >= HDR && filled <= MAX_BUFFER) || (saved >= HDR && saved <= MAX_BUFFER);
    }
    const end = filled >= HDR && filled <= bs ? filled : saved >= HDR && saved <= bs ? saved : 0;
    if (end === 0) return false;
    if (end === HDR) return true;
    if (avail < HDR + 4) return false;
    const m = v.getUint32(b + HDR, true);
    return m >>> 24 >= 0x80 && m !== 0xffffffff;
  }

  private processorOf(raw: number, flags: number): number {
    const n = this.u32[(LOGFILE + LH_NUMBER_OF_PROCESSORS) >>> 2];
    if ((flags & BUFFER_FLAG_PROCESSOR_INDEX) !== 0 && (raw & 0x7ff) < n) return raw & 0x7ff;
    return raw & 0xff;
  }

  private isLogfileHeaderRecord(data: number, len: number): boolean {
    if (len < 0x20) return false;
    const m = this.dv.getUint32(data, true);
    const ht = (m >>> 16) & 0xff;
    if (((m >>> 24) & 0xc0) !== 0xc0 || (ht !== 1 && ht !== 2)) return false;
    const size = this.dv.getUint16(data + 4, true);
    return size >= 0x20 && size <= len && this.dv.getUint16(data + 6, true) === 0;
  }

  private firstRecordSound(p: number, len: number): boolean {
    if (len < 4) return true;
    const m = this.dv.getUint32(p, true);
    if (m === 0xffffffff) return true;
    const b3 = m >>> 24;
    const ht = (m >>> 16) & 0xff;
    let size = 0;
    let min = 0;
    if ((b3 & 0xc0) === 0xc0) {
      if (len < 8) return false;
      if (ht === 1 || ht === 2) { size = this.dv.getUint16(p + 4, true); min = 0x20; }
      else if (ht === 3 || ht === 4) { size = this.dv.getUint16(p + 4, true); min = 0x18; }
      else if (ht === 0x10 || ht === 0x11) { size = this.dv.getUint16(p + 4, true); min = 0x10; }
      else if (ht === 0x12 || ht === 0x13) { size = m & 0xffff; min = 0x50; }
      else if (ht === 0x0a || ht === 0x14) { size = m & 0xffff; min = 0x30; }
      else if (ht === 0x0b || ht === 0x15) { size = m & 0xffff; min = 0x48; }
      else return false;
    } else if ((b3 & 0xf0) === 0x90) { size = m & 0xffff; min = 8; }
    else return false;
    return size >= min && size <= len;
  }

  private processBuffer(b: number, bs: number, avail: number, off: number, tentative: boolean): boolean {
    const index = this.bufCount;
    let v = this.dv;
    const flags = v.getUint16(b + 0x34, true);
    const type = v.getUint16(b + 0x36, true);
    const saved = v.getUint32(b + 4, true);
    const filled = v.getUint32(b + 0x30, true);
    const tsLo = v.getUint32(b + 0x10, true);
    const tsHi = v.getUint32(b + 0x14, true);
    const rawProc = v.getUint16(b + 0x28, true);
    const truncated = avail < bs;
    if (tentative && truncated) return false;
    let status = truncated ? BS_TRUNCATED : 0;
    let problem = 0;
    let problemDetail = 0;

    let data = 0;
    let dlen = 0;
    if ((flags & BUFFER_FLAG_COMPRESSED) === 0) {
      let end = filled >= HDR && filled <= bs ? filled : saved >= HDR && saved <= bs ? saved : 0;
      if (end === 0) {
        if (tentative) return false;
        problem = W_BAD_FILL_OFFSET;
        problemDetail = filled;
        end = bs;
      }
      if (end > avail) end = avail;
      dlen = end - HDR;
      if (tentative && !this.firstRecordSound(b + HDR, dlen)) return false;
      data = this.arenaReserve(dlen);
      if (data === 0) { this.done = true; return true; }
      this.u8.copyWithin(data, b + HDR, b + HDR + dlen);
    } else {
      status |= BS_COMPRESSED;
      const expected = filled >= HDR && filled <= MAX_BUFFER ? filled - HDR
        : saved >= HDR && saved <= MAX_BUFFER ? saved - HDR : NONE32;
      if (this.compressionFormat !== COMPRESSION_XPRESS) {
        if (tentative) return false;
        problem = W_UNSUPPORTED_COMPRESSION;
        problemDetail = this.compressionFormat;
        status |= BS_SKIPPED;
      } else if (expected === NONE32) {
        if (tentative) return false;
        problem = W_BAD_FILL_OFFSET;
        problemDetail = filled;
        status |= BS_SKIPPED;
      } else {
        data = this.arenaReserve(expected);
        if (data === 0) { this.done = true; return true; }
        if (this.xpressDecompress(b + HDR, avail - HDR, data, expected)) {
          dlen = expected;
        } else if (tentative) {
          return false;
        } else if (truncated) {
          // The bytes we have are sound; keep the records they complete.
          dlen = this.xpressProduced;
        } else {
          problem = W_DECOMPRESS_FAILED;
          problemDetail = this.xpressProduced;
          status |= BS_SKIPPED;
        }
        if (tentative && !this.firstRecordSound(data, dlen)) return false;
      }
    }
    if (index === 0 && !this.isLogfileHeaderRecord(data, dlen)) { this.fatal(E_NO_LOGFILE_HEADER, off + HDR); return true; }

    const bp = this.addBuffer();
    if (bp === 0) { this.stop(W_CAPACITY, off, bs); return true; }
    this.arenaCommit(dlen);
    v = this.dv;
    const w = bp >>> 2;
    this.f64[(bp + B_FILE_OFFSET) >>> 3] = off;
    this.u32[w + (B_SEQUENCE >>> 2)] = v.getUint32(b + 0x18, true);
    this.u32[w + (B_SEQUENCE >>> 2) + 1] = v.getUint32(b + 0x1c, true);
    this.u32[w + (B_TIMESTAMP >>> 2)] = tsLo;
    this.u32[w + (B_TIMESTAMP >>> 2) + 1] = tsHi;
    this.u32[w + (B_BUFFER_SIZE >>> 2)] = bs;
    this.u32[w + (B_SAVED_OFFSET >>> 2)] = saved;
    this.u32[w + (B_FILLED >>> 2)] = filled;
    this.u16[(bp + B_LOGGER_ID) >>> 1] = v.getUint16(b + 0x2a, true);
    this.u16[(bp + B_FLAGS) >>> 1] = flags;
    this.u16[(bp + B_TYPE) >>> 1] = type;
    this.u16[(bp + B_RAW_PROCESSOR) >>> 1] = rawProc;
    this.u32[w + (B_DATA >>> 2)] = data;
    this.u32[w + (B_DATA_LENGTH >>> 2)] = dlen;
    if (index === 0 && type !== 4) this.warn(W_HEADER_BUFFER_TYPE, off, index, -1, type);
    if (index === 0 && (flags & BUFFER_FLAG_COMPRESSED) !== 0) this.warn(W_BUFFER0_COMPRESSED, off, index, -1, 0);
    if (truncated) this.warn(W_TRUNCATED_BUFFER, off, index, -1, avail);
    if (problem !== 0) this.warn(problem, off, index, -1, problemDetail);

    if (index === 0) {
      // Parse the logfile header first: the processor rule needs NumberOfProcessors.
      v = this.dv;
      const m = v.getUint32(data, true);
      const size = v.getUint16(data + 4, true);
      this.parseLogfileHeader(data + 0x20, size - 0x20, ((m >>> 16) & 0xff) === 1 ? 4 : 8,
        v.getUint32(data + 0x10, true), v.getUint32(data + 0x14, true), off);
      // Compressed files name their format in the low 16 bits of buffer 0's State (3 = XPRESS).
      if ((this.u32[(LOGFILE + LH_LOG_FILE_MODE) >>> 2] & LOG_FILE_MODE_COMPRESSED) !== 0) {
        const f = this.dv.getUint32(b + 0x2c, true) & 0xffff;
        this.compressionFormat = f === 2 || f === 4 ? f : COMPRESSION_XPRESS;
      }
    }
    if (!this.ensureRows((dlen >>> 3) + 1)) { this.stop(W_CAPACITY, off, dlen); return true; }

    const proc = this.processorOf(rawProc, flags);
    this.u16[(bp + B_PROCESSOR) >>> 1] = proc;
    const first = this.rowCount;
    this.u32[(bp + B_FIRST_ROW) >>> 2] = first;
    if (dlen > 0) this.walkRecords(data, dlen, proc, tsLo, tsHi, off, index);
    this.u32[(bp + B_ROW_COUNT) >>> 2] = this.rowCount - first;
    // walkAbandoned belongs to the last walk: a buffer without records was not walked
    if (dlen > 0 && this.walkAbandoned) status |= BS_ABANDONED;
    this.u16[(bp + B_STATUS) >>> 1] = status;
    return true;
  }

  consume(len: number, fileOffset: number, atEnd: number): number {
    const end = !!atEnd;
    let p = 0;
    this.want = 0;
    while (!this.done) {
      let avail = len - p;
      if (this.resyncing) {
        let found = false;
        while (avail >= HDR) {
          const b = this.staging + p;
          if (this.plausible(b, avail)) { found = true; break; }
          if (this.u8[b] !== 0) this.resyncNonZero = true;
          p++;
          avail--;
        }
        if (found) {
          const bs = this.dv.getUint32(this.staging + p, true);
          if (bs > avail && !end) { this.want = bs; break; } // judge the candidate once it is whole
          if (bs <= avail && this.processBuffer(this.staging + p, bs, bs, fileOffset + p, true)) {
            this.resyncing = false;
            if (this.resyncNonZero) this.warn(W_SKIPPED_BYTES, this.resyncFrom, this.bufCount - 2, -1, satU32(fileOffset + p - this.resyncFrom));
            p += bs;
          } else {
            this.resyncNonZero = true;
            p++;
          }
          continue;
        }
        if (!end) break;
        for (let i = p; i < len; i++) if (this.u8[this.staging + i] !== 0) { this.resyncNonZero = true; break; }
        if (this.resyncNonZero) this.warn(W_TRAILING_GARBAGE, this.resyncFrom, this.bufCount - 1, -1, satU32(fileOffset + len - this.resyncFrom));
        this.resyncing = false;
        p = len;
        this.done = true;
        break;
      }
      const off = fileOffset + p;
      if (avail < HDR) {
        if (!end) { this.want = HDR; break; }
        if (this.bufCount === 0) { this.fatal(E_TOO_SHORT, off); break; }
        for (let i = p; i < len; i++) {
          if (this.u8[this.staging + i] !== 0) { this.warn(W_TRAILING_GARBAGE, off, this.bufCount - 1, -1, avail); break; }
        }
        p = len;
        this.done = true;
        break;
      }
      const b = this.staging + p;
      const bs = this.dv.getUint32(b, true);
      if (bs === 0 && this.bufCount > 0) {
        // Zero-filled tail (preallocated files) or a zeroed header: look for another buffer.
        this.resyncing = true;
        this.resyncFrom = off;
        this.resyncNonZero = false;
        continue;
      }
      if (bs < HDR || bs > MAX_BUFFER) {
        if (this.bufCount === 0) { this.fatal(E_BAD_FIRST_BUFFER, off); break; }
        this.warn(W_BAD_BUFFER_SIZE, off, this.bufCount - 1, -1, bs);
        this.resyncing = true;
        this.resyncFrom = off;
        this.resyncNonZero = true;
        p++;
        continue;
      }
      if (bs > avail) {
        if (!end) { this.want = bs; break; }
        this.processBuffer(b, bs, avail, off, false);
        p = len;
        this.done = true;
        break;
      }
      this.processBuffer(b, bs, bs, off, false);
      p += bs;
    }
    if (this.done) return 0;
    const rest = len - p;
    if (rest > 0 && p > 0) this.u8.copyWithin(this.staging, this.staging + p, this.staging + len);
    return rest;
  }

  // ================= typed .NET runtime tables (assembly/clr.ts) =================
  // values of the fields of the scope being walked (u64 as two words), 64 per depth
  readonly scope = new Uint32Array(8 * 64 * 2);
  clrTruncated = false;

  /**
   * Advance of `size * n` bytes from `pos` with u64 arithmetic as the core does it: the low 32 bits
   * of the product, or -1 when `pos + size * n` passes `end`.
   */
  private span(pos: number, size: number, nLo: number, nHi: number, end: number): number {
    if (nHi === 0) {
      const bytes = size * nLo; // < 2^49: exact
      return pos + bytes > end ? -1 : bytes;
    }
    const n = (BigInt(nHi) << 32n) | BigInt(nLo);
    const product = BigInt.asUintN(64, BigInt(size) * n);
    if (BigInt.asUintN(64, BigInt(pos) + product) > BigInt(end)) return -1;
    return Number(product & 0xffffffffn);
  }

  /** `first` is the index of the first field walked (fields before it were copied at fixed offsets). */
  private clrWalk(
    prog: number, n: number, pos: number, end: number, ptr: number, base: number, count: number, row: number, depth: number, first: number,
  ): number {
    const vals = depth << 7;
    const U8 = this.u8, U16 = this.u16;
    const v = this.dv;
    const scope = this.scope;
    let p = prog >>> 1;
    for (let f = first; f < first + n; f++) {
      const w0 = U16[p];
      const kind = w0 & 0xff;
      const flags = w0 >>> 8;
      const preA = U16[p + 1];
      const preB = U16[p + 2];
      const ref = U16[p + 3];
      const words = U16[p + 4];
      let a = 0;
      let bLo = 0, bHi = 0;
      let vLo = 0, vHi = 0;
      let nLo = 1, nHi = 0;
      if ((flags & 1) !== 0) {
        if (ref < 64) { nLo = scope[vals + 2 * ref]; nHi = scope[vals + 2 * ref + 1]; }
        else nLo = 0;
      } else if ((flags & 2) !== 0) nLo = ref;
      const isArray = (flags & 3) !== 0 && kind !== T_BINARY;

      if (kind === T_USTR) {
        a = pos;
        let q = pos;
        // [pos, end) lies in the record: aligned units through the u16 view, others bytewise
        if ((q & 1) === 0) {
          while (q + 2 <= end && U16[q >>> 1] !== 0) q += 2;
        } else {
          while (q + 2 <= end && (U8[q] | U8[q + 1]) !== 0) q += 2;
        }
        bLo = q - pos;
        if (q + 2 <= end) pos = q + 2;
        else { pos = end; this.clrTruncated = true; }
        if (bLo === 0 && a >= end) { this.clrTruncated = true; return pos; }
      } else if (kind === T_ASTR) {
        a = pos;
        let q = pos;
        while (q < end && U8[q] !== 0) q++;
        bLo = q - pos;
        if (q < end) pos = q + 1;
        else { pos = end; this.clrTruncated = true; }
        if (bLo === 0 && a >= end) { this.clrTruncated = true; return pos; }
      } else if (kind === T_BINARY) {
        const step = this.span(pos, 1, nLo, nHi, end);
        if (step < 0) { this.clrTruncated = true; return pos; }
        a = pos;
        bLo = nLo;
        bHi = nHi;
        pos = (pos + step) >>> 0;
      } else if (kind === T_STRUCT) {
        const nSub = U16[p + 5];
        a = pos;
        bLo = nLo;
        bHi = nHi;
        if ((flags & 4) !== 0) {
          const size = ptr === 4 ? U16[p + 6] : U16[p + 7];
          const step = this.span(pos, size, nLo, nHi, end);
          if (step < 0) { this.clrTruncated = true; return pos; }
          pos = (pos + step) >>> 0;
        } else {
          if (depth >= 3) { this.clrTruncated = true; return pos; }
          const sub = (p + 8) << 1;
          const total = nHi * TWO32 + nLo;
          for (let k = 0; k < total; k++) {
            const before = pos;
            pos = this.clrWalk(sub, nSub, pos, end, ptr, 0, 0, 0, depth + 1, 0);
            if (this.clrTruncated) return pos;
            if (pos === before) break; // empty elements: nothing more to walk
          }
        }
      } else {
        const size = fixedSize(kind, ptr);
        if (isArray) {
          const step = this.span(pos, size, nLo, nHi, end);
          if (step < 0) { this.clrTruncated = true; return pos; }
          a = pos;
          bLo = nLo;
          bHi = nHi;
          pos = (pos + step) >>> 0;
        } else {
          if (((pos + size) >>> 0) > end) { this.clrTruncated = true; return pos; }
          if (kind === T_GUID || kind === T_SYSTEMTIME) {
            a = pos;
          } else if (size === 1) {
            if (kind === T_I8) { vLo = v.getInt8(pos) >>> 0; vHi = vLo > 0x7fffffff ? NONE32 : 0; }
            else vLo = v.getUint8(pos);
          } else if (size === 2) {
            if (kind === T_I16) { vLo = v.getInt16(pos, true) >>> 0; vHi = vLo > 0x7fffffff ? NONE32 : 0; }
            else vLo = v.getUint16(pos, true);
          } else if (size === 4) {
            vLo = v.getUint32(pos, true);
            if (kind === T_I32 && vLo > 0x7fffffff) vHi = NONE32;
          } else {
            vLo = v.getUint32(pos, true);
            vHi = v.getUint32(pos + 4, true);
          }
          pos = (pos + size) >>> 0;
        }
      }
      if (f < 64) {
        if (isArray || kind >= T_GUID) { scope[vals + 2 * f] = bLo; scope[vals + 2 * f + 1] = bHi; }
        else { scope[vals + 2 * f] = vLo; scope[vals + 2 * f + 1] = vHi; }
      }

      if (base !== 0 && preA !== NONE16) {
        const isRef = isArray || kind === T_GUID || kind === T_SYSTEMTIME || kind >= T_USTR;
        if (isRef) {
          v.setUint32(base + count * preA + row * 4, a, true);
          if (preB !== NONE16) v.setUint32(base + count * preB + row * 4, bLo, true);
        } else {
          const width = kind === T_PTR ? 8 : fixedSize(kind, 8);
          const at = base + count * preA + row * width;
          if (width === 1) v.setUint8(at, vLo & 0xff);
          else if (width === 2) v.setUint16(at, vLo & 0xffff, true);
          else if (width === 4) v.setUint32(at, vLo, true);
          else { v.setUint32(at, vLo, true); v.setUint32(at + 4, vHi, true); }
        }
      }
      p += words;
    }
    return pos;
  }

  private clrTypeOf(r: number, lookup: number, provClr: number, nProv: number): number {
    const prov = this.u16[(this.colProvider >>> 1) + r];
    if (prov >= nProv) return -1;
    const p = (this.u8[provClr + prov] << 24) >> 24;
    if (p < 0) return -1;
    const ht = this.u8[this.colHeaderType + r];
    if (ht !== HT_EVENT_HEADER32 && ht !== HT_EVENT_HEADER64) return -1;
    const id = this.u16[(this.colEventId >>> 1) + r];
    if (id >= CLR_MAX_ID) return -1;
    const ver = Math.min(this.u16[(this.colVersion >>> 1) + r], CLR_VERSIONS - 1);
    return (this.u16[(lookup >>> 1) + (p * CLR_MAX_ID + id) * CLR_VERSIONS + ver] << 16) >> 16;
  }

  decodeClr(program: number, typeStarts: number, nTypes: number, lookup: number, provClr: number, nProv: number, dir: number): number {
    const n = this.rowCount;
    this.u8.fill(0, dir, dir + nTypes * CLR_DIR_STRIDE);
    // entry of type t: u32 index d0 + t * DW (DIR_* offsets are multiples of 4)
    const d0 = dir >>> 2;
    const DW = CLR_DIR_STRIDE >>> 2, DC = CLR_DIR_COUNT >>> 2, DB = CLR_DIR_BLOCK >>> 2, DI = CLR_DIR_CURSOR >>> 2;
    // pass one: count rows per type, remembering each row's type for pass two
    const types = new Int16Array(n);
    for (let r = 0; r < n; r++) {
      const t = this.clrTypeOf(r, lookup, provClr, nProv);
      types[r] = t;
      if (t >= 0) this.u32[d0 + t * DW + DC]++;
    }
    let placed = 0;
    const fresh = this.highWater;
    for (let t = 0; t < nTypes; t++) {
      const count = this.u32[d0 + t * DW + DC];
      if (count === 0) continue;
      const prog = program + this.u32[(typeStarts >>> 2) + t] * 2;
      const bytes = count * this.u16[prog >>> 1];
      const block = this.alloc(bytes);
      if (block === 0) { this.u32[d0 + t * DW + DC] = 0; continue; }
      // only what lies below the high-water mark can hold old bytes
      const written = Math.min(block + bytes, fresh);
      if (written > block) this.u8.fill(0, block, written);
      this.u32[d0 + t * DW + DB] = block;
      placed += count;
    }
    // Nothing allocates from here on: the views stay valid.
    const U8 = this.u8, U16 = this.u16, U32 = this.u32;
    const v = this.dv;
    const scope = this.scope;
    const iPay = this.colPayloadOffset >>> 2, iPl = this.colPayloadLength >>> 1;
    for (let r = 0; r < n; r++) {
      const t = types[r];
      if (t < 0) continue;
      const d = d0 + t * DW;
      const count = U32[d + DC];
      if (count === 0) continue;
      const block = U32[d + DB];
      const i = U32[d + DI];
      U32[d + DI] = i + 1;
      const prog = program + U32[(typeStarts >>> 2) + t] * 2;
      const ph = prog >>> 1;
      const preRow = U16[ph + 1];
      const preStatus = U16[ph + 2];
      const nFields = U16[ph + 3];
      const nFixed = U16[ph + 4];
      U32[((block + count * preRow) >>> 2) + i] = r;
      const pos = U32[iPay + r];
      const end = pos + U16[iPl + r];
      const ptr = U8[this.colHeaderType + r] === HT_EVENT_HEADER32 ? 4 : 8;
      const fixedEnd = U16[ptr === 4 ? ph + 5 : ph + 6];
      const fields = prog + 16 + nFixed * 10;
      this.clrTruncated = false;
      if (nFixed > 0 && pos + fixedEnd <= end) {
        // fast path: the fixed prefix, then walk the rest
        let e = ph + 8;
        const s64 = ptr === 4 ? 0 : 1;
        for (let f = 0; f < nFixed; f++) {
          const src = pos + U16[e + s64];
          const size = U16[e + 2 + s64];
          const width = U16[e + 3];
          const at = block + count * U16[e + 4] + i * width;
          let lo: number, hi = 0;
          if (size === 1) lo = U8[src];
          else if (size === 2) lo = v.getUint16(src, true);
          else if (size === 4) lo = v.getUint32(src, true);
          else { lo = v.getUint32(src, true); hi = v.getUint32(src + 4, true); }
          if (width === 1) U8[at] = lo;
          else if (width === 2) U16[at >>> 1] = lo;
          else if (width === 4) U32[at >>> 2] = lo;
          else { U32[at >>> 2] = lo; U32[(at >>> 2) + 1] = hi; }
          scope[2 * f] = lo;
          scope[2 * f + 1] = hi;
          e += 5;
        }
        if (nFields > nFixed) {
          this.clrWalk(fields + U16[ph + 7] * 2, nFields - nFixed, pos + fixedEnd, end, ptr, block, count, i, 0, nFixed);
        }
      } else {
        this.clrWalk(fields, nFields, pos, end, ptr, block, count, i, 0, 0);
      }
      if (this.clrTruncated) U8[block + count * preStatus + i] = CLR_STATUS_TRUNCATED;
    }
    return placed;
  }

  // ================= exports (assembly/index.ts) =================
  constructor() {
    if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error("etw-wasm: the js engine needs a little-endian platform");
    this.setBuffer(new ArrayBuffer(INITIAL_MEMORY));
  }

  /** Addresses and counts of every output table, at the DIR_* slots (assembly/codes.ts). */
  directory(): number {
    const d = DIR >>> 2;
    const U32 = this.u32;
    U32[d + DIR_ROW_COUNT] = this.rowCount;
    U32[d + DIR_TIMESTAMP] = this.colTimestamp;
    U32[d + DIR_KEYWORDS] = this.colKeywords;
    U32[d + DIR_PID] = this.colPid;
    U32[d + DIR_TID] = this.colTid;
    U32[d + DIR_PAYLOAD_OFFSET] = this.colPayloadOffset;
    U32[d + DIR_PAYLOAD_LENGTH] = this.colPayloadLength;
    U32[d + DIR_HEADER_LENGTH] = this.colHeaderLength;
    U32[d + DIR_PROVIDER] = this.colProvider;
    U32[d + DIR_EVENT_ID] = this.colEventId;
    U32[d + DIR_TASK] = this.colTask;
    U32[d + DIR_FLAGS] = this.colFlags;
    U32[d + DIR_PROCESSOR] = this.colProcessor;
    U32[d + DIR_VERSION] = this.colVersion;
    U32[d + DIR_OPCODE] = this.colOpcode;
    U32[d + DIR_LEVEL] = this.colLevel;
    U32[d + DIR_HEADER_TYPE] = this.colHeaderType;
    U32[d + DIR_CHANNEL] = this.colChannel;
    U32[d + DIR_EXT_COUNT] = this.extCount;
    U32[d + DIR_EXT_ROW] = this.colExtRow;
    U32[d + DIR_EXT_TYPE] = this.colExtType;
    U32[d + DIR_EXT_SIZE] = this.colExtSize;
    U32[d + DIR_EXT_OFFSET] = this.colExtOffset;
    U32[d + DIR_BUF_COUNT] = this.bufCount;
    U32[d + DIR_BUF_TABLE] = this.bufTable;
    U32[d + DIR_WARN_COUNT] = this.warnCount;
    U32[d + DIR_WARN_TOTAL] = this.warnTotal;
    U32[d + DIR_WARN_TABLE] = this.warnTable;
    U32[d + DIR_PROV_COUNT] = this.provCount;
    U32[d + DIR_PROV_TABLE] = this.provTable;
    U32[d + DIR_LOGFILE] = LOGFILE;
    return DIR;
  }

  init(stagingBytes: number): void {
    // Room for the staging area, the arena and the tables of about that much input, where the
    // platform grants it (otherwise memory grows as needed).
    this.reserveMemory(Math.min(MEMORY_LIMIT, HEAP_BASE + 4 * stagingBytes));
    this.u8.fill(0, LOGFILE, LOGFILE + LH_SIZE);
    this.initProviders();
    this.want = 0;
    this.done = false;
    this.errCode = 0;
    this.errOffset = 0;
    this.resyncing = false;
    this.compressionFormat = COMPRESSION_XPRESS;
    this.staging = this.alloc(stagingBytes);
    this.stagingSize = this.staging !== 0 ? stagingBytes : 0;
    if (this.staging === 0) this.outOfMemory(stagingBytes);
  }

  stagingPtr(): number {
    return this.staging;
  }

  stagingCap(): number {
    return this.stagingSize;
  }

  growStaging(cap: number, keep: number): void {
    const fresh = this.alloc(cap);
    if (fresh === 0) { this.outOfMemory(cap); return; }
    this.u8.copyWithin(fresh, this.staging, this.staging + Math.min(keep, cap));
    this.free(this.staging);
    this.staging = fresh;
    this.stagingSize = cap;
  }

  wantBytes(): number {
    return this.want;
  }

  isDone(): number {
    return this.done ? 1 : 0;
  }

  fatalCode(): number {
    return this.errCode;
  }

  fatalOffset(): number {
    return this.errOffset;
  }

  /** Releases the staging area once the input is consumed. */
  finish(): void {
    if (this.staging !== 0) {
      this.free(this.staging);
      this.staging = 0;
      this.stagingSize = 0;
    }
  }

  arenaBytes(): number {
    return this.arenaUsed;
  }

  /** XPRESS decompression on its own: bytes produced, or -1 - bytes produced when corrupt. */
  decompress(src: number, srcLen: number, dst: number, expected: number): number {
    return this.xpressDecompress(src, srcLen, dst, expected) ? expected : -1 - this.xpressProduced;
  }
}

export function createJsCore(): CoreExports {
  return new JsCore();
}
