-- Driver locations (SPEC.md §4.7, §8; DESIGN.md §5): each driver's latest GPS
-- position, written only through public.update_my_location, which admits at
-- most one update per 10 seconds per driver in one atomic statement, so the
-- limit holds across any number of Edge Function instances and for callers
-- that use supabase-js directly. Accepted positions are broadcast to the
-- company's managers as `driver_location` on `company:{company_id}`.

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
alter table public.driver_locations enable row level security;

-- Managers see their company's positions; a driver sees its own. Nobody but
-- update_my_location writes (no insert/update grant), so the limit cannot be
-- bypassed through the table.
create policy driver_locations_select_visible on public.driver_locations
  for select to authenticated
  using (
    (company_id = (select private.company_id())
      and (select private.app_role()) in ('company_owner', 'company_admin', 'admin'))
    or driver_id = (select private.driver_id())
  );
grant select on public.driver_locations to authenticated;
grant all on public.driver_locations to service_role;

create function private.location_json(l public.driver_locations)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select jsonb_build_object('driver_id', l.driver_id, 'lat', l.lat, 'lng', l.lng, 'heading', l.heading,
    'speed', l.speed, 'accuracy', l.accuracy, 'updated_at', l.updated_at)
$$;
comment on function private.location_json(public.driver_locations) is 'A driver location as the API returns and broadcasts it.';
grant execute on function private.location_json(public.driver_locations) to authenticated, service_role;

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
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize('driver');
  driver uuid;
  saved public.driver_locations;
  last_accepted timestamptz;
  retry_after integer;
begin
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

  perform private.broadcast('company:' || company, 'driver_location', private.location_json(saved));
  return private.location_json(saved);
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
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize('company_owner', 'company_admin', 'admin');
begin
  return jsonb_build_object('items', coalesce((
    select jsonb_agg(jsonb_build_object('driver_id', d.id, 'name', d.name, 'lat', l.lat, 'lng', l.lng,
      'heading', l.heading, 'speed', l.speed, 'accuracy', l.accuracy, 'updated_at', l.updated_at)
      order by d.name, d.id)
    from public.drivers d
    left join public.driver_locations l on l.driver_id = d.id
    where d.company_id = company and d.active
  ), '[]'::jsonb));
end;
$$;
comment on function public.list_driver_locations() is 'Every active driver of the caller''s company with its last position, or nulls (owner, admin, legacy admin).';
grant execute on function public.list_driver_locations() to authenticated;
