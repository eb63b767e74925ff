// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// CNPJs with letters (since July 2026): one table of valid and invalid numbers (tests/support/cnpj-table.ts) on which
// @brazilian-utils's isValidCnpj(x, { version: 2 }), the edge (functions/api/brazil.ts) and the database
// (private.cnpj_valid, 01_brazil.sql) agree; then every place that takes a CNPJ: registration's `document`
// (GET /companies/me shows it), a Pix charge's customer, a Pix key of type cnpj. Stored upper case without
// punctuation; refused with 400 naming the field.
import { isValidCnpj } from "@brazilian-utils/brazilian-utils";
import { beforeAll, describe, expect, it } from "vitest";
import { cnpjCharacters, Document, normalizePixKey } from "../../../functions/api/brazil.ts";
import { api, configureGateway, createCompany, db, signIn, type TestCompany, uniqueEmail } from "../../support/api.ts";
import { CNPJ_TABLE, newAlphanumericCnpj } from "../../support/cnpj-table.ts";
import { createPixDelivery } from "../../support/deliveries.ts";
import { gateway } from "../../support/fakes.ts";
import { creditDriver, requestWithdrawal } from "../../support/money.ts";

describe("one table, three judges: the library, the edge, the database", () => {
  it.each(CNPJ_TABLE)("$input ($why): valid $valid", async ({ input, valid, stored }) => {
    expect(isValidCnpj(input, { version: 2 })).toBe(valid);
    expect(cnpjCharacters(input)).toBe(valid ? stored : null);
    const [row] =
      await db()`select private.cnpj_valid(${input}) as valid, private.normalize_document(${input}) as stored`;
    expect(row.valid).toBe(valid);
    expect(row.stored).toBe(valid ? stored : null);
  });

  it("agrees on 500 generated alphanumeric CNPJs and each with a wrong check digit", async () => {
    const cases = Array.from({ length: 250 }, () => {
      const cnpj = newAlphanumericCnpj();
      const last = Number(cnpj.at(-1));
      return [cnpj.toLowerCase(), cnpj.slice(0, -1) + String((last + 1) % 10)];
    }).flat();
    const rows = await db()`select c, private.cnpj_valid(c) as valid from unnest(${cases}::text[]) c`;
    const sql = new Map(rows.map((r: any) => [r.c, r.valid]));
    expect(cases.filter((c) => isValidCnpj(c, { version: 2 }) !== sql.get(c))).toEqual([]);
    expect(cases.filter((c) => sql.get(c))).toHaveLength(250);
  });

  it("a customer's document and a cnpj Pix key follow the same table at the edge", () => {
    for (const { input, valid, stored } of CNPJ_TABLE) {
      const parsed = Document.safeParse(input);
      expect(parsed.success ? parsed.data : null, input).toBe(valid ? stored : null);
      expect(normalizePixKey("cnpj", input), input).toBe(valid ? stored : null);
    }
  });
});

describe("registration: the company's own CNPJ", () => {
  const register = (document?: unknown) =>
    api("/api/v1/companies/register", {
      body: {
        company_name: "Letras Ltda",
        owner_name: "Dona",
        email: uniqueEmail("cnpj"),
        password: "correct-horse",
        document,
      },
    });

  it("takes an alphanumeric CNPJ in lower case with punctuation, stores it upper case, shows it on /companies/me", async () => {
    const res = await register("12.abc.345/01de-35");
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [row] = await db()`select document from public.companies where id = ${res.body.company_id}`;
    expect(row.document).toBe("12ABC34501DE35");
    const [user] = await db()`select email from auth.users where id = ${res.body.user_id}`;
    const { access_token } = await signIn(user.email, "correct-horse");
    const me = await api("/api/v1/companies/me", { token: access_token });
    expect(me.body.document).toBe("12ABC34501DE35");
  });

  it("takes none (null) as before", async () => {
    const res = await register();
    expect(res.status).toBe(201);
    const [row] = await db()`select document from public.companies where id = ${res.body.company_id}`;
    expect(row.document).toBe(null);
  });

  it.each(["12ABC34501DE36", "529.982.247-25", "11.111.111/1111-11", "12ABC34501D E35"])(
    "refuses %s with 400 naming document, and creates nothing",
    async (document) => {
      const before = await db()`select count(*)::int as n from public.companies`;
      const res = await register(document);
      expect(res.status).toBe(400);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["body", "document"] })]);
      const after = await db()`select count(*)::int as n from public.companies`;
      expect(after[0].n).toBe(before[0].n);
    },
  );

  it("the database holds the rule for any writer (a CNPJ not in its stored form is refused)", async () => {
    await expect(db()`insert into public.companies (name, document) values ('x', '12.ABC.345/01DE-35')`).rejects
      .toMatchObject({ code: "23514" });
  });
});

describe("a Pix charge's customer and a Pix key of type cnpj", () => {
  let company: TestCompany;

  beforeAll(async () => {
    company = await createCompany("Letras nos CNPJs");
    await configureGateway(company);
    await creditDriver(company.companyId, company.driver, "20.00");
  });

  it("charges a customer with an alphanumeric CNPJ, sent to the gateway upper case without punctuation", async () => {
    await gateway.reset();
    const cnpj = newAlphanumericCnpj();
    const typed = `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`
      .toLowerCase();
    const res = await createPixDelivery(company, { customer: { name: "Empresa Nova", document: typed } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await gateway.state()).customers.map((c: any) => c.cpfCnpj)).toEqual([cnpj]);
  });

  it("refuses a customer's alphanumeric CNPJ with a wrong check digit: 400 naming customer.document", async () => {
    const res = await createPixDelivery(company, { customer: { name: "X", document: "12ABC34501DE36" } });
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["body", "customer", "document"] })]);
  });

  it("takes an alphanumeric cnpj Pix key, stores it upper case and transfers to it", async () => {
    await gateway.reset();
    const res = await requestWithdrawal(company.driver, 1, "12.abc.345/01de-35", "cnpj");
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [row] = await db()`select pix_key from public.withdrawals where id = ${res.body.id}`;
    expect(row.pix_key).toBe("12ABC34501DE35");
    const transfers = (await gateway.state()).transfers.filter((t: any) => t.externalReference === res.body.id);
    expect(transfers).toEqual([
      expect.objectContaining({ pixAddressKey: "12ABC34501DE35", pixAddressKeyType: "CNPJ" }),
    ]);
  });

  it("refuses a wrong one with 400 naming pix_key; the database refuses it for rpc callers too", async () => {
    const res = await requestWithdrawal(company.driver, 1, "12ABC34501DE36", "cnpj");
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["body", "pix_key"] })]);
    const [row] = await db()`select private.normalize_pix_key('12ABC34501DE36', 'cnpj') as key,
      private.normalize_pix_key('12abc34501de35', 'cnpj') as good`;
    expect(row).toEqual({ key: null, good: "12ABC34501DE35" });
  });
});
