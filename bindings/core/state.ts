// Per-trace state of the TypeScript core: the shared modules' struct (core-state.ts, generated from
// assembly/) and the memory's views and allocator. One object per trace, always of this one shape, so
// the module functions that take it stay monomorphic and keep their optimized code from one trace to
// the next.

import { SharedState } from "./generated/core-state.js";
import { HEAP_BASE, INITIAL_MEMORY, MEMORY_LIMIT, setBuffer } from "./memory.js";

/** The shared modules' state and the memory's views. */
export class CoreState extends SharedState {
  // ---- memory (the WebAssembly memory and runtime heap) ----
  u8 = new Uint8Array(0);
  u16 = new Uint16Array(0);
  u32 = new Uint32Array(0);
  f64 = new Float64Array(0);
  dv = new DataView(new ArrayBuffer(0));
  readonly memory: { buffer: ArrayBuffer } = { buffer: new ArrayBuffer(0) };
  top = HEAP_BASE; // bump pointer, 8-aligned
  /** Highest address ever handed out (memory above it was not written by this core; it may hold an earlier decode's bytes). */
  highWater = HEAP_BASE;
  /** The most the memory may grow to, in bytes (a decode's memory limit; memory.ts setMemoryPages). */
  memoryLimit = MEMORY_LIMIT;
  /** Addresses of freed blocks below the top (memory.ts). */
  freeBlocks: number[] = [];
  /**
   * Where the memory takes a larger buffer when it grows: an ArrayBuffer of at least `bytes`, whose
   * bytes need not be zero (the core writes what it reads, as the WebAssembly core does on a memory
   * recycled from an earlier decode). Default: a fresh one.
   */
  takeBuffer: (bytes: number) => ArrayBuffer = (bytes) => new ArrayBuffer(bytes);

  constructor() {
    super();
    setBuffer(this, new ArrayBuffer(INITIAL_MEMORY));
  }
}
