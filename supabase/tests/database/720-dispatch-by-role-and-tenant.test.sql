-- Dispatch under row-level security, for every role and a foreign company: the settings (owner and admin,
-- within their bounds), the record of rounds and offers (the company's managers; never drivers, never another
-- company), the queue (nobody but the service role's functions), an offer seen and declined only by its
-- holder, and the dispatch function's calls refused to users.
begin;
select plan(33);

create temp table t as select tests.create_tenant('dsp3-a') as a, tests.create_tenant('dsp3-b') as b;
grant select on t to public;
create temp table o (delivery uuid, open uuid);
grant select on o to public;

select tests.act_as_member(a, 'owner') from t;
select public.set_dispatch_settings('offer', 45, 1, 1, 10);
select tests.reset_role();
select tests.place_driver((a ->> 'driver_id')::uuid, 1.0) from t;
select tests.place_driver((a ->> 'driver2_id')::uuid, 2.0) from t;
select tests.place_driver((b ->> 'driver_id')::uuid, 0.1) from t;
-- One delivery offered to driver (driver2 is not offered it), one open to every driver (b broadcasts).
insert into o select tests.create_delivery(a), null from t;
select tests.complete_dispatch(tests.claim_dispatch((select delivery from o)), '[100, 200]');
update o set open = (select (tests.delivery_in(b, 'pending', 'invoice')).id from t);

-- What each member of each company sees: "<role> <rows of settings>/<rounds>/<offers>".
create function pg_temp.seen(tenant text, member text) returns text
language plpgsql as $$
declare
  seen text;
begin
  perform tests.act_as_member((select case seen.tenant when 'a' then a else b end from t), seen.member);
  seen := format('%s/%s/%s', (select count(*) from public.dispatch_settings), (select count(*) from public.dispatch_rounds),
    (select count(*) from public.dispatch_offers));
  perform tests.reset_role();
  return seen;
end;
$$;

-- Settings ---------------------------------------------------------------------------------------------------

select is(pg_temp.seen('a', 'owner'), '1/1/1', 'the owner reads the settings, the rounds and the offers of its company');
select is(pg_temp.seen('a', 'admin'), '1/1/1', 'so does the admin');
select is(pg_temp.seen('a', 'legacy_admin'), '0/1/1', 'the legacy admin reads the rounds and offers, not the settings');
select is(pg_temp.seen('a', 'driver'), '0/0/0', 'a driver reads none of them, not even its own offer');
select is(pg_temp.seen('a', 'driver2'), '0/0/0', 'nor does another driver');
select is(pg_temp.seen('b', 'owner'), '0/0/0', 'another company''s owner reads none of them');
select is(pg_temp.seen('b', 'driver'), '0/0/0', 'nor its drivers');

select tests.act_as_member(a, 'admin') from t;
select is(to_jsonb(public.get_dispatch_settings()),
  '{"mode": "offer", "offer_timeout_s": 45, "offer_batch": 1, "max_active_per_driver": 1, "max_distance_km": 10}'::jsonb,
  'the admin reads what the owner set');
select is((public.set_dispatch_settings(offer_batch => 3)).offer_batch, 3, 'and changes one setting, keeping the others');
select is((public.get_dispatch_settings()).offer_timeout_s, 45, 'the others are kept');
select throws_ok($$ select public.set_dispatch_settings('first_come') $$, 'PT400', 'mode must be broadcast, offer, auto or routes',
  'an unknown mode is 400');
select throws_ok($$ select public.set_dispatch_settings(offer_timeout_s => 5) $$, 'PT400', 'offer_timeout_s must be between 10 and 600',
  'a timeout under 10 s is 400');
select throws_ok($$ select public.set_dispatch_settings(offer_batch => 21) $$, 'PT400', 'offer_batch must be between 1 and 20',
  'a batch over 20 is 400');
select throws_ok($$ select public.set_dispatch_settings(max_active_per_driver => 0) $$, 'PT400',
  'max_active_per_driver must be between 1 and 20', 'a limit under 1 is 400');
select throws_ok($$ select public.set_dispatch_settings(max_distance_km => 250) $$, 'PT400',
  'max_distance_km must be between 0.5 and 200', 'a radius over 200 km is 400');
select tests.act_as_member(b, 'owner') from t;
select is((public.get_dispatch_settings()).mode, 'broadcast', 'a company that chose nothing broadcasts, the default');
select is(to_jsonb(public.get_dispatch_settings()) - 'mode',
  '{"offer_timeout_s": 60, "offer_batch": 1, "max_active_per_driver": 1, "max_distance_km": 20}'::jsonb,
  'with the default limits');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ update public.dispatch_settings set mode = 'broadcast' $$, '42501', null,
  'nobody writes the settings but through the function');
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ insert into public.dispatch_offers (delivery_id, company_id, driver_id, attempt, round, expires_at)
  values (gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 1, 1, now() + interval '1 minute') $$, '42501', null,
  'nor the offers');

-- The queue and the function's calls ----------------------------------------------------------------------------

select throws_ok($$ select count(*) from private.dispatch_queue $$, '42501', null, 'the queue is out of the users'' reach');
select throws_ok($$ select public.claim_dispatches(1) $$, '42501', null, 'users may not claim rounds');
select throws_ok($$ select public.complete_dispatch(gen_random_uuid(), gen_random_uuid()) $$, '42501', null,
  'nor complete them');

-- The log, by role ------------------------------------------------------------------------------------------

select is((select cardinality((public.get_delivery_dispatch((select delivery from o))).offers)), 1,
  'the owner reads the delivery''s dispatch');
select tests.act_as_member(a, 'legacy_admin') from t;
select is((select (public.get_delivery_dispatch((select delivery from o))).rounds[1].outcome), 'offered', 'so does the legacy admin');
select tests.act_as_member(b, 'admin') from t;
select throws_ok($$ select public.get_delivery_dispatch((select delivery from o)) $$, 'PT404', 'delivery not found',
  'another company''s admin gets 404');

-- The offer, by driver -------------------------------------------------------------------------------------------

select tests.act_as_member(a, 'driver') from t;
select is((select count(*)::int from public.deliveries where id = (select delivery from o)), 1, 'the offered driver sees the delivery');
select tests.act_as_member(a, 'driver2') from t;
select is((select count(*)::int from public.deliveries where id = (select delivery from o)), 0, 'the other driver does not');
select throws_ok($$ select public.decline_delivery((select delivery from o)) $$, 'PT404', 'delivery not found',
  'nor may it decline it');
select tests.act_as_member(b, 'driver') from t;
select is((select count(*)::int from public.deliveries where id = (select delivery from o)), 0, 'nor does another company''s driver');
select throws_ok($$ select public.decline_delivery((select delivery from o)) $$, 'PT404', 'delivery not found',
  'who may not decline it either');
select throws_ok($$ select public.decline_delivery((select open from o)) $$, 'PT422', 'this delivery was not offered to you',
  'a delivery open to every driver is not an offer to decline: 422');
select tests.act_as_member(a, 'driver') from t;
select is((public.decline_delivery((select delivery from o))).id, (select delivery from o), 'the offered driver declines it');
select throws_ok($$ select public.decline_delivery((select delivery from o)) $$, 'PT422',
  'the offer of this delivery was already declined', 'once');

select * from finish();
rollback;
