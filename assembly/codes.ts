// Numeric codes shared by the AssemblyScript core and the TypeScript bindings.
// This file is valid in both languages: keep it to untyped integer constants.

// ---- warnings (decoding went on) ----
export const W_BAD_BUFFER_SIZE = 1; // BufferSize outside [0x48, 64 MiB]; scanning for the next buffer
export const W_SKIPPED_BYTES = 2; // bytes skipped while scanning for the next buffer header
export const W_TRUNCATED_BUFFER = 3; // input ended inside a buffer; its complete records were kept
export const W_BAD_FILL_OFFSET = 4; // Offset and SavedOffset both outside the buffer
export const W_DECOMPRESS_FAILED = 5; // XPRESS stream corrupt or shorter than the buffer says; buffer skipped
export const W_UNSUPPORTED_COMPRESSION = 6; // compression format other than XPRESS; buffer skipped
export const W_RECORD_SIZE_ZERO = 7; // record Size 0: rest of the buffer abandoned
export const W_RECORD_TOO_SMALL = 8; // record smaller than its fixed header: rest of buffer abandoned
export const W_RECORD_OVERRUNS = 9; // record runs past the end of its buffer: rest of buffer abandoned
export const W_OPAQUE_RECORD = 10; // unknown header type kept as an opaque record
export const W_CORRUPT_MARKER = 11; // first bytes of a record are no trace header: rest of buffer abandoned
export const W_EXT_ITEMS_MALFORMED = 12; // extended items overrun the record; rest kept as user data
export const W_MESSAGE_TRUNCATED = 13; // WPP optional fields do not fit the record
export const W_TRAILING_GARBAGE = 14; // bytes after the last buffer that are not zero and hold no buffer
export const W_CAPACITY = 15; // a table or the arena could not grow: decoding stopped here
export const W_HEADER_BUFFER_TYPE = 16; // buffer 0 is not of type HEADER
export const W_LOGFILE_HEADER_SHORT = 17; // logfile header payload shorter than TRACE_LOGFILE_HEADER
export const W_POINTER_SIZE_MISMATCH = 18; // PointerSize disagrees with the header record's flavour
export const W_BUFFER0_COMPRESSED = 19; // buffer 0 compressed (decoded anyway)

// ---- fatal errors (the input is not a trace) ----
export const E_TOO_SHORT = 100; // fewer bytes than one buffer header
export const E_BAD_FIRST_BUFFER = 101; // first BufferSize implausible
export const E_NO_LOGFILE_HEADER = 102; // first record is not the EventTrace/Header record

// ---- decoder status bits kept in the high nibble of the flags column ----
export const F_NO_PROCESS_INFO = 0x8000; // header carries no process / thread id
export const F_TIMESTAMP_INHERITED = 0x4000; // header carries no timestamp: previous record's (or buffer's) used
export const F_EXT_MALFORMED = 0x2000; // extended items were cut short
export const F_OPAQUE = 0x1000; // header layout unknown: user data is the whole record
export const F_HEADER_FLAGS_MASK = 0x0fff;

// ---- buffer status bits ----
export const BS_TRUNCATED = 1;
export const BS_SKIPPED = 2; // records not decoded (corrupt compression, unsupported format)
export const BS_COMPRESSED = 4;
export const BS_ABANDONED = 8; // a bad record ended the walk early

// ---- record header types (byte 2 of the marker); MESSAGE is reported as 0x0F ----
export const HT_SYSTEM32 = 0x01;
export const HT_SYSTEM64 = 0x02;
export const HT_COMPACT32 = 0x03;
export const HT_COMPACT64 = 0x04;
export const HT_FULL_HEADER32 = 0x0a;
export const HT_INSTANCE32 = 0x0b;
export const HT_TIMED = 0x0c;
export const HT_ERROR = 0x0d;
export const HT_WNODE = 0x0e;
export const HT_MESSAGE = 0x0f;
export const HT_PERFINFO32 = 0x10;
export const HT_PERFINFO64 = 0x11;
export const HT_EVENT_HEADER32 = 0x12;
export const HT_EVENT_HEADER64 = 0x13;
export const HT_FULL_HEADER64 = 0x14;
export const HT_INSTANCE64 = 0x15;

// ---- provider kinds ----
export const PK_GUID = 0; // GUID carried by the records
export const PK_KERNEL_GROUP = 1; // classic kernel group (no GUID on disk; conventional GUID)
export const PK_NONE = 2; // records without a provider identity (opaque, WPP without GUID)

// ---- logfile header struct written by the core (byte offsets) ----
export const LH_PRESENT = 0; // u32 bytes of TRACE_LOGFILE_HEADER present (0: no header record)
export const LH_BUFFER_SIZE = 4;
export const LH_VERSION = 8;
export const LH_PROVIDER_VERSION = 12;
export const LH_NUMBER_OF_PROCESSORS = 16;
export const LH_TIMER_RESOLUTION = 20;
export const LH_MAXIMUM_FILE_SIZE = 24;
export const LH_LOG_FILE_MODE = 28;
export const LH_BUFFERS_WRITTEN = 32;
export const LH_START_BUFFERS = 36;
export const LH_POINTER_SIZE = 40; // as stored
export const LH_EVENTS_LOST = 44;
export const LH_CPU_SPEED = 48;
export const LH_RESERVED_FLAGS = 52; // clock type
export const LH_BUFFERS_LOST = 56;
export const LH_RECORD_POINTER_SIZE = 60; // 4 or 8: the layout used
export const LH_END_TIME = 64; // i64 FILETIME
export const LH_BOOT_TIME = 72;
export const LH_PERF_FREQ = 80;
export const LH_START_TIME = 88;
export const LH_HEADER_TIMESTAMP = 96; // i64 raw timestamp of the header record (the clock anchor)
export const LH_TIME_ZONE = 104; // u32 address of TIME_ZONE_INFORMATION (172 bytes) or 0
export const LH_LOGGER_NAME = 108; // u32 address of UTF-16 chars
export const LH_LOGGER_NAME_CHARS = 112; // u32
export const LH_LOG_FILE_NAME = 116;
export const LH_LOG_FILE_NAME_CHARS = 120;
export const LH_SIZE = 128;

// ---- CLR payload field types (generated schema and payload walkers) ----
export const T_U8 = 1;
export const T_I8 = 2;
export const T_U16 = 3;
export const T_I16 = 4;
export const T_U32 = 5;
export const T_I32 = 6;
export const T_U64 = 7;
export const T_I64 = 8;
export const T_F32 = 9;
export const T_F64 = 10;
export const T_BOOL = 11; // 4 bytes
export const T_PTR = 12; // 4 or 8 bytes: the record's pointer size
export const T_GUID = 13;
export const T_FILETIME = 14;
export const T_SYSTEMTIME = 15;
export const T_USTR = 16; // UTF-16, NUL-terminated
export const T_ASTR = 17; // 8-bit, NUL-terminated
export const T_BINARY = 18; // `length` bytes
export const T_STRUCT = 19; // `count` elements of nested fields
