import { secureHeaders } from "hono/secure-headers";
import { createDashboard } from "./dashboard/index.tsx";
import { renderError } from "./error-handler.ts";
import { ApiError } from "./errors.ts";
import { gatewayRouter } from "./gateway/index.ts";
import { accessLog } from "./middleware/access-log.ts";
import { authenticate } from "./middleware/auth.ts";
import { corsPolicy } from "./middleware/cors.ts";
import { database } from "./middleware/database.ts";
import { declaredQueryFrom, noStore, refuseDeclaredOversize, refuseKeyInUrl, strictQuery } from "./middleware/request-guards.ts";
import { requestId } from "./middleware/request-id.ts";
import { serverTiming } from "./middleware/server-timing.ts";
import { registerComponents } from "./openapi.ts";
import { clientRateLimit, rateLimit } from "./rate-limit/middleware.ts";
import { createRouter } from "./router.ts";
import { eventsRouter } from "./routes/events/index.ts";
import { healthRouter } from "./routes/health.ts";
import { meRouter } from "./routes/me.ts";
import { paywallsRouter } from "./routes/paywalls/index.ts";
import { servicesRouter } from "./routes/services/index.ts";
import { transactionsRouter } from "./routes/transactions/index.ts";
import type { AppEnv } from "./types.ts";

export const API_INFO = {
  title: "Paywall Management API",
  version: "1.1.0",
  description:
    "Manage the services and paywalls of a payment-gated API platform. Authenticate with `Authorization: Bearer <API_KEY>` or `X-Api-Key: <API_KEY>`.",
  contact: { name: "Paywall platform support", email: "support@example.com", url: "https://pay.example.com/support" },
  license: { name: "Proprietary", url: "https://pay.example.com/terms" },
};

/** The document's top level: `/openapi.json` and `/docs` both render it. */
const DOCUMENT = {
  openapi: "3.1.0",
  info: API_INFO,
  servers: [
    {
      url: "/",
      description: "This deployment (local, staging or production: the host that serves this document)",
      "x-internal": false,
    },
  ],
  tags: [
    { name: "System", description: "The API's own state, answered without a key." },
    { name: "Identity", description: "The tenant and API key behind a request." },
    { name: "Services", description: "Upstream APIs a tenant registers, with how the platform authenticates to them." },
    { name: "Paywalls", description: "Priced routes of a service (or proxied URLs), and where buyers pay for them." },
    { name: "Transactions", description: "Payments buyers made, as the payment gateway recorded them." },
    { name: "Events", description: "What happened to buyers' requests: requests, successes and errors." },
  ],
};

export function createApp() {
  const app = createRouter<AppEnv>();

  const declaredQuery = declaredQueryFrom(app.openAPIRegistry);

  // Preflights are answered by the CORS policy, before anything that could refuse them.
  app.use("*", requestId(), accessLog(), secureHeaders(), noStore(), corsPolicy());
  app.use("*", serverTiming()); // SERVER_TIMING=on only: D1/DO accounting header
  // Checks that read no body and no database: a key in the URL, a declared Content-Length over the limit.
  app.use("/v1/*", refuseKeyInUrl());
  app.on(["POST", "PATCH", "PUT"], "/v1/*", refuseDeclaredOversize());
  // What answers without a key is counted per client address (CF-Connecting-IP), before anything else it costs
  // (registered on the endpoints' own method and path: HEAD runs them too; other methods meet `authenticate`).
  app.get("/v1/health", clientRateLimit());
  app.get("/openapi.json", clientRateLimit());
  app.use("/v1/*", database());

  // Registered before `authenticate`, so it answers without a key.
  app.use("/v1/*", strictQuery(declaredQuery, "without key"));
  app.route("/v1", healthRouter);

  // Order per request: key → state → IP allowlist → rate limit → query string; each route then checks its scope and
  // only then reads its body (src/openapi.ts). A request refused with 401 is counted per client address instead of
  // per key; an unauthenticated request never has its query checked or its body read.
  app.use("/v1/*", authenticate(), rateLimit(), strictQuery(declaredQuery, "with key"));
  app.route("/v1", meRouter);
  app.route("/v1", servicesRouter);
  app.route("/v1", paywallsRouter);
  app.route("/v1", transactionsRouter);
  app.route("/v1", eventsRouter);

  registerComponents(app.openAPIRegistry);
  app.doc31("/openapi.json", DOCUMENT);
  // The tenant dashboard: HTML pages with session sign-in, outside /v1 and outside the OpenAPI document.
  app.route("/dashboard", createDashboard());
  // The payment gateway: buyers pay paywall URLs; no API key, not part of the management API's document.
  app.route("/api", gatewayRouter);

  app.notFound((c) => renderError(new ApiError("NOT_FOUND", "No such endpoint"), c));
  app.onError(renderError);
  return app;
}
