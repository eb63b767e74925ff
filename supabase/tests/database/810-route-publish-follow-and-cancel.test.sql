-- A route's life: publish assigns every delivery to the driver in the route's order (not limited by
-- max_active_per_driver) and tells the driver; a draft whose delivery went elsewhere, or a driver with a live
-- route, is 409; the stops and the route follow the driver's start, complete and fail; a new order of stops is
-- checked (a pickup after its drop-off is 422) and moves a stop out of another draft; cancel sends back to pending
-- what was not picked up.
begin;
select plan(32);

create temp table t as select tests.create_tenant('rl') as a;
grant select on t to public;
create temp table o as
select (tests.delivery_in(a, 'pending', 'invoice')).id as e1, (tests.delivery_in(a, 'pending', 'invoice')).id as e2,
  (tests.delivery_in(a, 'pending', 'invoice')).id as e3, (tests.delivery_in(a, 'pending', 'invoice')).id as e4,
  (tests.delivery_in(a, 'pending', 'invoice')).id as e5, (tests.delivery_in(a, 'pending', 'invoice')).id as e6
from t;
grant select on o to public;
create temp table r as select tests.draft_route(a, array[e2, e1]) as first, tests.draft_route(a, array[e3]) as second,
  tests.draft_route(a, array[e4], 'driver2') as taken
from t, o;
grant select on r to public;

create function pg_temp.status_of(id uuid) returns text language sql as $$ select status from public.deliveries where id = $1 $$;
create function pg_temp.stops_of(route uuid) returns text[] language sql as $$
  select array_agg(s.kind || ':' || s.status order by s.seq) from public.route_stops s where s.route_id = $1 $$;
create function pg_temp.route_status(route uuid) returns text language sql as $$ select status from public.routes where id = $1 $$;

-- Publish.
delete from realtime.messages;
select tests.act_as_member(a, 'owner') from t;
select lives_ok(format('select public.publish_route(%L)', (select first from r)), 'the owner publishes a route of two deliveries');
select tests.reset_role();
select is(array[pg_temp.status_of(e2), pg_temp.status_of(e1)], array['accepted', 'accepted'], 'both are accepted') from o;
select is((select array_agg(distinct driver_id) from public.deliveries where id in (e1, e2)),
  array[(select (a ->> 'driver_id')::uuid from t)], 'by the route''s driver, beyond max_active_per_driver') from o;
select is(array(select h.delivery_id from public.delivery_history h where h.trigger = 'assign' and h.delivery_id in (e1, e2)
  order by h.id), array[e2, e1], 'assigned in the route''s order') from o;
select is(pg_temp.route_status((select first from r)), 'published', 'the route is published');
select is((select count(*)::integer from realtime.messages m, t
  where m.topic = 'driver:' || (a ->> 'driver_id') and m.event = 'route_published'
    and m.payload ->> 'id' = (select first::text from r) and jsonb_array_length(m.payload -> 'stops') = 4), 1,
  'the driver gets route_published with the route and its stops');

-- 409s.
select tests.act_as_member(a, 'owner') from t;
select throws_ok(format('select public.publish_route(%L)', (select second from r)), 'PT409',
  format('the driver already has a live route: %s', (select first from r)), 'a second live route for a driver is 409');
select lives_ok(format('select public.cancel_delivery(%L)', (select e4 from o)), 'a delivery of a draft is cancelled');
select throws_ok(format('select public.publish_route(%L)', (select taken from r)), 'PT409',
  format('delivery %s was cancelled meanwhile', (select e4 from o)), 'publishing its draft is 409 naming it');
select throws_ok(format('select public.publish_route(%L)', (select first from r)), 'PT422',
  'route cannot move from published to published', 'a published route is not published again');

-- A new order of stops.
select throws_ok(format('select public.set_route_stops(%L, %L, 0, 0, null, null)', (select second from r),
  jsonb_build_array(jsonb_build_object('delivery_id', (select e3 from o), 'kind', 'dropoff'),
    jsonb_build_object('delivery_id', (select e3 from o), 'kind', 'pickup'))), 'PT422',
  format('the pickup of delivery %s comes after its drop-off', (select e3 from o)), 'a pickup after its drop-off is 422');
select throws_ok(format('select public.set_route_stops(%L, %L, 0, 0, null, null)', (select first from r),
  jsonb_build_array(jsonb_build_object('delivery_id', (select e1 from o), 'kind', 'pickup'),
    jsonb_build_object('delivery_id', (select e1 from o), 'kind', 'dropoff'))), 'PT422',
  format('delivery %s cannot leave a route that is published: cancel the route instead', (select e2 from o)),
  'a delivery cannot leave a published route');
select lives_ok(format('select public.set_route_stops(%L, %L, 900, 1200, now() + interval ''1 hour'', %L)', (select taken from r),
  jsonb_build_array(jsonb_build_object('delivery_id', (select e3 from o), 'kind', 'pickup', 'arrival_at', now()),
    jsonb_build_object('delivery_id', (select e3 from o), 'kind', 'dropoff', 'arrival_at', now() + interval '10 minutes')),
  '[{"seq": 2, "kind": "window", "detail": "late"}]'), 'a stop moves from one draft to another');
select tests.reset_role();
select is(pg_temp.stops_of((select taken from r)), array['pickup:pending', 'dropoff:pending'], 'it is the new route''s');
select is(pg_temp.stops_of((select second from r)), null, 'and left the other');
select is((select violations -> 0 ->> 'kind' from public.routes where id = (select taken from r)), 'window',
  'the route keeps the violations the edge found');

-- The stops follow the driver.
select tests.act_as_member(a, 'driver') from t;
select lives_ok(format('select public.start_delivery(%L)', (select e2 from o)), 'the driver picks up the first');
select tests.reset_role();
select is(pg_temp.stops_of((select first from r)), array['pickup:done', 'dropoff:pending', 'pickup:pending', 'dropoff:pending'],
  'its pickup is done');
select is(pg_temp.route_status((select first from r)), 'in_progress', 'the route is in progress from its first stop done');
select tests.act_as_member(a, 'driver') from t;
select lives_ok(format('select public.complete_delivery(%L)', (select e2 from o)), 'the driver completes it');
select lives_ok(format('select public.start_delivery(%L)', (select e1 from o)), 'picks up the next');
select lives_ok(format('select public.fail_delivery(%L, %L)', (select e1 from o), 'refused'), 'and fails it');
select tests.reset_role();
select is(pg_temp.stops_of((select first from r)), array['pickup:done', 'dropoff:done', 'pickup:done', 'dropoff:failed'],
  'each stop followed its delivery');
select is(pg_temp.route_status((select first from r)), 'completed', 'no stop pending: the route is completed');
select is((select bool_or(live) from public.route_stops where route_id = (select first from r)), false,
  'its deliveries are free for another route');

-- Cancel.
create temp table c as select tests.draft_route(a, array[e5, e6], 'driver2') as route from t, o;
grant select on c to public;
select tests.act_as_member(a, 'owner') from t;
select lives_ok(format('select public.publish_route(%L)', (select route from c)), 'another route is published');
select tests.act_as_member(a, 'driver2') from t;
select lives_ok(format('select public.start_delivery(%L)', (select e5 from o)), 'its driver picks up the first');
select tests.act_as_member(a, 'owner') from t;
select lives_ok(format('select public.cancel_route(%L)', (select route from c)), 'the owner cancels the route');
select tests.reset_role();
select is(array[pg_temp.status_of(e5), pg_temp.status_of(e6)], array['in_progress', 'pending'],
  'what was picked up stays with the driver, the rest is pending again') from o;
select is((select driver_id from public.deliveries where id = e6), null, 'nobody''s') from o;
select is(pg_temp.stops_of((select route from c)), array['pickup:done', 'dropoff:skipped', 'pickup:skipped', 'dropoff:skipped'],
  'the stops left are skipped');
select is((select trigger from public.delivery_history where delivery_id = e6 order by id desc limit 1), 'unassign',
  'the move is recorded') from o;

select * from finish();
rollback;
