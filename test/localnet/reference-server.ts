/**
 * A reference x402 resource server built only from the standard's own server code (`@x402/core/server` +
 * `@x402/evm/exact/server`): one paid route that, once paid, forwards to an upstream and settles only when the
 * upstream answered below 400. It proves the local chain, token, facilitator and buyer work together, and shows the
 * gateway the calls in the order its flow makes them (verify → forward → settle).
 */
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import { HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import type { Address } from "viem";
import { type LocalServer, listen, readBody } from "../../src/cli/localnet/http-server.ts";

export interface ReferenceServerOptions {
  facilitatorUrl: string;
  network: Network;
  usdc: { address: Address; name: string; version: string };
  payTo: Address;
  /** Micro-USDC, decimal string. */
  price: string;
  /** Where a paid request is forwarded (method, path suffix and body go along). */
  upstreamUrl: string;
}

export async function startReferenceServer(options: ReferenceServerOptions): Promise<LocalServer> {
  const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: options.facilitatorUrl })).register(
    options.network,
    new ExactEvmScheme(),
  );
  await server.initialize();
  const requirements = await server.buildPaymentRequirements({
    scheme: "exact",
    network: options.network,
    payTo: options.payTo,
    price: {
      amount: options.price,
      asset: options.usdc.address,
      extra: { name: options.usdc.name, version: options.usdc.version },
    },
    maxTimeoutSeconds: 60,
  });

  return listen(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://reference");
    const signature = req.headers["payment-signature"];
    const challenge = async (error?: string) => {
      const required = await server.createPaymentRequiredResponse(requirements, { url: url.toString() }, error);
      res.writeHead(402, { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(required), "content-type": "application/json" });
      res.end(JSON.stringify({ error: error ?? "payment required" }));
    };
    if (typeof signature !== "string") return challenge();

    const payload = decodePaymentSignatureHeader(signature);
    const matched = server.findMatchingRequirements(requirements, payload);
    if (!matched) return challenge("no matching payment requirements");
    const verified = await server.verifyPayment(payload, matched);
    if (!verified.isValid) return challenge(verified.invalidReason ?? "invalid payment");

    const body = await readBody(req);
    const upstream = await fetch(`${options.upstreamUrl}${url.pathname}${url.search}`, {
      method: req.method,
      body: body.length > 0 ? body : undefined,
      redirect: "manual",
    });
    const upstreamBody = Buffer.from(await upstream.arrayBuffer());
    if (upstream.status >= 400) {
      res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/octet-stream" });
      res.end(upstreamBody);
      return;
    }
    const settled = await server.settlePayment(payload, matched);
    if (!settled.success) return challenge(settled.errorReason ?? "settlement failed");
    res.writeHead(upstream.status, {
      "content-type": upstream.headers.get("content-type") ?? "application/octet-stream",
      "PAYMENT-RESPONSE": encodePaymentResponseHeader(settled),
    });
    res.end(upstreamBody);
  });
}
