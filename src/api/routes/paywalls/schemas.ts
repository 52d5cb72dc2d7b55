import { z } from "@hono/zod-openapi";
import { EXAMPLE_LIMITS, jsonSchemaIssues } from "../../../core/discovery/json-schema.ts";
import { isValidPrice, PRICE_PATTERN } from "../../../core/money/price.ts";
import { jsonShapeProblem } from "../../../lib/json-shape.ts";
import { isDotsOnly } from "../../../lib/url-rules.ts";
import { PageQuerySchema } from "../../paging.ts";
import {
  AllowedHeaderSchema,
  BoundedJsonObjectSchema,
  HeaderNameSchema,
  HeaderValueSchema,
  NetworkIdSchema,
  NetworkListSchema,
  ParamNameSchema,
  RoutePathSchema,
  TextSchema,
  UrlSchema,
  WalletSchema,
} from "../schemas.ts";

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH"] as const;

const HeaderInputSchema = z.strictObject({
  // `|` is a token character, but it separates the parts that bind the encrypted value to its row and field.
  key: HeaderNameSchema.refine((key) => !key.includes("|"), { message: "Must not contain |" }).openapi({
    description: "An HTTP header name the platform does not reserve (see the README), without `|`",
  }),
  value: HeaderValueSchema(1000),
});

const uniqueKeys = (list: { key: string }[] | null | undefined) =>
  !list || new Set(list.map((h) => h.key.toLowerCase())).size === list.length;

const HeadersInputSchema = z
  .array(HeaderInputSchema)
  .max(50)
  .refine(uniqueKeys, { message: "Header keys must not repeat" })
  .nullable()
  .openapi({
    description:
      "Headers sent upstream. Values are encrypted at rest and returned as `***`; on update send `***` to keep a stored value.",
    example: [{ key: "X-Upstream-Token", value: "secret" }],
  });

const QueryParamsSchema = z
  .array(z.strictObject({ key: ParamNameSchema, value: TextSchema(1000) }))
  .max(50)
  .nullable();

const MethodListSchema = z
  .array(z.enum(HTTP_METHODS))
  .min(1)
  .refine((list) => new Set(list).size === list.length, { message: "Methods must not repeat" })
  .openapi({ uniqueItems: true });

/** A JSON Schema of the documented subset (docs/discovery.md), its problems reported at their path inside it. */
const JsonSchemaField = (roots: Parameters<typeof jsonSchemaIssues>[1], description: string) =>
  z
    .record(z.string(), z.unknown())
    .superRefine((value, ctx) => {
      for (const issue of jsonSchemaIssues(value, roots)) {
        ctx.addIssue({ code: "custom", path: issue.path ? issue.path.split(".") : [], message: issue.message });
      }
    })
    .nullable()
    .openapi({ description, example: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } });

/** Discovery fields (docs/discovery.md): optional; a paywall without them is described generically. */
const discoveryFields = {
  inputSchema: JsonSchemaField(
    ["object"],
    'The request\'s input as a JSON Schema 2020-12 object schema (the subset in docs/discovery.md, at most 4096 characters): the query parameters for GET, the JSON body for POST, PUT and PATCH. Published in the discovery document and the x402 Bazaar extension; give constrained properties "examples".',
  ),
  outputSchema: JsonSchemaField(
    ["object", "array"],
    "The answer's JSON as a JSON Schema 2020-12 object or array schema (the same subset and bound).",
  ),
  outputExample: z
    .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
    .superRefine((value, ctx) => {
      const problem = jsonShapeProblem(value, EXAMPLE_LIMITS);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .nullable()
    .openapi({
      description:
        "An example answer (a JSON object or array, at most 4096 characters); must satisfy outputSchema when both are set.",
      example: { city: "Lisbon", tempC: 21.5 },
    }),
};

const paywallFields = {
  name: TextSchema(100).min(1).openapi({ example: "Forecast" }),
  description: TextSchema(10_000, "multi-line").nullable(),
  targetType: z.enum(["PROXY", "ROUTE"]),
  targetUrl: UrlSchema.nullable(),
  targetRoute: RoutePathSchema,
  price: z
    .string()
    .refine(isValidPrice, {
      message: "Integer micro-USDC as a decimal string: 1 to 1000000000000000, no sign, point or leading zero",
    })
    .openapi({
      example: "10000",
      pattern: PRICE_PATTERN.source,
      maxLength: 16,
      description: "USDC in micro-units (1000000 = 1.00 USDC): a whole number from 1 to 1000000000000000",
    }),
  currency: z.enum(["USDC"]),
  networks: NetworkListSchema.openapi({ example: ["base-sepolia", "tempo-testnet"] }),
  timeout: z.int().min(30_000).max(3_600_000).openapi({ description: "Upstream timeout in milliseconds", example: 60000 }),
  headers: HeadersInputSchema,
  allowedMethods: MethodListSchema,
  allowedHeaders: z.array(AllowedHeaderSchema).max(50),
  queryParams: QueryParamsSchema,
  serviceId: z.string().min(1).max(64).nullable(),
  enabled: z.boolean(),
  fulfillmentMode: z.enum(["PROXY", "SIGNED_URL"]),
};

export const PaywallCreateSchema = z
  .strictObject({
    slug: z
      .string()
      .min(1)
      .max(50)
      .regex(/^[a-z0-9._-]+$/, "Lowercase letters, digits, '.', '_' and '-' only")
      .refine((slug) => !isDotsOnly(slug), { message: "Must not be made of dots only" })
      .openapi({ example: "forecast" }),
    name: paywallFields.name,
    targetType: paywallFields.targetType,
    price: paywallFields.price,
    currency: paywallFields.currency,
    fulfillmentMode: paywallFields.fulfillmentMode,
    networks: paywallFields.networks,
    network: NetworkIdSchema.optional().openapi({ description: "If sent, must be one of `networks`" }),
    description: paywallFields.description.optional(),
    targetUrl: paywallFields.targetUrl.optional(),
    targetRoute: paywallFields.targetRoute.optional(),
    timeout: paywallFields.timeout.optional(),
    headers: paywallFields.headers.optional(),
    allowedMethods: paywallFields.allowedMethods.optional(),
    queryParams: paywallFields.queryParams.optional(),
    serviceId: paywallFields.serviceId.optional(),
    enabled: paywallFields.enabled.optional(),
    cacheRules: BoundedJsonObjectSchema({ maxDepth: 8, maxLength: 8192 })
      .optional()
      .openapi({ description: "Free-form caching rules: a JSON object at most 8 levels deep and 8192 characters long" }),
    inputSchema: discoveryFields.inputSchema.optional(),
    outputSchema: discoveryFields.outputSchema.optional(),
    outputExample: discoveryFields.outputExample.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.network !== undefined && !body.networks.includes(body.network)) {
      ctx.addIssue({ code: "custom", path: ["network"], message: "Must be one of networks" });
    }
  })
  .openapi("PaywallCreate", {
    example: {
      slug: "forecast",
      name: "Forecast",
      targetType: "ROUTE",
      targetRoute: "/v1/forecast",
      serviceId: "svc_3f9a0c1d2e4b5a6978c0d1e2",
      price: "10000",
      currency: "USDC",
      networks: ["base-sepolia"],
      fulfillmentMode: "PROXY",
    },
  });

export const PaywallUpdateSchema = z
  .strictObject({
    name: paywallFields.name,
    description: paywallFields.description,
    targetType: paywallFields.targetType,
    targetUrl: paywallFields.targetUrl,
    targetRoute: paywallFields.targetRoute.nullable(),
    price: paywallFields.price,
    currency: paywallFields.currency,
    networks: paywallFields.networks,
    merchantWallet: WalletSchema,
    timeout: paywallFields.timeout,
    headers: paywallFields.headers,
    allowedMethods: paywallFields.allowedMethods,
    allowedHeaders: paywallFields.allowedHeaders,
    queryParams: paywallFields.queryParams,
    serviceId: paywallFields.serviceId,
    enabled: paywallFields.enabled,
    ...discoveryFields,
  })
  .partial()
  .openapi("PaywallUpdate", { example: { price: "20000", enabled: false } });

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
    price: z.string(),
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

export type PaywallCreate = z.infer<typeof PaywallCreateSchema>;
export type PaywallUpdate = z.infer<typeof PaywallUpdateSchema>;
export type Paywall = z.infer<typeof PaywallSchema>;
