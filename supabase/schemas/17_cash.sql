-- Money at the door (docs/contract.md, Money at the door): what a driver collects
-- from the recipient on delivery (cash or card, `collect` on the delivery), what
-- the driver reports collecting on completion, and the driver's cash ledger: the
-- cash a driver collected is owed to the company until the driver hands it in
-- (a settlement, recorded by the owner or an admin). As the wallet (04_wallets.sql),
-- the ledger is append-only and has no balance column to drift: what is
-- outstanding is the sum of the entries, and a settlement is admitted only under
-- the driver's cash lock, never above what is outstanding. Card payments are
-- recorded on the delivery with their method and move no cash.

-- Section: types (02_company.sql says why functions return them)

create type public.cash_entry as (
  id uuid,
  driver_id uuid,
  kind text,
  amount numeric,
  delivery_id uuid,
  note text,
  created_by uuid,
  created_at timestamptz
);
comment on type public.cash_entry is 'One entry of a driver''s cash ledger: cash collected at a delivery (positive) or handed in (a settlement, negative).';

create type public.driver_cash as (
  driver_id uuid,
  outstanding numeric,
  collected numeric,
  settled numeric,
  card_collected numeric,
  entries public.cash_entry[]
);
comment on type public.driver_cash is 'A driver''s cash: what is outstanding (owed to the company), collected and settled in all, card payments apart, and the latest entries.';

create type public.cash_settlement as (
  id uuid,
  driver_id uuid,
  amount numeric,
  note text,
  created_at timestamptz,
  outstanding numeric
);
comment on type public.cash_settlement is 'Cash a driver handed in, and what the driver still owes after it.';

create type public.cash_summary_line as (
  driver_id uuid,
  name text,
  collected numeric,
  card_collected numeric,
  settled numeric,
  outstanding numeric,
  deliveries integer,
  mismatches integer
);
comment on type public.cash_summary_line is 'One driver''s day at the door: cash collected, card payments, cash handed in, what is outstanding at the day''s end, deliveries that collected, and how many collected another amount than asked.';

create type public.cash_summary as (date date, items public.cash_summary_line[]);
comment on type public.cash_summary is 'The company''s cash of one day (São Paulo), one line per driver with anything to show.';

-- Section: collect rules

create function private.check_collect(amount numeric, method text, change_for numeric)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
  if check_collect.amount is null and check_collect.method is null and check_collect.change_for is null then
    return;
  end if;
  if check_collect.amount is null or check_collect.amount <= 0 or check_collect.amount <> round(check_collect.amount, 2) then
    raise exception using errcode = 'PT400', message = 'collect.amount must be greater than 0 with at most 2 decimal places';
  end if;
  if check_collect.method is null or check_collect.method not in ('cash', 'card') then
    raise exception using errcode = 'PT400', message = 'collect.method must be cash or card';
  end if;
  if check_collect.change_for is not null and (check_collect.method <> 'cash'
     or check_collect.change_for < check_collect.amount or check_collect.change_for <> round(check_collect.change_for, 2)) then
    raise exception using errcode = 'PT400',
      message = 'collect.change_for is the cash note the recipient pays with: cash only, at least collect.amount';
  end if;
end;
$$;
comment on function private.check_collect(numeric, text, numeric) is 'Raises 400 unless what a delivery collects is whole: an amount in cents above 0, cash or card, and change only for cash, for at least the amount.';
grant execute on function private.check_collect(numeric, text, numeric) to service_role;

-- Section: the ledger

create table public.cash_entries (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references public.companies (id) on delete cascade,
  driver_id uuid not null references public.drivers (id) on delete cascade,
  kind text not null check (kind in ('collected', 'settlement')),
  -- Signed, as the wallet's: cash collected is positive (the driver owes it), a settlement negative.
  amount numeric(12, 2) not null,
  delivery_id uuid references public.deliveries (id),
  note text check (length(note) <= 500),
  -- Who recorded it: the driver completing the delivery, the manager receiving the cash.
  created_by uuid,
  created_at timestamptz not null default clock_timestamp(),
  check (
    (kind = 'collected' and amount > 0 and delivery_id is not null and note is null)
    or (kind = 'settlement' and amount < 0 and delivery_id is null)
  )
);
comment on table public.cash_entries is 'The drivers'' cash ledger: cash collected at the door, owed to the company, and cash handed in; rows are only ever added.';
create unique index cash_entries_one_per_delivery on public.cash_entries (delivery_id) where kind = 'collected';
create index cash_entries_driver_created_idx on public.cash_entries (driver_id, created_at desc, id desc);
create index cash_entries_company_created_idx on public.cash_entries (company_id, created_at);
alter table public.cash_entries enable row level security;

create policy cash_entries_select_visible on public.cash_entries
  for select to authenticated
  using (
    driver_id = (select private.driver_id())
    or company_id = (select private.company_of(private.company_managers()))
  );
-- Append-only for everyone, the service role included.
grant select on public.cash_entries to authenticated;
revoke all on public.cash_entries from service_role;
grant select, insert on public.cash_entries to service_role;

create trigger cash_entries_append_only before update or delete on public.cash_entries
  for each row execute function private.refuse_ledger_change();
create trigger cash_entries_no_truncate before truncate on public.cash_entries
  for each statement execute function private.refuse_ledger_change();

-- The cash lock: the driver's row, for no key update, as the wallet lock takes it
-- (private.lock_wallet), so that two settlements never both read the same outstanding.
create function private.lock_cash(driver_id uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform from public.drivers d where d.id = lock_cash.driver_id for no key update;
end;
$$;
comment on function private.lock_cash(uuid) is 'Takes the driver''s cash lock (its drivers row, for no key update) until the end of the transaction: every settlement takes it first.';

create function private.cash_outstanding(driver_id uuid)
returns numeric
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select coalesce(sum(e.amount), 0.00) from public.cash_entries e
          where e.driver_id = cash_outstanding.driver_id);
end;
$$;
comment on function private.cash_outstanding(uuid) is 'The cash a driver owes the company: the sum of the driver''s cash ledger.';

-- Every settlement, whoever inserts it (the service role too), under the cash lock: never above what is
-- outstanding. A constraint of the ledger, not of one function.
create function private.check_cash_settlement()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  outstanding numeric;
begin
  perform private.lock_cash(new.driver_id);
  outstanding := private.cash_outstanding(new.driver_id);
  if outstanding + new.amount < 0 then
    raise exception using errcode = 'PT422',
      message = format('the settlement is more than what is outstanding: outstanding %s, settled %s', outstanding, -new.amount);
  end if;
  return new;
end;
$$;
comment on function private.check_cash_settlement() is 'Refuses (PT422), under the driver''s cash lock, a settlement above what the driver owes.';
create trigger cash_entries_check_settlement before insert on public.cash_entries
  for each row when (new.kind = 'settlement') execute function private.check_cash_settlement();

-- Section: completion

-- Called by public.complete_delivery and public.complete_delivery_override on the locked delivery: requires
-- what was collected when the delivery collects (422 without it), records it as reported, writes the cash
-- owed to the ledger, completes the delivery and credits the driver.
create function private.finish_delivery(delivery public.deliveries, actor_id uuid, collected_amount numeric,
  collected_method text)
returns public.deliveries
language plpgsql
set search_path = ''
as $$
declare
  finished public.deliveries := finish_delivery.delivery;
begin
  if finished.status = 'in_progress' and finished.collect_amount is not null then
    if finish_delivery.collected_amount is null or finish_delivery.collected_method is null then
      raise exception using errcode = 'PT422',
        message = format('collected is required: this delivery collects %s by %s', finished.collect_amount,
          finished.collect_method);
    end if;
    if finish_delivery.collected_method not in ('cash', 'card') then
      raise exception using errcode = 'PT400', message = 'collected.method must be cash or card';
    end if;
    if finish_delivery.collected_amount < 0
       or finish_delivery.collected_amount <> round(finish_delivery.collected_amount, 2) then
      raise exception using errcode = 'PT400', message = 'collected.amount must be at least 0 with at most 2 decimal places';
    end if;
    update public.deliveries d set collected_amount = finish_delivery.collected_amount,
      collected_method = finish_delivery.collected_method
    where d.id = finished.id
    returning * into finished;
  end if;
  finished := private.move_delivery(finished, 'complete', finish_delivery.actor_id);
  if finished.collected_method = 'cash' and finished.collected_amount > 0 then
    insert into public.cash_entries (company_id, driver_id, kind, amount, delivery_id, created_by)
    values (finished.company_id, finished.driver_id, 'collected', finished.collected_amount, finished.id,
      finish_delivery.actor_id);
  end if;
  insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
  values (finished.company_id, finished.driver_id, 'delivery_credit',
    private.driver_credit(finished.price, finished.driver_share), finished.id);
  return finished;
end;
$$;
comment on function private.finish_delivery(public.deliveries, uuid, numeric, text) is 'Completes a locked delivery in progress: what was collected (required when it collects), the cash owed to the ledger, the driver''s credit.';

-- Section: reading and settling

-- A driver of the caller's company, for its managers, or the calling driver itself; else 404.
create function private.cash_driver(driver_id uuid)
returns uuid
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.withdrawal_readers());
begin
  if not exists (select from public.drivers d where d.id = cash_driver.driver_id and d.company_id = company)
     or (private.app_role() = 'driver' and cash_driver.driver_id is distinct from private.driver_id()) then
    raise exception using errcode = 'PT404', message = 'driver not found';
  end if;
  return company;
end;
$$;
comment on function private.cash_driver(uuid) is 'Authorizes reading a driver''s cash: the company''s managers, or the driver itself (404 otherwise).';
grant execute on function private.cash_driver(uuid) to authenticated, service_role;

create function public.get_driver_cash(driver_id uuid, entries_limit integer default 100)
returns public.driver_cash
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.cash_driver(get_driver_cash.driver_id);
  result public.driver_cash;
begin
  if get_driver_cash.entries_limit is null or get_driver_cash.entries_limit not between 1 and 1000 then
    raise exception using errcode = 'PT400', message = 'entries_limit must be between 1 and 1000';
  end if;
  select get_driver_cash.driver_id,
    coalesce(sum(e.amount), 0.00),
    coalesce(sum(e.amount) filter (where e.kind = 'collected'), 0.00),
    coalesce(-sum(e.amount) filter (where e.kind = 'settlement'), 0.00)
  into result.driver_id, result.outstanding, result.collected, result.settled
  from public.cash_entries e where e.driver_id = get_driver_cash.driver_id and e.company_id = company;
  result.card_collected := (select coalesce(sum(d.collected_amount), 0.00) from public.deliveries d
    where d.driver_id = get_driver_cash.driver_id and d.status = 'completed' and d.collected_method = 'card');
  result.entries := coalesce((
    select array_agg(row(e.id, e.driver_id, e.kind, e.amount, e.delivery_id, e.note, e.created_by,
      e.created_at)::public.cash_entry order by e.created_at desc, e.id desc)
    from (select * from public.cash_entries x where x.driver_id = get_driver_cash.driver_id
          order by x.created_at desc, x.id desc limit get_driver_cash.entries_limit) e), '{}');
  return result;
end;
$$;
comment on function public.get_driver_cash(uuid, integer) is 'A driver''s cash: outstanding, collected and settled in all, card payments apart, the latest entries (managers; the driver itself).';
grant execute on function public.get_driver_cash(uuid, integer) to authenticated;

create function public.record_cash_settlement(driver_id uuid, amount numeric, note text default null)
returns public.cash_settlement
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  entry public.cash_entries;
begin
  if not exists (select from public.drivers d where d.id = record_cash_settlement.driver_id and d.company_id = company) then
    raise exception using errcode = 'PT404', message = 'driver not found';
  end if;
  if record_cash_settlement.amount is null or record_cash_settlement.amount <= 0
     or record_cash_settlement.amount <> round(record_cash_settlement.amount, 2) then
    raise exception using errcode = 'PT400', message = 'amount must be greater than 0 with at most 2 decimal places';
  end if;
  -- The ledger's trigger (private.check_cash_settlement) takes the cash lock and refuses more than is outstanding.
  insert into public.cash_entries (company_id, driver_id, kind, amount, note, created_by)
  values (company, record_cash_settlement.driver_id, 'settlement', -record_cash_settlement.amount,
    nullif(btrim(record_cash_settlement.note), ''), (select auth.uid()))
  returning * into entry;
  return row(entry.id, entry.driver_id, -entry.amount, entry.note, entry.created_at,
    private.cash_outstanding(entry.driver_id))::public.cash_settlement;
end;
$$;
comment on function public.record_cash_settlement(uuid, numeric, text) is 'Records cash a driver handed in (owner, admin); more than what is outstanding is 422, also when several arrive at once.';
grant execute on function public.record_cash_settlement(uuid, numeric, text) to authenticated;

create function public.cash_summary(day date)
returns public.cash_summary
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.company_managers());
  day_start timestamptz := (cash_summary.day::timestamp at time zone 'America/Sao_Paulo');
  day_end timestamptz := ((cash_summary.day + 1)::timestamp at time zone 'America/Sao_Paulo');
begin
  if cash_summary.day is null then
    raise exception using errcode = 'PT400', message = 'date is required';
  end if;
  return row(cash_summary.day, coalesce((
    select array_agg(row(l.driver_id, l.name, l.collected, l.card_collected, l.settled, l.outstanding, l.deliveries,
      l.mismatches)::public.cash_summary_line order by l.name, l.driver_id)
    from (
      select dr.id as driver_id, dr.name, dr.active,
        coalesce(c.collected, 0.00) as collected,
        coalesce(k.card_collected, 0.00) as card_collected,
        coalesce(c.settled, 0.00) as settled,
        coalesce(c.outstanding, 0.00) as outstanding,
        coalesce(k.deliveries, 0)::integer as deliveries,
        coalesce(k.mismatches, 0)::integer as mismatches
      from public.drivers dr
      left join lateral (
        select sum(e.amount) filter (where e.kind = 'collected' and e.created_at >= day_start) as collected,
          -sum(e.amount) filter (where e.kind = 'settlement' and e.created_at >= day_start) as settled,
          sum(e.amount) as outstanding
        from public.cash_entries e where e.driver_id = dr.id and e.created_at < day_end) c on true
      left join lateral (
        select sum(d.collected_amount) filter (where d.collected_method = 'card') as card_collected,
          count(*) as deliveries,
          count(*) filter (where d.collected_amount <> d.collect_amount) as mismatches
        from public.deliveries d
        where d.driver_id = dr.id and d.status = 'completed' and d.collect_amount is not null
          and d.completed_at >= day_start and d.completed_at < day_end) k on true
      where dr.company_id = company
    ) l
    -- One line per driver of the company (DESIGN §11.3), zeros included, so "owes nothing" is said; a driver made
    -- inactive keeps a line while it has something to show (cash still owed is never hidden).
    where l.active or l.collected <> 0 or l.card_collected <> 0 or l.settled <> 0 or l.outstanding <> 0
      or l.deliveries > 0), '{}')
  )::public.cash_summary;
end;
$$;
comment on function public.cash_summary(date) is 'The company''s cash of one São Paulo day, one line per driver: collected, card, handed in, outstanding at the day''s end, mismatches (owner, admin).';
grant execute on function public.cash_summary(date) to authenticated;
