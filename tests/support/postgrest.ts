// The local PostgREST's in-database settings, as a project sets them: on the authenticator role, then
// `NOTIFY pgrst, 'reload config'`.
import { db } from "./api.ts";
import { eventually } from "./wait.ts";

/** Sets (or, with null, resets) `pgrst.*` settings on authenticator and waits until `effective` passes. */
export async function configurePostgrest(settings: Record<string, string | null>, effective: () => Promise<void>) {
  for (const [name, value] of Object.entries(settings)) {
    await db().unsafe(
      value === null
        ? `alter role authenticator reset pgrst.${name}`
        : `alter role authenticator set pgrst.${name} = '${value}'`,
    );
  }
  await db().unsafe("notify pgrst, 'reload config'");
  await eventually(effective);
}
