// GET /rest/v1/: the OpenAPI (Swagger 2.0) description of the request's
// schema, as PostgREST serves it (Response/OpenAPI.hs): a definition per
// table and view with its columns (types, formats, defaults, primary and
// foreign key notes), a path per table (GET always; POST/PATCH/DELETE when
// it can be written) and per function (/rpc/<name>; GET too unless volatile).
// With openapi-mode follow-privileges (the default) only what the caller's
// role may use is listed; ignore-privileges lists all; disabled answers 404.
import type postgres from "postgres";
import { EMULATED } from "../versions.ts";
import { PREFIX } from "./request.ts";
import type { Column, Relationship, Routine, SchemaCache, Table } from "./schema.ts";

type Json = Record<string, unknown>;

function swaggerType(type: string): string | undefined {
  if (["character varying", "character", "text"].includes(type)) return "string";
  if (type === "boolean") return "boolean";
  if (["smallint", "integer", "bigint"].includes(type)) return "integer";
  if (["numeric", "real", "double precision"].includes(type)) return "number";
  if (type === "json" || type === "jsonb") return undefined;
  return type.endsWith("[]") ? "array" : "string";
}

function swaggerFormat(type: string): string {
  return ({ smallint: "int32", integer: "int32", bigint: "int64" } as Record<string, string>)[type] ?? type;
}

function property(table: Table, column: Column, relationships: Relationship[]): Json {
  const notes = ["Note:"];
  if (table.primaryKey.includes(column.name)) notes.push("This is a Primary Key.<pk/>");
  const fk = relationships.find((r) =>
    (r.cardinality === "many-to-one" || r.cardinality === "one-to-one") && r.columns.length === 1 &&
    r.columns[0][0] === column.name && !r.computed
  );
  if (fk) {
    const [, target] = fk.columns[0];
    notes.push(
      `This is a Foreign Key to \`${fk.target.name}.${target}\`.<fk table='${fk.target.name}' column='${target}'/>`,
    );
  }
  const description = notes.length > 1
    ? `${column.description ? `${column.description}\n\n` : ""}${notes.join("\n")}`
    : column.description ?? undefined;
  const type = swaggerType(column.type);
  const out: Json = { format: swaggerFormat(column.nominalType) };
  if (type) out.type = type;
  if (type === "array") {
    const item = swaggerType(column.type.slice(0, -2));
    if (item) out.items = { type: item };
  }
  if (description) out.description = description;
  if (column.enum.length) out.enum = column.enum;
  if (column.maxLength !== null) out.maxLength = column.maxLength;
  if (column.default !== null) {
    if (type === "string") {
      const suffix = `::${column.type}`;
      const raw = column.default.endsWith(suffix) ? column.default.slice(0, -suffix.length) : column.default;
      out.default = raw.replace(/^'(.*)'$/s, "$1");
    } else {
      try {
        out.default = JSON.parse(column.default);
      } catch { /* an expression, not a value: no default shown */ }
    }
  }
  return out;
}

const text = (name: string, description: string, location: "query" | "header", extra: Json = {}) => ({
  name,
  description,
  required: false,
  in: location,
  type: "string",
  ...extra,
});

/** A list property, left out when empty (JSON Schema's `required` must name at least one). */
const nonEmpty = (name: string, values: string[]) => values.length ? { [name]: values } : {};

function prefer(values: string[]): Json {
  return {
    name: "Prefer",
    description: "Preference",
    required: false,
    in: "header",
    type: "string",
    ...(values.length ? { enum: values } : {}),
  };
}

export function openApiDocument(
  cache: SchemaCache,
  tables: Table[],
  routines: Routine[],
  schemaDescription: string | null,
  host: string,
): Json {
  const definitions: Json = {};
  const parameters: Json = {
    preferParams: prefer([]),
    preferReturn: prefer(["return=representation", "return=minimal", "return=none"]),
    preferCount: prefer(["count=none"]),
    preferPost: prefer([
      "return=representation",
      "return=minimal",
      "return=none",
      "resolution=ignore-duplicates",
      "resolution=merge-duplicates",
    ]),
    select: text("select", "Filtering Columns", "query"),
    on_conflict: text("on_conflict", "On Conflict", "query"),
    order: text("order", "Ordering", "query"),
    range: text("Range", "Limiting and Pagination", "header"),
    rangeUnit: text("Range-Unit", "Limiting and Pagination", "header", { default: "items" }),
    offset: text("offset", "Limiting and Pagination", "query"),
    limit: text("limit", "Limiting and Pagination", "query"),
  };
  const paths: Json = {
    "/": {
      get: {
        tags: ["Introspection"],
        summary: "OpenAPI description (this document)",
        produces: ["application/openapi+json", "application/json"],
        responses: { 200: { description: "OK" } },
      },
    },
  };
  const ref = (name: string) => ({ $ref: `#/parameters/${name}` });
  for (const t of tables) {
    const rels = cache.relationships.get(t) ?? [];
    const columns = [...t.columns.values()];
    definitions[t.name] = {
      ...(t.description ? { description: t.description } : {}),
      type: "object",
      properties: Object.fromEntries(columns.map((c) => [c.name, property(t, c, rels)])),
      ...nonEmpty("required", columns.filter((c) => !c.nullable).map((c) => c.name)),
    };
    parameters[`body.${t.name}`] = {
      name: t.name,
      description: t.name,
      required: false,
      in: "body",
      schema: { $ref: `#/definitions/${t.name}` },
    };
    for (const c of columns) {
      parameters[`rowFilter.${t.name}.${c.name}`] = text(c.name, c.description ?? "", "query");
      if (!c.description) delete (parameters[`rowFilter.${t.name}.${c.name}`] as Json).description;
    }
    const [summary, ...rest] = (t.description ?? "").split("\n");
    const operation = {
      tags: [t.name],
      ...(summary ? { summary } : {}),
      ...(rest.join("\n").trim() ? { description: rest.join("\n").replace(/^\n+/, "") } : {}),
    };
    const filters = columns.map((c) => `rowFilter.${t.name}.${c.name}`);
    const item: Json = {
      get: {
        ...operation,
        parameters: [...filters, "select", "order", "range", "rangeUnit", "offset", "limit", "preferCount"].map(ref),
        responses: {
          200: { description: "OK", schema: { type: "array", items: { $ref: `#/definitions/${t.name}` } } },
          206: { description: "Partial Content" },
        },
      },
    };
    if (t.insertable || t.updatable || t.deletable) {
      item.post = {
        ...operation,
        parameters: [`body.${t.name}`, "select", "preferPost"].map(ref),
        responses: { 201: { description: "Created" } },
      };
      item.patch = {
        ...operation,
        parameters: [...filters, `body.${t.name}`, "preferReturn"].map(ref),
        responses: { 204: { description: "No Content" } },
      };
      item.delete = {
        ...operation,
        parameters: [...filters, "preferReturn"].map(ref),
        responses: { 204: { description: "No Content" } },
      };
    }
    paths[`/${t.name}`] = item;
  }
  for (const r of routines) {
    const [summary, ...rest] = (r.description ?? "").split("\n");
    const operation = {
      tags: [`(rpc) ${r.name}`],
      ...(summary ? { summary } : {}),
      ...(rest.join("\n").trim() ? { description: rest.join("\n").replace(/^\n+/, "") } : {}),
      produces: [
        "application/json",
        "application/vnd.pgrst.object+json;nulls=stripped",
        "application/vnd.pgrst.object+json",
      ],
      responses: { 200: { description: "OK" } },
    };
    const post = {
      ...operation,
      parameters: [
        {
          name: "args",
          required: true,
          in: "body",
          schema: {
            ...(r.description ? { description: r.description } : {}),
            type: "object",
            properties: Object.fromEntries(r.params.map((p) => {
              const type = swaggerType(p.type);
              return [p.name, { format: swaggerFormat(p.type), ...(type ? { type } : {}) }];
            })),
            ...nonEmpty("required", r.params.filter((p) => p.required).map((p) => p.name)),
          },
        },
        ref("preferParams"),
      ],
    };
    const get = {
      ...operation,
      parameters: r.params.map((p) => {
        const type = swaggerType(p.type);
        return {
          name: p.name,
          required: p.required,
          in: "query",
          type: !type || type === "array" ? "string" : type,
          format: swaggerFormat(p.type),
        };
      }),
    };
    paths[`/rpc/${r.name}`] = r.volatility === "v" ? { post } : { get, post };
  }
  const [title, ...description] = (schemaDescription ?? "").split("\n");
  const version = EMULATED.postgrest.replace(/^v/, "");
  return {
    swagger: "2.0",
    info: {
      description: description.join("\n").replace(/^\n+/, "") || "This is a dynamic API generated by PostgREST",
      title: title || "PostgREST API",
      version,
    },
    host,
    basePath: `${PREFIX}/`,
    schemes: ["http"],
    consumes: [
      "application/json",
      "application/vnd.pgrst.object+json;nulls=stripped",
      "application/vnd.pgrst.object+json",
      "text/csv",
    ],
    produces: [
      "application/json",
      "application/vnd.pgrst.object+json;nulls=stripped",
      "application/vnd.pgrst.object+json",
      "text/csv",
    ],
    paths,
    definitions,
    parameters,
    externalDocs: {
      description: "PostgREST Documentation",
      url: `https://postgrest.org/en/v${version.split(".")[0]}/references/api.html`,
    },
  };
}

/** The tables and functions of `schema` the current role may use (openapi-mode follow-privileges). */
export async function accessible(
  tx: postgres.TransactionSql,
  schema: string,
): Promise<{ tables: Set<string>; functions: Set<string>; description: string | null }> {
  const tables = await tx<{ name: string }[]>`
    select c.relname as name from pg_class c
     where c.relnamespace = (select oid from pg_namespace where nspname = ${schema})
       and c.relkind in ('v', 'r', 'm', 'f', 'p') and not c.relispartition
       and (pg_has_role(c.relowner, 'USAGE')
            or has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
            or has_any_column_privilege(c.oid, 'SELECT, INSERT, UPDATE, REFERENCES'))`;
  const functions = await tx<{ name: string }[]>`
    select distinct p.proname as name from pg_proc p
     where p.pronamespace = (select oid from pg_namespace where nspname = ${schema})
       and has_function_privilege(p.oid, 'execute')`;
  const [description] = await tx<{ description: string | null }[]>`
    select obj_description(oid, 'pg_namespace') as description from pg_namespace where nspname = ${schema}`;
  return {
    tables: new Set(tables.map((t) => t.name)),
    functions: new Set(functions.map((f) => f.name)),
    description: description?.description ?? null,
  };
}
