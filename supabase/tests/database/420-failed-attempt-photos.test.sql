-- A failed attempt's photo in the delivery-proofs bucket: `{company_id}/{delivery_id}/failed-{attempt}.{ext}`, under
-- the rules of proof of delivery (09_proof.sql). The driver of the delivery in progress uploads one for the attempt
-- under way, may replace it and read it back until the delivery leaves in_progress, never writes another attempt's;
-- the company's managers read every attempt's; nobody else. `fail` records the attempt's photo on the delivery
-- (failure_photo_path), an attempt without one records none, and each attempt's stays as it was.
begin;
select plan(39);

create temp table t as select tests.create_tenant('fap-a') as a, tests.create_tenant('fap-b') as b;
grant select on t to public;
create temp table ids as select (tests.delivery_in(a, 'in_progress', 'invoice')).id as id, (a ->> 'company_id')::uuid as company
  from t;
grant select on ids to public;

create function pg_temp.name(file text) returns text language sql as $$ select company || '/' || id || '/' || file from ids $$;
create function pg_temp.delivery() returns uuid language sql as $$ select id from ids $$;
-- Whether the delivery's driver may upload `file` declared as `media_type`; rolled back either way.
create function pg_temp.may_put(file text, media_type text) returns boolean
language plpgsql as $$
declare
  allowed boolean;
begin
  perform tests.act_as_member(a, 'driver') from t;
  allowed := tests.may(format('select tests.put_proof(%L, %L)', pg_temp.name(may_put.file), may_put.media_type));
  perform tests.reset_role();
  return allowed;
end;
$$;
create function pg_temp.seen() returns text[] language sql as $$
  select coalesce(array_agg(split_part(name, '/', 3) order by name), '{}') from storage.objects where bucket_id = 'delivery-proofs'
$$;
grant execute on all functions in schema pg_temp to public;

-- Names: the attempt under way, its number as the delivery counts it, an image named for its type.
select is(pg_temp.may_put('failed-1.png', 'image/png'), true, 'attempt 1''s photo as a PNG: allowed');
select is(pg_temp.may_put('failed-1.jpeg', 'image/jpeg'), true, 'or as a JPEG named .jpeg');
select is(pg_temp.may_put('failed-2.png', 'image/png'), false, 'a later attempt''s: refused');
select is(pg_temp.may_put('failed-0.png', 'image/png'), false, 'attempt 0: refused');
select is(pg_temp.may_put('failed-01.png', 'image/png'), false, 'attempt 1 spelled 01: refused');
select is(pg_temp.may_put('failed-.png', 'image/png'), false, 'no attempt number: refused');
select is(pg_temp.may_put('failed.png', 'image/png'), false, 'failed without a number: refused');
select is(pg_temp.may_put('failed-1x.png', 'image/png'), false, 'a number with more after it: refused');
select is(pg_temp.may_put('Failed-1.png', 'image/png'), false, 'in another case: refused');
select is(pg_temp.may_put('failed-1.PNG', 'image/png'), false, 'an upper-case extension: refused');
select is(pg_temp.may_put('failed-1.png', 'image/jpeg'), false, 'a JPEG named .png: refused');
select is(pg_temp.may_put('failed-1.html', 'text/html'), false, 'an HTML file: refused');
select is(pg_temp.may_put('failed-1.png', null), false, 'no media type declared: refused');
select is(pg_temp.may_put('failed-1/photo.png', 'image/png'), false, 'a folder under it: refused');

-- The driver uploads it, replaces it, reads it back; one per attempt.
select tests.act_as_member(a, 'driver') from t;
select lives_ok(format('select tests.put_proof(%L)', pg_temp.name('failed-1.png')), 'the driver uploads the attempt''s photo');
select throws_ok(format('select tests.put_proof(%L)', pg_temp.name('failed-1.jpg')), '42501', null, 'but only one per attempt');
select lives_ok(format('select tests.upsert_proof(%L, %L)', pg_temp.name('failed-1.png'), 'retaken'),
  'and replaces it with an upsert');
select is(pg_temp.seen(), array['failed-1.png'], 'the driver reads back their own photo of the attempt in progress');
select tests.reset_role();
select is(pg_temp.may_put('photo.png', 'image/png'), true, 'beside it, the proof of delivery is still the driver''s to upload');

-- Nobody else writes or reads it; the company's managers read it.
select tests.act_as_member(a, 'driver2') from t;
select throws_ok(format('select tests.upsert_proof(%L, %L)', pg_temp.name('failed-1.png'), 'theirs'), '42501', null,
  'another driver may not replace it');
select is_empty($$ select from storage.objects where bucket_id = 'delivery-proofs' $$, 'nor read it');
select tests.act_as_member(b, 'owner') from t;
select is_empty($$ select from storage.objects where bucket_id = 'delivery-proofs' $$, 'nor another company''s owner');
select tests.act_as_member(b, 'driver') from t;
select throws_ok(format('select tests.put_proof(%L)', pg_temp.name('failed-1.webp')), '42501', null,
  'nor another company''s driver write one');
select tests.act_as_anon();
select is_empty($$ select from storage.objects where bucket_id = 'delivery-proofs' $$, 'nor anon read it');
select tests.act_as_member(a, 'owner') from t;
select is(pg_temp.seen(), array['failed-1.png'], 'the owner reads it');
select tests.act_as_member(a, 'legacy_admin') from t;
select is(pg_temp.seen(), array['failed-1.png'], 'so does a legacy admin');

-- fail records it; afterwards nothing more is written or read back by the driver.
select tests.act_as_member(a, 'driver') from t;
select is((public.fail_delivery(pg_temp.delivery(), 'recipient_absent', 'Portão fechado')).failure_photo_path,
  pg_temp.name('failed-1.png'), 'the failure carries the attempt''s photo');
select throws_ok(format('select tests.upsert_proof(%L, %L)', pg_temp.name('failed-1.png'), 'late'), '42501', null,
  'once failed, the photo is not replaced');
select is_empty($$ select from storage.objects where bucket_id = 'delivery-proofs' $$, 'nor read back by the driver');

-- A second attempt, by the same driver: its own photo, never the first's.
select tests.act_as_member(a, 'owner') from t;
select is((public.reopen_delivery(pg_temp.delivery())).failure_photo_path, pg_temp.name('failed-1.png'),
  'reopened, the last failure''s photo stays readable');
select tests.act_as_member(a, 'driver') from t;
select public.accept_delivery(pg_temp.delivery());
select public.start_delivery(pg_temp.delivery());
select throws_ok(format('select tests.upsert_proof(%L, %L)', pg_temp.name('failed-1.png'), 'overwritten'), '42501', null,
  'the first attempt''s photo is not replaced on the second');
select lives_ok(format('select tests.put_proof(%L)', pg_temp.name('failed-2.jpg')), 'the second attempt has its own');
select is(pg_temp.seen(), array['failed-2.jpg'], 'and the driver reads back only the attempt under way''s');
select is((public.fail_delivery(pg_temp.delivery(), 'address_not_found')).failure_photo_path, pg_temp.name('failed-2.jpg'),
  'the second failure carries the second photo');
select tests.act_as_member(a, 'admin') from t;
select is(pg_temp.seen(), array['failed-1.png', 'failed-2.jpg'], 'the managers read both attempts'' photos');
select is((select version from storage.objects where name = pg_temp.name('failed-1.png')), 'retaken',
  'the first as it was left');

-- A third attempt, by another driver, fails without a photo: none recorded, not an earlier attempt's.
select public.reopen_delivery(pg_temp.delivery());
select tests.act_as_member(a, 'driver2') from t;
select public.accept_delivery(pg_temp.delivery());
select public.start_delivery(pg_temp.delivery());
select is((public.fail_delivery(pg_temp.delivery(), 'refused')).failure_photo_path, null,
  'a failure without a photo records none');

-- A fourth attempt completes: the failed attempts' photos are no proof of delivery.
select tests.act_as_member(a, 'owner') from t;
select public.reopen_delivery(pg_temp.delivery());
select tests.act_as_member(a, 'driver2') from t;
select public.accept_delivery(pg_temp.delivery());
select public.start_delivery(pg_temp.delivery());
select is((public.complete_delivery(pg_temp.delivery())).proof,
  row(null, null, null)::public.delivery_proof, 'completion attaches no failed attempt''s photo as proof');
select tests.reset_role();
select is((select failure_photo_path from public.deliveries where id = pg_temp.delivery()), null,
  'the last failure''s photo (none) stays on the completed delivery');

select * from finish();
rollback;
