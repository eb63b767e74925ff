// Bearer-token authentication of the edge proxy: HS256 with the legacy JWT
// secret, or asymmetric keys from SUPABASE_JWKS or the project's JWKS URL.
import { env } from "./env.ts";
import { notAuthenticated } from "./errors.ts";
import { bearerToken, cachingVerifier, type Claims, createVerifier, TokenError } from "./jwt.ts";
import { UUID_PATTERN } from "./schemas.ts";

/** The role claims of user sessions: Supabase's own and the app roles of the access token hook. */
const USER_ROLES = new Set(["authenticated", "company_owner", "company_admin", "driver"]);

let verifier: ((token: string) => Promise<Claims>) | undefined;

function verify(token: string): Promise<Claims> {
  const config = env();
  // Each token's signature is checked once; what it proved is remembered until its `exp` (jwt.ts).
  verifier ??= cachingVerifier(createVerifier({
    jwtSecret: config.SUPABASE_JWT_SECRET,
    jwks: config.SUPABASE_JWKS as never,
    jwksUrl: `${config.SUPABASE_URL}/auth/v1/.well-known/jwks.json`,
  }));
  return verifier(token);
}

/** The verified claims of the request's bearer token; 401 when missing, invalid or expired. */
export async function authenticate(req: Request): Promise<Claims> {
  const token = bearerToken(req.headers.get("authorization"));
  if (!token) throw notAuthenticated("Not authenticated");
  try {
    const claims = await verify(token);
    // Only a user's session token: the anon and service_role API keys, and any
    // token without a subject, an expiry, the authenticated audience or a user
    // role, are refused (the role becomes the database role of the request).
    if (!claims.sub || !UUID_PATTERN.test(claims.sub)) throw new TokenError("token has no user subject");
    if (typeof claims.exp !== "number") throw new TokenError("token has no expiry");
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.includes("authenticated")) throw new TokenError("token is not for authenticated users");
    if (!USER_ROLES.has(claims.role ?? "")) throw new TokenError("token role is not a user role");
    return claims;
  } catch (error) {
    const detail = error instanceof TokenError ? error.message : "invalid JWT";
    throw notAuthenticated(detail, true);
  }
}
