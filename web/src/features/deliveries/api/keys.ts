// The query keys of deliveries: every list, page and read about a delivery is cached under one of these, and every
// update and invalidation names them through this factory (no key is written out anywhere else).
type Point = { lat: number; lng: number };
/** The two ends a quote is asked for (either may be missing while the form is filled). */
export type QuoteEnds = { origin?: Point | null; destination?: Point | null };

/**
 * What a list of deliveries is asked with (its key's second part): `applyDelivery` reads `status`, `payment_status`
 * and `driver_id` from it to know which lists a changed delivery belongs to; the board's own lists say `board`.
 */
export interface DeliveryListFilter {
  status?: string;
  payment_status?: string;
  driver_id?: string;
  q?: string;
  from?: string;
  to?: string;
  late?: string;
  cursor?: string;
  board?: true;
}

export const deliveryKeys = {
  /** Every list of deliveries, whatever its filter. */
  lists: () => ["deliveries"] as const,
  list: (filter: DeliveryListFilter) => ["deliveries", filter] as const,
  /** Every single delivery read by its id. */
  ones: () => ["delivery"] as const,
  one: (id: string) => ["delivery", id] as const,
  trail: (id: string) => ["trail", id] as const,
  /** Signed URLs of a delivery's stored proof files. */
  proofUrls: (id: string, paths: string[]) => ["proof", id, paths] as const,
  importJob: (id: string | undefined) => ["import", id] as const,
  quote: (route: QuoteEnds) => ["quote", route] as const,
  postcode: (digits: string) => ["postcode", digits] as const,
  geocode: (q: string) => ["geocode", q] as const,
  proofRequirements: () => ["proof-requirements"] as const,
};

/** The signed URLs of proof files: valid for an hour, and no event changes them, so a reconnect does not read them. */
export const isProofUrls = (key: readonly unknown[]) => key[0] === "proof";
