import { z } from "@hono/zod-openapi";

// The field schemas live beside the rules that use them (src/core/catalog/fields.ts), shared with the dashboard.
export {
  AllowedHeaderSchema,
  BoundedJsonObjectSchema,
  HeaderNameSchema,
  HeaderValueSchema,
  ModeSchema,
  NetworkIdSchema,
  NetworkListSchema,
  ParamNameSchema,
  RoutePathSchema,
  SecretValueSchema,
  TextSchema,
  UrlSchema,
  WalletSchema,
} from "../../core/catalog/fields.ts";

/** The `{id}` of every item path. */
export const IdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "id", in: "path" } }),
});
