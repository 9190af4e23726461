// MS-XCA "Plain LZ77" (XPRESS) compression: the inverse of assembly/xpress.ts. Matches are found
// with a hash chain over 3-byte prefixes within the format's 8 KiB window.

const WINDOW = 8192;
const HASH_BITS = 15;
const MAX_CHAIN = 24;
const MIN_MATCH = 3;

export function xpressCompress(input: Uint8Array): Uint8Array {
  const n = input.length;
  // Worst case: every byte a literal, plus a flag word per 32 items.
  let out = new Uint8Array(n + ((n >> 5) + 2) * 4 + 16);
  let op = 4;
  let flagAt = 0;
  let flags = 0;
  let flagCount = 0;
  let nibbleAt = -1;
  const head = new Int32Array(1 << HASH_BITS).fill(-1);
  const prev = new Int32Array(WINDOW);

  const ensure = (k: number) => {
    if (op + k > out.length) {
      const next = new Uint8Array(Math.max(out.length * 2, op + k));
      next.set(out);
      out = next;
    }
  };
  const pushFlag = (bit: number) => {
    flags = ((flags << 1) | bit) >>> 0;
    if (++flagCount === 32) {
      new DataView(out.buffer).setUint32(flagAt, flags, true);
      ensure(4);
      flagAt = op;
      op += 4;
      flags = 0;
      flagCount = 0;
    }
  };
  const hashAt = (i: number) => (((input[i] << 16) | (input[i + 1] << 8) | input[i + 2]) * 2654435761) >>> (32 - HASH_BITS);
  const insert = (i: number) => {
    if (i + MIN_MATCH > n) return;
    const h = hashAt(i);
    prev[i & (WINDOW - 1)] = head[h];
    head[h] = i;
  };

  let i = 0;
  while (i < n) {
    let bestLen = 0;
    let bestOff = 0;
    if (i + MIN_MATCH <= n) {
      let cand = head[hashAt(i)];
      let chain = MAX_CHAIN;
      const limit = n - i;
      while (cand >= 0 && i - cand <= WINDOW && chain-- > 0) {
        if (input[cand + bestLen] === input[i + bestLen] || bestLen === 0) {
          let len = 0;
          while (len < limit && input[cand + len] === input[i + len]) len++;
          if (len > bestLen) {
            bestLen = len;
            bestOff = i - cand;
            if (len === limit) break;
          }
        }
        const p = prev[cand & (WINDOW - 1)];
        if (p >= cand) break; // slot reused by a newer position
        cand = p;
      }
    }
    if (bestLen < MIN_MATCH) {
      ensure(1);
      out[op++] = input[i];
      pushFlag(0);
      insert(i);
      i++;
      continue;
    }
    ensure(16);
    const m = bestLen - 3;
    const token = (bestOff - 1) << 3;
    if (m < 7) {
      out[op++] = (token | m) & 0xff;
      out[op++] = (token | m) >> 8;
    } else {
      out[op++] = (token | 7) & 0xff;
      out[op++] = (token | 7) >> 8;
      const m2 = m - 7;
      const nibble = Math.min(m2, 15);
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
            out[op++] = m & 0xff;
            out[op++] = m >> 8;
          } else {
            out[op++] = 0;
            out[op++] = 0;
            out[op++] = m & 0xff;
            out[op++] = (m >>> 8) & 0xff;
            out[op++] = (m >>> 16) & 0xff;
            out[op++] = (m >>> 24) & 0xff;
          }
        }
      }
    }
    pushFlag(1);
    for (let k = 0; k < bestLen; k++) insert(i + k);
    i += bestLen;
  }
  // Unused bits of the last flag word are ones, as MS-XCA's own encoder leaves them.
  const rest = 32 - flagCount;
  const last = rest === 32 ? 0xffffffff : (((flags << rest) >>> 0) | ((2 ** rest - 1) >>> 0)) >>> 0;
  new DataView(out.buffer).setUint32(flagAt, last, true);
  return out.slice(0, op);
}
