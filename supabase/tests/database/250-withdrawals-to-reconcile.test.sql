-- What the reconciliation job asks the gateway about (docs/state-machines.md,
-- Withdrawal): public.withdrawals_to_reconcile lists the processing withdrawals
-- that are in doubt, have no transfer id more than 2 minutes after their
-- request, or have had their transfer pending (no update) for more than an
-- hour; oldest first, at most max_rows; never a completed or failed one. It
-- only reads (stable): releasing funds is for the job, once the gateway has
-- answered. For the service role (a scheduled job) only.
begin;
select plan(23);

create temp table t as select tests.create_tenant('recon-a') as a;
create temp table ids (name text primary key, id uuid);
grant all on t, ids to public;
select tests.configure_gateway(a) from t;

select from t, tests.credit_driver(a, 100.00);

-- Withdrawals of various ages, as requests long gone would have left them.
insert into ids
select v.name, (tests.withdrawal_in(a, v.status, v.amount, gateway_transfer_id => v.transfer, in_doubt => v.doubt,
  created_at => now() - v.age, updated_at => now() - v.idle)).id
from t, (values
  ('in doubt, just now', 1.00, 'processing', null, true, interval '0', interval '0'),
  ('no transfer, 3 minutes', 2.00, 'processing', null, false, interval '3 minutes', interval '3 minutes'),
  ('no transfer, 1 minute', 3.00, 'processing', null, false, interval '1 minute', interval '1 minute'),
  ('no transfer, 2 hours', 4.00, 'processing', null, false, interval '2 hours', interval '2 hours'),
  ('transfer idle 2 hours', 5.00, 'processing', 'tra_idle', false, interval '3 hours', interval '2 hours'),
  ('transfer idle 10 minutes', 6.00, 'processing', 'tra_recent', false, interval '3 hours', interval '10 minutes'),
  ('transfer just attached', 7.00, 'processing', 'tra_new', false, interval '5 minutes', interval '0'),
  ('completed long ago', 8.00, 'completed', 'tra_completed', false, interval '5 hours', interval '5 hours'),
  ('failed long ago', 9.00, 'failed', null, false, interval '4 hours', interval '4 hours')
) v(name, amount, status, transfer, doubt, age, idle);

-- The names of the withdrawals it lists, in its order.
create function pg_temp.listed(max_rows integer default 100) returns text[]
language plpgsql as $$
declare
  names text[];
begin
  perform tests.act_as_service_role();
  select array_agg(ids.name order by r.n) into names
  from public.withdrawals_to_reconcile(max_rows) with ordinality r(id, company_id, gateway_transfer_id, in_doubt, created_at, n)
  join ids on ids.id = r.id;
  perform tests.reset_role();
  return names;
end;
$$;

-- Who may call it.
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.withdrawals_to_reconcile() $$, '42501', null, 'not a driver');
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select public.withdrawals_to_reconcile() $$, '42501', null, 'not an owner');
select tests.act_as_member(a, 'admin') from t;
select throws_ok($$ select public.withdrawals_to_reconcile() $$, '42501', null, 'not an admin');
select tests.reset_role();
select tests.act_as_anon();
select throws_ok($$ select public.withdrawals_to_reconcile() $$, '42501', null, 'not anon');
select tests.reset_role();
select tests.act_as_service_role();
select lives_ok($$ select public.withdrawals_to_reconcile() $$, 'the service role may');
select tests.reset_role();
select is((select provolatile::text from pg_proc where oid = 'public.withdrawals_to_reconcile(integer)'::regprocedure), 's',
  'it only reads: stable');

-- Which ones.
select is(pg_temp.listed(),
  array['transfer idle 2 hours', 'no transfer, 2 hours', 'no transfer, 3 minutes', 'in doubt, just now'],
  'in doubt, without a transfer id after 2 minutes, or with a transfer idle for an hour: oldest first');
select ok(not ('no transfer, 1 minute' = any (pg_temp.listed())), 'not one whose request may still be under way (no transfer id, 1 minute)');
select ok(not ('transfer idle 10 minutes' = any (pg_temp.listed())),
  'not one whose transfer was updated 10 minutes ago, however old the request');
select ok(not ('transfer just attached' = any (pg_temp.listed())), 'not one whose transfer id just arrived');
select ok(not ('completed long ago' = any (pg_temp.listed())), 'never a completed one');
select ok(not ('failed long ago' = any (pg_temp.listed())), 'never a failed one');
select is((select array_agg(r.in_doubt::text || ' ' || coalesce(r.gateway_transfer_id, '-') || ' ' || (r.company_id = (select (a ->> 'company_id')::uuid from t))::text
                            order by r.created_at)
           from public.withdrawals_to_reconcile() r
           -- This file's withdrawals only: against a running stack (npm run db:test:cli) others may be listed.
           where r.company_id = (select (a ->> 'company_id')::uuid from t)),
  array['false tra_idle true', 'false - true', 'false - true', 'true - true'],
  'each row says whether it is in doubt, its transfer id and its company (the key to ask the gateway with)');

-- The limit.
select is(pg_temp.listed(2), array['transfer idle 2 hours', 'no transfer, 2 hours'], 'max_rows 2: the two oldest');
select is(pg_temp.listed(0), array['transfer idle 2 hours'], 'max_rows 0: still one');
select is(pg_temp.listed(-5), array['transfer idle 2 hours'], 'a negative max_rows: one');
select is(cardinality(pg_temp.listed(null)), 4, 'max_rows null: all of them, up to 1000');

-- Listing changes nothing: the funds stay held until the gateway has answered.
select is(tests.balances((select a from t)), array[100, 72]::numeric[], 'the processing withdrawals still hold 28.00');
select is((select count(*)::integer from public.withdrawals w where w.status = 'processing'
  and w.company_id = (select (a ->> 'company_id')::uuid from t)), 7, 'all seven are still processing');

-- What takes a withdrawal off the list: the transfer id, a failure, a completion.
select tests.act_as_service_role();
select is(to_jsonb(public.attach_transfer((select id from ids where name = 'in doubt, just now'), 'tra_found')) ->> 'in_doubt', 'false',
  'the withdrawal in doubt gets its transfer id');
select is(to_jsonb(public.fail_withdrawal((select id from ids where name = 'no transfer, 3 minutes'), 'Reconciliation: no transfer at the gateway',
  'no_transfer')) ->> 'status', 'failed', 'the gateway has no transfer for another: failed as no_transfer');
select is(public.apply_transfer_event(null, 'TRANSFER_DONE', 'tra_idle', null) ->> 'result', 'processed',
  'the idle transfer is reported done');
select tests.reset_role();
select is(pg_temp.listed(), array['no transfer, 2 hours'], 'only the one nobody has settled is left');

select * from finish();
rollback;
