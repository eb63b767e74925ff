-- Routes and their stops under row-level security, for every role and a foreign company: managers (owner,
-- admin) read the company's, a driver its own once published, nobody else anything; nobody writes the tables but
-- the functions; the route functions answer 403 outside their role set and 404 across companies; a delivery is
-- in at most one live route, by a unique index.
begin;
select plan(45);

create temp table t as select tests.create_tenant('ro-a') as a, tests.create_tenant('ro-b') as b;
grant select on t to public;
create temp table o as
select (tests.delivery_in(a, 'pending', 'invoice')).id as d1, (tests.delivery_in(a, 'pending', 'invoice')).id as d2,
  (tests.delivery_in(a, 'pending', 'invoice')).id as d3
from t;
grant select on o to public;
create temp table r as
select tests.draft_route(a, array[d1]) as draft, tests.draft_route(a, array[d2], 'driver2') as published from t, o;
grant select on r to public;
select tests.act_as_member(a, 'owner') from t;
select lives_ok(format('select public.publish_route(%L)', (select published from r)), 'the owner publishes driver2''s route');
select tests.reset_role();

select is((select relrowsecurity from pg_class where oid = 'public.routes'::regclass), true, 'routes has RLS on');
select is((select relrowsecurity from pg_class where oid = 'public.route_stops'::regclass), true, 'route_stops has RLS on');
select is((select relrowsecurity from pg_class where oid = 'public.route_plans'::regclass), true, 'route_plans has RLS on');
select policies_are('public', 'routes', array['routes_select_visible'], 'routes: one select policy, nothing else');
select policies_are('public', 'route_stops', array['route_stops_select_visible'], 'route_stops: one select policy');
select policies_are('public', 'route_plans', array['route_plans_select_managers'], 'route_plans: one select policy');

-- Who reads what: [routes, stops] each member sees.
create function pg_temp.seen(tenant text, member text) returns integer[]
language plpgsql as $$
declare
  seen integer[];
begin
  execute format('select tests.act_as_member(%s, %L) from t', tenant, member);
  seen := array[(select count(*)::integer from public.routes), (select count(*)::integer from public.route_stops)];
  perform tests.reset_role();
  return seen;
end;
$$;
select is(pg_temp.seen('a', 'owner'), array[2, 4], 'the owner reads every route of the company and its stops');
select is(pg_temp.seen('a', 'admin'), array[2, 4], 'the company admin too');
select is(pg_temp.seen('a', 'legacy_admin'), array[0, 0], 'the legacy admin reads no route');
select is(pg_temp.seen('a', 'driver'), array[0, 0], 'a driver does not read its draft');
select is(pg_temp.seen('a', 'driver2'), array[1, 2], 'a driver reads its published route and its stops');
select is(pg_temp.seen('b', 'owner'), array[0, 0], 'a foreign owner reads nothing');
select is(pg_temp.seen('b', 'driver'), array[0, 0], 'a foreign driver reads nothing');
select tests.act_as_anon();
select ok(not tests.may('select 1 from public.routes'), 'anon may not read routes');
select ok(not tests.may('select 1 from public.route_stops'), 'anon may not read stops');
select tests.reset_role();

-- Nobody writes the tables but the functions.
select tests.act_as_member(a, 'owner') from t;
select ok(not tests.may(format('update public.routes set status = %L', 'completed')), 'the owner may not update a route');
select ok(not tests.may(format('update public.route_stops set status = %L', 'done')), 'nor a stop');
select ok(not tests.may('delete from public.routes'), 'nor delete a route');
select ok(not tests.may(format('insert into public.route_plans (company_id, request) values (%L, %L)',
  (select a ->> 'company_id' from t), '{}')), 'nor write a plan job');
select tests.act_as_member(a, 'driver2') from t;
select ok(not tests.may(format('update public.route_stops set status = %L', 'done')), 'a driver may not update its stops');
select tests.reset_role();

-- The functions: 404 for a foreign company's route, 403 outside the role set.
create function pg_temp.outcome_as(tenant text, member text, call text) returns text
language plpgsql as $$
declare
  result text;
begin
  execute format('select tests.act_as_member(%s, %L) from t', tenant, member);
  result := tests.outcome(call);
  perform tests.reset_role();
  return result;
end;
$$;
select is(pg_temp.outcome_as('b', 'owner', format('select public.get_route(%L)', (select published from r))), 'PT404',
  'a foreign owner: 404 on get');
select is(pg_temp.outcome_as('b', 'admin', format('select public.publish_route(%L)', (select draft from r))), 'PT404',
  'a foreign admin: 404 on publish');
select is(pg_temp.outcome_as('b', 'owner', format('select public.cancel_route(%L)', (select published from r))), 'PT404',
  'a foreign owner: 404 on cancel');
select is(pg_temp.outcome_as('b', 'owner', format('select public.set_route_stops(%L, %L, 0, 0, null, null)',
  (select draft from r), '[]')), 'PT404', 'a foreign owner: 404 on setting the stops');
select is(pg_temp.outcome_as('b', 'driver', format('select public.get_route(%L)', (select published from r))), 'PT404',
  'a foreign driver: 404 on get');
select is(pg_temp.outcome_as('a', 'driver', format('select public.get_route(%L)', (select draft from r))), 'PT404',
  'a driver: 404 on its draft');
select is(pg_temp.outcome_as('a', 'driver', format('select public.get_route(%L)', (select published from r))), 'PT404',
  'a driver: 404 on another driver''s route');
select is(pg_temp.outcome_as('a', 'driver2', format('select public.get_route(%L)', (select published from r))), 'ok',
  'a driver reads its own published route');
select is(pg_temp.outcome_as('a', 'driver2', format('select public.publish_route(%L)', (select draft from r))), 'PT403',
  'a driver: 403 on publish');
select is(pg_temp.outcome_as('a', 'driver2', format('select public.cancel_route(%L)', (select published from r))), 'PT403',
  'a driver: 403 on cancel');
select is(pg_temp.outcome_as('a', 'legacy_admin', 'select public.list_routes()'), 'PT403', 'the legacy admin: 403 on the list');
select is(pg_temp.outcome_as('b', 'owner', format('select public.route_plan_input(array[%L]::uuid[])',
  (select a ->> 'driver_id' from t))), 'PT404', 'a foreign owner cannot plan with another company''s driver');
select is(pg_temp.outcome_as('b', 'owner', format('select public.route_plan_input(array[%L]::uuid[], array[%L]::uuid[])',
  (select b ->> 'driver_id' from t), (select d3 from o))), 'PT404', 'nor with another company''s delivery');
select is(pg_temp.outcome_as('b', 'owner', format('select public.set_driver_vehicle(%L, %L)',
  (select a ->> 'driver_id' from t), 'van')), 'PT404', 'nor change another company''s driver''s vehicle');
select tests.act_as_member(a, 'driver2') from t;
select is((select cardinality((public.list_routes()).items)), 1, 'the list shows a driver its own route only');
select tests.act_as_member(a, 'owner') from t;
select is((select cardinality((public.list_routes()).items)), 2, 'and the owner the company''s');
select is((select cardinality((public.list_routes(status => 'draft')).items)), 1, 'filtered by status');
select is((select cardinality((public.list_routes(driver_id => (select (a ->> 'driver2_id')::uuid from t))).items)), 1,
  'filtered by driver');
select tests.reset_role();

-- A delivery is in at most one live route.
select throws_ok(
  format($$ select tests.draft_route(a, array[%L]::uuid[], 'driver2') from t $$, (select d1 from o)),
  'PT409', null, 'a delivery already in a draft cannot be planned into another route');
select throws_ok(
  format($$ insert into public.route_stops (route_id, seq, company_id, delivery_id, kind)
            values (%L, 9, %L, %L, 'pickup') $$, (select published from r), (select a ->> 'company_id' from t),
         (select d1 from o)),
  '23505', null, 'the unique index refuses a second live route for a delivery, whoever writes it');
select tests.act_as_member(a, 'owner') from t;
select is((public.route_plan_input(array[(select (a ->> 'driver_id')::uuid from t)])).deliveries[1].id, (select d3 from o),
  'a plan without names takes the pending deliveries in no live route');
select throws_ok(format('select public.route_plan_input(array[%L]::uuid[], array[%L]::uuid[])',
  (select a ->> 'driver_id' from t), (select d1 from o)), 'PT409', null, 'a named delivery in a route is 409');
select lives_ok(format('select public.cancel_route(%L)', (select draft from r)), 'the draft is cancelled');
select tests.reset_role();
select lives_ok(format($$ select tests.draft_route(a, array[%L]::uuid[], 'driver') from t $$, (select d1 from o)),
  'its delivery then goes into another route');

select * from finish();
rollback;
