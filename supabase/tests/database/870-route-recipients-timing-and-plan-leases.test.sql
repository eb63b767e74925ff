-- A route's recipients follow it live: tracking_updated to each recipient whose stops_before changes (publish,
-- a drop-off done or failed, a stop inserted, a cancel) and to none whose place did not (a pickup done). The
-- stops still to come are timed again from the driver's position at the ETA's cadence: a position claims its live
-- route (30 s, 100 m), the edge records the arrivals (service role only), the driver hears route_updated and each
-- recipient whose arrival changed tracking_updated. A plan job whose worker stops speaking is failed with the
-- reason once its lease runs out, and tells the company.
begin;
select plan(29);

create temp table t as select tests.create_tenant('rt') as a;
grant select on t to public;
create temp table o as
select (tests.delivery_in(a, 'pending', 'invoice')).id as e1, (tests.delivery_in(a, 'pending', 'invoice')).id as e2,
  (tests.delivery_in(a, 'pending', 'invoice')).id as e3, (tests.delivery_in(a, 'pending', 'invoice')).id as e4
from t;
grant select on o to public;
create temp table r as select tests.draft_route(a, array[e1, e2, e3]) as route from t, o;
grant select on r to public;

-- The tracking_updated messages to one delivery's recipient, their stops_before in order.
create function pg_temp.told(delivery uuid) returns jsonb[] language sql as $$
  select coalesce(array_agg(m.payload order by m.inserted_at, m.id), '{}') from realtime.messages m
  join private.delivery_tracking k on private.tracking_topic(k.token_hash) = m.topic
  where k.delivery_id = told.delivery and m.event = 'tracking_updated' $$;
create function pg_temp.stops_before(delivery uuid) returns text[] language sql as $$
  select coalesce(array_agg(coalesce(p ->> 'stops_before', 'null')), '{}') from unnest(pg_temp.told(delivery)) p $$;

-- Publish: every recipient learns its place.
delete from realtime.messages;
select tests.act_as_member(a, 'owner') from t;
select lives_ok(format('select public.publish_route(%L)', (select route from r)), 'the owner publishes a route of three');
select tests.reset_role();
-- (The assign's own tracking_updated, before the route was published, says null; one transaction's messages share
-- their time, so only the values are compared, not their order.)
select is(array[array_remove(pg_temp.stops_before(e1), 'null'), array_remove(pg_temp.stops_before(e2), 'null'),
  array_remove(pg_temp.stops_before(e3), 'null')], array[array['0'], array['1'], array['2']],
  'each recipient hears how many drop-offs come before theirs') from o;

-- A pickup done changes nobody's place.
delete from realtime.messages;
select tests.act_as_member(a, 'driver') from t;
select lives_ok(format('select public.start_delivery(%L)', (select e1 from o)), 'the driver picks up the first');
select tests.reset_role();
select is(pg_temp.told(e2), '{}', 'the second recipient hears nothing: its place did not change') from o;

-- A drop-off done: those after it move up.
delete from realtime.messages;
select tests.act_as_member(a, 'driver') from t;
select lives_ok(format('select public.complete_delivery(%L)', (select e1 from o)), 'the driver completes the first');
select tests.reset_role();
select is(pg_temp.stops_before(e2), array['0'], 'the second recipient hears it is next') from o;
select is(pg_temp.stops_before(e3), array['1'], 'the third that one stop is left before theirs') from o;
select is((select (p ->> 'status') from unnest(pg_temp.told(e3)) p limit 1), 'accepted',
  'with the tracking view (the status of its own delivery)') from o;

-- A drop-off failed: the same.
delete from realtime.messages;
select tests.act_as_member(a, 'driver') from t;
select lives_ok(format('select public.start_delivery(%L)', (select e2 from o)), 'the driver picks up the second');
select lives_ok(format('select public.fail_delivery(%L, %L)', (select e2 from o), 'refused'), 'and fails it');
select tests.reset_role();
select is(pg_temp.stops_before(e3), array['0'], 'the third recipient is next') from o;

-- The live timing: a position claims the route (as the ETA's refreshes are claimed), at most every 30 s.
create function pg_temp.send(lat double precision, lng double precision) returns jsonb
language plpgsql as $$
declare
  sent jsonb;
begin
  update public.driver_locations l set updated_at = l.updated_at - interval '10 seconds'
  where l.driver_id = (select (a ->> 'driver_id')::uuid from t);
  perform tests.act_as_member(t.a, 'driver') from t;
  sent := to_jsonb(public.update_my_location_with_eta(send.lat, send.lng));
  perform tests.reset_role();
  return sent;
end;
$$;
grant execute on function pg_temp.send(double precision, double precision) to public;
select is(pg_temp.send(-23.51, -46.61) -> 'eta_due',
  jsonb_build_array(jsonb_build_object('route_id', (select route from r), 'from', '{"lat": -23.51, "lng": -46.61}'::jsonb)),
  'a position of a driver with a live route claims its timing, from there');
select is((select timing_requested_at from public.routes where id = (select route from r)), now(), 'stamped on the route');
select is(pg_temp.send(-23.56, -46.65) -> 'eta_due', '[]', 'a second position within 30 s claims nothing');
update public.routes set timing_requested_at = now() - interval '31 seconds' where id = (select route from r);
select is(pg_temp.send(-23.56, -46.65) -> 'eta_due', jsonb_build_array(jsonb_build_object('route_id', (select route from r),
  'from', '{"lat": -23.56, "lng": -46.65}'::jsonb)), '30 s on, from afar, it claims it again');

select tests.act_as_member(a, 'driver') from t;
select throws_ok(format('select public.record_route_timing(%L, 0, 0, %L)', (select route from r), '[]'), '42501', null,
  'a driver may not record a timing');
select throws_ok(format('select public.route_timing_input(%L)', (select route from r)), '42501', null,
  'nor read the timing input');
select tests.act_as_service_role();
select is(jsonb_array_length(public.route_timing_input((select route from r)) -> 'stops'), 2,
  'the timing input holds the stops still to come: the third delivery''s pickup and drop-off');
delete from realtime.messages;
select ok(public.record_route_timing((select route from r), -23.56, -46.65, jsonb_build_array(
    jsonb_build_object('delivery_id', (select e3 from o), 'kind', 'pickup', 'arrival_at', now() + interval '5 minutes'),
    jsonb_build_object('delivery_id', (select e3 from o), 'kind', 'dropoff', 'arrival_at', now() + interval '20 minutes')),
  now() + interval '22 minutes'), 'the service role records the new arrivals');
select tests.reset_role();
select is((select array_agg(arrival_at - now() order by seq) from public.route_stops
  where route_id = (select route from r) and status = 'pending'), array[interval '5 minutes', interval '20 minutes'],
  'the pending stops are timed anew');
select is((select (p ->> 'eta_at')::timestamptz from unnest(pg_temp.told(e3)) p), now() + interval '20 minutes',
  'the recipient hears the new arrival') from o;
select is((select count(*)::integer from realtime.messages m, t where m.topic = 'driver:' || (a ->> 'driver_id')
  and m.event = 'route_updated'), 1, 'the driver hears route_updated');

-- Cancel: the recipient left has no place any more.
delete from realtime.messages;
select tests.act_as_member(a, 'owner') from t;
select lives_ok(format('select public.cancel_route(%L)', (select route from r)), 'the owner cancels the route');
select tests.reset_role();
select is(array(select distinct x from unnest(pg_temp.stops_before(e3)) x), array['null'],
  'the last recipient hears it is in no route now (from the cancel and from its delivery back to pending)') from o;

-- A plan job whose worker stopped speaking.
select tests.act_as_member(a, 'owner') from t;
create temp table j as select (public.start_route_plan('{"drivers": []}')).id as job;
select tests.reset_role();
grant select on j to public;
update public.route_plans set lease_until = now() - interval '1 second' where id = (select job from j);
delete from realtime.messages;
select tests.act_as_member(a, 'owner') from t;
select is((select array[p.status, p.error] from public.get_route_plan((select job from j)) p),
  array['failed', 'the worker stopped before the plan was done (no word from it for 30 s): plan again'],
  'read past its lease, the job is failed with the reason');
select tests.reset_role();
select is((select payload ->> 'status' from realtime.messages m, t
  where m.topic = 'company:' || (a ->> 'company_id') and m.event = 'plan_progress'), 'failed', 'the company hears it');
select tests.act_as_service_role();
select throws_ok(format('select public.record_route_plan(%L, ''done'', 1)', (select job from j)), 'PT404',
  'no running route plan with this id', 'the outcome of a worker come back late is refused');
select tests.reset_role();

-- The minute's sweep: the job past its lease is failed, the one whose worker still speaks is left running.
select tests.act_as_member(a, 'owner') from t;
create temp table k as select (public.start_route_plan('{"drivers": []}')).id as dead,
  (public.start_route_plan('{"drivers": []}')).id as alive;
select tests.reset_role();
update public.route_plans set lease_until = now() - interval '1 second' where id = (select dead from k);
select ok(private.expire_route_plans() >= 1, 'the sweep fails what it finds past its lease');
select is(array(select status from public.route_plans where id in (select dead from k union all select alive from k)
  order by id = (select dead from k) desc), array['failed', 'running'], 'the dead job, not the one still held');

select * from finish();
rollback;
