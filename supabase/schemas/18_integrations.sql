-- Integrations (docs/integrations.md): API keys that act for a company within
-- their scopes, a rate limit per company shared by every instance of the API,
-- and outgoing webhooks signed as Standard Webhooks sign them.
--
-- A key is shown once and stored as its SHA-256 only; the edge looks a key up
-- by that hash (public.use_api_key), which also takes one request from the
-- company's token bucket, and then acts with the key role (private.integrations(),
-- 00_tenancy.sql) and the key's id as `sub`: private.membership() answers the
-- key's company while the key is not revoked, so every policy and function
-- decides as for a person with that role.
--
-- Webhooks are an outbox, as notifications are (13_notifications.sql): a
-- trigger on the deliveries writes the event and one delivery row per endpoint
-- that listens for it, in the transaction of the change (none for a change
-- rolled back); the webhooks-out Edge Function, woken through pg_net after the
-- commit and every minute by pg_cron while anything is due, claims due rows
-- with `for update skip locked` under a lease, signs, sends, and records every
-- attempt. Failures are retried on Standard Webhooks' schedule (5 s, 5 min,
-- 30 min, 2 h, 5 h, 10 h, 10 h) with the same id and body; an endpoint failing
-- for 5 days is disabled and its owner told by e-mail.

-- Section: names

create function private.api_key_scopes()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$
begin
  return array['deliveries:read', 'deliveries:write', 'drivers:read', 'routes:write', 'webhooks:manage'];
end;
$$;
comment on function private.api_key_scopes() is 'The scopes an API key may have.';

create function private.webhook_event_types()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$
begin
  return array['delivery.created', 'delivery.status_changed', 'delivery.completed', 'delivery.failed',
    'route.published', 'route.completed'];
end;
$$;
comment on function private.webhook_event_types() is 'The events an endpoint may listen for.';

create function private.webhook_managers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return private.company_managers() || private.integrations(); end; $$;
comment on function private.webhook_managers() is 'Who manages webhook endpoints: owner, company admin, and API keys with webhooks:manage (checked by the edge).';

-- Section: types (02_company.sql says why functions return them)

create type public.api_key as (
  id uuid,
  name text,
  scopes text[],
  prefix text,
  created_at timestamptz,
  last_used_at timestamptz
);
comment on type public.api_key is 'An API key as listed: never the key itself.';

create type public.api_key_list as (items public.api_key[]);
comment on type public.api_key_list is 'The company''s API keys that are not revoked, newest first.';

create type public.webhook_endpoint as (
  id uuid,
  url text,
  events text[],
  description text,
  enabled boolean,
  disabled_reason text,
  failing_since timestamptz,
  created_at timestamptz,
  updated_at timestamptz
);
comment on type public.webhook_endpoint is 'A company''s webhook endpoint as the API shows it: never its secret.';

create type public.webhook_endpoint_list as (items public.webhook_endpoint[]);
comment on type public.webhook_endpoint_list is 'The company''s webhook endpoints, oldest first.';

create type public.webhook_attempt as (
  event_id uuid,
  type text,
  attempt integer,
  status integer,
  duration_ms integer,
  response text,
  error text,
  at timestamptz
);
comment on type public.webhook_attempt is 'One attempt to send an event to an endpoint: the HTTP status (null: no answer) and the first bytes of the answer.';

create type public.webhook_attempt_page as (items public.webhook_attempt[], next_cursor text);
comment on type public.webhook_attempt_page is 'One page of an endpoint''s attempts, newest first.';

create type public.webhook_queued as (event_id uuid, queued integer);
comment on type public.webhook_queued is 'An event queued (again) and for how many endpoints.';

-- The company's lock for its keys and endpoints: its companies row, for no key
-- update (which no foreign key's key-share lock waits for), so that two
-- creations at once cannot both count 49 keys (or 19 endpoints) and both add one.
create function private.lock_company_integrations(company_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform from public.companies c where c.id = lock_company_integrations.company_id for no key update;
end;
$$;
comment on function private.lock_company_integrations(uuid) is 'Takes the company''s lock for creating API keys and webhook endpoints (its companies row, for no key update) until the end of the transaction.';

-- Section: API keys

create table public.api_keys (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  name text not null check (length(btrim(name)) between 1 and 100),
  scopes text[] not null check (cardinality(scopes) >= 1 and scopes <@ private.api_key_scopes()),
  -- SHA-256 (hex) of the key; the key itself is never stored.
  key_hash text not null unique check (key_hash ~ '^[0-9a-f]{64}$'),
  -- The key's first characters, so that a person can tell keys apart.
  prefix text not null check (length(prefix) <= 20),
  created_by uuid,
  created_at timestamptz not null default now(),
  -- Written at most once a minute per key.
  last_used_at timestamptz,
  revoked_at timestamptz
);
comment on table public.api_keys is 'A company''s API keys: each acts for the company within its scopes until revoked.';
create index api_keys_company_id_idx on public.api_keys (company_id);
alter table public.api_keys enable row level security;
create policy api_keys_select_managers on public.api_keys
  for select to authenticated
  using (company_id = (select private.company_of(private.company_managers())));
-- Never the hash: not even a company's managers read it.
grant select (id, company_id, name, scopes, prefix, created_by, created_at, last_used_at, revoked_at)
  on public.api_keys to authenticated;
grant all on public.api_keys to service_role;

create function private.api_key_row(k public.api_keys)
returns public.api_key
language plpgsql
immutable
set search_path = ''
as $$ begin return row(k.id, k.name, k.scopes, k.prefix, k.created_at, k.last_used_at)::public.api_key; end; $$;
comment on function private.api_key_row(public.api_keys) is 'An API key as the API lists it.';

create function private.check_api_key_scopes(scopes text[])
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
  if coalesce(cardinality(check_api_key_scopes.scopes), 0) = 0
     or not check_api_key_scopes.scopes <@ private.api_key_scopes() then
    raise exception using errcode = 'PT400',
      message = 'scopes must name at least one of ' || array_to_string(private.api_key_scopes(), ', ');
  end if;
end;
$$;
comment on function private.check_api_key_scopes(text[]) is 'Raises 400 unless the scopes are known and at least one.';

-- The edge makes the key and hashes it; only the hash reaches the database.
create function public.create_api_key(name text, scopes text[], key_hash text, prefix text)
returns public.api_key
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  saved public.api_keys;
begin
  perform private.check_api_key_scopes(create_api_key.scopes);
  perform private.lock_company_integrations(company);
  if (select count(*) from public.api_keys k where k.company_id = company and k.revoked_at is null) >= 50 then
    raise exception using errcode = 'PT409', message = 'a company may have at most 50 API keys; revoke one first';
  end if;
  insert into public.api_keys (company_id, name, scopes, key_hash, prefix, created_by)
  values (company, btrim(create_api_key.name),
    array(select s from unnest(private.api_key_scopes()) s where s = any (create_api_key.scopes)),
    create_api_key.key_hash, create_api_key.prefix, (select auth.uid()))
  returning * into saved;
  return private.api_key_row(saved);
end;
$$;
comment on function public.create_api_key(text, text[], text, text) is 'Stores a new API key of the caller''s company by its hash (owner, admin).';
grant execute on function public.create_api_key(text, text[], text, text) to authenticated;

-- Security definer: a whole row needs every column, and the hash is granted to nobody.
create function public.list_api_keys()
returns public.api_key_list
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
begin
  return row(coalesce((
    select array_agg(private.api_key_row(k) order by k.created_at desc, k.id desc)
    from public.api_keys k where k.company_id = company and k.revoked_at is null), '{}'))::public.api_key_list;
end;
$$;
comment on function public.list_api_keys() is 'The caller''s company''s API keys that are not revoked, without the keys (owner, admin).';
grant execute on function public.list_api_keys() to authenticated;

create function public.revoke_api_key(key_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
begin
  update public.api_keys k set revoked_at = now()
  where k.id = revoke_api_key.key_id and k.company_id = company and k.revoked_at is null;
  if not found then
    raise exception using errcode = 'PT404', message = 'API key not found';
  end if;
end;
$$;
comment on function public.revoke_api_key(uuid) is 'Revokes an API key of the caller''s company: refused from the next request on (owner, admin).';
grant execute on function public.revoke_api_key(uuid) to authenticated;

-- Section: the rate limit

-- One token bucket per company for all its keys: 20 requests a second
-- sustained, bursts of 40. The row is locked for the instant of the
-- computation, so every instance of the API shares it.
create table private.api_rate_buckets (
  company_id uuid primary key references public.companies (id) on delete cascade,
  tokens double precision not null,
  refreshed_at timestamptz not null
);
comment on table private.api_rate_buckets is 'Each company''s token bucket for requests made with its API keys.';
alter table private.api_rate_buckets enable row level security;

create function private.api_rate_limit(out rate double precision, out burst double precision)
language plpgsql
immutable
set search_path = ''
as $$ begin rate := 20; burst := 40; end; $$;
comment on function private.api_rate_limit() is 'Requests a second a company''s keys may make sustained (rate), and at once (burst).';

-- Service role only (the edge, for each request that carries an API key): the
-- key's company, scopes and role, or null for a key that is unknown or revoked;
-- and whether the company's bucket had a request left, with what the
-- RateLimit-* headers and Retry-After say.
create function public.use_api_key(key_hash text)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  k public.api_keys;
  b private.api_rate_buckets;
  limits record := private.api_rate_limit();
  t timestamptz := clock_timestamp();
  level double precision;
  allowed boolean;
begin
  select * into k from public.api_keys x where x.key_hash = use_api_key.key_hash and x.revoked_at is null;
  if not found then
    return null;
  end if;
  select * into b from private.api_rate_buckets r where r.company_id = k.company_id for update;
  if not found then
    insert into private.api_rate_buckets (company_id, tokens, refreshed_at) values (k.company_id, limits.burst, t)
    on conflict on constraint api_rate_buckets_pkey do nothing;
    select * into b from private.api_rate_buckets r where r.company_id = k.company_id for update;
  end if;
  level := least(limits.burst, b.tokens + greatest(extract(epoch from t - b.refreshed_at), 0) * limits.rate);
  allowed := level >= 1;
  if allowed then
    level := level - 1;
  end if;
  -- A stamp ahead of the clock (a test's frozen bucket) refills nothing until then.
  update private.api_rate_buckets r set tokens = level, refreshed_at = greatest(b.refreshed_at, t)
  where r.company_id = k.company_id;
  if allowed and (k.last_used_at is null or k.last_used_at < t - interval '1 minute') then
    update public.api_keys x set last_used_at = t where x.id = k.id;
  end if;
  return jsonb_build_object(
    'key_id', k.id, 'company_id', k.company_id, 'role', (private.integrations())[1], 'scopes', to_jsonb(k.scopes),
    'allowed', allowed, 'limit', limits.burst::integer, 'remaining', floor(level)::integer,
    -- Seconds until the bucket is full again, and (refused) until one request is.
    'reset', ceil((limits.burst - level) / limits.rate)::integer,
    'retry_after', case when allowed then 0 else greatest(ceil((1 - level) / limits.rate), 1)::integer end);
end;
$$;
comment on function public.use_api_key(text) is 'Resolves an API key by its hash and takes one request from its company''s bucket (service role).';
revoke execute on function public.use_api_key(text) from authenticated;
grant execute on function public.use_api_key(text) to service_role;

-- Section: webhook endpoints

create table public.webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  url text not null check (length(url) between 8 and 2000),
  events text[] not null check (cardinality(events) >= 1 and events <@ private.webhook_event_types()),
  description text check (length(description) <= 500),
  enabled boolean not null default true,
  disabled_reason text check (length(disabled_reason) <= 500),
  -- The first failure since the last success: 5 days of them disable the endpoint.
  failing_since timestamptz,
  -- When the owner was told the endpoint was disabled (null: not yet, or not disabled).
  owner_notified_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- When a sender took on telling the owner (public.webhook_owners_to_tell): another takes it on only 5 minutes
  -- later, so that senders running at once do not both send the e-mail, and one that failed is tried again.
  owner_notice_claimed_at timestamptz
);
comment on table public.webhook_endpoints is 'Where a company''s events are sent, and which; its secret is kept apart, encrypted.';
create index webhook_endpoints_company_id_idx on public.webhook_endpoints (company_id);
alter table public.webhook_endpoints enable row level security;
create policy webhook_endpoints_select_managers on public.webhook_endpoints
  for select to authenticated
  using (company_id = (select private.company_of(private.webhook_managers())));
grant select on public.webhook_endpoints to authenticated;
grant all on public.webhook_endpoints to service_role;

-- Ciphertext only (AES-GCM under SECRETS_ENCRYPTION_KEY, as the gateway's
-- secrets), in a schema the API does not expose: the sender decrypts it to sign.
create table private.webhook_endpoint_secrets (
  endpoint_id uuid primary key references public.webhook_endpoints (id) on delete cascade,
  secret_ciphertext text not null
);
comment on table private.webhook_endpoint_secrets is 'Each webhook endpoint''s signing secret, encrypted.';
alter table private.webhook_endpoint_secrets enable row level security;

create function private.webhook_endpoint_row(e public.webhook_endpoints)
returns public.webhook_endpoint
language plpgsql
immutable
set search_path = ''
as $$
begin
  return row(e.id, e.url, e.events, e.description, e.enabled, e.disabled_reason, e.failing_since, e.created_at,
    e.updated_at)::public.webhook_endpoint;
end;
$$;
comment on function private.webhook_endpoint_row(public.webhook_endpoints) is 'A webhook endpoint as the API shows it.';

create function private.check_webhook_events(events text[])
returns text[]
language plpgsql
immutable
set search_path = ''
as $$
begin
  if coalesce(cardinality(check_webhook_events.events), 0) = 0
     or not check_webhook_events.events <@ private.webhook_event_types() then
    raise exception using errcode = 'PT400',
      message = 'events must name at least one of ' || array_to_string(private.webhook_event_types(), ', ');
  end if;
  return array(select e from unnest(private.webhook_event_types()) e where e = any (check_webhook_events.events));
end;
$$;
comment on function private.check_webhook_events(text[]) is 'The events in their canonical order, each once; 400 for an unknown one or none.';

-- The caller's company's endpoint, locked, or 404.
create function private.lock_webhook_endpoint(endpoint_id uuid, company_id uuid)
returns public.webhook_endpoints
language plpgsql
security definer
set search_path = ''
as $$
declare
  e public.webhook_endpoints;
begin
  select * into e from public.webhook_endpoints x
  where x.id = lock_webhook_endpoint.endpoint_id and x.company_id = lock_webhook_endpoint.company_id
  for update;
  if not found then
    raise exception using errcode = 'PT404', message = 'webhook endpoint not found';
  end if;
  return e;
end;
$$;
comment on function private.lock_webhook_endpoint(uuid, uuid) is 'Locks a webhook endpoint of the given company; 404 otherwise.';

-- The edge checks the URL (https, not a private address: docs/integrations.md)
-- and encrypts the secret it made.
create function public.create_webhook_endpoint(url text, events text[], secret_ciphertext text,
  description text default null)
returns public.webhook_endpoint
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.webhook_managers());
  saved public.webhook_endpoints;
begin
  perform private.lock_company_integrations(company);
  if (select count(*) from public.webhook_endpoints e where e.company_id = company) >= 20 then
    raise exception using errcode = 'PT409', message = 'a company may have at most 20 webhook endpoints';
  end if;
  insert into public.webhook_endpoints (company_id, url, events, description)
  values (company, create_webhook_endpoint.url, private.check_webhook_events(create_webhook_endpoint.events),
    nullif(btrim(create_webhook_endpoint.description), ''))
  returning * into saved;
  insert into private.webhook_endpoint_secrets (endpoint_id, secret_ciphertext)
  values (saved.id, create_webhook_endpoint.secret_ciphertext);
  return private.webhook_endpoint_row(saved);
end;
$$;
comment on function public.create_webhook_endpoint(text, text[], text, text) is 'Adds a webhook endpoint to the caller''s company with its encrypted secret (owner, admin, key with webhooks:manage).';
grant execute on function public.create_webhook_endpoint(text, text[], text, text) to authenticated;

create function public.list_webhook_endpoints()
returns public.webhook_endpoint_list
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.webhook_managers());
begin
  return row(coalesce((
    select array_agg(private.webhook_endpoint_row(e) order by e.created_at, e.id)
    from public.webhook_endpoints e where e.company_id = company), '{}'))::public.webhook_endpoint_list;
end;
$$;
comment on function public.list_webhook_endpoints() is 'The caller''s company''s webhook endpoints (owner, admin, key with webhooks:manage).';
grant execute on function public.list_webhook_endpoints() to authenticated;

create function public.get_webhook_endpoint(endpoint_id uuid)
returns public.webhook_endpoint
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.webhook_managers());
  e public.webhook_endpoints;
begin
  select * into e from public.webhook_endpoints x
  where x.id = get_webhook_endpoint.endpoint_id and x.company_id = company;
  if not found then
    raise exception using errcode = 'PT404', message = 'webhook endpoint not found';
  end if;
  return private.webhook_endpoint_row(e);
end;
$$;
comment on function public.get_webhook_endpoint(uuid) is 'One webhook endpoint of the caller''s company (owner, admin, key with webhooks:manage).';
grant execute on function public.get_webhook_endpoint(uuid) to authenticated;

-- Null leaves a field as it is. Enabling an endpoint again clears its failure
-- record; events queued from then on reach it (resend what it missed).
create function public.update_webhook_endpoint(endpoint_id uuid, url text default null, events text[] default null,
  description text default null, enabled boolean default null)
returns public.webhook_endpoint
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.webhook_managers());
  e public.webhook_endpoints := private.lock_webhook_endpoint(update_webhook_endpoint.endpoint_id, company);
  saved public.webhook_endpoints;
  enabling boolean := update_webhook_endpoint.enabled is true and not e.enabled;
begin
  update public.webhook_endpoints x set
    url = coalesce(update_webhook_endpoint.url, x.url),
    events = case when update_webhook_endpoint.events is null then x.events
      else private.check_webhook_events(update_webhook_endpoint.events) end,
    description = case when update_webhook_endpoint.description is null then x.description
      else nullif(btrim(update_webhook_endpoint.description), '') end,
    enabled = coalesce(update_webhook_endpoint.enabled, x.enabled),
    disabled_reason = case when enabling then null
      when update_webhook_endpoint.enabled is false and x.enabled then 'disabled by the company'
      else x.disabled_reason end,
    failing_since = case when enabling then null else x.failing_since end,
    owner_notified_at = case when enabling then null else x.owner_notified_at end,
    owner_notice_claimed_at = case when enabling then null else x.owner_notice_claimed_at end,
    updated_at = now()
  where x.id = e.id
  returning * into saved;
  if not saved.enabled then
    perform private.fail_pending_webhooks(saved.id, 'the endpoint is disabled');
  end if;
  return private.webhook_endpoint_row(saved);
end;
$$;
comment on function public.update_webhook_endpoint(uuid, text, text[], text, boolean) is 'Changes a webhook endpoint of the caller''s company (owner, admin, key with webhooks:manage).';
grant execute on function public.update_webhook_endpoint(uuid, text, text[], text, boolean) to authenticated;

create function public.delete_webhook_endpoint(endpoint_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.webhook_managers());
  e public.webhook_endpoints := private.lock_webhook_endpoint(delete_webhook_endpoint.endpoint_id, company);
begin
  delete from public.webhook_endpoints x where x.id = e.id;
end;
$$;
comment on function public.delete_webhook_endpoint(uuid) is 'Deletes a webhook endpoint of the caller''s company, its secret and its attempts (owner, admin, key with webhooks:manage).';
grant execute on function public.delete_webhook_endpoint(uuid) to authenticated;

-- Section: the outbox

-- The event as sent: `body` is the exact text of `{type, timestamp, data}`, so
-- every attempt (and a resend) carries the same bytes under the same id.
create table private.webhook_messages (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  type text not null check (type = any (private.webhook_event_types()) or type = 'webhook.test'),
  body text not null,
  created_at timestamptz not null default now()
);
comment on table private.webhook_messages is 'Outgoing webhook events, each with the exact body every attempt sends.';
create index webhook_messages_company_id_idx on private.webhook_messages (company_id, created_at);
alter table private.webhook_messages enable row level security;

-- One row per event and endpoint: what the sender claims.
create table private.webhook_deliveries (
  message_id uuid not null references private.webhook_messages (id) on delete cascade,
  endpoint_id uuid not null references public.webhook_endpoints (id) on delete cascade,
  company_id uuid not null references public.companies (id) on delete cascade,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  -- Attempts so far (each claim is one).
  attempts integer not null default 0 check (attempts >= 0),
  -- Now when queued, the lease's end while one sends it, the schedule's next step after a failure.
  next_attempt_at timestamptz not null default now(),
  last_attempt_at timestamptz,
  delivered_at timestamptz,
  error text check (length(error) <= 500),
  created_at timestamptz not null default now(),
  primary key (message_id, endpoint_id)
);
comment on table private.webhook_deliveries is 'Each event''s sending to each endpoint that listens for it: pending, delivered or failed.';
create index webhook_deliveries_due_idx on private.webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_endpoint_id_idx on private.webhook_deliveries (endpoint_id) where status = 'pending';
alter table private.webhook_deliveries enable row level security;

create table private.webhook_attempts (
  id uuid primary key default gen_random_uuid(),
  message_id uuid not null references private.webhook_messages (id) on delete cascade,
  endpoint_id uuid not null references public.webhook_endpoints (id) on delete cascade,
  attempt integer not null check (attempt >= 1),
  -- The HTTP status, or null when no answer came (refused, timed out, an address not allowed).
  status integer check (status between 100 and 599),
  duration_ms integer not null check (duration_ms >= 0),
  -- The answer's first bytes.
  response text check (length(response) <= 1000),
  error text check (length(error) <= 500),
  at timestamptz not null default now()
);
comment on table private.webhook_attempts is 'Every attempt to send an event to an endpoint, with its outcome.';
create index webhook_attempts_endpoint_idx on private.webhook_attempts (endpoint_id, at desc, id desc);
alter table private.webhook_attempts enable row level security;

-- Queues an event for every enabled endpoint of the company that listens for
-- it, in the caller's transaction; nothing when none does. The routes code
-- calls it for route.published and route.completed. Answers the event's id
-- (null: nobody listens).
create function private.queue_webhook_event(company_id uuid, type text, data jsonb)
returns uuid
language plpgsql
security definer
set search_path = ''
as $$
declare
  event_id uuid;
begin
  if not exists (select from public.webhook_endpoints e
                 where e.company_id = queue_webhook_event.company_id and e.enabled
                   and queue_webhook_event.type = any (e.events)) then
    return null;
  end if;
  insert into private.webhook_messages (company_id, type, body)
  values (queue_webhook_event.company_id, queue_webhook_event.type,
    jsonb_build_object('type', queue_webhook_event.type,
      'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'data', queue_webhook_event.data)::text)
  returning id into event_id;
  insert into private.webhook_deliveries (message_id, endpoint_id, company_id)
  select event_id, e.id, e.company_id from public.webhook_endpoints e
  where e.company_id = queue_webhook_event.company_id and e.enabled and queue_webhook_event.type = any (e.events);
  return event_id;
end;
$$;
comment on function private.queue_webhook_event(uuid, text, jsonb) is 'Queues an outgoing webhook event for every enabled endpoint of the company that listens for it, in the caller''s transaction.';

-- A delivery in a webhook: as the API shows it to its company, without the
-- recipient's personal data (the integrator sent it; an erased recipient must
-- not live on in the outbox) nor what depends on who caused the change.
create function private.webhook_delivery_data(d public.deliveries)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
  return private.delivery_json(d) - 'recipient_name' - 'recipient_phone' - 'recipient_email' - 'tracking_token'
    - 'tracking_url' - 'offer_expires_at';
end;
$$;
comment on function private.webhook_delivery_data(public.deliveries) is 'A delivery as webhooks carry it: the API''s object without personal data of the recipient.';

-- private.queue_delivery_webhooks, the trigger on public.deliveries: 05_deliveries.sql, Section: what fires on a delivery.

-- Wakes the webhooks-out function once the queuing transaction commits (10_jobs.sql).
create trigger webhook_deliveries_wake_sender after insert on private.webhook_deliveries
  referencing new table as queued
  for each statement execute function private.wake_function('webhooks-out/send');

-- Section: the sender

-- Standard Webhooks' schedule: the wait after the n-th failed attempt; after
-- the last, the event has failed for that endpoint.
create function private.webhook_retry_delays()
returns interval[]
language plpgsql
immutable
set search_path = ''
as $$
begin
  return array[interval '5 seconds', interval '5 minutes', interval '30 minutes', interval '2 hours',
    interval '5 hours', interval '10 hours', interval '10 hours'];
end;
$$;
comment on function private.webhook_retry_delays() is 'The waits between attempts to send an event: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.';

-- Fails what is still pending for an endpoint (disabled or gone).
create function private.fail_pending_webhooks(endpoint_id uuid, reason text)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  update private.webhook_deliveries w set status = 'failed', error = fail_pending_webhooks.reason,
    next_attempt_at = now()
  where w.endpoint_id = fail_pending_webhooks.endpoint_id and w.status = 'pending';
end;
$$;
comment on function private.fail_pending_webhooks(uuid, text) is 'Fails every event still pending for an endpoint.';

-- Service role only (webhooks-out). Claims up to `batch` due sends of enabled
-- endpoints under a 1-minute lease (longer than a send's 10 s), counting the
-- attempt, with what sending needs: the URL, the encrypted secret, the id and
-- the exact body. Concurrent claimers skip each other's rows.
create function public.claim_webhook_deliveries(batch integer default 20)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  answer jsonb;
begin
  with due as (
    select w.message_id, w.endpoint_id from private.webhook_deliveries w
    join public.webhook_endpoints e on e.id = w.endpoint_id and e.enabled
    where w.status = 'pending' and w.next_attempt_at <= now()
    order by w.next_attempt_at
    limit least(greatest(claim_webhook_deliveries.batch, 1), 100)
    for update of w skip locked
  ), claim as (
    update private.webhook_deliveries w set
      attempts = w.attempts + 1,
      last_attempt_at = now(),
      next_attempt_at = now() + interval '1 minute'
    from due where w.message_id = due.message_id and w.endpoint_id = due.endpoint_id
    returning w.*
  )
  select coalesce(jsonb_agg(jsonb_build_object(
    'event_id', c.message_id, 'endpoint_id', c.endpoint_id, 'company_id', c.company_id, 'attempt', c.attempts,
    'url', e.url, 'secret_ciphertext', s.secret_ciphertext, 'type', m.type, 'body', m.body)
    order by m.created_at), '[]'::jsonb)
  into answer
  from claim c
  join private.webhook_messages m on m.id = c.message_id
  join public.webhook_endpoints e on e.id = c.endpoint_id
  join private.webhook_endpoint_secrets s on s.endpoint_id = c.endpoint_id;
  return answer;
end;
$$;
comment on function public.claim_webhook_deliveries(integer) is 'Claims up to `batch` due webhook sends (skip locked, a 1-minute lease) with what each needs (service role).';
revoke execute on function public.claim_webhook_deliveries(integer) from authenticated;
grant execute on function public.claim_webhook_deliveries(integer) to service_role;

-- Service role only. Records attempt `attempt` of an event to an endpoint:
-- delivered (a 2xx), or failed, then retried on the schedule until its last
-- step, then failed for good. An endpoint whose failures have lasted 5 days
-- is disabled (what it still has pending fails). An outcome for an older
-- attempt than the last changes nothing. Answers the send's status afterwards
-- and whether the endpoint was disabled now.
create function public.record_webhook_attempt(event_id uuid, endpoint_id uuid, attempt integer, delivered boolean,
  status integer, duration_ms integer, response text default null, error text default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  w private.webhook_deliveries;
  delays interval[] := private.webhook_retry_delays();
  e public.webhook_endpoints;
  disabled boolean := false;
begin
  update private.webhook_deliveries x set
    status = case when record_webhook_attempt.delivered then 'delivered'
      when x.attempts > cardinality(delays) then 'failed' else 'pending' end,
    delivered_at = case when record_webhook_attempt.delivered then now() end,
    error = case when record_webhook_attempt.delivered then null
      else left(coalesce(record_webhook_attempt.error, format('answered %s', record_webhook_attempt.status)), 500) end,
    next_attempt_at = case when record_webhook_attempt.delivered or x.attempts > cardinality(delays) then now()
      else now() + delays[x.attempts] end
  where x.message_id = record_webhook_attempt.event_id and x.endpoint_id = record_webhook_attempt.endpoint_id
    and x.attempts = record_webhook_attempt.attempt and x.status = 'pending'
  returning x.* into w;
  if not found then
    return null;
  end if;
  insert into private.webhook_attempts (message_id, endpoint_id, attempt, status, duration_ms, response, error)
  values (w.message_id, w.endpoint_id, w.attempts, record_webhook_attempt.status,
    greatest(record_webhook_attempt.duration_ms, 0), left(record_webhook_attempt.response, 1000),
    left(record_webhook_attempt.error, 500));
  if record_webhook_attempt.delivered then
    update public.webhook_endpoints x set failing_since = null
    where x.id = w.endpoint_id and x.failing_since is not null;
  else
    update public.webhook_endpoints x set failing_since = coalesce(x.failing_since, now())
    where x.id = w.endpoint_id
    returning x.* into e;
    if e.enabled and e.failing_since <= now() - interval '5 days' then
      update public.webhook_endpoints x set enabled = false, updated_at = now(),
        disabled_reason = 'disabled after failing for 5 days'
      where x.id = e.id;
      perform private.fail_pending_webhooks(e.id, 'the endpoint was disabled after failing for 5 days');
      disabled := true;
    end if;
  end if;
  return jsonb_build_object('status', (select x.status from private.webhook_deliveries x
      where x.message_id = w.message_id and x.endpoint_id = w.endpoint_id),
    'next_attempt_at', w.next_attempt_at, 'endpoint_disabled', disabled);
end;
$$;
comment on function public.record_webhook_attempt(uuid, uuid, integer, boolean, integer, integer, text, text) is 'Records an attempt to send a webhook: delivered, or retried on Standard Webhooks'' schedule, then failed; disables an endpoint failing for 5 days (service role).';
revoke execute on function public.record_webhook_attempt(uuid, uuid, integer, boolean, integer, integer, text, text)
  from authenticated;
grant execute on function public.record_webhook_attempt(uuid, uuid, integer, boolean, integer, integer, text, text)
  to service_role;

-- Service role only. Claims, for 5 minutes, the endpoints disabled for failing
-- whose owner has not been told yet (skip locked: senders running at once each
-- get others), each with its company's owners' e-mail addresses; marked told by
-- public.webhook_owner_told once the e-mail went, claimed again after 5 minutes
-- otherwise.
create function public.webhook_owners_to_tell()
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  answer jsonb;
begin
  with claimed as (
    update public.webhook_endpoints e set owner_notice_claimed_at = now()
    where e.id in (
      select x.id from public.webhook_endpoints x
      where not x.enabled and x.failing_since is not null and x.owner_notified_at is null
        and (x.owner_notice_claimed_at is null or x.owner_notice_claimed_at <= now() - interval '5 minutes')
      for update skip locked)
    returning e.*
  )
  select coalesce(jsonb_agg(jsonb_build_object('endpoint_id', e.id, 'url', e.url, 'company_name', c.name,
      'reason', e.disabled_reason,
      'emails', (select coalesce(jsonb_agg(u.email), '[]'::jsonb) from public.memberships m
                 join auth.users u on u.id = m.user_id
                 where m.company_id = e.company_id and m.role = 'company_owner' and u.email is not null))), '[]'::jsonb)
  into answer
  from claimed e join public.companies c on c.id = e.company_id;
  return answer;
end;
$$;
comment on function public.webhook_owners_to_tell() is 'Claims for 5 minutes the endpoints disabled for failing whose company''s owner has not been told yet, with the owners'' e-mail (service role).';
revoke execute on function public.webhook_owners_to_tell() from authenticated;
grant execute on function public.webhook_owners_to_tell() to service_role;

create function public.webhook_owner_told(endpoint_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  update public.webhook_endpoints e set owner_notified_at = now() where e.id = webhook_owner_told.endpoint_id;
end;
$$;
comment on function public.webhook_owner_told(uuid) is 'Notes that the owner was told an endpoint was disabled (service role).';
revoke execute on function public.webhook_owner_told(uuid) from authenticated;
grant execute on function public.webhook_owner_told(uuid) to service_role;

-- Section: attempts, resend, test

create function public.list_webhook_attempts(endpoint_id uuid, page_limit integer default 20, cursor text default null)
returns public.webhook_attempt_page
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.webhook_managers());
  page_size integer := private.check_page_limit(list_webhook_attempts.page_limit);
  after_at timestamptz;
  after_id uuid;
  found_rows private.webhook_attempts[];
begin
  if list_webhook_attempts.cursor is not null then
    select c.sort_key, c.id into after_at, after_id from private.decode_cursor(list_webhook_attempts.cursor) c;
  end if;
  if not exists (select from public.webhook_endpoints e
                 where e.id = list_webhook_attempts.endpoint_id and e.company_id = company) then
    raise exception using errcode = 'PT404', message = 'webhook endpoint not found';
  end if;
  select coalesce(array_agg(a order by a.at desc, a.id desc), '{}') into found_rows from (
    select * from private.webhook_attempts x
    where x.endpoint_id = list_webhook_attempts.endpoint_id
      and (after_at is null or (x.at, x.id) < (after_at, after_id))
    order by x.at desc, x.id desc
    limit page_size + 1) a;
  return row(
    coalesce((select array_agg(row(a.message_id, m.type, a.attempt, a.status, a.duration_ms, a.response, a.error,
        a.at)::public.webhook_attempt order by a.at desc, a.id desc)
      from unnest(found_rows[1:page_size]) a join private.webhook_messages m on m.id = a.message_id), '{}'),
    case when cardinality(found_rows) > page_size
      then private.encode_cursor(found_rows[page_size].at, found_rows[page_size].id) end
  )::public.webhook_attempt_page;
end;
$$;
comment on function public.list_webhook_attempts(uuid, integer, text) is 'Attempts to send events to one endpoint of the caller''s company, newest first (owner, admin, key with webhooks:manage).';
grant execute on function public.list_webhook_attempts(uuid, integer, text) to authenticated;

-- Queues an event again, with its id and body, for every enabled endpoint of
-- the caller's company it was queued for (a receiver that got it already
-- recognises its webhook-id). Answers how many sends were queued.
create function public.resend_webhook_event(event_id uuid)
returns public.webhook_queued
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.webhook_managers());
  queued integer;
begin
  if not exists (select from private.webhook_messages m
                 where m.id = resend_webhook_event.event_id and m.company_id = company) then
    raise exception using errcode = 'PT404', message = 'webhook event not found';
  end if;
  update private.webhook_deliveries w set status = 'pending', next_attempt_at = now(), error = null,
    delivered_at = null
  from public.webhook_endpoints e
  where w.message_id = resend_webhook_event.event_id and e.id = w.endpoint_id and e.enabled
    and w.status <> 'pending';
  get diagnostics queued = row_count;
  if queued = 0 and not exists (select from private.webhook_deliveries w join public.webhook_endpoints e
      on e.id = w.endpoint_id and e.enabled where w.message_id = resend_webhook_event.event_id) then
    raise exception using errcode = 'PT409', message = 'no enabled endpoint to send this event to';
  end if;
  -- Woken as a new event is: the update is no insert.
  if queued > 0 then
    perform private.wake_webhook_sender_now();
  end if;
  return row(resend_webhook_event.event_id, queued)::public.webhook_queued;
end;
$$;
comment on function public.resend_webhook_event(uuid) is 'Sends an outgoing webhook event again, same id and body, to the enabled endpoints it was for (owner, admin, key with webhooks:manage).';
grant execute on function public.resend_webhook_event(uuid) to authenticated;

create function private.wake_webhook_sender_now()
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.call_function('webhooks-out/send');
end;
$$;
comment on function private.wake_webhook_sender_now() is 'Asks the webhooks-out function, through pg_net after the commit, to send what is due.';

-- A `webhook.test` event to one endpoint (enabled or not: it is how a person
-- checks an endpoint before enabling it again).
create function public.send_test_webhook(endpoint_id uuid)
returns public.webhook_queued
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.webhook_managers());
  e public.webhook_endpoints := private.lock_webhook_endpoint(send_test_webhook.endpoint_id, company);
  event_id uuid;
begin
  if not e.enabled then
    raise exception using errcode = 'PT409', message = 'the endpoint is disabled; enable it first';
  end if;
  insert into private.webhook_messages (company_id, type, body)
  values (company, 'webhook.test', jsonb_build_object('type', 'webhook.test',
      'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'data', jsonb_build_object('endpoint_id', e.id))::text)
  returning id into event_id;
  insert into private.webhook_deliveries (message_id, endpoint_id, company_id) values (event_id, e.id, company);
  return row(event_id, 1)::public.webhook_queued;
end;
$$;
comment on function public.send_test_webhook(uuid) is 'Queues a webhook.test event to one enabled endpoint of the caller''s company (owner, admin, key with webhooks:manage).';
grant execute on function public.send_test_webhook(uuid) to authenticated;

-- Section: jobs (10_jobs.sql says what the Vault secrets are)

-- Every minute, while any send is due (a retry whose wait is over, or one
-- whose wake was lost), the webhooks-out function is asked to send.
select cron.schedule('send-webhooks', '* * * * *', $$
  select private.call_function('webhooks-out/send')
  where exists (select from private.webhook_deliveries w where w.status = 'pending' and w.next_attempt_at <= now())
$$);

-- Section: grants of the helpers

grant execute on function private.api_key_scopes(), private.webhook_event_types(), private.webhook_managers(),
  private.api_key_row(public.api_keys), private.check_api_key_scopes(text[]),
  private.webhook_endpoint_row(public.webhook_endpoints), private.check_webhook_events(text[])
  to authenticated, service_role;
grant execute on function private.lock_company_integrations(uuid), private.lock_webhook_endpoint(uuid, uuid),
  private.fail_pending_webhooks(uuid, text),
  private.wake_webhook_sender_now(), private.queue_webhook_event(uuid, text, jsonb),
  private.webhook_delivery_data(public.deliveries), private.api_rate_limit(), private.webhook_retry_delays()
  to service_role;
