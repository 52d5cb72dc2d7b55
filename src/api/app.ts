import { ApiError } from "../core/http/errors.ts";
import { noStore } from "../core/http/no-store.ts";
import { renderError } from "../core/http/render.ts";
import { clientRateLimit } from "../core/rate-limit/limiter.ts";
import type { AppEnv } from "./env.ts";
import { authenticate } from "./middleware/auth.ts";
import { corsPolicy } from "./middleware/cors.ts";
import { database } from "./middleware/database.ts";
import { declaredQueryFrom, refuseDeclaredOversize, refuseKeyInUrl, strictQuery } from "./middleware/request-guards.ts";
import { registerComponents } from "./openapi.ts";
import { createRouter } from "./router.ts";
import { channelsRouter } from "./routes/channels/index.ts";
import { discoveryRouter } from "./routes/discovery/index.ts";
import { eventsRouter } from "./routes/events/index.ts";
import { healthRouter } from "./routes/health.ts";
import { meRouter } from "./routes/me.ts";
import { paywallsRouter } from "./routes/paywalls/index.ts";
import { servicesRouter } from "./routes/services/index.ts";
import { transactionsRouter } from "./routes/transactions/index.ts";
import { webhooksRouter } from "./routes/webhooks/index.ts";

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
    {
      name: "Channels",
      description: "Session channels buyers opened with a deposit and pay by vouchers, and what of their charge is settled.",
    },
    { name: "Events", description: "What happened to buyers' requests: requests, successes and errors." },
    {
      name: "Webhooks",
      description: "Endpoints that receive signed events (Standard Webhooks) when payments end, and their delivery log.",
    },
  ],
};

const NO_QUERY = { names: new Set<string>(), needsKey: false };

/** The management API: `/v1/*` and its document, `/openapi.json`. Any other path is a 404 in the error envelope. */
export function createApi() {
  const app = createRouter<AppEnv>();

  const declaredQuery = declaredQueryFrom(app.openAPIRegistry);

  // Preflights are answered by the CORS policy, before anything that could refuse them.
  app.use("*", noStore(), corsPolicy());
  // Checks that read no body and no database: a key in the URL, a declared Content-Length over the limit.
  app.use("/v1/*", refuseKeyInUrl());
  app.on(["POST", "PATCH", "PUT"], "/v1/*", refuseDeclaredOversize());
  // What answers without a key is counted per client address (CF-Connecting-IP), before anything else it costs
  // (registered on the endpoints' own method and path: HEAD runs them too; other methods meet `authenticate`).
  app.get("/v1/health", clientRateLimit());
  // The document takes no query parameter, like every operation that declares none.
  app.get(
    "/openapi.json",
    clientRateLimit(),
    strictQuery(() => NO_QUERY, "without key"),
  );
  app.use("/v1/*", database());

  // Registered before `authenticate`, so it answers without a key.
  app.use("/v1/*", strictQuery(declaredQuery, "without key"));
  app.route("/v1", healthRouter);

  // Order per request: key → state → IP allowlist → rate limit (all four in one call to the key's Durable Object) →
  // query string; each route then checks its scope and only then reads its body (src/api/openapi.ts). A request
  // refused with 401 is counted per client address instead of per key; an unauthenticated request never has its query
  // checked or its body read.
  app.use("/v1/*", authenticate(), strictQuery(declaredQuery, "with key"));
  app.route("/v1", meRouter);
  app.route("/v1", servicesRouter);
  app.route("/v1", discoveryRouter);
  app.route("/v1", paywallsRouter);
  app.route("/v1", transactionsRouter);
  app.route("/v1", channelsRouter);
  app.route("/v1", eventsRouter);
  app.route("/v1", webhooksRouter);

  registerComponents(app.openAPIRegistry);
  app.doc31("/openapi.json", DOCUMENT);
  app.notFound((c) => renderError(new ApiError("NOT_FOUND", "No such endpoint"), c));
  app.onError(renderError);
  return app;
}
