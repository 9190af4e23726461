// The rest of KernelTraceEventParser's classic kernel templates, as TraceEvent prints them: Memory (page
// faults, heap ranges, page access, memory counters) and VirtualMem, ALPC, Object, SplitIo, the Thread queue
// events, the DiskIO driver events, PMC samples and StackWalk. Offsets are those of TraceEvent's getters
// (HostOffset(o, n): o plus n pointers' growth on 64-bit); a field cut short reads as 0.

import type { EventRow } from "../tables/event-table.js";
import type { EnumDef } from "./traceevent-overlay.js";
import { addr, enumText, int, long, nFixed } from "./dotnet-format.js";
import { utf16z } from "../tables/payload-strings.js";
import { hostOffset, i16, i32, i64, readPtr, u64 } from "./payload-bytes.js";

/** A template's fields as TraceEvent prints them: (name, text) in order. */
export type Pairs = [string, string][];

/** What these templates ask of the names the kernel parser keeps (traceevent-kernel.ts KernelState). */
export interface KernelState {
  fileName(key: bigint, time: bigint, object?: bigint): string;
  objectTypeName(type: number): string;
}

const en = (e: EnumDef, v: number) => enumText(v, e.members, e.flags);

/** Reads at one event's payload: `p` a pointer, `h` TraceEvent's HostOffset. */
function at(row: EventRow) {
  const b = row.payload;
  const ptr = row.pointerSize;
  return { b, ptr, p: (o: number) => readPtr(b, o, ptr), h: (o: number, n: number) => hostOffset(o, n, ptr) };
}

/** A NUL-terminated UTF-8 string (GetUTF8StringAt). */
function utf8z(b: Uint8Array, o: number): string {
  let end = o;
  while (end < b.length && b[end] !== 0) end++;
  return o < end ? new TextDecoder().decode(b.subarray(o, end)) : "";
}

/** Thread Enqueue (62) and Dequeue (63): their entries are 8 bytes on either pointer size. */
export function threadQueuePairs(row: EventRow): Pairs {
  const b = row.payload;
  if (row.opcode === 62) return [["Entry", addr(u64(b, 0))]];
  return [
    ["Count", int(i32(b, 4))],
    ["FirstEntry", addr(u64(b, 8))],
  ];
}

/** DiskIO's Driver* templates (34, 35, 37, 52, 53); DriverMajorFunctionCall prints no FileName. */
export function diskDriverPairs(row: EventRow): Pairs | null {
  const { b, p, h } = at(row);
  switch (row.opcode) {
    case 34:
      return [
        ["MajorFunction", int(i32(b, 0))],
        ["MinorFunction", int(i32(b, 4))],
        ["RoutineAddr", addr(p(8))],
        ["FileKey", addr(p(h(12, 1)))],
        ["Irp", addr(p(h(16, 2)))],
        ["UniqMatchID", int(i32(b, h(20, 3)))],
      ];
    case 35:
    case 53:
      return [
        ["Irp", addr(p(0))],
        ["UniqMatchID", int(i32(b, h(4, 1)))],
      ];
    case 37:
      return [
        ["Routine", addr(p(0))],
        ["IrpPtr", addr(p(h(4, 1)))],
        ["UniqMatchID", int(i32(b, h(8, 2)))],
      ];
    case 52:
      return [
        ["RoutineAddr", addr(p(0))],
        ["Irp", addr(p(h(4, 1)))],
        ["UniqMatchID", int(i32(b, h(8, 2)))],
      ];
  }
  return null;
}

/** SplitIo VolMgr (32): SplitIoInfoTraceData. */
export function splitIoPairs(row: EventRow): Pairs | null {
  if (row.opcode !== 32) return null;
  const { p, h } = at(row);
  return [
    ["ParentIrp", addr(p(0))],
    ["ChildIrp", addr(p(h(4, 1)))],
  ];
}

/** ALPC SendMessage, ReceiveMessage, WaitForReply (33-35), WaitForNewMessage (36), Unwait (37). */
export function alpcPairs(row: EventRow): Pairs | null {
  const b = row.payload;
  switch (row.opcode) {
    case 33:
    case 34:
    case 35:
      return [["MessageID", int(i32(b, 0))]];
    case 36:
      return [
        ["IsServerPort", int(i32(b, 0))],
        ["PortName", utf8z(b, 4)],
      ];
    case 37:
      return [["Status", int(i32(b, 0))]];
  }
  return null;
}

/**
 * Object CreateHandle / CloseHandle (32, 33), DuplicateHandle (34), TypeDCEnd (37), HandleDCEnd (39). Object
 * and type names come from the HandleDCEnd and TypeDCEnd events (KernelState's prepass).
 */
export function objectPairs(row: EventRow, state: KernelState): Pairs | null {
  const { b, p, h } = at(row);
  switch (row.opcode) {
    case 32:
    case 33: {
      const obj = p(0);
      const type = i16(b, h(8, 1));
      return [
        ["Object", addr(obj)],
        ["Handle", int(i32(b, h(4, 1)))],
        ["ObjectType", int(type)],
        ["ObjectName", state.fileName(obj, row.timestamp)],
        ["ObjectTypeName", state.objectTypeName(type)],
      ];
    }
    case 34: {
      // ObjectType at HostOffset(16, 1), then SourceProcessID at HostOffset(18, 1) (unaligned)
      const obj = p(0);
      const type = i16(b, h(16, 1));
      return [
        ["Object", addr(obj)],
        ["SourceHandle", int(i32(b, h(4, 1)))],
        ["TargetHandle", int(i32(b, h(8, 1)))],
        ["SourceProcessID", int(i32(b, h(18, 1)))],
        ["TargetProcessID", int(i32(b, h(12, 1)))],
        ["ObjectType", int(type)],
        ["ObjectName", state.fileName(obj, row.timestamp)],
        ["ObjectTypeName", state.objectTypeName(type)],
      ];
    }
    case 37:
      return [
        ["ObjectType", int(i16(b, 0))],
        ["ObjectTypeName", utf16z(b, 4)[0]],
      ];
    case 39:
      return [
        ["Object", addr(p(0))],
        ["Handle", int(i32(b, h(8, 1)))],
        ["ObjectType", int(i16(b, h(12, 1)))],
        ["ObjectName", utf16z(b, h(14, 1))[0]],
      ];
  }
  return null;
}

/** PerfInfo PMCSample (47): `tid` is the event's thread after TraceEvent's fix-up. */
export function pmcSamplePairs(row: EventRow, tid: number): Pairs {
  const { b, p, h } = at(row);
  return [
    ["InstructionPointer", addr(p(0))],
    ["ThreadID", int(tid)],
    ["ProcessorNumber", int(row.processor)],
    ["ProfileSource", int(i16(b, h(8, 1)))],
  ];
}

/** GetIntPtrAt as an Address: a 32-bit value is signed, so it widens sign-extended. */
function intPtrAddress(b: Uint8Array, o: number, ptr: number): bigint {
  return ptr === 8 ? u64(b, o) : BigInt.asUintN(64, BigInt(i32(b, o)));
}

/**
 * StackWalk Stack (32), KeyDelete / KeyRundown (35, 36), StackKeyKernel / StackKeyUser (37, 38). FrameCount
 * comes from the payload length (C# integer division); IP0-IP3 past it print the literal 0.
 */
export function stackWalkPairs(row: EventRow): Pairs | null {
  const { b, ptr, p } = at(row);
  const eventTime = (): [string, string] => ["EventTimeStampRelativeMSec", nFixed(row.table.clock.relativeMSec(i64(b, 0)), 3)];
  const frames = (count: number, first: number): Pairs => [0, 1, 2, 3].map((k) => [`IP${k}`, k < count ? addr(p(first + k * ptr)) : "0"]);
  switch (row.opcode) {
    case 32: {
      const count = Math.trunc((b.length - 16) / ptr);
      return [eventTime(), ["FrameCount", int(count)], ...frames(count, 16)];
    }
    case 35:
    case 36: {
      const count = Math.trunc(b.length / ptr) - 1;
      return [["StackKey", addr(intPtrAddress(b, 0, ptr))], ["FrameCount", int(count)], ...frames(count, ptr)];
    }
    case 37:
    case 38:
      return [eventTime(), ["StackKey", addr(intPtrAddress(b, 16, ptr))]];
  }
  return null;
}

const PAGE_KIND: EnumDef = {
  name: "PageKind",
  flags: false,
  members: [
    "ProcessPrivate",
    "File",
    "PageFileMapped",
    "PageTable",
    "PagedPool",
    "NonPagedPool",
    "SystemPTE",
    "SessionPrivate",
    "MetaFile",
    "AwePage",
    "DriverLockPage",
    "KernelStack",
    "WSMetaData",
    "LargePage",
  ].map((n, i) => [i, n] as [number, string]),
};
const PAGE_LIST: EnumDef = {
  name: "PageList",
  flags: false,
  members: ["Zero", "Free", "Standby", "Modified", "ModifiedNoWrite", "Bad", "Active", "Transition"].map((n, i) => [i, n] as [number, string]),
};
const VIRTUAL_ALLOC_FLAGS: EnumDef = {
  name: "VirtualAllocFlags",
  flags: true,
  members: [
    [0x1000, "MEM_COMMIT"],
    [0x2000, "MEM_RESERVE"],
    [0x4000, "MEM_DECOMMIT"],
    [0x8000, "MEM_RELEASE"],
  ],
};
/** Memory opcodes TraceEvent reads as EmptyTraceData (no payload fields). */
const MEMORY_EMPTY = new Set([73, 76, 79, 115, 119, 120, 121, 122, 123, 124, 126, 127, 128, 129, 131, 132, 133]);

/** The Memory (PageFault group) templates other than HardFault, and VirtualMem Alloc / Free (98, 99). */
export function memoryPairs(row: EventRow, state: KernelState): Pairs | null {
  const { b, p, h } = at(row);
  const op = row.opcode;
  if (op >= 10 && op <= 15)
    return [
      ["VirtualAddress", addr(p(0))],
      ["ProgramCounter", addr(p(h(4, 1)))],
    ];
  if (MEMORY_EMPTY.has(op)) return [];
  switch (op) {
    case 98:
    case 99: {
      // Length is the pointer read as a long; LengthHex and EndAddr are "0x" and unpadded hex
      const base = p(0);
      const length = BigInt.asIntN(64, p(h(4, 1)));
      const hex = (v: bigint) => "0x" + BigInt.asUintN(64, v).toString(16);
      return [
        ["BaseAddr", addr(base)],
        ["Length", long(length)],
        ["Flags", en(VIRTUAL_ALLOC_FLAGS, i32(b, h(12, 2)))],
        ["LengthHex", hex(length)],
        ["EndAddr", hex(base + BigInt.asUintN(64, length))],
      ];
    }
    case 100:
      // the process (HostOffset(8, 1)) is the event's; HRRangeCount prints as HeapRangeRangeCount
      return [
        ["HeapHandle", addr(p(0))],
        ["HeapRangeFlags", int(i32(b, h(4, 1)))],
        ["HeapRangeRangeCount", int(i32(b, h(12, 1)))],
      ];
    case 101:
      return [
        ["HeapHandle", addr(p(0))],
        ["FirstRangeSize", addr(p(h(4, 1)))],
        ["HeapRangeCreateFlags", int(i32(b, h(8, 2)))],
      ];
    case 102:
    case 103:
      return [
        ["HeapHandle", addr(p(0))],
        ["HeapRangeAddress", addr(p(h(4, 1)))],
        ["HeapRangeSize", addr(p(h(8, 2)))],
      ];
    case 104:
      return [["HeapHandle", addr(p(0))]];
    case 105: {
      const key = p(0);
      return [
        ["FileKey", addr(key)],
        ["DeviceChar", int(i32(b, h(4, 1)))],
        ["FileChar", int(i16(b, h(8, 1)))],
        ["LoadFlags", int(i16(b, h(10, 1)))],
        ["FileName", state.fileName(key, row.timestamp)],
      ];
    }
    case 35:
    case 117:
    case 118:
    case 130: {
      // File and MetaFile pages: the file key (low 2 bits cleared) at HostOffset(12, 1), the address at
      // HostOffset(16, 2); other pages: the address (low 2 bits cleared) at HostOffset(12, 1), no file key
      const kind = (b[0] ?? 0) & 0xf;
      const file = kind === 1 || kind === 8;
      const word = p(h(12, 1)) & ~3n;
      const key = file ? word : 0n;
      return [
        ["PageKind", en(PAGE_KIND, kind)],
        ["PageList", en(PAGE_LIST, ((b[0] ?? 0) >> 4) & 7)],
        ["PageFrameIndex", addr(p(8))],
        ["VirtualAddress", addr(file ? p(h(16, 2)) : word)],
        ["FileName", state.fileName(key, row.timestamp)],
      ];
    }
    case 112:
      return [["FreePages", long(p(0))]];
    case 125:
      return processMemInfoPairs(row);
  }
  return null;
}

/**
 * MemoryProcessMemInfoTraceData (Memory ProcessMemInfo 125, and Microsoft-Windows-Kernel-Memory event 2): Count,
 * then the first process's values (MemoryProcessMemInfoValues at offset 4); the last four from version 2 only.
 */
function processMemInfoPairs(row: EventRow): Pairs {
  const { b, p, h } = at(row);
  const v2 = row.version >= 2;
  const count = (o: number, n: number) => long(BigInt.asIntN(64, p(h(o, n))));
  const later = (o: number, n: number) => (v2 ? count(o, n) : "0");
  return [
    ["Count", int(i32(b, 0))],
    ["ProcessID", int(i32(b, 4))],
    ["WorkingSetPageCount", count(8, 0)],
    ["CommitPageCount", count(12, 1)],
    ["VirtualSizeInPages", count(16, 2)],
    ["PrivateWorkingSetPageCount", count(20, 3)],
    ["StoreSizePageCount", later(24, 4)],
    ["StoredPageCount", later(28, 5)],
    ["CommitDebtInPages", later(32, 6)],
    ["SharedCommitInPages", later(36, 7)],
  ];
}

/**
 * The Microsoft-Windows-Kernel-Memory events KernelTraceEventParser has templates for (by event id, any
 * version): 1 MemInfoTraceData ("MemoryMemInfo": PriorityLevels a byte at 0, then five pointer-sized counts read
 * as long from the unaligned offset 1: (long)GetAddressAt(HostOffset(1 + 4k, k))), 2 MemoryProcessMemInfoTraceData
 * ("MemoryProcessMemInfo"). The process and thread are the header's (no fix-up); null for other events.
 */
export function kernelMemoryPairs(row: EventRow): Pairs | null {
  if (row.eventId === 2) return processMemInfoPairs(row);
  if (row.eventId !== 1) return null;
  const { b, p, h } = at(row);
  const count = (k: number) => long(BigInt.asIntN(64, p(h(1 + 4 * k, k))));
  return [
    ["PriorityLevels", String(b[0] ?? 0)],
    ["ZeroPageCount", count(0)],
    ["FreePageCount", count(1)],
    ["ModifiedPageCount", count(2)],
    ["ModifiedNoWritePageCount", count(3)],
    ["BadPageCount", count(4)],
  ];
}
