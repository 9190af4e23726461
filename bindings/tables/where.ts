// Conditions on payload fields, for queries (`query({ where })`) and `etw-wasm events --where`:
// `AllocationAmount > 85000`, `Reason = Induced` (a value map's name), `TypeName ~ /String/i`,
// `ClrInstanceID in (0, 1)`, joined by `and`. A condition reads the named field of each row (a field at
// a fixed offset is read where it is, without decoding the payload); a row without the field fails it.

import type { EventRow, EventTable } from "./event-table.js";

export type WhereOp = "=" | "!=" | "<" | "<=" | ">" | ">=" | "~" | "in";

/** One condition: `field op value` (`in`: any of `values`; `~`: `pattern` matches the field's text). */
export interface WhereCondition {
  field: string;
  op: WhereOp;
  values: (number | bigint | string)[];
  pattern?: RegExp;
}

/** A `where` text that does not parse, with the part that does not. */
export class WhereSyntaxError extends Error {
  override readonly name = "WhereSyntaxError";
}

const CONDITION = /^([A-Za-z_][\w.]*)\s*(!=|<=|>=|==|=|<|>|~|matches\b|in\b)\s*(.*)$/is;

/** The conditions of a `where` text (every one must hold). */
export function parseWhere(text: string): WhereCondition[] {
  if (/(^|\s)(and|&&)\s*$|^\s*(and|&&)(\s|$)/i.test(text)) throw new WhereSyntaxError(`empty condition in '${text}'`);
  const parts = splitAnd(text.trim());
  if (!parts.length || parts.some((p) => !p.trim())) throw new WhereSyntaxError(`empty condition in '${text}'`);
  return parts.map((part) => {
    const m = CONDITION.exec(part.trim());
    if (!m) throw new WhereSyntaxError(`'${part.trim()}' is not FIELD OP VALUE (OP one of = != < <= > >= ~ in)`);
    const field = m[1];
    const opText = m[2].toLowerCase();
    const op: WhereOp = opText === "==" ? "=" : opText === "matches" ? "~" : (opText as WhereOp);
    const rest = m[3].trim();
    if (!rest) throw new WhereSyntaxError(`'${part.trim()}' has no value`);
    if (op === "~") {
      const re = /^\/(.*)\/([a-z]*)$/s.exec(rest);
      try {
        const pattern = re ? new RegExp(re[1], re[2]) : new RegExp(escapeRegExp(unquote(rest)), "i");
        return { field, op, values: [], pattern };
      } catch (error) {
        throw new WhereSyntaxError(`'${rest}' is not a regular expression: ${(error as Error).message}`);
      }
    }
    if (op === "in") {
      const list = /^\((.*)\)$/s.exec(rest);
      if (!list) throw new WhereSyntaxError(`'${part.trim()}': in takes a list in parentheses, e.g. in (1, 2)`);
      const values = splitList(list[1]).map(literalOf);
      if (!values.length) throw new WhereSyntaxError(`'${part.trim()}': the list is empty`);
      return { field, op, values };
    }
    const value = literalOf(rest);
    if (op !== "=" && op !== "!=" && typeof value === "string") throw new WhereSyntaxError(`'${part.trim()}': ${op} needs a number`);
    return { field, op, values: [value] };
  });
}

/** `text` split at each ` and ` (or `&&`) outside quotes, regular expressions and parentheses. */
function splitAnd(text: string): string[] {
  const out: string[] = [];
  let start = 0,
    quote = "",
    depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (c === '"' || c === "'" || (c === "/" && /[~]\s*$|matches\s*$/i.test(text.slice(start, i)))) quote = c;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (depth === 0) {
      const and = /^\s+and\s+/i.exec(text.slice(i)) ?? /^\s*&&\s*/.exec(text.slice(i));
      if (and && (c === " " || c === "&" || c === "\t")) {
        out.push(text.slice(start, i));
        i += and[0].length - 1;
        start = i + 1;
      }
    }
  }
  out.push(text.slice(start));
  return out;
}

function splitList(text: string): string[] {
  const out: string[] = [];
  let start = 0,
    quote = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ",") {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter((s) => s.length);
}

function unquote(s: string): string {
  return /^(["']).*\1$/s.test(s) ? s.slice(1, -1) : s;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A value as written: a number (decimal, hex; a bigint past 2^53), else text (quotes taken off). */
function literalOf(s: string): number | bigint | string {
  const t = s.trim();
  if (/^-?(0x[0-9a-f]+|\d+)$/i.test(t)) {
    const neg = t.startsWith("-");
    const big = BigInt(neg ? t.slice(1) : t) * (neg ? -1n : 1n);
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  }
  if (/^-?(\d+\.\d*|\.\d+|\d+)(e[+-]?\d+)?$/i.test(t)) return Number(t);
  return unquote(t);
}

/** -1, 0, 1 comparing a field's value with a number; null when the value is not a number. */
function compare(v: unknown, x: number | bigint): number | null {
  if (typeof v === "boolean") v = v ? 1 : 0;
  if (typeof v === "number") {
    if (typeof x === "bigint") return Number.isInteger(v) ? cmp(BigInt(v), x) : cmp(v, Number(x));
    return cmp(v, x);
  }
  if (typeof v === "bigint") return typeof x === "bigint" ? cmp(v, x) : Number.isInteger(x) ? cmp(v, BigInt(x)) : cmp(Number(v), x);
  return null;
}

function cmp<T extends number | bigint>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether `row` passes `c`. */
function passes(row: EventRow, c: WhereCondition): boolean {
  const v = row.get(c.field);
  if (v === undefined) return false;
  if (c.op === "~") return c.pattern!.test(textOf(row, c.field, v));
  if (c.op === "=" || c.op === "!=" || c.op === "in") {
    const equal = c.values.some((x) => (typeof x === "string" ? sameText(row, c.field, v, x) : compare(v, x) === 0));
    return c.op === "!=" ? !equal : equal;
  }
  const r = compare(v, c.values[0] as number | bigint);
  if (r === null) return false;
  return c.op === "<" ? r < 0 : c.op === "<=" ? r <= 0 : c.op === ">" ? r > 0 : r >= 0;
}

/** A field's text: a value map's name where it has one, else the value as text. */
function textOf(row: EventRow, field: string, v: unknown): string {
  const shown = typeof v === "number" ? row.getDisplay(field) : v;
  return typeof shown === "string"
    ? shown
    : typeof shown === "bigint" || typeof shown === "number" || typeof shown === "boolean"
      ? String(shown)
      : JSON.stringify(shown, (_, x) => (typeof x === "bigint" ? String(x) : x));
}

/** Text equality, case-insensitive (GUIDs and names are written either way), against the raw value's text too. */
function sameText(row: EventRow, field: string, v: unknown, x: string): boolean {
  const want = x.toLowerCase();
  if (textOf(row, field, v).toLowerCase() === want) return true;
  return typeof v !== "string" && String(v).toLowerCase() === want;
}

/** The rows of `rows` (in their order) whose fields pass every condition. */
export function filterWhere(events: EventTable, rows: Uint32Array, where: string | readonly WhereCondition[]): Uint32Array {
  const conditions = typeof where === "string" ? parseWhere(where) : where;
  const out = new Uint32Array(rows.length);
  let k = 0;
  for (const row of events.cursor(rows)) {
    if (conditions.every((c) => passes(row, c))) out[k++] = row.index;
  }
  return out.slice(0, k);
}
