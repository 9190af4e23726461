#!/usr/bin/env node
// Writes the typed-table fill of both cores from the .NET runtime schema: assembly/clr-fill.ts (the
// WebAssembly core) and bindings/core/generated/clr-fill.ts (the TypeScript core). Each schema event gets a
// function that copies one record's fields straight into its table's columns (constant offsets,
// constant column positions), called from the record walk as the row is written. A record that does
// not fit the common case (a payload cut short, a string without its terminator, a count past 2^32,
// a struct array whose elements must be walked) goes to the field-program walk (clr.ts clrSlow), which
// is the reference: the fast path stores exactly what the walk would, or leaves the row to it.
//
// The layouts (column order and offsets) are those of bindings/schema/clr-program.ts, read from the
// build (dist/): run `npm run build:ts` first. The output is committed; test/clr-fill.test.ts checks
// that it is what this script writes.
//   node scripts/gen-clr-fill.mjs           write both files
//   node scripts/gen-clr-fill.mjs --check   exit 1 if a file is not what this script writes

import { readFileSync, writeFileSync } from "node:fs";

const root = new URL("../", import.meta.url);

/**
 * The generated sources for `layouts` (clrProgram().layouts) and the codes (assembly/codes.ts); VALUE_WIDTH is the
 * schema's (bindings/schema/clr-program.ts), the column width of each value type.
 */
export function generate(layouts, C, layoutFingerprint, VALUE_WIDTH) {
  const SIGNED = new Set([C.T_I8, C.T_I16, C.T_I32]);
  /** Payload bytes of a value kind: [32-bit records, 64-bit records]. */
  const fixedSize = (kind) => {
    if (kind === C.T_PTR) return [4, 8];
    if (kind === C.T_GUID || kind === C.T_SYSTEMTIME) return [16, 16];
    const w = VALUE_WIDTH[kind];
    return w ? [w, w] : [0, 0];
  };

  // Steps of a layout's fast path, or null when every row goes to the walk.
  function plan(layout) {
    const fields = layout.schema.fields;
    const steps = [];
    const referenced = new Set();
    const refOf = (i, name) => {
      if (name === undefined) return undefined;
      const lit = Number(name);
      if (Number.isInteger(lit)) return { literal: lit };
      for (let k = i - 1; k >= 0; k--) if (fields[k].name === name) return k < C.CLR_SCOPE_VALUES ? { field: k } : { literal: 0 };
      return { literal: 0 };
    };
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      const col = layout.columns[i];
      const countRef = refOf(i, f.type === C.T_BINARY ? f.length : f.count);
      if (countRef?.field !== undefined) referenced.add(countRef.field);
      if (f.type === C.T_USTR || f.type === C.T_ASTR) steps.push({ kind: f.type === C.T_USTR ? "ustr" : "astr", i, col });
      else if (f.type === C.T_BINARY) steps.push({ kind: "array", i, col, size: [1, 1], count: countRef ?? { literal: 1 } });
      else if (f.type === C.T_STRUCT) {
        const padded = f.elementSize64 != null && f.elementSize32 != null;
        if (!padded) return null;
        steps.push({ kind: "array", i, col, size: [f.elementSize32, f.elementSize64], count: countRef ?? { literal: 1 } });
      } else if (countRef) steps.push({ kind: "array", i, col, size: fixedSize(f.type), count: countRef });
      else if (f.type === C.T_GUID || f.type === C.T_SYSTEMTIME) steps.push({ kind: "ref16", i, col });
      else steps.push({ kind: "value", i, col, type: f.type, size: fixedSize(f.type) });
    }
    return { steps, referenced };
  }

  // Runs of fixed-size steps are checked against the payload's end once.
  function groups(steps) {
    const out = [];
    for (const s of steps) {
      const fixed = s.kind === "value" || s.kind === "ref16";
      const last = out[out.length - 1];
      if (fixed && last?.fixed) last.steps.push(s);
      else out.push({ fixed, steps: [s] });
    }
    return out;
  }

  const as = [];
  const ts = [];
  const sel = (pair, p8 = "p8") => (pair[0] === pair[1] ? String(pair[0]) : `(${p8} ? ${pair[1]} : ${pair[0]})`);
  const fastCount = { n: 0 };

  for (let t = 0; t < layouts.length; t++) {
    const layout = layouts[t];
    const p = plan(layout);
    const title = `// ${t}: ${layout.schema.name} v${layout.schema.version}`;
    if (!p) {
      as.push(title, `function rows${t}(d: usize, list: usize, n: u32): void {`, `  clrSlowRows(STATE, ${t}, d, list, n);`, `}`, ``);
      ts.push(
        title,
        `function fill${t}(s: CoreState, d: number, row: number, q: number, end: number, p8: boolean): void {`,
        `  clrSlowRow(s, ${t}, d, row, q, end, p8);`,
        `}`,
        ``,
      );
      continue;
    }
    fastCount.n++;
    // (the AssemblyScript body runs in a loop over the rows of one schema event: its column addresses are hoisted)
    const used = new Set([layout.preRow, layout.preStatus]);
    const A = [
      `  store<u32>(c${layout.preRow} + (r << 2), <u32>row);`,
      `  store<u8>(c${layout.preStatus} + r, 0);`,
      `  let pos = q;`,
      ...[...p.referenced].map((k) => `  let v${k}: u64 = 0;`),
    ];
    const T = [
      `function fill${t}(s: CoreState, d: number, row: number, q: number, end: number, p8: boolean): void {`,
      `  const r = clrReserve(s, ${t}, d, 1);`,
      `  if (r === 0xffffffff) return;`,
      `  const U8 = s.u8, U16 = s.u16, U32 = s.u32, v = s.dv;`,
      `  const c = U32[(d + CLR_DIR_CAP) >>> 2], b = U32[(d + CLR_DIR_BLOCK) >>> 2];`,
      `  U32[((b + c * ${layout.preRow}) >>> 2) + r] = row;`,
      `  U8[b + c * ${layout.preStatus} + r] = 0;`,
      `  let pos = q;`,
      ...[...p.referenced].map((k) => `  let v${k} = 0;`),
    ];
    const slowA = `{ clrSlow(STATE, ${t}, b, c, r, q, end, p8); continue; }`;
    const slowT = `{ clrSlow(s, ${t}, b, c, r, q, end, p8); return; }`;
    const col = (pre) => `b + c * ${pre}`;
    const colA = (pre) => {
      used.add(pre);
      return `c${pre}`;
    };
    for (const g of groups(p.steps)) {
      if (g.fixed) {
        let o = [0, 0];
        const parts = [];
        for (const s of g.steps) {
          parts.push({ s, off: [...o] });
          const sz = s.kind === "ref16" ? [16, 16] : s.size;
          o = [o[0] + sz[0], o[1] + sz[1]];
        }
        A.push(`  if (pos + ${sel(o)} > end) ${slowA}`);
        T.push(`  if (pos + ${sel(o)} > end) ${slowT}`);
        for (const { s, off } of parts) {
          const at = off[0] === 0 && off[1] === 0 ? "pos" : `pos + ${sel(off)}`;
          const name = layout.schema.fields[s.i].name;
          if (s.kind === "ref16") {
            A.push(`  store<u32>(${colA(s.col.pre)} + (r << 2), <u32>(${at})); // ${name}`);
            T.push(`  U32[((${col(s.col.pre)}) >>> 2) + r] = ${at}; // ${name}`);
            continue;
          }
          const w = VALUE_WIDTH[s.type];
          const ref = p.referenced.has(s.i);
          if (s.type === C.T_PTR) {
            A.push(`  store<u64>(${colA(s.col.pre)} + (r << 3), p8 ? load<u64>(${at}) : <u64>load<u32>(${at})); // ${name}`);
            T.push(
              `  { const x = ((${col(s.col.pre)}) >>> 2) + 2 * r; U32[x] = v.getUint32(${at}, true); U32[x + 1] = p8 ? v.getUint32(${at} + 4, true) : 0; } // ${name}`,
            );
            if (ref) {
              A.push(`  v${s.i} = p8 ? load<u64>(${at}) : <u64>load<u32>(${at});`);
              T.push(`  v${s.i} = p8 ? v.getUint32(${at} + 4, true) * 4294967296 + v.getUint32(${at}, true) : v.getUint32(${at}, true);`);
            }
            continue;
          }
          const ty = { 1: "u8", 2: "u16", 4: "u32", 8: "u64" }[w];
          const sh = { 1: "", 2: " << 1", 4: " << 2", 8: " << 3" }[w];
          if (ref) {
            // the value a later count or length reads: sign-extended as the walk reads it
            const st = SIGNED.has(s.type) ? { 1: "i8", 2: "i16", 4: "i32" }[w] : ty;
            A.push(`  v${s.i} = <u64>load<${st}>(${at});`);
            A.push(`  store<${ty}>(${colA(s.col.pre)} + (r${sh}), <${ty}>v${s.i}); // ${name}`);
          } else {
            A.push(`  store<${ty}>(${colA(s.col.pre)} + (r${sh}), load<${ty}>(${at})); // ${name}`);
          }
          if (w === 1) T.push(`  U8[${col(s.col.pre)} + r] = U8[${at}]; // ${name}`);
          else if (w === 2) T.push(`  U16[((${col(s.col.pre)}) >>> 1) + r] = v.getUint16(${at}, true); // ${name}`);
          else if (w === 4) T.push(`  U32[((${col(s.col.pre)}) >>> 2) + r] = v.getUint32(${at}, true); // ${name}`);
          else
            T.push(
              `  { const x = ((${col(s.col.pre)}) >>> 2) + 2 * r; U32[x] = v.getUint32(${at}, true); U32[x + 1] = v.getUint32(${at} + 4, true); } // ${name}`,
            );
          if (ref) {
            // (a negative count is huge to the walk: the payload cannot hold it)
            const get =
              w === 1
                ? `v.get${SIGNED.has(s.type) ? "Int8" : "Uint8"}(${at})`
                : w === 2
                  ? `v.get${SIGNED.has(s.type) ? "Int16" : "Uint16"}(${at}, true)`
                  : w === 4
                    ? `v.get${SIGNED.has(s.type) ? "Int32" : "Uint32"}(${at}, true)`
                    : `v.getUint32(${at} + 4, true) * 4294967296 + v.getUint32(${at}, true)`;
            T.push(`  v${s.i} = ${SIGNED.has(s.type) ? `${get} < 0 ? 1.8446744073709552e19 : ${get}` : get};`);
          }
        }
        A.push(`  pos += ${sel(o)};`);
        T.push(`  pos += ${sel(o)};`);
        continue;
      }
      const s = g.steps[0];
      const name = layout.schema.fields[s.i].name;
      if (s.kind === "ustr" || s.kind === "astr") {
        const unit = s.kind === "ustr" ? 2 : 1;
        const keep = p.referenced.has(s.i);
        A.push(
          `  { // ${name}`,
          `    let z = ${s.kind === "ustr" ? "scanUtf16" : "scanAnsi"}(STATE, pos, end);`,
          `    if (z + ${unit} > end) ${slowA}`,
          `    store<u32>(${colA(s.col.pre)} + (r << 2), <u32>pos);`,
          `    store<u32>(${colA(s.col.preB)} + (r << 2), <u32>(z - pos));`,
          ...(keep ? [`    v${s.i} = <u64>(z - pos);`] : []),
          `    pos = z + ${unit};`,
          `  }`,
        );
        T.push(
          `  { // ${name}`,
          `    const z = ${s.kind === "ustr" ? "scanUtf16" : "scanAnsi"}(s, pos, end);`,
          `    if (z + ${unit} > end) ${slowT}`,
          `    U32[((${col(s.col.pre)}) >>> 2) + r] = pos;`,
          `    U32[((${col(s.col.preB)}) >>> 2) + r] = z - pos;`,
          ...(keep ? [`    v${s.i} = z - pos;`] : []),
          `    pos = z + ${unit};`,
          `  }`,
        );
        continue;
      }
      // arrays, binary, padded struct arrays: a reference (offset, count or length)
      const keep = p.referenced.has(s.i);
      const n = s.count.literal !== undefined ? String(s.count.literal) : `v${s.count.field}`;
      const size = sel(s.size);
      A.push(
        `  { // ${name}`,
        `    let n: u64 = ${n};`,
        `    let bytes = <u64>${size} * n;`,
        `    if (n > 0xffffffff || <u64>pos + bytes > <u64>end) ${slowA}`,
        `    store<u32>(${colA(s.col.pre)} + (r << 2), <u32>pos);`,
        `    store<u32>(${colA(s.col.preB)} + (r << 2), <u32>n);`,
        ...(keep ? [`    v${s.i} = n;`] : []),
        `    pos += <usize>bytes;`,
        `  }`,
      );
      T.push(
        `  { // ${name}`,
        `    const n = ${n};`,
        `    const bytes = ${size} * n;`,
        `    if (n > 0xffffffff || pos + bytes > end) ${slowT}`,
        `    U32[((${col(s.col.pre)}) >>> 2) + r] = pos;`,
        `    U32[((${col(s.col.preB)}) >>> 2) + r] = n;`,
        ...(keep ? [`    v${s.i} = n;`] : []),
        `    pos += bytes;`,
        `  }`,
      );
    }
    T.push(`}`, ``);
    as.push(
      title,
      `function rows${t}(d: usize, list: usize, n: u32): void {`,
      `  let count = <usize>clrReserve(STATE, ${t}, d, n);`,
      `  if (count == <usize>-1) return;`,
      `  let b = <usize>load<u32>(d, CLR_DIR_BLOCK);`,
      `  let c = <usize>load<u32>(d, CLR_DIR_CAP);`,
      ...[...used].sort((x, y) => x - y).map((pre) => `  let c${pre} = b + c * ${pre};`),
      `  let po = STATE.colPayloadOffset, pl = STATE.colPayloadLength, ph = STATE.colHeaderType;`,
      `  for (let i: usize = 0; i < <usize>n; i++) {`,
      `    let row = <usize>load<u32>(list + (i << 2));`,
      `    let q = <usize>load<u32>(po + (row << 2));`,
      `    let end = q + <usize>load<u16>(pl + (row << 1));`,
      `    let p8 = <u32>load<u8>(ph + row) == HT_EVENT_HEADER64;`,
      `    let r = count + i;`,
      ...A.map((l) => "  " + l),
      `  }`,
      `}`,
      ``,
    );
    ts.push(title, ...T);
  }

  const count = layouts.length;
  const fingerprint = layoutFingerprint(layouts);
  const tsTable = `const FILL: ((s: CoreState, d: number, row: number, q: number, end: number, p8: boolean) => void)[] = [${layouts.map((_, t) => `fill${t}`).join(", ")}];`;
  const head = (core) => [
    `// Generated by scripts/gen-clr-fill.mjs from the .NET runtime schema (${count} events, ${fastCount.n} with a fast path): do not edit.`,
    ...(core === "WebAssembly"
      ? [
          `// The typed-table fill of the WebAssembly core: one function per schema event, called with event-table rows`,
          `// of its records (in row order, each payload where the row's columns say); clrSlow (the field-program walk)`,
          `// takes whatever the fast path does not.`,
        ]
      : [
          `// The typed-table fill of the TypeScript core: one function per schema event, called with the record's`,
          `// payload [q, end) as its row is written; clrSlow (the field-program walk) takes whatever the fast path does not.`,
        ]),
  ];
  const asText = [
    ...head("WebAssembly"),
    ``,
    `import { CLR_DIR_CAP, CLR_DIR_BLOCK, HT_EVENT_HEADER64 } from "./codes";`,
    `import { clrReserve, clrSlow, clrSlowRows, scanUtf16, scanAnsi } from "./clr";`,
    `import { Mem, STATE } from "./memory-access";`,
    ``,
    `/** The layouts this fill was generated for (bindings/schema/clr-program.ts); setClr checks it. */`,
    `export const CLR_FILL_FINGERPRINT: u32 = ${fingerprint};`,
    `export const CLR_FILL_TYPES: u32 = ${count};`,
    ``,
    ...as,
    `// (a table of functions: a switch would inline every one of them into one huge function)`,
    `const FILL: StaticArray<(d: usize, list: usize, n: u32) => void> = [${layouts.map((_, t) => `rows${t}`).join(", ")}];`,
    ``,
    `/**`,
    ` * Writes the rows of schema event \`t\` (\`d\`: its directory entry) for \`n\` rows of the event table, whose`,
    ` * indices are the u32 at \`list\` (records.ts noteTyped): each row's payload is where its columns say.`,
    ` */`,
    `export function fillClrRows(m: Mem, t: i32, d: usize, list: usize, n: u32): void {`,
    `  unchecked(FILL[t])(d, list, n);`,
    `}`,
  ].join("\n");
  const tsText = [
    ...head("TypeScript"),
    ``,
    `import * as codes from "../../../assembly/codes.js";`,
    `import { clrReserve, clrSlow, clrSlowRow, scanUtf16, scanAnsi } from "./clr.js";`,
    `import type { CoreState } from "../state.js";`,
    ``,
    `// (module consts read by name: destructuring the namespace would keep every code in an app's bundle)`,
    `const CLR_DIR_CAP = codes.CLR_DIR_CAP, CLR_DIR_BLOCK = codes.CLR_DIR_BLOCK, HT_EVENT_HEADER64 = codes.HT_EVENT_HEADER64;`,
    ``,
    `/** The layouts this fill was generated for (bindings/schema/clr-program.ts); setClr checks it. */`,
    `export const CLR_FILL_FINGERPRINT = ${fingerprint};`,
    `export const CLR_FILL_TYPES = ${count};`,
    ``,
    ...ts,
    tsTable,
    ``,
    `/**`,
    ` * Writes the rows of schema event \`t\` (\`d\`: its directory entry) for \`n\` rows of the event table, whose`,
    ` * indices are the u32 at \`list\` (records.ts noteTyped): each row's payload is where its columns say.`,
    ` */`,
    `export function fillClrRows(s: CoreState, t: number, d: number, list: number, n: number): void {`,
    `  const fill = FILL[t];`,
    `  for (let i = 0; i < n; i++) {`,
    `    // (a fill may grow the memory: the views are taken again for each row)`,
    `    const row = s.u32[(list >>> 2) + i];`,
    `    const q = s.u32[(s.colPayloadOffset >>> 2) + row];`,
    `    fill(s, d, row, q, q + s.u16[(s.colPayloadLength >>> 1) + row], s.u8[s.colHeaderType + row] === HT_EVENT_HEADER64);`,
    `  }`,
    `}`,
    ``,
  ].join("\n");
  return { as: asText + "\n", ts: tsText };
}

async function main() {
  const C = await import(new URL("dist/assembly/codes.js", root).href);
  const { clrProgram, layoutFingerprint, VALUE_WIDTH } = await import(new URL("dist/bindings/schema/clr-program.js", root).href);
  const { as, ts } = generate(clrProgram().layouts, C, layoutFingerprint, VALUE_WIDTH);
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const [path, text] of [
    ["assembly/clr-fill.ts", as],
    ["bindings/core/generated/clr-fill.ts", ts],
  ]) {
    const at = new URL(path, root);
    let have = "";
    try {
      have = readFileSync(at, "utf8");
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT") throw error;
    }
    if (have === text) continue;
    stale++;
    if (check) console.error(`${path} is not what scripts/gen-clr-fill.mjs writes`);
    else writeFileSync(at, text);
  }
  if (check && stale) process.exit(1);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop() ?? "")) await main();
