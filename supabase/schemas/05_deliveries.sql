-- Deliveries (docs/state-machines.md, docs/contract.md): the table, its one state machine, the history
-- of every move, the price of a route, the driver's credit on completion, the
-- effect of the gateway's PAYMENT_* events, and the realtime broadcasts.
--
-- Every move goes through private.move_delivery, which refuses (PT422) any move
-- private.delivery_moves() does not list. Callers lock the row first
-- (private.lock_delivery: `for update`), so concurrent moves serialize and the
-- loser sees the winner's state.

-- Section: types (02_company.sql says why functions return them)

create type public.geo_point as (lat double precision, lng double precision);
comment on type public.geo_point is 'A position: latitude and longitude in degrees.';

create type public.pix_payment as (
  gateway_payment_id text,
  pix_copy_paste text,
  pix_qr_code_image text,
  due_date date
);
comment on type public.pix_payment is 'A delivery''s Pix charge at the gateway.';

create type public.delivery_proof as (photo_path text, signature_path text, note text);
comment on type public.delivery_proof is 'Proof of delivery: Storage object names in delivery-proofs, and the driver''s note.';

-- Money at the door (17_cash.sql): what the driver collects from the recipient, and what was collected.
create type public.delivery_collect as (amount numeric, method text, change_for numeric, change_due numeric);
comment on type public.delivery_collect is 'What the driver collects at the door (cash or card), and in cash the note to bring change for and the change due.';

create type public.delivery_collected as (amount numeric, method text);
comment on type public.delivery_collected is 'What the driver collected at the door, as the driver reported it on completion.';

create type public.delivery as (
  id uuid,
  company_id uuid,
  status text,
  payment_status text,
  payment_method text,
  origin_address text,
  origin public.geo_point,
  destination_address text,
  destination public.geo_point,
  distance_m integer,
  duration_s integer,
  price numeric,
  driver_id uuid,
  recipient_name text,
  recipient_phone text,
  notes text,
  payment public.pix_payment,
  cancel_reason text,
  refund_due boolean,
  created_at timestamptz,
  updated_at timestamptz,
  accepted_at timestamptz,
  started_at timestamptz,
  completed_at timestamptz,
  cancelled_at timestamptz,
  remaining_m integer,
  eta_at timestamptz,
  eta_refreshed_at timestamptz,
  proof public.delivery_proof,
  tracking_token text,
  tracking_url text,
  recipient_email text,
  -- The delivery's life beyond success and cancellation (Section: windows). In the order the migrations
  -- add them: pg-delta's `alter type ... add attribute` adds new attributes alphabetically, and
  -- private.delivery_row builds the row by position (the drift check compares the order).
  attempts integer,
  external_id text,
  failed_at timestamptz,
  failure_note text,
  failure_reason text,
  late boolean,
  window_end timestamptz,
  window_start timestamptz,
  -- Dispatch (14_dispatch.sql), in the same order.
  dispatch_status text,
  offer_expires_at timestamptz,
  -- The photo of the last failed attempt (09_proof.sql, 11_lifecycle.sql).
  failure_photo_path text,
  -- Money at the door (17_cash.sql), in the order the migration added them.
  collect_mismatch boolean,
  collected public.delivery_collected,
  collect public.delivery_collect,
  -- Routes (16_routes.sql), in the same order.
  service_s integer,
  size integer,
  -- Recall and return, refunds (11_lifecycle.sql), in the same order.
  recall_reason text,
  refund_status text,
  returned_at timestamptz
);
comment on type public.delivery is 'A delivery as the API returns it.';

-- What a new delivery is made of, once: everything but its id, company and author, which the caller's context
-- gives. public.create_delivery takes these fields as named arguments (its RPC), public.import_deliveries as
-- the JSON of each row, and both make the delivery from this one row (private.insert_delivery).
create type public.new_delivery as (
  payment_method text,
  origin_address text,
  origin_lat double precision,
  origin_lng double precision,
  destination_address text,
  destination_lat double precision,
  destination_lng double precision,
  distance_m numeric,
  duration_s numeric,
  recipient_name text,
  recipient_phone text,
  notes text,
  driver_id uuid,
  charged_price numeric,
  gateway_payment_id text,
  pix_copy_paste text,
  pix_qr_code_image text,
  payment_due_date date,
  window_start timestamptz,
  window_end timestamptz,
  external_id text,
  recipient_email text,
  collect_amount numeric,
  collect_method text,
  collect_change_for numeric
);
comment on type public.new_delivery is 'A delivery to create, routed (and for Pix, charged) by the edge: every field but its id, company and author.';

create type public.delivery_page as (items public.delivery[], next_cursor text);
comment on type public.delivery_page is 'One page of deliveries, newest first; next_cursor is null on the last page.';

create type public.route_quote as (distance_m integer, duration_s integer, price numeric);
comment on type public.route_quote is 'A route as measured, and the company''s price for it.';

-- Section: search

-- Both are extensions every Supabase project has (and the local Postgres ships as contrib modules).
create extension if not exists unaccent with schema extensions;
create extension if not exists pg_trgm with schema extensions;

-- Immutable so that a generated column and an index may use it: unaccent() itself is only stable, since
-- its rules file could change; ours is the one the extension installs, named explicitly. Security definer:
-- the extension's functions are created after our default privileges took PUBLIC's execute right away.
create function private.fold(value text)
returns text
language plpgsql
immutable
parallel safe
security definer
set search_path = ''
as $$ begin return lower(extensions.unaccent('extensions.unaccent'::regdictionary, fold.value)); end; $$;
comment on function private.fold(text) is 'Text as the search compares it: lower case, without accents.';

create function private.search_text(
  origin_address text, destination_address text, recipient_name text, recipient_phone text, external_id text)
returns text
language plpgsql
immutable
parallel safe
set search_path = ''
as $$
begin
  return private.fold(concat_ws(' ', search_text.origin_address, search_text.destination_address,
    search_text.recipient_name, search_text.recipient_phone, regexp_replace(search_text.recipient_phone, '\D', '', 'g'),
    search_text.external_id));
end;
$$;
comment on function private.search_text(text, text, text, text, text) is 'What the deliveries list''s q searches: addresses, recipient name and phone (also as digits alone), external id, folded.';
-- Whoever writes a delivery computes its search text.
grant execute on function private.fold(text), private.search_text(text, text, text, text, text) to authenticated, service_role;

-- Section: tables

create table public.deliveries (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  status text not null check (status in ('awaiting_payment', 'pending', 'accepted', 'in_progress', 'completed', 'cancelled',
    'failed', 'returning', 'returned')),
  payment_status text not null check (payment_status in ('pending', 'received', 'confirmed', 'refunded', 'overdue', 'invoiced')),
  payment_method text not null check (payment_method in ('pix', 'invoice')),
  origin_address text not null check (length(btrim(origin_address)) between 1 and 500),
  origin_lat double precision not null check (origin_lat between -90 and 90),
  origin_lng double precision not null check (origin_lng between -180 and 180),
  destination_address text not null check (length(btrim(destination_address)) between 1 and 500),
  destination_lat double precision not null check (destination_lat between -90 and 90),
  destination_lng double precision not null check (destination_lng between -180 and 180),
  distance_m integer not null check (distance_m >= 0),
  duration_s integer not null check (duration_s >= 0),
  price numeric(12, 2) not null check (price >= 0),
  -- The share of the price the driver is credited on completion, fixed when the
  -- delivery is created so that a later price change does not alter its terms.
  driver_share numeric(5, 4) not null check (driver_share between 0 and 1),
  -- Set with accepted_at when a driver takes the delivery; set without it while
  -- a Pix delivery created for a given driver waits for its payment.
  driver_id uuid references public.drivers (id),
  recipient_name text check (length(recipient_name) <= 200),
  recipient_phone text check (length(recipient_phone) <= 30),
  notes text check (length(notes) <= 2000),
  gateway_payment_id text unique,
  pix_copy_paste text,
  pix_qr_code_image text,
  payment_due_date date,
  cancel_reason text check (length(cancel_reason) <= 500),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  accepted_at timestamptz,
  started_at timestamptz,
  completed_at timestamptz,
  cancelled_at timestamptz,
  -- The live ETA while in progress (08_tracking.sql): the remaining
  -- road distance and the expected arrival as the routing service last measured them from the
  -- driver's position, when, and from where (the next refresh needs the driver to have moved).
  remaining_m integer check (remaining_m >= 0),
  eta_at timestamptz,
  eta_refreshed_at timestamptz,
  -- When the routing service was last asked (answered or not): the 30-second gate.
  eta_requested_at timestamptz,
  eta_from_lat double precision,
  eta_from_lng double precision,
  -- Proof of delivery, set on completion (09_proof.sql): the Storage
  -- object names of the photo and the signature the driver uploaded, and the driver's note.
  proof_photo_path text,
  proof_signature_path text,
  proof_note text check (length(proof_note) <= 1000),
  -- Where the recipient's e-mail notifications go (13_notifications.sql).
  recipient_email text check (length(recipient_email) <= 254),
  -- When the recipient expects it (optional); not offered to drivers before an hour ahead of window_start
  -- (private.dispatchable), late once window_end has passed undelivered (private.is_late).
  window_start timestamptz,
  window_end timestamptz,
  -- The company's own reference, unique within the company, so its systems can create without duplicates.
  external_id text check (length(external_id) between 1 and 100),
  -- The attempt under way: 1 at creation, one more each time a failed delivery is reopened.
  attempts integer not null default 1 check (attempts >= 1),
  -- The last failed attempt: when, why (the driver's reason), and the driver's note.
  failed_at timestamptz,
  failure_reason text check (failure_reason in ('recipient_absent', 'address_not_found', 'refused', 'damaged', 'other')),
  failure_note text check (length(failure_note) <= 1000),
  -- What the list's `q` searches (private.search_text): the addresses, the recipient's name and phone (also as
  -- digits alone) and the external id, lower case and without accents, for a trigram index.
  search_text text generated always as (private.search_text(origin_address, destination_address, recipient_name,
    recipient_phone, external_id)) stored,
  -- Where dispatch (14_dispatch.sql) has it: null when it is not under dispatch (the company broadcasts, or the
  -- delivery was given to a driver from the start), queued (waiting for its next round of ranking), offered (a
  -- batch of drivers holds offers), unassigned (nobody eligible was left: open to every driver, as broadcast),
  -- assigned (dispatch ended with a driver). Set by the dispatch triggers and functions only.
  dispatch_status text check (dispatch_status in ('queued', 'offered', 'unassigned', 'assigned')),
  -- The last failed attempt's photo, if the driver took one: its Storage object name in delivery-proofs
  -- (`{company_id}/{id}/failed-{attempt}.{ext}`, 09_proof.sql), set by the failure with the reason and note.
  failure_photo_path text,
  -- Money at the door (17_cash.sql): what the driver collects from the recipient (cash or card, any payment
  -- method), the note the recipient pays cash with (the driver brings change), and what the driver reported
  -- collecting on completion (a different amount is kept as reported: collect_mismatch).
  collect_amount numeric(12, 2) check (collect_amount > 0),
  collect_method text check (collect_method in ('cash', 'card')),
  collect_change_for numeric(12, 2),
  collected_amount numeric(12, 2) check (collected_amount >= 0),
  collected_method text check (collected_method in ('cash', 'card')),
  constraint deliveries_collect_whole check ((collect_amount is null) = (collect_method is null)),
  constraint deliveries_collect_change check (collect_change_for is null
    or (collect_method = 'cash' and collect_change_for >= collect_amount)),
  constraint deliveries_collected_whole check ((collected_amount is null) = (collected_method is null)),
  -- Routes (16_routes.sql): the units it takes in a vehicle, and the seconds spent at the drop-off (the pickup's
  -- are the planner's PICKUP_SERVICE_S).
  size integer not null default 1 check (size between 1 and 10000),
  service_s integer not null default 120 check (service_s between 0 and 14400),
  -- Recalled by the company (11_lifecycle.sql): why; when the goods were brought back (returned).
  recall_reason text check (length(recall_reason) <= 500),
  returned_at timestamptz,
  -- When the company asked the gateway to refund the payment (POST /refund); the gateway's PAYMENT_REFUNDED
  -- then sets payment_status refunded.
  refund_requested_at timestamptz,
  check (window_start < window_end),
  check (status <> 'failed' or (failed_at is not null and failure_reason is not null)),
  check ((payment_method = 'pix') = (gateway_payment_id is not null)),
  check ((payment_method = 'invoice') = (payment_status = 'invoiced')),
  check (status not in ('accepted', 'in_progress', 'completed', 'returning', 'returned')
    or (driver_id is not null and accepted_at is not null)),
  check ((status = 'cancelled') = (cancelled_at is not null)),
  -- A returned delivery whose payment is refunded afterwards is cancelled, and keeps when it was returned.
  check (status <> 'returned' or returned_at is not null)
);
comment on table public.deliveries is 'Deliveries of a company, from payment to completion (docs/state-machines.md).';
create index deliveries_company_created_idx on public.deliveries (company_id, created_at desc, id desc);
create index deliveries_company_status_created_idx on public.deliveries (company_id, status, created_at desc, id desc);
create index deliveries_driver_created_idx on public.deliveries (driver_id, created_at desc, id desc);
-- What the lists filter by, each in the lists' order, so that a page is one index
-- range scan whatever the company's history (public.list_deliveries): by payment
-- status; a driver's by state or payment status; and the pending deliveries
-- open to every driver of a company (few, whatever the history; those dispatch
-- offers to a few drivers are found from the offers instead).
create index deliveries_company_payment_created_idx
  on public.deliveries (company_id, payment_status, created_at desc, id desc);
create index deliveries_driver_status_created_idx on public.deliveries (driver_id, status, created_at desc, id desc);
create index deliveries_driver_payment_created_idx
  on public.deliveries (driver_id, payment_status, created_at desc, id desc);
create index deliveries_offered_created_idx on public.deliveries (company_id, created_at desc, id desc)
  where status = 'pending' and driver_id is null and (dispatch_status is null or dispatch_status = 'unassigned');
-- One delivery per external id within a company (public.create_delivery answers 409 naming it).
create unique index deliveries_company_external_id_idx on public.deliveries (company_id, external_id)
  where external_id is not null;
-- `q`: a trigram index over the search text answers `like '%...%'` without reading every row.
create index deliveries_search_text_idx on public.deliveries using gin (search_text extensions.gin_trgm_ops);
-- `late=true`: the deliveries still open with a window, few whatever the history, in the list's order.
create index deliveries_open_window_created_idx on public.deliveries (company_id, created_at desc, id desc)
  include (window_end)
  where window_end is not null and status not in ('completed', 'cancelled');
-- The reconciliation's scan: only deliveries awaiting payment, by age.
create index deliveries_awaiting_payment_created_idx on public.deliveries (created_at) where status = 'awaiting_payment';
-- The trigger's lookup on every accepted position: "this driver's deliveries in
-- progress", which the deliveries' own (driver_id, created_at) index would
-- answer by walking the driver's whole history.
create index deliveries_driver_in_progress_idx on public.deliveries (driver_id) where status = 'in_progress';
-- "Deliveries completed today" of a candidate, whatever its history.
create index deliveries_driver_completed_idx on public.deliveries (driver_id, completed_at) where status = 'completed';
alter table public.deliveries enable row level security;

-- Section: windows

-- The one rule of when a delivery may go to drivers: pending, nobody's yet, and its window (if it has one)
-- opens within the hour. Drivers see it (the policy below), are told of it (delivery_available, at once or
-- when the window comes near: private.announce_open_windows) and may accept it only then; dispatch calls it too.
create function private.dispatchable(delivery public.deliveries)
returns boolean
language plpgsql
stable
set search_path = ''
as $$
begin
  return delivery.status = 'pending' and delivery.driver_id is null
    and (delivery.window_start is null or delivery.window_start - interval '1 hour' <= now());
end;
$$;
comment on function private.dispatchable(public.deliveries) is 'Whether a delivery may be offered, shown to or assigned automatically to drivers now: pending, unassigned, its window within the hour.';
grant execute on function private.dispatchable(public.deliveries) to authenticated, service_role;

-- Open to every driver of the company: dispatchable, and either not under dispatch (the company broadcasts) or
-- left unassigned by dispatch (14_dispatch.sql). Drivers see it (the policy below) and are told of it
-- (delivery_available: private.broadcast_delivery_change, private.announce_open_windows).
create function private.open_to_all(delivery public.deliveries)
returns boolean
language plpgsql
stable
set search_path = ''
as $$
begin
  return private.dispatchable(delivery)
    and (delivery.dispatch_status is null or delivery.dispatch_status = 'unassigned');
end;
$$;
comment on function private.open_to_all(public.deliveries) is 'Whether a delivery is open to every driver of its company now: dispatchable, and not (or no longer) offered by dispatch to a few.';
grant execute on function private.open_to_all(public.deliveries) to authenticated, service_role;

-- When the calling driver's live offer of a delivery expires (14_dispatch.sql): null for anyone else, and once
-- the offer was answered, withdrawn or has expired. A driver sees a delivery dispatch is offering only while it
-- holds such an offer (the policy below). Security definer: the offers are the managers' to read.
create function private.my_live_offer(delivery_id uuid)
returns timestamptz
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select o.expires_at from public.dispatch_offers o
          where o.delivery_id = my_live_offer.delivery_id and o.driver_id = private.driver_id()
            and o.outcome is null and o.expires_at > now());
end;
$$;
comment on function private.my_live_offer(uuid) is 'When the calling driver''s live offer of a delivery expires, or null when it holds none.';
grant execute on function private.my_live_offer(uuid) to authenticated, service_role;

create function private.my_live_offers()
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return array(select o.delivery_id from public.dispatch_offers o
               where o.driver_id = private.driver_id() and o.outcome is null and o.expires_at > now());
end;
$$;
comment on function private.my_live_offers() is 'The deliveries the calling driver holds a live offer of (14_dispatch.sql).';
grant execute on function private.my_live_offers() to authenticated, service_role;

-- Late: the window has ended and the delivery is still open (neither completed nor cancelled). The list's
-- `late=true` filter writes the same condition out, so that its partial index applies
-- (deliveries_open_window_created_idx).
create function private.is_late(status text, window_end timestamptz)
returns boolean
language plpgsql
stable
set search_path = ''
as $$
begin
  return coalesce(is_late.window_end < now(), false) and is_late.status not in ('completed', 'cancelled', 'returned');
end;
$$;
comment on function private.is_late(text, timestamptz) is 'Whether a delivery is late: its window ended and it is neither completed, cancelled nor returned.';
grant execute on function private.is_late(text, timestamptz) to authenticated, service_role;

-- Managers (and the older-form admin) see the company's deliveries. A driver
-- sees the pending ones of its company open to every driver (private.dispatchable:
-- not before their window nears; under dispatch, only while offered to it or once
-- nobody eligible was left) and those it has taken: linked to it with
-- accepted_at set, so never another driver's and never one still waiting for its payment.
create policy deliveries_select_visible on public.deliveries
  for select to authenticated
  using (
    company_id = (select private.company_of(private.delivery_managers()))
    or (status = 'pending' and driver_id is null
      and company_id = (select private.company_id()) and (select private.driver_id()) is not null
      and (private.open_to_all(deliveries)
        or (dispatch_status = 'offered' and private.my_live_offer(id) is not null)))
    or (driver_id = (select private.driver_id()) and accepted_at is not null)
  );
-- Rows change only through the functions below.
grant select on public.deliveries to authenticated;
grant all on public.deliveries to service_role;

-- Section: tracking tokens

-- Every delivery is born with an unguessable tracking token (128 random bits,
-- base64url) for its recipient's link. The token is kept apart from the
-- deliveries, which drivers may read, and only its SHA-256 is ever looked up:
-- the public endpoint and the tracking channel's policy find a delivery by the
-- hash (08_tracking.sql). The row is written before the delivery's
-- own (so the delivery's first broadcast already carries the link); the key is
-- checked at commit.
create extension if not exists pgcrypto with schema extensions;
create table private.delivery_tracking (
  delivery_id uuid primary key
    references public.deliveries (id) on delete cascade deferrable initially deferred,
  token text not null unique,
  token_hash bytea not null unique
);
comment on table private.delivery_tracking is 'The tracking token of each delivery and its SHA-256, the only form it is looked up by.';
alter table private.delivery_tracking enable row level security;

create function private.new_tracking_token()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  token text := rtrim(translate(encode(extensions.gen_random_bytes(16), 'base64'), '+/', '-_'), '=');
begin
  insert into private.delivery_tracking (delivery_id, token, token_hash)
  values (new.id, token, sha256(convert_to(token, 'UTF8')));
  return new;
end;
$$;
comment on function private.new_tracking_token() is 'Gives a new delivery its tracking token (128 random bits, base64url) and the token''s hash.';
create trigger deliveries_new_tracking_token before insert on public.deliveries
  for each row execute function private.new_tracking_token();

-- The link's fields: shown to the delivery's managers (and the service role),
-- never to drivers.
create function private.delivery_tracking_link(delivery_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return coalesce((select jsonb_build_object('tracking_token', t.token, 'tracking_url', '/track/' || t.token)
    from private.delivery_tracking t where t.delivery_id = delivery_tracking_link.delivery_id), '{}'::jsonb);
end;
$$;
comment on function private.delivery_tracking_link(uuid) is 'The tracking token and URL path of a delivery, for its managers.';

create function private.delivery_tracking_fields(delivery_id uuid, company_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if (auth.jwt() ->> 'role') = 'service_role'
     or delivery_tracking_fields.company_id = private.company_of(private.delivery_managers()) then
    return private.delivery_tracking_link(delivery_tracking_fields.delivery_id);
  end if;
  return '{}'::jsonb;
end;
$$;
comment on function private.delivery_tracking_fields(uuid, uuid) is 'The tracking link of a delivery when the caller manages its company (or is the service role), else nothing.';
grant execute on function private.delivery_tracking_fields(uuid, uuid) to authenticated, service_role;

-- A driver credit may only point at a delivery that exists.
alter table public.wallet_entries
  add constraint wallet_entries_delivery_id_fkey foreign key (delivery_id) references public.deliveries (id);

create table public.delivery_history (
  id bigint generated always as identity primary key,
  delivery_id uuid not null references public.deliveries (id) on delete cascade,
  company_id uuid not null references public.companies (id) on delete cascade,
  -- create, assign, accept, start, complete, cancel, or a gateway event in
  -- lower case (payment_received, payment_confirmed, payment_refunded, payment_overdue).
  trigger text not null,
  from_status text,
  to_status text not null,
  from_payment_status text,
  to_payment_status text not null,
  -- The user who asked for the move; null for the gateway's events.
  actor_id uuid,
  created_at timestamptz not null default clock_timestamp(),
  -- A change of the delivery's fields (`update`, public.update_delivery): each changed field's {from, to}.
  changes jsonb
);
comment on table public.delivery_history is 'Every move of a delivery: who, when, from which state to which.';
create index delivery_history_delivery_idx on public.delivery_history (delivery_id, created_at);
create index delivery_history_company_idx on public.delivery_history (company_id);
-- A gateway event is applied at most once per delivery: a repeat is a duplicate.
create unique index delivery_history_one_payment_event on public.delivery_history (delivery_id, trigger)
  where trigger in ('payment_received', 'payment_confirmed', 'payment_refunded', 'payment_overdue');
alter table public.delivery_history enable row level security;
create policy delivery_history_select_managers on public.delivery_history
  for select to authenticated
  using (
    company_id = (select private.company_of(private.delivery_managers()))
  );
-- Append-only for everyone, the service role included.
grant select on public.delivery_history to authenticated;
revoke all on public.delivery_history from service_role;
grant select, insert on public.delivery_history to service_role;
create trigger delivery_history_append_only before update or delete on public.delivery_history
  for each row execute function private.refuse_ledger_change();
create trigger delivery_history_no_truncate before truncate on public.delivery_history
  for each statement execute function private.refuse_ledger_change();

-- Section: the state machine

-- The one list of allowed moves. Creation is not a move: a Pix delivery starts
-- awaiting_payment, an invoice delivery pending. PAYMENT_CONFIRMED changes only
-- the payment status, so it is not listed either (a payment first heard of as
-- confirmed moves as payment_received first: private.apply_payment_effect).
create function private.delivery_moves()
returns table (trigger text, from_statuses text[], to_status text)
language plpgsql
immutable
set search_path = ''
as $$
begin
  return query values
    ('payment_received', array['awaiting_payment'], 'pending'),
    ('accept', array['pending'], 'accepted'),
    ('assign', array['pending'], 'accepted'),
    ('start', array['accepted'], 'in_progress'),
    ('complete', array['in_progress'], 'completed'),
    ('cancel', array['awaiting_payment', 'pending', 'accepted', 'failed'], 'cancelled'),
    ('fail', array['in_progress'], 'failed'),
    ('reopen', array['failed'], 'pending'),
    ('unassign', array['accepted'], 'pending'),
    ('payment_refunded', array['awaiting_payment', 'pending', 'accepted', 'in_progress', 'completed', 'failed',
      'returning', 'returned'], 'cancelled'),
    -- The company calls a delivery back (public.recall_delivery): before pickup, to be dispatched again or
    -- cancelled; after it, the driver brings the goods back to the origin (returning), then says so (return).
    ('recall', array['accepted'], 'pending'),
    ('recall_cancel', array['accepted'], 'cancelled'),
    ('recall_return', array['in_progress'], 'returning'),
    ('return', array['returning'], 'returned'),
    ('payment_overdue', array['awaiting_payment'], 'cancelled');
end;
$$;
comment on function private.delivery_moves() is 'The allowed delivery moves: for each trigger, the states it may start from and the state it leads to.';

-- In PL/pgSQL, not SQL: with its `set search_path` a SQL function is never
-- inlined, and Postgres plans its body again on every call, which made a
-- delivery's JSON cost about 1 ms (seeding a million deliveries, each
-- broadcast, ran for more than 20 minutes). PL/pgSQL keeps its plans for the
-- connection and evaluates a row constructor as a simple expression: about
-- 0.02 ms a delivery beside the tracking link's look-up.
create function private.delivery_row(d public.deliveries)
returns public.delivery
language plpgsql
stable
set search_path = ''
as $$
declare
  link jsonb := private.delivery_tracking_fields(d.id, d.company_id);
begin
  return row(
    d.id, d.company_id, d.status, d.payment_status, d.payment_method,
    d.origin_address, row(d.origin_lat, d.origin_lng)::public.geo_point,
    d.destination_address, row(d.destination_lat, d.destination_lng)::public.geo_point,
    d.distance_m, d.duration_s, d.price, d.driver_id, d.recipient_name, d.recipient_phone, d.notes,
    case when d.payment_method = 'pix' then
      row(d.gateway_payment_id, d.pix_copy_paste, d.pix_qr_code_image, d.payment_due_date)::public.pix_payment end,
    d.cancel_reason,
    d.status = 'cancelled' and d.payment_status in ('received', 'confirmed'),
    d.created_at, d.updated_at, d.accepted_at, d.started_at, d.completed_at, d.cancelled_at,
    d.remaining_m, d.eta_at, d.eta_refreshed_at,
    case when d.status = 'completed' then
      row(d.proof_photo_path, d.proof_signature_path, d.proof_note)::public.delivery_proof end,
    link ->> 'tracking_token', link ->> 'tracking_url',
    d.recipient_email,
    d.attempts, d.external_id, d.failed_at, d.failure_note, d.failure_reason, private.is_late(d.status, d.window_end),
    d.window_end, d.window_start,
    d.dispatch_status,
    -- Only a driver holds offers: the role claim spares everyone else (a broadcast, a manager's list) the look-up.
    case when d.status = 'pending' and d.dispatch_status = 'offered' and (auth.jwt() ->> 'role') = 'driver' then
      private.my_live_offer(d.id) end,
    d.failure_photo_path,
    d.collected_amount is not null and d.collect_amount is not null and d.collected_amount <> d.collect_amount,
    case when d.collected_amount is not null then row(d.collected_amount, d.collected_method)::public.delivery_collected end,
    case when d.collect_amount is not null then
      row(d.collect_amount, d.collect_method, d.collect_change_for, d.collect_change_for - d.collect_amount)::public.delivery_collect end,
    d.service_s, d.size,
    d.recall_reason,
    case when d.payment_status = 'refunded' then 'refunded' when d.refund_requested_at is not null then 'requested' end,
    d.returned_at
  )::public.delivery;
end;
$$;
comment on function private.delivery_row(public.deliveries) is 'A delivery as the API shows it; the tracking link only to its managers.';

create function private.delivery_json(d public.deliveries)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$ begin return to_jsonb(private.delivery_row(d)); end; $$;
comment on function private.delivery_json(public.deliveries) is 'A delivery as the API and the realtime broadcasts show it.';

create function private.record_delivery_history(
  old_row public.deliveries, new_row public.deliveries, trigger text, actor_id uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  insert into public.delivery_history
    (delivery_id, company_id, trigger, from_status, to_status, from_payment_status, to_payment_status, actor_id)
  values (new_row.id, new_row.company_id, record_delivery_history.trigger, old_row.status, new_row.status,
          old_row.payment_status, new_row.payment_status, record_delivery_history.actor_id);
end;
$$;
comment on function private.record_delivery_history(public.deliveries, public.deliveries, text, uuid) is 'Appends one row to a delivery''s history.';

-- The delivery `delivery_id` of `company_id` (of any company when null: the service role's own moves), locked until
-- the transaction ends; 404 when there is none.
create function private.lock_delivery(delivery_id uuid, company_id uuid default null)
returns public.deliveries
language plpgsql
set search_path = ''
as $$
declare
  delivery public.deliveries;
begin
  select * into delivery from public.deliveries d
  where d.id = lock_delivery.delivery_id
    and (lock_delivery.company_id is null or d.company_id = lock_delivery.company_id)
  for update;
  if not found then
    raise exception using errcode = 'PT404', message = 'delivery not found';
  end if;
  return delivery;
end;
$$;
comment on function private.lock_delivery(uuid, uuid) is 'Locks one delivery of a company (select ... for update) so that concurrent moves serialize; 404 when absent.';
-- The service role's own moves (public.record_refund) run as their caller.
grant execute on function private.lock_delivery(uuid, uuid) to service_role;

-- The delivery `delivery_id` as the caller's policies let it see it (functions that run as their caller): 404 when
-- they do not, as for one that does not exist. The one place a read of one delivery says "not found".
create function private.visible_delivery(delivery_id uuid)
returns public.deliveries
language plpgsql
stable
set search_path = ''
as $$
declare
  delivery public.deliveries;
begin
  select * into delivery from public.deliveries d where d.id = visible_delivery.delivery_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'delivery not found';
  end if;
  return delivery;
end;
$$;
comment on function private.visible_delivery(uuid) is 'One delivery the caller''s policies let it see; 404 otherwise.';
grant execute on function private.visible_delivery(uuid) to authenticated, service_role;

-- Moves a locked delivery by `trigger`, or raises PT422 naming both states.
create function private.move_delivery(
  delivery public.deliveries,
  trigger text,
  actor_id uuid,
  driver_id uuid default null,
  payment_status text default null,
  cancel_reason text default null)
returns public.deliveries
language plpgsql
set search_path = ''
as $$
declare
  move record;
  moved public.deliveries;
  fresh boolean;
begin
  select m.from_statuses, m.to_status into move
  from private.delivery_moves() m where m.trigger = move_delivery.trigger;
  if not found then
    raise exception 'unknown delivery trigger: %', move_delivery.trigger;
  end if;
  if not delivery.status = any (move.from_statuses) then
    raise exception using errcode = 'PT422',
      message = format('delivery cannot move from %s to %s', delivery.status, move.to_status);
  end if;
  -- A reopened delivery is a new attempt, and a recalled one goes back to the pool: nobody's, neither accepted
  -- nor started, no ETA yet.
  fresh := move_delivery.trigger in ('reopen', 'recall', 'unassign');
  update public.deliveries d set
    status = move.to_status,
    payment_status = coalesce(move_delivery.payment_status, d.payment_status),
    driver_id = case when fresh then null else coalesce(move_delivery.driver_id, d.driver_id) end,
    cancel_reason = coalesce(move_delivery.cancel_reason, d.cancel_reason),
    accepted_at = case when move.to_status = 'accepted' then now() when fresh then null else d.accepted_at end,
    started_at = case when move.to_status = 'in_progress' then now() when fresh then null else d.started_at end,
    completed_at = case when move.to_status = 'completed' then now() else d.completed_at end,
    cancelled_at = case when move.to_status = 'cancelled' then now() else d.cancelled_at end,
    failed_at = case when move.to_status = 'failed' then now() else d.failed_at end,
    returned_at = case when move.to_status = 'returned' then now() else d.returned_at end,
    attempts = d.attempts + case when move_delivery.trigger = 'reopen' then 1 else 0 end,
    remaining_m = case when fresh then null else d.remaining_m end,
    eta_at = case when fresh then null else d.eta_at end,
    eta_refreshed_at = case when fresh then null else d.eta_refreshed_at end,
    eta_requested_at = case when fresh then null else d.eta_requested_at end,
    eta_from_lat = case when fresh then null else d.eta_from_lat end,
    eta_from_lng = case when fresh then null else d.eta_from_lng end,
    updated_at = now()
  where d.id = delivery.id
  returning * into moved;
  perform private.record_delivery_history(delivery, moved, move_delivery.trigger, move_delivery.actor_id);
  return moved;
end;
$$;
comment on function private.move_delivery(public.deliveries, text, uuid, uuid, text, text) is 'The only writer of a delivery''s status: applies an allowed move and records it, or raises PT422.';

-- A payment status change that leaves the delivery status alone (PAYMENT_CONFIRMED,
-- or PAYMENT_REFUNDED of an already cancelled delivery).
create function private.set_payment_status(delivery public.deliveries, trigger text, payment_status text)
returns public.deliveries
language plpgsql
set search_path = ''
as $$
declare
  changed public.deliveries;
begin
  update public.deliveries d set payment_status = set_payment_status.payment_status, updated_at = now()
  where d.id = delivery.id
  returning * into changed;
  perform private.record_delivery_history(delivery, changed, set_payment_status.trigger, null);
  return changed;
end;
$$;
comment on function private.set_payment_status(public.deliveries, text, text) is 'Changes only the payment status of a locked delivery, and records it.';

-- Drivers a delivery can be given to: an active driver of the company (404 for
-- anyone else's driver, 422 for a deactivated one).
create function private.check_assignable_driver(company_id uuid, driver_id uuid)
returns void
language plpgsql
stable
set search_path = ''
as $$
declare
  active boolean;
begin
  select d.active into active from public.drivers d
  where d.id = check_assignable_driver.driver_id and d.company_id = check_assignable_driver.company_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'driver not found';
  end if;
  if not active then
    raise exception using errcode = 'PT422', message = 'driver is deactivated';
  end if;
end;
$$;
comment on function private.check_assignable_driver(uuid, uuid) is 'Raises 404 unless the driver belongs to the company, 422 when it is deactivated.';

-- Section: prices

-- What a driver is credited for a delivery it completes; the reports sum the same.
create function private.driver_credit(price numeric, driver_share numeric)
returns numeric
language plpgsql
immutable
set search_path = ''
as $$ begin return round(driver_credit.price * driver_credit.driver_share, 2); end; $$;
comment on function private.driver_credit(numeric, numeric) is 'A completed delivery''s credit to its driver: price * driver_share, rounded to cents.';

-- The one price computation, used by the quote and by creation alike, so a
-- delivery costs what its quote said, to the cent.
create function private.price_for(company_id uuid, distance_m integer)
returns numeric
language plpgsql
stable
set search_path = ''
as $$
declare
  price numeric(12, 2);
begin
  select greatest(p.minimum_fee, round(p.base_fee + p.per_km * (price_for.distance_m::numeric / 1000), 2))
  into price
  from public.prices p where p.company_id = price_for.company_id;
  if not found then
    raise exception using errcode = 'PT422', message = 'the company has no price table';
  end if;
  return price;
end;
$$;
comment on function private.price_for(uuid, integer) is 'max(minimum_fee, base_fee + per_km * km) rounded to cents, from the company''s prices.';

create function public.quote_route(distance_m numeric, duration_s numeric)
returns public.route_quote
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
  metres integer := round(quote_route.distance_m);
begin
  return row(metres, round(quote_route.duration_s)::integer, private.price_for(company, metres))::public.route_quote;
end;
$$;
comment on function public.quote_route(numeric, numeric) is 'The caller''s company price for a route the routing service measured (metres and seconds, rounded to whole units).';
grant execute on function public.quote_route(numeric, numeric) to authenticated;

-- Section: creation

-- 409 naming the delivery that already has this external id in the company.
create function private.check_external_id(company_id uuid, external_id text)
returns void
language plpgsql
stable
set search_path = ''
as $$
declare
  existing uuid;
begin
  select d.id into existing from public.deliveries d
  where d.company_id = check_external_id.company_id and d.external_id = check_external_id.external_id;
  if found then
    raise exception using errcode = 'PT409',
      message = format('a delivery with external_id %s already exists: %s', check_external_id.external_id, existing);
  end if;
end;
$$;
comment on function private.check_external_id(uuid, text) is 'Raises 409, naming the existing delivery, when the company already has a delivery with this external id.';

-- A delivery window as given on creation: 400 naming the field that is wrong.
create function private.check_window(window_start timestamptz, window_end timestamptz)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
  if check_window.window_end is not null and check_window.window_end <= now() then
    raise exception using errcode = 'PT400', message = 'window_end must be in the future';
  end if;
  if check_window.window_start >= check_window.window_end then
    raise exception using errcode = 'PT400', message = 'window_start must be before window_end';
  end if;
end;
$$;
comment on function private.check_window(timestamptz, timestamptz) is 'Raises 400 unless window_end is in the future and window_start before it.';

create function public.authorize_new_delivery(driver_id uuid default null, external_id text default null)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
begin
  if authorize_new_delivery.driver_id is not null then
    perform private.check_assignable_driver(company, authorize_new_delivery.driver_id);
  end if;
  if authorize_new_delivery.external_id is not null then
    perform private.check_external_id(company, authorize_new_delivery.external_id);
  end if;
  return company;
end;
$$;
comment on function public.authorize_new_delivery(uuid, text) is 'Checks, before any external call, that the caller may create a delivery (for that driver, with that external id); returns the caller''s company.';
grant execute on function public.authorize_new_delivery(uuid, text) to authenticated;

-- The one way a delivery is made (public.create_delivery, public.import_deliveries): checks the fields
-- against the company (driver, window, cash, external id, the charged price), inserts the row priced by the
-- company's table, records its creation and, for an invoice delivery for a given driver, assigns it.
create function private.insert_delivery(id uuid, company_id uuid, created_by uuid, delivery public.new_delivery)
returns public.delivery
language plpgsql
set search_path = ''
as $$
declare
  d public.new_delivery := insert_delivery.delivery;
  metres integer := round(d.distance_m);
  price numeric(12, 2) := private.price_for(insert_delivery.company_id, metres);
  made public.deliveries;
begin
  if d.driver_id is not null then
    perform private.check_assignable_driver(insert_delivery.company_id, d.driver_id);
  end if;
  perform private.check_window(d.window_start, d.window_end);
  perform private.check_collect(d.collect_amount, d.collect_method, d.collect_change_for);
  if d.external_id is not null then
    -- Once before the insert, for the answer that names the delivery; the unique index settles a race.
    perform private.check_external_id(insert_delivery.company_id, d.external_id);
  end if;
  if d.payment_method = 'pix' and d.charged_price is distinct from price then
    -- Only when the prices changed between the quote and this insert.
    raise exception using errcode = 'PT409',
      message = format('the price changed to %s while the delivery was being created; try again', price);
  end if;

  insert into public.deliveries (id, company_id, status, payment_status, payment_method,
    origin_address, origin_lat, origin_lng, destination_address, destination_lat, destination_lng,
    distance_m, duration_s, price, driver_share, driver_id, recipient_name, recipient_phone, notes,
    gateway_payment_id, pix_copy_paste, pix_qr_code_image, payment_due_date,
    window_start, window_end, external_id, recipient_email, collect_amount, collect_method, collect_change_for)
  select insert_delivery.id, insert_delivery.company_id,
    case d.payment_method when 'pix' then 'awaiting_payment' else 'pending' end,
    case d.payment_method when 'pix' then 'pending' else 'invoiced' end,
    d.payment_method,
    btrim(d.origin_address), d.origin_lat, d.origin_lng,
    btrim(d.destination_address), d.destination_lat, d.destination_lng,
    metres, round(d.duration_s)::integer, price, p.driver_share, d.driver_id,
    d.recipient_name, d.recipient_phone, d.notes,
    d.gateway_payment_id, d.pix_copy_paste, d.pix_qr_code_image, d.payment_due_date,
    d.window_start, d.window_end, d.external_id, d.recipient_email, d.collect_amount, d.collect_method,
    d.collect_change_for
  from public.prices p where p.company_id = insert_delivery.company_id
  returning * into made;
  perform private.record_delivery_history(null, made, 'create', insert_delivery.created_by);

  -- An invoice delivery for a given driver is that driver's at once; a Pix one
  -- becomes it when paid (public.apply_payment_event).
  if made.status = 'pending' and made.driver_id is not null then
    made := private.move_delivery(made, 'assign', insert_delivery.created_by);
  end if;
  return private.delivery_row(made);
end;
$$;
comment on function private.insert_delivery(uuid, uuid, uuid, public.new_delivery) is 'Makes a delivery of a company from a public.new_delivery: checked, priced, inserted, recorded, assigned.';
-- Only through public.create_delivery and public.import_deliveries, which the service role calls.
grant execute on function private.insert_delivery(uuid, uuid, uuid, public.new_delivery) to service_role;

-- Service role only: the route figures and the Pix charge come from the edge's
-- own calls to the routing service and the gateway, which a client could forge.
-- The edge authorizes the caller first (public.authorize_new_delivery, as the
-- caller) and passes the caller's company and user id. The fields are those of
-- public.new_delivery, as named arguments (the edge's and SQL's callers name them).
create function public.create_delivery(
  id uuid,
  company_id uuid,
  created_by uuid,
  payment_method text,
  origin_address text,
  origin_lat double precision,
  origin_lng double precision,
  destination_address text,
  destination_lat double precision,
  destination_lng double precision,
  distance_m numeric,
  duration_s numeric,
  recipient_name text default null,
  recipient_phone text default null,
  notes text default null,
  driver_id uuid default null,
  charged_price numeric default null,
  gateway_payment_id text default null,
  pix_copy_paste text default null,
  pix_qr_code_image text default null,
  payment_due_date date default null,
  window_start timestamptz default null,
  window_end timestamptz default null,
  external_id text default null,
  recipient_email text default null,
  collect_amount numeric default null,
  collect_method text default null,
  collect_change_for numeric default null)
returns public.delivery
language plpgsql
set search_path = ''
as $$
begin
  -- The arguments after the first three, in public.new_delivery's order.
  return private.insert_delivery(create_delivery.id, create_delivery.company_id, create_delivery.created_by,
    row(payment_method, origin_address, origin_lat, origin_lng, destination_address, destination_lat,
      destination_lng, distance_m, duration_s, recipient_name, recipient_phone, notes, driver_id, charged_price,
      gateway_payment_id, pix_copy_paste, pix_qr_code_image, payment_due_date, window_start, window_end,
      external_id, recipient_email, collect_amount, collect_method, collect_change_for)::public.new_delivery);
end;
$$;
-- Named without its argument types: there is one public.create_delivery.
comment on function public.create_delivery is 'Inserts a delivery the edge has routed (and for Pix, charged) for an authorized caller (service role).';
revoke execute on function public.create_delivery from authenticated;
grant execute on function public.create_delivery to service_role;

-- Gateway customers are made once per document and company gateway account
-- (gateway_configs.company_id is its key: at most one row), keyed by the
-- document's digits (private.normalize_document, 01_brazil.sql).
create function private.gateway_customer_id(company_id uuid, document text)
returns text
language plpgsql
stable
set search_path = ''
as $$
begin
  return (select g.gateway_customer_ids ->> private.normalize_document(gateway_customer_id.document)
          from private.gateway_configs g where g.company_id = gateway_customer_id.company_id);
end;
$$;
comment on function private.gateway_customer_id(uuid, text) is 'The gateway customer id already made for this document, or null (service role).';

create function private.remember_gateway_customer(company_id uuid, document text, customer_id text)
returns void
language plpgsql
set search_path = ''
as $$
declare
  digits text := private.normalize_document(remember_gateway_customer.document);
begin
  if digits is null then
    raise exception using errcode = 'PT400', message = 'customer.document must be a valid CPF or CNPJ';
  end if;
  update private.gateway_configs g
  set gateway_customer_ids = g.gateway_customer_ids || jsonb_build_object(digits, remember_gateway_customer.customer_id)
  where g.company_id = remember_gateway_customer.company_id;
end;
$$;
comment on function private.remember_gateway_customer(uuid, text, text) is 'Caches the gateway customer id made for a document (service role).';

-- Section: reads

-- What the list's `q` looks for (docs: GET /api/v1/deliveries): the text folded as the search text is, its
-- LIKE wildcards escaped, as a `like` pattern; a query made only of phone characters is searched as its
-- digits (the search text holds the phone's digits too). And, when it is 4 to 32 hexadecimal digits (dashes
-- ignored), the range of ids that start with them.
create function private.search_terms(q text, out pattern text, out id_from uuid, out id_to uuid)
language plpgsql
immutable
set search_path = ''
as $$
declare
  folded text := private.fold(btrim(search_terms.q));
  hex text := replace(folded, '-', '');
begin
  if folded ~ '^[0-9 ()+.-]+$' and length(regexp_replace(folded, '\D', '', 'g')) >= 3 then
    folded := regexp_replace(folded, '\D', '', 'g');
  end if;
  pattern := '%' || replace(replace(replace(folded, '\', '\\'), '%', '\%'), '_', '\_') || '%';
  if hex ~ '^[0-9a-f]{4,32}$' then
    id_from := rpad(hex, 32, '0')::uuid;
    id_to := rpad(hex, 32, 'f')::uuid;
  end if;
end;
$$;
comment on function private.search_terms(text) is 'The like pattern of a search (folded, escaped; phone-like text as digits) and the id range when it is a hex prefix.';

-- The caller's company's deliveries that match the filters, newest first,
-- after the cursor's key, at most `row_limit` (all when null): a cursor the
-- caller fetches from. The one query behind the managers' list (one page of
-- it) and the export (all of it, streamed), so that they always agree.
-- Security definer, for managers only, reading exactly their company (what the
-- policy lets them read): `like` is not leakproof, so under row-level security
-- Postgres could not use the trigram index for `q` and would read the whole
-- company's history for a rare name.
create function private.company_deliveries(
  status text, driver_id uuid, payment_status text, q text, created_from timestamptz,
  created_to timestamptz, late boolean, after_key timestamptz, after_id uuid, row_limit integer)
returns refcursor
language plpgsql
stable
security definer
set search_path = ''
-- Each call is planned with its own values, so that a filter left null drops
-- out of the plan and the one given picks its index (a generic plan would keep
-- `x is null or ...` and walk the company's whole history).
set plan_cache_mode = force_custom_plan
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
  terms record := private.search_terms(company_deliveries.q);
  searching boolean := company_deliveries.q is not null;
  by_id boolean := terms.id_from is not null;
  found_rows refcursor;
begin
  open found_rows for
    select * from public.deliveries d
    where d.company_id = company
      and (company_deliveries.status is null or d.status = company_deliveries.status)
      and (company_deliveries.driver_id is null or d.driver_id = company_deliveries.driver_id)
      and (company_deliveries.payment_status is null or d.payment_status = company_deliveries.payment_status)
      and (company_deliveries.created_from is null or d.created_at >= company_deliveries.created_from)
      and (company_deliveries.created_to is null or d.created_at < company_deliveries.created_to)
      -- private.is_late, written out for deliveries_open_window_created_idx.
      and (company_deliveries.late is not true
        or (d.window_end < now() and d.status not in ('completed', 'cancelled', 'returned')))
      and (company_deliveries.late is not false or not private.is_late(d.status, d.window_end))
      and (not searching or d.search_text like terms.pattern
        or (by_id and d.id between terms.id_from and terms.id_to))
      and (company_deliveries.after_key is null
        or (d.created_at, d.id) < (company_deliveries.after_key, company_deliveries.after_id))
    order by d.created_at desc, d.id desc
    limit company_deliveries.row_limit;
  return found_rows;
end;
$$;
comment on function private.company_deliveries(text, uuid, text, text, timestamptz, timestamptz, boolean, timestamptz, uuid, integer) is 'Opens a cursor over the calling manager''s company''s deliveries matching the list''s filters, newest first, after a key, up to a limit.';
grant execute on function private.company_deliveries(text, uuid, text, text, timestamptz, timestamptz, boolean,
  timestamptz, uuid, integer) to authenticated;

create function public.list_deliveries(
  status text default null, driver_id uuid default null, page_limit integer default 20, cursor text default null,
  payment_status text default null, q text default null, created_from timestamptz default null,
  created_to timestamptz default null, late boolean default null)
returns public.delivery_page
language plpgsql
stable
set search_path = ''
-- Each call is planned with its own values, so that a filter left null drops
-- out of the plan and the one given picks its index (a generic plan would keep
-- `x is null or ...` and walk the company's whole history).
set plan_cache_mode = force_custom_plan
as $$
declare
  company uuid := private.authorize(variadic private.members());
  -- Null for owners and admins; a driver's own id for a driver.
  me uuid := case when private.app_role() = 'driver' then private.driver_id() end;
  -- Scalars, not a record: a record left unassigned cannot be read even where
  -- `cursor is null` makes the comparison moot.
  after_key timestamptz;
  after_id uuid;
  terms record := private.search_terms(list_deliveries.q);
  searching boolean := list_deliveries.q is not null;
  by_id boolean := terms.id_from is not null;
  found_rows refcursor;
  item public.deliveries;
  rows public.delivery[] := '{}';
  offered uuid[];
begin
  perform private.check_page_limit(list_deliveries.page_limit);
  if list_deliveries.cursor is not null then
    select c.sort_key, c.id into after_key, after_id from private.decode_cursor(list_deliveries.cursor) c;
  end if;
  -- Row-level security stays the authority: the predicates here only narrow
  -- the scan to what the policy lets the caller see, so that each part is one
  -- index range scan in (created_at desc, id desc) order.
  if me is null then
    found_rows := private.company_deliveries(list_deliveries.status, list_deliveries.driver_id,
      list_deliveries.payment_status, list_deliveries.q, list_deliveries.created_from, list_deliveries.created_to,
      list_deliveries.late, after_key, after_id, list_deliveries.page_limit + 1);
    loop
      fetch found_rows into item;
      exit when not found;
      rows := rows || private.delivery_row(item);
    end loop;
    close found_rows;
  else
    -- A driver's scope is three ranges, as in the policy: the pending deliveries
    -- open to every driver of its company, those dispatch offers it now
    -- (14_dispatch.sql), and those it has taken; each with the filters of
    -- private.company_deliveries.
    offered := private.my_live_offers();
    select coalesce(array_agg(private.delivery_row(d) order by d.created_at desc, d.id desc), '{}') into rows
    from (
      select * from (
        (select * from public.deliveries d
         where d.company_id = company and d.status = 'pending' and d.driver_id is null
           and (d.dispatch_status is null or d.dispatch_status = 'unassigned')
           and (list_deliveries.status is null or list_deliveries.status = 'pending')
           and list_deliveries.driver_id is null
           and (list_deliveries.payment_status is null or d.payment_status = list_deliveries.payment_status)
           and (list_deliveries.created_from is null or d.created_at >= list_deliveries.created_from)
           and (list_deliveries.created_to is null or d.created_at < list_deliveries.created_to)
           and (list_deliveries.late is null or private.is_late(d.status, d.window_end) = list_deliveries.late)
           and (not searching or d.search_text like terms.pattern or (by_id and d.id between terms.id_from and terms.id_to))
           and (list_deliveries.cursor is null or (d.created_at, d.id) < (after_key, after_id))
         order by d.created_at desc, d.id desc
         limit list_deliveries.page_limit + 1)
        union all
        (select * from public.deliveries d
         where d.id = any (offered) and d.company_id = company and d.status = 'pending' and d.driver_id is null
           and d.dispatch_status = 'offered'
           and (list_deliveries.status is null or list_deliveries.status = 'pending')
           and list_deliveries.driver_id is null
           and (list_deliveries.payment_status is null or d.payment_status = list_deliveries.payment_status)
           and (list_deliveries.created_from is null or d.created_at >= list_deliveries.created_from)
           and (list_deliveries.created_to is null or d.created_at < list_deliveries.created_to)
           and (list_deliveries.late is null or private.is_late(d.status, d.window_end) = list_deliveries.late)
           and (not searching or d.search_text like terms.pattern or (by_id and d.id between terms.id_from and terms.id_to))
           and (list_deliveries.cursor is null or (d.created_at, d.id) < (after_key, after_id))
         order by d.created_at desc, d.id desc
         limit list_deliveries.page_limit + 1)
        union all
        (select * from public.deliveries d
         where d.driver_id = me and d.accepted_at is not null and d.company_id = company
           and (list_deliveries.status is null or d.status = list_deliveries.status)
           and (list_deliveries.driver_id is null or list_deliveries.driver_id = me)
           and (list_deliveries.payment_status is null or d.payment_status = list_deliveries.payment_status)
           and (list_deliveries.created_from is null or d.created_at >= list_deliveries.created_from)
           and (list_deliveries.created_to is null or d.created_at < list_deliveries.created_to)
           and (list_deliveries.late is null or private.is_late(d.status, d.window_end) = list_deliveries.late)
           and (not searching or d.search_text like terms.pattern or (by_id and d.id between terms.id_from and terms.id_to))
           and (list_deliveries.cursor is null or (d.created_at, d.id) < (after_key, after_id))
         order by d.created_at desc, d.id desc
         limit list_deliveries.page_limit + 1)
      ) scope
      order by scope.created_at desc, scope.id desc
      limit list_deliveries.page_limit + 1
    ) d;
  end if;
  return (rows[1:list_deliveries.page_limit], private.next_cursor(rows, list_deliveries.page_limit, 'created_at'))
    ::public.delivery_page;
end;
$$;
comment on function public.list_deliveries(text, uuid, integer, text, text, text, timestamptz, timestamptz, boolean) is 'The deliveries the caller may see, newest first, one page, optionally by status, driver, payment status, search text, creation time and lateness.';
grant execute on function public.list_deliveries(text, uuid, integer, text, text, text, timestamptz, timestamptz, boolean) to authenticated;

create function public.get_delivery(delivery_id uuid)
returns public.delivery
language plpgsql
stable
set search_path = ''
as $$
begin
  perform private.authorize(variadic private.members());
  return private.delivery_row(private.visible_delivery(get_delivery.delivery_id));
end;
$$;
comment on function public.get_delivery(uuid) is 'One delivery the caller may see (row-level security hides the others: 404).';
grant execute on function public.get_delivery(uuid) to authenticated;

-- Section: company moves

create function public.cancel_delivery(delivery_id uuid, reason text default null)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
  delivery public.deliveries := private.lock_delivery(cancel_delivery.delivery_id, company);
begin
  delivery := private.move_delivery(delivery, 'cancel', (select auth.uid()), cancel_reason => cancel_delivery.reason);
  return private.delivery_row(delivery);
end;
$$;
comment on function public.cancel_delivery(uuid, text) is 'Cancels a delivery of the caller''s company that no driver has started.';
grant execute on function public.cancel_delivery(uuid, text) to authenticated;

create function public.assign_delivery(delivery_id uuid, driver_id uuid)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  delivery public.deliveries := private.lock_delivery(assign_delivery.delivery_id, company);
begin
  perform private.check_assignable_driver(company, assign_delivery.driver_id);
  delivery := private.move_delivery(delivery, 'assign', (select auth.uid()), driver_id => assign_delivery.driver_id);
  return private.delivery_row(delivery);
end;
$$;
comment on function public.assign_delivery(uuid, uuid) is 'Gives a pending delivery of the caller''s company to one of its active drivers.';
grant execute on function public.assign_delivery(uuid, uuid) to authenticated;

-- Section: driver moves

create function public.accept_delivery(delivery_id uuid)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.drivers());
  -- Of two drivers accepting at once, the second waits here and then finds the
  -- delivery accepted: 422.
  delivery public.deliveries := private.lock_delivery(accept_delivery.delivery_id, company);
begin
  -- Not offered yet (its window is more than an hour away): drivers do not see it.
  if delivery.status = 'pending' and not private.dispatchable(delivery) then
    raise exception using errcode = 'PT404', message = 'delivery not found';
  end if;
  -- Under dispatch, only a driver holding a live offer takes it (14_dispatch.sql).
  perform private.take_offer(delivery);
  delivery := private.move_delivery(delivery, 'accept', (select auth.uid()), driver_id => private.driver_id());
  return private.delivery_row(delivery);
end;
$$;
comment on function public.accept_delivery(uuid) is 'The calling driver takes a pending delivery of its company (under dispatch, one offered to it); exactly one of concurrent callers wins.';
grant execute on function public.accept_delivery(uuid) to authenticated;

-- The calling driver's delivery, locked: another driver's is 404 to it.
create function private.lock_own_delivery(delivery_id uuid)
returns public.deliveries
language plpgsql
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.drivers());
  delivery public.deliveries := private.lock_delivery(lock_own_delivery.delivery_id, company);
begin
  if delivery.driver_id is distinct from private.driver_id() and delivery.driver_id is not null then
    raise exception using errcode = 'PT404', message = 'delivery not found';
  end if;
  return delivery;
end;
$$;
comment on function private.lock_own_delivery(uuid) is 'Locks a delivery of the calling driver''s company unless another driver has it (404).';

create function public.start_delivery(delivery_id uuid)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  delivery public.deliveries := private.lock_own_delivery(start_delivery.delivery_id);
begin
  delivery := private.move_delivery(delivery, 'start', (select auth.uid()));
  return private.delivery_row(delivery);
end;
$$;
comment on function public.start_delivery(uuid) is 'The linked driver sets off with an accepted delivery.';
grant execute on function public.start_delivery(uuid) to authenticated;

create function public.complete_delivery(delivery_id uuid, note text default null, collected_amount numeric default null,
  collected_method text default null)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  delivery public.deliveries := private.lock_own_delivery(complete_delivery.delivery_id);
begin
  if delivery.status = 'in_progress' then
    -- The recipient's handover code, when the delivery has one: tried first (public.try_handover_code, its
    -- attempts committed on their own), 422 until it was right, 423 once 5 wrong ones locked it (09_proof.sql).
    perform private.check_handover_done(delivery);
    -- The photo and signature uploaded to Storage, and the note; 422 naming what the company
    -- requires and is missing (private.attach_proof, in 09_proof.sql).
    delivery := private.attach_proof(delivery, complete_delivery.note);
  end if;
  delivery := private.finish_delivery(delivery, (select auth.uid()), complete_delivery.collected_amount,
    complete_delivery.collected_method);
  return private.delivery_row(delivery);
end;
$$;
comment on function public.complete_delivery(uuid, text, numeric, text) is 'The linked driver completes a delivery in progress, with its proof, its handover code and what was collected at the door, and is credited price * driver_share.';
grant execute on function public.complete_delivery(uuid, text, numeric, text) to authenticated;

-- Section: realtime

-- Tells every active driver of the company but `except_driver` an event with the delivery as drivers read it:
-- delivery_available when it becomes open to them, delivery_unavailable when it stops being (another driver
-- took it, the company assigned or cancelled it, dispatch took it back), so an app drops it at once.
create function private.announce_to_drivers(delivery public.deliveries, event text, except_driver uuid default null)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  payload jsonb := private.delivery_json(announce_to_drivers.delivery)
    || jsonb_build_object('tracking_token', null, 'tracking_url', null, 'offer_expires_at', null);
  driver record;
begin
  for driver in
    select d.id from public.drivers d
    where d.company_id = (announce_to_drivers.delivery).company_id and d.active
      and d.id is distinct from announce_to_drivers.except_driver
  loop
    perform private.broadcast('driver:' || driver.id, announce_to_drivers.event, payload);
  end loop;
end;
$$;
comment on function private.announce_to_drivers(public.deliveries, text, uuid) is 'Sends an event (delivery_available, delivery_unavailable) with the delivery to every active driver of its company but one.';

-- Security definer: it sends on every driver's topic through private.broadcast,
-- which no API role may call. A broadcast shows a delivery as its receiver reads it: drivers with the
-- tracking link's fields null, as the API answers them.
create function private.broadcast_delivery_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  -- The company's managers get the tracking link; drivers never do, whoever made the change. Nobody gets the
  -- offer of whoever made it.
  payload jsonb := private.delivery_json(new);
  -- The row as the service role or a manager made it already holds the link (private.delivery_row): read it
  -- again only for a change a driver made.
  link jsonb := case when payload ->> 'tracking_token' is not null
    then jsonb_build_object('tracking_token', payload -> 'tracking_token', 'tracking_url', payload -> 'tracking_url')
    else private.delivery_tracking_link(new.id) end;
begin
  payload := payload || jsonb_build_object('tracking_token', null, 'tracking_url', null, 'offer_expires_at', null);
  perform private.broadcast('company:' || new.company_id, 'delivery_updated', payload || link);
  if new.driver_id is not null and new.accepted_at is not null then
    perform private.broadcast('driver:' || new.driver_id, 'delivery_updated', payload);
  end if;
  -- A delivery whose window is still far is announced when it nears (private.announce_open_windows); one
  -- under dispatch only once nobody eligible is left (14_dispatch.sql).
  if private.open_to_all(new) and (tg_op = 'INSERT' or not private.open_to_all(old)) then
    perform private.announce_to_drivers(new, 'delivery_available');
  elsif tg_op = 'UPDATE' and private.open_to_all(old) and not private.open_to_all(new) then
    -- The driver who took it hears delivery_updated above instead.
    perform private.announce_to_drivers(new, 'delivery_unavailable', except_driver => new.driver_id);
  end if;
  return null;
end;
$$;
comment on function private.broadcast_delivery_change() is 'Broadcasts a new or changed delivery to its company, its driver, and (when it becomes open to them) every active driver.';

create trigger deliveries_broadcast_insert after insert on public.deliveries
  for each row execute function private.broadcast_delivery_change();
create trigger deliveries_broadcast_update
  after update of status, payment_status, eta_refreshed_at, dispatch_status, refund_requested_at on public.deliveries
  for each row when (old.status is distinct from new.status or old.payment_status is distinct from new.payment_status
    or old.eta_refreshed_at is distinct from new.eta_refreshed_at or old.dispatch_status is distinct from new.dispatch_status
    or old.refund_requested_at is distinct from new.refund_requested_at)
  execute function private.broadcast_delivery_change();

-- Section: what fires on a delivery

-- The triggers on public.deliveries are here, each with its function, whichever concern it serves (the
-- broadcasts, the tracking tokens and the windows in their own sections above); each concern's file points here.
-- PL/pgSQL resolves the names of a function's statements when it first runs, so these may use what later
-- files define; but the types of its variables when it is created. So three stay in the file whose types
-- they hold: deliveries_roll_up_insert and _update (12_reports.sql: private.delivery_days),
-- deliveries_queue_notifications_insert and _update (13_notifications.sql: notification_settings_set) and
-- deliveries_follow_route_stops (16_routes.sql: public.routes).

-- Live tracking (08_tracking.sql): the tracking topic follows the delivery.

-- A change of status or of the ETA: `tracking_updated` with the tracking view.
create function private.broadcast_tracking_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  token_hash bytea;
begin
  select t.token_hash into token_hash from private.delivery_tracking t where t.delivery_id = new.id;
  if token_hash is not null then
    perform private.broadcast(private.tracking_topic(token_hash), 'tracking_updated', private.tracking_json_of(new.id));
  end if;
  return null;
end;
$$;
comment on function private.broadcast_tracking_change() is 'Broadcasts a delivery''s new status or ETA on its tracking topic.';
create trigger deliveries_broadcast_tracking after update of status, eta_refreshed_at on public.deliveries
  for each row when (old.status is distinct from new.status or old.eta_refreshed_at is distinct from new.eta_refreshed_at)
  execute function private.broadcast_tracking_change();

-- Proof (09_proof.sql): a handover code for a delivery created while its company requires them.

create function private.give_handover_code()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if (private.proof_requirements_row(new.company_id)).handover_code then
    insert into private.handover_codes (delivery_id, company_id, code)
    values (new.id, new.company_id, private.new_handover_code());
  end if;
  return null;
end;
$$;
comment on function private.give_handover_code() is 'Gives a new delivery its handover code when its company requires one.';
create trigger deliveries_give_handover_code after insert on public.deliveries
  for each row execute function private.give_handover_code();

-- Dispatch (14_dispatch.sql): entering and following dispatch.

-- Before a delivery's status (or driver) changes: a delivery that becomes pending for nobody under `offer`
-- or `auto` enters dispatch (queued); one that leaves the pool under dispatch is assigned (a driver has it)
-- or out of it (cancelled).
create function private.enter_dispatch()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if new.status = 'pending' and new.driver_id is null then
    if tg_op = 'INSERT' or old.status <> 'pending' then
      new.dispatch_status := case when (private.dispatch_settings_of(new.company_id)).mode <> 'broadcast' then 'queued' end;
    end if;
  elsif tg_op = 'UPDATE' and old.status = 'pending' and old.driver_id is null then
    new.dispatch_status := case when old.dispatch_status is not null and new.driver_id is not null then 'assigned' end;
  end if;
  return new;
end;
$$;
comment on function private.enter_dispatch() is 'Sets dispatch_status as a delivery becomes pending (queued under offer or auto) or leaves the pool (assigned, or none).';

create trigger deliveries_enter_dispatch_insert before insert on public.deliveries
  for each row when (new.status = 'pending' and new.driver_id is null)
  execute function private.enter_dispatch();
create trigger deliveries_enter_dispatch_update before update of status, driver_id on public.deliveries
  for each row when (old.status is distinct from new.status or old.driver_id is distinct from new.driver_id)
  execute function private.enter_dispatch();

-- After: a queued delivery gets its turn (now, or an hour before its window opens); one that leaves the pool
-- under dispatch takes its live offers (withdrawn) and its turn with it; a driver whose new delivery brings
-- it to its limit gives up its other offers (private.withdraw_driver_offers).
create function private.follow_dispatch()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if new.dispatch_status = 'queued' and (tg_op = 'INSERT' or old.dispatch_status is distinct from 'queued') then
    perform private.queue_dispatch(new.id, greatest(now(), coalesce(new.window_start - interval '1 hour', now())));
  end if;
  if tg_op = 'UPDATE' and old.status = 'pending' and new.status <> 'pending' then
    if old.dispatch_status is not null then
      update public.dispatch_offers o set outcome = 'withdrawn', decided_at = now()
      where o.delivery_id = new.id and o.outcome is null;
      delete from private.dispatch_queue q where q.delivery_id = new.id;
    end if;
    if new.driver_id is not null
       and exists (select from public.dispatch_offers o where o.driver_id = new.driver_id and o.outcome is null)
       and (select count(*) from public.deliveries d
            where d.driver_id = new.driver_id and d.status in ('accepted', 'in_progress'))
           >= (private.dispatch_settings_of(new.company_id)).max_active_per_driver then
      perform private.withdraw_driver_offers(new.driver_id);
    end if;
  end if;
  return null;
end;
$$;
comment on function private.follow_dispatch() is 'Queues a delivery entering dispatch; withdraws the offers of one leaving the pool, and those of a driver it brings to its limit.';

create trigger deliveries_follow_dispatch_insert after insert on public.deliveries
  for each row when (new.dispatch_status = 'queued')
  execute function private.follow_dispatch();
-- Only the changes it acts on: a dispatch status moving on within dispatch (queued to offered, above all) calls
-- nothing.
create trigger deliveries_follow_dispatch_update after update of status, dispatch_status on public.deliveries
  for each row when (old.status is distinct from new.status
    or (new.dispatch_status = 'queued' and old.dispatch_status is distinct from 'queued'))
  execute function private.follow_dispatch();

-- Integrations (18_integrations.sql): the webhook events of a creation or a move.

-- delivery.created on insert; on a move, delivery.status_changed (with the
-- previous status), and delivery.completed or delivery.failed as well.
create function private.queue_delivery_webhooks()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  data jsonb;
begin
  if not exists (select from public.webhook_endpoints e where e.company_id = new.company_id and e.enabled) then
    return null;
  end if;
  data := private.webhook_delivery_data(new);
  if tg_op = 'INSERT' then
    perform private.queue_webhook_event(new.company_id, 'delivery.created', data);
    return null;
  end if;
  perform private.queue_webhook_event(new.company_id, 'delivery.status_changed',
    data || jsonb_build_object('previous_status', old.status));
  if new.status = 'completed' then
    perform private.queue_webhook_event(new.company_id, 'delivery.completed', data);
  elsif new.status = 'failed' then
    perform private.queue_webhook_event(new.company_id, 'delivery.failed', data);
  end if;
  return null;
end;
$$;
comment on function private.queue_delivery_webhooks() is 'Queues the webhook events of a delivery''s creation or move, in the same transaction.';

create trigger deliveries_queue_webhooks_insert after insert on public.deliveries
  for each row execute function private.queue_delivery_webhooks();
create trigger deliveries_queue_webhooks_update after update of status on public.deliveries
  for each row when (old.status is distinct from new.status)
  execute function private.queue_delivery_webhooks();

-- Section: grants of the helpers

-- Read paths run as the caller; write paths run as the owner (security definer)
-- or, for the edge's service-role calls, as service_role.
grant execute on function private.delivery_row(public.deliveries), private.delivery_json(public.deliveries),
  private.price_for(uuid, integer)
  to authenticated, service_role;
grant execute on function private.delivery_moves(), private.record_delivery_history(public.deliveries, public.deliveries, text, uuid),
  private.move_delivery(public.deliveries, text, uuid, uuid, text, text),
  private.set_payment_status(public.deliveries, text, text), private.check_assignable_driver(uuid, uuid),
  private.gateway_customer_id(uuid, text), private.remember_gateway_customer(uuid, text, text)
  to service_role;
grant execute on function private.check_assignable_driver(uuid, uuid) to authenticated;
grant execute on function private.check_external_id(uuid, text), private.check_window(timestamptz, timestamptz),
  private.search_terms(text), private.driver_credit(numeric, numeric)
  to authenticated, service_role;
