// Sources both cores share: the TypeScript core's copy is exactly what scripts/gen-core-twin.mjs
// writes from assembly/, so a fix made there reaches both engines.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
// @ts-expect-error: a plain ES module script without type declarations
import { SHARED, twinOf } from "../scripts/gen-core-twin.mjs";

const at = (path: string) => new URL(`../${path}`, import.meta.url);

describe("shared core sources", () => {
  for (const name of SHARED as string[]) {
    it(`bindings/core/${name} is generated from assembly/${name}`, () => {
      const source = readFileSync(at(`assembly/${name}`), "utf8");
      expect(readFileSync(at(`bindings/core/${name}`), "utf8")).toBe(twinOf(name, source));
    });
  }

  it("the copy differs from its source only in import specifiers and the first line", () => {
    const copy = (twinOf as (n: string, s: string) => string)("x.ts", 'import { a } from "./memory-access";\nlet x = 1;\n');
    expect(copy.split("\n").slice(1).join("\n")).toBe('import { a } from "./memory-access.js";\nlet x = 1;\n');
  });
});
