// The one record-header dispatch (assembly/records.ts): walks the records of one buffer's record
// area and writes a row per record. Space for the buffer's worst case (one row per 8 bytes) is
// reserved by the caller. Records start 8-aligned in the arena and every column is 8-aligned, so
// the walk reads and writes through typed arrays; 64-bit values move as two 32-bit halves.

import {
  W_RECORD_SIZE_ZERO, W_RECORD_TOO_SMALL, W_RECORD_OVERRUNS, W_OPAQUE_RECORD, W_CORRUPT_MARKER,
  W_EXT_ITEMS_MALFORMED, W_MESSAGE_TRUNCATED, F_NO_PROCESS_INFO, F_TIMESTAMP_INHERITED, F_EXT_MALFORMED,
  F_OPAQUE, F_HEADER_FLAGS_MASK, HT_MESSAGE, HT_EVENT_HEADER64, PK_GUID, BUFFER_HEADER_SIZE, MAX_EXT_ITEMS, TYPE_STRIDE, TYPE_ROWS,
  CLR_DIR_STRIDE,
  PROV_STRIDE, PROV_WANTED, FF_PROVIDER, FF_EVENT_ID, FF_OPCODE, FF_LEVEL, FF_KEYWORDS, FF_PID, FF_TID, FF_FROM, FF_TO,
  FILTER_LEVEL, FILTER_KEYWORDS, FILTER_FROM, FILTER_TO, FILTER_EVENT_ID_COUNT, FILTER_OPCODE_COUNT, FILTER_PID_COUNT,
  FILTER_TID_COUNT, FILTER_EVENT_IDS, FILTER_OPCODES, FILTER_PIDS, FILTER_TIDS, EVENT_TYPE_NONE,
} from "../../assembly/codes.js";
import { STATIC_FILTER } from "./memory.js";
import { PROVIDER_BLOCK, typeHash } from "./memory-access.js";
import { ensureExt, warn } from "./tables.js";
import { providerByGuid, providerByHook, providerNone, PROV_LAST } from "./providers.js";
import { findType, typeClr } from "./eventtypes.js";
import { fillClr } from "./clr-fill.js";
import type { CoreState } from "./state.js";

const NONE32 = 0xffffffff;
const NONE16 = 0xffff;

// emit and emitOpaque of the WebAssembly core, and the first probe of its eventType, are written
// out where walkRecords ends a record.

/** Whether `v` is one of the `count` u32 entries at `set` (filter block offsets). */
function inSet(s: CoreState, count: number, set: number, v: number): boolean {
  const U32 = s.u32;
  const n = U32[(STATIC_FILTER + count) >>> 2];
  const p = (STATIC_FILTER + set) >>> 2;
  for (let i = 0; i < n; i++) if (U32[p + i] === v) return true;
  return false;
}

/** i64 `hi:lo` (hi signed) against the i64 at `at`: -1, 0 or 1. */
function compareI64(s: CoreState, hi: number, lo: number, at: number): number {
  const w = at >>> 2;
  const bh = s.u32[w + 1] | 0, bl = s.u32[w];
  const h = hi | 0;
  if (h !== bh) return h < bh ? -1 : 1;
  return lo === bl ? 0 : lo < bl ? -1 : 1;
}

/**
 * The decode-time filter, asked once per record while a filter is in force (s.filterFlags !== 0):
 * true when the record takes no row. Its extended items, written before the row, are dropped with it.
 * The first row (the logfile header record) is always kept.
 */
function filteredOut(
  s: CoreState, tsLo: number, tsHi: number, kwLo: number, kwHi: number, pid: number, tid: number, provider: number,
  eventId: number, flags: number, opcode: number, level: number,
): boolean {
  if (s.rowCount === 0 && s.rowBase === 0) return false;
  const f = s.filterFlags;
  const U32 = s.u32;
  const kw = (STATIC_FILTER + FILTER_KEYWORDS) >>> 2;
  let out = false;
  if ((f & FF_PROVIDER) !== 0 && (provider < 0 || s.u8[s.provTable + provider * PROV_STRIDE + PROV_WANTED] === 0)) out = true;
  else if ((f & FF_EVENT_ID) !== 0 && !inSet(s, FILTER_EVENT_ID_COUNT, FILTER_EVENT_IDS, eventId)) out = true;
  else if ((f & FF_OPCODE) !== 0 && !inSet(s, FILTER_OPCODE_COUNT, FILTER_OPCODES, opcode)) out = true;
  else if ((f & FF_LEVEL) !== 0 && level > U32[(STATIC_FILTER + FILTER_LEVEL) >>> 2]) out = true;
  else if ((f & FF_KEYWORDS) !== 0 && ((kwLo & U32[kw]) | (kwHi & U32[kw + 1])) === 0) out = true;
  else if ((f & (FF_PID | FF_TID)) !== 0 && (flags & F_NO_PROCESS_INFO) !== 0) out = true;
  else if ((f & FF_PID) !== 0 && !inSet(s, FILTER_PID_COUNT, FILTER_PIDS, pid)) out = true;
  else if ((f & FF_TID) !== 0 && !inSet(s, FILTER_TID_COUNT, FILTER_TIDS, tid)) out = true;
  else if ((f & FF_FROM) !== 0 && compareI64(s, tsHi, tsLo, STATIC_FILTER + FILTER_FROM) < 0) out = true;
  else if ((f & FF_TO) !== 0 && compareI64(s, tsHi, tsLo, STATIC_FILTER + FILTER_TO) > 0) out = true;
  if (out) {
    // extended items of this record carry the row it would have taken
    const iER = s.colExtRow >>> 2;
    let e = s.extCount;
    while (e > 0 && U32[iER + e - 1] === s.rowCount) e--;
    s.extCount = e;
  }
  return out;
}

function recordWarning(s: CoreState, code: number, pos: number, detail: number): void {
  warn(s, code, s.ctxFileOffset, s.ctxBuffer, pos + BUFFER_HEADER_SIZE, detail);
}

/**
 * Walks `len` bytes of records at `base` (buffer offset 0x48), one row per record. Room for the
 * buffer's worst case is reserved by the caller; providers, extended items and warnings may
 * still allocate, after which the views are taken again.
 */
export function walkRecords(s: CoreState, base: number, len: number, timestampAt: number, fileOffset: number, bufferIndex: number): void {
  s.ctxFileOffset = fileOffset;
  s.ctxBuffer = bufferIndex;
  s.walkAbandoned = false;
  let lastLo = s.dv.getUint32(timestampAt, true); // the buffer's timestamp
  let lastHi = s.dv.getUint32(timestampAt + 4, true);
  let U8 = s.u8, U16 = s.u16, U32 = s.u32;
  // Column addresses do not move during the walk (ensureRows ran before it).
  const iTs = s.colTimestamp >>> 2, iKw = s.colKeywords >>> 2, iPid = s.colPid >>> 2, iTid = s.colTid >>> 2;
  const iPay = s.colPayloadOffset >>> 2, iPl = s.colPayloadLength >>> 1, iHl = s.colHeaderLength >>> 1;
  const iProv = s.colProvider >>> 1, iId = s.colEventId >>> 1, iTask = s.colTask >>> 1, iFlags = s.colFlags >>> 1;
  const iVer = s.colVersion >>> 1;
  const iOp = s.colOpcode, iLevel = s.colLevel, iHt = s.colHeaderType, iCh = s.colChannel, iType = s.colEventType >>> 1;
  let r = s.rowCount;
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
        if (remaining < 8) { recordWarning(s, W_RECORD_OVERRUNS, pos, remaining); break; }
        size = U16[h + 2];
        const ver = marker & 0xffff;
        hl = fixed + ((ver & 0x8000) !== 0 ? 8 : 0) + (((ver >>> 8) & 7) << 3);
        if (size === 0) { recordWarning(s, W_RECORD_SIZE_ZERO, pos, marker); break; }
        if (size < hl) { recordWarning(s, W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(s, W_RECORD_OVERRUNS, pos, size); break; }
        const hook = U16[h + 3];
        let group = hook >>> 8;
        if (hook === 0x030a) group = 0x14;
        prov = U16[(PROVIDER_BLOCK >>> 1) + group]; // (providers.ts's index of kernel groups)
        if (prov === 0xffff) {
          prov = providerByHook(s, hook);
          U8 = s.u8; U16 = s.u16; U32 = s.u32;
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
        if (size === 0) { recordWarning(s, W_RECORD_SIZE_ZERO, pos, marker); break; }
        if (size < 0x50) { recordWarning(s, W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(s, W_RECORD_OVERRUNS, pos, size); break; }
        flags = U16[h + 2] & F_HEADER_FLAGS_MASK;
        hl = 0x50;
        if ((flags & 1) !== 0) {
          // Items are inline: u16 item size, u16 type, u16 linkage bit, u16 data size, data, pad to 8.
          let n = 0;
          const firstExt = s.extCount;
          if (!ensureExt(s, MAX_EXT_ITEMS)) {
            flags |= F_EXT_MALFORMED;
          } else {
            U8 = s.u8; U16 = s.u16; U32 = s.u32;
            const iER = s.colExtRow >>> 2, iET = s.colExtType >>> 1, iES = s.colExtSize >>> 1, iEO = s.colExtOffset >>> 2;
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
            s.extCount = firstExt + n;
          }
          if ((flags & F_EXT_MALFORMED) !== 0) {
            recordWarning(s, W_EXT_ITEMS_MALFORMED, pos, n);
            U8 = s.u8; U16 = s.u16; U32 = s.u32;
          }
        }
        tsLo = U32[w + 4];
        tsHi = U32[w + 5];
        lastLo = tsLo;
        lastHi = tsHi;
        const last = (PROVIDER_BLOCK + PROV_LAST) >>> 2;
        if (s.provLast >= 0 && U32[w + 6] === U32[last] && U32[w + 7] === U32[last + 1] && U32[w + 8] === U32[last + 2] && U32[w + 9] === U32[last + 3]) prov = s.provLast;
        else {
          prov = providerByGuid(s, rec + 0x18, PK_GUID, NONE16);
          U8 = s.u8; U16 = s.u16; U32 = s.u32;
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
        if (size === 0) { recordWarning(s, W_RECORD_SIZE_ZERO, pos, marker); break; }
        if (size < hl) { recordWarning(s, W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(s, W_RECORD_OVERRUNS, pos, size); break; }
        tsLo = U32[w + 4];
        tsHi = U32[w + 5];
        lastLo = tsLo;
        lastHi = tsHi;
        prov = providerByGuid(s, rec + 0x18, PK_GUID, NONE16);
        U8 = s.u8; U16 = s.u16; U32 = s.u32;
        pid = U32[w + 3];
        tid = U32[w + 2];
        version = U16[h + 3];
        opcode = U8[rec + 4];
        level = U8[rec + 5];
      } else {
        // TIMED, ERROR, WNODE and unknown layouts: Size at offset 0, kept whole as an opaque record.
        size = marker & 0xffff;
        if (size < 4) { recordWarning(s, W_RECORD_TOO_SMALL, pos, size); break; }
        if (size > remaining) { recordWarning(s, W_RECORD_OVERRUNS, pos, size); break; }
        recordWarning(s, W_OPAQUE_RECORD, pos, ht);
        prov = providerNone(s);
        U8 = s.u8; U16 = s.u16; U32 = s.u32;
        flags = F_OPAQUE | F_NO_PROCESS_INFO | F_TIMESTAMP_INHERITED;
      }
    } else if ((b3 & 0xf0) === 0x90) {
      // WPP MESSAGE_TRACE_HEADER with optional fields in fixed order
      size = marker & 0xffff;
      if (size < 8) { recordWarning(s, size === 0 ? W_RECORD_SIZE_ZERO : W_RECORD_TOO_SMALL, pos, size); break; }
      if (size > remaining) { recordWarning(s, W_RECORD_OVERRUNS, pos, size); break; }
      const options = U16[h + 3];
      hl = 8;
      flags = options & F_HEADER_FLAGS_MASK;
      prov = -1;
      let fits = true;
      if ((options & 0x01) !== 0) { if (hl + 4 <= size) hl += 4; else fits = false; }
      if (fits && (options & 0x02) !== 0) {
        if (hl + 16 <= size) {
          prov = providerByGuid(s, rec + hl, PK_GUID, NONE16);
          U8 = s.u8; U16 = s.u16; U32 = s.u32;
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
      if (!fits) recordWarning(s, W_MESSAGE_TRUNCATED, pos, options);
      if (prov < 0) prov = providerNone(s);
      U8 = s.u8; U16 = s.u16; U32 = s.u32;
      if (hasTs) { lastLo = tsLo; lastHi = tsHi; } else flags |= F_TIMESTAMP_INHERITED;
      if (!hasInfo) flags |= F_NO_PROCESS_INFO;
      eventId = U16[h + 2];
      rowType = HT_MESSAGE;
    } else if ((b3 & 0x80) !== 0) {
      // Unknown trace header: skip it whole when its size is plausible.
      size = marker & 0xffff;
      if (size < 4) { recordWarning(s, W_RECORD_TOO_SMALL, pos, size); break; }
      if (size > remaining) { recordWarning(s, W_RECORD_OVERRUNS, pos, size); break; }
      recordWarning(s, W_OPAQUE_RECORD, pos, marker);
      prov = providerNone(s);
      U8 = s.u8; U16 = s.u16; U32 = s.u32;
      flags = F_OPAQUE | F_NO_PROCESS_INFO | F_TIMESTAMP_INHERITED;
    } else {
      recordWarning(s, W_CORRUPT_MARKER, pos, marker);
      break;
    }

    // ---- the row: committed here or nowhere (one branch per record without a filter) ----
    if (s.filterFlags !== 0 && filteredOut(s, tsLo, tsHi, kwLo, kwHi, pid, tid, prov, eventId, flags, opcode, level)) {
      pos += (size + 7) & ~7;
      continue;
    }
    // its event type: the first probe of the index here, the rest in findType (which may allocate)
    const typeLo = ((prov & 0xffff) | (eventId << 16)) >>> 0;
    const typeHi = (version | (opcode << 16) | (rowType << 24)) >>> 0;
    const tlc = (task | (level << 16) | (channel << 24)) >>> 0;
    const v = U32[(s.typeSlots >>> 2) + (typeHash(s, typeLo, typeHi, kwLo, kwHi, tlc) & s.typeMask)]; // (no index yet: address 0, never written, holds 0)
    const tw = (s.typeTable + (v - 1) * TYPE_STRIDE) >>> 2;
    let type: number;
    if (v !== 0 && U32[tw] === typeLo && U32[tw + 1] === typeHi && U32[tw + 2] === kwLo && U32[tw + 3] === kwHi && U32[tw + 4] === tlc) {
      U32[tw + (TYPE_ROWS >>> 2)]++;
      type = v - 1;
    } else {
      type = findType(s, typeLo, typeHi, kwLo, kwHi, tlc);
      U8 = s.u8; U16 = s.u16; U32 = s.u32;
    }
    U32[iTs + 2 * r] = tsLo;
    U32[iTs + 2 * r + 1] = tsHi;
    U32[iPid + r] = pid;
    U32[iTid + r] = tid;
    U32[iPay + r] = rec + hl;
    U16[iPl + r] = size - hl;
    U16[iHl + r] = hl;
    U16[iFlags + r] = flags;
    U8[iHt + r] = rowType;
    U16[iType + r] = type;
    // provider, event id, version, opcode, keywords, task, level and channel are the event type's:
    // stored only for a row without one
    if (type === EVENT_TYPE_NONE) {
      U16[iProv + r] = prov;
      U16[iId + r] = eventId;
      U16[iVer + r] = version;
      U8[iOp + r] = opcode;
      U32[iKw + 2 * r] = kwLo;
      U32[iKw + 2 * r + 1] = kwHi;
      U16[iTask + r] = task;
      U8[iLevel + r] = level;
      U8[iCh + r] = channel;
    }
    s.rowCount = r + 1;
    // the row of its typed table, if the record is a .NET runtime event the schema knows
    if (s.clrOn) {
      const t = typeClr(s, type, typeLo, typeHi);
      if (t >= 0) {
        fillClr(s, t, s.clrDir + t * CLR_DIR_STRIDE, r, rec + hl, rec + size, rowType === HT_EVENT_HEADER64);
        U8 = s.u8; U16 = s.u16; U32 = s.u32;
      }
    }
    r++;
    pos += (size + 7) & ~7;
  }
  if (pos + 4 <= len) {
    const m = s.u32[(base + pos) >>> 2];
    s.walkAbandoned = m !== 0xffffffff && m !== 0;
  } else s.walkAbandoned = false;
}
