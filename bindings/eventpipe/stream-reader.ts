// An EventPipe file read as it arrives, window by window (the events between two sequence points), in
// the memory of one window: the reader of reader.ts over a buffer that holds what is not yet read.

import { BLOCK_EVENT, BLOCK_SEQUENCE_POINT, type NettraceFormatError, type NettraceFile, type NettraceWindow } from "./format.js";
import type { NettraceWalker } from "./walk.js";
import { NEXT_END, NEXT_NEED, Reader, formatErrorOf } from "./reader.js";

/**
 * Reads a .nettrace / .netperf file as it arrives, in windows: each window holds the events between two
 * sequence points (where TraceEvent lets every queued event go, so a window's dispatch order is the
 * file's), or, in a .netperf (V3, in time order), about `windowBytes` of event blocks. Memory holds one
 * window's bytes, not the file. A file without sequence points is one window.
 *
 *   const r = new NettraceStreamReader();
 *   for await (const chunk of input) for (const w of r.push(chunk)) use(w);   // then: for (const w of r.end()) use(w)
 *
 * A window's offsets are into its own `bytes`, valid until the next push (for good with `handOver`);
 * `base` is the file offset of `bytes[0]`. Bad input ends the stream with the window that holds the error (and what came before it).
 */
export class NettraceStreamReader {
  private readonly reader: Reader;
  private buffer: Uint8Array;
  /** The file's bytes held are buffer[head, head + used). */
  private readonly head: number;
  private used = 0;
  private base = 0;
  private done = false;
  /** A window handed out has its bytes in `buffer` (the file's last window): the buffer is not the reader's to give back. */
  private lent = false;

  /**
   * `reuse`: a window's columns are the next window's, views of the walker's core memory (a caller that
   * is done with each window before the next push). `handOver`: each window's bytes are handed over in
   * their buffer, `head` bytes into it, the rest of it after them free (the caller may build on it: no
   * copy of the window), and the reader goes on in a buffer from `take` with the bytes after the window;
   * `give` takes back a buffer from `take` that no window holds (one outgrown, or the reader's last: close).
   */
  constructor(
    walker?: NettraceWalker,
    private readonly windowBytes = 32 << 20,
    reuse = false,
    private readonly handOver?: { take: (bytes: number) => ArrayBuffer; give?: (buffer: ArrayBuffer) => void; head: number },
  ) {
    this.head = handOver?.head ?? 0;
    this.buffer = this.bufferOf(1 << 16);
    this.reader = new Reader(new Uint8Array(0), walker);
    if (reuse) this.reader.readInPlace();
    this.reader.final = false;
    this.reader.expectBytes = windowBytes;
    this.reader.expectTimes = 4;
  }

  private bufferOf(bytes: number): Uint8Array {
    return this.handOver ? new Uint8Array(this.handOver.take(bytes)) : new Uint8Array(bytes);
  }

  /** The bytes held. */
  private held(): Uint8Array {
    return this.buffer.subarray(this.head, this.head + this.used);
  }

  /** Bytes pushed that no window has taken yet. */
  get unread(): number {
    return this.used - this.reader.pos;
  }

  /** Whether the reader has the file's end (its end-of-stream marker, or the error it stops at). */
  get finished(): boolean {
    return this.done;
  }

  /**
   * Goes on from file offset `from` (a cut, nettraceCuts) as a reader that read the file up to there
   * would: `prelude` is the file's bytes before its first block, then the blocks before `from` that
   * later events refer to, then the sequence point the cut follows, each with its file offset. None of
   * it makes a window or a warning; the next push gives the bytes from `from` on.
   */
  resume(prelude: readonly { bytes: Uint8Array; offset: number }[], from: number): void {
    const r = this.reader;
    if (r.started) throw new Error("etw-wasm: a nettrace reader resumes before it reads");
    for (const { bytes, offset } of prelude) {
      r.setBytes(bytes, offset, false);
      r.pos = 0;
      if (!r.started && !r.start()) throw new Error("etw-wasm: the prelude of a resumed nettrace reader lacks the stream header");
      while (r.pos < r.len) {
        const kind = r.next();
        if (kind === NEXT_NEED || kind === NEXT_END) throw new Error(`etw-wasm: the prelude block at ${offset} of a resumed nettrace reader is not whole`);
      }
    }
    r.takeWindow(null);
    r.warningCount = 0;
    this.base = from;
    this.used = 0;
    r.setBytes(this.held(), from, false);
    r.pos = 0;
    r.windowFrom = from;
  }

  /** Takes the next bytes of the file; yields the windows they complete. */
  *push(chunk: Uint8Array): Generator<NettraceWindow> {
    if (this.done || chunk.length === 0) return;
    this.room(chunk.length).set(chunk);
    yield* this.commit(chunk.length);
  }

  /**
   * Room for the next `bytes` of the file, to read them into instead of pushing a chunk (no copy of
   * them); `commit` then says how many were read there. `bytes` is also how much room the reader's
   * buffers keep from here on at least (a window's bytes and a read: no buffer grown for each window).
   */
  room(bytes: number): Uint8Array {
    const h = this.head;
    if (h + this.used + bytes > this.buffer.length) {
      const next = this.bufferOf(Math.max(this.buffer.length * 2, h + this.used + bytes));
      next.set(this.held(), h);
      this.giveBack();
      this.buffer = next;
    }
    return this.buffer.subarray(h + this.used, h + this.used + bytes);
  }

  /**
   * Done reading: the reader's buffer goes back to `handOver.give` unless the last window handed out is
   * in it. (A worker reads a file in pieces, a reader each: without this, each piece left its buffer,
   * a window's size, to the collector and the next piece's reader took fresh pages for its own.)
   */
  close(): void {
    this.done = true;
    this.giveBack();
    this.buffer = new Uint8Array(0);
    this.used = 0;
  }

  private giveBack(): void {
    // (not the empty buffer close leaves, which `take` did not give)
    if (this.handOver?.give && !this.lent && this.buffer.byteLength > 0) this.handOver.give(this.buffer.buffer as ArrayBuffer);
  }

  /** The next `n` bytes of the file are in the room given (room); yields the windows they complete. */
  *commit(n: number): Generator<NettraceWindow> {
    if (this.done || n === 0) return;
    this.used += n;
    yield* this.pump(false);
  }

  /** The file has ended: yields the last window (the whole file's rest, or the error it ends with). */
  *end(): Generator<NettraceWindow> {
    if (this.done) return;
    yield* this.pump(true);
  }

  private *pump(final: boolean): Generator<NettraceWindow> {
    const r = this.reader;
    r.setBytes(this.held(), this.base, final);
    let error: NettraceFormatError | null = null;
    try {
      if (!r.started && !r.start()) return;
      for (;;) {
        const kind = r.next();
        if (kind === NEXT_NEED) break;
        if (kind === NEXT_END) {
          this.done = true;
          break;
        }
        // a window ends at a sequence point, or (V3) after enough event blocks
        if (kind === BLOCK_SEQUENCE_POINT || (r.version <= 3 && kind === BLOCK_EVENT && r.pos >= this.windowBytes)) {
          const w = this.window(r.takeWindow(null));
          if (this.handOver) {
            // (the window's bytes are its own from here: the reader goes on in another buffer)
            w.bytes = w.bytes.subarray(0, r.pos);
            this.compact(final, this.bufferOf(this.buffer.length));
          }
          yield w;
          // (the window has been used: nothing refers to the bytes before here any more)
          if (!this.handOver) this.compact(final, this.buffer);
        }
      }
    } catch (e) {
      error = formatErrorOf(e, this.base + r.pos);
      this.done = true;
    }
    if (this.done) {
      this.lent = true;
      yield this.window(r.takeWindow(error));
      return;
    }
    if (!r.events.length && !r.stacks.length && !r.labelLists.length) this.compact(final, this.buffer);
  }

  /** Drops the bytes before the read position (no window refers to them), moving those after it into `into` (which may be the buffer). */
  private compact(final: boolean, into: Uint8Array): void {
    const r = this.reader;
    const keep = r.pos;
    if (keep === 0 && into === this.buffer) return;
    const h = this.head;
    if (into === this.buffer) this.buffer.copyWithin(h, h + keep, h + this.used);
    else into.set(this.buffer.subarray(h + keep, h + this.used), h);
    this.buffer = into;
    this.used -= keep;
    this.base += keep;
    r.setBytes(this.held(), this.base, final);
    r.pos = 0;
  }

  private window(file: NettraceFile): NettraceWindow {
    return Object.assign(file, { base: this.base, last: this.done });
  }
}
