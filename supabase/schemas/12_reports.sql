-- Reports (docs/contract.md, Reports): GET /api/v1/reports/summary over the company's deliveries created in a
-- range of days in São Paulo. The figures come from a roll-up per company and day, kept in step with the
-- deliveries by triggers on every insert and every change of status, so a summary reads one row per day
-- whatever the company's history (bench/README.md measures it beside the same aggregate over the deliveries).

-- Section: types

-- cancelled and failed come last: pg-delta adds new attributes to a type at its end, in alphabetical order.
create type public.report_day as (day date, created integer, completed integer, revenue numeric, cancelled integer,
  failed integer);
comment on type public.report_day is 'One day of a report: deliveries created that day, how many of them are completed, cancelled and failed now, and their revenue.';

create type public.report_summary as (
  created integer,
  completed integer,
  cancelled integer,
  failed integer,
  on_time_rate numeric,
  avg_delivery_minutes numeric,
  revenue numeric,
  driver_earnings numeric,
  by_day public.report_day[]
);
comment on type public.report_summary is 'The company''s deliveries created in a range of days: outcomes, punctuality, time, money, and day by day.';

-- Section: roll-up

-- Per company and São Paulo day of creation: the deliveries created that day, by their status now.
create table private.delivery_days (
  company_id uuid not null references public.companies (id) on delete cascade,
  day date not null,
  created integer not null default 0,
  completed integer not null default 0,
  cancelled integer not null default 0,
  failed integer not null default 0,
  -- Of the completed ones: their prices, their drivers' credits (private.driver_credit), how many had a
  -- window and how many of those arrived by its end, and the seconds from creation to completion.
  revenue numeric(14, 2) not null default 0,
  driver_earnings numeric(14, 2) not null default 0,
  completed_with_window integer not null default 0,
  on_time integer not null default 0,
  delivery_seconds numeric not null default 0,
  -- A day is spread over a few rows, each written by the backends whose process id falls on it
  -- (private.roll_up_slot), so that concurrent creations and moves of one company do not queue on one row's
  -- lock until they commit; a summary adds a day's rows up.
  slot smallint not null default 0 check (slot between 0 and 7),
  primary key (company_id, day, slot)
);
comment on table private.delivery_days is 'Deliveries per company and day of creation (São Paulo), by current outcome, over a few rows per day: what reports read.';
alter table private.delivery_days enable row level security;

-- The day a delivery counts under.
create function private.report_day(created_at timestamptz)
returns date
language plpgsql
immutable
set search_path = ''
as $$ begin return (report_day.created_at at time zone 'America/Sao_Paulo')::date; end; $$;
comment on function private.report_day(timestamptz) is 'The day in São Paulo of an instant: the day reports count a delivery under.';

-- The roll-up row of a day this transaction writes: one of eight, by the backend's process id, so that two
-- transactions at once mostly write different rows (the sums do not depend on which row holds what).
create function private.roll_up_slot()
returns smallint
language plpgsql
stable
set search_path = ''
as $$ begin return (pg_backend_pid() % 8)::smallint; end; $$;
comment on function private.roll_up_slot() is 'Which of a day''s eight roll-up rows the current backend writes.';

-- What one delivery adds to its day, as it is now; its day and company included.
create function private.day_share(d public.deliveries)
returns private.delivery_days
language plpgsql
immutable
set search_path = ''
as $$
declare
  done boolean := d.status = 'completed';
  -- A returned delivery (11_lifecycle.sql) earns its driver what a completed one does.
  credited boolean := d.status in ('completed', 'returned');
begin
  return row(d.company_id, private.report_day(d.created_at), 1, done::integer, (d.status = 'cancelled')::integer,
    (d.status = 'failed')::integer,
    case when done then d.price else 0 end,
    case when credited then private.driver_credit(d.price, d.driver_share) else 0 end,
    (done and d.window_end is not null)::integer,
    coalesce(done and d.completed_at <= d.window_end, false)::integer,
    case when done then extract(epoch from d.completed_at - d.created_at) else 0 end,
    0
  )::private.delivery_days;
end;
$$;
comment on function private.day_share(public.deliveries) is 'What a delivery, as it is now, counts for in the roll-up of its day.';

-- New deliveries, per statement (a bulk insert adds each day once).
create function private.roll_up_new_deliveries()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into private.delivery_days as t (company_id, day, slot, created, completed, cancelled, failed, revenue,
    driver_earnings, completed_with_window, on_time, delivery_seconds)
  select s.company_id, s.day, private.roll_up_slot(), sum(s.created), sum(s.completed), sum(s.cancelled),
    sum(s.failed), sum(s.revenue), sum(s.driver_earnings), sum(s.completed_with_window), sum(s.on_time),
    sum(s.delivery_seconds)
  from new_rows n cross join lateral private.day_share(n) s
  group by s.company_id, s.day
  on conflict (company_id, day, slot) do update set
    created = t.created + excluded.created, completed = t.completed + excluded.completed,
    cancelled = t.cancelled + excluded.cancelled, failed = t.failed + excluded.failed,
    revenue = t.revenue + excluded.revenue, driver_earnings = t.driver_earnings + excluded.driver_earnings,
    completed_with_window = t.completed_with_window + excluded.completed_with_window,
    on_time = t.on_time + excluded.on_time, delivery_seconds = t.delivery_seconds + excluded.delivery_seconds;
  return null;
end;
$$;
comment on function private.roll_up_new_deliveries() is 'Adds the deliveries a statement inserted to the roll-up of their days.';
create trigger deliveries_roll_up_insert after insert on public.deliveries
  referencing new table as new_rows
  for each statement execute function private.roll_up_new_deliveries();

-- A change of status moves the delivery from one outcome to another within its day.
create function private.roll_up_status_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  was private.delivery_days := private.day_share(old);
  is_now private.delivery_days := private.day_share(new);
begin
  insert into private.delivery_days as t (company_id, day, slot, completed, cancelled, failed, revenue,
    driver_earnings, completed_with_window, on_time, delivery_seconds)
  values (is_now.company_id, is_now.day, private.roll_up_slot(), is_now.completed - was.completed,
    is_now.cancelled - was.cancelled,
    is_now.failed - was.failed, is_now.revenue - was.revenue, is_now.driver_earnings - was.driver_earnings,
    is_now.completed_with_window - was.completed_with_window, is_now.on_time - was.on_time,
    is_now.delivery_seconds - was.delivery_seconds)
  on conflict (company_id, day, slot) do update set
    completed = t.completed + excluded.completed, cancelled = t.cancelled + excluded.cancelled,
    failed = t.failed + excluded.failed, revenue = t.revenue + excluded.revenue,
    driver_earnings = t.driver_earnings + excluded.driver_earnings,
    completed_with_window = t.completed_with_window + excluded.completed_with_window,
    on_time = t.on_time + excluded.on_time, delivery_seconds = t.delivery_seconds + excluded.delivery_seconds;
  return null;
end;
$$;
comment on function private.roll_up_status_change() is 'Moves a delivery whose status changed from its old outcome to its new one in the roll-up of its day.';
create trigger deliveries_roll_up_update after update of status on public.deliveries
  for each row when (old.status is distinct from new.status)
  execute function private.roll_up_status_change();

-- Section: summary

create function public.report_summary(from_day date, to_day date)
returns public.report_summary
language plpgsql
stable
-- It reads the roll-up, which no API role may read, after authorizing the caller for its own company.
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  total record;
  days public.report_day[];
begin
  if report_summary.from_day is null or report_summary.to_day is null then
    raise exception using errcode = 'PT400', message = 'from and to are required';
  end if;
  if report_summary.to_day < report_summary.from_day then
    raise exception using errcode = 'PT400', message = 'to must not be before from';
  end if;
  if report_summary.to_day - report_summary.from_day >= 366 then
    raise exception using errcode = 'PT400', message = 'a report covers at most 366 days';
  end if;
  select coalesce(sum(t.created), 0)::integer as created, coalesce(sum(t.completed), 0)::integer as completed,
    coalesce(sum(t.cancelled), 0)::integer as cancelled, coalesce(sum(t.failed), 0)::integer as failed,
    coalesce(sum(t.revenue), 0) as revenue, coalesce(sum(t.driver_earnings), 0) as driver_earnings,
    coalesce(sum(t.completed_with_window), 0) as with_window, coalesce(sum(t.on_time), 0) as on_time,
    coalesce(sum(t.delivery_seconds), 0) as seconds
  into total
  from private.delivery_days t
  where t.company_id = company and t.day between report_summary.from_day and report_summary.to_day;
  select array_agg(row(g.day::date, coalesce(t.created, 0), coalesce(t.completed, 0), coalesce(t.revenue, 0),
    coalesce(t.cancelled, 0), coalesce(t.failed, 0))::public.report_day order by g.day)
  into days
  from generate_series(report_summary.from_day, report_summary.to_day, interval '1 day') g(day)
  left join (
    select r.day, sum(r.created)::integer as created, sum(r.completed)::integer as completed,
      sum(r.revenue) as revenue, sum(r.cancelled)::integer as cancelled, sum(r.failed)::integer as failed
    from private.delivery_days r
    where r.company_id = company and r.day between report_summary.from_day and report_summary.to_day
    group by r.day
  ) t on t.day = g.day::date;
  return row(total.created, total.completed, total.cancelled, total.failed,
    case when total.with_window > 0 then round(total.on_time::numeric / total.with_window, 4) end,
    case when total.completed > 0 then round(total.seconds / total.completed / 60, 1) end,
    total.revenue, total.driver_earnings, days)::public.report_summary;
end;
$$;
comment on function public.report_summary(date, date) is 'The caller''s company''s deliveries created from from_day to to_day (São Paulo days, both included): outcomes, on-time rate, average minutes to deliver, revenue, drivers'' earnings, and day by day.';
grant execute on function public.report_summary(date, date) to authenticated;

-- Section: grants of the helpers

grant execute on function private.report_day(timestamptz), private.day_share(public.deliveries),
  private.roll_up_slot() to service_role;

-- Section: a driver's day and the per-driver report

-- A driver's day (GET /api/v1/drivers/{id}/day). Days are São Paulo's, as everywhere in the reports.
--   deliveries: the driver's deliveries accepted, completed, failed or returned that day, as the API shows a
--     delivery (private.delivery_row), in the order they were accepted;
--   completed, failed, returned: of those, the ones whose outcome (completed_at, failed_at, returned_at) fell
--     that day and that are in that status now;
--   earnings: the driver's wallet entries of the day for deliveries (credits, returned deliveries' included, less
--     reversals); cash_collected: the driver's `collected` cash entries of the day;
--   online_minutes, distance_m: from the positions the driver sent that were accepted that day while carrying a
--     delivery (public.delivery_trail_points of those deliveries). A position sent for several deliveries at
--     once counts once; the positions in time order are walked, and a step counts (its minutes to online, its
--     great-circle metres to the distance) when it follows the previous one by at most 10 minutes; a longer
--     silence is time off. Positions are only kept while a delivery is in progress, so time online between
--     deliveries is not counted.
create type public.driver_day as (
  date date,
  driver_id uuid,
  online_minutes integer,
  distance_m integer,
  completed integer,
  failed integer,
  returned integer,
  earnings numeric,
  cash_collected numeric,
  deliveries public.delivery[]
);
comment on type public.driver_day is 'A driver''s day in São Paulo: time online and distance from its positions, outcomes, earnings, cash collected, and its deliveries.';

create function public.driver_day(driver_id uuid, day date)
returns public.driver_day
language plpgsql
stable
-- It reads the driver's positions and ledgers after authorizing the caller: the company's managers, or the
-- driver itself (another driver, another company: 404, private.cash_driver).
security definer
set search_path = ''
as $$
declare
  company uuid := private.cash_driver(driver_day.driver_id);
  day_start timestamptz := (driver_day.day::timestamp at time zone 'America/Sao_Paulo');
  day_end timestamptz := ((driver_day.day + 1)::timestamp at time zone 'America/Sao_Paulo');
  result public.driver_day;
  day_rows public.deliveries[];
begin
  if driver_day.day is null then
    raise exception using errcode = 'PT400', message = 'date is required';
  end if;
  result.date := driver_day.day;
  result.driver_id := driver_day.driver_id;
  -- Only this driver's rows (deliveries_driver_created_idx), then the day's.
  select coalesce(array_agg(d order by coalesce(d.accepted_at, d.created_at), d.id), '{}') into day_rows
  from public.deliveries d
  where d.driver_id = driver_day.driver_id and d.company_id = company
    and ((d.accepted_at >= day_start and d.accepted_at < day_end)
      or (d.completed_at >= day_start and d.completed_at < day_end)
      or (d.failed_at >= day_start and d.failed_at < day_end)
      or (d.returned_at >= day_start and d.returned_at < day_end));
  select count(*) filter (where r.status = 'completed' and r.completed_at >= day_start and r.completed_at < day_end),
    count(*) filter (where r.status = 'failed' and r.failed_at >= day_start and r.failed_at < day_end),
    count(*) filter (where r.status = 'returned' and r.returned_at >= day_start and r.returned_at < day_end),
    coalesce(array_agg(private.delivery_row(r) order by coalesce(r.accepted_at, r.created_at), r.id), '{}')
  into result.completed, result.failed, result.returned, result.deliveries
  from unnest(day_rows) r;
  select coalesce(sum(w.amount), 0)::numeric(12, 2) into result.earnings
  from public.wallet_entries w
  where w.driver_id = driver_day.driver_id and w.kind in ('delivery_credit', 'credit_reversal')
    and w.created_at >= day_start and w.created_at < day_end;
  select coalesce(sum(e.amount), 0.00) into result.cash_collected
  from public.cash_entries e
  where e.driver_id = driver_day.driver_id and e.kind = 'collected'
    and e.created_at >= day_start and e.created_at < day_end;
  select coalesce(round(sum(extract(epoch from s.step)) filter (where s.step <= interval '10 minutes') / 60), 0),
    coalesce(round(sum(s.metres) filter (where s.step <= interval '10 minutes')), 0)
  into result.online_minutes, result.distance_m
  from (
    select p.recorded_at - lag(p.recorded_at) over w as step,
      private.distance_m(lag(p.lat) over w, lag(p.lng) over w, p.lat, p.lng) as metres
    from (
      select distinct t.recorded_at, t.lat, t.lng
      from unnest(day_rows) r
      join public.delivery_trail_points t on t.delivery_id = r.id
      where t.recorded_at >= day_start and t.recorded_at < day_end
    ) p
    window w as (order by p.recorded_at)
  ) s;
  return result;
end;
$$;
comment on function public.driver_day(uuid, date) is 'A driver''s day in São Paulo: minutes online and metres from its positions, completed, failed and returned, earnings (returned deliveries'' credits included), cash collected, and the day''s deliveries (managers; the driver itself; otherwise 404).';
grant execute on function public.driver_day(uuid, date) to authenticated;

-- The per-driver report (GET /api/v1/reports/drivers): every driver of the company, over a range of São Paulo
-- days. completed and failed: the driver's deliveries in that status now whose outcome fell in the range;
-- on_time_rate and avg_delivery_minutes over those completed, as public.report_summary computes them; earnings:
-- the driver's wallet entries for deliveries in the range (credits, returned deliveries' included, less
-- reversals).
create type public.driver_report_line as (
  driver_id uuid,
  name text,
  completed integer,
  failed integer,
  on_time_rate numeric,
  avg_delivery_minutes numeric,
  earnings numeric
);
comment on type public.driver_report_line is 'One driver over a range of days: outcomes, punctuality, time to deliver, earnings.';

create type public.driver_report as (from_day date, to_day date, items public.driver_report_line[]);
comment on type public.driver_report is 'The company''s drivers over a range of days, one line each, by name.';

create function public.report_drivers(from_day date, to_day date)
returns public.driver_report
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  range_start timestamptz := (report_drivers.from_day::timestamp at time zone 'America/Sao_Paulo');
  range_end timestamptz := ((report_drivers.to_day + 1)::timestamp at time zone 'America/Sao_Paulo');
  lines public.driver_report_line[];
begin
  if report_drivers.from_day is null or report_drivers.to_day is null then
    raise exception using errcode = 'PT400', message = 'from and to are required';
  end if;
  if report_drivers.to_day < report_drivers.from_day then
    raise exception using errcode = 'PT400', message = 'to must not be before from';
  end if;
  if report_drivers.to_day - report_drivers.from_day >= 366 then
    raise exception using errcode = 'PT400', message = 'a report covers at most 366 days';
  end if;
  select coalesce(array_agg(row(dr.id, dr.name, o.completed, o.failed,
      case when o.with_window > 0 then round(o.on_time::numeric / o.with_window, 4) end,
      case when o.completed > 0 then round(o.seconds / o.completed / 60, 1) end,
      e.earnings)::public.driver_report_line order by dr.name, dr.id), '{}')
  into lines
  from public.drivers dr
  cross join lateral (
    select count(*) filter (where d.status = 'completed' and d.completed_at >= range_start
        and d.completed_at < range_end)::integer as completed,
      count(*) filter (where d.status = 'failed' and d.failed_at >= range_start and d.failed_at < range_end)::integer
        as failed,
      count(*) filter (where d.status = 'completed' and d.completed_at >= range_start and d.completed_at < range_end
        and d.window_end is not null) as with_window,
      count(*) filter (where d.status = 'completed' and d.completed_at >= range_start and d.completed_at < range_end
        and d.completed_at <= d.window_end) as on_time,
      coalesce(sum(extract(epoch from d.completed_at - d.created_at)) filter (where d.status = 'completed'
        and d.completed_at >= range_start and d.completed_at < range_end), 0) as seconds
    from public.deliveries d
    where d.driver_id = dr.id and d.status in ('completed', 'failed')
  ) o
  cross join lateral (
    select coalesce(sum(w.amount), 0)::numeric(12, 2) as earnings
    from public.wallet_entries w
    where w.driver_id = dr.id and w.kind in ('delivery_credit', 'credit_reversal')
      and w.created_at >= range_start and w.created_at < range_end
  ) e
  where dr.company_id = company;
  return row(report_drivers.from_day, report_drivers.to_day, lines)::public.driver_report;
end;
$$;
comment on function public.report_drivers(date, date) is 'The caller''s company''s drivers from from_day to to_day (São Paulo days, both included): completed, failed, on-time rate, average minutes to deliver and earnings (returned deliveries'' credits included), one line per driver (owner, admin).';
grant execute on function public.report_drivers(date, date) to authenticated;
