import { OpenAPIHono } from "@hono/zod-openapi";
import { validationHook } from "./error-handler.ts";
import type { AppEnv } from "./types.ts";

/** A router whose routes all report schema failures the same way. */
export const createRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
