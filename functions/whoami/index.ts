// Who the caller is, as the platform sees it: the token's subject and role
// claim beside the effective role and company the membership grants. Deployed
// with verify_jwt = true, so the runtime has already refused a missing or
// invalid token; the claims are verified again here before use.
import { createApp } from "../_shared/app.ts";
import { authenticate } from "../_shared/auth.ts";
import { asUser } from "../_shared/db.ts";

const app = createApp();

// Any method: supabase-js functions.invoke() posts by default.
app.all("*", async (c) => {
  const claims = await authenticate(c.req.raw);
  const [member] = await asUser(claims, (tx) => tx`select company_id, role from private.membership()`);
  return c.json({
    user_id: claims.sub,
    token_role: claims.role,
    role: member?.role ?? null,
    company_id: member?.company_id ?? null,
  });
});

export default { fetch: app.fetch };
