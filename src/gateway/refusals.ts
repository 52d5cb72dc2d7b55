import type { Context } from "hono";
import { renderError } from "../core/http/render.ts";
import { countRefusedPayment, refusedPaymentsDenial } from "../core/rate-limit/limiter.ts";
import type { GatewayEnv } from "./env.ts";

/**
 * A payment attempt refused with its standard's own answer (a `402` with a fresh challenge and why): not a payment,
 * not for these terms, not valid, already used, expiring too soon. Thrown by the payment flows; the gateway's error
 * handler counts it against the client address (`answerRefusal`) and answers it.
 */
export class PaymentRefusal extends Error {
  readonly response: Response;
  constructor(response: Response) {
    super("payment refused");
    this.name = "PaymentRefusal";
    this.response = response;
  }
}

/**
 * The answer to a refused attempt, counted against the client address: over its limit, `429` instead, and its next
 * attempts are refused before any verification (`refuseOverLimit`).
 */
export async function answerRefusal(c: Context<GatewayEnv>, refusal: PaymentRefusal): Promise<Response> {
  const limited = await countRefusedPayment(c);
  return limited ? renderError(limited, c) : refusal.response;
}

/** Throws `429` before anything is verified when this address is over its limit of refused payment attempts. */
export function refuseOverLimit(c: Context<GatewayEnv>): void {
  const denied = refusedPaymentsDenial(c);
  if (denied) throw denied;
}

/** The gateway's one error handler: a refused payment is answered by its standard, anything else by the envelope. */
export const gatewayError = (err: Error, c: Context<GatewayEnv>) =>
  err instanceof PaymentRefusal ? answerRefusal(c, err) : renderError(err, c);
