// Inside workerd, with the gateway tests' wiring: the injected local stack, the outbound routing of `*.gateway.test`,
// and an x402 payment verified and settled through the local facilitator by the standard's own client code.
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { createPublicClient, erc20Abi, type Hex, http } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { describe, expect, inject, it } from "vitest";
import { createX402Buyer } from "../../../src/cli/localnet/buyer.ts";
import type { RecordedRequest } from "../../../src/cli/localnet/upstream.ts";

const net = inject("localnet");

describe("gateway test wiring", () => {
  it("provides the local stack", () => {
    expect(net.chainId).toBe(84532);
    expect(JSON.parse(net.networkOverrides)).toEqual({
      "base-sepolia": {
        chainId: 84532,
        asset: net.usdc.address,
        eip712: { name: "USDC", version: "2" },
        rpcUrl: "https://rpc.gateway.test",
      },
      "tempo-testnet": { rpcUrl: "https://tempo-rpc.gateway.test" },
    });
  });

  it("routes https://upstream.gateway.test to the recording stub, and nothing else leaves", async () => {
    const prefix = `/${crypto.randomUUID()}`;
    const res = await fetch(`https://upstream.gateway.test${prefix}/echo?k=v`, {
      method: "POST",
      body: "x",
      headers: { "x-t": "1" },
    });
    expect(res.status).toBe(200);
    const recorded = (await (
      await fetch(`https://upstream.gateway.test/__upstream/requests?prefix=${prefix}`)
    ).json()) as RecordedRequest[];
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ method: "POST", query: "k=v", body: "x" });
    expect(recorded[0]!.headers["x-t"]).toBe("1");

    const outside = await fetch("https://example.com/");
    expect(outside.status).toBe(502);
    expect(outside.headers.get("x-localnet-unrouted")).toBe("1");
  });

  it("verifies and settles an x402 payment through https://facilitator.gateway.test; the chain shows it", async () => {
    const payTo = privateKeyToAddress(generatePrivateKey());
    const requirements: PaymentRequirements = {
      scheme: "exact",
      network: net.network,
      amount: "777",
      asset: net.usdc.address,
      payTo,
      maxTimeoutSeconds: 60,
      extra: { name: "USDC", version: "2" },
    };
    const buyer = createX402Buyer({ privateKey: net.buyer.privateKey, network: net.network, usdc: net.usdc.address });
    const payload = await buyer.http.createPaymentPayload({
      x402Version: 2,
      resource: { url: "https://pay.example.com/x" },
      accepts: [requirements],
    });
    const facilitator = new HTTPFacilitatorClient({ url: "https://facilitator.gateway.test" });
    expect(await facilitator.verify(payload, requirements)).toMatchObject({ isValid: true, payer: net.buyer.address });
    const settled = await facilitator.settle(payload, requirements);
    expect(settled).toMatchObject({ success: true, network: net.network });

    const chain = createPublicClient({ transport: http("https://rpc.gateway.test") });
    expect(await chain.readContract({ address: net.usdc.address, abi: erc20Abi, functionName: "balanceOf", args: [payTo] })).toBe(
      777n,
    );
    const receipt = await chain.getTransactionReceipt({ hash: settled.transaction as Hex });
    expect(receipt.status).toBe("success");
  });
});
