// Process and thread tables from the kernel Process / Thread events, checked against the PName values of
// PerfView's baselines and against facts visible in the traces.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openTrace, buildProcessTable, shortProcessName } from "../dist/bindings/index.js";
import { CORPUS, HAVE_CORPUS, etlPath } from "./helpers/shared.js";

describe("process names", () => {
  it("are the image file name without directory and extension", () => {
    expect(shortProcessName("Test.x64.exe")).toBe("Test.x64");
    expect(shortProcessName("C:\\Windows\\System32\\svchost.exe")).toBe("svchost");
    expect(shortProcessName("System")).toBe("System");
    expect(shortProcessName("Idle")).toBe("Idle");
  });
});

describe.skipIf(!HAVE_CORPUS)("process table", () => {
  for (const name of ["net.4.5.2.x64", "net.4.5.x86"]) {
    it(`${name}: the PName of every baseline EVENT line`, async () => {
      const trace = await openTrace(readFileSync(etlPath(`${name}.etl`)));
      const table = buildProcessTable(trace);
      const text = readFileSync(join(CORPUS, "baselines", `${name}.baseline.txt`), "utf8");
      let checked = 0;
      const wrong: string[] = [];
      for (const line of text.split(/\r?\n/)) {
        const m = /^EVENT ([\d,.]+): .*? PID=(-?\d+); TID=-?\d+; PName=([^;]*);/.exec(line);
        if (!m) continue;
        // The printed time is rounded to the microsecond: try both ends of its interval.
        const ms = Number(m[1].replace(/,/g, ""));
        const names = [ms - 0.0005, ms + 0.0005].map((t) => table.processName(Number(m[2]), trace.clock.fromRelativeMSec(t)));
        if (!names.includes(m[3])) wrong.push(`${m[1]} PID=${m[2]}: ${names[0]} instead of ${m[3]}`);
        checked++;
      }
      expect(checked).toBeGreaterThan(400);
      expect(wrong).toEqual([]);
      trace.dispose();
    });
  }

  it("processSpan: processName at a timestamp and the span it holds for, on either side of each span's ends", async () => {
    const trace = await openTrace(readFileSync(etlPath("net.4.5.2.x64.etl")));
    const table = buildProcessTable(trace);
    const pids = [...new Set(table.processes.map((p) => p.pid)), 0xffffffff, 123456];
    // (times: every process start and end, a tick either side, and the trace's ends)
    const times = new Set<bigint>([trace.events.timestamp[0], trace.events.timestamp[trace.events.length - 1], 0n]);
    for (const p of table.processes) for (const t of [p.start, p.end]) if (t !== null) for (const d of [-1n, 0n, 1n]) times.add(t + d);
    let spans = 0,
      bounded = 0;
    for (const pid of pids) {
      for (const ts of times) {
        const s = table.processSpan!(pid, ts);
        expect(s.name, `${pid} at ${ts}`).toBe(table.processName(pid, ts));
        expect(s.from === null || s.from <= ts).toBe(true);
        expect(s.to === null || ts < s.to).toBe(true);
        // the name holds from `from` to just before `to`, and not past either end
        if (s.from !== null) expect(table.processName(pid, s.from)).toBe(s.name);
        if (s.to !== null) {
          expect(table.processName(pid, s.to - 1n)).toBe(s.name);
          expect(table.processSpan!(pid, s.to).from).toBe(s.to);
          bounded++;
        }
        spans++;
      }
    }
    expect(spans).toBeGreaterThan(100);
    expect(bounded).toBeGreaterThan(0);
    trace.dispose();
  });

  it("net.4.5.2.x64: the test process, rundown processes and thread owners", async () => {
    const trace = await openTrace(readFileSync(etlPath("net.4.5.2.x64.etl")));
    const table = buildProcessTable(trace);
    // Test.x64 started and ended inside the trace.
    const test = table.processes.filter((p) => p.pid === 3676);
    expect(test).toHaveLength(1);
    expect(test[0]).toMatchObject({ imageName: "Test.x64.exe", name: "Test.x64", parentPid: 3508, commandLine: "Test.x64.exe" });
    expect(test[0].start).not.toBeNull();
    expect(test[0].end).not.toBeNull();
    expect(test[0].end! > test[0].start!).toBe(true);
    expect(table.processName(3676, test[0].start!)).toBe("Test.x64");
    // PerfView itself was running before the trace began (rundown only).
    const perfview = table.processes.filter((p) => p.pid === 3988);
    expect(perfview).toHaveLength(1);
    expect(perfview[0].start).toBeNull();
    expect(perfview[0].name).toBe("PerfView");
    expect(table.processName(3988, 0n)).toBe("PerfView");
    expect(table.processName(0, 0n)).toBe("Idle");
    expect(table.processName(4, 0n)).toBe("System");
    // Unknown and absent processes.
    expect(table.processName(616, trace.events.timestamp[0])).toBe("Process(616)");
    expect(table.processName(-1, 0n)).toBe("");
    // Threads: Test.x64's main thread and one of PerfView's threads.
    expect(table.threadProcess(3680, test[0].end!)).toBe(3676);
    expect(table.threadProcess(3780, 0n)).toBe(3988);
    expect(table.threadProcess(0x7fffffff, 0n)).toBeUndefined();
    // A thread's fixed process: given only where threadProcess gives it at every time (checked at every event
    // of the trace on that thread, and before the trace); a thread started inside the trace has none.
    expect(table.fixedThreadProcess(3780)).toEqual({ pid: 3988 });
    expect(table.fixedThreadProcess(3680)).toBeUndefined();
    expect(table.fixedThreadProcess(0x7fffffff)).toEqual({ pid: undefined });
    let fixedChecked = 0;
    for (let i = 0; i < trace.events.length; i++) {
      const tid = trace.events.tid[i];
      const fixed = table.fixedThreadProcess(tid);
      if (!fixed) continue;
      expect(table.threadProcess(tid, trace.events.timestamp[i])).toBe(fixed.pid);
      expect(table.threadProcess(tid, 0n)).toBe(fixed.pid);
      fixedChecked++;
    }
    expect(fixedChecked).toBeGreaterThan(1000);
    // Every process has an image name; start/end are raw timestamps or null.
    expect(table.processes.length).toBeGreaterThan(30);
    for (const p of table.processes) {
      expect(p.imageName.length).toBeGreaterThan(0);
      expect(p.start === null || typeof p.start === "bigint").toBe(true);
    }
    trace.dispose();
  });
});
