-- A driver's day and the per-driver report (12_reports.sql): the figures of a driver with a completed (cash
-- collected), a failed and a returned delivery, moved through the state machine as the API moves them; time
-- online and distance from the day's positions; and who may read them, every role and a foreign company.
begin;
select plan(27);

create temp table t as select tests.create_tenant('day-a') as a, tests.create_tenant('day-b') as b;
create temp table ids (name text primary key, id uuid);
create temp table day as select (now() at time zone 'America/Sao_Paulo')::date as d,
  ((now() at time zone 'America/Sao_Paulo')::date::timestamp at time zone 'America/Sao_Paulo') as start;
grant all on t, ids, day to public;

create function pg_temp.new_delivery(driver text default 'driver_id', collect_amount numeric default null,
  collect_method text default null)
returns uuid language sql as $$
  select tests.create_delivery(a, driver_id => (a ->> new_delivery.driver)::uuid,
    collect_amount => new_delivery.collect_amount, collect_method => new_delivery.collect_method) from t
$$;
create function pg_temp.id(name text) returns uuid language sql as $$ select id from ids where ids.name = id.name $$;
create function pg_temp.driver(tenant text, member text default 'driver_id') returns uuid language sql
  as $$ select ((case tenant when 'a' then a else b end) ->> member)::uuid from t $$;
create function pg_temp.as_member(tenant text, member text) returns void language sql
  as $$ select tests.act_as_member(case tenant when 'a' then a else b end, member) from t $$;
create function pg_temp.day_of(driver uuid) returns jsonb language sql
  as $$ select to_jsonb(public.driver_day(driver, (select d from day))) $$;
create function pg_temp.outcome_of(tenant text, member text, call text) returns text language plpgsql as $$
declare result text;
begin
  perform pg_temp.as_member(tenant, member);
  result := tests.outcome(call);
  perform tests.reset_role();
  return result;
end $$;
grant execute on all functions in schema pg_temp to public;

-- Section: a day of completed, failed and returned deliveries

insert into ids values ('completed', pg_temp.new_delivery(collect_amount => 57.50, collect_method => 'cash')),
  ('failed', pg_temp.new_delivery()), ('returned', pg_temp.new_delivery()), ('open', pg_temp.new_delivery()),
  ('other', pg_temp.new_delivery('driver2_id'));
select pg_temp.as_member('a', 'driver');
select public.start_delivery(pg_temp.id(n)) from unnest(array['completed', 'failed', 'returned']) n;
select public.complete_delivery(pg_temp.id('completed'), collected_amount => 57.50, collected_method => 'cash');
select public.fail_delivery(pg_temp.id('failed'), 'recipient_absent');
select pg_temp.as_member('a', 'owner');
select public.recall_delivery(pg_temp.id('returned'), 'the customer cancelled');
select pg_temp.as_member('a', 'driver');
select public.return_delivery(pg_temp.id('returned'));
select pg_temp.as_member('a', 'driver2');
select public.start_delivery(pg_temp.id('other'));
select public.complete_delivery(pg_temp.id('other'));
select tests.reset_role();

-- Positions accepted while carrying deliveries: three minutes 5 apart (one sent for two deliveries at once, so
-- kept twice), then one after a 50-minute silence, and one of the day before.
insert into public.delivery_trail_points (delivery_id, seq, company_id, lat, lng, recorded_at)
select pg_temp.id(p.name), p.seq, pg_temp.driver('a', 'company_id'), p.lat, p.lng, (select start from day) + p.at
from (values ('completed', 1, -23.5500, -46.6300, interval '1 hour'),
  ('completed', 2, -23.5550, -46.6300, interval '1 hour 5 minutes'),
  ('returned', 1, -23.5550, -46.6300, interval '1 hour 5 minutes'),
  ('returned', 2, -23.5550, -46.6350, interval '1 hour 10 minutes'),
  ('returned', 3, -23.6000, -46.7000, interval '2 hours'),
  ('failed', 1, -23.0000, -46.0000, interval '-1 minute')) p(name, seq, lat, lng, at);

-- What the figures should be, computed here as the superuser (the private helpers are out of the members' reach).
create temp table expected as select
  round(private.distance_m(-23.55, -46.63, -23.555, -46.63) + private.distance_m(-23.555, -46.63, -23.555, -46.635))::integer
    as distance_m,
  (select sum(private.driver_credit(d.price, d.driver_share)) from public.deliveries d
   where d.id in (pg_temp.id('completed'), pg_temp.id('returned'))) as earnings,
  (select private.driver_credit(d.price, d.driver_share) from public.deliveries d where d.id = pg_temp.id('other'))
    as earnings2,
  (select count(*)::integer from public.wallet_entries w where w.delivery_id = pg_temp.id('returned')) as returned_credits,
  (select sum(w.amount) from public.wallet_entries w where w.company_id = pg_temp.driver('a', 'company_id')) as ledger,
  (select round(extract(epoch from d.completed_at - d.created_at) / 60, 1) from public.deliveries d
   where d.id = pg_temp.id('completed')) as minutes,
  (select round(extract(epoch from d.completed_at - d.created_at) / 60, 1) from public.deliveries d
   where d.id = pg_temp.id('other')) as minutes2;
grant select on expected to public;

select pg_temp.as_member('a', 'owner');
select is(pg_temp.day_of(pg_temp.driver('a')) - 'deliveries' - 'earnings' - 'distance_m',
  jsonb_build_object('date', (select d from day), 'driver_id', pg_temp.driver('a'), 'online_minutes', 10,
    'completed', 1, 'failed', 1, 'returned', 1, 'cash_collected', 57.50),
  'the day''s outcomes, the cash collected and the minutes between positions at most 10 minutes apart');
select is((pg_temp.day_of(pg_temp.driver('a')) ->> 'distance_m')::integer,
  (select distance_m from expected),
  'the distance walks the positions once each, and not across a silence');
select is((pg_temp.day_of(pg_temp.driver('a')) ->> 'earnings')::numeric, (select earnings from expected),
  'earnings: the completed and the returned delivery''s credits');
select is((select returned_credits from expected), 1,
  'the returned delivery is credited once');
select is((select array_agg(e ->> 'id' order by e ->> 'id') from jsonb_array_elements(pg_temp.day_of(pg_temp.driver('a')) -> 'deliveries') e),
  (select array_agg(x::text order by x::text) from unnest(array[pg_temp.id('completed'), pg_temp.id('failed'),
    pg_temp.id('returned'), pg_temp.id('open')]) x),
  'the deliveries of the day: accepted, completed, failed or returned that day, not another driver''s');
select is((select array_agg(e ->> 'status') from jsonb_array_elements(pg_temp.day_of(pg_temp.driver('a')) -> 'deliveries') e
  where e ->> 'id' = pg_temp.id('returned')::text), array['returned'], 'as the API shows a delivery');
select is(pg_temp.day_of(pg_temp.driver('a')) -> 'deliveries' -> 0 ->> 'tracking_url' is not null, true,
  'with the tracking link for a manager');
select is(to_jsonb(public.driver_day(pg_temp.driver('a'), (select d - 1 from day))) - 'date' - 'driver_id' - 'deliveries',
  '{"online_minutes": 0, "distance_m": 0, "completed": 0, "failed": 0, "returned": 0, "earnings": 0, "cash_collected": 0}'::jsonb,
  'the day before: nothing (a single position is no time online)');
select throws_ok($$ select public.driver_day(pg_temp.driver('a'), null) $$, 'PT400', null, 'a day is required');

-- Section: who may read a driver's day

select tests.reset_role();
select is(pg_temp.outcome_of('a', 'admin', format('select public.driver_day(%L, current_date)', pg_temp.driver('a'))), 'ok',
  'an admin reads a driver''s day');
select is(pg_temp.outcome_of('a', 'driver', format('select public.driver_day(%L, current_date)', pg_temp.driver('a'))), 'ok',
  'the driver reads their own');
select pg_temp.as_member('a', 'driver');
select is(pg_temp.day_of(pg_temp.driver('a')) -> 'deliveries' -> 0 ->> 'tracking_url', null, 'without the tracking link');
select tests.reset_role();
select is(pg_temp.outcome_of('a', 'driver2', format('select public.driver_day(%L, current_date)', pg_temp.driver('a'))), 'PT404',
  'another driver: 404');
select is(pg_temp.outcome_of('a', 'legacy_admin', format('select public.driver_day(%L, current_date)', pg_temp.driver('a'))),
  pg_temp.outcome_of('a', 'legacy_admin', format('select public.get_driver_cash(%L)', pg_temp.driver('a'))),
  'a legacy admin: refused as for the driver''s cash');
select isnt(pg_temp.outcome_of('a', 'legacy_admin', format('select public.driver_day(%L, current_date)', pg_temp.driver('a'))), 'ok',
  'a legacy admin is refused');
select is(pg_temp.outcome_of('b', 'owner', format('select public.driver_day(%L, current_date)', pg_temp.driver('a'))), 'PT404',
  'a foreign owner: 404');
select is(pg_temp.outcome_of('b', 'driver', format('select public.driver_day(%L, current_date)', pg_temp.driver('a'))), 'PT404',
  'a foreign driver: 404');
select is(pg_temp.outcome_of('a', 'owner', format('select public.driver_day(%L, current_date)', gen_random_uuid())), 'PT404',
  'no such driver: 404');

-- Section: the per-driver report

select pg_temp.as_member('a', 'owner');
select is((select jsonb_agg(to_jsonb(l) - 'driver_id' order by l.name)
  from unnest((public.report_drivers((select d from day), (select d from day))).items) l),
  jsonb_build_array(
    jsonb_build_object('name', 'day-a driver', 'completed', 1, 'failed', 1, 'on_time_rate', null,
      'avg_delivery_minutes', (select minutes from expected), 'earnings', (select earnings from expected)),
    jsonb_build_object('name', 'day-a driver2', 'completed', 1, 'failed', 0, 'on_time_rate', null,
      'avg_delivery_minutes', (select minutes2 from expected), 'earnings', (select earnings2 from expected))),
  'one line per driver of the company; earnings include the returned delivery''s credit');
select is((select sum((l).earnings) from unnest((public.report_drivers((select d from day), (select d from day))).items) l),
  (select ledger from expected),
  'the drivers'' earnings add up to the company''s ledger of the day');
select is(cardinality((public.report_drivers((select d - 3 from day), (select d - 1 from day))).items), 2,
  'days without deliveries: every driver still has a line');
select is((select sum((l).completed) from unnest((public.report_drivers((select d - 3 from day), (select d - 1 from day))).items) l), 0::bigint,
  'with nothing in it');
select throws_ok($$ select public.report_drivers(current_date, current_date - 1) $$, 'PT400', null, 'to before from: 400');
select tests.reset_role();
select is(pg_temp.outcome_of('a', 'admin', 'select public.report_drivers(current_date, current_date)'), 'ok', 'an admin reads it');
select isnt(pg_temp.outcome_of('a', 'driver', 'select public.report_drivers(current_date, current_date)'), 'ok', 'a driver may not');
select pg_temp.as_member('b', 'owner');
select is((select array_agg((l).name order by (l).name) from unnest((public.report_drivers((select d from day), (select d from day))).items) l),
  array['day-b driver', 'day-b driver2'], 'a foreign owner reads only its own drivers');
select tests.reset_role();

-- Section: a day reads only its driver's rows

-- Thousands of other drivers' deliveries; the day's query (as public.driver_day runs it) goes through the index of
-- the deliveries by driver, never a scan of the company's.
select count(tests.delivery_in(a, 'completed', 'invoice', 'driver2')) from t, generate_series(1, 3000);
analyze public.deliveries;
create function pg_temp.plan_of(query text) returns text language plpgsql as $$
declare line text; plan text := '';
begin
  for line in execute 'explain ' || query loop plan := plan || line || E'\n'; end loop;
  return plan;
end $$;
select matches(pg_temp.plan_of(format($$select d from public.deliveries d where d.driver_id = %L and d.company_id = %L
    and ((d.accepted_at >= %L and d.accepted_at < %L) or (d.completed_at >= %L and d.completed_at < %L)
      or (d.failed_at >= %L and d.failed_at < %L) or (d.returned_at >= %L and d.returned_at < %L))$$,
  pg_temp.driver('a'), pg_temp.driver('a', 'company_id'), x.s, x.e, x.s, x.e, x.s, x.e, x.s, x.e)),
  'Index.*deliveries_driver', 'the day''s deliveries are read through the index of the driver''s deliveries')
from (select start as s, start + interval '1 day' as e from day) x;

select * from finish();
rollback;
