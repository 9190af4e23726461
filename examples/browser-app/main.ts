// The smallest browser app on etw-wasm: bundled by a bundler, it fetches a trace and shows its
// record count and providers. "etw-wasm" resolves to the package's browser entry.
import { openTrace } from "etw-wasm";

const out = document.getElementById("out")!;
const params = new URLSearchParams(location.search);
const name = params.get("trace") ?? "sample.etl";
// ?workers=N decodes in N Web Workers (worker.js beside the app's script), in segments of `segment` bytes
const workers = Number(params.get("workers") ?? 0);
const segment = Number(params.get("segment") ?? 0);
try {
  const response = await fetch(name);
  const trace = await openTrace(await response.blob(), workers ? { workers, ...(segment ? { batchBytes: segment } : {}) } : {});
  out.dataset.count = String(trace.events.length);
  out.textContent = `${trace.events.length} records, ${trace.providers.length} providers, logger ${trace.info.loggerName}`;
} catch (error) {
  out.dataset.error = String(error);
  out.textContent = `error: ${error}`;
}
