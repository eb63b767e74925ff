-- Driver locations (docs/spec.md §4.7, §8; docs/contract.md): each driver's latest GPS
-- position, written only through public.update_my_location, which admits at
-- most one update per 10 seconds per driver in one atomic statement, so the
-- limit holds across any number of Edge Function instances and for callers
-- that use supabase-js directly. Accepted positions are broadcast to the
-- company's managers as `driver_location` on `company:{company_id}`.

-- Section: extensions

-- For the positions' GiST index, nearest first (dispatch, 14_dispatch.sql, ranks by it).
-- Supabase has all three; the local Postgres ships them as contrib modules.
create extension if not exists cube with schema extensions;
create extension if not exists earthdistance with schema extensions;
-- The positions' index leads with the company (a uuid), which GiST indexes through btree_gist.
create extension if not exists btree_gist with schema extensions;

-- Section: types (02_company.sql says why functions return them)

create type public.driver_location as (
  driver_id uuid,
  lat double precision,
  lng double precision,
  heading double precision,
  speed double precision,
  accuracy double precision,
  updated_at timestamptz
);
comment on type public.driver_location is 'A driver''s last accepted position.';

create type public.live_map_driver as (
  driver_id uuid,
  name text,
  lat double precision,
  lng double precision,
  heading double precision,
  speed double precision,
  accuracy double precision,
  updated_at timestamptz
);
comment on type public.live_map_driver is 'An active driver and its last position (nulls before the first).';

create type public.live_map as (items public.live_map_driver[]);
comment on type public.live_map is 'Every active driver of a company with its last position.';

create type public.trail_point as (lat double precision, lng double precision, recorded_at timestamptz);
comment on type public.trail_point is 'One stored position of a delivery''s trail.';

create type public.delivery_trail as (delivery_id uuid, points public.trail_point[]);
comment on type public.delivery_trail is 'The stored trail of a delivery, oldest point first.';

-- Section: positions

create table public.driver_locations (
  driver_id uuid primary key references public.drivers (id) on delete cascade,
  company_id uuid not null references public.companies (id) on delete cascade,
  -- double precision admits NaN and infinity, which sort above every number:
  -- the upper bounds keep both out.
  lat double precision not null constraint driver_locations_lat_range check (lat between -90 and 90),
  lng double precision not null constraint driver_locations_lng_range check (lng between -180 and 180),
  heading double precision constraint driver_locations_heading_range check (heading >= 0 and heading < 360),
  speed double precision constraint driver_locations_speed_range check (speed >= 0 and speed < 'infinity'),
  accuracy double precision constraint driver_locations_accuracy_range check (accuracy >= 0 and accuracy < 'infinity'),
  updated_at timestamptz not null default now()
);
comment on table public.driver_locations is 'The latest accepted GPS position of each driver (speed in m/s, accuracy in m, heading in degrees).';
comment on column public.driver_locations.updated_at is 'When the position was accepted; the rate limit counts from here.';
create index driver_locations_company_id_idx on public.driver_locations (company_id);
-- A position as a point of earthdistance's earth (a cube in metres from the earth's centre): ll_to_earth's point,
-- with its 6378168 m earth(), made by the cube constructors themselves and returned as a plain cube. Security
-- definer, as private.fold: the extension's functions are created after our default privileges took PUBLIC's
-- execute right away, and every role that writes a position computes it for the index below. Not ll_to_earth
-- itself: an SQL function (not inlinable either, as it calls the non-strict earth()) has its plan made again in
-- every transaction, and the `earth` domain's three checks call earth() again; that was about 7 % of a location
-- update's CPU (perf, bench/README.md). An inlinable SQL function without `set search_path` would save the call
-- too, but Supabase's advisors refuse a function whose search_path the caller sets.
create function private.earth_point(lat double precision, lng double precision)
returns extensions.cube
language plpgsql
immutable
strict
parallel safe
security definer
set search_path = ''
as $$
begin
  return extensions.cube(extensions.cube(extensions.cube(
    6378168 * cos(radians(earth_point.lat)) * cos(radians(earth_point.lng))),
    6378168 * cos(radians(earth_point.lat)) * sin(radians(earth_point.lng))),
    6378168 * sin(radians(earth_point.lat)));
end;
$$;
comment on function private.earth_point(double precision, double precision) is 'A latitude and longitude as a point on the earth (earthdistance''s ll_to_earth, as a plain cube), for the positions'' GiST index and the distances to a pickup.';
grant execute on function private.earth_point(double precision, double precision) to authenticated, service_role;
-- Nearest first: the positions of a company's drivers by straight-line distance (cube's `<->` between the
-- earth points, which orders as the great-circle distance does), within one company.
create index driver_locations_position_idx on public.driver_locations
  using gist (company_id, private.earth_point(lat, lng));
alter table public.driver_locations enable row level security;

-- Managers see their company's positions; a driver sees its own. Nobody but
-- update_my_location writes (no insert/update grant), so the limit cannot be
-- bypassed through the table.
create policy driver_locations_select_visible on public.driver_locations
  for select to authenticated
  using (
    company_id = (select private.company_of(private.delivery_managers()))
    or driver_id = (select private.driver_id())
  );
grant select on public.driver_locations to authenticated;
grant all on public.driver_locations to service_role;

create function private.location_row(l public.driver_locations)
returns public.driver_location
language plpgsql
stable
set search_path = ''
as $$
begin
  return row(l.driver_id, l.lat, l.lng, l.heading, l.speed, l.accuracy, l.updated_at)::public.driver_location;
end;
$$;
comment on function private.location_row(public.driver_locations) is 'A driver location as the API returns and broadcasts it.';
grant execute on function private.location_row(public.driver_locations) to authenticated, service_role;

-- Security definer because drivers may not write the table themselves. The
-- upsert is the rate limit: on conflict it updates only a row older than 10 s;
-- a newer row is left as it is (and locked, so concurrent calls of one driver
-- queue behind each other and all but the first see the new row). No row back
-- means refused: 429, with the seconds to wait in the error's detail, which
-- the proxy turns into Retry-After (PostgREST callers find it in `details`).
create function public.update_my_location(
  lat double precision,
  lng double precision,
  heading double precision default null,
  speed double precision default null,
  accuracy double precision default null
)
returns public.driver_location
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.drivers());
  driver uuid;
  saved public.driver_locations;
  located public.driver_location;
  last_accepted timestamptz;
  retry_after integer;
begin
  -- A position lost to a crash of the database is replaced by the driver's next, seconds later; everything else
  -- this transaction writes (the trail's point, an ETA refresh it claims) is as replaceable, and nothing of money
  -- or a delivery's state is written here.
  perform private.commit_without_flush();
  -- authorize has checked that the caller is an active driver.
  select d.id into driver from public.drivers d where d.user_id = (select auth.uid());

  insert into public.driver_locations as l (driver_id, company_id, lat, lng, heading, speed, accuracy, updated_at)
  values (driver, company, update_my_location.lat, update_my_location.lng, update_my_location.heading,
          update_my_location.speed, update_my_location.accuracy, now())
  on conflict (driver_id) do update set
    lat = excluded.lat,
    lng = excluded.lng,
    heading = excluded.heading,
    speed = excluded.speed,
    accuracy = excluded.accuracy,
    updated_at = excluded.updated_at
  where l.updated_at <= excluded.updated_at - interval '10 seconds'
  returning * into saved;

  if not found then
    select l.updated_at into last_accepted from public.driver_locations l where l.driver_id = driver;
    -- now() is this transaction's start; a concurrent winner may have started
    -- later, so clamp to the 1..10 s a client can meaningfully wait.
    retry_after := least(10, greatest(1,
      ceil(extract(epoch from last_accepted + interval '10 seconds' - now()))::integer));
    raise exception using
      errcode = 'PT429',
      message = 'location updates are limited to one every 10 seconds',
      detail = jsonb_build_object('retry_after', retry_after)::text,
      hint = format('retry after %s seconds', retry_after);
  end if;

  located := private.location_row(saved);
  perform private.broadcast('company:' || company, 'driver_location', to_jsonb(located));
  return located;
end;
$$;
comment on function public.update_my_location(double precision, double precision, double precision, double precision, double precision)
  is 'Stores the calling driver''s position, at most once per 10 seconds (else PT429 with detail {"retry_after": seconds}), and broadcasts it to the company.';
grant execute on function public.update_my_location(double precision, double precision, double precision, double precision, double precision)
  to authenticated;

-- Active drivers only: a deactivated driver is off the live map. Drivers that
-- never sent a position are listed with nulls, so the panel can show them as
-- "no position yet". Unpaginated: a map needs every driver at once.
create function public.list_driver_locations()
returns public.live_map
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
begin
  return row(coalesce((
    select array_agg(row(d.id, d.name, l.lat, l.lng, l.heading, l.speed, l.accuracy, l.updated_at)::public.live_map_driver
      order by d.name, d.id)
    from public.drivers d
    left join public.driver_locations l on l.driver_id = d.id
    where d.company_id = company and d.active
  ), '{}'))::public.live_map;
end;
$$;
comment on function public.list_driver_locations() is 'Every active driver of the caller''s company with its last position, or nulls (owner, admin, legacy admin).';
grant execute on function public.list_driver_locations() to authenticated;

create type public.location_update as (location public.driver_location, eta_due jsonb);
comment on type public.location_update is 'An accepted position and the ETA refreshes it claimed: [{delivery_id, from: {lat, lng}, destination: {lat, lng}}], and the live route due a new timing: [{route_id, from}].';

-- What PUT /api/v1/locations/me runs: the position (update_my_location: its
-- rate limit, trail and broadcasts) and, in the same statement and
-- transaction, the claim of the driver's deliveries due a new ETA, which the
-- edge then measures after its answer (functions/api/eta.ts): one statement
-- per update, which the edge sends in one write with its transaction's begin
-- and commit, one round trip. Security definer for the claim, which no role may call itself; it claims
-- the caller's own deliveries only. A driver calling it through the Data API
-- claims refreshes nobody measures: its own deliveries keep their ETA until the
-- next claim, 30 s on (update_my_location claims nothing).
create function public.update_my_location_with_eta(
  lat double precision,
  lng double precision,
  heading double precision default null,
  speed double precision default null,
  accuracy double precision default null
)
returns public.location_update
language plpgsql
security definer
set search_path = ''
as $$
declare
  located public.driver_location;
begin
  located := public.update_my_location(update_my_location_with_eta.lat, update_my_location_with_eta.lng,
    update_my_location_with_eta.heading, update_my_location_with_eta.speed, update_my_location_with_eta.accuracy);
  -- It sees the position just stored: the claims measure from there (a live route's stops are timed again at the
  -- same cadence: private.claim_route_timing, 16_routes.sql).
  return row(located, private.claim_eta_refreshes(located.driver_id) || private.claim_route_timing(located.driver_id))
    ::public.location_update;
end;
$$;
comment on function public.update_my_location_with_eta(double precision, double precision, double precision, double precision, double precision)
  is 'update_my_location, and the claim of the caller''s deliveries in progress due a new ETA (30 s, 100 m), in one statement (driver).';
grant execute on function public.update_my_location_with_eta(double precision, double precision, double precision, double precision, double precision)
  to authenticated;

-- Section: trails

-- The trail of a delivery in progress: the last 500 accepted positions of its
-- driver while it is in progress, for the line a company panel draws (the live
-- map gets new points from the `driver_location` broadcast). Appended by a
-- trigger on accepted positions only, so update_my_location is unchanged and a
-- refused update never reaches it.

create table public.delivery_trail_points (
  delivery_id uuid not null references public.deliveries (id) on delete cascade,
  -- 1, 2, 3, ... per delivery; rows older than the newest 500 are deleted.
  seq integer not null check (seq > 0),
  -- The delivery's company, for the policy. No foreign key of its own: the
  -- delivery's cascades cover it, and a key check on the company row from every
  -- driver of a busy company at once would make that one row a hot spot.
  company_id uuid not null,
  lat double precision not null,
  lng double precision not null,
  recorded_at timestamptz not null,
  primary key (delivery_id, seq)
);
comment on table public.delivery_trail_points is 'The newest 500 positions of each delivery''s driver while the delivery was in progress.';
create index delivery_trail_points_company_id_idx on public.delivery_trail_points (company_id);
alter table public.delivery_trail_points enable row level security;

create policy delivery_trail_points_select_managers on public.delivery_trail_points
  for select to authenticated
  using (
    company_id = (select private.company_of(private.delivery_managers()))
  );
grant select on public.delivery_trail_points to authenticated;
grant all on public.delivery_trail_points to service_role;

-- The one trigger on an accepted position of a driver with deliveries in progress: for each of them, the
-- point on its trail and the `driver_location` broadcast on its tracking topic (never before the pick-up,
-- never after the delivery ends; 08_tracking.sql), from one look-up of the driver's deliveries in progress,
-- where two triggers each made their own. Security definer: the tracking tokens and private.broadcast are its
-- owner's. The driver's accepted position holds the driver_locations row lock until commit, so one driver's
-- points are never numbered concurrently.
create function private.append_delivery_trail()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  delivery record;
  appended integer;
begin
  -- Only a newer position extends a trail (not, say, a row's clock moved back).
  if tg_op = 'UPDATE' and new.updated_at <= old.updated_at then
    return null;
  end if;
  for delivery in
    select d.id, d.company_id, t.token_hash from public.deliveries d
    left join private.delivery_tracking t on t.delivery_id = d.id
    where d.driver_id = new.driver_id and d.status = 'in_progress'
  loop
    insert into public.delivery_trail_points (delivery_id, seq, company_id, lat, lng, recorded_at)
    values (delivery.id,
            coalesce((select max(t.seq) from public.delivery_trail_points t where t.delivery_id = delivery.id), 0) + 1,
            delivery.company_id, new.lat, new.lng, new.updated_at)
    returning seq into appended;
    delete from public.delivery_trail_points t where t.delivery_id = delivery.id and t.seq <= appended - 500;
    if delivery.token_hash is not null then
      perform private.broadcast(private.tracking_topic(delivery.token_hash), 'driver_location',
        jsonb_build_object('lat', new.lat, 'lng', new.lng, 'heading', new.heading, 'updated_at', new.updated_at));
    end if;
  end loop;
  return null;
end;
$$;
comment on function private.append_delivery_trail() is 'Adds an accepted driver position to the trail of each delivery the driver has in progress, keeping the newest 500, and sends it on that delivery''s tracking topic.';

create trigger driver_locations_append_trail after insert or update on public.driver_locations
  for each row execute function private.append_delivery_trail();

create function public.get_delivery_trail(delivery_id uuid)
returns public.delivery_trail
language plpgsql
stable
set search_path = ''
as $$
begin
  perform private.authorize(variadic private.delivery_managers());
  -- The deliveries policy hides another company's delivery: 404.
  perform private.visible_delivery(get_delivery_trail.delivery_id);
  return row(
    get_delivery_trail.delivery_id,
    coalesce((
      select array_agg(row(t.lat, t.lng, t.recorded_at)::public.trail_point order by t.seq)
      from public.delivery_trail_points t
      where t.delivery_id = get_delivery_trail.delivery_id
    ), '{}'))::public.delivery_trail;
end;
$$;
comment on function public.get_delivery_trail(uuid) is 'The stored trail of one delivery of the caller''s company, oldest point first (owner, admin, legacy admin).';
grant execute on function public.get_delivery_trail(uuid) to authenticated;
