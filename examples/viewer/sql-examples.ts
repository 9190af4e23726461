// The SQL panel's example queries (sql.ts), apart from DuckDB so that the page shows them without loading it.

/** Example queries, by what they answer. */
export const EXAMPLES: [string, string][] = [
  ["Top events", "SELECT eventName, count(*) AS events FROM events GROUP BY 1 ORDER BY 2 DESC LIMIT 20"],
  ["Events per second", "SELECT date_trunc('second', time::TIMESTAMP) AS second, count(*) AS events FROM events GROUP BY 1 ORDER BY 1"],
  [
    "GCs per process and generation",
    "SELECT s.pid, p.processName, s.Depth AS generation, count(*) AS gcs FROM GC_Start s LEFT JOIN processes p USING (pid) GROUP BY ALL ORDER BY ALL",
  ],
  [
    "GC pauses (ms)",
    "SELECT s.time, (epoch_us(e.time) - epoch_us(s.time)) / 1000.0 AS pause_ms FROM GC_SuspendEEStart s ASOF JOIN GC_RestartEEStop e ON s.pid = e.pid AND e.time >= s.time ORDER BY 1",
  ],
];
