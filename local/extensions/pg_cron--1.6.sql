-- Local stand-in for pg_cron 1.6 (citusdata/pg_cron): the objects of the real
-- extension's scripts (pg_cron.sql and its upgrades up to 1.6), with the C
-- functions written in SQL. Jobs live in cron.job as on Supabase; the local
-- stack's scheduler (local/scheduler.ts) reads that table every second, runs
-- due jobs as their username and records each run in cron.job_run_details.
-- Schedules are read by local/cron-schedule.mjs (croner), here and in the
-- scheduler alike.
-- Differences from the real extension: the functions run with the caller's
-- rights (the real ones write cron.job as the extension owner), so a caller
-- needs write access to cron.job (postgres has it); cron.database_name and
-- cron.timezone are not read (jobs run in UTC, pg_cron's default GMT).
\echo Use "CREATE EXTENSION pg_cron" to load this file. \quit

create schema cron;
create sequence cron.jobid_seq;
grant select on sequence cron.jobid_seq to public;

create table cron.job (
  jobid bigint primary key default pg_catalog.nextval('cron.jobid_seq'),
  schedule text not null,
  command text not null,
  nodename text not null default 'localhost',
  nodeport int not null default pg_catalog.inet_server_port(),
  database text not null default pg_catalog.current_database(),
  username text not null default current_user,
  active boolean not null default 'true',
  jobname text
);
create unique index jobname_username_idx on cron.job (jobname, username);
alter table cron.job add constraint jobname_username_uniq unique using index jobname_username_idx;
grant select on cron.job to public;
alter table cron.job enable row level security;
create policy cron_job_policy on cron.job using (username operator(pg_catalog.=) current_user);
select pg_catalog.pg_extension_config_dump('cron.job', '');
select pg_catalog.pg_extension_config_dump('cron.jobid_seq', '');

create sequence cron.runid_seq;
grant select on sequence cron.runid_seq to public;
create table cron.job_run_details (
  jobid bigint,
  runid bigint primary key default pg_catalog.nextval('cron.runid_seq'),
  job_pid integer,
  database text,
  username text,
  command text,
  status text,
  return_message text,
  start_time timestamptz,
  end_time timestamptz
);
grant select on cron.job_run_details to public;
grant delete on cron.job_run_details to public;
alter table cron.job_run_details enable row level security;
create policy cron_job_run_details_policy on cron.job_run_details
  using (username operator(pg_catalog.=) current_user);
select pg_catalog.pg_extension_config_dump('cron.job_run_details', '');
select pg_catalog.pg_extension_config_dump('cron.runid_seq', '');

-- A schedule as pg_cron accepts it, normalized for the scheduler ({"seconds":
-- n}, {"reboot": true}, or the minutes, hours, days, months and days of week
-- of a cron expression), or NULL when pg_cron refuses it. The real extension
-- parses in C; this stand-in asks local/cron-schedule.mjs, which reads the
-- schedule with croner, the library local/scheduler.ts runs the jobs with:
-- COPY FROM PROGRAM runs it with Node.js, as the extension's owner (a
-- superuser; hence security definer), the schedule passed as hex so that no
-- shell reads it. local/install-extensions.ts writes the command in.
create function cron._parse_schedule(schedule text)
returns jsonb
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  parsed text;
begin
  if schedule is null then
    return null;
  end if;
  create temporary table if not exists pg_cron_schedule (line text) on commit drop;
  delete from pg_temp.pg_cron_schedule;
  execute pg_catalog.format('copy pg_temp.pg_cron_schedule from program %L',
    '@PARSE_SCHEDULE_COMMAND@ ' || pg_catalog.encode(pg_catalog.convert_to(schedule, 'UTF8'), 'hex'));
  select s.line into parsed from pg_temp.pg_cron_schedule s;
  return parsed::jsonb;
end
$$;
revoke all on function cron._parse_schedule(text) from public;

create function cron._check_schedule(schedule text)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if cron._parse_schedule(schedule) is null then
    raise exception 'invalid schedule: %', schedule
      using errcode = 'invalid_parameter_value',
            hint = 'Use cron format (e.g. 5 4 * * *), or interval format ''[1-59] seconds''';
  end if;
end
$$;

create function cron._schedule(job_name text, schedule text, command text, database text, username text, active boolean)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  id bigint;
begin
  if schedule is null then
    raise exception 'schedule can not be NULL';
  end if;
  if command is null then
    raise exception 'command can not be NULL';
  end if;
  perform cron._check_schedule(schedule);
  if username is not null and username <> current_user then
    if not (select rolsuper from pg_catalog.pg_roles where rolname = current_user) then
      raise exception 'must be superuser to create a job for another role';
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = username) then
      raise exception 'role "%" does not exist', username;
    end if;
    if not (select rolcanlogin from pg_catalog.pg_roles where rolname = username) then
      raise exception 'role "%" can not log in', username
        using detail = 'Jobs may only be run by roles that have the LOGIN attribute.';
    end if;
  end if;
  if job_name is null then
    insert into cron.job (schedule, command, database, username, active)
    values (schedule, command, coalesce(database, pg_catalog.current_database()),
            coalesce(username, current_user), coalesce(active, true))
    returning jobid into id;
  else
    insert into cron.job (schedule, command, database, username, active, jobname)
    values (schedule, command, coalesce(database, pg_catalog.current_database()),
            coalesce(username, current_user), coalesce(active, true), job_name)
    on conflict on constraint jobname_username_uniq do update
      set schedule = excluded.schedule, command = excluded.command, database = excluded.database
    returning jobid into id;
  end if;
  return id;
end
$$;

create function cron.schedule(schedule text, command text)
returns bigint
language sql strict
set search_path = ''
begin atomic
  select cron._schedule(null, schedule, command, null, null, true);
end;
comment on function cron.schedule(text, text) is 'schedule a pg_cron job';

create function cron.schedule(job_name text, schedule text, command text)
returns bigint
language plpgsql
set search_path = ''
as $$
begin
  if job_name is null then
    raise exception 'job_name can not be NULL';
  end if;
  return cron._schedule(job_name, schedule, command, null, null, true);
end
$$;
comment on function cron.schedule(text, text, text) is 'schedule a pg_cron job';

create function cron.schedule_in_database(job_name text, schedule text, command text, database text,
                                          username text default null, active boolean default 'true')
returns bigint
language plpgsql
set search_path = ''
as $$
begin
  if job_name is null then
    raise exception 'job_name can not be NULL';
  end if;
  if not exists (select from pg_catalog.pg_database d where d.datname = database) then
    raise exception 'database "%" does not exist', database;
  end if;
  return cron._schedule(job_name, schedule, command, database, username, active);
end
$$;
comment on function cron.schedule_in_database(text, text, text, text, text, boolean) is 'schedule a pg_cron job';
revoke all on function cron.schedule_in_database(text, text, text, text, text, boolean) from public;

create function cron.unschedule(job_id bigint)
returns bool
language plpgsql strict
set search_path = ''
as $$
begin
  delete from cron.job where jobid = job_id;
  if not found then
    raise exception 'could not find valid entry for job %', job_id;
  end if;
  return true;
end
$$;
comment on function cron.unschedule(bigint) is 'unschedule a pg_cron job';

create function cron.unschedule(job_name text)
returns bool
language plpgsql strict
set search_path = ''
as $$
begin
  delete from cron.job where jobname = job_name and username = current_user;
  if not found then
    raise exception 'could not find valid entry for job ''%''', job_name;
  end if;
  return true;
end
$$;
comment on function cron.unschedule(text) is 'unschedule a pg_cron job';

create function cron.alter_job(job_id bigint, schedule text default null, command text default null,
                               database text default null, username text default null,
                               active boolean default null)
returns void
language plpgsql
set search_path = ''
as $$
declare
  superuser boolean := (select rolsuper from pg_catalog.pg_roles where rolname = current_user);
begin
  if job_id is null then
    raise exception 'job_id can not be NULL';
  end if;
  if schedule is null and command is null and database is null and username is null and active is null then
    raise exception 'no updates specified'
      using hint = 'You must specify at least one job attribute to change when calling alter_job';
  end if;
  if username is not null then
    if not superuser then
      raise exception 'must be superuser to alter username';
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = username and rolcanlogin) then
      raise exception 'role "%" does not exist or can not log in', username;
    end if;
  end if;
  if schedule is not null then
    perform cron._check_schedule(schedule);
  end if;
  update cron.job j
     set schedule = coalesce(alter_job.schedule, j.schedule),
         command = coalesce(alter_job.command, j.command),
         database = coalesce(alter_job.database, j.database),
         username = coalesce(alter_job.username, j.username),
         active = coalesce(alter_job.active, j.active)
   where j.jobid = job_id and (superuser or j.username = current_user);
  if not found then
    raise exception 'Job % does not exist or you don''t own it', job_id;
  end if;
end
$$;
comment on function cron.alter_job(bigint, text, text, text, text, boolean)
  is 'Alter the job identified by job_id. Any option left as NULL will not be modified.';
revoke all on function cron.alter_job(bigint, text, text, text, text, boolean) from public;
