// The query keys of routes: a day's routes, a driver's, and those out on the streets (the dispatch board's).
export const routeKeys = {
  /** Every list of routes. */
  lists: () => ["routes"] as const,
  day: (date: string) => ["routes", { date }] as const,
  driver: (driverId: string | undefined) => ["routes", { driver_id: driverId }] as const,
  live: () => ["routes", "board"] as const,
};
