-- Redefines private.membership, private.company_of, private.delivery_tracking_link, private.delivery_tracking_fields, private.try_uuid, private.valid_pix_key, private.mask_pix_key, private.lock_withdrawal, private.withdrawal_move_allowed, private.withdrawal_for_event, private.delivery_for_payment, private.app_role, private.company_id, private.delivery_managers, private.company_managers, private.members, private.driver_id, private.delivery_moves, private.record_delivery_history, private.wallet_balances, private.encode_cursor, private.gateway_customer_id, private.remember_gateway_customer, public.withdrawals_to_reconcile, private.tracking_topic, private.distance_m, private.tracking_json, private.tracking_json_of, private.tracking_requests_per_minute, private.may_read_tracking_topic, private.proof_kind: every SQL function with `set search_path` becomes PL/pgSQL, with the same body, so that it keeps its plans.

-- Every function here has `set search_path` (for the advisors'
-- function_search_path_mutable), and Postgres 17 can neither inline an SQL
-- function that has it nor keep a plan for it: each call in a new statement
-- parses and plans its body again, and the functions it calls theirs. In
-- PL/pgSQL each statement is planned once per connection. So every such SQL
-- function becomes PL/pgSQL here, with the same body, volatility, security and
-- rights (the landed migrations 20261121000100 to 20261121004500); a scalar
-- result read from a key is `return (select ...)`, which the comments note.
--
-- The tracking-link check. Every delivery the API shows or broadcasts asks
-- delivery_tracking_fields whether the caller manages its company
-- (private.delivery_row, 20261123000100_typed_results.sql): through company_of
-- and membership, about 110 us a row, half of a list page's SQL. Measured on
-- 20,000 deliveries as a company owner (`select
-- sum(length(private.delivery_row(d)::text)) from public.deliveries d`): 2.2 s
-- before, 0.65 s after; the row without the check takes 0.1 s. A user has at
-- most one membership (memberships.user_id is its key), so company_of's scalar
-- subquery is the SQL function's single row.
--
-- The webhook's money path. Applying one TRANSFER_DONE called
-- withdrawal_for_event twice (the edge's read, then apply_transfer_event),
-- lock_withdrawal, withdrawal_move_allowed twice (the function, then the
-- update's guard), valid_pix_key (the check constraint) and mask_pix_key (the
-- broadcast), each planned again. As one statement on one connection (pgbench),
-- `select private.withdrawal_for_event(...)` took 0.16 ms before and 0.09 ms
-- after, against 0.06 ms for `select 1`.

create or replace function private.membership()
returns table (company_id uuid, role text)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return query
    select m.company_id, m.role
    from public.memberships m
    where m.user_id = auth.uid()
      and (auth.jwt() ->> 'role') in (m.role, 'authenticated')
      and coalesce((auth.jwt() ->> 'company_id')::uuid = m.company_id, true);
end;
$$;

create or replace function private.company_of(roles text[])
returns uuid
language plpgsql
stable
set search_path = ''
as $$
begin
  return (select m.company_id from private.membership() m where m.role = any (company_of.roles));
end;
$$;

create or replace function private.delivery_tracking_link(delivery_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return coalesce((select jsonb_build_object('tracking_token', t.token, 'tracking_url', '/track/' || t.token)
    from private.delivery_tracking t where t.delivery_id = delivery_tracking_link.delivery_id), '{}'::jsonb);
end;
$$;

create or replace function private.delivery_tracking_fields(delivery_id uuid, company_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if (auth.jwt() ->> 'role') = 'service_role'
     or delivery_tracking_fields.company_id = private.company_of(private.delivery_managers()) then
    return private.delivery_tracking_link(delivery_tracking_fields.delivery_id);
  end if;
  return '{}'::jsonb;
end;
$$;

create or replace function private.try_uuid(value text)
returns uuid
language plpgsql
immutable
set search_path = ''
as $$
begin
  return case when try_uuid.value ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    then try_uuid.value::uuid end;
end;
$$;

create or replace function private.valid_pix_key(pix_key text, pix_key_type text)
returns boolean
language plpgsql
immutable
set search_path = ''
as $$
begin
  return coalesce(case valid_pix_key.pix_key_type
    when 'cpf' then valid_pix_key.pix_key ~ '^[0-9]{11}$'
    when 'cnpj' then valid_pix_key.pix_key ~ '^[0-9]{14}$'
    when 'email' then length(valid_pix_key.pix_key) <= 77 and valid_pix_key.pix_key ~ '^[^@[:space:]]+@[^@[:space:]]+\.[^@[:space:]]+$'
    when 'phone' then valid_pix_key.pix_key ~ '^\+55[0-9]{10,11}$'
    when 'evp' then private.try_uuid(valid_pix_key.pix_key) is not null
  end, false);
end;
$$;

create or replace function private.mask_pix_key(pix_key text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  return repeat('*', greatest(length(mask_pix_key.pix_key) - 4, 0)) || right(mask_pix_key.pix_key, 4);
end;
$$;

-- Without a withdrawal it returns a row of nulls, as the SQL function did; its callers test `w.id is null`.
create or replace function private.lock_withdrawal(withdrawal_id uuid)
returns public.withdrawals
language plpgsql
set search_path = ''
as $$
declare
  w public.withdrawals;
begin
  select * into w from public.withdrawals x where x.id = lock_withdrawal.withdrawal_id for update;
  return w;
end;
$$;

create or replace function private.withdrawal_move_allowed(from_status text, to_status text)
returns boolean
language plpgsql
immutable
set search_path = ''
as $$
begin
  return (withdrawal_move_allowed.from_status, withdrawal_move_allowed.to_status)
    in (('processing', 'completed'), ('processing', 'failed'), ('failed', 'completed'));
end;
$$;

create or replace function private.withdrawal_for_event(company_id uuid, transfer_id text, external_reference text)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
begin
  return coalesce(
    (select w.id from public.withdrawals w
     where w.gateway_transfer_id = nullif(withdrawal_for_event.transfer_id, '')
       and (withdrawal_for_event.company_id is null or w.company_id = withdrawal_for_event.company_id)),
    (select w.id from public.withdrawals w
     where w.id = private.try_uuid(withdrawal_for_event.external_reference)
       and (withdrawal_for_event.company_id is null or w.company_id = withdrawal_for_event.company_id)
       and (w.gateway_transfer_id is null or nullif(withdrawal_for_event.transfer_id, '') is null
            or w.gateway_transfer_id = withdrawal_for_event.transfer_id))
  );
end;
$$;

create or replace function private.delivery_for_payment(payment_id text, external_reference text)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
begin
  return coalesce(
    (select d.id from public.deliveries d where d.gateway_payment_id = nullif(delivery_for_payment.payment_id, '')),
    (select d.id from public.deliveries d
     where d.id = private.try_uuid(delivery_for_payment.external_reference)
       and (nullif(delivery_for_payment.payment_id, '') is null or d.gateway_payment_id = delivery_for_payment.payment_id))
  );
end;
$$;

-- The rest, so that every function here with `set search_path` is PL/pgSQL: one
-- rule, which 030-every-function-by-every-role checks. Each runs per request
-- or per row somewhere (the caller's role and driver id, the delivery moves and
-- their history, the wallet's balances, the tracking page and its channel, the
-- proof paths, cursors, distances).

create or replace function private.app_role()
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

create or replace function private.company_id()
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

create or replace function private.delivery_managers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['company_owner', 'company_admin', 'admin']; end; $$;

create or replace function private.company_managers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['company_owner', 'company_admin']; end; $$;

create or replace function private.members()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return private.delivery_managers() || array['driver']; end; $$;

-- drivers.user_id is unique: at most one row.
create or replace function private.driver_id()
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

create or replace function private.delivery_moves()
returns table (trigger text, from_statuses text[], to_status text)
language plpgsql
immutable
set search_path = ''
as $$
begin
  return query values
    ('payment_received', array['awaiting_payment'], 'pending'),
    ('accept', array['pending'], 'accepted'),
    ('assign', array['pending'], 'accepted'),
    ('start', array['accepted'], 'in_progress'),
    ('complete', array['in_progress'], 'completed'),
    ('cancel', array['awaiting_payment', 'pending', 'accepted'], 'cancelled'),
    ('payment_refunded', array['awaiting_payment', 'pending', 'accepted', 'in_progress', 'completed'], 'cancelled'),
    ('payment_overdue', array['awaiting_payment'], 'cancelled');
end;
$$;

create or replace function private.record_delivery_history(
  old_row public.deliveries, new_row public.deliveries, trigger text, actor_id uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  insert into public.delivery_history
    (delivery_id, company_id, trigger, from_status, to_status, from_payment_status, to_payment_status, actor_id)
  values (new_row.id, new_row.company_id, record_delivery_history.trigger, old_row.status, new_row.status,
          old_row.payment_status, new_row.payment_status, record_delivery_history.actor_id);
end;
$$;

create or replace function private.wallet_balances(driver_id uuid, out balance numeric, out available_balance numeric)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  select b.balance, b.balance - w.held into wallet_balances.balance, wallet_balances.available_balance
  from (select coalesce(sum(e.amount), 0)::numeric(12, 2) as balance
        from public.wallet_entries e where e.driver_id = wallet_balances.driver_id) b,
       (select coalesce(sum(x.amount), 0)::numeric(12, 2) as held
        from public.withdrawals x where x.driver_id = wallet_balances.driver_id and x.status = 'processing') w;
end;
$$;

create or replace function private.encode_cursor(sort_key timestamptz, id uuid)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  return encode(convert_to(sort_key::text || '|' || id::text, 'UTF8'), 'hex');
end;
$$;

-- gateway_configs.company_id is its key: at most one row.
create or replace function private.gateway_customer_id(company_id uuid, document text)
returns text
language plpgsql
stable
set search_path = ''
as $$
begin
  return (select g.gateway_customer_ids ->> gateway_customer_id.document
          from private.gateway_configs g where g.company_id = gateway_customer_id.company_id);
end;
$$;

create or replace function private.remember_gateway_customer(company_id uuid, document text, customer_id text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  update private.gateway_configs g
  set gateway_customer_ids = g.gateway_customer_ids
    || jsonb_build_object(remember_gateway_customer.document, remember_gateway_customer.customer_id)
  where g.company_id = remember_gateway_customer.company_id;
end;
$$;

create or replace function public.withdrawals_to_reconcile(max_rows integer default 100)
returns table (id uuid, company_id uuid, gateway_transfer_id text, in_doubt boolean, created_at timestamptz)
language plpgsql
stable
set search_path = ''
as $$
begin
  return query
    select w.id, w.company_id, w.gateway_transfer_id, w.in_doubt, w.created_at
    from public.withdrawals w
    where w.status = 'processing'
      and (w.in_doubt
        or (w.gateway_transfer_id is null and w.created_at < now() - interval '2 minutes')
        or (w.gateway_transfer_id is not null and w.updated_at < now() - interval '1 hour'))
    order by w.created_at
    limit greatest(least(withdrawals_to_reconcile.max_rows, 1000), 1);
end;
$$;

create or replace function private.tracking_topic(token_hash bytea)
returns text
language plpgsql
immutable
set search_path = ''
as $$ begin return 'track:' || encode(tracking_topic.token_hash, 'hex'); end; $$;

create or replace function private.distance_m(lat1 double precision, lng1 double precision, lat2 double precision, lng2 double precision)
returns double precision
language plpgsql
immutable
set search_path = ''
as $$
begin
  return 2 * 6371000 * asin(least(1, sqrt(
    sin(radians(distance_m.lat2 - distance_m.lat1) / 2) ^ 2
    + cos(radians(distance_m.lat1)) * cos(radians(distance_m.lat2)) * sin(radians(distance_m.lng2 - distance_m.lng1) / 2) ^ 2)));
end;
$$;

create or replace function private.tracking_json(d public.deliveries, driver_name text, l public.driver_locations)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
  return jsonb_build_object(
    'status', d.status,
    'driver', case when d.status in ('accepted', 'in_progress', 'completed') and tracking_json.driver_name is not null
      then jsonb_build_object('first_name', split_part(btrim(tracking_json.driver_name), ' ', 1)) end,
    'position', case when d.status = 'in_progress' and l.updated_at >= d.started_at
      then jsonb_build_object('lat', l.lat, 'lng', l.lng, 'heading', l.heading, 'updated_at', l.updated_at) end,
    'eta_at', case when d.status = 'in_progress' then d.eta_at end,
    'remaining_m', case when d.status = 'in_progress' then d.remaining_m end,
    'eta_refreshed_at', case when d.status = 'in_progress' then d.eta_refreshed_at end,
    'created_at', d.created_at,
    'accepted_at', d.accepted_at,
    'started_at', d.started_at,
    'completed_at', d.completed_at,
    'cancelled_at', d.cancelled_at);
end;
$$;

-- deliveries.id, drivers.id and driver_locations.driver_id are keys: at most one row.
create or replace function private.tracking_json_of(delivery_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select private.tracking_json(d, dr.name, l)
          from public.deliveries d
          left join public.drivers dr on dr.id = d.driver_id
          left join public.driver_locations l on l.driver_id = d.driver_id
          where d.id = tracking_json_of.delivery_id);
end;
$$;

create or replace function private.tracking_requests_per_minute()
returns integer
language plpgsql
immutable
set search_path = ''
as $$ begin return 60; end; $$;

create or replace function private.may_read_tracking_topic(topic text)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return case when may_read_tracking_topic.topic ~ '^track:[0-9a-f]{64}$' then exists (
    select from private.delivery_tracking t
    join public.deliveries d on d.id = t.delivery_id
    where t.token_hash = decode(substr(may_read_tracking_topic.topic, 7), 'hex')
      and d.status in ('accepted', 'in_progress'))
  else false end;
end;
$$;

create or replace function private.proof_kind(name text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  return case when proof_kind.name ~ '^[0-9a-f-]{36}/[0-9a-f-]{36}/(photo|signature)(\.[a-z0-9]{1,5})?$'
    then split_part(split_part(proof_kind.name, '/', 3), '.', 1) end;
end;
$$;
