// What the apps see live (issue 6), through the real supabase-js client and
// private channels: the driver app on driver:{driver_id}, the company panel on
// company:{company_id}, driven by real API calls and signed webhooks.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, configureGateway, createCompany, type DriverMember, type TestCompany } from "../../support/api.ts";
import { companyWebhook, webhook } from "../../support/webhooks.ts";
import { gateway } from "../../support/fakes.ts";
import { createInvoiceDelivery, moveDelivery } from "../../support/deliveries.ts";
import { listen, type Listener, until } from "../../support/realtime.ts";
import { supabaseClient } from "../../support/supabase.ts";

afterEach(async () => {
  await gateway.reset();
});

const events = (listener: Listener, name: string) => listener.inbox.filter((m) => m.event === name);

let company: TestCompany;
let outsider: TestCompany;
let secret: string;

beforeAll(async () => {
  [company, outsider] = await Promise.all([createCompany("Live Co"), createCompany("Outsider Co")]);
  ({ webhookSecret: secret } = await configureGateway(company));
});

/** An invoice delivery given to `driver` at once, carried to completion; returns every API answer. */
async function deliverWith(driver: DriverMember) {
  const created = await createInvoiceDelivery(company, { driver_id: driver.driverId }, company.admin);
  const started = await moveDelivery(driver, created.id, "start");
  const completed = await moveDelivery(driver, created.id, "complete");
  expect([started.status, completed.status]).toEqual([200, 200]);
  return { created, started: started.body, completed: completed.body };
}

describe("the driver app on driver:{driver_id}", () => {
  it("receives delivery_updated as its delivery moves, and withdrawal_updated when TRANSFER_DONE lands", async () => {
    const driverApp = await listen(`driver:${company.driver.driverId}`, company.driver.token);
    expect(driverApp.status).toBe("SUBSCRIBED");

    const { created, started, completed } = await deliverWith(company.driver);
    await until(() => events(driverApp, "delivery_updated").some((m) => m.payload.status === "completed"));
    const moves = events(driverApp, "delivery_updated").map((m) => m.payload);
    // The admin's answer carries the tracking link, which drivers never get.
    expect(moves).toEqual([{ ...created, tracking_token: null, tracking_url: null }, started, completed]);

    const withdrawal = await api("/api/v1/withdrawals", {
      token: company.driver.token,
      body: { amount: 1, pix_key: "12345678909", pix_key_type: "cpf" },
    });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(201);
    // The gateway made the transfer; its record says so before its event arrives.
    await gateway.setStatus(withdrawal.body.gateway_transfer_id, "DONE");
    const done = await webhook(companyWebhook(company), {
      event: "TRANSFER_DONE",
      transfer: {
        id: withdrawal.body.gateway_transfer_id,
        status: "DONE",
        value: 1,
        externalReference: withdrawal.body.id,
        confirmedDate: "2026-11-21",
      },
    }, secret);
    expect(done.status).toBe(200);
    await until(() => events(driverApp, "withdrawal_updated").some((m) => m.payload.status === "completed"));
    const completedWithdrawal = events(driverApp, "withdrawal_updated").find((m) => m.payload.status === "completed");
    expect(completedWithdrawal?.payload).toMatchObject({ id: withdrawal.body.id, completed_at: expect.any(String) });
  });

  it("keeps receiving after a token refresh on the socket", async () => {
    const client = supabaseClient();
    const { data } = await client.auth.signInWithPassword({
      email: company.driver.email,
      password: company.driver.password,
    });
    const driverApp = await listen(`driver:${company.driver.driverId}`, data.session!.access_token, { client });
    expect(driverApp.status).toBe("SUBSCRIBED");

    await new Promise((r) => setTimeout(r, 1_100)); // a new token differs from the old one only by its iat
    const refreshed = await client.auth.refreshSession({ refresh_token: data.session!.refresh_token });
    expect(refreshed.error).toBeNull();
    expect(refreshed.data.session!.access_token).not.toBe(data.session!.access_token);
    await client.realtime.setAuth(refreshed.data.session!.access_token);

    const { completed } = await deliverWith(company.driver);
    await until(() =>
      events(driverApp, "delivery_updated").some((m) =>
        m.payload.id === completed.id && m.payload.status === "completed"
      )
    );
    expect(events(driverApp, "delivery_updated").map((m) => m.payload)).toContainEqual(completed);
  });

  it("refuses another driver and another company's user, who receive nothing", async () => {
    const otherDriver = await listen(`driver:${company.driver.driverId}`, company.driver2.token);
    const foreignOwner = await listen(`driver:${company.driver.driverId}`, outsider.owner.token);
    expect([otherDriver.status, foreignOwner.status]).toEqual(["CHANNEL_ERROR", "CHANNEL_ERROR"]);
    const witness = await listen(`driver:${company.driver.driverId}`, company.driver.token);

    await deliverWith(company.driver);
    await until(() => events(witness, "delivery_updated").length >= 3);
    expect(events(witness, "delivery_updated").map((m) => m.payload.status)).toEqual([
      "accepted",
      "in_progress",
      "completed",
    ]);
    expect(otherDriver.inbox).toEqual([]);
    expect(foreignOwner.inbox).toEqual([]);
  });
});

describe("the company panel on company:{company_id}", () => {
  it("receives delivery_updated and driver_location; another company's admin is refused and receives nothing", async () => {
    const panel = await listen(`company:${company.companyId}`, company.admin.token);
    const foreignAdmin = await listen(`company:${company.companyId}`, outsider.admin.token);
    expect([panel.status, foreignAdmin.status]).toEqual(["SUBSCRIBED", "CHANNEL_ERROR"]);

    const { created, completed } = await deliverWith(company.driver2);
    const position = await api("/api/v1/locations/me", {
      method: "PUT",
      token: company.driver2.token,
      body: { lat: -23.56, lng: -46.65 },
    });
    expect(position.status).toBe(200);

    await until(() =>
      events(panel, "driver_location").length >= 1 &&
      events(panel, "delivery_updated").some((m) => m.payload.id === created.id && m.payload.status === "completed")
    );
    // The driver's answer, plus the tracking link the company's managers get.
    expect(events(panel, "delivery_updated").map((m) => m.payload)).toContainEqual({
      ...completed,
      tracking_token: created.tracking_token,
      tracking_url: created.tracking_url,
    });
    // Realtime gives the message its id, in a payload that has none of its own (realtime.send).
    expect(events(panel, "driver_location").map((m) => m.payload)).toContainEqual({
      ...position.body,
      id: expect.any(String),
    });
    expect(foreignAdmin.inbox).toEqual([]);
  });
});
