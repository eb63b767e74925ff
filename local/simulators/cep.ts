// A ViaCEP-compatible postcode service simulator (docs/contract.md, External services): GET /ws/{8 digits}/json/
// answers the CEP's street, neighbourhood and city as ViaCEP does, from the São Paulo gazetteer; a CEP it does not
// know is `{"erro": true}` (200, as ViaCEP answers it), anything but 8 digits a 400. Runtime-neutral (a fetch
// handler), so the local stack serves it and the test suite wraps it in its loopback fake.
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
  const sim: CepSimulator = {
    mode: "ok",
    delayMs: 0,
    requests: 0,
    async fetch(req: Request): Promise<Response> {
      sim.requests++;
      if (sim.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, sim.delayMs));
      if (sim.mode === "error") return new Response("Internal Server Error", { status: 500 });
      const match = /\/ws\/([^/]*)\/json\/?$/.exec(new URL(req.url).pathname);
      if (!match) return new Response("Not Found", { status: 404 });
      // ViaCEP's answer to a malformed CEP is a 400 page, not JSON.
      if (!/^\d{8}$/.test(match[1])) {
        return new Response("<h2>Bad Request (400)</h2>", { status: 400, headers: { "content-type": "text/html" } });
      }
      const place = byCep(match[1]);
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
    },
  };
  return sim;
}
