// Payload printing rules of TraceEvent that the corpus baselines barely exercise, on synthetic traces:
// .NET runtime events of old versions and short payloads (TraceEvent's classes name every field of the
// newest template and return 0 / "" for the ones a version lacks), DiskIO's DiskServiceTimeMSec (the
// elapsed time, or the time since the trace start: TraceEvent's table of completions stays empty) and
// SYSTEMTIME fields (the DateTime that DynamicTraceEventData builds, milliseconds read from the seconds word). Every expected
// text is worked out by hand from the getters of ClrTraceEventParser.cs, ClrPrivateTraceEventParser.cs,
// KernelTraceEventParser.cs and DynamicTraceEventParser.cs (noted next to each case), not from our code.
// Reads past the end of a payload are taken as zeros, as in test/kernel-net-print.test.ts.

import { describe, expect, it } from "vitest";
import { openTrace } from "../dist/bindings/index.js";
import { EtlWriter, PayloadBuilder } from "../dist/bindings/generator/etl-writer.js";
import { PayloadContext, payloadPairs, perfViewLines } from "../dist/bindings/perfview/index.js";
import { systemTimeText } from "../dist/bindings/perfview/dotnet-format.js";
import { clrCaseTrace, type ClrEventCase } from "./helpers/clr-cases.js";

const RUNTIME = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4";
const RUNDOWN = "a669021c-c450-4609-a035-5af59af4df18";
const PRIVATE = "763fd754-7086-4dfe-95eb-c01a46faf4ca";
const ZERO_GUID = "00000000-0000-0000-0000-000000000000";

const p = () => new PayloadBuilder();
const joined = (pairs: [string, string][]) => pairs.map(([n, v]) => `${n}=${v}`).join("; ");
/** A "name=value; " run as the baseline line prints it: values cut to 20 characters. */
const asLine = (text: string) =>
  text
    .split("; ")
    .map((nv) => {
      const i = nv.indexOf("=");
      const v = nv.slice(i + 1);
      return `${nv.slice(0, i)}=${v.length > 20 ? v.slice(0, 20) + "..." : v}; `;
    })
    .join("");

type Trace = Awaited<ReturnType<typeof openTrace>>;
type Row = ReturnType<Trace["events"]["row"]>;
/** Rows in time order that pass `keep` (byTime moves one cursor: each kept row is cloned). */
function rowsWhere(t: Trace, keep: (r: Row) => boolean): Row[] {
  const out: Row[] = [];
  for (const r of t.events.byTime()) if (keep(r)) out.push(r.clone());
  return out;
}

interface ClrCase extends ClrEventCase {
  what: string;
  name: string;
  /** PayloadNames=values of current TraceEvent, "; "-joined, untruncated. */
  text: string;
  /** The same for the 2020 release, where it differs. */
  text2020?: string;
}

const CONTENTION: ClrCase[] = [
  // ContentionStartTraceData: ContentionFlags / ClrInstanceID = byte at 0 / Int16 at 1 if Version >= 1, else 0;
  // LockID, AssociatedObjectID (Address) and LockOwnerThreadID (long) = Int64 at 3, 11, 19 if Version >= 2, else 0.
  // The 2020 ContentionTraceData had only the first two (same getters).
  {
    what: "Start v0, 3 bytes (.NET 4.5.2), 32-bit",
    provider: RUNTIME,
    id: 81,
    version: 0,
    ptr: 4,
    payload: p().u8(1).u16(7).build(),
    name: "Microsoft-Windows-DotNETRuntime/Contention/Start",
    text: "ContentionFlags=Managed; ClrInstanceID=0; LockID=0x00000000; AssociatedObjectID=0x00000000; LockOwnerThreadID=0",
    text2020: "ContentionFlags=Managed; ClrInstanceID=0",
  },
  {
    what: "Start v0, 3 bytes, 64-bit",
    provider: RUNTIME,
    id: 81,
    version: 0,
    ptr: 8,
    payload: p().u8(0).u16(3).build(),
    name: "Microsoft-Windows-DotNETRuntime/Contention/Start",
    text: "ContentionFlags=Managed; ClrInstanceID=0; LockID=0x00000000; AssociatedObjectID=0x00000000; LockOwnerThreadID=0",
    text2020: "ContentionFlags=Managed; ClrInstanceID=0",
  },
  {
    what: "Start v1, 3 bytes",
    provider: RUNTIME,
    id: 81,
    version: 1,
    ptr: 8,
    payload: p().u8(1).u16(7).build(),
    name: "Microsoft-Windows-DotNETRuntime/Contention/Start",
    text: "ContentionFlags=Native; ClrInstanceID=7; LockID=0x00000000; AssociatedObjectID=0x00000000; LockOwnerThreadID=0",
    text2020: "ContentionFlags=Native; ClrInstanceID=7",
  },
  {
    what: "Start v2, 27 bytes, 64-bit",
    provider: RUNTIME,
    id: 81,
    version: 2,
    ptr: 8,
    payload: p().u8(0).u16(9).u64(0x7ff612345678n).u64(0x1a2b3c4d5e6fn).u64(4242n).build(),
    name: "Microsoft-Windows-DotNETRuntime/Contention/Start",
    text: "ContentionFlags=Managed; ClrInstanceID=9; LockID=0x7ff612345678; AssociatedObjectID=0x1a2b3c4d5e6f; LockOwnerThreadID=4,242",
    text2020: "ContentionFlags=Managed; ClrInstanceID=9",
  },
  {
    // a 32-bit runtime writes 4-byte pointers (19 bytes); the getters still read 8 bytes at 3, 11 and 19:
    // LockID = AssociatedObjectID:LockID, AssociatedObjectID = the owner thread id, LockOwnerThreadID past the end
    what: "Start v2, 19 bytes, 32-bit",
    provider: RUNTIME,
    id: 81,
    version: 2,
    ptr: 4,
    payload: p().u8(1).u16(9).u32(0x00a1b2c3).u32(0x02d4e5f6).u64(4242n).build(),
    name: "Microsoft-Windows-DotNETRuntime/Contention/Start",
    text: "ContentionFlags=Native; ClrInstanceID=9; LockID=0x2d4e5f600a1b2c3; AssociatedObjectID=0x00001092; LockOwnerThreadID=0",
  },
  {
    what: "Start v2, cut after LockID (11 bytes)",
    provider: RUNTIME,
    id: 81,
    version: 2,
    ptr: 8,
    payload: p().u8(0).u16(9).u64(0x7ff612345678n).build(),
    name: "Microsoft-Windows-DotNETRuntime/Contention/Start",
    text: "ContentionFlags=Managed; ClrInstanceID=9; LockID=0x7ff612345678; AssociatedObjectID=0x00000000; LockOwnerThreadID=0",
  },
  // ContentionStopTraceData: ContentionFlags = byte at 0, ClrInstanceID = Int16 at 1 (any version),
  // DurationNs = double at 3 if Version >= 1, else 0. The 2020 ContentionTraceData: both 0 below version 1.
  {
    what: "Stop v0, 3 bytes (.NET 4.5.2)",
    provider: RUNTIME,
    id: 91,
    version: 0,
    ptr: 4,
    payload: p().u8(1).u16(7).build(),
    name: "Microsoft-Windows-DotNETRuntime/Contention/Stop",
    text: "ContentionFlags=Native; ClrInstanceID=7; DurationNs=0.000",
    text2020: "ContentionFlags=Managed; ClrInstanceID=0",
  },
  {
    what: "Stop v1, 11 bytes",
    provider: RUNTIME,
    id: 91,
    version: 1,
    ptr: 8,
    payload: p().u8(0).u16(5).f64(1234.5678).build(),
    name: "Microsoft-Windows-DotNETRuntime/Contention/Stop",
    text: "ContentionFlags=Managed; ClrInstanceID=5; DurationNs=1,234.568",
    text2020: "ContentionFlags=Managed; ClrInstanceID=5",
  },
  {
    what: "Stop v1, cut to 3 bytes",
    provider: RUNTIME,
    id: 91,
    version: 1,
    ptr: 8,
    payload: p().u8(1).u16(5).build(),
    name: "Microsoft-Windows-DotNETRuntime/Contention/Stop",
    text: "ContentionFlags=Native; ClrInstanceID=5; DurationNs=0.000",
    text2020: "ContentionFlags=Native; ClrInstanceID=5",
  },
];

const OTHERS: ClrCase[] = [
  // IOThreadTraceData: IOThreadCount Int32 at 0, RetiredIOThreads Int32 at 4, ClrInstanceID Int16 at 8 if Version >= 1
  {
    what: "IOThreadCreation/Start v0",
    provider: RUNTIME,
    id: 44,
    version: 0,
    ptr: 8,
    payload: p().u32(3).u32(1).build(),
    name: "Microsoft-Windows-DotNETRuntime/IOThreadCreation/Start",
    text: "IOThreadCount=3; RetiredIOThreads=1; ClrInstanceID=0",
  },
  {
    what: "IOThreadRetirement/Stop v1",
    provider: RUNTIME,
    id: 47,
    version: 1,
    ptr: 4,
    payload: p().u32(2).u32(5).u16(11).build(),
    name: "Microsoft-Windows-DotNETRuntime/IOThreadRetirement/Stop",
    text: "IOThreadCount=2; RetiredIOThreads=5; ClrInstanceID=11",
  },
  {
    // ModuleDCStartV2 uses ModuleLoadUnloadTraceData: the PDB fields are Guid.Empty / 0 / "" below version 2,
    // ModuleILFileName is the file name of ModuleILPath; ModuleID and AssemblyID are longs
    what: "Loader/ModuleDCStartV2 v0",
    provider: RUNTIME,
    id: 149,
    version: 0,
    ptr: 8,
    payload: p().u64(0x7ffa0010).u64(0x7ffa0000).u32(8).u32(0).utf16z("C:\\app\\app.exe").utf16z("").build(),
    name: "Microsoft-Windows-DotNETRuntime/Loader/ModuleDCStartV2",
    text: `ModuleID=2,147,090,448; AssemblyID=2,147,090,432; ModuleFlags=Manifest; ModuleILPath=C:\\app\\app.exe; ModuleNativePath=; ManagedPdbSignature=${ZERO_GUID}; ManagedPdbAge=0; ManagedPdbBuildPath=; NativePdbSignature=${ZERO_GUID}; NativePdbAge=0; NativePdbBuildPath=; ModuleILFileName=app.exe`,
  },
  {
    // R2RGetEntryPointTraceData names MethodID .. ClrInstanceID only: the MethodSize of version 1 is not printed
    what: "Method/R2RGetEntryPoint v1",
    provider: RUNTIME,
    id: 159,
    version: 1,
    ptr: 8,
    payload: p().u64(0x100).utf16z("NS").utf16z("M").utf16z("void ()").u64(0x7ff600001000n).u16(3).u32(64).build(),
    name: "Microsoft-Windows-DotNETRuntime/Method/R2RGetEntryPoint",
    text: "MethodID=256; MethodNamespace=NS; MethodName=M; MethodSignature=void (); EntryPoint=140,694,538,686,464; ClrInstanceID=3",
  },
  {
    // MethodILToNativeMapTraceData: MethodID, ReJITID, MethodExtent, CountOfMapEntries, ClrInstanceID (at
    // CountOfMapEntries * 8 + 19); no map arrays, no ILVersionID
    what: "rundown Method/ILToNativeMapDCStart v1",
    provider: RUNDOWN,
    id: 149,
    version: 1,
    ptr: 8,
    payload: p().u64(0x200).u64(0).u8(0).u16(2).u32(0).u32(4).u32(0).u32(16).u16(4).u64(1).build(),
    name: "Microsoft-Windows-DotNETRuntimeRundown/Method/ILToNativeMapDCStart",
    text: "MethodID=512; ReJITID=0; MethodExtent=0; CountOfMapEntries=2; ClrInstanceID=4",
  },
  {
    // MethodLoadUnloadTraceData: no ReJITID (the manifest's version 2 adds one); MethodFlags without the tier bits
    // (7-9) and the extent (28-31); OptimizationTier = (flags >> 7) & 7 as the method is Jitted
    what: "Method/Load v2",
    provider: RUNTIME,
    id: 141,
    version: 2,
    ptr: 8,
    payload: p().u64(0x100).u64(0x200).u64(0x7ff600001000n).u32(64).u32(0x06000001).u32(0x10000108).u16(3).u64(5).build(),
    name: "Microsoft-Windows-DotNETRuntime/Method/Load",
    text: "MethodID=256; ModuleID=512; MethodStartAddress=0x7ff600001000; MethodSize=64; MethodToken=100,663,297; MethodFlags=Jitted; ClrInstanceID=3; OptimizationTier=Optimized",
  },
  {
    // MethodLoadUnloadVerboseTraceData: ReJITID is 0 below version 2; OptimizationTier Unknown when not Jitted
    what: "Method/LoadVerbose v1, not jitted",
    provider: RUNTIME,
    id: 143,
    version: 1,
    ptr: 8,
    payload: p().u64(0x100).u64(0x200).u64(0x7ff600001000n).u32(64).u32(0x06000001).u32(0x100).utf16z("NS").utf16z("M").utf16z("void ()").u16(1).build(),
    name: "Microsoft-Windows-DotNETRuntime/Method/LoadVerbose",
    text: "MethodID=256; ModuleID=512; MethodStartAddress=0x7ff600001000; MethodSize=64; MethodToken=100,663,297; MethodFlags=None; MethodNamespace=NS; MethodName=M; MethodSignature=void (); ClrInstanceID=1; ReJITID=0; OptimizationTier=Unknown",
  },
  {
    // GCJoinTraceData: Heap, JoinTime (GcJoinTime), JoinType (GcJoinType), ClrInstanceID, ID (the JoinID)
    what: "GC/Join v2",
    provider: RUNTIME,
    id: 203,
    version: 2,
    ptr: 8,
    payload: p().u32(3).u32(1).u32(3).u16(7).u32(42).build(),
    name: "Microsoft-Windows-DotNETRuntime/GC/Join",
    text: "Heap=3; JoinTime=End; JoinType=FirstJoin; ClrInstanceID=7; ID=42",
  },
  {
    // event 20 (SampledObjectAllocationHigh) is GCSampledObjectAllocationTraceData, as 32 is
    what: "GC/SampledObjectAllocation (20) v0",
    provider: RUNTIME,
    id: 20,
    version: 0,
    ptr: 8,
    payload: p().u64(0x7ff600001000n).u64(0x7ff600002000n).u32(5).u64(500).u16(2).build(),
    name: "Microsoft-Windows-DotNETRuntime/GC/SampledObjectAllocation",
    text: "Address=0x7ff600001000; TypeID=0x7ff600002000; ObjectCountForTypeSample=5; TotalSizeForTypeSample=500; ClrInstanceID=2",
  },
  {
    // GCBulkRCWTraceData: Count, ClrInstanceID; Count is 0 when the payload is shorter than Count * 40 + 6
    what: "GC/BulkRCW v0, short",
    provider: RUNTIME,
    id: 37,
    version: 0,
    ptr: 8,
    payload: p().u32(2).u16(4).build(),
    name: "Microsoft-Windows-DotNETRuntime/GC/BulkRCW",
    text: "Count=0; ClrInstanceID=4",
  },
  {
    // GCBulkRootStaticVarTraceData: Count, AppDomainID (long), ClrInstanceID
    what: "GC/BulkRootStaticVar v0",
    provider: RUNTIME,
    id: 38,
    version: 0,
    ptr: 8,
    payload: p().u32(0).u64(0x1234).u16(5).build(),
    name: "Microsoft-Windows-DotNETRuntime/GC/BulkRootStaticVar",
    text: "Count=0; AppDomainID=4,660; ClrInstanceID=5",
  },
  // ClrPrivateTraceEventParser.cs
  {
    // GCOptimizedTraceData: ClrInstanceID Int16 at 20 if Version >= 1, else 0
    what: "private GC/Optimized v0",
    provider: PRIVATE,
    id: 3,
    version: 0,
    ptr: 8,
    payload: p().u64(1000000).u64(2000000).u32(1).build(),
    name: "Microsoft-Windows-DotNETRuntimePrivate/GC/Optimized",
    text: "DesiredAllocation=1,000,000; NewAllocation=2,000,000; GenerationNumber=1; ClrInstanceID=0",
  },
  {
    // BGCOverflowTraceData: Min, Max, Objects, IsLarge, ClrInstanceID; the GenNumber of version 1 is not printed
    what: "private GC/BGCOverflow v1",
    provider: PRIVATE,
    id: 22,
    version: 1,
    ptr: 8,
    payload: p().u64(4096).u64(1048576).u64(25).u32(1).u16(3).u32(2).build(),
    name: "Microsoft-Windows-DotNETRuntimePrivate/GC/BGCOverflow",
    text: "Min=4,096; Max=1,048,576; Objects=25; IsLarge=1; ClrInstanceID=3",
  },
  {
    // event 6 is registered with the public GCJoinTraceData: ClrInstanceID 0 below version 1 (even when present),
    // ID is (int)GcJoinID.Invalid below version 2
    what: "private GC/Join v0",
    provider: PRIVATE,
    id: 6,
    version: 0,
    ptr: 8,
    payload: p().u32(2).u32(0).u32(1).u16(9).build(),
    name: "Microsoft-Windows-DotNETRuntimePrivate/GC/Join",
    text: "Heap=2; JoinTime=Start; JoinType=Join; ClrInstanceID=0; ID=-256",
  },
  {
    // GCFullNotifyTraceData: ClrInstanceID Int16 at 8 if Version >= 1, else 0
    what: "private GC/FullNotify v0",
    provider: PRIVATE,
    id: 25,
    version: 0,
    ptr: 8,
    payload: p().u32(2).u32(1).build(),
    name: "Microsoft-Windows-DotNETRuntimePrivate/GC/FullNotify",
    text: "GenNumber=2; IsAlloc=1; ClrInstanceID=0",
  },
  {
    // StartupTraceData: ClrInstanceID Int16 at 0 if Version >= 1, else 0
    what: "private Startup/EEStartupStart v0, empty",
    provider: PRIVATE,
    id: 80,
    version: 0,
    ptr: 8,
    payload: new Uint8Array(0),
    name: "Microsoft-Windows-DotNETRuntimePrivate/Startup/EEStartupStart",
    text: "ClrInstanceID=0",
  },
];

const clrTrace = clrCaseTrace;

describe(".NET runtime events of every version: the fields of TraceEvent's newest template", () => {
  it("Contention Start and Stop, every version, full and short payloads, both pointer sizes and editions", async () => {
    const { t, rowOf } = await clrTrace(CONTENTION);
    const current = new PayloadContext(t, t.processes, "current");
    const old = new PayloadContext(t, t.processes, "2020");
    for (const [k, c] of CONTENTION.entries()) {
      const row = rowOf(k);
      expect(row.payloadLength, c.what).toBe(c.payload.length);
      expect(t.names.ofRow(row.index), c.what).toBe(c.name);
      expect(joined(payloadPairs(row, current)), c.what).toBe(c.text);
      if (c.text2020) expect(joined(payloadPairs(row, old)), `${c.what}, 2020`).toBe(c.text2020);
    }
    t.dispose();
  });

  it("Contention lines as the baseline prints them", async () => {
    const { t } = await clrTrace(CONTENTION);
    const lines = [...perfViewLines(t, { maxEventsPerName: 100 })].filter((l) => l.startsWith("EVENT ") && l.includes("/Contention/"));
    expect(lines).toHaveLength(CONTENTION.length);
    for (const [k, c] of CONTENTION.entries()) {
      const m = /^EVENT [\d,.]+: (\S+) PID=1; TID=2; PName=[^;]*; ProceNum=0; DataLen=(\d+); (.*)$/.exec(lines[k]);
      expect(m, lines[k]).not.toBeNull();
      expect([m![1], Number(m![2]), m![3]], c.what).toEqual([c.name, c.payload.length, asLine(c.text)]);
    }
    // the held-back .NET 4.5.2 case, spelled out
    expect(
      lines[0].endsWith("; DataLen=3; ContentionFlags=Managed; ClrInstanceID=0; LockID=0x00000000; AssociatedObjectID=0x00000000; LockOwnerThreadID=0; "),
    ).toBe(true);
    expect(lines[6].endsWith("; DataLen=3; ContentionFlags=Native; ClrInstanceID=7; DurationNs=0.000; ")).toBe(true);
    t.dispose();
  });

  it("other events with old versions or classes that stop short of the manifest", async () => {
    const { t, rowOf } = await clrTrace(OTHERS);
    const ctx = new PayloadContext(t, t.processes, "current");
    for (const [k, c] of OTHERS.entries()) {
      const row = rowOf(k);
      expect(t.names.ofRow(row.index), c.what).toBe(c.name);
      expect(joined(payloadPairs(row, ctx)), c.what).toBe(c.text);
    }
    t.dispose();
  });
});

// ------------------------------------------------------------------ DiskIO

const DISKIO = 0x01; // kernel group byte of the SYSTEM header's HookId
const FILE_KEY = 0xffffc00012340000n;
const IRP = 0xffffa00000001000n;

interface DiskIo {
  /** Microseconds after the trace start (the clock runs at 1 MHz). */
  us: number;
  opcode: 10 | 11 | 14;
  disk: number;
  /** HighResResponseTime in ticks (µs). */
  elapsed: number;
  proc: number;
}

function diskPayload(d: DiskIo): Uint8Array {
  if (d.opcode === 14) return p().u32(d.disk).u32(0).u64(d.elapsed).u64(IRP).build();
  // DiskNumber, IrpFlags, TransferSize, Reserved, ByteOffset, FileKey, Irp, HighResResponseTime (64-bit)
  return p().u32(d.disk).u32(0).u32(4096).u32(0).i64(1048576).u64(FILE_KEY).u64(IRP).u64(d.elapsed).build();
}

async function diskTrace(ios: DiskIo[]) {
  const w = new EtlWriter({ perfFreq: 1_000_000n });
  // processor 1's records follow all of processor 0's in the file: file order is not time order
  for (const d of ios) {
    w.system(d.proc, {
      headerType: 0x02,
      hookId: (DISKIO << 8) | d.opcode,
      version: 2,
      pid: 1234,
      tid: 5678,
      ts: w.anchor + BigInt(d.us),
      payload: diskPayload(d),
    });
  }
  return openTrace(w.finish());
}

// In time order (ms): E1 d0 10, E2 d1 12, E3 d0 13, F (FlushBuffers) d0 14.5, E5 d0 15, E6 d1 16, E7 d0 17.
const IOS: DiskIo[] = [
  { us: 10_000, opcode: 10, disk: 0, elapsed: 4000, proc: 0 }, // E1
  { us: 12_000, opcode: 11, disk: 1, elapsed: 3000, proc: 1 }, // E2
  { us: 13_000, opcode: 10, disk: 0, elapsed: 5000, proc: 1 }, // E3
  { us: 14_500, opcode: 14, disk: 0, elapsed: 500, proc: 0 }, // F
  { us: 15_000, opcode: 11, disk: 0, elapsed: 2000, proc: 0 }, // E5
  { us: 16_000, opcode: 10, disk: 1, elapsed: 6000, proc: 1 }, // E6
  { us: 17_000, opcode: 10, disk: 0, elapsed: 4000, proc: 0 }, // E7
];

describe("DiskIO DiskServiceTimeMSec as DiskIOTraceData computes it", () => {
  // KernelTraceEventParser.cs (perfview 02d3ef71), DiskIOTraceData.DiskServiceTimeMSec:
  //   Math.Min(ElapsedTimeMSec, timeStampRelativeMSec - lastDiskIOTimeForDiskRelativeMSec), the last time found by
  //   searching state.diskEventTimeStamp, and 0 ("assume I/O happened long ago") when that table is empty.
  // KernelTraceEventParserState.diskEventTimeStamp is a property returning a GrowableArray<DiskIOTime>, a struct,
  // by value: the parser's `state.diskEventTimeStamp.Add(...)` adds to a copy, the table's Count stays 0, and the
  // search never runs. So every DiskIO Read/Write prints Min(ElapsedTimeMSec, TimeStampRelativeMSec), whatever the
  // I/Os on the same disk before it; the one-line TODO after ElapsedTimeMSec says the same ("you can get service
  // time ... by taking the minimum of the Elapsed time and the time of the completion of the last Disk event").
  // A queue-derived value would differ here: E5 (disk 0, t=15, elapsed 2) follows F (disk 0, t=14.5) -> 0.500.
  const expected: [string, number, string, string][] = [
    ["Read", 10, "4.000", "4.000"],
    ["Write", 12, "3.000", "3.000"],
    ["Read", 13, "5.000", "5.000"],
    ["Write", 15, "2.000", "2.000"],
    ["Read", 16, "6.000", "6.000"],
    ["Read", 17, "4.000", "4.000"],
  ];

  it("is the elapsed time in the printed lines, whatever completed before on the same disk", async () => {
    const t = await diskTrace(IOS);
    const lines = [...perfViewLines(t)].filter((l) => / Windows Kernel\/DiskIO\/(Read|Write) /.test(l));
    expect(lines).toHaveLength(expected.length);
    for (const [k, [op, ms, elapsed, service]] of expected.entries()) {
      expect(lines[k]).toBe(
        `EVENT ${ms}.000: Windows Kernel/DiskIO/${op} PID=1234; TID=5678; PName=Process(1234); ProceNum=${IOS.filter((d) => d.opcode !== 14)[k].proc}; DataLen=48; ` +
          `DiskNumber=${IOS.filter((d) => d.opcode !== 14)[k].disk}; IrpFlags=None; Priority=Notset; TransferSize=4,096; ByteOffset=1,048,576; ` +
          `Irp=0xffffa00000001000; ElapsedTimeMSec=${elapsed}; DiskServiceTimeMSec=${service}; FileKey=0xffffc00012340000; FileName=; `,
      );
    }
    t.dispose();
  });

  it("is the time since the trace start when the I/O took longer than that", async () => {
    // t = 2 ms, elapsed 7 ms: Min(7, 2 - 0) = 2.000; t = 9 ms, elapsed 9 ms: Min(9, 9) = 9.000
    const t = await diskTrace([
      { us: 2_000, opcode: 10, disk: 0, elapsed: 7000, proc: 0 },
      { us: 9_000, opcode: 11, disk: 0, elapsed: 9000, proc: 0 },
    ]);
    const ctx = new PayloadContext(t, t.processes, "current");
    const rows = rowsWhere(t, (r) => r.payloadLength === 48);
    const pairs = rows.map((r) => new Map(payloadPairs(r, ctx)));
    expect(pairs.map((m) => [m.get("ElapsedTimeMSec"), m.get("DiskServiceTimeMSec")])).toEqual([
      ["7.000", "2.000"],
      ["9.000", "9.000"],
    ]);
    t.dispose();
  });
});

// ------------------------------------------------------------------ SYSTEMTIME

const SYSTEMTIME = (y: number, mo: number, dow: number, d: number, h: number, mi: number, s: number, ms: number) =>
  p().u16(y).u16(mo).u16(dow).u16(d).u16(h).u16(mi).u16(s).u16(ms).build();

describe("SYSTEMTIME fields as DynamicTraceEventData reads them", () => {
  it("milliseconds come from the seconds word; DateTime's range checks give the exception text", () => {
    // new DateTime(year, month, day, hour, minute, second, milliseconds = second, Utc), printed "yy/MM/dd HH:mm:ss.ffffff"
    expect(systemTimeText(SYSTEMTIME(2021, 9, 4, 9, 14, 59, 35, 799))).toBe("21/09/09 14:59:35.035000");
    expect(systemTimeText(SYSTEMTIME(2024, 2, 4, 29, 23, 5, 7, 1))).toBe("24/02/29 23:05:07.007000");
    expect(systemTimeText(SYSTEMTIME(1999, 12, 0, 31, 0, 0, 0, 999))).toBe("99/12/31 00:00:00.000000");
    expect(systemTimeText(SYSTEMTIME(2023, 2, 3, 29, 1, 2, 3, 4))).toBe("<<<EXCEPTION_DURING_VALUE_LOOKUP ArgumentOutOfRangeException>>>");
    expect(systemTimeText(SYSTEMTIME(2021, 13, 0, 1, 0, 0, 0, 0))).toBe("<<<EXCEPTION_DURING_VALUE_LOOKUP ArgumentOutOfRangeException>>>");
    expect(systemTimeText(SYSTEMTIME(2021, 1, 0, 1, 0, 0, 60, 0))).toBe("<<<EXCEPTION_DURING_VALUE_LOOKUP ArgumentOutOfRangeException>>>");
  });

  it("a TraceLogging event's SYSTEMTIME field, in pairs and in the line", async () => {
    const PROVIDER = "3f1a2b4c-5d6e-4f70-8192-a3b4c5d6e7f8";
    // EVENT_SCHEMA_TL: size, one tag byte, event name, then per field name and in-type (2 ANSI string, 18 SYSTEMTIME)
    const schema = p().u16(0).u8(0).ansiz("Stamp").ansiz("label").u8(2).ansiz("when").u8(18).ansiz("count").u8(7).build();
    const traits = p().u16(0).ansiz("MyTimes").build();
    traits[0] = traits.length;
    const w = new EtlWriter({ perfFreq: 1_000_000n });
    const times = [SYSTEMTIME(2021, 9, 4, 9, 14, 59, 35, 799), SYSTEMTIME(2021, 13, 0, 1, 0, 0, 0, 0)];
    times.forEach((st, k) =>
      w.event(0, {
        headerType: 0x13,
        provider: PROVIDER,
        id: 0,
        version: 0,
        level: 4,
        opcode: 0,
        task: 0,
        keywords: 0n,
        pid: 1,
        tid: 2,
        ts: w.anchor + BigInt(1000 * (k + 1)),
        ext: [
          { type: 11, data: schema },
          { type: 12, data: traits },
        ],
        payload: p().ansiz("x").bytes(st).i32(-5).build(),
      }),
    );
    const t = await openTrace(w.finish());
    const ctx = new PayloadContext(t, t.processes, "current");
    const rows = rowsWhere(t, (r) => r.payloadLength > 0 && r.headerType === 0x13);
    expect(rows.map((r) => joined(payloadPairs(r, ctx)))).toEqual([
      "label=x; when=21/09/09 14:59:35.035000; count=-5",
      "label=x; when=<<<EXCEPTION_DURING_VALUE_LOOKUP ArgumentOutOfRangeException>>>; count=-5",
    ]);
    const lines = [...perfViewLines(t)].filter((l) => l.includes("/Stamp "));
    expect(lines.map((l) => l.slice(l.indexOf("label=")))).toEqual([
      "label=x; when=21/09/09 14:59:35.03...; count=-5; ",
      "label=x; when=<<<EXCEPTION_DURING_...; count=-5; ",
    ]);
    t.dispose();
  });

  it("an EventSource manifest's win:SYSTEMTIME field ends the payload names (ProviderManifest has no type for it)", async () => {
    const PROVIDER = "9e0b2a7c-1d3f-4a5b-8c6d-7e8f90a1b2c3";
    const manifest =
      `<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events"><instrumentation><events>` +
      `<provider name="MyTimes" guid="{${PROVIDER}}" symbol="MyTimes">` +
      `<tasks><task name="Stamp" value="1"/></tasks>` +
      `<templates><template tid="StampArgs"><data name="Label" inType="win:UnicodeString"/>` +
      `<data name="When" inType="win:SYSTEMTIME"/><data name="Count" inType="win:Int32"/></template></templates>` +
      `<events><event value="1" version="0" level="win:Informational" task="Stamp" template="StampArgs"/></events>` +
      `</provider></events></instrumentation></instrumentationManifest>`;
    const w = new EtlWriter({ perfFreq: 1_000_000n });
    const ev = (id: number, ts: number, payload: Uint8Array, opcode = 0, task = 1) =>
      w.event(0, {
        headerType: 0x13,
        provider: PROVIDER,
        id,
        version: 0,
        level: 4,
        opcode,
        task,
        keywords: 0n,
        pid: 1,
        tid: 2,
        ts: w.anchor + BigInt(ts),
        payload,
      });
    // the manifest event: Format, MajorVersion, MinorVersion, Magic 0x5B, TotalChunks, ChunkNumber, then the XML
    ev(0xfffe, 1000, p().u8(1).u8(1).u8(0).u8(0x5b).u16(1).u16(0).bytes(new TextEncoder().encode(manifest)).build(), 0xfe, 0xfffe);
    ev(
      1,
      2000,
      p()
        .utf16z("hello")
        .bytes(SYSTEMTIME(2021, 9, 4, 9, 14, 59, 35, 799))
        .i32(3)
        .build(),
    );
    const t = await openTrace(w.finish());
    const ctx = new PayloadContext(t, t.processes, "current");
    const row = rowsWhere(t, (r) => r.eventId === 1)[0];
    expect(t.names.ofRow(row.index)).toBe("MyTimes/Stamp");
    expect(joined(payloadPairs(row, ctx))).toBe("Label=hello");
    t.dispose();
  });
});
