// Reading request bodies and headers the way GoTrue does.
import type { z } from "zod";
import { errors } from "./errors.ts";

/**
 * The JSON body, checked against `schema`. GoTrue decodes bodies into typed
 * structs, so a malformed body and a field of the wrong type are both
 * `bad_json`; unknown fields are ignored.
 */
export async function readJson<T extends z.ZodType>(
  req: Request,
  schema: T,
  { emptyIsObject = false } = {},
): Promise<z.infer<T>> {
  const text = await req.text();
  let value: unknown;
  if (emptyIsObject && text.trim() === "") {
    value = {};
  } else {
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw errors.badJson((error as Error).message);
    }
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw errors.badJson(`${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return result.data;
}

/** The bearer token of the Authorization header, as GoTrue's `^(?:B|b)earer (\S+$)` reads it. */
export function bearerToken(req: Request): string | null {
  const match = /^[Bb]earer (\S+)$/.exec(req.headers.get("authorization") ?? "");
  return match ? match[1] : null;
}
