// A ViaCEP-compatible postcode service simulator (docs/contract.md, External services): GET /ws/{8 digits}/json/
// answers the CEP's street, neighbourhood and city as ViaCEP does, from the São Paulo gazetteer; a CEP it does not
// know is `{"erro": true}` (200, as ViaCEP answers it), anything but 8 digits a 400. Routed with Hono
// and runtime-neutral (a fetch handler), so the local stack serves it and the test suite wraps it in its loopback fake.
import { Hono } from "hono";
import { controlled } from "./controls.ts";
import { byCep, CITY, STATE, STATE_NAME } from "./gazetteer.ts";

export interface CepSimulator {
  fetch(req: Request): Promise<Response>;
  /** "ok", or "error" to answer every request 500. */
  mode: "ok" | "error";
  /** Milliseconds to wait before answering. */
  delayMs: number;
  requests: number;
}

export function createCepSimulator(): CepSimulator {
  const app = new Hono({ strict: false });
  const sim: CepSimulator = { mode: "ok", delayMs: 0, requests: 0, fetch: async (req) => await app.fetch(req) };
  app.use("*", controlled(sim));
  app.use("*", async (c, next) => {
    if (sim.mode === "error") return c.text("Internal Server Error", 500);
    await next();
  });
  app.all("/ws/:cep/json", (c) => {
    const cep = c.req.param("cep");
    // ViaCEP's answer to a malformed CEP is a 400 page, not JSON.
    if (!/^\d{8}$/.test(cep)) {
      return new Response("<h2>Bad Request (400)</h2>", { status: 400, headers: { "content-type": "text/html" } });
    }
    const place = byCep(cep);
    if (!place) return Response.json({ erro: true });
    return Response.json({
      cep: place.cep,
      logradouro: place.street,
      complemento: place.complement,
      unidade: "",
      bairro: place.neighborhood,
      localidade: CITY,
      uf: STATE,
      estado: STATE_NAME,
      regiao: "Sudeste",
      ibge: "3550308",
      gia: "1004",
      ddd: "11",
      siafi: "7107",
    });
  });
  app.notFound(() => new Response("Not Found", { status: 404 }));
  return sim;
}
