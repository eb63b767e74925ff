// The declarative schema's files (supabase/schemas/), in the order
// supabase/config.toml's `[db.migrations] schema_paths` gives them, as the
// Supabase CLI reads that list: each entry a path or a glob relative to
// supabase/, a glob's matches in name order, a file listed twice applied once.
//
// And the once-only check: every function (each overload) is created once
// across these files, in one file, and every object is commented once, so that
// a reader finds the one body that runs by opening one file. Run by
// `npm run test:db` before it builds anything:
//
//   deno run --allow-read local/schema-files.ts [file.sql ...]
//
// (default: the files of schema_paths).
import { parse as parseToml } from "smol-toml";

const projectRoot = new URL("../", import.meta.url);
const supabaseDir = new URL("supabase/", projectRoot);

/** A glob's last path component as a regular expression (`*` and `?`); the directories must be plain. */
function globPattern(component: string): RegExp {
  const escaped = component.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]");
  return new RegExp(`^${escaped}$`);
}

/** The schema files, in the order the CLI applies them. */
export async function schemaFiles(): Promise<URL[]> {
  const config = parseToml(await Deno.readTextFile(new URL("config.toml", supabaseDir))) as {
    db?: { migrations?: { schema_paths?: string[] } };
  };
  const paths = config.db?.migrations?.schema_paths ?? [];
  if (paths.length === 0) throw new Error("supabase/config.toml: [db.migrations] schema_paths lists no schema file");
  const files: URL[] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    const slash = path.lastIndexOf("/");
    const [dir, last] = [path.slice(0, slash + 1), path.slice(slash + 1)];
    if (/[*?[]/.test(dir)) {
      throw new Error(`supabase/config.toml: schema_paths ${path}: only a file name may hold a glob`);
    }
    const dirUrl = new URL(dir, supabaseDir);
    const names = /[*?]/.test(last)
      ? [...Deno.readDirSync(dirUrl)].filter((e) => e.isFile && globPattern(last).test(e.name)).map((e) => e.name)
        .sort()
      : [last];
    if (names.length === 0) throw new Error(`supabase/config.toml: schema_paths ${path} matches no file`);
    for (const name of names) {
      const url = new URL(name, dirUrl);
      if (!seen.has(url.href)) files.push(url);
      seen.add(url.href);
    }
  }
  return files;
}

/** A file's path from the project's root, for messages. */
export function relative(url: URL): string {
  return url.href.startsWith(projectRoot.href) ? url.href.slice(projectRoot.href.length) : url.pathname;
}

/**
 * The text with comments, string literals and dollar-quoted bodies blanked out
 * (same length, newlines kept), so that only top-level SQL is searched and
 * offsets still map to lines. Double-quoted identifiers are kept.
 */
export function topLevel(sql: string): string {
  const out = sql.split("");
  const blank = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (out[i] !== "\n") out[i] = " ";
  };
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i, i + 2);
    if (rest === "--") {
      const end = sql.indexOf("\n", i);
      const stop = end < 0 ? sql.length : end;
      blank(i, stop);
      i = stop;
    } else if (rest === "/*") {
      // Block comments nest in Postgres.
      let depth = 0;
      let j = i;
      while (j < sql.length) {
        if (sql.startsWith("/*", j)) {
          depth++;
          j += 2;
        } else if (sql.startsWith("*/", j)) {
          depth--;
          j += 2;
          if (depth === 0) break;
        } else j++;
      }
      blank(i, j);
      i = j;
    } else if (sql[i] === "'") {
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === "'" && sql[j + 1] === "'") j += 2;
        else if (sql[j] === "'") break;
        else j++;
      }
      blank(i, j + 1);
      i = j + 1;
    } else if (sql[i] === '"') {
      const end = sql.indexOf('"', i + 1);
      i = end < 0 ? sql.length : end + 1;
    } else if (sql[i] === "$") {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (tag && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? "")) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        const stop = end < 0 ? sql.length : end + tag[0].length;
        blank(i, stop);
        i = stop;
      } else i++;
    } else i++;
  }
  return out.join("");
}

/** An identifier as Postgres folds it: quoted ones keep their text, here compared case-insensitively. */
function identifier(raw: string): string {
  return raw.trim().replace(/"/g, "").toLowerCase();
}

/** schema.name with `public` for an unqualified name. */
export function qualifiedName(raw: string): string {
  const parts = raw.trim().split(/\s*\.\s*/).map(identifier);
  return parts.length === 1 ? `public.${parts[0]}` : parts.join(".");
}

const TYPE_ALIASES: Record<string, string> = {
  int: "integer",
  int4: "integer",
  int2: "smallint",
  int8: "bigint",
  float8: "double precision",
  float4: "real",
  bool: "boolean",
  varchar: "character varying",
  "timestamp with time zone": "timestamptz",
  "timestamp without time zone": "timestamp",
  decimal: "numeric",
};

/** Types whose names are two or more words: a parameter that is only one of these has no name. */
const MULTIWORD_TYPE =
  /^(double precision|character varying|bit varying|timestamp (with|without) time zone|time (with|without) time zone)\b/;

/** Splits at the commas outside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += ch;
  }
  if (current.trim()) parts.push(current);
  return parts;
}

/** The argument types of a parameter list: names, defaults and OUT parameters left out. */
export function argumentTypes(params: string): string {
  const types: string[] = [];
  for (const part of splitTopLevel(params)) {
    let text = part.replace(/\s+/g, " ").trim().toLowerCase().split(/ default |=/)[0].trim();
    const mode = /^(in|out|inout|variadic) /.exec(text);
    if (mode?.[1] === "out") continue;
    if (mode) text = text.slice(mode[0].length);
    if (!MULTIWORD_TYPE.test(text) && text.includes(" ")) text = text.slice(text.indexOf(" ") + 1);
    text = text.replace(/"/g, "").replace(/\s*\(\s*/g, "(").replace(/\s*\)\s*/g, ")").replace(/\s*,\s*/g, ",").trim();
    types.push(TYPE_ALIASES[text] ?? text);
  }
  return types.join(",");
}

export interface Statement {
  /** What the statement makes or describes, e.g. `function public.f(uuid)` or `comment on table public.t`. */
  object: string;
  file: string;
  line: number;
}

const NAME = String.raw`(?:"[^"]+"|[A-Za-z_][\w$]*)(?:\s*\.\s*(?:"[^"]+"|[A-Za-z_][\w$]*)){0,2}`;
const CREATE_FUNCTION = new RegExp(
  String.raw`\bcreate\s+(?:or\s+replace\s+)?(function|procedure)\s+(${NAME})\s*\(`,
  "gi",
);
const COMMENT_ON = new RegExp(
  String
    .raw`\bcomment\s+on\s+((?:materialized\s+view|event\s+trigger|foreign\s+table|[a-z]+))\s+(${NAME})\s*(\([^)]*\))?(\s+on\s+${NAME})?\s+is\b`,
  "gi",
);

/** The position of the `)` closing the `(` just before `open`. */
function closing(text: string, open: number): number {
  let depth = 1;
  let close = open;
  while (close < text.length && depth > 0) {
    if (text[close] === "(") depth++;
    if (text[close] === ")") depth--;
    close++;
  }
  return close - 1;
}

/** Every `create [or replace] function|procedure` and every `comment on` of one file, in order. */
export function statements(file: string, sql: string): Statement[] {
  const text = topLevel(sql);
  const lineOf = (index: number) => text.slice(0, index).split("\n").length;
  const found: Statement[] = [];
  for (const match of text.matchAll(CREATE_FUNCTION)) {
    const open = match.index! + match[0].length;
    const args = argumentTypes(text.slice(open, closing(text, open)));
    found.push({
      object: `${match[1].toLowerCase()} ${qualifiedName(match[2])}(${args})`,
      file,
      line: lineOf(match.index!),
    });
  }
  for (const match of text.matchAll(COMMENT_ON)) {
    const kind = match[1].toLowerCase().replace(/\s+/g, " ");
    const args = match[3] ? `(${argumentTypes(match[3].slice(1, -1))})` : "";
    const on = match[4] ? ` on ${qualifiedName(match[4].replace(/^\s+on\s+/i, ""))}` : "";
    const name = kind === "column" || kind === "schema" || kind === "role" || kind === "extension"
      ? identifierPath(match[2])
      : qualifiedName(match[2]);
    found.push({ object: `comment on ${kind} ${name}${args}${on}`, file, line: lineOf(match.index!) });
  }
  return found.sort((a, b) => a.line - b.line);
}

/** A dotted name as written (folded), for objects that are not schema-qualified the usual way. */
function identifierPath(raw: string): string {
  return raw.trim().split(/\s*\.\s*/).map(identifier).join(".");
}

export interface Problem {
  object: string;
  first: Statement;
  again: Statement;
}

/**
 * Objects written more than once: a function (any overload) created in two files, one overload created twice
 * in one file, or one object commented twice. Overloads of a function in the same file are fine.
 */
export function onceOnly(files: { file: string; sql: string }[]): Problem[] {
  const problems: Problem[] = [];
  const functionFile = new Map<string, Statement>(); // function name -> its first definition
  const seen = new Map<string, Statement>(); // exact object -> first statement
  for (const { file, sql } of files) {
    for (const statement of statements(file, sql)) {
      const first = seen.get(statement.object);
      if (first) {
        problems.push({ object: statement.object, first, again: statement });
        continue;
      }
      seen.set(statement.object, statement);
      if (!statement.object.startsWith("comment ")) {
        const name = statement.object.slice(0, statement.object.indexOf("("));
        const earlier = functionFile.get(name);
        if (earlier && earlier.file !== file) problems.push({ object: name, first: earlier, again: statement });
        if (!earlier) functionFile.set(name, statement);
      }
    }
  }
  return problems;
}

/** One line per problem, naming both places. */
export function describeProblem(p: Problem): string {
  const where = p.first.file === p.again.file
    ? `twice in ${p.again.file} (lines ${p.first.line} and ${p.again.line})`
    : `in ${p.first.file}:${p.first.line} and again in ${p.again.file}:${p.again.line}`;
  return `${p.object} is written ${where}`;
}

if (import.meta.main) {
  const urls = Deno.args.length > 0
    ? Deno.args.map((path) => new URL(path, `file://${Deno.cwd()}/`))
    : await schemaFiles();
  const files = await Promise.all(
    urls.map(async (url) => ({ file: relative(url), sql: await Deno.readTextFile(url) })),
  );
  const problems = onceOnly(files);
  for (const problem of problems) console.error(`schemas: ${describeProblem(problem)}`);
  if (problems.length > 0) {
    console.error(
      `schemas: ${problems.length} object(s) written more than once. Write each function and each comment once, ` +
        "in the schema file of its domain, in its current form; `npm run db:diff -- <name>` makes the migration.",
    );
    Deno.exit(1);
  }
  const functions = files.flatMap((f) => statements(f.file, f.sql)).filter((s) => !s.object.startsWith("comment "));
  console.log(`schemas: ${files.length} files, ${functions.length} functions, each written once`);
}
