import { z } from "@hono/zod-openapi";
import { modeOfNetwork } from "../../../core/money/networks.ts";
import { AUTH_METHODS } from "../../../core/secrets/auth-config.ts";
import { PageQuerySchema } from "../../paging.ts";
import { PaywallSchema } from "../paywalls/schemas.ts";
import {
  ModeSchema,
  NetworkIdSchema,
  NetworkListSchema,
  RoutePathSchema,
  SecretValueSchema,
  TextSchema,
  UrlSchema,
} from "../schemas.ts";

const AuthConfigInputSchema = z
  .record(z.string().regex(/^[A-Za-z][A-Za-z0-9]{0,63}$/, "A field name such as bearerToken"), SecretValueSchema(4096).min(1))
  .refine((config) => Object.keys(config).length <= 8, { message: "At most 8 fields" })
  .openapi({
    description:
      "Credential fields of the authMethod (see the README). Secret values are encrypted at rest and returned as `***`; send `***` on update to keep a stored value.",
    example: { bearerToken: "sk_live_upstream_credential" },
  });

const text = TextSchema;

const serviceFields = {
  name: text(100).min(1).openapi({ example: "Weather API" }),
  description: text(10_000, "multi-line").nullable(),
  baseUrl: UrlSchema,
  authMethod: z.enum(AUTH_METHODS),
  authConfig: AuthConfigInputSchema,
  networks: NetworkListSchema.openapi({ example: ["base-sepolia"] }),
  mode: ModeSchema,
  contactEmail: z.email().max(320).nullable(),
  categories: z.array(text(50).min(1)).max(20),
  docsHomepage: UrlSchema.nullable(),
  docsApiReference: UrlSchema.nullable(),
  docsLlms: UrlSchema.nullable(),
  xGuidance: text(5000, "multi-line").nullable(),
  publicRoutes: z.array(RoutePathSchema).max(50),
  siwxRoutes: z.array(RoutePathSchema).max(50),
};

export const ServiceCreateSchema = z
  .strictObject({
    name: serviceFields.name,
    baseUrl: serviceFields.baseUrl,
    authMethod: serviceFields.authMethod,
    networks: serviceFields.networks,
    mode: serviceFields.mode,
    description: serviceFields.description.optional(),
    authConfig: serviceFields.authConfig.optional(),
    contactEmail: serviceFields.contactEmail.optional(),
    categories: serviceFields.categories.optional(),
    docsHomepage: serviceFields.docsHomepage.optional(),
    docsApiReference: serviceFields.docsApiReference.optional(),
    docsLlms: serviceFields.docsLlms.optional(),
    xGuidance: serviceFields.xGuidance.optional(),
    publicRoutes: serviceFields.publicRoutes.optional(),
    siwxRoutes: serviceFields.siwxRoutes.optional(),
  })
  .superRefine((body, ctx) => {
    body.networks.forEach((network, i) => {
      if (modeOfNetwork(network) !== body.mode) {
        ctx.addIssue({ code: "custom", path: ["networks", i], message: `"${network}" is not a ${body.mode} network` });
      }
    });
  })
  .openapi("ServiceCreate", {
    example: {
      name: "Weather API",
      baseUrl: "https://api.weather.example.com",
      authMethod: "bearer",
      authConfig: { bearerToken: "upstream-secret" },
      networks: ["base-sepolia"],
      mode: "testnet",
    },
  });

export const ServiceUpdateSchema = z
  .strictObject({
    name: serviceFields.name,
    description: serviceFields.description,
    baseUrl: serviceFields.baseUrl,
    authMethod: serviceFields.authMethod,
    authConfig: serviceFields.authConfig,
    networks: serviceFields.networks,
    mode: serviceFields.mode,
    contactEmail: serviceFields.contactEmail,
    categories: serviceFields.categories,
    docsHomepage: serviceFields.docsHomepage,
    docsApiReference: serviceFields.docsApiReference,
    docsLlms: serviceFields.docsLlms,
    xGuidance: serviceFields.xGuidance,
    publicRoutes: serviceFields.publicRoutes,
    siwxRoutes: serviceFields.siwxRoutes,
  })
  .partial()
  .openapi("ServiceUpdate", { example: { name: "Weather API v2", authConfig: { bearerToken: "***" } } });

export const ServiceSchema = z
  .object({
    id: z.string().openapi({ example: "svc_3f9a0c1d2e4b5a6978c0d1e2" }),
    name: z.string(),
    description: z.string().nullable(),
    baseUrl: z.string().openapi({ format: "uri" }),
    authMethod: z.enum(AUTH_METHODS),
    authConfig: z.record(z.string(), z.string()).openapi({ example: { bearerToken: "***" } }),
    networks: z.array(NetworkIdSchema),
    mode: ModeSchema,
    contactEmail: z.string().nullable().openapi({ format: "email" }),
    categories: z.array(z.string()),
    docsHomepage: z.string().nullable(),
    docsApiReference: z.string().nullable(),
    docsLlms: z.string().nullable(),
    xGuidance: z.string().nullable(),
    publicRoutes: z.array(z.string()),
    siwxRoutes: z.array(z.string()),
    userId: z.string(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    Paywall: z.array(PaywallSchema),
    discovery: z
      .object({
        openapiUrl: z.string().openapi({ format: "uri", description: "The service's discovery document (OpenAPI 3.1)" }),
        llmsTxtUrl: z
          .string()
          .openapi({ format: "uri", description: "The service's llms.txt: `docsLlms` when set, else the one generated" }),
      })
      .openapi({ description: "Where agents find the service's paid routes, on the payment origin (docs/discovery.md)" }),
  })
  .openapi("Service");

export const ServiceListQuerySchema = z.strictObject({ ...PageQuerySchema.shape, mode: ModeSchema.optional() });

export type ServiceCreate = z.infer<typeof ServiceCreateSchema>;
export type ServiceUpdate = z.infer<typeof ServiceUpdateSchema>;
export type Service = z.infer<typeof ServiceSchema>;
