// Classic kernel Memory (page faults, heap ranges, page access, memory counters), VirtualMem, ALPC, Object,
// SplitIo, Thread queue, DiskIO driver, PMC sample and StackWalk events printed as TraceEvent's
// KernelTraceEventParser prints them, on a synthetic trace: each template class, 32- and 64-bit where the
// layout depends on it, full payloads and one cut short per template. The expected text is worked out by hand
// from the getters' offsets in KernelTraceEventParser.cs (noted next to each case), not from our code.
// HostOffset(o, n) is o on 32-bit and o + 4n on 64-bit.

import { describe, expect, it } from "vitest";
import { HEADER_PID, HEADER_TID, expectEventLine, expectKernelCases, kernelCaseTrace, type KernelCase, p } from "./helpers/kernel-cases.js";
import { perfViewLines } from "../dist/bindings/perfview/index.js";

// kernel group bytes of the SYSTEM header's HookId
const DISKIO = 0x01;
const PAGEFAULT = 0x02;
const FILEIO = 0x04;
const THREAD = 0x05;
const PERFINFO = 0x0f;
const OBJECT = 0x11;
const STACKWALK = 0x18;
const ALPC = 0x1a;
const SPLITIO = 0x1b;
const NONE = 0xffffffff; // a header without process or thread (-1)

type Case = KernelCase;
const K = "Windows Kernel/";
/** A case with the header's process and thread unless given. */
const c = (what: string, group: number, opcode: number, ptr: 4 | 8, name: string, payload: Uint8Array, text: string, more: Partial<Case> = {}): Case => ({
  what,
  group,
  opcode,
  version: 2,
  ptr,
  name: K + name,
  payload,
  text,
  pid: HEADER_PID,
  tid: HEADER_TID,
  ...more,
});

const KEY = 0xfffffa8000001000n; // the file key the FileIO Name event names
const IMG = "\\Device\\HarddiskVolume2\\img.dll";
const OBJ8 = 0xffffc00012340000n; // objects named by the HandleDCEnd events
const OBJ4 = 0x8f001000;
const FILE_OBJ = "\\Device\\HarddiskVolume2\\log.txt";
const EVT_OBJ = "\\BaseNamedObjects\\Evt";
/** Raw time of `ms` relative milliseconds (EtlWriter's anchor is 1,000,000; 1,000 ticks a millisecond). */
const qpc = (ms: number) => 1_000_000n + BigInt(ms * 1000);

const CASES: Case[] = [
  // helpers: thread 600 of process 500 (for the thread -> process lookups) and the file key's name
  c(
    "Thread Start V2, 64-bit",
    THREAD,
    1,
    8,
    "Thread/Start",
    p().u32(500).u32(600).u64(1).u64(2).u64(3).u64(4).u64(5).u64(6).u64(7).u32(0).build(),
    "StackBase=0x00000001; StackLimit=0x00000002; UserStackBase=0x00000003; UserStackLimit=0x00000004; StartAddr=0x00000005; " +
      "Win32StartAddr=0x00000006; TebBase=0x00000007; SubProcessTag=0; BasePriority=0; PagePriority=0; IoPriority=0; ThreadFlags=0; " +
      "ThreadName=; ParentThreadID=88; ParentProcessID=77",
    { pid: 500, tid: 600 },
  ),
  c("FileIO Name", FILEIO, 0, 8, "FileIO/Name", p().u64(KEY).utf16z(IMG).build(), `FileKey=0xfffffa8000001000; FileName=${IMG}`),

  // ---------------------------------------------------------------- EnqueueTraceData (Thread 62)
  // Entry (Address)GetInt64At(0) on either pointer size; FixupData: a -1 header thread from GetInt32At(8), a -1
  // process looked up by thread
  c("Enqueue, 64-bit", THREAD, 62, 8, "Thread/Enqueue", p().u64(0xfffffa8000123450n).u32(600).build(), "Entry=0xfffffa8000123450"),
  c("Enqueue, 32-bit, header without thread", THREAD, 62, 4, "Thread/Enqueue", p().u64(0x82345678n).u32(600).build(), "Entry=0x82345678", {
    pid: 500,
    tid: 600,
    hpid: NONE,
    htid: NONE,
  }),
  c("Enqueue cut inside Entry", THREAD, 62, 8, "Thread/Enqueue", p().u32(0x1234).build(), "Entry=0x00000000"),
  // ---------------------------------------------------------------- DequeueTraceData (Thread 63)
  // Count GetInt32At(4), FirstEntry (Address)GetInt64At(8); a -1 header thread from GetInt32At(0)
  c(
    "Dequeue, 64-bit, header without thread",
    THREAD,
    63,
    8,
    "Thread/Dequeue",
    p().u32(600).u32(3).u64(0xfffffa8000abc000n).u64(0xfffffa8000abd000n).u64(0xfffffa8000abe000n).build(),
    "Count=3; FirstEntry=0xfffffa8000abc000",
    { pid: 500, tid: 600, hpid: NONE, htid: NONE },
  ),
  // the header's process stays; only the thread comes from the payload
  c(
    "Dequeue, 32-bit, header without thread only",
    THREAD,
    63,
    4,
    "Thread/Dequeue",
    p().u32(600).u32(NONE).u64(0x10n).build(),
    "Count=-1; FirstEntry=0x00000010",
    { pid: 1234, tid: 600, hpid: 1234, htid: NONE },
  ),
  c("Dequeue cut inside FirstEntry", THREAD, 63, 8, "Thread/Dequeue", p().u32(1).u32(2).u32(0xdead).build(), "Count=2; FirstEntry=0x00000000"),
  // ---------------------------------------------------------------- EmptyTraceData (Thread 37)
  c("CompCS", THREAD, 37, 8, "Thread/CompCS", p().u32(1).build(), ""),

  // ---------------------------------------------------------------- DriverMajorFunctionCallTraceData (DiskIO 34)
  // MajorFunction 0, MinorFunction 4, RoutineAddr 8, FileKey HostOffset(12,1), Irp HostOffset(16,2),
  // UniqMatchID HostOffset(20,3); no FileName in its payload names
  c(
    "DriverMajorFunctionCall, 64-bit",
    DISKIO,
    34,
    8,
    "DiskIO/DriverMajorFunctionCall",
    p().u32(3).u32(0).u64(0xfffff80012345678n).u64(0xffffe00000001000n).u64(0xffffe00000002000n).u32(70000).build(),
    "MajorFunction=3; MinorFunction=0; RoutineAddr=0xfffff80012345678; FileKey=0xffffe00000001000; Irp=0xffffe00000002000; UniqMatchID=70,000",
  ),
  c(
    "DriverMajorFunctionCall, 32-bit",
    DISKIO,
    34,
    4,
    "DiskIO/DriverMajorFunctionCall",
    p().u32(14).u32(1).u32(0x80123456).u32(0x85001000).u32(0x85002000).i32(-5).build(),
    "MajorFunction=14; MinorFunction=1; RoutineAddr=0x80123456; FileKey=0x85001000; Irp=0x85002000; UniqMatchID=-5",
  ),
  c(
    "DriverMajorFunctionCall cut after RoutineAddr",
    DISKIO,
    34,
    8,
    "DiskIO/DriverMajorFunctionCall",
    p().u32(3).u32(0).u64(0xfffff80012345678n).u64(0xffffe00000001000n).cut(16),
    "MajorFunction=3; MinorFunction=0; RoutineAddr=0xfffff80012345678; FileKey=0x00000000; Irp=0x00000000; UniqMatchID=0",
  ),
  // ---------------------------------------------------------------- DriverMajorFunctionReturnTraceData (35): Irp 0, UniqMatchID HostOffset(4,1)
  c(
    "DriverMajorFunctionReturn, 64-bit",
    DISKIO,
    35,
    8,
    "DiskIO/DriverMajorFunctionReturn",
    p().u64(0xffffe00000002000n).u32(70000).build(),
    "Irp=0xffffe00000002000; UniqMatchID=70,000",
  ),
  c(
    "DriverMajorFunctionReturn, 32-bit",
    DISKIO,
    35,
    4,
    "DiskIO/DriverMajorFunctionReturn",
    p().u32(0x85002000).u32(7).build(),
    "Irp=0x85002000; UniqMatchID=7",
  ),
  c(
    "DriverMajorFunctionReturn cut inside Irp",
    DISKIO,
    35,
    8,
    "DiskIO/DriverMajorFunctionReturn",
    p().u64(0xffffe00000002000n).cut(7),
    "Irp=0x00000000; UniqMatchID=0",
  ),
  // ---------------------------------------------------------------- DriverCompletionRoutineTraceData (37):
  // Routine 0, IrpPtr HostOffset(4,1), UniqMatchID HostOffset(8,2)
  c(
    "DriverCompletionRoutine, 64-bit",
    DISKIO,
    37,
    8,
    "DiskIO/DriverCompletionRoutine",
    p().u64(0xfffff80011110000n).u64(0xffffe00000002000n).u32(9).build(),
    "Routine=0xfffff80011110000; IrpPtr=0xffffe00000002000; UniqMatchID=9",
  ),
  c(
    "DriverCompletionRoutine, 32-bit",
    DISKIO,
    37,
    4,
    "DiskIO/DriverCompletionRoutine",
    p().u32(0x80111100).u32(0x85002000).u32(9).build(),
    "Routine=0x80111100; IrpPtr=0x85002000; UniqMatchID=9",
  ),
  c(
    "DriverCompletionRoutine cut inside IrpPtr",
    DISKIO,
    37,
    8,
    "DiskIO/DriverCompletionRoutine",
    p().u64(0xfffff80011110000n).u64(0xffffe00000002000n).u32(9).cut(12),
    "Routine=0xfffff80011110000; IrpPtr=0x00000000; UniqMatchID=0",
  ),
  // ---------------------------------------------------------------- DriverCompleteRequestTraceData (52):
  // RoutineAddr 0, Irp HostOffset(4,1), UniqMatchID HostOffset(8,2)
  c(
    "DriverCompleteRequest, 64-bit",
    DISKIO,
    52,
    8,
    "DiskIO/DriverCompleteRequest",
    p().u64(0xfffff80022220000n).u64(0xffffe00000003000n).u32(11).build(),
    "RoutineAddr=0xfffff80022220000; Irp=0xffffe00000003000; UniqMatchID=11",
  ),
  c(
    "DriverCompleteRequest, 32-bit",
    DISKIO,
    52,
    4,
    "DiskIO/DriverCompleteRequest",
    p().u32(0x80222200).u32(0x85003000).u32(11).build(),
    "RoutineAddr=0x80222200; Irp=0x85003000; UniqMatchID=11",
  ),
  c(
    "DriverCompleteRequest cut inside Irp",
    DISKIO,
    52,
    4,
    "DiskIO/DriverCompleteRequest",
    p().u32(0x80222200).u32(0x85003000).u32(11).cut(6),
    "RoutineAddr=0x80222200; Irp=0x00000000; UniqMatchID=0",
  ),
  // ---------------------------------------------------------------- DriverCompleteRequestReturnTraceData (53): Irp 0, UniqMatchID HostOffset(4,1)
  c(
    "DriverCompleteRequestReturn, 64-bit",
    DISKIO,
    53,
    8,
    "DiskIO/DriverCompleteRequestReturn",
    p().u64(0xffffe00000003000n).u32(12).build(),
    "Irp=0xffffe00000003000; UniqMatchID=12",
  ),
  c(
    "DriverCompleteRequestReturn, 32-bit",
    DISKIO,
    53,
    4,
    "DiskIO/DriverCompleteRequestReturn",
    p().u32(0x85003000).u32(12).build(),
    "Irp=0x85003000; UniqMatchID=12",
  ),
  c(
    "DriverCompleteRequestReturn cut inside UniqMatchID",
    DISKIO,
    53,
    4,
    "DiskIO/DriverCompleteRequestReturn",
    p().u32(0x85003000).u32(12).cut(5),
    "Irp=0x85003000; UniqMatchID=0",
  ),

  // ---------------------------------------------------------------- SplitIoInfoTraceData (SplitIo 32): ParentIrp 0, ChildIrp HostOffset(4,1)
  c(
    "VolMgr, 64-bit",
    SPLITIO,
    32,
    8,
    "SplitIo/VolMgr",
    p().u64(0xffffe00000002000n).u64(0xffffe00000004000n).build(),
    "ParentIrp=0xffffe00000002000; ChildIrp=0xffffe00000004000",
  ),
  c("VolMgr, 32-bit", SPLITIO, 32, 4, "SplitIo/VolMgr", p().u32(0x85002000).u32(0x85004000).build(), "ParentIrp=0x85002000; ChildIrp=0x85004000"),
  c(
    "VolMgr cut inside ChildIrp",
    SPLITIO,
    32,
    8,
    "SplitIo/VolMgr",
    p().u64(0xffffe00000002000n).u64(0xffffe00000004000n).cut(12),
    "ParentIrp=0xffffe00000002000; ChildIrp=0x00000000",
  ),

  // ---------------------------------------------------------------- MemoryPageFaultTraceData (Memory 10-15):
  // VirtualAddress 0, ProgramCounter HostOffset(4,1)
  c(
    "TransitionFault, 64-bit",
    PAGEFAULT,
    10,
    8,
    "Memory/TransitionFault",
    p().u64(0x7ff612340000n).u64(0x7ff6aa001234n).build(),
    "VirtualAddress=0x7ff612340000; ProgramCounter=0x7ff6aa001234",
  ),
  c(
    "DemandZeroFault, 32-bit",
    PAGEFAULT,
    11,
    4,
    "Memory/DemandZeroFault",
    p().u32(0x00a40000).u32(0x77001234).build(),
    "VirtualAddress=0x00a40000; ProgramCounter=0x77001234",
  ),
  c(
    "CopyOnWrite",
    PAGEFAULT,
    12,
    8,
    "Memory/CopyOnWrite",
    p().u64(0xc000n).u64(0xfffff8000000000cn).build(),
    "VirtualAddress=0x0000c000; ProgramCounter=0xfffff8000000000c",
  ),
  c(
    "GuardMemory",
    PAGEFAULT,
    13,
    8,
    "Memory/GuardMemory",
    p().u64(0xd000n).u64(0xfffff8000000000dn).build(),
    "VirtualAddress=0x0000d000; ProgramCounter=0xfffff8000000000d",
  ),
  c(
    "HardMemory",
    PAGEFAULT,
    14,
    8,
    "Memory/HardMemory",
    p().u64(0xe000n).u64(0xfffff8000000000en).build(),
    "VirtualAddress=0x0000e000; ProgramCounter=0xfffff8000000000e",
  ),
  c(
    "AccessViolation",
    PAGEFAULT,
    15,
    8,
    "Memory/AccessViolation",
    p().u64(0xf000n).u64(0xfffff8000000000fn).build(),
    "VirtualAddress=0x0000f000; ProgramCounter=0xfffff8000000000f",
  ),
  c(
    "AccessViolation cut inside ProgramCounter",
    PAGEFAULT,
    15,
    4,
    "Memory/AccessViolation",
    p().u32(0x10).u32(0x20).cut(6),
    "VirtualAddress=0x00000010; ProgramCounter=0x00000000",
  ),
  // ---------------------------------------------------------------- MemoryHeapRangeRundownTraceData (100)
  // HeapHandle 0, HeapRangeFlags HostOffset(4,1), the event's process HostOffset(8,1) (FixupData), HRRangeCount
  // HostOffset(12,1) printed as HeapRangeRangeCount
  c(
    "HeapRangeRundown, 64-bit",
    PAGEFAULT,
    100,
    8,
    "Memory/HeapRangeRundown",
    p().u64(0x1f0000n).u32(1).u32(4242).u32(3).build(),
    "HeapHandle=0x001f0000; HeapRangeFlags=1; HeapRangeRangeCount=3",
    { pid: 4242 },
  ),
  c(
    "HeapRangeRundown, 32-bit",
    PAGEFAULT,
    100,
    4,
    "Memory/HeapRangeRundown",
    p().u32(0x350000).u32(0).u32(4343).u32(1).build(),
    "HeapHandle=0x00350000; HeapRangeFlags=0; HeapRangeRangeCount=1",
    { pid: 4343 },
  ),
  c(
    "HeapRangeRundown cut inside HeapRangeFlags",
    PAGEFAULT,
    100,
    8,
    "Memory/HeapRangeRundown",
    p().u64(0x1f0000n).u32(1).u32(4242).cut(10),
    "HeapHandle=0x001f0000; HeapRangeFlags=0; HeapRangeRangeCount=0",
    { pid: 0 },
  ),
  // ---------------------------------------------------------------- MemoryHeapRangeCreateTraceData (101):
  // HeapHandle 0, FirstRangeSize (Address) HostOffset(4,1), HeapRangeCreateFlags HostOffset(8,2)
  c(
    "HeapRangeCreate, 64-bit",
    PAGEFAULT,
    101,
    8,
    "Memory/HeapRangeCreate",
    p().u64(0x1f0000n).u64(0x10000n).u32(2).build(),
    "HeapHandle=0x001f0000; FirstRangeSize=0x00010000; HeapRangeCreateFlags=2",
  ),
  c(
    "HeapRangeCreate, 32-bit",
    PAGEFAULT,
    101,
    4,
    "Memory/HeapRangeCreate",
    p().u32(0x350000).u32(0x4000).u32(0).build(),
    "HeapHandle=0x00350000; FirstRangeSize=0x00004000; HeapRangeCreateFlags=0",
  ),
  c(
    "HeapRangeCreate cut inside the flags",
    PAGEFAULT,
    101,
    8,
    "Memory/HeapRangeCreate",
    p().u64(0x1f0000n).u64(0x10000n).u32(2).cut(18),
    "HeapHandle=0x001f0000; FirstRangeSize=0x00010000; HeapRangeCreateFlags=0",
  ),
  // ---------------------------------------------------------------- MemoryHeapRangeTraceData (102, 103):
  // HeapHandle 0, HeapRangeAddress HostOffset(4,1), HeapRangeSize HostOffset(8,2)
  c(
    "HeapRangeReserve, 64-bit",
    PAGEFAULT,
    102,
    8,
    "Memory/HeapRangeReserve",
    p().u64(0x1f0000n).u64(0x1f10000n).u64(0x20000n).build(),
    "HeapHandle=0x001f0000; HeapRangeAddress=0x01f10000; HeapRangeSize=0x00020000",
  ),
  c(
    "HeapRangeRelease, 32-bit",
    PAGEFAULT,
    103,
    4,
    "Memory/HeapRangeRelease",
    p().u32(0x350000).u32(0x360000).u32(0x1000).build(),
    "HeapHandle=0x00350000; HeapRangeAddress=0x00360000; HeapRangeSize=0x00001000",
  ),
  c(
    "HeapRangeRelease cut inside HeapRangeSize",
    PAGEFAULT,
    103,
    8,
    "Memory/HeapRangeRelease",
    p().u64(0x1f0000n).u64(0x1f10000n).u64(0x20000n).cut(20),
    "HeapHandle=0x001f0000; HeapRangeAddress=0x01f10000; HeapRangeSize=0x00000000",
  ),
  // ---------------------------------------------------------------- MemoryHeapRangeDestroyTraceData (104): HeapHandle 0
  c("HeapRangeDestroy, 64-bit", PAGEFAULT, 104, 8, "Memory/HeapRangeDestroy", p().u64(0x1f0000n).build(), "HeapHandle=0x001f0000"),
  c("HeapRangeDestroy cut", PAGEFAULT, 104, 4, "Memory/HeapRangeDestroy", p().u16(0x35).build(), "HeapHandle=0x00000000"),
  // ---------------------------------------------------------------- MemoryImageLoadBackedTraceData (105)
  // FileKey 0, DeviceChar HostOffset(4,1), FileChar Int16 HostOffset(8,1), LoadFlags Int16 HostOffset(10,1), the key's name
  c(
    "ImageLoadBacked, 64-bit",
    PAGEFAULT,
    105,
    8,
    "Memory/ImageLoadBacked",
    p().u64(KEY).u32(0x20).u16(0x8002).u16(5).build(),
    `FileKey=0xfffffa8000001000; DeviceChar=32; FileChar=-32,766; LoadFlags=5; FileName=${IMG}`,
  ),
  c(
    "ImageLoadBacked, 32-bit, unnamed key",
    PAGEFAULT,
    105,
    4,
    "Memory/ImageLoadBacked",
    p().u32(0x81230000).u32(0x100).u16(0x22).u16(1).build(),
    "FileKey=0x81230000; DeviceChar=256; FileChar=34; LoadFlags=1; FileName=",
  ),
  c(
    "ImageLoadBacked cut inside FileChar",
    PAGEFAULT,
    105,
    8,
    "Memory/ImageLoadBacked",
    p().u64(KEY).u32(7).u16(3).u16(4).cut(13),
    `FileKey=0xfffffa8000001000; DeviceChar=7; FileChar=0; LoadFlags=0; FileName=${IMG}`,
  ),
  // ---------------------------------------------------------------- MemoryPageAccessTraceData (35, 117, 118, 130)
  // byte 0: PageKind (low 4 bits), PageList (bits 4-6); PageFrameIndex GetAddressAt(8). File (1) and MetaFile (8)
  // pages: FileKey at HostOffset(12,1) & ~3, VirtualAddress HostOffset(16,2); others: VirtualAddress
  // HostOffset(12,1) & ~3, FileKey 0. FileName by FileKey
  c(
    "PageAccess, 64-bit, private page",
    PAGEFAULT,
    118,
    8,
    "Memory/PageAccess",
    p().u8(0x60).zeros(7).u64(0x12345n).u64(0x7ff612340003n).u64(0xdeadn).build(),
    "PageKind=ProcessPrivate; PageList=Active; PageFrameIndex=0x00012345; VirtualAddress=0x7ff612340000; FileName=",
  ),
  c(
    "PageAccess 130, 64-bit, file page",
    PAGEFAULT,
    130,
    8,
    "Memory/PageAccess",
    p()
      .u8(0x21)
      .zeros(7)
      .u64(0xabcn)
      .u64(KEY | 3n)
      .u64(0x7ff612345000n)
      .build(),
    `PageKind=File; PageList=Standby; PageFrameIndex=0x00000abc; VirtualAddress=0x7ff612345000; FileName=${IMG}`,
  ),
  c(
    "InMemory, 32-bit, metafile page",
    PAGEFAULT,
    35,
    4,
    "Memory/InMemory",
    p().u8(0x38).zeros(7).u32(0x777).u32(0x81230003).u32(0xc0001000).build(),
    "PageKind=MetaFile; PageList=Modified; PageFrameIndex=0x00000777; VirtualAddress=0xc0001000; FileName=",
  ),
  // kind 14 has no name; bit 7 is not part of the list
  c(
    "InMemoryActive, 64-bit, unnamed kind",
    PAGEFAULT,
    117,
    8,
    "Memory/InMemoryActive",
    p().u8(0xfe).zeros(7).u64(1n).u64(0x1007n).u64(0n).build(),
    "PageKind=14; PageList=Transition; PageFrameIndex=0x00000001; VirtualAddress=0x00001004; FileName=",
  ),
  c(
    "PageAccess cut inside PageFrameIndex",
    PAGEFAULT,
    118,
    8,
    "Memory/PageAccess",
    p().u8(0x11).zeros(7).u64(0x555n).cut(12),
    "PageKind=File; PageList=Free; PageFrameIndex=0x00000000; VirtualAddress=0x00000000; FileName=",
  ),
  // ---------------------------------------------------------------- MemorySystemMemInfoTraceData (112): FreePages (long)GetAddressAt(0)
  c("SystemMemInfo, 64-bit", PAGEFAULT, 112, 8, "Memory/SystemMemInfo", p().u64(0x123456n).zeros(16).build(), "FreePages=1,193,046"),
  c("SystemMemInfo, 32-bit: the address is unsigned", PAGEFAULT, 112, 4, "Memory/SystemMemInfo", p().u32(0x80000000).build(), "FreePages=2,147,483,648"),
  c("SystemMemInfo cut", PAGEFAULT, 112, 8, "Memory/SystemMemInfo", p().u32(5).build(), "FreePages=0"),
  // ---------------------------------------------------------------- MemoryProcessMemInfoTraceData (125)
  // Count 0; the first process at 4: ProcessID 4, WorkingSetPageCount GetAddressAt(8), CommitPageCount
  // HostOffset(12,1), VirtualSizeInPages HostOffset(16,2), PrivateWorkingSetPageCount HostOffset(20,3); V2+:
  // StoreSizePageCount HostOffset(24,4), StoredPageCount HostOffset(28,5), CommitDebtInPages HostOffset(32,6),
  // SharedCommitInPages HostOffset(36,7)
  c(
    "ProcessMemInfo V2, 64-bit",
    PAGEFAULT,
    125,
    8,
    "Memory/ProcessMemInfo",
    p().u32(2).u32(500).u64(100).u64(200).u64(300).u64(400).u64(5).u64(6).u64(7).u64(8).u32(600).zeros(64).build(),
    "Count=2; ProcessID=500; WorkingSetPageCount=100; CommitPageCount=200; VirtualSizeInPages=300; PrivateWorkingSetPageCount=400; " +
      "StoreSizePageCount=5; StoredPageCount=6; CommitDebtInPages=7; SharedCommitInPages=8",
  ),
  c(
    "ProcessMemInfo V2, 32-bit",
    PAGEFAULT,
    125,
    4,
    "Memory/ProcessMemInfo",
    p().u32(1).u32(8).u32(11).u32(12).u32(13).u32(14).u32(15).u32(16).u32(17).u32(18).build(),
    "Count=1; ProcessID=8; WorkingSetPageCount=11; CommitPageCount=12; VirtualSizeInPages=13; PrivateWorkingSetPageCount=14; " +
      "StoreSizePageCount=15; StoredPageCount=16; CommitDebtInPages=17; SharedCommitInPages=18",
  ),
  // V1: the last four read 0 although the bytes are there; 32-bit counts are unsigned
  c(
    "ProcessMemInfo V1, 32-bit",
    PAGEFAULT,
    125,
    4,
    "Memory/ProcessMemInfo",
    p().u32(1).u32(4).u32(1000).u32(2000).u32(0x80000000).u32(4000).u32(99).u32(98).u32(97).u32(96).build(),
    "Count=1; ProcessID=4; WorkingSetPageCount=1,000; CommitPageCount=2,000; VirtualSizeInPages=2,147,483,648; PrivateWorkingSetPageCount=4,000; " +
      "StoreSizePageCount=0; StoredPageCount=0; CommitDebtInPages=0; SharedCommitInPages=0",
    { version: 1 },
  ),
  c(
    "ProcessMemInfo V2 cut after VirtualSizeInPages",
    PAGEFAULT,
    125,
    8,
    "Memory/ProcessMemInfo",
    p().u32(2).u32(500).u64(100).u64(200).u64(300).u64(400).cut(32),
    "Count=2; ProcessID=500; WorkingSetPageCount=100; CommitPageCount=200; VirtualSizeInPages=300; PrivateWorkingSetPageCount=0; " +
      "StoreSizePageCount=0; StoredPageCount=0; CommitDebtInPages=0; SharedCommitInPages=0",
  ),
  // ---------------------------------------------------------------- VirtualAllocTraceData (VirtualMem 98, 99)
  // BaseAddr 0, Length (long)GetAddressAt(HostOffset(4,1)), the event's process HostOffset(8,2) (FixupData),
  // Flags HostOffset(12,2) (MEM_* flags, no zero member), LengthHex "0x" + Length.ToString("x"), EndAddr "0x" +
  // (Length + BaseAddr).ToString("x") (unpadded, ulong arithmetic)
  c(
    "Alloc, 64-bit",
    PAGEFAULT,
    98,
    8,
    "VirtualMem/Alloc",
    p().u64(0x1c2a0000000n).u64(0x11000n).u32(500).u32(0x3000).build(),
    "BaseAddr=0x1c2a0000000; Length=69,632; Flags=MEM_COMMIT, MEM_RESERVE; LengthHex=0x11000; EndAddr=0x1c2a0011000",
    { pid: 500 },
  ),
  c(
    "Free, 32-bit",
    PAGEFAULT,
    99,
    4,
    "VirtualMem/Free",
    p().u32(0x00a40000).u32(0x1000).u32(4141).u32(0x8000).build(),
    "BaseAddr=0x00a40000; Length=4,096; Flags=MEM_RELEASE; LengthHex=0x1000; EndAddr=0xa41000",
    { pid: 4141 },
  ),
  // a negative Length prints 16 hex digits and wraps the end address; a flag bit without a name prints the number
  c(
    "Free, 64-bit, negative length, unnamed flag bit",
    PAGEFAULT,
    99,
    8,
    "VirtualMem/Free",
    p().u64(0x20000n).u64(0xffffffffffff0000n).u32(4242).u32(0x4001).build(),
    "BaseAddr=0x00020000; Length=-65,536; Flags=16385; LengthHex=0xffffffffffff0000; EndAddr=0x10000",
    { pid: 4242 },
  ),
  c(
    "Alloc cut inside Length",
    PAGEFAULT,
    98,
    8,
    "VirtualMem/Alloc",
    p().u64(0x30000n).u64(0x1000n).cut(12),
    "BaseAddr=0x00030000; Length=0; Flags=0; LengthHex=0x0; EndAddr=0x30000",
    { pid: 0 },
  ),

  // ---------------------------------------------------------------- PMCCounterProfTraceData (PerfInfo 47)
  // InstructionPointer 0, ThreadID (the event's; FixupData: a -1 header thread from HostOffset(4,1), a -1 process
  // looked up by thread), ProcessorNumber, ProfileSource Int16 HostOffset(8,1)
  c(
    "PMCSample, 64-bit, header without thread",
    PERFINFO,
    47,
    8,
    "PerfInfo/PMCSample",
    p().u64(0xfffff80001000000n).u32(600).u16(0xffff).u16(0).build(),
    "InstructionPointer=0xfffff80001000000; ThreadID=600; ProcessorNumber=0; ProfileSource=-1",
    { pid: 500, tid: 600, hpid: NONE, htid: NONE },
  ),
  c(
    "PMCSample, 32-bit",
    PERFINFO,
    47,
    4,
    "PerfInfo/PMCSample",
    p().u32(0x77001234).u32(600).u16(3).u16(0).build(),
    "InstructionPointer=0x77001234; ThreadID=88; ProcessorNumber=0; ProfileSource=3",
  ),
  c(
    "PMCSample cut inside ProfileSource",
    PERFINFO,
    47,
    8,
    "PerfInfo/PMCSample",
    p().u64(0x1234n).u32(600).u16(2).cut(13),
    "InstructionPointer=0x00001234; ThreadID=88; ProcessorNumber=0; ProfileSource=0",
  ),

  // ---------------------------------------------------------------- ALPC (33-37)
  // MessageID / Status GetInt32At(0); WaitForNewMessage: IsServerPort GetInt32At(0), PortName UTF-8 at 4
  c("SendMessage", ALPC, 33, 8, "ALPC/SendMessage", p().u32(0x1234).build(), "MessageID=4,660"),
  c("ReceiveMessage, 32-bit", ALPC, 34, 4, "ALPC/ReceiveMessage", p().i32(-1).build(), "MessageID=-1"),
  c("WaitForReply", ALPC, 35, 8, "ALPC/WaitForReply", p().u32(77).build(), "MessageID=77"),
  c(
    "WaitForNewMessage",
    ALPC,
    36,
    8,
    "ALPC/WaitForNewMessage",
    p().u32(1).bytes(new TextEncoder().encode("\\RPC Control\\lrpc-é\0")).build(),
    "IsServerPort=1; PortName=\\RPC Control\\lrpc-é",
  ),
  c("WaitForNewMessage cut inside IsServerPort", ALPC, 36, 8, "ALPC/WaitForNewMessage", p().u16(1).build(), "IsServerPort=0; PortName="),
  c("Unwait", ALPC, 37, 8, "ALPC/Unwait", p().u32(0xc0000001).build(), "Status=-1,073,741,823"),
  c("Unwait, empty", ALPC, 37, 8, "ALPC/Unwait", new Uint8Array(0), "Status=0"),

  // ---------------------------------------------------------------- ObjectTypeNameTraceData (Object 37): ObjectType Int16 0, name at 4
  c("TypeDCEnd, 64-bit", OBJECT, 37, 8, "Object/TypeDCEnd", p().u16(37).u16(0).utf16z("File").build(), "ObjectType=37; ObjectTypeName=File"),
  c(
    "TypeDCEnd, 32-bit, negative type",
    OBJECT,
    37,
    4,
    "Object/TypeDCEnd",
    p().u16(0xfff0).u16(0).utf16z("Weird").build(),
    "ObjectType=-16; ObjectTypeName=Weird",
  ),
  c("TypeDCEnd cut inside the reserved word", OBJECT, 37, 8, "Object/TypeDCEnd", p().u8(5).u8(1).u8(0x41).build(), "ObjectType=261; ObjectTypeName="),
  // ---------------------------------------------------------------- ObjectNameTraceData (Object 39)
  // Object 0, Handle HostOffset(8,1), ObjectType Int16 HostOffset(12,1), ObjectName HostOffset(14,1). FixupData
  // takes the process from HostOffset(8,2): on 64-bit bytes 16-19, the type (37) and the name's first "\"
  // (0x005c0025); on 32-bit offset 8, the handle
  c(
    "HandleDCEnd, 64-bit",
    OBJECT,
    39,
    8,
    "Object/HandleDCEnd",
    p().u64(OBJ8).u32(500).u32(0x1a4).u16(37).utf16z(FILE_OBJ).build(),
    `Object=0xffffc00012340000; Handle=420; ObjectType=37; ObjectName=${FILE_OBJ}`,
    { pid: 0x005c0025 },
  ),
  c(
    "HandleDCEnd, 32-bit",
    OBJECT,
    39,
    4,
    "Object/HandleDCEnd",
    p().u32(OBJ4).u32(4141).u32(0x44).u16(0xfff0).utf16z(EVT_OBJ).build(),
    `Object=0x8f001000; Handle=68; ObjectType=-16; ObjectName=${EVT_OBJ}`,
    { pid: 0x44 },
  ),
  c(
    "HandleDCEnd cut inside Handle",
    OBJECT,
    39,
    8,
    "Object/HandleDCEnd",
    p().u64(0xffffc0000000dea0n).u32(500).u32(0x1a4).cut(14),
    "Object=0xffffc0000000dea0; Handle=0; ObjectType=0; ObjectName=",
    { pid: 0 },
  ),
  // ---------------------------------------------------------------- ObjectHandleTraceData (Object 32, 33)
  // Object 0, Handle HostOffset(4,1), ObjectType Int16 HostOffset(8,1), ObjectName by object, ObjectTypeName by
  // type (from the HandleDCEnd and TypeDCEnd events); no fix-up
  c(
    "CreateHandle, 64-bit",
    OBJECT,
    32,
    8,
    "Object/CreateHandle",
    p().u64(OBJ8).u32(0x1a4).u16(37).u16(0).build(),
    `Object=0xffffc00012340000; Handle=420; ObjectType=37; ObjectName=${FILE_OBJ}; ObjectTypeName=File`,
  ),
  c(
    "CloseHandle, 32-bit",
    OBJECT,
    33,
    4,
    "Object/CloseHandle",
    p().u32(OBJ4).u32(0x44).u16(0xfff0).u16(0).build(),
    `Object=0x8f001000; Handle=68; ObjectType=-16; ObjectName=${EVT_OBJ}; ObjectTypeName=Weird`,
  ),
  c(
    "CloseHandle, unknown object and type",
    OBJECT,
    33,
    8,
    "Object/CloseHandle",
    p().u64(0x123n).u32(8).u16(99).u16(0).build(),
    "Object=0x00000123; Handle=8; ObjectType=99; ObjectName=; ObjectTypeName=",
  ),
  c(
    "CreateHandle cut inside Handle",
    OBJECT,
    32,
    4,
    "Object/CreateHandle",
    p().u32(OBJ4).u32(0x44).cut(6),
    `Object=0x8f001000; Handle=0; ObjectType=0; ObjectName=${EVT_OBJ}; ObjectTypeName=`,
  ),
  // ---------------------------------------------------------------- ObjectDuplicateHandleTraceData (Object 34)
  // Object 0, SourceHandle HostOffset(4,1), TargetHandle HostOffset(8,1), TargetProcessID HostOffset(12,1),
  // ObjectType Int16 HostOffset(16,1), SourceProcessID HostOffset(18,1); printed SourceProcessID before TargetProcessID
  c(
    "DuplicateHandle, 64-bit",
    OBJECT,
    34,
    8,
    "Object/DuplicateHandle",
    p().u64(OBJ8).u32(0x1a4).u32(0x2b8).u32(900).u16(37).u32(500).build(),
    `Object=0xffffc00012340000; SourceHandle=420; TargetHandle=696; SourceProcessID=500; TargetProcessID=900; ObjectType=37; ObjectName=${FILE_OBJ}; ObjectTypeName=File`,
  ),
  c(
    "DuplicateHandle, 32-bit",
    OBJECT,
    34,
    4,
    "Object/DuplicateHandle",
    p().u32(OBJ4).u32(4).u32(8).u32(4141).u16(0xfff0).u32(500).build(),
    `Object=0x8f001000; SourceHandle=4; TargetHandle=8; SourceProcessID=500; TargetProcessID=4,141; ObjectType=-16; ObjectName=${EVT_OBJ}; ObjectTypeName=Weird`,
  ),
  c(
    "DuplicateHandle cut inside ObjectType",
    OBJECT,
    34,
    8,
    "Object/DuplicateHandle",
    p().u64(OBJ8).u32(0x1a4).u32(0x2b8).u32(900).u16(37).u32(500).cut(21),
    `Object=0xffffc00012340000; SourceHandle=420; TargetHandle=696; SourceProcessID=0; TargetProcessID=900; ObjectType=0; ObjectName=${FILE_OBJ}; ObjectTypeName=`,
  ),

  // ---------------------------------------------------------------- StackWalkStackTraceData (StackWalk 32)
  // EventTimeStampQPC 0 (as relative msec), FrameCount (length - 16) / PointerSize, IP0-IP3 GetAddressAt(16 + i *
  // PointerSize) or the int 0 past FrameCount. FixupData: a -1 header thread from 12, a -1 process from 8
  c(
    "Stack, 64-bit, header without thread",
    STACKWALK,
    32,
    8,
    "StackWalk/Stack",
    p().i64(qpc(2.5)).u32(500).u32(600).u64(0xfffff80001000010n).u64(0x7ff6aa001234n).u64(0x7ff6aa005678n).build(),
    "EventTimeStampRelativeMSec=2.500; FrameCount=3; IP0=0xfffff80001000010; IP1=0x7ff6aa001234; IP2=0x7ff6aa005678; IP3=0",
    { pid: 500, tid: 600, hpid: NONE, htid: NONE },
  ),
  c(
    "Stack, 32-bit",
    STACKWALK,
    32,
    4,
    "StackWalk/Stack",
    p().i64(qpc(1)).u32(500).u32(600).u32(0x77000010).u32(0x77000020).u32(0x77000030).u32(0x77000040).u32(0x77000050).build(),
    "EventTimeStampRelativeMSec=1.000; FrameCount=5; IP0=0x77000010; IP1=0x77000020; IP2=0x77000030; IP3=0x77000040",
  ),
  // 4 bytes after the header: (20 - 16) / 8 = 0 frames
  c(
    "Stack, 64-bit, no whole frame",
    STACKWALK,
    32,
    8,
    "StackWalk/Stack",
    p().i64(qpc(0.5)).u32(1).u32(2).u32(0xabc).build(),
    "EventTimeStampRelativeMSec=0.500; FrameCount=0; IP0=0; IP1=0; IP2=0; IP3=0",
  ),
  // QPC 0 is before the session start: QPCTimeToRelMSec clamps it to 0; (6 - 16) / 8 = -1
  c(
    "Stack cut inside the time",
    STACKWALK,
    32,
    8,
    "StackWalk/Stack",
    p().u32(0x1234).u16(1).build(),
    "EventTimeStampRelativeMSec=0.000; FrameCount=-1; IP0=0; IP1=0; IP2=0; IP3=0",
  ),
  // ---------------------------------------------------------------- StackWalkRefTraceData (37, 38): time 0, StackKey GetIntPtrAt(16); fix-up as Stack's
  c(
    "StackKeyKernel, 64-bit, header without thread",
    STACKWALK,
    37,
    8,
    "StackWalk/StackKeyKernel",
    p().i64(qpc(3)).u32(500).u32(600).u64(0xfffff80000001230n).build(),
    "EventTimeStampRelativeMSec=3.000; StackKey=0xfffff80000001230",
    { pid: 500, tid: 600, hpid: NONE, htid: NONE },
  ),
  c(
    "StackKeyUser, 32-bit",
    STACKWALK,
    38,
    4,
    "StackWalk/StackKeyUser",
    p().i64(qpc(0.25)).u32(1).u32(2).u32(0x1234).build(),
    "EventTimeStampRelativeMSec=0.250; StackKey=0x00001234",
  ),
  c(
    "StackKeyUser cut inside StackKey",
    STACKWALK,
    38,
    8,
    "StackWalk/StackKeyUser",
    p().i64(qpc(4)).u32(1).u32(2).u32(0x1234).cut(20),
    "EventTimeStampRelativeMSec=4.000; StackKey=0x00000000",
  ),
  // ---------------------------------------------------------------- StackWalkDefTraceData (35, 36)
  // StackKey GetIntPtrAt(0), FrameCount length / PointerSize - 1, IP0-IP3 GetAddressAt((i + 1) * PointerSize); no fix-up
  c(
    "KeyRundown, 64-bit",
    STACKWALK,
    36,
    8,
    "StackWalk/KeyRundown",
    p().u64(0xffffc00000001230n).u64(0xfffff80001000010n).u64(0x7ff6aa001234n).build(),
    "StackKey=0xffffc00000001230; FrameCount=2; IP0=0xfffff80001000010; IP1=0x7ff6aa001234; IP2=0; IP3=0",
  ),
  c(
    "KeyDelete, 32-bit",
    STACKWALK,
    35,
    4,
    "StackWalk/KeyDelete",
    p().u32(0x1230).u32(0x77000010).u32(0x77000020).u32(0x77000030).u32(0x77000040).u32(0x77000050).u32(0x77000060).build(),
    "StackKey=0x00001230; FrameCount=6; IP0=0x77000010; IP1=0x77000020; IP2=0x77000030; IP3=0x77000040",
  ),
  c(
    "KeyDelete cut inside StackKey",
    STACKWALK,
    35,
    8,
    "StackWalk/KeyDelete",
    p().u32(0x1230).build(),
    "StackKey=0x00000000; FrameCount=-1; IP0=0; IP1=0; IP2=0; IP3=0",
  ),
];

/** Memory opcodes TraceEvent reads as EmptyTraceData, with their names. */
const MEMORY_EMPTY: [number, string][] = [
  [73, "PFMappedSectionCreate"],
  [76, "SessionDCStop"],
  [79, "PFMappedSectionDelete"],
  [115, "InMemoryStoreFault"],
  [119, "PageRelease"],
  [120, "RangeAccess"],
  [121, "RangeRelease"],
  [122, "Combine"],
  [123, "KernelMemUsage"],
  [124, "MMStats"],
  [126, "MemInfoSessionWS"],
  [127, "VirtualRotate"],
  [128, "VirtualAllocDCStart"],
  [129, "VirtualAllocDCStop"],
  [131, "RemoveFromWS"],
  [132, "WSSharableRundown"],
  [133, "InMemoryActiveRundown"],
];

describe("kernel Memory, VirtualMem, ALPC, Object, SplitIo, Thread queue, DiskIO driver, PMC and StackWalk payloads", () => {
  it("every template, 32- and 64-bit, payloads cut short read zeros past their end; TraceEvent's PID and TID", async () => {
    await expectKernelCases(CASES);
  });

  it("Memory's EmptyTraceData events print no fields", async () => {
    await expectKernelCases(MEMORY_EMPTY.map(([opcode, name]) => c(name, PAGEFAULT, opcode, 8, `Memory/${name}`, p().u64(0x1234n).u32(5).build(), "")));
  });

  it("the perfview lines (TraceLog keeps StackWalk and FileIO Name to itself)", async () => {
    const shown = CASES.filter((k) => k.group !== STACKWALK && k.group !== FILEIO);
    const names = new Set(shown.map((k) => k.name));
    const { t } = await kernelCaseTrace(CASES);
    const lines = [...perfViewLines(t, { maxEventsPerName: 100 })].filter((l) => {
      const m = /^EVENT [\d,.]+: (.+?) PID=/.exec(l);
      return m !== null && names.has(m[1]);
    });
    expect(lines).toHaveLength(shown.length);
    for (const [k, kc] of shown.entries()) {
      if (kc.text === "") expect(lines[k], kc.what).toMatch(new RegExp(`^EVENT [\\d,.]+: ${kc.name} .*; DataLen=${kc.payload.length}; $`));
      else expectEventLine(lines[k], kc);
    }
    expect(lines.some((l) => l.includes("StackWalk/"))).toBe(false);
    t.dispose();
  });
});
