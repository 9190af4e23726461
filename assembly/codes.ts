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

// ---- decoder status bits kept in the high bits of the flags column ----
export const F_NO_PROCESS_INFO = 0x8000; // header carries no process / thread id
export const F_TIMESTAMP_INHERITED = 0x4000; // header carries no timestamp: previous record's (or buffer's) used
export const F_EXT_MALFORMED = 0x2000; // extended items were cut short
export const F_OPAQUE = 0x1000; // header layout unknown: user data is the whole record
// the EVENT_HEADER's ActivityId is not zero (taken as the walk has the header, so that what reads every
// row's id, as the export does, reads the record again only for these; EVENT_HEADER Flags use bits up to 0x0200)
export const F_ACTIVITY_ID = 0x0800;
export const F_HEADER_FLAGS_MASK = 0x07ff;

// ---- buffer status bits ----
export const BS_TRUNCATED = 1;
export const BS_SKIPPED = 2; // records not decoded (corrupt compression, unsupported format)
export const BS_COMPRESSED = 4;
export const BS_ABANDONED = 8; // a bad record ended the walk early

// ---- on-disk values both cores read ----
export const BUFFER_HEADER_SIZE = 0x48; // WMI_BUFFER_HEADER: records start here
export const MAX_BUFFER = 64 << 20; // ntwmi.h caps ETW buffers at 16 MiB; anything past 64 MiB is corruption
export const BUFFER_FLAG_PROCESSOR_INDEX = 0x20; // ClientContext holds a 16-bit ProcessorIndex
export const BUFFER_FLAG_COMPRESSED = 0x40;
export const LOG_FILE_MODE_COMPRESSED = 0x04000000;
// Log file modes in which BuffersWritten need not be the number of buffers in the file.
export const LOG_FILE_MODE_CIRCULAR = 0x00000002; // overwritten buffers are counted too
export const LOG_FILE_MODE_APPEND = 0x00000004;
export const LOG_FILE_MODE_NEWFILE = 0x00000008; // one session, several files
export const COMPRESSION_XPRESS = 3; // COMPRESSION_FORMAT_XPRESS (the default when none is named)

// ---- limits both cores keep ----
export const MEMORY_MAX_PAGES = 65536; // 64 KiB pages: addresses are u32
export const MEMORY_MIN_PAGES = 16; // the smallest memory limit a decode takes (1 MiB)
export const MAX_BLOCK = 960 << 20; // largest block asked of the allocator (its own limit is just under 1 GiB)
export const PROVIDER_BLOCK_BYTES = 1056; // the provider table's static block (providers.ts: kernel groups, the last GUID looked up)
export const MAX_ROWS = 120 << 20; // event and extended-item rows: the widest column (8 bytes) stays under MAX_BLOCK
export const MIN_WINDOW = 64 << 10; // the smallest record budget of a window (a larger buffer gets a window of its own)
export const ARENA_BLOCK = 4 << 20; // an arena block (decompressed records) holds at least this much, or one buffer's records
export const MAX_EXT_ITEMS = 32; // extended items taken per record
export const MAX_WARNINGS = 10000; // warnings kept (all are counted)
export const MAX_PROVIDERS = 65535; // provider indices are u16
export const MAX_EVENT_TYPES = 65535; // event type indices are u16; EVENT_TYPE_NONE marks rows beyond

// ---- table directory: u32 slots filled by directory(), each an address or a count ----
export const DIR_ROW_COUNT = 0;
export const DIR_TIMESTAMP = 1; // i64 raw clock
export const DIR_KEYWORDS = 2; // u64
export const DIR_PID = 3; // u32, 0xFFFFFFFF when the header has none
export const DIR_TID = 4; // u32, 0xFFFFFFFF when the header has none
export const DIR_PAYLOAD_OFFSET = 5; // u32 address of the user data
export const DIR_PAYLOAD_LENGTH = 6; // u16
export const DIR_HEADER_LENGTH = 7; // u16 bytes from record start to user data
export const DIR_PROVIDER = 8; // u16 index into the provider table
export const DIR_EVENT_ID = 9; // u16
export const DIR_TASK = 10; // u16
export const DIR_FLAGS = 11; // u16 header flags (low 12 bits) | decoder status (F_*)
export const DIR_PROCESSOR = 12; // u16
export const DIR_VERSION = 13; // u16
export const DIR_OPCODE = 14; // u8
export const DIR_LEVEL = 15; // u8
export const DIR_HEADER_TYPE = 16; // u8 HT_*
export const DIR_CHANNEL = 17; // u8
export const DIR_EXT_COUNT = 18;
export const DIR_EXT_ROW = 19; // u32 event row, ascending
export const DIR_EXT_TYPE = 20; // u16 EVENT_HEADER_EXT_TYPE_*
export const DIR_EXT_SIZE = 21; // u16 data bytes
export const DIR_EXT_OFFSET = 22; // u32 address of the item data
export const DIR_BUF_COUNT = 23;
export const DIR_BUF_TABLE = 24; // BUF_STRIDE-byte structs
export const DIR_WARN_COUNT = 25; // kept
export const DIR_WARN_TOTAL = 26; // seen
export const DIR_WARN_TABLE = 27; // WARN_STRIDE-byte structs
export const DIR_PROV_COUNT = 28;
export const DIR_PROV_TABLE = 29; // PROV_STRIDE-byte structs
export const DIR_LOGFILE = 30; // LH_SIZE-byte struct
export const DIR_EVENT_TYPE = 31; // u16 column: index into the event type table, EVENT_TYPE_NONE beyond it
export const DIR_TYPE_COUNT = 32;
export const DIR_TYPE_TABLE = 33; // TYPE_STRIDE-byte structs
export const DIR_ARENAS = 34; // address of the window's arena blocks: DIR_ARENA_COUNT (u32 start, u32 bytes used) pairs
export const DIR_ARENA_COUNT = 35; // arena blocks in use (records decompressed, or copied to be aligned)
export const DIR_BUF_BASE = 36; // index over the whole trace of the window's first buffer
export const DIR_CLR_DIR = 37; // address of the typed tables' directory (CLR_DIR_STRIDE per schema event), 0: none
export const DIR_CLR_ROWS = 38; // rows placed in typed tables in this window
export const DIR_CLR_MISSING = 39; // rows that belong in typed tables but found no memory, in this window
export const DIR_RECORD_BYTES = 40; // bytes of records the window holds (in place and in the arena)
export const DIR_SLOTS = 41;

// ---- buffer struct (BUF_STRIDE bytes per buffer) ----
export const BUF_STRIDE = 64;
export const B_FILE_OFFSET = 0; // f64
export const B_SEQUENCE = 8; // i64
export const B_TIMESTAMP = 16; // i64
export const B_FIRST_ROW = 24; // u32
export const B_ROW_COUNT = 28; // u32
export const B_DATA = 32; // u32 address of the record area (buffer offset 0x48)
export const B_DATA_LENGTH = 36; // u32 bytes of records (decompressed)
export const B_BUFFER_SIZE = 40; // u32 bytes on disk
export const B_SAVED_OFFSET = 44; // u32
export const B_FILLED = 48; // u32 ("Offset" @0x30)
export const B_PROCESSOR = 52; // u16
export const B_LOGGER_ID = 54; // u16
export const B_FLAGS = 56; // u16 BufferFlag
export const B_TYPE = 58; // u16 BufferType
export const B_STATUS = 60; // u16 decoder status (BS_*)
export const B_RAW_PROCESSOR = 62; // u16 ClientContext as read

// ---- warning struct (WARN_STRIDE bytes per warning) ----
export const WARN_STRIDE = 32;
export const WARN_FILE_OFFSET = 0; // f64, -1 when none
export const WARN_CODE = 8; // u32 W_*
export const WARN_BUFFER = 12; // i32 buffer index, -1 when none
export const WARN_RECORD_OFFSET = 16; // i32 offset in the buffer, -1 when none
export const WARN_DETAIL = 20; // u32; bytes 24..31 are zero

// ---- provider struct (PROV_STRIDE bytes per provider) ----
export const PROV_STRIDE = 32;
export const PROV_GUID = 0; // 16 bytes in memory order
export const PROV_GROUP = 16; // u16 kernel group byte, 0xFFFF when none
export const PROV_KIND = 18; // u8 PK_*
export const PROV_WANTED = 19; // u8 1 when the decode's provider filter keeps its rows (always 1 without one)
export const PROV_CLR = 20; // i8 index of the .NET runtime provider it is (setClr's list), -1 for others

// ---- event type struct (TYPE_STRIDE bytes per distinct provider, id, version, opcode, header type,
// keywords, task, level, channel: every header field an EVENT_DESCRIPTOR decides) ----
// Bytes 0..19 are the type's key: a little-endian u64 (provider .. header type), the keywords (u64)
// and a u32 (task, level, channel). Types are numbered in order of first sight. A row stores only its
// type's index; the fields of the key are the type's (stored per row only for rows without a type).
export const TYPE_STRIDE = 32;
export const TYPE_PROVIDER = 0; // u16 provider index
export const TYPE_EVENT_ID = 2; // u16
export const TYPE_VERSION = 4; // u16
export const TYPE_OPCODE = 6; // u8
export const TYPE_HEADER_TYPE = 7; // u8 HT_*
export const TYPE_KEYWORDS = 8; // u64
export const TYPE_TASK = 16; // u16
export const TYPE_LEVEL = 18; // u8
export const TYPE_CHANNEL = 19; // u8
export const TYPE_KEY_BYTES = 20; // bytes 0..19: the key
export const TYPE_ROWS = 20; // u32 rows of this type in the window
export const TYPE_CLR = 24; // i16 schema event (typed table) its rows go to, -1: none; bytes 26..31 are zero
export const EVENT_TYPE_NONE = 0xffff; // a row beyond MAX_EVENT_TYPES types: not in the table

// ---- typed .NET runtime tables ----
export const CLR_DIR_STRIDE = 12; // directory entry per schema event
export const CLR_DIR_COUNT = 0; // u32 rows
export const CLR_DIR_BLOCK = 4; // u32 address of the block
export const CLR_DIR_CAP = 8; // u32 rows the block has room for: column k starts at BLOCK + CAP * pre(k)
export const CLR_MAX_ID = 512; // the type lookup covers event ids below this
export const CLR_VERSIONS = 8; // ... and versions below this (higher ones use the last)
export const CLR_STATUS_TRUNCATED = 1; // status cell: the payload ended before the schema did
export const CLR_MAX_TYPES = 1024; // schema events the cores have room for (the schema has 516)

// Field program (u16 words, bindings/schema/clr-program.ts). One type: header, fixed entries, field entries.
// The first CLR_TYPE_FIXED fields are plain numbers at fixed payload offsets, copied without walking
// when the payload holds all of them. Indices below are in words.
export const CLR_TYPE_ROW_BYTES = 0; // bytes per row of the block
export const CLR_TYPE_PRE_ROW = 1; // bytes per row of the columns before the row-index column (u32)
export const CLR_TYPE_PRE_STATUS = 2; // ... before the status column (u8 CLR_STATUS_*)
export const CLR_TYPE_FIELDS = 3; // top-level fields
export const CLR_TYPE_FIXED = 4; // leading fields with fixed entries
export const CLR_TYPE_FIXED_END32 = 5; // payload bytes of the fixed fields, 4-byte pointers
export const CLR_TYPE_FIXED_END64 = 6; // ... 8-byte pointers
export const CLR_TYPE_REST = 7; // word offset of field CLR_TYPE_FIXED's entry from the first field entry
export const CLR_TYPE_WORDS = 8; // header length; fixed entries follow, then field entries
export const CLR_FIXED_OFF32 = 0; // payload offset, 4-byte pointers
export const CLR_FIXED_OFF64 = 1; // ... 8-byte pointers
export const CLR_FIXED_SIZE32 = 2; // payload bytes, 4-byte pointers
export const CLR_FIXED_SIZE64 = 3; // ... 8-byte pointers: also the column width
export const CLR_FIXED_PRE = 4; // bytes per row of the columns before this one
export const CLR_FIXED_WORDS = 5; // fixed entry length
export const CLR_FIELD_KIND = 0; // T_* | CLR_FLAG_* << CLR_FLAGS_SHIFT
export const CLR_FIELD_PRE_A = 1; // bytes per row of the columns before the value or offset column
export const CLR_FIELD_PRE_B = 2; // ... before the length or count column
export const CLR_FIELD_REF = 3; // count or length: field index in the same scope, or the literal
export const CLR_FIELD_LEN = 4; // words of this field's entry, sub-fields included
export const CLR_FIELD_WORDS = 5; // field entry length; T_STRUCT continues with the words below
export const CLR_STRUCT_SUBS = 5; // sub-fields, whose entries follow at CLR_STRUCT_WORDS
export const CLR_STRUCT_SIZE32 = 6; // element bytes with CLR_FLAG_PADDED_STRUCT, 4-byte pointers
export const CLR_STRUCT_SIZE64 = 7; // ... 8-byte pointers
export const CLR_STRUCT_WORDS = 8; // struct header length
export const CLR_FLAGS_SHIFT = 8; // the kind takes the bits below
export const CLR_KIND_MASK = 0xff;
export const CLR_FLAG_COUNT_FIELD = 1; // count or length from field CLR_FIELD_REF of the same scope
export const CLR_FLAG_COUNT_LITERAL = 2; // count or length CLR_FIELD_REF
export const CLR_FLAG_PADDED_STRUCT = 4; // elements of fixed size: skipped, not walked
export const CLR_NOT_STORED = 0xffff; // pre offset of a value without a column; ref of an unknown field
export const CLR_SCOPE_VALUES = 64; // fields of a scope that counts can refer to (later ones read as 0)
export const CLR_MAX_DEPTH = 3; // struct nesting walked; deeper marks the row truncated

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
export const LH_TIME_ZONE = 104; // u32 address of TIME_ZONE_INFORMATION (TIME_ZONE_BYTES) or 0
export const LH_LOGGER_NAME = 108; // u32 address of UTF-16 chars
export const LH_LOGGER_NAME_CHARS = 112; // u32
export const LH_LOG_FILE_NAME = 116;
export const LH_LOG_FILE_NAME_CHARS = 120;
export const LH_SIZE = 128;
export const TIME_ZONE_BYTES = 172; // TIME_ZONE_INFORMATION

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

// ---- decode-time filter: a FILTER_BYTES block at filterPtr(), written by the driver after init ----
// A record the filter rejects takes no row (nor extended items, nor an event-type count); the first
// row (the logfile header record) is always kept. Sets hold up to FILTER_SET_MAX entries.
export const FILTER_SET_MAX = 32;
export const FILTER_FLAGS = 0; // u32 FF_* bits: the tests in force; 0 keeps every row
export const FILTER_LEVEL = 4; // u32 highest level kept
export const FILTER_KEYWORDS = 8; // u64: rows with any of these bits are kept
export const FILTER_FROM = 16; // i64 raw timestamp, inclusive
export const FILTER_TO = 24; // i64 raw timestamp, inclusive
export const FILTER_EVENT_ID_COUNT = 32; // u32 entries of each set
export const FILTER_OPCODE_COUNT = 36;
export const FILTER_PID_COUNT = 40;
export const FILTER_TID_COUNT = 44;
export const FILTER_PROVIDER_COUNT = 48;
export const FILTER_EVENT_IDS = 64; // u32 x FILTER_SET_MAX
export const FILTER_OPCODES = 192; // u32 x FILTER_SET_MAX
export const FILTER_PIDS = 320; // u32 x FILTER_SET_MAX
export const FILTER_TIDS = 448; // u32 x FILTER_SET_MAX
export const FILTER_PROVIDERS = 576; // 16-byte GUIDs in memory order x FILTER_SET_MAX
export const FILTER_BYTES = 1088;
export const FF_PROVIDER = 1; // the provider's PROV_WANTED byte is set
export const FF_EVENT_ID = 2;
export const FF_OPCODE = 4;
export const FF_LEVEL = 8; // level <= FILTER_LEVEL
export const FF_KEYWORDS = 16; // keywords & FILTER_KEYWORDS != 0
export const FF_PID = 32; // rows without process information (F_NO_PROCESS_INFO) match no pid
export const FF_TID = 64; // ... nor any tid
export const FF_FROM = 128;
export const FF_TO = 256;
