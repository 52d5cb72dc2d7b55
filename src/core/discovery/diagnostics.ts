import type { DiscoveryListingRow, PaywallRow, ServiceRow } from "../../db/schema.ts";
import { cacheKeyInputs, cacheRulesOf } from "../../lib/cache-rules.ts";
import { forwardedHeaderNames, headerValueProblem } from "../../lib/header-rules.ts";
import { normalizeRoute } from "../../lib/route-pattern.ts";
import type { NetworkEntry } from "../money/network-table.ts";
import type { NetworkId } from "../money/networks.ts";
import { challengeDescription, MAX_CHALLENGE_DESCRIPTION } from "../payments.ts";
import { inputExampleOf, outputExampleOf } from "./bazaar.ts";
import { exampleProblem, type JsonSchema } from "./json-schema.ts";
import {
  creationOrder,
  MAX_GUIDANCE_CHARS,
  MAX_SERVICE_OPERATIONS,
  type PaidOperation,
  type PayeeWallets,
  protocolNetworks,
  serviceOperations,
} from "./operations.ts";

/**
 * The lint of a service's discovery: what agents and their validators will find missing, wrong or surprising in
 * what the service publishes, before they find it. Levels as @agentcash/discovery uses them: `error` (an agent
 * cannot use a route), `warn` (it can, with less to go on, or a validator warns), `info` (worth knowing).
 */
export type Severity = "error" | "warn" | "info";

export interface Diagnostic {
  severity: Severity;
  code: string;
  message: string;
  /** The paywall it is about, if one. */
  paywallId?: string;
}

export interface DiagnosticsInput {
  paymentBaseUrl: string;
  table: Record<NetworkId, NetworkEntry>;
  service: ServiceRow;
  paywalls: readonly PaywallRow[];
  wallets: PayeeWallets;
  /** How many of the tenant's paywalls have no service (and so no payment URL and no document). */
  paywallsWithoutService: number;
  /** The last listing status facilitators returned, by paywall. */
  listings: readonly DiscoveryListingRow[];
}

/** The Bazaar extension's limits on `resource.serviceName` and `tags` (@x402/extensions): printable ASCII, ≤ 32. */
const BAZAAR_TEXT = /^[\x20-\x7e]{1,32}$/;
const BAZAAR_MAX_TAGS = 5;

/** Where a paywall sends buyers upstream, to compare paywalls and free routes. */
const upstreamOf = (p: PaywallRow) =>
  p.targetType === "ROUTE" ? `route:${normalizeRoute(p.targetRoute ?? "")}` : `url:${p.targetUrl}`;

function schemaDiagnostics(paywall: PaywallRow, ops: PaidOperation[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const about = { paywallId: paywall.id };
  const name = `Paywall "${paywall.slug}"`;
  const input = paywall.inputSchema as JsonSchema | null;
  if (!input) {
    out.push({
      severity: "warn",
      code: "INPUT_SCHEMA_MISSING",
      message: `${name} has no inputSchema: agents see a generic input (any query for GET, any JSON object for a body).`,
      ...about,
    });
  } else {
    const problem = exampleProblem(inputExampleOf(paywall), input);
    if (problem) {
      out.push({
        severity: "warn",
        code: "INPUT_EXAMPLE_INVALID",
        message: `${name}: the input example made from its inputSchema does not satisfy it (${problem}); facilitators refuse such a Bazaar listing. Give the properties concerned "examples".`,
        ...about,
      });
    }
    if (ops.some((op) => op.method === "GET")) {
      const nested = Object.entries(input.properties ?? {})
        .filter(([, p]) => [p.type].flat().some((t) => t === "object" || t === "array"))
        .map(([n]) => n);
      if (nested.length > 0) {
        out.push({
          severity: "warn",
          code: "QUERY_PARAMETER_NOT_SCALAR",
          message: `${name} takes GET, but its input properties ${nested.join(", ")} are objects or arrays, which a query string carries only by convention.`,
          ...about,
        });
      }
    }
  }
  if (!paywall.outputSchema) {
    out.push({
      severity: "info",
      code: "OUTPUT_SCHEMA_MISSING",
      message: `${name} has no outputSchema: agents do not know the shape of its answer before paying.`,
      ...about,
    });
  } else if (!paywall.outputExample) {
    const problem = exampleProblem(outputExampleOf(paywall), paywall.outputSchema as JsonSchema);
    if (problem) {
      out.push({
        severity: "warn",
        code: "OUTPUT_EXAMPLE_INVALID",
        message: `${name}: the output example made from its outputSchema does not satisfy it (${problem}); set outputExample.`,
        ...about,
      });
    }
  }
  if (!paywall.outputExample) {
    out.push({
      severity: "info",
      code: "OUTPUT_EXAMPLE_MISSING",
      message: `${name} has no outputExample: its 402 shows ${paywall.outputSchema ? "one made from its outputSchema" : "{}"} as the example answer.`,
      ...about,
    });
  }
  return out;
}

/** What the gateway does not do of a paywall's `cacheRules`: keys it does not act on, or rules it cannot apply. */
function cacheRulesDiagnostics(paywall: PaywallRow, service: ServiceRow): Diagnostic[] {
  const out: Diagnostic[] = [];
  const { rules, notActedOn } = cacheRulesOf(paywall.cacheRules);
  if (notActedOn.length > 0) {
    const keys = notActedOn.map(({ key, problem }) => (problem ? `${key} (${problem})` : key)).join(", ");
    out.push({
      severity: "warn",
      code: "CACHE_RULES_NOT_ACTED_ON",
      message: `Paywall "${paywall.slug}": cacheRules keys not acted on: ${keys}.`,
      paywallId: paywall.id,
    });
  }
  const why =
    paywall.fulfillmentMode !== "PROXY"
      ? "a SIGNED_URL paywall answers with a one-time URL"
      : service.authMethod === "bearer-customer"
        ? "the service forwards each buyer's own credential (bearer-customer), so its answers are the buyer's"
        : null;
  if (rules && why) {
    out.push({
      severity: "info",
      code: "CACHE_RULES_NOT_APPLIED",
      message: `Paywall "${paywall.slug}" has a ttlSeconds, but its answers are never cached: ${why}.`,
      paywallId: paywall.id,
    });
  } else if (rules) {
    const keyed = cacheKeyInputs(rules, forwardedHeaderNames(paywall.allowedHeaders));
    const query = keyed.query
      ? `the query parameters ${keyed.query.join(", ")} (the only ones forwarded)`
      : "the whole query string";
    out.push({
      severity: "info",
      code: "CACHE_KEY",
      message: `Paywall "${paywall.slug}": an answer is served from the cache for ${rules.ttlSeconds} s to requests with the same method, ${query}, headers ${keyed.headers.join(", ")} and body: everything that reaches the upstream.`,
      paywallId: paywall.id,
    });
  }
  return out;
}

/**
 * How a paywall's 402s carry its description (else its name) in their challenge headers: folded on one line and cut
 * to `MAX_CHALLENGE_DESCRIPTION` characters (info), or not at all: a text no header can carry means no challenge of
 * either standard can be built (error).
 */
function challengeTextDiagnostics(paywall: PaywallRow): Diagnostic[] {
  const text = paywall.description ?? paywall.name;
  const said = challengeDescription(paywall);
  const about = { paywallId: paywall.id };
  if (headerValueProblem(said)) {
    return [
      {
        severity: "error",
        code: "CHALLENGE_NOT_BUILDABLE",
        message: `Paywall "${paywall.slug}": its ${paywall.description === null ? "name" : "description"} cannot be carried in a 402's challenge header, so its payment URLs cannot answer with a challenge.`,
        ...about,
      },
    ];
  }
  if (said === text) return [];
  const cut = [...said].length === MAX_CHALLENGE_DESCRIPTION && [...text].length > MAX_CHALLENGE_DESCRIPTION;
  return [
    {
      severity: "info",
      code: "CHALLENGE_DESCRIPTION_FOLDED",
      message: `Paywall "${paywall.slug}": its 402s (x402 and MPP) carry its ${paywall.description === null ? "name" : "description"} on one line${cut ? `, cut to ${MAX_CHALLENGE_DESCRIPTION} characters` : ""} (line breaks, tabs and control characters become spaces); its documents keep the full text.`,
      ...about,
    },
  ];
}

/** `CREDENTIALS_OVER_HTTP`: a credential sent to a plain http:// upstream (also shown on the dashboard's services page). */
export function credentialsOverHttp(service: Pick<ServiceRow, "authMethod" | "baseUrl">): Diagnostic | undefined {
  if (service.authMethod === "none" || new URL(service.baseUrl).protocol !== "http:") return undefined;
  return {
    severity: "warn",
    code: "CREDENTIALS_OVER_HTTP",
    message: `The service sends its ${service.authMethod} credential to a plain http:// baseUrl: anyone on the way can read it. Use https://.`,
  };
}

export function discoveryDiagnostics(input: DiagnosticsInput): Diagnostic[] {
  const { service, table, paymentBaseUrl } = input;
  const out: Diagnostic[] = [];
  const paywalls = [...input.paywalls].sort(creationOrder);
  const enabled = paywalls.filter((p) => p.enabled);
  const { operations, omitted } = serviceOperations(paymentBaseUrl, service, paywalls, table, input.wallets);
  const paid = operations.filter((op): op is PaidOperation => op.kind === "paid");
  const opsOf = Map.groupBy(paid, (op) => op.paywall.id);

  if (enabled.length === 0) {
    out.push({
      severity: "warn",
      code: "NO_PAID_ROUTES",
      message: "No paywall of this service is enabled: its document lists no paid route.",
    });
  }
  for (const p of paywalls.filter((p) => !p.enabled)) {
    out.push({
      severity: "info",
      code: "PAYWALL_DISABLED",
      message: `Paywall "${p.slug}" is disabled: it is not listed, and its payment URLs answer 404.`,
      paywallId: p.id,
    });
  }
  if (input.paywallsWithoutService > 0) {
    out.push({
      severity: "info",
      code: "PAYWALLS_WITHOUT_SERVICE",
      message: `${input.paywallsWithoutService} of your paywalls have no service: they have no payment URL and appear in no discovery document.`,
    });
  }

  // Service details.
  const overHttp = credentialsOverHttp(service);
  if (overHttp) out.push(overHttp);
  if (!service.xGuidance) {
    out.push({
      severity: "info",
      code: "GUIDANCE_MISSING",
      message: "No xGuidance: agents get no instructions on how to use the routes together (info.x-guidance).",
    });
  } else if (service.xGuidance.length > MAX_GUIDANCE_CHARS) {
    out.push({
      severity: "warn",
      code: "GUIDANCE_TOO_LONG",
      message: `xGuidance has ${service.xGuidance.length} characters; validators warn above ${MAX_GUIDANCE_CHARS} and agents may cut it.`,
    });
  }
  if (!service.contactEmail) {
    out.push({
      severity: "info",
      code: "CONTACT_MISSING",
      message: "No contactEmail: crawlers such as x402scan use info.contact.email to attribute the service.",
    });
  }
  if (!service.description) {
    out.push({
      severity: "info",
      code: "DESCRIPTION_MISSING",
      message: "No description: the document says only the service's name.",
    });
  }
  if (!BAZAAR_TEXT.test(service.name)) {
    out.push({
      severity: "info",
      code: "NAME_NOT_IN_BAZAAR",
      message:
        "The service's name is longer than 32 characters or not printable ASCII: the Bazaar extension leaves serviceName out.",
    });
  }
  const goodTags = service.categories.filter((c) => BAZAAR_TEXT.test(c));
  if (goodTags.length < service.categories.length || goodTags.length > BAZAAR_MAX_TAGS) {
    out.push({
      severity: "info",
      code: "CATEGORIES_NOT_ALL_IN_BAZAAR",
      message: `The Bazaar extension carries at most ${BAZAAR_MAX_TAGS} categories of at most 32 printable ASCII characters: some are left out of its tags.`,
    });
  }

  // Operations.
  if (omitted > 0) {
    out.push({
      severity: "warn",
      code: "OPERATIONS_OMITTED",
      message: `The document lists the first ${MAX_SERVICE_OPERATIONS} paid operations; ${omitted} more are left out.`,
    });
  } else if (paid.length > 40) {
    out.push({
      severity: "warn",
      code: "OPERATIONS_MANY",
      message: `${paid.length} paid operations: validators warn above 40 per document.`,
    });
  }
  for (const p of enabled) {
    const ops = opsOf.get(p.id) ?? [];
    out.push(...schemaDiagnostics(p, ops));
    const outside = p.networks.filter((n) => !service.networks.includes(n));
    if (outside.length > 0) {
      out.push({
        severity: "warn",
        code: "NETWORK_NOT_IN_SERVICE",
        message: `Paywall "${p.slug}" accepts ${outside.join(", ")}, which the service does not list among its networks.`,
        paywallId: p.id,
      });
    }
    out.push(...challengeTextDiagnostics(p));
    out.push(...cacheRulesDiagnostics(p, service));
    const networks = protocolNetworks(p, table);
    if (networks.x402.length === 0) {
      out.push({
        severity: "info",
        code: "NOT_PROBED_BY_X402_TOOLS",
        message: `Paywall "${p.slug}" takes MPP only: x402 crawlers and validators (x402scan, the agentcash CLI) list it but do not probe or register it.`,
        paywallId: p.id,
      });
    } else if (!networks.x402.some((n) => n.id === "base")) {
      out.push({
        severity: "info",
        code: "NOT_REGISTRABLE_ON_X402SCAN",
        message: `Paywall "${p.slug}" takes x402 on ${networks.x402.map((n) => n.id).join(", ")}: x402scan registers only routes payable on Base mainnet (or Solana).`,
        paywallId: p.id,
      });
    }
  }

  // Agreement between routes: one upstream at two prices, or both free and paid.
  const byUpstream = Map.groupBy(enabled, upstreamOf);
  for (const [, group] of byUpstream) {
    const prices = new Set(group.map((p) => p.price));
    if (prices.size > 1) {
      out.push({
        severity: "warn",
        code: "PRICE_DISAGREEMENT",
        message: `Paywalls ${group.map((p) => `"${p.slug}"`).join(", ")} sell the same upstream route at different prices.`,
      });
    }
  }
  const publicRoutes = new Set(service.publicRoutes.map(normalizeRoute));
  for (const p of enabled) {
    if (p.targetType === "ROUTE" && p.targetRoute && publicRoutes.has(normalizeRoute(p.targetRoute))) {
      out.push({
        severity: "warn",
        code: "ROUTE_FREE_AND_PAID",
        message: `Paywall "${p.slug}" sells ${p.targetRoute}, which publicRoutes also gives away for free.`,
        paywallId: p.id,
      });
    }
  }
  for (const route of service.siwxRoutes) {
    if (publicRoutes.has(normalizeRoute(route))) {
      out.push({
        severity: "warn",
        code: "ROUTE_FREE_AND_SIWX",
        message: `${route} is both a public route (no sign-in) and a SIWX route: its free path lets anyone in.`,
      });
    }
  }

  // Where the documents are served.
  const base = new URL(paymentBaseUrl);
  if (base.protocol !== "https:" || ["localhost", "127.0.0.1", "[::1]"].includes(base.hostname)) {
    out.push({
      severity: "info",
      code: "ORIGIN_NOT_CRAWLABLE",
      message: `The payment origin ${base.origin} is local or plain HTTP: crawlers such as x402scan refuse it (validators still work).`,
    });
  }

  // What facilitators answered when they were asked to list a route.
  const slugs = new Map(paywalls.map((p) => [p.id, p.slug]));
  for (const listing of input.listings) {
    if (listing.status !== "rejected") continue;
    out.push({
      severity: "warn",
      code: "LISTING_REJECTED",
      message: `The facilitator refused to list paywall "${slugs.get(listing.paywallId) ?? listing.paywallId}" in its Bazaar${listing.reason ? `: ${listing.reason}` : ""}.`,
      paywallId: listing.paywallId,
    });
  }
  return out;
}
