-- Local stand-in for Supabase Vault 0.3.1 (supabase/vault,
-- sql/supabase_vault--0.3.0.sql): vault.secrets, vault.decrypted_secrets,
-- vault.create_secret() and vault.update_secret() with the real signatures.
-- A STAND-IN: the real Vault stores `secret` encrypted (libsodium AEAD, with a
-- key outside the database) and decrypts it in the view; here the secret is
-- stored as given and the view returns it, so use it for local secrets only.
-- As on Supabase, only postgres (and superusers) can read or write secrets.
\echo Use "CREATE EXTENSION supabase_vault" to load this file. \quit

create table vault.secrets (
  id uuid primary key default gen_random_uuid(),
  name text,
  description text not null default '',
  secret text not null,
  key_id uuid,
  nonce bytea,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp
);
comment on table vault.secrets is 'Table with encrypted `secret` column for storing sensitive information on disk.';
create unique index on vault.secrets using btree (name) where name is not null;

create view vault.decrypted_secrets as
select s.id,
  s.name,
  s.description,
  s.secret,
  s.secret as decrypted_secret,
  s.key_id,
  s.nonce,
  s.created_at,
  s.updated_at
from vault.secrets s;

create function vault.create_secret(
  new_secret text,
  new_name text = null,
  new_description text = '',
  -- unused
  new_key_id uuid = null
)
returns uuid
security definer
language plpgsql
set search_path = ''
as $$
declare
  rec record;
begin
  insert into vault.secrets (secret, name, description)
  values (new_secret, new_name, new_description)
  returning * into rec;
  return rec.id;
end
$$;

create function vault.update_secret(
  secret_id uuid,
  new_secret text = null,
  new_name text = null,
  new_description text = null,
  -- unused
  new_key_id uuid = null
)
returns void
security definer
language plpgsql
set search_path = ''
as $$
begin
  update vault.secrets s
  set
    secret = coalesce(new_secret, s.secret),
    name = coalesce(new_name, s.name),
    description = coalesce(new_description, s.description),
    updated_at = now()
  where s.id = secret_id;
end
$$;

revoke all on function vault.create_secret, vault.update_secret from public;
revoke all on schema vault from public;
revoke all on vault.secrets, vault.decrypted_secrets from public;
do $$
declare
  r text;
begin
  -- Supabase's API roles get nothing here (they exist locally from sql/local/00_roles.sql).
  foreach r in array array['anon', 'authenticated', 'service_role'] loop
    if exists (select from pg_catalog.pg_roles where rolname = r) then
      execute format('revoke all on schema vault from %I', r);
      execute format('revoke all on vault.secrets, vault.decrypted_secrets from %I', r);
      execute format('revoke all on function vault.create_secret, vault.update_secret from %I', r);
    end if;
  end loop;
  if exists (select from pg_catalog.pg_roles where rolname = 'postgres') then
    grant usage on schema vault to postgres with grant option;
    grant select, delete, truncate, references on vault.secrets, vault.decrypted_secrets to postgres with grant option;
    grant execute on function vault.create_secret, vault.update_secret to postgres with grant option;
  end if;
end
$$;

select pg_catalog.pg_extension_config_dump('vault.secrets', '');
