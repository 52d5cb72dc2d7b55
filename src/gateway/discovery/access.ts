import type { Context } from "hono";
import { encryptionSecret, getConfig, keyRing } from "../../core/config.ts";
import { accessPath } from "../../core/discovery/operations.ts";
import { ApiError } from "../../core/http/errors.ts";
import { caip2, networkTable } from "../../core/money/network-table.ts";
import type { NetworkId } from "../../core/money/networks.ts";
import { countClient } from "../../core/rate-limit/limiter.ts";
import type { AuthMethod } from "../../core/secrets/auth-config.ts";
import { getDb } from "../../db/client.ts";
import { claimSiwxNonce } from "../../db/discovery.ts";
import type { ServiceRow } from "../../db/schema.ts";
import { findService } from "../../db/services.ts";
import type { GatewayEnv } from "../env.ts";
import { countedRefusal, overLimit } from "../refusals.ts";
import { SIWX_HEADER, type SiwxTerms, siwxChallenge, verifySiwx } from "../siwx/sdk.ts";
import { renderOutcome } from "../transport/render.ts";
import { callUpstream, upstreamAllowed } from "../upstream/call.ts";
import { openAuthConfig } from "../upstream/credentials.ts";
import { buyerResponseHeaders, forwardableHeaders, injectAuth, targetUrl, withQuery } from "../upstream/request.ts";

/**
 * A service's `publicRoutes` and `siwxRoutes` at the payment origin (docs/discovery.md): what its discovery document
 * declares as free operations (`security: []`, no `x-payment-info`) and wallet sign-in operations (`security:
 * [{siwx: []}]`), the gateway does.
 *
 * - `GET /api/public/{serviceId}{route}`: forwarded to `baseUrl + route` with the service's credentials, no payment.
 * - `GET /api/siwx/{serviceId}{route}`: without a `SIGN-IN-WITH-X` header, the SIWX challenge (402); with a valid one,
 *   forwarded like a free route plus `X-SIWX-Address` and `X-SIWX-Chain` (the verified wallet and its CAIP-2 chain).
 *   No buyer ever sets those two: they are stripped from every buyer request (upstream/request.ts) and reserved from
 *   tenant headers (lib/header-rules.ts).
 *
 * GET only (anything else is a 405); only the listed routes (anything else is a 404); each request counted per client
 * address, like every request that carries no key, since it costs an upstream call and no one pays for it.
 */

type Ctx = Context<GatewayEnv>;
type Kind = "free" | "siwx";

/** The verified wallet, to the upstream. */
export const SIWX_ADDRESS_HEADER = "X-SIWX-Address";
export const SIWX_CHAIN_HEADER = "X-SIWX-Chain";

/** How long a free or SIWX route's upstream may take (a paid route has its paywall's `timeout`). */
export const ACCESS_TIMEOUT_MS = 30_000;

/** The service and the listed route this request is for; 404 if none, 405 for a method other than GET. */
async function accessTarget(c: Ctx, kind: Kind): Promise<{ service: ServiceRow; route: string; resourceUrl: string }> {
  const serviceId = c.req.param("serviceId") ?? "";
  const { pathname } = new URL(c.req.url);
  const prefix = accessPath(kind, serviceId, "");
  const route = pathname.startsWith(prefix) ? pathname.slice(prefix.length) : "";
  const service = route ? await findService(getDb(c.env.DB), serviceId) : undefined;
  const routes = kind === "free" ? service?.publicRoutes : service?.siwxRoutes;
  if (!service || !routes?.includes(route)) {
    throw new ApiError("NOT_FOUND", kind === "free" ? "No such free route" : "No such sign-in route");
  }
  if (c.req.method !== "GET") {
    throw new ApiError("METHOD_NOT_ALLOWED", `Method ${c.req.method} is not allowed here`, { headers: { Allow: "GET" } });
  }
  return { service, route, resourceUrl: `${new URL(getConfig(c.env).paymentBaseUrl).origin}${pathname}` };
}

/**
 * The upstream's answer to a GET on `route`, with the service's credentials and `extra` headers set last: the
 * request's query and headers, or those given (an MCP tool call's arguments, src/gateway/mcp/).
 */
export async function forward(
  c: Ctx,
  service: ServiceRow,
  route: string,
  extra: Record<string, string> = {},
  buyer: { query: URLSearchParams; headers: Headers } = {
    query: new URL(c.req.url).searchParams,
    headers: c.req.raw.headers,
  },
): Promise<Response> {
  const authConfig = await openAuthConfig(keyRing(c.env), service);
  const url = withQuery(targetUrl({ targetType: "ROUTE", targetUrl: null, targetRoute: route }, service), buyer.query, []);
  const parts = injectAuth(
    service.authMethod as AuthMethod,
    authConfig,
    { url, headers: forwardableHeaders(buyer.headers, []), body: undefined },
    { authorization: c.req.header("authorization") ?? null, method: "GET" },
  );
  for (const [name, value] of Object.entries(extra)) parts.headers.set(name, value);
  if (!upstreamAllowed(parts.url, getConfig(c.env)))
    throw new ApiError("BAD_GATEWAY", "The service's upstream address is not allowed");
  const outcome = await callUpstream("GET", parts, ACCESS_TIMEOUT_MS);
  if (outcome.kind === "timeout") {
    c.set("errorCode", "UPSTREAM_TIMEOUT");
    throw new ApiError("GATEWAY_TIMEOUT", "The upstream did not answer in time");
  }
  if (outcome.kind === "unreachable") {
    c.set("errorCode", "UPSTREAM_UNREACHABLE");
    throw new ApiError("BAD_GATEWAY", "The upstream could not be reached");
  }
  if (outcome.status >= 500) c.set("errorCode", "UPSTREAM_ERROR");
  return new Response(outcome.body, { status: outcome.status, headers: buyerResponseHeaders(outcome.headers) });
}

/** `/api/public/:serviceId/*`: a free route, forwarded without payment. */
export async function freeRoute(c: Ctx): Promise<Response> {
  const { service, route } = await accessTarget(c, "free");
  await countClient(c);
  return forward(c, service, route);
}

function siwxTerms(c: Ctx, service: ServiceRow, resourceUrl: string): SiwxTerms {
  const table = networkTable(c.env);
  const chains = [...new Set((service.networks as NetworkId[]).filter((n) => table[n]).map((n) => caip2(table[n])))];
  return {
    origin: new URL(getConfig(c.env).paymentBaseUrl).origin,
    resourceUrl,
    chains,
    statement: `Sign in to ${service.name}`,
    secret: encryptionSecret(c.env),
  };
}

/** `/api/siwx/:serviceId/*`: the SIWX challenge, or a verified wallet's request forwarded with its address. */
export async function siwxRoute(c: Ctx): Promise<Response> {
  const { service, route, resourceUrl } = await accessTarget(c, "siwx");
  await countClient(c);
  const terms = siwxTerms(c, service, resourceUrl);
  const header = c.req.header(SIWX_HEADER);
  if (!header) return siwxChallenge(terms);
  const clientIp = c.req.header("cf-connecting-ip");
  const limited = overLimit(c.env, clientIp);
  if (limited) return renderOutcome(c, limited);
  const db = getDb(c.env.DB);
  const signedIn = await verifySiwx(terms, header, (nonce, expiresAt) => claimSiwxNonce(db, nonce, expiresAt, new Date()));
  if (!signedIn.ok) {
    const { stop } = signedIn;
    return renderOutcome(c, stop.kind === "refused" ? await countedRefusal(c.env, clientIp, stop) : stop);
  }
  const wallet = signedIn.value;
  return forward(c, service, route, { [SIWX_ADDRESS_HEADER]: wallet.address, [SIWX_CHAIN_HEADER]: wallet.chainId });
}
