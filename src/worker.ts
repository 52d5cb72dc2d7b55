import { type Context, Hono, type MiddlewareHandler } from "hono";
import { accepts } from "hono/accepts";
import { secureHeaders } from "hono/secure-headers";
import { createApi } from "./api/app.ts";
import { getConfig } from "./core/config.ts";
import { accessLog } from "./core/http/access-log.ts";
import type { HttpEnv } from "./core/http/env.ts";
import { ApiError } from "./core/http/errors.ts";
import { meta, renderError } from "./core/http/render.ts";
import { requestId } from "./core/http/request-id.ts";
import { serverTiming } from "./core/http/server-timing.ts";
import { isPaymentOrigin } from "./core/payments.ts";
import { createDashboard } from "./dashboard/app.tsx";
import { forgetPaymentStates } from "./db/gateway.ts";
import { createGateway } from "./gateway/app.ts";
import { paymentOriginHeaders } from "./gateway/origin-headers.ts";

/**
 * The Worker's three apps on two origins. The payment origin (the host of `PAYMENT_BASE_URL`) answers the payment
 * gateway's buyer-facing paths and nothing else; every other host is the API origin: the management API, the
 * dashboard and the static API reference, and never a payment path. A path asked on the wrong origin is a 404 in
 * the error envelope. So a page an upstream answers through a payment URL never runs on the dashboard's origin.
 */
/** What the API origin answers with 404 is looked up among the static files (the API reference, `/docs`). */
function staticAssets(): MiddlewareHandler<HttpEnv> {
  return async function staticAssets(c, next) {
    await next();
    if (c.res.status !== 404 || (c.req.method !== "GET" && c.req.method !== "HEAD")) return;
    const asset = await c.env.ASSETS.fetch(c.req.raw);
    if (asset.status !== 404) c.res = asset;
  };
}

/**
 * A write through this isolate's management API or dashboard (a paywall, a service, a wallet) is the next payment
 * request's here: the payment URLs' kept states are forgotten (other isolates honour it within PAYWALL_STATE_TTL_MS).
 */
function forgetStatesOnWrite(): MiddlewareHandler<HttpEnv> {
  return async function forgetStatesOnWrite(c, next) {
    await next();
    if (c.req.method !== "GET" && c.req.method !== "HEAD" && c.req.method !== "OPTIONS") forgetPaymentStates();
  };
}

/** Where a person or a client landing on the API origin's `/` goes next. */
const HOME_LINKS = { dashboard: "/dashboard", docs: "/docs", openapi: "/openapi.json" };

const HOME_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Paywall Management API</title></head>
<body><main><h1>Paywall Management API</h1>
<p>This is the API origin. Tenants sign in to the <a href="/dashboard">dashboard</a>; the API reference is at
<a href="/docs">/docs</a> and its OpenAPI document at <a href="/openapi.json">/openapi.json</a>.</p></main></body></html>
`;

/** `GET /` on the API origin: a page for browsers, the same links as JSON for every other client. */
function home(c: Context<HttpEnv>): Response {
  const type = accepts(c, { header: "Accept", supports: ["application/json", "text/html"], default: "application/json" });
  return type === "text/html" ? c.html(HOME_PAGE) : c.json({ data: HOME_LINKS, meta: meta(c) });
}

export function createWorker() {
  // Every request, whichever app answers it: a request id, one access-log line, and (SERVER_TIMING=on) its D1/DO account.
  const common = [requestId(), accessLog(), serverTiming()] as const;

  const apiOrigin = new Hono<HttpEnv>();
  apiOrigin.use("*", ...common, secureHeaders(), staticAssets(), forgetStatesOnWrite());
  // The tenant dashboard: HTML pages with session sign-in, outside /v1 and outside the OpenAPI document.
  apiOrigin.get("/", home);
  apiOrigin.route("/dashboard", createDashboard());
  apiOrigin.route("/", createApi());
  apiOrigin.notFound((c) => renderError(new ApiError("NOT_FOUND", "No such endpoint"), c));
  apiOrigin.onError(renderError);

  const paymentOrigin = new Hono<HttpEnv>();
  paymentOrigin.use("*", ...common, paymentOriginHeaders());
  paymentOrigin.route("/", createGateway());
  paymentOrigin.notFound((c) => renderError(new ApiError("NOT_FOUND", "No such payment URL"), c));
  paymentOrigin.onError(renderError);

  return {
    fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
      const origin = isPaymentOrigin(request.url, getConfig(env).paymentBaseUrl) ? paymentOrigin : apiOrigin;
      return origin.fetch(request, env, ctx);
    },
  };
}
