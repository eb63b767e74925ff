// The schema's checks, tried on drifted copies (`npm run test:db` runs this
// file with `deno test`): a copy of supabase/schemas/ with one thing changed is
// built beside a database of the migrations, and the drift check must name the
// change, be it one pg-delta sees (a function body, a comment, a policy) or one
// the catalog facts add (a role membership, a row, the order of a type's
// attributes or a table's columns). And the once-only check
// (local/schema-files.ts) on small files: a function written twice is named.
// And docs/architecture.md names the file of every function.
import assert from "node:assert/strict";
import postgres from "postgres";
import {
  applySchemas,
  buildPair,
  type Cluster,
  describeDrift,
  type Drift,
  drift,
  isEmpty,
  migrationFor,
  startCluster,
} from "./schema-diff.ts";
import { describeProblem, onceOnly, relative, schemaFiles, statements } from "./schema-files.ts";

const root = new URL("../", import.meta.url);
const work = new URL(`.test-stack/schema-drift-${Deno.pid}/`, root).pathname;

/**
 * A copy of the schema files with `from` replaced by `to` in the named one (and each further pair of `more`);
 * fails if a text to change is not there.
 */
async function driftedCopy(name: string, from: string, to: string, ...more: [string, string][]): Promise<URL[]> {
  const dir = await Deno.makeTempDir({ dir: await ensure(work), prefix: "schemas-" });
  const copies: URL[] = [];
  let changed = false;
  for (const file of await schemaFiles()) {
    let text = await Deno.readTextFile(file);
    const base = file.pathname.split("/").pop()!;
    if (base === name) {
      for (const [before, after] of [[from, to], ...more]) {
        assert.ok(text.includes(before), `${name} no longer holds ${JSON.stringify(before)}: update this test`);
        text = text.replace(before, after);
      }
      changed = true;
    }
    const copy = new URL(`file://${dir}/${base}`);
    await Deno.writeTextFile(copy, text);
    copies.push(copy);
  }
  assert.ok(changed, `no schema file named ${name}`);
  return copies;
}

async function ensure(dir: string): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

/**
 * The database `postgres` of `cluster` made again from `files`, compared with the migrations' database. (A
 * database of another name would differ in its cron jobs, which record their database's name.)
 */
async function driftOf(migrationsUrl: string, cluster: Cluster, files: URL[]): Promise<Drift> {
  const admin = postgres(cluster.url.replace(/\/postgres$/, "/template1"), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe("drop database if exists postgres with (force)");
    await admin.unsafe("create database postgres");
  } finally {
    await admin.end();
  }
  await applySchemas(cluster.url, files);
  return await drift(migrationsUrl, cluster.url);
}

const named = (d: Drift, pattern: RegExp) => describeDrift(d).filter((line) => pattern.test(line));

Deno.test("the drift check", async (t) => {
  const [pair, copies] = await Promise.all([buildPair(`${work}pair`), startCluster(`${work}copies`)]);
  try {
    await t.step("finds nothing between the migrations and the schema files they were generated from", async () => {
      const found = await drift(pair.migrations.url, pair.schemas.url);
      assert.deepEqual(describeDrift(found), []);
    });

    let bodyChanged: Drift | undefined;
    await t.step("names a function whose body changed", async () => {
      const copy = await driftedCopy(
        "07_locations.sql",
        "on conflict (driver_id) do update",
        "on conflict (driver_id) do update -- drifted\n   ",
      );
      bodyChanged = await driftOf(pair.migrations.url, copies, copy);
      assert.ok(!isEmpty(bodyChanged));
      assert.equal(named(bodyChanged, /^pg-delta: CREATE OR REPLACE FUNCTION public\.update_my_location\(/).length, 1);
      assert.ok(bodyChanged.statements.join("\n").includes("-- drifted"));
    });

    await t.step("names a comment that changed", async () => {
      const copy = await driftedCopy(
        "04_wallets.sql",
        "comment on table public.wallet_entries is 'The driver wallet ledger; rows are only ever added.';",
        "comment on table public.wallet_entries is 'The ledger.';",
      );
      const found = await driftOf(pair.migrations.url, copies, copy);
      assert.deepEqual(describeDrift(found), [
        `pg-delta: COMMENT ON TABLE "public"."wallet_entries" IS 'The ledger.';`,
      ]);
    });

    await t.step("names a policy that is gone", async () => {
      const copy = await driftedCopy(
        "02_company.sql",
        `create policy webhook_events_select_managers on public.webhook_events
  for select to authenticated
  using (
    company_id = (select private.company_of(private.company_managers()))
  );`,
        "",
      );
      const found = await driftOf(pair.migrations.url, copies, copy);
      assert.deepEqual(describeDrift(found), [
        `pg-delta: DROP POLICY "webhook_events_select_managers" ON "public"."webhook_events";`,
      ]);
    });

    await t.step(
      "names rows a schema file writes, which pg-delta does not see, and refuses to generate them",
      async () => {
        const copy = await driftedCopy(
          "09_proof.sql",
          "-- Section: who may write and read",
          "insert into storage.buckets (id, name, public) values ('stray', 'stray', true);\n\n-- Section: who may write and read",
        );
        const found = await driftOf(pair.migrations.url, copies, copy);
        assert.deepEqual(found.statements, []);
        assert.deepEqual(describeDrift(found), [
          `rows, only in the schemas: storage.buckets has the row {"id":"stray","name":"stray","public":true,"file_size_limit":null,"allowed_mime_types":null}`,
        ]);
        assert.match(migrationFor(found).refused.join("\n"), /rows are data.*supabase\/config\.toml/);
      },
    );

    await t.step(
      "names a type's attributes and a table's columns in another order, which pg-delta does not see, and refuses to generate them",
      async () => {
        // private.delivery_row builds public.delivery by position: swapped attributes would swap the values.
        const copy = await driftedCopy(
          "05_deliveries.sql",
          "  tracking_token text,\n  tracking_url text,\n",
          "  tracking_url text,\n  tracking_token text,\n",
          [
            "  eta_from_lat double precision,\n  eta_from_lng double precision,\n",
            "  eta_from_lng double precision,\n  eta_from_lat double precision,\n",
          ],
        );
        const found = await driftOf(pair.migrations.url, copies, copy);
        assert.deepEqual(found.statements, []);
        const orders = describeDrift(found).sort();
        assert.equal(orders.length, 4);
        assert.match(
          orders[0],
          /^attribute order, only in the migrations: table public\.deliveries orders its attributes .*, eta_from_lat, eta_from_lng, /,
        );
        assert.match(
          orders[1],
          /^attribute order, only in the migrations: type public\.delivery orders its attributes .*, tracking_token, tracking_url, /,
        );
        assert.match(
          orders[2],
          /^attribute order, only in the schemas: table public\.deliveries orders its attributes .*, eta_from_lng, eta_from_lat, /,
        );
        assert.match(
          orders[3],
          /^attribute order, only in the schemas: type public\.delivery orders its attributes .*, tracking_url, tracking_token, /,
        );
        assert.match(migrationFor(found).refused.join("\n"), /no migration moves a column or a type's attribute/);
      },
    );

    await t.step("names a role membership that changed, which pg-delta does not see, and generates it", async () => {
      // Memberships belong to the cluster, not to a database: this copy gets a cluster of its own.
      const copy = await driftedCopy(
        "00_tenancy.sql",
        "    execute format('grant %I to authenticator', r);\n",
        "",
      );
      const cluster = await startCluster(`${work}memberships`);
      try {
        await applySchemas(cluster.url, copy);
        const found = await drift(pair.migrations.url, cluster.url);
        assert.deepEqual(found.statements, []);
        assert.deepEqual(describeDrift(found).sort(), [
          "role membership, only in the migrations: role authenticator is a member of company_admin with inherit false",
          "role membership, only in the migrations: role authenticator is a member of company_owner with inherit false",
          "role membership, only in the migrations: role authenticator is a member of driver with inherit false",
          "role membership, only in the migrations: role authenticator is a member of integration with inherit false",
        ]);
        const { sql, refused } = migrationFor(found);
        assert.deepEqual(refused, []);
        assert.match(sql, /revoke company_admin from authenticator;/);
      } finally {
        await cluster.stop();
      }
    });

    await t.step("a migration generated for a drifted function body brings the migrations there", async () => {
      assert.ok(bodyChanged);
      const { sql, refused } = migrationFor(bodyChanged);
      assert.deepEqual(refused, []);
      const migrations = postgres(pair.migrations.url, { max: 1, onnotice: () => {} });
      try {
        await migrations.begin((tx) => tx.unsafe(sql));
      } finally {
        await migrations.end();
      }
      const copy = await driftedCopy(
        "07_locations.sql",
        "on conflict (driver_id) do update",
        "on conflict (driver_id) do update -- drifted\n   ",
      );
      const after = await driftOf(pair.migrations.url, copies, copy);
      assert.deepEqual(describeDrift(after), []);
    });
  } finally {
    await Promise.all([pair.stop(), copies.stop()]);
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
});

const money = `-- Money.
create function public.apply_transfer_event(company_id uuid, event text) returns jsonb
language sql as $$ select '{}'::jsonb $$;
create function private.try_uuid(value text) returns uuid language sql as $$ select null::uuid $$;
`;

Deno.test("the once-only check", async (t) => {
  await t.step("names both files and the function when two files create the same function", () => {
    const problems = onceOnly([
      { file: "05_money.sql", sql: money },
      {
        file: "06_fix.sql",
        sql: `-- A second body.
CREATE OR REPLACE FUNCTION "public"."Apply_Transfer_Event"(company_id uuid, event text) returns jsonb
language sql as $$ select '{"fixed": true}'::jsonb $$;
`,
      },
    ]);
    assert.deepEqual(problems.map(describeProblem), [
      "function public.apply_transfer_event(uuid,text) is written in 05_money.sql:2 and again in 06_fix.sql:2",
    ]);
  });

  await t.step("counts an overload created in another file as the function written twice", () => {
    const problems = onceOnly([
      { file: "05_money.sql", sql: money },
      {
        file: "06_fix.sql",
        sql: `create function private.try_uuid(value text, fallback uuid) returns uuid
language sql as $$ select fallback $$;
`,
      },
    ]);
    assert.deepEqual(problems.map(describeProblem), [
      "function private.try_uuid is written in 05_money.sql:4 and again in 06_fix.sql:1",
    ]);
  });

  await t.step("names one overload created twice in one file, and allows overloads", () => {
    const overloads = `${money}
create function private.try_uuid(value text, fallback uuid) returns uuid language sql as $$ select fallback $$;
`;
    assert.deepEqual(onceOnly([{ file: "05_money.sql", sql: overloads }]), []);
    const twice = `${money}
create or replace function private.try_uuid(input text) returns uuid language sql as $$ select null::uuid $$;
`;
    assert.deepEqual(onceOnly([{ file: "05_money.sql", sql: twice }]).map(describeProblem), [
      "function private.try_uuid(text) is written twice in 05_money.sql (lines 4 and 6)",
    ]);
  });

  await t.step("names an object commented twice", () => {
    const sql = `${money}comment on function private.try_uuid(text) is 'One.';
comment on function private.try_uuid( text ) is 'Two.';
`;
    assert.deepEqual(onceOnly([{ file: "05_money.sql", sql }]).map(describeProblem), [
      "comment on function private.try_uuid(text) is written twice in 05_money.sql (lines 5 and 6)",
    ]);
  });

  await t.step("ignores what strings and comments say", () => {
    const sql = `-- create function public.apply_transfer_event(company_id uuid, event text)
create function public.update_my_location(lat double precision, lng double precision) returns void
language plpgsql as $$
begin
  raise notice 'create function public.apply_transfer_event()';
end;
$$;
`;
    assert.deepEqual(onceOnly([{ file: "05_money.sql", sql: money }, { file: "07_locations.sql", sql }]), []);
  });

  await t.step("passes the schema files", async () => {
    const files = await Promise.all(
      (await schemaFiles()).map(async (url) => ({ file: relative(url), sql: await Deno.readTextFile(url) })),
    );
    assert.deepEqual(onceOnly(files).map(describeProblem), []);
  });
});

Deno.test("docs/architecture.md says in which file each function lives", async () => {
  const doc = await Deno.readTextFile(new URL("docs/architecture.md", root));
  const start = doc.indexOf("### Where each function lives");
  assert.ok(start >= 0, "docs/architecture.md has no section 'Where each function lives'");
  const section = doc.slice(start, doc.indexOf("\n### ", start + 1));
  const names = (cell: string) => [...cell.matchAll(/`([a-z_][a-z0-9_]*)`/g)].map((m) => m[1]).sort();
  const documented: Record<string, { public: string[]; private: string[] }> = {};
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    const file = /^`(\d\d_[a-z_]+\.sql)`$/.exec(cells[1] ?? "")?.[1];
    if (file) documented[file] = { public: names(cells[2]), private: names(cells[3]) };
  }
  const actual: Record<string, { public: string[]; private: string[] }> = {};
  for (const url of await schemaFiles()) {
    const file = url.pathname.split("/").pop()!;
    const functions = statements(file, await Deno.readTextFile(url)).map((s) => s.object)
      .filter((object) => object.startsWith("function "));
    const of = (schema: string) =>
      functions.filter((f) => f.startsWith(`function ${schema}.`))
        .map((f) => f.slice(`function ${schema}.`.length, f.indexOf("("))).sort();
    actual[file] = { public: of("public"), private: of("private") };
  }
  assert.deepEqual(documented, actual);
});

Deno.test("docs/architecture.md's rules-to-tests table names test files that exist", async () => {
  const doc = await Deno.readTextFile(new URL("docs/architecture.md", root));
  const start = doc.indexOf("### Each rule and its tests");
  assert.ok(start >= 0, "docs/architecture.md has no section 'Each rule and its tests'");
  const end = doc.slice(start + 1).search(/\n##+ /);
  const section = end < 0 ? doc.slice(start) : doc.slice(start, start + 1 + end);
  const where = ["supabase/tests/database/%.test.sql", "tests/%.test.ts", "tests/e2e/%.spec.ts"];
  const named: string[] = [];
  for (const line of section.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| Rule"))) {
    const cells = line.split("|").slice(2, 5);
    cells.forEach((cell, i) => {
      for (const [, name] of cell.matchAll(/`([^`]+)`/g)) named.push(where[i].replace("%", name));
    });
  }
  assert.ok(named.length > 50, `only ${named.length} test files named`);
  const missing = [];
  for (const path of named) {
    try {
      await Deno.stat(new URL(path, root));
    } catch {
      missing.push(path);
    }
  }
  assert.deepEqual(missing, []);
});
