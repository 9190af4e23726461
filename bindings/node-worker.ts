// Node worker thread for parallel decoding (decode/parallel/parallel.ts): decodes the segments it is sent,
// one after another, and posts their windows back. A file's segments it reads itself.

import { parentPort } from "node:worker_threads";
import { setSyncInstances } from "./decode/windows/loader.js";
import { segmentServer } from "./decode/parallel/parallel.js";
import { setSourceOpener } from "./decode/workers/worker-factory.js";
import { fileRange } from "./node-file.js";

// a segment of a file is read here, by its path, straight into this thread's core
setSourceOpener(fileRange);
setSyncInstances(true);

const port = parentPort!;
port.on(
  "message",
  segmentServer((m, transfer) => port.postMessage(m, transfer)),
);
