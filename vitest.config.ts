import { basename } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// The files that take longest (minutes in CI), started first so that the two workers finish together.
// Vitest orders by the durations of the last run when it has them; a clean clone has none, and its
// default order left the longest file running alone at the end.
const LONGEST = ["stream.test.ts", "cli.test.ts", "browser.test.ts", "fuzz.test.ts", "export.test.ts", "differential.test.ts", "bad-input.test.ts", "api.test.ts"];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST.indexOf(basename(f.moduleId));
      return i < 0 ? LONGEST.length : i;
    };
    const sorted = await super.sort(files);
    // (stable: files not listed keep the order the base sequencer gave them)
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map((x) => x.f);
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests import dist/bindings/index.js (the platform-neutral entry); this installs Node's file loading.
    setupFiles: ["test/helpers/setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two files at once on two cores (Vitest's default is one fewer worker than cores): most tests
    // are single-threaded, and the suite took 17 minutes file after file.
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
  },
});
