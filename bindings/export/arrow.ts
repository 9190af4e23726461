// Export batches as Arrow (apache-arrow): record batches over the columns' own typed arrays (no
// copy), strings as dictionary columns with each batch's dictionary (written again only where it
// changed), and the IPC stream format written batch by batch.

import type { Bool, DataType, Field, RecordBatch, Schema, Vector } from "apache-arrow";
import arrow from "./arrow-library.js";
import type { ColumnType, ExportBatch, ExportColumn, ExportField } from "./columns.js";
import { concatBytes } from "../decode/result/trace-data.js";

const {
  Binary,
  Bool: BoolType,
  Dictionary,
  Field: ArrowField,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  RecordBatch: ArrowRecordBatch,
  Schema: ArrowSchema,
  RecordBatchStreamWriter,
  Struct,
  TimestampMicrosecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  makeData,
  vectorFromArray,
} = arrow;

function valueType(type: ColumnType): DataType {
  switch (type) {
    case "bool":
      return new BoolType();
    case "int8":
      return new Int8();
    case "uint8":
      return new Uint8();
    case "int16":
      return new Int16();
    case "uint16":
      return new Uint16();
    case "int32":
      return new Int32();
    case "uint32":
      return new Uint32();
    case "int64":
      return new Int64();
    case "uint64":
      return new Uint64();
    case "float32":
      return new Float32();
    case "float64":
      return new Float64();
    case "timestamp":
      return new TimestampMicrosecond("UTC");
    case "utf8":
      return new Utf8();
    case "binary":
      return new Binary();
  }
}

/** The Arrow schema of a table: strings and binary as dictionaries (ids in field order). */
export function arrowSchema(fields: readonly ExportField[]): Schema {
  let id = 0;
  return new ArrowSchema(
    fields.map((f) => {
      const type = f.type === "utf8" || f.type === "binary" ? new Dictionary(valueType(f.type), new Int32(), id++) : valueType(f.type);
      return new ArrowField(f.name, type, f.nullable);
    }),
  );
}

/** Arrow's validity bitmap (bit set: valid) of a 0/1 byte per row, and the null count. */
function bitmap(valid: Uint8Array | undefined, n: number): { nullBitmap?: Uint8Array; nullCount: number } {
  if (!valid) return { nullCount: 0 };
  const bits = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (valid[i]) bits[i >> 3] |= 1 << (i & 7);
    else nulls++;
  }
  return nulls ? { nullBitmap: bits, nullCount: nulls } : { nullCount: 0 };
}

/**
 * The dictionaries of a stream's last batch, by column, with their Arrow vectors: a batch whose
 * dictionary is the same list of values takes the same vector, which the stream writer then does not
 * write again (a batch's names, providers and processes are mostly the batch before's).
 */
class DictionaryCache {
  private values: (readonly (string | Uint8Array)[] | undefined)[] = [];
  private vectors: Vector[] = [];

  vector(column: number, values: readonly (string | Uint8Array)[], type: DataType): Vector {
    const last = this.values[column];
    if (last && sameValues(last, values)) return this.vectors[column];
    this.values[column] = values.slice();
    return (this.vectors[column] = vectorFromArray(values as string[], type));
  }
}

function sameValues(a: readonly (string | Uint8Array)[], b: readonly (string | Uint8Array)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i],
      y = b[i];
    if (x === y) continue;
    if (typeof x === "string" || typeof y === "string" || x.length !== y.length) return false;
    for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return false;
  }
  return true;
}

function columnData(field: Field, f: ExportField, c: ExportColumn, n: number, column: number, cache?: DictionaryCache) {
  const nulls = bitmap(c.valid, n);
  if (field.type instanceof Dictionary) {
    const values = c.dictionary ?? [];
    const dictionary = cache ? cache.vector(column, values, field.type.dictionary) : vectorFromArray(values, field.type.dictionary);
    return makeData({ type: field.type, length: n, data: c.values as Int32Array, dictionary, ...nulls });
  }
  if (f.type === "bool") {
    // (Arrow packs booleans in bits)
    const bits = bitmap(c.values as Uint8Array, n).nullBitmap ?? new Uint8Array((n + 7) >> 3);
    return makeData({ type: field.type as Bool, length: n, data: bits, ...nulls });
  }
  return makeData({ type: field.type, length: n, data: c.values, ...nulls } as never);
}

/** One export batch as an Arrow record batch of `schema` (made by arrowSchema from `fields`). */
export function arrowBatch(schema: Schema, fields: readonly ExportField[], batch: ExportBatch): RecordBatch {
  return recordBatch(schema, fields, batch);
}

/** arrowBatch; `cache`: the dictionaries of the stream's batch before, reused where a dictionary is the same. */
function recordBatch(schema: Schema, fields: readonly ExportField[], batch: ExportBatch, cache?: DictionaryCache): RecordBatch {
  const n = batch.length;
  const children = schema.fields.map((field, i) => columnData(field, fields[i], batch.columns[i], n, i, cache));
  return new ArrowRecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children }));
}

/** An apache-arrow stream writer whose bytes are kept as the chunks it writes (views of the columns, not a joined copy). */
class ChunkedStreamWriter extends RecordBatchStreamWriter {
  private chunks: Uint8Array[] = [];

  protected override _write(chunk: ArrayBufferView | ArrayBuffer): this {
    if (!this._started) return this;
    const bytes = ArrayBuffer.isView(chunk) ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength) : new Uint8Array(chunk);
    if (bytes.byteLength) {
      this.chunks.push(bytes);
      this._position += bytes.byteLength;
    }
    return this;
  }

  /** The chunks written since the last call. */
  take(): Uint8Array[] {
    const c = this.chunks;
    this.chunks = [];
    return c;
  }
}

/** The chunks of an Arrow IPC stream of one batch (schema, dictionaries, record batch, end), views of its columns. */
export function oneBatchStream(schema: Schema, fields: readonly ExportField[], batch: ExportBatch): Uint8Array[] {
  const w = new ChunkedStreamWriter({ autoDestroy: false });
  w.write(recordBatch(schema, fields, batch));
  w.finish();
  return w.take();
}

/**
 * An Arrow IPC stream, written batch by batch: the schema message once, then each batch's
 * dictionaries (sent again where they changed, which the stream format reads as replacements) and record
 * batch, then the end marker. The bytes come out as chunks that view the batch's own columns: a sink
 * writes them as they are (`chunks`), or joined into one array (`write`).
 */
export class ArrowStreamWriter {
  private readonly schema: Schema;
  private readonly writer = new ChunkedStreamWriter({ autoDestroy: false });
  private readonly dictionaries = new DictionaryCache();
  private started = false;

  constructor(private readonly fields: readonly ExportField[]) {
    this.schema = arrowSchema(fields);
  }

  /** Encodes a batch; returns the chunks to append to the stream, in order. */
  chunks(batch: ExportBatch): Uint8Array[] {
    if (!batch.length && this.started) return [];
    this.started = true;
    this.writer.write(recordBatch(this.schema, this.fields, batch, this.dictionaries));
    return this.writer.take();
  }

  /** Encodes a batch; returns the bytes to append to the stream. */
  write(batch: ExportBatch): Uint8Array {
    return concatBytes(this.chunks(batch));
  }

  /** Ends the stream; returns its last chunks (the schema too, when no batch was written). */
  finishChunks(): Uint8Array[] {
    if (!this.started) this.writer.reset(undefined, this.schema);
    this.started = true;
    this.writer.finish();
    return this.writer.take();
  }

  /** Ends the stream; returns its last bytes (the schema too, when no batch was written). */
  finish(): Uint8Array {
    return concatBytes(this.finishChunks());
  }
}
