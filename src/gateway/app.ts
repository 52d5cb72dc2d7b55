import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { encryptionSecret, getConfig, keyRing } from "../core/config.ts";
import { ApiError } from "../core/http/errors.ts";
import { renderError } from "../core/http/render.ts";
import { recordPaymentOutcome, recordPaymentStart } from "../core/ledger/ingest.ts";
import { networkTable } from "../core/money/network-table.ts";
import { commonMode, type NetworkId, supportsMpp } from "../core/money/networks.ts";
import { VALIDITY_WINDOW_SECONDS } from "../core/payments.ts";
import { countRefusedPayment, refusedPaymentsDenial } from "../core/rate-limit/limiter.ts";
import type { AuthMethod } from "../core/secrets/auth-config.ts";
import { getDb } from "../db/client.ts";
import {
  claimSignedUrl,
  findPaymentTarget,
  findPaymentTargetOfPaywall,
  findTransactionState,
  insertSignedUrl,
  notePendingHash,
  type PaymentTarget,
  type PendingPayment,
} from "../db/gateway.ts";
import { randomHex } from "../lib/ids.ts";
import { type ChainOutcome, tempoChainOutcome, x402ChainOutcome } from "./chain-outcome.ts";
import { openAuthConfig, openPaywallHeaders } from "./credentials.ts";
import type { GatewayEnv } from "./env.ts";
import { type MppTerms, mppChallenge, mppReceiptHeader, mppRefusal, validateMpp } from "./mpp.ts";
import { type PaymentRecordIds, paymentRecordIds } from "./payment-id.ts";
import { readToken, signToken } from "./signed-url.ts";
import { callUpstream, upstreamAllowed } from "./upstream-call.ts";
import {
  BodyFieldError,
  buyerResponseHeaders,
  forwardableHeaders,
  injectAuth,
  targetUrl,
  type UpstreamParts,
  withQuery,
} from "./upstream-request.ts";
import {
  decodePayment,
  failedSettlement,
  matchPayment,
  mayStillSettle,
  PAYMENT_RESPONSE,
  PAYMENT_SIGNATURE,
  paymentRequiredResponse,
  paymentResponseHeader,
  type SettleResponse,
  settlementFailedResponse,
  validBeforeTooLate,
  type X402Session,
  x402Session,
} from "./x402.ts";

/** Largest buyer body forwarded upstream. */
const MAX_BUYER_BODY_BYTES = 1024 * 1024;
/** How long verify and settle may take at the facilitator. */
const FACILITATOR_TIMEOUT_MS = 30_000;
/** Kept free before an x402 payment expires, to settle it at the facilitator after the upstream answered. */
const X402_SETTLE_MARGIN_MS = FACILITATOR_TIMEOUT_MS;
/**
 * Kept free before an MPP payment's transaction expires, to broadcast it after the upstream answered: mppx
 * re-simulates the transaction and sends it synchronously, which on Tempo (sub-second blocks) takes about a second;
 * 5 s leaves room for a slow RPC without eating much of the ~25 s mppx's client gives a transaction.
 */
const MPP_SETTLE_MARGIN_MS = 5_000;
/** The shortest upstream call a payment may leave room for; less is refused before anything is recorded. */
const MIN_UPSTREAM_MS = 1_000;

type Ctx = Context<GatewayEnv>;

const fail = (c: Ctx, code: ConstructorParameters<typeof ApiError>[0], message: string, headers?: Record<string, string>) =>
  renderError(new ApiError(code, message, headers ? { headers } : {}), c);

/** The paywall behind the URL, refused before any payment: 404 unknown or disabled, 405 outside allowedMethods. */
async function resolveTarget(c: Ctx, protocol: "x402" | "mpp"): Promise<PaymentTarget | Response> {
  const target = await findPaymentTarget(getDb(c.env.DB), c.req.param("serviceId") ?? "", c.req.param("slug") ?? "");
  if (!target?.paywall.enabled) return fail(c, "NOT_FOUND", "No such paywall");
  const networks = target.paywall.networks;
  const table = networkTable(c.env);
  const offered = protocol === "mpp" ? supportsMpp(networks) : networks.some((n) => table[n as NetworkId]?.kind === "evm");
  if (!offered) return fail(c, "NOT_FOUND", `This paywall takes no ${protocol === "mpp" ? "MPP" : "x402"} payments`);
  if (!target.paywall.allowedMethods.includes(c.req.method)) {
    return fail(c, "METHOD_NOT_ALLOWED", `Method ${c.req.method} is not allowed here`, {
      Allow: target.paywall.allowedMethods.join(", "),
    });
  }
  return target;
}

const paymentUrl = (c: Ctx, protocol: "x402" | "mpp", t: PaymentTarget) =>
  `${getConfig(c.env).paymentBaseUrl}/api/${protocol}/pay/${encodeURIComponent(t.service.id)}/${encodeURIComponent(t.paywall.slug)}`;

function sessionFor(c: Ctx, t: PaymentTarget): Promise<X402Session> {
  const config = getConfig(c.env);
  const table = networkTable(c.env);
  const networks = t.paywall.networks as NetworkId[];
  return x402Session(
    {
      facilitatorUrl: config.facilitatorUrl[commonMode(networks) ?? t.service.mode],
      offers: networks.filter((n) => table[n]?.kind === "evm").map((network) => ({ network, entry: table[network] })),
      amount: t.paywall.price,
      payTo: t.paywall.merchantWallet,
      maxTimeoutSeconds: VALIDITY_WINDOW_SECONDS,
      resourceUrl: paymentUrl(c, "x402", t),
      description: t.paywall.description ?? t.paywall.name,
    },
    FACILITATOR_TIMEOUT_MS,
  );
}

/**
 * The upstream request for this buyer request: target, query, headers and credentials, in that precedence.
 * Refused before any payment is verified when the body cannot carry a `json-body-field` credential (400) or
 * the final URL is in a denied range (502: the paywall is misconfigured, the buyer is not charged).
 */
async function upstreamParts(c: Ctx, t: PaymentTarget, request: Request): Promise<UpstreamParts | Response> {
  const ring = keyRing(c.env);
  const [authConfig, paywallHeaders] = await Promise.all([openAuthConfig(ring, t.service), openPaywallHeaders(ring, t.paywall)]);
  const buyerUrl = new URL(request.url);
  const url = withQuery(targetUrl(t.paywall, t.service), buyerUrl.searchParams, t.paywall.queryParams ?? []);
  const headers = forwardableHeaders(request.headers, t.paywall.allowedHeaders);
  for (const { key, value } of paywallHeaders) headers.set(key, value);
  const body = request.method === "GET" ? undefined : await request.arrayBuffer();
  let parts: UpstreamParts;
  try {
    parts = injectAuth(
      t.service.authMethod as AuthMethod,
      authConfig,
      { url, headers, body: body && body.byteLength > 0 ? body : undefined },
      { authorization: request.headers.get("authorization"), method: request.method },
    );
  } catch (err) {
    if (err instanceof BodyFieldError) return fail(c, "VALIDATION_ERROR", err.message);
    throw err;
  }
  if (!upstreamAllowed(parts.url)) return fail(c, "BAD_GATEWAY", "The paywall's upstream address is not allowed");
  return parts;
}

/**
 * A refused payment attempt (not a payment, not for these terms, not valid, already used), counted against the
 * client address: over its limit, `429` instead of the refusal, and its next attempts are refused before any
 * verification (`refusedPaymentsDenial`).
 */
async function refusedAttempt(c: Ctx, refusal: Response | Promise<Response>): Promise<Response> {
  const limited = await countRefusedPayment(c);
  return limited ? renderError(limited, c) : refusal;
}

/** `429` before anything is verified when this address is over its limit of refused payment attempts. */
const deniedAttempt = (c: Ctx) => {
  const denied = refusedPaymentsDenial(c);
  return denied && renderError(denied, c);
};

/** Throws when the ingestion pipeline refuses a record: the gateway's own records must always be valid. */
function must<T>(result: { ok: true; data: T } | { ok: false; code: string; error: string }): T {
  if (!result.ok) throw new Error(`ingest refused a gateway record: ${result.code}`);
  return result.data;
}

/**
 * An outcome write: refused only as CONFLICT when the transaction is no longer PENDING, i.e. the Cron sweep
 * settled it meanwhile from the same chain facts (src/gateway/reconcile.ts); anything else throws.
 */
function mustSettle(result: { ok: true } | { ok: false; code: string; error: string }): void {
  if (!result.ok && result.code !== "CONFLICT") must(result);
}

/** `502 PAYMENT_OUTCOME_UNKNOWN`: the payment may have moved money; its transaction stays PENDING for the sweep. */
const outcomeUnknown = (c: Ctx, transactionId: string, txHash?: string, replay = false) =>
  renderError(
    new ApiError(
      "PAYMENT_OUTCOME_UNKNOWN",
      (replay
        ? "This payment is already being processed or its settlement's outcome is not known yet"
        : "The payment was sent for settlement but its outcome is not known yet") +
        ": do not pay again before checking this transaction on chain; the gateway settles it from the chain",
      { details: { transactionId, ...(txHash ? { txHash } : {}) } },
    ),
    c,
  );

/** A verified payment, protocol by protocol: who paid what, how to move the money, and how to refuse it. */
interface VerifiedPayment {
  protocol: "x402" | "mpp";
  network: NetworkId;
  payer: string;
  /** What makes the payment unique (x402: the EIP-3009 nonce; MPP: the challenge id). */
  nonce: string;
  /** Integer micro-USDC. */
  amount: string;
  /**
   * Past this instant the money can no longer be moved (x402: the authorization's `validBefore`; MPP: the earlier of
   * the challenge's expiry and the transaction's `validBefore`).
   */
  expiresAt: Date;
  /** Kept free before `expiresAt` for `settle` to finish: the upstream call gets what remains. */
  settleMarginMs: number;
  /** What settles the payment from the chain if this request cannot (stored with the PENDING transaction). */
  pending: PendingPayment;
  /** Moves the money, now; when the outcome of that is unknown, asks the chain. */
  settle(): Promise<Settlement>;
  /** The standard's refusal of this payment (already used, or expiring before the upstream could answer). */
  refuse(reason: string): Promise<Response>;
}

/**
 * How a settlement ended: the money moved (`settled`), it did not (`refused`, with the standard's answer), or
 * nobody can tell yet (`unknown`: the settlement was sent, then its answer was lost, and the chain does not show it
 * yet; `txHash` when the transaction's hash is known).
 */
type Settlement =
  | { kind: "settled"; txHash: string; headers: Record<string, string> }
  | { kind: "refused"; reason: string; response: Response }
  | { kind: "unknown"; reason: string; txHash?: string };

/** A settlement whose answer was lost, settled from the chain: `refuse` gives the standard's refusal. */
async function fromChain(
  outcome: ChainOutcome,
  settled: (txHash: string) => Promise<Record<string, string>>,
  refuse: (reason: string) => Promise<Response> | Response,
  txHash?: string,
): Promise<Settlement> {
  if (outcome.status === "COMPLETED") return { kind: "settled", txHash: outcome.txHash, headers: await settled(outcome.txHash) };
  if (outcome.status === "FAILED") {
    const reason = `settlement failed: ${outcome.reason}`;
    return { kind: "refused", reason, response: await refuse(reason) };
  }
  return { kind: "unknown", reason: `settlement outcome unknown: ${outcome.reason}`, ...(txHash ? { txHash } : {}) };
}

/**
 * A verified payment from here on, the same for both standards: record it (PENDING + REQUEST, one batch; the
 * transaction id is the payment's, so this insert decides that a payment is used once), forward, and settle only
 * when the upstream answered below 400 (COMPLETED + SUCCESS, or FAILED + ERROR, one batch each). Whatever throws on
 * the way, the transaction does not stay PENDING: it ends FAILED (or COMPLETED if the money already moved) before
 * the error reaches the error envelope. A settlement whose outcome is unknown leaves it PENDING for the Cron sweep
 * and answers 502 PAYMENT_OUTCOME_UNKNOWN (never a new 402: the buyer may have paid). The same payment sent again
 * while its transaction is PENDING gets that same 502 (same transaction id), not a challenge and not counted as a
 * refused attempt; once settled, a replay is refused with the standard's 402.
 *
 * Everything after the PENDING record runs under `waitUntil`: a buyer who disconnects does not cancel the upstream
 * call, the settlement or the outcome's record (Workers give such work 30 s after the disconnect; past that, the
 * sweep settles the PENDING transaction from the chain).
 */
async function fulfilPayment(c: Ctx, target: PaymentTarget, parts: UpstreamParts, payment: VerifiedPayment): Promise<Response> {
  const db = getDb(c.env.DB);
  const { paywall } = target;
  const { protocol, network, amount } = payment;
  // The upstream call ends in time to settle before the payment expires: an upstream answer the buyer could then not
  // pay for would be work done for free. A payment that leaves too little time is refused before anything happens.
  const budget = payment.expiresAt.getTime() - Date.now() - payment.settleMarginMs;
  const upstreamTimeout = Math.min(paywall.timeout, budget);
  if (budget < Math.min(paywall.timeout, MIN_UPSTREAM_MS)) {
    return payment.refuse("The payment expires too soon for the upstream to answer and the payment to settle: pay again");
  }
  const ids = await paymentRecordIds(protocol, network, payment.payer, payment.nonce);
  const { created } = must(
    await recordPaymentStart(
      db,
      paywall,
      { id: ids.transactionId, paywallId: paywall.id, protocol, network, amount, status: "PENDING", payerAddress: payment.payer },
      {
        id: ids.requestEventId,
        paywallId: paywall.id,
        eventType: "REQUEST",
        amount,
        metadata: { protocol, method: c.req.method, network },
      },
      payment.pending,
    ),
  );
  if (!created) {
    // The same payment again. Still PENDING (its outcome unknown, or its request still running): the answer is the
    // same 502 as before, never a new challenge, which a client would pay a second time. Settled: already used.
    const existing = await findTransactionState(db, ids.transactionId);
    if (existing?.status === "PENDING") return outcomeUnknown(c, ids.transactionId, existing.txHash ?? undefined, true);
    return payment.refuse("This payment was already used");
  }
  const work = settleAndRecord(c, target, parts, payment, ids, upstreamTimeout);
  c.executionCtx.waitUntil(work.catch(() => {}));
  return work;
}

/** The part of a payment that must finish once it is recorded PENDING (see `fulfilPayment`). */
async function settleAndRecord(
  c: Ctx,
  target: PaymentTarget,
  parts: UpstreamParts,
  payment: VerifiedPayment,
  ids: PaymentRecordIds,
  upstreamTimeout: number,
): Promise<Response> {
  const db = getDb(c.env.DB);
  const { paywall } = target;
  const { protocol, network, amount } = payment;

  let closed = false;
  let charged: { txHash: string; statusCode: number; responseTime: number | null } | undefined;
  const closeFailed = async (reason: string, statusCode: number, responseTime: number | null) => {
    mustSettle(
      await recordPaymentOutcome(
        db,
        paywall,
        ids.transactionId,
        { status: "FAILED", failureReason: reason },
        {
          id: ids.outcomeEventId,
          paywallId: paywall.id,
          eventType: "ERROR",
          statusCode,
          responseTime,
          metadata: { protocol, reason },
        },
      ),
    );
    closed = true;
  };
  const closeCompleted = async (txHash: string, statusCode: number, responseTime: number | null) => {
    charged = { txHash, statusCode, responseTime };
    mustSettle(
      await recordPaymentOutcome(
        db,
        paywall,
        ids.transactionId,
        { status: "COMPLETED", txHash },
        {
          id: ids.outcomeEventId,
          paywallId: paywall.id,
          eventType: "SUCCESS",
          statusCode,
          responseTime,
          amount,
          metadata: { protocol, network },
        },
      ),
    );
    closed = true;
  };
  /** The settlement's answer was lost and the chain does not show it yet: PENDING stays, with the hash if known. */
  const leaveUnknown = async (result: { reason: string; txHash?: string }) => {
    closed = true; // never closed FAILED on the way out: the money may have moved
    if (result.txHash) await notePendingHash(db, ids.transactionId, result.txHash);
    console.warn(JSON.stringify({ gateway: "settlement-unknown", transactionId: ids.transactionId, reason: result.reason }));
    return outcomeUnknown(c, ids.transactionId, result.txHash);
  };

  try {
    // SIGNED_URL: settle now and hand out a single-use URL; fetching it performs the upstream call.
    if (paywall.fulfillmentMode === "SIGNED_URL") {
      const result = await payment.settle();
      if (result.kind === "unknown") return await leaveUnknown(result);
      if (result.kind === "refused") {
        await closeFailed(result.reason, 402, null);
        return result.response;
      }
      await closeCompleted(result.txHash, 200, null);
      const expiresAt = new Date(Date.now() + VALIDITY_WINDOW_SECONDS * 1000);
      const id = `su_${randomHex(16)}`;
      await insertSignedUrl(db, {
        id,
        tenantId: paywall.tenantId,
        paywallId: paywall.id,
        transactionId: ids.transactionId,
        expiresAt,
      });
      const token = await signToken(encryptionSecret(c.env), id, expiresAt);
      return Response.json(
        { data: { url: `${getConfig(c.env).paymentBaseUrl}/api/signed/${token}`, expiresAt: expiresAt.toISOString() } },
        { status: 200, headers: { ...result.headers, "Cache-Control": "no-store" } },
      );
    }

    // Forward.
    const outcome = await callUpstream(c.req.method, parts, upstreamTimeout);
    if (outcome.kind === "timeout") {
      await closeFailed(`upstream timed out after ${upstreamTimeout} ms`, 504, outcome.ms);
      return fail(c, "GATEWAY_TIMEOUT", "The upstream did not answer in time; the payment was not charged");
    }
    if (outcome.kind === "unreachable") {
      await closeFailed("upstream unreachable", 502, outcome.ms);
      return fail(c, "BAD_GATEWAY", "The upstream could not be reached; the payment was not charged");
    }
    if (outcome.status >= 400) {
      await closeFailed(`upstream answered ${outcome.status}`, outcome.status, outcome.ms);
      return new Response(outcome.body, { status: outcome.status, headers: buyerResponseHeaders(outcome.headers) });
    }

    // Settle, only now.
    const result = await payment.settle();
    if (result.kind === "unknown") return await leaveUnknown(result);
    if (result.kind === "refused") {
      await closeFailed(result.reason, outcome.status, outcome.ms);
      return result.response;
    }
    await closeCompleted(result.txHash, outcome.status, outcome.ms);
    const headers = buyerResponseHeaders(outcome.headers);
    for (const [name, value] of Object.entries(result.headers)) headers.set(name, value);
    return new Response(outcome.body, { status: outcome.status, headers });
  } catch (err) {
    if (!closed) {
      // The money moved: record it as charged (one more try); otherwise nothing was charged: FAILED.
      const done = charged;
      await (done
        ? closeCompleted(done.txHash, done.statusCode, done.responseTime)
        : closeFailed("the request failed inside the gateway", 500, null)
      ).catch(() => {});
    }
    throw err;
  }
}

const errorName = (err: unknown) => (err instanceof Error ? err.name : "settle_error");

async function payX402(c: Ctx): Promise<Response> {
  const target = await resolveTarget(c, "x402");
  if (target instanceof Response) return target;
  const session = await sessionFor(c, target);
  const header = c.req.header(PAYMENT_SIGNATURE);
  if (!header) return paymentRequiredResponse(session);
  const denied = deniedAttempt(c);
  if (denied) return denied;

  const payload = decodePayment(header);
  if (!payload)
    return refusedAttempt(c, paymentRequiredResponse(session, "The PAYMENT-SIGNATURE header is not a valid x402 payment"));
  const table = networkTable(c.env);
  const matched = matchPayment(session, payload, table);
  if (!matched) {
    return refusedAttempt(c, paymentRequiredResponse(session, "The payment matches none of the accepted requirements", payload));
  }

  if (validBeforeTooLate(matched)) {
    const limit = `${matched.requirements.maxTimeoutSeconds} seconds`;
    return refusedAttempt(
      c,
      paymentRequiredResponse(
        session,
        `The payment's authorization is valid for longer than ${limit}: sign one that expires sooner`,
        payload,
      ),
    );
  }

  const parts = await upstreamParts(c, target, c.req.raw);
  if (parts instanceof Response) return parts;

  // Verify at the facilitator.
  let verified: Awaited<ReturnType<typeof session.server.verifyPayment>>;
  try {
    verified = await session.server.verifyPayment(payload, matched.requirements);
  } catch {
    return fail(c, "BAD_GATEWAY", "The payment facilitator could not verify the payment");
  }
  if (!verified.isValid) {
    return refusedAttempt(c, paymentRequiredResponse(session, verified.invalidReason ?? "The payment is not valid", payload));
  }

  const validBefore = new Date(Number(matched.validBefore) * 1000);
  // What a transfer must match to be this payment, stored with it for the sweep and checked here alike.
  const pending = {
    reference: matched.nonce.toLowerCase(),
    validBefore,
    asset: table[matched.network].asset,
    payTo: matched.requirements.payTo,
  };
  return fulfilPayment(c, target, parts, {
    protocol: "x402",
    network: matched.network,
    payer: matched.payer,
    nonce: matched.nonce,
    amount: matched.requirements.amount,
    settle: async () => {
      const networkId = matched.requirements.network;
      let failed: SettleResponse | undefined;
      try {
        const result = await session.server.settlePayment(payload, matched.requirements);
        if (result.success) {
          return { kind: "settled", txHash: result.transaction, headers: { [PAYMENT_RESPONSE]: paymentResponseHeader(result) } };
        }
        failed = result;
      } catch (err) {
        // A non-2xx settle response; `undefined` when no answer was seen at all.
        failed = failedSettlement(err);
      }
      // Not settled, or not known to be: the token says whether the authorization was used, and for what.
      const outcome = await x402ChainOutcome(table[matched.network].rpcUrl, {
        asset: pending.asset,
        payer: matched.payer as `0x${string}`,
        nonce: matched.nonce as `0x${string}`,
        validBefore,
        payTo: pending.payTo as `0x${string}`,
        amount: matched.requirements.amount,
      });
      const txHash = failed?.transaction || undefined;
      // A definite refusal (nothing was sent) stays the facilitator's refusal once the token says unused.
      if (failed && !mayStillSettle(failed) && outcome.status === "UNKNOWN" && outcome.unused) {
        const reason = `settlement failed: ${failed.errorReason ?? "unknown"}`;
        return { kind: "refused", reason, response: settlementFailedResponse(failed) };
      }
      return fromChain(
        outcome,
        async (transaction) => ({
          [PAYMENT_RESPONSE]: paymentResponseHeader({ success: true, transaction, network: networkId, payer: matched.payer }),
        }),
        (reason) => settlementFailedResponse({ success: false, transaction: "", network: networkId, errorReason: reason }),
        txHash,
      );
    },
    expiresAt: validBefore,
    settleMarginMs: X402_SETTLE_MARGIN_MS,
    pending,
    refuse: (reason) => refusedAttempt(c, paymentRequiredResponse(session, reason, payload)),
  });
}

/** The paywall's MPP terms: its tempo network from the network table, the tenant's Tempo wallet (else its primary). */
function mppTerms(c: Ctx, t: PaymentTarget): { network: NetworkId; terms: MppTerms } {
  const table = networkTable(c.env);
  const network = (t.paywall.networks as NetworkId[]).find((n) => table[n]?.kind === "tempo") as NetworkId;
  const entry = table[network];
  const terms: MppTerms = {
    secret: encryptionSecret(c.env),
    amount: t.paywall.price,
    currency: entry.asset,
    recipient: t.tenant.tempoWalletAddress ?? t.tenant.walletAddress,
    chainId: entry.chainId,
    rpcUrl: entry.rpcUrl,
    testnet: network !== "tempo",
    realm: new URL(getConfig(c.env).paymentBaseUrl).host,
    description: t.paywall.description ?? t.paywall.name,
    scope: t.paywall.id,
    validitySeconds: VALIDITY_WINDOW_SECONDS,
  };
  return { network, terms };
}

/** The first line of a payment error's message (mppx's carry details on later lines), bounded. */
const mppReason = (err: unknown) =>
  err instanceof Error && err.name !== "Error" ? `${err.name}: ${err.message.split("\n")[0]}`.slice(0, 200) : errorName(err);

async function payMpp(c: Ctx): Promise<Response> {
  const target = await resolveTarget(c, "mpp");
  if (target instanceof Response) return target;
  const { network, terms } = mppTerms(c, target);
  const authorization = c.req.header("authorization") ?? "";
  if (!/(^|,)\s*payment\s/i.test(authorization)) return mppChallenge(terms);
  const denied = deniedAttempt(c);
  if (denied) return denied;

  const parts = await upstreamParts(c, target, c.req.raw);
  if (parts instanceof Response) return parts;

  // Validate: mppx checks the challenge and simulates the transaction; nothing is sent.
  const validated = await validateMpp(terms, authorization);
  if (validated === "rpc-unreachable") {
    return fail(c, "BAD_GATEWAY", "The Tempo network could not be reached to validate the payment; nothing was charged");
  }
  if (validated instanceof Response) return refusedAttempt(c, validated);

  return fulfilPayment(c, target, parts, {
    protocol: "mpp",
    network,
    payer: validated.payer,
    nonce: validated.challengeId,
    amount: terms.amount,
    settle: async () => {
      try {
        const { txHash, receiptHeader } = await validated.broadcast();
        return { kind: "settled", txHash, headers: { "Payment-Receipt": receiptHeader } };
      } catch (err) {
        const reason = `settlement failed: ${mppReason(err)}`;
        // Refused before it was sent (expired, simulation failed): nothing moved.
        if (!validated.submitted()) return { kind: "refused", reason, response: await mppRefusal(terms, err as Error) };
        // Sent, then the answer was lost (e.g. a timeout waiting for the receipt): its receipt decides.
        const outcome = await tempoChainOutcome(terms.rpcUrl, { hash: validated.txHash, validBefore: validated.validBefore });
        return fromChain(
          outcome,
          async (txHash) => ({ "Payment-Receipt": await mppReceiptHeader(txHash) }),
          (why) => mppRefusal(terms, why),
          validated.txHash,
        );
      }
    },
    // mppx's client signs `validBefore = now + 25 s`: the transaction, not the challenge, usually expires first.
    expiresAt: new Date(Math.min(validated.expiresAt.getTime(), validated.validBefore.getTime())),
    settleMarginMs: MPP_SETTLE_MARGIN_MS,
    pending: { reference: validated.txHash, validBefore: validated.validBefore, asset: terms.currency, payTo: terms.recipient },
    refuse: (reason) => refusedAttempt(c, mppRefusal(terms, reason)),
  });
}

/** A signed URL of a SIGNED_URL paywall: valid signature, unexpired, and claimed once; then the upstream call. */
async function fulfilSignedUrl(c: Ctx): Promise<Response> {
  const secret = encryptionSecret(c.env);
  const token = await readToken(secret, c.req.param("token") ?? "");
  const now = new Date();
  if (!token || token.expiresAt <= now) return fail(c, "NOT_FOUND", "This link is invalid or has expired");
  const db = getDb(c.env.DB);
  const claimed = await claimSignedUrl(db, token.id, now);
  if (!claimed) return fail(c, "NOT_FOUND", "This link is invalid, has expired or was already used");
  const target = await findPaymentTargetOfPaywall(db, claimed.paywallId);
  if (!target) return fail(c, "NOT_FOUND", "The paywall behind this link no longer exists");
  if (!target.paywall.allowedMethods.includes(c.req.method)) {
    return fail(c, "METHOD_NOT_ALLOWED", `Method ${c.req.method} is not allowed here`, {
      Allow: target.paywall.allowedMethods.join(", "),
    });
  }
  const parts = await upstreamParts(c, target, c.req.raw);
  if (parts instanceof Response) return parts;
  const outcome = await callUpstream(c.req.method, parts, target.paywall.timeout);
  if (outcome.kind === "timeout") return fail(c, "GATEWAY_TIMEOUT", "The upstream did not answer in time");
  if (outcome.kind === "unreachable") return fail(c, "BAD_GATEWAY", "The upstream could not be reached");
  return new Response(outcome.body, { status: outcome.status, headers: buyerResponseHeaders(outcome.headers) });
}

/**
 * The payment origin's app: the buyer-facing payment URLs. No API key, no session, not part of the management API's
 * document. Every method reaches the handler so that a method outside the paywall's `allowedMethods` is a 405 with
 * `Allow`, not a 404; any other path is a 404 in the error envelope.
 */
export function createGateway() {
  const limit = bodyLimit({
    maxSize: MAX_BUYER_BODY_BYTES,
    onError: (c) => fail(c as Ctx, "VALIDATION_ERROR", "Request body too large"),
  });
  const gateway = new Hono<GatewayEnv>();
  gateway.all("/api/x402/pay/:serviceId/:slug", limit, payX402);
  gateway.all("/api/mpp/pay/:serviceId/:slug", limit, payMpp);
  gateway.all("/api/signed/:token", limit, fulfilSignedUrl);
  gateway.onError(renderError);
  return gateway;
}
