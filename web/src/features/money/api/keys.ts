// The query keys of money: the driver's wallet, withdrawals, prices, the company's plan and the cash of a day.
export const walletKeys = {
  all: () => ["wallet"] as const,
  me: () => ["wallet", "me"] as const,
  entries: (cursor: string | undefined) => ["wallet", "entries", cursor] as const,
};

export const withdrawalKeys = {
  /** Every list of withdrawals (the company's pages, the driver's own). */
  lists: () => ["withdrawals"] as const,
  page: (cursor: string | undefined) => ["withdrawals", { cursor }] as const,
  mine: () => ["withdrawals", "mine"] as const,
  one: (id: string) => ["withdrawal", id] as const,
};

export const moneyKeys = {
  prices: () => ["prices"] as const,
  billing: () => ["billing"] as const,
  cashDays: () => ["cash-summary"] as const,
  cashDay: (date: string) => ["cash-summary", date] as const,
};
