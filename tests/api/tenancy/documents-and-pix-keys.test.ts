// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Brazilian documents and Pix keys: a CPF or CNPJ with or without its punctuation, its check digits verified, one
// repeated digit refused, stored as digits; a phone key typed any usual way, stored as E.164. The edge's rule
// (functions/api/brazil.ts) and the database's (supabase/schemas/01_brazil.sql) give the same answer for every case,
// and the API answers 400 naming the field for what neither takes.
import { formatCnpj, formatCpf, generateCnpj, generateCpf } from "@brazilian-utils/brazilian-utils";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Document, documentDigits, normalizePixKey, type PixKeyType } from "../../../functions/api/brazil.ts";
import { configureGateway, createCompany, db, stack, type TestCompany } from "../../support/api.ts";
import { createPixDelivery } from "../../support/deliveries.ts";
import { gateway } from "../../support/fakes.ts";
import { creditDriver, requestWithdrawal, walletOf } from "../../support/money.ts";

const DOCUMENTS: [string, string | null][] = [
  ["52998224725", "52998224725"],
  ["529.982.247-25", "52998224725"],
  [" 529 982 247 25 ", "52998224725"],
  ["529.982.247-26", null], // the second check digit wrong
  ["529.982.247-15", null], // the first check digit wrong
  ["111.111.111-11", null], // check digits that add up, but one repeated digit
  ["11111111111", null],
  ["00000000000", null],
  ["12345678901", null],
  ["5299822472", null],
  ["529.982.247-2a", null],
  ["11.222.333/0001-81", "11222333000181"],
  ["11222333000181", "11222333000181"],
  ["11.222.333/0001-82", null],
  ["11.111.111/1111-11", null],
  ["00000000000000", null],
  ["123", null],
];

const PHONES = ["(11) 98888-7777", "11988887777", "+55 11 98888-7777", "+5511988887777", "0055 11 98888-7777"];

const PIX_KEYS: [string, PixKeyType, string | null][] = [
  ...PHONES.map((phone): [string, PixKeyType, string] => [phone, "phone", "+5511988887777"]),
  ["(11) 3333-4444", "phone", null], // a landline: a phone key is a mobile number
  ["(20) 98888-7777", "phone", null], // no area code 20
  ["98888-7777", "phone", null],
  ["1198888777a7", "phone", null],
  ["529.982.247-25", "cpf", "52998224725"],
  ["52998224725", "cpf", "52998224725"],
  ["11111111111", "cpf", null],
  ["111.111.111-11", "cpf", null],
  ["529.982.247-26", "cpf", null],
  ["11.222.333/0001-81", "cpf", null],
  ["11.222.333/0001-81", "cnpj", "11222333000181"],
  ["52998224725", "cnpj", null],
  [" Driver@Example.COM ", "email", "driver@example.com"],
  ["driver.example.com", "email", null],
  ["123E4567-E89B-12D3-A456-426614174000", "evp", "123e4567-e89b-12d3-a456-426614174000"],
  ["123e4567", "evp", null],
];

describe("the rule, at the edge and in the database", () => {
  it.each(DOCUMENTS)("a document %j is %j", async (text, digits) => {
    expect(documentDigits(text.trim())).toBe(digits);
    const parsed = Document.safeParse(text);
    expect(parsed.success ? parsed.data : null).toBe(digits);
    const [row] = await db()`select private.normalize_document(${text}) as digits`;
    expect(row.digits).toBe(digits);
  });

  it.each(PIX_KEYS)("a Pix key %j of type %s is %j", async (key, type, stored) => {
    expect(normalizePixKey(type, key)).toBe(stored);
    const [row] = await db()`select private.normalize_pix_key(${key}, ${type}) as key`;
    expect(row.key).toBe(stored);
  });

  it("agrees on a thousand generated documents, punctuated or not, and on each with a wrong check digit", async () => {
    const cases = Array.from({ length: 500 }, (_, i) => {
      const digits = i % 2 ? generateCpf() : generateCnpj();
      const valid = i % 4 < 2 ? digits : digits.length === 11 ? formatCpf(digits) : formatCnpj(digits);
      const last = Number(valid.at(-1));
      return [valid, valid.slice(0, -1) + String((last + 1) % 10)];
    }).flat();
    const rows = await db()`select d, private.normalize_document(d) as digits from unnest(${cases}::text[]) d`;
    const sql = new Map(rows.map((r: any) => [r.d, r.digits]));
    const disagreements = cases.filter((text) => documentDigits(text) !== sql.get(text));
    expect(disagreements).toEqual([]);
    expect(cases.filter((text) => documentDigits(text) !== null)).toHaveLength(500);
  });
});

describe("POST /api/v1/withdrawals", () => {
  let company: TestCompany;

  beforeAll(async () => {
    company = await createCompany("Pix keys");
    await configureGateway(company);
    await creditDriver(company.companyId, company.driver, "50.00");
  });
  beforeEach(async () => {
    await gateway.reset();
  });

  it("takes the CPF key 529.982.247-25, stores it as digits and transfers to its digits", async () => {
    const res = await requestWithdrawal(company.driver, 1, "529.982.247-25", "cpf");
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.pix_key).toBe("*******4725");
    const [row] = await db()`select pix_key from public.withdrawals where id = ${res.body.id}`;
    expect(row.pix_key).toBe("52998224725");
    const transfers = (await gateway.state()).transfers.filter((t) => t.externalReference === res.body.id);
    expect(transfers).toEqual([expect.objectContaining({ pixAddressKey: "52998224725", pixAddressKeyType: "CPF" })]);
  });

  it("refuses the CPF key 11111111111 with 400 naming pix_key, and holds nothing", async () => {
    const before = await walletOf(company.driver);
    for (const key of ["11111111111", "111.111.111-11", "529.982.247-26"]) {
      const res = await requestWithdrawal(company.driver, 1, key, "cpf");
      expect(res.status, key).toBe(400);
      expect(res.body.detail, key).toEqual([
        expect.objectContaining({
          loc: ["body", "pix_key"],
          input: key,
          msg: expect.stringMatching(/^a cpf key must be/),
        }),
      ]);
    }
    expect(await walletOf(company.driver)).toEqual(before);
    expect((await gateway.state()).transfers).toEqual([]);
  });

  it("takes a phone key typed any usual way and transfers to it in E.164", async () => {
    for (const phone of PHONES) {
      const res = await requestWithdrawal(company.driver, 1, phone, "phone");
      expect(res.status, phone).toBe(201);
      expect(res.body.pix_key, phone).toBe("**********7777");
    }
    const transfers = (await gateway.state()).transfers;
    expect(transfers.map((t) => [t.pixAddressKey, t.pixAddressKeyType])).toEqual(
      PHONES.map(() => ["+5511988887777", "PHONE"]),
    );
  });

  it("refuses a landline as a phone key with 400 naming pix_key", async () => {
    const res = await requestWithdrawal(company.driver, 1, "(11) 3333-4444", "phone");
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["body", "pix_key"] })]);
  });

  it("is held to the same rule when called with supabase-js's rpc (the database's own 400)", async () => {
    const res = await fetch(`${stack().apiUrl}/rest/v1/rpc/request_withdrawal`, {
      method: "POST",
      headers: {
        apikey: stack().anonKey,
        authorization: `Bearer ${company.driver.token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ amount: 1, pix_key: "11111111111", pix_key_type: "cpf" }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toBe("pix_key is not a valid cpf key");
  });
});

describe("POST /api/v1/deliveries: the client's document", () => {
  let company: TestCompany;

  beforeAll(async () => {
    company = await createCompany("Documents");
    await configureGateway(company);
  });
  beforeEach(async () => {
    await gateway.reset();
  });

  it("takes a CPF or CNPJ with or without punctuation and sends the gateway its digits", async () => {
    const documents = [formatCpf(generateCpf()), generateCpf(), formatCnpj(generateCnpj())];
    for (const document of documents) {
      const res = await createPixDelivery(company, { customer: { name: "Cliente", document } });
      expect(res.status, `${document}: ${JSON.stringify(res.body)}`).toBe(201);
    }
    const customers = (await gateway.state()).customers;
    expect(customers.map((c) => c.cpfCnpj)).toEqual(documents.map((d) => d.replace(/\D/g, "")));
  });

  it("reuses the gateway customer of a document however it is typed", async () => {
    const digits = generateCpf();
    const punctuated = formatCpf(digits);
    for (const document of [punctuated, digits]) {
      expect((await createPixDelivery(company, { customer: { name: "Cliente", document } })).status).toBe(201);
    }
    expect((await gateway.state()).customers).toHaveLength(1);
  });

  it.each(["111.111.111-11", "11111111111", "529.982.247-26", "11.222.333/0001-82", "00000000000000"])(
    "refuses %s with 400 naming customer.document, and charges no one",
    async (document) => {
      const res = await createPixDelivery(company, { customer: { name: "Cliente", document } });
      expect(res.status).toBe(400);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["body", "customer", "document"] })]);
      expect((await gateway.state()).log).toEqual([]);
    },
  );
});
