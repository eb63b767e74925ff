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

-- Section: recall and return

-- The company calls a delivery back (POST /api/v1/deliveries/{id}/recall): an accepted one goes back to the pool
-- (`redispatch`: pending, nobody's, dispatched again as any pending delivery is) or is cancelled (`cancel`); one in
-- progress becomes `returning`, the goods on their way back to the origin, whatever `then_do` says. The driver who
-- had it is told (`delivery_recalled` on its topic, the delivery as drivers read it, with the reason), also when
-- it no longer has it. Anything else is 422.
create function public.recall_delivery(delivery_id uuid, reason text, then_do text default 'redispatch')
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  delivery public.deliveries := private.lock_delivery(recall_delivery.delivery_id, company);
  driver uuid := delivery.driver_id;
begin
  if nullif(btrim(recall_delivery.reason), '') is null then
    raise exception using errcode = 'PT400', message = 'reason is required';
  end if;
  if coalesce(recall_delivery.then_do, 'redispatch') not in ('redispatch', 'cancel') then
    raise exception using errcode = 'PT400', message = 'then must be redispatch or cancel';
  end if;
  if delivery.status not in ('accepted', 'in_progress') then
    raise exception using errcode = 'PT422',
      message = format('delivery cannot be recalled from %s: only accepted or in_progress', delivery.status);
  end if;
  update public.deliveries d set recall_reason = btrim(recall_delivery.reason) where d.id = delivery.id
  returning * into delivery;
  delivery := private.move_delivery(delivery,
    case when delivery.status = 'in_progress' then 'recall_return'
         when recall_delivery.then_do = 'cancel' then 'recall_cancel' else 'recall' end,
    (select auth.uid()),
    cancel_reason => case when recall_delivery.then_do = 'cancel' and delivery.status = 'accepted'
      then btrim(recall_delivery.reason) end);
  perform private.broadcast('driver:' || driver, 'delivery_recalled',
    private.delivery_json(delivery) || jsonb_build_object('tracking_token', null, 'tracking_url', null,
      'offer_expires_at', null));
  return private.delivery_row(delivery);
end;
$$;
comment on function public.recall_delivery(uuid, text, text) is 'The company calls back a delivery of its own: accepted -> pending (redispatch) or cancelled; in_progress -> returning; the driver is told (delivery_recalled).';
grant execute on function public.recall_delivery(uuid, text, text) to authenticated;

-- The driver brought a recalled delivery back to its origin: returning -> returned, terminal, and the driver is
-- credited as for a completion (one delivery_credit: the ledger's unique index holds it to once).
create function public.return_delivery(delivery_id uuid)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  delivery public.deliveries := private.lock_own_delivery(return_delivery.delivery_id);
begin
  delivery := private.move_delivery(delivery, 'return', (select auth.uid()));
  insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
  values (delivery.company_id, delivery.driver_id, 'delivery_credit',
    private.driver_credit(delivery.price, delivery.driver_share), delivery.id);
  return private.delivery_row(delivery);
end;
$$;
comment on function public.return_delivery(uuid) is 'The linked driver brought a recalled delivery back: returning -> returned, credited price * driver_share once.';
grant execute on function public.return_delivery(uuid) to authenticated;

-- Section: changes

-- PATCH /api/v1/deliveries/{id}, before anything is measured: the caller (owner, admin) may change this delivery of
-- its company, its contact fields and window until it is completed (or cancelled, or returned), its addresses
-- (`moves_ends`) only until it is picked up. Answers the delivery as it is; 422 otherwise.
create function private.check_editable(delivery public.deliveries, moves_ends boolean)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
  if delivery.status in ('completed', 'cancelled', 'returned') then
    raise exception using errcode = 'PT422', message = format('a %s delivery cannot be changed', delivery.status);
  end if;
  if check_editable.moves_ends and delivery.status not in ('awaiting_payment', 'pending', 'accepted', 'failed') then
    raise exception using errcode = 'PT422',
      message = format('the addresses of a delivery cannot change once it is picked up (it is %s)', delivery.status);
  end if;
end;
$$;
comment on function private.check_editable(public.deliveries, boolean) is 'Raises 422 unless a delivery may still be changed (not completed, cancelled or returned), and its addresses too (not yet picked up).';
grant execute on function private.check_editable(public.deliveries, boolean) to authenticated, service_role;

create function public.editable_delivery(delivery_id uuid, moves_ends boolean default false)
returns public.delivery
language plpgsql
stable
set search_path = ''
as $$
declare
  delivery public.deliveries;
begin
  perform private.authorize(variadic private.company_managers());
  delivery := private.visible_delivery(editable_delivery.delivery_id);
  perform private.check_editable(delivery, editable_delivery.moves_ends);
  return private.delivery_row(delivery);
end;
$$;
comment on function public.editable_delivery(uuid, boolean) is 'The delivery to change, once the caller may change it (and its addresses, when asked); 422 when its state forbids it.';
grant execute on function public.editable_delivery(uuid, boolean) to authenticated;

-- The change itself (service role: the route figures come from the edge's call to the routing service), under the
-- delivery's lock, checked again: each field `changes` names (null clears an optional one), the ends with the
-- measured route when `changes` has `distance_m`, `collect` (checked as on create; null removes it) until the delivery is
-- picked up. The price is quoted again for an invoice delivery and kept for a paid
-- Pix one; an unpaid Pix one whose price changes comes with `charge` {replaces, price, gateway_payment_id,
-- pix_copy_paste, pix_qr_code_image, payment_due_date}: the new charge the edge made (and the old one it
-- removed at the gateway), taken only while the delivery is unpaid with the charge it replaces (PT409). One history row
-- (`update`, with the changed fields' old and new values); the company and the driver who has it get
-- `delivery_updated`. A route holding the delivery would be timed again here (routes: another branch).
-- Security definer: it tells the driver through private.broadcast, which no API role may call.
create function public.update_delivery(delivery_id uuid, actor_id uuid, changes jsonb)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  old_row public.deliveries;
  new_row public.deliveries;
  moves_ends boolean := changes ? 'distance_m';
  collect jsonb := nullif(changes -> 'collect', 'null'::jsonb);
  charge jsonb := nullif(changes -> 'charge', 'null'::jsonb);
  diff jsonb;
  payload jsonb;
begin
  old_row := private.lock_delivery(update_delivery.delivery_id);
  perform private.check_editable(old_row, moves_ends);
  if changes ? 'external_id' and changes ->> 'external_id' is distinct from old_row.external_id
     and changes ->> 'external_id' is not null then
    perform private.check_external_id(old_row.company_id, changes ->> 'external_id');
  end if;
  if charge is not null and (old_row.payment_method <> 'pix' or old_row.payment_status <> 'pending'
      or old_row.gateway_payment_id is distinct from charge ->> 'replaces') then
    raise exception using errcode = 'PT409',
      message = 'the delivery''s Pix charge changed meanwhile (paid or replaced); nothing changed';
  end if;
  -- What the driver collects at the door (17_cash.sql) changes, or goes (null), until the delivery is picked up.
  if changes ? 'collect' then
    if old_row.status not in ('awaiting_payment', 'pending', 'accepted') then
      raise exception using errcode = 'PT422',
        message = format('what a delivery collects cannot change once it is picked up (it is %s)', old_row.status);
    end if;
    perform private.check_collect((collect ->> 'amount')::numeric, collect ->> 'method',
      (collect ->> 'change_for')::numeric);
  end if;
  update public.deliveries d set
    recipient_name = case when changes ? 'recipient_name' then changes ->> 'recipient_name' else d.recipient_name end,
    recipient_phone = case when changes ? 'recipient_phone' then changes ->> 'recipient_phone' else d.recipient_phone end,
    recipient_email = case when changes ? 'recipient_email' then changes ->> 'recipient_email' else d.recipient_email end,
    notes = case when changes ? 'notes' then changes ->> 'notes' else d.notes end,
    external_id = case when changes ? 'external_id' then changes ->> 'external_id' else d.external_id end,
    window_start = case when changes ? 'window_start' then (changes ->> 'window_start')::timestamptz else d.window_start end,
    window_end = case when changes ? 'window_end' then (changes ->> 'window_end')::timestamptz else d.window_end end,
    origin_address = case when moves_ends then btrim(changes ->> 'origin_address') else d.origin_address end,
    origin_lat = case when moves_ends then (changes ->> 'origin_lat')::double precision else d.origin_lat end,
    origin_lng = case when moves_ends then (changes ->> 'origin_lng')::double precision else d.origin_lng end,
    destination_address = case when moves_ends then btrim(changes ->> 'destination_address') else d.destination_address end,
    destination_lat = case when moves_ends then (changes ->> 'destination_lat')::double precision else d.destination_lat end,
    destination_lng = case when moves_ends then (changes ->> 'destination_lng')::double precision else d.destination_lng end,
    distance_m = case when moves_ends then round((changes ->> 'distance_m')::numeric)::integer else d.distance_m end,
    duration_s = case when moves_ends then round((changes ->> 'duration_s')::numeric)::integer else d.duration_s end,
    collect_amount = case when changes ? 'collect' then (collect ->> 'amount')::numeric else d.collect_amount end,
    collect_method = case when changes ? 'collect' then collect ->> 'method' else d.collect_method end,
    collect_change_for = case when changes ? 'collect' then (collect ->> 'change_for')::numeric else d.collect_change_for end,
    price = case when charge is not null then (charge ->> 'price')::numeric
      when moves_ends and d.payment_method = 'invoice'
      then private.price_for(d.company_id, round((changes ->> 'distance_m')::numeric)::integer) else d.price end,
    gateway_payment_id = coalesce(charge ->> 'gateway_payment_id', d.gateway_payment_id),
    pix_copy_paste = coalesce(charge ->> 'pix_copy_paste', d.pix_copy_paste),
    pix_qr_code_image = coalesce(charge ->> 'pix_qr_code_image', d.pix_qr_code_image),
    payment_due_date = coalesce((charge ->> 'payment_due_date')::date, d.payment_due_date),
    updated_at = now()
  where d.id = old_row.id
  returning * into new_row;
  if changes ? 'window_start' or changes ? 'window_end' then
    if new_row.window_end is distinct from old_row.window_end and new_row.window_end <= now() then
      raise exception using errcode = 'PT400', message = 'window_end must be in the future';
    end if;
    if new_row.window_start >= new_row.window_end then
      raise exception using errcode = 'PT400', message = 'window_start must be before window_end';
    end if;
  end if;
  select coalesce(jsonb_object_agg(n.key, jsonb_build_object('from', o.value, 'to', n.value)), '{}') into diff
  from jsonb_each(to_jsonb(new_row)) n join jsonb_each(to_jsonb(old_row)) o using (key)
  where n.value is distinct from o.value and n.key not in ('updated_at', 'search_text', 'pix_qr_code_image', 'pix_copy_paste');
  insert into public.delivery_history
    (delivery_id, company_id, trigger, from_status, to_status, from_payment_status, to_payment_status, actor_id, changes)
  values (new_row.id, new_row.company_id, 'update', old_row.status, new_row.status, old_row.payment_status,
          new_row.payment_status, update_delivery.actor_id, diff);
  payload := private.delivery_json(new_row)
    || jsonb_build_object('tracking_token', null, 'tracking_url', null, 'offer_expires_at', null);
  perform private.broadcast('company:' || new_row.company_id, 'delivery_updated',
    payload || private.delivery_tracking_link(new_row.id));
  if new_row.driver_id is not null and new_row.accepted_at is not null then
    perform private.broadcast('driver:' || new_row.driver_id, 'delivery_updated', payload);
  end if;
  -- Hook: a route holding this delivery is timed again here once routes exist (branch `routes`).
  return private.delivery_row(new_row);
end;
$$;
comment on function public.update_delivery(uuid, uuid, jsonb) is 'Changes a delivery''s fields (and its ends, measured by the edge), recording the change and telling its company and driver (service role).';
revoke execute on function public.update_delivery(uuid, uuid, jsonb) from authenticated;
grant execute on function public.update_delivery(uuid, uuid, jsonb) to service_role;

-- Section: refunds

-- POST /api/v1/deliveries/{id}/refund, before the gateway is asked: the caller (owner, admin) may refund this
-- delivery, a cancelled Pix delivery of its company whose payment was received (refund_due). One already
-- refunded answers as it is (the edge then asks the gateway nothing); anything else is 422.
create function public.refundable_delivery(delivery_id uuid)
returns public.delivery
language plpgsql
stable
set search_path = ''
as $$
declare
  delivery public.deliveries;
begin
  perform private.authorize(variadic private.company_managers());
  delivery := private.visible_delivery(refundable_delivery.delivery_id);
  if delivery.payment_method <> 'pix' or delivery.status <> 'cancelled'
     or delivery.payment_status not in ('received', 'confirmed', 'refunded') then
    raise exception using errcode = 'PT422',
      message = format('only a cancelled Pix delivery whose payment was received can be refunded (this one is %s, payment %s)',
        delivery.status, delivery.payment_status);
  end if;
  return private.delivery_row(delivery);
end;
$$;
comment on function public.refundable_delivery(uuid) is 'The delivery to refund, once the caller may refund it: a cancelled Pix delivery of its company with refund_due (or already refunded); 422 otherwise.';
grant execute on function public.refundable_delivery(uuid) to authenticated;

-- After the gateway accepted the refund (service role): the request is recorded (refund_status `requested`, one
-- history row however often it is asked); when the gateway's answer already says REFUNDED, the refund is applied
-- as its PAYMENT_REFUNDED would be (public.apply_payment_event: the payment refunded, a credit reversed), so the
-- event, when it comes, is a duplicate.
create function public.record_refund(delivery_id uuid, actor_id uuid, refunded boolean)
returns public.delivery
language plpgsql
set search_path = ''
as $$
declare
  delivery public.deliveries;
  changed public.deliveries;
begin
  delivery := private.lock_delivery(record_refund.delivery_id);
  if delivery.refund_requested_at is null then
    update public.deliveries d set refund_requested_at = now(), updated_at = now() where d.id = delivery.id
    returning * into changed;
    perform private.record_delivery_history(delivery, changed, 'refund_requested', record_refund.actor_id);
    delivery := changed;
  end if;
  if record_refund.refunded then
    perform public.apply_payment_event(delivery.company_id, 'PAYMENT_REFUNDED', delivery.gateway_payment_id, null);
    select * into delivery from public.deliveries d where d.id = record_refund.delivery_id;
  end if;
  return private.delivery_row(delivery);
end;
$$;
comment on function public.record_refund(uuid, uuid, boolean) is 'Records that the gateway accepted a delivery''s refund (requested), applying it at once when the gateway says REFUNDED (service role).';
revoke execute on function public.record_refund(uuid, uuid, boolean) from authenticated;
grant execute on function public.record_refund(uuid, uuid, boolean) to service_role;

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

-- POST /api/v1/deliveries/import, once the edge has validated and routed the rows: each row (the fields of
-- public.new_delivery) through private.insert_delivery, the path every delivery is created by, on its own (a row refused leaves the
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
      -- The row's fields are public.new_delivery's (any other key is ignored); an import charges nothing.
      delivery := to_jsonb(private.insert_delivery(gen_random_uuid(), import_deliveries.company_id,
        import_deliveries.created_by, jsonb_populate_record(null::public.new_delivery,
          r - array['charged_price', 'gateway_payment_id', 'pix_copy_paste', 'pix_qr_code_image', 'payment_due_date']
            || jsonb_build_object('payment_method', 'invoice'))));
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
comment on function public.import_deliveries(uuid, uuid, jsonb) is 'Creates routed invoice deliveries row by row through private.insert_delivery; skips known external ids; reports refused rows (service role).';
revoke execute on function public.import_deliveries(uuid, uuid, jsonb) from authenticated;
grant execute on function public.import_deliveries(uuid, uuid, jsonb) to service_role;

-- Section: grants of the helpers

grant execute on function private.announce_open_windows() to service_role;
