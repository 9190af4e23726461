// Loaded with `node --import` before the CLI: counts the opens of the file COUNT_OPENS names (through
// node:fs and node:fs/promises, whose named exports follow the patched functions) and says the count on
// stderr at exit, so a test can see how many times a command read its trace.
import fs from "node:fs";
import fsp from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
const target = process.env.COUNT_OPENS;
let opens = 0;
for (const [obj, name] of [[fs, "openSync"], [fs, "open"], [fsp, "open"], [fs, "createReadStream"], [fs, "readFileSync"]]) {
  const f = obj[name];
  obj[name] = function (p, ...rest) {
    if (String(p) === target) opens++;
    return f.call(this, p, ...rest);
  };
}
syncBuiltinESMExports();
process.on("exit", () => process.stderr.write(`opens of the trace: ${opens}\n`));
