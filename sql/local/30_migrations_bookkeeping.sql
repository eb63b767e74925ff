-- The Supabase CLI's migration bookkeeping, so `supabase db push` against the
-- local database sees the same history the local stack applied.
create schema if not exists supabase_migrations;
create table if not exists supabase_migrations.schema_migrations (
  version text primary key,
  statements text[],
  name text
);
create table if not exists supabase_migrations.seed_files (
  path text primary key,
  hash text not null
);
