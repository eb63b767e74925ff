-- Proof of delivery: the policies on storage.objects for the delivery-proofs
-- bucket (the driver of the delivery in progress writes one proof of each kind,
-- and may replace it and read it back until the delivery leaves in_progress;
-- the company's managers read; nobody else), and completion with the company's
-- requirements.
begin;
select plan(26);

create temp table t as select tests.create_tenant('pod-a') as a, tests.create_tenant('pod-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;
insert into ids select 'moving', (tests.delivery_in(a, 'in_progress', 'invoice')).id from t;
insert into ids select 'done', (tests.delivery_in(a, 'completed', 'invoice')).id from t;
create function pg_temp.name(delivery text, file text) returns text
language sql as $$ select (a ->> 'company_id') || '/' || (select id from ids where ids.name = delivery) || '/' || file from t $$;
grant execute on all functions in schema pg_temp to public;

select is((select array[public::text, file_size_limit::text] || allowed_mime_types from storage.buckets where id = 'delivery-proofs'),
  array['false', '5242880', 'image/jpeg', 'image/png', 'image/webp'], 'a private bucket of images up to 5 MiB');

select tests.act_as_member(a, 'driver') from t;
select lives_ok(format('select tests.put_proof(%L)', pg_temp.name('moving', 'photo.png')), 'the delivery''s driver uploads its photo');
select throws_ok(format('select tests.put_proof(%L)', pg_temp.name('moving', 'photo.jpg')), '42501', null, 'but only one photo');
select lives_ok(format('select tests.put_proof(%L)', pg_temp.name('moving', 'signature.png')), 'and the signature');
select throws_ok(format('select tests.put_proof(%L)', pg_temp.name('moving', 'other.png')), '42501', null, 'nothing else');
select throws_ok(format('select tests.put_proof(%L)', pg_temp.name('done', 'photo.png')), '42501', null, 'nor for a completed delivery');
-- A retry after a lost completion, or a better photo: the driver replaces their own proof under its name.
select lives_ok(format('select tests.upsert_proof(%L, %L)', pg_temp.name('moving', 'photo.png'), 'second'),
  'the driver replaces their photo with an upsert');
select is((select version from storage.objects where name = pg_temp.name('moving', 'photo.png')), 'second',
  'which now holds the new version');
select throws_ok(format('select tests.upsert_proof(%L, %L)', pg_temp.name('moving', 'photo.jpg'), 'third'), '42501', null,
  'but not beside it under another name');
select throws_ok($$ update storage.objects set name = name || 'x' $$, '42501', null, 'nor renames it');
select is_empty($$ delete from storage.objects returning 1 $$, 'no delete');
select is((select count(*)::integer from storage.objects where bucket_id = 'delivery-proofs'), 2,
  'the driver reads back their own proof of the delivery in progress');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok(format('select tests.put_proof(%L)', pg_temp.name('moving', 'photo.webp')), '42501', null, 'another driver may not write');
select throws_ok(format('select tests.upsert_proof(%L, %L)', pg_temp.name('moving', 'photo.png'), 'theirs'), '42501', null,
  'nor replace the proof');
select is_empty($$ update storage.objects set version = 'theirs' returning 1 $$, 'nor update it');
select is_empty($$ select from storage.objects $$, 'nor read it');
select tests.act_as_anon();
select throws_ok(format('select tests.put_proof(%L)', pg_temp.name('moving', 'photo.webp')), '42501', null, 'nor anon');
select is_empty($$ select from storage.objects $$, 'anon reads nothing');

select tests.act_as_member(a, 'owner') from t;
select is((select count(*)::integer from storage.objects where bucket_id = 'delivery-proofs'), 2, 'the owner reads both');
select tests.act_as_member(a, 'legacy_admin') from t;
select is((select count(*)::integer from storage.objects where bucket_id = 'delivery-proofs'), 2, 'so does a legacy admin');
select tests.act_as_member(b, 'owner') from t;
select is_empty($$ select from storage.objects $$, 'another company''s owner reads nothing');

-- Completion under the company's requirements.
select tests.act_as_member(a, 'admin') from t;
select to_jsonb(public.set_proof_requirements(true, true, true));
select tests.act_as_member(a, 'driver') from t;
select throws_ok(format('select to_jsonb(public.complete_delivery(%L))', (select id from ids where name = 'moving')), 'PT422',
  'proof of delivery required: note missing', 'a required note is named when missing');
select is(to_jsonb(public.complete_delivery((select id from ids where name = 'moving'), 'At the door')) -> 'proof',
  jsonb_build_object('photo_path', pg_temp.name('moving', 'photo.png'), 'signature_path', pg_temp.name('moving', 'signature.png'),
    'note', 'At the door'), 'with it, the delivery completes carrying its proof');
select throws_ok(format('select tests.put_proof(%L)', pg_temp.name('moving', 'photo.webp')), '42501', null,
  'after completion nothing more is written');
select throws_ok(format('select tests.upsert_proof(%L, %L)', pg_temp.name('moving', 'photo.png'), 'late'), '42501', null,
  'nor replaced');
select is_empty($$ select from storage.objects $$, 'and the driver no longer reads it back');

select * from finish();
rollback;
