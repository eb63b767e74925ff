-- Delivery windows: validated on creation; a delivery whose window opens more than an hour from now is
-- neither shown, announced (delivery_available) nor acceptable to drivers until an hour before it opens,
-- when the pass (private.announce_open_windows) announces it; managers see and may assign it all along;
-- `late` once the window has ended undelivered, and the list's late filter.
begin;
select plan(32);

create temp table t as select tests.create_tenant('win-a') as a, tests.create_tenant('win-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;

-- A delivery created as the edge creates it (the service role): its id, or the error. Back to the superuser.
create function pg_temp.new_delivery(window_start timestamptz, window_end timestamptz) returns text
language plpgsql as $$
declare
  tenant jsonb := (select a from t);
  id text;
begin
  perform tests.act_as_service_role();
  id := to_jsonb(public.create_delivery(gen_random_uuid(), (tenant ->> 'company_id')::uuid, (tenant ->> 'owner')::uuid,
    'invoice', 'Origin', -23.55, -46.63, 'Destination', -23.56, -46.64, 1500, 300,
    window_start => new_delivery.window_start, window_end => new_delivery.window_end)) ->> 'id';
  perform tests.reset_role();
  return id;
exception
  when others then
    perform tests.reset_role();
    return sqlstate || ': ' || sqlerrm;
end;
$$;

-- The driver topics' delivery_available messages since the last call, by delivery name; then deleted.
create function pg_temp.offered() returns text[]
language plpgsql as $$
declare
  lines text[];
begin
  select coalesce(array_agg(coalesce(i.name, m.payload ->> 'id') || ' ' || m.topic order by i.name, m.topic), '{}') into lines
  from realtime.messages m left join ids i on i.id::text = m.payload ->> 'id'
  where m.event = 'delivery_available';
  delete from realtime.messages;
  return lines;
end;
$$;

create function pg_temp.sorted(lines text[]) returns text[]
language sql as $$ select array_agg(l order by l) from unnest(lines) l $$;

-- Validation ---------------------------------------------------------------------

select is(pg_temp.new_delivery(now() - interval '2 hours', now() - interval '1 hour'), 'PT400: window_end must be in the future',
  'a window that already ended is refused');
select is(pg_temp.new_delivery(now() + interval '3 hours', now() + interval '2 hours'), 'PT400: window_start must be before window_end',
  'a window that ends before it starts is refused');
select is(pg_temp.new_delivery(now() + interval '2 hours', now() + interval '2 hours'), 'PT400: window_start must be before window_end',
  'a window must last');
select ok(pg_temp.new_delivery(null, now() + interval '1 hour') ~ '^[0-9a-f-]{36}$', 'a window may give only its end');
select ok(pg_temp.new_delivery(now() - interval '1 hour', null) ~ '^[0-9a-f-]{36}$', 'or only its start');
select is((select count(*)::int from public.deliveries d, t where d.company_id = (a ->> 'company_id')::uuid), 2,
  'refused windows create nothing');

-- Not offered before an hour ahead of the window -------------------------------------------

select pg_temp.offered();
insert into ids values ('far', pg_temp.new_delivery(now() + interval '3 hours', now() + interval '5 hours')::uuid);
insert into ids values ('near', pg_temp.new_delivery(now() + interval '50 minutes', now() + interval '3 hours')::uuid);
insert into ids values ('open', pg_temp.new_delivery(null, null)::uuid);
select is(pg_temp.offered(), pg_temp.sorted(array['near driver:' || (select a ->> 'driver_id' from t),
  'near driver:' || (select a ->> 'driver2_id' from t), 'open driver:' || (select a ->> 'driver_id' from t),
  'open driver:' || (select a ->> 'driver2_id' from t)]),
  'drivers are offered the deliveries whose window is within the hour (or that have none), not the far one');

select is((select private.dispatchable(d) from public.deliveries d where id = (select id from ids where name = 'far')), false,
  'a delivery whose window opens in 3 hours is not dispatchable');
select is((select private.dispatchable(d) from public.deliveries d where id = (select id from ids where name = 'near')), true,
  'one whose window opens within the hour is');
select is((select private.dispatchable(d) from public.deliveries d where id = (select id from ids where name = 'open')), true,
  'one without a window is');

select tests.act_as_member(a, 'driver') from t;
select is(array(select name from ids where id in (select d.id from public.deliveries d) order by name), array['near', 'open'],
  'a driver does not see the far delivery');
select is(array(select i.name from unnest((public.list_deliveries()).items) d join ids i on i.id = d.id order by i.name),
  array['near', 'open'], 'nor in its list');
select throws_ok($$ select public.get_delivery((select id from ids where name = 'far')) $$, 'PT404', 'delivery not found',
  'reading it is 404 to a driver');
select throws_ok($$ select public.accept_delivery((select id from ids where name = 'far')) $$, 'PT404', 'delivery not found',
  'accepting it is 404 to a driver');
select tests.act_as_member(a, 'admin') from t;
select is(array(select i.name from unnest((public.list_deliveries()).items) d join ids i on i.id = d.id order by i.name),
  array['far', 'near', 'open'], 'managers see every delivery, the far one too');

-- The pass: nothing to announce yet; once the window nears, the far delivery is announced once.
select tests.reset_role();
select is(private.announce_open_windows(), 0, 'the first pass finds nothing due');
select is(pg_temp.offered(), '{}'::text[], 'and announces nothing');
-- (now() stands still within this test's transaction: the last pass is put a couple of minutes back.)
update public.deliveries set window_start = now() + interval '59 minutes' where id = (select id from ids where name = 'far');
update private.window_announcements set announced_through = now() - interval '2 minutes';
select is(private.announce_open_windows(), 1, 'once the window is within the hour, the pass announces the delivery');
select is(pg_temp.offered(), pg_temp.sorted(array['far driver:' || (select a ->> 'driver_id' from t),
  'far driver:' || (select a ->> 'driver2_id' from t)]),
  'to every active driver of its company');
select is(private.announce_open_windows(), 0, 'a later pass does not announce it again');
select tests.act_as_member(a, 'driver') from t;
select is((public.accept_delivery((select id from ids where name = 'far'))).status, 'accepted', 'now a driver may take it');

-- A pass that did not run is made up by the next: it looks back to where the last one stopped.
select tests.reset_role();
insert into ids values ('missed', pg_temp.new_delivery(now() + interval '4 hours', now() + interval '6 hours')::uuid);
select pg_temp.offered();
update private.window_announcements set announced_through = now() - interval '3 hours';
update public.deliveries set window_start = now() - interval '30 minutes' where id = (select id from ids where name = 'missed');
select private.announce_open_windows();
select ok(pg_temp.offered() @> array['missed driver:' || (select a ->> 'driver_id' from t)],
  'a window that came near while no pass ran is announced by the next');

-- A manager may give it to a driver before its window nears.
insert into ids values ('assigned', pg_temp.new_delivery(now() + interval '1 day', now() + interval '2 days')::uuid);
select tests.act_as_member(a, 'owner') from t;
select is((public.assign_delivery((select id from ids where name = 'assigned'), (select (a ->> 'driver_id')::uuid from t))).status,
  'accepted', 'an owner assigns a delivery whose window is a day away');

-- Late -----------------------------------------------------------------------------

select tests.reset_role();
insert into ids select 'late-pending', (tests.delivery_in(a, 'pending', 'invoice')).id from t;
insert into ids select 'late-progress', (tests.delivery_in(a, 'in_progress', 'invoice')).id from t;
insert into ids select 'late-completed', (tests.delivery_in(a, 'completed', 'invoice')).id from t;
insert into ids select 'late-cancelled', (tests.delivery_in(a, 'cancelled', 'invoice')).id from t;
insert into ids select 'on-time', (tests.delivery_in(a, 'pending', 'invoice')).id from t;
update public.deliveries set window_end = now() - interval '1 minute'
where id in (select id from ids where name like 'late-%');
update public.deliveries set window_end = now() + interval '1 hour' where id = (select id from ids where name = 'on-time');

select tests.act_as_member(a, 'admin') from t;
select is((public.get_delivery((select id from ids where name = 'late-pending'))).late, true, 'pending past its window: late');
select is((public.get_delivery((select id from ids where name = 'late-progress'))).late, true, 'in progress past its window: late');
select is((public.get_delivery((select id from ids where name = 'late-completed'))).late, false, 'completed: never late');
select is((public.get_delivery((select id from ids where name = 'late-cancelled'))).late, false,
  'cancelled: not late (it will not be delivered)');
select is((public.get_delivery((select id from ids where name = 'on-time'))).late, false, 'before its window ends: not late');
select is((public.get_delivery((select id from ids where name = 'open'))).late, false, 'without a window: never late');
select is(array(select i.name from unnest((public.list_deliveries(late => true)).items) d join ids i on i.id = d.id order by i.name),
  array['late-pending', 'late-progress'], 'late=true lists exactly the late ones');
select ok(not exists (select from unnest((public.list_deliveries(late => false, page_limit => 100)).items) d
  join ids i on i.id = d.id where i.name in ('late-pending', 'late-progress')), 'late=false leaves them out');
select tests.act_as_member(b, 'owner') from t;
select is((public.list_deliveries(late => true)).items, '{}'::public.delivery[], 'another company lists none of them');

select * from finish();
rollback;
