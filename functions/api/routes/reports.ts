// Reports (docs/contract.md, Reports): the summary of the company's deliveries over a range of days, read from
// the roll-up that triggers keep in step with the deliveries; a driver's day and the per-driver report, read from
// the driver's deliveries, positions and ledgers (supabase/schemas/12_reports.sql).
import { z } from "zod";
import { rpc } from "../../_shared/db.ts";
import { defineRoute } from "../../_shared/route.ts";
import { Day, dayOf, dayOfBound, DayOrTime, recentDays } from "../days.ts";
import { IdParams, Money } from "../schemas.ts";
import { csvLines, Dialect, escapeFormula } from "./csv.ts";
import { Delivery } from "./deliveries.ts";

const ReportDay = z.object({
  day: z.iso.date(),
  created: z.number().int().describe("Deliveries created that day."),
  completed: z.number().int().describe("Of those, completed (now)."),
  cancelled: z.number().int().describe("Of those, cancelled (now)."),
  failed: z.number().int().describe("Of those, failed and not reopened (now)."),
  revenue: Money.describe("The prices of that day's completed deliveries."),
}).meta({ id: "ReportDay" });

const ReportSummary = z.object({
  created: z.number().int().describe("Deliveries created in the range."),
  completed: z.number().int().describe("Of those, completed (now)."),
  cancelled: z.number().int().describe("Of those, cancelled (now)."),
  failed: z.number().int().describe("Of those, failed and not reopened (now)."),
  on_time_rate: z.number().nullable().describe(
    "Of the completed deliveries that had a window, the share (0 to 1, 4 decimals) completed by window_end; null " +
      "when none had one.",
  ),
  avg_delivery_minutes: z.number().nullable().describe(
    "Average minutes from creation to completion of the completed ones (1 decimal); null when none.",
  ),
  revenue: Money.describe("The prices of the completed deliveries."),
  driver_earnings: Money.describe(
    "What their drivers were credited for them (price * driver_share, in cents each).",
  ),
  by_day: z.array(ReportDay).describe(
    "Every day of the range, in order, with no day left out.",
  ),
}).meta({ id: "ReportSummary" });

export const reportSummary = defineRoute({
  method: "get",
  path: "/api/v1/reports/summary",
  tag: "reports",
  summary: "How the company's deliveries went over a range of days",
  description: "Over the company's deliveries created from `from` to `to`, both days included, days in " +
    "America/Sao_Paulo (an instant given instead of a day counts as its day there). Each count is by the " +
    "delivery's status now, so it equals the count of GET /api/v1/deliveries with the same days and that status. " +
    "Without `from` and `to`: the last 30 days, today included. At most 366 days.",
  auth: "bearer",
  roles: "company_managers",
  query: z.object({
    from: DayOrTime.optional().describe("The first day (YYYY-MM-DD)."),
    to: DayOrTime.optional().describe("The last day (YYYY-MM-DD), included."),
  }),
  responses: { 200: { description: "The summary", schema: ReportSummary } },
  handler: async ({ query, asCaller }) => {
    const recent = recentDays(29);
    return {
      body: await asCaller((tx) =>
        rpc(tx, "report_summary", {
          from_day: query.from ? dayOfBound(query.from) : recent.from,
          to_day: query.to ? dayOfBound(query.to) : recent.to,
        })
      ),
    };
  },
});

const DriverDay = z.object({
  date: Day,
  driver_id: z.uuid(),
  online_minutes: z.number().int().describe(
    "Minutes between the positions the driver sent that day while carrying a delivery, counting each step of at " +
      "most 10 minutes (a longer silence is time off; time between deliveries has no positions and is not counted).",
  ),
  distance_m: z.number().int().describe(
    "Metres between those same positions, step by step (great-circle).",
  ),
  completed: z.number().int().describe(
    "Deliveries completed that day (and completed now).",
  ),
  failed: z.number().int().describe(
    "Deliveries failed that day (and failed now).",
  ),
  returned: z.number().int().describe(
    "Recalled deliveries the driver brought back that day.",
  ),
  earnings: Money.describe(
    "The driver's wallet credits of the day for deliveries, returned deliveries' included, less reversals.",
  ),
  cash_collected: Money.describe(
    "Cash collected at the door that day (the driver's `collected` cash entries).",
  ),
  deliveries: z.array(Delivery).describe(
    "The driver's deliveries accepted, completed, failed or returned that day, as GET /api/v1/deliveries/{id} " +
      "shows them, in the order they were accepted.",
  ),
}).meta({ id: "DriverDay" });

export const driverDay = defineRoute({
  method: "get",
  path: "/api/v1/drivers/{id}/day",
  tag: "reports",
  summary: "A driver's day",
  description: "What a driver did on a day (America/Sao_Paulo; default: today): time online and distance from the " +
    "positions sent while carrying a delivery, the deliveries completed, failed and returned, earnings (returned " +
    "deliveries' credits included), cash collected, and the day's deliveries. The company's owner and admins; a " +
    "driver for themself (another driver, or a driver of another company: 404).",
  auth: "bearer",
  roles: "withdrawal_readers",
  params: IdParams,
  query: z.object({
    date: Day.optional().describe(
      "The day (YYYY-MM-DD); today in São Paulo when omitted.",
    ),
  }),
  responses: {
    200: { description: "The driver's day", schema: DriverDay },
    404: { description: "No such driver" },
  },
  handler: async ({ params, query, asCaller }) => ({
    body: await asCaller((tx) =>
      rpc(tx, "driver_day", {
        driver_id: params.id,
        day: query.date ?? dayOf(new Date()),
      })
    ),
  }),
});

const DriverReportLine = z.object({
  driver_id: z.uuid(),
  name: z.string(),
  completed: z.number().int().describe(
    "Deliveries the driver completed in the range (and completed now).",
  ),
  failed: z.number().int().describe(
    "Deliveries the driver failed in the range (and failed now).",
  ),
  on_time_rate: z.number().nullable().describe(
    "Of the completed ones that had a window, the share (0 to 1, 4 decimals) completed by window_end; null when none " +
      "had one.",
  ),
  avg_delivery_minutes: z.number().nullable().describe(
    "Average minutes from creation to completion of the completed ones (1 decimal); null when none.",
  ),
  earnings: Money.describe(
    "The driver's wallet credits in the range for deliveries, returned deliveries' included, less reversals.",
  ),
}).meta({ id: "DriverReportLine" });

const DriverReport = z.object({
  from: Day,
  to: Day,
  items: z.array(DriverReportLine),
}).meta({
  id: "DriverReport",
});

const DRIVER_REPORT_COLUMNS: (keyof z.infer<typeof DriverReportLine>)[] = [
  "driver_id",
  "name",
  "completed",
  "failed",
  "on_time_rate",
  "avg_delivery_minutes",
  "earnings",
];

export const reportDrivers = defineRoute({
  method: "get",
  path: "/api/v1/reports/drivers",
  tag: "reports",
  summary: "How each driver did over a range of days",
  description: "One line per driver of the company, by name, over the days from `from` to `to`, both included, days " +
    "in America/Sao_Paulo (an instant counts as its day there; without them, the last 30 days): deliveries completed " +
    "and failed in the range, on-time rate and average minutes to deliver as in GET /api/v1/reports/summary, and " +
    "earnings (returned deliveries' credits included). At most 366 days. `?format=csv`: the same lines as " +
    `\`text/csv\` (columns ${DRIVER_REPORT_COLUMNS.join(", ")}), in the \`dialect\` of the export: \`csv\` ` +
    "(default) or `excel-br` (byte order mark, semicolons, decimal commas); a name a spreadsheet would read as a " +
    "formula is written with a leading apostrophe.",
  auth: "bearer",
  roles: "company_managers",
  query: z.object({
    from: DayOrTime.optional().describe("The first day (YYYY-MM-DD)."),
    to: DayOrTime.optional().describe("The last day (YYYY-MM-DD), included."),
    format: z.enum(["json", "csv"]).default("json"),
    dialect: Dialect.describe(
      "With format=csv: `csv` (default) or `excel-br`.",
    ),
  }),
  responses: {
    200: {
      description: "The report (JSON, or CSV with format=csv)",
      schema: DriverReport,
    },
  },
  async handler({ query, asCaller }) {
    const recent = recentDays(29);
    const from = query.from ? dayOfBound(query.from) : recent.from;
    const to = query.to ? dayOfBound(query.to) : recent.to;
    const report = await asCaller((tx) => rpc(tx, "report_drivers", { from_day: from, to_day: to })) as unknown as {
      items: z.infer<typeof DriverReportLine>[];
    };
    if (query.format === "json") {
      return { body: { from, to, items: report.items } };
    }
    const cell = (value: unknown) =>
      query.dialect === "excel-br" && typeof value === "number" ? String(value).replace(".", ",") : value;
    const lines = [
      DRIVER_REPORT_COLUMNS,
      ...report.items.map((line) => DRIVER_REPORT_COLUMNS.map((name) => cell(escapeFormula(line[name])) ?? "")),
    ];
    return new Response(
      (query.dialect === "excel-br" ? "\uFEFF" : "") +
        csvLines(lines, query.dialect),
      {
        headers: {
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="drivers-${from}-${to}.csv"`,
        },
      },
    );
  },
});

export default [reportSummary, driverDay, reportDrivers];
