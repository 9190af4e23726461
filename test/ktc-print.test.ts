// KernelTraceControl (merge) events as TraceEvent prints them, the cases test/kernel-print.test.ts does not
// have: SymbolTraceEventParser's templates (ImageID Info, DbgID_RSDS, DbgID_ILRSDS, DbgPPDB, DbgDeterm,
// FileVersion, None; WinSat WinSPR / Metrics / SystemConfig; MetaData EventInfo / EventMapInfo) in the other
// pointer size and cut short, and KernelTraceEventParser's SysConfig templates (BuildInfo, SystemPaths,
// UnknownVolume, VolumeMapping), full and cut short. Then the Microsoft-Windows-Kernel-Memory events
// KernelTraceEventParser has classes for (MemInfoTraceData, MemoryProcessMemInfoTraceData). The expected text
// is worked out by hand from the getters' offsets (noted beside each case); a field that does not wholly fit
// reads 0, a string cut short keeps what is there.

import { describe, expect, it } from "vitest";
import { EtlWriter } from "../dist/bindings/generator/etl-writer.js";
import { openTrace } from "../dist/bindings/index.js";
import { PayloadContext, payloadPairs } from "../dist/bindings/perfview/index.js";
import { joinedPairs, p, type CaseBuilder } from "./helpers/kernel-cases.js";

const IMAGEID = "b3e675d7-2554-4f18-830b-2762732560de";
const WINSAT = "ed54dff8-c409-4cf6-bf83-05e1e61a09c4";
const METADATA = "bbccf6c1-6cd1-48c4-80ff-839482e37671";
const SYSCONFIG = "9b79ee91-b5fd-41c0-a243-4248e266e9d0";
const KERNEL_MEMORY = "d1d93ef7-e1f2-4f45-9943-03d245fe6c00";

interface Case {
  what: string;
  /** A classic record of a KernelTraceControl GUID (opcode), or an EVENT_HEADER record of Kernel-Memory (id). */
  guid: string;
  opcode?: number;
  id?: number;
  version?: number;
  ptr: 4 | 8;
  payload: Uint8Array;
  name: string;
  text: string;
}

/** Writes the cases one millisecond apart and checks each one's name, payload text and (the header's) process and thread. */
async function expectCases(cases: Case[]): Promise<void> {
  const w = new EtlWriter({ perfFreq: 1_000_000n });
  const at = (k: number) => w.anchor + BigInt(1000 * (k + 1));
  cases.forEach((c, k) => {
    if (c.id === undefined) {
      w.classic(0, {
        headerType: c.ptr === 4 ? 0x0a : 0x14,
        guid: c.guid,
        opcode: c.opcode!,
        level: 0,
        version: c.version ?? 0,
        pid: 9,
        tid: 10,
        ts: at(k),
        payload: c.payload,
      });
    } else {
      w.event(0, {
        headerType: c.ptr === 4 ? 0x12 : 0x13,
        provider: c.guid,
        id: c.id,
        version: c.version ?? 0,
        level: 4,
        opcode: 0,
        task: c.id,
        keywords: 0x40n,
        pid: 9,
        tid: 10,
        ts: at(k),
        payload: c.payload,
      });
    }
  });
  const t = await openTrace(w.finish());
  const stamps = [...t.events.timestamp];
  const ctx = new PayloadContext(t, t.processes, "current");
  for (const [k, c] of cases.entries()) {
    const row = t.events.row(stamps.findIndex((ts) => ts === at(k)));
    expect(row.pointerSize, c.what).toBe(c.ptr);
    expect(row.payloadLength, c.what).toBe(c.payload.length);
    expect(t.names.ofRow(row.index), c.what).toBe(c.name);
    expect(joinedPairs(payloadPairs(row, ctx)), c.what).toBe(c.text);
    expect(ctx.processThread(row), c.what).toEqual({ pid: 9, tid: 10 });
  }
  t.dispose();
}

const G = "0d0c0b0a-0f0e-1110-1213-141516171819";
const ZERO_GUID = "00000000-0000-0000-0000-000000000000";
const guid = (b: CaseBuilder) => b.bytes(Uint8Array.from({ length: 16 }, (_, i) => 10 + i));
const EPOCH_1970 = "70/01/01 00:00:00.000000"; // BuildTime of TimeDateStamp 0
const utf8z = (s: string) => new TextEncoder().encode(s + "\0");

describe("SymbolTraceEventParser's templates: the other pointer size, cut short, the events without fields", () => {
  it("ImageID Info (ImageIDTraceData)", async () => {
    await expectCases([
      // ImageSize GetIntPtrAt(HostOffset(4, 1)): on 32-bit a signed int; ProcessID the literal 0
      {
        what: "ImageID, 32-bit, ImageSize with the top bit set",
        guid: IMAGEID,
        opcode: 0,
        ptr: 4,
        name: "KernelTraceControl/ImageID",
        payload: p().u32(0x10000000).u32(0x80000000).u32(1234).u32(0).utf16z("big.dll").build(),
        text: `ImageBase=0x10000000; ImageSize=-2,147,483,648; ProcessID=0; TimeDateStamp=0; BuildTime=${EPOCH_1970}; OriginalFileName=big.dll`,
      },
      // 64-bit, cut inside TimeDateStamp (HostOffset(12, 2) = 20): it and the name (HostOffset(16, 2) = 24) are absent
      {
        what: "ImageID, 64-bit, cut inside TimeDateStamp",
        guid: IMAGEID,
        opcode: 0,
        ptr: 8,
        name: "KernelTraceControl/ImageID",
        payload: p().u64(0x7ff600000000n).u64(0x5000).u32(1234).u32(0x5f000000).utf16z("b.dll").cut(22),
        text: `ImageBase=0x7ff600000000; ImageSize=20,480; ProcessID=0; TimeDateStamp=0; BuildTime=${EPOCH_1970}; OriginalFileName=`,
      },
      // 32-bit, cut inside ImageSize (4)
      {
        what: "ImageID, 32-bit, cut inside ImageSize",
        guid: IMAGEID,
        opcode: 0,
        ptr: 4,
        name: "KernelTraceControl/ImageID",
        payload: p().u32(0x10000000).u32(0x5000).cut(6),
        text: `ImageBase=0x10000000; ImageSize=0; ProcessID=0; TimeDateStamp=0; BuildTime=${EPOCH_1970}; OriginalFileName=`,
      },
    ]);
  });

  it("DbgID_RSDS and DbgID_ILRSDS (GuidSig HostOffset(8, 1), Age HostOffset(24, 1), UTF-8 PdbFileName HostOffset(28, 1))", async () => {
    await expectCases([
      {
        what: "DbgID_RSDS, 64-bit",
        guid: IMAGEID,
        opcode: 36,
        ptr: 8,
        name: "KernelTraceControl/ImageID/DbgID_RSDS",
        payload: guid(p().u64(0x7ff600000000n).u32(77)).u32(5).bytes(utf8z("c:\\sym\\a.pdb")).build(),
        text: `ImageBase=0x7ff600000000; GuidSig=${G}; Age=5; PDBFileName=c:\\sym\\a.pdb`,
      },
      // cut inside GuidSig (12..28 on 64-bit): the GUID reads as zero, Age (28) and the name are absent
      {
        what: "DbgID_RSDS, 64-bit, cut inside GuidSig",
        guid: IMAGEID,
        opcode: 36,
        ptr: 8,
        name: "KernelTraceControl/ImageID/DbgID_RSDS",
        payload: guid(p().u64(0x7ff600000000n).u32(77)).u32(5).bytes(utf8z("a.pdb")).cut(20),
        text: `ImageBase=0x7ff600000000; GuidSig=${ZERO_GUID}; Age=0; PDBFileName=`,
      },
      {
        what: "DbgID_ILRSDS, 32-bit",
        guid: IMAGEID,
        opcode: 37,
        ptr: 4,
        name: "KernelTraceControl/ImageID/DbgID_ILRSDS",
        payload: guid(p().u32(0x10000000).u32(77)).u32(2).bytes(utf8z("il.pdb")).build(),
        text: `ImageBase=0x10000000; GuidSig=${G}; Age=2; PDBFileName=il.pdb`,
      },
      // cut inside Age (24..28 on 32-bit)
      {
        what: "DbgID_ILRSDS, 32-bit, cut inside Age",
        guid: IMAGEID,
        opcode: 37,
        ptr: 4,
        name: "KernelTraceControl/ImageID/DbgID_ILRSDS",
        payload: guid(p().u32(0x10000000).u32(77)).u32(2).bytes(utf8z("il.pdb")).cut(26),
        text: `ImageBase=0x10000000; GuidSig=${G}; Age=0; PDBFileName=`,
      },
    ]);
  });

  it("DbgPPDB (TimeDateStamp HostOffset(8, 1), MajorVersion byte HostOffset(12, 1), MinorVersion byte HostOffset(14, 1)) and DbgDeterm", async () => {
    await expectCases([
      {
        what: "DbgPPDB, 32-bit",
        guid: IMAGEID,
        opcode: 38,
        ptr: 4,
        name: "KernelTraceControl/ImageID/DbgPPDB",
        payload: p().u32(0x10000000).u32(77).u32(0x5f000000).u8(1).u8(9).u8(200).u8(9).build(),
        text: "ImageBase=0x10000000; TimeDateStamp=1,593,835,520; MajorVersion=1; MinorVersion=200",
      },
      // cut before MinorVersion (18 on 64-bit)
      {
        what: "DbgPPDB, 64-bit, cut before MinorVersion",
        guid: IMAGEID,
        opcode: 38,
        ptr: 8,
        name: "KernelTraceControl/ImageID/DbgPPDB",
        payload: p().u64(0x7ff600000000n).u32(77).u32(1000).u8(3).u8(9).u8(4).u8(9).cut(18),
        text: "ImageBase=0x7ff600000000; TimeDateStamp=1,000; MajorVersion=3; MinorVersion=0",
      },
      {
        what: "DbgDeterm, 64-bit",
        guid: IMAGEID,
        opcode: 40,
        ptr: 8,
        name: "KernelTraceControl/ImageID/DbgDeterm",
        payload: p().u64(0x7ff600000000n).u32(77).build(),
        text: "ImageBase=0x7ff600000000",
      },
      {
        what: "DbgDeterm, 64-bit, cut inside ImageBase",
        guid: IMAGEID,
        opcode: 40,
        ptr: 8,
        name: "KernelTraceControl/ImageID/DbgDeterm",
        payload: p().u64(0x7ff600000000n).cut(6),
        text: "ImageBase=0x00000000",
      },
    ]);
  });

  it("FileVersion cut short, None, WinSat and MetaData (no fields)", async () => {
    const strings = ["o.dll", "desc", "1.0", "1.0.0.0", "1033", "prod", "co", "1.0", "fid", "pid"];
    const full = strings.reduce((b, s) => b.utf16z(s), p().u32(4096).u32(0x5f000000));
    const names = [
      "OrigFileName",
      "FileDescription",
      "FileVersion",
      "BinFileVersion",
      "VerLanguage",
      "ProductName",
      "CompanyName",
      "ProductVersion",
      "FileId",
      "ProgramId",
    ];
    // the first three strings' bytes: 8 + 2 * (6 + 5 + 4)
    const afterThree = 8 + 2 * (6 + 5 + 4);
    await expectCases([
      // FileVersionTraceData: ImageSize 0, TimeDateStamp 4 (cut inside it), ten strings from 8
      {
        what: "FileVersion, cut inside TimeDateStamp",
        guid: IMAGEID,
        opcode: 64,
        ptr: 8,
        name: "KernelTraceControl/ImageID/FileVersion",
        payload: full.cut(6),
        text: `ImageSize=4,096; TimeDateStamp=0; BuildTime=${EPOCH_1970}; ` + names.map((n) => `${n}=`).join("; "),
      },
      {
        what: "FileVersion, cut after the third string",
        guid: IMAGEID,
        opcode: 64,
        ptr: 4,
        name: "KernelTraceControl/ImageID/FileVersion",
        payload: full.cut(afterThree),
        text:
          "ImageSize=4,096; TimeDateStamp=1,593,835,520; BuildTime=20/07/04 04:05:20.000000; " +
          names.map((n, i) => `${n}=${i < 3 ? strings[i] : ""}`).join("; "),
      },
      // EmptyTraceData (DBGID_LOG_TYPE_NONE, 0x20)
      { what: "None", guid: IMAGEID, opcode: 32, ptr: 8, name: "KernelTraceControl/ImageID/None", payload: p().u64(0x7ff600000000n).build(), text: "" },
      { what: "None, empty", guid: IMAGEID, opcode: 32, ptr: 4, name: "KernelTraceControl/ImageID/None", payload: new Uint8Array(0), text: "" },
      // WinSatXmlTraceData: PayloadNames is empty (the XML is in ToXml only)
      {
        what: "WinSat/Metrics",
        guid: WINSAT,
        opcode: 35,
        ptr: 8,
        name: "KernelTraceControl/WinSat/Metrics",
        payload: p().u32(0).u32(4).u32(0).build(),
        text: "",
      },
      {
        what: "WinSat/SystemConfig",
        guid: WINSAT,
        opcode: 37,
        ptr: 4,
        name: "KernelTraceControl/WinSat/SystemConfig",
        payload: p().u32(0).u32(4).u32(0).build(),
        text: "",
      },
      { what: "WinSat/WinSPR, cut", guid: WINSAT, opcode: 33, ptr: 8, name: "KernelTraceControl/WinSat/WinSPR", payload: p().u16(1).build(), text: "" },
      // EmptyTraceData (the TDH descriptions the payloads carry are read for naming, not printed)
      {
        what: "MetaData/EventInfo",
        guid: METADATA,
        opcode: 32,
        ptr: 8,
        name: "KernelTraceControl/MetaData/EventInfo",
        payload: p().u32(0).u32(0).build(),
        text: "",
      },
      {
        what: "MetaData/EventMapInfo",
        guid: METADATA,
        opcode: 33,
        ptr: 8,
        name: "KernelTraceControl/MetaData/EventMapInfo",
        payload: new Uint8Array(0),
        text: "",
      },
    ]);
  });
});

describe("KernelTraceEventParser's SysConfig templates (KernelTraceControl's task GUID, provider Windows Kernel)", () => {
  it("BuildInfo, SystemPaths, UnknownVolume, VolumeMapping: full and cut short", async () => {
    const install = 133232284106944520n;
    await expectCases([
      // BuildInfoTraceData: InstallDate FromFileTime(GetInt64At(0)), BuildLab at 8, ProductName after it
      {
        what: "BuildInfo",
        guid: SYSCONFIG,
        opcode: 32,
        ptr: 8,
        name: "Windows Kernel/SysConfig/BuildInfo",
        payload: p().i64(install).utf16z("22621.1.amd64fre.ni_release.220506-1250").utf16z("Windows 11 Pro").build(),
        text: "InstallDate=23/03/14 00:46:50.694452; BuildLab=22621.1.amd64fre.ni_release.220506-1250; ProductName=Windows 11 Pro",
      },
      {
        what: "BuildInfo, cut inside InstallDate",
        guid: SYSCONFIG,
        opcode: 32,
        ptr: 4,
        name: "Windows Kernel/SysConfig/BuildInfo",
        payload: p().i64(install).cut(5),
        text: "InstallDate=01/01/01 00:00:00.000000; BuildLab=; ProductName=",
      }, // FromFileTime(0): 1601-01-01
      // SystemPathsTraceData: SystemDirectory at 0, SystemWindowsDirectory after it
      {
        what: "SystemPaths",
        guid: SYSCONFIG,
        opcode: 33,
        ptr: 8,
        name: "Windows Kernel/SysConfig/SystemPaths",
        payload: p().utf16z("C:\\Windows\\system32").utf16z("C:\\Windows").build(),
        text: "SystemDirectory=C:\\Windows\\system32; SystemWindowsDirectory=C:\\Windows",
      },
      {
        what: "SystemPaths, cut after SystemDirectory",
        guid: SYSCONFIG,
        opcode: 33,
        ptr: 8,
        name: "Windows Kernel/SysConfig/SystemPaths",
        payload: p().utf16z("C:\\Windows\\system32").build(),
        text: "SystemDirectory=C:\\Windows\\system32; SystemWindowsDirectory=",
      },
      // StringTraceData (Unicode): Value at 0
      {
        what: "UnknownVolume",
        guid: SYSCONFIG,
        opcode: 34,
        ptr: 8,
        name: "Windows Kernel/SysConfig/UnknownVolume",
        payload: p().utf16z("\\Device\\HarddiskVolume9").build(),
        text: "Value=\\Device\\HarddiskVolume9",
      },
      {
        what: "UnknownVolume, empty",
        guid: SYSCONFIG,
        opcode: 34,
        ptr: 4,
        name: "Windows Kernel/SysConfig/UnknownVolume",
        payload: new Uint8Array(0),
        text: "Value=",
      },
      // VolumeMappingTraceData: NtPath at 0, DosPath after it
      {
        what: "VolumeMapping",
        guid: SYSCONFIG,
        opcode: 35,
        ptr: 8,
        name: "Windows Kernel/SysConfig/VolumeMapping",
        payload: p().utf16z("\\Device\\HarddiskVolume3").utf16z("C:").build(),
        text: "NtPath=\\Device\\HarddiskVolume3; DosPath=C:",
      },
      {
        what: "VolumeMapping, cut after NtPath",
        guid: SYSCONFIG,
        opcode: 35,
        ptr: 4,
        name: "Windows Kernel/SysConfig/VolumeMapping",
        payload: p().utf16z("\\Device\\HarddiskVolume4").build(),
        text: "NtPath=\\Device\\HarddiskVolume4; DosPath=",
      },
    ]);
  });
});

describe("Microsoft-Windows-Kernel-Memory events as KernelTraceEventParser's classes print them", () => {
  // Templates by event id (any version): 1 MemInfoTraceData, task "MemoryMemInfo"; 2 MemoryProcessMemInfoTraceData,
  // task "MemoryProcessMemInfo"; no opcode name, so the event name is the task name
  it("MemInfo (PriorityLevels byte at 0, five (long)GetAddressAt counts from the unaligned offset 1)", async () => {
    await expectCases([
      // 64-bit: counts at 1, HostOffset(5, 1) = 9, HostOffset(9, 2) = 17, HostOffset(13, 3) = 25, HostOffset(17, 4) = 33
      {
        what: "MemInfo, 64-bit",
        guid: KERNEL_MEMORY,
        id: 1,
        version: 1,
        ptr: 8,
        name: "Microsoft-Windows-Kernel-Memory/MemoryMemInfo",
        payload: p().u8(8).u64(0x1234).u64(1_000_000).u64(-1n).u64(0x100000000n).u64(3).zeros(64).build(),
        text: "PriorityLevels=8; ZeroPageCount=4,660; FreePageCount=1,000,000; ModifiedPageCount=-1; ModifiedNoWritePageCount=4,294,967,296; BadPageCount=3",
      },
      // 32-bit: counts at 1, 5, 9, 13, 17, unsigned (GetAddressAt) before the cast to long
      {
        what: "MemInfo, 32-bit",
        guid: KERNEL_MEMORY,
        id: 1,
        version: 1,
        ptr: 4,
        name: "Microsoft-Windows-Kernel-Memory/MemoryMemInfo",
        payload: p().u8(1).u32(10).u32(0x80000000).u32(30).u32(40).u32(50).build(),
        text: "PriorityLevels=1; ZeroPageCount=10; FreePageCount=2,147,483,648; ModifiedPageCount=30; ModifiedNoWritePageCount=40; BadPageCount=50",
      },
      // cut inside ModifiedPageCount (17..25)
      {
        what: "MemInfo, 64-bit, cut inside ModifiedPageCount",
        guid: KERNEL_MEMORY,
        id: 1,
        version: 1,
        ptr: 8,
        name: "Microsoft-Windows-Kernel-Memory/MemoryMemInfo",
        payload: p().u8(8).u64(11).u64(22).u64(33).u64(44).u64(55).cut(20),
        text: "PriorityLevels=8; ZeroPageCount=11; FreePageCount=22; ModifiedPageCount=0; ModifiedNoWritePageCount=0; BadPageCount=0",
      },
      {
        what: "MemInfo, empty",
        guid: KERNEL_MEMORY,
        id: 1,
        version: 0,
        ptr: 8,
        name: "Microsoft-Windows-Kernel-Memory/MemoryMemInfo",
        payload: new Uint8Array(0),
        text: "PriorityLevels=0; ZeroPageCount=0; FreePageCount=0; ModifiedPageCount=0; ModifiedNoWritePageCount=0; BadPageCount=0",
      },
    ]);
  });

  it("ProcessMemInfo (Count, then the first process's values; the last four from version 2)", async () => {
    const NAME = "Microsoft-Windows-Kernel-Memory/MemoryProcessMemInfo";
    await expectCases([
      // V2, 64-bit: ProcessID 4, WorkingSetPageCount 8, CommitPageCount HostOffset(12, 1) = 16, ... SharedCommitInPages HostOffset(36, 7) = 64
      {
        what: "ProcessMemInfo V2, 64-bit",
        guid: KERNEL_MEMORY,
        id: 2,
        version: 2,
        ptr: 8,
        name: NAME,
        payload: [1, 2, 3, 4, 5, 6, 7, 8]
          .reduce((b, v) => b.u64(v * 1000), p().u32(2).u32(4242))
          .zeros(72)
          .build(),
        text:
          "Count=2; ProcessID=4,242; WorkingSetPageCount=1,000; CommitPageCount=2,000; VirtualSizeInPages=3,000; PrivateWorkingSetPageCount=4,000; " +
          "StoreSizePageCount=5,000; StoredPageCount=6,000; CommitDebtInPages=7,000; SharedCommitInPages=8,000",
      },
      // V1, 32-bit: four 32-bit counts at 8, 12, 16, 20; the V2 fields are 0 whatever follows
      {
        what: "ProcessMemInfo V1, 32-bit",
        guid: KERNEL_MEMORY,
        id: 2,
        version: 1,
        ptr: 4,
        name: NAME,
        payload: p().u32(1).u32(4).u32(0x80000000).u32(20).u32(30).u32(40).u32(99).u32(99).build(),
        text:
          "Count=1; ProcessID=4; WorkingSetPageCount=2,147,483,648; CommitPageCount=20; VirtualSizeInPages=30; PrivateWorkingSetPageCount=40; " +
          "StoreSizePageCount=0; StoredPageCount=0; CommitDebtInPages=0; SharedCommitInPages=0",
      },
      // V2, 64-bit, cut inside VirtualSizeInPages (24..32)
      {
        what: "ProcessMemInfo V2, 64-bit, cut inside VirtualSizeInPages",
        guid: KERNEL_MEMORY,
        id: 2,
        version: 2,
        ptr: 8,
        name: NAME,
        payload: [1, 2, 3, 4, 5, 6, 7, 8].reduce((b, v) => b.u64(v), p().u32(1).u32(8)).cut(30),
        text:
          "Count=1; ProcessID=8; WorkingSetPageCount=1; CommitPageCount=2; VirtualSizeInPages=0; PrivateWorkingSetPageCount=0; " +
          "StoreSizePageCount=0; StoredPageCount=0; CommitDebtInPages=0; SharedCommitInPages=0",
      },
    ]);
  });
});
