// Builds the SQL of a read (a table, a function's result, or the rows a write
// returned) from the parsed request, the way PostgREST's QueryBuilder shapes
// it: the selected columns, embedded resources as correlated subqueries along
// the foreign keys (to-one as an object or null, to-many as an array), filters,
// order and the page. Identifiers are checked against the schema cache and
// quoted; every value is a bind parameter.
import { errors } from "./errors.ts";
import type { Field, Filter, LogicTree, OpExpr, OrderTerm, SelectEmbed, SelectItem } from "./parse.ts";
import type { Column, Relationship, SchemaCache, Table } from "./schema.ts";

export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Bind parameters, numbered in order of use. Each is sent as text and cast
 * from it, as PostgREST sends its values as `unknown` literals.
 */
export class Params {
  readonly values: string[] = [];
  add(value: string, cast?: string): string {
    this.values.push(value);
    return `$${this.values.length}::text${cast ? `::${cast}` : ""}`;
  }
}

/** What a node of the read reads from: its name (for messages), columns and, when it is a table, relationships. */
export interface Relation {
  name: string;
  columns: Map<string, Column>;
  table: Table | null;
}

export interface ReadNode {
  relation: Relation;
  alias: string;
  items: SelectItem[];
  embeds: EmbedNode[];
  filters: Filter[];
  logic: LogicTree[];
  order: OrderTerm[];
  limit?: number;
  offset?: number;
  /** `embed=is.null` / `embed=not.is.null` filters, by embed output name. */
  embedNullFilters: { name: string; isNull: boolean }[];
}

export interface EmbedNode {
  item: SelectEmbed;
  outName: string;
  relationship: Relationship;
  node: ReadNode;
}

export class Builder {
  #counter = 0;
  readonly params = new Params();
  /** Casts named in `select`, checked against the catalog before the query runs. */
  readonly casts = new Set<string>();
  constructor(readonly cache: SchemaCache) {}

  /** Resolves a select tree against `relation`, recursively. */
  node(relation: Relation, alias: string, items: SelectItem[]): ReadNode {
    const node: ReadNode = {
      relation,
      alias,
      items,
      embeds: [],
      filters: [],
      logic: [],
      order: [],
      embedNullFilters: [],
    };
    for (const item of items) {
      if (item.kind === "field") {
        if (item.field.name !== "*") this.column(relation, item.field.name);
        if (item.cast) this.casts.add(item.cast);
        continue;
      }
      const relationship = this.findRelationship(relation, item);
      if (item.spread && relationship.cardinality === "one-to-many") {
        throw errors.notImplemented("A spread on a to-many relationship is not supported by the local stand-in");
      }
      const target = relationship.target;
      const childAlias = `${target.name}_${++this.#counter}`;
      const child = this.node({ name: target.name, columns: target.columns, table: target }, childAlias, item.children);
      node.embeds.push({ item, outName: item.alias ?? item.name, relationship, node: child });
    }
    return node;
  }

  column(relation: Relation, name: string): Column {
    const column = relation.columns.get(name);
    if (!column) throw errors.undefinedColumn(relation.name, name);
    return column;
  }

  /** PostgREST's findRel: by target table, foreign-key column or constraint name, narrowed by a `!hint`. */
  findRelationship(relation: Relation, item: SelectEmbed): Relationship {
    const schema = this.cache.schema;
    if (!relation.table) throw errors.noRelBetween(relation.name, item.name, item.hint, schema);
    let candidates = this.cache.relationships.filter((r) =>
      r.table === relation.table && (
        r.target.name === item.name ||
        r.constraint === item.name ||
        (r.cardinality !== "one-to-many" && r.columns.length === 1 && r.columns[0][0] === item.name)
      )
    );
    if (item.hint) {
      const hint = item.hint;
      candidates = candidates.filter((r) =>
        r.constraint === hint || r.target.name === hint ||
        (r.columns.length === 1 && (r.columns[0][0] === hint || r.columns[0][1] === hint))
      );
    }
    if (candidates.length === 0) throw errors.noRelBetween(relation.name, item.name, item.hint, schema);
    if (candidates.length > 1) {
      const details = candidates.map((r) => ({
        cardinality: r.cardinality,
        embedding: `${r.table.name} with ${r.target.name}`,
        relationship: `${r.constraint} using ${r.table.name}(${
          r.columns.map((c) => c[0]).join(", ")
        }) and ${r.target.name}(${r.columns.map((c) => c[1]).join(", ")})`,
      }));
      const hint = `Try changing '${item.name}' to one of the following: ${
        candidates.map((r) => `'${r.target.name}!${r.constraint}'`).join(", ")
      }. Find the desired relationship in the 'details' key.`;
      throw errors.ambiguousRelBetween(relation.name, item.name, details, hint);
    }
    return candidates[0];
  }

  /** The node an embed path (`driver.company`) names, by the embeds' output names. */
  find(root: ReadNode, path: string[]): ReadNode {
    let node = root;
    for (const name of path) {
      const embed = node.embeds.find((e) => e.outName === name);
      if (!embed) throw errors.notEmbedded(name);
      node = embed.node;
    }
    return node;
  }

  // --- expressions ---------------------------------------------------------

  /** The SQL of a field and the type a compared value is cast to. */
  field(node: ReadNode, field: Field): { sql: string; type: string } {
    const column = this.column(node.relation, field.name);
    let sql = `${ident(node.alias)}.${ident(column.name)}`;
    let type = column.type;
    for (const op of field.json) {
      sql += op.index ? `${op.arrow}${Number(op.key)}` : `${op.arrow}${this.params.add(op.key, "text")}`;
      type = op.arrow === "->>" ? "text" : "jsonb";
    }
    return { sql, type };
  }

  filter(node: ReadNode, filter: Filter): string {
    const { sql, type } = this.field(node, filter.field);
    return this.opExpr(sql, type, filter.expr);
  }

  opExpr(lhs: string, type: string, expr: OpExpr): string {
    const op = expr.operation;
    let out: string;
    switch (op.op) {
      case "in":
        out = `${lhs} = any(${this.params.add(pgArray(op.values), `${type}[]`)})`;
        break;
      case "is":
        out = `${lhs} is ${op.value === "not_null" ? "not null" : op.value}`;
        break;
      case "isdistinct":
        out = `${lhs} is distinct from ${this.params.add(op.value, type)}`;
        break;
      case "fts":
      case "plfts":
      case "phfts":
      case "wfts": {
        const fn = {
          fts: "to_tsquery",
          plfts: "plainto_tsquery",
          phfts: "phraseto_tsquery",
          wfts: "websearch_to_tsquery",
        }[op.op];
        const lang = op.lang ? `${this.params.add(op.lang, "regconfig")}, ` : "";
        out = `${lhs} @@ ${fn}(${lang}${this.params.add(op.value, "text")})`;
        break;
      }
      case "simple": {
        const symbol = {
          neq: "<>",
          cs: "@>",
          cd: "<@",
          ov: "&&",
          sl: "<<",
          sr: ">>",
          nxr: "&<",
          nxl: "&>",
          adj: "-|-",
        }[
          op.operator
        ]!;
        out = `${lhs} ${symbol} ${this.params.add(op.value, type)}`;
        break;
      }
      case "quant": {
        const symbol = {
          eq: "=",
          gt: ">",
          gte: ">=",
          lt: "<",
          lte: "<=",
          like: "like",
          ilike: "ilike",
          match: "~",
          imatch: "~*",
        }[
          op.operator
        ]!;
        const textual = ["like", "ilike", "match", "imatch"].includes(op.operator);
        const left = textual && type !== "text" ? `${lhs}::text` : lhs;
        const valueType = textual ? "text" : type;
        const value = op.operator === "like" || op.operator === "ilike" ? op.value.replaceAll("*", "%") : op.value;
        out = op.quantifier
          ? `${left} ${symbol} ${op.quantifier}(${this.params.add(value, `${valueType}[]`)})`
          : `${left} ${symbol} ${this.params.add(value, valueType)}`;
        break;
      }
    }
    return expr.negated ? `not (${out})` : out;
  }

  logic(node: ReadNode, tree: LogicTree): string {
    if (tree.kind === "stmt") return this.filter(node, tree.filter);
    const inner = tree.children.map((child) => this.logic(node, child)).join(` ${tree.operator} `);
    return `${tree.negated ? "not " : ""}(${inner})`;
  }

  /** The node's own conditions: filters, logic trees, and the embeds that must (not) exist. */
  where(node: ReadNode): string[] {
    const conditions = [
      ...node.filters.map((f) => this.filter(node, f)),
      ...node.logic.map((t) => this.logic(node, t)),
    ];
    for (const embed of node.embeds) {
      const nullFilter = node.embedNullFilters.find((f) => f.name === embed.outName);
      if (embed.item.join === "inner" || nullFilter?.isNull === false) {
        conditions.push(`exists (${this.exists(node, embed)})`);
      } else if (nullFilter?.isNull) conditions.push(`not exists (${this.exists(node, embed)})`);
    }
    return conditions;
  }

  private joinCondition(parent: ReadNode, embed: EmbedNode): string {
    return embed.relationship.columns
      .map(([mine, theirs]) => `${ident(embed.node.alias)}.${ident(theirs)} = ${ident(parent.alias)}.${ident(mine)}`)
      .join(" and ");
  }

  private exists(parent: ReadNode, embed: EmbedNode): string {
    const conditions = [this.joinCondition(parent, embed), ...this.where(embed.node)];
    const target = embed.relationship.target;
    return `select 1 from ${ident(target.schema)}.${ident(target.name)} as ${ident(embed.node.alias)} where ${
      conditions.join(" and ")
    }`;
  }

  orderBy(node: ReadNode): string {
    if (!node.order.length) return "";
    const terms = node.order.map((term) => {
      let expr: string;
      if (term.relation) {
        const embed = node.embeds.find((e) => e.outName === term.relation);
        if (!embed) throw errors.notEmbedded(term.relation);
        if (embed.relationship.cardinality === "one-to-many") {
          throw errors.relatedOrderNotToOne(node.relation.name, term.relation);
        }
        const target = embed.relationship.target;
        expr = `(select ${this.field(embed.node, term.field).sql} from ${ident(target.schema)}.${
          ident(target.name)
        } as ${ident(embed.node.alias)} where ${this.joinCondition(node, embed)})`;
      } else expr = this.field(node, term.field).sql;
      return `${expr}${term.direction ? ` ${term.direction}` : ""}${term.nulls ? ` nulls ${term.nulls}` : ""}`;
    });
    return ` order by ${terms.join(", ")}`;
  }

  page(node: ReadNode): string {
    return `${node.limit !== undefined ? ` limit ${node.limit}` : ""}${node.offset ? ` offset ${node.offset}` : ""}`;
  }

  /** The select list; spread embeds add lateral joins to `joins`. */
  selectList(node: ReadNode, joins: string[]): string {
    const parts: string[] = [];
    let embedIndex = 0;
    for (const item of node.items) {
      if (item.kind === "field") {
        if (item.field.name === "*") {
          parts.push(`${ident(node.alias)}.*`);
          continue;
        }
        const { sql } = this.field(node, item.field);
        const last = item.field.json[item.field.json.length - 1];
        const outName = item.alias ?? (last && !last.index ? last.key : item.field.name);
        parts.push(`${sql}${item.cast ? `::${item.cast}` : ""} as ${ident(outName)}`);
        continue;
      }
      const embed = node.embeds[embedIndex++];
      const target = embed.relationship.target;
      const from = `${ident(target.schema)}.${ident(target.name)} as ${ident(embed.node.alias)}`;
      const childJoins: string[] = [];
      const childList = this.selectList(embed.node, childJoins);
      const conditions = [this.joinCondition(node, embed), ...this.where(embed.node)].join(" and ");
      const inner = `select ${childList} from ${from}${childJoins.join("")} where ${conditions}`;
      if (embed.item.spread) {
        const spreadAlias = `${embed.node.alias}_spread`;
        joins.push(` left join lateral (${inner}) as ${ident(spreadAlias)} on true`);
        parts.push(`${ident(spreadAlias)}.*`);
      } else if (embed.relationship.cardinality === "one-to-many") {
        parts.push(
          `coalesce((select json_agg(_e) from (${inner}${this.orderBy(embed.node)}${
            this.page(embed.node)
          }) as _e), '[]') as ${ident(embed.outName)}`,
        );
      } else {
        parts.push(`(select row_to_json(_e) from (${inner} limit 1) as _e) as ${ident(embed.outName)}`);
      }
    }
    return parts.join(", ");
  }
}

/** A Postgres array literal of text elements, each quoted. */
export function pgArray(values: string[]): string {
  return `{${values.map((v) => `"${v.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`).join(",")}}`;
}
