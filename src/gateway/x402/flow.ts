import type { Context } from "hono";
import { getConfig } from "../../core/config.ts";
import { bazaarDeclaration } from "../../core/discovery/bazaar.ts";
import { ApiError } from "../../core/http/errors.ts";
import { networkTable } from "../../core/money/network-table.ts";
import { commonMode, type NetworkId } from "../../core/money/networks.ts";
import { challengeDescription, VALIDITY_WINDOW_SECONDS } from "../../core/payments.ts";
import type { PaymentTarget } from "../../db/gateway.ts";
import { EnvMemo } from "../../lib/env-memo.ts";
import { type ChainOutcome, x402ChainOutcome } from "../chain-outcome.ts";
import { noteListing } from "../discovery/listing.ts";
import type { GatewayEnv } from "../env.ts";
import { fulfilPayment, type PaymentRequest, type Settlement, settlementFromChain } from "../fulfil.ts";
import { requestFingerprint } from "../paid-answer.ts";
import { PaymentRefusal, refuseOverLimit } from "../refusals.ts";
import { answerResend, orKnownPayment } from "../resend.ts";
import { buyerBody, paymentUrl, resolveTarget, upstreamParts } from "../target.ts";
import { presentedX402, x402CredentialDigest } from "./presented.ts";
import {
  decodePayment,
  failedSettlement,
  type MatchedPayment,
  matchPayment,
  mayStillSettle,
  PAYMENT_RESPONSE,
  PAYMENT_SIGNATURE,
  paymentRequiredResponse,
  paymentResponseHeader,
  type SettleResponse,
  settlementFailedResponse,
  validBeforeCutoff,
  type X402Session,
  x402Session,
} from "./sdk.ts";
import { sealSweepSettlement } from "./sweep-settlement.ts";

/** How long a settle may take at a facilitator (it waits for the transfer's receipt). */
const FACILITATOR_SETTLE_TIMEOUT_MS = 30_000;
/** Kept free before an x402 payment expires, to settle it at the facilitator after the upstream answered. */
const X402_SETTLE_MARGIN_MS = FACILITATOR_SETTLE_TIMEOUT_MS;

type Ctx = Context<GatewayEnv>;

/**
 * Sessions by a short name of what their terms are read from in the request: the paywall's and the service's
 * versions (so they say price, payee, networks, description, schemas, name and categories), the tenant's catalog
 * version (moved by the database's triggers on any write of its services and paywalls, whatever wrote it:
 * migrations/0019; the versions above move with the API's writes) and the method; the rest comes from the env
 * (facilitators, payment origin, network table), which the memo is kept per. Building the terms (the Bazaar
 * declaration's examples) and the session is then done once per state, not on every challenge.
 */
const sessions = new EnvMemo<Promise<X402Session>>(512);

function sessionFor(c: Ctx, t: PaymentTarget): Promise<X402Session> {
  const name = `${t.paywall.id}:${t.paywall.version}\n${t.service.id}:${t.service.version}\n${t.catalogVersion}\n${c.req.method}`;
  return sessions.get(c.env, name, () => {
    const session = buildSessionFor(c, t);
    session.catch(() => sessions.delete(c.env, name, session));
    return session;
  });
}

function buildSessionFor(c: Ctx, t: PaymentTarget): Promise<X402Session> {
  const config = getConfig(c.env);
  const table = networkTable(c.env);
  const networks = t.paywall.networks as NetworkId[];
  return x402Session(
    {
      offers: networks.filter((n) => table[n]?.kind === "evm").map((network) => ({ network, entry: table[network] })),
      amount: t.paywall.price,
      payTo: t.paywall.merchantWallet,
      maxTimeoutSeconds: VALIDITY_WINDOW_SECONDS,
      resourceUrl: paymentUrl(c, "x402", t),
      description: challengeDescription(t.paywall),
      discovery: {
        method: c.req.method,
        declaration: bazaarDeclaration(t.paywall, c.req.method),
        serviceName: t.service.name,
        categories: t.service.categories,
      },
    },
    {
      env: c.env,
      mode: commonMode(networks) ?? t.service.mode,
      verifyTimeoutMs: config.facilitatorVerifyTimeoutMs,
      settleTimeoutMs: FACILITATOR_SETTLE_TIMEOUT_MS,
    },
  );
}

/**
 * The payment in `PAYMENT-SIGNATURE`, made for this payment URL (its `resource`), matched to the paywall's
 * requirements and bounded in time; else a refusal.
 */
async function acceptablePayment(session: X402Session, header: string, table: ReturnType<typeof networkTable>) {
  const refuse = async (reason: string, payload?: Parameters<typeof paymentRequiredResponse>[2]) =>
    new PaymentRefusal(await paymentRequiredResponse(session, reason, payload));
  const payload = decodePayment(session, header);
  if (!payload) throw await refuse("The PAYMENT-SIGNATURE header is not a valid x402 payment");
  // A payment pays for the resource it was offered for: a paywall with the same terms elsewhere is not that one. The
  // payment URL's path names the paywall (its service and slug); the origin is the deployment's, whichever it was
  // reached at.
  if (pathOf(payload.resource?.url) !== pathOf(session.terms.resourceUrl)) {
    throw await refuse("The payment was made for another resource than this payment URL", payload);
  }
  const matched = matchPayment(session, payload, table);
  if (!matched) throw await refuse("The payment matches none of the accepted requirements", payload);
  const cutoff = validBeforeCutoff(matched);
  if (BigInt(matched.validBefore) > cutoff) {
    throw await refuse(
      `The payment's authorization is valid until ${isoOf(matched.validBefore)}, past the latest this gateway accepts (${isoOf(cutoff)}): sign one that expires sooner`,
      payload,
    );
  }
  return { payload, matched };
}

/** The path of a URL, `undefined` when it is not one. */
const pathOf = (url: unknown) => (typeof url === "string" && URL.canParse(url) ? new URL(url).pathname : undefined);

const isoOf = (unixSeconds: string | bigint) => new Date(Number(unixSeconds) * 1000).toISOString();

/**
 * `/api/x402/pay/:serviceId/:slug`: the 402 challenge, or a payment verified, forwarded and settled; a payment the
 * gateway already knows (the same credential, or a new one under the same `payment-identifier`) gets its answer
 * (src/gateway/resend.ts) without reaching the facilitator, the upstream or the chain.
 */
export async function payX402(c: Ctx): Promise<Response> {
  const header = c.req.header(PAYMENT_SIGNATURE);
  if (!header) {
    c.set("challenge", true);
    return paymentRequiredResponse(await sessionFor(c, await resolveTarget(c, "x402")));
  }
  refuseOverLimit(c);

  const table = networkTable(c.env);
  const presented = await presentedX402(header, table, c.req.header("authorization"));
  const fingerprint = await requestFingerprint(c.req.method, c.req.url, await buyerBody(c));
  const resent = presented && (await answerResend(c, presented, fingerprint));
  if (resent) return resent;
  return orKnownPayment(c, presented, fingerprint, () => payNewX402(c, header, { presented, fingerprint }));
}

/** A payment the gateway has not seen: matched, verified at the facilitator, and fulfilled. */
async function payNewX402(c: Ctx, header: string, request: PaymentRequest): Promise<Response> {
  const target = await resolveTarget(c, "x402");
  const session = await sessionFor(c, target);
  const table = networkTable(c.env);
  const { payload, matched } = await acceptablePayment(session, header, table);
  const parts = await upstreamParts(c, target, c.req.raw);

  // Verify at the facilitator.
  let verified: Awaited<ReturnType<typeof session.server.verifyPayment>>;
  try {
    verified = await session.server.verifyPayment(payload, matched.requirements);
  } catch {
    throw new ApiError("BAD_GATEWAY", "The payment facilitator could not verify the payment");
  }
  if (!verified.isValid) {
    throw new PaymentRefusal(
      await paymentRequiredResponse(session, verified.invalidReason ?? "The payment is not valid", payload),
    );
  }

  const validBefore = new Date(Number(matched.validBefore) * 1000);
  // What a transfer must match to be this payment, stored with it for the sweep and checked here alike.
  const reference = matched.nonce.toLowerCase();
  const pending = {
    reference,
    validBefore,
    asset: table[matched.network].asset,
    payTo: matched.requirements.payTo,
    // For the sweep to settle it itself if this request dies after the upstream answered (./sweep-settlement.ts).
    settlement: await sealSweepSettlement(c.env, target.paywall.tenantId, reference, {
      facilitatorUrl: session.facilitator.settleOrder(payload)[0] as string, // the one that verified it
      paymentPayload: payload,
      paymentRequirements: matched.requirements,
    }),
  };
  const signature = (payload.payload as { signature?: unknown }).signature;
  return fulfilPayment(
    c,
    target,
    parts,
    {
      protocol: "x402",
      network: matched.network,
      payer: matched.payer,
      nonce: matched.nonce,
      ...(request.presented?.paymentKey ? { paymentKey: request.presented.paymentKey } : {}),
      credential: request.presented?.credential ?? (await x402CredentialDigest(String(signature))),
      amount: matched.requirements.amount,
      settle: () =>
        settleX402(session, payload, matched, pending, table[matched.network].rpcUrl, (url, result) =>
          noteListing(c, target, url, result),
        ),
      expiresAt: validBefore,
      settleMarginMs: X402_SETTLE_MARGIN_MS,
      pending,
      refuse: (reason) => paymentRequiredResponse(session, reason, payload),
    },
    request,
  );
}

/**
 * Settles at the facilitator that verified the payment. Anything but a success asks the token whether the
 * authorization was used, and for what (src/gateway/chain-outcome.ts): a lost or ambiguous answer is resolved from the
 * chain alone, never by asking another facilitator. Only a definite refusal (no transaction sent) that the token
 * confirms (the authorization unused) moves on to the next facilitator, while the authorization leaves a whole settle
 * timeout before it expires; the last refusal stays the buyer's answer.
 */
async function settleX402(
  session: X402Session,
  payload: NonNullable<ReturnType<typeof decodePayment>>,
  matched: MatchedPayment,
  pending: { asset: `0x${string}`; payTo: string; validBefore: Date },
  rpcUrl: string,
  onSettleAnswer?: (facilitatorUrl: string, result: SettleResponse) => void,
): Promise<Settlement> {
  const network = matched.requirements.network;
  const order = session.facilitator.settleOrder(payload);
  let failed: SettleResponse | undefined;
  let outcome: ChainOutcome | undefined;
  for (const [i, url] of order.entries()) {
    session.facilitator.settleAt(payload, url);
    failed = undefined;
    try {
      const result = await session.server.settlePayment(payload, matched.requirements);
      onSettleAnswer?.(url, result);
      if (result.success) {
        return {
          kind: "settled",
          txHash: result.transaction,
          headers: { [PAYMENT_RESPONSE]: paymentResponseHeader(session, result) },
        };
      }
      failed = result;
    } catch (err) {
      failed = failedSettlement(session, err); // a non-2xx settle response; `undefined` when no answer was seen at all
    }
    outcome = await x402ChainOutcome(rpcUrl, {
      asset: pending.asset,
      payer: matched.payer as `0x${string}`,
      nonce: matched.nonce as `0x${string}`,
      validBefore: pending.validBefore,
      payTo: pending.payTo as `0x${string}`,
      amount: matched.requirements.amount,
    });
    const refusedUnsent = failed && !mayStillSettle(failed) && outcome.status === "UNKNOWN" && outcome.unused;
    if (!refusedUnsent) break;
    const timeLeft = pending.validBefore.getTime() - Date.now() > FACILITATOR_SETTLE_TIMEOUT_MS;
    if (i + 1 < order.length && timeLeft) continue;
    return {
      kind: "refused",
      reason: `settlement failed: ${failed?.errorReason ?? "unknown"}`,
      response: settlementFailedResponse(session, failed as SettleResponse),
    };
  }
  return settlementFromChain(
    outcome as ChainOutcome,
    async (transaction) => ({
      [PAYMENT_RESPONSE]: paymentResponseHeader(session, { success: true, transaction, network, payer: matched.payer }),
    }),
    (reason) => settlementFailedResponse(session, { success: false, transaction: "", network, errorReason: reason }),
    failed?.transaction || undefined,
  );
}
