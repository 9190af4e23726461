// One synthetic trace per record header type, written by bench/etl-writer.ts, read back field by field.

import { describe, expect, it } from "vitest";
import { openTrace, type EventRow } from "../dist/bindings/index.js";
import { EtlWriter, PayloadBuilder, records } from "../dist/bindings/generator/etl-writer.js";

const CLR = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4";
const PROCESS = "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c";
const IMAGE = "2cb15d1d-5fc1-11d2-abe1-00a0c911f518";
const MY = "a1b2c3d4-0001-0002-0304-05060708090a";
const ACTIVITY = "11111111-2222-3333-4444-555555555555";
const RELATED = "99999999-8888-7777-6666-555555555555";

const bytesOf = (...xs: number[]) => new Uint8Array(xs);
const payload = (n: number, seed = 1) => new Uint8Array(n).map((_, i) => (i * 31 + seed) & 0xff);

function expectPayload(row: EventRow, want: Uint8Array) {
  expect(row.payloadLength).toBe(want.length);
  expect(Buffer.compare(row.payload, want)).toBe(0);
}

for (const compress of [false, true]) {
  for (const pointerSize of [8, 4] as const) {
    describe(`synthetic trace (${compress ? "compressed" : "plain"}, ${pointerSize * 8}-bit logfile header)`, async () => {
      const w = new EtlWriter({
        compress,
        pointerSize,
        bufferSize: 4096,
        numberOfProcessors: 3,
        perfFreq: 3_000_000n,
        startTime: 132000000000000000n,
        loggerName: "synthetic",
        logFileName: "D:\\s.etl",
        anchor: 5000n,
      });
      const written: { ts: bigint; check: (r: EventRow) => void }[] = [];
      let ts = 5000n;
      const next = () => (ts += 7n);

      // system family, both flavours, PEBS and PMC extensions
      for (const ht of [0x01, 0x02, 0x03, 0x04, 0x10, 0x11] as const) {
        const t = next();
        const p = payload(20 + ht, ht);
        const pmc = ht === 0x11 ? [1n, 2n] : undefined;
        const pebs = ht === 0x10 || ht === 0x11 ? 0x1234n : undefined;
        w.system(ht % 3, { headerType: ht, hookId: 0x0301, version: 3, pid: 100 + ht, tid: 200 + ht, ts: t, payload: p, pebs, pmc });
        written.push({
          ts: t,
          check: (r) => {
            expect(r.headerType).toBe(ht);
            expect(r.providerGuid).toBe(PROCESS);
            expect(r.group).toBe(3);
            expect(r.opcode).toBe(1);
            expect(r.version).toBe(3);
            expect(r.eventId).toBe(0);
            expect(r.pointerSize).toBe([0x01, 0x03, 0x10].includes(ht) ? 4 : 8);
            if (ht >= 0x10) {
              expect(r.pid).toBeNull();
              expect(r.tid).toBeNull();
            } else {
              expect(r.pid).toBe(100 + ht);
              expect(r.tid).toBe(200 + ht);
            }
            expectPayload(r, p);
          },
        });
      }
      // HookId 0x030A is Image Load
      {
        const t = next();
        w.system(0, { headerType: 0x02, hookId: 0x030a, version: 3, pid: 1, tid: 2, ts: t, payload: payload(8) });
        written.push({
          ts: t,
          check: (r) => {
            expect(r.providerGuid).toBe(IMAGE);
            expect(r.group).toBe(3);
            expect(r.opcode).toBe(10);
          },
        });
      }
      // classic and instance headers
      for (const ht of [0x0a, 0x14, 0x0b, 0x15] as const) {
        const t = next();
        const p = payload(33, ht);
        w.classic(1, {
          headerType: ht,
          guid: MY,
          opcode: 40 + ht,
          level: 3,
          version: 2,
          pid: 7,
          tid: 8,
          ts: t,
          payload: p,
          instanceId: 5,
          parentInstanceId: 6,
          parentGuid: RELATED,
        });
        written.push({
          ts: t,
          check: (r) => {
            expect(r.headerType).toBe(ht);
            expect(r.providerGuid).toBe(MY);
            expect(r.opcode).toBe(40 + ht);
            expect(r.level).toBe(3);
            expect(r.version).toBe(2);
            expect([r.pid, r.tid]).toEqual([7, 8]);
            expect(r.pointerSize).toBe(ht === 0x0a || ht === 0x0b ? 4 : 8);
            expectPayload(r, p);
            if (ht === 0x0b || ht === 0x15) {
              const rec = r.record;
              expect(new DataView(rec.buffer, rec.byteOffset).getUint32(0x30, true)).toBe(5);
            }
          },
        });
      }
      // EVENT_HEADER with extended items: related activity, stacks, TraceLogging schema, provider traits
      for (const ht of [0x12, 0x13] as const) {
        const t = next();
        const p = payload(41, ht);
        const stack64 = new PayloadBuilder().u64(77n).u64(0x7ff812345678n).u64(0x7ff8abcdef00n).build();
        const stack32 = new PayloadBuilder().u64(78n).u32(0x401000).u32(0x402000).u32(0x403000).build();
        const traits = new PayloadBuilder()
          .u16(2 + 7 + 1)
          .ansiz("MyProv!")
          .build();
        traits[0] = traits.length;
        const schema = new PayloadBuilder().u16(0).u8(0).ansiz("Evt").ansiz("f").u8(8).build();
        const ext = [
          { type: 1, data: new PayloadBuilder().guid(RELATED).build() },
          { type: ht === 0x12 ? 5 : 6, data: ht === 0x12 ? stack32 : stack64 },
          { type: 11, data: schema },
          { type: 12, data: traits },
        ];
        w.event(2, {
          headerType: ht,
          provider: CLR,
          id: 80,
          version: 1,
          channel: 11,
          level: 2,
          opcode: 1,
          task: 7,
          keywords: 0x8000000200008000n,
          pid: 30,
          tid: 31,
          ts: t,
          activityId: ACTIVITY,
          ext,
          payload: p,
        });
        written.push({
          ts: t,
          check: (r) => {
            expect(r.headerType).toBe(ht);
            expect(r.providerGuid).toBe(CLR);
            expect(r.providerName).toBe("Microsoft-Windows-DotNETRuntime");
            expect([r.eventId, r.version, r.channel, r.level, r.opcode, r.task]).toEqual([80, 1, 11, 2, 1, 7]);
            expect(r.keywords).toBe(0x8000000200008000n);
            expect([r.pid, r.tid]).toEqual([30, 31]);
            expect(r.headerFlags).toBe(1);
            expect(r.extTypes).toEqual([1, ht === 0x12 ? 5 : 6, 11, 12]);
            expect(r.activityId).toBe(ACTIVITY);
            expect(r.relatedActivityId).toBe(RELATED);
            expect(r.stack).toEqual(ht === 0x12 ? [0x401000n, 0x402000n, 0x403000n] : [0x7ff812345678n, 0x7ff8abcdef00n]);
            expect(r.pointerSize).toBe(ht === 0x12 ? 4 : 8);
            expectPayload(r, p);
          },
        });
      }
      // EVENT_HEADER without items, empty payload
      {
        const t = next();
        w.event(0, {
          headerType: 0x13,
          provider: MY,
          id: 65535,
          version: 255,
          level: 5,
          opcode: 255,
          task: 65535,
          keywords: 0xffffffffffffffffn,
          pid: 0,
          tid: 0,
          ts: t,
          payload: new Uint8Array(0),
        });
        written.push({
          ts: t,
          check: (r) => {
            expect([r.eventId, r.version, r.opcode, r.task]).toEqual([65535, 255, 255, 65535]);
            expect(r.keywords).toBe(0xffffffffffffffffn);
            expect(r.extTypes).toEqual([]);
            expect(r.payloadLength).toBe(0);
            expect(r.relatedActivityId).toBeNull();
          },
        });
      }
      // WPP messages: all optional fields, GUID + timestamp + system info, component id, none
      const messages: [number, number][] = [
        [0x01 | 0x02 | 0x08 | 0x20 | 0x80, 1],
        [0x02 | 0x08 | 0x20 | 0x40, 2],
        [0x04 | 0x08, 3],
        [0, 4],
      ];
      for (const [flags, n] of messages) {
        const t = next();
        const p = payload(12, n);
        const hasTs = (flags & 0x08) !== 0;
        w.message(1, {
          messageNumber: 40 + n,
          optionFlags: flags,
          sequence: 9,
          guid: MY,
          componentId: 12,
          ts: hasTs ? t : undefined,
          pid: 55,
          tid: 56,
          payload: p,
        });
        written.push({
          ts: hasTs ? t : -1n,
          check: (r) => {
            expect(r.headerType).toBe(0x0f);
            expect(r.eventId).toBe(40 + n);
            expect(r.headerFlags).toBe(flags);
            expect(r.providerGuid).toBe(flags & 0x02 ? MY : "00000000-0000-0000-0000-000000000000");
            if (flags & 0x20) expect([r.pid, r.tid]).toEqual([55, 56]);
            else expect(r.pid).toBeNull();
            if (hasTs) expect(r.timestamp).toBe(t);
            else expect(r.status & 0x4000).toBe(0x4000);
            expect(r.pointerSize).toBe(flags & 0x40 ? 4 : flags & 0x80 ? 8 : pointerSize);
            expectPayload(r, p);
          },
        });
      }
      // many events on three processors, forcing several buffers each
      for (let k = 0; k < 600; k++) {
        const t = next();
        const p = new PayloadBuilder()
          .u32(k)
          .utf16z("event " + k)
          .build();
        w.event(k % 3, {
          headerType: 0x13,
          provider: CLR,
          id: 1,
          version: 2,
          level: 4,
          opcode: 1,
          task: 1,
          keywords: 1n,
          pid: 9,
          tid: 10 + (k % 3),
          ts: t,
          payload: p,
        });
        written.push({
          ts: t,
          check: (r) => {
            expect(r.processor).toBe(k % 3);
            expect(r.tid).toBe(10 + (k % 3));
            expectPayload(r, p);
          },
        });
      }
      const file = w.finish();
      const trace = await openTrace(file);

      it("decodes every record without warnings", () => {
        expect(trace.warnings).toEqual([]);
        expect(trace.events.length).toBe(written.length + 1);
        expect(trace.info.compressedBuffers).toBe(compress ? trace.bufferCount - 1 : 0);
        expect(trace.bufferCount).toBeGreaterThan(6);
      });

      it("reads the logfile header", () => {
        const i = trace.info;
        expect(i.bufferSize).toBe(4096);
        expect(i.pointerSize).toBe(pointerSize);
        expect(i.headerPointerSize).toBe(pointerSize);
        expect(i.numberOfProcessors).toBe(3);
        expect(i.perfFreq).toBe(3_000_000n);
        expect(i.startFiletime).toBe(132000000000000000n);
        expect(i.loggerName).toBe("synthetic");
        expect(i.logFileName).toBe("D:\\s.etl");
        expect(i.clockType).toBe(1);
        expect(i.buffersWritten).toBe(trace.bufferCount);
        expect(i.headerTimestamp).toBe(5000n);
        expect(i.timeZone?.standardName).toBe("Coordinated Universal Time");
        const header = trace.events.row(0);
        expect(header.headerType).toBe(pointerSize === 4 ? 1 : 2);
        expect(header.relativeMSec).toBe(0);
      });

      it("gives every field of every record back", () => {
        // Rows come in file order: buffers flush as they fill, so match records by timestamp + payload.
        const rowsByTs = new Map<bigint, EventRow[]>();
        for (let i = 1; i < trace.events.length; i++) {
          const r = trace.events.row(i);
          if (r.status & 0x4000) continue; // timestamp inherited from the record before
          const list = rowsByTs.get(r.timestamp) ?? [];
          list.push(r);
          rowsByTs.set(r.timestamp, list);
        }
        let checked = 0;
        for (const wr of written) {
          if (wr.ts < 0n) continue; // inherited timestamps are checked below
          const candidates = rowsByTs.get(wr.ts)!;
          expect(candidates).toHaveLength(1);
          wr.check(candidates[0]);
          checked++;
        }
        const inherited: EventRow[] = [];
        for (const r of trace.events) if (r.status & 0x4000) inherited.push(r.clone());
        expect(inherited).toHaveLength(1);
        written.filter((x) => x.ts < 0n).forEach((x) => x.check(inherited[0]));
        expect(checked).toBe(written.length - 1);
      });

      it("merges the processors' buffers into time order", () => {
        const order = trace.events.timeOrder();
        const seen: bigint[] = [];
        for (const r of trace.events.byTime()) seen.push(r.timestamp);
        for (let k = 1; k < seen.length; k++) expect(seen[k] >= seen[k - 1]).toBe(true);
        expect(order.length).toBe(trace.events.length);
        // file order differs from time order: three processors interleave
        expect([...order].some((v, k) => v !== k)).toBe(true);
        expect(trace.events.row(order[order.length - 1]).timestamp).toBe(ts);
      });

      it("converts times with the header's frequency", () => {
        const r = trace.events.row(trace.events.timeOrder()[trace.events.length - 1]);
        const ticks = r.timestamp - 5000n;
        expect(r.relativeMSec).toBeCloseTo((Number(ticks) * 1000) / 3_000_000, 9);
        expect(r.filetime).toBe(132000000000000000n + (ticks * 10_000_000n) / 3_000_000n);
      });
    });
  }
}

describe("records the writer cannot express", () => {
  it("keeps an unknown header type as an opaque record", async () => {
    const w = new EtlWriter({});
    const rec = records.event({
      headerType: 0x13,
      provider: MY,
      id: 1,
      version: 0,
      level: 4,
      opcode: 0,
      task: 0,
      keywords: 0n,
      pid: 1,
      tid: 2,
      ts: 6000n,
      payload: bytesOf(1, 2, 3),
    });
    rec[2] = 0x0d; // ERROR header type: layout unknown, Size at offset 0
    w.raw(0, rec, 6000n);
    w.event(0, {
      headerType: 0x13,
      provider: MY,
      id: 2,
      version: 0,
      level: 4,
      opcode: 0,
      task: 0,
      keywords: 0n,
      pid: 1,
      tid: 2,
      ts: 6001n,
      payload: bytesOf(9),
    });
    const t = await openTrace(w.finish());
    expect(t.events.length).toBe(3);
    const opaque = t.events.row(1);
    expect(opaque.headerType).toBe(0x0d);
    expect(opaque.headerTypeName).toBe("ERROR");
    expect(opaque.payloadLength).toBe(rec.length);
    expect(opaque.pid).toBeNull();
    expect(t.events.row(2).eventId).toBe(2);
    expect(t.warnings.map((x) => x.kind)).toEqual(["opaque-record"]);
  });

  it("flags extended items that overrun their record and keeps the rest as user data", async () => {
    const w = new EtlWriter({});
    const rec = records.event({
      headerType: 0x13,
      provider: MY,
      id: 1,
      version: 0,
      level: 4,
      opcode: 0,
      task: 0,
      keywords: 0n,
      pid: 1,
      tid: 2,
      ts: 6000n,
      ext: [{ type: 1, data: new Uint8Array(16) }],
      payload: new Uint8Array(8),
    });
    new DataView(rec.buffer).setUint16(0x50 + 6, 500, true); // item data size past the record
    w.raw(0, rec, 6000n);
    const t = await openTrace(w.finish());
    const r = t.events.row(1);
    expect(r.status & 0x2000).toBe(0x2000);
    expect(r.payloadLength).toBe(rec.length - 0x50);
    expect(t.warnings.map((x) => x.kind)).toEqual(["ext-items-malformed"]);
  });
});
