import type { Context } from "hono";
import { getConfig } from "../../core/config.ts";
import { catalogueDocument, serviceDocument } from "../../core/discovery/document.ts";
import { catalogueLlmsTxt, serviceLlmsTxt } from "../../core/discovery/llms.ts";
import { MAX_CATALOGUE_OPERATIONS, MAX_CATALOGUE_SERVICES } from "../../core/discovery/operations.ts";
import { ApiError } from "../../core/http/errors.ts";
import { networkTable } from "../../core/money/network-table.ts";
import { countClient } from "../../core/rate-limit/limiter.ts";
import { getDb } from "../../db/client.ts";
import { findCatalogue, findCatalogueServices, findDiscoveryService } from "../../db/discovery.ts";
import { decodeBase64 } from "../../lib/base64.ts";
import type { GatewayEnv } from "../env.ts";

// The discovery files of the payment origin (docs/discovery.md): built from the rows on every request, so they say
// what the gateway answers now. Public, read by crawlers and agents: counted per client address like every request
// that carries no key, never cached.

type Ctx = Context<GatewayEnv>;

const HEADERS = { "Cache-Control": "no-store", "Access-Control-Allow-Origin": "*" };

const json = (c: Ctx, body: unknown) => c.json(body, 200, HEADERS);
const text = (c: Ctx, body: string) => c.body(body, 200, { ...HEADERS, "Content-Type": "text/plain; charset=utf-8" });

async function serviceOf(c: Ctx) {
  await countClient(c);
  const found = await findDiscoveryService(getDb(c.env.DB), c.req.param("serviceId") ?? "");
  if (!found) throw new ApiError("NOT_FOUND", "No such service");
  return { paymentBaseUrl: getConfig(c.env).paymentBaseUrl, table: networkTable(c.env), ...found };
}

/** `/api/discovery/:serviceId/openapi.json`: the service's discovery document. */
export const serviceOpenApi = async (c: Ctx) => json(c, serviceDocument(await serviceOf(c)));

/** `/api/discovery/:serviceId/llms.txt`: the service's llms.txt. */
export const serviceLlms = async (c: Ctx) => text(c, serviceLlmsTxt(await serviceOf(c)));

/** `/openapi.json`: the catalogue of every service's enabled paid routes, oldest first, bounded. */
export async function catalogueOpenApi(c: Ctx) {
  await countClient(c);
  const services = await findCatalogue(getDb(c.env.DB), MAX_CATALOGUE_OPERATIONS);
  return json(c, catalogueDocument({ paymentBaseUrl: getConfig(c.env).paymentBaseUrl, table: networkTable(c.env), services }));
}

/** `/llms.txt`: the services sold here, bounded. */
export async function catalogueLlms(c: Ctx) {
  await countClient(c);
  const services = await findCatalogueServices(getDb(c.env.DB), MAX_CATALOGUE_SERVICES);
  return text(c, catalogueLlmsTxt({ paymentBaseUrl: getConfig(c.env).paymentBaseUrl, services }));
}

/** A 16×16 PNG icon in an ICO container (validators look for an icon at the origin). */
const FAVICON = decodeBase64(
  "AAABAAEAEBAAAAEAIABYAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAQAAAAEAgCAAAAkJFoNgAAAB9JREFUeNpjkLeKJwkxkKlBb142QTSqYVQDMRpomFoB/xr/cWC4GmcAAAAASUVORK5CYII=",
)!;

export const favicon = (c: Ctx) =>
  c.body(FAVICON, 200, { "Content-Type": "image/x-icon", "Cache-Control": "public, max-age=86400" });
