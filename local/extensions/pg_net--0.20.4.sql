-- Local stand-in for pg_net 0.20.4 (supabase/pg_net, sql/pg_net.sql): the same
-- tables, types and functions, with the C functions written in SQL. As with
-- the real extension, net.http_get/http_post/http_delete only queue a request
-- and return its id; the local stack's worker (local/net-worker.ts), woken by
-- the NOTIFY of net.wake() (and polling each second), deletes the queue rows it
-- takes, performs the requests and writes net._http_response. Responses older
-- than 6 hours are deleted (pg_net.ttl's default).
\echo Use "CREATE EXTENSION pg_net" to load this file. \quit

create schema if not exists net;

create domain net.http_method as text
check (
  value ilike 'get'
  or value ilike 'post'
  or value ilike 'delete'
);

-- Pending requests, consumed by the worker.
create unlogged table net.http_request_queue (
  id bigserial,
  method net.http_method not null,
  url text not null,
  headers jsonb,
  body bytea,
  timeout_milliseconds int not null
);

-- Responses by request id.
create unlogged table net._http_response (
  id bigint,
  status_code integer,
  content_type text,
  headers jsonb,
  content text,
  timed_out bool,
  error_msg text,
  created timestamptz not null default now()
);
create index on net._http_response (created);

create function net.check_worker_is_up() returns void as $$
begin
  if not exists (select pid from pg_stat_activity where application_name = 'pg_net worker') then
    raise exception using
      message = 'the pg_net background worker is not up'
    , detail  = 'the pg_net background worker is down due to an internal error and cannot process requests'
    , hint    = 'make sure that you didn''t modify any of pg_net internal tables';
  end if;
end
$$ language plpgsql;
comment on function net.check_worker_is_up() is 'raises an exception if the pg_net background worker is not up, otherwise it doesn''t return anything';

create function net._await_response(request_id bigint)
returns bool
language plpgsql
as $$
declare
  rec net._http_response;
begin
  while rec is null loop
    select * into rec from net._http_response where id = request_id;
    if rec is null then
      perform pg_sleep(0.05);
    end if;
  end loop;
  return true;
end;
$$;

-- curl_easy_escape: every byte but the unreserved characters percent-encoded.
create function net._urlencode_string(string varchar)
returns text
language sql immutable strict
as $$
  select coalesce(string_agg(
    case when c between 48 and 57 or c between 65 and 90 or c between 97 and 122 or c in (45, 46, 95, 126)
         then chr(c) else '%' || upper(lpad(to_hex(c), 2, '0')) end, '' order by i), '')
  from (select i, get_byte(b, i) as c
          from (select convert_to(string, 'UTF8') as b) as bytes,
               generate_series(0, length(b) - 1) as i) as chars;
$$;

-- The URL with the encoded parameters appended to its query (before any fragment).
create function net._encode_url_with_params_array(url text, params_array text[])
returns text
language plpgsql immutable strict
as $$
declare
  base text := split_part(url, '#', 1);
  fragment text := substr(url, length(base) + 1);
begin
  if url !~* '^[a-z][a-z0-9+.-]*://[^/?#]+' then
    raise exception 'URL using bad/illegal format or missing URL: %', url;
  end if;
  if coalesce(array_length(params_array, 1), 0) = 0 then
    return url;
  end if;
  return base || case when base like '%?%' then '&' else '?' end || array_to_string(params_array, '&') || fragment;
end
$$;

create function net.worker_restart()
returns bool
language sql
as $$
  select pg_notify('pg_net_local_wake', 'restart');
  select true;
$$;

create function net.wait_until_running()
returns void
language plpgsql
as $$
begin
  while not exists (select from pg_stat_activity where application_name = 'pg_net worker') loop
    perform pg_sleep(0.05);
  end loop;
end
$$;
comment on function net.wait_until_running() is 'waits until the worker is running';

create function net.wake()
returns void
language sql
as $$
  select pg_notify('pg_net_local_wake', '');
$$;

create function net.http_get(
  url text,
  params jsonb default '{}'::jsonb,
  headers jsonb default '{}'::jsonb,
  timeout_milliseconds int default 5000
)
returns bigint
language plpgsql
as $$
declare
  request_id bigint;
  params_array text[];
begin
  select coalesce(array_agg(net._urlencode_string(key) || '=' || net._urlencode_string(value)), '{}')
  into params_array
  from jsonb_each_text(params);

  insert into net.http_request_queue(method, url, headers, timeout_milliseconds)
  values ('GET', net._encode_url_with_params_array(url, params_array), headers, timeout_milliseconds)
  returning id into request_id;

  perform net.wake();
  return request_id;
end
$$;

create function net.http_post(
  url text,
  body jsonb default '{}'::jsonb,
  params jsonb default '{}'::jsonb,
  headers jsonb default '{"Content-Type": "application/json"}'::jsonb,
  timeout_milliseconds int default 5000
)
returns bigint
language plpgsql
as $$
declare
  request_id bigint;
  params_array text[];
  content_type text;
begin
  select header_value into content_type
  from jsonb_each_text(coalesce(headers, '{}'::jsonb)) r(header_name, header_value)
  where lower(header_name) = 'content-type'
  limit 1;

  -- Headers without a content type get application/json.
  if content_type is null then
    select headers || '{"Content-Type": "application/json"}'::jsonb into headers;
  end if;

  if content_type <> 'application/json' then
    raise exception 'Content-Type header must be "application/json"';
  end if;

  select coalesce(array_agg(net._urlencode_string(key) || '=' || net._urlencode_string(value)), '{}')
  into params_array
  from jsonb_each_text(params);

  insert into net.http_request_queue(method, url, headers, body, timeout_milliseconds)
  values ('POST', net._encode_url_with_params_array(url, params_array), headers,
          convert_to(body::text, 'UTF8'), timeout_milliseconds)
  returning id into request_id;

  perform net.wake();
  return request_id;
end
$$;

create function net.http_delete(
  url text,
  params jsonb default '{}'::jsonb,
  headers jsonb default '{}'::jsonb,
  timeout_milliseconds int default 5000,
  body jsonb default null
)
returns bigint
language plpgsql
as $$
declare
  request_id bigint;
  params_array text[];
begin
  select coalesce(array_agg(net._urlencode_string(key) || '=' || net._urlencode_string(value)), '{}')
  into params_array
  from jsonb_each_text(params);

  insert into net.http_request_queue(method, url, headers, body, timeout_milliseconds)
  values ('DELETE', net._encode_url_with_params_array(url, params_array), headers,
          convert_to(body::text, 'UTF8'), timeout_milliseconds)
  returning id into request_id;

  perform net.wake();
  return request_id;
end
$$;

create type net.request_status as enum ('PENDING', 'SUCCESS', 'ERROR');

create type net.http_response as (
  status_code integer,
  headers jsonb,
  body text
);

create type net.http_response_result as (
  status net.request_status,
  message text,
  response net.http_response
);

create function net._http_collect_response(request_id bigint, async bool default true)
returns net.http_response_result
language plpgsql
as $$
declare
  rec net._http_response;
begin
  if not async then
    perform net._await_response(request_id);
  end if;

  select * into rec from net._http_response where id = request_id;

  if rec is null or rec.error_msg is not null then
    return ('ERROR', coalesce(rec.error_msg, 'request matching request_id not found'), null)::net.http_response_result;
  end if;

  return ('SUCCESS', 'ok', (rec.status_code, rec.headers, rec.content)::net.http_response)::net.http_response_result;
end;
$$;

create function net.http_collect_response(request_id bigint, async bool default true)
returns net.http_response_result
language plpgsql
as $$
begin
  raise notice 'The net.http_collect_response function is deprecated.';
  return net._http_collect_response(request_id, async);
end;
$$;

grant usage on schema net to public;
grant all on all sequences in schema net to public;
grant all on all tables in schema net to public;
