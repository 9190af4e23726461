// The EventPipe file format as the reader gives it (nettrace-format.md; "§n" refers to its sections):
// the codes of its errors and warnings, its block kinds, payload type codes and label bits, and the
// struct-of-arrays result types of reader.ts.

// ---------------------------------------------------------------------------------------------
// Codes

/** Fatal errors (NettraceFormatError.code). */
export const NE_TRUNCATED = 1; // input ends inside a structure (or without the end-of-stream marker)
export const NE_BAD_MAGIC = 2; // neither "Nettrace" nor a FastSerialization stream header
export const NE_UNSUPPORTED_VERSION = 3; // format/Trace-object version this reader does not accept
export const NE_BAD_OBJECT = 4; // FastSerialization framing broken (tags, type name, block size)
export const NE_BAD_TRACE = 5; // Trace object/block missing, misplaced or malformed
export const NE_BAD_BLOCK = 6; // V6 block framing broken
export const NE_TOO_LARGE = 7; // input of 4 GiB or more (offsets are 32-bit)
export const NE_INTERNAL = 99; // unexpected exception inside the reader (a bug; reported, not thrown)

/** Warnings (decoding went on). */
export const NW_BLOCK_DAMAGED = 1; // a record inside a block is malformed or overruns it: rest of the block skipped
export const NW_BAD_METADATA = 2; // a metadata record is unreadable: skipped
export const NW_METADATA_FIELDS = 3; // a metadata field list is unparsable: metadata kept without fields
export const NW_METADATA_REDEFINED = 4; // a metadata id defined twice (V4/V5): the later definition wins
export const NW_UNKNOWN_METADATA = 5; // an event references an undefined metadata id: kept with metadata -1
export const NW_UNKNOWN_STACK = 6; // an event references a stack id not in the current stack cache
export const NW_UNKNOWN_OBJECT = 7; // FastSerialization object of unknown type: skipped by its size
export const NW_BLOCK_VERSION = 8; // block object version above 2: decoded anyway
export const NW_TRAILING_BYTES = 9; // bytes after the end-of-stream marker
export const NW_METADATA_ID_ZERO = 10; // an EventBlock record with metadata id 0: skipped
export const NW_SEQUENCE_BACKWARDS = 11; // a capture thread's sequence number went backwards
export const NW_BAD_SYNC_TIME = 12; // SyncTimeUTC is not a valid date
export const NW_UNKNOWN_BLOCK_KIND = 13; // V6 block of unknown kind: skipped
export const NW_BAD_ROW = 14; // V6 thread/label-list row malformed: rest of the block skipped
export const NW_DUPLICATE_THREAD = 15; // V6 thread index defined twice
export const NW_BLOCK_TRAILING = 16; // bytes left at the end of a stack / sequence-point / label-list block

/** Stored warnings are capped; `warningCount` counts them all. */
export const MAX_NETTRACE_WARNINGS = 1000;

/** The container's constants, the reader's and the writer's (§1, §3). */
export const NETTRACE_MAGIC = "Nettrace"; // V4+ stream header (V3 starts with the FastSerialization header)
export const FS_SIGNATURE = "!FastSerialization.1"; // after its int32 length
export const TAG_NULL = 1; // NullReference; alone, the end of the stream
export const TAG_BEGIN = 4; // BeginObject (V3)
export const TAG_BEGIN_PRIVATE = 5; // BeginPrivateObject (V4/V5)
export const TAG_END = 6; // EndObject
/** The longest type name an object may have (longer: the framing is broken). */
export const MAX_TYPE_NAME = 38;
/** An event or metadata block's header, at least (§6.1). */
export const EVENT_BLOCK_HEADER_BYTES = 20;

/** Block kinds (the V6 numbering, used for every version). */
export const BLOCK_TRACE = 1;
export const BLOCK_EVENT = 2;
export const BLOCK_METADATA = 3;
export const BLOCK_SEQUENCE_POINT = 4;
export const BLOCK_STACK = 5;
export const BLOCK_THREAD = 6;
export const BLOCK_REMOVE_THREAD = 7;
export const BLOCK_LABEL_LIST = 8;
/** FastSerialization object of an unknown type (V3–V5); V6 unknown kinds keep their own number. */
export const BLOCK_UNKNOWN = 255;
/** The FastSerialization type names of the V4/V5 block objects (a .netperf has EventBlock only). */
export const BLOCK_OBJECT_NAMES: Readonly<Record<number, string>> = {
  [BLOCK_EVENT]: "EventBlock",
  [BLOCK_METADATA]: "MetadataBlock",
  [BLOCK_STACK]: "StackBlock",
  [BLOCK_SEQUENCE_POINT]: "SPBlock",
};

/** Bits of NettraceEvents.flags; the walker writes them (NT_FLAG_SORTED, NT_FLAG_COMPRESSED: the same values). */
export const EVENT_SORTED = 1; // IsSorted (§6.3, §6.5)
export const EVENT_COMPRESSED = 2; // came from a block with header compression

/** Payload type codes (§7.4). */
export const TC_OBJECT = 1;
export const TC_BOOLEAN = 3;
export const TC_CHAR = 4;
export const TC_SBYTE = 5;
export const TC_BYTE = 6;
export const TC_INT16 = 7;
export const TC_UINT16 = 8;
export const TC_INT32 = 9;
export const TC_UINT32 = 10;
export const TC_INT64 = 11;
export const TC_UINT64 = 12;
export const TC_SINGLE = 13;
export const TC_DOUBLE = 14;
export const TC_DECIMAL = 15;
export const TC_DATETIME = 16;
export const TC_GUID = 17;
export const TC_STRING = 18;
export const TC_ARRAY = 19;
export const TC_VARINT = 20;
export const TC_VARUINT = 21;
export const TC_FIXED_ARRAY = 22;
export const TC_UTF8_CODE_UNIT = 23;
export const TC_RELLOC = 24;
export const TC_DATALOC = 25;
export const TC_BOOLEAN8 = 26;

/** Bits of NettraceLabelLists.present. */
export const LABEL_ACTIVITY = 1;
export const LABEL_RELATED_ACTIVITY = 2;
export const LABEL_TRACE_ID = 4;
export const LABEL_SPAN_ID = 8;
export const LABEL_KEY_VALUE = 16;
export const LABEL_OPCODE = 32;
export const LABEL_KEYWORDS = 64;
export const LABEL_LEVEL = 128;
export const LABEL_VERSION = 256;

// ---------------------------------------------------------------------------------------------
// Result types

export class NettraceFormatError extends Error {
  override name = "NettraceFormatError";
  constructor(
    readonly code: number,
    /** Byte offset in the input. */
    readonly offset: number,
    /** What went wrong, without the offset (the message adds it). */
    readonly reason: string,
  ) {
    super(`${reason} (at byte offset ${offset})`);
  }
}

export interface NettraceWarning {
  code: number;
  /** Byte offset in the input. */
  offset: number;
  message: string;
}

/** SYSTEMTIME as the Trace object stores it (8 × i16, §5). */
export interface NettraceSystemTime {
  year: number;
  month: number;
  dayOfWeek: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

export interface NettraceHeader {
  /** 3 (netperf), 4 (nettrace; 5 when any metadata carries V5 tags, §7.2), 6 (V6 block stream). 0 if unknown. */
  formatVersion: number;
  /** "netperf" (no magic), "nettrace" (magic + FastSerialization) or "nettrace6" (magic + V6 header). */
  container: "netperf" | "nettrace" | "nettrace6" | "unknown";
  /** V6 header minor version (0 otherwise). */
  minorVersion: number;
  /** Version / MinimumReaderVersion of the Trace object (V3–V5; 0 for V6). */
  traceObjectVersion: number;
  traceObjectMinVersion: number;
  syncTimeUtc: NettraceSystemTime;
  /** SyncTimeUTC as a FILETIME (100 ns ticks since 1601-01-01 UTC); 0 when the SYSTEMTIME is invalid. */
  syncTimeFileTime: bigint;
  /** QPC ticks at SyncTimeUTC. */
  syncTimeQpc: bigint;
  qpcFrequency: bigint;
  pointerSize: number;
  processId: number;
  numberOfProcessors: number;
  expectedCpuSamplingRate: number;
  /** V6 trace-block key/value pairs (empty before V6). */
  keyValues: [string, string][];
}

export interface NettraceField extends NettraceType {
  name: string;
}

export interface NettraceType {
  /** TC_* code. */
  typeCode: number;
  /** Arrays (19), FixedLengthArray (22), RelLoc (24), DataLoc (25). */
  elementType?: NettraceType;
  /** FixedLengthArray element count. */
  elementCount?: number;
  /** Object (1). */
  fields?: NettraceField[];
}

export interface NettraceMetadata {
  /** Metadata id the events refer to. */
  metadataId: number;
  providerName: string;
  /** Low 16 bits (V3–V5 store an i32; TraceEvent keeps the low 16). */
  eventId: number;
  /** As stored (may be empty: CLR runtime events, §7.5). No Start/Stop transform applied. */
  eventName: string;
  keywords: bigint;
  version: number;
  level: number;
  /** From the V5 OpCode tag or the V6 optional metadata; undefined when not given. */
  opcode?: number;
  /** Field descriptions (V1 list, or the V5 V2Params list when present, or the V6 list). */
  fields: NettraceField[];
  /** "v1", "v2" (V5 V2Params tag) or "v6". */
  fieldLayout: "v1" | "v2" | "v6";
  /** The field list could not be parsed; `fields` is empty (§7.2). */
  fieldsUnparsable: boolean;
  /** V6 optional metadata: the provider's GUID (16 bytes as stored). */
  providerGuid?: Uint8Array;
  messageTemplate?: string;
  description?: string;
  keyValues?: [string, string][];
  /** File offset of the metadata payload, and its length. */
  offset: number;
  length: number;
}

/** Per-event columns (row i = event i in file order; metadata records are not events). */
export interface NettraceEvents {
  length: number;
  /** QPC ticks. */
  timestamp: BigInt64Array;
  metadataId: Uint32Array;
  /** Row in `metadata`, -1 when the id was undefined at that point. */
  metadata: Int32Array;
  /** V4+: per capture thread; V3: 0. */
  sequenceNumber: Uint32Array;
  /** V4/V5: capture thread id; V6: capture thread index; V3: -1 (not in the format). */
  captureThreadId: BigInt64Array;
  /** V3–V5: ThreadId of the header (logical thread); V6: thread index (see `threads`). */
  threadId: BigInt64Array;
  /** CaptureProcNumber as stored (-1 = unknown or V3). */
  processorNumber: Int32Array;
  /** StackId of the header (V4+); V3: synthetic id = row in `stacks` + 1 for a non-empty inline stack; 0 = none. */
  stackId: Uint32Array;
  /** Row in `stacks`, -1 = no stack (id 0 or unknown id). */
  stack: Int32Array;
  payloadOffset: Uint32Array;
  payloadLength: Uint32Array;
  /** Offset of the 16-byte ActivityId, 0 when absent or all zero. V6: from the event's label list. */
  activityIdOffset: Uint32Array;
  relatedActivityIdOffset: Uint32Array;
  /** V6 LabelListId (0 otherwise). */
  labelListId: Uint32Array;
  /** Row in `labelLists`, -1 = none (V6 only). */
  labelList: Int32Array;
  /** EVENT_* bits. */
  flags: Uint8Array;
  /** File offset of the first byte of the event's block (the begin tag in V3–V5, the block header in V6). */
  blockOffset: Uint32Array;
  /** The event's capture thread as a small number, 0 … NettraceFile.queueCount-1, kept across a stream's windows (V3: 0). */
  queue: Uint32Array;
}

export interface NettraceStacks {
  length: number;
  /** Stack id (V4+), or the synthetic V3 id (row + 1). */
  stackId: Uint32Array;
  /** File offset of the first instruction pointer; frames are `pointerSize` bytes, leaf first. */
  offset: Uint32Array;
  byteLength: Uint32Array;
}

export interface NettraceBlocks {
  length: number;
  /** BLOCK_* kind. */
  kind: Uint8Array;
  /** First byte of the block (FastSerialization begin tag, or V6 block header). */
  offset: Uint32Array;
  contentOffset: Uint32Array;
  contentLength: Uint32Array;
  /** Object version (V3–V5; 0 in V6). */
  version: Uint16Array;
}

export interface NettraceSequencePoints {
  length: number;
  timestamp: BigInt64Array;
  /** V6 flags (bit 0 flush threads, bit 1 flush metadata); 0 before V6. */
  flags: Uint32Array;
  offset: Uint32Array;
  /** Rows firstThread … firstThread+threadCount-1 of `threads`. */
  firstThread: Uint32Array;
  threadCount: Uint32Array;
  threads: {
    length: number;
    /** Capture thread id (V4/V5) or index (V6). */
    captureThreadId: BigInt64Array;
    sequenceNumber: Uint32Array;
  };
}

/** V6 thread table (one row per Thread-block row; few rows, so objects). */
export interface NettraceThread {
  index: bigint;
  name?: string;
  osProcessId?: bigint;
  osThreadId?: bigint;
  keyValues: [string, string][];
  offset: number;
}

export interface NettraceRemovedThread {
  index: bigint;
  sequenceNumber: number;
  offset: number;
}

/** V6 label lists (§10.3), as offsets; a KeyValue label is flagged, not decoded. */
export interface NettraceLabelLists {
  length: number;
  index: Uint32Array;
  offset: Uint32Array;
  byteLength: Uint32Array;
  /** LABEL_* bits of the items present. */
  present: Uint16Array;
  activityIdOffset: Uint32Array;
  relatedActivityIdOffset: Uint32Array;
  traceIdOffset: Uint32Array;
  spanId: BigUint64Array;
  opcode: Uint8Array;
  level: Uint8Array;
  version: Uint8Array;
  keywords: BigUint64Array;
}

export interface NettraceFile {
  bytes: Uint8Array;
  header: NettraceHeader;
  events: NettraceEvents;
  metadata: NettraceMetadata[];
  stacks: NettraceStacks;
  blocks: NettraceBlocks;
  blockCounts: Record<"trace" | "event" | "metadata" | "stack" | "sequencePoint" | "thread" | "removeThread" | "labelList" | "unknown", number>;
  sequencePoints: NettraceSequencePoints;
  threads: NettraceThread[];
  removedThreads: NettraceRemovedThread[];
  labelLists: NettraceLabelLists;
  /** Capture threads seen so far (in a stream, over every window): the events' `queue` numbers are below it. */
  queueCount: number;
  /** Events lost according to the sequence numbers (§14). */
  eventsLost: number;
  /** The end-of-stream marker was reached. */
  complete: boolean;
  warnings: NettraceWarning[];
  warningCount: number;
  error: NettraceFormatError | null;
}

/** A window of a streamed file (stream-reader.ts NettraceStreamReader, reader.ts nettraceWindowsOf). */
export interface NettraceWindow extends NettraceFile {
  /** File offset of `bytes[0]`. */
  base: number;
  /** The stream's last window (its end, or the error it stopped at). */
  last: boolean;
}
