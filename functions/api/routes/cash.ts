// Money at the door (docs/contract.md, Money at the door): the drivers' cash ledger, read and settled. The
// ledger, its lock and the rule that no settlement exceeds what is outstanding live in
// supabase/schemas/17_cash.sql; what a delivery collects is on the delivery (routes/deliveries.ts).
import { stringify } from "csv-stringify/sync";
import { z } from "zod";
import { rpc } from "../../_shared/db.ts";
import { defineRoute } from "../../_shared/route.ts";
import { Day, dayOf } from "../days.ts";
import { IdParams, Money, PositiveMoney, Text, Timestamp } from "../schemas.ts";

const CashEntry = z.object({
  id: z.uuid(),
  driver_id: z.uuid(),
  kind: z.enum(["collected", "settlement"]).describe(
    "collected: cash the driver took at a delivery (owed to the company); settlement: cash handed in.",
  ),
  amount: z.number().describe("Signed: collected positive, a settlement negative (BRL, 2 decimals)."),
  delivery_id: z.uuid().nullable(),
  note: z.string().nullable(),
  created_by: z.uuid().nullable().describe("Who recorded it: the driver completing, the manager receiving the cash."),
  created_at: Timestamp,
}).meta({ id: "CashEntry" });

const DriverCash = z.object({
  driver_id: z.uuid(),
  outstanding: Money.describe("What the driver owes the company: collected − settled (the sum of the entries)."),
  collected: Money.describe("Cash collected at deliveries, in all."),
  settled: Money.describe("Cash handed in, in all."),
  card_collected: Money.describe("Paid by card at the door, in all: apart, it moves no cash."),
  entries: z.array(CashEntry).describe("The latest entries, newest first (`limit`, default 100)."),
}).meta({ id: "DriverCash" });

const CashSettlement = z.object({
  id: z.uuid(),
  driver_id: z.uuid(),
  amount: Money,
  note: z.string().nullable(),
  created_at: Timestamp,
  outstanding: Money.describe("What the driver still owes after it."),
}).meta({ id: "CashSettlement" });

const CashSummaryLine = z.object({
  driver_id: z.uuid(),
  name: z.string(),
  collected: Money.describe("Cash collected that day."),
  card_collected: Money.describe("Paid by card that day (no cash)."),
  settled: Money.describe("Cash handed in that day."),
  outstanding: Money.describe("What the driver owed at the end of that day."),
  deliveries: z.number().int().describe("Deliveries completed that day that collected (cash or card)."),
  mismatches: z.number().int().describe("Of those, how many collected another amount than asked."),
}).meta({ id: "CashSummaryLine" });

const CashSummary = z.object({ date: Day, items: z.array(CashSummaryLine) }).meta({ id: "CashSummary" });

export const getDriverCash = defineRoute({
  method: "get",
  path: "/api/v1/drivers/{id}/cash",
  tag: "cash",
  summary: "A driver's cash: what is owed to the company",
  description: "The driver's cash ledger, as wallets are one: every cash payment collected at the door is owed by " +
    "the driver to the company until handed in (POST /api/v1/drivers/{id}/cash-settlements). `outstanding` is the " +
    "sum of the entries, which are never changed or removed. Card payments are shown apart. The company's owner " +
    "and admins; a driver for themself (another driver: 404).",
  auth: "bearer",
  roles: "withdrawal_readers",
  params: IdParams,
  query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }),
  responses: { 200: { description: "The driver's cash", schema: DriverCash }, 404: { description: "No such driver" } },
  handler: async ({ params, query, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "get_driver_cash", { driver_id: params.id, entries_limit: query.limit })),
  }),
});

export const createCashSettlement = defineRoute({
  method: "post",
  path: "/api/v1/drivers/{id}/cash-settlements",
  tag: "cash",
  summary: "Record cash a driver handed in",
  description: "Appends a settlement to the driver's cash ledger. More than what is outstanding is 422: the " +
    "database checks it under the driver's lock, so settlements sent at once never exceed it together. Retried " +
    "with its Idempotency-Key, recorded once.",
  auth: "bearer",
  roles: "company_managers",
  params: IdParams,
  body: z.object({ amount: PositiveMoney, note: Text(500).nullish() }),
  responses: {
    201: { description: "Recorded", schema: CashSettlement },
    404: { description: "No such driver in the company" },
    422: { description: "More than what the driver owes" },
  },
  handler: async ({ params, body, asCaller }) => ({
    status: 201,
    body: await asCaller((tx) =>
      rpc(tx, "record_cash_settlement", { driver_id: params.id, amount: body.amount, note: body.note ?? undefined })
    ),
  }),
});

const SUMMARY_COLUMNS: (keyof z.infer<typeof CashSummaryLine>)[] = [
  "driver_id",
  "name",
  "collected",
  "card_collected",
  "settled",
  "outstanding",
  "deliveries",
  "mismatches",
];

export const cashSummary = defineRoute({
  method: "get",
  path: "/api/v1/cash/summary",
  tag: "cash",
  summary: "The company's cash of a day, one line per driver",
  description: "The end of the day at the door, days in America/Sao_Paulo (default: today): per driver, cash " +
    "collected, card payments, cash handed in, what is outstanding at the day's end and how many deliveries " +
    "collected another amount than asked; every active driver (zeros included) and an inactive one while it has " +
    "something to show. This is the cash report: run it for each day of a range for cash per day and per driver. " +
    "`?format=csv`: the same lines as `text/csv` " +
    `(columns ${SUMMARY_COLUMNS.join(", ")}).`,
  auth: "bearer",
  roles: "company_managers",
  query: z.object({
    date: Day.optional().describe("The day (YYYY-MM-DD); today in São Paulo when omitted."),
    format: z.enum(["json", "csv"]).default("json"),
  }),
  responses: { 200: { description: "The day's cash (JSON, or CSV with format=csv)", schema: CashSummary } },
  async handler({ query, asCaller }) {
    const day = query.date ?? dayOf(new Date());
    const summary = await asCaller((tx) => rpc(tx, "cash_summary", { day })) as unknown as z.infer<
      typeof CashSummary
    >;
    if (query.format === "json") return { body: summary };
    // A name that a spreadsheet would read as a formula is written as text (CSV injection).
    const cell = (value: unknown) => typeof value === "string" && /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
    const lines = [
      SUMMARY_COLUMNS,
      ...summary.items.map((line) => SUMMARY_COLUMNS.map((name) => cell(line[name]))),
    ];
    return new Response(stringify(lines, { cast: { number: (value) => String(value) } }), {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="cash-${day}.csv"`,
      },
    });
  },
});

export default [getDriverCash, createCashSettlement, cashSummary];
