// Every corpus file against its independent header-level decoding (reference/*.jsonl.gz): same
// number of records, and every record equal on header type, provider, id, version, opcode, level,
// task, keywords, pid, tid, processor, raw timestamp, payload length, first 64 payload bytes,
// extended item types and ActivityId.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { openTrace, type Trace } from "../dist/bindings/index.js";
import { HAVE_CORPUS, corpusFiles, etlPath, referencePath } from "./helpers/shared.js";
import { readReference, referenceAsJson, type ReferenceRecord } from "./helpers/reference.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** Row `i` as the reference sees it: the jsonl form plus the first 64 payload bytes. */
function actualOf(trace: Trace, i: number) {
  const row = trace.events.row(i);
  return { ...row.toJSON(), payloadHex: hex(row.payload.subarray(0, 64)) };
}

const expectedOf = (r: ReferenceRecord) => ({ ...referenceAsJson(r), payloadHex: r.payload_hex });

describe.skipIf(!HAVE_CORPUS)("corpus against reference dumps", () => {
  for (const name of corpusFiles()) {
    it(name, async () => {
      const trace = await openTrace(readFileSync(etlPath(name)));
      const { file, events } = await readReference(referencePath(name));
      expect(trace.warnings).toEqual([]);

      // Logfile header fields.
      expect(trace.info.bufferSize).toBe(file.buffer_size);
      expect(trace.info.osBuild).toBe(file.provider_version);
      expect(trace.info.numberOfProcessors).toBe(file.number_of_processors);
      expect(trace.info.pointerSize).toBe(file.pointer_size);
      expect(trace.info.perfFreq).toBe(BigInt(file.perf_freq as string));
      expect(trace.info.startFiletime).toBe(BigInt(file.start_time as string));
      expect(trace.info.endFiletime).toBe(BigInt(file.end_time as string));
      expect(trace.info.bootFiletime).toBe(BigInt(file.boot_time as string));
      expect(trace.info.clockType).toBe(file.reserved_flags);
      expect(trace.info.eventsLost).toBe(file.events_lost);
      expect(trace.info.buffersLost).toBe(file.buffers_lost);
      expect(trace.info.buffersWritten).toBe(file.buffers_written);
      expect(trace.info.timerResolution).toBe(file.timer_resolution);
      expect(trace.info.cpuSpeedMHz).toBe(file.cpu_speed_mhz);
      expect(trace.info.logFileMode).toBe(parseInt(file.log_file_mode as string, 16));
      expect(trace.info.loggerName).toBe(file.logger_name);
      expect(trace.info.logFileName).toBe(file.log_file_name);
      expect(trace.info.headerPointerSize).toBe(file.header_is_64bit ? 8 : 4);

      const expected = events;
      if (name === "s4-CldFlt2-2025-12-21-121418.etl") {
        // The reference decoder iterates BuffersWritten buffers, and this file says 0 although its
        // header buffer holds records; we decode that buffer: the header record and one more.
        expect(file.buffers_written).toBe(0);
        expect(events.length).toBe(0);
        expect(trace.events.length).toBe(2);
        expect(trace.events.row(0).headerType).toBe(2);
        expect(trace.events.row(0).providerGuid).toBe("68fdd900-4a3e-11d1-84f4-0000f80464e3");
        return;
      }
      expect(trace.events.length).toBe(expected.length);
      // Compare in bulk, but report the first mismatching record with its index.
      for (let i = 0; i < expected.length; i++) {
        const want = expectedOf(expected[i]);
        const got = actualOf(trace, i);
        if (JSON.stringify(want) !== JSON.stringify(got)) expect({ index: i, ...got }).toEqual({ index: i, ...want });
      }
      // ActivityId of every EVENT_HEADER record (null for other headers), in both engines: the decoder
      // flags the non-zero ones as it walks (F_ACTIVITY_ID), and rows read the id only where flagged
      const js = await openTrace(readFileSync(etlPath(name)), { engine: "js" });
      for (const t of [trace, js]) {
        for (let i = 0; i < expected.length; i++) {
          const want = (expected[i].activity_id as string | undefined) ?? null;
          const got = t.events.row(i).activityId;
          if (got !== want) expect({ index: i, activityId: got }).toEqual({ index: i, activityId: want });
        }
      }
      js.dispose();
      trace.dispose();
    }, 120_000);
  }
});
