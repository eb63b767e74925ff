-- A payment the gateway reports CONFIRMED (or RECEIVED_IN_CASH, which the edge applies as
-- PAYMENT_CONFIRMED) the first time we hear of it counts as received, then confirmed: a delivery
-- awaiting payment becomes pending (offered to the drivers) with payment confirmed, and a cancelled one
-- records the payment and shows refund_due. Both moves are recorded, so a later RECEIVED is a duplicate.
begin;
select plan(17);

create temp table t as select tests.create_tenant('confirmed-first') as a;
grant select on t to public;


create function pg_temp.state(id uuid) returns text
language sql as $$
  select x.status || '/' || x.payment_status || ' refund_due ' || (private.delivery_json(x) ->> 'refund_due')
  from public.deliveries x where x.id = state.id
$$;

create function pg_temp.history(id uuid) returns text[]
language sql as $$
  select array_agg(format('%s:%s>%s %s>%s', h.trigger, h.from_status, h.to_status, h.from_payment_status,
    h.to_payment_status) order by h.id)
  from public.delivery_history h where h.delivery_id = history.id and h.trigger <> 'create'
$$;
grant execute on all functions in schema pg_temp to public;

-- Awaiting payment -------------------------------------------------------------------

create temp table d as select x.* from t, tests.delivery_in(a, 'awaiting_payment') x;
grant select on d to public;
select is(tests.apply_payment((select id from d), 'PAYMENT_CONFIRMED') ->> 'result', 'processed',
  'CONFIRMED first on a delivery awaiting payment: processed');
select is(pg_temp.state((select id from d)), 'pending/confirmed refund_due false',
  'the delivery is pending (offered to the drivers) and its payment confirmed');
select is(pg_temp.history((select id from d)),
  array['payment_received:awaiting_payment>pending pending>received',
    'payment_confirmed:pending>pending received>confirmed'],
  'recorded as received, then confirmed');
select ok(exists (select from realtime.messages m, t
                  where m.topic = 'driver:' || (a ->> 'driver_id') and m.event = 'delivery_available'
                    and m.payload ->> 'id' = (select id::text from d)),
  'the company''s drivers are told it is available');
select is(tests.apply_payment((select id from d), 'PAYMENT_RECEIVED') ->> 'result', 'duplicate',
  'a RECEIVED heard later is a duplicate');
select is(tests.apply_payment((select id from d), 'PAYMENT_CONFIRMED') ->> 'result', 'duplicate',
  'and CONFIRMED again too');
select is(pg_temp.state((select id from d)), 'pending/confirmed refund_due false', 'which leave it as it was');

-- With a driver chosen at creation, the delivery goes to that driver.
create temp table pre as
  select (to_jsonb(public.create_delivery(gen_random_uuid(), (a ->> 'company_id')::uuid, (a ->> 'owner')::uuid, 'pix',
    'Origin', -23.55, -46.63, 'Destination', -23.56, -46.64, 1500, 300, driver_id => (a ->> 'driver2_id')::uuid,
    charged_price => 8.00, gateway_payment_id => 'pay_pre_' || gen_random_uuid(), pix_copy_paste => 'code',
    pix_qr_code_image => 'img', payment_due_date => current_date + 1)) ->> 'id')::uuid as id from t;
grant select on pre to public;
select is(tests.apply_payment((select id from pre), 'PAYMENT_CONFIRMED') ->> 'result', 'processed',
  'CONFIRMED first on a delivery for a chosen driver');
select is((select status || '/' || payment_status || ' ' || driver_id from public.deliveries where id = (select id from pre)),
  (select 'accepted/confirmed ' || (a ->> 'driver2_id') from t), 'it is that driver''s, its payment confirmed');

-- Cancelled ----------------------------------------------------------------------------

create temp table c as select x.* from t, tests.delivery_in(a, 'cancelled', payment_status => 'pending') x;
grant select on c to public;
select is(tests.apply_payment((select id from c), 'PAYMENT_CONFIRMED') ->> 'result', 'processed',
  'CONFIRMED first on a delivery cancelled while its charge was pending: processed');
select is(pg_temp.state((select id from c)), 'cancelled/confirmed refund_due true',
  'the delivery stays cancelled, the payment is recorded, and it shows refund_due');
select is(pg_temp.history((select id from c)),
  array['payment_received:cancelled>cancelled pending>received',
    'payment_confirmed:cancelled>cancelled received>confirmed'],
  'recorded as received, then confirmed');
select is(tests.apply_payment((select id from c), 'PAYMENT_REFUNDED') ->> 'result', 'processed', 'the company refunds it');
select is(pg_temp.state((select id from c)), 'cancelled/refunded refund_due false', 'and refund_due is cleared');

create temp table o as select x.* from t, tests.delivery_in(a, 'cancelled', payment_status => 'overdue') x;
grant select on o to public;
select is(tests.apply_payment((select id from o), 'PAYMENT_CONFIRMED') ->> 'result', 'processed',
  'CONFIRMED first on a delivery cancelled as overdue: processed');
select is(pg_temp.state((select id from o)), 'cancelled/confirmed refund_due true', 'refund_due');

-- A refunded payment is not taken back to confirmed.
create temp table r as select x.* from t, tests.delivery_in(a, 'cancelled', payment_status => 'refunded') x;
grant select on r to public;
select is(tests.apply_payment((select id from r), 'PAYMENT_CONFIRMED') ->> 'result', 'ignored',
  'CONFIRMED on a refunded payment is ignored');

select * from finish();
rollback;
