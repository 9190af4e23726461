// Node worker thread for parallel decoding (decode/parallel.ts): decodes the segments it is sent,
// one after another, and posts their windows back.

import { parentPort } from "node:worker_threads";
import { segmentServer } from "./decode/parallel.js";

const port = parentPort!;
port.on("message", segmentServer((m, transfer) => port.postMessage(m, transfer)));
