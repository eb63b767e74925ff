-- Integrations: API keys and webhook endpoints under RLS (a company never sees
-- another's, a driver neither; the key's hash and the endpoint's secret are
-- read by nobody); a key acts for its company with the key role, never reaches
-- money, and is refused at once when revoked; the rate limit's bucket; the
-- webhook outbox written in the transaction of the change (none for a change
-- rolled back, none for a company nobody listens to), the wake-up call, the
-- claim, Standard Webhooks' retry schedule, and an endpoint disabled after 5
-- days of failure with its owner to be told.
begin;
select plan(48);

create temp table t as select tests.create_tenant('int-a') as a, tests.create_tenant('int-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select, insert on ids to public;
create function pg_temp.id(name text) returns uuid
language sql as $$ select ids.id from ids where ids.name = id.name $$;
grant execute on function pg_temp.id(text) to public;

-- The stack's own secrets, if any, are replaced inside this rolled-back transaction (npm run db:test:cli).
select tests.use_project_secrets();

-- Section: API keys under RLS

select tests.act_as_member(a, 'owner') from t;
insert into ids select 'key_a', (public.create_api_key('shop', '{deliveries:write,deliveries:read}', repeat('a', 64),
  'dp_live_aaaa')).id;
select tests.act_as_member(b, 'admin') from t;
insert into ids select 'key_b', (public.create_api_key('erp', '{webhooks:manage}', repeat('b', 64), 'dp_live_bbbb')).id;
select tests.reset_role();

select tests.act_as_member(a, 'admin') from t;
select is((select array_agg(k.name) from unnest((public.list_api_keys()).items) k), '{shop}',
  'an admin lists the company''s keys');
select is((select count(*) from public.api_keys)::int, 1, 'and reads only its company''s rows');
select throws_ok($$ select key_hash from public.api_keys $$, '42501', null, 'but never a key''s hash');
select tests.act_as_member(b, 'owner') from t;
select is((select array_agg(k.name) from unnest((public.list_api_keys()).items) k), '{erp}',
  'another company lists only its own');
select throws_ok(format('select public.revoke_api_key(%L)', pg_temp.id('key_a')), 'PT404', null,
  'and cannot revoke another company''s key: 404');
select tests.act_as_member(a, 'driver') from t;
select throws_ok('select public.list_api_keys()', 'PT403', null, 'a driver may not list keys');
select is((select count(*) from public.api_keys)::int, 0, 'nor read them');
select throws_ok($$ select public.create_api_key('x', '{deliveries:read}', repeat('c', 64), 'dp_live_c') $$, 'PT403',
  null, 'nor create one');
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select public.create_api_key('x', '{wallets:read}', repeat('c', 64), 'dp_live_c') $$, 'PT400',
  null, 'an unknown scope is 400');

-- Section: a key acts for its company, within the key role

select tests.act_as_service_role();
select is((select u ->> 'company_id' from public.use_api_key(repeat('a', 64)) u), (select a ->> 'company_id' from t),
  'the edge finds a key''s company by its hash');
select is((public.use_api_key(repeat('a', 64)) ->> 'role'), 'integration', 'and the key role');
select is(public.use_api_key(repeat('f', 64)), null, 'an unknown hash is nobody');
select tests.act_as_api_key(pg_temp.id('key_a'));
select is((select m.company_id from private.membership() m), (select (a ->> 'company_id')::uuid from t),
  'a key''s claims are its company''s membership');
select lives_ok('select public.list_deliveries()', 'a key lists its company''s deliveries');
select throws_ok('select public.get_subscription()', 'PT403', null, 'no key reaches billing');
select throws_ok('select public.list_withdrawals()', 'PT403', null, 'nor withdrawals');
select throws_ok('select public.get_wallet()', 'PT403', null, 'nor wallets');
select throws_ok($$ select public.list_api_keys() $$, 'PT403', null, 'nor API keys');
select tests.reset_role();
select tests.act_as_member(a, 'owner') from t;
select public.revoke_api_key(pg_temp.id('key_a'));
select tests.act_as_api_key(pg_temp.id('key_a'));
select throws_ok('select public.list_deliveries()', 'PT403', null, 'a revoked key is nobody at once');
select tests.act_as_service_role();
select is(public.use_api_key(repeat('a', 64)), null, 'and the edge no longer finds it');

-- The bucket: 40 at once, then refused with a wait. Its clock is frozen (the stamp an hour ahead: no refill until
-- then), so that what is counted does not depend on how fast the machine answers (20 a second refill one every 50 ms).
select tests.reset_role();
insert into private.api_rate_buckets (company_id, tokens, refreshed_at)
select (b ->> 'company_id')::uuid, 40, clock_timestamp() + interval '1 hour' from t
on conflict (company_id) do update set tokens = excluded.tokens, refreshed_at = excluded.refreshed_at;
select tests.act_as_service_role();
create function pg_temp.burst(n integer) returns jsonb[]
language sql as $$ select array_agg(public.use_api_key(repeat('b', 64))) from generate_series(1, n) $$;
grant execute on function pg_temp.burst(integer) to public;
select is((select count(*) from unnest(pg_temp.burst(40)) u where (u ->> 'allowed')::boolean)::int, 40,
  'a company''s keys may make 40 requests at once');
select is((public.use_api_key(repeat('b', 64)) ->> 'allowed')::boolean, false, 'the 41st is refused');
select ok((public.use_api_key(repeat('b', 64)) ->> 'retry_after')::int >= 1, 'with a wait of at least a second');
select tests.reset_role();

-- Section: webhook endpoints under RLS

select tests.act_as_member(a, 'owner') from t;
insert into ids select 'ep_a', (public.create_webhook_endpoint('https://hooks.example.com/a',
  '{delivery.status_changed,delivery.created,delivery.completed}', 'v1.iv.sealed')).id;
select tests.act_as_api_key(pg_temp.id('key_b'));
insert into ids select 'ep_b', (public.create_webhook_endpoint('https://hooks.example.com/b', '{delivery.created}',
  'v1.iv.sealed')).id;
select is((select array_agg(e.url) from unnest((public.list_webhook_endpoints()).items) e),
  '{https://hooks.example.com/b}', 'a key with webhooks:manage lists its company''s endpoints');
select throws_ok(format('select public.get_webhook_endpoint(%L)', pg_temp.id('ep_a')), 'PT404', null,
  'never another company''s: 404');
select tests.act_as_member(a, 'admin') from t;
select is((select array_agg(e.events) from public.webhook_endpoints e),
  '{{delivery.created,delivery.status_changed,delivery.completed}}', 'events kept in their canonical order');
select throws_ok('select secret_ciphertext from private.webhook_endpoint_secrets', '42501', null,
  'the secrets are out of every user''s reach');
select tests.act_as_member(a, 'driver') from t;
select is((select count(*) from public.webhook_endpoints)::int, 0, 'a driver reads no endpoint');
select throws_ok('select public.list_webhook_endpoints()', 'PT403', null, 'nor lists them');
select tests.reset_role();

-- Section: the outbox, in the transaction of the change

create function pg_temp.events(delivery_id uuid) returns text[]
language sql as $$
  select coalesce(array_agg(m.type order by m.created_at, m.type), '{}') from private.webhook_messages m
  where (m.body::jsonb -> 'data' ->> 'id')::uuid = events.delivery_id
$$;
insert into ids values ('d1', tests.create_delivery((select a from t)));
select is(pg_temp.events(pg_temp.id('d1')), '{delivery.created}', 'a new delivery queues delivery.created');
select is((select count(*) from private.webhook_deliveries w where w.endpoint_id = pg_temp.id('ep_a')
  and w.status = 'pending')::int, 1, 'for the endpoint that listens');
select ok(tests.function_calls('webhooks-out/send') >= 1, 'and the sender is woken through pg_net');
select is((select m.body::jsonb -> 'data' ? 'recipient_phone' from private.webhook_messages m
  where (m.body::jsonb -> 'data' ->> 'id')::uuid = pg_temp.id('d1')), false,
  'the body carries no personal data of the recipient');
insert into ids values ('d_b', tests.create_delivery((select b from t)));
select is(pg_temp.events(pg_temp.id('d_b')), '{delivery.created}', 'company b''s own endpoint gets its own');
select is((select count(*) from private.webhook_deliveries w join private.webhook_messages m on m.id = w.message_id
  where (m.body::jsonb -> 'data' ->> 'id')::uuid = pg_temp.id('d_b') and w.endpoint_id = pg_temp.id('ep_a'))::int, 0,
  'and never another company''s endpoint');

create function pg_temp.start_then_fail(delivery_id uuid) returns void
language plpgsql as $$
begin
  perform public.start_delivery(delivery_id);
  raise exception 'the caller''s transaction fails afterwards';
end;
$$;
grant execute on function pg_temp.start_then_fail(uuid) to public;
insert into ids select 'd2', (tests.delivery_in(a, 'accepted', 'invoice')).id from t;
select tests.act_as_member(a, 'driver') from t;
select throws_ok(format('select pg_temp.start_then_fail(%L)', pg_temp.id('d2')), 'P0001', null,
  'a start whose transaction fails');
select tests.reset_role();
select is(pg_temp.events(pg_temp.id('d2')), '{delivery.created}', 'queues nothing beyond its creation');
select tests.act_as_member(a, 'driver') from t;
select public.start_delivery(pg_temp.id('d2'));
select tests.reset_role();
select is(pg_temp.events(pg_temp.id('d2')), '{delivery.created,delivery.status_changed}',
  'a start that commits queues its move');
select is((select m.body::jsonb -> 'data' ->> 'previous_status' from private.webhook_messages m
  where (m.body::jsonb -> 'data' ->> 'id')::uuid = pg_temp.id('d2') and m.type = 'delivery.status_changed'), 'accepted',
  'with the previous status');

-- Section: the sender's claim, the schedule, disabling

update private.webhook_deliveries set status = 'delivered' where endpoint_id <> pg_temp.id('ep_a');
update private.webhook_deliveries set status = 'delivered'
where endpoint_id = pg_temp.id('ep_a') and message_id not in
  (select m.id from private.webhook_messages m where (m.body::jsonb -> 'data' ->> 'id')::uuid = pg_temp.id('d1'));
select tests.act_as_service_role();
create temp table claimed as select public.claim_webhook_deliveries(10) as batch;
select is((select jsonb_array_length(batch) from claimed), 1, 'the sender claims the due send');
select is((select batch -> 0 ->> 'url' from claimed), 'https://hooks.example.com/a', 'with its URL and body');
select is(public.claim_webhook_deliveries(10), '[]'::jsonb, 'a second claimer skips it while it is leased');

-- Attempt n fails: the next is due after the schedule's n-th wait; the 8th failure is final.
create function pg_temp.fail_attempts() returns interval[]
language plpgsql as $$
declare
  waits interval[] := '{}';
  w record;
  message uuid := (select batch -> 0 ->> 'event_id' from claimed)::uuid;
begin
  for n in 1..8 loop
    perform public.record_webhook_attempt(message, pg_temp.id('ep_a'), n, false, 500, 12, 'oops');
    select * into w from private.webhook_deliveries x where x.message_id = message and x.endpoint_id = pg_temp.id('ep_a');
    if w.status = 'pending' then
      waits := waits || (w.next_attempt_at - now());
      update private.webhook_deliveries x set next_attempt_at = now()
      where x.message_id = message and x.endpoint_id = pg_temp.id('ep_a');
      perform public.claim_webhook_deliveries(10);
    end if;
  end loop;
  return waits;
end;
$$;
grant execute on function pg_temp.fail_attempts() to public;
select tests.reset_role();
select is(pg_temp.fail_attempts(), '{00:00:05,00:05:00,00:30:00,02:00:00,05:00:00,10:00:00,10:00:00}'::interval[],
  'failures are retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h');
select is((select status from private.webhook_deliveries w
  where w.message_id = (select batch -> 0 ->> 'event_id' from claimed)::uuid), 'failed', 'then the event has failed');
select is((select count(*) from private.webhook_attempts a where a.endpoint_id = pg_temp.id('ep_a'))::int, 8,
  'every attempt is recorded');

-- Failing for 5 days disables the endpoint; its owner is to be told.
select tests.reset_role();
update public.webhook_endpoints set failing_since = now() - interval '5 days 1 minute' where id = pg_temp.id('ep_a');
update private.webhook_deliveries set status = 'pending', attempts = 0, next_attempt_at = now()
where endpoint_id = pg_temp.id('ep_a');
select tests.act_as_service_role();
select is((select public.record_webhook_attempt(c.message_id, c.endpoint_id, 1, false, null, 10000, null, 'timeout')
  ->> 'endpoint_disabled' from (select (x ->> 'event_id')::uuid as message_id, (x ->> 'endpoint_id')::uuid as endpoint_id
  from jsonb_array_elements(public.claim_webhook_deliveries(10)) x limit 1) c), 'true',
  'a failure after 5 days of failures disables the endpoint');
select is((select n -> 'emails' from jsonb_array_elements(public.webhook_owners_to_tell()) n
  where (n ->> 'endpoint_id')::uuid = pg_temp.id('ep_a')), '["int-a-owner@tests.example"]'::jsonb,
  'and names its company''s owner to be told by e-mail');
select is((select count(*) from jsonb_array_elements(public.webhook_owners_to_tell()) n
  where (n ->> 'endpoint_id')::uuid = pg_temp.id('ep_a'))::int, 0,
  'once: a sender running at the same time is not given it too');

select * from finish();
rollback;
