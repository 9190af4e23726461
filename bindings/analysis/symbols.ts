// Method symbol resolution as TraceEvent's TraceLog does it (dotnet-analysis.md §4): the method and
// module TraceLog gives a code address seen (in a stack) in a process at some time, and the frame name
// TraceEvent's stack source prints for it: `module!method`, `module!?` (an image without symbols) or
// `?!?` (nothing known).
//
// TraceLog does not keep a map "address -> method at time t". It files every address seen in a stack as
// *unresolved* and names it when a later event covers it, so the name of an address seen at time `ts`
// is decided by the events at or after `ts`:
//
// * Methods. Method/UnloadVerbose, Method/DCStopVerboseV2 and rundown Method/DCStopVerbose call
//   AddMethod: every still-unresolved address of the process in [MethodStartAddress, +MethodSize) gets
//   that method and leaves the process's address map, so the same address seen later (the code heap
//   reused after an unload) starts over and is named by the next such event. Addresses still
//   unresolved at the end of the trace are offered to every *jitted* load (Method/LoadVerbose,
//   Method/DCStartVerboseV2, rundown Method/DCStartVerbose with the Jitted flag), in arrival order: the
//   first covering load wins. So: the first unload/DCStop covering the address at or after `ts`, else
//   the first jitted load covering it.
// * Managed modules (ModuleID -> file): Loader/ModuleLoad, ModuleUnload, ModuleDCStopV2 and rundown
//   ModuleDCStart/ModuleDCStop. The file is the ModuleILPath (".ni." dropped when it is also the native
//   path; "x.il.dll" for a ReadyToRun image logged as IL with a native PDB). A module ends at its runtime
//   ModuleUnload. TraceModuleFile lower-cases a path given when it is created; a module first asked
//   for by a method (no module event for its ModuleID yet, since the last ModuleUnload) is created
//   empty and named later by the next module event, as logged (case kept: rundowns that list methods
//   before modules give "PerfView!…", not "perfview!…"); never named, its path is "ManagedModule".
// * Native images (kernel Image Load/DCStart/Unload/DCEnd, ETW only). At each Unload or DCEnd, and at
//   the end of the trace for each image never unloaded, the still-unresolved addresses in the image's
//   range get the image's file (without a method). An image file, when set, is the frame's module even
//   for a managed method (NGEN / ReadyToRun code inside a mapped image: "mscorlib.ni!…"); an address is
//   no longer unresolved once a method named it, so only images reached before that count, and the
//   end-of-trace image pass runs after the end-of-trace jitted-load pass.
// * Kernel addresses (>= 0xFFFF000000000000 for 64-bit traces, >= 0x80000000 for 32-bit) belong to
//   process 0, whose images are the drivers.
//
// Frame names (TraceEventStackSource.GetFrameName): module = TraceModuleFile.Name, the file name
// without directory and extension ("?" with no module); method = the full name
// `Namespace.Name(args)` ("?" with none, or "0x<hex>" with showUnknownAddresses).
//
// Every range lookup is a binary search: the ranges of a process are cut into elementary segments
// (between consecutive range boundaries), each holding the ranges covering it sorted by time.
//
// Simplifications (documented, all rare): processes are keyed by pid (a reused pid shares maps); each
// address is looked at as first seen at `ts` (TraceLog shares one entry for an address seen several
// times while unresolved, so an image unload between two sightings can name the later one); an image
// unload finds its load by equal ImageBase; a ModuleID reused after a ModuleUnload starts a new module;
// native kernel paths are kept as logged (TraceEvent maps "\Device\HarddiskVolumeN" to drive letters,
// which does not change the module name).

import type { EventRow, EventTable } from "../tables/event-table.js";
import type { Trace } from "../trace.js";
import { CLR_PROVIDERS, stringRunSpan } from "../schema/clr-payload.js";
import { utf16, type ClrTable, type RefColumn } from "../tables/clr-tables.js";
import type { ClrEventSchema } from "../schema/clr-schema-types.js";
import * as C from "../../assembly/codes.js";
import { RowSources, type RowKinds } from "./row-source.js";
import { utf16z } from "../tables/payload-strings.js";
import { isKernelAddress } from "./stacks.js";

/** Kernel image events' provider (the Image group of the NT kernel logger). */
const IMAGE_PROVIDER = "2cb15d1d-5fc1-11d2-abe1-00a0c911f518";

/** The providers SymbolMap reads (for a decode-time or query filter). */
export const SYMBOL_PROVIDERS = ["Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown", IMAGE_PROVIDER];

const RUNTIME = CLR_PROVIDERS.findIndex((p) => p.name === "Microsoft-Windows-DotNETRuntime");
const RUNDOWN = CLR_PROVIDERS.findIndex((p) => p.name === "Microsoft-Windows-DotNETRuntimeRundown");

// runtime provider ids
const METHOD_DC_START_V2 = 139,
  METHOD_DC_STOP_V2 = 140,
  METHOD_LOAD_VERBOSE = 143,
  METHOD_UNLOAD_VERBOSE = 144;
const MODULE_DC_STOP_V2 = 150,
  MODULE_LOAD = 152,
  MODULE_UNLOAD = 153;
// rundown provider ids
const RD_METHOD_DC_START = 143,
  RD_METHOD_DC_STOP = 144,
  RD_MODULE_DC_START = 153,
  RD_MODULE_DC_STOP = 154;
// kernel Image opcodes
const IMAGE_UNLOAD = 2,
  IMAGE_DC_START = 3,
  IMAGE_DC_END = 4,
  IMAGE_LOAD = 10;

const JITTED = 0x8;
/** The runtime and rundown event ids add() reads (either provider's; add() tells them apart). */
const SYMBOL_EVENT_IDS = [
  METHOD_DC_START_V2,
  METHOD_DC_STOP_V2,
  METHOD_LOAD_VERBOSE,
  METHOD_UNLOAD_VERBOSE,
  MODULE_DC_STOP_V2,
  MODULE_LOAD,
  MODULE_UNLOAD,
  RD_METHOD_DC_START,
  RD_METHOD_DC_STOP,
  RD_MODULE_DC_START,
  RD_MODULE_DC_STOP,
];
const NEVER = 0x7fffffffffffffffn;

export type FrameKind = "managed" | "native" | "unknown";

/** What TraceLog makes of a code address, and the frame name TraceEvent's stack source prints for it. */
export interface ResolvedFrame {
  /** "managed": a method was found; "native": only an image; "unknown": nothing. */
  kind: FrameKind;
  /** The frame name: `module!method`, `module!?` or `?!?`. */
  name: string;
  /** The module as printed: file name without directory and extension ("?" when none). */
  module: string;
  /** The method as printed: `Namespace.Name(args)`, or "?" (or "0x<hex>", showUnknownAddresses) when none. */
  method: string;
  /** TraceModuleFile.FilePath: the module's file ("ManagedModule" for a module never named, "" when none). */
  path: string;
}

export interface SymbolMapOptions {
  /** Pointer size of the trace (kernel address test); default: the trace's, from the first row added, else 8. */
  pointerSize?: 4 | 8;
  /** Unknown methods as "0x<hex address>" instead of "?" (TraceEventStackSource.ShowUnknownAddresses). */
  showUnknownAddresses?: boolean;
}

/** A method event's name strings, in payload order. */
export const METHOD_STRINGS = ["MethodNamespace", "MethodName", "MethodSignature"] as const;

/** Where a method event's three name strings lie in its table's record bytes, or null (decode it then). */
function methodStringsOf(row: EventRow): [Uint8Array, number, number] | null {
  const schema = row.clrSchema;
  const bytes = schema ? row.table.recordBytesOf(row.index) : null;
  const span = schema && bytes ? stringRunSpan(schema, METHOD_STRINGS, bytes, row.payloadOffset, row.payloadLength, row.pointerSize) : null;
  return span ? [bytes!, span[0], span[1]] : null;
}

/** Code units of a method name being made (longer names take the strings one by one). */
const nameUnits = new Uint16Array(4096);
/** Method names made, by a hash of their code units (a trace names its methods many times: tiers, rundown); at most NAMES_KEPT, emptied when full. */
const namesMade = new Map<number, string>();
const NAMES_KEPT = 1 << 16;

/**
 * The full method name from a method event's three name strings, in bytes [from, to), framed as
 * stringRunSpan frames them (each string ends at its terminator; an unterminated one runs to `to`).
 */
function methodNameIn(bytes: Uint8Array, from: number, to: number): string {
  // each string's [start, end) in bytes; one at or past `to` is empty, one unterminated runs to it
  let p = from;
  const end = (q: number) => {
    while (q + 2 <= to && (bytes[q] | bytes[q + 1]) !== 0) q += 2;
    return q;
  };
  const ns = p < to ? p : to,
    nsEnd = p < to ? end(p) : to;
  p = p < to ? (nsEnd + 2 <= to ? nsEnd + 2 : to) : p;
  const name = p < to ? p : to,
    nameEnd = p < to ? end(p) : to;
  p = p < to ? (nameEnd + 2 <= to ? nameEnd + 2 : to) : p;
  const sig = p < to ? p : to;
  return methodNameOfStrings(bytes, ns, nsEnd, name, nameEnd, sig, p < to ? end(p) : to);
}

/**
 * TraceEvent's full method name (see fullMethodName) from the namespace, name and signature's UTF-16
 * bytes [ns, nsEnd), [name, nameEnd), [sig, sigEnd): made in one string from the bytes, or found among
 * the names made before (making a string costs several times comparing one).
 */
export function methodNameOfStrings(bytes: Uint8Array, ns: number, nsEnd: number, name: number, nameEnd: number, sig: number, sigEnd: number): string {
  // the signature from its first '(' (nothing without one)
  let paren = sig;
  while (paren < sigEnd && (bytes[paren] !== 0x28 || bytes[paren + 1] !== 0)) paren += 2;
  const units = (nsEnd - ns + nameEnd - name + sigEnd - paren) / 2 + 1;
  if (units > nameUnits.length) return fullMethodName(utf16(bytes, ns, nsEnd - ns), utf16(bytes, name, nameEnd - name), utf16(bytes, paren, sigEnd - paren));
  let k = 0,
    h = 0x811c9dc5;
  for (let q = ns; q < nsEnd; q += 2) h = Math.imul(h ^ (nameUnits[k++] = bytes[q] | (bytes[q + 1] << 8)), 0x01000193);
  h = Math.imul(h ^ (nameUnits[k++] = 0x2e), 0x01000193); // "."
  for (let q = name; q < nameEnd; q += 2) h = Math.imul(h ^ (nameUnits[k++] = bytes[q] | (bytes[q + 1] << 8)), 0x01000193);
  for (let q = paren; q < sigEnd; q += 2) h = Math.imul(h ^ (nameUnits[k++] = bytes[q] | (bytes[q + 1] << 8)), 0x01000193);
  h = Math.imul(h ^ k, 0x01000193);
  const made = namesMade.get(h);
  if (made !== undefined && made.length === k) {
    let i = 0;
    while (i < k && made.charCodeAt(i) === nameUnits[i]) i++;
    if (i === k) return made;
  }
  const s = String.fromCharCode.apply(null, nameUnits.subarray(0, k) as unknown as number[]);
  if (namesMade.size >= NAMES_KEPT) namesMade.clear();
  namesMade.set(h, s);
  return s;
}

/** The full method name of a method event (its three strings read where they are: no decode of the payload). */
export function methodNameOf(row: EventRow): string {
  const at = methodStringsOf(row);
  return at ? methodNameIn(...at) : decodedMethodName(row);
}

/** The full method name of a method event, from its fields one by one. */
function decodedMethodName(row: EventRow): string {
  return fullMethodName(String(row.get("MethodNamespace") ?? ""), String(row.get("MethodName") ?? ""), String(row.get("MethodSignature") ?? ""));
}

/** TraceEvent's full method name: namespace "." name, then the signature from its first '(' (nothing without one). */
export function fullMethodName(namespace: string, name: string, signature: string): string {
  const paren = signature.indexOf("(");
  return `${namespace}.${name}${paren >= 0 ? signature.slice(paren) : ""}`;
}

/** TraceModuleFile.Name: the file name without its directory and extension. */
export function moduleFileName(filePath: string): string {
  // TraceEvent splits on '\' only; '/' is taken too so that non-Windows paths give a file name as well.
  const start = Math.max(filePath.lastIndexOf("\\"), filePath.lastIndexOf("/")) + 1;
  let dot = filePath.lastIndexOf(".");
  if (dot < start) dot = filePath.length;
  return filePath.slice(start, dot);
}

// What each event is to the map's typed path (the method events, most of what it reads; the rest is read from rows).
const S_NONE = 0,
  S_METHOD_START = 1,
  S_METHOD_STOP = 2;

function symbolKindOf(schema: ClrEventSchema | undefined): number {
  if (!schema) return S_NONE;
  const id = schema.id;
  if (schema.provider === RUNTIME) {
    if (id === METHOD_LOAD_VERBOSE || id === METHOD_DC_START_V2) return S_METHOD_START;
    if (id === METHOD_UNLOAD_VERBOSE || id === METHOD_DC_STOP_V2) return S_METHOD_STOP;
  } else if (schema.provider === RUNDOWN) {
    if (id === RD_METHOD_DC_START) return S_METHOD_START;
    if (id === RD_METHOD_DC_STOP) return S_METHOD_STOP;
  }
  return S_NONE;
}

/** A method event type's typed columns that a method range reads. */
class MethodFields {
  readonly start: BigUint64Array;
  readonly module: BigUint64Array | null;
  readonly size: Uint32Array | null;
  readonly flags: Uint32Array | null;
  /** The three name strings (all or none). */
  readonly names: RefColumn[] | null;
  constructor(
    readonly table: ClrTable,
    start: BigUint64Array,
  ) {
    const c = table.columns;
    this.start = start;
    this.module = c.ModuleID instanceof BigUint64Array ? c.ModuleID : null;
    this.size = c.MethodSize instanceof Uint32Array ? c.MethodSize : null;
    this.flags = c.MethodFlags instanceof Uint32Array ? c.MethodFlags : null;
    const names = METHOD_STRINGS.map((n) => c[n]);
    this.names = names.every((x) => x && "offset" in x) ? (names as RefColumn[]) : null;
  }
}

const SYMBOL_ROWS: RowKinds<MethodFields> = {
  kindOf: symbolKindOf,
  typedKind: (kind) => kind !== S_NONE,
  readerOf(table) {
    const c = table.columns;
    const schema = table.schema;
    // (a field the schema has in a column of another type, or names not all in the table: read from the row)
    const has = (name: string) => schema.fields.some((f) => f.name === name);
    if (!(c.MethodStartAddress instanceof BigUint64Array) || !table.bytes.length) return null;
    const m = new MethodFields(table, c.MethodStartAddress);
    if ((has("ModuleID") && !m.module) || (has("MethodSize") && !m.size) || (has("MethodFlags") && !m.flags) || (has("MethodName") && !m.names)) return null;
    return m;
  },
};

/** A range [start, end) with a sort key (time or order) and the arrival sequence of its event. */
interface Ranged {
  start: bigint;
  end: bigint;
  key: bigint;
  seq: number;
}

const cmp = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Ranges that may overlap (over time), answering "the covering range with the smallest key >= k" by
 * two binary searches: the elementary segment holding the address, then the key in that segment's
 * list. Built (again) on the first query after additions. The segment bounds are searched as 32-bit
 * halves (BigInt comparisons cost far more, and every stack frame is looked up here).
 */
class RangeIndex<T extends Ranged> {
  private readonly items: T[] = [];
  private boundHi = new Uint32Array(0);
  private boundLo = new Uint32Array(0);
  /** The items of segment s: ordered[segmentItems[segmentStart[s] … segmentStart[s + 1])], by key then arrival. */
  private segmentStart = new Uint32Array(1);
  private segmentItems = new Uint32Array(0);
  private ordered: T[] = [];
  private built = true;

  add(item: T): void {
    if (item.end <= item.start) return;
    this.items.push(item);
    this.built = false;
  }

  get size(): number {
    return this.items.length;
  }

  /** Builds the index now if additions came since (else the next query does). */
  prepare(): void {
    if (!this.built) this.build();
  }

  /** The range covering the address (hi, lo) with the smallest key >= `from` (all keys when omitted); ties: first added. */
  first(hi: number, lo: number, from?: bigint): T | undefined {
    if (!this.built) this.build();
    const s = this.segmentOf(hi, lo);
    if (s < 0 || s >= this.segmentStart.length - 1) return undefined;
    const list = this.segmentItems,
      ordered = this.ordered;
    let a = this.segmentStart[s];
    const end = this.segmentStart[s + 1];
    if (from === undefined) return a < end ? ordered[list[a]] : undefined;
    let b = end;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (ordered[list[mid]].key < from) a = mid + 1;
      else b = mid;
    }
    return a < end ? ordered[list[a]] : undefined;
  }

  /** The last segment starting at or below the address (hi, lo), or -1. */
  private segmentOf(hi: number, lo: number): number {
    const bh = this.boundHi,
      bl = this.boundLo;
    let a = 0,
      b = bh.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (bh[mid] < hi || (bh[mid] === hi && bl[mid] <= lo)) a = mid + 1;
      else b = mid;
    }
    return a - 1;
  }

  private build(): void {
    // the bounds: every start and end, sorted (natively, as 64-bit integers) without repeats; read as
    // 32-bit halves (a BigInt read from a BigUint64Array, or made by arithmetic, is an allocation)
    const MAX = 0xffffffffffffffffn;
    const list = this.items,
      count = list.length;
    const starts = new BigUint64Array(count),
      ends = new BigUint64Array(count);
    for (let i = 0; i < count; i++) {
      const it = list[i];
      starts[i] = it.start;
      ends[i] = it.end > MAX ? MAX : it.end;
    }
    const all = new BigUint64Array(2 * count);
    all.set(starts);
    all.set(ends, count);
    all.sort();
    const words = new Uint32Array(all.buffer);
    let n = 0;
    for (let i = 0; i < 2 * count; i++) {
      const lo = words[2 * i],
        hi = words[2 * i + 1];
      if (n > 0 && words[2 * n - 2] === lo && words[2 * n - 1] === hi) continue;
      words[2 * n] = lo;
      words[2 * n + 1] = hi;
      n++;
    }
    this.boundHi = new Uint32Array(n);
    this.boundLo = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      this.boundLo[i] = words[2 * i];
      this.boundHi[i] = words[2 * i + 1];
    }
    // items by key, then arrival: usually so already (events come in time order)
    const before = (x: T, y: T) => cmp(x.key, y.key) || x.seq - y.seq;
    let sorted = true;
    for (let i = 1; i < count && sorted; i++) sorted = before(list[i - 1], list[i]) <= 0;
    // (the place of each item in `ordered`, for its start and end read above)
    const place = new Uint32Array(count);
    let ordered = list;
    if (sorted) for (let i = 0; i < count; i++) place[i] = i;
    else {
      const byOrder = Array.from({ length: count }, (_, i) => i).sort((x, y) => before(list[x], list[y]));
      ordered = byOrder.map((i) => list[i]);
      byOrder.forEach((i, k) => (place[i] = k));
    }
    const startWords = new Uint32Array(starts.buffer),
      endWords = new Uint32Array(ends.buffer);
    // each segment's items in one array (counted, then placed): ranges rarely overlap, so most segments
    // hold one item or none, and an array per segment was most of the build
    const segments = Math.max(0, n - 1);
    const from = new Int32Array(count),
      to = new Int32Array(count);
    const start = new Uint32Array(segments + 1);
    for (let j = 0; j < count; j++) {
      const i = place[j];
      // (its last address: end - 1, the borrow taken from the high half; an end is above its start, so above 0)
      const endLo = endWords[2 * j],
        endHi = endWords[2 * j + 1];
      const lastLo = (endLo - 1) >>> 0,
        lastHi = endLo === 0 ? (endHi - 1) >>> 0 : endHi;
      from[i] = this.segmentOf(startWords[2 * j + 1], startWords[2 * j]);
      to[i] = this.segmentOf(lastHi, lastLo) + 1; // segments starting before `end`
      for (let s = from[i]; s < to[i]; s++) start[s + 1]++;
    }
    for (let s = 0; s < segments; s++) start[s + 1] += start[s];
    // (indices: an array of objects this long, made at its length, would be a dictionary, slow to fill)
    const items = new Uint32Array(start[segments]);
    const at = start.slice(0, segments);
    for (let i = 0; i < ordered.length; i++) for (let s = from[i]; s < to[i]; s++) items[at[s]++] = i;
    this.segmentStart = start;
    this.segmentItems = items;
    this.ordered = ordered;
    this.built = true;
  }
}

/**
 * A method range from one event: its full name, ModuleID, and the event's time. The name is read from
 * the event when first asked (`source`), in a map made from a whole trace: most methods are never named.
 */
interface MethodRange extends Ranged {
  name?: string;
  /** The row of its event, in the map's trace, while the name is not read. */
  row?: number;
  /** Where its event's name strings were kept (NamePool), while the name is not read: events not from the map's trace. */
  nameAt?: number;
  nameEnd?: number;
  /** Its frame (resolve's cache), and frames of other module paths. */
  frame?: ResolvedFrame;
  frames?: Map<string, ResolvedFrame>;
  moduleId: bigint;
  time: bigint;
}

/** Bytes a NamePool chunk holds: more than an event's payload, so a name never spans two. */
const NAME_CHUNK = 1 << 20;

/**
 * The name strings of method events that come and go (a stream's batches), kept as their bytes: a
 * copy costs less than making the strings, and most methods are never named. In chunks of their own
 * (a pool doubled and copied took its size again in fresh memory at every step), each name copied by
 * a loop (a name is about a hundred bytes, which a subarray and a set cost more than).
 */
class NamePool {
  private readonly chunks: Uint8Array[] = [];
  private chunk = new Uint8Array(0);
  private used = 0;
  /** Keeps bytes [from, to) of `source`; gives where they are kept (a name's bytes lie in one chunk). */
  add(source: Uint8Array, from: number, to: number): number {
    const n = to - from;
    if (this.used + n > this.chunk.length) {
      this.chunk = new Uint8Array(Math.max(NAME_CHUNK, n));
      this.chunks.push(this.chunk);
      this.used = 0;
    }
    const chunk = this.chunk,
      at = this.used;
    for (let k = 0; k < n; k++) chunk[at + k] = source[from + k];
    this.used += n;
    return (this.chunks.length - 1) * NAME_CHUNK + at;
  }
  /** The chunk that holds what was kept at `at`, and where it is in it. */
  chunkOf(at: number): [Uint8Array, number] {
    const c = Math.floor(at / NAME_CHUNK);
    return [this.chunks[c], at - c * NAME_CHUNK];
  }
}

/** An image range with its TraceModuleFile path (lower-cased). */
interface ImageRange extends Ranged {
  path: string;
}

/** One loaded image of a process (TraceLoadedModule): load/unload times as TraceLog keeps them. */
interface ImageEntry {
  base: bigint;
  size: bigint;
  path: string;
  load: bigint;
  unload: bigint;
  seq: number;
}

/** One managed module event of a ModuleID. */
interface ModuleEvent {
  seq: number;
  time: bigint;
  unload: boolean;
  path: string;
  lowerPath: string;
}

class ProcessSymbols {
  /** Method/UnloadVerbose, DCStopVerboseV2, rundown DCStopVerbose: key = time. */
  readonly resolvers = new RangeIndex<MethodRange>();
  /** Jitted loads (LoadVerbose, DCStartVerboseV2, rundown DCStartVerbose): key = arrival. */
  readonly jitted = new RangeIndex<MethodRange>();
  /** Image Unload / DCEnd events, each with its own range: key = time. */
  readonly imageUnloads = new RangeIndex<ImageRange>();
  /** Loaded images, and by ImageBase (to find the entry an event belongs to). */
  readonly images: ImageEntry[] = [];
  readonly imagesByBase = new Map<bigint, ImageEntry[]>();
  /** ModuleID -> its module events in order. */
  readonly modules = new Map<bigint, ModuleEvent[]>();
  private atEnd?: RangeIndex<ImageRange>;

  /** The images never unloaded (TraceLog's end-of-trace pass), in ImageBase order. */
  imagesAtEnd(): RangeIndex<ImageRange> {
    if (!this.atEnd) {
      const index = new RangeIndex<ImageRange>();
      for (const e of this.images) {
        if (e.unload === NEVER && e.base !== 0n) index.add({ start: e.base, end: e.base + e.size, key: e.base, seq: e.seq, path: e.path });
      }
      this.atEnd = index;
    }
    return this.atEnd;
  }

  imagesChanged(): void {
    this.atEnd = undefined;
  }
}

/** The module path a method resolved in the trace (by the event `seq`) gets, or null ("ManagedModule"). */
function modulePathInTrace(events: ModuleEvent[] | undefined, seq: number): string | null {
  if (!events) return null;
  // the module entry alive when the event is processed: after the last ModuleUnload before it
  let start = 0;
  for (let i = 0; i < events.length && events[i].seq < seq; i++) if (events[i].unload) start = i + 1;
  const e = events[start];
  if (!e) return null;
  // created by that module event (lower-cased), or created empty now and named by the next one
  return e.seq < seq ? e.lowerPath : e.path;
}

/** The module path of a jitted load resolved at the end of the trace (all module events seen). */
function modulePathAtEnd(events: ModuleEvent[] | undefined, time: bigint): string | null {
  if (!events) return null;
  let start = 0;
  for (let i = 0; i < events.length; i++) {
    if (!events[i].unload) continue;
    if (events[i].time > time) break;
    start = i + 1;
  }
  const e = events[start];
  return e ? e.lowerPath : null;
}

/** ModuleILPath as TraceLoadedModules.ManagedModuleLoadOrUnload uses it. */
function managedModulePath(row: EventRow): string {
  let il = String(row.get("ModuleILPath") ?? "");
  const native = String(row.get("ModuleNativePath") ?? "");
  if (il === native) {
    // .NET's LastIndexOf(".ni.", Length, 8): a match starting in the last 7 characters
    const at = il.toLowerCase().lastIndexOf(".ni.");
    if (at >= 0 && at >= il.length - 7) il = il.slice(0, at) + il.slice(at + 3);
  } else if (native.length === 0 && nonZeroGuid(row.get("NativePdbSignature")) && nonZeroGuid(row.get("ManagedPdbSignature"))) {
    // ReadyToRun logged as IL with a native PDB: the image is the native module, a made-up "x.il.dll" the IL one
    const dot = il.lastIndexOf(".");
    if (dot > 0) il = `${il.slice(0, dot)}.il${il.slice(dot)}`;
  }
  return il;
}

function nonZeroGuid(v: unknown): boolean {
  return typeof v === "string" && /[1-9a-f]/i.test(v);
}

function readPtr(b: Uint8Array, at: number, ptr: number): bigint | undefined {
  if (at + ptr > b.length) return undefined;
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  return ptr === 8 ? v.getBigUint64(at, true) : BigInt(v.getUint32(at, true));
}

/**
 * Method and image maps of every process, fed the runtime, rundown and kernel Image events in time
 * order (`add`, or `SymbolMap.fromTrace`); `resolve` names a code address seen at a time. Answers use
 * the events added so far (TraceLog names an address by events after it was seen, so they are final
 * once the whole trace is in).
 */
export class SymbolMap {
  private readonly processes = new Map<number, ProcessSymbols>();
  private pointerSize?: 4 | 8;
  private readonly showUnknownAddresses: boolean;
  private seq = 0;
  /** The event table method names are read from when first resolved (fromTrace), rather than when added. */
  private rows?: EventTable;
  /** The name strings of methods from other tables (a stream's batches), read when first resolved. */
  private readonly namePool = new NamePool();
  /** resolve's frames of addresses with no method, by image path ("" for none). */
  private readonly imageFrames = new Map<string, ResolvedFrame>();
  private readonly sources = new RowSources(SYMBOL_ROWS);

  constructor(options: SymbolMapOptions = {}) {
    this.pointerSize = options.pointerSize;
    this.showUnknownAddresses = options.showUnknownAddresses ?? false;
  }

  /** A map of a whole trace: its runtime, rundown and kernel Image events in time order. */
  static fromTrace(trace: Trace, options: SymbolMapOptions = {}): SymbolMap {
    const map = new SymbolMap(options);
    // the trace is kept: method names are read from it when first resolved (use the map while it is open)
    map.rows = trace.events;
    // only the events add() reads (a trace's runtime events are mostly others): the method and module
    // events and the kernel's image events, in the trace's time order (timeOrderOf: that order of these
    // rows alone, without a place for each of the trace's rows)
    map.addRows(trace.events, trace.events.timeOrderOf(SymbolMap.rowsOf(trace)), trace.tables);
    map.prepare();
    return map;
  }

  /** The rows of `trace` that add() reads (method and module events, kernel image events), in table order. */
  static rowsOf(trace: Trace): Uint32Array {
    const clr = trace.query({ provider: SYMBOL_PROVIDERS.slice(0, 2), eventId: SYMBOL_EVENT_IDS }).indices;
    const images = trace.query({ provider: IMAGE_PROVIDER, opcode: [IMAGE_UNLOAD, IMAGE_DC_START, IMAGE_DC_END, IMAGE_LOAD] }).indices;
    if (!images.length) return clr;
    const out = new Uint32Array(clr.length + images.length);
    out.set(clr);
    out.set(images, clr.length);
    return out.sort();
  }

  /** Builds the lookup indexes of what was added (else the first resolve after additions builds them). */
  prepare(): void {
    for (const p of this.processes.values()) {
      p.resolvers.prepare();
      p.jitted.prepare();
      p.imageUnloads.prepare();
      p.imagesAtEnd().prepare();
    }
  }

  /** A method range's name, read from its event the first time. */
  private nameOfMethod(m: MethodRange): string {
    if (m.name === undefined) {
      if (m.row !== undefined && this.rows) m.name = methodNameOf(this.rows.row(m.row));
      else if (m.nameAt !== undefined) {
        const [chunk, at] = this.namePool.chunkOf(m.nameAt);
        m.name = methodNameIn(chunk, at, at + (m.nameEnd! - m.nameAt));
      } else m.name = "";
      m.row = m.nameAt = m.nameEnd = undefined;
    }
    return m.name;
  }

  /** Whether TraceLog files `address` under process 0 (a kernel address). */
  isKernelAddress(address: bigint): boolean {
    return isKernelAddress(address, this.pointerSize ?? 8);
  }

  /** Takes one event (others are ignored); rows must come in time order. */
  add(row: EventRow): void {
    this.pointerSize ??= row.table.defaultPointerSize === 4 ? 4 : 8;
    const schema = row.clrSchema;
    if (schema) {
      if (schema.provider === RUNTIME) this.addRuntime(row, schema.id);
      else if (schema.provider === RUNDOWN) this.addRundown(row, schema.id);
      return;
    }
    if (row.providerGuid === IMAGE_PROVIDER) this.addImage(row);
  }

  /**
   * Takes `rows` of `table` (others than the map reads are ignored), in time order. `typed`: the trace's
   * typed .NET tables, from which method events are read where they have an entry (no row object and no
   * payload search per event).
   */
  addRows(table: EventTable, rows: ArrayLike<number>, typed: readonly ClrTable[] = []): void {
    this.pointerSize ??= table.defaultPointerSize === 4 ? 4 : 8;
    const src = this.sources.of(table, typed);
    const { flags, pid, timestamp } = table.columns;
    for (let j = 0; j < rows.length; j++) {
      const i = rows[j];
      const kind = src.kind(i);
      const m = kind !== S_NONE ? src.typed(i, kind) : null;
      if (!m) {
        this.add(src.rowAt(i));
        continue;
      }
      const e = src.entry;
      const p = flags[i] & C.F_NO_PROCESS_INFO ? -1 : pid[i];
      if (kind === S_METHOD_START) {
        // (only jitted ones are remembered, as methodStart)
        if (((m.flags ? m.flags[e] : 0) & JITTED) === 0) continue;
        const seq = this.seq++;
        this.process(p).jitted.add(this.typedRange(m, e, table, i, BigInt(seq), seq));
      } else this.process(p).resolvers.add(this.typedRange(m, e, table, i, timestamp[i], this.seq++));
    }
  }

  /** methodRange of a typed entry `e` of row `i`. */
  private typedRange(m: MethodFields, e: number, table: EventTable, i: number, key: bigint, seq: number): MethodRange {
    const start = m.start[e];
    const range = this.newRange(start, start + BigInt(m.size ? m.size[e] : 0), key, seq, m.module ? m.module[e] : 0n, table.columns.timestamp[i]);
    if (this.rows === table) range.row = i;
    else if (m.names) {
      // the three strings with their terminators, as methodStringsOf finds them in the payload
      const [ns, , sig] = m.names;
      const from = ns.offset[e],
        to = sig.offset[e] + sig.length[e] + 2;
      range.nameAt = this.namePool.add(m.table.bytes, from, to);
      range.nameEnd = range.nameAt + to - from;
    } else range.name = decodedMethodName(table.row(i));
    return range;
  }

  private process(pid: number): ProcessSymbols {
    let p = this.processes.get(pid);
    if (!p) this.processes.set(pid, (p = new ProcessSymbols()));
    return p;
  }

  private addRuntime(row: EventRow, id: number): void {
    switch (id) {
      case METHOD_LOAD_VERBOSE:
      case METHOD_DC_START_V2:
        return this.methodStart(row);
      case METHOD_UNLOAD_VERBOSE:
      case METHOD_DC_STOP_V2:
        return this.methodStop(row);
      case MODULE_LOAD:
      case MODULE_DC_STOP_V2:
        return this.module(row, false);
      case MODULE_UNLOAD:
        return this.module(row, true);
    }
  }

  private addRundown(row: EventRow, id: number): void {
    switch (id) {
      case RD_METHOD_DC_START:
        return this.methodStart(row);
      case RD_METHOD_DC_STOP:
        return this.methodStop(row);
      case RD_MODULE_DC_START:
      case RD_MODULE_DC_STOP:
        return this.module(row, false);
    }
  }

  private methodRange(row: EventRow, key: bigint, seq: number): MethodRange {
    const start = BigInt((row.get("MethodStartAddress") as bigint | number | undefined) ?? 0);
    const size = BigInt(Number(row.get("MethodSize") ?? 0));
    const range = this.newRange(start, start + size, key, seq, BigInt((row.get("ModuleID") as bigint | number | undefined) ?? 0), row.timestamp);
    if (this.rows === row.table) range.row = row.index;
    else {
      const strings = methodStringsOf(row);
      if (!strings) range.name = decodedMethodName(row);
      else {
        range.nameAt = this.namePool.add(...strings);
        range.nameEnd = range.nameAt + strings[2] - strings[1];
      }
    }
    return range;
  }

  /** A method range without its name yet. */
  private newRange(start: bigint, end: bigint, key: bigint, seq: number, moduleId: bigint, time: bigint): MethodRange {
    // (every field a range may get, from the start: one shape for all of them, not a new one per field added)
    return {
      start,
      end,
      key,
      seq,
      moduleId,
      time,
      name: undefined,
      row: undefined,
      nameAt: undefined,
      nameEnd: undefined,
      frame: undefined,
      frames: undefined,
    };
  }

  /** A method start: only jitted ones are remembered (for the end-of-trace pass). */
  private methodStart(row: EventRow): void {
    if ((Number(row.get("MethodFlags") ?? 0) & JITTED) === 0) return;
    const seq = this.seq++;
    this.process(row.pid ?? -1).jitted.add(this.methodRange(row, BigInt(seq), seq));
  }

  /** An unload or DCStop: names the addresses seen before it (AddMethod). */
  private methodStop(row: EventRow): void {
    this.process(row.pid ?? -1).resolvers.add(this.methodRange(row, row.timestamp, this.seq++));
  }

  private module(row: EventRow, unload: boolean): void {
    const p = this.process(row.pid ?? -1);
    const id = BigInt((row.get("ModuleID") as bigint | number | undefined) ?? 0);
    let events = p.modules.get(id);
    if (!events) p.modules.set(id, (events = []));
    const path = managedModulePath(row);
    events.push({ seq: this.seq++, time: row.timestamp, unload, path, lowerPath: path.toLowerCase() });
  }

  /** Kernel Image Load / DCStart / Unload / DCEnd (V2+ payloads, etl-format.md §10.4). */
  private addImage(row: EventRow): void {
    const op = row.opcode;
    if ((op !== IMAGE_LOAD && op !== IMAGE_DC_START && op !== IMAGE_UNLOAD && op !== IMAGE_DC_END) || row.version < 2) return;
    const b = row.payload;
    const P = row.pointerSize;
    const base = readPtr(b, 0, P),
      size = readPtr(b, P, P);
    if (base === undefined || size === undefined || b.length < 3 * P + 32) return;
    const payloadPid = new DataView(b.buffer, b.byteOffset, b.length).getUint32(2 * P, true) | 0;
    // TraceEvent takes the header's process for Load, the payload's for the others
    const pid = op === IMAGE_LOAD && row.pid !== null ? row.pid : payloadPid;
    const file = utf16z(b, 3 * P + 32)[0];
    const t = row.timestamp;
    const seq = this.seq++;
    const p = this.process(pid);
    p.imagesChanged();

    // the entry this event belongs to: an image at this base loaded at time t, else a new one
    let list = p.imagesByBase.get(base);
    if (!list) p.imagesByBase.set(base, (list = []));
    let entry: ImageEntry | undefined;
    for (let i = list.length - 1; i >= 0; i--)
      if (list[i].load <= t && t <= list[i].unload) {
        entry = list[i];
        break;
      }
    const isLoad = op === IMAGE_LOAD || op === IMAGE_DC_START;
    if (!entry) {
      entry = { base, size, path: file.toLowerCase(), load: 0n, unload: NEVER, seq };
      list.push(entry);
      p.images.push(entry);
    }
    entry.size = size;
    if (isLoad) {
      entry.load = op === IMAGE_DC_START ? 0n : t;
      return;
    }
    if (op === IMAGE_UNLOAD) entry.unload = t; // a DCEnd leaves it loaded (it is also in the end-of-trace pass)
    p.imageUnloads.add({ start: base, end: base + size, key: t, seq, path: entry.path });
  }

  /**
   * What TraceLog names `address`, seen in process `pid` at raw timestamp `timestamp` (as in
   * `row.timestamp`), and the frame name TraceEvent's stack source prints for it.
   */
  resolve(pid: number, address: bigint, timestamp: bigint): ResolvedFrame {
    return this.resolveHalves(pid, Number(address >> 32n), Number(address & 0xffffffffn), timestamp);
  }

  /** resolve of the address whose high and low 32 bits are `hi` and `lo` (no BigInt per address). */
  resolveHalves(pid: number, hi: number, lo: number, timestamp: bigint): ResolvedFrame {
    const kernel = (this.pointerSize ?? 8) === 8 ? hi >= 0xffff0000 : hi > 0 || lo >= 0x80000000;
    const proc = this.processes.get(kernel ? 0 : pid);
    let method: MethodRange | undefined;
    let image: string | undefined;
    let modulePath: string | null = null;
    if (proc) {
      const stop = proc.resolvers.first(hi, lo, timestamp);
      const unload = proc.imageUnloads.first(hi, lo, timestamp);
      if (stop) {
        method = stop;
        if (unload && unload.seq < stop.seq) image = unload.path;
        else modulePath = modulePathInTrace(proc.modules.get(stop.moduleId), stop.seq);
      } else {
        method = proc.jitted.first(hi, lo);
        image = unload?.path ?? (method ? undefined : proc.imagesAtEnd().first(hi, lo)?.path);
        if (method && image === undefined) modulePath = modulePathAtEnd(proc.modules.get(method.moduleId), method.time);
      }
    }
    const path = image ?? (method ? (modulePath ?? "ManagedModule") : "");
    if (!method && image === undefined && this.showUnknownAddresses) {
      const hex = `0x${((BigInt(hi) << 32n) | BigInt(lo)).toString(16)}`;
      return { kind: "unknown", name: `?!${hex}`, module: "?", method: hex, path };
    }
    // one frame object per (method or none, path): its name is then one string, hashed once where it is a key
    // (a method's frame is kept on it: a method is almost always seen in one module)
    if (method?.frame?.path === path) return method.frame;
    let frame = method ? method.frames?.get(path) : this.imageFrames.get(path);
    if (!frame) {
      const module = image !== undefined || method ? moduleFileName(path) : "?";
      const methodName = method ? this.nameOfMethod(method) : "?";
      const kind: FrameKind = method ? "managed" : image !== undefined ? "native" : "unknown";
      frame = { kind, name: `${module}!${methodName}`, module, method: methodName, path };
      if (!method) this.imageFrames.set(path, frame);
      else if (!method.frame) method.frame = frame;
      else (method.frames ??= new Map()).set(path, frame);
    }
    return frame;
  }
}
