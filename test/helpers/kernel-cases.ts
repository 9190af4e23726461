// Classic kernel records for printing tests: one case per record (group, opcode, version, pointer size,
// payload) with the text TraceEvent prints for it, written into a trace one millisecond apart.

import { expect } from "vitest";
import { openTrace } from "../../dist/bindings/index.js";
import { EtlWriter, PayloadBuilder } from "../../dist/bindings/generator/etl-writer.js";
import { PayloadContext, payloadPairs } from "../../dist/bindings/perfview/index.js";

/** The header's process and thread of a case that gives none. */
export const HEADER_PID = 77;
export const HEADER_TID = 88;

export interface KernelCase {
  what: string;
  group: number;
  opcode: number;
  version: number;
  ptr: 4 | 8;
  payload: Uint8Array;
  name: string;
  /** The payload as name=value pairs, "; "-joined, untruncated. */
  text: string;
  pid: number;
  tid: number;
  /** Header process / thread (HEADER_PID / HEADER_TID unless given). */
  hpid?: number;
  htid?: number;
}

/** A trace of the cases' records, and the row of case `k`. */
export async function kernelCaseTrace(cases: KernelCase[]) {
  const w = new EtlWriter({ perfFreq: 1_000_000n });
  const at = (k: number) => w.anchor + BigInt(1000 * (k + 1));
  cases.forEach((c, k) =>
    w.system(0, {
      headerType: c.ptr === 4 ? 0x01 : 0x02,
      hookId: (c.group << 8) | c.opcode,
      version: c.version,
      pid: c.hpid ?? HEADER_PID,
      tid: c.htid ?? HEADER_TID,
      ts: at(k),
      payload: c.payload,
    }),
  );
  const t = await openTrace(w.finish());
  const stamps = [...t.events.timestamp];
  return { t, rowOf: (k: number) => t.events.row(stamps.findIndex((ts) => ts === at(k))) };
}

/** Payload pairs as TraceEvent joins them: `name=value; ...`. */
export const joinedPairs = (pairs: [string, string][]) => pairs.map(([n, v]) => `${n}=${v}`).join("; ");

/**
 * Checks a perfview EVENT line against its case: name, PID, TID, DataLen, and the payload with values cut
 * to 20 characters as the baseline test cuts them (`split` separates the case's name=value pairs).
 */
export function expectEventLine(line: string, c: KernelCase, split: string | RegExp = "; "): void {
  const m = /^EVENT [\d,.]+: (.+?) PID=(-?\d+); TID=(-?\d+); PName=[^;]*; ProceNum=0; DataLen=(\d+); (.*)$/.exec(line);
  expect(m, line).not.toBeNull();
  const [, name, pid, tid, len, rest] = m!;
  expect([name, Number(pid), Number(tid), Number(len)], c.what).toEqual([c.name, c.pid, c.tid, c.payload.length]);
  const cut = c.text
    .split(split)
    .map((nv) => {
      const i = nv.indexOf("=");
      const v = nv.slice(i + 1);
      return `${nv.slice(0, i)}=${v.length > 20 ? v.slice(0, 20) + "..." : v}; `;
    })
    .join("");
  expect(rest, c.what).toBe(cut);
}

/** Checks every case's record: its payload length, event name, payload text and TraceEvent's PID/TID. */
export async function expectKernelCases(cases: KernelCase[]): Promise<void> {
  const { t, rowOf } = await kernelCaseTrace(cases);
  const ctx = new PayloadContext(t, t.processes, "current");
  for (const [k, c] of cases.entries()) {
    const row = rowOf(k);
    expect(row.payloadLength, c.what).toBe(c.payload.length);
    expect(t.names.ofRow(row.index), c.what).toBe(c.name);
    expect(joinedPairs(payloadPairs(row, ctx)), c.what).toBe(c.text);
    expect(ctx.processThread(row), c.what).toEqual({ pid: c.pid, tid: c.tid });
  }
  t.dispose();
}

/** A payload builder that can also give its payload cut short. */
export class CaseBuilder extends PayloadBuilder {
  cut(n: number): Uint8Array {
    return this.build().slice(0, n);
  }
}
export const p = () => new CaseBuilder();
