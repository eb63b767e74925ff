// The query keys of reports.
export const reportKeys = {
  summary: (from: string, to: string) => ["report", from, to] as const,
};
