import { z } from "@hono/zod-openapi";
import { AUTH_METHODS } from "../../../core/secrets/auth-config.ts";
import { PageQuerySchema } from "../../paging.ts";
import { PaywallSchema } from "../paywalls/schemas.ts";
import { ModeSchema, NetworkIdSchema } from "../schemas.ts";

// The request schemas are the catalog's own rules, shared with the dashboard.
export {
  type ServiceCreate,
  ServiceCreateSchema,
  type ServiceUpdate,
  ServiceUpdateSchema,
} from "../../../core/catalog/services.ts";

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
        mcpUrl: z.string().openapi({
          format: "uri",
          description: "The service's MCP server (Streamable HTTP): its enabled paywalls and free routes as tools",
        }),
      })
      .openapi({ description: "Where agents find the service's paid routes, on the payment origin (docs/discovery.md)" }),
  })
  .openapi("Service");

export const ServiceListQuerySchema = z.strictObject({ ...PageQuerySchema.shape, mode: ModeSchema.optional() });

export type Service = z.infer<typeof ServiceSchema>;
