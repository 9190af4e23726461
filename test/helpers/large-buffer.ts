// Traces with one buffer too large for a memory limit. The large buffer is buffer `index` with its
// BufferSize raised to `size` (its records end at its Offset as before; the rest is zeros): put
// right after the original ("copy"), or in its place ("resize"). A decode under a limit that cannot
// hold it stops there, every row before it kept. `offset` is where the large buffer starts.

export function withLargeBuffer(bytes: Uint8Array, index: number, size: number, mode: "copy" | "resize" = "copy"): { bytes: Uint8Array; offset: number } {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  for (let i = 0; i < index; i++) at += v.getUint32(at, true);
  const end = at + v.getUint32(at, true);
  const big = new Uint8Array(size);
  big.set(bytes.subarray(at, end));
  new DataView(big.buffer).setUint32(0, size, true);
  const offset = mode === "copy" ? end : at;
  const out = new Uint8Array(offset + size + (bytes.length - end));
  out.set(bytes.subarray(0, offset));
  out.set(big, offset);
  out.set(bytes.subarray(end), offset + size);
  return { bytes: out, offset };
}
