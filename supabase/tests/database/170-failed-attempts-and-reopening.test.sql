-- A failed attempt and a new one: `fail` (the linked driver, in_progress) and `reopen` (managers, failed)
-- from every state, allowed ones landing where docs/state-machines.md says and refused ones raising PT422
-- naming both states; cancel and a refund from failed; what each records (reason, note, no credit,
-- attempts, the driver link, the history) and who may ask.
begin;
select plan(42);

create temp table t as select tests.create_tenant('fail-a') as a, tests.create_tenant('fail-b') as b;
grant select on t to public;

create function pg_temp.try_move(trigger text, status text) returns text
language sql as $$ select tests.try_move((select a from t), (tests.delivery_in((select a from t), status)).id, trigger) $$;

-- fail (the linked driver)
select is(pg_temp.try_move('fail', 'awaiting_payment'), 'PT422: delivery cannot move from awaiting_payment to failed', 'fail: awaiting_payment refused');
select is(pg_temp.try_move('fail', 'pending'), 'PT422: delivery cannot move from pending to failed', 'fail: pending refused');
select is(pg_temp.try_move('fail', 'accepted'), 'PT422: delivery cannot move from accepted to failed', 'fail: accepted refused');
select is(pg_temp.try_move('fail', 'in_progress'), 'failed', 'fail: in_progress -> failed');
select is(pg_temp.try_move('fail', 'completed'), 'PT422: delivery cannot move from completed to failed', 'fail: completed refused');
select is(pg_temp.try_move('fail', 'cancelled'), 'PT422: delivery cannot move from cancelled to failed', 'fail: cancelled refused');
select is(pg_temp.try_move('fail', 'failed'), 'PT422: delivery cannot move from failed to failed', 'fail: failed refused');

-- reopen (managers)
select is(pg_temp.try_move('reopen', 'awaiting_payment'), 'PT422: delivery cannot move from awaiting_payment to pending', 'reopen: awaiting_payment refused');
select is(pg_temp.try_move('reopen', 'pending'), 'PT422: delivery cannot move from pending to pending', 'reopen: pending refused');
select is(pg_temp.try_move('reopen', 'accepted'), 'PT422: delivery cannot move from accepted to pending', 'reopen: accepted refused');
select is(pg_temp.try_move('reopen', 'in_progress'), 'PT422: delivery cannot move from in_progress to pending', 'reopen: in_progress refused');
select is(pg_temp.try_move('reopen', 'completed'), 'PT422: delivery cannot move from completed to pending', 'reopen: completed refused');
select is(pg_temp.try_move('reopen', 'cancelled'), 'PT422: delivery cannot move from cancelled to pending', 'reopen: cancelled refused');
select is(pg_temp.try_move('reopen', 'failed'), 'pending', 'reopen: failed -> pending');

-- cancel now also from failed
select is(pg_temp.try_move('cancel', 'failed'), 'cancelled', 'cancel: failed -> cancelled');

-- What fail records --------------------------------------------------------------

create temp table ids (name text primary key, id uuid);
grant select on ids to public;
insert into ids select 'trip', (tests.delivery_in(a, 'in_progress', 'invoice')).id from t;

select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.fail_delivery((select id from ids where name = 'trip'), 'lost') $$,
  'PT400', 'reason must be one of recipient_absent, address_not_found, refused, damaged, other', 'an unknown reason is 400');
select throws_ok($$ select public.fail_delivery((select id from ids where name = 'trip'), null) $$,
  'PT400', 'reason must be one of recipient_absent, address_not_found, refused, damaged, other', 'a reason is required');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok($$ select public.fail_delivery((select id from ids where name = 'trip'), 'refused') $$,
  'PT404', 'delivery not found', 'another driver''s delivery is 404');
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select public.fail_delivery((select id from ids where name = 'trip'), 'refused') $$,
  'PT403', 'role company_owner may not do this', 'an owner may not fail a delivery');
select tests.act_as_member(b, 'driver') from t;
select throws_ok($$ select public.fail_delivery((select id from ids where name = 'trip'), 'refused') $$,
  'PT404', 'delivery not found', 'another company''s driver gets 404');

select tests.act_as_member(a, 'driver') from t;
select is(
  (select jsonb_build_object('status', f.status, 'reason', f.failure_reason, 'note', f.failure_note, 'attempts', f.attempts,
     'driver', f.driver_id, 'failed', f.failed_at is not null)
   from public.fail_delivery((select id from ids where name = 'trip'), 'address_not_found', '  Número 120 não existe  ') f),
  jsonb_build_object('status', 'failed', 'reason', 'address_not_found', 'note', 'Número 120 não existe', 'attempts', 1,
    'driver', (select a ->> 'driver_id' from t), 'failed', true),
  'a failed delivery shows the reason, the trimmed note, when, and keeps its driver');
select is((select status from public.deliveries where id = (select id from ids where name = 'trip')), 'failed',
  'the linked driver still sees its failed delivery');
select tests.reset_role();
select is((select count(*)::int from public.wallet_entries where delivery_id = (select id from ids where name = 'trip')), 0,
  'a failed delivery credits nobody');
select results_eq(
  $$ select trigger, from_status, to_status, actor_id from public.delivery_history where delivery_id = (select id from ids where name = 'trip') $$,
  $$ select 'fail', 'in_progress', 'failed', (a ->> 'driver')::uuid from t $$,
  'the history records the failure and who reported it');

-- A failed delivery is late once its window has passed, like any other not delivered.
update public.deliveries set window_end = now() - interval '1 minute' where id = (select id from ids where name = 'trip');
select tests.act_as_member(a, 'owner') from t;
select is((public.get_delivery((select id from ids where name = 'trip'))).late, true, 'a failed delivery past its window is late');

-- What reopen records ------------------------------------------------------------

select tests.reset_role();
update public.deliveries set window_end = now() + interval '2 hours', eta_at = now(), remaining_m = 300,
  eta_refreshed_at = now(), eta_requested_at = now(), eta_from_lat = -23.5, eta_from_lng = -46.6
where id = (select id from ids where name = 'trip');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.reopen_delivery((select id from ids where name = 'trip')) $$,
  'PT403', 'role driver may not do this', 'a driver may not reopen');
select tests.act_as_member(a, 'legacy_admin') from t;
select is(
  (select jsonb_build_object('status', r.status, 'attempts', r.attempts, 'driver', r.driver_id, 'accepted', r.accepted_at,
     'started', r.started_at, 'eta', r.eta_at, 'remaining', r.remaining_m, 'reason', r.failure_reason)
   from public.reopen_delivery((select id from ids where name = 'trip')) r),
  jsonb_build_object('status', 'pending', 'attempts', 2, 'driver', null, 'accepted', null, 'started', null, 'eta', null,
    'remaining', null, 'reason', 'address_not_found'),
  'a reopened delivery is pending again, attempt 2, nobody''s, no ETA; the last failure stays readable');
select tests.reset_role();
select is((select array[eta_requested_at::text, eta_from_lat::text] from public.deliveries where id = (select id from ids where name = 'trip')),
  array[null, null]::text[], 'the ETA gate starts afresh');
select is((select array_agg(trigger order by id) from public.delivery_history where delivery_id = (select id from ids where name = 'trip')),
  array['fail', 'reopen'], 'the history records the reopening');
select is((select actor_id from public.delivery_history where delivery_id = (select id from ids where name = 'trip') and trigger = 'reopen'),
  (select (a ->> 'legacy_admin')::uuid from t), 'the history names who reopened it');

-- Offered again: every driver of the company sees it, and one takes it.
select tests.act_as_member(a, 'driver2') from t;
select is((select count(*)::int from public.deliveries where id = (select id from ids where name = 'trip')), 1,
  'another driver now sees the reopened delivery');
select is((public.accept_delivery((select id from ids where name = 'trip'))).driver_id,
  (select (a ->> 'driver2_id')::uuid from t), 'another driver takes the second attempt');
select is((public.start_delivery((select id from ids where name = 'trip'))).status, 'in_progress', 'and sets off');
select is((public.complete_delivery((select id from ids where name = 'trip'))).attempts, 2, 'and completes it on attempt 2');
select tests.reset_role();
select is((select array_agg(driver_id) from public.wallet_entries where delivery_id = (select id from ids where name = 'trip')),
  array[(select (a ->> 'driver2_id')::uuid from t)], 'only the driver who delivered is credited');
select tests.act_as_member(a, 'driver') from t;
select is_empty($$ select 1 from public.deliveries where id = (select id from ids where name = 'trip') $$,
  'the driver of the failed attempt no longer sees it once another has it');

-- Cancel and refund from failed ----------------------------------------------------

select tests.reset_role();
insert into ids select 'failed-pix', (tests.delivery_in(a, 'failed', 'pix', gateway_payment_id => 'pay_failed_1')).id from t;
insert into ids select 'failed-cancel', (tests.delivery_in(a, 'failed', 'invoice')).id from t;
select tests.act_as_member(a, 'admin') from t;
select is((public.cancel_delivery((select id from ids where name = 'failed-cancel'), 'client gave up')).status,
  'cancelled', 'an admin cancels a failed delivery');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.cancel_delivery((select id from ids where name = 'failed-pix')) $$,
  'PT403', 'role driver may not do this', 'a driver may not cancel a failed delivery');
select tests.act_as_service_role();
select is(public.apply_payment_event((select (a ->> 'company_id')::uuid from t), 'PAYMENT_REFUNDED', 'pay_failed_1', null) ->> 'result',
  'processed', 'a refund of a failed delivery is applied');
select tests.reset_role();
select is((select status || '/' || payment_status from public.deliveries where id = (select id from ids where name = 'failed-pix')),
  'cancelled/refunded', 'a refunded failed delivery is cancelled');

-- Broadcasts: the company hears of the failure; the reopened delivery is offered to every driver.
insert into ids select 'again', (tests.delivery_in(a, 'failed', 'invoice')).id from t;
delete from realtime.messages;
select tests.act_as_member(a, 'owner') from t;
select public.reopen_delivery((select id from ids where name = 'again'));
select tests.reset_role();
select is(
  (select array_agg(m.event || ' ' || (m.topic = 'company:' || (a ->> 'company_id')) order by m.event, m.topic)
   from realtime.messages m, t where m.payload ->> 'id' = (select id::text from ids where name = 'again') and m.topic not like 'track:%'),
  array['delivery_available false', 'delivery_available false', 'delivery_updated true'],
  'reopening tells the company and offers the delivery to both drivers');

-- The driver's failure reaches the company with its reason.
insert into ids select 'told', (tests.delivery_in(a, 'in_progress', 'invoice')).id from t;
delete from realtime.messages;
select tests.act_as_member(a, 'driver') from t;
select public.fail_delivery((select id from ids where name = 'told'), 'damaged', 'caixa molhada');
select tests.reset_role();
select is(
  (select m.payload ->> 'failure_reason' || ' ' || (m.payload ->> 'failure_note') from realtime.messages m, t
   where m.topic = 'company:' || (a ->> 'company_id') and m.payload ->> 'id' = (select id::text from ids where name = 'told')),
  'damaged caixa molhada', 'the company''s broadcast carries the reason and the note');

select * from finish();
rollback;
