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

-- Section: jobs

-- Reconciliation (docs/state-machines.md, Withdrawal and Payment): every 5
-- minutes the gateway-webhook function asks the gateway about every withdrawal
-- whose state only the gateway can tell, before it releases anything, and about
-- every delivery still awaiting a payment charged more than 10 minutes ago.
select cron.schedule('reconcile-with-gateway', '*/5 * * * *', $$
  select net.http_post(
    url := (select decrypted_secret from vault.decrypted_secrets where name = 'project_url') || '/functions/v1/gateway-webhook/reconcile',
    headers := jsonb_build_object('Content-Type', 'application/json', 'Authorization',
      'Bearer ' || (select decrypted_secret from vault.decrypted_secrets where name = 'service_role_key')),
    body := '{}'::jsonb,
    timeout_milliseconds := 30000)
$$);

-- Every hour: cached address answers older than a day (02_brazil.sql, Section: address lookups).
select cron.schedule('purge-address-lookups', '23 * * * *', 'select private.purge_address_lookups()');
