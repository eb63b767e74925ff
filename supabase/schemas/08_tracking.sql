-- Tracking (docs/contract.md, Tracking): the recipient's view of a delivery
-- through its tracking token, the Realtime topic the token opens, and the live
-- ETA refreshed from the routing service while the delivery is in progress.
--
-- The token itself is made with the delivery (private.delivery_tracking, in the
-- deliveries' file, 05_deliveries.sql). Only its SHA-256 is looked up, through a unique index:
-- the comparison the index makes is of hashes, which an attacker cannot steer
-- byte by byte, and a miss does the same single lookup as a hit.

-- Section: helpers

create function private.tracking_topic(token_hash bytea)
returns text
language plpgsql
immutable
set search_path = ''
as $$ begin return 'track:' || encode(tracking_topic.token_hash, 'hex'); end; $$;
comment on function private.tracking_topic(bytea) is 'The Realtime topic of a tracking token: track:<hex SHA-256 of the token>.';

create function private.distance_m(lat1 double precision, lng1 double precision, lat2 double precision, lng2 double precision)
returns double precision
language plpgsql
immutable
set search_path = ''
as $$
begin
  return 2 * 6371000 * asin(least(1, sqrt(
    sin(radians(distance_m.lat2 - distance_m.lat1) / 2) ^ 2
    + cos(radians(distance_m.lat1)) * cos(radians(distance_m.lat2)) * sin(radians(distance_m.lng2 - distance_m.lng1) / 2) ^ 2)));
end;
$$;
comment on function private.distance_m(double precision, double precision, double precision, double precision) is 'Great-circle distance in metres between two points.';

-- What the recipient may see, and nothing more: the status, the driver's first
-- name, its last position only while the delivery is in progress (and only one
-- taken since the pick-up), the ETA while in progress, and the timeline.
create function private.tracking_json(d public.deliveries, driver_name text, l public.driver_locations)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
  return jsonb_build_object(
    'status', d.status,
    'driver', case when d.status in ('accepted', 'in_progress', 'completed') and tracking_json.driver_name is not null
      then jsonb_build_object('first_name', split_part(btrim(tracking_json.driver_name), ' ', 1)) end,
    'position', case when d.status = 'in_progress' and l.updated_at >= d.started_at
      then jsonb_build_object('lat', l.lat, 'lng', l.lng, 'heading', l.heading, 'updated_at', l.updated_at) end,
    'eta_at', case when d.status = 'in_progress' then d.eta_at end,
    'remaining_m', case when d.status = 'in_progress' then d.remaining_m end,
    'eta_refreshed_at', case when d.status = 'in_progress' then d.eta_refreshed_at end,
    'created_at', d.created_at,
    'accepted_at', d.accepted_at,
    'started_at', d.started_at,
    'completed_at', d.completed_at,
    'cancelled_at', d.cancelled_at,
    -- The code the recipient gives the driver at the door (09_proof.sql), while it is to be delivered.
    'handover_code', private.handover_code_of(d.id));
end;
$$;
comment on function private.tracking_json(public.deliveries, text, public.driver_locations) is 'A delivery as its tracking link shows it to the recipient.';

-- deliveries.id, drivers.id and driver_locations.driver_id are keys: at most one row.
create function private.tracking_json_of(delivery_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- Beside what tracking_json says: the drop-off's pin, and the vehicle of the driver it names (the recipient
  -- looks out for it at the door).
  return (select private.tracking_json(d, dr.name, l) || private.route_tracking(d.id)
            || jsonb_build_object('destination', jsonb_build_object('lat', d.destination_lat, 'lng', d.destination_lng))
            || case when d.status in ('accepted', 'in_progress', 'completed') and dr.name is not null
                 then jsonb_build_object('driver', jsonb_build_object('first_name', split_part(btrim(dr.name), ' ', 1),
                   'vehicle', jsonb_build_object('type', dr.vehicle_type, 'plate', dr.vehicle_plate)))
                 else '{}'::jsonb end
          from public.deliveries d
          left join public.drivers dr on dr.id = d.driver_id
          left join public.driver_locations l on l.driver_id = d.driver_id
          where d.id = tracking_json_of.delivery_id);
end;
$$;
comment on function private.tracking_json_of(uuid) is 'The tracking view of one delivery, by id (for broadcasts).';

-- Section: rate limit

-- Lookups per client (the caller's IP address) in fixed one-minute windows.
-- The row is the limit, so it holds across every instance of the service.
create table private.tracking_requests (
  client text primary key,
  window_started_at timestamptz not null,
  requests integer not null
);
comment on table private.tracking_requests is 'Tracking lookups per client in the current one-minute window (rate limit against enumeration).';
alter table private.tracking_requests enable row level security;

create function private.tracking_requests_per_minute()
returns integer
language plpgsql
immutable
set search_path = ''
as $$ begin return 60; end; $$;
comment on function private.tracking_requests_per_minute() is 'How many tracking lookups one client may make per minute.';

create function private.admit_tracking_request(client text)
returns void
language plpgsql
set search_path = ''
as $$
declare
  counted private.tracking_requests;
  retry_after integer;
begin
  -- Forget finished windows now and then, so the table stays small.
  if random() < 0.01 then
    delete from private.tracking_requests r where r.window_started_at < now() - interval '1 minute';
  end if;
  insert into private.tracking_requests as r (client, window_started_at, requests)
  values (admit_tracking_request.client, now(), 1)
  on conflict on constraint tracking_requests_pkey do update set
    window_started_at = case when r.window_started_at <= now() - interval '1 minute' then now() else r.window_started_at end,
    requests = case when r.window_started_at <= now() - interval '1 minute' then 1 else r.requests + 1 end
  returning * into counted;
  if counted.requests > private.tracking_requests_per_minute() then
    retry_after := least(60, greatest(1,
      ceil(extract(epoch from counted.window_started_at + interval '1 minute' - now()))::integer));
    raise exception using
      errcode = 'PT429',
      message = format('tracking lookups are limited to %s a minute', private.tracking_requests_per_minute()),
      detail = jsonb_build_object('retry_after', retry_after)::text,
      hint = format('retry after %s seconds', retry_after);
  end if;
end;
$$;
comment on function private.admit_tracking_request(text) is 'Counts one tracking lookup of a client, or raises PT429 (detail {"retry_after": seconds}) past the limit.';

-- Section: the public lookup

-- Service role only: the edge passes the caller's address, which a direct
-- caller could forge to escape the limit. A miss answers null (not an error,
-- which would roll back the count), after the same one lookup as a hit.
create function public.track_delivery(token text, client text)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  found_id uuid;
  view jsonb;
begin
  perform private.admit_tracking_request(left(coalesce(track_delivery.client, 'unknown'), 100));
  select t.delivery_id into found_id from private.delivery_tracking t
  where t.token_hash = sha256(convert_to(track_delivery.token, 'UTF8'));
  -- 30 days after the delivery ended the link answers as a wrong one (13_notifications.sql, LGPD).
  if private.tracking_link_expired(found_id) then
    found_id := null;
  end if;
  -- On a miss too: the same query, which then finds nothing.
  view := private.tracking_json_of(found_id);
  -- The proof photo of a completed delivery, to the token's holder only (never broadcast): the edge answers a
  -- short-lived signed URL for it and drops the name.
  if view is not null and view ->> 'status' = 'completed' then
    view := view || jsonb_build_object('proof_photo_path',
      (select d.proof_photo_path from public.deliveries d where d.id = found_id));
  end if;
  return view;
end;
$$;
comment on function public.track_delivery(text, text) is 'The tracking view of the delivery a token opens, or null; counts the lookup against the client''s limit (service role).';
revoke execute on function public.track_delivery(text, text) from authenticated;
grant execute on function public.track_delivery(text, text) to service_role;

-- Section: the tracking channel

-- A recipient's browser joins `track:<hex SHA-256 of the token>` as anon (or
-- as whoever is signed in): it knows the hash only by knowing the token. The
-- topic opens only while a driver has the delivery (accepted, so the page hears
-- the pick-up, or in progress); once it ends, no new join is allowed.
create function private.may_read_tracking_topic(topic text)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return case when may_read_tracking_topic.topic ~ '^track:[0-9a-f]{64}$' then exists (
    select from private.delivery_tracking t
    join public.deliveries d on d.id = t.delivery_id
    where t.token_hash = decode(substr(may_read_tracking_topic.topic, 7), 'hex')
      and d.status in ('accepted', 'in_progress'))
  else false end;
end;
$$;
comment on function private.may_read_tracking_topic(text) is 'Whether a tracking topic names a delivery a driver has now (accepted or in progress).';
grant usage on schema private to anon;
grant execute on function private.may_read_tracking_topic(text) to anon, authenticated;

create policy realtime_messages_select_tracking on realtime.messages
  for select to anon, authenticated
  using (
    extension = 'broadcast'
    and (select private.may_read_tracking_topic(realtime.topic()))
  );

-- private.broadcast_tracking_change, the trigger on public.deliveries: 05_deliveries.sql, Section: what fires on a delivery.

-- An accepted position of a driver with a delivery in progress is sent on that delivery's tracking topic as
-- `driver_location` by the trail's trigger (private.append_delivery_trail, 07_locations.sql), which looks the
-- deliveries in progress up once for both.

-- Section: live ETA

-- With each accepted position (update_my_location_with_eta, 07_locations.sql), which of
-- the driver's deliveries in progress are due a new ETA: never asked in the
-- last 30 seconds, and the driver moved more than 100 m from where the last ETA
-- was measured (or none was). The update claims them (eta_requested_at), so of
-- concurrent callers on any number of instances only one asks the routing
-- service; the claim stands whether or not the routing service then answers.
-- Called by its definer only: no grant.
--
-- Most drivers have no delivery in progress: an index probe
-- (deliveries_driver_in_progress_idx) answers them before the claim's update
-- is planned at all (0.08 ms a call with pgbench on one connection, against
-- 0.23 ms for the update alone).
create function private.claim_eta_refreshes(driver_id uuid)
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
comment on function private.claim_eta_refreshes(uuid) is 'Claims the driver''s deliveries in progress due a new ETA (30 s since the last request, moved > 100 m) and answers where from and to.';

-- What PUT /api/v1/locations/me runs, the position and the claim below in one statement:
-- public.update_my_location_with_eta (07_locations.sql).

-- Stores what the routing service measured from `from_*`; the triggers then
-- broadcast it (delivery_updated to the company and the driver,
-- tracking_updated on the tracking topic). A delivery no longer in progress
-- keeps what it had. Service role only.
create function public.record_eta(delivery_id uuid, from_lat double precision, from_lng double precision,
  remaining_m numeric, duration_s numeric)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  update public.deliveries d set
    remaining_m = round(record_eta.remaining_m),
    eta_at = now() + make_interval(secs => round(record_eta.duration_s)),
    eta_refreshed_at = now(),
    eta_from_lat = record_eta.from_lat,
    eta_from_lng = record_eta.from_lng
  where d.id = record_eta.delivery_id and d.status = 'in_progress';
  return found;
end;
$$;
comment on function public.record_eta(uuid, double precision, double precision, numeric, numeric) is 'Stores a delivery''s remaining distance and ETA as measured from a position (service role).';
revoke execute on function public.record_eta(uuid, double precision, double precision, numeric, numeric) from authenticated;
grant execute on function public.record_eta(uuid, double precision, double precision, numeric, numeric) to service_role;

grant execute on function private.tracking_topic(bytea), private.distance_m(double precision, double precision, double precision, double precision),
  private.tracking_json(public.deliveries, text, public.driver_locations), private.tracking_json_of(uuid),
  private.admit_tracking_request(text), private.tracking_requests_per_minute() to service_role;
