-- PostgREST's schema cache follows the schema as on a Supabase project: every
-- project has two event triggers that send `NOTIFY pgrst, 'reload schema'`
-- when DDL changes something the API may expose (a table, view, function,
-- type, trigger, rule, comment or schema), so that a new table answers right
-- after its migration. The local PostgREST (local/rest/) listens on `pgrst`.
-- Written for the local stack (Supabase installs its own); left alone where
-- they exist already, e.g. on the database `supabase start` runs.
do $$
begin
  if exists (select from pg_event_trigger where evtname in ('pgrst_ddl_watch', 'pgrst_drop_watch')) then
    return;
  end if;

  create or replace function extensions.pgrst_ddl_watch() returns event_trigger
  language plpgsql as $fn$
  declare
    command record;
  begin
    for command in select * from pg_event_trigger_ddl_commands() loop
      if command.command_tag in (
        'CREATE SCHEMA', 'ALTER SCHEMA',
        'CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO', 'ALTER TABLE',
        'CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE',
        'CREATE VIEW', 'ALTER VIEW', 'CREATE MATERIALIZED VIEW', 'ALTER MATERIALIZED VIEW',
        'CREATE FUNCTION', 'ALTER FUNCTION', 'CREATE TRIGGER', 'CREATE TYPE', 'ALTER TYPE',
        'CREATE RULE', 'COMMENT'
      ) and command.schema_name is distinct from 'pg_temp' then
        notify pgrst, 'reload schema';
      end if;
    end loop;
  end
  $fn$;

  create or replace function extensions.pgrst_drop_watch() returns event_trigger
  language plpgsql as $fn$
  declare
    dropped record;
  begin
    for dropped in select * from pg_event_trigger_dropped_objects() loop
      if dropped.object_type in (
        'schema', 'table', 'foreign table', 'view', 'materialized view', 'function', 'trigger', 'type', 'rule'
      ) and not dropped.is_temporary then
        notify pgrst, 'reload schema';
      end if;
    end loop;
  end
  $fn$;

  comment on function extensions.pgrst_ddl_watch() is 'Tells PostgREST to reload its schema cache after DDL';
  comment on function extensions.pgrst_drop_watch() is 'Tells PostgREST to reload its schema cache after a DROP';

  create event trigger pgrst_ddl_watch on ddl_command_end execute procedure extensions.pgrst_ddl_watch();
  create event trigger pgrst_drop_watch on sql_drop execute procedure extensions.pgrst_drop_watch();
end
$$;
