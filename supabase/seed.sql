-- Demo data for local development: one company with a user of every role.
-- `npm start` prints the lines below; the passwords are for local use only.
-- demo user: owner@demo.test / demo-owner-pass / company_owner
-- demo user: admin@demo.test / demo-admin-pass / company_admin
-- demo user: legacy-admin@demo.test / demo-legacy-pass / admin (older token form)
-- demo user: driver1@demo.test / demo-driver-pass / driver
-- demo user: driver2@demo.test / demo-driver-pass / driver

insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
                        raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_sso_user, is_anonymous)
select '00000000-0000-0000-0000-000000000000', u.id, 'authenticated', 'authenticated', u.email,
       extensions.crypt(u.password, extensions.gen_salt('bf', 10)), now(),
       '{"provider": "email", "providers": ["email"]}', u.metadata, now(), now(), false, false
from (values
  ('d0000000-0000-4000-8000-000000000001'::uuid, 'owner@demo.test', 'demo-owner-pass', '{"name": "Olivia Owner"}'::jsonb),
  ('d0000000-0000-4000-8000-000000000002'::uuid, 'admin@demo.test', 'demo-admin-pass', '{"name": "Adam Admin"}'::jsonb),
  ('d0000000-0000-4000-8000-000000000003'::uuid, 'legacy-admin@demo.test', 'demo-legacy-pass', '{"name": "Lee Legacy", "role": "admin"}'::jsonb),
  ('d0000000-0000-4000-8000-000000000004'::uuid, 'driver1@demo.test', 'demo-driver-pass', '{"name": "Dora Driver"}'::jsonb),
  ('d0000000-0000-4000-8000-000000000005'::uuid, 'driver2@demo.test', 'demo-driver-pass', '{"name": "Dino Driver"}'::jsonb)
) as u (id, email, password, metadata);

insert into auth.identities (provider_id, user_id, identity_data, provider, created_at, updated_at)
select u.id::text, u.id, jsonb_build_object('sub', u.id::text, 'email', u.email, 'email_verified', true), 'email', now(), now()
from auth.users u
where u.email like '%@demo.test';

insert into public.companies (id, name) values ('c0000000-0000-4000-8000-000000000001', 'Demo Deliveries');
insert into public.memberships (user_id, company_id, role) values
  ('d0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001', 'company_owner'),
  ('d0000000-0000-4000-8000-000000000002', 'c0000000-0000-4000-8000-000000000001', 'company_admin'),
  ('d0000000-0000-4000-8000-000000000003', 'c0000000-0000-4000-8000-000000000001', 'admin'),
  ('d0000000-0000-4000-8000-000000000004', 'c0000000-0000-4000-8000-000000000001', 'driver'),
  ('d0000000-0000-4000-8000-000000000005', 'c0000000-0000-4000-8000-000000000001', 'driver');
insert into public.drivers (id, company_id, user_id, name, email, phone) values
  ('e0000000-0000-4000-8000-000000000004', 'c0000000-0000-4000-8000-000000000001',
   'd0000000-0000-4000-8000-000000000004', 'Dora Driver', 'driver1@demo.test', '+55 11 90000-0004'),
  ('e0000000-0000-4000-8000-000000000005', 'c0000000-0000-4000-8000-000000000001',
   'd0000000-0000-4000-8000-000000000005', 'Dino Driver', 'driver2@demo.test', '+55 11 90000-0005');
insert into public.prices (company_id, base_fee, per_km, minimum_fee, driver_share)
values ('c0000000-0000-4000-8000-000000000001', 5.00, 1.50, 8.00, 0.80);
insert into public.subscriptions (company_id) values ('c0000000-0000-4000-8000-000000000001');
