// MS-XCA "Plain LZ77" (XPRESS, COMPRESSION_FORMAT_XPRESS = 3) decompression, as ETW uses for
// compressed buffers. No input read or output write leaves the two ranges: a corrupt stream ends
// decoding with a short result. A fast loop runs while FAST_MARGIN bytes remain on both sides, with
// no checks of its reads and wide copies that may write past what they produce (later overwritten);
// the careful loop, checking every read and write, decodes the rest.
//
// Both cores run this source: it is valid AssemblyScript and TypeScript, touches memory only through
// the accessors of memory-access.ts, and scripts/gen-core-twin.mjs copies it to bindings/core/.

import { Mem, ld8, ld16, ld32, ldi32, st8, clz32, copyRun, copyMatch, copyMatchWide } from "./memory-access";

/**
 * What the fast loop needs left on both sides: in the input a flag word (4), the 32 bytes copyRun
 * reads and a match's token and length (10); in the output the 32 bytes copyRun writes, then the
 * 64 that copyMatchWide may write past a match (so `oend - op - 64` below cannot wrap).
 */
const FAST_MARGIN: u32 = 96;

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
  let pend: u32 = 0; // the fast loop's flag for it: 1 when halfByte holds a pending nibble
  let ok = true;

  // the fast loop runs while ip < ilimit and op < olimit (never when a side is at most FAST_MARGIN)
  let ilimit: usize = srcLen > FAST_MARGIN ? iend - FAST_MARGIN : 0;
  let olimit: usize = expected > FAST_MARGIN ? oend - FAST_MARGIN : 0;
  while (ip < ilimit && op < olimit) {
    if (flagCount == 0) {
      flags = ldi32(m, ip);
      ip += 4;
      flagCount = 32;
    }
    // the literals up to the next match (clz of the flag bits left, shifted to the top)
    let run: u32 = <u32>clz32(flags << <i32>(32 - flagCount));
    if (run > flagCount) run = flagCount;
    copyRun(m, op, ip, run);
    ip += run;
    op += run;
    flagCount -= run;
    if (flagCount == 0) continue;
    // a match
    flagCount--;
    let token: u32 = ld16(m, ip);
    ip += 2;
    let offset: usize = (token >>> 3) + 1;
    // The length, without branches (whether it continues is a coin toss in typical data) in
    // arithmetic free of them in both cores: 7 continues in a nibble, the pending high one or the
    // low one of the next byte; 7 + 15 continues in the next byte.
    let length: u32 = token & 7;
    let long: u32 = (length + 1) >>> 3;
    let nibbles: u32 = ld8(m, ip + pend * <u32>(halfByte - ip));
    length += (0 - long) & ((nibbles >>> (pend << 2)) & 0x0f);
    let take: u32 = long & (pend ^ 1); // a new nibble byte
    halfByte += take * <u32>(ip - halfByte);
    pend ^= long;
    ip += take;
    let long2: u32 = (length + 10) >>> 5; // 1 for 22
    length += (0 - long2) & ld8(m, ip);
    ip += long2;
    if (length == 22 + 255) {
      length = ld16(m, ip);
      ip += 2;
      if (length == 0) {
        length = ld32(m, ip);
        ip += 4;
      }
      // a length past 2^32 - 26 would wrap once the other parts are added: corrupt
      if (length < 22 || length > 0xffffffe6) { ok = false; break; }
    }
    length += 3;
    if (offset > op - dst) { ok = false; break; }
    if (<usize>length > oend - op - 64) {
      // no room for copyMatchWide's overrun: exactly, clipped where a corrupt stream runs past the end
      let n: usize = length;
      if (n > oend - op) n = oend - op;
      copyMatch(m, op, op - offset, n);
      op += n;
      if (n < length) { ok = false; break; }
      continue;
    }
    copyMatchWide(m, op, op - offset, length);
    op += length;
  }
  if (!ok) {
    xpressProduced = <u32>(op - dst);
    return false;
  }
  return careful(m, ip, iend, op, dst, oend, flags, flagCount, pend != 0 ? halfByte : 0);
}

/** Decodes the rest of a stream from the fast loop's state, checking every read and write. */
function careful(m: Mem, ip: usize, iend: usize, op: usize, dst: usize, oend: usize, flags: i32, flagCount: u32, halfByte: usize): bool {
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
