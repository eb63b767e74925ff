-- Large imports as jobs (DESIGN.md §11.2, docs/contract.md): POST /api/v1/deliveries/import with more than
-- 500 rows checks every row at the edge, records the file's valid rows here with the refused ones as errors,
-- and answers 202. The job, the api function's /api/imports/work (woken through private.call_function after
-- the commit, and every minute by pg_cron while an import waits with no worker on it), takes the next batch
-- of rows under a lease, locates and measures them at the edge, and creates them in ONE transaction with the
-- import's cursor (public.run_import_batch): a batch is created and counted wholly or not at all, so a worker
-- killed mid-way leaves the cursor where the last committed batch left it, and the next worker resumes there
-- without a duplicate. Progress goes to company:{company_id} as import_progress.

-- Section: tables

create table public.imports (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  created_by uuid,
  status text not null default 'running' check (status in ('running', 'done', 'failed')),
  total integer not null check (total >= 0),
  processed integer not null default 0 check (processed >= 0),
  created integer not null default 0 check (created >= 0),
  skipped integer not null default 0 check (skipped >= 0),
  errors jsonb not null default '[]' check (jsonb_typeof(errors) = 'array'),
  -- Why a failed import stopped (the geocoding or routing service failing batch after batch).
  failure text check (length(failure) <= 1000),
  -- The job's state: the next row to take (its ordinal among the valid rows), whose lease runs until when,
  -- and how many times in a row the batch at the cursor could not be measured.
  next_ordinal integer not null default 0,
  leased_until timestamptz,
  failed_attempts integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table public.imports is 'Imports of more than 500 rows run as jobs: their progress, counts and refused rows.';
create index imports_company_idx on public.imports (company_id, created_at desc);
create index imports_running_idx on public.imports (leased_until) where status = 'running';
alter table public.imports enable row level security;

-- The rows still to create, in the file's order; deleted with their batch's commit.
create table private.import_rows (
  import_id uuid not null references public.imports (id) on delete cascade,
  ordinal integer not null,
  row_number integer not null,
  body jsonb not null,
  primary key (import_id, ordinal)
);
comment on table private.import_rows is 'The checked rows of an import job not yet created: the spreadsheet row number and the create body.';
alter table private.import_rows enable row level security;

create policy imports_select_managers on public.imports
  for select to authenticated
  using (company_id = (select private.company_of(private.delivery_managers())));
-- Rows change only through the functions below.
grant select on public.imports to authenticated;
grant all on public.imports to service_role;
grant all on private.import_rows to service_role;

-- Section: the import as the API shows it

create type public.delivery_import as (
  id uuid,
  status text,
  total integer,
  processed integer,
  created integer,
  skipped integer,
  errors jsonb,
  failure text,
  created_at timestamptz,
  updated_at timestamptz
);
comment on type public.delivery_import is 'An import job: running, done or failed; rows processed of total, created, skipped, refused (errors).';

create function private.import_row(i public.imports)
returns public.delivery_import
language plpgsql
immutable
set search_path = ''
as $$
begin
  return row(i.id, i.status, i.total, i.processed, i.created, i.skipped, i.errors, i.failure, i.created_at,
    i.updated_at)::public.delivery_import;
end;
$$;
comment on function private.import_row(public.imports) is 'An import job as the API shows it.';
grant execute on function private.import_row(public.imports) to authenticated, service_role;

create function private.announce_import(i public.imports)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- The refused rows are in GET /api/v1/imports/{id}; the broadcast carries their number.
  perform private.broadcast('company:' || i.company_id, 'import_progress',
    to_jsonb(private.import_row(i)) - 'errors' || jsonb_build_object('errors', jsonb_array_length(i.errors)));
end;
$$;
comment on function private.announce_import(public.imports) is 'Tells the import''s company its progress (import_progress on company:{company_id}).';
revoke execute on function private.announce_import(public.imports) from public;
grant execute on function private.announce_import(public.imports) to service_role;

-- Wakes the worker once the caller's transaction commits (pg_net sends only then).
create function private.wake_import_worker()
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.call_function('api/imports/work');
end;
$$;
comment on function private.wake_import_worker() is 'Asks the api function''s import worker, through pg_net after the commit, to take the next batch.';
revoke execute on function private.wake_import_worker() from public;
grant execute on function private.wake_import_worker() to service_role;

-- Section: starting and reading

-- Service role (the edge has checked the caller, a delivery manager of company_id): records the job with the
-- file's checked rows (`rows`: [{row, body}] in the file's order) and the refused ones (`errors`), and wakes
-- the worker after the commit.
create function public.start_import(company_id uuid, created_by uuid, total integer, rows jsonb, errors jsonb)
returns public.delivery_import
language plpgsql
set search_path = ''
as $$
declare
  i public.imports;
begin
  insert into public.imports (company_id, created_by, total, processed, errors)
  values (start_import.company_id, start_import.created_by, start_import.total,
    jsonb_array_length(start_import.errors), start_import.errors)
  returning * into i;
  insert into private.import_rows (import_id, ordinal, row_number, body)
  select i.id, (r.ordinality - 1)::integer, (r.value ->> 'row')::integer, r.value -> 'body'
  from jsonb_array_elements(start_import.rows) with ordinality r;
  if not exists (select from private.import_rows r where r.import_id = i.id) then
    update public.imports m set status = 'done', updated_at = now() where m.id = i.id returning * into i;
  end if;
  perform private.announce_import(i);
  perform private.wake_import_worker();
  return private.import_row(i);
end;
$$;
comment on function public.start_import(uuid, uuid, integer, jsonb, jsonb) is 'Records an import job with its checked rows and refused ones, and wakes its worker (service role).';
revoke execute on function public.start_import(uuid, uuid, integer, jsonb, jsonb) from authenticated;
grant execute on function public.start_import(uuid, uuid, integer, jsonb, jsonb) to service_role;

create function public.get_import(import_id uuid)
returns public.delivery_import
language plpgsql
stable
set search_path = ''
as $$
declare
  i public.imports;
begin
  perform private.authorize(variadic private.delivery_managers());
  -- Under the policy: another company's import is not found.
  select * into i from public.imports m where m.id = get_import.import_id;
  if not found then
    raise exception using errcode = 'PT404', message = 'import not found';
  end if;
  return private.import_row(i);
end;
$$;
comment on function public.get_import(uuid) is 'One import job of the caller''s company (owner, admin).';
grant execute on function public.get_import(uuid) to authenticated;

-- Section: the worker (service role)

-- The next batch of the oldest import that no worker holds: its rows from the cursor, under a lease of
-- lease_seconds (a worker that dies lets it lapse, and the next one takes the same rows again). Null when
-- there is nothing to do.
create function public.claim_import_batch(batch_size integer, lease_seconds integer)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  i public.imports;
begin
  select * into i from public.imports m
  where m.status = 'running' and (m.leased_until is null or m.leased_until < now())
  order by m.created_at
  limit 1
  for update skip locked;
  if not found then
    return null;
  end if;
  update public.imports m set leased_until = now() + make_interval(secs => claim_import_batch.lease_seconds)
  where m.id = i.id;
  return jsonb_build_object('import_id', i.id, 'company_id', i.company_id, 'created_by', i.created_by,
    'from_ordinal', i.next_ordinal,
    'rows', coalesce((select jsonb_agg(jsonb_build_object('ordinal', r.ordinal, 'row', r.row_number, 'body', r.body)
        order by r.ordinal)
      from (select * from private.import_rows r
            where r.import_id = i.id and r.ordinal >= i.next_ordinal
            order by r.ordinal limit claim_import_batch.batch_size) r), '[]'));
end;
$$;
comment on function public.claim_import_batch(integer, integer) is 'Leases the next batch of rows of an import job to a worker (service role).';
revoke execute on function public.claim_import_batch(integer, integer) from authenticated;
grant execute on function public.claim_import_batch(integer, integer) to service_role;

-- One batch, measured at the edge: `rows` as public.import_deliveries takes them (with `size` and `service_s`),
-- `errors` the rows the edge refused (an address with no place), up to the ordinal `next_ordinal`. Created,
-- counted, its rows deleted and the cursor moved in the caller's one transaction; PT409 (and nothing done)
-- when the cursor is no longer at from_ordinal (another worker committed this batch after this one's lease
-- lapsed). Wakes the worker for the next batch, or marks the import done.
create function public.run_import_batch(import_id uuid, from_ordinal integer, next_ordinal integer, rows jsonb,
  errors jsonb)
returns public.delivery_import
language plpgsql
set search_path = ''
as $$
declare
  i public.imports;
  answer jsonb;
  made jsonb;
  r jsonb;
begin
  select * into i from public.imports m where m.id = run_import_batch.import_id for update;
  if not found or i.status <> 'running' or i.next_ordinal <> run_import_batch.from_ordinal then
    raise exception using errcode = 'PT409', message = 'the batch was taken by another worker';
  end if;
  answer := public.import_deliveries(i.company_id, i.created_by, run_import_batch.rows);
  -- A row's size and drop-off time (routes), with its creation, as the synchronous import does.
  for made in select value from jsonb_array_elements(answer -> 'created') loop
    select value into r from jsonb_array_elements(run_import_batch.rows)
    where (value ->> 'row')::integer = (made ->> 'row')::integer limit 1;
    if r ->> 'size' is not null or r ->> 'service_s' is not null then
      perform public.set_delivery_load((made ->> 'id')::uuid, (r ->> 'size')::integer, (r ->> 'service_s')::integer);
    end if;
  end loop;
  delete from private.import_rows x
  where x.import_id = i.id and x.ordinal >= run_import_batch.from_ordinal and x.ordinal < run_import_batch.next_ordinal;
  update public.imports m set
    next_ordinal = run_import_batch.next_ordinal,
    processed = m.processed + (run_import_batch.next_ordinal - run_import_batch.from_ordinal),
    created = m.created + jsonb_array_length(answer -> 'created'),
    skipped = m.skipped + jsonb_array_length(answer -> 'skipped'),
    errors = (select coalesce(jsonb_agg(e order by (e ->> 'row')::integer), '[]')
              from jsonb_array_elements(m.errors || run_import_batch.errors || (answer -> 'errors')) e),
    failed_attempts = 0,
    leased_until = null,
    status = case when exists (select from private.import_rows x where x.import_id = m.id) then 'running' else 'done' end,
    updated_at = now()
  where m.id = i.id
  returning * into i;
  perform private.announce_import(i);
  if i.status = 'running' then
    perform private.wake_import_worker();
  end if;
  return private.import_row(i);
end;
$$;
comment on function public.run_import_batch(uuid, integer, integer, jsonb, jsonb) is 'Creates one batch of an import job and moves its cursor in one transaction (service role).';
revoke execute on function public.run_import_batch(uuid, integer, integer, jsonb, jsonb) from authenticated;
grant execute on function public.run_import_batch(uuid, integer, integer, jsonb, jsonb) to service_role;

-- The batch at the cursor could not be measured (the geocoding or routing service failing): tried again after
-- its lease lapses, and after 5 failures in a row the import fails, saying why and how far it got (what was
-- created stays; the rest was not created).
create function public.fail_import_batch(import_id uuid, from_ordinal integer, failure text)
returns public.delivery_import
language plpgsql
set search_path = ''
as $$
declare
  i public.imports;
begin
  update public.imports m set
    failed_attempts = m.failed_attempts + 1,
    status = case when m.failed_attempts + 1 >= 5 then 'failed' else m.status end,
    failure = left(fail_import_batch.failure, 1000),
    updated_at = now()
  where m.id = fail_import_batch.import_id and m.status = 'running' and m.next_ordinal = fail_import_batch.from_ordinal
  returning * into i;
  if not found then
    return null;
  end if;
  if i.status = 'failed' then
    delete from private.import_rows x where x.import_id = i.id;
    perform private.announce_import(i);
  end if;
  return private.import_row(i);
end;
$$;
comment on function public.fail_import_batch(uuid, integer, text) is 'Counts a batch of an import job that could not be measured; the fifth in a row fails the import (service role).';
revoke execute on function public.fail_import_batch(uuid, integer, text) from authenticated;
grant execute on function public.fail_import_batch(uuid, integer, text) to service_role;

-- Section: jobs (10_jobs.sql says what the Vault secrets are)

-- Every minute, while an import waits with no worker on it (its wake lost, its worker killed), the api
-- function's worker is asked to go on.
select cron.schedule('resume-imports', '* * * * *', $$
  select private.call_function('api/imports/work', unless_queued => true)
  where exists (select from public.imports m
    where m.status = 'running' and (m.leased_until is null or m.leased_until < now()))
$$);
