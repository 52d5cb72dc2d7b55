import { encryptionSecret, getConfig } from "../../core/config.ts";
import { networkTable } from "../../core/money/network-table.ts";
import { type NetworkId, supportsMpp } from "../../core/money/networks.ts";
import { challengeDescription, VALIDITY_WINDOW_SECONDS } from "../../core/payments.ts";
import type { PaymentTarget } from "../../db/gateway.ts";
import { EnvMemo } from "../../lib/env-memo.ts";
import { settlementFromChain, tempoChainOutcome } from "../chain-outcome.ts";
import {
  go,
  type PaymentInput,
  type PaymentMethod,
  type PresentedPayment,
  type Settlement,
  type Step,
  type VerifiedPayment,
} from "../pipeline/method.ts";
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

// MPP's `charge` intent as a payment method of the pipeline (src/gateway/pipeline/method.ts): a signed Tempo
// transaction in `Authorization: Payment`, validated by mppx (nothing sent), broadcast once the upstream answered.

/**
 * Kept free before an MPP payment's transaction expires, to broadcast it after the upstream answered: mppx
 * re-simulates the transaction and sends it synchronously, which on Tempo (sub-second blocks) takes about a second;
 * 5 s leaves room for a slow RPC without eating much of the ~25 s mppx's client gives a transaction.
 */
const MPP_SETTLE_MARGIN_MS = 5_000;

/** A paywall's MPP terms, with the network they pay on. */
interface Terms {
  network: NetworkId;
  terms: MppTerms;
}

/**
 * The paywall's MPP terms, built once per isolate for the same state: its service's version (moved by every write of
 * the service or of any of its paywalls, through any path: migrations/0007), the tenant's wallets, and the env
 * (network table, payment origin, key), which the memo is kept per.
 */
const termsMemo = new EnvMemo<Terms>(512);

function mppTerms(env: Env, t: PaymentTarget): Terms {
  const name = `${t.paywall.id}\n${t.service.id}:${t.service.version}\n${t.tenant.tempoWalletAddress ?? ""}\n${t.tenant.walletAddress}`;
  return termsMemo.get(env, name, () => buildMppTerms(env, t));
}

/** The paywall's MPP terms: its tempo network from the network table, the tenant's Tempo wallet (else its primary). */
function buildMppTerms(env: Env, t: PaymentTarget): Terms {
  const table = networkTable(env);
  const network = (t.paywall.networks as NetworkId[]).find((n) => table[n]?.kind === "tempo") as NetworkId;
  const entry = table[network];
  const terms: MppTerms = {
    secret: encryptionSecret(env),
    amount: t.paywall.price,
    currency: entry.asset,
    recipient: t.tenant.tempoWalletAddress ?? t.tenant.walletAddress,
    chainId: entry.chainId,
    rpcUrl: entry.rpcUrl,
    testnet: network !== "tempo",
    realm: new URL(getConfig(env).paymentBaseUrl).host,
    description: challengeDescription(t.paywall),
    scope: t.paywall.id,
    validitySeconds: VALIDITY_WINDOW_SECONDS,
  };
  return { network, terms };
}

/** Validated by mppx: it checks the challenge and simulates the transaction; nothing is sent. */
async function validate({ network, terms }: Terms, authorization: string): Promise<Step<VerifiedPayment<ValidatedMpp>>> {
  const validation = await validateMpp(terms, authorization);
  if (!validation.ok) return validation;
  const validated = validation.value;
  return go({
    network,
    payer: validated.payer,
    nonce: validated.challengeId,
    paymentKey: await mppRetryKey(validated.challengeId),
    credential: validated.txHash.toLowerCase(),
    amount: terms.amount,
    // mppx's client signs `validBefore = now + 25 s`: the transaction, not the challenge, usually expires first.
    expiresAt: new Date(Math.min(validated.expiresAt.getTime(), validated.validBefore.getTime())),
    pending: { reference: validated.txHash, validBefore: validated.validBefore, asset: terms.currency, payTo: terms.recipient },
    state: validated,
  });
}

/** The first line of a payment error's message (mppx's carry details on later lines), bounded. */
const mppReason = (err: unknown) =>
  err instanceof Error && err.name !== "Error"
    ? `${err.name}: ${err.message.split("\n")[0]}`.slice(0, 200)
    : err instanceof Error
      ? err.name
      : "settle_error";

/**
 * Broadcasts the validated transaction. Refused before it was sent (expired, simulation failed): nothing moved.
 * Sent, then the answer was lost (e.g. a timeout waiting for the receipt): its receipt on chain decides.
 */
async function broadcast({ terms }: Terms, validated: ValidatedMpp): Promise<Settlement> {
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

/** MPP `charge`, one of the pipeline's methods (src/gateway/pipeline/methods.ts). */
class MppCharge implements PaymentMethod<Terms, string, ValidatedMpp> {
  readonly protocol = "mpp";
  readonly label = "MPP";
  readonly settleMarginMs = MPP_SETTLE_MARGIN_MS;

  offeredBy(_env: Env, t: PaymentTarget): boolean {
    return supportsMpp(t.paywall.networks);
  }

  async terms(input: PaymentInput, target: PaymentTarget): Promise<Terms> {
    return mppTerms(input.env, target);
  }

  challenge({ terms }: Terms): Promise<Response> {
    return mppChallenge(terms);
  }

  present(_input: PaymentInput, authorization: string): Promise<PresentedPayment | undefined> {
    return presentedMpp(authorization);
  }

  /** Nothing to match locally before the upstream request is built: mppx validates the whole credential (`verify`). */
  async accept(_input: PaymentInput, _terms: Terms, authorization: string): Promise<Step<string>> {
    return go(authorization);
  }

  verify(_input: PaymentInput, _target: PaymentTarget, terms: Terms, authorization: string) {
    return validate(terms, authorization);
  }

  settle(_input: PaymentInput, _target: PaymentTarget, terms: Terms, payment: VerifiedPayment<ValidatedMpp>) {
    return broadcast(terms, payment.state);
  }

  refusal({ terms }: Terms, _payment: VerifiedPayment<ValidatedMpp>, reason: string): Promise<Response> {
    return mppRefusal(terms, reason);
  }

  async receiptHeaders(_env: Env, txHash: string): Promise<Record<string, string>> {
    return { "Payment-Receipt": await mppReceiptHeader(txHash) };
  }
}

export const mppCharge = new MppCharge();
