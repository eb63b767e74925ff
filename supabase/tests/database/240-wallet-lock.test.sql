-- The wallet lock: every write that can lower a driver's available balance
-- takes the lock request_withdrawal takes (the drivers row, for no key update),
-- so a withdrawal is judged against every such write committed before it. Row
-- locks are not in pg_locks; pgrowlocks reads them from the row itself. The
-- foreign keys of new rows take only `For Key Share` on the driver, which the
-- wallet lock does not conflict with.
begin;
select plan(12);

create extension if not exists pgrowlocks with schema extensions;
create temp table t as select tests.create_tenant('lock-a') as a, tests.create_tenant('lock-b') as b;
create temp table ids (name text primary key, id uuid);
grant all on t, ids to public;
select tests.configure_gateway(a), tests.configure_gateway(b) from t;

-- The strongest lock this transaction holds on a driver's row, as pgrowlocks reports it.
create function pg_temp.lock_on(driver_id uuid) returns text
language sql as $$
  select coalesce((select array_to_string(r.modes, ',')
                   from extensions.pgrowlocks('public.drivers') r
                   join public.drivers d on d.ctid = r.locked_row
                   where d.id = lock_on.driver_id), 'none')
$$;

-- Driver 1 of A: a completed Pix delivery paid and credited 20.00.
select from t, tests.credit_driver(a, 20.00, method => 'pix', gateway_payment_id => 'pay_lock_a');

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

-- Driver 2 of A: a withdrawal held in doubt, then failed as no transfer found
-- (inserted, marked and failed without the lock), then its late success.
select from t, tests.credit_driver(a, 50.00, 'driver2');
insert into ids select 'given up', (tests.withdrawal_in(a, 'processing', 15.00, 'driver2')).id from t;
select tests.act_as_service_role();
select is(to_jsonb(public.mark_transfer_in_doubt((select id from ids where name = 'given up'), 'Payment gateway unavailable: HTTP 502')) ->> 'in_doubt',
  'true', 'a withdrawal in doubt');
select tests.reset_role();
select is(pg_temp.lock_on((select (a ->> 'driver2_id')::uuid from t)), 'For Key Share', '... holding its funds took no wallet lock');
select tests.act_as_service_role();
select is(to_jsonb(public.fail_withdrawal((select id from ids where name = 'given up'), 'Reconciliation: no transfer at the gateway', 'no_transfer')) ->> 'status',
  'failed', 'a withdrawal failed as no_transfer');
select tests.reset_role();
select is(pg_temp.lock_on((select (a ->> 'driver2_id')::uuid from t)), 'For Key Share', '... took no wallet lock');
select tests.act_as_service_role();
select is(public.apply_transfer_event(null, 'TRANSFER_DONE', 'tra_lock', (select id::text from ids where name = 'given up')) ->> 'result',
  'processed', 'its late TRANSFER_DONE completes it');
select tests.reset_role();
select is(pg_temp.lock_on((select (a ->> 'driver2_id')::uuid from t)), 'For No Key Update',
  'the late debit took the driver''s wallet lock');

-- And request_withdrawal takes the same lock (through the same helper).
select from t, tests.credit_driver(b, 10.00);
select tests.act_as_member(b, 'driver') from t;
select is(to_jsonb(public.request_withdrawal(5.00, '12345678909', 'cpf')) ->> 'status', 'processing', 'a withdrawal of company B''s driver');
select tests.reset_role();
select is(pg_temp.lock_on((select (b ->> 'driver_id')::uuid from t)), 'For No Key Update', 'request_withdrawal takes the wallet lock');

select * from finish();
rollback;
