-- No presence on company:{company_id}: Realtime presence carries whatever its
-- sender writes (a driver tracking `{driver_id: <another>}` showed that driver
-- online), so the product takes no identity from it and grants it to nobody.
-- Who is online comes from the positions the service accepted. Nobody reads or
-- tracks presence; a driver does not even join the company's topic; the
-- managers still read its broadcasts.
begin;
select plan(12);

create temp table t as select tests.create_tenant('presence-a') as a;
grant select on t to public;

-- One presence message and one broadcast on company a's topic, as Realtime stores them.
insert into realtime.messages (topic, extension, event, payload, private)
select 'company:' || (a ->> 'company_id'), extension, 'x', '{}'::jsonb, true
from t, (values ('presence'), ('broadcast')) v(extension);

create function pg_temp.reads(member text, extension text) returns boolean
language plpgsql as $$
declare
  wanted text := (select 'company:' || (a ->> 'company_id') from t);
  seen boolean;
begin
  perform tests.act_as_member(a, reads.member) from t;
  perform set_config('realtime.topic', wanted, true);
  seen := exists (select from realtime.messages m where m.topic = wanted and m.extension = reads.extension);
  perform tests.reset_role();
  return seen;
end;
$$;

-- Whether the member may track (insert a presence message) on company a's topic; rolled back either way.
create function pg_temp.tracks(member text) returns boolean
language plpgsql as $$
declare
  wanted text := (select 'company:' || (a ->> 'company_id') from t);
  allowed boolean;
begin
  perform tests.act_as_member(a, tracks.member) from t;
  perform set_config('realtime.topic', wanted, true);
  allowed := tests.may(format(
    $q$insert into realtime.messages (topic, extension, event, payload, private) values (%L, 'presence', 'track', '{}', true)$q$,
    wanted));
  perform tests.reset_role();
  return allowed;
end;
$$;
grant execute on all functions in schema pg_temp to public;

select is(pg_temp.tracks('driver'), false, 'track: a driver of the company may not announce itself (or anyone)');
select is(pg_temp.tracks('driver2'), false, 'track: nor the other driver');
select is(pg_temp.tracks('owner'), false, 'track: nor the owner');
select is(pg_temp.tracks('admin'), false, 'track: nor the admin');
select is(pg_temp.reads('owner', 'presence'), false, 'presence: the owner reads none');
select is(pg_temp.reads('admin', 'presence'), false, 'presence: nor the admin');
select is(pg_temp.reads('driver', 'presence'), false, 'presence: nor a driver');
select is(pg_temp.reads('driver', 'broadcast'), false, 'a driver reads nothing on the company topic');
select is(pg_temp.reads('owner', 'broadcast'), true, 'the owner reads the company''s broadcasts');
select is(pg_temp.reads('admin', 'broadcast'), true, 'so does the admin');
select is(pg_temp.reads('legacy_admin', 'broadcast'), true, 'and the legacy admin');
select is((select count(*)::int from pg_policies where schemaname = 'realtime' and tablename = 'messages'
           and (coalesce(qual, '') || coalesce(with_check, '')) like '%presence%'), 0,
  'no policy on realtime.messages mentions presence');

select * from finish();
rollback;
