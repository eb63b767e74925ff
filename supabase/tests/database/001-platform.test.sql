-- The Supabase platform objects the local stack provides match Supabase.
begin;
select plan(9);

select has_role('anon');
select has_role('authenticated');
select has_role('service_role');
select has_role('authenticator');
select has_role('supabase_auth_admin');

select tests.act_as('{"role": "authenticated", "sub": "00000000-0000-0000-0000-00000000000a", "email": "a@example.com"}');
select is(auth.uid(), '00000000-0000-0000-0000-00000000000a'::uuid, 'auth.uid() reads the sub claim');
select is(auth.role(), 'authenticated', 'auth.role() reads the role claim');
select is(auth.jwt() ->> 'email', 'a@example.com', 'auth.jwt() returns the claims');
select tests.reset_role();

select is(
  (select relrowsecurity from pg_class where oid = 'realtime.messages'::regclass),
  true,
  'realtime.messages is behind row-level security'
);

select * from finish();
rollback;
