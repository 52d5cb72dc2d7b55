import { z } from "@hono/zod-openapi";
import { HTTP_METHODS } from "../../../core/catalog/paywalls.ts";
import { PageQuerySchema } from "../../paging.ts";
import { NetworkIdSchema } from "../schemas.ts";

// The request schemas are the catalog's own rules, shared with the dashboard.
export {
  HTTP_METHODS,
  type PaywallCreate,
  PaywallCreateSchema,
  type PaywallUpdate,
  PaywallUpdateSchema,
} from "../../../core/catalog/paywalls.ts";

export const PaywallSchema = z
  .object({
    id: z.string().openapi({ example: "pw_5b1e0c9d8a7f6e5d4c3b2a19" }),
    slug: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    targetType: z.enum(["PROXY", "ROUTE"]),
    targetUrl: z.string().nullable().openapi({ format: "uri" }),
    targetRoute: z.string().nullable(),
    routePattern: z.string().nullable(),
    price: z.string().openapi({ description: "Integer micro-USDC (1000000 = 1 USDC), as set", example: "10000" }),
    priceUsdc: z.string().openapi({
      description: "The same price in USDC, a plain decimal (`price` 10000 → `0.01`); read-only, derived from `price`",
      example: "0.01",
    }),
    currency: z.enum(["USDC"]),
    network: NetworkIdSchema,
    networks: z.array(NetworkIdSchema),
    merchantWallet: z.string(),
    facilitatorUrl: z.string().openapi({ format: "uri" }),
    timeout: z.int(),
    validityWindow: z.int().openapi({ description: "Seconds a payment authorization stays valid" }),
    allowedMethods: z.array(z.enum(HTTP_METHODS)),
    allowedHeaders: z.array(z.string()),
    fulfillmentMode: z.enum(["PROXY", "SIGNED_URL"]),
    enabled: z.boolean(),
    sessions: z
      .object({
        enabled: z.boolean(),
        minDeposit: z.string().optional().openapi({
          description: "The least a buyer deposits to open a session, integer micro-USDC; absent: the price",
          pattern: "^[1-9][0-9]*$",
          maxLength: 13,
          example: "1000000",
        }),
      })
      .openapi({
        description:
          "Sessions (x402 batch-settlement): whether the 402 also offers a channel paid by vouchers; off by default, per-call payments are accepted either way",
      }),
    headers: z.array(z.object({ key: z.string(), value: z.literal("***") })).nullable(),
    queryParams: z.array(z.object({ key: z.string(), value: z.string() })).nullable(),
    cacheRules: z.record(z.string(), z.unknown()).nullable(),
    inputSchema: z.record(z.string(), z.unknown()).nullable(),
    outputSchema: z.record(z.string(), z.unknown()).nullable(),
    outputExample: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).nullable(),
    serviceId: z.string().nullable(),
    userId: z.string(),
    paymentUrls: z.object({
      x402: z.string().nullable().openapi({ format: "uri" }),
      mpp: z.string().nullable().openapi({ format: "uri" }),
    }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Paywall");

export const PaywallListQuerySchema = z.strictObject({
  ...PageQuerySchema.shape,
  serviceId: z.string().min(1).max(64).optional(),
  enabled: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional(),
});

export type Paywall = z.infer<typeof PaywallSchema>;
