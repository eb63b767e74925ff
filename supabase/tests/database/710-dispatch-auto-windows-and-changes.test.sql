-- Dispatch beyond one offer (14_dispatch.sql): `auto` assigns the best-ranked driver at once (as assign,
-- delivery_updated to the driver), never past a driver's limit when two rounds want it, and with nobody
-- eligible leaves the delivery unassigned and open to every driver; a batch of two offers, of which one
-- accept wins; a delivery whose window is far waits for it; a reopened delivery is dispatched again; an
-- accept that brings a driver to its limit, a deactivation, a cancellation, an assignment by hand and a
-- return to broadcast each take back the offers they make moot; a claim overtaken changes nothing.
begin;
select plan(31);

create temp table t as select tests.create_tenant('dsp2-a') as a;
grant select on t to public;
create temp table names (name text primary key, id uuid);
grant select on names to public;
insert into names select 'driver', (a ->> 'driver_id')::uuid from t;
insert into names select 'driver2', (a ->> 'driver2_id')::uuid from t;
insert into names select 'driver3', (tests.add_driver((a ->> 'company_id')::uuid, 'Third', 'dsp2-third@tests.example') ->> 'driver_id')::uuid from t;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;

create function pg_temp.driver(name text) returns uuid language sql as $$ select id from names where name = driver.name $$;
create function pg_temp.delivery(name text) returns uuid language sql as $$ select id from ids where name = delivery.name $$;
grant execute on function pg_temp.driver(text), pg_temp.delivery(text) to public;
create function pg_temp.new_delivery(name text, window_start timestamptz default null) returns uuid
language sql as $$
  insert into ids select new_delivery.name, tests.create_delivery(a, new_delivery.window_start,
    new_delivery.window_start + interval '2 hours') from t returning id
$$;
create function pg_temp.settings(mode text, offer_batch integer default 1, max_active integer default 1) returns void
language plpgsql as $$
begin
  perform tests.act_as_member((select a from t), 'admin');
  perform public.set_dispatch_settings(settings.mode, 60, settings.offer_batch, settings.max_active, 20);
  perform tests.reset_role();
end;
$$;
-- One round of dispatch of a delivery with these road durations: its outcome.
create function pg_temp.round(delivery uuid, durations jsonb) returns jsonb
language sql as $$ select tests.complete_dispatch(tests.claim_dispatch(round.delivery), round.durations) $$;
create function pg_temp.status(name text) returns text[]
language sql as $$
  select array[d.status, d.dispatch_status, n.name] from public.deliveries d left join names n on n.id = d.driver_id
  where d.id = pg_temp.delivery(status.name)
$$;
create function pg_temp.live_offers(name text) returns text[]
language sql as $$
  select coalesce(array_agg(n.name order by n.name), '{}') from public.dispatch_offers o join names n on n.id = o.driver_id
  where o.delivery_id = pg_temp.delivery(live_offers.name) and o.outcome is null
$$;

select tests.place_driver(pg_temp.driver('driver'), 1.0);
select tests.place_driver(pg_temp.driver('driver2'), 2.0);
select tests.place_driver(pg_temp.driver('driver3'), 3.0);

-- auto ---------------------------------------------------------------------------------------------------

select pg_temp.settings('auto');
select pg_temp.new_delivery('auto-1');
select pg_temp.new_delivery('auto-2');
delete from realtime.messages;
-- Both rounds claimed (by one claim) before either ends: each ranks driver first.
create temp table jobs as select tests.claim_dispatch(pg_temp.delivery('auto-1')) as one,
  (select jsonb_build_object('delivery_id', delivery_id, 'claim', claim) from private.dispatch_queue
   where delivery_id = pg_temp.delivery('auto-2')) as two;
select is((select tests.complete_dispatch(one, '[60, 120, 180]') from jobs) ->> 'result', 'assigned', 'auto assigns at once');
select is(pg_temp.status('auto-1'), array['accepted', 'assigned', 'driver'], 'to the best-ranked driver: accepted, linked');
select is((select array_agg(m.event) from realtime.messages m where m.topic = 'driver:' || pg_temp.driver('driver')),
  array['delivery_updated'], 'who is told with delivery_updated, as when a manager assigns');
select is((select trigger from public.delivery_history where delivery_id = pg_temp.delivery('auto-1') order by id desc limit 1),
  'assign', 'recorded as an assignment');
select is((select tests.complete_dispatch(two, '[60, 120, 180]') from jobs) -> 'drivers', jsonb_build_array(pg_temp.driver('driver2')),
  'a round that ranked a driver now at its limit assigns the next one');
select is((select array[c.rank::text, c.left_out] from public.dispatch_rounds r, unnest(r.candidates) c
  where r.delivery_id = pg_temp.delivery('auto-2') and c.driver_id = pg_temp.driver('driver')), array['1', 'at_limit'],
  'and records why the first-ranked driver was passed over');
select is((select array[outcome, (driver_id = pg_temp.driver('driver2'))::text] from public.dispatch_rounds
  where delivery_id = pg_temp.delivery('auto-2')), array['assigned', 'true'], 'the round names the driver it assigned');

select pg_temp.new_delivery('auto-3');
select tests.complete_dispatch(tests.claim_dispatch(pg_temp.delivery('auto-3')), '[60]');
select pg_temp.new_delivery('auto-4');
delete from realtime.messages;
select is(pg_temp.round(pg_temp.delivery('auto-4'), '[]') ->> 'result', 'unassigned',
  'every driver at its limit: auto leaves the delivery unassigned');
select is(pg_temp.status('auto-4'), array['pending', 'unassigned', null], 'pending, flagged unassigned');
select is((select count(*)::int from realtime.messages where event = 'delivery_available'), 3,
  'and offered to every driver of the company, as in broadcast');

-- A batch of two: one accept wins -------------------------------------------------------------------------

select pg_temp.settings('offer', offer_batch => 2, max_active => 3);
select pg_temp.new_delivery('batch');
select pg_temp.round(pg_temp.delivery('batch'), '[100, 50, 150]');
select is(pg_temp.live_offers('batch'), array['driver', 'driver2'], 'offer_batch 2: the two best hold offers at once');
select tests.act_as_member(a, 'driver2') from t;
select is((public.accept_delivery(pg_temp.delivery('batch'))).status, 'accepted', 'the first to accept takes it');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.accept_delivery(pg_temp.delivery('batch')) $$, 'PT422',
  'another driver already took this delivery', 'the other, too late, gets 422: another driver took it');
select tests.reset_role();
select is((select array_agg(outcome order by outcome) from public.dispatch_offers where delivery_id = pg_temp.delivery('batch')),
  array['accepted', 'withdrawn'], 'its offer was withdrawn');

-- Windows -------------------------------------------------------------------------------------------------

select pg_temp.new_delivery('later', now() + interval '3 hours');
select is((select due_at from private.dispatch_queue where delivery_id = pg_temp.delivery('later')), now() + interval '2 hours',
  'a delivery whose window opens in 3 hours waits for its round until an hour before');
select is(tests.claim_dispatch(pg_temp.delivery('later')), null, 'it is not claimed before then');
update private.dispatch_queue set due_at = now() where delivery_id = pg_temp.delivery('later');
-- (now() stands still in this transaction: the window is moved instead of the clock.)
update public.deliveries set window_start = now() + interval '59 minutes 30 seconds' where id = pg_temp.delivery('later');
select is(pg_temp.round(pg_temp.delivery('later'), '[10, 20, 30]') ->> 'result', 'offered', 'once due, it is offered');
select is(private.announce_open_windows(), 0, 'and the window pass leaves it to dispatch');

-- Reopened: dispatched again --------------------------------------------------------------------------------

insert into ids select 'failed', (tests.delivery_in(a, 'failed', 'invoice')).id from t;
select tests.act_as_member(a, 'owner') from t;
select public.reopen_delivery(pg_temp.delivery('failed'));
select tests.reset_role();
select is(pg_temp.status('failed'), array['pending', 'queued', null], 'a reopened delivery enters dispatch again');
select is(pg_temp.round(pg_temp.delivery('failed'), '[10, 20, 30]') ->> 'result', 'offered', 'and is offered');
select is((select array_agg(distinct attempt) from public.dispatch_offers where delivery_id = pg_temp.delivery('failed')), array[2],
  'its offers belong to the new attempt');

-- What takes offers back ------------------------------------------------------------------------------------

-- An accept that brings a driver to its limit: its other live offers go to the next drivers.
select pg_temp.settings('offer', offer_batch => 1, max_active => 2);
-- (A claim takes every round due: each delivery is created once the round before has ended.)
select pg_temp.new_delivery('lim-1');
select pg_temp.round(pg_temp.delivery('lim-1'), '[10, 30]');
select pg_temp.new_delivery('lim-2');
select pg_temp.round(pg_temp.delivery('lim-2'), '[10, 30]');
select tests.act_as_member(a, 'driver') from t;
select is((public.accept_delivery(pg_temp.delivery('lim-1'))).status, 'accepted', 'driver accepts one of two offers, reaching its limit');
select tests.reset_role();
select is((select array_agg(outcome) from public.dispatch_offers where delivery_id = pg_temp.delivery('lim-2')), array['withdrawn'],
  'its other offer is withdrawn');
select ok(tests.claim_dispatch(pg_temp.delivery('lim-2')) is not null, 'and that delivery''s next round is due');

-- A deactivated driver's offers go; a cancelled delivery's offers go.
select pg_temp.new_delivery('deact');
select pg_temp.round(pg_temp.delivery('deact'), '[30]');
update public.drivers set active = false where id = pg_temp.driver('driver3');
select is(pg_temp.live_offers('deact'), '{}'::text[], 'a deactivated driver''s offers are withdrawn');
update public.drivers set active = true where id = pg_temp.driver('driver3');
select pg_temp.new_delivery('cancel');
select pg_temp.round(pg_temp.delivery('cancel'), '[30]');
select tests.act_as_member(a, 'admin') from t;
select public.cancel_delivery(pg_temp.delivery('cancel'));
select tests.reset_role();
select is((select array[o.outcome, d.dispatch_status] from public.dispatch_offers o join public.deliveries d on d.id = o.delivery_id
  where o.delivery_id = pg_temp.delivery('cancel')), array['withdrawn', null], 'cancelling withdraws the offer');

-- A claim overtaken by a newer one changes nothing.
select pg_temp.new_delivery('stale');
create temp table stale as select tests.claim_dispatch(pg_temp.delivery('stale')) as job;
select private.queue_dispatch(pg_temp.delivery('stale'), now());
select is((select tests.complete_dispatch(job, '[1]') from stale) ->> 'result', 'stale', 'an overtaken claim is stale');
select is(pg_temp.status('stale'), array['pending', 'queued', null], 'and offers nothing');

-- Back to broadcast: what dispatch held is open to every driver.
select pg_temp.round(pg_temp.delivery('stale'), '[30]');
delete from realtime.messages;
select pg_temp.settings('broadcast');
select is(pg_temp.status('stale'), array['pending', null, null], 'back to broadcast, an offered delivery leaves dispatch');
select is(pg_temp.live_offers('stale'), '{}'::text[], 'its offer is withdrawn');
select is((select count(*)::int from realtime.messages where event = 'delivery_available'
  and payload ->> 'id' = pg_temp.delivery('stale')::text), 3, 'and every driver is told it is available');

select * from finish();
rollback;
