-- Changing a delivery (PATCH /api/v1/deliveries/{id}, 11_lifecycle.sql): who may (owner, admin; 403 for the others,
-- 404 for a foreign company), in which states (contact fields until completed, the ends until picked up), what a
-- change writes (the fields, what the driver collects until pickup, a re-quoted price for an invoice delivery, the price kept for a paid Pix one, one
-- history row with each field's old and new value) and who is told (the company, the driver who has it).
begin;
select plan(21);

create temp table t as select tests.create_tenant('edit-a') as a, tests.create_tenant('edit-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;
insert into ids select 'pending', (tests.delivery_in(a, 'pending', 'invoice')).id from t;
insert into ids select 'accepted', (tests.delivery_in(a, 'accepted', 'invoice')).id from t;
insert into ids select 'trip', (tests.delivery_in(a, 'in_progress', 'invoice')).id from t;
insert into ids select 'done', (tests.delivery_in(a, 'completed', 'invoice')).id from t;
insert into ids select 'paid', (tests.delivery_in(a, 'pending', 'pix')).id from t;

create function pg_temp.id(name text) returns uuid language sql as $$ select id from ids where ids.name = id.name $$;
grant execute on function pg_temp.id(text) to public;

select tests.act_as_member(a, 'admin') from t;
select is((public.editable_delivery(pg_temp.id('pending'), true)).status, 'pending', 'a pending delivery may change, its ends too');
select is((public.editable_delivery(pg_temp.id('trip'), false)).status, 'in_progress', 'one in progress: its contact fields');
select throws_ok($$ select public.editable_delivery(pg_temp.id('trip'), true) $$, 'PT422',
  'the addresses of a delivery cannot change once it is picked up (it is in_progress)', 'not its ends once picked up');
select throws_ok($$ select public.editable_delivery(pg_temp.id('done'), false) $$, 'PT422',
  'a completed delivery cannot be changed', 'nothing once completed');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.editable_delivery(pg_temp.id('accepted'), false) $$, 'PT403', 'role driver may not do this', 'a driver may not');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok($$ select public.editable_delivery(pg_temp.id('pending'), false) $$, 'PT403', 'role admin may not do this', 'nor the older form''s admin');
select tests.act_as_member(b, 'owner') from t;
select throws_ok($$ select public.editable_delivery(pg_temp.id('pending'), false) $$, 'PT404', 'delivery not found', 'a foreign owner gets 404');
select tests.reset_role();
select is(has_function_privilege('authenticated', 'public.update_delivery(uuid, uuid, jsonb)', 'execute'), false,
  'the change itself is the edge''s (service role), after it measured the route');

delete from realtime.messages;
select tests.act_as_service_role();
select is(
  (select jsonb_build_object('name', u.recipient_name, 'notes', u.notes, 'phone', u.recipient_phone)
   from public.update_delivery(pg_temp.id('accepted'), (select (a ->> 'admin')::uuid from t),
     '{"recipient_name": "Maria Oliveira", "notes": null}') u),
  jsonb_build_object('name', 'Maria Oliveira', 'notes', null, 'phone', null), 'the fields sent change, null clears');
select tests.reset_role();
select is(
  (select changes -> 'recipient_name' from public.delivery_history where delivery_id = pg_temp.id('accepted') and trigger = 'update'),
  jsonb_build_object('from', null, 'to', 'Maria Oliveira'), 'the history row has the field''s old and new value');
select is(
  (select array_agg(m.topic order by m.topic) from realtime.messages m where m.event = 'delivery_updated'),
  (select array['company:' || (a ->> 'company_id'), 'driver:' || (a ->> 'driver_id')] from t),
  'the company and the driver who has it are told');

select tests.act_as_service_role();
select is(
  (select jsonb_build_object('distance', u.distance_m, 'price', u.price, 'dest', u.destination_address)
   from public.update_delivery(pg_temp.id('pending'), null,
     '{"origin_address": "Origin", "origin_lat": -23.55, "origin_lng": -46.63, "destination_address": " Rua Nova, 5 ",
       "destination_lat": -23.6, "destination_lng": -46.7, "distance_m": 10235, "duration_s": 900}') u),
  jsonb_build_object('distance', 10235, 'price', private.price_for((select (a ->> 'company_id')::uuid from t), 10235),
    'dest', 'Rua Nova, 5'),
  'new ends: measured again, an invoice delivery re-quoted');
select is(
  (public.update_delivery(pg_temp.id('paid'), null,
     '{"origin_address": "Origin", "origin_lat": -23.55, "origin_lng": -46.63, "destination_address": "Longe",
       "destination_lat": -23.9, "destination_lng": -46.9, "distance_m": 50000, "duration_s": 3600}')).price,
  12.50::numeric, 'a paid Pix delivery keeps its price');
select throws_ok($$ select public.update_delivery(pg_temp.id('trip'), null,
     '{"origin_address": "x", "origin_lat": 0, "origin_lng": 0, "destination_address": "y", "destination_lat": 0,
       "destination_lng": 0, "distance_m": 1, "duration_s": 1}') $$, 'PT422',
  'the addresses of a delivery cannot change once it is picked up (it is in_progress)', 'checked again under the lock');
select throws_ok($$ select public.update_delivery(pg_temp.id('pending'), null, '{"window_end": "2000-01-01T00:00:00Z"}') $$,
  'PT400', 'window_end must be in the future', 'a window that ended is refused');
select throws_ok($$ select public.update_delivery(pg_temp.id('done'), null, '{"notes": "late"}') $$,
  'PT422', 'a completed delivery cannot be changed', 'a completed one is not changed');
select tests.reset_role();
select is((select count(*)::int from public.delivery_history where delivery_id = pg_temp.id('pending') and trigger = 'update'),
  1, 'one history row per change');

-- What the driver collects at the door, until pickup.
select tests.act_as_service_role();
select is((public.update_delivery(pg_temp.id('accepted'), null,
    '{"collect": {"amount": 57.5, "method": "cash", "change_for": 100}}')).collect,
  row(57.5, 'cash', 100, 42.5)::public.delivery_collect, 'collect is set before pickup');
select is((public.update_delivery(pg_temp.id('accepted'), null, '{"collect": null}')).collect, null, 'and removed with null');
select throws_ok($$ select public.update_delivery(pg_temp.id('accepted'), null,
    '{"collect": {"amount": 10, "method": "card", "change_for": 20}}') $$, 'PT400',
  'collect.change_for is the cash note the recipient pays with: cash only, at least collect.amount',
  'checked as on create');
select throws_ok($$ select public.update_delivery(pg_temp.id('trip'), null, '{"collect": {"amount": 10, "method": "cash"}}') $$,
  'PT422', 'what a delivery collects cannot change once it is picked up (it is in_progress)', 'not once picked up');

select * from finish();
rollback;
