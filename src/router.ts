import { OpenAPIHono } from "@hono/zod-openapi";
import type { Env as HonoEnv } from "hono";
import { validationHook } from "./error-handler.ts";
import type { ApiEnv } from "./types.ts";

/** A router whose routes all report schema failures the same way; `E` says what its routes' context holds. */
export const createRouter = <E extends HonoEnv = ApiEnv>() => new OpenAPIHono<E>({ defaultHook: validationHook });
