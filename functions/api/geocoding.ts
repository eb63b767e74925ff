// The geocoding service client (docs/contract.md, External services), speaking Nominatim's search API:
// GET {base}/search?q=...&format=jsonv2&countrycodes=br&limit=5&addressdetails=1 → [{display_name, lat, lon,
// address: {postcode, ...}}], lat and lon as strings. Down, slower than 5 s, or any answer but such a list: 502.
// Runtime-neutral (fetch only, no Deno globals), so vitest exercises it too.
import { HttpError } from "../_shared/errors.ts";
import { isTimeout, timeoutSignal } from "../_shared/timeout.ts";

export const GEOCODING_TIMEOUT_MS = 5_000;
/** As many places as a search offers. */
export const GEOCODING_LIMIT = 5;

/** A place found for a text, as GET /api/v1/geocode answers it. */
export interface Place {
  label: string;
  lat: number;
  lng: number;
  /** 00000-000, or null when the service gives none. */
  postcode: string | null;
}

export class GeocodingUnavailable extends HttpError {
  constructor(reason: string) {
    super(502, `Geocoding service unavailable: ${reason}`);
  }
}

const coordinate = (value: unknown, limit: number) => {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : typeof value === "number" ? value : NaN;
  return Number.isFinite(n) && Math.abs(n) <= limit ? n : null;
};

const text = (
  value: unknown,
) => (typeof value === "string" && value.trim() ? value.trim() : null);

/** A CEP as the Correios write it (01310-200) when it has 8 digits; otherwise as given. */
function postcodeOf(value: unknown): string | null {
  const given = text(value);
  if (!given) return null;
  const digits = given.replace(/\D/g, "");
  return digits.length === 8 ? `${digits.slice(0, 5)}-${digits.slice(5)}` : given;
}

/**
 * A place's label as Brazilians write an address, "Avenida Paulista, 1578 - Bela Vista, São Paulo - SP, 01310-200",
 * when the service gives its parts (addressdetails); Nominatim's own display_name otherwise.
 */
function labelOf(
  displayName: string,
  address: Record<string, unknown> | undefined,
  postcode: string | null,
): string {
  const road = text(address?.road) ?? text(address?.pedestrian);
  const city = text(address?.city) ?? text(address?.town) ??
    text(address?.village) ?? text(address?.municipality);
  if (!road || !city) return displayName;
  const iso = text(address?.["ISO3166-2-lvl4"]);
  const state = iso?.startsWith("BR-") ? iso.slice(3) : text(address?.state);
  const street = [road, text(address?.house_number)].filter(Boolean).join(", ");
  const district = text(address?.suburb) ?? text(address?.neighbourhood) ??
    text(address?.city_district);
  const place = [city, state].filter(Boolean).join(" - ");
  return [[street, district].filter(Boolean).join(" - "), place, postcode]
    .filter(Boolean).join(", ");
}

/** Nominatim's answer as our places (those without a usable position left out); anything but a list is a failure. */
export function placesFromNominatim(answer: unknown): Place[] {
  if (!Array.isArray(answer)) {
    throw new GeocodingUnavailable("answered without a list of places");
  }
  const places: Place[] = [];
  for (const item of answer) {
    if (item === null || typeof item !== "object") continue;
    const { display_name, lat, lon, address } = item as Record<string, unknown>;
    const [latitude, longitude, name] = [
      coordinate(lat, 90),
      coordinate(lon, 180),
      text(display_name),
    ];
    if (latitude === null || longitude === null || !name) continue;
    const details = address !== null && typeof address === "object" ? address as Record<string, unknown> : undefined;
    const postcode = postcodeOf(details?.postcode);
    places.push({
      label: labelOf(name, details, postcode),
      lat: latitude,
      lng: longitude,
      postcode,
    });
  }
  return places;
}

export function nominatimSearchUrl(baseUrl: string, q: string): string {
  const query = new URLSearchParams({
    q,
    format: "jsonv2",
    countrycodes: "br",
    limit: String(GEOCODING_LIMIT),
    addressdetails: "1",
  });
  return `${baseUrl.replace(/\/+$/, "")}/search?${query}`;
}

/** The places the service finds for a text, best first (possibly none); throws GeocodingUnavailable (502). */
export async function searchPlaces(
  baseUrl: string,
  q: string,
  timeoutMs = GEOCODING_TIMEOUT_MS,
): Promise<Place[]> {
  // One deadline for the whole exchange, the body included.
  const timeout = timeoutSignal(timeoutMs);
  try {
    let res: Response;
    try {
      res = await fetch(nominatimSearchUrl(baseUrl, q), {
        signal: timeout.signal,
        // Nominatim's usage policy asks every application to name itself; the labels are wanted in Portuguese.
        headers: {
          accept: "application/json",
          "accept-language": "pt-BR",
          "user-agent": "delivery-platform",
        },
      });
    } catch (error) {
      throw new GeocodingUnavailable(
        isTimeout(error) ? "timed out" : "unreachable",
      );
    }
    let answer: unknown;
    try {
      answer = await res.json();
    } catch (error) {
      if (isTimeout(error)) throw new GeocodingUnavailable("timed out");
      throw new GeocodingUnavailable(`HTTP ${res.status} without a JSON body`);
    }
    if (!res.ok) throw new GeocodingUnavailable(`HTTP ${res.status}`);
    return placesFromNominatim(answer);
  } finally {
    timeout.clear();
  }
}
