// Decode workers kept between decodes, and the mailbox a worker's messages wait in: what the .etl and the
// EventPipe parallel decoders (parallel.ts, eventpipe/parallel.ts) both take their workers from.

import { workerFactory, type DecodeWorker } from "./worker-factory.js";

/**
 * The input bytes of one worker's segment at most (a window of `batchBytes` of record data may hold less).
 * Each segment is a core instantiated afresh, its typed tables grown from empty: streaming 1 GiB with
 * 2 workers took 0.66-0.80 s in segments of 8 MiB, 0.51-0.74 s in 32 MiB ones (peak RSS 223 -> 345 MB).
 */
export const SEGMENT_BYTES = 32 << 20;
/**
 * Decode workers between decodes: a worker keeps its core's memory and its spare window buffers warm
 * (fresh memory costs a page fault per 4 KiB page), so a decode takes idle workers before starting new
 * ones, and gives them back when it ends; those idle for IDLE_MS are stopped. An idle worker does not
 * keep a Node process alive.
 */
export interface PooledWorker {
  worker: DecodeWorker;
  /** This side's objects for the worker's shared window slots (SharedSlots), kept as long as the worker. */
  slots: Map<number, SharedArrayBuffer>;
  onMessage?: (message: unknown) => void;
  onError?: (error: Error) => void;
  failed?: boolean;
}
const idleWorkers: PooledWorker[] = [];
let idleTimer: ReturnType<typeof setTimeout> | undefined;
const IDLE_MS = 5_000;

export function leaseWorker(): PooledWorker {
  const idle = idleWorkers.pop();
  if (idle) {
    idle.worker.ref?.();
    return idle;
  }
  const p: PooledWorker = { worker: workerFactory()!, slots: new Map() };
  p.worker.listen(
    (m) => p.onMessage?.(m),
    (e) => {
      p.failed = true;
      p.onError?.(e);
    },
  );
  return p;
}

export function releaseWorkers(list: readonly PooledWorker[]): Promise<unknown> {
  const stopping: (Promise<unknown> | undefined)[] = [];
  for (const p of list) {
    p.onMessage = p.onError = undefined;
    if (p.failed) stopping.push(p.worker.terminate());
    else {
      p.worker.unref?.();
      idleWorkers.push(p);
    }
  }
  if (idleTimer !== undefined) clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    idleTimer = undefined;
    for (const p of idleWorkers.splice(0)) void p.worker.terminate();
  }, IDLE_MS);
  (idleTimer as { unref?: () => void }).unref?.();
  return Promise.all(stopping);
}

/** A worker's messages about one piece of work, waiting to be taken in the order they came. */
export class Mailbox<M> {
  private readonly queue: M[] = [];
  private waiting?: () => void;

  push(m: M): void {
    this.queue.push(m);
    this.waiting?.();
    this.waiting = undefined;
  }

  async next(): Promise<M> {
    while (!this.queue.length) await new Promise<void>((resolve) => (this.waiting = resolve));
    return this.queue.shift()!;
  }
}
