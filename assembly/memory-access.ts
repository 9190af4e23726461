// Memory accessors of the sources both cores share (see scripts/gen-core-twin.mjs): a little-endian
// read or write of one width, and the match copy of a decompressor. Here they are the WebAssembly
// loads and stores, inlined away; bindings/core/memory-access.ts gives the same names over a
// Uint8Array. `m` names the memory: unused here (there is one), the byte view in the TypeScript core.

export type Mem = usize;

@inline export function ld8(m: Mem, p: usize): u32 { return <u32>load<u8>(p); }
@inline export function ld16(m: Mem, p: usize): u32 { return <u32>load<u16>(p); }
@inline export function ld32(m: Mem, p: usize): u32 { return load<u32>(p); }
@inline export function ldi32(m: Mem, p: usize): i32 { return load<i32>(p); }
@inline export function st8(m: Mem, p: usize, v: u32): void { store<u8>(p, v); }
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
