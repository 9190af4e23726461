// Where an EventPipe file can be cut for parallel decoding: after sequence points, found from the block
// headers alone (NettraceCutter), each piece then read on its own (stream-reader.ts resume).

import {
  BLOCK_METADATA,
  BLOCK_REMOVE_THREAD,
  BLOCK_SEQUENCE_POINT,
  BLOCK_THREAD,
  BLOCK_TRACE,
  BLOCK_UNKNOWN,
  MAX_TYPE_NAME,
  TAG_BEGIN_PRIVATE,
  TAG_END,
  TAG_NULL,
} from "./format.js";
import { blockKindNamed } from "./framing.js";
import { Reader } from "./reader.js";

/** A cut of an EventPipe file (NettraceCutter): right after a sequence point, [start, end), after `state` of the state blocks. */
export interface NettraceCut {
  offset: number;
  sequencePoint: readonly [number, number];
  state: number;
}

/**
 * Where an EventPipe file can be cut for parallel decoding (nettraceCuts): each piece decodes on its own
 * once the reader has read what the events after the cut refer to and what the file says before them.
 */
export interface NettraceCuts {
  /** File offset of the first block: the bytes before it are the stream header and the Trace object (or block). */
  first: number;
  /** Blocks whose content later events depend on, [start, end) in file order: metadata, V6 threads, removed threads and sequence points with flags. */
  state: (readonly [number, number])[];
  /** Cut offsets, in file order: each right after a sequence point, after which `state` blocks before it; a reader resumes there (NettraceStreamReader.resume). */
  cuts: NettraceCut[];
  /** The most bytes from one sequence point's end to the next one's (a window's bytes, at most). */
  largestWindow: number;
}

/**
 * The cuts of a V4–V6 EventPipe file of `size` bytes, at least `every` bytes apart, found as they are
 * asked for (`next`) by reading its block headers alone (`readAt`: up to `length` bytes at a file
 * offset): a parallel decode sends the first pieces while the rest of the file is looked at. Cuts stop
 * where the framing looks wrong or the file ends early: the rest is one piece, read as a whole file's would be.
 */
export class NettraceCutter {
  /** File offset of the first block (the stream header and Trace object are before it). */
  readonly first: number;
  /** The state blocks met so far (NettraceCuts.state). */
  readonly state: (readonly [number, number])[] = [];
  /** The most bytes of a window so far (of all, once `next` has given undefined). */
  largestWindow = 0;
  private at: number;
  private last = 0;
  private windowFrom: number;
  private ended = false;

  private constructor(
    private readonly readAt: (at: number, length: number) => Uint8Array,
    private readonly size: number,
    private readonly every: number,
    first: number,
    private readonly v6: boolean,
  ) {
    this.first = this.at = this.windowFrom = first;
  }

  /** The cutter of a V4–V6 file; undefined for files not cut (V2/V3, which have no sequence points, or one whose start is unreadable). */
  static open(readAt: (at: number, length: number) => Uint8Array, size: number, every: number): NettraceCutter | undefined {
    const head = readAt(0, Math.min(size, 1 << 16));
    const r = new Reader(head);
    r.final = head.length >= size;
    try {
      if (!r.start() || r.version < 4) return undefined;
      if (r.next() !== BLOCK_TRACE) return undefined;
    } catch {
      return undefined;
    }
    return new NettraceCutter(readAt, size, every, r.pos, r.version === 6);
  }

  /** The next cut; undefined after the last (the rest of the file is one piece). */
  next(): NettraceCut | undefined {
    const { readAt, size, state } = this;
    while (!this.ended && this.at < size) {
      const at = this.at;
      let kind: number, end: number, content: number;
      if (this.v6) {
        const b = readAt(at, 4);
        if (b.length < 4) break;
        const word = b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24);
        kind = word >>> 24;
        content = at + 4;
        end = content + (word & 0xffffff);
        if (kind === 0 || kind === BLOCK_TRACE) break;
      } else {
        const b = readAt(at, 16 + MAX_TYPE_NAME + 4);
        if (b.length < 16 || b[0] !== TAG_BEGIN_PRIVATE || b[1] !== TAG_BEGIN_PRIVATE || b[2] !== TAG_NULL) break;
        const dv = new DataView(b.buffer, b.byteOffset, b.length);
        const nameLen = dv.getInt32(11, true);
        if (nameLen < 0 || nameLen > MAX_TYPE_NAME || 16 + nameLen + 4 > b.length || b[15 + nameLen] !== TAG_END) break;
        let name = "";
        for (let i = 0; i < nameLen; i++) name += String.fromCharCode(b[15 + i]);
        const blockSize = dv.getInt32(16 + nameLen, true);
        if (blockSize < 0) break;
        content = at + 16 + nameLen + 4;
        content += (4 - (content % 4)) % 4;
        end = content + blockSize + 1;
        kind = blockKindNamed(name, true);
        if (kind === BLOCK_UNKNOWN) break;
      }
      if (end > size) break;
      this.at = end;
      if (kind === BLOCK_METADATA || kind === BLOCK_THREAD || kind === BLOCK_REMOVE_THREAD) state.push([at, end]);
      else if (kind === BLOCK_SEQUENCE_POINT) {
        this.largestWindow = Math.max(this.largestWindow, end - this.windowFrom);
        this.windowFrom = end;
        // (a cut goes on from what the sequence point sets: its threads' sequence numbers; V6 flags clear threads or metadata)
        let cut: NettraceCut | undefined;
        if (end - this.last >= this.every && end < size) {
          cut = { offset: end, sequencePoint: [at, end], state: state.length };
          this.last = end;
        }
        if (this.v6) {
          const f = readAt(content + 8, 4);
          if (f.length < 4) break;
          if ((f[0] | f[1] | f[2] | f[3]) !== 0) state.push([at, end]);
        }
        if (cut) return cut;
      }
    }
    if (!this.ended) {
      this.ended = true;
      this.largestWindow = Math.max(this.largestWindow, size - this.windowFrom);
    }
    return undefined;
  }
}

/** Every cut of a V4–V6 EventPipe file at once (NettraceCutter); undefined for files not cut. */
export function nettraceCuts(readAt: (at: number, length: number) => Uint8Array, size: number, every: number): NettraceCuts | undefined {
  const cutter = NettraceCutter.open(readAt, size, every);
  if (!cutter) return undefined;
  const cuts: NettraceCut[] = [];
  for (let c = cutter.next(); c; c = cutter.next()) cuts.push(c);
  return { first: cutter.first, state: cutter.state, cuts, largestWindow: cutter.largestWindow };
}
