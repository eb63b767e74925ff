-- Money never leaves without a debit (follow-up to 20261121002000_money.sql).
--
-- 1. Why a withdrawal failed is recorded (failure_kind). When our request for the
--    transfer timed out or got a 5xx, the edge gives up (`gateway_unavailable`),
--    fails the withdrawal and releases its funds, as the issue asks, although the
--    gateway may have created the transfer anyway. A later TRANSFER_DONE /
--    TRANSFER_APPROVED for such a withdrawal is then the truth that the money
--    left: it moves failed -> completed with its one debit. A refusal (4xx,
--    `gateway_rejected`) or a TRANSFER_FAILED / TRANSFER_CANCELLED
--    (`transfer_failed`) stays final, as before.
--    The driver may have withdrawn the released funds meanwhile, so that debit may
--    take the balance below zero. Nothing prevents it, on purpose: the ledger
--    records what happened (no check on wallet_entries or on the balance refuses
--    a debit; only request_withdrawal refuses to hold more than is available), and
--    a negative balance simply blocks further withdrawals until credits cover it.
-- 2. Every write that can lower a driver's available balance takes the driver's
--    wallet lock (private.lock_wallet) that request_withdrawal takes, so a
--    withdrawal is always judged against every such write committed before it:
--    the refund reversal and the late debit of (1). Credits only raise the
--    balance, so a withdrawal that misses one is judged conservatively; they take
--    no lock.
-- 3. A withdrawal whose request died between its insert and the gateway's answer
--    would stay processing forever, its funds held: public.expire_stale_withdrawals
--    fails those as `gateway_unavailable`, so a late TRANSFER_DONE still settles
--    them by (1).

-- Why a withdrawal failed --------------------------------------------------------------

alter table public.withdrawals add column failure_kind text;
comment on column public.withdrawals.failure_kind is
  'Why a failed withdrawal failed: gateway_unavailable (we gave up: timeout, 5xx, unreachable; a later TRANSFER_DONE still completes it), gateway_rejected (4xx), transfer_failed (TRANSFER_FAILED / TRANSFER_CANCELLED). Kept on a withdrawal completed after gateway_unavailable.';

-- Rows failed before this column existed, by the messages the edge and the
-- events wrote. Without their triggers: this is no move, nothing to broadcast.
alter table public.withdrawals disable trigger withdrawals_guard, disable trigger withdrawals_broadcast;
update public.withdrawals w set failure_kind = case
    when w.error_message in ('TRANSFER_FAILED', 'TRANSFER_CANCELLED') then 'transfer_failed'
    when w.error_message like 'Payment gateway unavailable%' then 'gateway_unavailable'
    else 'gateway_rejected'
  end
where w.status = 'failed';
alter table public.withdrawals enable trigger withdrawals_guard, enable trigger withdrawals_broadcast;

alter table public.withdrawals
  add constraint withdrawals_failure_kind_known
    check (failure_kind in ('gateway_unavailable', 'gateway_rejected', 'transfer_failed')),
  add constraint withdrawals_failure_kind_status check (case status
    when 'processing' then failure_kind is null
    when 'failed' then failure_kind is not null
    else failure_kind is null or failure_kind = 'gateway_unavailable'
  end);

-- The state machine, as data, now with the one move that depends on why a
-- withdrawal failed. Replaces the two-argument form, which could not say so.
drop function private.withdrawal_move_allowed(text, text);
create function private.withdrawal_move_allowed(from_status text, to_status text, failure_kind text)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select exists (
    select from (values
      ('processing', 'completed', null),
      ('processing', 'failed', null),
      -- We gave up on the gateway, but it made the transfer: the money left.
      ('failed', 'completed', 'gateway_unavailable')
    ) m (from_status, to_status, failure_kind)
    where m.from_status = withdrawal_move_allowed.from_status and m.to_status = withdrawal_move_allowed.to_status
      and (m.failure_kind is null or m.failure_kind = withdrawal_move_allowed.failure_kind)
  )
$$;
comment on function private.withdrawal_move_allowed(text, text, text) is 'The withdrawal transitions: processing to completed or failed, and failed to completed only after we gave up on an unavailable gateway.';
grant execute on function private.withdrawal_move_allowed(text, text, text) to authenticated, service_role;

create or replace function private.guard_withdrawal_update()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.status is distinct from old.status
     and not private.withdrawal_move_allowed(old.status, new.status, old.failure_kind) then
    raise exception using errcode = 'PT422', message = format('withdrawal cannot move from %s to %s', old.status, new.status);
  end if;
  if (new.company_id, new.driver_id, new.amount, new.pix_key, new.pix_key_type, new.created_at)
     is distinct from (old.company_id, old.driver_id, old.amount, old.pix_key, old.pix_key_type, old.created_at) then
    raise exception using errcode = 'PT422', message = 'a withdrawal''s owner, amount and Pix key cannot change';
  end if;
  if old.gateway_transfer_id is not null and new.gateway_transfer_id is distinct from old.gateway_transfer_id then
    raise exception using errcode = 'PT422', message = 'a withdrawal''s gateway transfer cannot change';
  end if;
  -- Why it failed is written once, with the failure: it decides whether a late success may still complete it.
  if new.failure_kind is distinct from old.failure_kind and not (old.status = 'processing' and new.status = 'failed') then
    raise exception using errcode = 'PT422', message = 'a withdrawal''s failure kind is set only when it fails';
  end if;
  new.updated_at := now();
  return new;
end;
$$;
comment on function private.guard_withdrawal_update() is 'Trigger: refuses any withdrawal move outside the state machine, any change of owner, amount, key or transfer, and any later change of why it failed.';

-- The wallet lock -----------------------------------------------------------------------

-- `for no key update`: it does not conflict with the key-share locks that the
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

-- Unchanged but for the lock, now the shared helper.
create or replace function public.request_withdrawal(amount numeric, pix_key text, pix_key_type text)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  company uuid := private.authorize('driver');
  driver uuid := private.driver_id();
  available numeric;
  created public.withdrawals;
begin
  if request_withdrawal.amount is null or request_withdrawal.amount <= 0
     or request_withdrawal.amount <> round(request_withdrawal.amount, 2) then
    raise exception using errcode = 'PT400', message = 'amount must be greater than 0 with at most 2 decimal places';
  end if;
  if not private.valid_pix_key(request_withdrawal.pix_key, request_withdrawal.pix_key_type) then
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
  values (company, driver, request_withdrawal.amount, request_withdrawal.pix_key, request_withdrawal.pix_key_type)
  returning * into created;
  return private.withdrawal_json(created);
end;
$$;

-- A refund takes back what the driver was credited, as a new ledger entry,
-- under the wallet lock of the driver credited (deliveries migration, otherwise unchanged).
create or replace function private.reverse_delivery_credit(delivery public.deliveries)
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

-- Failing a withdrawal ---------------------------------------------------------------------

create function public.fail_withdrawal(withdrawal_id uuid, error_message text, failure_kind text)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  w public.withdrawals;
begin
  if fail_withdrawal.failure_kind is null or fail_withdrawal.failure_kind not in ('gateway_unavailable', 'gateway_rejected') then
    raise exception using errcode = 'PT400', message = 'failure_kind must be gateway_unavailable or gateway_rejected';
  end if;
  select * into w from public.withdrawals x where x.id = fail_withdrawal.withdrawal_id for update;
  if not found then
    raise exception using errcode = 'PT404', message = 'withdrawal not found';
  end if;
  if w.status = 'processing' then
    update public.withdrawals x
    set status = 'failed', error_message = fail_withdrawal.error_message, failure_kind = fail_withdrawal.failure_kind
    where x.id = w.id
    returning * into w;
  elsif w.status <> 'failed' then
    raise exception using errcode = 'PT422', message = format('withdrawal cannot move from %s to failed', w.status);
  end if;
  return private.withdrawal_json(w);
end;
$$;
comment on function public.fail_withdrawal(uuid, text, text) is 'Marks a processing withdrawal failed, releasing its funds: gateway_rejected (4xx) is final; gateway_unavailable (timeout, 5xx, unreachable) still completes on a later TRANSFER_DONE (service role).';
grant execute on function public.fail_withdrawal(uuid, text, text) to service_role;

-- The landed two-argument form keeps its landed meaning: a final failure.
create or replace function public.fail_withdrawal(withdrawal_id uuid, error_message text)
returns jsonb
language sql
set search_path = ''
as $$
  select public.fail_withdrawal(fail_withdrawal.withdrawal_id, fail_withdrawal.error_message, 'gateway_rejected')
$$;
comment on function public.fail_withdrawal(uuid, text) is 'Marks a processing withdrawal failed for good (gateway_rejected), releasing its funds; the edge uses the three-argument form (service role).';

-- Transfer events -----------------------------------------------------------------------

create or replace function public.apply_transfer_event(company_id uuid, event text, transfer_id text, external_reference text)
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
  found_id uuid;
  w public.withdrawals;
  given_up boolean;
begin
  if target is null then
    return jsonb_build_object('result', 'ignored', 'withdrawal_id', null, 'company_id', null,
      'detail', format('%s is not a transfer event', coalesce(apply_transfer_event.event, 'null')));
  end if;

  found_id := private.withdrawal_for_event(apply_transfer_event.company_id, apply_transfer_event.transfer_id,
    apply_transfer_event.external_reference);
  -- The row lock serialises copies of one event: each later copy sees the first one's outcome.
  select * into w from public.withdrawals x where x.id = found_id for update;
  if not found then
    return jsonb_build_object('result', 'ignored', 'withdrawal_id', null, 'company_id', apply_transfer_event.company_id,
      'detail', 'no such withdrawal');
  end if;
  -- Looked up before the lock: attach_transfer may have stored a different transfer since.
  if w.gateway_transfer_id <> nullif(apply_transfer_event.transfer_id, '') then
    return jsonb_build_object('result', 'ignored', 'withdrawal_id', w.id, 'company_id', w.company_id,
      'detail', 'the transfer is not this withdrawal''s');
  end if;
  -- A withdrawal we gave up on is already failed with its funds released: a
  -- TRANSFER_FAILED for it is a duplicate, and only a success still moves it.
  if w.status = target then
    return jsonb_build_object('result', 'duplicate', 'withdrawal_id', w.id, 'company_id', w.company_id,
      'detail', format('withdrawal already %s', w.status));
  end if;
  if not private.withdrawal_move_allowed(w.status, target, w.failure_kind) then
    return jsonb_build_object('result', 'ignored', 'withdrawal_id', w.id, 'company_id', w.company_id,
      'detail', format('withdrawal is already %s', w.status));
  end if;

  given_up := w.status = 'failed';
  if target = 'completed' then
    -- The debit lowers the available balance when the funds were released: take the wallet lock first.
    perform private.lock_wallet(w.driver_id);
  end if;
  update public.withdrawals x set
    status = target,
    completed_at = case when target = 'completed' then now() end,
    -- A completed withdrawal carries no error, also one completed after we gave up on it (failure_kind says so).
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
    'detail', case when given_up
      then 'withdrawal completed after the gateway was given up as unavailable: debited now'
      else format('withdrawal %s', w.status) end);
end;
$$;
comment on function public.apply_transfer_event(uuid, text, text, text) is 'Applies a TRANSFER_* event once: completed with one debit (also a withdrawal failed as gateway_unavailable), or failed; later copies are duplicate, other events on a settled withdrawal ignored (service role).';

-- Stale withdrawals --------------------------------------------------------------------

-- A withdrawal stays processing without a transfer id only while the edge waits
-- for the gateway (at most its 10 s timeout) or when the request died mid-flight
-- (a crash, a lost connection). The latter are failed as gateway_unavailable:
-- their funds are released, and if the gateway did make the transfer, its
-- TRANSFER_DONE still completes them with their debit. Withdrawals with a
-- transfer id are left to the transfer's own events. Rows locked right now
-- (an edge request settling them) are skipped, not waited for.
--
-- Call it on a schedule. On Supabase, with pg_cron (not in the local stack,
-- so not created here):
--   select cron.schedule('expire-stale-withdrawals', '*/10 * * * *',
--     $$select public.expire_stale_withdrawals()$$);
create function public.expire_stale_withdrawals(older_than interval default interval '1 hour')
returns integer
language plpgsql
set search_path = ''
as $$
declare
  expired integer;
begin
  -- Well above the gateway timeout, so a request still waiting for its answer is never expired.
  if expire_stale_withdrawals.older_than is null or expire_stale_withdrawals.older_than < interval '1 minute' then
    raise exception using errcode = 'PT400', message = 'older_than must be at least 1 minute';
  end if;
  with stale as (
    select w.id from public.withdrawals w
    where w.status = 'processing' and w.gateway_transfer_id is null
      and w.created_at < now() - expire_stale_withdrawals.older_than
    for update skip locked
  )
  update public.withdrawals x set
    status = 'failed',
    failure_kind = 'gateway_unavailable',
    error_message = format('Payment gateway unavailable: no transfer recorded within %s', expire_stale_withdrawals.older_than)
  from stale
  where x.id = stale.id;
  get diagnostics expired = row_count;
  return expired;
end;
$$;
comment on function public.expire_stale_withdrawals(interval) is 'Fails (gateway_unavailable, funds released) processing withdrawals older than the interval that never got a transfer id; for a scheduled job (service role).';
grant execute on function public.expire_stale_withdrawals(interval) to service_role;
