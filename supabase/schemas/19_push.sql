-- Web Push (docs/push.md): a driver's browsers subscribe with the push service
-- of their vendor (FCM, Mozilla, Apple, ...) and register that subscription
-- here; a new offer (delivery_offered) or a route published for the driver
-- (route_published) then reaches the phone even with the app closed.
--
-- Subscriptions are the driver's own: RLS lets a driver read only theirs, and
-- only the functions below write them. Pushes are an outbox, as webhooks are
-- (18_integrations.sql): a trigger on the offers and on the routes queues one
-- message per subscription of the driver in the transaction of the change
-- (none for a change rolled back); the push Edge Function, woken through
-- pg_net after the commit and every minute by pg_cron while anything is due,
-- claims due messages with `for update skip locked` under a lease, encrypts
-- each for its subscription (RFC 8291), signs with the platform's VAPID key
-- (RFC 8292) and records the outcome. A subscription the push service answers
-- 404 or 410 for is gone (RFC 8030 §7.3): it is deleted with what it still had
-- queued. A message is worth sending only while it means something: an offer
-- until its deadline, a route for an hour; then it is dropped.

-- Section: types (02_company.sql says why functions return them)

create type public.push_subscription as (
  id uuid,
  endpoint text,
  user_agent text,
  created_at timestamptz,
  last_sent_at timestamptz
);
comment on type public.push_subscription is 'A driver''s Web Push subscription as the API shows it: never its keys.';

create type public.push_subscription_list as (items public.push_subscription[]);
comment on type public.push_subscription_list is 'The caller''s push subscriptions, newest first.';

-- Section: subscriptions

create table public.push_subscriptions (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  driver_id uuid not null references public.drivers (id) on delete cascade,
  -- The push resource (RFC 8030): where messages for this browser are POSTed. One browser, one endpoint.
  endpoint text not null unique check (length(endpoint) <= 2000 and endpoint ~ '^https?://'),
  -- The browser's P-256 public key (65 bytes, uncompressed) and its auth secret (16 bytes), base64url (RFC 8291).
  p256dh text not null check (p256dh ~ '^[A-Za-z0-9_-]{87}=?$'),
  auth text not null check (auth ~ '^[A-Za-z0-9_-]{22}(==)?$'),
  user_agent text check (length(user_agent) <= 300),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_sent_at timestamptz
);
comment on table public.push_subscriptions is 'Each driver''s Web Push subscriptions (one per browser), with the keys messages are encrypted for.';
create index push_subscriptions_driver_id_idx on public.push_subscriptions (driver_id, created_at desc);
create index push_subscriptions_company_id_idx on public.push_subscriptions (company_id);
alter table public.push_subscriptions enable row level security;
-- A driver reads its own; nobody else (a manager has no use for a phone's keys). Writes go through the functions.
create policy push_subscriptions_select_own on public.push_subscriptions
  for select to authenticated
  using (driver_id = (select private.driver_id()));
grant select on public.push_subscriptions to authenticated;
grant all on public.push_subscriptions to service_role;

create function private.push_subscription_row(s public.push_subscriptions)
returns public.push_subscription
language plpgsql
immutable
set search_path = ''
as $$
begin
  return row(s.id, s.endpoint, s.user_agent, s.created_at, s.last_sent_at)::public.push_subscription;
end;
$$;
comment on function private.push_subscription_row(public.push_subscriptions) is 'A push subscription as the API shows it.';

-- Registers the browser's subscription for the calling driver. The same
-- endpoint again (the browser renewed its keys, or another driver signs in on
-- the same phone) replaces the earlier registration: a phone alerts the driver
-- signed in on it, and nobody else. A driver keeps at most 10; the oldest go.
-- The edge checks first that the endpoint is a public https URL (or a host
-- WEBHOOK_ALLOWED_HOSTS lists), as for webhooks.
create function public.register_push_subscription(endpoint text, p256dh text, auth text,
  user_agent text default null)
returns public.push_subscription
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.drivers());
  driver uuid := private.driver_id();
  saved public.push_subscriptions;
begin
  if register_push_subscription.endpoint is null or register_push_subscription.endpoint !~ '^https?://'
     or length(register_push_subscription.endpoint) > 2000 then
    raise exception using errcode = 'PT400', message = 'endpoint must be an http(s) URL of at most 2000 characters';
  end if;
  if coalesce(register_push_subscription.p256dh, '') !~ '^[A-Za-z0-9_-]{87}=?$' then
    raise exception using errcode = 'PT400', message = 'keys.p256dh must be a P-256 public key (65 bytes, base64url)';
  end if;
  if coalesce(register_push_subscription.auth, '') !~ '^[A-Za-z0-9_-]{22}(==)?$' then
    raise exception using errcode = 'PT400', message = 'keys.auth must be 16 bytes, base64url';
  end if;
  -- Whoever had it (this driver, or another who used this browser before) loses it, with what was queued for it.
  delete from public.push_subscriptions s where s.endpoint = register_push_subscription.endpoint;
  insert into public.push_subscriptions (company_id, driver_id, endpoint, p256dh, auth, user_agent)
  values (company, driver, register_push_subscription.endpoint, register_push_subscription.p256dh,
    register_push_subscription.auth, left(nullif(btrim(register_push_subscription.user_agent), ''), 300))
  returning * into saved;
  delete from public.push_subscriptions s
  where s.driver_id = driver and s.id in (
    select x.id from public.push_subscriptions x where x.driver_id = driver
    order by x.created_at desc, x.id desc offset 10);
  return private.push_subscription_row(saved);
end;
$$;
comment on function public.register_push_subscription(text, text, text, text) is 'Registers a Web Push subscription of the calling driver''s browser (replacing any registration of that endpoint) (driver).';
grant execute on function public.register_push_subscription(text, text, text, text) to authenticated;

create function public.list_push_subscriptions()
returns public.push_subscription_list
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.drivers());
  driver uuid := private.driver_id();
begin
  return row(coalesce((
    select array_agg(private.push_subscription_row(s) order by s.created_at desc, s.id desc)
    from public.push_subscriptions s where s.driver_id = driver and s.company_id = company), '{}'))::public.push_subscription_list;
end;
$$;
comment on function public.list_push_subscriptions() is 'The calling driver''s push subscriptions, newest first (driver).';
grant execute on function public.list_push_subscriptions() to authenticated;

create function public.delete_push_subscription(subscription_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.drivers());
  driver uuid := private.driver_id();
begin
  delete from public.push_subscriptions s
  where s.id = delete_push_subscription.subscription_id and s.driver_id = driver and s.company_id = company;
  if not found then
    raise exception using errcode = 'PT404', message = 'push subscription not found';
  end if;
end;
$$;
comment on function public.delete_push_subscription(uuid) is 'Removes one of the calling driver''s push subscriptions; another''s is 404 (driver).';
grant execute on function public.delete_push_subscription(uuid) to authenticated;

-- Section: the outbox

create table private.push_messages (
  id uuid primary key default gen_random_uuid(),
  subscription_id uuid not null references public.push_subscriptions (id) on delete cascade,
  company_id uuid not null references public.companies (id) on delete cascade,
  type text not null check (type in ('delivery_offered', 'route_published')),
  -- What the service worker reads: {type, ...}, a few hundred bytes (a push carries at most 3993).
  payload jsonb not null,
  -- RFC 8030: Topic replaces a message still waiting in the push service; Urgency `high` wakes a sleeping phone.
  topic text not null check (topic ~ '^[A-Za-z0-9_-]{1,32}$'),
  urgency text not null default 'high' check (urgency in ('very-low', 'low', 'normal', 'high')),
  status text not null default 'pending' check (status in ('pending', 'sent', 'failed')),
  attempts integer not null default 0 check (attempts >= 0),
  next_attempt_at timestamptz not null default now(),
  -- After this the message means nothing (the offer's deadline): it is not sent, and its TTL is what is left.
  expires_at timestamptz not null,
  sent_at timestamptz,
  -- The push service's answer to the last attempt (null: none came).
  status_code integer check (status_code between 100 and 599),
  error text check (length(error) <= 500),
  created_at timestamptz not null default now()
);
comment on table private.push_messages is 'Web Push messages to send to drivers'' subscriptions: pending, sent or failed.';
create index push_messages_due_idx on private.push_messages (next_attempt_at) where status = 'pending';
create index push_messages_subscription_id_idx on private.push_messages (subscription_id);
create index push_messages_company_id_idx on private.push_messages (company_id);
create index push_messages_created_at_idx on private.push_messages (created_at);
alter table private.push_messages enable row level security;

-- Queues `payload` for every subscription of the driver, in the caller's transaction. Answers how many.
create function private.queue_push(driver_id uuid, type text, payload jsonb, expires_at timestamptz, topic text)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  queued integer;
begin
  insert into private.push_messages (subscription_id, company_id, type, payload, topic, expires_at)
  select s.id, s.company_id, queue_push.type, jsonb_build_object('type', queue_push.type) || queue_push.payload,
    queue_push.topic, queue_push.expires_at
  from public.push_subscriptions s where s.driver_id = queue_push.driver_id;
  get diagnostics queued = row_count;
  return queued;
end;
$$;
comment on function private.queue_push(uuid, text, jsonb, timestamptz, text) is 'Queues a Web Push message for every subscription of a driver, in the caller''s transaction.';

-- private.push_offer, the trigger on public.dispatch_offers: 14_dispatch.sql.

-- private.push_route, the trigger on public.routes: 16_routes.sql.

-- Wakes the push function once the queuing transaction commits (10_jobs.sql), unless a wake still waits.
create trigger push_messages_wake_sender after insert on private.push_messages
  referencing new table as queued
  for each statement execute function private.wake_function('push/send', 'unless_queued');

-- Section: the sender

-- Service role only (the push function). Claims up to `batch` due messages
-- under a 30-second lease, counting the attempt, with what sending needs: the
-- endpoint, the keys, the payload, what is left of the TTL. Messages past their
-- expiry fail unsent. Concurrent claimers skip each other's rows.
create function public.claim_push_messages(batch integer default 50)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  answer jsonb;
begin
  update private.push_messages m set status = 'failed', error = 'expired before it could be sent'
  where m.status = 'pending' and m.expires_at <= now() and m.next_attempt_at <= now();
  with due as (
    select m.id from private.push_messages m
    where m.status = 'pending' and m.next_attempt_at <= now()
    order by m.next_attempt_at
    limit least(greatest(claim_push_messages.batch, 1), 200)
    for update skip locked
  ), claim as (
    update private.push_messages m set attempts = m.attempts + 1, next_attempt_at = now() + interval '30 seconds'
    from due where m.id = due.id
    returning m.*
  )
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', c.id, 'attempt', c.attempts, 'subscription_id', c.subscription_id, 'type', c.type, 'payload', c.payload,
    'topic', c.topic, 'urgency', c.urgency,
    'ttl', greatest(ceil(extract(epoch from c.expires_at - now()))::integer, 1),
    'endpoint', s.endpoint, 'p256dh', s.p256dh, 'auth', s.auth)
    order by c.created_at), '[]'::jsonb)
  into answer
  from claim c join public.push_subscriptions s on s.id = c.subscription_id;
  return answer;
end;
$$;
comment on function public.claim_push_messages(integer) is 'Claims up to `batch` due Web Push messages (skip locked, a 30-second lease) with their subscription (service role).';
revoke execute on function public.claim_push_messages(integer) from authenticated;
grant execute on function public.claim_push_messages(integer) to service_role;

-- Service role only. Records the push service's answer to attempt `attempt`:
-- 201 (any 2xx) sent; 404 or 410 the subscription is gone, deleted with its
-- messages; 429, a 5xx or no answer retried (2 s, 4 s, 8 s, ... while the
-- message has not expired, 5 attempts at most); any other answer failed.
-- Answers what became of it: sent, gone, retried, failed, or null for an
-- outcome of an older attempt than the last.
create function public.record_push_outcome(message_id uuid, attempt integer, status_code integer,
  error text default null)
returns text
language plpgsql
security definer
set search_path = ''
as $$
declare
  m private.push_messages;
  retry boolean;
begin
  select * into m from private.push_messages x
  where x.id = record_push_outcome.message_id and x.attempts = record_push_outcome.attempt and x.status = 'pending'
  for update;
  if not found then
    return null;
  end if;
  if record_push_outcome.status_code between 200 and 299 then
    update private.push_messages x set status = 'sent', sent_at = now(), status_code = record_push_outcome.status_code,
      error = null
    where x.id = m.id;
    update public.push_subscriptions s set last_sent_at = now() where s.id = m.subscription_id;
    return 'sent';
  end if;
  if record_push_outcome.status_code in (404, 410) then
    delete from public.push_subscriptions s where s.id = m.subscription_id;
    return 'gone';
  end if;
  retry := (record_push_outcome.status_code is null or record_push_outcome.status_code = 429
            or record_push_outcome.status_code >= 500)
    and m.attempts < 5 and now() + private.retry_backoff(m.attempts, interval '2 seconds') < m.expires_at;
  update private.push_messages x set
    status = case when retry then 'pending' else 'failed' end,
    next_attempt_at = case when retry then now() + private.retry_backoff(m.attempts, interval '2 seconds') else now() end,
    status_code = record_push_outcome.status_code,
    error = left(coalesce(record_push_outcome.error, format('answered %s', record_push_outcome.status_code)), 500)
  where x.id = m.id;
  return case when retry then 'retried' else 'failed' end;
end;
$$;
comment on function public.record_push_outcome(uuid, integer, integer, text) is 'Records a push service''s answer: sent, gone (404/410: the subscription is deleted), retried or failed (service role).';
revoke execute on function public.record_push_outcome(uuid, integer, integer, text) from authenticated;
grant execute on function public.record_push_outcome(uuid, integer, integer, text) to service_role;

-- Section: jobs (10_jobs.sql says what the Vault secrets are)

-- Every minute, while a message is due (a retry, or one whose wake was lost), the push function is asked to send.
select cron.schedule('send-pushes', '* * * * *', $$
  select private.call_function('push/send', unless_queued => true)
  where exists (select from private.push_messages m where m.status = 'pending' and m.next_attempt_at <= now())
$$);

-- Every hour: messages sent or failed more than a day ago (kept that long to be looked at).
select cron.schedule('purge-push-messages', '41 * * * *', $$
  delete from private.push_messages m where m.status <> 'pending' and m.created_at < now() - interval '1 day'
$$);

-- Section: grants of the helpers

grant execute on function private.push_subscription_row(public.push_subscriptions) to authenticated, service_role;
grant execute on function private.queue_push(uuid, text, jsonb, timestamptz, text) to service_role;
