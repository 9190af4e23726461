// Classic kernel FileIO and Thread events printed as TraceEvent's KernelTraceEventParser prints them, on a
// synthetic trace: FileIO's Name, Create, SimpleOp, ReadWrite, Info, DirEnum, OpEnd and MapFile templates and
// the Thread, SetName and CSwitch ones, V2 and V3 layouts, 32- and 64-bit, full and cut short; plus the event
// names TraceEvent's EnumerateTemplates gives where ours differed. The expected text is worked out by hand from
// the getters' offsets in KernelTraceEventParser.cs (noted next to each case), not from our code.

import { describe, expect, it } from "vitest";
import { EtlWriter } from "../dist/bindings/generator/etl-writer.js";
import { openTrace } from "../dist/bindings/index.js";
import {
  HEADER_PID,
  HEADER_TID,
  expectEventLine,
  expectKernelCases,
  joinedPairs,
  kernelCaseTrace,
  type KernelCase,
  p,
  type CaseBuilder,
} from "./helpers/kernel-cases.js";
import { PayloadContext, payloadPairs, perfViewLines } from "../dist/bindings/perfview/index.js";

const FILEIO = 0x04; // kernel group bytes of the SYSTEM header's HookId
const THREAD = 0x05;
const PAGEFAULT = 0x02;
const DISKIO = 0x01;
const NONE = 0xffffffff; // a header without process or thread (-1)

const KEY = 0xfffffa8000001000n; // the file key the Name event names
const FO8 = 0xfffffa8000002000n; // file object of the 64-bit Create
const FO4 = 0x82001000; // file object of the 32-bit Create
const IRP8 = 0xfffffa80000a0b0cn;

type Case = KernelCase;

const CASES: Case[] = [
  // ---------------------------------------------------------------- FileIONameTraceData (0, 32, 35, 36)
  {
    // FileKey GetAddressAt(0), FileName at HostOffset(4, 1)
    what: "Name, 64-bit",
    group: FILEIO,
    opcode: 0,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/FileIO/Name",
    payload: p().u64(KEY).utf16z("\\Device\\HarddiskVolume2\\a.txt").build(),
    text: "FileKey=0xfffffa8000001000; FileName=\\Device\\HarddiskVolume2\\a.txt",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  {
    what: "FileRundown, 32-bit",
    group: FILEIO,
    opcode: 36,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/FileIO/FileRundown",
    payload: p().u32(0x81000000).utf16z("\\Device\\X").build(),
    text: "FileKey=0x81000000; FileName=\\Device\\X",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- FileIOCreateTraceData (64)
  {
    // V3: FileObject HostOffset(4,1)=8, TTID HostOffset(8,2)=16, options HostOffset(12,2)=20 (disposition its
    // top byte 23), attributes 24, share 28, name 32. Header thread -1: the TTID; its process unknown: -1
    what: "Create V3, 64-bit, header without thread",
    group: FILEIO,
    opcode: 64,
    version: 3,
    ptr: 8,
    name: "Windows Kernel/FileIO/Create",
    payload: p()
      .u64(IRP8)
      .u64(FO8)
      .u32(4321)
      .u32((1 << 24) | 0x60)
      .u32(0x81)
      .u32(7)
      .utf16z("C:\\x")
      .build(),
    text:
      "IrpPtr=0xfffffa80000a0b0c; FileObject=0xfffffa8000002000; CreateOptions=FILE_ATTRIBUTE_ARCHIVE, FILE_ATTRIBUTE_DEVICE; " +
      "CreateDispostion=CREATE_NEW; FileAttributes=ReadOnly, Normal; ShareAccess=ReadWrite, Delete; FileName=C:\\x",
    pid: -1,
    tid: 4321,
    hpid: NONE,
    htid: NONE,
  },
  {
    // V2: TTID HostOffset(4,1)=4, FileObject HostOffset(8,2)=8, options HostOffset(12,3)=12, name HostOffset(24,3)=24;
    // zero options are NONE, disposition 0 has no name, FileAttributes has no zero member
    what: "Create V2, 32-bit",
    group: FILEIO,
    opcode: 64,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/FileIO/Create",
    payload: p().u32(0x85000000).u32(999).u32(FO4).u32(0).u32(0).u32(0).utf16z("\\??\\C:\\y").build(),
    text: "IrpPtr=0x85000000; FileObject=0x82001000; CreateOptions=NONE; CreateDispostion=0; FileAttributes=0; ShareAccess=None; FileName=\\??\\C:\\y",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- FileIOReadWriteTraceData (67, 68)
  {
    // V3: Offset 0, IrpPtr 8, FileObject HostOffset(12,1)=16, FileKey HostOffset(16,2)=24, TTID HostOffset(20,3)=32,
    // IoSize HostOffset(24,3)=36, IoFlags 40; the name by FileKey
    what: "Read V3, 64-bit",
    group: FILEIO,
    opcode: 67,
    version: 3,
    ptr: 8,
    name: "Windows Kernel/FileIO/Read",
    payload: p().i64(0x12345678n).u64(IRP8).u64(FO8).u64(KEY).u32(555).u32(65536).u32(0x900).build(),
    text:
      "Offset=305,419,896; IrpPtr=0xfffffa80000a0b0c; FileObject=0xfffffa8000002000; FileKey=0xfffffa8000001000; " +
      "IoSize=65,536; IoFlags=2,304; FileName=\\Device\\HarddiskVolume2\\a.txt",
    pid: -1,
    tid: 555,
    hpid: NONE,
    htid: NONE,
  },
  {
    // V2: TTID HostOffset(12,1)=12, FileObject HostOffset(16,2)=16, FileKey HostOffset(20,3)=20, IoSize 24, IoFlags 28;
    // the key is unnamed, the file object is the 32-bit Create's
    what: "Write V2, 32-bit",
    group: FILEIO,
    opcode: 68,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/FileIO/Write",
    payload: p().i64(-1n).u32(0x85000000).u32(999).u32(FO4).u32(0x86000000).u32(0x80000000).u32(1).build(),
    text: "Offset=-1; IrpPtr=0x85000000; FileObject=0x82001000; FileKey=0x86000000; IoSize=-2,147,483,648; IoFlags=1; FileName=\\??\\C:\\y",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  {
    // cut after FileObject: the key and the sizes read as zero, the name comes from the file object
    what: "Read V3, 64-bit, cut after FileObject",
    group: FILEIO,
    opcode: 67,
    version: 3,
    ptr: 8,
    name: "Windows Kernel/FileIO/Read",
    payload: p().i64(4096n).u64(IRP8).u64(FO8).u64(KEY).u32(555).u32(65536).u32(0x900).cut(24),
    text: "Offset=4,096; IrpPtr=0xfffffa80000a0b0c; FileObject=0xfffffa8000002000; FileKey=0x00000000; IoSize=0; IoFlags=0; FileName=C:\\x",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- FileIOSimpleOpTraceData (65, 66, 73)
  {
    // V3: FileObject HostOffset(4,1)=8, FileKey HostOffset(8,2)=16, TTID HostOffset(12,3)=24
    what: "Cleanup V3, 64-bit",
    group: FILEIO,
    opcode: 65,
    version: 3,
    ptr: 8,
    name: "Windows Kernel/FileIO/Cleanup",
    payload: p().u64(IRP8).u64(FO8).u64(0xfffffa8000009999n).u32(3131).build(),
    text: "IrpPtr=0xfffffa80000a0b0c; FileObject=0xfffffa8000002000; FileKey=0xfffffa8000009999; FileName=C:\\x",
    pid: -1,
    tid: 3131,
    hpid: NONE,
    htid: NONE,
  },
  {
    // V2: TTID 4, FileObject HostOffset(8,2)=8, FileKey HostOffset(12,3)=12
    what: "Flush V2, 32-bit",
    group: FILEIO,
    opcode: 73,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/FileIO/Flush",
    payload: p().u32(0x85000000).u32(3232).u32(0x82005000).u32(0x81000000).build(),
    text: "IrpPtr=0x85000000; FileObject=0x82005000; FileKey=0x81000000; FileName=\\Device\\X",
    pid: -1,
    tid: 3232,
    hpid: NONE,
    htid: NONE,
  },
  // ---------------------------------------------------------------- FileIOInfoTraceData (69, 70, 71, 74, 75)
  {
    // V3: ExtraInfo HostOffset(12,3)=12, TTID HostOffset(16,4)=16, InfoClass HostOffset(20,4)=20
    what: "SetInfo V3, 32-bit",
    group: FILEIO,
    opcode: 69,
    version: 3,
    ptr: 4,
    name: "Windows Kernel/FileIO/SetInfo",
    payload: p().u32(0x85000000).u32(FO4).u32(0x81000000).u32(0x1234).u32(3333).u32(20).build(),
    text: "IrpPtr=0x85000000; FileObject=0x82001000; FileKey=0x81000000; ExtraInfo=0x00001234; InfoClass=20; FileName=\\Device\\X",
    pid: -1,
    tid: 3333,
    hpid: NONE,
    htid: NONE,
  },
  {
    // V2: TTID 8, FileObject HostOffset(8,2)=16, FileKey HostOffset(12,3)=24, ExtraInfo HostOffset(16,4)=32,
    // InfoClass HostOffset(20,5)=40
    what: "Rename V2, 64-bit",
    group: FILEIO,
    opcode: 71,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/FileIO/Rename",
    payload: p().u64(IRP8).u64(3434).u64(FO8).u64(KEY).u64(0xabcdn).u32(10).build(),
    text:
      "IrpPtr=0xfffffa80000a0b0c; FileObject=0xfffffa8000002000; FileKey=0xfffffa8000001000; ExtraInfo=0x0000abcd; " +
      "InfoClass=10; FileName=\\Device\\HarddiskVolume2\\a.txt",
    pid: -1,
    tid: 3434,
    hpid: NONE,
    htid: NONE,
  },
  {
    what: "FSControl V3, 64-bit, header thread kept",
    group: FILEIO,
    opcode: 75,
    version: 3,
    ptr: 8,
    name: "Windows Kernel/FileIO/FSControl",
    payload: p().u64(IRP8).u64(0n).u64(0n).u64(0x90000n).u32(3535).u32(0x900a8).build(),
    text: "IrpPtr=0xfffffa80000a0b0c; FileObject=0x00000000; FileKey=0x00000000; ExtraInfo=0x00090000; InfoClass=589,992; FileName=",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- FileIODirEnumTraceData (72, 77)
  {
    // V3: TTID HostOffset(12,3)=24, Length HostOffset(16,3)=28, InfoClass 32, FileIndex 36, FileName HostOffset(28,3)=40
    what: "DirEnum V3, 64-bit",
    group: FILEIO,
    opcode: 72,
    version: 3,
    ptr: 8,
    name: "Windows Kernel/FileIO/DirEnum",
    payload: p().u64(IRP8).u64(FO8).u64(KEY).u32(3636).u32(4096).u32(37).u32(2).utf16z("*.dll").build(),
    text:
      "IrpPtr=0xfffffa80000a0b0c; FileObject=0xfffffa8000002000; FileKey=0xfffffa8000001000; " +
      "DirectoryName=\\Device\\HarddiskVolume2\\a.txt; Length=4,096; InfoClass=37; FileIndex=2; FileName=*.dll",
    pid: -1,
    tid: 3636,
    hpid: NONE,
    htid: NONE,
  },
  {
    // V2: TTID 4, Length HostOffset(16,4)=16, InfoClass 20, FileIndex 24, FileName HostOffset(28,4)=28
    what: "DirNotify V2, 32-bit",
    group: FILEIO,
    opcode: 77,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/FileIO/DirNotify",
    payload: p().u32(0x85000000).u32(3737).u32(0x82009000).u32(0x81000000).u32(100).u32(1).u32(0).utf16z("sub").build(),
    text: "IrpPtr=0x85000000; FileObject=0x82009000; FileKey=0x81000000; DirectoryName=\\Device\\X; Length=100; InfoClass=1; FileIndex=0; FileName=sub",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- FileIOOpEndTraceData (76): no fix-up
  {
    // ExtraInfo HostOffset(4,1), NtStatus HostOffset(8,2)
    what: "OperationEnd, 64-bit",
    group: FILEIO,
    opcode: 76,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/FileIO/OperationEnd",
    payload: p().u64(IRP8).u64(5n).u32(0xc0000034).build(),
    text: "IrpPtr=0xfffffa80000a0b0c; ExtraInfo=0x00000005; NtStatus=-1,073,741,772",
    pid: -1,
    tid: -1,
    hpid: NONE,
    htid: NONE,
  },
  {
    what: "OperationEnd, 32-bit",
    group: FILEIO,
    opcode: 76,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/FileIO/OperationEnd",
    payload: p().u32(0x85000000).u32(0).u32(0).build(),
    text: "IrpPtr=0x85000000; ExtraInfo=0x00000000; NtStatus=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- MapFileTraceData (37-40)
  {
    // V3: FileKey HostOffset(4,1)=8, MiscInfo HostOffset(8,2)=16, ViewSize HostOffset(16,2)=24,
    // ByteOffset HostOffset(20,3)=32, process HostOffset(28,3)=40
    what: "MapFile V3, 64-bit",
    group: FILEIO,
    opcode: 37,
    version: 3,
    ptr: 8,
    name: "Windows Kernel/FileIO/MapFile",
    payload: p().u64(0x7ff600000000n).u64(KEY).i64(3n).u64(0x20000n).i64(8192n).u32(4040).build(),
    text:
      "ViewBase=0x7ff600000000; FileKey=0xfffffa8000001000; MiscInfo=3; ViewSize=0x00020000; ByteOffset=8,192; " + "FileName=\\Device\\HarddiskVolume2\\a.txt",
    pid: 4040,
    tid: HEADER_TID,
  },
  {
    // V2: ViewSize HostOffset(16,2)=16, no ByteOffset, process HostOffset(20,3)=20
    what: "UnmapFile V2, 32-bit",
    group: FILEIO,
    opcode: 38,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/FileIO/UnmapFile",
    payload: p().u32(0x10000000).u32(0x81000000).i64(0n).u32(0x1000).u32(4141).build(),
    text: "ViewBase=0x10000000; FileKey=0x81000000; MiscInfo=0; ViewSize=0x00001000; ByteOffset=0; FileName=\\Device\\X",
    pid: 4141,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- ThreadTraceData (1-4)
  {
    // V3: ids 0/4, seven pointers from 8, SubProcessTag HostOffset(36,7)=64, bytes 68-71, ThreadName HostOffset(44,7)=72;
    // Start: the thread and process from the payload, the header's as the parents
    what: "Thread Start V3, 64-bit",
    group: THREAD,
    opcode: 1,
    version: 3,
    ptr: 8,
    name: "Windows Kernel/Thread/Start",
    payload: p()
      .u32(500)
      .u32(600)
      .u64(0xa1n)
      .u64(0xa2n)
      .u64(0xa3n)
      .u64(0xa4n)
      .u64(0xa5n)
      .u64(0xa6n)
      .u64(0xa7n)
      .u32(9)
      .u8(8)
      .u8(5)
      .u8(2)
      .u8(1)
      .utf16z("worker")
      .build(),
    text:
      "StackBase=0x000000a1; StackLimit=0x000000a2; UserStackBase=0x000000a3; UserStackLimit=0x000000a4; StartAddr=0x000000a5; " +
      "Win32StartAddr=0x000000a6; TebBase=0x000000a7; SubProcessTag=9; BasePriority=8; PagePriority=5; IoPriority=2; ThreadFlags=1; " +
      "ThreadName=worker; ParentThreadID=88; ParentProcessID=77",
    pid: 500,
    tid: 600,
  },
  {
    // Stop keeps the header's thread and process; no parents. 32-bit: name at HostOffset(44,7)=44
    what: "Thread Stop V3, 32-bit",
    group: THREAD,
    opcode: 2,
    version: 3,
    ptr: 4,
    name: "Windows Kernel/Thread/Stop",
    payload: p().u32(500).u32(601).u32(1).u32(2).u32(3).u32(4).u32(5).u32(6).u32(7).u32(0).u8(1).u8(2).u8(3).u8(4).utf16z("t").build(),
    text:
      "StackBase=0x00000001; StackLimit=0x00000002; UserStackBase=0x00000003; UserStackLimit=0x00000004; StartAddr=0x00000005; " +
      "Win32StartAddr=0x00000006; TebBase=0x00000007; SubProcessTag=0; BasePriority=1; PagePriority=2; IoPriority=3; ThreadFlags=4; " +
      "ThreadName=t; ParentThreadID=-1; ParentProcessID=-1",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  {
    // V2 ends at HostOffset(40,7): the V3 bytes and the name read as zero and ""
    what: "Thread DCStart V2, 64-bit",
    group: THREAD,
    opcode: 3,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/Thread/DCStart",
    payload: p()
      .u32(4)
      .u32(8)
      .u64(1)
      .u64(2)
      .u64(3)
      .u64(4)
      .u64(5)
      .u64(6)
      .u64(7)
      .u32(-1 >>> 0)
      .build(),
    text:
      "StackBase=0x00000001; StackLimit=0x00000002; UserStackBase=0x00000003; UserStackLimit=0x00000004; StartAddr=0x00000005; " +
      "Win32StartAddr=0x00000006; TebBase=0x00000007; SubProcessTag=-1; BasePriority=0; PagePriority=0; IoPriority=0; ThreadFlags=0; " +
      "ThreadName=; ParentThreadID=-1; ParentProcessID=-1",
    pid: 4,
    tid: 8,
  },
  {
    // V1: no fix-up, every field zero, no parents
    what: "Thread Start V1, 32-bit",
    group: THREAD,
    opcode: 1,
    version: 1,
    ptr: 4,
    name: "Windows Kernel/Thread/Start",
    payload: p().u32(700).u32(701).u32(0x1000).u32(0x2000).build(),
    text:
      "StackBase=0x00000000; StackLimit=0x00000000; UserStackBase=0x00000000; UserStackLimit=0x00000000; StartAddr=0x00000000; " +
      "Win32StartAddr=0x00000000; TebBase=0x00000000; SubProcessTag=0; BasePriority=0; PagePriority=0; IoPriority=0; ThreadFlags=0; " +
      "ThreadName=; ParentThreadID=-1; ParentProcessID=-1",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- ThreadSetNameTraceData (72)
  {
    what: "Thread SetName",
    group: THREAD,
    opcode: 72,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/Thread/SetName",
    payload: p().u32(500).u32(600).utf16z("renamed").build(),
    text: "ThreadName=renamed",
    pid: 500,
    tid: 600,
  },
];

describe("kernel FileIO and Thread payloads as TraceEvent prints them", () => {
  it("every template, version and pointer size; payloads cut short read zeros past their end", async () => {
    await expectKernelCases(CASES);
  });

  it("the perfview lines: TraceEvent's event names, PID and TID, and the payload", async () => {
    const { t } = await kernelCaseTrace(CASES);
    const lines = [...perfViewLines(t, { maxEventsPerName: 100 })].filter((l) => /^EVENT .*?Windows Kernel\/(FileIO|Thread)\//.test(l));
    // TraceLog keeps FileIO's name events and the thread rundown (DCStart / DCStop) to itself
    const shown = CASES.filter((c) => (c.group === FILEIO ? ![0, 32, 35, 36].includes(c.opcode) : c.opcode !== 3 && c.opcode !== 4));
    expect(lines).toHaveLength(shown.length);
    for (const [k, c] of shown.entries()) {
      expectEventLine(lines[k], c, /; (?=[A-Za-z0-9]+=)/);
    }
    t.dispose();
  });

  it("CSwitch: the new thread from a -1 header, both processes looked up by thread, the wait enums by name", async () => {
    // NewThreadID GetInt32At(0) via FixupData, OldThreadID 4, priorities 8/9, quanta 10/11, wait reason 12,
    // wait mode 13, state 14, ideal processor 15, NewThreadWaitTime 16. Thread 600 is process 500's (Start above).
    const start = CASES.find((c) => c.what === "Thread Start V3, 64-bit")!;
    const cs: Case = {
      what: "CSwitch",
      group: THREAD,
      opcode: 36,
      version: 2,
      ptr: 8,
      name: "Windows Kernel/Thread/CSwitch",
      payload: p().u32(600).u32(2000).u8(15).u8(8).u8(1).u8(2).u8(6).u8(1).u8(5).u8(3).u32(250).u32(0).build(),
      text: "",
      pid: 500,
      tid: 600,
      hpid: NONE,
      htid: NONE,
    };
    const { t, rowOf } = await kernelCaseTrace([start, cs]);
    const ctx = new PayloadContext(t, t.processes, "current");
    const row = rowOf(1);
    expect(t.names.ofRow(row.index)).toBe("Windows Kernel/Thread/CSwitch");
    expect(ctx.processThread(row)).toEqual({ pid: 500, tid: 600 });
    const pairs = payloadPairs(row, ctx);
    expect(pairs.map(([n]) => n)).toEqual([
      "OldThreadID",
      "OldProcessID",
      "OldProcessName",
      "NewThreadID",
      "NewProcessID",
      "NewProcessName",
      "ProcessorNumber",
      "NewThreadPriority",
      "OldThreadPriority",
      "NewThreadQuantum",
      "OldThreadQuantum",
      "OldThreadWaitReason",
      "OldThreadWaitMode",
      "OldThreadState",
      "OldThreadWaitIdealProcessor",
      "NewThreadWaitTime",
    ]);
    const v = Object.fromEntries(pairs);
    expect([v.OldThreadID, v.OldProcessID, v.NewThreadID, v.NewProcessID, v.ProcessorNumber]).toEqual(["2,000", "-1", "600", "500", "0"]);
    expect([v.NewThreadPriority, v.OldThreadPriority, v.NewThreadQuantum, v.OldThreadQuantum]).toEqual(["15", "8", "1", "2"]);
    expect([v.OldThreadWaitReason, v.OldThreadWaitMode, v.OldThreadState, v.OldThreadWaitIdealProcessor, v.NewThreadWaitTime]).toEqual([
      "UserRequest",
      "Swappable",
      "Wait",
      "3",
      "250",
    ]);
    // the new process's name is the event's PName
    expect(v.NewProcessName).toBe(t.processes.processName(500, row.timestamp));
    t.dispose();
  });
});

describe("kernel event names from TraceEvent's EnumerateTemplates", () => {
  it("Memory 13/14, VirtualMem, Dispatcher, the DiskIO driver opcodes and FileIO's map events", async () => {
    const named: [number, number, string][] = [
      [PAGEFAULT, 13, "Windows Kernel/Memory/GuardMemory"],
      [PAGEFAULT, 14, "Windows Kernel/Memory/HardMemory"],
      [PAGEFAULT, 98, "Windows Kernel/VirtualMem/Alloc"],
      [PAGEFAULT, 99, "Windows Kernel/VirtualMem/Free"],
      [THREAD, 50, "Windows Kernel/Dispatcher/ReadyThread"],
      [DISKIO, 37, "Windows Kernel/DiskIO/DriverCompletionRoutine"],
      [DISKIO, 52, "Windows Kernel/DiskIO/DriverCompleteRequest"],
      [DISKIO, 53, "Windows Kernel/DiskIO/DriverCompleteRequestReturn"],
      [FILEIO, 39, "Windows Kernel/FileIO/MapFileDCStart"],
    ];
    const cases = named.map(
      ([group, opcode, name]): Case => ({
        what: name,
        group,
        opcode,
        version: 2,
        ptr: 8,
        name,
        payload: p().u64(0).build(),
        text: "",
        pid: 0,
        tid: 0,
      }),
    );
    // TraceEvent has no DiskIO opcode 36: the OS's MOF name
    cases.push({
      what: "DiskIO 36",
      group: DISKIO,
      opcode: 36,
      version: 2,
      ptr: 8,
      name: "MSNT_SystemTrace/DiskIO/Opcode(36)",
      payload: p().u64(0).build(),
      text: "",
      pid: 0,
      tid: 0,
    });
    const { t, rowOf } = await kernelCaseTrace(cases);
    for (const [k, c] of cases.entries()) expect(t.names.ofRow(rowOf(k).index), c.what).toBe(c.name);
    t.dispose();
  });
});

// ------------------------------------------------------------------------------------------------------------
// Registry, PerfInfo (SysCall, ISR, DPC, DebuggerEnabled, Mark), Dispatcher ReadyThread and Image, worked out by
// hand from RegistryTraceData, SysCallEnter/ExitTraceData, ISRTraceData, DPCTraceData, EmptyTraceData,
// StringTraceData (ASCII), DispatcherReadyThreadTraceData and ImageLoadTraceData in KernelTraceEventParser.cs.

const REGISTRY = 0x09;
const PERFINFO = 0x0f;
const IMAGE = 0x14;
/** Raw timestamp of case k in kernelCaseTrace (EtlWriter's default anchor 1,000,000, 1,000 ticks = 1 ms apart). */
const T = (k: number) => 1_000_000n + 1000n * BigInt(k + 1);
const HKSW = 0xffffc0010000a000n;

const MORE: ((k: number) => Case)[] = [
  // thread 600 of process 500, for the ReadyThread lookups below
  () => CASES.find((c) => c.what === "Thread Start V3, 64-bit")!,
  // ---------------------------------------------------------------- RegistryTraceData (10-27)
  // V2: InitialTime 0, Status 8 and Index 12 (their getters return 0), KeyHandle 16, string HostOffset(20, 1)
  (k) => ({
    what: "Registry KCBCreate V2, 64-bit",
    group: REGISTRY,
    opcode: 22,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/Registry/KCBCreate",
    payload: p()
      .i64(T(k) - 1500n)
      .u32(0xc0000034)
      .u32(7)
      .u64(HKSW)
      .utf16z("\\REGISTRY\\MACHINE\\SOFTWARE")
      .build(),
    text: "Status=0; KeyHandle=0xffffc0010000a000; ElapsedTimeMSec=1.500; KeyName=\\REGISTRY\\MACHINE\\SOFTWARE; ValueName=; Index=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  // QueryValue: the string is the value name; the key name comes from the KCBCreate's handle
  (k) => ({
    what: "Registry QueryValue V2, 64-bit",
    group: REGISTRY,
    opcode: 16,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/Registry/QueryValue",
    payload: p()
      .i64(T(k) - 250n)
      .u32(0)
      .u32(0)
      .u64(HKSW)
      .utf16z("Version")
      .build(),
    text: "Status=0; KeyHandle=0xffffc0010000a000; ElapsedTimeMSec=0.250; KeyName=\\REGISTRY\\MACHINE\\SOFTWARE; ValueName=Version; Index=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  // 32-bit: string at HostOffset(20, 1) = 20; Open names its key (and adds it to the table)
  (k) => ({
    what: "Registry Open V2, 32-bit",
    group: REGISTRY,
    opcode: 11,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/Registry/Open",
    payload: p()
      .i64(T(k) - 3000n)
      .u32(0)
      .u32(0)
      .u32(0x8a000000)
      .utf16z("\\REGISTRY\\USER")
      .build(),
    text: "Status=0; KeyHandle=0x8a000000; ElapsedTimeMSec=3.000; KeyName=\\REGISTRY\\USER; ValueName=; Index=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  (k) => ({
    what: "Registry SetValue V2, 32-bit",
    group: REGISTRY,
    opcode: 14,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/Registry/SetValue",
    payload: p()
      .i64(T(k) - 1000n)
      .u32(0)
      .u32(0)
      .u32(0x8a000000)
      .utf16z("x")
      .build(),
    text: "Status=0; KeyHandle=0x8a000000; ElapsedTimeMSec=1.000; KeyName=\\REGISTRY\\USER; ValueName=x; Index=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  // V1: no start time (elapsed from QPC 0: the raw time, 1,005 ms here), no handle, no key name; value name at
  // HostOffset(20, 2) = 28 on 64-bit
  (k) => ({
    what: "Registry QueryValue V1, 64-bit",
    group: REGISTRY,
    opcode: 16,
    version: 1,
    ptr: 8,
    name: "Windows Kernel/Registry/QueryValue",
    payload: p().u64(1n).u64(2n).u64(3n).u32(4).utf16z("Val1").build(),
    text: `Status=0; KeyHandle=0x00000000; ElapsedTimeMSec=1,00${k + 1}.000; KeyName=; ValueName=Val1; Index=0`,
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  // cut inside the start time: it reads 0, the handle 0 (unnamed), no value name
  (k) => ({
    what: "Registry QueryValue V2 cut short",
    group: REGISTRY,
    opcode: 16,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/Registry/QueryValue",
    payload: p().u32(5).u16(1).build(),
    text: `Status=0; KeyHandle=0x00000000; ElapsedTimeMSec=1,00${k + 1}.000; KeyName=; ValueName=; Index=0`,
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  // ---------------------------------------------------------------- SysCallEnter / SysCallExit (51, 52)
  () => ({
    what: "SysClEnter, 64-bit",
    group: PERFINFO,
    opcode: 51,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/PerfInfo/SysClEnter",
    payload: p().u64(0xfffff80001234567n).build(),
    text: "SysCallAddress=0xfffff80001234567",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  () => ({
    what: "SysClEnter, 32-bit",
    group: PERFINFO,
    opcode: 51,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/PerfInfo/SysClEnter",
    payload: p().u32(0x80401234).build(),
    text: "SysCallAddress=0x80401234",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  () => ({
    what: "SysClExit",
    group: PERFINFO,
    opcode: 52,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/PerfInfo/SysClExit",
    payload: p().u32(0xc0000022).build(),
    text: "SysCallNtStatus=-1,073,741,790",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  // ---------------------------------------------------------------- ISRTraceData (50, 67)
  // InitialTime 0, Routine 8, ReturnValue HostOffset(12, 1), Vector HostOffset(13, 1), Message HostOffset(16, 1)
  // only when 24 <= HostOffset(20, 1), i.e. on 64-bit
  (k) => ({
    what: "ISR, 64-bit",
    group: PERFINFO,
    opcode: 50,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/PerfInfo/ISR",
    payload: p()
      .i64(T(k) - 250n)
      .u64(0xfffff80002000000n)
      .u8(1)
      .u8(0x31)
      .u16(0)
      .u32(5)
      .build(),
    text: "ElapsedTimeMSec=0.250; Routine=0xfffff80002000000; ReturnValue=1; Vector=49; Message=5; ProcessorNumber=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  (k) => ({
    what: "ISR 67, 32-bit",
    group: PERFINFO,
    opcode: 67,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/PerfInfo/ISR",
    payload: p()
      .i64(T(k) - 4000n)
      .u32(0x80500000)
      .u8(0)
      .u8(0xb0)
      .u16(0)
      .u32(9)
      .build(),
    text: "ElapsedTimeMSec=4.000; Routine=0x80500000; ReturnValue=0; Vector=176; Message=0; ProcessorNumber=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  (k) => ({
    what: "ISR cut short, 64-bit",
    group: PERFINFO,
    opcode: 50,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/PerfInfo/ISR",
    payload: p()
      .i64(T(k) - 250n)
      .u64(0xfffff80002000000n)
      .u8(3)
      .build(),
    text: "ElapsedTimeMSec=0.250; Routine=0xfffff80002000000; ReturnValue=3; Vector=0; Message=0; ProcessorNumber=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  // ---------------------------------------------------------------- DPCTraceData (66, 68, 69)
  (k) => ({
    what: "DPC, 64-bit",
    group: PERFINFO,
    opcode: 68,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/PerfInfo/DPC",
    payload: p()
      .i64(T(k) - 2000n)
      .u64(0xfffff80003000000n)
      .build(),
    text: "ElapsedTimeMSec=2.000; Routine=0xfffff80003000000; ProcessorNumber=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  (k) => ({
    what: "ThreadedDPC, 32-bit",
    group: PERFINFO,
    opcode: 66,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/PerfInfo/ThreadedDPC",
    payload: p()
      .i64(T(k) - 125n)
      .u32(0x80600000)
      .build(),
    text: "ElapsedTimeMSec=0.125; Routine=0x80600000; ProcessorNumber=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  (k) => ({
    what: "TimerDPC cut short",
    group: PERFINFO,
    opcode: 69,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/PerfInfo/TimerDPC",
    payload: p()
      .i64(T(k) - 500n)
      .build(),
    text: "ElapsedTimeMSec=0.500; Routine=0x00000000; ProcessorNumber=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  // ---------------------------------------------------------------- EmptyTraceData (58), StringTraceData ASCII (34)
  () => ({
    what: "DebuggerEnabled",
    group: PERFINFO,
    opcode: 58,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/PerfInfo/DebuggerEnabled",
    payload: p().u32(1).build(),
    text: "",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  () => ({
    what: "Mark",
    group: PERFINFO,
    opcode: 34,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/PerfInfo/Mark",
    payload: p().u8(0x68).u8(0x69).u8(0x21).u8(0).build(),
    text: "Value=hi!",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  // ---------------------------------------------------------------- DispatcherReadyThreadTraceData (Thread 50)
  // AwakenedThreadID 0, its process looked up, AdjustReason byte 4, AdjustIncrement byte 5, Flags byte 6; no fix-up
  () => ({
    what: "ReadyThread",
    group: THREAD,
    opcode: 50,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/Dispatcher/ReadyThread",
    payload: p().u32(600).u8(1).u8(2).u8(5).u8(0).build(),
    text: "AwakenedThreadID=600; AwakenedProcessID=500; AdjustReason=Unwait; AdjustIncrement=2; Flags=ReadiedFromDPC, ProcessSwappedOut",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
  // a -1 header process: the header thread's (600 -> 500); unknown awakened thread, unnamed reason, no flags
  () => ({
    what: "ReadyThread, header without process",
    group: THREAD,
    opcode: 50,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/Dispatcher/ReadyThread",
    payload: p().u32(12345).u8(7).u8(0).u8(0).u8(0).build(),
    text: "AwakenedThreadID=12,345; AwakenedProcessID=-1; AdjustReason=7; AdjustIncrement=0; Flags=0",
    pid: 500,
    tid: 600,
    hpid: NONE,
    htid: 600,
  }),
  () => ({
    what: "ReadyThread cut short",
    group: THREAD,
    opcode: 50,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/Dispatcher/ReadyThread",
    payload: p().u32(600).build(),
    text: "AwakenedThreadID=600; AwakenedProcessID=500; AdjustReason=None; AdjustIncrement=0; Flags=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  }),
];

describe("kernel Registry, PerfInfo and ReadyThread payloads as TraceEvent prints them", () => {
  it("every template, 32- and 64-bit, V1 and V2 registry layouts, payloads cut short", async () => {
    await expectKernelCases(MORE.map((f, k) => f(k)));
  });
});

describe("kernel Image events as ImageLoadTraceData prints them", () => {
  // ImageBase 0, ImageSize (int)GetAddressAt(HostOffset(4, 1)), ProcessID HostOffset(8, 2), V2+: ImageChecksum
  // HostOffset(12, 2), TimeDateStamp HostOffset(16, 2), DefaultBase HostOffset(24, 2), name HostOffset(44, 3);
  // V1: only the name, at HostOffset(12, 2); V0: no name. Unload / DCStart / DCStop: thread -1, the payload's
  // process from V1 on.
  const img = (what: string, opcode: number, version: number, ptr: 4 | 8, payload: Uint8Array, text: string, pid: number, tid: number): Case => ({
    what,
    group: IMAGE,
    opcode,
    version,
    ptr,
    name: `Windows Kernel/Image/${({ 2: "Unload", 3: "DCStart", 4: "DCStop", 10: "Load" } as Record<number, string>)[opcode]}`,
    payload,
    text,
    pid,
    tid,
  });
  const cases: Case[] = [
    img(
      "Unload V2, 64-bit",
      2,
      2,
      8,
      p()
        .u64(0x7ff600000000n)
        .u64(0x100005000n)
        .u32(1234)
        .u32(0x1234)
        .u32(0x5f000000)
        .u32(0)
        .u64(0x140000000n)
        .u64(0n)
        .u64(0n)
        .utf16z("\\Device\\X\\a.dll")
        .build(),
      "ImageBase=0x7ff600000000; ImageSize=20,480; ImageChecksum=4,660; TimeDateStamp=1,593,835,520; DefaultBase=0x140000000; FileName=\\Device\\X\\a.dll",
      1234,
      -1,
    ),
    img(
      "DCStart V1, 32-bit",
      3,
      1,
      4,
      p().u32(0x10000000).u32(0x3000).u32(4321).utf16z("\\Device\\Y\\b.dll").build(),
      "ImageBase=0x10000000; ImageSize=12,288; ImageChecksum=0; TimeDateStamp=0; DefaultBase=0x00000000; FileName=\\Device\\Y\\b.dll",
      4321,
      -1,
    ),
    img(
      "DCStop V0, 32-bit",
      4,
      0,
      4,
      p().u32(0x10000000).u32(0x3000).u32(4321).utf16z("\\Device\\Y\\b.dll").build(),
      "ImageBase=0x10000000; ImageSize=12,288; ImageChecksum=0; TimeDateStamp=0; DefaultBase=0x00000000; FileName=",
      HEADER_PID,
      -1,
    ),
    img(
      "Load V3, 32-bit",
      10,
      3,
      4,
      p().u32(0x20000000).u32(0x8000).u32(99).u32(-1).u32(0).u32(0).u32(0x20000000).u32(0).u32(0).u32(0).u32(0).utf16z("\\Device\\Z\\c.dll").build(),
      "ImageBase=0x20000000; ImageSize=32,768; ImageChecksum=-1; TimeDateStamp=0; DefaultBase=0x20000000; FileName=\\Device\\Z\\c.dll",
      HEADER_PID,
      HEADER_TID,
    ),
  ];
  it("version-dependent fields, both pointer sizes, the process fix-up", async () => {
    const { t, rowOf } = await kernelCaseTrace(cases);
    const ctx = new PayloadContext(t, t.processes, "current");
    const builds: string[] = [];
    for (const [k, c] of cases.entries()) {
      const row = rowOf(k);
      expect(t.names.ofRow(row.index), c.what).toBe(c.name);
      const pairs = payloadPairs(row, ctx);
      expect(
        pairs.map(([n]) => n),
        c.what,
      ).toEqual(["ImageBase", "ImageSize", "ImageChecksum", "TimeDateStamp", "DefaultBase", "BuildTime", "FileName"]);
      builds.push(pairs[5][1]);
      expect(
        pairs
          .filter(([n]) => n !== "BuildTime")
          .map(([n, v]) => `${n}=${v}`)
          .join("; "),
        c.what,
      ).toBe(c.text);
      expect(ctx.processThread(row), c.what).toEqual({ pid: c.pid, tid: c.tid });
    }
    // BuildTime is TimeDateStamp's date: V0/V1 (stamp 0) and V3 (stamp 0) agree, V2's differs
    expect(builds[1]).toBe(builds[2]);
    expect(builds[3]).toBe(builds[1]);
    expect(builds[0]).not.toBe(builds[1]);
    t.dispose();
  });
});

describe("kernel SystemConfig payloads as TraceEvent's SystemConfig*TraceData print them", () => {
  const SYSCONFIG = 0x0b;
  const sc = (what: string, opcode: number, version: number, payload: Uint8Array, text: string, pid = HEADER_PID): Case => ({
    what,
    group: SYSCONFIG,
    opcode,
    version,
    ptr: 8,
    name: `Windows Kernel/SystemConfig/${({ 13: "NIC", 15: "Services", 21: "IRQ", 22: "PnP" } as Record<number, string>)[opcode]}`,
    payload,
    text,
    pid,
    tid: HEADER_TID,
  });
  /** A fixed-size UTF-16 field of `chars` characters. */
  const fixed = (b: CaseBuilder, s: string, chars: number) => {
    b.utf16z(s);
    return b.zeros(2 * (chars - s.length - 1));
  };
  const cases: Case[] = [
    // NIC V2: PhysicalAddr Int64 at 0, PhysicalAddrLen at 8, Ipv4Index 12, Ipv6Index 16, three strings from 20
    sc(
      "NIC V2",
      13,
      2,
      p().u64(0x1234).u32(6).u32(3).u32(4).utf16z("eth").utf16z("10.0.0.1").utf16z("10.0.0.53").build(),
      "PhysicalAddrLen=6; PhysicalAddr=4,660; Ipv4Index=3; Ipv6Index=4; NICDescription=eth; IpAddresses=10.0.0.1; DnsServerAddresses=10.0.0.53",
    ),
    // NIC V1: NICDescription fixed 256 characters at 0, Ipv4Index at 512, PhysicalAddrLen at 516; PhysicalAddr and
    // Ipv6Index 0, the address strings ""
    sc(
      "NIC V1",
      13,
      1,
      fixed(p(), "old nic", 256).u32(7).u32(6).zeros(64).build(),
      "PhysicalAddrLen=6; PhysicalAddr=0; Ipv4Index=7; Ipv6Index=0; NICDescription=old nic; IpAddresses=; DnsServerAddresses=",
    ),
    // Services V2: ProcessID (FixupData: the event's process; an unknown process is named Process(N)) at 0, ServiceState 4, SubProcessTag 8, names from 12
    sc(
      "Services V2",
      15,
      2,
      p().u32(321).u32(4).u32(9).utf16z("Svc").utf16z("A Service").utf16z("svchost.exe").build(),
      "ServiceName=Svc; DisplayName=A Service; ProcessName=Process(321); ProcessID=321; ServiceState=4; SubProcessTag=9",
      321,
    ),
    // Services V1: ServiceName fixed 34 characters at 0, DisplayName fixed 256 at 68; no fix-up (the header's
    // process); ServiceState and SubProcessTag 0
    sc(
      "Services V1",
      15,
      1,
      fixed(fixed(p(), "OldSvc", 34), "Old Service", 256)
        .zeros(72)
        .u32(555)
        .build(),
      `ServiceName=OldSvc; DisplayName=Old Service; ProcessName=Process(${HEADER_PID}); ProcessID=${HEADER_PID}; ServiceState=0; SubProcessTag=0`,
    ),
    // IRQ V2: DeviceDescriptionLen at 12, DeviceDescription at 16
    sc("IRQ V2", 21, 2, p().u64(0xf).u32(5).u32(4).utf16z("PCI").build(), "IRQAffinity=15; IRQNum=5; DeviceDescriptionLen=4; DeviceDescription=PCI"),
    // IRQ V3: DeviceDescriptionLen at 16, DeviceDescription at 20
    sc("IRQ V3", 21, 3, p().u64(0xf).u32(5).u32(0).u32(4).utf16z("PCI").build(), "IRQAffinity=15; IRQNum=5; DeviceDescriptionLen=4; DeviceDescription=PCI"),
    // PnP V5: DeviceIDStart 32 (ClassGuid, the filter counts, DevStatus, DevProblem), five strings
    sc(
      "PnP V5",
      22,
      5,
      p().zeros(32).utf16z("ID").utf16z("Desc").utf16z("Friendly").utf16z("\\Device\\0001").utf16z("svc").build(),
      "DeviceID=ID; DeviceDescription=Desc; FriendlyName=Friendly; PdoName=\\Device\\0001; ServiceName=svc",
    ),
    // PnP V4: DeviceIDStart 24
    sc(
      "PnP V4",
      22,
      4,
      p().zeros(24).utf16z("ID").utf16z("Desc").utf16z("Friendly").utf16z("\\Device\\0001").utf16z("svc").build(),
      "DeviceID=ID; DeviceDescription=Desc; FriendlyName=Friendly; PdoName=\\Device\\0001; ServiceName=svc",
    ),
  ];
  it("version-dependent layouts of NIC, Services (and its process fix-up), IRQ and PnP", async () => {
    await expectKernelCases(cases);
  });
});

describe("KernelTraceControl ImageID events as SymbolTraceEventParser prints them", () => {
  const IMAGEID = "b3e675d7-2554-4f18-830b-2762732560de";
  const WINSAT = "ed54dff8-c409-4cf6-bf83-05e1e61a09c4";
  interface KtcCase {
    what: string;
    guid: string;
    opcode: number;
    ptr: 4 | 8;
    payload: Uint8Array;
    name: string;
    text: string;
  }
  const G = "0d0c0b0a-0f0e-1110-1213-141516171819";
  const guid = (b: CaseBuilder) => b.bytes(Uint8Array.from({ length: 16 }, (_, i) => 10 + i));
  const cases: KtcCase[] = [
    // ImageIDTraceData: ImageSize GetIntPtrAt(HostOffset(4, 1)), ProcessID printed as the literal 0,
    // TimeDateStamp HostOffset(12, 2), OriginalFileName HostOffset(16, 2)
    {
      what: "ImageID, 32-bit",
      guid: IMAGEID,
      opcode: 0,
      ptr: 4,
      name: "KernelTraceControl/ImageID",
      payload: p().u32(0x10000000).u32(0x5000).u32(1234).u32(0x5f000000).utf16z("a.dll").build(),
      text: "ImageBase=0x10000000; ImageSize=20,480; ProcessID=0; TimeDateStamp=1,593,835,520; BuildTime=20/07/04 04:05:20.000000; OriginalFileName=a.dll",
    },
    {
      what: "ImageID, 64-bit, ImageSize above 4 GB",
      guid: IMAGEID,
      opcode: 0,
      ptr: 8,
      name: "KernelTraceControl/ImageID",
      payload: p().u64(0x7ff600000000n).u64(0x100005000n).u32(1234).u32(0x5f000000).utf16z("b.dll").build(),
      text: "ImageBase=0x7ff600000000; ImageSize=4,294,987,776; ProcessID=0; TimeDateStamp=1,593,835,520; BuildTime=20/07/04 04:05:20.000000; OriginalFileName=b.dll",
    },
    // DbgIDRSDSTraceData: GuidSig HostOffset(8, 1), Age HostOffset(24, 1), PdbFileName UTF-8 at HostOffset(28, 1)
    {
      what: "DbgID_RSDS, 32-bit, UTF-8 name",
      guid: IMAGEID,
      opcode: 36,
      ptr: 4,
      name: "KernelTraceControl/ImageID/DbgID_RSDS",
      payload: guid(p().u32(0x10000000).u32(77)).u32(3).bytes(new TextEncoder().encode("c:\\sym\\é.pdb\0")).build(),
      text: `ImageBase=0x10000000; GuidSig=${G}; Age=3; PDBFileName=c:\\sym\\é.pdb`,
    },
    {
      what: "DbgID_ILRSDS, 64-bit",
      guid: IMAGEID,
      opcode: 37,
      ptr: 8,
      name: "KernelTraceControl/ImageID/DbgID_ILRSDS",
      payload: guid(p().u64(0x7ff600000000n).u32(77)).u32(1).ansiz("x.pdb").build(),
      text: `ImageBase=0x7ff600000000; GuidSig=${G}; Age=1; PDBFileName=x.pdb`,
    },
    // DbgPPDBTraceData: TimeDateStamp HostOffset(8, 1), MajorVersion byte HostOffset(12, 1), MinorVersion byte HostOffset(14, 1)
    {
      what: "DbgPPDB, 64-bit",
      guid: IMAGEID,
      opcode: 38,
      ptr: 8,
      name: "KernelTraceControl/ImageID/DbgPPDB",
      payload: p().u64(0x7ff600000000n).u32(77).u32(1000).u8(1).u8(9).u8(2).u8(9).build(),
      text: "ImageBase=0x7ff600000000; TimeDateStamp=1,000; MajorVersion=1; MinorVersion=2",
    },
    // DbgDetermTraceData: ImageBase only
    {
      what: "DbgDeterm, 32-bit",
      guid: IMAGEID,
      opcode: 40,
      ptr: 4,
      name: "KernelTraceControl/ImageID/DbgDeterm",
      payload: p().u32(0x10000000).u32(77).build(),
      text: "ImageBase=0x10000000",
    },
    // FileVersionTraceData: ImageSize 0, TimeDateStamp 4, ten strings from 8
    {
      what: "FileVersion",
      guid: IMAGEID,
      opcode: 64,
      ptr: 8,
      name: "KernelTraceControl/ImageID/FileVersion",
      payload: ["o.dll", "desc", "1.0", "1.0.0.0", "1033", "prod", "co", "1.0", "fid", "pid"].reduce((b, s) => b.utf16z(s), p().u32(4096).u32(0)).build(),
      text: "ImageSize=4,096; TimeDateStamp=0; BuildTime=70/01/01 00:00:00.000000; OrigFileName=o.dll; FileDescription=desc; FileVersion=1.0; BinFileVersion=1.0.0.0; VerLanguage=1033; ProductName=prod; CompanyName=co; ProductVersion=1.0; FileId=fid; ProgramId=pid",
    },
    // WinSatXmlTraceData: no payload names (the XML is in ToXml only)
    { what: "WinSat/WinSPR", guid: WINSAT, opcode: 33, ptr: 8, name: "KernelTraceControl/WinSat/WinSPR", payload: p().u32(0).u32(4).u32(0).build(), text: "" },
  ];
  it("field offsets by pointer size, the ProcessID of ImageID, UTF-8 PDB names, the events we had no layout for", async () => {
    const w = new EtlWriter({ perfFreq: 1_000_000n });
    const at = (k: number) => w.anchor + BigInt(1000 * (k + 1));
    cases.forEach((c, k) =>
      w.classic(0, {
        headerType: c.ptr === 4 ? 0x0a : 0x14,
        guid: c.guid,
        opcode: c.opcode,
        level: 0,
        version: 0,
        pid: 9,
        tid: 10,
        ts: at(k),
        payload: c.payload,
      }),
    );
    const t = await openTrace(w.finish());
    const stamps = [...t.events.timestamp];
    const ctx = new PayloadContext(t, t.processes, "current");
    for (const [k, c] of cases.entries()) {
      const row = t.events.row(stamps.findIndex((ts) => ts === at(k)));
      expect(row.pointerSize, c.what).toBe(c.ptr);
      expect(t.names.ofRow(row.index), c.what).toBe(c.name);
      expect(joinedPairs(payloadPairs(row, ctx)), c.what).toBe(c.text);
    }
    t.dispose();
  });
});
