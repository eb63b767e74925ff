-- Withdrawals whose request died mid-flight: public.expire_stale_withdrawals
-- fails the processing ones older than the interval that never got a transfer
-- id, as gateway_unavailable (funds released; a late TRANSFER_DONE still
-- completes them), and touches nothing else. For the service role (a scheduled job).
begin;
select plan(21);

create temp table t as select tests.create_tenant('stale-a') as a;
create temp table ids (name text primary key, id uuid);
grant all on t, ids to public;
insert into private.gateway_configs (company_id, api_key_ciphertext, webhook_secret_ciphertext, environment)
select (a ->> 'company_id')::uuid, 'v1.key', 'v1.secret', 'sandbox' from t;

with delivery as (
  insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat, origin_lng,
    destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share, driver_id,
    accepted_at, started_at, completed_at)
  select (a ->> 'company_id')::uuid, 'completed', 'invoiced', 'invoice', 'Origin', 0, 0, 'Destination', 0, 0, 1000, 100,
    100.00, 1, (a ->> 'driver_id')::uuid, now(), now(), now()
  from t
  returning id, company_id, driver_id
)
insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
select company_id, driver_id, 'delivery_credit', 100.00, id from delivery;

-- Withdrawals of various ages, as requests long gone would have left them.
with w as (
  insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type, status, gateway_transfer_id,
    failure_kind, error_message, created_at)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, v.amount, '12345678901', 'cpf', v.status, v.transfer,
    v.kind, v.message, now() - v.age
  from t, (values
    ('stale', 10.00, 'processing', null, null, null, interval '2 hours'),
    ('stale with transfer', 20.00, 'processing', 'tra_stale', null, null, interval '2 hours'),
    ('recent', 5.00, 'processing', null, null, null, interval '10 minutes'),
    ('old failure', 7.00, 'failed', null, 'gateway_rejected', 'Payment gateway refused the request: no', interval '3 hours')
  ) v(name, amount, status, transfer, kind, message, age)
  returning id, amount
)
insert into ids select case amount when 10 then 'stale' when 20 then 'stale with transfer' when 5 then 'recent' else 'old failure' end, id from w;

create function pg_temp.balances() returns numeric[]
language sql as $$
  select array[b.balance, b.available_balance] from t, private.wallet_balances((t.a ->> 'driver_id')::uuid) b
$$;
create function pg_temp.w(name text) returns public.withdrawals
language sql as $$ select * from public.withdrawals where id = (select id from ids where ids.name = w.name) $$;

select is(pg_temp.balances(), array[100, 65]::numeric[], 'three processing withdrawals hold 35.00');

-- Who may call it.
select tests.act_as_user((select (a ->> 'driver')::uuid from t));
select throws_ok($$ select public.expire_stale_withdrawals() $$, '42501', null, 'not a driver');
select tests.reset_role();
select tests.act_as_user((select (a ->> 'owner')::uuid from t));
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
select is(pg_temp.balances(), array[100, 75]::numeric[], 'the stale withdrawal''s funds are released');
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
select is(pg_temp.balances(), array[90, 70]::numeric[], '... and its debit');

select * from finish();
rollback;
