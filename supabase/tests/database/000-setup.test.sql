-- Helpers for every pgTAP file, kept (not rolled back) in the `tests` schema:
-- act as a user with exactly the claims our access-token hook puts in a token,
-- as the service role, as anon or as a named member of a tenant; a company
-- with a user of every role; a delivery in a given state; a driver credited
-- with an amount; a gateway configuration; a withdrawal requested or in a
-- given state; a driver's balances and a withdrawal's debits; a delivery
-- created as the edge creates it, a driver's position, a round of dispatch,
-- proof of delivery objects written, whether the current role may run a statement, a draft route, a move tried by
-- the member who makes it, and a gateway event applied.
select plan(1);

create schema if not exists tests;
grant usage on schema tests to anon, authenticated, service_role;

-- Claims as the local identity provider issues them, before the hook adds anything.
create or replace function tests.act_as(claims jsonb) returns void
language plpgsql
as $$
begin
  perform set_config('request.jwt.claims', claims::text, true);
  perform set_config('request.jwt.claim.sub', coalesce(claims ->> 'sub', ''), true);
  perform set_config('request.jwt.claim.role', coalesce(claims ->> 'role', ''), true);
  execute format('set local role %I', coalesce(claims ->> 'role', 'anon'));
end;
$$;

create or replace function tests.act_as_service_role() returns void
language sql
as $$ select tests.act_as('{"role": "service_role"}'::jsonb) $$;

create or replace function tests.act_as_anon() returns void
language sql
as $$ select tests.act_as('{"role": "anon"}'::jsonb) $$;

-- Back to the superuser that runs the test file.
create or replace function tests.reset_role() returns void
language plpgsql
as $$
begin
  reset role;
  perform set_config('request.jwt.claims', '', true);
  perform set_config('request.jwt.claim.sub', '', true);
  perform set_config('request.jwt.claim.role', '', true);
end;
$$;

-- A confirmed e-mail user, as the identity provider would store it.
create or replace function tests.create_user(email text, user_metadata jsonb default '{}')
returns uuid
language sql
as $$
  insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data,
                          email_confirmed_at, created_at, updated_at)
  values ('00000000-0000-0000-0000-000000000000', gen_random_uuid(), 'authenticated', 'authenticated',
          create_user.email, '{"provider": "email", "providers": ["email"]}', create_user.user_metadata, now(), now(), now())
  returning id
$$;

-- The claims of an access token for this user: the identity provider's
-- standard claims, passed through our custom access token hook.
create or replace function tests.token_claims(user_id uuid)
returns jsonb
language sql
as $$
  select public.custom_access_token_hook(jsonb_build_object(
    'user_id', u.id,
    'authentication_method', 'password',
    'claims', jsonb_build_object(
      'iss', 'http://127.0.0.1:54321/auth/v1', 'sub', u.id::text, 'aud', 'authenticated',
      'exp', extract(epoch from now() + interval '1 hour')::bigint, 'iat', extract(epoch from now())::bigint,
      'email', u.email, 'phone', '', 'role', 'authenticated', 'aal', 'aal1',
      'app_metadata', u.raw_app_meta_data, 'user_metadata', u.raw_user_meta_data,
      'session_id', gen_random_uuid(), 'is_anonymous', false)
  )) -> 'claims'
  from auth.users u
  where u.id = token_claims.user_id
$$;

-- Act as this user with exactly the token the hook would give it.
create or replace function tests.act_as_user(user_id uuid)
returns void
language sql
as $$ select tests.act_as(tests.token_claims(act_as_user.user_id)) $$;

-- A driver of a company: its user (confirmed, member with role driver) and
-- its drivers row. Returns {user, driver_id}.
create or replace function tests.add_driver(company_id uuid, name text, email text, active boolean default true)
returns jsonb
language plpgsql
as $$
declare
  user_id uuid := tests.create_user(add_driver.email);
  driver_id uuid;
begin
  insert into public.memberships (user_id, company_id, role) values (user_id, add_driver.company_id, 'driver');
  insert into public.drivers (company_id, user_id, name, email, active)
  values (add_driver.company_id, user_id, add_driver.name, add_driver.email, add_driver.active)
  returning id into driver_id;
  return jsonb_build_object('user', user_id, 'driver_id', driver_id);
end;
$$;

-- A company with one user of every role: returns their ids.
-- {company_id, owner, admin, legacy_admin, driver, driver2, driver_id, driver2_id}
create or replace function tests.create_tenant(label text)
returns jsonb
language plpgsql
as $$
declare
  owner uuid := tests.create_user(label || '-owner@tests.example');
  admin uuid := tests.create_user(label || '-admin@tests.example');
  legacy uuid := tests.create_user(label || '-legacy@tests.example', '{"role": "admin"}');
  company uuid;
  driver jsonb;
  driver2 jsonb;
begin
  company := (public.register_company(owner, label || ' company', label || ' owner') ->> 'company_id')::uuid;
  insert into public.memberships (user_id, company_id, role) values (admin, company, 'company_admin'), (legacy, company, 'admin');
  driver := tests.add_driver(company, label || ' driver', label || '-driver@tests.example');
  driver2 := tests.add_driver(company, label || ' driver2', label || '-driver2@tests.example');
  return jsonb_build_object('company_id', company, 'owner', owner, 'admin', admin, 'legacy_admin', legacy,
    'driver', driver -> 'user', 'driver2', driver2 -> 'user', 'driver_id', driver -> 'driver_id', 'driver2_id', driver2 -> 'driver_id');
end;
$$;

-- Acts as one member of a tenant from tests.create_tenant (owner, admin,
-- legacy_admin, driver or driver2), from the superuser or from any member.
create or replace function tests.act_as_member(tenant jsonb, member text) returns void
language plpgsql
as $$
begin
  if tenant ->> member is null then
    raise exception 'tests.act_as_member: the tenant has no member %', member;
  end if;
  perform tests.reset_role();
  perform tests.act_as_user((tenant ->> member)::uuid);
end;
$$;

-- A delivery of the tenant's company in `status`, inserted as the state
-- machine would have left it: a driver (the member `driver` or `driver2`) and
-- accepted_at where the state needs one (driver 1 unless named), the
-- timestamps of the state (a failed one failed as recipient_absent), and for Pix a payment id and the payment status
-- that goes with the state (invoice ones are `invoiced`).
create or replace function tests.delivery_in(
  tenant jsonb,
  status text,
  method text default 'pix',
  driver text default null,
  payment_status text default null,
  price numeric default 12.50,
  driver_share numeric default 0.80,
  gateway_payment_id text default null,
  origin_address text default 'Origin',
  created_at timestamptz default now()
) returns public.deliveries
language sql
as $$
  insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat, origin_lng,
    destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share, driver_id,
    gateway_payment_id, accepted_at, started_at, completed_at, cancelled_at, created_at, failed_at, failure_reason)
  select (delivery_in.tenant ->> 'company_id')::uuid, delivery_in.status,
    coalesce(delivery_in.payment_status, case when delivery_in.method = 'invoice' then 'invoiced'
      when delivery_in.status = 'awaiting_payment' then 'pending' else 'received' end),
    delivery_in.method, delivery_in.origin_address, -23.55, -46.63, 'Destination', -23.56, -46.64, 1500, 300,
    delivery_in.price, delivery_in.driver_share, linked.id,
    case when delivery_in.method = 'pix' then coalesce(delivery_in.gateway_payment_id, 'pay_' || gen_random_uuid()) end,
    case when linked.id is not null then now() end,
    case when delivery_in.status in ('in_progress', 'completed', 'failed') then now() end,
    case when delivery_in.status = 'completed' then now() end,
    case when delivery_in.status = 'cancelled' then now() end,
    delivery_in.created_at,
    case when delivery_in.status = 'failed' then now() end,
    case when delivery_in.status = 'failed' then 'recipient_absent' end
  from (select (delivery_in.tenant ->> (coalesce(delivery_in.driver,
          case when delivery_in.status in ('accepted', 'in_progress', 'completed', 'failed') then 'driver' end) || '_id'))::uuid as id) linked
  returning *
$$;

-- A driver of the tenant credited with `amount`: one completed delivery of
-- that driver (invoice unless `method` says pix) and its ledger entry, a
-- delivery_credit unless `kind` says otherwise. Returns the delivery's id.
create or replace function tests.credit_driver(
  tenant jsonb,
  amount numeric,
  driver text default 'driver',
  kind text default 'delivery_credit',
  method text default 'invoice',
  gateway_payment_id text default null
) returns uuid
language sql
as $$
  with delivery as (
    select d.* from tests.delivery_in(credit_driver.tenant, 'completed', credit_driver.method, credit_driver.driver,
      price => abs(credit_driver.amount), driver_share => 1, gateway_payment_id => credit_driver.gateway_payment_id) d
  )
  insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
  select d.company_id, d.driver_id, credit_driver.kind, credit_driver.amount, d.id from delivery d
  returning delivery_id
$$;

-- The tenant's company has configured the payment gateway (ciphertexts only).
create or replace function tests.configure_gateway(tenant jsonb) returns void
language sql
as $$
  insert into private.gateway_configs (company_id, api_key_ciphertext, webhook_secret_ciphertext, environment)
  values ((configure_gateway.tenant ->> 'company_id')::uuid, 'v1.key', 'v1.secret', 'sandbox')
$$;

-- A withdrawal requested through public.request_withdrawal as the tenant's
-- `driver`: its id. Back to the superuser afterwards.
create or replace function tests.request_withdrawal(
  tenant jsonb,
  amount numeric,
  driver text default 'driver',
  pix_key text default '12345678909',
  pix_key_type text default 'cpf'
) returns uuid
language plpgsql
as $$
declare
  withdrawal_id uuid;
begin
  perform tests.act_as_member(tenant, driver);
  withdrawal_id := (to_jsonb(public.request_withdrawal(amount, pix_key, pix_key_type)) ->> 'id')::uuid;
  perform tests.reset_role();
  return withdrawal_id;
end;
$$;

-- A withdrawal of the tenant's `driver` in `status`, inserted directly as an
-- earlier request would have left it (no balance check, no wallet lock). A
-- failed one is a gateway refusal unless `failure_kind` says otherwise; a
-- processing one may be `in_doubt`. Last updated when it was created unless
-- `updated_at` says otherwise.
drop function if exists tests.withdrawal_in(jsonb, text, numeric, text, text, text, text, timestamptz);
create or replace function tests.withdrawal_in(
  tenant jsonb,
  status text,
  amount numeric default 1.00,
  driver text default 'driver',
  gateway_transfer_id text default null,
  failure_kind text default null,
  error_message text default null,
  created_at timestamptz default now(),
  in_doubt boolean default false,
  updated_at timestamptz default null
) returns public.withdrawals
language sql
as $$
  insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type, status, gateway_transfer_id,
    failure_kind, error_message, completed_at, created_at, in_doubt, updated_at)
  values ((withdrawal_in.tenant ->> 'company_id')::uuid, (withdrawal_in.tenant ->> (withdrawal_in.driver || '_id'))::uuid,
    withdrawal_in.amount, '12345678909', 'cpf', withdrawal_in.status, withdrawal_in.gateway_transfer_id,
    coalesce(withdrawal_in.failure_kind, case when withdrawal_in.status = 'failed' then 'gateway_rejected' end),
    coalesce(withdrawal_in.error_message, case when withdrawal_in.status = 'failed' then 'Payment gateway refused the request' end),
    case when withdrawal_in.status = 'completed' then now() end, withdrawal_in.created_at, withdrawal_in.in_doubt,
    coalesce(withdrawal_in.updated_at, withdrawal_in.created_at))
  returning *
$$;

-- A driver's {balance, available_balance}, from private.wallet_balances.
create or replace function tests.balances(tenant jsonb, driver text default 'driver') returns numeric[]
language sql
as $$
  select array[b.balance, b.available_balance]
  from private.wallet_balances((balances.tenant ->> (balances.driver || '_id'))::uuid) b
$$;

-- How many debits the ledger holds for a withdrawal.
create or replace function tests.debits(withdrawal_id uuid) returns integer
language sql
as $$
  select count(*)::integer from public.wallet_entries e
  where e.kind = 'withdrawal_debit' and e.withdrawal_id = debits.withdrawal_id
$$;

-- The SQLSTATE a statement raises as the current role, or 'ok'; always rolled back.
create or replace function tests.outcome(call text) returns text
language plpgsql
as $$
begin
  begin
    execute call;
    raise exception using errcode = 'TSTOK';
  exception
    when sqlstate 'TSTOK' then return 'ok';
    when others then return sqlstate;
  end;
end;
$$;

-- Whether the current role may run a statement: false when it is refused (42501, a policy or a privilege), any
-- other error raised; always rolled back.
create or replace function tests.may(call text) returns boolean
language plpgsql
as $$
declare
  outcome text := tests.outcome(may.call);
begin
  if outcome not in ('ok', '42501') then
    raise exception 'tests.may: % raised %', may.call, outcome;
  end if;
  return outcome = 'ok';
end;
$$;

-- Dispatch (14_dispatch.sql). A new invoice delivery of the tenant's company, created as the edge creates it
-- (the service role), picked up at (-23.55, -46.63) as tests.delivery_in's are: its id. Back to the superuser.
-- Optionally within a window, assigned to a driver at once, and with an amount to collect at the door (17_cash.sql).
create or replace function tests.create_delivery(tenant jsonb, window_start timestamptz default null,
  window_end timestamptz default null, driver_id uuid default null, collect_amount numeric default null,
  collect_method text default null, collect_change_for numeric default null)
returns uuid
language plpgsql
as $$
declare
  id uuid;
begin
  perform tests.act_as_service_role();
  id := (to_jsonb(public.create_delivery(gen_random_uuid(), (tenant ->> 'company_id')::uuid, (tenant ->> 'owner')::uuid,
    'invoice', 'Origin', -23.55, -46.63, 'Destination', -23.56, -46.64, 1500, 300,
    window_start => create_delivery.window_start, window_end => create_delivery.window_end,
    driver_id => create_delivery.driver_id, collect_amount => create_delivery.collect_amount,
    collect_method => create_delivery.collect_method, collect_change_for => create_delivery.collect_change_for))
    ->> 'id')::uuid;
  perform tests.reset_role();
  return id;
end;
$$;

-- A driver's position `km` north of that pickup, sent `minutes_ago`.
create or replace function tests.place_driver(driver_id uuid, km numeric, minutes_ago integer default 0)
returns void
language sql
as $$
  insert into public.driver_locations (driver_id, company_id, lat, lng, updated_at)
  select d.id, d.company_id, -23.55 + place_driver.km / 111.195, -46.63, now() - make_interval(mins => place_driver.minutes_ago)
  from public.drivers d where d.id = place_driver.driver_id
  on conflict (driver_id) do update set lat = excluded.lat, lng = excluded.lng, updated_at = excluded.updated_at
$$;

-- The dispatch function's claim, as the service role: the job of this delivery (null when it was not due).
create or replace function tests.claim_dispatch(delivery_id uuid)
returns jsonb
language plpgsql
as $$
declare
  jobs jsonb;
begin
  perform tests.act_as_service_role();
  jobs := public.claim_dispatches(100);
  perform tests.reset_role();
  return (select j from jsonb_array_elements(jobs) j where j ->> 'delivery_id' = claim_dispatch.delivery_id::text);
end;
$$;

-- The end of a claimed round, as the function ends it with the routing service's answer (road seconds per
-- eligible candidate, in the claim's order), or with the routing service's failure.
create or replace function tests.complete_dispatch(job jsonb, durations jsonb, routing_error text default null)
returns jsonb
language plpgsql
as $$
declare
  result jsonb;
begin
  perform tests.act_as_service_role();
  result := public.complete_dispatch((job ->> 'delivery_id')::uuid, (job ->> 'claim')::uuid, durations, routing_error);
  perform tests.reset_role();
  return result;
end;
$$;

-- Proof of delivery (09_proof.sql): an object of the bucket `delivery-proofs` written as Storage writes its row,
-- as the current role (so the bucket's policies decide), declared as `media_type`, or without it as the type the
-- name's extension stands for (as the web app declares an upload).
create or replace function tests.put_proof(name text, media_type text) returns void
language sql as $$
  insert into storage.objects (bucket_id, name, metadata)
  values ('delivery-proofs', put_proof.name, jsonb_build_object('mimetype', put_proof.media_type))
$$;
create or replace function tests.put_proof(name text) returns void
language sql as $$ select tests.put_proof(put_proof.name, private.proof_media_type(put_proof.name)) $$;

-- The same with Storage's upsert (x-upsert: true), as it writes the row.
create or replace function tests.upsert_proof(name text, version text) returns void
language sql as $$
  insert into storage.objects (bucket_id, name, version, metadata)
  values ('delivery-proofs', upsert_proof.name, upsert_proof.version,
    jsonb_build_object('mimetype', private.proof_media_type(upsert_proof.name)))
  on conflict (bucket_id, name) do update set version = excluded.version, metadata = excluded.metadata
$$;

-- Routes (16_routes.sql). A draft route of the tenant's `driver` (or `driver2`) made by its owner through
-- public.create_routes, picking up and dropping off each delivery in turn: its id. Back to the superuser.
create or replace function tests.draft_route(tenant jsonb, deliveries uuid[], driver text default 'driver')
returns uuid
language plpgsql
as $$
declare
  made jsonb;
begin
  perform tests.act_as_member(tenant, 'owner');
  made := to_jsonb(public.create_routes('builtin', jsonb_build_array(jsonb_build_object(
    'driver_id', tenant ->> (draft_route.driver || '_id'), 'start', jsonb_build_object('lat', -23.55, 'lng', -46.63),
    'starts_at', now(), 'ends_at', now() + interval '2 hours', 'shift_end', now() + interval '8 hours', 'capacity', 20,
    'distance_m', 1000, 'duration_s', 600,
    'stops', (select jsonb_agg(s.stop order by u.n, s.k) from unnest(draft_route.deliveries) with ordinality u (id, n),
      lateral (values (1, jsonb_build_object('delivery_id', u.id, 'kind', 'pickup')),
                      (2, jsonb_build_object('delivery_id', u.id, 'kind', 'dropoff'))) s (k, stop))))));
  perform tests.reset_role();
  return (made -> 0 ->> 'id')::uuid;
end;
$$;

-- Integrations (18_integrations.sql): act as an API key with exactly the claims the edge gives it
-- (functions/_shared/api-keys.ts): the key's id as `sub`, the key role, its company and scopes.
create or replace function tests.act_as_api_key(key_id uuid) returns void
language plpgsql
as $$
declare
  k record;
begin
  perform tests.reset_role();
  select x.id, x.company_id, x.scopes into k from public.api_keys x where x.id = act_as_api_key.key_id;
  perform tests.act_as(jsonb_build_object('sub', k.id, 'role', 'integration', 'company_id', k.company_id,
    'aud', 'authenticated', 'scopes', to_jsonb(k.scopes), 'api_key', true));
end;
$$;

-- A move tried on a delivery by the member who makes it (the driver for accept, start, complete, fail and return;
-- the owner otherwise): the status it leads to, or the error as `SQLSTATE: message`. The role is reset either way.
create or replace function tests.try_move(tenant jsonb, delivery uuid, trigger text, then_do text default 'redispatch')
returns text
language plpgsql
as $$
declare
  moved jsonb;
begin
  perform tests.act_as_member(tenant,
    case when try_move.trigger in ('accept', 'start', 'complete', 'fail', 'return') then 'driver' else 'owner' end);
  moved := case try_move.trigger
    when 'accept' then to_jsonb(public.accept_delivery(delivery))
    when 'assign' then to_jsonb(public.assign_delivery(delivery, (tenant ->> 'driver2_id')::uuid))
    when 'start' then to_jsonb(public.start_delivery(delivery))
    when 'complete' then to_jsonb(public.complete_delivery(delivery))
    when 'cancel' then to_jsonb(public.cancel_delivery(delivery, 'no longer needed'))
    when 'fail' then to_jsonb(public.fail_delivery(delivery, 'recipient_absent'))
    when 'reopen' then to_jsonb(public.reopen_delivery(delivery))
    when 'recall' then to_jsonb(public.recall_delivery(delivery, 'the client called', try_move.then_do))
    when 'return' then to_jsonb(public.return_delivery(delivery))
  end;
  perform tests.reset_role();
  return moved ->> 'status';
exception
  when others then
    perform tests.reset_role();
    return sqlstate || ': ' || sqlerrm;
end;
$$;

-- A gateway event applied to a delivery's charge as the gateway webhook applies it (as the service role).
create or replace function tests.apply_payment(delivery uuid, event text) returns jsonb
language plpgsql
as $$
declare
  d public.deliveries := (select x from public.deliveries x where x.id = apply_payment.delivery);
  result jsonb;
begin
  perform tests.act_as_service_role();
  result := public.apply_payment_event(d.company_id, apply_payment.event, d.gateway_payment_id, d.id::text);
  perform tests.reset_role();
  return result;
end;
$$;

-- Jobs (10_jobs.sql): the Vault secrets private.call_function reads, the file's own in place of any the database
-- already holds (a running stack stores its own; the file's rollback brings them back), and how many calls to an Edge
-- Function path (e.g. 'push/send') pg_net then holds.
create or replace function tests.use_project_secrets() returns void
language plpgsql
as $$
begin
  delete from vault.secrets where name in ('project_url', 'service_role_key');
  perform vault.create_secret('http://project.test', 'project_url');
  perform vault.create_secret('service-key', 'service_role_key');
end;
$$;

create or replace function tests.function_calls(path text) returns bigint
language sql
as $$ select count(*) from net.http_request_queue q where q.url = 'http://project.test/functions/v1/' || path $$;

grant execute on all functions in schema tests to anon, authenticated, service_role;

select has_function('tests', 'act_as', array['jsonb'], 'the act_as helper exists');
select * from finish();

