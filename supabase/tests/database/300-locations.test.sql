-- Driver locations: the 10-second rate limit, validation, the broadcast, who
-- may write and read positions, and the managers' list.
begin;
select plan(43);

-- Arrange: company A (owner, admin, legacy admin, two active drivers, one
-- deactivated) and company B (owner, driver).
insert into auth.users (id, email) values
  ('a0000000-0000-0000-0000-000000000001', 'owner-a@example.com'),
  ('a0000000-0000-0000-0000-000000000002', 'admin-a@example.com'),
  ('a0000000-0000-0000-0000-000000000003', 'legacy-a@example.com'),
  ('a0000000-0000-0000-0000-000000000004', 'driver1-a@example.com'),
  ('a0000000-0000-0000-0000-000000000005', 'driver2-a@example.com'),
  ('a0000000-0000-0000-0000-000000000006', 'driver3-a@example.com'),
  ('b0000000-0000-0000-0000-000000000001', 'owner-b@example.com'),
  ('b0000000-0000-0000-0000-000000000004', 'driver-b@example.com');
insert into public.companies (id, name) values
  ('aaaaaaaa-0000-0000-0000-000000000000', 'A'),
  ('bbbbbbbb-0000-0000-0000-000000000000', 'B');
insert into public.memberships (user_id, company_id, role) values
  ('a0000000-0000-0000-0000-000000000001', 'aaaaaaaa-0000-0000-0000-000000000000', 'company_owner'),
  ('a0000000-0000-0000-0000-000000000002', 'aaaaaaaa-0000-0000-0000-000000000000', 'company_admin'),
  ('a0000000-0000-0000-0000-000000000003', 'aaaaaaaa-0000-0000-0000-000000000000', 'admin'),
  ('a0000000-0000-0000-0000-000000000004', 'aaaaaaaa-0000-0000-0000-000000000000', 'driver'),
  ('a0000000-0000-0000-0000-000000000005', 'aaaaaaaa-0000-0000-0000-000000000000', 'driver'),
  ('a0000000-0000-0000-0000-000000000006', 'aaaaaaaa-0000-0000-0000-000000000000', 'driver'),
  ('b0000000-0000-0000-0000-000000000001', 'bbbbbbbb-0000-0000-0000-000000000000', 'company_owner'),
  ('b0000000-0000-0000-0000-000000000004', 'bbbbbbbb-0000-0000-0000-000000000000', 'driver');
insert into public.drivers (id, company_id, user_id, name, email, active) values
  ('d0000000-0000-0000-0000-00000000000a', 'aaaaaaaa-0000-0000-0000-000000000000', 'a0000000-0000-0000-0000-000000000004', 'Ana', 'driver1-a@example.com', true),
  ('d0000000-0000-0000-0000-00000000000b', 'aaaaaaaa-0000-0000-0000-000000000000', 'a0000000-0000-0000-0000-000000000005', 'Bruno', 'driver2-a@example.com', true),
  ('d0000000-0000-0000-0000-00000000000c', 'aaaaaaaa-0000-0000-0000-000000000000', 'a0000000-0000-0000-0000-000000000006', 'Caio', 'driver3-a@example.com', false),
  ('d0000000-0000-0000-0000-0000000000b1', 'bbbbbbbb-0000-0000-0000-000000000000', 'b0000000-0000-0000-0000-000000000004', 'Bia', 'driver-b@example.com', true);

-- The claims our access-token hook issues.
create function pg_temp.claims(user_id text, role text, company text) returns jsonb
language sql as $$
  select case when role = 'admin'
    then jsonb_build_object('sub', user_id, 'role', 'authenticated', 'user_metadata', jsonb_build_object('role', 'admin'))
    else jsonb_build_object('sub', user_id, 'role', role, 'company_id', company) end
$$;
create function pg_temp.as_owner_a() returns void language sql as
  $$ select tests.act_as(pg_temp.claims('a0000000-0000-0000-0000-000000000001', 'company_owner', 'aaaaaaaa-0000-0000-0000-000000000000')) $$;
create function pg_temp.as_admin_a() returns void language sql as
  $$ select tests.act_as(pg_temp.claims('a0000000-0000-0000-0000-000000000002', 'company_admin', 'aaaaaaaa-0000-0000-0000-000000000000')) $$;
create function pg_temp.as_legacy_a() returns void language sql as
  $$ select tests.act_as(pg_temp.claims('a0000000-0000-0000-0000-000000000003', 'admin', 'aaaaaaaa-0000-0000-0000-000000000000')) $$;
create function pg_temp.as_driver1_a() returns void language sql as
  $$ select tests.act_as(pg_temp.claims('a0000000-0000-0000-0000-000000000004', 'driver', 'aaaaaaaa-0000-0000-0000-000000000000')) $$;
create function pg_temp.as_driver2_a() returns void language sql as
  $$ select tests.act_as(pg_temp.claims('a0000000-0000-0000-0000-000000000005', 'driver', 'aaaaaaaa-0000-0000-0000-000000000000')) $$;
create function pg_temp.as_driver3_a() returns void language sql as
  $$ select tests.act_as(pg_temp.claims('a0000000-0000-0000-0000-000000000006', 'driver', 'aaaaaaaa-0000-0000-0000-000000000000')) $$;
create function pg_temp.as_owner_b() returns void language sql as
  $$ select tests.act_as(pg_temp.claims('b0000000-0000-0000-0000-000000000001', 'company_owner', 'bbbbbbbb-0000-0000-0000-000000000000')) $$;
create function pg_temp.as_driver_b() returns void language sql as
  $$ select tests.act_as(pg_temp.claims('b0000000-0000-0000-0000-000000000004', 'driver', 'bbbbbbbb-0000-0000-0000-000000000000')) $$;

-- The detail of a refused update: {"retry_after": n}.
create function pg_temp.refusal_detail(lat double precision, lng double precision) returns jsonb
language plpgsql as $$
declare
  detail text;
begin
  perform public.update_my_location(lat => lat, lng => lng);
  return null;
exception when sqlstate 'PT429' then
  get stacked diagnostics detail = pg_exception_detail;
  return detail::jsonb;
end;
$$;

-- Functions are executable by nobody unless granted (tenancy migration): these are test helpers.
grant execute on all functions in schema pg_temp to public;

-- Moves driver 1 of A's last accepted update back in time: the test clock.
create function pg_temp.age_driver1(seconds numeric) returns void
language sql as $$
  update public.driver_locations set updated_at = now() - make_interval(secs => seconds)
  where driver_id = 'd0000000-0000-0000-0000-00000000000a'
$$;

select is((select relrowsecurity from pg_class where oid = 'public.driver_locations'::regclass), true,
  'driver_locations is behind row-level security');
select has_function('public', 'update_my_location',
  array['double precision', 'double precision', 'double precision', 'double precision', 'double precision'],
  'update_my_location(lat, lng, heading, speed, accuracy) exists');

-- The first update --------------------------------------------------------------
select pg_temp.as_driver1_a();
select is(
  public.update_my_location(lat => -23.55, lng => -46.63, heading => 90, speed => 12.5, accuracy => 4),
  jsonb_build_object('driver_id', 'd0000000-0000-0000-0000-00000000000a', 'lat', -23.55, 'lng', -46.63,
    'heading', 90, 'speed', 12.5, 'accuracy', 4, 'updated_at', now()),
  'a driver''s first update is accepted and returned');
select is(
  (select jsonb_agg(jsonb_build_object('lat', l.lat, 'company_id', l.company_id)) from public.driver_locations l),
  '[{"lat": -23.55, "company_id": "aaaaaaaa-0000-0000-0000-000000000000"}]'::jsonb,
  'the driver reads back its own position, stored under its company');
select tests.reset_role();

select is(
  (select jsonb_agg(jsonb_build_object('event', m.event, 'private', m.private, 'payload', m.payload))
   from realtime.messages m where m.topic = 'company:aaaaaaaa-0000-0000-0000-000000000000'),
  jsonb_build_array(jsonb_build_object('event', 'driver_location', 'private', true, 'payload',
    jsonb_build_object('driver_id', 'd0000000-0000-0000-0000-00000000000a', 'lat', -23.55, 'lng', -46.63,
      'heading', 90, 'speed', 12.5, 'accuracy', 4, 'updated_at', now()))),
  'the accepted position is broadcast as driver_location on the company topic');

-- The rate limit ----------------------------------------------------------------
select pg_temp.as_driver1_a();
select throws_ok(
  $$ select public.update_my_location(lat => 1, lng => 1) $$,
  'PT429', 'location updates are limited to one every 10 seconds',
  'a second update inside 10 seconds is refused with 429');
select is(pg_temp.refusal_detail(1, 1), '{"retry_after": 10}'::jsonb,
  'right after an accepted update, the refusal says to retry after 10 seconds');
select tests.reset_role();
select pg_temp.age_driver1(3.5);
select pg_temp.as_driver1_a();
select is(pg_temp.refusal_detail(1, 1), '{"retry_after": 7}'::jsonb,
  '3.5 seconds later it says 7 (whole seconds, rounded up)');
select tests.reset_role();
select pg_temp.age_driver1(9.999);
select pg_temp.as_driver1_a();
select is(pg_temp.refusal_detail(1, 1), '{"retry_after": 1}'::jsonb, 'just under 10 seconds later it is still refused');
select tests.reset_role();

select is(
  (select jsonb_build_object('lat', l.lat, 'lng', l.lng, 'heading', l.heading) from public.driver_locations l
   where l.driver_id = 'd0000000-0000-0000-0000-00000000000a'),
  '{"lat": -23.55, "lng": -46.63, "heading": 90}'::jsonb,
  'a refused update changes nothing');
select is((select count(*)::integer from realtime.messages where event = 'driver_location'), 1,
  'a refused update broadcasts nothing');

select pg_temp.age_driver1(10);
select pg_temp.as_driver1_a();
select is(
  public.update_my_location(lat => -23.56, lng => -46.64) - 'updated_at',
  '{"driver_id": "d0000000-0000-0000-0000-00000000000a", "lat": -23.56, "lng": -46.64, "heading": null, "speed": null, "accuracy": null}'::jsonb,
  '10 seconds after the last accepted update, the next is accepted; omitted fields become null');
select throws_ok($$ select public.update_my_location(lat => 2, lng => 2) $$, 'PT429', null,
  'and the one after that is refused again');
select tests.reset_role();
select is((select count(*)::integer from realtime.messages where event = 'driver_location'), 2,
  'each accepted update is broadcast once');

-- The limit is per driver: driver 2 is not held back by driver 1.
select pg_temp.as_driver2_a();
select lives_ok($$ select public.update_my_location(lat => 10, lng => 20) $$,
  'another driver of the company is not affected by driver 1''s limit');
select tests.reset_role();

-- Validation: the constraints reject what the proxy would have refused with 400.
select pg_temp.age_driver1(60);
select pg_temp.as_driver1_a();
select throws_ok($$ select public.update_my_location(lat => 90.0001, lng => 0) $$, '23514', null, 'lat above 90 is refused');
select throws_ok($$ select public.update_my_location(lat => -90.5, lng => 0) $$, '23514', null, 'lat below -90 is refused');
select throws_ok($$ select public.update_my_location(lat => 0, lng => 180.5) $$, '23514', null, 'lng above 180 is refused');
select throws_ok($$ select public.update_my_location(lat => 0, lng => -181) $$, '23514', null, 'lng below -180 is refused');
select throws_ok($$ select public.update_my_location(lat => 0, lng => 0, heading => 360) $$, '23514', null, 'heading 360 is refused');
select throws_ok($$ select public.update_my_location(lat => 0, lng => 0, heading => -1) $$, '23514', null, 'a negative heading is refused');
select throws_ok($$ select public.update_my_location(lat => 0, lng => 0, speed => -0.1) $$, '23514', null, 'a negative speed is refused');
select throws_ok($$ select public.update_my_location(lat => 0, lng => 0, accuracy => -1) $$, '23514', null, 'a negative accuracy is refused');
select throws_ok($$ select public.update_my_location(lat => 'NaN', lng => 0) $$, '23514', null, 'lat NaN is refused');
select throws_ok($$ select public.update_my_location(lat => 0, lng => 0, speed => 'Infinity') $$, '23514', null, 'an infinite speed is refused');
select throws_ok($$ select public.update_my_location(lat => null, lng => 0) $$, '23502', null, 'a missing lat is refused');
select lives_ok($$ select public.update_my_location(lat => -90, lng => 180, heading => 359.99, speed => 0, accuracy => 0) $$,
  'the bounds themselves are accepted');
select tests.reset_role();

-- Who may write ------------------------------------------------------------------
select pg_temp.as_owner_a();
select throws_ok($$ select public.update_my_location(lat => 0, lng => 0) $$, 'PT403', null, 'an owner has no location to update');
select pg_temp.as_admin_a();
select throws_ok($$ select public.update_my_location(lat => 0, lng => 0) $$, 'PT403', null, 'an admin has no location to update');
select pg_temp.as_legacy_a();
select throws_ok($$ select public.update_my_location(lat => 0, lng => 0) $$, 'PT403', null, 'a legacy admin has no location to update');
select pg_temp.as_driver3_a();
select throws_ok($$ select public.update_my_location(lat => 0, lng => 0) $$, 'PT403', 'this driver is deactivated',
  'a deactivated driver may not update its location');
select tests.act_as_anon();
select throws_ok($$ select public.update_my_location(lat => 0, lng => 0) $$, '42501', null, 'anon may not call it');
select pg_temp.as_driver2_a();
select throws_ok(
  $$ insert into public.driver_locations (driver_id, company_id, lat, lng)
     values ('d0000000-0000-0000-0000-00000000000b', 'aaaaaaaa-0000-0000-0000-000000000000', 0, 0) $$,
  '42501', null, 'a driver cannot write the table directly, around the limit');
select throws_ok($$ update public.driver_locations set updated_at = now() - interval '1 hour' $$,
  '42501', null, 'nor move its own clock back');
select tests.reset_role();

-- Who may read -------------------------------------------------------------------
select pg_temp.as_driver_b();
select lives_ok($$ select public.update_my_location(lat => 1, lng => 2) $$, 'a driver of company B updates its position');
select tests.reset_role();
select is((select count(*)::integer from realtime.messages where topic = 'company:bbbbbbbb-0000-0000-0000-000000000000'), 1,
  'company B''s position goes to company B''s topic only');

select pg_temp.as_driver2_a();
select is(array(select driver_id::text from public.driver_locations), array['d0000000-0000-0000-0000-00000000000b'],
  'a driver sees only its own position');
select pg_temp.as_owner_b();
select is(array(select driver_id::text from public.driver_locations), array['d0000000-0000-0000-0000-0000000000b1'],
  'an owner sees only its company''s positions');

-- The managers' list -------------------------------------------------------------
select tests.reset_role();
-- Drivers ordered by name; driver 2 has no position yet once we remove it.
delete from public.driver_locations where driver_id = 'd0000000-0000-0000-0000-00000000000b';
select pg_temp.as_owner_a();
select is(
  public.list_driver_locations(),
  jsonb_build_object('items', jsonb_build_array(
    jsonb_build_object('driver_id', 'd0000000-0000-0000-0000-00000000000a', 'name', 'Ana', 'lat', -90, 'lng', 180,
      'heading', 359.99, 'speed', 0, 'accuracy', 0, 'updated_at', now()),
    jsonb_build_object('driver_id', 'd0000000-0000-0000-0000-00000000000b', 'name', 'Bruno', 'lat', null, 'lng', null,
      'heading', null, 'speed', null, 'accuracy', null, 'updated_at', null))),
  'an owner lists every active driver of its company, with nulls for one without a position');
select pg_temp.as_admin_a();
select is(jsonb_array_length(public.list_driver_locations() -> 'items'), 2, 'an admin lists them too');
select pg_temp.as_legacy_a();
select is(jsonb_array_length(public.list_driver_locations() -> 'items'), 2, 'a legacy admin lists them too');
select pg_temp.as_driver1_a();
select throws_ok($$ select public.list_driver_locations() $$, 'PT403', null, 'a driver may not list locations');
select pg_temp.as_owner_b();
select is(
  array(select i ->> 'driver_id' from jsonb_array_elements(public.list_driver_locations() -> 'items') i),
  array['d0000000-0000-0000-0000-0000000000b1'],
  'another company''s owner lists only its own drivers');
select tests.reset_role();

select * from finish();
rollback;
