-- Every RPC callable by users, as every role of the own company: the roles
-- each function allows (the role sets of docs/architecture.md) get past
-- authorization (whatever the call then says about the arguments), every
-- other role gets 403. Then a foreign company's users naming this company's
-- objects get 404. Each call runs in a subtransaction that is rolled back, so
-- the calls do not disturb each other.
begin;
select plan(350);

create temp table t as select tests.create_tenant('a') as a, tests.create_tenant('b') as b;
grant select on t to public;

-- Objects of company a to name in the calls: a pending delivery, a withdrawal.
create temp table o as
select (tests.delivery_in(a, 'pending', 'invoice')).id as delivery, (tests.withdrawal_in(a, 'failed')).id as withdrawal from t;
grant select on o to public;

create temp table matrix (call text, allowed text[]);
insert into matrix
select m.call, m.allowed
from t, o, lateral (values
  ('select to_jsonb(public.list_drivers())', array['owner', 'admin', 'legacy_admin']),
  (format('select to_jsonb(public.get_driver(%L))', t.a ->> 'driver_id'), array['owner', 'admin', 'legacy_admin']),
  (format('select to_jsonb(public.update_driver(%L, name => %L))', t.a ->> 'driver2_id', 'Y'), array['owner', 'admin']),
  ('select to_jsonb(public.get_prices())', array['owner', 'admin', 'legacy_admin', 'driver']),
  ('select to_jsonb(public.set_prices(1, 1, 1, 0.5))', array['owner', 'admin', 'legacy_admin']),
  ('select to_jsonb(public.get_subscription())', array['owner']),
  ('select to_jsonb(public.set_subscription(''pro''))', array['owner']),
  ('select to_jsonb(public.get_my_company())', array['owner', 'admin', 'legacy_admin', 'driver']),
  ('select to_jsonb(public.list_webhook_events())', array['owner', 'admin']),
  ('select to_jsonb(public.quote_route(1000, 100))', array['owner', 'admin', 'legacy_admin']),
  ('select public.authorize_new_delivery(null)', array['owner', 'admin', 'legacy_admin']),
  ('select to_jsonb(public.list_deliveries())', array['owner', 'admin', 'legacy_admin', 'driver']),
  (format('select to_jsonb(public.get_delivery(%L))', o.delivery), array['owner', 'admin', 'legacy_admin', 'driver']),
  (format('select to_jsonb(public.cancel_delivery(%L))', o.delivery), array['owner', 'admin', 'legacy_admin']),
  (format('select to_jsonb(public.assign_delivery(%L, %L))', o.delivery, t.a ->> 'driver_id'), array['owner', 'admin']),
  (format('select to_jsonb(public.accept_delivery(%L))', o.delivery), array['driver']),
  (format('select to_jsonb(public.start_delivery(%L))', o.delivery), array['driver']),
  (format('select to_jsonb(public.complete_delivery(%L))', o.delivery), array['driver']),
  ('select to_jsonb(public.get_wallet())', array['driver']),
  ('select to_jsonb(public.list_wallet_transactions())', array['driver']),
  ('select to_jsonb(public.request_withdrawal(1, ''12345678909'', ''cpf''))', array['driver']),
  ('select to_jsonb(public.list_withdrawals())', array['owner', 'admin', 'driver']),
  (format('select to_jsonb(public.get_withdrawal(%L))', o.withdrawal), array['owner', 'admin', 'driver']),
  ('select to_jsonb(public.update_my_location(1, 1))', array['driver']),
  ('select to_jsonb(public.update_my_location_with_eta(1, 1))', array['driver']),
  ('select to_jsonb(public.list_driver_locations())', array['owner', 'admin', 'legacy_admin']),
  (format('select to_jsonb(public.get_delivery_trail(%L))', o.delivery), array['owner', 'admin', 'legacy_admin']),
  ('select to_jsonb(public.get_proof_requirements())', array['owner', 'admin', 'legacy_admin', 'driver']),
  ('select to_jsonb(public.set_proof_requirements(false, false, false))', array['owner', 'admin']),
  ('select to_jsonb(public.get_notification_settings())', array['owner', 'admin']),
  ('select to_jsonb(public.set_notification_settings(''{started}'', ''{email}''))', array['owner', 'admin']),
  (format('select to_jsonb(public.list_delivery_notifications(%L))', o.delivery), array['owner', 'admin', 'legacy_admin']),
  (format('select to_jsonb(public.erase_delivery_recipient(%L))', o.delivery), array['owner', 'admin', 'legacy_admin']),
  (format('select to_jsonb(public.fail_delivery(%L, %L))', o.delivery, 'refused'), array['driver']),
  (format('select to_jsonb(public.reopen_delivery(%L))', o.delivery), array['owner', 'admin', 'legacy_admin']),
  ('select to_jsonb(public.export_deliveries())', array['owner', 'admin', 'legacy_admin']),
  ('select to_jsonb(public.fetch_deliveries(''none'', 1))', array['owner', 'admin', 'legacy_admin']),
  ('select to_jsonb(public.existing_external_ids(array[''x'']))', array['owner', 'admin', 'legacy_admin']),
  ('select to_jsonb(public.report_summary(current_date, current_date))', array['owner', 'admin']),
  ('select to_jsonb(public.get_dispatch_settings())', array['owner', 'admin']),
  ('select to_jsonb(public.set_dispatch_settings(''offer''))', array['owner', 'admin']),
  (format('select to_jsonb(public.get_delivery_dispatch(%L))', o.delivery), array['owner', 'admin', 'legacy_admin']),
  (format('select to_jsonb(public.decline_delivery(%L))', o.delivery), array['driver']),
  (format('select to_jsonb(public.get_route(%L))', gen_random_uuid()), array['owner', 'admin', 'driver']),
  ('select to_jsonb(public.list_routes())', array['owner', 'admin', 'driver']),
  (format('select to_jsonb(public.route_plan_input(array[%L]::uuid[]))', t.a ->> 'driver_id'), array['owner', 'admin']),
  ('select to_jsonb(public.create_routes(''builtin'', ''[]''))', array['owner', 'admin']),
  (format('select to_jsonb(public.route_stops_input(%L, ''[]''))', gen_random_uuid()), array['owner', 'admin']),
  (format('select to_jsonb(public.set_route_stops(%L, ''[]'', 0, 0, null, null))', gen_random_uuid()), array['owner', 'admin']),
  (format('select to_jsonb(public.publish_route(%L))', gen_random_uuid()), array['owner', 'admin']),
  (format('select to_jsonb(public.cancel_route(%L))', gen_random_uuid()), array['owner', 'admin']),
  ('select to_jsonb(public.start_route_plan(''{}''))', array['owner', 'admin']),
  (format('select to_jsonb(public.get_route_plan(%L))', gen_random_uuid()), array['owner', 'admin']),
  (format('select to_jsonb(public.get_import(%L))', gen_random_uuid()), array['owner', 'admin', 'legacy_admin']),
  (format('select to_jsonb(public.set_driver_vehicle(%L, ''van''))', t.a ->> 'driver2_id'), array['owner', 'admin']),
  (format('select public.try_handover_code(%L, %L)', o.delivery, '1234'), array['driver']),
  (format('select to_jsonb(public.complete_delivery_override(%L, %L))', o.delivery, 'no code'), array['owner', 'admin']),
  (format('select to_jsonb(public.get_driver_cash(%L))', t.a ->> 'driver_id'), array['owner', 'admin', 'driver']),
  (format('select to_jsonb(public.record_cash_settlement(%L, 1))', t.a ->> 'driver_id'), array['owner', 'admin']),
  ('select to_jsonb(public.cash_summary(current_date))', array['owner', 'admin']),
  (format('select to_jsonb(public.driver_day(%L, current_date))', t.a ->> 'driver_id'), array['owner', 'admin', 'driver']),
  ('select to_jsonb(public.report_drivers(current_date, current_date))', array['owner', 'admin']),
  ('select to_jsonb(public.create_api_key(''k'', ''{deliveries:read}'', repeat(''a'', 64), ''dp_live_a''))',
    array['owner', 'admin']),
  ('select to_jsonb(public.list_api_keys())', array['owner', 'admin']),
  (format('select public.revoke_api_key(%L)', gen_random_uuid()), array['owner', 'admin']),
  ('select to_jsonb(public.create_webhook_endpoint(''https://example.com/h'', ''{delivery.created}'', ''v1.x.y''))',
    array['owner', 'admin']),
  ('select to_jsonb(public.list_webhook_endpoints())', array['owner', 'admin']),
  (format('select to_jsonb(public.get_webhook_endpoint(%L))', gen_random_uuid()), array['owner', 'admin']),
  (format('select to_jsonb(public.update_webhook_endpoint(%L, enabled => false))', gen_random_uuid()),
    array['owner', 'admin']),
  (format('select public.delete_webhook_endpoint(%L)', gen_random_uuid()), array['owner', 'admin']),
  (format('select to_jsonb(public.list_webhook_attempts(%L))', gen_random_uuid()), array['owner', 'admin']),
  (format('select to_jsonb(public.resend_webhook_event(%L))', gen_random_uuid()), array['owner', 'admin']),
  (format('select to_jsonb(public.send_test_webhook(%L))', gen_random_uuid()), array['owner', 'admin']),
  (format('select to_jsonb(public.recall_delivery(%L, %L))', o.delivery, 'client called'), array['owner', 'admin']),
  (format('select to_jsonb(public.return_delivery(%L))', o.delivery), array['driver']),
  (format('select to_jsonb(public.refundable_delivery(%L))', o.delivery), array['owner', 'admin']),
  (format('select to_jsonb(public.editable_delivery(%L))', o.delivery), array['owner', 'admin']),
  ('select to_jsonb(public.register_push_subscription(''https://push.example/a'', ''B'' || repeat(''A'', 86), ''AAAAAAAAAAAAAAAAAAAAAA''))',
    array['driver']),
  ('select to_jsonb(public.list_push_subscriptions())', array['driver']),
  (format('select public.delete_push_subscription(%L)', gen_random_uuid()), array['driver'])
) as m (call, allowed);
grant select on matrix to public;

select is(
  (select count(*)::int from pg_proc p join pg_namespace n on n.oid = p.pronamespace
   where n.nspname = 'public' and has_function_privilege('authenticated', p.oid, 'execute')),
  (select count(*)::int from matrix),
  'the matrix names every public function users may execute'
);
-- What an app calls returns a typed row (a composite type, a table's row, a
-- scalar), which `supabase gen types` describes; never untyped jsonb.
select is(
  array(select p.proname::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'public' and has_function_privilege('authenticated', p.oid, 'execute')
          and p.prorettype in ('jsonb'::regtype, 'json'::regtype, 'record'::regtype)
        order by 1),
  '{}'::text[],
  'every public function users may execute returns a typed result'
);
-- Every function of ours with `set search_path` is PL/pgSQL: an SQL function
-- with it is planned again on every call in Postgres 17, and the helpers run
-- for every row a list shows, every policy check and every webhook applied
-- (supabase/schemas/00_tenancy.sql says why, at its top).
select is(
  array(select p.oid::regprocedure::text from pg_proc p
        join pg_namespace n on n.oid = p.pronamespace join pg_language l on l.oid = p.prolang
        where n.nspname in ('public', 'private') and l.lanname = 'sql' and p.proconfig is not null
        order by 1),
  '{}'::text[],
  'no function of ours is SQL with set search_path (each keeps its plans)'
);
-- The role sets are named once, as functions (supabase/schemas/00_tenancy.sql):
-- every function and policy authorizes with one of them, never a list of roles
-- written out again.
select is(
  array(select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname in ('public', 'private')
          and p.prosrc ~ 'private\.(authorize|company_of)\((?!(variadic )?private\.[a-z_]+\(\)\))'
        order by 1),
  '{}'::text[],
  'every function authorizes with a role set by its name, never a list of roles'
);
select is(
  array(select format('%s on %s.%s', policyname, schemaname, tablename) from pg_policies
        where concat(qual, ' ', with_check) ~ 'company_of\((?!private\.[a-z_]+\(\)\))'
        order by 1),
  '{}'::text[],
  'every policy names its role set by its function, never a list of roles'
);

-- 80 calls x 4 roles = 320 assertions, then 25 foreign ones
create function pg_temp.role_matrix() returns setof text
language plpgsql
as $$
declare
  entry record;
  role_name text;
  result text;
begin
  for entry in select * from matrix order by call loop
    foreach role_name in array array['owner', 'admin', 'legacy_admin', 'driver'] loop
      perform tests.act_as_member(a, role_name) from t;
      result := tests.outcome(entry.call);
      perform tests.reset_role();
      if role_name = any (entry.allowed) then
        return next isnt(result, 'PT403', format('%s as %s: allowed', entry.call, role_name));
      else
        return next is(result, 'PT403', format('%s as %s: 403', entry.call, role_name));
      end if;
    end loop;
  end loop;
end;
$$;
select * from pg_temp.role_matrix();

-- A foreign company's users naming company a's objects: 404, and nothing changes.
create function pg_temp.foreign_calls() returns setof text
language plpgsql
as $$
declare
  entry record;
  result text;
begin
  for entry in
    select * from (values
      ('owner', format('select to_jsonb(public.get_driver(%L))', (select a ->> 'driver_id' from t))),
      ('owner', format('select to_jsonb(public.update_driver(%L, name => %L))', (select a ->> 'driver_id' from t), 'Z')),
      ('owner', format('select to_jsonb(public.get_delivery(%L))', (select delivery from o))),
      ('legacy_admin', format('select to_jsonb(public.cancel_delivery(%L))', (select delivery from o))),
      ('admin', format('select to_jsonb(public.assign_delivery(%L, %L))', (select delivery from o), (select b ->> 'driver_id' from t))),
      ('driver', format('select to_jsonb(public.accept_delivery(%L))', (select delivery from o))),
      ('admin', format('select to_jsonb(public.get_withdrawal(%L))', (select withdrawal from o))),
      ('owner', format('select to_jsonb(public.get_delivery_trail(%L))', (select delivery from o))),
      ('admin', format('select to_jsonb(public.list_delivery_notifications(%L))', (select delivery from o))),
      ('legacy_admin', format('select to_jsonb(public.erase_delivery_recipient(%L))', (select delivery from o))),
      ('owner', format('select to_jsonb(public.reopen_delivery(%L))', (select delivery from o))),
      ('legacy_admin', format('select to_jsonb(public.reopen_delivery(%L))', (select delivery from o))),
      ('driver', format('select to_jsonb(public.fail_delivery(%L, %L))', (select delivery from o), 'other')),
      ('driver2', format('select to_jsonb(public.fail_delivery(%L, %L))', (select delivery from o), 'damaged')),
      ('admin', format('select to_jsonb(public.get_delivery_dispatch(%L))', (select delivery from o))),
      ('driver', format('select to_jsonb(public.decline_delivery(%L))', (select delivery from o))),
      ('owner', format('select to_jsonb(public.get_driver_cash(%L))', (select a ->> 'driver_id' from t))),
      ('admin', format('select to_jsonb(public.record_cash_settlement(%L, 1))', (select a ->> 'driver_id' from t))),
      ('owner', format('select to_jsonb(public.complete_delivery_override(%L, %L))', (select delivery from o), 'x')),
      ('admin', format('select to_jsonb(public.recall_delivery(%L, %L))', (select delivery from o), 'x')),
      ('driver', format('select to_jsonb(public.return_delivery(%L))', (select delivery from o))),
      ('owner', format('select to_jsonb(public.refundable_delivery(%L))', (select delivery from o))),
      ('admin', format('select to_jsonb(public.editable_delivery(%L))', (select delivery from o))),
      ('owner', format('select to_jsonb(public.driver_day(%L, current_date))', (select a ->> 'driver_id' from t))),
      ('driver', format('select to_jsonb(public.driver_day(%L, current_date))', (select a ->> 'driver_id' from t)))
    ) as f (role_name, call)
  loop
    perform tests.act_as_member(b, entry.role_name) from t;
    result := tests.outcome(entry.call);
    perform tests.reset_role();
    return next is(result, 'PT404', format('%s as a foreign %s: 404', entry.call, entry.role_name));
  end loop;
end;
$$;
select * from pg_temp.foreign_calls();

select * from finish();
rollback;
