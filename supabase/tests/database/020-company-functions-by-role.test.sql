-- The company RPCs: each allowed role succeeds, every other role is refused
-- (403), a foreign company's ids are 404, and anon can call nothing.
begin;
select plan(39);

create temp table t as select tests.create_tenant('a') as a, tests.create_tenant('b') as b;
grant select on t to public;
create temp table u as select tests.create_user('new-driver@tests.example') as new_driver,
  tests.create_user('x1@tests.example') as x1, tests.create_user('r@tests.example') as r;
grant select on u to public;

-- list_drivers: owner, admin, legacy admin; not a driver
select tests.act_as_member(a, 'owner') from t;
select is(jsonb_array_length(to_jsonb(public.list_drivers()) -> 'items'), 2, 'list_drivers: owner');
select tests.act_as_member(a, 'admin') from t;
select is(jsonb_array_length(to_jsonb(public.list_drivers()) -> 'items'), 2, 'list_drivers: admin');
select tests.act_as_member(a, 'legacy_admin') from t;
select is(jsonb_array_length(to_jsonb(public.list_drivers()) -> 'items'), 2, 'list_drivers: legacy admin');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.list_drivers()) $$, 'PT403', null, 'list_drivers: a driver is refused');
select tests.reset_role();

-- pagination
select tests.act_as_member(a, 'owner') from t;
select is(jsonb_array_length(to_jsonb(public.list_drivers(1)) -> 'items'), 1, 'list_drivers: a page of 1');
select isnt(to_jsonb(public.list_drivers(1)) ->> 'next_cursor', null, 'list_drivers: a next cursor when more remain');
select is(
  to_jsonb(public.list_drivers(1, to_jsonb(public.list_drivers(1)) ->> 'next_cursor')) -> 'items' -> 0 ->> 'id',
  to_jsonb(public.list_drivers(2)) -> 'items' -> 1 ->> 'id',
  'list_drivers: the cursor continues after the first page'
);
select is(to_jsonb(public.list_drivers(2)) ->> 'next_cursor', null, 'list_drivers: no cursor on the last page');
select throws_ok($$ select to_jsonb(public.list_drivers(1, 'not-a-cursor')) $$, 'PT400', 'invalid cursor', 'list_drivers: a bad cursor is 400');
select throws_ok($$ select to_jsonb(public.list_drivers(101)) $$, 'PT400', null, 'list_drivers: a limit over 100 is 400');
select tests.reset_role();

-- get_driver: foreign ids are 404
select tests.act_as_member(a, 'admin') from t;
select is(to_jsonb(public.get_driver((select (a ->> 'driver_id')::uuid from t))) ->> 'id', (select a ->> 'driver_id' from t), 'get_driver: admin reads its driver');
select throws_ok(format('select to_jsonb(public.get_driver(%L))', (select b ->> 'driver_id' from t)), 'PT404', 'driver not found', 'get_driver: a foreign driver is 404');
select tests.reset_role();

-- update_driver: owner and admin; legacy admin and driver refused; foreign 404
select tests.act_as_member(a, 'owner') from t;
select is(to_jsonb(public.update_driver((select (a ->> 'driver2_id')::uuid from t), name => 'Renamed')) ->> 'name', 'Renamed', 'update_driver: owner renames');
select throws_ok(format('select to_jsonb(public.update_driver(%L, name => %L))', (select b ->> 'driver_id' from t), 'x'), 'PT404', null, 'update_driver: a foreign driver is 404');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok(format('select to_jsonb(public.update_driver(%L, name => %L))', (select a ->> 'driver_id' from t), 'x'), 'PT403', null, 'update_driver: legacy admin refused');
select tests.act_as_member(a, 'driver') from t;
select throws_ok(format('select to_jsonb(public.update_driver(%L, active => true))', (select a ->> 'driver_id' from t)), 'PT403', null, 'update_driver: a driver refused');
select tests.reset_role();

-- create_driver: the service role only, for a caller the edge authorized (a user could claim any user id)
select tests.act_as_service_role();
select is(to_jsonb(public.create_driver((select (a ->> 'company_id')::uuid from t), (select new_driver from u), 'New', 'NEW-driver@tests.example')) ->> 'email',
  'new-driver@tests.example', 'create_driver: the service role creates a driver (e-mail lower-cased)');
select tests.act_as_member(a, 'admin') from t;
select throws_ok(format('select to_jsonb(public.create_driver(%L, %L, %L, %L))', (select a ->> 'company_id' from t), (select x1 from u), 'x', 'x1@tests.example'), '42501', null, 'create_driver: not callable by a user, not even an admin');
select tests.reset_role();

-- prices: all read; owner, admin, legacy admin write; driver refused; bad values 23514
select tests.act_as_member(a, 'driver') from t;
select is((to_jsonb(public.get_prices()) ->> 'base_fee')::numeric, 5.00, 'get_prices: a driver reads');
select throws_ok($$ select to_jsonb(public.set_prices(1, 1, 1, 0.5)) $$, 'PT403', null, 'set_prices: a driver refused');
select tests.act_as_member(a, 'legacy_admin') from t;
select is((to_jsonb(public.set_prices(2.5, 1.25, 7, 0.75)) ->> 'per_km')::numeric, 1.25, 'set_prices: legacy admin writes');
select throws_ok($$ select to_jsonb(public.set_prices(-1, 1, 1, 0.5)) $$, '23514', null, 'set_prices: a negative fee is refused');
select throws_ok($$ select to_jsonb(public.set_prices(1, 1, 1, 1.5)) $$, '23514', null, 'set_prices: a share above 1 is refused');
select tests.act_as_member(b, 'owner') from t;
select is((to_jsonb(public.get_prices()) ->> 'per_km')::numeric, 1.50, 'get_prices: another company keeps its own prices');
select tests.reset_role();

-- subscription: owner only
select tests.act_as_member(a, 'owner') from t;
select is(to_jsonb(public.get_subscription()) ->> 'plan', 'free', 'get_subscription: owner, free at first');
select is(to_jsonb(public.set_subscription('pro')) ->> 'plan', 'pro', 'set_subscription: owner upgrades');
select isnt(to_jsonb(public.get_subscription()) ->> 'current_period_end', null, 'set_subscription: a paid plan has a period end');
select tests.act_as_member(a, 'admin') from t;
select throws_ok($$ select to_jsonb(public.get_subscription()) $$, 'PT403', null, 'get_subscription: admin refused');
select throws_ok($$ select to_jsonb(public.set_subscription('free')) $$, 'PT403', null, 'set_subscription: admin refused');
select tests.reset_role();

-- gateway configuration: owner only; the profile never shows a secret
select tests.act_as_member(a, 'owner') from t;
select throws_ok(format('select to_jsonb(public.save_gateway_config(%L, %L, %L, %L))', (select a ->> 'company_id' from t), 'c1', 'c2', 'sandbox'), '42501', null, 'save_gateway_config: not callable by a user, not even the owner');
select is(to_jsonb(public.get_my_company()) -> 'gateway' ->> 'configured', 'false', 'get_my_company: not configured yet');
select tests.act_as_service_role();
select is(to_jsonb(public.save_gateway_config((select (a ->> 'company_id')::uuid from t), 'v1.iv.key', 'v1.iv.secret', 'sandbox')) ->> 'environment', 'sandbox', 'save_gateway_config: the service role stores what the edge encrypted');
select tests.act_as_member(a, 'owner') from t;
select is(to_jsonb(public.get_my_company()) -> 'gateway', '{"configured": true, "environment": "sandbox"}'::jsonb, 'get_my_company: configured, no secret');
select tests.act_as_member(b, 'driver') from t;
select is(to_jsonb(public.get_my_company()) ->> 'id', (select b ->> 'company_id' from t), 'get_my_company: a driver sees its own company');
select tests.reset_role();

-- webhook log: owner and admin
select tests.act_as_member(a, 'owner') from t;
select is(to_jsonb(public.list_webhook_events()) -> 'items', '[]'::jsonb, 'list_webhook_events: owner');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok($$ select to_jsonb(public.list_webhook_events()) $$, 'PT403', null, 'list_webhook_events: legacy admin refused');
select tests.reset_role();

-- registration is the service role's
select tests.act_as_member(a, 'owner') from t;
select throws_ok(format('select public.register_company(%L, %L, %L)', (select r from u), 'x', 'y'), '42501', null, 'register_company: not for users');
select tests.reset_role();

-- anon can call nothing
select tests.act_as_anon();
select throws_ok($$ select to_jsonb(public.get_prices()) $$, '42501', null, 'anon: get_prices refused');
select tests.reset_role();

-- a deactivated driver is refused everywhere
update public.drivers set active = false where id = (select (a ->> 'driver_id')::uuid from t);
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.get_prices()) $$, 'PT403', 'this driver is deactivated', 'a deactivated driver is refused');
select tests.reset_role();

select * from finish();
rollback;
