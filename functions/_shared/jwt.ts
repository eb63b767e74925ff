// Token verification lives in common/jwt.ts, beside the other code the product and the local platform both use.
export * from "../../common/jwt.ts";
