// Starts, once per `vitest run`, the loopback fakes of the external services
// and the whole local stack (local/start.ts) on free ports with a fresh
// database, and hands their addresses to the test files through `inject`.
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { createGatewaySimulator, type GatewaySimulator } from "../../local/simulators/gateway.ts";
import { type CepSimulator, createCepSimulator } from "../../local/simulators/cep.ts";
import { createGeocodingSimulator, type GeocodingSimulator } from "../../local/simulators/geocoding.ts";
import { createRoutingSimulator, type RoutingSimulator } from "../../local/simulators/routing.ts";
import { createWhatsAppSimulator, type WhatsAppSimulator } from "../../local/simulators/whatsapp.ts";
import { startFake } from "../support/fake-server.ts";
import { startSmtpFake } from "../support/smtp-fake.ts";
import { createVroomFake, type VroomFake } from "../support/vroom-fake.ts";
import { LIFTED_AUTH_RATE_LIMITS, privateDir, startOwnStack } from "../support/stack.ts";

export interface StackInfo {
  apiUrl: string;
  dbUrl: string;
  anonKey: string;
  serviceRoleKey: string;
  jwtSecret: string;
  platformWebhookSecret: string;
  /** Everything the stack printed, for tests that check what is (not) logged. */
  logFile: string;
  fakes: Record<
    "gateway" | "routing" | "cep" | "geocoding" | "whatsapp" | "smtp" | "optimization",
    { url: string; controlUrl: string }
  >;
}

declare module "vitest" {
  export interface ProvidedContext {
    stack: StackInfo;
  }
}

export default async function setup(project: TestProject) {
  // The web app's pure rules (project `web`) and the files with stacks of their own (`*-own-stack`) need no stack.
  if (project.vitest.projects.every((each) => each.name === "web" || each.name.endsWith("-own-stack"))) return;
  const gateway = await startFake("gateway", createGatewaySimulator, (f) => {
    const sim = f as GatewaySimulator;
    return {
      customers: [...sim.customers.values()],
      payments: [...sim.payments.values()],
      transfers: [...sim.transfers.values()],
      log: sim.log,
    };
  });
  const routing = await startFake(
    "routing",
    createRoutingSimulator,
    (f) => ({ requests: (f as RoutingSimulator).requests, tables: (f as RoutingSimulator).tables }),
  );
  const cep = await startFake("cep", createCepSimulator, (f) => ({ requests: (f as CepSimulator).requests }));
  const geocoding = await startFake("geocoding", createGeocodingSimulator, (f) => {
    const sim = f as GeocodingSimulator;
    return { requests: sim.requests, queries: sim.queries };
  });
  const whatsapp = await startFake(
    "whatsapp",
    () => createWhatsAppSimulator(),
    (f) => ({ messages: (f as WhatsAppSimulator).messages }),
  );
  const smtp = await startSmtpFake();
  // VROOM's HTTP API; failing by default, so route plans fall back to the built-in planner unless a test says.
  const optimization = await startFake(
    "optimization",
    createVroomFake,
    (f) => ({ requests: (f as VroomFake).requests, last: (f as VroomFake).last }),
  );

  const dataDir = privateDir("delivery-platform-test-");
  const logFile = resolve(dataDir, "stack.log");
  const platformWebhookSecret = "test-platform-webhook-secret";
  const jwtSecret = "test-jwt-secret-that-is-at-least-32-characters";
  const stack = await startOwnStack({
    dataDir,
    logFile,
    env: {
      SUPABASE_JWT_SECRET: jwtSecret,
      GATEWAY_SANDBOX_URL: gateway.url,
      GATEWAY_PRODUCTION_URL: gateway.url,
      ROUTING_URL: routing.url,
      OPTIMIZATION_URL: optimization.url,
      CEP_URL: cep.url,
      GEOCODING_URL: geocoding.url,
      WHATSAPP_URL: `${whatsapp.url}/v21.0`,
      WHATSAPP_TOKEN: "test-whatsapp-token",
      SMTP_URL: smtp.url,
      GATEWAY_PLATFORM_WEBHOOK_SECRET: platformWebhookSecret,
      AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "1",
      // The Realtime files also try public channels (Realtime's behaviour for projects that allow them);
      // tests/realtime-private-only.test.ts runs a stack of its own with config.toml's private_only.
      REALTIME_PRIVATE_ONLY: "false",
      // The test files sign in, verify and recover from one address, in parallel, far faster than
      // config.toml's per-IP limits allow; tests/platform/auth/auth-signup.test.ts runs a stack of its own with them.
      ...LIFTED_AUTH_RATE_LIMITS,
    },
  });
  const field = (name: string) => new RegExp(`${name}: (\\S+)`).exec(stack.output())?.[1] ?? "";

  const info: StackInfo = {
    apiUrl: stack.apiUrl,
    dbUrl: stack.dbUrl,
    anonKey: stack.anonKey,
    serviceRoleKey: field("service_role key"),
    jwtSecret,
    platformWebhookSecret,
    logFile,
    fakes: {
      gateway: { url: gateway.url, controlUrl: gateway.controlUrl },
      routing: { url: routing.url, controlUrl: routing.controlUrl },
      cep: { url: cep.url, controlUrl: cep.controlUrl },
      geocoding: { url: geocoding.url, controlUrl: geocoding.controlUrl },
      whatsapp: { url: whatsapp.url, controlUrl: whatsapp.controlUrl },
      smtp: { url: smtp.url, controlUrl: smtp.controlUrl },
      optimization: { url: optimization.url, controlUrl: optimization.controlUrl },
    },
  };
  // vitest.config.ts runs this once, from the root config, for every project of the run.
  for (const each of project.vitest.projects) each.provide("stack", info);

  return async () => {
    await stack.stop();
    await gateway.close();
    await routing.close();
    await cep.close();
    await geocoding.close();
    await whatsapp.close();
    await smtp.close();
    await optimization.close();
  };
}
