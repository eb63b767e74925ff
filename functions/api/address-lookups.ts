// The postcode and geocoding services behind a meter and a cache, both in Postgres (supabase/schemas/01_brazil.sql,
// Section: address lookups), so that every edge instance shares them: a user may look up LOOKUPS_PER_MINUTE
// addresses a minute through GET /api/v1/postcodes/{cep} and /api/v1/geocode (429 with Retry-After beyond, as
// PUT /api/v1/locations/me), and an answer is kept a day by its normalized query, so the same CEP or text asked
// again (by anyone, by every row of an import) costs the services nothing.
import { asServiceAtOnce } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { inlined } from "../_shared/sql-text.ts";
import { type Place, searchPlaces } from "./geocoding.ts";
import { lookUpPostcode, type Postcode } from "./postcodes.ts";

export const LOOKUPS_PER_MINUTE = 60;

type Kind = "postcode" | "geocode";

/** A text as the cache keys it: NFC, lower case, runs of white space as one space, trimmed. */
export function normalizedQuery(text: string): string {
  return text.normalize("NFC").toLowerCase().replace(/\s+/g, " ").trim();
}

/** Counts one lookup of the user: 429 with Retry-After (from the database's PT429) past the limit. */
export async function meterLookup(userId: string): Promise<void> {
  await asServiceAtOnce([inlined(["select private.meter_address_lookup($1, $2)", [userId, LOOKUPS_PER_MINUTE]])]);
}

async function cached<T>(kind: Kind, query: string, ask: () => Promise<T>): Promise<T> {
  const [[row]] = await asServiceAtOnce([
    inlined(["select private.cached_address_lookup($1, $2) as answer", [kind, query]]),
  ]);
  const answer = row.answer as { value: T } | null;
  if (answer) return answer.value;
  const value = await ask();
  try {
    await asServiceAtOnce([[
      "select private.store_address_lookup($1, $2, $3::text::jsonb)",
      [kind, query, JSON.stringify({ value })],
    ]]);
  } catch (error) {
    // The answer still goes out; the next lookup asks the service again.
    console.error(JSON.stringify({
      event: "address_lookup_not_cached",
      kind,
      error: error instanceof Error ? error.name : String(error),
    }));
  }
  return value;
}

/** A CEP's address (8 digits), or null when the service knows none: from the cache, or the service. */
export const postcodeOf = (digits: string): Promise<Postcode | null> =>
  cached("postcode", digits, () => lookUpPostcode(env().CEP_URL, digits));

/** The places for a text, best first: from the cache, or the service. */
export const placesFor = (text: string): Promise<Place[]> =>
  cached("geocode", normalizedQuery(text).slice(0, 400), () => searchPlaces(env().GEOCODING_URL, text));
