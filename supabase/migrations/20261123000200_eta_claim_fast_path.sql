-- Redefines public.claim_eta_refreshes: it answers at once when the driver has no delivery in progress.

-- Every accepted location update asks for the driver's due ETA refreshes
-- (functions/api/eta.ts), and most drivers have no delivery in progress. As
-- one SQL statement, the claim planned and ran its update for each of them;
-- now an index probe (deliveries_driver_in_progress_idx) answers them, and
-- PL/pgSQL keeps the plans of both statements for the connection. Measured
-- with pgbench on one connection: 0.23 ms a call before, 0.08 ms after (a
-- `select 1` takes 0.07 ms). The claim itself is unchanged
-- (20261121004000_tracking.sql explains it).
create or replace function public.claim_eta_refreshes(driver_id uuid)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  due jsonb;
begin
  if not exists (select from public.deliveries d
                 where d.driver_id = claim_eta_refreshes.driver_id and d.status = 'in_progress') then
    return '[]'::jsonb;
  end if;
  with claimed as (
    update public.deliveries d set eta_requested_at = now()
    from public.driver_locations l
    where l.driver_id = claim_eta_refreshes.driver_id
      and d.driver_id = claim_eta_refreshes.driver_id
      and d.status = 'in_progress'
      and l.updated_at >= d.started_at
      and (d.eta_requested_at is null or d.eta_requested_at <= now() - interval '30 seconds')
      and (d.eta_from_lat is null or private.distance_m(d.eta_from_lat, d.eta_from_lng, l.lat, l.lng) > 100)
    returning d.id, l.lat, l.lng, d.destination_lat, d.destination_lng
  )
  select coalesce(jsonb_agg(jsonb_build_object('delivery_id', c.id, 'from', jsonb_build_object('lat', c.lat, 'lng', c.lng),
    'destination', jsonb_build_object('lat', c.destination_lat, 'lng', c.destination_lng))), '[]'::jsonb)
  into due
  from claimed c;
  return due;
end;
$$;
