// Every .NET runtime template of TraceEvent (ClrTraceEventParser, ClrRundownTraceEventParser,
// ClrStressTraceEventParser, ClrPrivateTraceEventParser): the payload field names we print, in order, are
// its class's PayloadNames, for every version of the event the manifest knows; fields an older version
// lacks print TraceEvent's defaults. The expectations come from test/data/traceevent-clr-payload-names.json,
// extracted by hand from TraceEvent's sources (see its `sources`), not from our code. The events are
// synthetic: each version's manifest template filled with made-up values of the declared types.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openTrace } from "../dist/bindings/index.js";
import { EtlWriter, PayloadBuilder } from "../dist/bindings/generator/etl-writer.js";
import { PayloadContext, payloadPairs } from "../dist/bindings/perfview/index.js";
import { CLR_EVENTS, CLR_PROVIDERS } from "../dist/bindings/schema/clr-payload.js";
import { clrHasTemplate } from "../dist/bindings/naming/event-names.js";
import * as C from "../dist/assembly/codes.js";
import { clrCaseTrace, type ClrEventCase } from "./helpers/clr-cases.js";

interface Template {
  provider: "runtime" | "rundown" | "stress" | "private";
  id: number;
  class: string;
  payloadNames: string[];
  defaultsByVersion?: Record<string, Record<string, string>>;
  note?: string;
}
interface Data {
  sources: { commit: string }[];
  notCovered: { provider: string; id: number }[];
  templates: Template[];
}

const DATA: Data = JSON.parse(readFileSync(new URL("./data/traceevent-clr-payload-names.json", import.meta.url), "utf8"));
const PROVIDER_INDEX = { runtime: 0, rundown: 1, stress: 2, private: 3 } as const;

type Field = (typeof CLR_EVENTS)[number]["fields"][number];

/** A payload for one manifest template: every field of the declared type, with made-up values. */
function buildPayload(fields: readonly Field[], ptr: 4 | 8, seed: number): Uint8Array {
  const p = new PayloadBuilder();
  // counts and lengths other fields refer to: arrays get no elements, binaries 3 bytes
  const lengths = new Set(fields.filter((f) => f.type === C.T_BINARY && f.length).map((f) => f.length!));
  const counts = new Set(fields.filter((f) => f.count !== undefined && !Number.isInteger(Number(f.count))).map((f) => f.count!));
  const sized = (f: Field): number | undefined => (lengths.has(f.name) ? 3 : counts.has(f.name) ? 0 : undefined);
  const scalar = (f: Field, k: number) => {
    const forced = sized(f);
    const n = forced ?? ((seed + k) % 5) + 1;
    switch (f.type) {
      case C.T_U8:
      case C.T_I8:
        p.u8(n);
        break;
      case C.T_U16:
      case C.T_I16:
        p.u16(n);
        break;
      case C.T_U32:
      case C.T_I32:
        p.u32(n);
        break;
      case C.T_BOOL:
        p.u32(1);
        break;
      case C.T_U64:
      case C.T_I64:
      case C.T_FILETIME:
        p.u64(BigInt(forced ?? 1000 + k));
        break;
      case C.T_F32:
        p.bytes(new Uint8Array(new Float32Array([1.5]).buffer));
        break;
      case C.T_F64:
        p.f64(2.25 + k);
        break;
      case C.T_PTR:
        p.ptr(ptr, 0x1000 + 16 * k);
        break;
      case C.T_GUID:
        p.guid("0a0b0c0d-0e0f-1011-1213-141516171819");
        break;
      case C.T_SYSTEMTIME:
        p.u16(2024).u16(1).u16(1).u16(2).u16(3).u16(4).u16(5).u16(6);
        break;
      case C.T_USTR:
        p.utf16z(`s${k}`);
        break;
      case C.T_ASTR:
        p.ansiz(`a${k}`);
        break;
      default:
        throw new Error(`field ${f.name}: type ${f.type}`);
    }
  };
  fields.forEach((f, k) => {
    if (f.type === C.T_BINARY) {
      const n = f.length === undefined ? 0 : Number.isInteger(Number(f.length)) ? Number(f.length) : 3;
      p.bytes(new Uint8Array(n).map((_, i) => 0xa0 + i));
    } else if (f.type === C.T_STRUCT || f.count !== undefined) {
      const n = Number.isInteger(Number(f.count)) ? Number(f.count) : 0; // literal counts get their elements
      for (let i = 0; i < n; i++) {
        if (f.fields) f.fields.forEach((s, j) => scalar(s, k + j));
        else scalar(f, k + i);
      }
    } else scalar(f, k);
  });
  return p.build();
}

interface Case {
  t: Template;
  version: number;
  newest: boolean;
  ptr: 4 | 8;
  payload: Uint8Array;
}

function versionsOf(t: Template): number[] {
  const p = PROVIDER_INDEX[t.provider];
  return CLR_EVENTS.filter((e) => e.provider === p && e.id === t.id)
    .map((e) => e.version)
    .sort((a, b) => a - b);
}

function casesOf(t: Template): Case[] {
  const p = PROVIDER_INDEX[t.provider];
  const versions = versionsOf(t);
  const newest = versions[versions.length - 1];
  const out: Case[] = [];
  for (const version of versions) {
    const schema = CLR_EVENTS.find((e) => e.provider === p && e.id === t.id && e.version === version)!;
    out.push({ t, version, newest: version === newest, ptr: 8, payload: buildPayload(schema.fields, 8, t.id + version) });
    if (version === newest) out.push({ t, version, newest: true, ptr: 4, payload: buildPayload(schema.fields, 4, t.id) });
  }
  return out;
}

async function printAll(cases: Case[]) {
  const w = new EtlWriter({ perfFreq: 1_000_000n });
  const at = (k: number) => w.anchor + BigInt(1000 * (k + 1));
  cases.forEach((c, k) =>
    w.event(0, {
      headerType: c.ptr === 4 ? 0x12 : 0x13,
      provider: CLR_PROVIDERS[PROVIDER_INDEX[c.t.provider]].guid,
      id: c.t.id,
      version: c.version,
      level: 4,
      opcode: 0,
      task: 0,
      keywords: 1n,
      pid: 1,
      tid: 2,
      ts: at(k),
      payload: c.payload,
    }),
  );
  const trace = await openTrace(w.finish());
  const ctx = new PayloadContext(trace, trace.processes, "current");
  const byTs = new Map<bigint, number>();
  [...trace.events.timestamp].forEach((ts, i) => byTs.set(ts, i));
  const printed = cases.map((c, k) => {
    const row = trace.events.row(byTs.get(at(k))!);
    return { row: { id: row.eventId, version: row.version, length: row.payloadLength }, pairs: payloadPairs(row, ctx) };
  });
  trace.dispose();
  return printed;
}

const what = (c: Case) => `${c.t.provider} ${c.t.id} (${c.t.class}) v${c.version} ptr${c.ptr}`;

describe("TraceEvent's .NET runtime templates (test/data/traceevent-clr-payload-names.json)", () => {
  it("the data covers every event our naming gives a TraceEvent template, and only those", () => {
    expect(DATA.templates.length).toBeGreaterThan(250);
    const listed = new Set(DATA.templates.map((t) => `${PROVIDER_INDEX[t.provider]}:${t.id}`));
    const skipped = new Set(DATA.notCovered.map((n) => `${PROVIDER_INDEX[n.provider as Template["provider"]]}:${n.id}`));
    const missing = new Set<string>();
    for (const e of CLR_EVENTS) {
      const key = `${e.provider}:${e.id}`;
      if (e.provider > 3 || !clrHasTemplate(e.provider, e.id)) continue;
      if (!listed.has(key) && !skipped.has(key)) missing.add(`${key} ${e.name}`);
    }
    expect([...missing]).toEqual([]);
    for (const t of DATA.templates) {
      expect(clrHasTemplate(PROVIDER_INDEX[t.provider], t.id), `${t.provider} ${t.id} ${t.class}`).toBe(true);
      expect(versionsOf(t).length, `${t.provider} ${t.id} ${t.class}: not in the manifest`).toBeGreaterThan(0);
      for (const v of Object.keys(t.defaultsByVersion ?? {})) {
        expect(versionsOf(t), `${t.provider} ${t.id}: defaults for a version the manifest lacks`).toContain(Number(v));
      }
    }
  });

  const cases = DATA.templates.flatMap(casesOf);
  const printed = printAll(cases);

  for (const provider of Object.keys(PROVIDER_INDEX) as Template["provider"][]) {
    it(`${provider}: the printed names are the class's PayloadNames, in order, for every manifest version`, async () => {
      const out = await printed;
      const wrong: string[] = [];
      cases.forEach((c, k) => {
        if (c.t.provider !== provider) return;
        const { row, pairs } = out[k];
        expect([row.id, row.version, row.length], what(c)).toEqual([c.t.id, c.version, c.payload.length]);
        const names = pairs.map(([n]) => n);
        if (JSON.stringify(names) !== JSON.stringify(c.t.payloadNames)) {
          wrong.push(`${what(c)}: printed [${names.join(", ")}], TraceEvent [${c.t.payloadNames.join(", ")}]`);
        }
      });
      expect(wrong).toEqual([]);
    });
  }

  it("older versions print TraceEvent's defaults for the fields they lack", async () => {
    const out = await printed;
    let checked = 0;
    const wrong: string[] = [];
    cases.forEach((c, k) => {
      const defaults = c.t.defaultsByVersion?.[String(c.version)];
      if (!defaults) return;
      const values = new Map(out[k].pairs);
      for (const [name, text] of Object.entries(defaults)) {
        checked++;
        if (values.get(name) !== text) wrong.push(`${what(c)}: ${name}=${JSON.stringify(values.get(name))}, TraceEvent ${JSON.stringify(text)}`);
      }
    });
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it("the newest version prints a value (not TraceEvent's default) for each field it carries", async () => {
    // guards the defaults above: a field the newest payload has must not be printed as missing. Fields that
    // TraceEvent itself prints empty (null PayloadValue) are the exceptions named here.
    // (the type name of FinalizeObject comes from BulkType events, which these traces have none of; the
    // manifest's newest GCPerHeapHistory and GCGlobalHeapHistory of the private provider, and ModuleDCStartV2 /
    // ModuleDCStopV2, are older than the newest TraceEvent reads)
    const EMPTY_IN_TRACEEVENT: Record<string, string[]> = {
      "runtime:29": ["TypeName"],
      "runtime:72": ["TypeParameterCount"],
      "runtime:74": ["LoadLevel", "TypeID", "TypeName"],
      "runtime:149": ["ManagedPdbBuildPath", "NativePdbBuildPath"],
      "runtime:150": ["ManagedPdbBuildPath", "NativePdbBuildPath"],
      "runtime:204": ["ConcurrentCompactMechanisms", "MemoryPressure"],
      // the namespace is read from offset 28, where the high half of a small MethodToken is a NUL
      "runtime:298": ["MethodNamespace"],
      "private:4": [
        "FreeListAllocated",
        "FreeListRejected",
        "EndOfSegAllocated",
        "CondemnedAllocated",
        "PinnedAllocated",
        "PinnedAllocatedAdvance",
        "RunningFreeListEfficiency",
        "ConcurrentCompactMechanisms",
        "ExtraGen0Commit",
        "Count",
      ],
      "private:5": ["PauseMode", "MemoryPressure", "CondemnReasons0", "CondemnReasons1", "Count"],
    };
    const out = await printed;
    const empty: string[] = [];
    cases.forEach((c, k) => {
      if (!c.newest) return;
      const allowed = EMPTY_IN_TRACEEVENT[`${c.t.provider}:${c.t.id}`] ?? [];
      for (const [name, text] of out[k].pairs) if (text === "" && !allowed.includes(name)) empty.push(`${what(c)}: ${name}`);
    });
    expect(empty).toEqual([]);
  });
});

// ------------------------------------------------------------------ values of the templates whose getters differ from the manifest

const RUNTIME = CLR_PROVIDERS[0].guid;
const RUNDOWN = CLR_PROVIDERS[1].guid;
const PRIVATE = CLR_PROVIDERS[3].guid;
const p = () => new PayloadBuilder();

interface ValueCase extends ClrEventCase {
  what: string;
  /** name=value pairs, "; "-joined, as TraceEvent's getters give them (worked out by hand, noted per case). */
  text: string;
}

const VALUE_CASES: ValueCase[] = [
  {
    // MethodDetailsTraceData.PayloadValue has no case 3: index 3 is null, 4 returns TypeParameterCount, 5 LoaderModuleID
    what: "Method/MethodDetails",
    provider: RUNTIME,
    id: 72,
    version: 0,
    ptr: 8,
    payload: p().u64(0x100).u64(0x200).u32(0x06000001).u32(1).u64(0x300).u64(0x400).build(),
    text: "MethodID=256; TypeID=512; MethodToken=100,663,297; TypeParameterCount=; LoaderModuleID=1; TypeParameters=768",
  },
  {
    // TypeLoadStopTraceData.PayloadValue answers 0 and 1 only
    what: "TypeLoad/Stop",
    provider: RUNTIME,
    id: 74,
    version: 0,
    ptr: 8,
    payload: p().u32(7).u16(3).u16(6).u64(0x1000).utf16z("System.String").build(),
    text: "TypeLoadStartID=7; ClrInstanceID=3; LoadLevel=; TypeID=; TypeName=",
  },
  {
    // GCBulkTypeTraceData.PayloadValue: TypeID_0 and TypeName_0 are the int 0 when Count is 0
    what: "Type/BulkType, Count 0",
    provider: RUNTIME,
    id: 15,
    version: 0,
    ptr: 8,
    payload: p().u32(0).u16(1).build(),
    text: "Count=0; ClrInstanceID=1; TypeID_0=0; TypeName_0=0",
  },
  {
    // CodeSymbolsTraceData: Chunk is a byte[] (hex digits of up to 16 bytes)
    what: "CodeSymbols/Start",
    provider: RUNTIME,
    id: 260,
    version: 0,
    ptr: 8,
    payload: p().u64(5).u16(1).u16(0).u32(3).u8(0xde).u8(0xad).u8(0x01).u16(2).build(),
    text: "ModuleId=5; TotalChunks=1; ChunkNumber=0; ChunkLength=3; Chunk=DEAD01; ClrInstanceID=2",
  },
  {
    // EventSourceTraceData names the manifest's EventName "Name"
    what: "EventSourceEvent",
    provider: RUNTIME,
    id: 270,
    version: 0,
    ptr: 8,
    payload: p().i32(12).utf16z("Ev").utf16z("Src").utf16z("{}").build(),
    text: "EventID=12; Name=Ev; EventSourceName=Src; Payload={}",
  },
  {
    // ContentionLockCreatedTraceData: Int64 at 0 and 8, Int16 at 16, also with 4-byte pointers (reads past the end are 0)
    what: "Contention/LockCreated, 32-bit",
    provider: RUNTIME,
    id: 90,
    version: 0,
    ptr: 4,
    payload: p().u32(0x00a1b2c3).u32(0x02d4e5f6).u16(9).build(),
    text: "LockID=0x2d4e5f600a1b2c3; AssociatedObjectID=0x00000009; ClrInstanceID=0",
  },
  {
    what: "Contention/LockCreated, 64-bit",
    provider: RUNTIME,
    id: 90,
    version: 0,
    ptr: 8,
    payload: p().u64(0x7ff600001000n).u64(0x7ff600002000n).u16(4).build(),
    text: "LockID=0x7ff600001000; AssociatedObjectID=0x7ff600002000; ClrInstanceID=4",
  },
  {
    // KnownPathProbedTraceData.PathSource is the KnownPathSource enum (1 is AppNativeImagePaths, "Unused" in the manifest)
    what: "AssemblyLoader/KnownPathProbed",
    provider: RUNTIME,
    id: 296,
    version: 0,
    ptr: 8,
    payload: p().u16(1).utf16z("C:\\x.dll").u16(1).i32(-2147024894).build(),
    text: "ClrInstanceID=1; FilePath=C:\\x.dll; Source=AppNativeImagePaths; Result=-2,147,024,894",
  },
  {
    // ILStubGeneratedFlags is a [Flags] enum: names joined by ", "
    what: "ILStub/StubGenerated",
    provider: RUNTIME,
    id: 88,
    version: 0,
    ptr: 8,
    payload: p().u16(1).u64(0x10).u64(0x20).u32(3).u32(0x06000002).utf16z("N").utf16z("M").utf16z("S").utf16z("NS").utf16z("SS").utf16z("IL").build(),
    text: "ClrInstanceID=1; ModuleID=16; StubMethodID=32; StubFlags=ReverseInterop, ComInterop; ManagedInteropMethodToken=100,663,298; ManagedInteropMethodNamespace=N; ManagedInteropMethodName=M; ManagedInteropMethodSignature=S; NativeMethodSignature=NS; StubMethodSignature=SS; StubMethodILCode=IL",
  },
  {
    // ThreadCreatedTraceData.Flags is an int
    what: "rundown Loader/ThreadDCStop",
    provider: RUNDOWN,
    id: 159,
    version: 0,
    ptr: 8,
    payload: p().u64(0x1234).u64(0x5678).u32(6).u32(2).u32(4242).u16(1).build(),
    text: "ManagedThreadID=4,660; AppDomainID=22,136; Flags=6; ManagedThreadIndex=2; OSThreadID=4,242; ClrInstanceID=1",
  },
  {
    // GCDecisionTraceData: DoCompact (bool at 0), ClrInstanceID at 4 from version 1
    what: "private GC/Decision v1",
    provider: PRIVATE,
    id: 1,
    version: 1,
    ptr: 8,
    payload: p().u32(1).u16(5).build(),
    text: "DoCompact=True; ClrInstanceID=5",
  },
  {
    what: "private GC/Decision v0",
    provider: PRIVATE,
    id: 1,
    version: 0,
    ptr: 8,
    payload: p().u32(0).build(),
    text: "DoCompact=False; ClrInstanceID=0",
  },
  {
    // ModuleRangePrivateTraceData: RangeBegin, RangeSize Int32 at 10 and 14; RangeType, IBCType [Flags] enums, SectionType enum
    what: "private ClrPerfTrack/ModuleRangeLoad",
    provider: PRIVATE,
    id: 158,
    version: 0,
    ptr: 8,
    payload: p().u16(1).u64(0x10).u32(0x100).u32(0x200).u8(4).u8(2).u16(29).build(),
    text: "ClrInstanceID=1; ModuleID=16; RangeBegin=256; RangeSize=512; RangeType=ColdRange; IBCType=IBCProfiledSection; SectionType=CodeSection",
  },
  {
    // LoaderHeapAllocRequestTraceData skips the two unused fields
    what: "private LoaderHeap/AllocRequest",
    provider: PRIVATE,
    id: 310,
    version: 0,
    ptr: 8,
    payload: p().u64(0x7ff600001000n).u64(0x7ff600002000n).u32(64).u32(0).u64(0).u16(2).build(),
    text: "LoaderHeapPtr=0x7ff600001000; MemoryAddress=0x7ff600002000; RequestSize=64; ClrInstanceID=2",
  },
  {
    // JitInstrumentationDataVerboseTraceData: MethodToken = Int32 at 24 (ModuleID bytes 6-7, token bytes 0-1 ->
    // 0x00010000), strings from 28 (token bytes 2-3 = 'A', then "NS"): "ANS", "M", "()"
    what: "JitInstrumentationDataVerbose/InstrumentationData",
    provider: RUNTIME,
    id: 298,
    version: 0,
    ptr: 8,
    payload: p().u16(1).u32(0).u32(2).u64(0x100).u64(0x7ffa00001234n).u32(0x00410001).utf16z("NS").utf16z("M").utf16z("()").u8(0xab).u8(0xcd).build(),
    text: "ClrInstanceID=1; MethodFlags=0; DataSize=2; MethodID=256; ModuleID=140,711,718,556,212; MethodToken=65,536; MethodNamespace=ANS; MethodName=M; MethodSignature=()",
  },
];

describe("templates whose getters read differently from the manifest: values", () => {
  it("print as TraceEvent's getters and PayloadValue give them", async () => {
    const { t: trace, rowOf } = await clrCaseTrace(VALUE_CASES);
    const ctx = new PayloadContext(trace, trace.processes, "current");
    for (const [k, c] of VALUE_CASES.entries()) {
      const row = rowOf(k);
      expect(row.payloadLength, c.what).toBe(c.payload.length);
      expect(
        payloadPairs(row, ctx)
          .map(([n, v]) => `${n}=${v}`)
          .join("; "),
        c.what,
      ).toBe(c.text);
    }
    trace.dispose();
  });
});
