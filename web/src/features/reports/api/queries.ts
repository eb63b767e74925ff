// Every read about reports, one `queryOptions` per operation.
import { queryOptions } from "@tanstack/react-query";
import { api, call } from "../../../api/client.ts";
import { reportKeys } from "./keys.ts";

/** The company's figures over a period. */
export const reportQuery = (from: string, to: string) =>
  queryOptions({
    queryKey: reportKeys.summary(from, to),
    queryFn: () => call(api.GET("/api/v1/reports/summary", { params: { query: { from, to } } })),
  });
