import { OpenAPIHono } from "@hono/zod-openapi";
import type { Env as HonoEnv } from "hono";
import type { ZodError } from "zod";
import { invalid } from "../core/http/errors.ts";
import { issuesOf } from "../lib/issues.ts";
import type { ApiEnv } from "./env.ts";

/** The validation hook of every route: a failed schema becomes `400 VALIDATION_ERROR` with its issues. */
export const validationHook = (result: { success: true } | { success: false; error: ZodError }): void => {
  if (!result.success) throw invalid(issuesOf(result.error));
};

/** A router whose routes all report schema failures the same way; `E` says what its routes' context holds. */
export const createRouter = <E extends HonoEnv = ApiEnv>() => new OpenAPIHono<E>({ defaultHook: validationHook });
