// Parallel reading of an EventPipe file. The file is cut after sequence points (NettraceCutter: its block
// headers alone are read here, as pieces are sent), where TraceEvent lets every queued event go, so that
// what comes after a cut is ordered on its own. Each piece goes to a worker, whose reader resumes at the cut from what the
// events after it refer to: the Trace object, the metadata and V6 thread blocks before the cut, and the
// sequence point itself (NettraceStreamReader.resume). The workers' windows come back with their memory
// (lent in shared memory where threads share it, else transferred; not copied), and are adopted here in
// file order: their providers and event types, which
// are the workers' own, put on one numbering (NettraceTables.adopt). The windows are those of one reader.

import type { NettraceMetadata } from "../../eventpipe/reader.js";
import { NettraceCutter, type NettraceCut } from "../../eventpipe/cuts.js";
import type { NettraceStreamReader } from "../../eventpipe/stream-reader.js";
import { compiledCore } from "../windows/loader.js";
import { leaseWorker, Mailbox, releaseWorkers, SEGMENT_BYTES, type PooledWorker } from "../workers/worker-pool.js";
import type { NettraceInfo, TraceData } from "../result/trace-data.js";
import type { DecodeOptions } from "../windows/windows.js";
import { isByteSource, type Input, type SharedSource } from "../input/input.js";
import { haveWorkers, openShared, workerAbilities } from "../workers/worker-factory.js";
import { chunksOf, NettraceTables, readWindows, windowParts, windowReader, type AdoptedWindow, type SyncSource } from "./data.js";
import { nettraceEngine } from "./engine.js";
import { SharedWindowMemory } from "../workers/shared-slots.js";

type NettraceTrace = TraceData & { nettrace: NettraceInfo };

/** Pieces of files read by workers and adopted here, in all (for tests: that a stream was read in pieces). */
export const piecesRead = { count: 0 };

/** Pieces queued or being read per worker: one being read while the other's windows wait to be adopted. */
const IN_FLIGHT_PER_WORKER = 2;
/**
 * Windows a worker posts ahead of those adopted (about 20 MiB each in the generated files): it waits for
 * the calling thread to take one before it reads on, so a consumer slower than the workers holds at most
 * these. (2 workers streaming 1 GiB: peak RSS 570-680 MB when they ran ahead freely, 500-540 MB bounded; the
 * rest is each worker's core and its pool of window memory. One ahead was 30% slower.)
 */
const WINDOWS_AHEAD = 2;

/**
 * This worker's windows posted and not yet adopted, and the wait for one to be. (A worker reads one piece
 * at a time; a stream that stops early stops its workers, so no count is left over for the next.)
 */
let windowsAhead = 0;
let aheadWait: (() => void) | undefined;

/** The calling thread adopted one of this worker's windows (a worker's side). */
export function windowAdopted(): void {
  windowsAhead = Math.max(0, windowsAhead - 1);
  const wake = aheadWait;
  aheadWait = undefined;
  wake?.();
}

/**
 * This worker's window memory, shared with the calling thread (SharedArrayBuffers): the windows' tables are
 * made in it and lent as they are. Windows moved as ArrayBuffers of their own were new memory to each side's
 * collector every time they crossed (32 buffers, 23 MiB a window): the collector started marking every
 * window or two in a worker (48 mark-compacts streaming 1 GiB with one worker, 4 decoding on the calling
 * thread).
 */
const windowMemory = typeof SharedArrayBuffer === "function" ? new SharedWindowMemory() : undefined;

/** The calling thread is done with the window of `loan` (a worker's side). */
export function windowLoanReturned(loan: number): void {
  windowMemory?.returned(loan);
}

/** What a worker is asked to read: the file's bytes from `from` up to the next cut (or its end). */
export interface NettracePieceRequest {
  nettracePiece: number;
  /** The piece's bytes (sent where the worker cannot open the file), or the range it reads itself. */
  bytes?: Uint8Array;
  range?: { source: SharedSource; offset: number; length: number };
  from: number;
  /** What the reader reads before it resumes at `from` (none for the file's first piece). */
  prelude: { bytes: Uint8Array; offset: number }[];
  /** The file's last piece: its end is the file's. */
  last: boolean;
  /** The most bytes a window of the file has (the reader's buffers hold one and a read). */
  windowBytes: number;
  /** The event types the calling thread knows when it sends the piece (NettraceTables.knownTypes), numbered first. */
  types?: number[][];
  options: Pick<DecodeOptions, "engine" | "clrTables" | "batchBytes" | "chunkBytes"> & {
    wasm?: WebAssembly.Module;
    /** Windows come back in shared memory (SharedWindowMemory), which the calling thread's consumers can read. */
    sharedWindows?: boolean;
  };
}

/** A worker's messages about a piece: each window, then the end (or the failure that ended it). */
export type NettracePieceMessage =
  | { nettracePiece: number; window: AdoptedWindow & { buffers: ArrayBuffer[] } }
  | { nettracePiece: number; window: AdoptedWindow; loan: number }
  | { nettracePiece: number; end: true }
  | { nettracePiece: number; error: { name: string; message: string } };

/** A worker's side: reads a piece, posting each window as this thread's tables made it, with its memory. */
export async function serveNettracePiece(req: NettracePieceRequest, post: (m: NettracePieceMessage, transfer: ArrayBuffer[]) => void): Promise<void> {
  const piece = req.nettracePiece;
  const engine = await nettraceEngine(req.options.engine === "js" ? "js" : "wasm", req.options.wasm, req.options.clrTables !== false);
  let reader: NettraceStreamReader | undefined;
  try {
    const memory = req.options.sharedWindows ? windowMemory : undefined;
    const tables = new NettraceTables(engine.rows, engine.filler, {}, memory);
    // (the types known so far numbered as the calling thread numbers them: its windows need no renumbering)
    if (req.types) tables.seedTypes(req.types);
    reader = windowReader(engine, req.options.batchBytes, memory);
    if (req.prelude.length > 0) {
      reader.resume(req.prelude, req.from);
      tables.resumed = true;
    }
    let metadataSent = 0,
      failed = false;
    const send = async (w: Parameters<NettraceTables["window"]>[0], final: boolean) => {
      const data = await tables.window(w, final);
      const { window, transfer } = packWindow(data, w.metadata, metadataSent, memory !== undefined);
      metadataSent = w.metadata.length;
      failed ||= data.incomplete !== undefined;
      if (memory) {
        // (shared as it is: the few views not in the window's own memory are copied by the message)
        const { buffers: _, ...rest } = window;
        post({ nettracePiece: piece, window: rest, loan: memory.lend(transfer) }, []);
      } else post({ nettracePiece: piece, window }, transfer);
      windowsAhead++;
      while (windowsAhead >= WINDOWS_AHEAD) await new Promise<void>((resolve) => (aheadWait = resolve));
    };
    const input = req.bytes ?? (req.range && openShared(req.range.source, req.range.offset, req.range.length));
    if (!input) throw new Error("etw-wasm: this decode worker cannot open the shared input (no source opener installed)");
    const readBytes = req.options.chunkBytes ?? 1 << 20;
    if (isByteSource(input) && input.readSync) {
      // read straight into the reader's buffer (a window's bytes and a read: no buffer grown for each window)
      reader.room(req.windowBytes + readBytes);
      try {
        for (const w of readWindows(reader, input as SyncSource, readBytes)) await send(w, w.last);
      } finally {
        await input.close?.();
      }
    } else {
      for await (const chunk of chunksOf(input, readBytes)) {
        for (const w of reader.push(chunk)) await send(w, w.last);
        if (reader.finished) break;
      }
    }
    if (req.last) for (const w of reader.end()) await send(w, true);
    else if (!failed && !reader.finished && reader.unread > 0)
      throw new Error(`etw-wasm: the piece of the file from ${req.from} ends ${reader.unread} bytes after its last sequence point`);
    post({ nettracePiece: piece, end: true }, []);
  } catch (error) {
    post({ nettracePiece: piece, error: { name: (error as Error)?.name ?? "Error", message: (error as Error)?.message ?? String(error) } }, []);
  } finally {
    reader?.close();
    engine.dispose();
  }
}

/**
 * A window of NettraceTables as it goes to another thread: its columns and store with the memory they are
 * in (moved or, `shared`, lent, not copied: what is not the window's own is copied), the metadata rows not
 * sent before.
 */
function packWindow(
  data: NettraceTrace,
  metadata: NettraceMetadata[],
  metadataFrom: number,
  shared: boolean,
): { window: AdoptedWindow & { buffers: ArrayBuffer[] }; transfer: ArrayBuffer[] } {
  const parts = windowParts(data);
  if (!parts) throw new Error("etw-wasm: a window to send that its tables did not make");
  const owned = new Set(parts.owned);
  const transfer = new Set<ArrayBuffer>();
  const own = <T extends ArrayBufferView>(v: T): T => {
    const movable = shared ? v.buffer instanceof SharedArrayBuffer : v.buffer instanceof ArrayBuffer;
    const out = owned.has(v.buffer) && movable ? v : ((v as unknown as Uint8Array).slice() as unknown as T);
    transfer.add(out.buffer as ArrayBuffer);
    return out;
  };
  const r = parts.rows;
  const columns = <T extends object>(cols: T): T => Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, own(v as ArrayBufferView)])) as T;
  // (the stored columns alone: the trace made the others on the same object, each when first read)
  const { timestamp, tid, payloadOffset, payloadLength, processor, eventType } = r.events;
  const clr = data.clr;
  const window: AdoptedWindow & { buffers: ArrayBuffer[] } = {
    bytes: own(data.bytes),
    rows: {
      ...r,
      events: columns({ timestamp, tid, payloadOffset, payloadLength, processor, eventType }),
      pid: r.pid && own(r.pid),
      untyped: r.untyped && columns(r.untyped),
      typeRows: r.typeRows.slice(0, parts.types.length),
      metadataOfRow: own(r.metadataOfRow),
      activities: columns(r.activities),
      ext: columns(r.ext),
    },
    header: parts.header,
    metadata: metadata.slice(metadataFrom),
    metadataFrom,
    providerOf: parts.providerOf.slice(),
    providerCount: data.providerCount,
    unknownProvider: parts.unknownProvider,
    types: parts.types.slice(),
    // (each block as it is, with room after its rows: `caps`)
    clr: clr && { counts: own(clr.counts), blocks: clr.blocks.map((b) => b && own(b)), caps: clr.caps && own(clr.caps) },
    clrRows: data.clrRows,
    warnings: data.nettrace.warnings,
    warningCount: parts.warningCount,
    eventsLost: parts.eventsLost,
    arenaBytes: data.arenaBytes,
    windowEnd: data.inputBytes,
    error: data.incomplete && { code: 0, offset: data.incomplete.offset, reason: data.incomplete.message },
    buffers: [],
  };
  window.buffers = [...transfer];
  return { window, transfer: window.buffers };
}

/** A worker's messages about one piece, waiting to be adopted in file order. */
class PieceJob extends Mailbox<NettracePieceMessage> {
  constructor(readonly worker: PooledWorker) {
    super();
  }
}

/**
 * The windows of an EventPipe file read by `workers` worker threads, as nettraceWindows gives them; the
 * outline of them all at the end. Undefined where the file is not cut (an input not held or opened
 * here whole, a .netperf, a file without sequence points far enough apart, or too small for two pieces):
 * it is read on one thread.
 */
export function parallelWindows(
  input: Input,
  options: Pick<DecodeOptions, "engine" | "wasm" | "clrTables" | "chunkBytes" | "batchBytes">,
  workers: number,
): AsyncGenerator<NettraceTrace, NettraceTrace | undefined> | undefined {
  if (!(Number.isInteger(workers) && workers >= 1)) throw new RangeError(`etw-wasm: workers must be a whole number of at least 1, not ${String(workers)}`);
  if (!haveWorkers()) throw new Error("etw-wasm: no worker threads here (decode workers are started by the Node and browser entry points)");
  const bytes = input instanceof Uint8Array ? input : input instanceof ArrayBuffer ? new Uint8Array(input) : undefined;
  const source = isByteSource(input) && input.readSync ? input : undefined;
  let readAt: (at: number, length: number) => Uint8Array;
  let size: number;
  if (bytes) {
    size = bytes.length;
    readAt = (at, length) => bytes.subarray(at, Math.min(size, at + length));
  } else if (source) {
    size = source.byteLength;
    readAt = (at, length) => {
      const into = new Uint8Array(Math.max(0, Math.min(length, size - at)));
      return into.subarray(0, into.length && source.readSync!(into, at));
    };
  } else return undefined;
  // (pieces of a stream's batches at least, 32 MiB at most: a piece is a core's memory afresh and a message each window)
  const cutter = NettraceCutter.open(readAt, size, Math.min(SEGMENT_BYTES, options.batchBytes ?? SEGMENT_BYTES));
  const first = cutter?.next();
  if (!cutter || !first) return undefined;
  return readPieces({ input, bytes, source, readAt, size }, cutter, first, options, workers);
}

interface PieceSource {
  input: Input;
  bytes?: Uint8Array;
  source?: Input & { shared?: SharedSource; close?(): Promise<void> };
  readAt: (at: number, length: number) => Uint8Array;
  size: number;
}

async function* readPieces(
  src: PieceSource,
  cutter: NettraceCutter,
  firstCut: NettraceCut,
  options: Pick<DecodeOptions, "engine" | "wasm" | "clrTables" | "chunkBytes" | "batchBytes">,
  workers: number,
): AsyncGenerator<NettraceTrace, NettraceTrace | undefined> {
  const { bytes, readAt, size } = src;
  // the cuts found as pieces are sent (the first pieces go while the rest of the file is looked at)
  const cuts: NettraceCut[] = [firstCut];
  let cutsEnded = false;
  /** The cut that ends piece `i`; undefined for the last piece, which runs to the file's end. */
  const endOf = (i: number): NettraceCut | undefined => {
    while (!cutsEnded && cuts.length <= i) {
      const c = cutter.next();
      if (c) cuts.push(c);
      else cutsEnded = true;
    }
    return cuts[i];
  };
  const pieceExists = (i: number) => i === 0 || endOf(i - 1) !== undefined;
  const shared = (src.source as { shared?: SharedSource } | undefined)?.shared;
  const ranges = shared !== undefined && workerAbilities().opensSources === true;
  // what a worker reads before resuming at a cut: the stream header and Trace object, the state blocks, the sequence point
  // (copies of their own: a view of the input would take all of its buffer with it to the worker)
  const copy = (at: number, length: number) => new Uint8Array(readAt(at, length));
  const head = { bytes: copy(0, cutter.first), offset: 0 };
  const state: { bytes: Uint8Array; offset: number }[] = [];
  const stateBefore = (n: number) => {
    for (let k = state.length; k < n; k++) state.push({ bytes: copy(cutter.state[k][0], cutter.state[k][1] - cutter.state[k][0]), offset: cutter.state[k][0] });
    return state.slice(0, n);
  };
  const wasm = options.engine === "js" ? undefined : await compiledCore(options.wasm);
  const pieceOptions: NettracePieceRequest["options"] = {
    engine: options.engine,
    clrTables: options.clrTables,
    batchBytes: options.batchBytes,
    chunkBytes: options.chunkBytes,
    wasm,
    // (made in shared memory and lent, windows cost no copy and no collections: streaming 1 GiB, one worker
    // 3.1-3.6 s of a core and 0.2 s of the collector's threads, against 3.4-3.8 s and 1.3 s moving them)
    sharedWindows: workerAbilities().sharesWindows === true,
  };
  const request = (i: number): NettracePieceRequest => {
    const cut = i > 0 ? cuts[i - 1] : undefined;
    const from = cut ? cut.offset : 0;
    const to = endOf(i)?.offset ?? size;
    const prelude = cut
      ? [head, ...stateBefore(cut.state), { bytes: copy(cut.sequencePoint[0], cut.sequencePoint[1] - cut.sequencePoint[0]), offset: cut.sequencePoint[0] }]
      : [];
    return {
      // (the largest window so far: the cutter has read past this piece's end)
      nettracePiece: i,
      from,
      prelude,
      last: to === size,
      windowBytes: cutter.largestWindow,
      types: tables.knownTypes(),
      options: pieceOptions,
      ...(ranges ? { range: { source: shared!, offset: from, length: to - from } } : { bytes: bytes ? copy(from, to - from) : readAt(from, to - from) }),
    };
  };
  const tables = new NettraceTables(undefined);
  const jobs = new Map<number, PieceJob>();
  const leased: PooledWorker[] = [];
  const inFlight: PieceJob[] = [];
  let next = 0,
    done = false;
  try {
    for (let i = 0; i < workers; i++) {
      const p = leaseWorker();
      leased.push(p);
      p.onMessage = (message) => {
        const m = message as NettracePieceMessage;
        jobs.get(m.nettracePiece)?.push(m);
      };
      p.onError = (error) => {
        // a worker that died: its pieces end there, failed
        for (const [piece, job] of jobs)
          if (job.worker === p) job.push({ nettracePiece: piece, error: { name: "Error", message: `decode worker failed: ${error.message}` } });
      };
    }
    for (;;) {
      while (!done && inFlight.length < workers * IN_FLIGHT_PER_WORKER && pieceExists(next)) {
        const p = leased[next % workers];
        const job = new PieceJob(p);
        jobs.set(next, job);
        inFlight.push(job);
        const req = request(next++);
        p.worker.post(req, req.bytes ? [req.bytes.buffer as ArrayBuffer] : []);
      }
      const job = inFlight.shift();
      if (!job) break;
      for (;;) {
        const m = await job.next();
        if ("error" in m) {
          const Type = m.error.name === "RangeError" ? RangeError : m.error.name === "TypeError" ? TypeError : Error;
          throw new Type(m.error.message);
        }
        if ("end" in m) {
          jobs.delete(m.nettracePiece);
          piecesRead.count++;
          break;
        }
        let adopted: AdoptedWindow;
        if ("loan" in m) {
          // (a window in the worker's shared memory, which goes back by the loan's number)
          const loan = m.loan;
          adopted = { ...m.window, release: () => job.worker.worker.post({ nettraceReturnLoan: loan }, []) };
        } else {
          const { buffers, ...w } = m.window as AdoptedWindow & { buffers: ArrayBuffer[] };
          // (the consumer done with the window: its memory goes back to the worker for the next ones)
          adopted = { ...w, release: () => job.worker.worker.post({ nettraceRecycle: buffers }, buffers) };
        }
        const data = await tables.adopt(adopted);
        job.worker.worker.post({ nettraceAdopted: true }, []);
        // (a window where reading stopped is the stream's last)
        if (data.incomplete) done = true;
        yield data;
      }
      if (done) break;
    }
    return tables.outline();
  } finally {
    // workers still reading (a stream that stopped early) are stopped; the others wait for the next decode
    for (const p of leased) if (jobs.size > 0) p.failed = true;
    await releaseWorkers(leased);
    await src.source?.close?.();
  }
}
