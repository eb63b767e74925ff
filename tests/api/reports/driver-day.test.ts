// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// A driver's day and the per-driver report over HTTP (docs/contract.md, Reports; issue 33): a driver with a
// completed delivery that collected cash, a failed one and a returned one; the day's figures and deliveries, who may
// read them (the managers, the driver for themself; another driver and another company 404), and the report in
// JSON and as CSV in both dialects, parsed back, with a formula-looking name escaped.
import { parse } from "csv-parse/sync";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, db, stack, type TestCompany } from "../../support/api.ts";
import { createInvoiceDelivery, deliveryIn, moveDelivery } from "../../support/deliveries.ts";

let a: TestCompany;
let b: TestCompany;
const ids: Record<string, string> = {};
let credits = 0;
const today = () =>
  new Intl.DateTimeFormat("en-CA", {
    timeZone: "America/Sao_Paulo",
    dateStyle: "short",
  }).format(new Date());

beforeAll(async () => {
  a = await createCompany("Driver's day");
  b = await createCompany("Another company");
  const completed = await createInvoiceDelivery(a, {
    collect: { amount: 57.5, method: "cash" },
    driver_id: a.driver.driverId,
  });
  expect((await moveDelivery(a.driver, completed.id, "start")).status).toBe(
    200,
  );
  const done = await moveDelivery(a.driver, completed.id, "complete", {
    collected: { amount: 57.5, method: "cash" },
  });
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  ids.completed = completed.id;
  ids.failed = await deliveryIn(a, "in_progress");
  expect(
    (await moveDelivery(a.driver, ids.failed, "fail", {
      reason: "recipient_absent",
    })).status,
  ).toBe(200);
  ids.returned = await deliveryIn(a, "in_progress");
  expect(
    (await moveDelivery(a.owner, ids.returned, "recall", {
      reason: "Pedido desistido",
    })).status,
  ).toBe(200);
  expect((await moveDelivery(a.driver, ids.returned, "return")).status).toBe(
    200,
  );
  const [row] = await db()`select coalesce(sum(amount), 0)::text as sum from public.wallet_entries
    where driver_id = ${a.driver.driverId} and kind = 'delivery_credit'`;
  credits = Number(row.sum);
});

describe("GET /api/v1/drivers/{id}/day", () => {
  it("gives the day's outcomes, earnings with the returned delivery's credit, cash, and its deliveries", async () => {
    const res = await api(
      `/api/v1/drivers/${a.driver.driverId}/day?date=${today()}`,
      { token: a.owner.token },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      date: today(),
      driver_id: a.driver.driverId,
      completed: 1,
      failed: 1,
      returned: 1,
      cash_collected: 57.5,
      earnings: credits,
    });
    expect(credits).toBeGreaterThan(0);
    expect(res.body.online_minutes).toBeGreaterThanOrEqual(0);
    expect(res.body.distance_m).toBeGreaterThanOrEqual(0);
    expect(res.body.deliveries.map((d: any) => d.id).sort()).toEqual(
      [ids.completed, ids.failed, ids.returned].sort(),
    );
    expect(res.body.deliveries.find((d: any) => d.id === ids.returned).status)
      .toBe("returned");
  });

  it("defaults to today, and a day without work is all zeros", async () => {
    const res = await api(`/api/v1/drivers/${a.driver.driverId}/day`, {
      token: a.admin.token,
    });
    expect(res.status).toBe(200);
    expect(res.body.date).toBe(today());
    const before = await api(
      `/api/v1/drivers/${a.driver.driverId}/day?date=2020-01-01`,
      { token: a.owner.token },
    );
    expect(before.body).toMatchObject({
      completed: 0,
      failed: 0,
      returned: 0,
      earnings: 0,
      cash_collected: 0,
    });
    expect(before.body.deliveries).toEqual([]);
  });

  it("is the driver's own to read; another driver and another company get 404", async () => {
    const path = `/api/v1/drivers/${a.driver.driverId}/day`;
    const own = await api(path, { token: a.driver.token });
    expect(own.status).toBe(200);
    expect(own.body.completed).toBe(1);
    expect((await api(path, { token: a.driver2.token })).status).toBe(404);
    expect((await api(path, { token: b.owner.token })).status).toBe(404);
    expect((await api(path, { token: b.driver.token })).status).toBe(404);
    expect((await api(path, { token: a.legacyAdmin.token })).status).toBe(403);
    expect(
      (await api(`${path}?date=29/11/2026`, { token: a.owner.token })).status,
    ).toBe(400);
  });
});

describe("GET /api/v1/reports/drivers", () => {
  const path = () => `/api/v1/reports/drivers?from=${today()}&to=${today()}`;

  it("has one line per driver, earnings including the returned delivery's credit", async () => {
    const res = await api(path(), { token: a.owner.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ from: today(), to: today() });
    expect(res.body.items).toHaveLength(2);
    expect(res.body.items.find((l: any) => l.driver_id === a.driver.driverId))
      .toMatchObject({
        completed: 1,
        failed: 1,
        on_time_rate: null,
        earnings: credits,
      });
    expect(res.body.items.find((l: any) => l.driver_id === a.driver2.driverId))
      .toMatchObject({
        completed: 0,
        failed: 0,
        avg_delivery_minutes: null,
        earnings: 0,
      });
  });

  it("is the owner's and the admins': a driver gets 403, another company reads its own drivers", async () => {
    expect((await api(path(), { token: a.admin.token })).status).toBe(200);
    expect((await api(path(), { token: a.driver.token })).status).toBe(403);
    const foreign = await api(path(), { token: b.owner.token });
    expect(foreign.body.items.map((l: any) => l.driver_id).sort()).toEqual(
      [b.driver.driverId, b.driver2.driverId].sort(),
    );
    expect(
      (await api(`/api/v1/reports/drivers?from=${today()}&to=2020-01-01`, {
        token: a.owner.token,
      })).status,
    )
      .toBe(400);
  });

  it("is also CSV, in both dialects, parsed back to the same values with formula names escaped", async () => {
    await db()`update public.drivers set name = '=HYPERLINK("http://x")' where id = ${a.driver2.driverId}`;
    const json = (await api(path(), { token: a.owner.token })).body;
    const csv = await api(`${path()}&format=csv`, { token: a.owner.token });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    const rows = parse(csv.body as string, { columns: true }) as Record<
      string,
      string
    >[];
    expect(rows).toHaveLength(2);
    const line = json.items.find((l: any) => l.driver_id === a.driver.driverId);
    expect(rows.find((r) => r.driver_id === a.driver.driverId)).toEqual({
      driver_id: line.driver_id,
      name: line.name,
      completed: "1",
      failed: "1",
      on_time_rate: "",
      avg_delivery_minutes: String(line.avg_delivery_minutes),
      earnings: String(credits),
    });
    expect(rows.find((r) => r.driver_id === a.driver2.driverId)?.name).toBe(
      `'=HYPERLINK("http://x")`,
    );

    // The raw bytes, so that the byte order mark is seen (Response.text() drops it).
    const br = await fetch(
      `${stack().apiUrl}${path()}&format=csv&dialect=excel-br`,
      {
        headers: { authorization: `Bearer ${a.owner.token}` },
      },
    );
    expect(br.status).toBe(200);
    const bytes = new Uint8Array(await br.arrayBuffer());
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const brRows = parse(new TextDecoder().decode(bytes), {
      bom: true,
      columns: true,
      delimiter: ";",
    }) as Record<string, string>[];
    const brLine = brRows.find((r) => r.driver_id === a.driver.driverId)!;
    expect(Number(brLine.earnings.replace(",", "."))).toBe(credits);
    expect(Number(brLine.avg_delivery_minutes.replace(",", "."))).toBe(
      line.avg_delivery_minutes,
    );
    expect(brRows.find((r) => r.driver_id === a.driver2.driverId)?.name).toBe(
      `'=HYPERLINK("http://x")`,
    );
  });
});
