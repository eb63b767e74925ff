-- Dispatch under `offer` (14_dispatch.sql): who is eligible (inactive, offline, at the limit, out of radius,
-- offered before: each left out with its reason; another company's drivers never seen), the ranking (road
-- duration, then fewer deliveries completed today; straight-line distance when the routing service failed),
-- offers (only their holders see, are told of and may accept the delivery; one per driver and delivery),
-- a decline or an expiry passing it to the next batch, and with nobody left the fallback to broadcast,
-- flagged unassigned. The dispatch function's part is played here: public.claim_dispatches, then
-- public.complete_dispatch with the durations the routing service would have answered.
begin;
select plan(45);

create temp table t as select tests.create_tenant('dsp-a') as a, tests.create_tenant('dsp-b') as b;
grant select on t to public;
-- Every driver by name: the tenant's two and six more of company a, one of company b.
create temp table names (name text primary key, id uuid);
grant select on names to public;
insert into names select 'driver', (a ->> 'driver_id')::uuid from t;
insert into names select 'driver2', (a ->> 'driver2_id')::uuid from t;
insert into names select 'inactive', (tests.add_driver((a ->> 'company_id')::uuid, 'Inactive', 'dsp-inactive@tests.example', false) ->> 'driver_id')::uuid from t;
insert into names select 'offline', (tests.add_driver((a ->> 'company_id')::uuid, 'Offline', 'dsp-offline@tests.example') ->> 'driver_id')::uuid from t;
insert into names select 'busy', (tests.add_driver((a ->> 'company_id')::uuid, 'Busy', 'dsp-busy@tests.example') ->> 'driver_id')::uuid from t;
insert into names select 'far', (tests.add_driver((a ->> 'company_id')::uuid, 'Far', 'dsp-far@tests.example') ->> 'driver_id')::uuid from t;
insert into names select 'late', (tests.add_driver((a ->> 'company_id')::uuid, 'Late', 'dsp-late@tests.example') ->> 'driver_id')::uuid from t;
insert into names select 'foreign', (b ->> 'driver_id')::uuid from t;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;

create function pg_temp.driver(name text) returns uuid language sql as $$ select id from names where name = driver.name $$;
create function pg_temp.delivery(name text) returns uuid language sql as $$ select id from ids where name = delivery.name $$;
-- (The migrations took PUBLIC's default execute right away; the drivers call these.)
grant execute on function pg_temp.driver(text), pg_temp.delivery(text) to public;

-- A driver's position `km` north of the pickup; a delivery of company a, by name.
create function pg_temp.place(name text, km numeric, minutes_ago integer default 0) returns void
language sql as $$ select tests.place_driver(pg_temp.driver(place.name), place.km, place.minutes_ago) $$;
create function pg_temp.new_delivery(name text) returns uuid
language sql as $$ insert into ids select new_delivery.name, tests.create_delivery(a) from t returning id $$;
create function pg_temp.claim(delivery uuid) returns jsonb language sql as $$ select tests.claim_dispatch(claim.delivery) $$;
create function pg_temp.complete(job jsonb, durations jsonb, routing_error text default null) returns jsonb
language sql as $$ select tests.complete_dispatch(complete.job, complete.durations, complete.routing_error) $$;

-- Names of the drivers in a job's candidates, in order.
create function pg_temp.candidate_names(job jsonb) returns text[]
language sql as $$
  select coalesce(array_agg(n.name order by c.ord), '{}') from jsonb_array_elements(job -> 'candidates') with ordinality c (v, ord)
  join names n on n.id = (c.v ->> 'driver_id')::uuid
$$;

-- The last round of a delivery: "name rank|reason" for each candidate, in the round's order.
create function pg_temp.round_lines(delivery uuid) returns text[]
language sql as $$
  select array_agg(n.name || ' ' || coalesce(c.rank::text, c.left_out) order by c.ord)
  from (select candidates from public.dispatch_rounds r where r.delivery_id = round_lines.delivery order by r.id desc limit 1) r,
    unnest(r.candidates) with ordinality c (driver_id, name, rank, distance_m, duration_s, completed_today, active_deliveries,
      left_out, lat, lng, ord)
  join names n on n.id = c.driver_id
$$;

-- The messages `event` sent since the last call, as "driver-name" (topic driver:{id}) or the topic; then deleted.
create function pg_temp.messages(event text) returns text[]
language plpgsql as $$
declare
  lines text[];
begin
  select coalesce(array_agg(coalesce(n.name, m.topic) order by coalesce(n.name, m.topic)), '{}') into lines
  from realtime.messages m left join names n on m.topic = 'driver:' || n.id
  where m.event = messages.event;
  delete from realtime.messages;
  return lines;
end;
$$;

-- Company a offers, one driver at a time, within 20 km, up to 2 deliveries under way per driver.
select tests.act_as_member(a, 'owner') from t;
select public.set_dispatch_settings('offer', 60, 1, 2, 20);
select tests.reset_role();

select pg_temp.place('driver', 1.0);
select pg_temp.place('driver2', 2.0);
select pg_temp.place('inactive', 0.5);
select pg_temp.place('offline', 0.3, minutes_ago => 3);
select pg_temp.place('busy', 0.8);
select pg_temp.place('far', 30.0);
-- Offline until the first offers have gone: then it comes online, and is the next one offered.
select pg_temp.place('late', 3.0, minutes_ago => 5);
select pg_temp.place('foreign', 0.1);
-- Two deliveries under way: busy is at the limit.
insert into ids select 'busy-1', (tests.delivery_in(a, 'accepted', 'invoice')).id from t;
insert into ids select 'busy-2', (tests.delivery_in(a, 'in_progress', 'invoice')).id from t;
update public.deliveries set driver_id = pg_temp.driver('busy') where id in (select id from ids where name like 'busy-%');

-- Entering dispatch ----------------------------------------------------------------------------------

select pg_temp.messages('delivery_available');
select pg_temp.new_delivery('one');
select is((select dispatch_status from public.deliveries where id = pg_temp.delivery('one')), 'queued',
  'a pending delivery of a company that offers enters dispatch: queued');
select is(pg_temp.messages('delivery_available'), '{}'::text[], 'and no driver is told it is available');
select is((select due_at from private.dispatch_queue where delivery_id = pg_temp.delivery('one')), now(),
  'its first round is due at once');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.get_delivery(pg_temp.delivery('one')) $$, 'PT404', 'delivery not found',
  'drivers do not see a delivery waiting for its round');
select tests.reset_role();

-- Eligibility ----------------------------------------------------------------------------------------

create temp table jobs (name text primary key, job jsonb);
insert into jobs values ('one-1', pg_temp.claim(pg_temp.delivery('one')));
select is(pg_temp.candidate_names((select job from jobs where name = 'one-1')), array['driver', 'driver2'],
  'the claim gives the eligible drivers, nearest first, to ask the routing service about');
select is((select job -> 'origin' from jobs where name = 'one-1'), '{"lat": -23.55, "lng": -46.63}'::jsonb,
  'with the pickup');
select is(
  (select array_agg(n.name || ' ' || c.left_out order by n.name) from private.dispatch_queue q, unnest(q.candidates) c
   join names n on n.id = c.driver_id where q.delivery_id = pg_temp.delivery('one') and c.left_out is not null),
  array['busy at_limit', 'far out_of_radius', 'inactive inactive', 'late offline', 'offline offline'],
  'inactive, offline, at the limit and out of radius drivers are left out, each with its reason');
select ok(not exists (select from private.dispatch_queue q, unnest(q.candidates) c
  where q.delivery_id = pg_temp.delivery('one') and c.driver_id = pg_temp.driver('foreign')),
  'another company''s driver, however near, is never considered');
select is((select c.active_deliveries from private.dispatch_queue q, unnest(q.candidates) c
  where q.delivery_id = pg_temp.delivery('one') and c.driver_id = pg_temp.driver('busy')), 2,
  'the driver at the limit is shown with its deliveries under way');
select ok((select c.distance_m between 990 and 1010 from private.dispatch_queue q, unnest(q.candidates) c
  where q.delivery_id = pg_temp.delivery('one') and c.driver_id = pg_temp.driver('driver')),
  'straight-line distances are in metres');

-- Ranking and the first offer ---------------------------------------------------------------------------

select is(pg_temp.complete((select job from jobs where name = 'one-1'), '[600, 300]') ->> 'result', 'offered',
  'the round ends with an offer');
select is(pg_temp.round_lines(pg_temp.delivery('one')),
  array['driver2 1', 'driver 2', 'offline offline', 'inactive inactive', 'busy at_limit', 'late offline', 'far out_of_radius'],
  'the nearer driver by road ranks first, though farther in a straight line; the left out are recorded');
select is((select ranked_by from public.dispatch_rounds where delivery_id = pg_temp.delivery('one')), 'road_duration',
  'ranked by road duration');
select is(array(select n.name from public.dispatch_offers o join names n on n.id = o.driver_id
  where o.delivery_id = pg_temp.delivery('one') and o.outcome is null), array['driver2'],
  'offer_batch 1: the best-ranked driver holds the offer');
select is((select dispatch_status from public.deliveries where id = pg_temp.delivery('one')), 'offered', 'the delivery is offered');
select is(
  (select m.payload ->> 'expires_at' from realtime.messages m where m.event = 'delivery_offered'
   and m.topic = 'driver:' || pg_temp.driver('driver2'))::timestamptz,
  (select expires_at from public.dispatch_offers where delivery_id = pg_temp.delivery('one')),
  'delivery_offered tells the driver, with the offer''s deadline');
select is(pg_temp.messages('delivery_offered'), array['driver2'], 'and only that driver');
select is((select expires_at from public.dispatch_offers where delivery_id = pg_temp.delivery('one')), now() + interval '60 seconds',
  'the offer lasts offer_timeout_s');

select tests.act_as_member(a, 'driver2') from t;
select is((public.get_delivery(pg_temp.delivery('one'))).offer_expires_at, now() + interval '60 seconds',
  'the offered driver sees the delivery with its offer''s deadline');
select ok(pg_temp.delivery('one') in (select d.id from unnest((public.list_deliveries()).items) d), 'in its list too');
select tests.act_as_member(a, 'driver') from t;
select ok(pg_temp.delivery('one') not in (select d.id from unnest((public.list_deliveries()).items) d),
  'a driver without an offer does not list it');
select throws_ok($$ select public.accept_delivery(pg_temp.delivery('one')) $$, 'PT404', 'delivery not found',
  'nor may accept it');
select tests.reset_role();
select throws_ok($$ insert into public.dispatch_offers (delivery_id, company_id, driver_id, attempt, round, expires_at)
  select id, company_id, pg_temp.driver('driver2'), attempts, 9, now() + interval '1 minute' from public.deliveries
  where id = pg_temp.delivery('one') $$, '23505', null,
  'a driver holds at most one offer of a delivery (per attempt)');

-- Decline: the next batch ---------------------------------------------------------------------------------

select tests.act_as_member(a, 'driver2') from t;
select is((public.decline_delivery(pg_temp.delivery('one'))).id, pg_temp.delivery('one'), 'the offered driver declines');
select tests.reset_role();
select is((select outcome from public.dispatch_offers where delivery_id = pg_temp.delivery('one')), 'declined', 'its offer is declined');
select is(pg_temp.messages('delivery_unavailable'), array['driver2'],
  'the declining driver hears the offer ended (its other tabs drop it)');
insert into jobs values ('one-2', pg_temp.claim(pg_temp.delivery('one')));
select is(pg_temp.candidate_names((select job from jobs where name = 'one-2')), array['driver'],
  'the next round is due at once, without the driver who declined');
select is(pg_temp.complete((select job from jobs where name = 'one-2'), '[400]') -> 'drivers',
  jsonb_build_array(pg_temp.driver('driver')), 'and offers the delivery to the next driver');
select is(pg_temp.round_lines(pg_temp.delivery('one')) @> array['driver2 offered_before'], true,
  'the round records why the first driver was not offered it again');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok($$ select public.accept_delivery(pg_temp.delivery('one')) $$, 'PT422', 'the offer of this delivery was declined',
  'a declined offer cannot be accepted');

-- Expiry: the next batch, then nobody left: broadcast, unassigned ------------------------------------------

select tests.reset_role();
update public.dispatch_offers set offered_at = now() - interval '2 minutes', expires_at = now() - interval '1 minute'
where delivery_id = pg_temp.delivery('one') and outcome is null;
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.accept_delivery(pg_temp.delivery('one')) $$, 'PT422', 'the offer of this delivery has expired',
  'an offer past its deadline cannot be accepted, expired or not yet');
select tests.reset_role();
select pg_temp.place('late', 3.0);
select is(private.expire_dispatch_offers(), 1, 'the expiry pass expires the offer');
select is(pg_temp.messages('delivery_unavailable'), array['driver'],
  'its driver hears at once that the offer ended');
select is((select array_agg(outcome order by round) from public.dispatch_offers where delivery_id = pg_temp.delivery('one')),
  array['declined', 'expired'], 'each offer keeps its outcome');
insert into jobs values ('one-3', pg_temp.claim(pg_temp.delivery('one')));
select is(pg_temp.candidate_names((select job from jobs where name = 'one-3')), array['late'],
  'the next round is due at once, with the driver who came online meanwhile');
select is(pg_temp.complete((select job from jobs where name = 'one-3'), '[500]') -> 'drivers',
  jsonb_build_array(pg_temp.driver('late')), 'the expiry passed the delivery to the next driver');
update public.dispatch_offers set offered_at = now() - interval '2 minutes', expires_at = now() - interval '1 minute'
where delivery_id = pg_temp.delivery('one') and outcome is null;
select private.expire_dispatch_offers();
insert into jobs values ('one-4', pg_temp.claim(pg_temp.delivery('one')));
select is(pg_temp.candidate_names((select job from jobs where name = 'one-4')), '{}'::text[],
  'when that offer expires too, the next round finds nobody eligible left');
select pg_temp.messages('delivery_available');
select is(pg_temp.complete((select job from jobs where name = 'one-4'), null) ->> 'result', 'unassigned',
  'so the delivery is left unassigned');
select is((select dispatch_status from public.deliveries where id = pg_temp.delivery('one')), 'unassigned',
  'which its managers see');
select is(pg_temp.messages('delivery_available'), array['busy', 'driver', 'driver2', 'far', 'late', 'offline'],
  'and it is offered to every active driver of the company, as in broadcast');
select tests.act_as_member(a, 'driver2') from t;
select is((public.accept_delivery(pg_temp.delivery('one'))).status, 'accepted', 'any of them may take it now');
select tests.reset_role();
select is(pg_temp.messages('delivery_unavailable'), array['busy', 'driver', 'far', 'late', 'offline'],
  'once taken, every other active driver hears it is no longer open to them');
select is((select dispatch_status from public.deliveries where id = pg_temp.delivery('one')), 'assigned',
  'and dispatch shows it assigned');

-- Ties, and the routing service down -----------------------------------------------------------------------

select pg_temp.new_delivery('tie');
select tests.delivery_in(a, 'completed', 'invoice', driver => 'driver') from t;
select pg_temp.complete(pg_temp.claim(pg_temp.delivery('tie')), '[300.2, 299.9]');
select is((pg_temp.round_lines(pg_temp.delivery('tie')))[1:2], array['driver2 1', 'driver 2'],
  'equal road durations: the driver with fewer deliveries completed today ranks first');

select pg_temp.new_delivery('down');
select pg_temp.complete(pg_temp.claim(pg_temp.delivery('down')), null, 'timed out');
select is((select array[ranked_by, routing_error] from public.dispatch_rounds where delivery_id = pg_temp.delivery('down'))
  || (pg_temp.round_lines(pg_temp.delivery('down')))[1:2],
  array['straight_line', 'timed out', 'driver 1', 'driver2 2'],
  'the routing service down: the nearer in a straight line ranks first, and why is recorded');

select * from finish();
rollback;
