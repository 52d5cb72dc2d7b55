import { z } from "@hono/zod-openapi";
import type { PublicEnv } from "../env.ts";
import { envelope, meta } from "../envelope.ts";
import { json, publicRoute } from "../openapi.ts";
import { createRouter } from "../router.ts";

const HealthSchema = z
  .object({
    status: z.enum(["ok", "degraded"]),
    checks: z.object({ database: z.enum(["ok", "error"]) }),
  })
  .openapi("Health");

const route = publicRoute({
  operationId: "getHealth",
  method: "get",
  path: "/health",
  tags: ["System"],
  summary: "Health check",
  errors: ["VALIDATION_ERROR", "INTERNAL_ERROR"],
  description: "No API key needed. `503` with `status: degraded` when the database does not answer.",
  responses: {
    200: { description: "Healthy", ...json(envelope(HealthSchema)) },
    503: { description: "Degraded", ...json(envelope(HealthSchema)) },
  },
});

export const healthRouter = createRouter<PublicEnv>().openapi(route, async (c) => {
  const database = await Promise.resolve()
    .then(() => c.env.DB.prepare("SELECT 1").first())
    .then(() => "ok" as const)
    .catch(() => "error" as const);
  if (database === "ok") return c.json({ data: { status: "ok" as const, checks: { database } }, meta: meta(c) }, 200);
  return c.json({ data: { status: "degraded" as const, checks: { database } }, meta: meta(c) }, 503);
});
