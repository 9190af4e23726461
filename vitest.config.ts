import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests import dist/bindings/index.js (the platform-neutral entry); this installs Node's file loading.
    setupFiles: ["test/helpers/setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
