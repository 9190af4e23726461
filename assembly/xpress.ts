// MS-XCA "Plain LZ77" (XPRESS, COMPRESSION_FORMAT_XPRESS = 3) decompression, as ETW uses for
// compressed buffers. Every input read and output write is bounds-checked: a corrupt stream ends
// decoding with a short result, never a read or write outside the two ranges.
//
// Both cores run this source: it is valid AssemblyScript and TypeScript, touches memory only through
// the accessors of memory-access.ts, and scripts/gen-core-twin.mjs copies it to bindings/core/.

import { Mem, ld8, ld16, ld32, ldi32, st8, copyMatch } from "./memory-access";

/** Bytes written by the last call (valid also when it failed). */
export let xpressProduced: u32 = 0;

/**
 * Decompresses `srcLen` bytes at `src` into `dst`, stopping at `expected` output bytes.
 * Returns true when exactly `expected` bytes were produced.
 */
export function xpressDecompress(m: Mem, src: usize, srcLen: u32, dst: usize, expected: u32): bool {
  let ip: usize = src;
  let iend: usize = src + srcLen;
  let op: usize = dst;
  let oend: usize = dst + expected;
  let flags: i32 = 0; // signed: a small integer to V8 in the TypeScript core
  let flagCount: u32 = 0;
  let halfByte: usize = 0; // address of the shared length nibble byte, 0 when none pending
  let ok = true;

  while (op < oend) {
    if (flagCount == 0) {
      if (ip + 4 > iend) { ok = false; break; }
      flags = ldi32(m, ip);
      ip += 4;
      flagCount = 32;
    }
    flagCount--;
    if (((flags >>> flagCount) & 1) == 0) {
      if (ip >= iend) { ok = false; break; }
      st8(m, op, ld8(m, ip));
      ip++;
      op++;
      continue;
    }
    if (ip + 2 > iend) { ok = false; break; }
    let token: u32 = ld16(m, ip);
    ip += 2;
    let length: u32 = token & 7;
    let offset: usize = (token >>> 3) + 1;
    if (length == 7) {
      if (halfByte == 0) {
        if (ip >= iend) { ok = false; break; }
        halfByte = ip;
        length = ld8(m, ip) & 0x0f;
        ip++;
      } else {
        length = ld8(m, halfByte) >>> 4;
        halfByte = 0;
      }
      if (length == 15) {
        if (ip >= iend) { ok = false; break; }
        length = ld8(m, ip);
        ip++;
        if (length == 255) {
          if (ip + 2 > iend) { ok = false; break; }
          length = ld16(m, ip);
          ip += 2;
          if (length == 0) {
            if (ip + 4 > iend) { ok = false; break; }
            length = ld32(m, ip);
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
    length += 3;
    if (offset > op - dst) { ok = false; break; }
    // A match may run past the expected size only in a corrupt stream: clip and report.
    let n: usize = length;
    if (n > oend - op) { n = oend - op; ok = false; }
    // An overlapping match repeats the last `offset` bytes.
    copyMatch(m, op, op - offset, n);
    op += n;
    if (!ok) break;
  }
  xpressProduced = <u32>(op - dst);
  return ok && op == oend;
}
