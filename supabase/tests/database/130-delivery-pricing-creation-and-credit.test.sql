-- Prices and quotes, creation (Pix and invoice, for a given driver), the
-- gateway customer cache, and the driver's credit on completion with its
-- reversal on refund.
begin;
select plan(44);

create temp table t as select tests.create_tenant('create-a') as a, tests.create_tenant('create-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;

create function pg_temp.company(tenant text default 'a') returns uuid
language sql as $$ select (case company.tenant when 'a' then a else b end ->> 'company_id')::uuid from t $$;
grant execute on function pg_temp.company(text) to public;

-- Creates a delivery of company A as the edge does (service role), over `metres`.
create function pg_temp.new_delivery(method text, metres numeric, driver uuid default null, charged numeric default null) returns jsonb
language sql as $$
  select to_jsonb(public.create_delivery(gen_random_uuid(), pg_temp.company(), (select (a ->> 'owner')::uuid from t), new_delivery.method,
    ' Rua A, 1 ', -23.55, -46.63, 'Rua B, 2', -23.56, -46.64, new_delivery.metres, 321.6,
    recipient_name => 'Ana', recipient_phone => '+55 11 99999-0000', notes => 'ring twice', driver_id => new_delivery.driver,
    charged_price => new_delivery.charged,
    gateway_payment_id => case when new_delivery.method = 'pix' then 'pay_' || gen_random_uuid() end,
    pix_copy_paste => case when new_delivery.method = 'pix' then '000201...' end,
    pix_qr_code_image => case when new_delivery.method = 'pix' then 'iVBORw0KGgo=' end,
    payment_due_date => case when new_delivery.method = 'pix' then date '2030-01-02' end))
$$;

-- Prices: max(minimum_fee, base_fee + per_km * km), rounded to cents (defaults 5.00, 1.50/km, minimum 8.00).
select is(private.price_for(pg_temp.company(), 1500), 8.00, 'a short route costs the minimum fee');
select is(private.price_for(pg_temp.company(), 10000), 20.00, '10 km: 5.00 + 15.00');
select is(private.price_for(pg_temp.company(), 3003), 9.50, '3.003 km: 9.5045 rounds to 9.50');
select is(private.price_for(pg_temp.company(), 3007), 9.51, '3.007 km: 9.5105 rounds to 9.51');
select is(private.price_for(pg_temp.company(), 0), 8.00, 'no distance: the minimum fee');

-- The quote.
select tests.act_as_member(a, 'owner') from t;
select is(to_jsonb(public.quote_route(10234.5, 1227.4)), '{"distance_m": 10235, "duration_s": 1227, "price": 20.35}'::jsonb,
  'quote: metres and seconds rounded to whole units, and their price');
select tests.act_as_member(a, 'admin') from t;
select is(to_jsonb(public.quote_route(10000, 1200)) ->> 'price', '20.00', 'an admin may quote');
select tests.act_as_member(a, 'legacy_admin') from t;
select is(to_jsonb(public.quote_route(10000, 1200)) ->> 'price', '20.00', 'a legacy admin may quote');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.quote_route(10000, 1200)) $$, 'PT403', 'role driver may not do this', 'a driver may not quote');
select tests.act_as_member(b, 'owner') from t;
select set_prices(2.00, 1.00, 3.00, 0.5);
select is(to_jsonb(public.quote_route(10000, 1200)) ->> 'price', '12.00', 'each company quotes with its own prices');
select tests.reset_role();

-- Who may create.
select tests.act_as_member(a, 'owner') from t;
select is(public.authorize_new_delivery(), pg_temp.company(), 'an owner may create deliveries for its company');
select throws_ok($$ select public.authorize_new_delivery((select (b ->> 'driver_id')::uuid from t)) $$, 'PT404', 'driver not found',
  'not for another company''s driver');
select tests.act_as_member(a, 'legacy_admin') from t;
select is(public.authorize_new_delivery((select (a ->> 'driver_id')::uuid from t)), pg_temp.company(), 'a legacy admin may create');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.authorize_new_delivery() $$, 'PT403', 'role driver may not do this', 'a driver may not create');
select throws_ok($$ select to_jsonb(public.create_delivery(gen_random_uuid(), pg_temp.company(), null, 'invoice', 'a', 0, 0, 'b', 0, 0, 1, 1)) $$,
  '42501', null, 'nor insert one through the service function');
select tests.reset_role();

-- A Pix delivery.
insert into ids select 'pix', (pg_temp.new_delivery('pix', 10234.5, charged => 20.35) ->> 'id')::uuid;
select is(
  (select private.delivery_json(d) - 'id' - 'created_at' - 'updated_at' from public.deliveries d where d.id = (select id from ids where name = 'pix')),
  jsonb_build_object('company_id', pg_temp.company(), 'status', 'awaiting_payment', 'payment_status', 'pending',
    'payment_method', 'pix', 'origin_address', 'Rua A, 1', 'origin', '{"lat": -23.55, "lng": -46.63}'::jsonb,
    'destination_address', 'Rua B, 2', 'destination', '{"lat": -23.56, "lng": -46.64}'::jsonb,
    'distance_m', 10235, 'duration_s', 322, 'price', 20.35, 'driver_id', null, 'recipient_name', 'Ana',
    'recipient_phone', '+55 11 99999-0000', 'notes', 'ring twice',
    'payment', jsonb_build_object('gateway_payment_id', (select gateway_payment_id from public.deliveries where id = (select id from ids where name = 'pix')),
      'pix_copy_paste', '000201...', 'pix_qr_code_image', 'iVBORw0KGgo=', 'due_date', '2030-01-02'),
    'cancel_reason', null, 'refund_due', false, 'accepted_at', null, 'started_at', null, 'completed_at', null,
    'cancelled_at', null, 'remaining_m', null, 'eta_at', null, 'eta_refreshed_at', null, 'proof', null,
    'tracking_token', null, 'tracking_url', null, 'recipient_email', null)
    || jsonb_build_object('window_start', null, 'window_end', null, 'late', false, 'external_id', null,
      'attempts', 1, 'failed_at', null, 'failure_reason', null, 'failure_note', null,
      'dispatch_status', null, 'offer_expires_at', null, 'failure_photo_path', null,
      'collect', null, 'collected', null, 'collect_mismatch', false, 'size', 1, 'service_s', 120,
      'recall_reason', null, 'refund_status', null, 'returned_at', null),
  'a Pix delivery awaits its payment and carries the charge');
select tests.act_as_member(a, 'owner') from t;
select is((select price from public.deliveries where id = (select id from ids where name = 'pix')),
  (to_jsonb(public.quote_route(10234.5, 0)) ->> 'price')::numeric, 'its price is the quote''s, to the cent');
select tests.reset_role();
select results_eq(
  $$ select trigger, from_status, to_status, from_payment_status, to_payment_status, actor_id from public.delivery_history
     where delivery_id = (select id from ids where name = 'pix') $$,
  $$ select 'create', null::text, 'awaiting_payment', null::text, 'pending', (a ->> 'owner')::uuid from t $$,
  'creation is the first history row, by its creator');
select throws_ok($$ select pg_temp.new_delivery('pix', 10234.5, charged => 20.34) $$, 'PT409',
  'the price changed to 20.35 while the delivery was being created; try again', 'a Pix charge of another amount is refused');

-- An invoice delivery.
select is(pg_temp.new_delivery('invoice', 1500) ->> 'status', 'pending', 'an invoice delivery is pending at once');
select is(pg_temp.new_delivery('invoice', 1500) ->> 'payment_status', 'invoiced', 'with payment status invoiced');
select is(pg_temp.new_delivery('invoice', 1500) -> 'payment', 'null'::jsonb, 'and no payment object');
insert into ids select 'pre', (pg_temp.new_delivery('invoice', 1500, (select (a ->> 'driver_id')::uuid from t)) ->> 'id')::uuid;
select is((select status || ' ' || driver_id from public.deliveries where id = (select id from ids where name = 'pre')),
  (select 'accepted ' || (a ->> 'driver_id') from t), 'an invoice delivery for a driver is that driver''s at once');
select is((select array_agg(trigger order by id) from public.delivery_history where delivery_id = (select id from ids where name = 'pre')),
  array['create', 'assign'], 'recorded as created, then assigned');
select throws_ok($$ select pg_temp.new_delivery('invoice', 1500, (select (b ->> 'driver_id')::uuid from t)) $$, 'PT404', 'driver not found',
  'creating for another company''s driver is 404');
select throws_ok($$ select to_jsonb(public.create_delivery(gen_random_uuid(), pg_temp.company(), null, 'invoice', '  ', 0, 0, 'b', 0, 0, 1, 1)) $$,
  '23514', null, 'an empty address is refused by the table');

-- The gateway customer cache.
select tests.configure_gateway(a) from t;
select tests.act_as_service_role();
select is(private.gateway_customer_id(pg_temp.company(), '12345678909'), null, 'no customer yet for this document');
select private.remember_gateway_customer(pg_temp.company(), '12345678909', 'cus_1');
select is(private.gateway_customer_id(pg_temp.company(), '12345678909'), 'cus_1', 'the customer made for it is remembered');
select is(private.gateway_customer_id(pg_temp.company('b'), '12345678909'), null, 'per company');
select tests.act_as_service_role();
select save_gateway_config(pg_temp.company(), 'v2.key', 'v2.secret', 'sandbox');
select is(private.gateway_customer_id(pg_temp.company(), '12345678909'), null, 'a new gateway key forgets the customers of the old one');
select tests.reset_role();

-- Completion credits the driver; a refund reverses it -------------------------------

insert into ids select 'credit', (pg_temp.new_delivery('invoice', 4560) ->> 'id')::uuid;   -- 5.00 + 6.84 = 11.84
-- The share is the one in force when the delivery was created.
select tests.act_as_member(a, 'owner') from t;
select set_prices(5.00, 1.50, 8.00, 0.5);
select tests.act_as_member(a, 'driver') from t;
select to_jsonb(public.accept_delivery((select id from ids where name = 'credit')));
select to_jsonb(public.start_delivery((select id from ids where name = 'credit')));
select is_empty($$ select 1 from public.wallet_entries $$, 'nothing is credited before completion');
select tests.reset_role();
-- This file's companies only: against a running stack (npm run db:test:cli) others' entries exist.
select is((select count(*)::integer from public.wallet_entries e where e.company_id in (pg_temp.company(), pg_temp.company('b'))), 0,
  'no entry at all before completion');
select tests.act_as_member(a, 'driver') from t;
select is(to_jsonb(public.complete_delivery((select id from ids where name = 'credit'))) ->> 'status', 'completed', 'the driver completes it');
select results_eq($$ select kind, amount, driver_id from public.wallet_entries where delivery_id = (select id from ids where name = 'credit') $$,
  $$ select 'delivery_credit', 9.47, (a ->> 'driver_id')::uuid from t $$,
  'the driver sees one credit of price * driver_share (11.84 * 0.80, the share at creation)');
select tests.reset_role();
select is((select balance from private.wallet_balances((select (a ->> 'driver_id')::uuid from t))), 9.47, 'its balance is the credit');

select tests.act_as_service_role();
select is(public.apply_payment_event(null, 'PAYMENT_REFUNDED', null, (select id::text from ids where name = 'credit')) ->> 'result',
  'ignored', 'an invoice delivery cannot be refunded by the gateway');
select tests.reset_role();

insert into ids select 'paid', (pg_temp.new_delivery('pix', 4560, charged => 11.84) ->> 'id')::uuid;
select tests.act_as_service_role();
select public.apply_payment_event(null, 'PAYMENT_RECEIVED', null, (select id::text from ids where name = 'paid'));
select tests.act_as_member(a, 'driver2') from t;
select to_jsonb(public.accept_delivery((select id from ids where name = 'paid')));
select to_jsonb(public.start_delivery((select id from ids where name = 'paid')));
select to_jsonb(public.complete_delivery((select id from ids where name = 'paid')));
select tests.reset_role();
select is((select balance from private.wallet_balances((select (a ->> 'driver2_id')::uuid from t))), 5.92,
  'a paid Pix delivery credits its driver too (11.84 * 0.50)');
select tests.act_as_service_role();
select is(public.apply_payment_event(null, 'PAYMENT_REFUNDED', null, (select id::text from ids where name = 'paid')) ->> 'result',
  'processed', 'the payment of a completed delivery is refunded');
select is(public.apply_payment_event(null, 'PAYMENT_REFUNDED', null, (select id::text from ids where name = 'paid')) ->> 'result',
  'duplicate', 'and the refund arrives again');
select tests.reset_role();
select results_eq(
  $$ select kind, amount from public.wallet_entries where delivery_id = (select id from ids where name = 'paid') order by created_at $$,
  $$ values ('delivery_credit', 5.92), ('credit_reversal', -5.92) $$,
  'the credit is reversed once, by a new entry; nothing is deleted');
select is((select balance from private.wallet_balances((select (a ->> 'driver2_id')::uuid from t))), 0.00,
  'the driver''s balance is back where it was');
select is((select status || '/' || payment_status from public.deliveries where id = (select id from ids where name = 'paid')),
  'cancelled/refunded', 'the refunded delivery is cancelled');

-- A refund before completion has no credit to reverse.
insert into ids select 'early', (pg_temp.new_delivery('pix', 4560, charged => 11.84) ->> 'id')::uuid;
select tests.act_as_service_role();
select is(public.apply_payment_event(null, 'PAYMENT_REFUNDED', null, (select id::text from ids where name = 'early')) ->> 'result',
  'processed', 'a refund before any credit');
select tests.reset_role();
select is((select count(*)::integer from public.wallet_entries where delivery_id = (select id from ids where name = 'early')), 0,
  'writes no ledger entry');

select * from finish();
rollback;
