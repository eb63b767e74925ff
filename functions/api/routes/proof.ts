// Proof of delivery: which proof a company requires before a delivery may be
// completed. The proof itself goes to Supabase Storage (bucket
// `delivery-proofs`, policies in supabase/schemas/09_proof.sql).
import { z } from "zod";
import { rpc } from "../../_shared/db.ts";
import { defineRoute } from "../../_shared/route.ts";

const ProofRequirements = z.object({
  photo: z.boolean().describe("A photo must be uploaded before completing."),
  signature: z.boolean().describe("The recipient's signature must be uploaded before completing."),
  note: z.boolean().describe("Completing must carry a note."),
  handover_code: z.boolean().default(false).describe(
    "Each delivery created from now on gets a 4-digit code, given to the recipient (GET /api/v1/track/{token}, the " +
      "messages) and never to the driver: completing must carry it (`code`), 423 after 5 wrong ones until a manager's " +
      "complete-override. Omitted in a PUT: false.",
  ),
}).meta({ id: "ProofRequirements" });

export const getProofRequirements = defineRoute({
  method: "get",
  path: "/api/v1/companies/me/proof-requirements",
  tag: "companies",
  summary: "Which proof of delivery the company requires",
  description: "Nothing is required until the company says so.",
  auth: "bearer",
  roles: "members",
  responses: { 200: { description: "The requirements", schema: ProofRequirements } },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "get_proof_requirements")) }),
});

export const putProofRequirements = defineRoute({
  method: "put",
  path: "/api/v1/companies/me/proof-requirements",
  tag: "companies",
  summary: "Set which proof of delivery the company requires",
  description: "POST /api/v1/deliveries/{id}/complete then answers 422, naming what is missing, until the driver " +
    "has uploaded the required photo and signature and sends the required note.",
  auth: "bearer",
  roles: "company_managers",
  body: ProofRequirements,
  responses: { 200: { description: "The requirements", schema: ProofRequirements } },
  handler: async ({ body, asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "set_proof_requirements", body)) }),
});

export default [getProofRequirements, putProofRequirements];
