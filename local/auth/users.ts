// Users and their e-mail identities in auth.users / auth.identities, written
// as GoTrue writes them and answered in GoTrue's JSON shape.
import postgres from "postgres";
import { authTransaction, jsonb, NIL_UUID } from "./db.ts";
import { errors } from "./errors.ts";
import { bcryptPool, truncatedByBcrypt } from "./passwords.ts";
import { parseGoDuration } from "./project.ts";

type Db = postgres.Sql | postgres.TransactionSql;
type Json = Record<string, unknown>;

export interface UserRow {
  id: string;
  aud: string;
  role: string;
  email: string | null;
  encrypted_password: string | null;
  email_confirmed_at: Date | null;
  invited_at: Date | null;
  confirmation_token: string | null;
  confirmation_sent_at: Date | null;
  recovery_token: string | null;
  reauthentication_token: string | null;
  reauthentication_sent_at: Date | null;
  phone: string | null;
  phone_confirmed_at: Date | null;
  confirmed_at: Date | null;
  last_sign_in_at: Date | null;
  raw_app_meta_data: Json | null;
  raw_user_meta_data: Json | null;
  created_at: Date;
  updated_at: Date;
  banned_until: Date | null;
  is_anonymous: boolean;
  recovery_sent_at: Date | null;
  email_change: string | null;
  email_change_sent_at: Date | null;
  email_change_token_new: string | null;
  email_change_token_current: string | null;
  email_change_confirm_status: number | null;
}

interface IdentityRow {
  id: string;
  provider_id: string;
  user_id: string;
  identity_data: Json;
  provider: string;
  last_sign_in_at: Date | null;
  created_at: Date;
  updated_at: Date;
  email: string | null;
}

export interface User extends UserRow {
  identities: IdentityRow[];
}

/** The `aud` and `role` Supabase configures GoTrue with. */
const AUDIENCE = "authenticated";
const DEFAULT_ROLE = "authenticated";
/** Supabase's default `minimum_password_length`. */
const MIN_PASSWORD_LENGTH = 6;

const iso = (date: Date | null) => date?.toISOString();

/** The user object as GoTrue serializes it (absent timestamps are omitted, absent e-mail/phone are ""). */
export function userJson(user: User): Json {
  return {
    id: user.id,
    aud: user.aud,
    role: user.role,
    email: user.email ?? "",
    email_confirmed_at: iso(user.email_confirmed_at),
    invited_at: iso(user.invited_at),
    phone: user.phone ?? "",
    phone_confirmed_at: iso(user.phone_confirmed_at),
    confirmation_sent_at: iso(user.confirmation_sent_at),
    confirmed_at: iso(user.confirmed_at),
    recovery_sent_at: iso(user.recovery_sent_at),
    new_email: user.email_change || undefined,
    email_change_sent_at: iso(user.email_change_sent_at),
    reauthentication_sent_at: iso(user.reauthentication_sent_at),
    last_sign_in_at: iso(user.last_sign_in_at),
    app_metadata: user.raw_app_meta_data ?? {},
    user_metadata: user.raw_user_meta_data ?? {},
    identities: user.identities.map(identityJson),
    created_at: iso(user.created_at),
    updated_at: iso(user.updated_at),
    banned_until: iso(user.banned_until),
    is_anonymous: user.is_anonymous,
  };
}

/** GoTrue swaps the names for backward compatibility: `id` is the provider's id, `identity_id` the row's. */
function identityJson(identity: IdentityRow): Json {
  return {
    identity_id: identity.id,
    id: identity.provider_id,
    user_id: identity.user_id,
    identity_data: identity.identity_data,
    provider: identity.provider,
    last_sign_in_at: iso(identity.last_sign_in_at),
    created_at: iso(identity.created_at),
    updated_at: iso(identity.updated_at),
    email: identity.email ?? undefined,
  };
}

export function isBanned(user: UserRow): boolean {
  return user.banned_until !== null && user.banned_until.getTime() > Date.now();
}

export async function withIdentities(db: Db, user: UserRow | undefined): Promise<User | null> {
  if (!user) return null;
  const identities = await db<IdentityRow[]>`
    select * from auth.identities where user_id = ${user.id} order by created_at, id`;
  return { ...user, identities };
}

export async function findUserById(db: Db, id: string): Promise<User | null> {
  const [user] = await db<UserRow[]>`select * from auth.users where id = ${id}`;
  return await withIdentities(db, user);
}

export async function findUserByEmail(db: Db, email: string): Promise<User | null> {
  const [user] = await db<UserRow[]>`
    select * from auth.users
    where lower(email) = ${email.toLowerCase()} and aud = ${AUDIENCE} and not is_sso_user`;
  return await withIdentities(db, user);
}

// --- passwords ---------------------------------------------------------------

let dummyHash: Promise<string> | undefined;

/**
 * Whether `password` matches the stored bcrypt hash. Without a hash (unknown
 * user, or no password) a dummy hash is still compared, so the answer takes
 * as long either way and does not reveal which e-mail addresses exist.
 */
export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  dummyHash ??= bcryptPool.hash("not-a-password");
  const matches = await bcryptPool.compare(password, hash || await dummyHash);
  return matches && Boolean(hash);
}

/** bcrypt reads only the first 72 bytes; GoTrue refuses longer passwords rather than ignore the rest. */
export function hashPassword(password: string, tooLong: () => Error): Promise<string> {
  if (truncatedByBcrypt(password)) throw tooLong();
  return bcryptPool.hash(password);
}

// --- admin writes ------------------------------------------------------------

export interface CreateUserParams {
  id?: string;
  email?: string;
  password?: string | null;
  email_confirm?: boolean;
  role?: string;
  user_metadata?: Json | null;
  app_metadata?: Json | null;
  ban_duration?: string;
}

/**
 * POST /admin/users: the user and its e-mail identity, in one transaction.
 * The slow bcrypt hash is computed before the transaction opens.
 */
export async function createUser(sql: postgres.Sql, params: CreateUserParams): Promise<User> {
  if (!params.email) throw errors.missingEmail();
  const email = validateEmail(params.email);
  const id = params.id === undefined ? crypto.randomUUID() : validateCustomId(params.id);
  const bannedUntil = banExpiry(params.ban_duration, null);
  const encryptedPassword = await hashPassword(params.password || randomPassword(), errors.passwordTooLongForBcrypt);
  const confirmed = params.email_confirm === true;
  return await authTransaction(sql, (tx) =>
    insertUser(tx, {
      id,
      email,
      encryptedPassword,
      confirmed,
      role: params.role,
      appMetadata: params.app_metadata,
      userMetadata: params.user_metadata,
      bannedUntil,
    }));
}

export interface NewUser {
  id?: string;
  /** Already validated (validateEmail). */
  email: string;
  /** A bcrypt hash, or "" for a user without a password (an invited one), as GoTrue stores it. */
  encryptedPassword: string;
  confirmed: boolean;
  role?: string;
  appMetadata?: Json | null;
  userMetadata?: Json | null;
  /** Extra fields of the identity's data (sign-up copies its `data` there). */
  identityData?: Json | null;
  bannedUntil?: Date | null;
}

/** Inserts a user and its e-mail identity, as GoTrue's signupNewUser and createNewIdentity do. */
export async function insertUser(tx: postgres.TransactionSql, params: NewUser): Promise<User> {
  const appMetadata = mergeMetadata({ provider: "email", providers: ["email"] }, params.appMetadata);
  // GoTrue records a confirmation in the user's metadata too.
  const userMetadata = mergeMetadata(params.userMetadata ?? {}, params.confirmed ? { email_verified: true } : null);
  let user: UserRow;
  try {
    // The token columns are '' rather than null because GoTrue cannot read null there.
    [user] = await tx<UserRow[]>`
      insert into auth.users (
        instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
        raw_app_meta_data, raw_user_meta_data, banned_until, is_anonymous, created_at, updated_at,
        confirmation_token, recovery_token, email_change_token_new, email_change
      ) values (
        ${NIL_UUID}, ${params.id ?? crypto.randomUUID()}, ${AUDIENCE}, ${params.role?.trim() || DEFAULT_ROLE},
        ${params.email}, ${params.encryptedPassword}, case when ${params.confirmed} then now() end,
        ${jsonb(tx, appMetadata)}, ${jsonb(tx, userMetadata)}, ${params.bannedUntil ?? null}, false, now(), now(),
        '', '', '', ''
      )
      returning *`;
  } catch (error) {
    if (error instanceof postgres.PostgresError && error.constraint_name === "users_email_partial_key") {
      throw errors.emailExists();
    }
    throw error;
  }
  const identityData = {
    ...params.identityData,
    sub: user.id,
    email: params.email,
    email_verified: false,
    phone_verified: false,
  };
  await tx`
    insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
    values (${user.id}, ${user.id}, ${jsonb(tx, identityData)}, 'email', now(), now(), now())`;
  return (await withIdentities(tx, user))!;
}

/** GoTrue's User.Confirm, and its sign-up verification's mark on the e-mail identity. */
export async function confirmUser(tx: postgres.TransactionSql, userId: string): Promise<void> {
  await tx`update auth.users set confirmation_token = '', email_confirmed_at = now(),
             raw_user_meta_data = coalesce(raw_user_meta_data, '{}') || '{"email_verified": true}', updated_at = now()
           where id = ${userId}`;
  await tx`update auth.identities set identity_data = identity_data || '{"email_verified": true}', updated_at = now()
           where user_id = ${userId} and provider = 'email'
             and identity_data ->> 'email' = (select email from auth.users where id = ${userId})`;
}

/** A password nobody knows, for users created without one (GoTrue's password.Generate). */
export function randomPassword(): string {
  return [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** What an admin update may change: everything creation takes but the id and the e-mail. */
export type UpdateUserParams = Omit<CreateUserParams, "id" | "email">;

/**
 * PUT /admin/users/{id}. Metadata is merged key by key (a null value removes
 * the key), and a new password signs the user out of every session, as in
 * GoTrue.
 */
export async function updateUser(sql: postgres.Sql, id: string, params: UpdateUserParams): Promise<User> {
  const newPassword = typeof params.password === "string"
    ? await hashPassword(checkPasswordStrength(params.password), errors.passwordTooLong)
    : null;
  const confirm = params.email_confirm === true;

  return await authTransaction(sql, async (tx) => {
    const [current] = await tx<UserRow[]>`select * from auth.users where id = ${id} for update`;
    if (!current) throw errors.userNotFound();
    const userMetadata = mergeMetadata(
      mergeMetadata(current.raw_user_meta_data ?? {}, confirm ? { email_verified: true } : null),
      params.user_metadata,
    );
    const [user] = await tx<UserRow[]>`
      update auth.users set
        role = ${params.role?.trim() || current.role},
        encrypted_password = ${newPassword ?? current.encrypted_password},
        email_confirmed_at = case when ${confirm} then now() else email_confirmed_at end,
        raw_app_meta_data = ${jsonb(tx, mergeMetadata(current.raw_app_meta_data ?? {}, params.app_metadata))},
        raw_user_meta_data = ${jsonb(tx, userMetadata)},
        banned_until = ${banExpiry(params.ban_duration, current.banned_until)},
        updated_at = now()
      where id = ${id}
      returning *`;
    if (newPassword) await tx`delete from auth.sessions where user_id = ${id}`;
    return (await withIdentities(tx, user))!;
  });
}

/** DELETE /admin/users/{id}: identities and sessions (and their refresh tokens) go with the user. */
export async function deleteUser(sql: postgres.Sql, id: string): Promise<void> {
  await authTransaction(sql, async (tx) => {
    await tx`delete from auth.users where id = ${id}`;
  });
}

export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}

function validateCustomId(id: string): string {
  if (!isUuid(id)) throw errors.idNotUuid();
  if (/^[0-]+$/.test(id)) throw errors.idNil();
  return id.toLowerCase();
}

/** GoTrue's checks (the HTML5 address grammar), and it stores addresses in lower case. */
export function validateEmail(email: string): string {
  if (email === "") throw errors.emailRequired();
  if (email.length > 255) throw errors.emailTooLong();
  const pattern =
    /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
  if (!pattern.test(email)) throw errors.invalidEmail();
  return email.toLowerCase();
}

export function checkPasswordStrength(password: string, minLength = MIN_PASSWORD_LENGTH): string {
  if (new TextEncoder().encode(password).length > 72) throw errors.passwordTooLong();
  if (password.length < minLength) throw errors.weakPassword(minLength);
  return password;
}

export function mergeMetadata(base: Json, updates: Json | null | undefined): Json {
  const merged = { ...base };
  for (const [key, value] of Object.entries(updates ?? {})) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** `ban_duration` is a Go duration ("24h", "90m"); "none" lifts a ban; absent keeps `current`. */
function banExpiry(banDuration: string | undefined, current: Date | null): Date | null {
  if (banDuration === undefined || banDuration === "") return current;
  if (banDuration === "none") return null;
  const ms = parseGoDuration(banDuration);
  if (ms === null) throw errors.invalidBanDuration(banDuration);
  return ms === 0 ? null : new Date(Date.now() + ms);
}
