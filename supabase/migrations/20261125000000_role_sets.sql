-- The role sets every /api/v1 route names (functions/_shared/role-sets.ts), beside
-- delivery_managers(), company_managers() and members() (tenancy): the edge reads
-- each set by its function's name, so no list of roles is kept outside SQL. PL/pgSQL,
-- as every function of ours (plans_kept: an SQL function with `set` is planned again on every call).

create function private.owners()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['company_owner']; end; $$;
comment on function private.owners() is 'The company''s owner alone: gateway configuration and billing.';

create function private.drivers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return array['driver']; end; $$;
comment on function private.drivers() is 'Drivers: their deliveries'' moves, their wallet and withdrawals, their position.';

create function private.withdrawal_readers()
returns text[]
language plpgsql
immutable
set search_path = ''
as $$ begin return private.drivers() || private.company_managers(); end; $$;
comment on function private.withdrawal_readers() is 'Who reads withdrawals: a driver its own, the company managers the company''s.';

grant execute on function private.owners(), private.drivers(), private.withdrawal_readers() to authenticated, service_role;
