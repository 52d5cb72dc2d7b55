import { z } from "@hono/zod-openapi";
import { MODES } from "../../db/schema.ts";
import { allowedHeaderProblem, headerNameProblem, headerValueProblem, paramNameProblem } from "../../lib/header-rules.ts";
import { type JsonLimits, jsonShapeProblem } from "../../lib/json-shape.ts";
import { type TextKind, textProblem } from "../../lib/text-rules.ts";
import { hasUserinfo, routePathProblem, urlTextProblem } from "../../lib/url-rules.ts";
import { NETWORK_IDS } from "../money/networks.ts";

// Field schemas shared by services and paywalls: the one set of field rules, read by the API (its request schemas
// and OpenAPI document) and by the dashboard's forms.

/** Adds one issue when `problem` names one: the rules live in src/lib as plain functions returning a message. */
const rule = (problem: (value: string) => string | null) => (value: string, ctx: z.core.$RefinementCtx<string>) => {
  const message = problem(value);
  if (message) ctx.addIssue({ code: "custom", message });
};

/** Well-formed Unicode only, since UTF-8 storage would turn a lone surrogate into U+FFFD. */
const WellFormedSchema = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => value.isWellFormed(), { message: "Must be well-formed Unicode" });

/**
 * Free text we store and return (see text-rules.ts): single-line text refuses every control character;
 * multi-line text allows TAB, LF and CR.
 */
export const TextSchema = (max: number, kind: TextKind = "single-line") =>
  z
    .string()
    .max(max)
    .superRefine(rule((value) => textProblem(value, kind)));

export const NetworkIdSchema = z.enum(NETWORK_IDS).openapi("NetworkId");
export const ModeSchema = z.enum(MODES).openapi("Mode");

export const NetworkListSchema = z
  .array(NetworkIdSchema)
  .min(1)
  .max(NETWORK_IDS.length)
  .refine((list) => new Set(list).size === list.length, { message: "Networks must not repeat" })
  .openapi({ uniqueItems: true });

/**
 * An absolute URL without whitespace, control characters or a backslash, stored and returned as its normalized
 * `href` (what the SSRF check judges). Whether it may be called is decided after validation, with its own error code.
 * Text with an `@` in its authority keeps its own spelling, so that the SSRF check sees an empty user name
 * (`http://@host/`), which `href` would drop.
 */
export const UrlSchema = z
  .string()
  .max(2048)
  .superRefine(rule(urlTextProblem))
  .refine((value) => value.isWellFormed() && URL.canParse(value), { message: "Must be an absolute URL" })
  .overwrite((value) => (URL.canParse(value) && !hasUserinfo(value) ? new URL(value).href : value))
  .openapi({ format: "uri", example: "https://api.example.com/" });

/** An absolute path that keeps the origin when joined to a URL (see url-rules.ts). */
export const RoutePathSchema = z
  .string()
  .min(1)
  .max(200)
  .superRefine(rule(routePathProblem))
  .openapi({ example: "/v1/forecast" });

/** A header name a tenant may set upstream: an RFC 9110 token outside the platform's reserved headers. */
export const HeaderNameSchema = z.string().min(1).max(100).superRefine(rule(headerNameProblem));

/** A buyer header a paywall forwards (`allowedHeaders`): a token, never one the platform owns or a buyer credential. */
export const AllowedHeaderSchema = z.string().min(1).max(100).superRefine(rule(allowedHeaderProblem));

/** A header value: no CR, LF or NUL. */
export const HeaderValueSchema = (max: number) => WellFormedSchema(max).superRefine(rule(headerValueProblem));

/** A query parameter or JSON field name: visible characters without & = # ?. */
export const ParamNameSchema = z.string().min(1).max(100).superRefine(rule(paramNameProblem));

export const WalletSchema = z.string().regex(/^0x[a-fA-F0-9]{40}$/, "Must be a 0x-prefixed 20-byte hex address");

/** A secret value: encrypted as UTF-8, so well-formed; where it goes decides the rest (see auth-config.ts). */
export const SecretValueSchema = WellFormedSchema;

/** A free-form JSON object with bounded depth and size (see jsonShapeProblem). */
export const BoundedJsonObjectSchema = (limits: JsonLimits) =>
  z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const problem = jsonShapeProblem(value, limits);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
