// etw-wasm public API.

export { openTrace, Trace, type OpenOptions, type BufferInfo, type TraceFile, type FileClock } from "./trace.js";
export { streamTrace, TraceStream, TraceBatch, type StreamOptions, type TraceStreamEnd } from "./stream.js";
export { inTimeOrder, type TimeOrderedRun, type TimeOrderOptions, type TimeOrderStats } from "./stream-order.js";
export { EventTable, EventRow, HEADER_TYPE_NAMES, isSystemFamily, type EventJson, type ExtendedItem } from "./tables/event-table.js";
export { ProviderTable, type ProviderInfo, type ProviderKind } from "./tables/provider-table.js";
export { EventTypeTable } from "./tables/event-types.js";
export { TraceClock, filetimeToDate, type TraceInfo, type TimeZoneInfo } from "./tables/info.js";
export { QueryResult, type QueryFilter, type TimeBound } from "./tables/query.js";
export { parseWhere, filterWhere, WhereSyntaxError, type WhereCondition, type WhereOp } from "./tables/where.js";
export {
  keywordNames,
  keywordNameList,
  keywordMaskFor,
  levelName,
  parseKeywords,
  parseLevel,
  providerKeywords,
  LEVEL_NAMES,
  UnknownNameError,
  type KeywordFilter,
  type KeywordSpec,
  type LevelSpec,
  type ProviderKeyword,
} from "./schema/keywords.js";
export { KeywordUsageCounter, type ProviderKeywordUsage } from "./tables/keyword-usage.js";
export {
  TraceFormatError,
  TraceDecodeError,
  EtlFormatError,
  EtlDecodeError,
  RecordsNotLoadedError,
  type TraceFormat,
  type TraceWarning,
  type TraceIncomplete,
} from "./decode/result/errors.js";
export { formatGuid, parseGuid } from "./schema/guid.js";
export { KNOWN_PROVIDERS } from "./schema/known-providers.js";
export type { Input, ByteSource, DecodeOptions, DecodeFilter, NamedInput, SessionInput } from "./decode/decode.js";
export type { TraceData, EventColumns, ExtendedItemColumns } from "./decode/result/trace-data.js";
export * as codes from "./codes.js";
export { ClrTable, type RefColumn, type NumberColumn } from "./tables/clr-tables.js";
export { CLR_EVENTS, CLR_PROVIDERS, findClrEvent, decodeClrPayload, mapName, type FieldValue, type DecodedPayload } from "./schema/clr-payload.js";
export type { ClrEventSchema, ClrFieldSchema, ClrProviderSchema } from "./schema/clr-schema-types.js";
export {
  buildProcessTable,
  ProcessCollector,
  PROCESS_EVENTS,
  EVENTPIPE_PROVIDER,
  shortProcessName,
  type ProcessTable,
  type ProcessInfo,
  type ThreadInfo,
} from "./tables/processes.js";
export { EventNames, NameCounter, eventNameParts, type EventNameParts } from "./naming/event-names.js";
export { ManifestCollector, setTraceManifests, type TraceManifests } from "./naming/trace-manifests.js";
