-- Unsigned webhooks cannot make us ask the gateway about one object more than
-- once a minute (docs/contract.md, Webhooks): private.admit_gateway_lookup is
-- true the first time, false again within the minute (without extending it),
-- true once the minute has passed. The minute is simulated by moving
-- private.gateway_lookups.looked_up_at back. For the service role only.
begin;
select plan(14);

create temp table t as select tests.create_tenant('lookup-a') as a;
grant select on t to public;

-- admit_gateway_lookup as the service role (the gateway-webhook function).
create function pg_temp.admit(object_key text) returns boolean
language plpgsql as $$
declare
  admitted boolean;
begin
  perform tests.act_as_service_role();
  admitted := private.admit_gateway_lookup(object_key);
  perform tests.reset_role();
  return admitted;
end;
$$;
create function pg_temp.looked_up_at(object_key text) returns timestamptz
language sql as $$ select l.looked_up_at from private.gateway_lookups l where l.object_key = looked_up_at.object_key $$;
create function pg_temp.age(object_key text, age interval) returns void
language sql as $$ update private.gateway_lookups l set looked_up_at = now() - age.age where l.object_key = age.object_key $$;

select is(pg_temp.admit('transfer:tra_1'), true, 'the first look-up of an object is admitted');
select is(pg_temp.looked_up_at('transfer:tra_1'), now(), '... and remembered');
select is(pg_temp.admit('transfer:tra_1'), false, 'a second one within the minute is refused');
select is(pg_temp.admit('transfer:tra_2'), true, 'another object is admitted');
select is(pg_temp.admit('payment:tra_1'), true, 'so is another kind of object with the same id');

select pg_temp.age('transfer:tra_1', interval '30 seconds');
select is(pg_temp.admit('transfer:tra_1'), false, 'refused 30 seconds later');
select is(pg_temp.looked_up_at('transfer:tra_1'), now() - interval '30 seconds', '... without extending the minute');
select pg_temp.age('transfer:tra_1', interval '61 seconds');
select is(pg_temp.admit('transfer:tra_1'), true, 'admitted again once the minute has passed');
select is(pg_temp.looked_up_at('transfer:tra_1'), now(), '... and the minute starts again');
select is(pg_temp.admit('transfer:tra_1'), false, '... so the next one is refused');

-- Who may call it.
select tests.act_as_member(a, 'owner') from t;
select throws_ok($$ select private.admit_gateway_lookup('transfer:tra_x') $$, '42501', null, 'not an owner');
select tests.act_as_member(a, 'driver') from t;
select throws_ok($$ select private.admit_gateway_lookup('transfer:tra_x') $$, '42501', null, 'not a driver');
select tests.reset_role();
select tests.act_as_anon();
select throws_ok($$ select private.admit_gateway_lookup('transfer:tra_x') $$, '42501', null, 'not anon');
select tests.reset_role();
select is(pg_temp.looked_up_at('transfer:tra_x'), null, 'the refused callers left nothing behind');

select * from finish();
rollback;
