-- Notifications (docs/notifications.md): the recipient of a delivery is told,
-- by WhatsApp (to recipient_phone) and e-mail (to recipient_email), when the
-- delivery is created, when the driver sets off, when it is a few minutes
-- away, and when it is completed or failed, each message with the tracking
-- link. And the recipient's data is kept no longer than it serves (LGPD).
--
-- An outbox: the message row is written by a trigger on the deliveries, in the
-- transaction of the change that causes it, once per delivery, event and
-- channel (a unique key: a repeated event never queues a second message). The
-- notifications Edge Function sends it: woken through pg_net when rows are
-- queued (after the commit) and every minute by pg_cron while any is due, it
-- claims due rows with `for update skip locked` under a lease, sends, and
-- records the outcome: sent, retried with backoff for at least 24 hours, or
-- failed with the provider's reason when it refuses for good.

-- Section: types (02_company.sql says why functions return them)

create type public.notification_settings_set as (events text[], channels text[]);
comment on type public.notification_settings_set is 'Which events a company''s recipients are told of, on which channels.';

create type public.delivery_notification as (
  event text,
  channel text,
  "to" text,
  status text,
  attempts integer,
  sent_at timestamptz,
  error text
);
comment on type public.delivery_notification is 'One message to a delivery''s recipient, its destination masked.';

create type public.delivery_notification_list as (items public.delivery_notification[]);
comment on type public.delivery_notification_list is 'The messages of one delivery, in the order they were queued.';

-- Section: settings

create function private.notification_events()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['created', 'started', 'nearby', 'completed', 'failed']; end; $$;
comment on function private.notification_events() is 'The events a recipient can be told of: created (offered to drivers), started (the driver set off), nearby (ETA at most 5 minutes), completed, failed.';

create function private.notification_channels()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['whatsapp', 'email']; end; $$;
comment on function private.notification_channels() is 'The channels: whatsapp (to recipient_phone) and email (to recipient_email).';

create table public.notification_settings (
  company_id uuid primary key references public.companies (id) on delete cascade,
  -- The defaults (a company without a row: private.with_defaults): every event but `created`, on every
  -- channel the recipient has.
  events text[] not null default array['started', 'nearby', 'completed', 'failed']
    check (events <@ private.notification_events()),
  channels text[] not null default private.notification_channels()
    check (channels <@ private.notification_channels()),
  updated_at timestamptz not null default now()
);
comment on table public.notification_settings is 'Which events a company''s recipients are told of, on which channels (the defaults when the company has no row).';
alter table public.notification_settings enable row level security;
create policy notification_settings_select_managers on public.notification_settings
  for select to authenticated
  using (company_id = (select private.company_of(private.company_managers())));
grant select on public.notification_settings to authenticated;
grant all on public.notification_settings to service_role;

create function private.notification_settings_of(company_id uuid)
returns public.notification_settings_set
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return private.with_defaults((select to_jsonb(x) from public.notification_settings x where x.company_id = notification_settings_of.company_id),
    'public.notification_settings', null::public.notification_settings_set);
end;
$$;
comment on function private.notification_settings_of(uuid) is 'A company''s notification settings, or the defaults.';

create function public.get_notification_settings()
returns public.notification_settings_set
language plpgsql
stable
set search_path = ''
as $$
begin
  return private.notification_settings_of(private.authorize(variadic private.company_managers()));
end;
$$;
comment on function public.get_notification_settings() is 'Which events the caller''s company''s recipients are told of, on which channels (owner, admin).';
grant execute on function public.get_notification_settings() to authenticated;

create function public.set_notification_settings(events text[], channels text[])
returns public.notification_settings_set
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
begin
  if not (coalesce(set_notification_settings.events, '{}') <@ private.notification_events()
          and coalesce(set_notification_settings.channels, '{}') <@ private.notification_channels()) then
    raise exception using errcode = 'PT400', message = 'unknown notification event or channel';
  end if;
  -- Kept in the lists' own order, each once.
  insert into public.notification_settings as s (company_id, events, channels)
  values (company,
    array(select e from unnest(private.notification_events()) e where e = any (set_notification_settings.events)),
    array(select c from unnest(private.notification_channels()) c where c = any (set_notification_settings.channels)))
  on conflict on constraint notification_settings_pkey do update set
    events = excluded.events, channels = excluded.channels, updated_at = now();
  return private.notification_settings_of(company);
end;
$$;
comment on function public.set_notification_settings(text[], text[]) is 'Sets which events the caller''s company''s recipients are told of, on which channels (owner, admin).';
grant execute on function public.set_notification_settings(text[], text[]) to authenticated;

-- Section: the outbox

create table public.notifications (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  delivery_id uuid not null references public.deliveries (id) on delete cascade,
  event text not null check (event = any (private.notification_events())),
  channel text not null check (channel = any (private.notification_channels())),
  status text not null default 'queued' check (status in ('queued', 'sent', 'failed')),
  -- Claims so far (each claim is one attempt to send).
  attempts integer not null default 0 check (attempts >= 0),
  -- When a sender may claim it next: now when queued, the lease's end while one
  -- sends it, the backoff's end after a failure.
  next_attempt_at timestamptz not null default now(),
  last_attempt_at timestamptz,
  sent_at timestamptz,
  -- The provider's id of the message (WhatsApp's wamid, the e-mail's Message-ID).
  provider_message_id text check (length(provider_message_id) <= 500),
  -- Why it failed for good, or why the last attempt failed while it is retried.
  error text check (length(error) <= 500),
  created_at timestamptz not null default now(),
  constraint notifications_once unique (delivery_id, event, channel),
  check ((status = 'sent') = (sent_at is not null))
);
comment on table public.notifications is 'The outbox of messages to recipients: one per delivery, event and channel, queued with the change that causes it.';
-- What senders claim, oldest due first; and the company's messages.
create index notifications_due_idx on public.notifications (next_attempt_at) where status = 'queued';
create index notifications_company_id_idx on public.notifications (company_id);
alter table public.notifications enable row level security;
-- A company's managers see its messages; drivers and other companies nothing.
create policy notifications_select_managers on public.notifications
  for select to authenticated
  using (company_id = (select private.company_of(private.delivery_managers())));
grant select on public.notifications to authenticated;
grant all on public.notifications to service_role;

-- Which event, if any, a change of a delivery is: created when it is first
-- offered to drivers (pending), started when its driver sets off
-- (in_progress), nearby when its ETA while in progress comes to 5 minutes or
-- less, completed, failed. Queued on every channel the company sends the
-- event on and the recipient has an address for; a message already queued for
-- that delivery, event and channel stays the one.
create function private.queue_delivery_notifications()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  event text;
  settings public.notification_settings_set;
begin
  if tg_op = 'INSERT' or old.status is distinct from new.status then
    event := case new.status
      when 'pending' then case when tg_op = 'INSERT' or old.status = 'awaiting_payment' then 'created' end
      when 'in_progress' then 'started'
      when 'completed' then 'completed'
      when 'failed' then 'failed'
    end;
  elsif new.status = 'in_progress' and new.eta_at <= now() + interval '5 minutes' then
    event := 'nearby';
  end if;
  if event is null then
    return null;
  end if;
  settings := private.notification_settings_of(new.company_id);
  if not event = any (settings.events) then
    return null;
  end if;
  insert into public.notifications (company_id, delivery_id, event, channel)
  select new.company_id, new.id, event, c.channel
  from unnest(settings.channels) c (channel)
  where (c.channel = 'whatsapp' and new.recipient_phone is not null)
     or (c.channel = 'email' and new.recipient_email is not null)
  on conflict on constraint notifications_once do nothing;
  return null;
end;
$$;
comment on function private.queue_delivery_notifications() is 'Queues the messages a delivery''s change calls for, in the same transaction, once per delivery, event and channel.';

create trigger deliveries_queue_notifications_insert after insert on public.deliveries
  for each row when (new.status = 'pending' and (new.recipient_phone is not null or new.recipient_email is not null))
  execute function private.queue_delivery_notifications();
create trigger deliveries_queue_notifications_update after update of status, eta_at on public.deliveries
  for each row when ((new.recipient_phone is not null or new.recipient_email is not null)
    and (old.status is distinct from new.status or (new.status = 'in_progress' and old.eta_at is distinct from new.eta_at)))
  execute function private.queue_delivery_notifications();

-- Section: the sender

-- Wakes the notifications function once the queuing transaction commits (10_jobs.sql).
create trigger notifications_wake_sender after insert on public.notifications
  referencing new table as queued
  for each statement execute function private.wake_function('notifications/send');

-- The masked form of a destination, the only one the API and the logs show:
-- a phone's last 4 digits, an e-mail's first character and domain.
create function private.mask_destination(channel text, destination text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  if mask_destination.destination is null then
    return null;
  end if;
  if mask_destination.channel = 'email' then
    return left(mask_destination.destination, 1) || '***@' || split_part(mask_destination.destination, '@', 2);
  end if;
  return '*****' || right(regexp_replace(mask_destination.destination, '[^0-9]', '', 'g'), 4);
end;
$$;
comment on function private.mask_destination(text, text) is 'A phone number or e-mail address masked for display and logs.';

-- The wait before the next attempt after `attempts` failed ones: 30 s, doubling, at most an hour.
create function private.notification_retry_delay(attempts integer)
returns interval
language plpgsql
immutable
set search_path = ''
as $$
begin
  return private.retry_backoff(notification_retry_delay.attempts, interval '30 seconds', interval '1 hour');
end;
$$;
comment on function private.notification_retry_delay(integer) is 'Backoff between attempts to send a message: 30 s, doubling, at most one hour.';

-- Service role only (the notifications function). Claims up to `batch` due
-- messages under a 2-minute lease (longer than any send may take), counting
-- the attempt, and answers what each needs: the destination, its masked form,
-- the recipient's first name, the company, the tracking link's path, the ETA.
-- Concurrent claimers skip each other's rows, so each message is claimed by
-- one. A message that can no longer be sent is failed here: the recipient's
-- address was erased, or the message is outdated (started or nearby once the
-- delivery is no longer in progress).
create function public.claim_notifications(batch integer default 20)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  claimed uuid[];
  answer jsonb;
begin
  with due as (
    select n.id from public.notifications n
    where n.status = 'queued' and n.next_attempt_at <= now()
    order by n.next_attempt_at
    limit least(greatest(claim_notifications.batch, 1), 100)
    for update skip locked
  ), claim as (
    update public.notifications n set
      attempts = n.attempts + 1,
      last_attempt_at = now(),
      next_attempt_at = now() + interval '2 minutes'
    from due where n.id = due.id
    returning n.id
  )
  select coalesce(array_agg(c.id), '{}') into claimed from claim c;

  update public.notifications n set status = 'failed', next_attempt_at = now(),
    error = case when (case n.channel when 'whatsapp' then d.recipient_phone else d.recipient_email end) is null
      then 'the recipient''s address was erased'
      else format('outdated: the delivery is %s now', d.status) end
  from public.deliveries d
  where n.id = any (claimed) and d.id = n.delivery_id
    and ((case n.channel when 'whatsapp' then d.recipient_phone else d.recipient_email end) is null
      or (n.event in ('started', 'nearby') and d.status <> 'in_progress'));

  select coalesce(jsonb_agg(jsonb_build_object(
    'id', n.id, 'attempt', n.attempts, 'delivery_id', n.delivery_id, 'company_id', n.company_id,
    'event', n.event, 'channel', n.channel,
    'to', x.destination, 'to_masked', private.mask_destination(n.channel, x.destination),
    'first_name', nullif(split_part(btrim(coalesce(d.recipient_name, '')), ' ', 1), ''),
    'company_name', co.name,
    'tracking_path', private.delivery_tracking_fields(n.delivery_id, n.company_id) ->> 'tracking_url',
    -- While in progress: the measured ETA, else the route's estimate from the start.
    'eta_at', coalesce(d.eta_at, d.started_at + make_interval(secs => d.duration_s)),
    -- The recipient's handover code (09_proof.sql), for the messages that carry it.
    'handover_code', private.handover_code_of(d.id))
    order by n.created_at), '[]'::jsonb)
  into answer
  from public.notifications n
  join public.deliveries d on d.id = n.delivery_id
  join public.companies co on co.id = n.company_id
  cross join lateral (select case n.channel when 'whatsapp' then d.recipient_phone else d.recipient_email end
    as destination) x
  where n.id = any (claimed) and n.status = 'queued';
  return answer;
end;
$$;
comment on function public.claim_notifications(integer) is 'Claims up to `batch` due messages for one sender (skip locked, a 2-minute lease) with what sending each needs (service role).';
revoke execute on function public.claim_notifications(integer) from authenticated;
grant execute on function public.claim_notifications(integer) to service_role;

-- Service role only. The outcome of attempt `attempt` of a message: `sent`;
-- `failed` (the provider refused it for good: no more tries); or `retry` (a
-- failure worth trying again: after the backoff, until 24 hours from queuing,
-- then failed). An outcome for an older attempt than the message's last, or
-- for a message no longer queued, changes nothing. Answers the message's
-- status afterwards (null when it changed nothing).
create function public.record_notification_outcome(
  notification_id uuid, attempt integer, outcome text, error text default null, provider_message_id text default null)
returns text
language plpgsql
set search_path = ''
as $$
declare
  result text;
begin
  if record_notification_outcome.outcome not in ('sent', 'failed', 'retry') then
    raise exception using errcode = 'PT400', message = 'outcome must be sent, failed or retry';
  end if;
  update public.notifications n set
    status = case
      when record_notification_outcome.outcome = 'sent' then 'sent'
      when record_notification_outcome.outcome = 'failed' or now() >= n.created_at + interval '24 hours' then 'failed'
      else 'queued' end,
    sent_at = case when record_notification_outcome.outcome = 'sent' then now() end,
    provider_message_id = left(record_notification_outcome.provider_message_id, 500),
    error = case
      when record_notification_outcome.outcome = 'sent' then null
      when record_notification_outcome.outcome = 'retry' and now() >= n.created_at + interval '24 hours'
        then left('gave up after 24 hours: ' || record_notification_outcome.error, 500)
      else left(record_notification_outcome.error, 500) end,
    next_attempt_at = case when record_notification_outcome.outcome = 'retry'
      then now() + private.notification_retry_delay(n.attempts) else now() end
  where n.id = record_notification_outcome.notification_id
    and n.attempts = record_notification_outcome.attempt and n.status = 'queued'
  returning n.status into result;
  return result;
end;
$$;
comment on function public.record_notification_outcome(uuid, integer, text, text, text) is 'Records an attempt''s outcome: sent, failed for good, or retried after a backoff until 24 hours have passed (service role).';
revoke execute on function public.record_notification_outcome(uuid, integer, text, text, text) from authenticated;
grant execute on function public.record_notification_outcome(uuid, integer, text, text, text) to service_role;

-- Section: reads

create function public.list_delivery_notifications(delivery_id uuid)
returns public.delivery_notification_list
language plpgsql
stable
set search_path = ''
as $$
declare
  delivery public.deliveries;
begin
  perform private.authorize(variadic private.delivery_managers());
  delivery := private.visible_delivery(list_delivery_notifications.delivery_id);
  return row(coalesce((
    select array_agg(row(n.event, n.channel,
        private.mask_destination(n.channel, case n.channel when 'whatsapp' then delivery.recipient_phone
          else delivery.recipient_email end),
        n.status, n.attempts, n.sent_at, n.error)::public.delivery_notification
      order by n.created_at, array_position(private.notification_events(), n.event), n.channel)
    from public.notifications n where n.delivery_id = delivery.id), '{}'))::public.delivery_notification_list;
end;
$$;
comment on function public.list_delivery_notifications(uuid) is 'The messages to one delivery''s recipient, destinations masked (owner, admin, legacy admin).';
grant execute on function public.list_delivery_notifications(uuid) to authenticated;

-- Section: data retention (LGPD)

-- When a delivery ended (completed, cancelled or failed), or null while it has not.
create function private.delivery_ended_at(delivery_id uuid)
returns timestamptz
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  d public.deliveries;
begin
  select * into d from public.deliveries x where x.id = delivery_ended_at.delivery_id;
  return case d.status
    when 'completed' then d.completed_at
    when 'cancelled' then d.cancelled_at
    when 'failed' then d.failed_at
    when 'returned' then d.returned_at
  end;
end;
$$;
comment on function private.delivery_ended_at(uuid) is 'When a delivery was completed, cancelled, failed or returned; null while it goes on.';

-- A tracking link answers for 30 days after its delivery ended, then as a
-- wrong one (public.track_delivery: 404).
create function private.tracking_link_expired(delivery_id uuid)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return coalesce(private.delivery_ended_at(tracking_link_expired.delivery_id) < now() - interval '30 days', false);
end;
$$;
comment on function private.tracking_link_expired(uuid) is 'Whether a delivery ended more than 30 days ago, so its tracking link no longer answers.';

-- Run daily by pg_cron (Section: jobs): the positions of deliveries that
-- ended more than 90 days ago are deleted. Answers how many.
create function private.purge_delivery_trails()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  purged integer;
begin
  with expired as materialized (
    select p.delivery_id from (select distinct x.delivery_id from public.delivery_trail_points x) p
    where private.delivery_ended_at(p.delivery_id) < now() - interval '90 days'
  )
  delete from public.delivery_trail_points t using expired e where t.delivery_id = e.delivery_id;
  get diagnostics purged = row_count;
  return purged;
end;
$$;
comment on function private.purge_delivery_trails() is 'Deletes the trail points of deliveries that ended more than 90 days ago (daily job).';

-- A JSON document with every string equal to one of `erased` replaced by
-- null (wherever it sits: a value of any object or array, at any depth).
-- Used where erased personal data has been copied as JSON.
create function private.jsonb_without_values(doc jsonb, erased text[])
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
declare
  text_form text := jsonb_without_values.doc::text;
  value text;
begin
  -- Postgres writes each string of a jsonb one way, so its quoted form matches whole strings only.
  foreach value in array jsonb_without_values.erased loop
    if value is not null and value <> '' then
      text_form := replace(text_form, pg_catalog.to_jsonb(value)::text, 'null');
    end if;
  end loop;
  return text_form::jsonb;
end;
$$;
comment on function private.jsonb_without_values(jsonb, text[]) is 'A JSON document with every string equal to one of the erased values replaced by null.';

-- Broadcasts are kept in realtime.messages (Realtime drops them after a few
-- days); those that name the subject lose the erased values at once.
create function private.erase_from_broadcasts(subject_id uuid, erased text[])
returns integer
language plpgsql
set search_path = ''
as $$
declare
  changed integer;
begin
  update realtime.messages m
  set payload = private.jsonb_without_values(m.payload, erase_from_broadcasts.erased)
  where m.payload is not null and strpos(m.payload::text, erase_from_broadcasts.subject_id::text) > 0
    and m.payload <> private.jsonb_without_values(m.payload, erase_from_broadcasts.erased);
  get diagnostics changed = row_count;
  return changed;
end;
$$;
comment on function private.erase_from_broadcasts(uuid, text[]) is 'Replaces erased values with null in the kept broadcasts that name a subject (erasure of personal data); returns how many changed.';

-- A company erases its recipient's personal data from a delivery: the name,
-- the phone and the e-mail are removed (the Pix payer's document is never
-- stored with the delivery), from the delivery, from the stored answers of
-- requests made with an Idempotency-Key and from the kept broadcasts; messages
-- not yet sent are failed; the history
-- keeps who erased it and when (`erase_recipient`), and everything else.
-- Erasing a delivery whose recipient has nothing left changes nothing.
create function public.erase_delivery_recipient(delivery_id uuid)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.delivery_managers());
  delivery public.deliveries := private.lock_delivery(erase_delivery_recipient.delivery_id, company);
  erased public.deliveries;
begin
  if delivery.recipient_name is null and delivery.recipient_phone is null and delivery.recipient_email is null then
    return private.delivery_row(delivery);
  end if;
  update public.deliveries d set recipient_name = null, recipient_phone = null, recipient_email = null,
    updated_at = now()
  where d.id = delivery.id
  returning * into erased;
  perform private.record_delivery_history(delivery, erased, 'erase_recipient', (select auth.uid()));
  perform private.erase_from_idempotent_answers(delivery.id,
    array[delivery.recipient_name, delivery.recipient_phone, delivery.recipient_email]);
  perform private.erase_from_broadcasts(delivery.id,
    array[delivery.recipient_name, delivery.recipient_phone, delivery.recipient_email]);
  update public.notifications n set status = 'failed', error = 'the recipient''s address was erased',
    next_attempt_at = now()
  where n.delivery_id = delivery.id and n.status = 'queued';
  return private.delivery_row(erased);
end;
$$;
comment on function public.erase_delivery_recipient(uuid) is 'Removes the recipient''s name, phone and e-mail from a delivery of the caller''s company, keeping its history (owner, admin, legacy admin).';
grant execute on function public.erase_delivery_recipient(uuid) to authenticated;

-- Section: jobs (10_jobs.sql says what the Vault secrets are)

-- Every minute, while any message is due (a retry whose backoff has passed, or
-- one whose wake was lost), the notifications function is asked to send.
select cron.schedule('send-notifications', '* * * * *', $$
  select private.call_function('notifications/send')
  where exists (select from public.notifications n where n.status = 'queued' and n.next_attempt_at <= now())
$$);

-- Every day at 03:17 UTC: trails of deliveries that ended more than 90 days ago.
select cron.schedule('purge-delivery-trails', '17 3 * * *', 'select private.purge_delivery_trails()');

-- Section: grants of the helpers

grant execute on function private.notification_events(), private.notification_channels(),
  private.notification_settings_of(uuid), private.mask_destination(text, text)
  to authenticated, service_role;
grant execute on function private.notification_retry_delay(integer), private.delivery_ended_at(uuid),
  private.tracking_link_expired(uuid)
  to service_role;
