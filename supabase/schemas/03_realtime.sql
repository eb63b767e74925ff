-- Realtime topics (docs/contract.md, Realtime): `company:{company_id}` for the
-- company's managers, `driver:{driver_id}` for that driver. Triggers broadcast
-- through private.broadcast. Supabase Realtime evaluates the realtime.messages
-- policies below as the joining user: the select policies authorize reading
-- broadcasts and presence, the insert policy tracking presence.

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

-- Presence on `company:{company_id}`: the company panel shows which drivers are
-- online. Realtime lets a channel join only with a read policy (broadcast or
-- presence), so the company's drivers read presence there too (they see
-- colleagues online, never the managers' broadcasts); only drivers track.
create policy realtime_messages_select_company_presence on realtime.messages
  for select to authenticated
  using (
    extension = 'presence'
    and (select realtime.topic()) = 'company:' || (select private.company_of(private.members()))::text
  );

create policy realtime_messages_insert_driver_presence on realtime.messages
  for insert to authenticated
  with check (
    extension = 'presence'
    and (select realtime.topic()) = 'company:' || (select private.company_id())::text
    and (select private.driver_id()) is not null
  );
