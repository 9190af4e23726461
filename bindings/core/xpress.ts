// MS-XCA "Plain LZ77" (XPRESS, COMPRESSION_FORMAT_XPRESS = 3) decompression, as ETW uses for
// compressed buffers (assembly/xpress.ts). Every input read and output write is bounds-checked: a
// corrupt stream ends decoding with a short result, never a read or write outside the two ranges.

import type { CoreState } from "./state.js";

/**
 * Decompresses `srcLen` bytes at `src` into `dst`, stopping at `expected` output bytes. Returns
 * true when exactly `expected` bytes were produced; `s.xpressProduced` says how many were.
 */
export function xpressDecompress(s: CoreState, src: number, srcLen: number, dst: number, expected: number): boolean {
  const m = s.u8;
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
        const v = s.dv;
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
  s.xpressProduced = op - dst;
  return ok && op === oend;
}
