-- The trail of a delivery in progress: the last 500 accepted positions of its
-- driver while it is in progress, for the line a company panel draws (the live
-- map gets new points from the `driver_location` broadcast). Appended by a
-- trigger on accepted positions only, so update_my_location is unchanged and a
-- refused update never reaches it.

-- The trigger's lookup on every accepted position: "this driver's deliveries in
-- progress", which the deliveries' own (driver_id, created_at) index would
-- answer by walking the driver's whole history.
create index deliveries_driver_in_progress_idx on public.deliveries (driver_id) where status = 'in_progress';

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
    company_id = (select private.company_id())
    and (select private.app_role()) in ('company_owner', 'company_admin', 'admin')
  );
grant select on public.delivery_trail_points to authenticated;
grant all on public.delivery_trail_points to service_role;

-- Runs as whoever wrote the position: update_my_location's owner, or the
-- service role. The driver's accepted position holds the driver_locations row
-- lock until commit, so one driver's points are never numbered concurrently.
create function private.append_delivery_trail()
returns trigger
language plpgsql
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
    select d.id, d.company_id from public.deliveries d
    where d.driver_id = new.driver_id and d.status = 'in_progress'
  loop
    insert into public.delivery_trail_points (delivery_id, seq, company_id, lat, lng, recorded_at)
    values (delivery.id,
            coalesce((select max(t.seq) from public.delivery_trail_points t where t.delivery_id = delivery.id), 0) + 1,
            delivery.company_id, new.lat, new.lng, new.updated_at)
    returning seq into appended;
    delete from public.delivery_trail_points t where t.delivery_id = delivery.id and t.seq <= appended - 500;
  end loop;
  return null;
end;
$$;
comment on function private.append_delivery_trail() is 'Adds an accepted driver position to the trail of each delivery the driver has in progress, keeping the newest 500.';

create trigger driver_locations_append_trail after insert or update on public.driver_locations
  for each row execute function private.append_delivery_trail();

create function public.get_delivery_trail(delivery_id uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
  perform private.authorize('company_owner', 'company_admin', 'admin');
  -- The deliveries policy hides another company's delivery: 404.
  if not exists (select from public.deliveries d where d.id = get_delivery_trail.delivery_id) then
    raise exception using errcode = 'PT404', message = 'delivery not found';
  end if;
  return jsonb_build_object(
    'delivery_id', get_delivery_trail.delivery_id,
    'points', coalesce((
      select jsonb_agg(jsonb_build_object('lat', t.lat, 'lng', t.lng, 'recorded_at', t.recorded_at) order by t.seq)
      from public.delivery_trail_points t
      where t.delivery_id = get_delivery_trail.delivery_id
    ), '[]'::jsonb));
end;
$$;
comment on function public.get_delivery_trail(uuid) is 'The stored trail of one delivery of the caller''s company, oldest point first (owner, admin, legacy admin).';
grant execute on function public.get_delivery_trail(uuid) to authenticated;
