-- Realtime topics (DESIGN.md §5): `company:{company_id}` for the company's
-- managers, `driver:{driver_id}` for that driver. Triggers broadcast through
-- private.broadcast; joins are authorized by the select policy below, which
-- Supabase Realtime evaluates as the joining user.

create function private.broadcast(topic text, event text, payload jsonb)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform realtime.send(broadcast.payload, broadcast.event, broadcast.topic, true);
end;
$$;
comment on function private.broadcast(text, text, jsonb) is 'Sends one private broadcast; runs as owner so any trigger may call it.';
revoke execute on function private.broadcast(text, text, jsonb) from public;

create policy realtime_messages_select_own_topics on realtime.messages
  for select to authenticated
  using (
    extension = 'broadcast'
    and (
      (select realtime.topic()) = 'company:' || (select private.company_of(private.delivery_managers()))::text
      or (select realtime.topic()) = 'driver:' || (select private.driver_id())::text
    )
  );
