// The reconciliation job (docs/state-machines.md, Withdrawals): for every
// processing withdrawal whose state only the gateway can tell
// (public.withdrawals_to_reconcile), ask the gateway and settle it by what the
// gateway reports. A withdrawal without a transfer id is searched among the
// company's transfers by its externalReference (or the description we gave the
// transfer); only when the gateway has none long after our request are its
// funds released (failed, no_transfer). Scheduled by pg_cron every 5 minutes
// (supabase/schemas/10_jobs.sql), which POSTs to /reconcile with
// the service role key.
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

/** One pass over every unsettled withdrawal; a failure with one never stops the others. */
export async function reconcileWithdrawals(): Promise<Report> {
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
