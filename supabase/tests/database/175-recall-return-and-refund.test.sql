-- Recall and return, and refunds (11_lifecycle.sql): `recall` (owner, admin) and `return` (the linked driver)
-- from every state, allowed ones landing where docs/state-machines.md says and refused ones raising PT422; who may
-- ask, under RLS, for every role and a foreign company; the driver told (delivery_recalled); the returned
-- delivery credited once; the refund's request recorded once and applied by PAYMENT_REFUNDED.
begin;
select plan(64);

create temp table t as select tests.create_tenant('recall-a') as a, tests.create_tenant('recall-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;

-- The delivery of company a in `status` (the linked driver is driver 1 where the state needs one; a returned one
-- with when).
create function pg_temp.delivery_in(status text, method text default 'invoice') returns uuid
language plpgsql as $$
declare
  made uuid := (tests.delivery_in((select a from t),
    case when delivery_in.status = 'returned' then 'returning' else delivery_in.status end, delivery_in.method,
    driver => case when delivery_in.status in ('returning', 'returned') then 'driver' end)).id;
begin
  if delivery_in.status = 'returned' then
    update public.deliveries x set status = 'returned', returned_at = now() where x.id = made;
  end if;
  return made;
end;
$$;

create function pg_temp.try_move(trigger text, status text, then_do text default 'redispatch') returns text
language sql as $$ select tests.try_move((select a from t), pg_temp.delivery_in(status), trigger, then_do) $$;

-- recall (owner, admin) from every state
select is(pg_temp.try_move('recall', 'awaiting_payment'), 'PT422: delivery cannot be recalled from awaiting_payment: only accepted or in_progress', 'recall: awaiting_payment refused');
select is(pg_temp.try_move('recall', 'pending'), 'PT422: delivery cannot be recalled from pending: only accepted or in_progress', 'recall: pending refused');
select is(pg_temp.try_move('recall', 'accepted'), 'pending', 'recall: accepted -> pending (redispatch, the default)');
select is(pg_temp.try_move('recall', 'accepted', 'cancel'), 'cancelled', 'recall then cancel: accepted -> cancelled');
select is(pg_temp.try_move('recall', 'in_progress'), 'returning', 'recall: in_progress -> returning');
select is(pg_temp.try_move('recall', 'in_progress', 'cancel'), 'returning', 'recall then cancel: in_progress -> returning all the same');
select is(pg_temp.try_move('recall', 'completed'), 'PT422: delivery cannot be recalled from completed: only accepted or in_progress', 'recall: completed refused');
select is(pg_temp.try_move('recall', 'cancelled'), 'PT422: delivery cannot be recalled from cancelled: only accepted or in_progress', 'recall: cancelled refused');
select is(pg_temp.try_move('recall', 'failed'), 'PT422: delivery cannot be recalled from failed: only accepted or in_progress', 'recall: failed refused');
select is(pg_temp.try_move('recall', 'returning'), 'PT422: delivery cannot be recalled from returning: only accepted or in_progress', 'recall: returning refused');
select is(pg_temp.try_move('recall', 'returned'), 'PT422: delivery cannot be recalled from returned: only accepted or in_progress', 'recall: returned refused');
select is(pg_temp.try_move('recall', 'accepted', 'later'), 'PT400: then must be redispatch or cancel', 'recall: an unknown `then` is 400');

-- return (the linked driver) from every state
select is(pg_temp.try_move('return', 'awaiting_payment'), 'PT422: delivery cannot move from awaiting_payment to returned', 'return: awaiting_payment refused');
select is(pg_temp.try_move('return', 'pending'), 'PT422: delivery cannot move from pending to returned', 'return: pending refused');
select is(pg_temp.try_move('return', 'accepted'), 'PT422: delivery cannot move from accepted to returned', 'return: accepted refused');
select is(pg_temp.try_move('return', 'in_progress'), 'PT422: delivery cannot move from in_progress to returned', 'return: in_progress refused');
select is(pg_temp.try_move('return', 'completed'), 'PT422: delivery cannot move from completed to returned', 'return: completed refused');
select is(pg_temp.try_move('return', 'cancelled'), 'PT422: delivery cannot move from cancelled to returned', 'return: cancelled refused');
select is(pg_temp.try_move('return', 'failed'), 'PT422: delivery cannot move from failed to returned', 'return: failed refused');
select is(pg_temp.try_move('return', 'returning'), 'returned', 'return: returning -> returned');
select is(pg_temp.try_move('return', 'returned'), 'PT422: delivery cannot move from returned to returned', 'return: returned refused');

-- the other moves leave returning and returned alone
select is(pg_temp.try_move('cancel', 'returning'), 'PT422: delivery cannot move from returning to cancelled', 'cancel: returning refused (the goods are on their way back)');
select is(pg_temp.try_move('cancel', 'returned'), 'PT422: delivery cannot move from returned to cancelled', 'cancel: returned refused');
select is(pg_temp.try_move('fail', 'returning'), 'PT422: delivery cannot move from returning to failed', 'fail: returning refused');

-- Who may recall and return ---------------------------------------------------------

insert into ids values ('accepted', pg_temp.delivery_in('accepted')), ('trip', pg_temp.delivery_in('in_progress'));
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.recall_delivery((select id from ids where name = 'accepted'), 'x') $$,
  'PT403', 'role driver may not do this', 'a driver may not recall');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok($$ select public.recall_delivery((select id from ids where name = 'accepted'), 'x') $$,
  'PT403', 'role admin may not do this', 'the older form''s admin may not recall (owner and admin only)');
select tests.act_as_member(b, 'owner') from t;
select throws_ok($$ select public.recall_delivery((select id from ids where name = 'accepted'), 'x') $$,
  'PT404', 'delivery not found', 'another company''s owner gets 404');
select tests.act_as_member(a, 'admin') from t;
select throws_ok($$ select public.recall_delivery((select id from ids where name = 'accepted'), '   ') $$,
  'PT400', 'reason is required', 'a reason is required');
select tests.reset_role();
select is((select status from public.deliveries where id = (select id from ids where name = 'accepted')), 'accepted',
  'nothing refused moved it');

-- A recall before pickup: back to the pool, the driver told ----------------------------

delete from realtime.messages;
select tests.act_as_member(a, 'admin') from t;
select is(
  (select jsonb_build_object('status', r.status, 'driver', r.driver_id, 'accepted', r.accepted_at, 'reason', r.recall_reason)
   from public.recall_delivery((select id from ids where name = 'accepted'), ' the client changed the address ') r),
  jsonb_build_object('status', 'pending', 'driver', null, 'accepted', null, 'reason', 'the client changed the address'),
  'recalled before pickup: pending, nobody''s, the reason kept');
select tests.reset_role();
select is(
  (select array_agg(m.payload ->> 'status') from realtime.messages m
   where m.topic = 'driver:' || (select a ->> 'driver_id' from t) and m.event = 'delivery_recalled'),
  array['pending'], 'the driver who had it hears delivery_recalled');
select is(
  (select count(*)::int from realtime.messages m
   where m.topic = 'driver:' || (select a ->> 'driver2_id' from t) and m.event = 'delivery_available'
     and m.payload ->> 'id' = (select id::text from ids where name = 'accepted')),
  1, 'the other drivers are offered it again (delivery_available)');
select is(
  (select payload ->> 'tracking_token' from realtime.messages m
   where m.topic = 'driver:' || (select a ->> 'driver_id' from t) and m.event = 'delivery_recalled'),
  null, 'the driver''s message carries no tracking link');
select tests.act_as_member(a, 'driver') from t;
select is((select count(*)::int from public.deliveries where id = (select id from ids where name = 'accepted') and driver_id is not null),
  0, 'the recalled driver no longer has it');
select tests.act_as_member(a, 'driver2') from t;
select is((public.accept_delivery((select id from ids where name = 'accepted'))).status, 'accepted',
  'another driver may take it');
select tests.reset_role();
select results_eq(
  $$ select trigger, from_status, to_status, actor_id from public.delivery_history
     where delivery_id = (select id from ids where name = 'accepted') order by id $$,
  $$ select * from (values ('recall', 'accepted', 'pending', (select (a ->> 'admin')::uuid from t)),
                           ('accept', 'pending', 'accepted', (select (a ->> 'driver2')::uuid from t))) v $$,
  'the history records the recall, who asked, and the new acceptance');

-- A recall after pickup: returning, then returned and credited once ---------------------

delete from realtime.messages;
select tests.act_as_member(a, 'owner') from t;
select is((public.recall_delivery((select id from ids where name = 'trip'), 'wrong parcel')).status, 'returning',
  'recalled in progress: returning');
select tests.reset_role();
select is(
  (select array_agg(m.event order by m.event) from realtime.messages m
   where m.topic = 'driver:' || (select a ->> 'driver_id' from t)),
  array['delivery_recalled', 'delivery_updated'], 'the driver hears delivery_recalled (and the update)');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok($$ select public.return_delivery((select id from ids where name = 'trip')) $$,
  'PT404', 'delivery not found', 'another driver may not return it');
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select public.return_delivery((select id from ids where name = 'trip')) $$,
  'PT403', 'role company_owner may not do this', 'an owner may not return it');
select tests.act_as_member(b, 'driver') from t;
select throws_ok($$ select public.return_delivery((select id from ids where name = 'trip')) $$,
  'PT404', 'delivery not found', 'another company''s driver gets 404');
select tests.act_as_member(a, 'driver') from t;
select is(
  (select jsonb_build_object('status', r.status, 'returned', r.returned_at is not null, 'late', r.late)
   from public.return_delivery((select id from ids where name = 'trip')) r),
  jsonb_build_object('status', 'returned', 'returned', true, 'late', false), 'returned: terminal, when, never late');
select throws_ok($$ select public.return_delivery((select id from ids where name = 'trip')) $$,
  'PT422', 'delivery cannot move from returned to returned', 'a second return is refused');
select is((public.get_wallet()).balance, 20.00::numeric,
  'the driver is credited price * driver_share (12.50 * 0.80) for each delivery it returned (two so far)');
select tests.reset_role();
select is(
  (select array_agg(kind || ' ' || amount) from public.wallet_entries where delivery_id = (select id from ids where name = 'trip')),
  array['delivery_credit 10.00'], 'exactly one credit, as for a completion');
select throws_ok(
  $$ insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
     select company_id, driver_id, 'delivery_credit', 10, id from public.deliveries where id = (select id from ids where name = 'trip') $$,
  '23505', null, 'the ledger refuses a second credit for it');
select is(private.delivery_ended_at((select id from ids where name = 'trip')),
  (select returned_at from public.deliveries where id = (select id from ids where name = 'trip')), 'it ended when it was returned');

-- A refund of a returned Pix delivery takes the credit back.
insert into ids values ('pix_trip', pg_temp.delivery_in('in_progress', 'pix'));
select tests.act_as_member(a, 'owner') from t;
select public.recall_delivery((select id from ids where name = 'pix_trip'), 'out of stock');
select tests.act_as_member(a, 'driver') from t;
select public.return_delivery((select id from ids where name = 'pix_trip'));
select tests.act_as_service_role();
select is(public.apply_payment_event(null, 'PAYMENT_REFUNDED', (select gateway_payment_id from public.deliveries where id = (select id from ids where name = 'pix_trip')), null) ->> 'result',
  'processed', 'PAYMENT_REFUNDED applies to a returned delivery');
select tests.reset_role();
select is(
  (select array_agg(kind || ' ' || amount order by amount desc) from public.wallet_entries where delivery_id = (select id from ids where name = 'pix_trip')),
  array['delivery_credit 10.00', 'credit_reversal -10.00'], 'its credit is reversed by a ledger entry');

-- Reports: a returned delivery's credit is in the driver earnings.
select tests.act_as_member(a, 'owner') from t;
select is((public.report_summary(current_date - 1, current_date + 1)).driver_earnings >= 10.00, true,
  'the summary''s driver earnings include the returned delivery''s credit');
select tests.reset_role();

-- Refunds ------------------------------------------------------------------------------

insert into ids values
  ('due', pg_temp.delivery_in('cancelled', 'pix')),
  ('unpaid', (tests.delivery_in((select a from t), 'cancelled', 'pix', payment_status => 'pending')).id),
  ('invoice', pg_temp.delivery_in('cancelled', 'invoice')),
  ('open', pg_temp.delivery_in('pending', 'pix'));
select tests.act_as_member(a, 'owner') from t;
select is((public.refundable_delivery((select id from ids where name = 'due'))).refund_due, true, 'a cancelled, paid Pix delivery may be refunded');
select throws_ok($$ select public.refundable_delivery((select id from ids where name = 'unpaid')) $$, 'PT422',
  'only a cancelled Pix delivery whose payment was received can be refunded (this one is cancelled, payment pending)', 'an unpaid one: 422');
select throws_ok($$ select public.refundable_delivery((select id from ids where name = 'invoice')) $$, 'PT422',
  'only a cancelled Pix delivery whose payment was received can be refunded (this one is cancelled, payment invoiced)', 'an invoice one: 422');
select throws_ok($$ select public.refundable_delivery((select id from ids where name = 'open')) $$, 'PT422',
  'only a cancelled Pix delivery whose payment was received can be refunded (this one is pending, payment received)', 'one not cancelled: 422');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok($$ select public.refundable_delivery((select id from ids where name = 'due')) $$, 'PT403',
  'role admin may not do this', 'the older form''s admin may not refund');
select tests.act_as_member(b, 'admin') from t;
select throws_ok($$ select public.refundable_delivery((select id from ids where name = 'due')) $$, 'PT404',
  'delivery not found', 'another company''s admin gets 404');
select tests.act_as_member(a, 'owner') from t;
select is(has_function_privilege('authenticated', 'public.record_refund(uuid, uuid, boolean)', 'execute'), false,
  'recording a refund is the edge''s (service role), after the gateway said yes');
select tests.act_as_service_role();
select is((public.record_refund((select id from ids where name = 'due'), (select (a ->> 'owner')::uuid from t), false)).refund_status,
  'requested', 'the gateway took the request: refund_status requested');
select is((public.record_refund((select id from ids where name = 'due'), (select (a ->> 'owner')::uuid from t), false)).refund_due,
  true, 'asked again: still requested, refund_due until the gateway says it is done');
select is(apply_payment_event(null, 'PAYMENT_REFUNDED', (select gateway_payment_id from public.deliveries where id = (select id from ids where name = 'due')), null) ->> 'result',
  'processed', 'PAYMENT_REFUNDED applies');
select tests.act_as_member(a, 'owner') from t;
select is((select jsonb_build_object('refund_due', d.refund_due, 'refund_status', d.refund_status, 'payment_status', d.payment_status)
           from public.get_delivery((select id from ids where name = 'due')) d),
  jsonb_build_object('refund_due', false, 'refund_status', 'refunded', 'payment_status', 'refunded'),
  'PAYMENT_REFUNDED clears refund_due and sets refund_status refunded');
select tests.reset_role();
select is((select count(*)::int from public.delivery_history where delivery_id = (select id from ids where name = 'due') and trigger = 'refund_requested'),
  1, 'the request is one history row however often it is recorded');

-- The gateway's answer already says REFUNDED: applied at once, the event a duplicate afterwards.
insert into ids values ('at_once', pg_temp.delivery_in('cancelled', 'pix'));
select tests.act_as_service_role();
select is((public.record_refund((select id from ids where name = 'at_once'), null, true)).refund_status, 'refunded',
  'refunded at once when the gateway says so');
select is(apply_payment_event(null, 'PAYMENT_REFUNDED', (select gateway_payment_id from public.deliveries where id = (select id from ids where name = 'at_once')), null) ->> 'result',
  'duplicate', 'the PAYMENT_REFUNDED that follows is a duplicate');
select tests.reset_role();

select * from finish();
rollback;
