-- The company side (docs/contract.md): drivers, prices, the subscription, the
-- gateway configuration (ciphertext only, in private) and the webhook audit
-- log, with the RPC functions the /api/v1 proxy and supabase-js callers use.

-- Section: types

-- Every function that returns a resource returns a composite type named after
-- it (public.driver, public.delivery, ...), and every list a page type
-- ({items, next_cursor}), rather than jsonb: `supabase gen types` then gives an
-- app calling `.rpc()` the shape of what it gets, and the edge sends each on as
-- to_jsonb (functions/_shared/db.ts, rpc). Composite attributes cannot be
-- declared not null, so generated types make every field nullable;
-- docs/contract.md and the OpenAPI document say which ones never are. Left as
-- jsonb, on purpose: what is not a resource and no app calls (service role):
-- the access token hook, the gateway event outcomes, register_company's ids, the
-- ETA work list and the public tracking view.

create type public.vehicle as (type text, plate text, capacity integer);
comment on type public.vehicle is 'A driver''s vehicle: bike, moto, car or van, its plate, and the units it carries (16_routes.sql).';

create type public.driver as (
  id uuid,
  user_id uuid,
  name text,
  email text,
  phone text,
  active boolean,
  created_at timestamptz,
  updated_at timestamptz,
  vehicle public.vehicle
);
comment on type public.driver is 'A driver as the API returns it.';

create type public.driver_page as (items public.driver[], next_cursor text);
comment on type public.driver_page is 'One page of drivers, newest first; next_cursor is null on the last page.';

create type public.price_table as (
  base_fee numeric,
  per_km numeric,
  minimum_fee numeric,
  driver_share numeric,
  updated_at timestamptz
);
comment on type public.price_table is 'A company''s prices: max(minimum_fee, base_fee + per_km * km); the driver earns driver_share.';

create type public.subscription as (plan text, status text, current_period_end timestamptz);
comment on type public.subscription is 'A company''s plan with the platform.';

create type public.gateway_status as (configured boolean, environment text);
comment on type public.gateway_status is 'Whether a company configured its payment gateway, and for which environment; never a secret.';

create type public.company as (id uuid, name text, gateway public.gateway_status, created_at timestamptz, document text);
comment on type public.company is 'A company as its members see it.';

create type public.webhook_event as (
  id uuid,
  received_at timestamptz,
  event text,
  result text,
  object_id text,
  detail text
);
comment on type public.webhook_event is 'One gateway webhook request and what became of it.';

create type public.webhook_event_page as (items public.webhook_event[], next_cursor text);
comment on type public.webhook_event_page is 'One page of the webhook log, newest first; next_cursor is null on the last page.';

-- Section: authorization and paging

-- Authorize first: the caller's company when its effective role is one of
-- `allowed`, else 403. A deactivated driver is refused everywhere.
create function private.authorize(variadic allowed text[])
returns uuid
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  member record;
begin
  select m.company_id, m.role into member from private.membership() m;
  if not found then
    raise exception using errcode = 'PT403', message = 'this token belongs to no company';
  end if;
  if not member.role = any (allowed) then
    raise exception using errcode = 'PT403', message = format('role %s may not do this', member.role);
  end if;
  if member.role = 'driver' and not exists (
    select from public.drivers d where d.user_id = (select auth.uid()) and d.active
  ) then
    raise exception using errcode = 'PT403', message = 'this driver is deactivated';
  end if;
  return member.company_id;
end;
$$;
comment on function private.authorize(text[]) is 'Raises 403 unless the caller''s effective role is allowed; returns the caller''s company.';

-- Keyset pagination over (sort key desc, id desc): stable under inserts.
create function private.encode_cursor(sort_key timestamptz, id uuid)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  return encode(convert_to(sort_key::text || '|' || id::text, 'UTF8'), 'hex');
end;
$$;

create function private.decode_cursor(cursor text, out sort_key timestamptz, out id uuid)
language plpgsql
stable
set search_path = ''
as $$
declare
  parts text[];
begin
  parts := string_to_array(convert_from(decode(cursor, 'hex'), 'UTF8'), '|');
  sort_key := parts[1]::timestamptz;
  id := parts[2]::uuid;
  if sort_key is null or id is null then
    raise exception 'incomplete cursor';
  end if;
exception
  when others then
    raise exception using errcode = 'PT400', message = 'invalid cursor';
end;
$$;

create function private.check_page_limit(page_limit integer)
returns integer
language plpgsql
immutable
set search_path = ''
as $$
begin
  if page_limit is null or page_limit < 1 or page_limit > 100 then
    raise exception using errcode = 'PT400', message = 'limit must be between 1 and 100';
  end if;
  return page_limit;
end;
$$;

-- The cursor of the page after this one, or null on the last page: `rows`
-- holds up to page_limit + 1 rows in the list's order, each with its sort key
-- in `sort_key_field` and its `id`.
create function private.next_cursor(rows anyarray, page_limit integer, sort_key_field text)
returns text
language plpgsql
stable
set search_path = ''
as $$
declare
  last_shown jsonb;
begin
  if cardinality(rows) <= page_limit then
    return null;
  end if;
  last_shown := to_jsonb(rows[page_limit]);
  return private.encode_cursor((last_shown ->> sort_key_field)::timestamptz, (last_shown ->> 'id')::uuid);
end;
$$;
comment on function private.next_cursor(anyarray, integer, text) is 'The cursor after the last row shown of up to limit + 1 rows, or null when they all fit.';

grant execute on function private.authorize(text[]), private.encode_cursor(timestamptz, uuid),
  private.decode_cursor(text), private.check_page_limit(integer), private.next_cursor(anyarray, integer, text)
  to authenticated, service_role;

-- Section: company settings with their defaults

-- One pattern for every "settings of a company" table (proof_requirements, notification_settings,
-- dispatch_settings, and the next): the table is keyed by company_id, its columns' defaults ARE the
-- defaults, and its one-line reader passes the company's row (as jsonb, null when it has none) to this, which
-- answers it, or a row of those defaults, in the shape the API answers (a composite type whose fields are columns
-- of the table). So a company without a row reads exactly what a fresh row would hold, and a new settings table
-- adds its column defaults and a one-line reader, no defaults-when-no-row code of its own. (Chosen over one
-- helper per table: the three copies each restated the defaults in code beside the table; over rows created up
-- front: a company never written keeps no row.)
-- The reader looks its row up itself, in plain SQL whose plan the session keeps: these readers run in the
-- triggers of every delivery created and dispatched (issue 37), where a statement built and planned per call
-- cost 0.2-0.3 ms each. For the same reason the defaults, which only a query built from the catalog can
-- evaluate, are kept for the session (a custom setting per table) under the version of the catalog rows they
-- came from (their xmin), so a migration that changes a default is read at once by every session, and
-- otherwise a company without a row costs one catalog probe. Security invoker and granted to nobody: only the
-- security-definer readers call it.
create function private.with_defaults(stored jsonb, settings regclass, shape anyelement)
returns anyelement
language plpgsql
stable
set search_path = ''
as $$
declare
  version text;
  kept text := current_setting('private.defaults_of_' || settings::oid, true);
  query text;
  defaults jsonb;
begin
  if stored is not null then
    return jsonb_populate_record(shape, stored);
  end if;
  select coalesce(string_agg(d.adnum || ':' || d.xmin, ',' order by d.adnum), '') into version
  from pg_catalog.pg_attrdef d where d.adrelid = settings;
  if kept is not null and kept <> '' and split_part(kept, '|', 1) = version then
    defaults := substr(kept, length(version) + 2)::jsonb;
  else
    select 'select jsonb_build_object(' || string_agg(format('%L, %s', a.attname, pg_get_expr(d.adbin, d.adrelid)),
      ', ') || ')'
    into query
    from pg_catalog.pg_attribute a
    join pg_catalog.pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attrelid = settings and a.attnum > 0 and not a.attisdropped;
    execute coalesce(query, 'select ''{}''::jsonb') into defaults;
    perform set_config('private.defaults_of_' || settings::oid, version || '|' || defaults::text, false);
  end if;
  return jsonb_populate_record(shape, defaults);
end;
$$;
comment on function private.with_defaults(jsonb, regclass, anyelement) is 'A company''s row of a settings table (as jsonb), or the table''s column defaults when it is null, as `shape`.';

-- Section: drivers

create table public.drivers (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  user_id uuid not null unique references auth.users (id) on delete cascade,
  name text not null check (length(btrim(name)) between 1 and 200),
  email text not null,
  phone text,
  active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- The vehicle (routes, 16_routes.sql): its type, plate, and capacity in units (null: the type's default,
  -- private.vehicle_capacity).
  vehicle_type text not null default 'car' check (vehicle_type in ('bike', 'moto', 'car', 'van')),
  vehicle_plate text check (length(vehicle_plate) between 1 and 20),
  vehicle_capacity integer check (vehicle_capacity between 1 and 10000)
);
comment on table public.drivers is 'Drivers of a company; each is a user with the driver membership.';
create index drivers_company_id_created_at_idx on public.drivers (company_id, created_at desc, id desc);
alter table public.drivers enable row level security;

-- drivers.user_id is unique: at most one row.
create function private.driver_id()
returns uuid
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select d.id from public.drivers d
          where d.user_id = (select auth.uid()) and d.active and (select private.app_role()) = 'driver');
end;
$$;
comment on function private.driver_id() is 'The caller''s driver id when the caller is an active driver, else null.';
grant execute on function private.driver_id() to authenticated, service_role;

-- Managers see their company's drivers; a driver sees itself.
create policy drivers_select_visible on public.drivers
  for select to authenticated
  using (
    company_id = (select private.company_of(private.delivery_managers()))
    or id = (select private.driver_id())
  );
grant select on public.drivers to authenticated;
grant all on public.drivers to service_role;
-- The access token hook reads a driver's id (00_tenancy.sql).
grant select on public.drivers to supabase_auth_admin;
create policy drivers_select_auth_hook on public.drivers
  for select to supabase_auth_admin
  using (true);

-- The units a vehicle of each type carries unless its driver's row says otherwise (docs/routes.md).
create function private.vehicle_capacity(vehicle_type text)
returns integer
language plpgsql
immutable
set search_path = ''
as $$
begin
  return case vehicle_capacity.vehicle_type when 'bike' then 4 when 'moto' then 6 when 'car' then 20 when 'van' then 100 end;
end;
$$;
comment on function private.vehicle_capacity(text) is 'The default capacity in units of a vehicle type: bike 4, moto 6, car 20, van 100.';
grant execute on function private.vehicle_capacity(text) to authenticated, service_role;

create function private.driver_row(d public.drivers)
returns public.driver
language plpgsql
stable
set search_path = ''
as $$
begin
  return row(d.id, d.user_id, d.name, d.email, d.phone, d.active, d.created_at, d.updated_at,
    row(d.vehicle_type, d.vehicle_plate, coalesce(d.vehicle_capacity, private.vehicle_capacity(d.vehicle_type)))::public.vehicle
  )::public.driver;
end;
$$;
comment on function private.driver_row(public.drivers) is 'A driver as the API shows it.';
grant execute on function private.driver_row(public.drivers) to authenticated, service_role;

-- The auth user is created first (through the Auth admin API); this links it.
-- Service role only: the edge authorizes the caller (a company manager) first and
-- passes its company; a user calling this directly could claim any user id.
create function public.create_driver(company_id uuid, user_id uuid, name text, email text, phone text default null)
returns public.driver
language plpgsql
set search_path = ''
as $$
declare
  driver public.drivers;
begin
  insert into public.memberships (user_id, company_id, role)
  values (create_driver.user_id, create_driver.company_id, 'driver');
  insert into public.drivers (company_id, user_id, name, email, phone)
  values (create_driver.company_id, create_driver.user_id, create_driver.name, lower(create_driver.email),
          create_driver.phone)
  returning * into driver;
  return private.driver_row(driver);
end;
$$;
comment on function public.create_driver(uuid, uuid, text, text, text) is 'Makes an existing auth user a driver of a company, for a caller the edge authorized (service role).';
grant execute on function public.create_driver(uuid, uuid, text, text, text) to service_role;

create function public.list_drivers(page_limit integer default 20, cursor text default null)
returns public.driver_page
language plpgsql
stable
set search_path = ''
-- Planned with each call's values: a generic plan would keep `cursor is null or ...`
-- and walk from the newest row to the cursor (public.list_deliveries says more).
set plan_cache_mode = force_custom_plan
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
  after_key timestamptz;
  after_id uuid;
  rows public.driver[];
begin
  perform private.check_page_limit(page_limit);
  if cursor is not null then
    select c.sort_key, c.id into after_key, after_id from private.decode_cursor(cursor) c;
  end if;
  select coalesce(array_agg(private.driver_row(d) order by d.created_at desc, d.id desc), '{}') into rows
  from (
    select * from public.drivers d
    where d.company_id = company
      and (list_drivers.cursor is null or (d.created_at, d.id) < (after_key, after_id))
    order by d.created_at desc, d.id desc
    limit page_limit + 1
  ) d;
  return (rows[1:page_limit], private.next_cursor(rows, page_limit, 'created_at'))::public.driver_page;
end;
$$;
comment on function public.list_drivers(integer, text) is 'The company''s drivers, newest first, one page.';
grant execute on function public.list_drivers(integer, text) to authenticated;

create function public.get_driver(driver_id uuid)
returns public.driver
language plpgsql
stable
set search_path = ''
as $$
declare
  driver public.drivers;
begin
  perform private.authorize(variadic private.delivery_managers());
  select * into driver from public.drivers d where d.id = get_driver.driver_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'driver not found';
  end if;
  return private.driver_row(driver);
end;
$$;
comment on function public.get_driver(uuid) is 'One driver of the caller''s company (RLS hides the others: 404).';
grant execute on function public.get_driver(uuid) to authenticated;

create function public.update_driver(driver_id uuid, name text default null, phone text default null, active boolean default null)
returns public.driver
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  driver public.drivers;
begin
  update public.drivers d set
    name = coalesce(update_driver.name, d.name),
    phone = coalesce(update_driver.phone, d.phone),
    active = coalesce(update_driver.active, d.active),
    updated_at = now()
  where d.id = update_driver.driver_id and d.company_id = company
  returning * into driver;
  if not found then
    raise exception using errcode = 'PT404', message = 'driver not found';
  end if;
  return private.driver_row(driver);
end;
$$;
comment on function public.update_driver(uuid, text, text, boolean) is 'Renames, re-phones, deactivates or reactivates a driver of the caller''s company.';
grant execute on function public.update_driver(uuid, text, text, boolean) to authenticated;

-- A driver deactivated while its app is open learns it at once on its own topic
-- (its channel was authorized when it joined; a new join is refused), instead of
-- at its next request.
create function private.tell_driver_deactivated()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.broadcast('driver:' || new.id, 'driver_deactivated',
    jsonb_build_object('id', new.id, 'active', false, 'updated_at', new.updated_at));
  return null;
end;
$$;
comment on function private.tell_driver_deactivated() is 'Trigger: broadcasts driver_deactivated to driver:{id} when a driver is deactivated.';
revoke execute on function private.tell_driver_deactivated() from public;
create trigger drivers_tell_deactivated after update of active on public.drivers
  for each row when (old.active and not new.active) execute function private.tell_driver_deactivated();

-- What fires on a driver: its live offers withdrawn when it is deactivated (14_dispatch.sql, dispatch).
create function private.withdraw_offers_of_deactivated()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.withdraw_driver_offers(new.id);
  return null;
end;
$$;
comment on function private.withdraw_offers_of_deactivated() is 'A deactivated driver''s live offers go to the next drivers.';
create trigger drivers_withdraw_offers after update of active on public.drivers
  for each row when (old.active and not new.active)
  execute function private.withdraw_offers_of_deactivated();

-- Section: prices

create table public.prices (
  company_id uuid primary key references public.companies (id) on delete cascade,
  base_fee numeric(12, 2) not null check (base_fee >= 0),
  per_km numeric(12, 2) not null check (per_km >= 0),
  minimum_fee numeric(12, 2) not null check (minimum_fee >= 0),
  driver_share numeric(5, 4) not null check (driver_share between 0 and 1),
  updated_at timestamptz not null default now()
);
comment on table public.prices is 'A company''s price table: max(minimum_fee, base_fee + per_km * km); the driver earns driver_share of it.';
alter table public.prices enable row level security;
create policy prices_select_member on public.prices
  for select to authenticated
  using (company_id = (select private.company_id()));
grant select on public.prices to authenticated;
grant all on public.prices to service_role;

create function private.prices_row(p public.prices)
returns public.price_table
language plpgsql
stable
set search_path = ''
as $$
begin
  return row(p.base_fee, p.per_km, p.minimum_fee, p.driver_share, p.updated_at)::public.price_table;
end;
$$;
comment on function private.prices_row(public.prices) is 'A company''s prices as the API shows them.';
grant execute on function private.prices_row(public.prices) to authenticated, service_role;

create function public.get_prices()
returns public.price_table
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.members());
begin
  return (select private.prices_row(p) from public.prices p where p.company_id = company);
end;
$$;
comment on function public.get_prices() is 'The caller''s company price table.';
grant execute on function public.get_prices() to authenticated;

create function public.set_prices(base_fee numeric, per_km numeric, minimum_fee numeric, driver_share numeric)
returns public.price_table
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
  saved public.prices;
begin
  insert into public.prices (company_id, base_fee, per_km, minimum_fee, driver_share)
  values (company, set_prices.base_fee, set_prices.per_km, set_prices.minimum_fee, set_prices.driver_share)
  on conflict (company_id) do update set
    base_fee = excluded.base_fee, per_km = excluded.per_km, minimum_fee = excluded.minimum_fee,
    driver_share = excluded.driver_share, updated_at = now()
  returning * into saved;
  return private.prices_row(saved);
end;
$$;
comment on function public.set_prices(numeric, numeric, numeric, numeric) is 'Replaces the caller''s company price table.';
grant execute on function public.set_prices(numeric, numeric, numeric, numeric) to authenticated;

-- Section: subscription (billing)

create table public.subscriptions (
  company_id uuid primary key references public.companies (id) on delete cascade,
  plan text not null default 'free' check (plan in ('free', 'pro', 'enterprise')),
  status text not null default 'active' check (status in ('active', 'past_due', 'cancelled')),
  current_period_end timestamptz,
  updated_at timestamptz not null default now()
);
comment on table public.subscriptions is 'A company''s plan with the platform; only its owner sees or changes it.';
alter table public.subscriptions enable row level security;
create policy subscriptions_select_owner on public.subscriptions
  for select to authenticated
  using (company_id = (select private.company_of(private.owners())));
grant select on public.subscriptions to authenticated;
grant all on public.subscriptions to service_role;

create function public.get_subscription()
returns public.subscription
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.owners());
begin
  return (select row(s.plan, s.status, s.current_period_end)::public.subscription
          from public.subscriptions s where s.company_id = company);
end;
$$;
comment on function public.get_subscription() is 'The caller''s company subscription (owner only).';
grant execute on function public.get_subscription() to authenticated;

create function public.set_subscription(plan text)
returns public.subscription
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.owners());
  saved public.subscriptions;
begin
  update public.subscriptions s set
    plan = set_subscription.plan,
    status = 'active',
    -- Paid plans run in 30-day periods from the change; the free plan has none.
    current_period_end = case when set_subscription.plan = 'free' then null else now() + interval '30 days' end,
    updated_at = now()
  where s.company_id = company
  returning * into saved;
  return row(saved.plan, saved.status, saved.current_period_end)::public.subscription;
end;
$$;
comment on function public.set_subscription(text) is 'Changes the caller''s company plan (owner only).';
grant execute on function public.set_subscription(text) to authenticated;

-- Section: gateway configuration

-- Ciphertext only (AES-GCM under SECRETS_ENCRYPTION_KEY, which never reaches the
-- database), in a schema the API does not expose.
create table private.gateway_configs (
  company_id uuid primary key references public.companies (id) on delete cascade,
  api_key_ciphertext text not null,
  webhook_secret_ciphertext text not null,
  environment text not null check (environment in ('sandbox', 'production')),
  gateway_customer_ids jsonb not null default '{}'::jsonb,
  updated_at timestamptz not null default now()
);
comment on table private.gateway_configs is 'A company''s payment gateway key and webhook secret, encrypted.';
alter table private.gateway_configs enable row level security;
grant select, insert, update on private.gateway_configs to service_role;
create policy gateway_configs_service on private.gateway_configs
  for all to service_role
  using (true)
  with check (true);

-- Service role only: the edge authorizes the owner, encrypts the secrets and
-- passes its company; stored by anyone else, a "ciphertext" could be anything.
create function public.save_gateway_config(company_id uuid, api_key_ciphertext text, webhook_secret_ciphertext text,
  environment text)
returns public.gateway_status
language plpgsql
set search_path = ''
as $$
begin
  insert into private.gateway_configs (company_id, api_key_ciphertext, webhook_secret_ciphertext, environment)
  values (save_gateway_config.company_id, save_gateway_config.api_key_ciphertext,
          save_gateway_config.webhook_secret_ciphertext, save_gateway_config.environment)
  on conflict on constraint gateway_configs_pkey do update set
    api_key_ciphertext = excluded.api_key_ciphertext,
    webhook_secret_ciphertext = excluded.webhook_secret_ciphertext,
    environment = excluded.environment,
    -- Customers belong to one gateway account; a new key starts afresh.
    gateway_customer_ids = '{}'::jsonb,
    updated_at = now();
  return row(true, save_gateway_config.environment)::public.gateway_status;
end;
$$;
comment on function public.save_gateway_config(uuid, text, text, text) is 'Stores a company''s gateway credentials, encrypted by the edge for an authorized owner (service role).';
grant execute on function public.save_gateway_config(uuid, text, text, text) to service_role;

create function public.get_my_company()
returns public.company
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.members());
begin
  return (
    select row(c.id, c.name, row(g.company_id is not null, g.environment)::public.gateway_status,
      c.created_at, c.document)::public.company
    from public.companies c
    left join private.gateway_configs g on g.company_id = c.id
    where c.id = company
  );
end;
$$;
comment on function public.get_my_company() is 'The caller''s company profile; says whether the gateway is configured, never a secret.';
grant execute on function public.get_my_company() to authenticated;

-- Section: registration

-- The company's own CNPJ (optional), numeric or alphanumeric, stored upper case without punctuation
-- (private.normalize_document, 01_brazil.sql): the table sorts before the rules it names, so it gains it here.
alter table public.companies add column document text
  constraint companies_document_cnpj check (document is null or (private.cnpj_valid(document) and private.normalize_document(document) = document));
comment on column public.companies.document is 'The company''s CNPJ (numeric or alphanumeric), upper case without punctuation; optional.';

create function public.register_company(owner_user_id uuid, company_name text, owner_name text, document text default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid;
  cnpj text := private.normalize_document(register_company.document);
begin
  if register_company.document is not null and (cnpj is null or not private.cnpj_valid(cnpj)) then
    raise exception using errcode = 'PT400', message = 'document must be a valid CNPJ';
  end if;
  insert into public.companies (name, document) values (btrim(register_company.company_name), cnpj) returning id into company;
  insert into public.memberships (user_id, company_id, role) values (register_company.owner_user_id, company, 'company_owner');
  insert into public.prices (company_id, base_fee, per_km, minimum_fee, driver_share)
  values (company, 5.00, 1.50, 8.00, 0.80);
  insert into public.subscriptions (company_id) values (company);
  return jsonb_build_object('company_id', company, 'user_id', register_company.owner_user_id);
end;
$$;
comment on function public.register_company(uuid, text, text, text) is 'Creates a company owned by an existing auth user, with its CNPJ if given, default prices and the free plan (service role).';
revoke execute on function public.register_company(uuid, text, text, text) from authenticated;
grant execute on function public.register_company(uuid, text, text, text) to service_role;

-- Section: webhook audit log and unsigned look-ups

create table public.webhook_events (
  id uuid primary key default gen_random_uuid(),
  received_at timestamptz not null default clock_timestamp(),
  company_id uuid references public.companies (id) on delete cascade,
  event text,
  object_id text,
  result text not null check (result in ('processed', 'duplicate', 'ignored', 'rejected', 'error')),
  detail text
);
comment on table public.webhook_events is 'Every gateway webhook request and what became of it; no payload, no secret, no signature.';
create index webhook_events_company_received_idx on public.webhook_events (company_id, received_at desc, id desc);
alter table public.webhook_events enable row level security;
create policy webhook_events_select_managers on public.webhook_events
  for select to authenticated
  using (
    company_id = (select private.company_of(private.company_managers()))
  );
grant select on public.webhook_events to authenticated;
grant all on public.webhook_events to service_role;

create function public.list_webhook_events(page_limit integer default 20, cursor text default null)
returns public.webhook_event_page
language plpgsql
stable
set search_path = ''
-- Planned with each call's values: a generic plan would keep `cursor is null or ...`
-- and walk from the newest row to the cursor (public.list_deliveries says more).
set plan_cache_mode = force_custom_plan
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  after_key timestamptz;
  after_id uuid;
  rows public.webhook_event[];
begin
  perform private.check_page_limit(page_limit);
  if cursor is not null then
    select c.sort_key, c.id into after_key, after_id from private.decode_cursor(cursor) c;
  end if;
  select coalesce(array_agg(row(e.id, e.received_at, e.event, e.result, e.object_id, e.detail)::public.webhook_event
    order by e.received_at desc, e.id desc), '{}')
  into rows
  from (
    select * from public.webhook_events e
    where e.company_id = company
      and (list_webhook_events.cursor is null or (e.received_at, e.id) < (after_key, after_id))
    order by e.received_at desc, e.id desc
    limit page_limit + 1
  ) e;
  return (rows[1:page_limit], private.next_cursor(rows, page_limit, 'received_at'))::public.webhook_event_page;
end;
$$;
comment on function public.list_webhook_events(integer, text) is 'The company''s webhook audit log, newest first, one page (owner, admin).';
grant execute on function public.list_webhook_events(integer, text) to authenticated;

-- Gateway look-ups of unsigned webhooks: an unsigned request may make us ask the
-- gateway about one object at most once a minute (docs/contract.md, Webhooks).
create table private.gateway_lookups (
  object_key text primary key,
  looked_up_at timestamptz not null
);
comment on table private.gateway_lookups is 'When the gateway was last asked about an object on behalf of an unsigned webhook.';
alter table private.gateway_lookups enable row level security;
create policy gateway_lookups_service on private.gateway_lookups
  for all to service_role
  using (true)
  with check (true);
grant select, insert, update, delete on private.gateway_lookups to service_role;

create function private.admit_gateway_lookup(object_key text)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  -- Forget what can no longer refuse anything, now and then, so the table stays small.
  if random() < 0.01 then
    delete from private.gateway_lookups l where l.looked_up_at < now() - interval '1 minute';
  end if;
  insert into private.gateway_lookups as l (object_key, looked_up_at)
  values (admit_gateway_lookup.object_key, now())
  on conflict on constraint gateway_lookups_pkey do update set looked_up_at = excluded.looked_up_at
  where l.looked_up_at <= excluded.looked_up_at - interval '1 minute';
  return found;
end;
$$;
comment on function private.admit_gateway_lookup(text) is 'True (and remembered) when the gateway was not asked about this object in the last minute (service role).';
grant execute on function private.admit_gateway_lookup(text) to service_role;
