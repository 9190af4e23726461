// The last differences from TraceEvent (microsoft/perfview's src/TraceEvent): each expectation comes from
// TraceEvent's source, cited by file and the method or template that gives it (commit 08095c84 for the
// parsers, 01b14294 for TraceEvent.cs; the line numbers of those files move between commits, the names do not).

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { openTrace, eventNameParts, type Trace } from "../dist/bindings/index.js";
import { EtlWriter, PayloadBuilder } from "../dist/bindings/generator/etl-writer.js";
import { HAVE_CORPUS, etlPath } from "./helpers/shared.js";

const p = () => new PayloadBuilder();
/** Provider/Event of every row in time order (a row is a view: named as it comes). */
function names(t: Trace): string[] {
  const out: string[] = [];
  for (const r of t.events.byTime()) {
    const n = eventNameParts(r);
    out.push(`${n.provider}/${n.event}`);
  }
  return out;
}

describe("event names as TraceEvent gives them", () => {
  it("the TPL provider's events by TplEtwProviderTraceEventParser's templates, before any manifest", async () => {
    const TPL = "2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5";
    // TplTraceEventParser.cs, the *Template methods: (event id, task name, opcode, opcode name); TraceEvent.EventName
    // (TraceEvent.cs) is TaskName/OpcodeName, the task alone where the opcode is Info (0) or its name empty
    const templates: [number, string, number, string][] = [
      [1, "Loop", 1, "Start"],
      [2, "Loop", 2, "Stop"],
      [3, "Invoke", 1, "Start"],
      [4, "Invoke", 2, "Stop"],
      [5, "ForkJoin", 1, "Start"],
      [6, "ForkJoin", 2, "Stop"],
      [7, "TaskScheduled", 9, "Send"],
      [8, "TaskExecute", 1, "Start"],
      [9, "TaskExecute", 2, "Stop"],
      [10, "TaskWait", 9, "Send"],
      [11, "TaskWait", 2, "Stop"],
      [12, "AwaitTaskContinuationScheduled", 9, "Send"],
      [13, "TaskWaitContinuationComplete", 0, ""],
      [14, "TraceOperation", 1, "Start"],
      [15, "TraceOperation", 2, "Stop"],
      [16, "TraceOperationRelation", 0, ""],
      [17, "TraceSynchronousWork", 1, "Start"],
      [18, "TraceSynchronousWork", 2, "Stop"],
    ];
    const w = new EtlWriter({ perfFreq: 1_000_000n });
    templates.forEach(([id, , opcode], k) =>
      w.event(0, {
        headerType: 0x13,
        provider: TPL,
        id,
        version: 0,
        level: 4,
        opcode,
        task: 0,
        keywords: 0n,
        pid: 1,
        tid: 2,
        ts: w.anchor + BigInt(10 * (k + 1)),
        payload: p().u32(k).build(),
      }),
    );
    const t = await openTrace(w.finish());
    expect(names(t).filter((n) => n.startsWith("System.Threading"))).toEqual(
      templates.map(([, task, opcode, op]) => `System.Threading.Tasks.TplEventSource/${opcode === 0 || !op ? task : `${task}/${op}`}`),
    );
    t.dispose();
  });

  it("a TraceLogging event: its name as the task, TDH's opcode name after it (Activity2Start/Start), alone for Info", async () => {
    // RegisteredTraceEventParser.cs (TdhEventParser.ParseEventMetaData): the opcode name TDH gives, "win:" taken
    // off (win:Start, win:Stop); TraceEvent.cs EventName: TaskName + "/" + OpcodeName unless the opcode is Info
    const PROVIDER = "5b4c3d2e-1f0a-4b9c-8d7e-6f5a4b3c2d1e";
    const traits = p().u16(0).ansiz("MyActivities").build();
    traits[0] = traits.length;
    const w = new EtlWriter({ perfFreq: 1_000_000n });
    const events: [string, number][] = [
      ["Activity2Start", 1],
      ["Activity2Stop", 2],
      ["Plain", 0],
      ["Sent", 9],
    ];
    events.forEach(([name, opcode], k) =>
      w.event(0, {
        headerType: 0x13,
        provider: PROVIDER,
        id: 0,
        version: 0,
        level: 4,
        opcode,
        task: 0,
        keywords: 0n,
        pid: 1,
        tid: 2,
        ts: w.anchor + BigInt(10 * (k + 1)),
        ext: [
          { type: 11, data: p().u16(0).u8(0).ansiz(name).ansiz("n").u8(7).build() },
          { type: 12, data: traits },
        ],
        payload: p().i32(k).build(),
      }),
    );
    const t = await openTrace(w.finish());
    expect(names(t).filter((n) => n.startsWith("MyActivities"))).toEqual([
      "MyActivities/Activity2Start/Start",
      "MyActivities/Activity2Stop/Stop",
      "MyActivities/Plain",
      "MyActivities/Sent/Send",
    ]);
    t.dispose();
  });

  it("SystemConfig opcodes TraceEvent's kernel parser has no template for take the OS's MOF names (MSNT_SystemTrace)", async () => {
    // KernelTraceEventParser.cs has SystemConfig templates for opcodes 10-17 and 21-23 only; the rest go to
    // RegisteredTraceEventParser, which asks TDH: a MOF event (DecodingSource 1) named by the OS's classes
    const w = new EtlWriter({ perfFreq: 1_000_000n });
    [28, 33, 34, 35].forEach((opcode, k) =>
      w.system(0, {
        headerType: 0x02,
        hookId: 0x0b00 | opcode,
        version: 2,
        pid: 4,
        tid: 8,
        ts: w.anchor + BigInt(10 * (k + 1)),
        payload: p().u32(k).build(),
      }),
    );
    const t = await openTrace(w.finish());
    expect(names(t).filter((n) => n.includes("SystemConfig"))).toEqual([
      "MSNT_SystemTrace/SystemConfig/DPI",
      "MSNT_SystemTrace/SystemConfig/DeviceFamily",
      "MSNT_SystemTrace/SystemConfig/FlightIds",
      "MSNT_SystemTrace/SystemConfig/Processors",
    ]);
    t.dispose();
    if (HAVE_CORPUS) {
      const real = await openTrace(readFileSync(etlPath("net.4.5.2.x64.etl")));
      expect(names(real).filter((n) => n.includes("SystemConfig/") && n.startsWith("MSNT"))).toContain("MSNT_SystemTrace/SystemConfig/DPI");
      real.dispose();
    }
  });
});

describe("TraceLogging structs in an EventPipe event's XML", () => {
  it('a struct as StructValue.ToString() writes it: { "name":value, ... }, int/bool/double bare, the rest quoted, arrays [ a, b ]', async () => {
    // DynamicTraceEventParser.cs, StructValue.WriteAsJSon: "{ " + "\"key\":" value joined by ", " + " }"; arrays
    // "[ " ... " ]"; int, bool, double and float appended as they are, null as null, anything else quoted
    // with \ and " escaped (Quote); TraceEvent.ToXml then escapes the text for the attribute (XmlAttrib)
    const { NettraceWriter } = await import("../dist/bindings/generator/nettrace-writer.js");
    const { eventXml, PayloadContext } = await import("../dist/bindings/perfview/index.js");
    const w = new NettraceWriter({ version: 5, processId: 7, syncTimeQpc: 100n, qpcFrequency: 1_000_000n, syncTimeUtc: new Date(Date.UTC(2024, 2, 5)) });
    const STRING = 18,
      INT32 = 9,
      UINT32 = 10,
      BOOLEAN = 3,
      OBJECT = 1,
      ARRAY = 19;
    const flat = w.defineEvent({
      providerName: "MySource",
      eventId: 1,
      eventName: "TestEvent",
      fields: [
        {
          name: "",
          typeCode: OBJECT,
          fields: [
            { name: "field1", typeCode: STRING },
            { name: "field2", typeCode: INT32 },
            { name: "field3", typeCode: INT32 },
          ],
        },
      ],
    });
    const nested = w.defineEvent({
      providerName: "MySource",
      eventId: 2,
      eventName: "TestNestedStructs",
      fields: [
        {
          name: "",
          typeCode: OBJECT,
          fields: [
            { name: "structVal", typeCode: OBJECT, fields: [{ name: "field17", typeCode: STRING }] },
            { name: "i", typeCode: INT32 },
          ],
        },
      ],
    });
    const kinds = w.defineEvent({
      providerName: "MySource",
      eventId: 3,
      eventName: "Kinds",
      fields: [
        {
          name: "s",
          typeCode: OBJECT,
          fields: [
            { name: "u", typeCode: UINT32 },
            { name: "b", typeCode: BOOLEAN },
            { name: "q", typeCode: STRING },
            { name: "a", typeCode: ARRAY, elementType: { typeCode: INT32 } },
          ],
        },
      ],
    });
    const u16 = (s: string) => {
      const b = new Uint8Array(2 * s.length + 2);
      for (let i = 0; i < s.length; i++) b[2 * i] = s.charCodeAt(i);
      return b;
    };
    const i32 = (...n: number[]) => new Uint8Array(new Int32Array(n).buffer);
    const u16n = (n: number) => new Uint8Array(new Uint16Array([n]).buffer);
    const event = (metadataId: number, timestamp: number, payload: Uint8Array) =>
      w.writeEvent({
        metadataId,
        timestamp,
        threadId: 10,
        captureThreadId: 10,
        processor: 0,
        payload,
        stack: null,
        activityId: null,
        relatedActivityId: null,
        sorted: false,
      });
    event(flat, 1000, Buffer.concat([u16("Hello"), i32(3, 6)]));
    event(nested, 1001, Buffer.concat([u16("hello world!"), i32(42)]));
    event(kinds, 1002, Buffer.concat([i32(7, 1), u16('say "hi" \\'), u16n(2), i32(1, -2)]));
    const t = await openTrace(w.finish());
    const ctx = new PayloadContext(t, t.processes, "current");
    const attrs: string[] = [];
    for (const r of t.events) {
      const x = eventXml(r, ctx, t.processes);
      attrs.push(x.slice(x.indexOf('ProviderName="MySource"') + 24, -2));
    }
    expect(attrs).toEqual([
      '="{ &quot;field1&quot;:&quot;Hello&quot;, &quot;field2&quot;:3, &quot;field3&quot;:6 }"',
      '="{ &quot;structVal&quot;:{ &quot;field17&quot;:&quot;hello world!&quot; }, &quot;i&quot;:42 }"',
      's="{ &quot;u&quot;:&quot;7&quot;, &quot;b&quot;:True, &quot;q&quot;:&quot;say \\&quot;hi\\&quot; \\\\&quot;, &quot;a&quot;:[ 1, -2 ] }"',
    ]);
    t.dispose();
  });
});

describe(".NET Core 2.0 EventPipe files (.netperf, Trace object version 2)", () => {
  it("read as EventPipeEventSource reads them: flat events up to the forward reference, metadata ids as stream offsets, pid 0, 64-bit", async () => {
    // EventPipeEventSource.cs (SUPPORT_V1_V2): FromStream reads a forward reference before the sync time and sets
    // process id 0, pointer size 8, one processor for versions below 3; Process() reads events until the offset
    // the reference resolves to; ReadObsoleteEventMetaData takes the record's stream offset as its metadata id,
    // then provider name, event id, version, the length of the rest (ReadMetadataCommon when not 0).
    // FastSerialization.cs FindEndTag: a version <= 2 EventPipeFile object may lack its end tag.
    const { NetperfV2Writer } = await import("../dist/bindings/generator/netperf-v2-writer.js");
    const { streamTrace } = await import("../dist/bindings/index.js");
    for (const omitTraceEndTag of [false, true]) {
      const w = new NetperfV2Writer({
        syncTimeUtc: new Date(Date.UTC(2018, 3, 5, 10, 20, 30, 400)),
        syncTimeQpc: 1000n,
        qpcFrequency: 1_000_000n,
        omitTraceEndTag,
      });
      const mine = w.defineEvent({
        providerName: "MySource",
        eventId: 1,
        eventName: "TestEvent",
        keywords: 0xf0n,
        level: 4,
        fields: [
          { name: "i", typeCode: 9 },
          { name: "s", typeCode: 18 },
        ],
      });
      const gc = w.defineEvent({ providerName: "Microsoft-Windows-DotNETRuntime", eventId: 1, version: 1 });
      const s = new Uint8Array([104, 0, 105, 0, 0, 0]);
      w.writeEvent({
        metadataId: mine,
        threadId: 7,
        timestamp: 2000n,
        payload: Buffer.concat([new Uint8Array(new Int32Array([42]).buffer), s]),
        stack: [0x1234n, 0x5678n],
      });
      const gcPayload = new Uint8Array(18);
      new DataView(gcPayload.buffer).setUint32(0, 5, true);
      w.writeEvent({ metadataId: gc, threadId: 8, timestamp: 3000n, payload: gcPayload });
      const bytes = w.finish();
      const t = await openTrace(bytes);
      expect({ version: t.eventPipeVersion, complete: t.complete, warnings: t.warnings.length }).toEqual({ version: 2, complete: true, warnings: 0 });
      expect({ ptr: t.info.pointerSize, processors: t.info.numberOfProcessors }).toEqual({ ptr: 8, processors: 1 });
      expect(names(t)).toEqual(["MySource/TestEvent", "Microsoft-Windows-DotNETRuntime/GC/Start"]);
      const rows: Record<string, unknown>[] = [];
      for (const r of t.events) rows.push({ pid: r.pid, tid: r.tid, ts: r.timestamp, fields: r.fields, stack: r.stack });
      expect(rows[0]).toEqual({ pid: 0, tid: 7, ts: 2000n, fields: { i: 42, s: "hi" }, stack: [0x1234n, 0x5678n] });
      expect(rows[1]).toMatchObject({ pid: 0, tid: 8, ts: 3000n, stack: null });
      expect((t.table("Microsoft-Windows-DotNETRuntime/GC/Start")!.columns.Count as Uint32Array)[0]).toBe(5);
      // streamed, and cut short: the rows before the cut, said where it stopped
      let streamed = 0;
      for await (const b of streamTrace(bytes, { chunkBytes: 64 << 10 })) streamed += b.events.length;
      expect(streamed).toBe(2);
      const cut = await openTrace(bytes.subarray(0, bytes.length - 30));
      expect(cut.complete).toBe(false);
      t.dispose();
      cut.dispose();
    }
  });
});

describe("GC statistics count the pinned-object heap", () => {
  it.skipIf(!HAVE_CORPUS)("gcevents GC 1: the POH's SizeBefore in HeapSizeBeforeMB, the LOH's allocation ticks twice in AllocedSinceLastGCMB", async () => {
    // TraceManagedProcess.cs (f3ec1b38): GetHeapSizeBeforeMB (2940-2949) adds every generation through GenPinObj (the
    // per-heap history's five GenData, the POH's SizeBefore 16,368 bytes); GetAllocedSinceLastGCMB (2876-2879) adds
    // GetUserAllocated of Gen0, GenLargeObj and GenPinObj, which for the first GC (2908-2937) is
    // AllocedSinceLastGCBasedOnAllocTickMB[gen == Gen0 ? 0 : 1]: the LOH's 0.325992 MB of ticks twice
    const { gcStats } = await import("../dist/bindings/analysis/index.js");
    const t = await openTrace(readFileSync(etlPath("gcevents.etl")));
    const [p] = await gcStats(t);
    const gc1 = p.GCs.find((g) => g.Number === 1)!;
    expect(gc1.HeapSizeBeforeMB).toBeCloseTo(1.468104, 9);
    expect(gc1.AllocedSinceLastGCMB).toBeCloseTo(1.775936, 9);
    expect(gc1.HeapSizePeakMB).toBeCloseTo(1.468104, 9);
    expect(gc1.RatioPeakAfter).toBeCloseTo(1.468104 / gc1.HeapSizeAfterMB, 12);
    t.dispose();
  });
});
