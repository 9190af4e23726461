// etw-wasm/perfview: events printed as PerfView's test baselines print them (TraceEvent's names,
// payload field names and formatting). Its own entry, so that an app that only decodes does not
// bundle it.

export { formatPerfView, perfViewLines, isTraceLogBookkeeping, type PerfViewOptions, type PerfViewTrace } from "./perfview.js";
export { payloadPairs, PayloadContext } from "./traceevent-payload.js";
export { eventPipeBaselineLines, eventXml } from "./traceevent-xml.js";
