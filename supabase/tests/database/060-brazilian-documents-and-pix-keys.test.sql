-- Brazilian documents and Pix keys (supabase/schemas/01_brazil.sql): a CPF or
-- CNPJ with or without its punctuation, its check digits verified, one
-- repeated digit refused, stored as digits; a mobile number typed any usual way
-- stored as E.164; every Pix key type through public.request_withdrawal and the
-- table's own constraint; the gateway customers keyed by the document's digits.
begin;
select plan(64);

-- CPF -------------------------------------------------------------------------------

select ok(private.cpf_valid('52998224725'), 'cpf: valid, digits only');
select ok(private.cpf_valid('529.982.247-25'), 'cpf: valid, punctuated');
select ok(private.cpf_valid(' 529 982 247 25 '), 'cpf: valid, spaced');
select ok(private.cpf_valid('529/982/247.25'), 'cpf: valid, any of the usual separators');
select ok(not private.cpf_valid('529.982.247-26'), 'cpf: a wrong second check digit');
select ok(not private.cpf_valid('529.982.247-15'), 'cpf: a wrong first check digit');
select ok(not private.cpf_valid('111.111.111-11'), 'cpf: one repeated digit, though its check digits add up');
select ok(not private.cpf_valid('00000000000'), 'cpf: zeros');
select ok(not private.cpf_valid('5299822472'), 'cpf: 10 digits');
select ok(not private.cpf_valid('529982247250'), 'cpf: 12 digits');
select ok(not private.cpf_valid('529.982.247-2a'), 'cpf: a letter');
select ok(not private.cpf_valid('5299.82.247-25'), 'cpf: punctuation out of place');
select ok(not private.cpf_valid(null), 'cpf: null');

-- CNPJ ------------------------------------------------------------------------------

select ok(private.cnpj_valid('11222333000181'), 'cnpj: valid, digits only');
select ok(private.cnpj_valid('11.222.333/0001-81'), 'cnpj: valid, punctuated');
select ok(not private.cnpj_valid('11.222.333/0001-82'), 'cnpj: a wrong second check digit');
select ok(not private.cnpj_valid('11222333000171'), 'cnpj: a wrong first check digit');
select ok(not private.cnpj_valid('11.111.111/1111-11'), 'cnpj: one repeated digit');
select ok(not private.cnpj_valid('00000000000000'), 'cnpj: zeros');
select ok(not private.cnpj_valid('52998224725'), 'cnpj: a CPF is not a CNPJ');
select ok(not private.cnpj_valid(null), 'cnpj: null');

-- Documents as stored -----------------------------------------------------------------

select is(private.normalize_document('529.982.247-25'), '52998224725', 'document: a CPF as its digits');
select is(private.normalize_document('11.222.333/0001-81'), '11222333000181', 'document: a CNPJ as its digits');
select is(private.normalize_document('111.111.111-11'), null, 'document: one repeated digit is no document');
select is(private.normalize_document('12345678901'), null, 'document: wrong check digits are no document');
select is(private.normalize_document('123'), null, 'document: 3 digits are no document');

-- Mobile numbers ----------------------------------------------------------------------

select is(private.mobile_phone_e164('(11) 98888-7777'), '+5511988887777', 'phone: (11) 98888-7777');
select is(private.mobile_phone_e164('11988887777'), '+5511988887777', 'phone: 11988887777');
select is(private.mobile_phone_e164('+55 11 98888-7777'), '+5511988887777', 'phone: +55 11 98888-7777');
select is(private.mobile_phone_e164('+5511988887777'), '+5511988887777', 'phone: E.164 as it is');
select is(private.mobile_phone_e164('0055 11 98888-7777'), '+5511988887777', 'phone: 0055 before it');
select is(private.mobile_phone_e164('(21) 99876-5432'), '+5521998765432', 'phone: another area code');
select is(private.mobile_phone_e164('(11) 3333-4444'), null, 'phone: a landline is not a mobile number');
select is(private.mobile_phone_e164('(20) 98888-7777'), null, 'phone: no area code 20');
select is(private.mobile_phone_e164('98888-7777'), null, 'phone: no area code');
select is(private.mobile_phone_e164('1198888777a7'), null, 'phone: a letter');

-- Pix keys ----------------------------------------------------------------------------

select is(private.normalize_pix_key('529.982.247-25', 'cpf'), '52998224725', 'pix key: a punctuated cpf as digits');
select is(private.normalize_pix_key('11111111111', 'cpf'), null, 'pix key: cpf 11111111111 refused');
select is(private.normalize_pix_key('11.222.333/0001-81', 'cpf'), null, 'pix key: a cnpj is not a cpf key');
select is(private.normalize_pix_key('11.222.333/0001-81', 'cnpj'), '11222333000181', 'pix key: a punctuated cnpj as digits');
select is(private.normalize_pix_key('52998224725', 'cnpj'), null, 'pix key: a cpf is not a cnpj key');
select is(private.normalize_pix_key('(11) 98888-7777', 'phone'), '+5511988887777', 'pix key: a phone as E.164');
select is(private.normalize_pix_key(' Driver@Example.COM ', 'email'), 'driver@example.com', 'pix key: an e-mail trimmed and lowercase');
select is(private.normalize_pix_key('driver.example.com', 'email'), null, 'pix key: an e-mail without @');
select is(private.normalize_pix_key('123E4567-E89B-12D3-A456-426614174000', 'evp'), '123e4567-e89b-12d3-a456-426614174000', 'pix key: an evp lowercase');
select is(private.normalize_pix_key('123e4567', 'evp'), null, 'pix key: an evp that is not a uuid');
select is(private.normalize_pix_key('52998224725', 'iban'), null, 'pix key: an unknown type');

-- Through request_withdrawal: stored in the canonical form ------------------------------

create temp table t as select tests.create_tenant('br') as a;
grant select on t to public;
select tests.configure_gateway(a) from t;
select from t, tests.credit_driver(a, 100.00);

create temp table made (name text primary key, id uuid);
grant all on made to public;
select tests.act_as_member(a, 'driver') from t;
insert into made select 'cpf', (to_jsonb(public.request_withdrawal(1, '529.982.247-25', 'cpf')) ->> 'id')::uuid;
insert into made select 'cnpj', (to_jsonb(public.request_withdrawal(1, '11.222.333/0001-81', 'cnpj')) ->> 'id')::uuid;
insert into made select 'phone', (to_jsonb(public.request_withdrawal(1, '+55 11 98888-7777', 'phone')) ->> 'id')::uuid;
insert into made select 'email', (to_jsonb(public.request_withdrawal(1, 'Driver@Example.com', 'email')) ->> 'id')::uuid;
select throws_ok($$ select public.request_withdrawal(1, '11111111111', 'cpf') $$, 'PT400', 'pix_key is not a valid cpf key',
  'request_withdrawal: cpf 11111111111 is refused');
select throws_ok($$ select public.request_withdrawal(1, '529.982.247-26', 'cpf') $$, 'PT400', 'pix_key is not a valid cpf key',
  'request_withdrawal: a cpf with a wrong check digit is refused');
select throws_ok($$ select public.request_withdrawal(1, '(11) 98888-777', 'phone') $$, 'PT400', 'pix_key is not a valid phone key',
  'request_withdrawal: a phone short of a digit is refused');
select tests.reset_role();

select is((select w.pix_key from public.withdrawals w join made m on m.id = w.id where m.name = 'cpf'), '52998224725',
  'request_withdrawal: 529.982.247-25 is stored as digits');
select is((select w.pix_key from public.withdrawals w join made m on m.id = w.id where m.name = 'cnpj'), '11222333000181',
  'request_withdrawal: a punctuated cnpj is stored as digits');
select is((select w.pix_key from public.withdrawals w join made m on m.id = w.id where m.name = 'phone'), '+5511988887777',
  'request_withdrawal: +55 11 98888-7777 is stored as E.164');
select is((select w.pix_key from public.withdrawals w join made m on m.id = w.id where m.name = 'email'), 'driver@example.com',
  'request_withdrawal: an e-mail is stored lowercase');
select is((select count(*)::int from public.withdrawals w where w.company_id = (select (a ->> 'company_id')::uuid from t)), 4,
  'request_withdrawal: nothing was recorded for a refused key');

-- The table refuses any key not in its canonical form, whoever writes it.
select throws_ok($$ insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 1, '529.982.247-25', 'cpf' from t $$,
  '23514', null, 'the table refuses a punctuated cpf');
select throws_ok($$ insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 1, '11111111111', 'cpf' from t $$,
  '23514', null, 'the table refuses cpf 11111111111');
select throws_ok($$ insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 1, '11988887777', 'phone' from t $$,
  '23514', null, 'the table refuses a phone key without +55');
select throws_ok($$ insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 1, 'Driver@Example.com', 'email' from t $$,
  '23514', null, 'the table refuses an e-mail key in capitals');
select lives_ok($$ insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type)
  select (a ->> 'company_id')::uuid, (a ->> 'driver_id')::uuid, 1, '+5521998765432', 'phone' from t $$,
  'the table takes a key in its canonical form');

-- Gateway customers: one per document, whichever way it was typed ------------------------

select tests.act_as_service_role();
select lives_ok($$ select private.remember_gateway_customer((select (a ->> 'company_id')::uuid from t), '529.982.247-25', 'cus_br_1') $$,
  'remember_gateway_customer: a punctuated cpf');
select is(private.gateway_customer_id((select (a ->> 'company_id')::uuid from t), '52998224725'), 'cus_br_1',
  'gateway_customer_id: found by its digits');
select is(private.gateway_customer_id((select (a ->> 'company_id')::uuid from t), '529 982 247 25'), 'cus_br_1',
  'gateway_customer_id: found however it is typed');
select throws_ok($$ select private.remember_gateway_customer((select (a ->> 'company_id')::uuid from t), '111.111.111-11', 'cus_br_2') $$,
  'PT400', 'customer.document must be a valid CPF or CNPJ', 'remember_gateway_customer: refuses cpf 111.111.111-11');
select tests.reset_role();

select * from finish();
rollback;
