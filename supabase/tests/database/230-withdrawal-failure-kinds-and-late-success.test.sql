-- Money never leaves without a debit (docs/state-machines.md, Withdrawal): a
-- transfer request that may have reached the gateway leaves the withdrawal
-- processing and in doubt, its funds held; the funds are released only by a
-- failure that says why (gateway_rejected, transfer_failed, no_transfer); and
-- the gateway's TRANSFER_DONE / TRANSFER_APPROVED completes a withdrawal with
-- one debit after any recorded failure, even below a zero balance.
begin;
select plan(81);

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
-- mark_transfer_in_doubt as the service role (the edge after a timeout or a 5xx).
create function pg_temp.in_doubt(id uuid, message text default 'Payment gateway unavailable: HTTP 500') returns jsonb
language plpgsql as $$
declare
  outcome jsonb;
begin
  perform tests.act_as_service_role();
  outcome := to_jsonb(public.mark_transfer_in_doubt(id, message));
  perform tests.reset_role();
  return outcome;
end;
$$;

insert into ids select n, tests.request_withdrawal(a, amount)
from t, (values ('in-doubt', 30.00), ('no-transfer', 10.00), ('rejected', 20.00), ('legacy-fail', 5.00), ('transfer-failed', 10.00)) v(n, amount);
select is(tests.balances((select a from t)), array[100, 25]::numeric[], 'five processing withdrawals hold 75.00');

-- In doubt: the funds stay held ---------------------------------------------------------

insert into results select 'in-doubt', pg_temp.in_doubt((select id from ids where name = 'in-doubt'));
select is((select value ->> 'status' from results where name = 'in-doubt'), 'processing',
  'mark_transfer_in_doubt: the withdrawal stays processing');
select is((select value -> 'in_doubt' from results where name = 'in-doubt'), 'true'::jsonb, '... in doubt, as its JSON shows');
select is((pg_temp.w('in-doubt')).error_message, 'Payment gateway unavailable: HTTP 500', '... with the message');
select is((pg_temp.w('in-doubt')).failure_kind, null, '... and no failure kind');
select is(tests.balances((select a from t)), array[100, 25]::numeric[], '... its funds stay held: balance and available balance unchanged');

-- Who may mark one.
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select to_jsonb(public.mark_transfer_in_doubt((select id from ids where name = 'rejected'), 'x')) $$, '42501', null,
  'mark_transfer_in_doubt: not for an owner');
select tests.act_as_anon();
select throws_ok($$ select to_jsonb(public.mark_transfer_in_doubt((select id from ids where name = 'rejected'), 'x')) $$, '42501', null,
  'mark_transfer_in_doubt: not for anon');
select tests.reset_role();
select tests.act_as_service_role();
select throws_ok($$ select to_jsonb(public.mark_transfer_in_doubt(gen_random_uuid(), 'x')) $$, 'PT404', 'withdrawal not found',
  'mark_transfer_in_doubt: an unknown withdrawal is 404');
select tests.reset_role();

-- Only a processing withdrawal without a transfer id can be in doubt (driver 2's withdrawals).
insert into ids select v.name, (tests.withdrawal_in(a, v.status, 1.00, 'driver2', gateway_transfer_id => v.transfer)).id
from t, (values ('with transfer', 'processing', 'tra_with'), ('settled failed', 'failed', null), ('settled completed', 'completed', 'tra_done'),
  ('attached later', 'processing', null), ('reconciled', 'processing', null), ('failed by event', 'processing', null)) v(name, status, transfer);
select is(pg_temp.in_doubt((select id from ids where name = 'with transfer')) - 'updated_at',
  (select private.withdrawal_json(w) - 'updated_at' from public.withdrawals w where w.id = (select id from ids where name = 'with transfer')),
  'mark_transfer_in_doubt on a withdrawal with its transfer id: answers it as it is');
select is((pg_temp.w('with transfer')).in_doubt::text || ' ' || coalesce((pg_temp.w('with transfer')).error_message, 'no message'),
  'false no message', '... and changes nothing');
select is(pg_temp.in_doubt((select id from ids where name = 'settled failed')) ->> 'in_doubt', 'false', 'on a failed withdrawal: not in doubt');
select is((pg_temp.w('settled failed')).status || ' ' || (pg_temp.w('settled failed')).error_message,
  'failed Payment gateway refused the request', '... and left as it was');
select is(pg_temp.in_doubt((select id from ids where name = 'settled completed')) ->> 'in_doubt', 'false', 'on a completed withdrawal: not in doubt');
select is((pg_temp.w('settled completed')).status || ' ' || coalesce((pg_temp.w('settled completed')).error_message, 'no message'),
  'completed no message', '... and left as it was');
select throws_ok($$ update public.withdrawals set in_doubt = true where id = (select id from ids where name = 'settled failed') $$,
  '23514', null, 'the table refuses a failed withdrawal in doubt');
select throws_ok($$ update public.withdrawals set in_doubt = true where id = (select id from ids where name = 'settled completed') $$,
  '23514', null, '... and a completed one');

-- What ends the doubt: the transfer id, a failure, an event.
select tests.act_as_service_role();
select is(to_jsonb(public.mark_transfer_in_doubt((select id from ids where name = 'attached later'), 'timed out')) ->> 'in_doubt', 'true',
  'another withdrawal in doubt');
select is(to_jsonb(public.attach_transfer((select id from ids where name = 'attached later'), 'tra_attached')) ->> 'in_doubt', 'false',
  'attach_transfer: its transfer id ends the doubt');
select is(to_jsonb(public.mark_transfer_in_doubt((select id from ids where name = 'reconciled'), 'timed out')) ->> 'in_doubt', 'true',
  'and another');
select is(to_jsonb(public.fail_withdrawal((select id from ids where name = 'reconciled'),
  'Reconciliation: the gateway has no transfer for this withdrawal', 'no_transfer')) - 'updated_at' - 'created_at' - 'id' - 'company_id' - 'driver_id',
  '{"amount": 1.00, "pix_key": "*******8909", "pix_key_type": "cpf", "status": "failed", "in_doubt": false, "gateway_transfer_id": null,
    "error_message": "Reconciliation: the gateway has no transfer for this withdrawal", "failure_kind": "no_transfer", "completed_at": null}'::jsonb,
  'fail_withdrawal as no_transfer: failed, no longer in doubt, saying why');
select is(to_jsonb(public.mark_transfer_in_doubt((select id from ids where name = 'failed by event'), 'timed out')) ->> 'in_doubt', 'true',
  'and another');
select tests.reset_role();
select is(pg_temp.event('failed by event', 'TRANSFER_FAILED', 'tra_failed_by_event') ->> 'result', 'processed',
  'TRANSFER_FAILED for a withdrawal in doubt: processed');
select is((pg_temp.w('failed by event')).status || ' ' || (pg_temp.w('failed by event')).failure_kind || ' ' || (pg_temp.w('failed by event')).in_doubt,
  'failed transfer_failed false', '... failed as transfer_failed, no longer in doubt');

-- Failing, with the reason ---------------------------------------------------------------

select tests.act_as_service_role();
select throws_ok($$ select to_jsonb(public.fail_withdrawal((select id from ids where name = 'rejected'), 'x', 'transfer_failed')) $$,
  'PT400', 'failure_kind must be gateway_rejected or no_transfer', 'fail_withdrawal: transfer_failed is for events only');
select throws_ok($$ select to_jsonb(public.fail_withdrawal((select id from ids where name = 'rejected'), 'x', null)) $$,
  'PT400', 'failure_kind must be gateway_rejected or no_transfer', 'fail_withdrawal: a reason is required');
select throws_ok($$ select to_jsonb(public.fail_withdrawal((select id from ids where name = 'in-doubt'), 'x', 'gateway_unavailable')) $$,
  'PT400', 'failure_kind must be gateway_rejected or no_transfer',
  'fail_withdrawal: gateway_unavailable is no more (a request that may have made the transfer leaves it in doubt)');
insert into results select 'no-transfer', to_jsonb(public.fail_withdrawal((select id from ids where name = 'no-transfer'),
  'Reconciliation: the gateway has no transfer for this withdrawal', 'no_transfer'));
insert into results select 'rejected', to_jsonb(public.fail_withdrawal((select id from ids where name = 'rejected'),
  'Payment gateway refused the request: Invalid key', 'gateway_rejected'));
insert into results select 'legacy-fail', to_jsonb(public.fail_withdrawal((select id from ids where name = 'legacy-fail'), 'Some failure', 'gateway_rejected'));
select tests.reset_role();
select is((select value ->> 'status' from results where name = 'no-transfer'), 'failed', 'no_transfer: failed');
select is((pg_temp.w('no-transfer')).failure_kind, 'no_transfer', '... and says why');
select is((pg_temp.w('rejected')).failure_kind, 'gateway_rejected', 'gateway_rejected: failed and says why');
select is((pg_temp.w('legacy-fail')).failure_kind, 'gateway_rejected', 'another refusal: failed as gateway_rejected');
select hasnt_function('public', 'fail_withdrawal', array['uuid', 'text'], 'no fail_withdrawal without a kind');
select is(pg_temp.event('transfer-failed', 'TRANSFER_FAILED', null) ->> 'result', 'processed', 'TRANSFER_FAILED fails the last one');
select is((pg_temp.w('transfer-failed')).failure_kind, 'transfer_failed', '... as transfer_failed');
select is((pg_temp.w('in-doubt')).status || ' ' || (pg_temp.w('in-doubt')).in_doubt, 'processing true', 'the one in doubt is still in doubt');
select is(tests.balances((select a from t)), array[100, 70]::numeric[], 'every failure released its funds; the one in doubt holds its 30.00');

-- The driver withdraws the released funds, and that withdrawal completes.
insert into ids select 'spent', tests.request_withdrawal(a, 70.00) from t;
select is(pg_temp.event('spent', 'TRANSFER_DONE', 'tra_spent') ->> 'result', 'processed', 'the released funds are withdrawn');
select is(tests.balances((select a from t)), array[30, 0]::numeric[], 'nothing is available: the 30.00 in doubt is still held');

-- The transfer in doubt was made ----------------------------------------------------------

insert into results select 'done in doubt', pg_temp.event('in-doubt', 'TRANSFER_DONE', 'tra_in_doubt');
select is((select value ->> 'result' from results where name = 'done in doubt'), 'processed',
  'TRANSFER_DONE for the withdrawal in doubt: processed');
select is((select value ->> 'detail' from results where name = 'done in doubt'), 'withdrawal completed', '... saying so');
select is((pg_temp.w('in-doubt')).status || ' ' || (pg_temp.w('in-doubt')).in_doubt, 'completed false', '... it is completed, no longer in doubt');
select isnt((pg_temp.w('in-doubt')).completed_at, null, '... with completed_at');
select is((pg_temp.w('in-doubt')).gateway_transfer_id, 'tra_in_doubt', '... with the transfer id from the event');
select is((pg_temp.w('in-doubt')).error_message, null, '... without an error message');
select is((pg_temp.w('in-doubt')).failure_kind, null, '... and no failure kind');
select is(tests.debits((select id from ids where name = 'in-doubt')), 1, '... with its one debit');
select is(tests.balances((select a from t)), array[0, 0]::numeric[], 'the held funds paid for it: the balance is 0.00, not below');

select is(pg_temp.event('in-doubt', 'TRANSFER_DONE', 'tra_in_doubt') ->> 'result', 'duplicate', 'the same TRANSFER_DONE again: duplicate');
select is(pg_temp.event('in-doubt', 'TRANSFER_APPROVED', 'tra_in_doubt', false) ->> 'result', 'duplicate', 'TRANSFER_APPROVED by transfer id: duplicate');
insert into results select 'failed after done', pg_temp.event('in-doubt', 'TRANSFER_FAILED', 'tra_in_doubt');
select is((select value ->> 'result' from results where name = 'failed after done'), 'ignored', 'TRANSFER_FAILED after the completion: ignored');
select is((select value ->> 'detail' from results where name = 'failed after done'),
  'withdrawal is already completed; the gateway now reports TRANSFER_FAILED: left as it is for review', '... left for review');
select is((pg_temp.w('in-doubt')).status, 'completed', '... it stays completed');
select is(tests.debits((select id from ids where name = 'in-doubt')), 1, 'still exactly one debit');
select is(tests.balances((select a from t)), array[0, 0]::numeric[], 'the balances did not move');

-- The late success: a transfer made after all, whatever failure we recorded ----------------

-- A TRANSFER_FAILED for a withdrawal already failed changes nothing; a success still completes it.
select is(pg_temp.event('no-transfer', 'TRANSFER_FAILED', 'tra_late') ->> 'result', 'duplicate',
  'TRANSFER_FAILED for a withdrawal failed as no_transfer: duplicate (already failed, funds released)');
select is((pg_temp.w('no-transfer')).failure_kind || ' ' || (pg_temp.w('no-transfer')).error_message,
  'no_transfer Reconciliation: the gateway has no transfer for this withdrawal', '... it is left as it was');
select is((pg_temp.w('no-transfer')).gateway_transfer_id, null, '... without taking the transfer id');
insert into results select 'late done', pg_temp.event('no-transfer', 'TRANSFER_APPROVED', null);
select is((select value ->> 'result' from results where name = 'late done'), 'processed',
  'TRANSFER_APPROVED by reference only for a withdrawal failed as no_transfer: processed');
select is((select value ->> 'detail' from results where name = 'late done'),
  'withdrawal completed after it was recorded failed (no_transfer): the gateway made the transfer, debited now', '... saying so');
select is((pg_temp.w('no-transfer')).status, 'completed', '... it is completed');
select isnt((pg_temp.w('no-transfer')).completed_at, null, '... with completed_at');
select is((pg_temp.w('no-transfer')).failure_kind, 'no_transfer', '... keeping why it had failed');
select is(tests.debits((select id from ids where name = 'no-transfer')), 1, '... with its one debit');
select is(tests.balances((select a from t)), array[-10, -10]::numeric[], 'the debit takes the balance below zero: the money did leave');
select is((select sum(amount) from public.wallet_entries where driver_id = (select (a ->> 'driver_id')::uuid from t)), -10.00,
  'the ledger says so too');
select is(pg_temp.event('no-transfer', 'TRANSFER_APPROVED', null) ->> 'result', 'duplicate', 'the same event again: duplicate');
select is(tests.debits((select id from ids where name = 'no-transfer')), 1, 'still exactly one debit');

-- Every other failure kind too: the edge applies a DONE only when the gateway's record says so.
insert into results select 'rejected done', pg_temp.event('rejected', 'TRANSFER_DONE', 'tra_rejected');
insert into results select 'legacy done', pg_temp.event('legacy-fail', 'TRANSFER_DONE', 'tra_legacy');
insert into results select 'transfer-failed done', pg_temp.event('transfer-failed', 'TRANSFER_DONE', null);
select is((select value ->> 'detail' from results where name = 'rejected done'),
  'withdrawal completed after it was recorded failed (gateway_rejected): the gateway made the transfer, debited now',
  'TRANSFER_DONE after a refusal: completed, saying so');
select is((select value ->> 'result' from results where name = 'legacy done'), 'processed',
  'TRANSFER_DONE after a two-argument failure: processed');
select is((select value ->> 'detail' from results where name = 'transfer-failed done'),
  'withdrawal completed after it was recorded failed (transfer_failed): the gateway made the transfer, debited now',
  'TRANSFER_DONE after TRANSFER_FAILED: completed, saying so');
select is((select array_agg(w.status || ' ' || w.failure_kind order by w.amount) from public.withdrawals w
           where w.id in (select id from ids where name in ('rejected', 'legacy-fail', 'transfer-failed'))),
  array['completed gateway_rejected', 'completed transfer_failed', 'completed gateway_rejected'], '... each completed, keeping why it had failed');
select is(tests.debits((select id from ids where name = 'rejected')) + tests.debits((select id from ids where name = 'legacy-fail'))
  + tests.debits((select id from ids where name = 'transfer-failed')), 3, '... with one debit each');
select is(tests.balances((select a from t)), array[-45, -45]::numeric[], '... lowering the balance by what left');

-- The table's own rules, whoever writes -------------------------------------------------

select throws_ok($$ update public.withdrawals set failure_kind = 'no_transfer' where id = (select id from ids where name = 'settled failed') $$,
  'PT422', 'a withdrawal''s failure kind is set only when it fails', 'refused: rewriting why a withdrawal failed');
select throws_ok($$ update public.withdrawals set failure_kind = null where id = (select id from ids where name = 'no-transfer') $$,
  'PT422', 'a withdrawal''s failure kind is set only when it fails', 'refused: erasing why a completed withdrawal had failed');
select throws_ok($$ select tests.withdrawal_in(a, 'failed', failure_kind => 'gateway_unavailable') from t $$,
  '23514', null, 'refused: gateway_unavailable is not a failure kind');
select throws_ok($$ update public.withdrawals set status = 'failed', completed_at = null where id = (select id from ids where name = 'no-transfer') $$,
  'PT422', 'withdrawal cannot move from completed to failed', 'refused: a late completion failed again');

select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.request_withdrawal(0.01, '12345678909', 'cpf')) $$, 'PT422',
  'insufficient balance: available -45.00, requested 0.01', 'below zero, nothing more can be withdrawn');
select tests.reset_role();
select throws_ok($$ update public.withdrawals set status = 'failed' where id = (select id from ids where name = 'spent') $$,
  'PT422', 'withdrawal cannot move from completed to failed', 'refused: completed -> failed');

-- Realtime: the driver hears the doubt and the late completion.
select ok(exists (select from realtime.messages m
           where m.topic = 'driver:' || (select a ->> 'driver_id' from t) and m.event = 'withdrawal_updated'
             and m.payload ->> 'id' = (select id::text from ids where name = 'in-doubt')
             and m.payload ->> 'status' = 'processing' and (m.payload -> 'in_doubt')::boolean),
  'realtime: the driver hears that its withdrawal is in doubt');
select ok(exists (select from realtime.messages m
           where m.topic = 'driver:' || (select a ->> 'driver_id' from t) and m.event = 'withdrawal_updated'
             and m.payload ->> 'id' = (select id::text from ids where name = 'no-transfer')
             and m.payload ->> 'status' = 'completed'),
  'realtime: the driver hears the late completion');

select * from finish();
rollback;
