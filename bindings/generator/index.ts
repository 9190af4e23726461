// Synthetic .NET traces (etw-wasm/generator, Node): the trace `etw-wasm generate` writes, as a file, as
// bytes or as a stream of chunks, in .etl (plain or XPRESS, one file or a session's two) or EventPipe
// (.nettrace V4–V6) form. The same options and seed give the same trace, byte for byte.

export {
  generateTrace,
  generateTraceChunks,
  generateSession,
  type GenerateOptions,
  type GenerateSummary,
  type SessionFile,
  type TraceChunks,
} from "./generate.js";
export { generateNettrace, nettraceChunks, type GenerateNettraceOptions, type NettraceSummary } from "./generate-nettrace.js";
export { generateTraceFile, writeTraceFile, generateNettraceFile } from "./generate-file.js";
