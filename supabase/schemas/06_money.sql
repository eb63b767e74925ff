-- Money (docs/state-machines.md, Withdrawals; docs/contract.md, Webhooks): the
-- driver's wallet read from its ledger, the withdrawal state machine, and the
-- gateway's transfer events.
--
-- A withdrawal is recorded `processing` under the driver's wallet lock
-- (private.lock_wallet) before the edge asks the gateway for the Pix transfer,
-- so the funds are held from the first moment. The funds are released only when
-- we know the gateway made no transfer:
-- - the gateway refused our request (4xx): failed, gateway_rejected;
-- - the gateway reports the transfer FAILED or CANCELLED: failed, transfer_failed;
-- - reconciliation asked the gateway and it has no transfer for the withdrawal
--   well after our request: failed, no_transfer.
-- A request that timed out or got a 5xx may have made the transfer: the
-- withdrawal stays processing with in_doubt = true, holding its funds, until
-- an event or the reconciliation job (gateway-webhook's /reconcile, scheduled
-- below) learns from the gateway what happened. Every transfer event is checked
-- against the gateway's own record by the edge before it reaches
-- public.apply_transfer_event, so the state applied is the gateway's: a DONE
-- completes the withdrawal with its one debit even after a failure we recorded
-- (possibly below a zero balance: the ledger records what happened, and a
-- negative balance blocks further withdrawals until credits cover it).
-- Every write that can lower a driver's available balance takes the wallet lock
-- first (request_withdrawal, the refund reversal, a debit after a failure), so a
-- withdrawal is always judged against every such write committed before it.

-- Section: types (02_company.sql says why functions return them)

create type public.wallet as (driver_id uuid, balance numeric, available_balance numeric, currency text);
comment on type public.wallet is 'A driver''s balance (its ledger) and available balance (less processing withdrawals).';

create type public.wallet_transaction as (
  id uuid,
  kind text,
  amount numeric,
  delivery_id uuid,
  withdrawal_id uuid,
  created_at timestamptz
);
comment on type public.wallet_transaction is 'One ledger entry of a driver''s wallet.';

create type public.wallet_transaction_page as (items public.wallet_transaction[], next_cursor text);
comment on type public.wallet_transaction_page is 'One page of ledger entries, newest first; next_cursor is null on the last page.';

create type public.withdrawal as (
  id uuid,
  company_id uuid,
  driver_id uuid,
  amount numeric,
  pix_key text,
  pix_key_type text,
  status text,
  in_doubt boolean,
  gateway_transfer_id text,
  error_message text,
  failure_kind text,
  created_at timestamptz,
  updated_at timestamptz,
  completed_at timestamptz
);
comment on type public.withdrawal is 'A withdrawal as the API returns it (Pix key masked).';

create type public.withdrawal_page as (items public.withdrawal[], next_cursor text);
comment on type public.withdrawal_page is 'One page of withdrawals, newest first; next_cursor is null on the last page.';

-- Section: helpers

create function private.try_uuid(value text)
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
comment on function private.try_uuid(text) is 'The text as a uuid, or null when it is not one (gateway references are untrusted text).';

-- A key is stored in its canonical form, which private.normalize_pix_key (01_brazil.sql) gives.
alter table public.withdrawals
  add constraint withdrawals_pix_key_valid check (private.normalize_pix_key(pix_key, pix_key_type) is not distinct from pix_key);

-- Only the last four characters of a Pix key ever leave the database.
create function private.mask_pix_key(pix_key text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  return repeat('*', greatest(length(mask_pix_key.pix_key) - 4, 0)) || right(mask_pix_key.pix_key, 4);
end;
$$;
comment on function private.mask_pix_key(text) is 'A Pix key with all but its last four characters replaced by *.';

create function private.withdrawal_row(w public.withdrawals)
returns public.withdrawal
language plpgsql
stable
set search_path = ''
as $$
begin
  return row(w.id, w.company_id, w.driver_id, w.amount, private.mask_pix_key(w.pix_key), w.pix_key_type, w.status,
    w.in_doubt, w.gateway_transfer_id, w.error_message, w.failure_kind, w.created_at, w.updated_at,
    w.completed_at)::public.withdrawal;
end;
$$;
comment on function private.withdrawal_row(public.withdrawals) is 'A withdrawal as the API shows it (Pix key masked).';

create function private.withdrawal_json(w public.withdrawals)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$ begin return to_jsonb(private.withdrawal_row(w)); end; $$;
comment on function private.withdrawal_json(public.withdrawals) is 'A withdrawal as the API and the realtime broadcast show it (Pix key masked).';

grant execute on function private.try_uuid(text), private.mask_pix_key(text),
  private.withdrawal_row(public.withdrawals), private.withdrawal_json(public.withdrawals) to authenticated, service_role;

-- The withdrawal lock: every write to a withdrawal takes it first, so copies of
-- one event and the edge's own writes serialise, each seeing the one before.
-- Without a withdrawal it returns a row of nulls; its callers test `w.id is null`.
create function private.lock_withdrawal(withdrawal_id uuid)
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
comment on function private.lock_withdrawal(uuid) is 'Locks one withdrawal until the end of the transaction and returns it (all nulls when there is none).';
grant execute on function private.lock_withdrawal(uuid) to service_role;

-- The state machine, as data: the only moves a withdrawal may make. failed ->
-- completed is the gateway contradicting a failure we recorded: the edge applies
-- only what the gateway's own record says, so the money did leave.
create function private.withdrawal_move_allowed(from_status text, to_status text)
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
comment on function private.withdrawal_move_allowed(text, text) is 'The withdrawal transitions: processing to completed or failed, and failed to completed when the gateway reports the transfer done.';
grant execute on function private.withdrawal_move_allowed(text, text) to authenticated, service_role;

-- private.guard_withdrawal_update, the trigger: 04_wallets.sql, Section: what fires on the wallet tables.

-- private.check_withdrawal_debit, the trigger: 04_wallets.sql, Section: what fires on the wallet tables.

-- And a completed withdrawal has its debit by the end of the transaction.
create function private.check_completed_withdrawal_debited()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if not exists (
    select from public.wallet_entries e where e.withdrawal_id = new.id and e.kind = 'withdrawal_debit'
  ) then
    raise exception using errcode = 'PT422', message = 'a completed withdrawal needs its debit in the ledger';
  end if;
  return null;
end;
$$;
comment on function private.check_completed_withdrawal_debited() is 'Deferred trigger: no withdrawal commits as completed without its one ledger debit.';
create constraint trigger withdrawals_completed_debited after update on public.withdrawals
  deferrable initially deferred
  for each row when (new.status = 'completed') execute function private.check_completed_withdrawal_debited();

-- private.broadcast_withdrawal, the trigger: 04_wallets.sql, Section: what fires on the wallet tables.

-- Section: wallet

create function public.get_wallet()
returns public.wallet
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  driver uuid;
  balances record;
begin
  perform private.authorize(variadic private.drivers());
  driver := private.driver_id();
  select * into balances from private.wallet_balances(driver);
  return row(driver, balances.balance, balances.available_balance, 'BRL')::public.wallet;
end;
$$;
comment on function public.get_wallet() is 'The calling driver''s balance (its ledger) and available balance (less processing withdrawals).';
grant execute on function public.get_wallet() to authenticated;

create function public.list_wallet_transactions(page_limit integer default 20, cursor text default null)
returns public.wallet_transaction_page
language plpgsql
stable
set search_path = ''
-- Planned with each call's values: a generic plan would keep `cursor is null or ...`
-- and walk from the newest row to the cursor (public.list_deliveries says more).
set plan_cache_mode = force_custom_plan
as $$
declare
  driver uuid;
  after_key timestamptz;
  after_id uuid;
  rows public.wallet_transaction[];
begin
  perform private.authorize(variadic private.drivers());
  driver := private.driver_id();
  perform private.check_page_limit(page_limit);
  -- Scalars, not a record: an unassigned record's fields cannot even be planned with.
  if cursor is not null then
    select c.sort_key, c.id into after_key, after_id from private.decode_cursor(cursor) c;
  end if;
  select coalesce(array_agg(row(e.id, e.kind, e.amount, e.delivery_id, e.withdrawal_id, e.created_at)::public.wallet_transaction
    order by e.created_at desc, e.id desc), '{}') into rows
  from (
    select * from public.wallet_entries e
    where e.driver_id = driver
      and (list_wallet_transactions.cursor is null or (e.created_at, e.id) < (after_key, after_id))
    order by e.created_at desc, e.id desc
    limit page_limit + 1
  ) e;
  return (rows[1:page_limit], private.next_cursor(rows, page_limit, 'created_at'))::public.wallet_transaction_page;
end;
$$;
comment on function public.list_wallet_transactions(integer, text) is 'The calling driver''s ledger entries, newest first, one page.';
grant execute on function public.list_wallet_transactions(integer, text) to authenticated;

-- Section: withdrawals

create function public.request_withdrawal(amount numeric, pix_key text, pix_key_type text)
returns public.withdrawal
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.drivers());
  driver uuid := private.driver_id();
  key text := private.normalize_pix_key(request_withdrawal.pix_key, request_withdrawal.pix_key_type);
  available numeric;
  created public.withdrawals;
begin
  if request_withdrawal.amount is null or request_withdrawal.amount <= 0
     or request_withdrawal.amount <> round(request_withdrawal.amount, 2) then
    raise exception using errcode = 'PT400', message = 'amount must be greater than 0 with at most 2 decimal places';
  end if;
  if key is null then
    raise exception using errcode = 'PT400', message = format('pix_key is not a valid %s key', coalesce(request_withdrawal.pix_key_type, 'Pix'));
  end if;
  if not exists (select from private.gateway_configs g where g.company_id = company) then
    raise exception using errcode = 'PT422', message = 'the company has not configured the payment gateway';
  end if;

  -- One withdrawal at a time per driver: the next one reads the balance after this one commits,
  -- and so does it after any reversal or late debit that holds the same lock.
  perform private.lock_wallet(driver);
  select b.available_balance into available from private.wallet_balances(driver) b;
  if request_withdrawal.amount > available then
    raise exception using errcode = 'PT422',
      message = format('insufficient balance: available %s, requested %s', available, request_withdrawal.amount::numeric(12, 2));
  end if;

  insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type)
  values (company, driver, request_withdrawal.amount, key, request_withdrawal.pix_key_type)
  returning * into created;
  return private.withdrawal_row(created);
end;
$$;
comment on function public.request_withdrawal(numeric, text, text) is 'Records a processing withdrawal for the calling driver, 422 when it exceeds the available balance; the edge then asks the gateway for the transfer.';
grant execute on function public.request_withdrawal(numeric, text, text) to authenticated;

-- Service role only: a driver who could attach or fail its own withdrawal could
-- release funds the gateway is paying out.
create function public.attach_transfer(withdrawal_id uuid, gateway_transfer_id text)
returns public.withdrawal
language plpgsql
set search_path = ''
as $$
declare
  w public.withdrawals;
begin
  w := private.lock_withdrawal(attach_transfer.withdrawal_id);
  if w.id is null then
    raise exception using errcode = 'PT404', message = 'withdrawal not found';
  end if;
  if w.gateway_transfer_id is distinct from attach_transfer.gateway_transfer_id then
    if w.gateway_transfer_id is not null then
      raise exception using errcode = 'PT409', message = 'the withdrawal already has another gateway transfer';
    end if;
    -- Only the transfer id: a transfer event that overtook us may have settled the status already.
    update public.withdrawals x set gateway_transfer_id = attach_transfer.gateway_transfer_id, in_doubt = false
    where x.id = w.id
    returning * into w;
  end if;
  return private.withdrawal_row(w);
end;
$$;
comment on function public.attach_transfer(uuid, text) is 'Records the gateway''s transfer id on a withdrawal, whatever its status; the withdrawal is no longer in doubt (service role).';
grant execute on function public.attach_transfer(uuid, text) to service_role;

-- Our request for the transfer timed out or got a 5xx: the gateway may have made
-- it. The funds stay held; reconciliation or the transfer's events settle it.
create function public.mark_transfer_in_doubt(withdrawal_id uuid, error_message text)
returns public.withdrawal
language plpgsql
set search_path = ''
as $$
declare
  w public.withdrawals := private.lock_withdrawal(mark_transfer_in_doubt.withdrawal_id);
begin
  if w.id is null then
    raise exception using errcode = 'PT404', message = 'withdrawal not found';
  end if;
  -- An event that overtook us may have settled it, or stored its transfer: then it is not in doubt.
  if w.status = 'processing' and w.gateway_transfer_id is null then
    update public.withdrawals x set in_doubt = true, error_message = mark_transfer_in_doubt.error_message
    where x.id = w.id
    returning * into w;
  end if;
  return private.withdrawal_row(w);
end;
$$;
comment on function public.mark_transfer_in_doubt(uuid, text) is 'Flags a processing withdrawal whose transfer request may or may not have reached the gateway; its funds stay held (service role).';
grant execute on function public.mark_transfer_in_doubt(uuid, text) to service_role;

create function public.fail_withdrawal(withdrawal_id uuid, error_message text, failure_kind text)
returns public.withdrawal
language plpgsql
set search_path = ''
as $$
declare
  w public.withdrawals;
begin
  if fail_withdrawal.failure_kind is null or fail_withdrawal.failure_kind not in ('gateway_rejected', 'no_transfer') then
    raise exception using errcode = 'PT400', message = 'failure_kind must be gateway_rejected or no_transfer';
  end if;
  w := private.lock_withdrawal(fail_withdrawal.withdrawal_id);
  if w.id is null then
    raise exception using errcode = 'PT404', message = 'withdrawal not found';
  end if;
  if w.status = 'processing' then
    update public.withdrawals x
    set status = 'failed', error_message = fail_withdrawal.error_message, failure_kind = fail_withdrawal.failure_kind,
      in_doubt = false
    where x.id = w.id
    returning * into w;
  elsif w.status <> 'failed' then
    raise exception using errcode = 'PT422', message = format('withdrawal cannot move from %s to failed', w.status);
  end if;
  return private.withdrawal_row(w);
end;
$$;
comment on function public.fail_withdrawal(uuid, text, text) is 'Marks a processing withdrawal failed, releasing its funds, once we know the gateway made no transfer: gateway_rejected (it refused the request) or no_transfer (reconciliation found none) (service role).';
grant execute on function public.fail_withdrawal(uuid, text, text) to service_role;

create function public.list_withdrawals(page_limit integer default 20, cursor text default null)
returns public.withdrawal_page
language plpgsql
stable
security definer
set search_path = ''
-- Planned with each call's values: a generic plan would keep `cursor is null or ...`
-- and walk from the newest row to the cursor (public.list_deliveries says more).
set plan_cache_mode = force_custom_plan
as $$
declare
  company uuid := private.authorize(variadic private.withdrawal_readers());
  driver uuid := private.driver_id();
  after_key timestamptz;
  after_id uuid;
  rows public.withdrawal[];
begin
  perform private.check_page_limit(page_limit);
  if cursor is not null then
    select c.sort_key, c.id into after_key, after_id from private.decode_cursor(cursor) c;
  end if;
  -- The same scope as the select policy: a driver its own, managers their company's.
  select coalesce(array_agg(private.withdrawal_row(w) order by w.created_at desc, w.id desc), '{}') into rows
  from (
    select * from public.withdrawals w
    where w.company_id = company
      and (driver is null or w.driver_id = driver)
      and (list_withdrawals.cursor is null or (w.created_at, w.id) < (after_key, after_id))
    order by w.created_at desc, w.id desc
    limit page_limit + 1
  ) w;
  return (rows[1:page_limit], private.next_cursor(rows, page_limit, 'created_at'))::public.withdrawal_page;
end;
$$;
comment on function public.list_withdrawals(integer, text) is 'Withdrawals, newest first, one page: a driver''s own, or the company''s for owners and admins.';
grant execute on function public.list_withdrawals(integer, text) to authenticated;

create function public.get_withdrawal(withdrawal_id uuid)
returns public.withdrawal
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize(variadic private.withdrawal_readers());
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
  return private.withdrawal_row(w);
end;
$$;
comment on function public.get_withdrawal(uuid) is 'One withdrawal: the driver''s own, or its company''s for owners and admins.';
grant execute on function public.get_withdrawal(uuid) to authenticated;

-- Section: payment events (the gateway's word on a delivery's Pix charge)

-- A refund takes back what the driver was credited, as a new ledger entry, under
-- the wallet lock of the driver credited.
create function private.reverse_delivery_credit(delivery public.deliveries)
returns void
language plpgsql
set search_path = ''
as $$
declare
  credit public.wallet_entries;
begin
  select * into credit from public.wallet_entries e
  where e.delivery_id = (reverse_delivery_credit.delivery).id and e.kind = 'delivery_credit';
  if not found then
    return;
  end if;
  perform private.lock_wallet(credit.driver_id);
  insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
  values (credit.company_id, credit.driver_id, 'credit_reversal', -credit.amount, credit.delivery_id);
end;
$$;
comment on function private.reverse_delivery_credit(public.deliveries) is 'Adds a credit_reversal entry for a delivery''s credit, if it had one, under the driver''s wallet lock.';

-- The effect of one event on a locked delivery that has not seen it yet:
-- the moved delivery, or null when the event does not apply to its state.
create function private.apply_payment_effect(delivery public.deliveries, trigger text)
returns public.deliveries
language plpgsql
set search_path = ''
as $$
begin
  case apply_payment_effect.trigger
    when 'payment_received' then
      -- Paid after it was cancelled (overdue, or cancelled while the charge was
      -- being paid): the payment is recorded, and the delivery shows refund_due
      -- until the company refunds it at the gateway (PAYMENT_REFUNDED).
      if delivery.status = 'cancelled' and delivery.payment_status in ('pending', 'overdue') then
        return private.set_payment_status(delivery, apply_payment_effect.trigger, 'received');
      end if;
      if delivery.status <> 'awaiting_payment' then
        return null;
      end if;
      -- A driver chosen at creation takes it now, unless deactivated meanwhile:
      -- then it is open to every driver.
      if delivery.driver_id is not null
        and not exists (select from public.drivers d where d.id = delivery.driver_id and d.active) then
        update public.deliveries d set driver_id = null where d.id = delivery.id returning * into delivery;
      end if;
      delivery := private.move_delivery(delivery, apply_payment_effect.trigger, null,
        payment_status => case when delivery.payment_status = 'confirmed' then 'confirmed' else 'received' end);
      if delivery.driver_id is not null then
        delivery := private.move_delivery(delivery, 'assign', null);
      end if;
      return delivery;
    when 'payment_confirmed' then
      -- Confirmed before we heard it was received (its PAYMENT_RECEIVED lost, or the gateway's first word is
      -- CONFIRMED or RECEIVED_IN_CASH): it counts as received, then confirmed, each move recorded. A cancelled
      -- delivery thus records the payment and shows refund_due.
      if delivery.payment_status in ('pending', 'overdue') then
        delivery := private.apply_payment_effect(delivery, 'payment_received');
        if delivery.id is null then
          return null;
        end if;
      end if;
      if delivery.payment_status <> 'received' then
        return null;
      end if;
      return private.set_payment_status(delivery, apply_payment_effect.trigger, 'confirmed');
    when 'payment_refunded' then
      perform private.reverse_delivery_credit(delivery);
      if delivery.status = 'cancelled' then
        return private.set_payment_status(delivery, apply_payment_effect.trigger, 'refunded');
      end if;
      return private.move_delivery(delivery, apply_payment_effect.trigger, null, payment_status => 'refunded',
        cancel_reason => 'payment refunded');
    when 'payment_overdue' then
      if delivery.status <> 'awaiting_payment' then
        return null;
      end if;
      return private.move_delivery(delivery, apply_payment_effect.trigger, null, payment_status => 'overdue',
        cancel_reason => 'payment overdue');
  end case;
end;
$$;
comment on function private.apply_payment_effect(public.deliveries, text) is 'Applies one PAYMENT_* event to a locked delivery; null when its state does not allow it.';

-- Called by the webhook endpoints (service role); answers {result, delivery_id,
-- company_id, detail}, company_id so that the platform endpoint can file its
-- audit row under the delivery's company. Idempotent: an event already
-- applied to the delivery is a duplicate (its history row is unique); an event
-- for no delivery of ours, or for a state it does not apply to, is ignored.
-- A charge left at the gateway by a creation that failed afterwards has no
-- delivery, so paying it changes nothing here.
create function public.apply_payment_event(company_id uuid, event text, payment_id text, external_reference text)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  kind text := lower(apply_payment_event.event);
  delivery public.deliveries;
  moved public.deliveries;
  result text;
  detail text;
begin
  if kind not in ('payment_received', 'payment_confirmed', 'payment_refunded', 'payment_overdue') then
    return jsonb_build_object('result', 'ignored', 'delivery_id', null, 'company_id', null, 'detail', 'event not handled');
  end if;

  select * into delivery from public.deliveries d
  where d.gateway_payment_id = apply_payment_event.payment_id
    and (apply_payment_event.company_id is null or d.company_id = apply_payment_event.company_id)
  for update;
  if not found and apply_payment_event.external_reference
    ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    select * into delivery from public.deliveries d
    where d.id = apply_payment_event.external_reference::uuid
      and (apply_payment_event.company_id is null or d.company_id = apply_payment_event.company_id)
      -- The reference names the delivery, but the charge must be its own.
      and (apply_payment_event.payment_id is null or d.gateway_payment_id = apply_payment_event.payment_id)
    for update;
  end if;
  if delivery.id is null then
    return jsonb_build_object('result', 'ignored', 'delivery_id', null, 'company_id', null,
      'detail', 'no delivery for this payment');
  end if;
  if delivery.payment_method <> 'pix' then
    return jsonb_build_object('result', 'ignored', 'delivery_id', delivery.id, 'company_id', delivery.company_id,
      'detail', 'delivery is not paid by Pix');
  end if;

  if exists (select from public.delivery_history h where h.delivery_id = delivery.id and h.trigger = kind) then
    result := 'duplicate';
    detail := format('%s already applied', apply_payment_event.event);
  else
    moved := private.apply_payment_effect(delivery, kind);
    if moved.id is null then
      result := 'ignored';
      detail := format('%s does not apply to a delivery %s with payment %s', apply_payment_event.event, delivery.status,
        delivery.payment_status);
    else
      result := 'processed';
      detail := format('delivery %s, payment %s', moved.status, moved.payment_status);
    end if;
  end if;
  return jsonb_build_object('result', result, 'delivery_id', delivery.id, 'company_id', delivery.company_id, 'detail', detail);
end;
$$;
comment on function public.apply_payment_event(uuid, text, text, text) is 'Applies a gateway PAYMENT_* event to its delivery, idempotently: processed, duplicate or ignored (service role).';
revoke execute on function public.apply_payment_event(uuid, text, text, text) from authenticated;
grant execute on function public.apply_payment_event(uuid, text, text, text) to service_role;

grant execute on function private.reverse_delivery_credit(public.deliveries),
  private.apply_payment_effect(public.deliveries, text)
  to service_role;

-- Section: transfer events

-- The withdrawal an event speaks of: by the gateway's transfer id, else by our
-- id sent as externalReference (an event may overtake attach_transfer), but
-- never one whose stored transfer id contradicts the event. A null company
-- (the platform webhook) searches every company.
create function private.withdrawal_for_event(company_id uuid, transfer_id text, external_reference text)
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
comment on function private.withdrawal_for_event(uuid, text, text) is 'The withdrawal a transfer event refers to, within the company when one is given.';
grant execute on function private.withdrawal_for_event(uuid, text, text) to service_role;

-- Called by the edge with the state the gateway's own record shows (never an
-- event's claim alone), as the event the status stands for.
create function public.apply_transfer_event(company_id uuid, event text, transfer_id text, external_reference text)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  target text := case apply_transfer_event.event
    when 'TRANSFER_DONE' then 'completed'
    when 'TRANSFER_APPROVED' then 'completed'
    when 'TRANSFER_FAILED' then 'failed'
    when 'TRANSFER_CANCELLED' then 'failed'
  end;
  w public.withdrawals;
  earlier_failure text;
begin
  if target is null then
    return jsonb_build_object('result', 'ignored', 'withdrawal_id', null, 'company_id', null,
      'detail', format('%s is not a transfer event', coalesce(apply_transfer_event.event, 'null')));
  end if;

  -- The row lock serialises copies of one event: each later copy sees the first one's outcome.
  w := private.lock_withdrawal(private.withdrawal_for_event(apply_transfer_event.company_id,
    apply_transfer_event.transfer_id, apply_transfer_event.external_reference));
  if w.id is null then
    return jsonb_build_object('result', 'ignored', 'withdrawal_id', null, 'company_id', apply_transfer_event.company_id,
      'detail', 'no such withdrawal');
  end if;
  -- Looked up before the lock: attach_transfer may have stored a different transfer since.
  if w.gateway_transfer_id <> nullif(apply_transfer_event.transfer_id, '') then
    return jsonb_build_object('result', 'ignored', 'withdrawal_id', w.id, 'company_id', w.company_id,
      'detail', 'the transfer is not this withdrawal''s');
  end if;
  if w.status = target then
    return jsonb_build_object('result', 'duplicate', 'withdrawal_id', w.id, 'company_id', w.company_id,
      'detail', format('withdrawal already %s', w.status));
  end if;
  if not private.withdrawal_move_allowed(w.status, target) then
    return jsonb_build_object('result', 'ignored', 'withdrawal_id', w.id, 'company_id', w.company_id,
      'detail', format('withdrawal is already %s; the gateway now reports %s: left as it is for review',
        w.status, apply_transfer_event.event));
  end if;

  earlier_failure := case when w.status = 'failed' then w.failure_kind end;
  if target = 'completed' then
    -- After a failure the funds were released, so the debit lowers the available balance: wallet lock first.
    perform private.lock_wallet(w.driver_id);
  end if;
  update public.withdrawals x set
    status = target,
    in_doubt = false,
    completed_at = case when target = 'completed' then now() end,
    error_message = case when target = 'failed' then apply_transfer_event.event end,
    failure_kind = case when target = 'failed' then 'transfer_failed' else x.failure_kind end,
    gateway_transfer_id = coalesce(x.gateway_transfer_id, nullif(apply_transfer_event.transfer_id, ''))
  where x.id = w.id
  returning * into w;
  if target = 'completed' then
    insert into public.wallet_entries (company_id, driver_id, kind, amount, withdrawal_id)
    values (w.company_id, w.driver_id, 'withdrawal_debit', -w.amount, w.id)
    on conflict (withdrawal_id) where kind = 'withdrawal_debit' do nothing;
  end if;
  return jsonb_build_object('result', 'processed', 'withdrawal_id', w.id, 'company_id', w.company_id,
    'detail', case when earlier_failure is not null
      then format('withdrawal completed after it was recorded failed (%s): the gateway made the transfer, debited now',
        earlier_failure)
      else format('withdrawal %s', w.status) end);
end;
$$;
comment on function public.apply_transfer_event(uuid, text, text, text) is 'Applies the gateway''s state of a transfer once: completed with one debit (also after a recorded failure), or failed; copies are duplicate, a failure of a completed withdrawal is ignored (service role).';
grant execute on function public.apply_transfer_event(uuid, text, text, text) to service_role;

-- For the unsigned platform webhook, which must fetch the payment back from the
-- gateway with the owning company's key: the delivery a payment event speaks
-- of, by the same rules as public.apply_payment_event.
create function private.delivery_for_payment(payment_id text, external_reference text)
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
comment on function private.delivery_for_payment(text, text) is 'The delivery a payment event refers to, in any company (for the unsigned platform webhook).';
grant execute on function private.delivery_for_payment(text, text) to service_role;

-- Section: reconciliation

-- What the reconciliation job (gateway-webhook's /reconcile) asks the gateway
-- about: every processing withdrawal in doubt, or without a transfer id once its
-- request should long have finished (the edge died between our insert and the
-- gateway's answer), or whose transfer has been pending for an hour (its events
-- may be lost). Oldest first, at most `max_rows`.
create function public.withdrawals_to_reconcile(max_rows integer default 100)
returns table (id uuid, company_id uuid, gateway_transfer_id text, in_doubt boolean, created_at timestamptz)
language plpgsql
stable
set search_path = ''
as $$
begin
  return query
    select w.id, w.company_id, w.gateway_transfer_id, w.in_doubt, w.created_at
    from public.withdrawals w
    where w.status = 'processing'
      and (w.in_doubt
        or (w.gateway_transfer_id is null and w.created_at < now() - interval '2 minutes')
        or (w.gateway_transfer_id is not null and w.updated_at < now() - interval '1 hour'))
    order by w.created_at
    limit greatest(least(withdrawals_to_reconcile.max_rows, 1000), 1);
end;
$$;
comment on function public.withdrawals_to_reconcile(integer) is 'Processing withdrawals whose state only the gateway can tell: in doubt, without a transfer id after 2 minutes, or pending for an hour (service role).';
grant execute on function public.withdrawals_to_reconcile(integer) to service_role;

-- What the reconciliation job also asks the gateway about: every Pix delivery
-- still awaiting payment whose charge is older than 10 minutes (its
-- PAYMENT_RECEIVED may be lost). Each pass during the charge's first hour, then
-- once an hour of its age (the pass whose five minutes hold a whole hour of it;
-- a pass runs every 5 minutes), so an unpaid charge costs about ten look-ups in
-- its first hour and one an hour until it is paid or goes overdue (its due date
-- is the next day). Oldest first, at most `max_rows`.
create function public.payments_to_reconcile(max_rows integer default 100)
returns table (id uuid, company_id uuid, gateway_payment_id text, created_at timestamptz)
language plpgsql
stable
set search_path = ''
as $$
begin
  return query
    select d.id, d.company_id, d.gateway_payment_id, d.created_at
    from public.deliveries d
    where d.status = 'awaiting_payment'
      and d.gateway_payment_id is not null
      and d.created_at < now() - interval '10 minutes'
      and (d.created_at > now() - interval '1 hour'
        or (extract(epoch from now() - d.created_at)::bigint / 300) % 12 = 0)
    order by d.created_at
    limit greatest(least(payments_to_reconcile.max_rows, 1000), 1);
end;
$$;
comment on function public.payments_to_reconcile(integer) is 'Pix deliveries still awaiting payment 10 minutes after their charge: every pass in the first hour, then hourly (service role).';
grant execute on function public.payments_to_reconcile(integer) to service_role;
