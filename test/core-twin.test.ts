// Sources both cores share: the TypeScript core's copy is exactly what scripts/gen-core-twin.mjs
// writes from assembly/, so a fix made there reaches both engines.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
// @ts-expect-error: a plain ES module script without type declarations
import { SHARED, twinOf } from "../scripts/gen-core-twin.mjs";

const at = (path: string) => new URL(`../${path}`, import.meta.url);

describe("shared core sources", () => {
  for (const name of SHARED as string[]) {
    it(`bindings/core/generated/${name} is generated from assembly/${name}`, () => {
      const source = readFileSync(at(`assembly/${name}`), "utf8");
      expect(readFileSync(at(`bindings/core/generated/${name}`), "utf8")).toBe(twinOf(name, source));
    });
  }

  it("the copy differs from its source only in import specifiers, decorators, aligned accessors and the first line", () => {
    const twin = twinOf as (n: string, s: string) => string;
    const copy = twin("x.ts", 'import { a } from "./memory-access";\nimport { B } from "./codes";\nimport { c } from "./tables";\nlet x = 1;\n');
    expect(copy.split("\n").slice(1).join("\n")).toBe(
      'import { a } from "../memory-access.js";\nimport { B } from "../../../assembly/codes.js";\nimport { c } from "./tables.js";\nlet x = 1;\n',
    );
    // an aligned read inside an aligned write: each written out as the typed-array element it is
    const body = twin("y.ts", "@inline function f(m: Mem, p: usize): void { st32a(m, p + 8, ld32a(m, f(m, p)) + 1); }\n");
    expect(body.split("\n")[1]).toBe("function f(m: Mem, p: usize): void { (m.u32[(p + 8) >>> 2] = m.u32[(f(m, p)) >>> 2] + 1); }");
  });
});
