-- What issue 37 changed in how the database does its work, held: the transactions whose loss to a crash costs
-- nothing (a position, a dispatch claim) commit without waiting for the WAL flush, and nothing else does; the
-- positions' index point is earthdistance's point; the service role still writes positions; a settings reader
-- keeps the defaults it computed, and computes them again once they change.
begin;
select plan(11);

create temp table t as select tests.create_tenant('uc') as a;
grant select on t to public;

-- A location update: its transaction's commit does not wait.
select tests.act_as_member(a, 'driver') from t;
select is(current_setting('synchronous_commit'), 'on', 'a transaction commits durably by default');
select lives_ok('select public.update_my_location(-23.55, -46.63)', 'a driver sends a position');
select is(current_setting('synchronous_commit'), 'off', 'and the rest of its transaction commits without waiting for the flush');
select tests.reset_role();
set local synchronous_commit = on;

-- Creating a delivery is durable; claiming its round is not.
select tests.place_driver((a ->> 'driver_id')::uuid, 1) from t;
insert into public.dispatch_settings (company_id, mode, offer_timeout_s, offer_batch, max_active_per_driver,
  max_distance_km) select (a ->> 'company_id')::uuid, 'offer', 60, 1, 1, 20 from t;
create temp table d as select tests.create_delivery(a) as id from t;
grant select on d to public;
select is(current_setting('synchronous_commit'), 'on', 'creating a delivery commits durably');
select isnt(tests.claim_dispatch(id), null, 'the dispatch function claims its round') from d;
select is(current_setting('synchronous_commit'), 'off', 'and a claim, a lease, commits without waiting for the flush');
set local synchronous_commit = on;

-- The index point: ll_to_earth's point, to the millimetre.
select is(
  (select max(extensions.cube_distance(private.earth_point(lat, lng), extensions.ll_to_earth(lat, lng)))
   from (values (-23.55, -46.63), (0, 0), (89.9, 179.9), (-33.9, 151.2), (51.5, -0.12)) p (lat, lng)) < 0.001,
  true, 'private.earth_point is earthdistance''s ll_to_earth, within a millimetre');

-- The service role writes a position directly (the index point is computed with its owner's rights).
select tests.act_as_service_role();
select lives_ok(format('update public.driver_locations set lat = -23.56, updated_at = now() where driver_id = %L',
  (select a ->> 'driver_id' from t)), 'the service role moves a driver''s position itself');
select tests.reset_role();

-- A company's settings without a row of its own are the table's column defaults, kept for the session and read
-- again once a migration changes one.
create temp table t2 as select tests.create_tenant('uc2') as a;
grant select on t2 to public;
select is((private.dispatch_settings_of((a ->> 'company_id')::uuid)).offer_timeout_s, 60,
  'a company without dispatch settings has the column default') from t2;
select is((private.dispatch_settings_of((a ->> 'company_id')::uuid)).offer_timeout_s, 60,
  'read again, from what the session kept') from t2;
alter table public.dispatch_settings alter column offer_timeout_s set default 45;
select is((private.dispatch_settings_of((a ->> 'company_id')::uuid)).offer_timeout_s, 45,
  'a changed default is read at once') from t2;

select * from finish();
rollback;
