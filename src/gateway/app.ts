import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError, CLIENT_ABORT_STATUS } from "../core/http/errors.ts";
import { renderError } from "../core/http/render.ts";
import { freeRoute, siwxRoute } from "./discovery/access.ts";
import { catalogueLlms, catalogueOpenApi, favicon, serviceLlms, serviceOpenApi } from "./discovery/documents.ts";
import type { GatewayEnv } from "./env.ts";
import { mcpEndpoint } from "./mcp/endpoint.ts";
import { METHODS } from "./pipeline/methods.ts";
import { fulfilSignedUrl } from "./signed-url.ts";
import { httpHandler } from "./transport/http.ts";

/** Largest buyer body forwarded upstream. */
export const MAX_BUYER_BODY_BYTES = 1024 * 1024;

const honoBodyLimit = bodyLimit({
  maxSize: MAX_BUYER_BODY_BYTES,
  onError: () => {
    throw new ApiError("VALIDATION_ERROR", `Request body exceeds ${MAX_BUYER_BODY_BYTES} bytes`, { status: 413 });
  },
});

/**
 * Hono's body limit (413 over the limit). A chunked body is read whole there: a buyer who disconnects mid-upload
 * makes that read fail, which is the client's doing (logged 499 CLIENT_ABORTED), never a failure of ours.
 */
const limit: MiddlewareHandler<GatewayEnv> = async (c, next) => {
  let read = false;
  try {
    await honoBodyLimit(c, async () => {
      read = true;
      await next();
    });
  } catch (err) {
    if (read || err instanceof ApiError) throw err;
    c.set("errorCode", "CLIENT_ABORTED");
    throw new ApiError("VALIDATION_ERROR", "The request body was not received in full", { status: CLIENT_ABORT_STATUS });
  }
};

/**
 * The payment origin's app: the buyer-facing payment URLs. No API key, no session, not part of the management API's
 * document. Every method reaches the handler so that a method outside the paywall's `allowedMethods` is a 405 with
 * `Allow`, not a 404. Each payment method of `METHODS` (pipeline/methods.ts) is one payment URL, run by the
 * payment pipeline over the HTTP transport (transport/http.ts).
 */
export function createGateway() {
  const gateway = new Hono<GatewayEnv>();
  for (const [name, method] of Object.entries(METHODS))
    gateway.all(`/api/${name}/pay/:serviceId/:slug`, limit, httpHandler(method));
  gateway.all("/api/signed/:token", limit, fulfilSignedUrl);
  // Discovery (docs/discovery.md): what agents read, and the free and wallet sign-in routes it declares.
  gateway.get("/openapi.json", catalogueOpenApi);
  gateway.get("/llms.txt", catalogueLlms);
  gateway.get("/favicon.ico", favicon);
  gateway.get("/api/discovery/:serviceId/openapi.json", serviceOpenApi);
  gateway.get("/api/discovery/:serviceId/llms.txt", serviceLlms);
  gateway.all("/api/public/:serviceId/*", limit, freeRoute);
  gateway.all("/api/siwx/:serviceId/*", limit, siwxRoute);
  // The service's MCP server (docs/mcp.md): its paywalls and free routes as tools. Reads its own body, bounded.
  gateway.all("/api/mcp/:serviceId", mcpEndpoint);
  gateway.onError(renderError);
  return gateway;
}
