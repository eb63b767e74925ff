-- Helpers for every pgTAP file, kept (not rolled back) in the `tests` schema:
-- act as a user with exactly the claims our access-token hook puts in a token,
-- as the service role, or as anon.
select plan(1);

create schema if not exists tests;
grant usage on schema tests to anon, authenticated, service_role;

-- Claims as the local identity provider issues them, before the hook adds anything.
create or replace function tests.act_as(claims jsonb) returns void
language plpgsql
as $$
begin
  perform set_config('request.jwt.claims', claims::text, true);
  perform set_config('request.jwt.claim.sub', coalesce(claims ->> 'sub', ''), true);
  perform set_config('request.jwt.claim.role', coalesce(claims ->> 'role', ''), true);
  execute format('set local role %I', coalesce(claims ->> 'role', 'anon'));
end;
$$;

create or replace function tests.act_as_service_role() returns void
language sql
as $$ select tests.act_as('{"role": "service_role"}'::jsonb) $$;

create or replace function tests.act_as_anon() returns void
language sql
as $$ select tests.act_as('{"role": "anon"}'::jsonb) $$;

-- Back to the superuser that runs the test file.
create or replace function tests.reset_role() returns void
language plpgsql
as $$
begin
  reset role;
  perform set_config('request.jwt.claims', '', true);
  perform set_config('request.jwt.claim.sub', '', true);
  perform set_config('request.jwt.claim.role', '', true);
end;
$$;

-- A confirmed e-mail user, as the identity provider would store it.
create or replace function tests.create_user(email text, user_metadata jsonb default '{}')
returns uuid
language sql
as $$
  insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data,
                          email_confirmed_at, created_at, updated_at)
  values ('00000000-0000-0000-0000-000000000000', gen_random_uuid(), 'authenticated', 'authenticated',
          create_user.email, '{"provider": "email", "providers": ["email"]}', create_user.user_metadata, now(), now(), now())
  returning id
$$;

-- The claims of an access token for this user: the identity provider's
-- standard claims, passed through our custom access token hook.
create or replace function tests.token_claims(user_id uuid)
returns jsonb
language sql
as $$
  select public.custom_access_token_hook(jsonb_build_object(
    'user_id', u.id,
    'authentication_method', 'password',
    'claims', jsonb_build_object(
      'iss', 'http://127.0.0.1:54321/auth/v1', 'sub', u.id::text, 'aud', 'authenticated',
      'exp', extract(epoch from now() + interval '1 hour')::bigint, 'iat', extract(epoch from now())::bigint,
      'email', u.email, 'phone', '', 'role', 'authenticated', 'aal', 'aal1',
      'app_metadata', u.raw_app_meta_data, 'user_metadata', u.raw_user_meta_data,
      'session_id', gen_random_uuid(), 'is_anonymous', false)
  )) -> 'claims'
  from auth.users u
  where u.id = token_claims.user_id
$$;

-- Act as this user with exactly the token the hook would give it.
create or replace function tests.act_as_user(user_id uuid)
returns void
language sql
as $$ select tests.act_as(tests.token_claims(act_as_user.user_id)) $$;

-- A company with one user of every role: returns their ids.
-- {company_id, owner, admin, legacy_admin, driver, driver2, driver_id, driver2_id}
create or replace function tests.create_tenant(label text)
returns jsonb
language plpgsql
as $$
declare
  owner uuid := tests.create_user(label || '-owner@tests.example');
  admin uuid := tests.create_user(label || '-admin@tests.example');
  legacy uuid := tests.create_user(label || '-legacy@tests.example', '{"role": "admin"}');
  driver uuid := tests.create_user(label || '-driver@tests.example');
  driver2 uuid := tests.create_user(label || '-driver2@tests.example');
  company uuid;
  driver_id uuid;
  driver2_id uuid;
begin
  company := (public.register_company(owner, label || ' company', label || ' owner') ->> 'company_id')::uuid;
  insert into public.memberships (user_id, company_id, role) values
    (admin, company, 'company_admin'), (legacy, company, 'admin'), (driver, company, 'driver'), (driver2, company, 'driver');
  insert into public.drivers (company_id, user_id, name, email) values (company, driver, label || ' driver', label || '-driver@tests.example')
    returning id into driver_id;
  insert into public.drivers (company_id, user_id, name, email) values (company, driver2, label || ' driver2', label || '-driver2@tests.example')
    returning id into driver2_id;
  return jsonb_build_object('company_id', company, 'owner', owner, 'admin', admin, 'legacy_admin', legacy,
    'driver', driver, 'driver2', driver2, 'driver_id', driver_id, 'driver2_id', driver2_id);
end;
$$;

grant execute on all functions in schema tests to anon, authenticated, service_role;

select has_function('tests', 'act_as', array['jsonb'], 'the act_as helper exists');
select * from finish();
