-- Brazil: the rules of Brazilian documents (CPF, CNPJ), mobile numbers and Pix
-- keys, each written once and used by every table and function that takes one
-- (docs/contract.md, Brazilian documents and Pix keys). The edge holds the same
-- rules (functions/api/brazil.ts, with @brazilian-utils/brazilian-utils), so that
-- a caller learns a mistake as a 400 naming the field; these are the last word,
-- for supabase-js callers too. Each mirrors the library's function of the same
-- purpose (isValidCpf, isValidCnpj, isValidMobilePhone), so the two never
-- disagree on a number. Stored forms are canonical: a document as its digits
-- (and an alphanumeric CNPJ's letters, upper case), a phone key as E.164, an
-- e-mail or a random key in lowercase.
--
-- This file sorts before 02_company.sql: the tables of the later files name
-- these functions in their check constraints.

-- Section: documents

create function private.cpf_valid(cpf text)
returns boolean
language plpgsql
immutable
set search_path = ''
as $$
declare
  digits text;
  total integer;
  check_digit integer;
begin
  -- Eleven digits, punctuated as people write them (529.982.247-25) or not at all.
  if cpf_valid.cpf is null or cpf_valid.cpf !~ '^\s*\d{3}[\s./-]*\d{3}[\s./-]*\d{3}[\s./-]*\d{2}\s*$' then
    return false;
  end if;
  digits := regexp_replace(cpf_valid.cpf, '\D', '', 'g');
  -- 111.111.111-11 has right check digits and is no one's.
  if digits = repeat(left(digits, 1), 11) then
    return false;
  end if;
  -- The 10th digit checks the first 9 (weights 10..2), the 11th the first 10 (weights 11..2).
  for n in 9..10 loop
    total := 0;
    for i in 1..n loop
      total := total + substr(digits, i, 1)::integer * (n + 2 - i);
    end loop;
    check_digit := case when total % 11 < 2 then 0 else 11 - total % 11 end;
    if substr(digits, n + 1, 1)::integer <> check_digit then
      return false;
    end if;
  end loop;
  return true;
end;
$$;
comment on function private.cpf_valid(text) is 'Whether the text is a CPF, with or without its punctuation: 11 digits, its two check digits right, not one digit repeated.';

create function private.cnpj_valid(cnpj text)
returns boolean
language plpgsql
immutable
set search_path = ''
as $$
declare
  -- Letters are read upper case: q0slfmbd7vx439 is Q0SLFMBD7VX439.
  upper_cnpj text := upper(cnpj_valid.cnpj);
  chars text;
  total integer;
  check_digit integer;
begin
  -- Twelve digits or upper-case letters (since July 2026 the Receita Federal issues CNPJs with letters), then two
  -- check digits, punctuated as people write them (11.222.333/0001-81, 12.ABC.345/01DE-35) or not at all.
  if upper_cnpj is null
     or upper_cnpj !~ '^\s*[0-9A-Z]{2}[\s./-]*[0-9A-Z]{3}[\s./-]*[0-9A-Z]{3}[\s./-]*[0-9A-Z]{4}[\s./-]*[0-9]{2}\s*$' then
    return false;
  end if;
  chars := regexp_replace(upper_cnpj, '[^0-9A-Z]', '', 'g');
  -- 11.111.111/1111-11 has right check digits and is no one's; the alphanumeric form reserves no number.
  if chars ~ '^[0-9]+$' and chars = repeat(left(chars, 1), 14) then
    return false;
  end if;
  -- The 13th character checks the first 12, the 14th the first 13, each character worth its ASCII code minus 48
  -- (a digit its value, A 17, Z 42), with weights 2..9 from the right, repeated.
  for n in 12..13 loop
    total := 0;
    for i in 1..n loop
      total := total + (ascii(substr(chars, i, 1)) - 48) * ((n - i) % 8 + 2);
    end loop;
    check_digit := case when total % 11 < 2 then 0 else 11 - total % 11 end;
    if ascii(substr(chars, n + 1, 1)) - 48 <> check_digit then
      return false;
    end if;
  end loop;
  return true;
end;
$$;
comment on function private.cnpj_valid(text) is 'Whether the text is a CNPJ, numeric or alphanumeric, with or without its punctuation, lower case too: 12 digits or letters and two check digits on their ASCII codes minus 48, not one digit repeated (as @brazilian-utils isValidCnpj with version 2).';

create function private.normalize_document(document text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  if private.cpf_valid(normalize_document.document) or private.cnpj_valid(normalize_document.document) then
    return regexp_replace(upper(normalize_document.document), '[^0-9A-Z]', '', 'g');
  end if;
  return null;
end;
$$;
comment on function private.normalize_document(text) is 'A CPF or CNPJ as stored: its digits and upper-case letters, without punctuation, or null when the text is neither.';

-- Section: phone numbers and Pix keys

create function private.mobile_phone_e164(phone text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
declare
  digits text;
begin
  -- (11) 98888-7777, 11988887777, +55 11 98888-7777: digits and the signs people write between them.
  if mobile_phone_e164.phone is null or mobile_phone_e164.phone !~ '^[\d\s().+-]+$' then
    return null;
  end if;
  digits := regexp_replace(mobile_phone_e164.phone, '\D', '', 'g');
  -- The country code, written 55 or 0055, when what follows it is a whole number.
  if digits ~ '^0055' and length(digits) - 4 in (10, 11) then
    digits := substr(digits, 5);
  elsif digits ~ '^55' and length(digits) - 2 in (10, 11) then
    digits := substr(digits, 3);
  end if;
  -- The area code (DDD) and nine digits, the first of them 6 to 9.
  if length(digits) <> 11 or substr(digits, 3, 1) not in ('6', '7', '8', '9')
     or left(digits, 2)::integer not in (11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 24, 27, 28, 31, 32, 33, 34, 35, 37,
       38, 41, 42, 43, 44, 45, 46, 47, 48, 49, 51, 53, 54, 55, 61, 62, 63, 64, 65, 66, 67, 68, 69, 71, 73, 74, 75, 77,
       79, 81, 82, 83, 84, 85, 86, 87, 88, 89, 91, 92, 93, 94, 95, 96, 97, 98, 99) then
    return null;
  end if;
  return '+55' || digits;
end;
$$;
comment on function private.mobile_phone_e164(text) is 'A Brazilian mobile number typed any usual way as E.164 (+5511988887777), or null when it is not one.';

create function private.normalize_pix_key(pix_key text, pix_key_type text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
declare
  key text := btrim(normalize_pix_key.pix_key);
begin
  return case normalize_pix_key.pix_key_type
    when 'cpf' then case when private.cpf_valid(key) then private.normalize_document(key) end
    when 'cnpj' then case when private.cnpj_valid(key) then private.normalize_document(key) end
    when 'phone' then private.mobile_phone_e164(key)
    when 'email' then case when length(key) <= 77 and key ~ '^[^@[:space:]]+@[^@[:space:]]+\.[^@[:space:]]+$' then lower(key) end
    when 'evp' then case when key ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then lower(key) end
  end;
end;
$$;
comment on function private.normalize_pix_key(text, text) is 'A Pix key in the form the Pix directory writes it (cpf digits, cnpj digits and upper-case letters, phone E.164 of a mobile number, e-mail and evp lowercase), or null when it is not a key of its type.';

-- The check constraints that name them run as the writer.
grant execute on function private.cpf_valid(text), private.cnpj_valid(text), private.normalize_document(text),
  private.mobile_phone_e164(text), private.normalize_pix_key(text, text) to authenticated, service_role;

-- Section: address lookups (GET /api/v1/postcodes/{cep} and /api/v1/geocode)

-- Both proxy paid or rate-limited services (ViaCEP, Nominatim): each user may
-- make a number of lookups a minute, counted here so that every edge instance
-- shares the count, and refused like PUT /api/v1/locations/me (PT429 with
-- {"retry_after": seconds}, which the edge answers as 429 with Retry-After).
create table private.address_lookup_meters (
  user_id uuid primary key,
  -- A fixed window: the first lookup after the previous window ended opens the next.
  window_started_at timestamptz not null,
  lookups integer not null check (lookups >= 0)
);
comment on table private.address_lookup_meters is 'Address lookups (CEP and geocoding) of each user in the current minute, shared by every edge instance.';
alter table private.address_lookup_meters enable row level security;
create policy address_lookup_meters_service on private.address_lookup_meters
  for all to service_role
  using (true)
  with check (true);
grant select, insert, update, delete on private.address_lookup_meters to service_role;

-- Counts one lookup of `user_id`, or raises PT429 (nothing counted) when the
-- user already made `per_minute` in the current window.
create function private.meter_address_lookup(user_id uuid, per_minute integer)
returns void
language plpgsql
set search_path = ''
as $$
declare
  meter private.address_lookup_meters;
  retry_after integer;
begin
  insert into private.address_lookup_meters as m (user_id, window_started_at, lookups)
  values (meter_address_lookup.user_id, now(), 1)
  on conflict on constraint address_lookup_meters_pkey do update set
    window_started_at = case when m.window_started_at <= now() - interval '1 minute' then now()
      else m.window_started_at end,
    lookups = case when m.window_started_at <= now() - interval '1 minute' then 1 else m.lookups + 1 end
  returning * into meter;
  if meter.lookups > meter_address_lookup.per_minute then
    retry_after := least(60, greatest(1,
      ceil(extract(epoch from meter.window_started_at + interval '1 minute' - now()))::integer));
    raise exception using
      errcode = 'PT429',
      message = format('address lookups are limited to %s a minute', meter_address_lookup.per_minute),
      detail = jsonb_build_object('retry_after', retry_after)::text,
      hint = format('retry after %s seconds', retry_after);
  end if;
end;
$$;
comment on function private.meter_address_lookup(uuid, integer) is 'Counts one address lookup of a user, or raises PT429 (detail {"retry_after": seconds}) past the per-minute limit (service role).';
grant execute on function private.meter_address_lookup(uuid, integer) to service_role;

-- The services' answers, by normalized query, kept a day: the same CEP or text
-- asked again (by anyone, or by an import's many rows) costs the service nothing.
create table private.address_lookups (
  kind text not null check (kind in ('postcode', 'geocode')),
  query text not null check (length(query) between 1 and 400),
  -- {"value": the answer} (a CEP's address or null, a text's places).
  answer jsonb not null,
  fetched_at timestamptz not null default now(),
  primary key (kind, query)
);
comment on table private.address_lookups is 'Answers of the postcode and geocoding services by normalized query, kept one day.';
create index address_lookups_fetched_at_idx on private.address_lookups (fetched_at);
alter table private.address_lookups enable row level security;
create policy address_lookups_service on private.address_lookups
  for all to service_role
  using (true)
  with check (true);
grant select, insert, update, delete on private.address_lookups to service_role;

create function private.cached_address_lookup(kind text, query text)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
  return (select l.answer from private.address_lookups l
    where l.kind = cached_address_lookup.kind and l.query = cached_address_lookup.query
      and l.fetched_at > now() - interval '1 day');
end;
$$;
comment on function private.cached_address_lookup(text, text) is 'A service''s answer to a normalized query, when it is less than a day old; null otherwise (service role).';
grant execute on function private.cached_address_lookup(text, text) to service_role;

create function private.store_address_lookup(kind text, query text, answer jsonb)
returns void
language plpgsql
set search_path = ''
as $$
begin
  insert into private.address_lookups as l (kind, query, answer, fetched_at)
  values (store_address_lookup.kind, store_address_lookup.query, store_address_lookup.answer, now())
  on conflict on constraint address_lookups_pkey do update set answer = excluded.answer, fetched_at = excluded.fetched_at;
end;
$$;
comment on function private.store_address_lookup(text, text, jsonb) is 'Keeps a service''s answer to a normalized query for a day (service role).';
grant execute on function private.store_address_lookup(text, text, jsonb) to service_role;

create function private.purge_address_lookups()
returns integer
language plpgsql
set search_path = ''
as $$
declare
  purged integer;
begin
  delete from private.address_lookups l where l.fetched_at <= now() - interval '1 day';
  get diagnostics purged = row_count;
  delete from private.address_lookup_meters m where m.window_started_at <= now() - interval '1 minute';
  return purged;
end;
$$;
comment on function private.purge_address_lookups() is 'Removes cached address answers older than a day and meters of past windows; returns how many answers.';
-- Run hourly by pg_cron (10_jobs.sql, purge-address-lookups).
