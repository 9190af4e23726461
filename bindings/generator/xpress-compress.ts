// MS-XCA "Plain LZ77" (XPRESS) compression: the inverse of assembly/xpress.ts. Matches are found
// with a hash chain over 3-byte prefixes within the format's 8 KiB window.

const WINDOW = 8192;
const HASH_BITS = 15;
const MAX_CHAIN = 24;
const MIN_MATCH = 3;

// The hash chain, kept between calls. Positions are stored plus `base`, which grows past every
// position stored before, so entries of earlier calls read as "none" without clearing the table.
const head = new Int32Array(1 << HASH_BITS).fill(-1);
const prev = new Int32Array(WINDOW);
let base = 0;

/** The most bytes xpressCompressInto writes for `n` input bytes. */
export function xpressBound(n: number): number {
  return n + ((n >> 5) + 2) * 4 + 16;
}

/** Compresses `input` into a new array. */
export function xpressCompress(input: Uint8Array): Uint8Array {
  const out = new Uint8Array(xpressBound(input.length));
  return out.slice(0, xpressCompressInto(input, 0, input.length, out, 0));
}

/**
 * Compresses input[start, end) into `out` at `outAt` (room for xpressBound(end - start) bytes
 * needed) and returns the compressed length.
 */
export function xpressCompressInto(input: Uint8Array, start: number, end: number, out: Uint8Array, outAt: number): number {
  if (end - start < 0 || outAt + xpressBound(end - start) > out.length) throw new RangeError("xpressCompressInto: no room for the output");
  if (base + end + 1 > 0x7fff_fff0 || end > 0x3fff_ffff) {
    head.fill(-1);
    base = 0;
  }
  const b = base;
  const n = end;
  let op = outAt + 4;
  let flagAt = outAt;
  let flags = 0;
  let flagCount = 0;
  let nibbleAt = -1;
  let i = start;
  while (i < n) {
    let bestLen = 0;
    let bestOff = 0;
    // the hash of the 3 bytes at i (when there are 3): looked up here, and i joins its chain below
    let h = -1;
    if (i + MIN_MATCH <= n) {
      h = (((input[i] << 16) | (input[i + 1] << 8) | input[i + 2]) * 2654435761) >>> (32 - HASH_BITS);
      let cand = head[h] - b;
      let chain = MAX_CHAIN;
      const limit = n - i;
      while (cand >= start && i - cand <= WINDOW && chain-- > 0) {
        if (input[cand + bestLen] === input[i + bestLen] || bestLen === 0) {
          let len = 0;
          while (len < limit && input[cand + len] === input[i + len]) len++;
          if (len > bestLen) {
            bestLen = len;
            bestOff = i - cand;
            if (len === limit) break;
          }
        }
        const p = prev[cand & (WINDOW - 1)] - b;
        if (p >= cand) break; // slot reused by a newer position
        cand = p;
      }
    }
    let bit = 1;
    let step = bestLen;
    if (bestLen < MIN_MATCH) {
      out[op++] = input[i];
      bit = 0;
      step = 1;
    } else {
      const m = bestLen - 3;
      const token = (bestOff - 1) << 3;
      if (m < 7) {
        out[op++] = token | m;
        out[op++] = (token | m) >> 8;
      } else {
        out[op++] = token | 7;
        out[op++] = (token | 7) >> 8;
        const m2 = m - 7;
        const nibble = m2 < 15 ? m2 : 15;
        if (nibbleAt < 0) {
          nibbleAt = op;
          out[op++] = nibble;
        } else {
          out[nibbleAt] |= nibble << 4;
          nibbleAt = -1;
        }
        if (m2 >= 15) {
          const m3 = m2 - 15;
          if (m3 < 255) out[op++] = m3;
          else {
            out[op++] = 255;
            if (m < 65536) {
              out[op++] = m;
              out[op++] = m >> 8;
            } else {
              out[op++] = 0;
              out[op++] = 0;
              out[op++] = m;
              out[op++] = m >>> 8;
              out[op++] = m >>> 16;
              out[op++] = m >>> 24;
            }
          }
        }
      }
    }
    flags = ((flags << 1) | bit) >>> 0;
    if (++flagCount === 32) {
      out[flagAt] = flags;
      out[flagAt + 1] = flags >>> 8;
      out[flagAt + 2] = flags >>> 16;
      out[flagAt + 3] = flags >>> 24;
      flagAt = op;
      op += 4;
      flags = 0;
      flagCount = 0;
    }
    // every position the item covers joins the hash chain
    if (h >= 0) {
      prev[i & (WINDOW - 1)] = head[h];
      head[h] = i + b;
    }
    const stop = i + step;
    const last = stop < n - MIN_MATCH + 1 ? stop : n - MIN_MATCH + 1;
    if (++i < last) {
      let key = (input[i] << 8) | input[i + 1];
      for (; i < last; i++) {
        key = ((key << 8) | input[i + 2]) & 0xffffff;
        const hk = (key * 2654435761) >>> (32 - HASH_BITS);
        prev[i & (WINDOW - 1)] = head[hk];
        head[hk] = i + b;
      }
    }
    i = stop;
  }
  base = b + n + 1;
  // Unused bits of the last flag word are ones, as MS-XCA's own encoder leaves them.
  const rest = 32 - flagCount;
  const last = rest === 32 ? 0xffffffff : (((flags << rest) >>> 0) | ((2 ** rest - 1) >>> 0)) >>> 0;
  out[flagAt] = last;
  out[flagAt + 1] = last >>> 8;
  out[flagAt + 2] = last >>> 16;
  out[flagAt + 3] = last >>> 24;
  return op - outAt;
}
