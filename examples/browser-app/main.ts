// The smallest browser app on etw-wasm: bundled by a bundler, it fetches a trace and shows its
// record count and providers. "etw-wasm" resolves to the package's browser entry.
import { openTrace } from "etw-wasm";

const out = document.getElementById("out")!;
const name = new URLSearchParams(location.search).get("trace") ?? "sample.etl";
try {
  const response = await fetch(name);
  const trace = await openTrace(await response.blob());
  out.dataset.count = String(trace.events.length);
  out.textContent = `${trace.events.length} records, ${trace.providers.length} providers, logger ${trace.info.loggerName}`;
} catch (error) {
  out.dataset.error = String(error);
  out.textContent = `error: ${error}`;
}
