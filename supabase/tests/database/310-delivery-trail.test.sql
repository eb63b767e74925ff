-- The trail of a delivery in progress: accepted positions only, only while in
-- progress, the newest 500 kept, read by the company's managers only.
begin;
select plan(20);

create temp table t as select tests.create_tenant('trail-a') as a, tests.create_tenant('trail-b') as b;
grant select on t to public;

-- Driver 1 of tenant a sends a position after moving its last one 10 s back.
create function pg_temp.driver_a_moves(lat double precision, lng double precision) returns void
language plpgsql as $$
begin
  perform tests.reset_role();
  update public.driver_locations set updated_at = updated_at - interval '10 seconds'
  where driver_id = (select (a ->> 'driver_id')::uuid from t);
  perform tests.act_as_member(a, 'driver') from t;
  perform to_jsonb(public.update_my_location(lat => lat, lng => lng));
  perform tests.reset_role();
end;
$$;
grant execute on all functions in schema pg_temp to public;

create function pg_temp.trail(delivery uuid) returns table (seq integer, lat double precision, lng double precision)
language sql as $$ select t.seq, t.lat, t.lng from public.delivery_trail_points t where t.delivery_id = delivery order by t.seq $$;

create temp table ids as select (tests.delivery_in(a, 'completed', 'invoice')).id as done, null::uuid as running from t;
grant select on ids to public;

select pg_temp.driver_a_moves(1, 1);
select is((select count(*)::integer from public.delivery_trail_points p where p.company_id in (select (x ->> 'company_id')::uuid from t, lateral (values (a), (b)) v (x))), 0,
  'with no delivery in progress, a position adds no trail point');

update ids set running = (select (tests.delivery_in(a, 'in_progress', 'invoice')).id from t);
select pg_temp.driver_a_moves(2, 2);
select results_eq($$ select * from pg_temp.trail((select running from ids)) $$, $$ values (1, 2::float8, 2::float8) $$,
  'an accepted position becomes point 1 of the delivery in progress');
select is((select count(*)::integer from public.delivery_trail_points where delivery_id = (select done from ids)), 0,
  'a completed delivery of the same driver gets no point');
select is(
  (select recorded_at from public.delivery_trail_points where delivery_id = (select running from ids)),
  (select updated_at from public.driver_locations where driver_id = (select (a ->> 'driver_id')::uuid from t)),
  'the point carries the time the position was accepted');

select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.update_my_location(lat => 3, lng => 3)) $$, 'PT429', null, 'a refused position');
select tests.reset_role();
select is((select count(*)::integer from public.delivery_trail_points p where p.company_id in (select (x ->> 'company_id')::uuid from t, lateral (values (a), (b)) v (x))), 1, 'adds no point');

select pg_temp.driver_a_moves(4, 4);
select results_eq($$ select * from pg_temp.trail((select running from ids)) $$,
  $$ values (1, 2::float8, 2::float8), (2, 4::float8, 4::float8) $$, 'the next accepted position is point 2');

-- Fill the trail to its bound, then add one more.
insert into public.delivery_trail_points (delivery_id, seq, company_id, lat, lng, recorded_at)
select (select running from ids), s, (select (a ->> 'company_id')::uuid from t), 5, 5, now() from generate_series(3, 500) s;
select pg_temp.driver_a_moves(6, 6);
select is((select count(*)::integer from public.delivery_trail_points where delivery_id = (select running from ids)), 500,
  'a full trail stays at 500 points');
select is((select min(seq) from public.delivery_trail_points where delivery_id = (select running from ids)), 2,
  'the oldest point made way');
select results_eq($$ select * from pg_temp.trail((select running from ids)) order by seq desc limit 1 $$,
  $$ values (501, 6::float8, 6::float8) $$, 'for the newest');

-- A driver of another company moving touches nothing of tenant a.
select tests.act_as_member(b, 'driver') from t;
select lives_ok($$ select to_jsonb(public.update_my_location(lat => 7, lng => 7)) $$, 'a driver of company B sends a position');
select tests.reset_role();
select is((select count(*)::integer from public.delivery_trail_points p where p.company_id in (select (x ->> 'company_id')::uuid from t, lateral (values (a), (b)) v (x))), 500, 'and no trail changes');

-- Reading ------------------------------------------------------------------------
select tests.act_as_member(a, 'owner') from t;
select is(
  (select jsonb_build_object('n', jsonb_array_length(r -> 'points'), 'first', (r -> 'points' -> 0) - 'recorded_at',
     'last', (r -> 'points' -> -1) - 'recorded_at', 'id', r ->> 'delivery_id')
   from to_jsonb(public.get_delivery_trail((select running from ids))) r),
  jsonb_build_object('n', 500, 'first', '{"lat": 4, "lng": 4}'::jsonb, 'last', '{"lat": 6, "lng": 6}'::jsonb,
    'id', (select running from ids)::text),
  'an owner reads the trail, oldest point first');
select is(jsonb_array_length(to_jsonb(public.get_delivery_trail((select done from ids))) -> 'points'), 0,
  'a delivery without a trail has no points');
select tests.act_as_member(a, 'admin') from t;
select is(jsonb_array_length(to_jsonb(public.get_delivery_trail((select running from ids))) -> 'points'), 500, 'an admin reads it');
select tests.act_as_member(a, 'legacy_admin') from t;
select is(jsonb_array_length(to_jsonb(public.get_delivery_trail((select running from ids))) -> 'points'), 500, 'a legacy admin reads it');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.get_delivery_trail((select running from ids))) $$, 'PT403', null, 'a driver may not');
select is((select count(*)::integer from public.delivery_trail_points), 0, 'nor select the table');
select tests.act_as_member(b, 'owner') from t;
select throws_ok($$ select to_jsonb(public.get_delivery_trail((select running from ids))) $$, 'PT404', 'delivery not found',
  'another company''s owner gets 404');
select is((select count(*)::integer from public.delivery_trail_points), 0, 'and selects none of its points');
select tests.reset_role();

select * from finish();
rollback;
