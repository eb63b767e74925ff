// The rest of a delivery's life over HTTP (issue 25): windows on creation (validated, not offered early, late),
// failed attempts and reopening, external ids and recipient e-mails, search and filters on the list, the
// reports' summary, and CSV in and out (the export equal to the list, the import row by row and repeatable,
// geocoding an end without coordinates as a create does).
import postgres from "postgres";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, configureGateway, createCompany, db, type Member, stack, type TestCompany } from "../../support/api.ts";
import {
  createInvoiceDelivery,
  createPixDelivery,
  deliveryBody,
  deliveryIn,
  moveDelivery,
} from "../../support/deliveries.ts";
import { gateway, geocoding, routing } from "../../support/fakes.ts";

let a: TestCompany;
let b: TestCompany;

beforeAll(async () => {
  [a, b] = await Promise.all([createCompany("Lifecycle A"), createCompany("Lifecycle B")]);
  await configureGateway(a);
});

afterEach(async () => {
  await gateway.reset();
  await routing.reset();
});

const inHours = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();
const get = (who: Member, path: string) => api(path, { token: who.token });
const list = async (who: Member, query: Record<string, string>) => {
  const res = await get(who, `/api/v1/deliveries?${new URLSearchParams({ limit: "100", ...query })}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items as { id: string; [key: string]: unknown }[];
};
const ids = (items: { id: string }[]) => items.map((d) => d.id);

describe("windows on POST /api/v1/deliveries", () => {
  it("refuses a window that has ended or ends before it starts, naming the field, and creates nothing", async () => {
    const before = await db()`select count(*)::int as n from public.deliveries where company_id = ${a.companyId}`;
    const ended = await createPixDelivery(a, { window_end: inHours(-1) });
    expect(ended.status).toBe(400);
    expect(ended.body.detail).toEqual([
      expect.objectContaining({ loc: ["body", "window_end"], msg: "must be in the future" }),
    ]);
    const backwards = await createPixDelivery(a, { window_start: inHours(3), window_end: inHours(2) });
    expect(backwards.status).toBe(400);
    expect(backwards.body.detail).toEqual([
      expect.objectContaining({ loc: ["body", "window_start"], msg: "must be before window_end" }),
    ]);
    const garbled = await createPixDelivery(a, { window_start: "tomorrow" });
    expect(garbled.status).toBe(400);
    expect(garbled.body.detail[0].loc).toEqual(["body", "window_start"]);
    const after = await db()`select count(*)::int as n from public.deliveries where company_id = ${a.companyId}`;
    expect(after[0].n).toBe(before[0].n);
    expect((await gateway.state()).payments).toHaveLength(0);
  });

  it("is not offered to drivers before an hour ahead of its window; managers see and may assign it", async () => {
    const start = inHours(3);
    const far = await createInvoiceDelivery(a, { window_start: start, window_end: inHours(5) });
    expect(far).toMatchObject({ status: "pending", window_start: expect.any(String), late: false, attempts: 1 });
    expect(Date.parse(far.window_start)).toBe(Date.parse(start));
    const near = await createInvoiceDelivery(a, { window_start: inHours(0.5), window_end: inHours(2) });

    const offered = ids(await list(a.driver, { status: "pending" }));
    expect(offered).toContain(near.id);
    expect(offered).not.toContain(far.id);
    expect((await get(a.driver, `/api/v1/deliveries/${far.id}`)).status).toBe(404);
    expect((await moveDelivery(a.driver, far.id, "accept")).status).toBe(404);
    expect(ids(await list(a.admin, { status: "pending" }))).toContain(far.id);

    // The hour arrives (the window moved instead of the clock): offered, then taken.
    await db()`update public.deliveries set window_start = now() + interval '30 minutes' where id = ${far.id}`;
    expect(ids(await list(a.driver2, { status: "pending" }))).toContain(far.id);
    expect((await moveDelivery(a.driver2, far.id, "accept")).status).toBe(200);

    const later = await createInvoiceDelivery(a, { window_start: inHours(24), window_end: inHours(26) });
    const assigned = await moveDelivery(a.owner, later.id, "assign", { driver_id: a.driver.driverId });
    expect(assigned.status).toBe(200);
    expect(assigned.body.status).toBe("accepted");
  });

  it("marks a delivery late once its window has ended undelivered, and the list filters by it", async () => {
    const late = await createInvoiceDelivery(a, { window_end: inHours(1) });
    const onTime = await createInvoiceDelivery(a, { window_end: inHours(1) });
    const done = await deliveryIn(a, "completed");
    await db()`update public.deliveries set window_end = now() - interval '5 minutes' where id in (${late.id}, ${done})`;
    expect((await get(a.owner, `/api/v1/deliveries/${late.id}`)).body.late).toBe(true);
    expect((await get(a.owner, `/api/v1/deliveries/${onTime.id}`)).body.late).toBe(false);
    expect((await get(a.owner, `/api/v1/deliveries/${done}`)).body.late).toBe(false);
    const lateOnes = ids(await list(a.owner, { late: "true" }));
    expect(lateOnes).toContain(late.id);
    expect(lateOnes).not.toContain(onTime.id);
    expect(lateOnes).not.toContain(done);
    expect(ids(await list(a.owner, { late: "false" }))).not.toContain(late.id);
    expect((await get(a.owner, "/api/v1/deliveries?late=yes")).status).toBe(400);
  });
});

describe("external_id and recipient_email", () => {
  it("answers 409 naming the existing delivery, before charging anyone", async () => {
    const first = await createPixDelivery(a, { external_id: "ORDER-77", recipient_email: "Ana@Example.com" });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ external_id: "ORDER-77", recipient_email: "ana@example.com" });
    const charges = (await gateway.state()).payments.length;
    const again = await createPixDelivery(a, { external_id: "ORDER-77" });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain(first.body.id);
    expect((await gateway.state()).payments).toHaveLength(charges);
    // Unique per company, not across companies.
    const elsewhere = await createInvoiceDelivery(b, { external_id: "ORDER-77" });
    expect(elsewhere.external_id).toBe("ORDER-77");
  });

  it("refuses an e-mail that is not one", async () => {
    const res = await createPixDelivery(a, { recipient_email: "not an e-mail" });
    expect(res.status).toBe(400);
    expect(res.body.detail[0].loc).toEqual(["body", "recipient_email"]);
  });
});

describe("fail and reopen", () => {
  it("the linked driver fails it with a reason (no credit); a manager reopens it for another attempt", async () => {
    const id = await deliveryIn(a, "in_progress");
    expect((await moveDelivery(a.driver, id, "fail", { reason: "lost" })).status).toBe(400);
    expect((await moveDelivery(a.driver2, id, "fail", { reason: "refused" })).status).toBe(404);
    expect((await moveDelivery(a.owner, id, "fail", { reason: "refused" })).status).toBe(403);
    const failed = await moveDelivery(a.driver, id, "fail", { reason: "recipient_absent", note: "Ninguém atendeu" });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({
      status: "failed",
      failure_reason: "recipient_absent",
      failure_note: "Ninguém atendeu",
      failed_at: expect.any(String),
      driver_id: a.driver.driverId,
    });
    const entries = await api("/api/v1/wallets/me/transactions?limit=100", { token: a.driver.token });
    expect(entries.body.items.filter((e: { delivery_id: string }) => e.delivery_id === id)).toEqual([]);
    expect((await moveDelivery(a.driver, id, "fail", { reason: "other" })).status).toBe(422);

    expect((await moveDelivery(a.driver, id, "reopen")).status).toBe(403);
    const reopened = await moveDelivery(a.legacyAdmin, id, "reopen");
    expect(reopened.status).toBe(200);
    expect(reopened.body).toMatchObject({
      status: "pending",
      attempts: 2,
      driver_id: null,
      failure_reason: "recipient_absent",
    });
    expect((await moveDelivery(a.owner, id, "reopen")).status).toBe(422);
    expect(ids(await list(a.driver2, { status: "pending" }))).toContain(id);
  });

  it("cancels a failed delivery", async () => {
    const id = await deliveryIn(a, "in_progress");
    expect((await moveDelivery(a.driver, id, "fail", { reason: "damaged" })).status).toBe(200);
    const cancelled = await moveDelivery(a.admin, id, "cancel", { reason: "caixa danificada" });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    expect((await moveDelivery(a.owner, id, "reopen")).status).toBe(422);
  });

  it("is 404 for another company", async () => {
    const id = await deliveryIn(a, "in_progress");
    expect((await moveDelivery(b.driver, id, "fail", { reason: "refused" })).status).toBe(404);
    expect((await moveDelivery(b.owner, id, "reopen")).status).toBe(404);
  });
});

describe("search and filters on GET /api/v1/deliveries", () => {
  it("finds a recipient typed without accents, in any case, and an address, a phone and an id prefix", async () => {
    const company = await createCompany("Lifecycle search");
    const jose = await createInvoiceDelivery(company, {
      recipient_name: "José Conceição",
      recipient_phone: "+55 11 98765-4321",
      destination_address: "Rua Três Irmãos, 45",
    });
    const other = await createInvoiceDelivery(company, {
      recipient_name: "Maria",
      destination_address: "Av. Brasil, 1",
    });
    for (const q of ["jose", "JOSE CONCEICAO", "tres irmaos", "(11) 98765-4321", jose.id.slice(0, 8)]) {
      expect(ids(await list(company.owner, { q })), q).toEqual([jose.id]);
    }
    expect(ids(await list(company.owner, { q: "brasil" }))).toEqual([other.id]);
    expect(await list(a.owner, { q: "jose conceicao" })).toEqual([]);
    const short = await get(company.owner, "/api/v1/deliveries?q=jo");
    expect(short.status).toBe(400);
    expect(short.body.detail[0].loc).toEqual(["query", "q"]);
  });

  it("takes from and to as days in São Paulo or as instants", async () => {
    const company = await createCompany("Lifecycle days");
    const old = await createInvoiceDelivery(company);
    const recent = await createInvoiceDelivery(company);
    // 23:30 in São Paulo on 2026-01-10 is 02:30 UTC on the 11th.
    await db()`update public.deliveries set created_at = '2026-01-10 23:30-03' where id = ${old.id}`;
    expect(ids(await list(company.owner, { from: "2026-01-10", to: "2026-01-10" }))).toEqual([old.id]);
    expect(await list(company.owner, { from: "2026-01-11", to: "2026-01-11" })).toEqual([]);
    expect(ids(await list(company.owner, { from: "2026-01-11T02:00:00Z", to: "2026-01-11T03:00:00Z" }))).toEqual([
      old.id,
    ]);
    expect(ids(await list(company.owner, { from: "2026-01-11" }))).toEqual([recent.id]);
    expect((await get(company.owner, "/api/v1/deliveries?from=10/01/2026")).status).toBe(400);
  });
});

describe("GET /api/v1/reports/summary", () => {
  it("counts what the list counts, day by day, for owners and admins only", async () => {
    const company = await createCompany("Lifecycle reports");
    await deliveryIn(company, "completed");
    await deliveryIn(company, "completed");
    await deliveryIn(company, "cancelled");
    const failed = await deliveryIn(company, "in_progress");
    await moveDelivery(company.driver, failed, "fail", { reason: "refused" });
    await deliveryIn(company, "pending");
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Sao_Paulo" }).format(new Date());
    const res = await get(company.admin, `/api/v1/reports/summary?from=${today}&to=${today}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const count = async (status?: string) =>
      (await list(company.owner, { from: today, to: today, ...(status ? { status } : {}) })).length;
    expect(res.body).toMatchObject({
      created: await count(),
      completed: await count("completed"),
      cancelled: await count("cancelled"),
      failed: await count("failed"),
    });
    expect([res.body.created, res.body.completed, res.body.cancelled, res.body.failed]).toEqual([5, 2, 1, 1]);
    const wallet = await api("/api/v1/wallets/me", { token: company.driver.token });
    expect(res.body.driver_earnings).toBe(wallet.body.balance);
    expect(res.body.revenue).toBeGreaterThan(res.body.driver_earnings);
    expect(res.body.on_time_rate).toBeNull();
    expect(res.body.avg_delivery_minutes).toBeGreaterThanOrEqual(0);
    expect(res.body.by_day).toEqual([
      { day: today, created: 5, completed: 2, cancelled: 1, failed: 1, revenue: res.body.revenue },
    ]);
    expect(Object.keys(res.body).sort()).toEqual([
      "avg_delivery_minutes",
      "by_day",
      "cancelled",
      "completed",
      "created",
      "driver_earnings",
      "failed",
      "on_time_rate",
      "revenue",
    ]);

    const month = await get(company.owner, "/api/v1/reports/summary");
    expect(month.status).toBe(200);
    expect(month.body.by_day).toHaveLength(30);
    expect(month.body.by_day.at(-1)).toMatchObject({ day: today, created: 5 });
    expect((await get(company.legacyAdmin, "/api/v1/reports/summary")).status).toBe(403);
    expect((await get(company.driver, "/api/v1/reports/summary")).status).toBe(403);
    const elsewhere = await createCompany("Lifecycle reports elsewhere");
    expect((await get(elsewhere.owner, `/api/v1/reports/summary?from=${today}&to=${today}`)).body.created).toBe(0);
    expect((await get(company.owner, "/api/v1/reports/summary?from=2026-02-01&to=2026-01-01")).status).toBe(400);
  });
});

describe("the reports' roll-up under concurrent writes", () => {
  it("lets a company's deliveries be created at once: neither waits for the other's commit", async () => {
    const company = await createCompany("Lifecycle roll-up at once");
    const insert = (sql: postgres.Sql | postgres.ReservedSql) =>
      sql`insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address,
            origin_lat, origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s,
            price, driver_share)
          values (${company.companyId}, 'pending', 'invoiced', 'invoice', 'Origin', -23.55, -46.63, 'Destination',
            -23.56, -46.64, 1500, 300, 12.50, 0.80)`;
    // Two backends whose writes land on different rows of the day (private.roll_up_slot: the process id mod 8).
    const sql = postgres(stack().dbUrl, { max: 10, onnotice: () => {} });
    const held: postgres.ReservedSql[] = [];
    try {
      const slotOf = async (c: postgres.ReservedSql) => (await c`select pg_backend_pid() % 8 as slot`)[0].slot;
      const first = await sql.reserve();
      held.push(first);
      let second = await sql.reserve();
      held.push(second);
      while (await slotOf(second) === await slotOf(first)) held.push(second = await sql.reserve());
      await first`begin`;
      await insert(first);
      // The first has not committed; before the roll-up was spread, the second queued on the day's row here.
      await second`set lock_timeout = '2s'`;
      await insert(second);
      await first`commit`;
    } finally {
      held.forEach((c) => c.release());
      await sql.end({ timeout: 1 });
    }
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Sao_Paulo" }).format(new Date());
    const res = await get(company.owner, `/api/v1/reports/summary?from=${today}&to=${today}`);
    expect(res.body).toMatchObject({ created: 2, by_day: [{ day: today, created: 2 }] });
  });
});

/** The CSV's rows as objects keyed by the header. */
function csvRows(text: string): Record<string, string>[] {
  // The export's values hold no newlines in these tests; commas inside quotes are handled.
  const lines = text.trimEnd().split("\n");
  const split = (line: string) =>
    [...line.matchAll(/("([^"]|"")*"|[^,]*)(,|$)/g)].slice(0, -1)
      .map((m) => m[1].startsWith('"') ? m[1].slice(1, -1).replaceAll('""', '"') : m[1]);
  const header = split(lines[0]);
  return lines.slice(1).map((line) => Object.fromEntries(split(line).map((cell, i) => [header[i], cell])));
}

const exportCsv = async (who: Member, query = "") => {
  const res = await fetch(`${stack().apiUrl}/api/v1/deliveries/export${query}`, {
    headers: { authorization: `Bearer ${who.token}` },
  });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
};

const importCsv = (who: Member, text: string, type = "text/csv") =>
  api("/api/v1/deliveries/import", {
    method: "POST",
    token: who.token,
    rawBody: text,
    headers: { "content-type": type },
  });

describe("GET /api/v1/deliveries/export", () => {
  it("streams the list's rows as CSV, filters included", async () => {
    const company = await createCompany("Lifecycle export");
    for (let i = 0; i < 3; i++) await createInvoiceDelivery(company, { recipient_name: `Cliente, "${i}"` });
    await deliveryIn(company, "completed");
    const all = await exportCsv(company.admin);
    expect(all.status).toBe(200);
    expect(all.type).toMatch(/^text\/csv/);
    const rows = csvRows(all.text);
    expect(rows.map((r) => r.id)).toEqual(ids(await list(company.owner, {})));
    expect(rows[1]).toMatchObject({ recipient_name: 'Cliente, "2"', status: "pending", attempts: "1", late: "false" });
    expect(Number(rows[0]["origin.lat"])).toBeCloseTo(-23.5505);

    const completed = csvRows((await exportCsv(company.owner, "?status=completed")).text);
    expect(completed.map((r) => r.id)).toEqual(ids(await list(company.owner, { status: "completed" })));
    expect(csvRows((await exportCsv(company.owner, "?q=cliente&status=pending")).text)).toHaveLength(3);
    expect((await exportCsv(company.driver)).status).toBe(403);
    expect((await exportCsv(company.owner, "?status=lost")).status).toBe(400);
  });
});

const HEADER = "external_id,origin_address,origin.lat,origin.lng,destination_address,destination.lat,destination.lng," +
  "recipient_name,recipient_phone,recipient_email,window_end";

describe("POST /api/v1/deliveries/import", () => {
  it("creates the valid rows, reports a bad one by its spreadsheet row, and creates nothing the second time", async () => {
    const company = await createCompany("Lifecycle import");
    const end = inHours(4);
    const file = [
      HEADER,
      `IMP-1,"Praça da Sé, 1",-23.5505,-46.6333,"Av. Paulista, 1000",-23.5614,-46.6559,João,11 98888-0001,,${end}`,
      `IMP-2,Rua A,-23.5505,-46.6333,Rua B,abc,-46.6559,Ana,,,`,
      "",
      `IMP-3,Rua C,"-23,5505","-46,6333",Rua D,-23.5614,-46.6559,Bia,,bia@example.com,`,
    ].join("\n");
    const first = await importCsv(company.owner, file);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({
      created: 2,
      skipped: 0,
      errors: [{
        row: 3,
        detail: expect.stringContaining("destination.lat"),
        // The cell named as a 400 names a field, so the panel says it in its language.
        items: [expect.objectContaining({ type: "type_error", loc: ["body", "destination", "lat"] })],
      }],
    });
    const created = await list(company.owner, {});
    expect(created.map((d) => d.external_id).sort()).toEqual(["IMP-1", "IMP-3"]);
    expect(created.find((d) => d.external_id === "IMP-1")).toMatchObject({
      payment_method: "invoice",
      status: "pending",
      recipient_name: "João",
      origin_address: "Praça da Sé, 1",
    });
    expect(created.find((d) => d.external_id === "IMP-3")).toMatchObject({
      origin: { lat: -23.5505, lng: -46.6333 },
      recipient_email: "bia@example.com",
    });

    const again = await importCsv(company.admin, file);
    expect(again.body).toEqual({
      created: 0,
      skipped: 2,
      errors: [{ row: 3, detail: expect.any(String), items: expect.any(Array) }],
    });
    expect(await list(company.owner, {})).toHaveLength(2);
  });

  it("takes a row's size and drop-off time (routes), the defaults where the cells are empty", async () => {
    const company = await createCompany("Lifecycle import loads");
    const res = await importCsv(
      company.owner,
      "external_id,origin_address,origin.lat,origin.lng,destination_address,destination.lat,destination.lng,size," +
        "service_s\n" +
        "L-1,A,-23.55,-46.63,B,-23.56,-46.64,3,300\n" +
        "L-2,A,-23.55,-46.63,C,-23.57,-46.64,,\n" +
        "L-3,A,-23.55,-46.63,D,-23.58,-46.64,0,\n",
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ created: 2, errors: [{ row: 4, detail: expect.stringContaining("size") }] });
    const created = await list(company.owner, {});
    expect(created.find((d) => d.external_id === "L-1")).toMatchObject({ size: 3, service_s: 300 });
    expect(created.find((d) => d.external_id === "L-2")).toMatchObject({ size: 1, service_s: 120 });
  });

  it("refuses Pix rows, unknown columns, other media types and more than 5,000 rows", async () => {
    const company = await createCompany("Lifecycle import refusals");
    const pix = await importCsv(
      company.owner,
      "origin_address,origin.lat,origin.lng,destination_address,destination.lat,destination.lng,payment_method\n" +
        "A,-23.55,-46.63,B,-23.56,-46.64,pix\n",
    );
    expect(pix.body).toEqual({
      created: 0,
      skipped: 0,
      errors: [{
        row: 2,
        detail: expect.stringContaining("Pix"),
        items: [expect.objectContaining({ type: "pix_not_imported", loc: ["body", "payment_method"] })],
      }],
    });
    const unknown = await importCsv(company.owner, "origin_address,destination_address,colour\nA,B,red\n");
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toEqual([
      { type: "csv_unknown_columns", loc: ["body"], msg: expect.stringContaining("colour"), input: ["colour"] },
    ]);
    expect((await importCsv(company.owner, "origin_address\nA\n", "application/json")).status).toBe(415);
    const many = [HEADER, ...Array.from({ length: 5001 }, (_, i) => `X-${i},A,-23.55,-46.63,B,-23.56,-46.64,,,,`)];
    const tooMany = await importCsv(company.owner, many.join("\n"));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.detail[0]).toMatchObject({ type: "csv_too_many_rows", input: 5001 });
    expect(tooMany.body.detail[0].msg).toContain("at most 5000");
    expect((await importCsv(company.driver, "origin_address\nA\n")).status).toBe(403);
    expect(await list(company.owner, {})).toEqual([]);
  });

  it("geocodes an end without coordinates as a create does: a row found nowhere is refused, geocoding down is 502", async () => {
    const company = await createCompany("Lifecycle import geocoding");
    await geocoding.reset();
    // The services' answers are kept a day (functions/api/address-lookups.ts): none from an earlier test.
    await db()`delete from private.address_lookups`;
    const file = [
      "external_id,origin_address,destination_address,destination.lat,destination.lng",
      `G-1,"Praça da Sé, São Paulo","Avenida Paulista, 1578",,`,
      `G-2,"Praça da Sé, São Paulo","Rua Que Não Existe, 10",,`,
      `G-3,Lugar Nenhum,"Avenida Paulista, 1578",-23.56,-46.65`,
    ].join("\n");
    const res = await importCsv(company.owner, file);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const notFound = "No place was found for this address: correct it, or send its coordinates";
    expect(res.body).toEqual({
      created: 1,
      skipped: 0,
      errors: [
        {
          row: 3,
          detail: `destination_address: ${notFound}`,
          items: [expect.objectContaining({ type: "address_not_found" })],
        },
        {
          row: 4,
          detail: `origin_address: ${notFound}`,
          items: [expect.objectContaining({ type: "address_not_found" })],
        },
      ],
    });
    expect(await list(company.owner, {})).toEqual([
      expect.objectContaining({
        external_id: "G-1",
        origin: { lat: -23.5503, lng: -46.6339 },
        destination: { lat: -23.5614, lng: -46.6559 },
      }),
    ]);
    // Only the ends sent without coordinates were looked up (G-3's destination was given), each address once.
    expect((await geocoding.state()).queries.sort()).toEqual([
      "Avenida Paulista, 1578",
      "Lugar Nenhum",
      "Praça da Sé, São Paulo",
      "Rua Que Não Existe, 10",
    ]);

    await db()`delete from private.address_lookups`;
    await geocoding.down();
    try {
      const down = await importCsv(company.owner, file.replaceAll("G-", "H-"));
      expect(down).toMatchObject({ status: 502, body: { detail: "Geocoding service unavailable: unreachable" } });
    } finally {
      await geocoding.reset();
    }
    expect(await list(company.owner, {})).toHaveLength(1);
  });

  it("is 502 and creates nothing when the routing service is down", async () => {
    const company = await createCompany("Lifecycle import routing");
    await routing.down();
    const res = await importCsv(company.owner, [HEADER, "R-1,A,-23.55,-46.63,B,-23.56,-46.64,,,,"].join("\n"));
    expect(res.status).toBe(502);
    await routing.up();
    expect(await list(company.owner, {})).toEqual([]);
  });
});

it("keeps deliveryBody's defaults creating a Pix delivery without the new fields", async () => {
  const res = await createPixDelivery(a, {});
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ window_start: null, window_end: null, late: false, external_id: null, attempts: 1 });
  expect(deliveryBody().customer).toBeDefined();
});
