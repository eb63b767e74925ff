-- The gateway's PAYMENT_* events (public.apply_payment_event): the effect of
-- each event in each state, idempotency (twice is once, the second a
-- duplicate), how the delivery is found, and the company boundary.
begin;
select plan(71);

create temp table t as select tests.create_tenant('events-a') as a, tests.create_tenant('events-b') as b;
grant select on t to public;

-- Applies `event` to delivery `id` as the service role (the webhook's caller),
-- by its payment id and reference.

-- `result status/payment_status` after `event` on a fresh delivery in `status`.
create function pg_temp.try_event(event text, status text, payment_status text default null) returns text
language plpgsql as $$
declare
  d public.deliveries := tests.delivery_in((select a from t), try_event.status, payment_status => try_event.payment_status);
  result jsonb := tests.apply_payment(d.id, try_event.event);
begin
  select * into d from public.deliveries where id = d.id;
  return format('%s %s/%s', result ->> 'result', d.status, d.payment_status);
end;
$$;

-- PAYMENT_RECEIVED: awaiting_payment -> pending; a cancelled delivery whose
-- payment was still pending or overdue records it (refund_due); any other state ignores it.
select is(pg_temp.try_event('PAYMENT_RECEIVED', 'awaiting_payment'), 'processed pending/received', 'RECEIVED: awaiting_payment -> pending, received');
select is(pg_temp.try_event('PAYMENT_RECEIVED', 'pending'), 'ignored pending/received', 'RECEIVED: pending ignored');
select is(pg_temp.try_event('PAYMENT_RECEIVED', 'accepted'), 'ignored accepted/received', 'RECEIVED: accepted ignored');
select is(pg_temp.try_event('PAYMENT_RECEIVED', 'in_progress'), 'ignored in_progress/received', 'RECEIVED: in_progress ignored');
select is(pg_temp.try_event('PAYMENT_RECEIVED', 'completed'), 'ignored completed/received', 'RECEIVED: completed ignored');
select is(pg_temp.try_event('PAYMENT_RECEIVED', 'cancelled', 'pending'), 'processed cancelled/received',
  'RECEIVED: cancelled with the payment pending: recorded, the delivery stays cancelled');
select is(pg_temp.try_event('PAYMENT_RECEIVED', 'cancelled', 'overdue'), 'processed cancelled/received',
  'RECEIVED: cancelled as overdue: recorded, the delivery stays cancelled');
select is(pg_temp.try_event('PAYMENT_RECEIVED', 'cancelled', 'received'), 'ignored cancelled/received',
  'RECEIVED: cancelled with the payment already received: ignored');
select is(pg_temp.try_event('PAYMENT_RECEIVED', 'cancelled', 'refunded'), 'ignored cancelled/refunded',
  'RECEIVED: cancelled and refunded: ignored');

-- PAYMENT_CONFIRMED: payment_status confirmed, status untouched; a payment not yet received counts as received
-- first (125-payments-first-heard-confirmed.test.sql has the details).
select is(pg_temp.try_event('PAYMENT_CONFIRMED', 'awaiting_payment'), 'processed pending/confirmed', 'CONFIRMED: awaiting_payment is received, then confirmed');
select is(pg_temp.try_event('PAYMENT_CONFIRMED', 'pending'), 'processed pending/confirmed', 'CONFIRMED: pending keeps its status');
select is(pg_temp.try_event('PAYMENT_CONFIRMED', 'accepted'), 'processed accepted/confirmed', 'CONFIRMED: accepted keeps its status');
select is(pg_temp.try_event('PAYMENT_CONFIRMED', 'in_progress'), 'processed in_progress/confirmed', 'CONFIRMED: in_progress keeps its status');
select is(pg_temp.try_event('PAYMENT_CONFIRMED', 'completed'), 'processed completed/confirmed', 'CONFIRMED: completed keeps its status');
select is(pg_temp.try_event('PAYMENT_CONFIRMED', 'cancelled'), 'processed cancelled/confirmed', 'CONFIRMED: cancelled with the payment received: confirmed, still cancelled');
select is(pg_temp.try_event('PAYMENT_CONFIRMED', 'cancelled', 'refunded'), 'ignored cancelled/refunded', 'CONFIRMED: refunded ignored');

-- PAYMENT_REFUNDED: cancelled from any state, payment refunded.
select is(pg_temp.try_event('PAYMENT_REFUNDED', 'awaiting_payment'), 'processed cancelled/refunded', 'REFUNDED: awaiting_payment -> cancelled');
select is(pg_temp.try_event('PAYMENT_REFUNDED', 'pending'), 'processed cancelled/refunded', 'REFUNDED: pending -> cancelled');
select is(pg_temp.try_event('PAYMENT_REFUNDED', 'accepted'), 'processed cancelled/refunded', 'REFUNDED: accepted -> cancelled');
select is(pg_temp.try_event('PAYMENT_REFUNDED', 'in_progress'), 'processed cancelled/refunded', 'REFUNDED: in_progress -> cancelled');
select is(pg_temp.try_event('PAYMENT_REFUNDED', 'completed'), 'processed cancelled/refunded', 'REFUNDED: completed -> cancelled');
select is(pg_temp.try_event('PAYMENT_REFUNDED', 'cancelled'), 'processed cancelled/refunded', 'REFUNDED: cancelled stays cancelled, payment refunded');

-- PAYMENT_OVERDUE: awaiting_payment -> cancelled; any other state ignores it.
select is(pg_temp.try_event('PAYMENT_OVERDUE', 'awaiting_payment'), 'processed cancelled/overdue', 'OVERDUE: awaiting_payment -> cancelled');
select is(pg_temp.try_event('PAYMENT_OVERDUE', 'pending'), 'ignored pending/received', 'OVERDUE: pending ignored');
select is(pg_temp.try_event('PAYMENT_OVERDUE', 'accepted'), 'ignored accepted/received', 'OVERDUE: accepted ignored');
select is(pg_temp.try_event('PAYMENT_OVERDUE', 'in_progress'), 'ignored in_progress/received', 'OVERDUE: in_progress ignored');
select is(pg_temp.try_event('PAYMENT_OVERDUE', 'completed'), 'ignored completed/received', 'OVERDUE: completed ignored');
select is(pg_temp.try_event('PAYMENT_OVERDUE', 'cancelled', 'pending'), 'ignored cancelled/pending', 'OVERDUE: cancelled ignored');

-- Twice is once -------------------------------------------------------------------

create temp table d as select d.* from t, tests.delivery_in(a, 'awaiting_payment') d;
grant select on d to public;
create temp table snapshot (event text, status text, payment_status text, history integer, messages integer);
grant select on snapshot to public;
create function pg_temp.snap(event text) returns void
language sql as $$
  insert into snapshot
  select snap.event, x.status, x.payment_status,
    (select count(*) from public.delivery_history h where h.delivery_id = x.id),
    (select count(*) from realtime.messages m where m.payload ->> 'id' = x.id::text)
  from public.deliveries x where x.id = (select id from d)
$$;

select is(tests.apply_payment((select id from d), 'PAYMENT_RECEIVED') ->> 'result', 'processed', 'RECEIVED once: processed');
select pg_temp.snap('received once');
select is(tests.apply_payment((select id from d), 'PAYMENT_RECEIVED') ->> 'result', 'duplicate', 'RECEIVED twice: duplicate');
select pg_temp.snap('received twice');
select results_eq($$ select status, payment_status, history, messages from snapshot where event = 'received twice' $$,
  $$ select status, payment_status, history, messages from snapshot where event = 'received once' $$,
  'RECEIVED twice leaves what once left: state, history, broadcasts');

select is(tests.apply_payment((select id from d), 'PAYMENT_CONFIRMED') ->> 'result', 'processed', 'CONFIRMED once: processed');
select pg_temp.snap('confirmed once');
select is(tests.apply_payment((select id from d), 'PAYMENT_CONFIRMED') ->> 'result', 'duplicate', 'CONFIRMED twice: duplicate');
select pg_temp.snap('confirmed twice');
select results_eq($$ select status, payment_status, history, messages from snapshot where event = 'confirmed twice' $$,
  $$ select status, payment_status, history, messages from snapshot where event = 'confirmed once' $$,
  'CONFIRMED twice leaves what once left');
select is((select status || '/' || payment_status from snapshot where event = 'confirmed once'), 'pending/confirmed',
  'RECEIVED then CONFIRMED: pending and confirmed');

-- A repeated RECEIVED after CONFIRMED does not take the payment back to received.
select is(tests.apply_payment((select id from d), 'PAYMENT_RECEIVED') ->> 'result', 'duplicate', 'a late RECEIVED repeat is a duplicate');
select is((select payment_status from public.deliveries where id = (select id from d)), 'confirmed', 'and leaves confirmed alone');

select is(tests.apply_payment((select id from d), 'PAYMENT_REFUNDED') ->> 'result', 'processed', 'REFUNDED once: processed');
select pg_temp.snap('refunded once');
select is(tests.apply_payment((select id from d), 'PAYMENT_REFUNDED') ->> 'result', 'duplicate', 'REFUNDED twice: duplicate');
select pg_temp.snap('refunded twice');
select results_eq($$ select status, payment_status, history, messages from snapshot where event = 'refunded twice' $$,
  $$ select status, payment_status, history, messages from snapshot where event = 'refunded once' $$,
  'REFUNDED twice leaves what once left');

create temp table overdue as select d.* from t, tests.delivery_in(a, 'awaiting_payment') d;
grant select on overdue to public;
select is(tests.apply_payment((select id from overdue), 'PAYMENT_OVERDUE') ->> 'result', 'processed', 'OVERDUE once: processed');
select is(tests.apply_payment((select id from overdue), 'PAYMENT_OVERDUE') ->> 'result', 'duplicate', 'OVERDUE twice: duplicate');
select is((select count(*)::integer from public.delivery_history where delivery_id = (select id from overdue)), 1,
  'OVERDUE twice: one history row');
select is((select cancel_reason from public.deliveries where id = (select id from overdue)), 'payment overdue',
  'an overdue cancellation says why');
select is(tests.apply_payment((select id from overdue), 'PAYMENT_RECEIVED') ->> 'result', 'processed',
  'RECEIVED after OVERDUE is recorded (the delivery is cancelled)');
select is((select status || '/' || payment_status from public.deliveries where id = (select id from overdue)), 'cancelled/received',
  '... the delivery stays cancelled, its payment received');
select tests.act_as_member(a, 'owner') from t;
select is(to_jsonb(public.get_delivery((select id from overdue))) -> 'refund_due', 'true'::jsonb,
  '... and the company sees refund_due: true');
select tests.reset_role();
select is(tests.apply_payment((select id from overdue), 'PAYMENT_RECEIVED') ->> 'result', 'duplicate',
  'RECEIVED after OVERDUE again: duplicate');
select is((select count(*)::integer from public.delivery_history where delivery_id = (select id from overdue)
           and trigger = 'payment_received'), 1, '... one payment_received history row');
select is(tests.apply_payment((select id from overdue), 'PAYMENT_REFUNDED') ->> 'result', 'processed',
  'the company refunds it: REFUNDED processed');
select is((select status || '/' || payment_status from public.deliveries where id = (select id from overdue)), 'cancelled/refunded',
  '... the payment is refunded, the delivery still cancelled');
select is((select private.delivery_json(d) -> 'refund_due' from public.deliveries d where d.id = (select id from overdue)), 'false'::jsonb,
  '... and refund_due is cleared');

-- refund_due: a cancelled delivery whose payment was received or confirmed, and no other.
select is(
  (select array_agg(format('%s/%s %s', x.status, x.payment_status, private.delivery_json(x) ->> 'refund_due') order by x.status, x.payment_status)
   from t, lateral (values ('cancelled', 'received'), ('cancelled', 'confirmed'), ('cancelled', 'pending'),
     ('cancelled', 'overdue'), ('cancelled', 'refunded'), ('pending', 'received'), ('completed', 'confirmed')) v(status, payment_status),
   lateral tests.delivery_in(a, v.status, payment_status => v.payment_status) x),
  array['cancelled/confirmed true', 'cancelled/overdue false', 'cancelled/pending false', 'cancelled/received true',
    'cancelled/refunded false', 'completed/confirmed false', 'pending/received false'],
  'refund_due: true only for a cancelled delivery with its payment received or confirmed');

-- What the answer says -------------------------------------------------------------

create temp table e as select d.* from t, tests.delivery_in(a, 'awaiting_payment') d;
grant select on e to public;
select is(tests.apply_payment((select id from e), 'PAYMENT_RECEIVED') - 'detail',
  jsonb_build_object('result', 'processed', 'delivery_id', (select id from e), 'company_id', (select company_id from e)),
  'the answer names the delivery and its company');
select tests.act_as_service_role();
select is(public.apply_payment_event(null, 'PAYMENT_RECEIVED', 'pay_unknown', null),
  '{"result": "ignored", "delivery_id": null, "company_id": null, "detail": "no delivery for this payment"}'::jsonb,
  'an unknown payment is ignored, not an error');
select is(public.apply_payment_event(null, 'PAYMENT_RECEIVED', 'pay_unknown', 'not-a-uuid') ->> 'result', 'ignored',
  'a reference that is not a uuid is ignored');
select is(public.apply_payment_event(null, 'PAYMENT_CREATED', (select gateway_payment_id from e), null) ->> 'result', 'ignored',
  'an event we do not handle is ignored');
select is(public.apply_payment_event(null, 'PAYMENT_RECEIVED', (select gateway_payment_id from e), null) ->> 'result', 'duplicate',
  'the platform webhook (no company) finds the delivery by payment id');
select tests.reset_role();

-- Found by external reference when the payment id is not (yet) known.
create temp table r as select d.* from t, tests.delivery_in(a, 'awaiting_payment') d;
grant select on r to public;
select tests.act_as_service_role();
select is(public.apply_payment_event((select company_id from r), 'PAYMENT_RECEIVED', null, (select id::text from r)) ->> 'result',
  'processed', 'found by external reference (the delivery id)');
select is(public.apply_payment_event((select company_id from r), 'PAYMENT_OVERDUE', 'pay_other', (select id::text from r)) ->> 'result',
  'ignored', 'a reference to a delivery whose charge is another payment is ignored');
select tests.reset_role();

-- A company webhook touches that company's deliveries only.
create temp table f as select d.* from t, tests.delivery_in(a, 'awaiting_payment') d;
grant select on f to public;
select tests.act_as_service_role();
select is(public.apply_payment_event((select (b ->> 'company_id')::uuid from t), 'PAYMENT_REFUNDED', (select gateway_payment_id from f),
  (select id::text from f)) ->> 'result', 'ignored', 'company B''s webhook cannot touch company A''s delivery');
select tests.reset_role();
select is((select status from public.deliveries where id = (select id from f)), 'awaiting_payment', 'which stays as it was');

-- Invoice deliveries have no charge: events for them are ignored.
create temp table inv as
  select (to_jsonb(public.create_delivery(gen_random_uuid(), (a ->> 'company_id')::uuid, (a ->> 'owner')::uuid, 'invoice',
    'Origin', -23.55, -46.63, 'Destination', -23.56, -46.64, 1500, 300)) ->> 'id')::uuid as id from t;
grant select on inv to public;
select tests.act_as_service_role();
select is(public.apply_payment_event(null, 'PAYMENT_REFUNDED', null, (select id::text from inv)) ->> 'result', 'ignored',
  'an event naming an invoice delivery is ignored');
select tests.reset_role();
select is((select status || '/' || payment_status from public.deliveries where id = (select id from inv)), 'pending/invoiced',
  'the invoice delivery is untouched');

-- Only the service role applies events.
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select public.apply_payment_event(null, 'PAYMENT_REFUNDED', 'x', null) $$, '42501', null,
  'an owner may not apply a payment event');
select tests.reset_role();

-- A Pix delivery created for a given driver -----------------------------------------

create temp table pre as
  select (to_jsonb(public.create_delivery(gen_random_uuid(), (a ->> 'company_id')::uuid, (a ->> 'owner')::uuid, 'pix',
    'Origin', -23.55, -46.63, 'Destination', -23.56, -46.64, 1500, 300, driver_id => (a ->> 'driver2_id')::uuid,
    charged_price => 8.00, gateway_payment_id => 'pay_pre_' || gen_random_uuid(), pix_copy_paste => 'code',
    pix_qr_code_image => 'img', payment_due_date => current_date + 1))) as j from t;
grant select on pre to public;
select is((select j ->> 'status' from pre), 'awaiting_payment', 'a Pix delivery for a driver waits for its payment');
select is(tests.apply_payment((select (j ->> 'id')::uuid from pre), 'PAYMENT_RECEIVED') ->> 'result',
  'processed', 'its payment arrives');
select is((select status || ' ' || driver_id from public.deliveries where id = (select (j ->> 'id')::uuid from pre)),
  (select 'accepted ' || (a ->> 'driver2_id') from t), 'and it goes to that driver at once');
select is((select array_agg(trigger || ':' || from_status || '>' || to_status order by id) from public.delivery_history
           where delivery_id = (select (j ->> 'id')::uuid from pre) and trigger <> 'create'),
  array['payment_received:awaiting_payment>pending', 'assign:pending>accepted'], 'recorded as paid, then assigned');

create temp table pre2 as
  select (to_jsonb(public.create_delivery(gen_random_uuid(), (a ->> 'company_id')::uuid, (a ->> 'owner')::uuid, 'pix',
    'Origin', -23.55, -46.63, 'Destination', -23.56, -46.64, 1500, 300, driver_id => (a ->> 'driver2_id')::uuid,
    charged_price => 8.00, gateway_payment_id => 'pay_pre_' || gen_random_uuid(), pix_copy_paste => 'code',
    pix_qr_code_image => 'img', payment_due_date => current_date + 1)) ->> 'id')::uuid as id from t;
grant select on pre2 to public;
update public.drivers set active = false where id = (select (a ->> 'driver2_id')::uuid from t);
select is(tests.apply_payment((select id from pre2), 'PAYMENT_RECEIVED') ->> 'result',
  'processed', 'a payment for a delivery whose driver was deactivated meanwhile');
select is((select status || ' ' || coalesce(driver_id::text, 'nobody') from public.deliveries where id = (select id from pre2)),
  'pending nobody', 'leaves it pending, open to every driver');

select * from finish();
rollback;
