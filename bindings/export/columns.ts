// The one schema of what is exported: tables as batches of typed-array columns, strings as
// dictionary keys. The Arrow and Parquet writers (arrow.ts, parquet.ts) take nothing else, and the
// builders (event-columns.ts, clr-columns.ts, side-tables.ts) make nothing else.

import { giveBack, takeBuffer } from "../decode/result/reuse.js";

/** A column's type, named as Arrow names them; "timestamp" is microseconds since 1970 UTC, in an int64. */
export type ColumnType =
  | "bool"
  | "int8"
  | "uint8"
  | "int16"
  | "uint16"
  | "int32"
  | "uint32"
  | "int64"
  | "uint64"
  | "float32"
  | "float64"
  | "utf8"
  | "binary"
  | "timestamp";

export interface ExportField {
  name: string;
  type: ColumnType;
  /** Whether a value may be null (Parquet OPTIONAL). */
  nullable: boolean;
}

export type NumberArray =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/**
 * One column of a batch. Numbers, booleans (Uint8Array of 0/1) and timestamps: `values`, one per
 * row. Strings and binary: `values` holds Int32 keys into `dictionary`.
 */
export interface ExportColumn {
  values: NumberArray;
  dictionary?: (string | Uint8Array)[];
  /** 0 where the row's value is null (absent: no nulls). */
  valid?: Uint8Array;
}

/** Rows of one table: a column per field of its schema, in the same order. */
export interface ExportBatch {
  length: number;
  columns: ExportColumn[];
}

/** Typed-array type of each column type's values. */
export const VALUE_ARRAYS: Record<ColumnType, { new (n: number): NumberArray }> = {
  bool: Uint8Array,
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  float32: Float32Array,
  float64: Float64Array,
  utf8: Int32Array,
  binary: Int32Array,
  timestamp: BigInt64Array,
};

/** A typed array's constructor (the kinds NumberArray has). */
export interface NumberArrayType<T extends NumberArray> {
  new (length: number): T;
  new (buffer: ArrayBuffer, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

/**
 * Where a batch's arrays come from: zeroed arrays of `length` elements (or, with `zeroed` false, of
 * any contents: for a caller that writes every element). By default fresh ones (FRESH_ARRAYS); a
 * converter's come from memory its earlier batches were written from (PooledArrays), as a fresh page
 * costs a page fault when first written.
 */
export interface ExportArrays {
  take<T extends NumberArray>(Type: NumberArrayType<T>, length: number, zeroed?: boolean): T;
}

export const FRESH_ARRAYS: ExportArrays = { take: (Type, length) => new Type(length) };

/** Small buffers given back, by size class (a power of two from 2^SMALL_MIN_BITS bytes up to 64 KiB). */
const SMALL_MIN_BITS = 8;
const smallFree: ArrayBuffer[][] = Array.from({ length: 17 - SMALL_MIN_BITS }, () => []);
/** Buffers kept per size class at most. */
const SMALL_KEPT = 256;

/**
 * Arrays from memory written before; `release` gives them back once nothing reads them. Large ones
 * come from the decoder's pool (decode/result/reuse.ts); small ones (a table's few rows of a batch, a
 * thousand arrays a batch in all) from free lists of their own, as a fresh small array costs an
 * allocation and a finalizer of its backing store, microseconds each.
 */
export class PooledArrays implements ExportArrays {
  private held: ArrayBuffer[] = [];
  private heldSmall: ArrayBuffer[] = [];

  take<T extends NumberArray>(Type: NumberArrayType<T>, length: number, zeroed = true): T {
    const bytes = length * Type.BYTES_PER_ELEMENT;
    if (bytes < 1 << 16) {
      if (bytes <= 64) return new Type(length);
      const cls = Math.max(0, 32 - Math.clz32(bytes - 1) - SMALL_MIN_BITS);
      const buffer = smallFree[cls].pop() ?? new ArrayBuffer(1 << (cls + SMALL_MIN_BITS));
      this.heldSmall.push(buffer);
      if (zeroed) new Uint8Array(buffer, 0, bytes).fill(0);
      return new Type(buffer, 0, length);
    }
    const buffer = takeBuffer(bytes, zeroed);
    this.held.push(buffer);
    return new Type(buffer, 0, length);
  }

  /** Gives every array taken back to the pool: none may be read after. */
  release(): void {
    giveBack(this.held);
    this.held = [];
    for (const b of this.heldSmall) {
      const list = smallFree[31 - Math.clz32(b.byteLength) - SMALL_MIN_BITS];
      if (list.length < SMALL_KEPT) list.push(b);
    }
    this.heldSmall = [];
  }
}

/** Strings (or byte strings) as dictionary keys, one dictionary per batch. */
export class DictionaryBuilder<T extends string | Uint8Array = string> {
  readonly keys: Int32Array;
  readonly dictionary: T[] = [];
  private readonly index = new Map<string, number>();
  valid?: Uint8Array;

  /** `written`: the caller sets every row's key (or null), so the keys need not start zeroed. */
  constructor(
    readonly length: number,
    private readonly arrays: ExportArrays = FRESH_ARRAYS,
    written = false,
  ) {
    this.keys = arrays.take(Int32Array, length, !written);
  }

  /** The key of `value` (added on first sight); `id` names it in the map when values are not strings. */
  key(value: T, id: string = value as string): number {
    if (id === undefined) id = value as string;
    let k = this.index.get(id);
    if (k === undefined) {
      k = this.dictionary.length;
      this.dictionary.push(value);
      this.index.set(id, k);
    }
    return k;
  }

  /**
   * The key of the value whose bytes are `src[offset, offset + n)`, made by `decode` on first sight
   * only: rows repeating a value cost a hash of its bytes and their comparison, not a string.
   */
  keyOfBytes(src: Uint8Array, offset: number, n: number, decode: (src: Uint8Array, offset: number, n: number) => T): number {
    const b = (this.bytesIndex ??= new BytesIndex());
    const h = b.hash(src, offset, n);
    const found = b.find(h, src, offset, n);
    if (found >= 0) return found;
    const value = decode(src, offset, n);
    const key = this.key(value, typeof value === "string" ? value : undefined);
    b.add(h, src, offset, n, key);
    return key;
  }

  private bytesIndex?: BytesIndex;

  set(row: number, value: T): void {
    this.keys[row] = this.key(value);
  }

  setNull(row: number): void {
    (this.valid ??= this.arrays.take(Uint8Array, this.length).fill(1))[row] = 0;
  }

  column(): ExportColumn {
    return { values: this.keys, dictionary: this.dictionary, valid: this.valid };
  }
}

/**
 * Byte strings seen, each with its dictionary key: an open-addressing table of their hashes, their
 * bytes one after another in an arena, compared four bytes at a time.
 */
class BytesIndex {
  // (small at first: a batch makes one per string column, most of a few values)
  private slots = new Int32Array(64).fill(-1); // entry index, -1: empty
  private hashes = new Int32Array(32);
  private starts = new Int32Array(32);
  private lengths = new Int32Array(32);
  private keys = new Int32Array(32);
  private count = 0;
  private arena = new Uint8Array(1 << 12);
  private arenaView = new DataView(this.arena.buffer);
  private used = 0;
  private src?: Uint8Array;
  private srcView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));

  /**
   * A hash of the bytes: the length and three words (first, middle, last). Values that share all
   * four only cost a comparison more; every lookup compares the bytes anyway.
   */
  hash(src: Uint8Array, offset: number, n: number): number {
    let h = Math.imul(2166136261 ^ n, 16777619);
    if (n < 4) {
      for (let k = 0; k < n; k++) h = Math.imul(h ^ src[offset + k], 16777619);
      return h;
    }
    const v = this.viewOf(src);
    h = Math.imul(h ^ v.getInt32(offset, true), 16777619);
    h = Math.imul(h ^ v.getInt32(offset + ((n >>> 1) & ~3), true), 16777619);
    return Math.imul(h ^ v.getInt32(offset + n - 4, true), 16777619);
  }

  /** The key of the bytes when seen before, else -1. */
  find(h: number, src: Uint8Array, offset: number, n: number): number {
    const mask = this.slots.length - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const e = this.slots[s];
      if (e < 0) return -1;
      if (this.hashes[e] === h && this.lengths[e] === n && this.same(this.starts[e], src, offset, n)) return this.keys[e];
    }
  }

  add(h: number, src: Uint8Array, offset: number, n: number, key: number): void {
    const e = this.count++;
    if (e === this.hashes.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(2 * a.length);
        b.set(a);
        return b;
      };
      this.hashes = grow(this.hashes);
      this.starts = grow(this.starts);
      this.lengths = grow(this.lengths);
      this.keys = grow(this.keys);
    }
    if (this.used + n > this.arena.length) {
      const arena = new Uint8Array(Math.max(2 * this.arena.length, this.used + n));
      arena.set(this.arena.subarray(0, this.used));
      this.arena = arena;
      this.arenaView = new DataView(arena.buffer);
    }
    this.arena.set(src.subarray(offset, offset + n), this.used);
    this.hashes[e] = h;
    this.starts[e] = this.used;
    this.lengths[e] = n;
    this.keys[e] = key;
    this.used += n;
    // (at most half full)
    if (2 * this.count > this.slots.length) {
      this.slots = new Int32Array(2 * this.slots.length).fill(-1);
      for (let k = 0; k < this.count; k++) this.place(k);
    } else this.place(e);
  }

  private place(e: number): void {
    const mask = this.slots.length - 1;
    let s = this.hashes[e] & mask;
    while (this.slots[s] >= 0) s = (s + 1) & mask;
    this.slots[s] = e;
  }

  private same(at: number, src: Uint8Array, offset: number, n: number): boolean {
    const a = this.arenaView,
      v = this.viewOf(src);
    let k = 0;
    for (; k + 4 <= n; k += 4) if (a.getInt32(at + k, true) !== v.getInt32(offset + k, true)) return false;
    for (; k < n; k++) if (this.arena[at + k] !== src[offset + k]) return false;
    return true;
  }

  /** A DataView of `src` (kept: a batch's strings are mostly in one array). */
  private viewOf(src: Uint8Array): DataView {
    if (src !== this.src) {
      this.src = src;
      this.srcView = new DataView(src.buffer, src.byteOffset, src.byteLength);
    }
    return this.srcView;
  }
}

/**
 * Writes `us` (an integer of magnitude below 2^53, e.g. microseconds) into element `i` of an int64
 * column through its 32-bit halves: no BigInt per row.
 */
export function setInt64(halves: Uint32Array, i: number, us: number): void {
  const hi = Math.floor(us / 4294967296);
  halves[2 * i] = us - hi * 4294967296;
  halves[2 * i + 1] = hi;
}

/** The 32-bit halves of an int64 column (little-endian: low word first). */
export function halvesOf(a: BigInt64Array | BigUint64Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
}

/** Rows `rows` of a typed array (all of it when null), in arrays from `arrays`. */
export function pick<T extends NumberArray>(a: T, rows: Uint32Array | null, arrays: ExportArrays = FRESH_ARRAYS): T {
  const out = arrays.take(a.constructor as NumberArrayType<T>, rows ? rows.length : a.length, false);
  if (!rows) (out as Uint8Array).set(a as Uint8Array);
  else gather(out, a, rows);
  return out;
}

/** out[i] = a[rows[i]] (a hot loop: a function of its own). */
function gather<T extends NumberArray>(out: T, a: T, rows: Uint32Array): void {
  for (let i = 0; i < rows.length; i++) (out as unknown as number[])[i] = (a as unknown as number[])[rows[i]];
}
