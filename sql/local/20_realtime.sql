-- The realtime schema as Supabase Realtime creates it: realtime.messages,
-- realtime.send(), send_binary(), broadcast_changes() and realtime.topic().
-- Local stack only. Real Realtime reads new messages through logical
-- replication; the local Realtime endpoint (local/realtime) is woken by the
-- NOTIFY of the trigger at the end instead.
create schema if not exists realtime;
grant usage on schema realtime to anon, authenticated, service_role, postgres;

create table if not exists realtime.messages (
  topic text not null,
  extension text not null,
  payload jsonb,
  event text,
  private boolean default false,
  updated_at timestamp without time zone not null default now(),
  inserted_at timestamp without time zone not null default now(),
  id uuid not null default gen_random_uuid(),
  primary key (id, inserted_at)
);
-- Bytes broadcast with realtime.send_binary (a column Realtime added to the table).
alter table realtime.messages add column if not exists binary_payload bytea;
create index if not exists messages_inserted_at_topic_index on realtime.messages (inserted_at desc, topic)
  where extension = 'broadcast' and private is true;
alter table realtime.messages enable row level security;
grant select, insert, update, delete on realtime.messages to postgres, service_role;
grant select, insert on realtime.messages to anon, authenticated;

create or replace function realtime.topic() returns text
language sql stable
as $$
  select nullif(current_setting('realtime.topic', true), '')::text;
$$;

-- Realtime's realtime.send (v2.129): the message's id, also in the payload
-- unless the payload has an `id` of its own; a failure is a warning, never the
-- caller's error.
create or replace function realtime.send(payload jsonb, event text, topic text, private boolean default true)
returns void
language plpgsql
as $$
declare
  message_id uuid := gen_random_uuid();
begin
  begin
    execute format('set local realtime.topic to %L', topic);
    insert into realtime.messages (id, payload, event, topic, private, extension)
    values (message_id,
            case when payload ? 'id' then payload else jsonb_set(payload, '{id}', to_jsonb(message_id)) end,
            event, topic, private, 'broadcast');
  exception
    when others then
      raise warning 'WarnSendingBroadcastMessage: %', sqlerrm;
  end;
end;
$$;

-- realtime.send_binary: a broadcast whose payload is bytes, which realtime-js
-- hands its listeners as an ArrayBuffer.
create or replace function realtime.send_binary(payload bytea, event text, topic text, private boolean default true)
returns void
language plpgsql
as $$
begin
  begin
    execute format('set local realtime.topic to %L', topic);
    insert into realtime.messages (binary_payload, event, topic, private, extension)
    values (payload, event, topic, private, 'broadcast');
  exception
    when others then
      raise warning 'WarnSendingBroadcastMessage: %', sqlerrm;
  end;
end;
$$;

-- realtime.broadcast_changes, for a row trigger ("Broadcast from Database"):
-- a private broadcast of {old_record, record, operation, table, schema}.
create or replace function realtime.broadcast_changes(
  topic_name text, event_name text, operation text, table_name text, table_schema text,
  new record, old record, level text default 'ROW'
) returns void
language plpgsql
as $$
begin
  if level = 'STATEMENT' then
    raise exception 'function can only be triggered for each row, not for each statement';
  end if;
  if operation not in ('INSERT', 'UPDATE', 'DELETE') then
    raise exception 'Unexpected operation type: %', operation;
  end if;
  perform realtime.send(
    jsonb_build_object('old_record', old, 'record', new, 'operation', operation, 'table', table_name,
                       'schema', table_schema),
    event_name, topic_name);
exception
  when others then
    raise exception 'Failed to process the row: %', sqlerrm;
end;
$$;
grant execute on function realtime.topic() to anon, authenticated, service_role, postgres;
grant execute on function realtime.send(jsonb, text, text, boolean), realtime.send_binary(bytea, text, text, boolean),
  realtime.broadcast_changes(text, text, text, text, text, record, record, text) to postgres, service_role;

create or replace function realtime.local_notify_broadcast() returns trigger
language plpgsql
as $$
begin
  perform pg_notify('realtime_local_broadcast', json_build_object('id', new.id, 'topic', new.topic)::text);
  return null;
end;
$$;
drop trigger if exists local_notify_broadcast on realtime.messages;
create trigger local_notify_broadcast after insert on realtime.messages
  for each row when (new.extension = 'broadcast') execute function realtime.local_notify_broadcast();

-- Section: postgres_changes
--
-- What Realtime installs for postgres_changes (its tenant migrations), for the
-- local stand-in (local/realtime/changes.ts): the supabase_realtime publication
-- (empty, as on a new project: `alter publication supabase_realtime add table
-- ...` enables a table), the realtime.subscription table with its filter
-- types, and the checks a subscription passes when created. Realtime reads
-- changes from a logical replication slot with wal2json and applies each
-- subscriber's RLS with realtime.apply_rls(); the stand-in decodes the slot
-- with pgoutput (built into Postgres) and calls realtime.local_apply_rls(),
-- written after it. Objects Realtime itself has keep its names; the stand-in's
-- own are named local_*, so that a database that Realtime also serves (the one
-- `supabase start` runs) keeps Realtime's versions.

do $$
begin
  if not exists (select from pg_publication where pubname = 'supabase_realtime') then
    create publication supabase_realtime;
  end if;
  if to_regtype('realtime.equality_op') is null then
    create type realtime.equality_op as enum
      ('eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in', 'like', 'ilike', 'is', 'match', 'imatch', 'isdistinct');
  end if;
  if to_regtype('realtime.user_defined_filter') is null then
    create type realtime.user_defined_filter as (column_name text, op realtime.equality_op, value text, negate boolean);
  end if;
  if to_regtype('realtime.local_wal_column') is null then
    create type realtime.local_wal_column as (name text, type_oid oid, value_text text, value jsonb, is_pkey boolean);
  end if;
end
$$;

create or replace function realtime.to_regrole(role_name text) returns regrole
language sql immutable
as $$ select role_name::regrole $$;

create table if not exists realtime.subscription (
  id bigint generated always as identity primary key,
  subscription_id uuid not null,
  entity regclass not null,
  filters realtime.user_defined_filter[] not null default '{}',
  claims jsonb not null,
  claims_role regrole not null generated always as (realtime.to_regrole(claims ->> 'role')) stored,
  created_at timestamp not null default timezone('utc', now()),
  action_filter text default '*' check (action_filter in ('*', 'INSERT', 'UPDATE', 'DELETE')),
  selected_columns text[]
);
create unique index if not exists subscription_subscription_id_entity_filters_action_filter_key
  on realtime.subscription (subscription_id, entity, filters, action_filter, coalesce(selected_columns, '{}'));
create index if not exists ix_realtime_subscription_entity on realtime.subscription (entity);
revoke all on realtime.subscription from anon, authenticated, service_role;

-- A text value as the JSON of its type (what a record's values become).
create or replace function realtime.local_cast(val text, type_ regtype) returns jsonb
language plpgsql immutable
as $$
declare
  result jsonb;
begin
  execute format('select to_jsonb(%L::%s)', val, type_) into result;
  return result;
end;
$$;

-- One filter of a subscription against a column's value: `val_1 <op> val_2`.
create or replace function realtime.local_check_filter(
  op realtime.equality_op, type_ regtype, val_1 text, val_2 text, negate boolean
) returns boolean
language plpgsql stable
as $$
declare
  result boolean;
  symbol text := case op
    when 'eq' then '=' when 'neq' then '<>' when 'lt' then '<' when 'lte' then '<=' when 'gt' then '>'
    when 'gte' then '>=' when 'in' then '= any' when 'like' then 'like' when 'ilike' then 'ilike'
    when 'match' then '~' when 'imatch' then '~*' end;
begin
  if op = 'isdistinct' then
    execute format('select %L::%s %s %L::%s', val_1, type_,
      case when negate then 'is not distinct from' else 'is distinct from' end, val_2, type_) into result;
    return result;
  end if;
  if op = 'is' then
    if val_2 not in ('null', 'true', 'false', 'unknown') then
      raise exception 'invalid value for is filter: must be null, true, false, or unknown';
    end if;
    execute format('select %L::%s %s %s', val_1, type_, case when negate then 'is not' else 'is' end, val_2) into result;
    return result;
  end if;
  execute format('select %L::%s %s (%L::%s)', val_1, type_, symbol, val_2,
    case when op = 'in' then type_::text || '[]' else type_::text end) into result;
  return case when negate then not result else result end;
end;
$$;

-- Whether a change's columns pass every filter (a filter on a column the change lacks, or a null, does not pass).
create or replace function realtime.local_visible_through_filters(
  columns realtime.local_wal_column[], filters realtime.user_defined_filter[]
) returns boolean
language sql stable
as $$
  select coalesce(array_length(filters, 1), 0) = 0 or coalesce(bool_and(
    col.name is not null and coalesce(
      realtime.local_check_filter(f.op, col.type_oid::regtype, col.value_text, f.value, coalesce(f.negate, false)),
      false)), false)
  from unnest(filters) f left join unnest(columns) col on col.name = f.column_name
$$;

-- Realtime's checks of a new subscription: each filter on a column its role may select, with a value of the
-- column's type (at most 100 for `in`), and selected columns that exist.
create or replace function realtime.local_subscription_check_filters() returns trigger
language plpgsql
as $$
declare
  role_name text := new.claims ->> 'role';
  col_names text[] := coalesce((
    select array_agg(a.attname::text order by a.attnum) from pg_catalog.pg_attribute a
    where a.attrelid = new.entity and a.attnum > 0 and not a.attisdropped
      and pg_catalog.has_column_privilege(role_name, a.attrelid, a.attnum, 'SELECT')), '{}');
  filter realtime.user_defined_filter;
  col_type regtype;
  selected text;
begin
  foreach filter in array new.filters loop
    if not filter.column_name = any(col_names) then
      raise exception 'invalid column for filter %', filter.column_name;
    end if;
    col_type := (select a.atttypid::regtype from pg_catalog.pg_attribute a
                 where a.attrelid = new.entity and a.attname = filter.column_name);
    if filter.op = 'in' then
      if coalesce(jsonb_array_length(realtime.local_cast(filter.value, (col_type::text || '[]')::regtype)), 0) > 100
      then
        raise exception 'too many values for `in` filter. Maximum 100';
      end if;
    elsif filter.op = 'is' then
      if filter.value not in ('null', 'true', 'false', 'unknown') then
        raise exception 'invalid value for is filter: must be null, true, false, or unknown';
      end if;
      if filter.value <> 'null' and col_type <> 'boolean'::regtype then
        raise exception 'is % filter requires a boolean column, got %', filter.value, col_type;
      end if;
    elsif filter.op in ('like', 'ilike') then
      if not exists (select from pg_catalog.pg_operator where oprname = '~~' and oprleft = col_type) then
        raise exception 'operator % requires a text-compatible column type, got %', filter.op, col_type;
      end if;
    elsif filter.op in ('match', 'imatch') then
      if not exists (select from pg_catalog.pg_operator
                     where oprname = case when filter.op = 'imatch' then '~*' else '~' end
                       and oprleft = col_type and oprright = col_type) then
        raise exception 'operator % requires a text-compatible column type, got %', filter.op, col_type;
      end if;
      begin
        perform '' ~ filter.value;
      exception when others then
        raise exception 'invalid regular expression for % filter: %', filter.op, sqlerrm;
      end;
    elsif filter.op <> 'isdistinct' then
      perform realtime.local_cast(filter.value, col_type);
    end if;
  end loop;
  foreach selected in array coalesce(new.selected_columns, '{}') loop
    if not selected = any(col_names) then
      raise exception 'invalid column for select %', selected;
    end if;
  end loop;
  return new;
end;
$$;
drop trigger if exists local_check_filters on realtime.subscription;
create trigger local_check_filters before insert or update on realtime.subscription
  for each row execute function realtime.local_subscription_check_filters();

-- One decoded change ({relid, action, commit_timestamp, columns, old_columns}, each column {name, typeoid,
-- value}) as Realtime's apply_rls makes it: for each role among the change's subscribers and each set of
-- selected columns, the payload that role may see (the columns it may select; for a delete under RLS, the
-- old record's primary key only) and the subscriptions it goes to: those whose filters the change passes
-- and, under RLS, whose role and claims can select the row by its primary key (deletes cannot be checked,
-- and go to every subscriber whose filters pass). A table without a primary key, or whose key the role may
-- not select, gives Realtime's error instead of a record.
create or replace function realtime.local_apply_rls(change jsonb, max_record_bytes int default 1048576)
returns table (payload jsonb, subscription_ids uuid[], errors text[])
language plpgsql
as $$
declare
  entity_ regclass;
  rls_enabled boolean;
  action_ text := change ->> 'action';
  too_large boolean := octet_length(change::text) > max_record_bytes;
  subs realtime.subscription[];
  pk_names text[];
  new_cols realtime.local_wal_column[];
  old_cols realtime.local_wal_column[];
  role_ regrole;
  selection text[];
  sub realtime.subscription;
  visible uuid[];
  has_access boolean;
  rls_check text;
  header jsonb;
  ids uuid[];
begin
  select c.oid::regclass, c.relrowsecurity into entity_, rls_enabled
  from pg_catalog.pg_class c where c.oid = (change ->> 'relid')::oid;
  if entity_ is null then
    return;
  end if;
  select coalesce(array_agg(s), '{}') into subs from realtime.subscription s
  where s.entity = entity_ and s.action_filter in ('*', action_);
  if cardinality(subs) = 0 then
    return;
  end if;
  select coalesce(array_agg(a.attname::text), '{}') into pk_names
  from pg_catalog.pg_index i join pg_catalog.pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
  where i.indrelid = entity_ and i.indisprimary;
  select array_agg(row(c ->> 'name', (c ->> 'typeoid')::oid, c ->> 'value',
           case when c ->> 'value' is null then 'null'::jsonb
                else realtime.local_cast(c ->> 'value', (c ->> 'typeoid')::oid::regtype) end,
           (c ->> 'name') = any(pk_names))::realtime.local_wal_column)
    into new_cols from jsonb_array_elements(change -> 'columns') c;
  select array_agg(row(c ->> 'name', (c ->> 'typeoid')::oid, c ->> 'value',
           case when c ->> 'value' is null then 'null'::jsonb
                else realtime.local_cast(c ->> 'value', (c ->> 'typeoid')::oid::regtype) end,
           (c ->> 'name') = any(pk_names))::realtime.local_wal_column)
    into old_cols from jsonb_array_elements(
      case when jsonb_typeof(change -> 'old_columns') = 'array' then change -> 'old_columns' else '[]' end) c;
  new_cols := coalesce(new_cols, '{}');
  old_cols := coalesce(old_cols, '{}');
  header := jsonb_build_object('schema', change ->> 'schema', 'table', change ->> 'table', 'type', action_);
  rls_check := format('select exists (select 1 from %s where %s)', entity_, (
    select string_agg(format('%I = %L::%s', col.name, col.value_text, col.type_oid::regtype), ' and ')
    from unnest(new_cols) col where col.is_pkey));

  for role_ in select distinct s.claims_role from unnest(subs) s loop
    if action_ <> 'DELETE' and cardinality(pk_names) = 0 then
      for selection in select distinct s.selected_columns from unnest(subs) s where s.claims_role = role_ loop
        return query select header, array_agg(s.subscription_id), array['Error 400: Bad Request, no primary key']
          from unnest(subs) s where s.claims_role = role_ and s.selected_columns is not distinct from selection;
      end loop;
      continue;
    end if;
    if action_ <> 'DELETE' and not (select bool_and(pg_catalog.has_column_privilege(role_, entity_, p, 'SELECT'))
                                    from unnest(pk_names) p) then
      for selection in select distinct s.selected_columns from unnest(subs) s where s.claims_role = role_ loop
        return query select header, array_agg(s.subscription_id), array['Error 401: Unauthorized']
          from unnest(subs) s where s.claims_role = role_ and s.selected_columns is not distinct from selection;
      end loop;
      continue;
    end if;

    visible := '{}';
    foreach sub in array subs loop
      continue when sub.claims_role <> role_;
      continue when not (realtime.local_visible_through_filters(new_cols, sub.filters)
        or (action_ = 'DELETE' and realtime.local_visible_through_filters(old_cols, sub.filters)));
      if not rls_enabled or action_ = 'DELETE' then
        visible := visible || sub.subscription_id;
        continue;
      end if;
      begin
        perform set_config('role', trim(both '"' from role_::text), true),
                set_config('request.jwt.claims', sub.claims::text, true);
        execute rls_check into has_access;
        perform set_config('role', 'none', true);
      exception when others then
        -- A policy that fails for this subscriber hides the change from it alone.
        has_access := false;
      end;
      if has_access then
        visible := visible || sub.subscription_id;
      end if;
    end loop;

    for selection in select distinct s.selected_columns from unnest(subs) s where s.claims_role = role_ loop
      select coalesce(array_agg(s.subscription_id), '{}') into ids from unnest(subs) s
      where s.claims_role = role_ and s.selected_columns is not distinct from selection
        and s.subscription_id = any(visible);
      continue when cardinality(ids) = 0;
      return query select header || jsonb_build_object(
        'commit_timestamp', change ->> 'commit_timestamp',
        'columns', (
          select coalesce(jsonb_agg(jsonb_build_object('name', a.attname, 'type', t.typname) order by a.attnum), '[]')
          from pg_catalog.pg_attribute a join pg_catalog.pg_type t on t.oid = a.atttypid
          where a.attrelid = entity_ and a.attnum > 0 and not a.attisdropped
            and pg_catalog.has_column_privilege(role_, entity_, a.attname, 'SELECT')
            and (selection is null or a.attname = any(selection) or a.attname = any(pk_names))))
        || case when action_ in ('INSERT', 'UPDATE') then jsonb_build_object('record', (
          select coalesce(jsonb_object_agg(coalesce(c.name, o.name), case when c.name is null then o.value else c.value end), '{}')
          from unnest(new_cols) c full join unnest(old_cols) o on c.name = o.name
          where pg_catalog.has_column_privilege(role_, entity_, coalesce(c.name, o.name), 'SELECT')
            and (selection is null or coalesce(c.name, o.name) = any(selection) or coalesce(c.is_pkey, o.is_pkey))
            and (not too_large or octet_length(coalesce(c.value, o.value)::text) <= 64)))
          else '{}'::jsonb end
        || case when action_ in ('UPDATE', 'DELETE') then jsonb_build_object('old_record', (
          select coalesce(jsonb_object_agg(o.name, o.value), '{}') from unnest(old_cols) o
          where pg_catalog.has_column_privilege(role_, entity_, o.name, 'SELECT')
            and (selection is null or o.name = any(selection) or o.is_pkey)
            and (not too_large or octet_length(o.value::text) <= 64)
            and (action_ = 'UPDATE' or not rls_enabled or o.is_pkey)))
          else '{}'::jsonb end,
        ids,
        case when too_large then array['Error 413: Payload Too Large'] else '{}'::text[] end;
    end loop;
  end loop;
end;
$$;
