// Number, date and value formatting the way TraceEvent's PayloadString renders them under the en-US culture on
// .NET Framework (where PerfView's baselines were made): "n0"/"n3" with "," separators, doubles rounded
// from their 15-significant-digit form, hex "x8", GUIDs, enum and flags names.

/** Groups the integer digits of a plain decimal string with ",". */
function group(intDigits: string): string {
  let out = "";
  for (let i = 0; i < intDigits.length; i++) {
    if (i > 0 && (intDigits.length - i) % 3 === 0) out += ",";
    out += intDigits[i];
  }
  return out;
}

/** Integer with thousands separators (C# "n0" of an int or long). */
export function n0(value: number | bigint): string {
  const s = typeof value === "bigint" ? value.toString() : Math.trunc(value).toString();
  return s[0] === "-" ? "-" + group(s.slice(1)) : group(s);
}

/**
 * C# `double.ToString("n" + decimals)` on .NET Framework: the value is first rendered with 15 significant
 * digits, that decimal form is rounded half away from zero, and the integer part is grouped.
 */
export function nFixed(value: number, decimals: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
  const neg = value < 0;
  const abs = Math.abs(value);
  let digits: string;
  let exp: number; // number of digits before the decimal point
  if (abs === 0) {
    digits = "0";
    exp = 1;
  } else {
    const e = abs.toExponential(14); // d.dddddddddddddde±x : 15 significant digits
    const [mant, ex] = e.split("e");
    digits = mant.replace(".", "");
    exp = Number(ex) + 1;
  }
  // digits d0 d1 ... with the decimal point after `exp` digits
  const keep = exp + decimals; // digits kept
  let intPart: string;
  let frac: string;
  if (keep <= 0) {
    const roundUp = keep === 0 && digits[0] >= "5";
    const all = roundUp ? "1".padStart(decimals, "0") : "0".repeat(decimals);
    intPart = "0";
    frac = all;
  } else {
    let kept = digits.slice(0, keep).padEnd(keep, "0");
    if (keep < digits.length && digits[keep] >= "5") {
      // add one at the last kept digit
      const arr = kept.split("").map(Number);
      let i = arr.length - 1;
      while (i >= 0) {
        if (arr[i] === 9) {
          arr[i] = 0;
          i--;
        } else {
          arr[i]++;
          break;
        }
      }
      kept = (i < 0 ? "1" : "") + arr.join("");
      if (i < 0) exp++;
    }
    const intLen = kept.length - decimals;
    intPart = intLen > 0 ? kept.slice(0, intLen) : "0";
    frac = intLen >= 0 ? kept.slice(intLen) : kept.padStart(decimals, "0");
    intPart = intPart.replace(/^0+(?=\d)/, "");
  }
  const zero = /^0*$/.test(intPart + frac);
  const body = group(intPart) + (decimals > 0 ? "." + frac : "");
  return neg && !zero ? "-" + body : body;
}

/** C# "x8" of an unsigned 64-bit value with the "0x" prefix TraceEvent adds to addresses. */
export function hex8(value: bigint | number): string {
  const v = typeof value === "bigint" ? BigInt.asUintN(64, value) : BigInt.asUintN(64, BigInt(Math.trunc(value)));
  return "0x" + v.toString(16).padStart(8, "0");
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * The baseline's DateTime rendering: `ToUniversalTime().ToString("yy/MM/dd HH:mm:ss.ffffff")` of a FILETIME
 * (100 ns ticks since 1601).
 */
export function filetimeText(ft: bigint): string {
  const EPOCH = 116444736000000000n;
  const ticks = ft - EPOCH; // since 1970 in 100 ns
  const ms = Number(ticks / 10000n) + (ticks < 0n && ticks % 10000n !== 0n ? -1 : 0);
  const d = new Date(ms);
  let frac = ticks % 10_000_000n;
  if (frac < 0n) frac += 10_000_000n;
  const micro = String(frac / 10n).padStart(6, "0");
  return `${pad2(d.getUTCFullYear() % 100)}/${pad2(d.getUTCMonth() + 1)}/${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}.${micro}`;
}

/** What DynamicTraceEventData.PayloadValue returns when reading the value throws (DateTime's range checks). */
const OUT_OF_RANGE_TEXT = "<<<EXCEPTION_DURING_VALUE_LOOKUP ArgumentOutOfRangeException>>>";

/**
 * A SYSTEMTIME field (eight 16-bit words: year, month, day of week, day, hour, minute, second, milliseconds)
 * as TraceEvent's DynamicTraceEventData makes it a DateTime (UTC) and the baseline prints it. Its reader takes
 * the milliseconds from the seconds word (the last read does not advance its offset), so the fraction is
 * the second over 1000, never the payload's milliseconds. Values DateTime rejects give PayloadValue's
 * exception text.
 */
export function systemTimeText(b: Uint8Array): string {
  if (b.length < 16) return "";
  const word = (i: number) => ((b[2 * i] | (b[2 * i + 1] << 8)) << 16) >> 16; // GetInt16At: signed
  const year = word(0),
    month = word(1),
    day = word(3),
    hour = word(4),
    minute = word(5),
    second = word(6);
  const millisecond = second; // always 0..59 once the second is valid
  const daysInMonth = month >= 1 && month <= 12 ? new Date(Date.UTC(2000, month, 0)).getUTCDate() : 0;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const maxDay = month === 2 ? (leap ? 29 : 28) : daysInMonth;
  if (
    year < 1 ||
    year > 9999 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > maxDay ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 59
  ) {
    return OUT_OF_RANGE_TEXT;
  }
  const micro = String(millisecond * 1000).padStart(6, "0");
  return `${pad2(year % 100)}/${pad2(month)}/${pad2(day)} ${pad2(hour)}:${pad2(minute)}:${pad2(second)}.${micro}`;
}

/** A .NET enum value: the member name, "A, B" for [Flags] combinations, else the number. */
export function enumText(value: number | bigint, members: ReadonlyArray<readonly [number, string]>, flags: boolean): string {
  const v = typeof value === "bigint" ? Number(value) : value;
  for (const [n, name] of members) if (n === v) return name;
  if (!flags) return String(value);
  // Flags: greedy from the largest member, as Enum.ToString does; leftovers make it print the number.
  const sorted = [...members].filter(([n]) => n !== 0).sort((a, b) => b[0] - a[0]);
  let rest = v >>> 0;
  const names: string[] = [];
  for (const [n, name] of sorted) {
    const u = n >>> 0;
    if ((rest & u) === u && u !== 0) {
      names.unshift(name);
      rest = (rest & ~u) >>> 0;
    }
  }
  if (rest !== 0 || !names.length) return String(value);
  return names.join(", ");
}

/** Hex digits of the first 16 bytes, "..." when longer (TraceEvent's byte[] rendering). */
export function bytesText(b: Uint8Array): string {
  let s = "";
  const n = Math.min(16, b.length);
  for (let i = 0; i < n; i++) s += b[i].toString(16).toUpperCase().padStart(2, "0");
  return b.length > 16 ? s + "..." : s;
}

/** TraceEvent's text of an int field (n0 of the signed value). */
export const int = (v: number) => n0(v | 0);
/** ... of a long field (signed 64-bit). */
export const long = (v: bigint | number) => n0(typeof v === "bigint" ? BigInt.asIntN(64, v) : v);
/** ... of an address field (hex8). */
export const addr = (v: bigint) => hex8(v);

/**
 * .NET Framework's default `ToString()` of a double (precision 15) or float (7): the value rounded to that
 * many significant digits, trailing zeros dropped, in scientific form ("3.09483339131237E-05") when the
 * exponent is below -4 or not below the precision.
 */
export function gText(value: number, precision: 15 | 7): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value === 0) return "0";
  const [mant, ex] = value.toExponential(precision - 1).split("e");
  const exp = Number(ex);
  const neg = mant[0] === "-";
  const digits = mant.replace("-", "").replace(".", "").replace(/0+$/, "") || "0";
  let body: string;
  if (exp < -4 || exp >= precision) {
    const m = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    body = `${m}E${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  } else if (exp < 0) {
    body = "0." + "0".repeat(-exp - 1) + digits;
  } else {
    const int = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    const frac = digits.slice(exp + 1);
    body = frac ? `${int}.${frac}` : int;
  }
  return neg ? "-" + body : body;
}

/** C# `ToString("f" + decimals)` of a double: as nFixed, without group separators. */
export function fFixed(value: number, decimals: number): string {
  return nFixed(value, decimals).replace(/,/g, "");
}
