// Runs both decoder cores on the same input and compares everything they produce: event columns,
// the record bytes behind the offset columns, extended items, buffers, warnings, providers, the
// logfile header, typed .NET runtime tables, time order and errors. Only absolute addresses may
// differ; they are compared relative to the record or buffer they point into.

import { openTrace, EtlFormatError, EtlDecodeError, CLR_EVENTS, CLR_PROVIDERS, type Trace, type OpenOptions } from "../../dist/bindings/index.js";
import * as C from "../../dist/assembly/codes.js";
import { extItemBytes } from "../../dist/bindings/decode/result/trace-data.js";
import { clrProgram } from "../../dist/bindings/schema/clr-program.js";
import { EtlWriter, PayloadBuilder, records } from "../../dist/bindings/generator/etl-writer.js";
import { mulberry32 } from "../../dist/bindings/generator/random.js";

export type Outcome = { trace: Trace; error?: undefined } | { trace?: undefined; error: unknown };
export type Source = Uint8Array | (() => Iterable<Uint8Array>);

async function decodeWith(engine: "wasm" | "js", input: Source, options: OpenOptions): Promise<Outcome> {
  try {
    return { trace: await openTrace(typeof input === "function" ? input() : input, { ...options, engine }) };
  } catch (error) {
    return { error };
  }
}

const { BUF_STRIDE, B_DATA, B_DATA_LENGTH, LH_TIME_ZONE, LH_LOGGER_NAME, LH_LOGGER_NAME_CHARS, LH_LOG_FILE_NAME, LH_LOG_FILE_NAME_CHARS, LH_SIZE } = C;
const { WARN_STRIDE, PROV_STRIDE, TYPE_STRIDE } = C;

const view = (x: ArrayBufferView) => Buffer.from(x.buffer, x.byteOffset, x.byteLength);
function sameBytes(x: ArrayBufferView, y: ArrayBufferView): boolean {
  // (short byte arrays, an extended item's say, compared in place: a Buffer each would cost more)
  if (x instanceof Uint8Array && y instanceof Uint8Array && x.length <= 64) {
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    return true;
  }
  return Buffer.compare(view(x), view(y)) === 0;
}
const u32 = (b: Uint8Array, at: number) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;

function firstDiff(x: ArrayLike<unknown>, y: ArrayLike<unknown>): number {
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return i;
  return x.length === y.length ? -1 : n;
}

function rangeEqual(a: Uint8Array, at: number, b: Uint8Array, bt: number, n: number): boolean {
  return Buffer.compare(view(a.subarray(at, at + n)), view(b.subarray(bt, bt + n))) === 0;
}

/** JSON-ish text of a decoded value, bigints and byte arrays included. */
export function show(v: unknown): string {
  return JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x instanceof Uint8Array ? `hex:${Buffer.from(x).toString("hex")}` : x)) ?? String(v);
}

/**
 * Whether two decoded values are equal as show() would print them (numbers, strings, bigints, byte arrays,
 * arrays and plain objects, recursively), without making the text: cheaper for the large arrays of some events.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return show(a) === show(b);
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return (
      a instanceof Uint8Array &&
      b instanceof Uint8Array &&
      Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
    );
  }
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (Array.isArray(a)) {
    const y = b as unknown[];
    if (a.length !== y.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], y[i])) return false;
    return true;
  }
  if (Object.getPrototypeOf(a) !== Object.prototype) return show(a) === show(b);
  const ka = Object.keys(a),
    kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i] || !sameValue((a as Record<string, unknown>)[ka[i]], (b as Record<string, unknown>)[kb[i]])) return false;
  }
  return true;
}

function describeError(e: unknown): string {
  if (e instanceof EtlFormatError) return `EtlFormatError code=${e.code} offset=${e.offset}`;
  if (e instanceof EtlDecodeError) return `EtlDecodeError offset=${e.offset}`;
  return `${(e as Error)?.name ?? typeof e}: ${String(e)}`;
}

export interface CompareOptions {
  /** Compare ClrTable.get for every cell (default true); at most this many rows per table when a number. */
  cells?: boolean | number;
}

/** Every difference between the two traces (empty when they agree), at most `limit`. */
export function traceDifferences(a: Trace, b: Trace, options: CompareOptions = {}, limit = 20): string[] {
  const out: string[] = [];
  const add = (s: string) => {
    if (out.length < limit) out.push(s);
  };
  const da = a.events.data,
    db = b.events.data;
  const ba = da.bytes,
    bb = db.bytes;
  // (the structs: in a store of their own when the trace's record bytes are its input)
  const ma = da.meta ?? da.bytes,
    mb = db.meta ?? db.bytes;

  for (const k of [
    "eventCount",
    "extCount",
    "bufferCount",
    "warningCount",
    "warningTotal",
    "providerCount",
    "typeCount",
    "arenaBytes",
    "inputBytes",
    "clrRows",
  ] as const) {
    if (da[k] !== db[k]) add(`${k}: wasm ${da[k]} js ${db[k]}`);
  }
  if (out.length) return out;
  if (!da.clr !== !db.clr) add(`clr tables: wasm ${da.clr ? "present" : "absent"} js ${db.clr ? "present" : "absent"}`);
  if ((a.decodeError === undefined) !== (b.decodeError === undefined) || a.decodeError?.offset !== b.decodeError?.offset) {
    add(`decodeError: wasm ${a.decodeError?.message} js ${b.decodeError?.message}`);
  }
  const n = da.eventCount;

  // event columns (payload offsets: see the record bytes below)
  const ca = da.events as unknown as Record<string, ArrayBufferView & ArrayLike<unknown>>;
  const cb = db.events as unknown as Record<string, ArrayBufferView & ArrayLike<unknown>>;
  for (const name of Object.keys(ca)) {
    if (name === "payloadOffset") continue;
    if (!sameBytes(ca[name], cb[name])) {
      const i = firstDiff(ca[name], cb[name]);
      add(`events.${name}[${i}]: wasm ${String(ca[name][i])} js ${String(cb[name][i])}`);
    }
  }

  // buffers: every field but the data address; the record bytes each holds
  const bufOfRow = new Uint32Array(n);
  for (let i = 0; i < da.bufferCount; i++) {
    const pa = da.buffersOffset + i * BUF_STRIDE,
      pb = db.buffersOffset + i * BUF_STRIDE;
    if (!rangeEqual(ma, pa, mb, pb, B_DATA) || !rangeEqual(ma, pa + B_DATA + 4, mb, pb + B_DATA + 4, BUF_STRIDE - B_DATA - 4)) {
      add(`buffer ${i}: wasm ${show(a.buffer(i))} js ${show(b.buffer(i))}`);
      continue;
    }
    const dataA = u32(ma, pa + B_DATA),
      dataB = u32(mb, pb + B_DATA),
      len = u32(ma, pa + B_DATA_LENGTH);
    if ((dataA === 0) !== (dataB === 0)) add(`buffer ${i} data address: wasm ${dataA} js ${dataB}`);
    else if (len && !rangeEqual(ba, dataA, bb, dataB, len)) add(`buffer ${i}: record bytes differ`);
    const { firstRow, rowCount } = a.buffer(i);
    for (let r = firstRow; r < firstRow + rowCount && r < n; r++) bufOfRow[r] = i;
    // each row's record lies at the same place in its buffer
    const pa0 = da.events.payloadOffset,
      pb0 = db.events.payloadOffset;
    for (let r = firstRow; r < firstRow + rowCount && r < n; r++) {
      if (pa0[r] - dataA !== pb0[r] - dataB) {
        add(`events.payloadOffset[${r}]: at ${pa0[r] - dataA} of buffer ${i} (wasm), ${pb0[r] - dataB} (js)`);
        break;
      }
    }
  }

  // the bytes of every record (header and payload) behind payloadOffset
  {
    const { payloadOffset: oa, headerLength: ha, payloadLength: la } = da.events;
    const ob = db.events.payloadOffset;
    for (let r = 0; r < n; r++) {
      const len = ha[r] + la[r];
      const sa = oa[r] - ha[r],
        sb = ob[r] - ha[r];
      let same = true;
      for (let k = 0; k < len; k++)
        if (ba[sa + k] !== bb[sb + k]) {
          same = false;
          break;
        }
      if (!same) {
        add(`record bytes of row ${r} differ`);
        break;
      }
    }
  }

  // extended items: columns, item bytes, and where each lies in its record
  {
    const ea = da.ext,
      eb = db.ext;
    for (const k of ["row", "type", "size"] as const) {
      if (!sameBytes(ea[k], eb[k])) add(`ext.${k}[${firstDiff(ea[k], eb[k])}] differs`);
    }
    const { payloadOffset: oa, headerLength: ha } = da.events;
    const ob = db.events.payloadOffset;
    for (let e = 0; e < da.extCount; e++) {
      const r = ea.row[e];
      const relA = ea.offset[e] - (oa[r] - ha[r]),
        relB = eb.offset[e] - (ob[r] - ha[r]);
      // (an item's bytes as extItemBytes gives them: an EventPipe trace's stack items are its frames where they are)
      if (relA !== relB || !sameBytes(extItemBytes(da, ba, e), extItemBytes(db, bb, e))) {
        add(`ext item ${e} (row ${r}): at ${relA} (wasm) / ${relB} (js) of its record, or bytes differ`);
        break;
      }
    }
  }

  // warnings (no addresses in them), providers (none either)
  if (!rangeEqual(ma, da.warningsOffset, mb, db.warningsOffset, da.warningCount * WARN_STRIDE)) {
    const i = a.warnings.findIndex((w, k) => show(w) !== show(b.warnings[k]));
    add(`warning ${i}: wasm ${show(a.warnings[i])} js ${show(b.warnings[i])}`);
  }
  if (show(a.warnings) !== show(b.warnings)) add("warnings (as read) differ");
  if (!rangeEqual(ma, da.providersOffset, mb, db.providersOffset, da.providerCount * PROV_STRIDE) || show([...a.providers]) !== show([...b.providers])) {
    add(`providers: wasm ${show([...a.providers])} js ${show([...b.providers])}`);
  }

  // event types (no addresses in them): the structs, the table as read, and each one's rows
  if (!rangeEqual(ma, da.typesOffset, mb, db.typesOffset, da.typeCount * TYPE_STRIDE)) add("event type structs differ");
  if (show(eventTypesOf(a)) !== show(eventTypesOf(b))) add("eventTypes (as read) differ");
  for (const [engine, t] of [
    ["wasm", a],
    ["js", b],
  ] as const)
    for (const p of eventTypeProblems(t)) add(`${engine}: ${p}`);

  // logfile header: every field, the names and time zone compared by content
  {
    const la = ma.subarray(da.logfileOffset, da.logfileOffset + LH_SIZE).slice();
    const lb = mb.subarray(db.logfileOffset, db.logfileOffset + LH_SIZE).slice();
    for (const [at, size] of [
      [LH_TIME_ZONE, C.TIME_ZONE_BYTES],
      [LH_LOGGER_NAME, -LH_LOGGER_NAME_CHARS],
      [LH_LOG_FILE_NAME, -LH_LOG_FILE_NAME_CHARS],
    ]) {
      const pa = u32(la, at),
        pb = u32(lb, at);
      const bytes = size > 0 ? size : 2 * u32(la, -size);
      if ((pa === 0) !== (pb === 0) || (pa !== 0 && !rangeEqual(ma, pa, mb, pb, bytes))) add(`logfile header field @${at} differs`);
      la.fill(0, at, at + 4);
      lb.fill(0, at, at + 4);
    }
    if (!sameBytes(la, lb)) add(`logfile header struct differs at byte ${firstDiff(la, lb)}`);
    if (show(a.info) !== show(b.info)) add(`info: wasm ${show(a.info)} js ${show(b.info)}`);
  }

  // typed .NET runtime tables: every block byte (references relative to their record), every cell
  if (da.clr && db.clr) {
    const { layouts } = clrProgram();
    const pa0 = da.events.payloadOffset,
      pb0 = db.events.payloadOffset;
    for (let t = 0; t < layouts.length; t++) {
      const count = da.clr.counts[t];
      if (count !== db.clr.counts[t]) {
        add(`clr table ${layouts[t].schema.name}: row count differs`);
        continue;
      }
      if (!count) continue;
      const L = layouts[t];
      const ka = da.clr.blocks[t]!,
        kb = db.clr.blocks[t]!;
      // (a block in a core's memory has room for more rows than it holds: its columns are `cap` rows apart)
      const capA = da.clr.caps?.[t] ?? count,
        capB = db.clr.caps?.[t] ?? count;
      const rowsA = new Uint32Array(ka.buffer, ka.byteOffset + capA * L.preRow, count);
      const rowsB = new Uint32Array(kb.buffer, kb.byteOffset + capB * L.preRow, count);
      if (!sameBytes(rowsA, rowsB)) {
        add(`clr table ${L.schema.name}: rows differ`);
        continue;
      }
      if (!rangeEqual(ka, capA * L.preStatus, kb, capB * L.preStatus, count)) add(`clr table ${L.schema.name}: truncated flags differ`);
      for (const c of L.columns) {
        if (c.storage === "value") {
          if (!rangeEqual(ka, capA * c.pre, kb, capB * c.pre, count * c.width)) add(`clr ${L.schema.name}.${c.field.name}: values differ`);
          continue;
        }
        const offA = new Uint32Array(ka.buffer, ka.byteOffset + capA * c.pre, count);
        const offB = new Uint32Array(kb.buffer, kb.byteOffset + capB * c.pre, count);
        for (let i = 0; i < count; i++) {
          // 0: never written (the payload ended before this field)
          if ((offA[i] === 0) !== (offB[i] === 0) || (offA[i] !== 0 && offA[i] - pa0[rowsA[i]] !== offB[i] - pb0[rowsA[i]])) {
            add(`clr ${L.schema.name}.${c.field.name}[${i}]: reference at ${offA[i] - pa0[rowsA[i]]} (wasm) / ${offB[i] - pb0[rowsA[i]]} (js) of the payload`);
            break;
          }
        }
        if (c.preB !== C.CLR_NOT_STORED && !rangeEqual(ka, capA * c.preB, kb, capB * c.preB, count * 4)) {
          add(`clr ${L.schema.name}.${c.field.name}: lengths differ`);
        }
      }
    }
    const ta = a.tables,
      tb = b.tables;
    if (show(ta.map((x) => [x.name, x.version, x.length])) !== show(tb.map((x) => [x.name, x.version, x.length]))) add("trace.tables differ");
    else if (options.cells !== false) {
      const most = typeof options.cells === "number" ? options.cells : Infinity;
      for (let k = 0; k < ta.length; k++) {
        const x = ta[k],
          y = tb[k];
        const step = Math.max(1, Math.floor(x.length / most));
        for (let i = 0; i < x.length; i += step) {
          for (const name of x.fieldNames) {
            const xa = x.get(name, i),
              xb = y.get(name, i);
            if (!sameValue(xa, xb)) {
              add(`${x.name}.${name}[${i}]: wasm ${show(xa)} js ${show(xb)}`);
              break;
            }
          }
        }
      }
    }
  }

  // time order
  if (!sameBytes(a.events.timeOrder(), b.events.timeOrder())) add("time order differs");
  return out;
}

function eventTypesOf(t: Trace): unknown[] {
  const x = t.eventTypes;
  return Array.from({ length: x.length }, (_, i) => [
    x.provider[i],
    x.eventId[i],
    x.version[i],
    x.opcode[i],
    x.headerType[i],
    x.keywords[i],
    x.task[i],
    x.level[i],
    x.channel[i],
    x.count[i],
  ]);
}

/**
 * Where a trace's event types disagree with its rows: each row's type must hold the row's provider,
 * id, version, opcode, header type, keywords, task, level and channel; types are numbered in order
 * of first sight, one per key, with their row counts; only a full table leaves rows out.
 */
export function eventTypeProblems(t: Trace, limit = 5): string[] {
  const out: string[] = [];
  const e = t.events,
    x = t.eventTypes;
  const keyOfType = (i: number) =>
    `${x.provider[i]}/${x.eventId[i]}/${x.version[i]}/${x.opcode[i]}/${x.headerType[i]}/${x.keywords[i]}/${x.task[i]}/${x.level[i]}/${x.channel[i]}`;
  const keys = new Set<string>();
  for (let i = 0; i < x.length; i++) keys.add(keyOfType(i));
  if (keys.size !== x.length) out.push("two types share a key");
  const counts = new Uint32Array(x.length);
  // (the key's columns of the types and of the rows, taken once; compared field by field, as text only to report)
  const typeColumns: ArrayLike<number | bigint>[] = [x.provider, x.eventId, x.version, x.opcode, x.headerType, x.keywords, x.task, x.level, x.channel];
  const rowColumns: ArrayLike<number | bigint>[] = [e.provider, e.eventId, e.version, e.opcode, e.headerType, e.keywords, e.task, e.level, e.channel];
  const keyOfRow = (r: number) => rowColumns.map((c) => String(c[r])).join("/");
  let next = 0;
  for (let r = 0; r < e.length && out.length < limit; r++) {
    const type = x.typeOf(r);
    if (type < 0) {
      if (x.length !== C.MAX_EVENT_TYPES || keys.has(keyOfRow(r))) out.push(`row ${r} has no type`);
      continue;
    }
    let same = true;
    for (let k = 0; k < typeColumns.length && same; k++) same = typeColumns[k][type] === rowColumns[k][r];
    if (!same) out.push(`row ${r}: type ${type} (${keyOfType(type)}) does not match the row`);
    if (type > next) out.push(`row ${r}: type ${type} before type ${next}`);
    else if (type === next) next++;
    counts[type]++;
  }
  if (out.length === 0 && next !== x.length) out.push(`${x.length} types, ${next} used`);
  if (out.length === 0 && !sameBytes(counts, x.count)) out.push(`type ${firstDiff(counts, x.count)}: row count differs`);
  return out;
}

/** Decodes with both engines; returns the differences (errors must agree in class, code and offset). */
export async function compareEngines(
  input: Source,
  options: OpenOptions = {},
  compare: CompareOptions = {},
): Promise<{ problems: string[]; wasm: Outcome; js: Outcome }> {
  const wasm = await decodeWith("wasm", input, options);
  const js = await decodeWith("js", input, options);
  let problems: string[];
  if (wasm.trace && js.trace) problems = traceDifferences(wasm.trace, js.trace, compare);
  else if (wasm.error !== undefined && js.error !== undefined) {
    const x = describeError(wasm.error),
      y = describeError(js.error);
    problems = x === y ? [] : [`errors: wasm ${x}, js ${y}`];
  } else {
    problems = [`wasm ${wasm.trace ? "decoded" : describeError(wasm.error)}, js ${js.trace ? "decoded" : describeError(js.error)}`];
  }
  return { problems, wasm, js };
}

// ---------------------------------------------------------------------------------------------
// A synthetic trace of every record header layout, with random payloads for .NET runtime events
// (every schema event, any payload length), extended items, WPP messages with every option bit,
// opaque records and, rarely, records that abandon the rest of their buffer.

const OTHERS = ["a1b2c3d4-0001-0002-0304-05060708090a", "11111111-2222-3333-4444-555555555555"];

export function syntheticTrace(seed: number, opts: { compress?: boolean; pointerSize?: 4 | 8; records?: number } = {}): Uint8Array {
  const rand = mulberry32(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)];
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => int(256));
  const w = new EtlWriter({ compress: opts.compress, pointerSize: opts.pointerSize ?? 8, bufferSize: 4096, numberOfProcessors: 3, anchor: 5000n });
  let ts = 5000n;
  const next = () => (ts += BigInt(1 + int(60)));
  const clrPayload = () => {
    if (rand() < 0.3) return bytes(int(41)); // any short length: every truncation point

    // mostly UTF-16 text and small numbers, so strings end and counts stay plausible
    const b = new PayloadBuilder();
    const parts = int(8);
    for (let k = 0; k < parts; k++) {
      const r = rand();
      if (r < 0.3) b.utf16z("Abc".repeat(int(4)));
      else if (r < 0.5) b.u32(int(4));
      else if (r < 0.6) b.u16(int(3));
      else if (r < 0.7) b.ansiz("xy".repeat(int(3)));
      else b.bytes(bytes(int(24)));
    }
    return b.build();
  };
  const total = opts.records ?? 600;
  for (let k = 0; k < total; k++) {
    const proc = int(3);
    const r = rand();
    if (r < 0.15) {
      const ht = pick([0x01, 0x02, 0x03, 0x04, 0x10, 0x11] as const);
      const pmc = ht >= 0x10 && rand() < 0.5 ? [1n, 2n, 3n].slice(0, 1 + int(3)) : undefined;
      const pebs = ht >= 0x10 && rand() < 0.5 ? 0x1234n : undefined;
      w.system(proc, {
        headerType: ht,
        hookId: pick([0x0301, 0x030a, 0x0502, 0x0a10, 0x2500, 0x1f01, 0x0000]),
        version: int(5),
        pid: int(9999),
        tid: int(9999),
        ts: next(),
        payload: bytes(int(60)),
        pebs,
        pmc,
      });
    } else if (r < 0.25) {
      w.classic(proc, {
        headerType: pick([0x0a, 0x14, 0x0b, 0x15] as const),
        guid: pick(OTHERS),
        opcode: int(256),
        level: int(6),
        version: int(4),
        pid: int(99),
        tid: int(99),
        ts: next(),
        payload: bytes(int(40)),
      });
    } else if (r < 0.7) {
      const schema = pick(CLR_EVENTS);
      // mostly the schema's provider; sometimes another runtime provider (no such event there)
      const provider = CLR_PROVIDERS[rand() < 0.9 ? schema.provider : int(CLR_PROVIDERS.length)].guid;
      // up to 3 items, sometimes more than the 32 the walk takes
      const items = rand() < 0.2 ? (rand() < 0.1 ? 30 + int(6) : 1 + int(3)) : 0;
      const ext = items ? Array.from({ length: items }, () => ({ type: 1 + int(12), data: bytes(int(items > 3 ? 9 : 20)) })) : undefined;
      const rec = records.event({
        headerType: pick([0x12, 0x13] as const),
        provider,
        id: schema.id,
        version: rand() < 0.9 ? schema.version : int(10),
        level: int(6),
        opcode: int(256),
        task: int(100),
        keywords: BigInt(int(1 << 30)),
        pid: 4242,
        tid: int(99),
        ts: next(),
        ext,
        channel: int(20),
        payload: clrPayload(),
      });
      if (ext && rand() < 0.3) rec[0x50 + int(8)] = int(256); // damage the first item's header
      w.raw(proc, rec, ts);
    } else if (r < 0.8) {
      w.event(proc, {
        headerType: pick([0x12, 0x13] as const),
        provider: pick(OTHERS),
        id: int(600),
        version: int(3),
        level: 4,
        opcode: 0,
        task: 0,
        keywords: 0n,
        pid: 1,
        tid: 2,
        ts: next(),
        payload: bytes(int(50)),
      });
    } else if (r < 0.9) {
      const flags = int(64);
      if (rand() < 0.7) {
        w.message(proc, {
          messageNumber: int(100),
          optionFlags: flags,
          sequence: k,
          guid: pick(OTHERS),
          componentId: 3,
          ts: flags & 8 ? next() : undefined,
          pid: 5,
          tid: 6,
          payload: bytes(int(30)),
        });
      } else {
        // option bits whose fields do not fit the record
        const rec = new Uint8Array(8 + 4 * int(4)).map(() => int(256));
        new DataView(rec.buffer).setUint32(0, (0x90 << 24) | rec.length, true);
        new DataView(rec.buffer).setUint16(6, flags, true);
        w.raw(proc, rec);
      }
    } else if (r < 0.97) {
      // opaque: TIMED, ERROR, WNODE, unknown types, unknown trace header classes
      const rec = bytes(8 + int(40));
      const ht = pick([0x0c, 0x0d, 0x0e, 0x3c, 0x7f, 0x00]);
      const b3 = pick([0xc0, 0xc0, 0xa0, 0x80, 0xb5]);
      new DataView(rec.buffer).setUint32(0, ((b3 << 24) | (ht << 16) | rec.length) >>> 0, true);
      w.raw(proc, rec);
    } else {
      // a bad record: the rest of this buffer is abandoned
      const rec = bytes(16 + int(16));
      const v = new DataView(rec.buffer);
      const kind = int(5);
      if (kind === 0)
        v.setUint32(0, 0xc0130000, true); // EVENT_HEADER of size 0
      else if (kind === 1)
        v.setUint32(0, 0xc0130020, true); // too small
      else if (kind === 2)
        v.setUint32(0, 0xc013fff0, true); // overruns
      else if (kind === 3)
        v.setUint32(0, 0x12345678, true); // not a trace header
      else {
        v.setUint32(0, 0xc0020000 | rec.length, true);
        v.setUint16(4, 0, true);
      } // SYSTEM64 of Size 0
      w.raw(proc, rec);
    }
  }
  return w.finish();
}
