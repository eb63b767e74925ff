// The versions of the Supabase services whose behaviour the local stand-ins
// follow, whose source the stand-ins were written from: the images the
// Supabase CLI pins for `supabase start` (apps/cli-go/pkg/config/templates/
// Dockerfile in supabase/cli), except where noted. This is the one place to change when they
// move; the stand-ins report them where the real services do.
export const EMULATED = {
  /** supabase/auth (GoTrue): reported by /auth/v1/health. */
  auth: "v2.189.0",
  /**
   * supabase/realtime. Newer than the CLI's pin (v2.102.1): a channel joined
   * for presence alone (presence read without broadcast read) needs v2.124.0
   * or later, which hosted projects run. Realtime reports no version to clients.
   */
  realtime: "v2.129.8",
  /**
   * supabase/storage (storage-api): reported by /storage/v1/version. Newer than the CLI's pin of the
   * images this was written against; the bucket and object API supabase-js calls is the same.
   */
  storage: "v1.70.6",
  /**
   * PostgREST: reported by /rest/v1 in the `Server` header, as `postgrest/<major.minor>`, and as the OpenAPI
   * root's info.version; its source (errors, preferences, schema cache, planner) is what local/rest/ follows.
   */
  postgrest: "v14.12",
  /** Mailpit, the local mail catcher whose message API /_mail/api/v1 follows. */
  mailpit: "v1.22.3",
  /** supabase-js (with auth-js, postgrest-js, realtime-js): the client the stand-ins are tested with. */
  supabaseJs: "2.109.0",
} as const;

/** PostgREST's `Server` header: "postgrest/" and the major.minor of its version (PostgREST.Version.prettyVersion). */
export const POSTGREST_SERVER = `postgrest/${EMULATED.postgrest.replace(/^v/, "").split(".").slice(0, 2).join(".")}`;
