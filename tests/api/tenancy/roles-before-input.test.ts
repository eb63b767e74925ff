// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// A caller whose role may not use an operation gets 403 whatever its input: the
// role is checked before the path, query or body is validated, so a refused
// caller never learns the fields from a 400. Table-driven over the OpenAPI
// document: every operation behind a bearer token, every role of a company
// that its `x-roles` (the roles of its `x-role-set`, as the database returns
// them) leave out, with an empty and with a malformed input.
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, type TestCompany } from "../../support/api.ts";

/** The test company's members, by the app role each token carries (the legacy admin's in user_metadata). */
const MEMBERS = { owner: "company_owner", admin: "company_admin", legacyAdmin: "admin", driver: "driver" } as const;
type Member = keyof typeof MEMBERS;

interface Operation {
  method: string;
  path: string;
  roles: string[];
  parameters: { name: string; in: string; schema?: { enum?: unknown[]; format?: string; type?: string } }[];
  hasBody: boolean;
  /** The body's media type: JSON, or a CSV upload. */
  bodyType: string | undefined;
}

let company: TestCompany;
let operations: Operation[];

beforeAll(async () => {
  const [created, doc] = await Promise.all([createCompany("Roles first"), api("/api/v1/openapi.json")]);
  company = created;
  operations = Object.entries(doc.body.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, op]) => (op.security ?? []).some((s: object) => "bearerAuth" in s))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        roles: op["x-roles"],
        parameters: op.parameters ?? [],
        hasBody: op.requestBody !== undefined,
        bodyType: Object.keys(op.requestBody?.content ?? {})[0],
      }))
  );
});

type Input = "empty" | "malformed";

/** Whether a query parameter has a type that "bogus" does not satisfy (an enum, a format, a number or a boolean). */
const isTyped = (p: Operation["parameters"][number]) =>
  Boolean(p.schema?.enum || p.schema?.format || ["integer", "number", "boolean"].includes(p.schema?.type ?? ""));

/** The request of an operation with an empty input (real-looking ids, `{}`), or a malformed one. */
function request(op: Operation, input: Input) {
  const malformed = input === "malformed";
  const path = op.path.replace(/\{\w+\}/g, () => (malformed ? "not-a-uuid" : crypto.randomUUID()));
  // The usual malformed parameters, and every other typed query parameter the operation declares (an enum, a
  // format such as a date or a uuid, a number) set to "bogus"; free text is left out, where "bogus" is valid.
  const usual: Record<string, string> = { limit: "0", cursor: "", status: "bogus", from: "not-a-day" };
  const typed = op.parameters.filter((p) => p.in === "query" && !(p.name in usual) && isTyped(p));
  const query = op.parameters.some((p) => p.in === "query") && malformed
    ? `?${new URLSearchParams({ ...usual, ...Object.fromEntries(typed.map((p) => [p.name, "bogus"])) })}`
    : "";
  // A body of the operation's own media type: a JSON body cut short, or a CSV file whose quote never closes.
  const csv = op.bodyType === "text/csv";
  return {
    path: path + query,
    method: op.method,
    ...(op.hasBody
      ? malformed
        ? { rawBody: csv ? 'origin_address\n"unclosed' : '{"lat": ', headers: { "content-type": op.bodyType! } }
        : csv
        ? { rawBody: "", headers: { "content-type": "text/csv" } }
        : { body: {} }
      : {}),
  };
}

const refused = (op: Operation) => (Object.keys(MEMBERS) as Member[]).filter((m) => !op.roles.includes(MEMBERS[m]));

describe("403 before 400", () => {
  it("every bearer operation names its role set, and the document lists the set's roles", () => {
    expect(operations.length).toBeGreaterThan(25);
    for (const op of operations) {
      expect(op.roles, `${op.method} ${op.path}`).toEqual(expect.arrayContaining([expect.any(String)]));
    }
  });

  it.each(["empty", "malformed"] as Input[])(
    "every role an operation refuses gets 403 with a %s input",
    async (input) => {
      const cases = operations.flatMap((op) => refused(op).map((member) => ({ op, member })));
      // Every operation refuses someone but GET /companies/me, /prices, /deliveries..., which all members may use.
      expect(cases.length).toBeGreaterThan(40);
      const wrong: string[] = [];
      for (const { op, member } of cases) {
        const res = await api(request(op, input).path, { ...request(op, input), token: company[member].token });
        if (res.status !== 403 || typeof res.body?.detail !== "string") {
          wrong.push(`${op.method} ${op.path} as ${member}: ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      expect(wrong).toEqual([]);
    },
  );

  it("the same malformed input from a role the operation allows is 400: only the role decides the 403", async () => {
    const withInput = operations.filter((op) => op.hasBody || op.parameters.length > 0);
    expect(withInput.length).toBeGreaterThan(15);
    const wrong: string[] = [];
    for (const op of withInput) {
      const member = (Object.keys(MEMBERS) as Member[]).find((m) => op.roles.includes(MEMBERS[m]))!;
      const res = await api(request(op, "malformed").path, {
        ...request(op, "malformed"),
        token: company[member].token,
      });
      if (res.status !== 400 || !Array.isArray(res.body?.detail)) {
        wrong.push(`${op.method} ${op.path} as ${member}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("a driver posting {} to POST /api/v1/drivers learns no field", async () => {
    const res = await api("/api/v1/drivers", { body: {}, token: company.driver.token });
    expect(res).toMatchObject({ status: 403, body: { detail: "role driver may not do this" } });
  });
});
