-- Routes (docs/routes.md): one driver's ordered stops, a pickup at each delivery's origin before its drop-off
-- at its destination, planned by an optimizer at the edge (functions/api/planning.ts), adjusted by the
-- dispatcher, published to the driver, followed as the driver starts, completes and fails its deliveries.
--
-- The edge computes (the routing table, the optimizer, the timing); every write is here, under the caller's
-- authorization and the rows' locks: draft routes from a plan, a new order of stops, publish (every delivery
-- assigned to the driver, in order), cancel (what was not picked up goes back to pending), and the stops'
-- and the route's status following the deliveries'. A delivery is in at most one route that is neither
-- cancelled nor completed: a unique index says so, not a check in code. Plans that need more than a request's
-- budget run as jobs (public.route_plans). Dispatch's `routes` mode inserts a new pending delivery into the
-- live route where it adds the least duration (the dispatch function computes it; public.complete_route_insertion
-- writes it).

-- Section: types (02_company.sql says why functions return them)

create type public.route_stop as (
  seq integer,
  delivery_id uuid,
  kind text,
  lat double precision,
  lng double precision,
  address text,
  arrival_at timestamptz,
  window_start timestamptz,
  window_end timestamptz,
  status text,
  recipient_name text,
  size integer,
  service_s integer
);
comment on type public.route_stop is 'One stop of a route: the pickup (origin) or drop-off (destination) of a delivery, when the route arrives, and its status.';

create type public.route as (
  id uuid,
  company_id uuid,
  status text,
  driver_id uuid,
  start public.geo_point,
  "end" public.geo_point,
  starts_at timestamptz,
  ends_at timestamptz,
  shift_end timestamptz,
  capacity integer,
  distance_m integer,
  duration_s integer,
  engine text,
  violations jsonb,
  stops public.route_stop[],
  created_at timestamptz,
  updated_at timestamptz,
  published_at timestamptz
);
comment on type public.route is 'A route as the API returns it, with its stops in order.';

create type public.route_page as (items public.route[], next_cursor text);
comment on type public.route_page is 'One page of routes, newest first; next_cursor is null on the last page.';

create type public.plan_delivery as (
  id uuid,
  status text,
  origin public.geo_point,
  destination public.geo_point,
  window_start timestamptz,
  window_end timestamptz,
  size integer,
  service_s integer
);
comment on type public.plan_delivery is 'What the optimizer needs of a delivery: its two places, its window, its size and its drop-off time.';

create type public.plan_driver as (
  id uuid,
  name text,
  position public.geo_point,
  position_at timestamptz,
  capacity integer
);
comment on type public.plan_driver is 'What the optimizer needs of a driver: its last position and its vehicle''s capacity.';

create type public.plan_input as (deliveries public.plan_delivery[], drivers public.plan_driver[]);
comment on type public.plan_input is 'The deliveries and drivers of a plan, read and checked under the caller''s authorization.';

create type public.route_plan as (
  id uuid,
  status text,
  progress double precision,
  result jsonb,
  error text,
  created_at timestamptz,
  updated_at timestamptz
);
comment on type public.route_plan is 'A plan computed as a job: running, done (result as POST /routes/plan answers) or failed.';

-- Section: tables

create table public.routes (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  driver_id uuid not null references public.drivers (id) on delete cascade,
  status text not null default 'draft'
    check (status in ('draft', 'published', 'in_progress', 'completed', 'cancelled')),
  start_lat double precision not null check (start_lat between -90 and 90),
  start_lng double precision not null check (start_lng between -180 and 180),
  end_lat double precision check (end_lat between -90 and 90),
  end_lng double precision check (end_lng between -180 and 180),
  -- When the route leaves (the shift's start), when it is planned to be over, and the shift's end it keeps.
  starts_at timestamptz not null,
  ends_at timestamptz not null,
  shift_end timestamptz not null,
  -- Units the vehicle carries at most at any moment (the driver's vehicle unless the plan said otherwise).
  capacity integer not null check (capacity between 1 and 100000),
  distance_m integer not null default 0 check (distance_m >= 0),
  duration_s integer not null default 0 check (duration_s >= 0),
  engine text not null check (engine in ('vroom', 'builtin')),
  -- What the last timing found broken ([{seq, kind, detail}]): a dispatcher's order may break a window.
  violations jsonb not null default '[]' check (jsonb_typeof(violations) = 'array'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  published_at timestamptz,
  completed_at timestamptz,
  cancelled_at timestamptz,
  -- The last re-timing of the stops still to come from the driver's position (private.claim_route_timing): when it
  -- was claimed and where from (as deliveries' eta_requested_at and eta_from_* are).
  timing_requested_at timestamptz,
  timed_from_lat double precision,
  timed_from_lng double precision,
  check ((end_lat is null) = (end_lng is null)),
  check (starts_at <= shift_end)
);
comment on table public.routes is 'One driver''s ordered stops for a trip: draft, published, in progress, completed or cancelled (docs/routes.md).';
create index routes_company_created_idx on public.routes (company_id, created_at desc, id desc);
create index routes_driver_created_idx on public.routes (driver_id, created_at desc, id desc);
-- A driver has at most one live route (publish answers 409 naming it first).
create unique index routes_one_live_per_driver on public.routes (driver_id) where status in ('published', 'in_progress');
alter table public.routes enable row level security;

create table public.route_stops (
  route_id uuid not null references public.routes (id) on delete cascade,
  seq integer not null check (seq >= 1),
  company_id uuid not null,
  delivery_id uuid not null references public.deliveries (id) on delete cascade,
  kind text not null check (kind in ('pickup', 'dropoff')),
  arrival_at timestamptz,
  status text not null default 'pending' check (status in ('pending', 'done', 'failed', 'skipped')),
  -- True while the route is neither cancelled nor completed (kept by private.set_route_status).
  live boolean not null default true,
  primary key (route_id, seq),
  unique (route_id, delivery_id, kind)
);
comment on table public.route_stops is 'The stops of each route in order: a delivery''s pickup and its drop-off.';
-- A delivery belongs to at most one route that is neither cancelled nor completed.
create unique index route_stops_one_live_route on public.route_stops (delivery_id, kind) where live;
create index route_stops_delivery_idx on public.route_stops (delivery_id);
alter table public.route_stops enable row level security;

create table public.route_plans (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  created_by uuid,
  status text not null default 'running' check (status in ('running', 'done', 'failed')),
  progress double precision not null default 0 check (progress between 0 and 1),
  request jsonb not null,
  result jsonb,
  error text check (length(error) <= 1000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- The worker holds the job until then, and extends it while it runs (record_route_plan): a job still running
  -- past it lost its worker and is failed with the reason (private.expire_route_plans).
  lease_until timestamptz not null default now() + interval '30 seconds'
);
comment on table public.route_plans is 'Plans computed as jobs (POST /api/v1/routes/plan beyond the request''s budget), their progress and result.';
create index route_plans_company_idx on public.route_plans (company_id, created_at desc);
create index route_plans_running_lease_idx on public.route_plans (lease_until) where status = 'running';
alter table public.route_plans enable row level security;

-- Section: policies

create function private.route_managers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return private.company_managers() || private.integrations(); end; $$;
comment on function private.route_managers() is 'Who plans, changes, publishes and cancels routes: owner, company admin, and API keys (the edge asks for the scope routes:write).';
grant execute on function private.route_managers() to authenticated, service_role;

-- The routes a driver may read: its own, once published (a draft, and a draft cancelled, is the dispatcher's).
create function private.my_route_ids()
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return array(select r.id from public.routes r where r.driver_id = private.driver_id() and r.published_at is not null);
end;
$$;
comment on function private.my_route_ids() is 'The calling driver''s routes that were published.';
grant execute on function private.my_route_ids() to authenticated, service_role;

create policy routes_select_visible on public.routes
  for select to authenticated
  using (
    company_id = (select private.company_of(private.route_managers()))
    or array[id] <@ (select private.my_route_ids())
  );
create policy route_stops_select_visible on public.route_stops
  for select to authenticated
  using (
    company_id = (select private.company_of(private.route_managers()))
    or array[route_id] <@ (select private.my_route_ids())
  );
create policy route_plans_select_managers on public.route_plans
  for select to authenticated
  using (company_id = (select private.company_of(private.route_managers())));
-- Rows change only through the functions below.
grant select on public.routes, public.route_stops, public.route_plans to authenticated;
grant all on public.routes, public.route_stops, public.route_plans to service_role;

-- Section: reading

-- As the caller: the stops' deliveries are read under their own policies (a route's driver has them all).
create function private.route_row(r public.routes)
returns public.route
language plpgsql
stable
set search_path = ''
as $$
begin
  return row(r.id, r.company_id, r.status, r.driver_id, row(r.start_lat, r.start_lng)::public.geo_point,
    case when r.end_lat is not null then row(r.end_lat, r.end_lng)::public.geo_point end,
    r.starts_at, r.ends_at, r.shift_end, r.capacity, r.distance_m, r.duration_s, r.engine, r.violations,
    coalesce((select array_agg(row(s.seq, s.delivery_id, s.kind,
        case s.kind when 'pickup' then d.origin_lat else d.destination_lat end,
        case s.kind when 'pickup' then d.origin_lng else d.destination_lng end,
        case s.kind when 'pickup' then d.origin_address else d.destination_address end,
        s.arrival_at, d.window_start, d.window_end, s.status,
        case s.kind when 'dropoff' then d.recipient_name end, d.size, d.service_s)::public.route_stop order by s.seq)
      from public.route_stops s join public.deliveries d on d.id = s.delivery_id
      where s.route_id = r.id), '{}'),
    r.created_at, r.updated_at, r.published_at)::public.route;
end;
$$;
comment on function private.route_row(public.routes) is 'A route as the API shows it, with its stops in order.';

create function public.get_route(route_id uuid)
returns public.route
language plpgsql
stable
set search_path = ''
as $$
declare
  route public.routes;
begin
  perform private.authorize(variadic private.route_readers());
  select * into route from public.routes r where r.id = get_route.route_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'route not found';
  end if;
  return private.route_row(route);
end;
$$;
comment on function public.get_route(uuid) is 'One route the caller may see (a manager the company''s, a driver its own published ones; 404 otherwise).';
grant execute on function public.get_route(uuid) to authenticated;

create function public.list_routes(day date default null, status text default null, driver_id uuid default null,
  page_limit integer default 20, cursor text default null)
returns public.route_page
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_custom_plan
as $$
declare
  company uuid := private.authorize(variadic private.route_readers());
  day_start timestamptz := list_routes.day::timestamp at time zone 'America/Sao_Paulo';
  after_key timestamptz;
  after_id uuid;
  rows public.route[];
begin
  perform private.check_page_limit(list_routes.page_limit);
  if list_routes.cursor is not null then
    select c.sort_key, c.id into after_key, after_id from private.decode_cursor(list_routes.cursor) c;
  end if;
  -- Row-level security decides what the caller sees; the filters narrow it.
  select coalesce(array_agg(private.route_row(r) order by r.created_at desc, r.id desc), '{}') into rows
  from (
    select * from public.routes r
    where r.company_id = company
      and (list_routes.status is null or r.status = list_routes.status)
      and (list_routes.driver_id is null or r.driver_id = list_routes.driver_id)
      and (list_routes.day is null or (r.starts_at < day_start + interval '1 day' and r.ends_at >= day_start))
      and (list_routes.cursor is null or (r.created_at, r.id) < (after_key, after_id))
    order by r.created_at desc, r.id desc
    limit list_routes.page_limit + 1
  ) r;
  return (rows[1:list_routes.page_limit], private.next_cursor(rows, list_routes.page_limit, 'created_at'))
    ::public.route_page;
end;
$$;
comment on function public.list_routes(date, text, uuid, integer, text) is 'The routes the caller may see, newest first, one page, by São Paulo day, status and driver.';
grant execute on function public.list_routes(date, text, uuid, integer, text) to authenticated;

-- Who reads routes: the company managers every route of the company, a driver its own (the policies say which).
create function private.route_readers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return private.route_managers() || private.drivers(); end; $$;
comment on function private.route_readers() is 'Who reads routes: owner, company admin and API keys the company''s, a driver its own published ones.';
grant execute on function private.route_readers() to authenticated, service_role;

-- Section: moves

-- The one list of a route's moves.
create function private.route_moves()
returns table (move text, from_statuses text[], to_status text)
language plpgsql
immutable
set search_path = ''
as $$
begin
  return query values
    ('publish', array['draft'], 'published'),
    ('start', array['published'], 'in_progress'),
    ('complete', array['published', 'in_progress'], 'completed'),
    ('cancel', array['draft', 'published', 'in_progress'], 'cancelled');
end;
$$;
comment on function private.route_moves() is 'The allowed route moves: for each, the states it may start from and the state it leads to.';

-- Moves a locked route, or raises PT422 naming both states. A route that ends frees its deliveries for another.
create function private.move_route(route public.routes, move text)
returns public.routes
language plpgsql
set search_path = ''
as $$
declare
  allowed record;
  moved public.routes;
begin
  select m.from_statuses, m.to_status into allowed from private.route_moves() m where m.move = move_route.move;
  if not route.status = any (allowed.from_statuses) then
    raise exception using errcode = 'PT422',
      message = format('route cannot move from %s to %s', route.status, allowed.to_status);
  end if;
  update public.routes r set
    status = allowed.to_status,
    published_at = case when allowed.to_status = 'published' then now() else r.published_at end,
    completed_at = case when allowed.to_status = 'completed' then now() else r.completed_at end,
    cancelled_at = case when allowed.to_status = 'cancelled' then now() else r.cancelled_at end,
    updated_at = now()
  where r.id = route.id
  returning * into moved;
  if allowed.to_status in ('completed', 'cancelled') then
    update public.route_stops s set live = false where s.route_id = route.id;
  end if;
  -- route.published and route.completed to the company's webhook endpoints (18_integrations.sql), in this transaction.
  if allowed.to_status in ('published', 'completed') then
    perform private.queue_webhook_event(moved.company_id, 'route.' || allowed.to_status,
      to_jsonb(private.route_row(moved)));
  end if;
  return moved;
end;
$$;
comment on function private.move_route(public.routes, text) is 'The only writer of a route''s status: applies an allowed move, or raises PT422.';

-- One route of the company, locked; 404 when there is none.
create function private.lock_route(route_id uuid, company_id uuid)
returns public.routes
language plpgsql
set search_path = ''
as $$
declare
  route public.routes;
begin
  select * into route from public.routes r
  where r.id = lock_route.route_id and r.company_id = lock_route.company_id
  for update;
  if not found then
    raise exception using errcode = 'PT404', message = 'route not found';
  end if;
  return route;
end;
$$;
comment on function private.lock_route(uuid, uuid) is 'Locks one route of a company so that its changes serialize; 404 when absent.';

-- route_updated (or another event) to the route's driver, once it is theirs to see.
create function private.tell_route(route public.routes, event text)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if route.published_at is not null then
    perform private.broadcast('driver:' || route.driver_id, tell_route.event, to_jsonb(private.route_row(route)));
  end if;
end;
$$;
comment on function private.tell_route(public.routes, text) is 'Sends the route (route_published, route_updated) to its driver''s topic, once it was published.';

-- Section: planning

-- The deliveries and drivers of a plan, checked: each named driver active in the company (404, 422); the named
-- deliveries pending in the company and in no live route (404, 422, 409 naming the route), or without names
-- every such delivery whose window (if any) meets the São Paulo day `day`.
create function public.route_plan_input(driver_ids uuid[], delivery_ids uuid[] default null, day date default null)
returns public.plan_input
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.route_managers());
  day_start timestamptz := coalesce(route_plan_input.day, (now() at time zone 'America/Sao_Paulo')::date)::timestamp
    at time zone 'America/Sao_Paulo';
  item uuid;
  delivery public.deliveries;
  held uuid;
  chosen public.deliveries[];
  answer public.plan_input;
begin
  foreach item in array route_plan_input.driver_ids loop
    perform private.check_assignable_driver(company, item);
  end loop;
  if route_plan_input.delivery_ids is not null then
    foreach item in array route_plan_input.delivery_ids loop
      select * into delivery from public.deliveries d where d.id = item and d.company_id = company;
      if not found then
        raise exception using errcode = 'PT404', message = format('delivery not found: %s', item);
      end if;
      if delivery.status <> 'pending' then
        raise exception using errcode = 'PT422', message = format('delivery %s is %s, not pending', item, delivery.status);
      end if;
      select s.route_id into held from public.route_stops s where s.delivery_id = item and s.live limit 1;
      if held is not null then
        raise exception using errcode = 'PT409', message = format('delivery %s is already in route %s', item, held);
      end if;
      chosen := chosen || delivery;
    end loop;
  else
    chosen := array(
      select d from public.deliveries d
      where d.company_id = company and d.status = 'pending'
        and not exists (select from public.route_stops s where s.delivery_id = d.id and s.live)
        and coalesce(d.window_start, day_start) < day_start + interval '1 day'
        and coalesce(d.window_end, day_start + interval '1 day') >= day_start
      order by d.created_at, d.id
      limit 1001);
    if cardinality(chosen) > 1000 then
      raise exception using errcode = 'PT422', message = 'more than 1000 deliveries to plan: name them in delivery_ids';
    end if;
  end if;
  answer.deliveries := coalesce((select array_agg(row(d.id, d.status, row(d.origin_lat, d.origin_lng)::public.geo_point,
      row(d.destination_lat, d.destination_lng)::public.geo_point, d.window_start, d.window_end, d.size, d.service_s)
      ::public.plan_delivery) from unnest(chosen) d), '{}');
  answer.drivers := coalesce((select array_agg(row(dr.id, dr.name,
      case when l.driver_id is not null then row(l.lat, l.lng)::public.geo_point end, l.updated_at,
      coalesce(dr.vehicle_capacity, private.vehicle_capacity(dr.vehicle_type)))::public.plan_driver order by o.ord)
    from unnest(route_plan_input.driver_ids) with ordinality o (id, ord)
    join public.drivers dr on dr.id = o.id
    left join public.driver_locations l on l.driver_id = dr.id), '{}');
  return answer;
end;
$$;
comment on function public.route_plan_input(uuid[], uuid[], date) is 'The deliveries and drivers a plan works on, checked (owner, admin).';
grant execute on function public.route_plan_input(uuid[], uuid[], date) to authenticated;

-- Writes a route's stops (the route locked): `stops` in order, [{delivery_id, kind, arrival_at}].
create function private.write_stops(route public.routes, stops jsonb)
returns void
language plpgsql
set search_path = ''
as $$
begin
  delete from public.route_stops s where s.route_id = route.id;
  insert into public.route_stops (route_id, seq, company_id, delivery_id, kind, arrival_at, status, live)
  select route.id, x.ord, route.company_id, (x.value ->> 'delivery_id')::uuid, x.value ->> 'kind',
    (x.value ->> 'arrival_at')::timestamptz, coalesce(x.value ->> 'status', 'pending'), true
  from jsonb_array_elements(write_stops.stops) with ordinality x (value, ord);
end;
$$;
comment on function private.write_stops(public.routes, jsonb) is 'Replaces the stops of a locked route with the given ones, in order.';

-- Checks an order of stops for a route of the company: each delivery the company's (404), its pickup and its
-- drop-off each once (422), the pickup first (422), and each delivery either already in this route, in
-- another draft route of the company (it leaves it), or pending in no live route (it joins). A delivery of a
-- published route cannot leave it here (422: cancel the route). Answers the deliveries that join or move.
create function private.check_stops(route public.routes, stops jsonb)
returns uuid[]
language plpgsql
stable
set search_path = ''
as $$
declare
  stop record;
  delivery public.deliveries;
  held public.routes;
  joining uuid[] := '{}';
  missing uuid;
begin
  if jsonb_typeof(check_stops.stops) <> 'array' then
    raise exception using errcode = 'PT400', message = 'stops must be an array';
  end if;
  for stop in
    select (x.value ->> 'delivery_id')::uuid as delivery_id, x.value ->> 'kind' as kind, x.ord
    from jsonb_array_elements(check_stops.stops) with ordinality x (value, ord)
  loop
    if stop.kind is null or stop.kind not in ('pickup', 'dropoff') then
      raise exception using errcode = 'PT400', message = 'a stop''s kind is pickup or dropoff';
    end if;
    if (select count(*) from jsonb_array_elements(check_stops.stops) y
        where (y.value ->> 'delivery_id')::uuid = stop.delivery_id and y.value ->> 'kind' = stop.kind) > 1 then
      raise exception using errcode = 'PT422',
        message = format('the %s of delivery %s is listed twice', stop.kind, stop.delivery_id);
    end if;
    if stop.kind = 'dropoff' and not exists (
      select from jsonb_array_elements(check_stops.stops) with ordinality y (value, ord)
      where (y.value ->> 'delivery_id')::uuid = stop.delivery_id and y.value ->> 'kind' = 'pickup' and y.ord < stop.ord)
    then
      if exists (select from jsonb_array_elements(check_stops.stops) y
                 where (y.value ->> 'delivery_id')::uuid = stop.delivery_id and y.value ->> 'kind' = 'pickup') then
        raise exception using errcode = 'PT422',
          message = format('the pickup of delivery %s comes after its drop-off', stop.delivery_id);
      end if;
      raise exception using errcode = 'PT422', message = format('delivery %s has a drop-off without its pickup', stop.delivery_id);
    end if;
    if stop.kind = 'pickup' and not exists (
      select from jsonb_array_elements(check_stops.stops) y
      where (y.value ->> 'delivery_id')::uuid = stop.delivery_id and y.value ->> 'kind' = 'dropoff') then
      raise exception using errcode = 'PT422', message = format('delivery %s has a pickup without its drop-off', stop.delivery_id);
    end if;
    if stop.kind = 'dropoff' then
      continue;
    end if;
    select * into delivery from public.deliveries d where d.id = stop.delivery_id and d.company_id = route.company_id;
    if not found then
      raise exception using errcode = 'PT404', message = format('delivery not found: %s', stop.delivery_id);
    end if;
    select r.* into held from public.route_stops s join public.routes r on r.id = s.route_id
    where s.delivery_id = delivery.id and s.live limit 1;
    if held.id = route.id then
      continue;
    end if;
    if held.id is not null and held.status <> 'draft' then
      raise exception using errcode = 'PT409',
        message = format('delivery %s is in route %s, which is %s', delivery.id, held.id, held.status);
    end if;
    if delivery.status <> 'pending' then
      raise exception using errcode = 'PT422', message = format('delivery %s is %s, not pending', delivery.id, delivery.status);
    end if;
    joining := joining || delivery.id;
  end loop;
  if route.status <> 'draft' then
    select s.delivery_id into missing from public.route_stops s
    where s.route_id = route.id
      and not exists (select from jsonb_array_elements(check_stops.stops) y where (y.value ->> 'delivery_id')::uuid = s.delivery_id)
    limit 1;
    if missing is not null then
      raise exception using errcode = 'PT422',
        message = format('delivery %s cannot leave a route that is %s: cancel the route instead', missing, route.status);
    end if;
  end if;
  return joining;
end;
$$;
comment on function private.check_stops(public.routes, jsonb) is 'Checks a new order of stops of a route (404, 409, 422 naming the delivery) and answers the deliveries that join it.';

-- Draft routes from a plan the edge computed: [{driver_id, start {lat, lng}, end, starts_at, ends_at, shift_end,
-- capacity, distance_m, duration_s, violations, stops: [{delivery_id, kind, arrival_at}]}]. Each delivery must
-- still be pending and in no live route (409 naming it: planned twice at once).
create function public.create_routes(engine text, routes jsonb)
returns public.route[]
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.route_managers());
  planned jsonb;
  route public.routes;
  made public.route[] := '{}';
begin
  if create_routes.engine not in ('vroom', 'builtin') then
    raise exception using errcode = 'PT400', message = 'engine must be vroom or builtin';
  end if;
  for planned in select value from jsonb_array_elements(create_routes.routes) loop
    perform private.check_assignable_driver(company, (planned ->> 'driver_id')::uuid);
    insert into public.routes (company_id, driver_id, start_lat, start_lng, end_lat, end_lng, starts_at, ends_at,
      shift_end, capacity, distance_m, duration_s, engine, violations)
    values (company, (planned ->> 'driver_id')::uuid, (planned -> 'start' ->> 'lat')::double precision,
      (planned -> 'start' ->> 'lng')::double precision, (planned -> 'end' ->> 'lat')::double precision,
      (planned -> 'end' ->> 'lng')::double precision, (planned ->> 'starts_at')::timestamptz,
      (planned ->> 'ends_at')::timestamptz, (planned ->> 'shift_end')::timestamptz, (planned ->> 'capacity')::integer,
      round((planned ->> 'distance_m')::numeric), round((planned ->> 'duration_s')::numeric), create_routes.engine,
      coalesce(planned -> 'violations', '[]'))
    returning * into route;
    perform private.check_stops(route, coalesce(planned -> 'stops', '[]'));
    begin
      perform private.write_stops(route, coalesce(planned -> 'stops', '[]'));
    exception when unique_violation then
      raise exception using errcode = 'PT409', message = 'a delivery of this plan was put in another route meanwhile; plan again';
    end;
    made := made || private.route_row(route);
  end loop;
  return made;
end;
$$;
comment on function public.create_routes(text, jsonb) is 'Creates draft routes from a plan computed at the edge (owner, admin); the deliveries stay pending.';
grant execute on function public.create_routes(text, jsonb) to authenticated;

-- What timing a route's new order needs: the route (its start, shift and capacity) and the deliveries of the
-- order, after the checks of private.check_stops.
create function public.route_stops_input(route_id uuid, stops jsonb)
returns public.plan_input
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.route_managers());
  route public.routes;
  answer public.plan_input;
begin
  select * into route from public.routes r where r.id = route_stops_input.route_id and r.company_id = company;
  if not found then
    raise exception using errcode = 'PT404', message = 'route not found';
  end if;
  if route.status not in ('draft', 'published') then
    raise exception using errcode = 'PT422', message = format('the stops of a route that is %s cannot change', route.status);
  end if;
  perform private.check_stops(route, route_stops_input.stops);
  answer.deliveries := coalesce((select array_agg(row(d.id, d.status, row(d.origin_lat, d.origin_lng)::public.geo_point,
      row(d.destination_lat, d.destination_lng)::public.geo_point, d.window_start, d.window_end, d.size, d.service_s)
      ::public.plan_delivery)
    from public.deliveries d
    where d.id in (select (x ->> 'delivery_id')::uuid from jsonb_array_elements(route_stops_input.stops) x)), '{}');
  return answer;
end;
$$;
comment on function public.route_stops_input(uuid, jsonb) is 'Checks a new order of a route''s stops and answers the deliveries it holds, for timing (owner, admin).';
grant execute on function public.route_stops_input(uuid, jsonb) to authenticated;

-- A new order of a route's stops, timed at the edge. Deliveries from another draft route leave it (its stops
-- renumbered); in a published route a delivery that joins is assigned to the driver at once (as assign does),
-- and the driver gets route_updated.
create function public.set_route_stops(route_id uuid, stops jsonb, distance_m integer, duration_s integer,
  ends_at timestamptz, violations jsonb)
returns public.route
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.route_managers());
  route public.routes := private.lock_route(set_route_stops.route_id, company);
  joining uuid[];
  joined uuid;
  left_route public.routes;
  delivery public.deliveries;
  before jsonb := private.route_recipients(route.id);
begin
  if route.status not in ('draft', 'published') then
    raise exception using errcode = 'PT422', message = format('the stops of a route that is %s cannot change', route.status);
  end if;
  joining := private.check_stops(route, set_route_stops.stops);
  foreach joined in array joining loop
    select r.* into left_route from public.route_stops s join public.routes r on r.id = s.route_id
    where s.delivery_id = joined and s.live and r.id <> route.id limit 1;
    if left_route.id is not null then
      perform private.lock_route(left_route.id, company);
      delete from public.route_stops s where s.route_id = left_route.id and s.delivery_id = joined;
      -- Renumbered in two steps: the primary key (route_id, seq) is checked row by row, and seq >= 1 always.
      update public.route_stops s set seq = s.seq + 1000000 where s.route_id = left_route.id;
      update public.route_stops s set seq = n.rn
      from (select x.seq, row_number() over (order by x.seq) as rn from public.route_stops x
            where x.route_id = left_route.id) n
      where s.route_id = left_route.id and s.seq = n.seq;
      update public.routes r set updated_at = now() where r.id = left_route.id;
    end if;
    if route.status = 'published' then
      delivery := private.lock_delivery(joined, company);
      perform private.move_delivery(delivery, 'assign', (select auth.uid()), driver_id => route.driver_id);
    end if;
  end loop;
  perform private.write_stops(route, set_route_stops.stops);
  update public.routes r set distance_m = greatest(set_route_stops.distance_m, 0),
    duration_s = greatest(set_route_stops.duration_s, 0), ends_at = coalesce(set_route_stops.ends_at, r.ends_at),
    violations = coalesce(set_route_stops.violations, '[]'), updated_at = now()
  where r.id = route.id
  returning * into route;
  perform private.tell_route(route, 'route_updated');
  perform private.tell_route_recipients(route.id, before);
  return private.route_row(route);
end;
$$;
comment on function public.set_route_stops(uuid, jsonb, integer, integer, timestamptz, jsonb) is 'Sets the order of a draft or published route''s stops, timed at the edge (owner, admin).';
grant execute on function public.set_route_stops(uuid, jsonb, integer, integer, timestamptz, jsonb) to authenticated;

-- Section: publish and cancel

-- Every delivery of a draft goes to its driver, in the route's order, as assign gives it (a route is one unit of
-- work: max_active_per_driver does not limit it). 409 naming a delivery taken, cancelled or moved meanwhile, and
-- for a driver that already has a live route.
create function public.publish_route(route_id uuid)
returns public.route
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.route_managers());
  route public.routes := private.lock_route(publish_route.route_id, company);
  live uuid;
  stop record;
  delivery public.deliveries;
begin
  if route.status <> 'draft' then
    raise exception using errcode = 'PT422', message = format('route cannot move from %s to published', route.status);
  end if;
  perform private.check_assignable_driver(company, route.driver_id);
  -- The driver's row orders two publishes for one driver.
  perform from public.drivers d where d.id = route.driver_id for no key update;
  select r.id into live from public.routes r
  where r.driver_id = route.driver_id and r.status in ('published', 'in_progress') and r.id <> route.id;
  if live is not null then
    raise exception using errcode = 'PT409', message = format('the driver already has a live route: %s', live);
  end if;
  if not exists (select from public.route_stops s where s.route_id = route.id) then
    raise exception using errcode = 'PT422', message = 'a route without stops cannot be published';
  end if;
  for stop in
    select s.delivery_id from public.route_stops s where s.route_id = route.id and s.kind = 'pickup' order by s.seq
  loop
    delivery := private.lock_delivery(stop.delivery_id, company);
    if delivery.status <> 'pending' or delivery.driver_id is not null then
      raise exception using errcode = 'PT409', message = format('delivery %s was %s meanwhile', delivery.id,
        case delivery.status when 'cancelled' then 'cancelled' when 'pending' then 'given to a driver' else 'taken' end);
    end if;
    perform private.move_delivery(delivery, 'assign', (select auth.uid()), driver_id => route.driver_id);
  end loop;
  route := private.move_route(route, 'publish');
  perform private.tell_route(route, 'route_published');
  -- Each recipient now has a place in the route (the assign's own tracking_updated came before it was published).
  perform private.tell_route_recipients(route.id, '{}');
  return private.route_row(route);
end;
$$;
comment on function public.publish_route(uuid) is 'Publishes a draft route: each delivery assigned to its driver in order, route_published to the driver (owner, admin).';
grant execute on function public.publish_route(uuid) to authenticated;

-- Cancels a route; its deliveries not yet picked up (accepted) go back to pending, to be planned or dispatched
-- again; those picked up stay with the driver.
create function public.cancel_route(route_id uuid)
returns public.route
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.route_managers());
  route public.routes := private.lock_route(cancel_route.route_id, company);
  stop record;
  delivery public.deliveries;
  was text := route.status;
  before jsonb := private.route_recipients(route.id);
begin
  route := private.move_route(route, 'cancel');
  update public.route_stops s set status = 'skipped' where s.route_id = route.id and s.status = 'pending';
  if was <> 'draft' then
    for stop in
      select s.delivery_id from public.route_stops s where s.route_id = route.id and s.kind = 'pickup' order by s.seq
    loop
      delivery := private.lock_delivery(stop.delivery_id, company);
      if delivery.status = 'accepted' and delivery.driver_id = route.driver_id then
        perform private.move_delivery(delivery, 'unassign', (select auth.uid()));
      end if;
    end loop;
  end if;
  perform private.tell_route(route, 'route_updated');
  perform private.tell_route_recipients(route.id, before);
  return private.route_row(route);
end;
$$;
comment on function public.cancel_route(uuid) is 'Cancels a route; its deliveries not yet picked up go back to pending (owner, admin).';
grant execute on function public.cancel_route(uuid) to authenticated;

-- What fires on a route: its driver's phones are told it was published (19_push.sql, Web Push).
-- A route published: route_published, for an hour.
create function private.push_route()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.queue_push(new.driver_id, 'route_published', jsonb_build_object(
      'route_id', new.id, 'starts_at', new.starts_at,
      'stops', (select count(*) from public.route_stops s where s.route_id = new.id)),
    now() + interval '1 hour', 'route-' || left(replace(new.id::text, '-', ''), 26));
  return null;
end;
$$;
comment on function private.push_route() is 'Trigger: queues route_published for the route''s driver''s push subscriptions.';
create trigger routes_push_published after update of published_at on public.routes
  for each row when (old.published_at is null and new.published_at is not null)
  execute function private.push_route();

-- Section: following the deliveries

-- After a delivery's status changes: its stop in a published or in-progress route follows (start: the pickup
-- done; complete: the drop-off done; fail: the drop-off failed; cancelled or back to pending: what is left
-- skipped); the route is in progress from its first stop done and completed once no stop is pending; the
-- driver gets route_updated.
create function private.follow_route_stops()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  route public.routes;
  changed integer := 0;
  before jsonb;
begin
  select r.* into route from public.route_stops s join public.routes r on r.id = s.route_id
  where s.delivery_id = new.id and s.live and r.status in ('published', 'in_progress')
  limit 1;
  if route.id is null then
    return null;
  end if;
  select * into route from public.routes r where r.id = route.id for update;
  before := private.route_recipients(route.id);
  if new.status = 'in_progress' then
    update public.route_stops s set status = 'done'
    where s.route_id = route.id and s.delivery_id = new.id and s.kind = 'pickup' and s.status = 'pending';
    get diagnostics changed = row_count;
  elsif new.status in ('completed', 'failed') then
    update public.route_stops s set status = case new.status when 'completed' then 'done' else 'failed' end
    where s.route_id = route.id and s.delivery_id = new.id and s.status = 'pending'
      and (s.kind = 'dropoff' or new.status = 'completed');
    get diagnostics changed = row_count;
  elsif new.status in ('cancelled', 'pending') then
    update public.route_stops s set status = 'skipped'
    where s.route_id = route.id and s.delivery_id = new.id and s.status = 'pending';
    get diagnostics changed = row_count;
  end if;
  if changed = 0 then
    return null;
  end if;
  if route.status = 'published'
     and exists (select from public.route_stops s where s.route_id = route.id and s.status in ('done', 'failed')) then
    route := private.move_route(route, 'start');
  end if;
  if not exists (select from public.route_stops s where s.route_id = route.id and s.status = 'pending') then
    route := private.move_route(route, 'complete');
  else
    update public.routes r set updated_at = now() where r.id = route.id returning * into route;
  end if;
  perform private.tell_route(route, 'route_updated');
  -- The recipients after this drop-off have one stop fewer before theirs.
  perform private.tell_route_recipients(route.id, before);
  return null;
end;
$$;
comment on function private.follow_route_stops() is 'Keeps the stops and the status of a live route in step with its deliveries'' moves.';
create trigger deliveries_follow_route_stops after update of status on public.deliveries
  for each row when (old.status is distinct from new.status)
  execute function private.follow_route_stops();

-- Section: plans as jobs

create function private.route_plan_row(p public.route_plans)
returns public.route_plan
language plpgsql
stable
set search_path = ''
as $$
begin
  return row(p.id, p.status, p.progress, p.result, p.error, p.created_at, p.updated_at)::public.route_plan;
end;
$$;
comment on function private.route_plan_row(public.route_plans) is 'A plan job as the API shows it.';
grant execute on function private.route_plan_row(public.route_plans) to authenticated, service_role;

-- How long a plan job's worker holds it without a word (the worker speaks at least every 10 s:
-- functions/api/routes/routes.ts): past it the worker is taken for dead.
create function private.route_plan_lease()
returns interval
language plpgsql
immutable
set search_path = ''
as $$ begin return interval '30 seconds'; end; $$;
comment on function private.route_plan_lease() is 'How long a plan job''s worker holds it between two words (progress or heartbeat).';

-- Plan jobs still running past their lease lost their worker (the function was stopped, the machine died): each is
-- failed with the reason, and plan_progress tells the company. The plan is not run again: its drafts would be
-- written under a caller's authorization the database no longer has (POST /routes/plan again). Every minute
-- (pg_cron), and for one job when it is read. Answers how many were failed.
create function private.expire_route_plans(plan_id uuid default null)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  plan public.route_plans;
  expired integer := 0;
begin
  for plan in
    update public.route_plans p set status = 'failed', updated_at = now(),
      error = 'the worker stopped before the plan was done (no word from it for '
        || extract(epoch from private.route_plan_lease())::integer || ' s): plan again'
    where p.status = 'running' and p.lease_until <= now()
      and (expire_route_plans.plan_id is null or p.id = expire_route_plans.plan_id)
    returning p.*
  loop
    perform private.broadcast('company:' || plan.company_id, 'plan_progress', to_jsonb(private.route_plan_row(plan)));
    expired := expired + 1;
  end loop;
  return expired;
end;
$$;
comment on function private.expire_route_plans(uuid) is 'Fails the plan jobs (or the one named) whose worker''s lease ran out, telling the company.';
grant execute on function private.expire_route_plans(uuid) to authenticated, service_role;

select cron.schedule('expire-route-plans', '* * * * *', 'select private.expire_route_plans()');

create function public.start_route_plan(request jsonb)
returns public.route_plan
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.route_managers());
  plan public.route_plans;
begin
  insert into public.route_plans (company_id, created_by, request, lease_until)
  values (company, (select auth.uid()), start_route_plan.request, now() + private.route_plan_lease())
  returning * into plan;
  return private.route_plan_row(plan);
end;
$$;
comment on function public.start_route_plan(jsonb) is 'Records a plan that runs as a job (owner, admin).';
grant execute on function public.start_route_plan(jsonb) to authenticated;

create function public.get_route_plan(plan_id uuid)
returns public.route_plan
language plpgsql
set search_path = ''
as $$
declare
  plan public.route_plans;
begin
  perform private.authorize(variadic private.route_managers());
  -- A job whose worker died answers failed at once, not only at the next minute's sweep.
  perform private.expire_route_plans(get_route_plan.plan_id);
  select * into plan from public.route_plans p where p.id = get_route_plan.plan_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'route plan not found';
  end if;
  return private.route_plan_row(plan);
end;
$$;
comment on function public.get_route_plan(uuid) is 'One plan job of the caller''s company (owner, admin); one whose worker''s lease ran out answers failed.';
grant execute on function public.get_route_plan(uuid) to authenticated;

-- Service role only (the job, at the edge): its progress, then its outcome; plan_progress to the company.
create function public.record_route_plan(plan_id uuid, status text, progress double precision,
  result jsonb default null, error text default null)
returns public.route_plan
language plpgsql
security definer
set search_path = ''
as $$
declare
  plan public.route_plans;
begin
  update public.route_plans p set status = record_route_plan.status,
    progress = least(greatest(record_route_plan.progress, 0), 1), result = coalesce(record_route_plan.result, p.result),
    error = left(record_route_plan.error, 1000), updated_at = now(),
    -- Each word from the worker extends its hold on the job.
    lease_until = greatest(p.lease_until, now() + private.route_plan_lease())
  where p.id = record_route_plan.plan_id and p.status = 'running' and p.lease_until > now()
  returning * into plan;
  if not found then
    raise exception using errcode = 'PT404', message = 'no running route plan with this id';
  end if;
  perform private.broadcast('company:' || plan.company_id, 'plan_progress', to_jsonb(private.route_plan_row(plan)));
  return private.route_plan_row(plan);
end;
$$;
comment on function public.record_route_plan(uuid, text, double precision, jsonb, text) is 'Records a plan job''s progress or outcome and tells the company (plan_progress) (service role).';
revoke execute on function public.record_route_plan(uuid, text, double precision, jsonb, text) from authenticated;
grant execute on function public.record_route_plan(uuid, text, double precision, jsonb, text) to service_role;

-- Section: inserting into live routes (dispatch mode `routes`)

-- The stops of a route still to come, in order, each with its place, window, size and service: the pending ones, and
-- the pickups done whose drop-off is pending (goods on board).
create function private.route_stops_to_come(route_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select coalesce(jsonb_agg(jsonb_build_object('delivery_id', s.delivery_id, 'kind', s.kind,
      'status', s.status, 'lat', case s.kind when 'pickup' then d.origin_lat else d.destination_lat end,
      'lng', case s.kind when 'pickup' then d.origin_lng else d.destination_lng end,
      'window_start', d.window_start, 'window_end', d.window_end, 'size', d.size, 'service_s', d.service_s)
      order by s.seq), '[]')
    from public.route_stops s join public.deliveries d on d.id = s.delivery_id
    where s.route_id = route_stops_to_come.route_id and (s.status = 'pending'
      or (s.kind = 'pickup' and exists (select from public.route_stops x where x.route_id = route_stops_to_come.route_id
        and x.delivery_id = s.delivery_id and x.kind = 'dropoff' and x.status = 'pending'))));
end;
$$;
comment on function private.route_stops_to_come(uuid) is 'A route''s stops still to come (and the pickups done whose goods are on board), in order.';

-- Service role only (the dispatch function): the live routes (published or in progress) of the delivery's
-- company whose driver is active and online (a position in the last 2 minutes), each from the driver's position,
-- with its stops still to come, and its capacity and shift end. Pickups already done are goods on board.
create function public.route_insertion_input(delivery_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  delivery public.deliveries;
begin
  select * into delivery from public.deliveries d where d.id = route_insertion_input.delivery_id;
  return jsonb_build_object(
    'delivery', to_jsonb(row(delivery.id, delivery.status, row(delivery.origin_lat, delivery.origin_lng)::public.geo_point,
      row(delivery.destination_lat, delivery.destination_lng)::public.geo_point, delivery.window_start,
      delivery.window_end, delivery.size, delivery.service_s)::public.plan_delivery),
    'routes', coalesce((
      select jsonb_agg(jsonb_build_object('id', r.id, 'driver_id', r.driver_id, 'capacity', r.capacity,
          'shift_end', r.shift_end, 'position', jsonb_build_object('lat', l.lat, 'lng', l.lng),
          'end', case when r.end_lat is not null then jsonb_build_object('lat', r.end_lat, 'lng', r.end_lng) end,
          'stops', private.route_stops_to_come(r.id)) order by r.id)
      from public.routes r
      join public.drivers dr on dr.id = r.driver_id and dr.active
      join public.driver_locations l on l.driver_id = r.driver_id and l.updated_at >= now() - interval '2 minutes'
      where r.company_id = delivery.company_id and r.status in ('published', 'in_progress')), '[]'));
end;
$$;
comment on function public.route_insertion_input(uuid) is 'The live routes of online drivers a delivery could join, with their stops still to come (service role).';
revoke execute on function public.route_insertion_input(uuid) from authenticated;
grant execute on function public.route_insertion_input(uuid) to service_role;

-- Service role only. The end of a claimed round under `routes`: `route_id` null leaves the delivery unassigned
-- (open to every driver, as under broadcast); otherwise `stops` is the route's new order of the stops still to
-- come ([{delivery_id, kind, arrival_at}], the old ones and the delivery's two), under the route's and the
-- delivery's locks: the delivery is the route's driver's (assigned) and the driver gets route_updated. A claim
-- no longer the queue row's, a delivery no longer waiting, or a route changed meanwhile changes nothing but the
-- answer (`stale`, `skipped`, `changed`: the round is queued again).
create function public.complete_route_insertion(delivery_id uuid, claim uuid, route_id uuid default null,
  stops jsonb default null, added_s integer default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  delivery public.deliveries;
  job private.dispatch_queue;
  route public.routes;
  kept jsonb;
  round_no integer;
  before jsonb;
begin
  select * into delivery from public.deliveries d where d.id = complete_route_insertion.delivery_id for update;
  select * into job from private.dispatch_queue q where q.delivery_id = complete_route_insertion.delivery_id for update;
  if job.claim is null or job.claim <> complete_route_insertion.claim then
    return jsonb_build_object('result', 'stale', 'route_id', null);
  end if;
  delete from private.dispatch_queue q where q.delivery_id = job.delivery_id;
  if delivery.status is distinct from 'pending' or delivery.driver_id is not null
     or coalesce(delivery.dispatch_status not in ('queued', 'offered'), true) then
    return jsonb_build_object('result', 'skipped', 'route_id', null);
  end if;
  select coalesce(max(r.round), 0) + 1 into round_no from public.dispatch_rounds r
  where r.delivery_id = delivery.id and r.attempt = delivery.attempts;
  if complete_route_insertion.route_id is not null then
    select * into route from public.routes r
    where r.id = complete_route_insertion.route_id and r.company_id = delivery.company_id
      and r.status in ('published', 'in_progress')
    for update;
    -- The stops still to come must be the same, the delivery's two added.
    select coalesce(jsonb_agg(jsonb_build_object('delivery_id', s.delivery_id, 'kind', s.kind) order by s.delivery_id, s.kind), '[]')
    into kept from public.route_stops s where s.route_id = route.id and s.status = 'pending';
    if route.id is null or kept <> (
      select coalesce(jsonb_agg(jsonb_build_object('delivery_id', x ->> 'delivery_id', 'kind', x ->> 'kind')
          order by (x ->> 'delivery_id')::uuid, x ->> 'kind'), '[]')
      from jsonb_array_elements(complete_route_insertion.stops) x where (x ->> 'delivery_id')::uuid <> delivery.id) then
      perform private.queue_dispatch(delivery.id, now());
      return jsonb_build_object('result', 'changed', 'route_id', null);
    end if;
    before := private.route_recipients(route.id);
    perform private.write_stops(route, (
      select coalesce(jsonb_agg(jsonb_build_object('delivery_id', s.delivery_id, 'kind', s.kind, 'arrival_at', s.arrival_at,
          'status', s.status) order by s.seq), '[]')
      from public.route_stops s where s.route_id = route.id and s.status <> 'pending')
      || (select jsonb_agg(x - 'status' order by o) from jsonb_array_elements(complete_route_insertion.stops) with ordinality y (x, o)));
    insert into public.dispatch_rounds (delivery_id, company_id, attempt, round, mode, ranked_by, outcome, driver_id, candidates)
    values (delivery.id, delivery.company_id, delivery.attempts, round_no, 'routes', null, 'assigned', route.driver_id, '{}');
    perform private.move_delivery(delivery, 'assign', null, driver_id => route.driver_id);
    update public.routes r set duration_s = r.duration_s + greatest(coalesce(complete_route_insertion.added_s, 0), 0),
      updated_at = now()
    where r.id = route.id returning * into route;
    perform private.tell_route(route, 'route_updated');
    perform private.tell_route_recipients(route.id, before);
    return jsonb_build_object('result', 'assigned', 'route_id', route.id, 'driver_id', route.driver_id);
  end if;
  insert into public.dispatch_rounds (delivery_id, company_id, attempt, round, mode, ranked_by, outcome, driver_id, candidates)
  values (delivery.id, delivery.company_id, delivery.attempts, round_no, 'routes', null, 'unassigned', null, '{}');
  update public.deliveries d set dispatch_status = 'unassigned', updated_at = now() where d.id = delivery.id;
  return jsonb_build_object('result', 'unassigned', 'route_id', null);
end;
$$;
comment on function public.complete_route_insertion(uuid, uuid, uuid, jsonb, integer) is 'Ends a claimed round under dispatch mode routes: the delivery joins a live route (assigned, route_updated) or is left unassigned (service role).';
revoke execute on function public.complete_route_insertion(uuid, uuid, uuid, jsonb, integer) from authenticated;
grant execute on function public.complete_route_insertion(uuid, uuid, uuid, jsonb, integer) to service_role;

-- Section: tracking

-- What the recipient's tracking view adds while the delivery is in a live route (08_tracking.sql): how many
-- drop-offs still pending come before this one, and its arrival as the route times it.
create function private.route_tracking(delivery_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  mine public.route_stops;
begin
  select s.* into mine from public.route_stops s join public.routes r on r.id = s.route_id
  where s.delivery_id = route_tracking.delivery_id and s.kind = 'dropoff' and s.live and s.status = 'pending'
    and r.status in ('published', 'in_progress');
  if not found then
    return jsonb_build_object('stops_before', null);
  end if;
  return jsonb_build_object(
    'stops_before', (select count(*) from public.route_stops s
                     where s.route_id = mine.route_id and s.kind = 'dropoff' and s.status = 'pending' and s.seq < mine.seq),
    'eta_at', mine.arrival_at);
end;
$$;
comment on function private.route_tracking(uuid) is 'The drop-offs still before a delivery''s in its live route, and its timed arrival (for the tracking view).';

-- What each recipient of a live route sees of it: per pending drop-off, the pending drop-offs before it and its
-- timed arrival (as private.route_tracking answers them). Empty for a route that is not live.
create function private.route_recipients(route_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select coalesce(jsonb_object_agg(x.delivery_id, jsonb_build_object('stops_before', x.before, 'eta_at', x.arrival_at)),
      '{}')
    from (select s.delivery_id, s.arrival_at, row_number() over (order by s.seq) - 1 as before
          from public.route_stops s join public.routes r on r.id = s.route_id
          where s.route_id = route_recipients.route_id and s.kind = 'dropoff' and s.status = 'pending' and s.live
            and r.status in ('published', 'in_progress')) x);
end;
$$;
comment on function private.route_recipients(uuid) is 'Per pending drop-off of a live route: its stops_before and its timed arrival.';

-- After a change of a route (a stop done, failed, skipped, moved or inserted, a publish, a cancel, a new timing):
-- tracking_updated, with the tracking view, to each recipient whose stops_before or timed arrival differs from
-- `before` (private.route_recipients taken before the change), so the page follows without asking.
create function private.tell_route_recipients(route_id uuid, before jsonb)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  after jsonb := private.route_recipients(tell_route_recipients.route_id);
  changed uuid;
  token_hash bytea;
begin
  for changed in
    select k.key::uuid from (select jsonb_object_keys(tell_route_recipients.before) as key
                             union select jsonb_object_keys(after)) k
    where tell_route_recipients.before -> k.key is distinct from after -> k.key
  loop
    select t.token_hash into token_hash from private.delivery_tracking t where t.delivery_id = changed;
    if token_hash is not null then
      perform private.broadcast(private.tracking_topic(token_hash), 'tracking_updated', private.tracking_json_of(changed));
    end if;
  end loop;
end;
$$;
comment on function private.tell_route_recipients(uuid, jsonb) is 'tracking_updated to each recipient of a route whose stops_before or timed arrival changed.';

-- Section: timing the stops still to come (with the live ETA, 08_tracking.sql)

-- With each accepted position (public.update_my_location_with_eta): the driver's live route is due a new timing of
-- its stops still to come at the ETA's cadence: never asked in the last 30 seconds, and the driver moved more than
-- 100 m from where it was last timed (or it never was). The update claims it, so one caller measures; the edge
-- (functions/api/eta.ts) then times the stops from the position with one routing table call and records it
-- (public.record_route_timing). Most drivers have no live route: an index probe answers them.
create function private.claim_route_timing(driver_id uuid)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  due jsonb;
begin
  if not exists (select from public.routes r
                 where r.driver_id = claim_route_timing.driver_id and r.status in ('published', 'in_progress')) then
    return '[]'::jsonb;
  end if;
  with claimed as (
    update public.routes r set timing_requested_at = now()
    from public.driver_locations l
    where l.driver_id = claim_route_timing.driver_id
      and r.driver_id = claim_route_timing.driver_id
      and r.status in ('published', 'in_progress')
      and (r.timing_requested_at is null or r.timing_requested_at <= now() - interval '30 seconds')
      and (r.timed_from_lat is null or private.distance_m(r.timed_from_lat, r.timed_from_lng, l.lat, l.lng) > 100)
    returning r.id, l.lat, l.lng
  )
  select coalesce(jsonb_agg(jsonb_build_object('route_id', c.id, 'from', jsonb_build_object('lat', c.lat, 'lng', c.lng))),
    '[]'::jsonb)
  into due
  from claimed c;
  return due;
end;
$$;
comment on function private.claim_route_timing(uuid) is 'Claims the driver''s live route when due a new timing of its stops (30 s, moved > 100 m) and answers where from.';

-- Service role only (functions/api/eta.ts): what timing a live route's stops from the driver needs.
create function public.route_timing_input(route_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select jsonb_build_object('id', r.id, 'driver_id', r.driver_id, 'capacity', r.capacity, 'shift_end', r.shift_end,
      'end', case when r.end_lat is not null then jsonb_build_object('lat', r.end_lat, 'lng', r.end_lng) end,
      'stops', private.route_stops_to_come(r.id))
    from public.routes r
    where r.id = route_timing_input.route_id and r.status in ('published', 'in_progress'));
end;
$$;
comment on function public.route_timing_input(uuid) is 'A live route''s stops still to come, for timing them from the driver''s position (service role).';
revoke execute on function public.route_timing_input(uuid) from authenticated;
grant execute on function public.route_timing_input(uuid) to service_role;

-- Service role only. The arrivals the edge timed from (from_lat, from_lng): `stops` [{delivery_id, kind,
-- arrival_at}] for the stops still pending (a stop done meanwhile keeps what it had), and when the route is then over.
-- The driver gets route_updated, and each recipient whose arrival changed tracking_updated. False when the route is
-- no longer live.
create function public.record_route_timing(route_id uuid, from_lat double precision, from_lng double precision,
  stops jsonb, ends_at timestamptz default null)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
  route public.routes;
  before jsonb;
begin
  select * into route from public.routes r
  where r.id = record_route_timing.route_id and r.status in ('published', 'in_progress')
  for update;
  if not found then
    return false;
  end if;
  before := private.route_recipients(route.id);
  update public.route_stops s set arrival_at = (x.value ->> 'arrival_at')::timestamptz
  from jsonb_array_elements(record_route_timing.stops) x
  where s.route_id = route.id and s.status = 'pending'
    and s.delivery_id = (x.value ->> 'delivery_id')::uuid and s.kind = x.value ->> 'kind';
  update public.routes r set timed_from_lat = record_route_timing.from_lat, timed_from_lng = record_route_timing.from_lng,
    ends_at = greatest(coalesce(record_route_timing.ends_at, r.ends_at), r.starts_at), updated_at = now()
  where r.id = route.id
  returning * into route;
  perform private.tell_route(route, 'route_updated');
  perform private.tell_route_recipients(route.id, before);
  return true;
end;
$$;
comment on function public.record_route_timing(uuid, double precision, double precision, jsonb, timestamptz) is 'Stores a live route''s stops timed again from the driver''s position; route_updated and tracking_updated follow (service role).';
revoke execute on function public.record_route_timing(uuid, double precision, double precision, jsonb, timestamptz) from authenticated;
grant execute on function public.record_route_timing(uuid, double precision, double precision, jsonb, timestamptz) to service_role;

-- Section: the delivery's load

-- Service role only: the edge sets a new delivery's size and drop-off time right after public.create_delivery,
-- in the same transaction.
create function public.set_delivery_load(delivery_id uuid, size integer default null, service_s integer default null)
returns public.delivery
language plpgsql
set search_path = ''
as $$
declare
  delivery public.deliveries;
begin
  update public.deliveries d set size = coalesce(set_delivery_load.size, d.size),
    service_s = coalesce(set_delivery_load.service_s, d.service_s)
  where d.id = set_delivery_load.delivery_id
  returning * into delivery;
  if not found then
    raise exception using errcode = 'PT404', message = 'delivery not found';
  end if;
  return private.delivery_row(delivery);
end;
$$;
comment on function public.set_delivery_load(uuid, integer, integer) is 'Sets a delivery''s size (units) and drop-off time (seconds) (service role).';
revoke execute on function public.set_delivery_load(uuid, integer, integer) from authenticated;
grant execute on function public.set_delivery_load(uuid, integer, integer) to service_role;

-- A driver's vehicle (02_company.sql): type, plate, and a capacity (null: the type's default).
create function public.set_driver_vehicle(driver_id uuid, vehicle_type text default null, plate text default null,
  capacity integer default null)
returns public.driver
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  driver public.drivers;
begin
  update public.drivers d set vehicle_type = coalesce(set_driver_vehicle.vehicle_type, d.vehicle_type),
    vehicle_plate = coalesce(nullif(btrim(set_driver_vehicle.plate), ''), d.vehicle_plate),
    vehicle_capacity = coalesce(set_driver_vehicle.capacity, d.vehicle_capacity), updated_at = now()
  where d.id = set_driver_vehicle.driver_id and d.company_id = company
  returning * into driver;
  if not found then
    raise exception using errcode = 'PT404', message = 'driver not found';
  end if;
  return private.driver_row(driver);
end;
$$;
comment on function public.set_driver_vehicle(uuid, text, text, integer) is 'Sets a driver''s vehicle: type, plate, capacity (owner, admin).';
grant execute on function public.set_driver_vehicle(uuid, text, text, integer) to authenticated;

-- Section: grants of the helpers

grant execute on function private.route_row(public.routes) to authenticated, service_role;
