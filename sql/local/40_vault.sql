-- Supabase Vault, which every Supabase project has: vault.create_secret(),
-- vault.update_secret() and vault.decrypted_secrets. For the embedded server
-- it is the stand-in extension of local/extensions/ (secrets stored
-- unencrypted); a server without it (a plain DATABASE_URL) goes without.
-- pg_cron and pg_net are not created here: the migrations create them, as on
-- a hosted project (their stand-ins are installed beside the embedded server).
do $$
begin
  if exists (select from pg_available_extensions where name = 'supabase_vault') then
    create extension if not exists supabase_vault;
  end if;
end
$$;
