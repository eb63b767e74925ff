-- Deliveries: the schema, the list of allowed moves, who may call what, and
-- the row lock behind accept.
begin;
select plan(24);

select has_table('public', 'deliveries', 'deliveries exists');
select has_table('public', 'delivery_history', 'delivery_history exists');
select is((select relrowsecurity from pg_class where oid = 'public.deliveries'::regclass), true, 'deliveries has RLS on');
select is((select relrowsecurity from pg_class where oid = 'public.delivery_history'::regclass), true, 'delivery_history has RLS on');
select fk_ok('public', 'wallet_entries', 'delivery_id', 'public', 'deliveries', 'id');
select policies_are('public', 'deliveries', array['deliveries_select_visible'], 'deliveries: one select policy, nothing else');
select policies_are('public', 'delivery_history', array['delivery_history_select_managers'], 'delivery_history: one select policy');

-- The one list of moves (docs/state-machines.md, deliveries).
select results_eq(
  $$ select trigger, from_statuses, to_status from private.delivery_moves() order by trigger $$,
  $$ values
    ('accept', array['pending'], 'accepted'),
    ('assign', array['pending'], 'accepted'),
    ('cancel', array['awaiting_payment', 'pending', 'accepted', 'failed'], 'cancelled'),
    ('complete', array['in_progress'], 'completed'),
    ('fail', array['in_progress'], 'failed'),
    ('payment_overdue', array['awaiting_payment'], 'cancelled'),
    ('payment_received', array['awaiting_payment'], 'pending'),
    ('payment_refunded', array['awaiting_payment', 'pending', 'accepted', 'in_progress', 'completed', 'failed',
      'returning', 'returned'], 'cancelled'),
    ('recall', array['accepted'], 'pending'),
    ('recall_cancel', array['accepted'], 'cancelled'),
    ('recall_return', array['in_progress'], 'returning'),
    ('reopen', array['failed'], 'pending'),
    ('return', array['returning'], 'returned'),
    ('start', array['accepted'], 'in_progress'),
    ('unassign', array['accepted'], 'pending') $$,
  'the allowed moves are those of docs/state-machines.md');

-- Who may call what.
select ok(not has_function_privilege('anon', 'public.list_deliveries(text, uuid, integer, text, text, text, timestamptz, timestamptz, boolean)', 'execute'), 'anon may not list deliveries');
select ok(not has_function_privilege('anon', 'public.accept_delivery(uuid)', 'execute'), 'anon may not accept');
select ok(has_function_privilege('authenticated', 'public.accept_delivery(uuid)', 'execute'), 'authenticated may call accept (it authorizes inside)');
select ok(not has_function_privilege('authenticated',
  'public.apply_payment_event(uuid, text, text, text)', 'execute'), 'no user may apply a payment event');
select ok(has_function_privilege('service_role',
  'public.apply_payment_event(uuid, text, text, text)', 'execute'), 'the service role applies payment events');
select ok(not has_function_privilege('authenticated',
  'public.create_delivery(uuid, uuid, uuid, text, text, double precision, double precision, text, double precision, double precision, numeric, numeric, text, text, text, uuid, numeric, text, text, text, date, timestamptz, timestamptz, text, text, numeric, text, numeric)',
  'execute'), 'no user inserts a delivery directly: the edge does, after routing and charging');
select ok(not has_function_privilege('authenticated', 'private.move_delivery(public.deliveries, text, uuid, uuid, text, text)', 'execute'),
  'no user may call the state machine directly');
select ok(not has_table_privilege('authenticated', 'public.deliveries', 'update'), 'no user may update deliveries directly');
select ok(not has_table_privilege('authenticated', 'public.deliveries', 'insert'), 'no user may insert deliveries directly');
select ok(not has_table_privilege('authenticated', 'public.delivery_history', 'insert'), 'no user may write the history');
select ok(not has_function_privilege('authenticated', 'private.gateway_customer_id(uuid, text)', 'execute'),
  'no user reads the gateway customer cache');

-- The lock: every move starts from private.lock_delivery, which takes the row `for update`.
select matches(pg_get_functiondef('private.lock_delivery(uuid, uuid)'::regprocedure), 'for update',
  'lock_delivery takes the row for update');
select matches(pg_get_functiondef('public.accept_delivery(uuid)'::regprocedure), 'private\.lock_delivery\(',
  'accept locks the delivery before moving it');
select matches(pg_get_functiondef('private.lock_own_delivery(uuid)'::regprocedure), 'private\.lock_delivery\(',
  'start and complete lock the delivery before moving it');
select matches(pg_get_functiondef('public.apply_payment_event(uuid, text, text, text)'::regprocedure), 'for update',
  'payment events lock the delivery');

select is(
  (select count(*)::integer from pg_proc p join pg_namespace n on n.oid = p.pronamespace
   where p.prosecdef and n.nspname in ('public', 'private')
     and p.proname in ('cancel_delivery', 'assign_delivery', 'accept_delivery', 'start_delivery', 'complete_delivery',
                       'broadcast_delivery_change')
     and array_to_string(p.proconfig, ',') like '%search_path=""%'),
  6, 'every security definer function of deliveries pins an empty search_path');

select * from finish();
rollback;
