// A minimal static file server on 127.0.0.1 for browser tests (the benchmark's own).
export { serve } from "../../dist/bench/static-server.js";
