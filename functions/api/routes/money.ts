// The driver's wallet and withdrawals (docs/contract.md, Wallets and withdrawals).
import { z } from "zod";
import { asService } from "../../_shared/db.ts";
import { HttpError } from "../../_shared/errors.ts";
import { companyGateway, type GatewayObject } from "../../_shared/gateway.ts";
import { rpc } from "../../_shared/db.ts";
import { toHttpError } from "../../_shared/errors.ts";
import { defineRoute } from "../../_shared/route.ts";
import { normalizePixKey, PIX_KEYS, PixKeyType } from "../brazil.ts";
import { IdParams, pageOf, PageQuery, PositiveMoney, Text, Timestamp } from "../schemas.ts";

const Wallet = z.object({
  driver_id: z.uuid(),
  balance: z.number(),
  available_balance: z.number(),
  currency: z.literal("BRL"),
}).meta({ id: "Wallet" });

const WalletEntry = z.object({
  id: z.uuid(),
  kind: z.enum(["delivery_credit", "credit_reversal", "withdrawal_debit"]),
  amount: z.number().describe("Signed: credits positive, reversals and debits negative."),
  delivery_id: z.uuid().nullable(),
  withdrawal_id: z.uuid().nullable(),
  created_at: Timestamp,
}).meta({ id: "WalletEntry" });

const Withdrawal = z.object({
  id: z.uuid(),
  company_id: z.uuid(),
  driver_id: z.uuid(),
  amount: z.number(),
  pix_key: z.string().describe("Masked: only the last four characters are shown."),
  pix_key_type: PixKeyType,
  status: z.enum(["processing", "completed", "failed"]),
  in_doubt: z.boolean().describe(
    "True while our transfer request failed in a way that may have made the transfer (timeout, 5xx): the amount " +
      "stays held until the gateway says what happened.",
  ),
  gateway_transfer_id: z.string().nullable(),
  error_message: z.string().nullable(),
  failure_kind: z.enum(["gateway_rejected", "transfer_failed", "no_transfer"]).nullable().describe(
    "Why it failed: the gateway refused the request, the gateway reports the transfer failed or cancelled, or the " +
      "gateway has no transfer for it. Kept when a later DONE from the gateway completes it.",
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Timestamp.nullable(),
}).meta({ id: "Withdrawal" });
type Withdrawal = z.infer<typeof Withdrawal>;

const WithdrawalRequest = z.object({
  amount: PositiveMoney,
  pix_key: Text(140),
  pix_key_type: PixKeyType,
}).transform((body, ctx) => {
  // The key goes on, to the database and to the gateway, in the form the Pix directory writes it.
  const key = normalizePixKey(body.pix_key_type, body.pix_key);
  if (key === null) {
    ctx.addIssue({
      code: "custom",
      path: ["pix_key"],
      message: `a ${body.pix_key_type} key must be ${PIX_KEYS[body.pix_key_type].description}`,
    });
    return z.NEVER;
  }
  return { ...body, pix_key: key };
});
type WithdrawalRequest = z.infer<typeof WithdrawalRequest>;

export const getWallet = defineRoute({
  method: "get",
  path: "/api/v1/wallets/me",
  tag: "wallet",
  summary: "The driver's wallet",
  description: "balance is the sum of the driver's ledger; available_balance also holds back the withdrawals " +
    "still processing, and is what may be withdrawn.",
  auth: "bearer",
  roles: "drivers",
  responses: { 200: { description: "The wallet", schema: Wallet } },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "get_wallet")) }),
});

export const listTransactions = defineRoute({
  method: "get",
  path: "/api/v1/wallets/me/transactions",
  tag: "wallet",
  summary: "The driver's ledger, newest first",
  description: "Append-only: a delivery credit when a delivery completes, a credit reversal when its payment is " +
    "refunded, a withdrawal debit when a withdrawal completes.",
  auth: "bearer",
  roles: "drivers",
  query: PageQuery,
  responses: { 200: { description: "One page", schema: pageOf(WalletEntry) } },
  handler: async ({ query, asCaller }) => ({
    body: await asCaller((tx) =>
      rpc(tx, "list_wallet_transactions", { page_limit: query.limit, cursor: query.cursor })
    ),
  }),
});

function logFailure(event: string, withdrawal: Withdrawal, error: unknown) {
  console.error(JSON.stringify({
    event,
    withdrawal_id: withdrawal.id,
    company_id: withdrawal.company_id,
    error: error instanceof HttpError
      ? error.detail
      : error instanceof Error
      ? `${error.name}: ${error.message}`
      : String(error),
  }));
}

/**
 * The answer when the gateway's answer could not be written down: 503 when the database is why (unavailable, or
 * too busy to answer in time), else the gateway's own status; the message says what is true: the withdrawal is
 * recorded, still processing with its amount held, and not (yet) failed or marked in doubt. No Retry-After: a
 * retry without the request's Idempotency-Key would be a second withdrawal.
 */
function outcomeNotRecorded(withdrawal: Withdrawal, gateway: HttpError, rejected: boolean, cause: unknown): HttpError {
  const database = toHttpError(cause).status === 503;
  const happened = rejected
    ? `The gateway refused the transfer (${gateway.detail})`
    : `The gateway did not answer the transfer request (${gateway.detail}), so it may have made the transfer`;
  const why = database ? "the database became unavailable" : "an error occurred";
  return new HttpError(
    database ? 503 : gateway.status,
    `${happened}, but ${why} before the withdrawal ${withdrawal.id} could be marked ` +
      `${rejected ? "failed" : "in doubt"}: it stays processing with its amount held until the reconciliation ` +
      "(every 5 minutes) learns from the gateway whether the transfer was made, and settles it.",
  );
}

/**
 * Asks the gateway for the Pix transfer of a withdrawal already recorded (and
 * its funds held). No transfer: the withdrawal fails and its funds are
 * released, with the gateway's 422 or 502. A transfer: its id is stored; the
 * transfer events settle the withdrawal later.
 */
async function requestTransfer(withdrawal: Withdrawal, request: WithdrawalRequest): Promise<Withdrawal> {
  let transfer: GatewayObject;
  try {
    const gateway = await companyGateway(withdrawal.company_id);
    if (!gateway) throw new HttpError(422, "the company has not configured the payment gateway");
    transfer = await gateway.client.createPixTransfer({
      value: withdrawal.amount,
      pixAddressKey: request.pix_key,
      pixAddressKeyType: request.pix_key_type.toUpperCase() as Uppercase<typeof request.pix_key_type>,
      description: `Withdrawal ${withdrawal.id}`,
      externalReference: withdrawal.id,
    });
  } catch (error) {
    const http = toHttpError(error);
    logFailure("withdrawal_transfer_not_made", withdrawal, error);
    // Only a refusal proves there is no transfer: then the funds are released. After a
    // timeout, a 5xx or anything else the gateway may have made it: the funds stay held
    // (in doubt) until its events or the reconciliation job learn what the gateway did.
    const rejected = http.status === 422;
    try {
      await asService((tx) =>
        rejected
          ? rpc(tx, "fail_withdrawal", {
            withdrawal_id: withdrawal.id,
            error_message: String(http.detail),
            failure_kind: "gateway_rejected",
          })
          : rpc(tx, "mark_transfer_in_doubt", { withdrawal_id: withdrawal.id, error_message: String(http.detail) })
      );
    } catch (recordError) {
      // Unrecorded, the withdrawal is still processing without a transfer id: reconciliation asks the gateway.
      logFailure("withdrawal_outcome_not_recorded", withdrawal, recordError);
      throw outcomeNotRecorded(withdrawal, http, rejected, recordError);
    }
    if (rejected) throw http;
    throw new HttpError(
      502,
      `${http.detail}. The withdrawal ${withdrawal.id} stays processing (in_doubt) with its amount held until the ` +
        "gateway confirms whether the transfer was made.",
    );
  }
  try {
    return await asService((tx) =>
      rpc(tx, "attach_transfer", { withdrawal_id: withdrawal.id, gateway_transfer_id: transfer.id }) as Promise<
        Withdrawal
      >
    );
  } catch (error) {
    // The transfer exists, so the withdrawal must stay processing: its events
    // find it by externalReference (our id) and store the transfer id then.
    logFailure("withdrawal_transfer_not_attached", withdrawal, error);
    return { ...withdrawal, gateway_transfer_id: transfer.id };
  }
}

export const createWithdrawal = defineRoute({
  method: "post",
  path: "/api/v1/withdrawals",
  tag: "withdrawals",
  summary: "Withdraw from the wallet by Pix",
  description: "The withdrawal is recorded `processing` (holding the amount) under a lock on the driver's wallet, " +
    "so concurrent requests can never withdraw more than the available balance (422). Then the Pix transfer is " +
    "requested at the gateway with externalReference = the withdrawal id. If the gateway refuses it (422, with the " +
    "gateway's message), the withdrawal is `failed` (failure_kind gateway_rejected) and the amount is released. If " +
    "the gateway does not answer (timeout, 5xx: 502), it may have made the transfer all the same: the withdrawal " +
    "stays `processing` with `in_doubt: true` and the amount held, until the transfer's events or the " +
    "reconciliation job (every 5 minutes) learn from the gateway what happened; only when the gateway has no " +
    "transfer for it is it failed (no_transfer) and the amount released. Transfer events are checked with the " +
    "gateway before they move money (POST /api/v1/webhooks/gateway/{company_id}); `withdrawal_updated` is broadcast " +
    "on every change. Pix keys: `cpf` and `cnpj` with or without punctuation (529.982.247-25), check digits " +
    "verified, numbers of one repeated digit refused, stored as digits; `phone` a Brazilian mobile number typed any " +
    "usual way ((11) 98888-7777, 11988887777, +55 11 98888-7777), stored as E.164 (+5511988887777); `email` (at " +
    "most 77 characters) and `evp` (a UUID), stored lowercase. An invalid key is 400 naming pix_key. The key is " +
    "never shown again in full: responses and broadcasts carry it masked to its last four characters. Retry with an " +
    "`Idempotency-Key`: a retry after a 502 (or a lost answer) gets the first answer again and never makes a second " +
    "withdrawal.",
  auth: "bearer",
  roles: "drivers",
  body: WithdrawalRequest,
  responses: {
    201: { description: "Processing, with the gateway's transfer id", schema: Withdrawal },
    422: { description: "More than the available balance, no gateway configured, or the gateway refused" },
    502: {
      description: "The gateway did not answer; the withdrawal stays processing and in doubt, its amount held, " +
        "until the gateway says whether it made the transfer",
    },
    503: {
      description: "The database is unavailable or too busy to answer in time. Before the withdrawal was recorded: " +
        "nothing was done. After (the gateway asked, its answer not yet recorded): the message names the " +
        "withdrawal, which stays processing with its amount held until the reconciliation settles it; retry only " +
        "with the same Idempotency-Key",
      headers: { "Retry-After": "Whole seconds to wait before trying again (when nothing was done)" },
    },
  },
  async handler({ body, asCaller }) {
    const withdrawal = await asCaller((tx) => rpc(tx, "request_withdrawal", body) as Promise<Withdrawal>);
    return { status: 201, body: await requestTransfer(withdrawal, body) };
  },
});

export const listWithdrawals = defineRoute({
  method: "get",
  path: "/api/v1/withdrawals",
  tag: "withdrawals",
  summary: "Withdrawals, newest first",
  description: "A driver lists its own; an owner or admin the company's.",
  auth: "bearer",
  roles: "withdrawal_readers",
  query: PageQuery,
  responses: { 200: { description: "One page", schema: pageOf(Withdrawal) } },
  handler: async ({ query, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "list_withdrawals", { page_limit: query.limit, cursor: query.cursor })),
  }),
});

export const getWithdrawal = defineRoute({
  method: "get",
  path: "/api/v1/withdrawals/{id}",
  tag: "withdrawals",
  summary: "One withdrawal",
  description: "A driver reads its own; an owner or admin the company's. Anyone else's is 404.",
  auth: "bearer",
  roles: "withdrawal_readers",
  params: IdParams,
  responses: { 200: { description: "The withdrawal", schema: Withdrawal } },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "get_withdrawal", { withdrawal_id: params.id })),
  }),
});

export default [getWallet, listTransactions, createWithdrawal, listWithdrawals, getWithdrawal];
