-- Supabase Vault, which every Supabase project has: vault.create_secret(),
-- vault.update_secret() and vault.decrypted_secrets. Locally it is the
-- stand-in extension of local/extensions/ (secrets stored unencrypted).
-- pg_cron and pg_net are not created here: migrations create them, as on
-- Supabase (their stand-ins are installed beside the embedded server too).
create extension if not exists supabase_vault;
