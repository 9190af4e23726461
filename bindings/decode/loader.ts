// The one place that instantiates the WebAssembly core. The compiled module is cached; every trace
// gets its own instance, so its memory is released with the trace.

import { instantiate } from "@assemblyscript/loader";
import { MEMORY_MAX_PAGES, MEMORY_MIN_PAGES } from "../../assembly/codes.js";

// The interface both cores implement is declared with the TypeScript core; a type-only import
// keeps that core out of this module's code.
import type { CoreExports } from "../core/index.js";
export type { CoreExports };

export type WasmSource = WebAssembly.Module | ArrayBuffer | Uint8Array | URL | string;

/** Produces the compiled core; each entry point (Node, browser, inline) installs its own. */
export type ModuleProvider = () => Promise<WebAssembly.Module>;
/** Fetches the bytes behind a URL the platform's own way (Node: file: URLs from disk). */
export type UrlLoader = (url: URL) => Promise<BufferSource>;

const DEFAULT_URL = new URL("../../etw.wasm", import.meta.url);
let urlLoader: UrlLoader | undefined;
let provider: ModuleProvider = () => compileUrl(DEFAULT_URL);
let compiled: Promise<WebAssembly.Module> | undefined;

/** Sets where the default core comes from (entry points call this once). */
export function setModuleProvider(p: ModuleProvider): void {
  provider = p;
  compiled = undefined;
}

/** Sets how URLs are read when fetch cannot (entry points call this once). */
export function setUrlLoader(loader: UrlLoader): void {
  urlLoader = loader;
}

/** Compiles from a URL, streaming where the platform can. */
export async function compileUrl(url: URL): Promise<WebAssembly.Module> {
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
 * of it), and `recycleMemory` must not be given it.
 */
export async function instantiateCore(source?: WasmSource, maximumPages?: number): Promise<CoreExports> {
  const module = await compiledCore(source);
  // The core's heap is set up afresh by every instantiation, whatever the memory held before.
  const limited = maximumPages !== undefined && maximumPages > 0 && maximumPages < MEMORY_MAX_PAGES;
  const memory = limited ? new WebAssembly.Memory({ initial: MEMORY_MIN_PAGES, maximum: maximumPages })
    : pool.pop() ?? new WebAssembly.Memory({ initial: MEMORY_MIN_PAGES, maximum: MEMORY_MAX_PAGES });
  const { exports } = await instantiate<Record<string, unknown>>(module, { env: { memory } });
  return exports as unknown as CoreExports;
}
