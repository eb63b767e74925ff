// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Money at the door (docs/contract.md, Money at the door) and the recipient's handover code: `collect` on create
// and on import, shown to drivers before they accept; completion requires `collected` (422), a different amount is
// recorded and flagged; the driver's cash ledger (GET /drivers/{id}/cash), settlements never above what is
// outstanding, also sent at once, and once per Idempotency-Key; the day's summary in JSON and CSV; card apart. The
// handover code: on the tracking page, never in a driver's reads; wrong 422, 5 wrong then 423, a manager's override.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { api, configureGateway, createCompany, db, stack, type TestCompany } from "../../support/api.ts";
import { createInvoiceDelivery, createPixDelivery, moveDelivery } from "../../support/deliveries.ts";
import { whatsapp } from "../../support/fakes.ts";
import { waitFor } from "../../support/wait.ts";

let company: TestCompany;
const cashOf = async (driverId: string, token = company.owner.token) =>
  (await api(`/api/v1/drivers/${driverId}/cash`, { token })).body;
const settle = (amount: number, headers: Record<string, string> = {}) =>
  api(`/api/v1/drivers/${company.driver.driverId}/cash-settlements`, {
    token: company.owner.token,
    body: { amount, note: "envelope" },
    headers,
  });

/** An invoice delivery collecting `collect`, for the company's first driver, brought to in_progress. */
async function collecting(collect: unknown) {
  const created = await createInvoiceDelivery(company, { collect, driver_id: company.driver.driverId });
  expect((await moveDelivery(company.driver, created.id, "start")).status).toBe(200);
  return created;
}

beforeAll(async () => {
  company = await createCompany("Cash at the door");
});

describe("collect on a delivery", () => {
  it("is shown with the change due, to managers and to drivers before they accept (lists included)", async () => {
    const created = await createInvoiceDelivery(company, {
      collect: { amount: 57.5, method: "cash", change_for: 100 },
    });
    expect(created.collect).toEqual({ amount: 57.5, method: "cash", change_for: 100, change_due: 42.5 });
    expect(created.collected).toBe(null);
    expect(created.collect_mismatch).toBe(false);
    const list = await api("/api/v1/deliveries?status=pending&limit=100", { token: company.driver2.token });
    expect(list.body.items.find((d: any) => d.id === created.id)?.collect).toEqual(created.collect);
  });

  it("is taken with any payment method: a Pix delivery collects too", async () => {
    const pix = await createCompany("Pix and cash at the door");
    await configureGateway(pix);
    const res = await createPixDelivery(pix, { collect: { amount: 12.34, method: "card" } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.payment_method).toBe("pix");
    expect(res.body.collect).toEqual({ amount: 12.34, method: "card", change_for: null, change_due: null });
  });

  it.each([
    [{ amount: 10, method: "card", change_for: 20 }, "change_for"],
    [{ amount: 10, method: "cash", change_for: 5 }, "change_for"],
    [{ amount: 0, method: "cash" }, "amount"],
    [{ amount: 10.001, method: "cash" }, "amount"],
    [{ amount: 10, method: "pix" }, "method"],
  ])("refuses %j with 400 naming collect.%s", async (collect, field) => {
    const res = await api("/api/v1/deliveries", {
      token: company.owner.token,
      body: {
        origin_address: "Praça da Sé",
        origin: { lat: -23.55, lng: -46.63 },
        destination_address: "Av. Paulista, 1000",
        destination: { lat: -23.56, lng: -46.65 },
        payment_method: "invoice",
        collect,
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["body", "collect", field] })]);
  });

  it("is read from the import's collect.* columns (decimal commas too)", async () => {
    const csv = "origin_address;origin.lat;origin.lng;destination_address;destination.lat;destination.lng;" +
      "collect.amount;collect.method;collect.change_for\n" +
      "Praça da Sé;-23,55;-46,63;Av. Paulista, 1000;-23,56;-46,65;57,50;cash;100\n" +
      "Praça da Sé;-23,55;-46,63;Av. Paulista, 1000;-23,56;-46,65;20;card;\n";
    const res = await api("/api/v1/deliveries/import", {
      token: company.owner.token,
      rawBody: csv,
      headers: { "content-type": "text/csv" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.created).toBe(2);
    const rows = await db()`select collect_amount::text, collect_method, collect_change_for::text from public.deliveries
      where company_id = ${company.companyId} and collect_amount in (57.50, 20) and external_id is null
      order by collect_amount`;
    expect(rows.map((r: any) => Object.values(r))).toEqual(
      expect.arrayContaining([["20.00", "card", null], ["57.50", "cash", "100.00"]]),
    );
  });
});

describe("completion and the driver's cash ledger", () => {
  it("requires collected (422), records another amount as reported and flags it, owes the cash", async () => {
    const d = await collecting({ amount: 57.5, method: "cash", change_for: 100 });
    const without = await moveDelivery(company.driver, d.id, "complete");
    expect(without.status).toBe(422);
    expect(without.body.detail).toMatch(/collected is required/);
    const done = await moveDelivery(company.driver, d.id, "complete", { collected: { amount: 50, method: "cash" } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({
      status: "completed",
      collected: { amount: 50, method: "cash" },
      collect_mismatch: true,
    });
    const cash = await cashOf(company.driver.driverId);
    expect(cash).toMatchObject({ outstanding: 50, collected: 50, settled: 0 });
    expect(cash.entries[0]).toMatchObject({ kind: "collected", amount: 50, delivery_id: d.id });
  });

  it("card is recorded with its method, shown apart, and moves no cash", async () => {
    const d = await collecting({ amount: 30, method: "card" });
    const done = await moveDelivery(company.driver, d.id, "complete", { collected: { amount: 30, method: "card" } });
    expect(done.body).toMatchObject({ collected: { amount: 30, method: "card" }, collect_mismatch: false });
    expect(await cashOf(company.driver.driverId)).toMatchObject({ outstanding: 50, card_collected: 30 });
  });

  it("the driver reads their own cash, not another's (404); a legacy admin is 403", async () => {
    expect((await api(`/api/v1/drivers/${company.driver.driverId}/cash`, { token: company.driver.token })).status)
      .toBe(200);
    expect((await api(`/api/v1/drivers/${company.driver.driverId}/cash`, { token: company.driver2.token })).status)
      .toBe(404);
    expect((await api(`/api/v1/drivers/${company.driver.driverId}/cash`, { token: company.legacyAdmin.token })).status)
      .toBe(403);
    const stranger = await createCompany("Another at the door");
    expect((await api(`/api/v1/drivers/${company.driver.driverId}/cash`, { token: stranger.owner.token })).status)
      .toBe(404);
  });

  it("settles: 201, never above outstanding (422), once per Idempotency-Key", async () => {
    const key = randomUUID();
    const first = await settle(10, { "Idempotency-Key": key });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({ amount: 10, outstanding: 40, note: "envelope" });
    const again = await settle(10, { "Idempotency-Key": key });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await cashOf(company.driver.driverId)).outstanding).toBe(40);
    expect((await settle(40.01)).status).toBe(422);
    expect(
      (await api(`/api/v1/drivers/${company.driver.driverId}/cash-settlements`, {
        token: company.driver.token,
        body: { amount: 1 },
      })).status,
    ).toBe(403);
  });

  it("settlements sent at once never exceed what is outstanding together", async () => {
    // 40.00 outstanding; 12 requests of 7.00 at once: exactly 5 fit.
    const answers = await Promise.all(Array.from({ length: 12 }, () => settle(7)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 422)).toHaveLength(7);
    const cash = await cashOf(company.driver.driverId);
    expect(cash).toMatchObject({ outstanding: 5, collected: 50, settled: 45 });
    const sum = cash.entries.reduce((total: number, e: any) => total + Math.round(e.amount * 100), 0);
    expect(sum).toBe(500);
  });

  it("the day's summary has a line per driver, in JSON and in CSV", async () => {
    const json = await api("/api/v1/cash/summary", { token: company.admin.token });
    expect(json.status).toBe(200);
    const line = json.body.items.find((l: any) => l.driver_id === company.driver.driverId);
    expect(line).toMatchObject({
      collected: 50,
      card_collected: 30,
      settled: 45,
      outstanding: 5,
      deliveries: 2,
      mismatches: 1,
    });
    // The driver who collected nothing has its line too, of zeros: "owes nothing" is said, not left out.
    expect(json.body.items.find((l: any) => l.driver_id === company.driver2.driverId)).toMatchObject({
      collected: 0,
      card_collected: 0,
      settled: 0,
      outstanding: 0,
      deliveries: 0,
      mismatches: 0,
    });
    expect(json.body.items).toHaveLength(2);
    const csv = await api(`/api/v1/cash/summary?format=csv&date=${json.body.date}`, { token: company.owner.token });
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    const [header, ...rows] = (csv.body as string).trim().split("\n");
    expect(header).toBe("driver_id,name,collected,card_collected,settled,outstanding,deliveries,mismatches");
    expect(rows).toContain(`${company.driver.driverId},Driver driver,50,30,45,5,2,1`);
    expect(rows).toHaveLength(2);
    expect((await api("/api/v1/cash/summary", { token: company.driver.token })).status).toBe(403);
  });
});

describe("the handover code", () => {
  let coded: TestCompany;
  beforeAll(async () => {
    coded = await createCompany("Handover codes");
    const put = await api("/api/v1/companies/me/proof-requirements", {
      method: "PUT",
      token: coded.owner.token,
      body: { photo: false, signature: false, note: false, handover_code: true },
    });
    expect(put.body).toEqual({ photo: false, signature: false, note: false, handover_code: true });
  });

  async function started() {
    const created = await createInvoiceDelivery(coded, { driver_id: coded.driver.driverId });
    expect((await moveDelivery(coded.driver, created.id, "start")).status).toBe(200);
    const track = await api(`/api/v1/track/${created.tracking_token}`);
    expect(track.body.handover_code).toMatch(/^[0-9]{4}$/);
    return { id: created.id as string, code: track.body.handover_code as string };
  }

  it("is shown to the recipient, never in what a driver reads", async () => {
    const { id, code } = await started();
    const reads = [
      await api(`/api/v1/deliveries/${id}`, { token: coded.driver.token }),
      await api(`/api/v1/deliveries?limit=100`, { token: coded.driver.token }),
      await api(`/api/v1/deliveries/${id}`, { token: coded.owner.token }),
    ];
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(JSON.stringify(read.body)).not.toContain("handover");
    }
    // Through the REST stand-in as the driver (RLS and column grants): no table or view shows it.
    const rest = await api(`/rest/v1/deliveries?id=eq.${id}&select=*`, {
      token: coded.driver.token,
      headers: { apikey: stack().anonKey },
    });
    expect(JSON.stringify(rest.body)).not.toMatch(new RegExp(`handover|"${code}"`));
  });

  it("reaches the recipient in the messages (the WhatsApp template that carries it)", async () => {
    const phone = `+55 11 9${String(Math.floor(10_000_000 + Math.random() * 89_999_999))}`;
    const created = await createInvoiceDelivery(coded, { driver_id: coded.driver.driverId, recipient_phone: phone });
    expect((await moveDelivery(coded.driver, created.id, "start")).status).toBe(200);
    const code = (await api(`/api/v1/track/${created.tracking_token}`)).body.handover_code;
    const waId = phone.replace(/\D/g, "");
    const message = await waitFor(
      "the started message",
      async () =>
        (await whatsapp.state()).messages.find((m) => m.to === waId && m.template === "entrega_a_caminho_codigo") ??
          null,
      20_000,
    );
    expect(message.parameters[3]).toBe(code);
    expect(message.text).toContain(`Informe o código ${code} ao entregador`);
  });

  it("completes with the right code; without one or with a wrong one, 422", async () => {
    const { id, code } = await started();
    expect((await moveDelivery(coded.driver, id, "complete")).status).toBe(422);
    const wrong = code === "0000" ? "0001" : "0000";
    const res = await moveDelivery(coded.driver, id, "complete", { code: wrong });
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe("wrong handover code");
    const done = await moveDelivery(coded.driver, id, "complete", { code });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.status).toBe("completed");
  });

  it("locks after 5 wrong codes (423, even for the right one) until a manager's override with a reason", async () => {
    const { id, code } = await started();
    const wrong = code === "0000" ? "0001" : "0000";
    for (let i = 0; i < 5; i++) {
      expect((await moveDelivery(coded.driver, id, "complete", { code: wrong })).status).toBe(422);
    }
    expect((await moveDelivery(coded.driver, id, "complete", { code })).status).toBe(423);
    expect((await moveDelivery(coded.driver, id, "complete")).status).toBe(423);
    expect((await moveDelivery(coded.driver, id, "complete-override", { reason: "x" })).status).toBe(403);
    expect((await moveDelivery(coded.owner, id, "complete-override", {})).status).toBe(400);
    const override = await moveDelivery(coded.admin, id, "complete-override", { reason: "ID checked at the door" });
    expect(override.status, JSON.stringify(override.body)).toBe(200);
    expect(override.body.status).toBe("completed");
    const [credits] = await db()`select count(*)::int as n from public.wallet_entries where delivery_id = ${id}`;
    expect(credits.n).toBe(1);
  });

  it("a manager's override of a delivery that collects requires collected too, and owes the cash to the driver", async () => {
    const created = await createInvoiceDelivery(coded, {
      driver_id: coded.driver.driverId,
      collect: { amount: 44.44, method: "cash" },
    });
    expect((await moveDelivery(coded.driver, created.id, "start")).status).toBe(200);
    const without = await moveDelivery(coded.admin, created.id, "complete-override", { reason: "ID checked" });
    expect(without.status).toBe(422);
    expect(without.body.detail).toMatch(/collected is required/);
    const done = await moveDelivery(coded.admin, created.id, "complete-override", {
      reason: "ID checked",
      collected: { amount: 40, method: "cash" },
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({
      status: "completed",
      collected: { amount: 40, method: "cash" },
      collect_mismatch: true,
    });
    const entries = await db()`select driver_id, amount::text, created_by from public.cash_entries
                               where delivery_id = ${created.id}`;
    expect(entries).toEqual([{ driver_id: coded.driver.driverId, amount: "40.00", created_by: coded.admin.userId }]);
  });
});
