import { requestFingerprint } from "../paid-answer.ts";
import { countedRefusal, overLimit } from "../refusals.ts";
import { findTarget, upstreamParts } from "../target.ts";
import { claimPayment } from "./claim.ts";
import { fulfil } from "./fulfil.ts";
import { answerResend, type KnownContext, type Presentation } from "./known.ts";
import type { Outcome, PaymentInput, PaymentMethod } from "./method.ts";
import { ledgerFor } from "./record.ts";

/**
 * The payment pipeline, the same for every method and every transport: present → verify → claim → forward → settle
 * (or commit) → record → answer. No credential: the method's challenge. A refused attempt is counted against the
 * client address (over its limit: `429`, and its next attempts are refused before anything is verified).
 */
export async function runPayment(method: PaymentMethod, input: PaymentInput): Promise<Outcome> {
  if (input.credential === undefined) return challenge(method, input);
  const limited = overLimit(input.env, input.clientIp);
  if (limited) return limited;
  const outcome = (await method.session?.(input, input.credential)) ?? (await present(method, input, input.credential));
  return outcome.kind === "refused" ? countedRefusal(input.env, input.clientIp, outcome) : outcome;
}

/** The paywall behind the route, offering this method (`404`, `405` otherwise). */
const targetOf = (method: PaymentMethod, input: PaymentInput) =>
  findTarget(input.env, input.route, input.request.method, (t) => method.offeredBy(input.env, t), method.label);

async function challenge(method: PaymentMethod, input: PaymentInput): Promise<Outcome> {
  const target = await targetOf(method, input);
  if (!target.ok) return target.stop;
  return { kind: "challenge", response: await method.challenge(await method.terms(input, target.value)) };
}

/**
 * present: the credential read locally; a payment the gateway already knows (the same credential, or a new one under
 * the same retry key) gets its answer without reaching a facilitator, the upstream or the chain. Else a new payment;
 * when its method refuses it because a copy of the same payment was recorded meanwhile (a facilitator that now sees
 * the authorization used, a transaction already sent), that payment's answer.
 */
async function present(method: PaymentMethod, input: PaymentInput, credential: string): Promise<Outcome> {
  const k: KnownContext = { input, method, ledger: ledgerFor(input.env, input.defer) };
  const presented = await method.present(input, credential);
  const fingerprint = await requestFingerprint(input.request.method, input.request.url, input.request.body);
  const p: Presentation = { presented, fingerprint };
  const resent = await answerResend(k, p);
  if (resent) return resent;
  const outcome = await payNew(k, credential, p);
  if (outcome.kind !== "refused" || outcome.refusal.by !== "standard" || !presented) return outcome;
  return (await answerResend(k, p)) ?? outcome;
}

/** verify → claim → forward → settle → record: a payment the gateway has not seen. */
async function payNew(k: KnownContext, credential: string, p: Presentation): Promise<Outcome> {
  const { method, input } = k;
  const target = await targetOf(method, input);
  if (!target.ok) return target.stop;
  const terms = await method.terms(input, target.value);
  const accepted = await method.accept(input, terms, credential);
  if (!accepted.ok) return accepted.stop;
  const parts = await upstreamParts(input.env, target.value, input.request);
  if (!parts.ok) return parts.stop;
  const verified = await method.verify(input, target.value, terms, accepted.value, p.presented);
  if (!verified.ok) return verified.stop;
  const payment = verified.value;
  const refusal = (reason: string) => method.refusal(terms, payment, reason);
  const claim = await claimPayment(k, target.value, payment, p, refusal);
  if (!claim.ok) return claim.stop;
  return fulfil(k, target.value, parts.value, claim.value, () => method.settle(input, target.value, terms, payment));
}
