// The one schema of what is exported: tables as batches of typed-array columns, strings as
// dictionary keys. The Arrow and Parquet writers (arrow.ts, parquet.ts) take nothing else, and the
// builders (event-columns.ts, clr-columns.ts, side-tables.ts) make nothing else.

/** A column's type, named as Arrow names them; "timestamp" is microseconds since 1970 UTC, in an int64. */
export type ColumnType =
  | "bool" | "int8" | "uint8" | "int16" | "uint16" | "int32" | "uint32" | "int64" | "uint64" | "float32" | "float64"
  | "utf8" | "binary" | "timestamp";

export interface ExportField {
  name: string;
  type: ColumnType;
  /** Whether a value may be null (Parquet OPTIONAL). */
  nullable: boolean;
}

export type NumberArray =
  | Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array
  | BigInt64Array | BigUint64Array;

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

/** A table: its fields, then its rows batch by batch. */
export interface ExportSchema {
  fields: ExportField[];
}

/** Typed-array type of each column type's values. */
export const VALUE_ARRAYS: Record<ColumnType, { new (n: number): NumberArray }> = {
  bool: Uint8Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array, int32: Int32Array,
  uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array, float32: Float32Array, float64: Float64Array,
  utf8: Int32Array, binary: Int32Array, timestamp: BigInt64Array,
};

/** Strings (or byte strings) as dictionary keys, one dictionary per batch. */
export class DictionaryBuilder<T extends string | Uint8Array = string> {
  readonly keys: Int32Array;
  readonly dictionary: T[] = [];
  private readonly index = new Map<string, number>();
  valid?: Uint8Array;

  constructor(readonly length: number) {
    this.keys = new Int32Array(length);
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
   * only: rows repeating a value cost a hash of its bytes, not a string.
   */
  keyOfBytes(src: Uint8Array, offset: number, n: number, decode: (src: Uint8Array, offset: number, n: number) => T): number {
    // (a hash of at most 24 of the bytes, an odd stride apart, and the last: equal bytes are compared below)
    let h = 2166136261 ^ n;
    const stride = ((n / 24) | 0) | 1;
    for (let k = 0; k < n; k += stride) h = Math.imul(h ^ src[offset + k], 16777619);
    if (n) h = Math.imul(h ^ src[offset + n - 1], 16777619);
    const list = this.byHash.get(h);
    if (list) {
      for (const key of list) {
        const raw = this.raw[key];
        if (raw.length !== n) continue;
        let same = true;
        for (let k = 0; k < n && same; k++) same = raw[k] === src[offset + k];
        if (same) return key;
      }
    }
    const value = decode(src, offset, n);
    const key = this.key(value, typeof value === "string" ? value : undefined);
    if (this.raw[key] === undefined) {
      this.raw[key] = src.slice(offset, offset + n);
      if (list) list.push(key);
      else this.byHash.set(h, [key]);
    }
    return key;
  }

  private readonly byHash = new Map<number, number[]>();
  private readonly raw: Uint8Array[] = [];

  set(row: number, value: T): void {
    this.keys[row] = this.key(value);
  }

  setNull(row: number): void {
    (this.valid ??= new Uint8Array(this.length).fill(1))[row] = 0;
  }

  column(): ExportColumn {
    return { values: this.keys, dictionary: this.dictionary, valid: this.valid };
  }
}

/**
 * Writes `us` (an integer below 2^53, e.g. microseconds) into element `i` of an int64 column
 * through its 32-bit halves: no BigInt per row.
 */
export function setInt64(halves: Uint32Array, i: number, us: number): void {
  halves[2 * i] = us % 4294967296;
  halves[2 * i + 1] = Math.floor(us / 4294967296);
}

/** The 32-bit halves of an int64 column (little-endian: low word first). */
export function halvesOf(a: BigInt64Array | BigUint64Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
}

/** Rows `rows` of a typed array (all of it when null). */
export function pick<T extends NumberArray>(a: T, rows: Uint32Array | null): T {
  if (!rows) return a.slice() as T;
  const out = new (a.constructor as { new (n: number): T })(rows.length);
  for (let i = 0; i < rows.length; i++) (out as unknown as number[])[i] = (a as unknown as number[])[rows[i]];
  return out;
}
