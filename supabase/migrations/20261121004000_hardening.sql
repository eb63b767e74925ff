-- Hardening after a security review.

-- 1. A driver's full Pix key never leaves the database. Users read withdrawals
--    through the functions below (which mask it) or the table without that column.
create or replace function public.list_withdrawals(page_limit integer default 20, cursor text default null)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize('driver', 'company_owner', 'company_admin');
  driver uuid := private.driver_id();
  after_key timestamptz;
  after_id uuid;
  rows jsonb;
begin
  perform private.check_page_limit(page_limit);
  if cursor is not null then
    select c.sort_key, c.id into after_key, after_id from private.decode_cursor(cursor) c;
  end if;
  -- The same scope as the select policy: a driver its own, managers their company's.
  select coalesce(jsonb_agg(private.withdrawal_json(w) order by w.created_at desc, w.id desc), '[]'::jsonb) into rows
  from (
    select * from public.withdrawals w
    where w.company_id = company
      and (driver is null or w.driver_id = driver)
      and (list_withdrawals.cursor is null or (w.created_at, w.id) < (after_key, after_id))
    order by w.created_at desc, w.id desc
    limit page_limit + 1
  ) w;
  return private.page(rows, page_limit, 'created_at');
end;
$$;

create or replace function public.get_withdrawal(withdrawal_id uuid)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize('driver', 'company_owner', 'company_admin');
  driver uuid := private.driver_id();
  w public.withdrawals;
begin
  select * into w from public.withdrawals x
  where x.id = get_withdrawal.withdrawal_id
    and x.company_id = company
    and (driver is null or x.driver_id = driver);
  if not found then
    raise exception using errcode = 'PT404', message = 'withdrawal not found';
  end if;
  return private.withdrawal_json(w);
end;
$$;

revoke select on public.withdrawals from authenticated;
grant select (id, company_id, driver_id, amount, pix_key_type, status, gateway_transfer_id, error_message,
              created_at, updated_at, completed_at, failure_kind)
  on public.withdrawals to authenticated;

-- 2. The ledger and the delivery history are append-only for everyone, and
--    cannot be emptied with TRUNCATE either.
revoke all on public.wallet_entries, public.delivery_history from service_role;
grant select, insert on public.wallet_entries, public.delivery_history to service_role;

create or replace function private.refuse_ledger_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  raise exception using errcode = 'PT422', message = case tg_table_name
    when 'wallet_entries' then 'wallet entries are append-only'
    else 'delivery history is append-only'
  end;
end;
$$;
comment on function private.refuse_ledger_change() is 'Keeps the ledger and the delivery history append-only: a correction is a new row.';

create trigger wallet_entries_no_truncate before truncate on public.wallet_entries
  for each statement execute function private.refuse_ledger_change();
create trigger delivery_history_append_only before update or delete on public.delivery_history
  for each row execute function private.refuse_ledger_change();
create trigger delivery_history_no_truncate before truncate on public.delivery_history
  for each statement execute function private.refuse_ledger_change();
