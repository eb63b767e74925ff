-- The wallet lock: every write that can lower a driver's available balance
-- takes the lock request_withdrawal takes (the drivers row, for no key update),
-- so a withdrawal is judged against every such write committed before it. Row
-- locks are not in pg_locks; pgrowlocks reads them from the row itself. The
-- foreign keys of new rows take only `For Key Share` on the driver, which the
-- wallet lock does not conflict with.
begin;
select plan(10);

create extension if not exists pgrowlocks with schema extensions;
create temp table t as select tests.create_tenant('lock-a') as a, tests.create_tenant('lock-b') as b;
create temp table ids (name text primary key, id uuid);
grant all on t, ids to public;
insert into private.gateway_configs (company_id, api_key_ciphertext, webhook_secret_ciphertext, environment)
select (x ->> 'company_id')::uuid, 'v1.key', 'v1.secret', 'sandbox' from t, lateral (values (a), (b)) v(x);

-- The strongest lock this transaction holds on a driver's row, as pgrowlocks reports it.
create function pg_temp.lock_on(driver_id uuid) returns text
language sql as $$
  select coalesce((select array_to_string(r.modes, ',')
                   from extensions.pgrowlocks('public.drivers') r
                   join public.drivers d on d.ctid = r.locked_row
                   where d.id = lock_on.driver_id), 'none')
$$;

-- Driver 1 of A: a completed Pix delivery paid and credited 20.00.
with delivery as (
  insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat, origin_lng,
    destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share, driver_id,
    gateway_payment_id, accepted_at, started_at, completed_at)
  select (a ->> 'company_id')::uuid, 'completed', 'received', 'pix', 'Origin', 0, 0, 'Destination', 0, 0, 1000, 100,
    20.00, 1, (a ->> 'driver_id')::uuid, 'pay_lock_a', now(), now(), now()
  from t
  returning id, company_id, driver_id
)
insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
select company_id, driver_id, 'delivery_credit', 20.00, id from delivery;

select is(pg_temp.lock_on((select (a ->> 'driver_id')::uuid from t)), 'For Key Share',
  'before the refund: only the foreign keys'' key-share lock on the driver');
select tests.act_as_service_role();
select is(public.apply_payment_event((select (a ->> 'company_id')::uuid from t), 'PAYMENT_REFUNDED', 'pay_lock_a', null) ->> 'result',
  'processed', 'the refund of a completed delivery is applied');
select tests.reset_role();
select is((select amount from public.wallet_entries where kind = 'credit_reversal'
           and driver_id = (select (a ->> 'driver_id')::uuid from t)), -20.00, '... reversing the credit');
select is(pg_temp.lock_on((select (a ->> 'driver_id')::uuid from t)), 'For No Key Update',
  'the reversal took the driver''s wallet lock');

-- Driver 2 of A: a withdrawal we gave up on (inserted and failed without the lock), then its late success.
with delivery as (
  insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat, origin_lng,
    destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share, driver_id,
    accepted_at, started_at, completed_at)
  select (a ->> 'company_id')::uuid, 'completed', 'invoiced', 'invoice', 'Origin', 0, 0, 'Destination', 0, 0, 1000, 100,
    50.00, 1, (a ->> 'driver2_id')::uuid, now(), now(), now()
  from t
  returning id, company_id, driver_id
)
insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
select company_id, driver_id, 'delivery_credit', 50.00, id from delivery;
with w as (
  insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type)
  select (a ->> 'company_id')::uuid, (a ->> 'driver2_id')::uuid, 15.00, '12345678901', 'cpf' from t
  returning id
)
insert into ids select 'given up', id from w;
select tests.act_as_service_role();
select is(public.fail_withdrawal((select id from ids where name = 'given up'), 'Payment gateway unavailable: HTTP 502', 'gateway_unavailable') ->> 'status',
  'failed', 'a withdrawal given up on');
select tests.reset_role();
select is(pg_temp.lock_on((select (a ->> 'driver2_id')::uuid from t)), 'For Key Share', '... took no wallet lock');
select tests.act_as_service_role();
select is(public.apply_transfer_event(null, 'TRANSFER_DONE', 'tra_lock', (select id::text from ids where name = 'given up')) ->> 'result',
  'processed', 'its late TRANSFER_DONE completes it');
select tests.reset_role();
select is(pg_temp.lock_on((select (a ->> 'driver2_id')::uuid from t)), 'For No Key Update',
  'the late debit took the driver''s wallet lock');

-- And request_withdrawal takes the same lock (through the same helper).
with delivery as (
  insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat, origin_lng,
    destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share, driver_id,
    accepted_at, started_at, completed_at)
  select (b ->> 'company_id')::uuid, 'completed', 'invoiced', 'invoice', 'Origin', 0, 0, 'Destination', 0, 0, 1000, 100,
    10.00, 1, (b ->> 'driver_id')::uuid, now(), now(), now()
  from t
  returning id, company_id, driver_id
)
insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
select company_id, driver_id, 'delivery_credit', 10.00, id from delivery;
select tests.act_as_user((select (b ->> 'driver')::uuid from t));
select is(public.request_withdrawal(5.00, '12345678901', 'cpf') ->> 'status', 'processing', 'a withdrawal of company B''s driver');
select tests.reset_role();
select is(pg_temp.lock_on((select (b ->> 'driver_id')::uuid from t)), 'For No Key Update', 'request_withdrawal takes the wallet lock');

select * from finish();
rollback;
