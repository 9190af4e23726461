// The one place that instantiates the WebAssembly core. The compiled module is cached; every trace
// gets its own instance, so its memory is released with the trace.

import { instantiate, instantiateSync } from "@assemblyscript/loader";
import { MEMORY_MAX_PAGES, MEMORY_MIN_PAGES } from "../../../assembly/codes.js";

// The interface both cores implement is declared with the TypeScript core; a type-only import
// keeps that core out of this module's code.
import type { CoreExports } from "../../core/index.js";
export type { CoreExports };

export type WasmSource = WebAssembly.Module | ArrayBuffer | Uint8Array | URL | string;

/** Produces the compiled core; each entry point (Node, browser, inline) installs its own. */
export type ModuleProvider = () => Promise<WebAssembly.Module>;
/** Fetches the bytes behind a URL the platform's own way (Node: file: URLs from disk). */
export type UrlLoader = (url: URL) => Promise<BufferSource>;

const DEFAULT_URL = new URL("../../../etw.wasm", import.meta.url);
let urlLoader: UrlLoader | undefined;
let provider: ModuleProvider = () => compileUrl(DEFAULT_URL);
let compiled: Promise<WebAssembly.Module> | undefined;
/** The default core's bytes, where they can be had (for its shared-memory form); none for a provider without them. */
let coreBytes: (() => Promise<BufferSource>) | undefined = () => {
  if (!urlLoader) throw new Error("etw-wasm: no URL loader");
  return urlLoader(DEFAULT_URL);
};
let sharedCompiled: Promise<WebAssembly.Module | undefined> | undefined;

/** Sets where the default core comes from (entry points call this once), and its bytes where they can be had. */
export function setModuleProvider(p: ModuleProvider, bytes?: () => Promise<BufferSource>): void {
  provider = p;
  coreBytes = bytes;
  compiled = sharedCompiled = undefined;
}

let syncInstances = false;

/**
 * Has the compiled core instantiated synchronously (Node's entry points call this): the async path asks
 * whether its source is a fetch Response, and Node loads its whole fetch implementation (about 40 ms of a
 * process's first decode) to answer. Browsers keep the async path: Chromium refuses synchronous instances
 * of large modules on its main thread.
 */
export function setSyncInstances(on: boolean): void {
  syncInstances = on;
}

/** Sets how URLs are read when fetch cannot (entry points call this once). */
export function setUrlLoader(loader: UrlLoader): void {
  urlLoader = loader;
}

/** Compiles from a URL, streaming where the platform can. */
async function compileUrl(url: URL): Promise<WebAssembly.Module> {
  // fetch cannot read files: Node's entry point installs a loader for file: URLs.
  if (url.protocol === "file:") {
    if (!urlLoader) throw new Error(`etw-wasm: cannot read ${url} here; in Node import "etw-wasm" or "etw-wasm/node"`);
    return WebAssembly.compile(await urlLoader(url));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`etw-wasm: cannot load ${url}: HTTP ${response.status}`);
  if (typeof WebAssembly.compileStreaming === "function" && response.headers.get("content-type")?.startsWith("application/wasm")) {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

async function compileSource(source: WasmSource): Promise<WebAssembly.Module> {
  const s = source as unknown;
  if (s instanceof WebAssembly.Module) return s;
  if (s instanceof ArrayBuffer || s instanceof Uint8Array) return WebAssembly.compile(s as BufferSource);
  return compileUrl(typeof s === "string" ? new URL(s, DEFAULT_URL) : (s as URL));
}

/**
 * The core's bytes with its imported memory declared shared (the limits' flag byte gets bit 1): the
 * same code, instantiable on a SharedArrayBuffer-backed memory, so that a decode worker's windows can
 * be read by the calling thread where they are. Throws on bytes that are not such a core.
 */
function sharedMemoryImport(wasm: Uint8Array): Uint8Array {
  const b = wasm.slice();
  let p = 8;
  const leb = (): number => {
    let r = 0,
      shift = 0,
      x: number;
    do {
      if (p >= b.length) throw new Error("etw-wasm: truncated core");
      x = b[p++];
      r += (x & 0x7f) * 2 ** shift;
      shift += 7;
    } while (x & 0x80);
    return r;
  };
  while (p < b.length) {
    const id = b[p++];
    const size = leb();
    const end = p + size;
    if (id === 2) {
      for (let n = leb(), i = 0; i < n; i++) {
        for (let k = 0; k < 2; k++) {
          const length = leb();
          p += length; // module and field names
        }
        const kind = b[p++];
        if (kind === 0)
          leb(); // function: type index
        else if (kind === 1) {
          // table: type, limits
          p++;
          const flags = b[p++];
          leb();
          if (flags & 1) leb();
        } else if (kind === 2) {
          // memory: limits (a shared memory needs a maximum)
          if (!(b[p] & 1)) throw new Error("etw-wasm: the core's memory has no maximum");
          b[p] |= 2;
          return b;
        } else if (kind === 3)
          p += 2; // global: type, mutability
        else throw new Error(`etw-wasm: unknown import kind ${kind}`);
      }
    }
    p = end;
  }
  throw new Error("etw-wasm: the core imports no memory");
}

/**
 * The default core compiled for a shared memory (see sharedMemoryImport), once; undefined where its
 * bytes cannot be had or the platform has no shared memory.
 */
export function sharedMemoryCore(): Promise<WebAssembly.Module | undefined> {
  return (sharedCompiled ??= (async () => {
    if (!coreBytes || typeof SharedArrayBuffer !== "function") return undefined;
    const bytes = await coreBytes();
    const view =
      bytes instanceof Uint8Array
        ? bytes
        : ArrayBuffer.isView(bytes)
          ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
          : new Uint8Array(bytes);
    return WebAssembly.compile(sharedMemoryImport(view) as BufferSource);
  })().catch(() => undefined));
}

// Memories of disposed traces, kept to spare the next trace the cost of faulting in fresh pages.
const pool: WebAssembly.Memory[] = [];
const POOL_SIZE = 2;
const POOL_MAX_BYTES = 1 << 30;

/** Gives a disposed trace's memory (one of MEMORY_MAX_PAGES maximum) back for reuse by the next instance. */
export function recycleMemory(memory: WebAssembly.Memory): void {
  if (pool.length < POOL_SIZE && memory.buffer.byteLength <= POOL_MAX_BYTES) pool.push(memory);
}

/** The compiled core: from `source`, or the default one (compiled once). */
export function compiledCore(source?: WasmSource): Promise<WebAssembly.Module> {
  return source !== undefined ? compileSource(source) : (compiled ??= provider());
}

/**
 * Compiles (once) and instantiates the core. Without `maximumPages` the memory may grow to
 * MEMORY_MAX_PAGES (4 GiB) and comes from the pool when one is free; with it, a fresh memory is
 * created with that maximum (pass the same number to the core's init, whose allocator stops short
 * of it), and `recycleMemory` must not be given it. `given`: the memory to use (a decode worker's
 * shared one, kept by its owner).
 */
export async function instantiateCore(source?: WasmSource, maximumPages?: number, given?: WebAssembly.Memory): Promise<CoreExports> {
  const module = await compiledCore(source);
  // The core's heap is set up afresh by every instantiation, whatever the memory held before.
  const limited = maximumPages !== undefined && maximumPages > 0 && maximumPages < MEMORY_MAX_PAGES;
  const memory =
    given ??
    (limited
      ? new WebAssembly.Memory({ initial: MEMORY_MIN_PAGES, maximum: maximumPages })
      : (pool.pop() ?? new WebAssembly.Memory({ initial: MEMORY_MIN_PAGES, maximum: MEMORY_MAX_PAGES })));
  const imports = { env: { memory } };
  const { exports } = syncInstances ? instantiateSync<Record<string, unknown>>(module, imports) : await instantiate<Record<string, unknown>>(module, imports);
  return exports as unknown as CoreExports;
}
