// The query keys of drivers: the company's lists of drivers, one driver, a driver's day, and their latest positions.
export const driverKeys = {
  /** Every list of drivers (the pages, the list of names, the board's). */
  lists: () => ["drivers"] as const,
  page: (cursor: string | undefined) => ["drivers", { cursor }] as const,
  /** The first 100 drivers, to name them in lists and choose one in forms. */
  names: () => ["drivers", "all-active"] as const,
  /** Every driver of the company, for the dispatch board. */
  every: () => ["drivers", "board"] as const,
  one: (id: string) => ["driver", id] as const,
  day: (id: string, date: string) => ["driver-day", id, date] as const,
  locations: () => ["locations"] as const,
};
