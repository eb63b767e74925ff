// The reconciliation job (docs/state-machines.md, Withdrawals and Payment): asks
// the gateway about what only the gateway can tell, and settles it by what the
// gateway reports. Withdrawals: every processing withdrawal
// public.withdrawals_to_reconcile lists; one without a transfer id is searched
// among the company's transfers by its externalReference (or the description
// we gave the transfer); only when the gateway has none long after our request
// are its funds released (failed, no_transfer). Payments: every Pix delivery
// public.payments_to_reconcile lists (still awaiting payment 10 minutes after
// its charge), whose payment's status at the gateway is applied as its event
// would be. Scheduled by pg_cron every 5 minutes (supabase/schemas/10_jobs.sql),
// which POSTs to /reconcile with the service role key.
import { asService, rpc } from "../_shared/db.ts";
import { HttpError } from "../_shared/errors.ts";
import { companyGateway, type GatewayClient, type GatewayObject } from "../_shared/gateway.ts";
import { describedId } from "./events.ts";
import { applyStatus, fetchObject } from "./settle.ts";

/** How long after our request a transfer the gateway does not list is taken as never made. */
export const NO_TRANSFER_AFTER_MS = 15 * 60_000;
/** How many pages of the company's transfers are searched for one withdrawal. */
const MAX_PAGES = 20;

interface Unsettled {
  id: string;
  company_id: string;
  gateway_transfer_id: string | null;
  in_doubt: boolean;
  created_at: Date;
}

export interface Report {
  checked: number;
  settled: number;
  released: number;
  pending: number;
  errors: number;
}

/** What one pass did: to withdrawals, and to the payments of deliveries awaiting them. */
export interface Reconciliation {
  withdrawals: Report;
  payments: Omit<Report, "released">;
}

interface AwaitingPayment {
  id: string;
  company_id: string;
  gateway_payment_id: string;
}

/** How many payments are checked with the gateway at once. */
const PAYMENT_CONCURRENCY = 4;

/** The day before `created` (UTC), so that a transfer dated in another time zone is not missed. */
function searchFrom(created: Date): string {
  return new Date(created.getTime() - 86_400_000).toISOString().slice(0, 10);
}

async function findTransfer(client: GatewayClient, withdrawal: Unsettled): Promise<GatewayObject | null> {
  const from = searchFrom(withdrawal.created_at);
  for (let page = 0, offset = 0; page < MAX_PAGES; page++) {
    const list = await client.listTransfers(from, offset);
    const found = list.data.find((transfer) =>
      transfer.externalReference === withdrawal.id || describedId(transfer.description) === withdrawal.id
    );
    if (found) return found;
    if (!list.hasMore || list.data.length === 0) return null;
    offset += list.data.length;
  }
  throw new HttpError(503, "too many transfers to search; will try again");
}

async function reconcileOne(withdrawal: Unsettled, report: Report): Promise<void> {
  const gateway = await companyGateway(withdrawal.company_id);
  if (!gateway) throw new Error("the company has no gateway configuration");
  const ours = { id: withdrawal.id, company_id: withdrawal.company_id, gateway_id: withdrawal.gateway_transfer_id };
  const transfer = withdrawal.gateway_transfer_id
    ? await fetchObject(gateway.client, "transfer", withdrawal.gateway_transfer_id)
    : await findTransfer(gateway.client, withdrawal);
  if (transfer) {
    const outcome = await applyStatus(null, ours, "transfer", transfer, "reconciliation, ");
    if (outcome.result === "processed") report.settled++;
    else report.pending++;
    log(withdrawal, outcome.result, outcome.detail);
    return;
  }
  if (withdrawal.gateway_transfer_id || Date.now() - withdrawal.created_at.getTime() < NO_TRANSFER_AFTER_MS) {
    report.pending++;
    return;
  }
  await asService((tx) =>
    rpc(tx, "fail_withdrawal", {
      withdrawal_id: withdrawal.id,
      error_message: "No transfer was made: the gateway has none for this withdrawal",
      failure_kind: "no_transfer",
    })
  );
  report.released++;
  log(withdrawal, "processed", "no transfer at the gateway: failed, funds released");
}

function log(withdrawal: Unsettled, result: string, detail: string) {
  console.log(JSON.stringify({
    event: "withdrawal_reconciled",
    withdrawal_id: withdrawal.id,
    company_id: withdrawal.company_id,
    result,
    detail,
  }));
}

/** One pass over withdrawals and payments. */
export async function reconcile(): Promise<Reconciliation> {
  return { withdrawals: await reconcileWithdrawals(), payments: await reconcilePayments() };
}

/** One pass over every unsettled withdrawal; a failure with one never stops the others. */
async function reconcileWithdrawals(): Promise<Report> {
  const rows = await asService((tx) =>
    tx<Unsettled[]>`select id, company_id, gateway_transfer_id, in_doubt, created_at
                    from public.withdrawals_to_reconcile(500)`
  );
  const report: Report = { checked: rows.length, settled: 0, released: 0, pending: 0, errors: 0 };
  for (const withdrawal of rows) {
    try {
      await reconcileOne(withdrawal, report);
    } catch (error) {
      report.errors++;
      log(withdrawal, "error", error instanceof HttpError ? String(error.detail) : String(error));
    }
  }
  return report;
}

/** The gateway's word on the payment of one delivery still awaiting it, applied as its event would be. */
async function reconcilePayment(delivery: AwaitingPayment, report: Reconciliation["payments"]): Promise<void> {
  const gateway = await companyGateway(delivery.company_id);
  if (!gateway) throw new Error("the company has no gateway configuration");
  const payment = await fetchObject(gateway.client, "payment", delivery.gateway_payment_id);
  if (!payment) {
    report.pending++;
    logPayment(delivery, "ignored", `the gateway has no payment ${delivery.gateway_payment_id}`);
    return;
  }
  const ours = { id: delivery.id, company_id: delivery.company_id, gateway_id: delivery.gateway_payment_id };
  const outcome = await applyStatus(null, ours, "payment", payment, "reconciliation, ");
  if (outcome.result === "processed") report.settled++;
  else report.pending++;
  logPayment(delivery, outcome.result, outcome.detail);
}

function logPayment(delivery: AwaitingPayment, result: string, detail: string) {
  console.log(JSON.stringify({
    event: "payment_reconciled",
    delivery_id: delivery.id,
    company_id: delivery.company_id,
    result,
    detail,
  }));
}

/** One pass over the deliveries awaiting payment, a few at a time; a failure with one never stops the others. */
async function reconcilePayments(): Promise<Reconciliation["payments"]> {
  const rows = await asService((tx) =>
    tx<AwaitingPayment[]>`select id, company_id, gateway_payment_id from public.payments_to_reconcile(500)`
  );
  const report = { checked: rows.length, settled: 0, pending: 0, errors: 0 };
  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const delivery = rows[next++];
      try {
        await reconcilePayment(delivery, report);
      } catch (error) {
        report.errors++;
        logPayment(delivery, "error", error instanceof HttpError ? String(error.detail) : String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PAYMENT_CONCURRENCY, rows.length) }, worker));
  return report;
}
