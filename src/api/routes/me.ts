import { z } from "@hono/zod-openapi";
import { SCOPES } from "../../core/keys/scopes.ts";
import { envelope, meta } from "../envelope.ts";
import { authenticatedRoute, json } from "../openapi.ts";
import { createRouter } from "../router.ts";

const IdentitySchema = z
  .object({
    user: z.object({
      id: z.string(),
      email: z.string().openapi({ format: "email" }),
      name: z.string(),
      walletAddress: z.string(),
      tempoWalletAddress: z.string().nullable(),
    }),
    apiKey: z.object({
      id: z.string(),
      name: z.string(),
      scopes: z.array(z.enum(SCOPES)),
      keyPrefix: z.string().openapi({ example: "mpk_1a2b3c4d" }),
    }),
    rateLimit: z.object({
      limit: z.int(),
      remaining: z.int(),
      resetAt: z.iso.datetime(),
    }),
  })
  .openapi("Identity");

const route = authenticatedRoute({
  operationId: "getMe",
  method: "get",
  path: "/me",
  tags: ["Identity"],
  summary: "Validate the API key",
  description:
    "Returns the key's tenant, the key's id, name, prefix and scopes, and its rate-limit state. Any valid key works; no scope is needed.",
  responses: { 200: { description: "The identity behind the key", ...json(envelope(IdentitySchema)) } },
  errors: ["VALIDATION_ERROR"],
});

export const meRouter = createRouter().openapi(route, (c) => {
  const { tenant, keyId, keyName, keyPrefix, scopes } = c.var.auth;
  const { limit, remaining, resetAt } = c.var.rateLimit;
  return c.json(
    {
      data: {
        // `user` is the key's tenant: the specification's name for the owner, as `userId` on services and paywalls.
        user: {
          id: tenant.id,
          email: tenant.email,
          name: tenant.name,
          walletAddress: tenant.walletAddress,
          tempoWalletAddress: tenant.tempoWalletAddress,
        },
        apiKey: { id: keyId, name: keyName, scopes: scopes as (typeof SCOPES)[number][], keyPrefix },
        rateLimit: { limit, remaining, resetAt: new Date(resetAt).toISOString() },
      },
      meta: meta(c),
    },
    200,
  );
});
