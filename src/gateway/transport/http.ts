import type { Context, Handler } from "hono";
import type { GatewayEnv } from "../env.ts";
import type { PaymentInput, PaymentMethod } from "../pipeline/method.ts";
import { runPayment } from "../pipeline/run.ts";
import { buyerBody } from "./body.ts";
import { renderOutcome } from "./render.ts";

// The HTTP transport: a payment URL's request into the pipeline's input (plain values), the pipeline's outcome into a
// response. The only part of the paid path that holds Hono's context.

/** Where a method's credential is in an HTTP request, by the method's protocol. */
const CREDENTIAL_IN: Record<PaymentMethod["protocol"], (headers: Headers) => string | undefined> = {
  x402: (headers) => headers.get("payment-signature") ?? undefined,
  // An `Authorization: Payment …` credential (the buyer's own `Authorization` of another scheme is not one).
  mpp: (headers) => {
    const authorization = headers.get("authorization") ?? "";
    return /(^|,)\s*payment\s/i.test(authorization) ? authorization : undefined;
  },
};

/** The credential an HTTP request presents for `method`, where its standard puts it; `undefined` when none. */
export const credentialIn = (method: Pick<PaymentMethod, "protocol">, headers: Headers) =>
  CREDENTIAL_IN[method.protocol](headers);

/** The pipeline's input from an HTTP request: the body is read only when a payment is presented. */
export async function httpInput(c: Context<GatewayEnv>, method: PaymentMethod): Promise<PaymentInput> {
  const { url, headers } = c.req.raw;
  const credential = credentialIn(method, headers);
  return {
    env: c.env,
    route: { serviceId: c.req.param("serviceId") ?? "", slug: c.req.param("slug") ?? "" },
    request: { method: c.req.method, url, headers, body: credential === undefined ? undefined : await buyerBody(c) },
    credential,
    clientIp: c.req.header("cf-connecting-ip"),
    defer: (work) => c.executionCtx.waitUntil(work),
  };
}

/** `/api/<method>/pay/:serviceId/:slug`: the payment pipeline of `method`, over HTTP. */
export async function payOverHttp(c: Context<GatewayEnv>, method: PaymentMethod): Promise<Response> {
  return renderOutcome(c, await runPayment(method, await httpInput(c, method)));
}

/** The route handler of one method's payment URL. */
export const httpHandler =
  (method: PaymentMethod): Handler<GatewayEnv> =>
  (c) =>
    payOverHttp(c, method);
