// etw-wasm public API.

export { openTrace, Trace, type OpenOptions, type BufferInfo } from "./trace.js";
export { EventTable, EventRow, HEADER_TYPE_NAMES, isSystemFamily, type EventJson, type ExtendedItem } from "./event-table.js";
export { ProviderTable, type ProviderInfo, type ProviderKind } from "./provider-table.js";
export { TraceClock, filetimeToDate, type TraceInfo, type TimeZoneInfo } from "./info.js";
export { QueryResult, type QueryFilter, type TimeBound } from "./query.js";
export { EtlFormatError, EtlDecodeError, type TraceWarning } from "./errors.js";
export { formatGuid, parseGuid } from "./guid.js";
export { KNOWN_PROVIDERS } from "./known-providers.js";
export type { Input, DecodeOptions } from "./decode.js";
export type { TraceData, EventColumns, ExtendedItemColumns } from "./trace-data.js";
export * as codes from "../assembly/codes.js";
export { ClrTable, type RefColumn, type NumberColumn } from "./clr-tables.js";
export { CLR_EVENTS, CLR_PROVIDERS, findClrEvent, decodeClrPayload, mapName, type FieldValue, type DecodedPayload } from "./clr-payload.js";
export type { ClrEventSchema, ClrFieldSchema, ClrProviderSchema } from "./clr-schema-types.js";
export { formatPerfView, perfViewLines, isTraceLogBookkeeping, type PerfViewOptions, type PerfViewTrace } from "./perfview.js";
export { buildProcessTable, shortProcessName, type ProcessTable, type ProcessInfo, type ThreadInfo } from "./processes.js";
export { eventNameParts, type EventNameParts } from "./event-names.js";
