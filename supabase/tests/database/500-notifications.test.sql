-- Notifications: the outbox row is written in the transaction of the change
-- that causes it (a rolled-back change leaves none, nor a wake-up call), once
-- per delivery, event and channel, on the channels the company chose and the
-- recipient has; nearby once when the ETA comes to 5 minutes; the claim, the
-- outcomes and the 24-hour limit; who may read the messages (a company its
-- own, drivers none, a foreign company nothing); and the LGPD rules: erasing
-- a recipient, tracking links ending 30 days and trails 90 days after the
-- delivery ended.
begin;
select plan(54);

create temp table t as select tests.create_tenant('ntf-a') as a, tests.create_tenant('ntf-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;

-- A delivery of company a in `status` whose recipient has a phone and an e-mail.
create function pg_temp.delivery(name text, status text) returns uuid
language plpgsql as $$
declare
  new_id uuid := (tests.delivery_in((select a from t), status, 'invoice')).id;
begin
  update public.deliveries d set recipient_name = 'Ana Maria Souza', recipient_phone = '+55 11 98888-7777',
    recipient_email = 'ana@example.com' where d.id = new_id;
  insert into ids values (delivery.name, new_id);
  return new_id;
end;
$$;
create function pg_temp.id(name text) returns uuid
language sql as $$ select ids.id from ids where ids.name = id.name $$;
create function pg_temp.queued(name text) returns text[]
language sql as $$
  select coalesce(array_agg(n.event || '/' || n.channel order by n.event, n.channel), '{}') from public.notifications n
  where n.delivery_id = pg_temp.id(queued.name)
$$;
create function pg_temp.as_member(member text) returns void
language sql as $$ select tests.act_as_member(t.a, member) from t $$;
grant execute on function pg_temp.id(text), pg_temp.queued(text), pg_temp.as_member(text) to public;

-- The wake-up call goes through pg_net with the Vault secrets a project has: this file's own, in place of any
-- the database already holds (a running stack stores its own; the rollback at the end brings them back).
select tests.use_project_secrets();

-- Section: queued with the change

select pg_temp.delivery('go', 'accepted');
select is(pg_temp.queued('go'), '{}', 'an accepted delivery has no messages yet');
select pg_temp.as_member('driver');
select lives_ok(format('select public.start_delivery(%L)', pg_temp.id('go')), 'the driver sets off');
select tests.reset_role();
select is(pg_temp.queued('go'), '{started/email,started/whatsapp}',
  'started is queued in the same transaction, on both channels the recipient has');
select is(tests.function_calls('notifications/send'), 1::bigint, 'and the sender is woken once, through pg_net');

create function pg_temp.start_then_fail(delivery_id uuid) returns void
language plpgsql as $$
begin
  perform public.start_delivery(delivery_id);
  raise exception 'the caller''s transaction fails afterwards';
end;
$$;
grant execute on function pg_temp.start_then_fail(uuid) to public;
select pg_temp.delivery('rolled', 'accepted');
select pg_temp.as_member('driver');
select throws_ok(format('select pg_temp.start_then_fail(%L)', pg_temp.id('rolled')), 'P0001', null,
  'a start whose transaction fails');
select tests.reset_role();
select is(pg_temp.queued('rolled'), '{}', 'leaves no message');
select is((select status from public.deliveries where id = pg_temp.id('rolled')), 'accepted', 'and no move');
select is(tests.function_calls('notifications/send'), 1::bigint, 'and no wake-up call');

-- Only the channels the recipient has: a phone alone is WhatsApp alone.
select pg_temp.delivery('phone', 'accepted');
update public.deliveries set recipient_email = null where id = pg_temp.id('phone');
select pg_temp.as_member('driver');
select public.start_delivery(pg_temp.id('phone'));
select tests.reset_role();
select is(pg_temp.queued('phone'), '{started/whatsapp}', 'a recipient without an e-mail gets WhatsApp only');

-- Section: nearby, once

create function pg_temp.eta(name text, seconds numeric) returns boolean
language plpgsql as $$
declare
  recorded boolean;
begin
  perform tests.act_as_service_role();
  recorded := public.record_eta(pg_temp.id(eta.name), -23.55, -46.63, 1000, eta.seconds);
  perform tests.reset_role();
  return recorded;
end;
$$;
select pg_temp.eta('go', 900);
select is(pg_temp.queued('go'), '{started/email,started/whatsapp}', 'an ETA of 15 minutes queues nothing');
select pg_temp.eta('go', 300);
select is(pg_temp.queued('go'), '{nearby/email,nearby/whatsapp,started/email,started/whatsapp}',
  'an ETA of 5 minutes queues nearby');
select pg_temp.eta('go', 120);
select pg_temp.eta('go', 60);
select is((select count(*)::int from public.notifications where delivery_id = pg_temp.id('go') and event = 'nearby'), 2,
  'later ETAs queue no second nearby');

-- Section: a repeated event never queues twice

select pg_temp.as_member('driver');
select public.complete_delivery(pg_temp.id('go'));
select tests.reset_role();
select is((select count(*)::int from public.notifications where delivery_id = pg_temp.id('go') and event = 'completed'), 2,
  'completed is queued once per channel');
-- The same status reached again (as a reopened delivery would): the key holds.
update public.deliveries set status = 'in_progress', completed_at = null where id = pg_temp.id('go');
update public.deliveries set status = 'completed', completed_at = now() where id = pg_temp.id('go');
select is((select count(*)::int from public.notifications where delivery_id = pg_temp.id('go')), 6,
  'a repeated started or completed queues nothing more');
select throws_ok(
  format($$ insert into public.notifications (company_id, delivery_id, event, channel)
            values (%L, %L, 'completed', 'email') $$, (select a ->> 'company_id' from t), pg_temp.id('go')),
  '23505', null, 'the key refuses a second message for the same delivery, event and channel');

-- failed is queued by the same trigger, keyed on the status: the driver's failed attempt.
select pg_temp.delivery('failed', 'in_progress');
select pg_temp.as_member('driver');
select lives_ok(format('select public.fail_delivery(%L, %L)', pg_temp.id('failed'), 'recipient_absent'),
  'the driver could not deliver');
select tests.reset_role();
select is(pg_temp.queued('failed'), '{failed/email,failed/whatsapp}', 'failed is queued once per channel');
select is(private.delivery_ended_at(pg_temp.id('failed')),
  (select failed_at from public.deliveries where id = pg_temp.id('failed')),
  'a failed delivery ended when its attempt failed');

-- Section: created, and the company's settings

select pg_temp.as_member('owner');
select is(to_jsonb(public.get_notification_settings()),
  '{"events": ["started", "nearby", "completed", "failed"], "channels": ["whatsapp", "email"]}'::jsonb,
  'by default every event but created, on both channels');
select is(to_jsonb(public.set_notification_settings('{completed,created,created}', '{email}')),
  '{"events": ["created", "completed"], "channels": ["email"]}'::jsonb, 'a company chooses (each once, in order)');
select throws_ok($$ select public.set_notification_settings('{paid}', '{email}') $$, 'PT400',
  'unknown notification event or channel', 'an unknown event is refused');
select tests.reset_role();
select pg_temp.delivery('chosen', 'accepted');
select pg_temp.as_member('driver');
select public.start_delivery(pg_temp.id('chosen'));
select public.complete_delivery(pg_temp.id('chosen'));
select tests.reset_role();
select is(pg_temp.queued('chosen'), '{completed/email}', 'then only the chosen events, on the chosen channels');
-- created: when the delivery is first offered to drivers (an invoice delivery at once).
with created as (
  insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
    origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share,
    recipient_email)
  select (a ->> 'company_id')::uuid, 'pending', 'invoiced', 'invoice', 'O', 0, 0, 'D', 0, 0, 1, 1, 10, 0.8,
    'bia@example.com'
  from t returning id)
insert into ids select 'created', id from created;
select is(pg_temp.queued('created'), '{created/email}',
  'created is queued with the insert of a delivery offered to drivers');

-- Section: claims and outcomes

select tests.act_as_service_role();
create temp table claimed as select value as m from jsonb_array_elements(public.claim_notifications(100));
select tests.reset_role();
select is((select count(*)::int from claimed), (select count(*)::int from public.notifications where status = 'queued'
  and next_attempt_at > now()), 'a claim takes every due message, under a lease');
select is((select m from claimed where m ->> 'delivery_id' = pg_temp.id('go')::text and m ->> 'event' = 'completed'
    and m ->> 'channel' = 'whatsapp') - 'id' - 'eta_at',
  jsonb_build_object('attempt', 1, 'delivery_id', pg_temp.id('go'), 'company_id', (select a ->> 'company_id' from t),
    'event', 'completed', 'channel', 'whatsapp', 'to', '+55 11 98888-7777', 'to_masked', '*****7777',
    'first_name', 'Ana', 'company_name', 'ntf-a company',
    'tracking_path', '/track/' || (select token from private.delivery_tracking where delivery_id = pg_temp.id('go')),
    'handover_code', null),
  'with what sending needs: the address and its masked form, the first name, the company, the link, the handover code (none here)');
select is((select status || ': ' || error from public.notifications where delivery_id = pg_temp.id('go') and event = 'started'
    and channel = 'email'), 'failed: outdated: the delivery is completed now',
  'a started message claimed once the delivery is completed is not sent');
select tests.act_as_service_role();
select is(public.claim_notifications(100), '[]'::jsonb, 'a second claimer finds nothing due');

create function pg_temp.outcome(name text, event text, channel text, outcome text, error text default null)
returns text
language plpgsql as $$
declare
  n public.notifications;
begin
  select * into n from public.notifications x
  where x.delivery_id = pg_temp.id(outcome.name) and x.event = outcome.event and x.channel = outcome.channel;
  return public.record_notification_outcome(n.id, n.attempts, outcome.outcome, outcome.error, 'wamid.1');
end;
$$;
grant execute on function pg_temp.outcome(text, text, text, text, text) to public;
select is(pg_temp.outcome('go', 'completed', 'whatsapp', 'sent'), 'sent', 'sent is recorded');
select is(pg_temp.outcome('go', 'completed', 'whatsapp', 'retry', 'late'), null, 'and never undone by a late outcome');
select is(pg_temp.outcome('go', 'completed', 'email', 'retry', 'connection refused'), 'queued',
  'a failure to retry stays queued');
select tests.reset_role();
select ok((select next_attempt_at between now() + interval '29 seconds' and now() + interval '31 seconds'
  from public.notifications where delivery_id = pg_temp.id('go') and event = 'completed' and channel = 'email'),
  'due again after 30 seconds');
select is(private.notification_retry_delay(5), interval '8 minutes', 'the wait doubles with each attempt');
select is(private.notification_retry_delay(20), interval '1 hour', 'up to an hour');
select tests.act_as_service_role();
select is(pg_temp.outcome('created', 'created', 'email', 'failed', '550 mailbox unavailable'), 'failed',
  'a permanent refusal fails the message');
select tests.reset_role();
select is((select error from public.notifications where delivery_id = pg_temp.id('created')),
  '550 mailbox unavailable', 'with the provider''s reason');
-- A message first queued more than 24 hours ago is not retried again.
update public.notifications set created_at = now() - interval '25 hours', next_attempt_at = now()
where delivery_id = pg_temp.id('go') and event = 'completed' and channel = 'email';
select tests.act_as_service_role();
select is(jsonb_array_length(public.claim_notifications(1)), 1, 'the old message is claimed once more');
select is(pg_temp.outcome('go', 'completed', 'email', 'retry', 'connection refused'), 'failed',
  'and fails for good when that attempt fails too');
select tests.reset_role();
select is((select error from public.notifications where delivery_id = pg_temp.id('go') and event = 'completed'
  and channel = 'email'), 'gave up after 24 hours: connection refused', 'saying why');

-- Section: who reads the messages

create temp table own as select count(*)::int as n from public.notifications
  where company_id = (select (a ->> 'company_id')::uuid from t);
grant select on own to public;
select pg_temp.as_member('owner');
select is((select count(*)::int from public.notifications), (select n from own), 'the owner reads the company''s messages');
select pg_temp.as_member('admin');
select is((select count(*)::int from public.notifications), (select n from own), 'so does an admin');
select is(to_jsonb(public.list_delivery_notifications(pg_temp.id('phone'))),
  '{"items": [{"event": "started", "channel": "whatsapp", "to": "*****7777", "status": "queued", "attempts": 1,
    "sent_at": null, "error": null}]}'::jsonb, 'a delivery''s messages, the destination masked');
select pg_temp.as_member('driver');
select is_empty($$ select 1 from public.notifications $$, 'a driver reads no message');
select throws_ok(format('select public.list_delivery_notifications(%L)', pg_temp.id('go')), 'PT403', null,
  'nor a delivery''s list');
select tests.act_as_member(b, 'owner') from t;
select is_empty($$ select 1 from public.notifications $$, 'another company reads none of them');
select throws_ok(format('select public.list_delivery_notifications(%L)', pg_temp.id('go')), 'PT404', null,
  'and its managers get 404 for the list');
select tests.reset_role();

-- Section: erasing a recipient

select pg_temp.as_member('admin');
select is(to_jsonb(public.erase_delivery_recipient(pg_temp.id('phone'))) ->> 'recipient_phone', null,
  'an admin erases the recipient of a delivery');
select tests.reset_role();
select is((select array[recipient_name, recipient_phone, recipient_email] from public.deliveries
  where id = pg_temp.id('phone')), array[null, null, null]::text[], 'name, phone and e-mail are gone');
select is((select array_agg(trigger order by id) from public.delivery_history where delivery_id = pg_temp.id('phone')),
  '{start,erase_recipient}', 'the history keeps every move and who erased it');
select is((select status || ': ' || error from public.notifications where delivery_id = pg_temp.id('phone')),
  'failed: the recipient''s address was erased', 'a message not yet sent is not sent');
select pg_temp.as_member('owner');
select public.erase_delivery_recipient(pg_temp.id('phone'));
select tests.reset_role();
select is((select count(*)::int from public.delivery_history where delivery_id = pg_temp.id('phone')), 2,
  'erasing again changes nothing more');

-- Section: tracking links and trails after the delivery ended

select pg_temp.delivery('old', 'completed');
select pg_temp.delivery('recent', 'completed');
update public.deliveries set completed_at = now() - interval '31 days' where id = pg_temp.id('old');
update public.deliveries set completed_at = now() - interval '29 days' where id = pg_temp.id('recent');
create function pg_temp.track(name text) returns jsonb
language plpgsql as $$
declare
  token text := (select x.token from private.delivery_tracking x where x.delivery_id = pg_temp.id(track.name));
  answer jsonb;
begin
  perform tests.act_as_service_role();
  answer := public.track_delivery(token, 'pgtap-' || track.name);
  perform tests.reset_role();
  return answer;
end;
$$;
select is(pg_temp.track('old'), null, 'a link answers as a wrong one 31 days after the delivery ended');
select is(pg_temp.track('recent') ->> 'status', 'completed', 'and still answers at 29 days');

insert into public.delivery_trail_points (delivery_id, seq, company_id, lat, lng, recorded_at)
select pg_temp.id(n), s, (a ->> 'company_id')::uuid, 0, 0, now() from t, unnest(array['old', 'recent']) n, generate_series(1, 3) s;
update public.deliveries set completed_at = now() - interval '91 days' where id = pg_temp.id('old');
update public.deliveries set completed_at = now() - interval '89 days' where id = pg_temp.id('recent');
select is(private.purge_delivery_trails(), 3, 'the daily job deletes the trail of a delivery ended 91 days ago');
select is((select count(*)::int from public.delivery_trail_points where delivery_id = pg_temp.id('recent')), 3,
  'and keeps one ended 89 days ago');

select * from finish();
rollback;
