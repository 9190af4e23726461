// Reader of .NET EventPipe trace files: .netperf (format V3) and .nettrace (V4, V5, V6), written from the
// EventPipe format specification (nettrace-format.md; section numbers "§n" refer to it).
//
// readNettrace(bytes) walks the whole container once and returns the header facts, the events as
// struct-of-arrays typed arrays (offsets into `bytes`, no object per event), the metadata table, the
// interned/inline stacks, sequence points, the V6 thread and label-list tables, warnings and at most
// one fatal NettraceFormatError. It never throws for bad input: a truncated or corrupt file yields
// everything decoded before the fault plus `error` (with the byte offset); damage inside a block whose
// framing is intact yields a warning and decoding resumes at the next block. NettraceStreamReader
// (stream-reader.ts) reads a file as it arrives, in windows between sequence points (positions are then
// a window's; errors and warnings still give file offsets).
//
// Events are listed in file order (not the time order TraceEvent dispatches in, §13); payloads are not
// decoded. The rooms: reader-state.ts (the state and checked reads), framing.ts (the container and
// block dispatch), events.ts, metadata.ts, stacks.ts (with sequence points), v6-tables.ts. The records
// of V4+ Event and Metadata blocks are framed by a walker (walk.ts): the source both cores share,
// assembly/nettrace-events.ts, run by the TypeScript core (the default) or by the WebAssembly core
// (bindings/decode/eventpipe/engine.ts); events.ts does the lookups over its rows.

import {
  BLOCK_TRACE,
  BLOCK_EVENT,
  BLOCK_METADATA,
  BLOCK_SEQUENCE_POINT,
  BLOCK_STACK,
  BLOCK_THREAD,
  BLOCK_REMOVE_THREAD,
  BLOCK_LABEL_LIST,
  NE_INTERNAL,
  NettraceFormatError,
  type NettraceFile,
  type NettraceMetadata,
  type NettraceWindow,
} from "./format.js";
import type { NettraceWalker } from "./walk.js";
import { BlockColumns, EventColumns, LabelListColumns, SequencePointColumns, StackColumns } from "./columns.js";
import { ReaderState } from "./reader-state.js";
import { NEXT_END, readNext, readPrelude } from "./framing.js";

export type { NettraceWalker } from "./walk.js";
export * from "./format.js";
export { NEXT_END, NEXT_NEED } from "./framing.js";

/** The reader of one file: its state (reader-state.ts), read an object or block at a time. */
export class Reader extends ReaderState {
  /** The whole input, object after object. */
  run(): void {
    this.start();
    while (this.next() !== NEXT_END) {
      // (every object is read as it comes)
    }
  }

  /** Reads the stream's prelude (magic, stream header); false when a stream has not given enough bytes for it yet. */
  start(): boolean {
    return readPrelude(this);
  }

  /**
   * Reads the next object (V3–V5) or block (V6): its BLOCK_* kind; NEXT_END after the end of the
   * stream; NEXT_NEED, reading nothing, when a stream has not given all of its bytes yet.
   */
  next(): number {
    return readNext(this);
  }

  /**
   * What has been read since the last window (events, stacks, blocks, sequence points, label lists,
   * warnings), its offsets into `bytes`; the next window starts empty. Metadata and threads stay.
   */
  takeWindow(error: NettraceFormatError | null): NettraceFile {
    const f = this.result(error);
    this.windowFrom = this.base + this.pos;
    // (stack and label-list rows are a window's: ids left from a sequence point whose block was damaged
    // before it cleared them would name rows of the window before; no lookups yet, nothing to clear there)
    if (this.tables) this.clearStacks();
    else this.stackById.clear();
    this.labelListByIndex.clear();
    if (this.reuseColumns) {
      this.events.clear();
      this.stacks.clear();
      this.blocks.clear();
      this.sequencePoints.clear();
      this.labelLists.clear();
    } else {
      this.events = new EventColumns();
      this.stacks = new StackColumns();
      this.blocks = new BlockColumns();
      this.sequencePoints = new SequencePointColumns();
      this.labelLists = new LabelListColumns();
    }
    this.warnings = [];
    this.eventsLost = 0;
    return f;
  }

  result(error: NettraceFormatError | null): NettraceFile {
    const h = this.header;
    if (h.formatVersion === 4 && this.sawV5Tags) h.formatVersion = 5;
    const b = this.blocks;
    const counts = { trace: 0, event: 0, metadata: 0, stack: 0, sequencePoint: 0, thread: 0, removeThread: 0, labelList: 0, unknown: 0 };
    for (let i = 0; i < b.length; i++) {
      switch (b.kind[i]) {
        case BLOCK_TRACE:
          counts.trace++;
          break;
        case BLOCK_EVENT:
          counts.event++;
          break;
        case BLOCK_METADATA:
          counts.metadata++;
          break;
        case BLOCK_STACK:
          counts.stack++;
          break;
        case BLOCK_SEQUENCE_POINT:
          counts.sequencePoint++;
          break;
        case BLOCK_THREAD:
          counts.thread++;
          break;
        case BLOCK_REMOVE_THREAD:
          counts.removeThread++;
          break;
        case BLOCK_LABEL_LIST:
          counts.labelList++;
          break;
        default:
          counts.unknown++;
      }
    }
    return {
      bytes: this.bytes,
      header: h,
      events: this.events.done(),
      metadata: this.metadata,
      stacks: this.stacks.done(),
      blocks: b.done(),
      blockCounts: counts,
      sequencePoints: this.sequencePoints.done(),
      threads: this.threads,
      removedThreads: this.removedThreads,
      labelLists: this.labelLists.done(),
      queueCount: this.queueOf.size,
      eventsLost: this.eventsLost,
      complete: this.complete,
      warnings: this.warnings,
      warningCount: this.warningCount,
      error,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Entry points

export interface ReadNettraceOptions {
  /**
   * Frames the records of the V4+ Event and Metadata blocks: the TypeScript core's walker when not
   * given; bindings/decode/eventpipe/engine.ts nettraceWalker("wasm") gives the WebAssembly core's.
   */
  walker?: NettraceWalker;
}

/** What the reader threw, as the error a file stops with: its own, or an internal error at `at`. */
export function formatErrorOf(e: unknown, at: number): NettraceFormatError {
  if (e instanceof NettraceFormatError) return e;
  return new NettraceFormatError(NE_INTERNAL, at, `internal error: ${e instanceof Error ? e.message : String(e)}`);
}

/**
 * Reads a whole .nettrace / .netperf file. Never throws for bad input: `error` holds the fatal
 * NettraceFormatError (with everything decoded before it kept), `warnings` the skipped damage.
 */
export function readNettrace(bytes: Uint8Array, options: ReadNettraceOptions = {}): NettraceFile {
  const r = new Reader(bytes, options.walker);
  let error: NettraceFormatError | null = null;
  try {
    r.run();
  } catch (e) {
    error = formatErrorOf(e, r.pos);
  }
  return r.result(error);
}

/**
 * A file held whole, read a window at a time: the events between two sequence points (a .netperf, and
 * a file without sequence points, is one window). Offsets are file offsets, `base` 0. A window's
 * columns are the next window's, views of the walker's core memory: use each window before asking for
 * the next. Bad input ends the
 * windows with the one that holds the error (and what came before it in that window).
 */
export function* nettraceWindowsOf(bytes: Uint8Array, walker?: NettraceWalker): Generator<NettraceWindow> {
  const r = new Reader(bytes, walker);
  r.readInPlace();
  r.expectBytes = 32 << 20;
  r.expectTimes = 4;
  let error: NettraceFormatError | null = null;
  try {
    r.start();
    for (let kind = r.next(); kind !== NEXT_END; kind = r.next()) {
      if (kind === BLOCK_SEQUENCE_POINT) yield Object.assign(r.takeWindow(null), { base: 0, last: false });
    }
  } catch (e) {
    error = formatErrorOf(e, r.pos);
  }
  yield Object.assign(r.takeWindow(error), { base: 0, last: true });
}

/** Frame addresses of stack row `row` (leaf first), zero-extended to 64 bits. */
export function stackFrames(file: NettraceFile, row: number): BigUint64Array {
  const ptr = file.header.pointerSize;
  const off = file.stacks.offset[row],
    len = file.stacks.byteLength[row];
  const n = ptr > 0 ? Math.floor(len / ptr) : 0;
  const out = new BigUint64Array(n);
  const dv = new DataView(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength);
  for (let i = 0; i < n; i++) out[i] = ptr === 8 ? dv.getBigUint64(off + 8 * i, true) : BigInt(dv.getUint32(off + 4 * i, true));
  return out;
}

/** The metadata an event refers to, or undefined. */
export function eventMetadata(file: NettraceFile, event: number): NettraceMetadata | undefined {
  const row = file.events.metadata[event];
  return row >= 0 ? file.metadata[row] : undefined;
}
