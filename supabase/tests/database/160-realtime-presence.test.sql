-- Presence on company:{company_id} (the panel's "who is online"): the company's
-- members read it, only its active drivers track in it, and another company's
-- users do neither.
begin;
select plan(16);

create temp table t as select tests.create_tenant('presence-a') as a, tests.create_tenant('presence-b') as b;
grant select on t to public;

-- One presence message on company a's topic, as Realtime stores a track.
insert into realtime.messages (topic, extension, event, payload, private)
select 'company:' || (a ->> 'company_id'), 'presence', 'presence', '{}'::jsonb, true from t;

create function pg_temp.reads_presence(tenant text, member text) returns boolean
language plpgsql as $$
declare
  wanted text := (select 'company:' || (a ->> 'company_id') from t);
  seen boolean;
begin
  perform tests.act_as_member(case reads_presence.tenant when 'a' then a else b end, reads_presence.member) from t;
  perform set_config('realtime.topic', wanted, true);
  seen := exists (select from realtime.messages m where m.topic = wanted and m.extension = 'presence');
  perform tests.reset_role();
  return seen;
end;
$$;

-- Whether the member may track (insert a presence message) on company a's topic; rolled back either way.
create function pg_temp.tracks(tenant text, member text) returns boolean
language plpgsql as $$
declare
  wanted text := (select 'company:' || (a ->> 'company_id') from t);
  allowed boolean := true;
begin
  perform tests.act_as_member(case tracks.tenant when 'a' then a else b end, tracks.member) from t;
  perform set_config('realtime.topic', wanted, true);
  begin
    insert into realtime.messages (topic, extension, event, payload, private) values (wanted, 'presence', 'track', '{}', true);
    raise exception using errcode = 'P0001', message = 'undo';
  exception
    when insufficient_privilege then allowed := false;
    when raise_exception then null;
  end;
  perform tests.reset_role();
  return allowed;
end;
$$;
grant execute on all functions in schema pg_temp to public;

select is(pg_temp.reads_presence('a', 'owner'), true, 'presence: the owner reads it');
select is(pg_temp.reads_presence('a', 'admin'), true, 'presence: the admin reads it');
select is(pg_temp.reads_presence('a', 'legacy_admin'), true, 'presence: the legacy admin reads it');
select is(pg_temp.reads_presence('a', 'driver'), true, 'presence: a driver of the company reads it (to join and see colleagues)');
select is(pg_temp.reads_presence('b', 'owner'), false, 'presence: another company''s owner does not');
select is(pg_temp.reads_presence('b', 'driver'), false, 'presence: another company''s driver does not');

select is(pg_temp.tracks('a', 'driver'), true, 'track: a driver of the company tracks itself');
select is(pg_temp.tracks('a', 'driver2'), true, 'track: so does the other driver');
select is(pg_temp.tracks('a', 'owner'), false, 'track: the owner does not (only drivers are "online")');
select is(pg_temp.tracks('a', 'admin'), false, 'track: nor the admin');
select is(pg_temp.tracks('a', 'legacy_admin'), false, 'track: nor the legacy admin');
select is(pg_temp.tracks('b', 'driver'), false, 'track: another company''s driver does not');
update public.drivers set active = false where id = (select (a ->> 'driver_id')::uuid from t);
select is(pg_temp.tracks('a', 'driver'), false, 'track: not once the driver is deactivated');
update public.drivers set active = true where id = (select (a ->> 'driver_id')::uuid from t);

-- Presence grants nothing on broadcasts: a driver still reads no company broadcast.
insert into realtime.messages (topic, extension, event, payload, private)
select 'company:' || (a ->> 'company_id'), 'broadcast', 'delivery_updated', '{}'::jsonb, true from t;
create function pg_temp.reads_broadcast(member text) returns boolean
language plpgsql as $$
declare
  wanted text := (select 'company:' || (a ->> 'company_id') from t);
  seen boolean;
begin
  perform tests.act_as_member(a, reads_broadcast.member) from t;
  perform set_config('realtime.topic', wanted, true);
  seen := exists (select from realtime.messages m where m.topic = wanted and m.extension = 'broadcast');
  perform tests.reset_role();
  return seen;
end;
$$;
grant execute on all functions in schema pg_temp to public;
select is(pg_temp.reads_broadcast('driver'), false, 'a driver reads presence, not the company''s broadcasts');
select is(pg_temp.reads_broadcast('owner'), true, 'the owner reads both');
select is((select count(*)::int from pg_policies where schemaname = 'realtime' and tablename = 'messages'
           and policyname like '%presence%'), 2,
  'two presence policies on realtime.messages: presence read, presence track');

select * from finish();
rollback;
