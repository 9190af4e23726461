// The bundled sample is the generator's output, and decodes to the generator's event mix.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { openTrace } from "../dist/bindings/index.js";
import { generateTrace } from "../dist/bindings/generator/generate.js";

const SAMPLE = new URL("../examples/sample.etl", import.meta.url);

describe("bundled sample", () => {
  it("is exactly what scripts/make-sample.ts writes", () => {
    const made = generateTrace({ targetBytes: 400_000, compress: true, seed: 1, processors: 4, samples: true });
    expect(Buffer.compare(Buffer.from(made), readFileSync(SAMPLE))).toBe(0);
  });

  it("decodes to CLR events on four processors without warnings", async () => {
    const t = await openTrace(readFileSync(SAMPLE));
    expect(t.warnings).toEqual([]);
    expect(t.info.compressedBuffers).toBe(t.bufferCount - 1);
    const gcStarts = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 1 });
    const gcEnds = t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 2 });
    expect(gcStarts.length).toBeGreaterThan(0);
    expect(gcEnds.length).toBe(gcStarts.length);
    expect(t.query({ provider: "Microsoft-Windows-DotNETRuntime", eventId: 143 }).length).toBeGreaterThan(100);
    expect(new Set(t.events.processor)).toEqual(new Set([0, 1, 2, 3]));
    // generator and writer agree with the decoder on sizes: GCStart_V2 is 26 bytes
    for (const row of gcStarts) expect(row.payloadLength).toBe(26);
  });
});
