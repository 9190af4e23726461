-- DuckDB queries over a trace converted with `etw-wasm convert TRACE.etl --to parquet -o trace`.
-- Run them with `duckdb -c ".read examples/sql/queries.sql"` from the directory that holds `trace/`.
-- Each query is separated by a blank line; the test suite runs every one on a converted trace.

-- GC pauses per process: each GC/RestartEEStop paired with the last GC/SuspendEEStart of its process before it
SELECT r.pid, any_value(p.processName) AS process, count(*) AS gcs,
       round(sum(epoch_us(r.time) - epoch_us(s.time)) / 1000, 3) AS total_pause_ms,
       round(max(epoch_us(r.time) - epoch_us(s.time)) / 1000, 3) AS max_pause_ms
FROM 'trace/Microsoft-Windows-DotNETRuntime/GC/RestartEEStop.parquet' r
ASOF JOIN 'trace/Microsoft-Windows-DotNETRuntime/GC/SuspendEEStart.parquet' s ON r.pid = s.pid AND r.time >= s.time
LEFT JOIN 'trace/processes.parquet' p ON p.pid = r.pid
GROUP BY r.pid ORDER BY total_pause_ms DESC;

-- Top event names
SELECT eventName, count(*) AS events FROM 'trace/events.parquet' GROUP BY eventName ORDER BY events DESC, eventName LIMIT 20;

-- Events per second, per provider
SELECT time_bucket(INTERVAL 1 second, time) AS second, providerName, count(*) AS events
FROM 'trace/events.parquet' GROUP BY ALL ORDER BY second, events DESC;

-- GCs by generation and reason (the map's names beside the numbers)
SELECT Depth AS generation, ReasonName AS reason, count(*) AS gcs
FROM 'trace/Microsoft-Windows-DotNETRuntime/GC/Start.parquet' GROUP BY ALL ORDER BY gcs DESC;

-- Events of each process, named from the processes table
SELECT coalesce(p.processName, e.processName) AS process, e.pid, count(*) AS events
FROM 'trace/events.parquet' e LEFT JOIN 'trace/processes.parquet' p ON p.pid = e.pid
GROUP BY ALL ORDER BY events DESC LIMIT 20;
