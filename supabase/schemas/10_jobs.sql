-- Scheduled jobs, as on any Supabase project: pg_cron runs them, pg_net calls an
-- Edge Function from the database, and Vault holds what the call needs. Before
-- the migrations run on a hosted project, store the two Vault secrets once:
--   select vault.create_secret('https://<project-ref>.supabase.co', 'project_url');
--   select vault.create_secret('<service role key>', 'service_role_key');
-- The local stack stores them itself and runs the same jobs on the same
-- schedule (local/scheduler.ts, local/net-worker.ts).

-- Section: extensions

create extension if not exists pg_net with schema extensions;
create extension if not exists pg_cron with schema pg_catalog;

-- Section: calling an Edge Function

-- The one way the database calls an Edge Function: a POST of `{}` through pg_net (sent after the commit) to
-- {project_url}/functions/v1/{path} with the service role key, both read from Vault. False, and no call, when
-- Vault lacks either secret, or when `unless_queued` and a call to the same path still waits in pg_net's queue.
create function private.call_function(path text, unless_queued boolean default false)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
  project_url text := (select s.decrypted_secret from vault.decrypted_secrets s where s.name = 'project_url');
  target text := project_url || '/functions/v1/' || call_function.path;
  service_key text;
begin
  if project_url is null
     or (call_function.unless_queued and exists (select from net.http_request_queue q where q.url = target)) then
    return false;
  end if;
  -- Decrypted only for a call that goes out (a call already queued, the common case under load, needs no key).
  service_key := (select s.decrypted_secret from vault.decrypted_secrets s where s.name = 'service_role_key');
  if service_key is null then
    return false;
  end if;
  perform net.http_post(
    url := target,
    headers := jsonb_build_object('Content-Type', 'application/json', 'Authorization', 'Bearer ' || service_key),
    body := '{}'::jsonb,
    timeout_milliseconds := 30000);
  return true;
end;
$$;
comment on function private.call_function(text, boolean) is 'Calls an Edge Function of the project through pg_net after the commit, as the service role (Vault''s project_url and service_role_key).';

-- Section: outboxes (queued rows, claimed under a lease, retried with backoff)

-- The outboxes (notifications, webhooks, Web Push) share this shape: a row queued in the transaction of the
-- change that causes it; a statement trigger that wakes its Edge Function once that transaction commits
-- (private.wake_function); a sender that claims due rows `for update skip locked` under a lease, counting the
-- attempt; and its outcome, retried after a backoff (private.retry_backoff) or a fixed schedule.

-- Trigger (for each statement, after insert, `referencing new table as queued`): wakes the Edge Function at
-- path tg_argv[0] once the queuing transaction commits (pg_net sends only then; a rolled-back change sends
-- none), `unless_queued` when tg_argv[1] says so. A statement that queued no row wakes nothing. Without the
-- Vault secrets nothing is woken: the outbox's minutely job sends what is due.
create function private.wake_function()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if exists (select from queued) then
    perform private.call_function(tg_argv[0], unless_queued => coalesce(tg_argv[1] = 'unless_queued', false));
  end if;
  return null;
end;
$$;
comment on function private.wake_function() is 'Trigger: asks an Edge Function (tg_argv[0]), through pg_net after the commit, to send the rows just queued.';

-- The wait before the next attempt after `attempts` failed ones: `first`, doubling with each attempt, at most
-- `cap` (none when null).
create function private.retry_backoff(attempts integer, first interval, cap interval default null)
returns interval
language plpgsql
immutable
set search_path = ''
as $$
begin
  return least(retry_backoff.cap, retry_backoff.first * power(2, greatest(retry_backoff.attempts, 1) - 1));
end;
$$;
comment on function private.retry_backoff(integer, interval, interval) is 'Exponential backoff: `first` after the first failed attempt, doubling, at most `cap`.';
-- The senders' outcomes run as the service role (public.record_notification_outcome).
grant execute on function private.retry_backoff(integer, interval, interval) to service_role;

-- Section: transactions whose loss costs nothing

-- Lets the calling transaction commit without waiting for its write-ahead log to reach the disk: the WAL writer
-- flushes it within 200 ms, so a crash of the database in that window loses it, and nothing else (no corruption,
-- no half-written transaction). Only for a transaction whose every write is replaceable, each caller saying why:
-- a driver's position (the next comes seconds later) and a dispatch claim (a lease). The wait and the flush were
-- a fifth of a location update's CPU (bench/README.md, issue 37). pgTAP 880 holds who calls it, and that creating
-- a delivery does not.
create function private.commit_without_flush()
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.set_config('synchronous_commit', 'off', true);
end;
$$;
comment on function private.commit_without_flush() is 'The calling transaction commits without waiting for the WAL flush (for transactions whose writes are replaceable).';

-- Section: jobs

-- Reconciliation (docs/state-machines.md, Withdrawal and Payment): every 5
-- minutes the gateway-webhook function asks the gateway about every withdrawal
-- whose state only the gateway can tell, before it releases anything, and about
-- every delivery still awaiting a payment charged more than 10 minutes ago.
select cron.schedule('reconcile-with-gateway', '*/5 * * * *', $$select private.call_function('gateway-webhook/reconcile')$$);

-- Every hour: cached address answers older than a day (01_brazil.sql, Section: address lookups).
select cron.schedule('purge-address-lookups', '23 * * * *', 'select private.purge_address_lookups()');
