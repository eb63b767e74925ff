-- Web Push (19_push.sql): a driver's subscriptions under RLS (the driver reads
-- and removes its own; another driver of the company, another company's
-- driver and the managers neither read nor remove them; nobody writes the
-- table but the functions); an endpoint registered again moves to whoever
-- registered it last; an offer and a published route queue one message per
-- subscription of their driver in the transaction, and wake the push
-- function; the claim; a 404/410 removes the subscription; a 503 is retried.
begin;
select plan(35);

create temp table t as select tests.create_tenant('push-a') as a, tests.create_tenant('push-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select, insert on ids to public;
create function pg_temp.id(name text) returns uuid
language sql as $$ select ids.id from ids where ids.name = id.name $$;
grant execute on function pg_temp.id(text) to public;
-- A browser's keys as PushSubscription.toJSON() gives them: 65 and 16 bytes, base64url.
create function pg_temp.p256dh() returns text
language sql as $$ select 'B' || repeat('A', 86) $$;
grant execute on function pg_temp.p256dh() to public;

select tests.use_project_secrets();

-- Section: registering, under RLS

select tests.act_as_member(a, 'driver') from t;
insert into ids select 'phone', (public.register_push_subscription('https://push.example/s/phone', pg_temp.p256dh(),
  'AAAAAAAAAAAAAAAAAAAAAA', 'Mozilla/5.0 (Linux; Android 14)')).id;
insert into ids select 'tablet', (public.register_push_subscription('https://push.example/s/tablet', pg_temp.p256dh(),
  'BBBBBBBBBBBBBBBBBBBBBB==')).id;
select is((select array_agg(s.endpoint order by s.endpoint) from unnest((public.list_push_subscriptions()).items) s),
  '{https://push.example/s/phone,https://push.example/s/tablet}', 'a driver registers two browsers and lists them');
select is((select count(*)::int from public.push_subscriptions), 2, 'and reads its own rows');
select throws_ok($$ insert into public.push_subscriptions (company_id, driver_id, endpoint, p256dh, auth)
  select company_id, driver_id, 'https://push.example/x', p256dh, auth from public.push_subscriptions limit 1 $$,
  '42501', null, 'but writes the table only through the functions');
select throws_ok($$ update public.push_subscriptions set endpoint = 'https://evil.example/' $$, '42501', null,
  'nor changes a row');
select throws_ok($$ select public.register_push_subscription('ftp://push.example/s', 'B' || repeat('A', 86),
  'AAAAAAAAAAAAAAAAAAAAAA') $$, 'PT400', null, 'an endpoint that is not http(s) is 400');
select throws_ok($$ select public.register_push_subscription('https://push.example/s', 'short',
  'AAAAAAAAAAAAAAAAAAAAAA') $$, 'PT400', null, 'a p256dh that is no P-256 key is 400');
select throws_ok($$ select public.register_push_subscription('https://push.example/s', 'B' || repeat('A', 86), 'x') $$,
  'PT400', null, 'an auth secret that is not 16 bytes is 400');

select tests.act_as_member(a, 'driver2') from t;
select is((select count(*)::int from public.push_subscriptions), 0, 'another driver of the company reads none');
select is(cardinality((public.list_push_subscriptions()).items), 0, 'and lists none');
select throws_ok(format('select public.delete_push_subscription(%L)', pg_temp.id('phone')), 'PT404', null,
  'and cannot remove one: 404');

select tests.act_as_member(b, 'driver') from t;
select is((select count(*)::int from public.push_subscriptions), 0, 'another company''s driver reads none');
select throws_ok(format('select public.delete_push_subscription(%L)', pg_temp.id('phone')), 'PT404', null,
  'nor removes one: 404');

select tests.act_as_member(a, 'owner') from t;
select is((select count(*)::int from public.push_subscriptions), 0, 'the owner reads none of its drivers''');
select throws_ok('select public.list_push_subscriptions()', 'PT403', null, 'an owner has no subscriptions to list');
select throws_ok($$ select public.register_push_subscription('https://push.example/s/o', 'B' || repeat('A', 86),
  'AAAAAAAAAAAAAAAAAAAAAA') $$, 'PT403', null, 'nor registers one');
select throws_ok(format('select public.delete_push_subscription(%L)', pg_temp.id('phone')), 'PT403', null,
  'nor removes a driver''s');
select tests.act_as_member(a, 'admin') from t;
select is((select count(*)::int from public.push_subscriptions), 0, 'an admin reads none');
select throws_ok('select public.list_push_subscriptions()', 'PT403', null, 'nor lists them');
select tests.act_as_member(a, 'legacy_admin') from t;
select is((select count(*)::int from public.push_subscriptions), 0, 'a legacy admin reads none');
select tests.act_as_anon();
select throws_ok('select count(*) from public.push_subscriptions', '42501', null, 'anon reads nothing');
select tests.reset_role();

-- The tablet is used by driver2 from now on: it alerts driver2, not the driver.
select tests.act_as_member(a, 'driver2') from t;
insert into ids select 'tablet2', (public.register_push_subscription('https://push.example/s/tablet', pg_temp.p256dh(),
  'CCCCCCCCCCCCCCCCCCCCCC')).id;
select is((select array_agg(endpoint) from public.push_subscriptions), '{https://push.example/s/tablet}',
  'an endpoint registered again belongs to whoever registered it last');
select tests.act_as_member(a, 'driver') from t;
select is((select array_agg(endpoint) from public.push_subscriptions), '{https://push.example/s/phone}',
  'and no longer to the driver before');
select tests.reset_role();

-- A deactivated driver registers nothing.
update public.drivers set active = false where id = (select (a ->> 'driver2_id')::uuid from t);
select tests.act_as_member(a, 'driver2') from t;
select throws_ok($$ select public.register_push_subscription('https://push.example/s/d', 'B' || repeat('A', 86),
  'AAAAAAAAAAAAAAAAAAAAAA') $$, 'PT403', null, 'a deactivated driver registers nothing');
select tests.reset_role();
update public.drivers set active = true where id = (select (a ->> 'driver2_id')::uuid from t);

-- Section: the outbox

-- Against a running stack (`supabase test db`) the outbox may hold other companies' messages: gone in this
-- transaction, which is rolled back, so what is counted and claimed below is this file's own.
truncate net.http_request_queue;
delete from private.push_messages;
insert into ids select 'offered', tests.create_delivery(a) from t;
insert into public.dispatch_offers (delivery_id, company_id, driver_id, attempt, round, expires_at)
select pg_temp.id('offered'), (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 0, 1, now() + interval '45 seconds'
from t;
select is((select array_agg(m.type || ' ' || s.endpoint) from private.push_messages m
    join public.push_subscriptions s on s.id = m.subscription_id),
  '{"delivery_offered https://push.example/s/phone"}', 'an offer queues one push per subscription of its driver');
select is((select payload ->> 'delivery_id' from private.push_messages), pg_temp.id('offered')::text,
  'naming the delivery');
select ok((select expires_at = (select o.expires_at from public.dispatch_offers o
    where o.delivery_id = pg_temp.id('offered')) from private.push_messages), 'worth sending until the offer''s deadline');
select is(tests.function_calls('push/send'), 1::bigint, 'and wakes the push function after the commit');

insert into ids select 'routed', tests.create_delivery(a) from t;
insert into ids select 'route', tests.draft_route(a, array[pg_temp.id('routed')], 'driver2') from t;
select is((select count(*)::int from private.push_messages where type = 'route_published'), 0,
  'a draft route pushes nothing');
select tests.act_as_member(a, 'owner') from t;
select public.publish_route(pg_temp.id('route'));
select tests.reset_role();
select is((select array_agg(s.endpoint) from private.push_messages m
    join public.push_subscriptions s on s.id = m.subscription_id where m.type = 'route_published'),
  '{https://push.example/s/tablet}', 'a published route queues route_published for its driver''s subscriptions');

-- Section: the sender

select tests.act_as_member(a, 'driver') from t;
select throws_ok('select public.claim_push_messages()', '42501', null, 'a driver cannot claim pushes');
select tests.act_as_service_role();
create temp table claimed as select public.claim_push_messages() as c;
select is((select jsonb_array_length(c) from claimed), 2, 'the push function claims both');
select ok((select bool_and((x ->> 'ttl')::int between case x ->> 'type' when 'delivery_offered' then 40 else 3500 end
    and case x ->> 'type' when 'delivery_offered' then 45 else 3600 end and x ->> 'auth' is not null)
  from claimed, jsonb_array_elements(c) x), 'with the keys, and the TTL left: the offer''s 45 s, the route''s hour');
select is(public.record_push_outcome((select (x ->> 'id')::uuid from claimed, jsonb_array_elements(c) x
    where x ->> 'type' = 'route_published'), 1, 503), 'retried', 'a 503 is retried');
select is(public.record_push_outcome((select (x ->> 'id')::uuid from claimed, jsonb_array_elements(c) x
    where x ->> 'type' = 'delivery_offered'), 1, 410), 'gone', 'a 410 says the subscription is gone');
select tests.reset_role();
select is((select array_agg(endpoint) from public.push_subscriptions where driver_id = (select (a ->> 'driver_id')::uuid from t)),
  null, 'and it is removed, with its messages');

select * from finish();
rollback;
