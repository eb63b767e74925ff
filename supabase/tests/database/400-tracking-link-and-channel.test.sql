-- Tracking: each delivery's token, the public view it opens (what it shows and
-- when), the rate limit of lookups, the tracking topic anon may join, the
-- broadcasts on it, and the 30-second / 100-metre rule of the live ETA.
begin;
select plan(54);

create temp table t as select tests.create_tenant('trk-a') as a, tests.create_tenant('trk-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;
insert into ids select 'pending', (tests.delivery_in(a, 'pending', 'invoice')).id from t;
insert into ids select 'moving', (tests.delivery_in(a, 'in_progress', 'invoice')).id from t;
insert into ids select 'done', (tests.delivery_in(a, 'completed', 'invoice')).id from t;
insert into ids select 'other', (tests.delivery_in(b, 'in_progress', 'invoice')).id from t;

-- The tokens, read once as the superuser (nobody else may read them).
create temp table tokens as
  select ids.name, tr.token from ids join private.delivery_tracking tr on tr.delivery_id = ids.id;
grant select on tokens to public;
create function pg_temp.token(name text) returns text
language sql as $$ select tokens.token from tokens where tokens.name = token.name $$;
create function pg_temp.topic(name text) returns text
language sql as $$ select private.tracking_topic(sha256(convert_to(pg_temp.token(topic.name), 'UTF8'))) $$;
create function pg_temp.track(token text, client text default 'pgtap') returns jsonb
language plpgsql as $$
declare
  answer jsonb;
begin
  perform tests.act_as_service_role();
  answer := public.track_delivery(track.token, track.client);
  perform tests.reset_role();
  return answer;
end;
$$;
create function pg_temp.refusal(client text) returns jsonb
language plpgsql as $$
declare
  detail text;
begin
  perform public.track_delivery('x', refusal.client);
  return null;
exception when sqlstate 'PT429' then
  get stacked diagnostics detail = pg_exception_detail;
  return detail::jsonb;
end;
$$;
-- Whether `claims` may read a message on `topic`, as Realtime checks a join.
create function pg_temp.reads(claims jsonb, topic text) returns boolean
language plpgsql as $$
declare
  seen boolean;
begin
  insert into realtime.messages (topic, extension, private, event, payload) values (reads.topic, 'broadcast', true, 'probe', '{}');
  perform tests.act_as(reads.claims);
  perform set_config('realtime.topic', reads.topic, true);
  seen := exists (select from realtime.messages m where m.topic = reads.topic);
  perform tests.reset_role();
  delete from realtime.messages m where m.event = 'probe';
  return seen;
end;
$$;
grant execute on all functions in schema pg_temp to public;

-- The token ----------------------------------------------------------------------

select ok((select bool_and(tr.token ~ '^[A-Za-z0-9_-]{22}$') from private.delivery_tracking tr
  where tr.delivery_id in (select id from ids)), 'every delivery is born with a 22-character base64url token (128 bits)');
select ok((select bool_and(tr.token_hash = sha256(convert_to(tr.token, 'UTF8'))) from private.delivery_tracking tr),
  'stored beside its SHA-256');
select is((select count(distinct tr.token)::integer from private.delivery_tracking tr where tr.delivery_id in (select id from ids)), 4,
  'one token each, all different');
select is((select relrowsecurity from pg_class where oid = 'private.delivery_tracking'::regclass), true, 'behind RLS');

select tests.act_as_member(a, 'owner') from t;
select is(to_jsonb(public.get_delivery((select id from ids where name = 'pending'))) ->> 'tracking_token', pg_temp.token('pending'),
  'the owner sees the token');
select is(to_jsonb(public.get_delivery((select id from ids where name = 'pending'))) ->> 'tracking_url', '/track/' || pg_temp.token('pending'),
  'and the link');
select tests.act_as_member(a, 'admin') from t;
select isnt((to_jsonb(public.list_deliveries()) -> 'items' -> 0) ->> 'tracking_token', null, 'an admin sees it in the list');
select tests.act_as_member(a, 'legacy_admin') from t;
select is(to_jsonb(public.get_delivery((select id from ids where name = 'pending'))) ->> 'tracking_token', pg_temp.token('pending'),
  'a legacy admin too');
select tests.act_as_member(a, 'driver') from t;
select is(to_jsonb(public.get_delivery((select id from ids where name = 'moving'))) ->> 'tracking_token', null, 'its driver does not');
select is(to_jsonb(public.get_delivery((select id from ids where name = 'pending'))) ->> 'tracking_url', null,
  'nor does a driver offered a pending delivery');
select throws_ok($$ select * from private.delivery_tracking $$, '42501', null, 'nor may a driver read the tokens');
select throws_ok($$ select public.track_delivery('x', 'me') $$, '42501', null, 'a user may not call the lookup');
select tests.act_as_anon();
select throws_ok($$ select public.track_delivery('x', 'me') $$, '42501', null, 'nor may anon');
select tests.reset_role();

-- What the link shows ------------------------------------------------------------

select is(pg_temp.track('no-such-token'), null, 'a wrong token finds nothing');
select is(pg_temp.track(pg_temp.token('pending') || 'x'), null, 'nor does a token with one character more');
select is(
  (select array_agg(k order by k) from jsonb_object_keys(pg_temp.track(pg_temp.token('moving'))) k),
  array['accepted_at', 'cancelled_at', 'completed_at', 'created_at', 'destination', 'driver', 'eta_at', 'eta_refreshed_at',
    'handover_code', 'position', 'remaining_m', 'started_at', 'status', 'stops_before'],
  'the view has only status, driver, drop-off point, position, ETA, the stops before it in a route, the timeline and the handover code: no price, no addresses, no recipient');
select is(pg_temp.track(pg_temp.token('moving')) -> 'driver', '{"first_name": "trk-a", "vehicle": {"type": "car", "plate": null}}',
  'the driver by first name only, with the vehicle');
select ok(pg_temp.track(pg_temp.token('done')) ? 'proof_photo_path', 'a completed delivery''s lookup names its proof photo (for the edge to sign)');
select ok(not (private.tracking_json_of((select id from ids where name = 'done')) ? 'proof_photo_path'),
  'never in what is broadcast');
select is(pg_temp.track(pg_temp.token('pending')) -> 'driver', 'null', 'a pending delivery has no driver yet');
select is(pg_temp.track(pg_temp.token('moving')) -> 'position', 'null', 'no position before the driver sends one');

-- Driver 1 of A sends a position: it has the delivery in progress, and a completed one.
select tests.act_as_member(a, 'driver') from t;
select to_jsonb(public.update_my_location(-23.5, -46.6, 90));
select tests.reset_role();
select is((pg_temp.track(pg_temp.token('moving')) -> 'position') - 'updated_at', '{"lat": -23.5, "lng": -46.6, "heading": 90}',
  'in progress: the driver''s last position');
select is(pg_temp.track(pg_temp.token('done')) -> 'position', 'null', 'completed: no position');
select is(pg_temp.track(pg_temp.token('done')) ->> 'status', 'completed', 'but the status');
update public.deliveries set started_at = now() + interval '1 second' where id = (select id from ids where name = 'moving');
select is(pg_temp.track(pg_temp.token('moving')) -> 'position', 'null', 'a position from before the pick-up is never shown');
update public.deliveries set started_at = now() where id = (select id from ids where name = 'moving');

-- The broadcasts on the tracking topic -----------------------------------------------

delete from realtime.messages;
update public.driver_locations set updated_at = now() - interval '11 seconds' where driver_id = (select (a ->> 'driver_id')::uuid from t);
select tests.act_as_member(a, 'driver') from t;
select to_jsonb(public.update_my_location(-23.51, -46.61));
select tests.reset_role();
select is((select array_agg(m.topic || ' ' || m.event) from realtime.messages m where m.topic like 'track:%'),
  array[pg_temp.topic('moving') || ' driver_location'],
  'an accepted position goes to the tracking topic of the delivery in progress only');
select is((select jsonb_build_object('position', m.payload - 'updated_at' - 'id', 'message_id', m.payload ->> 'id' = m.id::text)
           from realtime.messages m where m.topic like 'track:%'),
  '{"position": {"lat": -23.51, "lng": -46.61, "heading": null}, "message_id": true}',
  'the position and nothing else (but the message''s id, which realtime.send adds)');
select ok((select bool_and(m.private) from realtime.messages m), 'as a private message');

-- Who may join a tracking topic --------------------------------------------------------

select ok(pg_temp.reads('{"role": "anon"}', pg_temp.topic('moving')), 'anon joins the topic of a delivery in progress');
select ok(not pg_temp.reads('{"role": "anon"}', pg_temp.topic('pending')), 'not of a pending one');
select ok(not pg_temp.reads('{"role": "anon"}', pg_temp.topic('done')), 'not of a completed one');
select ok(not pg_temp.reads('{"role": "anon"}', 'track:' || repeat('0', 64)), 'not of a hash no token has');
select ok(not pg_temp.reads('{"role": "anon"}', 'track:zz'), 'not of a malformed topic');
select ok(not pg_temp.reads('{"role": "anon"}', 'company:' || (select a ->> 'company_id' from t)), 'nor a company topic');

-- The rate limit -------------------------------------------------------------------------

select tests.act_as_service_role();
select public.track_delivery('x', 'client-1') from generate_series(1, 59);
select is(public.track_delivery(pg_temp.token('moving'), 'client-1') ->> 'status', 'in_progress', 'the 60th lookup of a minute is answered');
select is(pg_temp.refusal('client-1'), '{"retry_after": 60}', 'the 61st is refused (PT429) with the seconds to wait');
select is(public.track_delivery(pg_temp.token('moving'), 'client-2') ->> 'status', 'in_progress', 'another client is not');
select tests.reset_role();
update private.tracking_requests set window_started_at = now() - interval '61 seconds' where client = 'client-1';
select tests.act_as_service_role();
select is(public.track_delivery('x', 'client-1'), null, 'a minute later the client may look up again');
select tests.reset_role();

-- The live ETA: at most one request per 30 s per delivery, and only after 100 m ---------

-- Driver 1 of A sends a position as the API does (update_my_location_with_eta), as if 10 s had passed.
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

select is((select eta_requested_at from public.deliveries where id = (select id from ids where name = 'moving')), null,
  'update_my_location alone claims no refresh');
select is(pg_temp.send(-23.51, -46.61), (select jsonb_build_object(
    'location', jsonb_build_object('driver_id', t.a ->> 'driver_id', 'lat', -23.51, 'lng', -46.61, 'heading', null,
      'speed', null, 'accuracy', null, 'updated_at', now()),
    'eta_due', jsonb_build_array(jsonb_build_object('delivery_id', d.id, 'from', '{"lat": -23.51, "lng": -46.61}'::jsonb,
      'destination', jsonb_build_object('lat', d.destination_lat, 'lng', d.destination_lng))))
  from t, public.deliveries d where d.id = (select id from ids where name = 'moving')),
  'a position sent as the API sends it is stored and claims a refresh of the delivery in progress (not the completed one), in one statement');
select is((select eta_requested_at from public.deliveries where id = (select id from ids where name = 'moving')), now(),
  'the claim is stamped on the delivery');
select is(pg_temp.send(-23.56, -46.65) -> 'eta_due', '[]', 'a second position within 30 s claims nothing, however far');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.update_my_location_with_eta(0, 0) $$, 'PT429', null,
  'within 10 s of the last it is refused as update_my_location refuses it, claiming nothing');
select throws_ok($$ select private.claim_eta_refreshes((select id from public.drivers limit 1)) $$, '42501', null,
  'a driver may not claim refreshes itself');
select tests.act_as_service_role();
select throws_ok($$ select private.claim_eta_refreshes(gen_random_uuid()) $$, '42501', null, 'nor may the service role');
select ok(public.record_eta((select id from ids where name = 'moving'), -23.51, -46.61, 1234.4, 300), 'the measure is stored');
select tests.reset_role();
select is((select array[remaining_m::text, (eta_at = now() + interval '300 seconds')::text, (eta_refreshed_at = now())::text]
  from public.deliveries where id = (select id from ids where name = 'moving')), array['1234', 'true', 'true'],
  'remaining metres, ETA and when');
select ok((select count(*) = 1 from realtime.messages where topic = 'company:' || (select a ->> 'company_id' from t)
  and event = 'delivery_updated' and payload ->> 'remaining_m' = '1234'), 'the company hears of the new ETA');
select ok((select count(*) = 1 from realtime.messages where topic = pg_temp.topic('moving')
  and event = 'tracking_updated' and payload ->> 'remaining_m' = '1234'), 'so does the tracking topic');

update public.deliveries set eta_requested_at = now() - interval '31 seconds' where id = (select id from ids where name = 'moving');
select is(pg_temp.send(-23.5105, -46.61) -> 'eta_due', '[]', '30 s later, a driver who moved 55 m claims nothing');
select is(pg_temp.send(-23.512, -46.61) -> 'eta_due' -> 0 -> 'from', '{"lat": -23.512, "lng": -46.61}',
  'one who moved 220 m claims a refresh from there');

update public.deliveries set status = 'completed', completed_at = now() where id = (select id from ids where name = 'moving');
select tests.act_as_service_role();
select ok(not public.record_eta((select id from ids where name = 'moving'), 0, 0, 1, 1), 'a delivery no longer in progress keeps its ETA');
select tests.reset_role();
update public.deliveries set eta_requested_at = now() - interval '31 seconds' where id = (select id from ids where name = 'moving');
select is(pg_temp.send(-23.52, -46.61) -> 'eta_due', '[]', 'with no delivery in progress, a driver claims nothing');
select is(pg_temp.track(pg_temp.token('moving')) -> 'eta_at', 'null', 'and the link shows no ETA once it ended');

select * from finish();
rollback;
