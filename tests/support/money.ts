// Money helpers shared by the wallet, withdrawal and webhook tests.
import { expect } from "vitest";
import { api, db, type DriverMember, type TestCompany } from "./api.ts";
import { companyWebhook, webhook } from "./webhooks.ts";
import { gateway } from "./fakes.ts";

/** Credits a driver as a completed delivery would: a delivery row and its ledger entry. Returns the delivery id. */
export async function creditDriver(companyId: string, driver: DriverMember, amount: string): Promise<string> {
  const [row] = await db()`
    with delivery as (
      insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
        origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share,
        driver_id, accepted_at, started_at, completed_at)
      values (${companyId}, 'completed', 'invoiced', 'invoice', 'Origin', 0, 0, 'Destination', 0, 0, 1000, 100,
        ${amount}, 1, ${driver.driverId}, now(), now(), now())
      returning id, company_id, driver_id
    )
    insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
    select company_id, driver_id, 'delivery_credit', ${amount}, id from delivery
    returning delivery_id`;
  return row.delivery_id;
}

export const walletOf = async (driver: DriverMember) => (await api("/api/v1/wallets/me", { token: driver.token })).body;

export const requestWithdrawal = (
  driver: DriverMember,
  amount: number,
  pixKey = "12345678909",
  pixKeyType = "cpf",
  headers: Record<string, string> = {},
) =>
  api("/api/v1/withdrawals", {
    token: driver.token,
    body: { amount, pix_key: pixKey, pix_key_type: pixKeyType },
    headers,
  });

/** The status the gateway's record of a transfer shows once the event happened (DONE, FAILED, CANCELLED). */
export const transferStatusOf = (event: string) =>
  event === "TRANSFER_DONE" || event === "TRANSFER_APPROVED" ? "DONE" : event.replace("TRANSFER_", "");

/** A signed TRANSFER_* event for one of the company's transfers, in the gateway's payload form. */
export function transferEvent(
  company: TestCompany,
  secret: string,
  event: string,
  transferId: string | null,
  reference: string,
) {
  const status = transferStatusOf(event);
  return webhook(companyWebhook(company), {
    event,
    transfer: {
      object: "transfer",
      id: transferId,
      value: 10,
      status,
      description: `Withdrawal ${reference}`,
      dateCreated: "2026-11-21",
      externalReference: reference,
      ...(status === "DONE" ? { confirmedDate: "2026-11-21" } : { failReason: "Recusada pelo banco" }),
    },
  }, secret);
}

/**
 * What the gateway does when a transfer settles: its record moves to the event's status, then it sends the
 * signed event (the service applies what the gateway's record shows, never the event alone).
 */
export async function gatewayTransferEvent(
  company: TestCompany,
  secret: string,
  event: string,
  transferId: string,
  reference: string,
) {
  await gateway.setStatus(transferId, transferStatusOf(event));
  return transferEvent(company, secret, event, transferId, reference);
}

/**
 * Forgets that an unsigned request made us ask the gateway about these objects ("transfer:<id>",
 * "payment:<id>"), so the next unsigned request about them is not held to the once-a-minute limit.
 */
export async function forgetGatewayLookups(...objectKeys: string[]): Promise<void> {
  await db()`delete from private.gateway_lookups where object_key = any(${objectKeys}::text[])`;
}

/** A processing withdrawal of `driver`, with its transfer at the gateway (PENDING there). */
export async function processingWithdrawal(
  driver: DriverMember,
  amount = 10,
): Promise<{ id: string; transferId: string }> {
  const res = await requestWithdrawal(driver, amount);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id, transferId: res.body.gateway_transfer_id };
}

/** How many times the withdrawal was debited from the wallet. */
export async function debitsOf(withdrawalId: string): Promise<number> {
  const [row] = await db()`select count(*)::int as n from public.wallet_entries
                           where withdrawal_id = ${withdrawalId} and kind = 'withdrawal_debit'`;
  return row.n;
}
