// The EventPipe container reader on its own (etw-wasm/eventpipe): a .nettrace or .netperf file's
// header, metadata, events, stacks, sequence points and V6 tables as they are in the file, before they
// become a Trace's tables (openTrace reads EventPipe files into those itself). The record walk runs in
// the TypeScript core unless a walker of the WebAssembly core is given.

export {
  readNettrace,
  nettraceWindowsOf,
  stackFrames,
  eventMetadata,
  NettraceFormatError,
  NE_TRUNCATED, NE_BAD_MAGIC, NE_UNSUPPORTED_VERSION, NE_BAD_OBJECT, NE_BAD_TRACE, NE_BAD_BLOCK, NE_TOO_LARGE, NE_INTERNAL,
  NW_BLOCK_DAMAGED, NW_BAD_METADATA, NW_METADATA_FIELDS, NW_METADATA_REDEFINED, NW_UNKNOWN_METADATA, NW_UNKNOWN_STACK,
  NW_UNKNOWN_OBJECT, NW_BLOCK_VERSION, NW_TRAILING_BYTES, NW_METADATA_ID_ZERO, NW_SEQUENCE_BACKWARDS, NW_BAD_SYNC_TIME,
  NW_UNKNOWN_BLOCK_KIND, NW_BAD_ROW, NW_DUPLICATE_THREAD, NW_BLOCK_TRAILING,
  EVENT_SORTED, EVENT_COMPRESSED,
  type ReadNettraceOptions,
  type NettraceFile,
  type NettraceWindow,
  type NettraceHeader,
  type NettraceSystemTime,
  type NettraceMetadata,
  type NettraceField,
  type NettraceType,
  type NettraceEvents,
  type NettraceStacks,
  type NettraceBlocks,
  type NettraceSequencePoints,
  type NettraceThread,
  type NettraceRemovedThread,
  type NettraceLabelLists,
  type NettraceWarning,
  type NettraceWalker,
} from "./eventpipe/reader.js";
