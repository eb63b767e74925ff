// The Supabase Auth admin API, as the service role: creating the auth user
// behind a company owner or a driver, and removing it again when the rest of
// the operation fails (all-or-nothing).
import { env } from "../_shared/env.ts";
import { HttpError } from "../_shared/errors.ts";
import { timeoutSignal } from "../_shared/timeout.ts";

function headers(): HeadersInit {
  const key = env().SUPABASE_SERVICE_ROLE_KEY;
  return { apikey: key, authorization: `Bearer ${key}`, "content-type": "application/json" };
}

/** The identity provider's answer, its JSON body read within the same deadline ({} when it has none). */
interface Answer {
  ok: boolean;
  status: number;
  // deno-lint-ignore no-explicit-any
  body: Record<string, any>;
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const timeout = timeoutSignal(10_000);
  try {
    const res = await fetch(`${env().SUPABASE_URL}/auth/v1/admin/users${path}`, {
      method,
      headers: headers(),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: timeout.signal,
    });
    return { ok: res.ok, status: res.status, body: await res.json().catch(() => ({})) };
  } catch {
    throw new HttpError(502, "The identity provider is unreachable");
  } finally {
    timeout.clear();
  }
}

export interface NewUser {
  email: string;
  password: string;
  user_metadata?: Record<string, unknown>;
}

/** Creates a confirmed e-mail user; 409 when the e-mail is taken. */
export async function createAuthUser(user: NewUser): Promise<{ id: string }> {
  const { ok, status, body } = await call("POST", "", { ...user, email_confirm: true });
  if (ok && typeof body.id === "string") return { id: body.id };
  const code = body.error_code ?? body.code;
  if (code === "email_exists" || status === 409) {
    throw new HttpError(409, "A user with this e-mail address already exists");
  }
  if (status === 422 || status === 400) {
    throw new HttpError(422, body.msg ?? body.message ?? "The identity provider refused the user");
  }
  throw new HttpError(502, "The identity provider failed");
}

export async function deleteAuthUser(id: string): Promise<void> {
  const res = await call("DELETE", `/${id}`);
  if (!res.ok && res.status !== 404) {
    console.error(JSON.stringify({ event: "auth_user_cleanup_failed", user_id: id, status: res.status }));
  }
}

/** Runs `work` for a freshly created auth user; removes the user if `work` fails. */
export async function withNewAuthUser<T>(user: NewUser, work: (userId: string) => Promise<T>): Promise<T> {
  const { id } = await createAuthUser(user);
  try {
    return await work(id);
  } catch (error) {
    await deleteAuthUser(id);
    throw error;
  }
}
