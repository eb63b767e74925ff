-- Money at the door (17_cash.sql): what a delivery collects, what completion then
-- requires and records, the drivers' cash ledger (append-only, every entry under
-- RLS, settlements never above what is outstanding, under the driver's cash lock),
-- and the recipient's handover code (09_proof.sql): never readable by a driver,
-- wrong attempts counted and committed, locked after 5, a manager's override.
begin;
select plan(70);

create extension if not exists pgrowlocks with schema extensions;
create temp table t as select tests.create_tenant('cash-a') as a, tests.create_tenant('cash-b') as b;
create temp table ids (name text primary key, id uuid);
grant all on t, ids to public;

-- Deliveries created as the edge creates them (service role), with what they collect.
create function pg_temp.new_delivery(collect_amount numeric, collect_method text, change_for numeric default null)
returns uuid language sql as $$
  select tests.create_delivery(a, driver_id => (a ->> 'driver_id')::uuid, collect_amount => new_delivery.collect_amount,
    collect_method => new_delivery.collect_method, collect_change_for => new_delivery.change_for) from t
$$;
create function pg_temp.started(name text) returns void language plpgsql as $$
begin
  perform tests.act_as_member(a, 'driver') from t;
  perform public.start_delivery((select id from ids where ids.name = started.name));
  perform tests.reset_role();
end $$;
create function pg_temp.id(name text) returns uuid language sql as $$ select id from ids where ids.name = id.name $$;
create function pg_temp.driver(tenant text, member text default 'driver_id') returns uuid language sql
  as $$ select ((case tenant when 'a' then a else b end) ->> member)::uuid from t $$;
grant execute on all functions in schema pg_temp to public;

-- Section: collect on create

insert into ids values ('cash', pg_temp.new_delivery(57.50, 'cash', 100.00));
select tests.act_as_member(a, 'driver') from t;
select is(to_jsonb(public.get_delivery(pg_temp.id('cash'))) -> 'collect',
  '{"amount": 57.50, "method": "cash", "change_for": 100.00, "change_due": 42.50}'::jsonb,
  'the driver sees what to collect and the change to bring');
select tests.reset_role();
select tests.act_as_service_role();
select throws_ok($$ select public.create_delivery(gen_random_uuid(), (select (a ->> 'company_id')::uuid from t), null, 'invoice',
  'O', 0, 0, 'D', 0, 0, 1, 1, collect_amount => 10, collect_method => 'card', collect_change_for => 20) $$,
  'PT400', null, 'change only for cash');
select throws_ok($$ select public.create_delivery(gen_random_uuid(), (select (a ->> 'company_id')::uuid from t), null, 'invoice',
  'O', 0, 0, 'D', 0, 0, 1, 1, collect_amount => 10, collect_method => 'cash', collect_change_for => 5) $$,
  'PT400', null, 'change for less than the amount is refused');
select throws_ok($$ select public.create_delivery(gen_random_uuid(), (select (a ->> 'company_id')::uuid from t), null, 'invoice',
  'O', 0, 0, 'D', 0, 0, 1, 1, collect_amount => 10.001, collect_method => 'cash') $$,
  'PT400', null, 'more than 2 decimals is refused');
select throws_ok($$ select public.create_delivery(gen_random_uuid(), (select (a ->> 'company_id')::uuid from t), null, 'invoice',
  'O', 0, 0, 'D', 0, 0, 1, 1, collect_amount => 10, collect_method => 'pix') $$,
  'PT400', null, 'cash or card only');
select tests.reset_role();

-- Section: collect rules on complete

select pg_temp.started('cash');
select tests.act_as_member(a, 'driver') from t;
select throws_ok(format('select public.complete_delivery(%L)', pg_temp.id('cash')), 'PT422', null,
  'completing without what was collected is 422');
select throws_ok(format('select public.complete_delivery(%L, collected_amount => 57.50, collected_method => %L)', pg_temp.id('cash'), 'cheque'),
  'PT400', null, 'an unknown method is 400');
select is((to_jsonb(public.complete_delivery(pg_temp.id('cash'), collected_amount => 50.00, collected_method => 'cash'))
  - array(select k from jsonb_object_keys(to_jsonb(public.get_delivery(pg_temp.id('cash')))) k where k not in ('collected', 'collect_mismatch', 'status'))),
  '{"status": "completed", "collected": {"amount": 50.00, "method": "cash"}, "collect_mismatch": true}'::jsonb,
  'another amount is recorded as reported and flagged');
select tests.reset_role();
select is((select array[kind, amount::text] from public.cash_entries where delivery_id = pg_temp.id('cash')),
  array['collected', '50.00'], 'the cash collected is owed by the driver: one ledger entry');
select is((select count(*)::int from public.wallet_entries where delivery_id = pg_temp.id('cash') and kind = 'delivery_credit'), 1,
  'and the driver is credited once, as any completion');

insert into ids values ('card', pg_temp.new_delivery(30.00, 'card'));
select pg_temp.started('card');
select tests.act_as_member(a, 'driver') from t;
select is((public.complete_delivery(pg_temp.id('card'), collected_amount => 30.00, collected_method => 'card')).collect_mismatch,
  false, 'card collected as asked: no mismatch');
select tests.reset_role();
select is((select count(*)::int from public.cash_entries where delivery_id = pg_temp.id('card')), 0, 'card moves no cash');

insert into ids values ('plain', pg_temp.new_delivery(null, null));
select pg_temp.started('plain');
select tests.act_as_member(a, 'driver') from t;
select is((public.complete_delivery(pg_temp.id('plain'))).status, 'completed', 'a delivery that collects nothing needs nothing');
select tests.reset_role();

-- Section: the ledger: append-only, under RLS

select throws_ok($$ update public.cash_entries set amount = 1 $$, 'PT422', 'cash entries are append-only', 'no update, even as superuser');
select throws_ok($$ delete from public.cash_entries $$, 'PT422', 'cash entries are append-only', 'no delete');
select throws_ok($$ truncate public.cash_entries $$, 'PT422', null, 'no truncate');
select tests.act_as_service_role();
select throws_ok($$ update public.cash_entries set amount = 1 $$, '42501', null, 'the service role may not update');
select throws_ok(format($$ insert into public.cash_entries (company_id, driver_id, kind, amount, delivery_id)
  values (%L, %L, 'collected', 1, %L) $$, (select a ->> 'company_id' from t), pg_temp.driver('a'), pg_temp.id('cash')),
  '23505', null, 'one cash entry per delivery');
select throws_ok(format($$ insert into public.cash_entries (company_id, driver_id, kind, amount)
  values (%L, %L, 'settlement', 5) $$, (select a ->> 'company_id' from t), pg_temp.driver('a')),
  '23514', null, 'a settlement is negative');
select tests.reset_role();

select ok((select relrowsecurity from pg_class where oid = 'public.cash_entries'::regclass), 'RLS is on');
select tests.act_as_member(a, 'driver') from t;
select is((select count(*)::int from public.cash_entries), 1, 'the driver reads their own entries');
select tests.act_as_member(a, 'driver2') from t;
select is_empty($$ select from public.cash_entries $$, 'another driver reads none');
select tests.act_as_member(a, 'owner') from t;
select is((select count(*)::int from public.cash_entries), 1, 'the owner reads the company''s');
select tests.act_as_member(a, 'admin') from t;
select is((select count(*)::int from public.cash_entries), 1, 'so does an admin');
select tests.act_as_member(a, 'legacy_admin') from t;
select is_empty($$ select from public.cash_entries $$, 'a legacy admin reads none');
select tests.act_as_member(b, 'owner') from t;
select is_empty($$ select from public.cash_entries $$, 'a foreign owner reads nothing');
select throws_ok(format('select public.get_driver_cash(%L)', pg_temp.driver('a')), 'PT404', null, 'nor the driver''s cash (404)');
select throws_ok(format('select public.record_cash_settlement(%L, 1)', pg_temp.driver('a')), 'PT404', null, 'nor settles it');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok(format('select public.get_driver_cash(%L)', pg_temp.driver('a')), 'PT404', null, 'a driver reads no one else''s cash');
select tests.act_as_member(a, 'driver') from t;
select is((select to_jsonb(c) - 'entries' from public.get_driver_cash(pg_temp.driver('a')) c),
  '{"driver_id": null, "outstanding": 50.00, "collected": 50.00, "settled": 0.00, "card_collected": 30.00}'::jsonb
    || jsonb_build_object('driver_id', pg_temp.driver('a')),
  'the driver reads their own cash: outstanding, collected, settled, card apart');
select throws_ok(format('select public.record_cash_settlement(%L, 1)', pg_temp.driver('a')), 'PT403', null, 'a driver does not settle');

-- Section: settlements

select tests.act_as_member(a, 'admin') from t;
select throws_ok(format('select public.record_cash_settlement(%L, 50.01)', pg_temp.driver('a')), 'PT422', null,
  'more than what is outstanding is 422');
select throws_ok(format('select public.record_cash_settlement(%L, 0)', pg_temp.driver('a')), 'PT400', null, 'nothing is 400');
select is((public.record_cash_settlement(pg_temp.driver('a'), 20.00, 'envelope 1')).outstanding, 30.00,
  'a settlement lowers what is outstanding');
select tests.reset_role();
select ok((select 'For No Key Update' = any (r.modes) from extensions.pgrowlocks('public.drivers') r
           join public.drivers d on d.ctid = r.locked_row where d.id = pg_temp.driver('a')),
  'the settlement took the driver''s cash lock (concurrent ones wait and read the one before)');
-- Service-role inserts meet the same rule: the trigger, not a function, holds it.
select tests.act_as_service_role();
select throws_ok(format($$ insert into public.cash_entries (company_id, driver_id, kind, amount)
  values (%L, %L, 'settlement', -30.01) $$, (select a ->> 'company_id' from t), pg_temp.driver('a')),
  'PT422', null, 'the ledger refuses any settlement above outstanding, whoever inserts it');
select tests.reset_role();
select tests.act_as_member(a, 'owner') from t;
select is((public.record_cash_settlement(pg_temp.driver('a'), 30.00)).outstanding, 0.00, 'the rest settles it to zero');
select throws_ok(format('select public.record_cash_settlement(%L, 0.01)', pg_temp.driver('a')), 'PT422', null,
  'then not a cent more');
select is((select to_jsonb(c) - 'entries' - 'driver_id' from public.get_driver_cash(pg_temp.driver('a')) c),
  '{"outstanding": 0.00, "collected": 50.00, "settled": 50.00, "card_collected": 30.00}'::jsonb, 'the ledger adds up');
select is((select count(*)::int from public.get_driver_cash(pg_temp.driver('a')) c, unnest(c.entries) e), 3,
  'three entries: one collected, two settlements');
select is((select jsonb_agg(to_jsonb(l) - 'driver_id' - 'name' order by l.driver_id = pg_temp.driver('a', 'driver2_id'))
  from public.cash_summary((now() at time zone 'America/Sao_Paulo')::date) s, unnest(s.items) l),
  '[{"collected": 50.00, "card_collected": 30.00, "settled": 50.00, "outstanding": 0.00, "deliveries": 2, "mismatches": 1},
    {"collected": 0.00, "card_collected": 0.00, "settled": 0.00, "outstanding": 0.00, "deliveries": 0, "mismatches": 0}]'::jsonb,
  'the day''s summary: one line per driver, the one who collected nothing too');
select tests.reset_role();
update public.drivers set active = false where id in (pg_temp.driver('a'), pg_temp.driver('a', 'driver2_id'));
-- Made inactive, the driver who collected nothing today has no line; the one who did keeps it (cash is never hidden).
select tests.act_as_member(a, 'owner') from t;
select is((select array_agg(l.driver_id) from public.cash_summary((now() at time zone 'America/Sao_Paulo')::date) s,
  unnest(s.items) l), array[pg_temp.driver('a')], 'an inactive driver keeps a line only while it has something to show');
select tests.reset_role();
update public.drivers set active = true where id in (pg_temp.driver('a'), pg_temp.driver('a', 'driver2_id'));

-- Section: a ledger beyond any one amount
-- Each amount is at most 1,000,000,000.00 (numeric(12, 2)), but a driver's sums are not: a driver of company b
-- reports 1,000,000,000.00 collected at 11 deliveries (another amount than asked is recorded as reported). Every
-- read and the settlement's check still add the ledger up, instead of failing on a sum cast to numeric(12, 2)
-- (which locked the company out of its cash summary for good: the entries can never be removed).
create function pg_temp.collected_a_billion() returns void language plpgsql as $$
declare
  delivery uuid;
begin
  for i in 1..11 loop
    delivery := tests.create_delivery(b, driver_id => (b ->> 'driver_id')::uuid, collect_amount => 1,
      collect_method => 'cash') from t;
    perform tests.act_as_member(b, 'driver') from t;
    perform public.start_delivery(delivery);
    perform public.complete_delivery(delivery, collected_amount => 1000000000.00, collected_method => 'cash');
    perform tests.reset_role();
  end loop;
end $$;
grant execute on function pg_temp.collected_a_billion() to public;
select pg_temp.collected_a_billion();
select tests.act_as_member(b, 'owner') from t;
select is((select c.outstanding from public.get_driver_cash(pg_temp.driver('b')) c), 11000000000.00,
  'a driver''s cash adds up beyond any one amount');
select is((select l.collected from public.cash_summary((now() at time zone 'America/Sao_Paulo')::date) s, unnest(s.items) l
  where l.driver_id = pg_temp.driver('b')), 11000000000.00, 'so does the day''s summary');
select is((select d.cash_collected from public.driver_day(pg_temp.driver('b'), (now() at time zone 'America/Sao_Paulo')::date) d),
  11000000000.00, 'and the driver''s day');
select is((public.record_cash_settlement(pg_temp.driver('b'), 1000000000.00)).outstanding, 10000000000.00,
  'a settlement is checked against the whole sum');
select throws_ok(format('select public.record_cash_settlement(%L, 1000000000.00)', pg_temp.driver('a')), 'PT404', null,
  'and only within the company');
select tests.reset_role();

-- Section: handover codes

select tests.act_as_member(a, 'owner') from t;
select is((public.set_proof_requirements(false, false, false, true)).handover_code, true, 'the company requires handover codes');
select tests.reset_role();
insert into ids values ('code', pg_temp.new_delivery(null, null));
select matches((select code from private.handover_codes where delivery_id = pg_temp.id('code')), '^[0-9]{4}$',
  'each new delivery gets 4 digits');
select is((select private.tracking_json_of(pg_temp.id('code')) ->> 'handover_code'),
  (select code from private.handover_codes where delivery_id = pg_temp.id('code')), 'which the recipient''s tracking view shows');
create temp table code as select code from private.handover_codes where delivery_id = pg_temp.id('code');
grant select on code to public;
select pg_temp.started('code');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select * from private.handover_codes $$, '42501', null, 'a driver cannot read the codes');
select ok(not (to_jsonb(public.get_delivery(pg_temp.id('code'))) ? 'handover_code'), 'nor does the delivery show it');
select ok(not has_table_privilege('authenticated', 'private.handover_codes', 'select')
  and not exists (select from information_schema.columns where table_schema = 'public' and column_name ~ 'handover'
                  and table_name <> 'proof_requirements'),
  'no API role may read the table, and no public table or view has a handover code column');
select throws_ok(format('select public.complete_delivery(%L)', pg_temp.id('code')), 'PT422', 'the recipient''s handover code is required',
  'completing without the code is 422');
select is(public.try_handover_code(pg_temp.id('code'), 'abcd'), 'wrong', 'a wrong code is wrong');
select is((select array_agg(public.try_handover_code(pg_temp.id('code'), 'zzzz')) from generate_series(1, 4)),
  array['wrong', 'wrong', 'wrong', 'wrong'], 'four more');
select is(public.try_handover_code(pg_temp.id('code'), (select code from code)), 'locked',
  'after 5 wrong codes even the right one is locked');
select tests.reset_role();
select is((select wrong_attempts from private.handover_codes where delivery_id = pg_temp.id('code')), 5, 'the 5 attempts are counted');
select tests.act_as_member(a, 'driver') from t;
select throws_ok(format('select public.complete_delivery(%L)', pg_temp.id('code')), 'PT423', null, 'every completion is now 423');
select tests.act_as_member(a, 'driver') from t;
select throws_ok(format('select public.complete_delivery_override(%L, %L)', pg_temp.id('code'), 'x'), 'PT403', null,
  'a driver cannot override');
select tests.act_as_member(a, 'legacy_admin') from t;
select throws_ok(format('select public.complete_delivery_override(%L, %L)', pg_temp.id('code'), 'x'), 'PT403', null,
  'nor a legacy admin');
select tests.act_as_member(b, 'owner') from t;
select throws_ok(format('select public.complete_delivery_override(%L, %L)', pg_temp.id('code'), 'x'), 'PT404', null,
  'a foreign owner gets 404');
select tests.act_as_member(a, 'admin') from t;
select throws_ok(format('select public.complete_delivery_override(%L, %L)', pg_temp.id('code'), ' '), 'PT400', null,
  'an override needs a reason');
select is((public.complete_delivery_override(pg_temp.id('code'), 'recipient lost the code, ID checked')).status, 'completed',
  'a manager completes it with a reason');
select tests.reset_role();
select is((select override_reason from private.handover_codes where delivery_id = pg_temp.id('code')),
  'recipient lost the code, ID checked', 'the reason is kept');
select is((select count(*)::int from public.wallet_entries where delivery_id = pg_temp.id('code')), 1, 'the driver is credited once');
select is((select private.tracking_json_of(pg_temp.id('code')) ->> 'handover_code'), null, 'once delivered the code is shown no more');

insert into ids values ('code2', pg_temp.new_delivery(null, null));
select pg_temp.started('code2');
create temp table code2 as select code from private.handover_codes where delivery_id = pg_temp.id('code2');
grant select on code2 to public;
select tests.act_as_member(a, 'driver') from t;
select is(public.try_handover_code(pg_temp.id('code2'), (select code from code2)), 'accepted', 'the right code is accepted');
select is((public.complete_delivery(pg_temp.id('code2'))).status, 'completed', 'and the driver completes');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok(format('select public.try_handover_code(%L, %L)', pg_temp.id('code2'), '0000'), 'PT404', null,
  'another driver cannot try codes of a delivery not theirs');
select tests.reset_role();

select * from finish();
rollback;
