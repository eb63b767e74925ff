-- Requests that are safe to retry (docs/contract.md, Idempotency-Key): every
-- POST under /api/v1 but the webhooks may carry an `Idempotency-Key`. The edge
-- claims the key for its caller before the operation runs (several edge
-- instances share this table), stores the answer when it ends, and answers a
-- retry with the stored answer; the same key with another request is refused,
-- and a copy arriving while the first is still running is told so. Kept at
-- least 24 hours (a job removes older keys hourly).
--
-- Every transaction the operation commits also notes, in the same transaction,
-- that data changed under the key (private.note_idempotent_write), so that a
-- request cut off before its answer was stored (its function or the database
-- gone) is run again by a retry only when it changed nothing.

-- Section: keys

create table private.idempotent_requests (
  id uuid primary key default gen_random_uuid(),
  -- The token's subject; null for a public operation (registration).
  caller uuid,
  key text not null check (key ~ '^[ -~]{1,255}$'),
  -- Keyed hash (edge, HMAC-SHA256) of the method, the path and the body's bytes: a body never stored in the clear.
  fingerprint text not null,
  -- Until when the first request may still be running.
  lease_until timestamptz not null,
  changed_data boolean not null default false,
  -- The answer, once stored: its HTTP status and its body's exact text.
  status integer check (status between 100 and 599),
  body text,
  created_at timestamptz not null default now(),
  constraint idempotent_requests_caller_key unique nulls not distinct (caller, key)
);
comment on table private.idempotent_requests is 'Idempotency keys of /api/v1 POST requests, per caller: the request''s fingerprint and its stored answer.';
create index idempotent_requests_created_at_idx on private.idempotent_requests (created_at);
alter table private.idempotent_requests enable row level security;
create policy idempotent_requests_service on private.idempotent_requests
  for all to service_role
  using (true)
  with check (true);
grant select, insert, update, delete on private.idempotent_requests to service_role;

-- Section: a request's key

-- One statement for the edge (service role), before the operation runs:
-- `started` (the key is this request's: run it), `replay` (with the stored
-- answer), `mismatch` (the key was used for another request: 422), `running`
-- (the first is still running: 409), or `interrupted` (the first was cut off
-- after it changed data, and its answer is lost: it is never run again). A
-- request cut off before it changed anything leaves its key to the next one
-- once its lease has passed.
create function private.begin_idempotent_request(caller uuid, key text, fingerprint text, lease_ms integer)
returns table (outcome text, id uuid, status integer, body text)
language plpgsql
set search_path = ''
as $$
declare
  r private.idempotent_requests;
begin
  insert into private.idempotent_requests as i (caller, key, fingerprint, lease_until)
  values (begin_idempotent_request.caller, begin_idempotent_request.key, begin_idempotent_request.fingerprint,
    now() + make_interval(secs => begin_idempotent_request.lease_ms / 1000.0))
  on conflict on constraint idempotent_requests_caller_key do nothing
  returning * into r;
  if r.id is not null then
    return query select 'started', r.id, null::integer, null::text;
    return;
  end if;
  -- The lock serialises copies taking over an abandoned key: the second sees the first's lease.
  select * into r from private.idempotent_requests i
  where i.caller is not distinct from begin_idempotent_request.caller and i.key = begin_idempotent_request.key
  for update;
  if r.fingerprint <> begin_idempotent_request.fingerprint then
    return query select 'mismatch', r.id, null::integer, null::text;
  elsif r.status is not null then
    return query select 'replay', r.id, r.status, r.body;
  elsif r.lease_until > now() then
    return query select 'running', r.id, null::integer, null::text;
  elsif r.changed_data then
    return query select 'interrupted', r.id, null::integer, null::text;
  else
    update private.idempotent_requests i
    set lease_until = now() + make_interval(secs => begin_idempotent_request.lease_ms / 1000.0)
    where i.id = r.id;
    return query select 'started', r.id, null::integer, null::text;
  end if;
end;
$$;
comment on function private.begin_idempotent_request(uuid, text, text, integer) is 'Claims an idempotency key for a request, or says why not: replay, mismatch, running or interrupted (service role).';
grant execute on function private.begin_idempotent_request(uuid, text, text, integer) to service_role;

-- Appended by the edge to every transaction of a keyed request, before its
-- commit, as whoever runs it: when the transaction wrote anything (it has a
-- transaction id), the key records that data changed under it, committed
-- together with that change or not at all. Security definer: the caller's role
-- may not touch the table; the key's id is known only to the edge.
create function private.note_idempotent_write(request_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  update private.idempotent_requests i set changed_data = true
  where i.id = note_idempotent_write.request_id and not i.changed_data
    and pg_catalog.pg_current_xact_id_if_assigned() is not null;
end;
$$;
comment on function private.note_idempotent_write(uuid) is 'Records, in the same transaction, that a keyed request changed data (only when the transaction wrote anything).';
grant execute on function private.note_idempotent_write(uuid) to authenticated, service_role;

-- The request's answer, once it ends: stored, or (a 429 or a 5xx of a request
-- that changed nothing, which may be tried again as it is) the key released.
create function private.finish_idempotent_request(request_id uuid, status integer, body text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  delete from private.idempotent_requests i
  where i.id = finish_idempotent_request.request_id and i.status is null and not i.changed_data
    and (finish_idempotent_request.status = 429 or finish_idempotent_request.status >= 500);
  if not found then
    update private.idempotent_requests i
    set status = finish_idempotent_request.status, body = finish_idempotent_request.body
    where i.id = finish_idempotent_request.request_id and i.status is null;
  end if;
end;
$$;
comment on function private.finish_idempotent_request(uuid, integer, text) is 'Stores a keyed request''s answer, or releases the key of a 429 or 5xx that changed nothing (service role).';
grant execute on function private.finish_idempotent_request(uuid, integer, text) to service_role;

-- Section: erasure

-- Erasing personal data (public.erase_delivery_recipient) reaches the stored
-- answers too: in every stored answer that names the subject (its id appears
-- in the body), each JSON string equal to one of the erased values becomes
-- null, so a replay afterwards carries none of them. The fingerprint stays:
-- the same key with another request is still refused.
create function private.erase_from_idempotent_answers(subject_id uuid, erased text[])
returns integer
language plpgsql
set search_path = ''
as $$
declare
  changed integer;
begin
  update private.idempotent_requests i
  set body = private.jsonb_without_values(i.body::jsonb, erase_from_idempotent_answers.erased)::text
  where i.body is not null and strpos(i.body, erase_from_idempotent_answers.subject_id::text) > 0
    and case when pg_catalog.pg_input_is_valid(i.body, 'jsonb')
      then i.body::jsonb <> private.jsonb_without_values(i.body::jsonb, erase_from_idempotent_answers.erased)
      else false end;
  get diagnostics changed = row_count;
  return changed;
end;
$$;
comment on function private.erase_from_idempotent_answers(uuid, text[]) is 'Replaces erased values with null in the stored answers that name a subject (erasure of personal data); returns how many answers changed.';

-- Section: retention

create function private.purge_idempotent_requests()
returns integer
language plpgsql
set search_path = ''
as $$
declare
  purged integer;
begin
  delete from private.idempotent_requests i where i.created_at < now() - interval '24 hours';
  get diagnostics purged = row_count;
  return purged;
end;
$$;
comment on function private.purge_idempotent_requests() is 'Removes idempotency keys older than 24 hours; returns how many.';

select cron.schedule('purge-idempotency-keys', '41 * * * *', 'select private.purge_idempotent_requests()');
