-- Dispatch (docs/dispatch.md): the right driver for each delivery. A company broadcasts (every driver sees a
-- pending delivery and the first to accept takes it: the default, as before), offers (the best few drivers
-- get an offer with a deadline; a decline or the deadline passes it to the next), or assigns automatically
-- (the best driver gets it at once).
--
-- A driver is eligible when active, online (a position in the last 2 minutes), below the company's limit of
-- accepted and in-progress deliveries, and within its radius of the pickup in a straight line; the nearest
-- eligible drivers (at most 20, found nearest first through a GiST index on the positions) are ranked by
-- road duration from one call to the routing service's table, then by fewer deliveries completed today.
--
-- SQL cannot wait for the routing service, so a round of dispatch has three steps: a delivery that enters
-- dispatch (pending under `offer` or `auto`: created, paid, reopened) gets a row in a queue in the same
-- transaction, whose commit wakes the dispatch Edge Function through pg_net; the function claims due rows
-- (public.claim_dispatches: the candidates found here), asks the routing service once per delivery, and
-- hands the durations back (public.complete_dispatch: ranked, offered or assigned, recorded, under the
-- delivery's lock). A pg_cron job every 2 seconds expires offers past their deadline, queuing the next
-- round, and wakes the function for anything due (a window that nears, a wake-up lost).

-- Section: types (02_company.sql says why functions return them)

create type public.dispatch_settings_set as (
  mode text,
  offer_timeout_s integer,
  offer_batch integer,
  max_active_per_driver integer,
  max_distance_km double precision
);
comment on type public.dispatch_settings_set is 'How a company dispatches its deliveries: broadcast, offer or auto, and the limits of each.';

create type public.dispatch_candidate as (
  driver_id uuid,
  name text,
  rank integer,
  distance_m integer,
  duration_s integer,
  completed_today integer,
  active_deliveries integer,
  left_out text,
  lat double precision,
  lng double precision
);
comment on type public.dispatch_candidate is 'A driver a round of dispatch considered: its rank among the eligible, or why it was left out, and the figures behind it.';

create type public.dispatch_round as (
  round integer,
  attempt integer,
  mode text,
  ranked_at timestamptz,
  ranked_by text,
  routing_error text,
  outcome text,
  driver_id uuid,
  candidates public.dispatch_candidate[]
);
comment on type public.dispatch_round is 'One round of dispatch of a delivery: the candidates, how they were ranked, and what came of it.';

create type public.dispatch_offer as (
  id uuid,
  driver_id uuid,
  name text,
  attempt integer,
  round integer,
  offered_at timestamptz,
  expires_at timestamptz,
  outcome text,
  decided_at timestamptz
);
comment on type public.dispatch_offer is 'One offer of a delivery to a driver, and its outcome.';

create type public.delivery_dispatch as (
  delivery_id uuid,
  dispatch_status text,
  rounds public.dispatch_round[],
  offers public.dispatch_offer[]
);
comment on type public.delivery_dispatch is 'Every decision dispatch took for a delivery: its rounds and its offers, oldest first.';

-- Section: settings

create table public.dispatch_settings (
  company_id uuid primary key references public.companies (id) on delete cascade,
  -- The defaults are a company's settings while it has no row (private.with_defaults).
  mode text not null default 'broadcast' check (mode in ('broadcast', 'offer', 'auto', 'routes')),
  offer_timeout_s integer not null default 60 check (offer_timeout_s between 10 and 600),
  offer_batch integer not null default 1 check (offer_batch between 1 and 20),
  max_active_per_driver integer not null default 1 check (max_active_per_driver between 1 and 20),
  max_distance_km double precision not null default 20 check (max_distance_km between 0.5 and 200),
  updated_at timestamptz not null default now()
);
comment on table public.dispatch_settings is 'How each company dispatches (the defaults when it has no row: broadcast, 60 s, 1, 1, 20 km).';
alter table public.dispatch_settings enable row level security;
create policy dispatch_settings_select_managers on public.dispatch_settings
  for select to authenticated
  using (company_id = (select private.company_of(private.company_managers())));
grant select on public.dispatch_settings to authenticated;
grant all on public.dispatch_settings to service_role;

-- Security definer: triggers read a company's settings whoever changed the delivery.
create function private.dispatch_settings_of(company_id uuid)
returns public.dispatch_settings_set
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return private.with_defaults((select to_jsonb(x) from public.dispatch_settings x where x.company_id = dispatch_settings_of.company_id),
    'public.dispatch_settings', null::public.dispatch_settings_set);
end;
$$;
comment on function private.dispatch_settings_of(uuid) is 'A company''s dispatch settings, or the defaults.';

create function public.get_dispatch_settings()
returns public.dispatch_settings_set
language plpgsql
stable
set search_path = ''
as $$
begin
  return private.dispatch_settings_of(private.authorize(variadic private.company_managers()));
end;
$$;
comment on function public.get_dispatch_settings() is 'How the caller''s company dispatches its deliveries (owner, admin).';
grant execute on function public.get_dispatch_settings() to authenticated;

-- A setting left null keeps its value. Leaving `offer` or `auto` for `broadcast` opens the deliveries dispatch
-- still holds (queued or offered) to every driver at once: their live offers are withdrawn.
create function public.set_dispatch_settings(
  mode text default null,
  offer_timeout_s integer default null,
  offer_batch integer default null,
  max_active_per_driver integer default null,
  max_distance_km double precision default null)
returns public.dispatch_settings_set
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  current_settings public.dispatch_settings_set := private.dispatch_settings_of(company);
  s public.dispatch_settings_set := row(
    coalesce(set_dispatch_settings.mode, current_settings.mode),
    coalesce(set_dispatch_settings.offer_timeout_s, current_settings.offer_timeout_s),
    coalesce(set_dispatch_settings.offer_batch, current_settings.offer_batch),
    coalesce(set_dispatch_settings.max_active_per_driver, current_settings.max_active_per_driver),
    coalesce(set_dispatch_settings.max_distance_km, current_settings.max_distance_km))::public.dispatch_settings_set;
  held public.deliveries;
begin
  if s.mode not in ('broadcast', 'offer', 'auto', 'routes') then
    raise exception using errcode = 'PT400', message = 'mode must be broadcast, offer, auto or routes';
  elsif s.offer_timeout_s not between 10 and 600 then
    raise exception using errcode = 'PT400', message = 'offer_timeout_s must be between 10 and 600';
  elsif s.offer_batch not between 1 and 20 then
    raise exception using errcode = 'PT400', message = 'offer_batch must be between 1 and 20';
  elsif s.max_active_per_driver not between 1 and 20 then
    raise exception using errcode = 'PT400', message = 'max_active_per_driver must be between 1 and 20';
  elsif not (s.max_distance_km between 0.5 and 200) then
    raise exception using errcode = 'PT400', message = 'max_distance_km must be between 0.5 and 200';
  end if;
  insert into public.dispatch_settings as x
    (company_id, mode, offer_timeout_s, offer_batch, max_active_per_driver, max_distance_km)
  values (company, s.mode, s.offer_timeout_s, s.offer_batch, s.max_active_per_driver, s.max_distance_km)
  on conflict on constraint dispatch_settings_pkey do update set
    mode = excluded.mode, offer_timeout_s = excluded.offer_timeout_s, offer_batch = excluded.offer_batch,
    max_active_per_driver = excluded.max_active_per_driver, max_distance_km = excluded.max_distance_km,
    updated_at = now();
  if s.mode = 'broadcast' and current_settings.mode <> 'broadcast' then
    for held in
      select * from public.deliveries d
      where d.company_id = company and d.status = 'pending' and d.dispatch_status in ('queued', 'offered')
      order by d.id
      for update
    loop
      update public.dispatch_offers o set outcome = 'withdrawn', decided_at = now()
      where o.delivery_id = held.id and o.outcome is null;
      delete from private.dispatch_queue q where q.delivery_id = held.id;
      -- Open to every driver now: the broadcast trigger announces it (private.open_to_all).
      update public.deliveries d set dispatch_status = null, updated_at = now() where d.id = held.id;
    end loop;
  end if;
  return s;
end;
$$;
comment on function public.set_dispatch_settings(text, integer, integer, integer, double precision) is 'Changes how the caller''s company dispatches (null keeps a setting); back to broadcast opens what dispatch held to every driver (owner, admin).';
grant execute on function public.set_dispatch_settings(text, integer, integer, integer, double precision) to authenticated;

-- Section: tables

-- Deliveries waiting for their next round: due now, or when their window nears (an hour before it opens).
-- A dispatch function claims a row for 10 seconds (`claim`), with the candidates it found; the round's
-- outcome is taken only from the claim that is still the row's.
create table private.dispatch_queue (
  delivery_id uuid primary key references public.deliveries (id) on delete cascade,
  due_at timestamptz not null,
  claim uuid,
  claimed_until timestamptz,
  candidates public.dispatch_candidate[]
);
comment on table private.dispatch_queue is 'Deliveries waiting for a round of dispatch, and the claim of the function ranking each.';
create index dispatch_queue_due_idx on private.dispatch_queue (due_at);
alter table private.dispatch_queue enable row level security;

-- The record of every round. The company's id has no foreign key of its own (the delivery's cascades cover
-- it): a key check on the company row from every round of a busy company would make that row a hot spot.
create table public.dispatch_rounds (
  id bigint generated always as identity primary key,
  delivery_id uuid not null references public.deliveries (id) on delete cascade,
  company_id uuid not null,
  attempt integer not null,
  round integer not null check (round >= 1),
  mode text not null check (mode in ('offer', 'auto', 'routes')),
  -- road_duration (the routing service answered), straight_line (it did not), or null (nobody to rank).
  ranked_by text check (ranked_by in ('road_duration', 'straight_line')),
  routing_error text check (length(routing_error) <= 500),
  outcome text not null check (outcome in ('offered', 'assigned', 'unassigned')),
  -- The driver `auto` assigned.
  driver_id uuid references public.drivers (id) on delete set null,
  candidates public.dispatch_candidate[] not null,
  created_at timestamptz not null default clock_timestamp(),
  unique (delivery_id, attempt, round)
);
comment on table public.dispatch_rounds is 'Each round of dispatch of a delivery: the candidates considered, ranked or left out, and the outcome.';
create index dispatch_rounds_company_id_idx on public.dispatch_rounds (company_id);
alter table public.dispatch_rounds enable row level security;
create policy dispatch_rounds_select_managers on public.dispatch_rounds
  for select to authenticated
  using (company_id = (select private.company_of(private.delivery_managers())));
grant select on public.dispatch_rounds to authenticated;
grant all on public.dispatch_rounds to service_role;

-- Offers: live while without an outcome and before expires_at. One per driver, delivery and attempt, so a
-- driver is never offered the same attempt twice.
create table public.dispatch_offers (
  id uuid primary key default gen_random_uuid(),
  delivery_id uuid not null references public.deliveries (id) on delete cascade,
  company_id uuid not null,
  driver_id uuid not null references public.drivers (id) on delete cascade,
  attempt integer not null,
  round integer not null,
  offered_at timestamptz not null default clock_timestamp(),
  expires_at timestamptz not null,
  outcome text check (outcome in ('accepted', 'declined', 'expired', 'withdrawn')),
  decided_at timestamptz,
  constraint dispatch_offers_once unique (delivery_id, attempt, driver_id),
  check ((outcome is null) = (decided_at is null)),
  check (expires_at > offered_at)
);
comment on table public.dispatch_offers is 'Offers of deliveries to drivers, with their deadline and outcome: accepted, declined, expired or withdrawn.';
create index dispatch_offers_company_id_idx on public.dispatch_offers (company_id);
-- A driver's live offers (its list, an accept reaching its limit), and the deadlines the expiry pass looks for.
create index dispatch_offers_live_driver_idx on public.dispatch_offers (driver_id) where outcome is null;
create index dispatch_offers_live_expiry_idx on public.dispatch_offers (expires_at) where outcome is null;
alter table public.dispatch_offers enable row level security;
-- The managers read them (a driver reads its own through the deliveries: offer_expires_at).
create policy dispatch_offers_select_managers on public.dispatch_offers
  for select to authenticated
  using (company_id = (select private.company_of(private.delivery_managers())));
grant select on public.dispatch_offers to authenticated;
grant all on public.dispatch_offers to service_role;

-- Section: entering and leaving dispatch

-- Wakes the dispatch function once the transaction commits (pg_net sends only then), at most once per
-- transaction, and not while a wake-up is still waiting in pg_net's queue: the run it starts claims every round
-- due when it starts, and claims again until none is (functions/dispatch/run.ts), so at 100 deliveries a second
-- one run goes on where a hundred would start. Without the Vault secrets (a database that is not a project's)
-- nothing is woken: the job below finds what is due.
create function private.wake_dispatcher()
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if current_setting('dispatch.woken', true) = 'on' then
    return;
  end if;
  perform set_config('dispatch.woken', 'on', true);
  perform private.call_function('dispatch/run', unless_queued => true);
end;
$$;
comment on function private.wake_dispatcher() is 'Asks the dispatch function, through pg_net after the commit, to run the rounds now due (once per transaction).';

-- A round for the delivery at `due_at` (now, or when its window nears). A claim in flight is dropped: its
-- outcome would be stale.
create function private.queue_dispatch(delivery_id uuid, due_at timestamptz)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into private.dispatch_queue (delivery_id, due_at)
  values (queue_dispatch.delivery_id, queue_dispatch.due_at)
  on conflict on constraint dispatch_queue_pkey do update set
    due_at = excluded.due_at, claim = null, claimed_until = null, candidates = null;
  if queue_dispatch.due_at <= now() then
    perform private.wake_dispatcher();
  end if;
end;
$$;
comment on function private.queue_dispatch(uuid, timestamptz) is 'Queues a round of dispatch of a delivery at a time, waking the dispatch function when it is due now.';

-- The next round of a delivery under offer, once no offer of the round before is live.
create function private.next_round(delivery public.deliveries)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if delivery.status = 'pending' and delivery.driver_id is null and delivery.dispatch_status = 'offered'
     and not exists (select from public.dispatch_offers o
                     where o.delivery_id = delivery.id and o.outcome is null and o.expires_at > now()) then
    perform private.queue_dispatch(delivery.id, now());
  end if;
end;
$$;
comment on function private.next_round(public.deliveries) is 'Queues the next round of a delivery being offered once none of its offers is live.';

-- private.enter_dispatch, the trigger on public.deliveries: 05_deliveries.sql, Section: what fires on a delivery.

-- private.follow_dispatch, the trigger on public.deliveries: 05_deliveries.sql, Section: what fires on a delivery.

-- A driver's live offers are withdrawn (it reached its limit, or was deactivated): each delivery left
-- without a live offer goes to its next round.
create function private.withdraw_driver_offers(driver_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  released uuid;
begin
  for released in
    update public.dispatch_offers o set outcome = 'withdrawn', decided_at = now()
    where o.driver_id = withdraw_driver_offers.driver_id and o.outcome is null
    returning o.delivery_id
  loop
    if not exists (select from public.dispatch_offers o
                   where o.delivery_id = released and o.outcome is null and o.expires_at > now()) then
      perform private.queue_dispatch(released, now());
    end if;
  end loop;
end;
$$;
comment on function private.withdraw_driver_offers(uuid) is 'Withdraws a driver''s live offers, queuing the next round of each delivery left without one.';

-- private.withdraw_offers_of_deactivated, the trigger on public.drivers: 02_company.sql.

-- Section: eligibility and ranking

-- The candidates of a round: the company's drivers with a known position, nearest first, until 20 are
-- eligible (the `<->` order walks driver_locations_position_idx). Each one passed over says why: `inactive`,
-- `offline` (no position in the last 2 minutes), `offered_before` (offered this attempt already: counted
-- among the 20, so an attempt is offered to the 20 nearest at most) or `at_limit` (its accepted and
-- in-progress deliveries reach max_active_per_driver); the first five beyond the radius are recorded as
-- `out_of_radius`, and nobody further is looked at. At most 20 passed over are recorded; the walk goes on
-- past them, through the nearest 1,000 positions at most. Eligible candidates come first, nearest first,
-- unranked. Run by its owner's functions (earthdistance's functions are only its owner's: private.earth_point).
-- The metres are private.distance_m's (haversine, in plain arithmetic): earthdistance's own earth_distance of two
-- ll_to_earth points costs a few hundred microseconds a row, more than the walk itself.
create function private.dispatch_candidates(delivery public.deliveries, settings public.dispatch_settings_set)
returns public.dispatch_candidate[]
language plpgsql
stable
set search_path = ''
-- The walk is nearest first through the index, always: the planner, counting on the limit's 1,000 rows, may
-- rather sort a small company's every position (and count every driver's deliveries) before the first row,
-- tens of milliseconds where the walk takes a few.
set enable_sort = off
as $$
declare
  pickup extensions.cube := private.earth_point(delivery.origin_lat, delivery.origin_lng);
  radius_m double precision := settings.max_distance_km * 1000;
  online_since timestamptz := now() - interval '2 minutes';
  day_start timestamptz := date_trunc('day', now() at time zone 'America/Sao_Paulo') at time zone 'America/Sao_Paulo';
  offered uuid[] := array(select o.driver_id from public.dispatch_offers o
                          where o.delivery_id = delivery.id and o.attempt = delivery.attempts);
  near record;
  reason text;
  counted integer := 0;
  beyond integer := 0;
  eligible public.dispatch_candidate[] := '{}';
  passed public.dispatch_candidate[] := '{}';
begin
  for near in
    select l.driver_id, l.lat, l.lng, l.updated_at, d.name, d.active,
      private.distance_m(delivery.origin_lat, delivery.origin_lng, l.lat, l.lng) as metres,
      (select count(*) from public.deliveries x
       where x.driver_id = l.driver_id and x.status in ('accepted', 'in_progress')) as load,
      (select count(*) from public.deliveries x
       where x.driver_id = l.driver_id and x.status = 'completed' and x.completed_at >= day_start) as done_today
    from public.driver_locations l
    join public.drivers d on d.id = l.driver_id
    where l.company_id = delivery.company_id
    order by private.earth_point(l.lat, l.lng) operator(extensions.<->) pickup
    limit 1000
  loop
    if near.metres > radius_m then
      passed := passed || row(near.driver_id, near.name, null, round(near.metres), null, null, null, 'out_of_radius',
        near.lat, near.lng)::public.dispatch_candidate;
      beyond := beyond + 1;
      exit when beyond >= 5;
      continue;
    end if;
    reason := case
      when not near.active then 'inactive'
      when near.updated_at < online_since then 'offline'
    end;
    if reason is null then
      if near.load >= settings.max_active_per_driver then
        reason := 'at_limit';
      else
        counted := counted + 1;
        if near.driver_id = any (offered) then
          reason := 'offered_before';
        end if;
      end if;
    end if;
    if reason is null then
      eligible := eligible || row(near.driver_id, near.name, null, round(near.metres), null, near.done_today,
        near.load, null, near.lat, near.lng)::public.dispatch_candidate;
    elsif cardinality(passed) < 20 + beyond then
      passed := passed || row(near.driver_id, near.name, null, round(near.metres), null, null,
        case when reason in ('at_limit', 'offered_before') then near.load end, reason, near.lat, near.lng)
        ::public.dispatch_candidate;
    end if;
    exit when counted >= 20;
  end loop;
  return eligible || passed;
end;
$$;
comment on function private.dispatch_candidates(public.deliveries, public.dispatch_settings_set) is 'The drivers a round considers for a delivery: up to 20 eligible, nearest first, and those passed over with the reason.';

-- Ranks the eligible candidates (those without a reason, in the order private.dispatch_candidates gave
-- them, `durations` holding each one's road seconds in the same order): by road duration when the routing
-- service answered (`routed`; a candidate it gave no duration comes after those it did), else by
-- straight-line distance; then by fewer deliveries completed today, then the nearer. The ranked ones first,
-- then those left out as they came.
create function private.rank_candidates(candidates public.dispatch_candidate[], durations jsonb, routed boolean)
returns public.dispatch_candidate[]
language plpgsql
stable
set search_path = ''
as $$
begin
  return coalesce((
    select array_agg(row(r.driver_id, r.name, r.new_rank, r.distance_m, r.duration, r.completed_today,
        r.active_deliveries, r.left_out, r.lat, r.lng)::public.dispatch_candidate
      order by r.new_rank nulls last, r.ord)
    from (
      select m.*, case when m.left_out is null then row_number() over (
          partition by m.left_out is null
          order by case when rank_candidates.routed then m.duration else m.distance_m end nulls last,
            m.completed_today, m.distance_m, m.driver_id) end as new_rank
      from (
        select c.*, case when c.left_out is null and rank_candidates.routed then
            round((rank_candidates.durations ->> (c.eligible_index - 1)::integer)::numeric)::integer end as duration
        from (
          select u.*, count(*) filter (where u.left_out is null) over (order by u.ord) as eligible_index
          from unnest(rank_candidates.candidates) with ordinality
            as u (driver_id, name, rank, distance_m, duration_s, completed_today, active_deliveries, left_out, lat, lng, ord)
        ) c
      ) m
    ) r), '{}');
end;
$$;
comment on function private.rank_candidates(public.dispatch_candidate[], jsonb, boolean) is 'Ranks a round''s eligible candidates by road duration (or straight-line distance), then fewer deliveries completed today.';

-- Section: the dispatch function's calls

-- Service role only (the dispatch function). Claims up to `batch` due rounds for 10 seconds, finding each
-- one's candidates, and answers what the routing call needs: the pickup and the eligible candidates'
-- positions, in order. Concurrent claimers skip each other's rows. Security definer: the distances are
-- earthdistance's, whose functions only their owner executes (private.earth_point).
create function public.claim_dispatches(batch integer default 20)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  -- The due rows, locked at once (skip locked); each is then claimed by one update with its candidates, not
  -- claimed first and updated again with them.
  due uuid[] := array(
    select q.delivery_id from private.dispatch_queue q
    where q.due_at <= now() and (q.claimed_until is null or q.claimed_until <= now())
    order by q.due_at
    limit least(greatest(claim_dispatches.batch, 1), 100)
    for update skip locked);
  job uuid;
  claimed uuid;
  delivery public.deliveries;
  settings public.dispatch_settings_set;
  found public.dispatch_candidate[];
  answer jsonb := '[]';
begin
  -- A claim is a 10-second lease and nothing more: one lost to a crash of the database leaves its rows due
  -- again, and the dispatch function's complete_dispatch of it is refused (the claim no longer matches).
  perform private.commit_without_flush();
  foreach job in array due loop
    select * into delivery from public.deliveries d where d.id = job;
    settings := private.dispatch_settings_of(delivery.company_id);
    found := '{}';
    if delivery.status = 'pending' and delivery.driver_id is null and delivery.dispatch_status in ('queued', 'offered')
       and private.dispatchable(delivery) and settings.mode in ('offer', 'auto') then
      found := private.dispatch_candidates(delivery, settings);
    end if;
    update private.dispatch_queue q
    set claim = gen_random_uuid(), claimed_until = now() + interval '10 seconds', candidates = found
    where q.delivery_id = job
    returning q.claim into claimed;
    answer := answer || jsonb_build_object(
      'delivery_id', job,
      'claim', claimed,
      'mode', settings.mode,
      'origin', jsonb_build_object('lat', delivery.origin_lat, 'lng', delivery.origin_lng),
      'candidates', coalesce((select jsonb_agg(jsonb_build_object('driver_id', c.driver_id, 'lat', c.lat, 'lng', c.lng)
                                order by c.ord)
                              from unnest(found) with ordinality
                                as c (driver_id, name, rank, distance_m, duration_s, completed_today, active_deliveries,
                                      left_out, lat, lng, ord)
                              where c.left_out is null), '[]'));
  end loop;
  return answer;
end;
$$;
comment on function public.claim_dispatches(integer) is 'Claims up to `batch` due rounds of dispatch (skip locked, 10 s) with their pickup and eligible candidates (service role).';
revoke execute on function public.claim_dispatches(integer) from authenticated;
grant execute on function public.claim_dispatches(integer) to service_role;

-- Service role only. The end of a claimed round: `durations` are the road seconds from each eligible
-- candidate to the pickup, in the claim's order (null, with `routing_error`, when the routing service failed:
-- straight-line distance ranks instead). Under the delivery's lock: a claim that is no longer the queue
-- row's changes nothing (`stale`); a delivery no longer waiting for a round is left alone (`skipped`); one
-- whose window moved away waits again (`waiting`); under broadcast now, it is opened to every driver
-- (`released`). Otherwise the candidates are ranked and `offer` offers the best `offer_batch`
-- (delivery_offered to each), `auto` assigns the best still below its limit (the driver's row locked, so two
-- deliveries never both take a driver's last place); nobody: `unassigned`, open to every driver as under
-- broadcast. The round is recorded. Answers {result, round, drivers}. Security definer: it sends on the
-- drivers' topics (private.broadcast), which no API role may.
create function public.complete_dispatch(
  delivery_id uuid, claim uuid, durations jsonb default null, routing_error text default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  delivery public.deliveries;
  job private.dispatch_queue;
  settings public.dispatch_settings_set;
  routed boolean := complete_dispatch.routing_error is null and jsonb_typeof(complete_dispatch.durations) = 'array';
  ranked public.dispatch_candidate[];
  chosen uuid[] := '{}';
  assigned uuid;
  round_no integer;
  expires timestamptz;
  payload jsonb;
  driver uuid;
  i integer;
  load integer;
begin
  select * into delivery from public.deliveries d where d.id = complete_dispatch.delivery_id for update;
  select * into job from private.dispatch_queue q where q.delivery_id = complete_dispatch.delivery_id for update;
  if job.claim is null or job.claim <> complete_dispatch.claim then
    return jsonb_build_object('result', 'stale', 'round', null, 'drivers', '[]'::jsonb);
  end if;
  delete from private.dispatch_queue q where q.delivery_id = job.delivery_id;
  if delivery.status is distinct from 'pending' or delivery.driver_id is not null
     or coalesce(delivery.dispatch_status not in ('queued', 'offered'), true)
     or exists (select from public.dispatch_offers o
                where o.delivery_id = delivery.id and o.outcome is null and o.expires_at > now()) then
    return jsonb_build_object('result', 'skipped', 'round', null, 'drivers', '[]'::jsonb);
  end if;
  if not private.dispatchable(delivery) then
    perform private.queue_dispatch(delivery.id, delivery.window_start - interval '1 hour');
    return jsonb_build_object('result', 'waiting', 'round', null, 'drivers', '[]'::jsonb);
  end if;
  settings := private.dispatch_settings_of(delivery.company_id);
  if settings.mode = 'broadcast' then
    update public.deliveries d set dispatch_status = null, updated_at = now() where d.id = delivery.id;
    return jsonb_build_object('result', 'released', 'round', null, 'drivers', '[]'::jsonb);
  end if;

  ranked := private.rank_candidates(coalesce(job.candidates, '{}'), complete_dispatch.durations, routed);
  select coalesce(max(r.round), 0) + 1 into round_no from public.dispatch_rounds r
  where r.delivery_id = delivery.id and r.attempt = delivery.attempts;

  if settings.mode = 'offer' then
    select coalesce(array_agg(c.driver_id order by c.rank), '{}') into chosen
    from unnest(ranked) c where c.rank <= settings.offer_batch;
  else
    for i in 1..coalesce(array_length(ranked, 1), 0) loop
      exit when ranked[i].rank is null;
      -- Still active and below its limit, now that no other round can be giving it a delivery.
      perform from public.drivers d where d.id = ranked[i].driver_id and d.active for no key update;
      if not found then
        ranked[i].left_out := 'inactive';
        continue;
      end if;
      select count(*) into load from public.deliveries x
      where x.driver_id = ranked[i].driver_id and x.status in ('accepted', 'in_progress');
      if load >= settings.max_active_per_driver then
        ranked[i].left_out := 'at_limit';
        ranked[i].active_deliveries := load;
        continue;
      end if;
      assigned := ranked[i].driver_id;
      exit;
    end loop;
  end if;

  insert into public.dispatch_rounds (delivery_id, company_id, attempt, round, mode, ranked_by, routing_error, outcome,
    driver_id, candidates)
  values (delivery.id, delivery.company_id, delivery.attempts, round_no, settings.mode,
    case when exists (select from unnest(ranked) c where c.rank is not null) then
      case when routed then 'road_duration' else 'straight_line' end end,
    left(complete_dispatch.routing_error, 500),
    case when assigned is not null then 'assigned' when cardinality(chosen) > 0 then 'offered' else 'unassigned' end,
    assigned, ranked);

  if assigned is not null then
    -- As a manager's assign: accepted, linked, delivery_updated to the driver (the broadcast trigger).
    perform private.move_delivery(delivery, 'assign', null, driver_id => assigned);
    return jsonb_build_object('result', 'assigned', 'round', round_no, 'drivers', jsonb_build_array(assigned));
  end if;
  if cardinality(chosen) = 0 then
    -- Nobody eligible is left: open to every driver, as under broadcast (the broadcast trigger announces it).
    update public.deliveries d set dispatch_status = 'unassigned', updated_at = now() where d.id = delivery.id;
    return jsonb_build_object('result', 'unassigned', 'round', round_no, 'drivers', '[]'::jsonb);
  end if;

  expires := now() + make_interval(secs => settings.offer_timeout_s);
  insert into public.dispatch_offers (delivery_id, company_id, driver_id, attempt, round, expires_at)
  select delivery.id, delivery.company_id, c, delivery.attempts, round_no, expires from unnest(chosen) c;
  if delivery.dispatch_status <> 'offered' then
    update public.deliveries d set dispatch_status = 'offered', updated_at = now() where d.id = delivery.id
    returning * into delivery;
  end if;
  -- The delivery as its driver reads it, with the offer's deadline.
  payload := private.delivery_json(delivery)
    || jsonb_build_object('tracking_token', null, 'tracking_url', null, 'offer_expires_at', expires,
      'expires_at', expires);
  foreach driver in array chosen loop
    perform private.broadcast('driver:' || driver, 'delivery_offered', payload);
  end loop;
  return jsonb_build_object('result', 'offered', 'round', round_no, 'drivers', to_jsonb(chosen));
end;
$$;
comment on function public.complete_dispatch(uuid, uuid, jsonb, text) is 'Ends a claimed round of dispatch with the road durations: ranks, offers or assigns (or leaves it unassigned), and records it (service role).';
revoke execute on function public.complete_dispatch(uuid, uuid, jsonb, text) from authenticated;
grant execute on function public.complete_dispatch(uuid, uuid, jsonb, text) to service_role;

-- Section: drivers and their offers

-- Called by public.accept_delivery on the locked delivery: under dispatch (queued or offered), only the
-- holder of a live offer takes it, and its offer is accepted. 404 for a driver never offered this attempt
-- (it cannot see the delivery), 422 naming what became of an offer that is no longer live. One driver's
-- accepts are taken one at a time (its row is locked), since an accept may withdraw its other offers.
create function private.take_offer(delivery public.deliveries)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  me uuid := private.driver_id();
  offer public.dispatch_offers;
begin
  -- Lost to another driver (or given to one): say so, rather than the state machine's
  -- "cannot move from accepted to accepted".
  if delivery.status <> 'pending' and delivery.driver_id is distinct from me
     and delivery.status in ('accepted', 'in_progress', 'completed', 'failed', 'returning', 'returned') then
    raise exception using errcode = 'PT422', message = 'another driver already took this delivery';
  end if;
  if delivery.status <> 'pending' or coalesce(delivery.dispatch_status not in ('queued', 'offered'), true) then
    return;
  end if;
  perform from public.drivers d where d.id = me for no key update;
  select * into offer from public.dispatch_offers o
  where o.delivery_id = delivery.id and o.attempt = delivery.attempts and o.driver_id = me;
  if not found then
    raise exception using errcode = 'PT404', message = 'delivery not found';
  end if;
  if offer.outcome is not null or offer.expires_at <= now() then
    raise exception using errcode = 'PT422', message = case offer.outcome
      when 'declined' then 'the offer of this delivery was declined'
      when 'withdrawn' then 'the offer of this delivery was withdrawn'
      when 'accepted' then 'the offer of this delivery was already accepted'
      else 'the offer of this delivery has expired' end;
  end if;
  update public.dispatch_offers o set outcome = 'accepted', decided_at = now() where o.id = offer.id;
end;
$$;
comment on function private.take_offer(public.deliveries) is 'Lets the calling driver take a delivery under dispatch only with a live offer, which it marks accepted (404 never offered, 422 no longer live).';

-- A driver declines its live offer: the delivery goes to the next round once no offer of this round is live.
-- 404 for a delivery the driver was never offered and cannot see; 422 for one it can see but holds no live
-- offer of (open to every driver, its own, or an offer no longer live).
create function public.decline_delivery(delivery_id uuid)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.drivers());
  me uuid := private.driver_id();
  delivery public.deliveries := private.lock_delivery(decline_delivery.delivery_id, company);
  offer public.dispatch_offers;
begin
  select * into offer from public.dispatch_offers o
  where o.delivery_id = delivery.id and o.attempt = delivery.attempts and o.driver_id = me;
  if not found then
    if (delivery.status = 'pending' and delivery.driver_id is null and private.open_to_all(delivery))
       or (delivery.driver_id = me and delivery.accepted_at is not null) then
      raise exception using errcode = 'PT422', message = 'this delivery was not offered to you';
    end if;
    raise exception using errcode = 'PT404', message = 'delivery not found';
  end if;
  if offer.outcome is not null or offer.expires_at <= now() or delivery.status <> 'pending' then
    raise exception using errcode = 'PT422', message = case offer.outcome
      when 'declined' then 'the offer of this delivery was already declined'
      when 'accepted' then 'the offer of this delivery was accepted'
      when 'withdrawn' then 'the offer of this delivery was withdrawn'
      else 'the offer of this delivery has expired' end;
  end if;
  update public.dispatch_offers o set outcome = 'declined', decided_at = now() where o.id = offer.id;
  perform private.next_round(delivery);
  return private.delivery_row(delivery);
end;
$$;
comment on function public.decline_delivery(uuid) is 'The calling driver declines its live offer of a delivery, which then goes to the next drivers.';
grant execute on function public.decline_delivery(uuid) to authenticated;

-- An offer that ends other than by its driver's accept (declined, expired, or withdrawn: another driver took it,
-- a manager assigned or cancelled it, the driver reached its limit) is told to its driver at once, with the
-- delivery as that driver now reads it (no deadline), so the app drops the offer without asking the server.
create function private.tell_offer_ended()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.broadcast('driver:' || new.driver_id, 'delivery_unavailable',
    private.delivery_json(d) || jsonb_build_object('tracking_token', null, 'tracking_url', null,
      'offer_expires_at', null))
  from public.deliveries d where d.id = new.delivery_id;
  return null;
end;
$$;
comment on function private.tell_offer_ended() is 'Sends delivery_unavailable to the driver of an offer that ended without its accept.';
create trigger dispatch_offers_tell_ended after update of outcome on public.dispatch_offers
  for each row when (old.outcome is null and new.outcome is not null and new.outcome <> 'accepted')
  execute function private.tell_offer_ended();

-- What fires on an offer: its driver's phones are told (19_push.sql, Web Push).
-- A new offer: delivery_offered, with what the notification shows, until the offer's deadline.
create function private.push_offer()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  d public.deliveries;
begin
  select * into d from public.deliveries x where x.id = new.delivery_id;
  perform private.queue_push(new.driver_id, 'delivery_offered', jsonb_build_object(
      'delivery_id', d.id, 'expires_at', new.expires_at, 'origin_address', d.origin_address,
      'destination_address', d.destination_address, 'price', d.price),
    new.expires_at, 'offer-' || left(replace(d.id::text, '-', ''), 26));
  return null;
end;
$$;
comment on function private.push_offer() is 'Trigger: queues delivery_offered for the offered driver''s push subscriptions.';
create trigger dispatch_offers_push after insert on public.dispatch_offers
  for each row execute function private.push_offer();

-- Section: expiry and the job

-- Offers past their deadline are expired, each delivery locked first (as accept and decline lock it), and
-- a delivery left without a live offer goes to its next round. Answers how many offers expired.
create function private.expire_dispatch_offers()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  due uuid;
  delivery public.deliveries;
  expired integer;
  total integer := 0;
begin
  for due in
    select distinct o.delivery_id from public.dispatch_offers o where o.outcome is null and o.expires_at <= now()
  loop
    select * into delivery from public.deliveries d where d.id = due for update;
    update public.dispatch_offers o set outcome = 'expired', decided_at = o.expires_at
    where o.delivery_id = due and o.outcome is null and o.expires_at <= now();
    get diagnostics expired = row_count;
    total := total + expired;
    perform private.next_round(delivery);
  end loop;
  return total;
end;
$$;
comment on function private.expire_dispatch_offers() is 'Expires the offers past their deadline and queues the next round of each delivery left without a live one; how many expired.';

-- Every 2 seconds (pg_cron, below): expiries, then a wake-up when any round is due and unclaimed (a window
-- that came near, a wake-up lost, a claim whose function died).
create function private.dispatch_tick()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  expired integer := private.expire_dispatch_offers();
begin
  if exists (select from private.dispatch_queue q
             where q.due_at <= now() and (q.claimed_until is null or q.claimed_until <= now())) then
    perform private.wake_dispatcher();
  end if;
  return expired;
end;
$$;
comment on function private.dispatch_tick() is 'The dispatch job: expires offers past their deadline and wakes the dispatch function when a round is due.';

select cron.schedule('dispatch-tick', '2 seconds', 'select private.dispatch_tick()');
-- A job every 2 seconds writes 43,200 rows of cron.job_run_details a day: a week of them is kept.
select cron.schedule('purge-cron-history', '41 4 * * *',
  $$delete from cron.job_run_details where end_time < now() - interval '7 days'$$);

-- Section: reads

-- GET /api/v1/deliveries/{id}/dispatch: every round and every offer of a delivery of the caller's company
-- (another company's is 404), oldest first.
create function public.get_delivery_dispatch(delivery_id uuid)
returns public.delivery_dispatch
language plpgsql
stable
set search_path = ''
as $$
declare
  delivery public.deliveries;
begin
  perform private.authorize(variadic private.delivery_managers());
  delivery := private.visible_delivery(get_delivery_dispatch.delivery_id);
  return row(
    delivery.id,
    delivery.dispatch_status,
    coalesce((select array_agg(row(r.round, r.attempt, r.mode, r.created_at, r.ranked_by, r.routing_error, r.outcome,
        r.driver_id, r.candidates)::public.dispatch_round order by r.attempt, r.round)
      from public.dispatch_rounds r where r.delivery_id = delivery.id), '{}'),
    coalesce((select array_agg(row(o.id, o.driver_id, d.name, o.attempt, o.round, o.offered_at, o.expires_at, o.outcome,
        o.decided_at)::public.dispatch_offer order by o.offered_at, d.name, o.id)
      from public.dispatch_offers o join public.drivers d on d.id = o.driver_id
      where o.delivery_id = delivery.id), '{}')
  )::public.delivery_dispatch;
end;
$$;
comment on function public.get_delivery_dispatch(uuid) is 'Every round and offer of one delivery of the caller''s company, oldest first (owner, admin, legacy admin).';
grant execute on function public.get_delivery_dispatch(uuid) to authenticated;

-- Section: grants of the helpers

grant execute on function private.dispatch_settings_of(uuid) to authenticated, service_role;
grant execute on function private.dispatch_candidates(public.deliveries, public.dispatch_settings_set),
  private.rank_candidates(public.dispatch_candidate[], jsonb, boolean)
  to service_role;
