import { countRefusedPayment, refusedPaymentsDenial } from "../core/rate-limit/limiter.ts";
import type { Outcome } from "./pipeline/method.ts";

// The per-address limit on refused payment attempts (and refused wallet sign-ins): a refused attempt is counted
// against the client address, and over its limit the address's next attempts are refused before any verification.

/** A refused attempt counted against the client address: over its limit, `429` instead of the refusal. */
export async function countedRefusal(
  env: Env,
  clientIp: string | undefined,
  outcome: Extract<Outcome, { kind: "refused" }>,
): Promise<Outcome> {
  const limited = await countRefusedPayment(env, clientIp);
  return limited ? { kind: "error", error: limited } : outcome;
}

/** `429` before anything is verified when this address is over its limit of refused attempts; else `undefined`. */
export function overLimit(env: Env, clientIp: string | undefined): Outcome | undefined {
  const denied = refusedPaymentsDenial(env, clientIp);
  return denied && { kind: "error", error: denied };
}
