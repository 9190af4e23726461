// Payload values at TraceEvent's fixed offsets, for the kernel printers. TraceEvent's getters read raw
// memory without looking at the payload's length, so past the end of a short payload it prints whatever
// follows the event in memory, which no reader can reproduce; we read a field that does not wholly fit as
// 0 (a time or a size cut in half would be nonsense, 0 at least says "absent"). One rule for every printer.

/** Whether `n` bytes at `o` are in the payload. */
export const fits = (b: Uint8Array, o: number, n: number): boolean => o >= 0 && o + n <= b.length;

export function u16(b: Uint8Array, o: number): number {
  return fits(b, o, 2) ? b[o] | (b[o + 1] << 8) : 0;
}

/** GetInt16At: sign-extended. */
export function i16(b: Uint8Array, o: number): number {
  return (u16(b, o) << 16) >> 16;
}

export function i32(b: Uint8Array, o: number): number {
  return fits(b, o, 4) ? b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24) : 0;
}

export function u32(b: Uint8Array, o: number): number {
  return i32(b, o) >>> 0;
}

export function u64(b: Uint8Array, o: number): bigint {
  return fits(b, o, 8) ? BigInt(u32(b, o)) | (BigInt(u32(b, o + 4)) << 32n) : 0n;
}

export function i64(b: Uint8Array, o: number): bigint {
  return BigInt.asIntN(64, u64(b, o));
}

/** GetAddressAt: pointer-sized, unsigned. */
export function readPtr(b: Uint8Array, o: number, ptr: number): bigint {
  return ptr === 8 ? u64(b, o) : BigInt(u32(b, o));
}

/** TraceEvent's HostOffset: a 32-bit layout offset moved by `pointers` pointers of the trace's size. */
export function hostOffset(offset: number, pointers: number, ptr: number): number {
  return offset + pointers * (ptr - 4);
}
