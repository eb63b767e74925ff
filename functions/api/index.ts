// The edge proxy: every /api/v1 call but the webhooks (the gateway-webhook function's), and /health
// (docs/architecture.md; docs/contract.md). Each request is authenticated here and runs in the
// database as the caller. The routes and the OpenAPI document are app.ts's.
import { env } from "../_shared/env.ts";
import { app } from "./app.ts";

env(); // fail at start-up, naming the setting, rather than on the first request

export default { fetch: app.fetch };
