-- No full Pix key reaches a user, and the ledger and the delivery history are
-- append-only: nobody can rewrite or empty them.
begin;
select plan(10);

create temp table t as select tests.create_tenant('a') as a;
grant select on t to public;
select from t, tests.withdrawal_in(a, 'failed');
insert into public.delivery_history (delivery_id, company_id, trigger, to_status, to_payment_status)
select d.id, d.company_id, 'create', 'pending', 'invoiced' from t, tests.delivery_in(a, 'pending', 'invoice') d;

select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select pix_key from public.withdrawals $$, '42501', null, 'an owner cannot read a full Pix key from the table');
select is((select count(*)::int from public.withdrawals), 1, 'the other columns stay readable under RLS');
select is(to_jsonb(public.list_withdrawals()) -> 'items' -> 0 ->> 'pix_key', '*******8909', 'list_withdrawals shows the key masked');
select tests.reset_role();

select tests.act_as_member(a, 'driver') from t;
select is(to_jsonb(public.get_withdrawal((select id from public.withdrawals limit 1))) ->> 'pix_key', '*******8909', 'get_withdrawal: the driver sees its own, masked');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok(format('select to_jsonb(public.get_withdrawal(%L))', (select id from public.withdrawals limit 1)), 'PT404', null, 'get_withdrawal: another driver gets 404');
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
