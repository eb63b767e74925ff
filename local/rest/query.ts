// Builds the SQL of a read (a table or view, a function's result, or the rows
// a write returned) from the parsed request, the way PostgREST's planner and
// QueryBuilder shape it: the selected columns and computed fields, embedded
// resources as correlated subqueries along the relationship the request names
// (to-one as an object or null, to-many as an array; many-to-many through the
// junction; computed relationships by calling the function with the parent
// row), filters, order and the page. Identifiers are checked against the
// schema cache and quoted; every value is a bind parameter.
import { errors } from "./errors.ts";
import type { Field, Filter, LogicTree, OpExpr, OrderTerm, SelectEmbed, SelectField, SelectItem } from "./parse.ts";
import { closest, type Column, type Relationship, type SchemaCache, type Table } from "./schema.ts";

export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
export const qualified = (schema: string, name: string) => `${ident(schema)}.${ident(name)}`;

/**
 * Bind parameters, numbered in order of use. Each is sent as text and cast
 * from it, as PostgREST sends its values as `unknown` literals.
 */
export class Params {
  readonly values: string[] = [];
  readonly #numbers = new Map<string, number>();
  /**
   * One number per distinct value: the same JSON key in `select`, `order` and the GROUP BY of an aggregate is then
   * the same expression to Postgres, as PostgREST's literal keys are.
   */
  add(value: string, cast?: string): string {
    let n = this.#numbers.get(value);
    if (n === undefined) {
      n = this.values.push(value);
      this.#numbers.set(value, n);
    }
    return `$${n}::text${cast ? `::${cast}` : ""}`;
  }
}

/** What a node of the read reads from: its name (for messages), columns and, when it is a table or view, its relationships. */
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

export const isToOne = (r: Relationship) => r.cardinality === "many-to-one" || r.cardinality === "one-to-one";

const hasAggregate = (items: SelectItem[]) => items.some((i) => i.kind === "field" && i.aggregate);
const isToOneSpread = (e: EmbedNode) => e.item.spread && isToOne(e.relationship);

/**
 * The name an aggregated field of a to-one spread is selected under before its parent aggregates it (PostgREST's
 * hoisting, Plan.hs hoistSpreadAggFunctions): its alias, else its column (`count()` counts the related row).
 */
const hoistName = (item: SelectField) => item.alias ?? (item.field.name === "*" ? "count" : outputName(item.field));

/** Whether `select` uses aggregate functions anywhere in the tree (refused with PGRST123 unless enabled). */
export function usesAggregates(items: SelectItem[]): boolean {
  return items.some((i) => i.kind === "field" ? i.aggregate !== undefined : usesAggregates(i.children));
}

export class Builder {
  #counter = 0;
  readonly params = new Params();
  /** Casts named in `select`, checked against the catalog before the query runs. */
  readonly casts = new Set<string>();
  /** The GROUP BY of each aggregated node, written with its select list (the same bind parameters). */
  readonly #groupBys = new Map<ReadNode, string>();
  /**
   * @param schema the request's schema: embedding finds relationships within it
   * @param searchPath where computed fields are looked up: the schema, then the extra search path
   */
  constructor(readonly cache: SchemaCache, readonly schema: string, readonly searchPath: string[]) {}

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
        // Checked now (a column or a computed field); bind parameters are added when the SQL is written.
        if (item.field.name !== "*") this.base(node, item.field.name);
        if (item.cast) this.casts.add(item.cast);
        if (item.aggregateCast) this.casts.add(item.aggregateCast);
        continue;
      }
      const relationship = this.findRelationship(relation, item);
      if (item.spread && !isToOne(relationship) && hasAggregate(item.children)) {
        throw errors.notImplemented("Aggregates are not implemented for one-to-many or many-to-many spreads.");
      }
      const target = relationship.target;
      const childAlias = `${target.name}_${++this.#counter}`;
      const child = this.node({ name: target.name, columns: target.columns, table: target }, childAlias, item.children);
      node.embeds.push({ item, outName: item.alias ?? item.name, relationship, node: child });
    }
    return node;
  }

  /** PostgREST's findRel: by target, foreign key column or constraint, narrowed by a `!hint`, within the request's schema. */
  findRelationship(relation: Relation, item: SelectEmbed): Relationship {
    const { name: target, hint } = item;
    const all = relation.table ? this.cache.relationships.get(relation.table) ?? [] : [];
    const rels = all.filter((r) => (r.computed ? r.computed.schema : r.target.schema) === this.schema);
    const fkColumn = (name: string, r: Relationship) => r.columns.length === 1 && r.columns[0][0] === name;
    const fkReferenced = (name: string, r: Relationship) => r.columns.length === 1 && r.columns[0][1] === name;
    const constraint = (name: string, r: Relationship) => !r.junction && !r.computed && r.constraint === name;
    const candidates = rels.filter((r) => {
      if (r.computed) return target === r.computed.name;
      if (r.isSelf) {
        // One foreign key, two relationships: the table's name finds the children, the column the parent.
        if (!hint) {
          return (target === r.target.name && r.cardinality === "one-to-many") ||
            (fkColumn(target, r) && r.cardinality === "many-to-one");
        }
        return target === r.target.name && r.cardinality === "one-to-many" && fkReferenced(hint, r);
      }
      if (!hint) {
        return target === r.target.name || (!r.targetIsView && (constraint(target, r) || fkColumn(target, r)));
      }
      return target === r.target.name &&
        (constraint(hint, r) || fkColumn(hint, r) || fkReferenced(hint, r) || r.junction?.table.name === hint);
    });
    if (candidates.length === 1) return candidates[0];
    if (candidates.length === 0) {
      throw errors.noRelBetween(relation.name, target, hint, this.schema, this.#noRelHint(relation, target, rels));
    }
    const details = candidates.map((r) => ({
      cardinality: r.cardinality,
      embedding: `${r.table.name} with ${r.target.name}`,
      relationship: r.junction
        ? `${r.junction.table.name} using ${r.junction.constraint1}(${
          r.junction.sourceColumns.map((c) => c[1]).join(", ")
        }) and ${r.junction.constraint2}(${r.junction.targetColumns.map((c) => c[1]).join(", ")})`
        : `${r.constraint} using ${r.table.name}(${r.columns.map((c) => c[0]).join(", ")}) and ${r.target.name}(${
          r.columns.map((c) => c[1]).join(", ")
        })`,
    }));
    const choices = candidates.map((r) => `'${r.target.name}!${r.junction ? r.junction.table.name : r.constraint}'`);
    throw errors.ambiguousRelBetween(
      relation.name,
      target,
      details,
      `Try changing '${target}' to one of the following: ${
        choices.join(", ")
      }. Find the desired relationship in the 'details' key.`,
    );
  }

  /** PostgREST's hint: a near name for the parent when it has no relationships, else for the child. */
  #noRelHint(relation: Relation, target: string, rels: Relationship[]): string | null {
    if (rels.length === 0) {
      const parents = [...this.cache.relationships.keys()].filter((t) => t.schema === this.schema).map((t) => t.name);
      const near = closest(relation.name, parents);
      return near && near !== relation.name ? `Perhaps you meant '${near}' instead of '${relation.name}'.` : null;
    }
    const near = closest(target, rels.map((r) => r.computed ? r.computed.name : r.target.name));
    return near && near !== target ? `Perhaps you meant '${near}' instead of '${target}'.` : null;
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

  /** A column, or a computed field (a function of the row found through the search path), of the node. */
  base(node: ReadNode, name: string): { sql: string; type: string } {
    const column = node.relation.columns.get(name);
    if (column) return { sql: `${ident(node.alias)}.${ident(column.name)}`, type: column.type };
    const table = node.relation.table;
    const computed = table?.computed.get(name)?.find((f) => this.searchPath.includes(f.schema));
    if (!table || !computed) throw errors.undefinedColumn(node.relation.name, name);
    return {
      sql: `${qualified(computed.schema, computed.name)}(${ident(node.alias)}::${qualified(table.schema, table.name)})`,
      type: computed.type,
    };
  }

  /** The SQL of a field and the type a compared value is cast to. */
  field(node: ReadNode, field: Field): { sql: string; type: string } {
    let { sql, type } = this.base(node, field.name);
    if (field.json.length && type !== "json" && type !== "jsonb") sql = `to_jsonb(${sql})`;
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
        const vector = type === "tsvector" ? lhs : `to_tsvector(${lang}${lhs})`;
        out = `${vector} @@ ${fn}(${lang}${this.params.add(op.value, "text")})`;
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
        }[op.operator]!;
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
        }[op.operator]!;
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

  /** Where an embed's rows come from, and how they join its parent row. */
  source(parent: ReadNode, embed: EmbedNode): { from: string; conditions: string[] } {
    const r = embed.relationship;
    const child = ident(embed.node.alias);
    const parentAlias = ident(parent.alias);
    if (r.computed) {
      return {
        from: `${qualified(r.computed.schema, r.computed.name)}(${parentAlias}::${
          qualified(r.table.schema, r.table.name)
        }) as ${child}`,
        conditions: [],
      };
    }
    const target = `${qualified(r.target.schema, r.target.name)} as ${child}`;
    if (r.junction) {
      const j = r.junction;
      const through = ident(`${embed.node.alias}_junction`);
      return {
        from: `${target}, ${qualified(j.table.schema, j.table.name)} as ${through}`,
        conditions: [
          ...j.targetColumns.map(([t, jc]) => `${child}.${ident(t)} = ${through}.${ident(jc)}`),
          ...j.sourceColumns.map(([s, jc]) => `${through}.${ident(jc)} = ${parentAlias}.${ident(s)}`),
        ],
      };
    }
    return {
      from: target,
      conditions: r.columns.map(([mine, theirs]) => `${child}.${ident(theirs)} = ${parentAlias}.${ident(mine)}`),
    };
  }

  private exists(parent: ReadNode, embed: EmbedNode): string {
    const { from, conditions } = this.source(parent, embed);
    const all = [...conditions, ...this.where(embed.node)];
    return `select 1 from ${from}${all.length ? ` where ${all.join(" and ")}` : ""}`;
  }

  orderBy(node: ReadNode): string {
    if (!node.order.length) return "";
    const terms = node.order.map((term) => {
      let expr: string;
      if (term.relation) {
        const embed = node.embeds.find((e) => e.outName === term.relation);
        if (!embed) throw errors.notEmbedded(term.relation);
        if (!isToOne(embed.relationship)) throw errors.relatedOrderNotToOne(node.relation.name, term.relation);
        const { from, conditions } = this.source(node, embed);
        expr = `(select ${this.field(embed.node, term.field).sql} from ${from}${
          conditions.length ? ` where ${conditions.join(" and ")}` : ""
        } limit 1)`;
      } else expr = this.field(node, term.field).sql;
      return `${expr}${term.direction ? ` ${term.direction}` : ""}${term.nulls ? ` nulls ${term.nulls}` : ""}`;
    });
    return ` order by ${terms.join(", ")}`;
  }

  page(node: ReadNode): string {
    return `${node.limit !== undefined ? ` limit ${node.limit}` : ""}${node.offset ? ` offset ${node.offset}` : ""}`;
  }

  /**
   * Whether the node's rows are aggregated: it selects an aggregate, or a to-one spread under it does (hoisted
   * to this node, as PostgREST hoists them, so that `client_id,...invoices(total.sum())` sums by client).
   */
  aggregated(node: ReadNode): boolean {
    const hoisted = (n: ReadNode): boolean =>
      n.embeds.some((e) => isToOneSpread(e) && (hasAggregate(e.node.items) || hoisted(e.node)));
    return hasAggregate(node.items) || hoisted(node);
  }

  /** The node's GROUP BY (every selected field that is not aggregated), once its select list is written. */
  groupBy(node: ReadNode): string {
    return this.#groupBys.get(node) ?? "";
  }

  /**
   * The select list; spread embeds add lateral joins to `joins`. In an aggregated node every other selected field is
   * a group term, and embeds are joined laterally (as jsonb) to be grouped by. `hoist`: the node is a to-one spread,
   * whose aggregates its parent applies; it selects their inputs under their names.
   */
  selectList(node: ReadNode, joins: string[], hoist = false): string {
    const aggregated = !hoist && this.aggregated(node);
    const groups: string[] = [];
    const parts: string[] = [];
    /** An embed's value: a column of its own; grouped through a lateral join when the node is aggregated. */
    const embedded = (sql: string, name: string, lateral: string) => {
      if (!aggregated) return parts.push(`${sql} as ${ident(name)}`);
      joins.push(` left join lateral (select (${sql})::jsonb as v) as ${ident(lateral)} on true`);
      parts.push(`${ident(lateral)}.v as ${ident(name)}`);
      groups.push(`${ident(lateral)}.v`);
    };
    let embedIndex = 0;
    for (const item of node.items) {
      if (item.kind === "field") {
        if (item.field.name === "*" && !item.aggregate) {
          if (!aggregated) parts.push(`${ident(node.alias)}.*`);
          for (const column of aggregated ? node.relation.columns.keys() : []) {
            parts.push(`${ident(node.alias)}.${ident(column)}`);
            groups.push(`${ident(node.alias)}.${ident(column)}`);
          }
          continue;
        }
        const value = item.field.name === "*"
          ? null
          : `${this.field(node, item.field).sql}${item.cast ? `::${item.cast}` : ""}`;
        if (item.aggregate && hoist) parts.push(`${value ?? "true"} as ${ident(hoistName(item))}`);
        else if (item.aggregate) {
          parts.push(`${applyAggregate(item, value ?? "*")} as ${ident(item.alias ?? item.aggregate)}`);
        } else {
          parts.push(`${value} as ${ident(item.alias ?? outputName(item.field))}`);
          if (aggregated) groups.push(value!);
        }
        continue;
      }
      const embed = node.embeds[embedIndex++];
      // An embed selecting nothing (`drivers!inner()`) only filters.
      if (embed.item.children.length === 0) continue;
      const { from, conditions } = this.source(node, embed);
      const childJoins: string[] = [];
      const childList = this.selectList(embed.node, childJoins, isToOneSpread(embed));
      const all = [...conditions, ...this.where(embed.node)];
      const inner = `select ${childList} from ${from}${childJoins.join("")}${
        all.length ? ` where ${all.join(" and ")}` : ""
      }${this.groupBy(embed.node)}`;
      if (isToOneSpread(embed)) {
        const spreadAlias = ident(`${embed.node.alias}_spread`);
        joins.push(` left join lateral (${inner} limit 1) as ${spreadAlias} on true`);
        if (!aggregated) {
          parts.push(`${spreadAlias}.*`);
          continue;
        }
        for (const { name, aggregate } of this.spreadColumns(embed.node)) {
          if (aggregate) {
            parts.push(
              `${applyAggregate(aggregate, `${spreadAlias}.${ident(name)}`)} as ${
                ident(aggregate.alias ?? aggregate.aggregate!)
              }`,
            );
          } else {
            parts.push(`${spreadAlias}.${ident(name)}`);
            groups.push(`${spreadAlias}.${ident(name)}`);
          }
        }
      } else if (embed.item.spread) {
        // A to-many spread: each selected field becomes an array of its values, in the embed's order.
        const spreadAlias = `${embed.node.alias}_spread`;
        const arrays = this.outputNames(embed.node)
          .map((name) => `coalesce(json_agg(_s.${ident(name)}), '[]') as ${ident(name)}`);
        joins.push(
          ` left join lateral (select ${arrays.join(", ")} from (${inner}${this.orderBy(embed.node)}${
            this.page(embed.node)
          }) as _s) as ${ident(spreadAlias)} on true`,
        );
        if (!aggregated) parts.push(`${ident(spreadAlias)}.*`);
        for (const name of aggregated ? this.outputNames(embed.node) : []) {
          // json has no equality; grouped as jsonb.
          parts.push(`${ident(spreadAlias)}.${ident(name)}::jsonb as ${ident(name)}`);
          groups.push(`${ident(spreadAlias)}.${ident(name)}::jsonb`);
        }
      } else if (!isToOne(embed.relationship)) {
        embedded(
          `coalesce((select json_agg(_e) from (${inner}${this.orderBy(embed.node)}${
            this.page(embed.node)
          }) as _e), '[]')`,
          embed.outName,
          `${embed.node.alias}_embed`,
        );
      } else {
        embedded(`(select row_to_json(_e) from (${inner} limit 1) as _e)`, embed.outName, `${embed.node.alias}_embed`);
      }
    }
    this.#groupBys.set(node, aggregated && groups.length ? ` group by ${groups.join(", ")}` : "");
    return parts.length ? parts.join(", ") : "null as pgrst_nothing";
  }

  /** The columns a to-one spread's lateral join gives its parent, with the aggregate the parent applies to each. */
  spreadColumns(node: ReadNode): { name: string; aggregate?: SelectField }[] {
    const columns: { name: string; aggregate?: SelectField }[] = [];
    let embedIndex = 0;
    for (const item of node.items) {
      if (item.kind === "field") {
        if (item.aggregate) columns.push({ name: hoistName(item), aggregate: item });
        else if (item.field.name === "*") columns.push(...[...node.relation.columns.keys()].map((name) => ({ name })));
        else columns.push({ name: item.alias ?? outputName(item.field) });
        continue;
      }
      const embed = node.embeds[embedIndex++];
      if (embed.item.children.length === 0) continue;
      if (isToOneSpread(embed)) columns.push(...this.spreadColumns(embed.node));
      else if (embed.item.spread) columns.push(...this.outputNames(embed.node).map((name) => ({ name })));
      else columns.push({ name: embed.outName });
    }
    return columns;
  }

  /** The names of the columns a node's select list produces. */
  outputNames(node: ReadNode): string[] {
    const names: string[] = [];
    let embedIndex = 0;
    for (const item of node.items) {
      if (item.kind === "field") {
        if (item.aggregate) names.push(item.alias ?? item.aggregate);
        else if (item.field.name === "*") names.push(...node.relation.columns.keys());
        else names.push(item.alias ?? outputName(item.field));
        continue;
      }
      const embed = node.embeds[embedIndex++];
      if (embed.item.children.length === 0) continue;
      names.push(...(embed.item.spread ? this.outputNames(embed.node) : [embed.outName]));
    }
    return names;
  }

  /** The columns a write must return for this select to be built on its rows. */
  returning(node: ReadNode): string[] | "*" {
    const fields = node.items.filter((i) => i.kind === "field");
    if (fields.some((f) => f.field.name === "*" || !node.relation.columns.has(f.field.name))) return "*";
    if (node.embeds.some((e) => e.relationship.computed)) return "*";
    const names = new Set(fields.map((f) => f.field.name));
    for (const embed of node.embeds) {
      const r = embed.relationship;
      for (const [mine] of r.junction ? r.junction.sourceColumns : r.columns) names.add(mine);
    }
    return [...names];
  }
}

/** `sum(value)`, with the aggregate's cast (PostgREST's pgFmtApplyAggregate). */
function applyAggregate(item: SelectField, value: string): string {
  const sql = `${item.aggregate}(${value})`;
  return item.aggregateCast ? `(${sql})::${item.aggregateCast}` : sql;
}

/** The name a selected field gets without an alias: the last JSON key, else the column's. */
function outputName(field: Field): string {
  for (let i = field.json.length - 1; i >= 0; i--) if (!field.json[i].index) return field.json[i].key;
  return field.name;
}

/** A Postgres array literal of text elements, each quoted. */
export function pgArray(values: string[]): string {
  return `{${values.map((v) => `"${v.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`).join(",")}}`;
}
