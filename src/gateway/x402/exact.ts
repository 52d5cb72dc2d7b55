import type { PaymentPayload } from "@x402/core/types";
import { getConfig } from "../../core/config.ts";
import { bazaarDeclaration } from "../../core/discovery/bazaar.ts";
import { ApiError } from "../../core/http/errors.ts";
import { caip2, networkTable } from "../../core/money/network-table.ts";
import { commonMode, type NetworkId } from "../../core/money/networks.ts";
import { challengeDescription, VALIDITY_WINDOW_SECONDS } from "../../core/payments.ts";
import type { PaymentTarget } from "../../db/gateway.ts";
import { EnvMemo } from "../../lib/env-memo.ts";
import { type ChainOutcome, settlementFromChain, x402ChainOutcome } from "../chain-outcome.ts";
import { noteListing } from "../discovery/listing.ts";
import {
  fail,
  go,
  type Outcome,
  type PaymentInput,
  type PaymentMethod,
  type PresentedPayment,
  refuse,
  type Settlement,
  type Step,
  type VerifiedPayment,
} from "../pipeline/method.ts";
import type { KnownPayment } from "../pipeline/record.ts";
import { paymentUrl } from "../target.ts";
import { presentedX402, x402CredentialDigest } from "./presented.ts";
import {
  BATCH_SETTLEMENT,
  decodePayment,
  failedSettlement,
  type MatchedPayment,
  matchPayment,
  mayStillSettle,
  PAYMENT_RESPONSE,
  paymentRequiredResponse,
  paymentResponseHeader,
  type SettleResponse,
  settlementFailedResponse,
  validBeforeCutoff,
  type X402Session,
  x402Lib,
  x402Session,
} from "./sdk.ts";
import { payBySession } from "./session.ts";
import { sealSweepSettlement } from "./sweep-settlement.ts";

// x402's `exact` scheme as a payment method of the pipeline (src/gateway/pipeline/method.ts): an EIP-3009
// authorization in `PAYMENT-SIGNATURE`, verified and settled at a facilitator.

/** How long a settle may take at a facilitator (it waits for the transfer's receipt). */
const FACILITATOR_SETTLE_TIMEOUT_MS = 30_000;

/** A payment matched to the paywall's requirements, locally. */
interface Accepted {
  payload: PaymentPayload;
  matched: MatchedPayment;
}

/**
 * Sessions by a short name of what their terms are read from in the request: the paywall's and the service's
 * versions (so they say price, payee, networks, description, schemas, name and categories), the tenant's catalog
 * version (moved by the database's triggers on any write of its services and paywalls, whatever wrote it:
 * migrations/0019; the versions above move with the API's writes) and the method; the rest comes from the env
 * (facilitators, payment origin, network table), which the memo is kept per. Building the terms (the Bazaar
 * declaration's examples) and the session is then done once per state, not on every challenge.
 */
const sessions = new EnvMemo<Promise<X402Session>>(512);

function sessionFor(env: Env, method: string, t: PaymentTarget): Promise<X402Session> {
  const name = `${t.paywall.id}:${t.paywall.version}\n${t.service.id}:${t.service.version}\n${t.catalogVersion}\n${method}`;
  return sessions.get(env, name, () => {
    const session = buildSessionFor(env, method, t);
    session.catch(() => sessions.delete(env, name, session));
    return session;
  });
}

function buildSessionFor(env: Env, method: string, t: PaymentTarget): Promise<X402Session> {
  const table = networkTable(env);
  const networks = t.paywall.networks as NetworkId[];
  const authorizerKey = getConfig(env).sessionAuthorizerKey as `0x${string}` | undefined;
  // Sessions: when the paywall takes them and the platform has its receiver authorizer; a proxied answer only.
  const sessions =
    t.paywall.sessionsEnabled && authorizerKey && t.paywall.fulfillmentMode !== "SIGNED_URL"
      ? { authorizerKey, minDeposit: t.paywall.sessionsMinDeposit ?? t.paywall.price }
      : undefined;
  return x402Session(
    {
      offers: networks.filter((n) => table[n]?.kind === "evm").map((network) => ({ network, entry: table[network] })),
      amount: t.paywall.price,
      payTo: t.paywall.merchantWallet,
      maxTimeoutSeconds: VALIDITY_WINDOW_SECONDS,
      resourceUrl: paymentUrl(env, "x402", t),
      description: challengeDescription(t.paywall),
      discovery: {
        method,
        declaration: bazaarDeclaration(t.paywall, method),
        serviceName: t.service.name,
        categories: t.service.categories,
      },
      ...(sessions ? { sessions } : {}),
    },
    {
      env,
      mode: commonMode(networks) ?? t.service.mode,
      verifyTimeoutMs: getConfig(env).facilitatorVerifyTimeoutMs,
      settleTimeoutMs: FACILITATOR_SETTLE_TIMEOUT_MS,
    },
  );
}

/**
 * The payment in `PAYMENT-SIGNATURE`, made for this payment URL (its `resource`), matched to the paywall's
 * requirements and bounded in time; else a refusal.
 */
async function acceptPayment(input: PaymentInput, session: X402Session, header: string): Promise<Step<Accepted>> {
  const refusal = async (reason: string, payload?: PaymentPayload) =>
    refuse(await paymentRequiredResponse(session, reason, payload));
  const payload = await decodedPayment(input, header);
  if (!payload) return refusal("The PAYMENT-SIGNATURE header is not a valid x402 payment");
  // A payment pays for the resource it was offered for: a paywall with the same terms elsewhere is not that one. The
  // payment URL's path names the paywall (its service and slug); the origin is the deployment's, whichever it was
  // reached at.
  if (pathOf(payload.resource?.url) !== pathOf(session.terms.resourceUrl)) {
    return refusal("The payment was made for another resource than this payment URL", payload);
  }
  const matched = matchPayment(session, payload, networkTable(input.env));
  if (!matched) return refusal("The payment matches none of the accepted requirements", payload);
  const cutoff = validBeforeCutoff(matched);
  if (BigInt(matched.validBefore) > cutoff) {
    return refusal(
      `The payment's authorization is valid until ${isoOf(matched.validBefore)}, past the latest this gateway accepts (${isoOf(cutoff)}): sign one that expires sooner`,
      payload,
    );
  }
  return go({ payload, matched });
}

/** Each request's `PAYMENT-SIGNATURE` as decoded for `present`, for `accept` to match (decoded once, never shared). */
const decoded = new WeakMap<PaymentInput, { header: string; payload: PaymentPayload | undefined }>();

async function decodedPayment(input: PaymentInput, header: string): Promise<PaymentPayload | undefined> {
  const kept = decoded.get(input);
  if (kept?.header === header) return kept.payload;
  const payload = decodePayment(await x402Lib(), header);
  decoded.set(input, { header, payload });
  return payload;
}

/** The path of a URL, `undefined` when it is not one. */
const pathOf = (url: unknown) => (typeof url === "string" && URL.canParse(url) ? new URL(url).pathname : undefined);

const isoOf = (unixSeconds: string | bigint) => new Date(Number(unixSeconds) * 1000).toISOString();

/** Verified at the facilitator; then what the sweep needs to settle it if this request cannot. */
async function verifyPayment(
  input: PaymentInput,
  target: PaymentTarget,
  session: X402Session,
  { payload, matched }: Accepted,
  presented: { paymentKey?: string; credential: string } | undefined,
): Promise<Step<VerifiedPayment<Accepted>>> {
  let verified: Awaited<ReturnType<typeof session.server.verifyPayment>>;
  try {
    verified = await session.server.verifyPayment(payload, matched.requirements);
  } catch {
    return fail(new ApiError("BAD_GATEWAY", "The payment facilitator could not verify the payment"));
  }
  if (!verified.isValid) {
    return refuse(await paymentRequiredResponse(session, verified.invalidReason ?? "The payment is not valid", payload));
  }
  const validBefore = new Date(Number(matched.validBefore) * 1000);
  // What a transfer must match to be this payment, stored with it for the sweep and checked here alike.
  const reference = matched.nonce.toLowerCase();
  const pending = {
    reference,
    validBefore,
    asset: networkTable(input.env)[matched.network].asset,
    payTo: matched.requirements.payTo,
    // For the sweep to settle it itself if this request dies after the upstream answered (./sweep-settlement.ts).
    settlement: await sealSweepSettlement(input.env, target.paywall.tenantId, reference, {
      facilitatorUrl: session.facilitator.settleOrder(payload)[0] as string, // the one that verified it
      paymentPayload: payload,
      paymentRequirements: matched.requirements,
    }),
  };
  const signature = (payload.payload as { signature?: unknown }).signature;
  return go({
    network: matched.network,
    payer: matched.payer,
    nonce: matched.nonce,
    ...(presented?.paymentKey ? { paymentKey: presented.paymentKey } : {}),
    credential: presented?.credential ?? (await x402CredentialDigest(String(signature))),
    amount: matched.requirements.amount,
    expiresAt: validBefore,
    pending,
    state: { payload, matched },
  });
}

/**
 * Settles at the facilitator that verified the payment. Anything but a success asks the token whether the
 * authorization was used, and for what (src/gateway/chain-outcome.ts): a lost or ambiguous answer is resolved from the
 * chain alone, never by asking another facilitator. Only a definite refusal (no transaction sent) that the token
 * confirms (the authorization unused) moves on to the next facilitator, while the authorization leaves a whole settle
 * timeout before it expires; the last refusal stays the buyer's answer.
 */
async function settlePayment(
  input: PaymentInput,
  target: PaymentTarget,
  session: X402Session,
  payment: VerifiedPayment<Accepted>,
): Promise<Settlement> {
  const { payload, matched } = payment.state;
  const order = session.facilitator.settleOrder(payload);
  let last: { failed: SettleResponse | undefined; outcome: ChainOutcome } | undefined;
  for (const [i, url] of order.entries()) {
    const noted = (result: SettleResponse) => noteListing(input.env, input.defer, target, url, result);
    const tried = await settleAt(session, payment, url, networkTable(input.env)[matched.network].rpcUrl, noted);
    if ("kind" in tried) return tried;
    last = tried;
    const { failed, outcome } = tried;
    const refusedUnsent = failed && !mayStillSettle(failed) && outcome.status === "UNKNOWN" && outcome.unused;
    if (!refusedUnsent) break;
    const timeLeft = payment.expiresAt.getTime() - Date.now() > FACILITATOR_SETTLE_TIMEOUT_MS;
    if (i + 1 < order.length && timeLeft) continue;
    const reason = `settlement failed: ${failed?.errorReason ?? "unknown"}`;
    return { kind: "refused", reason, response: settlementFailedResponse(session, failed as SettleResponse) };
  }
  const network = matched.requirements.network;
  return settlementFromChain(
    last?.outcome as ChainOutcome,
    async (transaction) => ({
      [PAYMENT_RESPONSE]: paymentResponseHeader(session, { success: true, transaction, network, payer: matched.payer }),
    }),
    (reason) => settlementFailedResponse(session, { success: false, transaction: "", network, errorReason: reason }),
    last?.failed?.transaction || undefined,
  );
}

/** One facilitator's settle: settled, or its failure and what the token says of the authorization. */
async function settleAt(
  session: X402Session,
  { state: { payload, matched }, pending }: VerifiedPayment<Accepted>,
  url: string,
  rpcUrl: string,
  onSettleAnswer: (result: SettleResponse) => void,
): Promise<Settlement | { failed: SettleResponse | undefined; outcome: ChainOutcome }> {
  session.facilitator.settleAt(payload, url);
  let failed: SettleResponse | undefined;
  try {
    const result = await session.server.settlePayment(payload, matched.requirements);
    onSettleAnswer(result);
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
  const outcome = await x402ChainOutcome(rpcUrl, {
    asset: pending.asset as `0x${string}`,
    payer: matched.payer as `0x${string}`,
    nonce: matched.nonce as `0x${string}`,
    validBefore: pending.validBefore,
    payTo: pending.payTo as `0x${string}`,
    amount: matched.requirements.amount,
  });
  return { failed, outcome };
}

/** x402 `exact`, one of the pipeline's methods (src/gateway/pipeline/methods.ts). */
class X402Exact implements PaymentMethod<X402Session, Accepted, Accepted> {
  readonly protocol = "x402";
  readonly label = "x402";
  /** Kept free before an x402 payment expires, to settle it at the facilitator after the upstream answered. */
  readonly settleMarginMs = FACILITATOR_SETTLE_TIMEOUT_MS;

  offeredBy(env: Env, t: PaymentTarget): boolean {
    return t.paywall.networks.some((n) => networkTable(env)[n as NetworkId]?.kind === "evm");
  }

  terms(input: PaymentInput, target: PaymentTarget): Promise<X402Session> {
    return sessionFor(input.env, input.request.method, target);
  }

  challenge(session: X402Session): Promise<Response> {
    return paymentRequiredResponse(session);
  }

  async present(input: PaymentInput, header: string): Promise<PresentedPayment | undefined> {
    const payload = await decodedPayment(input, header);
    return presentedX402(payload, networkTable(input.env), input.request.headers.get("authorization") ?? undefined);
  }

  /** A `batch-settlement` payload is paid on its channel (./session.ts), not through the pipeline. */
  async session(input: PaymentInput, header: string): Promise<Outcome | undefined> {
    const payload = await decodedPayment(input, header);
    if (payload?.accepted?.scheme !== BATCH_SETTLEMENT) return undefined;
    return payBySession(
      input,
      payload,
      (t) => this.offeredBy(input.env, t),
      (t) => sessionFor(input.env, input.request.method, t),
    );
  }

  accept(input: PaymentInput, session: X402Session, header: string): Promise<Step<Accepted>> {
    return acceptPayment(input, session, header);
  }

  verify(
    input: PaymentInput,
    target: PaymentTarget,
    session: X402Session,
    accepted: Accepted,
    presented: PresentedPayment | undefined,
  ): Promise<Step<VerifiedPayment<Accepted>>> {
    return verifyPayment(input, target, session, accepted, presented);
  }

  settle(input: PaymentInput, target: PaymentTarget, session: X402Session, payment: VerifiedPayment<Accepted>) {
    return settlePayment(input, target, session, payment);
  }

  refusal(session: X402Session, payment: VerifiedPayment<Accepted>, reason: string): Promise<Response> {
    return paymentRequiredResponse(session, reason, payment.state.payload);
  }

  async receiptHeaders(env: Env, transaction: string, known: KnownPayment): Promise<Record<string, string>> {
    const paid = networkTable(env)[known.network as NetworkId];
    if (!paid) return {};
    const result = { success: true, transaction, network: caip2(paid), payer: known.payer ?? undefined } as SettleResponse;
    return { [PAYMENT_RESPONSE]: (await x402Lib()).encodePaymentResponseHeader(result) };
  }
}

export const x402Exact = new X402Exact();
