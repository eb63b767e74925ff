-- The wallet ledger: balance and available balance after each kind of entry,
-- the driver's view of its ledger, and the rules that keep it append-only and
-- every debit tied to a completed withdrawal.
begin;
select plan(38);

create temp table t as select tests.create_tenant('ledger-a') as a, tests.create_tenant('ledger-b') as b;
create temp table ids (name text primary key, id uuid);
grant all on t, ids to public;
select tests.configure_gateway(a) from t;

select is(tests.balances((select a from t)), array[0, 0]::numeric[], 'a new wallet is empty');

select from t, tests.credit_driver(a, 100.00);
select is(tests.balances((select a from t)), array[100, 100]::numeric[], 'delivery credit: balance and available go up');

select from t, tests.credit_driver(a, -30.00, kind => 'credit_reversal');
select is(tests.balances((select a from t)), array[70, 70]::numeric[], 'credit reversal: both go down');

insert into ids select 'done', tests.request_withdrawal(a, 20.00) from t;
select is(tests.balances((select a from t)), array[70, 50]::numeric[], 'processing withdrawal: balance unchanged, available held back');

select tests.act_as_service_role();
select is(public.apply_transfer_event(null, 'TRANSFER_DONE', 'tra_ledger_1', (select id::text from ids where name = 'done')) ->> 'result',
  'processed', 'the withdrawal completes');
select tests.reset_role();
select is(tests.balances((select a from t)), array[50, 50]::numeric[], 'completed withdrawal: the debit lowers the balance, available unchanged');

insert into ids select 'gave-up', tests.request_withdrawal(a, 10.00) from t;
insert into ids select 'failed', tests.request_withdrawal(a, 15.00) from t;
select is(tests.balances((select a from t)), array[50, 25]::numeric[], 'two processing withdrawals hold both amounts');

select tests.act_as_service_role();
select is(to_jsonb(public.fail_withdrawal((select id from ids where name = 'gave-up'), 'Payment gateway unavailable: timed out', 'gateway_rejected')) ->> 'status',
  'failed', 'the edge fails a withdrawal the gateway did not take');
select is(public.apply_transfer_event(null, 'TRANSFER_FAILED', null, (select id::text from ids where name = 'failed')) ->> 'result',
  'processed', 'TRANSFER_FAILED fails the other');
select tests.reset_role();
select is(tests.balances((select a from t)), array[50, 50]::numeric[], 'failed withdrawals (gateway refusal, TRANSFER_FAILED) release their funds');

select is((select array_agg(kind || ' ' || amount order by created_at) from public.wallet_entries
           where driver_id = (select (a ->> 'driver_id')::uuid from t)),
  array['delivery_credit 100.00', 'credit_reversal -30.00', 'withdrawal_debit -20.00'],
  'the ledger holds one entry per credit, reversal and completed withdrawal');
select is((select sum(amount) from public.wallet_entries where driver_id = (select (a ->> 'driver_id')::uuid from t)),
  (select (private.wallet_balances((a ->> 'driver_id')::uuid)).balance from t), 'the balance is the sum of the ledger');

-- The driver's view.
select tests.act_as_member(a, 'driver') from t;
select is(to_jsonb(public.get_wallet()), jsonb_build_object('driver_id', (select a ->> 'driver_id' from t), 'balance', 50.00,
  'available_balance', 50.00, 'currency', 'BRL'), 'get_wallet: the driver''s balances in BRL');
select is(jsonb_array_length(to_jsonb(public.list_wallet_transactions()) -> 'items'), 3, 'list_wallet_transactions: all 3 entries');
select is(to_jsonb(public.list_wallet_transactions()) -> 'items' -> 0 ->> 'kind', 'withdrawal_debit', 'list_wallet_transactions: newest first');
select is(to_jsonb(public.list_wallet_transactions()) -> 'items' -> 0 ->> 'withdrawal_id', (select id::text from ids where name = 'done'),
  'list_wallet_transactions: a debit names its withdrawal');
select is(jsonb_array_length(to_jsonb(public.list_wallet_transactions(2)) -> 'items'), 2, 'list_wallet_transactions: a page of 2');
select is(jsonb_array_length(to_jsonb(public.list_wallet_transactions(2, to_jsonb(public.list_wallet_transactions(2)) ->> 'next_cursor')) -> 'items'), 1,
  'list_wallet_transactions: the cursor leads to the last entry');
select is(to_jsonb(public.list_wallet_transactions(2, to_jsonb(public.list_wallet_transactions(2)) ->> 'next_cursor')) -> 'items' -> 0 ->> 'kind',
  'delivery_credit', 'list_wallet_transactions: the oldest entry comes last');
select throws_ok($$ select to_jsonb(public.list_wallet_transactions(0)) $$, 'PT400', 'limit must be between 1 and 100', 'list_wallet_transactions: limit checked');
select throws_ok($$ select to_jsonb(public.list_wallet_transactions(20, 'nonsense')) $$, 'PT400', 'invalid cursor', 'list_wallet_transactions: cursor checked');
select is((select count(*) from public.wallet_entries)::int, 3, 'RLS: the driver reads its own entries');
select throws_ok($$ insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 'delivery_credit', 1000, (select id from ids where name = 'done') from t $$,
  '42501', null, 'a driver cannot credit itself');
select tests.reset_role();

select tests.act_as_member(a, 'driver2') from t;
select is(to_jsonb(public.get_wallet()) ->> 'balance', '0.00', 'get_wallet: another driver has its own (empty) wallet');
select is_empty($$ select 1 from public.wallet_entries $$, 'RLS: another driver sees none of the entries');
select is(to_jsonb(public.list_wallet_transactions()) -> 'items', '[]'::jsonb, 'list_wallet_transactions: another driver lists none');
select tests.reset_role();

select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select to_jsonb(public.get_wallet()) $$, 'PT403', null, 'get_wallet: an owner has no wallet');
select throws_ok($$ select to_jsonb(public.list_wallet_transactions()) $$, 'PT403', null, 'list_wallet_transactions: an owner refused');
select is_empty($$ select 1 from public.wallet_entries $$, 'RLS: the owner does not read drivers'' ledgers directly');
select tests.reset_role();

select tests.act_as_member(b, 'driver') from t;
select is_empty($$ select 1 from public.wallet_entries $$, 'RLS: a foreign driver sees nothing');
select tests.reset_role();

select tests.act_as_anon();
select throws_ok($$ select to_jsonb(public.get_wallet()) $$, '42501', null, 'get_wallet: not for anon');
select tests.reset_role();

-- Append-only, even for the service role and the superuser.
select throws_ok($$ update public.wallet_entries set amount = 1000 $$, 'PT422', 'wallet entries are append-only', 'the ledger cannot be edited');
select throws_ok($$ delete from public.wallet_entries $$, 'PT422', 'wallet entries are append-only', 'the ledger cannot be deleted from');

-- Debits only for completed withdrawals, for exactly their amount.
select throws_ok($$ insert into public.wallet_entries (company_id, driver_id, kind, amount, withdrawal_id)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 'withdrawal_debit', -10.00, (select id from ids where name = 'gave-up') from t $$,
  'PT422', 'a withdrawal debit needs its completed withdrawal and exactly its amount', 'no debit for a failed withdrawal');
select throws_ok($$ insert into public.wallet_entries (company_id, driver_id, kind, amount, withdrawal_id)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 'withdrawal_debit', -1.00, gen_random_uuid() from t $$,
  'PT422', 'a withdrawal debit needs its completed withdrawal and exactly its amount', 'no debit without a withdrawal');
select throws_ok($$ insert into public.wallet_entries (company_id, driver_id, kind, amount, withdrawal_id)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 'withdrawal_debit', -20.00, (select id from ids where name = 'done') from t $$,
  '23505', null, 'a second debit for a withdrawal is refused');

-- And no withdrawal completes without its debit.
insert into ids select 'undebited', tests.request_withdrawal(a, 5.00) from t;
set constraints public.withdrawals_completed_debited immediate;
select throws_ok($$ update public.withdrawals set status = 'completed', completed_at = now() where id = (select id from ids where name = 'undebited') $$,
  'PT422', 'a completed withdrawal needs its debit in the ledger', 'a completion without a debit does not commit');
set constraints public.withdrawals_completed_debited deferred;
select is(tests.balances((select a from t)), array[50, 45]::numeric[], 'the refused completion left the balances as they were');

select * from finish();
rollback;
