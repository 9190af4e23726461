// Writes the bundled sample traces: node dist/scripts/make-sample.js [examples/sample.etl [examples/sample.nettrace]]
import { writeFileSync } from "node:fs";
import { generateTrace } from "../bindings/generator/generate.js";
import { generateNettrace } from "../bindings/generator/generate-nettrace.js";

const out = process.argv[2] ?? "examples/sample.etl";
const bytes = generateTrace({ targetBytes: 400_000, compress: true, seed: 1, processors: 4, samples: true });
writeFileSync(out, bytes);
console.log(`wrote ${out}: ${bytes.length} bytes`);
// the same kind of content as the runtime writes it through EventPipe (V5)
const outNettrace = process.argv[3] ?? "examples/sample.nettrace";
const nettrace = generateNettrace({ targetBytes: 100_000, seed: 1, processors: 4, samples: true }).bytes;
writeFileSync(outNettrace, nettrace);
console.log(`wrote ${outNettrace}: ${nettrace.length} bytes`);
