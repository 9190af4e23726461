// The one place that instantiates the WebAssembly core. The compiled module is cached; every trace
// gets its own instance, so its memory is released with the trace.

import { instantiate } from "@assemblyscript/loader";

/** The decoder core's interface: the WebAssembly exports, or the pure TypeScript core. */
export interface CoreExports {
  /** Linear memory; `buffer` is replaced when it grows. */
  memory: { readonly buffer: ArrayBuffer };
  init(stagingBytes: number): void;
  stagingPtr(): number;
  stagingCap(): number;
  growStaging(cap: number, keep: number): void;
  consume(len: number, fileOffset: number, atEnd: number): number;
  wantBytes(): number;
  isDone(): number;
  fatalCode(): number;
  fatalOffset(): number;
  finish(): void;
  directory(): number;
  arenaBytes(): number;
  decompress(src: number, srcLen: number, dst: number, expected: number): number;
  decodeClr(program: number, typeStarts: number, nTypes: number, lookup: number, provClr: number, nProv: number, dir: number): number;
  alloc(size: number): number;
  free(ptr: number): void;
}

export type WasmSource = WebAssembly.Module | ArrayBuffer | Uint8Array | URL | string;

let compiled: Promise<WebAssembly.Module> | undefined;
let defaultSource: (() => Promise<ArrayBuffer | Uint8Array>) | undefined;

/** Lets a platform entry point say where the default `.wasm` comes from. */
export function setDefaultWasmSource(source: () => Promise<ArrayBuffer | Uint8Array>): void {
  defaultSource = source;
}

async function bytesOf(source: ArrayBuffer | Uint8Array | URL | string): Promise<BufferSource> {
  if (source instanceof ArrayBuffer || source instanceof Uint8Array) return source as BufferSource;
  const url = typeof source === "string" ? new URL(source, import.meta.url) : source;
  if (url.protocol === "file:") {
    const fs = await import(/* @vite-ignore */ "node:fs/promises");
    return (await fs.readFile(url)) as BufferSource;
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`etw-wasm: cannot load ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

async function defaultBytes(): Promise<BufferSource> {
  if (defaultSource) return (await defaultSource()) as BufferSource;
  return bytesOf(new URL("../etw.wasm", import.meta.url));
}

// Memories of disposed traces, kept to spare the next trace the cost of faulting in fresh pages.
const pool: WebAssembly.Memory[] = [];
const POOL_SIZE = 2;
const POOL_MAX_BYTES = 1 << 30;

/** Gives a disposed trace's memory back for reuse by the next instance. */
export function recycleMemory(memory: WebAssembly.Memory): void {
  if (pool.length < POOL_SIZE && memory.buffer.byteLength <= POOL_MAX_BYTES) pool.push(memory);
}

/** Compiles (once) and instantiates the core, on a pooled memory when one is free. */
export async function instantiateCore(source?: WasmSource): Promise<CoreExports> {
  let module: WebAssembly.Module;
  if (source instanceof WebAssembly.Module) module = source;
  else if (source !== undefined) module = await WebAssembly.compile(await bytesOf(source as ArrayBuffer | Uint8Array | URL | string));
  else {
    compiled ??= defaultBytes().then((b) => WebAssembly.compile(b));
    module = await compiled;
  }
  // The core's heap is set up afresh by every instantiation, whatever the memory held before.
  const memory = pool.pop() ?? new WebAssembly.Memory({ initial: 1, maximum: 65536 });
  const { exports } = await instantiate<Record<string, unknown>>(module, { env: { memory } });
  return exports as unknown as CoreExports;
}
