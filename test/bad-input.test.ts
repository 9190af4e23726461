// Damaged input: never a crash, a hang or an uncaught RuntimeError; a typed error with the byte
// offset, or warnings and decoding resumes at the next good buffer; records before the damage kept.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { openTrace, EtlFormatError, TraceFormatError, TraceDecodeError, EtlDecodeError, type Trace } from "../dist/bindings/index.js";
import * as NT from "../dist/bindings/eventpipe.js";
import * as C from "../dist/assembly/codes.js";
import { HAVE_CORPUS, etlPath } from "./helpers/shared.js";
import { mulberry32 } from "../dist/bindings/generator/random.js";
import { syntheticTrace } from "./helpers/engines.js";

/** Identity of a row, enough to tell records apart (for messages). */
function keyOf(t: Trace, i: number): string {
  const r = t.events.row(i);
  return `${r.timestamp}|${r.providerGuid}|${r.eventId}|${r.opcode}|${r.payloadLength}|${Buffer.from(r.payload.subarray(0, 24)).toString("hex")}`;
}

/** Row indices of `full` in every buffer except `skip`. */
function rowsWithout(t: Trace, skip: number): number[] {
  const out: number[] = [];
  for (let b = 0; b < t.bufferCount; b++) {
    if (b === skip) continue;
    const { firstRow, rowCount } = t.buffer(b);
    for (let i = firstRow; i < firstRow + rowCount; i++) out.push(i);
  }
  return out;
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k);

/** Asserts that the rows of `t` are exactly rows `rows` of `full` (all columns, payload bytes). */
function expectRows(t: Trace, full: Trace, rows: number[]): void {
  expect(t.events.length).toBe(rows.length);
  const a = t.events.columns,
    b = full.events.columns;
  const guidA = [...t.providers].map((p) => p.guid),
    guidB = [...full.providers].map((p) => p.guid);
  // (timestamps as 32-bit halves: a sweep compares tens of millions of rows, and a BigInt each costs)
  const tsA = new Uint32Array(a.timestamp.buffer, a.timestamp.byteOffset, 2 * a.timestamp.length);
  const tsB = new Uint32Array(b.timestamp.buffer, b.timestamp.byteOffset, 2 * b.timestamp.length);
  for (let i = 0; i < rows.length; i++) {
    const j = rows[i];
    const same =
      tsA[2 * i] === tsB[2 * j] &&
      tsA[2 * i + 1] === tsB[2 * j + 1] &&
      a.eventId[i] === b.eventId[j] &&
      a.opcode[i] === b.opcode[j] &&
      a.version[i] === b.version[j] &&
      a.pid[i] === b.pid[j] &&
      a.tid[i] === b.tid[j] &&
      a.headerType[i] === b.headerType[j] &&
      a.payloadLength[i] === b.payloadLength[j] &&
      a.processor[i] === b.processor[j] &&
      guidA[a.provider[i]] === guidB[b.provider[j]] &&
      Buffer.compare(t.events.row(i).payload, full.events.row(j).payload) === 0;
    if (!same) expect({ row: i, key: keyOf(t, i) }).toEqual({ row: i, key: keyOf(full, j) });
  }
}

/** Opens damaged bytes; only EtlFormatError may escape, and it must name an offset in the input. */
async function openDamaged(bytes: Uint8Array): Promise<Trace | EtlFormatError> {
  try {
    return await openTrace(bytes);
  } catch (error) {
    expect(error).toBeInstanceOf(EtlFormatError);
    const e = error as EtlFormatError;
    expect(e.offset).toBeGreaterThanOrEqual(0);
    expect(e.offset).toBeLessThanOrEqual(bytes.length);
    expect(e.message).toContain(`byte offset ${e.offset}`);
    return e;
  }
}

describe("input that is not a trace", () => {
  it("rejects empty, short and random input with EtlFormatError at offset 0", async () => {
    const rand = mulberry32(7);
    const inputs = [new Uint8Array(0), new Uint8Array(10), new Uint8Array(0x47).fill(0xff)];
    for (const size of [0x48, 100, 4096, 65536, 300000]) {
      const b = new Uint8Array(size);
      for (let i = 0; i < size; i++) b[i] = (rand() * 256) | 0;
      inputs.push(b);
    }
    for (const input of inputs) {
      const r = await openDamaged(input);
      expect(r).toBeInstanceOf(EtlFormatError);
      expect((r as EtlFormatError).offset).toBe(0);
    }
  });

  it("rejects a plausible buffer whose first record is not the logfile header", async () => {
    const b = new Uint8Array(0x200).fill(0xff);
    const v = new DataView(b.buffer);
    v.setUint32(0, 0x200, true);
    v.setUint32(4, 0x48 + 0x50, true);
    v.setUint32(0x30, 0x48 + 0x50, true);
    v.setUint16(0x34, 0, true);
    v.setUint32(0x48, 0xc0130050, true); // an EVENT_HEADER64 record, not SYSTEM + HookId 0
    const r = await openDamaged(b);
    expect(r).toBeInstanceOf(EtlFormatError);
    expect((r as EtlFormatError).offset).toBe(0x48);
  });

  it("one error family for both formats: the format, the code's name, the old names as aliases", async () => {
    expect(EtlFormatError).toBe(TraceFormatError);
    expect(EtlDecodeError).toBe(TraceDecodeError);
    // .etl: too short for a buffer header (codes.ts E_TOO_SHORT)
    const etl = await openDamaged(new Uint8Array(10));
    expect(etl).toBeInstanceOf(TraceFormatError);
    expect([(etl as TraceFormatError).format, (etl as TraceFormatError).kind, (etl as TraceFormatError).code]).toEqual(["etl", "too-short", C.E_TOO_SHORT]);
    expect((etl as TraceFormatError).name).toBe("TraceFormatError");
    // .nettrace: the magic and the FastSerialization header, then a type name no Trace object has (eventpipe/reader.ts NE_BAD_OBJECT)
    const enc = new TextEncoder();
    const bytes = new Uint8Array(64);
    bytes.set(enc.encode("Nettrace"));
    new DataView(bytes.buffer).setUint32(8, 20, true);
    bytes.set(enc.encode("!FastSerialization.1"), 12);
    bytes.set([5, 5, 1, 4, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0], 32);
    bytes.set(enc.encode("Trash"), 47);
    const r = await openDamaged(bytes);
    expect(r).toBeInstanceOf(TraceFormatError);
    const e = r as TraceFormatError;
    const read = NT.readNettrace(bytes).error!;
    expect(read).toBeInstanceOf(NT.NettraceFormatError);
    expect([e.format, e.code, e.offset]).toEqual(["nettrace", read.code, read.offset]);
    const names: Record<number, string> = {
      [NT.NE_TRUNCATED]: "truncated",
      [NT.NE_BAD_MAGIC]: "bad-magic",
      [NT.NE_UNSUPPORTED_VERSION]: "unsupported-version",
      [NT.NE_BAD_OBJECT]: "bad-object",
      [NT.NE_BAD_TRACE]: "bad-trace",
    };
    expect(e.kind).toBe(names[read.code]);
  });
});

describe.skipIf(!HAVE_CORPUS)("damaged corpus traces", () => {
  const load = (name: string) => new Uint8Array(readFileSync(etlPath(name)));

  for (const name of ["gcevents.etl", "smallEtlFile.etl", "net.4.5.2.x64.etl", "tx-CrossMachineHTTP.etl"]) {
    it(`${name}: truncation at every buffer boundary keeps every earlier record, and is not complete`, async () => {
      const bytes = load(name);
      const full = await openTrace(bytes);
      // BuffersWritten is the file's count in sequential mode; circular files (gcevents) cannot be checked.
      const sequential = (full.info.logFileMode & 0xe) === 0;
      expect(full.complete).toBe(true);
      for (let b = 1; b <= full.bufferCount; b++) {
        const cut = b < full.bufferCount ? full.buffer(b).fileOffset : bytes.length;
        const t = (await openDamaged(bytes.subarray(0, cut))) as Trace;
        const expected = b < full.bufferCount ? full.buffer(b).firstRow : full.events.length;
        expectRows(t, full, range(0, expected));
        expect(t.warnings).toEqual([]);
        const whole = b === full.bufferCount;
        expect({ cut, complete: t.complete, reason: t.incomplete?.reason }).toEqual({
          cut,
          complete: whole || !sequential,
          reason: whole || !sequential ? undefined : "missing-buffers",
        });
        expect(t.decodedBytes).toBe(cut);
        t.dispose(); // (its memory back to the pool: the next cut's decode reuses it)
      }
    }, 300_000); // (net.4.5.2.x64.etl: 360 cuts, 32 million rows compared; 70 s alone, twice that beside other files)
  }

  for (const name of ["gcevents.etl", "smallEtlFile.etl", "net.4.5.2.x64.etl"]) {
    it(`${name}: truncation inside buffers and records keeps a prefix and warns`, async () => {
      const bytes = load(name);
      const full = await openTrace(bytes);
      const rand = mulberry32(11);
      const cuts = new Set<number>([1, 0x47, 0x48, 0x50, 0x100]);
      for (let b = 0; b < full.bufferCount && cuts.size < 60; b++) {
        const { fileOffset, bufferSize } = full.buffer(b);
        cuts.add(fileOffset + 0x48 + Math.floor(rand() * (bufferSize - 0x48)));
        cuts.add(fileOffset + 1);
        cuts.add(fileOffset + 0x47);
      }
      for (const cut of [...cuts].filter((c) => c < bytes.length)) {
        const r = await openDamaged(bytes.subarray(0, cut));
        if (r instanceof EtlFormatError) {
          // only a cut before the logfile header record completes may be refused
          expect(cut).toBeLessThan(full.buffer(0).fileOffset + 0x48 + full.events.row(0).record.length);
          continue;
        }
        const got = r.events.length;
        expectRows(r, full, range(0, got));
        // every buffer wholly before the cut is kept
        let whole = 0;
        for (let b = 0; b < full.bufferCount; b++) {
          const buf = full.buffer(b);
          if (buf.fileOffset + buf.bufferSize <= cut) whole = buf.firstRow + buf.rowCount;
        }
        expect(got).toBeGreaterThanOrEqual(whole);
        // Losing records is always reported, except when the input ends in a few zero bytes
        // (indistinguishable from a zero-filled tail).
        const lastStart = [...Array(full.bufferCount).keys()]
          .map((i) => full.buffer(i).fileOffset)
          .filter((o) => o < cut)
          .pop()!;
        const tailIsZero = cut - lastStart < 0x48 && bytes.subarray(lastStart, cut).every((x) => x === 0);
        if (got < full.events.length && !tailIsZero) expect(r.warnings.length).toBeGreaterThan(0);
        // A cut that leaves a buffer's header ends inside that buffer: never complete. Shorter tails
        // cannot be told from padding, but a sequential file's BuffersWritten still counts the buffer.
        const sequential = (full.info.logFileMode & 0xe) === 0;
        if (cut - lastStart >= 0x48) {
          expect({ cut, reason: r.incomplete?.reason, offset: r.incomplete?.offset }).toEqual({ cut, reason: "truncated-buffer", offset: lastStart });
        } else if (sequential) {
          expect({ cut, reason: r.incomplete?.reason }).toEqual({ cut, reason: "missing-buffers" });
        }
        expect(r.complete).toBe(r.incomplete === undefined);
        expect([r.inputBytes, r.decodedBytes]).toEqual([cut, cut]);
      }
    }, 120_000);
  }

  it("a zeroed BufferSize skips that buffer with a warning and resumes at the next", async () => {
    const bytes = load("gcevents.etl");
    const full = await openTrace(bytes);
    for (let b = 1; b < full.bufferCount; b++) {
      const damaged = bytes.slice();
      new DataView(damaged.buffer).setUint32(full.buffer(b).fileOffset, 0, true);
      const t = (await openDamaged(damaged)) as Trace;
      expectRows(t, full, rowsWithout(full, b));
      // Inside the file the skipped buffer is reported as skipped bytes; at the end as trailing garbage.
      const kind = b < full.bufferCount - 1 ? "skipped-bytes" : "trailing-garbage";
      expect(t.warnings.map((w) => w.kind)).toEqual([kind]);
      expect(t.warnings[0].offset).toBe(full.buffer(b).fileOffset);
      // damage the decoder steps over is a warning; the decode still reached the end (gcevents is circular)
      expect(t.complete).toBe(true);
    }
  });

  it("an implausible BufferSize warns with its offset and resumes at the next buffer", async () => {
    const bytes = load("net.4.5.2.x64.etl");
    const full = await openTrace(bytes);
    for (const b of [1, 7, 100, 359]) {
      const damaged = bytes.slice();
      const at = full.buffer(b).fileOffset;
      new DataView(damaged.buffer).setUint32(at, 0x7fffffff, true);
      const t = (await openDamaged(damaged)) as Trace;
      expectRows(t, full, rowsWithout(full, b));
      const w = t.warnings.find((x) => x.kind === "bad-buffer-size");
      expect(w?.offset).toBe(at);
      // one buffer fewer than BuffersWritten, but the warning says why: damage, not a cut input
      expect({ b, complete: t.complete, incomplete: t.incomplete }).toEqual({ b, complete: true, incomplete: undefined });
    }
  });

  it("compressed buffers that each claim 64 MiB and fail to decompress take no memory of their own: the decode ends complete under a 192 MiB limit, both engines", async () => {
    const bytes = syntheticTrace(12, { compress: true });
    const full = await openTrace(bytes);
    expect(full.bufferCount).toBeGreaterThan(8);
    // every buffer after the first says its records fill 64 MiB less a byte (Offset, 0x30): each reserves that
    // much to decompress into, and its stream ends long before
    const damaged = bytes.slice();
    const view = new DataView(damaged.buffer);
    for (let b = 1; b < full.bufferCount; b++) view.setUint32(full.buffer(b).fileOffset + 0x30, C.MAX_BUFFER - 1, true);
    for (const engine of ["wasm", "js"] as const) {
      const t = await openTrace(damaged, { engine, memoryLimit: 192 << 20 });
      // (each kept its reservation before, in a block of its own: the limit stopped the decode at the third)
      expect({ engine, complete: t.complete, buffers: t.bufferCount }).toEqual({ engine, complete: true, buffers: full.bufferCount });
      expect(t.warnings.filter((w) => w.code === C.W_CAPACITY)).toEqual([]);
      const failed = t.warnings.filter((w) => w.code === C.W_DECOMPRESS_FAILED).map((w) => w.offset);
      expect(failed).toEqual(Array.from({ length: full.bufferCount - 1 }, (_, i) => full.buffer(i + 1).fileOffset));
      t.dispose();
    }
    full.dispose();
  });

  it("candidates a resync rejects (compressed, claiming ever more bytes, failing to decompress) keep no arena block each: complete under a 192 MiB limit, both engines", async () => {
    const bytes = syntheticTrace(12, { compress: true });
    const full = await openTrace(bytes);
    expect(full.bufferCount).toBeGreaterThan(8);
    const damaged = bytes.slice();
    const view = new DataView(damaged.buffer);
    // buffer 1's BufferSize is impossible: the walk scans for the next buffer, and every later one is a
    // candidate judged tentatively. Each says its records fill 24 MiB, 28 MiB, ... (Offset, 0x30), more
    // than the window's arena block and than the candidate before: each reserves a block of that size,
    // and its stream fails long before
    view.setUint32(full.buffer(1).fileOffset, 0x10, true);
    for (let b = 2; b < full.bufferCount; b++) view.setUint32(full.buffer(b).fileOffset + 0x30, Math.min(C.MAX_BUFFER - 1, (20 + 4 * b) << 20), true);
    for (const engine of ["wasm", "js"] as const) {
      const t = await openTrace(damaged, { engine, memoryLimit: 192 << 20 });
      // (a rejected candidate kept its list entry before, so the next, larger one took a block beside it)
      expect({ engine, capacity: t.warnings.filter((w) => w.code === C.W_CAPACITY).length, reason: t.incomplete?.reason }).toEqual({
        engine,
        capacity: 0,
        reason: undefined,
      });
      // the scan rejected every candidate: one warning for buffer 1, the rest skipped as bytes
      expect(t.bufferCount).toBe(1);
      expect(t.warnings.map((w) => [w.code, w.offset])).toEqual([
        [C.W_BAD_BUFFER_SIZE, full.buffer(1).fileOffset],
        [C.W_TRAILING_GARBAGE, full.buffer(1).fileOffset],
      ]);
      t.dispose();
    }
    full.dispose();
  });

  it("an oversized or zero record Size abandons only the rest of that buffer", async () => {
    const bytes = load("gcevents.etl");
    const full = await openTrace(bytes);
    for (const [value, kind] of [
      [0xfff8, "record-overruns"],
      [0, "record-size-zero"],
      [0x20, "record-too-small"],
    ] as const) {
      const row = full.events.row(20);
      const buf = [...Array(full.bufferCount).keys()].map((i) => full.buffer(i)).find((x) => x.firstRow <= 20 && 20 < x.firstRow + x.rowCount)!;
      const recordAt = buf.fileOffset + 0x48 + (row.recordOffset - full.events.row(buf.firstRow).recordOffset);
      const damaged = bytes.slice();
      new DataView(damaged.buffer).setUint16(recordAt, value, true); // EVENT_HEADER: Size at offset 0
      const t = (await openDamaged(damaged)) as Trace;
      expectRows(t, full, [...range(0, 20), ...range(buf.firstRow + buf.rowCount, full.events.length)]);
      const w = t.warnings.find((x) => x.kind === kind)!;
      expect(w).toBeDefined();
      expect(w.offset).toBe(buf.fileOffset);
      expect(w.recordOffset).toBe(recordAt - buf.fileOffset);
    }
  });

  it("an unknown header type becomes an opaque record and the walk goes on", async () => {
    const bytes = load("gcevents.etl");
    const full = await openTrace(bytes);
    const buf = full.buffer(1);
    const at = buf.fileOffset + 0x48;
    const damaged = bytes.slice();
    damaged[at + 2] = 0x3c; // header type byte of the buffer's first record
    const t = (await openDamaged(damaged)) as Trace;
    expect(t.events.length).toBe(full.events.length);
    const r = t.events.row(buf.firstRow);
    expect(r.headerType).toBe(0x3c);
    expect(r.payloadLength).toBe(full.events.row(buf.firstRow).record.length);
    expect(t.events.row(buf.firstRow + 1).timestamp).toBe(full.events.row(buf.firstRow + 1).timestamp);
    expect(t.events.row(full.events.length - 1).timestamp).toBe(full.events.row(full.events.length - 1).timestamp);
    expect(t.warnings.map((w) => w.kind)).toEqual(["opaque-record"]);
  });

  it("a corrupted XPRESS stream skips that buffer with a warning", async () => {
    const bytes = load("net.4.5.2.x64.etl");
    const full = await openTrace(bytes);
    for (const b of [1, 50, 359]) {
      const damaged = bytes.slice();
      const at = full.buffer(b).fileOffset;
      // First flag word all ones: the first token is a match with nothing before it.
      new DataView(damaged.buffer).setUint32(at + 0x48, 0xffffffff, true);
      const t = (await openDamaged(damaged)) as Trace;
      expectRows(t, full, rowsWithout(full, b));
      const w = t.warnings.find((x) => x.kind === "decompress-failed");
      expect(w?.offset).toBe(at);
      expect(t.buffer(b).skipped).toBe(true);
      expect(t.complete).toBe(true);
    }
  });

  it("random garbage between buffers is skipped and reported", async () => {
    const bytes = load("gcevents.etl");
    const full = await openTrace(bytes);
    const cut = full.buffer(2).fileOffset;
    const rand = mulberry32(3);
    const garbage = new Uint8Array(12345);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (rand() * 256) | 0;
    const damaged = new Uint8Array(bytes.length + garbage.length);
    damaged.set(bytes.subarray(0, cut));
    damaged.set(garbage, cut);
    damaged.set(bytes.subarray(cut), cut + garbage.length);
    const t = (await openDamaged(damaged)) as Trace;
    expectRows(t, full, range(0, full.events.length));
    const w = t.warnings.find((x) => x.kind === "skipped-bytes")!;
    expect(w.offset).toBe(cut);
    expect(w.detail).toBe(garbage.length);
  });

  for (const name of ["smallEtlFile.etl", "gcevents.etl", "net.4.5.2.x64.etl"]) {
    it(`${name}: random byte mutations never crash`, async () => {
      const bytes = load(name);
      const rand = mulberry32(name.length);
      const rounds = name.startsWith("net") ? 40 : 300;
      for (let round = 0; round < rounds; round++) {
        const damaged = bytes.slice();
        const flips = 1 + Math.floor(rand() * 16);
        for (let k = 0; k < flips; k++) damaged[Math.floor(rand() * damaged.length)] = (rand() * 256) | 0;
        const r = await openDamaged(damaged);
        if (!(r instanceof EtlFormatError)) {
          // the tables stay readable
          for (let i = 0; i < r.events.length; i += Math.max(1, r.events.length >> 6)) keyOf(r, i);
          r.events.timeOrder();
        }
      }
    }, 120_000);
  }

  it("a trace fed in odd chunk sizes decodes as a whole one does", async () => {
    const bytes = load("net.4.5.2.x64.etl");
    const full = await openTrace(bytes);
    function* pieces() {
      const rand = mulberry32(5);
      for (let i = 0; i < bytes.length; ) {
        const n = 1 + Math.floor(rand() * 200000);
        yield bytes.subarray(i, i + n);
        i += n;
      }
    }
    const t = await openTrace(pieces(), { chunkBytes: 100000 });
    expectRows(t, full, range(0, full.events.length));
  });
});

describe("buffer status", () => {
  it("a buffer without records after an abandoned one is not marked abandoned", async () => {
    const { EtlWriter } = await import("../dist/bindings/generator/etl-writer.js");
    const w = new EtlWriter({ bufferSize: 4096 });
    for (let k = 0; k < 300; k++) {
      w.event(0, {
        headerType: 0x13,
        provider: "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4",
        id: 1,
        version: 2,
        level: 4,
        opcode: 1,
        task: 1,
        keywords: 1n,
        pid: 1,
        tid: 2,
        ts: 2_000_000n + BigInt(k),
        payload: new Uint8Array(26),
      });
    }
    const file = w.finish();
    const v = new DataView(file.buffer);
    const first = await openTrace(file);
    v.setUint32(first.buffer(1).fileOffset + 0x48, 0x12345678, true); // buffer 1: a corrupt first record
    const b2 = first.buffer(2).fileOffset;
    v.setUint32(b2 + 4, 0x48, true); // buffer 2: empty
    v.setUint32(b2 + 0x30, 0x48, true);
    const t = await openTrace(file);
    expect(t.warnings.map((x) => x.kind)).toContain("corrupt-marker");
    expect(t.buffer(2).rowCount).toBe(0);
    expect(t.buffer(1).abandoned).toBe(true);
    expect(t.buffer(2).abandoned).toBe(false);
    expect(t.buffer(3).abandoned).toBe(false);
    expect(t.events.length).toBe(first.events.length - first.buffer(1).rowCount - first.buffer(2).rowCount);
  });
});
