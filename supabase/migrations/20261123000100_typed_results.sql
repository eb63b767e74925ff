-- Redefines private.delivery_json, private.broadcast_delivery_change, private.withdrawal_json, private.proof_requirements_json, public.create_driver, public.list_drivers, public.get_driver, public.update_driver, public.get_prices, public.set_prices, public.get_subscription, public.set_subscription, public.save_gateway_config, public.get_my_company, public.list_webhook_events, public.quote_route, public.create_delivery, public.list_deliveries, public.get_delivery, public.cancel_delivery, public.assign_delivery, public.accept_delivery, public.start_delivery, public.complete_delivery, public.get_wallet, public.list_wallet_transactions, public.request_withdrawal, public.attach_transfer, public.mark_transfer_in_doubt, public.fail_withdrawal, public.list_withdrawals, public.get_withdrawal, public.update_my_location, public.list_driver_locations, public.get_delivery_trail, public.get_proof_requirements, public.set_proof_requirements: they return typed rows instead of jsonb.

-- Typed results. Every function that returns a resource returns a composite
-- type named after it (public.delivery, public.withdrawal, ...), and every list
-- a page type ({items, next_cursor}), instead of untyped jsonb: `supabase gen
-- types` then gives an app calling `.rpc()` the shape of what it gets
-- (Database["public"]["CompositeTypes"]), and PostgREST answers each as an
-- object, as before. The JSON is the same, key for key, with one difference:
-- a delivery's tracking_token and tracking_url are null, rather than absent,
-- for a caller who does not manage its company. The edge turns each result
-- into JSON with to_jsonb (functions/_shared/db.ts, rpc).
--
-- The bodies are those of the earlier migrations (named above each), except
-- for what they return: lists aggregate typed rows, and private.next_cursor
-- replaces private.page (which paged jsonb). The two-argument
-- public.fail_withdrawal goes too (its three-argument form says the failure's
-- kind, as every caller does).
--
-- Left as jsonb, on purpose: what is not a resource and no app calls (all
-- service role). The access token hook (Auth's contract is jsonb in and out),
-- the gateway event outcomes ({result, detail}: apply_payment_event,
-- apply_transfer_event), register_company's ids, the ETA work list
-- (claim_eta_refreshes) and the public tracking view (track_delivery, served
-- by GET /api/v1/track/{token} alone).

-- Section: the types

-- Composite attributes cannot be declared not null, so generated types make
-- every field nullable; docs/contract.md and the OpenAPI document say which
-- ones are never null.
create type public.geo_point as (lat double precision, lng double precision);
comment on type public.geo_point is 'A position: latitude and longitude in degrees.';

create type public.pix_payment as (
  gateway_payment_id text,
  pix_copy_paste text,
  pix_qr_code_image text,
  due_date date
);
comment on type public.pix_payment is 'A delivery''s Pix charge at the gateway.';

create type public.delivery_proof as (photo_path text, signature_path text, note text);
comment on type public.delivery_proof is 'Proof of delivery: Storage object names in delivery-proofs, and the driver''s note.';

create type public.delivery as (
  id uuid,
  company_id uuid,
  status text,
  payment_status text,
  payment_method text,
  origin_address text,
  origin public.geo_point,
  destination_address text,
  destination public.geo_point,
  distance_m integer,
  duration_s integer,
  price numeric,
  driver_id uuid,
  recipient_name text,
  recipient_phone text,
  notes text,
  payment public.pix_payment,
  cancel_reason text,
  refund_due boolean,
  created_at timestamptz,
  updated_at timestamptz,
  accepted_at timestamptz,
  started_at timestamptz,
  completed_at timestamptz,
  cancelled_at timestamptz,
  remaining_m integer,
  eta_at timestamptz,
  eta_refreshed_at timestamptz,
  proof public.delivery_proof,
  tracking_token text,
  tracking_url text
);
comment on type public.delivery is 'A delivery as the API returns it.';
create type public.delivery_page as (items public.delivery[], next_cursor text);
comment on type public.delivery_page is 'One page of deliveries, newest first; next_cursor is null on the last page.';

create type public.route_quote as (distance_m integer, duration_s integer, price numeric);
comment on type public.route_quote is 'A route as measured, and the company''s price for it.';

create type public.driver as (
  id uuid,
  user_id uuid,
  name text,
  email text,
  phone text,
  active boolean,
  created_at timestamptz,
  updated_at timestamptz
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

create type public.company as (id uuid, name text, gateway public.gateway_status, created_at timestamptz);
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

create type public.wallet as (driver_id uuid, balance numeric, available_balance numeric, currency text);
comment on type public.wallet is 'A driver''s balance (its ledger) and available balance (less processing withdrawals).';

create type public.wallet_transaction as (
  id uuid,
  kind text,
  amount numeric,
  delivery_id uuid,
  withdrawal_id uuid,
  created_at timestamptz
);
comment on type public.wallet_transaction is 'One ledger entry of a driver''s wallet.';
create type public.wallet_transaction_page as (items public.wallet_transaction[], next_cursor text);
comment on type public.wallet_transaction_page is 'One page of ledger entries, newest first; next_cursor is null on the last page.';

create type public.withdrawal as (
  id uuid,
  company_id uuid,
  driver_id uuid,
  amount numeric,
  pix_key text,
  pix_key_type text,
  status text,
  in_doubt boolean,
  gateway_transfer_id text,
  error_message text,
  failure_kind text,
  created_at timestamptz,
  updated_at timestamptz,
  completed_at timestamptz
);
comment on type public.withdrawal is 'A withdrawal as the API returns it (Pix key masked).';
create type public.withdrawal_page as (items public.withdrawal[], next_cursor text);
comment on type public.withdrawal_page is 'One page of withdrawals, newest first; next_cursor is null on the last page.';

create type public.driver_location as (
  driver_id uuid,
  lat double precision,
  lng double precision,
  heading double precision,
  speed double precision,
  accuracy double precision,
  updated_at timestamptz
);
comment on type public.driver_location is 'A driver''s last accepted position.';

create type public.live_map_driver as (
  driver_id uuid,
  name text,
  lat double precision,
  lng double precision,
  heading double precision,
  speed double precision,
  accuracy double precision,
  updated_at timestamptz
);
comment on type public.live_map_driver is 'An active driver and its last position (nulls before the first).';
create type public.live_map as (items public.live_map_driver[]);
comment on type public.live_map is 'Every active driver of a company with its last position.';

create type public.trail_point as (lat double precision, lng double precision, recorded_at timestamptz);
comment on type public.trail_point is 'One stored position of a delivery''s trail.';
create type public.delivery_trail as (delivery_id uuid, points public.trail_point[]);
comment on type public.delivery_trail is 'The stored trail of a delivery, oldest point first.';

create type public.proof_requirements_set as (photo boolean, signature boolean, note boolean);
comment on type public.proof_requirements_set is 'Which proof a company requires to complete a delivery.';

-- Section: the shapes

-- The cursor of the page after this one, or null on the last page: `rows`
-- holds up to page_limit + 1 rows in the list's order, each with its sort key
-- in `sort_key_field` and its `id` (the rule private.page had for jsonb).
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
grant execute on function private.next_cursor(anyarray, integer, text) to authenticated, service_role;
drop function private.page(jsonb, integer, text);

-- In PL/pgSQL, not SQL: with its `set search_path` a SQL function is never
-- inlined, and Postgres plans its body again on every call, which made a
-- delivery's JSON cost about 1 ms (seeding a million deliveries, each
-- broadcast, ran for more than 20 minutes). PL/pgSQL keeps its plans for the
-- connection and evaluates a row constructor as a simple expression: about
-- 0.02 ms a delivery beside the tracking link's look-up.
create function private.delivery_row(d public.deliveries)
returns public.delivery
language plpgsql
stable
set search_path = ''
as $$
declare
  link jsonb := private.delivery_tracking_fields(d.id, d.company_id);
begin
  return row(
    d.id, d.company_id, d.status, d.payment_status, d.payment_method,
    d.origin_address, row(d.origin_lat, d.origin_lng)::public.geo_point,
    d.destination_address, row(d.destination_lat, d.destination_lng)::public.geo_point,
    d.distance_m, d.duration_s, d.price, d.driver_id, d.recipient_name, d.recipient_phone, d.notes,
    case when d.payment_method = 'pix' then
      row(d.gateway_payment_id, d.pix_copy_paste, d.pix_qr_code_image, d.payment_due_date)::public.pix_payment end,
    d.cancel_reason,
    d.status = 'cancelled' and d.payment_status in ('received', 'confirmed'),
    d.created_at, d.updated_at, d.accepted_at, d.started_at, d.completed_at, d.cancelled_at,
    d.remaining_m, d.eta_at, d.eta_refreshed_at,
    case when d.status = 'completed' then
      row(d.proof_photo_path, d.proof_signature_path, d.proof_note)::public.delivery_proof end,
    link ->> 'tracking_token', link ->> 'tracking_url'
  )::public.delivery;
end;
$$;
comment on function private.delivery_row(public.deliveries) is 'A delivery as the API shows it; the tracking link only to its managers.';

create or replace function private.delivery_json(d public.deliveries)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$ begin return to_jsonb(private.delivery_row(d)); end; $$;

create function private.driver_row(d public.drivers)
returns public.driver
language plpgsql
stable
set search_path = ''
as $$
begin
  return row(d.id, d.user_id, d.name, d.email, d.phone, d.active, d.created_at, d.updated_at)::public.driver;
end;
$$;
comment on function private.driver_row(public.drivers) is 'A driver as the API shows it.';
drop function private.driver_json(public.drivers);

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
drop function private.prices_json(public.prices);

create function private.withdrawal_row(w public.withdrawals)
returns public.withdrawal
language plpgsql
stable
set search_path = ''
as $$
begin
  return row(w.id, w.company_id, w.driver_id, w.amount, private.mask_pix_key(w.pix_key), w.pix_key_type, w.status,
    w.in_doubt, w.gateway_transfer_id, w.error_message, w.failure_kind, w.created_at, w.updated_at,
    w.completed_at)::public.withdrawal;
end;
$$;
comment on function private.withdrawal_row(public.withdrawals) is 'A withdrawal as the API shows it (Pix key masked).';

create or replace function private.withdrawal_json(w public.withdrawals)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$ begin return to_jsonb(private.withdrawal_row(w)); end; $$;

create function private.location_row(l public.driver_locations)
returns public.driver_location
language plpgsql
stable
set search_path = ''
as $$
begin
  return row(l.driver_id, l.lat, l.lng, l.heading, l.speed, l.accuracy, l.updated_at)::public.driver_location;
end;
$$;
comment on function private.location_row(public.driver_locations) is 'A driver location as the API returns and broadcasts it.';
drop function private.location_json(public.driver_locations);

create function private.proof_requirements_row(company_id uuid)
returns public.proof_requirements_set
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  r public.proof_requirements;
begin
  select * into r from public.proof_requirements p where p.company_id = proof_requirements_row.company_id;
  -- None stored: none required.
  return row(coalesce(r.photo, false), coalesce(r.signature, false), coalesce(r.note, false))::public.proof_requirements_set;
end;
$$;
comment on function private.proof_requirements_row(uuid) is 'A company''s proof requirements; none stored means none required.';

create or replace function private.proof_requirements_json(company_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$ begin return to_jsonb(private.proof_requirements_row(proof_requirements_json.company_id)); end; $$;

-- A broadcast shows a delivery as its receiver reads it: drivers with the
-- tracking link's fields null, as the API answers them.
create or replace function private.broadcast_delivery_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  -- The company's managers get the tracking link; drivers never do, whoever made the change.
  payload jsonb := private.delivery_json(new) || jsonb_build_object('tracking_token', null, 'tracking_url', null);
  driver record;
begin
  perform private.broadcast('company:' || new.company_id, 'delivery_updated',
    payload || private.delivery_tracking_link(new.id));
  if new.driver_id is not null and new.accepted_at is not null then
    perform private.broadcast('driver:' || new.driver_id, 'delivery_updated', payload);
  end if;
  if new.status = 'pending' and new.driver_id is null and (tg_op = 'INSERT' or old.status <> 'pending') then
    for driver in select d.id from public.drivers d where d.company_id = new.company_id and d.active loop
      perform private.broadcast('driver:' || driver.id, 'delivery_available', payload);
    end loop;
  end if;
  return null;
end;
$$;

grant execute on function private.delivery_row(public.deliveries), private.driver_row(public.drivers),
  private.prices_row(public.prices), private.withdrawal_row(public.withdrawals),
  private.location_row(public.driver_locations), private.proof_requirements_row(uuid)
  to authenticated, service_role;

-- Section: the functions, each dropped and created again with its typed result

-- As in 20261121000200_company.sql

drop function public.create_driver(uuid, uuid, text, text, text);
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

drop function public.list_drivers(integer, text);
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

drop function public.get_driver(uuid);
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

drop function public.update_driver(uuid, text, text, boolean);
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

drop function public.get_prices();
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

drop function public.set_prices(numeric, numeric, numeric, numeric);
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

drop function public.get_subscription();
create function public.get_subscription()
returns public.subscription
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize('company_owner');
begin
  return (select row(s.plan, s.status, s.current_period_end)::public.subscription
          from public.subscriptions s where s.company_id = company);
end;
$$;
comment on function public.get_subscription() is 'The caller''s company subscription (owner only).';
grant execute on function public.get_subscription() to authenticated;

drop function public.set_subscription(text);
create function public.set_subscription(plan text)
returns public.subscription
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize('company_owner');
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

drop function public.save_gateway_config(uuid, text, text, text);
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

drop function public.get_my_company();
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
      c.created_at)::public.company
    from public.companies c
    left join private.gateway_configs g on g.company_id = c.id
    where c.id = company
  );
end;
$$;
comment on function public.get_my_company() is 'The caller''s company profile; says whether the gateway is configured, never a secret.';
grant execute on function public.get_my_company() to authenticated;

drop function public.list_webhook_events(integer, text);
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

-- As in 20261121001000_deliveries.sql

drop function public.quote_route(numeric, numeric);
create function public.quote_route(distance_m numeric, duration_s numeric)
returns public.route_quote
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
  metres integer := round(quote_route.distance_m);
begin
  return row(metres, round(quote_route.duration_s)::integer, private.price_for(company, metres))::public.route_quote;
end;
$$;
comment on function public.quote_route(numeric, numeric) is 'The caller''s company price for a route the routing service measured (metres and seconds, rounded to whole units).';
grant execute on function public.quote_route(numeric, numeric) to authenticated;

drop function public.create_delivery(uuid, uuid, uuid, text, text, double precision, double precision, text,
  double precision, double precision, numeric, numeric, text, text, text, uuid, numeric, text, text, text, date);
create function public.create_delivery(
  id uuid,
  company_id uuid,
  created_by uuid,
  payment_method text,
  origin_address text,
  origin_lat double precision,
  origin_lng double precision,
  destination_address text,
  destination_lat double precision,
  destination_lng double precision,
  distance_m numeric,
  duration_s numeric,
  recipient_name text default null,
  recipient_phone text default null,
  notes text default null,
  driver_id uuid default null,
  charged_price numeric default null,
  gateway_payment_id text default null,
  pix_copy_paste text default null,
  pix_qr_code_image text default null,
  payment_due_date date default null)
returns public.delivery
language plpgsql
set search_path = ''
as $$
declare
  metres integer := round(create_delivery.distance_m);
  price numeric(12, 2) := private.price_for(create_delivery.company_id, metres);
  delivery public.deliveries;
begin
  if create_delivery.driver_id is not null then
    perform private.check_assignable_driver(create_delivery.company_id, create_delivery.driver_id);
  end if;
  if create_delivery.payment_method = 'pix' and create_delivery.charged_price is distinct from price then
    -- Only when the prices changed between the quote and this insert.
    raise exception using errcode = 'PT409',
      message = format('the price changed to %s while the delivery was being created; try again', price);
  end if;

  insert into public.deliveries (id, company_id, status, payment_status, payment_method,
    origin_address, origin_lat, origin_lng, destination_address, destination_lat, destination_lng,
    distance_m, duration_s, price, driver_share, driver_id, recipient_name, recipient_phone, notes,
    gateway_payment_id, pix_copy_paste, pix_qr_code_image, payment_due_date)
  select create_delivery.id, create_delivery.company_id,
    case create_delivery.payment_method when 'pix' then 'awaiting_payment' else 'pending' end,
    case create_delivery.payment_method when 'pix' then 'pending' else 'invoiced' end,
    create_delivery.payment_method,
    btrim(create_delivery.origin_address), create_delivery.origin_lat, create_delivery.origin_lng,
    btrim(create_delivery.destination_address), create_delivery.destination_lat, create_delivery.destination_lng,
    metres, round(create_delivery.duration_s)::integer, price, p.driver_share, create_delivery.driver_id,
    create_delivery.recipient_name, create_delivery.recipient_phone, create_delivery.notes,
    create_delivery.gateway_payment_id, create_delivery.pix_copy_paste, create_delivery.pix_qr_code_image,
    create_delivery.payment_due_date
  from public.prices p where p.company_id = create_delivery.company_id
  returning * into delivery;
  perform private.record_delivery_history(null, delivery, 'create', create_delivery.created_by);

  -- An invoice delivery for a given driver is that driver's at once; a Pix one
  -- becomes it when paid (public.apply_payment_event).
  if delivery.status = 'pending' and delivery.driver_id is not null then
    delivery := private.move_delivery(delivery, 'assign', create_delivery.created_by);
  end if;
  return private.delivery_row(delivery);
end;
$$;
comment on function public.create_delivery(uuid, uuid, uuid, text, text, double precision, double precision, text,
  double precision, double precision, numeric, numeric, text, text, text, uuid, numeric, text, text, text, date)
  is 'Inserts a delivery the edge has routed (and for Pix, charged) for an authorized caller (service role).';
revoke execute on function public.create_delivery(uuid, uuid, uuid, text, text, double precision, double precision, text,
  double precision, double precision, numeric, numeric, text, text, text, uuid, numeric, text, text, text, date) from authenticated;
grant execute on function public.create_delivery(uuid, uuid, uuid, text, text, double precision, double precision, text,
  double precision, double precision, numeric, numeric, text, text, text, uuid, numeric, text, text, text, date) to service_role;

drop function public.list_deliveries(text, uuid, integer, text, text);
create function public.list_deliveries(
  status text default null, driver_id uuid default null, page_limit integer default 20, cursor text default null,
  payment_status text default null)
returns public.delivery_page
language plpgsql
stable
set search_path = ''
-- Each call is planned with its own values, so that a filter left null drops
-- out of the plan and the one given picks its index (a generic plan would keep
-- `x is null or ...` and walk the company's whole history).
set plan_cache_mode = force_custom_plan
as $$
declare
  company uuid := private.authorize(variadic private.members());
  -- Null for owners and admins; a driver's own id for a driver.
  me uuid := case when private.app_role() = 'driver' then private.driver_id() end;
  -- Scalars, not a record: a record left unassigned cannot be read even where
  -- `cursor is null` makes the comparison moot.
  after_key timestamptz;
  after_id uuid;
  rows public.delivery[];
begin
  perform private.check_page_limit(list_deliveries.page_limit);
  if list_deliveries.cursor is not null then
    select c.sort_key, c.id into after_key, after_id from private.decode_cursor(list_deliveries.cursor) c;
  end if;
  -- Row-level security stays the authority: the predicates here only narrow
  -- the scan to what the policy lets the caller see, so that each part is one
  -- index range scan in (created_at desc, id desc) order.
  if me is null then
    select coalesce(array_agg(private.delivery_row(d) order by d.created_at desc, d.id desc), '{}') into rows
    from (
      select * from public.deliveries d
      where d.company_id = company
        and (list_deliveries.status is null or d.status = list_deliveries.status)
        and (list_deliveries.driver_id is null or d.driver_id = list_deliveries.driver_id)
        and (list_deliveries.payment_status is null or d.payment_status = list_deliveries.payment_status)
        and (list_deliveries.cursor is null or (d.created_at, d.id) < (after_key, after_id))
      order by d.created_at desc, d.id desc
      limit list_deliveries.page_limit + 1
    ) d;
  else
    -- A driver's scope is two ranges, as in the policy: the pending deliveries
    -- offered to every driver of its company, and those it has taken.
    select coalesce(array_agg(private.delivery_row(d) order by d.created_at desc, d.id desc), '{}') into rows
    from (
      select * from (
        (select * from public.deliveries d
         where d.company_id = company and d.status = 'pending' and d.driver_id is null
           and (list_deliveries.status is null or list_deliveries.status = 'pending')
           and list_deliveries.driver_id is null
           and (list_deliveries.payment_status is null or d.payment_status = list_deliveries.payment_status)
           and (list_deliveries.cursor is null or (d.created_at, d.id) < (after_key, after_id))
         order by d.created_at desc, d.id desc
         limit list_deliveries.page_limit + 1)
        union all
        (select * from public.deliveries d
         where d.driver_id = me and d.accepted_at is not null and d.company_id = company
           and (list_deliveries.status is null or d.status = list_deliveries.status)
           and (list_deliveries.driver_id is null or list_deliveries.driver_id = me)
           and (list_deliveries.payment_status is null or d.payment_status = list_deliveries.payment_status)
           and (list_deliveries.cursor is null or (d.created_at, d.id) < (after_key, after_id))
         order by d.created_at desc, d.id desc
         limit list_deliveries.page_limit + 1)
      ) scope
      order by scope.created_at desc, scope.id desc
      limit list_deliveries.page_limit + 1
    ) d;
  end if;
  return (rows[1:list_deliveries.page_limit], private.next_cursor(rows, list_deliveries.page_limit, 'created_at'))
    ::public.delivery_page;
end;
$$;
comment on function public.list_deliveries(text, uuid, integer, text, text) is 'The deliveries the caller may see, newest first, one page, optionally by status, driver and payment status.';
grant execute on function public.list_deliveries(text, uuid, integer, text, text) to authenticated;

drop function public.get_delivery(uuid);
create function public.get_delivery(delivery_id uuid)
returns public.delivery
language plpgsql
stable
set search_path = ''
as $$
declare
  delivery public.deliveries;
begin
  perform private.authorize(variadic private.members());
  select * into delivery from public.deliveries d where d.id = get_delivery.delivery_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'delivery not found';
  end if;
  return private.delivery_row(delivery);
end;
$$;
comment on function public.get_delivery(uuid) is 'One delivery the caller may see (row-level security hides the others: 404).';
grant execute on function public.get_delivery(uuid) to authenticated;

drop function public.cancel_delivery(uuid, text);
create function public.cancel_delivery(delivery_id uuid, reason text default null)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
  delivery public.deliveries := private.lock_delivery(cancel_delivery.delivery_id, company);
begin
  delivery := private.move_delivery(delivery, 'cancel', (select auth.uid()), cancel_reason => cancel_delivery.reason);
  return private.delivery_row(delivery);
end;
$$;
comment on function public.cancel_delivery(uuid, text) is 'Cancels a delivery of the caller''s company that no driver has started.';
grant execute on function public.cancel_delivery(uuid, text) to authenticated;

drop function public.assign_delivery(uuid, uuid);
create function public.assign_delivery(delivery_id uuid, driver_id uuid)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  delivery public.deliveries := private.lock_delivery(assign_delivery.delivery_id, company);
begin
  perform private.check_assignable_driver(company, assign_delivery.driver_id);
  delivery := private.move_delivery(delivery, 'assign', (select auth.uid()), driver_id => assign_delivery.driver_id);
  return private.delivery_row(delivery);
end;
$$;
comment on function public.assign_delivery(uuid, uuid) is 'Gives a pending delivery of the caller''s company to one of its active drivers.';
grant execute on function public.assign_delivery(uuid, uuid) to authenticated;

drop function public.accept_delivery(uuid);
create function public.accept_delivery(delivery_id uuid)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize('driver');
  -- Of two drivers accepting at once, the second waits here and then finds the
  -- delivery accepted: 422.
  delivery public.deliveries := private.lock_delivery(accept_delivery.delivery_id, company);
begin
  delivery := private.move_delivery(delivery, 'accept', (select auth.uid()), driver_id => private.driver_id());
  return private.delivery_row(delivery);
end;
$$;
comment on function public.accept_delivery(uuid) is 'The calling driver takes a pending delivery of its company; exactly one of concurrent callers wins.';
grant execute on function public.accept_delivery(uuid) to authenticated;

drop function public.start_delivery(uuid);
create function public.start_delivery(delivery_id uuid)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  delivery public.deliveries := private.lock_own_delivery(start_delivery.delivery_id);
begin
  delivery := private.move_delivery(delivery, 'start', (select auth.uid()));
  return private.delivery_row(delivery);
end;
$$;
comment on function public.start_delivery(uuid) is 'The linked driver sets off with an accepted delivery.';
grant execute on function public.start_delivery(uuid) to authenticated;

drop function public.complete_delivery(uuid, text);
create function public.complete_delivery(delivery_id uuid, note text default null)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  delivery public.deliveries := private.lock_own_delivery(complete_delivery.delivery_id);
begin
  if delivery.status = 'in_progress' then
    -- The photo and signature uploaded to Storage, and the note; 422 naming what the company
    -- requires and is missing (private.attach_proof, in the proof-of-delivery migration).
    delivery := private.attach_proof(delivery, complete_delivery.note);
  end if;
  delivery := private.move_delivery(delivery, 'complete', (select auth.uid()));
  insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
  values (delivery.company_id, delivery.driver_id, 'delivery_credit', round(delivery.price * delivery.driver_share, 2), delivery.id);
  return private.delivery_row(delivery);
end;
$$;
comment on function public.complete_delivery(uuid, text) is 'The linked driver completes a delivery in progress, with its proof, and is credited price * driver_share.';
grant execute on function public.complete_delivery(uuid, text) to authenticated;

-- As in 20261121002000_money.sql

drop function public.get_wallet();
create function public.get_wallet()
returns public.wallet
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  driver uuid;
  balances record;
begin
  perform private.authorize('driver');
  driver := private.driver_id();
  select * into balances from private.wallet_balances(driver);
  return row(driver, balances.balance, balances.available_balance, 'BRL')::public.wallet;
end;
$$;
comment on function public.get_wallet() is 'The calling driver''s balance (its ledger) and available balance (less processing withdrawals).';
grant execute on function public.get_wallet() to authenticated;

drop function public.list_wallet_transactions(integer, text);
create function public.list_wallet_transactions(page_limit integer default 20, cursor text default null)
returns public.wallet_transaction_page
language plpgsql
stable
set search_path = ''
-- Planned with each call's values: a generic plan would keep `cursor is null or ...`
-- and walk from the newest row to the cursor (public.list_deliveries says more).
set plan_cache_mode = force_custom_plan
as $$
declare
  driver uuid;
  after_key timestamptz;
  after_id uuid;
  rows public.wallet_transaction[];
begin
  perform private.authorize('driver');
  driver := private.driver_id();
  perform private.check_page_limit(page_limit);
  -- Scalars, not a record: an unassigned record's fields cannot even be planned with.
  if cursor is not null then
    select c.sort_key, c.id into after_key, after_id from private.decode_cursor(cursor) c;
  end if;
  select coalesce(array_agg(row(e.id, e.kind, e.amount, e.delivery_id, e.withdrawal_id, e.created_at)::public.wallet_transaction
    order by e.created_at desc, e.id desc), '{}') into rows
  from (
    select * from public.wallet_entries e
    where e.driver_id = driver
      and (list_wallet_transactions.cursor is null or (e.created_at, e.id) < (after_key, after_id))
    order by e.created_at desc, e.id desc
    limit page_limit + 1
  ) e;
  return (rows[1:page_limit], private.next_cursor(rows, page_limit, 'created_at'))::public.wallet_transaction_page;
end;
$$;
comment on function public.list_wallet_transactions(integer, text) is 'The calling driver''s ledger entries, newest first, one page.';
grant execute on function public.list_wallet_transactions(integer, text) to authenticated;

drop function public.request_withdrawal(numeric, text, text);
create function public.request_withdrawal(amount numeric, pix_key text, pix_key_type text)
returns public.withdrawal
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize('driver');
  driver uuid := private.driver_id();
  available numeric;
  created public.withdrawals;
begin
  if request_withdrawal.amount is null or request_withdrawal.amount <= 0
     or request_withdrawal.amount <> round(request_withdrawal.amount, 2) then
    raise exception using errcode = 'PT400', message = 'amount must be greater than 0 with at most 2 decimal places';
  end if;
  if not private.valid_pix_key(request_withdrawal.pix_key, request_withdrawal.pix_key_type) then
    raise exception using errcode = 'PT400', message = format('pix_key is not a valid %s key', coalesce(request_withdrawal.pix_key_type, 'Pix'));
  end if;
  if not exists (select from private.gateway_configs g where g.company_id = company) then
    raise exception using errcode = 'PT422', message = 'the company has not configured the payment gateway';
  end if;

  -- One withdrawal at a time per driver: the next one reads the balance after this one commits,
  -- and so does it after any reversal or late debit that holds the same lock.
  perform private.lock_wallet(driver);
  select b.available_balance into available from private.wallet_balances(driver) b;
  if request_withdrawal.amount > available then
    raise exception using errcode = 'PT422',
      message = format('insufficient balance: available %s, requested %s', available, request_withdrawal.amount::numeric(12, 2));
  end if;

  insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type)
  values (company, driver, request_withdrawal.amount, request_withdrawal.pix_key, request_withdrawal.pix_key_type)
  returning * into created;
  return private.withdrawal_row(created);
end;
$$;
comment on function public.request_withdrawal(numeric, text, text) is 'Records a processing withdrawal for the calling driver, 422 when it exceeds the available balance; the edge then asks the gateway for the transfer.';
grant execute on function public.request_withdrawal(numeric, text, text) to authenticated;

drop function public.attach_transfer(uuid, text);
create function public.attach_transfer(withdrawal_id uuid, gateway_transfer_id text)
returns public.withdrawal
language plpgsql
set search_path = ''
as $$
declare
  w public.withdrawals;
begin
  w := private.lock_withdrawal(attach_transfer.withdrawal_id);
  if w.id is null then
    raise exception using errcode = 'PT404', message = 'withdrawal not found';
  end if;
  if w.gateway_transfer_id is distinct from attach_transfer.gateway_transfer_id then
    if w.gateway_transfer_id is not null then
      raise exception using errcode = 'PT409', message = 'the withdrawal already has another gateway transfer';
    end if;
    -- Only the transfer id: a transfer event that overtook us may have settled the status already.
    update public.withdrawals x set gateway_transfer_id = attach_transfer.gateway_transfer_id, in_doubt = false
    where x.id = w.id
    returning * into w;
  end if;
  return private.withdrawal_row(w);
end;
$$;
comment on function public.attach_transfer(uuid, text) is 'Records the gateway''s transfer id on a withdrawal, whatever its status; the withdrawal is no longer in doubt (service role).';
grant execute on function public.attach_transfer(uuid, text) to service_role;

drop function public.mark_transfer_in_doubt(uuid, text);
create function public.mark_transfer_in_doubt(withdrawal_id uuid, error_message text)
returns public.withdrawal
language plpgsql
set search_path = ''
as $$
declare
  w public.withdrawals := private.lock_withdrawal(mark_transfer_in_doubt.withdrawal_id);
begin
  if w.id is null then
    raise exception using errcode = 'PT404', message = 'withdrawal not found';
  end if;
  -- An event that overtook us may have settled it, or stored its transfer: then it is not in doubt.
  if w.status = 'processing' and w.gateway_transfer_id is null then
    update public.withdrawals x set in_doubt = true, error_message = mark_transfer_in_doubt.error_message
    where x.id = w.id
    returning * into w;
  end if;
  return private.withdrawal_row(w);
end;
$$;
comment on function public.mark_transfer_in_doubt(uuid, text) is 'Flags a processing withdrawal whose transfer request may or may not have reached the gateway; its funds stay held (service role).';
grant execute on function public.mark_transfer_in_doubt(uuid, text) to service_role;

drop function public.fail_withdrawal(uuid, text, text);
create function public.fail_withdrawal(withdrawal_id uuid, error_message text, failure_kind text)
returns public.withdrawal
language plpgsql
set search_path = ''
as $$
declare
  w public.withdrawals;
begin
  if fail_withdrawal.failure_kind is null or fail_withdrawal.failure_kind not in ('gateway_rejected', 'no_transfer') then
    raise exception using errcode = 'PT400', message = 'failure_kind must be gateway_rejected or no_transfer';
  end if;
  w := private.lock_withdrawal(fail_withdrawal.withdrawal_id);
  if w.id is null then
    raise exception using errcode = 'PT404', message = 'withdrawal not found';
  end if;
  if w.status = 'processing' then
    update public.withdrawals x
    set status = 'failed', error_message = fail_withdrawal.error_message, failure_kind = fail_withdrawal.failure_kind,
      in_doubt = false
    where x.id = w.id
    returning * into w;
  elsif w.status <> 'failed' then
    raise exception using errcode = 'PT422', message = format('withdrawal cannot move from %s to failed', w.status);
  end if;
  return private.withdrawal_row(w);
end;
$$;
comment on function public.fail_withdrawal(uuid, text, text) is 'Marks a processing withdrawal failed, releasing its funds, once we know the gateway made no transfer: gateway_rejected (it refused the request) or no_transfer (reconciliation found none) (service role).';
grant execute on function public.fail_withdrawal(uuid, text, text) to service_role;

-- The two-argument form goes: every caller says the failure's kind.
drop function public.fail_withdrawal(uuid, text);

drop function public.list_withdrawals(integer, text);
create function public.list_withdrawals(page_limit integer default 20, cursor text default null)
returns public.withdrawal_page
language plpgsql
stable
security definer
set search_path = ''
-- Planned with each call's values: a generic plan would keep `cursor is null or ...`
-- and walk from the newest row to the cursor (public.list_deliveries says more).
set plan_cache_mode = force_custom_plan
as $$
declare
  company uuid := private.authorize(variadic array['driver'] || private.company_managers());
  driver uuid := private.driver_id();
  after_key timestamptz;
  after_id uuid;
  rows public.withdrawal[];
begin
  perform private.check_page_limit(page_limit);
  if cursor is not null then
    select c.sort_key, c.id into after_key, after_id from private.decode_cursor(cursor) c;
  end if;
  -- The same scope as the select policy: a driver its own, managers their company's.
  select coalesce(array_agg(private.withdrawal_row(w) order by w.created_at desc, w.id desc), '{}') into rows
  from (
    select * from public.withdrawals w
    where w.company_id = company
      and (driver is null or w.driver_id = driver)
      and (list_withdrawals.cursor is null or (w.created_at, w.id) < (after_key, after_id))
    order by w.created_at desc, w.id desc
    limit page_limit + 1
  ) w;
  return (rows[1:page_limit], private.next_cursor(rows, page_limit, 'created_at'))::public.withdrawal_page;
end;
$$;
comment on function public.list_withdrawals(integer, text) is 'Withdrawals, newest first, one page: a driver''s own, or the company''s for owners and admins.';
grant execute on function public.list_withdrawals(integer, text) to authenticated;

drop function public.get_withdrawal(uuid);
create function public.get_withdrawal(withdrawal_id uuid)
returns public.withdrawal
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic array['driver'] || private.company_managers());
  driver uuid := private.driver_id();
  w public.withdrawals;
begin
  select * into w from public.withdrawals x
  where x.id = get_withdrawal.withdrawal_id
    and x.company_id = company
    and (driver is null or x.driver_id = driver);
  if not found then
    raise exception using errcode = 'PT404', message = 'withdrawal not found';
  end if;
  return private.withdrawal_row(w);
end;
$$;
comment on function public.get_withdrawal(uuid) is 'One withdrawal: the driver''s own, or its company''s for owners and admins.';
grant execute on function public.get_withdrawal(uuid) to authenticated;

-- As in 20261121003000_locations.sql

drop function public.update_my_location(double precision, double precision, double precision, double precision, double precision);
create function public.update_my_location(
  lat double precision,
  lng double precision,
  heading double precision default null,
  speed double precision default null,
  accuracy double precision default null
)
returns public.driver_location
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize('driver');
  driver uuid;
  saved public.driver_locations;
  located public.driver_location;
  last_accepted timestamptz;
  retry_after integer;
begin
  -- authorize has checked that the caller is an active driver.
  select d.id into driver from public.drivers d where d.user_id = (select auth.uid());

  insert into public.driver_locations as l (driver_id, company_id, lat, lng, heading, speed, accuracy, updated_at)
  values (driver, company, update_my_location.lat, update_my_location.lng, update_my_location.heading,
          update_my_location.speed, update_my_location.accuracy, now())
  on conflict (driver_id) do update set
    lat = excluded.lat,
    lng = excluded.lng,
    heading = excluded.heading,
    speed = excluded.speed,
    accuracy = excluded.accuracy,
    updated_at = excluded.updated_at
  where l.updated_at <= excluded.updated_at - interval '10 seconds'
  returning * into saved;

  if not found then
    select l.updated_at into last_accepted from public.driver_locations l where l.driver_id = driver;
    -- now() is this transaction's start; a concurrent winner may have started
    -- later, so clamp to the 1..10 s a client can meaningfully wait.
    retry_after := least(10, greatest(1,
      ceil(extract(epoch from last_accepted + interval '10 seconds' - now()))::integer));
    raise exception using
      errcode = 'PT429',
      message = 'location updates are limited to one every 10 seconds',
      detail = jsonb_build_object('retry_after', retry_after)::text,
      hint = format('retry after %s seconds', retry_after);
  end if;

  located := private.location_row(saved);
  perform private.broadcast('company:' || company, 'driver_location', to_jsonb(located));
  return located;
end;
$$;
comment on function public.update_my_location(double precision, double precision, double precision, double precision, double precision)
  is 'Stores the calling driver''s position, at most once per 10 seconds (else PT429 with detail {"retry_after": seconds}), and broadcasts it to the company.';
grant execute on function public.update_my_location(double precision, double precision, double precision, double precision, double precision)
  to authenticated;

drop function public.list_driver_locations();
create function public.list_driver_locations()
returns public.live_map
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
begin
  return row(coalesce((
    select array_agg(row(d.id, d.name, l.lat, l.lng, l.heading, l.speed, l.accuracy, l.updated_at)::public.live_map_driver
      order by d.name, d.id)
    from public.drivers d
    left join public.driver_locations l on l.driver_id = d.id
    where d.company_id = company and d.active
  ), '{}'))::public.live_map;
end;
$$;
comment on function public.list_driver_locations() is 'Every active driver of the caller''s company with its last position, or nulls (owner, admin, legacy admin).';
grant execute on function public.list_driver_locations() to authenticated;

drop function public.get_delivery_trail(uuid);
create function public.get_delivery_trail(delivery_id uuid)
returns public.delivery_trail
language plpgsql
stable
set search_path = ''
as $$
begin
  perform private.authorize(variadic private.delivery_managers());
  -- The deliveries policy hides another company's delivery: 404.
  if not exists (select from public.deliveries d where d.id = get_delivery_trail.delivery_id) then
    raise exception using errcode = 'PT404', message = 'delivery not found';
  end if;
  return row(
    get_delivery_trail.delivery_id,
    coalesce((
      select array_agg(row(t.lat, t.lng, t.recorded_at)::public.trail_point order by t.seq)
      from public.delivery_trail_points t
      where t.delivery_id = get_delivery_trail.delivery_id
    ), '{}'))::public.delivery_trail;
end;
$$;
comment on function public.get_delivery_trail(uuid) is 'The stored trail of one delivery of the caller''s company, oldest point first (owner, admin, legacy admin).';
grant execute on function public.get_delivery_trail(uuid) to authenticated;

-- As in 20261121004500_proof_of_delivery.sql

drop function public.get_proof_requirements();
create function public.get_proof_requirements()
returns public.proof_requirements_set
language plpgsql
stable
set search_path = ''
as $$
begin
  return private.proof_requirements_row(private.authorize(variadic private.members()));
end;
$$;
comment on function public.get_proof_requirements() is 'Which proof the caller''s company requires to complete a delivery (every member).';
grant execute on function public.get_proof_requirements() to authenticated;

drop function public.set_proof_requirements(boolean, boolean, boolean);
create function public.set_proof_requirements(photo boolean, signature boolean, note boolean)
returns public.proof_requirements_set
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
begin
  insert into public.proof_requirements as r (company_id, photo, signature, note)
  values (company, set_proof_requirements.photo, set_proof_requirements.signature, set_proof_requirements.note)
  on conflict on constraint proof_requirements_pkey do update set
    photo = excluded.photo, signature = excluded.signature, note = excluded.note, updated_at = now();
  return private.proof_requirements_row(company);
end;
$$;
comment on function public.set_proof_requirements(boolean, boolean, boolean) is 'Sets which proof the caller''s company requires to complete a delivery (owner, admin).';
grant execute on function public.set_proof_requirements(boolean, boolean, boolean) to authenticated;
