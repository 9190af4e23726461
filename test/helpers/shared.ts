// Locating ../shared/corpus. With CI=true the corpus is required; otherwise tests that need it are
// skipped with a printed notice (a clone of the repository alone has no ../shared).

import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

export const SHARED = fileURLToPath(new URL("../../../shared/", import.meta.url));
export const CORPUS = join(SHARED, "corpus");
export const HAVE_CORPUS = existsSync(join(CORPUS, "etl"));

if (!HAVE_CORPUS) {
  if (process.env.CI === "true") throw new Error(`CI=true but the corpus is missing at ${CORPUS}`);
  console.warn(`notice: ${CORPUS} not found; corpus tests are skipped`);
}

export function corpusFiles(): string[] {
  return HAVE_CORPUS
    ? readdirSync(join(CORPUS, "etl"))
        .filter((f) => f.endsWith(".etl"))
        .sort()
    : [];
}

export const etlPath = (name: string) => join(CORPUS, "etl", name);
export const referencePath = (name: string) => join(CORPUS, "reference", name.replace(/\.etl$/, ".jsonl.gz"));
