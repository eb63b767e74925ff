-- The list's search and filters: `q` over the addresses, the recipient's name and phone, the external id
-- and an id prefix, ignoring accents and case; created_from/created_to; the filters together and with
-- pages; a driver's scope searched; another company's deliveries never found. The export's cursor gives
-- exactly the list's rows; external ids are unique per company and their 409 names the delivery.
begin;
select plan(34);

create temp table t as select tests.create_tenant('search-a') as a, tests.create_tenant('search-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;

create function pg_temp.arrange(tenant jsonb, name text, origin text, destination text, recipient text, phone text,
  external_id text default null, created_at timestamptz default now(), status text default 'pending') returns void
language plpgsql as $$
declare
  new_id uuid := (tests.delivery_in(arrange.tenant, arrange.status, 'invoice', origin_address => arrange.origin, created_at => arrange.created_at)).id;
begin
  update public.deliveries d set destination_address = arrange.destination, recipient_name = arrange.recipient,
    recipient_phone = arrange.phone, external_id = arrange.external_id where d.id = new_id;
  insert into ids values (arrange.name, new_id);
end;
$$;

select pg_temp.arrange(a, 'jose', 'Praça da Sé, 1', 'Rua Conceição, 120', 'José Antônio', '+55 11 98888-7777', 'PED-1001', now() - interval '3 days') from t;
select pg_temp.arrange(a, 'joana', 'Av. Paulista, 1000', 'Rua Augusta, 5', 'Joana Lima', '(21) 3333-4444', 'PED-1002', now() - interval '2 days') from t;
select pg_temp.arrange(a, 'maria', 'Rua São João, 50', 'Alameda Santos, 8', 'MARIA DA SILVA', null, null, now() - interval '1 day', 'in_progress') from t;
select pg_temp.arrange(a, 'percent', 'Rua 100% Feliz', 'Rua B', 'Ana_Paula', null, null, now() - interval '12 hours') from t;
select pg_temp.arrange(b, 'other', 'Praça da Sé, 1', 'Rua Conceição, 120', 'José Antônio', '+55 11 98888-7777', 'PED-1001') from t;

-- The names found for a search as `member` of `tenant`, sorted.
create function pg_temp.found(tenant text, member text, q text default null, created_from timestamptz default null,
  created_to timestamptz default null, status text default null) returns text[]
language plpgsql as $$
declare
  names text[];
begin
  perform tests.act_as_member((select case found.tenant when 'a' then a else b end from t), found.member);
  select coalesce(array_agg(i.name order by i.name), '{}') into names
  from unnest((public.list_deliveries(q => found.q, created_from => found.created_from, created_to => found.created_to,
    status => found.status, page_limit => 100)).items) d join ids i on i.id = d.id;
  perform tests.reset_role();
  return names;
end;
$$;

select is(pg_temp.found('a', 'owner', 'jose'), array['jose'], 'a name without its accent finds it');
select is(pg_temp.found('a', 'owner', 'JOSÉ ANTÔNIO'), array['jose'], 'upper case with accents finds it');
select is(pg_temp.found('a', 'owner', 'conceicao'), array['jose'], 'an address without its cedilla and tilde');
select is(pg_temp.found('a', 'owner', 'sao joao'), array['maria'], 'the origin address, folded');
select is(pg_temp.found('a', 'owner', 'silva'), array['maria'], 'a name stored in capitals');
select is(pg_temp.found('a', 'owner', '98888-7777'), array['jose'], 'a phone as written');
select is(pg_temp.found('a', 'owner', '(11) 98888 7777'), array['jose'], 'a phone written another way (its digits)');
select is(pg_temp.found('a', 'owner', '33334444'), array['joana'], 'a phone''s digits alone');
select is(pg_temp.found('a', 'owner', 'ped-1002'), array['joana'], 'the external id');
select is(pg_temp.found('a', 'owner', left((select id::text from ids where name = 'maria'), 8)), array['maria'],
  'the first 8 characters of the id');
select is(pg_temp.found('a', 'owner', upper(left((select id::text from ids where name = 'maria'), 13))), array['maria'],
  'an id prefix with its dash, in capitals');
select is(pg_temp.found('a', 'owner', '100%'), array['percent'], 'a % is searched for, not a wildcard');
select is(pg_temp.found('a', 'owner', 'a_p'), array['percent'], 'an _ is searched for, not a wildcard');
select is(pg_temp.found('a', 'owner', 'nothing like it'), '{}'::text[], 'nothing matches: an empty list');
select is(pg_temp.found('b', 'owner', 'jose'), array['other'], 'another company finds only its own');
select is(pg_temp.found('a', 'admin', 'rua'), array['joana', 'jose', 'maria', 'percent'], 'an admin searches too');
select is(pg_temp.found('a', 'legacy_admin', 'rua', status => 'in_progress'), array['maria'], 'search and status together');
select is(pg_temp.found('a', 'owner', 'rua', now() - interval '2 days 1 hour', now() - interval '23 hours'), array['joana', 'maria'],
  'search and creation range together (from included, to excluded)');
select is(pg_temp.found('a', 'owner', null, now() - interval '2 days', now() - interval '1 day'), array['joana'],
  'created_from is included, created_to is not');
select is(pg_temp.found('a', 'driver', 'rua'), array['joana', 'jose', 'maria', 'percent'],
  'a driver searches its scope: the pending ones and its own');
select is(pg_temp.found('a', 'driver2', 'rua'), array['joana', 'jose', 'percent'], 'never another driver''s');
select is(pg_temp.found('a', 'driver2', 'silva'), '{}'::text[], 'not even by searching for it');

-- Pages of a search keep the list's order and cursor.
select tests.act_as_member(a, 'owner') from t;
select is(
  array(select i.name from unnest((public.list_deliveries(q => 'rua', page_limit => 2)).items) with ordinality d
        join ids i on i.id = d.id order by d.ordinality),
  array['percent', 'maria'], 'a search''s first page, newest first');
select is(
  array(select i.name from unnest((public.list_deliveries(q => 'rua', page_limit => 2,
    cursor => (public.list_deliveries(q => 'rua', page_limit => 2)).next_cursor)).items) with ordinality d
        join ids i on i.id = d.id order by d.ordinality),
  array['joana', 'jose'], 'and its second page');

-- The export's cursor: the same rows as the list, whatever the filters.
create function pg_temp.exported(q text default null, status text default null, late boolean default null) returns uuid[]
language plpgsql as $$
declare
  cursor refcursor := public.export_deliveries(q => exported.q, status => exported.status, late => exported.late);
  batch public.delivery[];
  out uuid[] := '{}';
begin
  loop
    batch := public.fetch_deliveries(cursor, 2);
    exit when cardinality(batch) = 0;
    out := out || array(select d.id from unnest(batch) d);
  end loop;
  return out;
end;
$$;
select is(pg_temp.exported(), array(select d.id from unnest((public.list_deliveries(page_limit => 100)).items) d),
  'the export holds every delivery of the list, in its order');
select is(pg_temp.exported('rua', 'pending'), array(select d.id from unnest((public.list_deliveries(q => 'rua', status => 'pending', page_limit => 100)).items) d),
  'and the same filtered rows as the filtered list');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select public.export_deliveries() $$, 'PT403', 'role driver may not do this', 'a driver may not export');
select tests.act_as_member(b, 'admin') from t;
select ok(not (pg_temp.exported() && array(select id from ids where name <> 'other')), 'another company exports none of them');

-- External ids: unique per company, the 409 names the delivery.
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select public.authorize_new_delivery(null, 'PED-1001') $$, 'PT409',
  format('a delivery with external_id PED-1001 already exists: %s', (select id from ids where name = 'jose')),
  'an external id already used by the company is 409 naming the delivery, before anything is routed or charged');
select is(public.existing_external_ids(array['PED-1001', 'PED-9999', 'PED-1002']) @> array['PED-1001', 'PED-1002'], true,
  'the import learns which external ids exist');
select tests.reset_role();
select tests.act_as_service_role();
select throws_ok($$ select public.create_delivery(gen_random_uuid(), (select (a ->> 'company_id')::uuid from t),
  (select (a ->> 'owner')::uuid from t), 'invoice', 'O', -23.5, -46.6, 'D', -23.6, -46.7, 1000, 100, external_id => 'PED-1002') $$,
  'PT409', format('a delivery with external_id PED-1002 already exists: %s', (select id from ids where name = 'joana')),
  'creating with it is 409 too');

select tests.reset_role();
select ok(not has_function_privilege('authenticated', 'public.import_deliveries(uuid, uuid, jsonb)', 'execute'),
  'no user imports directly: the edge does, after checking and routing each row');
select ok(has_function_privilege('service_role', 'public.import_deliveries(uuid, uuid, jsonb)', 'execute'),
  'the service role imports');
select ok(not has_table_privilege('authenticated', 'private.window_announcements', 'select'),
  'no user reads the window pass''s bookkeeping');

select * from finish();
rollback;
