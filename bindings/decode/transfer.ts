// Moving decoded tables between threads: every column, the byte store and the typed-table blocks
// travel as ArrayBuffers of their own, transferred, not copied, where they own their whole buffer
// (views into the core's memory are copied: a WebAssembly memory's buffer cannot be transferred).

import type { EventColumns, ExtendedItemColumns, TraceData } from "./trace-data.js";
import { EtlDecodeError } from "./errors.js";

export interface PackedTrace {
  bytes: Uint8Array;
  events: EventColumns;
  ext: ExtendedItemColumns;
  clr?: TraceData["clr"];
  scalars: Omit<TraceData, "bytes" | "events" | "ext" | "clr" | "release" | "inCore" | "decodeError">;
  /** A decode that stopped early: its offset and message (an error's class does not survive postMessage). */
  decodeError?: { offset: number; message: string };
}

type View = ArrayBufferView & { slice(): View; length: number };

/** Packs decoded tables for postMessage, with the buffers to transfer. */
export function packTraceData(data: TraceData): { message: PackedTrace; transfer: ArrayBuffer[] } {
  const transfer = new Set<ArrayBuffer>();
  // a view that owns its whole buffer moves; any other is copied into one that does
  const own = <T extends ArrayBufferView>(v: T): T => {
    const buffer = v.buffer as ArrayBuffer;
    const whole = v.byteOffset === 0 && v.byteLength === buffer.byteLength && !transfer.has(buffer)
      && !(typeof SharedArrayBuffer !== "undefined" && buffer instanceof SharedArrayBuffer);
    const out = whole ? v : ((v as unknown as View).slice() as unknown as T);
    transfer.add(out.buffer as ArrayBuffer);
    return out;
  };
  const columns = <T extends object>(cols: T): T =>
    Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, own(v as ArrayBufferView)])) as T;
  const { bytes, events, ext, clr, release: _r, inCore: _i, decodeError, ...scalars } = data;
  const stopped = decodeError && { offset: decodeError.offset, message: decodeError.message.replace(/ \(at byte offset \d+\)$/, "") };
  const message: PackedTrace = {
    // (the byte store of a one-window trace is the core's memory, which cannot be transferred: copied)
    bytes: own(data.inCore ? bytes.slice() : bytes),
    events: columns(events),
    ext: columns(ext),
    clr: clr && { counts: own(clr.counts), blocks: clr.blocks.map((b) => b && own(b)) },
    scalars,
    decodeError: stopped,
  };
  return { message, transfer: [...transfer] };
}

/** Rebuilds the tables on the receiving side. */
export function unpackTraceData(m: PackedTrace): TraceData {
  const decodeError = m.decodeError && new EtlDecodeError(m.decodeError.offset, m.decodeError.message);
  return { ...m.scalars, bytes: m.bytes, events: m.events, ext: m.ext, clr: m.clr, decodeError };
}
