// The local payment stack, proven with the standards' own code: a buyer pays a reference x402 resource server
// (@x402/core server + @x402/evm exact) through the local facilitator on the local chain.
import { createConnection } from "node:net";
import { x402Client, x402HTTPClient } from "@x402/core/client";
import type { Address, Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Buyer, paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import type { LocalServer } from "../../src/cli/localnet/http-server.ts";
import { createOutboundRouter } from "../../src/cli/localnet/outbound.ts";
import { type LocalStack, startStack } from "../../src/cli/localnet/stack.ts";
import type { RecordedRequest } from "../../src/cli/localnet/upstream.ts";
import { startReferenceServer } from "./reference-server.ts";

const PRICE = "12345"; // 0.012345 USDC

let stack: LocalStack;
let merchant: Address;
let resource: LocalServer;

beforeAll(async () => {
  stack = await startStack();
  merchant = privateKeyToAddress(generatePrivateKey());
  resource = await startReferenceServer({
    facilitatorUrl: stack.facilitator.url,
    network: stack.info.network,
    usdc: stack.info.usdc,
    payTo: merchant,
    price: PRICE,
    upstreamUrl: stack.upstream.url,
  });
});

afterAll(async () => {
  await resource?.stop();
  await stack?.stop();
});

const buyer = () =>
  createX402Buyer({ privateKey: stack.info.buyer.privateKey, network: stack.info.network, usdc: stack.info.usdc.address });

const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });

describe("local chain and token", () => {
  it("runs the configured chain id and funds the buyer with the 6-decimal token", async () => {
    expect(await stack.localnet.client.getChainId()).toBe(84532);
    expect(stack.info.network).toBe("eip155:84532");
    expect(await stack.localnet.balanceOf(stack.info.buyer.address)).toBeGreaterThanOrEqual(1_000_000_000n - 1_000_000n);
    const code = await stack.localnet.client.getCode({ address: stack.info.usdc.address });
    expect(code?.length).toBeGreaterThan(2);
  });
});

describe("facilitator", () => {
  it("lists the exact scheme on the local network with its signer in /supported", async () => {
    const res = await fetch(`${stack.facilitator.url}/supported`);
    const body = (await res.json()) as {
      kinds: { x402Version: number; scheme: string; network: string }[];
      signers: Record<string, string[]>;
    };
    expect(body.kinds).toContainEqual(expect.objectContaining({ x402Version: 2, scheme: "exact", network: "eip155:84532" }));
    expect(Object.values(body.signers).flat()).toContain(stack.info.facilitator.address);
  });

  it("answers a malformed request with 400, not a crash", async () => {
    const res = await fetch(`${stack.facilitator.url}/verify`, { method: "POST", body: "{}" });
    expect(res.status).toBe(400);
  });
});

describe("an x402 payment end to end", () => {
  it("challenges with a 402 the standard's client decodes", async () => {
    const res = await fetch(`${resource.url}/paid/echo`);
    expect(res.status).toBe(402);
    const required = new x402HTTPClient(new x402Client()).getPaymentRequiredResponse((name) => res.headers.get(name));
    expect(required.x402Version).toBe(2);
    expect(required.accepts[0]).toMatchObject({
      scheme: "exact",
      network: "eip155:84532",
      amount: PRICE,
      asset: stack.info.usdc.address,
      payTo: merchant,
      extra: { name: "USDC", version: "2" },
    });
  });

  it("pays: the upstream answers, the merchant's balance rises by exactly the price, the hash is on chain", async () => {
    const before = await stack.localnet.balanceOf(merchant);
    const buyerBefore = await stack.localnet.balanceOf(stack.info.buyer.address);
    const res = await buyer().fetch(`${resource.url}/paid-once/echo?q=1`, { method: "POST", body: "hello" });
    expect(res.status).toBe(200);
    const echo = (await res.json()) as RecordedRequest;
    expect(echo).toMatchObject({ method: "POST", path: "/paid-once/echo", query: "q=1", body: "hello" });

    const settled = paymentResponseOf(res);
    expect(settled).toMatchObject({ success: true, network: "eip155:84532", payer: stack.info.buyer.address });
    const receipt = await stack.localnet.client.getTransactionReceipt({ hash: settled!.transaction as Hex });
    expect(receipt.status).toBe("success");
    expect(await stack.localnet.balanceOf(merchant)).toBe(before + BigInt(PRICE));
    expect(await stack.localnet.balanceOf(stack.info.buyer.address)).toBe(buyerBefore - BigInt(PRICE));
  });

  it("refuses a replayed payment and settles it once", async () => {
    const b = buyer();
    const challenge = await fetch(`${resource.url}/replay/echo`);
    const required = b.http.getPaymentRequiredResponse((name) => challenge.headers.get(name));
    const payload = await b.http.createPaymentPayload(required);
    const headers = b.http.encodePaymentSignatureHeader(payload);
    const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce;
    const before = await stack.localnet.balanceOf(merchant);

    const first = await fetch(`${resource.url}/replay/echo`, { headers });
    expect(first.status).toBe(200);
    const second = await fetch(`${resource.url}/replay/echo`, { headers });
    expect(second.status).toBe(402);

    expect(await stack.localnet.balanceOf(merchant)).toBe(before + BigInt(PRICE));
    const settles = stack.facilitator.log.filter((e) => e.endpoint === "settle" && e.nonce === nonce && e.ok);
    expect(settles).toHaveLength(1);
    expect(stack.facilitator.log.filter((e) => e.nonce === nonce && !e.ok).map((e) => e.reason)).toContain(
      "invalid_exact_evm_nonce_already_used",
    );
  });

  it("settles concurrent payments from one facilitator key (one transfer each)", async () => {
    const before = await stack.localnet.balanceOf(merchant);
    const results = await Promise.all(Array.from({ length: 4 }, (_, i) => buyer().fetch(`${resource.url}/parallel-${i}/echo`)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const hashes = new Set(results.map((r) => paymentResponseOf(r)?.transaction));
    expect(hashes.size).toBe(4);
    expect(await stack.localnet.balanceOf(merchant)).toBe(before + 4n * BigInt(PRICE));
  });

  it("charges nothing when the upstream fails", async () => {
    const before = await stack.localnet.balanceOf(merchant);
    const res = await buyer().fetch(`${resource.url}/fails/status/503`);
    expect(res.status).toBe(503);
    expect(await stack.localnet.balanceOf(merchant)).toBe(before);
  });

  it("refuses a payment for a different amount (verification by the facilitator)", async () => {
    const b = buyer();
    const challenge = await fetch(`${resource.url}/tampered/echo`);
    const required = b.http.getPaymentRequiredResponse((name) => challenge.headers.get(name));
    const cheaper = { ...required, accepts: [{ ...required.accepts[0]!, amount: "1" }] };
    const payload = await b.http.createPaymentPayload(cheaper);
    const res = await fetch(`${resource.url}/tampered/echo`, { headers: b.http.encodePaymentSignatureHeader(payload) });
    expect(res.status).toBe(402);
    expect(stack.upstream.requestsUnder("/tampered")).toHaveLength(0);
  });
});

describe("upstream stub", () => {
  it("records what it received and answers by path", async () => {
    const prefix = `/${crypto.randomUUID()}`;
    const res = await fetch(`${stack.upstream.url}${prefix}/echo?a=1&a=2`, {
      method: "PUT",
      headers: { "x-api-key": "k", "content-type": "text/plain" },
      body: "body",
    });
    expect(res.status).toBe(200);
    expect((await fetch(`${stack.upstream.url}${prefix}/status/502`)).status).toBe(502);
    expect((await fetch(`${stack.upstream.url}${prefix}/redirect`, { redirect: "manual" })).status).toBe(302);
    expect(await (await fetch(`${stack.upstream.url}${prefix}/text/hi%20there`)).text()).toBe("hi there");
    const recorded = (await (
      await fetch(`${stack.upstream.url}/__upstream/requests?prefix=${prefix}`)
    ).json()) as RecordedRequest[];
    expect(recorded.map((r) => r.path)).toEqual([
      `${prefix}/echo`,
      `${prefix}/status/502`,
      `${prefix}/redirect`,
      `${prefix}/text/hi%20there`,
    ]);
    expect(recorded[0]).toMatchObject({ method: "PUT", query: "a=1&a=2", body: "body" });
    expect(recorded[0]!.headers["x-api-key"]).toBe("k");
  });

  it("hangs for the asked time (a caller's timeout cuts it short)", async () => {
    const started = Date.now();
    await expect(fetch(`${stack.upstream.url}/hang/5000`, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe("outbound router (what the Worker's fetch goes through in tests)", () => {
  it("maps public-looking hosts to the local processes and refuses everything else", async () => {
    const route = createOutboundRouter({ "upstream.gateway.test": stack.upstream.url });
    const prefix = `/${crypto.randomUUID()}`;
    const res = await route(
      new Request(`https://upstream.gateway.test${prefix}/echo?x=y`, {
        method: "POST",
        body: "b",
        headers: { authorization: "Bearer t" },
      }),
    );
    expect(res.status).toBe(200);
    expect(stack.upstream.requestsUnder(prefix)[0]).toMatchObject({ method: "POST", query: "x=y", body: "b" });
    expect(stack.upstream.requestsUnder(prefix)[0]!.headers.authorization).toBe("Bearer t");
    const redirect = await route(new Request(`https://upstream.gateway.test${prefix}/redirect`));
    expect(redirect.status).toBe(302);
    const unrouted = await route(new Request("https://example.com/"));
    expect(unrouted.status).toBe(502);
    expect(unrouted.headers.get("x-localnet-unrouted")).toBe("1");
  });
});

describe("stop", () => {
  it("leaves no process and no port behind", async () => {
    const other = await startStack();
    const ports = [new URL(other.info.rpcUrl).port, other.facilitator.port, other.upstream.port].map(Number);
    await other.stop();
    for (const port of ports) expect(await portIsFree(port)).toBe(true);
  });
});
