-- Proof of delivery: the policies on storage.objects for the delivery-proofs
-- bucket (the driver of the delivery in progress writes each proof once; the
-- company's managers read; nobody else), and completion with the company's
-- requirements.
begin;
select plan(18);

create temp table t as select tests.create_tenant('pod-a') as a, tests.create_tenant('pod-b') as b;
grant select on t to public;
create temp table ids (name text primary key, id uuid);
grant select on ids to public;
insert into ids select 'moving', (tests.delivery_in(a, 'in_progress', 'invoice')).id from t;
insert into ids select 'done', (tests.delivery_in(a, 'completed', 'invoice')).id from t;
create function pg_temp.name(delivery text, file text) returns text
language sql as $$ select (a ->> 'company_id') || '/' || (select id from ids where ids.name = delivery) || '/' || file from t $$;
create function pg_temp.put(name text) returns void
language sql as $$
  -- With the media type its extension names, as an upload of the web app declares it.
  insert into storage.objects (bucket_id, name, metadata)
  values ('delivery-proofs', put.name, jsonb_build_object('mimetype', private.proof_media_type(put.name)))
$$;
grant execute on all functions in schema pg_temp to public;

select is((select array[public::text, file_size_limit::text] || allowed_mime_types from storage.buckets where id = 'delivery-proofs'),
  array['false', '5242880', 'image/jpeg', 'image/png', 'image/webp'], 'a private bucket of images up to 5 MiB');

select tests.act_as_member(a, 'driver') from t;
select lives_ok(format('select pg_temp.put(%L)', pg_temp.name('moving', 'photo.png')), 'the delivery''s driver uploads its photo');
select throws_ok(format('select pg_temp.put(%L)', pg_temp.name('moving', 'photo.jpg')), '42501', null, 'but only one photo');
select lives_ok(format('select pg_temp.put(%L)', pg_temp.name('moving', 'signature.png')), 'and the signature');
select throws_ok(format('select pg_temp.put(%L)', pg_temp.name('moving', 'other.png')), '42501', null, 'nothing else');
select throws_ok(format('select pg_temp.put(%L)', pg_temp.name('done', 'photo.png')), '42501', null, 'nor for a completed delivery');
select is_empty($$ update storage.objects set name = name || 'x' returning 1 $$, 'no update');
select is_empty($$ delete from storage.objects returning 1 $$, 'no delete');
select is_empty($$ select from storage.objects where bucket_id = 'delivery-proofs' $$, 'the driver reads nothing back');
select tests.act_as_member(a, 'driver2') from t;
select throws_ok(format('select pg_temp.put(%L)', pg_temp.name('moving', 'photo.webp')), '42501', null, 'another driver may not write');
select tests.act_as_anon();
select throws_ok(format('select pg_temp.put(%L)', pg_temp.name('moving', 'photo.webp')), '42501', null, 'nor anon');
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
select throws_ok(format('select pg_temp.put(%L)', pg_temp.name('moving', 'photo.webp')), '42501', null,
  'after completion nothing more is written');

select * from finish();
rollback;
