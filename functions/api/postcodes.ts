// The postcode service client (docs/contract.md, External services), speaking ViaCEP's API:
// GET {base}/ws/{8 digits}/json/ → {cep, logradouro, bairro, localidade, uf}, or {"erro": true} for a CEP it does
// not know. Down, slower than 5 s, or any other answer: 502. Runtime-neutral (fetch only, no Deno globals), so
// vitest exercises it too.
import { HttpError } from "../_shared/errors.ts";
import { isTimeout, timeoutSignal } from "../_shared/timeout.ts";

export const POSTCODE_TIMEOUT_MS = 5_000;

/** A CEP's address, as GET /api/v1/postcodes/{cep} answers it. */
export interface Postcode {
  /** 00000-000, as the Correios write it. */
  cep: string;
  street: string;
  neighborhood: string;
  city: string;
  /** The state's two letters (SP). */
  state: string;
}

export class PostcodeServiceUnavailable extends HttpError {
  constructor(reason: string) {
    super(502, `Postcode service unavailable: ${reason}`);
  }
}

/** 01310-200 from its 8 digits. */
export const formatCep = (digits: string) => `${digits.slice(0, 5)}-${digits.slice(5)}`;

/** ViaCEP's answer as ours; null for its `erro` (a CEP it does not know); anything else is the service failing. */
export function postcodeFromViaCep(
  answer: unknown,
  digits: string,
): Postcode | null {
  const body = answer as Record<string, unknown> | null;
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new PostcodeServiceUnavailable("answered without an address");
  }
  // ViaCEP has answered both `true` and `"true"`.
  if (body.erro === true || body.erro === "true") return null;
  const text = (name: string) => {
    const value = body[name];
    if (value === undefined || value === null) return "";
    if (typeof value !== "string") {
      throw new PostcodeServiceUnavailable(
        `answered a ${name} that is not text`,
      );
    }
    return value.trim();
  };
  const [city, state] = [text("localidade"), text("uf")];
  if (!city || !state) {
    throw new PostcodeServiceUnavailable("answered without a city");
  }
  // A town of one CEP has no street or neighbourhood: they are "" then.
  return {
    cep: formatCep(digits),
    street: text("logradouro"),
    neighborhood: text("bairro"),
    city,
    state,
  };
}

/** The address of a CEP (8 digits), null when the service does not know it; throws PostcodeServiceUnavailable (502). */
export async function lookUpPostcode(
  baseUrl: string,
  digits: string,
  timeoutMs = POSTCODE_TIMEOUT_MS,
): Promise<Postcode | null> {
  // One deadline for the whole exchange, the body included.
  const timeout = timeoutSignal(timeoutMs);
  try {
    let res: Response;
    try {
      res = await fetch(`${baseUrl.replace(/\/+$/, "")}/ws/${digits}/json/`, {
        signal: timeout.signal,
        headers: { accept: "application/json" },
      });
    } catch (error) {
      throw new PostcodeServiceUnavailable(
        isTimeout(error) ? "timed out" : "unreachable",
      );
    }
    let answer: unknown;
    try {
      answer = await res.json();
    } catch (error) {
      if (isTimeout(error)) throw new PostcodeServiceUnavailable("timed out");
      throw new PostcodeServiceUnavailable(
        `HTTP ${res.status} without a JSON body`,
      );
    }
    if (!res.ok) throw new PostcodeServiceUnavailable(`HTTP ${res.status}`);
    return postcodeFromViaCep(answer, digits);
  } finally {
    timeout.clear();
  }
}
