// Elements of a column at chosen indices, into a column of their own: through unsigned views of the
// element's width, a loop of one element type each (a 64-bit column as its halves, with no BigInt a value).

/**
 * Elements `rows` of the `count` elements of `width` bytes at `fromOffset` in `from`, to the
 * elements from `toOffset` in `to` (in the order of `rows`). Offsets are aligned to the width.
 */
export function gatherElements(
  width: number,
  from: ArrayBufferLike,
  fromOffset: number,
  count: number,
  rows: Uint32Array,
  to: ArrayBufferLike,
  toOffset: number,
): void {
  const k = rows.length;
  switch (width) {
    case 8:
      return gather64(new Uint32Array(from, fromOffset, 2 * count), rows, new Uint32Array(to, toOffset, 2 * k));
    case 4:
      return gather32(new Uint32Array(from, fromOffset, count), rows, new Uint32Array(to, toOffset, k));
    case 2:
      return gather16(new Uint16Array(from, fromOffset, count), rows, new Uint16Array(to, toOffset, k));
    case 1:
      return gather8(new Uint8Array(from, fromOffset, count), rows, new Uint8Array(to, toOffset, k));
  }
  const src = new Uint8Array(from, fromOffset, count * width),
    dst = new Uint8Array(to, toOffset, k * width);
  for (let i = 0; i < k; i++) for (let b = 0; b < width; b++) dst[i * width + b] = src[rows[i] * width + b];
}

function gather64(from: Uint32Array, rows: Uint32Array, to: Uint32Array): void {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    to[2 * i] = from[2 * r];
    to[2 * i + 1] = from[2 * r + 1];
  }
}
function gather32(from: Uint32Array, rows: Uint32Array, to: Uint32Array): void {
  for (let i = 0; i < rows.length; i++) to[i] = from[rows[i]];
}
function gather16(from: Uint16Array, rows: Uint32Array, to: Uint16Array): void {
  for (let i = 0; i < rows.length; i++) to[i] = from[rows[i]];
}
function gather8(from: Uint8Array, rows: Uint32Array, to: Uint8Array): void {
  for (let i = 0; i < rows.length; i++) to[i] = from[rows[i]];
}
