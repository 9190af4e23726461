// Names by key and time, as TraceEvent's KernelTraceEventParserState keeps them: one HistoryDictionary
// (fileIDToName) of file names (FileIO Name / FileCreate / FileDelete / FileRundown by FileKey, FileIO Create by
// FileObject), registry key names (by KeyHandle) and object names (HandleDCEnd by Object). TraceLog adds an
// entry (key, TimeStampQPC, name) for each such event in time order; the end-rundown adds (FileDelete,
// FileRundown, Registry opcode 22 KCBCreate, Object HandleDCEnd) count from time 0 when they are the key's
// first entry; an add at the same time as the key's last entry replaces its name. A lookup at an event's
// TimeStampQPC (FileIDToName, ObjectToName) finds the latest entry at or before it, "" when the time is before
// the key's first entry (then FileIDToName(key, object, time) tries the file object). The expected names are
// worked out by hand from those rules (KernelTraceEventParser.cs's constructor callbacks and HistoryDictionary.cs).

import { describe, expect, it } from "vitest";
import { EtlWriter, PayloadBuilder } from "../dist/bindings/generator/etl-writer.js";
import { openTrace } from "../dist/bindings/index.js";
import { PayloadContext, payloadPairs } from "../dist/bindings/perfview/index.js";

const FILEIO = 0x04;
const REGISTRY = 0x09;
const OBJECT = 0x11;
const p = () => new PayloadBuilder();

interface Rec {
  what: string;
  group: number;
  opcode: number;
  version: number;
  /** Microseconds after the trace's anchor (QPC ticks at 1 MHz). */
  us: number;
  payload: Uint8Array;
  /** The field to check and the value TraceEvent prints for it (absent: a record that only adds a name). */
  field?: string;
  expect?: string;
}

/** Writes the records (64-bit, in the order given) and checks each one's field. */
async function expectNames(recs: Rec[]): Promise<void> {
  const w = new EtlWriter({ perfFreq: 1_000_000n });
  for (const r of recs) {
    w.system(0, { headerType: 0x02, hookId: (r.group << 8) | r.opcode, version: r.version, pid: 7, tid: 8, ts: w.anchor + BigInt(r.us), payload: r.payload });
  }
  const t = await openTrace(w.finish());
  const ctx = new PayloadContext(t, t.processes, "current");
  // the records' rows in file order (the trace's own header record is not one of them)
  const rows: number[] = [];
  const row = t.events.row(0);
  for (let i = 0; i < t.events.length; i++) {
    row.index = i;
    const g = row.group;
    if (g === FILEIO || g === REGISTRY || g === OBJECT) rows.push(i);
  }
  expect(rows.length).toBe(recs.length);
  const got: string[] = [];
  const want: string[] = [];
  recs.forEach((r, k) => {
    if (r.field === undefined) return;
    const pairs = payloadPairs(t.events.row(rows[k]), ctx);
    const v = pairs.find(([n]) => n === r.field);
    got.push(`${r.what}: ${r.field}=${v?.[1]}`);
    want.push(`${r.what}: ${r.field}=${r.expect}`);
  });
  expect(got).toEqual(want);
  t.dispose();
}

// ---------------------------------------------------------------- FileIO (V3, 64-bit layouts)
const name = (op: number, key: bigint, path: string) => p().u64(key).utf16z(path).build();
/** Read V3: Offset, IrpPtr, FileObject HostOffset(12, 1), FileKey HostOffset(16, 2), TTID, IoSize, IoFlags. */
const read = (key: bigint, obj = 0n) => p().i64(0).u64(0x1000).u64(obj).u64(key).u32(8).u32(4096).u32(0).build();
/** Create V3: IrpPtr, FileObject HostOffset(4, 1), TTID, options, attributes, share, FileName HostOffset(24, 2). */
const create = (obj: bigint, path: string) => p().u64(0x1000).u64(obj).u32(8).u32(0).u32(0).u32(0).utf16z(path).build();
/** MapFile V3: ViewBase, FileKey HostOffset(4, 1), MiscInfo, ViewSize, ByteOffset, ProcessID HostOffset(28, 3). */
const mapFile = (key: bigint) => p().u64(0x7ff000000000n).u64(key).i64(0).u64(0x1000).i64(0).u32(7).build();

const K = 0xfffffa8000001000n; // named twice (Name, then FileCreate)
const R = 0xfffffa8000003000n; // named only by a FileRundown
const S = 0xfffffa8000004000n; // a Name, then a FileRundown
const Q = 0xfffffa8000005000n; // two Names at one time
const O = 0xfffffa8000006000n; // a file object named by Create
const K2 = 0xfffffa8000007000n; // unnamed until after O is
const V = "\\Device\\HarddiskVolume1\\";

describe("file names by FileKey / FileObject and time (KernelTraceEventParserState.FileIDToName)", () => {
  it("before, at, between and after the names of one key; end-rundown adds from time 0 only as the key's first entry", async () => {
    await expectNames([
      { what: "Read K before its first name", group: FILEIO, opcode: 67, version: 3, us: 100, payload: read(K), field: "FileName", expect: "" },
      {
        what: "Read R before its only (rundown) name",
        group: FILEIO,
        opcode: 67,
        version: 3,
        us: 150,
        payload: read(R),
        field: "FileName",
        expect: `${V}rundown.txt`,
      },
      { what: "MapFile K before its first name", group: FILEIO, opcode: 37, version: 3, us: 160, payload: mapFile(K), field: "FileName", expect: "" },
      { what: "Name K", group: FILEIO, opcode: 0, version: 2, us: 200, payload: name(0, K, `${V}first.txt`), field: "FileName", expect: `${V}first.txt` },
      {
        what: "Read K at the time of its first name",
        group: FILEIO,
        opcode: 67,
        version: 3,
        us: 200,
        payload: read(K),
        field: "FileName",
        expect: `${V}first.txt`,
      },
      { what: "Read S before its first name", group: FILEIO, opcode: 67, version: 3, us: 250, payload: read(S), field: "FileName", expect: "" },
      { what: "Name S", group: FILEIO, opcode: 0, version: 2, us: 300, payload: name(0, S, `${V}s1.txt`) },
      { what: "Read K between its names", group: FILEIO, opcode: 67, version: 3, us: 300, payload: read(K), field: "FileName", expect: `${V}first.txt` },
      { what: "MapFile K between its names", group: FILEIO, opcode: 37, version: 3, us: 350, payload: mapFile(K), field: "FileName", expect: `${V}first.txt` },
      { what: "FileCreate K", group: FILEIO, opcode: 32, version: 2, us: 400, payload: name(32, K, `${V}second.txt`) },
      { what: "Read K after its second name", group: FILEIO, opcode: 67, version: 3, us: 500, payload: read(K), field: "FileName", expect: `${V}second.txt` },
      {
        what: "Read S between its Name and its FileRundown",
        group: FILEIO,
        opcode: 67,
        version: 3,
        us: 500,
        payload: read(S),
        field: "FileName",
        expect: `${V}s1.txt`,
      },
      { what: "FileRundown R (R's first entry: from time 0)", group: FILEIO, opcode: 36, version: 2, us: 600, payload: name(36, R, `${V}rundown.txt`) },
      { what: "Read R after its rundown", group: FILEIO, opcode: 67, version: 3, us: 700, payload: read(R), field: "FileName", expect: `${V}rundown.txt` },
      { what: "FileRundown S (not S's first entry: from its own time)", group: FILEIO, opcode: 36, version: 2, us: 800, payload: name(36, S, `${V}s2.txt`) },
      { what: "Read S after its FileRundown", group: FILEIO, opcode: 67, version: 3, us: 900, payload: read(S), field: "FileName", expect: `${V}s2.txt` },
    ]);
  });

  it("two names at one time: the later replaces the earlier (HistoryDictionary.Add's exact-time match)", async () => {
    await expectNames([
      { what: "Name Q", group: FILEIO, opcode: 0, version: 2, us: 1000, payload: name(0, Q, `${V}q1.txt`) },
      { what: "FileCreate Q at the same time", group: FILEIO, opcode: 32, version: 2, us: 1000, payload: name(32, Q, `${V}q2.txt`) },
      { what: "Read Q at that time", group: FILEIO, opcode: 67, version: 3, us: 1000, payload: read(Q), field: "FileName", expect: `${V}q2.txt` },
      { what: "Read Q later", group: FILEIO, opcode: 67, version: 3, us: 1100, payload: read(Q), field: "FileName", expect: `${V}q2.txt` },
      // FileDelete is an end-rundown add too, but Q has entries: from its own time
      { what: "FileDelete Q", group: FILEIO, opcode: 35, version: 2, us: 1200, payload: name(35, Q, `${V}q3.txt`) },
      { what: "Read Q before the FileDelete", group: FILEIO, opcode: 67, version: 3, us: 1150, payload: read(Q), field: "FileName", expect: `${V}q2.txt` },
      { what: "Read Q after the FileDelete", group: FILEIO, opcode: 67, version: 3, us: 1300, payload: read(Q), field: "FileName", expect: `${V}q3.txt` },
    ]);
  });

  it("the file object's name when the key has none yet at the event's time (FileIDToName(key, object, time))", async () => {
    await expectNames([
      { what: "Read K2/O before either is named", group: FILEIO, opcode: 67, version: 3, us: 100, payload: read(K2, O), field: "FileName", expect: "" },
      {
        what: "Create O",
        group: FILEIO,
        opcode: 64,
        version: 3,
        us: 200,
        payload: create(O, `${V}by-object.txt`),
        field: "FileName",
        expect: `${V}by-object.txt`,
      },
      {
        what: "Read K2/O after Create, K2 not named yet",
        group: FILEIO,
        opcode: 67,
        version: 3,
        us: 300,
        payload: read(K2, O),
        field: "FileName",
        expect: `${V}by-object.txt`,
      },
      { what: "Name K2", group: FILEIO, opcode: 0, version: 2, us: 400, payload: name(0, K2, `${V}by-key.txt`) },
      {
        what: "Read K2/O after K2 is named",
        group: FILEIO,
        opcode: 67,
        version: 3,
        us: 500,
        payload: read(K2, O),
        field: "FileName",
        expect: `${V}by-key.txt`,
      },
      // Cleanup (SimpleOp V3: FileObject HostOffset(4, 1), FileKey HostOffset(8, 2)) of an unnamed key and O
      {
        what: "Cleanup of an unnamed key with O",
        group: FILEIO,
        opcode: 65,
        version: 3,
        us: 600,
        payload: p().u64(0x1000).u64(O).u64(0xfffffa800000dead0n).u32(8).build(),
        field: "FileName",
        expect: `${V}by-object.txt`,
      },
    ]);
  });
});

// ---------------------------------------------------------------- Registry (V2, 64-bit: InitialTime, Status, Index, KeyHandle 16, name HostOffset(20, 1))
const reg = (handle: bigint, s: string) => p().i64(0).u32(0).u32(0).u64(handle).utf16z(s).build();
const H = 0xffffc0010000a000n; // opened twice, closed with an empty name in between
const H2 = 0xffffc0010000b000n; // named only by a KCBCreate (22)
const H3 = 0xffffc0010000c000n; // an empty-named event first, then a KCBCreate
const H4 = 0xffffc0010000d000n; // named only by a KCBRundownEnd (25)
const M = "\\REGISTRY\\MACHINE\\";

describe("registry key names by KeyHandle and time (RegistryTraceData.KeyName)", () => {
  it("value events look the key up at their time; an empty key name adds the name in force; only KCBCreate is an end-rundown add", async () => {
    await expectNames([
      { what: "QueryValue H before H is named", group: REGISTRY, opcode: 16, version: 2, us: 100, payload: reg(H, "v"), field: "KeyName", expect: "" },
      {
        what: 'Close H3 with no name (adds H3 -> "" at its time)',
        group: REGISTRY,
        opcode: 27,
        version: 2,
        us: 100,
        payload: reg(H3, ""),
        field: "KeyName",
        expect: "",
      },
      { what: "Query H2 before its KCBCreate", group: REGISTRY, opcode: 13, version: 2, us: 150, payload: reg(H2, "v"), field: "KeyName", expect: `${M}B` },
      { what: "Query H4 before its KCBRundownEnd", group: REGISTRY, opcode: 13, version: 2, us: 150, payload: reg(H4, "v"), field: "KeyName", expect: "" },
      { what: "Open H", group: REGISTRY, opcode: 11, version: 2, us: 200, payload: reg(H, `${M}A`), field: "KeyName", expect: `${M}A` },
      { what: "QueryValue H after Open", group: REGISTRY, opcode: 16, version: 2, us: 300, payload: reg(H, "v"), field: "KeyName", expect: `${M}A` },
      { what: "Close H with no name", group: REGISTRY, opcode: 27, version: 2, us: 400, payload: reg(H, ""), field: "KeyName", expect: `${M}A` },
      { what: "SetValue H after the Close", group: REGISTRY, opcode: 14, version: 2, us: 450, payload: reg(H, "v"), field: "KeyName", expect: `${M}A` },
      { what: "Open H again", group: REGISTRY, opcode: 11, version: 2, us: 500, payload: reg(H, `${M}C`) },
      { what: "Query H after the second Open", group: REGISTRY, opcode: 13, version: 2, us: 600, payload: reg(H, "v"), field: "KeyName", expect: `${M}C` },
      {
        what: "Query H3 between its empty entry and its KCBCreate",
        group: REGISTRY,
        opcode: 13,
        version: 2,
        us: 600,
        payload: reg(H3, "v"),
        field: "KeyName",
        expect: "",
      },
      { what: "KCBCreate H2 (H2's first entry: from time 0)", group: REGISTRY, opcode: 22, version: 2, us: 700, payload: reg(H2, `${M}B`) },
      { what: "KCBRundownEnd H4 (not an end-rundown add: from its own time)", group: REGISTRY, opcode: 25, version: 2, us: 700, payload: reg(H4, `${M}E`) },
      { what: "KCBCreate H3 (not H3's first entry: from its own time)", group: REGISTRY, opcode: 22, version: 2, us: 800, payload: reg(H3, `${M}D`) },
      { what: "Query H3 after its KCBCreate", group: REGISTRY, opcode: 13, version: 2, us: 900, payload: reg(H3, "v"), field: "KeyName", expect: `${M}D` },
      { what: "Query H4 after its KCBRundownEnd", group: REGISTRY, opcode: 13, version: 2, us: 900, payload: reg(H4, "v"), field: "KeyName", expect: `${M}E` },
    ]);
  });
});

// ---------------------------------------------------------------- Object (64-bit)
/** HandleDCEnd: Object, ProcessID HostOffset(4, 1), Handle HostOffset(8, 1), ObjectType HostOffset(12, 1), ObjectName HostOffset(14, 1). */
const handleDCEnd = (obj: bigint, s: string) => p().u64(obj).u32(7).u32(0x40).u16(17).utf16z(s).build();
/** CreateHandle / CloseHandle: Object, Handle HostOffset(4, 1), ObjectType HostOffset(8, 1). */
const handle = (obj: bigint) => p().u64(obj).u32(0x40).u16(17).u16(0).build();
const X = 0xffffc00012340000n;

describe("object names by Object and time (ObjectHandleTraceData.ObjectName, ObjectToName)", () => {
  it("a HandleDCEnd names its object from time 0 when it is the first, from its own time when not", async () => {
    await expectNames([
      {
        what: "CreateHandle X before any HandleDCEnd",
        group: OBJECT,
        opcode: 32,
        version: 2,
        us: 100,
        payload: handle(X),
        field: "ObjectName",
        expect: "\\BaseNamedObjects\\first",
      },
      { what: "HandleDCEnd X", group: OBJECT, opcode: 39, version: 2, us: 900, payload: handleDCEnd(X, "\\BaseNamedObjects\\first") },
      {
        what: "CloseHandle X between the HandleDCEnds",
        group: OBJECT,
        opcode: 33,
        version: 2,
        us: 950,
        payload: handle(X),
        field: "ObjectName",
        expect: "\\BaseNamedObjects\\first",
      },
      { what: "HandleDCEnd X again", group: OBJECT, opcode: 39, version: 2, us: 1000, payload: handleDCEnd(X, "\\BaseNamedObjects\\second") },
      {
        what: "CloseHandle X after the second",
        group: OBJECT,
        opcode: 33,
        version: 2,
        us: 1100,
        payload: handle(X),
        field: "ObjectName",
        expect: "\\BaseNamedObjects\\second",
      },
    ]);
  });
});
