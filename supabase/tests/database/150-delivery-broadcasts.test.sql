-- Realtime: the realtime.messages rows each delivery change writes (topic,
-- event, payload), and who may read each topic.
begin;
select plan(31);

create temp table t as select tests.create_tenant('rt-a') as a, tests.create_tenant('rt-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;

-- Topics by a readable name: company:a, driver:a1 (driver 1 of company a), ...
create temp view topic_names as
  select 'company:' || (a ->> 'company_id') as topic, 'company:a' as name from t
  union all select 'company:' || (b ->> 'company_id'), 'company:b' from t
  union all select 'driver:' || (a ->> 'driver_id'), 'driver:a1' from t
  union all select 'driver:' || (a ->> 'driver2_id'), 'driver:a2' from t
  union all select 'driver:' || (b ->> 'driver_id'), 'driver:b1' from t
  union all select 'driver:' || (b ->> 'driver2_id'), 'driver:b2' from t;

-- What was broadcast since the last call, as sorted `event topic status/payment_status` lines,
-- on the company and driver topics (tracking topics: 400-tracking-link-and-channel.test.sql).
-- The messages are all deleted either way.
create function pg_temp.sent() returns text[]
language plpgsql as $$
declare
  lines text[];
begin
  select coalesce(array_agg(l.line order by l.line), '{}') into lines
  from (select format('%s %s %s/%s', m.event, coalesce(n.name, m.topic), m.payload ->> 'status', m.payload ->> 'payment_status') as line
        from realtime.messages m left join topic_names n on n.topic = m.topic
        where m.topic not like 'track:%') l;
  delete from realtime.messages;
  return lines;
end;
$$;

create function pg_temp.new_delivery(method text, driver uuid default null) returns uuid
language sql as $$
  select (to_jsonb(public.create_delivery(gen_random_uuid(), (a ->> 'company_id')::uuid, (a ->> 'owner')::uuid, new_delivery.method,
    'Origin', -23.55, -46.63, 'Destination', -23.56, -46.64, 1500, 300, driver_id => new_delivery.driver,
    charged_price => case when new_delivery.method = 'pix' then 8.00 end,
    gateway_payment_id => case when new_delivery.method = 'pix' then 'pay_' || gen_random_uuid() end,
    pix_copy_paste => 'code', pix_qr_code_image => 'img', payment_due_date => current_date + 1)) ->> 'id')::uuid
  from t
$$;

create function pg_temp.event(name text, event text) returns void
language plpgsql as $$
begin
  perform tests.act_as_service_role();
  perform public.apply_payment_event(null, event.event, null, (select id::text from ids where ids.name = event.name));
  perform tests.reset_role();
end;
$$;

select pg_temp.sent();

-- A Pix delivery: its company hears of it; drivers do not until it is paid.
insert into ids values ('pix', pg_temp.new_delivery('pix'));
select is(pg_temp.sent(), array['delivery_updated company:a awaiting_payment/pending'], 'creating a Pix delivery: the company only');

-- The deactivated driver 2 is left out of the offer. Deactivating it tells it at once on its topic (a channel
-- joined before stays open until left), and nobody else.
update public.drivers set active = false where id = (select (a ->> 'driver2_id')::uuid from t);
select is(pg_temp.sent(), array['driver_deactivated driver:a2 /'], 'deactivating a driver tells that driver only');
select pg_temp.event('pix', 'PAYMENT_RECEIVED');
select is(pg_temp.sent(), array['delivery_available driver:a1 pending/received', 'delivery_updated company:a pending/received'],
  'paid: the company hears of it, every active driver of the company is offered it');
update public.drivers set active = true where id = (select (a ->> 'driver2_id')::uuid from t);
select is(pg_temp.sent(), '{}'::text[], 'reactivating a driver tells nobody');

select tests.act_as_member(a, 'driver') from t;
select to_jsonb(public.accept_delivery((select id from ids where name = 'pix')));
select tests.reset_role();
select is(pg_temp.sent(), array['delivery_unavailable driver:a2 accepted/received', 'delivery_updated company:a accepted/received',
  'delivery_updated driver:a1 accepted/received'],
  'accepted: the company and the driver who took it; every other driver hears it is no longer open to them');

select tests.act_as_member(a, 'driver') from t;
select to_jsonb(public.start_delivery((select id from ids where name = 'pix')));
select tests.reset_role();
select is(pg_temp.sent(), array['delivery_updated company:a in_progress/received', 'delivery_updated driver:a1 in_progress/received'],
  'started: the company and its driver');

select tests.act_as_member(a, 'driver') from t;
select to_jsonb(public.complete_delivery((select id from ids where name = 'pix')));
select tests.reset_role();
select is(pg_temp.sent(), array['delivery_updated company:a completed/received', 'delivery_updated driver:a1 completed/received'],
  'completed: the company and its driver');

select pg_temp.event('pix', 'PAYMENT_CONFIRMED');
select is(pg_temp.sent(), array['delivery_updated company:a completed/confirmed', 'delivery_updated driver:a1 completed/confirmed'],
  'a payment status change is broadcast too');
select pg_temp.event('pix', 'PAYMENT_CONFIRMED');
select is(pg_temp.sent(), '{}'::text[], 'a duplicate event broadcasts nothing');

select pg_temp.event('pix', 'PAYMENT_REFUNDED');
select is(pg_temp.sent(), array['delivery_updated company:a cancelled/refunded', 'delivery_updated driver:a1 cancelled/refunded'],
  'refunded: the company and its driver');

-- An invoice delivery is offered at once; one for a given driver goes to that driver only.
insert into ids values ('invoice', pg_temp.new_delivery('invoice'));
select is(pg_temp.sent(), array['delivery_available driver:a1 pending/invoiced', 'delivery_available driver:a2 pending/invoiced',
  'delivery_updated company:a pending/invoiced'], 'an invoice delivery: the company, and an offer to every driver');
insert into ids values ('given', pg_temp.new_delivery('invoice', (select (a ->> 'driver2_id')::uuid from t)));
select is(pg_temp.sent(), array['delivery_updated company:a accepted/invoiced', 'delivery_updated company:a pending/invoiced',
  'delivery_updated driver:a2 accepted/invoiced'], 'for a given driver: no offer to the others, the driver hears it is theirs');

select tests.act_as_member(a, 'owner') from t;
select to_jsonb(public.assign_delivery((select id from ids where name = 'invoice'), (select (a ->> 'driver2_id')::uuid from t)));
select to_jsonb(public.cancel_delivery((select id from ids where name = 'invoice'), 'client gave up'));
select tests.reset_role();
select is(pg_temp.sent(), array['delivery_unavailable driver:a1 accepted/invoiced', 'delivery_updated company:a accepted/invoiced',
  'delivery_updated company:a cancelled/invoiced', 'delivery_updated driver:a2 accepted/invoiced',
  'delivery_updated driver:a2 cancelled/invoiced'],
  'assigned then cancelled: the company and the assigned driver, each time; the other driver hears it is taken');

-- An open delivery cancelled: every driver it was open to hears so.
insert into ids values ('open', pg_temp.new_delivery('invoice'));
select pg_temp.sent();
select tests.act_as_member(a, 'owner') from t;
select to_jsonb(public.cancel_delivery((select id from ids where name = 'open')));
select tests.reset_role();
select is(pg_temp.sent(), array['delivery_unavailable driver:a1 cancelled/invoiced',
  'delivery_unavailable driver:a2 cancelled/invoiced', 'delivery_updated company:a cancelled/invoiced'],
  'an open delivery cancelled: every active driver hears it is no longer open');

-- The payload is the delivery as the API returns it.
select tests.act_as_member(a, 'owner') from t;
select to_jsonb(public.cancel_delivery((select id from ids where name = 'given')));
select tests.reset_role();
-- (as the company's managers get it, with the tracking link).
select is((select payload from realtime.messages where topic like 'company:%'),
  (select private.delivery_json(d) || private.delivery_tracking_link(d.id) from public.deliveries d
   where d.id = (select id from ids where name = 'given')),
  'the payload is the same object the API returns');
select is((select count(*)::integer from realtime.messages where private and topic not like 'track:%'), 2, 'every message is private');
select is((select count(*)::integer from realtime.messages where not private), 0, 'the tracking topic''s message too');
select is((select payload ->> 'tracking_token' from realtime.messages where topic like 'driver:%'), null,
  'a driver''s payload never carries the tracking link');

-- Who may read which topic --------------------------------------------------------

-- Leave one message on each topic of company a.
select pg_temp.sent();
insert into ids values ('last', pg_temp.new_delivery('invoice'));
select tests.act_as_member(a, 'driver') from t;
select to_jsonb(public.accept_delivery((select id from ids where name = 'last')));
select tests.reset_role();

create function pg_temp.reads(tenant text, member text, topic_name text) returns boolean
language plpgsql as $$
declare
  wanted text := (select n.topic from topic_names n where n.name = reads.topic_name);
  seen boolean;
begin
  perform tests.act_as_member(case reads.tenant when 'a' then a else b end, reads.member) from t;
  perform set_config('realtime.topic', wanted, true);
  seen := exists (select from realtime.messages m where m.topic = wanted);
  perform tests.reset_role();
  return seen;
end;
$$;
grant select on topic_names to public;

select is(pg_temp.reads('a', 'owner', 'company:a'), true, 'company topic: its owner reads it');
select is(pg_temp.reads('a', 'admin', 'company:a'), true, 'company topic: its admin reads it');
select is(pg_temp.reads('a', 'legacy_admin', 'company:a'), true, 'company topic: its legacy admin reads it');
select is(pg_temp.reads('a', 'driver', 'company:a'), false, 'company topic: a driver of the company does not');
select is(pg_temp.reads('b', 'owner', 'company:a'), false, 'company topic: another company''s owner does not');
select is(pg_temp.reads('b', 'admin', 'company:a'), false, 'company topic: another company''s admin does not');
select is(pg_temp.reads('a', 'driver', 'driver:a1'), true, 'driver topic: that driver reads it');
select is(pg_temp.reads('a', 'driver2', 'driver:a1'), false, 'driver topic: another driver of the company does not');
select is(pg_temp.reads('a', 'owner', 'driver:a1'), false, 'driver topic: the company''s owner does not');
select is(pg_temp.reads('b', 'driver', 'driver:a1'), false, 'driver topic: another company''s driver does not');
select is(pg_temp.reads('b', 'owner', 'driver:a1'), false, 'driver topic: another company''s owner does not');
update public.drivers set active = false where id = (select (a ->> 'driver_id')::uuid from t);
select is(pg_temp.reads('a', 'driver', 'driver:a1'), false, 'driver topic: not once the driver is deactivated');
update public.drivers set active = true where id = (select (a ->> 'driver_id')::uuid from t);
select is(pg_temp.reads('a', 'driver2', 'driver:a2'), true, 'the other driver reads its own topic (offers)');

select * from finish();
rollback;
