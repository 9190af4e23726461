// Memory accessors of the sources both cores share (see scripts/gen-core-twin.mjs): a little-endian
// read or write of one width, the copies of a decompressor, and clz32. Here they are the WebAssembly
// loads and stores, inlined away; bindings/core/memory-access.ts gives the same names over a
// Uint8Array. `m` names the memory: unused here (there is one), the byte view in the TypeScript core.

export type Mem = usize;

@inline export function ld8(m: Mem, p: usize): u32 { return <u32>load<u8>(p); }
@inline export function ld16(m: Mem, p: usize): u32 { return <u32>load<u16>(p); }
@inline export function ld32(m: Mem, p: usize): u32 { return load<u32>(p); }
@inline export function ldi32(m: Mem, p: usize): i32 { return load<i32>(p); }
@inline export function st8(m: Mem, p: usize, v: u32): void { store<u8>(p, v); }
@inline export function st16(m: Mem, p: usize, v: u32): void { store<u16>(p, v); }
@inline export function st32(m: Mem, p: usize, v: u32): void { store<u32>(p, v); }

/** Copies `n` bytes from `src` up to `dst` forward: where the ranges overlap, the source repeats. */
@inline export function copyMatch(m: Mem, dst: usize, src: usize, n: usize): void {
  if (dst - src >= n) {
    memory.copy(dst, src, n);
    return;
  }
  let stop = dst + n;
  while (dst < stop) {
    store<u8>(dst, load<u8>(src));
    dst++;
    src++;
  }
}

/** Leading zero bits of a 32-bit value (32 for 0). */
@inline export function clz32(x: i32): i32 { return clz<i32>(x); }

/**
 * Copies `n` (0 to 32) bytes from `src` to `dst`, ranges that do not overlap, reading the 32 bytes
 * at `src` and writing up to 32 at `dst`: the caller has room for both and overwrites the excess.
 */
@inline export function copyRun(m: Mem, dst: usize, src: usize, n: u32): void {
  store<u64>(dst, load<u64>(src));
  if (n > 8) {
    store<u64>(dst, load<u64>(src, 8), 8);
    if (n > 16) {
      store<u64>(dst, load<u64>(src, 16), 16);
      store<u64>(dst, load<u64>(src, 24), 24);
    }
  }
}

/**
 * copyMatch (`n` >= 1, `dst` > `src`) in 8 or 16 bytes a step, which may also write the 64 bytes
 * after `dst + n`: the caller has room for them and overwrites them.
 */
@inline export function copyMatchWide(m: Mem, dst: usize, src: usize, n: usize): void {
  let stop = dst + n;
  let offset = dst - src;
  if (offset >= 16) {
    // 64 bytes whatever the length (most matches are shorter), then the rest
    copy16(dst, src);
    copy16(dst + 16, src + 16);
    copy16(dst + 32, src + 32);
    copy16(dst + 48, src + 48);
    dst += 64;
    src += 64;
    while (dst < stop) {
      copy16(dst, src);
      dst += 16;
      src += 16;
    }
    return;
  }
  if (offset < 8) {
    // the first 8 bytes one at a time, then from a multiple of the offset back that is 8 or more
    for (let i: usize = 0; i < 8; i++) store<u8>(dst + i, load<u8>(src + i));
    dst += 8;
    let step = offset;
    while (step < 8) step += offset;
    src = dst - step;
  }
  while (dst < stop) {
    store<u64>(dst, load<u64>(src));
    dst += 8;
    src += 8;
  }
}

/** 16 bytes, all read before any is written. */
@inline function copy16(dst: usize, src: usize): void {
  let a = load<u64>(src);
  let b = load<u64>(src, 8);
  store<u64>(dst, a);
  store<u64>(dst, b, 8);
}
