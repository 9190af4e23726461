// Method symbol resolution (dotnet-analysis.md §4) against expectations derived in the test from the
// raw rows: method names and module paths from the runtime/rundown method and loader events, image
// ranges and file names parsed from the kernel Image payloads (etl-format.md §10.4). Then a synthetic
// trace: one address reused by two methods over time, images loaded and unloaded, modules named late.

import { beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { openTrace, type Trace } from "../dist/bindings/index.js";
import { SymbolMap } from "../dist/bindings/analysis/symbols.js";
import { EtlWriter, PayloadBuilder } from "../dist/bindings/generator/etl-writer.js";
import { HAVE_CORPUS, etlPath } from "./helpers/shared.js";

const RUNTIME = "Microsoft-Windows-DotNETRuntime";
const RUNDOWN = "Microsoft-Windows-DotNETRuntimeRundown";
const IMAGE = "2cb15d1d-5fc1-11d2-abe1-00a0c911f518";

/** File name without directory and extension, lower-cased (TraceModuleFile lower-cases paths). */
const shortName = (path: string) => {
  const file = path.toLowerCase().slice(path.lastIndexOf("\\") + 1);
  return file.includes(".") ? file.slice(0, file.lastIndexOf(".")) : file;
};

const methodText = (ns: unknown, name: unknown, sig: unknown) => {
  const s = String(sig);
  return `${ns}.${name}${s.includes("(") ? s.slice(s.indexOf("(")) : ""}`;
};

interface Method {
  pid: number;
  start: bigint;
  size: bigint;
  ts: bigint;
  frame: string;
}

interface Image {
  pid: number;
  op: number;
  base: bigint;
  size: bigint;
  ts: bigint;
  file: string;
}

/** Kernel Image events, read from their payload bytes. */
function images(t: Trace): Image[] {
  const out: Image[] = [];
  for (const row of t.query({ provider: IMAGE, order: "time" })) {
    if (![2, 3, 4, 10].includes(row.opcode)) continue;
    const b = row.payload;
    const v = new DataView(b.buffer, b.byteOffset, b.length);
    const P = row.pointerSize;
    const ptr = (at: number) => (P === 8 ? v.getBigUint64(at, true) : BigInt(v.getUint32(at, true)));
    let file = "";
    for (let at = 3 * P + 32; at + 1 < b.length; at += 2) {
      const c = v.getUint16(at, true);
      if (c === 0) break;
      file += String.fromCharCode(c);
    }
    out.push({ pid: v.getUint32(2 * P, true), op: row.opcode, base: ptr(0), size: ptr(P), ts: row.timestamp, file });
  }
  return out;
}

/** Methods of one event kind, with the frame expected for them (module from the loader events of the process). */
function methods(t: Trace, provider: string, id: number, jittedOnly: boolean): Method[] {
  const modules = new Map<string, string>();
  for (const row of t.query({ provider: [RUNTIME, RUNDOWN], order: "time" })) {
    const s = row.clrSchema;
    if (!s || !/\/Loader\/Module(Load|DCStop|DCStart)$/.test(row.name)) continue;
    const key = `${row.pid}:${row.get("ModuleID")}`;
    if (!modules.has(key)) modules.set(key, String(row.get("ModuleILPath")));
  }
  const out: Method[] = [];
  for (const row of t.query({ provider, eventId: id, order: "time" })) {
    if (jittedOnly && !(Number(row.get("MethodFlags")) & 8)) continue;
    const path = modules.get(`${row.pid}:${row.get("ModuleID")}`);
    expect(path, "a loader event names the module").toBeDefined();
    out.push({
      pid: row.pid!,
      start: BigInt(row.get("MethodStartAddress") as bigint),
      size: BigInt(Number(row.get("MethodSize"))),
      ts: row.timestamp,
      frame: `${shortName(path!)}!${methodText(row.get("MethodNamespace"), row.get("MethodName"), row.get("MethodSignature"))}`,
    });
  }
  return out;
}

const inImage = (list: Image[], pid: number, a: bigint) => list.some((i) => i.pid === pid && i.base <= a && a < i.base + i.size);

describe("symbols on net.4.5.2.x64.etl", () => {
  let t: Trace;
  let map: SymbolMap;
  let imgs: Image[];
  beforeAll(async () => {
    if (!HAVE_CORPUS) return;
    t = await openTrace(readFileSync(etlPath("net.4.5.2.x64.etl")));
    map = SymbolMap.fromTrace(t);
    imgs = images(t);
  });

  it.skipIf(!HAVE_CORPUS)("every jitted method: its start and middle resolve to it from its load on, one past its end does not", () => {
    const loads = methods(t, RUNTIME, 143, true);
    expect(loads.length).toBe(290);
    for (const m of loads) {
      expect(inImage(imgs, m.pid, m.start)).toBe(false); // jitted code is outside every image
      expect(map.resolve(m.pid, m.start, m.ts)).toMatchObject({ kind: "managed", name: m.frame });
      expect(map.resolve(m.pid, m.start + m.size / 2n, m.ts + 1n).name).toBe(m.frame);
      expect(map.resolve(m.pid, m.start + m.size - 1n, m.ts).name).toBe(m.frame);
      expect(map.resolve(m.pid, m.start + m.size, m.ts).name).not.toBe(m.frame);
    }
    // the method's module path as TraceModuleFile keeps it (lower-cased)
    const main = loads.find((m) => m.frame.includes("Test.Program.Main"))!;
    expect(map.resolve(main.pid, main.start, main.ts)).toMatchObject({
      module: "test.x64",
      method: "Test.Program.Main(class System.String[])",
      path: "z:\\perfinvestigations\\20-07-28.testtraces\\test.x64.exe",
    });
  });

  it.skipIf(!HAVE_CORPUS)("every rundown method (DCStopVerbose) resolves, at its rundown and before it", () => {
    const stops = methods(t, RUNDOWN, 144, false);
    expect(stops.length).toBe(16702);
    const first = t.query({ order: "time" });
    const t0 = t.events.row(first.indices[0]).timestamp;
    for (const m of stops) {
      expect(inImage(imgs, m.pid, m.start)).toBe(false);
      expect(map.resolve(m.pid, m.start, m.ts).name).toBe(m.frame);
      expect(map.resolve(m.pid, m.start + m.size - 1n, t0).name).toBe(m.frame);
    }
  });

  it.skipIf(!HAVE_CORPUS)("addresses in images mapped by the kernel Image events are native, kernel addresses are process 0's, others unknown", () => {
    const pid = 3676; // Test.x64.exe
    let checked = 0;
    for (const name of ["ntdll", "clr", "kernel32"]) {
      const load = imgs.find((i) => i.pid === pid && (i.op === 3 || i.op === 10) && shortName(i.file) === name)!;
      expect(load, name).toBeDefined();
      const expected = { kind: "native", name: `${name}!?`, module: name, method: "?" };
      expect(map.resolve(pid, load.base, load.ts)).toMatchObject(expected);
      expect(map.resolve(pid, load.base + load.size / 2n, load.ts + 1000n)).toMatchObject(expected);
      expect(map.resolve(pid, load.base + load.size - 1n, load.ts)).toMatchObject(expected);
      expect(map.resolve(pid, load.base + load.size, load.ts).name).not.toBe(expected.name);
      checked++;
    }
    expect(checked).toBe(3);

    const kernel = imgs.find((i) => i.pid === 0 && shortName(i.file) === "ntoskrnl")!;
    expect(kernel.base >= 0xffff000000000000n).toBe(true);
    expect(map.resolve(pid, kernel.base + 0x100n, kernel.ts)).toMatchObject({ kind: "native", name: "ntoskrnl!?" });

    const ts = imgs[0].ts;
    expect(map.resolve(pid, 0x10n, ts)).toEqual({ kind: "unknown", name: "?!?", module: "?", method: "?", path: "" });
    expect(map.resolve(999999, 0x7f95eb10090n, ts).name).toBe("?!?");
    expect(SymbolMap.fromTrace(t, { showUnknownAddresses: true }).resolve(pid, 0x10n, ts).name).toBe("?!0x10");
  });

  it.skipIf(!HAVE_CORPUS)(
    "fed every row of the trace one at a time (add), or its rows from the typed .NET tables (addRows, names kept as a stream's are), it answers as built from the trace",
    () => {
      const incremental = new SymbolMap();
      for (const row of t.query({ order: "time" })) incremental.add(row);
      // (a map not made from the trace keeps each method's name strings, here from the typed tables' references)
      const typed = new SymbolMap();
      typed.addRows(t.events, t.events.timeOrderOf(SymbolMap.rowsOf(t)), t.tables);
      const probes = [...methods(t, RUNTIME, 143, true), ...methods(t, RUNDOWN, 144, false).filter((_, i) => i % 50 === 0)];
      expect(probes.length).toBeGreaterThan(100);
      let named = 0;
      for (const m of probes) {
        for (const a of [m.start, m.start + m.size / 2n, m.start + m.size]) {
          const want = map.resolve(m.pid, a, m.ts);
          if (want.kind === "managed") named++;
          expect(incremental.resolve(m.pid, a, m.ts)).toEqual(want);
          expect(typed.resolve(m.pid, a, m.ts)).toEqual(want);
        }
      }
      expect(named).toBeGreaterThan(probes.length);
      for (const i of imgs.filter((_, k) => k % 40 === 0)) {
        expect(incremental.resolve(i.pid, i.base + 1n, i.ts)).toEqual(map.resolve(i.pid, i.base + 1n, i.ts));
        expect(typed.resolve(i.pid, i.base + 1n, i.ts)).toEqual(map.resolve(i.pid, i.base + 1n, i.ts));
      }
    },
  );
});

// ---- synthetic trace ----

const RUNTIME_GUID = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4";
const RUNDOWN_GUID = "a669021c-c450-4609-a035-5af59af4df18";
const PID = 1;

function methodPayload(moduleId: bigint, start: bigint, size: number, flags: number, ns: string, name: string, sig: string): Uint8Array {
  return new PayloadBuilder()
    .u64(start ^ 0x5a5an)
    .u64(moduleId)
    .u64(start)
    .u32(size)
    .u32(0x06000001)
    .u32(flags)
    .utf16z(ns)
    .utf16z(name)
    .utf16z(sig)
    .u16(9)
    .build();
}

function modulePayload(moduleId: bigint, il: string, native = ""): Uint8Array {
  return new PayloadBuilder()
    .u64(moduleId)
    .u64(moduleId + 1n)
    .u32(8)
    .u32(0)
    .utf16z(il)
    .utf16z(native)
    .u16(9)
    .build();
}

function imagePayload(base: bigint, size: bigint, pid: number, file: string): Uint8Array {
  return new PayloadBuilder().u64(base).u64(size).u32(pid).u32(0).u32(0).u32(0).u64(base).zeros(16).utf16z(file).build();
}

interface Synthetic {
  trace: Trace;
  at: Record<string, bigint>;
}

async function synthetic(): Promise<Synthetic> {
  const w = new EtlWriter({});
  const at: Record<string, bigint> = {};
  let ts = 3_000_000n;
  const clr = (label: string, provider: string, id: number, payload: Uint8Array) => {
    at[label] = ts += 1000n;
    w.event(0, { headerType: 0x13, provider, id, version: 1, level: 4, opcode: 0, task: 0, keywords: 1n, pid: PID, tid: 2, ts, payload });
  };
  const image = (label: string, hookId: number, pid: number, base: bigint, size: bigint, file: string) => {
    at[label] = ts += 1000n;
    w.system(0, { headerType: 0x02, hookId, version: 3, pid, tid: 2, ts, payload: imagePayload(base, size, pid, file) });
  };
  const A = 0x7ff000001000n,
    B = 0x7ff000002000n,
    C = 0x7ff000003000n,
    NI = 0x7ff100000000n;

  image("ntoskrnl", 0x1403, 0, 0xfffff80000000000n, 0x800000n, "\\SystemRoot\\system32\\ntoskrnl.exe");
  image("ni", 0x1403, PID, NI, 0x100000n, "\\Device\\HarddiskVolume2\\Windows\\assembly\\NativeImages_v4\\MyApp.ni.dll");
  clr("module", RUNTIME_GUID, 152, modulePayload(0x100n, "C:\\App\\MyApp.dll"));
  image("fooLoad", 0x030a, PID, 0x7ff200000000n, 0x10000n, "\\Device\\HarddiskVolume2\\App\\Foo.DLL");
  clr("load1", RUNTIME_GUID, 143, methodPayload(0x100n, A, 0x80, 8, "NS.Worker", "First", "void  (int32)"));
  clr("unload1", RUNTIME_GUID, 144, methodPayload(0x100n, A, 0x80, 8, "NS.Worker", "First", "void  (int32)"));
  clr("load2", RUNTIME_GUID, 143, methodPayload(0x100n, A, 0x40, 8, "NS.Worker", "Second", "int32  ()"));
  image("fooUnload", 0x1402, PID, 0x7ff200000000n, 0x10000n, "\\Device\\HarddiskVolume2\\App\\Foo.DLL");
  // end-of-trace rundown: the native image first (its DCEnd names what is still unresolved in it), then the runtime's
  image("niEnd", 0x1404, PID, NI, 0x100000n, "\\Device\\HarddiskVolume2\\Windows\\assembly\\NativeImages_v4\\MyApp.ni.dll");
  clr("stop2", RUNDOWN_GUID, 144, methodPayload(0x100n, A, 0x40, 8, "NS.Worker", "Second", "int32  ()"));
  clr("stopNgen", RUNDOWN_GUID, 144, methodPayload(0x100n, NI + 0x1000n, 0x20, 0, "NS.Worker", "Precompiled", "void  ()"));
  clr("stop3", RUNDOWN_GUID, 144, methodPayload(0x200n, B, 0x10, 8, "NS.Lib", "Third", "void  ()"));
  clr("stop4", RUNDOWN_GUID, 144, methodPayload(0x300n, C, 0x10, 8, "NS.Gen", "Fourth", "void  ()"));
  clr("moduleStop", RUNDOWN_GUID, 154, modulePayload(0x200n, "C:\\App\\Lib.Core.dll"));
  return { trace: await openTrace(w.finish()), at };
}

describe("symbols on a synthetic trace", () => {
  it("one address, two methods over time; images by load and unload; late and missing module names", async () => {
    const { trace, at } = await synthetic();
    expect(trace.warnings).toEqual([]);
    const A = 0x7ff000001000n;
    const first = "myapp!NS.Worker.First(int32)",
      second = "myapp!NS.Worker.Second()";
    for (const map of [
      SymbolMap.fromTrace(trace),
      (() => {
        const m = new SymbolMap();
        for (const row of trace.query({ order: "time" })) m.add(row);
        return m;
      })(),
    ]) {
      const r = (a: bigint, ts: bigint) => map.resolve(PID, a, ts).name;
      // each method in its time: the first until its unload, the second from its load to the rundown
      expect(map.resolve(PID, A, at.load1)).toEqual({
        kind: "managed",
        name: first,
        module: "myapp",
        method: "NS.Worker.First(int32)",
        path: "c:\\app\\myapp.dll",
      });
      expect(r(A + 0x7fn, at.load1 + 10n)).toBe(first);
      expect(r(A + 0x80n, at.load1)).toBe("?!?");
      expect(r(A, at.unload1)).toBe(first);
      expect(r(A, at.load2)).toBe(second);
      expect(r(A + 0x3fn, at.stop2)).toBe(second);
      // TraceLog names an address by the next method event covering it: seen between the unload and the
      // new load, the rundown of the second method names it
      expect(r(A + 0x10n, at.unload1 + 1n)).toBe(second);
      // past the second method's end, nothing covers it after the unload; at the end of the trace every
      // jitted load is offered the still-unresolved addresses, the first covering one wins
      expect(r(A + 0x50n, at.load2)).toBe(first);

      // images: a loaded DLL until its unload, then nothing; the kernel's images answer for kernel addresses
      expect(map.resolve(PID, 0x7ff200000010n, at.fooLoad)).toMatchObject({
        kind: "native",
        name: "foo!?",
        module: "foo",
        path: "\\device\\harddiskvolume2\\app\\foo.dll",
      });
      expect(r(0x7ff200000010n, at.fooUnload)).toBe("foo!?");
      expect(r(0x7ff200000010n, at.fooUnload + 1n)).toBe("?!?");
      expect(r(0xfffff80000123456n, at.load1)).toBe("ntoskrnl!?");
      expect(r(0xfffff80000123456n - 0x800000n, at.load1)).toBe("?!?");
      // precompiled code in a native image unloaded (DCEnd) before the method's rundown: the image's module, the method's name
      expect(map.resolve(PID, 0x7ff100001010n, at.load1)).toMatchObject({ kind: "managed", name: "myapp.ni!NS.Worker.Precompiled()" });
      expect(r(0x7ff100002000n, at.load1)).toBe("myapp.ni!?");
      // after the image's DCEnd only the end-of-trace pass names it (the image was never unloaded): still the image
      expect(r(0x7ff100002000n, at.niEnd + 1n)).toBe("myapp.ni!?");
      // a method event before its module's: the module is named later, as logged (case kept); never named: ManagedModule
      expect(map.resolve(PID, 0x7ff000002008n, at.load1)).toMatchObject({ name: "Lib.Core!NS.Lib.Third()", path: "C:\\App\\Lib.Core.dll" });
      expect(map.resolve(PID, 0x7ff000003000n, at.load1)).toMatchObject({ kind: "managed", name: "ManagedModule!NS.Gen.Fourth()", path: "ManagedModule" });
      // another process sees none of it
      expect(map.resolve(PID + 1, A, at.load1).name).toBe("?!?");
    }
  });

  it("32-bit traces: kernel addresses from 0x80000000", () => {
    const map = new SymbolMap({ pointerSize: 4 });
    expect(map.isKernelAddress(0x7fffffffn)).toBe(false);
    expect(map.isKernelAddress(0x80000000n)).toBe(true);
    expect(new SymbolMap().isKernelAddress(0xfffeffffffffffffn)).toBe(false);
    expect(new SymbolMap().isKernelAddress(0xffff000000000000n)).toBe(true);
  });
});
