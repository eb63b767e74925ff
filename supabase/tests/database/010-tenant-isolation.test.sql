-- Tenancy: the hook's claims, RLS on every table for every role of the own
-- and of a foreign company, and the older token form.
begin;
select plan(36);

create temp table t as select tests.create_tenant('a') as a, tests.create_tenant('b') as b;
grant select on t to public;

-- Every table in public is behind RLS.
select is_empty(
  $$ select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relrowsecurity $$,
  'every table in public has row-level security on'
);

-- The hook.
select is(tests.token_claims((select (a ->> 'owner')::uuid from t)) ->> 'role', 'company_owner', 'hook: owner gets role company_owner');
select is(tests.token_claims((select (a ->> 'owner')::uuid from t)) ->> 'company_id', (select a ->> 'company_id' from t), 'hook: owner gets its company_id');
select is(tests.token_claims((select (a ->> 'admin')::uuid from t)) ->> 'role', 'company_admin', 'hook: admin gets role company_admin');
select is(tests.token_claims((select (a ->> 'driver')::uuid from t)) ->> 'role', 'driver', 'hook: driver gets role driver');
select is(tests.token_claims((select (a ->> 'driver')::uuid from t)) ->> 'driver_id', (select a ->> 'driver_id' from t), 'hook: a driver gets its driver_id');
select is(tests.token_claims((select (a ->> 'owner')::uuid from t)) ->> 'driver_id', null, 'hook: nobody else gets a driver_id');
select is(tests.token_claims((select (a ->> 'legacy_admin')::uuid from t)) ->> 'role', 'authenticated', 'hook: a legacy admin keeps the older form');
select is(tests.token_claims((select (a ->> 'legacy_admin')::uuid from t)) -> 'user_metadata' ->> 'role', 'admin', 'hook: the older form carries user_metadata.role');
select is(tests.token_claims(tests.create_user('nobody@tests.example')) ->> 'role', 'authenticated', 'hook: a user without membership keeps role authenticated');

select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select public.custom_access_token_hook('{}'::jsonb) $$, '42501', null, 'hook: not executable by users');
select tests.reset_role();

-- companies
select tests.act_as_member(a, 'owner') from t;
select results_eq($$ select id from public.companies $$, $$ select (a ->> 'company_id')::uuid from t $$, 'companies: owner sees exactly its company');
select throws_ok($$ insert into public.companies (name) values ('x') $$, '42501', null, 'companies: no direct insert');
select throws_ok($$ update public.companies set name = 'x' $$, '42501', null, 'companies: no direct update');
select tests.reset_role();

select tests.act_as_member(b, 'driver') from t;
select results_eq($$ select id from public.companies $$, $$ select (b ->> 'company_id')::uuid from t $$, 'companies: a foreign driver sees only its own company');
select tests.reset_role();

-- memberships
select tests.act_as_member(a, 'owner') from t;
select is((select count(*) from public.memberships)::int, 5, 'memberships: owner sees the 5 of its company');
select tests.act_as_member(a, 'admin') from t;
select is((select count(*) from public.memberships)::int, 5, 'memberships: admin sees the 5 of its company');
select tests.act_as_member(a, 'driver') from t;
select results_eq($$ select user_id from public.memberships $$, $$ select (a ->> 'driver')::uuid from t $$, 'memberships: a driver sees only its own');
select throws_ok($$ update public.memberships set role = 'company_owner' $$, '42501', null, 'memberships: a driver cannot promote itself');
select tests.act_as_member(a, 'legacy_admin') from t;
select results_eq($$ select user_id from public.memberships $$, $$ select (a ->> 'legacy_admin')::uuid from t $$, 'memberships: a legacy admin sees only its own');
select tests.reset_role();

-- drivers
select tests.act_as_member(a, 'owner') from t;
select is((select count(*) from public.drivers)::int, 2, 'drivers: owner sees its 2 drivers');
select tests.act_as_member(a, 'legacy_admin') from t;
select is((select count(*) from public.drivers)::int, 2, 'drivers: legacy admin sees all drivers of its company');
select tests.act_as_member(a, 'driver') from t;
select results_eq($$ select id from public.drivers $$, $$ select (a ->> 'driver_id')::uuid from t $$, 'drivers: a driver sees only itself');
select tests.act_as_member(b, 'owner') from t;
select is_empty($$ select 1 from public.drivers d join t on d.company_id = (t.a ->> 'company_id')::uuid $$, 'drivers: a foreign owner sees none of them');
select tests.reset_role();

-- prices, subscriptions, webhook events
select tests.act_as_member(a, 'driver') from t;
select is((select count(*) from public.prices)::int, 1, 'prices: a driver reads its company prices');
select is_empty($$ select 1 from public.subscriptions $$, 'subscriptions: a driver sees none');
select throws_ok($$ update public.prices set base_fee = 0 $$, '42501', null, 'prices: no direct update');
select tests.act_as_member(a, 'admin') from t;
select is_empty($$ select 1 from public.subscriptions $$, 'subscriptions: an admin sees none');
select tests.act_as_member(a, 'owner') from t;
select is((select plan from public.subscriptions), 'free', 'subscriptions: the owner sees its plan, free at first');
select throws_ok($$ select * from private.gateway_configs $$, '42501', null, 'gateway configs: not readable by users');
select tests.reset_role();

insert into public.webhook_events (company_id, event, result) select (a ->> 'company_id')::uuid, 'TRANSFER_DONE', 'processed' from t;
select tests.act_as_member(a, 'admin') from t;
select is((select count(*) from public.webhook_events)::int, 1, 'webhook events: an admin sees its company log');
select tests.act_as_member(a, 'driver') from t;
select is_empty($$ select 1 from public.webhook_events $$, 'webhook events: a driver sees none');
select tests.act_as_member(b, 'owner') from t;
select is_empty($$ select 1 from public.webhook_events $$, 'webhook events: a foreign owner sees none');
select tests.reset_role();

-- The older token form cannot widen: user_metadata.role = admin on a driver gets driver rights.
select tests.act_as((select jsonb_build_object('sub', a ->> 'driver', 'role', 'authenticated', 'user_metadata', jsonb_build_object('role', 'admin')) from t));
select is(private.app_role(), 'driver', 'older form: user_metadata.role = admin on a driver membership is a driver');
select results_eq($$ select id from public.drivers $$, $$ select (a ->> 'driver_id')::uuid from t $$, 'older form: it still sees only itself');
select tests.reset_role();

-- A new-form claim that disagrees with the membership grants nothing.
select tests.act_as((select jsonb_build_object('sub', a ->> 'driver', 'role', 'company_owner', 'company_id', a ->> 'company_id') from t));
select is(private.app_role(), null, 'a forged role claim yields no role');
select tests.reset_role();

select * from finish();
rollback;
