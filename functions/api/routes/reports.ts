// Reports (docs/contract.md, Reports): the summary of the company's deliveries over a range of days, read from
// the roll-up that triggers keep in step with the deliveries (supabase/schemas/12_reports.sql).
import { z } from "zod";
import { rpc } from "../../_shared/db.ts";
import { defineRoute } from "../../_shared/route.ts";
import { dayOfBound, DayOrTime, recentDays } from "../days.ts";
import { Money } from "../schemas.ts";

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
  driver_earnings: Money.describe("What their drivers were credited for them (price * driver_share, in cents each)."),
  by_day: z.array(ReportDay).describe("Every day of the range, in order, with no day left out."),
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

export default [reportSummary];
