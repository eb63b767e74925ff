// One body per function in supabase/migrations: fails (exit 1) when a function
// is created in more than one migration, or twice with the same argument types
// in one migration (overloads are fine), unless the later migration's first
// line says so and why:
//
//   -- Redefines public.apply_transfer_event: <why>
//
// (several names may be listed, separated by commas). A landed migration is
// never edited; a change to a function is a new migration that says it
// redefines it, so every hot-fix stays visible.
//
// Usage: deno run --allow-read local/check-migrations.ts [directory]
// (default: supabase/migrations next to this script).

export interface Definition {
  /** schema.name, lower-case, unquoted; `public.` when the migration names no schema. */
  name: string;
  /** The argument types that identify the overload, e.g. `uuid,text`. */
  args: string;
  file: string;
  line: number;
}

export interface Problem {
  name: string;
  first: Definition;
  again: Definition;
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

/** The argument types of a parameter list: names, defaults and OUT parameters left out. */
export function argumentTypes(params: string): string {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of params) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += ch;
  }
  if (current.trim()) parts.push(current);
  const types: string[] = [];
  for (const part of parts) {
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

const CREATE_FUNCTION =
  /\bcreate\s+(?:or\s+replace\s+)?function\s+((?:"[^"]+"|[A-Za-z_][\w$]*)(?:\s*\.\s*(?:"[^"]+"|[A-Za-z_][\w$]*))?)\s*\(/gi;

/** Every `create [or replace] function` of one migration, in order. */
export function definitions(file: string, sql: string): Definition[] {
  const text = topLevel(sql);
  const found: Definition[] = [];
  for (const match of text.matchAll(CREATE_FUNCTION)) {
    const open = match.index! + match[0].length;
    let depth = 1;
    let close = open;
    while (close < text.length && depth > 0) {
      if (text[close] === "(") depth++;
      if (text[close] === ")") depth--;
      close++;
    }
    found.push({
      name: qualifiedName(match[1]),
      args: argumentTypes(text.slice(open, close - 1)),
      file,
      line: text.slice(0, match.index).split("\n").length,
    });
  }
  return found;
}

/** The functions a migration's first line says it redefines: `-- Redefines a.b, c.d: why`. */
export function declaredRedefinitions(sql: string): Set<string> {
  const first = sql.split("\n", 1)[0];
  const header = /^\s*--\s*redefines\s+(.+?):\s*\S/i.exec(first);
  if (!header) return new Set();
  return new Set(
    header[1].split(/\s*,\s*|\s+and\s+/i).filter(Boolean).map((name) => qualifiedName(name.replace(/\(.*$/, ""))),
  );
}

/** The functions defined again without the first line saying why. */
export function check(migrations: { file: string; sql: string }[]): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, Definition>(); // name -> first definition
  for (const { file, sql } of migrations) {
    const excused = declaredRedefinitions(sql);
    const inFile = new Map<string, Definition>(); // name(args) -> definition
    for (const def of definitions(file, sql)) {
      const earlier = seen.get(def.name);
      const sameOverload = inFile.get(`${def.name}(${def.args})`);
      const first = earlier && earlier.file !== file ? earlier : sameOverload;
      if (first && !excused.has(def.name)) problems.push({ name: def.name, first, again: def });
      if (!earlier) seen.set(def.name, def);
      inFile.set(`${def.name}(${def.args})`, def);
    }
  }
  return problems;
}

export async function readMigrations(dir: string): Promise<{ file: string; sql: string }[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".sql")) files.push(entry.name);
  }
  files.sort();
  return await Promise.all(files.map(async (file) => ({ file, sql: await Deno.readTextFile(`${dir}/${file}`) })));
}

if (import.meta.main) {
  const dir = Deno.args[0] ?? new URL("../supabase/migrations", import.meta.url).pathname;
  const migrations = await readMigrations(dir);
  const problems = check(migrations);
  for (const p of problems) {
    const where = p.first.file === p.again.file
      ? `twice in ${p.again.file} (lines ${p.first.line} and ${p.again.line})`
      : `in ${p.first.file}:${p.first.line} and again in ${p.again.file}:${p.again.line}`;
    console.error(`migrations: ${p.name} is defined ${where}`);
  }
  if (problems.length > 0) {
    console.error(
      `migrations: ${problems.length} function definition(s) repeated. Write each function once, in the migration of its ` +
        "domain; a later migration that must redefine one says so on its first line: " +
        "`-- Redefines schema.function: <why>`.",
    );
    Deno.exit(1);
  }
  console.log(`migrations: ${migrations.length} files, every function defined once`);
}
