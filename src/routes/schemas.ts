import { z } from "@hono/zod-openapi";
import { MODES } from "../db/schema.ts";
import { type JsonLimits, jsonShapeProblem } from "../lib/json-shape.ts";
import { NETWORK_IDS } from "../lib/networks.ts";

// Field schemas shared by services and paywalls.

/** Text we store and return: well-formed Unicode only, since UTF-8 storage would turn a lone surrogate into U+FFFD. */
export const TextSchema = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => value.isWellFormed(), { message: "Must be well-formed Unicode" });

export const NetworkIdSchema = z.enum(NETWORK_IDS).openapi("NetworkId");
export const ModeSchema = z.enum(MODES).openapi("Mode");

export const NetworkListSchema = z
  .array(NetworkIdSchema)
  .min(1)
  .max(NETWORK_IDS.length)
  .refine((list) => new Set(list).size === list.length, { message: "Networks must not repeat" })
  .openapi({ uniqueItems: true });

/** An absolute URL; whether it may be called (SSRF) is decided after validation, with its own error code. */
export const UpstreamUrlSchema = z
  .string()
  .max(2048)
  .refine((value) => value.isWellFormed() && URL.canParse(value), { message: "Must be an absolute URL" })
  .openapi({ format: "uri", example: "https://api.example.com" });

export const RoutePathSchema = TextSchema(200).min(1).regex(/^\//, "Must start with /");

export const WalletSchema = z.string().regex(/^0x[a-fA-F0-9]{40}$/, "Must be a 0x-prefixed 20-byte hex address");

/** A secret value: also encrypted as UTF-8, so the same rule. */
export const SecretValueSchema = TextSchema;

/** A free-form JSON object with bounded depth and size (see jsonShapeProblem). */
export const BoundedJsonObjectSchema = (limits: JsonLimits) =>
  z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const problem = jsonShapeProblem(value, limits);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** The `{id}` of every item path. */
export const IdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "id", in: "path" } }),
});
