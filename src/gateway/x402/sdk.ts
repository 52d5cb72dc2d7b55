import type { x402ResourceServer } from "@x402/core/server";
import type {
  PaymentPayload,
  PaymentRequired,
  PaymentRequirements,
  ResourceInfo,
  SettleResponse,
  SupportedKind,
} from "@x402/core/types";
import type { BazaarDeclaration } from "../../core/discovery/bazaar.ts";
import { caip2, type NetworkEntry, networkOfCaip2 } from "../../core/money/network-table.ts";
import type { NetworkId } from "../../core/money/networks.ts";
import { randomHex } from "../../lib/ids.ts";
import { type FacilitatorChoice, FailoverFacilitator } from "./facilitators.ts";

/**
 * The x402 v2 side of the gateway, built from `@x402/core`'s resource server and `@x402/evm`'s `exact` scheme:
 * the SDK builds the requirements, matches a payment to them, and talks to the facilitator; nothing here
 * writes the wire format by hand. The SDK is loaded with the first session (`lib.ts`): an isolate that answers
 * the management API never evaluates it.
 */

export const x402Lib = () => import("./lib.ts");
type Lib = Awaited<ReturnType<typeof x402Lib>>;

export const PAYMENT_SIGNATURE = "PAYMENT-SIGNATURE";
export const PAYMENT_REQUIRED = "PAYMENT-REQUIRED";
export const PAYMENT_RESPONSE = "PAYMENT-RESPONSE";

export interface X402Offer {
  network: NetworkId;
  entry: NetworkEntry;
}

export interface X402Terms {
  offers: X402Offer[];
  /** Integer micro-USDC (USDC's 6-decimal atomic unit), passed through as a string. */
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  resourceUrl: string;
  description: string;
  /** The Bazaar extension of the 402 (docs/discovery.md): for the request's method, so a session is per method. */
  discovery?: X402Discovery;
  /** Sessions offered (x402 `batch-settlement`, docs/sessions.md): beside each `exact` requirement, one on a channel. */
  sessions?: X402Sessions;
}

export interface X402Sessions {
  /** The platform's receiver authorizer: signs claims and refunds. Never leaves the Worker. */
  authorizerKey: `0x${string}`;
  /** Integer micro-USDC: the least first deposit a channel takes (`extra.minDeposit`). */
  minDeposit: string;
}

/** The scheme of x402 sessions. */
export const BATCH_SETTLEMENT = "batch-settlement";

/** The channels' withdraw delay (seconds): the scheme's minimum. */
const WITHDRAW_DELAY_SECONDS = 900;

export interface X402Discovery {
  method: string;
  declaration: BazaarDeclaration;
  /** The service's name and categories: the 402's `resource.serviceName` and `tags` where the extension's limits allow. */
  serviceName: string;
  categories: string[];
}

export interface X402Session {
  /** The SDK, loaded for the session's first use. */
  sdk: Lib;
  server: x402ResourceServer;
  /** The paywall's facilitators, behind the resource server (./facilitators.ts). */
  facilitator: FailoverFacilitator;
  requirements: PaymentRequirements[];
  terms: X402Terms;
  /**
   * What the 402 names as the resource, and its extensions: the Bazaar declaration (enriched for the method) when the
   * paywall is discoverable, and `payment-identifier` (optional), so a buyer may retry a payment under an id of its own.
   */
  resource: ResourceInfo;
  extensions: Record<string, unknown>;
}

/** A session's plain challenge (no error, no payment), built once per session. */
const plainChallenges = new WeakMap<X402Session, Promise<PaymentRequired>>();

/**
 * The extension every 402 names its own random nonce in. x402 clients copy a 402's extensions into the payment they
 * make (`@x402/core`'s client merges them), so a payment carries the nonce of the challenge it was made from: a
 * secret between the buyer and the gateway the chain never shows. The gateway keeps no record of it: it binds the
 * payment's kept answer to it (src/gateway/paid-answer.ts `buyerProof`), so only the buyer's own resend is answered.
 */
export const CHALLENGE_NONCE = "challenge-nonce";

const nonceSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { nonce: { type: "string", pattern: "^[0-9a-f]{32}$" } },
  required: ["nonce"],
} as const;

/** The challenge nonce a payment carries, when it carries one of the shape the gateway issues. */
export function challengeNonceOf(payload: PaymentPayload): string | undefined {
  const nonce = (payload.extensions?.[CHALLENGE_NONCE] as { info?: { nonce?: unknown } } | undefined)?.info?.nonce;
  return typeof nonce === "string" && /^[0-9a-f]{32}$/.test(nonce) ? nonce : undefined;
}

/**
 * A resource server for one paywall and the requirements it accepts: one `exact` requirement per EVM network. The
 * gateway's flow keeps each session for the paywall's state (src/gateway/x402/exact.ts), so it is built once per state.
 */
export async function x402Session(terms: X402Terms, facilitators: FacilitatorChoice): Promise<X402Session> {
  const schemes = terms.sessions ? ["exact", BATCH_SETTLEMENT] : ["exact"];
  const kinds = terms.offers.flatMap((o) =>
    schemes.map((scheme) => ({ x402Version: 2, scheme, network: caip2(o.entry) }) as SupportedKind),
  );
  const sdk = await x402Lib();
  const facilitator = new FailoverFacilitator(sdk, facilitators, kinds);
  const server = new sdk.x402ResourceServer(facilitator);
  const exact = new sdk.ExactEvmScheme();
  // Builds the `batch-settlement` requirements only (its own `enhancePaymentRequirements`): the channels are served by
  // their objects (src/core/sessions/), never by this server.
  const batch =
    terms.sessions &&
    new sdk.BatchSettlementEvmScheme(terms.payTo as `0x${string}`, {
      receiverAuthorizerSigner: sdk.privateKeyToAccount(terms.sessions.authorizerKey),
      withdrawDelay: WITHDRAW_DELAY_SECONDS,
    });
  for (const kind of kinds) server.register(kind.network, kind.scheme === "exact" ? exact : (batch as never));
  await server.initialize();
  const requirements = await server.buildPaymentRequirementsFromOptions(
    terms.offers.flatMap((o) =>
      schemes.map((scheme) => ({
        scheme,
        network: caip2(o.entry),
        payTo: terms.payTo,
        // An AssetAmount: the atomic amount as given, never converted through a decimal price.
        price: {
          amount: terms.amount,
          asset: o.entry.asset,
          extra: { ...o.entry.eip712, ...(scheme === BATCH_SETTLEMENT ? { minDeposit: terms.sessions?.minDeposit } : {}) },
        },
        maxTimeoutSeconds: terms.maxTimeoutSeconds,
      })),
    ),
    undefined,
  );
  const { resource, extensions } = discoveryOf(sdk, server, terms);
  const retry = { [sdk.PAYMENT_IDENTIFIER]: sdk.declarePaymentIdentifierExtension(false) };
  return { sdk, server, facilitator, requirements, terms, resource, extensions: { ...extensions, ...retry } };
}

/**
 * The 402's resource and Bazaar extension: `declareDiscoveryExtension` from the paywall's input and output, then
 * enriched by the extension's own hook for the method (as `@x402/core`'s HTTP server does for each request).
 * `serviceName` and `tags` only within the extension's limits: outside them a facilitator would refuse the payload.
 */
function discoveryOf(sdk: Lib, server: x402ResourceServer, terms: X402Terms) {
  const resource: ResourceInfo = { url: terms.resourceUrl, description: terms.description, mimeType: "" };
  const discovery = terms.discovery;
  if (!discovery) return { resource, extensions: undefined };
  server.registerExtension(sdk.bazaarResourceServerExtension);
  const { sessions, ...declaration } = discovery.declaration;
  const declared = withSessions(
    sdk.declareDiscoveryExtension(declaration as Parameters<Lib["declareDiscoveryExtension"]>[0]),
    sessions,
  );
  const path = new URL(terms.resourceUrl).pathname;
  const context = { method: discovery.method, path, adapter: { getPath: () => path, getMethod: () => discovery.method } };
  const extensions = server.enrichExtensions(declared, context as never);
  const tags = sdk.sanitizeTags(discovery.categories);
  return {
    resource: {
      ...resource,
      ...(sdk.isValidServiceName(discovery.serviceName) ? { serviceName: discovery.serviceName } : {}),
      ...(tags ? { tags } : {}),
    },
    extensions,
  };
}

/** The session terms' schema in the extension, so `info` still validates against the extension's own `schema`. */
const SESSIONS_SCHEMA = {
  type: "object",
  properties: {
    scheme: { type: "string", const: "batch-settlement" },
    minDeposit: { type: "string", pattern: "^[1-9][0-9]*$" },
    minDepositUsd: { type: "string" },
  },
  required: ["scheme", "minDeposit"],
};

/** The declared Bazaar extension with the paywall's session terms beside its input and output (docs/discovery.md). */
function withSessions<T extends Record<string, unknown>>(declared: T, sessions: BazaarDeclaration["sessions"]): T {
  const bazaar = declared.bazaar as { info: object; schema: { properties: object } } | undefined;
  if (!sessions || !bazaar) return declared;
  return {
    ...declared,
    bazaar: {
      ...bazaar,
      info: { ...bazaar.info, sessions },
      schema: { ...bazaar.schema, properties: { ...bazaar.schema.properties, sessions: SESSIONS_SCHEMA } },
    },
  };
}

const paymentRequiredOf = (
  session: X402Session,
  error?: string,
  payload?: PaymentPayload,
  accepts = session.requirements,
): Promise<PaymentRequired> =>
  session.server.createPaymentRequiredResponse(accepts, session.resource, error, session.extensions, undefined, payload);

/**
 * The `402` answer: `PAYMENT-REQUIRED` carries the challenge (base64 JSON), the body is `{}` as the SDK's own server
 * sends. The plain challenge (no payment sent) is the same for every request of a session but for its nonce: built
 * once, encoded with a fresh nonce each time.
 */
export async function paymentRequiredResponse(
  session: X402Session,
  error?: string,
  payload?: PaymentPayload,
  accepts?: PaymentRequirements[],
): Promise<Response> {
  let challenge: Promise<PaymentRequired> | undefined;
  if (error === undefined && payload === undefined && accepts === undefined) {
    challenge = plainChallenges.get(session);
    if (!challenge) {
      challenge = paymentRequiredOf(session);
      plainChallenges.set(session, challenge);
      challenge.catch(() => plainChallenges.delete(session));
    }
  } else {
    challenge = paymentRequiredOf(session, error, payload, accepts);
  }
  const required = await challenge;
  const nonce = { [CHALLENGE_NONCE]: { info: { nonce: randomHex(16) }, schema: nonceSchema } };
  const header = session.sdk.encodePaymentRequiredHeader({ ...required, extensions: { ...required.extensions, ...nonce } });
  return Response.json({}, { status: 402, headers: { [PAYMENT_REQUIRED]: header, "Cache-Control": "no-store" } });
}

/** The `402` answer after a failed settlement: `PAYMENT-RESPONSE` carries the failed settle result. */
export function settlementFailedResponse(session: X402Session, result: SettleResponse): Response {
  return Response.json({}, { status: 402, headers: { [PAYMENT_RESPONSE]: session.sdk.encodePaymentResponseHeader(result) } });
}

export const paymentResponseHeader = (session: X402Session, result: SettleResponse) =>
  session.sdk.encodePaymentResponseHeader(result);

/** `@x402/evm`'s answer for a settlement it broadcast but could not confirm (its receipt wait failed). */
export const SETTLEMENT_PENDING = "settlement_pending";

/**
 * The facilitator's settle answer when it is not a success: returned (200 `success: false`) or thrown as a
 * `SettleError` (a non-2xx settle response). `undefined` when no answer was seen (timeout, dropped connection, an
 * answer that is not a settle response): then the authorization may have been used.
 */
export const failedSettlement = (session: X402Session, err: unknown): SettleResponse | undefined =>
  err instanceof session.sdk.SettleError
    ? {
        success: false,
        transaction: err.transaction ?? "",
        network: err.network,
        errorReason: err.errorReason,
        ...(err.errorMessage ? { errorMessage: err.errorMessage } : {}),
      }
    : undefined;

/**
 * Whether a failed settlement may still move the money: no answer at all, `settlement_pending` (sent, not
 * confirmed), or any answer that carries a transaction hash (a transaction was broadcast). Only a refusal without
 * a transaction (invalid signature, insufficient funds, …) says nothing was sent.
 */
export const mayStillSettle = (result: SettleResponse | undefined) =>
  !result || result.errorReason === SETTLEMENT_PENDING || !!result.transaction;
export type { SettleResponse };

/** The payment in `PAYMENT-SIGNATURE`, or `undefined` when it does not decode. */
export function decodePayment(sdk: Lib, header: string): PaymentPayload | undefined {
  try {
    const payload = sdk.decodePaymentSignatureHeader(header);
    return payload && typeof payload === "object" ? payload : undefined;
  } catch {
    return undefined;
  }
}

export interface MatchedPayment {
  requirements: PaymentRequirements;
  network: NetworkId;
  /** The EIP-3009 authorization's signer and nonce: what makes this payment unique on its chain. */
  payer: string;
  nonce: string;
  /** The authorization's `validBefore` (unix seconds, decimal): settlement must happen before it. */
  validBefore: string;
}

/** The requirement the payment was made for, and who signed which authorization; `undefined` if none matches. */
export function matchPayment(session: X402Session, payload: PaymentPayload, table: Record<NetworkId, NetworkEntry>) {
  if (payload.x402Version !== 2) return undefined;
  const requirements = session.server.findMatchingRequirements(session.requirements, payload);
  if (!requirements) return undefined;
  const network = networkOfCaip2(
    table,
    session.terms.offers.map((o) => o.network),
    requirements.network,
  );
  const authorization = (payload.payload as { authorization?: { from?: unknown; nonce?: unknown; validBefore?: unknown } })
    .authorization;
  const payer = authorization?.from;
  const nonce = authorization?.nonce;
  const validBefore = authorization?.validBefore;
  if (!network || typeof payer !== "string" || typeof nonce !== "string") return undefined;
  if (typeof validBefore !== "string" || !/^[0-9]{1,15}$/.test(validBefore)) return undefined;
  if (!/^0x[0-9a-fA-F]{40}$/.test(payer) || !/^0x[0-9a-fA-F]{64}$/.test(nonce)) return undefined;
  return { requirements, network, payer, nonce, validBefore } satisfies MatchedPayment;
}

/** Clock difference allowed between the buyer and the gateway when bounding an authorization's `validBefore`. */
export const VALID_BEFORE_SKEW_SECONDS = 60;

/**
 * The latest `validBefore` (unix seconds) an authorization may carry: now + the requirement's `maxTimeoutSeconds` + a
 * small skew. An authorization valid for longer would keep an unsettled payment "still able to move" that long.
 */
export const validBeforeCutoff = (matched: MatchedPayment, now = Date.now()) =>
  BigInt(Math.floor(now / 1000) + matched.requirements.maxTimeoutSeconds + VALID_BEFORE_SKEW_SECONDS);
