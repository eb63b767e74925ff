-- Proof of delivery (docs/contract.md, Proof of delivery): the driver of a
-- delivery in progress uploads a photo and/or the recipient's signature to the
-- private Storage bucket `delivery-proofs`, one of each kind, and may replace
-- (upsert) and read back their own until the delivery leaves in_progress; the
-- company's managers read them; nobody else does. Completing the delivery attaches them (with an
-- optional note), and a company may require any of the three. A failed attempt's photo is one more kind,
-- under the same rules: one per attempt, attached by `fail` (11_lifecycle.sql).
--
-- Object names: `{company_id}/{delivery_id}/photo.{ext}`,
-- `{company_id}/{delivery_id}/signature.{ext}` and, for attempt N (the delivery's `attempts` while it is
-- in progress), `{company_id}/{delivery_id}/failed-{N}.{ext}`; ext jpg, jpeg, png or webp.
-- Storage enforces the bucket's size and type limits; the policies below
-- decide who may write and read, and tie the extension to the media type.

-- The bucket itself (private, images, 5 MiB each) is declared in
-- supabase/config.toml, [storage.buckets.delivery-proofs]: a bucket is a row of
-- storage.buckets, data that a schema diff does not carry. `supabase start`,
-- `supabase db reset` and `supabase seed buckets` create it from there, and so
-- does the local stack (local/database.ts).

-- Section: types (02_company.sql says why functions return them)

create type public.proof_requirements_set as (photo boolean, signature boolean, note boolean, handover_code boolean);
comment on type public.proof_requirements_set is 'Which proof a company requires to complete a delivery.';

-- Section: who may write and read

-- The proof kind an object name stands for (photo, signature, or failed-N for
-- attempt N), or null when the name is not `{uuid}/{uuid}/{kind}.{ext}` with both
-- ids in their canonical text (lower case, hyphens 8-4-4-4-12), an attempt
-- number without leading zeros, and an image extension: Postgres reads other
-- spellings of a uuid too (hyphens elsewhere, upper case), and a second spelling
-- of the same delivery (or of the same attempt) would be a second name for
-- "once per kind".
create function private.proof_kind(name text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  return case when proof_kind.name ~ ('^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/){2}'
      || '(photo|signature|failed-[1-9][0-9]{0,9})\.(jpg|jpeg|png|webp)$')
    then split_part(split_part(proof_kind.name, '/', 3), '.', 1) end;
end;
$$;
comment on function private.proof_kind(text) is 'photo, signature or failed-N for a well-formed proof object name (canonical ids, attempt number, image extension), else null.';

-- The kind of the photo of a delivery's attempt that failed: `failed-{attempt}`.
-- Each attempt has its own, so a reopened delivery that fails again keeps the
-- first attempt's photo as it was.
create function private.failure_photo_kind(attempt integer)
returns text
language plpgsql
immutable
set search_path = ''
as $$ begin return 'failed-' || failure_photo_kind.attempt; end; $$;
comment on function private.failure_photo_kind(integer) is 'The proof kind of the photo of a failed attempt: failed-{attempt}.';

-- The media type a proof object's extension stands for: Storage serves the
-- object with the type it was uploaded with, so the two must agree.
create function private.proof_media_type(name text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  return case substring(proof_media_type.name from '\.([a-z]+)$')
    when 'jpg' then 'image/jpeg' when 'jpeg' then 'image/jpeg' when 'png' then 'image/png' when 'webp' then 'image/webp'
  end;
end;
$$;
comment on function private.proof_media_type(text) is 'image/jpeg, image/png or image/webp for a proof object name''s extension, else null.';

-- Security definer: it reads the delivery whatever the caller may see. True
-- when the name is a proof object of a delivery of that company whose driver is
-- the caller, and the delivery is in progress: what that driver may read back
-- and replace. A failed attempt's photo only under the attempt under way: an
-- earlier attempt's is the record of that attempt, never written again (also
-- when the same driver carries the next one).
create function private.drives_proof(name text)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  kind text := private.proof_kind(drives_proof.name);
begin
  if kind is null then
    return false;
  end if;
  return exists (
    select from public.deliveries d
    where d.id = split_part(drives_proof.name, '/', 2)::uuid
      and d.company_id = split_part(drives_proof.name, '/', 1)::uuid
      and d.driver_id = (select private.driver_id())
      and d.status = 'in_progress'
      and (kind in ('photo', 'signature') or kind = private.failure_photo_kind(d.attempts)));
end;
$$;
comment on function private.drives_proof(text) is 'Whether the caller is the driver of the delivery in progress this proof object belongs to (a failed attempt''s photo: of the attempt under way).';

-- Security definer: it reads the bucket's objects whatever the caller may see.
-- True when the caller drives the delivery (above), the upload's media type is
-- the one its extension names (Storage checks the insert, and an upsert's
-- update, with the object's metadata as the upload declares it: `mimetype`,
-- `contentLength`), and no proof of that kind exists under another name: one
-- photo and one signature per delivery, each replaceable under its own name (a
-- retry after a lost completion, or a new photo) but never doubled as
-- photo.png beside photo.jpg. Whether the bytes are an image Storage cannot
-- say before they arrive: the edge checks them when the delivery is completed
-- (the photo, the signature) or fails (that attempt's photo).
create function private.may_upload_proof(name text, media_type text)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  kind text := private.proof_kind(may_upload_proof.name);
  folder text := split_part(may_upload_proof.name, '/', 1) || '/' || split_part(may_upload_proof.name, '/', 2);
begin
  if may_upload_proof.media_type is distinct from private.proof_media_type(may_upload_proof.name) then
    return false;
  end if;
  return private.drives_proof(may_upload_proof.name)
    and not exists (
      select from storage.objects o
      where o.bucket_id = 'delivery-proofs' and private.proof_kind(o.name) = kind
        and o.name like folder || '/%' and o.name <> may_upload_proof.name);
end;
$$;
comment on function private.may_upload_proof(text, text) is 'Whether the caller may write this proof object with this media type: the driver of the delivery in progress, one object per kind, the type its extension names.';
grant execute on function private.proof_kind(text), private.failure_photo_kind(integer), private.proof_media_type(text),
  private.drives_proof(text), private.may_upload_proof(text, text)
  to authenticated, service_role;

-- Storage's upsert is an insert ... on conflict do update: it needs the insert,
-- the update and the select policies (a plain upload only the insert). There is
-- no delete policy: a proof is replaced, never removed, and after the delivery
-- leaves in_progress nothing is written.
create policy delivery_proofs_insert_driver on storage.objects
  for insert to authenticated
  with check (
    bucket_id = 'delivery-proofs'
    and (select private.may_upload_proof(name, metadata ->> 'mimetype'))
  );

create policy delivery_proofs_update_driver on storage.objects
  for update to authenticated
  using (
    bucket_id = 'delivery-proofs'
    and (select private.drives_proof(name))
  )
  with check (
    bucket_id = 'delivery-proofs'
    and (select private.may_upload_proof(name, metadata ->> 'mimetype'))
  );

create policy delivery_proofs_select_driver on storage.objects
  for select to authenticated
  using (
    bucket_id = 'delivery-proofs'
    and (select private.drives_proof(name))
  );

create policy delivery_proofs_select_managers on storage.objects
  for select to authenticated
  using (
    bucket_id = 'delivery-proofs'
    and (storage.foldername(name))[1] = (select private.company_of(private.delivery_managers()))::text
  );

-- Section: what a company requires

create table public.proof_requirements (
  company_id uuid primary key references public.companies (id) on delete cascade,
  photo boolean not null default false,
  signature boolean not null default false,
  note boolean not null default false,
  updated_at timestamptz not null default now(),
  -- Each delivery created while it is on gets a handover code (Section: handover codes).
  handover_code boolean not null default false
);
comment on table public.proof_requirements is 'Which proof a company requires to complete a delivery (none when the company has no row).';
alter table public.proof_requirements enable row level security;
create policy proof_requirements_select_members on public.proof_requirements
  for select to authenticated
  using (company_id = (select private.company_id()));
grant select on public.proof_requirements to authenticated;
grant all on public.proof_requirements to service_role;

create function private.proof_requirements_row(company_id uuid)
returns public.proof_requirements_set
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- None stored: none required (the columns' defaults: 02_company.sql, private.with_defaults).
  return private.with_defaults((select to_jsonb(x) from public.proof_requirements x where x.company_id = proof_requirements_row.company_id),
    'public.proof_requirements', null::public.proof_requirements_set);
end;
$$;
comment on function private.proof_requirements_row(uuid) is 'A company''s proof requirements; none stored means none required.';
grant execute on function private.proof_requirements_row(uuid) to authenticated, service_role;

create function private.proof_requirements_json(company_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$ begin return to_jsonb(private.proof_requirements_row(proof_requirements_json.company_id)); end; $$;
comment on function private.proof_requirements_json(uuid) is 'A company''s proof requirements: {photo, signature, note, handover_code}.';
grant execute on function private.proof_requirements_json(uuid) to authenticated, service_role;

create function public.get_proof_requirements()
returns public.proof_requirements_set
language plpgsql
stable
set search_path = ''
as $$
begin
  return private.proof_requirements_row(private.authorize(variadic private.members()));
end;
$$;
comment on function public.get_proof_requirements() is 'Which proof the caller''s company requires to complete a delivery (every member).';
grant execute on function public.get_proof_requirements() to authenticated;

create function public.set_proof_requirements(photo boolean, signature boolean, note boolean,
  handover_code boolean default false)
returns public.proof_requirements_set
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
begin
  insert into public.proof_requirements as r (company_id, photo, signature, note, handover_code)
  values (company, set_proof_requirements.photo, set_proof_requirements.signature, set_proof_requirements.note,
    coalesce(set_proof_requirements.handover_code, false))
  on conflict on constraint proof_requirements_pkey do update set
    photo = excluded.photo, signature = excluded.signature, note = excluded.note,
    handover_code = excluded.handover_code, updated_at = now();
  return private.proof_requirements_row(company);
end;
$$;
comment on function public.set_proof_requirements(boolean, boolean, boolean, boolean) is 'Sets which proof the caller''s company requires to complete a delivery (owner, admin).';
grant execute on function public.set_proof_requirements(boolean, boolean, boolean, boolean) to authenticated;

-- Section: handover codes

-- The recipient's code at the door: 4 digits, made when a delivery is created while its company requires
-- them, shown to the recipient (the tracking page, the messages: private.handover_code_of) and never to a
-- driver: it lives in this private table, which no API role reads. A driver tries it with
-- public.try_handover_code, whose attempts are committed on their own (a wrong code is 422 at the edge, and
-- the attempt still counts); 5 wrong ones lock it (423) until a manager completes the delivery with
-- public.complete_delivery_override and a reason.
create table private.handover_codes (
  delivery_id uuid primary key references public.deliveries (id) on delete cascade,
  company_id uuid not null references public.companies (id) on delete cascade,
  code text not null check (code ~ '^[0-9]{4}$'),
  wrong_attempts integer not null default 0 check (wrong_attempts between 0 and 5),
  verified_at timestamptz,
  overridden_by uuid,
  overridden_at timestamptz,
  override_reason text check (length(override_reason) between 1 and 500),
  created_at timestamptz not null default now()
);
comment on table private.handover_codes is 'Each delivery''s handover code, the wrong attempts at it, and a manager''s override; never readable by a driver.';
create index handover_codes_company_idx on private.handover_codes (company_id);
alter table private.handover_codes enable row level security;

-- 4 digits from the CSPRNG (pgcrypto), uniform: two random bytes, redrawn above 59999.
create function private.new_handover_code()
returns text
language plpgsql
volatile
set search_path = ''
as $$
declare
  n integer;
begin
  loop
    n := ('x' || encode(extensions.gen_random_bytes(2), 'hex'))::bit(16)::integer;
    exit when n < 60000;
  end loop;
  return lpad((n % 10000)::text, 4, '0');
end;
$$;
comment on function private.new_handover_code() is 'A new handover code: 4 digits drawn uniformly from the cryptographic random generator.';

-- private.give_handover_code, the trigger on public.deliveries: 05_deliveries.sql, Section: what fires on a delivery.

-- For the recipient only (the tracking page, the messages), while the delivery is still to be delivered.
create function private.handover_code_of(delivery_id uuid)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select h.code from private.handover_codes h
          join public.deliveries d on d.id = h.delivery_id
          where h.delivery_id = handover_code_of.delivery_id
            and d.status in ('awaiting_payment', 'pending', 'accepted', 'in_progress'));
end;
$$;
comment on function private.handover_code_of(uuid) is 'A delivery''s handover code while it is to be delivered, for the recipient''s tracking page and messages (service role).';
grant execute on function private.handover_code_of(uuid) to service_role;

-- The driver at the door. Not raising for a wrong code is the point: the attempt is committed, so that 5 of
-- them lock the code whoever calls (the edge answers 422 for `wrong` and 423 for `locked`). The code and the
-- attempt are compared as SHA-256 digests, so how long a comparison takes says nothing of the code.
create function public.try_handover_code(delivery_id uuid, code text)
returns text
language plpgsql
security definer
set search_path = ''
as $$
declare
  delivery public.deliveries := private.lock_own_delivery(try_handover_code.delivery_id);
  handover private.handover_codes;
begin
  select * into handover from private.handover_codes h where h.delivery_id = delivery.id for update;
  if not found or delivery.status <> 'in_progress' or delivery.driver_id is distinct from private.driver_id() then
    return 'not_required';
  end if;
  if handover.wrong_attempts >= 5 then
    return 'locked';
  end if;
  if extensions.digest(coalesce(btrim(try_handover_code.code), ''), 'sha256') = extensions.digest(handover.code, 'sha256') then
    update private.handover_codes h set verified_at = coalesce(h.verified_at, now()) where h.delivery_id = delivery.id;
    return 'accepted';
  end if;
  update private.handover_codes h set wrong_attempts = h.wrong_attempts + 1 where h.delivery_id = delivery.id;
  return 'wrong';
end;
$$;
comment on function public.try_handover_code(uuid, text) is 'The linked driver tries the recipient''s handover code of a delivery in progress: accepted, wrong (counted), locked (5 wrong), or not_required.';
grant execute on function public.try_handover_code(uuid, text) to authenticated;

-- Called by public.complete_delivery on the locked delivery in progress.
create function private.check_handover_done(delivery public.deliveries)
returns void
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  handover private.handover_codes;
begin
  select * into handover from private.handover_codes h where h.delivery_id = delivery.id;
  if not found or handover.verified_at is not null then
    return;
  end if;
  if handover.wrong_attempts >= 5 then
    raise exception using errcode = 'PT423',
      message = 'too many wrong handover codes: the company must complete this delivery (complete-override)';
  end if;
  raise exception using errcode = 'PT422', message = 'the recipient''s handover code is required';
end;
$$;
comment on function private.check_handover_done(public.deliveries) is 'Raises 422 until the delivery''s handover code was tried right, 423 once 5 wrong ones locked it; nothing when it has none.';

create function public.complete_delivery_override(delivery_id uuid, reason text, collected_amount numeric default null,
  collected_method text default null)
returns public.delivery
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  delivery public.deliveries := private.lock_delivery(complete_delivery_override.delivery_id, company);
  clean_reason text := nullif(btrim(complete_delivery_override.reason), '');
begin
  if clean_reason is null or length(clean_reason) > 500 then
    raise exception using errcode = 'PT400', message = 'reason is required (at most 500 characters)';
  end if;
  update private.handover_codes h
  set overridden_by = (select auth.uid()), overridden_at = now(), override_reason = clean_reason
  where h.delivery_id = delivery.id and h.verified_at is null and delivery.status = 'in_progress';
  if not found and delivery.status = 'in_progress' then
    raise exception using errcode = 'PT422',
      message = 'this delivery is waiting for no handover code: its driver completes it';
  end if;
  delivery := private.finish_delivery(delivery, (select auth.uid()), complete_delivery_override.collected_amount,
    complete_delivery_override.collected_method);
  return private.delivery_row(delivery);
end;
$$;
comment on function public.complete_delivery_override(uuid, text, numeric, text) is 'A manager completes a delivery in progress whose handover code could not be given (locked or not), with a reason; the driver is credited as on completion.';
grant execute on function public.complete_delivery_override(uuid, text, numeric, text) to authenticated;

-- Section: completion

-- Called by public.complete_delivery on the locked delivery in progress: finds
-- the proof objects the driver uploaded, refuses (PT422, naming what is
-- missing) what the company requires and lacks, and stores them on the delivery.
create function private.attach_proof(delivery public.deliveries, note text)
returns public.deliveries
language plpgsql
set search_path = ''
as $$
declare
  folder text := delivery.company_id || '/' || delivery.id || '/';
  required jsonb := private.proof_requirements_json(delivery.company_id);
  photo text;
  signature text;
  clean_note text := nullif(btrim(attach_proof.note), '');
  missing text[] := '{}';
  attached public.deliveries;
begin
  select o.name into photo from storage.objects o
  where o.bucket_id = 'delivery-proofs' and o.name like folder || '%' and private.proof_kind(o.name) = 'photo'
  order by o.created_at limit 1;
  select o.name into signature from storage.objects o
  where o.bucket_id = 'delivery-proofs' and o.name like folder || '%' and private.proof_kind(o.name) = 'signature'
  order by o.created_at limit 1;
  if (required ->> 'photo')::boolean and photo is null then missing := array_append(missing, 'photo'); end if;
  if (required ->> 'signature')::boolean and signature is null then missing := array_append(missing, 'signature'); end if;
  if (required ->> 'note')::boolean and clean_note is null then missing := array_append(missing, 'note'); end if;
  if cardinality(missing) > 0 then
    raise exception using errcode = 'PT422',
      message = format('proof of delivery required: %s missing', array_to_string(missing, ', ')),
      detail = jsonb_build_object('missing', missing)::text;
  end if;
  if length(clean_note) > 1000 then
    raise exception using errcode = 'PT422', message = 'the note is longer than 1000 characters';
  end if;
  update public.deliveries d set proof_photo_path = photo, proof_signature_path = signature, proof_note = clean_note
  where d.id = delivery.id
  returning * into attached;
  return attached;
end;
$$;
comment on function private.attach_proof(public.deliveries, text) is 'Attaches the uploaded proof and the note to a delivery being completed, or raises PT422 naming the required proof that is missing.';

-- Section: a failed attempt's photo

-- Called by public.fail_delivery (11_lifecycle.sql) on the locked delivery in
-- progress: the photo the driver uploaded for the attempt under way, if any
-- (optional, whatever the company requires of a completion).
create function private.failure_photo(delivery public.deliveries)
returns text
language plpgsql
stable
set search_path = ''
as $$
begin
  return (select o.name from storage.objects o
    where o.bucket_id = 'delivery-proofs' and o.name like delivery.company_id || '/' || delivery.id || '/%'
      and private.proof_kind(o.name) = private.failure_photo_kind(delivery.attempts)
    order by o.created_at limit 1);
end;
$$;
comment on function private.failure_photo(public.deliveries) is 'The name of the photo the driver uploaded for a delivery''s attempt under way, or null.';
