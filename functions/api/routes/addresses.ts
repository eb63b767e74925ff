// Addresses instead of coordinates (docs/contract.md, Addresses): a CEP's street, neighbourhood and city from a
// ViaCEP-compatible service, and places for a text from a Nominatim-compatible one, for every user of a company
// (the New delivery form fills its fields and its map with them). Each asks the database first whether the caller
// may, so a refused or deactivated caller costs the services nothing.
import { z } from "zod";
import { ErrorBody, HttpError } from "../../_shared/errors.ts";
import { defineRoute, rateLimited } from "../../_shared/route.ts";
import { LOOKUPS_PER_MINUTE, meterLookup, placesFor, postcodeOf } from "../address-lookups.ts";
import { formatCep } from "../postcodes.ts";
import { Text } from "../schemas.ts";

const Postcode = z.object({
  cep: z.string().describe("00000-000, as the Correios write it."),
  street: z.string().describe("The street (logradouro); empty for a town of a single CEP."),
  neighborhood: z.string().describe("The neighbourhood (bairro); empty for a town of a single CEP."),
  city: z.string(),
  state: z.string().describe("The state's two letters, e.g. SP."),
}).meta({ id: "Postcode" });

export const Place = z.object({
  label: z.string().describe(
    "The address as Brazilians write it (Avenida Paulista, 1578 - Bela Vista, São Paulo - SP, 01310-200) when the " +
      "service gives its parts; the service's own name for the place otherwise.",
  ),
  lat: z.number(),
  lng: z.number(),
  postcode: z.string().nullable().describe("The place's CEP (00000-000), when the service knows it."),
}).meta({ id: "Place" });

const LIMITED = rateLimited(
  `More than ${LOOKUPS_PER_MINUTE} address lookups (CEPs and geocoding together) by this user in the current minute`,
  60,
);
const METERED =
  ` Each user may make ${LOOKUPS_PER_MINUTE} address lookups a minute (CEPs and texts together; 429 with ` +
  "`Retry-After` beyond); an answer is kept a day, so the same CEP or text asked again does not reach the service.";

/** A CEP typed with or without its hyphen. */
const CepParams = z.object({
  cep: z.string().regex(/^\d{5}-?\d{3}$/, "must be a CEP of 8 digits, e.g. 01310-200 or 01310200"),
});

export const getPostcode = defineRoute({
  method: "get",
  path: "/api/v1/postcodes/{cep}",
  tag: "addresses",
  summary: "The address of a CEP",
  description: "The street, neighbourhood, city and state of a CEP (8 digits, with or without its hyphen), from the " +
    "ViaCEP-compatible service at `CEP_URL`. A CEP of another form is 400; one the service does not know, 404; the " +
    "service down, slower than 5 s or answering anything else, 502." + METERED,
  auth: "bearer",
  roles: "members",
  params: CepParams,
  responses: {
    200: { description: "The CEP's address", schema: Postcode },
    404: { description: "The service knows no such CEP", schema: ErrorBody },
    429: LIMITED,
    502: { description: "The postcode service is down, slower than 5 s, or answered something else" },
  },
  async handler({ params, authorize, claims }) {
    await authorize();
    await meterLookup(String(claims.sub));
    const digits = params.cep.replace("-", "");
    const found = await postcodeOf(digits);
    if (!found) throw new HttpError(404, `CEP ${formatCep(digits)} not found`);
    return { body: found };
  },
});

export const geocode = defineRoute({
  method: "get",
  path: "/api/v1/geocode",
  tag: "addresses",
  summary: "Places for an address",
  description: "Up to 5 places in Brazil for a free text (an address, part of one, a CEP), best first, from the " +
    "Nominatim-compatible service at `GEOCODING_URL`; `items` is empty when nothing matches. The service down, " +
    "slower than 5 s or answering anything but a list of places: 502." + METERED,
  auth: "bearer",
  roles: "members",
  query: z.object({ q: Text(300).describe("The text to look for, e.g. Avenida Paulista, 1578") }),
  responses: {
    200: { description: "The places found", schema: z.object({ items: z.array(Place) }) },
    429: LIMITED,
    502: { description: "The geocoding service is down, slower than 5 s, or answered something else" },
  },
  async handler({ query, authorize, claims }) {
    await authorize();
    await meterLookup(String(claims.sub));
    return { body: { items: await placesFor(query.q) } };
  },
});

export default [getPostcode, geocode];
