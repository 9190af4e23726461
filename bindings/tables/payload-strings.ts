// NUL-terminated strings inside payloads: the text and the offset just past the terminator (the end
// of the bytes when there is none).

export function utf16z(b: Uint8Array, at: number): [string, number] {
  let s = "";
  let p = at;
  while (p + 1 < b.length) {
    const c = b[p] | (b[p + 1] << 8);
    p += 2;
    if (c === 0) return [s, p];
    s += String.fromCharCode(c);
  }
  return [s, b.length];
}

export function ansiz(b: Uint8Array, at: number): [string, number] {
  let s = "";
  let p = at;
  while (p < b.length && b[p] !== 0) s += String.fromCharCode(b[p++]);
  return [s, Math.min(p + 1, b.length)];
}
