-- Import jobs (20_imports.sql): the rows of a large file recorded with the job; a batch claimed under a lease
-- (another worker gets nothing while it runs, the same rows once it lapses); a batch created with its cursor in
-- one transaction, so a batch committed by one worker is refused (PT409, nothing created) to a second that took
-- the same rows; done when the last batch is in; five failures in a row fail it. Only the service role runs the
-- job; managers of the company read it, a driver and a foreign company do not.
begin;
select plan(22);

create temp table t as select tests.create_tenant('ij') as a, tests.create_tenant('ij-other') as b;
grant select on t to public;

-- Three rows, one refused at the edge (row 3); the rows as the edge's routeRows gives them.
create function pg_temp.routed(r integer, ext text) returns jsonb language sql as $$
  select jsonb_build_object('row', r, 'origin_address', 'Praça da Sé', 'origin_lat', -23.55, 'origin_lng', -46.63,
    'destination_address', 'Av. Paulista', 'destination_lat', -23.56, 'destination_lng', -46.65,
    'distance_m', 3000, 'duration_s', 600, 'external_id', ext, 'size', 3)
$$;
grant execute on function pg_temp.routed(integer, text) to public;

select tests.act_as_service_role();
create temp table j as
select (public.start_import((a ->> 'company_id')::uuid, (a ->> 'owner')::uuid, 4,
  jsonb_build_array(
    jsonb_build_object('row', 2, 'body', jsonb_build_object('origin_address', 'x', 'external_id', 'IJ-1')),
    jsonb_build_object('row', 4, 'body', jsonb_build_object('origin_address', 'x')),
    jsonb_build_object('row', 5, 'body', jsonb_build_object('origin_address', 'x'))),
  '[{"row": 3, "detail": "window_end: must be in the future"}]')).id as id
from t;
select tests.reset_role();
grant select on j to public;

select is((select status || ' ' || total || ' ' || processed from public.imports where id = (select id from j)),
  'running 4 1', 'a started import runs, the refused row already processed');
select is((select count(*)::integer from private.import_rows where import_id = (select id from j)), 3,
  'its checked rows are recorded');

-- Claims.
select tests.act_as_service_role();
create temp table c1 as select public.claim_import_batch(2, 30) as c;
select is((select jsonb_array_length(c -> 'rows') from c1), 2, 'a worker claims a batch of 2 rows');
select is((select c ->> 'from_ordinal' from c1), '0', 'from the cursor');
select is(public.claim_import_batch(2, 30), null, 'another worker gets nothing while the lease runs');
select tests.reset_role();
update public.imports set leased_until = now() - interval '1 second' where id = (select id from j);
select tests.act_as_service_role();
create temp table c2 as select public.claim_import_batch(2, 30) as c;
select is((select c -> 'rows' from c2), (select c -> 'rows' from c1), 'once it lapses, the next takes the same rows');

-- The second worker commits the batch; the first (its lease lapsed) is refused and creates nothing.
select lives_ok(format($$select public.run_import_batch(%L, 0, 2, %L, '[]')$$, (select id from j),
  jsonb_build_array(pg_temp.routed(2, 'IJ-1'), pg_temp.routed(4, null))), 'the second worker commits the batch');
select throws_ok(format($$select public.run_import_batch(%L, 0, 2, %L, '[]')$$, (select id from j),
  jsonb_build_array(pg_temp.routed(2, 'IJ-1'), pg_temp.routed(4, null))), 'PT409', null,
  'the first worker''s commit of the same batch is refused');
select tests.reset_role();
select is((select count(*)::integer from public.deliveries where company_id = (select (a ->> 'company_id')::uuid from t)),
  2, 'the batch''s rows exist once');
select is((select size from public.deliveries where external_id = 'IJ-1'), 3, 'with their size');
select is((select processed || ' ' || created || ' ' || next_ordinal from public.imports where id = (select id from j)),
  '3 2 2', 'the cursor moved with the batch');
select is((select count(*)::integer from private.import_rows where import_id = (select id from j)), 1,
  'the batch''s rows are gone from the job');

-- The last batch: a row the edge refused; done.
select tests.act_as_service_role();
select is((select c -> 'rows' -> 0 ->> 'row' from (select public.claim_import_batch(2, 30) as c) x), '5',
  'the next claim takes the rest');
select lives_ok(format($$select public.run_import_batch(%L, 2, 3, '[]', '[{"row": 5, "detail": "no place"}]')$$,
  (select id from j)), 'the last batch is committed');
select tests.reset_role();
select is((select status || ' ' || processed || ' ' || created || ' ' || jsonb_array_length(errors)
  from public.imports where id = (select id from j)), 'done 4 2 2', 'the import is done, every row counted');

-- Who reads it.
select tests.act_as_member(a, 'owner') from t;
select is((public.get_import((select id from j))).created, 2, 'the owner reads the import');
select tests.act_as_member(a, 'admin') from t;
select is((select count(*)::integer from public.imports), 1, 'an admin sees it in the table');
select tests.act_as_member(a, 'driver') from t;
select is((select count(*)::integer from public.imports), 0, 'a driver sees no import');
select tests.act_as_member(b, 'owner') from t;
select throws_ok(format('select public.get_import(%L)', (select id from j)), 'PT404', null,
  'another company''s owner: not found');
select is(tests.may(format($$select public.claim_import_batch(1, 1)$$)), false, 'a manager cannot run the job');

-- Five failures in a row fail an import.
select tests.act_as_service_role();
create temp table k as
select (public.start_import((a ->> 'company_id')::uuid, (a ->> 'owner')::uuid, 1,
  '[{"row": 2, "body": {}}]', '[]')).id as id from t;
select public.fail_import_batch((select id from k), 0, 'the routing service is down') from generate_series(1, 4);
select is((select status from public.imports where id = (select id from k)), 'running', 'four failures: still running');
select public.fail_import_batch((select id from k), 0, 'the routing service is down');
select is((select status || ': ' || failure from public.imports where id = (select id from k)),
  'failed: the routing service is down', 'the fifth fails it, saying why');
select tests.reset_role();

select * from finish();
