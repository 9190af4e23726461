// The Parquet encoding worker (Node worker_threads), started by parquet-workers.ts: it holds
// ParquetEncoders for files the main thread writes, takes each batch as parquet-wasm's input (Arrow
// IPC bytes, transferred), and posts the file's bytes back in order for the main thread to write.
// The messages are EncoderRequest and EncoderReply (parquet-workers.ts).

import { parentPort } from "node:worker_threads";
import { ParquetEncoder, loadParquetWasm } from "./parquet.js";
import { readParquetWasm, type EncoderReply, type EncoderRequest } from "./parquet-workers.js";

const port = parentPort!;
const wasm = loadParquetWasm(await readParquetWasm());
/** Each file's encoder, and the end of the chain its requests run in (in order, one at a time). */
const files = new Map<number, { encoder: Promise<ParquetEncoder>; chain: Promise<void> }>();

function reply(message: EncoderReply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

/** `bytes` as an ArrayBuffer of their own, to transfer (a copy where they view part of a larger one). */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  const b = bytes.buffer;
  return b instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === b.byteLength ? b : bytes.slice().buffer;
}

port.on("message", (m: EncoderRequest) => {
  if (m.kind === "open") {
    const encoder = wasm.then(
      (pw) =>
        new ParquetEncoder(
          pw,
          m.fields,
          (bytes) => {
            if (!bytes.byteLength) return;
            const own = ownBuffer(bytes);
            reply({ kind: "bytes", id: m.id, bytes: new Uint8Array(own) }, [own]);
          },
          m.settings,
          (ipc) => {
            const buffer = ipc.buffer as ArrayBuffer;
            reply({ kind: "copied", buffer }, [buffer]);
          },
        ),
    );
    files.set(m.id, { encoder, chain: encoder.then(() => undefined) });
    return;
  }
  const file = files.get(m.id);
  // (a file that failed: its error has been told)
  if (!file) return;
  file.chain = file.chain
    .then(async () => {
      const encoder = await file.encoder;
      if (m.kind === "write") {
        await encoder.write(m.ipc);
        reply({ kind: "taken", id: m.id });
      } else {
        await encoder.finish();
        files.delete(m.id);
        reply({ kind: "finished", id: m.id });
      }
    })
    .catch((error: unknown) => {
      files.delete(m.id);
      reply({ kind: "error", id: m.id, message: error instanceof Error ? error.message : String(error) });
    });
});
