-- What the Supabase CLI's database commands expect of a Supabase database:
-- `supabase inspect db` reads query statistics from
-- extensions.pg_stat_statements (the library is preloaded by local/postgres.ts,
-- as Supabase preloads it), and `supabase test db` runs pgTAP, which it creates
-- in `extensions` when the embedded server has its files (local/test-db.ts and
-- local/supabase-cli.ts put them there).
create extension if not exists pg_stat_statements with schema extensions;
