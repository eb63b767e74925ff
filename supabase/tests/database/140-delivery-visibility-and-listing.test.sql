-- Who sees which delivery: managers their company's; a driver the pending ones
-- of its company and those it has taken, never another driver's and never a
-- foreign company's. Then the list's filters and its keyset pagination.
begin;
select plan(31);

create temp table t as select tests.create_tenant('scope-a') as a, tests.create_tenant('scope-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;

-- A delivery named `name` of `tenant` in `status`, taken by `driver` (driver or driver2), created `age` ago.
create function pg_temp.add(name text, tenant text, status text, driver text, age interval, method text default 'invoice') returns void
language sql as $$
  insert into ids
  select add.name, d.id
  from t, tests.delivery_in(case add.tenant when 'a' then t.a else t.b end, add.status, add.method, add.driver,
    price => 8.00, origin_address => add.name, created_at => now() - add.age) d
$$;
-- The names of what the caller lists, newest first.
create function pg_temp.listed(status text default null, driver uuid default null) returns text[]
language sql as $$
  select array_agg(i.name order by ord)
  from jsonb_array_elements(to_jsonb(public.list_deliveries(listed.status, listed.driver, 100)) -> 'items') with ordinality as item(j, ord)
  join ids i on i.id = (item.j ->> 'id')::uuid
$$;
grant execute on function pg_temp.listed(text, uuid) to public;

select pg_temp.add('open', 'a', 'pending', null, '1 minute');
select pg_temp.add('unpaid', 'a', 'awaiting_payment', null, '2 minutes', 'pix');
select pg_temp.add('mine', 'a', 'accepted', 'driver', '3 minutes');
select pg_temp.add('theirs', 'a', 'in_progress', 'driver2', '4 minutes');
select pg_temp.add('theirs-cancelled', 'a', 'cancelled', 'driver2', '5 minutes');
select pg_temp.add('never-taken', 'a', 'cancelled', null, '6 minutes');
select pg_temp.add('foreign', 'b', 'pending', null, '7 minutes');

select tests.act_as_member(a, 'owner') from t;
select is(pg_temp.listed(), array['open', 'unpaid', 'mine', 'theirs', 'theirs-cancelled', 'never-taken'],
  'an owner lists every delivery of its company, newest first');
select tests.act_as_member(a, 'admin') from t;
select is(pg_temp.listed(), array['open', 'unpaid', 'mine', 'theirs', 'theirs-cancelled', 'never-taken'], 'so does an admin');
select tests.act_as_member(a, 'legacy_admin') from t;
select is(pg_temp.listed(), array['open', 'unpaid', 'mine', 'theirs', 'theirs-cancelled', 'never-taken'], 'and a legacy admin');
select tests.act_as_member(a, 'driver') from t;
select is(pg_temp.listed(), array['open', 'mine'], 'a driver lists the pending ones and its own');
select tests.act_as_member(a, 'driver2') from t;
select is(pg_temp.listed(), array['open', 'theirs', 'theirs-cancelled'], 'the other driver lists the pending ones and its own, cancelled too');
select tests.act_as_member(b, 'owner') from t;
select is(pg_temp.listed(), array['foreign'], 'another company lists only its own');
select tests.act_as_member(b, 'driver') from t;
select is(pg_temp.listed(), array['foreign'], 'another company''s driver sees only its company''s pending ones');

-- One delivery.
select tests.act_as_member(a, 'driver') from t;
select is(to_jsonb(public.get_delivery((select id from ids where name = 'mine'))) ->> 'origin_address', 'mine', 'a driver reads its delivery');
select is(to_jsonb(public.get_delivery((select id from ids where name = 'open'))) ->> 'status', 'pending', 'and a pending one');
select throws_ok($$ select to_jsonb(public.get_delivery((select id from ids where name = 'theirs'))) $$, 'PT404', 'delivery not found',
  'another driver''s delivery is 404 to it');
select throws_ok($$ select to_jsonb(public.get_delivery((select id from ids where name = 'unpaid'))) $$, 'PT404', 'delivery not found',
  'so is one still waiting for its payment');
select throws_ok($$ select to_jsonb(public.get_delivery((select id from ids where name = 'foreign'))) $$, 'PT404', 'delivery not found',
  'and another company''s');
select is_empty($$ select 1 from public.deliveries where id in (select id from ids where name in ('theirs', 'unpaid', 'foreign')) $$,
  'the table itself hides them from the driver');
select tests.act_as_member(b, 'owner') from t;
select throws_ok($$ select to_jsonb(public.get_delivery((select id from ids where name = 'open'))) $$, 'PT404', 'delivery not found',
  'another company''s owner gets 404');
select tests.act_as_member(a, 'owner') from t;
select is(to_jsonb(public.get_delivery((select id from ids where name = 'theirs'))) ->> 'status', 'in_progress', 'an owner reads any of its company''s');
select tests.reset_role();
select tests.act_as_anon();
select throws_ok($$ select to_jsonb(public.list_deliveries()) $$, '42501', null, 'anon may not list');
select tests.reset_role();

-- A deactivated driver sees nothing.
update public.drivers set active = false where id = (select (a ->> 'driver_id')::uuid from t);
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select to_jsonb(public.list_deliveries()) $$, 'PT403', 'this driver is deactivated', 'a deactivated driver may not list');
select is_empty($$ select 1 from public.deliveries $$, 'nor read the table');
select tests.reset_role();
update public.drivers set active = true where id = (select (a ->> 'driver_id')::uuid from t);

-- Filters.
select tests.act_as_member(a, 'owner') from t;
select is(pg_temp.listed('cancelled'), array['theirs-cancelled', 'never-taken'], 'by status');
select is(pg_temp.listed(driver => (select (a ->> 'driver2_id')::uuid from t)), array['theirs', 'theirs-cancelled'], 'by driver');
select is(pg_temp.listed('in_progress', (select (a ->> 'driver2_id')::uuid from t)), array['theirs'], 'by both');
select is(pg_temp.listed('completed'), null, 'nothing matches: an empty page');
select is(to_jsonb(public.list_deliveries('completed')), '{"items": [], "next_cursor": null}'::jsonb, 'which is {items: [], next_cursor: null}');
select tests.act_as_member(a, 'driver') from t;
select is(pg_temp.listed('accepted'), array['mine'], 'a driver''s filter stays within its scope');
select is(pg_temp.listed(driver => (select (a ->> 'driver2_id')::uuid from t)), null, 'it cannot list another driver''s');

-- Pages: keyset on (created_at, id), stable when deliveries arrive meanwhile.
select tests.act_as_member(a, 'owner') from t;
create temp table pages (n integer, page jsonb);
grant all on pages to public;
insert into pages select 1, to_jsonb(public.list_deliveries(page_limit => 2));
select is((select jsonb_array_length(page -> 'items') from pages where n = 1), 2, 'a page of 2');
select isnt((select page ->> 'next_cursor' from pages where n = 1), null, 'with a cursor to the next');
select tests.reset_role();
select pg_temp.add('newer', 'a', 'pending', null, '0 seconds');
select tests.act_as_member(a, 'owner') from t;
insert into pages select 2, to_jsonb(public.list_deliveries(page_limit => 2, cursor => (select page ->> 'next_cursor' from pages where n = 1)));
insert into pages select 3, to_jsonb(public.list_deliveries(page_limit => 2, cursor => (select page ->> 'next_cursor' from pages where n = 2)));
select is(
  (select array_agg(i.name order by p.n, item.ord) from pages p,
     jsonb_array_elements(p.page -> 'items') with ordinality item(j, ord) join ids i on i.id = (item.j ->> 'id')::uuid),
  array['open', 'unpaid', 'mine', 'theirs', 'theirs-cancelled', 'never-taken'],
  'the pages hold every delivery once, in order, though a new one arrived meanwhile');
select is((select page ->> 'next_cursor' from pages where n = 3), null, 'the last page has no next cursor');
select throws_ok($$ select to_jsonb(public.list_deliveries(cursor => 'not-a-cursor')) $$, 'PT400', 'invalid cursor', 'a bad cursor is 400');
select throws_ok($$ select to_jsonb(public.list_deliveries(page_limit => 101)) $$, 'PT400', 'limit must be between 1 and 100', 'limit above 100 is 400');
select tests.reset_role();

select * from finish();
rollback;
