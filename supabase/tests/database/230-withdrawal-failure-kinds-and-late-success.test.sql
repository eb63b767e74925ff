-- Money never leaves without a debit: why a withdrawal failed is recorded; one
-- we failed because the gateway did not answer (gateway_unavailable) is still
-- completed, with one debit, by a later TRANSFER_DONE / TRANSFER_APPROVED, even
-- below a zero balance; a refusal or a failed transfer stays final.
begin;
select plan(45);

create temp table t as select tests.create_tenant('rec-a') as a;
create temp table ids (name text primary key, id uuid);
create temp table results (name text primary key, value jsonb);
grant all on t, ids, results to public;
select tests.configure_gateway(a) from t;

-- 100.00 for the driver, from one completed delivery.
select from t, tests.credit_driver(a, 100.00);

create function pg_temp.w(name text) returns public.withdrawals
language sql as $$ select * from public.withdrawals where id = (select id from ids where ids.name = w.name) $$;
create function pg_temp.event(name text, event text, transfer_id text, by_reference boolean default true) returns jsonb
language plpgsql as $$
declare
  outcome jsonb;
begin
  perform tests.act_as_service_role();
  outcome := public.apply_transfer_event((select (a ->> 'company_id')::uuid from t), event, transfer_id,
    case when by_reference then (select id::text from ids where ids.name = event.name) end);
  perform tests.reset_role();
  return outcome;
end;
$$;

insert into ids select n, tests.request_withdrawal(a, amount)
from t, (values ('gave-up', 30.00), ('gave-up-2', 10.00), ('rejected', 20.00), ('legacy-fail', 5.00), ('transfer-failed', 10.00)) v(n, amount);
select is(tests.balances((select a from t)), array[100, 25]::numeric[], 'five processing withdrawals hold 75.00');

-- Failing, with the reason ---------------------------------------------------------------

select tests.act_as_service_role();
select throws_ok($$ select public.fail_withdrawal((select id from ids where name = 'gave-up'), 'x', 'transfer_failed') $$,
  'PT400', 'failure_kind must be gateway_unavailable or gateway_rejected', 'fail_withdrawal: transfer_failed is for events only');
select throws_ok($$ select public.fail_withdrawal((select id from ids where name = 'gave-up'), 'x', null) $$,
  'PT400', 'failure_kind must be gateway_unavailable or gateway_rejected', 'fail_withdrawal: a reason is required');
insert into results select 'gave-up', public.fail_withdrawal((select id from ids where name = 'gave-up'),
  'Payment gateway unavailable: HTTP 500', 'gateway_unavailable');
insert into results select 'gave-up-2', public.fail_withdrawal((select id from ids where name = 'gave-up-2'),
  'Payment gateway unavailable: timed out', 'gateway_unavailable');
insert into results select 'rejected', public.fail_withdrawal((select id from ids where name = 'rejected'),
  'Payment gateway refused the request: Invalid key', 'gateway_rejected');
insert into results select 'legacy-fail', public.fail_withdrawal((select id from ids where name = 'legacy-fail'), 'Some failure');
select tests.reset_role();
select is((select value ->> 'status' from results where name = 'gave-up'), 'failed', 'gateway_unavailable: failed');
select is((pg_temp.w('gave-up')).failure_kind, 'gateway_unavailable', '... and says why');
select is((pg_temp.w('rejected')).failure_kind, 'gateway_rejected', 'gateway_rejected: failed and says why');
select is((pg_temp.w('legacy-fail')).failure_kind, 'gateway_rejected', 'the two-argument fail_withdrawal: a final failure, as before');
select is(pg_temp.event('transfer-failed', 'TRANSFER_FAILED', null) ->> 'result', 'processed', 'TRANSFER_FAILED fails the last one');
select is((pg_temp.w('transfer-failed')).failure_kind, 'transfer_failed', '... as transfer_failed');
select is(tests.balances((select a from t)), array[100, 100]::numeric[], 'every failure released its funds');

-- The driver withdraws the released funds, and that withdrawal completes.
insert into ids select 'spent', tests.request_withdrawal(a, 100.00) from t;
select is(pg_temp.event('spent', 'TRANSFER_DONE', 'tra_spent') ->> 'result', 'processed', 'the released funds are withdrawn');
select is(tests.balances((select a from t)), array[0, 0]::numeric[], 'the wallet is empty');

-- The late success -------------------------------------------------------------------------

insert into results select 'late done', pg_temp.event('gave-up', 'TRANSFER_DONE', 'tra_late');
select is((select value ->> 'result' from results where name = 'late done'), 'processed',
  'TRANSFER_DONE for a withdrawal given up as gateway_unavailable: processed');
select is((select value ->> 'detail' from results where name = 'late done'),
  'withdrawal completed after the gateway was given up as unavailable: debited now', '... saying so');
select is((pg_temp.w('gave-up')).status, 'completed', '... it is completed');
select isnt((pg_temp.w('gave-up')).completed_at, null, '... with completed_at');
select is((pg_temp.w('gave-up')).gateway_transfer_id, 'tra_late', '... with the transfer id from the event');
select is((pg_temp.w('gave-up')).error_message, null, '... without an error message');
select is((pg_temp.w('gave-up')).failure_kind, 'gateway_unavailable', '... keeping why it had failed');
select is(tests.debits((select id from ids where name = 'gave-up')), 1, '... with its one debit');
select is(tests.balances((select a from t)), array[-30, -30]::numeric[], 'the debit takes the balance below zero: the money did leave');
select is((select sum(amount) from public.wallet_entries where driver_id = (select (a ->> 'driver_id')::uuid from t)), -30.00,
  'the ledger says so too');

select is(pg_temp.event('gave-up', 'TRANSFER_DONE', 'tra_late') ->> 'result', 'duplicate', 'the same TRANSFER_DONE again: duplicate');
select is(pg_temp.event('gave-up', 'TRANSFER_APPROVED', 'tra_late', false) ->> 'result', 'duplicate', 'TRANSFER_APPROVED by transfer id: duplicate');
select is(pg_temp.event('gave-up', 'TRANSFER_FAILED', 'tra_late') ->> 'result', 'ignored', 'TRANSFER_FAILED after the late completion: ignored');
select is((pg_temp.w('gave-up')).status, 'completed', '... it stays completed');
select is(tests.debits((select id from ids where name = 'gave-up')), 1, 'still exactly one debit');
select is(tests.balances((select a from t)), array[-30, -30]::numeric[], 'the balances did not move');

-- A TRANSFER_FAILED for a withdrawal we gave up on changes nothing; a success still completes it.
select is(pg_temp.event('gave-up-2', 'TRANSFER_FAILED', 'tra_late_2') ->> 'result', 'duplicate',
  'TRANSFER_FAILED for a withdrawal given up on: duplicate (already failed, funds released)');
select is((pg_temp.w('gave-up-2')).failure_kind || ' ' || (pg_temp.w('gave-up-2')).error_message,
  'gateway_unavailable Payment gateway unavailable: timed out', '... it is left as it was');
select is((pg_temp.w('gave-up-2')).gateway_transfer_id, null, '... without taking the transfer id');
select is(pg_temp.event('gave-up-2', 'TRANSFER_APPROVED', null) ->> 'result', 'processed',
  'TRANSFER_APPROVED by reference only completes it as TRANSFER_DONE');
select is(tests.debits((select id from ids where name = 'gave-up-2')), 1, '... with its debit');
select is(tests.balances((select a from t)), array[-40, -40]::numeric[], '... lowering the balance again');

-- Final failures stay final.
select is(pg_temp.event('rejected', 'TRANSFER_DONE', 'tra_rejected') ->> 'result', 'ignored', 'TRANSFER_DONE after a refusal: ignored');
select is(pg_temp.event('legacy-fail', 'TRANSFER_DONE', 'tra_legacy') ->> 'result', 'ignored', 'TRANSFER_DONE after a two-argument failure: ignored');
select is(pg_temp.event('transfer-failed', 'TRANSFER_DONE', null) ->> 'detail', 'withdrawal is already failed',
  'TRANSFER_DONE after TRANSFER_FAILED: ignored, saying why');
select is(tests.debits((select id from ids where name = 'rejected')) + tests.debits((select id from ids where name = 'legacy-fail')) + tests.debits((select id from ids where name = 'transfer-failed')), 0, '... no debit for any of them');

-- The table's own rules, whoever writes -------------------------------------------------

select throws_ok($$ update public.withdrawals set status = 'completed', completed_at = now() where id = (select id from ids where name = 'rejected') $$,
  'PT422', 'withdrawal cannot move from failed to completed', 'refused: gateway_rejected -> completed');
select throws_ok($$ update public.withdrawals set status = 'completed', completed_at = now() where id = (select id from ids where name = 'transfer-failed') $$,
  'PT422', 'withdrawal cannot move from failed to completed', 'refused: transfer_failed -> completed');
select throws_ok($$ update public.withdrawals set failure_kind = 'gateway_unavailable' where id = (select id from ids where name = 'rejected') $$,
  'PT422', 'a withdrawal''s failure kind is set only when it fails', 'refused: turning a refusal into a give-up');
select throws_ok($$ update public.withdrawals set failure_kind = null where id = (select id from ids where name = 'gave-up') $$,
  'PT422', 'a withdrawal''s failure kind is set only when it fails', 'refused: erasing why a completed withdrawal had failed');

select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.request_withdrawal(0.01, '12345678901', 'cpf') $$, 'PT422',
  'insufficient balance: available -40.00, requested 0.01', 'below zero, nothing more can be withdrawn');
select tests.reset_role();
select throws_ok($$ update public.withdrawals set status = 'failed' where id = (select id from ids where name = 'spent') $$,
  'PT422', 'withdrawal cannot move from completed to failed', 'refused: completed -> failed');

-- Realtime: the driver hears the late completion.
select ok(exists (select from realtime.messages m
           where m.topic = 'driver:' || (select a ->> 'driver_id' from t) and m.event = 'withdrawal_updated'
             and m.payload ->> 'id' = (select id::text from ids where name = 'gave-up')
             and m.payload ->> 'status' = 'completed'),
  'realtime: the driver hears the late completion');

select * from finish();
rollback;
