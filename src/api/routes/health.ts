import { z } from "@hono/zod-openapi";
import { facilitatorHealth } from "../../core/facilitators/health.ts";
import type { PublicEnv } from "../env.ts";
import { envelope, meta } from "../envelope.ts";
import { json, publicRoute } from "../openapi.ts";
import { createRouter } from "../router.ts";

const FacilitatorHealthSchema = z
  .object({
    mode: z.enum(["testnet", "mainnet"]),
    url: z.string().openapi({ description: "Scheme, host and path (never credentials or a query string)." }),
    status: z.enum(["ok", "failing", "unknown"]).openapi({
      description: "`ok`: its latest call was answered; `failing`: its latest call failed; `unknown`: no call seen yet.",
    }),
    calls: z.number().int().openapi({ description: "Recent verify and settle calls (at most 20)." }),
    failures: z.number().int(),
    latencyMs: z.number().int().nullable().openapi({ description: "Median duration of the recent answered calls." }),
    lastFailure: z
      .object({ at: z.string(), failure: z.enum(["timeout", "unreachable", "error_status", "invalid_answer"]) })
      .nullable(),
  })
  .openapi("FacilitatorHealth");

const HealthSchema = z
  .object({
    status: z.enum(["ok", "degraded"]),
    checks: z.object({
      database: z.enum(["ok", "error"]),
      facilitators: z.array(FacilitatorHealthSchema).openapi({
        description: "Each configured facilitator's health from the gateway's recent calls, per mode (informational).",
      }),
    }),
  })
  .openapi("Health");

const route = publicRoute({
  operationId: "getHealth",
  method: "get",
  path: "/health",
  tags: ["System"],
  summary: "Health check",
  errors: ["VALIDATION_ERROR", "INTERNAL_ERROR"],
  description:
    "No API key needed. `503` with `status: degraded` when the database does not answer. `checks.facilitators` shows " +
    "each configured x402 facilitator's health from the gateway's recent calls; it does not change `status`.",
  responses: {
    200: { description: "Healthy", ...json(envelope(HealthSchema)) },
    503: { description: "Degraded", ...json(envelope(HealthSchema)) },
  },
});

export const healthRouter = createRouter<PublicEnv>().openapi(route, async (c) => {
  const [database, facilitators] = await Promise.all([
    Promise.resolve()
      .then(() => c.env.DB.prepare("SELECT 1").first())
      .then(() => "ok" as const)
      .catch(() => "error" as const),
    facilitatorHealth(c.env),
  ]);
  const checks = { database, facilitators };
  if (database === "ok") return c.json({ data: { status: "ok" as const, checks }, meta: meta(c) }, 200);
  return c.json({ data: { status: "degraded" as const, checks }, meta: meta(c) }, 503);
});
