-- Tenancy: companies, the membership that gives each user one company and one
-- role, the app roles as Postgres roles, the helpers every policy and function
-- authorizes with, and the custom access token hook (docs/architecture.md, Roles).
--
-- Every function in these files with `set search_path` is PL/pgSQL, helpers
-- included: Postgres 17 can neither inline an SQL function that has a `set`
-- clause nor keep a plan for it, so each call would parse and plan its body
-- again; PL/pgSQL plans each statement once per connection. A scalar read from
-- a key is `return (select ...)`. pgTAP 030 holds the rule.

-- Section: defaults and roles

-- What is not granted cannot be called: functions created from here on are
-- executable by nobody until a grant names the caller. (PUBLIC's execute
-- right is a global default, which only a global statement can take away.)
alter default privileges revoke execute on functions from public;
alter default privileges in schema public revoke execute on functions from anon, authenticated;
alter default privileges in schema public revoke all on tables from anon, authenticated;
alter default privileges in schema public revoke all on sequences from anon, authenticated;

create schema if not exists private;
comment on schema private is 'Helpers and internals; not exposed through the API.';
revoke all on schema private from public;
-- Policies run as the caller, so the caller needs to reach the helpers they call.
grant usage on schema private to authenticated, service_role;
alter default privileges in schema private revoke execute on functions from anon, authenticated;

-- The app roles: PostgREST and our proxy `set local role` to the token's role claim.
do $$
declare
  r text;
begin
  foreach r in array array['company_owner', 'company_admin', 'driver', 'integration'] loop
    if not exists (select from pg_roles where rolname = r) then
      execute format('create role %I nologin inherit', r);
    end if;
    execute format('grant authenticated to %I', r);
    execute format('grant %I to authenticator', r);
    execute format('grant %I to postgres', r);
  end loop;
end
$$;

-- Section: tables

create table public.companies (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(btrim(name)) between 1 and 200),
  created_at timestamptz not null default now()
);
comment on table public.companies is 'Tenants: every user acts within exactly one company.';
alter table public.companies enable row level security;

create table public.memberships (
  user_id uuid primary key references auth.users (id) on delete cascade,
  company_id uuid not null references public.companies (id) on delete cascade,
  -- `admin` is the older form's role (docs/architecture.md, Roles): it rides in user_metadata, never in the role claim.
  role text not null check (role in ('company_owner', 'company_admin', 'driver', 'admin')),
  created_at timestamptz not null default now()
);
comment on table public.memberships is 'Which company a user belongs to and with which role; the only source of authority.';
create index memberships_company_id_idx on public.memberships (company_id);
alter table public.memberships enable row level security;

-- Section: helpers

-- The caller's membership, provided the token agrees with it. A new-form token
-- must carry the membership's role and company; an older-form token
-- (role `authenticated`) gets exactly the membership's rights, whatever its
-- user_metadata says. So a claim can narrow, never widen.
create function private.membership()
returns table (company_id uuid, role text)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- An API key (18_integrations.sql): the edge puts the key's id in `sub`; it
  -- acts for its company while it is not revoked, with the key role alone.
  if (auth.jwt() ->> 'role') = any (private.integrations()) then
    return query
      select k.company_id, auth.jwt() ->> 'role'
      from public.api_keys k
      where k.id = auth.uid() and k.revoked_at is null
        and k.company_id = (auth.jwt() ->> 'company_id')::uuid;
    return;
  end if;
  return query
    select m.company_id, m.role
    from public.memberships m
    where m.user_id = auth.uid()
      and (auth.jwt() ->> 'role') in (m.role, 'authenticated')
      and coalesce((auth.jwt() ->> 'company_id')::uuid = m.company_id, true);
end;
$$;
comment on function private.membership() is 'The caller''s company and effective role, when the token agrees with the membership.';

create function private.company_id()
returns uuid
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select m.company_id from private.membership() m);
end;
$$;
comment on function private.company_id() is 'The caller''s company, or null.';

create function private.app_role()
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select m.role from private.membership() m);
end;
$$;
comment on function private.app_role() is 'The caller''s effective role: company_owner, company_admin, driver, admin (older form), or null.';

-- The role sets, each named once (docs/architecture.md, Roles); every policy and
-- function that means one of them calls it, and every /api/v1 route names one
-- (functions/_shared/role-sets.ts reads each by its function's name: no list of
-- roles is kept outside SQL).
create function private.delivery_managers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['company_owner', 'company_admin', 'admin'] || private.integrations(); end; $$;
comment on function private.delivery_managers() is 'Roles that manage deliveries and prices and see drivers and their positions: owner, company admin, legacy admin, and API keys (within their scopes, checked by the edge).';

-- API keys act with this role (18_integrations.sql); the edge narrows each key
-- to its scopes. It is in no set that reaches money (wallets, withdrawals,
-- gateway configuration, billing).
create function private.integrations()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['integration']; end; $$;
comment on function private.integrations() is 'The role an API key acts with for its company.';

create function private.company_managers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['company_owner', 'company_admin']; end; $$;
comment on function private.company_managers() is 'Roles that also manage drivers, assign deliveries and read the webhook log and the company''s withdrawals: owner, company admin.';

create function private.owners()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['company_owner']; end; $$;
comment on function private.owners() is 'The company''s owner alone: gateway configuration and billing.';

create function private.drivers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['driver']; end; $$;
comment on function private.drivers() is 'Drivers: their deliveries'' moves, their wallet and withdrawals, their position.';

create function private.members()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return private.delivery_managers() || private.drivers(); end; $$;
comment on function private.members() is 'Every role a member of a company can have.';

create function private.withdrawal_readers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return private.drivers() || private.company_managers(); end; $$;
comment on function private.withdrawal_readers() is 'Who reads withdrawals: a driver its own, the company managers the company''s.';

-- "Is one of these roles in this company": policies compare a row's company with
-- `(select private.company_of(<role set>))`, which Postgres evaluates once per statement.
create function private.company_of(roles text[])
returns uuid
language plpgsql
stable
set search_path = ''
as $$
begin
  return (select m.company_id from private.membership() m where m.role = any (company_of.roles));
end;
$$;
comment on function private.company_of(text[]) is 'The caller''s company when its effective role is one of `roles`, else null.';

grant execute on function private.membership(), private.company_id(), private.app_role(), private.delivery_managers(),
  private.integrations(),
  private.company_managers(), private.owners(), private.drivers(), private.members(), private.withdrawal_readers(),
  private.company_of(text[]) to authenticated, service_role;

-- Section: policies and grants

create policy companies_select_member on public.companies
  for select to authenticated
  using (id = (select private.company_id()));

-- Everyone sees their own membership; owners and admins see their company's.
create policy memberships_select_visible on public.memberships
  for select to authenticated
  using (
    user_id = (select auth.uid())
    or company_id = (select private.company_of(private.company_managers()))
  );

grant select on public.companies, public.memberships to authenticated;
grant all on public.companies, public.memberships to service_role;

-- Section: the access token hook

-- The custom access token hook (config.toml [auth.hook.custom_access_token]):
-- adds `role` and `company_id` from the membership, and a driver's `driver_id`. An older-form member
-- (`admin`) keeps the older token: role `authenticated`, app role in user_metadata.
create function public.custom_access_token_hook(event jsonb)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  claims jsonb := event -> 'claims';
  member record;
begin
  select m.company_id, m.role into member
  from public.memberships m
  where m.user_id = (event ->> 'user_id')::uuid;

  if found and member.role <> 'admin' then
    claims := claims
      || jsonb_build_object('role', member.role, 'company_id', member.company_id);
    -- The driver app needs its driver id for its Realtime topic (driver:{driver_id}).
    if member.role = 'driver' then
      claims := claims || jsonb_build_object('driver_id',
        (select d.id from public.drivers d where d.user_id = (event ->> 'user_id')::uuid));
    end if;
  elsif found then
    claims := claims || jsonb_build_object('role', 'authenticated');
  end if;
  return jsonb_build_object('claims', claims);
end;
$$;
comment on function public.custom_access_token_hook(jsonb) is 'Supabase Auth hook: puts the membership''s role and company into the access token.';
grant usage on schema public to supabase_auth_admin;
grant execute on function public.custom_access_token_hook(jsonb) to supabase_auth_admin;
revoke execute on function public.custom_access_token_hook(jsonb) from public, anon, authenticated;
grant select on public.memberships to supabase_auth_admin;
create policy memberships_select_auth_hook on public.memberships
  for select to supabase_auth_admin
  using (true);
