-- Withdrawals: who may request one and with what, the hold on the available
-- balance, every transition allowed and refused, who sees which withdrawal,
-- and the realtime broadcast of every change.
begin;
select plan(75);

create temp table t as select tests.create_tenant('wd-a') as a, tests.create_tenant('wd-b') as b;
create temp table ids (name text primary key, id uuid);
create temp table results (name text primary key, value jsonb);
grant all on t, ids, results to public;
-- Company A has configured the gateway; company B has not.
select tests.configure_gateway(a) from t;
select from t, tests.credit_driver(a, 100.00);
select from t, tests.credit_driver(b, 100.00);

-- Requesting ---------------------------------------------------------------------

select tests.act_as_member(a, 'driver') from t;
insert into results select 'first', to_jsonb(public.request_withdrawal(30.00, '12345678909', 'cpf'));
insert into ids select 'first', (value ->> 'id')::uuid from results where name = 'first';
select is((select value ->> 'status' from results where name = 'first'), 'processing', 'request_withdrawal: recorded processing');
select is((select (value ->> 'amount')::numeric from results where name = 'first'), 30.00, 'request_withdrawal: the amount');
select is((select value ->> 'driver_id' from results where name = 'first'), (select a ->> 'driver_id' from t), 'request_withdrawal: the caller''s withdrawal');
select is((select value ->> 'pix_key' from results where name = 'first'), '*******8909', 'request_withdrawal: the Pix key is masked');
select is((select value -> 'gateway_transfer_id' from results where name = 'first'), 'null'::jsonb, 'request_withdrawal: no transfer yet');
select is((select value -> 'completed_at' from results where name = 'first'), 'null'::jsonb, 'request_withdrawal: not completed');
select is((select value -> 'in_doubt' from results where name = 'first'), 'false'::jsonb, 'request_withdrawal: not in doubt');
select is((select value -> 'failure_kind' from results where name = 'first'), 'null'::jsonb, 'request_withdrawal: no failure kind');
select is(to_jsonb(public.get_wallet()) ->> 'available_balance', '70.00', 'request_withdrawal: the amount is held');

select throws_ok($$ select to_jsonb(public.request_withdrawal(70.01, '12345678909', 'cpf')) $$, 'PT422',
  'insufficient balance: available 70.00, requested 70.01', 'request_withdrawal: more than available is 422');
select lives_ok($$ insert into ids select 'second', (to_jsonb(public.request_withdrawal(70.00, 'driver@example.com', 'email')) ->> 'id')::uuid $$,
  'request_withdrawal: exactly the available balance is accepted');
select throws_ok($$ select to_jsonb(public.request_withdrawal(0.01, '12345678909', 'cpf')) $$, 'PT422',
  'insufficient balance: available 0.00, requested 0.01', 'request_withdrawal: nothing left to withdraw');

select throws_ok($$ select to_jsonb(public.request_withdrawal(0, '12345678909', 'cpf')) $$, 'PT400', null, 'request_withdrawal: zero is refused');
select throws_ok($$ select to_jsonb(public.request_withdrawal(-5, '12345678909', 'cpf')) $$, 'PT400', null, 'request_withdrawal: a negative amount is refused');
select throws_ok($$ select to_jsonb(public.request_withdrawal(1.005, '12345678909', 'cpf')) $$, 'PT400', null, 'request_withdrawal: fractions of a cent are refused');
select throws_ok($$ select to_jsonb(public.request_withdrawal(1, '1234567890', 'cpf')) $$, 'PT400', 'pix_key is not a valid cpf key', 'pix key: cpf of 10 digits');
select throws_ok($$ select to_jsonb(public.request_withdrawal(1, '123.456.789-01', 'cpf')) $$, 'PT400', 'pix_key is not a valid cpf key', 'pix key: a punctuated cpf with wrong check digits');
select throws_ok($$ select to_jsonb(public.request_withdrawal(1, '1234567890123', 'cnpj')) $$, 'PT400', 'pix_key is not a valid cnpj key', 'pix key: cnpj of 13 digits');
select throws_ok($$ select to_jsonb(public.request_withdrawal(1, 'driver.example.com', 'email')) $$, 'PT400', 'pix_key is not a valid email key', 'pix key: e-mail without @');
select throws_ok($$ select to_jsonb(public.request_withdrawal(1, '(11) 3333-4444', 'phone')) $$, 'PT400', 'pix_key is not a valid phone key', 'pix key: a landline (a phone key is a mobile number)');
select throws_ok($$ select to_jsonb(public.request_withdrawal(1, 'not-a-uuid', 'evp')) $$, 'PT400', 'pix_key is not a valid evp key', 'pix key: evp that is not a uuid');
select throws_ok($$ select to_jsonb(public.request_withdrawal(1, '12345678909', 'iban')) $$, 'PT400', 'pix_key is not a valid iban key', 'pix key: an unknown type');
select tests.reset_role();

-- Every key type in its valid form.
select from t, tests.credit_driver(a, 50.00, 'driver2');
select tests.act_as_member(a, 'driver2') from t;
select lives_ok($$ select to_jsonb(public.request_withdrawal(1, '12345678909', 'cpf')) $$, 'pix key: cpf of 11 digits');
select lives_ok($$ select to_jsonb(public.request_withdrawal(1, '12345678000195', 'cnpj')) $$, 'pix key: cnpj of 14 digits');
select lives_ok($$ select to_jsonb(public.request_withdrawal(1, 'Driver@Example.com', 'email')) $$, 'pix key: e-mail');
select lives_ok($$ select to_jsonb(public.request_withdrawal(1, '+5511999998888', 'phone')) $$, 'pix key: phone +55');
select lives_ok($$ select to_jsonb(public.request_withdrawal(1, '123e4567-e89b-12d3-a456-426614174000', 'evp')) $$, 'pix key: evp uuid');
select tests.reset_role();

select throws_ok($$ insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 1, 'x', 'cpf' from t $$,
  '23514', null, 'the table itself refuses a malformed key');

-- Who may request.
select tests.act_as_member(b, 'driver') from t;
select throws_ok($$ select to_jsonb(public.request_withdrawal(10, '12345678909', 'cpf')) $$, 'PT422',
  'the company has not configured the payment gateway', 'request_withdrawal: 422 without a gateway configuration');
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select to_jsonb(public.request_withdrawal(10, '12345678909', 'cpf')) $$, 'PT403', null, 'request_withdrawal: an owner is refused');
select tests.act_as_member(a, 'admin') from t;
select throws_ok($$ select to_jsonb(public.request_withdrawal(10, '12345678909', 'cpf')) $$, 'PT403', null, 'request_withdrawal: an admin is refused');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok($$ select to_jsonb(public.request_withdrawal(10, '12345678909', 'cpf')) $$, 'PT403', null, 'request_withdrawal: a legacy admin is refused');
select tests.reset_role();
select tests.act_as_anon();
select throws_ok($$ select to_jsonb(public.request_withdrawal(10, '12345678909', 'cpf')) $$, '42501', null, 'request_withdrawal: not for anon');
select tests.reset_role();

-- Only the service role attaches a transfer or fails a withdrawal.
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.attach_transfer((select id from ids where name = 'first'), 'tra_x')) $$, '42501', null, 'attach_transfer: not for a driver');
select throws_ok($$ select to_jsonb(public.fail_withdrawal((select id from ids where name = 'first'), 'no', 'gateway_rejected')) $$, '42501', null, 'fail_withdrawal: not for a driver');
select throws_ok($$ select to_jsonb(public.fail_withdrawal((select id from ids where name = 'first'), 'no', 'no_transfer')) $$, '42501', null,
  'fail_withdrawal with a kind: not for a driver');
select throws_ok($$ select to_jsonb(public.mark_transfer_in_doubt((select id from ids where name = 'first'), 'timed out')) $$, '42501', null,
  'mark_transfer_in_doubt: not for a driver');
select throws_ok($$ select public.apply_transfer_event(null, 'TRANSFER_FAILED', 'tra_x', null) $$, '42501', null, 'apply_transfer_event: not for a driver');
select throws_ok($$ update public.withdrawals set status = 'failed' $$, '42501', null, 'a driver cannot update its withdrawals directly');
select tests.reset_role();

-- Transitions ----------------------------------------------------------------------

select tests.act_as_service_role();
select is(to_jsonb(public.attach_transfer((select id from ids where name = 'first'), 'tra_wd_1')) ->> 'gateway_transfer_id', 'tra_wd_1',
  'attach_transfer: stores the gateway''s transfer id');
select is(to_jsonb(public.attach_transfer((select id from ids where name = 'first'), 'tra_wd_1')) ->> 'status', 'processing',
  'attach_transfer: the same id again changes nothing');
select throws_ok($$ select to_jsonb(public.attach_transfer((select id from ids where name = 'first'), 'tra_other')) $$, 'PT409', null,
  'attach_transfer: another transfer id is refused');
select throws_ok($$ select to_jsonb(public.attach_transfer(gen_random_uuid(), 'tra_none')) $$, 'PT404', null, 'attach_transfer: unknown withdrawal');
select is(public.apply_transfer_event(null, 'TRANSFER_DONE', 'tra_wd_1', null) ->> 'result', 'processed', 'processing -> completed');
select is(to_jsonb(public.fail_withdrawal((select id from ids where name = 'second'), 'Payment gateway refused the request: Invalid key', 'gateway_rejected')) ->> 'error_message',
  'Payment gateway refused the request: Invalid key', 'processing -> failed, with the gateway''s message');
select is(to_jsonb(public.fail_withdrawal((select id from ids where name = 'second'), 'again', 'gateway_rejected')) ->> 'error_message',
  'Payment gateway refused the request: Invalid key', 'fail_withdrawal: failing a failed withdrawal changes nothing');
select throws_ok($$ select to_jsonb(public.fail_withdrawal((select id from ids where name = 'first'), 'late', 'gateway_rejected')) $$, 'PT422',
  'withdrawal cannot move from completed to failed', 'fail_withdrawal: completed -> failed is refused');
select tests.reset_role();

select is((select status from public.withdrawals where id = (select id from ids where name = 'first')), 'completed', 'the first withdrawal is completed');
select isnt((select completed_at from public.withdrawals where id = (select id from ids where name = 'first')), null, 'with completed_at');
select is((select status from public.withdrawals where id = (select id from ids where name = 'second')), 'failed', 'the second withdrawal is failed');

-- Refused moves, whoever tries them.
select throws_ok($$ update public.withdrawals set status = 'failed', completed_at = null where id = (select id from ids where name = 'first') $$,
  'PT422', 'withdrawal cannot move from completed to failed', 'refused: completed -> failed');
select throws_ok($$ update public.withdrawals set status = 'processing', completed_at = null where id = (select id from ids where name = 'first') $$,
  'PT422', 'withdrawal cannot move from completed to processing', 'refused: completed -> processing');
-- failed -> completed is a move (the gateway reports the transfer done after a failure we
-- recorded), but never without its one debit: the ledger check refuses it at commit.
select is(tests.outcome($$ update public.withdrawals set status = 'completed', completed_at = now() where id = (select id from ids where name = 'second') $$),
  'ok', 'allowed by the state machine: failed -> completed');
set constraints public.withdrawals_completed_debited immediate;
select throws_ok($$ update public.withdrawals set status = 'completed', completed_at = now() where id = (select id from ids where name = 'second') $$,
  'PT422', 'a completed withdrawal needs its debit in the ledger', 'refused: failed -> completed without its debit');
set constraints public.withdrawals_completed_debited deferred;
select throws_ok($$ update public.withdrawals set status = 'processing' where id = (select id from ids where name = 'second') $$,
  'PT422', 'withdrawal cannot move from failed to processing', 'refused: failed -> processing');
select throws_ok($$ update public.withdrawals set amount = 1 where id = (select id from ids where name = 'second') $$,
  'PT422', 'a withdrawal''s owner, amount and Pix key cannot change', 'refused: changing the amount');
select throws_ok($$ update public.withdrawals set gateway_transfer_id = 'tra_moved' where id = (select id from ids where name = 'first') $$,
  'PT422', 'a withdrawal''s gateway transfer cannot change', 'refused: changing the transfer id');

-- Reading ----------------------------------------------------------------------------

select tests.act_as_member(a, 'driver') from t;
select is(jsonb_array_length(to_jsonb(public.list_withdrawals()) -> 'items'), 2, 'list_withdrawals: a driver lists its own');
select is((select array_agg(i ->> 'id') from jsonb_array_elements(to_jsonb(public.list_withdrawals()) -> 'items') i),
  (select array_agg(w.id::text order by w.created_at desc, w.id desc) from public.withdrawals w), 'list_withdrawals: newest first');
select is(jsonb_array_length(to_jsonb(public.list_withdrawals(1, to_jsonb(public.list_withdrawals(1)) ->> 'next_cursor')) -> 'items'), 1, 'list_withdrawals: the cursor leads on');
select is(to_jsonb(public.get_withdrawal((select id from ids where name = 'first'))) ->> 'status', 'completed', 'get_withdrawal: its own');
select is(to_jsonb(public.get_withdrawal((select id from ids where name = 'second'))) ->> 'failure_kind', 'gateway_rejected',
  'get_withdrawal: says why a withdrawal failed');
select tests.reset_role();

select tests.act_as_member(a, 'driver2') from t;
select is(jsonb_array_length(to_jsonb(public.list_withdrawals()) -> 'items'), 5, 'list_withdrawals: another driver lists only its own');
select throws_ok($$ select to_jsonb(public.get_withdrawal((select id from ids where name = 'first'))) $$, 'PT404', 'withdrawal not found', 'get_withdrawal: another driver''s is 404');
select tests.reset_role();

select tests.act_as_member(a, 'owner') from t;
select is(jsonb_array_length(to_jsonb(public.list_withdrawals()) -> 'items'), 7, 'list_withdrawals: an owner lists the company''s');
select is(to_jsonb(public.get_withdrawal((select id from ids where name = 'first'))) ->> 'id', (select id::text from ids where name = 'first'), 'get_withdrawal: an owner reads a driver''s');
select tests.act_as_member(a, 'admin') from t;
select is(jsonb_array_length(to_jsonb(public.list_withdrawals()) -> 'items'), 7, 'list_withdrawals: an admin lists the company''s');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok($$ select to_jsonb(public.list_withdrawals()) $$, 'PT403', null, 'list_withdrawals: a legacy admin is refused');
select throws_ok($$ select to_jsonb(public.get_withdrawal((select id from ids where name = 'first'))) $$, 'PT403', null, 'get_withdrawal: a legacy admin is refused');
select tests.act_as_member(b, 'owner') from t;
select is(to_jsonb(public.list_withdrawals()) -> 'items', '[]'::jsonb, 'list_withdrawals: a foreign owner sees none');
select throws_ok($$ select to_jsonb(public.get_withdrawal((select id from ids where name = 'first'))) $$, 'PT404', 'withdrawal not found', 'get_withdrawal: a foreign owner gets 404');
select tests.reset_role();

-- Realtime ---------------------------------------------------------------------------

select is((select array_agg(m.payload ->> 'status' order by m.payload ->> 'status') from realtime.messages m
           where m.topic = 'driver:' || (select a ->> 'driver_id' from t) and m.event = 'withdrawal_updated'
             and m.payload ->> 'id' = (select id::text from ids where name = 'first')),
  array['completed', 'processing', 'processing'], 'realtime: the driver hears the request, the transfer id and the completion');
select is((select count(*) from realtime.messages m
           where m.topic = 'company:' || (select a ->> 'company_id' from t) and m.event = 'withdrawal_updated'
             and m.payload ->> 'id' = (select id::text from ids where name = 'first'))::int,
  3, 'realtime: so does the company topic');
select is((select m.payload from realtime.messages m
           where m.topic = 'driver:' || (select a ->> 'driver_id' from t) and m.event = 'withdrawal_updated'
             and m.payload ->> 'status' = 'completed'),
  (select private.withdrawal_json(w) from public.withdrawals w where w.id = (select id from ids where name = 'first')),
  'realtime: the payload is the withdrawal as the API shows it');
select is_empty($$ select 1 from realtime.messages m where m.event = 'withdrawal_updated' and m.payload ->> 'pix_key' = '12345678909' $$,
  'realtime: no full Pix key is broadcast');

select * from finish();
rollback;
