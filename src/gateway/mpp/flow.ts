import type { Context } from "hono";
import { encryptionSecret, getConfig } from "../../core/config.ts";
import { networkTable } from "../../core/money/network-table.ts";
import type { NetworkId } from "../../core/money/networks.ts";
import { challengeDescription, VALIDITY_WINDOW_SECONDS } from "../../core/payments.ts";
import type { PaymentTarget } from "../../db/gateway.ts";
import { EnvMemo } from "../../lib/env-memo.ts";
import { tempoChainOutcome } from "../chain-outcome.ts";
import type { GatewayEnv } from "../env.ts";
import { fulfilPayment, type PaymentRequest, type Settlement, settlementFromChain } from "../fulfil.ts";
import { requestFingerprint } from "../paid-answer.ts";
import { refuseOverLimit } from "../refusals.ts";
import { answerResend, orKnownPayment } from "../resend.ts";
import { buyerBody, resolveTarget, upstreamParts } from "../target.ts";
import {
  type MppTerms,
  mppChallenge,
  mppReceiptHeader,
  mppRefusal,
  mppRetryKey,
  presentedMpp,
  type ValidatedMpp,
  validateMpp,
} from "./sdk.ts";

/**
 * Kept free before an MPP payment's transaction expires, to broadcast it after the upstream answered: mppx
 * re-simulates the transaction and sends it synchronously, which on Tempo (sub-second blocks) takes about a second;
 * 5 s leaves room for a slow RPC without eating much of the ~25 s mppx's client gives a transaction.
 */
const MPP_SETTLE_MARGIN_MS = 5_000;

type Ctx = Context<GatewayEnv>;

/**
 * The paywall's MPP terms, built once per isolate for the same state: its service's version (moved by every write of
 * the service or of any of its paywalls, through any path: migrations/0007), the tenant's wallets, and the env
 * (network table, payment origin, key), which the memo is kept per.
 */
const termsMemo = new EnvMemo<{ network: NetworkId; terms: MppTerms }>(512);

function mppTerms(c: Ctx, t: PaymentTarget): { network: NetworkId; terms: MppTerms } {
  const name = `${t.paywall.id}\n${t.service.id}:${t.service.version}\n${t.tenant.tempoWalletAddress ?? ""}\n${t.tenant.walletAddress}`;
  return termsMemo.get(c.env, name, () => buildMppTerms(c, t));
}

/** The paywall's MPP terms: its tempo network from the network table, the tenant's Tempo wallet (else its primary). */
function buildMppTerms(c: Ctx, t: PaymentTarget): { network: NetworkId; terms: MppTerms } {
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
    description: challengeDescription(t.paywall),
    scope: t.paywall.id,
    validitySeconds: VALIDITY_WINDOW_SECONDS,
  };
  return { network, terms };
}

/** The first line of a payment error's message (mppx's carry details on later lines), bounded. */
const mppReason = (err: unknown) =>
  err instanceof Error && err.name !== "Error"
    ? `${err.name}: ${err.message.split("\n")[0]}`.slice(0, 200)
    : err instanceof Error
      ? err.name
      : "settle_error";

/**
 * `/api/mpp/pay/:serviceId/:slug`: the 402 challenge, or a credential validated, forwarded and broadcast; a credential
 * whose challenge was already paid gets that payment's answer (src/gateway/resend.ts): the same credential without
 * reaching the upstream or the chain, a new transaction for the same challenge once mppx validated it.
 */
export async function payMpp(c: Ctx): Promise<Response> {
  const authorization = c.req.header("authorization") ?? "";
  if (!/(^|,)\s*payment\s/i.test(authorization)) {
    c.set("challenge", true);
    const target = await resolveTarget(c, "mpp");
    return mppChallenge(mppTerms(c, target).terms);
  }
  refuseOverLimit(c);

  const presented = await presentedMpp(authorization);
  const fingerprint = await requestFingerprint(c.req.method, c.req.url, await buyerBody(c));
  const resent = presented && (await answerResend(c, presented, fingerprint));
  if (resent) return resent;
  return orKnownPayment(c, presented, fingerprint, () => payNewMpp(c, authorization, { presented, fingerprint }));
}

/** A credential the gateway has not seen paid: validated by mppx (nothing sent), then fulfilled. */
async function payNewMpp(c: Ctx, authorization: string, request: PaymentRequest): Promise<Response> {
  const target = await resolveTarget(c, "mpp");
  const { network, terms } = mppTerms(c, target);
  const parts = await upstreamParts(c, target, c.req.raw);
  // Validate: mppx checks the challenge and simulates the transaction; nothing is sent.
  const validated = await validateMpp(terms, authorization);
  return fulfilPayment(
    c,
    target,
    parts,
    {
      protocol: "mpp",
      network,
      payer: validated.payer,
      nonce: validated.challengeId,
      paymentKey: await mppRetryKey(validated.challengeId),
      credential: validated.txHash.toLowerCase(),
      amount: terms.amount,
      settle: () => broadcastMpp(terms, validated),
      // mppx's client signs `validBefore = now + 25 s`: the transaction, not the challenge, usually expires first.
      expiresAt: new Date(Math.min(validated.expiresAt.getTime(), validated.validBefore.getTime())),
      settleMarginMs: MPP_SETTLE_MARGIN_MS,
      pending: { reference: validated.txHash, validBefore: validated.validBefore, asset: terms.currency, payTo: terms.recipient },
      refuse: (reason) => mppRefusal(terms, reason),
    },
    request,
  );
}

/**
 * Broadcasts the validated transaction. Refused before it was sent (expired, simulation failed): nothing moved.
 * Sent, then the answer was lost (e.g. a timeout waiting for the receipt): its receipt on chain decides.
 */
async function broadcastMpp(terms: MppTerms, validated: ValidatedMpp): Promise<Settlement> {
  try {
    const { txHash, receiptHeader } = await validated.broadcast();
    return { kind: "settled", txHash, headers: { "Payment-Receipt": receiptHeader } };
  } catch (err) {
    const reason = `settlement failed: ${mppReason(err)}`;
    if (!validated.submitted()) return { kind: "refused", reason, response: await mppRefusal(terms, err as Error) };
    const outcome = await tempoChainOutcome(terms.rpcUrl, { hash: validated.txHash, validBefore: validated.validBefore });
    return settlementFromChain(
      outcome,
      async (txHash) => ({ "Payment-Receipt": await mppReceiptHeader(txHash) }),
      (why) => mppRefusal(terms, why),
      validated.txHash,
    );
  }
}
