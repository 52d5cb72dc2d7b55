import { z } from "@hono/zod-openapi";

const DiagnosticSchema = z
  .object({
    severity: z.enum(["error", "warn", "info"]),
    code: z.string().openapi({ example: "INPUT_SCHEMA_MISSING" }),
    message: z.string(),
    paywallId: z.string().optional().openapi({ description: "The paywall it is about, if one" }),
  })
  .openapi("DiscoveryDiagnostic");

const ListingSchema = z
  .object({
    paywallId: z.string(),
    slug: z.string(),
    status: z
      .string()
      .openapi({ description: "`success`, `processing` or `rejected`, as the facilitator said", example: "success" }),
    reason: z.string().nullable(),
    facilitatorUrl: z.string().openapi({ format: "uri" }),
    updatedAt: z.iso.datetime(),
  })
  .openapi("DiscoveryListing");

export const DiscoveryPreviewSchema = z
  .object({
    serviceId: z.string(),
    openapiUrl: z.string().openapi({ format: "uri" }),
    llmsTxtUrl: z.string().openapi({ format: "uri" }),
    mcpUrl: z.string().openapi({ format: "uri", description: "The service's MCP server (Streamable HTTP)" }),
    document: z.record(z.string(), z.unknown()).openapi({
      description: "The discovery document (OpenAPI 3.1) the payment origin serves at `openapiUrl`, as of this request",
    }),
    diagnostics: z.array(DiagnosticSchema),
    listings: z.array(ListingSchema).openapi({
      description: "Per paywall, the last Bazaar listing status a facilitator returned on settlement (EXTENSION-RESPONSES)",
    }),
  })
  .openapi("DiscoveryPreview");
