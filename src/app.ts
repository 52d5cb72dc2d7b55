import { secureHeaders } from "hono/secure-headers";
import { renderError } from "./error-handler.ts";
import { ApiError } from "./errors.ts";
import { gatewayRouter } from "./gateway/index.ts";
import { accessLog } from "./middleware/access-log.ts";
import { authenticate } from "./middleware/auth.ts";
import { database } from "./middleware/database.ts";
import { rateLimit } from "./middleware/rate-limit.ts";
import { limitBody, noStore, requireJsonBody } from "./middleware/request-guards.ts";
import { requestId } from "./middleware/request-id.ts";
import { serverTiming } from "./middleware/server-timing.ts";
import { createRouter } from "./router.ts";
import { docsPage } from "./routes/docs.ts";
import { eventsRouter } from "./routes/events/index.ts";
import { healthRouter } from "./routes/health.ts";
import { meRouter } from "./routes/me.ts";
import { paywallsRouter } from "./routes/paywalls/index.ts";
import { servicesRouter } from "./routes/services/index.ts";
import { transactionsRouter } from "./routes/transactions/index.ts";

export const API_INFO = {
  title: "Paywall Management API",
  version: "1.1.0",
  description:
    "Manage the services and paywalls of a payment-gated API platform. Authenticate with `Authorization: Bearer <API_KEY>` or `X-Api-Key: <API_KEY>`.",
};

export function createApp() {
  const app = createRouter();

  app.use("*", requestId(), accessLog(), secureHeaders(), noStore());
  app.use("*", serverTiming()); // SERVER_TIMING=on only: D1/DO accounting header
  // Only the methods whose body a route reads; a body sent with GET or DELETE is ignored.
  app.on(["POST", "PATCH", "PUT"], "/v1/*", limitBody(), requireJsonBody());
  app.use("/v1/*", database());

  // Registered before `authenticate`, so it answers without a key.
  app.route("/v1", healthRouter);

  // Order per request: key → state → IP allowlist → rate limit; each route then checks its scope.
  app.use("/v1/*", authenticate(), rateLimit());
  app.route("/v1", meRouter);
  app.route("/v1", servicesRouter);
  app.route("/v1", paywallsRouter);
  app.route("/v1", transactionsRouter);
  app.route("/v1", eventsRouter);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "`Authorization: Bearer mpk_…`",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "apiKeyHeader", {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
  });
  app.doc31("/openapi.json", { openapi: "3.1.0", info: API_INFO, servers: [{ url: "/" }] });
  // The payment gateway: buyers pay paywall URLs; no API key, not part of the management API's document.
  app.route("/api", gatewayRouter);
  app.get("/docs", (c) => c.html(docsPage(app.getOpenAPI31Document({ openapi: "3.1.0", info: API_INFO }))));

  app.notFound((c) => renderError(new ApiError("NOT_FOUND", "No such endpoint"), c));
  app.onError(renderError);
  return app;
}
