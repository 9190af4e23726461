// Moving decoded tables between threads: the tables live in one byte store, so they travel as one
// ArrayBuffer (transferred, not copied) plus the offsets of every column.

import type { EventColumns, ExtendedItemColumns, TraceData } from "./trace-data.js";
import { EtlDecodeError } from "./errors.js";

type Ctor = { new (buffer: ArrayBuffer, byteOffset: number, length: number): ArrayBufferView; name: string };
const CTORS: Record<string, Ctor> = {
  Uint8Array, Uint16Array, Uint32Array, BigInt64Array, BigUint64Array, Int8Array, Int16Array, Int32Array, Float32Array, Float64Array,
} as unknown as Record<string, Ctor>;

interface ViewRef {
  type: string;
  byteOffset: number;
  length: number;
}

export interface PackedTrace {
  buffer: ArrayBuffer;
  events: Record<string, ViewRef>;
  ext: Record<string, ViewRef>;
  scalars: Omit<TraceData, "bytes" | "events" | "ext" | "release" | "decodeError">;
  /** A decode that stopped early: its offset and message (an error's class does not survive postMessage). */
  decodeError?: { offset: number; message: string };
}

function ref(v: ArrayBufferView & { length: number }): ViewRef {
  return { type: v.constructor.name, byteOffset: v.byteOffset, length: v.length };
}

function view(buffer: ArrayBuffer, r: ViewRef): ArrayBufferView {
  const C = CTORS[r.type];
  if (!C) throw new TypeError(`etw-wasm: unknown column type ${r.type}`);
  return new C(buffer, r.byteOffset, r.length);
}

/**
 * Packs decoded tables for postMessage. The byte store is copied once into a plain ArrayBuffer
 * (memory owned by WebAssembly cannot be transferred); that buffer is then transferred.
 */
export function packTraceData(data: TraceData): { message: PackedTrace; transfer: ArrayBuffer[] } {
  const source = data.bytes;
  const buffer = (source.buffer as ArrayBuffer).slice(source.byteOffset, source.byteOffset + source.byteLength);
  const events = Object.fromEntries(Object.entries(data.events).map(([k, v]) => [k, ref(v)]));
  const ext = Object.fromEntries(Object.entries(data.ext).map(([k, v]) => [k, ref(v)]));
  const { bytes: _b, events: _e, ext: _x, release: _r, decodeError, ...scalars } = data;
  const stopped = decodeError && { offset: decodeError.offset, message: decodeError.message.replace(/ \(at byte offset \d+\)$/, "") };
  return { message: { buffer, events, ext, scalars, decodeError: stopped }, transfer: [buffer] };
}

/** Rebuilds the tables on the receiving side, as views over the transferred buffer. */
export function unpackTraceData(m: PackedTrace): TraceData {
  const events = Object.fromEntries(Object.entries(m.events).map(([k, r]) => [k, view(m.buffer, r)])) as unknown as EventColumns;
  const ext = Object.fromEntries(Object.entries(m.ext).map(([k, r]) => [k, view(m.buffer, r)])) as unknown as ExtendedItemColumns;
  const decodeError = m.decodeError && new EtlDecodeError(m.decodeError.offset, m.decodeError.message);
  return { ...m.scalars, bytes: new Uint8Array(m.buffer), events, ext, decodeError };
}
