// Writes the bundled sample trace: node dist/scripts/make-sample.js examples/sample.etl
import { writeFileSync } from "node:fs";
import { generateTrace } from "../bindings/generator/generate.js";

const out = process.argv[2] ?? "examples/sample.etl";
const bytes = generateTrace({ targetBytes: 400_000, compress: true, seed: 1, processors: 4, samples: true });
writeFileSync(out, bytes);
console.log(`wrote ${out}: ${bytes.length} bytes`);
