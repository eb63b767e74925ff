// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Addresses instead of coordinates: a CEP's address from the postcode service (ViaCEP's API), places for a text from
// the geocoding service (Nominatim's), and deliveries created from their addresses alone, against loopback fakes
// that hold the São Paulo gazetteer and that tests make slow, failing or down.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { placesFromNominatim } from "../../../functions/api/geocoding.ts";
import { postcodeFromViaCep } from "../../../functions/api/postcodes.ts";
import { api, configureGateway, createCompany, db, type TestCompany } from "../../support/api.ts";
import { createPixDelivery, deliveryBody, SE } from "../../support/deliveries.ts";
import { cep, gateway, geocoding, routing } from "../../support/fakes.ts";

/** Where the gazetteer puts Praça da Sé and MASP (Avenida Paulista, 1578). */
const SE_SQUARE = { lat: -23.5503, lng: -46.6339 };
const MASP = { lat: -23.5614, lng: -46.6559 };

let a: TestCompany;

beforeAll(async () => {
  a = await createCompany("Addresses");
  await configureGateway(a);
});

afterEach(async () => {
  await Promise.all([cep.reset(), geocoding.reset(), routing.reset(), gateway.reset()]);
  // Each test asks the services afresh: no answer kept by an earlier one, and no lookups counted.
  await db()`delete from private.address_lookups`;
  await db()`delete from private.address_lookup_meters`;
});

const postcode = (code: string, token = a.owner.token) =>
  api(`/api/v1/postcodes/${encodeURIComponent(code)}`, { token });
const places = (q: string, token = a.owner.token) => api(`/api/v1/geocode?q=${encodeURIComponent(q)}`, { token });

async function countDeliveries(companyId: string): Promise<number> {
  const [row] = await db()`select count(*)::int as n from public.deliveries where company_id = ${companyId}`;
  return row.n;
}

describe("GET /api/v1/postcodes/{cep}", () => {
  it("answers the street, neighbourhood, city and state of a CEP, with or without its hyphen", async () => {
    const expected = {
      cep: "01310-200",
      street: "Avenida Paulista",
      neighborhood: "Bela Vista",
      city: "São Paulo",
      state: "SP",
    };
    expect(await postcode("01310-200")).toMatchObject({ status: 200, body: expected });
    expect(await postcode("01310200")).toMatchObject({ status: 200, body: expected });
    expect((await postcode("01001-000")).body).toEqual({
      cep: "01001-000",
      street: "Praça da Sé",
      neighborhood: "Sé",
      city: "São Paulo",
      state: "SP",
    });
  });

  it("is for every user of a company, and no one else", async () => {
    for (const member of [a.admin, a.legacyAdmin, a.driver]) {
      expect((await postcode("01310-200", member.token)).status).toBe(200);
    }
    expect((await api("/api/v1/postcodes/01310-200")).status).toBe(401);
  });

  it("is 404 for a CEP the service does not know", async () => {
    const res = await postcode("99999-999");
    expect(res).toMatchObject({ status: 404, body: { detail: "CEP 99999-999 not found" } });
    expect((await cep.state()).requests).toBe(1);
  });

  it.each(["0131", "01310-2000", "0131O-200", "01.310-200", "abcdefgh"])(
    "is 400 naming cep for %j, without asking the service",
    async (code) => {
      const res = await postcode(code);
      expect(res.status).toBe(400);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["path", "cep"] })]);
      expect((await cep.state()).requests).toBe(0);
    },
  );

  it("is 502 when the service is down", async () => {
    await cep.down();
    const res = await postcode("01310-200");
    expect(res).toMatchObject({ status: 502, body: { detail: "Postcode service unavailable: unreachable" } });
  });

  it("is 502 when the service fails", async () => {
    await cep.set("error");
    expect(await postcode("01310-200")).toMatchObject({
      status: 502,
      body: { detail: "Postcode service unavailable: HTTP 500 without a JSON body" },
    });
  });

  it("is 502 within about 5 s when the service is slower", async () => {
    await cep.slow(7_000);
    const started = Date.now();
    const res = await postcode("01310-200");
    expect(res).toMatchObject({ status: 502, body: { detail: "Postcode service unavailable: timed out" } });
    expect(Date.now() - started).toBeLessThan(6_500);
  });

  it("reads ViaCEP's 'not found' in both the forms it has used", () => {
    expect(postcodeFromViaCep({ erro: true }, "99999999")).toBeNull();
    expect(postcodeFromViaCep({ erro: "true" }, "99999999")).toBeNull();
    expect(() => postcodeFromViaCep([], "01310200")).toThrow(/Postcode service unavailable/);
  });
});

describe("GET /api/v1/geocode", () => {
  it("answers the places for a text, each with its label, position and CEP", async () => {
    const res = await places("Avenida Paulista, 1578");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [{
        label: "Avenida Paulista, 1578 - Bela Vista, São Paulo - SP, 01310-200",
        lat: MASP.lat,
        lng: MASP.lng,
        postcode: "01310-200",
      }],
    });
    // The text goes to the service as it was typed, asking for Brazil and five places at most.
    expect((await geocoding.state()).queries).toEqual(["Avenida Paulista, 1578"]);
  });

  it("finds streets however they are typed: accents, case, abbreviations, words cut short", async () => {
    const labels = async (q: string) => (await places(q)).body.items.map((item: any) => item.label);
    expect(await labels("praca da se")).toEqual(["Praça da Sé - Sé, São Paulo - SP, 01001-000"]);
    expect(await labels("R. OSCAR FREI")).toEqual(["Rua Oscar Freire - Jardim Paulista, São Paulo - SP, 01426-001"]);
    expect((await labels("av paulista")).length).toBeGreaterThan(1);
    expect(await labels("Av. Brig. Faria Lima, 3477")).toEqual([
      "Avenida Brigadeiro Faria Lima, 3477 - Itaim Bibi, São Paulo - SP, 04538-133",
    ]);
  });

  it("answers no items for a text that matches nothing", async () => {
    expect(await places("Rua Que Não Existe, 10")).toMatchObject({ status: 200, body: { items: [] } });
  });

  it("is 400 naming q without one", async () => {
    const res = await api("/api/v1/geocode", { token: a.owner.token });
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["query", "q"] })]);
  });

  it("is for every user of a company, and no one else", async () => {
    expect((await places("Paulista", a.driver.token)).status).toBe(200);
    expect((await api("/api/v1/geocode?q=Paulista")).status).toBe(401);
  });

  it("is 502 when the service is down, failing, or slower than 5 s", async () => {
    await geocoding.down();
    expect(await places("Avenida Paulista")).toMatchObject({
      status: 502,
      body: { detail: "Geocoding service unavailable: unreachable" },
    });
    await geocoding.reset();
    await geocoding.set("error");
    expect((await places("Avenida Paulista")).status).toBe(502);
    await geocoding.reset();
    await geocoding.slow(7_000);
    const started = Date.now();
    expect(await places("Avenida Paulista")).toMatchObject({
      status: 502,
      body: { detail: "Geocoding service unavailable: timed out" },
    });
    expect(Date.now() - started).toBeLessThan(6_500);
  });

  it("reads a Nominatim answer without address details, and leaves out places without a position", () => {
    expect(placesFromNominatim([
      { display_name: "Sé, São Paulo, Brasil", lat: "-23.55", lon: "-46.63" },
      { display_name: "nowhere", lat: "north", lon: "-46.63" },
      { display_name: "MASP", lat: "-23.5614", lon: "-46.6559", address: { postcode: "01310200" } },
    ])).toEqual([
      { label: "Sé, São Paulo, Brasil", lat: -23.55, lng: -46.63, postcode: null },
      { label: "MASP", lat: -23.5614, lng: -46.6559, postcode: "01310-200" },
    ]);
    expect(() => placesFromNominatim({ error: "x" })).toThrow(/Geocoding service unavailable/);
  });
});

describe("POST /api/v1/deliveries by address", () => {
  const byAddress = (overrides: Record<string, unknown> = {}) =>
    deliveryBody({
      origin: undefined,
      destination: undefined,
      origin_address: "Praça da Sé, São Paulo",
      destination_address: "Avenida Paulista, 1578",
      payment_method: "invoice",
      customer: undefined,
      ...overrides,
    });

  it("creates a delivery from its addresses alone, each at the first place the service finds, priced as quoted", async () => {
    const res = await api("/api/v1/deliveries", { token: a.owner.token, body: byAddress() });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      origin_address: "Praça da Sé, São Paulo",
      origin: SE_SQUARE,
      destination_address: "Avenida Paulista, 1578",
      destination: MASP,
      status: "pending",
    });
    const quote = await api("/api/v1/routes/quote", {
      token: a.owner.token,
      body: { origin: SE_SQUARE, destination: MASP },
    });
    expect({ distance_m: res.body.distance_m, duration_s: res.body.duration_s, price: res.body.price }).toEqual(
      quote.body,
    );
    expect((await geocoding.state()).queries.sort()).toEqual(["Avenida Paulista, 1578", "Praça da Sé, São Paulo"]);
  });

  it("geocodes only the end sent without coordinates, and neither when both are sent", async () => {
    const one = await api("/api/v1/deliveries", { token: a.owner.token, body: byAddress({ origin: SE }) });
    expect(one.status).toBe(201);
    expect(one.body.destination).toEqual(MASP);
    expect((await geocoding.state()).queries).toEqual(["Avenida Paulista, 1578"]);
    await geocoding.reset();
    const given = { lat: -23.56, lng: -46.65 };
    const both = await api("/api/v1/deliveries", {
      token: a.owner.token,
      body: byAddress({ origin: SE, destination: given }),
    });
    expect(both.body.destination).toEqual(given);
    expect((await geocoding.state()).requests).toBe(0);
  });

  it("is 422 naming the address that cannot be found, and creates nothing", async () => {
    const before = await countDeliveries(a.companyId);
    const res = await api("/api/v1/deliveries", {
      token: a.owner.token,
      body: byAddress({ destination_address: "Rua Que Não Existe, 10" }),
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{
      type: "address_not_found",
      loc: ["body", "destination_address"],
      msg: "No place was found for this address: correct it, or send its coordinates",
      input: "Rua Que Não Existe, 10",
    }]);
    const both = await api("/api/v1/deliveries", {
      token: a.owner.token,
      body: byAddress({ origin_address: "Lugar Nenhum", destination_address: "Rua Que Não Existe, 10" }),
    });
    expect(both.status).toBe(422);
    expect(both.body.detail.map((item: any) => item.loc)).toEqual([
      ["body", "origin_address"],
      ["body", "destination_address"],
    ]);
    expect(await countDeliveries(a.companyId)).toBe(before);
    expect((await routing.state()).requests).toBe(0);
  });

  it("is 502 when the geocoding service is down, and charges and creates nothing", async () => {
    const before = await countDeliveries(a.companyId);
    await geocoding.down();
    const res = await createPixDelivery(a, { origin: undefined, destination: undefined });
    expect(res).toMatchObject({ status: 502, body: { detail: "Geocoding service unavailable: unreachable" } });
    expect(await countDeliveries(a.companyId)).toBe(before);
    expect((await gateway.state()).payments).toEqual([]);
  });

  it("is 502 within about 5 s when the geocoding service is slower", async () => {
    await geocoding.slow(7_000);
    const started = Date.now();
    const res = await api("/api/v1/deliveries", { token: a.owner.token, body: byAddress() });
    expect(res).toMatchObject({ status: 502, body: { detail: "Geocoding service unavailable: timed out" } });
    expect(Date.now() - started).toBeLessThan(6_500);
  });
});
