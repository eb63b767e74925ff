-- Withdrawals whose request died mid-flight: public.expire_stale_withdrawals
-- fails the processing ones older than the interval that never got a transfer
-- id, as gateway_unavailable (funds released; a late TRANSFER_DONE still
-- completes them), and touches nothing else. For the service role (a scheduled job).
begin;
select plan(21);

create temp table t as select tests.create_tenant('stale-a') as a;
create temp table ids (name text primary key, id uuid);
grant all on t, ids to public;
select tests.configure_gateway(a) from t;

select from t, tests.credit_driver(a, 100.00);

-- Withdrawals of various ages, as requests long gone would have left them.
insert into ids
select v.name, (tests.withdrawal_in(a, v.status, v.amount, gateway_transfer_id => v.transfer, failure_kind => v.kind,
  error_message => v.message, created_at => now() - v.age)).id
from t, (values
  ('stale', 10.00, 'processing', null, null, null, interval '2 hours'),
  ('stale with transfer', 20.00, 'processing', 'tra_stale', null, null, interval '2 hours'),
  ('recent', 5.00, 'processing', null, null, null, interval '10 minutes'),
  ('old failure', 7.00, 'failed', null, 'gateway_rejected', 'Payment gateway refused the request: no', interval '3 hours')
) v(name, amount, status, transfer, kind, message, age);

create function pg_temp.w(name text) returns public.withdrawals
language sql as $$ select * from public.withdrawals where id = (select id from ids where ids.name = w.name) $$;

select is(tests.balances((select a from t)), array[100, 65]::numeric[], 'three processing withdrawals hold 35.00');

-- Who may call it.
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.expire_stale_withdrawals() $$, '42501', null, 'not a driver');
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select public.expire_stale_withdrawals() $$, '42501', null, 'not an owner');
select tests.reset_role();
select tests.act_as_anon();
select throws_ok($$ select public.expire_stale_withdrawals() $$, '42501', null, 'not anon');
select tests.reset_role();

select tests.act_as_service_role();
select throws_ok($$ select public.expire_stale_withdrawals(interval '30 seconds') $$, 'PT400', 'older_than must be at least 1 minute',
  'an interval shorter than a gateway request could still be waiting is refused');
select throws_ok($$ select public.expire_stale_withdrawals(null) $$, 'PT400', 'older_than must be at least 1 minute', 'so is none');
select is(public.expire_stale_withdrawals(), 1, 'by default, processing withdrawals without a transfer older than 1 hour: one');
select tests.reset_role();

select is((pg_temp.w('stale')).status, 'failed', 'the stale withdrawal is failed');
select is((pg_temp.w('stale')).failure_kind, 'gateway_unavailable', '... as gateway_unavailable');
select is((pg_temp.w('stale')).error_message, 'Payment gateway unavailable: no transfer recorded within 01:00:00', '... saying why');
select is((pg_temp.w('stale with transfer')).status, 'processing', 'one with a transfer id is left to the transfer''s events');
select is((pg_temp.w('recent')).status, 'processing', 'a recent one is left alone');
select is((pg_temp.w('old failure')).failure_kind || ' ' || (pg_temp.w('old failure')).status, 'gateway_rejected failed',
  'a settled one is left alone');
select is(tests.balances((select a from t)), array[100, 75]::numeric[], 'the stale withdrawal''s funds are released');
select ok(exists (select from realtime.messages m
           where m.topic = 'driver:' || (select a ->> 'driver_id' from t) and m.event = 'withdrawal_updated'
             and m.payload ->> 'id' = (select id::text from ids where name = 'stale') and m.payload ->> 'status' = 'failed'),
  'the driver hears of it');

select tests.act_as_service_role();
select is(public.expire_stale_withdrawals(), 0, 'running it again expires nothing more');
select is(public.expire_stale_withdrawals(interval '5 minutes'), 1, 'a shorter interval reaches the recent one');
select tests.reset_role();
select is((pg_temp.w('recent')).status, 'failed', '... now failed too');

-- The gateway did make the stale withdrawal's transfer after all: its success still debits it.
select tests.act_as_service_role();
select is(public.apply_transfer_event(null, 'TRANSFER_DONE', 'tra_found', (select id::text from ids where name = 'stale')) ->> 'result',
  'processed', 'a late TRANSFER_DONE for an expired withdrawal completes it');
select tests.reset_role();
select is((pg_temp.w('stale')).status || ' ' || (pg_temp.w('stale')).gateway_transfer_id, 'completed tra_found', '... with its transfer');
select is(tests.balances((select a from t)), array[90, 70]::numeric[], '... and its debit');

select * from finish();
rollback;
