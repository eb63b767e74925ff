-- What the hardening migration guarantees: no full Pix key to users, and a
-- ledger and delivery history that nobody can rewrite or empty.
begin;
select plan(10);

create temp table t as select tests.create_tenant('a') as a;
grant select on t to public;
insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type, status, failure_kind, error_message)
select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 1, '12345678901', 'cpf', 'failed', 'gateway_rejected', 'x' from t;
insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat, origin_lng,
  destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share)
select (a ->> 'company_id')::uuid, 'pending', 'invoiced', 'invoice', 'O', 0, 0, 'D', 0, 0, 1000, 100, 10, 0.8 from t;
insert into public.delivery_history (delivery_id, company_id, trigger, to_status, to_payment_status)
select d.id, d.company_id, 'create', 'pending', 'invoiced' from public.deliveries d join t on d.company_id = (t.a ->> 'company_id')::uuid;

select tests.act_as_user((select (a ->> 'owner')::uuid from t));
select throws_ok($$ select pix_key from public.withdrawals $$, '42501', null, 'an owner cannot read a full Pix key from the table');
select is((select count(*)::int from public.withdrawals), 1, 'the other columns stay readable under RLS');
select is(public.list_withdrawals() -> 'items' -> 0 ->> 'pix_key', '*******8901', 'list_withdrawals shows the key masked');
select tests.reset_role();

select tests.act_as_user((select (a ->> 'driver')::uuid from t));
select is(public.get_withdrawal((select id from public.withdrawals limit 1)) ->> 'pix_key', '*******8901', 'get_withdrawal: the driver sees its own, masked');
select tests.reset_role();
select tests.act_as_user((select (a ->> 'driver2')::uuid from t));
select throws_ok(format('select public.get_withdrawal(%L)', (select id from public.withdrawals limit 1)), 'PT404', null, 'get_withdrawal: another driver gets 404');
select tests.reset_role();

select throws_ok($$ truncate public.wallet_entries cascade $$, 'PT422', 'wallet entries are append-only', 'the ledger cannot be truncated');
select throws_ok($$ update public.delivery_history set to_status = 'completed' $$, 'PT422', 'delivery history is append-only', 'history cannot be rewritten');
select throws_ok($$ delete from public.delivery_history $$, 'PT422', 'delivery history is append-only', 'history cannot be deleted');
select throws_ok($$ truncate public.delivery_history $$, 'PT422', 'delivery history is append-only', 'history cannot be truncated');
select tests.act_as_service_role();
select throws_ok($$ delete from public.wallet_entries $$, '42501', null, 'the service role may not delete ledger rows');
select tests.reset_role();

select * from finish();
rollback;
