import { RecordBatchReader } from "apache-arrow";
import { createReadStream, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
const [a, b] = process.argv.slice(2);
const files = (d, p = "") => readdirSync(join(d, p)).flatMap((f) => statSync(join(d, p, f)).isDirectory() ? files(d, join(p, f)) : [join(p, f)]);
async function* rows(path) { const r = await RecordBatchReader.from(createReadStream(path)); for await (const batch of r) for (let i = 0; i < batch.numRows; i++) yield batch.get(i).toJSON(); }
let bad = 0;
for (const f of files(a)) {
  const ia = rows(join(a, f)), ib = rows(join(b, f));
  let n = 0;
  for (;;) {
    const x = await ia.next(), y = await ib.next();
    if (x.done || y.done) { if (x.done !== y.done) { console.log(f, "length differs at", n); bad++; } break; }
    const sx = JSON.stringify(x.value, (k, v) => typeof v === "bigint" ? v.toString() : v), sy = JSON.stringify(y.value, (k, v) => typeof v === "bigint" ? v.toString() : v);
    if (sx !== sy) { console.log(f, "row", n, "\n", sx.slice(0, 400), "\n", sy.slice(0, 400)); bad++; break; }
    n++;
  }
}
console.log("differences", bad);
