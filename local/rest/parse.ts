// PostgREST's query grammar (src/PostgREST/ApiRequest/QueryParams.hs): the
// `select` tree, filters (`col=[not.]op.value`), logic trees (`or=(...)`),
// `order`, and the embed paths in front of them (`driver.name=eq.x`).
// Everything here is syntax; names are checked against the schema cache later.
import { errors } from "./errors.ts";

export type JsonOp = { arrow: "->" | "->>"; key: string; index: boolean };
export interface Field {
  name: string;
  json: JsonOp[];
}

export type Aggregate = "avg" | "count" | "max" | "min" | "sum";
export interface SelectField {
  kind: "field";
  /** `*` with the aggregate count for `count()`. */
  field: Field;
  /** The field's cast, before an aggregate: `amount::int.sum()`. */
  cast?: string;
  alias?: string;
  aggregate?: Aggregate;
  /** The aggregate's cast: `amount.sum()::text`, `count()::int`. */
  aggregateCast?: string;
}
export interface SelectEmbed {
  kind: "embed";
  name: string;
  alias?: string;
  hint?: string;
  join?: "inner" | "left";
  spread: boolean;
  children: SelectItem[];
}
export type SelectItem = SelectField | SelectEmbed;

export type Operation =
  | { op: "in"; values: string[] }
  | { op: "is"; value: "null" | "not_null" | "true" | "false" | "unknown" }
  | { op: "isdistinct"; value: string }
  | { op: "fts" | "plfts" | "phfts" | "wfts"; lang?: string; value: string }
  | { op: "simple"; operator: string; value: string }
  | { op: "quant"; operator: string; quantifier?: "any" | "all"; value: string };

export interface OpExpr {
  negated: boolean;
  operation: Operation;
}
export interface Filter {
  field: Field;
  expr: OpExpr;
}
export type LogicTree =
  | { kind: "stmt"; filter: Filter }
  | { kind: "expr"; negated: boolean; operator: "and" | "or"; children: LogicTree[] };

export interface OrderTerm {
  field: Field;
  /** A related order: `order=driver(name).desc`. */
  relation?: string;
  direction?: "asc" | "desc";
  nulls?: "first" | "last";
}

class Cursor {
  pos = 0;
  constructor(readonly text: string, readonly context: string) {}
  get done() {
    return this.pos >= this.text.length;
  }
  peek(n = 1) {
    return this.text.slice(this.pos, this.pos + n);
  }
  startsWith(s: string) {
    return this.text.startsWith(s, this.pos);
  }
  eat(s: string): boolean {
    if (!this.startsWith(s)) return false;
    this.pos += s.length;
    return true;
  }
  expect(s: string, what = `"${s}"`) {
    if (!this.eat(s)) this.fail(what);
  }
  /** A parse error in PostgREST's (parsec's) wording. */
  fail(expecting: string): never {
    const unexpected = this.done ? "end of input" : `"${this.text[this.pos]}"`;
    throw errors.queryParam(
      `"${this.context}" (line 1, column ${this.pos + 1})`,
      `unexpected ${unexpected} expecting ${expecting}`,
    );
  }
}

const IDENT = /[\p{L}\p{N}_ $]/u;

function quotedValue(c: Cursor): string {
  c.expect('"');
  let out = "";
  while (!c.done && c.peek() !== '"') {
    if (c.peek() === "\\") c.pos++;
    if (c.done) break;
    // Postgres identifiers and text cannot hold NUL: refused here, as any other character the grammar has no place for.
    if (c.peek() === "\0") c.fail('any character but NUL or """');
    out += c.text[c.pos++];
  }
  c.expect('"');
  return out;
}

function identifier(c: Cursor): string {
  const start = c.pos;
  while (!c.done && IDENT.test(c.peek())) c.pos++;
  if (c.pos === start) c.fail("field name (* or [a..z0..9_$])");
  return c.text.slice(start, c.pos).trim();
}

/** pFieldName: a quoted name, or identifiers joined by dashes not starting an arrow. */
function fieldName(c: Cursor): string {
  if (c.peek() === '"') return quotedValue(c);
  let name = identifier(c);
  while (c.peek() === "-" && c.peek(2) !== "->") {
    c.pos++;
    name += `-${identifier(c)}`;
  }
  return name;
}

function jsonPath(c: Cursor): JsonOp[] {
  const ops: JsonOp[] = [];
  while (c.startsWith("->")) {
    const arrow = c.eat("->>") ? "->>" : (c.eat("->"), "->");
    const index = /^-?\d+(?=->|::|\.|,|\)|$)/.exec(c.text.slice(c.pos));
    if (index) {
      c.pos += index[0].length;
      ops.push({ arrow, key: index[0], index: true });
      continue;
    }
    let key: string;
    if (c.peek() === '"') key = quotedValue(c);
    else {
      const start = c.pos;
      while (!c.done && !"(-:.,>)".includes(c.peek())) c.pos++;
      if (c.pos === start) c.fail("any non reserved character different from: .,>()");
      key = c.text.slice(start, c.pos).trim();
    }
    ops.push({ arrow, key, index: false });
  }
  return ops;
}

function field(c: Cursor): Field {
  const name = fieldName(c);
  return { name, json: jsonPath(c) };
}

function atItemEnd(c: Cursor) {
  return c.done || c.peek() === "," || c.peek() === ")";
}

// --- select ------------------------------------------------------------------

export function parseSelect(text: string): SelectItem[] {
  const c = new Cursor(text, `failed to parse select parameter (${text})`);
  // No field name, JSON key or alias takes a NUL: refused here, before any part of the select reaches SQL.
  const nul = text.indexOf("\0");
  if (nul >= 0) {
    c.pos = nul;
    c.fail("any character but NUL");
  }
  const items = selectForest(c);
  if (!c.done) c.fail('"," or end of input');
  return items;
}

/** Deeper embedding than this is refused as a parse error (no schema needs it; it bounds the recursion). */
const MAX_DEPTH = 32;

function selectForest(c: Cursor, depth = 0): SelectItem[] {
  const items: SelectItem[] = [];
  if (c.done || c.peek() === ")") return items;
  if (depth > MAX_DEPTH) c.fail(`at most ${MAX_DEPTH} levels of embedding`);
  do items.push(selectItem(c, depth)); while (c.eat(","));
  return items;
}

function embedParams(c: Cursor): { hint?: string; join?: "inner" | "left" } {
  const out: { hint?: string; join?: "inner" | "left" } = {};
  for (let i = 0; i < 2 && c.peek() === "!"; i++) {
    c.pos++;
    if (/^(inner|left)(?=[!(])/.test(c.text.slice(c.pos))) {
      out.join = c.text.startsWith("inner", c.pos) ? "inner" : "left";
      c.pos += out.join.length;
    } else out.hint = fieldName(c);
  }
  return out;
}

function selectItem(c: Cursor, depth: number): SelectItem {
  const start = c.pos;
  if (c.eat("...")) {
    const name = fieldName(c);
    const params = embedParams(c);
    c.expect("(");
    const children = selectForest(c, depth + 1);
    c.expect(")");
    return { kind: "embed", name, spread: true, children, ...params };
  }
  if (c.peek() === "*") {
    c.pos++;
    if (!atItemEnd(c)) c.fail('"," or ")"');
    return { kind: "field", field: { name: "*", json: [] } };
  }
  // [alias:]name[!hint][!inner](...), or [alias:]field[->json][::cast]
  let alias: string | undefined;
  let name = fieldName(c);
  if (c.peek() === ":" && c.peek(2) !== "::") {
    c.pos++;
    alias = name;
    name = fieldName(c);
  }
  // `[alias:]count()[::cast]`: count(*) of the rows (pFieldSelect tries it before a field).
  if (name === "count" && c.eat("()")) {
    const aggregateCast = c.eat("::") ? identifier(c) : undefined;
    if (!atItemEnd(c)) c.fail('"," or ")"');
    return { kind: "field", field: { name: "*", json: [] }, alias, aggregate: "count", aggregateCast };
  }
  if (c.peek() === "!" || c.peek() === "(") {
    const params = embedParams(c);
    c.expect("(");
    const children = selectForest(c, depth + 1);
    c.expect(")");
    return { kind: "embed", name, alias, spread: false, children, ...params };
  }
  const json = jsonPath(c);
  let cast: string | undefined;
  if (c.eat("::")) cast = identifier(c);
  const aggregate = /^\.(sum|avg|count|max|min)\(\)/.exec(c.text.slice(c.pos));
  let aggregateCast: string | undefined;
  if (aggregate) {
    c.pos += aggregate[0].length;
    if (c.eat("::")) aggregateCast = identifier(c);
  }
  if (!atItemEnd(c)) {
    c.pos = Math.max(c.pos, start);
    c.fail('"," or ")"');
  }
  return {
    kind: "field",
    field: { name, json },
    cast,
    alias,
    ...(aggregate ? { aggregate: aggregate[1] as Aggregate, aggregateCast } : {}),
  };
}

// --- filters -----------------------------------------------------------------

const QUANT_OPS = ["eq", "gte", "gt", "lte", "lt", "like", "ilike", "match", "imatch"];
const SIMPLE_OPS = ["neq", "cs", "cd", "ov", "sl", "sr", "nxr", "nxl", "adj"];

function opExpr(c: Cursor, singleValue: (c: Cursor) => string): OpExpr {
  const negated = c.eat("not.");
  const rest = c.text.slice(c.pos);
  if (c.eat("in.")) return { negated, operation: { op: "in", values: listValue(c) } };
  if (c.eat("is.")) {
    const start = c.pos;
    const value = /^(null|not_null|true|false|unknown)$/i.exec(singleValue(c));
    if (!value) {
      c.pos = start;
      c.fail("isVal: (null, not_null, true, false, unknown)");
    }
    return { negated, operation: { op: "is", value: value[1].toLowerCase() as "null" } };
  }
  if (c.eat("isdistinct.")) return { negated, operation: { op: "isdistinct", value: singleValue(c) } };
  const fts = /^(fts|plfts|phfts|wfts)(?:\(([\p{L}\p{N}_ $]+)\))?\./u.exec(rest);
  if (fts) {
    c.pos += fts[0].length;
    return {
      negated,
      operation: { op: fts[1] as "fts", lang: fts[2]?.trim(), value: singleValue(c) },
    };
  }
  const simple = SIMPLE_OPS.find((op) => rest.startsWith(`${op}.`));
  if (simple) {
    c.pos += simple.length + 1;
    return { negated, operation: { op: "simple", operator: simple, value: singleValue(c) } };
  }
  const quant = /^(eq|gte|gt|lte|lt|like|ilike|match|imatch)(?:\((any|all)\))?\./.exec(rest);
  if (quant && QUANT_OPS.includes(quant[1])) {
    c.pos += quant[0].length;
    return {
      negated,
      operation: { op: "quant", operator: quant[1], quantifier: quant[2] as "any" | undefined, value: singleValue(c) },
    };
  }
  c.fail(negated ? "operator (eq, gt, ...)" : '"not" or operator (eq, gt, ...)');
}

function listValue(c: Cursor): string[] {
  c.expect("(");
  const values: string[] = [];
  do {
    if (c.peek() === '"') {
      const save = c.pos;
      const value = quotedValue(c);
      if (c.peek() === "," || c.peek() === ")") {
        values.push(value);
        continue;
      }
      c.pos = save;
    }
    const start = c.pos;
    while (!c.done && c.peek() !== "," && c.peek() !== ")") c.pos++;
    values.push(c.text.slice(start, c.pos));
  } while (c.eat(","));
  c.expect(")");
  return values;
}

const restOfInput = (c: Cursor) => {
  const value = c.text.slice(c.pos);
  c.pos = c.text.length;
  return value;
};

/** A filter's value `[not.]op.value`; null when it is no operator expression (an RPC argument on GET). */
export function parseFilterValue(value: string, lenient: boolean): OpExpr | null {
  const c = new Cursor(value, `failed to parse filter (${value})`);
  try {
    return opExpr(c, restOfInput);
  } catch (error) {
    if (lenient) return null;
    throw error;
  }
}

/** A key `a.b.field->json`: the embed path and the field. */
export function parseTreePath(key: string): { path: string[]; field: Field } {
  const c = new Cursor(key, `failed to parse tree path (${key})`);
  const names = [fieldName(c)];
  while (c.eat(".")) names.push(fieldName(c));
  const json = jsonPath(c);
  if (!c.done) c.fail('"." or end of input');
  return { path: names.slice(0, -1), field: { name: names[names.length - 1], json } };
}

function logicSingleValue(c: Cursor): string {
  if (c.peek() === '"') {
    const save = c.pos;
    const value = quotedValue(c);
    if (c.done || c.peek() === "," || c.peek() === ")") return value;
    c.pos = save;
  }
  if (c.peek() === "{") {
    const end = c.text.indexOf("}", c.pos);
    if (end > 0 && !c.text.slice(c.pos + 1, end).includes("{")) {
      const value = c.text.slice(c.pos, end + 1);
      c.pos = end + 1;
      return value;
    }
  }
  const start = c.pos;
  while (!c.done && c.peek() !== "," && c.peek() !== ")") c.pos++;
  return c.text.slice(start, c.pos);
}

function logicTree(c: Cursor, depth = 0): LogicTree {
  const save = c.pos;
  const negated = c.eat("not.");
  const operator = c.eat("and") ? "and" : c.eat("or") ? "or" : null;
  if (operator && c.peek() === "(") {
    if (depth > MAX_DEPTH) c.fail(`at most ${MAX_DEPTH} levels of and/or`);
    c.pos++;
    const children: LogicTree[] = [];
    do children.push(logicTree(c, depth + 1)); while (c.eat(","));
    c.expect(")", '"," or ")"');
    return { kind: "expr", negated, operator, children };
  }
  c.pos = save;
  const f = field(c);
  c.expect(".", '"."');
  return { kind: "stmt", filter: { field: f, expr: opExpr(c, logicSingleValue) } };
}

/** `or=(a.eq.1,b.eq.2)` under the key `[path.][not.]or`. */
export function parseLogic(key: string, value: string): { path: string[]; tree: LogicTree } {
  const parts = key.split(".");
  const operator = parts[parts.length - 1];
  const negated = parts.includes("not");
  const path = parts.slice(0, -1).filter((p) => p !== "not");
  const text = `${negated ? "not." : ""}${operator}${value}`;
  const c = new Cursor(text, `failed to parse logic tree (${value})`);
  const tree = logicTree(c);
  if (!c.done || tree.kind !== "expr") c.fail('"," or end of input');
  return { path, tree };
}

/** `order=a.desc.nullslast,driver(name).asc` */
export function parseOrder(value: string): OrderTerm[] {
  const c = new Cursor(value, `failed to parse order (${value})`);
  const terms: OrderTerm[] = [];
  do {
    let term: OrderTerm;
    const name = fieldName(c);
    if (c.eat("(")) {
      const f = field(c);
      c.expect(")");
      term = { field: f, relation: name };
    } else term = { field: { name, json: jsonPath(c) } };
    if (c.eat(".asc")) term.direction = "asc";
    else if (c.eat(".desc")) term.direction = "desc";
    if (c.eat(".nullsfirst")) term.nulls = "first";
    else if (c.eat(".nullslast")) term.nulls = "last";
    if (!c.done && c.peek() !== ",") c.fail('"asc", "desc", "nullsfirst" or "nullslast"');
    terms.push(term);
  } while (c.eat(","));
  return terms;
}

/** `columns=a,b` and `on_conflict=a,b`: field names separated by commas. */
export function parseColumns(text: string, parameter: string): string[] {
  const c = new Cursor(text, `failed to parse ${parameter} parameter (${text})`);
  const names = [fieldName(c)];
  while (c.eat(",")) names.push(fieldName(c));
  if (!c.done) c.fail('"," or end of input');
  return names;
}
