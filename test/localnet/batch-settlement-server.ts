/**
 * A minimal x402 `batch-settlement` resource server built only from the standard's own server code
 * (`@x402/core/server`'s `x402HTTPResourceServer` + `@x402/evm/batch-settlement/server`), the way its published
 * middleware drives them: one paid `GET` route that forwards to an upstream; a voucher's charge is committed only
 * when the upstream answered below 400 (`processSettlement`), and a failed upstream cancels the reservation
 * (`cancellationDispatcher.cancel`), leaving the channel as it was. Refund requests never reach the upstream (the
 * scheme answers them itself). It proves the local channel contracts and the facilitator's `batch-settlement` side
 * against the official client, with no gateway in between.
 */
import type { HTTPAdapter, HTTPRequestContext } from "@x402/core/server";
import { HTTPFacilitatorClient, x402HTTPResourceServer, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import {
  type BatchSettlementChannelManager,
  BatchSettlementEvmScheme,
  type ChannelStorage,
} from "@x402/evm/batch-settlement/server";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type LocalServer, listen } from "../../src/cli/localnet/http-server.ts";

export interface BatchSettlementServerOptions {
  facilitatorUrl: string;
  network: Network;
  usdc: { address: Address; name: string; version: string };
  /** The channel's receiver: where claimed funds are settled. */
  payTo: Address;
  /** The key that signs claims and refunds (`receiverAuthorizer`). */
  receiverAuthorizerKey: Hex;
  /** Micro-USDC per call, decimal string. */
  price: string;
  /** Where a paid request is forwarded (path and query go along). */
  upstreamUrl: string;
  /** Channel storage (default: the SDK's in-memory storage). */
  storage?: ChannelStorage;
  /** Seconds; default the scheme's minimum, 900. */
  withdrawDelay?: number;
}

export interface BatchSettlementServer extends LocalServer {
  scheme: BatchSettlementEvmScheme;
  /** The scheme's channel manager: claims, settles and refunds through the facilitator. */
  manager: BatchSettlementChannelManager;
}

const headerOf = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(", ") : value);

export async function startBatchSettlementServer(options: BatchSettlementServerOptions): Promise<BatchSettlementServer> {
  const facilitator = new HTTPFacilitatorClient({ url: options.facilitatorUrl });
  const scheme = new BatchSettlementEvmScheme(options.payTo, {
    receiverAuthorizerSigner: privateKeyToAccount(options.receiverAuthorizerKey),
    withdrawDelay: options.withdrawDelay ?? 900,
    ...(options.storage ? { storage: options.storage } : {}),
  });
  const resourceServer = new x402ResourceServer(facilitator).register(options.network, scheme);
  const http = new x402HTTPResourceServer(resourceServer, {
    "GET /*": {
      accepts: {
        scheme: "batch-settlement",
        network: options.network,
        payTo: options.payTo,
        price: {
          amount: options.price,
          asset: options.usdc.address,
          extra: { name: options.usdc.name, version: options.usdc.version },
        },
        maxTimeoutSeconds: 60,
      },
      description: "A paid call on a channel",
      mimeType: "application/json",
    },
  });
  await http.initialize();
  const manager = scheme.createChannelManager(facilitator, options.network, options.usdc.address);

  const server = await listen(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://batch-settlement");
    const adapter: HTTPAdapter = {
      getHeader: (name) => headerOf(req.headers[name.toLowerCase()]),
      getMethod: () => req.method ?? "GET",
      getPath: () => url.pathname,
      getUrl: () => url.toString(),
      getAcceptHeader: () => headerOf(req.headers.accept) ?? "",
      getUserAgent: () => headerOf(req.headers["user-agent"]) ?? "",
    };
    const context: HTTPRequestContext = { adapter, path: url.pathname, method: req.method ?? "GET" };
    const send = (status: number, headers: Record<string, string>, body: unknown) => {
      const text = typeof body === "string" ? body : JSON.stringify(body ?? {});
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(text);
    };

    const result = await http.processHTTPRequest(context);
    if (result.type === "payment-error") return send(result.response.status, result.response.headers, result.response.body);
    const upstream = await fetch(`${options.upstreamUrl}${url.pathname}${url.search}`, { redirect: "manual" });
    const upstreamBody = Buffer.from(await upstream.arrayBuffer());
    const upstreamType = upstream.headers.get("content-type") ?? "application/octet-stream";
    if (result.type === "no-payment-required")
      return send(upstream.status, { "content-type": upstreamType }, upstreamBody.toString());
    if (upstream.status >= 400) {
      // Nothing charged: the reservation is released and the buyer may send the same voucher again.
      await result.cancellationDispatcher.cancel({ reason: "handler_failed", responseStatus: upstream.status });
      return send(upstream.status, { "content-type": upstreamType }, upstreamBody.toString());
    }
    const settled = await http.processSettlement(result.paymentPayload, result.paymentRequirements, result.declaredExtensions, {
      request: context,
      responseBody: upstreamBody,
    });
    if (!settled.success) return send(settled.response.status, settled.response.headers, settled.response.body);
    send(upstream.status, { "content-type": upstreamType, ...settled.headers }, upstreamBody.toString());
  });
  return { ...server, scheme, manager };
}
