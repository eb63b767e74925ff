// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Test helpers over the running local stack: HTTP calls, sign-in, companies
// with a user of every role, and direct database access.
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import postgres from "postgres";
import { inject } from "vitest";

export const stack = () => inject("stack");

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface CallOptions {
  method?: string;
  token?: string;
  body?: unknown;
  /** Sent as is (not JSON-encoded). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

export async function api<T = any>(path: string, options: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  const res = await fetch(`${stack().apiUrl}${path}`, {
    method: options.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    body: body as BodyInit | undefined,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch { /* not JSON */ }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/**
 * A GET sent from `localAddress` (any 127.x.y.z: Linux routes them all to the loopback), so that the stack sees it
 * come from that client address, as the platform's proxy reports it (the last hop of X-Forwarded-For).
 */
export function apiFrom<T = any>(
  localAddress: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<ApiResponse<T>> {
  const url = new URL(path, stack().apiUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, localAddress, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : null;
          } catch { /* not JSON */ }
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(", ") : value);
          }
          resolve({ status: res.statusCode ?? 0, body: body as T, headers: answerHeaders });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

let pool: postgres.Sql | undefined;
/** The database as its superuser, for arranging and inspecting state (never for mocking it). */
export function db(): postgres.Sql {
  pool ??= postgres(stack().dbUrl, { max: 4, onnotice: () => {} });
  return pool;
}

export function uniqueEmail(prefix = "user"): string {
  return `${prefix}-${randomUUID().slice(0, 12)}@test.example`;
}

export interface Session {
  access_token: string;
  refresh_token: string;
}

export async function signIn(email: string, password: string): Promise<Session> {
  const res = await api<Session>("/auth/v1/token?grant_type=password", {
    body: { email, password },
    headers: { apikey: stack().anonKey },
  });
  if (res.status !== 200) throw new Error(`sign-in of ${email} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a confirmed auth user through the Auth admin API. */
export async function createUser(email: string, password: string, userMetadata: Record<string, unknown> = {}) {
  const res = await api<{ id: string }>("/auth/v1/admin/users", {
    body: { email, password, email_confirm: true, user_metadata: userMetadata },
    headers: { apikey: stack().serviceRoleKey, authorization: `Bearer ${stack().serviceRoleKey}` },
  });
  if (res.status !== 200) throw new Error(`creating ${email} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export interface Member {
  userId: string;
  email: string;
  password: string;
  token: string;
}

export interface DriverMember extends Member {
  driverId: string;
}

export interface TestCompany {
  companyId: string;
  owner: Member;
  admin: Member;
  /** The older token form: role `authenticated`, `user_metadata.role = admin`. */
  legacyAdmin: Member;
  driver: DriverMember;
  driver2: DriverMember;
}

const PASSWORD = "correct-horse-battery";

async function addMember(companyId: string, role: "company_admin" | "admin", label: string): Promise<Member> {
  const email = uniqueEmail(label);
  const user = await createUser(email, PASSWORD, role === "admin" ? { role: "admin" } : {});
  await db()`insert into public.memberships (user_id, company_id, role) values (${user.id}, ${companyId}, ${role})`;
  return { userId: user.id, email, password: PASSWORD, token: (await signIn(email, PASSWORD)).access_token };
}

async function addDriver(ownerToken: string, label: string): Promise<DriverMember> {
  const email = uniqueEmail(label);
  const res = await api("/api/v1/drivers", {
    token: ownerToken,
    body: { name: `Driver ${label}`, email, password: PASSWORD },
  });
  if (res.status !== 201) throw new Error(`creating driver failed: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    userId: res.body.user_id,
    driverId: res.body.id,
    email,
    password: PASSWORD,
    token: (await signIn(email, PASSWORD)).access_token,
  };
}

/** A new company through the public API, with one user of each role, all signed in. */
export async function createCompany(name = "Test Co"): Promise<TestCompany> {
  const email = uniqueEmail("owner");
  const res = await api("/api/v1/companies/register", {
    body: { company_name: name, owner_name: "Owner", email, password: PASSWORD },
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  const companyId = res.body.company_id as string;
  const owner = {
    userId: res.body.user_id,
    email,
    password: PASSWORD,
    token: (await signIn(email, PASSWORD)).access_token,
  };
  const [admin, legacyAdmin, driver, driver2] = await Promise.all([
    addMember(companyId, "company_admin", "admin"),
    addMember(companyId, "admin", "legacy"),
    addDriver(owner.token, "driver"),
    addDriver(owner.token, "driver2"),
  ]);
  return { companyId, owner, admin, legacyAdmin, driver, driver2 };
}

/** Configures the gateway for a company; returns the plaintext it stored. */
export async function configureGateway(company: TestCompany, apiKey = `$aact_hmlg_${randomUUID()}`) {
  const webhookSecret = `whsec-${randomUUID()}`;
  const res = await api("/api/v1/companies/me/gateway-config", {
    token: company.owner.token,
    body: { api_key: apiKey, webhook_secret: webhookSecret },
  });
  if (res.status !== 200) throw new Error(`gateway config failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { apiKey, webhookSecret };
}
