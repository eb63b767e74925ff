-- The gateway's transfer events: each TRANSFER_* event applied twice does what
-- once does; a completed withdrawal ignores a later failure, a failed one is
-- completed by a later success (the edge applies only the gateway's own record);
-- the withdrawal is found by its transfer id or by our reference, and only
-- within the given company.
begin;
select plan(50);

create temp table t as select tests.create_tenant('te-a') as a, tests.create_tenant('te-b') as b;
create temp table ids (name text primary key, id uuid);
create temp table results (name text primary key, value jsonb);
create temp table snapshots (name text primary key, balances numeric[]);
grant all on t, ids, results, snapshots to public;
select tests.configure_gateway(a), tests.configure_gateway(b) from t;

-- 100.00 for driver 1 of company A, from one completed delivery.
select from t, tests.credit_driver(a, 100.00);

-- One 10.00 withdrawal per event, each with its transfer at the gateway.
insert into ids select e, tests.request_withdrawal(a, 10.00)
from t, unnest(array['TRANSFER_DONE', 'TRANSFER_APPROVED', 'TRANSFER_FAILED', 'TRANSFER_CANCELLED']) e;
select tests.act_as_service_role();
select is((select count(*)::int from ids, lateral to_jsonb(public.attach_transfer(ids.id, 'tra_' || lower(ids.name))) r), 4,
  'four processing withdrawals with their transfer ids');
select tests.reset_role();
select is(tests.balances((select a from t)), array[100, 60]::numeric[], '40.00 held');

-- Applies `event` to its withdrawal twice, as the company webhook would, with balances around each.
create function pg_temp.twice(event text) returns void
language plpgsql as $$
begin
  insert into snapshots values (event || ' before', tests.balances((select a from t)));
  perform tests.act_as_service_role();
  insert into results select event || ' 1', public.apply_transfer_event((a ->> 'company_id')::uuid, event, 'tra_' || lower(event), null) from t;
  perform tests.reset_role();
  insert into snapshots values (event || ' once', tests.balances((select a from t)));
  perform tests.act_as_service_role();
  insert into results select event || ' 2', public.apply_transfer_event((a ->> 'company_id')::uuid, event, 'tra_' || lower(event), null) from t;
  perform tests.reset_role();
  insert into snapshots values (event || ' twice', tests.balances((select a from t)));
end;
$$;

select pg_temp.twice('TRANSFER_DONE');
select is((select value ->> 'result' from results where name = 'TRANSFER_DONE 1'), 'processed', 'TRANSFER_DONE: processed');
select is((select value ->> 'withdrawal_id' from results where name = 'TRANSFER_DONE 1'), (select id::text from ids where name = 'TRANSFER_DONE'), 'TRANSFER_DONE: names its withdrawal');
select is((select value ->> 'result' from results where name = 'TRANSFER_DONE 2'), 'duplicate', 'TRANSFER_DONE again: duplicate');
select is((select status from public.withdrawals where id = (select id from ids where name = 'TRANSFER_DONE')), 'completed', 'TRANSFER_DONE: completed');
select isnt((select completed_at from public.withdrawals where id = (select id from ids where name = 'TRANSFER_DONE')), null, 'TRANSFER_DONE: completed_at set');
select is(tests.debits((select id from ids where name = 'TRANSFER_DONE')), 1, 'TRANSFER_DONE twice: exactly one debit');
select is((select balances from snapshots where name = 'TRANSFER_DONE once'), array[90, 60]::numeric[], 'TRANSFER_DONE: balance down 10.00, available unchanged');
select is((select balances from snapshots where name = 'TRANSFER_DONE twice'), (select balances from snapshots where name = 'TRANSFER_DONE once'), 'TRANSFER_DONE twice equals once');

select pg_temp.twice('TRANSFER_APPROVED');
select is((select value ->> 'result' from results where name = 'TRANSFER_APPROVED 1'), 'processed', 'TRANSFER_APPROVED: processed');
select is((select value ->> 'result' from results where name = 'TRANSFER_APPROVED 2'), 'duplicate', 'TRANSFER_APPROVED again: duplicate');
select is((select status from public.withdrawals where id = (select id from ids where name = 'TRANSFER_APPROVED')), 'completed', 'TRANSFER_APPROVED: completed, as TRANSFER_DONE');
select is(tests.debits((select id from ids where name = 'TRANSFER_APPROVED')), 1, 'TRANSFER_APPROVED twice: exactly one debit');
select is((select balances from snapshots where name = 'TRANSFER_APPROVED once'), array[80, 60]::numeric[], 'TRANSFER_APPROVED: balance down 10.00');
select is((select balances from snapshots where name = 'TRANSFER_APPROVED twice'), (select balances from snapshots where name = 'TRANSFER_APPROVED once'), 'TRANSFER_APPROVED twice equals once');

select pg_temp.twice('TRANSFER_FAILED');
select is((select value ->> 'result' from results where name = 'TRANSFER_FAILED 1'), 'processed', 'TRANSFER_FAILED: processed');
select is((select value ->> 'result' from results where name = 'TRANSFER_FAILED 2'), 'duplicate', 'TRANSFER_FAILED again: duplicate');
select is((select status || ' ' || error_message from public.withdrawals where id = (select id from ids where name = 'TRANSFER_FAILED')),
  'failed TRANSFER_FAILED', 'TRANSFER_FAILED: failed, error_message is the event name');
select is(tests.debits((select id from ids where name = 'TRANSFER_FAILED')), 0, 'TRANSFER_FAILED: no debit');
select is((select balances from snapshots where name = 'TRANSFER_FAILED once'), array[80, 70]::numeric[], 'TRANSFER_FAILED: balance unchanged, the hold released');
select is((select balances from snapshots where name = 'TRANSFER_FAILED twice'), (select balances from snapshots where name = 'TRANSFER_FAILED once'), 'TRANSFER_FAILED twice equals once');

select pg_temp.twice('TRANSFER_CANCELLED');
select is((select value ->> 'result' from results where name = 'TRANSFER_CANCELLED 1'), 'processed', 'TRANSFER_CANCELLED: processed');
select is((select value ->> 'result' from results where name = 'TRANSFER_CANCELLED 2'), 'duplicate', 'TRANSFER_CANCELLED again: duplicate');
select is((select status || ' ' || error_message from public.withdrawals where id = (select id from ids where name = 'TRANSFER_CANCELLED')),
  'failed TRANSFER_CANCELLED', 'TRANSFER_CANCELLED: failed as TRANSFER_FAILED, error_message is the event name');
select is(tests.debits((select id from ids where name = 'TRANSFER_CANCELLED')), 0, 'TRANSFER_CANCELLED: no debit');
select is((select balances from snapshots where name = 'TRANSFER_CANCELLED once'), array[80, 80]::numeric[], 'TRANSFER_CANCELLED: balance unchanged, the hold released');
select is((select balances from snapshots where name = 'TRANSFER_CANCELLED twice'), (select balances from snapshots where name = 'TRANSFER_CANCELLED once'), 'TRANSFER_CANCELLED twice equals once');

-- A completed withdrawal ignores a later failure; a failed one is completed by a later success.
select tests.act_as_service_role();
insert into results select 'failed after done', public.apply_transfer_event(null, 'TRANSFER_FAILED', 'tra_transfer_done', null);
insert into results select 'done after failed', public.apply_transfer_event(null, 'TRANSFER_DONE', 'tra_transfer_failed', null);
insert into results select 'approved after done', public.apply_transfer_event(null, 'TRANSFER_APPROVED', 'tra_transfer_done', null);
select tests.reset_role();
select is((select value ->> 'result' from results where name = 'failed after done'), 'ignored', 'TRANSFER_FAILED on a completed withdrawal: ignored');
select is((select value ->> 'detail' from results where name = 'failed after done'),
  'withdrawal is already completed; the gateway now reports TRANSFER_FAILED: left as it is for review', '... saying why');
select is((select status from public.withdrawals where id = (select id from ids where name = 'TRANSFER_DONE')), 'completed', '... it stays completed');
select is((select value ->> 'result' from results where name = 'done after failed'), 'processed', 'TRANSFER_DONE on a failed withdrawal: processed');
select is((select status || ' ' || failure_kind from public.withdrawals where id = (select id from ids where name = 'TRANSFER_FAILED')),
  'completed transfer_failed', '... it is completed, keeping why it had failed');
select is(tests.debits((select id from ids where name = 'TRANSFER_FAILED')), 1, '... and debits it exactly once');
select is((select value ->> 'result' from results where name = 'approved after done'), 'duplicate', 'TRANSFER_APPROVED after TRANSFER_DONE: a duplicate of the same outcome');
select is(tests.balances((select a from t)), array[70, 70]::numeric[], 'only the late completion moved the balances: 10.00 debited');

-- Finding the withdrawal ------------------------------------------------------------

insert into ids select 'overtaken', tests.request_withdrawal(a, 5.00) from t;
insert into ids select 'scoped', tests.request_withdrawal(a, 5.00) from t;

-- The event overtakes attach_transfer: found by externalReference, and the late attach undoes nothing.
select tests.act_as_service_role();
insert into results select 'overtaking', public.apply_transfer_event((a ->> 'company_id')::uuid, 'TRANSFER_DONE', 'tra_late',
  (select id::text from ids where name = 'overtaken')) from t;
insert into results select 'late attach', to_jsonb(public.attach_transfer((select id from ids where name = 'overtaken'), 'tra_late'));
select tests.reset_role();
select is((select value ->> 'result' from results where name = 'overtaking'), 'processed', 'an event before attach_transfer is found by externalReference');
select is((select gateway_transfer_id from public.withdrawals where id = (select id from ids where name = 'overtaken')), 'tra_late', '... and records the transfer id');
select is((select value ->> 'status' from results where name = 'late attach'), 'completed', 'the late attach_transfer leaves it completed');
select is(tests.debits((select id from ids where name = 'overtaken')), 1, '... with its one debit');

-- Another company's webhook cannot touch it, by transfer id or by reference.
select tests.act_as_service_role();
select is(to_jsonb(public.attach_transfer((select id from ids where name = 'scoped'), 'tra_scoped')) ->> 'status', 'processing', 'a processing withdrawal with its transfer');
insert into results select 'foreign by id', public.apply_transfer_event((b ->> 'company_id')::uuid, 'TRANSFER_DONE', 'tra_scoped', null) from t;
insert into results select 'foreign by reference', public.apply_transfer_event((b ->> 'company_id')::uuid, 'TRANSFER_FAILED', null,
  (select id::text from ids where name = 'scoped')) from t;
insert into results select 'wrong transfer', public.apply_transfer_event((a ->> 'company_id')::uuid, 'TRANSFER_FAILED', 'tra_someone_else',
  (select id::text from ids where name = 'scoped')) from t;
insert into results select 'unknown transfer', public.apply_transfer_event((a ->> 'company_id')::uuid, 'TRANSFER_DONE', 'tra_unknown', 'not-a-uuid') from t;
insert into results select 'unknown event', public.apply_transfer_event((a ->> 'company_id')::uuid, 'TRANSFER_CREATED', 'tra_scoped', null) from t;
select tests.reset_role();
select is((select value ->> 'result' from results where name = 'foreign by id'), 'ignored', 'another company''s event, by transfer id: ignored');
select is((select value ->> 'detail' from results where name = 'foreign by id'), 'no such withdrawal', '... as if there were no such withdrawal');
select is((select value ->> 'result' from results where name = 'foreign by reference'), 'ignored', 'another company''s event, by reference: ignored');
select is((select value ->> 'result' from results where name = 'wrong transfer'), 'ignored', 'a reference with a transfer id not the withdrawal''s: ignored');
select is((select status from public.withdrawals where id = (select id from ids where name = 'scoped')), 'processing', '... the withdrawal is untouched');
select is((select value ->> 'result' from results where name = 'unknown transfer'), 'ignored', 'an unknown transfer (and a reference that is no uuid): ignored');
select is((select value ->> 'result' from results where name = 'unknown event'), 'ignored', 'an event that is not a transfer outcome: ignored');
select is(tests.balances((select a from t)), array[65, 60]::numeric[], 'nothing but the overtaken withdrawal moved the balances');

-- What left the wallet is exactly what the completed withdrawals took.
select is((select sum(amount) from public.wallet_entries where kind = 'withdrawal_debit'),
  (select -sum(amount) from public.withdrawals where status = 'completed'), 'the debits equal the completed withdrawals');

select * from finish();
rollback;
