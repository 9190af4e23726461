// The decoded form of a trace, whichever engine produced it: typed-array columns over one byte
// store. Offsets in the columns (payload, extended items, names) index `bytes`. The layouts of the
// structs (BUF_STRIDE, B_*, WARN_*, PROV_*, TYPE_*, CLR_DIR_*, LH_*) are in assembly/codes.ts.

import type { EtlDecodeError, TraceIncomplete } from "./errors.js";

export interface EventColumns {
  /** Raw timestamp in the trace's clock (normally QPC ticks). */
  timestamp: BigInt64Array;
  keywords: BigUint64Array;
  /** Process id; 0xFFFFFFFF where the header has none (see `flags` & F_NO_PROCESS_INFO). */
  pid: Uint32Array;
  tid: Uint32Array;
  /** Offset of the user data in `bytes`. */
  payloadOffset: Uint32Array;
  payloadLength: Uint16Array;
  /** Bytes from the start of the record to its user data (record start = payloadOffset - headerLength). */
  headerLength: Uint16Array;
  /** Index into the provider table. */
  provider: Uint16Array;
  eventId: Uint16Array;
  task: Uint16Array;
  /** Header flags (low 12 bits) and decoder status bits (high 4 bits, F_*). */
  flags: Uint16Array;
  processor: Uint16Array;
  version: Uint16Array;
  opcode: Uint8Array;
  level: Uint8Array;
  headerType: Uint8Array;
  channel: Uint8Array;
  /** Index into the event type table; EVENT_TYPE_NONE (0xFFFF) for rows beyond its MAX_EVENT_TYPES types. */
  eventType: Uint16Array;
}

export interface ExtendedItemColumns {
  /** Event row of each item; ascending. */
  row: Uint32Array;
  type: Uint16Array;
  size: Uint16Array;
  /** Offset of the item data in `bytes`. */
  offset: Uint32Array;
}

export interface TraceData {
  /** Backing store of every offset in the tables (WASM linear memory for the wasm engine). */
  bytes: Uint8Array;
  events: EventColumns;
  eventCount: number;
  ext: ExtendedItemColumns;
  extCount: number;
  /** Buffer table: `bufferCount` structs of BUF_STRIDE bytes at `buffersOffset` in `bytes`. */
  buffersOffset: number;
  bufferCount: number;
  /** Warning structs (WARN_STRIDE bytes) at `warningsOffset`; `warningTotal` counts those not kept too. */
  warningsOffset: number;
  warningCount: number;
  warningTotal: number;
  /** Provider structs (PROV_STRIDE bytes) at `providersOffset`. */
  providersOffset: number;
  providerCount: number;
  /** Event type structs (TYPE_STRIDE bytes, TYPE_* offsets) at `typesOffset`, in order of first sight. */
  typesOffset: number;
  typeCount: number;
  /** Logfile header struct (LH_* offsets) at `logfileOffset`. */
  logfileOffset: number;
  /** Directory of the typed .NET runtime tables (CLR_DIR_STRIDE bytes per schema event), 0 when not decoded. */
  clrDirOffset: number;
  /** Rows placed in typed tables. */
  clrRows: number;
  /** Bytes of record data kept (the arena). */
  arenaBytes: number;
  /** Bytes of input given (the whole file, even where decoding stopped before its end). */
  inputBytes: number;
  /** Bytes of input decoded: `inputBytes`, or less when decoding stopped early (the offset where it stopped). */
  decodedBytes: number;
  /** Set when the trace is not complete: why, and from which byte offset. */
  incomplete?: TraceIncomplete;
  /** Set when decoding stopped early; every row before its offset is kept. */
  decodeError?: EtlDecodeError;
  /** Hands the backing memory back for reuse once the trace is disposed. */
  release?: () => void;
}
