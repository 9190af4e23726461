// GUIDs as 16 bytes in Windows order (Data1..3 little-endian, Data4 as bytes) and their text form.

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Text form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` of the GUID at `offset`. */
export function formatGuid(bytes: Uint8Array, offset: number): string {
  const b = (i: number) => HEX[bytes[offset + i]];
  return b(3) + b(2) + b(1) + b(0) + "-" + b(5) + b(4) + "-" + b(7) + b(6) + "-" + b(8) + b(9) + "-" + b(10) + b(11) + b(12) + b(13) + b(14) + b(15);
}

/** The 16 bytes of a GUID in text form (braces optional). */
export function parseGuid(text: string): Uint8Array {
  const hex = text.replace(/[{}]/g, "").toLowerCase();
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(hex)) {
    throw new TypeError(`not a GUID: ${text}`);
  }
  const h = hex.replace(/-/g, "");
  const out = new Uint8Array(16);
  const byte = (i: number) => parseInt(h.slice(i * 2, i * 2 + 2), 16);
  const order = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];
  for (let i = 0; i < 16; i++) out[order[i]] = byte(i);
  return out;
}

const GUID_TEXT = /^\{?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}?$/i;

/** A provider key given as a GUID (braces optional, any case) in formatGuid's form; undefined for a name. */
export function guidOfKey(key: string): string | undefined {
  return GUID_TEXT.test(key) ? key.replace(/[{}]/g, "").toLowerCase() : undefined;
}
