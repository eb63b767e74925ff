-- Reports: the summary of a company's deliveries created in a range of São Paulo days equals what its
-- deliveries say (counts by status as the list counts them, revenue, the drivers' credits in the ledger,
-- on-time rate, average time to deliver), day by day, kept in step by the roll-up through every move;
-- owners and admins only, each of its own company.
begin;
select plan(19);

create temp table t as select tests.create_tenant('rep-a') as a, tests.create_tenant('rep-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;

-- Days in São Paulo: 10:00 local on 2026-03-10 and 23:30 local on 2026-03-11 (02:30 UTC on the 12th).
insert into ids select 'done-1', (tests.delivery_in(a, 'in_progress', 'invoice', price => 20.00, driver_share => 0.75,
  created_at => '2026-03-10 10:00-03')).id from t;
insert into ids select 'done-2', (tests.delivery_in(a, 'in_progress', 'invoice', price => 15.55, driver_share => 0.80,
  created_at => '2026-03-11 23:30-03')).id from t;
insert into ids select 'cancelled', (tests.delivery_in(a, 'cancelled', 'invoice', created_at => '2026-03-10 12:00-03')).id from t;
insert into ids select 'failed', (tests.delivery_in(a, 'failed', 'invoice', created_at => '2026-03-11 08:00-03')).id from t;
insert into ids select 'pending', (tests.delivery_in(a, 'pending', 'invoice', created_at => '2026-03-11 09:00-03')).id from t;
insert into ids select 'outside', (tests.delivery_in(a, 'completed', 'invoice', created_at => '2026-03-12 00:30-03')).id from t;
insert into ids select 'other', (tests.delivery_in(b, 'completed', 'invoice', created_at => '2026-03-10 10:00-03')).id from t;
-- Both had a one-hour window; completed 30 and 90 minutes after creation (the second after its window).
update public.deliveries set window_end = created_at + interval '1 hour'
where id in (select id from ids where name in ('done-1', 'done-2'));
update public.deliveries set status = 'completed', completed_at = created_at + interval '30 minutes'
where id = (select id from ids where name = 'done-1');
update public.deliveries set status = 'completed', completed_at = created_at + interval '90 minutes'
where id = (select id from ids where name = 'done-2');

select tests.act_as_member(a, 'owner') from t;
create temp table r as select * from public.report_summary('2026-03-10', '2026-03-11');
select is((select array[created, completed, cancelled, failed] from r), array[5, 2, 1, 1],
  'created, completed, cancelled, failed over the two days (the 12th''s left out)');
select is((select array[created, completed, cancelled, failed] from r), (select array[
    cardinality((public.list_deliveries(created_from => '2026-03-10 00:00-03', created_to => '2026-03-12 00:00-03', page_limit => 100)).items),
    cardinality((public.list_deliveries(status => 'completed', created_from => '2026-03-10 00:00-03', created_to => '2026-03-12 00:00-03')).items),
    cardinality((public.list_deliveries(status => 'cancelled', created_from => '2026-03-10 00:00-03', created_to => '2026-03-12 00:00-03')).items),
    cardinality((public.list_deliveries(status => 'failed', created_from => '2026-03-10 00:00-03', created_to => '2026-03-12 00:00-03')).items)]),
  'each figure equals a count of the list over the same days');
select is((select revenue from r), 35.55, 'revenue: the prices of the completed ones');
select is((select driver_earnings from r), 27.44, 'drivers'' earnings: their credits, each rounded to cents (15.00 + 12.44)');
select is((select on_time_rate from r), 0.5000, 'on-time rate: one of the two completed with a window arrived by its end');
select is((select avg_delivery_minutes from r), 60.0, 'average time from creation to delivery: 60 minutes');
select is((select by_day from r),
  array[row('2026-03-10', 2, 1, 20.00, 1, 0), row('2026-03-11', 3, 1, 15.55, 0, 1)]::public.report_day[],
  'day by day in São Paulo''s days (23:30 there is the 11th, not UTC''s 12th), by outcome');
select is((select cardinality(by_day) from public.report_summary('2026-03-01', '2026-03-31')), 31, 'every day of the range, empty ones too');
select is((select array[created, completed] from public.report_summary('2026-02-01', '2026-02-28')), array[0, 0],
  'a range without deliveries counts nothing');
select is((select on_time_rate::text || avg_delivery_minutes::text from public.report_summary('2026-02-01', '2026-02-28')), null,
  'and has no rate or average');

-- Moves keep it in step: the pending one completes, then a refund cancels done-1.
select tests.reset_role();
update public.deliveries set status = 'accepted', driver_id = (select (a ->> 'driver_id')::uuid from t), accepted_at = now()
where id = (select id from ids where name = 'pending');
select tests.act_as_member(a, 'driver') from t;
select public.start_delivery((select id from ids where name = 'pending'));
select public.complete_delivery((select id from ids where name = 'pending'));
select tests.reset_role();
create temp table credit as select e.amount from public.wallet_entries e where e.delivery_id = (select id from ids where name = 'pending');
grant select on credit to public;
select tests.act_as_member(a, 'admin') from t;
select is((select array[created, completed] from public.report_summary('2026-03-10', '2026-03-11')), array[5, 3],
  'completing a delivery counts it as completed under the day it was created');
select is((select driver_earnings from public.report_summary('2026-03-10', '2026-03-11')),
  27.44 + (select amount from credit),
  'the earnings grow by the credit the ledger got');
select tests.reset_role();
update public.deliveries set status = 'cancelled', cancelled_at = now() where id = (select id from ids where name = 'done-1');
select tests.act_as_member(a, 'admin') from t;
select is((select array[completed, cancelled]::numeric[] || revenue from public.report_summary('2026-03-10', '2026-03-11')),
  array[2, 2, 15.55 + 12.50]::numeric[], 'a completed delivery cancelled later leaves completed and its revenue');

-- Who may ask.
select throws_ok($$ select public.report_summary('2026-03-11', '2026-03-10') $$, 'PT400', 'to must not be before from',
  'to before from is 400');
select throws_ok($$ select public.report_summary('2025-01-01', '2026-01-02') $$, 'PT400', 'a report covers at most 366 days',
  'more than 366 days is 400');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok($$ select public.report_summary('2026-03-10', '2026-03-11') $$, 'PT403', 'role admin may not do this',
  'a legacy admin may not read reports');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.report_summary('2026-03-10', '2026-03-11') $$, 'PT403', 'role driver may not do this',
  'a driver may not read reports');
select tests.act_as_member(b, 'owner') from t;
select is((select array[created, completed] from public.report_summary('2026-03-10', '2026-03-11')), array[1, 1],
  'another company counts only its own');
select ok(not has_table_privilege('authenticated', 'private.delivery_days', 'select'), 'no user reads the roll-up directly');

select * from finish();
rollback;
