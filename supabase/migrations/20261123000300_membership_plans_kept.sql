-- Redefines private.membership, private.company_of, private.delivery_tracking_link, private.delivery_tracking_fields: the same checks in PL/pgSQL, which keeps their plans.

-- Every delivery the API shows or broadcasts asks delivery_tracking_fields
-- whether the caller manages its company (private.delivery_row, in
-- 20261123000100_typed_results.sql). These four functions were SQL functions
-- with `set search_path`, which Postgres 17 can neither inline nor keep a plan
-- for: each call planned its statement again, and the nested calls theirs. So
-- a page of 20 deliveries spent 2.2 ms deciding whether to show the tracking
-- link, and a list's SQL about half its time. In PL/pgSQL each statement is
-- planned once per connection. Measured on 20,000 deliveries as a company
-- owner (`select sum(length(private.delivery_row(d)::text))`): 2.2 s before,
-- 0.6 s after; the row without the link takes 0.1 s.
--
-- The bodies and their rights are those of 20261121000100_tenancy.sql and
-- 20261121001000_deliveries.sql. A user has at most one membership
-- (memberships.user_id is its key), so company_of's scalar subquery is the SQL
-- function's single row.

create or replace function private.membership()
returns table (company_id uuid, role text)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return query
    select m.company_id, m.role
    from public.memberships m
    where m.user_id = auth.uid()
      and (auth.jwt() ->> 'role') in (m.role, 'authenticated')
      and coalesce((auth.jwt() ->> 'company_id')::uuid = m.company_id, true);
end;
$$;

create or replace function private.company_of(roles text[])
returns uuid
language plpgsql
stable
set search_path = ''
as $$
begin
  return (select m.company_id from private.membership() m where m.role = any (company_of.roles));
end;
$$;

create or replace function private.delivery_tracking_link(delivery_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return coalesce((select jsonb_build_object('tracking_token', t.token, 'tracking_url', '/track/' || t.token)
    from private.delivery_tracking t where t.delivery_id = delivery_tracking_link.delivery_id), '{}'::jsonb);
end;
$$;

create or replace function private.delivery_tracking_fields(delivery_id uuid, company_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if (auth.jwt() ->> 'role') = 'service_role'
     or delivery_tracking_fields.company_id = private.company_of(private.delivery_managers()) then
    return private.delivery_tracking_link(delivery_tracking_fields.delivery_id);
  end if;
  return '{}'::jsonb;
end;
$$;
