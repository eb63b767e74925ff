-- Every company and driver move from every state: allowed ones land in the
-- right state, refused ones raise PT422 naming both states. Then the side
-- effects of the moves (timestamps, driver link, history) and the two-accepts
-- race as far as one session can show it.
begin;
select plan(53);

create temp table t as select tests.create_tenant('moves-a') as a, tests.create_tenant('moves-b') as b;
grant select on t to public;

-- Tries `trigger` on a fresh delivery in `status` as the role that may ask for
-- it: the new status, or the error as `SQLSTATE: message`.
create function pg_temp.try_move(trigger text, status text) returns text
language sql as $$ select tests.try_move((select a from t), (tests.delivery_in((select a from t), status)).id, trigger) $$;

-- accept (driver)
select is(pg_temp.try_move('accept', 'awaiting_payment'), 'PT422: delivery cannot move from awaiting_payment to accepted', 'accept: awaiting_payment refused');
select is(pg_temp.try_move('accept', 'pending'), 'accepted', 'accept: pending -> accepted');
select is(pg_temp.try_move('accept', 'accepted'), 'PT422: delivery cannot move from accepted to accepted', 'accept: accepted refused');
select is(pg_temp.try_move('accept', 'in_progress'), 'PT422: delivery cannot move from in_progress to accepted', 'accept: in_progress refused');
select is(pg_temp.try_move('accept', 'completed'), 'PT422: delivery cannot move from completed to accepted', 'accept: completed refused');
select is(pg_temp.try_move('accept', 'cancelled'), 'PT422: delivery cannot move from cancelled to accepted', 'accept: cancelled refused');

-- assign (owner)
select is(pg_temp.try_move('assign', 'awaiting_payment'), 'PT422: delivery cannot move from awaiting_payment to accepted', 'assign: awaiting_payment refused');
select is(pg_temp.try_move('assign', 'pending'), 'accepted', 'assign: pending -> accepted');
select is(pg_temp.try_move('assign', 'accepted'), 'PT422: delivery cannot move from accepted to accepted', 'assign: accepted refused');
select is(pg_temp.try_move('assign', 'in_progress'), 'PT422: delivery cannot move from in_progress to accepted', 'assign: in_progress refused');
select is(pg_temp.try_move('assign', 'completed'), 'PT422: delivery cannot move from completed to accepted', 'assign: completed refused');
select is(pg_temp.try_move('assign', 'cancelled'), 'PT422: delivery cannot move from cancelled to accepted', 'assign: cancelled refused');

-- start (linked driver)
select is(pg_temp.try_move('start', 'awaiting_payment'), 'PT422: delivery cannot move from awaiting_payment to in_progress', 'start: awaiting_payment refused');
select is(pg_temp.try_move('start', 'pending'), 'PT422: delivery cannot move from pending to in_progress', 'start: pending refused');
select is(pg_temp.try_move('start', 'accepted'), 'in_progress', 'start: accepted -> in_progress');
select is(pg_temp.try_move('start', 'in_progress'), 'PT422: delivery cannot move from in_progress to in_progress', 'start: in_progress refused');
select is(pg_temp.try_move('start', 'completed'), 'PT422: delivery cannot move from completed to in_progress', 'start: completed refused');
select is(pg_temp.try_move('start', 'cancelled'), 'PT422: delivery cannot move from cancelled to in_progress', 'start: cancelled refused');

-- complete (linked driver)
select is(pg_temp.try_move('complete', 'awaiting_payment'), 'PT422: delivery cannot move from awaiting_payment to completed', 'complete: awaiting_payment refused');
select is(pg_temp.try_move('complete', 'pending'), 'PT422: delivery cannot move from pending to completed', 'complete: pending refused');
select is(pg_temp.try_move('complete', 'accepted'), 'PT422: delivery cannot move from accepted to completed', 'complete: accepted refused');
select is(pg_temp.try_move('complete', 'in_progress'), 'completed', 'complete: in_progress -> completed');
select is(pg_temp.try_move('complete', 'completed'), 'PT422: delivery cannot move from completed to completed', 'complete: completed refused');
select is(pg_temp.try_move('complete', 'cancelled'), 'PT422: delivery cannot move from cancelled to completed', 'complete: cancelled refused');

-- cancel (owner)
select is(pg_temp.try_move('cancel', 'awaiting_payment'), 'cancelled', 'cancel: awaiting_payment -> cancelled');
select is(pg_temp.try_move('cancel', 'pending'), 'cancelled', 'cancel: pending -> cancelled');
select is(pg_temp.try_move('cancel', 'accepted'), 'cancelled', 'cancel: accepted -> cancelled');
select is(pg_temp.try_move('cancel', 'in_progress'), 'PT422: delivery cannot move from in_progress to cancelled', 'cancel: in_progress refused');
select is(pg_temp.try_move('cancel', 'completed'), 'PT422: delivery cannot move from completed to cancelled', 'cancel: completed refused');
select is(pg_temp.try_move('cancel', 'cancelled'), 'PT422: delivery cannot move from cancelled to cancelled', 'cancel: cancelled refused');

-- Who may ask ----------------------------------------------------------------------

create temp table ids (name text primary key, id uuid);
grant select on ids to public;
insert into ids select 'pending', (tests.delivery_in(a, 'pending')).id from t;
insert into ids select 'accepted', (tests.delivery_in(a, 'accepted')).id from t;

select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select to_jsonb(public.accept_delivery((select id from ids where name = 'pending'))) $$,
  'PT403', 'role company_owner may not do this', 'an owner may not accept');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok($$ select to_jsonb(public.assign_delivery((select id from ids where name = 'pending'), (select (a ->> 'driver_id')::uuid from t))) $$,
  'PT403', 'role admin may not do this', 'a legacy admin may not assign');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.cancel_delivery((select id from ids where name = 'pending'))) $$,
  'PT403', 'role driver may not do this', 'a driver may not cancel');
select tests.act_as_member(b, 'owner') from t;
select throws_ok($$ select to_jsonb(public.cancel_delivery((select id from ids where name = 'pending'))) $$,
  'PT404', 'delivery not found', 'another company''s owner gets 404, not 403');
select tests.act_as_member(b, 'driver') from t;
select throws_ok($$ select to_jsonb(public.accept_delivery((select id from ids where name = 'pending'))) $$,
  'PT404', 'delivery not found', 'another company''s driver gets 404');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok($$ select to_jsonb(public.start_delivery((select id from ids where name = 'accepted'))) $$,
  'PT404', 'delivery not found', 'another driver''s accepted delivery is 404 to a driver');
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select to_jsonb(public.assign_delivery((select id from ids where name = 'pending'), (select (b ->> 'driver_id')::uuid from t))) $$,
  'PT404', 'driver not found', 'assigning to another company''s driver is 404');
select tests.reset_role();
update public.drivers set active = false where id = (select (a ->> 'driver2_id')::uuid from t);
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select to_jsonb(public.assign_delivery((select id from ids where name = 'pending'), (select (a ->> 'driver2_id')::uuid from t))) $$,
  'PT422', 'driver is deactivated', 'assigning to a deactivated driver is 422');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok($$ select to_jsonb(public.accept_delivery((select id from ids where name = 'pending'))) $$,
  'PT403', 'this driver is deactivated', 'a deactivated driver may not accept');
select tests.reset_role();
update public.drivers set active = true where id = (select (a ->> 'driver2_id')::uuid from t);

-- Two drivers, one pending delivery: the first wins, the second gets 422 ----------

select tests.act_as_member(a, 'driver') from t;
select is(to_jsonb(public.accept_delivery((select id from ids where name = 'pending'))) ->> 'driver_id',
  (select a ->> 'driver_id' from t), 'the first driver to accept gets the delivery');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok($$ select to_jsonb(public.accept_delivery((select id from ids where name = 'pending'))) $$,
  'PT422', 'another driver already took this delivery', 'the second driver to accept gets 422, told why');
select tests.reset_role();

-- What a move records --------------------------------------------------------------

select isnt((select accepted_at from public.deliveries where id = (select id from ids where name = 'pending')), null,
  'accepting stamps accepted_at');
select results_eq(
  $$ select trigger, from_status, to_status, from_payment_status, to_payment_status, actor_id
     from public.delivery_history where delivery_id = (select id from ids where name = 'pending') $$,
  $$ select 'accept', 'pending', 'accepted', 'received', 'received', (a ->> 'driver')::uuid from t $$,
  'the history records who moved it, from where to where');

select tests.act_as_member(a, 'driver') from t;
select is(to_jsonb(public.start_delivery((select id from ids where name = 'pending'))) ->> 'status', 'in_progress', 'the winner starts it');
select is(to_jsonb(public.complete_delivery((select id from ids where name = 'pending'))) ->> 'status', 'completed', 'and completes it');
select tests.reset_role();
select isnt((select started_at from public.deliveries where id = (select id from ids where name = 'pending')), null,
  'starting stamps started_at');
select isnt((select completed_at from public.deliveries where id = (select id from ids where name = 'pending')), null,
  'completing stamps completed_at');
select is((select array_agg(to_status order by id) from public.delivery_history where delivery_id = (select id from ids where name = 'pending')),
  array['accepted', 'in_progress', 'completed'], 'each move adds one history row');

select tests.act_as_member(a, 'admin') from t;
select is(to_jsonb(public.cancel_delivery((select id from ids where name = 'accepted'), 'client gave up')) ->> 'cancel_reason',
  'client gave up', 'cancelling keeps the reason');
select tests.reset_role();
select isnt((select cancelled_at from public.deliveries where id = (select id from ids where name = 'accepted')), null,
  'cancelling stamps cancelled_at');
select is((select actor_id from public.delivery_history where delivery_id = (select id from ids where name = 'accepted')),
  (select (a ->> 'admin')::uuid from t), 'the history names the admin who cancelled');

-- The history is the company managers' to read.
select tests.act_as_member(a, 'driver') from t;
select is_empty($$ select 1 from public.delivery_history $$, 'a driver does not read the history');
select tests.act_as_member(b, 'owner') from t;
select is_empty($$ select 1 from public.delivery_history $$, 'another company does not read the history');
select tests.reset_role();

select * from finish();
rollback;
