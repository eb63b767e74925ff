-- Proof object names and media types (the attacker's finding): "once per kind" holds whatever the spelling of the
-- ids, because only their canonical text is a proof name (Postgres reads `cccf5b94-e8534509-aa1e8b29-a44c-89e8` as a
-- uuid too); the extension is an image's, and the media type the upload declares (Storage checks the insert with the
-- object's `metadata.mimetype`) is the one the extension names.
begin;
select plan(14);

create temp table t as select tests.create_tenant('pod-names') as a;
grant select on t to public;
create temp table ids as select (tests.delivery_in(a, 'in_progress', 'invoice')).id as id, (a ->> 'company_id')::uuid as company
  from t;
grant select on ids to public;

-- Whether the delivery's driver may upload `file` under the folder spelled `folder` with `media_type`; rolled back.
create function pg_temp.may_put(folder text, file text, media_type text) returns boolean
language plpgsql as $$
declare
  allowed boolean;
begin
  perform tests.act_as_member(a, 'driver') from t;
  allowed := tests.may(format('select tests.put_proof(%L, %L)', may_put.folder || '/' || may_put.file, may_put.media_type));
  perform tests.reset_role();
  return allowed;
end;
$$;
create function pg_temp.canonical() returns text language sql as $$ select company || '/' || id from ids $$;
-- The delivery's id with its hyphens moved: `xxxxxxxx-xxxxxxxx-xxxxxxxx-xxxx-xxxx`, the same uuid to Postgres.
create function pg_temp.respelled() returns text language sql as $$
  select company || '/' || substr(h, 1, 8) || '-' || substr(h, 9, 8) || '-' || substr(h, 17, 8) || '-' || substr(h, 25, 4)
    || '-' || substr(h, 29, 4)
  from ids, lateral (select replace(id::text, '-', '') as h) x
$$;
grant execute on all functions in schema pg_temp to public;

select is(pg_temp.respelled()::text <> pg_temp.canonical(), true, 'the respelled folder is other text');
select is(split_part(pg_temp.respelled(), '/', 2)::uuid, (select id from ids), '... for the same uuid');

select is(pg_temp.may_put(pg_temp.canonical(), 'photo.png', 'image/png'), true, 'a PNG photo named .png: allowed');
select is(pg_temp.may_put(pg_temp.respelled(), 'photo.png', 'image/png'), false, 'the same under a respelled id: refused');
select is(pg_temp.may_put(upper(pg_temp.canonical()), 'photo.png', 'image/png'), false, 'under upper-case ids: refused');
select is(pg_temp.may_put(pg_temp.canonical(), 'photo', 'image/png'), false, 'without an extension: refused');
select is(pg_temp.may_put(pg_temp.canonical(), 'photo.html', 'text/html'), false, 'an HTML file: refused');
select is(pg_temp.may_put(pg_temp.canonical(), 'photo.png', 'text/html'), false, 'HTML named .png: refused');
select is(pg_temp.may_put(pg_temp.canonical(), 'photo.jpg', 'image/png'), false, 'a PNG named .jpg: refused');
select is(pg_temp.may_put(pg_temp.canonical(), 'signature.webp', null), false, 'no media type declared: refused');
select is(pg_temp.may_put(pg_temp.canonical(), 'photo.jpeg', 'image/jpeg'), true, 'a JPEG named .jpeg: allowed');

-- Once the photo is there, no spelling makes a second one.
select tests.act_as_member(a, 'driver') from t;
insert into storage.objects (bucket_id, name, metadata)
select 'delivery-proofs', pg_temp.canonical() || '/photo.png', '{"mimetype": "image/png"}' from t;
select tests.reset_role();
select is(pg_temp.may_put(pg_temp.canonical(), 'photo.webp', 'image/webp'), false, 'a second photo: refused');
select is(pg_temp.may_put(pg_temp.respelled(), 'photo.webp', 'image/webp'), false,
  'a second photo under a respelled id: refused');
select is(pg_temp.may_put(pg_temp.canonical(), 'signature.png', 'image/png'), true, 'the signature: still allowed');

select * from finish();
rollback;
