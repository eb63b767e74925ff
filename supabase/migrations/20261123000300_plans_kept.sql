-- Redefines private.membership, private.company_of, private.delivery_tracking_link, private.delivery_tracking_fields, private.try_uuid, private.valid_pix_key, private.mask_pix_key, private.lock_withdrawal, private.withdrawal_move_allowed, private.withdrawal_for_event, private.delivery_for_payment: the same bodies in PL/pgSQL, which keeps their plans.

-- These functions were SQL functions with `set search_path` (which every
-- function here has, for the advisors' function_search_path_mutable). Postgres
-- 17 can neither inline such a function nor keep a plan for it: each call in a
-- new statement parses and plans its body again, and the functions it calls
-- theirs. In PL/pgSQL each statement is planned once per connection. The
-- bodies, volatility and rights are unchanged (20261121000100_tenancy.sql,
-- 20261121001000_deliveries.sql, 20261121002000_money.sql).
--
-- The tracking-link check. Every delivery the API shows or broadcasts asks
-- delivery_tracking_fields whether the caller manages its company
-- (private.delivery_row, 20261123000100_typed_results.sql): through company_of
-- and membership, about 110 us a row, half of a list page's SQL. Measured on
-- 20,000 deliveries as a company owner (`select
-- sum(length(private.delivery_row(d)::text)) from public.deliveries d`): 2.2 s
-- before, 0.65 s after; the row without the check takes 0.1 s. A user has at
-- most one membership (memberships.user_id is its key), so company_of's scalar
-- subquery is the SQL function's single row.
--
-- The webhook's money path. Applying one TRANSFER_DONE called
-- withdrawal_for_event twice (the edge's read, then apply_transfer_event),
-- lock_withdrawal, withdrawal_move_allowed twice (the function, then the
-- update's guard), valid_pix_key (the check constraint) and mask_pix_key (the
-- broadcast), each planned again. As one statement on one connection (pgbench),
-- `select private.withdrawal_for_event(...)` took 0.16 ms before and 0.09 ms
-- after, against 0.06 ms for `select 1`.

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

create or replace function private.try_uuid(value text)
returns uuid
language plpgsql
immutable
set search_path = ''
as $$
begin
  return case when try_uuid.value ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    then try_uuid.value::uuid end;
end;
$$;

create or replace function private.valid_pix_key(pix_key text, pix_key_type text)
returns boolean
language plpgsql
immutable
set search_path = ''
as $$
begin
  return coalesce(case valid_pix_key.pix_key_type
    when 'cpf' then valid_pix_key.pix_key ~ '^[0-9]{11}$'
    when 'cnpj' then valid_pix_key.pix_key ~ '^[0-9]{14}$'
    when 'email' then length(valid_pix_key.pix_key) <= 77 and valid_pix_key.pix_key ~ '^[^@[:space:]]+@[^@[:space:]]+\.[^@[:space:]]+$'
    when 'phone' then valid_pix_key.pix_key ~ '^\+55[0-9]{10,11}$'
    when 'evp' then private.try_uuid(valid_pix_key.pix_key) is not null
  end, false);
end;
$$;

create or replace function private.mask_pix_key(pix_key text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  return repeat('*', greatest(length(mask_pix_key.pix_key) - 4, 0)) || right(mask_pix_key.pix_key, 4);
end;
$$;

-- Without a withdrawal it returns a row of nulls, as the SQL function did; its callers test `w.id is null`.
create or replace function private.lock_withdrawal(withdrawal_id uuid)
returns public.withdrawals
language plpgsql
set search_path = ''
as $$
declare
  w public.withdrawals;
begin
  select * into w from public.withdrawals x where x.id = lock_withdrawal.withdrawal_id for update;
  return w;
end;
$$;

create or replace function private.withdrawal_move_allowed(from_status text, to_status text)
returns boolean
language plpgsql
immutable
set search_path = ''
as $$
begin
  return (withdrawal_move_allowed.from_status, withdrawal_move_allowed.to_status)
    in (('processing', 'completed'), ('processing', 'failed'), ('failed', 'completed'));
end;
$$;

create or replace function private.withdrawal_for_event(company_id uuid, transfer_id text, external_reference text)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
begin
  return coalesce(
    (select w.id from public.withdrawals w
     where w.gateway_transfer_id = nullif(withdrawal_for_event.transfer_id, '')
       and (withdrawal_for_event.company_id is null or w.company_id = withdrawal_for_event.company_id)),
    (select w.id from public.withdrawals w
     where w.id = private.try_uuid(withdrawal_for_event.external_reference)
       and (withdrawal_for_event.company_id is null or w.company_id = withdrawal_for_event.company_id)
       and (w.gateway_transfer_id is null or nullif(withdrawal_for_event.transfer_id, '') is null
            or w.gateway_transfer_id = withdrawal_for_event.transfer_id))
  );
end;
$$;

create or replace function private.delivery_for_payment(payment_id text, external_reference text)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
begin
  return coalesce(
    (select d.id from public.deliveries d where d.gateway_payment_id = nullif(delivery_for_payment.payment_id, '')),
    (select d.id from public.deliveries d
     where d.id = private.try_uuid(delivery_for_payment.external_reference)
       and (nullif(delivery_for_payment.payment_id, '') is null or d.gateway_payment_id = delivery_for_payment.payment_id))
  );
end;
$$;
