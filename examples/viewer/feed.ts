// A File read on the page and handed to a worker in slices (transferred, not copied). A worker that
// reads a File itself gets its bytes only between its own tasks: while it decodes, the browser fills
// the read's pipe and waits, so reading and decoding take turns. Read on the page (whose thread is
// otherwise idle), the file's bytes arrive while the worker decodes.

/** Bytes per slice, and slices read but not yet taken by the worker. */
const SLICE = 32 << 20;
const AHEAD = 4;

/** Page side: sends `file` to `port` slice by slice (an ArrayBuffer each, then null); stops when the port closes. */
export function sendFile(file: Blob, port: MessagePort, slice = SLICE, ahead = AHEAD): void {
  let at = 0;
  let waiting = 0; // slices read or being read, not yet taken
  let posted: Promise<void> = Promise.resolve();
  let failed = false;
  let ended = false;
  const pump = () => {
    while (!failed && waiting < ahead && at < file.size) {
      const read = file.slice(at, Math.min(file.size, at + slice)).arrayBuffer();
      at += slice;
      waiting++;
      // (read at once, posted in order)
      posted = posted
        .then(() => read)
        .then(
          (bytes) => {
            if (!failed) port.postMessage(bytes, [bytes]);
          },
          (error: Error) => {
            failed = true;
            port.postMessage({ error: `cannot read the file: ${error.message}` });
          },
        );
    }
    if (at >= file.size && !ended) {
      ended = true;
      posted = posted.then(() => {
        if (!failed) port.postMessage(null);
      });
    }
  };
  port.onmessage = () => {
    waiting--;
    pump();
  };
  pump();
}

/** Worker side: the file's bytes as `sendFile` sends them, in order; each slice taken lets the page read another. */
export async function* receiveFile(port: MessagePort): AsyncGenerator<Uint8Array> {
  const queue: (ArrayBuffer | { error: string } | null)[] = [];
  let wake: (() => void) | undefined;
  port.onmessage = (e) => {
    queue.push(e.data);
    wake?.();
    wake = undefined;
  };
  try {
    for (;;) {
      while (!queue.length) await new Promise<void>((resolve) => (wake = resolve));
      const m = queue.shift()!;
      if (m === null) return;
      if (!(m instanceof ArrayBuffer)) throw new Error(m.error);
      port.postMessage(1);
      yield new Uint8Array(m);
    }
  } finally {
    port.close();
  }
}
