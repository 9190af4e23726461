// A synthetic .NET runtime trace with a realistic event mix, deterministic for a seed. Payloads follow
// the runtime's manifest layouts (fields packed, win:Pointer sized by the record's flavour).

import { EtlWriter, PayloadBuilder } from "./etl-writer.js";
import { mulberry32 } from "./random.js";

export const CLR_PROVIDER = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4";
const PROCESS_GROUP_GUID_HOOK = 0x0300; // Process group; the opcode is the low byte
const THREAD_HOOK = 0x0500;

export interface GenerateOptions {
  /** Approximate file size to reach (before compression). */
  targetBytes: number;
  compress?: boolean;
  pointerSize?: 4 | 8;
  seed?: number;
  processors?: number;
  bufferSize?: number;
  /** Stream buffers out instead of returning the file; see EtlWriter's onBuffer. */
  onBuffer?: (bytes: Uint8Array) => void;
  /** Called once the header buffer's size is known, before any buffer is emitted. */
  onStart?: (headerBufferSize: number) => void;
}


const NAMESPACES = ["System", "System.Collections.Generic", "System.Linq", "System.Text.Json", "Contoso.Orders",
  "Contoso.Orders.Pricing", "Microsoft.Extensions.Logging", "System.Threading.Tasks", "System.IO", "System.Net.Http"];
const TYPES = ["List`1", "Dictionary`2", "StringBuilder", "OrderService", "PriceCalculator", "JsonSerializer",
  "Task`1", "FileStream", "HttpClient", "Enumerable", "LoggerFactory", "ConcurrentQueue`1"];
const METHODS = ["Add", "TryGetValue", "ToString", "Process", "Calculate", "Serialize", "Deserialize", "MoveNext",
  "ReadAsync", "SendAsync", "Where", "Select", "Log", "Enqueue", "GetHashCode", "Equals", ".ctor"];
const SIGNATURES = ["instance void  (class System.String)", "instance bool  (!0,!1&)", "instance class System.String  ()",
  "void  (int32,float64)", "instance class System.Threading.Tasks.Task`1<int32>  (unsigned int8[],int32,int32)",
  "class System.Collections.Generic.IEnumerable`1<!!0>  (class System.Collections.Generic.IEnumerable`1<!!0>,class System.Func`2<!!0,bool>)"];
const ALLOC_TYPES = ["System.String", "System.Byte[]", "System.Object[]", "Contoso.Orders.Order",
  "System.Collections.Generic.List`1[Contoso.Orders.OrderLine]", "System.Char[]", "System.Text.StringBuilder"];
const EXCEPTIONS: [string, string][] = [["System.InvalidOperationException", "Sequence contains no elements"],
  ["System.ArgumentNullException", "Value cannot be null. (Parameter 'key')"],
  ["System.IO.FileNotFoundException", "Could not find file 'C:\\data\\orders.json'."],
  ["System.Collections.Generic.KeyNotFoundException", "The given key was not present in the dictionary."]];
const ASSEMBLIES = ["System.Private.CoreLib", "System.Runtime", "System.Collections", "System.Linq", "System.Text.Json",
  "Contoso.Orders", "Microsoft.Extensions.Logging", "System.Net.Http", "System.Threading"];

/** Generates a trace; see GenerateOptions. Returns the file (with onBuffer: its header buffer). */
export function generateTrace(opts: GenerateOptions): Uint8Array {
  const rand = mulberry32(opts.seed ?? 1);
  const P: 4 | 8 = opts.pointerSize ?? 8;
  const processors = opts.processors ?? 4;
  const w = new EtlWriter({
    compress: opts.compress,
    pointerSize: P,
    numberOfProcessors: processors,
    bufferSize: opts.bufferSize ?? 65536,
    loggerName: "etw-wasm-generator",
    logFileName: "C:\\traces\\generated.etl",
    onBuffer: opts.onBuffer,
  });
  opts.onStart?.(w.headerBufferSize);
  const headerType = P === 4 ? 0x12 : 0x13;
  const pick = <T>(a: readonly T[]) => a[Math.floor(rand() * a.length)];
  const pid = 4242;
  const threads = Array.from({ length: 8 }, (_, i) => 5000 + i * 4);
  let ts = w.anchor + 1000n;
  let bytes = 0;
  const tick = () => (ts += BigInt(1 + Math.floor(rand() * 400)));
  const clr = (id: number, version: number, task: number, opcode: number, level: number, keywords: bigint, payload: PayloadBuilder, tid = pick(threads)) => {
    const p = payload.build();
    w.event(Math.floor(rand() * processors), {
      headerType, provider: CLR_PROVIDER, id, version, level, opcode, task, keywords, pid, tid, ts: tick(), payload: p,
    });
    bytes += 0x50 + p.length + 8;
  };

  // Process and thread starts (kernel), then the runtime's start.
  const proc = new PayloadBuilder().ptr(P, 0xffffa00012345000n).u32(pid).u32(1200).u32(1).i32(0).ptr(P, 0x1aa000n)
    .u32(0).u32(0).ansiz("Contoso.Orders.exe").utf16z("\"C:\\app\\Contoso.Orders.exe\" --port 8080").utf16z("").utf16z("");
  w.system(0, { headerType: P === 4 ? 0x01 : 0x02, hookId: PROCESS_GROUP_GUID_HOOK | 1, version: 4, pid: 1200, tid: 1204, ts: tick(), payload: proc.build() });
  for (const tid of threads) {
    const t = new PayloadBuilder().u32(pid).u32(tid);
    for (let k = 0; k < 7; k++) t.ptr(P, 0x7ff000000000n + BigInt(tid * 4096 + k));
    t.u32(0).u8(8).u8(5).u8(2).u8(0);
    w.system(Math.floor(rand() * processors), { headerType: P === 4 ? 0x01 : 0x02, hookId: THREAD_HOOK | 1, version: 3, pid, tid, ts: tick(), payload: t.build() });
  }
  clr(187, 0, 19, 1, 4, 0n, new PayloadBuilder().u16(8).u16(2).u16(8).u16(0).u16(24).u16(0).u16(8).u16(0).u16(24).u16(0)
    .u32(0x1004).u8(0).utf16z("\"C:\\app\\Contoso.Orders.exe\" --port 8080").guid("00000000-0000-0000-0000-000000000000")
    .utf16z("C:\\Program Files\\dotnet\\shared\\Microsoft.NETCore.App\\8.0.0\\coreclr.dll"));
  ASSEMBLIES.forEach((name, k) => {
    const assemblyId = 0x7ffd0000n + BigInt(k) * 0x1000n;
    clr(154, 1, 10, 37, 4, 0x8n, new PayloadBuilder().u64(assemblyId).u64(0x1000n).u64(0n).u32(0)
      .utf16z(`${name}, Version=8.0.0.0, Culture=neutral, PublicKeyToken=b03f5f7f11d50a3a`).u16(8));
    clr(152, 2, 10, 33, 4, 0x20000008n, new PayloadBuilder().u64(assemblyId + 0x800n).u64(assemblyId).u32(8).u32(0)
      .utf16z(`C:\\app\\${name}.dll`).utf16z("").u16(8).guid("5f1c7a3e-2b44-4d6a-9a1e-0c8b7d6e5f40").u32(1)
      .utf16z(`D:\\build\\${name}.pdb`).guid("00000000-0000-0000-0000-000000000000").u32(0).utf16z(""));
  });

  let gc = 0;
  let methods = 0;
  while (bytes < opts.targetBytes) {
    // A steady-state service: thread-pool work items, lock contention, allocation ticks and GCs
    // dominate; methods still get jitted now and then.
    const r = rand();
    if (r < 0.3) {
      const work = 0x1c000200000n + BigInt(Math.floor(rand() * 1e6) * 0x40);
      clr(61, 0, 23, 11, 5, 0x10000n, new PayloadBuilder().ptr(P, work).u16(8));
      clr(62, 0, 23, 12, 5, 0x10000n, new PayloadBuilder().ptr(P, work).u16(8));
    } else if (r < 0.38) {
      // JIT: method load with namespace, name and signature
      const ns = pick(NAMESPACES);
      clr(143, 2, 9, 37, 4, 0x30n, new PayloadBuilder().u64(0x7ffe00000000n + BigInt(methods * 64))
        .u64(0x7ffd0800n).u64(0x7ff800000000n + BigInt(methods * 256)).u32(64 + Math.floor(rand() * 2000))
        .u32(0x06000000 + (methods & 0xffff)).u32(rand() < 0.1 ? 1 : 0).utf16z(`${ns}.${pick(TYPES)}`)
        .utf16z(pick(METHODS)).utf16z(pick(SIGNATURES)).u16(8).u64(0n));
      methods++;
    } else if (r < 0.6) {
      const amount = 100000 + Math.floor(rand() * 5000);
      clr(10, 4, 1, 11, 5, 0x1n, new PayloadBuilder().u32(amount).u32(rand() < 0.9 ? 0 : 1).u16(8).u64(amount)
        .ptr(P, 0x7ffd12340000n + BigInt(Math.floor(rand() * 64) * 0x40)).utf16z(pick(ALLOC_TYPES))
        .u32(Math.floor(rand() * 4)).ptr(P, 0x1c000000000n + BigInt(Math.floor(rand() * 1e9))).u64(24 + Math.floor(rand() * 2000)));
    } else if (r < 0.66) {
      // a whole GC: suspend, start, end, heap stats, restart
      gc++;
      const gen = rand() < 0.7 ? 0 : rand() < 0.8 ? 1 : 2;
      const gcThread = threads[0];
      clr(35, 0, 1, 35, 4, 0x1n, new PayloadBuilder().u32(0).u16(8), gcThread);
      clr(9, 1, 1, 10, 4, 0x1n, new PayloadBuilder().u32(1).u32(gc).u16(8), gcThread);
      clr(8, 1, 1, 137, 4, 0x1n, new PayloadBuilder().u16(8), gcThread);
      clr(1, 2, 1, 1, 4, 0x1n, new PayloadBuilder().u32(gc).u32(gen).u32(0).u32(rand() < 0.9 ? 0 : 1).u16(8).u64(0n), gcThread);
      clr(2, 1, 1, 2, 4, 0x1n, new PayloadBuilder().u32(gc).u32(gen).u16(8), gcThread);
      const hs = new PayloadBuilder();
      for (let g = 0; g < 4; g++) hs.u64(1_000_000 * (g + 1) + Math.floor(rand() * 1e6)).u64(Math.floor(rand() * 5e5));
      hs.u64(0).u64(0).u32(Math.floor(rand() * 20)).u32(3).u32(200 + Math.floor(rand() * 50)).u16(8).u64(4096).u64(0);
      clr(4, 2, 1, 133, 4, 0x1n, hs, gcThread);
      clr(7, 1, 1, 136, 4, 0x1n, new PayloadBuilder().u16(8), gcThread);
      clr(3, 1, 1, 132, 4, 0x1n, new PayloadBuilder().u16(8), gcThread);
    } else if (r < 0.68) {
      const [type, message] = pick(EXCEPTIONS);
      clr(80, 1, 7, 1, 2, 0x200008000n, new PayloadBuilder().utf16z(type).utf16z(message)
        .ptr(P, 0x7ff812340000n + BigInt(Math.floor(rand() * 1e6))).u32(0x80131509).u16(16).u16(8));
    } else if (r < 0.96) {
      const lock = 0x1c000100000n + BigInt(Math.floor(rand() * 16) * 0x40);
      const tid = pick(threads);
      clr(81, 2, 8, 1, 4, 0x4000n, new PayloadBuilder().u8(0).u16(8).ptr(P, lock).ptr(P, lock + 8n).u64(pick(threads)), tid);
      clr(91, 1, 8, 2, 4, 0x4000n, new PayloadBuilder().u8(0).u16(8).f64(1000 + rand() * 50000), tid);
    } else {
      clr(50, 0, 16, 1, 4, 0x10000n, new PayloadBuilder().u32(1 + Math.floor(rand() * 8)).u32(0).u16(8));
    }
  }
  return w.finish();
}
