-- Realtime topics (docs/contract.md, Realtime): `company:{company_id}` for the
-- company's managers, `driver:{driver_id}` for that driver. Triggers broadcast
-- through private.broadcast. Supabase Realtime evaluates the realtime.messages
-- policies below as the joining user: the select policy authorizes reading
-- broadcasts.

-- Section: broadcast

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

-- Section: policies

create policy realtime_messages_select_own_topics on realtime.messages
  for select to authenticated
  using (
    extension = 'broadcast'
    and (
      (select realtime.topic()) = 'company:' || (select private.company_of(private.delivery_managers()))::text
      or (select realtime.topic()) = 'driver:' || (select private.driver_id())::text
    )
  );

-- No presence policy: Realtime presence carries whatever its sender writes (a
-- driver could announce another driver), so who is online is never taken from
-- it. The company panel shows a driver online while its latest accepted
-- position is less than 2 minutes old (07_locations.sql, driver_location).
