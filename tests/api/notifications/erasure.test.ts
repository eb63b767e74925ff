// Erasing a recipient reaches every copy (DESIGN.md §11.7, docs/notifications.md): a create stored under an
// Idempotency-Key and replayed after the erasure carries none of the erased data, and no text, json or jsonb
// column of any table in the database keeps the erased name, phone or e-mail.
import { randomInt, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, db, stack, type TestCompany } from "../../support/api.ts";
import { deliveryBody } from "../../support/deliveries.ts";
import { waitFor } from "../../support/wait.ts";

interface Found {
  place: string;
  value: string;
}

/**
 * Every column of every table (all schemas but the catalogs) whose type is text-like, json or jsonb, searched
 * for each value; answers where each was found. Generic over information_schema, so a table added later is
 * searched too.
 */
async function searchEverywhere(values: string[]): Promise<Found[]> {
  const columns = await db()<{ schema: string; table: string; column: string }[]>`
    select c.table_schema as schema, c.table_name as table, c.column_name as column
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where t.table_type = 'BASE TABLE'
      and c.table_schema not in ('pg_catalog', 'information_schema', 'pg_toast')
      and (c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'USER-DEFINED')
        or c.udt_name in ('citext'))
    order by 1, 2, 3`;
  expect(columns.length).toBeGreaterThan(50);
  const found: Found[] = [];
  for (const { schema, table, column } of columns) {
    const [{ hits }] = await db().unsafe(
      `select array(select distinct v from unnest($1::text[]) v
         where exists (select from ${quote(schema)}.${quote(table)} x
           where strpos(x.${quote(column)}::text, v) > 0)) as hits`,
      [values],
    );
    for (const value of hits as string[]) found.push({ place: `${schema}.${table}.${column}`, value });
  }
  return found;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

let company: TestCompany;
beforeAll(async () => {
  company = await createCompany("Apagamento Ltda");
});

describe("erasing a recipient (LGPD)", () => {
  it("reaches the stored Idempotency-Key answer, the outbox and every other column", async () => {
    const digits = String(randomInt(10_000_000, 99_999_999));
    const who = {
      recipient_name: `Zuleica Apagada ${randomUUID().slice(0, 8)}`,
      recipient_phone: `+55 11 9${digits.slice(0, 4)}-${digits.slice(4)}`,
      recipient_email: `zuleica-${digits}@example.com`,
    };
    const body = deliveryBody({ payment_method: "invoice", customer: undefined, notes: "Portaria", ...who });
    const key = `erase-${randomUUID()}`;
    const create = () =>
      api("/api/v1/deliveries", { token: company.owner.token, body, headers: { "Idempotency-Key": key } });
    const created = await create();
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    expect(created.body.recipient_name).toBe(who.recipient_name);
    // The messages of `created` are sent (or fail) before erasing, so their copies exist.
    await waitFor("the created messages left the queue", async () => {
      const queued = await db()`select 1 from public.notifications where delivery_id = ${id} and status = 'queued'`;
      return queued.length === 0;
    }, 20_000).catch(() => {});

    const erased = await api(`/api/v1/deliveries/${id}/erase-recipient`, {
      method: "POST",
      token: company.owner.token,
    });
    expect(erased.status).toBe(200);

    const replay = await create();
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.id).toBe(id);
    expect(replay.body).toMatchObject({ recipient_name: null, recipient_phone: null, recipient_email: null });
    // The same key with another body is still refused: the fingerprint survives, the answer's data does not.
    const other = await api("/api/v1/deliveries", {
      token: company.owner.token,
      body: { ...body, notes: "other" },
      headers: { "Idempotency-Key": key },
    });
    expect(other.status).toBe(422);

    const phoneDigits = who.recipient_phone.replace(/\D/g, "");
    const values = [who.recipient_name, who.recipient_email, phoneDigits, `9${digits}`, who.recipient_phone];
    expect(await searchEverywhere(values)).toEqual([]);

    // The stack's log never had them either.
    const log = readFileSync(stack().logFile, "utf8");
    for (const value of values) expect(log.includes(value), value).toBe(false);
  });
});
