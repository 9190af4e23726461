// A short Node script on the public API: GC pauses and the busiest allocation types of a trace.
//   node dist/examples/node/gc-report.js [FILE]   (default: the bundled sample)

import { openTraceFile } from "etw-wasm/node";

const file = process.argv[2] ?? new URL("../../../examples/sample.etl", import.meta.url).pathname;
const trace = await openTraceFile(file);
console.log(`${file}: ${trace.events.length} records, ${trace.info.loggerName}, started ${trace.info.startTime.toISOString()}`);

// GC/Start and GC/Stop through the typed tables: numbers straight from typed-array columns.
const starts = trace.table("Microsoft-Windows-DotNETRuntime/GC/Start");
const stops = trace.table("Microsoft-Windows-DotNETRuntime/GC/Stop");
if (starts && stops) {
  const stopByCount = new Map<number, number>();
  const stopCount = stops.columns.Count as Uint32Array;
  for (let i = 0; i < stops.length; i++) stopByCount.set(stopCount[i], stops.rows[i]);
  const count = starts.columns.Count as Uint32Array;
  const depth = starts.columns.Depth as Uint32Array;
  const ts = trace.events.timestamp;
  // Table rows follow file order (buffers of several processors interleave): sort by time.
  const byTime = Array.from({ length: starts.length }, (_, i) => i).sort((a, b) => (ts[starts.rows[a]] < ts[starts.rows[b]] ? -1 : 1));
  for (const i of byTime) {
    const stop = stopByCount.get(count[i]);
    const pause = stop === undefined ? NaN : trace.relativeMSec(ts[stop]) - trace.relativeMSec(ts[starts.rows[i]]);
    console.log(`GC #${count[i]} gen ${depth[i]} ${starts.getDisplay("Reason", i)}: ${pause.toFixed(3)} ms`);
  }
}

// Allocation ticks per type name, through a query and lazy rows (one moving cursor, no object per event).
const bytesByType = new Map<string, number>();
for (const row of trace.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 10 })) {
  const type = String(row.get("TypeName"));
  bytesByType.set(type, (bytesByType.get(type) ?? 0) + Number(row.get("AllocationAmount")));
}
console.log("\nallocation ticks by type:");
for (const [type, bytes] of [...bytesByType].sort((a, b) => b[1] - a[1]).slice(0, 10)) {
  console.log(`  ${(bytes / 1e6).toFixed(1).padStart(8)} MB  ${type}`);
}
trace.dispose();
