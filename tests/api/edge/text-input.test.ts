// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Text the service cannot store or send is a 400 validation error naming the
// field, never a 5xx and never stored altered: a NUL character or a lone UTF-16
// surrogate in any text input, and a gateway credential that cannot travel in
// an HTTP header.
import { beforeAll, describe, expect, it } from "vitest";
import { api, type ApiResponse, createCompany, db, type TestCompany, uniqueEmail } from "../../support/api.ts";
import { deliveryBody, deliveryIn } from "../../support/deliveries.ts";
import { creditDriver } from "../../support/money.ts";

let company: TestCompany;

beforeAll(async () => {
  company = await createCompany("Text Co");
  await creditDriver(company.companyId, company.driver, "50.00");
});

/** Each request with one text field replaced by `bad` (a function of the field's valid value). */
function requests(bad: (valid: string) => string) {
  const owner = () => company.owner.token;
  const register = { company_name: "Acme", owner_name: "Ana", email: uniqueEmail("text"), password: "long-enough-1" };
  const driver = { name: "Dora", email: uniqueEmail("text-driver"), password: "long-enough-1" };
  const delivery = deliveryBody({ payment_method: "invoice", customer: undefined });
  const pix = deliveryBody();
  const set = (body: Record<string, any>, path: string[]) => {
    const copy = structuredClone(body);
    let at = copy;
    for (const key of path.slice(0, -1)) at = at[key];
    at[path.at(-1)!] = bad(at[path.at(-1)!]);
    return copy;
  };
  return [
    ...["company_name", "owner_name", "email", "password"].map((field) => ({
      label: `register ${field}`,
      loc: ["body", field],
      send: () => api("/api/v1/companies/register", { body: set(register, [field]) }),
    })),
    ...["name", "email", "password"].map((field) => ({
      label: `new driver ${field}`,
      loc: ["body", field],
      send: () => api("/api/v1/drivers", { token: owner(), body: set(driver, [field]) }),
    })),
    {
      label: "driver name",
      loc: ["body", "name"],
      send: () =>
        api(`/api/v1/drivers/${company.driver2.driverId}`, {
          method: "PATCH",
          token: owner(),
          body: { name: bad("Dora") },
        }),
    },
    ...["origin_address", "destination_address", "recipient_name", "notes"].map((field) => ({
      label: `delivery ${field}`,
      loc: ["body", field],
      send: () => api("/api/v1/deliveries", { token: owner(), body: set(delivery, [field]) }),
    })),
    ...[["customer", "name"], ["customer", "email"]].map((path) => ({
      label: `delivery ${path.join(".")}`,
      loc: ["body", ...path],
      send: () => api("/api/v1/deliveries", { token: owner(), body: set(pix, path) }),
    })),
    {
      label: "cancel reason",
      loc: ["body", "reason"],
      send: async () =>
        api(`/api/v1/deliveries/${await deliveryIn(company, "pending")}/cancel`, {
          method: "POST",
          token: owner(),
          body: { reason: bad("client gave up") },
        }),
    },
    {
      label: "withdrawal pix_key",
      loc: ["body", "pix_key"],
      send: () =>
        api("/api/v1/withdrawals", {
          token: company.driver.token,
          body: { amount: 1, pix_key: bad("someone@example.com"), pix_key_type: "email" },
        }),
    },
    ...["api_key", "webhook_secret"].map((field) => ({
      label: `gateway ${field}`,
      loc: ["body", field],
      send: () =>
        api("/api/v1/companies/me/gateway-config", {
          token: owner(),
          body: set({ api_key: "$aact_hmlg_text", webhook_secret: "text-secret-0123456789" }, [field]),
        }),
    })),
    // A URL carries UTF-8 only, so of these a query can carry just the NUL.
    ...(!/[\ud800-\udfff]/.test(bad("abc"))
      ? [{
        label: "list cursor",
        loc: ["query", "cursor"],
        send: () => api(`/api/v1/deliveries?cursor=${encodeURIComponent(bad("abc"))}`, { token: owner() }),
      }]
      : []),
  ];
}

function expectValidationError(res: ApiResponse, loc: string[], label: string) {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body.detail, label).toEqual(expect.arrayContaining([expect.objectContaining({ loc })]));
}

describe("unstorable text", () => {
  const middle = (insert: string) => (valid: string) => valid.slice(0, 2) + insert + valid.slice(2);

  it.each([
    ["a NUL character", "\u0000"],
    ["a lone high surrogate", "\ud800"],
    ["a lone low surrogate", "\udc00"],
  ])("%s in any text input is a 400 naming the field", async (_, insert) => {
    const [{ n: deliveriesBefore }] = await db()`select count(*)::int as n from public.deliveries
                                                where company_id = ${company.companyId}`;
    for (const { label, loc, send } of requests(middle(insert))) expectValidationError(await send(), loc, label);
    const [{ n: deliveriesAfter }] = await db()`select count(*)::int as n from public.deliveries
                                               where company_id = ${company.companyId}`;
    // Only the deliveries the cancel requests needed were created.
    expect(deliveriesAfter - deliveriesBefore).toBe(1);
  });
});

describe("gateway credentials that cannot travel in an HTTP header", () => {
  it.each([
    ["CR/LF", "$aact_hmlg_a\r\nx-injected: 1"],
    ["a control character", "$aact_hmlg_\u0007bell"],
    ["non-ASCII", "$aact_hmlg_chave-ção"],
  ])("%s in api_key or webhook_secret is a 400 and nothing is stored", async (_, value) => {
    for (const field of ["api_key", "webhook_secret"]) {
      const res = await api("/api/v1/companies/me/gateway-config", {
        token: company.owner.token,
        body: { api_key: "$aact_hmlg_ok", webhook_secret: "ok-secret-0123456789", [field]: value },
      });
      expectValidationError(res, ["body", field], field);
    }
    const stored = await db()`select 1 from private.gateway_configs where company_id = ${company.companyId}`;
    expect(stored).toHaveLength(0);
  });
});
