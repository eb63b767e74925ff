-- The realtime schema as Supabase Realtime creates it: realtime.messages,
-- realtime.send() and realtime.topic(). Local stack only. Real Realtime reads
-- new messages through logical replication; the local Realtime endpoint
-- (local/realtime) is woken by the NOTIFY of the trigger at the end instead.
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

create or replace function realtime.send(payload jsonb, event text, topic text, private boolean default true)
returns void
language plpgsql
as $$
begin
  begin
    -- Set the topic configuration
    execute format('set local realtime.topic to %L', topic);
    insert into realtime.messages (payload, event, topic, private, extension)
    values (payload, event, topic, private, 'broadcast');
  exception
    when others then
      -- Capture and notify the error
      raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
  end;
end;
$$;
grant execute on function realtime.topic() to anon, authenticated, service_role, postgres;
grant execute on function realtime.send(jsonb, text, text, boolean) to postgres, service_role;

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
