import { z } from "@hono/zod-openapi";
import { MODES } from "../db/schema.ts";
import { NETWORK_IDS } from "../lib/networks.ts";

/** Field schemas shared by services and paywalls. */
export const NetworkIdSchema = z.enum(NETWORK_IDS).openapi("NetworkId");
export const ModeSchema = z.enum(MODES).openapi("Mode");

export const NetworkListSchema = z
  .array(NetworkIdSchema)
  .min(1)
  .max(NETWORK_IDS.length)
  .refine((list) => new Set(list).size === list.length, { message: "Networks must not repeat" });

/** An absolute URL; whether it may be called (SSRF) is decided after validation, with its own error code. */
export const UpstreamUrlSchema = z
  .string()
  .max(2048)
  .refine((value) => URL.canParse(value), { message: "Must be an absolute URL" })
  .openapi({ format: "uri", example: "https://api.example.com" });

export const RoutePathSchema = z.string().min(1).max(200).regex(/^\//, "Must start with /");

export const WalletSchema = z.string().regex(/^0x[a-fA-F0-9]{40}$/, "Must be a 0x-prefixed 20-byte hex address");

export const isoDate = (date: Date) => date.toISOString();

/** A secret value: WebCrypto encrypts UTF-8, which cannot carry a lone surrogate unchanged. */
export const SecretValueSchema = (max: number) =>
  z.string().max(max).refine((value) => value.isWellFormed(), { message: "Must be well-formed Unicode" });
