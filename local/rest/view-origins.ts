// Where each column of a view comes from, read from the view's stored query
// (pg_rewrite.ev_action, Postgres's node-tree text). PostgREST follows
// foreign and primary keys through views this way: a view column that is a
// plain reference to a table column carries that column's keys (Postgres
// records it as the target entry's resorigtbl/resorigcol).
//
// The node-tree text is a tree of `{NODE :field value ...}` objects and
// `( ... )` lists of tokens, with `\` escaping a following delimiter and `<>`
// for null; only the outermost query's target list is read here.

type Value = string | null | NodeValue | Value[];
interface NodeValue {
  type: string;
  fields: Map<string, Value>;
}

interface Token {
  text: string;
  /** Whether any character was escaped: such a token is never a delimiter or a field name. */
  escaped: boolean;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === " " || c === "\n" || c === "\t" || c === "\r") {
      i++;
      continue;
    }
    if ("(){}".includes(c)) {
      tokens.push({ text: c, escaped: false });
      i++;
      continue;
    }
    let out = "";
    let escaped = false;
    while (i < text.length && !" \n\t\r(){}".includes(text[i])) {
      if (text[i] === "\\" && i + 1 < text.length) {
        escaped = true;
        i++;
      }
      out += text[i++];
    }
    tokens.push({ text: out, escaped });
  }
  return tokens;
}

function parse(tokens: Token[]): Value {
  let pos = 0;
  const isField = (t: Token | undefined) => t !== undefined && !t.escaped && t.text.startsWith(":");
  const isDelimiter = (t: Token | undefined, d: string) => t !== undefined && !t.escaped && t.text === d;

  function value(): Value {
    const token = tokens[pos++];
    if (token === undefined) return null;
    if (isDelimiter(token, "{")) {
      const type = tokens[pos++]?.text ?? "";
      const fields = new Map<string, Value>();
      while (pos < tokens.length && !isDelimiter(tokens[pos], "}")) {
        if (!isField(tokens[pos])) {
          pos++;
          continue;
        }
        const name = tokens[pos++].text.slice(1);
        const parts: Value[] = [];
        while (pos < tokens.length && !isField(tokens[pos]) && !isDelimiter(tokens[pos], "}")) parts.push(value());
        fields.set(name, parts.length === 1 ? parts[0] : parts);
      }
      pos++;
      return { type, fields };
    }
    if (isDelimiter(token, "(")) {
      const items: Value[] = [];
      while (pos < tokens.length && !isDelimiter(tokens[pos], ")")) items.push(value());
      pos++;
      return items;
    }
    if (!token.escaped && token.text === "<>") return null;
    return token.text;
  }
  return value();
}

export interface ColumnOrigin {
  /** The view column's position (attnum). */
  position: number;
  /** The relation and column the view column reads unchanged. */
  relation: number;
  column: number;
}

/** The origins of the plain column references in a view's stored query (`ev_action::text`). */
export function viewColumnOrigins(evAction: string): ColumnOrigin[] {
  const tree = parse(tokenize(evAction));
  const query = Array.isArray(tree) ? tree[0] : tree;
  if (!query || typeof query !== "object" || Array.isArray(query) || query.type !== "QUERY") return [];
  const targets = query.fields.get("targetList");
  if (!Array.isArray(targets)) return [];
  const origins: ColumnOrigin[] = [];
  for (const entry of targets) {
    if (!entry || typeof entry !== "object" || Array.isArray(entry) || entry.type !== "TARGETENTRY") continue;
    const number = (name: string) => Number(entry.fields.get(name) ?? NaN);
    if (entry.fields.get("resjunk") === "true") continue;
    const [position, relation, column] = [number("resno"), number("resorigtbl"), number("resorigcol")];
    if (relation > 0 && column > 0 && position > 0) origins.push({ position, relation, column });
  }
  return origins;
}
