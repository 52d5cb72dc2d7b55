import { mppCharge } from "../mpp/charge.ts";
import { x402Exact } from "../x402/exact.ts";
import type { PaymentMethod } from "./method.ts";

/**
 * The payment methods the gateway takes, one line each, by the name of their payment URL's path
 * (`/api/<name>/pay/:serviceId/:slug`). A new method is a file implementing `PaymentMethod` (./method.ts) and a line here.
 */
export const METHODS: Record<string, PaymentMethod> = {
  x402: x402Exact,
  mpp: mppCharge,
};
