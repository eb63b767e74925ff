-- Route webhook events: publishing a route queues route.published, with the route in `data`, for each enabled
-- endpoint of the company that listens for it and for no other; a publish rolled back queues nothing; the route's
-- last stop done queues route.completed.
begin;
select plan(13);

create temp table t as select tests.create_tenant('rw') as a;
grant select on t to public;
create temp table o as
select (tests.delivery_in(a, 'pending', 'invoice')).id as e1, (tests.delivery_in(a, 'pending', 'invoice')).id as e2
from t;
grant select on o to public;
create temp table r as select tests.draft_route(a, array[e1]) as first, tests.draft_route(a, array[e2], 'driver2') as undone
from t, o;
grant select on r to public;

select tests.act_as_member(a, 'owner') from t;
create temp table ep as
select (public.create_webhook_endpoint('https://hooks.example.com/routes', '{route.published,route.completed}',
  'v1.iv.sealed')).id as routes,
  (public.create_webhook_endpoint('https://hooks.example.com/deliveries', '{delivery.created}', 'v1.iv.sealed')).id
  as deliveries;
select tests.reset_role();
grant select on ep to public;

-- The messages of one type about one route, and the endpoints each was queued for.
create function pg_temp.messages(type text, route uuid) returns setof private.webhook_messages
language sql as $$
  select * from private.webhook_messages m where m.type = messages.type and (m.body::jsonb -> 'data' ->> 'id')::uuid = messages.route
$$;
create function pg_temp.endpoints(type text, route uuid) returns uuid[]
language sql as $$
  select coalesce(array_agg(w.endpoint_id), '{}') from private.webhook_deliveries w
  where w.message_id in (select m.id from pg_temp.messages(type, route) m)
$$;

-- A publish rolled back.
create function pg_temp.publish_then_fail(route uuid) returns void
language plpgsql as $$
begin
  perform public.publish_route(route);
  raise exception 'the caller''s transaction fails afterwards';
end;
$$;
grant execute on function pg_temp.publish_then_fail(uuid) to public;
select tests.act_as_member(a, 'owner') from t;
select throws_ok(format('select pg_temp.publish_then_fail(%L)', (select undone from r)), 'P0001', null,
  'a publish whose transaction fails');
select tests.reset_role();
select is((select count(*)::integer from pg_temp.messages('route.published', (select undone from r))), 0,
  'queues no route.published');

-- A publish.
select tests.act_as_member(a, 'owner') from t;
select lives_ok(format('select public.publish_route(%L)', (select first from r)), 'the owner publishes a route');
select tests.reset_role();
select is((select count(*)::integer from pg_temp.messages('route.published', (select first from r))), 1,
  'exactly one route.published is queued');
select is(pg_temp.endpoints('route.published', (select first from r)), array[(select routes from ep)],
  'for the endpoint that listens for it, not for the one that does not');
select is((select m.body::jsonb -> 'data' ->> 'status' from pg_temp.messages('route.published', (select first from r)) m),
  'published', 'its data is the route as published');
select is((select jsonb_array_length(m.body::jsonb -> 'data' -> 'stops')
  from pg_temp.messages('route.published', (select first from r)) m), 2, 'with its stops');
select is((select count(*)::integer from pg_temp.messages('route.completed', (select first from r))), 0,
  'no route.completed yet');

-- The last stop done.
select tests.act_as_member(a, 'driver') from t;
select lives_ok(format('select public.start_delivery(%L)', e1), 'the driver picks up the route''s one delivery') from o;
select lives_ok(format('select public.complete_delivery(%L)', e1), 'and completes it') from o;
select tests.reset_role();
select is((select count(*)::integer from pg_temp.messages('route.completed', (select first from r))), 1,
  'the route''s last stop done queues one route.completed');
select is(pg_temp.endpoints('route.completed', (select first from r)), array[(select routes from ep)],
  'for the endpoint that listens for it');
select is((select m.body::jsonb -> 'data' ->> 'status' from pg_temp.messages('route.completed', (select first from r)) m),
  'completed', 'with the route as completed');

select * from finish();
rollback;
