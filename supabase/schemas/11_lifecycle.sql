-- The rest of a delivery's life (docs/state-machines.md, docs/contract.md): a failed attempt and its reopening,
-- delivery windows announced to drivers when they near, and the company's deliveries in and out as CSV
-- (the export's cursor, the import's batch). The columns, the moves (`fail`, `reopen`), the window rule
-- (private.dispatchable), lateness (private.is_late) and the search live with the deliveries in 05_deliveries.sql.

-- Section: failed attempts

-- The linked driver could not deliver: in_progress -> failed with the reason, no credit. The reason, the note and
-- the photo the driver uploaded for this attempt (private.failure_photo, 09_proof.sql; none: null, never an earlier
-- attempt's) are written before the move, so that the move's broadcast already carries them.
create function public.fail_delivery(delivery_id uuid, reason text, note text default null)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  delivery public.deliveries := private.lock_own_delivery(fail_delivery.delivery_id);
begin
  if fail_delivery.reason is null
     or fail_delivery.reason not in ('recipient_absent', 'address_not_found', 'refused', 'damaged', 'other') then
    raise exception using errcode = 'PT400',
      message = 'reason must be one of recipient_absent, address_not_found, refused, damaged, other';
  end if;
  if delivery.status = 'in_progress' then
    update public.deliveries d
    set failure_reason = fail_delivery.reason, failure_note = nullif(btrim(fail_delivery.note), ''),
      failure_photo_path = private.failure_photo(delivery)
    where d.id = delivery.id
    returning * into delivery;
  end if;
  delivery := private.move_delivery(delivery, 'fail', (select auth.uid()));
  return private.delivery_row(delivery);
end;
$$;
comment on function public.fail_delivery(uuid, text, text) is 'The linked driver reports a delivery in progress could not be delivered, with the reason (and this attempt''s photo, if uploaded): failed, no credit.';
grant execute on function public.fail_delivery(uuid, text, text) to authenticated;

-- A new attempt: failed -> pending, nobody's, attempts + 1, offered to the drivers again (the broadcast
-- trigger, and dispatch, see a delivery become pending).
create function public.reopen_delivery(delivery_id uuid)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
  delivery public.deliveries := private.lock_delivery(reopen_delivery.delivery_id, company);
begin
  delivery := private.move_delivery(delivery, 'reopen', (select auth.uid()));
  return private.delivery_row(delivery);
end;
$$;
comment on function public.reopen_delivery(uuid) is 'Starts a new attempt of a failed delivery of the caller''s company: pending again, attempts + 1.';
grant execute on function public.reopen_delivery(uuid) to authenticated;

-- Section: windows

-- How far the window pass has looked: one row, written by the pass itself.
create table private.window_announcements (
  singleton boolean primary key default true check (singleton),
  announced_through timestamptz not null
);
comment on table private.window_announcements is 'Up to when private.announce_open_windows has announced the windows that opened.';
alter table private.window_announcements enable row level security;

-- Every minute (pg_cron, below): the pending deliveries whose window came within the hour since the last
-- pass are announced to the drivers, who could not see them before (private.dispatchable); dispatch offers
-- its own when their window nears (14_dispatch.sql: their queue row falls due then). A pass that did
-- not run (the database away) is made up by the next, which looks back to where the last one stopped.
create function private.announce_open_windows()
returns integer
language plpgsql
set search_path = ''
as $$
declare
  upto timestamptz := now();
  since timestamptz;
  delivery public.deliveries;
  announced integer := 0;
begin
  select w.announced_through into since from private.window_announcements w for update;
  if not found then
    since := upto - interval '1 minute';
    insert into private.window_announcements (announced_through) values (upto);
  else
    update private.window_announcements set announced_through = upto;
  end if;
  for delivery in
    select * from public.deliveries d
    where d.status = 'pending' and d.driver_id is null and d.dispatch_status is null
      and d.window_start - interval '1 hour' > since and d.window_start - interval '1 hour' <= upto
  loop
    perform private.announce_to_drivers(delivery, 'delivery_available');
    announced := announced + 1;
  end loop;
  return announced;
end;
$$;
comment on function private.announce_open_windows() is 'Announces to the drivers the pending deliveries whose window came within the hour since the last pass; how many.';

select cron.schedule('announce-open-windows', '* * * * *', 'select private.announce_open_windows()');

-- Section: export

-- GET /api/v1/deliveries/export: the same query as the list (private.company_deliveries, which authorizes the
-- caller as a manager), all of it, as a cursor the edge fetches from in batches (public.fetch_deliveries) within the same transaction, so that
-- neither side holds more than a batch.
create function public.export_deliveries(
  status text default null, driver_id uuid default null, payment_status text default null, q text default null,
  created_from timestamptz default null, created_to timestamptz default null, late boolean default null)
returns refcursor
language plpgsql
stable
set search_path = ''
as $$
begin
  return private.company_deliveries(export_deliveries.status, export_deliveries.driver_id,
    export_deliveries.payment_status, export_deliveries.q, export_deliveries.created_from,
    export_deliveries.created_to, export_deliveries.late, null, null, null);
end;
$$;
comment on function public.export_deliveries(text, uuid, text, text, timestamptz, timestamptz, boolean) is 'Opens a cursor over every delivery of the caller''s company matching the list''s filters, newest first.';
grant execute on function public.export_deliveries(text, uuid, text, text, timestamptz, timestamptz, boolean) to authenticated;

create function public.fetch_deliveries(cursor refcursor, count integer)
returns public.delivery[]
language plpgsql
set search_path = ''
as $$
declare
  item public.deliveries;
  batch public.delivery[] := '{}';
begin
  perform private.authorize(variadic private.delivery_managers());
  for i in 1..least(greatest(fetch_deliveries.count, 1), 5000) loop
    fetch fetch_deliveries.cursor into item;
    exit when not found;
    batch := batch || private.delivery_row(item);
  end loop;
  return batch;
end;
$$;
comment on function public.fetch_deliveries(refcursor, integer) is 'The next deliveries (up to count, at most 5000) of a cursor public.export_deliveries opened in this transaction.';
grant execute on function public.fetch_deliveries(refcursor, integer) to authenticated;

-- Section: import

-- Which of these external ids the caller's company already has (the import skips those rows before it
-- measures any route).
create function public.existing_external_ids(external_ids text[])
returns text[]
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
begin
  return coalesce((select array_agg(d.external_id) from public.deliveries d
    where d.company_id = company and d.external_id = any (existing_external_ids.external_ids)), '{}');
end;
$$;
comment on function public.existing_external_ids(text[]) is 'The external ids among these that the caller''s company already used.';
grant execute on function public.existing_external_ids(text[]) to authenticated;

-- POST /api/v1/deliveries/import, once the edge has validated and routed the rows: each row through
-- public.create_delivery, the path every delivery is created by, on its own (a row refused leaves the
-- others); a row whose external id the company already has (an earlier upload, or an earlier row of
-- this one) is skipped. Answers {created: [{row, id}], skipped: [row], errors: [{row, detail}]}.
create function public.import_deliveries(company_id uuid, created_by uuid, rows jsonb)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  r jsonb;
  delivery jsonb;
  created jsonb := '[]';
  skipped jsonb := '[]';
  errors jsonb := '[]';
begin
  for r in select value from jsonb_array_elements(import_deliveries.rows) loop
    if r ->> 'external_id' is not null and exists (select from public.deliveries d
        where d.company_id = import_deliveries.company_id and d.external_id = r ->> 'external_id') then
      skipped := skipped || to_jsonb((r ->> 'row')::integer);
      continue;
    end if;
    begin
      delivery := to_jsonb(public.create_delivery(
        id => gen_random_uuid(),
        company_id => import_deliveries.company_id,
        created_by => import_deliveries.created_by,
        payment_method => 'invoice',
        origin_address => r ->> 'origin_address',
        origin_lat => (r ->> 'origin_lat')::double precision,
        origin_lng => (r ->> 'origin_lng')::double precision,
        destination_address => r ->> 'destination_address',
        destination_lat => (r ->> 'destination_lat')::double precision,
        destination_lng => (r ->> 'destination_lng')::double precision,
        distance_m => (r ->> 'distance_m')::numeric,
        duration_s => (r ->> 'duration_s')::numeric,
        recipient_name => r ->> 'recipient_name',
        recipient_phone => r ->> 'recipient_phone',
        notes => r ->> 'notes',
        driver_id => (r ->> 'driver_id')::uuid,
        window_start => (r ->> 'window_start')::timestamptz,
        window_end => (r ->> 'window_end')::timestamptz,
        external_id => r ->> 'external_id',
        recipient_email => r ->> 'recipient_email',
        collect_amount => (r ->> 'collect_amount')::numeric,
        collect_method => r ->> 'collect_method',
        collect_change_for => (r ->> 'collect_change_for')::numeric));
      created := created || jsonb_build_object('row', (r ->> 'row')::integer, 'id', delivery ->> 'id');
    exception
      when unique_violation or sqlstate 'PT409' then
        -- Another upload created the same external id meanwhile.
        skipped := skipped || to_jsonb((r ->> 'row')::integer);
      when sqlstate 'PT400' or sqlstate 'PT404' or sqlstate 'PT422' then
        errors := errors || jsonb_build_object('row', (r ->> 'row')::integer, 'detail', sqlerrm);
      when check_violation or not_null_violation or invalid_text_representation or numeric_value_out_of_range then
        errors := errors || jsonb_build_object('row', (r ->> 'row')::integer,
          'detail', 'a value does not fit the delivery it describes');
    end;
  end loop;
  return jsonb_build_object('created', created, 'skipped', skipped, 'errors', errors);
end;
$$;
comment on function public.import_deliveries(uuid, uuid, jsonb) is 'Creates routed invoice deliveries row by row through public.create_delivery; skips known external ids; reports refused rows (service role).';
revoke execute on function public.import_deliveries(uuid, uuid, jsonb) from authenticated;
grant execute on function public.import_deliveries(uuid, uuid, jsonb) to service_role;

-- Section: grants of the helpers

grant execute on function private.announce_open_windows() to service_role;
