// Parquet encoded in worker threads (Node): parquet-wasm's writer is most of a Parquet conversion's
// time (three fifths of it on one thread), so TraceConverter hands a file's batches, as Arrow IPC
// bytes, to a worker (parquet-worker.ts) and writes the bytes that come back, while this thread
// decodes and builds the next batches. The first file opened (the events table, the largest: two
// thirds of a .NET trace's bytes) has a worker of its own; with one worker the other files are
// encoded on this thread, which has the time while that worker works; with more, they share the rest in turn.

import { readFile } from "node:fs/promises";
import { Worker } from "node:worker_threads";
import { giveBack } from "../decode/result/reuse.js";
import type { ExportField } from "./columns.js";
import type { ParquetEncoders } from "./convert.js";
import type { ParquetInputEncoder, ParquetSettings } from "./parquet.js";

/** parquet-wasm's `.wasm`, read from node_modules (Node's fetch does not read files): for this thread and the workers. */
export function readParquetWasm(): Promise<Uint8Array> {
  return readFile(new URL(import.meta.resolve("parquet-wasm/esm/parquet_wasm_bg.wasm")));
}

/** What this thread asks of a worker: open a file, give it a batch, end it. */
export type EncoderRequest =
  | { kind: "open"; id: number; fields: readonly ExportField[]; settings?: ParquetSettings }
  | { kind: "write"; id: number; ipc: Uint8Array }
  | { kind: "finish"; id: number };

/** What a worker tells: a batch's input copied (its memory given back), a batch taken, a file's next bytes, a file ended, a file failed. */
export type EncoderReply =
  | { kind: "copied"; buffer: ArrayBuffer }
  | { kind: "taken"; id: number }
  | { kind: "bytes"; id: number; bytes: Uint8Array }
  | { kind: "finished"; id: number }
  | { kind: "error"; id: number; message: string };

/** Batches sent to a file's worker and not yet taken, at most, before `write` waits. */
const AHEAD = 3;

interface FileState {
  sink: (bytes: Uint8Array) => Promise<void>;
  /** Batches sent and not taken, and who waits for one to be taken. */
  inFlight: number;
  waiting: (() => void)[];
  /** The writes of its bytes, in order; the first failure. */
  written: Promise<void>;
  failure?: Error;
  finished?: () => void;
  failed?: (error: Error) => void;
}

/** Parquet encoders in `count` worker threads, started when the first file opens. */
export class ParquetWorkers implements ParquetEncoders {
  private workers: Worker[] = [];
  private readonly files = new Map<number, FileState>();
  private nextId = 0;
  private turn = 0;

  constructor(readonly count = 1) {
    if (!(count >= 1)) throw new RangeError(`etw-wasm: Parquet workers: ${count} (at least 1)`);
  }

  private start(): void {
    for (let i = 0; i < this.count; i++) {
      const w = new Worker(new URL("./parquet-worker.js", import.meta.url));
      w.on("message", (m: EncoderReply) => this.onReply(m));
      w.on("error", (error) => this.failAll(error));
      this.workers.push(w);
    }
  }

  /** The worker of the next file; undefined: this thread's (the files after the first, with one worker). */
  private worker(): Worker | undefined {
    if (!this.workers.length) this.start();
    // (the first file alone on worker 0: it is the largest)
    if (this.nextId === 0) return this.workers[0];
    if (this.count === 1) return undefined;
    const w = this.workers[1 + (this.turn % (this.count - 1))];
    this.turn++;
    return w;
  }

  open(fields: readonly ExportField[], sink: (bytes: Uint8Array) => Promise<void>, settings?: ParquetSettings): ParquetInputEncoder | undefined {
    const worker = this.worker();
    if (!worker) {
      this.nextId++;
      return undefined;
    }
    const id = this.nextId++;
    const file: FileState = { sink, inFlight: 0, waiting: [], written: Promise.resolve() };
    this.files.set(id, file);
    this.holdOpen();
    // (fields as plain data: they cross to the worker by structured clone)
    this.post(worker, { kind: "open", id, fields: fields.map((f) => ({ ...f })), settings: settings && { ...settings } });
    const fail = () => {
      if (file.failure) throw file.failure;
    };
    return {
      write: async (ipc) => {
        fail();
        file.inFlight++;
        // (the input's memory moves to the worker, which sends it back once parquet-wasm has copied it)
        const own = ipc.buffer instanceof ArrayBuffer ? ipc : ipc.slice();
        this.post(worker, { kind: "write", id, ipc: own }, [own.buffer as ArrayBuffer]);
        while (file.inFlight > AHEAD && !file.failure) await new Promise<void>((r) => file.waiting.push(r));
        fail();
      },
      finish: async () => {
        try {
          fail();
          const done = new Promise<void>((resolve, reject) => {
            file.finished = resolve;
            file.failed = reject;
          });
          this.post(worker, { kind: "finish", id });
          await done;
          await file.written;
          fail();
        } finally {
          this.files.delete(id);
          this.holdOpen();
        }
      },
    };
  }

  /**
   * The workers keep the process alive while a file is open (its replies are awaited), and not when
   * none is: a program that never calls close() still ends.
   */
  private holdOpen(): void {
    for (const w of this.workers) {
      if (this.files.size) w.ref();
      else w.unref();
    }
  }

  private post(worker: Worker, message: EncoderRequest, transfer: ArrayBuffer[] = []): void {
    worker.postMessage(message, transfer);
  }

  private onReply(m: EncoderReply): void {
    if (m.kind === "copied") {
      giveBack([m.buffer]);
      return;
    }
    const file = this.files.get(m.id);
    if (!file) return;
    switch (m.kind) {
      case "taken":
        file.inFlight--;
        file.waiting.shift()?.();
        break;
      case "bytes": {
        // (written as they come, in order)
        const bytes = m.bytes;
        file.written = file.written
          .then(() => (file.failure ? undefined : file.sink(bytes)))
          .catch((error: unknown) => this.fail(file, error instanceof Error ? error : new Error(String(error))));
        break;
      }
      case "finished":
        file.finished?.();
        break;
      case "error":
        this.fail(file, new Error(`etw-wasm: Parquet encoding failed: ${m.message}`));
        break;
    }
  }

  private fail(file: FileState, error: Error): void {
    file.failure ??= error;
    for (const w of file.waiting.splice(0)) w();
    file.failed?.(file.failure);
  }

  private failAll(error: Error): void {
    for (const file of this.files.values()) this.fail(file, error);
  }

  /** Stops the workers (after every file has finished, or to give up). */
  async close(): Promise<void> {
    const workers = this.workers;
    this.workers = [];
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
