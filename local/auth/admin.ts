// The admin user endpoints auth-js's `auth.admin` calls, for service_role
// callers only (GoTrue's admin.go).
import { z } from "zod";
import type { Handler, RequestContext } from "./context.ts";
import { NIL_UUID } from "./db.ts";
import { errors } from "./errors.ts";
import { requireAdmin } from "./guard.ts";
import { log } from "./log.ts";
import { readJson } from "./request.ts";
import {
  createUser,
  deleteUser,
  findUserById,
  isUuid,
  updateUser,
  type User,
  userJson,
  type UserRow,
  withIdentities,
} from "./users.ts";

const metadata = z.record(z.string(), z.unknown()).nullable().optional();

/** GoTrue's AdminUserParams; fields this provider does not implement are kept so they can be refused. */
const AdminUserBody = z.looseObject({
  id: z.string().optional(),
  email: z.string().optional(),
  password: z.string().nullable().optional(),
  email_confirm: z.boolean().optional(),
  role: z.string().optional(),
  user_metadata: metadata,
  app_metadata: metadata,
  ban_duration: z.string().optional(),
});

const AdminDeleteBody = z.object({ should_soft_delete: z.boolean().optional() });

/** Refused rather than ignored, so a caller never believes a change was made that was not. */
const UNSUPPORTED_ON_CREATE = ["phone", "phone_confirm", "password_hash", "aud"];
const UNSUPPORTED_ON_UPDATE = [...UNSUPPORTED_ON_CREATE, "email"];

function refuseUnsupported(body: Record<string, unknown>, fields: string[]): void {
  const given = fields.find((field) => ![undefined, null, "", false].includes(body[field] as never));
  if (given) throw errors.unsupported(given);
}

/** The user named in the path, as GoTrue's loadUser middleware finds it. */
async function pathUser(ctx: RequestContext): Promise<User> {
  const id = ctx.params.user_id ?? "";
  if (!isUuid(id)) throw errors.userIdNotUuid();
  const user = await findUserById(ctx.options.sql, id);
  if (!user) throw errors.userNotFound();
  return user;
}

export const adminCreateUser: Handler = async (ctx) => {
  await requireAdmin(ctx);
  const body = await readJson(ctx.req, AdminUserBody);
  refuseUnsupported(body, UNSUPPORTED_ON_CREATE);
  const user = await createUser(ctx.options.sql, body);
  log("admin_user_created", { user_id: user.id });
  return Response.json(userJson(user));
};

export const adminGetUser: Handler = async (ctx) => {
  await requireAdmin(ctx);
  return Response.json(userJson(await pathUser(ctx)));
};

export const adminUpdateUser: Handler = async (ctx) => {
  await requireAdmin(ctx);
  const { id } = await pathUser(ctx);
  const body = await readJson(ctx.req, AdminUserBody);
  refuseUnsupported(body, UNSUPPORTED_ON_UPDATE);
  const user = await updateUser(ctx.options.sql, id, body);
  log("admin_user_updated", { user_id: id, password_changed: typeof body.password === "string" });
  return Response.json(userJson(user));
};

/** Hard delete only; GoTrue answers an empty object. */
export const adminDeleteUser: Handler = async (ctx) => {
  await requireAdmin(ctx);
  const { id } = await pathUser(ctx);
  const body = await readJson(ctx.req, AdminDeleteBody, { emptyIsObject: true });
  if (body.should_soft_delete) throw errors.unsupported("should_soft_delete");
  await deleteUser(ctx.options.sql, id);
  log("admin_user_deleted", { user_id: id });
  return Response.json({});
};

/**
 * GET /admin/users, auth-js listUsers(): a page of the audience's users,
 * newest first (GoTrue's adminUsers), with `Link` (next, last) and
 * `X-Total-Count` headers from which auth-js reads its pagination.
 */
export const adminListUsers: Handler = async (ctx) => {
  await requireAdmin(ctx);
  const number = (name: string, fallback: number) => {
    const text = ctx.url.searchParams.get(name);
    if (text === null || text === "") return fallback;
    if (!/^\d+$/.test(text)) {
      throw errors.badPagination(`strconv.ParseUint: parsing ${JSON.stringify(text)}: invalid syntax`);
    }
    return Number(text);
  };
  const page = number("page", 1);
  const perPage = number("per_page", 50);
  // Pop's paginator, under GoTrue, treats a page or page size below 1 as its defaults.
  const [effectivePage, effectivePerPage] = [Math.max(page, 1), perPage < 1 ? 20 : perPage];
  const filter = ctx.url.searchParams.get("filter") ?? "";
  const like = `%${filter}%`;
  const { sql } = ctx.options;
  const where = filter
    ? sql`instance_id = ${NIL_UUID} and aud = 'authenticated' and (email like ${like} or raw_user_meta_data->>'full_name' ilike ${like})`
    : sql`instance_id = ${NIL_UUID} and aud = 'authenticated'`;
  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from auth.users where ${where}`;
  const rows = await sql<UserRow[]>`
    select * from auth.users where ${where}
    order by created_at desc
    limit ${effectivePerPage} offset ${(effectivePage - 1) * effectivePerPage}`;
  const users: User[] = [];
  for (const row of rows) users.push((await withIdentities(sql, row))!);

  const totalPages = Math.ceil(count / Math.max(perPage, 1));
  const link = (n: number) => {
    const query = new URLSearchParams(ctx.url.searchParams);
    query.set("page", String(n));
    const sorted = new URLSearchParams([...query].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return `</admin/users?${sorted}>`;
  };
  const links = [...(totalPages > page ? [`${link(page + 1)}; rel="next"`] : []), `${link(totalPages)}; rel="last"`];
  return Response.json({ users: users.map(userJson), aud: "authenticated" }, {
    headers: { link: links.join(", "), "x-total-count": String(count) },
  });
};

/**
 * The user's MFA factors (auth-js admin.mfa.listFactors, deleteFactor): none
 * can be enrolled here, so the list is empty and any factor is not found.
 */
export const adminUserFactors: Handler = async (ctx) => {
  await requireAdmin(ctx);
  await pathUser(ctx);
  if (ctx.req.method === "GET") return Response.json([]);
  if (!isUuid(ctx.params.factor_id ?? "")) throw errors.factorIdNotUuid();
  throw errors.factorNotFound();
};

/** The user's passkeys (auth-js admin passkey calls): passkeys are off, so there are none. */
export const adminUserPasskeys: Handler = async (ctx) => {
  await requireAdmin(ctx);
  await pathUser(ctx);
  if (ctx.req.method === "GET") return Response.json([]);
  throw errors.passkeyNotFound();
};
