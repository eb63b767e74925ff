-- Driver locations: the 10-second rate limit, validation, the broadcast, who
-- may write and read positions, and the managers' list.
begin;
select plan(43);

-- Arrange: company A (owner, admin, legacy admin, two active drivers, one
-- deactivated) and company B.
create temp table t as select tests.create_tenant('loc-a') as a, tests.create_tenant('loc-b') as b;
update t set a = a || jsonb_build_object('driver3',
  tests.add_driver((a ->> 'company_id')::uuid, 'loc-a driver3', 'loc-a-driver3@tests.example', active => false) -> 'user');
grant select on t to public;

-- The detail of a refused update: {"retry_after": n}.
create function pg_temp.refusal_detail(lat double precision, lng double precision) returns jsonb
language plpgsql as $$
declare
  detail text;
begin
  perform to_jsonb(public.update_my_location(lat => lat, lng => lng));
  return null;
exception when sqlstate 'PT429' then
  get stacked diagnostics detail = pg_exception_detail;
  return detail::jsonb;
end;
$$;

-- Functions are executable by nobody unless granted (supabase/schemas/00_tenancy.sql): these are test helpers.
grant execute on all functions in schema pg_temp to public;

-- Moves driver 1 of A's last accepted update back in time: the test clock.
create function pg_temp.age_driver1(seconds numeric) returns void
language sql as $$
  update public.driver_locations set updated_at = now() - make_interval(secs => seconds)
  where driver_id = (select (a ->> 'driver_id')::uuid from t)
$$;

select is((select relrowsecurity from pg_class where oid = 'public.driver_locations'::regclass), true,
  'driver_locations is behind row-level security');
select has_function('public', 'update_my_location',
  array['double precision', 'double precision', 'double precision', 'double precision', 'double precision'],
  'update_my_location(lat, lng, heading, speed, accuracy) exists');

-- The first update --------------------------------------------------------------
select tests.act_as_member(a, 'driver') from t;
select is(
  to_jsonb(public.update_my_location(lat => -23.55, lng => -46.63, heading => 90, speed => 12.5, accuracy => 4)),
  jsonb_build_object('driver_id', (select a ->> 'driver_id' from t), 'lat', -23.55, 'lng', -46.63,
    'heading', 90, 'speed', 12.5, 'accuracy', 4, 'updated_at', now()),
  'a driver''s first update is accepted and returned');
select is(
  (select jsonb_agg(jsonb_build_object('lat', l.lat, 'company_id', l.company_id)) from public.driver_locations l),
  jsonb_build_array(jsonb_build_object('lat', -23.55, 'company_id', (select a ->> 'company_id' from t))),
  'the driver reads back its own position, stored under its company');
select tests.reset_role();

-- The payload is the position; realtime.send adds the message's id, as Realtime's does.
select is(
  (select jsonb_agg(jsonb_build_object('event', m.event, 'private', m.private, 'payload', m.payload - 'id',
                                       'message_id', m.payload ->> 'id' = m.id::text))
   from realtime.messages m where m.topic = 'company:' || (select a ->> 'company_id' from t)),
  jsonb_build_array(jsonb_build_object('event', 'driver_location', 'private', true, 'payload',
    jsonb_build_object('driver_id', (select a ->> 'driver_id' from t), 'lat', -23.55, 'lng', -46.63,
      'heading', 90, 'speed', 12.5, 'accuracy', 4, 'updated_at', now()), 'message_id', true)),
  'the accepted position is broadcast as driver_location on the company topic');

-- The rate limit ----------------------------------------------------------------
select tests.act_as_member(a, 'driver') from t;
select throws_ok(
  $$ select to_jsonb(public.update_my_location(lat => 1, lng => 1)) $$,
  'PT429', 'location updates are limited to one every 10 seconds',
  'a second update inside 10 seconds is refused with 429');
select is(pg_temp.refusal_detail(1, 1), '{"retry_after": 10}'::jsonb,
  'right after an accepted update, the refusal says to retry after 10 seconds');
select tests.reset_role();
select pg_temp.age_driver1(3.5);
select tests.act_as_member(a, 'driver') from t;
select is(pg_temp.refusal_detail(1, 1), '{"retry_after": 7}'::jsonb,
  '3.5 seconds later it says 7 (whole seconds, rounded up)');
select tests.reset_role();
select pg_temp.age_driver1(9.999);
select tests.act_as_member(a, 'driver') from t;
select is(pg_temp.refusal_detail(1, 1), '{"retry_after": 1}'::jsonb, 'just under 10 seconds later it is still refused');
select tests.reset_role();

select is(
  (select jsonb_build_object('lat', l.lat, 'lng', l.lng, 'heading', l.heading) from public.driver_locations l
   where l.driver_id = (select (a ->> 'driver_id')::uuid from t)),
  '{"lat": -23.55, "lng": -46.63, "heading": 90}'::jsonb,
  'a refused update changes nothing');
select is((select count(*)::integer from realtime.messages where event = 'driver_location'
  and topic = 'company:' || (select a ->> 'company_id' from t)), 1,
  'a refused update broadcasts nothing');

select pg_temp.age_driver1(10);
select tests.act_as_member(a, 'driver') from t;
select is(
  to_jsonb(public.update_my_location(lat => -23.56, lng => -46.64)) - 'updated_at',
  jsonb_build_object('driver_id', (select a ->> 'driver_id' from t), 'lat', -23.56, 'lng', -46.64, 'heading', null, 'speed', null, 'accuracy', null),
  '10 seconds after the last accepted update, the next is accepted; omitted fields become null');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 2, lng => 2)) $$, 'PT429', null,
  'and the one after that is refused again');
select tests.reset_role();
select is((select count(*)::integer from realtime.messages where event = 'driver_location'
  and topic = 'company:' || (select a ->> 'company_id' from t)), 2,
  'each accepted update is broadcast once');

-- The limit is per driver: driver 2 is not held back by driver 1.
select tests.act_as_member(a, 'driver2') from t;
select lives_ok($$ select to_jsonb(public.update_my_location(lat => 10, lng => 20)) $$,
  'another driver of the company is not affected by driver 1''s limit');
select tests.reset_role();

-- Validation: the constraints reject what the proxy would have refused with 400.
select pg_temp.age_driver1(60);
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 90.0001, lng => 0)) $$, '23514', null, 'lat above 90 is refused');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => -90.5, lng => 0)) $$, '23514', null, 'lat below -90 is refused');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 180.5)) $$, '23514', null, 'lng above 180 is refused');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => -181)) $$, '23514', null, 'lng below -180 is refused');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 0, heading => 360)) $$, '23514', null, 'heading 360 is refused');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 0, heading => -1)) $$, '23514', null, 'a negative heading is refused');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 0, speed => -0.1)) $$, '23514', null, 'a negative speed is refused');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 0, accuracy => -1)) $$, '23514', null, 'a negative accuracy is refused');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 'NaN', lng => 0)) $$, '23514', null, 'lat NaN is refused');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 0, speed => 'Infinity')) $$, '23514', null, 'an infinite speed is refused');
select throws_ok($$ select to_jsonb(public.update_my_location(lat => null, lng => 0)) $$, '23502', null, 'a missing lat is refused');
select lives_ok($$ select to_jsonb(public.update_my_location(lat => -90, lng => 180, heading => 359.99, speed => 0, accuracy => 0)) $$,
  'the bounds themselves are accepted');
select tests.reset_role();

-- Who may write ------------------------------------------------------------------
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 0)) $$, 'PT403', null, 'an owner has no location to update');
select tests.act_as_member(a, 'admin') from t;
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 0)) $$, 'PT403', null, 'an admin has no location to update');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 0)) $$, 'PT403', null, 'a legacy admin has no location to update');
select tests.act_as_member(a, 'driver3') from t;
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 0)) $$, 'PT403', 'this driver is deactivated',
  'a deactivated driver may not update its location');
select tests.act_as_anon();
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 0, lng => 0)) $$, '42501', null, 'anon may not call it');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok(
  $$ insert into public.driver_locations (driver_id, company_id, lat, lng)
     select (a ->> 'driver2_id')::uuid, (a ->> 'company_id')::uuid, 0, 0 from t $$,
  '42501', null, 'a driver cannot write the table directly, around the limit');
select throws_ok($$ update public.driver_locations set updated_at = now() - interval '1 hour' $$,
  '42501', null, 'nor move its own clock back');
select tests.reset_role();

-- Who may read -------------------------------------------------------------------
select tests.act_as_member(b, 'driver') from t;
select lives_ok($$ select to_jsonb(public.update_my_location(lat => 1, lng => 2)) $$, 'a driver of company B updates its position');
select tests.reset_role();
select is((select count(*)::integer from realtime.messages where topic = 'company:' || (select b ->> 'company_id' from t)), 1,
  'company B''s position goes to company B''s topic only');

select tests.act_as_member(a, 'driver2') from t;
select is(array(select driver_id::text from public.driver_locations), array[(select a ->> 'driver2_id' from t)],
  'a driver sees only its own position');
select tests.act_as_member(b, 'owner') from t;
select is(array(select driver_id::text from public.driver_locations), array[(select b ->> 'driver_id' from t)],
  'an owner sees only its company''s positions');

-- The managers' list -------------------------------------------------------------
select tests.reset_role();
-- Drivers ordered by name; driver 2 has no position yet once we remove it.
delete from public.driver_locations where driver_id = (select (a ->> 'driver2_id')::uuid from t);
select tests.act_as_member(a, 'owner') from t;
select is(
  to_jsonb(public.list_driver_locations()),
  jsonb_build_object('items', jsonb_build_array(
    jsonb_build_object('driver_id', (select a ->> 'driver_id' from t), 'name', 'loc-a driver', 'lat', -90, 'lng', 180,
      'heading', 359.99, 'speed', 0, 'accuracy', 0, 'updated_at', now()),
    jsonb_build_object('driver_id', (select a ->> 'driver2_id' from t), 'name', 'loc-a driver2', 'lat', null, 'lng', null,
      'heading', null, 'speed', null, 'accuracy', null, 'updated_at', null))),
  'an owner lists every active driver of its company, with nulls for one without a position');
select tests.act_as_member(a, 'admin') from t;
select is(jsonb_array_length(to_jsonb(public.list_driver_locations()) -> 'items'), 2, 'an admin lists them too');
select tests.act_as_member(a, 'legacy_admin') from t;
select is(jsonb_array_length(to_jsonb(public.list_driver_locations()) -> 'items'), 2, 'a legacy admin lists them too');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.list_driver_locations()) $$, 'PT403', null, 'a driver may not list locations');
select tests.act_as_member(b, 'owner') from t;
select is(
  array(select i ->> 'driver_id' from jsonb_array_elements(to_jsonb(public.list_driver_locations()) -> 'items') i),
  array[(select b ->> 'driver_id' from t), (select b ->> 'driver2_id' from t)],
  'another company''s owner lists only its own drivers');
select tests.reset_role();

select * from finish();
rollback;
