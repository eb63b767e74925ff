-- The driver wallet as an append-only ledger (docs/state-machines.md, Wallet):
-- the balance is the sum of the entries; available_balance also holds back
-- processing withdrawals. Uniqueness makes every credit, reversal and debit
-- happen at most once, and the wallet lock serialises every write that can lower
-- the available balance.

-- Section: withdrawals (the table; 06_money.sql holds their state machine)

create table public.withdrawals (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  driver_id uuid not null references public.drivers (id) on delete cascade,
  amount numeric(12, 2) not null check (amount > 0),
  pix_key text not null,
  pix_key_type text not null check (pix_key_type in ('cpf', 'cnpj', 'email', 'phone', 'evp')),
  status text not null default 'processing' check (status in ('processing', 'completed', 'failed')),
  gateway_transfer_id text unique,
  error_message text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  completed_at timestamptz,
  -- True while the gateway may or may not have made the transfer (our request for it
  -- failed with a timeout or a 5xx): the funds stay held until reconciliation asks the gateway.
  in_doubt boolean not null default false,
  -- Why a failed withdrawal failed (the column's comment below names the kinds).
  failure_kind text constraint withdrawals_failure_kind_known
    check (failure_kind in ('gateway_rejected', 'transfer_failed', 'no_transfer')),
  check ((status = 'completed') = (completed_at is not null)),
  constraint withdrawals_in_doubt_processing check (not in_doubt or status = 'processing'),
  -- A completed withdrawal keeps the kind of an earlier failure that the gateway later contradicted.
  constraint withdrawals_failure_kind_status check (case status
    when 'processing' then failure_kind is null
    when 'failed' then failure_kind is not null
    else true
  end)
);
comment on table public.withdrawals is 'Driver withdrawals, each a Pix transfer at the gateway.';
comment on column public.withdrawals.in_doubt is
  'True while a processing withdrawal''s transfer request failed in a way that may have made the transfer (timeout, 5xx): its funds stay held until the gateway says.';
comment on column public.withdrawals.failure_kind is
  'Why a failed withdrawal failed: gateway_rejected (the gateway refused the request, 4xx), transfer_failed (the gateway reports the transfer FAILED or CANCELLED), no_transfer (reconciliation found no transfer at the gateway).';
create index withdrawals_driver_id_created_at_idx on public.withdrawals (driver_id, created_at desc, id desc);
create index withdrawals_company_id_created_at_idx on public.withdrawals (company_id, created_at desc, id desc);
create index withdrawals_processing_idx on public.withdrawals (driver_id) where status = 'processing';
-- What reconciliation asks the gateway about: processing withdrawals, oldest first.
create index withdrawals_processing_created_idx on public.withdrawals (created_at) where status = 'processing';
alter table public.withdrawals enable row level security;

create policy withdrawals_select_visible on public.withdrawals
  for select to authenticated
  using (
    driver_id = (select private.driver_id())
    or company_id = (select private.company_of(private.company_managers()))
  );
-- A driver's full Pix key never leaves the database: users read withdrawals
-- through the functions (which mask it) or the table without that column.
grant select (id, company_id, driver_id, amount, pix_key_type, status, gateway_transfer_id, error_message,
              created_at, updated_at, completed_at, in_doubt, failure_kind)
  on public.withdrawals to authenticated;
grant all on public.withdrawals to service_role;

-- Section: the ledger

create table public.wallet_entries (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  driver_id uuid not null references public.drivers (id) on delete cascade,
  kind text not null check (kind in ('delivery_credit', 'credit_reversal', 'withdrawal_debit')),
  -- Signed: credits are positive, reversals and debits negative.
  amount numeric(12, 2) not null,
  delivery_id uuid,
  withdrawal_id uuid references public.withdrawals (id),
  created_at timestamptz not null default clock_timestamp(),
  check (
    (kind = 'delivery_credit' and amount >= 0 and delivery_id is not null and withdrawal_id is null)
    or (kind = 'credit_reversal' and amount <= 0 and delivery_id is not null and withdrawal_id is null)
    or (kind = 'withdrawal_debit' and amount < 0 and withdrawal_id is not null and delivery_id is null)
  )
);
comment on table public.wallet_entries is 'The driver wallet ledger; rows are only ever added.';
create unique index wallet_entries_one_credit_per_delivery on public.wallet_entries (delivery_id) where kind = 'delivery_credit';
create unique index wallet_entries_one_reversal_per_delivery on public.wallet_entries (delivery_id) where kind = 'credit_reversal';
create unique index wallet_entries_one_debit_per_withdrawal on public.wallet_entries (withdrawal_id) where kind = 'withdrawal_debit';
create index wallet_entries_driver_id_created_at_idx on public.wallet_entries (driver_id, created_at desc, id desc);
create index wallet_entries_company_id_idx on public.wallet_entries (company_id);
create index wallet_entries_delivery_id_idx on public.wallet_entries (delivery_id);
alter table public.wallet_entries enable row level security;

create policy wallet_entries_select_own on public.wallet_entries
  for select to authenticated
  using (driver_id = (select private.driver_id()));
-- Append-only for everyone, the service role included (Supabase's default
-- privileges would give it everything, TRUNCATE too).
grant select on public.wallet_entries to authenticated;
revoke all on public.wallet_entries from service_role;
grant select, insert on public.wallet_entries to service_role;

create function private.refuse_ledger_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  raise exception using errcode = 'PT422', message = case tg_table_name
    when 'wallet_entries' then 'wallet entries are append-only'
    when 'cash_entries' then 'cash entries are append-only'
    else 'delivery history is append-only'
  end;
end;
$$;
comment on function private.refuse_ledger_change() is 'Keeps the ledger and the delivery history append-only: a correction is a new row.';
create trigger wallet_entries_append_only before update or delete on public.wallet_entries
  for each row execute function private.refuse_ledger_change();
create trigger wallet_entries_no_truncate before truncate on public.wallet_entries
  for each statement execute function private.refuse_ledger_change();

-- Section: balances and the wallet lock

-- balance and available balance of one driver
create function private.wallet_balances(driver_id uuid, out balance numeric, out available_balance numeric)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  select b.balance, b.balance - w.held into wallet_balances.balance, wallet_balances.available_balance
  from (select coalesce(sum(e.amount), 0)::numeric(12, 2) as balance
        from public.wallet_entries e where e.driver_id = wallet_balances.driver_id) b,
       (select coalesce(sum(x.amount), 0)::numeric(12, 2) as held
        from public.withdrawals x where x.driver_id = wallet_balances.driver_id and x.status = 'processing') w;
end;
$$;
comment on function private.wallet_balances(uuid) is 'A driver''s balance (sum of the ledger) and available balance (less processing withdrawals).';
grant execute on function private.wallet_balances(uuid) to service_role;

-- The wallet lock. `for no key update`: it does not conflict with the key-share locks that the
-- foreign keys of new withdrawals and ledger entries take on the driver row.
create function private.lock_wallet(driver_id uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform from public.drivers d where d.id = lock_wallet.driver_id for no key update;
end;
$$;
comment on function private.lock_wallet(uuid) is 'Takes the driver''s wallet lock (its drivers row, for no key update) until the end of the transaction: every write that can lower the available balance takes it first.';
grant execute on function private.lock_wallet(uuid) to service_role;

-- Section: what fires on the wallet tables

-- Every trigger on public.withdrawals and public.wallet_entries, with its function (06_money.sql says
-- what the withdrawals do).

-- Guards every update, whoever makes it (service role included): a refused
-- move is 422, and what identifies the money never changes.
create function private.guard_withdrawal_update()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.status is distinct from old.status
     and not private.withdrawal_move_allowed(old.status, new.status) then
    raise exception using errcode = 'PT422', message = format('withdrawal cannot move from %s to %s', old.status, new.status);
  end if;
  if (new.company_id, new.driver_id, new.amount, new.pix_key, new.pix_key_type, new.created_at)
     is distinct from (old.company_id, old.driver_id, old.amount, old.pix_key, old.pix_key_type, old.created_at) then
    raise exception using errcode = 'PT422', message = 'a withdrawal''s owner, amount and Pix key cannot change';
  end if;
  if old.gateway_transfer_id is not null and new.gateway_transfer_id is distinct from old.gateway_transfer_id then
    raise exception using errcode = 'PT422', message = 'a withdrawal''s gateway transfer cannot change';
  end if;
  -- Why it failed is written once, with the failure, and kept after.
  if new.failure_kind is distinct from old.failure_kind and not (old.status = 'processing' and new.status = 'failed') then
    raise exception using errcode = 'PT422', message = 'a withdrawal''s failure kind is set only when it fails';
  end if;
  new.updated_at := now();
  return new;
end;
$$;
comment on function private.guard_withdrawal_update() is 'Trigger: refuses any withdrawal move outside the state machine, any change of owner, amount, key or transfer, and any later change of why it failed.';
create trigger withdrawals_guard before update on public.withdrawals
  for each row execute function private.guard_withdrawal_update();

-- A debit exists only for a completed withdrawal, for exactly its amount.
create function private.check_withdrawal_debit()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if not exists (
    select from public.withdrawals w
    where w.id = new.withdrawal_id and w.status = 'completed'
      and w.driver_id = new.driver_id and w.company_id = new.company_id and new.amount = -w.amount
  ) then
    raise exception using errcode = 'PT422', message = 'a withdrawal debit needs its completed withdrawal and exactly its amount';
  end if;
  return new;
end;
$$;
comment on function private.check_withdrawal_debit() is 'Trigger: a withdrawal_debit entry must match a completed withdrawal of the same driver, amount for amount.';
create trigger wallet_entries_check_withdrawal_debit before insert on public.wallet_entries
  for each row when (new.kind = 'withdrawal_debit') execute function private.check_withdrawal_debit();

-- Realtime: the driver and its company's managers see every change.
create function private.broadcast_withdrawal()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  payload jsonb := private.withdrawal_json(new);
begin
  perform private.broadcast('driver:' || new.driver_id, 'withdrawal_updated', payload);
  perform private.broadcast('company:' || new.company_id, 'withdrawal_updated', payload);
  return null;
end;
$$;
comment on function private.broadcast_withdrawal() is 'Trigger: broadcasts withdrawal_updated with the withdrawal to driver:{driver_id} and company:{company_id}.';
create trigger withdrawals_broadcast after insert or update on public.withdrawals
  for each row execute function private.broadcast_withdrawal();
